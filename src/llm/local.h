/* local.h - the in-process model provider: a GGUF model run by llama.cpp. */
#ifndef ASKDB_LLM_LOCAL_H
#define ASKDB_LLM_LOCAL_H

#include <stddef.h>

#include "askdb.h"
#include "llm/base.h"

/*
** Create the local provider for cfg (see llm_new() in llm.h): load the
** model (memory-mapped) and create its context. ASKDB_ERR_USAGE when the
** file is missing or not a model llama.cpp can load, with the reason in
** err; ASKDB_ERR_UNSUPPORTED, saying how to get llama.cpp, in a build
** without it.
*/
askdb_status llm_local_new(const askdb_config *cfg, llm **out, char *err,
                           size_t errlen);

/*
** The model loaded once to be shared (askdb_model): the weights are
** memory-mapped and read-only from here on; no context is made until the
** provider itself is asked (it can be, but agents use attached ones).
*/
askdb_status llm_local_load(const askdb_config *cfg, llm **out, char *err,
                            size_t errlen);

/*
** A provider over the loaded model's weights with a context of its own
** (its KV cache, prefix reuse and prompt-cache files): many may run at
** once on different threads. It borrows the loaded model, which must
** outlive it. Thread-safe: it only reads `loaded`.
*/
askdb_status llm_local_attach(llm *loaded, llm **out, char *err,
                              size_t errlen);

#endif
