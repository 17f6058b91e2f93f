/* agent.c - the agent's public calls, the router between its steps, and
** finishing an answer. */
#include "agent/agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "agent/memory.h"
#include "agent/model.h"
#include "agent/steps.h"
#include "agent/values.h"
#include "sql/extract.h"
#include "core/text.h"

/* ---------------------------------------------------------------------- */
/* Routing: the only place that decides what runs next                    */
/* ---------------------------------------------------------------------- */

/* A check doubted a result, its repair has run and did not give a better
** one: the doubted result stands (checks cost at most one repair). */
static int after_check_repair(const struct agent_state *st)
{
    return st->check_repairs > 0 && st->ec != ASKDB_EC_CHECK &&
           st->fallback && st->fallback->nrows > 0;
}

/* The attempt was refused as a statement that is not a query. */
static int refused_change(const askdb_attempt *at)
{
    return at->error == ASKDB_EC_REFUSED && at->sql && sqlx_changes(at->sql);
}

/* The last two attempts were refused as changes (an UPDATE, a DROP...):
** the repair said once that askdb runs one read-only query, and the model
** wrote a change again. The question asks to change the data, which no
** attempt can answer. A refused query (one that reads a file) is
** repaired as any failure. */
static int changes_twice(const struct agent_state *st)
{
    const askdb_answer *a = st->ans;

    return a->nattempts >= 2 &&
           refused_change(&a->attempts[a->nattempts - 1]) &&
           refused_change(&a->attempts[a->nattempts - 2]);
}

enum agent_step agent_route(const struct agent_state *st,
                            enum agent_step step, enum agent_outcome out)
{
    const askdb_config *c = &st->ag->cfg;
    int attempts_left = st->ans->nattempts < c->max_attempts;
    /* The end of a run with a result: the answer step, if asked for. */
    enum agent_step finish_ok = st->want_answer && !c->dry_run
                                    ? STEP_ANSWER : STEP_DONE;
    /* A plan runs its earlier tasks' SQL: never in a dry run. */
    enum agent_step first = c->plan && !c->dry_run ? STEP_PLAN
                                                   : STEP_GENERATE;

    if (out == OUT_FATAL) {
        /* The model failed on a repair: the valid result in hand stands
        ** (an empty one, or one a check doubted), as when the repair
        ** gives nothing better. The model is not asked for words. */
        if (step == STEP_GENERATE && st->fallback &&
            st->fatal != ASKDB_ERR_NOMEM)
            return STEP_DONE;
        return STEP_FAIL;
    }
    switch (step) {
    case STEP_SCHEMA:
        return STEP_CONTEXT;
    case STEP_CONTEXT:
        return c->question_check ? STEP_QCHECK : first;
    case STEP_QCHECK:
        return out == OUT_SKIP ? STEP_DONE : first;
    case STEP_PLAN:
        return STEP_GENERATE;
    case STEP_GENERATE:
        if (out == OUT_OK)
            return STEP_VALIDATE;
        break;
    case STEP_VALIDATE:
        if (out == OUT_OK)
            return c->dry_run ? STEP_DONE : STEP_EXECUTE;
        break;
    case STEP_EXECUTE:
        if (out == OUT_OK)
            return finish_ok;
        if (after_check_repair(st))
            return finish_ok;
        if (out == OUT_EMPTY)
            return st->empty_seen == 1 && attempts_left ? STEP_REPAIR
                                                        : finish_ok;
        break;
    case STEP_REPAIR:
        return STEP_GENERATE;
    case STEP_ANSWER:
        return STEP_DONE;
    case STEP_DONE:
    case STEP_FAIL:
        return STEP_FAIL;
    }
    /* A failed attempt: repair while attempts are left; else an earlier
    ** valid result (empty, or one a check doubted) stands. */
    if (after_check_repair(st))
        return finish_ok;
    if (attempts_left && !changes_twice(st))
        return STEP_REPAIR;
    return st->fallback ? finish_ok : STEP_FAIL;
}

