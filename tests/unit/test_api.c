/* test_api.c - the public API as an embedder uses it: cancel, a shared
** model on threads, learned pairs, the JSON writers, output paths. */
#define _XOPEN_SOURCE 700 /* realpath() */
#include "testutil.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "askdb.h"
#include "fakellm.h"
#include "scripted.h"

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Calls askdb_agent_cancel(ag) (or askdb_db_cancel(db)) after delay_ms on
** its own thread; with a
** script, delay_ms after the model's first call (the statement then runs:
** a slow start, as under valgrind, must not make the cancel land before
** the question has begun). */
struct canceller {
    askdb_agent *ag;
    askdb_db *db;            /* or, when not NULL, askdb_db_cancel(db) */
    int delay_ms;
    const struct script *after;  /* or NULL: from the thread's start */
    double at;               /* when it cancelled */
    pthread_t th;
};

static void *cancel_later(void *ud)
{
    struct canceller *c = ud;
    struct timespec ts = {c->delay_ms / 1000,
                          (c->delay_ms % 1000) * 1000000L};
    struct timespec poll = {0, 1000000L};
    int waited;

    for (waited = 0; c->after && waited < 60000 &&
                     __atomic_load_n(&c->after->calls, __ATOMIC_SEQ_CST) < 1;
         waited++)
        nanosleep(&poll, NULL);
    nanosleep(&ts, NULL);
    c->at = now_ms();
    if (c->db)
        askdb_db_cancel(c->db);
    else
        askdb_agent_cancel(c->ag);
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* Cancel                                                                 */
/* ---------------------------------------------------------------------- */

/* A query that runs for minutes: counting to a billion. */
static const char *const long_query[] = {
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
    "WHERE x < 1000000000) SELECT count(*) AS n FROM c",
    NULL};

/* askdb_agent_cancel() from another thread stops the running query (which
** would run for minutes) at once: within a second, a margin for a run
** under valgrind (about 200 ms there, a few under ASan); the question ends
** as cancelled, not as a timeout. */
static void cancel_stops_a_running_query(void **state)
{
    struct script s = {.replies = long_query};
    askdb_config cfg = scripted_config(&s);
    struct canceller c = {.delay_ms = 300, .after = &s};
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    askdb_status st;
    double ms;

    (void)state;
    cfg.query_timeout_ms = 60000;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    c.ag = ag;
    assert_int_equal(pthread_create(&c.th, NULL, cancel_later, &c), 0);
    st = askdb_agent_ask(ag, "count to a billion", &a);
    ms = now_ms() - c.at;
    /* Joined before any assert: a thread left running would cancel the
    ** next test's agent. */
    pthread_join(c.th, NULL);
    assert_int_equal(st, ASKDB_ERR_CANCELLED);
    if (ms > 1000)
        fail_msg("stopped %.0f ms after the cancel, want 1000 at most", ms);
    assert_int_equal(a->status, ASKDB_ERR_CANCELLED);
    assert_string_equal(a->error, "cancelled");
    assert_null(a->result);
    assert_int_equal(s.calls, 1);   /* no repair after a cancel */
    assert_string_equal(askdb_status_str(ASKDB_ERR_CANCELLED), "cancelled");
    askdb_answer_free(a);
    askdb_agent_free(ag);
}

/* A cancel while no question runs does not stop the next one. */
static void cancel_between_questions_is_forgotten(void **state)
{
    static const char *const r[] = {"SELECT 1 AS one", NULL};
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;

    (void)state;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    askdb_agent_cancel(ag);
    assert_int_equal(askdb_agent_ask(ag, "one", &a), ASKDB_OK);
    assert_string_equal(a->sql, "SELECT 1 AS one");
    askdb_answer_free(a);
    askdb_agent_free(ag);
    askdb_agent_cancel(NULL);   /* a no-op */
}

/* A question of nothing but white space is a usage error, asked of
** nobody: no model call, no event, no turn of the conversation. */
static int nevents;

static void count_event(void *ud, const askdb_event *ev)
{
    (void)ud;
    (void)ev;
    nevents++;
}

static void blank_question_is_a_usage_error(void **state)
{
    static const char *const r[] = {"SELECT 1 AS one", NULL};
    static const char *const blanks[] = {"", " ", "\t\n \r\v\f"};
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    size_t i;

    (void)state;
    cfg.conversation = 1;
    cfg.event_fn = count_event;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    nevents = 0;
    for (i = 0; i < sizeof blanks / sizeof *blanks; i++) {
        assert_int_equal(askdb_agent_ask(ag, blanks[i], &a), ASKDB_ERR_USAGE);
        assert_int_equal(a->status, ASKDB_ERR_USAGE);
        assert_string_equal(a->error, "the question is empty");
        assert_null(a->sql);
        askdb_answer_free(a);
    }
    assert_int_equal(askdb_agent_ask(ag, NULL, &a), ASKDB_ERR_USAGE);
    askdb_answer_free(a);
    assert_int_equal(s.calls, 0);
    assert_int_equal(nevents, 0);
    /* The next real question is the conversation's first. */
    assert_int_equal(askdb_agent_ask(ag, "one", &a), ASKDB_OK);
    assert_string_equal(a->sql, "SELECT 1 AS one");
    assert_int_equal(s.last_n, 2);
    askdb_answer_free(a);
    askdb_agent_free(ag);
}

/* max_attempts of 0 or less is the default, 3, as for the limits: a
** zeroed setting does not take away the repairs. */
static void zero_max_attempts_means_the_default(void **state)
{
    static const char *const bad[] = {
        "SELECT nope FROM customers", "SELECT nope FROM customers",
        "SELECT nope FROM customers", "SELECT nope FROM customers", NULL};
    static const int asked[] = {0, -1, 1};
    static const int want[] = {3, 3, 1};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof asked / sizeof *asked; i++) {
        struct script s = {.replies = bad};
        askdb_config cfg = scripted_config(&s);
        askdb_agent *ag = NULL;
        askdb_answer *a = NULL;

        cfg.max_attempts = asked[i];
        assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
        assert_int_equal(askdb_agent_ask(ag, "nope?", &a), ASKDB_ERR_NO_SQL);
        assert_int_equal(a->nattempts, want[i]);
        assert_int_equal(s.calls, want[i]);
        askdb_answer_free(a);
        askdb_agent_free(ag);
    }
}

/* The events of one question, as "name json" lines. */
static char events_seen[16384];

static void keep_event(void *ud, const askdb_event *ev)
{
    size_t n = strlen(events_seen);

    (void)ud;
    snprintf(events_seen + n, sizeof events_seen - n, "%s %s\n", ev->name,
             ev->json);
}

/* As the header says: the plain-English answer is the answer event's
** text; answer_text comes only when it could not be had, with the error,
** and the rows stand. */
static void plain_answer_is_in_the_answer_event(void **state)
{
    static const char *const ok[] = {"SELECT count(*) AS n FROM customers",
                                     "There are 60 customers.", NULL};
    static const char *const no_words[] = {
        "SELECT count(*) AS n FROM customers", NULL};
    const char *const *replies[] = {ok, no_words};
    int i;

    (void)state;
    for (i = 0; i < 2; i++) {
        struct script s = {.replies = replies[i]};
        askdb_config cfg = scripted_config(&s);
        askdb_agent *ag = NULL;
        askdb_answer *a = NULL;
        const char *ans;

        cfg.answer = 1;
        cfg.event_fn = keep_event;
        events_seen[0] = '\0';
        assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
        assert_int_equal(askdb_agent_ask(ag, "How many customers?", &a),
                         ASKDB_OK);
        assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
        ans = strstr(events_seen, "\nanswer {");
        assert_non_null(ans);
        assert_int_equal(strchr(ans + 1, '\n')[1], '\0'); /* the last */
        if (i == 0) {
            assert_string_equal(a->text, "There are 60 customers.");
            assert_non_null(strstr(ans, "\"text\":\"There are 60 "
                                        "customers.\""));
            assert_null(strstr(events_seen, "answer_text "));
        } else {
            assert_null(a->text);
            assert_non_null(strstr(events_seen, "answer_text {"));
            assert_non_null(strstr(strstr(events_seen, "answer_text {"),
                                   "\"error\":"));
        }
        askdb_answer_free(a);
        askdb_agent_free(ag);
    }
}

/* What the result event lent: its rows as askdb_result_json() writes
** them; the agent to cancel there (a cancel while the words are written). */
static char result_rows[4096];
static askdb_agent *cancel_at_result;

static void cancel_on_question(void *ud, const askdb_event *ev)
{
    (void)ud;
    if (ev->type == ASKDB_EVENT_QUESTION && cancel_at_result)
        askdb_agent_cancel(cancel_at_result);
}

static void keep_result_event(void *ud, const askdb_event *ev)
{
    char *rows = NULL;

    keep_event(ud, ev);
    if (ev->type != ASKDB_EVENT_RESULT) {
        assert_null(ev->result);
        return;
    }
    assert_non_null(ev->result);
    assert_int_equal(askdb_result_json(ev->result, NULL, NULL, 0, &rows),
                     ASKDB_OK);
    snprintf(result_rows, sizeof result_rows, "%s", rows);
    askdb_free(rows);
    if (cancel_at_result)
        askdb_agent_cancel(cancel_at_result);
}

/* With an answer in words, the result event comes first, with the rows
** (not in its JSON: traces get that); a cancel while the words are
** written keeps the rows: ASKDB_OK, no text, answer_text "cancelled". A
** cancel before any result is still ASKDB_ERR_CANCELLED. */
static void result_event_comes_before_the_words(void **state)
{
    static const char *const r[] = {"SELECT count(*) AS n FROM customers",
                                    "There are 60 customers.", NULL};
    int cancel;

    (void)state;
    for (cancel = 0; cancel < 2; cancel++) {
        struct script s = {.replies = r};
        askdb_config cfg = scripted_config(&s);
        askdb_agent *ag = NULL;
        askdb_answer *a = NULL;
        const char *res;

        cfg.answer = 1;
        cfg.event_fn = keep_result_event;
        events_seen[0] = result_rows[0] = '\0';
        assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
        cancel_at_result = cancel ? ag : NULL;
        assert_int_equal(askdb_agent_ask(ag, "How many customers?", &a),
                         ASKDB_OK);
        res = strstr(events_seen, "\nresult {");
        assert_non_null(res);
        assert_non_null(strstr(res, "\"sql\":\"SELECT count(*) AS n FROM "
                                    "customers\""));
        assert_non_null(strstr(res, "\"row_count\":1,\"truncated\":false,"
                                    "\"confidence\":1"));
        assert_null(strstr(res, "\"rows\""));
        assert_non_null(strstr(result_rows, "\"rows\":[[60]]"));
        assert_non_null(strstr(res, "\nanswer {"));
        assert_int_equal(askdb_result_cell(a->result, 0, 0)->i, 60);
        assert_string_equal(a->sql, "SELECT count(*) AS n FROM customers");
        if (!cancel) {
            assert_string_equal(a->text, "There are 60 customers.");
            assert_null(strstr(events_seen, "answer_text "));
        } else {
            assert_null(a->text);
            assert_null(a->error);
            assert_non_null(strstr(res, "\nanswer_text {\"error\":"
                                        "\"cancelled\""));
            assert_int_equal(s.calls, 1); /* the words were not asked */
        }
        askdb_answer_free(a);
        askdb_agent_free(ag);
    }
    cancel_at_result = NULL;
}

/* No result event without an answer in words; a cancel before the
** result (here at the question's first event) is a cancelled question. */
static void cancel_before_the_result_is_cancelled(void **state)
{
    static const char *const r[] = {"SELECT count(*) AS n FROM customers",
                                    "There are 60 customers.", NULL};
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;

    (void)state;
    cfg.event_fn = keep_event;
    events_seen[0] = '\0';
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    assert_int_equal(askdb_agent_ask(ag, "How many customers?", &a),
                     ASKDB_OK);
    assert_null(strstr(events_seen, "result {"));
    askdb_answer_free(a);
    askdb_agent_free(ag);
    ag = NULL;
    s.next = 0;
    cfg.answer = 1;
    cfg.event_fn = cancel_on_question;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    cancel_at_result = ag;
    assert_int_equal(askdb_agent_ask(ag, "How many customers?", &a),
                     ASKDB_ERR_CANCELLED);
    assert_null(a->result);
    askdb_answer_free(a);
    askdb_agent_free(ag);
    cancel_at_result = NULL;
}

