/* generate.c - the generate step: ask the model for SQL candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/steps.h"
#include "sql/extract.h"

/*
** Whether the first attempt asks for the greedy reply alone and the other
** candidates only when it is unsure (cfg.candidate_gate). A provider that
** cannot say how sure its tokens were (min_p -1: all but the local model)
** always gets the others asked too, one call each as without the gate.
*/
static int gated(const askdb_agent *ag)
{
    return ag->cfg.candidate_gate > 0;
}

/* How sure the model was of a reply: the least probability of a token it
** chose, white space aside; -1 when the provider cannot say. */
static double sure(const struct llm_reply *r)
{
    return r->min_p_words;
}

/*
** One call of the model for candidates first .. first + n - 1 of the
** current attempt (req->first_reply says the same): the prompt event, the
** call, its time, tokens and calls added to the answer, and a reply event
** for each; why (or NULL) says why later candidates are asked for ("unsure",
** "no confidence": the provider cannot say). On failure the replies hold
** no text and the first reply event says why.
*/
static askdb_status ask_model(struct agent_state *st,
                              const struct llm_request *req, int first,
                              int n, struct llm_reply *reps, const char *why)
{
    askdb_agent *ag = st->ag;
    askdb_answer *a = st->ans;
    askdb_attempt *at = &a->attempts[a->nattempts - 1];
    int i, total = first + n, gate = gated(ag) && ag->cfg.candidates > 1;
    askdb_status rc;
    json_t *ev;

    ev = json_object();
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
    if (gate && a->nattempts == 1)
        json_object_set_new(ev, "gate", json_real(ag->cfg.candidate_gate));
    agent_emit(ag, ASKDB_EVENT_PROMPT, ev);
    if (first == 0)
        agent_log(st, "generate", "attempt %d: asking %s (%d messages, %d "
                  "candidate%s)", a->nattempts, llm_name(ag->model),
                  st->nmsgs, n, n == 1 ? "" : "s");

    if (n == 1 && first == 0)
        rc = llm_complete(ag->model, req, reps);
    else
        rc = llm_complete_n(ag->model, req, n, reps);
    /* Its time once, its tokens summed over the candidates; the calls as
    ** the provider made them (one batch, or one call a reply). */
    a->llm_calls += n > 1 && !llm_batches_replies(ag->model) ? n : 1;
    a->t.llm_ms += reps[0].ms;
    at->llm_ms += reps[0].ms;
    for (i = 0; i < n; i++) {
        if (reps[i].prompt_tokens > 0)
            a->prompt_tokens += reps[i].prompt_tokens -
                                (i + first > 0 ? reps[i].cached_tokens : 0);
        if (reps[i].completion_tokens > 0)
            a->completion_tokens += reps[i].completion_tokens;
    }
    for (i = 0; i < n; i++) {
        ev = agent_reply_event(&reps[i], reps[i].text);
        json_object_set_new(ev, "attempt", json_integer(a->nattempts));
        if (total > 1 || (gate && a->nattempts == 1))
            json_object_set_new(ev, "candidate", json_integer(first + i + 1));
        if (rc && i == 0)
            jsonx_set_str(ev, "error", llm_errmsg(ag->model));
        agent_emit(ag, ASKDB_EVENT_REPLY, ev);
    }
    return rc;
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
    const char *why;
    askdb_status rc;
    int i, n = 1, nsql = 0;

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
    req.on_token = ag->cfg.token_fn;
    req.token_ud = ag->cfg.token_ud;
    agent_mark_stable(st, &req);

    memset(reps, 0, sizeof reps);
    if (n > 1 && gated(ag)) {
        /* The greedy reply alone first; the others only when it was
        ** unsure of some token (cfg.candidate_gate). */
        rc = ask_model(st, &req, 0, 1, reps, NULL);
        if (rc == ASKDB_OK && sure(&reps[0]) >= ag->cfg.candidate_gate) {
            agent_log(st, "generate", "the greedy reply is sure of its "
                      "tokens (least p %.3f >= %.3f): one candidate",
                      sure(&reps[0]), ag->cfg.candidate_gate);
            n = 1;
        } else if (rc == ASKDB_OK) {
            if (sure(&reps[0]) < 0)
                agent_log(st, "generate", "%s cannot say how sure it was: %d "
                          "more candidate%s", llm_name(ag->model), n - 1,
                          n == 2 ? "" : "s");
            else
                agent_log(st, "generate", "the greedy reply is unsure (least "
                          "p %.3f < %.3f): %d more candidate%s",
                          sure(&reps[0]), ag->cfg.candidate_gate, n - 1,
                          n == 2 ? "" : "s");
            req.first_reply = 1;
            rc = ask_model(st, &req, 1, n - 1, &reps[1],
                           sure(&reps[0]) < 0 ? "no confidence" : "unsure");
            if (rc) /* all or nothing, as one call of n would be */
                llm_reply_free(&reps[0]);
        }
    } else {
        rc = ask_model(st, &req, 0, n, reps, NULL);
    }
    if (rc) {
        at->error = ASKDB_EC_LLM;
        at->message = strdup(llm_errmsg(ag->model));
        snprintf(st->errbuf, sizeof st->errbuf, "%s", llm_errmsg(ag->model));
        st->fatal = rc;
        for (i = 0; i < n; i++)
            llm_reply_free(&reps[i]);
        return OUT_FATAL;
    }
    agent_log(st, "generate", "reply in %.0f ms (%ld+%ld tokens)", reps[0].ms,
              reps[0].prompt_tokens, reps[0].completion_tokens);

    agent_cands_clear(st);
    for (i = 0; i < n; i++) {
        struct agent_cand *c = &st->cands[st->ncands++];

        c->reply = reps[i].text;
        reps[i].text = NULL;
        llm_reply_free(&reps[i]);
        c->sql = c->reply ? sqlx_extract(c->reply, &why) : NULL;
        if (!c->sql)
            agent_cand_fail(c, ASKDB_EC_NO_SQL, c->reply ? why : "empty reply");
        else
            nsql++;
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
