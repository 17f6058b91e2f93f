/* llm.h - one interface in front of every model provider (HTTP, local, custom). */
#ifndef ASKDB_LLM_H
#define ASKDB_LLM_H

#include <stddef.h>

#include "askdb.h"

/*
** A provider turns a list of chat messages into one reply. Providers:
**   openai    - any OpenAI-compatible Chat Completions endpoint (libcurl)
**   anthropic - Anthropic's Messages API (libcurl)
**   local     - llama.cpp in-process (only when built with ASKDB_HAVE_LLAMA)
**   custom    - the embedder's askdb_llm_fn
** Errors: every call returns askdb_status and leaves a message saying what
** failed, on what, and how to fix it in llm_errmsg(). The API key is never
** written into messages, traces or logs.
*/

struct llm_msg {
    const char *role;        /* "system", "user" or "assistant" */
    const char *content;
};

struct llm_request {
    const struct llm_msg *msgs;
    int nmsgs;
    double temperature;
    double alt_temperature;  /* llm_complete_n: temperature of replies
                                1..n-1; <= 0 means LLM_ALT_TEMPERATURE */
    int max_tokens;
    int seed;                /* -1 = provider default */
    const char *const *stop; /* NULL-terminated list, or NULL */
    const char *grammar;     /* GBNF the reply must match (root rule
                                "root"), or NULL; only providers that say
                                so in llm_supports_grammar() honour it */
    askdb_token_fn on_token; /* streamed pieces (stream only), or NULL */
    void *token_ud;
    /* The stable prefix: messages [0, stable_msgs) and the first
    ** stable_bytes bytes of message stable_msgs are the same from one
    ** question to the next (system prompt and whole schema), so a
    ** provider may keep their evaluation across calls and processes (the
    ** local model: a KV file in the cache, see local.c). 0 and 0: none. */
    int stable_msgs;
    size_t stable_bytes;
};

struct llm_reply {
    char *text;              /* malloc()ed; caller frees with llm_reply_free */
    long prompt_tokens;      /* -1 when the provider did not say */
    long completion_tokens;
    int http_status;         /* last HTTP status, 0 for non-HTTP */
    int retries;             /* how many retries it took */
    double ms;               /* wall time of the whole call incl. retries */
    /* Local model only (other providers leave them 0): */
    double ttft_ms;          /* call start to the first generated token */
    long cached_tokens;      /* prompt tokens reused from the KV cache;
                                prompt_tokens - cached_tokens were evaluated */
    double load_ms;          /* model load + context creation, reported on
                                the provider's first reply only */
    long file_tokens;        /* of cached_tokens, how many were loaded from
                                the prompt-cache file of the stable prefix */
    int file_saved;          /* 1: the stable prefix was evaluated and its
                                file written by this call */
};

typedef struct llm llm;

/* Provider table; each provider fills one. */
struct llm_vtab {
    const char *name;
    askdb_status (*complete)(llm *m, const struct llm_request *req,
                             struct llm_reply *out);
    void (*destroy)(llm *m);
    int grammar;             /* 1 = honours llm_request.grammar */
    /* n > 1 replies in one go (out[] zeroed, token counts -1), as
    ** llm_complete_n describes; NULL = n calls of complete. */
    askdb_status (*complete_n)(llm *m, const struct llm_request *req, int n,
                               struct llm_reply *out);
};

struct llm {
    const struct llm_vtab *vt;
    char errmsg[512];
};

/*
** Create the provider the config selects (see askdb_config.provider for the
** rules). On failure returns ASKDB_ERR_USAGE or ASKDB_ERR_UNSUPPORTED with
** the reason in err (NUL-terminated, errlen bytes at most) and *out NULL.
** The config's strings must outlive the provider.
*/
askdb_status llm_new(const askdb_config *cfg, llm **out, char *err,
                     size_t errlen);

/*
** The provider llm_new() would create for cfg: "openai", "anthropic",
** "local" or "custom" (static strings), or NULL when cfg->provider names
** none of them. An explicit provider wins; else an llm_fn means custom;
** else a model that is a .gguf file path (any case) means local; else a
** URL or key means anthropic (URL contains "anthropic.com" or key starts
** with "sk-ant-") or openai; else local (the default model). Empty strings
** count as unset.
*/
const char *llm_choose(const askdb_config *cfg);

/* Ask for one reply. On failure out->text is NULL and llm_errmsg() says
** why: ASKDB_ERR_LLM_UNREACHABLE (refused, DNS, timeout, retries used up on
** connection errors) or ASKDB_ERR_LLM (HTTP error status, bad reply). */
askdb_status llm_complete(llm *m, const struct llm_request *req,
                          struct llm_reply *out);
const char *llm_errmsg(const llm *m);

/* Temperature of llm_complete_n's sampled replies when the request's
** alt_temperature is not set. */
#define LLM_ALT_TEMPERATURE 0.7

/*
** n replies to one request, for voting among candidates. out[0] is
** decoded as req says (req->temperature, usually 0 = greedy; req->seed);
** out[i], i = 1..n-1, is sampled at llm_candidate_temperature(req, i) with
** seed llm_candidate_seed(req, i), so every candidate is reproducible.
** Only out[0] streams to req->on_token. Providers without a batch of
** their own make n calls one after another (HTTP: many OpenAI-compatible
** local servers ignore "n", distinct seeds work everywhere; custom: n
** callback calls, which see no temperature); the local model decodes the
** replies as parallel sequences of one batch (up to 4 at a time), sharing
** the prompt it evaluated once.
** Per reply: text, token counts, ttft_ms, http_status, retries. Time:
** each out[i].ms is the wall time of the whole call (all n replies), not
** of that reply alone, so never add them up. The local model evaluates
** the prompt once for all: prompt_tokens - cached_tokens is what was
** evaluated for each reply (0 for out[1..3], 1 for each reply of a later
** batch), and load_ms is on out[0] only. Reply 0 is greedy as in
** llm_complete, but with more than one thread its text can differ from
** llm_complete's at a near tie (llama.cpp rounds a batch differently).
** out must have n elements; the caller frees each with llm_reply_free().
** All or nothing: on failure every out[i].text is NULL and llm_errmsg()
** says why (as llm_complete); ASKDB_ERR_USAGE when n < 1.
*/
askdb_status llm_complete_n(llm *m, const struct llm_request *req, int n,
                            struct llm_reply *out);

/* The temperature and seed of reply i of llm_complete_n: for i = 0 the
** request's own; else alt_temperature (LLM_ALT_TEMPERATURE when <= 0)
** and seed req->seed + i (i when req->seed is -1), kept non-negative. */
double llm_candidate_temperature(const struct llm_request *req, int i);
int llm_candidate_seed(const struct llm_request *req, int i);

/* Whether the provider applies llm_request.grammar (the local model). */
int llm_supports_grammar(const llm *m);
/* Whether llm_complete_n decodes its replies in one batch (the local
** model) rather than making one call a reply. */
int llm_batches_replies(const llm *m);
const char *llm_name(const llm *m);
void llm_free(llm *m);
void llm_reply_free(struct llm_reply *r);

/* Provider constructors (llm.c dispatches to these). */
askdb_status llm_openai_new(const askdb_config *cfg, llm **out, char *err,
                            size_t errlen);
askdb_status llm_anthropic_new(const askdb_config *cfg, llm **out, char *err,
                               size_t errlen);
askdb_status llm_custom_new(const askdb_config *cfg, llm **out, char *err,
                            size_t errlen);
askdb_status llm_local_new(const askdb_config *cfg, llm **out, char *err,
                           size_t errlen);

#endif
