/* request.h - the API's POST bodies, parsed and checked (request.c). */
#ifndef ASKDB_SERVER_REQUEST_H
#define ASKDB_SERVER_REQUEST_H

#include <jansson.h>
#include <stddef.h>

#include "askdb.h"

/* The limits of the API's strings, in characters (Unicode code points) as
** the OpenAPI document's maxLength counts them: a question or a statement
** may be up to 4 times as many bytes (a name is ASCII, serve.c). */
#define SRV_MAX_NAME 127        /* characters of a database name */
#define SRV_MAX_QUESTION ASKDB_MAX_QUESTION /* the library's: 8192 */
#define SRV_MAX_SQL 65536       /* characters of a statement */
#define SRV_MAX_CONV_ID 36      /* bytes of a conversation id */

/* What the parsers return besides 0. */
#define SRV_BAD_JSON (-1)       /* not a JSON object: 400 bad_json */
#define SRV_BAD_REQUEST (-2)    /* fields missing or wrong: 400 */

/* POST /api/ask. The strings are borrowed from root. */
struct srv_ask_req {
    json_t *root;
    const char *database;
    const char *question;        /* non-empty, no NUL */
    const char *conversation_id; /* NULL, or srv_good_id() */
    int answer;                  /* options.answer */
};

/* POST /api/sql. */
struct srv_sql_req {
    json_t *root;
    const char *database;
    const char *sql;
};

/*
** Parse a body of len bytes (untrusted: any bytes). 0 with *out filled
** (free with srv_req_free, or json_decref(out->root) for sql), or
** SRV_BAD_JSON / SRV_BAD_REQUEST with the reason in why (n bytes) and
** nothing to free.
*/
int srv_parse_ask(const char *body, size_t len, struct srv_ask_req *out,
                  char *why, size_t n);
int srv_parse_sql(const char *body, size_t len, struct srv_sql_req *out,
                  char *why, size_t n);
void srv_req_free(struct srv_ask_req *r);

/* Whether s is 1 to max bytes of ASCII letters, digits and the characters
** of extra: the ids and names the API carries (never NUL, never a path's
** '/'). */
int srv_token_ok(const char *s, size_t max, const char *extra);

/* Whether s is a good conversation id: letters, digits, '-', '_', 1 to
** SRV_MAX_CONV_ID bytes. */
int srv_good_id(const char *s);

#endif
