/* schema_step.c - the schema step: read the schema, build the grammar. */
#include <stdio.h>
#include <string.h>

#include "agent/steps.h"
#include "sql/grammar.h"

/* Read the schema and build the grammar (first question only). */
enum agent_outcome agent_step_schema(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    double t0 = db_now_ms();
    askdb_status rc;
    json_t *ev;

    rc = db_schema(ag->db, &st->schema);
    if (rc) {
        snprintf(st->errbuf, sizeof st->errbuf, "%s",
                 askdb_db_errmsg(ag->db));
        st->fatal = rc;
        return OUT_FATAL;
    }
    if (st->schema->ntables == 0) {
        snprintf(st->errbuf, sizeof st->errbuf,
                 "database '%s' has no tables or views to ask about",
                 ag->db->label);
        st->fatal = ASKDB_ERR_DB_OPEN;
        return OUT_FATAL;
    }
    if (ag->schema_text)
        return OUT_OK;
    ag->schema_text = schema_render(st->schema);
    if (!ag->schema_text)
        return agent_nomem(st);
    /* Constrained decoding: the model can then only write one read-only
    ** statement over this database's own names. */
    if (llm_supports_grammar(ag->model) && !ag->cfg.no_grammar) {
        ag->grammar = sqlx_grammar_dialect(
            st->schema, sqlx_dialect_of(db_dialect(ag->db)));
        if (!ag->grammar)
            return agent_nomem(st);
    }
    st->ans->t.schema_ms = db_now_ms() - t0;
    ev = json_object();
    json_object_set_new(ev, "tables", json_integer(st->schema->ntables));
    json_object_set_new(ev, "bytes",
                        json_integer((json_int_t)strlen(ag->schema_text)));
    json_object_set_new(ev, "ms", json_real(st->ans->t.schema_ms));
    json_object_set_new(ev, "grammar_bytes",
                        json_integer(ag->grammar
                                     ? (json_int_t)strlen(ag->grammar)
                                     : 0));
    agent_emit(ag, ASKDB_EVENT_SCHEMA, ev);
    agent_log(st, "schema", "%d tables, %zu bytes, %.2f ms",
              st->schema->ntables, strlen(ag->schema_text),
              st->ans->t.schema_ms);
    return OUT_OK;
}
