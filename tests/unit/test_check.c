/* test_check.c - each check fires on a bad query and stays silent on its
** good twin, over the shop database and Spider's. */
#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/check.h"
#include "agent/values.h"
#include "core/buf.h"
#include "db/db.h"

static askdb_db *db;
static const struct db_schema *shop;
static struct vindex *values;   /* the value index before_on() passes */

static int setup(void **state)
{
    (void)state;
    db = testdb_open(testdb_shop(), NULL, &shop);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    askdb_db_close(db);
    return 0;
}

/* The hint of the one finding of kind k among f, or NULL; fails when
** there are findings of other kinds. */
static const char *only(const struct check_finding *f, int n,
                        enum check_kind k, const char *what)
{
    const char *hint = NULL;
    int i;

    for (i = 0; i < n; i++) {
        if (f[i].kind != k)
            fail_msg("unexpected %s finding on %s: %s",
                     check_kind_str(f[i].kind), what, f[i].hint);
        hint = f[i].hint;
    }
    return hint;
}

/* Run check_before on sql over d; want NULL = no finding, else the
** findings must all be of kind k and the hint must contain want. */
static void before_on(askdb_db *d, const struct db_schema *s, const char *q,
                      const char *sql, enum check_kind k, const char *want)
{
    struct check_finding *f = NULL;
    const char *hint;
    int n = -1;

    assert_int_equal(check_before(d, s, values, q, sql, &f, &n), 0);
    if (!want) {
        if (n)
            fail_msg("false alarm (%s) on %s: %s", check_kind_str(f[0].kind),
                     sql, f[0].hint);
        assert_null(f);
        return;
    }
    hint = only(f, n, k, sql);
    if (!hint)
        fail_msg("no %s finding on %s", check_kind_str(k), sql);
    if (!strstr(hint, want))
        fail_msg("hint for %s lacks \"%s\": %s", sql, want, hint);
    check_findings_free(f, n);
}

static void before(const char *sql, enum check_kind k, const char *want)
{
    before_on(db, shop, "a question", sql, k, want);
}

/* Run sql, then check_after with question; same contract as before(). */
static void after(const char *q, const char *sql, enum check_kind k,
                  const char *want)
{
    struct check_finding *f = NULL;
    askdb_result *r = NULL;
    const char *hint;
    struct db_err e;
    int n = -1;

    if (db_run(db, sql, &r, &e))
        fail_msg("%s: %s", sql, e.msg);
    assert_int_equal(check_after(q, sql, r, &f, &n), 0);
    askdb_result_free(r);
    if (!want) {
        if (n)
            fail_msg("false alarm (%s) on %s / %s: %s",
                     check_kind_str(f[0].kind), q, sql, f[0].hint);
        return;
    }
    hint = only(f, n, k, sql);
    if (!hint)
        fail_msg("no %s finding on %s / %s", check_kind_str(k), q, sql);
    if (!strstr(hint, want))
        fail_msg("hint for %s lacks \"%s\": %s", sql, want, hint);
    check_findings_free(f, n);
}

static void join_off_the_foreign_key(void **state)
{
    (void)state;
    before("SELECT c.first_name FROM customers c JOIN orders o "
           "ON o.id = c.id", CHECK_JOIN_NOT_FK,
           "orders.id = customers.id does not follow a foreign key. "
           "orders and customers are linked by: "
           "orders.customer_id = customers.id.");
    before("SELECT * FROM payments p, orders o WHERE p.id = o.id",
           CHECK_JOIN_NOT_FK, "payments.order_id = orders.id");
    /* the key, in either direction and either order */
    before("SELECT c.first_name, o.total FROM customers c JOIN orders o "
           "ON o.customer_id = c.id", 0, NULL);
    before("SELECT * FROM orders o, customers c WHERE c.id = o.customer_id",
           0, NULL);
    /* a self-reference through categories.parent_id */
    before("SELECT a.name, b.name FROM categories a JOIN categories b "
           "ON b.id = a.parent_id", 0, NULL);
    /* an equality next to the key join is a filter, not the join */
    before("SELECT * FROM orders o JOIN customers c ON o.customer_id = c.id "
           "WHERE o.id = c.id", 0, NULL);
    /* tables with no key between them are not judged */
    before("SELECT * FROM customers c JOIN products p ON p.id = c.id "
           "WHERE c.id < 3", 0, NULL);
}

