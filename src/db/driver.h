/* driver.h - what every database driver shares: the handle, the driver
** table, and the helpers a driver uses. */
#ifndef ASKDB_DB_DRIVER_H
#define ASKDB_DB_DRIVER_H

#include <limits.h>
#include <stdatomic.h>

#include "askdb.h"
#include "db/schema.h"

/*
** db.c (db.h) is the engine-independent interface above the drivers; a
** driver (sqlite.c) includes only this header, so the dependency runs one
** way: db.c -> driver -> driver.c.
*/

/* Why a statement was refused or failed; mirrors askdb_error_class. */
struct db_err {
    askdb_error_class ec;
    char msg[512];
    int pos;             /* byte offset in the statement where the engine
                            places the error, -1 when it does not say
                            (only PostgreSQL does) */
};

struct db_driver {
    const char *name;    /* "sqlite", "postgresql", "mariadb", "duckdb" */
    const char *dialect; /* the SQL's name in prompts and hints: "SQLite" */
    askdb_status (*open)(askdb_db *db, const char *path);
    void (*close)(askdb_db *db);
    askdb_status (*schema)(askdb_db *db, struct db_schema *out);
    askdb_status (*check)(askdb_db *db, const char *sql, struct db_err *e);
    askdb_status (*run)(askdb_db *db, const char *sql, askdb_result **out,
                        struct db_err *e);
    /* Read the samples of tables[0..n) that the schema read left pending
    ** (db_table.samples_pending) and clear the mark; NULL for a driver
    ** that samples every table in schema(). */
    askdb_status (*samples)(askdb_db *db, struct db_table **tables, int n);
};

/* The largest limits a handle takes; a larger one in askdb_config counts
** as these. A count stops one row past count_cap, to tell a table at the
** cap from a larger one, and a result asks for one row past max_rows (a
** truncated result shows): the cap + 1 must be a long. The engines' own
** time limits come a grace later and in whole seconds, rounded up, which
** must still be an int. */
#define DB_COUNT_CAP_MAX (LONG_MAX - 1)
#define DB_MAX_ROWS_MAX (LONG_MAX - 1)
#define DB_TIMEOUT_MAX_MS 2000000000   /* about 23 days */

struct askdb_db {
    const struct db_driver *drv;
    void *impl;
    char *path;          /* as given: a URL may hold a password */
    char *label;         /* path, or URL without its password: the name
                            for messages, traces, logs and memory keys */
    char version[64];    /* engine version, filled by open */
    int query_timeout_ms;
    long max_rows;
    size_t max_bytes;
    int sample_values;
    long count_cap;      /* at most DB_COUNT_CAP_MAX, and the others at
                            most theirs too */
    struct db_schema schema;
    int have_schema;
    double schema_ms;
    atomic_int *cancel;       /* non-zero stops the running statement
                                 (ASKDB_ERR_CANCELLED), or NULL: the
                                 owning agent's flag (askdb_agent_cancel),
                                 else own_cancel */
    atomic_int own_cancel;    /* askdb_db_cancel() */
    askdb_error_class errclass; /* of the last db_check() or db_run() */
    struct db_iso *iso;  /* askdb-exec runs the statements (isolate.h),
                            or NULL: they run in this process */
    char *iso_path;      /* what askdb-exec opens: an SQLite path with its
                            links resolved, as SQLite resolves them, since
                            /dev/stdin or /proc/self/fd/3 name another
                            file in another process; NULL: path */
    int opened;          /* askdb_db_open() succeeded; else the handle is
                            only for its message (db_usable()) */
    char errmsg[1024];
};

extern const struct db_driver db_sqlite_driver;
extern const struct db_driver db_postgres_driver; /* postgres.c */
extern const struct db_driver db_mariadb_driver;  /* mariadb.c */
extern const struct db_driver db_duckdb_driver;

/*
** (db.c) The engine a database argument names: a URL's scheme
** (postgresql://, mariadb://, ...) or, for a path, its extension. NULL with
** a message in err (size n) when the scheme is not one askdb speaks.
*/
const struct db_driver *db_pick(const char *path, char *err, size_t n);

/* Length of a URL's scheme before "://" (4 for "http://x"), 0 when s is
** not a URL. */
size_t db_url_scheme(const char *s);

/*
** Whether url (a URL with a scheme) has an '@' after its path or query
** starts: its password may hold an unencoded '/' or '?' that ended the
** user part early (mariadb://user:pa/ss@host/db reads as host "user",
** database "ss@host/db"), or its database or a value may hold an '@'
** (mariadb://host:3306/a@b); nothing tells which. Messages then quote no
** part of it but the redacted label, and ask for the password's '/', '?'
** and '@' to be percent-encoded (%2F, %3F, %40).
*/
int db_url_ambiguous(const char *url);

