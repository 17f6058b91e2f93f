/* test_analyze.c - the query analysis: aliases, joins, cross joins,
** aggregates and literals over the shop schema, and garbage survived. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "sql/analyze.h"

static askdb_db *db;
static const struct db_schema *shop;

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

/* Analyze sql, which must be readable. */
static void analyze(const char *sql, struct sqla *a)
{
    int rc = sqla_analyze(sql, shop, a);

    if (rc != 0)
        fail_msg("sqla_analyze returned %d on: %s", rc, sql);
}

static int has_table(const struct sqla *a, const char *t)
{
    int k;

    for (k = 0; k < a->ntables; k++)
        if (strcmp(a->tables[k], t) == 0)
            return 1;
    return 0;
}

/* Whether the join ta.ca = tb.cb (either way round) was found. */
static int has_join(const struct sqla *a, const char *ta, const char *ca,
                    const char *tb, const char *cb)
{
    int k;

    for (k = 0; k < a->njoins; k++) {
        const struct sqla_join *j = &a->joins[k];
        if ((strcmp(j->a.table, ta) == 0 && strcmp(j->a.column, ca) == 0 &&
             strcmp(j->b.table, tb) == 0 && strcmp(j->b.column, cb) == 0) ||
            (strcmp(j->b.table, ta) == 0 && strcmp(j->b.column, ca) == 0 &&
             strcmp(j->a.table, tb) == 0 && strcmp(j->a.column, cb) == 0))
            return 1;
    }
    return 0;
}

static int has_lit(const struct sqla *a, const char *t, const char *c,
                   const char *op, const char *lit)
{
    int k;

    for (k = 0; k < a->nlits; k++) {
        const struct sqla_literal *l = &a->lits[k];
        if (strcmp(l->col.table, t) == 0 && strcmp(l->col.column, c) == 0 &&
            strcmp(l->op, op) == 0 && strcmp(l->literal, lit) == 0)
            return 1;
    }
    return 0;
}

static void resolves_aliases_in_on_and_where(void **state)
{
    struct sqla a;

    (void)state;
    analyze("SELECT c.first_name, o.total FROM customers c "
            "JOIN orders AS o ON o.customer_id = c.id", &a);
    assert_int_equal(a.ntables, 2);
    assert_true(has_table(&a, "customers") && has_table(&a, "orders"));
    assert_int_equal(a.njoins, 1);
    assert_true(has_join(&a, "orders", "customer_id", "customers", "id"));
    assert_int_equal(a.ncross, 0);
    assert_int_equal(a.agg_without_group, 0);
    sqla_free(&a);

    /* A WHERE equality between two tables is a join too; names keep the
    ** schema's spelling whatever the case written. */
    analyze("select * from CUSTOMERS c, Orders o "
            "where C.ID = o.Customer_Id and c.country = 'DE'", &a);
    assert_int_equal(a.njoins, 1);
    assert_true(has_join(&a, "orders", "customer_id", "customers", "id"));
    assert_int_equal(a.ncross, 0);
    assert_int_equal(a.nlits, 1);
    assert_true(has_lit(&a, "customers", "country", "=", "DE"));
    sqla_free(&a);

    /* Bare names resolve to the one FROM table that has them. */
    analyze("SELECT first_name FROM customers JOIN orders "
            "ON customer_id = customers.id WHERE status = 'paid'", &a);
    assert_true(has_join(&a, "orders", "customer_id", "customers", "id"));
    assert_true(has_lit(&a, "orders", "status", "=", "paid"));
    sqla_free(&a);
}

static void finds_tables_with_nothing_linking_them(void **state)
{
    struct sqla a;

    (void)state;
    analyze("SELECT c.first_name, p.name FROM customers c, products p "
            "WHERE c.country = 'DE'", &a);
    assert_int_equal(a.ncross, 1);
    assert_string_equal(a.cross_pairs[0], "customers x products");
    sqla_free(&a);

    analyze("SELECT count(*) FROM orders JOIN payments", &a);
    assert_int_equal(a.ncross, 1);
    assert_string_equal(a.cross_pairs[0], "orders x payments");
    sqla_free(&a);

    /* reported once, however many SELECTs repeat it */
    analyze("SELECT o.id FROM orders o, payments p INTERSECT "
            "SELECT o.id FROM orders o, payments p", &a);
    assert_int_equal(a.ncross, 1);
    sqla_free(&a);

    /* Filters on each table joined by OR do not link them. */
    analyze("SELECT * FROM customers c JOIN orders o JOIN payments p "
            "ON p.order_id = o.id WHERE c.country = 'DE' OR p.amount > 5",
            &a);
    assert_int_equal(a.ncross, 1);
    assert_string_equal(a.cross_pairs[0], "customers x orders");
    sqla_free(&a);

    /* A condition on one side only does not link. */
    analyze("SELECT * FROM orders o JOIN payments p ON p.amount > 10", &a);
    assert_int_equal(a.ncross, 1);
    sqla_free(&a);
}

