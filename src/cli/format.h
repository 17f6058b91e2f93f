/* format.h - print results and answers as table, CSV, JSON or Markdown. */
#ifndef ASKDB_CLI_FORMAT_H
#define ASKDB_CLI_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include "askdb.h"

enum out_format { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_MARKDOWN };

/*
** Text from the database and the model is untrusted: written to a terminal
** as it is, its control characters (ESC, BEL, C1 CSI/OSC ...) could move
** the cursor, retitle the window, plant links or set the clipboard. So
** what askdb prints for people goes through these: on a terminal every
** control character but newline and tab is written as a space; to a file
** or a pipe the text is written exactly. Table and Markdown cells are
** always cleaned (the one escape sequence they may hold is askdb's own:
** a NULL dimmed on a terminal); CSV and JSON are always exact (JSON
** escapes them).
*/

/* 1 when out is a terminal. */
int format_is_tty(FILE *out);

/* fputs(s, out), cleaned on a terminal. */
void format_puts(FILE *out, const char *s);

/* fprintf(out, ...), the result cleaned on a terminal. */
void format_printf(FILE *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Streamed model text (-v --stream), piece by piece, cleaned on a
** terminal; fs carries a character split between two pieces (zero it
** once). */
struct format_stream {
    unsigned char pend[4];  /* the first bytes of a split character */
    int npend;
    int open;               /* the text so far does not end its line */
};
void format_stream_piece(struct format_stream *fs, FILE *out,
                         const char *piece, size_t len);

/* Parse "table", "csv", "json", "markdown" (or "md"); -1 if unknown. */
int format_parse(const char *s);

/* Rows of r in format f (not JSON) on out; a truncation notice goes to
** out as a footer (table) or to err (csv, markdown). */
void format_result(FILE *out, FILE *err, enum out_format f,
                   const askdb_result *r);

/* One answer as a JSON document (askdb_answer_json) on out,
** newline-terminated; C1 controls escaped on a terminal. 0 or -1. */
int format_answer_json(FILE *out, const askdb_answer *a);

/* One plain query's result (askdb sql) as JSON. */
int format_result_json(FILE *out, const char *sql, const askdb_result *r,
                       const char *error);

#endif
