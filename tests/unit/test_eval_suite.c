/* test_eval_suite.c - suites, sampling, records, summary and report pieces. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "eval/record.h"
#include "eval/report.h"
#include "eval/suite.h"
#include "eval/summary.h"

/* Write text to a fresh temp file; returns its malloc()ed path. */
static char *temp_file(const char *text)
{
    char path[128], *p;

    assert_int_equal(tmpfile_make(path, sizeof path, "suite"), 0);
    assert_int_equal(file_write(path, text, strlen(text)), 0);
    p = strdup(path);
    assert_non_null(p);
    return p;
}

static void splitmix64_matches_reference_values(void **state)
{
    uint64_t st = 0;

    (void)state;
    /* The published splitmix64 sequence for seed 0. */
    assert_true(suite_splitmix64(&st) == 0xe220a8397b1dcdafULL);
    assert_true(suite_splitmix64(&st) == 0x6e789e6aa1b965f4ULL);
    assert_true(suite_splitmix64(&st) == 0x06c45d188009454fULL);
}

static void sample_is_reproducible(void **state)
{
    long a[5], b[5];
    long want1[3] = {2, 3, 4}, want2[5] = {2360, 3212, 4863, 6243, 6540};
    long want3[4] = {1, 2, 6, 11};

    (void)state;
    /* Expected values come from an independent Python implementation of
    ** the algorithm in docs/eval.md. */
    assert_int_equal(suite_sample(10, 3, 42, a), 0);
    assert_memory_equal(a, want1, sizeof want1);
    assert_int_equal(suite_sample(6901, 5, 2024, a), 0);
    assert_memory_equal(a, want2, sizeof want2);
    assert_int_equal(suite_sample(13, 4, 7, b), 0);
    assert_memory_equal(b, want3, sizeof want3);
    assert_int_equal(suite_sample(6901, 5, 2024, b), 0);
    assert_memory_equal(a, b, 5 * sizeof *a);
}

static void loads_spider_and_computes_hardness(void **state)
{
    char *p = temp_file(
        "[{\"db_id\": \"farm\", \"question\": \"How many farms?\", "
        "\"query\": \"SELECT count(*) FROM farm\"},\n"
        " {\"db_id\": \"farm\", \"question\": \"No gold\"},\n"
        " {\"db_id\": \"city\", \"question\": \"Q\", \"query\": \"SELECT a "
        "FROM t WHERE x IN (SELECT y FROM u)\"}]");
    struct suite s;
    char err[256];

    (void)state;
    assert_int_equal(suite_load(p, "/data", &s, err, sizeof err), ASKDB_OK);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.items[0].db_path, "/data/farm/farm.sqlite");
    assert_string_equal(s.items[0].difficulty, "easy");
    assert_null(s.items[0].hint);
    assert_null(s.items[0].malformed);
    assert_non_null(s.items[1].malformed); /* kept, not dropped */
    assert_int_equal(s.items[1].index, 1);
    assert_string_equal(s.items[2].difficulty, "hard");
    suite_free(&s);
    /* db_id without --db-root cannot be resolved */
    assert_int_equal(suite_load(p, NULL, &s, err, sizeof err),
                     ASKDB_ERR_USAGE);
    assert_non_null(strstr(err, "--db-root"));
    unlink(p);
    free(p);
}

static void loads_spider_from_its_own_layout(void **state)
{
    static const char train[] =
        "[{\"db_id\": \"farm\", \"question\": \"How many farms?\", "
        "\"query\": \"SELECT count(*) FROM farm\"},\n"
        " {\"db_id\": \"city\", \"question\": \"No gold\"}]";
    char dir[128], path[256], want[256], err[256];
    struct suite s;

    (void)state;
    assert_int_equal(tmpdir_make(dir, sizeof dir, "spider"), 0);
    assert_int_not_equal(suite_load_spider(dir, &s, err, sizeof err),
                         ASKDB_OK);
    assert_non_null(strstr(err, "train.json"));
    snprintf(path, sizeof path, "%s/train.json", dir);
    assert_int_equal(file_write(path, train, strlen(train)), 0);
    assert_int_equal(suite_load_spider(dir, &s, err, sizeof err), ASKDB_OK);
    assert_int_equal(s.n, 2);
    snprintf(want, sizeof want, "%s/database/farm/farm.sqlite", dir);
    assert_string_equal(s.items[0].db_path, want);
    assert_string_equal(s.items[0].question, "How many farms?");
    assert_string_equal(s.items[0].gold, "SELECT count(*) FROM farm");
    assert_null(s.items[0].malformed);
    assert_string_equal(s.items[1].db_id, "city");
    assert_non_null(s.items[1].malformed);
    suite_free(&s);
    assert_int_equal(tmpdir_remove(dir), 0);
}

