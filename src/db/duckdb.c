/* duckdb.c - the DuckDB driver: a .duckdb file read-only, or CSV and Parquet
** files asked in place, through DuckDB's C API. */
#define _XOPEN_SOURCE 700 /* realpath() */
#include "db/driver.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ASKDB_HAVE_DUCKDB

/*
** A build without DuckDB (scripts/duckdb.sh had not fetched it): the
** driver is still picked for .duckdb, .csv and .parquet paths, so that
** the user learns what is missing instead of seeing an SQLite error.
*/
static askdb_status dk_open(askdb_db *db, const char *path)
{
    snprintf(db->errmsg, sizeof db->errmsg,
             "cannot open '%s': this askdb was built without DuckDB, which "
             "reads .duckdb, .csv and .parquet files; run scripts/duckdb.sh "
             "(it fetches DuckDB's C library into ~/.cache/askdb) and "
             "rebuild askdb (make)", path);
    return ASKDB_ERR_DB_OPEN;
}

static void dk_close(askdb_db *db)
{
    db->impl = NULL;
}

static askdb_status dk_schema(askdb_db *db, struct db_schema *out)
{
    (void)out;
    snprintf(db->errmsg, sizeof db->errmsg, "askdb was built without DuckDB");
    return ASKDB_ERR_DB;
}

static askdb_status dk_check(askdb_db *db, const char *sql, struct db_err *e)
{
    (void)db;
    (void)sql;
    e->ec = ASKDB_EC_RUNTIME;
    snprintf(e->msg, sizeof e->msg, "askdb was built without DuckDB");
    return ASKDB_ERR_DB;
}

static askdb_status dk_run(askdb_db *db, const char *sql, askdb_result **out,
                           struct db_err *e)
{
    *out = NULL;
    return dk_check(db, sql, e);
}

#define dk_samples NULL

#else /* ASKDB_HAVE_DUCKDB */

#include <duckdb.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/text.h"
#include "db/watch.h"

/*
** Defence in layers, each enough on its own for what it covers:
**   1. a .duckdb file is opened with access_mode=READ_ONLY: DuckDB refuses
**      every write to it (and so creates no ".wal" beside it); CSV and
**      Parquet files are read through views of an in-memory database,
**      which has no file of its own to write;
**   2. no external access: enable_external_access=false, except for the
**      exact files asked about (allowed_paths, set before access is
**      switched off; none for a file whose path has a glob character,
**      copied at open: open_files()), so read_csv(), read_text(), glob(),
**      COPY ... TO, ATTACH, INSTALL and LOAD cannot reach any other file
**      (a pattern whose ".." cancels a glob passes, and lists the names
**      of folders: layer 3 refuses the readers of files by a path and
**      such a pattern as a table name); extensions
**      are neither installed nor loaded automatically; temp_directory is
**      empty, so nothing spills to disk beside the database;
**   3. the configuration is locked (lock_configuration=true) once it is
**      set: SET, RESET and PRAGMA cannot undo layers 1 and 2; the table
**      functions that change the session, run text or read files by a
**      path are refused by name (denied_fns), as is a path with a
**      wildcard and "/.." (refuse_folder_walk());
**   4. exactly one statement (duckdb_extract_statements() must find one)
**      and its prepared type must be SELECT; EXPLAIN only as askdb's own
**      plan request (askdb_db_explain, which checks the statement first);
**   5. a watchdog thread calls duckdb_interrupt() at the time limit or
**      when the handle's cancel flag is raised, and rows and bytes are
**      capped while the result streams in, chunk by chunk, so a huge
**      result is never held whole.
** DuckDB's allowed_paths does not tell reading from writing: for a CSV or
** Parquet file, what keeps COPY ... TO that very file out is layer 4.
*/

/* How much of the machine one query may take: DuckDB's defaults are 80%
** of the memory and every core, too much for a server answering several
** questions at once. */
#define DK_MEMORY_LIMIT "1GB"
#define DK_MAX_THREADS 4

/* How often the watchdog looks at the cancel flag while a query runs. */
#define DK_POLL_MS 50

struct dk {
    duckdb_database db;
    duckdb_connection con;
    int files;                /* CSV/Parquet views (or copies) in an
                                 in-memory db */
    char *real;               /* the real path of the file asked */
    char *csv_view;           /* a CSV file's view, NULL otherwise */
    char *csv_pattern;        /* the path read_csv() reads it by */
    int csv_retyped;          /* its types come from the whole file */
    int csv_checked;          /* csv_check() ran on this handle */
    long csv_rows;            /* rows csv_check() counted, -1 unknown */
    char lost[400];           /* why the database could not be opened
                                 again (reopen_if_invalidated()) */
    struct db_watch wd;       /* duckdb_interrupt() at the time limit or
                                 on cancel */
};

static struct dk *DK(askdb_db *db)
{
    return db->impl;
}

/* ---------------------------------------------------------------------- */
/* Watchdog                                                               */
/* ---------------------------------------------------------------------- */

/*
** The watchdog's stop: duckdb_interrupt(), holding the watchdog while
** the query runs (db_watch_hold()), as an interrupt that came while the
** connection ran its next query would stop that one. One sent just as
** the query ends is harmless: DuckDB clears the flag when the next
** statement starts (ClientContext::InitialCleanup).
*/
static void interrupt(void *ud, int why)
{
    struct dk *d = ud;

    (void)why;
    if (db_watch_hold(&d->wd)) {
        duckdb_interrupt(d->con);
        db_watch_release(&d->wd);
    }
}

/*
** Watch the query about to run: interrupt it timeout_ms from now (0 = no
** limit) or when *cancel becomes non-zero. Returns 0 when no thread could
** be started: nothing else stops a DuckDB query, so a statement of the
** user's is then not run (run_once()); the schema's own bounded reads
** run, capped in rows.
*/
static int watchdog_arm(struct dk *d, int timeout_ms, const atomic_int *cancel)
{
    return db_watch_arm(&d->wd,
                        timeout_ms > 0 ? db_now_ms() + timeout_ms : 0,
                        cancel);
}

/* Stop watching; *timed_out and *cancelled say whether the watchdog
** interrupted the query, and why. */
static void watchdog_disarm(struct dk *d, int *timed_out, int *cancelled)
{
    int why = db_watch_disarm(&d->wd);

    *timed_out = why == DB_WATCH_DEADLINE;
    *cancelled = why == DB_WATCH_CANCEL;
}

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */
/* ---------------------------------------------------------------------- */

/*
** DuckDB's message without its source excerpt: "Catalog Error: Table with
** name x does not exist!\nDid you mean "y"?\n\nLINE 1: ...". The part
** before "LINE" says what is wrong and suggests a name; newlines become
** spaces so that it prints on one line. An INTERNAL Error's "Stack
** Trace:" (library paths, C++ symbols and addresses, which filled the
** whole message the user and the model read) is cut the same way.
*/
static int excerpt_at(const char *p)
{
    return strncmp(p, "LINE ", 5) == 0 || strncmp(p, "Stack Trace:", 12) == 0;
}

static void put_message(char *dst, size_t n, const char *m)
{
    size_t i = 0;
    const char *p;

    if (!m)
        m = "unknown DuckDB error";
    for (p = m; *p && i + 1 < n; p++) {
        if (*p == '\n' && excerpt_at(p + 1))
            break;
        if (*p == '\n' && p[1] == '\n' && excerpt_at(p + 2))
            break;
        dst[i++] = (*p == '\n' || *p == '\r') ? ' ' : *p;
    }
    while (i > 0 && dst[i - 1] == ' ')
        i--;
    dst[i] = '\0';
}

/* The class of an error DuckDB reported, from its type and message. */
static askdb_error_class classify(duckdb_error_type t, const char *m)
{
    if (!m)
        m = "";
    if (t == DUCKDB_ERROR_INTERRUPT || strstr(m, "INTERRUPT Error"))
        return ASKDB_EC_TIMEOUT;
    /* The file, not the statement: a repair cannot help. */
    if (t == DUCKDB_ERROR_IO || t == DUCKDB_ERROR_FATAL ||
        strncmp(m, "IO Error", 8) == 0 || strncmp(m, "FATAL Error", 11) == 0 ||
        strstr(m, "database has been invalidated"))
        return ASKDB_EC_DATABASE;
    if (t == DUCKDB_ERROR_PERMISSION ||
        strncmp(m, "Permission Error", 16) == 0 ||
        strstr(m, "read-only mode") ||
        strstr(m, "configuration has been locked"))
        return ASKDB_EC_REFUSED;
    if (t == DUCKDB_ERROR_PARSER || t == DUCKDB_ERROR_SYNTAX ||
        strncmp(m, "Parser Error", 12) == 0)
        return ASKDB_EC_SYNTAX;
    if (strncmp(m, "Binder Error", 12) == 0 &&
        (strstr(m, "Referenced column") || strstr(m, "Ambiguous reference") ||
         strstr(m, "does not have a column")))
        return ASKDB_EC_UNKNOWN_COLUMN;
    if (strstr(m, "Referenced table") && strstr(m, "not found"))
        return ASKDB_EC_UNKNOWN_TABLE;
    if (strncmp(m, "Catalog Error: Table with name", 30) == 0 ||
        strncmp(m, "Catalog Error: Table Function with name", 39) == 0 ||
        (strncmp(m, "Catalog Error", 13) == 0 && strstr(m, "Table with name")))
        return ASKDB_EC_UNKNOWN_TABLE;
    return ASKDB_EC_RUNTIME;
}

/* Fill e from an error DuckDB reported (type t, message m). */
static void set_error(struct db_err *e, duckdb_error_type t, const char *m)
{
    e->ec = classify(t, m);
    if (e->ec == ASKDB_EC_REFUSED) {
        char tmp[sizeof e->msg - 64];
        put_message(tmp, sizeof tmp, m);
        snprintf(e->msg, sizeof e->msg, "refused: %s; askdb reads only the "
                 "database it was given", tmp);
    } else {
        put_message(e->msg, sizeof e->msg, m);
    }
}

/* The status for an error class. */
static askdb_status status_of(askdb_error_class ec)
{
    return ec == ASKDB_EC_REFUSED ? ASKDB_ERR_REFUSED : ASKDB_ERR_DB;
}

/* ---------------------------------------------------------------------- */
/* askdb's own statements                                                 */
/* ---------------------------------------------------------------------- */

/*
** A materialized result of askdb's own statements (schema reading): every
** column cast to VARCHAR by the statement itself, as strings the grid
** owns (NULL for SQL NULL).
*/
struct grid {
    long nrows;
    int ncols;
    char **cell;              /* nrows * ncols */
};

static void grid_free(struct grid *g)
{
    long i;

    for (i = 0; i < g->nrows * g->ncols; i++)
        free(g->cell[i]);
    free(g->cell);
    memset(g, 0, sizeof *g);
}

static const char *grid_at(const struct grid *g, long r, int c)
{
    return g->cell[r * g->ncols + c];
}

/* A VARCHAR or BLOB cell of a chunk's vector as pointer and length. */
static const char *str_at(void *data, idx_t row, uint32_t *len)
{
    duckdb_string_t *s = (duckdb_string_t *)data + row;

    *len = duckdb_string_t_length(*s);
    return duckdb_string_t_data(s);
}

