/* text.h - text for the model and the trace: valid UTF-8, cut on character
** boundaries. */
#ifndef ASKDB_TEXT_H
#define ASKDB_TEXT_H

#include <jansson.h>
#include <stddef.h>

#include "core/buf.h"

/*
** Everything the agent sends to a model or writes to the trace becomes a
** JSON string, and JSON holds only valid UTF-8: jansson refuses anything
** else (json_dumps() fails, so an HTTP request could not be built and a
** trace line was lost). The user's data need not be UTF-8 (SQLite does
** not enforce it, a Latin-1 database is common), and cutting text at a
** byte count can split a character. These helpers make such text valid:
** an invalid byte (or a NUL) becomes U+FFFD, and text is only ever cut
** between characters.
*/

/* Whether s[0..len) is valid UTF-8 without NUL bytes. */
int text_valid(const char *s, size_t len);

/* The longest prefix of s[0..len) of at most max bytes that does not end
** inside a UTF-8 sequence (valid input stays valid). */
size_t text_cut(const char *s, size_t len, size_t max);

/* Append s[0..len) to b as valid UTF-8 (invalid bytes as U+FFFD). With
** max > 0 at most max bytes of s are taken, cut between characters and
** followed by "..." when something was left out. */
void text_put(struct buf *b, const char *s, size_t len, size_t max);

/* s itself when it is valid UTF-8, else a repaired copy (s is freed).
** Takes s over; NULL when s is NULL or out of memory. */
char *text_repair(char *s);

/* A JSON string of s, repaired as text_put() does; JSON null for NULL.
** NULL only when out of memory. */
json_t *text_json(const char *s);

#endif
