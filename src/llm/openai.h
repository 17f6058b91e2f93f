/* openai.h - the OpenAI-compatible Chat Completions provider. */
#ifndef ASKDB_LLM_OPENAI_H
#define ASKDB_LLM_OPENAI_H

#include <stddef.h>

#include "askdb.h"
#include "llm/base.h"

struct http_client;

/*
** Create the OpenAI-compatible provider for cfg (see llm_new() in llm.h).
** Needs cfg->model; cfg->llm_url defaults to https://api.openai.com/v1.
*/
askdb_status llm_openai_new(const askdb_config *cfg, llm **out, char *err,
                            size_t errlen);

/*
** Turn a received reply into out the way the provider's complete() does
** once the HTTP exchange is over: body (len bytes) is the JSON body or,
** with stream set, the whole SSE stream. h names the endpoint in messages
** (and redacts its key). Returns ASKDB_OK with out->text the caller's,
** ASKDB_ERR_LLM or ASKDB_ERR_NOMEM with the message in err. For the tests
** and fuzzers; the request path does not go through it.
*/
askdb_status llm_openai_parse_reply(struct http_client *h, int stream,
                                    const char *body, size_t len,
                                    struct llm_reply *out, char *err,
                                    size_t errlen);

#endif