static void tables_with_nothing_linking_them(void **state)
{
    (void)state;
    before("SELECT c.first_name, o.total FROM customers c, orders o",
           CHECK_CROSS_JOIN,
           "Join them on their foreign key: orders.customer_id = "
           "customers.id.");
    before("SELECT count(*) FROM customers JOIN products", CHECK_CROSS_JOIN,
           "customers and products are in the same FROM");
    before("SELECT c.first_name, o.total FROM customers c, orders o "
           "WHERE o.customer_id = c.id", 0, NULL);
}

static void aggregate_with_bare_column(void **state)
{
    (void)state;
    before("SELECT country, count(*) FROM customers", CHECK_AGG_NO_GROUP,
           "mixes the aggregate count(...) with the column "
           "customers.country, and the query has no GROUP BY");
    before("SELECT country, count(*) FROM customers GROUP BY country", 0,
           NULL);
    before("SELECT count(*) FROM customers", 0, NULL);
    /* a column fixed by the WHERE clause has one value */
    before("SELECT country, count(*) FROM customers WHERE country = 'DE'", 0,
           NULL);
}

static void text_value_not_in_the_column(void **state)
{
    (void)state;
    before("SELECT count(*) FROM customers WHERE country = 'de'",
           CHECK_LITERAL_MISSING,
           "customers.country has no value 'de'; it has 'DE'.");
    before("SELECT count(*) FROM customers WHERE country = 'DE'", 0, NULL);
    before("SELECT * FROM customers c WHERE c.city = 'York'",
           CHECK_LITERAL_MISSING,
           "customers.city has no value 'York'; values containing it: "
           "'New York'.");
    before("SELECT * FROM customers c WHERE c.city = 'New York'", 0, NULL);
    before("SELECT * FROM orders WHERE status IN ('paid', 'Shipped')",
           CHECK_LITERAL_MISSING,
           "orders.status has no value 'Shipped'; it has 'shipped'.");
    before("SELECT * FROM orders WHERE status NOT IN ('paid', \"shipped\")",
           0, NULL);
    /* nothing similar stored: the question may ask about what is not
    ** there, so no hint */
    before("SELECT * FROM customers WHERE city = 'Atlantis'", 0, NULL);
    /* numbers, LIKE (case-insensitive) and quotes inside values */
    before("SELECT * FROM orders WHERE shipping_country = '12'", 0, NULL);
    before("SELECT * FROM customers WHERE city LIKE 'new york'", 0, NULL);
    before("SELECT * FROM products WHERE name = 'chef''s knife 20cm'",
           CHECK_LITERAL_MISSING, "it has 'Chef''s Knife 20cm'");
    before("SELECT * FROM products WHERE name = 'Chef''s Knife 20cm'", 0,
           NULL);
    /* a value inside a word is no spelling of it ("ork" in "New York") */
    before("SELECT * FROM customers WHERE city = 'ork'", 0, NULL);
    /* wildcards in the value searched for are taken literally */
    before("SELECT * FROM customers WHERE city = 'Yo%k'", 0, NULL);
}

