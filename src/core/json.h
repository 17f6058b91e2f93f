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

/* Set o[key] to a new string (NULL -> JSON null). Returns 0 or -1. */
int jsonx_set_str(json_t *o, const char *key, const char *s);

#endif
