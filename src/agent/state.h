/* state.h - the agent's state, and the helpers every step uses on it. */
#ifndef ASKDB_AGENT_STATE_H
#define ASKDB_AGENT_STATE_H

#include <stdatomic.h>

#include "askdb.h"
#include "core/buf.h"
#include "core/json.h"
#include "core/trace.h"
#include "db/db.h"
#include "agent/prompt.h"
#include "llm/llm.h"

/*
** The handle (struct askdb_agent) lives as long as the agent; the state
** (struct agent_state) as long as one question. Each step is a function
** over the state (steps.h); the router in agent.c decides which runs next.
** The helpers below are the only ones the steps share: messages to the
** model, model calls outside the main conversation, attempts and
** candidates, the result that stands, and the step log and trace.
*/

struct vindex;
struct memory;

#define AGENT_MAX_TURNS 3    /* earlier questions kept for follow-ups */

struct agent_turn {
    char *question;
    char *sql;
};

struct askdb_agent {
    askdb_config cfg;
    int ready;               /* askdb_agent_new() succeeded; else the
                                handle is only for its message: db, model
                                or trace may be missing (agent_ready()) */
    askdb_db *db;
    llm *model;
    struct trace *trace;
    char *schema_text;       /* rendered once, reused by every question */
    char *grammar;           /* SQL grammar for constrained decoding, built
                                once when the provider applies one */
    struct vindex *values;   /* value index (cfg.values), opened lazily */
    int values_failed;       /* 1 = could not be built: do not retry */
    struct memory *mem;      /* learned pairs (cfg.memory), lazily */
    int mem_skip_same;       /* a learned pair of the very question asked
                                is left out (eval: it is the gold) */
    char mem_said[512];      /* the store's last failure, said once */
    char *db_key;            /* the database's key in the memory store */
    struct agent_turn turns[AGENT_MAX_TURNS]; /* oldest first */
    int nturns;
    unsigned long scope;     /* the model calls' llm_request.scope: new
                                for each question, or each conversation */
    char errmsg[1024];
    /* The question being answered: its id and start (agent_emit). */
    char request_id[72];
    double q_t0;
    atomic_int cancel;       /* askdb_agent_cancel(): the model call and
                                the query see it through their requests */
};

enum agent_step {
    STEP_SCHEMA, STEP_QCHECK, STEP_CONTEXT, STEP_PLAN, STEP_GENERATE,
    STEP_VALIDATE, STEP_EXECUTE, STEP_REPAIR, STEP_ANSWER, STEP_DONE,
    STEP_FAIL
};

/* What a step reports back to the router. */
enum agent_outcome {
    OUT_OK,                  /* go on */
    OUT_RETRY,               /* failed in a way the model may repair */
    OUT_EMPTY,               /* ran, no rows */
    OUT_SKIP,                /* qcheck: not a question, answered already */
    OUT_FATAL                /* cannot go on (model down, database gone) */
};

#define AGENT_MAX_MSGS 64
/* Each repair adds two messages (the failed reply and the feedback) to the
** system and first user message: the attempts that fit, 32. */
#define AGENT_MAX_ATTEMPTS (1 + (AGENT_MAX_MSGS - 2) / 2)
#define AGENT_MAX_CANDS 8
/* askdb_config.candidates 0 with a batching model */
#define AGENT_AUTO_CANDS 3

/* One SQL candidate of the current attempt. */
struct agent_cand {
    char *reply;
    char *sql;               /* NULL: no SQL in the reply */
    askdb_error_class ec;    /* why it failed, ASKDB_EC_NONE if it ran */
    char *err;
    askdb_result *result;
    int votes;               /* candidates whose result equals this one's */
    int fixed;               /* its SQL was fixed without the model (a
                                guess): it loses a tie of votes */
    int settled;             /* stopped or not asked: the vote was
                                decided without it (cfg.settle) */
};

/* A candidate run while the others were still being written (execute.c,
** agent_settle()): its statement and result, for the execute step. */
struct agent_early {
    int ended;               /* its reply has ended */
    char *sql;               /* what ran, NULL when it could not run as
                                written (no SQL, refused, or invalid) */
    askdb_result *result;
};

struct agent_state {
    askdb_agent *ag;
    const char *question;
    const char *hint;        /* the asker's hint, or NULL */
    int want_answer;         /* the answer step runs (config or options) */
    int result_shown;        /* the result event went out: the rows are
                                final, a cancel stops only the words */
    const struct db_schema *schema;

    /* The conversation with the model for this question. */
    struct llm_msg msgs[AGENT_MAX_MSGS];
    char *owned[AGENT_MAX_MSGS]; /* contents we allocated */
    int nmsgs;

    char *reply;             /* reply of the chosen candidate */
    char *sql;               /* current statement */
    askdb_error_class ec;    /* why the current attempt failed */
    char errbuf[1024];
    char *check_hint;        /* a check finding's hint for the repair */
    int check_repairs;       /* repairs caused by check findings */
    askdb_result *result;
    int empty_seen;          /* empty results so far */
    askdb_result *fallback;  /* a valid result to stand if all else fails
                                (first empty one, or one a check doubted) */
    char *fallback_sql;
    double fallback_conf;    /* its confidence */
    int fallback_settled;    /* its vote's settled candidates */
    askdb_status fatal;      /* status when OUT_FATAL */
    int max_cut;             /* a reply stopped at max_tokens was left
                                out: with no answer, the message says to
                                raise --max-tokens */
    askdb_answer *ans;

