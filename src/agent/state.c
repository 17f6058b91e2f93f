/* state.c - the helpers every step uses on the question's state. */
#include "agent/state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"

int agent_max_attempts(const askdb_config *cfg)
{
    if (cfg->max_attempts < 1)
        return askdb_config_default().max_attempts;
    return cfg->max_attempts > AGENT_MAX_ATTEMPTS ? AGENT_MAX_ATTEMPTS
                                                  : cfg->max_attempts;
}

void agent_emit(askdb_agent *ag, askdb_event_type type, json_t *ev)
{
    agent_emit_result(ag, type, ev, NULL);
}

void agent_emit_result(askdb_agent *ag, askdb_event_type type, json_t *ev,
                       const askdb_result *r)
{
    askdb_event e;
    char *text;

    if (!ev)
        return;
    if (!ag->trace && !ag->cfg.event_fn) {
        json_decref(ev);
        return;
    }
    e.type = type;
    e.result = r;
    e.name = askdb_event_type_str(type);
    e.request_id = ag->request_id;
    e.t_ms = db_now_ms() - ag->q_t0;
    json_object_set_new(ev, "step", json_string(e.name));
    jsonx_set_str(ev, "request_id", ag->request_id);
    json_object_set_new(ev, "t_ms", json_real(e.t_ms));
    text = askdb_json_shorten_reals(
        json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER));
    json_decref(ev);
    if (!text)
        return;
    e.json = text;
    e.json_len = strlen(text);
    if (ag->cfg.event_fn)
        ag->cfg.event_fn(ag->cfg.event_ud, &e);
    trace_put(ag->trace, text, e.json_len);
    free(text);
}

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
static void agent_count_reply(askdb_answer *a, const struct llm_reply *rep)
{
    a->llm_calls++;
    a->t.llm_ms += rep->ms;
    if (rep->prompt_tokens > 0)
        a->prompt_tokens += rep->prompt_tokens;
    if (rep->completion_tokens > 0)
        a->completion_tokens += rep->completion_tokens;
}

/* The reply's figures as a trace event (consumes nothing). */
json_t *agent_reply_event(const struct llm_reply *rep, const char *text)
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
    if (rep->min_p >= 0)
        json_object_set_new(ev, "min_p", json_real(rep->min_p));
    if (rep->min_p_words >= 0)
        json_object_set_new(ev, "min_p_words", json_real(rep->min_p_words));
    if (rep->cached_tokens > 0)
        json_object_set_new(ev, "cached_tokens",
                            json_integer(rep->cached_tokens));
    if (rep->load_ms > 0)
        json_object_set_new(ev, "load_ms", json_real(rep->load_ms));
    if (rep->huge_mb > 0)
        json_object_set_new(ev, "huge_mb", json_real(rep->huge_mb));
    if (rep->file_tokens > 0)
        json_object_set_new(ev, "file_tokens",
                            json_integer(rep->file_tokens));
    if (rep->file_saved)
        json_object_set_new(ev, "file_saved", json_true());
    if (rep->shared_steps > 0)
        json_object_set_new(ev, "shared_steps",
                            json_integer(rep->shared_steps));
    if (rep->text_steps > 0)
        json_object_set_new(ev, "text_steps",
                            json_integer(rep->text_steps));
    if (rep->cut)
        json_object_set_new(ev, "cut", json_true());
    if (rep->cut == LLM_CUT_MAX_TOKENS)
        json_object_set_new(ev, "max_tokens_hit", json_true());
    if (rep->cut == LLM_CUT_CONTEXT)
        json_object_set_new(ev, "context_full", json_true());
    if (rep->settled)
        json_object_set_new(ev, "settled", json_true());
    if (rep->branch_tokens > 0)
        json_object_set_new(ev, "branch_tokens",
                            json_integer(rep->branch_tokens));
    return ev;
}

json_t *agent_msgs_json(const struct llm_msg *msgs, int n)
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
void agent_mark_stable(const struct agent_state *st, struct llm_request *req)
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
    req->scope = st->ag->scope;
}

const char *agent_cut_why(const struct agent_state *st, int cut, char *buf,
                          size_t n)
{
    int max = st->ag->cfg.max_tokens;

    if (cut == LLM_CUT_CONTEXT)
        snprintf(buf, n, "cut: the reply filled the local model's context "
                         "before it ended (the prompt left too little room: "
                         "a shorter question, or a database with fewer "
                         "tables and columns, leaves more)");
    else if (max > 0)
        snprintf(buf, n, "cut: the reply hit --max-tokens (%d) before it "
                         "ended", max);
    else
        snprintf(buf, n, "cut: the reply hit the provider's token limit "
                         "before it ended");
    return buf;
}

char *agent_call(struct agent_state *st, const char *what,
                 const struct llm_msg *msgs, int nmsgs, const char *grammar,
                 int max_tokens, int *cut, askdb_status *rc)
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
    req.cancel = &ag->cancel;
    req.grammar = grammar;
    req.sql_end = grammar && grammar == ag->grammar;
    agent_mark_stable(st, &req);
    ev = json_object();
    json_object_set_new(ev, "for", json_string(what));
    json_object_set_new(ev, "provider", json_string(llm_name(ag->model)));
    json_object_set_new(ev, "messages", agent_msgs_json(msgs, nmsgs));
    agent_emit(ag, ASKDB_EVENT_PROMPT, ev);

    memset(&rep, 0, sizeof rep);
    *rc = llm_complete(ag->model, &req, &rep);
    agent_count_reply(st->ans, &rep);
    ev = agent_reply_event(&rep, rep.text);
    json_object_set_new(ev, "for", json_string(what));
    if (*rc)
        jsonx_set_str(ev, "error", llm_errmsg(ag->model));
    agent_emit(ag, ASKDB_EVENT_REPLY, ev);
    if (*rc) {
        snprintf(st->errbuf, sizeof st->errbuf, "%s", llm_errmsg(ag->model));
        llm_reply_free(&rep);
        return NULL;
    }
    text = rep.text;
    rep.text = NULL;
    if (cut)
        *cut = rep.cut;
    llm_reply_free(&rep);
    if (!text) {
        *rc = ASKDB_ERR_NOMEM;
        snprintf(st->errbuf, sizeof st->errbuf, "out of memory");
    }
    return text;
}

