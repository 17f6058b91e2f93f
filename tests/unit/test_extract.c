/* test_extract.c - SQL taken out of model replies, and its shape check. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

#include "sql/extract.h"

static void expect_sql(const char *reply, const char *want)
{
    const char *why = NULL;
    char *got = sqlx_extract(reply, &why);

    if (!got)
        fail_msg("no SQL from %s: %s", reply, why);
    assert_string_equal(got, want);
    free(got);
}

static void expect_none(const char *reply)
{
    const char *why = NULL;
    char *got = sqlx_extract(reply, &why);

    assert_null(got);
    assert_non_null(why);
}

static void takes_sql_fenced_block(void **state)
{
    (void)state;
    expect_sql("Here you go:\n```sql\nSELECT 1;\n```\nThis counts.",
               "SELECT 1");
    expect_sql("```SQL\nSELECT a FROM t\n```", "SELECT a FROM t");
    expect_sql("```\nWITH x AS (SELECT 1) SELECT * FROM x\n```",
               "WITH x AS (SELECT 1) SELECT * FROM x");
}

static void takes_tilde_fences_and_json_objects(void **state)
{
    (void)state;
    expect_sql("~~~sql\nSELECT 42 AS x\n~~~", "SELECT 42 AS x");
    expect_sql("Sure:\n~~~\nSELECT 1\n~~~\ndone", "SELECT 1");
    expect_sql("{\"sql\": \"SELECT 43 AS x\"}", "SELECT 43 AS x");
    expect_sql("  {\"query\": \"SELECT 2;\", \"why\": \"x\"}\n", "SELECT 2");
    expect_sql("```json\n{\"sql\": \"SELECT 44 AS x\"}\n```",
               "SELECT 44 AS x");
    /* A write inside JSON is taken out for the guard to refuse. */
    expect_sql("{\"sql\": \"DROP TABLE t\"}", "DROP TABLE t");
    expect_none("{\"answer\": \"no SQL here\"}");
}

static void unicode_separator_does_not_hide_a_second_statement(void **state)
{
    (void)state;
    /* U+2028, U+0085, NBSP glued to the next word: kept for the guard. */
    expect_sql("SELECT 1;\xe2\x80\xa8" "DELETE FROM orders",
               "SELECT 1;\xe2\x80\xa8" "DELETE FROM orders");
    expect_sql("SELECT 1;\xc2\x85" "DELETE FROM orders",
               "SELECT 1;\xc2\x85" "DELETE FROM orders");
    expect_sql("SELECT 1;\xc2\xa0" "DROP TABLE t",
               "SELECT 1;\xc2\xa0" "DROP TABLE t");
    /* Prose after the semicolon is still dropped. */
    expect_sql("SELECT 1; \xe2\x80\x94 that is all", "SELECT 1");
}

static void skips_fenced_blocks_without_a_query(void **state)
{
    (void)state;
    expect_sql("```text\nnot sql\n```\n```sql\nSELECT 2\n```", "SELECT 2");
    expect_sql("```python\nprint(1)\n```\nSELECT 3", "SELECT 3");
}

static void takes_bare_statement_and_drops_trailing_prose(void **state)
{
    (void)state;
    expect_sql("SELECT name FROM t;", "SELECT name FROM t");
    expect_sql("The answer is: SELECT name FROM t; This returns names.",
               "SELECT name FROM t");
    expect_sql("SELECT a\nFROM t\n\nThis query lists a.", "SELECT a\nFROM t");
    expect_sql("  SELECT 1 ;;  \n", "SELECT 1");
}

static void prose_with_quotes_or_sql_words_is_not_sql(void **state)
{
    (void)state;
    expect_sql("Here's the query:\n\nSELECT count(*) FROM t;",
               "SELECT count(*) FROM t");
    expect_sql("It's this: select a from t", "select a from t");
    expect_sql("```postgresql\nSELECT 1\n```", "SELECT 1");
    expect_sql("with x as (select 1) select * from x",
               "with x as (select 1) select * from x");
    expect_none("I am sorry, I cannot help with that.");
    expect_none("Please select a table first.");
}

