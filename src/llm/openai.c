/* openai.c - the OpenAI-compatible Chat Completions provider. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "llm/http.h"
#include "llm/llm.h"
#include "llm/provider.h"

/*
** POST {base}/chat/completions with model, messages, temperature,
** max_tokens, seed, stop and stream. The reply text is
** choices[0].message.content, or, streamed, the concatenation of
** choices[0].delta.content over the chunks; usage comes from the body or
** (with stream_options.include_usage) from the last chunk. Works with
** OpenAI and with local servers (llama.cpp server, Ollama, vLLM, ...),
** which usually need no key: the Authorization header is sent only when
** a key is set.
*/

struct openai {
    llm base;                /* first: llm_free() frees through it */
    struct http_client *http;
    char *auth;              /* "Authorization: Bearer KEY", or NULL */
    const char *model;       /* borrowed from the config */
    int stream;
    int max_tokens;          /* config default when the request has none */
};

static const struct llm_http_setup setup = {
    "OpenAI-compatible", "https://api.openai.com/v1", "/chat/completions",
    "--api-key, ASKDB_API_KEY or OPENAI_API_KEY"};

/* The request body; the caller json_decref()s it. NULL when out of
** memory. */
static json_t *make_body(const struct openai *o, const struct llm_request *req)
{
    json_t *body = json_object(), *msgs = json_array(), *msg, *stop, *opts;
    int i, bad = !body || !msgs;

    for (i = 0; !bad && i < req->nmsgs; i++) {
        msg = json_object();
        bad |= !msg;
        bad |= jsonx_set_str(msg, "role", req->msgs[i].role) != 0;
        bad |= jsonx_set_str(msg, "content", req->msgs[i].content) != 0;
        bad |= json_array_append_new(msgs, msg) != 0;
    }
    bad |= jsonx_set_str(body, "model", o->model) != 0;
    bad |= json_object_set(body, "messages", msgs) != 0;
    bad |= json_object_set_new(body, "temperature",
                               json_real(req->temperature)) != 0;
    bad |= json_object_set_new(body, "max_tokens",
                               json_integer(req->max_tokens > 0
                                                ? req->max_tokens
                                                : o->max_tokens)) != 0;
    if (req->seed >= 0)
        bad |= json_object_set_new(body, "seed", json_integer(req->seed)) != 0;
    if (req->stop && req->stop[0]) {
        stop = json_array();
        bad |= json_object_set_new(body, "stop", stop) != 0;
        for (i = 0; !bad && req->stop[i]; i++)
            bad |= json_array_append_new(stop, json_string(req->stop[i])) != 0;
    }
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

/* One streamed chunk: {"choices":[{"delta":{"content":"..."}}],
** "usage":...} or {"error":{...}}. Malformed chunks are skipped. */
static void on_event(void *ud, const char *event, const char *data,
                     size_t len)
{
    struct llm_acc *a = ud;
    json_t *root, *choice, *content;

    (void)event;
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        a->ended = 1;
        return;
    }
    root = json_loadb(data, len, JSON_ALLOW_NUL, NULL);
    if (!json_is_object(root))
        goto out;
    if (json_object_get(root, "error")) {
        llm_acc_error(a, json_object_get(root, "error"));
        goto out;
    }
    choice = json_array_get(json_object_get(root, "choices"), 0);
    content = json_object_get(json_object_get(choice, "delta"), "content");
    if (json_is_string(content))
        llm_acc_text(a, json_string_value(content),
                     json_string_length(content));
    /* A finish_reason ends the reply too (not every server sends
    ** [DONE] after it). */
    if (json_is_string(json_object_get(choice, "finish_reason")))
        a->ended = 1;
    take_usage(a, json_object_get(root, "usage"));
out:
    json_decref(root);
}

