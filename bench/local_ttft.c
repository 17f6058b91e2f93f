/* local_ttft.c - load time, speed and time to first token of the local model.
**
**   make build/local_ttft
**   build/local_ttft [--model PATH.gguf] [--threads N] [--db DB]
**                    [--max-tokens N] [--n N [--grammar 1]] [QUESTION...]
**
** Defaults: the default local model, all cores, examples/shop.db, 128
** tokens, and two questions. Two parts, each with its own model load:
**
** 1. provider: the local provider alone (src/llm/llm.h), with a system
**    message holding an instruction and the database's schema text and a
**    user message holding the question, greedy. For each question: prompt
**    tokens, how many came from the KV cache, time to first token, and
**    the rates (prompt: evaluated tokens / time to first token;
**    generation: tokens after the first / time after the first).
** 2. agent: the public API (askdb_agent_new, askdb_agent_ask) with the
**    agent's real prompts, the grammar if the agent uses one, repairs and
**    all; time to first token is taken by the streaming callback from the
**    start of askdb_agent_ask.
**
** With --n N only a third part runs instead:
**
** 3. candidates: the provider alone, prompt as in part 1. For each
**    question, after one warm-up call (which evaluates the prompt, so that
**    every later call reuses it): one llm_complete (greedy), then the N
**    replies llm_complete_n makes (greedy + N-1 sampled, same temperatures
**    and seeds) as N llm_complete calls one after another, then
**    llm_complete_n(N) decoding them as one batch. Prints tokens, time and
**    tokens/s per sequence of each, the batch's speed-up over the N
**    sequential calls and how many batch replies equal the sequential
**    ones. --grammar 1 constrains decoding with the agent's SQL grammar
**    for the database (src/sql/grammar.h), as the agent does.
**
** Every figure is wall time: on a machine where other processes use the
** cores, the model slows down badly (see models/README.md), so note the
** load average, which is printed first.
*/
#define _POSIX_C_SOURCE 200809L

#include <askdb.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/db.h"
#include "llm/llm.h"
#include "sql/grammar.h"

static double now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

struct opts {
    const char *model;
    const char *db;
    int threads;
    int max_tokens;
    int nq;
    const char *const *q;
    int n;                /* --n: candidates part (0 = parts 1 and 2) */
    int grammar;          /* --grammar 1: the agent's SQL grammar */
};

static const char *const default_q[] = {
    "Which 5 customers spent the most in 2024?",
    "How many orders were shipped to Germany?",
};

static void print_load(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    char line[128];

    if (f && fgets(line, sizeof line, f))
        printf("load average: %s", line);
    if (f)
        fclose(f);
}

/* Part 1: the provider alone. Returns 0 on success. */
static int bench_provider(const struct opts *o, const char *schema)
{
    askdb_config cfg = askdb_config_default();
    struct llm_msg msgs[2];
    struct llm_request req;
    struct llm_reply r;
    llm *m = NULL;
    char err[512], *sys;
    double t0, t_new;
    size_t n;
    int i;

    cfg.provider = "local";
    cfg.model = o->model;
    cfg.threads = o->threads;
    n = strlen(schema) + 256;
    sys = malloc(n);
    if (!sys)
        return 1;
    snprintf(sys, n, "You write one SQLite query that answers the user's "
                     "question about this database. Reply with the query "
                     "in a ```sql block.\n\n%s", schema);
    t0 = now_ms();
    if (llm_new(&cfg, &m, err, sizeof err)) {
        fprintf(stderr, "local_ttft: %s\n", err);
        free(sys);
        return 1;
    }
    t_new = now_ms() - t0;
    printf("provider: llm_new %.0f ms\n", t_new);
    memset(&req, 0, sizeof req);
    msgs[0].role = "system";
    msgs[0].content = sys;
    msgs[1].role = "user";
    req.msgs = msgs;
    req.nmsgs = 2;
    req.max_tokens = o->max_tokens;
    req.seed = -1;
    for (i = 0; i < o->nq; i++) {
        double gen_ms;
        long eval;

        msgs[1].content = o->q[i];
        if (llm_complete(m, &req, &r)) {
            fprintf(stderr, "local_ttft: %s\n", llm_errmsg(m));
            llm_free(m);
            free(sys);
            return 1;
        }
        eval = r.prompt_tokens - r.cached_tokens;
        gen_ms = r.ms - r.ttft_ms;
        if (r.load_ms > 0)
            printf("provider: model load + context %.0f ms\n", r.load_ms);
        printf("provider: q%d prompt %ld tokens (%ld cached, %ld evaluated), "
               "ttft %.0f ms, prompt %.1f tok/s; %ld tokens generated in "
               "%.0f ms after the first, %.1f tok/s; total %.0f ms\n",
               i + 1, r.prompt_tokens, r.cached_tokens, eval, r.ttft_ms,
               r.ttft_ms > 0 ? (double)eval / (r.ttft_ms / 1e3) : 0.0,
               r.completion_tokens, gen_ms,
               gen_ms > 0 && r.completion_tokens > 1
                   ? (double)(r.completion_tokens - 1) / (gen_ms / 1e3)
                   : 0.0,
               r.ms);
        printf("provider: q%d reply: %s\n", i + 1, r.text);
        llm_reply_free(&r);
    }
    llm_free(m);
    free(sys);
    return 0;
}

