/* fuzz_wire.c - libFuzzer harness for the decoder of askdb-exec's replies. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "db/wire.h"

/*
** The input's first byte picks the reply's kind (open, check, run) and
** seeds how the rest is cut into pieces; the rest is what the helper sent.
** It is decoded in one piece and again in pieces: both must end the same
** way (more, done, malformed) with the same result. A result the decoder
** accepts keeps its caps (rows, bytes), has only known types and texts
** NUL-terminated at their length, and encoding it again gives a reply
** that decodes to the same bytes.
*/

#define MAX_ROWS 20
#define MAX_BYTES 2000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t next(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* A result's encoding, to compare two results byte for byte. */
static void encode(struct buf *b, const askdb_result *r)
{
    long i;

    wire_put_head(b, r);
    for (i = 0; i < r->nrows; i++)
        wire_put_row(b, r, i);
    wire_put_end(b, r->truncated, 0);
}

static void check_result(const askdb_result *r)
{
    size_t bytes = 0;
    long i;

    if (r->ncols < 1 || r->nrows < 0 || r->nrows > MAX_ROWS ||
        r->truncated < 0 || r->truncated > 2)
        abort();
    for (i = 0; i < r->ncols; i++)
        if (!r->cols[i])
            abort();
    for (i = 0; i < r->nrows * r->ncols; i++) {
        const askdb_value *v = &r->cells[i];
        bytes += sizeof *v;
        if (v->type > ASKDB_BLOB)
            abort();
        if (v->type == ASKDB_TEXT || v->type == ASKDB_BLOB) {
            if (!v->s || v->s[v->len] != '\0')
                abort();
            bytes += v->len;
        }
    }
    if (bytes > 2 * MAX_BYTES)
        abort();
}

/* What one decoding gave. */
struct got {
    int rc;                  /* WIRE_MORE, WIRE_DONE or WIRE_BAD */
    askdb_status status;
    struct db_err err;
    char version[64];
    struct buf enc;          /* the result encoded again, if one */
};

/* Decode p whole (seed 0) or in pieces cut by seed. */
static void decode(enum wire_reply kind, const uint8_t *p, size_t n,
                   uint64_t seed, struct got *g)
{
    struct wire_dec d;
    askdb_result *r;
    size_t at = 0, k;

    memset(g, 0, sizeof *g);
    buf_init(&g->enc, 0);
    wire_dec_init(&d, kind, MAX_ROWS, MAX_BYTES);
    g->rc = WIRE_MORE;
    while (at < n && g->rc == WIRE_MORE) {
        k = seed ? 1 + next(&seed) % 16 : n;
        if (k > n - at)
            k = n - at;
        g->rc = wire_dec_feed(&d, p + at, k);
        at += k;
    }
    /* Whole before the input's end: the rest is refused. */
    if (g->rc == WIRE_DONE && at < n) {
        g->rc = wire_dec_feed(&d, p + at, n - at);
        if (g->rc != WIRE_BAD)
            abort();
    }
    if (g->rc == WIRE_DONE) {
        g->status = d.status;
        g->err = d.err;
        memcpy(g->version, d.version, sizeof g->version);
        if (d.status != ASKDB_OK &&
            (d.err.ec > ASKDB_EC_DATABASE ||
             strnlen(d.err.msg, sizeof d.err.msg) >= sizeof d.err.msg))
            abort();
        r = wire_dec_take(&d);
        if ((r != NULL) != (kind == WIRE_REPLY_RUN && d.status == ASKDB_OK))
            abort();
        if (r) {
            check_result(r);
            encode(&g->enc, r);
            if (buf_err(&g->enc))
                abort();
            askdb_result_free(r);
        }
    }
    wire_dec_free(&d);
}

static int same(const struct got *a, const struct got *b)
{
    return a->rc == b->rc && a->status == b->status &&
           a->err.ec == b->err.ec && strcmp(a->err.msg, b->err.msg) == 0 &&
           strcmp(a->version, b->version) == 0 && a->enc.len == b->enc.len &&
           (!a->enc.len || memcmp(a->enc.data, b->enc.data, a->enc.len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct got a, b, c;
    enum wire_reply kind;

    if (size < 1)
        return 0;
    kind = (enum wire_reply)(data[0] % 3);
    decode(kind, data + 1, size - 1, 0, &a);
    decode(kind, data + 1, size - 1, 0x9e3779b97f4a7c15ULL ^ data[0], &b);
    if (!same(&a, &b))
        abort();
    /* An accepted result, encoded again, decodes to itself. */
    if (a.enc.len) {
        decode(kind, (const uint8_t *)a.enc.data, a.enc.len, 0, &c);
        if (c.rc != WIRE_DONE || c.enc.len != a.enc.len ||
            memcmp(c.enc.data, a.enc.data, a.enc.len) != 0)
            abort();
        buf_free(&c.enc);
    }
    buf_free(&a.enc);
    buf_free(&b.enc);
    return 0;
}