static void keeps_semicolons_inside_strings(void **state)
{
    (void)state;
    expect_sql("SELECT 'a;b' AS x;", "SELECT 'a;b' AS x");
    expect_sql("SELECT \"we;ird\" FROM t", "SELECT \"we;ird\" FROM t");
}

static void unterminated_fence_takes_the_rest(void **state)
{
    (void)state;
    expect_sql("```sql\nSELECT 1 FROM t", "SELECT 1 FROM t");
}

static void write_statements_are_extracted_for_refusal(void **state)
{
    (void)state;
    expect_sql("DELETE FROM orders;", "DELETE FROM orders");
    expect_sql("```sql\nDROP TABLE t\n```", "DROP TABLE t");
    expect_sql("```\nPRAGMA user_version = 3\n```",
               "PRAGMA user_version = 3");
    expect_none("I will not delete anything.");
}

static void reply_without_sql_gives_null(void **state)
{
    (void)state;
    expect_none("I cannot answer that.");
    expect_none("");
    expect_none("```sql\n\n```");
}

static void second_statement_in_fence_is_kept_for_the_guard(void **state)
{
    char why[256];
    const char *w;
    char *s;

    (void)state;
    s = sqlx_extract("```sql\nSELECT 1; DROP TABLE t;\n```", &w);
    assert_non_null(s);
    assert_int_equal(sqlx_check_readonly(s, why, sizeof why), -1);
    assert_non_null(strstr(why, "more than one statement"));
    free(s);
}

static void skips_a_reasoning_models_thoughts(void **state)
{
    (void)state;
    /* The draft inside <think> is not the answer: the block after it is. */
    expect_sql("<think>\nDraft:\n```sql\nSELECT * FROM customer\n```\n"
               "no, it is customers\n</think>\n\n```sql\n"
               "SELECT count(*) FROM customers;\n```",
               "SELECT count(*) FROM customers");
    /* The template opened the block: only its end is in the reply. */
    expect_sql("SELECT wrong FROM t is a draft\n</think>\nSELECT 1",
               "SELECT 1");
    /* Thoughts that never end: no statement, and why. */
    expect_none("<think>\n```sql\nSELECT * FROM customer\n```\n");
    /* The words inside a statement are not thoughts. */
    expect_sql("SELECT '<think>' AS a", "SELECT '<think>' AS a");
    expect_sql("SELECT * FROM logs WHERE reply LIKE '%</think>%'",
               "SELECT * FROM logs WHERE reply LIKE '%</think>%'");
}

static void check_accepts_queries_only(void **state)
{
    char why[256];

    (void)state;
    assert_int_equal(sqlx_check_readonly("SELECT 1", why, sizeof why), 0);
    assert_int_equal(sqlx_check_readonly("with x as (select 1) select * "
                                         "from x", why, sizeof why), 0);
    assert_int_equal(sqlx_check_readonly("(SELECT 1) UNION SELECT 2", why,
                                         sizeof why), 0);
    assert_int_equal(sqlx_check_readonly("-- c\nSELECT 1", why, sizeof why),
                     0);
    assert_int_equal(sqlx_check_readonly("DELETE FROM t", why, sizeof why),
                     -1);
    assert_non_null(strstr(why, "'DELETE'"));
    assert_int_equal(sqlx_check_readonly("PRAGMA user_version=1", why,
                                         sizeof why), -1);
    assert_int_equal(sqlx_check_readonly("SELECT 'x", why, sizeof why), -1);
    assert_non_null(strstr(why, "unterminated"));
    assert_int_equal(sqlx_check_readonly("  ", why, sizeof why), -1);
}

