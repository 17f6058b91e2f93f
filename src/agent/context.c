/* context.c - what the model is told besides the question, and whether to
** ask it at all: value retrieval, schema linking, learned examples, the
** conversation so far, and the question check. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/agent.h"
#include "agent/link.h"
#include "agent/memory.h"
#include "agent/values.h"
#include "core/json.h"
#include "core/text.h"
#include "sql/analyze.h"

#define VALUE_MATCHES 8      /* values named in the prompt at most */

/* Value retrieval: matches of the question's words in the data. The
** index is opened once per agent; a failure to build it is traced and not
** retried. A lookup that fails (a damaged cache file) is traced and the
** question goes on without values: they help, they are never needed. */
static void find_values(struct agent_state *st, struct value_match **m,
                        int *n)
{
    askdb_agent *ag = st->ag;
    char err[512] = "";
    double t0 = db_now_ms();
    json_t *ev;

    *m = NULL;
    *n = 0;
    if (!ag->cfg.values || ag->values_failed)
        return;
    if (!ag->values) {
        if (vindex_open(ag->db, NULL, &ag->values, err, sizeof err)) {
            ag->values_failed = 1;
            trace_write(ag->trace, "values",
                        json_pack("{s:o}", "error", jsonx_string(err)));
            agent_log(st, "values", "no value index: %s", err);
            return;
        }
        if (*err)
            agent_log(st, "values", "%s", err);
    }
    if (vindex_match(ag->values, st->question, VALUE_MATCHES, m, n)) {
        *m = NULL;
        *n = 0;
        trace_write(ag->trace, "values",
                    json_pack("{s:s}", "error", "value lookup failed"));
        agent_log(st, "values", "value lookup failed; going on without");
        return;
    }
    ev = json_object();
    json_object_set_new(ev, "matches", json_integer(*n));
    if (*n) {
        json_t *arr = json_array();
        int i;
        for (i = 0; i < *n; i++)
            json_array_append_new(
                arr, json_pack("{s:o, s:o, s:o, s:o, s:b}", "table",
                               jsonx_string((*m)[i].table), "column",
                               jsonx_string((*m)[i].column), "value",
                               jsonx_string((*m)[i].value), "phrase",
                               jsonx_string((*m)[i].phrase), "exact",
                               (*m)[i].exact));
        json_object_set_new(ev, "found", arr);
    }
    json_object_set_new(ev, "ms", json_real(db_now_ms() - t0));
    trace_write(ag->trace, "values", ev);
}

#define TURN_TABLES 8         /* tables of one earlier turn kept at most */

/*
** A follow-up is linked with the conversation: the earlier questions are
** read with the new one, and the tables their SQL read are hints, so the
** earlier SQL the prompt shows names only tables the prompt has ("and only
** the French ones?" alone could link some other table and cut them).
** Appends to text and hints; sa[] holds the analyses the hints point
** into, *nsa of them, for the caller to free.
*/
static void add_turns(struct agent_state *st, struct buf *text,
                      struct link_hint *hints, int *nh, struct sqla *sa,
                      int *nsa)
{
    askdb_agent *ag = st->ag;
    int t, k;

    for (t = 0; ag->cfg.conversation && t < ag->nturns; t++) {
        buf_printf(text, "\n%s", ag->turns[t].question);
        if (sqla_analyze(ag->turns[t].sql, st->schema, &sa[*nsa]) < 0) {
            sqla_free(&sa[*nsa]);
            continue;
        }
        for (k = 0; k < sa[*nsa].ntables && k < TURN_TABLES; k++) {
            hints[*nh].table = sa[*nsa].tables[k];
            hints[*nh].column = NULL;
            hints[(*nh)++].weight = 2.0;
        }
        (*nsa)++;
    }
}

