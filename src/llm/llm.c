/* llm.c - provider choice and the calls every provider shares (see llm.h). */
#include "llm/llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/text.h"
#include "llm/anthropic.h"
#include "llm/custom.h"
#include "llm/http.h"
#include "llm/local.h"
#include "llm/openai.h"

static const char *const provider_names[] = {"openai", "anthropic", "local",
                                             "custom"};

/* 1 when s is a non-empty string. */
static int is_set(const char *s)
{
    return s && *s;
}

const char *llm_choose(const askdb_config *cfg)
{
    size_t i;

    if (is_set(cfg->provider)) {
        for (i = 0; i < sizeof provider_names / sizeof *provider_names; i++)
            if (strcasecmp(cfg->provider, provider_names[i]) == 0)
                return provider_names[i];
        return NULL;
    }
    if (cfg->llm_fn)
        return "custom";
    /* A .gguf path names a file on this machine, which only the local
    ** provider can load; HTTP servers take model names. */
    if (is_set(cfg->model) && text_ends_nocase(cfg->model, ".gguf"))
        return "local";
    if (is_set(cfg->llm_url) || is_set(cfg->api_key)) {
        /* An explicit URL decides, by its host as the key's choice does
        ** (a proxy's path or query naming anthropic.com is no Anthropic
        ** host); the key's prefix only without one, so that a local
        ** server is never sent Anthropic's protocol. */
        if (is_set(cfg->llm_url))
            return text_url_host_is(cfg->llm_url, "anthropic.com")
                       ? "anthropic" : "openai";
        return strncmp(cfg->api_key, "sk-ant-", 7) == 0 ? "anthropic"
                                                         : "openai";
    }
    return "local";
}

askdb_status llm_check_numbers(const askdb_config *cfg, char *err,
                               size_t errlen)
{
    /* Written so that NaN fails every test: it compares false. */
    if (!(cfg->temperature >= 0 && cfg->temperature <= 2))
        snprintf(err, errlen, "temperature is %g: it takes a number from 0 "
                 "(greedy) to 2", cfg->temperature);
    else if (!(cfg->candidate_temperature >= 0 &&
               cfg->candidate_temperature <= 2))
        snprintf(err, errlen, "candidate_temperature is %g: it takes a "
                 "number from 0 to 2", cfg->candidate_temperature);
    else if (!(cfg->candidate_gate >= 0 && cfg->candidate_gate <= 1))
        snprintf(err, errlen, "candidate_gate is %g: it takes a probability "
                 "from 0 to 1", cfg->candidate_gate);
    else if (!(cfg->candidate_cap >= 0 && isfinite(cfg->candidate_cap)))
        snprintf(err, errlen, "candidate_cap is %g: it takes 0 (no cap) or "
                 "a factor above 0", cfg->candidate_cap);
    else if (cfg->threads > LLM_MAX_THREADS)
        snprintf(err, errlen, "threads is %d: it takes at most %d (0: every "
                 "core)", cfg->threads, LLM_MAX_THREADS);
    else
        return ASKDB_OK;
    return ASKDB_ERR_USAGE;
}

askdb_status llm_check(const askdb_config *cfg, char *err, size_t errlen)
{
    const char *name;

    if (errlen)
        err[0] = '\0';
    if (!cfg) {
        snprintf(err, errlen, "no configuration given");
        return ASKDB_ERR_USAGE;
    }
    if (llm_check_numbers(cfg, err, errlen))
        return ASKDB_ERR_USAGE;
    name = llm_choose(cfg);
    if (!name) {
        snprintf(err, errlen, "unknown model provider '%s' (valid: openai "
                              "(any OpenAI-compatible server: Ollama, vLLM, "
                              "llama.cpp's), anthropic, local; custom for a "
                              "program's own llm_fn)", cfg->provider);
        return ASKDB_ERR_USAGE;
    }
    if ((strcmp(name, "openai") == 0 || strcmp(name, "anthropic") == 0) &&
        is_set(cfg->llm_url) && !http_url_check(cfg->llm_url, err, errlen))
        return ASKDB_ERR_USAGE;
    return ASKDB_OK;
}