/* What ends a question after two refusals is a change, not a read the
** guard refused for what it calls. */
/* Fails with the first statement of list that sqlx_changes() does not
** read as want (1: a change, 0: a read). */
static void expect_changes(const char *const *list, int want)
{
    int i;

    for (i = 0; list[i]; i++)
        if (sqlx_changes(list[i]) != want)
            fail_msg("not a %s: %s", want ? "change" : "read", list[i]);
}

static void changes_are_told_from_reads(void **state)
{
    static const char *const changes[] = {
        "DELETE FROM t", "update t set x = 1", "INSERT INTO t VALUES (1)",
        "DROP TABLE t", "CREATE TABLE t (x)", "ATTACH 'x.db' AS x",
        "PRAGMA user_version=5", "PRAGMA journal_mode = DELETE",
        "SELECT 1; DROP TABLE t", "SELECT 1;\nDELETE FROM t",
        "WITH x AS (SELECT 1) DELETE FROM t",
        "WITH d AS (DELETE FROM t RETURNING id) SELECT count(*) FROM d",
        "WITH x AS (SELECT 1) UPDATE t SET a = 1",
        "with x as (select 1)\n  insert into t select * from x",
        "(DELETE FROM t)", "COPY t TO '/tmp/x'", "VACUUM INTO 'x.db'",
        "BEGIN IMMEDIATE", "SET ROLE postgres", "CALL wipe(0)",
        "-- a comment\nTRUNCATE t", "REPLACE INTO t VALUES (1)", NULL
    };
    static const char *const reads[] = {
        "SELECT 1", "select replace(name, 'a', 'b') from t",
        "SELECT load_extension('x')", "SELECT * FROM read_text('/etc/x')",
        "WITH x AS (SELECT 1) SELECT * FROM x", "(SELECT 1) UNION SELECT 2",
        "WITH x AS (SELECT * FROM t) SELECT * FROM x FOR UPDATE",
        "WITH x AS (SELECT 1 AS update) SELECT x.update, merge FROM x",
        "VALUES (1)", "TABLE t", "FROM t", "PRAGMA table_info(t)",
        "SHOW TABLES", "DESCRIBE t", "EXPLAIN SELECT 1",
        "SELECT 'DELETE FROM t; DROP TABLE t'", "SELECT \"update\" FROM t",
        "SELECT 1;", "SELECT 1; -- DROP TABLE t", "", "SELECT 'x",
        "PIVOT sales ON month USING sum(amount)", "SUMMARIZE sales",
        "UNPIVOT t ON jan, feb INTO NAME month VALUE amount", NULL
    };

    (void)state;
    expect_changes(changes, 1);
    expect_changes(reads, 0);
}

/* A PRAGMA with an argument in parentheses sets, as "= value" does,
** unless it is one of those that read with an argument (SQLite's
** Result1 pragmas but optimize, DuckDB's table_info and storage_info). */
static void pragma_sets_by_its_name_not_its_parentheses(void **state)
{
    static const char *const changes[] = {
        "PRAGMA user_version(5)", "pragma main.user_version (5)",
        "PRAGMA journal_mode(DELETE)", "PRAGMA optimize(0x10002)",
        "PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA incremental_vacuum(10)",
        "PRAGMA foreign_keys(1)", NULL
    };
    static const char *const reads[] = {
        "PRAGMA table_info(t)", "PRAGMA main.table_xinfo(t)",
        "PRAGMA table_list(t)", "PRAGMA index_info(i)",
        "PRAGMA INDEX_XINFO(i)", "PRAGMA index_list(t)",
        "PRAGMA foreign_key_list(t)", "PRAGMA foreign_key_check(t)",
        "PRAGMA integrity_check(t)", "PRAGMA quick_check(10)",
        "PRAGMA storage_info('t')", "PRAGMA user_version", NULL
    };

    (void)state;
    expect_changes(changes, 1);
    expect_changes(reads, 0);
}

