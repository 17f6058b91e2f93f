/* eval.c - the `askdb eval` command: options, progress line, summary,
** report. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Called by main() for `askdb eval`; argv[0] is "askdb eval". (Belongs
** in cli.h next to cli_shell.) */

/* Eval keeps whole results to compare them: larger caps than `ask`. */
#define EVAL_MAX_ROWS 100000L
#define EVAL_MAX_BYTES ((size_t)64 << 20)

static const char usage_eval[] =
    "usage: askdb eval --suite FILE [--db-root DIR] [options]\n"
    "\n"
    "Ask every question of a suite, run the gold SQL and the answer under\n"
    "the same read-only guard, and score execution accuracy (EX) as the\n"
    "official Spider evaluation does: same rows as a multiset (in order\n"
    "when the gold SQL has ORDER BY), values compared by value, columns\n"
    "in any order. Suites: Spider (db_id, question, query), BIRD (db_id,\n"
    "question, evidence, SQL, difficulty; the evidence is given to the\n"
    "model as a hint) or JSON lines {\"db\": PATH, \"question\", \"gold\"}.\n"
    "Prints the summary on stdout; see docs/eval.md.\n"
    "\n"
    "Suite:\n"
    "      --suite FILE      the questions (required)\n"
    "      --db-root DIR     databases are DIR/<db_id>/<db_id>.sqlite\n"
    "      --db-url URL      ask this database instead, {db_id} replaced\n"
    "                        (e.g. postgresql://u@127.0.0.1/{db_id}): the\n"
    "                        same data in another engine; the gold SQL\n"
    "                        still runs on the SQLite file\n"
    "      --tables FILE     Spider tables.json: warn about unknown db_ids\n"
    "      --db A,B          only these databases\n"
    "      --sample N        a fixed random sample of N items ...\n"
    "      --seed S          ... drawn with seed S (default 0; splitmix64,\n"
    "                        the same on every machine)\n"
    "      --sample-dbs D    only D databases drawn at random (--seed)\n"
    "      --per-db K        at most K items of each database, drawn at\n"
    "                        random (--seed); with --sample-dbs: D x K\n"
    "                        questions that reuse each schema prompt\n"
    "      --limit N         only the first N (after --db and the\n"
    "                        sampling)\n"
    "      --keep-distinct   keep DISTINCT when comparing (the official\n"
    "                        evaluation removes it by default)\n"
    "Run:\n"
    "      --out FILE        append one JSON line per finished item\n"
    "      --resume          continue the run in --out, skipping its items\n"
    "                        (those the model failed on or whose database\n"
    "                        was missing or unusable run again)\n"
    "      --jobs J          databases in parallel (default 1; HTTP\n"
    "                        models: the local model runs one at a time)\n"
    "      --report FILE     write a self-contained HTML report\n"
    "      --warm            make each database's schema prompt ready\n"
    "                        before its first question, untimed (what\n"
    "                        askdb serve and shell do before you ask)\n"
    "  -q, --quiet           no progress on stderr\n"
    "  -h, --help            this text\n"
    "Model (flags override the environment; as for ask):\n"
    "      --provider NAME   openai, anthropic or local (ASKDB_PROVIDER)\n"
    "      --llm-url URL     OpenAI-compatible base URL (ASKDB_LLM_URL)\n"
    "      --model NAME      model name or .gguf path (ASKDB_MODEL)\n"
    "      --api-key KEY     API key (ASKDB_API_KEY, ...)\n"
    "      --temperature T   sampling temperature (default 0)\n"
    "      --max-tokens N    reply length cap (default 512)\n"
    "      --model-seed N    the model's sampling seed (--seed is the\n"
    "                        sample's)\n"
    "      --llm-timeout MS  per request (default 120000)\n"
    "      --retries N       retries on 429/5xx/reset (default 4)\n"
    "      --threads N       local model: CPU threads (default: all cores)\n"
    "      --no-grammar      local model: no SQL-constrained decoding\n"
    "      --no-prompt-cache local model: do not keep the evaluated schema\n"
    "                        prompt in the cache directory for the next\n"
    "                        run (see ASKDB_PROMPT_CACHE_MB)\n";