/*
** Run sql (askdb's own, every column VARCHAR) and keep all its rows in g.
** Returns ASKDB_OK, or ASKDB_ERR_DB with the message in err.
*/
static askdb_status grid_query(struct dk *d, const char *sql, struct grid *g,
                               char *err, size_t errn)
{
    duckdb_result res;
    duckdb_data_chunk ch;
    askdb_status rc = ASKDB_OK;
    long cap = 0;
    idx_t n, r;
    int c;

    memset(g, 0, sizeof *g);
    if (!d->con) {
        snprintf(err, errn, "the database is not open");
        return ASKDB_ERR_DB;
    }
    if (duckdb_query(d->con, sql, &res) == DuckDBError) {
        put_message(err, errn, duckdb_result_error(&res));
        duckdb_destroy_result(&res);
        return ASKDB_ERR_DB;
    }
    g->ncols = (int)duckdb_column_count(&res);
    while (rc == ASKDB_OK && (ch = duckdb_fetch_chunk(res)) != NULL) {
        n = duckdb_data_chunk_get_size(ch);
        if (g->nrows + (long)n > cap) {
            long nc = cap ? cap * 2 : 256;
            char **p;
            while (nc < g->nrows + (long)n)
                nc *= 2;
            p = realloc(g->cell, (size_t)nc * (size_t)g->ncols * sizeof *p);
            if (!p) {
                rc = ASKDB_ERR_NOMEM;
                duckdb_destroy_data_chunk(&ch);
                break;
            }
            g->cell = p;
            cap = nc;
        }
        for (r = 0; r < n && rc == ASKDB_OK; r++) {
            for (c = 0; c < g->ncols; c++) {
                duckdb_vector v = duckdb_data_chunk_get_vector(ch, (idx_t)c);
                uint64_t *valid = duckdb_vector_get_validity(v);
                char **slot = &g->cell[(g->nrows + (long)r) * g->ncols + c];
                uint32_t len;
                const char *s;
                *slot = NULL;
                if (valid && !duckdb_validity_row_is_valid(valid, r))
                    continue;
                s = str_at(duckdb_vector_get_data(v), r, &len);
                *slot = malloc((size_t)len + 1);
                if (!*slot) {
                    rc = ASKDB_ERR_NOMEM;
                    break;
                }
                memcpy(*slot, s, len);
                (*slot)[len] = '\0';
            }
            if (rc == ASKDB_OK)
                continue;
            /* free the cells of the partial row: nrows does not count it */
            while (c-- > 0)
                free(g->cell[(g->nrows + (long)r) * g->ncols + c]);
        }
        g->nrows += (long)r - (rc != ASKDB_OK);
        duckdb_destroy_data_chunk(&ch);
    }
    if (rc == ASKDB_OK && duckdb_result_error(&res)) {
        put_message(err, errn, duckdb_result_error(&res));
        rc = ASKDB_ERR_DB;
    }
    if (rc == ASKDB_ERR_NOMEM)
        snprintf(err, errn, "out of memory");
    duckdb_destroy_result(&res);
    if (rc)
        grid_free(g);
    return rc;
}

/* Run one statement of askdb's own setup; ASKDB_OK or ASKDB_ERR_DB with
** DuckDB's message in err. */
static askdb_status exec(struct dk *d, const char *sql, char *err, size_t n)
{
    duckdb_result res;
    askdb_status rc = ASKDB_OK;

    if (!d->con) {
        snprintf(err, n, "the database is not open");
        return ASKDB_ERR_DB;
    }
    if (duckdb_query(d->con, sql, &res) == DuckDBError) {
        put_message(err, n, duckdb_result_error(&res));
        rc = ASKDB_ERR_DB;
    }
    duckdb_destroy_result(&res);
    return rc;
}

/*
** Does path have a character DuckDB's file system takes as a glob (its
** FileSystem::HasGlob(): '*', '?', '['; no braces)? DuckDB globs every
** path it is given, its guard's allowed paths too: see open_files().
*/
static int has_glob(const char *path)
{
    return strpbrk(path, "*?[") != NULL;
}

/*
** The path DuckDB's readers glob to exactly the file at path: every glob
** character made a bracket of its own ("[s]ales.csv" -> "[[]s]ales.csv",
** "a*b.csv" -> "a[*]b.csv"); without it the pattern reads whatever file
** it matches instead. malloc()ed, NULL when out of memory.
*/
static char *glob_literal(const char *path)
{
    size_t n = strlen(path), i, j = 0;
    char *out = malloc(3 * n + 1);

    if (!out)
        return NULL;
    for (i = 0; i < n; i++) {
        if (strchr("*?[", path[i])) {
            out[j++] = '[';
            out[j++] = path[i];
            out[j++] = ']';
        } else {
            out[j++] = path[i];
        }
    }
    out[j] = '\0';
    return out;
}

/* ---------------------------------------------------------------------- */
/* Open                                                                   */
/* ---------------------------------------------------------------------- */

/* Does path end with suffix, ignoring case? */
static int ends_with(const char *path, const char *suffix)
{
    size_t n = strlen(path), k = strlen(suffix);

    return n > k && strcasecmp(path + n - k, suffix) == 0;
}

/* The file kinds read through a view, and the DuckDB reader of each. */
static const struct {
    const char *suffix;
    const char *reader;
} file_kinds[] = {
    {".csv.gz", "read_csv"}, {".tsv.gz", "read_csv"}, {".csv", "read_csv"},
    {".tsv", "read_csv"},    {".parquet", "read_parquet"},
};

/* The reader for a CSV or Parquet path, or NULL for a database file. */
static const char *file_reader(const char *path, size_t *suffix_len)
{
    size_t i;

    for (i = 0; i < sizeof file_kinds / sizeof file_kinds[0]; i++)
        if (ends_with(path, file_kinds[i].suffix)) {
            *suffix_len = strlen(file_kinds[i].suffix);
            return file_kinds[i].reader;
        }
    return NULL;
}

/*
** The length of the letter that starts s[0..n) when it is one of a
** script's letters askdb keeps in a view's name (Latin with accents,
** Greek, Cyrillic, Hebrew, Arabic, kana, CJK, Hangul; valid UTF-8 of 2
** or more bytes), else 0: symbols, spaces and invisible characters are
** not kept.
*/
static size_t name_letter(const unsigned char *s, size_t n)
{
    static const unsigned long keep[][2] = {
        {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x24F},  /* Latin */
        {0x370, 0x3FF}, {0x400, 0x4FF},             /* Greek, Cyrillic */
        {0x5D0, 0x5EA}, {0x620, 0x64A},             /* Hebrew, Arabic */
        {0x3041, 0x30FF}, {0x4E00, 0x9FFF},         /* kana, CJK */
        {0xAC00, 0xD7A3},                           /* Hangul */
    };
    size_t len = text_char_len((const char *)s, n, 0), i;
    unsigned long cp;

    if (len < 2)
        return 0;
    cp = s[0] & (0x7F >> len);
    for (i = 1; i < len; i++)
        cp = cp << 6 | (s[i] & 0x3F);
    for (i = 0; i < sizeof keep / sizeof keep[0]; i++)
        if (cp >= keep[i][0] && cp <= keep[i][1])
            return len;
    return 0;
}

/*
** The view's name for a file: its name without directory and ending,
** lower-cased, every character but letters, digits and '_' made '_' (the
** letters of other scripts kept: "données.csv" -> données), and a leading
** digit prefixed with "t_" ("Sales 2024.csv" -> sales_2024), so that the
** model can write it unquoted. malloc()ed; NULL when out of memory.
*/
static char *view_name(const char *path, size_t suffix_len)
{
    const char *base = strrchr(path, '/');
    size_t n, i, j = 0, k;
    char *out;

    base = base ? base + 1 : path;
    n = strlen(base);
    n = n > suffix_len ? n - suffix_len : 0;
    out = malloc(n + 8);
    if (!out)
        return NULL;
    if (n == 0 || (base[0] >= '0' && base[0] <= '9')) {
        memcpy(out, n ? "t_" : "data", n ? 2 : 4);
        j = n ? 2 : 4;
    }
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)base[i];
        if (c >= 0x80 && (k = name_letter((const unsigned char *)base + i,
                                          n - i)) > 0) {
            memcpy(out + j, base + i, k);
            j += k;
            i += k - 1;
            continue;
        }
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            c = '_';
        out[j++] = (char)c;
    }
    out[j] = '\0';
    return out;
}

/*
** The configuration every handle starts with. A database file is opened
** read-only with no external access and the configuration locked at
** once; the in-memory database of a CSV or Parquet file gets those after
** its view exists (open_files()). The guard's switches come last: with
** enable_external_access off DuckDB refuses temp_directory, and a
** refused option is only a return value: ignored, a .duckdb file kept
** the default "<database>.tmp" and a large sort spilled gigabytes into a
** directory it made beside the file. NULL when out of memory or when
** DuckDB refused an option (*bad names it).
*/
static duckdb_config make_config(int file_db, const char **bad)
{
    duckdb_config cfg = NULL;
    char threads[16];
    long ncpu = 1;
    size_t i;
    const char *opts[][2] = {
        {"autoinstall_known_extensions", "false"},
        {"autoload_known_extensions", "false"},
        {"allow_community_extensions", "false"},
        {"allow_unsigned_extensions", "false"},
        /* Empty: larger-than-memory work fails instead of spilling to a
        ** "<database>.tmp" directory beside the user's file. */
        {"temp_directory", ""},
        {"memory_limit", DK_MEMORY_LIMIT},
        {"threads", threads},
        {"access_mode", "READ_ONLY"},
        {"enable_external_access", "false"},
        {"lock_configuration", "true"},
    };
    /* the last three are a database file's only */
    size_t nopts = sizeof opts / sizeof opts[0] - (file_db ? 0 : 3);

    *bad = NULL;
#ifdef _SC_NPROCESSORS_ONLN
    ncpu = sysconf(_SC_NPROCESSORS_ONLN);
#endif
    if (ncpu < 1)
        ncpu = 1;
    if (ncpu > DK_MAX_THREADS)
        ncpu = DK_MAX_THREADS;
    snprintf(threads, sizeof threads, "%ld", ncpu);
    if (duckdb_create_config(&cfg) == DuckDBError)
        return NULL;
    for (i = 0; i < nopts; i++)
        if (duckdb_set_config(cfg, opts[i][0], opts[i][1]) == DuckDBError) {
            *bad = opts[i][0];
            duckdb_destroy_config(&cfg);
            return NULL;
        }
    return cfg;
}

/*
** DuckDB's error m on a CSV file with bytes that are no UTF-8 ("Invalid
** unicode ... This file is not utf-8 encoded"), whose advice names
** read_csv() options (encoding, ignore_errors) askdb does not take.
*/
static int csv_not_utf8(const char *m)
{
    return m && strstr(m, "not utf-8 encoded") != NULL;
}

/* askdb's words for it, into dst: the file at path (and the line of m,
** DuckDB's error, when it names one) and what to do. */
static void csv_not_utf8_say(char *dst, size_t n, const char *path,
                             const char *m)
{
    const char *at = m ? strstr(m, "CSV Error on Line: ") : NULL;
    long line = at ? strtol(at + 19, NULL, 10) : 0;
    char where[48] = "it is";

    if (line > 0)
        snprintf(where, sizeof where, "its line %ld is", line);
    snprintf(dst, n, "cannot read '%s' as CSV: %s not UTF-8, which askdb "
             "reads CSV files as; convert it first, e.g. iconv -f latin1 "
             "-t utf-8 (or the file's encoding)", path, where);
}

