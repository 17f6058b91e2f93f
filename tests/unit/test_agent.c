/* test_agent.c - the generate/validate/execute/repair loop, scripted. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "askdb.h"
#include "agent/agent.h"
#include "agent/steps.h"
#include "scripted.h"

static askdb_answer *ask(struct script *s, int max_attempts, int dry_run,
                         const char *q, askdb_status want)
{
    askdb_config cfg = scripted_config(s);
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    askdb_status st;

    cfg.max_attempts = max_attempts;
    cfg.dry_run = dry_run;
    if (askdb_agent_new(&cfg, testdb_shop(), &ag) != ASKDB_OK)
        fail_msg("agent: %s", askdb_agent_errmsg(ag));
    st = askdb_agent_ask(ag, q, &a);
    assert_non_null(a);
    if (st != want)
        fail_msg("status %s, want %s (%s)", askdb_status_str(st),
                 askdb_status_str(want), a->error ? a->error : "");
    askdb_agent_free(ag);
    return a;
}

static void answers_on_first_attempt(void **state)
{
    static const char *const r[] = {
        "```sql\nSELECT count(*) AS n FROM customers\n```", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 0, "How many customers?", ASKDB_OK);

    (void)state;
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.last_n, 2); /* system + user */
    assert_non_null(strstr(s.last_user, "CREATE TABLE customers"));
    assert_non_null(strstr(s.last_user, "Question: How many customers?"));
    assert_string_equal(a->sql, "SELECT count(*) AS n FROM customers");
    assert_int_equal(a->result->nrows, 1);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
    assert_int_equal(a->nattempts, 1);
    assert_int_equal(a->attempts[0].error, ASKDB_EC_NONE);
    assert_int_equal(a->llm_calls, 1);
    askdb_answer_free(a);
}

static void repairs_unknown_column_once(void **state)
{
    static const char *const r[] = {
        "SELECT emial FROM customers WHERE id = 1",
        "SELECT email FROM customers WHERE id = 1", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 0, "Email of customer 1?", ASKDB_OK);

    (void)state;
    assert_int_equal(s.calls, 2);
    assert_int_equal(s.last_n, 4); /* system, user, assistant, feedback */
    assert_non_null(strstr(s.last_user, "Error: no such column: emial"));
    assert_non_null(strstr(s.last_user, "customers.email"));
    assert_non_null(strstr(s.last_user, "SELECT emial FROM customers"));
    assert_int_equal(a->nattempts, 2);
    assert_int_equal(a->attempts[0].error, ASKDB_EC_UNKNOWN_COLUMN);
    assert_int_equal(a->attempts[1].error, ASKDB_EC_NONE);
    assert_int_equal(a->result->nrows, 1);
    askdb_answer_free(a);
}

static void unknown_table_hint_lists_real_tables(void **state)
{
    static const char *const r[] = {
        "SELECT * FROM customer", "SELECT id FROM customers LIMIT 1", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 0, "q", ASKDB_OK);

    (void)state;
    assert_non_null(strstr(s.last_user, "no such table: customer"));
    assert_non_null(strstr(s.last_user, "(closest first): customers, "));
    askdb_answer_free(a);
}

static void syntax_hint_points_at_the_error(void **state)
{
    static const char *const r[] = {
        "SELECT id\nFROM customers\nWHERE id = = 3", "SELECT 1", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 0, "q", ASKDB_OK);

    (void)state;
    assert_non_null(strstr(s.last_user, "syntax error at line 3, near \"=\""
                                        ":\n  WHERE id = = 3\n           ^\n"));
    askdb_answer_free(a);
}

/* A reply whose statement is huge (a 100 kB literal) and fails: the repair
** turn shows the statement cut, as it does the reply, not whole again in
** the feedback (each later request would be larger than the one before). */
static void huge_failed_statement_is_sent_back_cut(void **state)
{
    static char big[120000];
    static const char *const r[] = {
        big, "SELECT count(*) AS n FROM customers", NULL};
    struct script s = {.replies = r};
    askdb_answer *a;
    size_t k;

    (void)state;
    k = (size_t)snprintf(big, sizeof big, "SELECT nosuch, '");
    memset(big + k, 'x', 100000);
    snprintf(big + k + 100000, sizeof big - k - 100000,
             "' AS pad FROM customers");
    a = ask(&s, 3, 0, "How many customers?", ASKDB_OK);
    assert_int_equal(s.calls, 2);
    /* the whole feedback fits the record (16 kB): the statement is cut */
    assert_non_null(strstr(s.last_user, "This query failed:\n```sql\n"
                                        "SELECT nosuch, 'xxx"));
    assert_non_null(strstr(s.last_user, "\n-- [... 91847 more bytes of "
                                        "this query left out]\n```\n"));
    assert_non_null(strstr(s.last_user, "Error: no such column: nosuch"));
    assert_non_null(strstr(s.last_user, "Write the corrected query"));
    /* the answer keeps the statement whole */
    assert_int_equal(strlen(a->attempts[0].sql), strlen(big));
    askdb_answer_free(a);
}