/* The rest of the help (one string would outgrow what C compilers must
** take). */
static const char usage_eval_limits[] =
    "Agent and limits:\n"
    "      --max-attempts N  SQL generations per question (default 3)\n"
    "      --timeout MS      time limit of every query, gold ones too\n"
    "                        (default 10000; a prediction that times out\n"
    "                        is wrong)\n"
    "      --max-rows N      row cap (default 100000 for eval)\n"
    "      --max-bytes N     byte cap (default 67108864 for eval)\n"
    "      --in-process      run the statements of SQLite and DuckDB files\n"
    "                        in this process, not in askdb-exec (as for\n"
    "                        ask; gold ones too)\n"
    "      --trace FILE      append every agent step as JSON lines\n"
    "  -v, --verbose         print the agent's steps on stderr\n";

/* The end of the help, after every option (cli_agent_help's too). */
static const char usage_eval_exit[] =
    "\n"
    "Exit codes: 0 the run finished (whatever the accuracy), 2 usage error\n"
    "(bad flag, unreadable suite, --out exists without --resume), 4 the\n"
    "model is unreachable, refuses the key (401 or 403: at the first\n"
    "question) or failed on 5 questions in a row (the run stops; finished\n"
    "items are kept in --out and summarized), 130 Ctrl-C (the questions\n"
    "being asked finish, no more are asked; summarized too).\n";

enum {
    O_SUITE = 256, O_DB_ROOT, O_TABLES, O_LIMIT, O_SAMPLE, O_SEED, O_DB,
    O_JOBS, O_OUT, O_REPORT, O_RESUME, O_KEEP_DISTINCT, O_WARM, O_DB_URL,
    O_PROVIDER,
    O_LLM_URL, O_MODEL, O_API_KEY, O_TEMPERATURE, O_MAX_TOKENS, O_MODEL_SEED,
    O_LLM_TIMEOUT, O_RETRIES, O_MAX_ATTEMPTS, O_TIMEOUT, O_MAX_ROWS,
    O_MAX_BYTES, O_TRACE, O_THREADS, O_NO_GRAMMAR, O_SAMPLE_DBS, O_PER_DB,
    O_NO_PROMPT_CACHE, O_IN_PROCESS
};

const struct option cli_eval_opts[] = {
    {"suite", required_argument, NULL, O_SUITE},
    {"db-root", required_argument, NULL, O_DB_ROOT},
    {"tables", required_argument, NULL, O_TABLES},
    {"limit", required_argument, NULL, O_LIMIT},
    {"sample", required_argument, NULL, O_SAMPLE},
    {"sample-dbs", required_argument, NULL, O_SAMPLE_DBS},
    {"per-db", required_argument, NULL, O_PER_DB},
    {"seed", required_argument, NULL, O_SEED},
    {"db", required_argument, NULL, O_DB},
    {"jobs", required_argument, NULL, O_JOBS},
    {"out", required_argument, NULL, O_OUT},
    {"report", required_argument, NULL, O_REPORT},
    {"resume", no_argument, NULL, O_RESUME},
    {"keep-distinct", no_argument, NULL, O_KEEP_DISTINCT},
    {"warm", no_argument, NULL, O_WARM},
    {"db-url", required_argument, NULL, O_DB_URL},
    {"provider", required_argument, NULL, O_PROVIDER},
    {"llm-url", required_argument, NULL, O_LLM_URL},
    {"model", required_argument, NULL, O_MODEL},
    {"api-key", required_argument, NULL, O_API_KEY},
    {"temperature", required_argument, NULL, O_TEMPERATURE},
    {"max-tokens", required_argument, NULL, O_MAX_TOKENS},
    {"model-seed", required_argument, NULL, O_MODEL_SEED},
    {"llm-timeout", required_argument, NULL, O_LLM_TIMEOUT},
    {"retries", required_argument, NULL, O_RETRIES},
    {"max-attempts", required_argument, NULL, O_MAX_ATTEMPTS},
    {"timeout", required_argument, NULL, O_TIMEOUT},
    {"max-rows", required_argument, NULL, O_MAX_ROWS},
    {"max-bytes", required_argument, NULL, O_MAX_BYTES},
    {"trace", required_argument, NULL, O_TRACE},
    {"threads", required_argument, NULL, O_THREADS},
    {"no-grammar", no_argument, NULL, O_NO_GRAMMAR},
    {"no-prompt-cache", no_argument, NULL, O_NO_PROMPT_CACHE},
    {"in-process", no_argument, NULL, O_IN_PROCESS},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
};

