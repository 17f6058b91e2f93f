/* http.c - libcurl wrapper for the HTTP model providers (policy in http.h). */
#include "llm/http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/text.h"

/*
** One try of a request runs curl_easy_perform() with two callbacks:
** on_header watches for Retry-After, on_write decides on the first body
** bytes whether the reply is a stream (a 2xx to a request that asked for
** one, unless labelled application/json; any other 2xx that begins as
** events do) and then either parses SSE lines as they arrive or appends
** to the capped body buffer. The loop in
** http_post_json() classifies the outcome (ok / retry / fail), sleeps and
** tries again, or turns the failure into a message.
*/

#define CONNECT_TIMEOUT_MS 5000L
#define DEFAULT_TIMEOUT_MS 120000L
#define BACKOFF_BASE_MS 250L
#define BACKOFF_CAP_MS 8000L
#define RETRY_AFTER_CAP_S 86400L /* parsed up to a day; the wait is capped
                                   by --llm-timeout (see http_post_json) */
#define SNIPPET_MAX 200
#define REDACT_MIN_KEY 6   /* shorter "keys" are placeholders, not secrets */

enum { MODE_UNKNOWN, MODE_PEEK, MODE_BODY, MODE_SSE };
enum { OUT_OK, OUT_RETRY, OUT_FAIL };

/* Incremental server-sent-events parser state. */
struct sse {
    struct buf line;   /* the line being read (may span chunks) */
    struct buf data;   /* data lines of the event being assembled */
    char event[64];    /* its event name */
    int has_data;
    int cr;            /* last byte was \r: a following \n is its pair */
};

struct http_client {
    CURL *curl;
    char *url;                       /* what curl gets, credentials too */
    char *shown;                     /* url without "user:password@" */
    char *userinfo;                  /* that "user:password", or NULL */
    char *model;
    char *key;
    char *key_hint;
    char *not_found_hint;
    long timeout_ms;
    int retries;
    askdb_log_fn log_fn;
    void *log_ud;
    long base_ms;
    uint64_t rng;                    /* xorshift64 state for jitter */
    char curl_err[CURL_ERROR_SIZE];

    /* State of the current try, reset by try_once(). */
    const struct http_post *req;
    struct buf body;
    struct sse sse;
    int mode;
    size_t received;
    int too_big;
    int oom;
    long events;
    long retry_after_ms;             /* -1: the server sent none */
    int retry_after_exact;           /* it came from retry-after-ms */
    long refused_ms;                 /* a Retry-After wait not made, as it
                                        was longer than the time left of
                                        the request's limit; -1: none */
    long left_ms;                    /* that time left */
    int cut;                         /* the stream lacked its end marker */
    int stop;                        /* what on_event said when it stopped
                                        the stream (HTTP_EVENT_BAD or
                                        HTTP_EVENT_BUSY), else 0 */
    struct buf stopped_at;           /* that event's data, for messages */
};

static size_t userinfo_len(const char *url);
static char *userinfo_of(const char *url);

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;