static void linked_tables_are_no_cross_join(void **state)
{
    static const char *const good[] = {
        /* through a third table */
        "SELECT * FROM orders o, customers c, payments p "
        "WHERE o.customer_id = c.id AND p.order_id = o.id",
        /* inequality and BETWEEN conditions link as well */
        "SELECT * FROM orders o, payments p WHERE p.amount BETWEEN 1 AND "
        "o.total AND o.status = 'paid'",
        /* each side of an OR, in parentheses too */
        "SELECT * FROM orders o, customers c WHERE o.status = 'paid' AND "
        "(o.customer_id = c.id OR o.id = c.id)",
        /* inside a function call the OR is one condition */
        "SELECT * FROM orders o, customers c WHERE "
        "coalesce(o.customer_id = c.id OR c.id IS NULL, 0)",
        /* a correlated subquery names both */
        "SELECT * FROM customers c, orders o WHERE EXISTS (SELECT 1 FROM "
        "payments p WHERE p.order_id = o.id AND o.customer_id = c.id)",
        "SELECT * FROM orders JOIN payments USING (id)",
        "SELECT * FROM orders NATURAL JOIN payments",
        /* a one-row derived table is not a schema table */
        "SELECT c.first_name, s.n FROM customers c, "
        "(SELECT count(*) AS n FROM orders) s",
        /* separate SELECTs each with one table */
        "SELECT country FROM customers UNION SELECT shipping_country "
        "FROM orders",
        "SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM "
        "customers)",
        /* a nested join */
        "SELECT * FROM (orders o JOIN customers c ON o.customer_id = c.id) "
        "JOIN payments p ON p.order_id = o.id",
        NULL
    };
    struct sqla a;
    int k;

    (void)state;
    for (k = 0; good[k]; k++) {
        analyze(good[k], &a);
        if (a.ncross)
            fail_msg("cross join %s reported in: %s", a.cross_pairs[0],
                     good[k]);
        sqla_free(&a);
    }
}

static void finds_aggregate_with_bare_column(void **state)
{
    static const char *const good[] = {
        "SELECT country, count(*) FROM customers GROUP BY country",
        "SELECT count(*), avg(total) FROM orders",
        /* SQLite's documented bare column with one min() or max() */
        "SELECT first_name, max(signup_date) FROM customers",
        /* window functions are no aggregates */
        "SELECT country, count(*) OVER () FROM customers",
        "SELECT country, count(*) OVER (PARTITION BY country ORDER BY id) "
        "FROM customers",
        /* an alias named like a column, with or without AS */
        "SELECT count(*) country FROM customers",
        "SELECT count(*) AS country FROM customers",
        /* the aggregate is in a subquery, a level of its own */
        "SELECT first_name, (SELECT max(total) FROM orders o WHERE "
        "o.customer_id = c.id) FROM customers c",
        /* a column of the outer query is one value per outer row */
        "SELECT c.first_name FROM customers c WHERE 3 < (SELECT count(*) "
        "FROM orders o WHERE o.customer_id = c.id)",
        "SELECT max(a, b) FROM (SELECT 1 AS a, 2 AS b)",
        "SELECT max(quantity, 2), product_id FROM order_items",
        /* fixed by the WHERE clause, either way round */
        "SELECT country, count(*) FROM customers WHERE country = 'DE'",
        "SELECT id, sum(total) FROM orders WHERE 7 = id",
        NULL
    };
    struct sqla a;
    int k;

    (void)state;
    analyze("SELECT country, count(*) FROM customers", &a);
    assert_int_equal(a.agg_without_group, 1);
    assert_string_equal(a.agg_func, "count");
    assert_string_equal(a.bare_col, "customers.country");
    sqla_free(&a);

    analyze("SELECT c.last_name, SUM(o.total) AS spent FROM customers c "
            "JOIN orders o ON o.customer_id = c.id", &a);
    assert_int_equal(a.agg_without_group, 1);
    assert_string_equal(a.agg_func, "SUM");
    assert_string_equal(a.bare_col, "customers.last_name");
    sqla_free(&a);

    for (k = 0; good[k]; k++) {
        analyze(good[k], &a);
        if (a.agg_without_group)
            fail_msg("aggregate without GROUP BY reported (%s) in: %s",
                     a.bare_col, good[k]);
        sqla_free(&a);
    }
}