/*
** The CSV or Parquet file at real (an absolute path) as one view named
** after the file, then external access limited to that file and the
** configuration locked.
**
** A real path with a glob character is copied into a table instead, and
** then no path at all is allowed. DuckDB's guard checks the path a query
** names, after realpath(), never the files that path matches as a
** pattern, and checks each file it opens the same way: a view that reads
** the file at every query needs its real path allowed, and a query that
** names that path as a pattern (glob('.../[s]ecret.csv')) listed the files
** it matches (secret.csv), read_text() named them in its Permission
** Error, and a '*' folder then '..' before the name listed the folder's
** folders.
** No path DuckDB reads in place avoids it (/proc/self/fd/N is followed
** back to the real path), so such a file is read once, whole, at open.
*/
static askdb_status open_files(askdb_db *db, struct dk *d, const char *path,
                               const char *real, const char *reader,
                               size_t suffix_len)
{
    struct buf b;
    char err[512];
    char *name = view_name(path, suffix_len);
    char *pattern = glob_literal(real);
    int copy = has_glob(real), csv = strcmp(reader, "read_csv") == 0;
    askdb_status rc = ASKDB_ERR_NOMEM;

    buf_init(&b, 0);
    if (!name || !pattern)
        goto out;
    /* DuckDB's glob takes a backslash as a separator and an escape: with
    ** a glob character beside it no pattern names the file alone. */
    if (copy && strchr(real, '\\')) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot read '%s': its path has a backslash and a glob "
                 "character (*, ? or [), which DuckDB cannot read as one "
                 "file; rename it, or copy it to a path without them (a "
                 "symbolic link does not do: askdb reads the path it "
                 "leads to)", path);
        rc = ASKDB_ERR_DB_OPEN;
        goto out;
    }
    /* A copy's types are what the whole file holds: no view is made
    ** again later (csv_check()). */
    buf_puts(&b, copy ? "CREATE TABLE " : "CREATE VIEW ");
    text_put_quoted(&b, name, '"');
    buf_printf(&b, " AS SELECT * FROM %s(", reader);
    text_put_quoted(&b, pattern, '\'');
    buf_puts(&b, copy && csv ? ", sample_size = -1)" : ")");
    if (buf_err(&b))
        goto out;
    rc = exec(d, b.data, err, sizeof err);
    if (rc && copy && strstr(err, "Out of Memory")) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot read '%s': its path has a glob character (*, ? or "
                 "[), so askdb reads it whole into memory when it opens it, "
                 "and it does not fit in the %s DuckDB may use; rename it, "
                 "or copy it to a path without *, ? and [, which is read "
                 "in place", path, DK_MEMORY_LIMIT);
        rc = ASKDB_ERR_DB_OPEN;
        goto out;
    }
    if (rc && csv_not_utf8(err)) {
        csv_not_utf8_say(db->errmsg, sizeof db->errmsg, path, NULL);
        rc = ASKDB_ERR_DB_OPEN;
        goto out;
    }
    if (rc) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot read '%s' as %s: %s", path,
                 strcmp(reader, "read_parquet") == 0 ? "Parquet" : "CSV",
                 err);
        rc = ASKDB_ERR_DB_OPEN;
        goto out;
    }
    /* The view's path (without a glob character, the real path itself)
    ** is allowed, nothing else; a copy needs no path. The order matters:
    ** allowed_paths can be set only while external access is on, and
    ** nothing can be set once the lock is on. */
    buf_reset(&b);
    buf_puts(&b, "SET allowed_paths = [");
    if (!copy)
        text_put_quoted(&b, real, '\'');
    buf_puts(&b, "]");
    rc = ASKDB_ERR_NOMEM;
    if (buf_err(&b))
        goto out;
    rc = exec(d, b.data, err, sizeof err);
    if (!rc)
        rc = exec(d, "SET enable_external_access = false", err, sizeof err);
    if (!rc)
        rc = exec(d, "SET lock_configuration = true", err, sizeof err);
    if (rc) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot set up the guard for '%s': %s", path, err);
        rc = ASKDB_ERR_DB_OPEN;
    }
    if (!rc && csv && !copy) {
        d->csv_view = name;
        d->csv_pattern = pattern;
        name = pattern = NULL;
    }
out:
    free(name);
    free(pattern);
    buf_free(&b);
    return rc;
}

/*
** Open the database of d (d->real: the file itself, or an in-memory one
** with the view of a CSV or Parquet file at path, as given) with the
** whole guard, and connect. On failure db->errmsg says why, and d->db or
** d->con may be left NULL (closed by dk_close(), refused by the
** statements: lost()).
*/
static askdb_status connect_db(askdb_db *db, struct dk *d, const char *path)
{
    duckdb_config cfg;
    const char *reader, *v;
    char *err = NULL;
    size_t suffix_len = 0;

    d->csv_rows = -1;
    reader = file_reader(path, &suffix_len);
    d->files = reader != NULL;
    cfg = make_config(!d->files, &v);
    if (!cfg) {
        if (!v)
            return ASKDB_ERR_NOMEM;
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': DuckDB refused askdb's setting "
                 "%s", path, v);
        return ASKDB_ERR_DB_OPEN;
    }
    if (duckdb_open_ext(d->files ? NULL : d->real, &d->db, cfg, &err) ==
        DuckDBError) {
        char tmp[512];
        put_message(tmp, sizeof tmp, err ? err : "unknown error");
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': %s%s", path, tmp,
                 strstr(tmp, "lock") ? " (another program has it open for "
                                       "writing; close it, or ask a copy)"
                                     : "");
        duckdb_free(err);
        duckdb_destroy_config(&cfg);
        d->db = NULL;
        return ASKDB_ERR_DB_OPEN;
    }
    duckdb_destroy_config(&cfg);
    if (duckdb_connect(d->db, &d->con) == DuckDBError) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': no connection", path);
        d->con = NULL;
        return ASKDB_ERR_DB_OPEN;
    }
    return d->files ? open_files(db, d, path, d->real, reader, suffix_len)
                    : ASKDB_OK;
}

/* Close d's connection and database, where open (both left NULL). */
static void close_db(struct dk *d)
{
    if (d->con)
        duckdb_disconnect(&d->con);
    if (d->db)
        duckdb_close(&d->db);
}

/*
** DuckDB invalidates its database on an INTERNAL or FATAL error (a bug
** of its own: on a CSV file with bytes that are no UTF-8 past its first
** rows, count(col) failed "Attempted to access index 1 within vector of
** size 1"), and then fails every later statement: "database has been
** invalidated ... must be restarted". A shell, askdb serve and
** askdb-exec keep their handle, so one such statement broke every later
** question on the file until the program was started again. After a
** statement whose error e is one of those, the database is opened again
** as dk_open() did; the statement keeps its error. When that fails, the
** handle's statements say why (lost()).
*/
static void reopen_if_invalidated(askdb_db *db, const struct db_err *e)
{
    struct dk *d = DK(db);

    if (strncmp(e->msg, "INTERNAL Error", 14) != 0 &&
        strncmp(e->msg, "FATAL Error", 11) != 0 &&
        !strstr(e->msg, "database has been invalidated"))
        return;
    close_db(d);
    free(d->csv_view);
    free(d->csv_pattern);
    d->csv_view = d->csv_pattern = NULL;
    d->csv_retyped = d->csv_checked = 0;
    if (connect_db(db, d, db->path) != ASKDB_OK) {
        /* db->errmsg is the handle's: the next statement's outcome
        ** replaces it */
        snprintf(d->lost, sizeof d->lost, "%.399s", db->errmsg);
        close_db(d);
    }
}

/* Is the handle without a database (reopen_if_invalidated() failed)?
** Then e says so, class database. */
static int lost(askdb_db *db, struct db_err *e)
{
    if (DK(db)->con)
        return 0;
    e->ec = ASKDB_EC_DATABASE;
    snprintf(e->msg, sizeof e->msg, "DuckDB failed and the file could not "
             "be opened again: %s", DK(db)->lost);
    return 1;
}

static askdb_status dk_open(askdb_db *db, const char *path)
{
    struct stat st;
    struct dk *d;
    const char *v;
    char *real = NULL;
    size_t suffix_len = 0;

    v = duckdb_library_version();
    snprintf(db->version, sizeof db->version, "%s",
             v && v[0] == 'v' ? v + 1 : v ? v : "");
    /* A pattern is how DuckDB's users name a folder of files (a star
    ** and ".parquet"); askdb reads one file, and says how to ask
    ** several. */
    if (stat(path, &st) != 0 && errno == ENOENT && has_glob(path) &&
        file_reader(path, &suffix_len)) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': no such file; askdb reads one "
                 "file, not a pattern of several (make them one .duckdb "
                 "file once, CREATE TABLE t AS SELECT * FROM %s('%s'), "
                 "and ask that)", path, file_reader(path, &suffix_len),
                 path);
        return ASKDB_ERR_DB_OPEN;
    }
    if (stat(path, &st) != 0) {
        const char *hint = db_missing_hint(path);
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': %s (askdb never creates "
                 "databases)%s%s", path, strerror(errno), hint ? "; " : "",
                 hint ? hint : "");
        return ASKDB_ERR_DB_OPEN;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': %s", path,
                 S_ISDIR(st.st_mode) ? "it is a directory (askdb reads one "
                                       "file: a .duckdb database, or one "
                                       ".csv or .parquet file)"
                                     : "not a regular file");
        return ASKDB_ERR_DB_OPEN;
    }
    /* DuckDB would try to read another engine's file through an extension
    ** (refused here) and say only that. */
    if (!file_reader(path, &suffix_len) &&
        (v = db_file_misnamed(path, "duckdb")) != NULL) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': %s", path, v);
        return ASKDB_ERR_DB_OPEN;
    }
    real = realpath(path, NULL);
    if (!real)
        return ASKDB_ERR_NOMEM;
    /* DuckDB allows a database's own path, which a query could then
    ** name as a pattern over the files beside it (open_files()); unlike
    ** a CSV or Parquet file, a database is not copied. */
    if (!file_reader(path, &suffix_len) && has_glob(real)) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': its path has a glob character "
                 "(*, ? or [), which DuckDB would let a query use as a "
                 "pattern to list the files beside it; rename it, or copy "
                 "it to a path without *, ? and [ (a symbolic link does not "
                 "do: DuckDB follows it)", path);
        free(real);
        return ASKDB_ERR_DB_OPEN;
    }
    d = calloc(1, sizeof *d);
    if (!d) {
        free(real);
        return ASKDB_ERR_NOMEM;
    }
    db->impl = d;
    d->real = real;
    db_watch_init(&d->wd, interrupt, d, DK_POLL_MS, 128 * 1024);
    return connect_db(db, d, path);
}

static void dk_close(askdb_db *db)
{
    struct dk *d = DK(db);

    db_watch_end(&d->wd);
    close_db(d);
    free(d->csv_view);
    free(d->csv_pattern);
    free(d->real);
    free(d);
    db->impl = NULL;
}

/* ---------------------------------------------------------------------- */
/* Schema                                                                 */
/* ---------------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/*
** The objects askdb shows: the tables and views of every schema of the
** current database (information_schema and pg_catalog live in the
** system catalog; listed here in case). Those of the default schema
** (main: what unqualified names reach) come first, in creation order,
** and have no namespace (NULL in the last column); then the other
** schemas' by schema, shown qualified.
*/
static const char q_tables[] =
    "SELECT oid::VARCHAR, name, kind, est::VARCHAR, comment, "
    "  CASE WHEN nsp <> current_schema() THEN nsp END FROM ("
    " SELECT table_oid AS oid, table_name AS name, 'table' AS kind, "
    "   estimated_size AS est, comment, schema_name AS nsp "
    " FROM duckdb_tables() WHERE NOT internal AND NOT temporary "
    "   AND database_name = current_database() "
    "   AND schema_name NOT IN ('information_schema', 'pg_catalog') "
    " UNION ALL "
    " SELECT view_oid, view_name, 'view', NULL, comment, schema_name "
    " FROM duckdb_views() WHERE NOT internal AND NOT temporary "
    "   AND database_name = current_database() "
    "   AND schema_name NOT IN ('information_schema', 'pg_catalog')) "
    "ORDER BY nsp <> current_schema(), nsp, oid";

/* The columns of every table and view of the current database; those of
** the objects not shown are skipped by oid. */
static const char q_columns[] =
    "SELECT table_oid::VARCHAR, column_name, data_type, "
    "  (NOT is_nullable)::INTEGER::VARCHAR, column_default, comment "
    "FROM duckdb_columns() WHERE NOT internal "
    "  AND database_name = current_database() "
    "ORDER BY table_oid, column_index";

/* Keys, one row per column of each: the columns of a key or foreign key
** are unnested side by side with their position. A foreign key's table
** is in the schema of the table that has it (DuckDB has none across
** schemas). */
static const char q_keys[] =
    "SELECT table_oid::VARCHAR, constraint_index::VARCHAR, "
    "  constraint_type, unnest(constraint_column_names), "
    "  referenced_table, unnest(referenced_column_names), "
    "  generate_subscripts(constraint_column_names, 1)::VARCHAR AS pos "
    "FROM duckdb_constraints() "
    "WHERE database_name = current_database() "
    "  AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY') "
    "ORDER BY table_oid, constraint_index, pos::INTEGER";

