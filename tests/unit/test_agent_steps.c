/* test_agent_steps.c - the agent's techniques, with a scripted model:
** question check, candidates and voting, checks, answer, conversation,
** planning, learned examples, value retrieval and linking in the prompt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "askdb.h"
#include "agent/memory.h"
#include "agent/plan.h"
#include "core/buf.h"
#include "core/cache.h"

/* The scripted model: replies in order, and every user message it saw. */
struct script {
    const char *const *replies;
    int next;
    int calls;
    char last_user[16384];
    char all_users[65536];   /* every call's last user message, joined */
    int invalid;             /* messages that were not valid UTF-8 (an
                                HTTP provider could not send them) */
};

/* Whether s is text JSON can hold (jansson checks UTF-8 itself). */
static int json_ok(const char *s)
{
    json_t *j = json_string(s);

    json_decref(j);
    return j != NULL;
}

static int scripted(void *ud, int n, const char *const *roles,
                    const char *const *contents, char **reply)
{
    struct script *s = ud;
    size_t len;
    int i;

    s->calls++;
    for (i = 0; i < n; i++)
        s->invalid += !json_ok(contents[i]);
    for (i = n - 1; i >= 0; i--)
        if (strcmp(roles[i], "user") == 0) {
            snprintf(s->last_user, sizeof s->last_user, "%s", contents[i]);
            len = strlen(s->all_users);
            snprintf(s->all_users + len, sizeof s->all_users - len,
                     "%s\n----\n", contents[i]);
            break;
        }
    if (!s->replies[s->next])
        return 1;
    *reply = strdup(s->replies[s->next++]);
    return *reply ? 0 : 1;
}

static const char *shop(void)
{
    const char *p = getenv("SHOP_DB");

    return p ? p : "examples/shop.db";
}

static char cache_dir[] = "/tmp/askdb-steps-XXXXXX";

/* Techniques off; each test turns on what it tests. */
static askdb_config base(struct script *s)
{
    askdb_config cfg = askdb_config_default();

    cfg.llm_fn = scripted;
    cfg.llm_ud = s;
    cfg.values = 0;
    cfg.question_check = 0;
    cfg.checks = 0;
    cfg.memory = 0;
    cfg.plan = 0;
    cfg.candidates = 1;
    return cfg;
}

static askdb_answer *ask_db(const askdb_config *cfg, const char *db,
                            const char *q, askdb_status want)
{
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    askdb_status st;

    if (askdb_agent_new(cfg, db, &ag) != ASKDB_OK)
        fail_msg("agent: %s", askdb_agent_errmsg(ag));
    st = askdb_agent_ask(ag, q, &a);
    assert_non_null(a);
    if (st != want)
        fail_msg("status %s, want %s (%s)", askdb_status_str(st),
                 askdb_status_str(want), a->error ? a->error : "");
    askdb_agent_free(ag);
    return a;
}

static askdb_answer *ask_cfg(const askdb_config *cfg, const char *q,
                             askdb_status want)
{
    return ask_db(cfg, shop(), q, want);
}

