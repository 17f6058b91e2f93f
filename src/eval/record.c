/* record.c - build, write and read the per-item JSON records of an eval. */
#include "eval/record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

static json_t *value_json(const askdb_value *v)
{
    static const char hex[] = "0123456789abcdef";
    struct buf b;
    json_t *o;
    size_t i;

    switch (v->type) {
    case ASKDB_NULL:
        return json_null();
    case ASKDB_INTEGER:
        return json_integer((json_int_t)v->i);
    case ASKDB_REAL:
        if (isfinite(v->d))
            return json_real(v->d);
        return json_string(isnan(v->d) ? "NaN"
                                       : (v->d < 0 ? "-Infinity"
                                                   : "Infinity"));
    case ASKDB_TEXT:
        return jsonx_text(v->s, v->len, 0);
    case ASKDB_BLOB:
        buf_init(&b, 0);
        for (i = 0; i < v->len; i++) {
            buf_putc(&b, hex[(unsigned char)v->s[i] >> 4]);
            buf_putc(&b, hex[(unsigned char)v->s[i] & 15]);
        }
        o = json_object();
        json_object_set_new(o, "blob_hex",
                            json_stringn(b.data ? b.data : "", b.len));
        buf_free(&b);
        return o;
    }
    return json_null();
}

json_t *rec_result(const askdb_result *r, long max_rows)
{
    json_t *o = json_object(), *cols = json_array(), *rows = json_array();
    long i;
    int c;

    if (!o || !cols || !rows) {
        json_decref(o);
        json_decref(cols);
        json_decref(rows);
        return NULL;
    }
    for (c = 0; c < r->ncols; c++)
        json_array_append_new(cols, jsonx_string(r->cols[c]));
    for (i = 0; i < r->nrows && i < max_rows; i++) {
        json_t *row = json_array();
        for (c = 0; c < r->ncols; c++)
            json_array_append_new(row, value_json(&r->cells[i * r->ncols + c]));
        json_array_append_new(rows, row);
    }
    json_object_set_new(o, "columns", cols);
    json_object_set_new(o, "rows", rows);
    json_object_set_new(o, "row_count", json_integer(r->nrows));
    json_object_set_new(o, "truncated", json_boolean(r->truncated != 0));
    return o;
}

json_t *rec_new(const struct suite_item *it)
{
    json_t *o = json_object();

    if (!o)
        return NULL;
    json_object_set_new(o, "index", json_integer(it->index));
    /* Where to find it in a JSON-lines file: blank lines are no items,
    ** so the index alone does not say. */
    if (it->line > 0)
        json_object_set_new(o, "line", json_integer(it->line));
    jsonx_set_str(o, "db", it->db_id);
    jsonx_set_str(o, "question", it->question);
    if (it->hint)
        jsonx_set_str(o, "hint", it->hint);
    jsonx_set_str(o, "difficulty", it->difficulty);
    jsonx_set_str(o, "gold", it->gold);
    json_object_set_new(o, "pred", json_null());
    json_object_set_new(o, "correct", json_false());
    json_object_set_new(o, "class", json_null());
    json_object_set_new(o, "bad", json_null());
    json_object_set_new(o, "message", json_null());
    return o;
}

const char *rec_class_of(askdb_error_class ec)
{
    switch (ec) {
    case ASKDB_EC_NONE: return NULL;
    case ASKDB_EC_NO_SQL: return REC_NO_SQL;
    case ASKDB_EC_REFUSED: return REC_REFUSED;
    case ASKDB_EC_SYNTAX: return REC_SYNTAX;
    case ASKDB_EC_UNKNOWN_TABLE:
    case ASKDB_EC_UNKNOWN_COLUMN: return REC_UNKNOWN_NAME;
    case ASKDB_EC_RUNTIME: return REC_RUNTIME;
    case ASKDB_EC_TIMEOUT: return REC_TIMEOUT;
    case ASKDB_EC_EMPTY: return REC_EMPTY;
    case ASKDB_EC_LLM: return REC_MODEL;
    case ASKDB_EC_CHECK: return REC_WRONG;
    case ASKDB_EC_DATABASE: return REC_RUNTIME;
    }
    return REC_RUNTIME;
}

/* Milliseconds to the microsecond: timings are not more exact than that. */
static json_t *ms_value(double ms)
{
    return json_real(round(ms * 1000.0) / 1000.0);
}

void rec_set_ms(json_t *rec, const char *key, double ms)
{
    json_t *o = json_object_get(rec, "ms");

    if (!json_is_object(o)) {
        o = json_object();
        json_object_set_new(rec, "ms", o);
    }
    json_object_set_new(o, key, ms_value(ms));
}

void rec_set_answer(json_t *rec, const askdb_answer *a)
{
    json_t *classes = json_array();
    int i;

    for (i = 0; i < a->nattempts; i++)
        json_array_append_new(
            classes, json_string(askdb_error_class_str(a->attempts[i].error)));
    json_object_set_new(rec, "attempts", json_integer(a->nattempts));
    json_object_set_new(rec, "repairs",
                        json_integer(a->nattempts > 1 ? a->nattempts - 1 : 0));
    json_object_set_new(rec, "attempt_classes", classes);
    json_object_set_new(rec, "llm_calls", json_integer(a->llm_calls));
    json_object_set_new(rec, "candidates", json_integer(a->ncandidates));
    json_object_set_new(rec, "confidence", json_real(a->confidence));
    json_object_set_new(rec, "settled", json_integer(a->nsettled));
    if (a->not_a_question)
        json_object_set_new(rec, "not_a_question", json_true());
    json_object_set_new(rec, "prompt_tokens",
                        json_integer(a->prompt_tokens));
    json_object_set_new(rec, "completion_tokens",
                        json_integer(a->completion_tokens));
    rec_set_ms(rec, "schema", a->t.schema_ms);
    rec_set_ms(rec, "prompt", a->t.prompt_ms);
    rec_set_ms(rec, "model", a->t.llm_ms);
    rec_set_ms(rec, "validate", a->t.validate_ms);
    rec_set_ms(rec, "exec", a->t.exec_ms);
    rec_set_ms(rec, "total", a->t.total_ms);
}

int rec_write(FILE *f, const json_t *rec)
{
    /* Every real the shortest text that reads back (0.1, not
    ** 0.10000000000000001; 2/3 with all its digits, which 15 digits
    ** cut), as askdb writes JSON everywhere else. */
    char *line = askdb_json_shorten_reals(
        json_dumps(rec, JSON_COMPACT | JSON_REAL_PRECISION(17)));
    size_t n;
    int rc = -1;

    if (!line)
        return -1;
    n = strlen(line);
    line[n] = '\n'; /* jsonx_dump's NUL becomes the line end */
    if (fwrite(line, 1, n + 1, f) == n + 1 && fflush(f) == 0)
        rc = 0;
    free(line);
    return rc;
}

double rec_ms(const json_t *rec, const char *key)
{
    const json_t *v = json_object_get(json_object_get(rec, "ms"), key);

    return json_is_number(v) ? json_number_value(v) : 0.0;
}

int rec_bool(const json_t *rec, const char *key)
{
    return json_is_true(json_object_get(rec, key));
}