/*
** The words a table or column name may not be written bare as:
** DuckDB's reserved keywords (FROM semi, SELECT show ...: a syntax
** error) and its type_function ones, which PostgreSQL's grammar, DuckDB's
** root, takes as function or type names only (anti, asof, at, left).
** Tried on DuckDB 1.5 for each word: every reserved and type_function
** word fails as a bare table or column name but columns, generated, map,
** struct and try_cast, quoted anyway, as their category allows no more;
** the column_name words (values, time) serve as names.
*/
static const char q_reserved[] =
    "SELECT keyword_name FROM duckdb_keywords() "
    "WHERE keyword_category IN ('reserved', 'type_function')";

static askdb_status read_reserved(struct dk *d, struct db_schema *out,
                                  char *err, size_t n)
{
    struct grid g;
    askdb_status rc = grid_query(d, q_reserved, &g, err, n);
    long r;

    for (r = 0; rc == ASKDB_OK && r < g.nrows; r++)
        if (grid_at(&g, r, 0) && schema_add_reserved(out, grid_at(&g, r, 0)))
            rc = ASKDB_ERR_NOMEM;
    grid_free(&g);
    return rc;
}

/* A table's oid and its index in the schema, for the lookups by oid. */
struct oid_ix {
    long long oid;
    int i;
};

static int oid_cmp(const void *a, const void *b)
{
    const struct oid_ix *x = a, *y = b;

    return x->oid < y->oid ? -1 : x->oid > y->oid;
}

/* The index of the table with oid in s; oids (n of them) sorted by oid. */
static int table_by_oid(const struct oid_ix *oids, int n, long long oid)
{
    struct oid_ix key, *hit;

    key.oid = oid;
    key.i = -1;
    hit = bsearch(&key, oids, (size_t)n, sizeof *oids, oid_cmp);
    return hit ? hit->i : -1;
}

static long long to_ll(const char *s)
{
    return s ? strtoll(s, NULL, 10) : -1;
}

static askdb_status read_columns(struct dk *d, struct db_schema *out,
                                 const struct oid_ix *oids, char *err,
                                 size_t n)
{
    struct grid g;
    askdb_status rc = grid_query(d, q_columns, &g, err, n);
    long r;

    for (r = 0; rc == ASKDB_OK && r < g.nrows; r++) {
        int ti = table_by_oid(oids, out->ntables,
                              to_ll(grid_at(&g, r, 0)));
        struct db_table *t;
        struct db_column *c;
        if (ti < 0)
            continue;
        t = &out->tables[ti];
        c = schema_push(&t->cols, &t->ncols, sizeof *c);
        if (!c)
            break;
        c->name = dup_or_null(grid_at(&g, r, 1));
        c->type = strdup(grid_at(&g, r, 2) ? grid_at(&g, r, 2) : "");
        c->notnull = grid_at(&g, r, 3) && strcmp(grid_at(&g, r, 3), "1") == 0;
        c->dflt = dup_or_null(grid_at(&g, r, 4));
        c->comment = grid_at(&g, r, 5) && *grid_at(&g, r, 5)
                         ? strdup(grid_at(&g, r, 5)) : NULL;
        if (!c->name || !c->type)
            break;
    }
    if (rc == ASKDB_OK && r < g.nrows)
        rc = ASKDB_ERR_NOMEM;
    grid_free(&g);
    return rc;
}

/* The name askdb calls table `name` of t's schema by (schema_qname()):
** qualified with t's namespace when it has one. malloc()ed; NULL when
** name is NULL or out of memory. */
static char *in_namespace(const struct db_table *t, const char *name)
{
    struct buf b;

    if (!name)
        return NULL;
    if (!t->namespace)
        return strdup(name);
    buf_init(&b, 0);
    buf_printf(&b, "%s.%s", t->namespace, name);
    return buf_steal(&b);
}

/* Add the key rows [from, to) of g, one constraint, to t of s. */
static askdb_status add_key(const struct db_schema *s, struct db_table *t,
                            const struct grid *g, long from, long to)
{
    const char *type = grid_at(g, from, 2);
    struct buf b;
    long r;
    int k;

    if (strcmp(type, "PRIMARY KEY") == 0) {
        for (r = from, k = 1; r < to; r++, k++) {
            int j;
            for (j = 0; j < t->ncols; j++)
                if (grid_at(g, r, 3) && strcmp(t->cols[j].name,
                                               grid_at(g, r, 3)) == 0)
                    t->cols[j].pk = k;
        }
        return ASKDB_OK;
    }
    if (strcmp(type, "FOREIGN KEY") == 0) {
        for (r = from; r < to; r++) {
            struct db_fkey *f = schema_push(&t->fks, &t->nfks, sizeof *f);
            if (!f)
                return ASKDB_ERR_NOMEM;
            f->from = dup_or_null(grid_at(g, r, 3));
            f->table = in_namespace(t, grid_at(g, r, 4));
            f->to = dup_or_null(grid_at(g, r, 5));
            if (!f->from || !f->table)
                return ASKDB_ERR_NOMEM;
        }
        return ASKDB_OK;
    }
    buf_init(&b, 0);
    for (r = from; r < to; r++) {
        if (r > from)
            buf_puts(&b, ", ");
        schema_put_name(&b, s, grid_at(g, r, 3) ? grid_at(g, r, 3) : "");
    }
    {
        char **u = schema_push(&t->uniques, &t->nuniques, sizeof *u);
        if (!u) {
            buf_free(&b);
            return ASKDB_ERR_NOMEM;
        }
        *u = buf_steal(&b);
        return *u ? ASKDB_OK : ASKDB_ERR_NOMEM;
    }
}

static askdb_status read_keys(struct dk *d, struct db_schema *out,
                              const struct oid_ix *oids, char *err, size_t n)
{
    struct grid g;
    askdb_status rc = grid_query(d, q_keys, &g, err, n);
    long r = 0, e;

    while (rc == ASKDB_OK && r < g.nrows) {
        int ti = table_by_oid(oids, out->ntables,
                              to_ll(grid_at(&g, r, 0)));
        for (e = r + 1; e < g.nrows; e++)
            if (strcmp(grid_at(&g, e, 0), grid_at(&g, r, 0)) != 0 ||
                strcmp(grid_at(&g, e, 1), grid_at(&g, r, 1)) != 0)
                break;
        if (ti >= 0 && !out->tables[ti].is_view && grid_at(&g, r, 2))
            rc = add_key(out, &out->tables[ti], &g, r, e);
        r = e;
    }
    grid_free(&g);
    return rc;
}

/* Samples from the first rows only, as sqlite.c takes them. */
#define SAMPLE_ROWS 200

static int is_text_type(const char *type)
{
    return strcmp(type, "VARCHAR") == 0;
}

/*
** Tables per sampling statement (sample_batch()). DuckDB plans a long
** UNION ALL in time that grows faster than its length: on 2,000 small
** tables (scripts/duckdb_schema_bench.sh) batches of 16 to 25 were the
** quickest, 64 took 15% longer, 500 twice as long as one table a
** statement.
*/
#define SAMPLE_BATCH 20

/*
** The first SAMPLE_ROWS + 1 rows of n tables in one statement, a UNION
** ALL of one branch per table: its number in the batch and its text
** columns, padded with NULLs to the widest:
**   (SELECT '0', "a", "b" FROM "t" LIMIT 201) UNION ALL
**   (SELECT '1', "c", NULL::VARCHAR FROM "u" LIMIT 201) ...
** Fewer statements is what batching saves: most of what is left is
** DuckDB loading each table's storage on its first read. Each branch's
** rows come in the order one table's statement gives them, so the
** samples are those it would give. The rows of a batch are held whole,
** as one table's were (a long value is dropped only here: filtering it
** in the statement costs more than it saves); DuckDB's memory_limit
** bounds them, and a batch over it fails. seen[k] gets the rows of
** tabs[k] (SAMPLE_ROWS + 1 meaning "more"). 0, -1 out of memory, 1
** when the statement failed (the time limit, memory, a view over a
** missing file): the caller then reads the tables one by one.
*/
static int sample_batch(struct dk *d, struct db_table **tabs, int n,
                        int per_col, long *seen)
{
    struct buf b;
    struct grid g;
    char err[256];
    int i, j, k, w = 0, rc = 0;
    long r;

    for (k = 0; k < n; k++) {
        int m = 0;
        for (i = 0; per_col > 0 && i < tabs[k]->ncols; i++)
            m += is_text_type(tabs[k]->cols[i].type);
        if (m > w)
            w = m;
    }
    buf_init(&b, 0);
    for (k = 0; k < n; k++) {
        const struct db_table *t = tabs[k];
        seen[k] = 0;
        buf_printf(&b, "%s(SELECT '%d'", k ? " UNION ALL " : "", k);
        j = 0;
        for (i = 0; per_col > 0 && i < t->ncols; i++) {
            if (!is_text_type(t->cols[i].type))
                continue;
            buf_puts(&b, ", ");
            text_put_quoted(&b, t->cols[i].name, '"');
            j++;
        }
        for (; j < w; j++)
            buf_puts(&b, ", NULL::VARCHAR");
        buf_puts(&b, " FROM ");
        schema_put_quoted_table(&b, t);
        buf_printf(&b, " LIMIT %d)", SAMPLE_ROWS + 1);
    }
    if (buf_err(&b)) {
        buf_free(&b);
        return -1;
    }
    if (grid_query(d, b.data, &g, err, sizeof err)) {
        buf_free(&b);
        return 1;
    }
    buf_free(&b);
    for (r = 0; r < g.nrows && rc == 0; r++) {
        long kk = grid_at(&g, r, 0) ? strtol(grid_at(&g, r, 0), NULL, 10)
                                    : -1;
        struct db_table *t;
        if (kk < 0 || kk >= n || ++seen[kk] > SAMPLE_ROWS)
            continue;
        t = tabs[kk];
        for (i = 0, j = 1; per_col > 0 && i < t->ncols && rc == 0; i++)
            if (is_text_type(t->cols[i].type))
                rc = schema_add_sample(&t->cols[i], grid_at(&g, r, j++),
                                       per_col);
    }
    grid_free(&g);
    return rc;
}

/*
** A CSV file's column types, as DuckDB guesses them from its first 20,480
** rows: a later value of another kind ("n/a" in a column of numbers)
** then fails every statement that reads the column ("Conversion Error:
** CSV Error on Line: ..."), with advice to pass read_csv() options a user
** of askdb cannot pass. Is m such an error?
*/
static int csv_type_error(const char *m)
{
    return m && strstr(m, "CSV Error on Line") &&
           (strstr(m, "Error when converting column") ||
            strstr(m, "Could not convert"));
}

/*
** The CSV file's view made again with the types (and date formats)
** DuckDB finds reading the whole file once (sniff_csv(), sample_size -1),
** so that no value of the file fails them. Each statement on the view
** still finds the dialect from the first rows, as before, but takes
** these types. Run once (csv_retyped), under the caller's time limit.
*/
static askdb_status csv_retype(struct dk *d, char *err, size_t n)
{
    struct buf b;
    struct grid g;
    askdb_status rc;
    const char *df, *tf;
    long r;
    int first = 1;

    d->csv_retyped = 1;
    buf_init(&b, 0);
    buf_puts(&b, "SELECT c.name::VARCHAR, c.type::VARCHAR, "
                 "DateFormat::VARCHAR, "
                 "TimestampFormat::VARCHAR FROM (SELECT unnest(Columns) AS c, "
                 "DateFormat, TimestampFormat FROM sniff_csv(");
    text_put_quoted(&b, d->csv_pattern, '\'');
    buf_puts(&b, ", sample_size = -1))");
    rc = buf_err(&b) ? ASKDB_ERR_NOMEM : grid_query(d, b.data, &g, err, n);
    if (rc) {
        buf_free(&b);
        return rc;
    }
    buf_reset(&b);
    buf_puts(&b, "CREATE OR REPLACE VIEW ");
    text_put_quoted(&b, d->csv_view, '"');
    buf_puts(&b, " AS SELECT * FROM read_csv(");
    text_put_quoted(&b, d->csv_pattern, '\'');
    buf_puts(&b, ", types = {");
    for (r = 0; r < g.nrows; r++) {
        if (!grid_at(&g, r, 0) || !grid_at(&g, r, 1))
            continue;
        buf_puts(&b, first ? "" : ", ");
        first = 0;
        text_put_quoted(&b, grid_at(&g, r, 0), '\'');
        buf_puts(&b, ": ");
        text_put_quoted(&b, grid_at(&g, r, 1), '\'');
    }
    buf_puts(&b, "}");
    df = g.nrows > 0 ? grid_at(&g, 0, 2) : NULL;
    tf = g.nrows > 0 ? grid_at(&g, 0, 3) : NULL;
    if (df && *df) {
        buf_puts(&b, ", dateformat = ");
        text_put_quoted(&b, df, '\'');
    }
    if (tf && *tf) {
        buf_puts(&b, ", timestampformat = ");
        text_put_quoted(&b, tf, '\'');
    }
    buf_puts(&b, ")");
    rc = buf_err(&b) ? ASKDB_ERR_NOMEM : exec(d, b.data, err, n);
    grid_free(&g);
    buf_free(&b);
    return rc;
}

