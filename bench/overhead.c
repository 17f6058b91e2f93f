/* overhead.c - the time askdb itself adds per question, with a zero-latency
** scripted model, over the Spider training databases.
**
**   overhead [--spider DIR] [--limit N] [--dbs N] [--rounds N]
**            [--json FILE] [--md]
**
** For every question of train.json (grouped by db_id, in file order) the
** model callback answers "```sql\n<gold query>\n```" at once, so that
**   added = answer->t.total_ms - answer->t.llm_ms
** is what askdb spends: schema extraction (first question of an agent),
** prompt building, SQL extraction, validation and execution. The SQL's own
** run time belongs to the database, so the figure without it
**   added_noexec = total - llm - exec
** is reported too, and so is the CPU time of the thread during the call
** (CLOCK_THREAD_CPUTIME_ID), which other processes do not inflate. Each
** question is reported in one of two groups: the first question on a
** database (it includes reading the schema) and the later ones; "all" is
** both. Peak memory is getrusage()'s ru_maxrss.
**
** train.json is read (suite_load_spider(), the loader of askdb eval) in
** a child process that hands the three strings of each question back
** through a pipe, so that the JSON tree never counts in this process's
** peak RSS. The baseline reported (ru_maxrss before the
** first agent) is the questions themselves (about 1.3 MB) plus the shared
** libraries that the askdb command loads too: libcurl and its TLS stack
** alone make about 5 MB of it.
**
** With --rounds N everything is asked N times, each time with fresh agents
** (so every round pays schema extraction again), and each question keeps
** the figures of the round in which askdb added least: on a busy machine
** this filters out time lost to other processes. Counts (OK, failed, model
** calls) are those of the first round.
*/
#define _POSIX_C_SOURCE 200809L

#include <askdb.h>
#include <jansson.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eval/suite.h"

/* ---------------------------------------------------------------------- */
/* Questions                                                              */
/* ---------------------------------------------------------------------- */

struct question {
    char *db_id, *text, *gold;
};

static struct question *qs;
static size_t nqs, capqs;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
                                                     noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "overhead: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p)
        die("%s", "out of memory");
    return p;
}

/* Write one length-prefixed string to fd. */
static int put_str(FILE *f, const char *s)
{
    size_t n = strlen(s);
    uint32_t len = (uint32_t)n;

    return fwrite(&len, sizeof len, 1, f) == 1 &&
                   (n == 0 || fwrite(s, 1, n, f) == n)
               ? 0 : -1;
}

static char *get_str(FILE *f, int *eof)
{
    uint32_t len;
    char *s;

    *eof = 0;
    if (fread(&len, sizeof len, 1, f) != 1) {
        *eof = 1;
        return NULL;
    }
    s = xmalloc((size_t)len + 1);
    if (len && fread(s, 1, len, f) != len)
        die("%s", "short read from the train.json reader");
    s[len] = '\0';
    return s;
}

/* The child: read spider's train.json (suite_load_spider) and stream
** db_id, question, query triples. */
static int child_read(const char *spider, int fd)
{
    struct suite s;
    FILE *out = fdopen(fd, "wb");
    char err[512];
    long i;

    if (suite_load_spider(spider, &s, err, sizeof err) != ASKDB_OK) {
        fprintf(stderr, "overhead: %s\n", err);
        return 1;
    }
    for (i = 0; i < s.n; i++) {
        const struct suite_item *it = &s.items[i];
        if (it->malformed) {
            fprintf(stderr, "overhead: %s/train.json: entry %ld: %s\n",
                    spider, i, it->malformed);
            return 1;
        }
        if (put_str(out, it->db_id) || put_str(out, it->question) ||
            put_str(out, it->gold))
            return 1;
    }
    return fclose(out) == 0 ? 0 : 1;
}