/* SQLite's pragmas that act without an argument (those its pragma table
** gives neither Result0 nor Result1 and that do something bare):
** optimize runs ANALYZE, shrink_memory frees the connection's caches,
** wal_checkpoint checkpoints the log into the file, incremental_vacuum
** empties the freelist. Those that return a value bare read, as do
** case_sensitive_like (bare: nothing) and table_info without its table. */
static void sqlite_pragma_acts_without_an_argument(void **state)
{
    static const char *const changes[] = {
        "PRAGMA optimize", "PRAGMA main.optimize;", "pragma OPTIMIZE",
        "PRAGMA shrink_memory", "PRAGMA wal_checkpoint",
        "PRAGMA main.wal_checkpoint", "PRAGMA incremental_vacuum",
        "PRAGMA \"optimize\"", "PRAGMA [shrink_memory]",
        "PRAGMA version; PRAGMA optimize", "PRAGMA optimize; SELECT 1",
        "CHECKPOINT", "FORCE CHECKPOINT", "VACUUM", "ANALYZE", NULL
    };
    static const char *const reads[] = {
        "PRAGMA wal_autocheckpoint", "PRAGMA mmap_size",
        "PRAGMA journal_mode", "PRAGMA page_count", "PRAGMA freelist_count",
        "PRAGMA data_version", "PRAGMA temp_store_directory",
        "PRAGMA analysis_limit", "PRAGMA case_sensitive_like",
        "PRAGMA integrity_check", "PRAGMA foreign_key_check",
        "PRAGMA table_info", "SELECT optimize FROM t",
        "SELECT * FROM t WHERE wal_checkpoint = 1", NULL
    };

    (void)state;
    expect_changes(changes, 1);
    expect_changes(reads, 0);
}

/* DuckDB's pragmas that act by their name alone (its pragma_functions.cpp:
** profiling, verification, the optimizer, the object cache, progress bars,
** checkpoints) change the connection or the file, as a SET does; those
** DuckDB runs as a query (pragma_queries.cpp) read. */
static void duckdb_pragma_acts_by_its_name(void **state)
{
    static const char *const changes[] = {
        "PRAGMA enable_profiling", "PRAGMA enable_profile",
        "PRAGMA disable_profiling", "pragma DISABLE_PROFILE;",
        "PRAGMA enable_progress_bar", "PRAGMA disable_progress_bar",
        "PRAGMA enable_print_progress_bar",
        "PRAGMA disable_print_progress_bar", "PRAGMA enable_optimizer",
        "PRAGMA disable_optimizer", "PRAGMA enable_object_cache",
        "PRAGMA disable_object_cache", "PRAGMA force_checkpoint",
        "PRAGMA enable_checkpoint_on_shutdown",
        "PRAGMA disable_checkpoint_on_shutdown",
        "PRAGMA enable_verification", "PRAGMA disable_verification",
        "PRAGMA verify_external", "PRAGMA disable_verify_external",
        "PRAGMA verify_fetch_row", "PRAGMA disable_verify_fetch_row",
        "PRAGMA verify_serializer", "PRAGMA disable_verify_serializer",
        "PRAGMA verify_parallelism", "PRAGMA disable_verify_parallelism",
        "PRAGMA /* now */ enable_profiling -- on",
        "SELECT 1; PRAGMA force_checkpoint",
        "PRAGMA import_database('/tmp/x')", "PRAGMA copy_database('a', 'b')",
        NULL
    };
    static const char *const reads[] = {
        "PRAGMA show_tables", "PRAGMA show_tables_expanded",
        "PRAGMA show_databases", "PRAGMA database_list",
        "PRAGMA collations", "PRAGMA version", "PRAGMA extension_versions",
        "PRAGMA platform", "PRAGMA database_size", "PRAGMA functions",
        "PRAGMA metadata_info", "PRAGMA all_profiling_output",
        "PRAGMA user_agent", "PRAGMA table_info('t')",
        "PRAGMA storage_info('t')", "PRAGMA version; SELECT 1",
        "SELECT enable_profiling FROM t", NULL
    };

    (void)state;
    expect_changes(changes, 1);
    expect_changes(reads, 0);
}