char *agent_call_aside(struct agent_state *st, const char *what,
                       const char *instruction, const char *grammar,
                       int max_tokens, askdb_status *rc)
{
    struct llm_msg msgs[2];
    struct buf b;
    char *reply;

    buf_init(&b, 0);
    buf_puts(&b, st->msgs[1].content);
    buf_puts(&b, instruction);
    if (buf_err(&b)) {
        buf_free(&b);
        *rc = ASKDB_ERR_NOMEM;
        snprintf(st->errbuf, sizeof st->errbuf, "out of memory");
        return NULL;
    }
    msgs[0] = st->msgs[0];
    msgs[1].role = "user";
    msgs[1].content = b.data;
    reply = agent_call(st, what, msgs, 2, grammar, max_tokens, NULL, rc);
    buf_free(&b);
    return reply;
}

/* The most of a column's name agent_rows_text() shows (bytes): SQLite
** names an unaliased column by its expression's text, which the model
** wrote and may be huge; no name a query means to give is near it. */
#define AGENT_NAME_SHOWN 1024

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
        text_put(b, name, strlen(name), AGENT_NAME_SHOWN);
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

char *agent_text_kept(const char *text, const char *lead, const char *what)
{
    struct buf b;
    size_t len, i;

    if (!text)
        return NULL;
    len = strlen(text);
    if (len <= AGENT_TEXT_KEPT)
        return strdup(text);
    i = text_cut(text, len, AGENT_TEXT_KEPT);
    buf_init(&b, 0);
    buf_append(&b, text, i);
    buf_printf(&b, "\n%s[... %zu more bytes of this %s left out]", lead,
               len - i, what);
    return buf_steal(&b);
}

askdb_attempt *agent_cur_attempt(struct agent_state *st)
{
    askdb_answer *a = st->ans;

    return a->nattempts ? &a->attempts[a->nattempts - 1] : NULL;
}

/* The current statement is the attempt's (after a candidate was taken). */
void agent_record_sql(struct agent_state *st)
{
    askdb_attempt *at = agent_cur_attempt(st);

    if (!at)
        return;
    free(at->sql);
    at->sql = st->sql ? strdup(st->sql) : NULL;
}

/* Record why the current attempt failed, in the attempt and the trace
** (msg NULL: a candidate's message lost to out of memory). */
void agent_fail_attempt(struct agent_state *st, askdb_error_class ec,
                         const char *msg)
{
    askdb_attempt *at = agent_cur_attempt(st);
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
    agent_emit(st->ag, ASKDB_EVENT_ERROR, ev);
}

void agent_early_clear(struct agent_state *st)
{
    int i;

    for (i = 0; i < AGENT_MAX_CANDS; i++) {
        free(st->early[i].sql);
        askdb_result_free(st->early[i].result);
    }
    memset(st->early, 0, sizeof st->early);
}

void agent_cands_clear(struct agent_state *st)
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

void agent_cand_fail(struct agent_cand *c, askdb_error_class ec,
                      const char *msg)
{
    c->ec = ec;
    free(c->err);
    c->err = strdup(msg);
}

enum agent_outcome agent_db_failed(struct agent_state *st, int i)
{
    agent_take_cand(st, i);
    agent_record_sql(st);
    agent_fail_attempt(st, ASKDB_EC_DATABASE,
                       st->cands[i].err ? st->cands[i].err
                                        : "the database failed");
    st->fatal = ASKDB_ERR_DB;
    return OUT_FATAL;
}

int agent_db_failure(const struct agent_state *st)
{
    int i;

    for (i = 0; i < st->ncands; i++)
        if (st->cands[i].ec == ASKDB_EC_DATABASE)
            return i;
    return -1;
}

/* Make candidate i the current statement (st->sql, st->reply). */
void agent_take_cand(struct agent_state *st, int i)
{
    struct agent_cand *c = &st->cands[i];

    free(st->sql);
    st->sql = c->sql ? strdup(c->sql) : NULL;
    free(st->reply);
    st->reply = c->reply ? strdup(c->reply) : NULL;
}

/* Keep r (with sql) as the result that stands if later attempts fail;
** replaces an earlier fallback. Takes r over. */
void agent_keep_fallback(struct agent_state *st, const char *sql,
                          askdb_result *r)
{
    askdb_result_free(st->fallback);
    free(st->fallback_sql);
    st->fallback = r;
    st->fallback_sql = sql ? strdup(sql) : NULL;
    st->fallback_conf = st->ans->confidence;
    st->fallback_settled = st->ans->nsettled;
}

int agent_use_fallback(const struct agent_state *st)
{
    if (!st->fallback || st->ag->cfg.dry_run)
        return 0;
    return !st->result ||
           (st->result->nrows == 0 && st->fallback->nrows > 0);
}
