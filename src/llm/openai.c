/* openai.c - the OpenAI-compatible Chat Completions provider. */
#include "llm/openai.h"

#include <string.h>

#include "core/json.h"
#include "llm/provider.h"

/*
** POST {base}/chat/completions with model, messages, temperature,
** max_tokens, seed, stop and stream. The reply text is
** choices[0].message.content, or, streamed, the concatenation of
** choices[0].delta.content over the chunks; usage comes from the body or
** (with stream_options.include_usage) from the last chunk.
** finish_reason "length" means the reply stopped at max_tokens: it comes
** back cut (llm_reply.cut). Works with
** OpenAI and with local servers (llama.cpp server, Ollama, vLLM, ...),
** which usually need no key: the Authorization header is sent only when
** a key is set.
*/

/* The request body; the caller json_decref()s it. NULL when out of
** memory. */
static json_t *make_body(const struct llm_http *o,
                         const struct llm_request *req)
{
    json_t *body = json_object(), *msgs = json_array(), *msg, *opts;
    int i, bad = !body || !msgs, adapted = atomic_load(&o->adapted);

    for (i = 0; !bad && i < req->nmsgs; i++) {
        msg = json_object();
        bad |= !msg;
        bad |= jsonx_set_str(msg, "role", req->msgs[i].role) != 0;
        bad |= jsonx_set_str(msg, "content", req->msgs[i].content) != 0;
        bad |= json_array_append_new(msgs, msg) != 0;
    }
    bad |= jsonx_set_str(body, "model", o->model) != 0;
    bad |= json_object_set(body, "messages", msgs) != 0;
    if (!(adapted & LLM_ADAPT_NO_TEMPERATURE))
        bad |= json_object_set_new(body, "temperature",
                                   json_real(req->temperature)) != 0;
    bad |= json_object_set_new(body, adapted & LLM_ADAPT_MAX_COMPLETION
                                         ? "max_completion_tokens"
                                         : "max_tokens",
                               json_integer(llm_http_max_tokens(o, req))) != 0;
    if (req->seed >= 0)
        bad |= json_object_set_new(body, "seed", json_integer(req->seed)) != 0;
    if (!(adapted & LLM_ADAPT_NO_STOP))
        bad |= llm_http_put_stop(body, "stop", req);
    bad |= json_object_set_new(body, "stream", json_boolean(o->stream)) != 0;
    if (o->stream) {
        opts = json_object();
        bad |= json_object_set_new(body, "stream_options", opts) != 0;
        bad |= json_object_set_new(opts, "include_usage", json_true()) != 0;
    }
    json_decref(msgs);
    if (bad) {
        json_decref(body);
        return NULL;
    }
    return body;
}

/* Token counts from a usage object, when present. */
static void take_usage(struct llm_acc *a, const json_t *usage)
{
    if (!json_is_object(usage))
        return;
    a->prompt_tokens = (long)jsonx_int(usage, "prompt_tokens", -1);
    a->completion_tokens = (long)jsonx_int(usage, "completion_tokens", -1);
}

/* A body or a streamed chunk: the error object when there is one, else
** the text of choices[0].<part>.content ("message" in a body, "delta" in
** a chunk), the usage, and whether the reply was cut at max_tokens
** (finish_reason "length"). */
static void take_reply(struct llm_acc *a, const json_t *root,
                       const char *part)
{
    json_t *choice, *content;
    const char *finish;

    if (json_object_get(root, "error")) {
        llm_acc_error(a, json_object_get(root, "error"));
        return;
    }
    choice = json_array_get(json_object_get(root, "choices"), 0);
    content = json_object_get(json_object_get(choice, part), "content");
    if (json_is_string(content))
        llm_acc_text(a, json_string_value(content),
                     json_string_length(content));
    finish = jsonx_str(choice, "finish_reason");
    if (finish && strcmp(finish, "length") == 0)
        a->cut = 1;
    llm_acc_end(a, "finish_reason", finish);
    take_usage(a, json_object_get(root, "usage"));
}

/* One streamed chunk: {"choices":[{"delta":{"content":"..."}}],
** "usage":...} or {"error":{...}}. A chunk that is not a JSON object
** (cut, garbled, invalid UTF-8) is HTTP_EVENT_BAD: skipped, the reply
** would lose its piece of the SQL. Blank data (a keep-alive) and events
** named otherwise than "message" that are not JSON carry nothing. */
static int on_event(void *ud, const char *event, const char *data,
                    size_t len)
{
    struct llm_acc *a = ud;
    json_t *root, *choice;

    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        a->ended = 1;
        return HTTP_EVENT_OK;
    }
    if (llm_blank(data, len))
        return HTTP_EVENT_OK;
    root = json_loadb(data, len, JSON_ALLOW_NUL, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return strcmp(event, "message") == 0 ? HTTP_EVENT_BAD
                                             : HTTP_EVENT_OK;
    }
    take_reply(a, root, "delta");
    /* A finish_reason ends the reply too (not every server sends [DONE]
    ** after it). */
    choice = json_array_get(json_object_get(root, "choices"), 0);
    if (json_is_string(json_object_get(choice, "finish_reason")))
        a->ended = 1;
    json_decref(root);
    return HTTP_EVENT_OK;
}

/* A whole (non-streamed) completion body. */
static void read_body(struct llm_acc *a, const json_t *root)
{
    take_reply(a, root, "message");
}

/*
** A 400 whose error names max_tokens (OpenAI's reasoning models: "Use
** 'max_completion_tokens' instead"), temperature ("Only the default (1)
** value is supported") or stop as its param: the next requests send
** max_completion_tokens, or no temperature, or no stop. Each is adapted
** once; an error that names none, or one adapted already, is the answer.
*/
static int adapt(struct llm_http *p, const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *err = json_object_get(root, "error");
    const char *param = json_string_value(json_object_get(err, "param"));
    int bit = 0, was;

    if (param && strcmp(param, "max_tokens") == 0)
        bit = LLM_ADAPT_MAX_COMPLETION;
    else if (param && strcmp(param, "temperature") == 0)
        bit = LLM_ADAPT_NO_TEMPERATURE;
    else if (param && strcmp(param, "stop") == 0)
        bit = LLM_ADAPT_NO_STOP;
    json_decref(root);
    if (!bit)
        return 0;
    was = atomic_fetch_or(&p->adapted, bit);
    return !(was & bit);
}

/* The API for llm_http_new(): all that makes this provider differ. */
static const struct llm_http_api api = {
    {"openai", llm_http_complete, llm_http_destroy, 0, NULL, NULL},
    "OpenAI-compatible", "https://api.openai.com/v1", NULL,
    "/chat/completions",
    "the base URL of an OpenAI-compatible server usually ends in /v1",
    "--api-key, ASKDB_API_KEY or OPENAI_API_KEY", "openai.com",
    "Authorization: Bearer ", NULL, "choices[0].message.content",
    make_body, on_event, read_body, adapt};

askdb_status llm_openai_new(const askdb_config *cfg, llm **out, char *err,
                            size_t errlen)
{
    return llm_http_new(cfg, &api, out, err, errlen);
}

askdb_status llm_openai_parse_reply(struct http_client *h, int stream,
                                    const char *body, size_t len,
                                    struct llm_reply *out, char *err,
                                    size_t errlen)
{
    return llm_http_parse_reply(&api, h, stream, body, len, out, err, errlen);
}