const char *agent_step_name(enum agent_step step)
{
    static const char *const names[] = {
        "schema", "qcheck", "context", "plan", "generate", "validate",
        "execute", "repair", "answer", "done", "fail"
    };
    return names[step];
}

/* ---------------------------------------------------------------------- */
/* Finishing an answer                                                    */
/* ---------------------------------------------------------------------- */

/* Remember a question and its SQL for follow-ups (cfg.conversation). */
static void remember_turn(askdb_agent *ag, const char *q, const char *sql)
{
    struct agent_turn t;

    t.question = strdup(q);
    t.sql = strdup(sql);
    if (!t.question || !t.sql) {
        free(t.question);
        free(t.sql);
        return;
    }
    if (ag->nturns == AGENT_MAX_TURNS) {
        free(ag->turns[0].question);
        free(ag->turns[0].sql);
        memmove(ag->turns, ag->turns + 1,
                (AGENT_MAX_TURNS - 1) * sizeof ag->turns[0]);
        ag->nturns--;
    }
    ag->turns[ag->nturns++] = t;
}

/* 1 when a has attempts and every one failed with the class ec. */
static int all_attempts(const askdb_answer *a, askdb_error_class ec)
{
    int i;

    for (i = 0; i < a->nattempts && a->attempts[i].error == ec; i++)
        ;
    return a->nattempts > 0 && i == a->nattempts;
}

/* Move the outcome of the run into the answer. */
static void finish(struct agent_state *st, enum agent_step last)
{
    askdb_answer *a = st->ans;
    askdb_attempt *at = agent_cur_attempt(st);
    struct buf b;
    int i;

    if (last == STEP_DONE && a->not_a_question) {
        a->status = ASKDB_OK;
        return;
    }
    if (last == STEP_DONE) {
        a->status = ASKDB_OK;
        if (!agent_use_fallback(st)) {
            a->sql = st->sql;
            st->sql = NULL;
            a->result = st->result;
            st->result = NULL;
        } else {
            /* No attempt left after a result that stands (the first empty
            ** one, or one a check doubted and the repair did not beat). */
            a->sql = st->fallback_sql;
            st->fallback_sql = NULL;
            a->result = st->fallback;
            st->fallback = NULL;
            a->confidence = st->fallback_conf;
            a->nsettled = st->fallback_settled;
        }
        /* The accepted attempt has no error, unless it is an empty result
        ** that stands: eval reports that class. */
        if (at && a->result && a->result->nrows > 0 &&
            at->sql && a->sql && strcmp(at->sql, a->sql) == 0) {
            at->error = ASKDB_EC_NONE;
            free(at->message);
            at->message = NULL;
        }
        if (a->ncandidates <= 1)
            a->confidence = 1;
        if (st->ag->cfg.conversation && a->sql)
            remember_turn(st->ag, st->question, a->sql);
        return;
    }
    a->status = st->fatal ? st->fatal : ASKDB_ERR_NO_SQL;
    a->confidence = 0;
    buf_init(&b, 0);
    if (st->fatal)
        buf_puts(&b, st->errbuf);
    else if (all_attempts(a, ASKDB_EC_TIMEOUT))
        /* Valid SQL, every time too slow: "no valid SQL" would send the
        ** reader to the wrong place. */
        buf_printf(&b, "no answer after %d attempt%s: %s ran past the "
                   "time limit", a->nattempts, a->nattempts == 1 ? "" : "s",
                   a->nattempts == 1 ? "the query" : "every query");
    else
        buf_printf(&b, "no valid SQL after %d attempt%s", a->nattempts,
                   a->nattempts == 1 ? "" : "s");
    for (i = 0; !st->fatal && i < a->nattempts; i++)
        buf_printf(&b, "\n  attempt %d: %s: %s", i + 1,
                   askdb_error_class_str(a->attempts[i].error),
                   a->attempts[i].message ? a->attempts[i].message : "");
    if (!st->fatal && all_attempts(a, ASKDB_EC_REFUSED))
        /* Most often a question that asks to change the data. */
        buf_puts(&b, "\n(askdb runs one read-only query and never changes "
                     "the data: a question that asks to change it cannot "
                     "be answered)");
    if (!st->fatal && st->max_cut)
        buf_puts(&b, "\n(a reply hit --max-tokens before it ended: raise "
                     "--max-tokens)");
    a->error = buf_steal(&b);
}

