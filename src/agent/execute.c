/* execute.c - the execute step: run the candidates, vote by their results,
** check the winner. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/check.h"
#include "agent/steps.h"
#include "db/rescmp.h"
#include "sql/extract.h"

/* Whether c comes before b among candidates whose results both have rows
** or both have none: more votes; on a tie the model's own SQL before one
** a deterministic fix made. Neither: the earlier candidate stays first. */
static int outranks(const struct agent_cand *c, const struct agent_cand *b)
{
    return c->votes > b->votes ||
           (c->votes == b->votes && b->fixed && !c->fixed);
}

/*
** Group the executed candidates by identical results (the EX rules of
** eval/compare.c) and return the winner: most votes, non-empty results
** before empty ones; on a tie, the model's own SQL before one a
** deterministic fix made (a guess: `name` may have meant `title`), then
** the earliest (greedy) candidate.
*/
static int vote(struct agent_state *st, int *nran)
{
    int i, j, best = -1;

    *nran = 0;
    for (i = 0; i < st->ncands; i++) {
        struct agent_cand *c = &st->cands[i];

        c->votes = 0;
        if (!c->result)
            continue;
        (*nran)++;
        for (j = 0; j < st->ncands; j++) {
            const struct agent_cand *d = &st->cands[j];
            if (d->result &&
                rescmp_equal(c->result, d->result,
                              rescmp_order_matters(c->sql)) == 1)
                c->votes++;
        }
    }
    for (i = 0; i < st->ncands; i++) {
        const struct agent_cand *c = &st->cands[i];
        if (!c->result)
            continue;
        if (best < 0) {
            best = i;
            continue;
        }
        if ((c->result->nrows > 0) != (st->cands[best].result->nrows > 0)) {
            if (c->result->nrows > 0)
                best = i;
            continue;
        }
        if (outranks(c, &st->cands[best]))
            best = i;
    }
    return best;
}

#define SELECT_MAX 4      /* queries shown to the selection step */
#define SELECT_ROWS 3     /* first rows shown of each */
#define SELECT_CELL 60    /* bytes of a cell shown */

/* Ask the model which of the n candidates opt[] (in that order) answers
** the question. Returns the chosen candidate, or -1 with *why set (a
** static text, or st->errbuf). */
static int select_ask(struct agent_state *st, const int *opt, int n,
                      const char **why)
{
    int i, j, t, pick = -1;
    char grammar[64], *reply = NULL;
    askdb_status rc = ASKDB_ERR_NOMEM;
    struct buf b;

    buf_init(&b, 0);
    buf_puts(&b, "\nDifferent queries were written for this question, and "
                 "they give different results:\n");
    for (j = 0; j < n; j++) {
        const struct agent_cand *c = &st->cands[opt[j]];
        buf_printf(&b, "\nQuery %d:\n```sql\n%s\n```\nResult, %ld row%s%s:"
                       "\n", j + 1, c->sql, c->result->nrows,
                   c->result->nrows == 1 ? "" : "s",
                   c->result->nrows > SELECT_ROWS ? ", the first ones" : "");
        agent_rows_text(&b, c->result, SELECT_ROWS, SELECT_CELL);
    }
    buf_puts(&b, "\nWhich query answers the question exactly as asked? "
                 "Reply with its number only.\n");
    t = snprintf(grammar, sizeof grammar, "root ::= [1-%d]\n", n);
    if (!buf_err(&b) && t > 0 && (size_t)t < sizeof grammar)
        reply = agent_call_aside(st, "select", b.data,
                                 llm_supports_grammar(st->ag->model) &&
                                 !st->ag->cfg.no_grammar ? grammar : NULL,
                                 4, &rc);
    buf_free(&b);
    if (reply) {
        for (i = 0; reply[i] && !(reply[i] >= '0' && reply[i] <= '9'); i++)
            ;
        if (reply[i] >= '1' && reply[i] - '1' < n &&
            !(reply[i + 1] >= '0' && reply[i + 1] <= '9'))
            pick = opt[reply[i] - '1'];
    }
    *why = pick >= 0 ? NULL
           : reply ? "no query number in the reply"
           : rc == ASKDB_ERR_NOMEM ? "out of memory" : st->errbuf;
    free(reply);
    return pick;
}

