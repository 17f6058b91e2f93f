/* answer.c - a short plain-English answer from the question and the rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/steps.h"
#include "core/json.h"
#include "core/text.h"

#define ANSWER_ROWS 20       /* rows shown to the model */
#define ANSWER_CELL 80       /* bytes of a text value shown */
#define ANSWER_LOW_CONF 0.5  /* below this share of agreeing candidates
                                the answer says it is unsure */

/*
** The model writes the sentences; what the reader must not miss (a
** truncated result, low agreement between candidates) is said by us after
** them, so it is there whatever the model writes.
*/
enum agent_outcome agent_step_answer(struct agent_state *st)
{
    askdb_answer *a = st->ans;
    int fb = agent_use_fallback(st); /* the result finish() returns */
    const askdb_result *r = fb ? st->fallback : st->result;
    const char *sql = fb ? st->fallback_sql : st->sql;
    struct llm_msg msgs[2];
    struct buf rows, notes, user, out;
    askdb_status rc;
    double conf = fb ? st->fallback_conf : a->confidence;
    char *reply;
    size_t n;

    if (!r)
        return OUT_OK;
    /* The rows are final: a front end may show them while the words are
    ** written (the JSON has no rows, the event lends them). */
    agent_emit_result(st->ag, ASKDB_EVENT_RESULT,
                      json_pack("{s:o, s:I, s:o, s:f}", "sql",
                                jsonx_string(sql ? sql : ""), "row_count",
                                (json_int_t)r->nrows, "truncated",
                                r->truncated == 0 ? json_false()
                                : json_string(r->truncated == 1 ? "rows"
                                                                : "bytes"),
                                "confidence",
                                a->ncandidates <= 1 ? 1.0 : conf),
                      r);
    st->result_shown = 1;
    buf_init(&rows, 0);
    agent_rows_text(&rows, r, ANSWER_ROWS, ANSWER_CELL);
    buf_init(&notes, 0);
    if (r->truncated)
        buf_printf(&notes, "The result was cut off at %ld rows, so it is "
                           "incomplete. ", r->nrows);
    if (a->ncandidates > 1 && conf < ANSWER_LOW_CONF)
        buf_printf(&notes, "Only %.0f%% of the candidate queries agreed on "
                           "this result, so it may be wrong. ",
                   conf * 100);
    buf_init(&user, 0);
    prompt_answer(&user, st->question, sql, rows.data ? rows.data : "",
                  notes.data);
    msgs[0].role = "system";
    msgs[0].content = prompt_answer_system();
    msgs[1].role = "user";
    msgs[1].content = user.data;
    reply = buf_err(&user) || buf_err(&rows)
                ? NULL
                : agent_call(st, "answer", msgs, 2, NULL, 160, NULL, &rc);
    buf_free(&user);
    buf_free(&rows);
    /* An empty reply (a reasoning model may spend all its tokens
    ** thinking) is no answer either: a blank line would stand for one. */
    if (reply && reply[strspn(reply, " \t\r\n")] == '\0') {
        free(reply);
        reply = NULL;
        snprintf(st->errbuf, sizeof st->errbuf, "the model's reply was "
                                                "empty");
    }
    if (!reply) {
        /* No sentences is no reason to lose the rows; nor is a cancel
        ** while they were written (the asker has the rows already). */
        if (atomic_load(&st->ag->cancel))
            snprintf(st->errbuf, sizeof st->errbuf, "cancelled");
        agent_log(st, "answer", "no answer in words: %s", st->errbuf);
        agent_emit(st->ag, ASKDB_EVENT_ANSWER_TEXT,
                    json_pack("{s:o}", "error", jsonx_string(st->errbuf)));
        buf_free(&notes);
        return OUT_OK;
    }
    n = strlen(reply);
    while (n > 0 && (reply[n - 1] == '\n' || reply[n - 1] == ' '))
        reply[--n] = '\0';
    buf_init(&out, 0);
    buf_puts(&out, reply + strspn(reply, " \n"));
    if (notes.len) {
        buf_puts(&out, "\nNote: ");
        buf_append(&out, notes.data, notes.len - 1); /* no final blank */
    }
    free(reply);
    buf_free(&notes);
    free(a->text);
    a->text = buf_steal(&out);
    return OUT_OK;
}