/* A syntax error on a huge line: the hint shows the line near the error,
** not the whole line and a caret line of as many blanks. */
static void syntax_hint_on_a_huge_line_shows_its_neighbourhood(void **state)
{
    static char big[120000];
    static const char *const r[] = {big, "SELECT 1", NULL};
    struct script s = {.replies = r};
    askdb_answer *a;
    const char *h;
    size_t k;

    (void)state;
    k = (size_t)snprintf(big, sizeof big, "SELECT '");
    memset(big + k, 'x', 100000);
    snprintf(big + k + 100000, sizeof big - k - 100000,
             "' AS pad FROM customers WHERE id = = 3");
    a = ask(&s, 3, 0, "q", ASKDB_OK);
    assert_int_equal(s.calls, 2);
    h = strstr(s.last_user, "Hint: syntax error at line 1, near \"=\":\n"
                            "  ...xxx");
    assert_non_null(h);
    assert_non_null(strstr(h, "xxx' AS pad FROM customers WHERE id = = 3\n"
                              "     "));
    /* the caret is under the token: 2 + 3 blanks, then LINE_SIDE */
    h = strchr(strchr(h, '\n') + 1, '\n') + 1;
    assert_int_equal(strspn(h, " "), 2 + 3 + 2048);
    assert_int_equal(h[2 + 3 + 2048], '^');
    assert_non_null(strstr(s.last_user, "Write the corrected query"));
    askdb_answer_free(a);
}

static void gives_up_after_max_attempts_listing_each(void **state)
{
    static const char *const r[] = {
        "SELECT nope FROM customers", "SELECT * FROM nowhere",
        "SELEC 1", "SELECT 1", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 0, "q", ASKDB_ERR_NO_SQL);

    (void)state;
    assert_int_equal(s.calls, 3);
    assert_int_equal(a->nattempts, 3);
    assert_null(a->sql);
    assert_null(a->result);
    assert_int_equal(a->attempts[0].error, ASKDB_EC_UNKNOWN_COLUMN);
    assert_int_equal(a->attempts[1].error, ASKDB_EC_UNKNOWN_TABLE);
    assert_int_equal(a->attempts[2].error, ASKDB_EC_NO_SQL);
    assert_non_null(strstr(a->error, "no valid SQL after 3 attempts"));
    assert_non_null(strstr(a->error, "attempt 1: unknown_column: no such "
                                     "column: nope"));
    assert_non_null(strstr(a->error, "attempt 2: unknown_table"));
    assert_non_null(strstr(a->error, "attempt 3: no_sql"));
    askdb_answer_free(a);
}

static void max_attempts_is_capped_to_what_the_conversation_holds(void **state)
{
    static const char *r[41];
    struct script s = {.replies = r};
    askdb_answer *a;
    int i;

    (void)state;
    for (i = 0; i < 40; i++)
        r[i] = "SELECT nope FROM orders";
    a = ask(&s, 40, 0, "q", ASKDB_ERR_NO_SQL);
    assert_int_equal(a->nattempts, 32);
    assert_int_equal(s.calls, 32);
    assert_non_null(strstr(a->error, "no valid SQL after 32 attempts"));
    askdb_answer_free(a);
}

static void refused_write_is_fed_back_not_run(void **state)
{
    static const char *const r[] = {
        "DELETE FROM orders", "SELECT count(*) FROM orders", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 0, "q", ASKDB_OK);

    (void)state;
    assert_int_equal(a->attempts[0].error, ASKDB_EC_REFUSED);
    assert_non_null(strstr(s.last_user, "refused: "));
    assert_non_null(strstr(s.last_user, "must be a query starting with SELECT"));
    assert_null(strstr(s.last_user, "refused: refused"));
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 250);
    askdb_answer_free(a);
}

