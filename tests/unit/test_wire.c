/* test_wire.c - the framing between libaskdb and askdb-exec: round trips
** and the strict decoder. */
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "db/wire.h"

/* A result of every value type, NULL and set declared types, a text with
** a NUL inside, an empty blob, the extreme integers and odd reals. */
static askdb_result *sample_result(void)
{
    static const char *const names[] = {"n", "i", "d", "t", "b"};
    askdb_result *r = calloc(1, sizeof *r);
    askdb_value *v;
    int c;

    assert_non_null(r);
    r->ncols = 5;
    r->nrows = 3;
    r->cols = calloc(5, sizeof *r->cols);
    r->decltypes = calloc(5, sizeof *r->decltypes);
    r->cells = calloc(15, sizeof *r->cells);
    for (c = 0; c < 5; c++)
        r->cols[c] = strdup(names[c]);
    r->decltypes[1] = strdup("INTEGER");
    r->decltypes[3] = strdup("TEXT");
    v = r->cells;
    /* row 0 */
    v[1].type = ASKDB_INTEGER, v[1].i = INT64_MIN;
    v[2].type = ASKDB_REAL, v[2].d = -0.0;
    v[3].type = ASKDB_TEXT, v[3].s = memcpy(malloc(4), "a\0b", 4), v[3].len = 3;
    v[4].type = ASKDB_BLOB, v[4].s = strdup(""), v[4].len = 0;
    /* row 1 */
    v += 5;
    v[0].type = ASKDB_INTEGER, v[0].i = INT64_MAX;
    v[1].type = ASKDB_INTEGER, v[1].i = -1;
    v[2].type = ASKDB_REAL, v[2].d = 1e308;
    v[3].type = ASKDB_TEXT, v[3].s = strdup("h\xc3\xa9llo"), v[3].len = 6;
    v[4].type = ASKDB_BLOB, v[4].s = memcpy(malloc(3), "\xff\x00\x01", 3),
    v[4].len = 3;
    /* row 2: all NULL */
    r->truncated = 2;
    return r;
}

/* Every frame of a run's reply for r. */
static void encode_run(struct buf *b, const askdb_result *r)
{
    long i;

    wire_put_head(b, r);
    for (i = 0; i < r->nrows; i++)
        wire_put_row(b, r, i);
    wire_put_end(b, r->truncated, 12.5);
    assert_int_equal(buf_err(b), 0);
}

static void assert_same_result(const askdb_result *a, const askdb_result *b)
{
    long i;
    int c;

    assert_int_equal(a->ncols, b->ncols);
    assert_int_equal(a->nrows, b->nrows);
    assert_int_equal(a->truncated, b->truncated);
    for (c = 0; c < a->ncols; c++) {
        assert_string_equal(a->cols[c], b->cols[c]);
        if (a->decltypes[c])
            assert_string_equal(a->decltypes[c], b->decltypes[c]);
        else
            assert_null(b->decltypes[c]);
    }
    for (i = 0; i < a->nrows * a->ncols; i++) {
        const askdb_value *x = &a->cells[i], *y = &b->cells[i];
        assert_int_equal(x->type, y->type);
        switch (x->type) {
        case ASKDB_INTEGER:
            assert_true(x->i == y->i);
            break;
        case ASKDB_REAL:
            assert_memory_equal(&x->d, &y->d, sizeof x->d); /* -0.0 too */
            break;
        case ASKDB_TEXT:
        case ASKDB_BLOB:
            assert_int_equal(x->len, y->len);
            assert_memory_equal(x->s, y->s, x->len);
            assert_int_equal(y->s[y->len], '\0');
            break;
        default:
            break;
        }
    }
}

static void run_reply_round_trips_every_value_type(void **state)
{
    askdb_result *r = sample_result(), *got;
    struct wire_dec d;
    struct buf b;
    size_t i;

    (void)state;
    buf_init(&b, 0);
    encode_run(&b, r);
    /* In one piece. */
    wire_dec_init(&d, WIRE_REPLY_RUN, 10, 1 << 20);
    assert_int_equal(wire_dec_feed(&d, b.data, b.len), WIRE_DONE);
    assert_int_equal(d.status, ASKDB_OK);
    got = wire_dec_take(&d);
    assert_non_null(got);
    assert_same_result(r, got);
    askdb_result_free(got);
    wire_dec_free(&d);
    /* A byte at a time: never done before the last byte. */
    wire_dec_init(&d, WIRE_REPLY_RUN, 10, 1 << 20);
    for (i = 0; i + 1 < b.len; i++)
        assert_int_equal(wire_dec_feed(&d, b.data + i, 1), WIRE_MORE);
    assert_int_equal(wire_dec_feed(&d, b.data + i, 1), WIRE_DONE);
    got = wire_dec_take(&d);
    assert_same_result(r, got);
    askdb_result_free(got);
    wire_dec_free(&d);
    buf_free(&b);
    askdb_result_free(r);
}

