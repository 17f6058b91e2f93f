/* anthropic.c - the Anthropic Messages API provider. */
#include "llm/anthropic.h"

#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "llm/provider.h"

/*
** POST {base}/messages; a base URL with no path gets /v1 first, as
** Anthropic's SDKs take it (https://api.anthropic.com). The Messages API
** differs from Chat Completions: system text goes in a top-level "system"
** field (several system messages are joined), user and assistant turns
** must alternate (consecutive turns of one role are merged, joined by a
** blank line) and hold more than white space (a blank one, an empty
** reply sent back for repair, is left out), max_tokens is required, and
** there is no seed. The reply
** text is the concatenation of the "text" blocks of content[]; streamed,
** of the text_delta events. Usage is
** input_tokens/output_tokens (message_start and message_delta events when
** streamed). stop_reason "max_tokens" (in message_delta when streamed)
** means the reply stopped at max_tokens: it comes back cut
** (llm_reply.cut).
*/

#define ANTHROPIC_VERSION "2023-06-01"

/* Append {"role": role, "content": text} to msgs; returns non-zero on
** failure. */
static int add_turn(json_t *msgs, const char *role, const struct buf *text)
{
    json_t *msg = json_object();
    int bad = !msg || buf_err(text);

    bad |= jsonx_set_str(msg, "role", role) != 0;
    bad |= jsonx_set_str(msg, "content", text->data ? text->data : "") != 0;
    bad |= json_array_append_new(msgs, msg) != 0;
    return bad;
}

/* Fill body's "system" and "messages" from the chat messages, merging
** consecutive turns of one role. Returns non-zero when out of memory. */
static int put_messages(json_t *body, const struct llm_request *req)
{
    json_t *msgs = json_array();
    struct buf sys, turn;
    const char *role = NULL;
    int i, bad = !msgs;

    buf_init(&sys, 0);
    buf_init(&turn, 0);
    for (i = 0; !bad && i < req->nmsgs; i++) {
        const struct llm_msg *mm = &req->msgs[i];

        if (strcmp(mm->role, "system") == 0) {
            if (sys.len)
                buf_puts(&sys, "\n\n");
            buf_puts(&sys, mm->content);
            continue;
        }
        /* The API refuses a turn of white space alone ("all messages
        ** must have non-empty content"): an empty reply sent back to be
        ** repaired would end the question with a 400. It is left out,
        ** and the turns around it merge. */
        if (llm_blank(mm->content, strlen(mm->content)))
            continue;
        if (role && strcmp(role, mm->role) == 0) {
            buf_puts(&turn, "\n\n");
        } else {
            if (role)
                bad |= add_turn(msgs, role, &turn);
            buf_reset(&turn);
            role = mm->role;
        }
        buf_puts(&turn, mm->content);
    }
    if (role)
        bad |= add_turn(msgs, role, &turn);
    if (sys.len)
        bad |= buf_err(&sys) || jsonx_set_str(body, "system", sys.data) != 0;
    bad |= json_object_set(body, "messages", msgs) != 0;
    json_decref(msgs);
    buf_free(&sys);
    buf_free(&turn);
    return bad;
}

/* The request body; the caller json_decref()s it. NULL when out of
** memory. */
static json_t *make_body(const struct llm_http *a,
                         const struct llm_request *req)
{
    json_t *body = json_object();
    int bad = !body;

    bad |= jsonx_set_str(body, "model", a->model) != 0;
    bad |= json_object_set_new(body, "max_tokens",
                               json_integer(llm_http_max_tokens(a, req))) != 0;
    bad |= bad || put_messages(body, req);
    bad |= json_object_set_new(body, "temperature",
                               json_real(req->temperature)) != 0;
    bad |= llm_http_put_stop(body, "stop_sequences", req);
    if (a->stream)
        bad |= json_object_set_new(body, "stream", json_true()) != 0;
    if (bad) {
        json_decref(body);
        return NULL;
    }
    return body;
}

/* Token counts from a usage object; absent fields leave counts as they
** are (message_delta carries only output_tokens). */
static void take_usage(struct llm_acc *a, const json_t *usage)
{
    long long in = jsonx_int(usage, "input_tokens", -1);
    long long out = jsonx_int(usage, "output_tokens", -1);

    if (in >= 0)
        a->prompt_tokens = (long)in;
    if (out >= 0)
        a->completion_tokens = (long)out;
}

/* The usage of root, and whether the reply was cut at max_tokens (the
** stop_reason of where: the message, or a message_delta's delta). */
static void take_end(struct llm_acc *a, const json_t *root,
                     const json_t *where)
{
    const char *stop = jsonx_str(where, "stop_reason");

    if (stop && strcmp(stop, "max_tokens") == 0)
        a->cut = 1;
    llm_acc_end(a, "stop_reason", stop);
    take_usage(a, json_object_get(root, "usage"));
}

