/* base.h - what every model provider is built on: request, reply, the
** provider table and the few helpers the providers share. */
#ifndef ASKDB_LLM_BASE_H
#define ASKDB_LLM_BASE_H

#include <stdatomic.h>
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
    /* With grammar: the reply is one ```sql block whose grammar lets
    ** only white space and the closing fence follow a ';' outside quotes
    ** (src/sql/grammar.c). The local model then ends the reply at that
    ** ';' and closes the block itself, the decode steps of what the
    ** grammar would force anyway saved. 0 = the reply ends on its own. */
    int sql_end;
    askdb_token_fn on_token; /* streamed pieces (stream only), or NULL */
    void *token_ud;
    /* The stable prefix: messages [0, stable_msgs) and the first
    ** stable_bytes bytes of message stable_msgs are the same from one
    ** question to the next (system prompt and whole schema), so a
    ** provider may keep their evaluation across calls and processes (the
    ** local model: a KV file in the cache, see local.c). 0 and 0: none. */
    int stable_msgs;
    size_t stable_bytes;
    /* With a stable prefix: the calls that may reuse each other's
    ** evaluation of what follows it (the agent: one question's calls, or
    ** one conversation's). A call of another scope evaluates everything
    ** after the prefix itself, in the batches a new process would, so
    ** its reply does not depend on what was asked before it (the local
    ** model; the AVX-512 kernels round a row by its batch). 0 = none:
    ** any call's cells are reused. */
    unsigned long scope;
    /* llm_complete_n: the replies are candidates first_reply ..
    ** first_reply + n - 1 (temperature and seed as llm_candidate_*()
    ** give them; with first_reply > 0 none is greedy and none streams):
    ** the later candidates of a question whose greedy reply came first.
    ** 0 = the usual 0 .. n - 1. */
    int first_reply;
    /* llm_complete_n with first_reply 0: replies 1 .. n - 1 only when
    ** reply 0 (the greedy one) is unsure, i.e. chose some token that is
    ** not only white space with probability below gate (its min_p_words
    ** < gate). The local model starts them in the same batch the moment
    ** that happens, as branches of reply 0 at that token: its text
    ** before it is theirs too, and each samples its own in its place. A
    ** reply not made has text NULL and gated set. A
    ** provider that cannot say how sure it was makes them all. 0 = off. */
    double gate;
    /* With gate: the candidates branch off reply 0 at its first token
    ** (white space aside) below max(branch_p, gate), that token or an
    ** earlier one. 0 = at the unsure token itself (the agent's way). */
    double branch_p;
    /* llm_complete_n with first_reply 0: once reply 0 has ended with L
    ** tokens, a reply 1 .. n - 1 still being written stops when it has
    ** follow_cap * L tokens (and at least L + LLM_FOLLOW_SLACK) and comes
    ** back unfinished, with cut set. A sampled candidate twice as long as
    ** the greedy one is seldom the answer, and the call waits for its
    ** slowest reply. The local model only (other providers' replies come
    ** whole). 0 = off. */
    double follow_cap;
    /* llm_complete_n with first_reply 0: told of each reply i (0-based)
    ** as it ends (not when cut or gated), in the order they end, from
    ** the call's thread between two decode steps (or two calls), with its
    ** text and how many replies are still being written or not begun.
    ** Non-zero means those are not needed (the caller's vote is decided
    ** without them): they stop and come back settled, with what they had
    ** written (NULL when not begun). NULL = every reply is made. */
    int (*on_end)(void *ud, int i, const char *text, int pending);
    void *end_ud;
    /* Set (non-zero) by another thread to stop the call: the provider
    ** returns ASKDB_ERR_CANCELLED soon after (local: at the next token or
    ** inside a prompt evaluation; HTTP: within 50 ms). NULL = never. */
    const atomic_int *cancel;
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
    double huge_mb;          /* with load_ms: MiB of the model's buffers on
                                2 MiB pages (llm/hugepage.h) */
    long file_tokens;        /* of cached_tokens, how many were loaded from
                                the prompt-cache file of the stable prefix */
    int file_saved;          /* 1: the stable prefix was evaluated and its
                                file written by this call */
    double min_p;            /* the least probability the model gave a
                                token it chose (temperature 1, before the
                                grammar); -1 when the provider cannot say
                                (every provider but the local model) */
    double min_p_words;      /* the same over the tokens that are not only
                                white space (a line break or a space is
                                seldom what the answer turns on) */
    int gated;               /* 1: not made, reply 0 was sure
                                (llm_request.gate) */
    int cut;                 /* stopped unfinished, text holds what was
                                written: LLM_CUT_FOLLOW at
                                llm_request.follow_cap (local model),
                                LLM_CUT_MAX_TOKENS at max_tokens (the
                                provider said so: OpenAI's finish_reason
                                "length", Anthropic's stop_reason
                                "max_tokens"; the local model: its last
                                token was the cap's, and neither the
                                end of its turn nor a stop),
                                LLM_CUT_CONTEXT where the local model's
                                context had no room left, before
                                max_tokens; 0: it
                                ended */
    int settled;             /* 1: stopped unfinished (or never begun)
                                because llm_request.on_end said the
                                replies still being written were not
                                needed; text holds what was written */
    int failed;              /* providers without a batch: 1 = its own
                                call failed after reply 0 was made (the
                                reason in llm_errmsg()), 2 = not asked
                                after that; text is NULL */
    long branch_tokens;      /* of completion_tokens, the first ones it
                                took from reply 0 when it branched off it
                                (llm_request.gate): not decoded again */
    long shared_steps;       /* decode steps that also carried other
                                calls' tokens (concurrent questions on one
                                loaded model) */
    long text_steps;         /* decode steps whose logits were only the
                                text tokens' (llm_dec_text_only()) */
};

/* Why a reply came back cut (llm_reply.cut). */
enum { LLM_CUT_NONE, LLM_CUT_FOLLOW, LLM_CUT_MAX_TOKENS, LLM_CUT_CONTEXT };

typedef struct llm llm;

/* Provider table; each provider fills one, and its constructor (openai.h,
** anthropic.h, local.h, custom.h) points the llm at it. */
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
    /* Evaluate the request's stable prefix and keep it for the calls to
    ** come, generating nothing (llm_warm); NULL = nothing to keep. */
    askdb_status (*warm)(llm *m, const struct llm_request *req);
};

struct llm {
    const struct llm_vtab *vt;
    char errmsg[512];
    int denied;              /* the last call failed on an authentication
                                or permission refusal (llm_denied()) */
};

/* Temperature of llm_complete_n's sampled replies when the request's
** alt_temperature is not set. */
#define LLM_ALT_TEMPERATURE 0.7

/* llm_request.follow_cap lets a reply run at least this many tokens
** past reply 0's length (a short greedy reply leaves room for a join). */
#define LLM_FOLLOW_SLACK 24

/* The length at which llm_request.follow_cap stops a reply, when reply 0
** had n0 tokens; LONG_MAX when it is off (or first_reply > 0). */
long llm_follow_limit(const struct llm_request *req, long n0);

/* The temperature and seed of reply i of llm_complete_n, which is
** candidate k = req->first_reply + i: for k = 0 the request's own; else
** alt_temperature (LLM_ALT_TEMPERATURE when <= 0) and seed req->seed + k
** (k when req->seed is -1), kept non-negative. */
double llm_candidate_temperature(const struct llm_request *req, int i);
int llm_candidate_seed(const struct llm_request *req, int i);

#endif
