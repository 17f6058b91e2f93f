/* local.c - the in-process llama.cpp provider (a stub until it is built in). */
#include <stdio.h>

#include "llm/llm.h"

/*
** Without ASKDB_HAVE_LLAMA there is no local model: creating the provider
** fails with ASKDB_ERR_UNSUPPORTED and says how to get one. This is also
** what users see when nothing at all is configured (the default provider),
** so the message then names every way to configure a model.
*/

#ifdef ASKDB_HAVE_LLAMA
#error "the llama.cpp provider is not written yet: undefine ASKDB_HAVE_LLAMA"
#endif

/* 1 when cfg names no provider, URL, key or callback. */
static int nothing_configured(const askdb_config *cfg)
{
    return !(cfg->provider && *cfg->provider) &&
           !(cfg->llm_url && *cfg->llm_url) &&
           !(cfg->api_key && *cfg->api_key) && !cfg->llm_fn;
}

askdb_status llm_local_new(const askdb_config *cfg, llm **out, char *err,
                           size_t errlen)
{
    *out = NULL;
    snprintf(err, errlen, "%s%s",
             "the local model is not built into this askdb (build llama.cpp "
             "with 'make llama' and rebuild, or use a remote model: "
             "--llm-url URL --model NAME)",
             nothing_configured(cfg)
                 ? "; no model is configured: point --llm-url or "
                   "ASKDB_LLM_URL at an OpenAI-compatible server, or set "
                   "OPENAI_API_KEY or ANTHROPIC_API_KEY (with --model or "
                   "ASKDB_MODEL)"
                 : "");
    return ASKDB_ERR_UNSUPPORTED;
}
