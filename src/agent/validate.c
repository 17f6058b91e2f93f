/* validate.c - the validate step: check every candidate without running it. */
#include <stdio.h>

#include "agent/steps.h"
#include "sql/extract.h"

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
        } else if (db_check(ag->db, c->sql, &e)) {
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