/*
** The selection step (cfg.select). When the winner's votes are matched
** by candidates with other non-empty results, the vote is a tie decided
** by the order of the candidates. Then the model is shown one query of
** each tied result with its first rows and picks the one that answers
** the question (one token: the local model's grammar allows only the
** numbers; the prompt reuses the cached schema and question). A small
** model tends to pick a position (the last query shown) rather than a
** query, so it is asked twice, the queries in candidate order and in
** reverse, and its pick counts only when both name the same query.
** Returns the chosen candidate; when the two disagree, or the model fails
** or says nothing usable, the vote's winner stands, and the "select"
** event says why.
*/
static int select_tied(struct agent_state *st, int win)
{
    const struct agent_cand *w = &st->cands[win];
    int opt[SELECT_MAX], rev[SELECT_MAX], n = 0, i, j, pick = -1, p1, p2;
    const char *why = NULL;
    json_t *ev, *opts;

    if (!w->result || w->result->nrows == 0)
        return win;
    for (i = 0; i < st->ncands && n < SELECT_MAX; i++) {
        const struct agent_cand *c = &st->cands[i];
        if (!c->result || c->result->nrows == 0 || c->votes != w->votes)
            continue;
        for (j = 0; j < n; j++)
            if (rescmp_equal(c->result, st->cands[opt[j]].result,
                             rescmp_order_matters(c->sql)) == 1)
                break;
        if (j == n)
            opt[n++] = i;
    }
    if (n < 2)
        return win;
    for (j = 0; j < n; j++)
        rev[j] = opt[n - 1 - j];
    p1 = select_ask(st, opt, n, &why);
    p2 = p1 >= 0 ? select_ask(st, rev, n, &why) : -1;
    if (p1 >= 0 && p2 >= 0) {
        if (p1 == p2)
            pick = p1;
        else
            why = "the two orders picked different queries";
    }
    ev = json_object();
    opts = json_array();
    for (j = 0; j < n; j++)
        json_array_append_new(opts, json_integer(opt[j] + 1));
    json_object_set_new(ev, "options", opts);
    json_object_set_new(ev, "voted", json_integer(win + 1));
    if (p1 >= 0)
        json_object_set_new(ev, "picks", json_pack("[i,i]", p1 + 1,
                                                   p2 >= 0 ? p2 + 1 : 0));
    json_object_set_new(ev, "chosen", json_integer((pick >= 0 ? pick : win) +
                                                   1));
    if (pick < 0)
        json_object_set_new(ev, "error", json_string(why ? why : "?"));
    agent_emit(st->ag, ASKDB_EVENT_SELECT, ev);
    agent_log(st, "select", "%d tied results: candidate %d%s", n,
              (pick >= 0 ? pick : win) + 1, pick >= 0 ? "" : " (the vote's)");
    return pick >= 0 ? pick : win;
}

/* Record an empty result as the attempt's failure. Its causes that a
** look can tell are said with it: a compared subquery that reads the
** outer query's column (check "outer_ref": NOT IN is then false for
** every row); a column compared with itself ("self_compare": c.x > c.x
** is never true); else a value compared in the wrong column, when the value
** index (with --values), or a look into the query's tables and their
** neighbours, finds the value stored elsewhere (check
** "value_elsewhere"). */
static void empty_result(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct buf notes, why;
    const char *kind = "outer_ref";
    int n = 0;

    buf_init(&notes, 0);
    if (ag->cfg.checks) {
        n = check_outer_refs(st->schema, st->sql, &notes);
        if (n == 0) {
            kind = "self_compare";
            n = check_self_compares(st->schema, st->sql, &notes);
        }
        if (n == 0) {
            kind = "value_elsewhere";
            n = check_value_elsewhere(ag->db, st->schema, ag->values,
                                      st->sql, &notes);
        }
    }
    if (n <= 0 || buf_err(&notes)) {
        buf_free(&notes);
        agent_fail_attempt(st, ASKDB_EC_EMPTY, "the query returned no rows");
        return;
    }
    agent_emit(ag, ASKDB_EVENT_CHECK,
               json_pack("{s:s,s:s}", "kind", kind, "hint", notes.data));
    buf_init(&why, 0);
    buf_printf(&why, "the query returned no rows. %s", notes.data);
    agent_fail_attempt(st, ASKDB_EC_EMPTY, buf_err(&why)
                                               ? "the query returned no rows"
                                               : why.data);
    buf_free(&why);
    buf_free(&notes);
}

/* Run the statement of ended reply text early, as validate and execute
** would when it needs no fix; e->sql and e->result stay NULL otherwise. */
static void run_early(struct agent_state *st, struct agent_early *e,
                      const char *text)
{
    askdb_agent *ag = st->ag;
    askdb_result *r = NULL;
    struct db_err err;
    const char *why;
    char buf[256];
    char *sql = text ? sqlx_extract(text, &why) : NULL;
    int ok = sql && !sqlx_check_readonly(sql, buf, sizeof buf) &&
             !db_check(ag->db, sql, &err);

    /* Its time is inside the model call's (llm_ms), not counted again. */
    if (!ok) {
        free(sql);
        return;
    }
    if (db_run(ag->db, sql, &r, &err) != 0 ||
        (r->nrows == 0 && r->truncated == 2)) {
        /* The execute step runs it again and says why. */
        askdb_result_free(r);
        free(sql);
        sql = NULL;
        r = NULL;
    }
    e->sql = sql;
    e->result = r;
}