static void errors_and_checks_round_trip(void **state)
{
    struct db_err e = {ASKDB_EC_UNKNOWN_COLUMN, "no such column: nme", -1};
    struct wire_dec d;
    struct buf b;

    (void)state;
    buf_init(&b, 0);
    wire_put_error(&b, ASKDB_ERR_DB, &e);
    wire_dec_init(&d, WIRE_REPLY_RUN, 10, 1000);
    assert_int_equal(wire_dec_feed(&d, b.data, b.len), WIRE_DONE);
    assert_int_equal(d.status, ASKDB_ERR_DB);
    assert_int_equal(d.err.ec, ASKDB_EC_UNKNOWN_COLUMN);
    assert_string_equal(d.err.msg, "no such column: nme");
    assert_null(wire_dec_take(&d));
    wire_dec_free(&d);
    /* A check's reply: an end without a head. */
    buf_reset(&b);
    wire_put_end(&b, 0, 0);
    wire_dec_init(&d, WIRE_REPLY_CHECK, 10, 1000);
    assert_int_equal(wire_dec_feed(&d, b.data, b.len), WIRE_DONE);
    assert_int_equal(d.status, ASKDB_OK);
    wire_dec_free(&d);
    /* An open's. */
    buf_reset(&b);
    wire_put_opened(&b, "3.40.1");
    wire_dec_init(&d, WIRE_REPLY_OPEN, 1, 1);
    assert_int_equal(wire_dec_feed(&d, b.data, b.len), WIRE_DONE);
    assert_string_equal(d.version, "3.40.1");
    wire_dec_free(&d);
    buf_free(&b);
}

static void requests_round_trip(void **state)
{
    struct wire_open o = {1500, 77, 4096, 1000, "/tmp/x y.db"}, got;
    const char *sql;
    struct buf b;

    (void)state;
    buf_init(&b, 0);
    wire_put_open(&b, &o);
    assert_int_equal(b.data[0], WIRE_OPEN);
    assert_int_equal(wire_get_open((unsigned char *)b.data + WIRE_HDR,
                                   b.len - WIRE_HDR, &got), 0);
    assert_int_equal(got.timeout_ms, 1500);
    assert_int_equal(got.max_rows, 77);
    assert_int_equal(got.max_bytes, 4096);
    assert_int_equal(got.count_cap, 1000);
    assert_string_equal(got.path, "/tmp/x y.db");
    /* One byte short, or one too many: malformed. */
    assert_int_equal(wire_get_open((unsigned char *)b.data + WIRE_HDR,
                                   b.len - WIRE_HDR - 1, &got), -1);
    buf_putc(&b, 0);
    assert_int_equal(wire_get_open((unsigned char *)b.data + WIRE_HDR,
                                   b.len - WIRE_HDR, &got), -1);
    buf_reset(&b);
    wire_put_sql(&b, WIRE_RUN, "SELECT 1");
    assert_int_equal(wire_get_sql((unsigned char *)b.data + WIRE_HDR,
                                  b.len - WIRE_HDR, &sql), 0);
    assert_string_equal(sql, "SELECT 1");
    buf_free(&b);
}

/* Frame helpers for hand-made malformed replies. */
static void frame(struct buf *b, int type, const void *p, size_t n)
{
    unsigned char h[WIRE_HDR];

    h[0] = (unsigned char)type;
    h[1] = (unsigned char)n;
    h[2] = (unsigned char)(n >> 8);
    h[3] = (unsigned char)(n >> 16);
    h[4] = (unsigned char)(n >> 24);
    buf_append(b, h, sizeof h);
    buf_append(b, p, n);
}

/* Decode what b holds as a reply of kind; must be WIRE_BAD with a reason
** containing why. */
static void expect_bad(const struct buf *b, enum wire_reply kind,
                       const char *why)
{
    struct wire_dec d;
    int r;

    wire_dec_init(&d, kind, 2, 200);
    r = wire_dec_feed(&d, b->data, b->len);
    if (r != WIRE_BAD || !strstr(d.why, why))
        fail_msg("expected a malformed reply (%s), got %d (%s)", why, r,
                 d.why);
    /* And it stays bad. */
    assert_int_equal(wire_dec_feed(&d, "E", 1), WIRE_BAD);
    assert_null(wire_dec_take(&d));
    wire_dec_free(&d);
}