static void state_free(struct agent_state *st)
{
    int i;

    for (i = 0; i < st->nmsgs; i++)
        free(st->owned[i]);
    agent_cands_clear(st);
    agent_early_clear(st);
    free(st->reply);
    free(st->sql);
    free(st->check_hint);
    free(st->fallback_sql);
    free(st->plan_notes);
    free(st->part_schema);
    free(st->part_bank);
    free(st->part_examples);
    free(st->part_history);
    free(st->part_values);
    askdb_result_free(st->result);
    askdb_result_free(st->fallback);
}

/* ---------------------------------------------------------------------- */
/* Public API                                                             */
/* ---------------------------------------------------------------------- */

/* The next question's or conversation's scope (llm_request.scope), unique
** in the process: agents share a loaded model. 0 is no scope. */
static atomic_ulong next_scope = 1;

/* An agent over db_path with its own provider, or one over the shared
** model sm when it is not NULL. */
static askdb_status agent_create(const askdb_config *cfg,
                                 struct llm_shared *sm, const char *db_path,
                                 askdb_agent **out)
{
    askdb_agent *ag;
    askdb_status rc;
    const char *err;

    if (!out)
        return ASKDB_ERR_USAGE;
    *out = NULL;
    ag = calloc(1, sizeof *ag);
    if (!ag)
        return ASKDB_ERR_NOMEM;
    /* The flag first: a signal handler may cancel *out from here on. */
    atomic_init(&ag->cancel, 0);
    *out = ag;
    ag->cfg = cfg ? *cfg : askdb_config_default();
    ag->cfg.max_attempts = agent_max_attempts(&ag->cfg);
    /* A usage error is said before the database is opened. Over a shared
    ** model the numbers of the requests are still the agent's own. */
    rc = sm ? llm_check_numbers(&ag->cfg, ag->errmsg, sizeof ag->errmsg)
            : llm_check(&ag->cfg, ag->errmsg, sizeof ag->errmsg);
    if (rc)
        return rc;
    /* The agent's flag from the start: askdb_agent_cancel() stops the
    ** open's connect to a server too, from another thread once open_fn
    ** has the agent. */
    if (ag->cfg.open_fn)
        ag->cfg.open_fn(ag->cfg.open_ud, ag, NULL);
    rc = db_open(db_path, &ag->cfg, &ag->cancel, &ag->db);
    if (ag->cfg.open_fn)
        ag->cfg.open_fn(ag->cfg.open_ud, NULL, NULL);
    /* The caller's open_ud need not outlive the open. */
    ag->cfg.open_fn = NULL;
    ag->cfg.open_ud = NULL;
    if (rc) {
        snprintf(ag->errmsg, sizeof ag->errmsg, "%s",
                 askdb_db_errmsg(ag->db));
        return rc;
    }
    ag->db->cancel = &ag->cancel;
    if (sm)
        rc = llm_new_shared(sm, &ag->cfg, &ag->model, ag->errmsg,
                            sizeof ag->errmsg);
    else
        rc = llm_new(&ag->cfg, &ag->model, ag->errmsg, sizeof ag->errmsg);
    if (rc)
        return rc;
    /* Auto: the ablation's 3 candidates gained 13 questions and lost 3 of
    ** 300 with the local model, which decodes them in one batch over one
    ** prompt; a provider without a batch pays a whole request for each. */
    if (ag->cfg.candidates < 1)
        ag->cfg.candidates = llm_batches_replies(ag->model) ? AGENT_AUTO_CANDS
                                                            : 1;
    /* A dry run runs nothing, so no vote could pick among candidates: it
    ** makes one (the greedy reply, which a vote's tie goes to), and its
    ** answer does not claim a confidence of 0 of N. */
    if (ag->cfg.dry_run)
        ag->cfg.candidates = 1;
    if (ag->cfg.trace_path) {
        ag->trace = trace_open(ag->cfg.trace_path, db_path, &err);
        if (!ag->trace) {
            snprintf(ag->errmsg, sizeof ag->errmsg,
                     "cannot open trace file '%s': %s", ag->cfg.trace_path,
                     err);
            return ASKDB_ERR_IO;
        }
    }
    ag->ready = 1;
    return ASKDB_OK;
}

