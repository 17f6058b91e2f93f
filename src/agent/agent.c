/* agent.c - the steps that answer a question, the router, and the API. */
#include "agent/agent.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/hint.h"
#include "agent/prompt.h"
#include "core/json.h"
#include "sql/extract.h"
#include "sql/grammar.h"

/* ---------------------------------------------------------------------- */
/* Small helpers                                                          */
/* ---------------------------------------------------------------------- */

static void logf_(struct agent_state *st, const char *step, const char *fmt,
                  ...) __attribute__((format(printf, 3, 4)));

/* Verbose log line for a step (only when the embedder asked for it). */
static void logf_(struct agent_state *st, const char *step, const char *fmt,
                  ...)
{
    char line[1024];
    va_list ap;

    if (!st->ag->cfg.log_fn)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    st->ag->cfg.log_fn(st->ag->cfg.log_ud, step, line);
}

/* Append a message; content is taken over (freed with the state). */
static int push_msg(struct agent_state *st, const char *role, char *content)
{
    if (!content)
        return -1;
    if (st->nmsgs >= AGENT_MAX_MSGS) {
        free(content);
        return -1;
    }
    st->msgs[st->nmsgs].role = role;
    st->msgs[st->nmsgs].content = content;
    st->owned[st->nmsgs] = content;
    st->nmsgs++;
    return 0;
}

static askdb_attempt *cur_attempt(struct agent_state *st)
{
    askdb_answer *a = st->ans;

    return a->nattempts ? &a->attempts[a->nattempts - 1] : NULL;
}

/* Record why the current attempt failed, in the attempt and the trace. */
static void fail_attempt(struct agent_state *st, askdb_error_class ec,
                         const char *msg)
{
    askdb_attempt *at = cur_attempt(st);
    json_t *ev;

    st->ec = ec;
    snprintf(st->errbuf, sizeof st->errbuf, "%s", msg);
    if (at) {
        at->error = ec;
        free(at->message);
        at->message = strdup(msg);
    }
    logf_(st, "error", "%s: %s", askdb_error_class_str(ec), msg);
    ev = json_object();
    json_object_set_new(ev, "class", json_string(askdb_error_class_str(ec)));
    jsonx_set_str(ev, "message", msg);
    jsonx_set_str(ev, "sql", st->sql);
    trace_write(st->ag->trace, "error", ev);
}

/* ---------------------------------------------------------------------- */
/* Steps                                                                  */
/* ---------------------------------------------------------------------- */

/* Read the schema (first question only) and open the conversation. */
enum agent_outcome agent_step_schema(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct buf b;
    double t0 = db_now_ms();
    askdb_status rc;
    json_t *ev;

    rc = db_schema(ag->db, &st->schema);
    if (rc) {
        snprintf(st->errbuf, sizeof st->errbuf, "%s",
                 askdb_db_errmsg(ag->db));
        st->fatal = rc;
        return OUT_FATAL;
    }
    if (st->schema->ntables == 0) {
        snprintf(st->errbuf, sizeof st->errbuf,
                 "database '%s' has no tables or views to ask about",
                 ag->db->path);
        st->fatal = ASKDB_ERR_DB_OPEN;
        return OUT_FATAL;
    }
    if (!ag->schema_text) {
        ag->schema_text = schema_render(st->schema);
        if (!ag->schema_text) {
            st->fatal = ASKDB_ERR_NOMEM;
            return OUT_FATAL;
        }
        /* Constrained decoding: the model can then only write one
        ** read-only statement over this database's own names. */
        if (llm_supports_grammar(ag->model) && !ag->cfg.no_grammar) {
            ag->grammar = sqlx_grammar(st->schema);
            if (!ag->grammar) {
                st->fatal = ASKDB_ERR_NOMEM;
                return OUT_FATAL;
            }
        }
        st->ans->t.schema_ms = db_now_ms() - t0;
        ev = json_object();
        json_object_set_new(ev, "tables", json_integer(st->schema->ntables));
        json_object_set_new(ev, "bytes",
                            json_integer((json_int_t)strlen(ag->schema_text)));
        json_object_set_new(ev, "ms", json_real(st->ans->t.schema_ms));
        json_object_set_new(ev, "grammar_bytes",
                            json_integer(ag->grammar
                                         ? (json_int_t)strlen(ag->grammar)
                                         : 0));
        trace_write(ag->trace, "schema", ev);
        logf_(st, "schema", "%d tables, %zu bytes, %.2f ms",
              st->schema->ntables, strlen(ag->schema_text),
              st->ans->t.schema_ms);
    }

    t0 = db_now_ms();
    buf_init(&b, 0);
    prompt_question(&b, ag->schema_text, st->question, st->hint);
    if (push_msg(st, "system", strdup(prompt_system())) ||
        push_msg(st, "user", buf_steal(&b))) {
        st->fatal = ASKDB_ERR_NOMEM;
        return OUT_FATAL;
    }
    st->ans->t.prompt_ms += db_now_ms() - t0;
    return OUT_OK;
}

