/* fuzz_reply.c - libFuzzer harness for the providers' reply-body parsers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llm/anthropic.h"
#include "llm/http.h"
#include "llm/openai.h"

/*
** The input is a non-streamed reply body, parsed as an OpenAI Chat
** Completions reply and as an Anthropic Messages reply. It is handed over
** as libFuzzer's exact-size buffer with no NUL after it, so a parser that
** reads past len is caught. The reply must be text or an error message,
** and the API key must never appear in a message.
*/

#define KEY "sk-fuzz-9f8e7d6c5b4a"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct http_client *client;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct http_config cfg;
    char err[256];

    (void)argc;
    (void)argv;
    memset(&cfg, 0, sizeof cfg);
    cfg.url = "http://fuzz.invalid/v1/messages";
    cfg.model = "fuzz-model";
    cfg.key = KEY;
    cfg.key_hint = "--api-key";
    if (http_client_new(&cfg, &client, err, sizeof err) != ASKDB_OK)
        abort();
    return 0;
}

static void check_reply(askdb_status rc, struct llm_reply *r, const char *err,
                        size_t size)
{
    if (rc == ASKDB_OK) {
        /* jansson refuses \u0000 by default: the text is one C string no
        ** longer than the JSON it came from. */
        if (!r->text || strlen(r->text) > size)
            abort();
    } else {
        if (r->text || !memchr(err, '\0', 512) || !err[0] ||
            strstr(err, KEY))
            abort();
    }
    free(r->text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    struct llm_reply r;
    char err[512];
    askdb_status rc;

    memset(&r, 0, sizeof r);
    rc = llm_openai_parse_reply(client, 0, p, size, &r, err, sizeof err);
    check_reply(rc, &r, err, size);
    memset(&r, 0, sizeof r);
    rc = llm_anthropic_parse_reply(client, 0, p, size, &r, err, sizeof err);
    check_reply(rc, &r, err, size);
    return 0;
}
