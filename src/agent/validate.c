/* validate.c - the validate step: check every candidate without running it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/steps.h"
#include "sql/analyze.h"
#include "sql/extract.h"

/* Say one fix of candidate i: a "fix" event and the log. */
static void fix_said(struct agent_state *st, int i, const char *kind,
                     const char *what, const char *from, const char *sql,
                     int ok)
{
    agent_emit(st->ag, ASKDB_EVENT_FIX,
               json_pack("{s:s,s:i,s:s,s:s,s:s,s:b}", "kind", kind,
                         "candidate", i + 1, "changes", what, "from", from,
                         "sql", sql, "ok", ok));
    agent_log(st, "fix", "%s: %s", kind, what);
}

/* The end of a chain of fixes: sql (owned, may be NULL) becomes c's when
** the last fix was accepted (ok), else it is dropped. Returns ok. */
static int fix_take(struct agent_cand *c, char *sql, int ok)
{
    if (!ok || !sql) {
        free(sql);
        return 0;
    }
    free(c->sql);
    c->sql = sql;
    c->fixed = 1;
    return 1;
}

/*
** Deterministic fixes before any repair asks the model, for a candidate
** that names a column where no table has it:
**   requalify  the one table of its query level that has it takes it
**              (sqla_requalify);
**   join       the one table of the schema that has it, linked by one
**              foreign key, is joined in (sqla_join_missing).
** (And, below, the comparison of a number with text that the engine
** refuses: fix_cast.)
** A fix stands only when the engine's prepare then accepts the statement
** or fails on another unknown column, which the next round may fix (at
** most 3). Each fix is a "fix" event. 1 fixed (c holds the new SQL), 0
** not, -1 out of memory.
*/
static int fix_columns(struct agent_state *st, int i, struct agent_cand *c)
{
    askdb_agent *ag = st->ag;
    struct db_err e;
    char *fixed, *what, *sql = NULL;
    const char *kind;
    int round, n, ok = 0;

    for (round = 0; round < 3 && !ok; round++) {
        const char *cur = sql ? sql : c->sql;
        fixed = what = NULL;
        kind = "requalify";
        n = ag->cfg.requalify ? sqla_requalify(cur, st->schema, &fixed, &what)
                              : 0;
        if (n == 0 && ag->cfg.join_missing) {
            kind = "join";
            n = sqla_join_missing(cur, st->schema, &fixed, &what);
        }
        if (n <= 0)
            break;
        ok = db_check(ag->db, fixed, &e) == ASKDB_OK;
        if (!ok && e.ec != ASKDB_EC_UNKNOWN_COLUMN) {
            free(fixed);
            free(what);
            break;
        }
        fix_said(st, i, kind, what, cur, fixed, ok);
        free(what);
        free(sql);
        sql = fixed;
    }
    return fix_take(c, sql, ok);
}

/*
** A comparison the engine refuses between a number and text (PostgreSQL:
** "operator does not exist: bigint = text", with the operator's position):
** both sides compared as text (sqla_cast_compare), since Spider-style
** schemas key a table by an INTEGER column and another by a TEXT one that
** SQLite compares freely. Up to 3 such comparisons, one a round; the fix
** stands only when the engine's prepare then accepts the statement (a
** "fix" event of kind "cast" each). *e is the failure that led here; 1
** fixed (c holds the new SQL), 0 not, -1 out of memory.
*/
static int fix_cast(struct agent_state *st, int i, struct agent_cand *c,
                    const struct db_err *first)
{
    askdb_agent *ag = st->ag;
    struct db_err e = *first;
    char *fixed, *what, *sql = NULL;
    int round, n, ok = 0;

    for (round = 0; round < 3 && !ok; round++) {
        const char *cur = sql ? sql : c->sql;
        if (e.pos < 0 || !strstr(e.msg, "operator does not exist"))
            break;
        fixed = what = NULL;
        n = sqla_cast_compare(cur, e.pos, &fixed, &what);
        if (n <= 0)
            break;
        ok = db_check(ag->db, fixed, &e) == ASKDB_OK;
        fix_said(st, i, "cast", what, cur, fixed, ok);
        free(what);
        free(sql);
        sql = fixed;
    }
    return fix_take(c, sql, ok);
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
                   !(e.ec == ASKDB_EC_UNKNOWN_COLUMN &&
                     fix_columns(st, i, c) > 0) &&
                   !(ag->cfg.cast_compare && e.pos >= 0 &&
                     fix_cast(st, i, c, &e) > 0)) {
            agent_cand_fail(c, e.ec, e.msg);
        } else if (first_ok < 0) {
            first_ok = i;
        }
    }
    st->ans->t.validate_ms += db_now_ms() - t0;
    if (first_ok < 0) {
        if ((i = agent_db_failure(st)) >= 0)
            return agent_db_failed(st, i);
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
        int nsettled = 0;

        for (i = 0; i < st->ncands; i++) {
            json_array_append_new(
                arr, json_string(askdb_error_class_str(st->cands[i].ec)));
            nsettled += st->cands[i].settled;
        }
        json_object_set_new(ev, "ok", json_true());
        json_object_set_new(ev, "candidates", arr);
        if (nsettled)   /* among the no_sql ones: not needed, not bad */
            json_object_set_new(ev, "settled", json_integer(nsettled));
        agent_emit(ag, ASKDB_EVENT_VALIDATE, ev);
    } else {
        agent_emit(ag, ASKDB_EVENT_VALIDATE, json_pack("{s:b}", "ok", 1));
    }
    agent_log(st, "validate", "ok");
    return OUT_OK;
}