/* Ask the model and take the statement out of its reply. */
enum agent_outcome agent_step_generate(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    askdb_answer *a = st->ans;
    struct llm_request req;
    struct llm_reply rep;
    askdb_attempt *at;
    const char *why;
    askdb_status rc;
    json_t *ev, *msgs;
    int i;

    at = realloc(a->attempts, (size_t)(a->nattempts + 1) * sizeof *at);
    if (!at) {
        st->fatal = ASKDB_ERR_NOMEM;
        return OUT_FATAL;
    }
    a->attempts = at;
    at = &a->attempts[a->nattempts++];
    memset(at, 0, sizeof *at);

    memset(&req, 0, sizeof req);
    req.msgs = st->msgs;
    req.nmsgs = st->nmsgs;
    req.temperature = ag->cfg.temperature;
    req.max_tokens = ag->cfg.max_tokens;
    req.seed = ag->cfg.seed;
    req.grammar = ag->grammar;
    req.on_token = ag->cfg.token_fn;
    req.token_ud = ag->cfg.token_ud;

    ev = json_object();
    msgs = json_array();
    for (i = 0; i < st->nmsgs; i++) {
        json_t *m = json_object();
        json_object_set_new(m, "role", json_string(st->msgs[i].role));
        jsonx_set_str(m, "content", st->msgs[i].content);
        json_array_append_new(msgs, m);
    }
    json_object_set_new(ev, "attempt", json_integer(a->nattempts));
    json_object_set_new(ev, "provider", json_string(llm_name(ag->model)));
    json_object_set_new(ev, "messages", msgs);
    trace_write(ag->trace, "prompt", ev);
    logf_(st, "generate", "attempt %d: asking %s (%d messages)",
          a->nattempts, llm_name(ag->model), st->nmsgs);

    memset(&rep, 0, sizeof rep);
    rc = llm_complete(ag->model, &req, &rep);
    a->llm_calls++;
    a->t.llm_ms += rep.ms;
    at->llm_ms = rep.ms;
    if (rep.prompt_tokens > 0)
        a->prompt_tokens += rep.prompt_tokens;
    if (rep.completion_tokens > 0)
        a->completion_tokens += rep.completion_tokens;

    ev = json_object();
    json_object_set_new(ev, "attempt", json_integer(a->nattempts));
    jsonx_set_str(ev, "reply", rep.text);
    json_object_set_new(ev, "ms", json_real(rep.ms));
    json_object_set_new(ev, "prompt_tokens", json_integer(rep.prompt_tokens));
    json_object_set_new(ev, "completion_tokens",
                        json_integer(rep.completion_tokens));
    json_object_set_new(ev, "retries", json_integer(rep.retries));
    if (rc)
        jsonx_set_str(ev, "error", llm_errmsg(ag->model));
    trace_write(ag->trace, "reply", ev);

    if (rc) {
        at->error = ASKDB_EC_LLM;
        at->message = strdup(llm_errmsg(ag->model));
        snprintf(st->errbuf, sizeof st->errbuf, "%s", llm_errmsg(ag->model));
        st->fatal = rc;
        llm_reply_free(&rep);
        return OUT_FATAL;
    }
    logf_(st, "generate", "reply in %.0f ms (%ld+%ld tokens)", rep.ms,
          rep.prompt_tokens, rep.completion_tokens);
    free(st->reply);
    st->reply = rep.text;
    rep.text = NULL;
    llm_reply_free(&rep);

    free(st->sql);
    st->sql = sqlx_extract(st->reply, &why);
    if (!st->sql) {
        fail_attempt(st, ASKDB_EC_NO_SQL, why);
        return OUT_RETRY;
    }
    at->sql = strdup(st->sql);
    logf_(st, "generate", "SQL: %s", st->sql);
    return OUT_OK;
}