askdb_status llm_new(const askdb_config *cfg, llm **out, char *err,
                     size_t errlen)
{
    const char *name;
    askdb_status rc;

    *out = NULL;
    rc = llm_check(cfg, err, errlen);
    if (rc)
        return rc;
    name = llm_choose(cfg);
    if (strcmp(name, "openai") == 0)
        return llm_openai_new(cfg, out, err, errlen);
    if (strcmp(name, "anthropic") == 0)
        return llm_anthropic_new(cfg, out, err, errlen);
    if (strcmp(name, "custom") == 0)
        return llm_custom_new(cfg, out, err, errlen);
    return llm_local_new(cfg, out, err, errlen);
}

struct llm_shared {
    askdb_config cfg;
    const char *name;
    llm *loaded;             /* local: the weights every provider shares */
};

askdb_status llm_shared_new(const askdb_config *cfg, struct llm_shared **out,
                            char *err, size_t errlen)
{
    struct llm_shared *s;
    const char *name;
    askdb_status rc;
    llm *m = NULL;

    *out = NULL;
    rc = llm_check(cfg, err, errlen);
    if (rc)
        return rc;
    name = llm_choose(cfg);
    /* local: the weights, loaded once; the others: one provider made and
    ** dropped, so that their settings are checked now. */
    if (strcmp(name, "local") == 0)
        rc = llm_local_load(cfg, &m, err, errlen);
    else
        rc = llm_new(cfg, &m, err, errlen);
    if (rc) {
        llm_free(m);
        return rc;
    }
    s = calloc(1, sizeof *s);
    if (!s) {
        llm_free(m);
        snprintf(err, errlen, "out of memory");
        return ASKDB_ERR_NOMEM;
    }
    s->cfg = *cfg;
    s->name = name;
    if (strcmp(s->name, "local") == 0)
        s->loaded = m;
    else
        llm_free(m);
    *out = s;
    return ASKDB_OK;
}

askdb_status llm_new_shared(struct llm_shared *s, const askdb_config *own,
                            llm **out, char *err, size_t errlen)
{
    askdb_config c;

    if (s->loaded)
        return llm_local_attach(s->loaded, out, err, errlen);
    /* A provider of its own: the model's endpoint (provider, URL, model,
    ** key, callback), the caller's way of asking it. */
    c = s->cfg;
    if (own) {
        c.stream = own->stream;
        c.llm_timeout_ms = own->llm_timeout_ms;
        c.llm_retries = own->llm_retries;
        c.max_tokens = own->max_tokens;
        c.log_fn = own->log_fn;
        c.log_ud = own->log_ud;
    }
    return llm_new(&c, out, err, errlen);
}

const char *llm_shared_name(const struct llm_shared *s)
{
    return s->name;
}

void llm_shared_free(struct llm_shared *s)
{
    if (!s)
        return;
    llm_free(s->loaded);
    free(s);
}

/* Validate a request; returns a static reason, or NULL when it is fine. */
static const char *bad_request(const struct llm_request *req)
{
    int i;

    if (!req)
        return "no request";
    if (req->nmsgs <= 0 || !req->msgs)
        return "a request needs at least one message";
    for (i = 0; i < req->nmsgs; i++)
        if (!req->msgs[i].role || !req->msgs[i].content)
            return "a message has no role or no content";
    if (req->gate > 0 && req->first_reply > 0)
        return "a gate is on the greedy reply: first_reply must be 0";
    return NULL;
}

/* Milliseconds since t0. */
static double ms_since(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
           (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Empty replies out[0..n) and check m and req; ASKDB_ERR_USAGE with the
** reason in m->errmsg (when there is an m) if they will not do. */
static askdb_status begin(llm *m, const struct llm_request *req,
                          struct llm_reply *out, int n)
{
    const char *why;
    int i;

    for (i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].prompt_tokens = -1;
        out[i].completion_tokens = -1;
        out[i].min_p = -1;
        out[i].min_p_words = -1;
    }
    if (!m)
        return ASKDB_ERR_USAGE;
    m->errmsg[0] = '\0';
    m->denied = 0;
    why = bad_request(req);
    if (why) {
        snprintf(m->errmsg, sizeof m->errmsg, "%s", why);
        return ASKDB_ERR_USAGE;
    }
    return ASKDB_OK;
}

/* Whether a call that ended with rc and reply 0 out was refused its
** credentials: llm_denied(). */
static int denied(askdb_status rc, const struct llm_reply *out)
{
    return rc == ASKDB_ERR_LLM &&
           (out->http_status == 401 || out->http_status == 403);
}

/* After a failed call: no reply text survives, and there is a message. */
static void failed(llm *m, askdb_status rc, struct llm_reply *out, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        free(out[i].text);
        out[i].text = NULL;
    }
    if (!m->errmsg[0])
        snprintf(m->errmsg, sizeof m->errmsg, "model provider %s failed (%s)",
                 m->vt->name, askdb_status_str(rc));
}