/* A statement that takes more than a few steps of SQLite's (the cancel
** flag is looked at every 1000): counting to 10000. */
static const char count_query[] =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
    "WHERE x < 10000) SELECT count(*) AS n FROM c";

/* A statement on the agent's database after a cancelled question runs
** (the shell's .sql after Ctrl-C): the cancel was the question's. */
static void statement_after_a_cancelled_question_runs(void **state)
{
    struct script s = {.replies = long_query};
    askdb_config cfg = scripted_config(&s);
    struct canceller c = {.delay_ms = 200, .after = &s};
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    askdb_result *r = NULL;
    askdb_status st;

    (void)state;
    cfg.query_timeout_ms = 60000;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    c.ag = ag;
    assert_int_equal(pthread_create(&c.th, NULL, cancel_later, &c), 0);
    st = askdb_agent_ask(ag, "count to a billion", &a);
    pthread_join(c.th, NULL);
    assert_int_equal(st, ASKDB_ERR_CANCELLED);
    askdb_answer_free(a);
    assert_int_equal(askdb_db_query(askdb_agent_db(ag), count_query, &r),
                     ASKDB_OK);
    assert_int_equal(askdb_result_cell(r, 0, 0)->i, 10000);
    askdb_result_free(r);
    /* A cancel while nothing runs is forgotten as well. */
    askdb_agent_cancel(ag);
    r = NULL;
    assert_int_equal(askdb_db_query(askdb_agent_db(ag), count_query, &r),
                     ASKDB_OK);
    assert_int_equal(askdb_result_cell(r, 0, 0)->i, 10000);
    askdb_result_free(r);
    askdb_agent_free(ag);
}

/* askdb_agent_cancel() stops a statement running on the agent's database
** (Ctrl-C on the shell's .sql) within 100 ms. */
static void cancel_stops_a_statement_on_the_agents_database(void **state)
{
    struct script s = {.replies = long_query};
    askdb_config cfg = scripted_config(&s);
    struct canceller c = {.delay_ms = 300};
    askdb_agent *ag = NULL;
    askdb_result *r = NULL;
    askdb_db *db;
    askdb_status st;
    double ms;

    (void)state;
    cfg.query_timeout_ms = 60000;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    db = askdb_agent_db(ag);
    c.ag = ag;
    assert_int_equal(pthread_create(&c.th, NULL, cancel_later, &c), 0);
    st = askdb_db_query(db, long_query[0], &r);
    ms = now_ms() - c.at;
    pthread_join(c.th, NULL);
    assert_int_equal(st, ASKDB_ERR_CANCELLED);
    if (ms > 1000)
        fail_msg("stopped %.0f ms after the cancel, want 1000 at most", ms);
    assert_null(r);
    assert_string_equal(askdb_db_errmsg(db), "cancelled");
    assert_int_equal(s.calls, 0);
    askdb_agent_free(ag);
}

/* One schema read of the test below, started while a writer holds the
** lock: 0 warm, 1 schema text and 2 schema JSON of the agent's database,
** 3 schema text of db (a handle of its own). */
static askdb_status read_schema(int how, askdb_agent *ag, askdb_db *db)
{
    askdb_status st;
    char *text = NULL;

    if (how == 0)
        return askdb_agent_warm(ag);
    if (how == 1)
        st = askdb_db_schema_text(askdb_agent_db(ag), &text);
    else if (how == 2)
        st = askdb_db_schema_json(askdb_agent_db(ag), 0, &text);
    else
        st = askdb_db_schema_text(db, &text);
    askdb_free(text);
    return st;
}

/*
** A cancel while the schema is read, waiting for a writer's lock (20 s
** allowed), stops the read at once as cancelled, not as "the database is
** locked": askdb_agent_warm(), askdb_db_schema_text() and _json() of the
** agent's database (askdb_agent_cancel) and of a handle of its own
** (askdb_db_cancel). The read cut short is not kept: once the writer is
** done the schema reads whole, as a fresh handle reads it.
*/
static void cancel_stops_a_schema_read_waiting_for_a_lock(void **state)
{
    static const char *const r[] = {NULL};
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    struct sqlfile_locker l;
    struct canceller c;
    askdb_agent *ag = NULL;
    askdb_db *db = NULL, *fresh = NULL;
    char dir[128], path[256], *text = NULL, *want = NULL;
    const char *msg;
    askdb_status st;
    double ms;
    int how;

    (void)state;
    assert_int_equal(tmpdir_make(dir, sizeof dir, "schemalock"), 0);
    snprintf(path, sizeof path, "%s/shop.db", dir);
    assert_int_equal(file_copy(testdb_shop(), path), 0);
    cfg.query_timeout_ms = 20000;
    assert_int_equal(askdb_agent_new(&cfg, path, &ag), ASKDB_OK);
    assert_int_equal(askdb_db_open(path, &cfg, &db), ASKDB_OK);
    for (how = 0; how < 4; how++) {
        memset(&c, 0, sizeof c);
        c.ag = ag;
        c.db = how == 3 ? db : NULL;
        c.delay_ms = 200;
        sqlfile_lock(&l, path, 2500);
        assert_int_equal(pthread_create(&c.th, NULL, cancel_later, &c), 0);
        st = read_schema(how, ag, db);
        ms = now_ms() - c.at;
        pthread_join(c.th, NULL);
        msg = how == 0 ? askdb_agent_errmsg(ag)
                       : askdb_db_errmsg(how == 3 ? db : askdb_agent_db(ag));
        if (st != ASKDB_ERR_CANCELLED)
            fail_msg("read %d: %s (%s), want cancelled", how,
                     askdb_status_str(st), msg);
        if (ms > 1200)
            fail_msg("read %d stopped %.0f ms after the cancel, want 1200 at "
                     "most", how, ms);
        assert_non_null(strstr(msg, "cancelled"));
        assert_null(strstr(msg, "locked"));
        sqlfile_lock_end(&l);
    }
    askdb_db_uncancel(db);
    assert_int_equal(askdb_agent_warm(ag), ASKDB_OK);
    fresh = testdb_open(path, &cfg, NULL);
    assert_int_equal(askdb_db_schema_text(fresh, &want), ASKDB_OK);
    assert_int_equal(askdb_db_schema_text(askdb_agent_db(ag), &text),
                     ASKDB_OK);
    assert_string_equal(text, want);
    askdb_free(text);
    text = NULL;
    assert_int_equal(askdb_db_schema_text(db, &text), ASKDB_OK);
    assert_string_equal(text, want);
    askdb_free(text);
    askdb_free(want);
    askdb_db_close(fresh);
    askdb_db_close(db);
    askdb_agent_free(ag);
    assert_int_equal(s.calls, 0);
    assert_int_equal(tmpdir_remove(dir), 0);
}

