/* test_hint.c - repair hints: the unknown name read from each engine's
** message, tables of other schemas named qualified, and engines'
** reserved words named quoted. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/hint.h"
#include "core/buf.h"
#include "db/schema.h"

/* customers and orders reached by their names; sales.orders (same name)
** and sales.regions only qualified. */
static struct db_column cust_cols[] = {
    {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
    {"name", "text", 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column ord_cols[] = {
    {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
    {"customer_id", "integer", 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column sord_cols[] = {
    {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
    {"region_id", "integer", 0, NULL, 0, NULL, 0, NULL},
    {"amount", "numeric", 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column reg_cols[] = {
    {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
    {"label", "text", 0, NULL, 0, NULL, 0, NULL},
};
static struct db_table tables[] = {
    {"customers", 0, cust_cols, 2, NULL, 0, NULL, 0, 10, 0, 0, NULL, NULL,
     NULL, 0},
    {"orders", 0, ord_cols, 2, NULL, 0, NULL, 0, 10, 0, 0, NULL, NULL, NULL, 0},
    {"orders", 0, sord_cols, 3, NULL, 0, NULL, 0, 10, 0, 0, NULL, "sales",
     "sales.orders", 0},
    {"regions", 0, reg_cols, 2, NULL, 0, NULL, 0, 3, 0, 0, NULL, "sales",
     "sales.regions", 0},
};
static const struct db_schema ns = {
    .tables = tables, .ntables = 4, .case_folds = 1};

/* The hint for an error of class ec with message msg on sql; it must
** contain want. */
static void expect_hint(askdb_error_class ec, const char *sql,
                        const char *msg, const char *want)
{
    struct buf b;

    buf_init(&b, 0);
    hint_write(&b, &ns, sql, ec, msg, 1000, "PostgreSQL");
    assert_false(buf_err(&b));
    if (!b.data || !strstr(b.data, want))
        fail_msg("hint for \"%s\" lacks \"%s\": %s", msg, want,
                 b.data ? b.data : "(none)");
    buf_free(&b);
}

/* Each engine's way of saying a table is unknown gives the name, and the
** table of the other schema comes first, qualified. */
static void unknown_table_read_from_each_engine(void **state)
{
    static const char *const msgs[] = {
        "no such table: regions",
        "relation \"regions\" does not exist",
        "Catalog Error: Table with name regions does not exist! Did you "
        "mean \"sales.regions\"?",
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof msgs / sizeof msgs[0]; i++)
        expect_hint(ASKDB_EC_UNKNOWN_TABLE, "SELECT * FROM regions", msgs[i],
                    "Hint: there is no table 'regions'. The tables are "
                    "(closest first): sales.regions, ");
    expect_hint(ASKDB_EC_UNKNOWN_TABLE, "SELECT * FROM sales.region",
                "relation \"sales.region\" does not exist",
                "there is no table 'sales.region'. The tables are (closest "
                "first): sales.regions, ");
}

/* A column under an alias of a qualified table: the hint names the table
** qualified and lists its columns; the closest column comes first. */
static void unknown_column_of_a_qualified_table(void **state)
{
    static const char *const msgs[] = {
        "column r.lable does not exist (HINT: Perhaps you meant to "
        "reference the column \"r.label\".)",
        "Binder Error: Table \"r\" does not have a column named \"lable\"",
        "no such column: r.lable",
    };
    static const char sql[] = "SELECT r.lable FROM sales.orders o JOIN "
                              "sales.regions r ON r.id = o.region_id";
    size_t i;

    (void)state;
    for (i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
        expect_hint(ASKDB_EC_UNKNOWN_COLUMN, sql, msgs[i],
                    "there is no column 'r.lable'; r is table sales.regions, "
                    "which has columns: id, label");
        expect_hint(ASKDB_EC_UNKNOWN_COLUMN, sql, msgs[i],
                    "Closest real columns: sales.regions.label");
    }
    expect_hint(ASKDB_EC_UNKNOWN_COLUMN, "SELECT amont FROM sales.orders",
                "column \"amont\" does not exist (HINT: Perhaps you meant "
                "to reference the column \"orders.amount\".)",
                "there is no column 'amont'. Closest real columns: "
                "sales.orders.amount");
    expect_hint(ASKDB_EC_UNKNOWN_COLUMN, "SELECT amont FROM sales.orders",
                "Binder Error: Referenced column \"amont\" not found in FROM "
                "clause!", "Closest real columns: sales.orders.amount");
    expect_hint(ASKDB_EC_UNKNOWN_COLUMN,
                "SELECT sales.orders.amont FROM sales.orders",
                "column sales.orders.amont does not exist",
                "table sales.orders, which has columns: id, region_id, "
                "amount");
    expect_hint(ASKDB_EC_UNKNOWN_COLUMN,
                "SELECT id FROM orders JOIN sales.orders s ON s.id = "
                "orders.id", "column reference \"id\" is ambiguous",
                "several tables have a column 'id'; qualify it with the "
                "table name or alias (");
}

/* The hint on schema s for dialect; NULL when out of memory. */
static char *hint_on(const struct db_schema *s, askdb_error_class ec,
                     const char *sql, const char *msg, const char *dialect)
{
    struct buf b;

    buf_init(&b, 0);
    hint_write(&b, s, sql, ec, msg, 1000, dialect);
    return buf_steal(&b);
}

#define HAS(text, want)                                                      \
    do {                                                                     \
        if (!strstr((text), (want)))                                         \
            fail_msg("hint lacks \"%s\": %s", (want), (text));               \
    } while (0)

/*
** On an engine with reserved words of its own (db_schema.reserved) the
** hints write names as a query must, quoted where they are one, and say
** to quote a reserved word the query wrote bare as a name: where the
** engine stopped (DuckDB's and MariaDB's syntax errors) or after FROM
** (PostgreSQL reads FROM user as current_user and names a column). On
** SQLite (no reserved words, says_quoted 0) the hints are as they were.
*/
static void reserved_names_are_said_quoted(void **state)
{
    struct db_table *user_tables = reserved_user_table();
    static const char *const words[] = {"user", "array", "only", "select",
                                        "from"};
    struct db_schema pg = {.tables = user_tables, .ntables = 1,
                           .case_folds = 1, .says_quoted = 1};
    struct db_schema lite = {.tables = user_tables, .ntables = 1};
    char *h;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof words / sizeof words[0]; i++)
        assert_int_equal(schema_add_reserved(&pg, words[i]), 0);
    h = hint_on(&pg, ASKDB_EC_UNKNOWN_COLUMN, "SELECT name FROM user",
                "column \"name\" does not exist", "PostgreSQL");
    assert_non_null(h);
    HAS(h, "Closest real columns: \"user\".name.\n");
    HAS(h, "Hint: user is a reserved word in PostgreSQL; write the name "
           "quoted: \"user\".\n");
    free(h);
    h = hint_on(&pg, ASKDB_EC_UNKNOWN_COLUMN, "SELECT u.nme FROM \"user\" u",
                "column u.nme does not exist", "PostgreSQL");
    assert_non_null(h);
    HAS(h, "u is table \"user\", which has columns: id, name, \"array\", "
           "\"only\"");
    assert_null(strstr(h, "reserved word"));
    free(h);
    h = hint_on(&pg, ASKDB_EC_SYNTAX, "SELECT id, array FROM \"user\"",
                "Parser Error: syntax error at or near \"array\"", "DuckDB");
    assert_non_null(h);
    HAS(h, "Hint: array is a reserved word in DuckDB; write the name "
           "quoted: \"array\".\n");
    assert_null(strstr(h, "user is a reserved"));
    free(h);
    h = hint_on(&pg, ASKDB_EC_SYNTAX, "SELECT only FROM \"user\"",
                "You have an error in your SQL syntax; check the manual that "
                "corresponds to your MariaDB server version for the right "
                "syntax to use near 'only FROM \"user\"' at line 1",
                "MariaDB");
    assert_non_null(h);
    HAS(h, "Hint: only is a reserved word in MariaDB; write the name "
           "quoted: \"only\".\n");
    free(h);
    h = hint_on(&pg, ASKDB_EC_UNKNOWN_TABLE, "SELECT * FROM usr",
                "relation \"usr\" does not exist", "PostgreSQL");
    assert_non_null(h);
    HAS(h, "The tables are: \"user\".\n");
    free(h);
    /* SQLite: names as stored, and no word on reserved words. */
    h = hint_on(&lite, ASKDB_EC_UNKNOWN_COLUMN, "SELECT name FROM user",
                "no such column: name", "SQLite");
    assert_non_null(h);
    HAS(h, "Closest real columns: user.name.\n");
    assert_null(strstr(h, "reserved word"));
    free(h);
    for (i = 0; i < (size_t)pg.nreserved; i++)
        free(pg.reserved[i]);
    free(pg.reserved);
}

/*
** An empty result's hint names the case of text values where the engine
** compares it, and not on MariaDB, whose default collations ignore it.
*/
static void empty_hint_names_case_where_it_counts(void **state)
{
    static const char *const dialects[] = {"SQLite", "PostgreSQL", "DuckDB",
                                           "MariaDB"};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof dialects / sizeof dialects[0]; i++) {
        char *h = hint_on(&ns, ASKDB_EC_EMPTY, "SELECT id FROM customers "
                          "WHERE name = 'bob'", "", dialects[i]);
        int mariadb = strcmp(dialects[i], "MariaDB") == 0;

        assert_non_null(h);
        HAS(h, "Hint: the query ran but returned no rows.");
        HAS(h, mariadb ? "(exact spelling of text values"
                       : "(exact spelling and case of text values");
        free(h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_table_read_from_each_engine),
        cmocka_unit_test(unknown_column_of_a_qualified_table),
        cmocka_unit_test(reserved_names_are_said_quoted),
        cmocka_unit_test(empty_hint_names_case_where_it_counts),
    };
    test_filter_from_env();

    return cmocka_run_group_tests(tests, NULL, NULL);
}