askdb_status askdb_agent_new(const askdb_config *cfg, const char *db_path,
                             askdb_agent **out)
{
    return agent_create(cfg, NULL, db_path, out);
}

askdb_status askdb_agent_new_with_model(const askdb_config *cfg,
                                        askdb_model *model,
                                        const char *db_path,
                                        askdb_agent **out)
{
    askdb_agent *ag;

    if (!out)
        return ASKDB_ERR_USAGE;
    if (model && agent_model_shared(model))
        return agent_create(cfg, agent_model_shared(model), db_path, out);
    /* No model, or one whose askdb_model_new() failed: a handle that
    ** says so, as every constructor leaves one on failure. */
    *out = NULL;
    ag = calloc(1, sizeof *ag);
    if (!ag)
        return ASKDB_ERR_NOMEM;
    *out = ag;
    if (model)
        snprintf(ag->errmsg, sizeof ag->errmsg, "the model was not "
                 "loaded: %s", askdb_model_errmsg(model));
    else
        snprintf(ag->errmsg, sizeof ag->errmsg, "no model given (NULL; "
                 "askdb_model_new() makes one)");
    return ASKDB_ERR_USAGE;
}

void askdb_agent_cancel(askdb_agent *ag)
{
    if (ag)
        atomic_store(&ag->cancel, 1);
}

void askdb_agent_forget(askdb_agent *ag)
{
    int i;

    if (!ag)
        return;
    for (i = 0; i < ag->nturns; i++) {
        free(ag->turns[i].question);
        free(ag->turns[i].sql);
    }
    ag->nturns = 0;
}

void askdb_agent_free(askdb_agent *ag)
{
    if (!ag)
        return;
    askdb_agent_forget(ag);
    vindex_free(ag->values);
    memory_close(ag->mem);
    free(ag->db_key);
    llm_free(ag->model);
    askdb_db_close(ag->db);
    trace_close(ag->trace);
    free(ag->schema_text);
    free(ag->grammar);
    free(ag);
}

const char *askdb_agent_errmsg(const askdb_agent *ag)
{
    return ag ? ag->errmsg : "out of memory";
}

/*
** ASKDB_OK when ag was made. The handle a failed askdb_agent_new() (or
** askdb_agent_new_with_model()) left for its message may lack its
** database, model or trace: ASKDB_ERR_USAGE, with ag's message saying so
** and keeping why it failed.
*/
static askdb_status agent_ready(askdb_agent *ag)
{
    if (ag->ready)
        return ASKDB_OK;
    text_prefix_once(ag->errmsg, sizeof ag->errmsg,
                     "this agent was not made (askdb_agent_new() failed): ");
    return ASKDB_ERR_USAGE;
}

askdb_db *askdb_agent_db(askdb_agent *ag)
{
    return ag && ag->ready ? ag->db : NULL;
}

askdb_status askdb_agent_ask(askdb_agent *ag, const char *question,
                             askdb_answer **out)
{
    return askdb_agent_ask_opts(ag, question, NULL, out);
}

askdb_status askdb_agent_ask_hint(askdb_agent *ag, const char *question,
                                  const char *hint, askdb_answer **out)
{
    askdb_ask_options o;

    memset(&o, 0, sizeof o);
    o.hint = hint;
    return askdb_agent_ask_opts(ag, question, &o, out);
}

