/* qcheck.c - the question check: is this a question about the database at
** all? Greetings and questions no table holds are answered without SQL. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/steps.h"

/* Whether s is one of the NULL-terminated words. */
static int one_of(const char *const *words, const char *s)
{
    for (; *words; words++)
        if (strcmp(*words, s) == 0)
            return 1;
    return 0;
}

/* Whether the text is only greetings, thanks or farewells: at least one
** of those words, and nothing but them and the small words around them
** ("good morning", "thank you", "how are you?"). */
static int is_greeting(const char *q)
{
    static const char *const greet[] = {
        "hi", "hello", "hey", "hiya", "howdy", "yo", "sup", "greetings",
        "thanks", "thank", "thx", "ty", "cheers", "bye", "goodbye",
        "morning", "afternoon", "evening", "night", "meet", NULL
    };
    static const char *const around[] = {
        "you", "good", "ok", "okay", "there", "how", "are", "is", "it",
        "going", "whats", "up", "nice", "to", "great", "cool", "please",
        NULL
    };
    char w[32];
    int any_greet = 0;
    size_t k;

    while (*q) {
        while (*q && !isalpha((unsigned char)*q))
            q++;
        for (k = 0; *q && (isalpha((unsigned char)*q) || *q == '\'');
             q++)
            if (*q != '\'' && k + 1 < sizeof w)
                w[k++] = (char)tolower((unsigned char)*q);
        if (!k)
            break;
        w[k] = '\0';
        if (one_of(greet, w))
            any_greet = 1;
        else if (!one_of(around, w))
            return 0;
    }
    return any_greet;
}

/* Tables of the schema as a short list for the reply. */
static void list_tables(struct buf *b, const struct db_schema *s)
{
    int i;

    for (i = 0; i < s->ntables && i < 12; i++)
        buf_printf(b, "%s%s", i ? ", " : "", schema_qname(&s->tables[i]));
    if (s->ntables > 12)
        buf_printf(b, " and %d more", s->ntables - 12);
}

static enum agent_outcome not_a_question(struct agent_state *st,
                                         const char *why, int greeting)
{
    struct buf b;

    buf_init(&b, 0);
    if (greeting)
        buf_puts(&b, "Hello! Ask me a question about this database; it "
                     "has these tables: ");
    else
        buf_puts(&b, "This does not look like a question this database "
                     "can answer. It has these tables: ");
    list_tables(&b, st->schema);
    buf_puts(&b, ".");
    st->ans->text = buf_steal(&b);
    st->ans->not_a_question = 1;
    agent_emit(st->ag, ASKDB_EVENT_QCHECK,
                json_pack("{s:b, s:s}", "question", 0, "why", why));
    agent_log(st, "qcheck", "not a question about the database: %s", why);
    return st->ans->text ? OUT_SKIP : agent_nomem(st);
}

/*
** Greetings are answered at once. A question with a word that matches a
** table, a column or a value is a question about the database. Only when
** nothing matches is the model asked (yes/no, one token with the local
** model's grammar; the schema prefix is already in its cache).
*/
enum agent_outcome agent_step_qcheck(struct agent_state *st)
{
    static const char yes_no[] = "root ::= \"yes\" | \"no\"\n";
    askdb_status rc;
    const char *p;
    char *reply;
    double t0;
    int no;

    for (p = st->question; *p && !isalnum((unsigned char)*p); p++)
        ;
    if (!*p)
        return not_a_question(st, "no words", 0);
    if (is_greeting(st->question))
        return not_a_question(st, "greeting", 1);
    if (st->relevance > 0 || st->part_history) {
        /* A follow-up ("and for 2023?") is read with the earlier ones. */
        agent_emit(st->ag, ASKDB_EVENT_QCHECK,
                    json_pack("{s:b, s:s}", "question", 1, "why",
                              st->part_history ? "a follow-up"
                                               : "names or values match"));
        return OUT_OK;
    }
    /* A model call like any other, seconds long with the local model:
    ** -v says it is made, and what came of it. */
    agent_log(st, "qcheck", "no table, column or value named: asking the "
                            "model whether the database holds it");
    t0 = db_now_ms();
    reply = agent_call_aside(st, "qcheck", prompt_qcheck(),
                             llm_supports_grammar(st->ag->model) &&
                             !st->ag->cfg.no_grammar ? yes_no : NULL,
                             4, &rc);
    if (!reply) {
        st->fatal = rc;
        return OUT_FATAL;
    }
    for (p = reply; *p && !isalpha((unsigned char)*p); p++)
        ;
    no = strncasecmp(p, "no", 2) == 0 && !isalpha((unsigned char)p[2]);
    free(reply);
    if (no)
        return not_a_question(st, "the model: no table holds it", 0);
    agent_log(st, "qcheck", "the model: a question about the database "
                            "(%.0f ms)", db_now_ms() - t0);
    agent_emit(st->ag, ASKDB_EVENT_QCHECK,
                json_pack("{s:b, s:s}", "question", 1, "why", "the model"));
    return OUT_OK;
}
