/* test_eval_item.c - scoring one eval item against a real database. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/eval.h"
#include "eval/record.h"

static char dbpath[300];

/* A model that answers with DISTINCT over u, a table of the database
** asked (not of the gold's). */
static int distinct_model(void *ud, int n, const char *const *roles,
                          const char *const *contents, char **reply)
{
    (void)ud;
    (void)n;
    (void)roles;
    (void)contents;
    *reply = strdup("```sql\nSELECT DISTINCT x FROM u\n```");
    return *reply ? 0 : 1;
}

/* A model that must never be reached in these tests. */
static int no_model(void *ud, int n, const char *const *roles,
                    const char *const *contents, char **reply)
{
    (void)ud;
    (void)n;
    (void)roles;
    (void)contents;
    *reply = strdup("```sql\nSELECT 1\n```");
    return *reply ? 0 : 1;
}

static int setup(void **state)
{
    if (tmpdir_setup(state))
        return -1;
    snprintf(dbpath, sizeof dbpath, "%s/t.db", tmpdir);
    return sqlfile_exec(dbpath,
                        "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
}

/*
** The database becomes unreadable after the agent opened it (the file was
** overwritten): the gold "SELECT 1" still runs, the agent fails before any
** attempt. Scoring an answer without attempts must not form a pointer
** before the start of its (NULL) attempts array (UBSan checks).
*/
static void answer_without_attempts_is_scored(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_agent *ag = NULL;
    struct suite_item it;
    char err[256] = "";
    json_t *rec;
    FILE *f;
    char junk[4096];

    (void)state;
    cfg.llm_fn = no_model;
    cfg.question_check = 0;
    cfg.memory = 0;
    if (askdb_agent_new(&cfg, dbpath, &ag) != ASKDB_OK)
        fail_msg("agent: %s", askdb_agent_errmsg(ag));
    /* Overwrite in place, so that the open handle sees it. */
    memset(junk, 'j', sizeof junk);
    f = fopen(dbpath, "r+b");
    assert_non_null(f);
    assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
    fclose(f);

    memset(&it, 0, sizeof it);
    it.index = 0;
    it.db_id = "t";
    it.db_path = dbpath;
    it.question = "How many?";
    it.gold = "SELECT 1";
    it.difficulty = "easy";
    rec = rec_new(&it);
    assert_non_null(rec);
    assert_int_equal(eval_item(ag, NULL, &it, 0, rec, err, sizeof err), ASKDB_OK);
    assert_string_equal(jsonx_str(rec, "class"), REC_NO_SQL);
    assert_non_null(strstr(jsonx_str(rec, "message"), "schema"));
    assert_int_equal(jsonx_int(rec, "attempts", -1), 0);
    json_decref(rec);
    askdb_agent_free(ag);
}

/*
** --db-url: the agent asks another copy of the data (another engine) and
** the gold runs on the SQLite file. A prediction the official rules
** change (DISTINCT removed) is run again where it was asked, not on the
** gold's file, whose dialect or names it need not share: here the copy
** asked names its table u, the gold's file t.
*/
static void prepared_prediction_runs_where_it_was_asked(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_agent *ag = NULL;
    askdb_db *gold = NULL;
    struct suite_item it;
    char err[256] = "", copy[320], gpath[320];
    json_t *rec;

    (void)state;
    snprintf(gpath, sizeof gpath, "%s/gold.db", tmpdir);
    assert_int_equal(sqlfile_exec(gpath, "CREATE TABLE t (x); "
                                         "INSERT INTO t VALUES (1);"),
                     0);
    snprintf(copy, sizeof copy, "%s/copy.db", tmpdir);
    assert_int_equal(sqlfile_exec(copy, "CREATE TABLE u (x); "
                                        "INSERT INTO u VALUES (1), (1);"),
                     0);
    cfg.llm_fn = distinct_model;
    cfg.question_check = 0;
    cfg.memory = 0;
    if (askdb_agent_new(&cfg, copy, &ag) != ASKDB_OK)
        fail_msg("agent: %s", askdb_agent_errmsg(ag));
    if (askdb_db_open(gpath, &cfg, &gold) != ASKDB_OK)
        fail_msg("gold: %s", askdb_db_errmsg(gold));

    memset(&it, 0, sizeof it);
    it.index = 0;
    it.db_id = "t";
    it.db_path = gpath;
    it.question = "Which x?";
    it.gold = "SELECT x FROM t";
    it.difficulty = "easy";
    rec = rec_new(&it);
    assert_non_null(rec);
    assert_int_equal(eval_item(ag, gold, &it, 0, rec, err, sizeof err),
                     ASKDB_OK);
    /* Without DISTINCT, u gives (1), (1); the gold t gives (1). */
    assert_string_equal(jsonx_str(rec, "class"), REC_WRONG);
    assert_int_equal(jsonx_int(json_object_get(rec, "pred_result"),
                               "row_count", -1), 2);
    json_decref(rec);
    askdb_db_close(gold);
    askdb_agent_free(ag);
}

/*
** A question the agent takes for no question about the database (a
** greeting, or the model's "no" to its question check, on by default)
** ends with no SQL and status OK: it is scored wrong, no_sql, with the
** agent's words, not prepared and run as a NULL statement.
*/
static void not_a_question_is_scored_no_sql(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_agent *ag = NULL;
    struct suite_item it;
    char err[256] = "", gpath[320];
    json_t *rec;

    (void)state;
    snprintf(gpath, sizeof gpath, "%s/hello.db", tmpdir);
    assert_int_equal(sqlfile_exec(gpath, "CREATE TABLE t (x); "
                                         "INSERT INTO t VALUES (1);"),
                     0);
    cfg.llm_fn = no_model;
    cfg.memory = 0;
    cfg.question_check = 1;
    if (askdb_agent_new(&cfg, gpath, &ag) != ASKDB_OK)
        fail_msg("agent: %s", askdb_agent_errmsg(ag));
    memset(&it, 0, sizeof it);
    it.index = 0;
    it.db_id = "hello";
    it.db_path = gpath;
    it.question = "Hello!";
    it.gold = "SELECT 1";
    it.difficulty = "easy";
    rec = rec_new(&it);
    assert_non_null(rec);
    assert_int_equal(eval_item(ag, NULL, &it, 0, rec, err, sizeof err),
                     ASKDB_OK);
    assert_false(json_is_true(json_object_get(rec, "correct")));
    assert_string_equal(jsonx_str(rec, "class"), REC_NO_SQL);
    assert_non_null(strstr(jsonx_str(rec, "message"), "tables"));
    json_decref(rec);
    askdb_agent_free(ag);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(answer_without_attempts_is_scored),
        cmocka_unit_test(prepared_prediction_runs_where_it_was_asked),
        cmocka_unit_test(not_a_question_is_scored_no_sql),
    };
    test_filter_from_env();
    return cmocka_run_group_tests_name("eval_item", tests, setup,
                                       tmpdir_teardown);
}