/* A pragma's name may be quoted as any name is: "..", [..], `..` and, in
** SQLite, '..' (DuckDB takes ".." only). Quoted, it is still the pragma
** it names: DuckDB's PRAGMA "enable_profiling" acts, SQLite's
** PRAGMA main."table_info"(t) reads. */
static void quoted_pragma_name_is_the_pragma_it_names(void **state)
{
    static const char *const changes[] = {
        "PRAGMA \"enable_profiling\"", "PRAGMA \"force_checkpoint\";",
        "PRAGMA [disable_optimizer]", "PRAGMA `enable_object_cache`",
        "PRAGMA \"journal_mode\" = wal", "PRAGMA main.\"user_version\"(5)",
        "PRAGMA [journal_mode](DELETE)", "PRAGMA 'foreign_keys'(1)",
        "PRAGMA main.\"optimize\"",
        "PRAGMA \"table\"\"info\"(t)", NULL
    };
    static const char *const reads[] = {
        "PRAGMA \"table_info\"(t)", "PRAGMA main.\"table_info\"(t)",
        "PRAGMA [index_list](t)", "PRAGMA `main`.`table_xinfo`(t)",
        "PRAGMA 'table_info'(t)", "PRAGMA \"storage_info\"('t')",
        "PRAGMA \"version\"",
        "PRAGMA \"user_version\"", NULL
    };

    (void)state;
    expect_changes(changes, 1);
    expect_changes(reads, 0);
}

/* SELECT ... INTO makes a table (PostgreSQL) or writes a file or a
** variable (MySQL): an INTO of the statement's own SELECT, not one inside
** parentheses, nor DuckDB's UNPIVOT ... INTO NAME. */
static void select_into_is_a_change(void **state)
{
    static const char *const changes[] = {
        "SELECT a INTO t2 FROM t", "select *\ninto new_t from t where a > 1",
        "WITH x AS (SELECT 1 AS a) SELECT * INTO t2 FROM x",
        "SELECT a FROM t INTO OUTFILE '/tmp/x'",
        "SELECT count(*) INTO @n FROM t", "(SELECT 1 AS a INTO t2)",
        "SELECT 1 UNION SELECT 2 INTO t3", NULL
    };
    static const char *const reads[] = {
        "SELECT * FROM (UNPIVOT t ON a, b INTO NAME k VALUE v) u",
        "WITH x AS (SELECT 1) UNPIVOT t ON a, b INTO NAME k VALUE v",
        "WITH u AS (UNPIVOT t ON a INTO NAME k VALUE v) SELECT * FROM u",
        "SELECT 'INTO t' AS into_x, \"into\" FROM t", NULL
    };

    (void)state;
    expect_changes(changes, 1);
    expect_changes(reads, 0);
}

/* In a WITH, INSERT, UPDATE, DELETE or MERGE is a statement when it opens
** a CTE's body ("AS (", "AS MATERIALIZED (") or follows one (the main
** statement); after any other parenthesis it is a name. */
static void with_changes_only_in_a_cte_body_or_after_one(void **state)
{
    static const char *const changes[] = {
        "WITH d AS MATERIALIZED (DELETE FROM t RETURNING *) SELECT * FROM d",
        "WITH d AS NOT MATERIALIZED (update t set a = 1 returning a) "
        "SELECT * FROM d",
        "WITH x(a) AS (SELECT 1), y AS (SELECT 2) MERGE INTO t USING x "
        "ON true WHEN MATCHED THEN DELETE", NULL
    };
    static const char *const reads[] = {
        "WITH x AS (SELECT 1) SELECT (update) FROM t",
        "WITH x AS (SELECT 1) SELECT * FROM t WHERE (delete) > 0",
        "WITH x AS (SELECT (insert) FROM t) SELECT count(*) merge FROM x",
        "WITH x(update) AS (SELECT 1) SELECT * FROM x", NULL
    };

    (void)state;
    expect_changes(changes, 1);
    expect_changes(reads, 0);
}