/* A value that is not in its column and has no other spelling there is
** said only with evidence of another reading: a column of few texts, all
** shown ('Japan' against codes), or the value index finding it stored
** in another column. The result of a count is not empty, so the repair
** of an empty result would never look. */
static void text_value_found_nowhere_in_the_column(void **state)
{
    char dir[256], note[256];

    (void)state;
    before("SELECT count(*) FROM orders o JOIN customers c ON "
           "o.customer_id = c.id WHERE c.country = 'Japan'",
           CHECK_LITERAL_MISSING,
           "customers.country has no value 'Japan'; its 10 values are "
           "'DE', 'ES', 'FR', 'GB', 'IT', 'JP', 'NL', 'PL', 'SE', 'US'. "
           "Compare with the one the question means");
    before("SELECT count(*) FROM customers WHERE country = 'JP'", 0, NULL);
    before("SELECT count(*) FROM orders WHERE status = 'lost'",
           CHECK_LITERAL_MISSING,
           "orders.status has no value 'lost'; its 6 values are "
           "'cancelled', 'delivered', 'paid', 'pending', 'refunded', "
           "'shipped'.");
    /* Stored in a table a foreign key away (payments -> orders). */
    before("SELECT count(*) FROM orders WHERE status = 'gift_card'",
           CHECK_VALUE_ELSEWHERE,
           "'gift_card' is not a value of orders.status; it is stored in "
           "payments.method. Compare the column that stores it");
    before("SELECT o.id FROM orders o JOIN customers c ON c.id = "
           "o.customer_id WHERE c.city = 'paypal'", CHECK_VALUE_ELSEWHERE,
           "'paypal' is not a value of customers.city; it is stored in "
           "payments.method.");
    /* Not near the query (categories -> products only): the few values */
    before("SELECT count(*) FROM categories WHERE name = 'gift_card'",
           CHECK_LITERAL_MISSING, "categories.name has no value "
           "'gift_card'; its 10 values are");
    /* more texts than can be shown (the cities), IN, LIKE, <>: silent */
    before("SELECT * FROM customers WHERE city = 'Atlantis'", 0, NULL);
    before("SELECT * FROM customers WHERE country IN ('Japan', 'DE')", 0,
           NULL);
    before("SELECT * FROM customers WHERE country LIKE 'Japan'", 0, NULL);
    before("SELECT * FROM customers WHERE country <> 'Japan'", 0, NULL);

    /* With the value index: stored exactly in another column. */
    assert_int_equal(tmpdir_as_cache(dir, sizeof dir, "check-values"), 0);
    assert_int_equal(vindex_open(db, NULL, &values, note, sizeof note), 0);
    before("SELECT count(*) FROM orders WHERE status = 'gift_card'",
           CHECK_VALUE_ELSEWHERE,
           "'gift_card' is not a value of orders.status; it is stored in "
           "payments.method. Compare the column that stores it");
    before("SELECT count(*) FROM payments WHERE method = 'gift_card'", 0,
           NULL);
    /* not stored anywhere: the few values, as without the index */
    before("SELECT count(*) FROM customers WHERE country = 'Japan'",
           CHECK_LITERAL_MISSING, "its 10 values are 'DE'");
    vindex_free(values);
    values = NULL;
    assert_int_equal(tmpdir_remove(dir), 0);
}

/* PostgreSQL, MariaDB and DuckDB count a table only up to 200 rows; a
** larger one gets its statistics' estimate (rows_estimated), never
** rows_capped. One estimated over the count cap (100000) is as big as a
** capped one: the looks that read a whole table (the value in the other
** columns, the few values of the column) leave it alone. A table whose
** count is unknown is not read whole either; a small estimate is. */
static void estimated_big_tables_are_not_read_whole(void **state)
{
    struct db_table *cust = (struct db_table *)schema_table(shop,
                                                            "customers");
    struct db_table *pay = (struct db_table *)schema_table(shop, "payments");
    const char *japan = "SELECT count(*) FROM orders o JOIN customers c ON "
                        "o.customer_id = c.id WHERE c.country = 'Japan'";
    long cust_rows = cust->rows, pay_rows = pay->rows;
    struct buf b;

    (void)state;
    cust->rows_estimated = 1;
    cust->rows = 5000;
    before(japan, CHECK_LITERAL_MISSING, "its 10 values are 'DE'");
    cust->rows = 5000000;
    before(japan, 0, NULL);
    cust->rows_estimated = 0;
    cust->rows = -1;
    before(japan, 0, NULL);
    cust->rows = cust_rows;

    pay->rows_estimated = 1;
    pay->rows = 5000000;
    before("SELECT count(*) FROM orders WHERE status = 'gift_card'",
           CHECK_LITERAL_MISSING, "orders.status has no value 'gift_card'; "
           "its 6 values are");
    /* the empty result's look, without the value index, too */
    buf_init(&b, 0);
    assert_int_equal(check_value_elsewhere(db, shop, NULL, "SELECT id FROM "
                                           "orders WHERE status = "
                                           "'gift_card'", &b), 0);
    buf_free(&b);
    pay->rows_estimated = 0;
    pay->rows = pay_rows;
    buf_init(&b, 0);
    assert_int_equal(check_value_elsewhere(db, shop, NULL, "SELECT id FROM "
                                           "orders WHERE status = "
                                           "'gift_card'", &b), 1);
    buf_free(&b);
}