/* Sum of completion tokens of r[0..n). */
static long sum_tokens(const struct llm_reply *r, int n)
{
    long t = 0;
    int i;

    for (i = 0; i < n; i++)
        t += r[i].completion_tokens > 0 ? r[i].completion_tokens : 0;
    return t;
}

/* Part 3: one reply vs N sequential vs N batched. Returns 0 on success. */
static int bench_candidates(const struct opts *o, const char *schema,
                            const char *grammar)
{
    askdb_config cfg = askdb_config_default();
    struct llm_reply one, *seq = NULL, *bat = NULL;
    struct llm_msg msgs[2];
    struct llm_request req, ri;
    llm *m = NULL;
    char err[512], *sys = NULL;
    double seq_ms, t0;
    long seq_tok, bat_tok;
    int i, q, same, rc = 1;
    size_t len;

    memset(&one, 0, sizeof one);
    cfg.provider = "local";
    cfg.model = o->model;
    cfg.threads = o->threads;
    len = strlen(schema) + 256;
    sys = malloc(len);
    seq = calloc((size_t)o->n, sizeof *seq);
    bat = calloc((size_t)o->n, sizeof *bat);
    if (!sys || !seq || !bat)
        goto out;
    snprintf(sys, len, "You write one SQLite query that answers the user's "
                       "question about this database. Reply with the query "
                       "in a ```sql block.\n\n%s", schema);
    if (llm_new(&cfg, &m, err, sizeof err)) {
        fprintf(stderr, "local_ttft: %s\n", err);
        goto out;
    }
    memset(&req, 0, sizeof req);
    msgs[0].role = "system";
    msgs[0].content = sys;
    msgs[1].role = "user";
    req.msgs = msgs;
    req.nmsgs = 2;
    req.max_tokens = o->max_tokens;
    req.seed = -1;
    req.grammar = grammar;
    printf("candidates: n=%d, threads %d, max_tokens %d, grammar %s, "
           "sampled at %.2f\n", o->n, o->threads, o->max_tokens,
           grammar ? "yes" : "no", llm_candidate_temperature(&req, 1));
    for (q = 0; q < o->nq; q++) {
        msgs[1].content = o->q[q];
        if (llm_complete(m, &req, &one))
            goto fail;
        printf("candidates: q%d warm-up: prompt %ld tokens (%ld cached), "
               "%.0f ms\n", q + 1, one.prompt_tokens, one.cached_tokens,
               one.ms);
        llm_reply_free(&one);
        if (llm_complete(m, &req, &one))
            goto fail;
        printf("candidates: q%d single: %ld tokens in %.0f ms, %.1f tok/s\n",
               q + 1, one.completion_tokens, one.ms,
               (double)one.completion_tokens / (one.ms / 1e3));
        seq_ms = 0;
        for (i = 0; i < o->n; i++) {
            ri = req;
            ri.temperature = llm_candidate_temperature(&req, i);
            ri.seed = llm_candidate_seed(&req, i);
            if (llm_complete(m, &ri, &seq[i]))
                goto fail;
            seq_ms += seq[i].ms;
        }
        seq_tok = sum_tokens(seq, o->n);
        printf("candidates: q%d %d sequential calls: %ld tokens in %.0f ms, "
               "%.1f tok/s\n", q + 1, o->n, seq_tok, seq_ms,
               (double)seq_tok / (seq_ms / 1e3));
        t0 = now_ms();
        if (llm_complete_n(m, &req, o->n, bat))
            goto fail;
        bat_tok = sum_tokens(bat, o->n);
        same = 0;
        for (i = 0; i < o->n; i++)
            same += strcmp(bat[i].text, seq[i].text) == 0;
        /* Replies differ in length (and, sampled, the batch's may differ
        ** from the sequential ones), so both wall time and tokens/s. */
        printf("candidates: q%d batch of %d: %ld tokens in %.0f ms (call "
               "%.0f ms), %.1f tok/s per sequence, %.1f tok/s in all; "
               "vs sequential: wall %.2fx, tok/s %.2fx; %d/%d replies as "
               "sequential\n",
               q + 1, o->n, bat_tok, bat[0].ms, now_ms() - t0,
               (double)bat_tok / o->n / (bat[0].ms / 1e3),
               (double)bat_tok / (bat[0].ms / 1e3), seq_ms / bat[0].ms,
               ((double)bat_tok / bat[0].ms) / ((double)seq_tok / seq_ms),
               same, o->n);
        for (i = 0; i < o->n; i++)
            printf("candidates: q%d reply %d (%ld tokens): %s\n", q + 1, i,
                   bat[i].completion_tokens, bat[i].text);
        llm_reply_free(&one);
        for (i = 0; i < o->n; i++) {
            llm_reply_free(&seq[i]);
            llm_reply_free(&bat[i]);
        }
    }
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "local_ttft: %s\n", llm_errmsg(m));
out:
    llm_reply_free(&one);
    for (i = 0; seq && bat && i < o->n; i++) {
        llm_reply_free(&seq[i]);
        llm_reply_free(&bat[i]);
    }
    llm_free(m);
    free(seq);
    free(bat);
    free(sys);
    return rc;
}