    struct agent_cand cands[AGENT_MAX_CANDS];
    int ncands;
    struct agent_early early[AGENT_MAX_CANDS];
    char *plan_notes;        /* results of earlier plan tasks, or NULL */
    struct prompt_parts parts; /* the first message's parts (context) */
    char *part_schema;       /* owned parts: linked schema subset, */
    char *part_bank;         /* examples from other databases, */
    char *part_examples;     /* learned pairs, */
    char *part_history;      /* earlier turns, */
    char *part_values;       /* values the question mentions */
    double relevance;        /* how much of the question matched names and
                                values of the database (context), 0 = none */
};

/* The attempts per question cfg asks for: max_attempts, 0 or less the
** default (3), at most AGENT_MAX_ATTEMPTS. */
int agent_max_attempts(const askdb_config *cfg);

void agent_log(struct agent_state *st, const char *step, const char *fmt,
               ...) __attribute__((format(printf, 3, 4)));
int agent_push_msg(struct agent_state *st, const char *role, char *content);

/* End the question as out of memory (status and message). */
enum agent_outcome agent_nomem(struct agent_state *st);

/*
** One model call outside the main conversation (question check, plan,
** plan tasks, answer): counted in the answer's calls, tokens and model
** time, traced as step `what`. Returns the reply text (malloc()ed) or NULL
** with st->errbuf set; *rc gets the provider's status. cut (or NULL) gets
** llm_reply.cut: whether the reply stopped unfinished, at max_tokens.
*/
char *agent_call(struct agent_state *st, const char *what,
                 const struct llm_msg *msgs, int nmsgs, const char *grammar,
                 int max_tokens, int *cut, askdb_status *rc);

/* Why a reply cut (cut: LLM_CUT_MAX_TOKENS or LLM_CUT_CONTEXT) is of no
** use, for messages: "cut: the reply hit --max-tokens (N) before it
** ended", or that the local model's context had no more room, into buf
** (n bytes). */
const char *agent_cut_why(const struct agent_state *st, int cut, char *buf,
                          size_t n);

/*
** Report a step: ev (a JSON object, consumed; NULL is ignored) gets
** "step", "request_id" and "t_ms", is serialized once and goes to the
** embedder's event_fn and to the trace file (askdb.h, "Step events").
*/
void agent_emit(askdb_agent *ag, askdb_event_type type, json_t *ev);
/* agent_emit() with the rows the event lends its callback (the result
** event's; they stay out of the JSON and the trace). */
void agent_emit_result(askdb_agent *ag, askdb_event_type type, json_t *ev,
                       const askdb_result *r);

/* agent_call() beside the conversation: the system prompt and the first
** user message with instruction appended (the question check, the
** plan), so that the local model reuses the evaluated prefix. */
char *agent_call_aside(struct agent_state *st, const char *what,
                       const char *instruction, const char *grammar,
                       int max_tokens, askdb_status *rc);

/*
** Text of the model's (what: "reply", "query") as a later prompt shows it
** again: whole up to AGENT_TEXT_KEPT bytes, else cut there (on a whole
** UTF-8 character) with a note of what was left out, after the line start
** lead ("" or a SQL comment's "-- ", inside a code block). A model that
** wrote megabytes would otherwise be sent them again with every later
** request of the question (a repair's, a plan's next steps). NULL text is
** NULL. malloc()ed; NULL when out of memory.
*/
#define AGENT_TEXT_KEPT 8192
char *agent_text_kept(const char *text, const char *lead, const char *what);

/* The first max_rows rows of r as a pipe-separated table for a prompt,
** text values cut at max_cell bytes, column names at 1 KiB (an unaliased
** expression's text); "(no rows)" when empty. Used by the
** plan step (earlier tasks' results) and the answer step. */
void agent_rows_text(struct buf *b, const askdb_result *r, long max_rows,
                     size_t max_cell);

/* Whether the result that stands is the fallback rather than the last
** attempt's: no last result, or an empty one after a non-empty result a
** check doubted. The answer step describes the same result. */
int agent_use_fallback(const struct agent_state *st);

/* The model's reply figures as a trace event object (new reference). */
json_t *agent_reply_event(const struct llm_reply *rep, const char *text);

/* The messages as a JSON array (new reference). */
json_t *agent_msgs_json(const struct llm_msg *msgs, int n);

/* Mark req's stable prefix (llm.h) when its first two messages start as
** the question's do (system prompt, whole schema). */
void agent_mark_stable(const struct agent_state *st, struct llm_request *req);

/* The current attempt (the last one), or NULL before the first. */
askdb_attempt *agent_cur_attempt(struct agent_state *st);

/* The current statement becomes the current attempt's SQL. */
void agent_record_sql(struct agent_state *st);

/* Record why the current attempt failed, in the attempt, st->ec/errbuf,
** the log and the trace (msg NULL: "failed"). */
void agent_fail_attempt(struct agent_state *st, askdb_error_class ec,
                        const char *msg);

/* The current attempt failed because the database did (candidate i's
** ASKDB_EC_DATABASE error): no repair can help, so the question ends with
** ASKDB_ERR_DB and the message, the attempt recorded with its SQL. */
enum agent_outcome agent_db_failed(struct agent_state *st, int i);

/* The first candidate whose statement failed because the database did,
** or -1. */
int agent_db_failure(const struct agent_state *st);

/* Free every candidate of the current attempt. */
void agent_cands_clear(struct agent_state *st);

/* Free the early runs (st->early). */
void agent_early_clear(struct agent_state *st);

/* Mark candidate c failed with ec and a copy of msg. */
void agent_cand_fail(struct agent_cand *c, askdb_error_class ec,
                     const char *msg);

/* Make candidate i the current statement (st->sql, st->reply). */
void agent_take_cand(struct agent_state *st, int i);

/* Keep r (with sql) as the result that stands if later attempts fail,
** with the current vote's confidence and settled count; replaces an
** earlier fallback. Takes r over. */
void agent_keep_fallback(struct agent_state *st, const char *sql,
                         askdb_result *r);

#endif
