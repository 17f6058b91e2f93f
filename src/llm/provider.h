/* provider.h - what the HTTP providers share: setup and reply assembly. */
#ifndef ASKDB_LLM_PROVIDER_H
#define ASKDB_LLM_PROVIDER_H

#include <stddef.h>

#include <jansson.h>

#include "core/buf.h"
#include "llm/http.h"
#include "llm/llm.h"

/* What differs between the HTTP providers at setup time. */
struct llm_http_setup {
    const char *what;          /* "OpenAI-compatible", for messages */
    const char *default_base;  /* e.g. "https://api.openai.com/v1" */
    const char *suffix;        /* e.g. "/chat/completions" */
    const char *key_hint;      /* where the key comes from, for messages */
};

/*
** Check cfg for an HTTP provider (a model name is required; the URL must
** be http(s); the key must not contain line breaks) and create its client.
** Returns ASKDB_OK, ASKDB_ERR_USAGE, ASKDB_ERR_NOMEM or
** ASKDB_ERR_UNSUPPORTED with the reason in err. *out is the caller's
** (http_client_free).
*/
askdb_status llm_http_open(const askdb_config *cfg,
                           const struct llm_http_setup *s,
                           struct http_client **out, char *err,
                           size_t errlen);

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
    struct buf error;          /* error the provider reported in-band */
};

/* Start an empty reply from h; on_token is used only when stream is
** set. */
void llm_acc_init(struct llm_acc *a, const struct llm_request *req,
                  int stream, const struct http_client *h);

/* Add one piece of reply text (n bytes) and pass it on to on_token. */
void llm_acc_text(struct llm_acc *a, const char *s, size_t n);

/* Note an in-band error object ({"message": ..., "type": ...}); the
** first one wins. */
void llm_acc_error(struct llm_acc *a, const json_t *err);

/*
** Finish: on success move the text into out (out->text is the caller's)
** with the token counts. Fails with ASKDB_ERR_LLM when an in-band error
** was noted or no text arrived (`where` names the field, for the
** message), ASKDB_ERR_NOMEM when the text did not fit. The message goes
** to err, the key redacted. Frees a's buffers either way.
*/
askdb_status llm_acc_finish(struct llm_acc *a, struct http_client *h,
                            const char *where, struct llm_reply *out,
                            char *err, size_t errlen);

/* http_post.ended for an llm_acc: its ended flag. */
int llm_acc_ended(void *acc);

/* Free a's buffers (llm_acc_finish does this itself). */
void llm_acc_free(struct llm_acc *a);

/*
** Parse a non-streamed reply body. Returns the JSON object (the caller's,
** json_decref) or NULL with "reply is not JSON" in err.
*/
json_t *llm_parse_body(struct http_client *h, const char *body, size_t len,
                       char *err, size_t errlen);

/*
** What both providers' *_parse_reply do, with their own event handler,
** body reader and text field (`where`, for messages).
*/
askdb_status llm_parse_reply(struct http_client *h, int stream,
                             const char *body, size_t len,
                             http_event_fn on_event,
                             void (*read_body)(struct llm_acc *a,
                                               const json_t *root),
                             const char *where, struct llm_reply *out,
                             char *err, size_t errlen);

/*
** Turn a received reply into out the way the provider's complete() does
** once the HTTP exchange is over: body (len bytes) is the JSON body or,
** with stream set, the whole SSE stream. h names the endpoint in messages
** (and redacts its key). Returns ASKDB_OK with out->text the caller's,
** ASKDB_ERR_LLM or ASKDB_ERR_NOMEM with the message in err. For the tests
** and fuzzers; the request path does not go through these.
*/
askdb_status llm_openai_parse_reply(struct http_client *h, int stream,
                                    const char *body, size_t len,
                                    struct llm_reply *out, char *err,
                                    size_t errlen);
askdb_status llm_anthropic_parse_reply(struct http_client *h, int stream,
                                       const char *body, size_t len,
                                       struct llm_reply *out, char *err,
                                       size_t errlen);

#endif