static void collects_text_literal_comparisons(void **state)
{
    struct sqla a;

    (void)state;
    analyze("SELECT * FROM customers WHERE country != 'fr' AND "
            "loyalty_tier IN ('gold', 'Silver') AND city LIKE 'paris' AND "
            "last_name LIKE 'S%' AND 'Tokyo' = city AND email = "
            "\"x@y.z\" AND \"country\" = 'IT' AND lower(city) = 'rome' AND "
            "first_name || 'x' = 'Annax' AND city NOT IN ('Oslo')", &a);
    assert_true(has_lit(&a, "customers", "country", "!=", "fr"));
    assert_true(has_lit(&a, "customers", "loyalty_tier", "IN", "gold"));
    assert_true(has_lit(&a, "customers", "loyalty_tier", "IN", "Silver"));
    assert_true(has_lit(&a, "customers", "city", "LIKE", "paris"));
    assert_true(has_lit(&a, "customers", "city", "=", "Tokyo"));
    /* a double-quoted name that is no column is a string to SQLite */
    assert_true(has_lit(&a, "customers", "email", "=", "x@y.z"));
    /* ... and one that is a column stays a column */
    assert_true(has_lit(&a, "customers", "country", "=", "IT"));
    assert_true(has_lit(&a, "customers", "city", "NOT IN", "Oslo"));
    /* wildcards and expressions are not plain values */
    assert_int_equal(a.nlits, 8);
    assert_int_equal(a.njoins, 0);
    sqla_free(&a);

    /* In subqueries and CTEs, resolved in their own scope; a CTE's
    ** columns are not the schema's. */
    analyze("WITH de AS (SELECT * FROM customers WHERE country = 'DE') "
            "SELECT count(*) FROM orders WHERE customer_id IN (SELECT id "
            "FROM de WHERE city = 'Cologne') AND status = 'it''s'", &a);
    assert_true(has_lit(&a, "customers", "country", "=", "DE"));
    assert_true(has_lit(&a, "orders", "status", "=", "it's"));
    assert_int_equal(a.nlits, 2);
    assert_int_equal(a.ntables, 2);
    sqla_free(&a);

    /* Unqualified names of a correlated subquery reach the outer FROM. */
    analyze("SELECT * FROM customers c WHERE EXISTS (SELECT 1 FROM orders "
            "o WHERE o.customer_id = c.id AND loyalty_tier = 'gold')", &a);
    assert_true(has_lit(&a, "customers", "loyalty_tier", "=", "gold"));
    assert_true(has_join(&a, "orders", "customer_id", "customers", "id"));
    sqla_free(&a);
}

static void notes_select_star_of_the_statement(void **state)
{
    static const struct {
        const char *sql;
        int star;
    } cases[] = {
        {"SELECT * FROM customers", 1},
        {"SELECT c.* FROM customers c", 1},
        {"SELECT id, * FROM customers", 1},
        {"SELECT count(*) FROM customers", 0},
        {"SELECT 2 * 3 FROM customers", 0},
        {"SELECT id FROM (SELECT * FROM customers)", 0},
        {"WITH t AS (SELECT * FROM customers) SELECT id FROM t", 0},
        {"WITH t AS (SELECT id FROM customers) SELECT * FROM t", 1},
    };
    struct sqla a;
    size_t k;

    (void)state;
    for (k = 0; k < sizeof cases / sizeof *cases; k++) {
        analyze(cases[k].sql, &a);
        if (a.select_star != cases[k].star)
            fail_msg("select_star %d on: %s", a.select_star, cases[k].sql);
        sqla_free(&a);
    }
}

static void ambiguous_and_unknown_names_stay_unresolved(void **state)
{
    struct sqla a;

    (void)state;
    /* status is a column of orders and of payments */
    analyze("SELECT * FROM orders o JOIN payments p ON p.order_id = o.id "
            "WHERE status = 'paid'", &a);
    assert_int_equal(a.nlits, 0);
    sqla_free(&a);

    /* a derived table's columns are unknown */
    analyze("SELECT * FROM (SELECT country AS k FROM customers) t "
            "WHERE k = 'DE'", &a);
    assert_int_equal(a.nlits, 0);
    sqla_free(&a);
}

static void statements_it_cannot_read(void **state)
{
    static const char *const bad[] = {
        "", "   ", "DELETE FROM customers", "SELECT 'unterminated",
        "SELECT \"unterminated", "SELECT 1 /* open comment",
        "SELECT * FROM customers c WHERE ((c.id = 1", "hello world",
        NULL
    };
    struct sqla a;
    int k;

    (void)state;
    for (k = 0; bad[k]; k++) {
        if (sqla_analyze(bad[k], shop, &a) != 1)
            fail_msg("readable: %s", bad[k]);
        sqla_free(&a);
    }
    assert_int_equal(sqla_analyze(NULL, shop, &a), 1);
    sqla_free(&a);
    /* No schema: still a reading, nothing resolved. */
    assert_int_equal(sqla_analyze("SELECT a FROM t WHERE b = 'x'", NULL, &a),
                     0);
    assert_int_equal(a.nlits, 0);
    sqla_free(&a);
}