/* curl_global_init is not thread-safe, so it runs exactly once. It is never
** undone: the library cannot know when the last user has gone. */
static void curl_init_once(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Next value of a xorshift64 generator; *s must be non-zero. */
static uint64_t xorshift64(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* Backoff base from ASKDB_RETRY_BASE_MS (0..10000), else the default. */
static long retry_base_ms(void)
{
    const char *v = getenv("ASKDB_RETRY_BASE_MS");
    char *end = NULL;
    long n;

    if (!v || !*v)
        return BACKOFF_BASE_MS;
    errno = 0;
    n = strtol(v, &end, 10);
    if (errno || *end || n < 0 || n > 10000)
        return BACKOFF_BASE_MS;
    return n;
}

/* A seed that differs between clients and runs. */
static uint64_t seed_for(const void *p)
{
    struct timespec ts;
    uint64_t s;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    s = (uint64_t)(uintptr_t)p ^ ((uint64_t)time(NULL) << 32) ^
        (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
    s ^= 0x9e3779b97f4a7c15ULL;
    return s ? s : 1;
}

/* ------------------------------------------------------------------ */
/* Server-sent events                                                  */
/* ------------------------------------------------------------------ */

static void sse_reset(struct sse *s)
{
    buf_reset(&s->line);
    buf_reset(&s->data);
    s->event[0] = '\0';
    s->has_data = 0;
    s->cr = 0;
}

/* Hand the assembled event (if it had data) to the caller; start anew.
** Returns -1 when the caller stopped the stream (c->stop says why, and
** c->stopped_at holds the event's data), else 0. */
static int sse_dispatch(struct http_client *c)
{
    struct sse *s = &c->sse;
    int r = HTTP_EVENT_OK;

    if (s->has_data && !buf_err(&s->data)) {
        r = c->req->on_event(c->req->ud, s->event[0] ? s->event : "message",
                             s->data.data ? s->data.data : "", s->data.len);
        if (r == HTTP_EVENT_OK) {
            c->events++;
        } else {
            c->stop = r;
            buf_reset(&c->stopped_at);
            buf_append(&c->stopped_at, s->data.data, s->data.len);
        }
    }
    buf_reset(&s->data);
    s->has_data = 0;
    s->event[0] = '\0';
    return r == HTTP_EVENT_OK ? 0 : -1;
}

/*
** Process the complete line in s->line: a blank line ends an event, ':'
** starts a comment, "data" and "event" fields are kept, other fields (id,
** retry, unknown) are ignored. Returns -1 when a buffer overflowed or the
** caller stopped the stream (c->stop).
*/
static int sse_line(struct http_client *c)
{
    struct sse *s = &c->sse;
    const char *l = s->line.data ? s->line.data : "";
    size_t n = s->line.len, flen, vlen;
    const char *colon, *v;

    if (buf_err(&s->line))
        return -1;
    if (n == 0) {
        buf_reset(&s->line);
        return sse_dispatch(c);
    } else if (l[0] != ':') {
        colon = memchr(l, ':', n);
        flen = colon ? (size_t)(colon - l) : n;
        v = colon ? colon + 1 : l + n;
        vlen = n - (size_t)(v - l);
        if (vlen && *v == ' ') {
            v++;
            vlen--;
        }
        if (flen == 4 && memcmp(l, "data", 4) == 0) {
            if (s->has_data)
                buf_putc(&s->data, '\n');
            buf_append(&s->data, v, vlen);
            s->has_data = 1;
        } else if (flen == 5 && memcmp(l, "event", 5) == 0) {
            if (vlen >= sizeof s->event)
                vlen = sizeof s->event - 1;
            memcpy(s->event, v, vlen);
            s->event[vlen] = '\0';
        }
    }
    buf_reset(&s->line);
    return buf_err(&s->data) ? -1 : 0;
}

/* Feed n bytes of the stream; lines end in \n, \r\n or \r and may be split
** anywhere across calls. Returns -1 when a buffer overflowed or the caller
** stopped the stream (c->stop). */
static int sse_feed(struct http_client *c, const char *p, size_t n)
{
    struct sse *s = &c->sse;
    size_t i = 0, j;

    while (i < n) {
        if (s->cr && p[i] == '\n') {
            s->cr = 0;
            i++;
            continue;
        }
        s->cr = 0;
        j = i;
        while (j < n && p[j] != '\r' && p[j] != '\n')
            j++;
        buf_append(&s->line, p + i, j - i);
        if (j == n)
            break;
        s->cr = p[j] == '\r';
        if (sse_line(c))
            return -1;
        i = j + 1;
    }
    return buf_err(&s->line) ? -1 : 0;
}

/* Whether an event has begun that no blank line has ended yet. */
static int sse_open(const struct http_client *c)
{
    return c->sse.line.len > 0 || c->sse.has_data;
}

/* End of stream: finish a last line and event even without the blank line
** the protocol asks for (lenient: some servers omit it). Returns -1 as
** sse_feed() does. */
static int sse_finish(struct http_client *c)
{
    if (c->sse.line.len && sse_line(c))
        return -1;
    return sse_dispatch(c);
}

int http_sse_parse(const char *data, size_t len, const size_t *cuts,
                   size_t ncuts, http_event_fn on_event, void *ud)
{
    struct http_client c;
    struct http_post req;
    size_t i, n, off = 0;
    int rc = 0;

    /* Only the SSE state, the request's callback and the event count are
    ** used by sse_feed() and sse_finish(); the rest stays zero. */
    memset(&c, 0, sizeof c);
    memset(&req, 0, sizeof req);
    req.on_event = on_event;
    req.ud = ud;
    c.req = &req;
    buf_init(&c.sse.line, HTTP_MAX_REPLY);
    buf_init(&c.sse.data, HTTP_MAX_REPLY);
    buf_init(&c.stopped_at, HTTP_MAX_REPLY);
    for (i = 0; rc == 0 && off < len; i++) {
        n = len - off;
        if (i < ncuts && cuts[i] < n)
            n = cuts[i];
        rc = sse_feed(&c, data + off, n);
        off += n;
    }
    if (rc == 0) {
        int open = sse_open(&c);

        rc = sse_finish(&c);
        if (rc && open && c.stop == HTTP_EVENT_BAD) {
            c.stop = 0;   /* cut, not garbled: a reader sees no end */
            rc = 0;
        }
    }
    if (c.stop)
        rc = c.stop;
    buf_free(&c.sse.line);
    buf_free(&c.sse.data);
    buf_free(&c.stopped_at);
    return rc;
}

/* ------------------------------------------------------------------ */
/* curl callbacks                                                      */
/* ------------------------------------------------------------------ */

/* A header's value p (n bytes, after its colon) without the blanks and
** line end around it, into v (size bytes): 0, or -1 when it is empty or
** does not fit. */
static int header_value(const char *p, size_t n, char *v, size_t size)
{
    while (n && (*p == ' ' || *p == '\t')) {
        p++;
        n--;
    }
    while (n && (p[n - 1] == '\r' || p[n - 1] == '\n' || p[n - 1] == ' ' ||
                 p[n - 1] == '\t'))
        n--;
    if (n == 0 || n >= size)
        return -1;
    memcpy(v, p, n);
    v[n] = '\0';
    return 0;
}

/* Parse a Retry-After value (seconds or an HTTP-date) into
** c->retry_after_ms, capped at RETRY_AFTER_CAP_S. */
static void parse_retry_after(struct http_client *c, const char *p, size_t n)
{
    char v[128];
    char *end = NULL;
    long secs;
    time_t t;

    if (header_value(p, n, v, sizeof v))
        return;
    if (v[0] >= '0' && v[0] <= '9') {
        errno = 0;
        secs = strtol(v, &end, 10);
        if (*end || (errno && errno != ERANGE))
            return;
    } else {
        t = curl_getdate(v, NULL);
        if (t == (time_t)-1)
            return;
        secs = t > time(NULL) ? (long)(t - time(NULL)) : 0;
    }
    if (secs < 0 || secs > RETRY_AFTER_CAP_S)
        secs = secs < 0 ? 0 : RETRY_AFTER_CAP_S;
    c->retry_after_ms = secs * 1000;
}

/* A retry-after-ms value (OpenAI's and Azure's, milliseconds, maybe
** with a fraction), which wins over Retry-After's whole seconds in
** whichever order they come. */
static void parse_retry_after_ms(struct http_client *c, const char *p,
                                 size_t n)
{
    char v[64], *end;
    double ms;

    if (header_value(p, n, v, sizeof v) || v[0] < '0' || v[0] > '9')
        return;
    ms = strtod(v, &end);
    if (*end || !(ms >= 0))
        return;
    if (ms > RETRY_AFTER_CAP_S * 1000.0)
        ms = RETRY_AFTER_CAP_S * 1000.0;
    c->retry_after_ms = (long)(ms + 0.999);
    c->retry_after_exact = 1;
}

/* CURLOPT_HEADERFUNCTION: one header line at a time. */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    struct http_client *c = ud;
    size_t len = size * n;

    if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
        c->retry_after_ms = -1;   /* a new response (e.g. after 100) */
        c->retry_after_exact = 0;
    } else if (len > 15 && strncasecmp(p, "retry-after-ms:", 15) == 0) {
        parse_retry_after_ms(c, p + 15, len - 15);
    } else if (len > 12 && strncasecmp(p, "retry-after:", 12) == 0 &&
               !c->retry_after_exact) {
        parse_retry_after(c, p + 12, len - 12);
    }
    return len;
}

/*
** Decide, at the first body bytes, whether this reply is a stream: a 2xx
** to a request that asked for one is, unless labelled application/json;
** any other 2xx is when its first bytes say so (MODE_PEEK, see
** peek_mode()). Some servers label their events application/json, or
** stream when not asked to: read as they come, such events get what a
** labelled stream gets, an unreadable or cut one tried again while no
** text has been delivered.
*/
static void pick_mode(struct http_client *c)
{
    long code = 0;
    char *ct = NULL;

    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(c->curl, CURLINFO_CONTENT_TYPE, &ct);
    c->mode = MODE_BODY;
    if (!c->req->on_event || code < 200 || code >= 300)
        return;
    if (c->req->stream &&
        !(ct && strncasecmp(ct, "application/json", 16) == 0))
        c->mode = MODE_SSE;
    else
        c->mode = MODE_PEEK;
}

/*
** MODE_PEEK: the body's first bytes so far are in c->body. The reply is a
** stream (MODE_SSE) when, after white space, they begin as events do - a
** "data:" or "event:" field or a ':' comment, never JSON's first byte -
** and a body (MODE_BODY) when they cannot; MODE_PEEK while too few have
** come to tell.
*/
static int peek_mode(const struct http_client *c)
{
    static const char *const starts[] = {"data:", "event:", ":"};
    const char *p = c->body.data;
    size_t i = 0, n = c->body.len, k, j;
    int more = 0;

    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' ||
                     p[i] == '\n'))
        i++;
    if (i == n)
        return MODE_PEEK;
    for (j = 0; j < sizeof starts / sizeof *starts; j++) {
        k = strlen(starts[j]);
        if (memcmp(p + i, starts[j], n - i < k ? n - i : k) != 0)
            continue;
        if (n - i >= k)
            return MODE_SSE;
        more = 1;
    }
    return more ? MODE_PEEK : MODE_BODY;
}

/* Parse n bytes of a stream. Returns 0, or -1 when the transfer must
** stop: on_event stopped it (c->stop) or a buffer failed (c->oom, or
** c->too_big for a line or event over the cap). */
static int stream_bytes(struct http_client *c, const char *p, size_t n)
{
    if (sse_feed(c, p, n) == 0)
        return 0;
    if (!c->stop) {
        c->oom = buf_err(&c->sse.line) == BUF_ENOMEM ||
                 buf_err(&c->sse.data) == BUF_ENOMEM;
        c->too_big = !c->oom;
    }
    return -1;
}

/* CURLOPT_WRITEFUNCTION: returning less than given aborts the transfer. */
static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
    struct http_client *c = ud;
    size_t len = size * n;
    int rc;

    if (c->mode == MODE_UNKNOWN)
        pick_mode(c);
    if (len > HTTP_MAX_REPLY - c->received) {
        c->too_big = 1;
        return 0;
    }
    c->received += len;
    if (c->mode == MODE_SSE)
        return stream_bytes(c, p, len) ? 0 : len;
    buf_append(&c->body, p, len);
    if (buf_err(&c->body)) {
        c->oom = buf_err(&c->body) == BUF_ENOMEM;
        c->too_big = !c->oom;
        return 0;
    }
    if (c->mode == MODE_PEEK) {
        c->mode = peek_mode(c);
        if (c->mode == MODE_SSE) {
            /* What was peeked at is the stream's start. */
            rc = stream_bytes(c, c->body.data, c->body.len);
            buf_reset(&c->body);
            return rc ? 0 : len;
        }
    }
    return len;
}

/* ------------------------------------------------------------------ */
/* Client                                                              */
/* ------------------------------------------------------------------ */

