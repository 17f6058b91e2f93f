/* fuzz_analyze.c - libFuzzer harness for the query analysis (sqla). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/schema.h"
#include "sql/analyze.h"

/*
** The input is a query as a model might write it. sqla_analyze() runs on
** an exact-size copy (so ASan catches reads past its end) against a small
** schema with foreign keys, against an empty schema and without one.
** The rewrites (sqla_requalify, sqla_join_missing, sqla_cast_compare at
** each operator) run on it too.
** Whatever the input: the return code is -1, 0 or 1; every join and every
** literal names a table and a column; a cross pair reads "a x b"; an
** aggregate finding names its function and column; nothing is found
** without a schema. A broken invariant calls abort().
*/

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char t_cust[] = "customers", t_ord[] = "orders",
            t_pay[] = "payments", t_det[] = "Order Details",
            n_sales[] = "sales", q_ord[] = "sales.orders",
            q_cust[] = "sales.customers";
static char c_id[] = "id", c_name[] = "name", c_city[] = "city",
            c_cust_id[] = "customer_id", c_total[] = "total",
            c_order_id[] = "order_id", c_status[] = "status",
            c_unit[] = "unit price";
static char ty_int[] = "INTEGER", ty_text[] = "TEXT", ty_real[] = "REAL";

static struct db_column cols_cust[] = {
    {c_id, ty_int, 1, NULL, 1, NULL, 0, NULL},
    {c_name, ty_text, 1, NULL, 0, NULL, 0, NULL},
    {c_city, ty_text, 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column cols_ord[] = {
    {c_id, ty_int, 1, NULL, 1, NULL, 0, NULL},
    {c_cust_id, ty_int, 1, NULL, 0, NULL, 0, NULL},
    {c_total, ty_real, 0, NULL, 0, NULL, 0, NULL},
    {c_status, ty_text, 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column cols_pay[] = {
    {c_id, ty_int, 1, NULL, 1, NULL, 0, NULL},
    {c_order_id, ty_int, 1, NULL, 0, NULL, 0, NULL},
    {c_status, ty_text, 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column cols_det[] = {
    {c_id, ty_int, 0, NULL, 0, NULL, 0, NULL},
    {c_unit, ty_real, 0, NULL, 0, NULL, 0, NULL},
};
static struct db_fkey fk_ord[] = {{c_cust_id, t_cust, c_id}};
static struct db_fkey fk_pay[] = {{c_order_id, t_ord, NULL}};
static struct db_fkey fk_sales[] = {{c_cust_id, q_cust, c_id}};

/* The last two are of another schema (a namespace): sales.orders shares
** its name with orders, sales.customers with customers. */
static struct db_table tables[] = {
    {t_cust, 0, cols_cust, 3, NULL, 0, NULL, 0, 10, 0, 0, NULL, NULL, NULL, 0},
    {t_ord, 0, cols_ord, 4, fk_ord, 1, NULL, 0, 100, 0, 0, NULL, NULL, NULL, 0},
    {t_pay, 0, cols_pay, 3, fk_pay, 1, NULL, 0, 100, 0, 0, NULL, NULL, NULL, 0},
    {t_det, 1, cols_det, 2, NULL, 0, NULL, 0, -1, 0, 0, NULL, NULL, NULL, 0},
    {t_ord, 0, cols_ord, 4, fk_sales, 1, NULL, 0, 5, 0, 0, NULL, n_sales,
     q_ord, 0},
    {t_cust, 0, cols_cust, 3, NULL, 0, NULL, 0, 5, 0, 0, NULL, n_sales,
     q_cust, 0},
};

static struct db_schema shop = {.tables = tables, .ntables = 6};
static struct db_schema empty = {.tables = NULL};

static void check(const char *sql, const struct db_schema *s)
{
    struct sqla a;
    int rc = sqla_analyze(sql, s, &a), k;

    if (rc < -1 || rc > 1)
        abort();
    for (k = 0; k < a.njoins; k++)
        if (!a.joins[k].a.table || !a.joins[k].a.column ||
            !a.joins[k].b.table || !a.joins[k].b.column)
            abort();
    for (k = 0; k < a.nlits; k++)
        if (!a.lits[k].col.table || !a.lits[k].col.column ||
            !a.lits[k].literal || !a.lits[k].op[0])
            abort();
    for (k = 0; k < a.ncross; k++)
        if (!strstr(a.cross_pairs[k], " x "))
            abort();
    if (a.agg_without_group && (!a.agg_func || !a.bare_col))
        abort();
    if ((!s || s->ntables == 0) &&
        (a.ntables || a.njoins || a.nlits || a.ncross || a.agg_without_group))
        abort();
    sqla_free(&a);
}

/* The rewrites: 0 with nothing, or n > 0 with a statement and what
** changed, or -1 (out of memory); a rewrite's result is readable again. */
static void rewrite(const char *sql, const struct db_schema *s)
{
    char *out, *what;
    int n = sqla_requalify(sql, s, &out, &what);

    if (n < -1 || (n > 0) != (out != NULL) || (n > 0) != (what != NULL))
        abort();
    free(out);
    free(what);
    n = sqla_join_missing(sql, s, &out, &what);
    if (n < -1 || n > 1 || (n > 0) != (out != NULL))
        abort();
    if (out)
        check(out, s);
    free(out);
    free(what);
}

/* sqla_cast_compare at every '=', '<', '>' and '!' of the text (and at
** -1 and past the end): a rewrite only adds the two CASTs. */
static void cast_every_operator(const char *sql)
{
    size_t len = strlen(sql), i;
    char *out, *what;
    int n;

    for (i = 0; i <= len + 1; i++) {
        int pos = i == len + 1 ? -1 : (int)i;
        if (pos >= 0 && (size_t)pos < len && !strchr("=<>!", sql[pos]))
            continue;
        n = sqla_cast_compare(sql, pos, &out, &what);
        if (n < -1 || n > 1 || (n > 0) != (out != NULL) ||
            (n > 0) != (what != NULL))
            abort();
        if (out && strlen(out) != len + 2 * strlen("CAST( AS TEXT)"))
            abort();
        free(out);
        free(what);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *sql = malloc(size + 1);

    if (!sql)
        return 0;
    memcpy(sql, data, size);
    sql[size] = '\0';
    check(sql, &shop);
    check(sql, &empty);
    check(sql, NULL);
    rewrite(sql, &shop);
    rewrite(sql, NULL);
    cast_every_operator(sql);
    free(sql);
    return 0;
}