/* Nesting past the bounds is refused, not recursed into. */
static void deep_nesting_is_bounded(void **state)
{
    struct buf_s {
        char *p;
        size_t n;
    } b;
    struct sqla a;
    size_t k, cap = 200000;
    int rc;

    (void)state;
    b.p = malloc(cap);
    assert_non_null(b.p);

    /* 100,000 open parentheses */
    memset(b.p, '(', cap - 1);
    b.p[cap - 1] = '\0';
    assert_int_equal(sqla_analyze(b.p, shop, &a), 1);
    sqla_free(&a);

    /* 150 nested subqueries, balanced */
    b.n = 0;
    for (k = 0; k < 150; k++)
        b.n += (size_t)snprintf(b.p + b.n, cap - b.n,
                                "SELECT * FROM customers WHERE id IN (");
    b.n += (size_t)snprintf(b.p + b.n, cap - b.n, "SELECT 1");
    for (k = 0; k < 150; k++)
        b.p[b.n++] = ')';
    b.p[b.n] = '\0';
    rc = sqla_analyze(b.p, shop, &a);
    assert_int_equal(rc, 1);
    sqla_free(&a);

    /* 30 nested subqueries are fine */
    b.n = 0;
    for (k = 0; k < 30; k++)
        b.n += (size_t)snprintf(b.p + b.n, cap - b.n,
                                "SELECT * FROM customers WHERE id IN (");
    b.n += (size_t)snprintf(b.p + b.n, cap - b.n, "SELECT 1");
    for (k = 0; k < 30; k++)
        b.p[b.n++] = ')';
    b.p[b.n] = '\0';
    assert_int_equal(sqla_analyze(b.p, shop, &a), 0);
    assert_int_equal(a.ntables, 1);
    sqla_free(&a);

    /* a very long statement is over the size bound */
    b.n = (size_t)snprintf(b.p, cap, "SELECT 1");
    while (b.n + 3 < cap - 1) {
        memcpy(b.p + b.n, "+1", 2);
        b.n += 2;
    }
    b.p[b.n] = '\0';
    assert_int_equal(sqla_analyze(b.p, shop, &a), 1);
    sqla_free(&a);
    free(b.p);
}

/* A small deterministic generator (xorshift), so failures reproduce. */
static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Random bytes, random tokens and every prefix and mangling of real
** queries: any return code, no crash, no leak, no sanitizer report. */
static void survives_garbage(void **state)
{
    static const char *const pieces[] = {
        "SELECT", "FROM", "WHERE", "JOIN", "ON", "USING", "(", ")", ",",
        "=", "!=", "<>", "IN", "NOT", "LIKE", "AND", "OR", "BETWEEN",
        "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "UNION", "WITH", "AS",
        "count", "max", "(*)", "customers", "orders", "c", "o", ".", "id",
        "customer_id", "'x'", "\"y\"", "`z`", "[w]", "'", "\"", "OVER",
        "NATURAL", "LEFT", "CROSS", "VALUES", "*", "1", ";", "--", "/*",
        "*/", "\n", "CASE", "WHEN", "THEN", "END", "DISTINCT", "EXISTS",
        "INDEXED", "FILTER", "RECURSIVE", "\xc3\xa9", "\xff", NULL
    };
    static const char *const real[] = {
        "SELECT c.first_name, count(*) FROM customers AS c JOIN orders o "
        "ON o.customer_id = c.id WHERE c.country IN ('DE', \"FR\") AND "
        "o.status LIKE 'paid' GROUP BY c.id HAVING count(*) > 1 "
        "ORDER BY 2 DESC LIMIT 5",
        "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t "
        "WHERE n < 5) SELECT * FROM t, (SELECT id FROM customers) s",
        NULL
    };
    size_t npieces = sizeof pieces / sizeof *pieces - 1;
    char text[2048];
    struct sqla a;
    uint32_t seed = 0x2545f491u;
    size_t n, len, k;
    int it, rc;

    (void)state;
    for (it = 0; it < 3000; it++) {
        len = rnd(&seed) % 300;
        for (n = 0; n < len; n++)
            text[n] = (char)(rnd(&seed) % 255 + 1);
        text[n] = '\0';
        rc = sqla_analyze(text, shop, &a);
        assert_true(rc == 0 || rc == 1);
        sqla_free(&a);

        n = 0;
        len = rnd(&seed) % 60;
        for (k = 0; k < len && n + 40 < sizeof text; k++)
            n += (size_t)snprintf(text + n, sizeof text - n, "%s ",
                                  pieces[rnd(&seed) % npieces]);
        rc = sqla_analyze(text, shop, &a);
        assert_true(rc == 0 || rc == 1);
        sqla_free(&a);
    }
    for (k = 0; real[k]; k++) {
        len = strlen(real[k]);
        for (n = 0; n <= len; n++) {
            memcpy(text, real[k], n); /* every prefix */
            text[n] = '\0';
            rc = sqla_analyze(text, shop, &a);
            assert_true(rc == 0 || rc == 1);
            sqla_free(&a);
            snprintf(text, sizeof text, "%s", real[k]); /* one byte cut */
            memmove(text + n, text + n + (n < len), len - n);
            rc = sqla_analyze(text, shop, &a);
            assert_true(rc == 0 || rc == 1);
            sqla_free(&a);
        }
    }
}