/* A refused statement again after the repair said what askdb runs: the
** question most likely asks to change the data, and a third call would
** not help. The note on writes ends the message. */
static void refused_twice_in_a_row_stops(void **state)
{
    static const char *const r[] = {
        "DELETE FROM orders", "UPDATE orders SET total = 0",
        "SELECT count(*) FROM orders", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 5, 0, "q", ASKDB_ERR_NO_SQL);

    (void)state;
    assert_int_equal(s.calls, 2);
    assert_int_equal(a->nattempts, 2);
    assert_int_equal(a->attempts[1].error, ASKDB_EC_REFUSED);
    assert_non_null(strstr(a->error, "no valid SQL after 2 attempts"));
    assert_non_null(strstr(a->error, "never changes the data"));
    askdb_answer_free(a);
}

/* Refusals that are not in a row are repaired as any failure. */
static void refusals_apart_are_repaired(void **state)
{
    static const char *const r[] = {
        "DELETE FROM orders", "SELECT nope FROM orders",
        "DELETE FROM orders", "SELECT count(*) FROM orders", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 5, 0, "q", ASKDB_OK);

    (void)state;
    assert_int_equal(s.calls, 4);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 250);
    askdb_answer_free(a);
}

/* A read the guard refuses (it loads an extension) is repaired to the
** last attempt: only changes end the question sooner. */
static void refused_reads_are_repaired_to_the_end(void **state)
{
    static const char *const r[] = {
        "SELECT load_extension('x')", "SELECT load_extension('y')",
        "SELECT count(*) FROM orders", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 0, "q", ASKDB_OK);

    (void)state;
    assert_int_equal(s.calls, 3);
    assert_int_equal(a->attempts[0].error, ASKDB_EC_REFUSED);
    assert_int_equal(a->attempts[1].error, ASKDB_EC_REFUSED);
    assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 250);
    askdb_answer_free(a);
}

static void empty_result_retried_once_then_stands(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM customers WHERE country = 'Germany'",
        "SELECT id FROM customers WHERE country = 'germany'",
        "SELECT 1", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 0, "q", ASKDB_OK);

    (void)state;
    assert_int_equal(s.calls, 2);
    assert_non_null(strstr(s.last_user, "returned no rows"));
    assert_non_null(strstr(s.last_user, "Reconsider the filters"));
    assert_string_equal(a->sql,
                        "SELECT id FROM customers WHERE country = 'germany'");
    assert_int_equal(a->result->nrows, 0);
    assert_int_equal(a->result->ncols, 1);
    assert_int_equal(a->attempts[1].error, ASKDB_EC_EMPTY);
    askdb_answer_free(a);
}

static void empty_result_then_rows(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM customers WHERE country = 'Germany'",
        "SELECT count(*) FROM customers WHERE country = 'DE'", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 0, "q", ASKDB_OK);

    (void)state;
    assert_int_equal(a->result->nrows, 1);
    assert_true(askdb_result_cell(a->result, 0, 0)->i > 0);
    assert_int_equal(a->attempts[1].error, ASKDB_EC_NONE);
    askdb_answer_free(a);
}

static void empty_result_stands_when_repair_fails(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM customers WHERE country = 'Germany'", "SELEC x",
        NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 2, 0, "q", ASKDB_OK);

    (void)state;
    assert_string_equal(a->sql,
                        "SELECT id FROM customers WHERE country = 'Germany'");
    assert_int_equal(a->result->nrows, 0);
    askdb_answer_free(a);
}

static void empty_result_stands_when_the_model_fails(void **state)
{
    static const char *const r[] = {
        "SELECT id FROM customers WHERE country = 'Germany'", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 0, "q", ASKDB_OK);

    (void)state;
    assert_int_equal(s.calls, 2); /* the retry's call failed */
    assert_string_equal(a->sql,
                        "SELECT id FROM customers WHERE country = 'Germany'");
    assert_int_equal(a->result->nrows, 0);
    assert_int_equal(a->nattempts, 2);
    assert_int_equal(a->attempts[1].error, ASKDB_EC_LLM);
    assert_null(a->error);
    askdb_answer_free(a);
}