/* A whole (non-streamed) completion body. */
static void read_body(struct llm_acc *a, const json_t *root)
{
    json_t *choice, *content;

    if (json_object_get(root, "error")) {
        llm_acc_error(a, json_object_get(root, "error"));
        return;
    }
    choice = json_array_get(json_object_get(root, "choices"), 0);
    content = json_object_get(json_object_get(choice, "message"), "content");
    if (json_is_string(content))
        llm_acc_text(a, json_string_value(content),
                     json_string_length(content));
    take_usage(a, json_object_get(root, "usage"));
}

/* llm_vtab.complete: one chat completion. */
static askdb_status openai_complete(llm *m, const struct llm_request *req,
                                    struct llm_reply *out)
{
    struct openai *o = (struct openai *)m;
    const char *headers[2] = {o->auth, NULL};
    struct http_post post;
    struct http_reply hr;
    struct llm_acc acc;
    json_t *body = NULL, *root = NULL;
    char *text = NULL;
    askdb_status rc = ASKDB_ERR_NOMEM;

    llm_acc_init(&acc, req, o->stream, o->http);
    body = make_body(o, req);
    text = body ? jsonx_dump(body) : NULL;
    if (!text) {
        snprintf(m->errmsg, sizeof m->errmsg, "out of memory building the "
                                              "request");
        goto out;
    }
    memset(&post, 0, sizeof post);
    post.body = text;
    post.len = strlen(text);
    post.headers = headers;
    post.on_event = o->stream ? on_event : NULL;
    post.ended = llm_acc_ended;
    post.ud = &acc;
    rc = http_post_json(o->http, &post, &hr, m->errmsg, sizeof m->errmsg);
    out->http_status = hr.status;
    out->retries = hr.retries;
    if (rc)
        goto out;
    if (!hr.streamed) {
        root = llm_parse_body(o->http, hr.body, hr.len, m->errmsg,
                              sizeof m->errmsg);
        if (!root) {
            rc = ASKDB_ERR_LLM;
            goto out;
        }
        read_body(&acc, root);
    }
    rc = llm_acc_finish(&acc, o->http, "choices[0].message.content", out,
                        m->errmsg, sizeof m->errmsg);
out:
    llm_acc_free(&acc);
    json_decref(root);
    json_decref(body);
    free(text);
    return rc;
}

/* llm_vtab.destroy */
static void openai_destroy(llm *m)
{
    struct openai *o = (struct openai *)m;

    http_client_free(o->http);
    free(o->auth);
    free(o);
}

static const struct llm_vtab openai_vtab = {"openai", openai_complete,
                                            openai_destroy, 0, NULL};

/*
** Create the OpenAI-compatible provider for cfg (see llm.h). Needs
** cfg->model; cfg->llm_url defaults to https://api.openai.com/v1.
*/
askdb_status llm_openai_new(const askdb_config *cfg, llm **out, char *err,
                            size_t errlen)
{
    struct openai *o = NULL;
    struct buf auth;
    askdb_status rc = ASKDB_ERR_NOMEM;

    *out = NULL;
    buf_init(&auth, 0);
    o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    o->base.vt = &openai_vtab;
    o->model = cfg->model;
    o->stream = cfg->stream != 0;
    o->max_tokens = cfg->max_tokens > 0 ? cfg->max_tokens : 512;
    rc = llm_http_open(cfg, &setup, &o->http, err, errlen);
    if (rc)
        goto out;
    if (cfg->api_key && *cfg->api_key) {
        buf_printf(&auth, "Authorization: Bearer %s", cfg->api_key);
        o->auth = buf_steal(&auth);
        if (!o->auth) {
            rc = ASKDB_ERR_NOMEM;
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    *out = &o->base;
    o = NULL;
out:
    buf_free(&auth);
    if (o)
        openai_destroy(&o->base);
    return rc;
}

askdb_status llm_openai_parse_reply(struct http_client *h, int stream,
                                    const char *body, size_t len,
                                    struct llm_reply *out, char *err,
                                    size_t errlen)
{
    return llm_parse_reply(h, stream, body, len, on_event, read_body,
                           "choices[0].message.content", out, err, errlen);
}
