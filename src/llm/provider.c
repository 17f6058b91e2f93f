/* provider.c - what the HTTP providers share (see provider.h). */
#include "llm/provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"

#define TEXT_MAX HTTP_MAX_REPLY
#define ERROR_MAX 1024

/*
** Check cfg for the HTTP API s (see llm_http_new) and create its client.
** Returns ASKDB_OK, ASKDB_ERR_USAGE, ASKDB_ERR_NOMEM or
** ASKDB_ERR_UNSUPPORTED with the reason in err. *out is the caller's
** (http_client_free).
*/
static askdb_status http_open(const askdb_config *cfg,
                              const struct llm_http_api *s,
                              struct http_client **out, char *err,
                              size_t errlen)
{
    struct http_config hc;
    char *url = NULL, *shown = NULL;
    const char *key = cfg->api_key && *cfg->api_key ? cfg->api_key : NULL;
    const char *hint;
    askdb_status rc = ASKDB_ERR_USAGE;

    *out = NULL;
    /* The URL was checked by llm_new() (llm_check()). */
    url = http_endpoint(cfg->llm_url, s->default_base, s->root, s->suffix);
    shown = url ? http_url_shown(url) : NULL;
    if (!shown) {
        rc = ASKDB_ERR_NOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (!cfg->model || !*cfg->model) {
        int gguf = text_ends_nocase(getenv("ASKDB_MODEL"), ".gguf");
        snprintf(err, errlen, "no model name given for the %s endpoint %s: "
                              "pass --model NAME or set ASKDB_MODEL%s",
                 s->what, shown, gguf ? " (it names a .gguf file, the "
                 "local model's, which a URL given as a flag overrules)"
                 : "");
        goto out;
    }
    /* The vendor's own variable is read only for its hosts (config.c):
    ** elsewhere, naming it would send the user to a key never sent. */
    hint = !s->key_domain || text_url_host_is(url, s->key_domain)
               ? s->key_hint
               : "--api-key or ASKDB_API_KEY";
    if (key && strpbrk(key, "\r\n")) {
        snprintf(err, errlen, "the API key contains a line break (check %s)",
                 hint);
        goto out;
    }
    memset(&hc, 0, sizeof hc);
    hc.url = url;
    hc.model = cfg->model;
    hc.key = key;
    hc.key_hint = hint;
    hc.not_found_hint = s->not_found_hint;
    hc.timeout_ms = cfg->llm_timeout_ms;
    hc.retries = cfg->llm_retries;
    hc.log_fn = cfg->log_fn;
    hc.log_ud = cfg->log_ud;
    rc = http_client_new(&hc, out, err, errlen);
out:
    free(url);
    free(shown);
    return rc;
}

/* Start an empty reply from h; on_token is used only when stream is
** set. */
static void acc_init(struct llm_acc *a, const struct llm_request *req,
                  int stream, const struct http_client *h)
{
    memset(a, 0, sizeof *a);
    a->http = h;
    buf_init(&a->text, TEXT_MAX);
    buf_init(&a->error, ERROR_MAX);
    a->on_token = stream ? req->on_token : NULL;
    a->token_ud = req->token_ud;
    a->prompt_tokens = -1;
    a->completion_tokens = -1;
}

int llm_blank(const char *data, size_t len)
{
    size_t i;

    for (i = 0; i < len; i++)
        if (data[i] != ' ' && data[i] != '\t' && data[i] != '\n' &&
            data[i] != '\r')
            return 0;
    return 1;
}

void llm_acc_end(struct llm_acc *a, const char *field, const char *why)
{
    size_t n = why ? strlen(why) : 0;

    if (n && n < 24 && strspn(why, "abcdefghijklmnopqrstuvwxyz_") == n)
        snprintf(a->end, sizeof a->end, "%s \"%s\"", field, why);
}

int llm_acc_delivered(void *acc)
{
    const struct llm_acc *a = acc;

    /* Text goes to on_token as it comes: with any, it has been shown.
    ** With no on_token (none given, or no stream asked for: the server
    ** streamed unasked) it has reached no one, and another try is as
    ** safe as before any text came. */
    return a->on_token && a->text.len > 0;
}

void llm_acc_restart(void *acc)
{
    struct llm_acc *a = acc;

    buf_reset(&a->text);
    buf_reset(&a->error);
    a->prompt_tokens = -1;
    a->completion_tokens = -1;
    a->got_text = 0;
    a->ended = 0;
    a->cut = 0;
    a->end[0] = '\0';
}

int llm_acc_ended(void *acc)
{
    const struct llm_acc *a = acc;

    /* An in-band error ends the stream too: it is the answer to report. */
    return a->ended || a->error.len > 0;
}

void llm_acc_text(struct llm_acc *a, const char *s, size_t n)
{
    const char *nul;
    size_t k;

    a->got_text = 1;
    /* A NUL ("\u0000" in JSON) would end the text where C reads it:
    ** it stays visible as U+FFFD, and the SQL around it is checked whole. */
    while (n > 0) {
        nul = memchr(s, '\0', n);
        k = nul ? (size_t)(nul - s) : n;
        if (k) {
            buf_append(&a->text, s, k);
            if (a->on_token && !buf_err(&a->text))
                a->on_token(a->token_ud, s, k);
        }
        if (!nul)
            break;
        buf_puts(&a->text, TEXT_REPLACEMENT);
        if (a->on_token && !buf_err(&a->text))
            a->on_token(a->token_ud, TEXT_REPLACEMENT,
                        sizeof TEXT_REPLACEMENT - 1);
        s += k + 1;
        n -= k + 1;
    }
}

void llm_acc_error(struct llm_acc *a, const json_t *err)
{
    const char *msg = jsonx_str(err, "message");
    const char *type = jsonx_str(err, "type");

    if (a->error.len)
        return;
    if (!msg && json_is_string(err))
        msg = json_string_value(err);
    if (type && *type) {
        http_put_message(a->http, &a->error, type, strlen(type));
        buf_puts(&a->error, ": ");
    }
    msg = msg && *msg ? msg : "(no message)";
    http_put_message(a->http, &a->error, msg, strlen(msg));
}

/* Free a's buffers (acc_finish does this itself). */
static void acc_free(struct llm_acc *a)
{
    buf_free(&a->text);
    buf_free(&a->error);
}

/*
** Whether a reply ended as one does that is done ("stop", "end_turn",
** "stop_sequence"): with no text it is an empty reply (as OpenAI's
** content "" in a body always was), which the agent asks again for, not
** an error of the model that ends the question. A stream with no text
** delta and Anthropic's content [] end so.
*/
static int ended_normally(const char *end)
{
    return strcmp(end, "finish_reason \"stop\"") == 0 ||
           strcmp(end, "stop_reason \"end_turn\"") == 0 ||
           strcmp(end, "stop_reason \"stop_sequence\"") == 0;
}

/*
** Finish: on success move the text into out (out->text is the caller's)
** with the token counts and whether it was cut at max_tokens (a cut
** text may be empty). Fails with ASKDB_ERR_LLM when an in-band error was
** noted or no text arrived in a reply not cut (`where` names the field,
** for the message), ASKDB_ERR_NOMEM when the text did not fit. The
** message goes to err, the key redacted. Frees a's buffers either way.
*/
static askdb_status acc_finish(struct llm_acc *a, struct http_client *h,
                               const char *where, struct llm_reply *out,
                               char *err, size_t errlen)
{
    askdb_status rc = ASKDB_ERR_LLM;
    char after[32] = "";

    if (a->error.len) {
        if (out->retries > 0)
            snprintf(after, sizeof after, " after %d %s", out->retries,
                     out->retries == 1 ? "retry" : "retries");
        http_set_error(h, err, errlen, "model endpoint %s reported an "
                                       "error%s: %s", http_url(h), after,
                       a->error.data);
        goto out;
    }
    if (buf_err(&a->text) == BUF_ENOMEM) {
        rc = ASKDB_ERR_NOMEM;
        http_set_error(h, err, errlen, "out of memory reading the reply "
                                       "from %s", http_url(h));
        goto out;
    }
    if (buf_err(&a->text)) {
        http_set_error(h, err, errlen, "the reply text from %s is larger "
                                       "than %u MiB", http_url(h),
                       TEXT_MAX >> 20);
        goto out;
    }
    /* A reply stopped at max_tokens before any text (a reasoning model
    ** that spent them all thinking: vLLM's content is null then, its
    ** thoughts in reasoning_content; a stream sends no text delta) is a
    ** cut reply, whose message says to raise --max-tokens. */
    if (!a->got_text && !a->cut && !ended_normally(a->end)) {
        /* Why it ended says what came instead: "tool_calls",
        ** "content_filter", "refusal". */
        http_set_error(h, err, errlen, "model endpoint %s: reply had no "
                                       "content (%s is missing or null%s%s)",
                       http_url(h), where, a->end[0] ? "; it ended with " : "",
                       a->end);
        goto out;
    }
    out->text = buf_steal(&a->text);
    if (!out->text) {
        rc = ASKDB_ERR_NOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    out->prompt_tokens = a->prompt_tokens;
    out->completion_tokens = a->completion_tokens;
    out->cut = a->cut ? LLM_CUT_MAX_TOKENS : LLM_CUT_NONE;
    rc = ASKDB_OK;
out:
    acc_free(a);
    return rc;
}

/*
** Read a whole stream of server-sent events (body, len bytes) into a, as
** a streamed reply is read. Returns ASKDB_OK, or ASKDB_ERR_LLM with the
** message in err: an event that cannot be read, a line too long, no end
** marker.
*/
static askdb_status read_events(const struct llm_http_api *api,
                                struct http_client *h, struct llm_acc *a,
                                const char *body, size_t len, char *err,
                                size_t errlen)
{
    int r = http_sse_parse(body, len, NULL, 0, api->on_event, a);

    if (r == HTTP_EVENT_BAD) {
        http_set_error(h, err, errlen, "model at %s sent a streamed event "
                                       "that is not valid JSON", http_url(h));
        return ASKDB_ERR_LLM;
    }
    if (r < 0) {
        http_set_error(h, err, errlen, "the streamed reply from %s has a "
                                       "line or event larger than %u MiB (or "
                                       "memory ran out)",
                       http_url(h), HTTP_MAX_REPLY >> 20);
        return ASKDB_ERR_LLM;
    }
    if (!a->ended && !a->error.len) {
        http_set_error(h, err, errlen, "model at %s ended its streamed reply "
                                       "without the end marker (the reply "
                                       "was cut off)", http_url(h));
        return ASKDB_ERR_LLM;
    }
    return ASKDB_OK;
}

/* Whether body (len bytes) begins with what, after white space. */
static int starts_with(const char *body, size_t len, const char *what)
{
    size_t i = 0, k = strlen(what);

    while (i < len && llm_blank(body + i, 1))
        i++;
    return len - i >= k && memcmp(body + i, what, k) == 0;
}

/* Whether a body is server-sent events: its first line is a field or a
** comment (a server that streams, labelled application/json). */
static int looks_like_sse(const char *body, size_t len)
{
    return starts_with(body, len, "data:") ||
           starts_with(body, len, "event:") || starts_with(body, len, ":");
}

/*
** Read a whole (non-streamed) reply body into a: a JSON object, or the
** server-sent events of a server that streamed it under an
** application/json label (read as a stream is, end marker included; a
** request reads such events as they come, http_post.on_event, so only
** llm_http_parse_reply() finds them here).
** Returns ASKDB_OK, or ASKDB_ERR_LLM with the message in err. Only a body
** that is not JSON at all (an HTML page) is told to check --llm-url;
** JSON that does not parse (invalid UTF-8) or is not an object says so.
*/
static askdb_status read_whole(const struct llm_http_api *api,
                               struct http_client *h, struct llm_acc *a,
                               const char *body, size_t len, char *err,
                               size_t errlen)
{
    json_error_t e;
    json_t *root;
    struct buf m;

    if (looks_like_sse(body, len))
        return read_events(api, h, a, body, len, err, errlen);
    root = json_loadb(body, len, JSON_ALLOW_NUL, &e);
    if (json_is_object(root)) {
        api->read_body(a, root);
        json_decref(root);
        return ASKDB_OK;
    }
    buf_init(&m, 1024);
    buf_printf(&m, "model endpoint %s: reply is ", http_url(h));
    if (root) {
        buf_puts(&m, "JSON but not an object");
    } else if (starts_with(body, len, "{") || starts_with(body, len, "[")) {
        buf_puts(&m, "not valid JSON (");
        http_put_message(h, &m, e.text, strlen(e.text));
        buf_printf(&m, ", at byte %d)", e.position);
    } else {
        buf_puts(&m, "not a JSON object");
    }
    if (len) {
        buf_puts(&m, ": ");
        http_put_message(h, &m, body, len);
    }
    if (!root && !starts_with(body, len, "{") && !starts_with(body, len, "["))
        buf_puts(&m, " (is --llm-url the model API's base URL?)");
    http_set_error(h, err, errlen, "%s",
                   m.data && !buf_err(&m) ? m.data : "bad reply");
    buf_free(&m);
    json_decref(root);
    return ASKDB_ERR_LLM;
}

askdb_status llm_http_parse_reply(const struct llm_http_api *api,
                                  struct http_client *h, int stream,
                                  const char *body, size_t len,
                                  struct llm_reply *out, char *err,
                                  size_t errlen)
{
    struct llm_request req;
    struct llm_acc acc;
    askdb_status rc;

    memset(&req, 0, sizeof req);
    out->retries = 0;
    acc_init(&acc, &req, stream, h);
    if (stream)
        rc = read_events(api, h, &acc, body, len, err, errlen);
    else
        rc = read_whole(api, h, &acc, body, len, err, errlen);
    if (rc == ASKDB_OK)
        rc = acc_finish(&acc, h, api->where, out, err, errlen);
    acc_free(&acc);
    return rc;
}

askdb_status llm_http_complete(llm *m, const struct llm_request *req,
                               struct llm_reply *out)
{
    struct llm_http *p = (struct llm_http *)m;
    const struct llm_http_api *api = p->api;
    const char *headers[3];
    struct http_post post;
    struct http_reply hr;
    struct llm_acc acc;
    json_t *body = NULL;
    char *text = NULL;
    askdb_status rc = ASKDB_ERR_NOMEM;
    int nh = 0;

    if (api->fixed_header)
        headers[nh++] = api->fixed_header;
    if (p->key_header)
        headers[nh++] = p->key_header;
    headers[nh] = NULL;
again:
    acc_init(&acc, req, p->stream, p->http);
    body = api->make_body(p, req);
    text = body ? jsonx_dump(body) : NULL;
    if (!text) {
        snprintf(m->errmsg, sizeof m->errmsg, "out of memory building the "
                                              "request");
        goto out;
    }
    memset(&post, 0, sizeof post);
    post.body = text;
    post.len = strlen(text);
    post.headers = headers;
    post.stream = p->stream;
    post.on_event = api->on_event;   /* events come unasked, too */
    post.ended = llm_acc_ended;
    post.delivered = llm_acc_delivered;
    post.restart = llm_acc_restart;
    post.ud = &acc;
    post.cancel = req->cancel;
    rc = http_post_json(p->http, &post, &hr, m->errmsg, sizeof m->errmsg);
    out->http_status = hr.status;
    out->retries += hr.retries;
    /* A parameter the model does not take, left out of this request and
    ** every later one (at most once each: adapt() says no after). */
    if (rc == ASKDB_ERR_LLM && hr.status == 400 && hr.body && api->adapt &&
        api->adapt(p, hr.body, hr.len)) {
        acc_free(&acc);
        json_decref(body);
        free(text);
        body = NULL;
        text = NULL;
        goto again;
    }
    if (rc)
        goto out;
    if (!hr.streamed) {
        rc = read_whole(api, p->http, &acc, hr.body, hr.len, m->errmsg,
                        sizeof m->errmsg);
        if (rc)
            goto out;
    }
    rc = acc_finish(&acc, p->http, api->where, out, m->errmsg,
                    sizeof m->errmsg);
out:
    acc_free(&acc);
    json_decref(body);
    free(text);
    return rc;
}

void llm_http_destroy(llm *m)
{
    struct llm_http *p = (struct llm_http *)m;

    http_client_free(p->http);
    free(p->key_header);
    free(p);
}

askdb_status llm_http_new(const askdb_config *cfg,
                          const struct llm_http_api *api, llm **out,
                          char *err, size_t errlen)
{
    struct llm_http *p = NULL;
    struct buf hdr;
    askdb_status rc = ASKDB_ERR_NOMEM;

    *out = NULL;
    buf_init(&hdr, 0);
    p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    p->base.vt = &api->vt;
    p->api = api;
    p->model = cfg->model;
    p->stream = cfg->stream != 0;
    p->max_tokens = cfg->max_tokens > 0 ? cfg->max_tokens : 512;
    rc = http_open(cfg, api, &p->http, err, errlen);
    if (rc)
        goto out;
    if (cfg->api_key && *cfg->api_key) {
        buf_puts(&hdr, api->key_header);
        buf_puts(&hdr, cfg->api_key);
        p->key_header = buf_steal(&hdr);
        if (!p->key_header) {
            rc = ASKDB_ERR_NOMEM;
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    *out = &p->base;
    p = NULL;
out:
    buf_free(&hdr);
    if (p)
        llm_http_destroy(&p->base);
    return rc;
}

int llm_http_max_tokens(const struct llm_http *p,
                        const struct llm_request *req)
{
    return req->max_tokens > 0 ? req->max_tokens : p->max_tokens;
}

int llm_http_put_stop(json_t *body, const char *key,
                      const struct llm_request *req)
{
    json_t *stop;
    int i, bad = 0;

    if (!req->stop || !req->stop[0])
        return 0;
    stop = json_array();
    bad |= json_object_set_new(body, key, stop) != 0;
    for (i = 0; !bad && req->stop[i]; i++)
        bad |= json_array_append_new(stop, json_string(req->stop[i])) != 0;
    return bad;
}