askdb_status http_client_new(const struct http_config *cfg,
                             struct http_client **out, char *err,
                             size_t errlen)
{
    struct http_client *c = NULL;
    askdb_status rc = ASKDB_ERR_NOMEM;
    long connect_ms;
    int bad = 0;

    *out = NULL;
    if (pthread_once(&curl_once, curl_init_once) != 0 ||
        curl_init_rc != CURLE_OK) {
        snprintf(err, errlen, "cannot start libcurl: %s",
                 curl_easy_strerror(curl_init_rc));
        return ASKDB_ERR_UNSUPPORTED;
    }
    c = calloc(1, sizeof *c);
    if (!c)
        goto out;
    buf_init(&c->body, HTTP_MAX_REPLY);
    buf_init(&c->sse.line, HTTP_MAX_REPLY);
    buf_init(&c->sse.data, HTTP_MAX_REPLY);
    buf_init(&c->stopped_at, HTTP_MAX_REPLY);
    c->url = strdup(cfg->url);
    c->shown = http_url_shown(cfg->url);
    c->userinfo = userinfo_of(cfg->url);
    c->model = strdup(cfg->model ? cfg->model : "");
    c->key = cfg->key ? strdup(cfg->key) : NULL;
    c->key_hint = strdup(cfg->key_hint ? cfg->key_hint : "--api-key");
    c->not_found_hint = cfg->not_found_hint ? strdup(cfg->not_found_hint)
                                            : NULL;
    if (!c->url || !c->shown || !c->model || (cfg->key && !c->key) ||
        !c->key_hint || (userinfo_len(cfg->url) && !c->userinfo) ||
        (cfg->not_found_hint && !c->not_found_hint))
        goto out;
    c->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
    c->retries = cfg->retries > 0 ? cfg->retries : 0;
    c->log_fn = cfg->log_fn;
    c->log_ud = cfg->log_ud;
    c->base_ms = retry_base_ms();
    c->rng = seed_for(c);
    c->retry_after_ms = -1;
    c->refused_ms = -1;
    c->curl = curl_easy_init();
    if (!c->curl) {
        rc = ASKDB_ERR_UNSUPPORTED;
        snprintf(err, errlen, "cannot start libcurl (curl_easy_init failed)");
        goto out;
    }
    connect_ms = c->timeout_ms < CONNECT_TIMEOUT_MS ? c->timeout_ms
                                                    : CONNECT_TIMEOUT_MS;
    bad |= curl_easy_setopt(c->curl, CURLOPT_URL, c->url) != CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https") !=
           CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_POST, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, connect_ms) !=
           CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, c->timeout_ms) !=
           CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "askdb") != CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->curl_err) !=
           CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_write) !=
           CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, c) != CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, on_header) !=
           CURLE_OK;
    bad |= curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, c) != CURLE_OK;
    if (bad) {
        rc = ASKDB_ERR_UNSUPPORTED;
        snprintf(err, errlen, "this libcurl lacks an option askdb needs "
                              "(libcurl 7.85 or newer is required)");
        goto out;
    }
    *out = c;
    c = NULL;
    rc = ASKDB_OK;
out:
    if (rc == ASKDB_ERR_NOMEM)
        snprintf(err, errlen, "out of memory creating the HTTP client");
    http_client_free(c);
    return rc;
}

void http_client_free(struct http_client *c)
{
    if (!c)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    free(c->url);
    free(c->shown);
    free(c->userinfo);
    free(c->model);
    free(c->key);
    free(c->key_hint);
    free(c->not_found_hint);
    buf_free(&c->body);
    buf_free(&c->sse.line);
    buf_free(&c->sse.data);
    buf_free(&c->stopped_at);
    free(c);
}

char *http_endpoint(const char *base, const char *dflt, const char *root,
                    const char *suffix)
{
    struct buf b;
    const char *a;
    size_t n, slen = strlen(suffix);

    if (!base || !*base)
        base = dflt;
    /* The path ends where a query or fragment starts (Azure's
    ** "?api-version=..."): the suffix goes before them. */
    n = strcspn(base, "?#");
    while (n && base[n - 1] == '/')
        n--;
    buf_init(&b, 0);
    buf_append(&b, base, n);
    a = strstr(base, "://");
    if (root && a && a + 3 <= base + n &&
        !memchr(a + 3, '/', n - (size_t)(a + 3 - base)))
        buf_puts(&b, root);   /* no path at all */
    if (n < slen || memcmp(base + n - slen, suffix, slen) != 0)
        buf_puts(&b, suffix);
    buf_puts(&b, base + strcspn(base, "?#"));
    return buf_steal(&b);
}

int http_url_check(const char *url, char *err, size_t errlen)
{
    const char *why = NULL;
    char *shown = NULL;
    CURLUcode uc = CURLUE_OK;
    CURLU *u;
    size_t k;

    if (strncasecmp(url, "http://", 7) != 0 &&
        strncasecmp(url, "https://", 8) != 0) {
        why = "must start with http:// or https://";
    } else {
        /* libcurl takes "http:///v1" as the host "v1"; a user means a
        ** host there. */
        k = strcspn(url + 8 - (url[4] == ':'), "/?#");
        if (k == 0)
            why = "names no host";
    }
    if (!why) {
        u = curl_url();
        uc = u ? curl_url_set(u, CURLUPART_URL, url, 0) : CURLUE_OUT_OF_MEMORY;
        curl_url_cleanup(u);
        if (uc == CURLUE_NO_HOST)
            why = "names no host";
        else if (uc)
            why = "is not a valid URL";
    }
    if (!why)
        return 1;
    shown = http_url_shown(url);
    snprintf(err, errlen, "the model URL '%s' %s%s%s%s (give the server's "
             "base URL, e.g. http://localhost:11434/v1, with --llm-url or "
             "ASKDB_LLM_URL)", shown ? shown : "(withheld)", why,
             uc && uc != CURLUE_NO_HOST ? " (" : "",
             uc && uc != CURLUE_NO_HOST ? curl_url_strerror(uc) : "",
             uc && uc != CURLUE_NO_HOST ? ")" : "");
    free(shown);
    return 0;
}

const char *http_url(const struct http_client *c)
{
    return c->shown;
}

/* ------------------------------------------------------------------ */
/* Secrets in messages                                                 */
/* ------------------------------------------------------------------ */

/* Where a URL's authority ends, as libcurl reads it: at the path, the
** query or the fragment. */
#define AUTHORITY_END "/?#"

/* Where url's user part may be, as url_auth() finds it. */
struct url_auth {
    const char *auth;    /* after "scheme://", or url itself when it has no
                            scheme ("user:pass@host:port", as a proxy
                            variable may be given) */
    const char *at;      /* the last '@' before the authority ends, or
                            NULL: "user:password" is [auth, at) */
    const char *last;    /* the last '@' after the authority ends (an
                            unencoded '/', '?' or '#' of a password ended
                            it early), or NULL */
    const char *colon;   /* with last: the first ':' before it (all from
                            there to last may be the password), else NULL */
};