askdb_status llm_complete(llm *m, const struct llm_request *req,
                          struct llm_reply *out)
{
    struct timespec t0;
    askdb_status rc;

    if (!out)
        return ASKDB_ERR_USAGE;
    rc = begin(m, req, out, 1);
    if (rc)
        return rc;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = m->vt->complete(m, req, out);
    out->ms = ms_since(&t0);
    if (rc != ASKDB_OK)
        failed(m, rc, out, 1);
    m->denied = denied(rc, out);
    return rc;
}

/* n replies, one provider call each (providers without a batch). */
static askdb_status complete_each(llm *m, const struct llm_request *req,
                                  int n, struct llm_reply *out)
{
    struct llm_request r;
    askdb_status rc;
    int i;

    for (i = 0; i < n; i++) {
        r = *req;
        r.first_reply = 0;
        r.gate = 0;   /* without confidence: every reply */
        if (i > 0 || req->first_reply > 0) {
            r.temperature = llm_candidate_temperature(req, i);
            r.seed = llm_candidate_seed(req, i);
            r.on_token = NULL;
            r.token_ud = NULL;
        }
        rc = m->vt->complete(m, &r, &out[i]);
        /* Reply 0 is made: a later candidate's own failure (a rate limit,
        ** a server error after its retries) costs the candidates from it
        ** on, not the question. */
        if (rc && rc != ASKDB_ERR_CANCELLED && i > 0) {
            failed(m, rc, &out[i], 1);
            out[i].failed = 1;
            while (++i < n)
                out[i].failed = 2;
            return ASKDB_OK;
        }
        if (rc)
            return rc;
        /* A cut reply is not told: it has not ended (its SQL may be cut
        ** short and must not run). */
        if (req->on_end && req->first_reply == 0 && !out[i].cut &&
            req->on_end(req->end_ud, i, out[i].text, n - 1 - i)) {
            while (++i < n)
                out[i].settled = 1;
            break;
        }
    }
    return ASKDB_OK;
}

askdb_status llm_complete_n(llm *m, const struct llm_request *req, int n,
                            struct llm_reply *out)
{
    struct timespec t0;
    askdb_status rc;
    double ms;
    int i;

    if (!out)
        return ASKDB_ERR_USAGE;
    if (n < 1) {
        if (m)
            snprintf(m->errmsg, sizeof m->errmsg, "asked for %d replies "
                                                  "(at least 1)", n);
        return ASKDB_ERR_USAGE;
    }
    if (n == 1 && (!req || req->first_reply == 0))
        return llm_complete(m, req, out);
    rc = begin(m, req, out, n);
    if (rc)
        return rc;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (m->vt->complete_n)
        rc = m->vt->complete_n(m, req, n, out);
    else
        rc = complete_each(m, req, n, out);
    ms = ms_since(&t0);
    for (i = 0; i < n; i++)
        out[i].ms = ms;
    if (rc != ASKDB_OK)
        failed(m, rc, out, n);
    m->denied = denied(rc, out);
    return rc;
}

askdb_status llm_warm(llm *m, const struct llm_request *req)
{
    struct llm_reply r;
    askdb_status rc = begin(m, req, &r, 1);

    if (rc || !m->vt->warm || req->stable_msgs + req->stable_bytes == 0)
        return rc;
    rc = m->vt->warm(m, req);
    if (rc != ASKDB_OK && !m->errmsg[0])
        snprintf(m->errmsg, sizeof m->errmsg, "model provider %s failed (%s)",
                 m->vt->name, askdb_status_str(rc));
    return rc;
}

const char *llm_errmsg(const llm *m)
{
    return m ? m->errmsg : "no model provider";
}

int llm_denied(const llm *m)
{
    return m ? m->denied : 0;
}

int llm_supports_grammar(const llm *m)
{
    return m ? m->vt->grammar : 0;
}

int llm_batches_replies(const llm *m)
{
    return m && m->vt->complete_n;
}

const char *llm_name(const llm *m)
{
    return m ? m->vt->name : "none";
}

void llm_free(llm *m)
{
    if (m)
        m->vt->destroy(m);
}

void llm_reply_free(struct llm_reply *r)
{
    if (!r)
        return;
    free(r->text);
    r->text = NULL;
}
