/* learn.c - the `askdb learn` command: verify, store, list and forget pairs. */
#include "learn.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

/*
** Every pair goes through askdb_memory_learn(): the SQL must pass the
** read-only guard and run on the database before it is stored. A file is
** imported in one transaction of the store (askdb_memory_import); a
** rejected item is reported with its line and skipped, a failing store
** stops the import and keeps nothing.
*/

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
    "      --file PAIRS      JSON lines {\"question\": ..., \"sql\": ...}, "
    "or a\n"
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
    "                        $XDG_CACHE_HOME/askdb/memory.sqlite, else\n"
    "                        ~/.cache/askdb/memory.sqlite); only an askdb\n"
    "                        store or a new file is accepted\n"
    "      --timeout MS      time limit of each verifying query (default\n"
    "                        10000)\n"
    "  -h, --help            this text\n"
    "\n"
    "Exit codes: 0 done, 1 a pair was rejected (or --forget found no such\n"
    "question), 2 usage error or the store failed, 3 DB cannot be opened,\n"
    "130 Ctrl-C while connecting to a server.\n";

enum { O_QUESTION = 256, O_SQL, O_FILE, O_LIST, O_FORGET, O_FORGET_ALL,
       O_MEMORY, O_TIMEOUT };

const struct option cli_learn_opts[] = {
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
    while ((ch = getopt_long(argc, argv, "h", cli_learn_opts, NULL)) != -1) {
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
            fprintf(stderr, "askdb learn: see 'askdb help learn'\n");
            return -1;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "askdb learn: give exactly one database (see "
                        "'askdb help learn')\n");
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

/* ud: the file's name as given. */
static void on_reject(void *ud, long line, const char *why)
{
    format_printf(stderr, "askdb learn: %s:%ld: rejected: %s\n",
                  (const char *)ud, line, why);
}

static int learn_file(askdb_memory *m, askdb_db *db, const char *file)
{
    askdb_import_counts n;
    askdb_status st;

    st = askdb_memory_import(m, db, file, on_reject, (void *)file, &n);
    if (st) {
        format_printf(stderr, "askdb learn: %s\n", askdb_memory_errmsg(m));
        if (st != ASKDB_ERR_IO || access(file, R_OK) == 0)
            fprintf(stderr, "askdb learn: nothing from '%s' was stored\n",
                    file);
        return EXIT_USAGE;
    }
    printf("%ld stored, %ld replaced, %ld rejected", n.stored, n.replaced,
           n.rejected);
    if (n.skipped)
        printf(", %ld skipped (other db_id)", n.skipped);
    putchar('\n');
    return n.rejected ? EXIT_NO_SQL : EXIT_ANSWERED;
}

/* Whether c is white space that askdb_memory_learn() trims. */
static int trimmed(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '\v';
}

/* How many rows the verifying run returned, as "(N rows)"; a run a cap
** stopped returned only the first rows, so N is a lower bound. */
static void rows_note(char *out, size_t size, const askdb_learned *l)
{
    if (l->truncated)
        snprintf(out, size, "at least %ld rows: the verifying run stops at "
                 "the %s", l->nrows, l->truncated == 1
                 ? "row limit" : "size limit");
    else
        snprintf(out, size, "%ld row%s", l->nrows, l->nrows == 1 ? "" : "s");
}

static int learn_one(askdb_memory *m, askdb_db *db, const char *q,
                     const char *sql)
{
    askdb_learned l;
    askdb_status st;
    char rows[128];
    size_t n;

    st = askdb_memory_learn(m, db, q, sql, &l);
    if (st == ASKDB_ERR_REFUSED) {
        format_printf(stderr, "askdb learn: not stored: %s\n",
                      askdb_memory_errmsg(m));
        return EXIT_NO_SQL;
    }
    if (st) {
        format_printf(stderr, "askdb learn: %s\n", askdb_memory_errmsg(m));
        return EXIT_USAGE;
    }
    /* The question as stored, and as --list shows it: without the white
    ** space around it. */
    while (trimmed(*q))
        q++;
    for (n = strlen(q); n > 0 && trimmed(q[n - 1]); n--)
        ;
    rows_note(rows, sizeof rows, &l);
    format_printf(stdout, "%s (%s): %.*s\n",
                  l.replaced ? "replaced" : "stored", rows, (int)n, q);
    return EXIT_ANSWERED;
}

/* --question/--sql and --file: open DB and the store, then add. */
static int learn_add(const struct learn_cli *c)
{
    askdb_config cfg = askdb_config_default();
    askdb_memory *m = NULL;
    askdb_db *db = NULL;
    askdb_status st;
    int rc = EXIT_USAGE;

    if (c->timeout_ms)
        cfg.query_timeout_ms = c->timeout_ms;
    /* Ctrl-C while it connects to a server ends it with a word. */
    st = cli_db_open(c->db, &cfg, &db);
    if (st) {
        format_printf(stderr, "askdb learn: %s\n", askdb_db_errmsg(db));
        askdb_db_close(db);
        return cli_exit_code(st);
    }
    st = askdb_memory_open(c->memory, 1, &m);
    if (st)
        format_printf(stderr, "askdb learn: %s\n", askdb_memory_errmsg(m));
    else
        rc = c->file ? learn_file(m, db, c->file)
                     : learn_one(m, db, c->question, c->sql);
    askdb_memory_close(m);
    askdb_db_close(db);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Listing and forgetting                                                 */
/* ---------------------------------------------------------------------- */

/* One pair as a JSON line ({"question", "sql", "added_at"}: the --file
** format). 0 or -1 (out of memory). */
static int print_pair(const askdb_pair *p)
{
    json_t *o = json_pack("{s:s, s:s, s:s}", "question", p->question, "sql",
                          p->sql, "added_at", p->added_at);
    char *line = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER)
                   : NULL;

    json_decref(o);
    if (!line)
        return -1;
    printf("%s\n", line);
    free(line);
    return 0;
}

static int learn_manage(const struct learn_cli *c)
{
    askdb_memory *m = NULL;
    askdb_pair *p = NULL;
    askdb_status st;
    long removed = 0;
    int rc = EXIT_ANSWERED, n = 0, i;

    /* No store can be in a folder that does not exist: a slip in the
    ** path, said as by learning and asking, not an empty listing. */
    if (c->memory && !cli_folder_exists(c->memory)) {
        format_printf(stderr, "askdb learn: --memory: cannot use memory "
                      "store '%s': its folder does not exist\n", c->memory);
        return EXIT_USAGE;
    }
    st = askdb_memory_open(c->memory, 0, &m);
    if (st == ASKDB_OK && c->list)
        st = askdb_memory_list(m, c->db, &p, &n);
    else if (st == ASKDB_OK)
        st = askdb_memory_forget(m, c->db, c->forget, &removed);
    if (st) {
        format_printf(stderr, "askdb learn: %s\n", askdb_memory_errmsg(m));
        askdb_memory_close(m);
        return st == ASKDB_ERR_DB_OPEN ? EXIT_DB : EXIT_USAGE;
    }
    if (c->list) {
        for (i = 0; i < n && rc == EXIT_ANSWERED; i++)
            if (print_pair(&p[i])) {
                fprintf(stderr, "askdb learn: out of memory\n");
                rc = EXIT_USAGE;
            }
    } else if (c->forget && removed == 0) {
        format_printf(stderr, "askdb learn: no stored question '%s' for "
                      "'%s'\n", c->forget, c->db);
        rc = EXIT_NO_SQL;
    } else if (c->forget) {
        format_printf(stdout, "forgot: %s\n", c->forget);
    } else {
        printf("forgot %ld pair%s\n", removed, removed == 1 ? "" : "s");
    }
    askdb_pairs_free(p, n);
    askdb_memory_close(m);
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