/*
** A schema read waits for a writer's lock as long as the time limit
** allows (--timeout bounds each read of the schema, its wait for a lock
** included), then says the database is locked and how long it waited:
** with a 300 ms limit, about 300 ms, not a fixed 5 s (the lock here
** lasts 2.5 s, which a 5 s wait would outlast and then read).
*/
static void schema_read_waits_for_a_lock_within_the_limit(void **state)
{
    askdb_config cfg = askdb_config_default();
    struct sqlfile_locker l;
    askdb_db *db = NULL;
    char dir[128], path[256], *text = NULL;
    const char *m;
    askdb_status st;
    double t0, ms, waited;

    (void)state;
    assert_int_equal(tmpdir_make(dir, sizeof dir, "schemawait"), 0);
    snprintf(path, sizeof path, "%s/shop.db", dir);
    assert_int_equal(file_copy(testdb_shop(), path), 0);
    cfg.query_timeout_ms = 300;
    assert_int_equal(askdb_db_open(path, &cfg, &db), ASKDB_OK);
    sqlfile_lock(&l, path, 2500);
    t0 = now_ms();
    st = askdb_db_schema_text(db, &text);
    ms = now_ms() - t0;
    m = askdb_db_errmsg(db);
    if (st != ASKDB_ERR_DB)
        fail_msg("%s after %.0f ms (%s), want db", askdb_status_str(st), ms,
                 m);
    assert_null(text);
    assert_non_null(strstr(m, "is locked: another program is writing"));
    assert_non_null(strstr(m, "(waited "));
    waited = atof(strstr(m, "(waited ") + 8);
    assert_true(waited >= 250 && waited < 2000);
    assert_true(ms >= 250 && ms < 2000);
    sqlfile_lock_end(&l);
    /* Once the writer is done it reads. */
    assert_int_equal(askdb_db_schema_text(db, &text), ASKDB_OK);
    askdb_free(text);
    askdb_db_close(db);
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* ---------------------------------------------------------------------- */
/* A shared model                                                         */
/* ---------------------------------------------------------------------- */

/* The small GGUF model, or NULL (the test then says it skipped): also
** NULL in a build without llama.cpp, which cannot load it. */
static const char *small_model(void)
{
    const char *p = testenv_small_model();

#ifndef ASKDB_HAVE_LLAMA
    print_message("skipped: askdb was built without llama.cpp\n");
    return NULL;
#endif
    if (!p || access(p, R_OK) != 0) {
        print_message("skipped: ASKDB_SMALL_MODEL is not set "
                      "(scripts/models.sh small)\n");
        return NULL;
    }
    return p;
}

/* How many mappings of the file at path this process has (path as
** given: tests pass the absolute path scripts/models.sh prints). */
static int mappings_of(const char *path)
{
    char line[4096];
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0;

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        n += strstr(line, path) != NULL;
    fclose(f);
    return n;
}

static askdb_config small_config(const char *path)
{
    askdb_config cfg = askdb_config_default();

    cfg.model = path;
    cfg.provider = "local";
    cfg.threads = 1;
    cfg.candidates = 1;
    cfg.max_attempts = 1;
    cfg.max_tokens = 48;
    cfg.no_prompt_cache = 1;
    cfg.question_check = 0;
    cfg.memory = 0;
    return cfg;
}

struct asker {
    askdb_agent *ag;
    const char *question;
    askdb_answer *a;
    askdb_status st;
    pthread_t th;
};

static void *ask_on_thread(void *ud)
{
    struct asker *k = ud;

    k->st = askdb_agent_ask(k->ag, k->question, &k->a);
    return NULL;
}

/* The attempt's SQL of an answer ("" when there was none). */
static const char *first_sql(const askdb_answer *a)
{
    return a->nattempts && a->attempts[0].sql ? a->attempts[0].sql : "";
}

/*
** One askdb_model serves two agents asking at the same time on two
** threads: the weights are mapped once (not once per agent), and each
** agent gets the same statement as an agent asking alone (greedy decoding
** on one thread is deterministic).
*/
static void shared_model_serves_agents_on_two_threads(void **state)
{
    const char *path = small_model();
    askdb_config cfg;
    askdb_model *m = NULL;
    struct asker k[2];
    askdb_answer *alone = NULL;
    int maps_one, i;

    (void)state;
    if (!path)
        return;
    cfg = small_config(path);
    assert_int_equal(askdb_model_new(&cfg, &m), ASKDB_OK);
    assert_string_equal(askdb_model_provider(m), "local");
    memset(k, 0, sizeof k);
    assert_int_equal(
        askdb_agent_new_with_model(&cfg, m, testdb_shop(), &k[0].ag),
        ASKDB_OK);
    maps_one = mappings_of(path);
    assert_true(maps_one > 0);
    assert_int_equal(
        askdb_agent_new_with_model(&cfg, m, testdb_shop(), &k[1].ag),
        ASKDB_OK);
    /* The second agent maps nothing more of the model file. */
    assert_int_equal(mappings_of(path), maps_one);
    if (askdb_agent_ask(k[0].ag, "How many customers are there?", &alone) ==
        ASKDB_ERR_LLM)
        fail_msg("the model failed: %s", alone->error);
    for (i = 0; i < 2; i++) {
        k[i].question = "How many customers are there?";
        assert_int_equal(pthread_create(&k[i].th, NULL, ask_on_thread, &k[i]),
                         0);
    }
    for (i = 0; i < 2; i++) {
        pthread_join(k[i].th, NULL);
        assert_non_null(k[i].a);
        assert_int_not_equal(k[i].st, ASKDB_ERR_LLM);
        assert_int_not_equal(k[i].st, ASKDB_ERR_LLM_UNREACHABLE);
        assert_string_equal(first_sql(k[i].a), first_sql(alone));
        askdb_answer_free(k[i].a);
        askdb_agent_free(k[i].ag);
    }
    askdb_answer_free(alone);
    askdb_model_free(m);
}

/* A model whose loading failed, or none, makes no working agent: the
** handle left, as by every constructor, says why. */
static void failed_model_makes_no_agent(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_model *m = NULL;
    askdb_agent *ag = NULL;

    (void)state;
    cfg.provider = "nonsense";
    assert_int_equal(askdb_model_new(&cfg, &m), ASKDB_ERR_USAGE);
    assert_non_null(strstr(askdb_model_errmsg(m), "unknown model provider"));
    /* No provider was chosen: not one of the four names, and not a word
    ** a front end would print as if it were one. */
    assert_string_equal(askdb_model_provider(m), "");
    assert_int_equal(askdb_agent_new_with_model(&cfg, m, testdb_shop(), &ag),
                     ASKDB_ERR_USAGE);
    assert_non_null(ag);
    assert_non_null(strstr(askdb_agent_errmsg(ag), "the model was not "
                                                   "loaded: unknown model "
                                                   "provider"));
    assert_null(askdb_agent_db(ag));
    askdb_agent_free(ag);
    ag = NULL;
    assert_int_equal(askdb_agent_new_with_model(&cfg, NULL, testdb_shop(),
                                                &ag), ASKDB_ERR_USAGE);
    assert_non_null(ag);
    assert_non_null(strstr(askdb_agent_errmsg(ag), "no model given"));
    askdb_agent_free(ag);
    askdb_model_free(m);
    askdb_model_free(NULL);
}

/* Cancelling the local model during its prompt evaluation (llama.cpp's
** abort callback) stops it within 100 ms. */
static void cancel_stops_the_local_model(void **state)
{
    const char *path = small_model();
    struct canceller c = {.delay_ms = 60};
    askdb_config cfg;
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    askdb_status st;
    double ms;

    (void)state;
    if (!path)
        return;
    cfg = small_config(path);
    cfg.max_tokens = 400;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    c.ag = ag;
    assert_int_equal(pthread_create(&c.th, NULL, cancel_later, &c), 0);
    st = askdb_agent_ask(ag, "How many customers are there?", &a);
    ms = now_ms() - c.at;
    pthread_join(c.th, NULL);
    assert_int_equal(st, ASKDB_ERR_CANCELLED);
    if (ms > 1000)
        fail_msg("stopped %.0f ms after the cancel, want 1000 at most", ms);
    askdb_answer_free(a);
    /* The context is usable again: the next question runs. */
    st = askdb_agent_ask(ag, "How many customers are there?", &a);
    assert_int_not_equal(st, ASKDB_ERR_CANCELLED);
    assert_int_not_equal(st, ASKDB_ERR_LLM);
    askdb_answer_free(a);
    askdb_agent_free(ag);
}

/* ---------------------------------------------------------------------- */
/* Learned pairs                                                          */
/* ---------------------------------------------------------------------- */

static void on_reject(void *ud, long line, const char *why)
{
    char *out = ud;
    size_t n = strlen(out);

    snprintf(out + n, 1024 - n, "%ld:%s\n", line, why);
}

/* The store through the public API: learn (verified), list, import with
** its rejections, forget; a missing store opened without create lists
** nothing; another SQLite file is refused and left as it was. */
static void memory_learns_lists_imports_and_forgets(void **state)
{
    char dir[128], store[256], file[256], other[256], rejected[1024] = "";
    askdb_memory *m = NULL;
    askdb_db *db = NULL;
    askdb_import_counts n;
    askdb_pair *p = NULL;
    askdb_learned learned = {-1, -1, -1};
    long removed = -1;
    int np = -1;
    FILE *f;

    (void)state;
    assert_int_equal(tmpdir_make(dir, sizeof dir, "api"), 0);
    snprintf(store, sizeof store, "%s/memory.sqlite", dir);
    snprintf(file, sizeof file, "%s/pairs.jsonl", dir);
    snprintf(other, sizeof other, "%s/other.db", dir);

    assert_int_equal(askdb_memory_open(store, 0, &m), ASKDB_OK);
    assert_int_equal(askdb_memory_list(m, testdb_shop(), &p, &np), ASKDB_OK);
    assert_int_equal(np, 0);
    assert_int_equal(askdb_memory_learn(m, NULL, "q", "SELECT 1", NULL),
                     ASKDB_ERR_USAGE);
    askdb_memory_close(m);
    assert_int_not_equal(access(store, F_OK), 0);   /* not created */

    assert_int_equal(askdb_db_open(testdb_shop(), NULL, &db), ASKDB_OK);
    assert_int_equal(askdb_memory_open(store, 1, &m), ASKDB_OK);
    assert_string_equal(askdb_memory_path(m), store);
    assert_int_equal(askdb_memory_learn(m, db, "How many customers?",
                                        "SELECT count(*) FROM customers", &learned), ASKDB_OK);
    assert_int_equal(learned.nrows, 1);
    assert_int_equal(learned.truncated, 0);
    assert_int_equal(learned.replaced, 0);
    assert_int_equal(askdb_memory_learn(m, db, "how many  CUSTOMERS?",
                                        "SELECT count(id) FROM customers", &learned), ASKDB_OK);
    assert_int_equal(learned.replaced, 1);
    assert_int_equal(askdb_memory_learn(m, db, "Drop it",
                                        "DROP TABLE customers", NULL),
                     ASKDB_ERR_REFUSED);
    assert_non_null(strstr(askdb_memory_errmsg(m), "refused"));

    f = fopen(file, "w");
    assert_non_null(f);
    fputs("{\"question\": \"Products?\", \"sql\": \"SELECT name FROM "
          "products\"}\n"
          "{\"question\": \"Bad?\", \"sql\": \"SELECT nope FROM products\"}\n"
          "not json\n"
          "{\"question\": \"Other db\", \"sql\": \"SELECT 1\", "
          "\"db_id\": \"concert_singer\"}\n", f);
    fclose(f);
    assert_int_equal(askdb_memory_import(m, db, file, on_reject, rejected,
                                         &n), ASKDB_OK);
    assert_int_equal(n.stored, 1);
    assert_int_equal(n.replaced, 0);
    assert_int_equal(n.rejected, 2);
    assert_int_equal(n.skipped, 1);
    assert_non_null(strstr(rejected, "2:the SQL fails on the database: "
                                     "no such column: nope"));
    assert_non_null(strstr(rejected, "3:not valid JSON"));

    assert_int_equal(askdb_memory_list(m, testdb_shop(), &p, &np), ASKDB_OK);
    assert_int_equal(np, 2);
    assert_string_equal(p[0].question, "how many  CUSTOMERS?");
    assert_string_equal(p[0].sql, "SELECT count(id) FROM customers");
    assert_string_equal(p[1].question, "Products?");
    assert_int_equal(strlen(p[1].added_at), 20);
    askdb_pairs_free(p, np);

    assert_int_equal(askdb_memory_forget(m, testdb_shop(),
                                         "HOW MANY CUSTOMERS?", &removed),
                     ASKDB_OK);
    assert_int_equal(removed, 1);
    assert_int_equal(askdb_memory_forget(m, testdb_shop(), NULL, &removed),
                     ASKDB_OK);
    assert_int_equal(removed, 1);
    assert_int_equal(askdb_memory_list(m, "/no/such/db", &p, &np),
                     ASKDB_ERR_DB_OPEN);
    askdb_memory_close(m);

    /* "" is no store (SQLite would open a temporary one, lost at
    ** close), with or without create. */
    assert_int_equal(askdb_memory_open("", 1, &m), ASKDB_ERR_USAGE);
    assert_non_null(strstr(askdb_memory_errmsg(m), "path is empty"));
    askdb_memory_close(m);
    assert_int_equal(askdb_memory_open("", 0, &m), ASKDB_ERR_USAGE);
    askdb_memory_close(m);

    /* Another SQLite database is not a store: refused, left alone. */
    assert_int_equal(sqlfile_exec(other, "CREATE TABLE t(x);"), 0);
    assert_int_equal(askdb_memory_open(other, 1, &m), ASKDB_ERR_USAGE);
    assert_non_null(strstr(askdb_memory_errmsg(m), "not an askdb memory"));
    askdb_memory_close(m);
    askdb_memory_close(NULL);
    askdb_db_close(db);
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* ---------------------------------------------------------------------- */
/* NULL arguments                                                         */
/* ---------------------------------------------------------------------- */

/*
** Every function of askdb.h given NULL for its handle, a required
** argument or a required output: ASKDB_ERR_USAGE, or for one returning a
** pointer or a number its NULL, "" or 0, never a crash. Optional outputs
** (counts, rows, "replaced") may be NULL.
*/
static void null_arguments_are_usage_errors(void **state)
{
    static const char *const r1[] = {"SELECT 1 AS one", NULL};
    struct script s = {.replies = r1};
    askdb_config cfg = scripted_config(&s);
    char dir[128], store[256], file[256], *text = NULL;
    askdb_eval_options eo = askdb_eval_options_default();
    askdb_ask_options o = {.request_id = "x"};
    askdb_answer a0, *a = NULL;
    askdb_memory *m = NULL;
    askdb_eval *ev = NULL;
    askdb_result *r = NULL;
    askdb_agent *ag = NULL;
    askdb_pair *p = NULL;
    askdb_db *db = NULL;
    int np = -1;
    FILE *f;

    (void)state;
    memset(&a0, 0, sizeof a0);
    assert_int_equal(tmpdir_make(dir, sizeof dir, "null"), 0);
    snprintf(store, sizeof store, "%s/memory.sqlite", dir);
    snprintf(file, sizeof file, "%s/pairs.jsonl", dir);

    /* Plain functions and the free functions. */
    askdb_free(NULL);
    askdb_config_from_env(NULL);
    assert_int_equal(askdb_utf8_len(NULL, 4), 0);
    assert_string_equal(askdb_status_str((askdb_status)99), "unknown");
    assert_string_equal(askdb_event_type_str((askdb_event_type)99),
                        "unknown");
    assert_null(askdb_result_cell(NULL, 0, 0));
    askdb_result_free(NULL);
    askdb_answer_free(NULL);
    askdb_pairs_free(NULL, 3);
    assert_non_null(askdb_output_refusal(NULL));
    assert_non_null(askdb_output_refusal_for(NULL, NULL));
    /* "-" is standard output to a caller, a file called "-" to open(). */
    assert_non_null(askdb_output_refusal("-"));
    assert_null(askdb_output_refusal("./-"));

    /* Databases. */
    assert_int_equal(askdb_db_open(testdb_shop(), NULL, NULL),
                     ASKDB_ERR_USAGE);
    assert_int_equal(askdb_db_open(NULL, NULL, &db), ASKDB_ERR_USAGE);
    assert_string_equal(askdb_db_errmsg(db), "no database path given");
    askdb_db_close(db);
    askdb_db_close(NULL);
    assert_int_equal(askdb_db_open(testdb_shop(), NULL, &db), ASKDB_OK);
    assert_int_equal(askdb_db_schema_text(NULL, &text), ASKDB_ERR_USAGE);
    assert_null(text);
    assert_int_equal(askdb_db_schema_text(db, NULL), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_db_schema_json(NULL, 0, &text), ASKDB_ERR_USAGE);
    assert_null(text);
    assert_int_equal(askdb_db_schema_json(db, 0, NULL), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_db_query(NULL, "SELECT 1", &r), ASKDB_ERR_USAGE);
    assert_null(r);
    assert_int_equal(askdb_db_query(db, "SELECT 1", NULL), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_db_explain(NULL, "SELECT 1", &r),
                     ASKDB_ERR_USAGE);
    assert_null(r);
    assert_int_equal(askdb_db_explain(db, "SELECT 1", NULL),
                     ASKDB_ERR_USAGE);
    assert_string_equal(askdb_db_engine(NULL), "");
    assert_string_equal(askdb_db_version(NULL), "");
    assert_string_equal(askdb_db_label(NULL), "");
    assert_int_equal(askdb_db_errclass(NULL), ASKDB_EC_NONE);
    askdb_db_cancel(NULL);
    askdb_db_uncancel(NULL);

    /* JSON. */
    assert_int_equal(askdb_answer_json(NULL, 0, &text), ASKDB_ERR_USAGE);
    assert_null(text);
    assert_int_equal(askdb_answer_json(&a0, 0, NULL), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_result_json(NULL, "x", "e", 0, NULL),
                     ASKDB_ERR_USAGE);

    /* Models and agents: no handle, or nowhere to put one. */
    assert_int_equal(askdb_model_new(&cfg, NULL), ASKDB_ERR_USAGE);
    assert_string_equal(askdb_model_provider(NULL), "");
    askdb_model_free(NULL);
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), NULL),
                     ASKDB_ERR_USAGE);
    assert_int_equal(askdb_agent_new_with_model(&cfg, NULL, testdb_shop(),
                                                NULL), ASKDB_ERR_USAGE);
    assert_null(askdb_agent_db(NULL));
    assert_int_equal(askdb_agent_warm(NULL), ASKDB_ERR_USAGE);
    askdb_agent_cancel(NULL);
    askdb_agent_forget(NULL);
    askdb_agent_free(NULL);
    /* No agent: an answer that says so, as for every failed question. */
    assert_int_equal(askdb_agent_ask(NULL, "one", &a), ASKDB_ERR_USAGE);
    assert_int_equal(a->status, ASKDB_ERR_USAGE);
    assert_non_null(strstr(a->error, "no agent"));
    askdb_answer_free(a);
    a = NULL;
    assert_int_equal(askdb_agent_ask_hint(NULL, "one", "h", &a),
                     ASKDB_ERR_USAGE);
    askdb_answer_free(a);
    a = NULL;
    assert_int_equal(askdb_agent_ask_opts(NULL, "one", &o, &a),
                     ASKDB_ERR_USAGE);
    askdb_answer_free(a);
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    assert_int_equal(askdb_agent_ask(ag, "one", NULL), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_agent_ask_hint(ag, "one", NULL, NULL),
                     ASKDB_ERR_USAGE);
    assert_int_equal(askdb_agent_ask_opts(ag, "one", NULL, NULL),
                     ASKDB_ERR_USAGE);
    assert_int_equal(s.calls, 0);
    askdb_agent_free(ag);

    /* Learned pairs; the counts are optional outputs. */
    assert_int_equal(askdb_memory_open(store, 1, NULL), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_memory_learn(NULL, db, "q", "SELECT 1", NULL), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_memory_import(NULL, db, file, NULL, NULL, NULL),
                     ASKDB_ERR_USAGE);
    assert_int_equal(askdb_memory_list(NULL, testdb_shop(), &p, &np),
                     ASKDB_ERR_USAGE);
    assert_int_equal(askdb_memory_forget(NULL, testdb_shop(), NULL, NULL),
                     ASKDB_ERR_USAGE);
    assert_string_equal(askdb_memory_path(NULL), "");
    assert_non_null(askdb_memory_errmsg(NULL));
    assert_int_equal(askdb_memory_open(store, 1, &m), ASKDB_OK);
    assert_int_equal(askdb_memory_learn(m, NULL, "q", "SELECT 1", NULL), ASKDB_ERR_USAGE);
    assert_string_equal(askdb_memory_errmsg(m), "no database given");
    assert_int_equal(askdb_memory_import(m, NULL, file, NULL, NULL, NULL),
                     ASKDB_ERR_USAGE);
    assert_int_equal(askdb_memory_import(m, db, NULL, NULL, NULL, NULL),
                     ASKDB_ERR_USAGE);
    assert_non_null(f = fopen(file, "w"));
    fputs("{\"question\": \"Products?\", \"sql\": \"SELECT name FROM "
          "products\"}\n", f);
    fclose(f);
    assert_int_equal(askdb_memory_import(m, db, file, NULL, NULL, NULL),
                     ASKDB_OK);
    assert_int_equal(askdb_memory_list(m, NULL, &p, &np), ASKDB_ERR_USAGE);
    assert_string_equal(askdb_memory_errmsg(m), "no database path given");
    assert_int_equal(askdb_memory_list(m, testdb_shop(), NULL, &np),
                     ASKDB_ERR_USAGE);
    assert_int_equal(askdb_memory_list(m, testdb_shop(), &p, NULL),
                     ASKDB_ERR_USAGE);
    assert_int_equal(askdb_memory_list(m, testdb_shop(), &p, &np), ASKDB_OK);
    assert_int_equal(np, 1);
    askdb_pairs_free(p, np);
    assert_int_equal(askdb_memory_forget(m, NULL, NULL, NULL),
                     ASKDB_ERR_USAGE);
    assert_int_equal(askdb_memory_forget(m, testdb_shop(), NULL, NULL),
                     ASKDB_OK);
    assert_int_equal(askdb_memory_list(m, testdb_shop(), &p, &np), ASKDB_OK);
    assert_int_equal(np, 0);
    askdb_pairs_free(p, np);
    askdb_memory_close(m);

    /* Evaluation. */
    assert_int_equal(askdb_eval_new(&cfg, &eo, NULL), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_eval_run(NULL), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_eval_summary(NULL, &text), ASKDB_ERR_USAGE);
    assert_null(text);
    assert_int_equal(askdb_eval_new(&cfg, &eo, &ev), ASKDB_ERR_USAGE);
    assert_non_null(strstr(askdb_eval_errmsg(ev), "no suite"));
    assert_int_equal(askdb_eval_summary(ev, NULL), ASKDB_ERR_USAGE);
    askdb_eval_free(ev);
    askdb_eval_interrupt(NULL);
    assert_string_equal(askdb_eval_notes(NULL), "");
    assert_non_null(askdb_eval_errmsg(NULL));
    askdb_eval_free(NULL);

    askdb_db_close(db);
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* Set the number field of cfg named name to v (the fields
** bad_model_numbers_are_refused_by_every_constructor tries). */
static void set_number(askdb_config *cfg, const char *name, double v)
{
    if (strcmp(name, "temperature") == 0)
        cfg->temperature = v;
    else if (strcmp(name, "candidate_temperature") == 0)
        cfg->candidate_temperature = v;
    else if (strcmp(name, "candidate_gate") == 0)
        cfg->candidate_gate = v;
    else if (strcmp(name, "candidate_cap") == 0)
        cfg->candidate_cap = v;
    else if (strcmp(name, "threads") == 0)
        cfg->threads = (int)v;
    else
        fail_msg("no field %s", name);
}

