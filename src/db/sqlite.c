/* sqlite.c - the SQLite driver: read-only open, schema, and the guard. */
#define _XOPEN_SOURCE 700 /* realpath() */
#include "db/driver.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "db/sqlite_fn.h"
#include "db/watch.h"

/*
** Defence in layers, each enough on its own for what it covers:
**   1. the file is opened SQLITE_OPEN_READONLY, never created (we stat it
**      first and refuse anything but an existing regular file), and a
**      WAL-mode file with no "-wal" beside it is opened immutable, so
**      that reading it creates no "-wal" or "-shm" file either;
**   2. an authorizer allows only reading: SELECT, reads, recursive CTEs,
**      functions other than load_extension and friends, and a short list
**      of introspection pragmas; everything else is denied at prepare time;
**   3. sqlite3_stmt_readonly() must say yes and the text after the first
**      statement must be only blanks, comments and semicolons;
**   4. a progress handler interrupts statements at the time limit, and
**      so does a watchdog thread (sqlite3_interrupt() at the deadline)
**      for long single steps the handler never sees, such as count(*)
**      walking a whole table; rows and bytes are capped while stepping:
**      each row is measured
**      before it is copied, and SQLite may not make a value larger than
**      the byte cap (SQLITE_LIMIT_LENGTH) while the statement runs.
** Extensions stay disabled, defensive mode is on, ATTACH is limited to 0.
*/

struct sq {
    sqlite3 *h;
    double deadline;         /* ms on db_now_ms()'s clock, 0 = none */
    int timed_out;
    int internal;            /* preparing askdb's own schema statements */
    struct db_watch wd;      /* sqlite3_interrupt() at the deadline, for
                                long single steps the progress handler
                                never sees (count(*) walking a table) */
    const atomic_int *cancel; /* db->cancel (askdb_agent_cancel) */
    struct sqlfn *fn;        /* checked printf(), instr(), ... */
    double busy_since;       /* busy_wait(): when the lock was met */
    double busy_ms;          /* and how long it has been waited for */
    int lock_ms;             /* the statement time limit: how long a lock
                                is waited for when no deadline is armed
                                (the schema's own statements) */
    char *files;             /* what SQLite names the -journal and -wal
                                after: the path, or a link's target */
};

static struct sq *SQ(askdb_db *db)
{
    return db->impl;
}

/*
** What SQLite's last error on s means, for a person: its own message, but
** for a hot rollback journal (a writer stopped in the middle of a
** transaction, before askdb opened the file or since) what to do about
** it: reading needs the write undone, which a read-only connection cannot
** and askdb never does. SQLite's own words, "attempt to write a readonly
** database", read as if the statement had tried to write.
*/
static const char *sq_errmsg(struct sq *s, const char *path, const char *it,
                             char *buf, size_t n)
{
    if ((sqlite3_extended_errcode(s->h) & 0xff) == SQLITE_BUSY) {
        snprintf(buf, n, "%s is locked: another program is writing to it "
                 "(waited %.0f ms, as long as the statement's time allows); "
                 "ask again when it has finished", it, s->busy_ms);
        return buf;
    }
    if (sqlite3_extended_errcode(s->h) != SQLITE_READONLY_ROLLBACK)
        return sqlite3_errmsg(s->h);
    snprintf(buf, n, "%s has a hot rollback journal ('%s-journal'), left "
             "by a program that stopped in the middle of a write; reading "
             "it needs that write undone, which askdb never does (it never "
             "writes to a database); let SQLite roll it back first, e.g. "
             "sqlite3 '%s' 'PRAGMA quick_check', then ask again", it,
             s->files, path);
    return buf;
}

/*
** The class of SQLite's last error on s, whose message is m: what fails
** because of the database itself (locked by a writer, unreadable,
** damaged, not a database, a hot journal or a WAL it may not recover) is
** ASKDB_EC_DATABASE, whatever the statement; a repair cannot help.
*/
static askdb_error_class sq_class(struct sq *s, const char *m)
{
    switch (sqlite3_extended_errcode(s->h) & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_READONLY:   /* a read-only connection's reads: the files */
    case SQLITE_IOERR:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
    case SQLITE_NOLFS:
        return ASKDB_EC_DATABASE;
    default:
        return db_classify(m);
    }
}

/* Introspection pragmas that only read; anything else is refused. */
static const char *const read_pragmas[] = {
    "table_info", "table_xinfo", "index_list", "index_info", "index_xinfo",
    "foreign_key_list", "table_list", NULL
};

/* Functions no question needs and that reach outside the database. */
static const char *const denied_functions[] = {
    "load_extension", "fts3_tokenizer", "readfile", "writefile", "edit",
    NULL
};

static int in_list(const char *const *list, const char *s)
{
    int i;

    if (!s)
        return 0;
    for (i = 0; list[i]; i++)
        if (sqlite3_stricmp(list[i], s) == 0)
            return 1;
    return 0;
}

static int authorize(void *ud, int action, const char *a, const char *b,
                     const char *dbname, const char *trigger)
{
    const struct sq *s = ud;

    (void)dbname;
    (void)trigger;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_FUNCTION:
        return in_list(denied_functions, b) ? SQLITE_DENY : SQLITE_OK;
    case SQLITE_PRAGMA:
        return in_list(read_pragmas, a) ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_UPDATE:
        /* Setting up a pragma table-valued function (pragma_table_info...)
        ** reports an update of sqlite_master at prepare time; nothing is
        ** written. Allowed for askdb's own schema statements only. */
        return s->internal && a && strcmp(a, "sqlite_master") == 0
                   ? SQLITE_OK : SQLITE_DENY;
    default:
        return SQLITE_DENY;
    }
}

/* Prepare sql and let it go: what setting it up does stays done. */
static void set_up(struct sq *s, const char *sql)
{
    sqlite3_stmt *st = NULL;

    if (sqlite3_prepare_v2(s->h, sql, -1, &st, NULL) == SQLITE_OK)
        sqlite3_finalize(st);
}

/*
** Set up the table-valued forms of read_pragmas (pragma_table_info(), ...)
** and JSON's json_each() and json_tree() as askdb's own statements.
** Setting one up reports an update of sqlite_master, which the guard
** allows only for askdb's own statements, and it happens once per
** connection: without this, a question's pragma_table_info() would be
** refused or allowed depending on whether the schema had been read
** before. Running one still passes the PRAGMA check, so the others stay
** refused. JSON's read their argument alone (a JSON column's array, a
** document's tree), as json_extract() does.
*/
static void init_pragma_functions(struct sq *s)
{
    static const char *const json_tables[] = {"json_each('[]')",
                                              "json_tree('[]')", NULL};
    char sql[64];
    int i;

    s->internal = 1;
    for (i = 0; read_pragmas[i]; i++) {
        snprintf(sql, sizeof sql, "SELECT * FROM pragma_%s", read_pragmas[i]);
        set_up(s, sql);
    }
    for (i = 0; json_tables[i]; i++) {
        snprintf(sql, sizeof sql, "SELECT * FROM %s", json_tables[i]);
        set_up(s, sql);
    }
    s->internal = 0;
}