/* Nothing but white space. */
static int blank(const char *s)
{
    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    return *s == '\0';
}

/*
** Why text, a question or a hint (what), cannot be sent, into msg (n
** bytes): not valid UTF-8, which it must be to reach a prompt, the trace
** and the conversation (repaired, the bytes a Latin-1 terminal sent were
** shown to the model as U+FFFD, a value no table holds: the asker is told
** where instead, and fix how to mend it); longer than ASKDB_MAX_QUESTION
** characters (every front end's limit, askdb serve's API and the MCP
** tool's schema say as much; shorter says how to mend it). 0 when fit.
*/
static int text_unfit(const char *text, const char *what, const char *fix,
                      const char *shorter, char *msg, size_t n)
{
    size_t len = strlen(text), ok = text_valid_len(text, len), chars;

    if (ok < len) {
        snprintf(msg, n, "the %s is not valid UTF-8: byte %zu (0x%02X) "
                 "starts no character; askdb reads %ss as UTF-8 (%s)",
                 what, ok + 1, (unsigned char)text[ok], what, fix);
        return 1;
    }
    chars = text_chars(text, len);
    if (chars > ASKDB_MAX_QUESTION) {
        snprintf(msg, n, "the %s is %zu characters long, over the limit "
                 "of %d (ASKDB_MAX_QUESTION): %s", what, chars,
                 ASKDB_MAX_QUESTION, shorter);
        return 1;
    }
    return 0;
}

/* Why question cannot be asked, into msg (n bytes): nothing but white
** space, or unfit (text_unfit()). 0 when it can be asked. */
static int question_refused(const char *question, char *msg, size_t n)
{
    if (blank(question)) {
        snprintf(msg, n, "the question is empty");
        return 1;
    }
    return text_unfit(question, "question",
                      "is the terminal set to another encoding?",
                      "ask it in fewer words", msg, n);
}

/* Why hint cannot be given, into msg (n bytes): unfit as a question
** would be (text_unfit()); it goes into every message of the question.
** 0 for a hint that can be given (NULL, "", or fit). */
static int hint_refused(const char *hint, char *msg, size_t n)
{
    return hint && text_unfit(hint, "hint", "convert it before asking",
                              "give what the schema does not say in fewer "
                              "words", msg, n);
}

/* The question's request id: the caller's (cut to fit, as valid UTF-8),
** else 16 random hex digits. */
static void set_request_id(askdb_agent *ag, const char *id)
{
    unsigned char r[8];
    size_t n;
    int i;

    if (id && *id) {
        n = text_cut(id, strlen(id), sizeof ag->request_id - 1);
        memcpy(ag->request_id, id, n);
        ag->request_id[n] = '\0';
        return;
    }
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        double t = db_now_ms();
        memcpy(r, &t, sizeof r);
        r[0] ^= (unsigned char)(uintptr_t)ag;
    }
    for (i = 0; i < 8; i++)
        snprintf(ag->request_id + 2 * i, 3, "%02x", r[i]);
}

/* A trace that could not be written makes an answer that was ok
** ASKDB_ERR_IO, saying so (the rows stay). */
static void trace_failed(askdb_agent *ag, askdb_answer *a)
{
    if (a->status != ASKDB_OK || !trace_failure(ag->trace))
        return;
    snprintf(ag->errmsg, sizeof ag->errmsg,
             "cannot write trace file '%s': %s (the trace is incomplete)",
             ag->cfg.trace_path, trace_failure(ag->trace));
    free(a->error);
    a->error = strdup(ag->errmsg);
    a->status = ASKDB_ERR_IO;
}