/* Re-qualification: each case gives the statement expected, or NULL for
** "nothing changes". */
static void requalify_moves_columns_to_their_one_owner(void **state)
{
    static const char *const cases[][2] = {
        /* amount belongs to p, not o */
        {"SELECT c.first_name, o.amount FROM customers AS c JOIN orders AS "
         "o ON o.customer_id = c.id JOIN payments AS p ON p.order_id = o.id",
         "SELECT c.first_name, p.amount FROM customers AS c JOIN orders AS "
         "o ON o.customer_id = c.id JOIN payments AS p ON p.order_id = o.id"},
        /* an alias that names no item: T3 */
        {"SELECT T3.name FROM products AS T1 JOIN categories AS T2 ON "
         "T1.category_id = T2.id WHERE T2.price > 3",
         "SELECT T3.name FROM products AS T1 JOIN categories AS T2 ON "
         "T1.category_id = T2.id WHERE T1.price > 3"},
        /* a table name as qualifier, quoted owner kept as written */
        {"SELECT orders.method FROM orders JOIN payments ON "
         "payments.order_id = orders.id",
         "SELECT payments.method FROM orders JOIN payments ON "
         "payments.order_id = orders.id"},
        /* two owners of status: nothing */
        {"SELECT c.status FROM customers c JOIN orders o ON o.customer_id "
         "= c.id JOIN payments p ON p.order_id = o.id", NULL},
        /* scopes apart: the subquery's o lacks first_name, and the outer
        ** customers is not its level's item */
        {"SELECT id FROM customers c WHERE id IN (SELECT o.first_name "
         "FROM orders o)", NULL},
        /* right already */
        {"SELECT p.amount FROM payments p", NULL},
        /* a derived table: its columns are unknown */
        {"SELECT d.total FROM (SELECT id FROM orders) AS d", NULL},
        /* the joined item's only column in its own ON clause: moved, it
        ** would link o to nothing (ON p.order_id = p.method) */
        {"SELECT o.id FROM payments p JOIN orders o ON p.order_id = "
         "o.method", NULL},
        {"SELECT o.id FROM payments AS p JOIN orders AS o ON o.method = "
         "p.order_id WHERE p.amount > 3", NULL},
        /* ... but with another column of o there, it moves */
        {"SELECT o.id FROM payments p JOIN orders o ON o.id = p.order_id "
         "AND o.method = 'card'",
         "SELECT o.id FROM payments p JOIN orders o ON o.id = p.order_id "
         "AND p.method = 'card'"},
        /* not onto the column it is compared with: p.amount > p.amount
        ** would never hold, ON p.amount = p.amount would link p to
        ** nothing, and two that would both move meet the same way */
        {"SELECT p.id FROM payments p JOIN order_items i ON i.order_id = "
         "p.order_id WHERE i.amount > p.amount", NULL},
        {"SELECT c.first_name FROM customers c JOIN orders o ON "
         "o.customer_id = c.id JOIN payments p ON o.amount = p.amount",
         NULL},
        {"SELECT o.id FROM orders o JOIN customers c ON c.id = "
         "o.customer_id JOIN payments p ON p.order_id = o.id WHERE "
         "o.amount = c.amount", NULL},
        {"SELECT o.amount + p.amount FROM orders o JOIN payments p ON "
         "p.order_id = o.id", NULL},
        /* ... but onto another column, or the same one of another item */
        {"SELECT p.id FROM payments p JOIN orders o ON o.id = p.order_id "
         "WHERE o.amount > p.id",
         "SELECT p.id FROM payments p JOIN orders o ON o.id = p.order_id "
         "WHERE p.amount > p.id"},
        {"SELECT p.id FROM payments p JOIN orders o ON o.id = p.order_id "
         "JOIN payments q ON q.order_id = o.id WHERE o.paid_at > q.paid_at",
         NULL},
    };
    size_t i;
    char *out, *what;
    int n;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        n = sqla_requalify(cases[i][0], shop, &out, &what);
        if (!cases[i][1]) {
            if (n != 0)
                fail_msg("changed: %s -> %s", cases[i][0], out);
            assert_null(out);
            continue;
        }
        if (n <= 0)
            fail_msg("unchanged (%d): %s", n, cases[i][0]);
        assert_string_equal(out, cases[i][1]);
        assert_non_null(what);
        free(out);
        free(what);
    }
    n = sqla_requalify("SELECT o.amount FROM orders o JOIN payments p ON "
                       "p.order_id = o.id", shop, &out, &what);
    assert_int_equal(n, 1);
    assert_string_equal(what, "o.amount -> p.amount");
    free(out);
    free(what);
    assert_int_equal(sqla_requalify("SELECT ((((", shop, &out, NULL), 0);
    assert_null(out);
}