/* Whether the handle's user cancelled (askdb_db_cancel, the agent's). */
static int sq_cancelled(const struct sq *s)
{
    return s->cancel && atomic_load(s->cancel);
}

static int progress(void *ud)
{
    struct sq *s = ud;

    if (s->deadline > 0 && db_now_ms() > s->deadline) {
        s->timed_out = 1;
        return 1;
    }
    return sq_cancelled(s);
}

/*
** SQLite's busy handler, called the n-th time (from 0) that a lock is
** taken (a writer commits): wait for it in short sleeps while the
** statement's time limit lasts and it is not cancelled; then SQLite gives
** up with SQLITE_BUSY (sq_errmsg(), or a cancel as the caller finds it).
** The statements that read the schema run with no deadline armed (a
** large schema is not cut short), yet wait for a lock as long as one
** statement may: --timeout bounds each read of the schema, its wait for a
** writer's lock included (README, askdb.1).
*/
static int busy_wait(void *ud, int n)
{
    struct sq *s = ud;
    struct timespec ts = {0, 10 * 1000000L};
    double now = db_now_ms(), end;

    if (n == 0)
        s->busy_since = now;
    s->busy_ms = now - s->busy_since;
    end = s->deadline > 0 ? s->deadline : s->busy_since + s->lock_ms;
    if (now >= end || sq_cancelled(s))
        return 0;
    nanosleep(&ts, NULL);
    return 1;
}

static void arm(struct sq *s, int timeout_ms)
{
    s->timed_out = 0;
    s->deadline = timeout_ms > 0 ? db_now_ms() + timeout_ms : 0;
}

/*
** The watchdog's stop: sqlite3_interrupt(), holding the watchdog while
** the statement runs (db_watch_hold()), as an interrupt that came while
** the handle ran its next statement would stop that one. One that comes
** just as the statement ends is harmless: SQLite forgets an interrupt
** once no statement of the connection runs, and sq_run() finalizes its
** statement before the handle runs anything else.
*/
static void interrupt(void *ud, int why)
{
    struct sq *s = ud;

    (void)why;
    if (db_watch_hold(&s->wd)) {
        sqlite3_interrupt(s->h);
        db_watch_release(&s->wd);
    }
}

/* How a database's write-ahead log stands (wal_state()). */
enum wal_state {
    WAL_NONE,      /* not in WAL mode (or unreadable): open as usual */
    WAL_AT_REST,   /* WAL mode, no "-wal" (or an empty one and no "-shm") */
    WAL_NO_SHM,    /* a "-wal" with content but no "-shm" beside it */
    WAL_LIVE       /* "-wal" and "-shm": open as usual */
};

/* Size of the file path+suffix, -1 when it does not exist, -2 on another
** error. */
static long long companion_size(const char *path, const char *suffix)
{
    struct stat st;
    struct buf b;
    long long r;

    buf_init(&b, 0);
    buf_printf(&b, "%s%s", path, suffix);
    if (buf_err(&b))
        r = -2;
    else if (stat(b.data, &st) == 0)
        r = (long long)st.st_size;
    else
        r = errno == ENOENT ? -1 : -2;
    buf_free(&b);
    return r;
}

/*
** The WAL state of the database at path (links resolved by the caller,
** as SQLite names the "-wal" and "-shm" after the file it opens). WAL
** mode is header bytes 18 and 19 both 2. At rest, no program has it open
** and all of its content is in the file itself: opened the usual way,
** SQLite would create "-wal" and "-shm" files to read it, and a read-only
** connection cannot remove them on close. With a "-wal" that holds
** frames but no "-shm", SQLite would create the "-shm" to read the log,
** and leave it behind just the same.
*/
static enum wal_state wal_state(const char *path)
{
    static const char magic[16] = "SQLite format 3";
    unsigned char h[20];
    long long wal, shm;
    int fd, r = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return WAL_NONE;
    if (pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h &&
        memcmp(h, magic, sizeof magic) == 0 && h[18] == 2 && h[19] == 2)
        r = 1;
    close(fd);
    if (!r)
        return WAL_NONE;
    wal = companion_size(path, "-wal");
    shm = companion_size(path, "-shm");
    if (wal == -1 || (wal == 0 && shm == -1))
        return WAL_AT_REST;
    if (wal > 0 && shm == -1)
        return WAL_NO_SHM;
    return WAL_LIVE;
}

/* What SQLite names the "-journal" and "-wal" of the database at path
** after: the file a symbolic link names (links resolved), else path
** itself, as given (malloc()ed; NULL when out of memory). */
static char *companion_base(const char *path)
{
    struct stat st;
    char *real;

    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        real = realpath(path, NULL);
        if (real)
            return real;
    }
    return strdup(path);
}

/* "file:PATH?immutable=1", PATH percent-encoded where a URI filename
** needs it; malloc()ed, NULL when out of memory. */
static char *immutable_uri(const char *path)
{
    const unsigned char *c;
    struct buf b;

    buf_init(&b, 0);
    buf_puts(&b, "file:");
    if (path[0] == '/')
        buf_puts(&b, "//"); /* an empty authority: file:///abs/path */
    for (c = (const unsigned char *)path; *c; c++) {
        if (*c == '%' || *c == '?' || *c == '#' || *c <= ' ' || *c >= 0x7f)
            buf_printf(&b, "%%%02X", *c);
        else
            buf_putc(&b, (char)*c);
    }
    buf_puts(&b, "?immutable=1");
    return buf_steal(&b);
}

