/* custom.h - the embedder's askdb_llm_fn as a model provider. */
#ifndef ASKDB_LLM_CUSTOM_H
#define ASKDB_LLM_CUSTOM_H

#include <stddef.h>

#include "askdb.h"
#include "llm/base.h"

/* Create the custom provider (see llm_new() in llm.h); needs cfg->llm_fn
** (ASKDB_ERR_USAGE without). */
askdb_status llm_custom_new(const askdb_config *cfg, llm **out, char *err,
                            size_t errlen);

#endif
