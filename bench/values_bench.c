/* values_bench.c - value index build cost and match latency on Spider.
**
**   make build/libaskdb.a
**   cc -O2 -D_POSIX_C_SOURCE=200809L -DASKDB_BUILD -Iinclude -Isrc \
**       bench/values_bench.c build/libaskdb.a -o build/values_bench \
**       $(pkg-config --libs sqlite3 libcurl jansson libedit libxxhash) \
**       -lstemmer -lm -lpthread
**   ASKDB_CACHE_DIR=$(mktemp -d) build/values_bench SPIDER_DIR [NQ] [DB...]
**
** 1. For each database named (default: ten of different sizes): build the
**    index (fresh cache), then open it again from the cache; prints the
**    database size, values, words, index size, the build time (reading
**    the database and indexing), the whole first open (checksum, schema,
**    build, writing the cache file) and the reopen from the cache.
** 2. NQ questions (default 200) taken evenly from train.json, each
**    matched twice against its database's index (built once per
**    database, opened afresh for each question, not timed): the first
**    match runs on a cold index (as in a one-question CLI run), the
**    second on a warm one (as in a session); prints p50/p95/max of each,
**    and of the warm one's CPU time (which busy cores do not inflate),
**    and, when VB_SHOW is set in the environment, each question with its
**    matches.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/values.h"
#include "db/db.h"
#include "eval/suite.h"

static const char *const default_dbs[] = {
    "voter_2", "roller_coaster", "perpetrator", "department_store",
    "hospital_1", "academic", "chinook_1", "bike_1", "formula_1", "sakila_1",
    NULL
};

/* CPU time of this process in ms: unlike wall time, not inflated when
** other processes take the cores. */
static double cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void db_path(const char *spider, const char *id, char *out, size_t n)
{
    snprintf(out, n, "%s/database/%s/%s.sqlite", spider, id, id);
}

static struct vindex *open_vi(const char *path, askdb_db **dbp, char *note,
                              size_t nl)
{
    askdb_db *db = NULL;
    struct vindex *vi = NULL;

    if (askdb_db_open(path, NULL, &db) != ASKDB_OK) {
        fprintf(stderr, "%s: %s\n", path, askdb_db_errmsg(db));
        askdb_db_close(db);
        return NULL;
    }
    if (vindex_open(db, NULL, &vi, note, nl) != 0) {
        fprintf(stderr, "%s: %s\n", path, note);
        askdb_db_close(db);
        return NULL;
    }
    *dbp = db;
    return vi;
}

static void build_table(const char *spider, const char *const *ids)
{
    char path[1024], note[512];
    struct stat sb;
    int i;

    printf("%-18s %9s %7s %7s %5s %9s %9s %9s %9s\n", "database",
           "db_bytes", "values", "words", "cols", "idx_bytes", "build_ms",
           "open1_ms", "reopen_ms");
    for (i = 0; ids[i]; i++) {
        askdb_db *db = NULL;
        struct vindex *vi;
        const struct vindex_stats *st;

        db_path(spider, ids[i], path, sizeof path);
        if (stat(path, &sb) != 0)
            continue;
        vi = open_vi(path, &db, note, sizeof note);
        if (!vi)
            continue;
        st = vindex_stats(vi);
        printf("%-18s %9ld %7ld %7ld %5d %9ld %9.1f %9.1f", ids[i],
               (long)sb.st_size, st->values, st->terms, st->columns,
               st->file_bytes, st->build_ms, st->open_ms);
        vindex_free(vi);
        askdb_db_close(db);
        vi = open_vi(path, &db, note, sizeof note);
        if (!vi)
            continue;
        printf(" %9.2f%s\n", vindex_stats(vi)->open_ms,
               vindex_stats(vi)->reused ? "" : " (not reused!)");
        vindex_free(vi);
        askdb_db_close(db);
    }
}

static void match_questions(const char *spider, int nq)
{
    char note[512];
    struct suite suite;
    double *ms, *warm, *cpu;
    long total, i, step;
    int k = 0, show = getenv("VB_SHOW") != NULL, with = 0, nm = 0;

    if (suite_load_spider(spider, &suite, note, sizeof note) != ASKDB_OK) {
        fprintf(stderr, "%s\n", note);
        return;
    }
    total = suite.n;
    step = total / nq ? total / nq : 1;
    ms = calloc((size_t)nq, sizeof *ms);
    warm = calloc((size_t)nq, sizeof *warm);
    cpu = calloc((size_t)nq, sizeof *cpu);
    for (i = 0; i < total && k < nq; i += step) {
        const struct suite_item *it = &suite.items[i];
        const char *id = it->db_id, *q = it->question;
        askdb_db *db = NULL;
        struct vindex *vi;
        struct value_match *m = NULL;
        int n = 0, j;
        double t0, c0;

        if (it->malformed)
            continue;
        vi = open_vi(it->db_path, &db, note, sizeof note);
        if (!vi)
            continue;
        t0 = db_now_ms();
        if (vindex_match(vi, q, 0, &m, &n) != 0)
            fprintf(stderr, "match failed: %s\n", q);
        ms[k++] = db_now_ms() - t0;
        value_matches_free(m, n);
        t0 = db_now_ms();
        c0 = cpu_ms();
        if (vindex_match(vi, q, 0, &m, &n) != 0)
            fprintf(stderr, "match failed: %s\n", q);
        warm[k - 1] = db_now_ms() - t0;
        cpu[k - 1] = cpu_ms() - c0;
        with += n > 0;
        nm += n;
        if (show) {
            printf("[%s] %.3f/%.3f ms: %s\n", id, ms[k - 1], warm[k - 1], q);
            for (j = 0; j < n; j++)
                printf("    %s.%s = '%s' (\"%s\"%s%s %.2f)\n", m[j].table,
                       m[j].column, m[j].value, m[j].phrase,
                       m[j].exact ? "" : ", close",
                       m[j].partial ? ", part" : "", m[j].score);
        }
        value_matches_free(m, n);
        vindex_free(vi);
        askdb_db_close(db);
    }
    qsort(ms, (size_t)k, sizeof *ms, dcmp);
    qsort(warm, (size_t)k, sizeof *warm, dcmp);
    qsort(cpu, (size_t)k, sizeof *cpu, dcmp);
    if (k) {
        printf("match: %d questions, %d with matches, %.2f matches each\n",
               k, with, (double)nm / k);
        printf("  cold: p50 %.3f ms, p95 %.3f ms, max %.3f ms\n", ms[k / 2],
               ms[(k * 95) / 100], ms[k - 1]);
        printf("  warm: p50 %.3f ms, p95 %.3f ms, max %.3f ms\n",
               warm[k / 2], warm[(k * 95) / 100], warm[k - 1]);
        printf("  warm, CPU time: p50 %.3f ms, p95 %.3f ms, max %.3f ms\n",
               cpu[k / 2], cpu[(k * 95) / 100], cpu[k - 1]);
    }
    free(ms);
    free(warm);
    free(cpu);
    suite_free(&suite);
}

int main(int argc, char **argv)
{
    const char *spider;
    int nq = 200;

    if (argc < 2) {
        fprintf(stderr, "usage: %s SPIDER_DIR [NQ] [DB...]\n", argv[0]);
        return 2;
    }
    spider = argv[1];
    if (argc > 2)
        nq = (int)strtol(argv[2], NULL, 10);
    if (nq < 1)
        nq = 1;
    build_table(spider, argc > 3 ? (const char *const *)&argv[3]
                                 : default_dbs);
    match_questions(spider, nq);
    return 0;
}