/* The answer event: the outcome, its timings and costs. */
static json_t *answer_event(const askdb_answer *a)
{
    json_t *ev;

    ev = json_pack("{s:s, s:o, s:i, s:f, s:I, s:I, s:I, s:i, s:f}", "status",
                   askdb_status_str(a->status), "sql", jsonx_string(a->sql),
                   "attempts", a->nattempts, "total_ms", a->t.total_ms,
                   "prompt_tokens", (json_int_t)a->prompt_tokens,
                   "completion_tokens", (json_int_t)a->completion_tokens,
                   "llm_calls", (json_int_t)a->llm_calls, "candidates",
                   a->ncandidates, "confidence", a->confidence);
    if (!ev)
        return NULL;
    json_object_set_new(
        ev, "timings",
        json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "schema_ms",
                  a->t.schema_ms, "prompt_ms", a->t.prompt_ms, "llm_ms",
                  a->t.llm_ms, "validate_ms", a->t.validate_ms, "exec_ms",
                  a->t.exec_ms, "total_ms", a->t.total_ms));
    if (a->error)
        jsonx_set_str(ev, "error", a->error);
    if (a->text)
        jsonx_set_str(ev, "text", a->text);
    return ev;
}

askdb_status askdb_agent_warm(askdb_agent *ag)
{
    struct agent_state st;
    struct llm_request req;
    askdb_answer a;
    askdb_status rc = ASKDB_OK;
    double t0 = db_now_ms();

    if (!ag)
        return ASKDB_ERR_USAGE;
    if (agent_ready(ag))
        return ASKDB_ERR_USAGE;
    atomic_store(&ag->cancel, 0);
    /* Its step events (schema, link) are its own, timed from its start:
    ** not the last question's, nor timed from none. */
    ag->q_t0 = t0;
    set_request_id(ag, NULL);
    memset(&a, 0, sizeof a);
    memset(&st, 0, sizeof st);
    st.ag = ag;
    st.question = "";
    st.ans = &a;
    /* The first message as a question would have it, up to the question:
    ** system prompt and schema (linking keeps a schema of up to 8 KiB
    ** whole; a cut one depends on the question and has no stable part). */
    if (agent_step_schema(&st) != OUT_OK ||
        agent_step_context(&st) != OUT_OK) {
        rc = st.fatal ? st.fatal : ASKDB_ERR_NOMEM;
        snprintf(ag->errmsg, sizeof ag->errmsg, "%s", st.errbuf);
    } else {
        memset(&req, 0, sizeof req);
        req.msgs = st.msgs;
        req.nmsgs = st.nmsgs;
        req.cancel = &ag->cancel;
        agent_mark_stable(&st, &req);
        rc = llm_warm(ag->model, &req);
        if (rc)
            snprintf(ag->errmsg, sizeof ag->errmsg, "%s",
                     llm_errmsg(ag->model));
        agent_log(&st, "warm", "%s in %.0f ms",
                  req.stable_msgs ? "schema prompt ready"
                                  : "nothing to keep (schema cut per "
                                    "question)",
                  db_now_ms() - t0);
    }
    /* Whatever a step made of it (a database or model error, or nothing
    ** at all), the caller stopped it, as askdb_agent_ask() says. */
    if (atomic_load(&ag->cancel)) {
        rc = ASKDB_ERR_CANCELLED;
        snprintf(ag->errmsg, sizeof ag->errmsg, "cancelled");
    }
    state_free(&st);
    return rc;
}

