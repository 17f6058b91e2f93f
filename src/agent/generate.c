/* generate.c - the generate step: ask the model for SQL candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/steps.h"
#include "core/text.h"
#include "sql/extract.h"

/*
** Whether the first attempt makes candidates 2.. only when the greedy one
** is unsure (cfg.candidate_gate, llm_request.gate). A provider that
** cannot say how sure its tokens were (all but the local model) always
** makes them all, one call each as without the gate.
*/
static int gated(const askdb_agent *ag)
{
    return ag->cfg.candidate_gate > 0;
}

/* The prompt event of candidates first .. first + n - 1 of the current
** attempt: with the messages for the first, with why more candidates came
** ("unsure", "no confidence": the provider cannot say) for later ones. */
static void prompt_event(struct agent_state *st, int first, int n,
                         const char *why)
{
    askdb_agent *ag = st->ag;
    askdb_answer *a = st->ans;
    json_t *ev = json_object();

    json_object_set_new(ev, "for", json_string("sql"));
    json_object_set_new(ev, "attempt", json_integer(a->nattempts));
    json_object_set_new(ev, "provider", json_string(llm_name(ag->model)));
    json_object_set_new(ev, "candidates", json_integer(n));
    if (first > 0)
        json_object_set_new(ev, "first_candidate", json_integer(first + 1));
    if (why)
        json_object_set_new(ev, "why", json_string(why));
    else
        json_object_set_new(ev, "messages",
                            agent_msgs_json(st->msgs, st->nmsgs));
    if (first == 0 && gated(ag) && ag->cfg.candidates > 1 &&
        a->nattempts == 1)
        json_object_set_new(ev, "gate", json_real(ag->cfg.candidate_gate));
    agent_emit(ag, ASKDB_EVENT_PROMPT, ev);
}

/*
** Why a reply gave no statement, with how it began (a refusal, a question
** back, prose: what the user would want to see), in buf; "empty reply"
** for nothing or blanks. why is sqlx_extract()'s.
*/
static const char *no_sql_why(const char *reply, const char *why, char *buf,
                              size_t n)
{
    size_t i, k, len;

    if (!reply)
        return "empty reply";
    reply += strspn(reply, " \t\r\n");
    if (!*reply)
        return "empty reply";
    len = strlen(reply);
    i = text_cut(reply, len, 80);   /* on a whole UTF-8 character */
    snprintf(buf, n, "%s; the reply began: \"%.*s%s\"", why, (int)i, reply,
             i < len ? "..." : "");
    for (k = 0; buf[k]; k++)
        if (buf[k] == '\n' || buf[k] == '\r' || buf[k] == '\t')
            buf[k] = ' ';
    return buf;
}

/* A candidate a provider without a batch did not ask for, once an earlier
** candidate's own request had failed (llm_reply.failed 2). */
#define NOT_ASKED "not asked: an earlier candidate's request failed"

/* The reply event of candidate k (numbered when several were asked). */
static void reply_event(struct agent_state *st, const struct llm_reply *r,
                        int k, int numbered, askdb_status rc)
{
    askdb_agent *ag = st->ag;
    json_t *ev = agent_reply_event(r, r->text);

    json_object_set_new(ev, "for", json_string("sql"));
    json_object_set_new(ev, "attempt", json_integer(st->ans->nattempts));
    if (numbered)
        json_object_set_new(ev, "candidate", json_integer(k + 1));
    if (rc && k == 0)
        jsonx_set_str(ev, "error", llm_errmsg(ag->model));
    else if (r->failed)
        jsonx_set_str(ev, "error", r->failed == 1 ? llm_errmsg(ag->model)
                                   : NOT_ASKED);
    agent_emit(ag, ASKDB_EVENT_REPLY, ev);
}