/* Append the text of a content block or text delta ({"type":"text",
** "text":...} / {"type":"text_delta","text":...}); other types are
** skipped (tool use, thinking). */
static void take_text(struct llm_acc *a, const json_t *block, const char *kind)
{
    const char *type = jsonx_str(block, "type");
    json_t *text = json_object_get(block, "text");

    if (type && strcmp(type, kind) != 0)
        return;
    if (json_is_string(text))
        llm_acc_text(a, json_string_value(text), json_string_length(text));
}

/* Whether name is the name of an event of the Messages stream: one that
** must be read (unknown ones, say a proxy's, carry nothing of ours). */
static int known_event(const char *name)
{
    static const char *const names[] = {
        "message", "message_start", "content_block_start",
        "content_block_delta", "content_block_stop", "message_delta",
        "message_stop", "error"};
    size_t i;

    for (i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* Note a streamed error event's error. Those of the kinds that come as
** 529, 500 and 429 without a stream (overloaded_error, api_error,
** rate_limit_error) are HTTP_EVENT_BUSY: tried again as those are. */
static int in_band_error(struct llm_acc *a, const json_t *err)
{
    static const char *const busy[] = {"overloaded_error", "api_error",
                                       "rate_limit_error"};
    const char *type = jsonx_str(err, "type");
    size_t i;

    llm_acc_error(a, err);
    for (i = 0; type && i < sizeof busy / sizeof *busy; i++)
        if (strcmp(type, busy[i]) == 0)
            return HTTP_EVENT_BUSY;
    return HTTP_EVENT_OK;
}

/* One streamed event. The JSON "type" names it (the SSE event name is the
** fallback). Data that is not a JSON object under a known event name (or
** none) is HTTP_EVENT_BAD: skipped, the reply would lose a piece. */
static int on_event(void *ud, const char *event, const char *data,
                    size_t len)
{
    struct llm_acc *a = ud;
    json_t *root;
    const char *type;
    int r = HTTP_EVENT_OK;

    if (llm_blank(data, len))
        return HTTP_EVENT_OK;
    root = json_loadb(data, len, JSON_ALLOW_NUL, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return known_event(event) ? HTTP_EVENT_BAD : HTTP_EVENT_OK;
    }
    type = jsonx_str(root, "type");
    if (!type)
        type = event;
    if (strcmp(type, "content_block_delta") == 0)
        take_text(a, json_object_get(root, "delta"), "text_delta");
    else if (strcmp(type, "message_start") == 0)
        take_usage(a, json_object_get(json_object_get(root, "message"),
                                      "usage"));
    else if (strcmp(type, "message_delta") == 0)
        take_end(a, root, json_object_get(root, "delta"));
    else if (strcmp(type, "error") == 0)
        r = in_band_error(a, json_object_get(root, "error"));
    else if (strcmp(type, "message_stop") == 0)
        a->ended = 1;
    json_decref(root);
    return r;
}

/* A whole (non-streamed) message body. */
static void read_body(struct llm_acc *a, const json_t *root)
{
    json_t *content = json_object_get(root, "content");
    size_t i;

    if (json_object_get(root, "error")) {
        llm_acc_error(a, json_object_get(root, "error"));
        return;
    }
    for (i = 0; i < json_array_size(content); i++)
        take_text(a, json_array_get(content, i), "text");
    take_end(a, root, root);
}

/* The API for llm_http_new(): all that makes this provider differ. */
static const struct llm_http_api api = {
    {"anthropic", llm_http_complete, llm_http_destroy, 0, NULL, NULL},
    "Anthropic", "https://api.anthropic.com/v1", "/v1", "/messages",
    "askdb posts to the base URL plus /messages, Anthropic's is "
    "https://api.anthropic.com/v1/messages",
    "--api-key, ASKDB_API_KEY or ANTHROPIC_API_KEY", "anthropic.com",
    "x-api-key: ", "anthropic-version: " ANTHROPIC_VERSION, "content[].text",
    make_body, on_event, read_body, NULL};

askdb_status llm_anthropic_new(const askdb_config *cfg, llm **out, char *err,
                               size_t errlen)
{
    /* Anthropic takes a temperature from 0 to 1 (a 400 for each request
    ** past it): said once, before any question. */
    if (cfg->temperature > 1 || cfg->candidate_temperature > 1) {
        *out = NULL;
        snprintf(err, errlen, "Anthropic takes a temperature from 0 to 1, "
                 "not %g (%s)", cfg->temperature > 1 ? cfg->temperature
                                                     : cfg->candidate_temperature,
                 cfg->temperature > 1 ? "--temperature"
                                      : "--candidate-temperature");
        return ASKDB_ERR_USAGE;
    }
    return llm_http_new(cfg, &api, out, err, errlen);
}

askdb_status llm_anthropic_parse_reply(struct http_client *h, int stream,
                                       const char *body, size_t len,
                                       struct llm_reply *out, char *err,
                                       size_t errlen)
{
    return llm_http_parse_reply(&api, h, stream, body, len, out, err, errlen);
}