/* A column that lives in a table the query lacks brings that table in
** along its one foreign key; anything less certain changes nothing. */
static void join_missing_brings_in_the_owner(void **state)
{
    static const char *const cases[][2] = {
        {"SELECT country FROM orders WHERE id = 1",
         "SELECT customers.country FROM orders JOIN customers ON "
         "customers.id = orders.customer_id WHERE orders.id = 1"},
        {"SELECT T1.method, count(*) FROM orders AS T1 GROUP BY T1.method",
         "SELECT T2.method, count(*) FROM orders AS T1 JOIN payments AS T2 "
         "ON T2.order_id = T1.id GROUP BY T2.method"},
        {"SELECT o.id FROM orders o WHERE o.method = 'card' ORDER BY o.id",
         "SELECT o.id FROM orders o JOIN payments ON payments.order_id = "
         "o.id WHERE payments.method = 'card' ORDER BY o.id"},
        /* two tables have name: nothing */
        {"SELECT name FROM order_items", NULL},
        /* no foreign key between customers and payments */
        {"SELECT amount FROM customers", NULL},
        /* a column some table of the level has: requalify's case */
        {"SELECT o.amount FROM orders o JOIN payments p ON p.order_id = o.id",
         NULL},
        /* a derived table: unknown columns */
        {"SELECT country FROM (SELECT * FROM orders) AS d", NULL},
    };
    size_t i;
    char *out, *what;
    int n;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        n = sqla_join_missing(cases[i][0], shop, &out, &what);
        if (!cases[i][1]) {
            if (n != 0)
                fail_msg("changed: %s -> %s", cases[i][0], out);
            assert_null(out);
            continue;
        }
        if (n <= 0)
            fail_msg("unchanged (%d): %s", n, cases[i][0]);
        assert_string_equal(out, cases[i][1]);
        assert_non_null(what);
        free(out);
        free(what);
    }
    n = sqla_join_missing("SELECT country FROM orders", shop, &out, &what);
    assert_int_equal(n, 1);
    assert_string_equal(what, "country: JOIN customers ON customers.id = "
                              "orders.customer_id");
    free(out);
    free(what);
}

