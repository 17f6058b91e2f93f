/* model.c - askdb_model: a model loaded once and shared by many agents. */
#include "agent/model.h"

#include <stdio.h>
#include <stdlib.h>

/*
** The handle wraps the llm layer's shared model (llm_shared_new): for the
** local model the weights, memory-mapped once; for the others the checked
** settings. Each agent made with it gets a provider of its own
** (llm_new_shared), so agents on different threads never share a context
** or a connection. The handle is read-only after askdb_model_new().
*/
struct askdb_model {
    askdb_config cfg;
    struct llm_shared *shared;
    char errmsg[512];
};

askdb_status askdb_model_new(const askdb_config *cfg, askdb_model **out)
{
    askdb_model *m;
    askdb_status rc;

    if (!out)
        return ASKDB_ERR_USAGE;
    *out = NULL;
    m = calloc(1, sizeof *m);
    if (!m)
        return ASKDB_ERR_NOMEM;
    *out = m;
    m->cfg = cfg ? *cfg : askdb_config_default();
    rc = llm_shared_new(&m->cfg, &m->shared, m->errmsg, sizeof m->errmsg);
    return rc;
}

const char *askdb_model_errmsg(const askdb_model *m)
{
    return m ? m->errmsg : "out of memory";
}

const char *askdb_model_provider(const askdb_model *m)
{
    /* The API's convention for a NULL handle, and no model was chosen
    ** for one that failed: "" is no provider's name. */
    return m && m->shared ? llm_shared_name(m->shared) : "";
}

void askdb_model_free(askdb_model *m)
{
    if (!m)
        return;
    llm_shared_free(m->shared);
    free(m);
}

struct llm_shared *agent_model_shared(askdb_model *m)
{
    return m->shared;
}
