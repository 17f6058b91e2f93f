/* text.h - valid UTF-8: characters told from invalid bytes, text cut on
** character boundaries, invalid bytes repaired; SQL's quoting of names and
** strings; a URL's host, and what of a URL may be its password. */
#ifndef ASKDB_TEXT_H
#define ASKDB_TEXT_H

#include <stddef.h>

#include "core/buf.h"

/*
** Everything askdb sends to a model, writes to the trace or prints as JSON
** becomes a JSON string, and JSON holds only valid UTF-8: jansson refuses
** anything else (json_dumps() fails, so an HTTP request could not be
** built and a trace line was lost). The user's data need not be UTF-8
** (SQLite does not enforce it, a Latin-1 database is common), a model's
** reply can stop inside a character, and cutting text at a byte count can
** split one. These helpers make such text valid: an invalid byte (or a
** NUL) becomes U+FFFD, and text is only ever cut between characters.
** jsonx_text() (core/json.h) builds its JSON strings with them.
*/

/* What an invalid byte becomes: U+FFFD REPLACEMENT CHARACTER. */
#define TEXT_REPLACEMENT "\xEF\xBF\xBD"

/* Length of the valid UTF-8 character at s[0..n) (n >= 1), 0 when none
** starts there: a stray continuation byte, an overlong form, a surrogate,
** a code point past U+10FFFF, a sequence cut short - or a NUL, unless
** keep_nul (JSON can carry it as "\u0000"; a C string cannot). */
size_t text_char_len(const char *s, size_t n, int keep_nul);

/* Whether s ends in suffix, ignoring ASCII case (0 when s is NULL): a
** model file's ".gguf". */
int text_ends_nocase(const char *s, const char *suffix);

/* Whether s[0..len) is valid UTF-8 without NUL bytes. */
int text_valid(const char *s, size_t len);

/* The bytes of s[0..len) before the first that starts no valid UTF-8
** character (or a NUL): len when all of it is valid. */
size_t text_valid_len(const char *s, size_t len);

/* The characters (Unicode code points) of s[0..len), valid UTF-8: the
** bytes that do not continue one. */
size_t text_chars(const char *s, size_t len);

/* The longest prefix of s[0..len) of at most max bytes that does not end
** inside a UTF-8 sequence (valid input stays valid). */
size_t text_cut(const char *s, size_t len, size_t max);

/* Put pre before the message msg (a buffer of n bytes) unless it starts
** with pre already, the message's end cut between characters to fit: a
** failed constructor's message, said again each time its handle is used
** ("this agent was not made (askdb_agent_new() failed): ..."). */
void text_prefix_once(char *msg, size_t n, const char *pre);

/* Append s[0..len) to b as valid UTF-8 (invalid bytes as U+FFFD). With
** max > 0 at most max bytes of s are taken, cut between characters and
** followed by "..." when something was left out. */
void text_put(struct buf *b, const char *s, size_t len, size_t max);

/* Append s between two q characters with each q inside doubled: SQL's
** quoting of a name (q '"', SQLite's %w) or of a string literal (q '\'',
** %q); FTS5 quotes its strings the same way. The bytes of s are copied
** as they are (UTF-8 or not); an empty s gives the two quotes alone. Use
** it for every name in SQL we build, so no name can end the quote. */
void text_put_quoted(struct buf *b, const char *s, char q);

/* The file name of path without its directories and its extension
** ("shop" for "data/shop.db"), malloc()ed; NULL when out of memory. */
char *text_file_stem(const char *path);

/* s itself when it is valid UTF-8, else a repaired copy (s is freed).
** Takes s over; NULL when s is NULL or out of memory. */
char *text_repair(char *s);

/* 1 when the host of url (scheme://[user@]host[:port]/...) is domain or
** one of its subdomains, ignoring ASCII case; else 0. */
int text_url_host_is(const char *url, const char *domain);

/*
** The one rule for a URL whose password cannot be told where it ends.
** auth is what follows the URL's "scheme://"; the authority ends at the
** first of the characters in ends, as the program that reads the URL
** sees it (libcurl: "/?#"; libpq and MariaDB's driver take a '#' for part
** of the password: "/?"). An '@' after that end means either a password
** holding one of them unencoded ("u:pa/ss@host/db") or a path, query or
** fragment holding an '@' ("host:3306/a@b"), and nothing tells which: all
** from the first ':' of auth to its last '@' may be the password's.
** Returns that last '@', or NULL when no '@' follows the authority's end
** (a password then ends at the last '@' inside it). *colon is set to that
** first ':' when it comes before the returned '@' (what to hide, up to
** the '@'), else to NULL (nothing to hide). Both point into auth.
*/
const char *text_url_ambiguous(const char *auth, const char *ends,
                               const char **colon);

#endif