static askdb_status sq_open(askdb_db *db, const char *path)
{
    struct stat st;
    struct sq *s;
    sqlite3_stmt *st_probe = NULL;
    char *p = NULL, *real, why[768];
    enum wal_state ws;
    int rc, flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;

    snprintf(db->version, sizeof db->version, "%s", sqlite3_libversion());
    if (stat(path, &st) != 0) {
        const char *hint = db_missing_hint(path);
        /* The label: a connection string's password is left out. */
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': %s (askdb never creates "
                 "databases)%s%s", db->label, strerror(errno),
                 hint ? "; " : "", hint ? hint : "");
        return ASKDB_ERR_DB_OPEN;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': %s", path,
                 S_ISDIR(st.st_mode) ? "it is a directory"
                                     : "not a regular file");
        return ASKDB_ERR_DB_OPEN;
    }
    real = realpath(path, NULL);
    ws = wal_state(real ? real : path);
    free(real);
    s = calloc(1, sizeof *s);
    if (!s)
        return ASKDB_ERR_NOMEM;
    db->impl = s;
    db_watch_init(&s->wd, interrupt, s, 0, 128 * 1024);
    s->files = companion_base(path);
    if (!s->files)
        return ASKDB_ERR_NOMEM;
    if (ws == WAL_NO_SHM) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': it has a write-ahead log "
                 "('%s-wal') but no '-shm' file, which reading it would "
                 "create and leave behind (askdb never leaves files beside "
                 "a database); let SQLite fold the log into the database "
                 "first, e.g. sqlite3 '%s' 'PRAGMA wal_checkpoint(TRUNCATE)'"
                 ", then ask again", path, s->files, path);
        return ASKDB_ERR_DB_OPEN;
    }
    if (ws == WAL_AT_REST) {
        /* Immutable: read the file as it is, with no locks and no "-wal"
        ** or "-shm" files. A program that starts writing to it while
        ** this handle is open is not seen. */
        p = immutable_uri(path);
        if (!p)
            return ASKDB_ERR_NOMEM;
        flags |= SQLITE_OPEN_URI;
    } else if (strncmp(path, "file:", 5) == 0) {
        /* A name starting with "file:" would be read as a URI by a
        ** library built with URI filenames on; "./" keeps it a path. */
        size_t n = strlen(path) + 3;
        p = malloc(n);
        if (!p)
            return ASKDB_ERR_NOMEM;
        snprintf(p, n, "./%s", path);
    }
    /* One handle serves one thread at a time (see askdb.h): no mutex. */
    rc = sqlite3_open_v2(p ? p : path, &s->h, flags, NULL);
    free(p);
    if (rc != SQLITE_OK) {
        snprintf(db->errmsg, sizeof db->errmsg, "cannot open database '%s': %s",
                 path, s->h ? sqlite3_errmsg(s->h) : sqlite3_errstr(rc));
        return ASKDB_ERR_DB_OPEN;
    }
    sqlite3_extended_result_codes(s->h, 1);
    sqlite3_db_config(s->h, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    sqlite3_db_config(s->h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
    sqlite3_db_config(s->h, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0,
                      (int *)NULL);
    sqlite3_limit(s->h, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_limit(s->h, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
    sqlite3_set_authorizer(s->h, authorize, s);
    sqlite3_progress_handler(s->h, 1000, progress, s);
    sqlite3_busy_handler(s->h, busy_wait, s);
    s->fn = sqlfn_install(s->h, &s->deadline, &s->timed_out);

    /* Opening is lazy: read the schema table now so that a file that is
    ** not a database is reported here, not at the first question. A
    ** writer's lock met here is waited for as long as one statement may,
    ** once: the statements of init_pragma_functions() come after, when
    ** the schema is read and they need no lock (before, each waited up to
    ** 5 s of its own, 35 s in all). */
    s->cancel = db->cancel;
    s->lock_ms = db->query_timeout_ms;
    arm(s, db->query_timeout_ms);
    rc = sqlite3_prepare_v2(s->h, "SELECT count(*) FROM sqlite_schema", -1,
                            &st_probe, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st_probe);
    sqlite3_finalize(st_probe);
    if (rc != SQLITE_ROW) {
        const char *other = (rc & 0xff) == SQLITE_NOTADB
                                ? db_file_misnamed(path, "sqlite") : NULL;
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open database '%s': %s%s%s", path,
                 (rc & 0xff) == SQLITE_NOTADB
                     ? "not an SQLite database"
                     : sq_errmsg(s, path, "it", why, sizeof why),
                 other ? "; " : "", other ? other : "");
        return ASKDB_ERR_DB_OPEN;
    }
    init_pragma_functions(s);
    return ASKDB_OK;
}

static void sq_close(askdb_db *db)
{
    struct sq *s = SQ(db);

    db_watch_end(&s->wd);
    sqlite3_close_v2(s->h);
    sqlfn_free(s->fn);
    free(s->files);
    free(s);
    db->impl = NULL;
}

/* ---------------------------------------------------------------------- */
/* Schema                                                                 */
/* ---------------------------------------------------------------------- */

static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);

    return t ? strdup((const char *)t) : NULL;
}

struct schema_stmts {
    sqlite3_stmt *cols, *fks, *idx, *idxinfo;
};

static int read_columns(struct schema_stmts *q, struct db_table *t)
{
    int rc;
    struct db_column *c;

    sqlite3_reset(q->cols);
    sqlite3_bind_text(q->cols, 1, t->name, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(q->cols)) == SQLITE_ROW) {
        c = schema_push(&t->cols, &t->ncols, sizeof *c);
        if (!c)
            return SQLITE_NOMEM;
        c->name = dup_col(q->cols, 0);
        c->type = dup_col(q->cols, 1);
        if (!c->type)
            c->type = strdup("");
        c->notnull = sqlite3_column_int(q->cols, 2);
        c->dflt = dup_col(q->cols, 3);
        c->pk = sqlite3_column_int(q->cols, 4);
        if (!c->name || !c->type)
            return SQLITE_NOMEM;
    }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int read_fkeys(struct schema_stmts *q, struct db_table *t)
{
    int rc;
    struct db_fkey *f;

    sqlite3_reset(q->fks);
    sqlite3_bind_text(q->fks, 1, t->name, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(q->fks)) == SQLITE_ROW) {
        f = schema_push(&t->fks, &t->nfks, sizeof *f);
        if (!f)
            return SQLITE_NOMEM;
        f->from = dup_col(q->fks, 0);
        f->table = dup_col(q->fks, 1);
        f->to = dup_col(q->fks, 2);
        if (!f->from || !f->table)
            return SQLITE_NOMEM;
    }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Whether t has the unique column list u already. */
static int has_unique(const struct db_table *t, const char *u)
{
    int i;

    for (i = 0; i < t->nuniques; i++)
        if (strcmp(t->uniques[i], u) == 0)
            return 1;
    return 0;
}

static int read_uniques(struct schema_stmts *q, struct db_table *t)
{
    int rc, rc2, k;
    char **u;
    struct buf b;

    sqlite3_reset(q->idx);
    sqlite3_bind_text(q->idx, 1, t->name, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(q->idx)) == SQLITE_ROW) {
        buf_init(&b, 0);
        sqlite3_reset(q->idxinfo);
        sqlite3_bind_text(q->idxinfo, 1,
                          (const char *)sqlite3_column_text(q->idx, 0), -1,
                          SQLITE_TRANSIENT);
        k = 0;
        while ((rc2 = sqlite3_step(q->idxinfo)) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(q->idxinfo, 0);
            if (!name) { /* an expression index: not a column list */
                k = -1;
                break;
            }
            if (k++)
                buf_puts(&b, ", ");
            schema_put_ident(&b, name);
        }
        if (rc2 != SQLITE_DONE && rc2 != SQLITE_ROW) {
            buf_free(&b);
            return rc2;
        }
        if (k <= 0 || (b.data && has_unique(t, b.data))) {
            buf_free(&b);   /* an expression, or twice (another collation) */
            continue;
        }
        u = schema_push(&t->uniques, &t->nuniques, sizeof *u);
        if (!u) {
            buf_free(&b);
            return SQLITE_NOMEM;
        }
        *u = buf_steal(&b);
        if (!*u)
            return SQLITE_NOMEM;
    }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Run a one-number statement; -1 when it does not prepare or step. */