/* A new SQLite database in the cache directory, made by sql. */
static const char *make_db(const char *name, const char *sql)
{
    static char path[4200];
    sqlite3 *h = NULL;
    char *err = NULL;

    snprintf(path, sizeof path, "%s/%s", cache_dir, name);
    unlink(path);
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    if (sqlite3_exec(h, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s: %s", name, err);
    sqlite3_close(h);
    return path;
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
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.question_check = 1;
    a = ask_cfg(&cfg, "Hello there!", ASKDB_OK);
    assert_int_equal(s.calls, 0);
    assert_int_equal(a->not_a_question, 1);
    assert_null(a->sql);
    assert_null(a->result);
    assert_non_null(strstr(a->text, "Hello"));
    assert_non_null(strstr(a->text, "customers"));
    askdb_answer_free(a);
}

/* Farewells and "good morning" are greetings too; a stray "you?" is not
** (it goes to the model's yes/no check). */
static void farewells_and_good_morning_are_greetings(void **state)
{
    static const char *const greetings[] = {
        "Good morning!", "Goodbye", "Cheers!", "good night", "Nice to meet "
        "you", "Thank you!", "hi, how are you?", NULL};
    static const char *const r[] = {"no", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;
    int i;

    (void)state;
    cfg.question_check = 1;
    for (i = 0; greetings[i]; i++) {
        a = ask_cfg(&cfg, greetings[i], ASKDB_OK);
        if (s.calls != 0 || !a->text || !strstr(a->text, "Hello!"))
            fail_msg("not a greeting: %s", greetings[i]);
        askdb_answer_free(a);
    }
    a = ask_cfg(&cfg, "you?", ASKDB_OK);
    assert_int_equal(s.calls, 1);
    assert_non_null(strstr(a->text, "does not look like a question"));
    askdb_answer_free(a);
}

static void off_topic_question_is_asked_once(void **state)
{
    static const char *const r[] = {"no", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.question_check = 1;
    a = ask_cfg(&cfg, "What is the meaning of life?", ASKDB_OK);
    assert_int_equal(s.calls, 1);
    assert_non_null(strstr(s.last_user, "yes or no"));
    assert_int_equal(a->not_a_question, 1);
    assert_null(a->sql);
    assert_non_null(strstr(a->text, "does not look like a question"));
    askdb_answer_free(a);
}

static void unsure_question_goes_on_when_the_model_says_yes(void **state)
{
    static const char *const r[] = {"Yes.", "SELECT 42 AS answer", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.question_check = 1;
    a = ask_cfg(&cfg, "What is the meaning of life?", ASKDB_OK);
    assert_int_equal(s.calls, 2);
    assert_int_equal(a->not_a_question, 0);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 42);
    askdb_answer_free(a);
}

static void matching_question_skips_the_model_check(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM customers", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.question_check = 1;
    a = ask_cfg(&cfg, "How many customers are there?", ASKDB_OK);
    assert_int_equal(s.calls, 1); /* only the SQL */
    assert_int_equal(a->not_a_question, 0);
    askdb_answer_free(a);
}

static void candidates_are_voted_on_by_results(void **state)
{
    /* The greedy one is outvoted by two that agree (in different SQL). */
    static const char *const r[] = {
        "SELECT 1 AS n",
        "SELECT count(*) AS n FROM customers",
        "SELECT count(id) AS n FROM customers", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.candidates = 3;
    a = ask_cfg(&cfg, "How many customers?", ASKDB_OK);
    assert_int_equal(s.calls, 3);
    assert_int_equal(a->ncandidates, 3);
    assert_string_equal(a->sql, "SELECT count(*) AS n FROM customers");
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
    assert_true(a->confidence > 0.66 && a->confidence < 0.67);
    assert_int_equal(a->llm_calls, 3); /* the callback is called 3 times */
    askdb_answer_free(a);
}

static void failing_candidates_do_not_vote(void **state)
{
    static const char *const r[] = {
        "SELECT nope FROM customers", "not sql at all",
        "SELECT count(*) AS n FROM customers", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.candidates = 3;
    a = ask_cfg(&cfg, "How many customers?", ASKDB_OK);
    assert_int_equal(a->nattempts, 1);
    assert_string_equal(a->sql, "SELECT count(*) AS n FROM customers");
    assert_true(a->confidence > 0.33 && a->confidence < 0.34);
    askdb_answer_free(a);
}

/* A result that comes from a repair is one candidate's: its confidence is
** 1 of the N the question asked for, not 1 of 1. */
static void repaired_result_has_the_confidence_of_one_candidate(void **state)
{
    static const char *const r[] = {
        "SELECT nope FROM customers", "SELECT nope FROM customers",
        "SELECT nope FROM customers", "SELECT count(*) FROM customers",
        NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.candidates = 3;
    a = ask_cfg(&cfg, "How many customers?", ASKDB_OK);
    assert_int_equal(a->nattempts, 2);
    assert_int_equal(a->ncandidates, 3);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
    assert_true(a->confidence > 0.33 && a->confidence < 0.34);
    askdb_answer_free(a);
}

/* No candidate ran: the attempt records the SQL of the candidate whose
** error it records (not the greedy one's SQL with another's error). */
static void attempt_pairs_each_error_with_its_sql(void **state)
{
    static const char *const r[] = {
        "SELECT nope FROM customers",
        "SELECT abs(-9223372036854775807 - 1) FROM customers",
        "not sql at all", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.candidates = 3;
    cfg.max_attempts = 1;
    a = ask_cfg(&cfg, "How many customers?", ASKDB_ERR_NO_SQL);
    assert_int_equal(a->nattempts, 1);
    assert_string_equal(a->attempts[0].sql,
                        "SELECT abs(-9223372036854775807 - 1) FROM "
                        "customers");
    assert_non_null(strstr(a->attempts[0].message, "integer overflow"));
    askdb_answer_free(a);
}

static void shape_check_repairs_once(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM customers", "SELECT count(*) FROM customers", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.checks = 1;
    a = ask_cfg(&cfg, "How many customers are there?", ASKDB_OK);
    assert_int_equal(s.calls, 2);
    assert_non_null(strstr(s.last_user, "looks wrong"));
    assert_int_equal(a->attempts[0].error, ASKDB_EC_CHECK);
    assert_int_equal(a->result->nrows, 1);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
    askdb_answer_free(a);
}

static void doubted_result_stands_when_the_repair_fails(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM customers", "SELEC broken", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.checks = 1;
    a = ask_cfg(&cfg, "How many customers are there?", ASKDB_OK);
    assert_int_equal(s.calls, 2); /* one repair, then the result stands */
    assert_string_equal(a->sql, "SELECT id FROM customers");
    assert_int_equal(a->result->nrows, 60);
    askdb_answer_free(a);
}

/* The model fails on the repair a check asked for: the doubted result
** stands, as when the repair gives nothing better (docs/agent.md). */
static void doubted_result_stands_when_the_model_fails(void **state)
{
    static const char *const r[] = {"SELECT id FROM customers", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.checks = 1;
    cfg.answer = 1;
    a = ask_cfg(&cfg, "How many customers are there?", ASKDB_OK);
    assert_int_equal(s.calls, 2); /* no answer call after the failure */
    assert_string_equal(a->sql, "SELECT id FROM customers");
    assert_int_equal(a->result->nrows, 60);
    assert_int_equal(a->attempts[0].error, ASKDB_EC_CHECK);
    assert_int_equal(a->attempts[1].error, ASKDB_EC_LLM);
    assert_null(a->text);
    askdb_answer_free(a);
}

/* A check hint longer than the 1 KB error buffer reaches the repair whole
** (the all-NULL hint names every column, then says what to do). */
static void long_check_hint_reaches_the_repair_whole(void **state)
{
    static char sql[4096];
    const char *r[] = {sql, "SELECT 1", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;
    size_t len;
    int i;

    (void)state;
    len = (size_t)snprintf(sql, sizeof sql, "SELECT 1 AS id");
    for (i = 1; i < 24; i++)
        len += (size_t)snprintf(sql + len, sizeof sql - len,
                                ", NULL AS a_rather_long_column_name_that_"
                                "is_empty_%02d", i);
    cfg.checks = 1;
    a = ask_cfg(&cfg, "What do we know?", ASKDB_OK);
    assert_int_equal(s.calls, 2);
    assert_int_equal(a->attempts[0].error, ASKDB_EC_CHECK);
    assert_true(strlen(a->attempts[0].message) > 1024);
    assert_non_null(strstr(s.last_user, "is_empty_23' are NULL in every "
                                        "row."));
    assert_non_null(strstr(s.last_user, "If the data simply holds no value "
                                        "there, repeat the same query.\n"));
    askdb_answer_free(a);
}

static void literal_check_names_the_stored_spelling(void **state)
{
    static const char *const r[] = {
        "SELECT count(*) FROM customers WHERE country = 'de'",
        "SELECT count(*) FROM customers WHERE country = 'DE'", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.checks = 1;
    a = ask_cfg(&cfg, "How many customers are from Germany?", ASKDB_OK);
    /* count(*) of nothing is one row, 0: only the literal check sees it */
    assert_int_equal(s.calls, 2);
    assert_int_equal(a->attempts[0].error, ASKDB_EC_CHECK);
    assert_non_null(strstr(s.last_user, "'DE'"));
    assert_true(askdb_result_cell(a->result, 0, 0)->i > 0);
    askdb_answer_free(a);
}

static void answer_in_words_with_truncation_said(void **state)
{
    static const char *const r[] = {
        "SELECT first_name FROM customers ORDER BY first_name",
        "  These are the customers.\n", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.answer = 1;
    cfg.max_rows = 5;
    a = ask_cfg(&cfg, "Which customers are there?", ASKDB_OK);
    assert_int_equal(s.calls, 2);
    assert_non_null(strstr(s.last_user, "Question: Which customers"));
    assert_non_null(strstr(s.last_user, "Result:"));
    assert_non_null(a->text);
    assert_true(strncmp(a->text, "These are the customers.", 24) == 0);
    assert_non_null(strstr(a->text, "cut off at 5 rows"));
    assert_int_equal(a->result->nrows, 5); /* the rows are kept */
    askdb_answer_free(a);
}

static void answer_failure_keeps_the_rows(void **state)
{
    static const char *const r[] = {"SELECT 7 AS n", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.answer = 1;
    a = ask_cfg(&cfg, "Seven?", ASKDB_OK);
    assert_null(a->text);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 7);
    askdb_answer_free(a);
}

static void follow_up_sees_the_earlier_question(void **state)
{
    static const char *const r[] = {
        "SELECT count(*) FROM orders",
        "SELECT count(*) FROM orders WHERE order_date LIKE '2023%'",
        "SELECT 1", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;

    (void)state;
    cfg.conversation = 1;
    assert_int_equal(askdb_agent_new(&cfg, shop(), &ag), ASKDB_OK);
    assert_int_equal(askdb_agent_ask(ag, "How many orders?", &a), ASKDB_OK);
    assert_null(strstr(s.last_user, "Earlier questions"));
    askdb_answer_free(a);
    assert_int_equal(askdb_agent_ask(ag, "and only for 2023?", &a), ASKDB_OK);
    assert_non_null(strstr(s.last_user, "Earlier questions"));
    assert_non_null(strstr(s.last_user, "1. How many orders?\n"
                                        "   SQL: SELECT count(*) FROM orders"));
    askdb_answer_free(a);
    askdb_agent_forget(ag);
    assert_int_equal(askdb_agent_ask(ag, "Another?", &a), ASKDB_OK);
    assert_null(strstr(s.last_user, "Earlier questions"));
    askdb_answer_free(a);
    askdb_agent_free(ag);
}

/* A follow-up is linked with the earlier turns: the table the earlier SQL
** read stays in the schema, though the follow-up alone links another (a
** schema of 10 tables, big enough to be cut down). */
static void follow_up_keeps_the_earlier_tables(void **state)
{
    static const char *const r[] = {
        "SELECT count(*) FROM singer",
        "SELECT count(*) FROM stadium WHERE capacity > 5000", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    struct buf sql;
    const char *db;
    static const char *const tables[] = {
        "singer", "stadium", "album", "label", "award", "critic", "review",
        "studio", "producer", "venue", NULL};
    int i;

    (void)state;
    buf_init(&sql, 0);
    for (i = 0; tables[i]; i++)
        buf_printf(&sql, "CREATE TABLE %s (%s_id INTEGER PRIMARY KEY, "
                         "name TEXT, country_of_origin TEXT, capacity "
                         "INTEGER, founded_in_year INTEGER, "
                         "description_of_the_%s TEXT, owner_name TEXT, "
                         "total_number_of_members INTEGER, website_address "
                         "TEXT, main_contact_email TEXT, "
                         "last_updated_at TEXT); INSERT INTO %s (name) "
                         "VALUES ('x');", tables[i], tables[i], tables[i],
                   tables[i]);
    assert_int_equal(buf_err(&sql), 0);
    db = make_db("ten.db", sql.data);
    buf_free(&sql);
    cfg.conversation = 1;
    assert_int_equal(askdb_agent_new(&cfg, db, &ag), ASKDB_OK);
    assert_int_equal(askdb_agent_ask(ag, "How many singers are there?", &a),
                     ASKDB_OK);
    assert_non_null(strstr(s.last_user, "CREATE TABLE singer ("));
    assert_null(strstr(s.last_user, "CREATE TABLE stadium (")); /* cut */
    askdb_answer_free(a);
    assert_int_equal(askdb_agent_ask(ag, "and with a stadium over 5000?",
                                     &a), ASKDB_OK);
    assert_non_null(strstr(s.last_user, "   SQL: SELECT count(*) FROM "
                                        "singer"));
    assert_non_null(strstr(s.last_user, "CREATE TABLE stadium ("));
    assert_non_null(strstr(s.last_user, "CREATE TABLE singer ("));
    askdb_answer_free(a);
    askdb_agent_free(ag);
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
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.plan = 1;
    a = ask_cfg(&cfg, "How many orders have a total higher than the average "
                      "order total?", ASKDB_OK);
    assert_int_equal(s.calls, 3);
    assert_int_equal(a->llm_calls, 3);
    assert_non_null(strstr(s.all_users, "Reply with JSON only"));
    assert_non_null(strstr(s.all_users, "for step 1 only: average order"));
    /* the final statement sees step 1's query and its result */
    assert_non_null(strstr(s.last_user, "Step 1 (average order total)"));
    assert_non_null(strstr(s.last_user, "avg_total\n"));
    assert_non_null(strstr(s.last_user, "Final step 2: orders above it"));
    assert_int_equal(a->result->nrows, 1);
    askdb_answer_free(a);
}

/* A dry run never executes: not even a plan's earlier tasks, so there is
** no plan, only the statement. */
static void dry_run_makes_no_plan(void **state)
{
    static const char *const r[] = {
        "SELECT count(*) FROM orders WHERE total > (SELECT avg(total) FROM "
        "orders)", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.plan = 1;
    cfg.dry_run = 1;
    a = ask_cfg(&cfg, "How many orders have a total higher than the average "
                      "order total?", ASKDB_OK);
    assert_int_equal(s.calls, 1);
    assert_null(strstr(s.all_users, "Reply with JSON only"));
    assert_null(a->result);
    assert_non_null(strstr(a->sql, "avg(total)"));
    askdb_answer_free(a);
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
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;
    char *task2, *end;

    (void)state;
    cfg.plan = 1;
    a = ask_cfg(&cfg, "How many orders have a total higher than the average "
                      "order total?", ASKDB_OK);
    assert_int_equal(s.calls, 4);
    task2 = strstr(s.all_users, "for step 2 only: orders above it");
    assert_non_null(task2);
    end = strstr(task2, "\n----\n");
    assert_non_null(end);
    *end = '\0';
    assert_non_null(strstr(task2, "Step 1 (average order total):\n```sql\n"
                                  "SELECT round(avg(total), 2) AS avg_total "
                                  "FROM orders\n```\nResult:\navg_total\n"));
    askdb_answer_free(a);
}

static void single_step_question_skips_the_plan(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM orders", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.plan = 1;
    a = ask_cfg(&cfg, "How many orders?", ASKDB_OK);
    assert_int_equal(s.calls, 1);
    askdb_answer_free(a);
}

static void invalid_plan_falls_back_to_one_step(void **state)
{
    static const char *const r[] = {"I think we should first...",
                                    "SELECT count(*) FROM orders", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.plan = 1;
    a = ask_cfg(&cfg, "How many orders are above the average order total?",
                ASKDB_OK);
    assert_int_equal(s.calls, 2);
    assert_int_equal(a->result->nrows, 1);
    askdb_answer_free(a);
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
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    struct memory *m = NULL;
    char err[256], path[4200], *key;
    askdb_answer *a;

    (void)state;
    snprintf(path, sizeof path, "%s/memory.sqlite", cache_dir);
    key = memory_db_key(shop());
    assert_non_null(key);
    assert_int_equal(memory_open(path, 1, &m, err, sizeof err), 0);
    assert_true(memory_add(m, key, "How many orders were paid by card?",
                           "SELECT count(*) FROM payments WHERE method = "
                           "'card'", err, sizeof err) >= 0);
    memory_close(m);
    free(key);
    cfg.memory = 3;
    cfg.memory_path = path;
    a = ask_cfg(&cfg, "How many orders were paid by bank transfer?",
                ASKDB_OK);
    assert_non_null(strstr(s.last_user, "How many orders were paid by "
                                        "card?"));
    assert_non_null(strstr(s.last_user, "method = 'card'"));
    askdb_answer_free(a);
}

static void pairs_learned_during_a_session_are_used(void **state)
{
    static const char *const r[] = {"SELECT 1", "SELECT 2", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    struct memory *m = NULL;
    char err[256], path[4200], *key;

    (void)state;
    snprintf(path, sizeof path, "%s/later.sqlite", cache_dir);
    cfg.memory = 3;
    cfg.memory_path = path;
    assert_int_equal(askdb_agent_new(&cfg, shop(), &ag), ASKDB_OK);
    assert_int_equal(askdb_agent_ask(ag, "How many orders were refunded?",
                                     &a), ASKDB_OK);
    assert_null(strstr(s.last_user, "Examples of questions"));
    askdb_answer_free(a);
    /* the store appears while the agent lives (askdb learn in another
    ** terminal): the next question uses it */
    key = memory_db_key(shop());
    assert_int_equal(memory_open(path, 1, &m, err, sizeof err), 0);
    assert_true(memory_add(m, key, "How many orders were cancelled?",
                           "SELECT count(*) FROM orders WHERE status = "
                           "'cancelled'", err, sizeof err) >= 0);
    memory_close(m);
    free(key);
    assert_int_equal(askdb_agent_ask(ag, "How many orders were refunded?",
                                     &a), ASKDB_OK);
    assert_non_null(strstr(s.last_user, "status = 'cancelled'"));
    askdb_answer_free(a);
    askdb_agent_free(ag);
}

static void values_found_go_into_the_prompt(void **state)
{
    static const char *const r[] = {"SELECT 1", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.values = 1;
    a = ask_cfg(&cfg, "How many customers live in Yokohama?", ASKDB_OK);
    assert_non_null(strstr(s.last_user, "'Yokohama'"));
    askdb_answer_free(a);
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
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.plan = 1;
    cfg.answer = 1;
    a = ask_cfg(&cfg, "Which tour has both Versailles and Orsay?", ASKDB_OK);
    assert_int_equal(s.calls, 4);
    assert_int_equal(s.invalid, 0);
    assert_non_null(strstr(s.all_users,
                           "Best of Paris - \xc3\x8ele-de-France: "
                           "ch\xc3\xa2teau de Versailles, mus..."));
    assert_non_null(strstr(s.last_user, "Panth...\n"));
    assert_string_equal(a->text, "The Paris tour.");
    askdb_answer_free(a);
}

/* A question that is not UTF-8 (a Latin-1 terminal) is repaired once, at
** the start: the prompt and the trace's question event carry U+FFFD. */
static void question_not_utf8_is_repaired(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM customers", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    char path[] = "/tmp/askdb-trace-XXXXXX", ev[8192];
    askdb_answer *a;
    int fd;

    (void)state;
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cfg.trace_path = path;
    a = ask_cfg(&cfg, "How many customers live in M\xe9xico?", ASKDB_OK);
    assert_int_equal(s.invalid, 0);
    assert_non_null(strstr(s.last_user, "live in M\xef\xbf\xbdxico?"));
    trace_steps(path, "question", ev, sizeof ev);
    assert_non_null(strstr(ev, "M\xef\xbf\xbdxico?"));
    askdb_answer_free(a);
    unlink(path);
}

/* Values of a Latin-1 database are not UTF-8: the model could not write
** them, nor be sent them, so the value hints leave them out. */
static void latin1_values_are_left_out_of_the_prompt(void **state)
{
    static const char *const r[] = {"SELECT 1", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    const char *db, *hints;
    char trace[4300], ev[8192];
    askdb_answer *a;

    (void)state;
    db = make_db("latin1.db",
                 "CREATE TABLE cafes (id INTEGER PRIMARY KEY, name TEXT);"
                 "INSERT INTO cafes (name) VALUES ('Caf\xe9 de Flore'), "
                 "('Les Deux Magots'), ('La Rotonde');");
    cfg.values = 1;
    snprintf(trace, sizeof trace, "%s/latin1.trace", cache_dir);
    cfg.trace_path = trace;
    a = ask_db(&cfg, db, "Is Cafe de Flore or Les Deux Magots older?",
               ASKDB_OK);
    assert_int_equal(s.invalid, 0);
    /* both are found; only the one the model can write is named */
    hints = strstr(s.last_user, "Values the question mentions");
    assert_non_null(hints);
    assert_non_null(strstr(hints, "- cafes.name = 'Les Deux Magots'"));
    assert_null(strstr(hints, "Flore'"));
    /* the trace shows both (it holds only UTF-8 too) */
    trace_steps(trace, "values", ev, sizeof ev);
    assert_non_null(strstr(ev, "\"value\":\"Les Deux Magots\""));
    assert_non_null(strstr(ev, "\"value\":\"Caf\xef\xbf\xbd de Flore\""));
    askdb_answer_free(a);
}

/* A check doubts a result, its repair returns no rows: the doubted rows
** stand, and the answer in words describes those rows, not "no rows". */
static void answer_describes_the_result_that_stands(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM customers",
        "SELECT count(*) FROM customers WHERE id < 0 GROUP BY id",
        "There are 60 customers.", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_answer *a;

    (void)state;
    cfg.checks = 1;
    cfg.answer = 1;
    a = ask_cfg(&cfg, "How many customers are there?", ASKDB_OK);
    assert_int_equal(s.calls, 3);
    assert_string_equal(a->sql, "SELECT id FROM customers");
    assert_int_equal(a->result->nrows, 60);
    assert_non_null(strstr(s.last_user,
                           "Query used:\nSELECT id FROM customers\n"));
    assert_null(strstr(s.last_user, "(no rows)"));
    assert_string_equal(a->text, "There are 60 customers.");
    askdb_answer_free(a);
}

/* Run sql on the SQLite file at path (a store or a cache file). */
static void exec_on(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    char *err = NULL;

    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    if (sqlite3_exec(h, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s: %s", sql, err);
    sqlite3_close(h);
}

/* A learned-pairs store at path with one pair for the shop database. */
static void store_with_a_pair(const char *path)
{
    struct memory *m = NULL;
    char err[256], *key = memory_db_key(shop());

    assert_non_null(key);
    unlink(path);
    assert_int_equal(memory_open(path, 1, &m, err, sizeof err), 0);
    assert_true(memory_add(m, key, "How many orders were cancelled?",
                           "SELECT count(*) FROM orders WHERE status = "
                           "'cancelled'", err, sizeof err) >= 0);
    memory_close(m);
    free(key);
}

/* A value index whose cache file is damaged (it opens, lookups fail):
** the question is answered without value hints, not failed. */
static void failed_value_lookup_is_not_a_failed_question(void **state)
{
    static const char *const r[] = {"SELECT 1", "SELECT 2", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    char dir[4200], file[4500], trace[4300], ev[8192], sum[33];
    askdb_answer *a;

    (void)state;
    cfg.values = 1;
    a = ask_cfg(&cfg, "How many customers live in Yokohama?", ASKDB_OK);
    assert_non_null(strstr(s.last_user, "'Yokohama'"));
    askdb_answer_free(a);
    assert_int_equal(cache_file_checksum(shop(), sum, dir, sizeof dir), 0);
    snprintf(file, sizeof file, "%s/values/%s.fts", cache_dir, sum);
    exec_on(file, "UPDATE val_words_data SET block = "
                  "x'0102030405060708090a' WHERE id > 10");

    snprintf(trace, sizeof trace, "%s/lookup.trace", cache_dir);
    cfg.trace_path = trace;
    a = ask_cfg(&cfg, "How many customers live in Yokohama?", ASKDB_OK);
    assert_null(strstr(s.last_user, "Values the question mentions"));
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 2);
    trace_steps(trace, "values", ev, sizeof ev);
    assert_non_null(strstr(ev, "\"error\":\"value lookup failed\""));
    askdb_answer_free(a);
    unlink(file); /* the next test builds a sound one */
}

/* A learned-pairs store whose search fails: no examples, no failure. */
static void failed_examples_lookup_is_not_a_failed_question(void **state)
{
    static const char *const r[] = {"SELECT 1", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    char path[4200];
    askdb_answer *a;

    (void)state;
    snprintf(path, sizeof path, "%s/damaged.sqlite", cache_dir);
    store_with_a_pair(path);
    exec_on(path, "DROP TABLE pairs_fts");
    cfg.memory = 3;
    cfg.memory_path = path;
    a = ask_cfg(&cfg, "How many orders were refunded?", ASKDB_OK);
    assert_null(strstr(s.last_user, "Examples of questions"));
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 1);
    askdb_answer_free(a);
}

/* A store locked by a long write (askdb learn of a whole file) when the
** agent first opens it costs that question its examples (after the 5 s
** busy wait); the next question opens it and has them. */
static void locked_store_is_tried_again_next_question(void **state)
{
    static const char *const r[] = {"SELECT 1", "SELECT 2", NULL};
    struct script s = {r, 0, 0, "", "", 0};
    askdb_config cfg = base(&s);
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    sqlite3 *lock = NULL;
    char path[4200];

    (void)state;
    snprintf(path, sizeof path, "%s/locked.sqlite", cache_dir);
    store_with_a_pair(path);
    cfg.memory = 3;
    cfg.memory_path = path;
    assert_int_equal(askdb_agent_new(&cfg, shop(), &ag), ASKDB_OK);
    assert_int_equal(sqlite3_open(path, &lock), SQLITE_OK);
    assert_int_equal(sqlite3_exec(lock, "BEGIN EXCLUSIVE", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(askdb_agent_ask(ag, "How many orders were refunded?",
                                     &a), ASKDB_OK);
    assert_null(strstr(s.last_user, "Examples of questions"));
    askdb_answer_free(a);
    sqlite3_exec(lock, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(lock);
    assert_int_equal(askdb_agent_ask(ag, "How many orders were refunded?",
                                     &a), ASKDB_OK);
    assert_non_null(strstr(s.last_user, "status = 'cancelled'"));
    askdb_answer_free(a);
    askdb_agent_free(ag);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(cache_dir))
        return -1;
    return setenv("ASKDB_CACHE_DIR", cache_dir, 1);
}

static int teardown(void **state)
{
    char cmd[256];

    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(greeting_is_answered_without_the_model),
        cmocka_unit_test(farewells_and_good_morning_are_greetings),
        cmocka_unit_test(off_topic_question_is_asked_once),
        cmocka_unit_test(unsure_question_goes_on_when_the_model_says_yes),
        cmocka_unit_test(matching_question_skips_the_model_check),
        cmocka_unit_test(candidates_are_voted_on_by_results),
        cmocka_unit_test(failing_candidates_do_not_vote),
        cmocka_unit_test(attempt_pairs_each_error_with_its_sql),
        cmocka_unit_test(repaired_result_has_the_confidence_of_one_candidate),
        cmocka_unit_test(shape_check_repairs_once),
        cmocka_unit_test(doubted_result_stands_when_the_repair_fails),
        cmocka_unit_test(doubted_result_stands_when_the_model_fails),
        cmocka_unit_test(long_check_hint_reaches_the_repair_whole),
        cmocka_unit_test(literal_check_names_the_stored_spelling),
        cmocka_unit_test(answer_in_words_with_truncation_said),
        cmocka_unit_test(answer_failure_keeps_the_rows),
        cmocka_unit_test(follow_up_sees_the_earlier_question),
        cmocka_unit_test(follow_up_keeps_the_earlier_tables),
        cmocka_unit_test(plan_runs_tasks_and_hands_on_results),
        cmocka_unit_test(single_step_question_skips_the_plan),
        cmocka_unit_test(plan_task_sees_its_dependencies_rows),
        cmocka_unit_test(dry_run_makes_no_plan),
        cmocka_unit_test(invalid_plan_falls_back_to_one_step),
        cmocka_unit_test(plan_parser_validates),
        cmocka_unit_test(plan_cues_match_whole_words),
        cmocka_unit_test(learned_examples_go_into_the_prompt),
        cmocka_unit_test(pairs_learned_during_a_session_are_used),
        cmocka_unit_test(values_found_go_into_the_prompt),
        cmocka_unit_test(cut_values_stay_utf8_in_plan_and_answer),
        cmocka_unit_test(question_not_utf8_is_repaired),
        cmocka_unit_test(latin1_values_are_left_out_of_the_prompt),
        cmocka_unit_test(answer_describes_the_result_that_stands),
        cmocka_unit_test(failed_value_lookup_is_not_a_failed_question),
        cmocka_unit_test(failed_examples_lookup_is_not_a_failed_question),
        cmocka_unit_test(locked_store_is_tried_again_next_question),
    };
    return cmocka_run_group_tests_name("agent_steps", tests, setup, teardown);
}