/* Schema linking: the schema text for this question, whole or cut down. */
static int link(struct agent_state *st, const struct value_match *m, int n)
{
    askdb_agent *ag = st->ag;
    struct link_hint hints[VALUE_MATCHES + AGENT_MAX_TURNS * TURN_TABLES];
    struct sqla sa[AGENT_MAX_TURNS];
    struct link_opts lo = link_opts_default();
    struct link_result lr;
    struct buf text;
    double t0 = db_now_ms(), best = 0;
    json_t *ev;
    int i, nh = 0, nsa = 0, rc;

    for (i = 0; i < n && i < VALUE_MATCHES; i++) {
        hints[nh].table = m[i].table;
        hints[nh].column = m[i].column;
        hints[nh++].weight = m[i].exact ? 2.0 : 1.0;
    }
    buf_init(&text, 0);
    buf_puts(&text, st->question);
    add_turns(st, &text, hints, &nh, sa, &nsa);
    memset(&lr, 0, sizeof lr);
    rc = buf_err(&text) ||
         link_schema(st->schema, text.data, hints, nh, &lo, &lr);
    for (i = 0; i < nsa; i++)
        sqla_free(&sa[i]);
    buf_free(&text);
    if (rc)
        return -1;
    for (i = 0; i < lr.ntables; i++)
        if (lr.table_score[i] > best)
            best = lr.table_score[i];
    st->relevance = best + n;
    if (ag->cfg.linking && !lr.whole) {
        st->part_schema = schema_render_subset(st->schema, lr.keep_table,
                                               lr.keep_col);
        if (!st->part_schema) {
            link_result_free(&lr);
            return -1;
        }
    }
    ev = json_object();
    json_object_set_new(ev, "on", json_boolean(ag->cfg.linking));
    json_object_set_new(ev, "whole", json_boolean(lr.whole ||
                                                  !ag->cfg.linking));
    json_object_set_new(ev, "tables", json_integer(lr.kept_tables));
    json_object_set_new(ev, "of_tables", json_integer(lr.ntables));
    json_object_set_new(ev, "columns", json_integer(lr.kept_cols));
    json_object_set_new(ev, "of_columns", json_integer(lr.total_cols));
    json_object_set_new(ev, "best_score", json_real(best));
    if (st->part_schema)
        json_object_set_new(ev, "bytes",
                            json_integer((json_int_t)strlen(st->part_schema)));
    json_object_set_new(ev, "ms", json_real(db_now_ms() - t0));
    trace_write(ag->trace, "link", ev);
    link_result_free(&lr);
    return 0;
}

/* Say a failure of the learned-pairs store, once for each cause (a store
** that stays broken is not said again with every question). */
static void examples_failed(struct agent_state *st, const char *err)
{
    askdb_agent *ag = st->ag;

    if (strcmp(ag->mem_said, err) == 0)
        return;
    snprintf(ag->mem_said, sizeof ag->mem_said, "%s", err);
    trace_write(ag->trace, "examples",
                json_pack("{s:o}", "error", jsonx_string(err)));
    agent_log(st, "examples", "learned pairs unavailable: %s", err);
}

/* Few-shot from memory: the learned pairs most like the question. The
** store is only read here; a missing store is not an error, and a store
** that fails (not a store, locked by a long `askdb learn`, damaged) costs
** the question its examples, never the question: it is tried again with
** the next one, as a lock passes. */
static int examples(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct memory_pair *p = NULL;
    struct buf b;
    char err[512];
    int n = 0, rc;

    if (ag->cfg.memory <= 0)
        return 0;
    if (!ag->mem) {
        if (!ag->db_key)
            ag->db_key = memory_db_key(ag->db->path);
        if (!ag->db_key)
            return 0;
        rc = memory_open(ag->cfg.memory_path, 0, &ag->mem, err, sizeof err);
        if (rc == 1)
            return 0; /* nothing learned yet: look again next question */
        if (rc) {
            examples_failed(st, err);
            return 0;
        }
    }
    if (memory_similar(ag->mem, ag->db_key, st->question, ag->cfg.memory, &p,
                       &n)) {
        examples_failed(st, "the lookup in the learned pairs failed");
        return 0;
    }
    ag->mem_said[0] = '\0';
    if (n > 0) {
        buf_init(&b, 0);
        memory_render(&b, p, n);
        st->part_examples = buf_steal(&b);
        trace_write(ag->trace, "examples",
                    json_pack("{s:i, s:s}", "pairs", n, "best",
                              p[0].question));
    }
    memory_pairs_free(p, n);
    return st->part_examples || n == 0 ? 0 : -1;
}

