/* schema_large.c - time schema extraction and rendering on a large database.
**
**   schema_large DB [--runs N] [--samples N] [--read] [--json FILE] [--md]
**
** Each run opens DB with askdb_db_open() in a fresh handle and times
** askdb_db_schema_text(), which reads the whole schema (tables, columns,
** foreign keys, unique indexes, row counts, sample values) and renders the
** text the model sees. Reports min/median/max over the runs, the time of
** askdb_db_open() itself, the rendered size in bytes and the peak RSS
** (getrusage ru_maxrss), and the CPU time of the extraction
** (CLOCK_PROCESS_CPUTIME_ID), which other processes on a busy machine do
** not inflate. --samples overrides askdb_config.sample_values
** (default 3) to see what sampling costs. --read times what the agent's
** first question does instead: the driver's schema read (db_schema(),
** which on a large DuckDB file leaves the samples it has no time for to
** be read when a prompt shows their tables) and the rendering of that.
*/
#define _POSIX_C_SOURCE 200809L

#include <askdb.h>
#include <jansson.h>

#include "db/db.h"
#include "db/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of this process: unlike the wall clock, it does not grow while
** other processes hold the CPUs, so it shows what a quiet machine would. */
static double cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long maxrss_kb(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Count occurrences of s in text (tables are the lines "CREATE TABLE"). */
static long count_str(const char *text, const char *s)
{
    long n = 0;
    size_t len = strlen(s);

    while ((text = strstr(text, s)) != NULL) {
        n++;
        text += len;
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *path = NULL, *json_path = NULL;
    int runs = 7, samples = -1, md = 0, read_only = 0, a, r;
    double *t_schema, *t_open, *t_cpu, min_schema, max_schema, min_cpu;
    size_t bytes = 0;
    long tables = 0, fks = 0, uniques = 0, rss_base, rss_peak;
    askdb_config cfg = askdb_config_default();

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--runs") == 0 && a + 1 < argc)
            runs = (int)strtol(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--samples") == 0 && a + 1 < argc)
            samples = (int)strtol(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--read") == 0)
            read_only = 1;
        else if (strcmp(argv[a], "--md") == 0)
            md = 1;
        else if (strcmp(argv[a], "--json") == 0 && a + 1 < argc)
            json_path = argv[++a];
        else if (argv[a][0] != '-' && !path)
            path = argv[a];
        else
            path = NULL, a = argc;
    }
    if (!path || runs < 1) {
        fprintf(stderr, "usage: schema_large DB [--runs N (7)] "
                        "[--samples N] [--read] [--json FILE] [--md]\n");
        return 2;
    }
    if (samples >= 0)
        cfg.sample_values = samples;
    t_schema = calloc((size_t)runs, sizeof *t_schema);
    t_open = calloc((size_t)runs, sizeof *t_open);
    t_cpu = calloc((size_t)runs, sizeof *t_cpu);
    if (!t_schema || !t_open || !t_cpu)
        return 1;
    rss_base = maxrss_kb();

    for (r = 0; r < runs; r++) {
        askdb_db *db = NULL;
        char *text = NULL;
        double t0 = now_ms();
        double c0;

        if (askdb_db_open(path, &cfg, &db) != ASKDB_OK) {
            fprintf(stderr, "schema_large: %s\n", askdb_db_errmsg(db));
            askdb_db_close(db);
            return 1;
        }
        t_open[r] = now_ms() - t0;
        c0 = cpu_ms();
        t0 = now_ms();
        if (read_only) {
            const struct db_schema *sc;
            if (db_schema(db, &sc) == ASKDB_OK)
                text = schema_render(sc);
        } else if (askdb_db_schema_text(db, &text) != ASKDB_OK) {
            text = NULL;
        }
        if (!text) {
            fprintf(stderr, "schema_large: %s\n", askdb_db_errmsg(db));
            askdb_db_close(db);
            return 1;
        }
        t_schema[r] = now_ms() - t0;
        t_cpu[r] = cpu_ms() - c0;
        if (r == 0) {
            bytes = strlen(text);
            tables = count_str(text, "CREATE TABLE ");
            fks = count_str(text, "FOREIGN KEY (");
            uniques = count_str(text, "UNIQUE (");
        }
        askdb_free(text);
        askdb_db_close(db);
    }
    rss_peak = maxrss_kb();

    min_schema = max_schema = t_schema[0];
    min_cpu = t_cpu[0];
    for (r = 1; r < runs; r++) {
        if (t_schema[r] < min_schema)
            min_schema = t_schema[r];
        if (t_schema[r] > max_schema)
            max_schema = t_schema[r];
        if (t_cpu[r] < min_cpu)
            min_cpu = t_cpu[r];
    }
    {
        double first = t_schema[0];
        double med = median(t_schema, runs), med_open = median(t_open, runs);
        double med_cpu = median(t_cpu, runs);

        printf("askdb schema: %s, %d runs, sample_values %d\n", path, runs,
               cfg.sample_values);
        printf("askdb_db_schema_text: min %.1f ms, median %.1f ms, max "
               "%.1f ms (first run %.1f ms)\n", min_schema, med, max_schema,
               first);
        printf("  CPU time of it: min %.1f ms, median %.1f ms\n", min_cpu,
               med_cpu);
        printf("askdb_db_open: median %.2f ms\n", med_open);
        printf("rendered schema: %zu bytes (~%zu tokens at 4 bytes/token); "
               "%ld tables, %ld foreign keys, %ld unique constraints\n",
               bytes, bytes / 4, tables, fks, uniques);
        printf("peak RSS: %.1f MB (%ld KiB); before the first open: %.1f MB\n",
               rss_peak / 1024.0, rss_peak, rss_base / 1024.0);
        if (md) {
            printf("\n| schema of %ld tables, ms (%d runs, fresh handle each) "
                   "| min | median | max |\n", tables, runs);
            printf("|---|---:|---:|---:|\n");
            printf("| askdb_db_schema_text (extract + render, %zu bytes) "
                   "| %.1f | %.1f | %.1f |\n", bytes, min_schema, med,
                   max_schema);
            printf("| the same, CPU time of the process | %.1f | %.1f | |\n",
                   min_cpu, med_cpu);
            printf("| askdb_db_open (SQLite reads the schema) | | %.1f | |\n",
                   med_open);
            printf("| peak RSS | | %.1f MB | |\n", rss_peak / 1024.0);
        }
        if (json_path) {
            json_t *root = json_pack(
                "{s:s, s:i, s:i, s:{s:f, s:f, s:f, s:f}, s:{s:f, s:f}, "
                "s:{s:f}, s:I, s:I, s:I, s:I, s:I, s:I}",
                "db", path, "runs", runs, "sample_values", cfg.sample_values,
                "schema_text_ms", "min", min_schema, "median", med, "max",
                max_schema, "first", first, "cpu_ms", "min", min_cpu,
                "median", med_cpu, "open_ms", "median", med_open,
                "bytes", (json_int_t)bytes, "tables", (json_int_t)tables,
                "foreign_keys", (json_int_t)fks, "uniques",
                (json_int_t)uniques, "peak_rss_kb", (json_int_t)rss_peak,
                "baseline_rss_kb", (json_int_t)rss_base);
            if (!root || json_dump_file(root, json_path, JSON_INDENT(1))) {
                fprintf(stderr, "schema_large: cannot write %s\n", json_path);
                return 1;
            }
            json_decref(root);
        }
    }
    free(t_schema);
    free(t_open);
    free(t_cpu);
    return 0;
}