static void malformed_replies_are_refused(void **state)
{
    askdb_result *r = sample_result();
    struct db_err e = {ASKDB_EC_RUNTIME, "x", -1};
    struct buf b;
    unsigned char p[64];
    long i;

    (void)state;
    buf_init(&b, 0);
    /* A row before the head; an end before the head. */
    wire_put_row(&b, r, 2);
    expect_bad(&b, WIRE_REPLY_RUN, "out of place");
    buf_reset(&b);
    wire_put_end(&b, 0, 0);
    expect_bad(&b, WIRE_REPLY_RUN, "out of place");
    /* A head in a check's reply; rows in an open's. */
    buf_reset(&b);
    wire_put_head(&b, r);
    expect_bad(&b, WIRE_REPLY_CHECK, "out of place");
    /* More rows than the cap (2), or more bytes (the decoder allows
    ** twice 200). */
    buf_reset(&b);
    r->truncated = 0;
    wire_put_head(&b, r);
    for (i = 0; i < 3; i++)
        wire_put_row(&b, r, 2);
    expect_bad(&b, WIRE_REPLY_RUN, "row cap");
    buf_reset(&b);
    wire_put_head(&b, r);
    wire_put_row(&b, r, 0);
    wire_put_row(&b, r, 1);
    expect_bad(&b, WIRE_REPLY_RUN, "byte cap");
    /* A cell of an unknown type; a row with a cell too many or too few. */
    buf_reset(&b);
    wire_put_head(&b, r);
    memset(p, 0, sizeof p);
    p[0] = 7;
    frame(&b, WIRE_ROW, p, 5);
    expect_bad(&b, WIRE_REPLY_RUN, "unknown type");
    buf_reset(&b);
    wire_put_head(&b, r);
    frame(&b, WIRE_ROW, p + 1, 6); /* six NULLs for five columns */
    expect_bad(&b, WIRE_REPLY_RUN, "more cells");
    buf_reset(&b);
    wire_put_head(&b, r);
    frame(&b, WIRE_ROW, p + 1, 4);
    expect_bad(&b, WIRE_REPLY_RUN, "cut short");
    /* A text whose length runs past its frame. */
    buf_reset(&b);
    wire_put_head(&b, r);
    p[0] = ASKDB_NULL, p[1] = ASKDB_NULL, p[2] = ASKDB_NULL;
    p[3] = ASKDB_NULL, p[4] = ASKDB_TEXT, p[5] = 50;
    frame(&b, WIRE_ROW, p, 9 + 10);
    expect_bad(&b, WIRE_REPLY_RUN, "cut short");
    /* A frame longer than any reply may be, before its bytes arrive. */
    buf_reset(&b);
    memcpy(p, "W\xff\xff\xff\x7f", 5);
    buf_append(&b, p, 5);
    expect_bad(&b, WIRE_REPLY_RUN, "size cap");
    /* A head of no columns; a column name with a NUL. */
    buf_reset(&b);
    memset(p, 0, sizeof p);
    frame(&b, WIRE_HEAD, p, 13);
    expect_bad(&b, WIRE_REPLY_RUN, "number of columns");
    buf_reset(&b);
    memcpy(p, "\1\0\0\0\2\0\0\0a\0\0\0\0\0\0", 15);
    frame(&b, WIRE_HEAD, p, 15);
    expect_bad(&b, WIRE_REPLY_RUN, "malformed column");
    /* Errors: status OK, an unknown class, a NUL in the message. */
    buf_reset(&b);
    wire_put_error(&b, ASKDB_OK, &e);
    expect_bad(&b, WIRE_REPLY_RUN, "unknown status");
    buf_reset(&b);
    e.ec = (askdb_error_class)99;
    wire_put_error(&b, ASKDB_ERR_DB, &e);
    expect_bad(&b, WIRE_REPLY_RUN, "unknown status or class");
    buf_reset(&b);
    memcpy(p, "\4\0\0\0\6\0\0\0\2\0\0\0a\0", 14);
    frame(&b, WIRE_ERROR, p, 14);
    expect_bad(&b, WIRE_REPLY_CHECK, "NUL");
    /* An end that says rows were cut in a check's reply; a NaN time. */
    buf_reset(&b);
    wire_put_end(&b, 1, 0);
    expect_bad(&b, WIRE_REPLY_CHECK, "wrong values");
    buf_reset(&b);
    wire_put_end(&b, 0, NAN);
    expect_bad(&b, WIRE_REPLY_CHECK, "wrong values");
    /* Anything after a whole reply. */
    buf_reset(&b);
    wire_put_end(&b, 0, 0);
    buf_putc(&b, 'E');
    expect_bad(&b, WIRE_REPLY_CHECK, "after the reply");
    buf_free(&b);
    askdb_result_free(r);
}

static void a_cut_reply_is_never_done(void **state)
{
    askdb_result *r = sample_result();
    struct wire_dec d;
    struct buf b;
    size_t cut;

    (void)state;
    buf_init(&b, 0);
    encode_run(&b, r);
    for (cut = 0; cut < b.len; cut++) {
        wire_dec_init(&d, WIRE_REPLY_RUN, 10, 1 << 20);
        assert_int_equal(wire_dec_feed(&d, b.data, cut), WIRE_MORE);
        assert_null(wire_dec_take(&d));
        wire_dec_free(&d);
    }
    buf_free(&b);
    askdb_result_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(run_reply_round_trips_every_value_type),
        cmocka_unit_test(errors_and_checks_round_trip),
        cmocka_unit_test(requests_round_trip),
        cmocka_unit_test(malformed_replies_are_refused),
        cmocka_unit_test(a_cut_reply_is_never_done),
    };
    test_filter_from_env();
    return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
