/* local.h - the in-process model provider: a GGUF model run by llama.cpp. */
#ifndef ASKDB_LLM_LOCAL_H
#define ASKDB_LLM_LOCAL_H

#include <stddef.h>

#include "askdb.h"
#include "llm/base.h"

/*
** Create the local provider for cfg (see llm_new() in llm.h): load the
** model (memory-mapped) and make its decoder (decoder.h) with one lane:
** one context and the thread that decodes it. ASKDB_ERR_USAGE when the
** file is missing or not a model llama.cpp can load, with the reason in
** err; ASKDB_ERR_UNSUPPORTED, saying how to get llama.cpp, in a build
** without it.
*/
askdb_status llm_local_new(const askdb_config *cfg, llm **out, char *err,
                           size_t errlen);

/*
** The model loaded once to be shared (askdb_model): the weights,
** memory-mapped, and one decoder with cfg->parallel lanes (at least 1),
** whose context holds LOCAL_CTX tokens a lane (at most the model's
** training context). Its calls, from any number of attached providers on
** any threads, are decoded together as sequences of one batch.
*/
askdb_status llm_local_load(const askdb_config *cfg, llm **out, char *err,
                            size_t errlen);

/*
** A provider over the loaded model: it borrows the weights and the
** decoder, and has only its sampling scratch of its own (each call takes
** a free lane of the decoder, preferring the lane that holds most of its
** prompt, so prefix reuse and the prompt-cache files work across
** providers). It borrows the loaded model, which must outlive it.
** Thread-safe: it only reads `loaded`.
*/
askdb_status llm_local_attach(llm *loaded, llm **out, char *err,
                              size_t errlen);

#endif
