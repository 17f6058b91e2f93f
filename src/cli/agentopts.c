/* agentopts.c - the options the commands share: model, limits, techniques. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

enum {
    A_NO_LINKING = CLI_AGENT_OPT_BASE, A_NO_VALUES, A_NO_QCHECK, A_PLAN,
    A_CANDIDATES, A_CAND_TEMP, A_CAND_GATE, A_CAND_CAP, A_NO_SETTLE,
    A_SETTLE, A_NO_CHECKS,
    A_NO_REQUALIFY,
    A_NO_CAST,
    A_NO_JOIN_MISSING, A_NO_IDLE_JOIN, A_IDLE_JOIN, A_NO_CLEAN, A_CLEAN,
    A_RESAMPLE, A_SELECT,
    A_NO_SELECT, A_ANSWER, A_EXAMPLES, A_MEMORY, A_BANK, A_SAMPLE_VALUES,
    A_LINKING, A_VALUES, A_QCHECK, A_NO_PLAN, A_CHECKS,
    OPT_TRACE, OPT_MAX_ATTEMPTS, OPT_TIMEOUT, OPT_MAX_ROWS, OPT_MAX_BYTES,
    OPT_PROVIDER, OPT_LLM_URL, OPT_MODEL, OPT_API_KEY, OPT_TEMPERATURE,
    OPT_MAX_TOKENS, OPT_LLM_TIMEOUT, OPT_RETRIES, OPT_STREAM, OPT_SEED,
    OPT_THREADS, OPT_NO_GRAMMAR, OPT_NO_PROMPT_CACHE, OPT_IN_PROCESS
};

const struct option cli_agent_opts[] = {
    {"no-linking", no_argument, NULL, A_NO_LINKING},
    {"linking", no_argument, NULL, A_LINKING},
    {"no-values", no_argument, NULL, A_NO_VALUES},
    {"values", no_argument, NULL, A_VALUES},
    {"no-question-check", no_argument, NULL, A_NO_QCHECK},
    {"question-check", no_argument, NULL, A_QCHECK},
    {"plan", no_argument, NULL, A_PLAN},
    {"no-plan", no_argument, NULL, A_NO_PLAN},
    {"candidates", required_argument, NULL, A_CANDIDATES},
    {"candidate-temperature", required_argument, NULL, A_CAND_TEMP},
    {"candidate-gate", required_argument, NULL, A_CAND_GATE},
    {"candidate-cap", required_argument, NULL, A_CAND_CAP},
    {"no-settle", no_argument, NULL, A_NO_SETTLE},
    {"settle", no_argument, NULL, A_SETTLE},
    {"no-checks", no_argument, NULL, A_NO_CHECKS},
    {"no-requalify", no_argument, NULL, A_NO_REQUALIFY},
    {"no-cast", no_argument, NULL, A_NO_CAST},
    {"no-join-missing", no_argument, NULL, A_NO_JOIN_MISSING},
    {"no-idle-join", no_argument, NULL, A_NO_IDLE_JOIN},
    {"idle-join", no_argument, NULL, A_IDLE_JOIN},
    {"no-clean-candidate", no_argument, NULL, A_NO_CLEAN},
    {"clean-candidate", no_argument, NULL, A_CLEAN},
    {"resample", no_argument, NULL, A_RESAMPLE},
    {"select", no_argument, NULL, A_SELECT},
    {"no-select", no_argument, NULL, A_NO_SELECT},
    {"checks", no_argument, NULL, A_CHECKS},
    {"answer", no_argument, NULL, A_ANSWER},
    {"examples", required_argument, NULL, A_EXAMPLES},
    {"memory", required_argument, NULL, A_MEMORY},
    {"bank", required_argument, NULL, A_BANK},
    {"sample-values", required_argument, NULL, A_SAMPLE_VALUES},
    {NULL, 0, NULL, 0}
};

const struct option cli_model_opts[] = {
    {"trace", required_argument, NULL, OPT_TRACE},
    {"max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"max-rows", required_argument, NULL, OPT_MAX_ROWS},
    {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
    {"in-process", no_argument, NULL, OPT_IN_PROCESS},
    {"provider", required_argument, NULL, OPT_PROVIDER},
    {"llm-url", required_argument, NULL, OPT_LLM_URL},
    {"model", required_argument, NULL, OPT_MODEL},
    {"api-key", required_argument, NULL, OPT_API_KEY},
    {"temperature", required_argument, NULL, OPT_TEMPERATURE},
    {"max-tokens", required_argument, NULL, OPT_MAX_TOKENS},
    {"llm-timeout", required_argument, NULL, OPT_LLM_TIMEOUT},
    {"retries", required_argument, NULL, OPT_RETRIES},
    {"stream", no_argument, NULL, OPT_STREAM},
    {"seed", required_argument, NULL, OPT_SEED},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"no-grammar", no_argument, NULL, OPT_NO_GRAMMAR},
    {"no-prompt-cache", no_argument, NULL, OPT_NO_PROMPT_CACHE},
    {NULL, 0, NULL, 0}
};

const char cli_limits_help[] =
    "Limits:\n"
    "      --timeout MS      query time limit in ms (default 10000)\n"
    "      --max-rows N      stop after N rows (default 1000)\n"
    "      --max-bytes N     result size cap: the values' bytes plus a fixed\n"
    "                        cost per cell (default 4194304); while a query\n"
    "                        runs no value or table row may be larger than\n"
    "                        N or 16 MiB, whichever is more (the query then\n"
    "                        fails and says so)\n"
    "      --in-process      run the statements of SQLite and DuckDB files\n"
    "                        in askdb's own process, not in askdb-exec (a\n"
    "                        helper killed at the time limit): one long\n"
    "                        function call can then outlast --timeout\n";

/* schema runs no statement: of the limits only the time one bounds what
** it reads (its catalogue reads are whole and run in askdb's process). */
const char cli_schema_limits_help[] =
    "Limits:\n"
    "      --timeout MS      time limit in ms of each read of the schema:\n"
    "                        opening the file (a writer's lock is waited\n"
    "                        for that long), each table's samples and\n"
    "                        count, a server's catalogue queries (default\n"
    "                        10000)\n";