/*
** A schema with namespaces, as the PostgreSQL and DuckDB drivers read it:
** customers and orders reached by their names; sales.orders (same name)
** and sales.regions only qualified; a foreign key within sales.
*/
static struct db_column ns_cust[] = {
    {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
    {"name", "text", 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column ns_ord[] = {
    {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
    {"customer_id", "integer", 0, NULL, 0, NULL, 0, NULL},
    {"total", "numeric", 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column ns_sord[] = {
    {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
    {"region_id", "integer", 0, NULL, 0, NULL, 0, NULL},
    {"amount", "numeric", 0, NULL, 0, NULL, 0, NULL},
    {"channel", "text", 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column ns_reg[] = {
    {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
    {"label", "text", 0, NULL, 0, NULL, 0, NULL},
};
static struct db_fkey ns_ord_fk[] = {{"customer_id", "customers", "id"}};
static struct db_fkey ns_sord_fk[] = {{"region_id", "sales.regions", "id"}};
static struct db_table ns_tables[] = {
    {"customers", 0, ns_cust, 2, NULL, 0, NULL, 0, 10, 0, 0, NULL, NULL,
     NULL, 0},
    {"orders", 0, ns_ord, 3, ns_ord_fk, 1, NULL, 0, 10, 0, 0, NULL, NULL,
     NULL, 0},
    {"orders", 0, ns_sord, 4, ns_sord_fk, 1, NULL, 0, 10, 0, 0, NULL,
     "sales", "sales.orders", 0},
    {"regions", 0, ns_reg, 2, NULL, 0, NULL, 0, 3, 0, 0, NULL, "sales",
     "sales.regions", 0},
};
static const struct db_schema ns = {
    .tables = ns_tables, .ntables = 4, .case_folds = 1};

static void analyze_ns(const char *sql, struct sqla *a)
{
    int rc = sqla_analyze(sql, &ns, a);

    if (rc != 0)
        fail_msg("sqla_analyze returned %d on: %s", rc, sql);
}

/* A qualified FROM item is the table of its schema, reported by its
** qualified name; columns, joins and literals resolve through it. */
static void qualified_tables_resolve_in_their_schema(void **state)
{
    struct sqla a;

    (void)state;
    analyze_ns("SELECT r.label, sum(o.amount) FROM sales.orders o JOIN "
               "sales.regions AS r ON r.id = o.region_id WHERE r.label = "
               "'North' GROUP BY r.label", &a);
    assert_int_equal(a.ntables, 2);
    assert_true(has_table(&a, "sales.orders"));
    assert_true(has_table(&a, "sales.regions"));
    assert_true(has_join(&a, "sales.regions", "id", "sales.orders",
                         "region_id"));
    assert_true(has_lit(&a, "sales.regions", "label", "=", "North"));
    assert_int_equal(a.ncross, 0);
    sqla_free(&a);

    /* quoted parts, a bare column only the schema's table has, and the
    ** table's own name and schema.table.column as qualifiers */
    analyze_ns("SELECT channel, orders.id, sales.orders.region_id FROM "
               "\"sales\".\"orders\" WHERE channel = 'web'", &a);
    assert_int_equal(a.ntables, 1);
    assert_true(has_table(&a, "sales.orders"));
    assert_true(has_lit(&a, "sales.orders", "channel", "=", "web"));
    sqla_free(&a);

    /* a qualifier that is no namespace (the search path's own schema)
    ** reaches the table the name alone reaches */
    analyze_ns("SELECT o.total FROM public.orders o WHERE o.total > 1", &a);
    assert_true(has_table(&a, "orders"));
    assert_int_equal(a.ntables, 1);
    sqla_free(&a);
}

/* The same name in two schemas stays two tables: the bare name is the
** one it reaches, the qualified one the other. A name only another
** schema has is no table unqualified. */
static void same_name_in_two_schemas_stays_apart(void **state)
{
    struct sqla a;

    (void)state;
    analyze_ns("SELECT c.name, s.amount FROM orders o JOIN customers c ON "
               "c.id = o.customer_id JOIN sales.orders s ON s.id = o.id "
               "WHERE s.channel = 'web'", &a);
    assert_int_equal(a.ntables, 3);
    assert_true(has_table(&a, "orders"));
    assert_true(has_table(&a, "sales.orders"));
    assert_true(has_join(&a, "customers", "id", "orders", "customer_id"));
    assert_true(has_join(&a, "sales.orders", "id", "orders", "id"));
    assert_true(has_lit(&a, "sales.orders", "channel", "=", "web"));
    sqla_free(&a);

    analyze_ns("SELECT amount FROM orders", &a);
    assert_true(has_table(&a, "orders"));
    assert_false(has_table(&a, "sales.orders"));
    assert_int_equal(a.nlits, 0);
    sqla_free(&a);

    analyze_ns("SELECT label FROM regions WHERE label = 'North'", &a);
    assert_int_equal(a.ntables, 0);
    assert_int_equal(a.nlits, 0);
    sqla_free(&a);

    /* cross joins name tables the same way */
    analyze_ns("SELECT * FROM sales.orders, customers", &a);
    assert_int_equal(a.ncross, 1);
    assert_string_equal(a.cross_pairs[0], "sales.orders x customers");
    sqla_free(&a);

    assert_ptr_equal(schema_table(&ns, "orders"), &ns_tables[1]);
    assert_ptr_equal(schema_table(&ns, "SALES.Orders"), &ns_tables[2]);
    assert_null(schema_table(&ns, "regions"));
    assert_ptr_equal(schema_table_in(&ns, "sales", "regions"),
                     &ns_tables[3]);
    assert_ptr_equal(schema_table_in(&ns, "public", "orders"),
                     &ns_tables[1]);
    assert_ptr_equal(schema_table_in(&ns, NULL, "orders"), &ns_tables[1]);
    assert_null(schema_table_in(&ns, "hr", "regions"));
}

/* The rewrites keep the schema of a table: a column moves to the one
** table of its level that has it, a missing table is joined qualified. */
static void rewrites_keep_the_schema_of_a_table(void **state)
{
    char *out, *what;
    int n;

    (void)state;
    n = sqla_requalify("SELECT o.label FROM sales.orders o JOIN "
                       "sales.regions r ON r.id = o.region_id", &ns, &out,
                       &what);
    assert_int_equal(n, 1);
    assert_string_equal(out, "SELECT r.label FROM sales.orders o JOIN "
                             "sales.regions r ON r.id = o.region_id");
    free(out);
    free(what);
    n = sqla_join_missing("SELECT label FROM sales.orders WHERE id = 1",
                          &ns, &out, &what);
    assert_int_equal(n, 1);
    assert_string_equal(out, "SELECT regions.label FROM sales.orders JOIN "
                             "sales.regions ON regions.id = "
                             "orders.region_id WHERE orders.id = 1");
    assert_string_equal(what, "label: JOIN sales.regions ON regions.id = "
                              "orders.region_id");
    free(out);
    free(what);
    /* schema.table.column is left as written */
    assert_int_equal(sqla_requalify("SELECT sales.orders.label FROM "
                                    "sales.orders JOIN sales.regions ON "
                                    "regions.id = orders.region_id", &ns,
                                    &out, NULL), 0);
    assert_null(out);
}

/* The comparison at a byte position, both sides cast to text; nothing
** when the position starts no comparison of two plain operands. */
static void cast_compare_at(const char *sql, const char *op_at,
                            const char *want, const char *want_what)
{
    char *out = NULL, *what = NULL;
    const char *at = op_at ? strstr(sql, op_at) : NULL;
    int pos = at ? (int)(at - sql) : 0;
    int rc = sqla_cast_compare(sql, op_at ? pos : -1, &out, &what);

    if (!want) {
        assert_int_equal(rc, 0);
        assert_null(out);
        assert_null(what);
        return;
    }
    assert_int_equal(rc, 1);
    assert_string_equal(out, want);
    assert_string_equal(what, want_what);
    free(out);
    free(what);
}

static void cast_compare_casts_both_sides(void **state)
{
    (void)state;
    cast_compare_at("SELECT t.name FROM t JOIN p ON t.id = p.team_id",
                    "= p.",
                    "SELECT t.name FROM t JOIN p ON CAST(t.id AS TEXT) = "
                    "CAST(p.team_id AS TEXT)",
                    "t.id = p.team_id compared as text");
    cast_compare_at("SELECT 1 FROM a WHERE s.a.x<>\"B\".y AND z = 1", "<>",
                    "SELECT 1 FROM a WHERE CAST(s.a.x AS TEXT)<>"
                    "CAST(\"B\".y AS TEXT) AND z = 1",
                    "s.a.x <> \"B\".y compared as text");
    cast_compare_at("SELECT 1 FROM a WHERE code >= '10'", ">=",
                    "SELECT 1 FROM a WHERE CAST(code AS TEXT) >= "
                    "CAST('10' AS TEXT)",
                    "code >= '10' compared as text");
    /* not at an operator, or sides that are more than a name */
    cast_compare_at("SELECT a FROM t WHERE a = b", "a FROM", NULL, NULL);
    cast_compare_at("SELECT a FROM t WHERE a = b", NULL, NULL, NULL);
    cast_compare_at("SELECT a FROM t WHERE f(a) = b", "= b", NULL, NULL);
    cast_compare_at("SELECT a FROM t WHERE a = f(b)", "= f", NULL, NULL);
    cast_compare_at("SELECT a FROM t WHERE a + 1 = b", "= b", NULL, NULL);
    cast_compare_at("SELECT a FROM t WHERE a = b || c", "= b", NULL, NULL);
    cast_compare_at("SELECT a FROM t WHERE a = (SELECT 1)", "= (", NULL,
                    NULL);
    cast_compare_at("SELECT CASE WHEN a THEN 1 END = 2", "= 2", NULL, NULL);
    cast_compare_at("=", "=", NULL, NULL);
    cast_compare_at("SELECT a FROM t WHERE a =", "=", NULL, NULL);
    {
        char *out = (char *)1, *what = (char *)1;
        assert_int_equal(sqla_cast_compare("SELECT 1", 99, &out, &what), 0);
        assert_null(out);
        assert_null(what);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resolves_aliases_in_on_and_where),
        cmocka_unit_test(finds_tables_with_nothing_linking_them),
        cmocka_unit_test(linked_tables_are_no_cross_join),
        cmocka_unit_test(finds_aggregate_with_bare_column),
        cmocka_unit_test(collects_text_literal_comparisons),
        cmocka_unit_test(notes_select_star_of_the_statement),
        cmocka_unit_test(ambiguous_and_unknown_names_stay_unresolved),
        cmocka_unit_test(statements_it_cannot_read),
        cmocka_unit_test(deep_nesting_is_bounded),
        cmocka_unit_test(survives_garbage),
        cmocka_unit_test(requalify_moves_columns_to_their_one_owner),
        cmocka_unit_test(join_missing_brings_in_the_owner),
        cmocka_unit_test(qualified_tables_resolve_in_their_schema),
        cmocka_unit_test(same_name_in_two_schemas_stays_apart),
        cmocka_unit_test(rewrites_keep_the_schema_of_a_table),
        cmocka_unit_test(cast_compare_casts_both_sides),
    };
    test_filter_from_env();

    return cmocka_run_group_tests(tests, setup, teardown);
}
