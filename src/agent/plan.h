/* plan.h - plans of multi-step questions: when to ask for one, parsing. */
#ifndef ASKDB_PLAN_H
#define ASKDB_PLAN_H

#include <stddef.h>

#define PLAN_MAX_TASKS 5

struct plan_task {
    int id;
    char *text;
    int deps[PLAN_MAX_TASKS];    /* indexes of earlier tasks */
    int ndeps;
};

struct plan {
    struct plan_task tasks[PLAN_MAX_TASKS];
    int ntasks;
};

/* Whether a question shows cues of needing several steps (cheap, no
** model): single-step questions skip planning. */
int plan_needed(const char *question);

/*
** Parse and validate the model's plan: a JSON object (prose or a fence
** around it is ignored) {"tasks": [{"id": N, "task": "...", "depends_on":
** [ids]}]} with at most PLAN_MAX_TASKS tasks, unique integer ids from 0
** to INT_MAX, and dependencies only on earlier tasks. 0, or -1 with the
** reason in why and *out empty.
*/
int plan_parse(const char *reply, struct plan *out, char *why, size_t whylen);
void plan_free(struct plan *p);

#endif