/* The one reading of url's user part for secrets and messages: the
** model's URL and a proxy's. */
static void url_auth(const char *url, struct url_auth *u)
{
    const char *end, *p;
    size_t n;

    /* A scheme is a letter, then letters, digits, '+', '-' or '.'
    ** (RFC 3986), right before "://": a "://" later on, in a password
    ** or a query ("me:pw@h/?next=http://x"), starts no authority. */
    n = isalpha((unsigned char)url[0])
            ? strspn(url, "abcdefghijklmnopqrstuvwxyz"
                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
            : 0;
    u->auth = n && strncmp(url + n, "://", 3) == 0 ? url + n + 3 : url;
    end = u->auth + strcspn(u->auth, AUTHORITY_END);
    u->at = NULL;
    for (p = u->auth; p < end; p++)
        if (*p == '@')
            u->at = p;
    u->last = text_url_ambiguous(u->auth, AUTHORITY_END, &u->colon);
}

/* Length of url's "user:password" (before an '@' of the authority), or
** 0 when it has none. */
static size_t userinfo_len(const char *url)
{
    struct url_auth u;

    url_auth(url, &u);
    return u.at ? (size_t)(u.at - u.auth) : 0;
}

/* url's "user:password", malloc()ed; NULL when none (or out of memory). */
static char *userinfo_of(const char *url)
{
    struct url_auth u;
    size_t n;
    char *r;

    url_auth(url, &u);
    n = u.at ? (size_t)(u.at - u.auth) : 0;
    if (!n)
        return NULL;
    r = malloc(n + 1);
    if (r) {
        memcpy(r, u.auth, n);
        r[n] = '\0';
    }
    return r;
}

char *http_url_shown(const char *url)
{
    struct url_auth u;
    struct buf b;

    url_auth(url, &u);
    buf_init(&b, 0);
    if (u.colon) {
        /* An '@' after the authority ends (http://u:pa/ss@host/v1): all
        ** from the first ':' to the last '@' may be the password's. */
        buf_append(&b, url, (size_t)(u.colon - url));
        buf_puts(&b, ":xxx");
        buf_puts(&b, u.last);
    } else if (u.at) {
        buf_append(&b, url, (size_t)(u.auth - url));
        buf_puts(&b, u.at + 1);
    } else {
        buf_puts(&b, url);
    }
    return buf_steal(&b);
}

/* First occurrence of sec (len bytes) in s[from..n), or n. */
static size_t find_secret(const char *s, size_t n, size_t from,
                          const char *sec, size_t len)
{
    const char *p;

    while (len && from + len <= n) {
        p = memchr(s + from, sec[0], n - len + 1 - from);
        if (!p)
            break;
        if (memcmp(p, sec, len) == 0)
            return (size_t)(p - s);
        from = (size_t)(p - s) + 1;
    }
    return n;
}

/*
** Append s (n bytes) to out with every occurrence of the client's secrets
** - the API key and the URL's "user:password" - replaced by "[redacted]".
** Keys shorter than REDACT_MIN_KEY are placeholders, not secrets.
*/
static void put_redacted(const struct http_client *c, struct buf *out,
                         const char *s, size_t n)
{
    const char *sec[2] = {NULL, NULL};
    size_t len[2] = {0, 0}, i = 0, at, best;
    int k, which;

    if (c && c->key && strlen(c->key) >= REDACT_MIN_KEY) {
        sec[0] = c->key;
        len[0] = strlen(c->key);
    }
    if (c && c->userinfo && strlen(c->userinfo) >= REDACT_MIN_KEY) {
        sec[1] = c->userinfo;
        len[1] = strlen(c->userinfo);
    }
    while (i < n) {
        best = n;
        which = -1;
        for (k = 0; k < 2; k++) {
            if (!sec[k])
                continue;
            at = find_secret(s, n, i, sec[k], len[k]);
            if (at < best) {
                best = at;
                which = k;
            }
        }
        buf_append(out, s + i, best - i);
        if (which < 0)
            break;
        buf_puts(out, "[redacted]");
        i = best + len[which];
    }
}

void http_put_message(const struct http_client *c, struct buf *m,
                      const char *s, size_t n)
{
    struct buf r;

    buf_init(&r, 0);
    put_redacted(c, &r, s, n);
    if (buf_err(&r))
        buf_puts(m, "(withheld: out of memory)");
    else
        http_put_snippet(m, r.data ? r.data : "", r.len);
    buf_free(&r);
}

void http_set_error(const struct http_client *c, char *err, size_t errlen,
                    const char *fmt, ...)
{
    struct buf m, r;
    va_list ap;

    if (errlen == 0)
        return;
    buf_init(&m, 0);
    va_start(ap, fmt);
    buf_vprintf(&m, fmt, ap);
    va_end(ap);
    buf_init(&r, 0);
    if (!buf_err(&m))
        put_redacted(c, &r, m.data ? m.data : "", m.len);
    snprintf(err, errlen, "%s", buf_err(&m) || buf_err(&r)
                                    ? "(message withheld: out of memory)"
                                    : r.data ? r.data : "");
    buf_free(&m);
    buf_free(&r);
}

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

static const char *reason_phrase(long code)
{
    switch (code) {
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 407: return "Proxy Authentication Required";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 529: return "Overloaded";
    default: return "";
    }
}

void http_put_snippet(struct buf *m, const char *s, size_t n)
{
    size_t i, k, cut = n;

    while (cut && (s[cut - 1] == ' ' || s[cut - 1] == '\n' ||
                   s[cut - 1] == '\r' || s[cut - 1] == '\t'))
        cut--;
    n = cut;
    cut = text_cut(s, cut, SNIPPET_MAX);
    /* Control characters (C0, DEL, C1) become spaces and bytes that are
    ** not UTF-8 U+FFFD: the message may reach a terminal. */
    for (i = 0; i < cut; i += k) {
        const unsigned char *u = (const unsigned char *)s + i;
        k = u[0] < 0x20 ? 1 : text_char_len(s + i, cut - i, 0);
        if (u[0] < 0x20 || u[0] == 0x7f || (u[0] == 0xc2 && u[1] <= 0x9f))
            buf_putc(m, ' ');
        else if (!k)
            buf_puts(m, TEXT_REPLACEMENT);
        else
            buf_append(m, s + i, k);
        if (!k)
            k = 1;
    }
    if (cut < n)
        buf_puts(m, "...");
}

/* First place of the ASCII tag tag (e.g. "<title", any case) in s (n
** bytes), or NULL. */
static const char *find_tag(const char *s, size_t n, const char *tag)
{
    size_t i, k = strlen(tag);

    for (i = 0; i + k <= n; i++)
        if (strncasecmp(s + i, tag, k) == 0)
            return s + i;
    return NULL;
}

/* The text of an HTML page's <title> in body (len bytes), white space
** before it skipped: its start, and its length in *n; NULL when body has
** none, or a blank one. */
static const char *html_title(const char *body, size_t len, size_t *n)
{
    const char *t = find_tag(body, len, "<title"), *end;

    if (!t)
        return NULL;
    t = memchr(t, '>', len - (size_t)(t - body));
    if (!t)
        return NULL;
    t++;
    end = find_tag(t, len - (size_t)(t - body), "</title");
    if (!end)
        return NULL;
    while (t < end && isspace((unsigned char)*t))
        t++;
    *n = (size_t)(end - t);
    return *n ? t : NULL;
}

/*
** The title t (n bytes) with HTML's character references read: the five
** of XML (&amp; &lt; &gt; &quot; &apos;), &nbsp; and the numeric ones
** (&#8212; &#x2014;); others are left as written. A proxy's page says
** "Bad Gateway &amp; more" for "Bad Gateway & more". Into b.
*/
static void html_unescape(struct buf *b, const char *t, size_t n)
{
    static const struct { const char *name; const char *text; } named[] = {
        {"amp;", "&"}, {"lt;", "<"}, {"gt;", ">"}, {"quot;", "\""},
        {"apos;", "'"}, {"nbsp;", " "}};
    size_t i = 0, k, len;
    unsigned long cp;
    char *end, num[16];

    while (i < n) {
        if (t[i] != '&') {
            buf_putc(b, t[i++]);
            continue;
        }
        for (k = 0; k < sizeof named / sizeof named[0]; k++) {
            len = strlen(named[k].name);
            if (n - i - 1 >= len && memcmp(t + i + 1, named[k].name, len) == 0)
                break;
        }
        if (k < sizeof named / sizeof named[0]) {
            buf_puts(b, named[k].text);
            i += 1 + strlen(named[k].name);
            continue;
        }
        /* &#NNN; or &#xHHH;, a valid scalar value */
        len = 0;
        while (i + 2 + len < n && len < sizeof num - 1 && t[i + 2 + len] != ';')
            len++;
        cp = 0;
        end = NULL;
        if (n - i > 2 && t[i + 1] == '#' && i + 2 + len < n &&
            t[i + 2 + len] == ';' && len > 0 && len < sizeof num - 1) {
            memcpy(num, t + i + 2, len);
            num[len] = '\0';
            cp = num[0] == 'x' || num[0] == 'X' ? strtoul(num + 1, &end, 16)
                                                : strtoul(num, &end, 10);
        }
        if (!end || *end || end == num || cp == 0 || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF)) {
            buf_putc(b, t[i++]);
            continue;
        }
        if (cp < 0x80) {
            buf_putc(b, (char)cp);
        } else if (cp < 0x800) {
            buf_putc(b, (char)(0xC0 | (cp >> 6)));
            buf_putc(b, (char)(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            buf_putc(b, (char)(0xE0 | (cp >> 12)));
            buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
            buf_putc(b, (char)(0x80 | (cp & 0x3F)));
        } else {
            buf_putc(b, (char)(0xF0 | (cp >> 18)));
            buf_putc(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
            buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
            buf_putc(b, (char)(0x80 | (cp & 0x3F)));
        }
        i += 2 + len + 1;
    }
}

/* Append ": <what the server said>" from an error body: error.message,
** error (a string), message or detail; a page's title, as "an HTML page:
** TITLE" (a proxy's error page, whose first bytes are markup); else the
** raw text. Secrets are redacted in the whole text before it is cut. */
static void put_body_message(const struct http_client *c, struct buf *m,
                             const char *body, size_t len)
{
    json_t *root = NULL, *e;
    const char *s = NULL, *title;
    size_t tlen = 0;

    if (!body || len == 0)
        return;
    root = json_loadb(body, len, 0, NULL);
    title = root ? NULL : html_title(body, len, &tlen);
    if (title) {
        struct buf t;

        buf_init(&t, 0);
        html_unescape(&t, title, tlen < 4096 ? tlen : 4096);
        buf_puts(m, ": an HTML page: ");
        if (t.data)
            http_put_message(c, m, t.data, t.len);
        buf_free(&t);
        return;
    }
    if (root) {
        e = json_object_get(root, "error");
        s = jsonx_str(e, "message");
        if (!s && json_is_string(e))
            s = json_string_value(e);
        if (!s)
            s = jsonx_str(root, "message");
        if (!s)
            s = jsonx_str(root, "detail");
    }
    buf_puts(m, ": ");
    if (s)
        http_put_message(c, m, s, strlen(s));
    else
        http_put_message(c, m, body, len);
    json_decref(root);
}

static void put_retries(struct buf *m, int n)
{
    if (n > 0)
        buf_printf(m, " after %d %s", n, n == 1 ? "retry" : "retries");
}

/* Why a server's Retry-After was not waited for: it asked for longer than
** the request's time limit had left. Not for want of retries: a longer
** --llm-timeout would have waited for it. */
static void put_refused_wait(const struct http_client *c, struct buf *m)
{
    long waited = c->timeout_ms - c->left_ms;

    buf_printf(m, " (its Retry-After asked for a wait of %ld s, more than ",
               (c->refused_ms + 999) / 1000);
    if (waited > 0)
        buf_printf(m, "the %ld ms left of --llm-timeout %ld after waiting "
                      "%ld ms", c->left_ms, c->timeout_ms, waited);
    else
        buf_printf(m, "--llm-timeout %ld allows", c->timeout_ms);
    buf_printf(m, ": try again later, or raise --llm-timeout to %ld or "
                  "more)", waited + c->refused_ms);
}

static int put_relay(const struct http_client *c, struct buf *m);

/* The message for an HTTP error status. */
static void describe_status(struct http_client *c, long code, int attempt,
                            struct buf *m)
{
    const char *reason = reason_phrase(code);
    const char *sp = *reason ? " " : "";
    char *to = NULL;
    int relayed = 0;

    if (code >= 300 && code < 400 &&
        curl_easy_getinfo(c->curl, CURLINFO_REDIRECT_URL, &to) == CURLE_OK &&
        to && *to) {
        /* Never followed: the API key would go wherever it points. */
        buf_printf(m, "model endpoint %s answered %ld%s%s: the endpoint "
                      "redirected to ", c->shown, code, sp, reason);
        http_put_message(c, m, to, strlen(to));
        buf_puts(m, "; give that URL as --llm-url (askdb does not follow "
                    "redirects, which could take the API key to another "
                    "host)");
        return;
    }
    if (code == 429) {
        buf_printf(m, "model endpoint %s rate limited the request (429 %s)",
                   c->shown, reason);
        put_retries(m, attempt);
    } else {
        buf_printf(m, "model endpoint %s answered %ld%s%s", c->shown, code,
                   sp, reason);
        relayed = put_relay(c, m);
        put_retries(m, attempt);
    }
    put_body_message(c, m, c->body.data, c->body.len);
    if (c->refused_ms >= 0)
        put_refused_wait(c, m);
    else if (relayed && (code == 502 || code == 504))
        buf_puts(m, " (the proxy answers so itself when it cannot reach the "
                    "server: check that the server is up and that the proxy "
                    "may reach it, or set no_proxy to go around the proxy)");
    else if (code == 401 && c->key)
        buf_printf(m, " (check the API key: %s)", c->key_hint);
    else if (code == 401)
        buf_printf(m, " (no API key was sent: set one with %s)", c->key_hint);
    else if (code == 403)
        buf_printf(m, " (the API key may not have access to model '%s': "
                      "check %s)", c->model, c->key_hint);
    else if (code == 404)
        buf_printf(m, " (check the URL path and the model name '%s' "
                      "(--model or ASKDB_MODEL)%s%s)", c->model,
                   c->not_found_hint ? "; " : "",
                   c->not_found_hint ? c->not_found_hint : "");
    else if (code == 429)
        buf_puts(m, " (wait a little and try again, raise --retries, "
                    "or check the account's rate limits)");
    else if (code >= 500)
        buf_puts(m, " (the server is failing or overloaded; try again "
                    "later)");
    else if (code >= 300 && code < 400)
        buf_puts(m, " (it redirected without saying where to: redirects "
                    "are not followed; set --llm-url to the final URL)");
}

/* The reason a connection failed, e.g. "connection refused". */
static void put_os_error(struct http_client *c, struct buf *m, CURLcode cc)
{
    long os = 0;
    char tmp[128];

    curl_easy_getinfo(c->curl, CURLINFO_OS_ERRNO, &os);
    if (os == ECONNREFUSED)
        buf_puts(m, "connection refused");
    else if (os && strerror_r((int)os, tmp, sizeof tmp) == 0)
        buf_puts(m, tmp);
    else
        buf_puts(m, c->curl_err[0] ? c->curl_err : curl_easy_strerror(cc));
}

/*
** The proxy libcurl takes from the environment for c's URL (askdb sets
** none of its own): the variable's name in *var and its value, or NULL
** when none is set. no_proxy is not looked at: this names the proxy of a
** failure libcurl has already put on a proxy (no_proxy_for() tells one
** that may not be).
*/
static const char *proxy_env(const struct http_client *c, const char **var)
{
    static const char *const http[] = {"http_proxy", "all_proxy",
                                       "ALL_PROXY", NULL};
    static const char *const https[] = {"https_proxy", "HTTPS_PROXY",
                                        "all_proxy", "ALL_PROXY", NULL};
    const char *const *v;
    const char *val;

    for (v = strncasecmp(c->url, "https:", 6) == 0 ? https : http; *v; v++) {
        val = getenv(*v);
        if (val && *val) {
            *var = *v;
            return val;
        }
    }
    return NULL;
}

/* Whether the IP address ip (af's: 4 or 16 bytes) is in t[0..len): an
** address, or one with "/bits" (none or 0: that address alone). */
static int ip_in_range(int af, const unsigned char *ip, const char *t,
                       size_t len)
{
    unsigned char net[16];
    char a[64], *slash;
    long bits = 0, all = af == AF_INET ? 32 : 128;

    if (len >= sizeof a)
        return 0;
    memcpy(a, t, len);
    a[len] = '\0';
    slash = strchr(a, '/');
    if (slash) {
        *slash = '\0';
        bits = strtol(slash + 1, NULL, 10);
    }
    if (bits <= 0)
        bits = all;
    if (bits > all || inet_pton(af, a, net) != 1 ||
        memcmp(ip, net, (size_t)bits / 8) != 0)
        return 0;
    return bits % 8 == 0 ||
           ((ip[bits / 8] ^ net[bits / 8]) & (0xFF00 >> bits % 8) & 0xFF) == 0;
}

/*
** Whether the no_proxy list names host (n bytes), as libcurl reads it:
** "*" names every host; else entries between commas or blanks, each a
** name that covers itself and its subdomains (a leading and a trailing
** '.' ignored, and ASCII case) or, when host is an IP address, an address
** or a range of them ("10.0.0.0/8"). Where libcurl's versions differ
** (7.88 never matches an IPv6 range) this says named: a failure is then
** left the model's, never wrongly put on a proxy that was not used.
** list and host are C strings (a variable's value, libcurl's host part)
** and n is strlen(host): inet_pton() reads host to its NUL.
*/
static int no_proxy_names(const char *list, const char *host, size_t n)
{
    unsigned char ip[16];
    char h[64];
    size_t len;
    int af = 0;

    if (strcmp(list, "*") == 0)
        return 1;
    if (n > 2 && host[0] == '[' && host[n - 1] == ']' && n - 2 < sizeof h) {
        memcpy(h, host + 1, n - 2);
        h[n - 2] = '\0';
        af = inet_pton(AF_INET6, h, ip) == 1 ? AF_INET6 : 0;
    } else if (inet_pton(AF_INET, host, ip) == 1) {
        af = AF_INET;
    } else if (n && host[n - 1] == '.') {
        n--;
    }
    for (;; list += len) {
        list += strspn(list, " \t,");
        len = strcspn(list, " \t,");
        if (!len)
            return 0;
        if (af) {
            if (ip_in_range(af, ip, list, len))
                return 1;
            continue;
        }
        if (list[len - 1] == '.' && len > 1)
            len--;
        if (list[0] == '.' && len > 1) {
            list++;
            len--;
        }
        if ((len == n || (len < n && host[n - len - 1] == '.')) &&
            strncasecmp(host + n - len, list, len) == 0)
            return 1;
    }
}

/*
** Whether no_proxy (NO_PROXY when that is unset or empty, as libcurl
** reads them) names the host of c's URL, so that libcurl goes there
** directly whatever proxy_env() says. libcurl does not say where it
** connected when the connection failed: a refused one is told the
** proxy's or the model's by this.
*/
static int no_proxy_for(const struct http_client *c)
{
    const char *np = getenv("no_proxy");
    char *host = NULL;
    CURLU *u;
    int named = 0;

    if (!np || !*np)
        np = getenv("NO_PROXY");
    if (!np || !*np)
        return 0;
    u = curl_url();
    if (u && curl_url_set(u, CURLUPART_URL, c->url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
        named = no_proxy_names(np, host, strlen(host));
    curl_free(host);
    curl_url_cleanup(u);
    return named;
}

/* Append the proxy p (proxy_env()'s, from the variable var) as "the proxy
** HOST:PORT (https_proxy)": its scheme and host, without the
** "user:password@" it may hold (url_auth()) and without any path. */
static void put_proxy(struct buf *m, const char *p, const char *var)
{
    struct url_auth u;
    const char *host;

    if (!p) {
        buf_puts(m, "the proxy");
        return;
    }
    url_auth(p, &u);
    /* With an '@' after the authority's end (http://u:pa/ss@proxy:3128)
    ** all to that last '@' may be the password's, and goes. */
    host = u.last ? u.last + 1 : u.at ? u.at + 1 : u.auth;
    buf_puts(m, "the proxy ");
    http_put_snippet(m, p, (size_t)(u.auth - p));
    http_put_snippet(m, host, strcspn(host, AUTHORITY_END));
    buf_printf(m, " (%s)", var);
}

/* The message for the proxy p (from the variable var) that did not
** answer (cc CURLE_COULDNT_CONNECT) or whose name did not resolve. */
static void describe_proxy_down(struct http_client *c, CURLcode cc,
                                const char *p, const char *var,
                                struct buf *m)
{
    buf_puts(m, "cannot reach ");
    put_proxy(m, p, var);
    buf_printf(m, " on the way to the model at %s: ", c->shown);
    if (cc == CURLE_COULDNT_CONNECT)
        put_os_error(c, m, cc);
    else
        buf_puts(m, "cannot resolve the proxy's host name");
    buf_printf(m, " (check the proxy's address%s%s and that it is running, "
                  "or set no_proxy to go around it)", var ? " in " : "",
               var ? var : "");
}

/* The proxy c's request went through, as proxy_env() (NULL: none, or
** no_proxy names the model's host). */
static const char *proxy_used(const struct http_client *c, const char **var)
{
    const char *p = proxy_env(c, var);

    return p && !no_proxy_for(c) ? p : NULL;
}

/* Whether c's URL is https://: through a proxy, a CONNECT tunnel that
** carries the TLS with the model; else the proxy relays each request. */
static int tunnelled(const struct http_client *c)
{
    return strncasecmp(c->url, "https:", 6) == 0;
}

/* Whether cc is a failure of TLS (the handshake or the certificate). */
static int tls_failure(CURLcode cc)
{
    switch (cc) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
        return 1;
    default:
        return 0;
    }
}

/* Whether cc is a connection that ended with no answer. */
static int dropped(CURLcode cc)
{
    return cc == CURLE_RECV_ERROR || cc == CURLE_SEND_ERROR ||
           cc == CURLE_GOT_NOTHING;
}

static int retry_status(long code);

/* The hint after "it answered CODE" to CONNECT. */
static const char *tunnel_hint(long code, const char *proxy)
{
    if (code == 407)
        return proxy && strchr(proxy, '@')
                   ? "check the user and password in the proxy's URL"
                   : "give the proxy's user and password in its URL: "
                     "http://user:password@host:port";
    if (code == 502 || code == 504)
        return "the proxy cannot reach the model's host: check the host in "
               "--llm-url or ASKDB_LLM_URL and that the proxy may reach "
               "it, or set no_proxy to go around the proxy";
    if (code == 503 || retry_status(code))   /* 429, 500, 529 too */
        return "the proxy is unavailable or overloaded: try again later, "
               "or set no_proxy to go around the proxy";
    return "the proxy does not let this host through: ask its "
           "administrator, or set no_proxy to go around it";
}

/*
** A failure that is the proxy's, not the model's: the proxy refused the
** tunnel (CONNECT answered with an error status: 403, 407) or could not
** open it (502, 503, 504), asked for credentials (a 407 to a plain
** http:// request goes through it), its handshake failed (CURLE_PROXY,
** SOCKS), it did not answer (a refused connection while the request went
** to a proxy: one that is up answers for the model, with a status), its
** name did not resolve, it closed a new connection before answering
** CONNECT (the model's TLS starts only after that answer), or TLS with
** an https:// proxy failed (on a new connection before the tunnel's
** answer, or anywhere for an http:// model, which has no TLS of its
** own). Writes the message and returns 1; 0 when the failure is not one
** of those. The proxy of a relayed request (http:// model) is only named
** beside the model (describe_status, describe): its own 502 or silent
** close cannot be told from the model's.
*/
static int describe_proxy(struct http_client *c, CURLcode cc, long code,
                          int attempt, struct buf *m)
{
    const char *var = NULL, *proxy;
    long tunnel = 0, fresh = 0;
    int before_tunnel;

    curl_easy_getinfo(c->curl, CURLINFO_HTTP_CONNECTCODE, &tunnel);
    curl_easy_getinfo(c->curl, CURLINFO_NUM_CONNECTS, &fresh);
    proxy = proxy_env(c, &var);
    /* A reused connection was a tunnel that worked: its CONNECT was in
    ** an earlier transfer (the code is reset for each one). */
    before_tunnel = tunnelled(c) && fresh > 0 && tunnel == 0;
    if (cc != CURLE_OK && tunnel >= 300) {
        code = tunnel;
    } else if (cc == CURLE_COULDNT_RESOLVE_PROXY ||
               (cc == CURLE_COULDNT_CONNECT && proxy && !no_proxy_for(c))) {
        describe_proxy_down(c, cc, proxy, var, m);
        return 1;
    } else if (tls_failure(cc) && proxy_used(c, &var) &&
               strncasecmp(proxy, "https:", 6) == 0 &&
               (!tunnelled(c) || before_tunnel)) {
        buf_puts(m, "TLS with ");
        put_proxy(m, proxy, var);
        buf_printf(m, " failed on the way to the model at %s: %s (check "
                      "that the proxy speaks TLS, else give it as http://, "
                      "and its certificate, or set no_proxy to go around "
                      "the proxy)", c->shown,
                   c->curl_err[0] ? c->curl_err : curl_easy_strerror(cc));
        return 1;
    } else if (dropped(cc) && before_tunnel && proxy_used(c, &var)) {
        put_proxy(m, proxy, var);
        buf_printf(m, " closed the connection without answering the "
                      "CONNECT to the model at %s", c->shown);
        put_retries(m, attempt);
        buf_puts(m, " (check the proxy's logs, or set no_proxy to go "
                    "around the proxy)");
        return 1;
    } else if (!(cc == CURLE_OK && code == 407) && cc != CURLE_PROXY) {
        return 0;
    }
    put_proxy(m, proxy, var);
    if (cc == CURLE_PROXY) {
        buf_printf(m, " failed to connect to the model at %s: %s (check "
                      "the proxy's address and that it is running, or set "
                      "no_proxy to go around it)", c->shown,
                   c->curl_err[0] ? c->curl_err : curl_easy_strerror(cc));
        return 1;
    }
    buf_printf(m, " %s to the model at %s: it answered %ld%s%s",
               retry_status(code) ? "could not connect"
                                  : "refused to connect",
               c->shown, code, *reason_phrase(code) ? " " : "",
               reason_phrase(code));
    put_retries(m, attempt);
    if (c->refused_ms >= 0)
        put_refused_wait(c, m);
    else
        buf_printf(m, " (%s)", tunnel_hint(code, proxy));
    return 1;
}

/* " through the proxy URL (VAR)" when c's request was relayed by a proxy
** (http:// model); 1 when it was. */
static int put_relay(const struct http_client *c, struct buf *m)
{
    const char *var = NULL, *proxy = tunnelled(c) ? NULL
                                                  : proxy_used(c, &var);

    if (!proxy)
        return 0;
    buf_puts(m, " through ");
    put_proxy(m, proxy, var);
    return 1;
}

/* Build the message for a failed request; returns its status. */
static askdb_status describe(struct http_client *c, CURLcode cc, long code,
                             int attempt, struct buf *m)
{
    long sent = 0;

    if (describe_proxy(c, cc, code, attempt, m))
        return ASKDB_ERR_LLM_UNREACHABLE;

    if (c->stop == HTTP_EVENT_BAD) {
        buf_printf(m, "model at %s sent a streamed event that is not valid "
                      "JSON", c->shown);
        if (c->stopped_at.len) {
            buf_puts(m, " (");
            http_put_message(c, m, c->stopped_at.data, c->stopped_at.len);
            buf_puts(m, ")");
        }
        put_retries(m, attempt);
        buf_puts(m, " (the server or a proxy between garbled the stream; "
                    "check its logs)");
        return ASKDB_ERR_LLM_UNREACHABLE;
    }
    if (c->cut) {
        buf_printf(m, "model at %s ended its streamed reply without the "
                      "end marker (the reply was cut off)", c->shown);
        put_retries(m, attempt);
        buf_puts(m, " (the server or a proxy between may have dropped the "
                    "connection; check its logs)");
        return ASKDB_ERR_LLM_UNREACHABLE;
    }
    if (cc == CURLE_OK) {
        if (code < 100) {
            buf_printf(m, "model endpoint %s did not answer with an HTTP "
                          "status (is --llm-url an HTTP model server?)",
                       c->shown);
            return ASKDB_ERR_LLM;
        }
        describe_status(c, code, attempt, m);
        return ASKDB_ERR_LLM;
    }
    if (c->oom) {
        buf_printf(m, "out of memory reading the reply from %s", c->shown);
        return ASKDB_ERR_NOMEM;
    }
    if (c->too_big) {
        buf_printf(m, "the reply from model endpoint %s is larger than "
                      "%u MiB (is --llm-url pointing at a model server?)",
                   c->shown, HTTP_MAX_REPLY >> 20);
        return ASKDB_ERR_LLM;
    }
    switch (cc) {
    case CURLE_COULDNT_CONNECT:
        buf_printf(m, "cannot reach model at %s: ", c->shown);
        put_os_error(c, m, cc);
        buf_puts(m, " (is the server running? set --llm-url or "
                    "ASKDB_LLM_URL)");
        break;
    case CURLE_COULDNT_RESOLVE_HOST:
        buf_printf(m, "cannot reach model at %s: cannot resolve the host "
                      "name (check the host in --llm-url or ASKDB_LLM_URL, "
                      "and the network)", c->shown);
        break;
    case CURLE_OPERATION_TIMEDOUT:
        curl_easy_getinfo(c->curl, CURLINFO_REQUEST_SIZE, &sent);
        if (c->events > 0 || (c->mode != MODE_SSE && c->received > 0)) {
            /* It answered, slowly: a long stream, or a body trickling
            ** in ("did not answer" would send the user after a dead
            ** server). A stream of keep-alive comments alone has not. */
            buf_printf(m, "model at %s did not finish its reply within "
                          "%ld ms (it was still sending it: the model may "
                          "be slow or the reply long; raise --llm-timeout, "
                          "in milliseconds, or lower --max-tokens)",
                       c->shown, c->timeout_ms);
        } else if (sent > 0) {
            buf_printf(m, "model at %s did not answer within %ld ms (the "
                          "model may be slow or overloaded; raise "
                          "--llm-timeout, in milliseconds)",
                       c->shown, c->timeout_ms);
        } else {
            buf_printf(m, "cannot reach model at %s: connecting timed out",
                       c->shown);
            put_retries(m, attempt);
            buf_puts(m, " (is the host up? check --llm-url or "
                        "ASKDB_LLM_URL)");
        }
        break;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        if (c->events > 0)
            buf_printf(m, "model at %s dropped the connection in the middle "
                          "of a streamed reply", c->shown);
        else if (cc == CURLE_GOT_NOTHING)
            buf_printf(m, "model at %s closed the connection without "
                          "replying", c->shown);
        else if (cc == CURLE_PARTIAL_FILE)
            buf_printf(m, "model at %s cut its reply short", c->shown);
        else
            buf_printf(m, "connection to model at %s failed while %s: %s",
                       c->shown,
                       cc == CURLE_SEND_ERROR ? "sending" : "receiving",
                       c->curl_err[0] ? c->curl_err : curl_easy_strerror(cc));
        if (put_relay(c, m)) {
            put_retries(m, attempt);
            buf_puts(m, " (the proxy, or the server behind it, may be "
                        "crashing or overloaded: check their logs, or set "
                        "no_proxy to go around the proxy)");
            break;
        }
        put_retries(m, attempt);
        buf_puts(m, " (the server may be crashing or overloaded; check its "
                    "logs)");
        break;
    default:
        buf_printf(m, "cannot reach model at %s: %s", c->shown,
                   curl_easy_strerror(cc));
        if (c->curl_err[0])
            buf_printf(m, " (%s)", c->curl_err);
        buf_puts(m, " (check --llm-url or ASKDB_LLM_URL)");
        break;
    }
    return ASKDB_ERR_LLM_UNREACHABLE;
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

static int retry_status(long code)
{
    /* 408: the server (or a proxy) gave up waiting for the request
    ** before it came whole, so no model ran and another try costs
    ** nothing; OpenAI's and Anthropic's own clients retry it too. */
    return code == 408 || code == 429 || code == 500 || code == 502 ||
           code == 503 || code == 504 || code == 529;
}

/* The status a proxy answered c's CONNECT with when that failed the try
** (cc), else 0. */
static long tunnel_status(struct http_client *c, CURLcode cc)
{
    long tunnel = 0;

    curl_easy_getinfo(c->curl, CURLINFO_HTTP_CONNECTCODE, &tunnel);
    return cc != CURLE_OK && tunnel >= 300 ? tunnel : 0;
}

/* OUT_OK, OUT_RETRY or OUT_FAIL for the outcome of one try. */
static int classify(struct http_client *c, CURLcode cc, long code)
{
    long sent = 0, tunnel = tunnel_status(c, cc);

    /* A proxy that refused the tunnel (403, 407) will refuse it again;
    ** one that could not open it (502, 504: the model's host did not
    ** answer it in time or at all; 503: it is overloaded) has failed on
    ** the way as a gateway in front of the model fails, and is retried
    ** as that gateway's own answer to the request is. One that did not
    ** answer, or whose name did not resolve, fails as a model server's
    ** own refused connection or unknown name does (the default below),
    ** not retried: a proxy that is down now is down a second later too,
    ** and the backoff would only delay the message that names it. */
    if (tunnel)
        return retry_status(tunnel) ? OUT_RETRY : OUT_FAIL;
    switch (cc) {
    case CURLE_OK:
        if (code >= 200 && code < 300)
            return OUT_OK;
        return retry_status(code) ? OUT_RETRY : OUT_FAIL;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return c->too_big || c->oom ? OUT_FAIL : OUT_RETRY;
    case CURLE_WRITE_ERROR:   /* on_write stopped it */
        /* An event that cannot be read is what a proxy or a load
        ** balancer that cuts or mangles a stream leaves behind: a fault
        ** of the way, as passing as a dropped connection, and retried as
        ** one (while nothing was delivered: see http_post_json()). */
        return c->stop ? OUT_RETRY : OUT_FAIL;
    case CURLE_OPERATION_TIMEDOUT:
        curl_easy_getinfo(c->curl, CURLINFO_REQUEST_SIZE, &sent);
        return sent == 0 ? OUT_RETRY : OUT_FAIL;
    default:
        return OUT_FAIL;
    }
}

/* Tell the verbose log that a retry waits, how long and why. */
static void log_wait(struct http_client *c, long ms, int attempt, long code)
{
    char msg[256];

    if (!c->log_fn)
        return;
    if (c->retry_after_ms >= 0)
        snprintf(msg, sizeof msg, "waiting %ld ms before retry %d of %d: "
                                  "the server answered %ld and asked to wait "
                                  "(Retry-After)", ms, attempt + 1,
                 c->retries, code);
    else
        snprintf(msg, sizeof msg, "waiting %ld ms before retry %d of %d "
                                  "(backoff after %s)", ms, attempt + 1,
                 c->retries, c->stop == HTTP_EVENT_BUSY
                                 ? "an error in the stream: the server is busy"
                             : c->stop ? "a stream it could not read"
                             : code >= 400 ? "an HTTP error"
                                           : "a failed connection");
    c->log_fn(c->log_ud, "llm", msg);
}

/* Milliseconds to wait before retry number attempt+1. */
static long next_delay_ms(struct http_client *c, int attempt)
{
    long cap = BACKOFF_CAP_MS;

    if (c->retry_after_ms >= 0)
        return c->retry_after_ms;
    if (attempt < 16 && (c->base_ms << attempt) < cap)
        cap = c->base_ms << attempt;
    return (long)(xorshift64(&c->rng) % (uint64_t)(cap + 1));
}

/* Whether some of the reply reached the caller in this try, so that it
** cannot be tried again. */
static int delivered(const struct http_client *c, const struct http_post *req)
{
    if (!req->on_event)
        return 0;
    return req->delivered ? req->delivered(req->ud) != 0 : c->events > 0;
}

#define CANCEL_POLL_MS 50     /* how often a request looks at its cancel */

static int cancelled(const struct http_post *req)
{
    return req->cancel && atomic_load(req->cancel);
}

/* Sleep ms, in slices of CANCEL_POLL_MS while req can be cancelled. */
static void sleep_ms(const struct http_post *req, long ms)
{
    struct timespec ts;
    long slice;

    while (ms > 0 && !cancelled(req)) {
        slice = req->cancel && ms > CANCEL_POLL_MS ? CANCEL_POLL_MS : ms;
        ts.tv_sec = slice / 1000;
        ts.tv_nsec = (slice % 1000) * 1000000L;
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        ms -= slice;
    }
}

/*
** curl_easy_perform(), or, when the request can be cancelled, the same
** transfer on a multi handle polled every CANCEL_POLL_MS so that a cancel
** stops it at once (libcurl's own progress callback may wait a second).
*/
static CURLcode perform(struct http_client *c, const struct http_post *req)
{
    CURLcode cc = CURLE_OK;
    CURLMsg *msg;
    CURLM *multi;
    int running = 1, left;

    if (!req->cancel)
        return curl_easy_perform(c->curl);
    multi = curl_multi_init();
    if (!multi)
        return CURLE_OUT_OF_MEMORY;
    if (curl_multi_add_handle(multi, c->curl) != CURLM_OK) {
        curl_multi_cleanup(multi);
        return CURLE_OUT_OF_MEMORY;
    }
    for (;;) {
        if (curl_multi_perform(multi, &running) != CURLM_OK) {
            cc = CURLE_FAILED_INIT;
            break;
        }
        if (!running) {
            while ((msg = curl_multi_info_read(multi, &left)) != NULL)
                if (msg->msg == CURLMSG_DONE)
                    cc = msg->data.result;
            break;
        }
        if (cancelled(req)) {
            cc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        if (curl_multi_poll(multi, NULL, 0, CANCEL_POLL_MS, NULL) !=
            CURLM_OK) {
            cc = CURLE_FAILED_INIT;
            break;
        }
    }
    curl_multi_remove_handle(multi, c->curl);
    curl_multi_cleanup(multi);
    return cc;
}

/*
** Whether the body of a 2xx reply is JSON that was cut short: it starts
** as JSON ('{' or '['), and the parse fails at its very end (input ended
** early, or a token or UTF-8 character there is half there). The
** connection closed before the rest, with no length to tell HTTP so.
*/
static int body_cut(struct http_client *c)
{
    const char *p = c->body.data;
    size_t i = 0, n = c->body.len;
    long code = 0;
    json_error_t e;
    json_t *j;
    int bad;

    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
    if (code < 200 || code >= 300 || !p)
        return 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' ||
                     p[i] == '\n'))
        i++;
    if (i == n || (p[i] != '{' && p[i] != '['))
        return 0;
    j = json_loadb(p, n, JSON_ALLOW_NUL, &e);
    if (j) {
        json_decref(j);
        return 0;
    }
    bad = json_error_code(&e) == json_error_invalid_syntax ||
          json_error_code(&e) == json_error_invalid_utf8;
    return json_error_code(&e) == json_error_premature_end_of_input ||
           (bad && e.position >= 0 && (size_t)e.position + 4 >= n);
}

/* One try: reset the per-try state and perform. */
static CURLcode try_once(struct http_client *c, const struct http_post *req,
                         struct curl_slist *hdrs)
{
    CURLcode cc;

    c->req = req;
    buf_reset(&c->body);
    sse_reset(&c->sse);
    c->mode = MODE_UNKNOWN;
    c->received = 0;
    c->too_big = 0;
    c->oom = 0;
    c->events = 0;
    c->retry_after_ms = -1;
    c->cut = 0;
    c->stop = 0;
    buf_reset(&c->stopped_at);
    c->curl_err[0] = '\0';
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, req->body);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     (curl_off_t)req->len);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdrs);
    cc = perform(c, req);
    if (c->mode == MODE_PEEK)
        c->mode = MODE_BODY;   /* too short to tell: it is what came */
    if (cc == CURLE_OK && c->mode == MODE_SSE) {
        /* The last event may lack its blank line; then the marker. An
        ** unended last event that cannot be read was cut, not garbled. */
        long whole = c->events;
        int open = sse_open(c);

        sse_finish(c);
        if (open && c->stop == HTTP_EVENT_BAD)
            c->stop = 0;
        if (c->stop) {
            cc = CURLE_WRITE_ERROR;   /* as if on_write had stopped it */
        } else if (req->ended && !req->ended(req->ud)) {
            /* Cut off: the unfinished last line counts as no event, so
            ** a stream cut before its first whole event is retried. */
            c->cut = 1;
            c->events = whole;
            cc = CURLE_PARTIAL_FILE;
        }
    } else if (cc == CURLE_OK && c->mode == MODE_BODY && body_cut(c)) {
        cc = CURLE_PARTIAL_FILE;   /* HTTP saw its end, the JSON did not */
    }
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, (char *)NULL);
    return cc;
}