static void dry_run_validates_without_running(void **state)
{
    static const char *const r[] = {
        "SELECT nope FROM orders",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT count(*) FROM c", NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 1, "q", ASKDB_OK);

    (void)state;
    assert_int_equal(s.calls, 2);
    assert_null(a->result);
    assert_non_null(strstr(a->sql, "WITH RECURSIVE"));
    assert_true(a->t.exec_ms == 0);
    askdb_answer_free(a);
}

static void model_failure_stops_at_once(void **state)
{
    static const char *const r[] = {NULL};
    struct script s = {.replies = r};
    askdb_answer *a = ask(&s, 3, 0, "q", ASKDB_ERR_LLM);

    (void)state;
    assert_int_equal(s.calls, 1);
    assert_int_equal(a->nattempts, 1);
    assert_int_equal(a->attempts[0].error, ASKDB_EC_LLM);
    assert_non_null(a->error);
    askdb_answer_free(a);
}

static void trace_records_each_step(void **state)
{
    static const char *const r[] = {"SELECT nope", "SELECT 1 AS one", NULL};
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    char path[128], line[65536];
    const char *want[] = {"question", "schema", "link", "prompt", "reply",
                          "error", "repair", "prompt", "reply", "validate",
                          "execute", "answer"};
    FILE *f;
    int i = 0;

    (void)state;
    assert_int_equal(tmpfile_make(path, sizeof path, "trace"), 0);
    cfg.trace_path = path;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    assert_int_equal(askdb_agent_ask(ag, "q", &a), ASKDB_OK);
    askdb_answer_free(a);
    askdb_agent_free(ag);
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        char key[64];
        assert_true(i < 12);
        snprintf(key, sizeof key, "\"step\":\"%s\"", want[i]);
        if (!strstr(line, key))
            fail_msg("line %d: want step %s: %.200s", i, want[i], line);
        i++;
    }
    fclose(f);
    unlink(path);
    assert_int_equal(i, 12);
}

/* What an event callback saw (events_carry_each_step_and_request_id). */
struct seen {
    int n;
    askdb_event_type type[32];
    char *json[32];
    char rid[80];
    int rid_ok;
    double last_t;
    int t_ok;
};

static void on_event(void *ud, const askdb_event *ev)
{
    struct seen *s = ud;

    if (s->n == 0)
        snprintf(s->rid, sizeof s->rid, "%s", ev->request_id);
    s->rid_ok &= strcmp(s->rid, ev->request_id) == 0;
    s->t_ok &= ev->t_ms >= s->last_t;
    s->last_t = ev->t_ms;
    if (s->n < 32) {
        s->type[s->n] = ev->type;
        s->json[s->n] = strndup(ev->json, ev->json_len);
    }
    s->n++;
}

/* A column under the wrong alias is re-qualified without a model call,
** with a fix event saying what changed; with the switch off, the model
** is asked to repair it. */
static void wrong_alias_is_requalified_without_the_model(void **state)
{
    static const char *const r[] = {
        "SELECT o.amount FROM orders o JOIN payments p ON p.order_id = o.id "
        "WHERE p.id = 1",
        "SELECT p.amount FROM payments p WHERE p.id = 1", NULL};
    struct script sc = {.replies = r};
    askdb_config cfg = scripted_config(&sc);
    struct seen s = {.rid_ok = 1, .t_ok = 1};
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    int i, fixes = 0;

    (void)state;
    cfg.event_fn = on_event;
    cfg.event_ud = &s;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    assert_int_equal(askdb_agent_ask(ag, "amount of payment 1", &a),
                     ASKDB_OK);
    assert_int_equal(sc.calls, 1);
    assert_int_equal(a->nattempts, 1);
    assert_string_equal(a->sql, "SELECT p.amount FROM orders o JOIN payments "
                                "p ON p.order_id = o.id WHERE p.id = 1");
    assert_int_equal(a->result->nrows, 1);
    for (i = 0; i < s.n; i++) {
        if (s.type[i] == ASKDB_EVENT_FIX) {
            fixes++;
            assert_non_null(strstr(s.json[i], "\"o.amount -> p.amount\""));
            assert_non_null(strstr(s.json[i], "\"kind\":\"requalify\""));
        }
        free(s.json[i]);
    }
    assert_int_equal(fixes, 1);
    askdb_answer_free(a);
    askdb_agent_free(ag);

    /* Off: the model repairs it (a second call). */
    sc.next = sc.calls = 0;
    s.n = 0;
    cfg.requalify = 0;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    assert_int_equal(askdb_agent_ask(ag, "amount of payment 1", &a),
                     ASKDB_OK);
    assert_int_equal(sc.calls, 2);
    assert_int_equal(a->nattempts, 2);
    for (i = 0; i < s.n; i++) {
        assert_int_not_equal(s.type[i], ASKDB_EVENT_FIX);
        free(s.json[i]);
    }
    askdb_answer_free(a);
    askdb_agent_free(ag);
}

