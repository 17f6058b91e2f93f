/* fake_llm: scripted stand-in for OpenAI/Anthropic chat endpoints that records what askdb sends, for the test-suite. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#include <jansson.h>
#include <microhttpd.h>

#define MAX_BODY ((size_t)8 * 1024 * 1024)
/* Long enough for slow sanitizer/valgrind clients, short enough that an
 * abandoned keep-alive connection does not hold the test-suite up. */
#define CONN_TIMEOUT_S 5u
#define SSE_PIECE_MAX 4u

enum api { API_NONE, API_OPENAI, API_ANTHROPIC };

struct req_ctx {
    char *buf;
    size_t len;
    size_t cap;
    bool too_large;
};

struct server {
    json_t *script;
    size_t cursor;
    unsigned long n_requests;
    FILE *log;
    pthread_mutex_t lock;
};

/* Set once shutdown starts so long delay_ms sleeps end early; otherwise
 * MHD_stop_daemon would wait for them to finish. */
static atomic_bool g_stopping;

/* ---- small helpers ---------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

static enum api classify_path(const char *url)
{
    if (ends_with(url, "/chat/completions"))
        return API_OPENAI;
    if (ends_with(url, "/messages"))
        return API_ANTHROPIC;
    return API_NONE;
}

static void sleep_ms_interruptible(long ms)
{
    while (ms > 0 && !atomic_load(&g_stopping)) {
        long step = ms < 20 ? ms : 20;
        struct timespec ts = { .tv_sec = 0, .tv_nsec = step * 1000000L };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        ms -= step;
    }
}

struct strbuf {
    char *p;
    size_t len;
    size_t cap;
    bool oom;
};

static void sb_append(struct strbuf *sb, const char *s, size_t n)
{
    if (sb->oom)
        return;
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 256;
        while (cap < sb->len + n + 1)
            cap *= 2;
        char *np = realloc(sb->p, cap);
        if (!np) {
            sb->oom = true;
            return;
        }
        sb->p = np;
        sb->cap = cap;
    }
    memcpy(sb->p + sb->len, s, n);
    sb->len += n;
    sb->p[sb->len] = '\0';
}

static void sb_puts(struct strbuf *sb, const char *s)
{
    sb_append(sb, s, strlen(s));
}

/* Steals obj. event may be NULL (OpenAI sends bare data lines). */
static void sb_sse(struct strbuf *sb, const char *event, json_t *obj)
{
    char *js = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
    json_decref(obj);
    if (!js) {
        sb->oom = true;
        return;
    }
    if (event) {
        sb_puts(sb, "event: ");
        sb_puts(sb, event);
        sb_puts(sb, "\n");
    }
    sb_puts(sb, "data: ");
    sb_puts(sb, js);
    sb_puts(sb, "\n\n");
    free(js);
}

/* ---- responses -------------------------------------------------------- */

static bool add_extra_headers(struct MHD_Response *resp, const json_t *headers)
{
    const char *key;
    json_t *val;

    if (!json_is_object(headers))
        return true;
    json_object_foreach((json_t *)headers, key, val) {
        char num[32];
        const char *v = NULL;
        if (json_is_string(val)) {
            v = json_string_value(val);
        } else if (json_is_integer(val)) {
            snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(val));
            v = num;
        }
        if (v && MHD_add_response_header(resp, key, v) != MHD_YES)
            return false;
    }
    return true;
}

static enum MHD_Result send_buf(struct MHD_Connection *conn, unsigned status,
                                const char *ctype, const char *body, size_t len,
                                const json_t *extra_headers)
{
    /* MUST_COPY keeps ownership simple: callers free their buffers. */
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    enum MHD_Result ret = MHD_NO;
    if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype) == MHD_YES &&
        add_extra_headers(resp, extra_headers))
        ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* ---- fault modes: how a scripted reply's bytes go out ------------------ */

/* A reply body handed out by deliver() (the response owns it). */
struct delivery {
    char *p;
    size_t len;     /* the whole body */
    size_t limit;   /* bytes actually sent (cut), <= len */
    bool error_end; /* after limit: drop the connection (no clean end) */
    long drip_ms;   /* > 0: one byte, then this long a pause */
};

