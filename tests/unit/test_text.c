/* test_text.c - valid UTF-8: validation, cutting, repair; quoting; URLs
** (core/text.c). */
#include "testutil.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"

static void valid_utf8_is_told_from_invalid(void **state)
{
    static const char *const bad[] = {
        "caf\xe9",              /* Latin-1 */
        "\xc3",                 /* cut short */
        "\xc0\xaf",             /* overlong */
        "\xed\xa0\x80",         /* surrogate */
        "\xf4\x90\x80\x80",     /* past U+10FFFF */
        "\x80x",                /* stray continuation byte */
        NULL
    };
    int i;

    (void)state;
    assert_true(text_valid("", 0));
    assert_true(text_valid("Zo\xc3\xab \xe2\x80\x93 \xf0\x9f\x98\x80", 13));
    for (i = 0; bad[i]; i++)
        if (text_valid(bad[i], strlen(bad[i])))
            fail_msg("taken as valid: case %d", i);
    assert_false(text_valid("a\0b", 3)); /* a NUL ends a C string */
}

static void char_len_counts_whole_characters_only(void **state)
{
    (void)state;
    assert_int_equal(text_char_len("a", 1, 0), 1);
    assert_int_equal(text_char_len("\xc3\xa9", 2, 0), 2);
    assert_int_equal(text_char_len("\xe2\x80\x93", 3, 0), 3);
    assert_int_equal(text_char_len("\xf0\x9f\x98\x80", 4, 0), 4);
    assert_int_equal(text_char_len("\xe2\x80\x93", 2, 0), 0); /* cut */
    assert_int_equal(text_char_len("\xa9", 1, 0), 0);
    assert_int_equal(text_char_len("\xf5\x80\x80\x80", 4, 0), 0);
    assert_int_equal(text_char_len("", 1, 0), 0);   /* NUL ... */
    assert_int_equal(text_char_len("", 1, 1), 1);   /* ... kept on request */
}

static void cut_falls_between_characters(void **state)
{
    const char *s = "ab\xc3\xa9\xe2\x80\x93"; /* a b é – : 7 bytes */

    (void)state;
    assert_int_equal(text_cut(s, 7, 10), 7);
    assert_int_equal(text_cut(s, 7, 7), 7);
    assert_int_equal(text_cut(s, 7, 6), 4);   /* not inside the dash */
    assert_int_equal(text_cut(s, 7, 5), 4);
    assert_int_equal(text_cut(s, 7, 4), 4);
    assert_int_equal(text_cut(s, 7, 3), 2);   /* not inside the é */
    assert_int_equal(text_cut(s, 7, 0), 0);
}

static void put_repairs_and_cuts(void **state)
{
    struct buf b;

    (void)state;
    buf_init(&b, 0);
    text_put(&b, "caf\xe9!", 5, 0);
    assert_string_equal(b.data, "caf\xef\xbf\xbd!");
    buf_reset(&b);
    text_put(&b, "ab\xc3\xa9" "cd", 6, 3);
    assert_string_equal(b.data, "ab...");
    buf_reset(&b);
    text_put(&b, "ab\xc3\xa9" "cd", 6, 4);
    assert_string_equal(b.data, "ab\xc3\xa9...");
    buf_reset(&b);
    text_put(&b, "abc", 3, 3);                /* nothing left out */
    assert_string_equal(b.data, "abc");
    buf_free(&b);
}

static void repair_keeps_valid_text_and_fixes_the_rest(void **state)
{
    char *s = strdup("fine \xc3\xa9"), *t;

    (void)state;
    t = text_repair(s);
    assert_ptr_equal(t, s);                   /* the same string */
    free(t);
    t = text_repair(strdup("M\xe9xico"));
    assert_string_equal(t, "M\xef\xbf\xbdxico");
    free(t);
    assert_null(text_repair(NULL));
}

/* s quoted with q, as a string the caller frees. */
static char *quoted(const char *s, char q)
{
    struct buf b;

    buf_init(&b, 0);
    text_put_quoted(&b, s, q);
    return buf_steal(&b);
}

static void quoting_doubles_the_quote_and_nothing_else(void **state)
{
    static const struct {
        const char *in, *name, *literal;
    } cases[] = {
        {"plain", "\"plain\"", "'plain'"},
        {"", "\"\"", "''"},
        {"say \"hi\"", "\"say \"\"hi\"\"\"", "'say \"hi\"'"},
        {"O'Brien", "\"O'Brien\"", "'O''Brien'"},
        {"\"", "\"\"\"\"", "'\"'"},
        {"Caf\xc3\xa9 \"\xc3\xbc\" \xe2\x80\x9c", /* UTF-8 as it is */
         "\"Caf\xc3\xa9 \"\"\xc3\xbc\"\" \xe2\x80\x9c\"",
         "'Caf\xc3\xa9 \"\xc3\xbc\" \xe2\x80\x9c'"},
        {"M\xe9xico", "\"M\xe9xico\"", "'M\xe9xico'"},  /* not repaired */
    };
    size_t i;
    char *s;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof *cases; i++) {
        s = quoted(cases[i].in, '"');
        assert_string_equal(s, cases[i].name);
        free(s);
        s = quoted(cases[i].in, '\'');
        assert_string_equal(s, cases[i].literal);
        free(s);
    }
}