static void loads_bird_with_evidence_and_difficulty(void **state)
{
    char *p = temp_file(
        "[{\"question_id\": 0, \"db_id\": \"bank\", \"question\": \"Rich "
        "clients?\", \"evidence\": \"rich means balance > 1e6\", \"SQL\": "
        "\"SELECT id FROM client WHERE balance > 1e6\", \"difficulty\": "
        "\"simple\"}]");
    struct suite s;
    char err[256];

    (void)state;
    assert_int_equal(suite_load(p, "db", &s, err, sizeof err), ASKDB_OK);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.items[0].hint, "rich means balance > 1e6");
    assert_string_equal(s.items[0].difficulty, "simple");
    assert_string_equal(s.items[0].gold,
                        "SELECT id FROM client WHERE balance > 1e6");
    assert_string_equal(s.items[0].db_path, "db/bank/bank.sqlite");
    suite_free(&s);
    unlink(p);
    free(p);
}

static void loads_json_lines_relative_to_the_suite(void **state)
{
    char *p = temp_file(
        "{\"db\": \"dbs/shop.db\", \"question\": \"Q1\", \"gold\": \"SELECT "
        "1\"}\n"
        "\n"
        "this line is not json\n"
        "{\"db\": \"/abs/x.sqlite\", \"db_id\": \"x\", \"question\": \"Q2\", "
        "\"gold\": \"SELECT 2\", \"hint\": \"h\"}\n");
    struct suite s;
    char err[256];

    (void)state;
    assert_int_equal(suite_load(p, NULL, &s, err, sizeof err), ASKDB_OK);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.items[0].db_path, "/tmp/dbs/shop.db");
    assert_string_equal(s.items[0].db_id, "shop");
    assert_non_null(s.items[1].malformed);
    assert_string_equal(s.items[2].db_path, "/abs/x.sqlite");
    assert_string_equal(s.items[2].db_id, "x");
    assert_string_equal(s.items[2].hint, "h");
    suite_free(&s);
    unlink(p);
    free(p);
}

/*
** An entry that is JSON but no object (a bare 42, a string, an array) is
** malformed with that reason, named "?" with difficulty "?" like a line
** that is not JSON. Before, a JSON-lines 42 was "not valid JSON", and an
** array's [1] came out with no name and no difficulty ("db": null,
** "difficulty": null in the results, "?" for every other bad item).
*/
static void entries_that_are_no_object_say_so(void **state)
{
    static const char *const suites[] = {
        "42\n\"text\"\n[1]\nnull\n",
        "[42, \"text\", [1], null]",
    };
    struct suite s;
    char err[256], *p;
    size_t k;
    long i;

    (void)state;
    for (k = 0; k < sizeof suites / sizeof *suites; k++) {
        p = temp_file(suites[k]);
        assert_int_equal(suite_load(p, NULL, &s, err, sizeof err), ASKDB_OK);
        assert_int_equal(s.n, 4);
        for (i = 0; i < s.n; i++) {
            assert_string_equal(s.items[i].malformed,
                                "entry is not a JSON object");
            assert_string_equal(s.items[i].db_id, "?");
            assert_string_equal(s.items[i].difficulty, "?");
        }
        suite_free(&s);
        unlink(p);
        free(p);
    }
}