/* How many of the ended candidates have a result equal to that of e
** (compared as vote() compares, with e's statement's order rule). */
static int early_votes(const struct agent_state *st,
                       const struct agent_early *e)
{
    int j, v = 0;

    for (j = 0; j < AGENT_MAX_CANDS; j++)
        if (st->early[j].result &&
            rescmp_equal(e->result, st->early[j].result,
                         rescmp_order_matters(e->sql)) == 1)
            v++;
    return v;
}

int agent_settle(void *ud, int i, const char *text, int pending)
{
    struct agent_state *st = ud;
    const struct agent_early *g = &st->early[0];
    int j, v, w, other = 0, open = pending;

    if (i < 0 || i >= AGENT_MAX_CANDS || st->early[i].ended)
        return 0;
    st->early[i].ended = 1;
    run_early(st, &st->early[i], text);
    if (!g->result || g->result->nrows == 0)
        return 0;
    v = early_votes(st, g);
    for (j = 1; j < AGENT_MAX_CANDS; j++) {
        const struct agent_early *e = &st->early[j];

        if (!e->ended)
            continue;
        if (!e->result) {
            open++;    /* a fix may still make it run, with any result */
            continue;
        }
        if (e->result->nrows > 0 &&
            rescmp_equal(g->result, e->result,
                         rescmp_order_matters(g->sql)) != 1 &&
            (w = early_votes(st, e)) > other)
            other = w;
    }
    if (v <= other + open)
        return 0;
    agent_log(st, "generate", "settled: %d candidates agree on the greedy "
              "candidate's result, which the %d still being written "
              "cannot outvote", v, pending);
    return 1;
}

/* The checks' findings on sql and its result r (the idle-join check left
** out when it is switched off): 0, or -1 out of memory. */
static int findings_of(struct agent_state *st, const char *sql,
                       const askdb_result *r, struct check_finding **f,
                       int *nf)
{
    askdb_agent *ag = st->ag;
    int rc;

    rc = check_before(ag->db, st->schema, ag->values, st->question, sql, f,
                      nf);
    if (rc == 0 && !ag->cfg.idle_join)
        check_drop_kind(*f, nf, CHECK_IDLE_JOIN);
    if (rc == 0 && *nf == 0) {
        check_findings_free(*f, *nf); /* the array an idle join was in */
        rc = check_after(st->question, sql, r, f, nf);
    }
    return rc;
}

/*
** When a check doubts the vote's winner: another candidate of the same
** attempt whose result has rows, differs from the winner's, and draws no
** finding of any check, taken before a repair is asked (no model call,
** and no risk that the repair loses what the query had right: an ORDER
** BY ... LIMIT 1 dropped with the join a hint said to remove). Ranked as
** the vote ranks (outranks()), then candidate order. Returns it, or -1.
*/
static int clean_candidate(struct agent_state *st, int win)
{
    const askdb_result *w = st->result;
    struct check_finding *f;
    int i, best = -1, nf;

    for (i = 0; i < st->ncands; i++) {
        const struct agent_cand *c = &st->cands[i];

        if (i == win || !c->result || c->result->nrows == 0 || !c->sql)
            continue;
        if (best >= 0 && !outranks(c, &st->cands[best]))
            continue;
        if (rescmp_equal(c->result, w, rescmp_order_matters(c->sql)) == 1)
            continue;
        f = NULL;
        nf = 0;
        if (findings_of(st, c->sql, c->result, &f, &nf) == 0 && nf == 0)
            best = i;
        check_findings_free(f, nf);
    }
    return best;
}