/* Check the statement without running it: shape, then the engine's own
** prepare under the read-only guard. */
enum agent_outcome agent_step_validate(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct db_err e;
    char why[256];
    double t0 = db_now_ms();
    enum agent_outcome out = OUT_OK;

    if (sqlx_check_readonly(st->sql, why, sizeof why)) {
        char msg[320];
        snprintf(msg, sizeof msg, "refused: %s", why);
        fail_attempt(st, ASKDB_EC_REFUSED, msg);
        out = OUT_RETRY;
    } else if (db_check(ag->db, st->sql, &e)) {
        fail_attempt(st, e.ec, e.msg);
        out = OUT_RETRY;
    } else {
        logf_(st, "validate", "ok");
        trace_write(ag->trace, "validate", json_pack("{s:b}", "ok", 1));
    }
    st->ans->t.validate_ms += db_now_ms() - t0;
    return out;
}

/* Run the statement with the limits. */
enum agent_outcome agent_step_execute(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    askdb_result *r = NULL;
    struct db_err e;
    double t0 = db_now_ms();
    json_t *ev;

    if (db_run(ag->db, st->sql, &r, &e)) {
        st->ans->t.exec_ms += db_now_ms() - t0;
        fail_attempt(st, e.ec, e.msg);
        return OUT_RETRY;
    }
    st->ans->t.exec_ms += db_now_ms() - t0;
    ev = json_object();
    json_object_set_new(ev, "rows", json_integer(r->nrows));
    json_object_set_new(ev, "truncated", json_integer(r->truncated));
    json_object_set_new(ev, "ms", json_real(r->exec_ms));
    trace_write(ag->trace, "execute", ev);
    logf_(st, "execute", "%ld rows in %.2f ms%s", r->nrows, r->exec_ms,
          r->truncated ? " (truncated)" : "");
    askdb_result_free(st->result);
    st->result = r;
    if (r->nrows == 0) {
        st->empty_seen++;
        /* Keep the first empty result: it stands if the retry fails. */
        if (!st->fallback) {
            st->fallback = r;
            st->fallback_sql = strdup(st->sql);
            st->result = NULL;
        }
        fail_attempt(st, ASKDB_EC_EMPTY, "the query returned no rows");
        return OUT_EMPTY;
    }
    return OUT_OK;
}

/* Tell the model what went wrong and how to fix it. */
enum agent_outcome agent_step_repair(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct buf hint, msg;
    double t0 = db_now_ms();

    buf_init(&hint, 0);
    hint_write(&hint, st->schema, st->sql, st->ec, st->errbuf,
               ag->cfg.query_timeout_ms);
    buf_init(&msg, 0);
    prompt_repair(&msg, st->sql, st->errbuf, hint.data);
    buf_free(&hint);
    if (push_msg(st, "assistant", strdup(st->reply ? st->reply : "")) ||
        push_msg(st, "user", buf_steal(&msg))) {
        st->fatal = ASKDB_ERR_NOMEM;
        snprintf(st->errbuf, sizeof st->errbuf, "out of memory");
        return OUT_FATAL;
    }
    st->ans->t.prompt_ms += db_now_ms() - t0;
    logf_(st, "repair", "asking for a fix of: %s",
          askdb_error_class_str(st->ec));
    return OUT_OK;
}

