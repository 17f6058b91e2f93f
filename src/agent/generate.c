/* generate.c - the generate step: ask the model for SQL candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/steps.h"
#include "sql/extract.h"

/*
** Ask the model and take the statements out of its replies: one greedy
** candidate, plus cfg.candidates - 1 sampled ones on the first attempt
** (decoded together in one batch by the local model).
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
    json_t *ev;
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

    ev = json_object();
    json_object_set_new(ev, "attempt", json_integer(a->nattempts));
    json_object_set_new(ev, "provider", json_string(llm_name(ag->model)));
    json_object_set_new(ev, "candidates", json_integer(n));
    json_object_set_new(ev, "messages", agent_msgs_json(st->msgs, st->nmsgs));
    agent_emit(ag, ASKDB_EVENT_PROMPT, ev);
    agent_log(st, "generate", "attempt %d: asking %s (%d messages, %d "
              "candidate%s)", a->nattempts, llm_name(ag->model), st->nmsgs,
              n, n == 1 ? "" : "s");

    memset(reps, 0, sizeof reps);
    if (n == 1)
        rc = llm_complete(ag->model, &req, &reps[0]);
    else
        rc = llm_complete_n(ag->model, &req, n, reps);
    /* Its time once, its tokens summed over the candidates; the calls as
    ** the provider made them (one batch, or one call a reply). */
    a->llm_calls += n > 1 && !llm_batches_replies(ag->model) ? n : 1;
    a->t.llm_ms += reps[0].ms;
    at->llm_ms = reps[0].ms;
    for (i = 0; i < n; i++) {
        if (reps[i].prompt_tokens > 0)
            a->prompt_tokens += reps[i].prompt_tokens -
                                (i > 0 ? reps[i].cached_tokens : 0);
        if (reps[i].completion_tokens > 0)
            a->completion_tokens += reps[i].completion_tokens;
    }
    for (i = 0; i < n; i++) {
        ev = agent_reply_event(&reps[i], reps[i].text);
        json_object_set_new(ev, "attempt", json_integer(a->nattempts));
        if (n > 1)
            json_object_set_new(ev, "candidate", json_integer(i + 1));
        if (rc && i == 0)
            jsonx_set_str(ev, "error", llm_errmsg(ag->model));
        agent_emit(ag, ASKDB_EVENT_REPLY, ev);
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
