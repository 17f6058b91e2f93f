/* test_hint.c - repair hints: the unknown name read from each engine's
** message, and tables of other schemas named qualified. */
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
static const struct db_schema ns = {tables, 4, 1};

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_table_read_from_each_engine),
        cmocka_unit_test(unknown_column_of_a_qualified_table),
    };
    test_filter_from_env();

    return cmocka_run_group_tests(tests, NULL, NULL);
}