/*
** csv_retype() under db's time limit and cancel: ASKDB_OK,
** ASKDB_ERR_CANCELLED, ASKDB_ERR_TIMEOUT, or another status when DuckDB
** failed it (the message in err).
*/
static askdb_status csv_retype_guarded(askdb_db *db, struct dk *d, char *err,
                                       size_t n)
{
    askdb_status rc;
    int tmo, cnl;

    watchdog_arm(d, db->query_timeout_ms, db->cancel);
    rc = csv_retype(d, err, n);
    watchdog_disarm(d, &tmo, &cnl);
    return cnl ? ASKDB_ERR_CANCELLED : tmo ? ASKDB_ERR_TIMEOUT : rc;
}

/*
** A CSV file's first count_cap + 1 rows read with every column converted
** (a count of each), once a handle, before its schema is read or its
** first statement checked or run (the statements run in askdb-exec, whose
** handle is another: both take the same types): a value its guessed type
** cannot hold makes the view be made again (csv_retype()), so the schema
** shows the types every statement reads. The count is kept for the
** schema (csv_rows). ASKDB_OK (also when the file still fails: the
** statements then say why) or ASKDB_ERR_CANCELLED.
*/
static askdb_status csv_check(askdb_db *db, struct dk *d)
{
    struct buf b;
    struct grid g;
    char err[512];
    int tmo, cnl = 0, pass;

    if (!d->csv_view || d->csv_checked)
        return ASKDB_OK;
    d->csv_checked = 1;
    buf_init(&b, 0);
    buf_puts(&b, "SELECT count(*)::VARCHAR, count(COLUMNS(*))::VARCHAR "
                 "FROM (SELECT * FROM ");
    text_put_quoted(&b, d->csv_view, '"');
    buf_printf(&b, " LIMIT %ld)", db->count_cap + 1);
    if (buf_err(&b)) {
        buf_free(&b);
        return ASKDB_OK;
    }
    for (pass = 0; pass < 2 && !cnl; pass++) {
        askdb_status rc;
        watchdog_arm(d, db->query_timeout_ms, db->cancel);
        rc = grid_query(d, b.data, &g, err, sizeof err);
        watchdog_disarm(d, &tmo, &cnl);
        if (rc == ASKDB_OK) {
            long long k = g.nrows == 1 ? to_ll(grid_at(&g, 0, 0)) : -1;
            d->csv_rows = k < 0 ? -1 : (long)k;
            grid_free(&g);
            break;
        }
        if (cnl || pass > 0 || d->csv_retyped || !csv_type_error(err))
            break;
        rc = csv_retype_guarded(db, d, err, sizeof err);
        cnl = rc == ASKDB_ERR_CANCELLED;
        if (rc)
            break;
    }
    buf_free(&b);
    return cnl ? ASKDB_ERR_CANCELLED : ASKDB_OK;
}

/* Rows of a file's view, counted up to cap + 1 (a CSV is read to count
** it; Parquet answers from its metadata). */
static void read_count(struct dk *d, struct db_table *t, long cap)
{
    struct buf b;
    struct grid g;
    char err[256];

    buf_init(&b, 0);
    buf_puts(&b, "SELECT count(*)::VARCHAR FROM (SELECT 1 FROM ");
    schema_put_quoted_table(&b, t);
    buf_printf(&b, " LIMIT %ld)", cap + 1);
    if (!buf_err(&b) && grid_query(d, b.data, &g, err, sizeof err) == 0) {
        long long n = g.nrows == 1 ? to_ll(grid_at(&g, 0, 0)) : -1;
        if (n >= 0) {
            t->rows = (long)(n > cap ? cap : n);
            t->rows_capped = n > cap;
        }
        grid_free(&g);
    }
    buf_free(&b);
}

/*
** Time the schema read spends on samples (ms). DuckDB loads a table's
** storage on its first read, a few column blocks a table: on 2,000 small
** tables that took 2 s where SQLite reads its whole schema in 0.1-0.2 s
** (scripts/duckdb_schema_bench.sh). So the read samples tables until this
** is spent and leaves the rest pending (db_table.samples_pending):
** db_fill_samples() reads them when a prompt or a listing shows them.
** ASKDB_DUCKDB_SAMPLE_MS sets another budget (0: the first batch only).
*/
#define SAMPLE_BUDGET_MS 100

static double sample_budget(void)
{
    const char *v = getenv("ASKDB_DUCKDB_SAMPLE_MS");
    char *end;
    double ms;

    if (!v || !*v)
        return SAMPLE_BUDGET_MS;
    ms = strtod(v, &end);
    return *end || ms < 0 ? SAMPLE_BUDGET_MS : ms;
}

/*
** Samples and row counts of tabs[0..n) (tables, never a view: that would
** run it), SAMPLE_BATCH tables a statement, each statement under the time
** limit; with budget_ms >= 0, no new statement once that much time has
** gone, the tables left marked pending. A batch that fails is read again
** one table at a time, and a table that fails alone keeps no samples:
** not worth failing the schema for. A table whose first rows are all it
** has is counted exactly; a larger one keeps its estimate, and a file's
** view (no estimate) is counted up to count_cap. ASKDB_OK,
** ASKDB_ERR_NOMEM, or ASKDB_ERR_CANCELLED when the handle was cancelled.
*/
static askdb_status sample_tables(askdb_db *db, struct dk *d,
                                  struct db_table **tabs, int n,
                                  double budget_ms)
{
    double t0 = db_now_ms();
    long *seen;
    int i, j, done, rc = 0, tmo, cnl = 0;

    seen = calloc((size_t)n + 1, sizeof *seen);
    if (!seen)
        return ASKDB_ERR_NOMEM;
    for (i = 0; i < n && rc >= 0; i += SAMPLE_BATCH) {
        int m = n - i < SAMPLE_BATCH ? n - i : SAMPLE_BATCH;
        if (budget_ms >= 0 && i > 0 && db_now_ms() - t0 > budget_ms)
            break;
        watchdog_arm(d, db->query_timeout_ms, db->cancel);
        rc = sample_batch(d, tabs + i, m, db->sample_values, seen + i);
        watchdog_disarm(d, &tmo, &cnl);
        for (j = i; rc > 0 && j < i + m && !cnl; j++) {
            int one;
            watchdog_arm(d, db->query_timeout_ms, db->cancel);
            one = sample_batch(d, tabs + j, 1, db->sample_values, seen + j);
            watchdog_disarm(d, &tmo, &cnl);
            if (one < 0)
                rc = -1;
            else if (one > 0)
                seen[j] = SAMPLE_ROWS + 1; /* unknown: keep the estimate */
        }
        /* A batch the cancel cut stays pending: the loop's step moved
        ** past it, and its tables were marked read, with no samples,
        ** for the handle's life. */
        if (cnl)
            break;
        if (rc > 0)
            rc = 0;
    }
    done = i < n ? i : n;
    for (i = 0; i < n; i++)
        tabs[i]->samples_pending = i >= done;
    for (i = 0; i < done && rc == 0 && !cnl; i++) {
        struct db_table *t = tabs[i];
        if (seen[i] <= SAMPLE_ROWS) {
            t->rows = seen[i]; /* the whole table was read */
            t->rows_estimated = 0;
        } else if (d->files && d->csv_rows >= 0) {
            t->rows = d->csv_rows > db->count_cap ? db->count_cap
                                                  : d->csv_rows;
            t->rows_capped = d->csv_rows > db->count_cap;
        } else if (d->files) {
            watchdog_arm(d, db->query_timeout_ms, db->cancel);
            read_count(d, t, db->count_cap);
            watchdog_disarm(d, &tmo, &cnl);
        }
    }
    free(seen);
    if (cnl)
        return ASKDB_ERR_CANCELLED;
    return rc < 0 ? ASKDB_ERR_NOMEM : ASKDB_OK;
}

/* The tables (not views) of a schema, for sample_tables(); NULL when out
** of memory. */
static struct db_table **tables_of(struct db_schema *s, int *n)
{
    struct db_table **tabs = calloc((size_t)s->ntables + 1, sizeof *tabs);
    int i;

    *n = 0;
    for (i = 0; tabs && i < s->ntables; i++)
        if (!s->tables[i].is_view)
            tabs[(*n)++] = &s->tables[i];
    return tabs;
}

/* driver.samples: the pending samples of tabs[0..n), all of them. */
static askdb_status dk_samples(askdb_db *db, struct db_table **tabs, int n)
{
    return sample_tables(db, DK(db), tabs, n, -1);
}

/*
** A .duckdb file's views over files (CREATE VIEW v AS SELECT * FROM
** read_parquet('data/x.parquet'), as DuckDB users keep a folder of
** files) read paths the guard does not allow: every query of one is
** refused ("Permission Error: Cannot access file"), though the schema
** showed it as any other view, so the model chose it and the question
** was lost to refusals. Each view is bound (prepared, never run: a
** reader's path is checked there), and one the guard refuses says so
** in its comment, which askdb schema and the prompt show. Binding folds
** constants, so each runs under the time limit and the cancel flag (a
** view that times out is left as it is).
** ASKDB_OK, ASKDB_ERR_NOMEM or ASKDB_ERR_CANCELLED.
*/
static askdb_status mark_views_over_files(askdb_db *db, struct dk *d,
                                          struct db_schema *s)
{
    static const char note[] = "reads files outside this database, which "
                               "askdb does not read: every query of it is "
                               "refused";
    struct buf b;
    int i, tmo, cnl = 0, bad;

    for (i = 0; i < s->ntables && !cnl; i++) {
        struct db_table *t = &s->tables[i];
        duckdb_prepared_statement ps = NULL;
        const char *m;
        char *c;
        if (!t->is_view)
            continue;
        buf_init(&b, 0);
        buf_puts(&b, "SELECT * FROM ");
        schema_put_quoted_table(&b, t);
        if (buf_err(&b)) {
            buf_free(&b);
            return ASKDB_ERR_NOMEM;
        }
        watchdog_arm(d, db->query_timeout_ms, db->cancel);
        bad = duckdb_prepare(d->con, b.data, &ps) == DuckDBError &&
              (m = duckdb_prepare_error(ps)) != NULL &&
              classify(DUCKDB_ERROR_INVALID, m) == ASKDB_EC_REFUSED;
        watchdog_disarm(d, &tmo, &cnl);
        if (bad) {
            buf_reset(&b);
            if (t->comment) {
                buf_puts(&b, t->comment);
                buf_puts(&b, "; ");
            }
            buf_puts(&b, note);
            c = buf_err(&b) ? NULL : strdup(b.data);
            if (!c) {
                duckdb_destroy_prepare(&ps);
                buf_free(&b);
                return ASKDB_ERR_NOMEM;
            }
            free(t->comment);
            t->comment = c;
        }
        duckdb_destroy_prepare(&ps);
        buf_free(&b);
    }
    return cnl ? ASKDB_ERR_CANCELLED : ASKDB_OK;
}

