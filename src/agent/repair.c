/* repair.c - the repair step: tell the model what went wrong, how to fix it. */
#include <stdlib.h>
#include <string.h>

#include "agent/hint.h"
#include "agent/steps.h"
#include "core/buf.h"

/* The model's reply as the repair turn's assistant message, cut as
** agent_text_kept() does. */
static char *reply_kept(const char *reply)
{
    return agent_text_kept(reply ? reply : "", "", "reply");
}

/* Tell the model what went wrong and how to fix it. */
enum agent_outcome agent_step_repair(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct buf hint, msg;
    double t0 = db_now_ms();
    /* the failed statement as shown: cut as the reply is */
    char *sql = agent_text_kept(st->sql, "-- ", "query");

    if (st->sql && !sql)
        return agent_nomem(st);

    buf_init(&hint, 0);
    if (st->ec == ASKDB_EC_CHECK)
        buf_puts(&hint, "If the query is right after all, repeat it "
                        "unchanged.\n");
    else
        hint_write(&hint, st->schema, st->sql, st->ec, st->errbuf,
                   db_timeout_ms(ag->db), db_dialect(ag->db));
    buf_init(&msg, 0);
    if (st->ec == ASKDB_EC_CHECK) {
        buf_puts(&msg, "This query ran, but its result looks wrong:\n```sql\n");
        buf_puts(&msg, sql ? sql : "");
        /* the whole hint: errbuf holds a copy cut to its size */
        buf_printf(&msg, "\n```\nProblem: %s\n%s",
                   st->check_hint ? st->check_hint : st->errbuf,
                   hint.data ? hint.data : "");
        buf_puts(&msg, "Write the corrected query, in a ```sql code "
                       "block.\n");
    } else {
        prompt_repair(&msg, sql, st->errbuf, hint.data);
    }
    buf_free(&hint);
    free(sql);
    if (agent_push_msg(st, "assistant", reply_kept(st->reply)) ||
        agent_push_msg(st, "user", buf_steal(&msg)))
        return agent_nomem(st);
    st->ans->t.prompt_ms += db_now_ms() - t0;
    agent_emit(ag, ASKDB_EVENT_REPAIR,
               json_pack("{s:s, s:i}", "class", askdb_error_class_str(st->ec),
                         "attempt", st->ans->nattempts + 1));
    agent_log(st, "repair", "asking for a fix of: %s",
              askdb_error_class_str(st->ec));
    return OUT_OK;
}
