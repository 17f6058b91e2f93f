/* http.h - POST JSON to a model endpoint: keep-alive, timeouts, retries, SSE */
#ifndef ASKDB_LLM_HTTP_H
#define ASKDB_LLM_HTTP_H

#include <stddef.h>

#include <stdatomic.h>

#include "askdb.h"
#include "core/buf.h"

/*
** One http_client per provider wraps one libcurl easy handle, so repeated
** calls reuse the connection. A client is used by one thread at a time;
** different clients may run in parallel (curl_global_init runs once, under
** pthread_once).
**
** Retry policy (up to `retries` retries after the first try):
**   retried     HTTP 408, 429, 500, 502, 503, 504, 529 (also as a proxy's
**               answer to CONNECT: it could not reach the model's host,
**               or is overloaded); connection reset, send
**               or receive errors, an empty reply (CURLE_GOT_NOTHING), a
**               short body (CURLE_PARTIAL_FILE, or a 2xx JSON body that
**               ends before its JSON does: closed early with no length
**               to tell), an HTTP/2 stream or
**               connection reset, a streamed event that cannot be read
**               (HTTP_EVENT_BAD) or that says the server is busy
**               (HTTP_EVENT_BUSY: Anthropic's in-stream overloaded_error),
**               and a timeout *before* the request was sent (the connect
**               phase).
**   not retried other HTTP statuses (400, 401, 403, 404, 413, ...; a redirect
**               is never followed, the key must not go to another
**               host: its message names the Location), a proxy's
**               refusal (its CONNECT answered 403, 407, ..., a 407, a
**               SOCKS failure) and a proxy that does not answer or whose
**               name does not resolve (ASKDB_ERR_LLM_UNREACHABLE, the
**               message names the proxy and its variable; a host that
**               no_proxy names is not the proxy's), connection
**               refused and DNS failures (ASKDB_ERR_LLM_UNREACHABLE at
**               once: nothing is listening, waiting will not help), TLS
**               errors, a timeout *after* the request was sent (the model
**               is slow; another try would multiply the wait), and any
**               failure after some of a streamed reply was delivered
**               (http_post.delivered: its text has already reached the
**               caller; text that reached no callback was not
**               delivered, and such a failure is retried).
** Backoff: full jitter, a random wait in [0, min(8 s, base * 2^n)] with
** base 250 ms, or the server's Retry-After (seconds or HTTP-date) when it
** sends one. All waits of a request together stay within timeout_ms: a
** Retry-After longer than what is left ends the request, and its message
** says so (not "raise --retries"). The environment variable ASKDB_RETRY_BASE_MS
** (0..10000) overrides the base; the test suite sets it to 1 to stay fast.
** The jitter comes from a per-client xorshift state, never shared state.
**
** Replies are read into a buffer capped at HTTP_MAX_REPLY bytes. Error
** messages name the URL and say what to do; they never contain the API key
** or the URL's "user:password": both are replaced by "[redacted]" in the
** whole text before anything is cut to length (a cut must not leave half a
** key), and the URL is shown without its credentials.
*/

#define HTTP_MAX_REPLY (8u << 20)

/* What an http_event_fn says of the event it was given. */
enum {
    HTTP_EVENT_OK,   /* read, or rightly ignored (a keep-alive): go on */
    HTTP_EVENT_BAD,  /* cannot be read: the stream is broken, and the
                        transfer stops (retried as a dropped connection
                        while nothing was delivered) */
    HTTP_EVENT_BUSY  /* read: an in-band error that an HTTP status would
                        have said is worth another try (overloaded, rate
                        limited). The transfer stops and is retried as a
                        529 is while nothing was delivered; with no retry
                        left it ends as read, and the caller reports the
                        error */
};

/* Called for each complete server-sent event: `event` is the event name
** ("message" when none was given), `data` its data lines joined by "\n"
** (NUL-terminated, len bytes). Both are borrowed for the call only.
** Returns HTTP_EVENT_OK, HTTP_EVENT_BAD or HTTP_EVENT_BUSY. */
typedef int (*http_event_fn)(void *ud, const char *event, const char *data,
                             size_t len);

struct http_config {
    const char *url;       /* full endpoint URL */
    const char *model;     /* model name, for error messages */
    const char *key;       /* API key, only to redact it; may be NULL */
    const char *key_hint;  /* where keys come from, e.g. "--api-key, ..." */
    const char *not_found_hint; /* what a 404's message adds about the
                                   URL, or NULL */
    int timeout_ms;        /* each try, and the waits between tries
                              together; <= 0 means 120000 */
    int retries;           /* retries after the first try; < 0 means 0 */
    askdb_log_fn log_fn;   /* where a wait before a retry is told, or NULL */
    void *log_ud;
};