/* SQLite reads every quoted name back as the name itself. */
static void quoted_names_round_trip_through_sqlite(void **state)
{
    static const char *const names[] = {
        "a", "two words", "\"", "x\"\"y", "select", "it's", "end\"",
        "\xc3\xa9t\xc3\xa9 \"\xe2\x82\xac\"",
    };
    sqlite3 *db;
    sqlite3_stmt *st;
    struct buf sql;
    size_t i;

    (void)state;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    for (i = 0; i < sizeof names / sizeof *names; i++) {
        buf_init(&sql, 0);
        buf_puts(&sql, "SELECT 1 AS ");
        text_put_quoted(&sql, names[i], '"');
        buf_puts(&sql, ", ");
        text_put_quoted(&sql, names[i], '\'');
        assert_false(buf_err(&sql));
        assert_int_equal(sqlite3_prepare_v2(db, sql.data, -1, &st, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal(sqlite3_column_name(st, 0), names[i]);
        assert_string_equal((const char *)sqlite3_column_text(st, 1),
                            names[i]);
        sqlite3_finalize(st);
        buf_free(&sql);
    }
    sqlite3_close(db);
}

/*
** What follows "scheme://" with an '@' past the authority's end: the last
** '@' and the first ':' before it, the span that may be the password's.
** The characters that end the authority are the caller's: a '#' ends it
** for libcurl, not for libpq.
*/
static void url_password_runs_to_the_last_at_past_the_authority(void **state)
{
    static const struct {
        const char *auth, *ends;
        int at, colon;   /* offsets into auth; -1: NULL */
    } cases[] = {
        {"u:pa/ss@host/v1", "/?#", 7, 1},
        {"u:pa?ss@host/v1", "/?#", 7, 1},
        {"u:pa#ss@host/v1", "/?#", 7, 1},
        {"u:pa#ss@host/v1", "/?", -1, -1},   /* the password's '#' */
        {"u:p@a/s?s@h/x?ssl=1", "/?", 9, 1}, /* the last '@' */
        {"h:3306/a@b", "/?", 8, 1},          /* a database's '@' */
        {"app@db:5432/prod?password=Summer@2024", "/?", 32, 6},
        {"h/a@b", "/?", 3, -1},              /* no ':' to hide from */
        {"h/a@b:1", "/?#", 3, -1},           /* its ':' comes after */
        {"u:pw@host/db", "/?", -1, -1},      /* the '@' is the user's */
        {"u:a@b@host/db", "/?#", -1, -1},
        {"host:5/db?x#y", "/?#", -1, -1},
        {"", "/?", -1, -1},
    };
    const char *at, *colon;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        colon = "unset";
        at = text_url_ambiguous(cases[i].auth, cases[i].ends, &colon);
        if ((at ? at - cases[i].auth : -1) != cases[i].at ||
            (colon ? colon - cases[i].auth : -1) != cases[i].colon)
            fail_msg("case %zu (%s, ends \"%s\"): at %td, colon %td", i,
                     cases[i].auth, cases[i].ends,
                     at ? at - cases[i].auth : -1,
                     colon ? colon - cases[i].auth : -1);
    }
}

/* A failed constructor's message gets its prefix once, the message's
** end cut between characters to fit the buffer. */
static void prefix_once_goes_before_the_message_once(void **state)
{
    char m[24];

    (void)state;
    snprintf(m, sizeof m, "no such file");
    text_prefix_once(m, sizeof m, "failed: ");
    assert_string_equal(m, "failed: no such file");
    text_prefix_once(m, sizeof m, "failed: ");
    assert_string_equal(m, "failed: no such file");
    /* 23 bytes hold "failed: " and 15 of the message: the 'é' at 14-15
    ** would be split, so the cut falls before it. */
    snprintf(m, sizeof m, "abcdefghijklmn\xc3\xa9xyz");
    text_prefix_once(m, sizeof m, "failed: ");
    assert_string_equal(m, "failed: abcdefghijklmn");
    snprintf(m, sizeof m, "x");
    text_prefix_once(m, 6, "failed: ");
    assert_string_equal(m, "faile");
    text_prefix_once(m, 0, "failed: ");
    assert_string_equal(m, "faile");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_utf8_is_told_from_invalid),
        cmocka_unit_test(char_len_counts_whole_characters_only),
        cmocka_unit_test(cut_falls_between_characters),
        cmocka_unit_test(put_repairs_and_cuts),
        cmocka_unit_test(repair_keeps_valid_text_and_fixes_the_rest),
        cmocka_unit_test(quoting_doubles_the_quote_and_nothing_else),
        cmocka_unit_test(quoted_names_round_trip_through_sqlite),
        cmocka_unit_test(url_password_runs_to_the_last_at_past_the_authority),
        cmocka_unit_test(prefix_once_goes_before_the_message_once),
    };
    test_filter_from_env();
    return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