/* ---------------------------------------------------------------------- */
/* Routing: the only place that decides what runs next                    */
/* ---------------------------------------------------------------------- */

enum agent_step agent_route(const struct agent_state *st,
                            enum agent_step step, enum agent_outcome out)
{
    int attempts_left = st->ans->nattempts < st->ag->cfg.max_attempts;

    if (out == OUT_FATAL)
        return STEP_FAIL;
    switch (step) {
    case STEP_SCHEMA:
        return STEP_GENERATE;
    case STEP_GENERATE:
        if (out == OUT_OK)
            return STEP_VALIDATE;
        return attempts_left ? STEP_REPAIR : STEP_FAIL;
    case STEP_VALIDATE:
        if (out == OUT_OK)
            return st->ag->cfg.dry_run ? STEP_DONE : STEP_EXECUTE;
        return attempts_left ? STEP_REPAIR : STEP_FAIL;
    case STEP_EXECUTE:
        if (out == OUT_OK)
            return STEP_DONE;
        if (out == OUT_EMPTY)
            return st->empty_seen == 1 && attempts_left ? STEP_REPAIR
                                                        : STEP_DONE;
        return attempts_left ? STEP_REPAIR : STEP_FAIL;
    case STEP_REPAIR:
        return STEP_GENERATE;
    case STEP_DONE:
    case STEP_FAIL:
        break;
    }
    return STEP_FAIL;
}

const char *agent_step_name(enum agent_step step)
{
    static const char *const names[] = {
        "schema", "generate", "validate", "execute", "repair", "done", "fail"
    };
    return names[step];
}

/* ---------------------------------------------------------------------- */
/* Finishing an answer                                                    */
/* ---------------------------------------------------------------------- */

/* Move the outcome of the run into the answer. */
static void finish(struct agent_state *st, enum agent_step last)
{
    askdb_answer *a = st->ans;
    askdb_attempt *at = cur_attempt(st);
    struct buf b;
    int i;

    if (last == STEP_DONE) {
        a->status = ASKDB_OK;
        a->sql = st->sql;
        st->sql = NULL;
        a->result = st->result;
        st->result = NULL;
        if (!a->result && !st->ag->cfg.dry_run) {
            /* The first empty result, and no attempt left to retry it. */
            a->result = st->fallback;
            st->fallback = NULL;
        }
        /* The accepted attempt has no error, unless it is an empty result
        ** that stands: eval reports that class. */
        if (at && !(a->result && a->result->nrows == 0)) {
            at->error = ASKDB_EC_NONE;
            free(at->message);
            at->message = NULL;
        }
        return;
    }
    if (st->fatal == ASKDB_OK && st->fallback) {
        /* Attempts ran out after a valid empty result: it stands. */
        a->status = ASKDB_OK;
        a->sql = st->fallback_sql;
        st->fallback_sql = NULL;
        a->result = st->fallback;
        st->fallback = NULL;
        return;
    }
    a->status = st->fatal ? st->fatal : ASKDB_ERR_NO_SQL;
    buf_init(&b, 0);
    if (st->fatal)
        buf_puts(&b, st->errbuf);
    else
        buf_printf(&b, "no valid SQL after %d attempt%s", a->nattempts,
                   a->nattempts == 1 ? "" : "s");
    for (i = 0; !st->fatal && i < a->nattempts; i++)
        buf_printf(&b, "\n  attempt %d: %s: %s", i + 1,
                   askdb_error_class_str(a->attempts[i].error),
                   a->attempts[i].message ? a->attempts[i].message : "");
    a->error = buf_steal(&b);
}

static void state_free(struct agent_state *st)
{
    int i;

    for (i = 0; i < st->nmsgs; i++)
        free(st->owned[i]);
    free(st->reply);
    free(st->sql);
    free(st->fallback_sql);
    askdb_result_free(st->result);
    askdb_result_free(st->fallback);
}