static long long one_number(sqlite3 *h, const char *sql, int *rc)
{
    sqlite3_stmt *st = NULL;
    long long v = -1;

    *rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
    if (*rc == SQLITE_OK)
        *rc = sqlite3_step(st);
    if (*rc == SQLITE_ROW) {
        v = sqlite3_column_type(st, 0) == SQLITE_NULL
                ? 0 : sqlite3_column_int64(st, 0);
        *rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return v;
}

/*
** Row count, stopping at the cap so huge tables stay cheap. When the
** largest rowid is under the cap a plain count(*) is exact and fast (it
** counts b-tree cells without decoding rows); otherwise the scan stops at
** cap + 1 rows. WITHOUT ROWID tables have no rowid: the capped scan.
*/
static int read_count(sqlite3 *h, struct db_table *t, long cap)
{
    struct buf b;
    long long n, maxid;
    int rc;

    buf_init(&b, 0);
    buf_puts(&b, "SELECT max(rowid) FROM ");
    schema_put_ident(&b, t->name);
    if (buf_err(&b)) {
        buf_free(&b);
        return SQLITE_NOMEM;
    }
    maxid = one_number(h, b.data, &rc);
    buf_reset(&b);
    if (rc == SQLITE_OK && maxid >= 0 && maxid <= cap) {
        buf_puts(&b, "SELECT count(*) FROM ");
        schema_put_ident(&b, t->name);
    } else {
        buf_puts(&b, "SELECT count(*) FROM (SELECT 1 FROM ");
        schema_put_ident(&b, t->name);
        buf_printf(&b, " LIMIT %ld)", cap + 1);
    }
    if (buf_err(&b)) {
        buf_free(&b);
        return SQLITE_NOMEM;
    }
    n = one_number(h, b.data, &rc);
    buf_free(&b);
    if (rc != SQLITE_OK)
        return rc;
    t->rows = (long)(n > cap ? cap : n);
    t->rows_capped = n > cap;
    return SQLITE_OK;
}

/*
** A few distinct text values per column, from the first rows only, one
** statement per table. Long values and blobs are skipped: they cost
** prompt tokens and rarely help to write a filter.
*/
#define SAMPLE_ROWS 200

/* Samples from the first SAMPLE_ROWS + 1 rows; *nrows gets how many rows
** there were (SAMPLE_ROWS + 1 meaning "more"), so that small tables need
** no count query. */
static int read_samples(sqlite3 *h, struct db_table *t, int per_col,
                        long *nrows)
{
    struct buf b;
    sqlite3_stmt *st = NULL;
    int rc, i;

    *nrows = SAMPLE_ROWS + 1;
    if (per_col <= 0 || t->ncols == 0)
        return SQLITE_OK;
    buf_init(&b, 0);
    buf_puts(&b, "SELECT ");
    for (i = 0; i < t->ncols; i++) {
        if (i)
            buf_puts(&b, ", ");
        schema_put_ident(&b, t->cols[i].name);
    }
    buf_puts(&b, " FROM ");
    schema_put_ident(&b, t->name);
    buf_printf(&b, " LIMIT %d", SAMPLE_ROWS + 1);
    if (buf_err(&b)) {
        buf_free(&b);
        return SQLITE_NOMEM;
    }
    rc = sqlite3_prepare_v2(h, b.data, -1, &st, NULL);
    buf_free(&b);
    if (rc != SQLITE_OK)
        return SQLITE_OK; /* e.g. a view over a missing table: no samples */
    *nrows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (++*nrows > SAMPLE_ROWS)
            break;
        for (i = 0; i < t->ncols; i++) {
            struct db_column *c = &t->cols[i];
            const char *v;

            if (c->nsamples >= per_col)
                continue;
            if (sqlite3_column_type(st, i) != SQLITE_TEXT)
                continue;
            v = (const char *)sqlite3_column_text(st, i);
            /* The bytes, not strlen(): a NUL inside does not shorten it,
            ** and such a value is no sample (cut at its NUL, it would be
            ** a value the column does not hold). */
            if (!v || sqlite3_column_bytes(st, i) > SCHEMA_SAMPLE_MAXLEN ||
                strlen(v) != (size_t)sqlite3_column_bytes(st, i))
                continue;
            if (schema_add_sample(c, v, per_col))
                break;
        }
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        *nrows = SAMPLE_ROWS + 1; /* unknown: let the count query decide */
    sqlite3_finalize(st);
    return SQLITE_OK;
}

/*
** Read the schema. A cancel (db->cancel) stops it at the next step or
** lock wait and is ASKDB_ERR_CANCELLED, whatever SQLite made of it: the
** busy handler's stop is SQLITE_BUSY, a sample's is no samples; the
** schema read so far is not kept (db_schema() frees it).
*/
static askdb_status sq_schema(askdb_db *db, struct db_schema *out)
{
    struct sq *s = SQ(db);
    struct schema_stmts q = {0};
    sqlite3_stmt *list = NULL;
    struct db_table *t;
    char why[512];
    int rc, cancelled;

    memset(out, 0, sizeof *out);
    s->cancel = db->cancel;
    arm(s, 0);
    s->internal = 1;
    rc = sqlite3_prepare_v2(
        s->h,
        "SELECT s.name, s.type, l.type, "
        "  s.sql LIKE '%REFERENCES%', "
        "  s.name IN (SELECT tbl_name FROM sqlite_schema WHERE type = 'index') "
        "FROM sqlite_schema s "
        "JOIN pragma_table_list l ON l.name = s.name AND l.schema = 'main' "
        "WHERE s.type IN ('table', 'view') AND l.type <> 'shadow' "
        "AND s.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY s.rowid",
        -1, &list, NULL);
    /* table_xinfo, not table_info: generated columns (hidden 2 and 3) are
    ** columns a query may name; a virtual table's hidden ones (1) not. */
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(s->h,
                                "SELECT name, type, \"notnull\", "
                                "dflt_value, pk "
                                "FROM pragma_table_xinfo(?1) "
                                "WHERE hidden IN (0, 2, 3)", -1, &q.cols,
                                NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(s->h,
                                "SELECT \"from\", \"table\", \"to\" FROM "
                                "pragma_foreign_key_list(?1) ORDER BY id, seq",
                                -1, &q.fks, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(s->h,
                                "SELECT name FROM pragma_index_list(?1) "
                                "WHERE \"unique\" AND origin <> 'pk'",
                                -1, &q.idx, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(s->h,
                                "SELECT name FROM pragma_index_info(?1) "
                                "ORDER BY seqno", -1, &q.idxinfo, NULL);
    s->internal = 0;
    while (rc == SQLITE_OK && !sq_cancelled(s) &&
           (rc = sqlite3_step(list)) == SQLITE_ROW) {
        const char *ltype = (const char *)sqlite3_column_text(list, 2);
        t = schema_push(&out->tables, &out->ntables, sizeof *t);
        if (!t) {
            rc = SQLITE_NOMEM;
            break;
        }
        t->name = dup_col(list, 0);
        t->is_view = sqlite3_column_text(list, 1) &&
                     strcmp((const char *)sqlite3_column_text(list, 1),
                            "view") == 0;
        t->rows = -1;
        if (!t->name) {
            rc = SQLITE_NOMEM;
            break;
        }
        rc = read_columns(&q, t);
        /* A view over a dropped table or column, or a virtual table whose
        ** module is not built in, has no columns to read: SQLite still
        ** opens the database, and so do we, without that object. */
        if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
            schema_free_table(t);
            out->ntables--;
            rc = SQLITE_OK;
            continue;
        }
        /* Foreign keys need REFERENCES in the table's text, unique
        ** indexes an index: skip the lookups that cannot find anything. */
        if (rc == SQLITE_OK && !t->is_view && sqlite3_column_int(list, 3))
            rc = read_fkeys(&q, t);
        if (rc == SQLITE_OK && !t->is_view && sqlite3_column_int(list, 4))
            rc = read_uniques(&q, t);
        /* Counting or sampling a view runs its query: skip them. */
        if (rc == SQLITE_OK && !t->is_view && ltype &&
            strcmp(ltype, "table") == 0) {
            long seen;
            s->cancel = db->cancel;
            arm(s, db->query_timeout_ms);
            rc = read_samples(s->h, t, db->sample_values, &seen);
            if (rc == SQLITE_OK && seen <= SAMPLE_ROWS) {
                t->rows = seen; /* the whole table was read */
                t->rows_capped = seen > db->count_cap;
                if (t->rows_capped)
                    t->rows = db->count_cap;
            } else if (rc == SQLITE_OK) {
                rc = read_count(s->h, t, db->count_cap);
            }
            s->cancel = db->cancel;
            arm(s, 0);
        }
    }
    if (rc == SQLITE_DONE)
        rc = SQLITE_OK;
    cancelled = rc != SQLITE_NOMEM && sq_cancelled(s);
    if (cancelled) {
        snprintf(db->errmsg, sizeof db->errmsg, "cancelled");
    } else if (rc != SQLITE_OK) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot read the schema of '%s': %s", db->path,
                 rc == SQLITE_NOMEM
                     ? "out of memory"
                     : sq_errmsg(s, db->path, "the database", why, sizeof why));
    }
    sqlite3_finalize(list);
    sqlite3_finalize(q.cols);
    sqlite3_finalize(q.fks);
    sqlite3_finalize(q.idx);
    sqlite3_finalize(q.idxinfo);
    if (cancelled)
        return ASKDB_ERR_CANCELLED;
    if (rc == SQLITE_NOMEM)
        return ASKDB_ERR_NOMEM;
    return rc == SQLITE_OK ? ASKDB_OK : ASKDB_ERR_DB;
}

/* ---------------------------------------------------------------------- */
/* Copies of common table expressions                                     */
/* ---------------------------------------------------------------------- */

/*
** SQLite expands each reference to a common table expression into a copy
** of its query while it prepares a statement, the references inside that
** copy included, before any step that the time limit or a cancel could
** stop: a WITH clause whose tables each name the one before twice is
** copied 2^k times (17 of them, 1.1 KB, took 2.4 s to prepare here, and
** askdb-exec's kill at twice the limit was all that ended a longer chain;
** in process nothing did: fuzz_guard's slow input). cte_copies() counts
** those copies before SQLite sees the text, and the guard refuses a
** statement over CTE_COPIES_MAX. It counts more, never fewer: SQLite
** finds a table named anywhere in its WITH, a later one too (a chain
** written last table first), and an inner WITH's table of the same name
** hides the outer one only inside its own query, so a name counts as the
** table of that name with the most copies, wherever it is defined; a
** quote doubled in a quoted name is one, as in SQLite. What never names a
** table in a FROM is no copy: a qualifier (t.x), a qualified name
** (main.t), an alias (AS t), strings and comments.
*/
#define CTE_COPIES_MAX 1000

/* One name token of the text (a word or a quoted name), or punctuation. */
struct ctok {
    const char *p;           /* its text, quotes included */
    size_t n;
    char kind;               /* 'w' word, 'q' quoted name, else the
                                character ('(', ')', ',', '.') */
};

/* The tokens of sql that matter here; comments, strings, numbers and
** other punctuation are left out. NULL when out of memory. */
static struct ctok *cte_tokens(const char *sql, size_t *ntok)
{
    size_t len = strlen(sql), cap = 64, n = 0;
    struct ctok *t = malloc(cap * sizeof *t), *grown;
    const char *p = sql, *e = sql + len, *q;
    char kind;

    while (t && p < e) {
        unsigned char c = (unsigned char)*p;
        if (c == '-' && p[1] == '-') {
            while (p < e && *p != '\n')
                p++;
            continue;
        }
        if (c == '/' && p[1] == '*') {
            q = strstr(p + 2, "*/");
            p = q ? q + 2 : e;
            continue;
        }
        q = p;
        if (c == '\'' || c == '"' || c == '`' || c == '[') {
            char close = c == '[' ? ']' : (char)c;
            for (q = p + 1; q < e; q++) {
                if (*q != close)
                    continue;
                if (close == ']' || q[1] != close)
                    break;
                q++;    /* a doubled quote stands for one */
            }
            q = q < e ? q + 1 : e;
            kind = c == '\'' ? 0 : 'q';
        } else if (isdigit(c) || (c == '.' && isdigit((unsigned char)p[1]))) {
            /* A number, its '.' and exponent included (1.5e-3). */
            while (q < e && (isalnum((unsigned char)*q) || *q == '_' ||
                             *q == '.' ||
                             ((*q == '+' || *q == '-') &&
                              (q[-1] == 'e' || q[-1] == 'E'))))
                q++;
            kind = 0;
        } else if (isalpha(c) || c == '_' || c == '$' || c >= 0x80) {
            while (q < e && (isalnum((unsigned char)*q) || *q == '_' ||
                             *q == '$' || (unsigned char)*q >= 0x80))
                q++;
            kind = 'w';
        } else {
            q = p + 1;
            kind = c == '(' || c == ')' || c == ',' || c == '.' ? (char)c : 0;
        }
        if (kind) {
            if (n == cap) {
                cap *= 2;
                grown = realloc(t, cap * sizeof *t);
                if (!grown) {
                    free(t);
                    return NULL;
                }
                t = grown;
            }
            t[n].p = p;
            t[n].n = (size_t)(q - p);
            t[n].kind = kind;
            n++;
        }
        p = q;
    }
    *ntok = n;
    return t;
}

/* Whether token t is the keyword w (lower case). */
static int ctok_is(const struct ctok *t, const char *w)
{
    return t->kind == 'w' && t->n == strlen(w) &&
           strncasecmp(t->p, w, t->n) == 0;
}

/* The next character of name token t's name from *at (its text within
** the quotes, a doubled closing quote read as one), or -1 at its end. */
static int ctok_char(const struct ctok *t, size_t *at)
{
    size_t o = t->kind == 'q', end = t->n - o;
    char close = o ? t->p[t->n - 1] : 0;
    int ch;

    if (*at < o)
        *at = o;
    if (*at >= end)
        return -1;
    ch = (unsigned char)t->p[*at];
    *at += 1 + (o && close != ']' && ch == close && *at + 1 < end &&
                t->p[*at + 1] == close);
    return tolower(ch);
}

/* Whether tokens a and b name the same table: the same name within
** whatever quotes, ASCII letters in any case, as SQLite compares. */
static int ctok_same(const struct ctok *a, const struct ctok *b)
{
    size_t i = 0, j = 0;
    int x, y;

    do {
        x = ctok_char(a, &i);
        y = ctok_char(b, &j);
    } while (x == y && x >= 0);
    return x == y;
}

/* A hash of a name token as ctok_same() compares it. */
static size_t ctok_hash(const struct ctok *t)
{
    size_t at = 0, h = 2166136261u;
    int ch;

    while ((ch = ctok_char(t, &at)) >= 0)
        h = (h ^ (unsigned char)ch) * 16777619u;
    return h;
}

/* One common table expression: its name, the references to tables made
** in its own query (refs[first..first+nrefs) of the count) and, once
** counted, how many copies of its query a reference to it makes. The
** one after the last (c[ncte]) is the statement's own query, no name. */
struct cte {
    const struct ctok *name;
    size_t depth;            /* the paren depth of its body */
    size_t outer;            /* the body it is defined in (index + 1), 0 */
    size_t same;             /* the next one of the same name (index + 1) */
    size_t first, nrefs;
    int state;               /* 0 not counted, 1 being counted, 2 done */
    long long copies;
};

/* The count: the tables, the references (each a name token, grouped by
** the table whose query makes them, those of the statement's own query
** last) and a hash table of the names (slots: mask + 1, each the last
** table of that name, index + 1, or 0). */
struct ccount {
    struct cte *c;
    size_t ncte;
    const struct ctok **refs;
    size_t *slots, mask;
    long long work;          /* steps left before the count gives up */
};

static long long sat_add(long long a, long long b)
{
    return a > LLONG_MAX - b ? LLONG_MAX : a + b;
}

/* The slot of name in the table: the one holding it, or the empty one
** where it goes. */
static size_t cte_slot(const struct ccount *k, const struct ctok *name)
{
    size_t at = ctok_hash(name) & k->mask;

    while (k->slots[at] && !ctok_same(k->c[k->slots[at] - 1].name, name))
        at = (at + 1) & k->mask;
    return at;
}

/* The definition at t[i] (NAME [(cols)] AS [NOT] [MATERIALIZED] ( after
** WITH, RECURSIVE or a comma): the index of its body's '(', or 0. */
static size_t cte_body_at(const struct ctok *t, size_t ntok, size_t i)
{
    size_t k = i + 1;

    if (i == 0 || !(ctok_is(&t[i - 1], "with") ||
                    ctok_is(&t[i - 1], "recursive") || t[i - 1].kind == ','))
        return 0;
    if (k < ntok && t[k].kind == '(') {
        while (k < ntok && t[k].kind != ')')
            k++;
        k++;
    }
    if (k >= ntok || !ctok_is(&t[k], "as"))
        return 0;
    k++;
    if (k < ntok && ctok_is(&t[k], "not"))
        k++;
    if (k < ntok && ctok_is(&t[k], "materialized"))
        k++;
    return k < ntok && t[k].kind == '(' ? k : 0;
}

/* Whether t[i], a name, may name a table in a FROM: not a qualifier
** (t.x), nor qualified (main.t: SQLite looks WITH tables up unqualified
** only), nor an alias (AS t). */
static int cte_may_ref(const struct ctok *t, size_t ntok, size_t i)
{
    return (t[i].kind == 'w' || t[i].kind == 'q') &&
           !(i + 1 < ntok && t[i + 1].kind == '.') &&
           !(i > 0 && (t[i - 1].kind == '.' || ctok_is(&t[i - 1], "as")));
}

/* A table being counted: the reference it is at, whether that name was
** looked up, the next table of that name to look at (index + 1, or 0),
** its count so far and the most copies of that name so far. */
struct cframe {
    size_t x, r, next;
    int found;
    long long n, most;
};

/*
** The copies a reference to table x makes: 1 and those of the references
** in its query (x == k->ncte: the statement's own query, 0 and its
** references). A name is looked up among every table of that name in
** the statement, the most copies taken, wherever its WITH is: SQLite
** finds a later table of the same WITH too, and an inner WITH of the same
** name hides an outer table only inside its own query, so this counts
** more, never fewer. A table being counted (its own recursive name, or
** a circle SQLite refuses) makes none. Each table is counted once, depth
** first with a stack of its own (st: ncte + 1 frames), stopped past
** CTE_COPIES_MAX or when the count has taken too many steps.
*/
static long long cte_count(struct ccount *k, size_t x, struct cframe *st)
{
    size_t top = 0, at;
    struct cframe *f;
    struct cte *y;
    long long v;

    if (k->c[x].state == 2)
        return k->c[x].copies;
    st[0] = (struct cframe){.x = x, .r = k->c[x].first,
                           .n = x < k->ncte};
    k->c[x].state = 1;
    for (;;) {
        f = &st[top];
        y = &k->c[f->x];
        if (f->r >= y->first + y->nrefs || f->n > CTE_COPIES_MAX) {
            y->copies = f->n;
            y->state = 2;
            if (top == 0)
                return f->n;
            v = f->n;
            f = &st[--top];
            f->most = v > f->most ? v : f->most;
            continue;
        }
        if (!f->found) {
            at = cte_slot(k, k->refs[f->r]);
            f->next = k->slots[at];
            f->found = 1;
            f->most = 0;
        }
        while (f->next && k->c[f->next - 1].state != 0) {
            y = &k->c[f->next - 1];
            if (y->state == 2 && y->copies > f->most)
                f->most = y->copies;
            f->next = y->same;
        }
        if (--k->work < 0)
            f->n = CTE_COPIES_MAX + 1;
        else if (f->next) {
            /* A table not counted yet: count it first. */
            y = &k->c[f->next - 1];
            y->state = 1;
            f->next = y->same;
            st[++top] = (struct cframe){.x = (size_t)(y - k->c),
                                        .r = y->first, .n = 1};
        } else {
            f->n = sat_add(f->n, f->most);
            f->r++;
            f->found = 0;
        }
    }
}

/* Sort k->refs (nrefs of them, owner[i] the table whose query makes
** refs[i], index + 1, or 0 for the statement's own) by table, the
** statement's last, and set each table's first and nrefs; start (ncte
** + 2 zeros) gets where each group begins, start[ncte] the statement's.
** 0 when out of memory. */
static int cte_group_refs(struct ccount *k, const size_t *owner,
                          size_t nrefs, size_t *start)
{
    const struct ctok **sorted = malloc((nrefs + 1) * sizeof *sorted);
    size_t i, *fill = calloc(k->ncte + 1, sizeof *fill);
    size_t g;

    if (!sorted || !fill) {
        free(sorted);
        free(fill);
        return 0;
    }
    for (i = 0; i < nrefs; i++)
        start[(owner[i] ? owner[i] - 1 : k->ncte) + 1]++;
    for (i = 1; i <= k->ncte + 1; i++)
        start[i] += start[i - 1];
    for (i = 0; i < k->ncte; i++) {
        k->c[i].first = start[i];
        k->c[i].nrefs = start[i + 1] - start[i];
    }
    for (i = 0; i < nrefs; i++) {
        g = owner[i] ? owner[i] - 1 : k->ncte;
        sorted[start[g] + fill[g]++] = k->refs[i];
    }
    free(fill);
    free(k->refs);
    k->refs = sorted;
    return 1;
}

/*
** How many copies of common table expressions SQLite would make to
** prepare sql (see above; 0 without a WITH): the most of the statement's
** own and of any one table, or -1 when out of memory. One pass over the
** tokens finds the tables and the references each one's query makes;
** then each table is counted once. It stops once over CTE_COPIES_MAX.
*/
static long long cte_copies(const char *sql)
{
    size_t ntok, i, b, at, depth = 0, open = 0, nrefs = 0, *owner = NULL,
                          *start = NULL;
    struct ctok *t = cte_tokens(sql, &ntok);
    struct ccount k = {0};
    struct cframe *frames = NULL;
    long long most = 0, v;

    if (!t)
        return -1;
    k.mask = 15;
    while (k.mask < 2 * ntok)
        k.mask = k.mask * 2 + 1;
    k.c = calloc(ntok + 1, sizeof *k.c);
    k.refs = malloc((ntok + 1) * sizeof *k.refs);
    k.slots = calloc(k.mask + 1, sizeof *k.slots);
    owner = malloc((ntok + 1) * sizeof *owner);
    start = calloc(ntok + 2, sizeof *start);
    frames = malloc((ntok + 1) * sizeof *frames);
    if (!k.c || !k.refs || !k.slots || !owner || !start || !frames) {
        most = -1;
        goto out;
    }
    /* The tables, and each reference's table (index + 1; 0: none). */
    for (i = 0; i < ntok; i++) {
        if (t[i].kind == '(' || t[i].kind == ',' || t[i].kind == '.') {
            depth += t[i].kind == '(';
            continue;
        }
        if (t[i].kind == ')') {
            if (open && k.c[open - 1].depth == depth)
                open = k.c[open - 1].outer;
            depth -= depth > 0;
            continue;
        }
        b = cte_body_at(t, ntok, i);
        if (b) {
            k.c[k.ncte] = (struct cte){.name = &t[i], .depth = ++depth,
                                       .outer = open};
            at = cte_slot(&k, &t[i]);
            k.c[k.ncte].same = k.slots[at];
            k.slots[at] = ++k.ncte;
            open = k.ncte;
            i = b;
            continue;
        }
        if (cte_may_ref(t, ntok, i)) {
            k.refs[nrefs] = &t[i];
            owner[nrefs++] = open;
        }
    }
    if (!cte_group_refs(&k, owner, nrefs, start)) {
        most = -1;
        goto out;
    }
    /* The statement's own query is table ncte, named nothing. */
    k.c[k.ncte].first = start[k.ncte];
    k.c[k.ncte].nrefs = nrefs - start[k.ncte];
    k.work = 16 * (long long)ntok + 1000000;
    for (i = 0; k.ncte && i <= k.ncte && most <= CTE_COPIES_MAX; i++) {
        v = cte_count(&k, i, frames);
        most = v > most ? v : most;
    }
out:
    free(frames);
    free(start);
    free(owner);
    free(k.slots);
    free(k.refs);
    free(k.c);
    free(t);
    return most;
}

/* ---------------------------------------------------------------------- */
/* The guard                                                              */
/* ---------------------------------------------------------------------- */

/* Skip blanks, comments and semicolons; return where real text starts. */
static const char *skip_filler(const char *p)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
               *p == '\f' || *p == '\v' || *p == ';')
            p++;
        if (p[0] == '-' && p[1] == '-') {
            while (*p && *p != '\n')
                p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            p = e ? e + 2 : p + strlen(p);
        } else {
            return p;
        }
    }
}