/* A trace that cannot be written (a full disk) fails the question with
** ASKDB_ERR_IO, its rows kept, and the answer event says so: it said "ok"
** while the call returned the error. */
static void answer_event_says_the_trace_failed(void **state)
{
    static const char *const r[] = {"SELECT 1 AS one", NULL};
    struct script sc = {.replies = r};
    askdb_config cfg = scripted_config(&sc);
    struct seen s = {.rid_ok = 1, .t_ok = 1};
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    char want[64];
    int i, answers = 0;

    (void)state;
    if (access("/dev/full", W_OK) != 0)
        skip();
    cfg.event_fn = on_event;
    cfg.event_ud = &s;
    cfg.trace_path = "/dev/full";
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    assert_int_equal(askdb_agent_ask(ag, "one", &a), ASKDB_ERR_IO);
    assert_non_null(a->result);
    assert_non_null(strstr(a->error, "cannot write trace file"));
    snprintf(want, sizeof want, "\"status\":\"%s\"",
             askdb_status_str(ASKDB_ERR_IO));
    for (i = 0; i < s.n && i < 32; i++) {
        if (s.type[i] == ASKDB_EVENT_ANSWER) {
            answers++;
            assert_non_null(strstr(s.json[i], want));
            assert_non_null(strstr(s.json[i], "cannot write trace file"));
        }
        free(s.json[i]);
    }
    assert_int_equal(answers, 1);
    askdb_answer_free(a);
    askdb_agent_free(ag);
}

/* The event callback gets every step, typed, with one request id (the
** caller's when given), and a JSON object whose "step" names the type. */
static void events_carry_each_step_and_request_id(void **state)
{
    static const char *const r[] = {"SELECT nope", "SELECT 1 AS one", NULL};
    static const askdb_event_type want[] = {
        ASKDB_EVENT_QUESTION, ASKDB_EVENT_SCHEMA, ASKDB_EVENT_LINK,
        ASKDB_EVENT_PROMPT, ASKDB_EVENT_REPLY, ASKDB_EVENT_ERROR,
        ASKDB_EVENT_REPAIR, ASKDB_EVENT_PROMPT, ASKDB_EVENT_REPLY,
        ASKDB_EVENT_VALIDATE, ASKDB_EVENT_EXECUTE, ASKDB_EVENT_ANSWER};
    struct script sc = {.replies = r};
    askdb_config cfg = scripted_config(&sc);
    struct seen s = {.rid_ok = 1, .t_ok = 1};
    askdb_ask_options o = {.request_id = "req-42"};
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    json_error_t je;
    json_t *j;
    int i;

    (void)state;
    cfg.event_fn = on_event;
    cfg.event_ud = &s;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    assert_int_equal(askdb_agent_ask_opts(ag, "q", &o, &a), ASKDB_OK);
    assert_string_equal(a->request_id, "req-42");
    assert_string_equal(a->question, "q");
    assert_int_equal(s.n, 12);
    assert_string_equal(s.rid, "req-42");
    assert_true(s.rid_ok);
    assert_true(s.t_ok);
    for (i = 0; i < 12; i++) {
        assert_int_equal(s.type[i], want[i]);
        j = json_loads(s.json[i], 0, &je);
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(j, "step")),
                            askdb_event_type_str(want[i]));
        assert_string_equal(
            json_string_value(json_object_get(j, "request_id")), "req-42");
        if (want[i] == ASKDB_EVENT_REPAIR)
            assert_string_equal(
                json_string_value(json_object_get(j, "class")),
                "unknown_column");
        if (want[i] == ASKDB_EVENT_ANSWER) {
            assert_string_equal(
                json_string_value(json_object_get(j, "sql")),
                "SELECT 1 AS one");
            assert_true(json_is_object(json_object_get(j, "timings")));
        }
        json_decref(j);
        free(s.json[i]);
    }
    askdb_answer_free(a);
    /* Without an id, each question gets a new random one. */
    s.n = 0;
    sc.next = 0;
    assert_int_equal(askdb_agent_ask(ag, "q", &a), ASKDB_OK);
    assert_int_equal(strlen(a->request_id), 16);
    assert_string_not_equal(a->request_id, "req-42");
    for (i = 0; i < s.n && i < 32; i++)
        free(s.json[i]);
    askdb_answer_free(a);
    askdb_agent_free(ag);
}

