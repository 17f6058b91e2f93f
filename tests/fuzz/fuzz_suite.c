/* fuzz_suite.c - libFuzzer harness for evaluation suites: the suite
** reader, the tables.json check, the item selection and Spider hardness. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/hardness.h"
#include "eval/suite.h"

/*
** A suite is a file from anywhere (Spider, BIRD, a JSON-lines file made
** by hand): any bytes. The input is
**     FLAGS SUITE [NUL TABLES]
** FLAGS bit 0 gives a --db-root, bit 1 has the selection draw by database
** (--sample-dbs, --per-db), the other bits size it. SUITE is written to a
** file askdb eval reads with suite_load(), TABLES (when there is a NUL) to
** a tables.json for suite_check_tables(). What must hold:
**   - a load either succeeds with items numbered 0..n-1 in file order,
**     every one malformed (with a reason) or complete (database path,
**     name, question that is not blank, gold, difficulty), or fails with
**     a message and no items;
**   - a difficulty the entry did not give is one of Spider's four levels;
**   - the selection is suite indices, ascending, distinct, at most the
**     sample and the limit asked, and the same when drawn again;
**   - the tables check counts at most the suite's items, or says why not;
**   - hardness_classify() of any text (the whole input too) is a level.
** Anything else abort()s, which libFuzzer reports as a crash.
*/

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256], suite_path[300], tables_path[300];

/* The files live in a folder of their own, removed at exit: in /dev/shm
** when there is one (memory: ten times the runs of a disk's /tmp), else
** under $TMPDIR or /tmp. */
static void cleanup(void)
{
    unlink(suite_path);
    unlink(tables_path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *tmp = getenv("TMPDIR");

    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "/dev/shm/fuzz_suite_XXXXXX");
    if (!mkdtemp(dir)) {
        snprintf(dir, sizeof dir, "%s/fuzz_suite_XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir))
            abort();
    }
    atexit(cleanup);
    snprintf(suite_path, sizeof suite_path, "%s/dev.json", dir);
    snprintf(tables_path, sizeof tables_path, "%s/tables.json", dir);
    return 0;
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");

    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
        abort();
}

static int is_level(const char *s)
{
    return s && (strcmp(s, "easy") == 0 || strcmp(s, "medium") == 0 ||
                 strcmp(s, "hard") == 0 || strcmp(s, "extra") == 0);
}

static void check_hardness(const char *sql)
{
    struct hardness_counts c;

    if (!is_level(hardness_classify(sql, &c)) || c.comp1 < 0 ||
        c.comp2 < 0 || c.others < 0)
        abort();
}

static void check_items(const struct suite *s, const char *root)
{
    long i;

    if (s->n <= 0 || !s->items)
        abort();
    for (i = 0; i < s->n; i++) {
        const struct suite_item *it = &s->items[i];
        if (it->index != i)
            abort();
        if (it->malformed) {
            if (!*it->malformed)
                abort();
            continue;
        }
        if (!it->db_path || !it->db_id || !it->question || !it->gold ||
            !it->difficulty ||
            !it->question[strspn(it->question, " \t\n\v\f\r")])
            abort();
        /* Paths are the entry's own when absolute, else under the root
        ** or (no root) the suite's folder. */
        if (it->db_path[0] != '/' &&
            (!root || strncmp(it->db_path, "root/", 5) != 0))
            abort();
        check_hardness(it->gold);
    }
}

static void check_pick(const struct suite *s, uint8_t flags)
{
    struct suite_pick p;
    long *out = NULL, *again = NULL, nout = 0, nagain = 0, i;

    memset(&p, 0, sizeof p);
    p.sample = (flags >> 2) & 3;
    p.limit = (flags >> 4) & 3;
    p.seed = flags;
    if (flags & 2) {
        p.sample_dbs = (flags >> 6) & 1 ? 1 : 2;
        p.per_db = (flags >> 7) & 1 ? 1 : 0;
    }
    if (flags & 0x40)
        p.dbs = s->items[0].db_id ? s->items[0].db_id : "?";
    if (suite_pick(s, &p, &out, &nout) ||
        suite_pick(s, &p, &again, &nagain))
        abort();
    if (nout < 0 || nout > s->n || (p.sample > 0 && nout > p.sample) ||
        (p.limit > 0 && nout > p.limit) || nout != nagain)
        abort();
    for (i = 0; i < nout; i++)
        if (out[i] < 0 || out[i] >= s->n || (i > 0 && out[i] <= out[i - 1]) ||
            out[i] != again[i])
            abort();
    free(out);
    free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul, *body;
    const char *root;
    struct suite s;
    size_t len;
    char err[512], *text;
    long unknown;
    uint8_t flags;

    if (size == 0)
        return 0;
    flags = data[0];
    body = data + 1;
    len = size - 1;
    nul = memchr(body, '\0', len);
    write_file(suite_path, body, nul ? (size_t)(nul - body) : len);
    if (nul)
        write_file(tables_path, nul + 1, len - (size_t)(nul + 1 - body));

    text = malloc(len + 1);
    if (!text)
        abort();
    memcpy(text, body, len);
    text[len] = '\0';
    check_hardness(text);
    free(text);

    root = flags & 1 ? "root" : NULL;
    err[0] = '\0';
    if (suite_load(suite_path, root, &s, err, sizeof err) != ASKDB_OK) {
        if (!err[0] || s.n != 0 || s.items)
            abort();
        return 0;
    }
    check_items(&s, root);
    check_pick(&s, flags);
    if (nul) {
        err[0] = '\0';
        if (suite_check_tables(&s, tables_path, &unknown, err, sizeof err)) {
            if (!err[0])
                abort();
        } else if (unknown < 0 || unknown > s.n) {
            abort();
        }
    }
    suite_free(&s);
    if (s.n != 0 || s.items)
        abort();
    return 0;
}
