/* db.c - the engine-independent half of askdb_db: open, limits, guard API. */
#define _XOPEN_SOURCE 700 /* realpath() */
#include "db/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/text.h"
#include "db/isolate.h"
#include "db/wire.h"

static const struct {
    const char *scheme;
    const struct db_driver *drv;
} schemes[] = {
    {"sqlite", NULL}, /* sqlite:// is not a URL askdb reads: a path is */
    {"postgresql", &db_postgres_driver}, {"postgres", &db_postgres_driver},
    {"mariadb", &db_mariadb_driver},
    {"mysql", &db_mariadb_driver},
};

/* A path DuckDB reads: its database files, and CSV and Parquet files
** (asked in place through an in-memory database). */
static int is_duckdb_path(const char *path)
{
    static const char *const ends[] = {".duckdb", ".ddb", ".csv", ".tsv",
                                       ".csv.gz", ".tsv.gz", ".parquet"};
    size_t n = strlen(path), i, k;

    for (i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        k = strlen(ends[i]);
        if (n > k && strcasecmp(path + n - k, ends[i]) == 0)
            return 1;
    }
    return 0;
}

const struct db_driver *db_pick(const char *path, char *err, size_t n)
{
    size_t k = db_url_scheme(path), i;

    if (!k)
        return is_duckdb_path(path) ? &db_duckdb_driver : &db_sqlite_driver;
    for (i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
        if (strlen(schemes[i].scheme) == k &&
            strncasecmp(path, schemes[i].scheme, k) == 0 && schemes[i].drv)
            return schemes[i].drv;
    snprintf(err, n,
             "%.*s:// is not a database URL askdb reads (a path is an "
             "SQLite file)",
             (int)(k > 32 ? 32 : k), path);
    return NULL;
}

askdb_status askdb_db_open(const char *path, const askdb_config *cfg,
                           askdb_db **out)
{
    askdb_status rc = db_open(path, cfg, NULL, out);

    /* db_open() told open_fn of *out as soon as it was set. */
    if (cfg && cfg->open_fn && out && *out)
        cfg->open_fn(cfg->open_ud, NULL, NULL);
    return rc;
}

askdb_status db_open(const char *path, const askdb_config *cfg,
                     atomic_int *cancel, askdb_db **out)
{
    askdb_config dflt = askdb_config_default();
    askdb_db *db;
    askdb_status rc;

    if (!out)
        return ASKDB_ERR_USAGE;
    *out = NULL;
    if (!cfg)
        cfg = &dflt;
    db = calloc(1, sizeof *db);
    if (!db)
        return ASKDB_ERR_NOMEM;
    db->drv = &db_sqlite_driver;
    atomic_init(&db->own_cancel, 0);
    db->cancel = cancel ? cancel : &db->own_cancel;
    /* Only now: a signal handler may cancel *out from here on, and
    ** another thread once open_fn has it (an agent's open says its own). */
    *out = db;
    if (!cancel && cfg->open_fn)
        cfg->open_fn(cfg->open_ud, NULL, db);
    /* A limit of 0 or less means the default, never "no limit": a config
    ** that was zeroed instead of taken from askdb_config_default() keeps
    ** every guard. */
    db->query_timeout_ms = cfg->query_timeout_ms > 0 ? cfg->query_timeout_ms
                                                     : dflt.query_timeout_ms;
    db->max_rows = cfg->max_rows > 0 ? cfg->max_rows : dflt.max_rows;
    db->max_bytes = cfg->max_bytes > 0 ? cfg->max_bytes : dflt.max_bytes;
    db->sample_values = cfg->sample_values;
    db->count_cap = cfg->count_cap > 0 ? cfg->count_cap : dflt.count_cap;
    /* The largest values of the types are limits too, not overflows. */
    if (db->query_timeout_ms > DB_TIMEOUT_MAX_MS)
        db->query_timeout_ms = DB_TIMEOUT_MAX_MS;
    if (db->max_rows > DB_MAX_ROWS_MAX)
        db->max_rows = DB_MAX_ROWS_MAX;
    if (db->count_cap > DB_COUNT_CAP_MAX)
        db->count_cap = DB_COUNT_CAP_MAX;
    if (!path || !*path) {
        snprintf(db->errmsg, sizeof db->errmsg, "no database path given");
        return ASKDB_ERR_USAGE;
    }
    db->path = strdup(path);
    db->label = db_redact(path);
    if (!db->path || !db->label)
        return ASKDB_ERR_NOMEM;
    db->drv = db_pick(path, db->errmsg, sizeof db->errmsg);
    if (!db->drv) {
        db->drv = &db_sqlite_driver; /* nothing opened: close is a no-op */
        return ASKDB_ERR_USAGE;
    }
    rc = db->drv->open(db, path);
    /* The model's statements on a file run in askdb-exec, which can be
    ** killed at the deadline; a server engine has its own time limit
    ** (statement_timeout, max_statement_time) and a client to cancel. */
    if (!rc && !cfg->in_process &&
        (db->drv == &db_sqlite_driver || db->drv == &db_duckdb_driver)) {
        /* Not for DuckDB: a CSV file's view is named after the path as
        ** given, and no such path names a process's own file. */
        if (db->drv == &db_sqlite_driver)
            db->iso_path = realpath(path, NULL);
        int refused;
        db->iso = db_iso_new(db, cfg->log_fn, cfg->log_ud, &refused);
        if (refused)
            rc = ASKDB_ERR_DB_OPEN;
    }
    db->opened = rc == ASKDB_OK;
    return rc;
}

askdb_status db_usable(askdb_db *db)
{
    if (db->opened)
        return ASKDB_OK;
    text_prefix_once(db->errmsg, sizeof db->errmsg,
                     "this database handle did not open (askdb_db_open() "
                     "failed): ");
    db->errclass = ASKDB_EC_DATABASE;
    return ASKDB_ERR_USAGE;
}

void askdb_db_close(askdb_db *db)
{
    if (!db)
        return;
    db_iso_free(db->iso);
    if (db->impl)
        db->drv->close(db);
    schema_free(&db->schema);
    free(db->path);
    free(db->iso_path);
    free(db->label);
    free(db);
}

int db_timeout_ms(const askdb_db *db)
{
    return db->query_timeout_ms;
}

size_t db_max_bytes(const askdb_db *db)
{
    return db->max_bytes;
}

int db_first_row_over_cap(const askdb_db *db, askdb_result **r,
                          struct db_err *e)
{
    if (!*r || (*r)->nrows != 0 || (*r)->truncated != 2)
        return 0;
    e->ec = ASKDB_EC_RUNTIME;
    snprintf(e->msg, sizeof e->msg, "the first row alone is larger than the "
             "%zu-byte result cap (--max-bytes); select fewer or shorter "
             "columns (length() or substr() of long text)", db->max_bytes);
    askdb_result_free(*r);
    *r = NULL;
    return 1;
}

const char *askdb_db_engine(const askdb_db *db)
{
    return db ? db->drv->name : "";
}

const char *askdb_db_version(const askdb_db *db)
{
    return db ? db->version : "";
}

const char *askdb_db_label(const askdb_db *db)
{
    return db && db->label ? db->label : "";
}

int db_text_type(const char *type)
{
    static const char *const words[] = {"char", "text", "string", "clob",
                                        "enum", "name", NULL};
    const char *const *w;
    const char *p;

    for (w = words; *w; w++)
        for (p = type; *p; p++)
            if (strncasecmp(p, *w, strlen(*w)) == 0)
                return 1;
    return 0;
}

long db_count_cap(const askdb_db *db)
{
    return db->count_cap;
}

const char *db_dialect(const askdb_db *db)
{
    return db->drv->dialect;
}

const char *askdb_db_errmsg(const askdb_db *db)
{
    return db ? db->errmsg : "out of memory";
}

askdb_error_class askdb_db_errclass(const askdb_db *db)
{
    return db ? db->errclass : ASKDB_EC_NONE;
}

void askdb_db_cancel(askdb_db *db)
{
    if (db)
        atomic_store(&db->own_cancel, 1);
}

void askdb_db_uncancel(askdb_db *db)
{
    if (db)
        atomic_store(&db->own_cancel, 0);
}

askdb_status db_schema(askdb_db *db, const struct db_schema **out)
{
    askdb_status rc;
    double t0;

    *out = NULL;
    if (!db->have_schema) {
        t0 = db_now_ms();
        rc = db->drv->schema(db, &db->schema);
        db->schema_ms = db_now_ms() - t0;
        if (rc) {
            schema_free(&db->schema);
            return rc;
        }
        db->have_schema = 1;
    }
    *out = &db->schema;
    return ASKDB_OK;
}

askdb_status db_fill_samples(askdb_db *db, const unsigned char *keep,
                             int *read)
{
    struct db_table **tabs;
    askdb_status rc;
    int i, n = 0;

    if (read)
        *read = 0;
    if (!db->have_schema || !db->drv->samples)
        return ASKDB_OK;
    tabs = malloc((size_t)db->schema.ntables * sizeof *tabs + 1);
    if (!tabs)
        return ASKDB_ERR_NOMEM;
    for (i = 0; i < db->schema.ntables; i++)
        if (db->schema.tables[i].samples_pending && (!keep || keep[i]))
            tabs[n++] = &db->schema.tables[i];
    rc = n ? db->drv->samples(db, tabs, n) : ASKDB_OK;
    free(tabs);
    if (read)
        *read = n > 0 && rc == ASKDB_OK;
    return rc;
}

void db_uncancel(askdb_db *db)
{
    if (db->cancel && db->cancel != &db->own_cancel)
        atomic_store(db->cancel, 0);
}

askdb_status db_api_schema(askdb_db *db, char **out,
                           const struct db_schema **s)
{
    askdb_status rc;

    if (!out)
        return ASKDB_ERR_USAGE;
    *out = NULL;
    if (!db)
        return ASKDB_ERR_USAGE;
    rc = db_usable(db);
    if (rc)
        return rc;
    db_uncancel(db);
    rc = db_schema(db, s);
    if (rc)
        return rc;
    return db_fill_samples(db, NULL, NULL);
}

askdb_status askdb_db_schema_text(askdb_db *db, char **out)
{
    const struct db_schema *s;
    askdb_status rc;

    rc = db_api_schema(db, out, &s);
    if (rc)
        return rc;
    *out = schema_render(s);
    if (!*out)
        return ASKDB_ERR_NOMEM;
    db->errmsg[0] = '\0';
    return ASKDB_OK;
}

/* No error yet: what db_check() and db_run() hand the engine. */
static void err_clear(struct db_err *e)
{
    e->ec = ASKDB_EC_NONE;
    e->msg[0] = '\0';
    e->pos = -1;
}

/* The statement's outcome rc, with its error e, is the handle's: its
** class and message (none on success). Returns rc. */
static askdb_status err_keep(askdb_db *db, const struct db_err *e,
                             askdb_status rc)
{
    db->errclass = e->ec;
    if (rc)
        snprintf(db->errmsg, sizeof db->errmsg, "%s", e->msg);
    else
        db->errmsg[0] = '\0';
    return rc;
}

/*
** A statement of a file longer than askdb-exec reads (WIRE_SQL_MAX): 1
** and e says so, in askdb's process too, so that both answer alike (the
** helper took it for a broken request and exited).
*/
static int too_long(const askdb_db *db, const char *sql, struct db_err *e)
{
    size_t n;

    if (db->drv != &db_sqlite_driver && db->drv != &db_duckdb_driver)
        return 0;
    n = strlen(sql);
    if (n <= WIRE_SQL_MAX)
        return 0;
    e->ec = ASKDB_EC_RUNTIME;
    snprintf(e->msg, sizeof e->msg, "the statement is %zu bytes, more than "
             "the %zu bytes askdb takes for one statement; write a shorter "
             "one", n, (size_t)WIRE_SQL_MAX);
    return 1;
}

askdb_status db_check(askdb_db *db, const char *sql, struct db_err *e)
{
    askdb_status rc;

    err_clear(e);
    if (too_long(db, sql, e)) {
        rc = ASKDB_ERR_DB;
    } else if (db->iso) {
        askdb_result *none;
        rc = db_iso_call(db, db->iso, WIRE_CHECK, sql, &none, e);
    } else {
        rc = db->drv->check(db, sql, e);
    }
    return err_keep(db, e, rc);
}

askdb_status db_run(askdb_db *db, const char *sql, askdb_result **out,
                    struct db_err *e)
{
    askdb_status rc;

    *out = NULL;
    err_clear(e);
    /* Cancelled before it starts: an engine may look at the flag only
    ** after some work, or a short statement never. */
    if (db->cancel && atomic_load(db->cancel)) {
        e->ec = ASKDB_EC_RUNTIME;
        snprintf(e->msg, sizeof e->msg, "cancelled");
        rc = ASKDB_ERR_CANCELLED;
    } else if (too_long(db, sql, e)) {
        rc = ASKDB_ERR_DB;
    } else {
        rc = db->iso ? db_iso_call(db, db->iso, WIRE_RUN, sql, out, e)
                     : db->drv->run(db, sql, out, e);
    }
    return err_keep(db, e, rc);
}

askdb_status db_api_begin(askdb_db *db, const char *sql, askdb_result **out)
{
    if (!out)
        return ASKDB_ERR_USAGE;
    *out = NULL;
    if (!db)
        return ASKDB_ERR_USAGE;
    if (!db->opened)
        return db_usable(db);
    if (!sql) {
        snprintf(db->errmsg, sizeof db->errmsg, "no statement given (NULL)");
        db->errclass = ASKDB_EC_NO_SQL;
        return ASKDB_ERR_USAGE;
    }
    db_uncancel(db);
    return ASKDB_OK;
}

askdb_status askdb_db_query(askdb_db *db, const char *sql,
                            askdb_result **out)
{
    struct db_err e;
    askdb_status rc = db_api_begin(db, sql, out);

    if (rc)
        return rc;
    rc = db_run(db, sql, out, &e);
    /* No rows to give, and "0 rows, truncated" would read as an empty
    ** result: a failure, as the agent takes it. */
    if (rc == ASKDB_OK && db_first_row_over_cap(db, out, &e)) {
        db->errclass = e.ec;
        snprintf(db->errmsg, sizeof db->errmsg, "%s", e.msg);
        rc = ASKDB_ERR_DB;
    }
    return rc;
}
