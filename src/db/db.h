/* db.h - the database handle behind askdb_db: open, schema, check, query. */
#ifndef ASKDB_DB_H
#define ASKDB_DB_H

#include "askdb.h"
#include "db/driver.h"
#include "db/schema.h"

/*
** One driver per engine sits behind this interface; SQLite is the first.
** Every statement that reaches a database goes through db_check() and
** db_run(): exactly one statement, read-only by the engine's own verdict,
** under an authorizer that allows only reading, with time, row and byte
** limits. Messages land in db->errmsg and say what failed and on what.
*/

/* The schema, read on first use and kept (borrowed, lives with db). */
askdb_status db_schema(askdb_db *db, const struct db_schema **out);

/*
** Read the samples that the schema read left pending
** (db_table.samples_pending: a large DuckDB schema) of the tables keep[i]
** marks, or of every table when keep is NULL; *read (when not NULL) is
** set to whether any were (a rendering of those tables then changes).
** Samples help, they are not needed: a table the engine fails to sample
** keeps none. ASKDB_OK, ASKDB_ERR_NOMEM or ASKDB_ERR_CANCELLED.
*/
askdb_status db_fill_samples(askdb_db *db, const unsigned char *keep,
                             int *read);

/* Prepare without running: one read-only statement? Fills e on failure.
** Both set the handle's errclass, and its errmsg (cleared on success). */
askdb_status db_check(askdb_db *db, const char *sql, struct db_err *e);

/* Check and run with the limits. On success *out is the caller's. */
askdb_status db_run(askdb_db *db, const char *sql, askdb_result **out,
                    struct db_err *e);

/*
** askdb_db_open() with the handle's cancel flag set to cancel from the
** start (NULL: its own, askdb_db_cancel()), so that the owner of cancel
** (an agent: askdb_agent_cancel()) also stops the open's connect to a
** server. With its own flag it tells cfg->open_fn of the new handle
** (askdb_db_open() tells it of the end).
*/
askdb_status db_open(const char *path, const askdb_config *cfg,
                     atomic_int *cancel, askdb_db **out);

/*
** ASKDB_OK when db is open. The handle a failed askdb_db_open() left for
** its message has no connection (a driver's state may be missing): every
** API call that would use it returns this ASKDB_ERR_USAGE, said on db
** ("this database handle did not open (askdb_db_open() failed): " and the
** open's reason, once) with errclass ASKDB_EC_DATABASE.
*/
askdb_status db_usable(askdb_db *db);

/* The start of an API call that runs sql on db into *out
** (askdb_db_query, askdb_db_explain): *out cleared, the arguments checked
** (NULL out or db: ASKDB_ERR_USAGE; a db that did not open: db_usable();
** NULL sql: ASKDB_ERR_USAGE said on db) and db uncancelled
** (db_uncancel). ASKDB_OK to go on. */
askdb_status db_api_begin(askdb_db *db, const char *sql, askdb_result **out);

/* The same for an API call that writes db's schema to *out
** (askdb_db_schema_text, askdb_db_schema_json): *out cleared, the
** arguments checked (NULL out or db: ASKDB_ERR_USAGE; a db that did not
** open: db_usable()), db uncancelled, and the schema read, the samples
** of every table with it, into *s (db's). ASKDB_OK to go on, else the
** read's status. */
askdb_status db_api_schema(askdb_db *db, char **out,
                           const struct db_schema **s);

/*
** Clear the cancel flag (db->cancel) before work asked for through the
** API (askdb_db_query, askdb_db_explain, the schema): it starts
** uncancelled, as a question does, so that a cancel that stopped an
** earlier question of the agent owning db does not stop it; a cancel
** while it runs still does. A handle of its own (askdb_db_open) keeps
** askdb_db_cancel()'s flag until askdb_db_uncancel().
*/
void db_uncancel(askdb_db *db);

/* The time limit each statement runs under, in ms: the config's, or the
** default when it gave 0 or less (see askdb_db_open()). */
int db_timeout_ms(const askdb_db *db);

/* The row count at which a table counts as too big to count
** (count_cap, or its default): rows_capped past it. */
long db_count_cap(const askdb_db *db);

/* How prompts and hints name the engine's SQL ("SQLite", "PostgreSQL"). */
const char *db_dialect(const askdb_db *db);

/* Whether a declared column type holds text in the engines with strict
** types (char, varchar, text, string, clob, enum, citext, ...). */
int db_text_type(const char *type);

/* The byte cap of a result (max_bytes, or its default). */
size_t db_max_bytes(const askdb_db *db);

/*
** Whether *r, a result db_run() just gave, was cut at the byte cap before
** its first row: no empty result, but one whose first row alone is over
** the cap. Then *r is freed and NULL, e says so as a failed statement
** (ASKDB_EC_RUNTIME, with what to do), and 1 is returned; else 0 and
** nothing changes. The agent repairs such a statement; askdb_db_query()
** fails with it.
*/
int db_first_row_over_cap(const askdb_db *db, askdb_result **r,
                          struct db_err *e);

#endif