/* "Answer:\nWITH t (a<pad blanks>) AS (select 1) select * from t": a CTE
** head of 9 + pad bytes after WITH, malloc()ed. */
static char *prose_cte(size_t pad)
{
    const char *pre = "Answer:\nWITH t (a", *post = ") AS (select 1) "
                                                    "select * from t";
    size_t a = strlen(pre), b = strlen(post);
    char *s = malloc(a + pad + b + 1);

    assert_non_null(s);
    memcpy(s, pre, a);
    memset(s + a, ' ', pad);
    memcpy(s + a + pad, post, b + 1);
    return s;
}

/* A WITH in prose is a CTE when its head ends within SQLX_CTE_HEAD_MAX
** bytes: each WITH reads a bounded part of the reply, so the look stays
** linear. Past the bound the WITH is a word of prose (and the lower-case
** selects after it start no statement). */
static void cte_head_is_read_within_a_bound(void **state)
{
    char *within = prose_cte(SQLX_CTE_HEAD_MAX - 10);
    char *past = prose_cte(SQLX_CTE_HEAD_MAX + 100);

    (void)state;
    expect_sql(within, strstr(within, "WITH"));
    expect_none(past);
    free(within);
    free(past);
}

/* The look into a fenced block reads that block only: a comment it leaves
** open does not run on past its fence to a statement in the prose after
** it (the block then looked like SQL, and its "/" "* a" was taken). */
static void fenced_block_is_read_up_to_its_fence(void **state)
{
    (void)state;
    expect_sql("```\n/* a\n```\nThen */ SELECT 1\n", "SELECT 1");
    expect_sql("```text\n[note\n```\nThen ] SELECT 2\n", "SELECT 2");
}

/* A fence inside a quoted string or name on its own line is the
** statement's text (the block ended there: "SELECT '" was taken); one
** in a quote closed only on a later line, or left open, ends the block. */
static void fence_inside_a_string_is_text(void **state)
{
    (void)state;
    expect_sql("```sql\nSELECT '```' AS mark\n```\nDone.",
               "SELECT '```' AS mark");
    expect_sql("```sql\nSELECT \"a```b\", 'x ``` y' FROM t\n```",
               "SELECT \"a```b\", 'x ``` y' FROM t");
    expect_sql("```sql\nSELECT 'it' FROM t```\nHere's why.",
               "SELECT 'it' FROM t");
    expect_sql("```sql\nSELECT 'it\n```\nHere's why.", "SELECT 'it");
    expect_sql("```sql\nSELECT 'a' || '```\n```\nok", "SELECT 'a' || '");
}

/* s (len + 1 bytes) as pre followed by unit again and again. */
static void fill(char *s, size_t len, const char *pre, const char *unit)
{
    size_t a = strlen(pre), u = strlen(unit), k;

    memcpy(s, pre, a);
    for (k = a; k + u <= len; k += u)
        memcpy(s + k, unit, u);
    s[k] = '\0';
}

/* After a word of prose, "WITH" and an open comment, an open bracket or
** a column list never closed, again and again; fenced blocks that each
** open a comment or a bracket; "</think>" inside lines. Each WITH and
** each block read at most a bounded part of the text (they read all the
** rest of it before: 100 KB took 0.3 to 0.8 s, 400 KB 16 times as long),
** and the searches that go on from each find stop at the text's end
** measured once. No statement is found in any. */
static void pathological_replies_give_no_statement(void **state)
{
    static const char *const units[] = {
        "WITH /" "* ", "WITH --", "WITH [", "WITH x (", "\nwith x (",
        "```x\n[", "```x\n/" "* ", "x</think>", NULL
    };
    size_t len = 400000;
    char *s = malloc(len + 1);
    int i;

    (void)state;
    assert_non_null(s);
    for (i = 0; units[i]; i++) {
        fill(s, len, "Answer: ", units[i]);
        expect_none(s);
    }
    free(s);
}