/*
** One call of the model for the n candidates of the current attempt (with
** req->gate, candidates 2.. only when the greedy one was unsure): the
** events, the call, its time, tokens and calls added to the answer.
** Returns how many candidates were made in *made. With a gate the first
** prompt event says 1 candidate, and when more were made a second prompt
** event (first_candidate 2, why) comes after the greedy reply's event, as
** if they had been asked after it; the local model in fact starts them in
** the same batch as soon as the greedy reply is unsure of a token. why
** (or NULL) says why this call is made again ("repeat"): its prompt
** event then has why instead of the messages. On failure the replies
** hold no text and the first reply event says why.
*/
static askdb_status ask_model(struct agent_state *st,
                              const struct llm_request *req, int n,
                              struct llm_reply *reps, int *made,
                              const char *why)
{
    askdb_agent *ag = st->ag;
    askdb_answer *a = st->ans;
    askdb_attempt *at = &a->attempts[a->nattempts - 1];
    int i, asked, gate = req->gate > 0 && n > 1;
    askdb_status rc;
    double p;

    prompt_event(st, 0, gate ? 1 : n, why);
    agent_log(st, "generate", "attempt %d: asking %s (%d messages, %d "
              "candidate%s%s)", a->nattempts, llm_name(ag->model),
              st->nmsgs, n, n == 1 ? "" : "s",
              gate ? ", the others if the first is unsure" : "");
    if (n == 1)
        rc = llm_complete(ag->model, req, reps);
    else
        rc = llm_complete_n(ag->model, req, n, reps);
    *made = 1;
    if (rc == ASKDB_OK)
        while (*made < n && !reps[*made].gated)
            (*made)++;
    /* Its time once, its tokens summed over the candidates; the calls as
    ** the provider made them (one batch, or one call a reply: not those
    ** settled before they were asked). */
    for (i = asked = 1; i < *made; i++)
        asked += !(reps[i].settled && !reps[i].text) && reps[i].failed != 2;
    a->llm_calls += asked > 1 && !llm_batches_replies(ag->model) ? asked : 1;
    a->t.llm_ms += reps[0].ms;
    at->llm_ms += reps[0].ms;
    for (i = 0; i < *made; i++) {
        if (reps[i].prompt_tokens > 0)
            a->prompt_tokens += reps[i].prompt_tokens -
                                (i > 0 ? reps[i].cached_tokens : 0);
        if (reps[i].completion_tokens > 0)
            a->completion_tokens += reps[i].completion_tokens -
                                    reps[i].branch_tokens;
    }
    reply_event(st, &reps[0], 0, n > 1, rc);
    p = reps[0].min_p_words;
    if (gate && rc == ASKDB_OK && *made == 1) {
        agent_log(st, "generate", "the greedy reply is sure of its tokens "
                  "(least p %.3f >= %.3f): one candidate", p, req->gate);
    } else if (gate && rc == ASKDB_OK) {
        if (p < 0)
            agent_log(st, "generate", "%s cannot say how sure it was: %d "
                      "more candidate%s", llm_name(ag->model), *made - 1,
                      *made == 2 ? "" : "s");
        else
            agent_log(st, "generate", "the greedy reply is unsure (least p "
                      "%.3f < %.3f): %d more candidate%s", p, req->gate,
                      *made - 1, *made == 2 ? "" : "s");
        prompt_event(st, 1, *made - 1, p < 0 ? "no confidence" : "unsure");
    }
    for (i = 1; i < (rc == ASKDB_OK ? *made : n); i++)
        reply_event(st, &reps[i], i, 1, rc);
    return rc;
}

/* A token count for the log: the number, or "?" when the provider did not
** say (-1). */
static const char *count(long n, char *buf, size_t size)
{
    if (n < 0)
        return "?";
    snprintf(buf, size, "%ld", n);
    return buf;
}