/* An empty result's look without the value index reads the compared
** column first, one query per value: not on a table too big to read
** whole, and for at most 8 values of a query, as the checks before
** execution (a long IN list would read the table once per value, and
** look into up to 40 columns for each). */
static void empty_result_look_is_bounded(void **state)
{
    struct db_table *orders = (struct db_table *)schema_table(shop,
                                                              "orders");
    long rows = orders->rows;
    struct buf b;

    (void)state;
    orders->rows_estimated = 1;
    orders->rows = 5000000;
    buf_init(&b, 0);
    assert_int_equal(check_value_elsewhere(db, shop, NULL, "SELECT id FROM "
                                           "orders WHERE status = "
                                           "'gift_card'", &b), 0);
    buf_free(&b);
    orders->rows_estimated = 0;
    orders->rows = rows;
    /* the 9th value of the list is not looked for */
    buf_init(&b, 0);
    assert_int_equal(check_value_elsewhere(db, shop, NULL, "SELECT id FROM "
                                           "orders WHERE status IN ('x1', "
                                           "'x2', 'x3', 'x4', 'x5', 'x6', "
                                           "'x7', 'gift_card')", &b), 1);
    buf_free(&b);
    buf_init(&b, 0);
    assert_int_equal(check_value_elsewhere(db, shop, NULL, "SELECT id FROM "
                                           "orders WHERE status IN ('x1', "
                                           "'x2', 'x3', 'x4', 'x5', 'x6', "
                                           "'x7', 'x8', 'gift_card')", &b),
                     0);
    buf_free(&b);
}