/* The conversation so far, for a follow-up question. */
static int history(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct buf b;
    int i;

    if (!ag->cfg.conversation || ag->nturns == 0)
        return 0;
    buf_init(&b, 0);
    buf_puts(&b, "Earlier questions in this conversation, with the SQL that "
                 "answered them (the new question may refer to them, e.g. "
                 "\"and only for 2023?\" narrows the last one):\n");
    for (i = 0; i < ag->nturns; i++)
        buf_printf(&b, "%d. %s\n   SQL: %s\n", i + 1, ag->turns[i].question,
                   ag->turns[i].sql);
    st->part_history = buf_steal(&b);
    return st->part_history ? 0 : -1;
}

/* Build (or rebuild) the first user message from the parts. */
static int build_first_message(struct agent_state *st)
{
    struct buf b;
    char *text;

    buf_init(&b, 0);
    prompt_question(&b, &st->parts);
    text = text_repair(buf_steal(&b)); /* the schema's names may not be */
    if (!text)
        return -1;
    if (st->nmsgs >= 2) { /* rebuild: replace the user message */
        free(st->owned[1]);
        st->owned[1] = text;
        st->msgs[1].content = text;
        return 0;
    }
    if (agent_push_msg(st, "system", strdup(prompt_system()))) {
        free(text);
        return -1;
    }
    return agent_push_msg(st, "user", text);
}

enum agent_outcome agent_step_context(struct agent_state *st)
{
    struct value_match *m = NULL;
    struct buf b;
    double t0 = db_now_ms();
    int n = 0, rc = 0;

    find_values(st, &m, &n);
    if (n > 0) {
        buf_init(&b, 0);
        values_render(&b, m, n);
        st->part_values = buf_steal(&b);
        rc = st->part_values ? 0 : -1;
    }
    if (!rc)
        rc = link(st, m, n);
    value_matches_free(m, n);
    if (!rc)
        rc = examples(st);
    if (!rc)
        rc = history(st);
    st->parts.schema = st->part_schema ? st->part_schema
                                       : st->ag->schema_text;
    st->parts.examples = st->part_examples;
    st->parts.history = st->part_history;
    st->parts.values = st->part_values;
    st->parts.question = st->question;
    st->parts.hint = st->hint;
    if (!rc)
        rc = build_first_message(st);
    st->ans->t.prompt_ms += db_now_ms() - t0;
    return rc ? agent_nomem(st) : OUT_OK;
}

/* Rebuild the first message with the plan's results (plan.c). */
int agent_rebuild_first_message(struct agent_state *st)
{
    st->parts.plan = st->plan_notes;
    return build_first_message(st);
}

/* ---------------------------------------------------------------------- */
/* The question check                                                     */
/* ---------------------------------------------------------------------- */

/* Whether s is one of the NULL-terminated words. */
static int one_of(const char *const *words, const char *s)
{
    for (; *words; words++)
        if (strcmp(*words, s) == 0)
            return 1;
    return 0;
}

/* Whether the text is only greetings, thanks or farewells: at least one
** of those words, and nothing but them and the small words around them
** ("good morning", "thank you", "how are you?"). */
static int is_greeting(const char *q)
{
    static const char *const greet[] = {
        "hi", "hello", "hey", "hiya", "howdy", "yo", "sup", "greetings",
        "thanks", "thank", "thx", "ty", "cheers", "bye", "goodbye",
        "morning", "afternoon", "evening", "night", "meet", NULL
    };
    static const char *const around[] = {
        "you", "good", "ok", "okay", "there", "how", "are", "is", "it",
        "going", "whats", "up", "nice", "to", "great", "cool", "please",
        NULL
    };
    char w[32];
    int any_greet = 0;
    size_t k;

    while (*q) {
        while (*q && !isalpha((unsigned char)*q))
            q++;
        for (k = 0; *q && (isalpha((unsigned char)*q) || *q == '\'');
             q++)
            if (*q != '\'' && k + 1 < sizeof w)
                w[k++] = (char)tolower((unsigned char)*q);
        if (!k)
            break;
        w[k] = '\0';
        if (one_of(greet, w))
            any_greet = 1;
        else if (!one_of(around, w))
            return 0;
    }
    return any_greet;
}

