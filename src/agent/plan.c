/* plan.c - plans of multi-step questions: when to ask, and the parser of
** the model's plan (untrusted text; fuzzed by tests/fuzz/fuzz_plan.c). */
#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/plan.h"

/*
** Whether a question may need several steps: cheap cues, so that the
** single-step majority never pays for a plan. Cues: comparisons with an
** aggregate of something else ("more than the average"), "both ... and",
** set-like wording ("but not", "except", "never"), "for each ... the
** most/least", or a long question with two or more clauses joined by
** "and"/"then"/"also". Cues match whole words: "ratio" is no cue in
** "duration", nor "both" in "Bothell".
*/
int plan_needed(const char *q)
{
    static const char *const cues[] = {
        " than the average ", " than average ", " than the total ",
        " than the number of ", " than all ", " than any ", " but not ",
        " except ", " never ", " both ", " at least one ", " as well as ",
        " and also ", " then ", " for each ", " for every ",
        " compared to ", " compared with ", " difference between ",
        " percentage ", " percentages ", " proportion ", " proportions ",
        " ratio ", " ratios ", NULL
    };
    char low[1024];
    size_t i, k = 0;
    int ands = 0, words = 0, hits = 0;

    /* lower case, words separated by one space, a space at both ends */
    low[k++] = ' ';
    for (i = 0; q[i] && k + 2 < sizeof low; i++) {
        unsigned char c = (unsigned char)q[i];
        if (isalnum(c) || c >= 0x80) {
            words += low[k - 1] == ' ';
            low[k++] = (char)tolower(c);
        } else if (low[k - 1] != ' ') {
            low[k++] = ' ';
        }
    }
    if (low[k - 1] != ' ')
        low[k++] = ' ';
    low[k] = '\0';
    for (i = 0; cues[i]; i++)
        if (strstr(low, cues[i]))
            hits++;
    for (const char *p = low; (p = strstr(p, " and ")) != NULL; p += 4)
        ands++;
    return hits > 0 || (words >= 20 && ands >= 2);
}

void plan_free(struct plan *p)
{
    int i;

    for (i = 0; i < p->ntasks; i++)
        free(p->tasks[i].text);
    memset(p, 0, sizeof *p);
}

int plan_parse(const char *reply, struct plan *out, char *why, size_t whylen)
{
    json_error_t je;
    json_t *root, *tasks, *t;
    const char *start, *end;
    size_t i, j;

    memset(out, 0, sizeof *out);
    /* The JSON object inside the reply (models wrap it in prose/fences). */
    start = strchr(reply, '{');
    end = strrchr(reply, '}');
    if (!start || !end || end < start) {
        snprintf(why, whylen, "no JSON object in the reply");
        return -1;
    }
    root = json_loadb(start, (size_t)(end - start + 1), 0, &je);
    if (!root) {
        snprintf(why, whylen, "bad JSON: %s", je.text);
        return -1;
    }
    tasks = json_object_get(root, "tasks");
    if (!json_is_array(tasks)) {
        snprintf(why, whylen, "no \"tasks\" array");
        json_decref(root);
        return -1;
    }
    if (json_array_size(tasks) > PLAN_MAX_TASKS) {
        snprintf(why, whylen, "%zu tasks, at most %d", json_array_size(tasks),
                 PLAN_MAX_TASKS);
        json_decref(root);
        return -1;
    }
    json_array_foreach(tasks, i, t) {
        struct plan_task *pt = &out->tasks[i];
        json_t *id = json_object_get(t, "id"), *deps, *d;
        const char *text = json_string_value(json_object_get(t, "task"));

        if (!text)
            text = json_string_value(json_object_get(t, "description"));
        if (!json_is_integer(id) || !text || !*text) {
            snprintf(why, whylen, "task %zu needs an integer \"id\" and a "
                                  "\"task\" text", i + 1);
            goto bad;
        }
        if (json_integer_value(id) < 0 || json_integer_value(id) > INT_MAX) {
            snprintf(why, whylen, "task %zu: id out of range", i + 1);
            goto bad;
        }
        pt->id = (int)json_integer_value(id);
        for (j = 0; j < i; j++)
            if (out->tasks[j].id == pt->id) {
                snprintf(why, whylen, "task id %d twice", pt->id);
                goto bad;
            }
        pt->text = strdup(text);
        if (!pt->text) {
            snprintf(why, whylen, "out of memory");
            goto bad;
        }
        out->ntasks++;
        deps = json_object_get(t, "depends_on");
        if (deps && !json_is_array(deps)) {
            snprintf(why, whylen, "task %d: \"depends_on\" is not a list",
                     pt->id);
            goto bad;
        }
        json_array_foreach(deps, j, d) {
            int k;

            if (!json_is_integer(d)) {
                snprintf(why, whylen, "task %d depends on a non-integer "
                                      "task", pt->id);
                goto bad;
            }
            /* Dependencies point back: tasks run in the order given. */
            for (k = 0; k < (int)i && out->tasks[k].id != json_integer_value(d);
                 k++)
                ;
            if (k == (int)i) {
                snprintf(why, whylen, "task %d depends on a later or unknown "
                                      "task", pt->id);
                goto bad;
            }
            if (pt->ndeps < PLAN_MAX_TASKS)
                pt->deps[pt->ndeps++] = k;
        }
    }
    json_decref(root);
    return 0;
bad:
    json_decref(root);
    plan_free(out);
    return -1;
}

