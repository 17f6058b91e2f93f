/* agent.h - the agent's state and the steps of its pipeline. */
#ifndef ASKDB_AGENT_H
#define ASKDB_AGENT_H

#include "askdb.h"
#include "core/buf.h"
#include "core/trace.h"
#include "db/db.h"
#include "llm/llm.h"

/*
** One question is answered by steps that each read and write one state
** struct; agent_route() alone decides which step runs next:
**
**   schema -> generate -> validate -> execute -> done
**                ^           |           |
**                +-- repair <+-----------+   (error or first empty result)
**
** Invariants: every generation adds one askdb_attempt; at most
** cfg.max_attempts generations per question; an empty result is retried
** once and then stands; nothing but db_run() touches the database.
*/

struct askdb_agent {
    askdb_config cfg;
    askdb_db *db;
    llm *model;
    struct trace *trace;
    char *schema_text;       /* rendered once, reused by every question */
    char *grammar;           /* SQL grammar for constrained decoding, built
                                once when the provider applies one */
    char errmsg[1024];
};

enum agent_step {
    STEP_SCHEMA, STEP_GENERATE, STEP_VALIDATE, STEP_EXECUTE, STEP_REPAIR,
    STEP_DONE, STEP_FAIL
};

/* What a step reports back to the router. */
enum agent_outcome {
    OUT_OK,                  /* go on */
    OUT_RETRY,               /* failed in a way the model may repair */
    OUT_EMPTY,               /* ran, no rows */
    OUT_FATAL                /* cannot go on (model down, database gone) */
};

#define AGENT_MAX_MSGS 64

struct agent_state {
    askdb_agent *ag;
    const char *question;
    const char *hint;        /* the asker's hint, or NULL */
    const struct db_schema *schema;

    /* The conversation with the model for this question. */
    struct llm_msg msgs[AGENT_MAX_MSGS];
    char *owned[AGENT_MAX_MSGS]; /* contents we allocated */
    int nmsgs;

    char *reply;             /* last model reply */
    char *sql;               /* current statement */
    askdb_error_class ec;    /* why the current attempt failed */
    char errbuf[1024];
    askdb_result *result;
    int empty_seen;          /* empty results so far */
    askdb_result *fallback;  /* a valid empty result to stand if all else
                                fails, with its SQL */
    char *fallback_sql;
    askdb_status fatal;      /* status when OUT_FATAL */
    askdb_answer *ans;
};

enum agent_outcome agent_step_schema(struct agent_state *st);
enum agent_outcome agent_step_generate(struct agent_state *st);
enum agent_outcome agent_step_validate(struct agent_state *st);
enum agent_outcome agent_step_execute(struct agent_state *st);
enum agent_outcome agent_step_repair(struct agent_state *st);

/* The next step after `step` ended with `out`. */
enum agent_step agent_route(const struct agent_state *st,
                            enum agent_step step, enum agent_outcome out);

const char *agent_step_name(enum agent_step step);

#endif