/*
** A statement with a parameter (?, ?1, :name, @name, $name) has no value
** to bind: SQLite would run it with NULL for each, an answer to another
** question. A syntax error, so that the model writes the values in; the
** same words as PostgreSQL's and MariaDB's. e names the first parameter.
*/
static void placeholder_error(sqlite3_stmt *st, struct db_err *e)
{
    const char *name = NULL;
    int i, n = sqlite3_bind_parameter_count(st);

    for (i = 1; i <= n && !name; i++)
        name = sqlite3_bind_parameter_name(st, i);
    e->ec = ASKDB_EC_SYNTAX;
    snprintf(e->msg, sizeof e->msg, "the query has a %.100s placeholder; "
             "write the values into the SQL", name ? name : "?");
}

/*
** Prepare sql and apply every check that needs no execution. On success
** *out is a prepared statement the caller finalizes.
*/
static askdb_status prepare_guarded(askdb_db *db, const char *sql,
                                    sqlite3_stmt **out, struct db_err *e)
{
    struct sq *s = SQ(db);
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    long long copies;
    char why[512];
    int rc;

    *out = NULL;
    s->cancel = db->cancel;
    arm(s, db->query_timeout_ms);
    copies = cte_copies(sql);
    if (copies < 0) {
        e->ec = ASKDB_EC_RUNTIME;
        snprintf(e->msg, sizeof e->msg, "out of memory");
        return ASKDB_ERR_NOMEM;
    }
    if (copies > CTE_COPIES_MAX) {
        e->ec = ASKDB_EC_RUNTIME;
        snprintf(e->msg, sizeof e->msg, "the query's WITH tables name "
                 "each other so often that SQLite would copy them more "
                 "than %d times to prepare it (askdb refuses such "
                 "statements): name each WITH table in the next one once, "
                 "or write the query with fewer of them", CTE_COPIES_MAX);
        return ASKDB_ERR_DB;
    }
    rc = sqlite3_prepare_v3(s->h, sql, -1, 0, &st, &tail);
    if (rc != SQLITE_OK) {
        const char *m = sq_errmsg(s, db->path, "the database", why,
                                  sizeof why);
        e->ec = sq_class(s, m);
        if (strncmp(m, "vtable constructor failed: ", 27) == 0) {
            /* dbstat, sqlite_stmt, ...: modules the guard does not let
            ** set themselves up. */
            e->ec = ASKDB_EC_REFUSED;
            snprintf(e->msg, sizeof e->msg,
                     "refused: the virtual table '%s' is not available; "
                     "askdb reads the database's tables and views",
                     m + 27);
        } else if (e->ec == ASKDB_EC_REFUSED)
            snprintf(e->msg, sizeof e->msg,
                     "refused: the statement does more than read (%.400s); "
                     "askdb runs only read-only queries", m);
        else
            snprintf(e->msg, sizeof e->msg, "%s", m);
        return e->ec == ASKDB_EC_REFUSED ? ASKDB_ERR_REFUSED : ASKDB_ERR_DB;
    }
    if (!st)
        return db_no_sql(e);
    if (*skip_filler(tail)) {
        (void)db_many_statements(e);
        goto refused;
    }
    if (!sqlite3_stmt_readonly(st)) {
        e->ec = ASKDB_EC_REFUSED;
        snprintf(e->msg, sizeof e->msg,
                 "refused: the statement is not read-only");
        goto refused;
    }
    if (sqlite3_column_count(st) == 0) {
        e->ec = ASKDB_EC_REFUSED;
        snprintf(e->msg, sizeof e->msg,
                 "refused: the statement returns no rows; askdb runs queries");
        goto refused;
    }
    if (sqlite3_bind_parameter_count(st) > 0) {
        placeholder_error(st, e);
        sqlite3_finalize(st);
        return ASKDB_ERR_DB;
    }
    *out = st;
    return ASKDB_OK;
refused:
    sqlite3_finalize(st);
    return ASKDB_ERR_REFUSED;
}

