/* custom.c - the embedder's askdb_llm_fn as a model provider. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "llm/custom.h"

/*
** The callback gets the messages as two parallel arrays (borrowed for the
** call) and hands back a malloc()ed reply that becomes out->text. It does
** not stream and does not count tokens (-1). It returns 401 or 403 to
** say the credentials were refused, as an HTTP provider's status would.
*/

struct custom {
    llm base;                /* first: llm_free() frees through it */
    askdb_llm_fn fn;
    void *ud;
};

/* Was the request cancelled (llm_request.cancel)? */
static int cancelled(const struct llm_request *req)
{
    return req->cancel && atomic_load(req->cancel);
}

/* llm_vtab.complete: call the callback once. A cancel before the call
** makes none, and one during it drops its reply: the callback cannot be
** interrupted, but the question ends as cancelled, not as if answered. */
static askdb_status custom_complete(llm *m, const struct llm_request *req,
                                    struct llm_reply *out)
{
    struct custom *c = (struct custom *)m;
    const char **roles = NULL, **contents = NULL;
    char *reply = NULL;
    askdb_status rc = ASKDB_ERR_NOMEM;
    int i, r;

    roles = calloc((size_t)req->nmsgs, sizeof *roles);
    contents = calloc((size_t)req->nmsgs, sizeof *contents);
    if (!roles || !contents) {
        snprintf(m->errmsg, sizeof m->errmsg, "out of memory");
        goto out;
    }
    for (i = 0; i < req->nmsgs; i++) {
        roles[i] = req->msgs[i].role;
        contents[i] = req->msgs[i].content;
    }
    rc = ASKDB_ERR_CANCELLED;
    if (cancelled(req)) {
        snprintf(m->errmsg, sizeof m->errmsg, "cancelled");
        goto out;
    }
    r = c->fn(c->ud, req->nmsgs, roles, contents, &reply);
    if (cancelled(req)) {
        snprintf(m->errmsg, sizeof m->errmsg, "cancelled");
        goto out;
    }
    rc = ASKDB_ERR_LLM;
    if (r == 401 || r == 403) {
        /* As an HTTP provider's status: llm_denied() (eval stops). */
        out->http_status = r;
        snprintf(m->errmsg, sizeof m->errmsg, "custom model callback refused "
                 "the credentials or the permission to use the model (it "
                 "returned %d)", r);
        goto out;
    }
    if (r != 0) {
        snprintf(m->errmsg, sizeof m->errmsg, "custom model callback failed "
                                              "(it returned %d)", r);
        goto out;
    }
    if (!reply) {
        snprintf(m->errmsg, sizeof m->errmsg, "custom model callback "
                                              "returned no reply text");
        goto out;
    }
    out->text = reply;
    reply = NULL;
    rc = ASKDB_OK;
out:
    free(reply);   /* a failing callback may still have set it */
    free(roles);
    free(contents);
    return rc;
}

/* llm_vtab.destroy */
static void custom_destroy(llm *m)
{
    free(m);
}

static const struct llm_vtab custom_vtab = {"custom", custom_complete,
                                            custom_destroy, 0, NULL, NULL};

/* Create the custom provider; needs cfg->llm_fn (ASKDB_ERR_USAGE without). */
askdb_status llm_custom_new(const askdb_config *cfg, llm **out, char *err,
                            size_t errlen)
{
    struct custom *c;

    *out = NULL;
    if (!cfg->llm_fn) {
        snprintf(err, errlen, "provider 'custom' needs a model callback "
                              "(askdb_config.llm_fn)");
        return ASKDB_ERR_USAGE;
    }
    c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return ASKDB_ERR_NOMEM;
    }
    c->base.vt = &custom_vtab;
    c->fn = cfg->llm_fn;
    c->ud = cfg->llm_ud;
    *out = &c->base;
    return ASKDB_OK;
}
