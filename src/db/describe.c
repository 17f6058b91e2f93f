/* describe.c - a database described for a program: the schema as JSON and
** a statement's query plan (askdb_db_schema_json, askdb_db_explain). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json.h"
#include "db/db.h"

static json_t *column_json(const struct db_column *c)
{
    json_t *o = json_object(), *samples = json_array();
    int i;

    jsonx_set_str(o, "name", c->name);
    jsonx_set_str(o, "type", c->type ? c->type : "");
    json_object_set_new(o, "notnull", json_boolean(c->notnull));
    json_object_set_new(o, "default", jsonx_string(c->dflt));
    json_object_set_new(o, "pk", json_integer(c->pk));
    for (i = 0; i < c->nsamples; i++)
        json_array_append_new(samples, jsonx_string(c->samples[i]));
    json_object_set_new(o, "samples", samples);
    return o;
}

static json_t *table_json(const struct db_table *t)
{
    json_t *o = json_object(), *cols = json_array(), *fks = json_array(),
           *uq = json_array();
    int i;

    jsonx_set_str(o, "name", schema_qname(t));
    if (t->namespace)
        jsonx_set_str(o, "schema", t->namespace);
    json_object_set_new(o, "kind", json_string(t->is_view ? "view"
                                                          : "table"));
    json_object_set_new(o, "rows", t->rows < 0 ? json_null()
                                               : json_integer(t->rows));
    json_object_set_new(o, "rows_capped", json_boolean(t->rows_capped));
    for (i = 0; i < t->ncols; i++)
        json_array_append_new(cols, column_json(&t->cols[i]));
    for (i = 0; i < t->nfks; i++)
        json_array_append_new(
            fks, json_pack("{s:o, s:o, s:o}", "from",
                           jsonx_string(t->fks[i].from), "table",
                           jsonx_string(t->fks[i].table), "to",
                           jsonx_string(t->fks[i].to)));
    for (i = 0; i < t->nuniques; i++)
        json_array_append_new(uq, jsonx_string(t->uniques[i]));
    json_object_set_new(o, "columns", cols);
    json_object_set_new(o, "foreign_keys", fks);
    json_object_set_new(o, "unique", uq);
    return o;
}

askdb_status askdb_db_schema_json(askdb_db *db, int flags, char **out)
{
    const struct db_schema *s;
    json_t *o, *tables;
    askdb_status rc;
    char *text;
    int i;

    rc = db_api_schema(db, out, &s);
    if (rc)
        return rc;
    text = schema_render(s);
    o = json_object();
    tables = json_array();
    if (!o || !tables || !text) {
        json_decref(o);
        json_decref(tables);
        free(text);
        return ASKDB_ERR_NOMEM;
    }
    json_object_set_new(o, "engine", json_string(db->drv->name));
    jsonx_set_str(o, "path", db->label);
    jsonx_set_str(o, "version", db->version);
    for (i = 0; i < s->ntables; i++)
        json_array_append_new(tables, table_json(&s->tables[i]));
    json_object_set_new(o, "tables", tables);
    jsonx_set_str(o, "text", text);
    free(text);
    *out = askdb_json_shorten_reals(json_dumps(
        o, JSON_PRESERVE_ORDER |
               (flags & ASKDB_JSON_PRETTY ? JSON_INDENT(2) : JSON_COMPACT)));
    json_decref(o);
    if (!*out)
        return ASKDB_ERR_NOMEM;
    db->errmsg[0] = '\0';
    return ASKDB_OK;
}

askdb_status askdb_db_explain(askdb_db *db, const char *sql,
                              askdb_result **out)
{
    struct db_err e;
    struct buf b;
    askdb_status rc;

    rc = db_api_begin(db, sql, out);
    if (rc)
        return rc;
    /* The statement itself passes the guard first, exactly as it would
    ** run; only then its plan is asked for. */
    rc = db_check(db, sql, &e);
    if (rc)
        return rc;
    buf_init(&b, 0);
    /* SQLite's plan; DuckDB's driver takes the same words as its plan
    ** request (a plain EXPLAIN is refused there, as from the model); the
    ** servers' EXPLAIN (it does not run the statement there either). */
    buf_puts(&b, strcmp(db->drv->name, "sqlite") == 0 ||
                         strcmp(db->drv->name, "duckdb") == 0
                     ? "EXPLAIN QUERY PLAN "
                     : "EXPLAIN ");
    buf_puts(&b, sql);
    if (buf_err(&b)) {
        buf_free(&b);
        return ASKDB_ERR_NOMEM;
    }
    rc = db_run(db, b.data, out, &e);
    buf_free(&b);
    return rc;
}