static double seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Comments again and again, each scanned once (in the sanitizer builds,
** where the unit tests run, strstr() measured all the rest of the text at
** each: 100 KB took 0.8 s, these 400 KB some 30 s; now milliseconds, so
** the limit of 5 s is generous); a comment left open, all stars, is the
** rest of the text. */
static void many_comments_are_read_once(void **state)
{
    size_t len = 400000;
    char *s = malloc(len + 1), why[128];
    double t0 = seconds();
    int kind;

    (void)state;
    assert_non_null(s);
    fill(s, len, "SELECT 1 ", "/**/");
    assert_int_equal(sqlx_check_readonly(s, why, sizeof why), 0);
    assert_int_equal(sqlx_changes(s), 0);
    if (seconds() - t0 > 5)
        fail_msg("400 KB of comments took %.1f s", seconds() - t0);
    fill(s, len, "SELECT 1 /" "* ", "*");
    assert_int_equal(sqlx_check_readonly(s, why, sizeof why), -1);
    assert_int_equal(sqlx_token(s + 9, &kind), len - 9);
    assert_int_equal(kind, SQLX_UNTERMINATED);
    free(s);
}

static void tokenizer_handles_quotes_and_comments(void **state)
{
    int kind;

    (void)state;
    assert_int_equal(sqlx_token("'it''s' x", &kind), 7);
    assert_int_equal(kind, SQLX_STRING);
    assert_int_equal(sqlx_token("[a b] x", &kind), 5);
    assert_int_equal(kind, SQLX_IDENT);
    assert_int_equal(sqlx_token("`a` x", &kind), 3);
    assert_int_equal(sqlx_token("/* c */x", &kind), 7);
    assert_int_equal(kind, SQLX_COMMENT);
    assert_int_equal(sqlx_token("1.5e-3+", &kind), 6);
    assert_int_equal(kind, SQLX_NUMBER);
    sqlx_token("'open", &kind);
    assert_int_equal(kind, SQLX_UNTERMINATED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(takes_sql_fenced_block),
        cmocka_unit_test(fence_inside_a_string_is_text),
        cmocka_unit_test(skips_a_reasoning_models_thoughts),
        cmocka_unit_test(takes_tilde_fences_and_json_objects),
        cmocka_unit_test(unicode_separator_does_not_hide_a_second_statement),
        cmocka_unit_test(skips_fenced_blocks_without_a_query),
        cmocka_unit_test(takes_bare_statement_and_drops_trailing_prose),
        cmocka_unit_test(prose_with_quotes_or_sql_words_is_not_sql),
        cmocka_unit_test(keeps_semicolons_inside_strings),
        cmocka_unit_test(unterminated_fence_takes_the_rest),
        cmocka_unit_test(write_statements_are_extracted_for_refusal),
        cmocka_unit_test(reply_without_sql_gives_null),
        cmocka_unit_test(second_statement_in_fence_is_kept_for_the_guard),
        cmocka_unit_test(check_accepts_queries_only),
        cmocka_unit_test(changes_are_told_from_reads),
        cmocka_unit_test(pragma_sets_by_its_name_not_its_parentheses),
        cmocka_unit_test(sqlite_pragma_acts_without_an_argument),
        cmocka_unit_test(duckdb_pragma_acts_by_its_name),
        cmocka_unit_test(quoted_pragma_name_is_the_pragma_it_names),
        cmocka_unit_test(select_into_is_a_change),
        cmocka_unit_test(with_changes_only_in_a_cte_body_or_after_one),
        cmocka_unit_test(cte_head_is_read_within_a_bound),
        cmocka_unit_test(fenced_block_is_read_up_to_its_fence),
        cmocka_unit_test(pathological_replies_give_no_statement),
        cmocka_unit_test(many_comments_are_read_once),
        cmocka_unit_test(tokenizer_handles_quotes_and_comments),
    };
    test_filter_from_env();
    return cmocka_run_group_tests_name("extract", tests, NULL, NULL);
}