/* A model setting out of its range (a temperature that is NaN, infinite,
** negative or over 2; a gate past 1; a negative cap; more threads than
** 1024) is a usage error at every constructor that takes it, named in
** the message: it failed every question ("out of memory building the
** request" for NaN) or went to the server as it was (-1). The ends of
** each range are taken. */
static void bad_model_numbers_are_refused_by_every_constructor(void **st)
{
    static const struct {
        const char *name;
        double v;
        const char *says;
    } bad[] = {
        {"temperature", NAN, "temperature is nan"},
        {"temperature", INFINITY, "temperature is inf"},
        {"temperature", -1, "temperature is -1"},
        {"temperature", 2.5, "temperature is 2.5"},
        {"candidate_temperature", NAN, "candidate_temperature is nan"},
        {"candidate_temperature", -0.5, "candidate_temperature is -0.5"},
        {"candidate_gate", NAN, "candidate_gate is nan"},
        {"candidate_gate", 1.5, "candidate_gate is 1.5"},
        {"candidate_cap", -1, "candidate_cap is -1"},
        {"candidate_cap", INFINITY, "candidate_cap is inf"},
        {"threads", 5000, "threads is 5000"},
    };
    static const struct {
        const char *name;
        double v;
    } edge[] = {{"temperature", 2}, {"candidate_temperature", 0},
                {"candidate_gate", 1}, {"candidate_gate", 0},
                {"candidate_cap", 0}, {"candidate_cap", 1e6},
                {"threads", 1024}};
    struct script s = {.replies = NULL};
    askdb_eval_options eo = askdb_eval_options_default();
    char dir[128], suite[256], line[512];
    askdb_config cfg, good = scripted_config(&s);
    askdb_model *m = NULL, *gm = NULL;
    askdb_agent *ag = NULL;
    askdb_eval *ev = NULL;
    size_t i;

    (void)st;
    assert_int_equal(tmpdir_make(dir, sizeof dir, "numbers"), 0);
    snprintf(suite, sizeof suite, "%s/suite.jsonl", dir);
    snprintf(line, sizeof line, "{\"db\": \"%s\", \"question\": \"One?\", "
             "\"gold\": \"SELECT 1\"}\n", testdb_shop());
    assert_int_equal(file_write(suite, line, strlen(line)), 0);
    eo.suite_path = suite;
    assert_int_equal(askdb_model_new(&good, &gm), ASKDB_OK);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfg = good;
        set_number(&cfg, bad[i].name, bad[i].v);
        assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag),
                         ASKDB_ERR_USAGE);
        if (!strstr(askdb_agent_errmsg(ag), bad[i].says))
            fail_msg("askdb_agent_new: '%s' lacks '%s'",
                     askdb_agent_errmsg(ag), bad[i].says);
        askdb_agent_free(ag);
        ag = NULL;
        /* The agent's own settings over a good model: they are its. */
        assert_int_equal(askdb_agent_new_with_model(&cfg, gm, testdb_shop(),
                                                    &ag), ASKDB_ERR_USAGE);
        assert_non_null(strstr(askdb_agent_errmsg(ag), bad[i].says));
        askdb_agent_free(ag);
        ag = NULL;
        assert_int_equal(askdb_model_new(&cfg, &m), ASKDB_ERR_USAGE);
        assert_non_null(strstr(askdb_model_errmsg(m), bad[i].says));
        askdb_model_free(m);
        m = NULL;
        assert_int_equal(askdb_eval_new(&cfg, &eo, &ev), ASKDB_ERR_USAGE);
        assert_non_null(strstr(askdb_eval_errmsg(ev), bad[i].says));
        askdb_eval_free(ev);
        ev = NULL;
    }
    for (i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        cfg = good;
        set_number(&cfg, edge[i].name, edge[i].v);
        if (askdb_agent_new(&cfg, testdb_shop(), &ag) != ASKDB_OK)
            fail_msg("%s %g: %s", edge[i].name, edge[i].v,
                     askdb_agent_errmsg(ag));
        askdb_agent_free(ag);
        ag = NULL;
    }
    assert_int_equal(s.calls, 0);
    askdb_model_free(gm);
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* Progress of an eval: the last report (largest_memory_count_...). */
static void keep_progress(void *ud, const askdb_eval_progress *p)
{
    *(askdb_eval_progress *)ud = *p;
}