/* Free text that contains the value: each stored value is shown cut to 80
** bytes (between characters), so the hint stays short and no finding is
** lost (a hint over its cap used to drop every finding of the query). */
static void long_stored_values_are_cut_not_the_findings(void **state)
{
    char path[128];
    struct check_finding *f = NULL;
    const struct db_schema *s;
    const char *lit = NULL;
    struct buf sql;
    askdb_db *d = NULL;
    json_t *j;
    int i, k, n = -1;

    (void)state;
    assert_int_equal(tmpfile_make(path, sizeof path, "check"), 0);
    buf_init(&sql, 0);
    buf_puts(&sql, "CREATE TABLE products (id INTEGER PRIMARY KEY, "
                   "description TEXT);");
    for (i = 10; i < 20; i++) {
        buf_printf(&sql, "INSERT INTO products VALUES (%d, '%d: ", i, i);
        for (k = 0; k < 80; k++) /* 1,360 bytes, an 'é' across byte 80 */
            buf_puts(&sql, "Red caf\xc3\xa9 chair, ");
        buf_puts(&sql, "');");
    }
    assert_int_equal(buf_err(&sql), 0);
    assert_int_equal(sqlfile_exec(path, sql.data), 0);
    buf_free(&sql);
    assert_int_equal(askdb_db_open(path, NULL, &d), ASKDB_OK);
    assert_int_equal(db_schema(d, &s), ASKDB_OK);

    assert_int_equal(check_before(d, s, NULL, "q", "SELECT id, count(*) FROM "
                                  "products WHERE description = 'red'", &f,
                                  &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(f[0].kind, CHECK_AGG_NO_GROUP);
    assert_int_equal(f[1].kind, CHECK_LITERAL_MISSING);
    lit = f[1].hint;
    assert_non_null(strstr(lit, "products.description has no value 'red'; "
                                "values containing it: '10: Red caf\xc3\xa9 "
                                "chair, Red caf\xc3\xa9 chair, Red caf\xc3\xa9"
                                " chair, Red caf\xc3\xa9 chair, Red caf...', "
                                "'11: Red"));
    assert_non_null(strstr(lit, "'. Compare with the value exactly as "
                                "stored."));
    assert_true(strlen(lit) < 600);
    j = json_string(lit); /* valid UTF-8 */
    assert_non_null(j);
    json_decref(j);
    check_findings_free(f, n);
    askdb_db_close(d);
    unlink(path);
}

static void unreadable_sql_gives_no_finding(void **state)
{
    (void)state;
    before("SELECT * FROM customers WHERE (country = 'de'", 0, NULL);
    before("not sql at all", 0, NULL);
}

static void result_column_all_null(void **state)
{
    (void)state;
    after("What is the average order total of refunded-twice orders?",
          "SELECT avg(total) FROM orders WHERE status = 'nope'",
          CHECK_ALL_NULL, "Every value of the result is NULL (1 row).");
    after("Which customers have no city?",
          "SELECT first_name, city FROM customers WHERE city IS NULL",
          CHECK_ALL_NULL, "Result column 'city' is NULL in every row.");
    /* SELECT * takes empty columns along */
    after("Customers with no city?",
          "SELECT * FROM customers WHERE city IS NULL", 0, NULL);
    after("What is the average order total?",
          "SELECT avg(total) FROM orders", 0, NULL);
    after("Cities of the customers?", "SELECT city FROM customers", 0, NULL);
}

static void result_shape_against_the_question(void **state)
{
    (void)state;
    after("How many customers are there?", "SELECT id FROM customers",
          CHECK_SHAPE, "asks for a single value");
    after("How many customers are there?", "SELECT count(*) FROM customers",
          0, NULL);
    after("How many customers are there in each country?",
          "SELECT country, count(*) FROM customers GROUP BY country", 0,
          NULL);
    after("Which customer has the most orders?",
          "SELECT customer_id, count(*) FROM orders GROUP BY customer_id",
          CHECK_SHAPE, "ORDER BY ... DESC LIMIT 1");
    after("Which customer has the most orders?",
          "SELECT customer_id FROM orders GROUP BY customer_id "
          "ORDER BY count(*) DESC LIMIT 1", 0, NULL);
    after("List the first names of all customers.",
          "SELECT count(*) FROM customers", CHECK_SHAPE,
          "returned a single aggregate (count(*))");
    after("List the first names of all customers.",
          "SELECT first_name FROM customers", 0, NULL);
    after("List the number of customers.", "SELECT count(*) FROM customers",
          0, NULL);
    /* one value asked only at the opening; a count among other asks */
    after("What are the countries and how many customers live there?",
          "SELECT country, count(*) FROM customers GROUP BY country", 0,
          NULL);
    after("How many customers are in different countries?",
          "SELECT country, count(*) FROM customers GROUP BY country", 0,
          NULL);
    after("How many different countries are there?",
          "SELECT DISTINCT country FROM customers", CHECK_SHAPE,
          "asks for a single value");
    /* the superlative belongs to another noun: a list */
    after("Which products were bought by the customer who has the most "
          "orders?", "SELECT id FROM products", 0, NULL);
}

/* The checks over a Spider database (chinook_1), skipped without one. */
static void spider_chinook(void **state)
{
    const struct db_schema *s;
    char path[1024];
    askdb_db *d;

    (void)state;
    testdb_spider("chinook_1", path, sizeof path);
    d = testdb_open(path, NULL, &s);
    before_on(d, s, "q",
              "SELECT T2.FirstName FROM CUSTOMER AS T1 JOIN EMPLOYEE AS T2 "
              "ON T1.SupportRepId = T2.EmployeeId WHERE T1.FirstName = "
              "\"leonie\"", CHECK_LITERAL_MISSING,
              "Customer.FirstName has no value 'leonie'; it has 'Leonie'.");
    before_on(d, s, "q",
              "SELECT T2.FirstName FROM CUSTOMER AS T1 JOIN EMPLOYEE AS T2 "
              "ON T1.SupportRepId = T2.EmployeeId WHERE T1.FirstName = "
              "\"Leonie\"", 0, NULL);
    before_on(d, s, "q",
              "SELECT T2.FirstName FROM CUSTOMER AS T1 JOIN EMPLOYEE AS T2 "
              "ON T1.CustomerId = T2.EmployeeId", CHECK_JOIN_NOT_FK,
              "Customer.SupportRepId = Employee.EmployeeId");
    before_on(d, s, "q",
              "SELECT T1.FirstName, sum(T2.Total) FROM Customer AS T1 JOIN "
              "Invoice AS T2 ON T1.CustomerId = T2.CustomerId",
              CHECK_AGG_NO_GROUP, "Customer.FirstName");
    before_on(d, s, "q",
              "SELECT T1.FirstName, sum(T2.Total) FROM Customer AS T1 JOIN "
              "Invoice AS T2 ON T1.CustomerId = T2.CustomerId "
              "GROUP BY T1.CustomerId", 0, NULL);
    before_on(d, s, "q", "SELECT count(*) FROM Invoice, Customer",
              CHECK_CROSS_JOIN, "Invoice.CustomerId = Customer.CustomerId");
    askdb_db_close(d);
}

/* Tables of another schema (a namespace): the joins and cross joins are
** judged by their own foreign keys, and the hints name them qualified.
** No database: the checks before running need only the schema. */
static void checks_name_tables_of_other_schemas(void **state)
{
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
    static struct db_fkey sord_fk[] = {{"region_id", "sales.regions", "id"}};
    static struct db_table tables[] = {
        {"orders", 0, ord_cols, 2, NULL, 0, NULL, 0, 10, 0, 0, NULL, NULL,
         NULL, 0},
        {"orders", 0, sord_cols, 3, sord_fk, 1, NULL, 0, 10, 0, 0, NULL,
         "sales", "sales.orders", 0},
        {"regions", 0, reg_cols, 2, NULL, 0, NULL, 0, 3, 0, 0, NULL, "sales",
         "sales.regions", 0},
    };
    static const struct db_schema ns = {
        .tables = tables, .ntables = 3, .case_folds = 1};

    (void)state;
    before_on(NULL, &ns, "q", "SELECT r.label FROM sales.orders o JOIN "
              "sales.regions r ON r.id = o.id", CHECK_JOIN_NOT_FK,
              "sales.regions and sales.orders are linked by: "
              "sales.orders.region_id = sales.regions.id");
    before_on(NULL, &ns, "q", "SELECT r.label, o.amount FROM sales.orders "
              "o JOIN sales.regions r ON r.id = o.region_id",
              CHECK_JOIN_NOT_FK, NULL);
    /* the idle join names the table of the other schema qualified */
    before_on(NULL, &ns, "q", "SELECT r.label FROM sales.orders o JOIN "
              "sales.regions r ON r.id = o.region_id", CHECK_IDLE_JOIN,
              "The query joins sales.orders (on sales.orders.region_id = "
              "sales.regions.id)");
    before_on(NULL, &ns, "q", "SELECT r.label FROM sales.orders o, "
              "sales.regions r", CHECK_CROSS_JOIN,
              "Join them on their foreign key: sales.orders.region_id = "
              "sales.regions.id");
    /* orders (no key to regions) and sales.orders stay two tables */
    before_on(NULL, &ns, "q", "SELECT o.id FROM orders o JOIN sales.orders "
              "s ON s.id = o.id", CHECK_JOIN_NOT_FK, NULL);
}

static void joined_table_used_nowhere_else(void **state)
{
    (void)state;
    /* orders references customers and adds only its join: customers
    ** multiply per order, and those without one drop out */
    before_on(db, shop, "Show the names of all customers.",
              "SELECT c.first_name FROM customers c JOIN orders o "
              "ON o.customer_id = c.id", CHECK_IDLE_JOIN,
              "The query joins orders (on orders.customer_id = customers.id)"
              " but uses none of its columns, so each customers row appears "
              "once per matching orders row");
    /* either order of the FROM items, either side of the equality */
    before_on(db, shop, "Which customers are there?",
              "SELECT c.first_name FROM orders o JOIN customers c "
              "ON c.id = o.customer_id", CHECK_IDLE_JOIN,
              "remove the join to orders");
    /* the question names the joined table: joined on purpose */
    before_on(db, shop, "Names of customers who placed orders",
              "SELECT DISTINCT c.first_name FROM customers c JOIN orders o "
              "ON o.customer_id = c.id", 0, NULL);
    /* a column of it is used: in the select list, WHERE or ORDER BY */
    before_on(db, shop, "q", "SELECT c.first_name, o.total FROM customers c "
              "JOIN orders o ON o.customer_id = c.id", 0, NULL);
    before_on(db, shop, "q", "SELECT c.first_name FROM customers c JOIN "
              "orders o ON o.customer_id = c.id WHERE o.total > 10", 0,
              NULL);
    before_on(db, shop, "q", "SELECT c.first_name FROM customers c JOIN "
              "orders o ON o.customer_id = c.id AND o.status = 'paid'", 0,
              NULL);
    /* counting the joined rows is what the join is for */
    before_on(db, shop, "q", "SELECT c.first_name, count(*) FROM customers c "
              "JOIN orders o ON o.customer_id = c.id GROUP BY c.id", 0, NULL);
    before_on(db, shop, "q", "SELECT count(*) FROM customers c JOIN orders o "
              "ON o.customer_id = c.id", 0, NULL);
    /* the key points from the used table to the idle one: one row each */
    before_on(db, shop, "q", "SELECT o.total FROM orders o JOIN customers c "
              "ON o.customer_id = c.id", 0, NULL);
    /* a bridge between two used tables is used twice */
    before_on(db, shop, "q", "SELECT c.first_name, p.amount FROM customers c "
              "JOIN orders o ON o.customer_id = c.id JOIN payments p ON "
              "p.order_id = o.id", 0, NULL);
    /* a subquery that names it uses it */
    before_on(db, shop, "q", "SELECT c.first_name FROM customers c JOIN "
              "orders o ON o.customer_id = c.id WHERE EXISTS (SELECT 1 FROM "
              "payments p WHERE p.order_id = o.id)", 0, NULL);
    /* SELECT * shows its columns */
    before_on(db, shop, "q", "SELECT * FROM customers c JOIN orders o "
              "ON o.customer_id = c.id", 0, NULL);
}

/* A compared subquery whose select list names a column its own tables
** lack reads the outer row's column: each row compared with itself. */
static void subquery_reading_the_outer_row(void **state)
{
    (void)state;
    before("SELECT name FROM products WHERE category_id NOT IN "
           "(SELECT category_id FROM order_items)", CHECK_OUTER_REF,
           "In the subquery over order_items, category_id is not a column "
           "of its table: it is the outer query's products.category_id, so "
           "each outer row is compared with its own value. Select a column "
           "of the subquery's own tables, joining the table that holds the "
           "value if it is not one of them (category_id is a column of "
           "products).");
    before("SELECT id FROM orders WHERE shipping_country = "
           "(SELECT shipping_country FROM customers WHERE id = 1)",
           CHECK_OUTER_REF, "outer query's orders.shipping_country");
    before("SELECT email FROM customers WHERE email IN (SELECT DISTINCT "
           "email FROM orders AS o JOIN order_items AS i ON i.order_id = "
           "o.id)", CHECK_OUTER_REF,
           "over orders, order_items, email is not a column of its tables");
    /* Its own column, whatever the outer query has. */
    before("SELECT name FROM products WHERE category_id NOT IN "
           "(SELECT id FROM categories WHERE parent_id IS NULL)", 0, NULL);
    before("SELECT first_name FROM customers WHERE id IN "
           "(SELECT customer_id FROM orders)", 0, NULL);
    /* EXISTS selects nothing that counts; an outer name in the WHERE of
    ** a subquery is a correlation; a qualified one is written on purpose;
    ** a CTE's columns are unknown. */
    before("SELECT first_name FROM customers AS c WHERE EXISTS (SELECT "
           "first_name FROM orders AS o WHERE o.customer_id = c.id)", 0,
           NULL);
    before("SELECT id FROM orders AS o WHERE total > (SELECT avg(total) "
           "FROM orders WHERE customer_id = o.customer_id)", 0, NULL);
    before("SELECT id FROM customers AS c WHERE id IN "
           "(SELECT c.id FROM orders)", 0, NULL);
    before("WITH r AS (SELECT customer_id AS cid FROM orders) SELECT id "
           "FROM customers WHERE id IN (SELECT cid FROM r)", 0, NULL);
    before("SELECT id FROM orders WHERE total = (SELECT total)", 0, NULL);
}

/* A column compared with itself: a join that links its table to
** nothing, a condition never true. */
static void column_compared_with_itself(void **state)
{
    struct check_finding *f = NULL;
    int n = -1;

    (void)state;
    /* In an ON clause it is a cross join too: both are said. */
    assert_int_equal(check_before(db, shop, values, "a question",
                                  "SELECT c.first_name, o.total FROM "
                                  "customers AS c "
                                  "JOIN orders AS o ON o.customer_id = c.id "
                                  "JOIN payments AS p ON p.order_id = "
                                  "p.order_id", &f, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(f[0].kind, CHECK_SELF_COMPARE);
    assert_string_equal(f[0].hint,
           "ON p.order_id = p.order_id compares payments.order_id with "
           "itself, so the join links it to no other table: each of its "
           "rows meets every row of the others. Compare it with the column "
           "of another table that the question means, joining that table "
           "if the query lacks it (order_id is also a column of "
           "order_items).");
    assert_int_equal(f[1].kind, CHECK_CROSS_JOIN);
    check_findings_free(f, n);
    before("SELECT o.id FROM orders AS o JOIN payments AS p ON p.order_id "
           "= o.id WHERE p.amount > amount", CHECK_SELF_COMPARE,
           "p.amount > amount compares payments.amount with itself, the "
           "same value on both sides in every row. Compare it with the "
           "column of another table that the question means, joining that "
           "table if the query lacks it.");
    before("SELECT id FROM orders WHERE total <> orders.total",
           CHECK_SELF_COMPARE, "total <> orders.total compares");
    /* In parentheses too, as a literal compared there is. */
    before("SELECT id FROM orders WHERE (total = total)",
           CHECK_SELF_COMPARE, "total = total compares");
    before("SELECT id FROM orders WHERE (status = 'Paid' OR total > 3)",
           CHECK_LITERAL_MISSING, "it has 'paid'");
    /* Two items of one table, another column, arithmetic, a function. */
    before("SELECT a.id FROM customers AS a JOIN customers AS b ON a.city "
           "= b.city WHERE a.id < b.id", 0, NULL);
    before("SELECT id FROM orders WHERE total = total + 1", 0, NULL);
    before("SELECT id FROM orders WHERE total = round(total)", 0, NULL);
    before("SELECT o.id FROM orders AS o WHERE o.total > (SELECT "
           "avg(o2.total) FROM orders AS o2 WHERE o2.customer_id = "
           "o.customer_id)", 0, NULL);
}

static void kinds_have_names(void **state)
{
    (void)state;
    assert_string_equal(check_kind_str(CHECK_JOIN_NOT_FK), "join_not_fk");
    assert_string_equal(check_kind_str(CHECK_SHAPE), "shape");
    assert_string_equal(check_kind_str(CHECK_IDLE_JOIN), "idle_join");
    assert_string_equal(check_kind_str(CHECK_VALUE_ELSEWHERE),
                        "value_elsewhere");
    assert_string_equal(check_kind_str(CHECK_OUTER_REF), "outer_ref");
    assert_string_equal(check_kind_str(CHECK_SELF_COMPARE), "self_compare");
    check_findings_free(NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(join_off_the_foreign_key),
        cmocka_unit_test(tables_with_nothing_linking_them),
        cmocka_unit_test(aggregate_with_bare_column),
        cmocka_unit_test(text_value_not_in_the_column),
        cmocka_unit_test(text_value_found_nowhere_in_the_column),
        cmocka_unit_test(estimated_big_tables_are_not_read_whole),
        cmocka_unit_test(empty_result_look_is_bounded),
        cmocka_unit_test(long_stored_values_are_cut_not_the_findings),
        cmocka_unit_test(unreadable_sql_gives_no_finding),
        cmocka_unit_test(result_column_all_null),
        cmocka_unit_test(result_shape_against_the_question),
        cmocka_unit_test(spider_chinook),
        cmocka_unit_test(checks_name_tables_of_other_schemas),
        cmocka_unit_test(joined_table_used_nowhere_else),
        cmocka_unit_test(subquery_reading_the_outer_row),
        cmocka_unit_test(column_compared_with_itself),
        cmocka_unit_test(kinds_have_names),
    };
    test_filter_from_env();

    return cmocka_run_group_tests(tests, setup, teardown);
}
