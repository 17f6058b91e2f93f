/* fuzz_hint.c - libFuzzer harness for repair hints built from engine errors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/hint.h"
#include "core/buf.h"
#include "db/schema.h"

/*
** The input is "engine message NUL sql" (without a NUL, all of it is the
** message and the SQL is NULL). hint_write() runs for every error class
** against a small fixed schema and against an empty one; both strings are
** exact-size allocations so ASan catches reads past their ends. The hint
** must be NUL-terminated text. hint_distance() is checked on the pair.
*/

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A shop-like schema, with a quoted name, a name longer than the hint's
** 256-byte name buffers and a column that several tables share. */
static char t_cust[] = "customers", t_ord[] = "orders",
            t_items[] = "order_items", t_det[] = "Order Details",
            t_long[300], n_sales[] = "sales", q_ord[] = "sales.orders";
static char c_id[] = "id", c_name[] = "name", c_email[] = "email",
            c_city[] = "city", c_cust_id[] = "customer_id",
            c_total[] = "total", c_created[] = "created_at",
            c_order_id[] = "order_id", c_qty[] = "qty",
            c_unit[] = "unit price", c_long[300];
static char ty_int[] = "INTEGER", ty_text[] = "TEXT", ty_real[] = "REAL";

static struct db_column cols_cust[] = {
    {c_id, ty_int, 1, NULL, 1, NULL, 0, NULL},
    {c_name, ty_text, 1, NULL, 0, NULL, 0, NULL},
    {c_email, ty_text, 0, NULL, 0, NULL, 0, NULL},
    {c_city, ty_text, 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column cols_ord[] = {
    {c_id, ty_int, 1, NULL, 1, NULL, 0, NULL},
    {c_cust_id, ty_int, 1, NULL, 0, NULL, 0, NULL},
    {c_total, ty_real, 0, NULL, 0, NULL, 0, NULL},
    {c_created, ty_text, 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column cols_items[] = {
    {c_order_id, ty_int, 1, NULL, 1, NULL, 0, NULL},
    {c_qty, ty_int, 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column cols_det[] = {
    {c_id, ty_int, 0, NULL, 0, NULL, 0, NULL},
    {c_unit, ty_real, 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column cols_long[] = {
    {c_long, ty_text, 0, NULL, 0, NULL, 0, NULL},
};

/* The last is of another schema (a namespace) and shares its name with
** orders. */
static struct db_table tables[] = {
    {t_cust, 0, cols_cust, 4, NULL, 0, NULL, 0, 10, 0, 0, NULL, NULL, NULL, 0},
    {t_ord, 0, cols_ord, 4, NULL, 0, NULL, 0, 100, 0, 0, NULL, NULL, NULL, 0},
    {t_items, 0, cols_items, 2, NULL, 0, NULL, 0, 300, 0, 0, NULL, NULL,
     NULL, 0},
    {t_det, 1, cols_det, 2, NULL, 0, NULL, 0, -1, 0, 0, NULL, NULL, NULL, 0},
    {t_long, 0, cols_long, 1, NULL, 0, NULL, 0, 0, 0, 0, NULL, NULL, NULL, 0},
    {t_ord, 0, cols_ord, 4, NULL, 0, NULL, 0, 5, 0, 0, NULL, n_sales, q_ord, 0},
};

static struct db_schema shop = {.tables = tables, .ntables = 6};
static struct db_schema empty = {.tables = NULL};

static char *copy(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);

    if (!s)
        abort();
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static void check_hint(const struct db_schema *s, const char *sql,
                       askdb_error_class ec, const char *msg)
{
    struct buf b;

    buf_init(&b, 0);
    hint_write(&b, s, sql, ec, msg, 5000, "SQLite");
    if (buf_err(&b) || (b.data && strlen(b.data) != b.len))
        abort();
    buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t mlen = nul ? (size_t)(nul - data) : size;
    char *msg = copy(data, mlen);
    char *sql = nul ? copy(nul + 1, size - mlen - 1) : NULL;
    const char *other = sql ? sql : "";
    int ec, d1, d2;

    if (!t_long[0]) {
        memset(t_long, 't', sizeof t_long - 1);
        memset(c_long, 'c', sizeof c_long - 1);
    }
    for (ec = ASKDB_EC_NONE; ec <= ASKDB_EC_LLM; ec++) {
        check_hint(&shop, sql, (askdb_error_class)ec, msg);
        check_hint(&empty, sql, (askdb_error_class)ec, msg);
    }

    /* Symmetric, capped at cap + 1, and 0 exactly for equal names. */
    d1 = hint_distance(msg, other, 8);
    d2 = hint_distance(other, msg, 8);
    if (d1 != d2 || d1 < 0 || d1 > 9 ||
        (d1 == 0) != (strcasecmp(msg, other) == 0))
        abort();
    free(msg);
    free(sql);
    return 0;
}