/* A library caller's zeroed config runs queries under the database's
** default time limit (askdb_db_open()); the timeout hint names that
** limit, not "0 ms". The repair step is driven directly: a real timeout
** would cost the whole default limit. */
static void timeout_hint_names_the_limit_in_force(void **state)
{
    static const char *const none[] = {NULL};
    struct script s = {.replies = none};
    askdb_config cfg = scripted_config(&s);
    askdb_agent *ag = NULL;
    struct agent_state st;
    askdb_answer a;
    char want[96];
    int i;

    (void)state;
    cfg.query_timeout_ms = 0;
    if (askdb_agent_new(&cfg, testdb_shop(), &ag) != ASKDB_OK)
        fail_msg("agent: %s", askdb_agent_errmsg(ag));
    memset(&st, 0, sizeof st);
    memset(&a, 0, sizeof a);
    st.ag = ag;
    st.ans = &a;
    st.question = "Count forever";
    st.ec = ASKDB_EC_TIMEOUT;
    snprintf(st.errbuf, sizeof st.errbuf, "query interrupted");
    assert_int_equal(agent_step_repair(&st), OUT_OK);
    assert_int_equal(st.nmsgs, 2);
    snprintf(want, sizeof want, "longer than the %d ms limit",
             askdb_config_default().query_timeout_ms);
    if (!strstr(st.msgs[1].content, want))
        fail_msg("no '%s' in: %s", want, st.msgs[1].content);
    for (i = 0; i < st.nmsgs; i++)
        free(st.owned[i]);
    askdb_agent_free(ag);
}

static void missing_database_fails_agent_creation(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_agent *ag = NULL;
    struct script s = {.replies = NULL};

    (void)state;
    cfg.llm_fn = scripted;
    cfg.llm_ud = &s;
    assert_int_equal(askdb_agent_new(&cfg, "/nonexistent/x.db", &ag),
                     ASKDB_ERR_DB_OPEN);
    assert_non_null(strstr(askdb_agent_errmsg(ag), "/nonexistent/x.db"));
    askdb_agent_free(ag);
    askdb_agent_free(NULL);
    askdb_answer_free(NULL);
    askdb_result_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(answers_on_first_attempt),
        cmocka_unit_test(repairs_unknown_column_once),
        cmocka_unit_test(unknown_table_hint_lists_real_tables),
        cmocka_unit_test(syntax_hint_points_at_the_error),
        cmocka_unit_test(huge_failed_statement_is_sent_back_cut),
        cmocka_unit_test(syntax_hint_on_a_huge_line_shows_its_neighbourhood),
        cmocka_unit_test(gives_up_after_max_attempts_listing_each),
        cmocka_unit_test(refused_twice_in_a_row_stops),
        cmocka_unit_test(refusals_apart_are_repaired),
        cmocka_unit_test(refused_reads_are_repaired_to_the_end),
        cmocka_unit_test(max_attempts_is_capped_to_what_the_conversation_holds),
        cmocka_unit_test(refused_write_is_fed_back_not_run),
        cmocka_unit_test(empty_result_retried_once_then_stands),
        cmocka_unit_test(empty_result_then_rows),
        cmocka_unit_test(empty_result_stands_when_repair_fails),
        cmocka_unit_test(empty_result_stands_when_the_model_fails),
        cmocka_unit_test(dry_run_validates_without_running),
        cmocka_unit_test(model_failure_stops_at_once),
        cmocka_unit_test(trace_records_each_step),
        cmocka_unit_test(events_carry_each_step_and_request_id),
        cmocka_unit_test(answer_event_says_the_trace_failed),
        cmocka_unit_test(wrong_alias_is_requalified_without_the_model),
        cmocka_unit_test(timeout_hint_names_the_limit_in_force),
        cmocka_unit_test(missing_database_fails_agent_creation),
    };
    test_filter_from_env();
    return cmocka_run_group_tests_name("agent", tests, NULL, NULL);
}