static askdb_status sq_check(askdb_db *db, const char *sql, struct db_err *e)
{
    sqlite3_stmt *st;
    askdb_status rc = prepare_guarded(db, sql, &st, e);

    sqlite3_finalize(st);
    return rc;
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/*
** What one cell of the current row costs in a result: its askdb_value
** plus the bytes of a text or blob. sqlite3_column_bytes() does not
** expand a zeroblob, so a row is measured before anything is copied.
*/
static size_t cell_cost(sqlite3_stmt *st, int i)
{
    int t = sqlite3_column_type(st, i);
    size_t n = sizeof(askdb_value);

    if (t == SQLITE_TEXT || t == SQLITE_BLOB)
        n += (size_t)sqlite3_column_bytes(st, i);
    return n;
}

/* SQLite's length limit while a statement runs: the largest string or
** blob it may make (zeroblob(1e9), randomblob(), printf('%.*c', ...) are
** refused instead of allocated) and the largest table row it may read.
** That is why it is not the result's byte cap itself: a row bigger than
** the result may hold can still be filtered and counted. */
#define VALUE_CAP_MIN ((size_t)16 << 20)

static int value_cap(const askdb_db *db)
{
    size_t cap = db->max_bytes > VALUE_CAP_MIN ? db->max_bytes
                                               : VALUE_CAP_MIN;

    return cap >= INT_MAX ? INT_MAX : (int)cap;
}

static askdb_status sq_run(askdb_db *db, const char *sql, askdb_result **out,
                           struct db_err *e)
{
    struct sq *s = SQ(db);
    sqlite3_stmt *st = NULL;
    askdb_result *r = NULL;
    askdb_status ret;
    long cap_cells = 0;
    size_t bytes = 0, row_bytes;
    double t0 = db_now_ms();
    char why[512];
    int rc, i, ncols, old_len;

    ret = prepare_guarded(db, sql, &st, e);
    if (ret)
        return ret;
    /* While this statement runs, SQLite refuses (SQLITE_TOOBIG) to make a
    ** value larger than the result may be, instead of allocating it:
    ** zeroblob(1e9), randomblob(), printf('%.*c', ...). Prepare and the
    ** schema reading keep the default. */
    old_len = sqlite3_limit(s->h, SQLITE_LIMIT_LENGTH, value_cap(db));
    /* The cancel flag too: the progress handler looks at it between
    ** steps only, and one step can walk a whole table (count(*)). */
    db_watch_arm(&s->wd, s->deadline, s->cancel);
    ret = ASKDB_ERR_NOMEM;
    ncols = sqlite3_column_count(st);
    r = db_result_new(ncols);
    if (!r)
        goto out;
    for (i = 0; i < ncols; i++) {
        const char *dt = sqlite3_column_decltype(st, i);
        r->cols[i] = dup_or_empty(sqlite3_column_name(st, i));
        r->decltypes[i] = dt ? strdup(dt) : NULL;
        if (!r->cols[i] || (dt && !r->decltypes[i]))
            goto out;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        askdb_value *row;
        if (r->nrows >= db->max_rows) {
            r->truncated = 1;
            break;
        }
        /* The whole row is measured first: a row that would take the
        ** result over the byte cap is not copied at all. */
        row_bytes = 0;
        for (i = 0; i < ncols; i++)
            row_bytes += cell_cost(st, i);
        if (db->max_bytes && bytes + row_bytes > db->max_bytes) {
            r->truncated = 2;
            break;
        }
        bytes += row_bytes;
        row = db_result_add_row(r, &cap_cells);
        if (!row)
            goto out;
        for (i = 0; i < ncols; i++) {
            askdb_value *v = &row[i];
            int n;
            switch (sqlite3_column_type(st, i)) {
            case SQLITE_INTEGER:
                v->type = ASKDB_INTEGER;
                v->i = sqlite3_column_int64(st, i);
                break;
            case SQLITE_FLOAT:
                v->type = ASKDB_REAL;
                v->d = sqlite3_column_double(st, i);
                break;
            case SQLITE_TEXT:
            case SQLITE_BLOB: {
                const void *src;
                char *dst;
                int text = sqlite3_column_type(st, i) == SQLITE_TEXT;
                src = text ? (const void *)sqlite3_column_text(st, i)
                           : sqlite3_column_blob(st, i);
                n = sqlite3_column_bytes(st, i);
                dst = malloc((size_t)n + 1);
                if (!dst)
                    goto out;
                if (n)
                    memcpy(dst, src, (size_t)n);
                dst[n] = '\0';
                v->type = text ? ASKDB_TEXT : ASKDB_BLOB;
                v->s = dst;
                v->len = (size_t)n;
                break;
            }
            default:
                v->type = ASKDB_NULL;
                break;
            }
        }
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        if ((rc & 0xff) == SQLITE_TOOBIG) {
            e->ec = ASKDB_EC_RUNTIME;
            snprintf(e->msg, sizeof e->msg,
                     "the query makes or reads a value or row larger than "
                     "%d bytes, the most askdb lets SQLite hold; select "
                     "fewer or shorter values (length() or substr() of "
                     "long text)", value_cap(db));
            ret = ASKDB_ERR_DB;
        } else if (s->cancel && atomic_load(s->cancel) && !s->timed_out) {
            e->ec = ASKDB_EC_RUNTIME;
            snprintf(e->msg, sizeof e->msg, "cancelled");
            ret = ASKDB_ERR_CANCELLED;
        } else if (s->timed_out || (rc & 0xff) == SQLITE_INTERRUPT) {
            e->ec = ASKDB_EC_TIMEOUT;
            snprintf(e->msg, sizeof e->msg,
                     "query interrupted after the %d ms time limit "
                     "(--timeout)", db->query_timeout_ms);
            ret = ASKDB_ERR_TIMEOUT;
        } else {
            const char *m = sq_errmsg(s, db->path, "the database", why,
                                      sizeof why);
            e->ec = sq_class(s, m);
            if (e->ec == ASKDB_EC_NONE || e->ec == ASKDB_EC_TIMEOUT)
                e->ec = ASKDB_EC_RUNTIME;
            snprintf(e->msg, sizeof e->msg, "%s", m);
            ret = ASKDB_ERR_DB;
        }
        goto out;
    }
    r->exec_ms = db_now_ms() - t0;
    *out = r;
    r = NULL;
    ret = ASKDB_OK;
out:
    if (ret == ASKDB_ERR_NOMEM) {
        e->ec = ASKDB_EC_RUNTIME;
        snprintf(e->msg, sizeof e->msg, "out of memory reading the result");
    }
    db_watch_disarm(&s->wd);
    askdb_result_free(r);
    sqlite3_finalize(st);
    sqlite3_limit(s->h, SQLITE_LIMIT_LENGTH, old_len);
    s->cancel = db->cancel;
    arm(s, 0);
    return ret;
}

const struct db_driver db_sqlite_driver = {
    "sqlite", "SQLite", sq_open, sq_close, sq_schema, sq_check, sq_run,
    NULL
};
