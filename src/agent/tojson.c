/* tojson.c - the answer and a result as JSON documents (askdb.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "askdb.h"
#include "core/buf.h"
#include "core/json.h"

/*
** One writer for every front end: `askdb ask -f json`, `askdb sql -f
** json`, the server's answers and its `done` event, and MCP's structured
** content all come from here, so they cannot drift apart. Text is untrusted
** (the database's and the model's): bytes that are not UTF-8 become U+FFFD,
** so no field is ever dropped and the document always parses; everything
** else, NUL included, is kept exactly (JSON escapes C0 controls, and with
** ASKDB_JSON_TERMINAL also DEL and C1).
*/

/* Text as a JSON string that always serializes (see above). */
static json_t *text_json(const char *s, size_t len)
{
    json_t *j = jsonx_text(s, len, 1);

    return j ? j : json_null();
}

/* A C string (or NULL -> null) as text_json() does it. */
static json_t *str_json(const char *s)
{
    return s ? text_json(s, strlen(s)) : json_null();
}

static json_t *value_json(const askdb_value *v)
{
    static const char hex[] = "0123456789abcdef";
    char *h;
    json_t *j;
    size_t i;

    switch (v->type) {
    case ASKDB_INTEGER:
        return json_integer((json_int_t)v->i);
    case ASKDB_REAL:
        /* JSON has no infinities or NaN: say which in a string. */
        if (isnan(v->d))
            return json_string("NaN");
        if (isinf(v->d))
            return json_string(v->d > 0 ? "Infinity" : "-Infinity");
        return json_real(v->d);
    case ASKDB_TEXT:
        return text_json(v->s, v->len);
    case ASKDB_BLOB:
        h = malloc(v->len * 2 + 1);
        if (!h)
            return NULL;
        for (i = 0; i < v->len; i++) {
            h[2 * i] = hex[(unsigned char)v->s[i] >> 4];
            h[2 * i + 1] = hex[(unsigned char)v->s[i] & 15];
        }
        h[2 * i] = '\0';
        j = json_pack("{s:s}", "blob_hex", h);
        free(h);
        return j;
    case ASKDB_NULL:
        break;
    }
    return json_null();
}

/* columns, rows, row_count, truncated of r into o. 0 or -1 (memory). */
static int add_result(json_t *o, const askdb_result *r)
{
    json_t *cols = json_array(), *rows = json_array();
    int err = !cols || !rows;
    long i;
    int c;

    for (c = 0; !err && c < r->ncols; c++)
        err = json_array_append_new(cols, str_json(r->cols[c]));
    for (i = 0; !err && i < r->nrows; i++) {
        json_t *row = json_array();
        for (c = 0; row && !err && c < r->ncols; c++)
            err = json_array_append_new(
                row, value_json(askdb_result_cell(r, i, c)));
        err |= json_array_append_new(rows, row);
    }
    err |= json_object_set_new(o, "columns", cols);
    err |= json_object_set_new(o, "rows", rows);
    err |= json_object_set_new(o, "row_count", json_integer(r->nrows));
    err |= json_object_set_new(
        o, "truncated",
        r->truncated == 0 ? json_false()
                          : json_string(r->truncated == 1 ? "rows" : "bytes"));
    return err ? -1 : 0;
}

/*
** DEL, the C1 controls (U+0080..U+009F: 0xC2 0x80..0x9F) and the
** bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069:
** invisible, they reorder what a terminal shows after them) as \u
** escapes. The JSON text outside strings is ASCII, so every such sequence
** is inside a string, where the escape means the same character.
*/
static char *escape_c1(char *text)
{
    struct buf b;
    const unsigned char *p;

    buf_init(&b, 0);
    for (p = (const unsigned char *)text; *p; p++) {
        if (*p == 0x7f) {
            buf_puts(&b, "\\u007f");
        } else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            buf_printf(&b, "\\u%04x", p[1]);
            p++;
        } else if (p[0] == 0xe2 && ((p[1] == 0x80 && p[2] >= 0xaa &&
                                     p[2] <= 0xae) ||
                                    (p[1] == 0x81 && p[2] >= 0xa6 &&
                                     p[2] <= 0xa9))) {
            buf_printf(&b, "\\u%04x",
                       ((p[1] & 0x3f) << 6 | (p[2] & 0x3f)) + 0x2000);
            p += 2;
        } else {
            buf_putc(&b, (char)*p);
        }
    }
    free(text);
    return buf_steal(&b);
}

