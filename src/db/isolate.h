/* isolate.h - the statements of an SQLite or DuckDB file run in a helper
** process, askdb-exec, that is killed at the deadline. */
#ifndef ASKDB_DB_ISOLATE_H
#define ASKDB_DB_ISOLATE_H

#include "askdb.h"
#include "db/driver.h"

/*
** Why: SQLite and DuckDB look for an interrupt between steps of their
** virtual machines, never inside one function call or one operator, so a
** statement can run past any in-process time limit (a 16 MB value
** compared 1,900 times in one row, DuckDB's repeat('x', 2000000000)). A
** process can always be killed; isolate.c is the design notes.
*/

struct db_iso;

/*
** The helper for db (an SQLite or DuckDB file, opened): found as
** ASKDB_EXEC_HELPER names it, else askdb-exec beside the running program,
** else the installed one (ASKDB_LIBEXECDIR). NULL when none is found or
** out of memory: then db's statements run in this process, and log (when
** not NULL) says so once, with why. NULL with *refused set and why in
** db->errmsg when ASKDB_EXEC_HELPER names a file that cannot run: a
** helper named on purpose and mistyped must not leave the statements in
** this process unsaid. Nothing is started yet: the helper starts at the
** first statement. Free with db_iso_free().
*/
struct db_iso *db_iso_new(askdb_db *db, askdb_log_fn log, void *log_ud,
                          int *refused);

/*
** Check (WIRE_CHECK) or run (WIRE_RUN) sql in the helper, with db's
** limits and cancel flag, starting the helper when none runs. The same
** statuses, error classes and messages as the driver in this process; a
** helper that is killed at the deadline (--timeout and a margin) gives
** ASKDB_ERR_TIMEOUT, cancelled ASKDB_ERR_CANCELLED, one that crashed or
** sent a malformed reply ASKDB_ERR_DB, each with e filled. On success
** *out (runs only) is the caller's.
*/
askdb_status db_iso_call(askdb_db *db, struct db_iso *iso, int type,
                         const char *sql, askdb_result **out,
                         struct db_err *e);

/* The helper's path (borrowed, lives with iso). */
const char *db_iso_helper(const struct db_iso *iso);

/* Stop the helper (killed and reaped: no process is left) and free. */
void db_iso_free(struct db_iso *iso);

#endif