struct first_token {
    double t0;
    double ttft;   /* < 0 until the first piece */
};

static void on_token(void *ud, const char *piece, size_t len)
{
    struct first_token *ft = ud;

    (void)piece;
    if (len > 0 && ft->ttft < 0)
        ft->ttft = now_ms() - ft->t0;
}

/* Part 2: the agent through the public API. Returns 0 on success. */
static int bench_agent(const struct opts *o)
{
    askdb_config cfg = askdb_config_default();
    struct first_token ft;
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    double t0;
    int i;

    cfg.provider = "local";
    cfg.model = o->model;
    cfg.threads = o->threads;
    cfg.token_fn = on_token;
    cfg.token_ud = &ft;
    t0 = now_ms();
    if (askdb_agent_new(&cfg, o->db, &ag)) {
        fprintf(stderr, "local_ttft: %s\n", askdb_agent_errmsg(ag));
        askdb_agent_free(ag);
        return 1;
    }
    printf("agent: askdb_agent_new (schema + model load) %.0f ms\n",
           now_ms() - t0);
    for (i = 0; i < o->nq; i++) {
        askdb_status st;

        ft.ttft = -1;
        ft.t0 = now_ms();
        st = askdb_agent_ask(ag, o->q[i], &a);
        printf("agent: q%d %s, ttft %.0f ms, total %.0f ms (model %.0f ms, "
               "%ld calls, %ld+%ld tokens), sql: %s\n",
               i + 1, askdb_status_str(st), ft.ttft, now_ms() - ft.t0,
               a ? a->t.llm_ms : 0.0, a ? a->llm_calls : 0L,
               a ? a->prompt_tokens : 0L, a ? a->completion_tokens : 0L,
               a && a->sql ? a->sql : "(none)");
        askdb_answer_free(a);
        a = NULL;
    }
    askdb_agent_free(ag);
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {NULL, "examples/shop.db", 0, 128, 2, default_q, 0, 0};
    askdb_db *db = NULL;
    askdb_config cfg = askdb_config_default();
    const struct db_schema *s = NULL;
    char *schema = NULL, *grammar = NULL;
    int i, rc;

    for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc) {
            fprintf(stderr, "local_ttft: %s needs a value\n", argv[i]);
            return 2;
        }
        if (strcmp(argv[i], "--model") == 0)
            o.model = argv[i + 1];
        else if (strcmp(argv[i], "--db") == 0)
            o.db = argv[i + 1];
        else if (strcmp(argv[i], "--threads") == 0)
            o.threads = (int)strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--max-tokens") == 0)
            o.max_tokens = (int)strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--n") == 0)
            o.n = (int)strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--grammar") == 0)
            o.grammar = (int)strtol(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "local_ttft: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (i < argc) {
        o.q = (const char *const *)(argv + i);
        o.nq = argc - i;
    }
    print_load();
    if (o.n < 0 || o.n > 64) {
        fprintf(stderr, "local_ttft: --n takes 1 to 64\n");
        return 2;
    }
    if (askdb_db_open(o.db, &cfg, &db) || askdb_db_schema_text(db, &schema) ||
        (o.grammar && db_schema(db, &s))) {
        fprintf(stderr, "local_ttft: %s\n", askdb_db_errmsg(db));
        askdb_db_close(db);
        return 1;
    }
    if (o.grammar)
        grammar = sqlx_grammar(s);
    askdb_db_close(db);
    if (o.grammar && !grammar) {
        fprintf(stderr, "local_ttft: out of memory\n");
        askdb_free(schema);
        return 1;
    }
    if (o.n > 0) {
        rc = bench_candidates(&o, schema, grammar);
    } else {
        rc = bench_provider(&o, schema);
        if (rc == 0)
            rc = bench_agent(&o);
    }
    askdb_free(schema);
    free(grammar);
    print_load();
    return rc;
}
