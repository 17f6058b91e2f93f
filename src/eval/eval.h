/* eval.h - the eval runner's state: suite, selection, records, workers. */
#ifndef ASKDB_EVAL_EVAL_H
#define ASKDB_EVAL_EVAL_H

#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>

#include "askdb.h"
#include "core/buf.h"
#include "core/json.h"
#include "eval/suite.h"

/*
** Invariants:
** - recs[i] is the record of suite item i, or NULL while it is not done;
**   only finish_item() sets it, under mu, right after the line is written
**   and flushed to the output file - so the file always holds every
**   finished item and --resume never repeats one.
** - Each askdb_eval_run() groups the selected items that have no record
**   yet, so a second run (after an interrupt, or at all) asks only what
**   no run finished: an item is asked and counted once.
** - Items are grouped by database file; a worker takes a whole group and
**   asks all its questions with one agent (schema and prompt prefix
**   reused). Groups run in parallel with jobs > 1; agents are never shared.
** - A bad item (missing database, gold SQL that fails) is recorded with
**   "bad" set and never reaches the model.
** - The model being unreachable (or failing on EVAL_MAX_MODEL_ERRORS
**   questions in a row) stops the run; unfinished items stay unrecorded.
**   A provider that refuses the key (401, 403) stops it at the first
**   question it refuses, which is recorded (a model_error).
*/

#define EVAL_MAX_MODEL_ERRORS 5

struct eval_group {
    const char *db_path;     /* borrowed from the suite; NULL = none */
    long *items;             /* suite indices, in suite order */
    long n;
};

struct askdb_eval {
    askdb_config cfg;
    askdb_eval_options opt;
    char *owned[16];         /* copies of the strings in cfg and opt */
    int nowned;
    int ready;               /* askdb_eval_new() succeeded: it may run */

    struct suite suite;
    long *sel;               /* selected suite indices, in suite order */
    long nsel;
    json_t **recs;           /* by suite index */

    struct eval_group *groups;   /* of the run going on (make_groups()) */
    long ngroups, next_group;

    FILE *out;
    pthread_mutex_t mu;
    int stop;                /* set under mu: workers finish and leave */
    atomic_int interrupted;  /* askdb_eval_interrupt(): stop after the
                                questions being asked */
    askdb_status fatal;
    int model_errors;        /* model_error records in a row */
    askdb_model *model;      /* every agent's, loaded once (run_model()) */
    askdb_status model_st;   /* why it could not be loaded */
    double model_ms;         /* what loading it took (in no question's
                                latency) */
    double t0;
    askdb_eval_progress prog;

    struct buf notes;
    char errmsg[1024];
};

/*
** Score one item with an agent over its database: run the gold SQL (on
** gold_db when not NULL, else on the agent's database), ask the question,
** compare. Fills rec (from rec_new()). Returns ASKDB_OK
** (rec complete, possibly a bad item), ASKDB_ERR_LLM when rec is complete
** (a model_error) and the run must stop too (the provider refused the
** key: llm_denied()), or another status that must stop the run (model
** unreachable, out of memory) with rec not to be recorded; the reason is
** in errmsg whenever the run must stop.
*/
askdb_status eval_item(askdb_agent *ag, askdb_db *gold_db,
                       const struct suite_item *it, int keep_distinct,
                       json_t *rec, char *errmsg, size_t errlen);

/* The database URL for db_id: tmpl with each "{db_id}" replaced.
** malloc()ed, NULL when out of memory. */
char *eval_db_url(const char *tmpl, const char *db_id);

#endif