struct http_post {
    const char *body;           /* JSON request body */
    size_t len;
    const char *const *headers; /* "Name: value" lines, NULL-terminated */
    int stream;                 /* ask for a stream of server-sent events */
    /* Non-NULL: how to read the events of a stream. A 2xx reply is one
    ** when the request set stream and the reply is not labelled
    ** application/json, or when its first bytes are those of events
    ** ("data:", "event:", ':'), whatever its label and whether asked for
    ** or not; its events go here as they come, and the reply is
    ** http_reply.streamed. NULL: every reply is a body. */
    http_event_fn on_event;
    void *ud;
    const atomic_int *cancel;   /* non-zero stops the request within 50 ms
                                   (ASKDB_ERR_CANCELLED), or NULL */
    /* With on_event: nonzero once the stream's end marker came (OpenAI's
    ** [DONE], Anthropic's message_stop). A stream that ends without it
    ** was cut off and fails like a dropped connection, never an answer.
    ** NULL: any end of the stream is its end. */
    int (*ended)(void *ud);
    /* With on_event: nonzero once some of the reply reached the caller
    ** (its text was passed on): a stream that fails after that is not
    ** tried again. NULL: once any event came. */
    int (*delivered)(void *ud);
    /* With on_event: called before a stream is tried again, to forget
    ** what the failed try's events left (usage, an in-band error). NULL:
    ** nothing to forget. */
    void (*restart)(void *ud);
};

struct http_reply {
    int status;            /* HTTP status of the last try, 0 if none */
    int retries;           /* retries made */
    int streamed;          /* 1: the body went to on_event as SSE (see
                              http_post.on_event) */
    const char *body;      /* non-streamed body, borrowed until next call
                              (an error status's too, when it had one) */
    size_t len;
};

struct http_client;

/*
** Create a client for cfg (strings are copied). Returns ASKDB_OK,
** ASKDB_ERR_NOMEM, or ASKDB_ERR_UNSUPPORTED when libcurl cannot start;
** the reason goes to err. *out is the caller's (http_client_free).
*/
askdb_status http_client_new(const struct http_config *cfg,
                             struct http_client **out, char *err,
                             size_t errlen);
void http_client_free(struct http_client *c);

/*
** POST req->body to the client's URL with the retry policy above. Returns
** ASKDB_OK when the server answered 2xx (out->body or the events hold the
** reply), ASKDB_ERR_LLM for an HTTP error status or an oversize reply,
** ASKDB_ERR_LLM_UNREACHABLE for connection failures and timeouts, with the
** message in err. out is filled in every case.
*/
askdb_status http_post_json(struct http_client *c, const struct http_post *req,
                            struct http_reply *out, char *err, size_t errlen);

/*
** The endpoint URL for a base URL: base (or dflt when base is NULL or
** empty) without trailing slashes, plus root (e.g. "/v1", or NULL) when
** base has no path at all, plus suffix (e.g. "/chat/completions") unless
** it already ends in it; a query or fragment of base stays at the end
** ("https://h/v1?api-version=1" -> "https://h/v1/chat/completions?
** api-version=1"). malloc()ed, the caller frees it; NULL when out of
** memory.
*/
char *http_endpoint(const char *base, const char *dflt, const char *root,
                    const char *suffix);

/*
** Whether url (a base URL as the user gave it) can be posted to: it starts
** with http:// or https:// (any case), names a host, and libcurl can parse
** it (no spaces, a port from 0 to 65535). Returns 1, or 0 with what is
** wrong in err ("the model URL '...' ...", credentials not shown).
*/
int http_url_check(const char *url, char *err, size_t errlen);

/* Append s (n bytes, untrusted) to m as printable text of at most 200
** bytes, cut on a UTF-8 character boundary, with "..." when cut. */
void http_put_snippet(struct buf *m, const char *s, size_t n);

/* http_put_snippet() of s after c's secrets (see above) were redacted in
** all of it. c may be NULL (nothing to redact). */
void http_put_message(const struct http_client *c, struct buf *m,
                      const char *s, size_t n);

/* Format a message into err (errlen bytes), c's secrets redacted before it
** is cut to fit. */
void http_set_error(const struct http_client *c, char *err, size_t errlen,
                    const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* url without a "user:password@" (malloc()ed, NULL when out of memory):
** the form every message shows; a url without "scheme://" is read as
** "user:password@host:port/..." (as a proxy variable may be given). With
** an '@' after the authority's end (a password's unencoded '/', '?' or
** '#' ended it early) all from the first ':' to the last '@' is "xxx". */
char *http_url_shown(const char *url);

/*
** Parse data (len bytes) as a whole server-sent-events stream, the way a
** streamed reply is parsed: fed in pieces of cuts[0], cuts[1], ... bytes
** (clipped to what is left; the rest goes as one last piece), then ended,
** with each complete event handed to on_event(ud, ...). Returns 0; -1
** when a line or an event outgrew HTTP_MAX_REPLY or memory ran out (where
** a transfer would be aborted); or what on_event returned when it was not
** HTTP_EVENT_OK (parsing stops there, as a transfer would). For the
** tests and fuzzers.
*/
int http_sse_parse(const char *data, size_t len, const size_t *cuts,
                   size_t ncuts, http_event_fn on_event, void *ud);

/* The endpoint URL as messages show it, without credentials (borrowed,
** lives as long as the client). */
const char *http_url(const struct http_client *c);

#endif