/*
** JSON-lines databases are told apart by their files: two files of one
** name in different folders (v1/shop.db, v2/shop.db) are two databases
** for --per-db and --sample-dbs, and are named by their paths as given in
** the summary, the report and --db. Before, both were "shop": --per-db 1
** kept one item of the two databases, and the summary added them up.
*/
static void json_lines_files_of_one_name_are_two_databases(void **state)
{
    char *p = temp_file(
        "{\"db\": \"v1/shop.db\", \"question\": \"Q0\", \"gold\": \"SELECT 0\"}\n"
        "{\"db\": \"v2/shop.db\", \"question\": \"Q1\", \"gold\": \"SELECT 1\"}\n"
        "{\"db\": \"v1/shop.db\", \"question\": \"Q2\", \"gold\": \"SELECT 2\"}\n"
        "{\"db\": \"v2/shop.db\", \"question\": \"Q3\", \"gold\": \"SELECT 3\"}\n"
        "{\"db\": \"other/x.db\", \"question\": \"Q4\", \"gold\": \"SELECT 4\"}\n"
        "{\"db\": \"v3/shop.db\", \"db_id\": \"mine\", \"question\": \"Q5\", "
        "\"gold\": \"SELECT 5\"}\n");
    struct suite s;
    struct suite_pick pk;
    char err[256];
    long *sel, n;

    (void)state;
    assert_int_equal(suite_load(p, NULL, &s, err, sizeof err), ASKDB_OK);
    assert_int_equal(s.n, 6);
    assert_string_equal(s.items[0].db_id, "v1/shop.db");
    assert_string_equal(s.items[1].db_id, "v2/shop.db");
    assert_string_equal(s.items[2].db_id, "v1/shop.db");
    assert_string_equal(s.items[3].db_id, "v2/shop.db");
    assert_string_equal(s.items[4].db_id, "x");    /* one file: its stem */
    assert_string_equal(s.items[5].db_id, "mine"); /* given: kept */
    memset(&pk, 0, sizeof pk);
    pk.per_db = 1;
    assert_int_equal(suite_pick(&s, &pk, &sel, &n), 0);
    assert_int_equal(n, 4);
    free(sel);
    assert_int_equal(suite_select(&s, "v2/shop.db", 0, 0, 0, &sel, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(sel[0], 1);
    assert_int_equal(sel[1], 3);
    free(sel);
    suite_free(&s);
    unlink(p);
    free(p);
}

static void selects_by_db_then_sample_then_limit(void **state)
{
    char *p = temp_file(
        "[{\"db_id\":\"a\",\"question\":\"0\",\"query\":\"SELECT 0\"},"
        "{\"db_id\":\"b\",\"question\":\"1\",\"query\":\"SELECT 1\"},"
        "{\"db_id\":\"a\",\"question\":\"2\",\"query\":\"SELECT 2\"},"
        "{\"db_id\":\"c\",\"question\":\"3\",\"query\":\"SELECT 3\"},"
        "{\"db_id\":\"a\",\"question\":\"4\",\"query\":\"SELECT 4\"}]");
    struct suite s;
    char err[256];
    long *sel, n;

    (void)state;
    assert_int_equal(suite_load(p, "r", &s, err, sizeof err), ASKDB_OK);
    assert_int_equal(suite_select(&s, "a,c", 0, 0, 0, &sel, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(sel[0], 0);
    assert_int_equal(sel[1], 2);
    assert_int_equal(sel[2], 3);
    assert_int_equal(sel[3], 4);
    free(sel);
    /* Written with spaces, as a person lists names ("a, c"): the same.
    ** The space was part of the name, and " c" selected nothing. */
    assert_int_equal(suite_select(&s, " a ,\tc ", 0, 0, 0, &sel, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(sel[2], 3);
    free(sel);
    assert_int_equal(suite_select(&s, NULL, 0, 0, 2, &sel, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(sel[1], 1);
    free(sel);
    /* A sample is a subset in suite order, the same every time. */
    assert_int_equal(suite_select(&s, NULL, 3, 9, 0, &sel, &n), 0);
    assert_int_equal(n, 3);
    assert_true(sel[0] < sel[1] && sel[1] < sel[2]);
    free(sel);
    suite_free(&s);
    unlink(p);
    free(p);
}

static void grouped_sampling_keeps_few_databases(void **state)
{
    /* 4 databases (a..d) with 6, 3, 1 and 4 items, interleaved. */
    static const char dbs[] = "abacabdadaddab";
    struct buf b;
    struct suite s;
    struct suite_pick pk;
    char err[256], *p;
    long *sel, *sel2, n, n2, i, per[4];
    size_t k;

    (void)state;
    buf_init(&b, 0);
    buf_putc(&b, '[');
    for (k = 0; dbs[k]; k++)
        buf_printf(&b, "%s{\"db_id\":\"%c\",\"question\":\"%zu\","
                       "\"query\":\"SELECT 1\"}", k ? "," : "", dbs[k], k);
    buf_putc(&b, ']');
    p = temp_file(b.data);
    buf_free(&b);
    assert_int_equal(suite_load(p, "r", &s, err, sizeof err), ASKDB_OK);
    memset(&pk, 0, sizeof pk);
    pk.sample_dbs = 2;
    pk.per_db = 2;
    pk.seed = 11;
    assert_int_equal(suite_pick(&s, &pk, &sel, &n), 0);
    memset(per, 0, sizeof per);
    for (i = 0; i < n; i++) {
        assert_true(i == 0 || sel[i - 1] < sel[i]); /* suite order */
        per[s.items[sel[i]].db_id[0] - 'a']++;
    }
    /* two databases, at most two items of each */
    for (i = 0, k = 0; i < 4; i++) {
        assert_true(per[i] <= 2);
        k += per[i] > 0;
    }
    assert_int_equal(k, 2);
    /* the same every time */
    assert_int_equal(suite_pick(&s, &pk, &sel2, &n2), 0);
    assert_int_equal(n2, n);
    assert_memory_equal(sel, sel2, (size_t)n * sizeof *sel);
    free(sel2);
    free(sel);
    /* per_db alone: every database, capped; c has only one item */
    pk.sample_dbs = 0;
    pk.per_db = 3;
    assert_int_equal(suite_pick(&s, &pk, &sel, &n), 0);
    assert_int_equal(n, 3 + 3 + 1 + 3);
    free(sel);
    /* then --sample and --limit apply to what is left */
    pk.sample = 4;
    pk.limit = 3;
    assert_int_equal(suite_pick(&s, &pk, &sel, &n), 0);
    assert_int_equal(n, 3);
    free(sel);
    suite_free(&s);
    unlink(p);
    free(p);
}

static void record_text_is_always_valid_utf8(void **state)
{
    char *cols[] = {"caf\xe9"};
    askdb_value cells[] = {
        {.type = ASKDB_TEXT, .s = "ok \xc3\xa9", .len = 5},
        {.type = ASKDB_TEXT, .s = "a\xff" "b\xc3", .len = 4},
        {.type = ASKDB_TEXT, .s = "x\0y", .len = 3},
    };
    askdb_result r = {.ncols = 1, .cols = cols, .nrows = 3, .cells = cells};
    struct suite_item it = {.db_id = "d", .question = "M\xe9xico?",
                            .gold = "SELECT 1", .difficulty = "easy"};
    json_t *v;

    (void)state;
    v = rec_result(&r, 10);
    assert_non_null(v);
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(v, "columns"), 0)),
        "caf\xef\xbf\xbd");
    assert_string_equal(json_string_value(json_array_get(
                            json_array_get(json_object_get(v, "rows"), 0), 0)),
                        "ok \xc3\xa9");
    assert_string_equal(json_string_value(json_array_get(
                            json_array_get(json_object_get(v, "rows"), 1), 0)),
                        "a\xef\xbf\xbd" "b\xef\xbf\xbd");
    assert_string_equal(json_string_value(json_array_get(
                            json_array_get(json_object_get(v, "rows"), 2), 0)),
                        "x\xef\xbf\xbdy");
    json_decref(v);
    v = rec_new(&it);
    assert_non_null(v);
    assert_string_equal(jsonx_str(v, "question"), "M\xef\xbf\xbdxico?");
    json_decref(v);
}

static void html_escapes_untrusted_text(void **state)
{
    struct buf b;
    const char *labels[] = {"<b>&"};
    double vals[] = {50};

    (void)state;
    buf_init(&b, 0);
    report_escape(&b, "<script>alert(\"x\")</script> & 'y'");
    assert_string_equal(b.data, "&lt;script&gt;alert(&quot;x&quot;)&lt;/"
                                "script&gt; &amp; &#39;y&#39;");
    buf_reset(&b);
    report_svg_bars(&b, "t<", labels, vals, 1, 100, 1, "%");
    assert_non_null(strstr(b.data, "&lt;b&gt;&amp;"));
    assert_non_null(strstr(b.data, "50.0%"));
    assert_null(strstr(b.data, "<b>"));
    buf_free(&b);
}

static void percentiles_by_nearest_rank(void **state)
{
    double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

    (void)state;
    assert_true(summary_percentile(v, 10, 50) == 5);
    assert_true(summary_percentile(v, 10, 90) == 9);
    assert_true(summary_percentile(v, 10, 100) == 10);
    assert_true(summary_percentile(v, 1, 90) == 1);
    assert_true(summary_percentile(v, 0, 50) == 0);
}

static void summary_counts_bad_items_apart(void **state)
{
    json_t *recs[4];
    struct summary s;
    struct buf b;

    (void)state;
    recs[0] = json_pack("{s:s, s:s, s:b, s:i, s:{s:f}}", "db", "a",
                        "difficulty", "easy", "correct", 1, "attempts", 1,
                        "ms", "total", 10.0);
    recs[1] = json_pack("{s:s, s:s, s:b, s:s, s:i, s:{s:f}}", "db", "a",
                        "difficulty", "hard", "correct", 0, "class",
                        "syntax", "attempts", 3, "ms", "total", 30.0);
    recs[2] = json_pack("{s:s, s:s, s:s}", "db", "b", "difficulty", "easy",
                        "bad", "gold_error");
    recs[3] = NULL; /* not run */
    assert_int_equal(summary_compute(recs, 4, &s), 0);
    assert_int_equal(s.selected, 4);
    assert_int_equal(s.done, 3);
    assert_int_equal(s.evaluated, 2);
    assert_int_equal(s.correct, 1);
    assert_int_equal(s.bad, 1);
    assert_int_equal(s.repaired, 1);
    assert_true(s.p50 == 10 && s.p90 == 30);
    buf_init(&b, 0);
    summary_text(&b, &s);
    assert_non_null(strstr(b.data, "EX 1/2 = 50.0% (4 selected, 1 bad "
                                    "item, 1 not run)\n"));
    assert_non_null(strstr(b.data, "repair rate: 50.0% (1 of 2 needed a "
                                    "repair, 0 of them correct)\n"));
    assert_non_null(strstr(b.data, "  syntax       1\n"));
    assert_non_null(strstr(b.data, "  gold_error     1\n"));
    buf_free(&b);
    summary_free(&s);
    json_decref(recs[0]);
    json_decref(recs[1]);
    json_decref(recs[2]);
}

/* A rate as the summary, the report and the progress line write it: one
** decimal, and n/a when nothing was scored (no 0%). */
static void rates_have_one_decimal_or_are_n_a(void **state)
{
    char v[8];

    (void)state;
    assert_string_equal(askdb_eval_pct_text(1, 2, v, sizeof v), "50.0%");
    assert_string_equal(askdb_eval_pct_text(2, 3, v, sizeof v), "66.7%");
    assert_string_equal(askdb_eval_pct_text(7, 7, v, sizeof v), "100.0%");
    assert_string_equal(askdb_eval_pct_text(0, 5, v, sizeof v), "0.0%");
    assert_string_equal(askdb_eval_pct_text(0, 0, v, sizeof v), "n/a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(splitmix64_matches_reference_values),
        cmocka_unit_test(sample_is_reproducible),
        cmocka_unit_test(loads_spider_and_computes_hardness),
        cmocka_unit_test(loads_spider_from_its_own_layout),
        cmocka_unit_test(loads_bird_with_evidence_and_difficulty),
        cmocka_unit_test(loads_json_lines_relative_to_the_suite),
        cmocka_unit_test(json_lines_files_of_one_name_are_two_databases),
        cmocka_unit_test(entries_that_are_no_object_say_so),
        cmocka_unit_test(selects_by_db_then_sample_then_limit),
        cmocka_unit_test(grouped_sampling_keeps_few_databases),
        cmocka_unit_test(record_text_is_always_valid_utf8),
        cmocka_unit_test(html_escapes_untrusted_text),
        cmocka_unit_test(percentiles_by_nearest_rank),
        cmocka_unit_test(summary_counts_bad_items_apart),
        cmocka_unit_test(rates_have_one_decimal_or_are_n_a),
    };
    test_filter_from_env();

    return cmocka_run_group_tests(tests, NULL, NULL);
}
