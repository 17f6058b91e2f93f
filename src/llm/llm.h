/* llm.h - one interface in front of every model provider (HTTP, local,
** custom). */
#ifndef ASKDB_LLM_H
#define ASKDB_LLM_H

#include <stddef.h>

#include "askdb.h"
#include "llm/base.h"

/*
** The top of the model layer: the agent calls these, and they dispatch to
** the provider the config chose through its table (base.h). Files below
** (the providers, provider.c, http.c, base.c) never call back up here.
*/

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
** URL or key means anthropic (the URL's host is anthropic.com or a
** subdomain, text_url_host_is(); with no URL, a key that starts with
** "sk-ant-") or openai; else local (the default model). Empty strings
** count as unset.
*/
const char *llm_choose(const askdb_config *cfg);

/*
** The checks of cfg that need no model, file or network, so that a usage
** error is said before any other work (a database opened, weights
** loaded): the numbers are in range (llm_check_numbers), the provider
** is known, and an HTTP provider's URL is one (http_url_check). Returns ASKDB_OK or ASKDB_ERR_USAGE with the reason
** in err, as llm_new() would.
*/
askdb_status llm_check(const askdb_config *cfg, char *err, size_t errlen);

/* The most threads a local model is given (askdb_config.threads). */
#define LLM_MAX_THREADS 1024

/*
** The part of llm_check() an agent over a shared model needs too: the
** numbers of cfg that go into its requests are in range (temperature and
** candidate_temperature 0 to 2, candidate_gate 0 to 1, candidate_cap 0 or
** more, none NaN or infinite; threads at most LLM_MAX_THREADS), so that
** a bad one is said once, at the start, not at every question.
** ASKDB_OK, or ASKDB_ERR_USAGE with the field named in err.
*/
askdb_status llm_check_numbers(const askdb_config *cfg, char *err,
                               size_t errlen);

/*
** A model loaded once and shared by many providers (askdb_model): the
** chosen provider and a copy of cfg (its strings borrowed), and for the
** local model the loaded weights. Its settings are checked here, so that
** a bad URL or model file fails at once. Same statuses as llm_new().
*/
struct llm_shared;
askdb_status llm_shared_new(const askdb_config *cfg, struct llm_shared **out,
                            char *err, size_t errlen);

/*
** A provider of its own over s (local: over the shared weights and
** decoder, whose batch it joins for each call). Safe to call from several
** threads at once. An HTTP or custom provider has s's provider, URL,
** model, key and llm_fn, and own's stream, llm_timeout_ms, llm_retries,
** max_tokens and log_fn (own NULL: s's); the local model's settings are
** the loaded model's (a request carries the rest: temperature, seed,
** token_fn).
*/
askdb_status llm_new_shared(struct llm_shared *s, const askdb_config *own,
                            llm **out, char *err, size_t errlen);

/* The chosen provider's name (static string). */
const char *llm_shared_name(const struct llm_shared *s);

/* Free s; every provider made from it must be freed before. */
void llm_shared_free(struct llm_shared *s);

/* Ask for one reply. On failure out->text is NULL and llm_errmsg() says
** why: ASKDB_ERR_LLM_UNREACHABLE (refused, DNS, timeout, retries used up on
** connection errors) or ASKDB_ERR_LLM (HTTP error status, bad reply). */
askdb_status llm_complete(llm *m, const struct llm_request *req,
                          struct llm_reply *out);
const char *llm_errmsg(const llm *m);

/*
** Whether m's last call failed because the provider refused the
** credentials or the permission to use the model (HTTP 401 or 403, which
** OpenAI, Anthropic and the compatible servers answer for a wrong or
** missing key and a key without access): a failure that no other question
** or later try will get past. 0 after a successful call, another failure,
** or with a provider that cannot tell (local, custom).
*/
int llm_denied(const llm *m);

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
** llm_complete's at a near tie (llama.cpp rounds a batch differently);
** so can any reply decoded together with other calls on the same loaded
** model, once their sequences' cells are reused out of order (see
** decoder.c). shared_steps counts the steps a call shared with others.
** out must have n elements; the caller frees each with llm_reply_free().
** On failure every out[i].text is NULL and llm_errmsg() says why (as
** llm_complete); ASKDB_ERR_USAGE when n < 1. But once out[0] is made, a
** provider without a batch that fails a later call returns ASKDB_OK with
** that reply's failed = 1 and the ones after it failed = 2 (not asked),
** their text NULL, llm_errmsg() saying why: the replies made are kept.
*/
askdb_status llm_complete_n(llm *m, const struct llm_request *req, int n,
                            struct llm_reply *out);

/*
** Get ready for requests that start with req's stable prefix (stable_msgs,
** stable_bytes; nothing happens without one): the local model evaluates
** it into its KV cache, or loads it from its prompt-cache file, and writes
** that file, so the next call evaluates only what follows the prefix.
** Generates nothing; req->cancel stops it. A no-op (ASKDB_OK) for
** providers that keep nothing between calls.
*/
askdb_status llm_warm(llm *m, const struct llm_request *req);

/* Whether the provider applies llm_request.grammar (the local model). */
int llm_supports_grammar(const llm *m);
/* Whether llm_complete_n decodes its replies in one batch (the local
** model) rather than making one call a reply. */
int llm_batches_replies(const llm *m);
const char *llm_name(const llm *m);
void llm_free(llm *m);
void llm_reply_free(struct llm_reply *r);

#endif