static ssize_t deliver(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct delivery *d = cls;

    if (pos >= d->limit)
        return d->error_end ? MHD_CONTENT_READER_END_WITH_ERROR
                            : MHD_CONTENT_READER_END_OF_STREAM;
    if (atomic_load(&g_stopping))
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t n = d->limit - (size_t)pos < max ? d->limit - (size_t)pos : max;
    if (d->drip_ms > 0) {
        if (pos > 0)
            sleep_ms_interruptible(d->drip_ms);
        n = 1;
    }
    memcpy(buf, d->p + pos, n);
    return (ssize_t)n;
}

static void delivery_free(void *cls)
{
    struct delivery *d = cls;
    free(d->p);
    free(d);
}

/*
** Send body as the entry says: by default whole, with its Content-Length.
** "cut": N sends only the first N bytes; "framing" says how the body is
** delimited - "length" (a Content-Length for the whole body: a cut body
** is shorter than announced), "chunked" (no final chunk after a cut) or
** "close" (no length, no chunks: the end of the connection ends the
** body, so a cut looks complete to HTTP); "drip_ms": M sends one byte
** every M ms. Streams default to "chunked", other bodies to "length".
** "content_type" labels the body instead of ctype (a stream labelled
** application/json, as some servers send one).
*/
static enum MHD_Result send_faulty(struct MHD_Connection *conn, unsigned status,
                                   const char *ctype, const char *body, size_t len,
                                   const json_t *extra_headers, const json_t *entry,
                                   bool stream)
{
    const json_t *cut = json_object_get(entry, "cut");
    const json_t *framing = json_object_get(entry, "framing");
    const json_t *drip = json_object_get(entry, "drip_ms");
    const json_t *label = json_object_get(entry, "content_type");

    if (json_is_string(label))
        ctype = json_string_value(label);
    if (!cut && !framing && !drip)
        return send_buf(conn, status, ctype, body, len, extra_headers);
    const char *f = json_is_string(framing) ? json_string_value(framing)
                                            : stream ? "chunked" : "length";
    struct delivery *d = calloc(1, sizeof *d);
    if (!d || !(d->p = malloc(len ? len : 1))) {
        free(d);
        return MHD_NO;
    }
    memcpy(d->p, body, len);
    d->len = len;
    d->limit = len;
    if (json_is_integer(cut) && (size_t)json_integer_value(cut) < len)
        d->limit = (size_t)json_integer_value(cut);
    d->error_end = d->limit < len && strcmp(f, "close") != 0;
    d->drip_ms = json_is_integer(drip) ? (long)json_integer_value(drip) : 0;
    uint64_t size = strcmp(f, "length") == 0 ? (uint64_t)len : MHD_SIZE_UNKNOWN;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(size, 4096, deliver, d, delivery_free);
    if (!resp) {
        delivery_free(d);
        return MHD_NO;
    }
    enum MHD_Result ret = MHD_NO;
    if (strcmp(f, "close") == 0)
        MHD_set_response_options(resp, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END);
    if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype) == MHD_YES &&
        add_extra_headers(resp, extra_headers))
        ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* Steals obj; sent as the entry says (send_faulty). */
static enum MHD_Result send_json_as(struct MHD_Connection *conn, unsigned status,
                                    json_t *obj, const json_t *extra_headers,
                                    const json_t *entry)
{
    char *js = obj ? json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(obj);
    if (!js)
        return MHD_NO;
    enum MHD_Result ret = send_faulty(conn, status, "application/json", js, strlen(js),
                                      extra_headers, entry, false);
    free(js);
    return ret;
}

/* Steals obj. */
static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned status,
                                 json_t *obj, const json_t *extra_headers)
{
    char *js = obj ? json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(obj);
    if (!js)
        return MHD_NO;
    enum MHD_Result ret =
        send_buf(conn, status, "application/json", js, strlen(js), extra_headers);
    free(js);
    return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status,
                                  const char *msg)
{
    return send_json(conn, status,
                     json_pack("{s:{s:s, s:s}}", "error", "message", msg, "type", "fake_llm"),
                     NULL);
}

/* ---- logging & script cursor ------------------------------------------ */

static json_t *collect_headers(struct MHD_Connection *conn)
{
    static const char *const names[] = {
        "authorization", "x-api-key", "anthropic-version", "content-type",
    };
    json_t *h = json_object();
    if (!h)
        return NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        /* MHD matches header names case-insensitively. */
        const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, names[i]);
        if (v)
            json_object_set_new(h, names[i], json_string(v));
    }
    return h;
}

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
    (void)kind;
    json_object_set_new(cls, key, value ? json_string(value) : json_null());
    return MHD_YES;
}

