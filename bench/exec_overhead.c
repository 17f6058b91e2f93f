/* exec_overhead.c - what running statements in askdb-exec costs, against
** running them in askdb's own process (askdb_config.in_process). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "askdb.h"

/*
**   build/exec_overhead [--rounds N] DB...
**
** For each database and each way (in-process, helper), N times: open the
** handle, run the first statement (with the helper: its start and its
** own open of the file), then 100 more of each kind: "SELECT 1" (the
** round trip alone) and the first 100 rows of the database's first table
** (rows through the framing). Prints the medians in ms, one line per
** database and way. Build it beside askdb-exec (make build/exec_overhead),
** or name the helper with ASKDB_EXEC_HELPER.
*/

#define STMTS 100

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* "SELECT * FROM <first table> LIMIT 100", or NULL; malloc()ed. */
static char *first_table_query(askdb_db *db)
{
    const char *q = strcmp(askdb_db_engine(db), "duckdb") == 0
                        ? "SELECT table_name FROM duckdb_tables() ORDER BY 1 "
                          "LIMIT 1"
                        : "SELECT name FROM sqlite_schema WHERE type = "
                          "'table' AND name NOT LIKE 'sqlite%' ORDER BY "
                          "rowid LIMIT 1";
    const askdb_value *v;
    askdb_result *r = NULL;
    char *out = NULL;
    size_t n;

    if (askdb_db_query(db, q, &r) == ASKDB_OK &&
        (v = askdb_result_cell(r, 0, 0)) != NULL && v->type == ASKDB_TEXT &&
        !strchr(v->s, '"')) {
        n = strlen(v->s) + 40;
        out = malloc(n);
        if (out)
            snprintf(out, n, "SELECT * FROM \"%s\" LIMIT 100", v->s);
    }
    askdb_result_free(r);
    return out;
}

/* One statement's time in ms, or -1 when it failed. */
static double timed(askdb_db *db, const char *sql)
{
    askdb_result *r = NULL;
    double t0 = now_ms();
    askdb_status st = askdb_db_query(db, sql, &r);
    double ms = now_ms() - t0;

    askdb_result_free(r);
    return st == ASKDB_OK ? ms : -1;
}

static int bench(const char *path, int in_process, int rounds)
{
    askdb_config cfg = askdb_config_default();
    double *open_ms = calloc((size_t)rounds, sizeof(double));
    double *first = calloc((size_t)rounds, sizeof(double));
    double *one = calloc((size_t)rounds * STMTS, sizeof(double));
    double *rows = calloc((size_t)rounds * STMTS, sizeof(double));
    int i, k, nrows = 0, ok = 0;
    char *q = NULL;

    if (!open_ms || !first || !one || !rows)
        goto out;
    cfg.in_process = in_process;
    for (i = 0; i < rounds; i++) {
        askdb_db *db = NULL;
        double t0 = now_ms();
        if (askdb_db_open(path, &cfg, &db) != ASKDB_OK) {
            fprintf(stderr, "exec_overhead: %s: %s\n", path,
                    askdb_db_errmsg(db));
            askdb_db_close(db);
            goto out;
        }
        open_ms[i] = now_ms() - t0;
        first[i] = timed(db, "SELECT 1");
        if (!q)
            q = first_table_query(db);
        for (k = 0; k < STMTS; k++) {
            one[i * STMTS + k] = timed(db, "SELECT 1");
            if (q)
                rows[nrows++] = timed(db, q);
        }
        askdb_db_close(db);
        if (first[i] < 0)
            goto out;
    }
    printf("%-40s %-10s open %6.2f  first %6.2f  SELECT 1 %6.3f  "
           "100 rows %6.3f ms\n",
           strrchr(path, '/') ? strrchr(path, '/') + 1 : path,
           in_process ? "in-process" : "helper", median(open_ms, rounds),
           median(first, rounds), median(one, rounds * STMTS),
           nrows ? median(rows, nrows) : -1.0);
    ok = 1;
out:
    free(q);
    free(open_ms);
    free(first);
    free(one);
    free(rows);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    int i = 1, rounds = 10, rc = 0;

    if (argc > 2 && strcmp(argv[1], "--rounds") == 0) {
        rounds = (int)strtol(argv[2], NULL, 10);
        i = 3;
    }
    if (i >= argc || rounds < 1) {
        fprintf(stderr, "usage: exec_overhead [--rounds N] DB...\n");
        return 2;
    }
    for (; i < argc; i++)
        rc |= bench(argv[i], 1, rounds) | bench(argv[i], 0, rounds);
    return rc;
}
