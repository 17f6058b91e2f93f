/* learn.c - the `askdb learn` command: verify, store, list and forget pairs. */
#include "cli/learn.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/memory.h"
#include "cli/cli.h"
#include "core/buf.h"
#include "core/json.h"

/*
** Every pair goes through memory_learn(): the SQL must pass the read-only
** guard and run on the database before it is stored. A file is imported
** in one transaction of the store; a rejected item is reported with its
** line and skipped, a failing store stops the import and keeps nothing.
*/

#define LEARN_MAX_FILE ((size_t)256 << 20)

static const char usage_learn[] =
    "usage: askdb learn DB --question Q --sql S   verify and store one pair\n"
    "       askdb learn DB --file PAIRS            verify and store a file\n"
    "       askdb learn DB --list | --forget Q | --forget-all\n"
    "\n"
    "Teach askdb how questions about DB are answered. Each pair is\n"
    "verified first: the SQL must pass the same read-only guard as the\n"
    "agent's (exactly one read-only statement) and run without error on\n"
    "DB; a refused or failing pair is not stored and the reason is shown.\n"
    "When askdb is asked about DB, the stored questions most similar to\n"
    "the new one (full-text search, bm25) go into the prompt as examples.\n"
    "The same question again (equal after folding case and white space)\n"
    "replaces its SQL. Pairs belong to DB's absolute path (symbolic links\n"
    "resolved), not to its content: they survive changes to the data, and\n"
    "a moved file starts empty. DB itself is never written.\n"
    "\n"
    "Actions (exactly one):\n"
    "      --question Q --sql S  verify and store one pair\n"
    "      --file PAIRS      JSON lines {\"question\": ..., \"sql\": ...}, or a\n"
    "                        JSON array of such objects (Spider's train.json:\n"
    "                        \"query\" is read as \"sql\", and items whose\n"
    "                        \"db_id\" is not DB's file name without its\n"
    "                        extension are skipped). Prints the counts of\n"
    "                        stored, replaced, rejected (each with its line\n"
    "                        and reason on stderr) and skipped items\n"
    "      --list            print DB's pairs as JSON lines (question, sql,\n"
    "                        added_at), oldest first; the output is a valid\n"
    "                        --file\n"
    "      --forget Q        remove the pair with question Q\n"
    "      --forget-all      remove every pair of DB\n"
    "Options:\n"
    "      --memory FILE     the store to use (default:\n"
    "                        $ASKDB_CACHE_DIR/memory.sqlite, else\n"
    "                        ~/.cache/askdb/memory.sqlite); only an askdb\n"
    "                        store or a new file is accepted\n"
    "      --timeout MS      time limit of each verifying query (default\n"
    "                        10000)\n"
    "  -h, --help            this text\n"
    "\n"
    "Exit codes: 0 done, 1 a pair was rejected (or --forget found no such\n"
    "question), 2 usage error or the store failed, 3 DB cannot be opened.\n";

enum { O_QUESTION = 256, O_SQL, O_FILE, O_LIST, O_FORGET, O_FORGET_ALL,
       O_MEMORY, O_TIMEOUT };