/* The URL's query arguments as an object (NULL when there are none). */
static json_t *collect_query(struct MHD_Connection *conn)
{
    json_t *q = json_object();
    if (q && MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, add_arg, q) > 0)
        return q;
    json_decref(q);
    return NULL;
}

/*
 * Numbering, script selection and the log line happen under one lock so the
 * log order, "n" and script_index always agree even with concurrent clients.
 * Steals body. Returns the chosen entry (borrowed; the script outlives the
 * daemon) or NULL.
 */
static const json_t *record_request(struct server *srv, struct MHD_Connection *conn,
                                    const char *method, const char *url,
                                    json_t *body, bool use_script,
                                    unsigned long *n_out, long *idx_out)
{
    const json_t *entry = NULL;
    long idx = -1;

    pthread_mutex_lock(&srv->lock);
    unsigned long n = ++srv->n_requests;
    if (use_script && srv->cursor < json_array_size(srv->script)) {
        idx = (long)srv->cursor;
        entry = json_array_get(srv->script, srv->cursor);
        /* A "repeat" entry stays current so later requests all get it. */
        if (!json_is_true(json_object_get(entry, "repeat")))
            srv->cursor++;
    }
    json_t *line = json_pack("{s:I, s:s, s:s, s:o, s:o, s:I}",
                             "n", (json_int_t)n, "method", method, "path", url,
                             "headers", collect_headers(conn),
                             "body", body ? body : json_null(),
                             "script_index", (json_int_t)idx);
    json_t *query = line ? collect_query(conn) : NULL;
    if (query)
        json_object_set_new(line, "query", query);
    if (line) {
        json_dumpf(line, srv->log, JSON_COMPACT);
        fputc('\n', srv->log);
        json_decref(line);
    } else {
        fprintf(stderr, "fake_llm: could not build log line for request %lu\n", n);
    }
    /* The test reads the log as soon as its client returns, so it must be on
     * disk before the reply leaves. */
    fflush(srv->log);
    pthread_mutex_unlock(&srv->lock);

    *n_out = n;
    *idx_out = idx;
    return entry;
}

/* ---- completions ------------------------------------------------------ */

struct completion {
    enum api api;
    unsigned long n;
    const char *model;
    const char *content;
    size_t content_len;
    json_int_t prompt_tokens;
    json_int_t completion_tokens;
    const char *finish_reason; /* OpenAI's, "stop" unless scripted */
    const char *stop_reason;   /* Anthropic's, "end_turn" unless scripted */
    long bad_at;               /* stream: a garbled event before content
                                  piece bad_at (-1: none) */
    const json_t *error_event; /* stream: an error event instead of the
                                  rest, before piece error_at; or NULL */
    long error_at;
    bool no_usage;             /* "usage": null: no usage is sent */
};

static void token_counts(const json_t *entry, size_t body_len, struct completion *c)
{
    const json_t *usage = json_object_get(entry, "usage");
    const json_t *p = json_object_get(usage, "prompt_tokens");
    const json_t *k = json_object_get(usage, "completion_tokens");

    /* Accept Anthropic's names too, so scripts can be written in either dialect. */
    if (!p)
        p = json_object_get(usage, "input_tokens");
    if (!k)
        k = json_object_get(usage, "output_tokens");
    c->prompt_tokens = json_is_integer(p) ? json_integer_value(p) : (json_int_t)(body_len / 4);
    c->completion_tokens = json_is_integer(k) ? json_integer_value(k)
                                              : (json_int_t)(c->content_len / 4 + 1);
}

/* o without its usage object (o[key]'s, when key is given) when the
 * script said "usage": null. Returns o. */
static json_t *usage_of(const struct completion *c, json_t *o, const char *key)
{
    if (c->no_usage && o)
        json_object_del(key ? json_object_get(o, key) : o, "usage");
    return o;
}

static json_t *openai_message(const struct completion *c, const char *id)
{
    return usage_of(c, json_pack("{s:s, s:s, s:i, s:s, s:[{s:i, s:{s:s, s:s%}, s:s}], s:{s:I, s:I, s:I}}",
                     "id", id, "object", "chat.completion", "created", 0, "model", c->model,
                     "choices", "index", 0, "message", "role", "assistant",
                     "content", c->content, c->content_len, "finish_reason", c->finish_reason,
                     "usage", "prompt_tokens", c->prompt_tokens,
                     "completion_tokens", c->completion_tokens,
                     "total_tokens", c->prompt_tokens + c->completion_tokens), NULL);
}