/* Whether an attempt that ended in ec could not be right as it was: the
** statement was refused or did not run. An empty result or a check's
** doubt may be right, and their repair says to repeat the query then. */
static int cannot_stand(askdb_error_class ec)
{
    return ec == ASKDB_EC_REFUSED || ec == ASKDB_EC_SYNTAX ||
           ec == ASKDB_EC_UNKNOWN_TABLE || ec == ASKDB_EC_UNKNOWN_COLUMN ||
           ec == ASKDB_EC_RUNTIME || ec == ASKDB_EC_TIMEOUT;
}

/* The earlier attempt (1-based) of this question whose statement could not
** stand (cannot_stand()) and is the SQL of reply r, or 0. */
static int repeats_failure(const askdb_answer *a, const struct llm_reply *r)
{
    const char *why;
    char *sql = r->text ? sqlx_extract(r->text, &why) : NULL;
    int i, k = 0;

    for (i = 0; sql && i < a->nattempts - 1 && !k; i++)
        if (a->attempts[i].sql && cannot_stand(a->attempts[i].error) &&
            strcmp(a->attempts[i].sql, sql) == 0)
            k = i + 1;
    free(sql);
    return k;
}

/*
** A repair whose reply repeats a statement that already failed
** (cfg.resample): greedy decoding that is stuck gives the same reply to
** the same prompt, so ask once more, sampled at the candidates'
** temperature with a seed of this attempt's own. The prompt event says
** why ("repeat"); the new reply replaces the old. ASKDB_OK also when
** nothing was asked.
*/
static askdb_status resample(struct agent_state *st, struct llm_request *req,
                             struct llm_reply *rep)
{
    askdb_agent *ag = st->ag;
    askdb_answer *a = st->ans;
    struct llm_request r = *req;
    struct llm_reply again;
    int k, made;
    askdb_status rc;

    if (!ag->cfg.resample || a->nattempts < 2)
        return ASKDB_OK;
    k = repeats_failure(a, rep);
    if (!k)
        return ASKDB_OK;
    agent_log(st, "generate", "the reply repeats the failed SQL of attempt "
              "%d: asking again, sampled", k);
    r.temperature = llm_candidate_temperature(req, 1);
    r.seed = llm_candidate_seed(req, a->nattempts);
    memset(&again, 0, sizeof again);
    rc = ask_model(st, &r, 1, &again, &made, "repeat");
    if (rc)
        return rc;
    llm_reply_free(rep);
    *rep = again;
    return ASKDB_OK;
}

