/* test_agent_steps.c - the agent's techniques, with a scripted model:
** question check, candidates and voting, checks, answer, conversation,
** planning, learned examples, value retrieval and linking in the prompt. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "askdb.h"
#include "agent/memory.h"
#include "agent/plan.h"
#include "core/buf.h"
#include "core/cache.h"
#include "scripted.h"

/*
** What each test works with, made before it and freed after it (also when
** it fails): the scripted model, a config with the techniques off (each
** test turns on what it tests), and the agent and answer it holds.
*/
struct steps {
    struct script s;
    askdb_config cfg;
    askdb_agent *ag;         /* a conversation's agent, or NULL */
    askdb_answer *a;         /* the latest answer, or NULL */
};

static int steps_setup(void **state)
{
    struct steps *t = calloc(1, sizeof *t);

    if (!t)
        return -1;
    t->cfg = scripted_config(&t->s);
    *state = t;
    return 0;
}

static int steps_teardown(void **state)
{
    struct steps *t = *state;

    askdb_answer_free(t->a);
    askdb_agent_free(t->ag);
    free(t);
    return 0;
}

/* The test's fixture, its model set to reply r. */
static struct steps *steps(void **state, const char *const *r)
{
    struct steps *t = *state;

    t->s.replies = r;
    return t;
}

/* Start a conversation: a new agent on the database at db (t->ag). */
static void agent_open(struct steps *t, const char *db)
{
    askdb_agent_free(t->ag);
    t->ag = NULL;
    if (askdb_agent_new(&t->cfg, db, &t->ag) != ASKDB_OK)
        fail_msg("agent: %s", askdb_agent_errmsg(t->ag));
}

/* Ask q of t->ag, which must end with status want. The answer is kept in
** t->a (the one before it is freed) and returned. */
static askdb_answer *ask_agent(struct steps *t, const char *q,
                               askdb_status want)
{
    askdb_status st;

    askdb_answer_free(t->a);
    t->a = NULL;
    st = askdb_agent_ask(t->ag, q, &t->a);
    assert_non_null(t->a);
    if (st != want)
        fail_msg("status %s, want %s (%s)", askdb_status_str(st),
                 askdb_status_str(want), t->a->error ? t->a->error : "");
    return t->a;
}

/* The next question of the conversation; it must be answered. */
static askdb_answer *turn(struct steps *t, const char *q)
{
    return ask_agent(t, q, ASKDB_OK);
}

/* Ask q of a new agent on the database at db with t->cfg (as ask_agent()
** does); the agent is freed, the answer kept in t->a. */
static askdb_answer *ask_on(struct steps *t, const char *db, const char *q,
                            askdb_status want)
{
    agent_open(t, db);
    ask_agent(t, q, want);
    askdb_agent_free(t->ag);
    t->ag = NULL;
    return t->a;
}

static askdb_answer *ask(struct steps *t, const char *q, askdb_status want)
{
    return ask_on(t, testdb_shop(), q, want);
}

/* A new SQLite database in the cache directory, made by sql. */
static const char *make_db(const char *name, const char *sql)
{
    static char path[4200];

    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    unlink(path);
    assert_int_equal(sqlfile_exec(path, sql), 0);
    return path;
}

/* Add a learned pair for the shop database to the store at path (made
** when missing). */
static void store_add(const char *path, const char *question,
                      const char *sql)
{
    struct memory *m = NULL;
    char err[256], *key = memory_db_key(testdb_shop());

    assert_non_null(key);
    assert_int_equal(memory_open(path, 1, &m, err, sizeof err), 0);
    assert_true(memory_add(m, key, question, sql, err, sizeof err) >= 0);
    memory_close(m);
    free(key);
}

/* A learned-pairs store at path with one pair for the shop database. */
static void store_with_a_pair(const char *path)
{
    unlink(path);
    store_add(path, "How many orders were cancelled?",
              "SELECT count(*) FROM orders WHERE status = 'cancelled'");
}

/* A check doubted the first attempt's result: one repair was asked. */
static void assert_one_check_repair(const struct steps *t)
{
    assert_int_equal(t->s.calls, 2);
    assert_int_equal(t->a->attempts[0].error, ASKDB_EC_CHECK);
}

/* The result a check doubted stands: the first query's 60 rows. */
static void assert_doubted_result_stands(const askdb_answer *a)
{
    assert_string_equal(a->sql, "SELECT id FROM customers");
    assert_int_equal(a->result->nrows, 60);
}

/* The trace lines of step `step` in the file at path, joined. */
static void trace_steps(const char *path, const char *step, char *out,
                        size_t n)
{
    char line[65536], key[64];
    FILE *f = fopen(path, "r");
    size_t len = 0;

    assert_non_null(f);
    out[0] = '\0';
    snprintf(key, sizeof key, "\"step\":\"%s\"", step);
    while (fgets(line, sizeof line, f))
        if (strstr(line, key) && len + strlen(line) < n) {
            memcpy(out + len, line, strlen(line) + 1);
            len += strlen(line);
        }
    fclose(f);
}

/* ---------------------------------------------------------------------- */