/* What a message says of such a URL instead of what the parser or the
** server quoted of it. */
#define DB_AMBIGUOUS_URL                                                    \
    "it has an '@' after a '/' or '?', so askdb cannot tell a password "   \
    "holding '/' or '?' from a database or parameter holding '@'; "        \
    "percent-encode the password's '/', '?', '@' and ':' (%2F, %3F, %40, " \
    "%3A), or the '@' of a database or parameter (%40)"

/*
** A copy of a database argument fit to print: a URL loses the password of
** its user part ("user:secret@" -> "user@") and any password= parameter;
** one that db_url_ambiguous() loses all from its first ':' to its last
** '@' ("user:pa/ss@host/db" -> "user:xxx@host/db", "host:3306/a@b" ->
** "host:xxx@b"); so does a PostgreSQL keyword/value string given as a
** path ("host=h password=xxx"); a path is kept. malloc()ed; NULL when out
** of memory.
*/
char *db_redact(const char *path);

/*
** What to write instead of a database path that names no file: a static
** sentence, or NULL when there is nothing to say. One that looks like
** PostgreSQL's keyword/value connection string ("host=db dbname=shop
** user=ann": a word host=, hostaddr=, dbname= or service=), which askdb
** would take for an SQLite file, is said as one; one that starts with a
** '~' no shell expanded (it was in quotes) says how to write it.
*/
const char *db_missing_hint(const char *path);

/*
** Text that holds no statement (empty, white space or only comments):
** not exactly one statement, so ASKDB_ERR_REFUSED, with class
** ASKDB_EC_NO_SQL and the message in e. Every driver says it this way.
*/
askdb_status db_no_sql(struct db_err *e);

/* Text that holds more than one statement: ASKDB_ERR_REFUSED, with class
** ASKDB_EC_REFUSED and "refused: more than one statement; ..." in e.
** Every driver says it this way. */
askdb_status db_many_statements(struct db_err *e);

/*
** Skip blanks and comments, and semicolons too when semis; return where a
** token starts. Comments as PostgreSQL's lexer (and DuckDB's, which is
** PostgreSQL's) reads them: "--" to the end of its line, which '\r' ends
** as well as '\n' (ended at '\n' only, a denied call "txid_current
** --\r()" went past db_denied_call()); block comments nest (a comment
** inside one does not end it at its own end).
*/
const char *db_skip_filler(const char *s, int semis);

/* A function a driver refuses to let a statement call, and why (the end
** of the sentence "the statement calls f(), which ..."). A name ending
** in '*' is a prefix. */
struct db_denied_fn {
    const char *name;
    const char *why;
};

/*
** The first call in sql of a function of fns[0..n), before the engine
** parses the text: the name (any case, quoted or not, qualified or not)
** followed by '(' after optional blanks and comments, or by comments
** alone to the end of the text (in case the engine reads one of them
** otherwise), wherever it stands, in strings and comments too, so that
** no quoting or comment hides a call (a string that holds
** "txid_current()" counts too, which costs no real question). The name
** alone is no call: a column or a table so named reads as any other.
** Its index in fns with the name as written, lower case, in name (size
** namelen); or -1. For PostgreSQL and DuckDB, whose lexers agree.
*/
int db_denied_call(const char *sql, const struct db_denied_fn *fns, size_t n,
                   char *name, size_t namelen);

/*
** Refuse sql when it calls a function of fns[0..n) (db_denied_call()):
** e says "refused: the statement calls f(), which <why>; askdb runs only
** read-only queries", class ASKDB_EC_REFUSED. 0, or -1 with e set.
*/
int db_refuse_denied(const char *sql, const struct db_denied_fn *fns,
                     size_t n, struct db_err *e);

/* Classify an engine error message (e.g. "no such column: x"). */
askdb_error_class db_classify(const char *msg);

/*
** The engine picks a file's driver by its name's ending (db_pick); when a
** file's first bytes say it is another engine's, what to write instead:
** "it is a DuckDB database: askdb picks the engine by the file's ending,
** so give it the ending .duckdb (a link will do)". not_engine is the
** engine the name picked ("sqlite", "duckdb"). NULL when the bytes say
** nothing (or the file cannot be read).
*/
const char *db_file_misnamed(const char *path, const char *not_engine);

/* Milliseconds from a monotonic clock (core's clockx_now_ms(), under the
** name the db layer and those above it use). */
double db_now_ms(void);

/* A result of ncols columns and no rows: cols and decltypes allocated
** (every entry NULL, for the driver to fill), r->ncols set. NULL when
** out of memory. Free it with askdb_result_free(), filled or not. */
askdb_result *db_result_new(int ncols);

/* One more row of r->ncols cells at the end of r's rows, zeroed (every
** cell ASKDB_NULL) and counted in r->nrows, so that r frees it even half
** filled. *cap_cells is how many cells r->cells has room for (0 at the
** first row); it grows by doubling. The row, or NULL when out of memory
** (r unchanged). */
askdb_value *db_result_add_row(askdb_result *r, long *cap_cells);

#endif