/* A whole number in [lo, hi]; -1 with a message. */
static int num(const char *opt, const char *s, long long lo, long long hi,
               long long *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "askdb eval: %s takes a whole number from %lld to "
                        "%lld, not '%s'\n", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

struct eval_cli {
    askdb_config cfg;
    askdb_eval_options eo;
    const char *report;
    int quiet, verbose, rows_set, bytes_set;
};

/* cli_agent_help without its --answer line: eval refuses --answer. */
static void put_agent_help(void)
{
    const char *a = strstr(cli_agent_help, "\n      --answer ");
    const char *end = a ? strchr(a + 1, '\n') : NULL;

    if (!end) {
        fputs(cli_agent_help, stdout);
        return;
    }
    fwrite(cli_agent_help, 1, (size_t)(a + 1 - cli_agent_help), stdout);
    fputs(end + 1, stdout);
}

/* Parse argv into c; returns 0, 1 (help printed) or -1 (usage error). */
static int parse(int argc, char **argv, struct eval_cli *c)
{
    struct option *opts = cli_merge_opts(cli_eval_opts, 0);
    long long v;
    double d;
    int ch, r;

    if (!opts) {
        fprintf(stderr, "askdb eval: out of memory\n");
        return -1;
    }
    optind = 1;
    while ((ch = getopt_long(argc, argv, "qvh", opts, NULL)) != -1) {
        r = cli_agent_opt(ch, optarg, &c->cfg, "askdb eval");
        if (r < 0)
            goto bad;
        /* Scored nowhere, the answer would only add a model call to
        ** every question and to the calls, tokens and latency eval
        ** measures. */
        if (c->cfg.answer) {
            fprintf(stderr, "askdb eval: --answer is for ask, shell, serve "
                            "and mcp (see 'askdb help eval')\n"
                            "askdb eval: eval scores the SQL's rows; an "
                            "answer in words would cost a model call per "
                            "question that no score uses\n");
            goto bad;
        }
        if (r > 0)
            continue;
        switch (ch) {
        case O_SUITE: c->eo.suite_path = optarg; break;
        case O_DB_ROOT: c->eo.db_root = optarg; break;
        case O_TABLES: c->eo.tables_path = optarg; break;
        case O_DB: c->eo.dbs = optarg; break;
        case O_OUT: c->eo.out_path = optarg; break;
        case O_REPORT: c->report = optarg; break;
        case O_RESUME: c->eo.resume = 1; break;
        case O_KEEP_DISTINCT: c->eo.keep_distinct = 1; break;
        case O_WARM: c->eo.warm = 1; break;
        case O_DB_URL: c->eo.db_url = optarg; break;
        case O_PROVIDER: c->cfg.provider = optarg; break;
        case O_LLM_URL: c->cfg.llm_url = optarg; break;
        case O_MODEL: c->cfg.model = optarg; break;
        case O_API_KEY: c->cfg.api_key = optarg; break;
        case O_TRACE: c->cfg.trace_path = optarg; break;
        case 'q': c->quiet = 1; break;
        case 'v': c->verbose = 1; break;
        case 'h':
            fputs(usage_eval, stdout);
            fputs(usage_eval_limits, stdout);
            put_agent_help();
            fputs(usage_eval_exit, stdout);
            free(opts);
            return 1;
        case O_LIMIT:
            if (num("--limit", optarg, 1, 1000000000LL, &v))
                goto bad;
            c->eo.limit = (long)v;
            break;
        case O_SAMPLE:
            if (num("--sample", optarg, 1, 1000000000LL, &v))
                goto bad;
            c->eo.sample = (long)v;
            break;
        case O_SAMPLE_DBS:
            if (num("--sample-dbs", optarg, 1, 1000000000LL, &v))
                goto bad;
            c->eo.sample_dbs = (long)v;
            break;
        case O_PER_DB:
            if (num("--per-db", optarg, 1, 1000000000LL, &v))
                goto bad;
            c->eo.per_db = (long)v;
            break;
        case O_SEED:
            if (num("--seed", optarg, 0, 9223372036854775807LL, &v))
                goto bad;
            c->eo.seed = (uint64_t)v;
            break;
        case O_THREADS:
            if (num("--threads", optarg, 1, 1024, &v))
                goto bad;
            c->cfg.threads = (int)v;
            break;
        case O_NO_GRAMMAR:
            c->cfg.no_grammar = 1;
            break;
        case O_NO_PROMPT_CACHE:
            c->cfg.no_prompt_cache = 1;
            break;
        case O_JOBS:
            if (num("--jobs", optarg, 1, 64, &v))
                goto bad;
            c->eo.jobs = (int)v;
            break;
        case O_TEMPERATURE:
            if (cli_real(optarg, &d) || !(d >= 0 && d <= 2)) {
                fprintf(stderr, "askdb eval: --temperature takes a number "
                                "from 0 to 2, not '%s'\n", optarg);
                goto bad;
            }
            c->cfg.temperature = d;
            break;
        case O_MAX_TOKENS:
            if (num("--max-tokens", optarg, 1, 1000000, &v))
                goto bad;
            c->cfg.max_tokens = (int)v;
            break;
        case O_MODEL_SEED:
            if (num("--model-seed", optarg, 0, 2147483647LL, &v))
                goto bad;
            c->cfg.seed = (int)v;
            break;
        case O_LLM_TIMEOUT:
            if (num("--llm-timeout", optarg, 1, 86400000LL, &v))
                goto bad;
            c->cfg.llm_timeout_ms = (int)v;
            break;
        case O_RETRIES:
            if (num("--retries", optarg, 0, 20, &v))
                goto bad;
            c->cfg.llm_retries = (int)v;
            break;
        case O_MAX_ATTEMPTS:
            if (num("--max-attempts", optarg, 1, 20, &v))
                goto bad;
            c->cfg.max_attempts = (int)v;
            break;
        case O_IN_PROCESS:
            c->cfg.in_process = 1;
            break;
        case O_TIMEOUT:
            if (num("--timeout", optarg, 1, 86400000LL, &v))
                goto bad;
            c->cfg.query_timeout_ms = (int)v;
            break;
        case O_MAX_ROWS:
            if (num("--max-rows", optarg, 1, 100000000LL, &v))
                goto bad;
            c->cfg.max_rows = (long)v;
            c->rows_set = 1;
            break;
        case O_MAX_BYTES:
            if (num("--max-bytes", optarg, 1, 1LL << 40, &v))
                goto bad;
            c->cfg.max_bytes = (size_t)v;
            c->bytes_set = 1;
            break;
        default:
            fprintf(stderr, "askdb eval: see 'askdb help eval'\n");
            goto bad;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "askdb eval: unexpected argument '%s' (the suite "
                        "is given with --suite)\n", argv[optind]);
        goto bad;
    }
    free(opts);
    return 0;
bad:
    free(opts);
    return -1;
}

/* ---------------------------------------------------------------------- */
/* Progress on stderr                                                     */
/* ---------------------------------------------------------------------- */

struct progress {
    int tty;
    int shown;               /* a \r line is on screen */
    double last_ms;          /* elapsed at the last plain line */
    long last_done;
};

static void eta_text(char *out, size_t n, double s)
{
    if (s < 0 || s > 1e7)
        snprintf(out, n, "?");
    else if (s >= 3600)
        snprintf(out, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    else if (s >= 60)
        snprintf(out, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(out, n, "%.0fs", s);
}

static void on_progress(void *ud, const askdb_eval_progress *p)
{
    struct progress *pr = ud;
    long ran = p->done - p->resumed;
    double rate = p->elapsed_ms > 0 ? ran / (p->elapsed_ms / 1000.0) : 0;
    char eta[32], ex[16];

    /* Nothing scored yet (or every item bad) is n/a, as in the summary. */
    askdb_eval_pct_text(p->correct, p->evaluated, ex, sizeof ex);
    eta_text(eta, sizeof eta, rate > 0 ? (p->total - p->done) / rate : -1);
    if (pr->tty) {
        /* Our own escape clears the line; the database name is cleaned. */
        fputs("\r\033[K", stderr);
        format_printf(stderr, "%ld/%ld  EX %s  %.2f q/s  ETA %s  %s",
                      p->done, p->total, ex, rate, eta, p->db ? p->db : "");
        fflush(stderr);
        pr->shown = 1;
        return;
    }
    if (ran % 10 == 0 || p->elapsed_ms - pr->last_ms >= 30000 ||
        p->done == p->total) {
        fprintf(stderr, "askdb eval: %ld/%ld done, EX %s, %.2f q/s, "
                        "ETA %s\n", p->done, p->total, ex, rate, eta);
        pr->last_ms = p->elapsed_ms;
    }
}

/* Print the notes of the eval (one per line) as warnings. */
static void print_notes(const char *notes)
{
    const char *p = notes, *nl;

    while (*p) {
        nl = strchr(p, '\n');
        if (!nl)
            nl = p + strlen(p);
        format_printf(stderr, "askdb eval: note: %.*s\n", (int)(nl - p), p);
        p = *nl ? nl + 1 : nl;
    }
}

/*
** Ctrl-C during a run: the questions being asked finish, the rest are not
** asked, and the summary (and report) cover what was done; a second
** Ctrl-C is the default one.
*/
static askdb_eval *volatile interrupting;
static volatile sig_atomic_t interrupts;
static struct sigaction before_int;

static void on_int(int sig)
{
    static const char msg[] = "\naskdb eval: stopping after the questions "
                              "being asked (Ctrl-C again to quit now)\n";

    if (interrupts++) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    askdb_eval_interrupt(interrupting);
}

static void interrupt_begin(askdb_eval *ev)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_int;
    sigemptyset(&sa.sa_mask);
    interrupting = ev;
    interrupts = 0;
    sigaction(SIGINT, &sa, &before_int);
    if (before_int.sa_handler == SIG_IGN)   /* started to ignore it */
        sigaction(SIGINT, &before_int, NULL);
}

static void interrupt_end(void)
{
    sigaction(SIGINT, &before_int, NULL);
    interrupting = NULL;
}

int cli_eval(int argc, char **argv)
{
    struct eval_cli c;
    struct progress pr;
    askdb_eval *ev = NULL;
    askdb_status st, run_st;
    char *text = NULL;
    int r, rc;

    memset(&c, 0, sizeof c);
    memset(&pr, 0, sizeof pr);
    c.cfg = askdb_config_default();
    c.eo = askdb_eval_options_default();
    r = parse(argc, argv, &c);
    if (r)
        return r > 0 ? EXIT_ANSWERED : EXIT_USAGE;
    if (!c.eo.suite_path) {
        fprintf(stderr, "askdb eval: no suite given (--suite FILE; see "
                        "'askdb help eval')\n");
        return EXIT_USAGE;
    }
    if (!c.rows_set)
        c.cfg.max_rows = EVAL_MAX_ROWS;
    if (!c.bytes_set)
        c.cfg.max_bytes = EVAL_MAX_BYTES;
    if (cli_model_env(argv[0], &c.cfg) ||
        cli_memory_check("askdb eval", &c.cfg))
        return EXIT_USAGE;
    if (c.verbose)
        c.cfg.log_fn = cli_log_step;
    if (!c.quiet) {
        pr.tty = isatty(STDERR_FILENO);
        c.eo.progress = on_progress;
        c.eo.progress_ud = &pr;
    }

    /* The report is written at the end: askdb_eval_new() checks its path
    ** now, not after the whole run. */
    c.eo.report_path = c.report;
    st = askdb_eval_new(&c.cfg, &c.eo, &ev);
    if (st) {
        format_printf(stderr, "askdb eval: %s\n", askdb_eval_errmsg(ev));
        askdb_eval_free(ev);
        return cli_exit_code(st);
    }
    print_notes(askdb_eval_notes(ev));
    interrupt_begin(ev);
    run_st = askdb_eval_run(ev);
    interrupt_end();
    if (pr.shown)
        fputc('\n', stderr);
    if (run_st)
        format_printf(stderr, "askdb eval: stopped: %s\n",
                      askdb_eval_errmsg(ev));
    rc = run_st ? cli_exit_code(run_st) : EXIT_ANSWERED;

    st = askdb_eval_summary(ev, &text);
    if (st == ASKDB_OK)
        format_puts(stdout, text);
    else
        fprintf(stderr, "askdb eval: cannot summarize: out of memory\n");
    askdb_free(text);
    if (c.report) {
        st = askdb_eval_write_report(ev, c.report);
        if (st) {
            format_printf(stderr, "askdb eval: %s\n", askdb_eval_errmsg(ev));
            if (!rc)
                rc = cli_exit_code(st);
        }
    }
    askdb_eval_free(ev);
    return rc;
}