askdb_status askdb_agent_ask_opts(askdb_agent *ag, const char *question,
                                  const askdb_ask_options *opts,
                                  askdb_answer **out)
{
    const char *hint = opts ? opts->hint : NULL;
    struct agent_state st;
    enum agent_step step = STEP_SCHEMA;
    enum agent_outcome o = OUT_FATAL;
    double t0 = db_now_ms();
    askdb_answer *a;
    json_t *ev;

    if (!out)
        return ASKDB_ERR_USAGE;
    *out = NULL;
    a = calloc(1, sizeof *a);
    if (!a)
        return ASKDB_ERR_NOMEM;
    *out = a;
    if (!ag) {
        a->status = ASKDB_ERR_USAGE;
        a->error = strdup("no agent (did askdb_agent_new() fail?)");
        return a->status;
    }
    if (agent_ready(ag)) {
        a->status = ASKDB_ERR_USAGE;
        a->error = strdup(ag->errmsg);
        return a->status;
    }
    ag->q_t0 = t0;
    atomic_store(&ag->cancel, 0);
    /* The model may reuse what it evaluated for this question's calls,
    ** or this conversation's, but not another question's: the answer
    ** then does not depend on what was asked before (llm_request.scope). */
    if (!ag->cfg.conversation || ag->nturns == 0)
        ag->scope = atomic_fetch_add(&next_scope, 1);
    set_request_id(ag, opts ? opts->request_id : NULL);
    question = question ? question : "";
    a->request_id = strdup(ag->request_id);
    /* The answer's question is valid UTF-8 even when it is refused. */
    a->question = text_repair(strdup(question));
    if (!a->question || !a->request_id) {
        snprintf(ag->errmsg, sizeof ag->errmsg, "out of memory");
        a->status = ASKDB_ERR_NOMEM;
        a->error = strdup("out of memory");
        return a->status;
    }
    if (question_refused(question, ag->errmsg, sizeof ag->errmsg) ||
        hint_refused(hint, ag->errmsg, sizeof ag->errmsg)) {
        /* Nothing asked: no model call, no turn of the conversation. */
        a->status = ASKDB_ERR_USAGE;
        a->error = strdup(ag->errmsg);
        return a->status;
    }
    memset(&st, 0, sizeof st);
    st.ag = ag;
    st.question = question;
    st.hint = hint;
    st.want_answer = ag->cfg.answer || (opts && opts->answer);
    st.ans = a;
    ev = json_object();
    jsonx_set_str(ev, "question", st.question);
    if (hint && *hint)
        jsonx_set_str(ev, "hint", hint);
    agent_emit(ag, ASKDB_EVENT_QUESTION, ev);

    while (step != STEP_DONE && step != STEP_FAIL) {
        switch (step) {
        case STEP_SCHEMA: o = agent_step_schema(&st); break;
        case STEP_QCHECK: o = agent_step_qcheck(&st); break;
        case STEP_CONTEXT: o = agent_step_context(&st); break;
        case STEP_PLAN: o = agent_step_plan(&st); break;
        case STEP_GENERATE: o = agent_step_generate(&st); break;
        case STEP_VALIDATE: o = agent_step_validate(&st); break;
        case STEP_EXECUTE: o = agent_step_execute(&st); break;
        case STEP_REPAIR: o = agent_step_repair(&st); break;
        case STEP_ANSWER: o = agent_step_answer(&st); break;
        case STEP_DONE:
        case STEP_FAIL:
            break;
        }
        step = agent_route(&st, step, o);
        /* A cancel during the answer in words stops the words only: the
        ** rows were final (the result event), and stand without them. */
        if (atomic_load(&ag->cancel) &&
            !(st.result_shown && step == STEP_DONE)) {
            /* Whatever the step made of it: the asker stopped. */
            st.fatal = ASKDB_ERR_CANCELLED;
            snprintf(st.errbuf, sizeof st.errbuf, "cancelled");
            step = STEP_FAIL;
        }
    }
    finish(&st, step);
    state_free(&st);
    a->t.total_ms = db_now_ms() - t0;
    snprintf(ag->errmsg, sizeof ag->errmsg, "%s", a->error ? a->error : "");
    /* Before the answer event, so that it says what the call returns (it
    ** said ok); and after it, for its own line. */
    trace_failed(ag, a);
    agent_emit(ag, ASKDB_EVENT_ANSWER, answer_event(a));
    trace_failed(ag, a);
    return a->status;
}

void askdb_answer_free(askdb_answer *a)
{
    int i;

    if (!a)
        return;
    for (i = 0; i < a->nattempts; i++) {
        free(a->attempts[i].sql);
        free(a->attempts[i].message);
    }
    free(a->attempts);
    free(a->sql);
    askdb_result_free(a->result);
    free(a->error);
    free(a->text);
    free(a->question);
    free(a->request_id);
    free(a);
}