/* Run the candidates with the limits, vote, then check the winner. */
enum agent_outcome agent_step_execute(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct check_finding *f = NULL;
    struct db_err e;
    double t0 = db_now_ms();
    askdb_result *r;
    json_t *ev;
    int i, win, nran, rc, nf = 0, first_err = -1, nsettled = 0;

    for (i = 0; i < st->ncands; i++) {
        struct agent_cand *c = &st->cands[i];

        if (!c->sql || c->ec != ASKDB_EC_NONE)
            continue;
        if (st->early[i].result && strcmp(st->early[i].sql, c->sql) == 0) {
            /* run while the others were being written (agent_settle()) */
            c->result = st->early[i].result;
            st->early[i].result = NULL;
            continue;
        }
        r = NULL;
        /* Not empty when cut before its first row: that row alone is
        ** over the byte cap, and the statement is repaired. */
        if (db_run(ag->db, c->sql, &r, &e) == 0)
            (void)db_first_row_over_cap(ag->db, &r, &e);
        if (!r) {
            agent_cand_fail(c, e.ec, e.msg);
            if (first_err < 0)
                first_err = i;
            continue;
        }
        c->result = r;
    }
    st->ans->t.exec_ms += db_now_ms() - t0;
    win = vote(st, &nran);
    if (win >= 0 && st->ag->cfg.select && st->ncands > 1)
        win = select_tied(st, win);
    if (win < 0) {
        /* None ran: repair the first that failed running; the attempt
        ** records its SQL with its error. */
        if ((i = agent_db_failure(st)) >= 0)
            return agent_db_failed(st, i);
        i = first_err >= 0 ? first_err : 0;
        agent_take_cand(st, i);
        agent_record_sql(st);
        agent_fail_attempt(st, st->cands[i].ec, st->cands[i].err);
        return OUT_RETRY;
    }
    agent_take_cand(st, win);
    askdb_result_free(st->result);
    st->result = st->cands[win].result;
    st->cands[win].result = NULL;
    r = st->result;
    /* The share of all N candidates of the question: a repair asks for
    ** one, so what it gives has the support of 1 of N. */
    st->ans->confidence = (double)st->cands[win].votes /
                          st->ans->ncandidates;
    ev = json_object();
    json_object_set_new(ev, "rows", json_integer(r->nrows));
    json_object_set_new(ev, "truncated", json_integer(r->truncated));
    json_object_set_new(ev, "ms", json_real(r->exec_ms));
    if (st->ncands > 1) {
        json_t *votes = json_array();
        for (i = 0; i < st->ncands; i++)
            json_array_append_new(votes,
                                  json_integer(st->cands[i].result || i == win
                                               ? st->cands[i].votes : 0));
        json_object_set_new(ev, "candidate", json_integer(win + 1));
        json_object_set_new(ev, "votes", votes);
        json_object_set_new(ev, "ran", json_integer(nran));
        for (i = 0; i < st->ncands; i++)
            nsettled += st->cands[i].settled;
        if (nsettled)
            json_object_set_new(ev, "settled", json_integer(nsettled));
        json_object_set_new(ev, "confidence",
                            json_real(st->ans->confidence));
    }
    st->ans->nsettled = nsettled;   /* 0 for a repair's one candidate */
    agent_emit(ag, ASKDB_EVENT_EXECUTE, ev);
    agent_log(st, "execute", "%ld row%s in %.2f ms%s", r->nrows,
              r->nrows == 1 ? "" : "s", r->exec_ms,
              r->truncated ? " (truncated)" : "");
    agent_record_sql(st);

    if (r->nrows == 0) {
        st->empty_seen++;
        /* Keep the first empty result: it stands if the retry fails. */
        if (!st->fallback) {
            agent_keep_fallback(st, st->sql, r);
            st->result = NULL;
        }
        empty_result(st);
        return OUT_EMPTY;
    }

    /* Checks: a finding costs one repair; what the repair gives stands. */
    if (!ag->cfg.checks || st->check_repairs > 0)
        return OUT_OK;
    t0 = db_now_ms();
    rc = findings_of(st, st->sql, r, &f, &nf);
    st->ans->t.validate_ms += db_now_ms() - t0;
    if (rc) /* out of memory: the result goes unchecked, and says so */
        agent_emit(ag, ASKDB_EVENT_CHECK,
                    json_pack("{s:s}", "error", "out of memory"));
    if (nf == 0) {
        check_findings_free(f, nf);
        return OUT_OK;
    }
    t0 = db_now_ms();
    i = ag->cfg.clean_candidate ? clean_candidate(st, win) : -1;
    st->ans->t.validate_ms += db_now_ms() - t0;
    ev = json_object();
    json_object_set_new(ev, "kind", json_string(check_kind_str(f[0].kind)));
    jsonx_set_str(ev, "hint", f[0].hint);
    if (i >= 0)
        json_object_set_new(ev, "instead", json_integer(i + 1));
    agent_emit(ag, ASKDB_EVENT_CHECK, ev);
    if (i >= 0) {
        agent_log(st, "check", "%s; candidate %d, which no check doubts, "
                  "stands instead", check_kind_str(f[0].kind), i + 1);
        check_findings_free(f, nf);
        agent_take_cand(st, i);
        askdb_result_free(st->result);
        st->result = st->cands[i].result;
        st->cands[i].result = NULL;
        st->ans->confidence = (double)st->cands[i].votes /
                              st->ans->ncandidates;
        agent_record_sql(st);
        return OUT_OK;
    }
    free(st->check_hint);
    st->check_hint = strdup(f[0].hint);
    st->check_repairs++;
    agent_keep_fallback(st, st->sql, r);
    st->result = NULL;
    agent_fail_attempt(st, ASKDB_EC_CHECK, f[0].hint);
    check_findings_free(f, nf);
    return OUT_RETRY;
}