/*
** Ask the model and take the statements out of its replies: one greedy
** candidate, plus cfg.candidates - 1 sampled ones on the first attempt
** (decoded together in one batch by the local model; with a gate, after
** the greedy one and only when it was unsure).
*/
enum agent_outcome agent_step_generate(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    askdb_answer *a = st->ans;
    struct llm_request req;
    struct llm_reply reps[AGENT_MAX_CANDS];
    askdb_attempt *at;
    char buf[256];
    const char *why;
    char cutbuf[256], ptok[24], ctok[24];
    askdb_status rc;
    int i, n = 1, made, nsql = 0;

    at = realloc(a->attempts, (size_t)(a->nattempts + 1) * sizeof *at);
    if (!at)
        return agent_nomem(st);
    a->attempts = at;
    at = &a->attempts[a->nattempts++];
    memset(at, 0, sizeof *at);
    if (a->nattempts == 1 && ag->cfg.candidates > 1)
        n = ag->cfg.candidates < AGENT_MAX_CANDS ? ag->cfg.candidates
                                                 : AGENT_MAX_CANDS;

    memset(&req, 0, sizeof req);
    req.msgs = st->msgs;
    req.nmsgs = st->nmsgs;
    req.temperature = ag->cfg.temperature;
    req.alt_temperature = ag->cfg.candidate_temperature;
    req.max_tokens = ag->cfg.max_tokens;
    req.seed = ag->cfg.seed;
    req.cancel = &ag->cancel;
    req.grammar = ag->grammar;
    req.sql_end = ag->grammar != NULL;
    req.on_token = ag->cfg.token_fn;
    req.token_ud = ag->cfg.token_ud;
    agent_mark_stable(st, &req);

    memset(reps, 0, sizeof reps);
    if (n > 1 && gated(ag))
        req.gate = ag->cfg.candidate_gate;
    if (n > 1)
        req.follow_cap = ag->cfg.candidate_cap;
    agent_early_clear(st);
    if (n > 1 && ag->cfg.settle) {
        req.on_end = agent_settle;
        req.end_ud = st;
    }
    rc = ask_model(st, &req, n, reps, &made, NULL);
    if (rc == ASKDB_OK && n == 1)
        rc = resample(st, &req, &reps[0]);
    if (rc) {
        at->error = ASKDB_EC_LLM;
        at->message = strdup(llm_errmsg(ag->model));
        snprintf(st->errbuf, sizeof st->errbuf, "%s", llm_errmsg(ag->model));
        st->fatal = rc;
        for (i = 0; i < n; i++)
            llm_reply_free(&reps[i]);
        return OUT_FATAL;
    }
    for (i = made; i < n; i++)   /* the gate's: never made */
        llm_reply_free(&reps[i]);
    n = made;
    if (reps[0].prompt_tokens < 0 && reps[0].completion_tokens < 0)
        agent_log(st, "generate", "reply in %.0f ms (tokens unknown)",
                  reps[0].ms);
    else
        agent_log(st, "generate", "reply in %.0f ms (%s+%s tokens)",
                  reps[0].ms, count(reps[0].prompt_tokens, ptok, sizeof ptok),
                  count(reps[0].completion_tokens, ctok, sizeof ctok));

    agent_cands_clear(st);
    for (i = 0; i < n; i++) {
        struct agent_cand *c = &st->cands[st->ncands++];

        c->reply = reps[i].text;
        c->settled = reps[i].settled;
        reps[i].text = NULL;
        /* A cut reply is left out: its statement may be cut short too
        ** (a LIMIT or a condition missing) and still run. */
        c->sql = c->reply && !reps[i].cut && !reps[i].settled
                     ? sqlx_extract(c->reply, &why) : NULL;
        if (reps[i].cut == LLM_CUT_MAX_TOKENS)
            st->max_cut = 1;
        if (!c->sql && reps[i].failed) {
            agent_cand_fail(c, ASKDB_EC_LLM, reps[i].failed == 1
                                                 ? llm_errmsg(ag->model)
                                                 : NOT_ASKED);
            agent_log(st, "generate", "candidate %d: %s", i + 1, c->err);
        } else if (!c->sql) {
            agent_cand_fail(c, ASKDB_EC_NO_SQL,
                            reps[i].cut == LLM_CUT_MAX_TOKENS ||
                                    reps[i].cut == LLM_CUT_CONTEXT
                                ? agent_cut_why(st, reps[i].cut, cutbuf,
                                                sizeof cutbuf)
                            : reps[i].cut ? "cut: still being written at the "
                                            "cap of the greedy reply's length"
                            : reps[i].settled ? "settled: not needed, the "
                                                "vote was decided without it"
                            : no_sql_why(c->reply, why, buf, sizeof buf));
        } else {
            nsql++;
        }
        llm_reply_free(&reps[i]);
    }
    if (n > a->ncandidates)
        a->ncandidates = n;
    agent_take_cand(st, 0);
    if (!nsql) {
        agent_fail_attempt(st, ASKDB_EC_NO_SQL, st->cands[0].err);
        return OUT_RETRY;
    }
    if (!st->sql) /* the greedy one had none: go on with the first that has */
        for (i = 1; i < n; i++)
            if (st->cands[i].sql) {
                agent_take_cand(st, i);
                break;
            }
    at->sql = strdup(st->sql);
    agent_log(st, "generate", "SQL: %s", st->sql);
    return OUT_OK;
}