static json_t *anthropic_message(const struct completion *c, const char *id)
{
    return usage_of(c, json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:s%}], s:s, s:n, s:{s:I, s:I}}",
                     "id", id, "type", "message", "role", "assistant", "model", c->model,
                     "content", "type", "text", "text", c->content, c->content_len,
                     "stop_reason", c->stop_reason, "stop_sequence",
                     "usage", "input_tokens", c->prompt_tokens,
                     "output_tokens", c->completion_tokens), NULL);
}

/* Next piece end: at most SSE_PIECE_MAX bytes, never inside a UTF-8 sequence. */
static size_t piece_end(const char *s, size_t len, size_t start)
{
    size_t end = start + SSE_PIECE_MAX < len ? start + SSE_PIECE_MAX : len;
    size_t e = end;
    while (e > start && e < len && ((unsigned char)s[e] & 0xC0) == 0x80)
        e--;
    return e > start ? e : end;
}

/* The data of a chunk cut inside its JSON, as a garbled stream has it. */
#define OPENAI_BAD_DATA "{\"choices\":[{\"delta\":{\"content\":\""
#define ANTHROPIC_BAD_DATA \
    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"text\":\""

/* The garbled event of c->bad_at, when piece k (of the content, or the
 * end when k is past it) is next. */
static void bad_event(struct strbuf *sb, const struct completion *c, long k, bool last)
{
    if (c->bad_at < 0 || (k != c->bad_at && !(last && c->bad_at > k)))
        return;
    if (c->api == API_ANTHROPIC)
        sb_puts(sb, "event: content_block_delta\ndata: " ANTHROPIC_BAD_DATA "\n\n");
    else
        sb_puts(sb, "data: " OPENAI_BAD_DATA "\n\n");
}

/* The error event of c->error_event when piece k is next (the end when
 * last): true when it was sent, and the stream ends there. */
static bool error_event(struct strbuf *sb, const struct completion *c, long k, bool last)
{
    if (!c->error_event || (k != c->error_at && !(last && c->error_at > k)))
        return false;
    if (c->api == API_ANTHROPIC)
        sb_sse(sb, "error", json_pack("{s:s, s:O}", "type", "error", "error",
                                      (json_t *)c->error_event));
    else
        sb_sse(sb, NULL, json_pack("{s:O}", "error", (json_t *)c->error_event));
    return true;
}

static void openai_stream(struct strbuf *sb, const struct completion *c, const char *id)
{
    long k = 0;
    for (size_t i = 0; i < c->content_len; k++) {
        size_t e = piece_end(c->content, c->content_len, i);
        bad_event(sb, c, k, false);
        if (error_event(sb, c, k, false))
            return;
        sb_sse(sb, NULL,
               json_pack("{s:s, s:s, s:i, s:s, s:[{s:i, s:{s:s%}, s:n}]}",
                         "id", id, "object", "chat.completion.chunk", "created", 0,
                         "model", c->model, "choices", "index", 0,
                         "delta", "content", c->content + i, e - i, "finish_reason"));
        i = e;
    }
    bad_event(sb, c, k, true);
    if (error_event(sb, c, k, true))
        return;
    sb_sse(sb, NULL,
           usage_of(c, json_pack("{s:s, s:s, s:i, s:s, s:[{s:i, s:{}, s:s}], s:{s:I, s:I, s:I}}",
                     "id", id, "object", "chat.completion.chunk", "created", 0,
                     "model", c->model, "choices", "index", 0, "delta",
                     "finish_reason", c->finish_reason,
                     "usage", "prompt_tokens", c->prompt_tokens,
                     "completion_tokens", c->completion_tokens,
                     "total_tokens", c->prompt_tokens + c->completion_tokens), NULL));
    sb_puts(sb, "data: [DONE]\n\n");
}

