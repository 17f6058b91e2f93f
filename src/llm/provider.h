/* provider.h - what the HTTP providers share: setup, the request and the
** reply assembly; each API only builds its body and reads its replies. */
#ifndef ASKDB_LLM_PROVIDER_H
#define ASKDB_LLM_PROVIDER_H

#include <stddef.h>

#include <jansson.h>

#include "askdb.h"
#include "core/buf.h"
#include "llm/base.h"
#include "llm/http.h"

/*
** The reply being assembled, from one JSON body or from many streamed
** events. Text pieces go to the request's on_token as they arrive (when
** streaming). Token counts stay -1 unless the provider says.
*/
struct llm_acc {
    const struct http_client *http; /* redacts its secrets in messages */
    struct buf text;
    askdb_token_fn on_token;   /* NULL unless streaming */
    void *token_ud;
    long prompt_tokens;
    long completion_tokens;
    int got_text;              /* a text field was present (maybe empty) */
    int ended;                 /* the stream's end marker came */
    int cut;                   /* the provider stopped the reply at
                                  max_tokens (llm_reply.cut) */
    char end[48];              /* why the reply ended, for a message:
                                  'finish_reason "tool_calls"' */
    struct buf error;          /* error the provider reported in-band */
};

struct llm_http;

/*
** One HTTP API: everything that differs between the HTTP providers. Each
** provider file defines one, static and constant.
*/
struct llm_http_api {
    struct llm_vtab vt;        /* name, llm_http_complete, llm_http_destroy */
    const char *what;          /* "OpenAI-compatible", for messages */
    const char *default_base;  /* e.g. "https://api.openai.com/v1" */
    const char *root;          /* added to a base URL with no path (the
                                  vendor SDK's form: "/v1"), or NULL */
    const char *suffix;        /* e.g. "/chat/completions" */
    const char *not_found_hint; /* what a 404 says about the base URL */
    const char *key_hint;      /* where the key comes from, for messages */
    const char *key_domain;    /* the vendor's domain, whose hosts alone
                                  get its key variable ("openai.com") */
    const char *key_header;    /* the key's header line up to the key:
                                  "Authorization: Bearer " */
    const char *fixed_header;  /* header line sent with every request (the
                                  API version), or NULL */
    const char *where;         /* the reply's text field, for messages */
    /* The request body for req (the caller json_decref()s it), NULL when
    ** out of memory. */
    json_t *(*make_body)(const struct llm_http *p,
                         const struct llm_request *req);
    /* One streamed event; ud is the struct llm_acc. HTTP_EVENT_BAD for
    ** an event that should carry part of the reply and cannot be read
    ** (it is never skipped: the reply would lose a piece); keep-alives
    ** and events of unknown kinds that are not JSON are HTTP_EVENT_OK. */
    http_event_fn on_event;
    /* A whole (non-streamed) reply body, a JSON object, into a. */
    void (*read_body)(struct llm_acc *a, const json_t *root);
    /* The body of a 400 (len bytes, untrusted): whether it names a
    ** parameter the model does not take that the next request can do
    ** without (p->adapted gains its bit); NULL when the API has none. */
    int (*adapt)(struct llm_http *p, const char *body, size_t len);
};

/* An HTTP provider: the llm handle of both HTTP APIs. */
struct llm_http {
    llm base;                  /* first: llm_free() frees through it */
    const struct llm_http_api *api;
    struct http_client *http;
    char *key_header;          /* api->key_header and the key, or NULL */
    const char *model;         /* borrowed from the config */
    int stream;
    int max_tokens;            /* config default when the request has none */
    atomic_int adapted;        /* LLM_ADAPT_... bits: what the model refused
                                  once (every request after leaves it) */
};

/* llm_http.adapted: OpenAI's reasoning models (o1, o3, gpt-5...) refuse
** max_tokens for max_completion_tokens, any temperature but their
** default, and (some) stop sequences, which the reply's reading does not
** need. */
#define LLM_ADAPT_MAX_COMPLETION 1
#define LLM_ADAPT_NO_TEMPERATURE 2
#define LLM_ADAPT_NO_STOP 4

/*
** Create the provider of api for cfg: a model name is required, the URL
** (cfg->llm_url, else api->default_base, plus api->root when it has no
** path, plus api->suffix; see http_endpoint()) must be
** http(s), the key must not contain line breaks; the key header is sent
** only when a key is set. Returns ASKDB_OK with *out the caller's
** (llm_free), else ASKDB_ERR_USAGE, ASKDB_ERR_NOMEM or
** ASKDB_ERR_UNSUPPORTED with the reason in err and *out NULL.
*/
askdb_status llm_http_new(const askdb_config *cfg,
                          const struct llm_http_api *api, llm **out,
                          char *err, size_t errlen);

/* llm_vtab.complete of an HTTP provider: build the body, POST it (with
** retries, see http.h), read the reply or the stream into out. */
askdb_status llm_http_complete(llm *m, const struct llm_request *req,
                               struct llm_reply *out);

/* llm_vtab.destroy of an HTTP provider. */
void llm_http_destroy(llm *m);

/*
** Turn a received reply into out the way llm_http_complete() does once
** the HTTP exchange is over: body (len bytes) is the JSON body or, with
** stream set, the whole SSE stream. h names the endpoint in messages (and
** redacts its key). Returns ASKDB_OK with out->text the caller's,
** ASKDB_ERR_LLM or ASKDB_ERR_NOMEM with the message in err. For the
** providers' *_parse_reply (tests and fuzzers).
*/
askdb_status llm_http_parse_reply(const struct llm_http_api *api,
                                  struct http_client *h, int stream,
                                  const char *body, size_t len,
                                  struct llm_reply *out, char *err,
                                  size_t errlen);

/* The body's max_tokens: the request's, else the config's default. */
int llm_http_max_tokens(const struct llm_http *p,
                        const struct llm_request *req);

/* Set body[key] to the request's stop strings, when it has any. Returns
** non-zero when out of memory. */
int llm_http_put_stop(json_t *body, const char *key,
                      const struct llm_request *req);

/* Add one piece of reply text (n bytes) and pass it on to on_token. */
void llm_acc_text(struct llm_acc *a, const char *s, size_t n);

/* Note an in-band error object ({"message": ..., "type": ...}); the
** first one wins. */
void llm_acc_error(struct llm_acc *a, const json_t *err);

/* http_post.ended for an llm_acc: its ended flag (or an in-band error,
** which ends a stream too). */
int llm_acc_ended(void *acc);

/* http_post.delivered for an llm_acc: some text was passed on to its
** on_token (text that reached no callback was not delivered). */
int llm_acc_delivered(void *acc);

/* http_post.restart for an llm_acc: back to an empty reply. */
void llm_acc_restart(void *acc);

/* 1 when data (len bytes) is only white space: an event that carries
** nothing (a keep-alive), for on_event. */
int llm_blank(const char *data, size_t len);

/* Note in a->end why the reply ended: field's value why (NULL: keep what
** is there). Only a short word of [a-z_] is kept: it is the server's text
** and goes into a message. */
void llm_acc_end(struct llm_acc *a, const char *field, const char *why);

#endif
