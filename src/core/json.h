/* json.h - the one JSON library (jansson) and the few helpers askdb adds. */
#ifndef ASKDB_JSON_H
#define ASKDB_JSON_H

#include <jansson.h>

/*
** All JSON is parsed and built with jansson; never with printf. These
** helpers read untrusted JSON (model replies) without asserting on shape.
*/

/* o[key] as a string, or NULL when missing or not a string. Borrowed. */
const char *jsonx_str(const json_t *o, const char *key);

/* o[key] as an integer, or dflt when missing or not a number. */
long long jsonx_int(const json_t *o, const char *key, long long dflt);

/* Serialize compactly; malloc()ed, caller frees with free(). NULL on OOM. */
char *jsonx_dump(const json_t *v);

/*
** A JSON string of the n bytes at s that always serializes: bytes that
** are not valid UTF-8 (SQLite does not check text; a model's reply can
** stop inside a character) become U+FFFD, and so does NUL unless keep_nul
** (jansson reads "\u0000" back only with JSON_ALLOW_NUL); characters as
** text_char_len() (core/text.h) tells them. New reference, NULL when out
** of memory.
*/
json_t *jsonx_text(const char *s, size_t n, int keep_nul);

/* A JSON string of the C string s, repaired as jsonx_text() does when it
** is not UTF-8; JSON null for NULL. New reference, NULL only when out of
** memory (json_pack()'s "o" then fails the whole pack). */
json_t *jsonx_string(const char *s);

/* Set o[key] to jsonx_string(s). Returns 0 or -1. */
int jsonx_set_str(json_t *o, const char *key, const char *s);

#endif