const char cli_model_help[] =
    "Model (flags override the environment):\n"
    "      --provider NAME   openai, anthropic or local (ASKDB_PROVIDER);\n"
    "                        default: HTTP when a URL or key is set, else\n"
    "                        the local model\n"
    "      --llm-url URL     OpenAI-compatible base URL, e.g.\n"
    "                        http://localhost:11434/v1 (ASKDB_LLM_URL)\n"
    "      --model NAME      model name (ASKDB_MODEL)\n"
    "      --api-key KEY     API key (ASKDB_API_KEY; OPENAI_API_KEY and\n"
    "                        ANTHROPIC_API_KEY only for that vendor's host)\n"
    "      --temperature T   sampling temperature (default 0)\n"
    "      --max-tokens N    reply length cap (default 512)\n"
    "      --llm-timeout MS  per request (default 120000)\n"
    "      --retries N       retries on 429/5xx/reset (default 4)\n"
    "      --stream          stream the reply (ask and shell show it as\n"
    "                        it comes with -v)\n"
    "      --seed N          sampling seed\n"
    "      --threads N       local model: CPU threads (default: all cores)\n"
    "      --no-grammar      local model: no SQL-constrained decoding\n"
    "      --no-prompt-cache local model: do not keep the evaluated schema\n"
    "                        prompt in the cache directory for the next\n"
    "                        run (see ASKDB_PROMPT_CACHE_MB)\n"
    "Agent:\n"
    "      --max-attempts N  SQL generations per question (default 3)\n"
    "      --trace FILE      append every step as JSON lines to FILE (never\n"
    "                        an SQLite file)\n";