/* The largest count of learned pairs the config holds (INT_MAX) asks for
** every pair there is: an eval, which leaves out the pair of the very
** question, asked for one more (INT_MAX + 1, signed overflow: UBSan stops
** the test). */
static void largest_memory_count_does_not_overflow(void **st)
{
    static const char *const r[] = {"SELECT count(*) FROM customers", NULL};
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    askdb_eval_options eo = askdb_eval_options_default();
    askdb_eval_progress pr;
    char dir[128], store[256], suite[256], shop[PATH_MAX];
    char line[PATH_MAX + 256];
    askdb_memory *m = NULL;
    askdb_eval *ev = NULL;
    askdb_db *db = NULL;
    askdb_learned learned;

    (void)st;
    memset(&pr, 0, sizeof pr);
    assert_int_equal(tmpdir_make(dir, sizeof dir, "memk"), 0);
    snprintf(store, sizeof store, "%s/memory.sqlite", dir);
    snprintf(suite, sizeof suite, "%s/suite.jsonl", dir);
    assert_int_equal(askdb_memory_open(store, 1, &m), ASKDB_OK);
    assert_int_equal(askdb_db_open(testdb_shop(), NULL, &db), ASKDB_OK);
    assert_int_equal(askdb_memory_learn(m, db, "How many customers?",
                                        "SELECT count(*) FROM customers", &learned), ASKDB_OK);
    assert_int_equal(askdb_memory_learn(m, db, "How many customers live "
                                        "in Paris?", "SELECT count(*) FROM "
                                        "customers WHERE city = 'Paris'", &learned), ASKDB_OK);
    askdb_db_close(db);
    askdb_memory_close(m);
    assert_non_null(realpath(testdb_shop(), shop));
    snprintf(line, sizeof line, "{\"db\": \"%s\", \"question\": \"How "
             "many customers?\", \"gold\": \"SELECT count(*) FROM "
             "customers\"}\n", shop);
    assert_int_equal(file_write(suite, line, strlen(line)), 0);
    cfg.memory = INT_MAX;
    cfg.memory_path = store;
    eo.suite_path = suite;
    eo.progress = keep_progress;
    eo.progress_ud = &pr;
    assert_int_equal(askdb_eval_new(&cfg, &eo, &ev), ASKDB_OK);
    assert_int_equal(askdb_eval_run(ev), ASKDB_OK);
    assert_int_equal(pr.done, 1);
    assert_int_equal(pr.correct, 1);
    /* The other pair is an example; the question's own is not. */
    assert_non_null(strstr(s.all_users, "Paris"));
    askdb_eval_free(ev);
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* ---------------------------------------------------------------------- */
/* An agent over a shared HTTP model                                      */
/* ---------------------------------------------------------------------- */

/* The fake_llm of a test, stopped by its teardown even after a failed
** assertion. */
static struct fake api_fake;

static int fake_teardown(void **state)
{
    (void)state;
    fake_stop(&api_fake);
    unsetenv("ASKDB_RETRY_BASE_MS");
    return 0;
}

/* Streamed pieces and log lines one callback saw. */
struct seen {
    int tokens;
    int llm_lines;           /* log lines of step "llm" */
    char last_llm[256];
};

static void seen_token(void *ud, const char *piece, size_t len)
{
    (void)piece;
    ((struct seen *)ud)->tokens += len > 0;
}

static void seen_log(void *ud, const char *step, const char *msg)
{
    struct seen *s = ud;

    if (strcmp(step, "llm") == 0) {
        s->llm_lines++;
        snprintf(s->last_llm, sizeof s->last_llm, "%s", msg);
    }
}

/* A config of the fake_llm model with the techniques that would call it
** more than once off. */
static askdb_config fake_config(void)
{
    askdb_config cfg = askdb_config_default();

    cfg.llm_url = api_fake.base;
    cfg.model = "m";
    cfg.question_check = 0;
    cfg.checks = 0;
    cfg.memory = 0;
    cfg.candidates = 1;
    return cfg;
}

/* Ask "How many customers?" of a new agent with cfg over model; returns
** the status and the milliseconds it took. */
static askdb_status ask_shared(const askdb_config *cfg, askdb_model *model,
                               double *ms)
{
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    askdb_status rc;
    double t0;

    if (askdb_agent_new_with_model(cfg, model, testdb_shop(), &ag))
        fail_msg("agent: %s", askdb_agent_errmsg(ag));
    t0 = now_ms();
    rc = askdb_agent_ask(ag, "How many customers?", &a);
    *ms = now_ms() - t0;
    askdb_answer_free(a);
    askdb_agent_free(ag);
    return rc;
}

/* Over a model loaded once, the agent's own settings of its requests hold
** (the model holds the provider, URL, model name and key): streaming to
** its token_fn, its llm_timeout_ms, its llm_retries, and its log_fn for
** the provider's lines. They came from the model's config: no token
** reached the agent, a 1 s timeout waited out a 3 s reply, and the
** agent's retry was never made. */
static void shared_http_model_keeps_the_agents_own_settings(void **st)
{
    askdb_config mc, ac;
    askdb_model *m = NULL;
    struct seen mine, models;
    json_t *log;
    double ms;

    (void)st;
    memset(&mine, 0, sizeof mine);
    memset(&models, 0, sizeof models);

    /* Streaming: the model's config does not stream. */
    fake_start(&api_fake, "[{\"content\":\"SELECT count(*) FROM "
                          "customers\"}]");
    mc = fake_config();
    mc.log_fn = seen_log;
    mc.log_ud = &models;
    assert_int_equal(askdb_model_new(&mc, &m), ASKDB_OK);
    ac = mc;
    ac.stream = 1;
    ac.token_fn = seen_token;
    ac.token_ud = &mine;
    assert_int_equal(ask_shared(&ac, m, &ms), ASKDB_OK);
    assert_true(mine.tokens > 0);
    log = fake_log(&api_fake);
    assert_int_equal(json_array_size(log), 1);
    assert_true(json_is_true(json_object_get(
        json_object_get(json_array_get(log, 0), "body"), "stream")));
    json_decref(log);
    askdb_model_free(m);
    m = NULL;
    fake_stop(&api_fake);

    /* The time limit: the model's is 120 s. */
    fake_start(&api_fake, "[{\"delay_ms\":3000,\"content\":\"SELECT 1\"}]");
    mc = fake_config();
    assert_int_equal(askdb_model_new(&mc, &m), ASKDB_OK);
    ac = mc;
    ac.llm_timeout_ms = 500;
    ac.llm_retries = 0;
    assert_int_equal(ask_shared(&ac, m, &ms), ASKDB_ERR_LLM_UNREACHABLE);
    if (ms > 2500)
        fail_msg("a 500 ms limit gave up after %.0f ms", ms);
    askdb_model_free(m);
    m = NULL;
    fake_stop(&api_fake);

    /* Retries and the log of them: the model has none and logs to its
    ** own callback. */
    setenv("ASKDB_RETRY_BASE_MS", "1", 1);
    fake_start(&api_fake, "[{\"status\":503},{\"content\":\"SELECT "
                          "count(*) FROM customers\"}]");
    mc = fake_config();
    mc.llm_retries = 0;
    mc.log_fn = seen_log;
    mc.log_ud = &models;
    assert_int_equal(askdb_model_new(&mc, &m), ASKDB_OK);
    ac = mc;
    ac.llm_retries = 1;
    ac.log_ud = &mine;
    assert_int_equal(ask_shared(&ac, m, &ms), ASKDB_OK);
    assert_int_equal(mine.llm_lines, 1);
    assert_non_null(strstr(mine.last_llm, "before retry 1 of 1"));
    assert_int_equal(models.llm_lines, 0);
    askdb_model_free(m);
}

/* The report is not written over a database, nor to no file: a usage
** error that says why, with nothing of the report's making left behind
** (LeakSanitizer checks); a fresh file is written. */
static void eval_report_refuses_a_database_and_no_file(void **state)
{
    static const char *const r[] = {NULL};
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    askdb_eval_options eo = askdb_eval_options_default();
    char dir[128], suite[256], report[256], shop[4096];
    askdb_eval *ev = NULL;
    FILE *f;

    (void)state;
    assert_int_equal(tmpdir_make(dir, sizeof dir, "report"), 0);
    snprintf(suite, sizeof suite, "%s/suite.jsonl", dir);
    snprintf(report, sizeof report, "%s/report.html", dir);
    assert_non_null(realpath(testdb_shop(), shop));
    assert_non_null(f = fopen(suite, "w"));
    fprintf(f, "{\"db\": \"%s\", \"question\": \"How many customers?\", "
               "\"gold\": \"SELECT count(*) FROM customers\"}\n", shop);
    fclose(f);
    eo.suite_path = suite;
    assert_int_equal(askdb_eval_new(&cfg, &eo, &ev), ASKDB_OK);
    assert_int_equal(askdb_eval_write_report(ev, shop), ASKDB_ERR_USAGE);
    assert_non_null(strstr(askdb_eval_errmsg(ev), "SQLite database"));
    assert_int_equal(askdb_eval_write_report(ev, NULL), ASKDB_ERR_USAGE);
    assert_string_equal(askdb_eval_errmsg(ev), "no report file given");
    assert_int_equal(askdb_eval_write_report(ev, ""), ASKDB_ERR_USAGE);
    assert_non_null(strstr(askdb_eval_errmsg(ev), "no file named"));
    assert_int_equal(askdb_eval_write_report(ev, report), ASKDB_OK);
    assert_int_equal(access(report, R_OK), 0);
    assert_int_equal(askdb_eval_write_report(NULL, report), ASKDB_ERR_USAGE);
    askdb_eval_free(ev);
    assert_int_equal(s.calls, 0);
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* The eval copies every string of cfg and opt (the header says so): the
** caller frees each one right after askdb_eval_new() - after writing over
** it, so that a pointer kept would read another path - and the run, its
** summary and its report still use them all: the learned pairs store
** (memory_path), the trace, the output file, the suite, the database
** root, tables.json, the --db list and the --db-url template. Under ASan
** a string not copied is a heap-use-after-free. */
static char *scribbled_copy(const char *s)
{
    char *c = strdup(s);

    assert_non_null(c);
    return c;
}

static void scribble_and_free(char *s)
{
    memset(s, 'x', strlen(s));
    free(s);
}

static void eval_copies_every_string_it_is_given(void **state)
{
    static const char *const r[] = {"SELECT count(*) FROM customers",
                                    "SELECT count(*) FROM orders", NULL};
    static const char suite[] =
        "{\"db_id\": \"shop\", \"question\": \"How many customers?\", "
        "\"gold\": \"SELECT count(*) FROM customers\"}\n"
        "{\"db_id\": \"shop\", \"question\": \"How many orders?\", "
        "\"gold\": \"SELECT count(*) FROM orders\"}\n";
    static const char tables[] = "[{\"db_id\": \"shop\"}]";
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    askdb_eval_options eo = askdb_eval_options_default();
    char dir[128], path[512], *strs[13], *text = NULL, *trace;
    askdb_memory *m = NULL;
    askdb_eval *ev = NULL;
    askdb_db *db = NULL;
    size_t i, n = 0;

    (void)state;
    assert_int_equal(tmpdir_make(dir, sizeof dir, "evstr"), 0);
    snprintf(path, sizeof path, "%s/shop", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/shop/shop.sqlite", dir);
    assert_int_equal(file_copy(testdb_shop(), path), 0);
    /* A learned pair, so that the run reads the store at memory_path. */
    snprintf(path, sizeof path, "%s/memory.sqlite", dir);
    assert_int_equal(askdb_memory_open(path, 1, &m), ASKDB_OK);
    snprintf(path, sizeof path, "%s/shop/shop.sqlite", dir);
    assert_int_equal(askdb_db_open(path, NULL, &db), ASKDB_OK);
    assert_int_equal(askdb_memory_learn(m, db, "How many products?",
                                        "SELECT count(*) FROM products", NULL), ASKDB_OK);
    askdb_db_close(db);
    askdb_memory_close(m);
    snprintf(path, sizeof path, "%s/suite.jsonl", dir);
    assert_int_equal(file_write(path, suite, strlen(suite)), 0);
    snprintf(path, sizeof path, "%s/tables.json", dir);
    assert_int_equal(file_write(path, tables, strlen(tables)), 0);

    cfg.memory = 3;
    snprintf(path, sizeof path, "%s/memory.sqlite", dir);
    cfg.memory_path = strs[n++] = scribbled_copy(path);
    snprintf(path, sizeof path, "%s/trace.jsonl", dir);
    cfg.trace_path = strs[n++] = scribbled_copy(path);
    cfg.provider = strs[n++] = scribbled_copy("custom");
    cfg.model = strs[n++] = scribbled_copy("scripted");
    cfg.llm_url = strs[n++] = scribbled_copy("http://127.0.0.1:9/v1");
    cfg.api_key = strs[n++] = scribbled_copy("sk-test");
    snprintf(path, sizeof path, "%s/suite.jsonl", dir);
    eo.suite_path = strs[n++] = scribbled_copy(path);
    eo.db_root = strs[n++] = scribbled_copy(dir);
    snprintf(path, sizeof path, "%s/tables.json", dir);
    eo.tables_path = strs[n++] = scribbled_copy(path);
    eo.dbs = strs[n++] = scribbled_copy("shop");
    snprintf(path, sizeof path, "%s/out.jsonl", dir);
    eo.out_path = strs[n++] = scribbled_copy(path);
    snprintf(path, sizeof path, "%s/{db_id}/{db_id}.sqlite", dir);
    eo.db_url = strs[n++] = scribbled_copy(path);
    snprintf(path, sizeof path, "%s/report.html", dir);
    eo.report_path = strs[n++] = scribbled_copy(path);
    assert_int_equal(n, sizeof strs / sizeof *strs);
    assert_int_equal(askdb_eval_new(&cfg, &eo, &ev), ASKDB_OK);
    for (i = 0; i < n; i++)
        scribble_and_free(strs[i]);

    assert_int_equal(askdb_eval_run(ev), ASKDB_OK);
    assert_int_equal(s.calls, 2);
    /* The learned pair was read from the store into the prompt. */
    assert_non_null(strstr(s.all_users, "How many products?"));
    assert_int_equal(askdb_eval_summary(ev, &text), ASKDB_OK);
    assert_non_null(strstr(text, "2/2"));
    askdb_free(text);
    snprintf(path, sizeof path, "%s/report.html", dir);
    assert_int_equal(askdb_eval_write_report(ev, path), ASKDB_OK);
    askdb_eval_free(ev);
    snprintf(path, sizeof path, "%s/out.jsonl", dir);
    text = file_read(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"How many orders?\""));
    free(text);
    snprintf(path, sizeof path, "%s/trace.jsonl", dir);
    trace = file_read(path, NULL);
    assert_non_null(trace);
    assert_non_null(strstr(trace, "How many customers?"));
    free(trace);
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* The progress of an eval run, seen from the callback: every call's done
** and total, and an interrupt after the first item when asked to. */
struct eval_watch {
    askdb_eval *ev;
    int interrupt_after;     /* askdb_eval_interrupt() at this done; 0 =
                                never */
    long calls, max_done, over;  /* over: calls with done > total */
    long last_done, last_correct;
};

static void watch_progress(void *ud, const askdb_eval_progress *p)
{
    struct eval_watch *w = ud;

    w->calls++;
    if (p->done > w->max_done)
        w->max_done = p->done;
    w->over += p->done > p->total || p->correct > p->total;
    w->last_done = p->done;
    w->last_correct = p->correct;
    if (w->interrupt_after && p->done == w->interrupt_after)
        askdb_eval_interrupt(w->ev);
}

/* Lines of the file at path (0 when it cannot be read). */
static long lines_of(const char *path)
{
    char *t = file_read(path, NULL), *p;
    long n = 0;

    for (p = t; p && *p; p++)
        n += *p == '\n';
    free(t);
    return n;
}

/*
** askdb_eval_run() runs every selected item not yet done, so a second
** call after one that finished asks nothing, and one after an interrupt
** (askdb_eval_interrupt, from the progress callback after the first
** item: the questions not asked yet are not run) asks the rest exactly
** once: every item is asked once over the runs, the output file has one
** line per item, and progress never counts more than the selection. Two
** databases, so that the rest spans a group the first run stopped in and
** one it never began.
*/
static void eval_run_again_runs_only_items_not_done(void **state)
{
    static const char *const r[] = {
        "SELECT count(*) FROM customers", "SELECT count(*) FROM customers",
        "SELECT count(*) FROM customers", NULL};
    static const char *const questions[] = {
        "How many customers?", "Count the customers.",
        "What is the number of customers?"};
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    askdb_eval_options eo = askdb_eval_options_default();
    struct eval_watch w;
    char dir[128], a[256], b[256], suite[256], out[256], *text = NULL;
    askdb_eval *ev = NULL;
    FILE *f;
    int k, round;

    (void)state;
    assert_int_equal(tmpdir_make(dir, sizeof dir, "evrun"), 0);
    snprintf(a, sizeof a, "%s/a.db", dir);
    snprintf(b, sizeof b, "%s/b.db", dir);
    snprintf(suite, sizeof suite, "%s/suite.jsonl", dir);
    snprintf(out, sizeof out, "%s/out.jsonl", dir);
    assert_int_equal(file_copy(testdb_shop(), a), 0);
    assert_int_equal(file_copy(testdb_shop(), b), 0);
    assert_non_null(f = fopen(suite, "w"));
    for (k = 0; k < 3; k++)
        fprintf(f, "{\"db\": \"%s\", \"question\": \"%s\", \"gold\": "
                   "\"SELECT count(*) FROM customers\"}\n",
                k < 2 ? a : b, questions[k]);
    fclose(f);
    eo.suite_path = suite;
    eo.out_path = out;
    eo.progress = watch_progress;
    eo.progress_ud = &w;

    /* Run to the end, then again: the second run asks nothing. */
    for (round = 0; round < 2; round++) {
        memset(&w, 0, sizeof w);
        s.calls = s.next = 0;
        remove(out);
        assert_int_equal(askdb_eval_new(&cfg, &eo, &ev), ASKDB_OK);
        w.ev = ev;
        w.interrupt_after = round == 1 ? 1 : 0;
        if (round == 1) {
            /* Interrupted after the first item: one question asked. */
            assert_int_equal(askdb_eval_run(ev), ASKDB_ERR_CANCELLED);
            assert_int_equal(s.calls, 1);
            assert_int_equal(w.last_done, 1);
            assert_int_equal(lines_of(out), 1);
            w.interrupt_after = 0;
        }
        assert_int_equal(askdb_eval_run(ev), ASKDB_OK);
        assert_int_equal(s.calls, 3);
        assert_int_equal(w.last_done, 3);
        assert_int_equal(w.last_correct, 3);
        assert_int_equal(w.calls, 3);
        assert_int_equal(askdb_eval_run(ev), ASKDB_OK);
        assert_int_equal(s.calls, 3);
        assert_int_equal(w.calls, 3);
        assert_int_equal(w.max_done, 3);
        assert_int_equal(w.over, 0);
        assert_int_equal(lines_of(out), 3);
        assert_int_equal(askdb_eval_summary(ev, &text), ASKDB_OK);
        assert_non_null(strstr(text, "3/3"));
        askdb_free(text);
        text = NULL;
        askdb_eval_free(ev);
        ev = NULL;
    }
    /* An eval whose askdb_eval_new() failed (the output exists, no
    ** resume) runs nothing: a usage error that keeps the reason. */
    s.calls = s.next = 0;
    assert_int_equal(askdb_eval_new(&cfg, &eo, &ev), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_eval_run(ev), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_eval_run(ev), ASKDB_ERR_USAGE);
    assert_non_null(strstr(askdb_eval_errmsg(ev), "not set up"));
    assert_non_null(strstr(askdb_eval_errmsg(ev), "already exists"));
    assert_null(strstr(strstr(askdb_eval_errmsg(ev), "not set up") + 1,
                       "not set up"));
    askdb_eval_free(ev);
    ev = NULL;
    /* Resumed, every item is done: nothing is asked. */
    eo.resume = 1;
    memset(&w, 0, sizeof w);
    assert_int_equal(askdb_eval_new(&cfg, &eo, &ev), ASKDB_OK);
    assert_int_equal(askdb_eval_run(ev), ASKDB_OK);
    assert_int_equal(s.calls, 0);
    assert_int_equal(w.calls, 0);
    assert_int_equal(lines_of(out), 3);
    askdb_eval_free(ev);
    ev = NULL;
    /* An interrupt before the run stops it before its first question;
    ** the run took it, so the next one runs everything. */
    eo.resume = 0;
    remove(out);
    memset(&w, 0, sizeof w);
    s.calls = s.next = 0;
    assert_int_equal(askdb_eval_new(&cfg, &eo, &ev), ASKDB_OK);
    askdb_eval_interrupt(ev);
    assert_int_equal(askdb_eval_run(ev), ASKDB_ERR_CANCELLED);
    assert_int_equal(s.calls, 0);
    assert_int_equal(askdb_eval_run(ev), ASKDB_OK);
    assert_int_equal(s.calls, 3);
    assert_int_equal(w.last_done, 3);
    askdb_eval_free(ev);
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* A custom model that refuses the credentials (401) every time. */
static int refusing_model(void *ud, int n, const char *const *roles,
                          const char *const *contents, char **reply)
{
    (void)n, (void)roles, (void)contents, (void)reply;
    (*(int *)ud)++;
    return 401;
}

/*
** A custom model that returns 401 refused the credentials, as an HTTP
** provider's status says: the eval stops at its first question with
** ASKDB_ERR_LLM and the callback's message, the question recorded (before:
** every one of the 5 questions was asked, a "model failed" each, until the
** run of model errors stopped it).
*/
static void eval_stops_when_a_custom_model_refuses_the_credentials(void **st)
{
    askdb_config cfg = askdb_config_default();
    askdb_eval_options eo = askdb_eval_options_default();
    char dir[128], db[256], suite[256], out[256];
    askdb_eval *ev = NULL;
    FILE *f;
    int calls = 0, k;

    (void)st;
    cfg.llm_fn = refusing_model;
    cfg.llm_ud = &calls;
    cfg.memory = 0;
    assert_int_equal(tmpdir_make(dir, sizeof dir, "evdeny"), 0);
    snprintf(db, sizeof db, "%s/shop.db", dir);
    assert_int_equal(file_copy(testdb_shop(), db), 0);
    snprintf(suite, sizeof suite, "%s/suite.jsonl", dir);
    snprintf(out, sizeof out, "%s/out.jsonl", dir);
    assert_non_null(f = fopen(suite, "w"));
    for (k = 0; k < 5; k++)
        fprintf(f, "{\"db\": \"%s\", \"question\": \"Question %d?\", "
                   "\"gold\": \"SELECT count(*) FROM customers\"}\n",
                db, k);
    fclose(f);
    eo.suite_path = suite;
    eo.out_path = out;
    assert_int_equal(askdb_eval_new(&cfg, &eo, &ev), ASKDB_OK);
    assert_int_equal(askdb_eval_run(ev), ASKDB_ERR_LLM);
    assert_int_equal(calls, 1);
    assert_non_null(strstr(askdb_eval_errmsg(ev), "refused the credentials"));
    assert_int_equal(lines_of(out), 1);
    askdb_eval_free(ev);
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* ---------------------------------------------------------------------- */
/* Handles of failed constructors                                         */
/* ---------------------------------------------------------------------- */

/* Whether msg says the handle did not open and still says why (why). */
static void says_not_open(const char *msg, const char *not_open,
                          const char *why)
{
    if (!strstr(msg, not_open) || !strstr(msg, why))
        fail_msg("message '%s' does not say '%s' and '%s'", msg, not_open,
                 why);
    /* Said once, however many calls. */
    if (strstr(strstr(msg, not_open) + 1, not_open))
        fail_msg("message '%s' says '%s' twice", msg, not_open);
}

/*
** A failed constructor leaves a handle for its message (the header says
** so); every function that takes such a handle refuses it with
** ASKDB_ERR_USAGE and a message that says the handle did not open and
** why, never a crash (under ASan: no NULL or freed driver state read).
** Databases of every engine: SQLite (missing file, "", a scheme askdb
** does not read), DuckDB, PostgreSQL and MariaDB (nothing listens on
** port 1), in askdb-exec and in process; agents that failed before the
** database (bad provider, no model), at it (missing file) and after it
** (trace refused: the database opened, the agent did not); a store that
** is not one; an eval whose output exists.
*/
static void failed_handles_refuse_every_call(void **state)
{
    static const char *const paths[] = {
        "/no/such/dir/x.db", "", "foo://x", "/no/such/dir/x.duckdb",
        "postgresql://askdb@127.0.0.1:1/x?connect_timeout=2",
        "mariadb://askdb@127.0.0.1:1/x?connect_timeout=2"};
    static const char *const r[] = {"SELECT 1 AS one", NULL};
    static const char not_db[] = "did not open";
    static const char pair[] =
        "{\"question\": \"q\", \"sql\": \"SELECT 1\"}\n";
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    askdb_ask_options o = {.hint = "h"};
    askdb_eval_options eo = askdb_eval_options_default();
    askdb_memory *m = NULL;
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    askdb_result *res = NULL;
    askdb_db *db = NULL, *good = NULL;
    askdb_eval *ev = NULL;
    char dir[128], store[256], file[256], shop[4096], why[1024];
    char *text = NULL;
    size_t i;
    int k, n;

    (void)state;
    assert_int_equal(tmpdir_make(dir, sizeof dir, "failed"), 0);
    snprintf(store, sizeof store, "%s/memory.sqlite", dir);
    snprintf(file, sizeof file, "%s/pairs.jsonl", dir);
    assert_int_equal(file_write(file, pair, strlen(pair)), 0);
    assert_non_null(realpath(testdb_shop(), shop));
    assert_int_equal(askdb_memory_open(store, 1, &m), ASKDB_OK);

    /* Databases. */
    for (k = 0; k < 2; k++) {
        cfg.in_process = k;
        for (i = 0; i < sizeof paths / sizeof *paths; i++) {
            assert_int_not_equal(askdb_db_open(paths[i], &cfg, &db),
                                 ASKDB_OK);
            assert_non_null(db);
            snprintf(why, sizeof why, "%s", askdb_db_errmsg(db));
            assert_true(why[0] != '\0');
            assert_int_equal(askdb_db_query(db, "SELECT 1", &res),
                             ASKDB_ERR_USAGE);
            assert_null(res);
            says_not_open(askdb_db_errmsg(db), not_db, why);
            assert_int_equal(askdb_db_explain(db, "SELECT 1", &res),
                             ASKDB_ERR_USAGE);
            assert_null(res);
            assert_int_equal(askdb_db_schema_text(db, &text),
                             ASKDB_ERR_USAGE);
            assert_null(text);
            assert_int_equal(askdb_db_schema_json(db, 0, &text),
                             ASKDB_ERR_USAGE);
            assert_null(text);
            says_not_open(askdb_db_errmsg(db), not_db, why);
            assert_int_equal(askdb_memory_learn(m, db, "q", "SELECT 1", NULL),
                             ASKDB_ERR_USAGE);
            assert_non_null(strstr(askdb_memory_errmsg(m), not_db));
            assert_int_equal(askdb_memory_import(m, db, file, NULL, NULL,
                                                 NULL), ASKDB_ERR_USAGE);
            assert_non_null(strstr(askdb_memory_errmsg(m), not_db));
            askdb_db_cancel(db);
            askdb_db_uncancel(db);
            askdb_db_close(db);
            db = NULL;
        }
    }
    cfg.in_process = 0;

    /* Agents: failed before the database, at it, after it. */
    for (k = 0; k < 5; k++) {
        askdb_config c = cfg;
        const char *where = testdb_shop();
        askdb_status st;

        if (k == 0)
            c.provider = "nosuch";
        else if (k == 1)
            where = "/no/such/dir/x.db";
        else if (k == 2)
            where = "/no/such/dir/x.duckdb";
        else if (k == 3)
            c.trace_path = shop;   /* refused: the database itself */
        if (k == 4)
            st = askdb_agent_new_with_model(&c, NULL, where, &ag);
        else
            st = askdb_agent_new(&c, where, &ag);
        assert_int_not_equal(st, ASKDB_OK);
        assert_non_null(ag);
        snprintf(why, sizeof why, "%s", askdb_agent_errmsg(ag));
        assert_null(askdb_agent_db(ag));
        assert_int_equal(askdb_agent_warm(ag), ASKDB_ERR_USAGE);
        says_not_open(askdb_agent_errmsg(ag), "was not made", why);
        assert_int_equal(askdb_agent_ask(ag, "one", &a), ASKDB_ERR_USAGE);
        assert_int_equal(a->status, ASKDB_ERR_USAGE);
        says_not_open(a->error, "was not made", why);
        says_not_open(askdb_agent_errmsg(ag), "was not made", why);
        askdb_answer_free(a);
        a = NULL;
        assert_int_equal(askdb_agent_ask_hint(ag, "one", "h", &a),
                         ASKDB_ERR_USAGE);
        askdb_answer_free(a);
        a = NULL;
        assert_int_equal(askdb_agent_ask_opts(ag, "one", &o, &a),
                         ASKDB_ERR_USAGE);
        askdb_answer_free(a);
        a = NULL;
        askdb_agent_forget(ag);
        askdb_agent_cancel(ag);
        askdb_agent_free(ag);
        ag = NULL;
    }
    assert_int_equal(s.calls, 0);

    /* A store that is not one: nothing listed, forgotten or learned as
    ** if it were an empty store. */
    askdb_memory_close(m);
    m = NULL;
    assert_int_equal(askdb_memory_open(shop, 1, &m), ASKDB_ERR_USAGE);
    snprintf(why, sizeof why, "%s", askdb_memory_errmsg(m));
    good = testdb_open(testdb_shop(), NULL, NULL);
    {
        askdb_pair *p = NULL;
        long removed = -1;

        assert_int_equal(askdb_memory_list(m, shop, &p, &n), ASKDB_ERR_USAGE);
        assert_null(p);
        assert_int_equal(askdb_memory_forget(m, shop, NULL, &removed),
                         ASKDB_ERR_USAGE);
        assert_int_equal(removed, 0);
        assert_int_equal(askdb_memory_learn(m, good, "q", "SELECT 1", NULL), ASKDB_ERR_USAGE);
        assert_int_equal(askdb_memory_import(m, good, file, NULL, NULL,
                                             NULL), ASKDB_ERR_USAGE);
        says_not_open(askdb_memory_errmsg(m), "did not open", why);
    }
    askdb_db_close(good);
    askdb_memory_close(m);

    /* An eval whose output exists: no summary or report of nothing. */
    snprintf(store, sizeof store, "%s/suite.jsonl", dir);
    assert_non_null(realpath(testdb_shop(), shop));
    {
        FILE *f = fopen(store, "w");

        assert_non_null(f);
        fprintf(f, "{\"db\": \"%s\", \"question\": \"How many customers?\", "
                   "\"gold\": \"SELECT count(*) FROM customers\"}\n", shop);
        fclose(f);
    }
    eo.suite_path = store;
    eo.out_path = file;      /* exists, no resume */
    assert_int_equal(askdb_eval_new(&cfg, &eo, &ev), ASKDB_ERR_USAGE);
    snprintf(why, sizeof why, "%s", askdb_eval_errmsg(ev));
    assert_int_equal(askdb_eval_run(ev), ASKDB_ERR_USAGE);
    assert_int_equal(askdb_eval_summary(ev, &text), ASKDB_ERR_USAGE);
    assert_null(text);
    snprintf(store, sizeof store, "%s/report.html", dir);
    assert_int_equal(askdb_eval_write_report(ev, store), ASKDB_ERR_USAGE);
    assert_int_equal(access(store, F_OK), -1);
    says_not_open(askdb_eval_errmsg(ev), "not set up", why);
    askdb_eval_interrupt(ev);
    askdb_eval_free(ev);
    assert_int_equal(s.calls, 0);
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* A store or a trace that cannot be opened is an I/O error, as the header
** says; a store that is not one to use is a usage error. */
static void files_that_cannot_be_opened_are_io_errors(void **state)
{
    static const char *const r[] = {NULL};
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    askdb_memory *m = NULL;
    askdb_agent *ag = NULL;
    char shop[4096];

    (void)state;
    assert_int_equal(askdb_memory_open("/no/such/dir/memory.sqlite", 1, &m),
                     ASKDB_ERR_IO);
    assert_non_null(strstr(askdb_memory_errmsg(m), "cannot open memory "
                                                   "store"));
    askdb_memory_close(m);
    assert_non_null(realpath(testdb_shop(), shop));
    assert_int_equal(askdb_memory_open(shop, 1, &m), ASKDB_ERR_USAGE);
    assert_non_null(strstr(askdb_memory_errmsg(m), "not an askdb memory"));
    askdb_memory_close(m);

    cfg.trace_path = "/no/such/dir/trace.jsonl";
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag),
                     ASKDB_ERR_IO);
    assert_non_null(strstr(askdb_agent_errmsg(ag), "cannot open trace file"));
    askdb_agent_free(ag);
    ag = NULL;
    cfg.trace_path = shop;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag),
                     ASKDB_ERR_IO);
    assert_non_null(strstr(askdb_agent_errmsg(ag), "SQLite database"));
    askdb_agent_free(ag);
}

/* ---------------------------------------------------------------------- */
/* JSON and output paths                                                  */
/* ---------------------------------------------------------------------- */

/* The answer as JSON: the same fields for every front end; the C1
** control U+009B (an 8-bit CSI) and the bidi override U+202E stay
** characters in a file and become escapes for a terminal; compact unless
** asked to indent. */
static void answer_json_is_one_document_and_escapes_c1_on_request(void **st)
{
    static const char *const r[] = {
        "SELECT CAST(x'41c29b42e280ae43' AS TEXT) AS t, 1.5 AS r, NULL AS n, "
        "x'00ff' AS b", NULL};
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    askdb_ask_options o = {.request_id = "r1"};
    askdb_agent *ag = NULL;
    askdb_answer *a = NULL;
    char *plain = NULL, *term = NULL, *pretty = NULL, *res = NULL;

    (void)st;
    assert_int_equal(askdb_agent_new(&cfg, testdb_shop(), &ag), ASKDB_OK);
    assert_int_equal(askdb_agent_ask_opts(ag, "odd values", &o, &a),
                     ASKDB_OK);
    assert_int_equal(askdb_answer_json(a, 0, &plain), ASKDB_OK);
    assert_int_equal(askdb_answer_json(a, ASKDB_JSON_TERMINAL, &term),
                     ASKDB_OK);
    assert_int_equal(askdb_answer_json(a, ASKDB_JSON_PRETTY, &pretty),
                     ASKDB_OK);
    assert_non_null(strstr(plain, "\"question\":\"odd values\","
                                  "\"request_id\":\"r1\",\"status\":\"ok\""));
    assert_non_null(strstr(plain, "\"rows\":[[\"A\xc2\x9b" "B\xe2\x80\xae"
                                  "C\",1.5,null,{\"blob_hex\":\"00ff\"}]]"));
    assert_non_null(strstr(term, "\"A\\u009bB\\u202eC\""));
    assert_null(strstr(term, "\xc2\x9b"));
    assert_null(strstr(term, "\xe2\x80\xae"));
    assert_null(strchr(plain, '\n'));
    assert_non_null(strstr(pretty, "\n  \"question\": \"odd values\""));
    /* No rows and no error: nothing to say. */
    assert_int_equal(askdb_result_json(NULL, "SELECT x", NULL, 0, &res),
                     ASKDB_ERR_USAGE);
    assert_null(res);
    assert_int_equal(askdb_result_json(NULL, "SELECT x", "no such column: x",
                                       0, &res), ASKDB_OK);
    assert_string_equal(res, "{\"sql\":\"SELECT x\",\"error\":"
                             "\"no such column: x\"}");
    askdb_free(res);
    res = NULL;
    /* Rows and an error: the error instead of the rows, as when there are
    ** no rows (a caller that keeps the result of a statement a later step
    ** refused must not print both). */
    assert_int_equal(askdb_result_json(a->result, "SELECT 1", "refused",
                                       0, &res), ASKDB_OK);
    assert_string_equal(res, "{\"sql\":\"SELECT 1\",\"error\":"
                             "\"refused\"}");
    askdb_free(plain);
    askdb_free(term);
    askdb_free(pretty);
    askdb_free(res);
    askdb_answer_free(a);
    askdb_agent_free(ag);
}

/* JSON a front end writes with jansson gets the reals askdb's own JSON
** has: the shortest that reads back, strings and integers untouched. */
static void json_shorten_reals_rewrites_numbers_only(void **st)
{
    char t[] = "{\"a\":0.10000000000000001,\"b\":[1.0,-2.5e-300,"
               "123456789.12345678,17],\"s\":\"0.10000000000000001\","
               "\"e\":\"\\\"0.20000000000000001\",\"c\":"
               "0.30000000000000004}";

    (void)st;
    assert_null(askdb_json_shorten_reals(NULL));
    assert_ptr_equal(askdb_json_shorten_reals(t), t);
    assert_string_equal(t, "{\"a\":0.1,\"b\":[1.0,-2.5e-300,"
                           "123456789.12345678,17],\"s\":"
                           "\"0.10000000000000001\",\"e\":"
                           "\"\\\"0.20000000000000001\",\"c\":"
                           "0.30000000000000004}");
}

/* Output paths: a database is refused, a new file is fine; so is the
** file being asked under any name, and a Parquet file by its bytes. */
static void output_refusal_names_databases(void **state)
{
    char dir[128], db[256], fresh[256], csv[256], alias[256], pq[256];
    FILE *f;

    (void)state;
    assert_int_equal(tmpdir_make(dir, sizeof dir, "out"), 0);
    snprintf(db, sizeof db, "%s/x.db", dir);
    snprintf(fresh, sizeof fresh, "%s/trace.jsonl", dir);
    snprintf(csv, sizeof csv, "%s/t.csv", dir);
    snprintf(alias, sizeof alias, "%s/./t.csv", dir);
    snprintf(pq, sizeof pq, "%s/t.parquet", dir);
    assert_int_equal(sqlfile_exec(db, "CREATE TABLE t(x);"), 0);
    assert_non_null(askdb_output_refusal(db));
    assert_null(askdb_output_refusal(fresh));
    assert_null(askdb_output_refusal("/dev/null"));
    assert_non_null(f = fopen(csv, "w"));
    fputs("a,b\n1,2\n", f);
    fclose(f);
    assert_non_null(f = fopen(pq, "w"));
    fputs("PAR1 and the rest", f);
    fclose(f);
    assert_null(askdb_output_refusal(csv));
    assert_null(askdb_output_refusal_for(csv, NULL));
    assert_null(askdb_output_refusal_for(csv, db));
    assert_null(askdb_output_refusal_for(fresh, csv));
    assert_null(askdb_output_refusal_for(csv, "postgresql://u@h/db"));
    assert_non_null(strstr(askdb_output_refusal_for(alias, csv),
                           "the database being asked"));
    assert_non_null(askdb_output_refusal_for(db, csv));
    assert_non_null(strstr(askdb_output_refusal(pq), "Parquet"));
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* The schema for programs: every table with its columns, keys and row
** count, plus the prompt's text; the plan of a statement without running
** it, and a write refused by the same guard as a query. */
static void schema_json_and_explain(void **state)
{
    askdb_db *db = NULL;
    askdb_result *r = NULL;
    char *j = NULL, *text = NULL;
    json_error_t je;
    json_t *o, *t, *orders = NULL, *fk;
    size_t i;

    (void)state;
    assert_int_equal(askdb_db_open(testdb_shop(), NULL, &db), ASKDB_OK);
    assert_int_equal(askdb_db_schema_json(db, 0, &j), ASKDB_OK);
    assert_int_equal(askdb_db_schema_text(db, &text), ASKDB_OK);
    o = json_loads(j, 0, &je);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "engine")),
                        "sqlite");
    assert_string_equal(json_string_value(json_object_get(o, "text")), text);
    json_array_foreach(json_object_get(o, "tables"), i, t)
        if (strcmp(json_string_value(json_object_get(t, "name")),
                   "orders") == 0)
            orders = t;
    assert_non_null(orders);
    assert_string_equal(json_string_value(json_object_get(orders, "kind")),
                        "table");
    assert_true(json_integer_value(json_object_get(orders, "rows")) > 0);
    fk = json_array_get(json_object_get(orders, "foreign_keys"), 0);
    assert_string_equal(json_string_value(json_object_get(fk, "table")),
                        "customers");
    json_decref(o);

    assert_int_equal(askdb_db_explain(db, "SELECT * FROM customers WHERE "
                                          "id = 3", &r), ASKDB_OK);
    assert_true(r->nrows >= 1);
    assert_non_null(strstr(askdb_result_cell(r, 0, 3)->s, "customers"));
    askdb_result_free(r);
    r = NULL;
    assert_int_equal(askdb_db_explain(db, "DELETE FROM customers", &r),
                     ASKDB_ERR_REFUSED);
    assert_null(r);
    askdb_free(j);
    askdb_free(text);
    askdb_db_close(db);
}

