/* hint.h - targeted repair hints from a failed attempt's error. */
#ifndef ASKDB_HINT_H
#define ASKDB_HINT_H

#include "askdb.h"
#include "core/buf.h"
#include "db/schema.h"

/*
** Append to b a hint that tells the model how to fix sql, which failed
** with error class ec and engine message msg:
**   unknown column - the closest real column names (table.column);
**   unknown table  - the real tables, closest first;
**   syntax         - the line and position of the error, and when the
**                    engine stopped at one of its reserved words that
**                    names a table or column, to write it quoted;
**   empty result   - reconsider filters (spelling, case, formats), joins;
**   and a short fixed hint for the other classes, naming the engine's SQL
**   dialect ("SQLite", "PostgreSQL", ...).
** The unknown name is read from SQLite's, PostgreSQL's and DuckDB's
** messages; tables and columns are named as schema_say_qname() and
** schema_say_name() name them: as a query writes them, but on SQLite.
*/
void hint_write(struct buf *b, const struct db_schema *s, const char *sql,
                askdb_error_class ec, const char *msg, int timeout_ms,
                const char *dialect);

/* Edit distance between a and b, case-insensitive, capped at cap+1. */
int hint_distance(const char *a, const char *b, int cap);

#endif
