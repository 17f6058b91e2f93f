/* anthropic.h - the Anthropic Messages API provider. */
#ifndef ASKDB_LLM_ANTHROPIC_H
#define ASKDB_LLM_ANTHROPIC_H

#include <stddef.h>

#include "askdb.h"
#include "llm/base.h"

struct http_client;

/*
** Create the Anthropic provider for cfg (see llm_new() in llm.h). Needs
** cfg->model; cfg->llm_url defaults to https://api.anthropic.com/v1.
*/
askdb_status llm_anthropic_new(const askdb_config *cfg, llm **out, char *err,
                               size_t errlen);

/* A received reply into out, as llm_openai_parse_reply() (openai.h) does
** for its API. For the tests and fuzzers. */
askdb_status llm_anthropic_parse_reply(struct http_client *h, int stream,
                                       const char *body, size_t len,
                                       struct llm_reply *out, char *err,
                                       size_t errlen);

#endif
