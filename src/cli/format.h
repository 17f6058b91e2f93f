/* format.h - print results and answers as table, CSV, JSON or Markdown. */
#ifndef ASKDB_CLI_FORMAT_H
#define ASKDB_CLI_FORMAT_H

#include <stdio.h>

#include "askdb.h"

enum out_format { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_MARKDOWN };

/* Parse "table", "csv", "json", "markdown" (or "md"); -1 if unknown. */
int format_parse(const char *s);

/* Rows of r in format f (not JSON) on out; a truncation notice goes to
** out as a footer (table) or to err (csv, markdown). */
void format_result(FILE *out, FILE *err, enum out_format f,
                   const askdb_result *r);

/* One answer as a JSON document (question, sql, columns, rows, attempts,
** timings, tokens, error) on out, newline-terminated. Returns 0 or -1. */
int format_answer_json(FILE *out, const char *question,
                       const askdb_answer *a);

/* One plain query's result (askdb sql) as JSON. */
int format_result_json(FILE *out, const char *sql, const askdb_result *r,
                       const char *error);

#endif