/* The request headers: ours, then the provider's. NULL when out of memory. */
static struct curl_slist *make_headers(const struct http_post *req)
{
    struct curl_slist *h = NULL, *t;
    const char *fixed[4];
    const char *const *p;
    int i;

    fixed[0] = "Content-Type: application/json";
    fixed[1] = req->stream ? "Accept: text/event-stream"
                           : "Accept: application/json";
    fixed[2] = "Expect:";   /* no 100-continue round trip */
    fixed[3] = NULL;
    for (i = 0; fixed[i]; i++) {
        t = curl_slist_append(h, fixed[i]);
        if (!t)
            goto fail;
        h = t;
    }
    for (p = req->headers; p && *p; p++) {
        t = curl_slist_append(h, *p);
        if (!t)
            goto fail;
        h = t;
    }
    return h;
fail:
    curl_slist_free_all(h);
    return NULL;
}

askdb_status http_post_json(struct http_client *c, const struct http_post *req,
                            struct http_reply *out, char *err, size_t errlen)
{
    struct curl_slist *hdrs = NULL;
    struct buf m;
    askdb_status rc = ASKDB_OK;
    CURLcode cc;
    long code, waited = 0, delay;
    int attempt, o;

    memset(out, 0, sizeof *out);
    out->body = "";
    c->refused_ms = -1;
    buf_init(&m, 4096);
    hdrs = make_headers(req);
    if (!hdrs) {
        rc = ASKDB_ERR_NOMEM;
        buf_puts(&m, "out of memory building the request headers");
        goto out;
    }
    for (attempt = 0;; attempt++) {
        cc = cancelled(req) ? CURLE_ABORTED_BY_CALLBACK
                            : try_once(c, req, hdrs);
        code = 0;
        curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
        out->status = (int)code;
        out->retries = attempt;
        if (cancelled(req)) {
            rc = ASKDB_ERR_CANCELLED;
            buf_puts(&m, "cancelled");
            goto out;
        }
        o = classify(c, cc, code);
        if (o == OUT_OK)
            break;
        /* Text the caller has had cannot be taken back: another try
        ** would follow half of one reply with all of another, so a
        ** stream that fails after it is reported instead. Nothing of a
        ** failed try is used either way: restart() forgets it before the
        ** next, and a failure leaves the caller no reply text, so no
        ** half-read text ever becomes SQL. */
        if (o == OUT_RETRY && attempt < c->retries && !delivered(c, req)) {
            /* All waits of one request together stay within its time
            ** limit: a server that asks for more is not waited for. */
            delay = next_delay_ms(c, attempt);
            if (delay > c->timeout_ms - waited && c->retry_after_ms >= 0) {
                c->refused_ms = delay;
                c->left_ms = c->timeout_ms - waited;
            } else {
                if (delay > c->timeout_ms - waited)
                    delay = c->timeout_ms - waited;
                log_wait(c, delay, attempt,
                         code ? code : tunnel_status(c, cc));
                sleep_ms(req, delay);
                waited += delay;
                if (req->on_event && req->restart)
                    req->restart(req->ud);
                continue;   /* a cancel in the sleep is reported above */
            }
        }
        if (c->stop == HTTP_EVENT_BUSY)
            break;   /* no retry left: the error it read is the answer */
        rc = describe(c, cc, code, attempt, &m);
        if (code >= 400 && c->mode != MODE_SSE && c->body.data) {
            out->body = c->body.data;   /* the error's own body */
            out->len = c->body.len;
        }
        goto out;
    }
    if (c->mode == MODE_SSE) {
        out->streamed = 1;
    } else if (c->body.data) {
        out->body = c->body.data;
        out->len = c->body.len;
    }
out:
    if (rc != ASKDB_OK)
        http_set_error(c, err, errlen, "%s",
                       buf_err(&m) || !m.data ? "out of memory" : m.data);
    buf_free(&m);
    curl_slist_free_all(hdrs);
    return rc;
}
