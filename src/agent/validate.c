/* validate.c - the validate step: check every candidate without running it. */
#include <stdio.h>

#include <stdlib.h>

#include "agent/steps.h"
#include "sql/analyze.h"
#include "sql/extract.h"

/*
** A deterministic fix before any repair asks the model: a candidate that
** names a column under a table that lacks it is re-qualified by the one
** table of its query level that has it (sqla_requalify). The fix stands
** only when the engine's prepare then accepts the statement. 1 fixed (c
** now holds the new SQL), 0 not, -1 out of memory.
*/
static int requalify(struct agent_state *st, int i, struct agent_cand *c)
{
    askdb_agent *ag = st->ag;
    struct db_err e;
    char *fixed = NULL, *what = NULL;
    int n = sqla_requalify(c->sql, st->schema, &fixed, &what);

    if (n <= 0)
        return n;
    if (db_check(ag->db, fixed, &e)) {
        free(fixed);
        free(what);
        return 0;
    }
    agent_emit(ag, ASKDB_EVENT_FIX,
               json_pack("{s:s,s:i,s:s,s:s,s:s}", "kind", "requalify",
                         "candidate", i, "changes", what, "from", c->sql,
                         "sql", fixed));
    agent_log(st, "fix", "requalify: %s", what);
    free(c->sql);
    c->sql = fixed;
    free(what);
    return 1;
}

/* Check every candidate without running it: shape, then the engine's own
** prepare under the read-only guard. */
enum agent_outcome agent_step_validate(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct db_err e;
    char why[256], msg[320];
    double t0 = db_now_ms();
    int i, first_ok = -1;

    for (i = 0; i < st->ncands; i++) {
        struct agent_cand *c = &st->cands[i];

        if (!c->sql)
            continue;
        if (sqlx_check_readonly(c->sql, why, sizeof why)) {
            snprintf(msg, sizeof msg, "refused: %s", why);
            agent_cand_fail(c, ASKDB_EC_REFUSED, msg);
        } else if (db_check(ag->db, c->sql, &e) &&
                   !(e.ec == ASKDB_EC_UNKNOWN_COLUMN && ag->cfg.requalify &&
                     requalify(st, i, c) > 0)) {
            agent_cand_fail(c, e.ec, e.msg);
        } else if (first_ok < 0) {
            first_ok = i;
        }
    }
    st->ans->t.validate_ms += db_now_ms() - t0;
    if (first_ok < 0) {
        /* Repair the greedy candidate (or the first with SQL). */
        for (i = 0; i < st->ncands && !st->cands[i].sql; i++)
            ;
        if (i == st->ncands)
            i = 0;
        agent_take_cand(st, i);
        agent_fail_attempt(st, st->cands[i].ec,
                     st->cands[i].err ? st->cands[i].err : "invalid");
        return OUT_RETRY;
    }
    if (st->ncands > 1 || first_ok > 0) {
        json_t *ev = json_object(), *arr = json_array();
        for (i = 0; i < st->ncands; i++)
            json_array_append_new(
                arr, json_string(askdb_error_class_str(st->cands[i].ec)));
        json_object_set_new(ev, "ok", json_true());
        json_object_set_new(ev, "candidates", arr);
        agent_emit(ag, ASKDB_EVENT_VALIDATE, ev);
    } else {
        agent_emit(ag, ASKDB_EVENT_VALIDATE, json_pack("{s:b}", "ok", 1));
    }
    agent_log(st, "validate", "ok");
    return OUT_OK;
}