/* Fill qs with the questions of spider's train.json. */
static void load_questions(const char *spider)
{
    int fds[2], status, eof;
    pid_t pid;
    FILE *in;

    if (pipe(fds))
        die("pipe: %s", strerror(errno));
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        _exit(child_read(spider, fds[1]));
    }
    close(fds[1]);
    in = fdopen(fds[0], "rb");
    if (!in)
        die("fdopen: %s", strerror(errno));
    for (;;) {
        struct question q;
        q.db_id = get_str(in, &eof);
        if (eof)
            break;
        q.text = get_str(in, &eof);
        q.gold = eof ? NULL : get_str(in, &eof);
        if (eof)
            die("%s", "truncated data from the train.json reader");
        if (nqs == capqs) {
            capqs = capqs ? capqs * 2 : 1024;
            qs = realloc(qs, capqs * sizeof *qs);
            if (!qs)
                die("%s", "out of memory");
        }
        qs[nqs++] = q;
    }
    fclose(in);
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        die("reading %s/train.json failed", spider);
}

/* ---------------------------------------------------------------------- */
/* The scripted model                                                     */
/* ---------------------------------------------------------------------- */

struct script {
    const char *gold;        /* the current question's gold SQL */
    long calls;
};

static int scripted_model(void *ud, int n, const char *const *roles,
                          const char *const *contents, char **reply)
{
    struct script *s = ud;
    size_t len = strlen(s->gold) + 16;
    char *r = malloc(len);

    (void)n;
    (void)roles;
    (void)contents;
    if (!r)
        return 1;
    snprintf(r, len, "```sql\n%s\n```", s->gold);
    s->calls++;
    *reply = r;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Figures                                                                */
/* ---------------------------------------------------------------------- */

enum metric { M_ADDED, M_NOEXEC, M_SCHEMA, M_PROMPT, M_VALIDATE, M_EXEC,
              M_OTHER, M_CPU, NMETRICS };
static const char *const metric_names[NMETRICS] = {
    "added", "added_noexec", "schema", "prompt", "validate", "exec", "other",
    "cpu"
};
static const char *const metric_help[NMETRICS] = {
    "total - llm", "total - llm - exec", "schema_ms", "prompt_ms",
    "validate_ms", "exec_ms",
    "total - llm - (schema+prompt+validate+exec): extraction, bookkeeping",
    "CPU time of the thread in askdb_agent_ask (not inflated by\n"
    "                  other processes; includes the scripted model's few\n"
    "                  microseconds)"
};

enum group { G_ALL, G_FIRST, G_LATER, NGROUPS };
static const char *const group_names[NGROUPS] = { "all", "first", "later" };

struct stats {
    size_t n;
    double median, p95, max, mean;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Median (mean of the middle two for even n), p95 by nearest rank. */
static struct stats stats_of(double *v, size_t n)
{
    struct stats s = {0};
    size_t i, r;
    double sum = 0;

    s.n = n;
    if (!n)
        return s;
    qsort(v, n, sizeof *v, cmp_double);
    for (i = 0; i < n; i++)
        sum += v[i];
    s.mean = sum / (double)n;
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    r = (size_t)ceil(0.95 * (double)n);
    s.p95 = v[(r ? r : 1) - 1];
    s.max = v[n - 1];
    return s;
}

static long maxrss_kb(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;     /* kilobytes on Linux */
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static json_t *stats_json(struct stats s)
{
    return json_pack("{s:I, s:f, s:f, s:f, s:f}", "n", (json_int_t)s.n,
                     "median", s.median, "p95", s.p95, "max", s.max,
                     "mean", s.mean);
}

/* ---------------------------------------------------------------------- */
/* Main                                                                   */
/* ---------------------------------------------------------------------- */

struct failure {
    const char *db_id, *question;
    char *error;
};

/* The three slowest questions for one figure. */
#define NTOP 3
struct top {
    const char *db_id[NTOP], *question[NTOP];
    double ms[NTOP];
    int n;
};

static void top_add(struct top *t, const char *db_id, const char *question,
                    double ms)
{
    int k;

    if (t->n < NTOP) {
        k = t->n++;
    } else {
        if (ms <= t->ms[NTOP - 1])
            return;
        k = NTOP - 1;
    }
    for (; k > 0 && t->ms[k - 1] < ms; k--) {
        t->db_id[k] = t->db_id[k - 1];
        t->question[k] = t->question[k - 1];
        t->ms[k] = t->ms[k - 1];
    }
    t->db_id[k] = db_id;
    t->question[k] = question;
    t->ms[k] = ms;
}

static json_t *top_json(const struct top *t)
{
    json_t *a = json_array();
    int k;

    for (k = 0; k < t->n; k++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:f}", "db_id",
                                           t->db_id[k], "question",
                                           t->question[k], "ms", t->ms[k]));
    return a;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: overhead [--spider DIR] [--limit N] [--dbs N] "
            "[--rounds N] [--json FILE] [--md]\n"
            "  --spider DIR  Spider layout: DIR/train.json, "
            "DIR/database/<db>/<db>.sqlite\n"
            "                (default ../shared/bench/spider-train)\n"
            "  --limit N     at most N questions in all (default: all)\n"
            "  --dbs N       only the first N databases (default: all)\n"
            "  --rounds N    ask everything N times (fresh agents each time) "
            "and keep,\n"
            "                per question, the round in which askdb added "
            "least\n"
            "                (filters out scheduler noise; default 1)\n"
            "  --json FILE   also write the figures as JSON\n"
            "  --md          also print the main figures as Markdown rows\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *spider = "../shared/bench/spider-train", *json_path = NULL;
    long limit = -1, maxdbs = -1;
    char path[4096];
    double *vals[NMETRICS][NGROUPS], *open_ms;
    size_t nv[NGROUPS] = {0}, i, j, ndbs = 0, nasked = 0, nopen = 0;
    long nok = 0, nfail = 0, nrepaired = 0, nempty = 0, llm_calls = 0;
    long rss_base, rss_peak;
    struct failure fails[5];
    struct top top_schema = {0}, top_noexec = {0}, top_exec = {0};
    struct script sc = {0};
    double t_start, wall_ms, llm_total = 0;
    struct stats st[NMETRICS][NGROUPS], st_open;
    double (*best)[NMETRICS];
    char *isfirst, *asked;
    int m, g, a, rounds = 1, round, md = 0;

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--spider") == 0 && a + 1 < argc)
            spider = argv[++a];
        else if (strcmp(argv[a], "--limit") == 0 && a + 1 < argc)
            limit = strtol(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--dbs") == 0 && a + 1 < argc)
            maxdbs = strtol(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--rounds") == 0 && a + 1 < argc)
            rounds = (int)strtol(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--md") == 0)
            md = 1;
        else if (strcmp(argv[a], "--json") == 0 && a + 1 < argc)
            json_path = argv[++a];
        else
            usage();
    }
    if (rounds < 1)
        usage();

    load_questions(spider);
    if (nqs == 0)
        die("%s/train.json: no questions", spider);

    /* Group by db_id in order of first appearance, keeping file order
    ** inside each group (a stable sort on the first index of the db). */
    {
        size_t *first = xmalloc(nqs * sizeof *first);
        struct question *sorted = xmalloc(nqs * sizeof *sorted);
        size_t k = 0, d;
        for (i = 0; i < nqs; i++) {
            first[i] = i;
            for (j = 0; j < i; j++)
                if (strcmp(qs[j].db_id, qs[i].db_id) == 0) {
                    first[i] = first[j];
                    break;
                }
        }
        for (d = 0; d < nqs; d++)
            for (i = 0; i < nqs; i++)
                if (first[i] == d)
                    sorted[k++] = qs[i];
        free(qs);
        free(first);
        qs = sorted;
    }

    /* Per question: the figures of the round in which askdb added least. */
    best = xmalloc(nqs * sizeof *best);
    isfirst = xmalloc(nqs);
    asked = calloc(nqs, 1);
    if (!asked)
        die("%s", "out of memory");
    for (m = 0; m < NMETRICS; m++)
        for (g = 0; g < NGROUPS; g++)
            vals[m][g] = xmalloc(nqs * sizeof(double));
    open_ms = xmalloc(nqs * sizeof(double));
    for (i = 0; i < nqs; i++)
        open_ms[i] = -1;
    rss_base = maxrss_kb();
    t_start = now_ms();

    for (round = 0; round < rounds; round++) {
        nasked = ndbs = 0;
        for (i = 0; i < nqs && (limit < 0 || (long)nasked < limit);) {
            const char *db_id = qs[i].db_id;
            askdb_config cfg = askdb_config_default();
            askdb_agent *ag = NULL;
            size_t end = i, dbi = i;
            double t0;
            int first = 1;

            while (end < nqs && strcmp(qs[end].db_id, db_id) == 0)
                end++;
            if (maxdbs >= 0 && (long)ndbs >= maxdbs)
                break;
            ndbs++;
            snprintf(path, sizeof path, "%s/database/%s/%s.sqlite", spider,
                     db_id, db_id);
            cfg.llm_fn = scripted_model;
            cfg.llm_ud = &sc;
            t0 = now_ms();
            if (askdb_agent_new(&cfg, path, &ag) != ASKDB_OK) {
                fprintf(stderr, "overhead: %s: %s\n", db_id,
                        askdb_agent_errmsg(ag));
                askdb_agent_free(ag);
                for (; i < end && (limit < 0 || (long)nasked < limit); i++) {
                    if (round == 0 && nfail < 5) {
                        fails[nfail].db_id = db_id;
                        fails[nfail].question = qs[i].text;
                        fails[nfail].error =
                            strdup("cannot open the database");
                    }
                    if (round == 0)
                        nfail++;
                    nasked++;
                }
                i = end;
                continue;
            }
            t0 = now_ms() - t0;
            if (open_ms[dbi] < 0 || t0 < open_ms[dbi])
                open_ms[dbi] = t0;

            for (; i < end && (limit < 0 || (long)nasked < limit); i++) {
                askdb_answer *ans = NULL;
                askdb_status rc;
                double v[NMETRICS];
                const askdb_timings *t;
                double c0;

                sc.gold = qs[i].gold;
                c0 = cpu_ms();
                rc = askdb_agent_ask(ag, qs[i].text, &ans);
                v[M_CPU] = cpu_ms() - c0;
                nasked++;
                if (!ans)
                    die("%s", "askdb_agent_ask: out of memory");
                if (round == 0) {
                    if (rc == ASKDB_OK) {
                        nok++;
                        if (ans->result && ans->result->nrows == 0)
                            nempty++;
                    } else {
                        if (nfail < 5) {
                            fails[nfail].db_id = db_id;
                            fails[nfail].question = qs[i].text;
                            fails[nfail].error = strdup(
                                ans->error ? ans->error : "(no message)");
                        }
                        nfail++;
                    }
                    if (ans->llm_calls > 1)
                        nrepaired++;
                    llm_calls += ans->llm_calls;
                }
                t = &ans->t;
                if (round == 0)
                    llm_total += t->llm_ms;
                v[M_ADDED] = t->total_ms - t->llm_ms;
                v[M_NOEXEC] = t->total_ms - t->llm_ms - t->exec_ms;
                v[M_SCHEMA] = t->schema_ms;
                v[M_PROMPT] = t->prompt_ms;
                v[M_VALIDATE] = t->validate_ms;
                v[M_EXEC] = t->exec_ms;
                v[M_OTHER] = t->total_ms - t->llm_ms - t->schema_ms -
                             t->prompt_ms - t->validate_ms - t->exec_ms;
                if (!asked[i] || v[M_ADDED] < best[i][M_ADDED])
                    memcpy(best[i], v, sizeof v);
                asked[i] = 1;
                isfirst[i] = (char)first;
                first = 0;
                askdb_answer_free(ans);
            }
            askdb_agent_free(ag);
            i = end;
        }
    }
    wall_ms = now_ms() - t_start;
    rss_peak = maxrss_kb();

    for (i = 0; i < nqs; i++) {
        if (!asked[i])
            continue;
        g = isfirst[i] ? G_FIRST : G_LATER;
        for (m = 0; m < NMETRICS; m++) {
            vals[m][G_ALL][nv[G_ALL]] = best[i][m];
            vals[m][g][nv[g]] = best[i][m];
        }
        nv[G_ALL]++;
        nv[g]++;
        if (isfirst[i])
            top_add(&top_schema, qs[i].db_id, qs[i].text, best[i][M_SCHEMA]);
        else
            top_add(&top_noexec, qs[i].db_id, qs[i].text, best[i][M_NOEXEC]);
        top_add(&top_exec, qs[i].db_id, qs[i].text, best[i][M_EXEC]);
    }
    for (i = 0; i < nqs; i++)
        if (open_ms[i] >= 0)
            open_ms[nopen++] = open_ms[i];

    for (m = 0; m < NMETRICS; m++)
        for (g = 0; g < NGROUPS; g++)
            st[m][g] = stats_of(vals[m][g], nv[g]);
    st_open = stats_of(open_ms, nopen);

    /* Human-readable summary. */
    printf("askdb overhead: %zu questions on %zu databases (%s), "
           "scripted zero-latency model, %d round%s%s\n", nasked, ndbs, spider,
           rounds, rounds == 1 ? "" : "s",
           rounds == 1 ? "" : " (best round per question)");
    printf("answers OK: %ld, failed: %ld; answers with more than one model "
           "call: %ld (gold result empty: %ld); model calls: %ld "
           "(%.1f ms in the callback)\n",
           nok, nfail, nrepaired, nempty, llm_calls, llm_total);
    for (i = 0; i < (size_t)nfail && i < 5; i++)
        printf("  failed: [%s] %s\n    %s\n", fails[i].db_id,
               fails[i].question, fails[i].error);
    printf("\nms per question          %-24s %-24s %-24s\n",
           "all", "first of db (schema)", "later");
    printf("%-24s", "");
    for (g = 0; g < NGROUPS; g++)
        printf(" %-24s", "median / p95 / max");
    printf("\n");
    for (m = 0; m < NMETRICS; m++) {
        printf("%-24s", metric_names[m]);
        for (g = 0; g < NGROUPS; g++) {
            char cell[64];
            snprintf(cell, sizeof cell, "%.3f / %.3f / %.2f",
                     st[m][g].median, st[m][g].p95, st[m][g].max);
            printf(" %-24s", cell);
        }
        printf("\n");
    }
    printf("(n: all %zu, first %zu, later %zu)\n", nv[G_ALL], nv[G_FIRST],
           nv[G_LATER]);
    for (m = 0; m < NMETRICS; m++)
        printf("  %-13s = %s\n", metric_names[m], metric_help[m]);
    printf("askdb_agent_new (open, not in total_ms): median %.3f, p95 %.3f, "
           "max %.2f ms over %zu databases\n",
           st_open.median, st_open.p95, st_open.max, st_open.n);
    printf("peak RSS: %.1f MB (%ld KiB); harness baseline before the first "
           "agent: %.1f MB\n", rss_peak / 1024.0, rss_peak,
           rss_base / 1024.0);
    {
        const struct top *tops[3] = { &top_schema, &top_noexec, &top_exec };
        const char *what[3] = { "schema (first of db)",
                                "added_noexec (later questions)", "exec" };
        int k, w;
        for (w = 0; w < 3; w++) {
            printf("slowest %s:", what[w]);
            for (k = 0; k < tops[w]->n; k++)
                printf(" %s %.2f ms%s", tops[w]->db_id[k], tops[w]->ms[k],
                       k + 1 < tops[w]->n ? ";" : "");
            printf("\n");
        }
    }
    printf("wall time of the question loop: %.1f s\n", wall_ms / 1000.0);
    if (md) {
        /* Rows ready to paste into the README's table. */
        static const struct { int m, g; const char *label; } rows[] = {
            {M_ADDED, G_ALL, "added per question, all"},
            {M_ADDED, G_FIRST, "added, first question of a db (schema incl.)"},
            {M_ADDED, G_LATER, "added, later questions"},
            {M_NOEXEC, G_ALL, "added excl. SQL execution, all"},
            {M_NOEXEC, G_FIRST, "added excl. SQL execution, first of a db"},
            {M_NOEXEC, G_LATER, "added excl. SQL execution, later"},
            {M_CPU, G_ALL, "CPU time in askdb_agent_ask, all"},
            {M_CPU, G_FIRST, "CPU time in askdb_agent_ask, first of a db"},
        };
        size_t r;
        printf("\n| %s (%zu questions, %zu dbs%s) | median | p95 | max |\n",
               "askdb, ms", nv[G_ALL], ndbs,
               rounds > 1 ? ", best of rounds" : "");
        printf("|---|---:|---:|---:|\n");
        for (r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            const struct stats *s = &st[rows[r].m][rows[r].g];
            printf("| %s | %.3f | %.3f | %.2f |\n", rows[r].label, s->median,
                   s->p95, s->max);
        }
        printf("| peak RSS over the whole run | %.1f MB | | |\n",
               rss_peak / 1024.0);
    }

    if (json_path) {
        json_t *root = json_object(), *groups = json_object(), *fl;
        FILE *f;
        for (g = 0; g < NGROUPS; g++) {
            json_t *gj = json_object();
            json_object_set_new(gj, "n", json_integer((json_int_t)nv[g]));
            for (m = 0; m < NMETRICS; m++)
                json_object_set_new(gj, metric_names[m],
                                    stats_json(st[m][g]));
            json_object_set_new(groups, group_names[g], gj);
        }
        fl = json_array();
        for (i = 0; i < (size_t)nfail && i < 5; i++)
            json_array_append_new(fl, json_pack("{s:s, s:s, s:s}",
                                                "db_id", fails[i].db_id,
                                                "question", fails[i].question,
                                                "error", fails[i].error));
        json_object_set_new(root, "questions",
                            json_integer((json_int_t)nasked));
        json_object_set_new(root, "rounds", json_integer(rounds));
        json_object_set_new(root, "databases", json_integer((json_int_t)ndbs));
        json_object_set_new(root, "ok", json_integer(nok));
        json_object_set_new(root, "failed", json_integer(nfail));
        json_object_set_new(root, "failures", fl);
        json_object_set_new(root, "more_than_one_model_call",
                            json_integer(nrepaired));
        json_object_set_new(root, "empty_results", json_integer(nempty));
        json_object_set_new(root, "model_calls", json_integer(llm_calls));
        json_object_set_new(root, "ms", groups);
        json_object_set_new(root, "agent_new_ms", stats_json(st_open));
        json_object_set_new(root, "peak_rss_kb", json_integer(rss_peak));
        json_object_set_new(root, "baseline_rss_kb", json_integer(rss_base));
        json_object_set_new(root, "slowest_schema", top_json(&top_schema));
        json_object_set_new(root, "slowest_later_noexec",
                            top_json(&top_noexec));
        json_object_set_new(root, "slowest_exec", top_json(&top_exec));
        json_object_set_new(root, "wall_s", json_real(wall_ms / 1000.0));
        f = fopen(json_path, "w");
        if (!f || json_dumpf(root, f, JSON_INDENT(1)) || fclose(f))
            die("cannot write %s", json_path);
        json_decref(root);
    }
    return nfail ? 1 : 0;
}