/* Serialize o (consumed) into *out. */
static askdb_status dump(json_t *o, int err, int flags, char **out)
{
    size_t jf = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17);
    char *text;

    *out = NULL;
    jf |= flags & ASKDB_JSON_PRETTY ? JSON_INDENT(2) : JSON_COMPACT;
    text = o && !err ? json_dumps(o, jf) : NULL;
    json_decref(o);
    if (text)
        text = askdb_json_shorten_reals(text);
    if (text && flags & ASKDB_JSON_TERMINAL)
        text = escape_c1(text);
    if (!text)
        return ASKDB_ERR_NOMEM;
    *out = text;
    return ASKDB_OK;
}

askdb_status askdb_answer_json(const askdb_answer *a, int flags, char **out)
{
    json_t *o = json_object(), *atts = json_array(), *t;
    int i, err = !o || !atts;

    if (!a || !out) {
        json_decref(o);
        json_decref(atts);
        if (out)
            *out = NULL;
        return ASKDB_ERR_USAGE;
    }
    err |= json_object_set_new(o, "question", str_json(a->question));
    if (a->request_id)
        err |= json_object_set_new(o, "request_id", str_json(a->request_id));
    err |= json_object_set_new(o, "status",
                               json_string(askdb_status_str(a->status)));
    err |= json_object_set_new(o, "sql", str_json(a->sql));
    if (a->result && !err)
        err = add_result(o, a->result);
    if (a->error)
        err |= json_object_set_new(o, "error", str_json(a->error));
    for (i = 0; !err && i < a->nattempts; i++) {
        const askdb_attempt *at = &a->attempts[i];
        err = json_array_append_new(
            atts, json_pack("{s:o, s:s, s:o, s:f}", "sql", str_json(at->sql),
                            "error", askdb_error_class_str(at->error),
                            "message", str_json(at->message),
                            "llm_ms", at->llm_ms));
    }
    err |= json_object_set_new(o, "attempts", atts);
    t = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "schema_ms", a->t.schema_ms,
                  "prompt_ms", a->t.prompt_ms, "llm_ms", a->t.llm_ms,
                  "validate_ms", a->t.validate_ms, "exec_ms", a->t.exec_ms,
                  "total_ms", a->t.total_ms);
    err |= json_object_set_new(o, "timings", t);
    err |= json_object_set_new(o, "llm_calls", json_integer(a->llm_calls));
    err |= json_object_set_new(o, "candidates", json_integer(a->ncandidates));
    err |= json_object_set_new(o, "confidence", json_real(a->confidence));
    err |= json_object_set_new(o, "settled", json_integer(a->nsettled));
    err |= json_object_set_new(o, "answer", str_json(a->text));
    err |= json_object_set_new(o, "not_a_question",
                               json_boolean(a->not_a_question));
    err |= json_object_set_new(
        o, "tokens",
        json_pack("{s:I, s:I}", "prompt", (json_int_t)a->prompt_tokens,
                  "completion", (json_int_t)a->completion_tokens));
    return dump(o, err, flags, out);
}

askdb_status askdb_result_json(const askdb_result *r, const char *sql,
                               const char *error, int flags, char **out)
{
    json_t *o;
    int err;

    if (!out)
        return ASKDB_ERR_USAGE;
    *out = NULL;
    if (!r && !error)
        return ASKDB_ERR_USAGE; /* neither rows nor why there are none */
    o = json_object();
    err = !o;
    if (!err)
        err = json_object_set_new(o, "sql", str_json(sql));
    /* The error stands instead of the rows: rows beside it would read as
    ** the statement's answer. */
    if (r && !error && !err) {
        err = add_result(o, r);
        err |= json_object_set_new(o, "exec_ms", json_real(r->exec_ms));
    }
    if (error && !err)
        err = json_object_set_new(o, "error", str_json(error));
    return dump(o, err, flags, out);
}
