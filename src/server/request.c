/* request.c - the JSON bodies of the API's POST requests, parsed and
** checked apart from HTTP (so that they can be fuzzed alone). */
#include <stdio.h>
#include <string.h>

#include "request.h"

/* The characters (Unicode code points) of n bytes of valid UTF-8, as JSON
** Schema's maxLength counts them: the bytes that do not continue one. */
static size_t chars_of(const char *s, size_t n)
{
    size_t i, c = 0;

    for (i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/*
** The bytes of the white space character that starts s (valid UTF-8), or
** 0: ECMA-262's WhiteSpace and LineTerminator, what "\S", the pattern of
** the question in the OpenAPI document, takes for white space (JSON
** Schema's regular expressions are ECMA-262's): ASCII's, and U+00A0,
** U+1680, U+2000 to U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and
** U+FEFF.
*/
static size_t space_len(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned long c;

    if (*u == ' ' || (*u >= '\t' && *u <= '\r'))
        return 1;
    if (u[0] == 0xC2 && u[1] == 0xA0)
        return 2;
    if ((u[0] & 0xF0) != 0xE0 || !u[1] || !u[2])
        return 0;
    c = ((u[0] & 0x0FUL) << 12) | ((u[1] & 0x3FUL) << 6) | (u[2] & 0x3FUL);
    return c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 ||
           c == 0xFEFF ? 3 : 0;
}

/* Whether s is nothing but white space (space_len()). */
static int blank(const char *s)
{
    size_t k;

    for (k = space_len(s); k != 0; k = space_len(s))
        s += k;
    return *s == '\0';
}

/* A string member (NULL when absent or null); *bad when present but not a
** string, longer than max characters, or holding a NUL. Characters, not
** bytes: the OpenAPI document's maxLength says so, and a question in
** Japanese gets as many as one in English. (jansson has checked that the
** text is UTF-8.) */
static const char *member(json_t *o, const char *key, size_t max, int *bad)
{
    json_t *v = json_object_get(o, key);

    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_string(v) ||
        strlen(json_string_value(v)) != json_string_length(v) ||
        chars_of(json_string_value(v), json_string_length(v)) > max) {
        *bad = 1;
        return NULL;
    }
    return json_string_value(v);
}

/* The body as a JSON object; NULL with the reason (a bad_json one). */
static json_t *object_of(const char *body, size_t len, char *why, size_t n)
{
    json_error_t je;
    json_t *o = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &je);

    if (!o || !json_is_object(o)) {
        snprintf(why, n, "the body is not a JSON object%s%s", o ? "" : ": ",
                 o ? "" : je.text);
        json_decref(o);
        return NULL;
    }
    return o;
}

int srv_token_ok(const char *s, size_t max, const char *extra)
{
    size_t i;

    if (!s || !*s)
        return 0;
    for (i = 0; s[i]; i++)
        if (i >= max ||
            !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= 'A' && s[i] <= 'Z') || strchr(extra, s[i])))
            return 0;
    return 1;
}

int srv_good_id(const char *s)
{
    return srv_token_ok(s, SRV_MAX_CONV_ID, "-_");
}

int srv_parse_ask(const char *body, size_t len, struct srv_ask_req *out,
                  char *why, size_t n)
{
    json_t *o, *opts;
    int bad = 0;

    memset(out, 0, sizeof *out);
    o = object_of(body, len, why, n);
    if (!o)
        return SRV_BAD_JSON;
    out->root = o;
    out->database = member(o, "database", SRV_MAX_NAME, &bad);
    out->question = member(o, "question", SRV_MAX_QUESTION, &bad);
    out->conversation_id = member(o, "conversation_id", SRV_MAX_CONV_ID,
                                  &bad);
    opts = json_object_get(o, "options");
    if (opts && !json_is_object(opts) && !json_is_null(opts))
        bad = 1;
    if (json_is_object(opts) && json_object_get(opts, "answer")) {
        if (!json_is_boolean(json_object_get(opts, "answer")))
            bad = 1;
        out->answer = json_is_true(json_object_get(opts, "answer"));
    }
    if (out->conversation_id && !srv_good_id(out->conversation_id))
        bad = 1;
    if (bad || !out->database || !out->question || blank(out->question)) {
        snprintf(why, n, "give \"database\" (at most %d characters) and "
                 "\"question\" as strings (the question not blank, at most "
                 "%d characters), and optionally \"conversation_id\" "
                 "(letters, digits, '-', '_', at most %d) and \"options\": "
                 "{\"answer\": true}", SRV_MAX_NAME, SRV_MAX_QUESTION,
                 SRV_MAX_CONV_ID);
        srv_req_free(out);
        return SRV_BAD_REQUEST;
    }
    return 0;
}

int srv_parse_sql(const char *body, size_t len, struct srv_sql_req *out,
                  char *why, size_t n)
{
    json_t *o;
    int bad = 0;

    memset(out, 0, sizeof *out);
    o = object_of(body, len, why, n);
    if (!o)
        return SRV_BAD_JSON;
    out->root = o;
    out->database = member(o, "database", SRV_MAX_NAME, &bad);
    out->sql = member(o, "sql", SRV_MAX_SQL, &bad);
    if (bad || !out->database || !out->sql) {
        snprintf(why, n, "give \"database\" (at most %d characters) and "
                 "\"sql\" as strings (the SQL at most %d characters)",
                 SRV_MAX_NAME, SRV_MAX_SQL);
        json_decref(o);
        memset(out, 0, sizeof *out);
        return SRV_BAD_REQUEST;
    }
    return 0;
}

void srv_req_free(struct srv_ask_req *r)
{
    json_decref(r->root);
    memset(r, 0, sizeof *r);
}
