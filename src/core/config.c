/* config.c - configuration defaults, the environment, and status names. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "askdb.h"
#include "core/text.h"

#define ASKDB_VERSION "0.1.0"

const char *askdb_version(void)
{
    return ASKDB_VERSION;
}

void askdb_free(void *p)
{
    free(p);
}

askdb_config askdb_config_default(void)
{
    askdb_config c;

    memset(&c, 0, sizeof c);
    c.temperature = 0.0;
    c.max_tokens = 512;
    c.llm_timeout_ms = 120000;
    c.llm_retries = 4;
    c.seed = -1;
    c.max_attempts = 3;
    c.query_timeout_ms = 10000;
    c.max_rows = 1000;
    c.max_bytes = (size_t)4 << 20;
    c.sample_values = 3;
    c.count_cap = 100000;
    c.linking = 1;
    c.values = 0;            /* off after the pilot ablation (docs/agent.md) */
    c.question_check = 1;
    c.plan = 0;
    c.candidates = 0;        /* auto: 3 with the local model (ablation) */
    c.candidate_temperature = 0.7;
    c.candidate_gate = 0.5;  /* the validation split: +3/-1, docs/agent.md */
    c.candidate_cap = 2;     /* p90 -2.6 s: docs/agent.md, "Sooner" */
    c.settle = 1;            /* the same answers, sooner: docs/agent.md */
    c.checks = 1;
    c.requalify = 1;
    c.cast_compare = 1;
    c.join_missing = 1;
    c.idle_join = 1;
    c.clean_candidate = 1;   /* docs/agent.md, "A clean candidate" */
    c.answer = 0;
    c.memory = 3;
    c.bank = 0;              /* docs/agent.md, "The example bank" */
    c.huge_pages = 1;        /* docs/agent.md, "Huge pages" */
    return c;
}

/* An environment variable, or NULL when unset or empty. */
static const char *env(const char *name)
{
    const char *v = getenv(name);

    return v && *v ? v : NULL;
}

/*
** Whether a vendor's own key variable may be used: only for that vendor's
** host - the URL's, or with no URL the vendor's default one, which its
** provider name selects. So a key exported for one service is never sent
** to a gateway, a local server or another vendor.
*/
static int vendor_host(const askdb_config *cfg, const char *name,
                       const char *domain)
{
    if (cfg->llm_url && *cfg->llm_url)
        return text_url_host_is(cfg->llm_url, domain);
    return cfg->provider && strcasecmp(cfg->provider, name) == 0;
}

void askdb_config_from_env(askdb_config *cfg)
{
    int url_given;
    const char *model, *v;

    if (!cfg)
        return;
    /* A URL the caller (a flag) gave, before the environment adds one. */
    url_given = cfg->llm_url && *cfg->llm_url;
    /* Nor may the local model from the environment beat a URL the caller
    ** gave (ASKDB_PROVIDER=local and --llm-url: the URL). */
    if (!cfg->provider) {
        const char *p = env("ASKDB_PROVIDER");
        if (!(url_given && p && strcasecmp(p, "local") == 0))
            cfg->provider = p;
    }
    if (!cfg->llm_url)
        cfg->llm_url = env("ASKDB_LLM_URL");
    /* A .gguf model selects the local model before any URL (llm_choose);
    ** one from the environment must not beat a URL the caller gave,
    ** unless the provider asks for the local model anyway. */
    model = env("ASKDB_MODEL");
    if (!cfg->model && model &&
        !(url_given && text_ends_nocase(model, ".gguf") &&
          !(cfg->provider && strcasecmp(cfg->provider, "local") == 0)))
        cfg->model = model;
    /* An operator's switch, over the caller's choice (askdb ask's 0): the
    ** one field the environment overrides. Only 0 and 1 say what is
    ** meant; "off" or "yes" leave the caller's choice (askdb warns). */
    v = env("ASKDB_HUGEPAGES");
    if (v && (strcmp(v, "0") == 0 || strcmp(v, "1") == 0))
        cfg->huge_pages = v[0] == '1';
    if (!cfg->api_key)
        cfg->api_key = env("ASKDB_API_KEY");
    if (!cfg->api_key && vendor_host(cfg, "anthropic", "anthropic.com"))
        cfg->api_key = env("ANTHROPIC_API_KEY");
    if (!cfg->api_key && vendor_host(cfg, "openai", "openai.com"))
        cfg->api_key = env("OPENAI_API_KEY");
}

const char *askdb_event_type_str(askdb_event_type t)
{
    static const char *const names[] = {
        "question", "schema", "values", "link", "examples", "qcheck",
        "plan", "prompt", "reply", "validate", "execute", "check", "error",
        "repair", "answer_text", "answer", "fix", "select", "result"
    };

    if ((unsigned)t >= sizeof names / sizeof names[0])
        return "unknown";
    return names[t];
}

const char *askdb_status_str(askdb_status st)
{
    switch (st) {
    case ASKDB_OK: return "ok";
    case ASKDB_ERR_USAGE: return "usage";
    case ASKDB_ERR_NOMEM: return "out of memory";
    case ASKDB_ERR_DB_OPEN: return "cannot open database";
    case ASKDB_ERR_DB: return "database error";
    case ASKDB_ERR_REFUSED: return "refused";
    case ASKDB_ERR_TIMEOUT: return "timeout";
    case ASKDB_ERR_LLM: return "model error";
    case ASKDB_ERR_LLM_UNREACHABLE: return "model unreachable";
    case ASKDB_ERR_NO_SQL: return "no valid SQL";
    case ASKDB_ERR_UNSUPPORTED: return "not supported";
    case ASKDB_ERR_IO: return "i/o error";
    case ASKDB_ERR_CANCELLED: return "cancelled";
    }
    return "unknown";
}

const char *askdb_error_class_str(askdb_error_class ec)
{
    switch (ec) {
    case ASKDB_EC_NONE: return "none";
    case ASKDB_EC_NO_SQL: return "no_sql";
    case ASKDB_EC_REFUSED: return "refused";
    case ASKDB_EC_SYNTAX: return "syntax";
    case ASKDB_EC_UNKNOWN_TABLE: return "unknown_table";
    case ASKDB_EC_UNKNOWN_COLUMN: return "unknown_column";
    case ASKDB_EC_RUNTIME: return "runtime";
    case ASKDB_EC_TIMEOUT: return "timeout";
    case ASKDB_EC_EMPTY: return "empty";
    case ASKDB_EC_LLM: return "llm";
    case ASKDB_EC_CHECK: return "check";
    case ASKDB_EC_DATABASE: return "database";
    }
    return "unknown";
}
