/* scripted.h - the model of the agent tests: a script of replies, and a
** record of what the agent sent it. */
#ifndef ASKDB_TEST_SCRIPTED_H
#define ASKDB_TEST_SCRIPTED_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "askdb.h"
#include "testutil.h"

/* The scripted model: replies in order, and every user message it saw. */
struct script {
    const char *const *replies;  /* NULL-terminated; past the end the
                                    model "fails" */
    int next;
    int calls;
    int last_n;              /* number of messages of the latest call */
    int invalid;             /* messages that were not valid UTF-8 (an
                                HTTP provider could not send them) */
    char last_user[16384];   /* last user message of the latest call */
    char all_users[65536];   /* every call's last user message, joined */
};

/* Whether s is text JSON can hold (jansson checks UTF-8 itself). */
static inline int scripted_json_ok(const char *s)
{
    json_t *j = json_string(s);

    json_decref(j);
    return j != NULL;
}

/* The askdb_llm_fn of a struct script (ud). */
static inline int scripted(void *ud, int n, const char *const *roles,
                           const char *const *contents, char **reply)
{
    struct script *s = ud;
    size_t len;
    int i;

    /* Atomic: a test's other thread may wait for the first call. */
    __atomic_fetch_add(&s->calls, 1, __ATOMIC_SEQ_CST);
    s->last_n = n;
    for (i = 0; i < n; i++)
        s->invalid += !scripted_json_ok(contents[i]);
    for (i = n - 1; i >= 0; i--)
        if (strcmp(roles[i], "user") == 0) {
            snprintf(s->last_user, sizeof s->last_user, "%s", contents[i]);
            len = strlen(s->all_users);
            snprintf(s->all_users + len, sizeof s->all_users - len,
                     "%s\n----\n", contents[i]);
            break;
        }
    if (!s->replies || !s->replies[s->next])
        return 1;
    *reply = strdup(s->replies[s->next++]);
    return *reply ? 0 : 1;
}

/* The default config with s as the model and the techniques off (value
** retrieval, question check, checks, learned pairs, plans, extra
** candidates): the tests of the core loop must not depend on them, and
** each test of a technique turns on what it tests. */
static inline askdb_config scripted_config(struct script *s)
{
    askdb_config cfg = askdb_config_default();

    cfg.llm_fn = scripted;
    cfg.llm_ud = s;
    cfg.values = 0;
    cfg.question_check = 0;
    cfg.checks = 0;
    cfg.memory = 0;
    cfg.plan = 0;
    cfg.candidates = 1;
    return cfg;
}

#endif
