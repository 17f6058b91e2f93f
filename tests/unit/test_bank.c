/* test_bank.c - the built-in example bank: masking, search, what it holds. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/bank.h"
#include "db/db.h"

static void mask_is(const char *q, const char *const *names, const char *want)
{
    char *m = bank_mask(q, names);

    assert_non_null(m);
    if (strcmp(m, want) != 0)
        fail_msg("mask of \"%s\":\n  got  \"%s\"\n  want \"%s\"", q, m, want);
    free(m);
}

/* Names (by stem, split at '_' and camelCase), numbers, quoted and
** capitalized words are masked; grammar words stay, as stems; a run of the
** same mark is one. */
static void names_and_values_are_masked(void **state)
{
    static const char *const dept[] = {"head", "department", "age",
                                       "born_state", "Name", NULL};
    static const char *const singer[] = {"singer", "Country", "songName",
                                         NULL};

    (void)state;
    mask_is("How many heads of the departments are older than 56?", dept,
            "how mani <n> of the <n> are older than <v>");
    mask_is("List the name, born state and age of the heads", dept,
            "list the <n> and <n> of the <n>");
    mask_is("Which singers are from \"New York\" or 'Paris'?", singer,
            "which <n> are from <v> or <v>");
    mask_is("Show the song names of singers from France.", singer,
            "show the <n> of <n> from <v>");
    mask_is("What is the singer's country?", singer,
            "what is the <n>");
    mask_is("Count the rows with 3.5 or 1,200 points", NULL,
            "count the row with <v> or <v> point");
    mask_is("", dept, "");
    mask_is("?! -- '", dept, "");
}

/* Every pair of the bank is from a training database outside the
** validation split (issue 17), and the built-in bank is data/bank.tsv's. */
static void bank_holds_no_validation_database(void **state)
{
    FILE *f = fopen("bench/validation_dbs.txt", "r"), *b;
    char line[8192], held[64][128];
    int nheld = 0, nq = 0, ndb = 0, i;

    (void)state;
    if (!f)
        skip(); /* run from elsewhere than the tree's root */
    while (fgets(line, sizeof line, f) && nheld < 64)
        if (line[0] != '#' && line[0] != '\n') {
            line[strcspn(line, "\n")] = '\0';
            snprintf(held[nheld++], sizeof held[0], "%.127s", line);
        }
    fclose(f);
    assert_int_equal(nheld, 20);
    b = fopen("data/bank.tsv", "r");
    assert_non_null(b);
    while (fgets(line, sizeof line, b)) {
        if (strncmp(line, "Q\t", 2) == 0)
            nq++;
        if (strncmp(line, "D\t", 2) != 0)
            continue;
        ndb++;
        for (i = 0; i < nheld; i++) {
            size_t n = strlen(held[i]);
            if (strncmp(line + 2, held[i], n) == 0 && line[2 + n] == '\t')
                fail_msg("the bank holds %s of the validation split",
                         held[i]);
        }
    }
    fclose(b);
    assert_true(ndb > 100);
    /* pairs with long SQL are left out when the bank is read */
    assert_true(bank_size() > nq * 9 / 10);
    assert_true(bank_size() <= nq);
}

/* The closest pairs share the question's form, not its words; the asked
** database's own pairs are left out; k is capped. */
static void similar_questions_share_their_form(void **state)
{
    struct bank_pick p[BANK_MAX];
    const struct db_schema *s;
    char path[1024];
    askdb_db *db;
    int n = -1, i;

    (void)state;
    db = testdb_open(testdb_shop(), NULL, &s);
    assert_int_equal(bank_similar(s, NULL, "What are the names of customers "
                                  "whose country is not Germany?", 3, p, &n),
                     0);
    assert_int_equal(n, 3);
    for (i = 0; i < n; i++) {
        assert_non_null(strstr(p[i].question, "whose"));
        assert_true(strstr(p[i].sql, "!=") || strstr(p[i].sql, "<>") ||
                    strstr(p[i].sql, "NOT") || strstr(p[i].sql, "not"));
        assert_true(p[i].score > 0 && p[i].score <= 1.0 + 1e-9);
        if (i)
            assert_true(p[i - 1].score >= p[i].score - 0.5);
    }
    /* a bank question asked verbatim of its own database is not shown */
    assert_int_equal(bank_similar(s, NULL, p[0].question, 1, p, &n), 0);
    assert_int_equal(n, 1);
    {
        char own[256], q[1024];
        snprintf(own, sizeof own, "%s", p[0].db);
        snprintf(q, sizeof q, "%s", p[0].question);
        assert_int_equal(bank_similar(s, own, q, BANK_MAX + 5, p, &n), 0);
        assert_int_equal(n, BANK_MAX);
        for (i = 0; i < n; i++)
            assert_string_not_equal(p[i].db, own);
    }
    assert_int_equal(bank_similar(s, NULL, "How many?", 0, p, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(bank_similar(s, NULL, "?!", 3, p, &n), 0);
    assert_int_equal(n, 0);
    askdb_db_close(db);

    /* a Spider database of the validation split: its own names masked */
    testdb_spider("gymnast", path, sizeof path);
    db = testdb_open(path, NULL, &s);
    assert_int_equal(bank_similar(s, "gymnast", "What are the names of "
                                  "gymnasts whose hometown is not Santo "
                                  "Domingo?", 2, p, &n), 0);
    assert_int_equal(n, 2);
    assert_true(p[0].score > 0.8);
    askdb_db_close(db);
}

/* The prompt part: a heading, then each pair's question and SQL. */
static void render_lists_question_and_sql(void **state)
{
    struct bank_pick p[2] = {{"a", "How many x?", "SELECT count(*) FROM x", 1},
                             {"b", "Name y.", "SELECT name FROM y", 0.5}};
    struct buf b;
    char *text;

    (void)state;
    buf_init(&b, 0);
    bank_render(&b, p, 0);
    buf_puts(&b, "");
    text = buf_steal(&b);
    assert_string_equal(text, "");
    free(text);
    buf_init(&b, 0);
    bank_render(&b, p, 2);
    text = buf_steal(&b);
    assert_string_equal(text,
                        "Examples from other databases (their tables are "
                        "not this one's):\n"
                        "Q: How many x?\nSQL: SELECT count(*) FROM x\n"
                        "Q: Name y.\nSQL: SELECT name FROM y\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_values_are_masked),
        cmocka_unit_test(bank_holds_no_validation_database),
        cmocka_unit_test(similar_questions_share_their_form),
        cmocka_unit_test(render_lists_question_and_sql),
    };
    test_filter_from_env();

    return cmocka_run_group_tests(tests, NULL, NULL);
}