/*
** A statement that is not there: NULL is a usage error; empty text,
** blanks or only comments are not exactly one statement, so refused (as
** the header says), class no_sql, in askdb-exec and in process alike. A
** success leaves no earlier error in askdb_db_errmsg().
*/
/* Counts the "statements run in askdb-exec" lines of a handle's log. */
static void count_helper_lines(void *ud, const char *step, const char *msg)
{
    (void)step;
    if (strstr(msg, "askdb-exec, killed after the time limit"))
        ++*(int *)ud;
}

static void query_refuses_no_statement_and_clears_its_error(void **state)
{
    static const char *const none[] = {"", "   ", "-- c", "/* c */ ;"};
    askdb_config cfg = askdb_config_default();
    askdb_result *r = NULL;
    askdb_db *db = NULL;
    size_t i;
    int k, helper, in_helper;

    (void)state;
    helper = test_use_exec_helper();
    cfg.log_fn = count_helper_lines;
    cfg.log_ud = &in_helper;
    for (k = 0; k < 2; k++) {
        cfg.in_process = k;
        in_helper = 0;
        assert_int_equal(askdb_db_open(testdb_shop(), &cfg, &db), ASKDB_OK);
        /* In askdb-exec indeed, when not in this process. */
        assert_int_equal(in_helper, !k);
        assert_int_equal(askdb_db_query(db, NULL, &r), ASKDB_ERR_USAGE);
        assert_null(r);
        assert_string_equal(askdb_db_errmsg(db), "no statement given (NULL)");
        assert_int_equal(askdb_db_explain(db, NULL, &r), ASKDB_ERR_USAGE);
        for (i = 0; i < sizeof none / sizeof *none; i++) {
            assert_int_equal(askdb_db_query(db, none[i], &r),
                             ASKDB_ERR_REFUSED);
            assert_null(r);
            assert_int_equal(askdb_db_errclass(db), ASKDB_EC_NO_SQL);
            assert_non_null(strstr(askdb_db_errmsg(db),
                                   "refused: no SQL statement"));
            assert_int_equal(askdb_db_explain(db, none[i], &r),
                             ASKDB_ERR_REFUSED);
        }
        assert_int_equal(askdb_db_query(db, "SELECT nope FROM customers",
                                        &r), ASKDB_ERR_DB);
        assert_non_null(strstr(askdb_db_errmsg(db), "nope"));
        assert_int_equal(askdb_db_query(db, "SELECT 1", &r), ASKDB_OK);
        assert_string_equal(askdb_db_errmsg(db), "");
        assert_int_equal(askdb_db_errclass(db), ASKDB_EC_NONE);
        askdb_result_free(r);
        r = NULL;
        assert_int_equal(askdb_db_query(db, "", &r), ASKDB_ERR_REFUSED);
        assert_int_equal(askdb_db_explain(db, "SELECT 1", &r), ASKDB_OK);
        assert_string_equal(askdb_db_errmsg(db), "");
        askdb_result_free(r);
        r = NULL;
        askdb_db_close(db);
        db = NULL;
    }
    test_no_exec_helper(helper);
}