const char cli_agent_help[] =
    "Agent techniques (docs/agent.md; defaults follow the measurements):\n"
    "      --no-linking      keep the whole schema in the prompt (linking\n"
    "                        cuts schemas over 6 tables and 8 KiB down to\n"
    "                        what the question needs; --linking: on, the\n"
    "                        default)\n"
    "      --values          value retrieval: the question's words matched\n"
    "                        against the data, the stored spellings told\n"
    "                        to the model (off by default; --no-values)\n"
    "      --no-question-check  always write SQL, even for greetings and\n"
    "                        questions no table holds (--question-check:\n"
    "                        answer those without SQL, the default)\n"
    "      --plan            plan multi-step questions (off by default;\n"
    "                        --no-plan)\n"
    "      --candidates N    N SQL candidates voted on by their results\n"
    "                        (default: 3 with the local model, which\n"
    "                        decodes them in one batch; 1 otherwise)\n"
    "      --candidate-temperature T  sampling of candidates 2..N (0.7)\n"
    "      --candidate-gate P  local model: the greedy SQL starts alone;\n"
    "                        candidates 2..N join it only when some token\n"
    "                        of it has probability below P (0 = all N at\n"
    "                        once; default 0.5)\n"
    "      --candidate-cap X local model: once the greedy SQL has ended,\n"
    "                        a candidate still being written stops at X\n"
    "                        times its length (at least 24 tokens more)\n"
    "                        and is dropped (0 = no cap; default 2)\n"
    "      --no-settle       make every candidate, even when two have\n"
    "                        agreed on a result the rest cannot outvote\n"
    "                        (--settle: stop them then, the default)\n"
    "      --no-checks       no checks of joins, aggregates, literals and\n"
    "                        result shape before and after a query runs\n"
    "                        (--checks: on, the default)\n"
    "      --no-requalify    no re-qualifying of a column written under a\n"
    "                        table that lacks it (before a repair)\n"
    "      --no-join-missing no joining in of the one table a missing\n"
    "                        column lives in (by its foreign key)\n"
    "      --no-cast         no comparing as text of a number and text the\n"
    "                        engine refuses to compare (PostgreSQL)\n"
    "      --no-idle-join    among the checks, not the one of a table\n"
    "                        joined on its foreign key and used nowhere\n"
    "                        else (--idle-join: on)\n"
    "      --no-clean-candidate  when a check doubts the vote's winner,\n"
    "                        a repair is asked at once, not another\n"
    "                        candidate no check doubts taken first\n"
    "                        (--clean-candidate: on)\n"
    "      --select          when the candidates' vote ties between\n"
    "                        different results, the model picks one\n"
    "                        (off: see docs/agent.md; --no-select)\n"
    "      --resample        a repair that repeats a failed statement is\n"
    "                        asked once more, sampled (off: not measured\n"
    "                        yet)\n"
    "      --answer          add a plain-English answer\n"
    "      --examples K      learned pairs in the prompt (default 3, 0 =\n"
    "                        none; see askdb learn)\n"
    "      --memory FILE     learned pairs store (default: in the cache):\n"
    "                        an askdb store or a new file, else exit 2\n"
    "      --bank K          K examples from other databases (the built-in\n"
    "                        bank, default 0 = none)\n"
    "      --sample-values N distinct values shown per text column in the\n"
    "                        schema (default 3; 0 = the schema tells the\n"
    "                        model no data values)\n";

