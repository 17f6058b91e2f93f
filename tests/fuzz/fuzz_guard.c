/* fuzz_guard.c - libFuzzer harness: any SQL against the read-only guard,
** on scratch databases whose files may never change. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "askdb.h"

/*
** At start-up the harness makes a scratch directory with two small
** databases, one in rollback-journal mode and one in WAL mode (at rest),
** keeps every file's bytes and opens both through askdb (the guard
** askdb sql and askdb ask use). Each input, as text up to its first NUL,
** runs on both handles with a short time limit; then every file of the
** scratch directory must still hold its bytes, no file may have come or
** gone there, and none may have come into the working directory either
** (where a relative ATTACH or VACUUM INTO would land: libFuzzer reads its
** corpus and dictionary by relative paths, so the harness stays there).
** Anything else abort()s, which libFuzzer reports as a crash.
**
** Inputs are mutated from tests/fuzz/corpus/guard/ (the statements of
** tests/security/corpus.jsonl) with guard.dict's SQL words, so the
** fuzzer mixes writes, pragmas and functions into queries that parse.
*/

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILES 16

static struct kept {
    char name[64];
    char *bytes;
    size_t len;
} kept[MAX_FILES];
static int nkept;
static askdb_db *dbs[2];
static char scratch[64];
static long cwd_entries;

/* Entries of directory dir (or -1). */
static long count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    long n = 0;

    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* scratch/name in a static buffer (one at a time). */
static const char *in_scratch(const char *name)
{
    static char p[160];

    snprintf(p, sizeof p, "%s/%s", scratch, name);
    return p;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n + 1)) &&
        fread(p, 1, (size_t)n, f) == (size_t)n) {
        *len = (size_t)n;
    } else {
        free(p);
        p = NULL;
    }
    fclose(f);
    return p;
}

static void make_db(const char *name, int wal)
{
    static const char *const sql =
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, "
        "country TEXT);"
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER "
        "REFERENCES customers(id), total REAL);"
        "CREATE INDEX orders_customer ON orders (customer_id);"
        "CREATE VIEW big AS SELECT * FROM orders WHERE total > 100;"
        "CREATE TRIGGER t AFTER INSERT ON orders BEGIN SELECT 1; END;"
        "INSERT INTO customers VALUES (1, 'Ana', 'DE'), (2, 'Bo', 'FR');"
        "INSERT INTO orders VALUES (1, 1, 120.5), (2, 2, 30), (3, 1, 7);";
    sqlite3 *h = NULL;

    if (sqlite3_open(in_scratch(name), &h) != SQLITE_OK ||
        sqlite3_exec(h, wal ? "PRAGMA journal_mode = WAL"
                            : "PRAGMA journal_mode = DELETE",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK)
        abort();
    sqlite3_close(h);
}

/* Keep the bytes of every file in the current directory. */
static void keep_files(void)
{
    DIR *d = opendir(scratch);
    struct dirent *e;

    if (!d)
        abort();
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (nkept == MAX_FILES || strlen(e->d_name) >= sizeof kept[0].name)
            abort();
        snprintf(kept[nkept].name, sizeof kept[0].name, "%s", e->d_name);
        kept[nkept].bytes = slurp(in_scratch(e->d_name), &kept[nkept].len);
        if (!kept[nkept].bytes)
            abort();
        nkept++;
    }
    closedir(d);
}

/* abort() unless the directory holds exactly the kept files, unchanged. */
static void check_files(const char *sql)
{
    DIR *d = opendir(scratch);
    struct dirent *e;
    int i, n = 0;

    if (!d)
        abort();
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        for (i = 0; i < nkept && strcmp(kept[i].name, e->d_name); i++)
            ;
        if (i == nkept) {
            fprintf(stderr, "fuzz_guard: %s appeared after: %s\n",
                    e->d_name, sql);
            abort();
        }
        n++;
    }
    closedir(d);
    if (n != nkept) {
        fprintf(stderr, "fuzz_guard: a file went away after: %s\n", sql);
        abort();
    }
    for (i = 0; i < nkept; i++) {
        size_t len = 0;
        char *now = slurp(in_scratch(kept[i].name), &len);
        if (!now || len != kept[i].len ||
            memcmp(now, kept[i].bytes, len) != 0) {
            fprintf(stderr, "fuzz_guard: %s changed after: %s\n",
                    kept[i].name, sql);
            abort();
        }
        free(now);
    }
    if (count_entries(".") != cwd_entries) {
        fprintf(stderr, "fuzz_guard: the working directory changed after: "
                        "%s\n", sql);
        abort();
    }
}

/* At exit: close the handles and remove the scratch directory (a crash
** leaves it, to look at). */
static void cleanup(void)
{
    int i;

    askdb_db_close(dbs[0]);
    askdb_db_close(dbs[1]);
    for (i = 0; i < nkept; i++) {
        remove(in_scratch(kept[i].name));
        free(kept[i].bytes);
    }
    remove(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char tmpl[] = "/tmp/askdb-fuzz-guard.XXXXXX";
    askdb_config cfg = askdb_config_default();

    (void)argc;
    (void)argv;
    if (!mkdtemp(tmpl))
        abort();
    snprintf(scratch, sizeof scratch, "%s", tmpl);
    make_db("journal.db", 0);
    make_db("wal.db", 1);
    keep_files();
    cwd_entries = count_entries(".");
    cfg.query_timeout_ms = 50;
    cfg.max_rows = 50;
    cfg.max_bytes = 1 << 16;
    /* The guard itself, in this process: askdb-exec runs the same code,
    ** and a process per input would fuzz the process start instead. */
    cfg.in_process = 1;
    if (askdb_db_open(in_scratch("journal.db"), &cfg, &dbs[0]) != ASKDB_OK ||
        askdb_db_open(in_scratch("wal.db"), &cfg, &dbs[1]) != ASKDB_OK)
        abort();
    check_files("(opening)");
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *sql = malloc(size + 1);
    askdb_result *r;
    int i;

    if (!sql)
        abort();
    memcpy(sql, data, size);
    sql[size] = '\0';
    for (i = 0; i < 2; i++) {
        r = NULL;
        /* Any status will do; only the files matter. */
        if (askdb_db_query(dbs[i], sql, &r) == ASKDB_OK && !r)
            abort();
        askdb_result_free(r);
    }
    check_files(sql);
    free(sql);
    return 0;
}