static void anthropic_stream(struct strbuf *sb, const struct completion *c, const char *id)
{
    sb_sse(sb, "message_start",
           usage_of(c, json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:[], s:n, s:n, s:{s:I, s:i}}}",
                     "type", "message_start", "message", "id", id, "type", "message",
                     "role", "assistant", "model", c->model, "content",
                     "stop_reason", "stop_sequence",
                     "usage", "input_tokens", c->prompt_tokens, "output_tokens", 1),
                    "message"));
    sb_sse(sb, "content_block_start",
           json_pack("{s:s, s:i, s:{s:s, s:s}}", "type", "content_block_start",
                     "index", 0, "content_block", "type", "text", "text", ""));
    long k = 0;
    for (size_t i = 0; i < c->content_len; k++) {
        size_t e = piece_end(c->content, c->content_len, i);
        bad_event(sb, c, k, false);
        if (error_event(sb, c, k, false))
            return;
        sb_sse(sb, "content_block_delta",
               json_pack("{s:s, s:i, s:{s:s, s:s%}}", "type", "content_block_delta",
                         "index", 0, "delta", "type", "text_delta",
                         "text", c->content + i, e - i));
        i = e;
    }
    bad_event(sb, c, k, true);
    if (error_event(sb, c, k, true))
        return;
    sb_sse(sb, "content_block_stop",
           json_pack("{s:s, s:i}", "type", "content_block_stop", "index", 0));
    sb_sse(sb, "message_delta",
           usage_of(c, json_pack("{s:s, s:{s:s, s:n}, s:{s:I}}", "type", "message_delta",
                     "delta", "stop_reason", c->stop_reason, "stop_sequence",
                     "usage", "output_tokens", c->completion_tokens), NULL));
    sb_sse(sb, "message_stop", json_pack("{s:s}", "type", "message_stop"));
}

static enum MHD_Result send_completion(struct MHD_Connection *conn, const json_t *entry,
                                       const json_t *req, size_t body_len,
                                       enum api api, unsigned long n)
{
    const json_t *content = json_object_get(entry, "content");
    const json_t *model = json_object_get(req, "model");
    const json_t *headers = json_object_get(entry, "headers");
    struct completion c = {
        .api = api,
        .n = n,
        .model = json_is_string(model) ? json_string_value(model) : "fake-model",
        .content = json_is_string(content) ? json_string_value(content) : "",
        .content_len = json_is_string(content) ? json_string_length(content) : 0,
        .finish_reason = "stop",
        .stop_reason = "end_turn",
        .bad_at = -1,
        .error_event = json_object_get(entry, "error_event"),
        .error_at = 0,
        .no_usage = json_is_null(json_object_get(entry, "usage")),
    };
    const json_t *err_at = json_object_get(entry, "error_event_at");
    const json_t *bad = json_object_get(entry, "bad_event_at");
    const json_t *fr = json_object_get(entry, "finish_reason");
    const json_t *sr = json_object_get(entry, "stop_reason");
    char id[64];
    char *big = NULL;
    const json_t *rep = json_object_get(entry, "content_repeat");

    /* "content_repeat": K sends the content K times over (a reply over
     * askdb's size cap without a script of that size). */
    if (json_is_integer(rep) && json_integer_value(rep) > 1 && c.content_len) {
        size_t k = (size_t)json_integer_value(rep);
        big = malloc(c.content_len * k + 1);
        if (!big)
            return MHD_NO;
        for (size_t i = 0; i < k; i++)
            memcpy(big + i * c.content_len, c.content, c.content_len);
        c.content_len *= k;
        big[c.content_len] = '\0';
        c.content = big;
    }
    if (json_is_string(fr))
        c.finish_reason = json_string_value(fr);
    if (json_is_string(sr))
        c.stop_reason = json_string_value(sr);
    if (json_is_integer(bad))
        c.bad_at = (long)json_integer_value(bad);
    if (json_is_integer(err_at))
        c.error_at = (long)json_integer_value(err_at);
    token_counts(entry, body_len, &c);
    snprintf(id, sizeof id, api == API_OPENAI ? "fake-%lu" : "msg_fake_%lu", n);

    if (json_is_true(json_object_get(req, "stream"))) {
        struct strbuf sb = { 0 };
        if (api == API_OPENAI)
            openai_stream(&sb, &c, id);
        else
            anthropic_stream(&sb, &c, id);
        enum MHD_Result ret = MHD_NO;
        if (!sb.oom && sb.p)
            ret = send_faulty(conn, MHD_HTTP_OK, "text/event-stream", sb.p, sb.len,
                              headers, entry, true);
        free(sb.p);
        free(big);
        return ret;
    }
    enum MHD_Result ret =
        send_json_as(conn, MHD_HTTP_OK,
                     api == API_OPENAI ? openai_message(&c, id) : anthropic_message(&c, id),
                     headers, entry);
    free(big);
    return ret;
}

static enum MHD_Result send_scripted_status(struct MHD_Connection *conn, const json_t *entry)
{
    const json_t *st = json_object_get(entry, "status");
    const json_t *body = json_object_get(entry, "body");
    const json_t *headers = json_object_get(entry, "headers");
    unsigned status = json_is_integer(st) ? (unsigned)json_integer_value(st) : MHD_HTTP_OK;
    const json_t *hex = json_object_get(entry, "body_hex");