/* Tables of the schema as a short list for the reply. */
static void list_tables(struct buf *b, const struct db_schema *s)
{
    int i;

    for (i = 0; i < s->ntables && i < 12; i++)
        buf_printf(b, "%s%s", i ? ", " : "", s->tables[i].name);
    if (s->ntables > 12)
        buf_printf(b, " and %d more", s->ntables - 12);
}

static enum agent_outcome not_a_question(struct agent_state *st,
                                         const char *why, int greeting)
{
    struct buf b;

    buf_init(&b, 0);
    if (greeting)
        buf_puts(&b, "Hello! Ask me a question about this database; it "
                     "has these tables: ");
    else
        buf_puts(&b, "This does not look like a question this database "
                     "can answer. It has these tables: ");
    list_tables(&b, st->schema);
    buf_puts(&b, ".");
    st->ans->text = buf_steal(&b);
    st->ans->not_a_question = 1;
    trace_write(st->ag->trace, "qcheck",
                json_pack("{s:b, s:s}", "question", 0, "why", why));
    agent_log(st, "qcheck", "not a question about the database: %s", why);
    return st->ans->text ? OUT_SKIP : agent_nomem(st);
}

/*
** Greetings are answered at once. A question with a word that matches a
** table, a column or a value is a question about the database. Only when
** nothing matches is the model asked (yes/no, one token with the local
** model's grammar; the schema prefix is already in its cache).
*/
enum agent_outcome agent_step_qcheck(struct agent_state *st)
{
    static const char yes_no[] = "root ::= \"yes\" | \"no\"\n";
    struct llm_msg msgs[2];
    struct buf b;
    askdb_status rc;
    const char *p;
    char *reply;
    int no;

    for (p = st->question; *p && !isalnum((unsigned char)*p); p++)
        ;
    if (!*p)
        return not_a_question(st, "no words", 0);
    if (is_greeting(st->question))
        return not_a_question(st, "greeting", 1);
    if (st->relevance > 0 || st->part_history) {
        /* A follow-up ("and for 2023?") is read with the earlier ones. */
        trace_write(st->ag->trace, "qcheck",
                    json_pack("{s:b, s:s}", "question", 1, "why",
                              st->part_history ? "a follow-up"
                                               : "names or values match"));
        return OUT_OK;
    }
    buf_init(&b, 0);
    buf_puts(&b, st->msgs[1].content);
    buf_puts(&b, prompt_qcheck());
    msgs[0] = st->msgs[0];
    msgs[1].role = "user";
    msgs[1].content = b.data;
    if (buf_err(&b)) {
        buf_free(&b);
        return agent_nomem(st);
    }
    reply = agent_call(st, "qcheck", msgs, 2,
                       llm_supports_grammar(st->ag->model) &&
                       !st->ag->cfg.no_grammar ? yes_no : NULL,
                       4, &rc);
    buf_free(&b);
    if (!reply) {
        st->fatal = rc;
        return OUT_FATAL;
    }
    for (p = reply; *p && !isalpha((unsigned char)*p); p++)
        ;
    no = strncasecmp(p, "no", 2) == 0 && !isalpha((unsigned char)p[2]);
    free(reply);
    if (no)
        return not_a_question(st, "the model: no table holds it", 0);
    trace_write(st->ag->trace, "qcheck",
                json_pack("{s:b, s:s}", "question", 1, "why", "the model"));
    return OUT_OK;
}