static void greeting_is_answered_without_the_model(void **state)
{
    static const char *const r[] = {NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.question_check = 1;
    a = ask(t, "Hello there!", ASKDB_OK);
    assert_int_equal(t->s.calls, 0);
    assert_int_equal(a->not_a_question, 1);
    assert_null(a->sql);
    assert_null(a->result);
    assert_non_null(strstr(a->text, "Hello"));
    assert_non_null(strstr(a->text, "customers"));
}

/* Farewells and "good morning" are greetings too; a stray "you?" is not
** (it goes to the model's yes/no check). */
static void farewells_and_good_morning_are_greetings(void **state)
{
    static const char *const greetings[] = {
        "Good morning!", "Goodbye", "Cheers!", "good night", "Nice to meet "
        "you", "Thank you!", "hi, how are you?", NULL};
    static const char *const r[] = {"no", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;
    int i;

    t->cfg.question_check = 1;
    for (i = 0; greetings[i]; i++) {
        a = ask(t, greetings[i], ASKDB_OK);
        if (t->s.calls != 0 || !a->text || !strstr(a->text, "Hello!"))
            fail_msg("not a greeting: %s", greetings[i]);
    }
    a = ask(t, "you?", ASKDB_OK);
    assert_int_equal(t->s.calls, 1);
    assert_non_null(strstr(a->text, "does not look like a question"));
}

static void off_topic_question_is_asked_once(void **state)
{
    static const char *const r[] = {"no", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.question_check = 1;
    a = ask(t, "What is the meaning of life?", ASKDB_OK);
    assert_int_equal(t->s.calls, 1);
    assert_non_null(strstr(t->s.last_user, "yes or no"));
    assert_int_equal(a->not_a_question, 1);
    assert_null(a->sql);
    assert_non_null(strstr(a->text, "does not look like a question"));
}

static void unsure_question_goes_on_when_the_model_says_yes(void **state)
{
    static const char *const r[] = {"Yes.", "SELECT 42 AS answer", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.question_check = 1;
    a = ask(t, "What is the meaning of life?", ASKDB_OK);
    assert_int_equal(t->s.calls, 2);
    assert_int_equal(a->not_a_question, 0);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 42);
}

static void matching_question_skips_the_model_check(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM customers", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.question_check = 1;
    a = ask(t, "How many customers are there?", ASKDB_OK);
    assert_int_equal(t->s.calls, 1); /* only the SQL */
    assert_int_equal(a->not_a_question, 0);
}

static void candidates_are_voted_on_by_results(void **state)
{
    /* The greedy one is outvoted by two that agree (in different SQL). */
    static const char *const r[] = {
        "SELECT 1 AS n",
        "SELECT count(*) AS n FROM customers",
        "SELECT count(id) AS n FROM customers", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.candidates = 3;
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    assert_int_equal(a->ncandidates, 3);
    assert_string_equal(a->sql, "SELECT count(*) AS n FROM customers");
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
    assert_true(a->confidence > 0.66 && a->confidence < 0.67);
    assert_int_equal(a->llm_calls, 3); /* the callback is called 3 times */
}

/*
** cfg.settle: each candidate runs as its reply ends; once the greedy
** candidate's non-empty result has more votes than any other result could
** reach with the candidates not yet made, those are not made (a provider
** without a batch: not asked; the local model: stopped). The answer is
** the one the whole vote gives.
*/
static void settled_votes_make_no_more_candidates(void **state)
{
    static const char *const agree[] = {
        "SELECT count(*) AS n FROM customers",
        "SELECT count(id) AS n FROM customers",
        "SELECT 1 AS n", NULL};
    static const char *const outvoted[] = {
        "SELECT 1 AS n",
        "SELECT count(*) AS n FROM customers",
        "SELECT count(id) AS n FROM customers", NULL};
    static const char *const empty[] = {
        "SELECT id FROM customers WHERE id < 0",
        "SELECT id FROM customers WHERE id < -1",
        "SELECT count(*) AS n FROM customers", NULL};
    static const char *const invalid[] = {
        "SELECT count(*) AS n FROM customers",
        "SELECT count(*) AS n FROM customerz",
        "SELECT 2 AS n", NULL};
    struct steps *t = steps(state, agree);
    char path[4200], trace[16384];
    askdb_answer *a;

    t->cfg.candidates = 3;
    snprintf(path, sizeof path, "%s/settle.trace", tmpdir);
    t->cfg.trace_path = path;
    unlink(path);
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(t->s.calls, 2);
    assert_int_equal(a->llm_calls, 2);
    assert_int_equal(a->ncandidates, 3);
    assert_string_equal(a->sql, agree[0]);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
    assert_true(a->confidence > 0.66 && a->confidence < 0.67);
    assert_int_equal(a->nsettled, 1);
    {
        char *json = NULL;

        assert_int_equal(askdb_answer_json(a, 0, &json), ASKDB_OK);
        assert_non_null(strstr(json, "\"settled\":1"));
        askdb_free(json);
    }
    trace_steps(path, "reply", trace, sizeof trace);
    assert_non_null(strstr(trace, "\"settled\":true"));
    trace_steps(path, "validate", trace, sizeof trace);
    assert_non_null(strstr(trace, "[\"none\",\"none\",\"no_sql\"]"));
    assert_non_null(strstr(trace, "\"settled\":1"));
    trace_steps(path, "execute", trace, sizeof trace);
    assert_non_null(strstr(trace, "\"settled\":1"));

    /* off: every candidate is asked, the same answer */
    t->cfg.settle = 0;
    t->s.next = t->s.calls = 0;
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    assert_string_equal(a->sql, agree[0]);
    assert_true(a->confidence > 0.66 && a->confidence < 0.67);
    assert_int_equal(a->nsettled, 0);
    t->cfg.settle = 1;

    /* the greedy one disagrees: the last may still side with either */
    t->s.replies = outvoted;
    t->s.next = t->s.calls = 0;
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    assert_string_equal(a->sql, outvoted[1]);
    assert_int_equal(a->nsettled, 0);

    /* two empty results agree, but a non-empty one outranks them */
    t->s.replies = empty;
    t->s.next = t->s.calls = 0;
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    assert_string_equal(a->sql, empty[2]);

    /* one that does not run as written may yet run (a fix): it counts as
    ** undecided, so one vote is no majority over it and the third */
    t->s.replies = invalid;
    t->s.next = t->s.calls = 0;
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    assert_string_equal(a->sql, invalid[0]);
}

/* How many times needle occurs in hay. */
static int count_of(const char *hay, const char *needle)
{
    int n = 0;

    while ((hay = strstr(hay, needle)) != NULL) {
        n++;
        hay += strlen(needle);
    }
    return n;
}

/* Every prompt and reply of the SQL calls says "for":"sql", as those of
** the other steps say theirs (askdb.h): a reader of the trace or the
** stream tells them apart by it, not by its absence. */
static void sql_calls_say_what_they_are_for(void **state)
{
    static const char *const r[] = {
        "SELECT count(*) AS n FROM customerz",
        "SELECT count(*) AS n FROM customers",
        "SELECT count(id) AS n FROM customers", NULL};
    struct steps *t = steps(state, r);
    char path[4200], trace[65536];
    int n;

    t->cfg.candidates = 2;
    t->cfg.settle = 0;
    snprintf(path, sizeof path, "%s/for.trace", tmpdir);
    t->cfg.trace_path = path;
    unlink(path);
    ask(t, "How many customers?", ASKDB_OK);
    trace_steps(path, "prompt", trace, sizeof trace);
    n = count_of(trace, "\"step\":\"prompt\"");
    assert_true(n >= 1);
    assert_int_equal(count_of(trace, "\"for\":\"sql\""), n);
    trace_steps(path, "reply", trace, sizeof trace);
    n = count_of(trace, "\"step\":\"reply\"");
    assert_true(n >= 2);
    assert_int_equal(count_of(trace, "\"for\":\"sql\""), n);
}

/* With cfg.select, a tie between different results is put to the model:
** one query of each tied result, numbered in candidate order, with its
** first rows; its number picks the winner. Without it (and when the model
** says no number) the vote's order stands. */
static void tied_results_are_put_to_the_model(void **state)
{
    static const char *const r[] = {
        "SELECT 1 AS n",
        "SELECT count(*) AS n FROM customers",
        "SELECT count(*) AS n FROM orders",
        "3", "1", NULL};
    static const char *const position[] = {
        "SELECT 1 AS n",
        "SELECT count(*) AS n FROM customers",
        "SELECT count(*) AS n FROM orders",
        "3", "3", NULL};
    static const char *const bad[] = {
        "SELECT 1 AS n",
        "SELECT count(*) AS n FROM customers",
        "SELECT count(*) AS n FROM orders",
        "the second one", NULL};
    static const char *const agree[] = {
        "SELECT count(id) AS n FROM customers",
        "SELECT count(*) AS n FROM customers",
        "SELECT 2 AS n", NULL};
    struct steps *t = steps(state, r);
    char path[4200], trace[8192];
    askdb_answer *a;

    t->cfg.candidates = 3;
    t->cfg.select = 1;
    snprintf(path, sizeof path, "%s/select.trace", tmpdir);
    t->cfg.trace_path = path;
    unlink(path);
    a = ask(t, "How many orders?", ASKDB_OK);
    assert_int_equal(t->s.calls, 5);
    assert_string_equal(a->sql, r[2]);
    assert_int_equal(a->llm_calls, 5);
    /* the second time the queries come in reverse order */
    assert_non_null(strstr(t->s.last_user, "Question: How many orders?"));
    assert_non_null(strstr(t->s.last_user, "Query 3:\n```sql\nSELECT 1 AS "
                                           "n\n```\nResult, 1 row:\nn\n1\n"));
    assert_non_null(strstr(t->s.last_user, "Query 1:\n```sql\nSELECT "
                                           "count(*) AS n FROM orders"));
    assert_non_null(strstr(t->s.last_user, "Reply with its number only."));
    trace_steps(path, "select", trace, sizeof trace);
    assert_non_null(strstr(trace, "\"options\":[1,2,3]"));
    assert_non_null(strstr(trace, "\"picks\":[3,3]"));
    assert_non_null(strstr(trace, "\"chosen\":3"));

    /* the same position twice is no choice: the vote's winner stands */
    t->s.replies = position;
    t->s.next = t->s.calls = 0;
    unlink(path);
    a = ask(t, "How many orders?", ASKDB_OK);
    assert_int_equal(t->s.calls, 5);
    assert_string_equal(a->sql, position[0]);
    trace_steps(path, "select", trace, sizeof trace);
    assert_non_null(strstr(trace, "\"picks\":[3,1]"));
    assert_non_null(strstr(trace, "the two orders picked different"));

    /* no number: the vote's winner (the greedy one) stands, and says so;
    ** the second order is not asked */
    t->s.replies = bad;
    t->s.next = t->s.calls = 0;
    unlink(path);
    a = ask(t, "How many orders?", ASKDB_OK);
    assert_int_equal(t->s.calls, 4);
    assert_string_equal(a->sql, bad[0]);
    trace_steps(path, "select", trace, sizeof trace);
    assert_non_null(strstr(trace, "no query number in the reply"));

    /* a majority is no tie: the model is not asked (and the first two
    ** agree, so the third candidate is not asked either: cfg.settle) */
    t->s.replies = agree;
    t->s.next = t->s.calls = 0;
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(t->s.calls, 2);
    assert_string_equal(a->sql, agree[0]);

    /* off: the greedy one wins the three-way tie */
    t->cfg.select = 0;
    t->s.replies = r;
    t->s.next = t->s.calls = 0;
    a = ask(t, "How many orders?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    assert_string_equal(a->sql, r[0]);
}

/* With a gate, a provider that cannot say how sure it was (the callback
** here, HTTP servers) gets every candidate asked, as without one. */
static void gate_without_confidence_asks_every_candidate(void **state)
{
    static const char *const r[] = {
        "SELECT 1 AS n",
        "SELECT count(*) AS n FROM customers",
        "SELECT count(id) AS n FROM customers", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.candidates = 3;
    t->cfg.candidate_gate = 0.01;
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    assert_int_equal(a->ncandidates, 3);
    assert_string_equal(a->sql, "SELECT count(*) AS n FROM customers");
    assert_int_equal(a->llm_calls, 3);
}

/* With cfg.resample, a repair that repeats the statement that failed is
** asked once more (sampled) within the same attempt; without it (the
** default) the repeat costs an attempt. */
static void repeated_failure_is_asked_again(void **state)
{
    static const char *const r[] = {
        "SELECT nope FROM customers",
        "SELECT nope FROM customers",
        "SELECT count(*) AS n FROM customers", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.resample = 1;
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    assert_int_equal(a->nattempts, 2);
    assert_int_equal(a->llm_calls, 3);
    assert_string_equal(a->sql, "SELECT count(*) AS n FROM customers");
    assert_string_equal(a->attempts[1].sql,
                        "SELECT count(*) AS n FROM customers");

    t = steps(state, r);
    t->s.next = t->s.calls = 0;
    t->cfg.resample = 0;
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    assert_int_equal(a->nattempts, 3);
    assert_string_equal(a->attempts[1].sql, "SELECT nope FROM customers");
}

/* The database failing, not the statement (a writer died in the middle
** of a write and left a hot journal): the question ends at once with the
** database's message and what to do; the model is not asked to repair
** what it did not break. */
static void a_failing_database_is_not_repaired(void **state)
{
    static const char *const r[] = {
        "SELECT count(*) AS n FROM t",
        "SELECT count(*) AS n FROM t",
        "SELECT count(*) AS n FROM t",
        "SELECT count(*) AS n FROM t", NULL};
    struct steps *t = steps(state, r);
    const char *db = make_db("hot.db", "CREATE TABLE t(x); "
                                       "INSERT INTO t VALUES (1), (2);");
    char journal[4300];
    askdb_answer *a;

    agent_open(t, db);
    turn(t, "How many rows are there?");
    assert_int_equal(t->s.calls, 1);
    sqlfile_die_in_a_write(db);
    a = ask_agent(t, "How many rows are there now?", ASKDB_ERR_DB);
    assert_int_equal(t->s.calls, 2);
    assert_int_equal(a->nattempts, 1);
    assert_int_equal(a->attempts[0].error, ASKDB_EC_DATABASE);
    assert_string_equal(a->attempts[0].sql, "SELECT count(*) AS n FROM t");
    assert_non_null(strstr(a->error, "hot rollback journal"));
    assert_null(a->result);
    askdb_agent_free(t->ag);
    t->ag = NULL;
    snprintf(journal, sizeof journal, "%s-journal", db);
    unlink(journal);
    unlink(db);
}

/* askdb_agent_warm reads the schema and asks the model nothing; the
** questions after it are answered as without it. A database that cannot
** be read fails the warm-up with the reason. */
static void warm_asks_nothing_and_changes_nothing(void **state)
{
    static const char *const r[] = {"SELECT count(*) AS n FROM customers",
                                    NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    agent_open(t, testdb_shop());
    assert_int_equal(askdb_agent_warm(t->ag), ASKDB_OK);
    assert_int_equal(t->s.calls, 0);
    a = ask_agent(t, "How many customers?", ASKDB_OK);
    assert_int_equal(t->s.calls, 1);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
    agent_open(t, make_db("empty.db", "PRAGMA user_version = 1"));
    assert_int_equal(askdb_agent_warm(t->ag), ASKDB_ERR_DB_OPEN);
    assert_non_null(strstr(askdb_agent_errmsg(t->ag), "no tables"));
    assert_int_equal(askdb_agent_warm(NULL), ASKDB_ERR_USAGE);
}

/* The events a test's agent reported: step, request id, t_ms. */
struct seen_events {
    int n;
    char step[16][16];
    char rid[16][72];
    double t_ms[16];
};

static void keep_events(void *ud, const askdb_event *e)
{
    struct seen_events *s = ud;

    if (s->n == 16)
        return;
    snprintf(s->step[s->n], sizeof s->step[0], "%s", e->name);
    snprintf(s->rid[s->n], sizeof s->rid[0], "%s", e->request_id);
    s->t_ms[s->n++] = e->t_ms;
}

/* What the warm-up runs is reported under a request id of its own, timed
** from its start: not with none (or the last question's), and not with
** t_ms counted from no question at all. */
static void warm_events_have_a_request_id_of_their_own(void **state)
{
    static const char *const r[] = {"SELECT count(*) AS n FROM customers",
                                    NULL};
    struct steps *t = steps(state, r);
    struct seen_events ev;
    int i, nwarm;

    memset(&ev, 0, sizeof ev);
    t->cfg.event_fn = keep_events;
    t->cfg.event_ud = &ev;
    agent_open(t, testdb_shop());
    assert_int_equal(askdb_agent_warm(t->ag), ASKDB_OK);
    nwarm = ev.n;
    assert_true(nwarm >= 2);
    assert_string_equal(ev.step[0], "schema");
    for (i = 0; i < nwarm; i++) {
        assert_int_equal(strlen(ev.rid[i]), 16);
        assert_string_equal(ev.rid[i], ev.rid[0]);
        assert_true(ev.t_ms[i] >= 0 && ev.t_ms[i] < 60000);
    }
    ask_agent(t, "How many customers?", ASKDB_OK);
    assert_string_equal(ev.step[nwarm], "question");
    assert_string_not_equal(ev.rid[nwarm], ev.rid[0]);
    /* a second warm-up after the question: its own id again */
    i = ev.n;
    assert_int_equal(askdb_agent_warm(t->ag), ASKDB_OK);
    assert_true(ev.n > i);
    assert_string_not_equal(ev.rid[i], ev.rid[nwarm]);
    assert_true(ev.t_ms[i] >= 0 && ev.t_ms[i] < 60000);
}

/* A fixed candidate (re-qualified without the model) loses a tie of
** votes to one the model wrote right: the fix is a guess. Without the
** tie rule the greedy (fixed) one would win. */
static void fixed_candidate_loses_a_tie(void **state)
{
    static const char *const r[] = {
        "SELECT o.amount FROM orders o JOIN payments p ON p.order_id = o.id "
        "WHERE p.id = 1",
        "SELECT total FROM orders WHERE id = (SELECT order_id FROM payments "
        "WHERE id = 1)",
        "SELECT nope FROM orders", NULL};
    struct steps *t = steps(state, r);
    char path[4200], trace[16384];
    askdb_answer *a;

    t->cfg.candidates = 3;
    snprintf(path, sizeof path, "%s/fixed.trace", tmpdir);
    t->cfg.trace_path = path;
    unlink(path);
    a = ask(t, "What did payment 1 pay?", ASKDB_OK);
    assert_int_equal(a->nattempts, 1);
    assert_string_equal(a->sql, r[1]);
    /* the fix names its candidate as the reply did: from 1 */
    trace_steps(path, "fix", trace, sizeof trace);
    assert_int_equal(count_of(trace, "\"step\":\"fix\""), 1);
    assert_non_null(strstr(trace, "\"candidate\":1,"));
    t->cfg.trace_path = NULL;
    t->cfg.requalify = 0; /* then the greedy one fails, the same one wins */
    t->s.next = t->s.calls = 0;
    a = ask(t, "What did payment 1 pay?", ASKDB_OK);
    assert_string_equal(a->sql, r[1]);
}

/* With the idle-join check off (--no-idle-join), a query whose only
** finding is an idle join is answered at once, not repaired; the finding
** dropped does not leak (LeakSanitizer). On, it costs one repair. */
static void idle_join_off_answers_at_once(void **state)
{
    static const char *const r[] = {
        "SELECT c.first_name FROM customers c JOIN orders o "
        "ON o.customer_id = c.id",
        "SELECT first_name FROM customers", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.checks = 1;
    t->cfg.idle_join = 0;
    a = ask(t, "Show the names of all customers.", ASKDB_OK);
    assert_int_equal(t->s.calls, 1);
    assert_int_equal(a->nattempts, 1);
    assert_string_equal(a->sql, r[0]);
    t->cfg.idle_join = 1;
    t->s.next = t->s.calls = 0;
    a = ask(t, "Show the names of all customers.", ASKDB_OK);
    assert_int_equal(t->s.calls, 2);
    assert_string_equal(a->sql, r[1]);
}

/* A check doubts the vote's winner (an idle join: customers without an
** order drop out), and another candidate's result draws no finding: it
** stands, and no repair is asked; the check event names it. Off, or when
** the other candidate is doubted too, the repair is asked. */
static void clean_candidate_stands_before_a_repair(void **state)
{
    static const char *const r[] = {
        "SELECT c.first_name FROM customers c JOIN orders o "
        "ON o.customer_id = c.id",
        "SELECT c.first_name FROM orders o JOIN customers c "
        "ON c.id = o.customer_id",
        "SELECT first_name FROM customers",
        "SELECT DISTINCT first_name FROM customers", NULL};
    static const char *const doubted[] = {
        "SELECT c.first_name FROM customers c JOIN orders o "
        "ON o.customer_id = c.id",
        "SELECT c.first_name FROM orders o JOIN customers c "
        "ON c.id = o.customer_id",
        "SELECT c.first_name FROM customers c JOIN orders o "
        "ON o.customer_id = c.id WHERE c.id > 1",
        "SELECT DISTINCT first_name FROM customers", NULL};
    struct steps *t = steps(state, r);
    char path[4200], trace[16384];
    askdb_answer *a;

    t->cfg.checks = 1;
    t->cfg.candidates = 3;
    t->cfg.settle = 0;
    snprintf(path, sizeof path, "%s/clean.trace", tmpdir);
    t->cfg.trace_path = path;
    unlink(path);
    a = ask(t, "Show the names of all customers.", ASKDB_OK);
    assert_int_equal(a->nattempts, 1);
    assert_string_equal(a->sql, r[2]);
    assert_int_equal(a->result->nrows, 60);
    assert_true(a->confidence > 0.33 && a->confidence < 0.34);
    trace_steps(path, "check", trace, sizeof trace);
    assert_non_null(strstr(trace, "\"kind\":\"idle_join\""));
    assert_non_null(strstr(trace, "\"instead\":3"));
    t->cfg.trace_path = NULL;

    /* off: the repair is asked, and what it gives stands */
    t->cfg.clean_candidate = 0;
    t->s.next = t->s.calls = 0;
    a = ask(t, "Show the names of all customers.", ASKDB_OK);
    assert_int_equal(a->nattempts, 2);
    assert_string_equal(a->sql, r[3]);

    /* on, but the other candidate is doubted too: the repair */
    t->cfg.clean_candidate = 1;
    t->s.replies = doubted;
    t->s.next = t->s.calls = 0;
    a = ask(t, "Show the names of all customers.", ASKDB_OK);
    assert_int_equal(a->nattempts, 2);
    assert_string_equal(a->sql, doubted[3]);
}

static void failing_candidates_do_not_vote(void **state)
{
    static const char *const r[] = {
        "SELECT nope FROM customers", "not sql at all",
        "SELECT count(*) AS n FROM customers", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.candidates = 3;
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(a->nattempts, 1);
    assert_string_equal(a->sql, "SELECT count(*) AS n FROM customers");
    assert_true(a->confidence > 0.33 && a->confidence < 0.34);
}

/* A result whose first row alone is over the byte cap has no rows, but is
** not empty: it is repaired with a hint to select less, never taken for
** "no rows matched". */
static void first_row_over_the_cap_is_not_an_empty_result(void **state)
{
    static const char *const r[] = {
        "SELECT group_concat(email) FROM customers",
        "SELECT count(*) FROM customers", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.max_bytes = 200;
    a = ask(t, "List every customer email", ASKDB_OK);
    assert_int_equal(a->nattempts, 2);
    assert_int_equal(a->attempts[0].error, ASKDB_EC_RUNTIME);
    assert_non_null(strstr(a->attempts[0].message,
                           "first row alone is larger than the 200-byte "
                           "result cap"));
    assert_non_null(strstr(t->s.last_user, "first row alone is larger"));
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
}

/* A result that comes from a repair is one candidate's: its confidence is
** 1 of the N the question asked for, not 1 of 1. */
static void repaired_result_has_the_confidence_of_one_candidate(void **state)
{
    static const char *const r[] = {
        "SELECT nope FROM customers", "SELECT nope FROM customers",
        "SELECT nope FROM customers", "SELECT count(*) FROM customers",
        NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.candidates = 3;
    a = ask(t, "How many customers?", ASKDB_OK);
    assert_int_equal(a->nattempts, 2);
    assert_int_equal(a->ncandidates, 3);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
    assert_true(a->confidence > 0.33 && a->confidence < 0.34);
}

/* No candidate ran: the attempt records the SQL of the candidate whose
** error it records (not the greedy one's SQL with another's error). */
static void attempt_pairs_each_error_with_its_sql(void **state)
{
    static const char *const r[] = {
        "SELECT nope FROM customers",
        "SELECT abs(-9223372036854775807 - 1) FROM customers",
        "not sql at all", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.candidates = 3;
    t->cfg.max_attempts = 1;
    a = ask(t, "How many customers?", ASKDB_ERR_NO_SQL);
    assert_int_equal(a->nattempts, 1);
    assert_string_equal(a->attempts[0].sql,
                        "SELECT abs(-9223372036854775807 - 1) FROM "
                        "customers");
    assert_non_null(strstr(a->attempts[0].message, "integer overflow"));
}

static void shape_check_repairs_once(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM customers", "SELECT count(*) FROM customers", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.checks = 1;
    a = ask(t, "How many customers are there?", ASKDB_OK);
    assert_one_check_repair(t);
    assert_non_null(strstr(t->s.last_user, "looks wrong"));
    assert_int_equal(a->result->nrows, 1);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
}

static void doubted_result_stands_when_the_repair_fails(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM customers", "SELEC broken", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.checks = 1;
    a = ask(t, "How many customers are there?", ASKDB_OK);
    assert_int_equal(t->s.calls, 2); /* one repair, then the result stands */
    assert_doubted_result_stands(a);
}

/* A doubted result whose vote was settled stands after its repair gave
** nothing better: the answer's settled count is that vote's, which its
** confidence (2 of 3) counts as not agreeing, not the repair's 0. */
static void doubted_settled_result_stands_with_its_settled_count(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM customers", "SELECT id FROM customers ORDER BY id",
        "SELECT id FROM customers WHERE id < 0", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.checks = 1;
    t->cfg.candidates = 3;
    a = ask(t, "How many customers are there?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);  /* 2 candidates, then the repair */
    assert_int_equal(a->nattempts, 2);
    assert_int_equal(a->attempts[0].error, ASKDB_EC_CHECK);
    assert_int_equal(a->attempts[1].error, ASKDB_EC_EMPTY);
    assert_doubted_result_stands(a);
    assert_true(a->confidence > 0.66 && a->confidence < 0.67);
    assert_int_equal(a->nsettled, 1);
}

/* The model fails on the repair a check asked for: the doubted result
** stands, as when the repair gives nothing better (docs/agent.md). */
static void doubted_result_stands_when_the_model_fails(void **state)
{
    static const char *const r[] = {"SELECT id FROM customers", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.checks = 1;
    t->cfg.answer = 1;
    a = ask(t, "How many customers are there?", ASKDB_OK);
    assert_one_check_repair(t); /* no answer call after the failure */
    assert_doubted_result_stands(a);
    assert_int_equal(a->attempts[1].error, ASKDB_EC_LLM);
    assert_null(a->text);
}

/* A check hint longer than the 1 KB error buffer reaches the repair whole
** (the all-NULL hint names every column, then says what to do). */
static void long_check_hint_reaches_the_repair_whole(void **state)
{
    static char sql[4096];
    const char *r[] = {sql, "SELECT 1", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;
    size_t len;
    int i;

    len = (size_t)snprintf(sql, sizeof sql, "SELECT 1 AS id");
    for (i = 1; i < 24; i++)
        len += (size_t)snprintf(sql + len, sizeof sql - len,
                                ", NULL AS a_rather_long_column_name_that_"
                                "is_empty_%02d", i);
    t->cfg.checks = 1;
    a = ask(t, "What do we know?", ASKDB_OK);
    assert_one_check_repair(t);
    assert_true(strlen(a->attempts[0].message) > 1024);
    assert_non_null(strstr(t->s.last_user,
                           "is_empty_23' are NULL in every row."));
    assert_non_null(strstr(t->s.last_user,
                           "If the data simply holds no value there, "
                           "repeat the same query.\n"));
}

static void literal_check_names_the_stored_spelling(void **state)
{
    static const char *const r[] = {
        "SELECT count(*) FROM customers WHERE country = 'de'",
        "SELECT count(*) FROM customers WHERE country = 'DE'", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.checks = 1;
    a = ask(t, "How many customers are from Germany?", ASKDB_OK);
    /* count(*) of nothing is one row, 0: only the literal check sees it */
    assert_one_check_repair(t);
    assert_non_null(strstr(t->s.last_user, "'DE'"));
    assert_true(askdb_result_cell(a->result, 0, 0)->i > 0);
}

static void answer_in_words_with_truncation_said(void **state)
{
    static const char *const r[] = {
        "SELECT first_name FROM customers ORDER BY first_name",
        "  These are the customers.\n", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.answer = 1;
    t->cfg.max_rows = 5;
    a = ask(t, "Which customers are there?", ASKDB_OK);
    assert_int_equal(t->s.calls, 2);
    assert_non_null(strstr(t->s.last_user, "Question: Which customers"));
    assert_non_null(strstr(t->s.last_user, "Result:"));
    assert_non_null(a->text);
    assert_true(strncmp(a->text, "These are the customers.", 24) == 0);
    assert_non_null(strstr(a->text, "cut off at 5 rows"));
    assert_int_equal(a->result->nrows, 5); /* the rows are kept */
}

static void answer_failure_keeps_the_rows(void **state)
{
    static const char *const r[] = {"SELECT 7 AS n", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.answer = 1;
    a = ask(t, "Seven?", ASKDB_OK);
    assert_null(a->text);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 7);
}

static void follow_up_sees_the_earlier_question(void **state)
{
    static const char *const r[] = {
        "SELECT count(*) FROM orders",
        "SELECT count(*) FROM orders WHERE order_date LIKE '2023%'",
        "SELECT 1", NULL};
    struct steps *t = steps(state, r);

    t->cfg.conversation = 1;
    agent_open(t, testdb_shop());
    turn(t, "How many orders?");
    assert_null(strstr(t->s.last_user, "Earlier questions"));
    turn(t, "and only for 2023?");
    assert_non_null(strstr(t->s.last_user, "Earlier questions"));
    assert_non_null(strstr(t->s.last_user,
                           "1. How many orders?\n"
                           "   SQL: SELECT count(*) FROM orders"));
    askdb_agent_forget(t->ag);
    turn(t, "Another?");
    assert_null(strstr(t->s.last_user, "Earlier questions"));
}

/* A follow-up is linked with the earlier turns: the table the earlier SQL
** read stays in the schema, though the follow-up alone links another (a
** schema of 16 wide tables, about 14 kB: big enough to be cut down). */
static void follow_up_keeps_the_earlier_tables(void **state)
{
    static const char *const r[] = {
        "SELECT count(*) FROM singer",
        "SELECT count(*) FROM stadium WHERE capacity > 5000", NULL};
    struct steps *t = steps(state, r);
    struct buf sql;
    const char *db;
    static const char *const tables[] = {
        "singer", "stadium", "album", "label", "award", "critic", "review",
        "studio", "producer", "venue", "tour", "ticket", "manager",
        "sponsor", "festival", "genre", NULL};
    int i, j;

    buf_init(&sql, 0);
    for (i = 0; tables[i]; i++) {
        buf_printf(&sql, "CREATE TABLE %s (%s_id INTEGER PRIMARY KEY, "
                         "name TEXT, country_of_origin TEXT, capacity "
                         "INTEGER, founded_in_year INTEGER, "
                         "description_of_the_%s TEXT, owner_name TEXT, "
                         "total_number_of_members INTEGER, website_address "
                         "TEXT, main_contact_email TEXT, "
                         "last_updated_at TEXT", tables[i], tables[i],
                   tables[i]);
        for (j = 0; j < 12; j++)
            buf_printf(&sql, ", %s_secondary_attribute_number_%02d TEXT",
                       tables[i], j);
        buf_printf(&sql, "); INSERT INTO %s (name) VALUES ('x');",
                   tables[i]);
    }
    assert_int_equal(buf_err(&sql), 0);
    db = make_db("sixteen.db", sql.data);
    buf_free(&sql);
    t->cfg.conversation = 1;
    agent_open(t, db);
    turn(t, "How many singers are there?");
    assert_non_null(strstr(t->s.last_user, "CREATE TABLE singer ("));
    assert_null(strstr(t->s.last_user, "CREATE TABLE stadium (")); /* cut */
    turn(t, "and with a stadium over 5000?");
    assert_non_null(strstr(t->s.last_user,
                           "   SQL: SELECT count(*) FROM singer"));
    assert_non_null(strstr(t->s.last_user, "CREATE TABLE stadium ("));
    assert_non_null(strstr(t->s.last_user, "CREATE TABLE singer ("));
}

static void plan_runs_tasks_and_hands_on_results(void **state)
{
    static const char *const r[] = {
        "```json\n{\"tasks\": [{\"id\": 1, \"task\": \"average order total\","
        " \"depends_on\": []}, {\"id\": 2, \"task\": \"orders above it\", "
        "\"depends_on\": [1]}]}\n```",
        "SELECT avg(total) AS avg_total FROM orders",
        "SELECT count(*) FROM orders WHERE total > (SELECT avg(total) FROM "
        "orders)", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.plan = 1;
    a = ask(t, "How many orders have a total higher than the average "
               "order total?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    assert_int_equal(a->llm_calls, 3);
    assert_non_null(strstr(t->s.all_users, "Reply with JSON only"));
    assert_non_null(strstr(t->s.all_users, "for step 1 only: average order"));
    /* the final statement sees step 1's query and its result */
    assert_non_null(strstr(t->s.last_user, "Step 1 (average order total)"));
    assert_non_null(strstr(t->s.last_user, "avg_total\n"));
    assert_non_null(strstr(t->s.last_user, "Final step 2: orders above it"));
    assert_int_equal(a->result->nrows, 1);
}

/* A task's statement that is huge (a 100 kB literal) goes into the later
** messages cut, as a repair shows a reply: the earlier steps are in the
** first message of every later request of the question. */
static void plan_shows_a_huge_task_statement_cut(void **state)
{
    static char big[120000];
    static const char *const r[] = {
        "{\"tasks\": [{\"id\": 1, \"task\": \"average order total\","
        " \"depends_on\": []}, {\"id\": 2, \"task\": \"orders above it\", "
        "\"depends_on\": [1]}]}",
        big,
        "SELECT count(*) FROM orders WHERE total > (SELECT avg(total) FROM "
        "orders)", NULL};
    struct steps *t = steps(state, r);
    size_t k;

    k = (size_t)snprintf(big, sizeof big, "SELECT avg(total) AS a, '");
    memset(big + k, 'x', 100000);
    snprintf(big + k + 100000, sizeof big - k - 100000,
             "' AS pad FROM orders");
    t->cfg.plan = 1;
    ask(t, "How many orders have a total higher than the average order "
           "total?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    /* the whole first message fits the record (16 kB) */
    assert_non_null(strstr(t->s.last_user, "-- [... 91853 more bytes of "
                                           "this query left out]\n```\n"
                                           "Result:\n"));
    assert_non_null(strstr(t->s.last_user, "Final step 2: orders above"));
}

/* A task's result whose column is named by a huge expression (SQLite
** names an unaliased column by its text) shows the name cut too: the SQL
** shown cut and its whole text as the header would be the same bytes. */
static void plan_shows_a_huge_column_name_cut(void **state)
{
    static char big[120000];
    static const char *const r[] = {
        "{\"tasks\": [{\"id\": 1, \"task\": \"average order total\","
        " \"depends_on\": []}, {\"id\": 2, \"task\": \"orders above it\", "
        "\"depends_on\": [1]}]}",
        big,
        "SELECT count(*) FROM orders WHERE total > (SELECT avg(total) FROM "
        "orders)", NULL};
    struct steps *t = steps(state, r);
    const char *h;
    size_t k;

    k = (size_t)snprintf(big, sizeof big, "SELECT avg(total) + length('");
    memset(big + k, 'x', 100000);
    snprintf(big + k + 100000, sizeof big - k - 100000, "') FROM orders");
    t->cfg.plan = 1;
    ask(t, "How many orders have a total higher than the average order "
           "total?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    h = strstr(t->s.last_user, "Result:\navg(total) + length('xxx");
    assert_non_null(h);
    assert_true(strcspn(h + 8, "\n") < 1100);
    assert_non_null(strstr(t->s.last_user, "Final step 2: orders above"));
}

/* A dry run never executes: not even a plan's earlier tasks, so there is
** no plan, only the statement. */
static void dry_run_makes_no_plan(void **state)
{
    static const char *const r[] = {
        "SELECT count(*) FROM orders WHERE total > (SELECT avg(total) FROM "
        "orders)", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.plan = 1;
    t->cfg.dry_run = 1;
    a = ask(t, "How many orders have a total higher than the average "
               "order total?", ASKDB_OK);
    assert_int_equal(t->s.calls, 1);
    assert_null(strstr(t->s.all_users, "Reply with JSON only"));
    assert_null(a->result);
    assert_non_null(strstr(a->sql, "avg(total)"));
}

/* A task is written with the queries and first rows of the tasks it
** depends on in view, not their queries alone. */
static void plan_task_sees_its_dependencies_rows(void **state)
{
    static const char *const r[] = {
        "{\"tasks\": [{\"id\": 1, \"task\": \"average order total\"}, "
        "{\"id\": 2, \"task\": \"orders above it\", \"depends_on\": [1]}, "
        "{\"id\": 3, \"task\": \"how many\", \"depends_on\": [2]}]}",
        "SELECT round(avg(total), 2) AS avg_total FROM orders",
        "SELECT id FROM orders WHERE total > (SELECT avg(total) FROM "
        "orders)",
        "SELECT count(*) FROM orders WHERE total > (SELECT avg(total) FROM "
        "orders)", NULL};
    struct steps *t = steps(state, r);
    char *task2, *end;

    t->cfg.plan = 1;
    ask(t, "How many orders have a total higher than the average "
           "order total?", ASKDB_OK);
    assert_int_equal(t->s.calls, 4);
    task2 = strstr(t->s.all_users, "for step 2 only: orders above it");
    assert_non_null(task2);
    end = strstr(task2, "\n----\n");
    assert_non_null(end);
    *end = '\0';
    assert_non_null(strstr(task2, "Step 1 (average order total):\n```sql\n"
                                  "SELECT round(avg(total), 2) AS avg_total "
                                  "FROM orders\n```\nResult:\navg_total\n"));
}

static void single_step_question_skips_the_plan(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM orders", NULL};
    struct steps *t = steps(state, r);

    t->cfg.plan = 1;
    ask(t, "How many orders?", ASKDB_OK);
    assert_int_equal(t->s.calls, 1);
}

/* A plan that is no plan: the question is answered in one step, and the
** plan event says why (askdb.h: tasks, or error); so it does when the
** model fails on a task, or on the plan itself. */
static void invalid_plan_falls_back_to_one_step(void **state)
{
    static const char *const r[] = {"I think we should first...",
                                    "SELECT count(*) FROM orders", NULL};
    static const char *const fails[] = {
        "{\"tasks\": [{\"id\": 1, \"task\": \"the average\", "
        "\"depends_on\": []}, {\"id\": 2, \"task\": \"above it\", "
        "\"depends_on\": [1]}]}", NULL};
    static const char q[] = "How many orders have a total higher than the "
                            "average order total?";
    struct steps *t = steps(state, r);
    char path[4200], trace[16384];
    askdb_answer *a;

    snprintf(path, sizeof path, "%s/plan.trace", tmpdir);
    unlink(path);
    t->cfg.trace_path = path;
    t->cfg.plan = 1;
    a = ask(t, q, ASKDB_OK);
    assert_int_equal(t->s.calls, 2);
    assert_non_null(strstr(t->s.all_users, "Reply with JSON only"));
    assert_int_equal(a->result->nrows, 1);
    trace_steps(path, "plan", trace, sizeof trace);
    assert_non_null(strstr(trace, "\"error\":\"no JSON object in the "
                                  "reply\""));
    unlink(path);
    t->s.replies = fails;
    t->s.next = t->s.calls = 0;
    ask(t, q, ASKDB_ERR_LLM);
    trace_steps(path, "plan", trace, sizeof trace);
    assert_non_null(strstr(trace, "\"tasks\":2"));
    assert_non_null(strstr(trace, "\"error\":\"custom model callback "
                                  "failed"));
    unlink(path);
    t->s.next = 1;
    ask(t, q, ASKDB_ERR_LLM);
    trace_steps(path, "plan", trace, sizeof trace);
    assert_non_null(strstr(trace, "\"error\":\"custom model callback "
                                  "failed"));
}

static void plan_parser_validates(void **state)
{
    struct plan p;
    char why[256];

    (void)state;
    assert_int_equal(plan_parse("{\"tasks\": [{\"id\": 1, \"task\": \"a\"}, "
                                "{\"id\": 2, \"task\": \"b\", \"depends_on\":"
                                " [1]}]}", &p, why, sizeof why), 0);
    assert_int_equal(p.ntasks, 2);
    assert_int_equal(p.tasks[1].ndeps, 1);
    assert_int_equal(p.tasks[1].deps[0], 0);
    plan_free(&p);
    assert_int_equal(plan_parse("{\"tasks\": []}", &p, why, sizeof why), 0);
    assert_int_equal(p.ntasks, 0);
    /* a dependency on a later task, duplicate ids, no text, too many */
    assert_int_equal(plan_parse("{\"tasks\": [{\"id\": 1, \"task\": \"a\", "
                                "\"depends_on\": [2]}, {\"id\": 2, \"task\":"
                                " \"b\"}]}", &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "later or unknown"));
    assert_int_equal(plan_parse("{\"tasks\": [{\"id\": 1, \"task\": \"a\"}, "
                                "{\"id\": 1, \"task\": \"b\"}]}", &p, why,
                                sizeof why), -1);
    assert_int_equal(plan_parse("{\"tasks\": [{\"id\": 1}]}", &p, why,
                                sizeof why), -1);
    assert_int_equal(plan_parse("{\"tasks\": [{\"id\":1,\"task\":\"a\"},"
                                "{\"id\":2,\"task\":\"a\"},{\"id\":3,\"task\""
                                ":\"a\"},{\"id\":4,\"task\":\"a\"},{\"id\":5,"
                                "\"task\":\"a\"},{\"id\":6,\"task\":\"a\"}]}",
                                &p, why, sizeof why), -1);
    /* ids are checked, not truncated: 2^32 + 1 is no 1, "x" no -1 */
    assert_int_equal(plan_parse("{\"tasks\": [{\"id\": 4294967297, "
                                "\"task\": \"a\"}]}", &p, why, sizeof why),
                     -1);
    assert_non_null(strstr(why, "id out of range"));
    assert_int_equal(plan_parse("{\"tasks\": [{\"id\": 1, \"task\": \"a\"}, "
                                "{\"id\": 2, \"task\": \"b\", \"depends_on\":"
                                " [4294967297]}]}", &p, why, sizeof why), -1);
    assert_int_equal(plan_parse("{\"tasks\": [{\"id\": -1, \"task\": \"a\"}, "
                                "{\"id\": 2, \"task\": \"b\", \"depends_on\":"
                                " [\"x\"]}]}", &p, why, sizeof why), -1);
    assert_int_equal(plan_parse("{\"tasks\": [{\"id\": 0, \"task\": \"a\"}, "
                                "{\"id\": 2, \"task\": \"b\", \"depends_on\":"
                                " [\"x\"]}]}", &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "non-integer"));
    assert_int_equal(plan_parse("no json", &p, why, sizeof why), -1);
    assert_int_equal(plan_parse("{\"tasks\": 3}", &p, why, sizeof why), -1);
    assert_int_equal(plan_parse("{{{{", &p, why, sizeof why), -1);
    assert_false(plan_needed("How many orders?"));
    assert_true(plan_needed("Which customers spent more than the average?"));
}

/* Plan cues match whole words, so single-step questions that only contain
** a cue inside a word ask for no plan. */
static void plan_cues_match_whole_words(void **state)
{
    static const char *const no[] = {
        "What is the average duration of a registration?",
        "How many corporations are there?",
        "Which employees work in Bothell?",
        "Nevertheless, how many orders?",
        "How many exceptions were logged?",
        NULL};
    static const char *const yes[] = {
        "What is the ratio of paid to unpaid orders?",
        "What are the ratios of paid orders?",
        "Which customers bought both a knife and a pan?",
        "List the products, except knives.",
        "Customers who never ordered?",
        "Take the biggest order, then its customer.",
        "Which customers spent more than the average?",
        NULL};
    int i;

    (void)state;
    for (i = 0; no[i]; i++)
        if (plan_needed(no[i]))
            fail_msg("a plan for: %s", no[i]);
    for (i = 0; yes[i]; i++)
        if (!plan_needed(yes[i]))
            fail_msg("no plan for: %s", yes[i]);
}

static void learned_examples_go_into_the_prompt(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM orders", NULL};
    struct steps *t = steps(state, r);
    char path[4200];

    snprintf(path, sizeof path, "%s/memory.sqlite", tmpdir);
    store_add(path, "How many orders were paid by card?",
              "SELECT count(*) FROM payments WHERE method = 'card'");
    t->cfg.memory = 3;
    t->cfg.memory_path = path;
    ask(t, "How many orders were paid by bank transfer?", ASKDB_OK);
    assert_non_null(strstr(t->s.last_user,
                           "How many orders were paid by card?"));
    assert_non_null(strstr(t->s.last_user, "method = 'card'"));
}

static void pairs_learned_during_a_session_are_used(void **state)
{
    static const char *const r[] = {"SELECT 1", "SELECT 2", NULL};
    struct steps *t = steps(state, r);
    char path[4200];

    snprintf(path, sizeof path, "%s/later.sqlite", tmpdir);
    t->cfg.memory = 3;
    t->cfg.memory_path = path;
    agent_open(t, testdb_shop());
    turn(t, "How many orders were refunded?");
    assert_null(strstr(t->s.last_user, "Examples of questions"));
    /* the store appears while the agent lives (askdb learn in another
    ** terminal): the next question uses it */
    store_add(path, "How many orders were cancelled?",
              "SELECT count(*) FROM orders WHERE status = 'cancelled'");
    turn(t, "How many orders were refunded?");
    assert_non_null(strstr(t->s.last_user, "status = 'cancelled'"));
}

/* An empty result from a value compared in the wrong column: the repair
** is told where the value is stored; without the checks it is not. */
static void empty_result_names_where_the_value_is(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM orders WHERE status = 'gift_card'",
        "SELECT order_id FROM payments WHERE method = 'gift_card'", NULL};
    struct steps *t = steps(state, r);

    t->cfg.values = 1;
    t->cfg.checks = 1;
    ask(t, "Which orders were paid with a gift card?", ASKDB_OK);
    assert_int_equal(t->s.calls, 2);
    assert_non_null(strstr(t->s.last_user,
                           "'gift_card' is not a value of orders.status; "
                           "it is stored in payments.method."));
    askdb_answer_free(t->a);
    t->a = NULL;
    t->s.next = t->s.calls = 0;
    t->cfg.checks = 0;
    ask(t, "Which orders were paid with a gift card?", ASKDB_OK);
    assert_null(strstr(t->s.last_user, "is not a value of"));
    /* Without the value index (the default): found by a look into the
    ** query's tables and their neighbours (payments -> orders). */
    askdb_answer_free(t->a);
    t->a = NULL;
    t->s.next = t->s.calls = 0;
    t->cfg.values = 0;
    t->cfg.checks = 1;
    ask(t, "Which orders were paid with a gift card?", ASKDB_OK);
    assert_int_equal(t->s.calls, 2);
    assert_non_null(strstr(t->s.last_user,
                           "'gift_card' is not a value of orders.status; "
                           "it is stored in payments.method."));
}

/* An empty result of a NOT IN whose subquery reads the outer row's
** column: the repair hears why (check "outer_ref"). */
static void empty_result_names_an_outer_column(void **state)
{
    static const char *const r[] = {
        "SELECT name FROM products WHERE category_id NOT IN "
        "(SELECT category_id FROM order_items)",
        "SELECT name FROM products WHERE id NOT IN "
        "(SELECT product_id FROM order_items)", NULL};
    struct steps *t = steps(state, r);

    t->cfg.checks = 1;
    ask(t, "Which products were never ordered?", ASKDB_OK);
    assert_int_equal(t->s.calls, 2);
    assert_non_null(strstr(t->s.last_user,
                           "the query returned no rows. In the subquery "
                           "over order_items, category_id is not a column "
                           "of its table: it is the outer query's "
                           "products.category_id"));
    askdb_answer_free(t->a);
    t->a = NULL;
    t->s.next = t->s.calls = 0;
    t->cfg.checks = 0;
    ask(t, "Which products were never ordered?", ASKDB_OK);
    assert_int_equal(t->s.calls, 2);
    assert_null(strstr(t->s.last_user, "outer query's"));
}

/* A column under a table that lacks it, compared with the one table's
** column of that name: re-qualified it would be compared with itself
** (p.amount > p.amount, never true), so it is left to the repair, which
** hears the unknown column; and a column the model compares with itself
** is a check finding (self_compare). */
static void no_fix_compares_a_column_with_itself(void **state)
{
    static const char *const r[] = {
        "SELECT o.id FROM orders AS o JOIN payments AS p ON p.order_id = "
        "o.id WHERE o.amount > p.amount",
        "SELECT o.id FROM orders AS o JOIN payments AS p ON p.order_id = "
        "o.id WHERE p.amount > amount",
        "SELECT o.id FROM orders AS o JOIN payments AS p ON p.order_id = "
        "o.id WHERE p.amount > o.total", NULL};
    struct steps *t = steps(state, r);

    t->cfg.checks = 1;
    ask(t, "Which orders were paid more than their total?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    /* The first repair heard of o.amount, not of an empty p.amount >
    ** p.amount; the second why p.amount > amount is empty. */
    assert_non_null(strstr(t->s.all_users, "o.amount"));
    assert_null(strstr(t->s.all_users, "p.amount > p.amount"));
    assert_non_null(strstr(t->s.last_user,
                           "the query returned no rows. p.amount > amount "
                           "compares payments.amount with itself"));
    assert_string_equal(t->a->sql, r[2]);
}

static void values_found_go_into_the_prompt(void **state)
{
    static const char *const r[] = {"SELECT 1", NULL};
    struct steps *t = steps(state, r);

    t->cfg.values = 1;
    ask(t, "How many customers live in Yokohama?", ASKDB_OK);
    assert_non_null(strstr(t->s.last_user, "'Yokohama'"));
}

/* askdb_config.event_fn: cancel the agent (ud) at its first schema event,
** once. */
static askdb_agent *cancel_at_schema_ag;

static void cancel_at_schema(void *ud, const askdb_event *e)
{
    (void)ud;
    if (cancel_at_schema_ag && strcmp(e->name, "schema") == 0) {
        askdb_agent_cancel(cancel_at_schema_ag);
        cancel_at_schema_ag = NULL;
    }
}

/* A value index whose build was cancelled (Ctrl-C during the warm-up or
** the first question) is built by the next question: the cancel is no
** failure of the index, which would leave the agent without values for
** good. */
static void cancelled_value_index_is_built_next_question(void **state)
{
    static const char *const r[] = {"SELECT 1", NULL};
    struct steps *t = steps(state, r);
    const char *db = make_db("cancelvalues.db",
                             "CREATE TABLE port(name TEXT, country TEXT);"
                             "INSERT INTO port VALUES ('Yokohama', 'Japan'),"
                             " ('Rotterdam', 'Netherlands');");

    t->cfg.values = 1;
    t->cfg.event_fn = cancel_at_schema;
    agent_open(t, db);
    cancel_at_schema_ag = t->ag;
    assert_int_equal(askdb_agent_warm(t->ag), ASKDB_ERR_CANCELLED);
    assert_null(cancel_at_schema_ag);   /* cancelled before the build */
    turn(t, "How many ships are in Yokohama?");
    assert_non_null(strstr(t->s.last_user, "port.name = 'Yokohama'"));
}

/* Text cut for a prompt is cut between characters, so every message stays
** valid UTF-8 (an HTTP provider's JSON refuses anything else): the plan
** shows 60 bytes of a value, the answer step 80; here both cuts would
** fall inside an "é". */
static void cut_values_stay_utf8_in_plan_and_answer(void **state)
{
    static const char *const r[] = {
        "{\"tasks\": [{\"id\": 1, \"task\": \"the tour\"}, {\"id\": 2, "
        "\"task\": \"its name\", \"depends_on\": [1]}]}",
        "SELECT 'Best of Paris - \xc3\x8ele-de-France: ch\xc3\xa2teau de "
        "Versailles, mus\xc3\xa9" "e d''Orsay' AS tour",
        "SELECT 'Two days in Paris \xc3\x8ele-de-France: ch\xc3\xa2teau de "
        "Versailles, mus\xc3\xa9" "e d''Orsay, Panth\xc3\xa9on' AS tour",
        "The Paris tour.", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.plan = 1;
    t->cfg.answer = 1;
    a = ask(t, "Which tour has both Versailles and Orsay?", ASKDB_OK);
    assert_int_equal(t->s.calls, 4);
    assert_int_equal(t->s.invalid, 0);
    assert_non_null(strstr(t->s.all_users,
                           "Best of Paris - \xc3\x8ele-de-France: "
                           "ch\xc3\xa2teau de Versailles, mus..."));
    assert_non_null(strstr(t->s.last_user, "Panth...\n"));
    assert_string_equal(a->text, "The Paris tour.");
}

/* A question that is not UTF-8 (a Latin-1 terminal) is refused, saying
** at which byte: it was repaired, the model asked about "M\uFFFDxico".
** Nothing is asked: no model call, no trace line. */
static void question_not_utf8_is_refused(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM customers", NULL};
    struct steps *t = steps(state, r);
    char path[128];
    struct stat sb;
    askdb_answer *a;

    assert_int_equal(tmpfile_make(path, sizeof path, "trace"), 0);
    t->cfg.trace_path = path;
    a = ask(t, "How many customers live in M\xe9xico?", ASKDB_ERR_USAGE);
    assert_string_equal(a->error,
                        "the question is not valid UTF-8: byte 29 (0xE9) "
                        "starts no character; askdb reads questions as "
                        "UTF-8 (is the terminal set to another encoding?)");
    assert_string_equal(a->question,
                        "How many customers live in M\xef\xbf\xbdxico?");
    assert_int_equal(t->s.calls, 0);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, 0);
    /* A character cut short at the end too. */
    a = ask(t, "caf\xc3", ASKDB_ERR_USAGE);
    assert_non_null(strstr(a->error, "byte 4 (0xC3)"));
    unlink(path);
}

/* A hint that is not UTF-8 is refused as such a question is (it was
** repaired: the model read 'M\uFFFDxico', a value no table holds, and the
** caller was not told); nothing is asked, nothing traced. */
static void hint_not_utf8_is_refused(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM customers", NULL};
    struct steps *t = steps(state, r);
    char path[128];
    struct stat sb;

    assert_int_equal(tmpfile_make(path, sizeof path, "trace"), 0);
    t->cfg.trace_path = path;
    agent_open(t, testdb_shop());
    assert_int_equal(askdb_agent_ask_hint(t->ag, "How many live there?",
                                          "there is M\xe9xico", &t->a),
                     ASKDB_ERR_USAGE);
    assert_string_equal(t->a->error,
                        "the hint is not valid UTF-8: byte 11 (0xE9) "
                        "starts no character; askdb reads hints as UTF-8 "
                        "(convert it before asking)");
    assert_string_equal(askdb_agent_errmsg(t->ag), t->a->error);
    assert_string_equal(t->a->question, "How many live there?");
    assert_int_equal(t->s.calls, 0);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, 0);
    /* The same hint in UTF-8 is asked. */
    askdb_answer_free(t->a);
    t->a = NULL;
    assert_int_equal(askdb_agent_ask_hint(t->ag, "How many live there?",
                                          "there is M\xc3\xa9xico", &t->a),
                     ASKDB_OK);
    assert_true(t->s.calls > 0);
    unlink(path);
}

/* A hint of more than ASKDB_MAX_QUESTION characters is refused as such a
** question is: it went whole into every message of the question. */
static void hint_over_the_limit_is_refused(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM customers", NULL};
    struct steps *t = steps(state, r);
    size_t n = ASKDB_MAX_QUESTION, i;
    char *h = malloc(2 * (n + 1) + 1), want[160];

    assert_non_null(h);
    for (i = 0; i < n; i++)          /* n characters of 2 bytes: taken */
        memcpy(h + 2 * i, "\xc3\xa9", 2);
    h[2 * n] = '\0';
    agent_open(t, testdb_shop());
    assert_int_equal(askdb_agent_ask_hint(t->ag, "How many?", h, &t->a),
                     ASKDB_OK);
    assert_int_equal(t->s.calls, 1);
    askdb_answer_free(t->a);
    t->a = NULL;
    memcpy(h + 2 * n, "\xc3\xa9", 3);  /* one more: refused */
    assert_int_equal(askdb_agent_ask_hint(t->ag, "How many?", h, &t->a),
                     ASKDB_ERR_USAGE);
    snprintf(want, sizeof want, "the hint is %zu characters long, over the "
             "limit of %d (ASKDB_MAX_QUESTION): give what the schema does "
             "not say in fewer words", n + 1, ASKDB_MAX_QUESTION);
    assert_string_equal(t->a->error, want);
    assert_int_equal(t->s.calls, 1);
    free(h);
}

/* A question of more than ASKDB_MAX_QUESTION characters is refused
** before the model sees it (it was sent whole, once per candidate);
** characters, not bytes: as many in Japanese as in English. */
static void question_over_the_limit_is_refused(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM customers", NULL};
    struct steps *t = steps(state, r);
    size_t n = ASKDB_MAX_QUESTION, i;
    char *q = malloc(3 * (n + 1) + 1);
    askdb_answer *a;

    assert_non_null(q);
    for (i = 0; i <= n; i++)
        memcpy(q + 3 * i, "\xe3\x81\x82", 3);   /* a hiragana */
    q[3 * (n + 1)] = '\0';
    a = ask(t, q, ASKDB_ERR_USAGE);
    assert_string_equal(a->error,
                        "the question is 8193 characters long, over the "
                        "limit of 8192 (ASKDB_MAX_QUESTION): ask it in "
                        "fewer words");
    assert_int_equal(t->s.calls, 0);
    /* ASKDB_MAX_QUESTION characters (3 times the bytes) are asked. */
    q[3 * n] = '\0';
    ask(t, q, ASKDB_OK);
    assert_true(t->s.calls > 0);
    free(q);
}

/* Values of a Latin-1 database are not UTF-8: the model could not write
** them, nor be sent them, so the value hints leave them out. */
static void latin1_values_are_left_out_of_the_prompt(void **state)
{
    static const char *const r[] = {"SELECT 1", NULL};
    struct steps *t = steps(state, r);
    const char *db, *hints;
    char trace[4300], ev[8192];

    db = make_db("latin1.db",
                 "CREATE TABLE cafes (id INTEGER PRIMARY KEY, name TEXT);"
                 "INSERT INTO cafes (name) VALUES ('Caf\xe9 de Flore'), "
                 "('Les Deux Magots'), ('La Rotonde');");
    t->cfg.values = 1;
    snprintf(trace, sizeof trace, "%s/latin1.trace", tmpdir);
    t->cfg.trace_path = trace;
    ask_on(t, db, "Is Cafe de Flore or Les Deux Magots older?",
           ASKDB_OK);
    assert_int_equal(t->s.invalid, 0);
    /* both are found; only the one the model can write is named */
    hints = strstr(t->s.last_user, "Values the question mentions");
    assert_non_null(hints);
    assert_non_null(strstr(hints, "- cafes.name = 'Les Deux Magots'"));
    assert_null(strstr(hints, "Flore'"));
    /* the trace shows both (it holds only UTF-8 too) */
    trace_steps(trace, "values", ev, sizeof ev);
    assert_non_null(strstr(ev, "\"value\":\"Les Deux Magots\""));
    assert_non_null(strstr(ev, "\"value\":\"Caf\xef\xbf\xbd de Flore\""));
}

/* A check doubts a result, its repair returns no rows: the doubted rows
** stand, and the answer in words describes those rows, not "no rows". */
static void answer_describes_the_result_that_stands(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM customers",
        "SELECT count(*) FROM customers WHERE id < 0 GROUP BY id",
        "There are 60 customers.", NULL};
    struct steps *t = steps(state, r);
    askdb_answer *a;

    t->cfg.checks = 1;
    t->cfg.answer = 1;
    a = ask(t, "How many customers are there?", ASKDB_OK);
    assert_int_equal(t->s.calls, 3);
    assert_doubted_result_stands(a);
    assert_non_null(strstr(t->s.last_user,
                           "Query used:\nSELECT id FROM customers\n"));
    assert_null(strstr(t->s.last_user, "(no rows)"));
    assert_string_equal(a->text, "There are 60 customers.");
}

/* A value index whose cache file is damaged (it opens, lookups fail):
** the question is answered without value hints, not failed. */
static void failed_value_lookup_is_not_a_failed_question(void **state)
{
    static const char *const r[] = {"SELECT 1", "SELECT 2", NULL};
    struct steps *t = steps(state, r);
    char dir[4200], file[4500], trace[4300], ev[8192], sum[33];
    askdb_answer *a;

    t->cfg.values = 1;
    a = ask(t, "How many customers live in Yokohama?", ASKDB_OK);
    assert_non_null(strstr(t->s.last_user, "'Yokohama'"));
    assert_int_equal(
        cache_file_checksum(testdb_shop(), sum, dir, sizeof dir), 0);
    snprintf(file, sizeof file, "%s/values/%s.fts", tmpdir, sum);
    assert_int_equal(sqlfile_exec(file, "UPDATE val_words_data SET block = "
                                        "x'0102030405060708090a' WHERE id > "
                                        "10"), 0);

    snprintf(trace, sizeof trace, "%s/lookup.trace", tmpdir);
    t->cfg.trace_path = trace;
    a = ask(t, "How many customers live in Yokohama?", ASKDB_OK);
    assert_null(strstr(t->s.last_user, "Values the question mentions"));
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 2);
    trace_steps(trace, "values", ev, sizeof ev);
    assert_non_null(strstr(ev, "\"error\":\"value lookup failed\""));
    unlink(file); /* the next test builds a sound one */
}

/* --bank K: K pairs of other databases between the schema and the
** question, their SQL as the bank has it; none with 0 (the default). */
static void bank_examples_come_after_the_schema(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM customers",
                                    "SELECT count(*) FROM customers", NULL};
    struct steps *t = steps(state, r);
    const char *schema, *ex, *q, *p;
    int n = 0;

    t->cfg.bank = 2;
    ask(t, "How many customers are there?", ASKDB_OK);
    schema = strstr(t->s.last_user, "Database schema:");
    ex = strstr(t->s.last_user, "Examples from other databases");
    q = strstr(t->s.last_user, "\nQuestion: How many customers");
    assert_non_null(schema);
    assert_non_null(ex);
    assert_non_null(q);
    assert_true(schema < ex && ex < q);
    for (p = ex; (p = strstr(p, "\nSQL: SELECT")) != NULL && p < q; p++)
        n++;
    assert_int_equal(n, 2);
    assert_non_null(strstr(ex, "count(*)"));
    t->cfg.bank = 0;
    ask(t, "How many customers are there?", ASKDB_OK);
    assert_null(strstr(t->s.last_user, "Examples from other databases"));
}

/* A learned-pairs store whose search fails: no examples, no failure. */
static void failed_examples_lookup_is_not_a_failed_question(void **state)
{
    static const char *const r[] = {"SELECT 1", NULL};
    struct steps *t = steps(state, r);
    char path[4200];
    askdb_answer *a;

    snprintf(path, sizeof path, "%s/damaged.sqlite", tmpdir);
    store_with_a_pair(path);
    assert_int_equal(sqlfile_exec(path, "DROP TABLE pairs_fts"), 0);
    t->cfg.memory = 3;
    t->cfg.memory_path = path;
    a = ask(t, "How many orders were refunded?", ASKDB_OK);
    assert_null(strstr(t->s.last_user, "Examples of questions"));
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 1);
}

/* A store locked by a long write (askdb learn of a whole file) when the
** agent first opens it costs that question its examples (after the 5 s
** busy wait); the next question opens it and has them. */
static void locked_store_is_tried_again_next_question(void **state)
{
    static const char *const r[] = {"SELECT 1", "SELECT 2", NULL};
    struct steps *t = steps(state, r);
    sqlite3 *lock = NULL;
    char path[4200];

    snprintf(path, sizeof path, "%s/locked.sqlite", tmpdir);
    store_with_a_pair(path);
    t->cfg.memory = 3;
    t->cfg.memory_path = path;
    agent_open(t, testdb_shop());
    assert_int_equal(sqlite3_open(path, &lock), SQLITE_OK);
    assert_int_equal(sqlite3_exec(lock, "BEGIN EXCLUSIVE", NULL, NULL, NULL),
                     SQLITE_OK);
    turn(t, "How many orders were refunded?");
    assert_null(strstr(t->s.last_user, "Examples of questions"));
    sqlite3_exec(lock, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(lock);
    turn(t, "How many orders were refunded?");
    assert_non_null(strstr(t->s.last_user, "status = 'cancelled'"));
}

/* Each test with its fixture (struct steps). */
#define T(name) cmocka_unit_test_setup_teardown(name, steps_setup, \
                                                steps_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(greeting_is_answered_without_the_model),
        T(farewells_and_good_morning_are_greetings),
        T(off_topic_question_is_asked_once),
        T(unsure_question_goes_on_when_the_model_says_yes),
        T(matching_question_skips_the_model_check),
        T(candidates_are_voted_on_by_results),
        T(settled_votes_make_no_more_candidates),
        T(sql_calls_say_what_they_are_for),
        T(gate_without_confidence_asks_every_candidate),
        T(tied_results_are_put_to_the_model),
        T(bank_examples_come_after_the_schema),
        T(repeated_failure_is_asked_again),
        T(a_failing_database_is_not_repaired),
        T(warm_asks_nothing_and_changes_nothing),
        T(warm_events_have_a_request_id_of_their_own),
        T(idle_join_off_answers_at_once),
        T(clean_candidate_stands_before_a_repair),
        T(failing_candidates_do_not_vote),
        T(fixed_candidate_loses_a_tie),
        T(attempt_pairs_each_error_with_its_sql),
        T(first_row_over_the_cap_is_not_an_empty_result),
        T(repaired_result_has_the_confidence_of_one_candidate),
        T(shape_check_repairs_once),
        T(doubted_result_stands_when_the_repair_fails),
        T(doubted_result_stands_when_the_model_fails),
        T(doubted_settled_result_stands_with_its_settled_count),
        T(long_check_hint_reaches_the_repair_whole),
        T(literal_check_names_the_stored_spelling),
        T(answer_in_words_with_truncation_said),
        T(answer_failure_keeps_the_rows),
        T(follow_up_sees_the_earlier_question),
        T(follow_up_keeps_the_earlier_tables),
        T(plan_runs_tasks_and_hands_on_results),
        T(plan_shows_a_huge_task_statement_cut),
        T(plan_shows_a_huge_column_name_cut),
        T(single_step_question_skips_the_plan),
        T(plan_task_sees_its_dependencies_rows),
        T(dry_run_makes_no_plan),
        T(invalid_plan_falls_back_to_one_step),
        cmocka_unit_test(plan_parser_validates),
        cmocka_unit_test(plan_cues_match_whole_words),
        T(learned_examples_go_into_the_prompt),
        T(pairs_learned_during_a_session_are_used),
        T(values_found_go_into_the_prompt),
        T(cancelled_value_index_is_built_next_question),
        T(empty_result_names_where_the_value_is),
        T(no_fix_compares_a_column_with_itself),
        T(empty_result_names_an_outer_column),
        T(cut_values_stay_utf8_in_plan_and_answer),
        T(question_not_utf8_is_refused),
        T(hint_not_utf8_is_refused),
        T(hint_over_the_limit_is_refused),
        T(question_over_the_limit_is_refused),
        T(latin1_values_are_left_out_of_the_prompt),
        T(answer_describes_the_result_that_stands),
        T(failed_value_lookup_is_not_a_failed_question),
        T(failed_examples_lookup_is_not_a_failed_question),
        T(locked_store_is_tried_again_next_question),
    };
    test_filter_from_env();
    return cmocka_run_group_tests_name("agent_steps", tests,
                                       tmpdir_cache_setup, tmpdir_teardown);
}