    /* Any bytes at all - control bytes, invalid UTF-8 - as text/plain. */
    if (json_is_string(hex)) {
        const char *h = json_string_value(hex);
        size_t n = strlen(h) / 2;
        char *raw = malloc(n + 1);
        if (!raw)
            return MHD_NO;
        for (size_t i = 0; i < n; i++) {
            unsigned v = 0;
            sscanf(h + 2 * i, "%2x", &v);
            raw[i] = (char)v;
        }
        enum MHD_Result ret = send_faulty(conn, status, "text/plain", raw, n, headers,
                                          entry, false);
        free(raw);
        return ret;
    }
    if (json_is_string(body)) {
        const char *s = json_string_value(body);
        size_t len = json_string_length(body);
        /* A string body is sent verbatim; label it JSON only if it is, so tests
         * can also simulate HTML error pages from proxies. */
        json_t *probe = json_loadb(s, len, JSON_DECODE_ANY, NULL);
        const char *ctype = probe ? "application/json" : "text/plain; charset=utf-8";
        json_decref(probe);
        return send_faulty(conn, status, ctype, s, len, headers, entry, false);
    }
    if (body)
        return send_json_as(conn, status, json_incref((json_t *)body), headers, entry);

    char msg[64];
    snprintf(msg, sizeof msg, "fake_llm status %u", status);
    return send_json(conn, status,
                     json_pack("{s:{s:s, s:s}}", "error", "message", msg, "type", "fake"),
                     headers);
}

/* ---- MHD callbacks ---------------------------------------------------- */

static enum MHD_Result handle_complete_request(struct server *srv, struct MHD_Connection *conn,
                                               const char *url, const char *method,
                                               struct req_ctx *rc)
{
    enum api api = classify_path(url);
    unsigned long n;
    long idx;

    if (rc->too_large) {
        record_request(srv, conn, method, url, NULL, false, &n, &idx);
        return send_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "fake_llm: request body over 8 MiB");
    }

    const char *data = rc->buf ? rc->buf : "";
    json_t *req = json_loadb(data, rc->len, 0, NULL);
    /* Non-JSON bodies are still logged, as a string, so a test can see them. */
    json_t *logged = req ? json_incref(req) : json_stringn(data, rc->len);

    if (api == API_NONE) {
        record_request(srv, conn, method, url, logged, false, &n, &idx);
        json_decref(req);
        return send_error(conn, MHD_HTTP_NOT_FOUND, "fake_llm: unknown endpoint");
    }
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0) {
        record_request(srv, conn, method, url, logged, false, &n, &idx);
        json_decref(req);
        struct MHD_Response *resp;
        json_t *err = json_pack("{s:{s:s, s:s}}", "error", "message",
                                "fake_llm: method not allowed", "type", "fake_llm");
        char *js = err ? json_dumps(err, JSON_COMPACT) : NULL;
        json_decref(err);
        if (!js)
            return MHD_NO;
        resp = MHD_create_response_from_buffer(strlen(js), js, MHD_RESPMEM_MUST_COPY);
        free(js);
        if (!resp)
            return MHD_NO;
        enum MHD_Result ret = MHD_NO;
        if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json") == MHD_YES &&
            MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "POST") == MHD_YES)
            ret = MHD_queue_response(conn, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
        MHD_destroy_response(resp);
        return ret;
    }
    if (!req) {
        record_request(srv, conn, method, url, logged, false, &n, &idx);
        return send_error(conn, MHD_HTTP_BAD_REQUEST, "fake_llm: request body is not valid JSON");
    }

    const json_t *entry = record_request(srv, conn, method, url, logged, true, &n, &idx);
    enum MHD_Result ret;
    if (!entry) {
        ret = send_json(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
                        json_pack("{s:{s:s}}", "error", "message", "fake_llm: script exhausted"),
                        NULL);
        json_decref(req);
        return ret;
    }

    const json_t *delay = json_object_get(entry, "delay_ms");
    if (json_is_integer(delay) && json_integer_value(delay) > 0)
        sleep_ms_interruptible((long)json_integer_value(delay));

    if (json_is_true(json_object_get(entry, "close"))) {
        json_decref(req);
        /* MHD_NO makes MHD drop the socket with no response: a connection reset. */
        return MHD_NO;
    }

    const json_t *st = json_object_get(entry, "status");
    bool custom = json_object_get(entry, "body") || json_object_get(entry, "body_hex") ||
                  (json_is_integer(st) && json_integer_value(st) != MHD_HTTP_OK);
    ret = custom ? send_scripted_status(conn, entry)
                 : send_completion(conn, entry, req, rc->len, api, n);
    json_decref(req);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    struct server *srv = cls;
    struct req_ctx *rc = *con_cls;
    (void)version;

    if (!rc) {
        rc = calloc(1, sizeof *rc);
        if (!rc)
            return MHD_NO;
        *con_cls = rc;
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        /* Keep draining an oversize body so the client receives a clean 413
         * instead of a reset mid-upload. */
        if (rc->too_large || n > MAX_BODY - rc->len) {
            rc->too_large = true;
            return MHD_YES;
        }
        if (rc->len + n + 1 > rc->cap) {
            size_t cap = rc->cap ? rc->cap : 4096;
            while (cap < rc->len + n + 1)
                cap *= 2;
            char *p = realloc(rc->buf, cap);
            if (!p)
                return MHD_NO;
            rc->buf = p;
            rc->cap = cap;
        }
        memcpy(rc->buf + rc->len, upload_data, n);
        rc->len += n;
        return MHD_YES;
    }
    return handle_complete_request(srv, conn, url, method, rc);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct req_ctx *rc = *con_cls;
    (void)cls;
    (void)conn;
    (void)toe;
    if (rc) {
        free(rc->buf);
        free(rc);
        *con_cls = NULL;
    }
}