/* The handles askdb_db_open() and askdb_agent_new() are opening: they
** set them before they connect, and a signal handler cancels them. */
static askdb_db *opening_db;
static askdb_agent *opening_ag;

static void cancel_opening(int sig)
{
    (void)sig;
    if (opening_db)
        askdb_db_cancel(opening_db);
    if (opening_ag)
        askdb_agent_cancel(opening_ag);
}

/* A listener on a free loopback port that takes connections (the
** kernel's backlog) and answers none; its descriptor, its port in *port. */
static int deaf_listener(int *port)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t n = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &n) != 0)
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

struct kick {
    pthread_t target;
    int ms;
};

static void *kick_main(void *arg)
{
    struct kick *k = arg;
    struct timespec ts = {k->ms / 1000, (long)(k->ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
    pthread_kill(k->target, SIGUSR1);
    return NULL;
}

/*
** A connect to a PostgreSQL or MariaDB server is cancelled while the
** handle is being opened, as the header says: askdb_db_cancel() on the
** handle askdb_db_open() sets before it connects, askdb_agent_cancel()
** on the agent askdb_agent_new() is making, from a signal handler. The
** PostgreSQL URL names two hosts that take the connection and answer
** none, the MariaDB URL one, with connect_timeout=3: the open ends
** ASKDB_ERR_CANCELLED, "cancelled while connecting to 'URL'" (both
** engines quote the URL), within a second of the signal (300 ms in), not
** at the connect_timeout of each host.
*/
static void cancel_stops_a_connect_to_a_server(void **state)
{
    static const char *const r[] = {"SELECT 1 AS one", NULL};
    struct script s = {.replies = r};
    askdb_config cfg = scripted_config(&s);
    struct sigaction sa, old;
    struct kick k = {.ms = 300};
    pthread_t t;
    char urls[2][128], *url, want[200];
    double t0;
    int fd1, fd2, p1 = 0, p2 = 0, round;
    askdb_status st;

    (void)state;
    fd1 = deaf_listener(&p1);
    fd2 = deaf_listener(&p2);
    assert_true(fd1 >= 0 && fd2 >= 0);
    snprintf(urls[0], sizeof urls[0], "postgresql://askdb@127.0.0.1:%d,"
             "127.0.0.1:%d/x?connect_timeout=3", p1, p2);
    snprintf(urls[1], sizeof urls[1], "mariadb://askdb@127.0.0.1:%d/x?"
             "connect_timeout=3", p1);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cancel_opening;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    k.target = pthread_self();
    for (round = 0; round < 4; round++) {
        url = urls[round / 2];
        snprintf(want, sizeof want, "cancelled while connecting to '%s'",
                 url);
        assert_int_equal(pthread_create(&t, NULL, kick_main, &k), 0);
        t0 = now_ms();
        if (round % 2 == 0) {
            st = askdb_db_open(url, &cfg, &opening_db);
            assert_int_equal(st, ASKDB_ERR_CANCELLED);
            assert_non_null(strstr(askdb_db_errmsg(opening_db), want));
        } else {
            st = askdb_agent_new(&cfg, url, &opening_ag);
            assert_int_equal(st, ASKDB_ERR_CANCELLED);
            assert_non_null(strstr(askdb_agent_errmsg(opening_ag), want));
        }
        assert_true(now_ms() - t0 < 1300);
        pthread_join(t, NULL);
        askdb_db_close(opening_db);
        askdb_agent_free(opening_ag);
        opening_db = NULL;
        opening_ag = NULL;
    }
    sigaction(SIGUSR1, &old, NULL);
    close(fd1);
    close(fd2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cancel_stops_a_running_query),
        cmocka_unit_test(cancel_stops_a_connect_to_a_server),
        cmocka_unit_test(cancel_between_questions_is_forgotten),
        cmocka_unit_test(blank_question_is_a_usage_error),
        cmocka_unit_test(zero_max_attempts_means_the_default),
        cmocka_unit_test(plain_answer_is_in_the_answer_event),
        cmocka_unit_test(result_event_comes_before_the_words),
        cmocka_unit_test(cancel_before_the_result_is_cancelled),
        cmocka_unit_test(statement_after_a_cancelled_question_runs),
        cmocka_unit_test(cancel_stops_a_statement_on_the_agents_database),
        cmocka_unit_test(cancel_stops_a_schema_read_waiting_for_a_lock),
        cmocka_unit_test(schema_read_waits_for_a_lock_within_the_limit),
        cmocka_unit_test(failed_model_makes_no_agent),
        cmocka_unit_test(shared_model_serves_agents_on_two_threads),
        cmocka_unit_test(cancel_stops_the_local_model),
        cmocka_unit_test(memory_learns_lists_imports_and_forgets),
        cmocka_unit_test(files_that_cannot_be_opened_are_io_errors),
        cmocka_unit_test(answer_json_is_one_document_and_escapes_c1_on_request),
        cmocka_unit_test(json_shorten_reals_rewrites_numbers_only),
        cmocka_unit_test(output_refusal_names_databases),
        cmocka_unit_test(schema_json_and_explain),
        cmocka_unit_test(query_refuses_no_statement_and_clears_its_error),
        cmocka_unit_test(null_arguments_are_usage_errors),
        cmocka_unit_test(bad_model_numbers_are_refused_by_every_constructor),
        cmocka_unit_test(largest_memory_count_does_not_overflow),
        cmocka_unit_test_teardown(
            shared_http_model_keeps_the_agents_own_settings, fake_teardown),
        cmocka_unit_test(eval_report_refuses_a_database_and_no_file),
        cmocka_unit_test(eval_copies_every_string_it_is_given),
        cmocka_unit_test(eval_run_again_runs_only_items_not_done),
        cmocka_unit_test(eval_stops_when_a_custom_model_refuses_the_credentials),
        cmocka_unit_test(failed_handles_refuse_every_call),
    };
    test_filter_from_env();

    return cmocka_run_group_tests(tests, NULL, NULL);
}
