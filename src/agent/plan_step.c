/* plan_step.c - the plan step: a plan for a multi-step question, its
** tasks run in order, and the final statement written with the earlier
** tasks' results in view (the parsing is in plan.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/steps.h"
#include "agent/plan.h"
#include "core/json.h"
#include "core/text.h"
#include "sql/extract.h"

/*
** One task: a statement for it alone, written with the queries and first
** rows of the tasks it depends on in view, run through the guard. done[i]
** gets what it did (its query and first rows, or why it has none) for the
** tasks after it and the final statement, also when it failed: a failed
** step is still worth telling. Returns ASKDB_OK, or the model's status
** when it failed (st->errbuf says why).
*/
static askdb_status run_task(struct agent_state *st, const struct plan *p,
                             int i, char **done)
{
    askdb_agent *ag = st->ag;
    const struct plan_task *t = &p->tasks[i];
    struct llm_msg msgs[2];
    struct buf b;
    struct db_err e;
    askdb_result *r = NULL;
    askdb_status rc;
    const char *why;
    char *reply, *sql, *shown, cutbuf[256];
    int k, cut = 0;

    buf_init(&b, 0);
    buf_puts(&b, st->msgs[1].content);
    buf_printf(&b, "\nThe question is answered in steps. Write the query "
                   "for step %d only: %s\n", t->id, t->text);
    for (k = 0; k < t->ndeps; k++)
        if (done[t->deps[k]])
            buf_puts(&b, done[t->deps[k]]);
    msgs[0] = st->msgs[0];
    msgs[1].role = "user";
    msgs[1].content = b.data;
    if (buf_err(&b)) {
        buf_free(&b);
        return ASKDB_ERR_NOMEM;
    }
    reply = agent_call(st, "plan_task", msgs, 2, ag->grammar,
                       ag->cfg.max_tokens, &cut, &rc);
    buf_free(&b);
    if (!reply)
        return rc;
    /* A reply cut at max_tokens may end in a statement cut short. */
    sql = NULL;
    if (cut)
        why = agent_cut_why(st, cut, cutbuf, sizeof cutbuf);
    else
        sql = sqlx_extract(reply, &why);
    free(reply);
    buf_init(&b, 0);
    buf_printf(&b, "Step %d (%s):\n", t->id, t->text);
    if (!sql) {
        buf_printf(&b, "no query (%s)\n", why);
    } else {
        /* shown cut, as a repair shows it: it goes into the first message
        ** of every later request of the question */
        shown = agent_text_kept(sql, "-- ", "query");
        if (!shown) {
            free(sql);
            buf_free(&b);
            return ASKDB_ERR_NOMEM;
        }
        buf_printf(&b, "```sql\n%s\n```\n", shown);
        free(shown);
        if (db_run(ag->db, sql, &r, &e)) {
            buf_printf(&b, "failed: %s\n", e.msg);
        } else {
            buf_puts(&b, "Result:\n");
            agent_rows_text(&b, r, 5, 60);
            askdb_result_free(r);
        }
        free(sql);
    }
    done[i] = buf_steal(&b);
    return done[i] ? ASKDB_OK : ASKDB_ERR_NOMEM;
}

enum agent_outcome agent_step_plan(struct agent_state *st)
{
    struct plan p;
    struct buf notes;
    char *reply, *done[PLAN_MAX_TASKS] = {0};
    char why[256];
    askdb_status rc, err = ASKDB_OK;
    json_t *ev;
    int i;

    if (!plan_needed(st->question)) {
        agent_emit(st->ag, ASKDB_EVENT_PLAN,
                    json_pack("{s:b}", "needed", 0));
        return OUT_OK;
    }
    reply = agent_call_aside(st, "plan", prompt_plan(), NULL, 256, &rc);
    if (!reply) {
        agent_emit(st->ag, ASKDB_EVENT_PLAN,
                   json_pack("{s:b, s:o}", "needed", 1, "error",
                             jsonx_string(st->errbuf)));
        st->fatal = rc;
        return OUT_FATAL;
    }
    if (plan_parse(reply, &p, why, sizeof why)) {
        /* A bad plan is not fatal: the question is answered in one step. */
        agent_emit(st->ag, ASKDB_EVENT_PLAN,
                    json_pack("{s:b, s:o}", "needed", 1, "error",
                              jsonx_string(why)));
        agent_log(st, "plan", "invalid plan (%s): one step", why);
        free(reply);
        return OUT_OK;
    }
    free(reply);
    ev = json_object();
    json_object_set_new(ev, "needed", json_true());
    json_object_set_new(ev, "tasks", json_integer(p.ntasks));
    if (p.ntasks < 2) {
        agent_emit(st->ag, ASKDB_EVENT_PLAN, ev);
        plan_free(&p);
        return OUT_OK;
    }
    /* Every task but the last runs now; the last is the final statement,
    ** written by the main loop with these results in view. */
    buf_init(&notes, 0);
    buf_puts(&notes, "The question was broken into steps; the earlier "
                     "steps were run:\n");
    for (i = 0; i < p.ntasks - 1 && !err; i++) {
        err = run_task(st, &p, i, done);
        if (!err)
            buf_puts(&notes, done[i]);
    }
    buf_printf(&notes, "Final step %d: %s\n", p.tasks[p.ntasks - 1].id,
               p.tasks[p.ntasks - 1].text);
    for (i = 0; i < PLAN_MAX_TASKS; i++)
        free(done[i]);
    plan_free(&p);
    if (err)   /* the model failed on a task: the plan says why */
        jsonx_set_str(ev, "error", err == ASKDB_ERR_NOMEM ? "out of memory"
                                                          : st->errbuf);
    agent_emit(st->ag, ASKDB_EVENT_PLAN, ev);
    if (err) { /* the model failed mid-plan, as the provider says */
        buf_free(&notes);
        if (err == ASKDB_ERR_NOMEM)
            return agent_nomem(st);
        st->fatal = err;
        return OUT_FATAL;
    }
    st->plan_notes = buf_steal(&notes);
    if (!st->plan_notes || agent_rebuild_first_message(st))
        return agent_nomem(st);
    return OUT_OK;
}