/* ---- startup ---------------------------------------------------------- */

static void usage(void)
{
    fputs("usage: fake_llm --script FILE --log FILE [--port N] [--port-file FILE]\n", stderr);
}

/* Why the fault-mode fields of entry e are wrong, or NULL. */
static const char *fault_fields_error(const json_t *e)
{
    const json_t *cut = json_object_get(e, "cut");
    const json_t *fr = json_object_get(e, "framing");
    const json_t *drip = json_object_get(e, "drip_ms");
    const json_t *hex = json_object_get(e, "body_hex");
    const json_t *rep = json_object_get(e, "content_repeat");
    const char *f = json_is_string(fr) ? json_string_value(fr) : "";
    const char *h = json_is_string(hex) ? json_string_value(hex) : "";

    if (cut && (!json_is_integer(cut) || json_integer_value(cut) < 0))
        return "\"cut\" must be a non-negative integer";
    if (fr && strcmp(f, "length") && strcmp(f, "chunked") && strcmp(f, "close"))
        return "\"framing\" must be \"length\", \"chunked\" or \"close\"";
    if (drip && (!json_is_integer(drip) || json_integer_value(drip) < 0 ||
                 json_integer_value(drip) > 60000))
        return "\"drip_ms\" must be an integer 0..60000";
    if (hex && (!json_is_string(hex) || strlen(h) % 2 ||
                strspn(h, "0123456789abcdefABCDEF") != strlen(h)))
        return "\"body_hex\" must be a string of hex digit pairs";
    if (rep && (!json_is_integer(rep) || json_integer_value(rep) < 1 ||
                json_integer_value(rep) > 1000000))
        return "\"content_repeat\" must be an integer 1..1000000";
    if (json_object_get(e, "finish_reason") &&
        !json_is_string(json_object_get(e, "finish_reason")))
        return "\"finish_reason\" must be a string";
    if (json_object_get(e, "stop_reason") &&
        !json_is_string(json_object_get(e, "stop_reason")))
        return "\"stop_reason\" must be a string";
    if (json_object_get(e, "content_type") &&
        !json_is_string(json_object_get(e, "content_type")))
        return "\"content_type\" must be a string";
    const json_t *bad = json_object_get(e, "bad_event_at");
    if (bad && (!json_is_integer(bad) || json_integer_value(bad) < 0 ||
                json_integer_value(bad) > 1000000000))
        return "\"bad_event_at\" must be a non-negative integer";
    const json_t *ee = json_object_get(e, "error_event");
    const json_t *ea = json_object_get(e, "error_event_at");
    if (ee && !json_is_object(ee))
        return "\"error_event\" must be an object";
    if (ea && (!json_is_integer(ea) || json_integer_value(ea) < 0 ||
               json_integer_value(ea) > 1000000000))
        return "\"error_event_at\" must be a non-negative integer";
    return NULL;
}