int cli_number(const char *prog, const char *opt, const char *s, long lo,
               long hi, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s takes a whole number from %ld to %ld, not "
                        "'%s'\n", prog, opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_real(const char *s, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(s, &end);
    return errno || end == s || *end ? -1 : 0;
}

int cli_agent_opt(int c, const char *arg, askdb_config *cfg, const char *prog)
{
    long v;
    double d;

    switch (c) {
    case A_NO_LINKING: cfg->linking = 0; return 1;
    case A_LINKING: cfg->linking = 1; return 1;
    case A_NO_VALUES: cfg->values = 0; return 1;
    case A_VALUES: cfg->values = 1; return 1;
    case A_NO_QCHECK: cfg->question_check = 0; return 1;
    case A_QCHECK: cfg->question_check = 1; return 1;
    case A_PLAN: cfg->plan = 1; return 1;
    case A_NO_PLAN: cfg->plan = 0; return 1;
    case A_NO_CHECKS: cfg->checks = 0; return 1;
    case A_NO_REQUALIFY: cfg->requalify = 0; return 1;
    case A_NO_CAST: cfg->cast_compare = 0; return 1;
    case A_NO_JOIN_MISSING: cfg->join_missing = 0; return 1;
    case A_NO_SETTLE: cfg->settle = 0; return 1;
    case A_SETTLE: cfg->settle = 1; return 1;
    case A_NO_IDLE_JOIN: cfg->idle_join = 0; return 1;
    case A_IDLE_JOIN: cfg->idle_join = 1; return 1;
    case A_NO_CLEAN: cfg->clean_candidate = 0; return 1;
    case A_CLEAN: cfg->clean_candidate = 1; return 1;
    case A_RESAMPLE: cfg->resample = 1; return 1;
    case A_SELECT: cfg->select = 1; return 1;
    case A_NO_SELECT: cfg->select = 0; return 1;
    case A_CHECKS: cfg->checks = 1; return 1;
    case A_ANSWER: cfg->answer = 1; return 1;
    case A_MEMORY: cfg->memory_path = arg; return 1;
    case A_CANDIDATES:
        if (cli_number(prog, "--candidates", arg, 1, 8, &v))
            return -1;
        cfg->candidates = (int)v;
        return 1;
    case A_EXAMPLES:
        if (cli_number(prog, "--examples", arg, 0, 20, &v))
            return -1;
        cfg->memory = (int)v;
        return 1;
    case A_BANK:
        if (cli_number(prog, "--bank", arg, 0, 8, &v))
            return -1;
        cfg->bank = (int)v;
        return 1;
    case A_SAMPLE_VALUES:
        if (cli_number(prog, "--sample-values", arg, 0, 10, &v))
            return -1;
        cfg->sample_values = (int)v;
        return 1;
    case A_CAND_TEMP:
        if (cli_real(arg, &d) || !(d >= 0 && d <= 2)) {
            fprintf(stderr, "%s: --candidate-temperature takes a number "
                            "from 0 to 2, not '%s'\n", prog, arg);
            return -1;
        }
        cfg->candidate_temperature = d;
        return 1;
    case A_CAND_GATE:
        if (cli_real(arg, &d) || !(d >= 0 && d <= 1)) {
            fprintf(stderr, "%s: --candidate-gate takes a probability "
                            "from 0 to 1, not '%s'\n", prog, arg);
            return -1;
        }
        cfg->candidate_gate = d;
        return 1;
    case A_CAND_CAP:
        if (cli_real(arg, &d) || !(d == 0 || (d >= 1 && d <= 100))) {
            fprintf(stderr, "%s: --candidate-cap takes 0 (no cap) or a "
                            "factor from 1 to 100, not '%s'\n", prog, arg);
            return -1;
        }
        cfg->candidate_cap = d;
        return 1;
    default:
        return 0;
    }
}

int cli_model_opt(int c, const char *arg, askdb_config *cfg, const char *prog)
{
    long v;
    double d;

    switch (c) {
    case OPT_TRACE:
        cfg->trace_path = arg;
        return 1;
    case OPT_MAX_ATTEMPTS:
        if (cli_number(prog, "--max-attempts", arg, 1, 20, &v))
            return -1;
        cfg->max_attempts = (int)v;
        return 1;
    case OPT_TIMEOUT:
        if (cli_number(prog, "--timeout", arg, 1, 86400000L, &v))
            return -1;
        cfg->query_timeout_ms = (int)v;
        return 1;
    case OPT_MAX_ROWS:
        if (cli_number(prog, "--max-rows", arg, 1, 100000000L, &v))
            return -1;
        cfg->max_rows = v;
        return 1;
    case OPT_MAX_BYTES:
        if (cli_number(prog, "--max-bytes", arg, 1, 1L << 40, &v))
            return -1;
        cfg->max_bytes = (size_t)v;
        return 1;
    case OPT_IN_PROCESS:
        cfg->in_process = 1;
        return 1;
    case OPT_PROVIDER:
        cfg->provider = arg;
        return 1;
    case OPT_LLM_URL:
        cfg->llm_url = arg;
        return 1;
    case OPT_MODEL:
        cfg->model = arg;
        return 1;
    case OPT_API_KEY:
        cfg->api_key = arg;
        return 1;
    case OPT_TEMPERATURE:
        if (cli_real(arg, &d) || !(d >= 0 && d <= 2)) {
            fprintf(stderr, "%s: --temperature takes a number from 0 "
                            "to 2, not '%s'\n", prog, arg);
            return -1;
        }
        cfg->temperature = d;
        return 1;
    case OPT_MAX_TOKENS:
        if (cli_number(prog, "--max-tokens", arg, 1, 1000000, &v))
            return -1;
        cfg->max_tokens = (int)v;
        return 1;
    case OPT_LLM_TIMEOUT:
        if (cli_number(prog, "--llm-timeout", arg, 1, 86400000L, &v))
            return -1;
        cfg->llm_timeout_ms = (int)v;
        return 1;
    case OPT_RETRIES:
        if (cli_number(prog, "--retries", arg, 0, 20, &v))
            return -1;
        cfg->llm_retries = (int)v;
        return 1;
    case OPT_STREAM:
        cfg->stream = 1;
        return 1;
    case OPT_SEED:
        if (cli_number(prog, "--seed", arg, 0, 2147483647L, &v))
            return -1;
        cfg->seed = (int)v;
        return 1;
    case OPT_THREADS:
        if (cli_number(prog, "--threads", arg, 1, 1024, &v))
            return -1;
        cfg->threads = (int)v;
        return 1;
    case OPT_NO_GRAMMAR:
        cfg->no_grammar = 1;
        return 1;
    case OPT_NO_PROMPT_CACHE:
        cfg->no_prompt_cache = 1;
        return 1;
    default:
        return 0;
    }
}

int cli_model_env(const char *prog, askdb_config *cfg)
{
    static const char *const names[] = {"openai", "anthropic", "local"};
    const char *flag = cfg->provider;
    size_t i;

    askdb_config_from_env(cfg);
    if (!cfg->provider || !*cfg->provider)
        return 0;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(cfg->provider, names[i]) == 0)
            return 0;
    /* The library also takes "custom", a program's own model function
    ** (askdb_config.llm_fn), which no command can be given: not named. */
    if (flag)
        fprintf(stderr, "%s: --provider '%s'", prog, cfg->provider);
    else
        fprintf(stderr, "%s: ASKDB_PROVIDER='%s'", prog, cfg->provider);
    fprintf(stderr, " is not a model provider: use openai (any "
                    "OpenAI-compatible server: Ollama, vLLM, llama.cpp's), "
                    "anthropic or local%s\n",
            flag ? "" : ", or unset it to choose by the URL, key and model");
    return -1;
}

/* The entries of opts before its terminator. */
static size_t count_opts(const struct option *opts)
{
    size_t n = 0;

    while (opts[n].name)
        n++;
    return n;
}

struct option *cli_merge_opts(const struct option *own, int with_model)
{
    size_t n = count_opts(own), k = with_model ? count_opts(cli_model_opts)
                                               : 0;
    size_t m = count_opts(cli_agent_opts);
    struct option *all;

    all = calloc(n + k + m + 1, sizeof *all);
    if (!all)
        return NULL;
    memcpy(all, own, n * sizeof *all);
    memcpy(all + n, cli_model_opts, k * sizeof *all);
    memcpy(all + n + k, cli_agent_opts, (m + 1) * sizeof *all);
    return all;
}
