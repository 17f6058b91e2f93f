/* agent.c - the core steps that answer a question, the router, and the API. */
#include "agent/agent.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/check.h"
#include "agent/hint.h"
#include "agent/memory.h"
#include "agent/prompt.h"
#include "agent/values.h"
#include "core/json.h"
#include "core/text.h"
#include "eval/compare.h"
#include "sql/extract.h"
#include "sql/grammar.h"

/* ---------------------------------------------------------------------- */
/* Small helpers shared by the step files                                 */
/* ---------------------------------------------------------------------- */

/* Verbose log line for a step (only when the embedder asked for it). */
void agent_log(struct agent_state *st, const char *step, const char *fmt,
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

/* Append a message; content is taken over (freed with the state) and made
** valid UTF-8 (it may quote the user's data). */
int agent_push_msg(struct agent_state *st, const char *role, char *content)
{
    content = text_repair(content);
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

enum agent_outcome agent_nomem(struct agent_state *st)
{
    st->fatal = ASKDB_ERR_NOMEM;
    snprintf(st->errbuf, sizeof st->errbuf, "out of memory");
    return OUT_FATAL;
}

/* Count a reply in the answer's totals. */
static void count_reply(askdb_answer *a, const struct llm_reply *rep)
{
    a->llm_calls++;
    a->t.llm_ms += rep->ms;
    if (rep->prompt_tokens > 0)
        a->prompt_tokens += rep->prompt_tokens;
    if (rep->completion_tokens > 0)
        a->completion_tokens += rep->completion_tokens;
}

/* The reply's figures as a trace event (consumes nothing). */
static json_t *reply_event(const struct llm_reply *rep, const char *text)
{
    json_t *ev = json_object();

    jsonx_set_str(ev, "reply", text);
    json_object_set_new(ev, "ms", json_real(rep->ms));
    json_object_set_new(ev, "prompt_tokens", json_integer(rep->prompt_tokens));
    json_object_set_new(ev, "completion_tokens",
                        json_integer(rep->completion_tokens));
    json_object_set_new(ev, "retries", json_integer(rep->retries));
    if (rep->ttft_ms > 0)
        json_object_set_new(ev, "ttft_ms", json_real(rep->ttft_ms));
    if (rep->cached_tokens > 0)
        json_object_set_new(ev, "cached_tokens",
                            json_integer(rep->cached_tokens));
    if (rep->load_ms > 0)
        json_object_set_new(ev, "load_ms", json_real(rep->load_ms));
    if (rep->file_tokens > 0)
        json_object_set_new(ev, "file_tokens",
                            json_integer(rep->file_tokens));
    if (rep->file_saved)
        json_object_set_new(ev, "file_saved", json_true());
    return ev;
}

static json_t *msgs_json(const struct llm_msg *msgs, int n)
{
    json_t *arr = json_array();
    int i;

    for (i = 0; i < n; i++) {
        json_t *m = json_object();
        json_object_set_new(m, "role", json_string(msgs[i].role));
        jsonx_set_str(m, "content", msgs[i].content);
        json_array_append_new(arr, m);
    }
    return arr;
}

/*
** Mark the request's stable prefix (llm.h) when its first two messages
** start as the question's do - system prompt, then the whole schema - so
** that the local model keeps or finds it in a prompt-cache file, whichever
** call of the question comes first (question check, plan, generate).
*/
static void mark_stable(const struct agent_state *st, struct llm_request *req)
{
    size_t n;

    if (st->part_schema || st->nmsgs < 2 || req->nmsgs < 2 ||
        strcmp(req->msgs[0].content, st->msgs[0].content) != 0)
        return;
    n = prompt_question_stable(&st->parts);
    if (strncmp(req->msgs[1].content, st->msgs[1].content, n) != 0)
        return;
    req->stable_msgs = 1;
    req->stable_bytes = n;
}

char *agent_call(struct agent_state *st, const char *what,
                 const struct llm_msg *msgs, int nmsgs, const char *grammar,
                 int max_tokens, askdb_status *rc)
{
    askdb_agent *ag = st->ag;
    struct llm_request req;
    struct llm_reply rep;
    json_t *ev;
    char *text;

    memset(&req, 0, sizeof req);
    req.msgs = msgs;
    req.nmsgs = nmsgs;
    req.temperature = 0;
    req.max_tokens = max_tokens;
    req.seed = ag->cfg.seed;
    req.grammar = grammar;
    mark_stable(st, &req);
    ev = json_object();
    json_object_set_new(ev, "for", json_string(what));
    json_object_set_new(ev, "provider", json_string(llm_name(ag->model)));
    json_object_set_new(ev, "messages", msgs_json(msgs, nmsgs));
    trace_write(ag->trace, "prompt", ev);

    memset(&rep, 0, sizeof rep);
    *rc = llm_complete(ag->model, &req, &rep);
    count_reply(st->ans, &rep);
    ev = reply_event(&rep, rep.text);
    json_object_set_new(ev, "for", json_string(what));
    if (*rc)
        jsonx_set_str(ev, "error", llm_errmsg(ag->model));
    trace_write(ag->trace, "reply", ev);
    if (*rc) {
        snprintf(st->errbuf, sizeof st->errbuf, "%s", llm_errmsg(ag->model));
        llm_reply_free(&rep);
        return NULL;
    }
    text = rep.text;
    rep.text = NULL;
    llm_reply_free(&rep);
    if (!text) {
        *rc = ASKDB_ERR_NOMEM;
        snprintf(st->errbuf, sizeof st->errbuf, "out of memory");
    }
    return text;
}

void agent_rows_text(struct buf *b, const askdb_result *r, long max_rows,
                     size_t max_cell)
{
    long i;
    int j;

    if (r->nrows == 0) {
        buf_puts(b, "(no rows)\n");
        return;
    }
    for (j = 0; j < r->ncols; j++) {
        const char *name = r->cols[j] ? r->cols[j] : "";
        buf_puts(b, j ? " | " : "");
        text_put(b, name, strlen(name), 0);
    }
    buf_putc(b, '\n');
    for (i = 0; i < r->nrows && i < max_rows; i++) {
        for (j = 0; j < r->ncols; j++) {
            const askdb_value *v = &r->cells[i * r->ncols + j];
            if (j)
                buf_puts(b, " | ");
            switch (v->type) {
            case ASKDB_NULL: buf_puts(b, "NULL"); break;
            case ASKDB_INTEGER: buf_printf(b, "%lld", (long long)v->i); break;
            case ASKDB_REAL: buf_printf(b, "%.10g", v->d); break;
            case ASKDB_TEXT: text_put(b, v->s, v->len, max_cell); break;
            case ASKDB_BLOB: buf_printf(b, "(%zu bytes)", v->len); break;
            }
        }
        buf_putc(b, '\n');
    }
    if (r->nrows > max_rows)
        buf_printf(b, "(%ld more rows not shown)\n", r->nrows - max_rows);
}

static askdb_attempt *cur_attempt(struct agent_state *st)
{
    askdb_answer *a = st->ans;

    return a->nattempts ? &a->attempts[a->nattempts - 1] : NULL;
}

/* The current statement is the attempt's (after a candidate was taken). */
static void record_sql(struct agent_state *st)
{
    askdb_attempt *at = cur_attempt(st);

    if (!at)
        return;
    free(at->sql);
    at->sql = st->sql ? strdup(st->sql) : NULL;
}

/* Record why the current attempt failed, in the attempt and the trace
** (msg NULL: a candidate's message lost to out of memory). */
static void fail_attempt(struct agent_state *st, askdb_error_class ec,
                         const char *msg)
{
    askdb_attempt *at = cur_attempt(st);
    json_t *ev;
    size_t n;

    if (!msg)
        msg = "failed";
    st->ec = ec;
    n = text_cut(msg, strlen(msg), sizeof st->errbuf - 1);
    memcpy(st->errbuf, msg, n);
    st->errbuf[n] = '\0';
    /* The attempt, the log and the trace show the message after its
    ** class ("refused: ..."): not twice. The model gets it whole. */
    n = strlen(askdb_error_class_str(ec));
    if (strncmp(msg, askdb_error_class_str(ec), n) == 0 &&
        strncmp(msg + n, ": ", 2) == 0)
        msg += n + 2;
    if (at) {
        at->error = ec;
        free(at->message);
        at->message = strdup(msg);
    }
    agent_log(st, "error", "%s: %s", askdb_error_class_str(ec), msg);
    ev = json_object();
    json_object_set_new(ev, "class", json_string(askdb_error_class_str(ec)));
    jsonx_set_str(ev, "message", msg);
    jsonx_set_str(ev, "sql", st->sql);
    trace_write(st->ag->trace, "error", ev);
}

static void cands_clear(struct agent_state *st)
{
    int i;

    for (i = 0; i < st->ncands; i++) {
        free(st->cands[i].reply);
        free(st->cands[i].sql);
        free(st->cands[i].err);
        askdb_result_free(st->cands[i].result);
    }
    memset(st->cands, 0, sizeof st->cands);
    st->ncands = 0;
}

static void cand_fail(struct agent_cand *c, askdb_error_class ec,
                      const char *msg)
{
    c->ec = ec;
    free(c->err);
    c->err = strdup(msg);
}

/* Make candidate i the current statement (st->sql, st->reply). */
static void take_cand(struct agent_state *st, int i)
{
    struct agent_cand *c = &st->cands[i];

    free(st->sql);
    st->sql = c->sql ? strdup(c->sql) : NULL;
    free(st->reply);
    st->reply = c->reply ? strdup(c->reply) : NULL;
}

/* Keep r (with sql) as the result that stands if later attempts fail;
** replaces an earlier fallback. Takes r over. */
static void keep_fallback(struct agent_state *st, const char *sql,
                          askdb_result *r)
{
    askdb_result_free(st->fallback);
    free(st->fallback_sql);
    st->fallback = r;
    st->fallback_sql = sql ? strdup(sql) : NULL;
    st->fallback_conf = st->ans->confidence;
}

/* ---------------------------------------------------------------------- */
/* Steps                                                                  */
/* ---------------------------------------------------------------------- */

/* Read the schema and build the grammar (first question only). */
enum agent_outcome agent_step_schema(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
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
    if (ag->schema_text)
        return OUT_OK;
    ag->schema_text = schema_render(st->schema);
    if (!ag->schema_text)
        return agent_nomem(st);
    /* Constrained decoding: the model can then only write one read-only
    ** statement over this database's own names. */
    if (llm_supports_grammar(ag->model) && !ag->cfg.no_grammar) {
        ag->grammar = sqlx_grammar(st->schema);
        if (!ag->grammar)
            return agent_nomem(st);
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
    agent_log(st, "schema", "%d tables, %zu bytes, %.2f ms",
              st->schema->ntables, strlen(ag->schema_text),
              st->ans->t.schema_ms);
    return OUT_OK;
}

/*
** Ask the model and take the statements out of its replies: one greedy
** candidate, plus cfg.candidates - 1 sampled ones on the first attempt
** (decoded together in one batch by the local model).
*/
enum agent_outcome agent_step_generate(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    askdb_answer *a = st->ans;
    struct llm_request req;
    struct llm_reply reps[AGENT_MAX_CANDS];
    askdb_attempt *at;
    const char *why;
    askdb_status rc;
    json_t *ev;
    int i, n = 1, nsql = 0;

    at = realloc(a->attempts, (size_t)(a->nattempts + 1) * sizeof *at);
    if (!at)
        return agent_nomem(st);
    a->attempts = at;
    at = &a->attempts[a->nattempts++];
    memset(at, 0, sizeof *at);
    if (a->nattempts == 1 && ag->cfg.candidates > 1)
        n = ag->cfg.candidates < AGENT_MAX_CANDS ? ag->cfg.candidates
                                                 : AGENT_MAX_CANDS;

    memset(&req, 0, sizeof req);
    req.msgs = st->msgs;
    req.nmsgs = st->nmsgs;
    req.temperature = ag->cfg.temperature;
    req.alt_temperature = ag->cfg.candidate_temperature;
    req.max_tokens = ag->cfg.max_tokens;
    req.seed = ag->cfg.seed;
    req.grammar = ag->grammar;
    req.on_token = ag->cfg.token_fn;
    req.token_ud = ag->cfg.token_ud;
    mark_stable(st, &req);

    ev = json_object();
    json_object_set_new(ev, "attempt", json_integer(a->nattempts));
    json_object_set_new(ev, "provider", json_string(llm_name(ag->model)));
    json_object_set_new(ev, "candidates", json_integer(n));
    json_object_set_new(ev, "messages", msgs_json(st->msgs, st->nmsgs));
    trace_write(ag->trace, "prompt", ev);
    agent_log(st, "generate", "attempt %d: asking %s (%d messages, %d "
              "candidate%s)", a->nattempts, llm_name(ag->model), st->nmsgs,
              n, n == 1 ? "" : "s");

    memset(reps, 0, sizeof reps);
    if (n == 1)
        rc = llm_complete(ag->model, &req, &reps[0]);
    else
        rc = llm_complete_n(ag->model, &req, n, reps);
    /* Its time once, its tokens summed over the candidates; the calls as
    ** the provider made them (one batch, or one call a reply). */
    a->llm_calls += n > 1 && !llm_batches_replies(ag->model) ? n : 1;
    a->t.llm_ms += reps[0].ms;
    at->llm_ms = reps[0].ms;
    for (i = 0; i < n; i++) {
        if (reps[i].prompt_tokens > 0)
            a->prompt_tokens += reps[i].prompt_tokens -
                                (i > 0 ? reps[i].cached_tokens : 0);
        if (reps[i].completion_tokens > 0)
            a->completion_tokens += reps[i].completion_tokens;
    }
    for (i = 0; i < n; i++) {
        ev = reply_event(&reps[i], reps[i].text);
        json_object_set_new(ev, "attempt", json_integer(a->nattempts));
        if (n > 1)
            json_object_set_new(ev, "candidate", json_integer(i + 1));
        if (rc && i == 0)
            jsonx_set_str(ev, "error", llm_errmsg(ag->model));
        trace_write(ag->trace, "reply", ev);
    }
    if (rc) {
        at->error = ASKDB_EC_LLM;
        at->message = strdup(llm_errmsg(ag->model));
        snprintf(st->errbuf, sizeof st->errbuf, "%s", llm_errmsg(ag->model));
        st->fatal = rc;
        for (i = 0; i < n; i++)
            llm_reply_free(&reps[i]);
        return OUT_FATAL;
    }
    agent_log(st, "generate", "reply in %.0f ms (%ld+%ld tokens)", reps[0].ms,
              reps[0].prompt_tokens, reps[0].completion_tokens);

    cands_clear(st);
    for (i = 0; i < n; i++) {
        struct agent_cand *c = &st->cands[st->ncands++];

        c->reply = reps[i].text;
        reps[i].text = NULL;
        llm_reply_free(&reps[i]);
        c->sql = c->reply ? sqlx_extract(c->reply, &why) : NULL;
        if (!c->sql)
            cand_fail(c, ASKDB_EC_NO_SQL, c->reply ? why : "empty reply");
        else
            nsql++;
    }
    if (n > a->ncandidates)
        a->ncandidates = n;
    take_cand(st, 0);
    if (!nsql) {
        fail_attempt(st, ASKDB_EC_NO_SQL, st->cands[0].err);
        return OUT_RETRY;
    }
    if (!st->sql) /* the greedy one had none: go on with the first that has */
        for (i = 1; i < n; i++)
            if (st->cands[i].sql) {
                take_cand(st, i);
                break;
            }
    at->sql = strdup(st->sql);
    agent_log(st, "generate", "SQL: %s", st->sql);
    return OUT_OK;
}

/* Check every candidate without running it: shape, then the engine's own
** prepare under the read-only guard. */
enum agent_outcome agent_step_validate(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct db_err e;
    char why[256], msg[320];
    double t0 = db_now_ms();
    int i, first_ok = -1;

    for (i = 0; i < st->ncands; i++) {
        struct agent_cand *c = &st->cands[i];

        if (!c->sql)
            continue;
        if (sqlx_check_readonly(c->sql, why, sizeof why)) {
            snprintf(msg, sizeof msg, "refused: %s", why);
            cand_fail(c, ASKDB_EC_REFUSED, msg);
        } else if (db_check(ag->db, c->sql, &e)) {
            cand_fail(c, e.ec, e.msg);
        } else if (first_ok < 0) {
            first_ok = i;
        }
    }
    st->ans->t.validate_ms += db_now_ms() - t0;
    if (first_ok < 0) {
        /* Repair the greedy candidate (or the first with SQL). */
        for (i = 0; i < st->ncands && !st->cands[i].sql; i++)
            ;
        if (i == st->ncands)
            i = 0;
        take_cand(st, i);
        fail_attempt(st, st->cands[i].ec,
                     st->cands[i].err ? st->cands[i].err : "invalid");
        return OUT_RETRY;
    }
    if (st->ncands > 1 || first_ok > 0) {
        json_t *ev = json_object(), *arr = json_array();
        for (i = 0; i < st->ncands; i++)
            json_array_append_new(
                arr, json_string(askdb_error_class_str(st->cands[i].ec)));
        json_object_set_new(ev, "ok", json_true());
        json_object_set_new(ev, "candidates", arr);
        trace_write(ag->trace, "validate", ev);
    } else {
        trace_write(ag->trace, "validate", json_pack("{s:b}", "ok", 1));
    }
    agent_log(st, "validate", "ok");
    return OUT_OK;
}

/*
** Group the executed candidates by identical results (the EX rules of
** eval/compare.c) and return the winner: most votes, non-empty results
** before empty ones, the earliest (greedy) candidate on a tie.
*/
static int vote(struct agent_state *st, int *nran)
{
    int i, j, best = -1;

    *nran = 0;
    for (i = 0; i < st->ncands; i++) {
        struct agent_cand *c = &st->cands[i];

        c->votes = 0;
        if (!c->result)
            continue;
        (*nran)++;
        for (j = 0; j < st->ncands; j++) {
            const struct agent_cand *d = &st->cands[j];
            if (d->result &&
                cmp_result_eq(c->result, d->result,
                              cmp_order_matters(c->sql)) == 1)
                c->votes++;
        }
    }
    for (i = 0; i < st->ncands; i++) {
        const struct agent_cand *c = &st->cands[i];
        if (!c->result)
            continue;
        if (best < 0) {
            best = i;
            continue;
        }
        if ((c->result->nrows > 0) != (st->cands[best].result->nrows > 0)) {
            if (c->result->nrows > 0)
                best = i;
            continue;
        }
        if (c->votes > st->cands[best].votes)
            best = i;
    }
    return best;
}

/* Run the candidates with the limits, vote, then check the winner. */
enum agent_outcome agent_step_execute(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct check_finding *f = NULL;
    struct db_err e;
    double t0 = db_now_ms();
    askdb_result *r;
    json_t *ev;
    int i, win, nran, rc, nf = 0, first_err = -1;

    for (i = 0; i < st->ncands; i++) {
        struct agent_cand *c = &st->cands[i];

        if (!c->sql || c->ec != ASKDB_EC_NONE)
            continue;
        r = NULL;
        if (db_run(ag->db, c->sql, &r, &e) == 0 && r->nrows == 0 &&
            r->truncated == 2) {
            /* Not empty: its first row alone is over the byte cap. */
            e.ec = ASKDB_EC_RUNTIME;
            snprintf(e.msg, sizeof e.msg, "the first row alone is larger "
                     "than the %zu-byte result cap (--max-bytes); select "
                     "fewer or shorter columns (length() or substr() of "
                     "long text)", db_max_bytes(ag->db));
            askdb_result_free(r);
            r = NULL;
        }
        if (!r) {
            cand_fail(c, e.ec, e.msg);
            if (first_err < 0)
                first_err = i;
            continue;
        }
        c->result = r;
    }
    st->ans->t.exec_ms += db_now_ms() - t0;
    win = vote(st, &nran);
    if (win < 0) {
        /* None ran: repair the first that failed running; the attempt
        ** records its SQL with its error. */
        i = first_err >= 0 ? first_err : 0;
        take_cand(st, i);
        record_sql(st);
        fail_attempt(st, st->cands[i].ec, st->cands[i].err);
        return OUT_RETRY;
    }
    take_cand(st, win);
    askdb_result_free(st->result);
    st->result = st->cands[win].result;
    st->cands[win].result = NULL;
    r = st->result;
    /* The share of all N candidates of the question: a repair asks for
    ** one, so what it gives has the support of 1 of N. */
    st->ans->confidence = (double)st->cands[win].votes /
                          st->ans->ncandidates;
    ev = json_object();
    json_object_set_new(ev, "rows", json_integer(r->nrows));
    json_object_set_new(ev, "truncated", json_integer(r->truncated));
    json_object_set_new(ev, "ms", json_real(r->exec_ms));
    if (st->ncands > 1) {
        json_t *votes = json_array();
        for (i = 0; i < st->ncands; i++)
            json_array_append_new(votes,
                                  json_integer(st->cands[i].result || i == win
                                               ? st->cands[i].votes : 0));
        json_object_set_new(ev, "candidate", json_integer(win + 1));
        json_object_set_new(ev, "votes", votes);
        json_object_set_new(ev, "ran", json_integer(nran));
        json_object_set_new(ev, "confidence",
                            json_real(st->ans->confidence));
    }
    trace_write(ag->trace, "execute", ev);
    agent_log(st, "execute", "%ld rows in %.2f ms%s", r->nrows, r->exec_ms,
              r->truncated ? " (truncated)" : "");
    record_sql(st);

    if (r->nrows == 0) {
        st->empty_seen++;
        /* Keep the first empty result: it stands if the retry fails. */
        if (!st->fallback) {
            keep_fallback(st, st->sql, r);
            st->result = NULL;
        }
        fail_attempt(st, ASKDB_EC_EMPTY, "the query returned no rows");
        return OUT_EMPTY;
    }

    /* Checks: a finding costs one repair; what the repair gives stands. */
    if (!ag->cfg.checks || st->check_repairs > 0)
        return OUT_OK;
    t0 = db_now_ms();
    rc = check_before(ag->db, st->schema, st->question, st->sql, &f, &nf);
    if (rc == 0 && nf == 0)
        rc = check_after(st->question, st->sql, r, &f, &nf);
    st->ans->t.validate_ms += db_now_ms() - t0;
    if (rc) /* out of memory: the result goes unchecked, and says so */
        trace_write(ag->trace, "check",
                    json_pack("{s:s}", "error", "out of memory"));
    if (nf == 0) {
        check_findings_free(f, nf);
        return OUT_OK;
    }
    ev = json_object();
    json_object_set_new(ev, "kind", json_string(check_kind_str(f[0].kind)));
    jsonx_set_str(ev, "hint", f[0].hint);
    trace_write(ag->trace, "check", ev);
    free(st->check_hint);
    st->check_hint = strdup(f[0].hint);
    st->check_repairs++;
    keep_fallback(st, st->sql, r);
    st->result = NULL;
    fail_attempt(st, ASKDB_EC_CHECK, f[0].hint);
    check_findings_free(f, nf);
    return OUT_RETRY;
}

/* Tell the model what went wrong and how to fix it. */
enum agent_outcome agent_step_repair(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct buf hint, msg;
    double t0 = db_now_ms();

    buf_init(&hint, 0);
    if (st->ec == ASKDB_EC_CHECK)
        buf_puts(&hint, "If the query is right after all, repeat it "
                        "unchanged.\n");
    else
        hint_write(&hint, st->schema, st->sql, st->ec, st->errbuf,
                   db_timeout_ms(ag->db));
    buf_init(&msg, 0);
    if (st->ec == ASKDB_EC_CHECK) {
        buf_puts(&msg, "This query ran, but its result looks wrong:\n```sql\n");
        buf_puts(&msg, st->sql ? st->sql : "");
        /* the whole hint: errbuf holds a copy cut to its size */
        buf_printf(&msg, "\n```\nProblem: %s\n%s",
                   st->check_hint ? st->check_hint : st->errbuf,
                   hint.data ? hint.data : "");
        buf_puts(&msg, "Write the corrected query, in a ```sql code "
                       "block.\n");
    } else {
        prompt_repair(&msg, st->sql, st->errbuf, hint.data);
    }
    buf_free(&hint);
    if (agent_push_msg(st, "assistant", strdup(st->reply ? st->reply : "")) ||
        agent_push_msg(st, "user", buf_steal(&msg)))
        return agent_nomem(st);
    st->ans->t.prompt_ms += db_now_ms() - t0;
    agent_log(st, "repair", "asking for a fix of: %s",
              askdb_error_class_str(st->ec));
    return OUT_OK;
}

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

enum agent_step agent_route(const struct agent_state *st,
                            enum agent_step step, enum agent_outcome out)
{
    const askdb_config *c = &st->ag->cfg;
    int attempts_left = st->ans->nattempts < c->max_attempts;
    /* The end of a run with a result: the answer step, if asked for. */
    enum agent_step finish_ok = c->answer && !c->dry_run ? STEP_ANSWER
                                                         : STEP_DONE;
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
    if (attempts_left)
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

int agent_use_fallback(const struct agent_state *st)
{
    if (!st->fallback || st->ag->cfg.dry_run)
        return 0;
    return !st->result ||
           (st->result->nrows == 0 && st->fallback->nrows > 0);
}

/* Move the outcome of the run into the answer. */
static void finish(struct agent_state *st, enum agent_step last)
{
    askdb_answer *a = st->ans;
    askdb_attempt *at = cur_attempt(st);
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
    cands_clear(st);
    free(st->reply);
    free(st->sql);
    free(st->check_hint);
    free(st->fallback_sql);
    free(st->plan_notes);
    free(st->part_schema);
    free(st->part_examples);
    free(st->part_history);
    free(st->part_values);
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
    if (ag->cfg.max_attempts > AGENT_MAX_ATTEMPTS)
        ag->cfg.max_attempts = AGENT_MAX_ATTEMPTS;
    rc = askdb_db_open(db_path, &ag->cfg, &ag->db);
    if (rc) {
        snprintf(ag->errmsg, sizeof ag->errmsg, "%s",
                 askdb_db_errmsg(ag->db));
        return rc;
    }
    rc = llm_new(&ag->cfg, &ag->model, ag->errmsg, sizeof ag->errmsg);
    if (rc)
        return rc;
    /* Auto: the ablation's 3 candidates gained 13 questions and lost 3 of
    ** 300 with the local model, which decodes them in one batch over one
    ** prompt; a provider without a batch pays a whole request for each. */
    if (ag->cfg.candidates < 1)
        ag->cfg.candidates = llm_batches_replies(ag->model) ? AGENT_AUTO_CANDS
                                                            : 1;
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
    enum agent_step step = STEP_SCHEMA;
    enum agent_outcome o = OUT_FATAL;
    double t0 = db_now_ms();
    askdb_answer *a;
    char *q = NULL, *h = NULL;
    int bad_hint = hint && !text_valid(hint, strlen(hint));
    json_t *ev;

    *out = NULL;
    a = calloc(1, sizeof *a);
    if (!a)
        return ASKDB_ERR_NOMEM;
    *out = a;
    /* Valid UTF-8 from here on: the question reaches every prompt, the
    ** trace and the conversation (a terminal may send Latin-1). */
    question = question ? question : "";
    if (!text_valid(question, strlen(question)))
        question = q = text_repair(strdup(question));
    if (bad_hint)
        hint = h = text_repair(strdup(hint));
    if (!question || (bad_hint && !h)) {
        free(q);
        free(h);
        snprintf(ag->errmsg, sizeof ag->errmsg, "out of memory");
        a->status = ASKDB_ERR_NOMEM;
        a->error = strdup("out of memory");
        return a->status;
    }
    memset(&st, 0, sizeof st);
    st.ag = ag;
    st.question = question;
    st.hint = hint;
    st.ans = a;
    ev = json_object();
    jsonx_set_str(ev, "question", st.question);
    if (hint && *hint)
        jsonx_set_str(ev, "hint", hint);
    trace_write(ag->trace, "question", ev);

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
    }
    finish(&st, step);
    state_free(&st);
    free(q);
    free(h);
    a->t.total_ms = db_now_ms() - t0;
    snprintf(ag->errmsg, sizeof ag->errmsg, "%s", a->error ? a->error : "");
    ev = json_pack("{s:s, s:o, s:i, s:f, s:I, s:I, s:i, s:f}", "status",
                   askdb_status_str(a->status), "sql", jsonx_string(a->sql),
                   "attempts",
                   a->nattempts, "total_ms", a->t.total_ms, "prompt_tokens",
                   (json_int_t)a->prompt_tokens, "completion_tokens",
                   (json_int_t)a->completion_tokens, "candidates",
                   a->ncandidates, "confidence", a->confidence);
    if (a->text)
        jsonx_set_str(ev, "text", a->text);
    trace_write(ag->trace, "answer", ev);
    if (a->status == ASKDB_OK && trace_failure(ag->trace)) {
        snprintf(ag->errmsg, sizeof ag->errmsg,
                 "cannot write trace file '%s': %s (the trace is incomplete)",
                 ag->cfg.trace_path, trace_failure(ag->trace));
        free(a->error);
        a->error = strdup(ag->errmsg);
        a->status = ASKDB_ERR_IO;
    }
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
    free(a);
}