static askdb_status dk_schema(askdb_db *db, struct db_schema *out)
{
    struct dk *d = DK(db);
    struct grid g;
    struct oid_ix *oids = NULL;
    char err[512] = "";
    askdb_status rc;
    long r;

    memset(out, 0, sizeof *out);
    memset(&g, 0, sizeof g);
    out->says_quoted = 1;
    rc = csv_check(db, d);
    if (rc == ASKDB_OK)
        rc = read_reserved(d, out, err, sizeof err);
    if (rc == ASKDB_OK)
        rc = grid_query(d, q_tables, &g, err, sizeof err);
    if (rc == ASKDB_OK && g.nrows > 0) {
        oids = calloc((size_t)g.nrows, sizeof *oids);
        out->tables = calloc((size_t)g.nrows, sizeof *out->tables);
        if (!oids || !out->tables)
            rc = ASKDB_ERR_NOMEM;
    }
    for (r = 0; rc == ASKDB_OK && r < g.nrows; r++) {
        struct db_table *t = &out->tables[out->ntables++];
        const char *est = grid_at(&g, r, 3), *cm = grid_at(&g, r, 4);
        const char *nsp = grid_at(&g, r, 5);
        oids[r].oid = to_ll(grid_at(&g, r, 0));
        oids[r].i = (int)r;
        t->name = dup_or_null(grid_at(&g, r, 1));
        /* A file's view stands for the file's table. */
        t->is_view = strcmp(grid_at(&g, r, 2), "view") == 0 && !d->files;
        t->rows = -1;
        if (est && !d->files) {
            t->rows = (long)to_ll(est);
            t->rows_estimated = 1;
        }
        t->comment = cm && *cm ? strdup(cm) : NULL;
        if (!t->name || (cm && *cm && !t->comment) ||
            (nsp && schema_set_namespace(t, nsp) < 0))
            rc = ASKDB_ERR_NOMEM;
    }
    if (rc == ASKDB_OK)
        grid_free(&g);
    if (rc == ASKDB_OK && out->ntables > 1)
        qsort(oids, (size_t)out->ntables, sizeof *oids, oid_cmp);
    if (rc == ASKDB_OK)
        rc = read_columns(d, out, oids, err, sizeof err);
    if (rc == ASKDB_OK)
        rc = read_keys(d, out, oids, err, sizeof err);
    if (rc == ASKDB_OK)
        rc = mark_views_over_files(db, d, out);
    if (rc == ASKDB_OK) {
        int n;
        struct db_table **tabs = tables_of(out, &n);
        rc = tabs ? sample_tables(db, d, tabs, n, sample_budget())
                  : ASKDB_ERR_NOMEM;
        free(tabs);
    }
    if (rc == ASKDB_ERR_CANCELLED)
        snprintf(err, sizeof err, "cancelled");
    free(oids);
    if (rc == ASKDB_ERR_NOMEM)
        snprintf(err, sizeof err, "out of memory");
    if (rc) {
        grid_free(&g);
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot read the schema of '%s': %s", db->label, err);
        return rc == ASKDB_ERR_DB ? ASKDB_ERR_DB : rc;
    }
    return ASKDB_OK;
}

/* ---------------------------------------------------------------------- */
/* The guard                                                              */
/* ---------------------------------------------------------------------- */

/* If sql starts with the word w (case-insensitive) followed by a blank,
** the text after it; else NULL. */
static const char *after_word(const char *sql, const char *w)
{
    size_t n = strlen(w);
    const char *p = db_skip_filler(sql, 0);

    if (strncasecmp(p, w, n) != 0)
        return NULL;
    p += n;
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
        return NULL;
    return db_skip_filler(p, 0);
}

/*
** askdb_db_explain() asks for a plan as SQLite writes it, "EXPLAIN QUERY
** PLAN <statement>", after the statement itself passed check(). The
** statement after those words, or NULL when sql is not such a request.
*/
static const char *plan_request(const char *sql)
{
    const char *p = after_word(sql, "EXPLAIN");

    if (p)
        p = after_word(p, "QUERY");
    if (p)
        p = after_word(p, "PLAN");
    return p;
}

/*
** The kind of statement DuckDB prepared, as its user would name it, or
** NULL. DuckDB's C API has no name for a duckdb_statement_type; these
** follow duckdb.h's enum (1.5), each the statements that prepare as it
** (RESET and USE are SET too, CHECKPOINT a CALL, TRUNCATE a DELETE).
*/
static const char *kind_name(duckdb_statement_type t)
{
    static const char *const names[] = {
        NULL, "SELECT", "INSERT", "UPDATE", "EXPLAIN", "DELETE", "PREPARE",
        "CREATE", "EXECUTE", "ALTER", "BEGIN, COMMIT or ROLLBACK", "COPY",
        "ANALYZE", "SET VARIABLE", "CREATE FUNCTION", "DROP", "EXPORT",
        "PRAGMA", "VACUUM", "CALL", "SET", "LOAD or INSTALL", "RELATION",
        "EXTENSION", "LOGICAL PLAN", "ATTACH", "DETACH", "MULTI",
        "COPY FROM DATABASE", "UPDATE EXTENSIONS", "MERGE INTO"};

    if ((unsigned)t >= sizeof names / sizeof names[0])
        return NULL;
    return names[t];
}

/* The refusal of a statement that is not a query, naming its kind; a
** plain EXPLAIN is told where askdb gives a plan without running the
** statement (plan_request()). */
static void refuse_kind(duckdb_statement_type t, struct db_err *e)
{
    const char *name = kind_name(t);

    e->ec = ASKDB_EC_REFUSED;
    if (!name)
        snprintf(e->msg, sizeof e->msg,
                 "refused: the statement is not a query (DuckDB's statement "
                 "kind %d); askdb runs only read-only SELECT statements",
                 (int)t);
    else
        snprintf(e->msg, sizeof e->msg,
                 "refused: DuckDB reads the statement as %s, not a query; "
                 "askdb runs only read-only SELECT statements%s", name,
                 t == DUCKDB_STATEMENT_TYPE_EXPLAIN
                     ? " (a query's plan, without running it: the "
                       "explain_sql tool of askdb mcp and of askdb serve's "
                       "/mcp, or askdb_db_explain())"
                     : "");
}

/*
** Table functions a SELECT may call that change the connection for the
** statements after it, which lock_configuration does not stop (it locks
** SET, RESET and PRAGMA): enable_profiling() made DuckDB print every
** later statement's profile, its text and constants as written, to
** askdb's stderr (a terminal: escape sequences and all), and with a
** save_location every later statement failed with an INTERNAL Error;
** enable_logging() keeps a log of the statements; enable_peg_parser()
** swaps the parser. And those that run a statement given as text, which
** this list cannot read (query('SELECT * FROM enable_' || 'profiling()')
** did). And those that read files by a path: DuckDB checks the path a
** statement names against allowed_paths with its ".." folded, not the
** files a pattern matches, so a glob() of /data/X/../orders.csv with X
** a '*' passed as the asked file and listed every folder of /data (a
** pattern built by an expression too); the file's table (or view) is
** what to query, and a path written as a table name, which no
** expression builds, is refuse_folder_walk()'s. A name ending in '*' is a prefix. askdb's own
** statements wrap the checked one in query() and are prepared without
** this check.
*/
static const struct db_denied_fn denied_fns[] = {
#define STATE "changes the session for the statements after it"
#define TEXT "runs a statement given as text, which askdb's guard cannot read"
#define FILES "reads files by their path, where a pattern's '*' and '..' " \
              "list the folders around the file: query the file's table " \
              "by its name"
    {"enable_*", STATE},
    {"disable_*", STATE},
    {"truncate_duckdb_logs", STATE},
    {"query", TEXT},
    {"json_execute_serialized_sql", TEXT},
    {"glob", FILES},
    {"read_*", FILES},
    {"parquet_*", FILES},
    {"sniff_csv", FILES},
    {"query_table", FILES},
#undef STATE
#undef TEXT
#undef FILES
};

/*
** Refuse a statement that calls a function of denied_fns, before DuckDB
** parses it (a check or a plan request never reaches DuckDB):
** db_denied_call(), the name with its '(' wherever it stands, strings and
** comments too. The name alone is no call: a column named query reads as
** any other. 0, or -1 with e set.
*/
static int refuse_denied(const char *sql, struct db_err *e)
{
    return db_refuse_denied(sql, denied_fns,
                            sizeof denied_fns / sizeof denied_fns[0], e);
}

/*
** A path written as a table name (DuckDB's replacement scan reads a file
** named by a string, quoted in any of its ways, '...', "...", $$...$$)
** that holds a glob character and "..": FROM '/data/X/../orders.csv'
** with X a '*' passed allowed_paths as the asked file (the ".." folded)
** and listed the folders of /data, as glob() did (denied_fns). The text
** is looked at whole, quotes and comments too, as no quoting then hides
** one: a glob character ('*', '?', '[') anywhere with a ".." after a
** path separator anywhere refuses it; no real question writes "/..".
** 0, or -1 with e set.
*/
static int refuse_folder_walk(const char *sql, struct db_err *e)
{
    if (!has_glob(sql) || (!strstr(sql, "/..") && !strstr(sql, "\\..")))
        return 0;
    e->ec = ASKDB_EC_REFUSED;
    snprintf(e->msg, sizeof e->msg,
             "refused: the statement names a path with a wildcard and "
             "'..', which would list the folders around the file; query "
             "the file's table by its name");
    return -1;
}

/* Does sql hold the word PIVOT, in any case? */
static int has_pivot(const char *sql)
{
    for (; *sql; sql++)
        if (strncasecmp(sql, "pivot", 5) == 0)
            return 1;
    return 0;
}

/*
** Prepare sql and apply every check that needs no execution: one
** statement, of type SELECT (or the EXPLAIN of one, for a plan request).
** On success *out is the prepared statement, which the caller destroys.
*/
static askdb_status prepare_guarded(askdb_db *db, const char *sql,
                                    duckdb_prepared_statement *out,
                                    struct db_err *e)
{
    struct dk *d = DK(db);
    duckdb_extracted_statements ex = NULL;
    duckdb_prepared_statement ps = NULL;
    duckdb_statement_type want = DUCKDB_STATEMENT_TYPE_SELECT;
    const char *inner = plan_request(sql);
    struct buf b;
    askdb_status rc;
    idx_t n;

    *out = NULL;
    if (refuse_denied(sql, e) || refuse_folder_walk(sql, e))
        return ASKDB_ERR_REFUSED;
    buf_init(&b, 0);
    if (inner) {
        /* The statement must pass on its own first; then DuckDB's EXPLAIN
        ** (the plan, never EXPLAIN ANALYZE: that runs it) is prepared. */
        rc = prepare_guarded(db, inner, &ps, e);
        duckdb_destroy_prepare(&ps);
        if (rc)
            return rc;
        buf_puts(&b, "EXPLAIN ");
        buf_puts(&b, inner);
        if (buf_err(&b))
            return ASKDB_ERR_NOMEM;
        sql = b.data;
        want = DUCKDB_STATEMENT_TYPE_EXPLAIN;
    }
    if (!*db_skip_filler(sql, 0)) {
        rc = db_no_sql(e);
        goto out;
    }
    n = duckdb_extract_statements(d->con, sql, &ex);
    if (n == 0) {
        const char *m = duckdb_extract_statements_error(ex);
        if (!m || !*m) {
            rc = db_no_sql(e);
        } else {
            set_error(e, DUCKDB_ERROR_PARSER, m);
            rc = status_of(e->ec);
        }
        goto out;
    }
    /* A PIVOT whose ON column has no IN list is several statements to
    ** DuckDB, which creates a type of the column's values first, in a
    ** text without a ';' (as COPY FROM DATABASE is, which stays "more
    ** than one statement"). The model can name the values. */
    if (n > 1 && !strchr(sql, ';') && has_pivot(sql)) {
        e->ec = ASKDB_EC_REFUSED;
        snprintf(e->msg, sizeof e->msg,
                 "refused: DuckDB runs a PIVOT whose ON column has no IN "
                 "list as two statements (it creates a type of the "
                 "column's values first), and askdb runs one; name the "
                 "values: PIVOT t ON col IN ('a', 'b') USING sum(x)");
        rc = ASKDB_ERR_REFUSED;
        goto out;
    }
    if (n > 1) {
        rc = db_many_statements(e);
        goto out;
    }
    if (duckdb_prepare_extracted_statement(d->con, ex, 0, &ps) ==
        DuckDBError) {
        set_error(e, DUCKDB_ERROR_INVALID, duckdb_prepare_error(ps));
        rc = status_of(e->ec);
        goto out;
    }
    if (duckdb_prepared_statement_type(ps) != want) {
        refuse_kind(duckdb_prepared_statement_type(ps), e);
        rc = ASKDB_ERR_REFUSED;
        goto out;
    }
    /* No value to bind: a syntax error the model repairs, in the words
    ** of the other engines' (sqlite.c, postgres.c, mariadb.c). */
    if (duckdb_nparams(ps) > 0) {
        e->ec = ASKDB_EC_SYNTAX;
        snprintf(e->msg, sizeof e->msg,
                 "the query has a placeholder ($1, ?, $name); write the "
                 "values into the SQL");
        rc = ASKDB_ERR_DB;
        goto out;
    }
    *out = ps;
    ps = NULL;
    rc = ASKDB_OK;
out:
    duckdb_destroy_prepare(&ps);
    duckdb_destroy_extracted(&ex);
    buf_free(&b);
    return rc;
}