/* ---------------------------------------------------------------------- */
/* Public API                                                             */
/* ---------------------------------------------------------------------- */

askdb_status askdb_agent_new(const askdb_config *cfg, const char *db_path,
                             askdb_agent **out)
{
    askdb_agent *ag;
    askdb_status rc;
    const char *err;

    *out = NULL;
    ag = calloc(1, sizeof *ag);
    if (!ag)
        return ASKDB_ERR_NOMEM;
    *out = ag;
    ag->cfg = cfg ? *cfg : askdb_config_default();
    if (ag->cfg.max_attempts < 1)
        ag->cfg.max_attempts = 1;
    rc = askdb_db_open(db_path, &ag->cfg, &ag->db);
    if (rc) {
        snprintf(ag->errmsg, sizeof ag->errmsg, "%s",
                 askdb_db_errmsg(ag->db));
        return rc;
    }
    rc = llm_new(&ag->cfg, &ag->model, ag->errmsg, sizeof ag->errmsg);
    if (rc)
        return rc;
    if (ag->cfg.trace_path) {
        ag->trace = trace_open(ag->cfg.trace_path, &err);
        if (!ag->trace) {
            snprintf(ag->errmsg, sizeof ag->errmsg,
                     "cannot open trace file '%s': %s", ag->cfg.trace_path,
                     err);
            return ASKDB_ERR_IO;
        }
    }
    return ASKDB_OK;
}

void askdb_agent_free(askdb_agent *ag)
{
    if (!ag)
        return;
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

askdb_db *askdb_agent_db(askdb_agent *ag)
{
    return ag->db;
}

askdb_status askdb_agent_ask(askdb_agent *ag, const char *question,
                             askdb_answer **out)
{
    return askdb_agent_ask_hint(ag, question, NULL, out);
}

askdb_status askdb_agent_ask_hint(askdb_agent *ag, const char *question,
                                  const char *hint, askdb_answer **out)
{
    struct agent_state st;
    enum agent_step step = STEP_SCHEMA, next;
    enum agent_outcome o = OUT_FATAL;
    double t0 = db_now_ms();
    askdb_answer *a;
    json_t *ev;

    *out = NULL;
    a = calloc(1, sizeof *a);
    if (!a)
        return ASKDB_ERR_NOMEM;
    *out = a;
    memset(&st, 0, sizeof st);
    st.ag = ag;
    st.question = question;
    st.hint = hint;
    st.ans = a;
    ev = json_pack("{s:s?}", "question", question);
    if (hint && *hint)
        jsonx_set_str(ev, "hint", hint);
    trace_write(ag->trace, "question", ev);

    while (step != STEP_DONE && step != STEP_FAIL) {
        switch (step) {
        case STEP_SCHEMA: o = agent_step_schema(&st); break;
        case STEP_GENERATE: o = agent_step_generate(&st); break;
        case STEP_VALIDATE: o = agent_step_validate(&st); break;
        case STEP_EXECUTE: o = agent_step_execute(&st); break;
        case STEP_REPAIR: o = agent_step_repair(&st); break;
        case STEP_DONE:
        case STEP_FAIL:
            break;
        }
        next = agent_route(&st, step, o);
        step = next;
    }
    finish(&st, step);
    state_free(&st);
    a->t.total_ms = db_now_ms() - t0;
    snprintf(ag->errmsg, sizeof ag->errmsg, "%s", a->error ? a->error : "");
    trace_write(ag->trace, "answer",
                json_pack("{s:s, s:s?, s:i, s:f, s:I, s:I}", "status",
                          askdb_status_str(a->status), "sql", a->sql,
                          "attempts", a->nattempts, "total_ms", a->t.total_ms,
                          "prompt_tokens", (json_int_t)a->prompt_tokens,
                          "completion_tokens",
                          (json_int_t)a->completion_tokens));
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
    free(a);
}