static const struct option learn_opts[] = {
    {"question", required_argument, NULL, O_QUESTION},
    {"sql", required_argument, NULL, O_SQL},
    {"file", required_argument, NULL, O_FILE},
    {"list", no_argument, NULL, O_LIST},
    {"forget", required_argument, NULL, O_FORGET},
    {"forget-all", no_argument, NULL, O_FORGET_ALL},
    {"memory", required_argument, NULL, O_MEMORY},
    {"timeout", required_argument, NULL, O_TIMEOUT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
};

struct learn_cli {
    const char *db, *question, *sql, *file, *forget, *memory;
    int list, forget_all, timeout_ms;
};

/* Parse argv into c; 0, 1 (help printed) or -1 (usage error printed). */
static int parse(int argc, char **argv, struct learn_cli *c)
{
    char *end;
    long v;
    int ch, actions;

    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", learn_opts, NULL)) != -1) {
        switch (ch) {
        case O_QUESTION: c->question = optarg; break;
        case O_SQL: c->sql = optarg; break;
        case O_FILE: c->file = optarg; break;
        case O_LIST: c->list = 1; break;
        case O_FORGET: c->forget = optarg; break;
        case O_FORGET_ALL: c->forget_all = 1; break;
        case O_MEMORY: c->memory = optarg; break;
        case O_TIMEOUT:
            errno = 0;
            v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v < 1 || v > 86400000L) {
                fprintf(stderr, "askdb learn: --timeout takes a whole number "
                                "from 1 to 86400000, not '%s'\n", optarg);
                return -1;
            }
            c->timeout_ms = (int)v;
            break;
        case 'h':
            fputs(usage_learn, stdout);
            return 1;
        default:
            fprintf(stderr, "askdb learn: see 'askdb learn --help'\n");
            return -1;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "askdb learn: give exactly one database (see "
                        "'askdb learn --help')\n");
        return -1;
    }
    c->db = argv[optind];
    if (!!c->question != !!c->sql) {
        fprintf(stderr, "askdb learn: --question and --sql go together\n");
        return -1;
    }
    actions = !!c->question + !!c->file + c->list + !!c->forget +
              c->forget_all;
    if (actions != 1) {
        fprintf(stderr, "askdb learn: give exactly one of --question/--sql, "
                        "--file, --list, --forget, --forget-all\n");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Adding                                                                 */
/* ---------------------------------------------------------------------- */

struct import {
    struct memory *m;
    askdb_db *db;
    const char *file;
    char *stem;              /* DB's file name without extension */
    long stored, replaced, rejected, skipped;
};

static void reject(struct import *im, long line, const char *why)
{
    im->rejected++;
    format_printf(stderr, "askdb learn: %s:%ld: rejected: %s\n", im->file,
                  line, why);
}

/* One item of a file. 0, or -1 when the store failed (printed). */
static int import_item(struct import *im, const json_t *o, long line)
{
    const char *q, *s, *dbid;
    char err[1024];
    int rc;

    if (!json_is_object(o)) {
        reject(im, line, "not a JSON object");
        return 0;
    }
    dbid = jsonx_str(o, "db_id");
    if (dbid && strcmp(dbid, im->stem) != 0) {
        im->skipped++;
        return 0;
    }
    q = jsonx_str(o, "question");
    s = jsonx_str(o, "sql");
    if (!s)
        s = jsonx_str(o, "query");
    if (!s)
        s = jsonx_str(o, "SQL");
    if (!q) {
        reject(im, line, "no \"question\" string");
        return 0;
    }
    if (!s) {
        reject(im, line, "no \"sql\" (or \"query\") string");
        return 0;
    }
    rc = memory_learn(im->m, im->db, q, s, NULL, err, sizeof err);
    if (rc == MEMORY_ERROR) {
        format_printf(stderr, "askdb learn: %s\n", err);
        return -1;
    }
    if (rc == MEMORY_REJECTED)
        reject(im, line, err);
    else if (rc == 1)
        im->replaced++;
    else
        im->stored++;
    return 0;
}

/* The whole file, NUL-terminated; NULL with a message printed. */
static char *slurp(const char *path)
{
    char chunk[65536];
    struct buf b;
    size_t n;
    FILE *f = fopen(path, "rb");

    if (!f) {
        fprintf(stderr, "askdb learn: cannot read '%s': %s\n", path,
                strerror(errno));
        return NULL;
    }
    buf_init(&b, LEARN_MAX_FILE);
    buf_puts(&b, "");
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(&b, chunk, n);
    if (ferror(f) || buf_err(&b)) {
        if (ferror(f))
            fprintf(stderr, "askdb learn: cannot read '%s': %s\n", path,
                    strerror(errno));
        else
            fprintf(stderr, "askdb learn: '%s' is larger than %zu bytes or "
                            "memory ran out\n", path, LEARN_MAX_FILE);
        buf_free(&b);
        fclose(f);
        return NULL;
    }
    fclose(f);
    return buf_steal(&b);
}

/* Skip white space from *p up to end, counting line breaks into *line. */
static void skip_ws(const char **p, const char *end, long *line)
{
    while (*p < end && (**p == ' ' || **p == '\t' || **p == '\r' ||
                        **p == '\n')) {
        if (**p == '\n')
            (*line)++;
        (*p)++;
    }
}

/*
** A JSON array, read one item at a time so that every item has its line.
** p points at '['. 0, or -1 (malformed array or store failure, printed).
*/
static int import_array(struct import *im, const char *p, const char *end,
                        long line)
{
    json_error_t je;
    json_t *o;
    const char *s;
    long at;
    int rc;

    p++;
    skip_ws(&p, end, &line);
    if (p < end && *p == ']')
        return 0;
    for (;;) {
        at = line;
        o = json_loadb(p, (size_t)(end - p),
                       JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &je);
        if (!o) {
            fprintf(stderr, "askdb learn: %s:%ld: not valid JSON: %s\n",
                    im->file, at + je.line - 1, je.text);
            return -1;
        }
        for (s = p; s < p + je.position; s++)
            line += *s == '\n';
        p += je.position;
        rc = import_item(im, o, at);
        json_decref(o);
        if (rc)
            return -1;
        skip_ws(&p, end, &line);
        if (p < end && *p == ',') {
            p++;
            skip_ws(&p, end, &line);
            continue;
        }
        if (p < end && *p == ']')
            break;
        fprintf(stderr, "askdb learn: %s:%ld: not valid JSON: expected ',' "
                        "or ']' after an item\n", im->file, line);
        return -1;
    }
    p++;
    skip_ws(&p, end, &line);
    if (p < end) {
        fprintf(stderr, "askdb learn: %s:%ld: not valid JSON: text after "
                        "the array\n", im->file, line);
        return -1;
    }
    return 0;
}

/* JSON lines: one object per non-blank line. 0, or -1 (store failure). */
static int import_lines(struct import *im, char *text)
{
    json_error_t je;
    char *p, *nl, why[300];
    long line = 0;
    json_t *o;
    int rc;

    for (p = text; p && *p; p = nl) {
        nl = strchr(p, '\n');
        if (nl)
            *nl++ = '\0';
        line++;
        if (!p[strspn(p, " \t\r")])
            continue;
        o = json_loads(p, 0, &je);
        if (!o) {
            snprintf(why, sizeof why, "not valid JSON: %s", je.text);
            reject(im, line, why);
            continue;
        }
        rc = import_item(im, o, line);
        json_decref(o);
        if (rc)
            return -1;
    }
    return 0;
}

/* DB's file name without directory and extension, malloc()ed. */
static char *stem_of(const char *path)
{
    const char *base = strrchr(path, '/'), *dot;

    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    return strndup(base, dot && dot > base ? (size_t)(dot - base)
                                           : strlen(base));
}

static int learn_file(struct import *im)
{
    char err[1024], *text;
    const char *p;
    long line = 1;
    int rc;

    text = slurp(im->file);
    if (!text)
        return EXIT_USAGE;
    if (memory_batch_begin(im->m, err, sizeof err)) {
        format_printf(stderr, "askdb learn: %s\n", err);
        free(text);
        return EXIT_USAGE;
    }
    p = text;
    skip_ws(&p, text + strlen(text), &line);
    if (*p == '[')
        rc = import_array(im, p, text + strlen(text), line);
    else
        rc = import_lines(im, text);
    free(text);
    if (rc) {
        (void)memory_batch_end(im->m, 0, err, sizeof err);
        fprintf(stderr, "askdb learn: nothing from '%s' was stored\n",
                im->file);
        return EXIT_USAGE;
    }
    if (memory_batch_end(im->m, 1, err, sizeof err)) {
        format_printf(stderr, "askdb learn: %s\n", err);
        return EXIT_USAGE;
    }
    printf("%ld stored, %ld replaced, %ld rejected", im->stored,
           im->replaced, im->rejected);
    if (im->skipped)
        printf(", %ld skipped (other db_id)", im->skipped);
    putchar('\n');
    return im->rejected ? EXIT_NO_SQL : EXIT_ANSWERED;
}

static int learn_one(struct import *im, const char *q, const char *sql)
{
    char err[1024];
    long nrows = 0;
    int rc;

    rc = memory_learn(im->m, im->db, q, sql, &nrows, err, sizeof err);
    if (rc == MEMORY_ERROR) {
        format_printf(stderr, "askdb learn: %s\n", err);
        return EXIT_USAGE;
    }
    if (rc == MEMORY_REJECTED) {
        format_printf(stderr, "askdb learn: not stored: %s\n", err);
        return EXIT_NO_SQL;
    }
    format_printf(stdout, "%s (%ld row%s): %s\n",
                  rc == 1 ? "replaced" : "stored", nrows,
                  nrows == 1 ? "" : "s", q);
    return EXIT_ANSWERED;
}

/* --question/--sql and --file: open DB and the store, then add. */
static int learn_add(const struct learn_cli *c)
{
    askdb_config cfg = askdb_config_default();
    struct import im;
    askdb_status st;
    char err[1024];
    int rc = EXIT_USAGE;

    memset(&im, 0, sizeof im);
    im.file = c->file;
    if (c->timeout_ms)
        cfg.query_timeout_ms = c->timeout_ms;
    st = askdb_db_open(c->db, &cfg, &im.db);
    if (st) {
        format_printf(stderr, "askdb learn: %s\n", askdb_db_errmsg(im.db));
        askdb_db_close(im.db);
        return cli_exit_code(st);
    }
    im.stem = stem_of(c->db);
    if (!im.stem) {
        fprintf(stderr, "askdb learn: out of memory\n");
        goto out;
    }
    if (memory_open(c->memory, 1, &im.m, err, sizeof err)) {
        format_printf(stderr, "askdb learn: %s\n", err);
        goto out;
    }
    rc = c->file ? learn_file(&im) : learn_one(&im, c->question, c->sql);
out:
    memory_close(im.m);
    askdb_db_close(im.db);
    free(im.stem);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Listing and forgetting                                                 */
/* ---------------------------------------------------------------------- */

static int print_list(struct memory *m, const char *key)
{
    struct memory_pair *p = NULL;
    json_t *o;
    char *line;
    int n = 0, i, rc = EXIT_ANSWERED;

    if (memory_list(m, key, &p, &n)) {
        fprintf(stderr, "askdb learn: cannot read the memory store '%s'\n",
                memory_file(m));
        return EXIT_USAGE;
    }
    for (i = 0; i < n && rc == EXIT_ANSWERED; i++) {
        o = json_object();
        line = NULL;
        if (o && !jsonx_set_str(o, "question", p[i].question) &&
            !jsonx_set_str(o, "sql", p[i].sql) &&
            !jsonx_set_str(o, "added_at", p[i].added_at))
            line = jsonx_dump(o);
        if (line) {
            printf("%s\n", line);
        } else {
            fprintf(stderr, "askdb learn: out of memory\n");
            rc = EXIT_USAGE;
        }
        free(line);
        json_decref(o);
    }
    memory_pairs_free(p, n);
    return rc;
}

static int learn_manage(const struct learn_cli *c)
{
    struct memory *m = NULL;
    char err[1024], *key;
    int rc, n;

    key = memory_db_key(c->db);
    if (!key) {
        fprintf(stderr, "askdb learn: cannot open database '%s': %s\n",
                c->db, strerror(errno));
        return EXIT_DB;
    }
    rc = memory_open(c->memory, 0, &m, err, sizeof err);
    if (rc < 0) {
        format_printf(stderr, "askdb learn: %s\n", err);
        free(key);
        return EXIT_USAGE;
    }
    /* rc 1: no store yet, so nothing is learned. */
    if (c->list) {
        rc = m ? print_list(m, key) : EXIT_ANSWERED;
    } else {
        n = m ? memory_forget(m, key, c->forget, err, sizeof err) : 0;
        if (n < 0) {
            format_printf(stderr, "askdb learn: %s\n", err);
            rc = EXIT_USAGE;
        } else if (c->forget && n == 0) {
            fprintf(stderr, "askdb learn: no stored question '%s' for '%s'\n",
                    c->forget, c->db);
            rc = EXIT_NO_SQL;
        } else if (c->forget) {
            printf("forgot: %s\n", c->forget);
            rc = EXIT_ANSWERED;
        } else {
            printf("forgot %d pair%s\n", n, n == 1 ? "" : "s");
            rc = EXIT_ANSWERED;
        }
    }
    memory_close(m);
    free(key);
    return rc;
}

int cmd_learn(int argc, char **argv)
{
    struct learn_cli c;
    int rc;

    memset(&c, 0, sizeof c);
    rc = parse(argc, argv, &c);
    if (rc)
        return rc > 0 ? EXIT_ANSWERED : EXIT_USAGE;
    if (c.question || c.file)
        return learn_add(&c);
    return learn_manage(&c);
}