/*
** A CSV or Parquet file deleted or moved since it was opened reads as a
** directory DuckDB may not glob ("Cannot access file .../orders.csv/...":
** refused): a failed statement (status rc, error e) is then said to fail
** for that, class database. Returns the status to give.
*/
static askdb_status file_gone(askdb_db *db, askdb_status rc,
                              struct db_err *e)
{
    struct dk *d = DK(db);
    struct stat st;

    if ((rc == ASKDB_ERR_DB || rc == ASKDB_ERR_REFUSED) && d->files &&
        stat(d->real, &st) != 0) {
        e->ec = ASKDB_EC_DATABASE;
        snprintf(e->msg, sizeof e->msg, "cannot read '%s': %s (the file "
                 "was moved or deleted since askdb opened it)", db->label,
                 strerror(errno));
        rc = ASKDB_ERR_DB;
    }
    return rc;
}

/* A statement's cancel (while it ran, or while its CSV file was checked
** or re-typed) into e. */
static askdb_status cancelled_error(struct db_err *e)
{
    e->ec = ASKDB_EC_RUNTIME;
    snprintf(e->msg, sizeof e->msg, "cancelled");
    return ASKDB_ERR_CANCELLED;
}

static askdb_status dk_check(askdb_db *db, const char *sql, struct db_err *e)
{
    duckdb_prepared_statement ps = NULL;
    askdb_status rc;

    if (lost(db, e))
        return ASKDB_ERR_DB;
    if (csv_check(db, DK(db)) == ASKDB_ERR_CANCELLED)
        return cancelled_error(e);
    rc = prepare_guarded(db, sql, &ps, e);
    duckdb_destroy_prepare(&ps);
    if (rc)
        reopen_if_invalidated(db, e);
    return file_gone(db, rc, e);
}

/* ---------------------------------------------------------------------- */
/* Running                                                                */
/* ---------------------------------------------------------------------- */

/* How a result column is read from a chunk. */
enum kind {
    K_NULL,                   /* SQLNULL */
    K_INT,                    /* the integer types that fit int64 */
    K_UBIG,                   /* UBIGINT: int64 when it fits, else text */
    K_HUGE,                   /* HUGEINT */
    K_UHUGE,                  /* UHUGEINT */
    K_REAL,                   /* FLOAT, DOUBLE */
    K_TEXT,                   /* VARCHAR */
    K_BLOB,
    K_CAST                    /* everything else: the query casts it */
};

static enum kind kind_of(duckdb_type t)
{
    switch (t) {
    case DUCKDB_TYPE_BOOLEAN:
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_UTINYINT:
    case DUCKDB_TYPE_USMALLINT:
    case DUCKDB_TYPE_UINTEGER:
        return K_INT;
    case DUCKDB_TYPE_UBIGINT:
        return K_UBIG;
    case DUCKDB_TYPE_HUGEINT:
        return K_HUGE;
    case DUCKDB_TYPE_UHUGEINT:
        return K_UHUGE;
    case DUCKDB_TYPE_FLOAT:
    case DUCKDB_TYPE_DOUBLE:
        return K_REAL;
    case DUCKDB_TYPE_VARCHAR:
        return K_TEXT;
    case DUCKDB_TYPE_BLOB:
        return K_BLOB;
    case DUCKDB_TYPE_SQLNULL:
        return K_NULL;
    default:
        return K_CAST;
    }
}

/* The SQL type a K_CAST column is cast to: DECIMAL becomes a real number,
** the rest (dates, times, intervals, UUIDs, lists, structs, maps, enums)
** DuckDB's text for them. */
static const char *cast_to(duckdb_type t)
{
    return t == DUCKDB_TYPE_DECIMAL ? "DOUBLE" : "VARCHAR";
}

/* Unsigned 128-bit integer as decimal text into out (>= 41 bytes). */
static void u128_text(uint64_t hi, uint64_t lo, int neg, char *out)
{
    char tmp[48];
    int n = 0, i = 0;

    do {
        /* Divide (hi, lo) by 10, keeping the remainder, 32 bits a step. */
        uint64_t parts[4] = {hi >> 32, hi & 0xffffffffu, lo >> 32,
                             lo & 0xffffffffu};
        uint64_t rem = 0;
        int k;
        for (k = 0; k < 4; k++) {
            uint64_t cur = (rem << 32) | parts[k];
            parts[k] = cur / 10;
            rem = cur % 10;
        }
        hi = (parts[0] << 32) | parts[1];
        lo = (parts[2] << 32) | parts[3];
        tmp[n++] = (char)('0' + rem);
    } while (hi || lo);
    if (neg)
        out[i++] = '-';
    while (n)
        out[i++] = tmp[--n];
    out[i] = '\0';
}

/* A text cell holding a copy of s[0..len). 0, or -1 when out of memory. */
static int set_text(askdb_value *v, askdb_type type, const char *s,
                    size_t len)
{
    char *p = malloc(len + 1);

    if (!p)
        return -1;
    if (len)
        memcpy(p, s, len);
    p[len] = '\0';
    v->type = type;
    v->s = p;
    v->len = len;
    return 0;
}

/* Read row r of vector data (kind k) into v; 0, or -1 when out of memory. */
static int read_cell(duckdb_type t, enum kind k, void *data, idx_t r,
                     askdb_value *v)
{
    char num[48];
    uint32_t len;
    const char *s;

    switch (k) {
    case K_INT:
        v->type = ASKDB_INTEGER;
        switch (t) {
        case DUCKDB_TYPE_BOOLEAN: v->i = ((bool *)data)[r]; break;
        case DUCKDB_TYPE_TINYINT: v->i = ((int8_t *)data)[r]; break;
        case DUCKDB_TYPE_SMALLINT: v->i = ((int16_t *)data)[r]; break;
        case DUCKDB_TYPE_INTEGER: v->i = ((int32_t *)data)[r]; break;
        case DUCKDB_TYPE_BIGINT: v->i = ((int64_t *)data)[r]; break;
        case DUCKDB_TYPE_UTINYINT: v->i = ((uint8_t *)data)[r]; break;
        case DUCKDB_TYPE_USMALLINT: v->i = ((uint16_t *)data)[r]; break;
        default: v->i = ((uint32_t *)data)[r]; break;
        }
        return 0;
    case K_UBIG: {
        uint64_t u = ((uint64_t *)data)[r];
        if (u <= INT64_MAX) {
            v->type = ASKDB_INTEGER;
            v->i = (int64_t)u;
            return 0;
        }
        u128_text(0, u, 0, num);
        return set_text(v, ASKDB_TEXT, num, strlen(num));
    }
    case K_HUGE: {
        duckdb_hugeint h = ((duckdb_hugeint *)data)[r];
        /* It fits int64 when the upper half is the sign extension of the
        ** lower half. */
        if ((h.upper == 0 && h.lower <= INT64_MAX) ||
            (h.upper == -1 && h.lower > (uint64_t)INT64_MAX)) {
            v->type = ASKDB_INTEGER;
            v->i = (int64_t)h.lower;
            return 0;
        }
        if (h.upper < 0) { /* two's complement negation of (upper, lower) */
            uint64_t lo = ~h.lower + 1, hi = ~(uint64_t)h.upper + (lo == 0);
            u128_text(hi, lo, 1, num);
        } else {
            u128_text((uint64_t)h.upper, h.lower, 0, num);
        }
        return set_text(v, ASKDB_TEXT, num, strlen(num));
    }
    case K_UHUGE: {
        duckdb_uhugeint h = ((duckdb_uhugeint *)data)[r];
        if (h.upper == 0 && h.lower <= INT64_MAX) {
            v->type = ASKDB_INTEGER;
            v->i = (int64_t)h.lower;
            return 0;
        }
        u128_text(h.upper, h.lower, 0, num);
        return set_text(v, ASKDB_TEXT, num, strlen(num));
    }
    case K_REAL:
        v->type = ASKDB_REAL;
        v->d = t == DUCKDB_TYPE_FLOAT ? (double)((float *)data)[r]
                                      : ((double *)data)[r];
        return 0;
    case K_TEXT:
    case K_BLOB:
    case K_CAST: /* cast to VARCHAR by the query */
        s = str_at(data, r, &len);
        return set_text(v, k == K_BLOB ? ASKDB_BLOB : ASKDB_TEXT, s, len);
    default:
        v->type = ASKDB_NULL;
        return 0;
    }
}

/* What one cell of row r costs in a result: its askdb_value plus the bytes
** of a text or blob (a number's text is small; counted as a value). */
static size_t cell_cost(enum kind k, void *data, uint64_t *valid, idx_t r)
{
    size_t n = sizeof(askdb_value);
    uint32_t len;

    if ((k == K_TEXT || k == K_BLOB || k == K_CAST) &&
        (!valid || duckdb_validity_row_is_valid(valid, r))) {
        str_at(data, r, &len);
        n += len;
    }
    return n;
}

/*
** The statement that produces what askdb keeps: ps itself when every
** column reads directly, else a wrapper over the query text that casts
** the others (SELECT #1, CAST(#2 AS VARCHAR) AS "when", ... FROM
** query('<sql>')), prepared into *wrapped. query() takes exactly one
** SELECT, as the guard already made sure of. On success kinds[] and
** types[] describe the columns of what runs.
*/
static askdb_status wrap_casts(askdb_db *db, const char *sql,
                               duckdb_prepared_statement ps,
                               duckdb_prepared_statement *wrapped,
                               enum kind *kinds, duckdb_type *types,
                               int ncols, struct db_err *e)
{
    struct dk *d = DK(db);
    struct buf b;
    int i, need = 0;

    *wrapped = NULL;
    for (i = 0; i < ncols; i++) {
        types[i] = duckdb_prepared_statement_column_type(ps, (idx_t)i);
        kinds[i] = kind_of(types[i]);
        need |= kinds[i] == K_CAST;
    }
    if (!need)
        return ASKDB_OK;
    buf_init(&b, 0);
    buf_puts(&b, "SELECT ");
    for (i = 0; i < ncols; i++) {
        const char *name =
            duckdb_prepared_statement_column_name(ps, (idx_t)i);
        if (i)
            buf_puts(&b, ", ");
        if (kinds[i] == K_CAST)
            buf_printf(&b, "CAST(#%d AS %s)", i + 1, cast_to(types[i]));
        else
            buf_printf(&b, "#%d", i + 1);
        buf_puts(&b, " AS ");
        text_put_quoted(&b, name ? name : "", '"');
        duckdb_free((void *)name);
    }
    buf_puts(&b, " FROM query(");
    text_put_quoted(&b, sql, '\'');
    buf_puts(&b, ")");
    if (buf_err(&b)) {
        buf_free(&b);
        return ASKDB_ERR_NOMEM;
    }
    if (duckdb_prepare(d->con, b.data, wrapped) == DuckDBError) {
        set_error(e, DUCKDB_ERROR_INVALID, duckdb_prepare_error(*wrapped));
        duckdb_destroy_prepare(wrapped);
        buf_free(&b);
        return status_of(e->ec);
    }
    buf_free(&b);
    for (i = 0; i < ncols; i++) {
        types[i] = duckdb_prepared_statement_column_type(*wrapped, (idx_t)i);
        kinds[i] = kind_of(types[i]);
        if (kinds[i] == K_CAST) /* DOUBLE and VARCHAR never are */
            kinds[i] = K_NULL;
        else if (types[i] == DUCKDB_TYPE_VARCHAR)
            kinds[i] = K_TEXT;
    }
    return ASKDB_OK;
}