static bool validate_script(const json_t *script, const char *path)
{
    if (!json_is_array(script)) {
        fprintf(stderr, "fake_llm: %s: script must be a JSON array\n", path);
        return false;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(script, i, e) {
        const json_t *st = json_object_get(e, "status");
        const json_t *d = json_object_get(e, "delay_ms");
        const json_t *c = json_object_get(e, "content");
        const json_t *h = json_object_get(e, "headers");
        const char *why = NULL;
        if (!json_is_object(e))
            why = "entry is not an object";
        else if (st && (!json_is_integer(st) || json_integer_value(st) < 100 ||
                        json_integer_value(st) > 599))
            why = "\"status\" must be an integer 100..599";
        else if (d && (!json_is_integer(d) || json_integer_value(d) < 0 ||
                       json_integer_value(d) > LONG_MAX / 1000000L))
            why = "\"delay_ms\" must be a non-negative integer";
        else if (c && !json_is_string(c))
            why = "\"content\" must be a string";
        else if (h && !json_is_object(h))
            why = "\"headers\" must be an object";
        else
            why = fault_fields_error(e);
        if (why) {
            fprintf(stderr, "fake_llm: %s: entry %zu: %s\n", path, i, why);
            return false;
        }
    }
    return true;
}

static bool write_port_file(const char *path, unsigned port)
{
    char tmp[4096];
    int w = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (w < 0 || (size_t)w >= sizeof tmp)
        return false;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return false;
    bool ok = fprintf(f, "%u\n", port) > 0;
    ok = (fclose(f) == 0) && ok;
    /* rename is atomic, so a polling reader never sees a half-written port. */
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    const char *script_path = NULL, *log_path = NULL, *port_file = NULL;
    long port = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) {
            usage();
            return 2;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--script") == 0) {
            script_path = v;
        } else if (strcmp(a, "--log") == 0) {
            log_path = v;
        } else if (strcmp(a, "--port-file") == 0) {
            port_file = v;
        } else if (strcmp(a, "--port") == 0) {
            char *end;
            errno = 0;
            port = strtol(v, &end, 10);
            if (errno || *end || end == v || port < 0 || port > 65535) {
                fprintf(stderr, "fake_llm: bad --port '%s'\n", v);
                return 2;
            }
        } else {
            usage();
            return 2;
        }
    }
    if (!script_path || !log_path) {
        usage();
        return 2;
    }

    json_error_t jerr;
    struct server srv = { 0 };
    srv.script = json_load_file(script_path, JSON_ALLOW_NUL, &jerr);
    if (!srv.script) {
        fprintf(stderr, "fake_llm: %s:%d: %s\n", script_path, jerr.line, jerr.text);
        return 2;
    }
    if (!validate_script(srv.script, script_path)) {
        json_decref(srv.script);
        return 2;
    }
    srv.log = fopen(log_path, "a");
    if (!srv.log) {
        perror(log_path);
        json_decref(srv.script);
        return 2;
    }
    pthread_mutex_init(&srv.lock, NULL);

    /* Block the stop signals before MHD spawns threads so they inherit the
     * mask and only sigwait() below ever sees them. */
    sigset_t stop_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGTERM);
    sigaddset(&stop_set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
    struct sigaction ign = { .sa_handler = SIG_IGN };
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, NULL);

    struct sockaddr_in addr = { 0 };
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    /* Thread-per-connection so a delay_ms entry only stalls its own client. */
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
            MHD_USE_ERROR_LOG,
        (uint16_t)port, NULL, NULL, on_request, &srv,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_CONNECTION_TIMEOUT, CONN_TIMEOUT_S,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
        MHD_OPTION_END);
    int rc = 0;
    if (!d) {
        fprintf(stderr, "fake_llm: cannot listen on 127.0.0.1:%ld\n", port);
        rc = 1;
        goto out;
    }

    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned bound = info ? info->port : 0;
    if (!bound) {
        fputs("fake_llm: cannot determine bound port\n", stderr);
        rc = 1;
        goto stop;
    }
    if (port_file && !write_port_file(port_file, bound)) {
        fprintf(stderr, "fake_llm: cannot write port file %s\n", port_file);
        rc = 1;
        goto stop;
    }
    fprintf(stderr, "listening on 127.0.0.1:%u\n", bound);

    int sig;
    while (sigwait(&stop_set, &sig) != 0) {
    }

stop:
    atomic_store(&g_stopping, true);
    MHD_stop_daemon(d);
out:
    fclose(srv.log);
    pthread_mutex_destroy(&srv.lock);
    json_decref(srv.script);
    return rc;
}
