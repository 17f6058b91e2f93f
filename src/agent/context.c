/* context.c - the context step: what the model is told besides the
** question: value retrieval, schema linking, learned examples and the
** conversation so far. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/steps.h"
#include "agent/bank.h"
#include "agent/link.h"
#include "agent/memory.h"
#include "agent/values.h"
#include "core/json.h"
#include "core/text.h"
#include "sql/analyze.h"

#define VALUE_MATCHES 8      /* values named in the prompt at most */

/* Value retrieval: matches of the question's words in the data. The
** index is opened once per agent; a failure to build it is traced and not
** retried, but for a cancel (the question ends; the next builds it). A
** lookup that fails (a damaged cache file) is traced and the question goes
** on without values: they help, they are never needed. */
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
            ag->values_failed = !atomic_load(&ag->cancel);
            agent_emit(ag, ASKDB_EVENT_VALUES,
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
        agent_emit(ag, ASKDB_EVENT_VALUES,
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
    agent_emit(ag, ASKDB_EVENT_VALUES, ev);
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
    int i, nh = 0, nsa = 0, rc, read;

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
    /* A large DuckDB schema's read leaves samples pending: those of the
    ** tables the prompt shows are read now. */
    if (ag->cfg.linking && !lr.whole) {
        if (db_fill_samples(ag->db, lr.keep_table, NULL) == ASKDB_ERR_NOMEM)
            st->part_schema = NULL;
        else
            st->part_schema = schema_render_subset(st->schema,
                                                   lr.keep_table, lr.keep_col);
        if (!st->part_schema) {
            link_result_free(&lr);
            return -1;
        }
    } else {
        rc = db_fill_samples(ag->db, NULL, &read);
        if (rc == ASKDB_OK && read) {
            free(ag->schema_text);
            ag->schema_text = schema_render(st->schema);
        }
        if (rc == ASKDB_ERR_NOMEM || !ag->schema_text) {
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
    agent_emit(ag, ASKDB_EVENT_LINK, ev);
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
    agent_emit(ag, ASKDB_EVENT_EXAMPLES,
                json_pack("{s:o}", "error", jsonx_string(err)));
    agent_log(st, "examples", "learned pairs unavailable: %s", err);
}

/* Whether a and b are the same question but for case and the blanks
** around and between the words. */
static int blank_eq(const char *a, const char *b)
{
    for (;;) {
        while (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r')
            a++;
        while (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r')
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
        a++;
        b++;
    }
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
    int n = 0, k, rc;

    if (ag->cfg.memory <= 0)
        return 0;
    if (!ag->mem) {
        if (!ag->db_key)
            ag->db_key = memory_db_key(ag->db->label);
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
    /* One more when the question's own pair is left out below; past
    ** what the store gives (INT_MAX + 1 is no int). */
    k = ag->cfg.memory < MEMORY_MAX_K ? ag->cfg.memory : MEMORY_MAX_K;
    if (memory_similar(ag->mem, ag->db_key, st->question,
                       k + (ag->mem_skip_same ? 1 : 0), &p, &n)) {
        examples_failed(st, "the lookup in the learned pairs failed");
        return 0;
    }
    if (ag->mem_skip_same) {
        /* The pair of this very question would hand the model its
        ** answer: an eval scoring it would measure the store, not the
        ** model. The rest keep their order, k at most. */
        int i, j = 0;
        for (i = 0; i < n; i++) {
            if (blank_eq(p[i].question, st->question)) {
                memory_pair_clear(&p[i]);
                continue;
            }
            p[j++] = p[i];
        }
        for (n = j; n > ag->cfg.memory; n--)
            memory_pair_clear(&p[n - 1]);
    }
    ag->mem_said[0] = '\0';
    if (n > 0) {
        buf_init(&b, 0);
        memory_render(&b, p, n);
        st->part_examples = buf_steal(&b);
        agent_emit(ag, ASKDB_EVENT_EXAMPLES,
                    json_pack("{s:i, s:s}", "pairs", n, "best",
                              p[0].question));
        /* -v shows that the learned pairs reached the prompt. */
        agent_log(st, "examples", "%d learned pair%s in the prompt, the "
                  "closest: %s", n, n == 1 ? "" : "s", p[0].question);
    }
    memory_pairs_free(p, n);
    return st->part_examples || n == 0 ? 0 : -1;
}

/* Few-shot from the built-in bank: other databases' pairs whose questions
** read alike once names and values are masked (bank.h). Only helps, so a
** failure (out of memory) costs the question its examples, not itself. */
static int bank_examples(struct agent_state *st)
{
    askdb_agent *ag = st->ag;
    struct bank_pick p[BANK_MAX];
    char *name;
    double t0 = db_now_ms();
    struct buf b;
    int n = 0, rc;

    if (ag->cfg.bank <= 0)
        return 0;
    /* the name the database goes by in the bank: its file's name without
    ** the extension ("concert_singer" for .../concert_singer.sqlite), or
    ** the last path part of a URL */
    name = text_file_stem(ag->db->label);
    rc = name ? bank_similar(st->schema, name, st->question, ag->cfg.bank,
                             p, &n)
              : -1;
    free(name);
    if (rc) {
        agent_log(st, "bank", "the example bank could not be searched");
        return 0;
    }
    if (n > 0) {
        buf_init(&b, 0);
        bank_render(&b, p, n);
        st->part_bank = buf_steal(&b);
        if (!st->part_bank)
            return -1;
    }
    agent_emit(ag, ASKDB_EVENT_EXAMPLES,
               json_pack("{s:s, s:i, s:s?, s:s?, s:f, s:f}", "source", "bank",
                         "pairs", n, "best", n ? p[0].question : NULL,
                         "from", n ? p[0].db : NULL, "score",
                         n ? p[0].score : 0.0, "ms", db_now_ms() - t0));
    return 0;
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

/* The system message, naming the engine's SQL: with its version for the
** servers and DuckDB ("PostgreSQL 15.18"), whose SQL changes between
** versions more than SQLite's does (whose prompt stays as it was). */
static char *system_message(askdb_db *db)
{
    const char *d = db_dialect(db), *v = askdb_db_version(db);
    char name[96];

    if (strcmp(d, "SQLite") == 0 || !*v)
        return prompt_system(d);
    snprintf(name, sizeof name, "%s %.40s", d, v);
    return prompt_system(name);
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
    if (agent_push_msg(st, "system", system_message(st->ag->db))) {
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
        values_render(&b, st->schema, m, n);
        st->part_values = buf_steal(&b);
        rc = st->part_values ? 0 : -1;
    }
    if (!rc)
        rc = link(st, m, n);
    value_matches_free(m, n);
    if (!rc)
        rc = bank_examples(st);
    if (!rc)
        rc = examples(st);
    if (!rc)
        rc = history(st);
    st->parts.schema = st->part_schema ? st->part_schema
                                       : st->ag->schema_text;
    st->parts.bank = st->part_bank;
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