/*
** Copy the rows of chunk ch into r until a cap is reached: max_rows
** (truncated = 1) or max_bytes (2), each row measured whole before it is
** copied. Returns 1 when a cap stopped it, 0 when the chunk was taken
** whole, -1 when out of memory.
*/
struct columns {
    enum kind *kinds;
    duckdb_type *types;
    void **data;              /* of the chunk being read */
    uint64_t **valid;
};

static int take_chunk(askdb_db *db, askdb_result *r, duckdb_data_chunk ch,
                      struct columns *c, long *cap_cells, size_t *bytes)
{
    idx_t n = duckdb_data_chunk_get_size(ch), row;
    int i, ncols = r->ncols;
    const enum kind *kinds = c->kinds;
    const duckdb_type *types = c->types;
    void **data = c->data;
    uint64_t **valid = c->valid;

    for (i = 0; i < ncols; i++) {
        duckdb_vector v = duckdb_data_chunk_get_vector(ch, (idx_t)i);
        data[i] = duckdb_vector_get_data(v);
        valid[i] = duckdb_vector_get_validity(v);
    }
    for (row = 0; row < n; row++) {
        askdb_value *cells;
        size_t cost = 0;
        if (r->nrows >= db->max_rows) {
            r->truncated = 1;
            return 1;
        }
        for (i = 0; i < ncols; i++)
            cost += cell_cost(kinds[i], data[i], valid[i], row);
        if (db->max_bytes && *bytes + cost > db->max_bytes) {
            r->truncated = 2;
            return 1;
        }
        *bytes += cost;
        cells = db_result_add_row(r, cap_cells);
        if (!cells)
            return -1;
        for (i = 0; i < ncols; i++) {
            if (valid[i] && !duckdb_validity_row_is_valid(valid[i], row))
                continue;
            if (read_cell(types[i], kinds[i], data[i], row, &cells[i]))
                return -1;
        }
    }
    return 0;
}

/* DuckDB's name of a column type, for askdb_result's decltypes; NULL for
** the nested and rarer ones. */
static const char *type_name(duckdb_type t)
{
    switch (t) {
    case DUCKDB_TYPE_BOOLEAN: return "BOOLEAN";
    case DUCKDB_TYPE_TINYINT: return "TINYINT";
    case DUCKDB_TYPE_SMALLINT: return "SMALLINT";
    case DUCKDB_TYPE_INTEGER: return "INTEGER";
    case DUCKDB_TYPE_BIGINT: return "BIGINT";
    case DUCKDB_TYPE_UTINYINT: return "UTINYINT";
    case DUCKDB_TYPE_USMALLINT: return "USMALLINT";
    case DUCKDB_TYPE_UINTEGER: return "UINTEGER";
    case DUCKDB_TYPE_UBIGINT: return "UBIGINT";
    case DUCKDB_TYPE_HUGEINT: return "HUGEINT";
    case DUCKDB_TYPE_UHUGEINT: return "UHUGEINT";
    case DUCKDB_TYPE_FLOAT: return "FLOAT";
    case DUCKDB_TYPE_DOUBLE: return "DOUBLE";
    case DUCKDB_TYPE_DECIMAL: return "DECIMAL";
    case DUCKDB_TYPE_VARCHAR: return "VARCHAR";
    case DUCKDB_TYPE_BLOB: return "BLOB";
    case DUCKDB_TYPE_DATE: return "DATE";
    case DUCKDB_TYPE_TIME: return "TIME";
    case DUCKDB_TYPE_TIMESTAMP: return "TIMESTAMP";
    case DUCKDB_TYPE_TIMESTAMP_TZ: return "TIMESTAMP WITH TIME ZONE";
    case DUCKDB_TYPE_INTERVAL: return "INTERVAL";
    case DUCKDB_TYPE_UUID: return "UUID";
    default: return NULL;
    }
}

/* The column names and types of the user's statement ps into r. */
static int set_columns(askdb_result *r, duckdb_prepared_statement ps)
{
    int i;

    for (i = 0; i < r->ncols; i++) {
        const char *name = duckdb_prepared_statement_column_name(ps, (idx_t)i);
        const char *tn =
            type_name(duckdb_prepared_statement_column_type(ps, (idx_t)i));
        r->cols[i] = strdup(name ? name : "");
        duckdb_free((void *)name);
        r->decltypes[i] = tn ? strdup(tn) : NULL;
        if (!r->cols[i] || (tn && !r->decltypes[i]))
            return -1;
    }
    return 0;
}

static askdb_status run_once(askdb_db *db, const char *sql,
                             askdb_result **out, struct db_err *e)
{
    struct dk *d = DK(db);
    duckdb_prepared_statement ps = NULL, wrapped = NULL, run;
    duckdb_pending_result pending = NULL;
    duckdb_result res;
    duckdb_data_chunk ch;
    askdb_result *r = NULL;
    askdb_status ret;
    struct columns c = {0};
    long cap_cells = 0;
    size_t bytes = 0;
    double t0 = db_now_ms();
    int ncols, have_res = 0, tmo = 0, cnl = 0, stop = 0;
    const char *m = NULL;
    duckdb_error_type et = DUCKDB_ERROR_INVALID;

    *out = NULL;
    memset(&res, 0, sizeof res);
    ret = prepare_guarded(db, sql, &ps, e);
    if (ret)
        return ret;
    ret = ASKDB_ERR_NOMEM;
    ncols = (int)duckdb_prepared_statement_column_count(ps);
    c.kinds = calloc((size_t)(ncols ? ncols : 1), sizeof *c.kinds);
    c.types = calloc((size_t)(ncols ? ncols : 1), sizeof *c.types);
    c.data = calloc((size_t)(ncols ? ncols : 1), sizeof *c.data);
    c.valid = calloc((size_t)(ncols ? ncols : 1), sizeof *c.valid);
    r = db_result_new(ncols);
    if (!c.kinds || !c.types || !c.data || !c.valid || !r)
        goto out;
    if (set_columns(r, ps))
        goto out;
    ret = wrap_casts(db, plan_request(sql) ? "" : sql, ps, &wrapped, c.kinds,
                     c.types, ncols, e);
    if (ret)
        goto out;
    run = wrapped ? wrapped : ps;
    if (!watchdog_arm(d, db->query_timeout_ms, db->cancel) &&
        db->query_timeout_ms > 0) {
        e->ec = ASKDB_EC_DATABASE;
        snprintf(e->msg, sizeof e->msg,
                 "not run: no thread could be started to stop the statement "
                 "at its %d ms time limit", db->query_timeout_ms);
        ret = ASKDB_ERR_DB;
        goto out;
    }
    /* The streaming form (deprecated in DuckDB's C API, but the only one
    ** that streams): chunks arrive as the query makes them, so a result
    ** over the caps is stopped early instead of being built whole. */
    if (duckdb_pending_prepared_streaming(run, &pending) == DuckDBError) {
        m = duckdb_pending_error(pending);
        goto failed;
    }
    if (duckdb_execute_pending(pending, &res) == DuckDBError) {
        have_res = 1;
        m = duckdb_result_error(&res);
        et = duckdb_result_error_type(&res);
        goto failed;
    }
    have_res = 1;
    while (!stop && (ch = duckdb_fetch_chunk(res)) != NULL) {
        int t = take_chunk(db, r, ch, &c, &cap_cells, &bytes);
        duckdb_destroy_data_chunk(&ch);
        if (t < 0)
            goto out; /* ASKDB_ERR_NOMEM */
        stop = t > 0;
    }
    if (!stop && duckdb_result_error(&res)) {
        m = duckdb_result_error(&res);
        et = duckdb_result_error_type(&res);
        goto failed;
    }
    watchdog_disarm(d, &tmo, &cnl);
    r->exec_ms = db_now_ms() - t0;
    *out = r;
    r = NULL;
    ret = ASKDB_OK;
    goto out;
failed:
    watchdog_disarm(d, &tmo, &cnl);
    if (cnl) {
        ret = cancelled_error(e);
    } else if (tmo || classify(et, m) == ASKDB_EC_TIMEOUT) {
        e->ec = ASKDB_EC_TIMEOUT;
        snprintf(e->msg, sizeof e->msg,
                 "query interrupted after the %d ms time limit (--timeout)",
                 db->query_timeout_ms);
        ret = ASKDB_ERR_TIMEOUT;
    } else {
        set_error(e, et, m);
        if (e->ec == ASKDB_EC_NONE)
            e->ec = ASKDB_EC_RUNTIME;
        ret = status_of(e->ec);
    }
out:
    if (ret == ASKDB_ERR_NOMEM) {
        e->ec = ASKDB_EC_RUNTIME;
        snprintf(e->msg, sizeof e->msg, "out of memory reading the result");
    }
    watchdog_disarm(d, &tmo, &cnl);
    if (have_res)
        duckdb_destroy_result(&res);
    if (pending)
        duckdb_destroy_pending(&pending);
    duckdb_destroy_prepare(&wrapped);
    duckdb_destroy_prepare(&ps);
    askdb_result_free(r);
    free(c.kinds);
    free(c.types);
    free(c.data);
    free(c.valid);
    return ret;
}

/*
** A statement, run again once when it failed on a value of a CSV file
** that its guessed column type cannot hold past the rows the schema read
** checked: the view then takes the types of the whole file
** (csv_retype()); the schema shown before keeps the first guess. When it
** still fails, DuckDB's advice (read_csv() options) is left out.
*/
static askdb_status dk_run(askdb_db *db, const char *sql, askdb_result **out,
                           struct db_err *e)
{
    struct dk *d = DK(db);
    askdb_status rc, r2;
    char err[512], *cut;

    *out = NULL;
    if (lost(db, e))
        return ASKDB_ERR_DB;
    if (csv_check(db, d) == ASKDB_ERR_CANCELLED)
        return cancelled_error(e);
    rc = run_once(db, sql, out, e);
    if (rc == ASKDB_ERR_DB && d->csv_view && !d->csv_retyped &&
        csv_type_error(e->msg)) {
        r2 = csv_retype_guarded(db, d, err, sizeof err);
        if (r2 == ASKDB_ERR_CANCELLED)
            return cancelled_error(e);
        if (r2 == ASKDB_ERR_TIMEOUT) {
            e->ec = ASKDB_EC_TIMEOUT;
            snprintf(e->msg, sizeof e->msg, "query interrupted after the %d "
                     "ms time limit (--timeout), reading the whole CSV file "
                     "for its column types", db->query_timeout_ms);
            return ASKDB_ERR_TIMEOUT;
        }
        if (r2 == ASKDB_OK)
            rc = run_once(db, sql, out, e);
    }
    if (rc)
        reopen_if_invalidated(db, e);
    if (rc == ASKDB_ERR_DB && csv_type_error(e->msg) &&
        (cut = strstr(e->msg, " Possible solutions:")) != NULL)
        snprintf(cut, sizeof e->msg - (size_t)(cut - e->msg),
                 " (the file holds values of other kinds in this column)");
    /* Bytes that are no UTF-8 past the rows DuckDB looked at when the
    ** file was opened: the file, not the statement, so no repair. */
    if (rc == ASKDB_ERR_DB && d->files && csv_not_utf8(e->msg)) {
        csv_not_utf8_say(err, sizeof err, db->label, e->msg);
        snprintf(e->msg, sizeof e->msg, "%s", err);
        e->ec = ASKDB_EC_DATABASE;
    }
    return file_gone(db, rc, e);
}

#endif /* ASKDB_HAVE_DUCKDB */

const struct db_driver db_duckdb_driver = {
    "duckdb", "DuckDB", dk_open, dk_close, dk_schema, dk_check, dk_run,
    dk_samples
};
