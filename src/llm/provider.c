/* provider.c - setup and reply assembly shared by the HTTP providers. */
#include "llm/provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"

#define TEXT_MAX HTTP_MAX_REPLY
#define ERROR_MAX 1024

askdb_status llm_http_open(const askdb_config *cfg,
                           const struct llm_http_setup *s,
                           struct http_client **out, char *err,
                           size_t errlen)
{
    struct http_config hc;
    char *url = NULL, *shown = NULL;
    const char *key = cfg->api_key && *cfg->api_key ? cfg->api_key : NULL;
    askdb_status rc = ASKDB_ERR_USAGE;

    *out = NULL;
    url = http_endpoint(cfg->llm_url, s->default_base, s->suffix);
    shown = url ? http_url_shown(url) : NULL;
    if (!shown) {
        rc = ASKDB_ERR_NOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (!http_url_ok(url)) {
        snprintf(err, errlen, "the model URL '%s' must start with http:// "
                              "or https:// (check --llm-url or "
                              "ASKDB_LLM_URL)", shown);
        goto out;
    }
    if (!cfg->model || !*cfg->model) {
        snprintf(err, errlen, "no model name given for the %s endpoint %s: "
                              "pass --model NAME or set ASKDB_MODEL",
                 s->what, shown);
        goto out;
    }
    if (key && strpbrk(key, "\r\n")) {
        snprintf(err, errlen, "the API key contains a line break (check %s)",
                 s->key_hint);
        goto out;
    }
    memset(&hc, 0, sizeof hc);
    hc.url = url;
    hc.model = cfg->model;
    hc.key = key;
    hc.key_hint = s->key_hint;
    hc.timeout_ms = cfg->llm_timeout_ms;
    hc.retries = cfg->llm_retries;
    hc.log_fn = cfg->log_fn;
    hc.log_ud = cfg->log_ud;
    rc = http_client_new(&hc, out, err, errlen);
out:
    free(url);
    free(shown);
    return rc;
}

void llm_acc_init(struct llm_acc *a, const struct llm_request *req,
                  int stream, const struct http_client *h)
{
    memset(a, 0, sizeof *a);
    a->http = h;
    buf_init(&a->text, TEXT_MAX);
    buf_init(&a->error, ERROR_MAX);
    a->on_token = stream ? req->on_token : NULL;
    a->token_ud = req->token_ud;
    a->prompt_tokens = -1;
    a->completion_tokens = -1;
}

int llm_acc_ended(void *acc)
{
    const struct llm_acc *a = acc;

    /* An in-band error ends the stream too: it is the answer to report. */
    return a->ended || a->error.len > 0;
}

void llm_acc_text(struct llm_acc *a, const char *s, size_t n)
{
    const char *nul;
    size_t k;

    a->got_text = 1;
    /* A NUL ("\u0000" in JSON) would end the text where C reads it:
    ** it stays visible as U+FFFD, and the SQL around it is checked whole. */
    while (n > 0) {
        nul = memchr(s, '\0', n);
        k = nul ? (size_t)(nul - s) : n;
        if (k) {
            buf_append(&a->text, s, k);
            if (a->on_token && !buf_err(&a->text))
                a->on_token(a->token_ud, s, k);
        }
        if (!nul)
            break;
        buf_puts(&a->text, TEXT_REPLACEMENT);
        if (a->on_token && !buf_err(&a->text))
            a->on_token(a->token_ud, TEXT_REPLACEMENT,
                        sizeof TEXT_REPLACEMENT - 1);
        s += k + 1;
        n -= k + 1;
    }
}

void llm_acc_error(struct llm_acc *a, const json_t *err)
{
    const char *msg = jsonx_str(err, "message");
    const char *type = jsonx_str(err, "type");

    if (a->error.len)
        return;
    if (!msg && json_is_string(err))
        msg = json_string_value(err);
    if (type && *type) {
        http_put_message(a->http, &a->error, type, strlen(type));
        buf_puts(&a->error, ": ");
    }
    msg = msg && *msg ? msg : "(no message)";
    http_put_message(a->http, &a->error, msg, strlen(msg));
}

void llm_acc_free(struct llm_acc *a)
{
    buf_free(&a->text);
    buf_free(&a->error);
}

askdb_status llm_acc_finish(struct llm_acc *a, struct http_client *h,
                            const char *where, struct llm_reply *out,
                            char *err, size_t errlen)
{
    askdb_status rc = ASKDB_ERR_LLM;

    if (a->error.len) {
        http_set_error(h, err, errlen, "model endpoint %s reported an error: "
                                       "%s", http_url(h), a->error.data);
        goto out;
    }
    if (buf_err(&a->text) == BUF_ENOMEM) {
        rc = ASKDB_ERR_NOMEM;
        http_set_error(h, err, errlen, "out of memory reading the reply "
                                       "from %s", http_url(h));
        goto out;
    }
    if (buf_err(&a->text)) {
        http_set_error(h, err, errlen, "the reply text from %s is larger "
                                       "than %u MiB", http_url(h),
                       TEXT_MAX >> 20);
        goto out;
    }
    if (!a->got_text) {
        http_set_error(h, err, errlen, "model endpoint %s: reply had no "
                                       "content (%s is missing or null)",
                       http_url(h), where);
        goto out;
    }
    out->text = buf_steal(&a->text);
    if (!out->text) {
        rc = ASKDB_ERR_NOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    out->prompt_tokens = a->prompt_tokens;
    out->completion_tokens = a->completion_tokens;
    rc = ASKDB_OK;
out:
    llm_acc_free(a);
    return rc;
}

json_t *llm_parse_body(struct http_client *h, const char *body, size_t len,
                       char *err, size_t errlen)
{
    json_t *root = json_loadb(body, len, JSON_ALLOW_NUL, NULL);
    struct buf m;

    if (json_is_object(root))
        return root;
    json_decref(root);
    buf_init(&m, 1024);
    buf_printf(&m, "model endpoint %s: reply is not a JSON object",
               http_url(h));
    if (len) {
        buf_puts(&m, ": ");
        http_put_message(h, &m, body, len);
    }
    buf_puts(&m, " (is --llm-url the model API's base URL?)");
    http_set_error(h, err, errlen, "%s",
                   m.data && !buf_err(&m) ? m.data : "bad reply");
    buf_free(&m);
    return NULL;
}

askdb_status llm_parse_reply(struct http_client *h, int stream,
                             const char *body, size_t len,
                             http_event_fn on_event,
                             void (*read_body)(struct llm_acc *a,
                                               const json_t *root),
                             const char *where, struct llm_reply *out,
                             char *err, size_t errlen)
{
    struct llm_request req;
    struct llm_acc acc;
    json_t *root = NULL;
    askdb_status rc = ASKDB_ERR_LLM;

    memset(&req, 0, sizeof req);
    llm_acc_init(&acc, &req, stream, h);
    if (stream) {
        if (http_sse_parse(body, len, NULL, 0, on_event, &acc)) {
            http_set_error(h, err, errlen, "the streamed reply from %s has "
                                           "a line or event larger than %u "
                                           "MiB (or memory ran out)",
                           http_url(h), HTTP_MAX_REPLY >> 20);
            goto out;
        }
        if (!acc.ended) {
            http_set_error(h, err, errlen, "model at %s ended its streamed "
                                           "reply without the end marker "
                                           "(the reply was cut off)",
                           http_url(h));
            goto out;
        }
    } else {
        root = llm_parse_body(h, body, len, err, errlen);
        if (!root)
            goto out;
        read_body(&acc, root);
    }
    rc = llm_acc_finish(&acc, h, where, out, err, errlen);
out:
    llm_acc_free(&acc);
    json_decref(root);
    return rc;
}
