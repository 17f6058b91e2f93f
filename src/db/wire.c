/* wire.c - the framing between libaskdb and askdb-exec (see wire.h). */
#include "db/wire.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
** The decoder's caps. A row's bytes are counted as the drivers count
** them (an askdb_value per cell plus a text's or blob's bytes), against
** twice max_bytes: the DuckDB driver counts a huge integer's short
** decimal text as a value, so an honest result may exceed max_bytes by a
** little; twice still bounds what a lying helper can make us hold. One
** frame is at most that, plus room for a head of long column names.
*/
#define HEAD_MAX ((size_t)32 << 20)
#define MSG_MAX (sizeof(((struct db_err *)0)->msg) - 1)

/* Decoder states. */
enum { ST_FIRST, ST_ROWS, ST_DONE, ST_BAD };

/* ---------------------------------------------------------------------- */
/* Encoding                                                               */
/* ---------------------------------------------------------------------- */

static void put_u8(struct buf *b, unsigned v)
{
    buf_putc(b, (char)(unsigned char)v);
}

static void put_u32(struct buf *b, uint32_t v)
{
    unsigned char c[4];
    int i;

    for (i = 0; i < 4; i++)
        c[i] = (unsigned char)(v >> (8 * i));
    buf_append(b, c, 4);
}

static void put_u64(struct buf *b, uint64_t v)
{
    unsigned char c[8];
    int i;

    for (i = 0; i < 8; i++)
        c[i] = (unsigned char)(v >> (8 * i));
    buf_append(b, c, 8);
}

static void put_i64(struct buf *b, int64_t v)
{
    put_u64(b, (uint64_t)v);
}

static void put_f64(struct buf *b, double d)
{
    uint64_t u;

    memcpy(&u, &d, sizeof u);
    put_u64(b, u);
}

/* A string of n bytes; one over 4 GiB makes the buffer fail. */
static void put_bytes(struct buf *b, const char *s, size_t n)
{
    if (n > UINT32_MAX) {
        if (!b->err)
            b->err = BUF_ETOOBIG;
        return;
    }
    put_u32(b, (uint32_t)n);
    buf_append(b, s, n);
}

static void put_str(struct buf *b, const char *s)
{
    put_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

/* Start a frame: its type and a length to fill in by end_frame(). */
static size_t begin_frame(struct buf *b, int type)
{
    put_u8(b, (unsigned)type);
    put_u32(b, 0);
    return b->len;
}

static void end_frame(struct buf *b, size_t start)
{
    size_t n = b->len - start;
    int i;

    if (buf_err(b))
        return;
    if (n > UINT32_MAX) {
        b->err = BUF_ETOOBIG;
        return;
    }
    for (i = 0; i < 4; i++)
        b->data[start - 4 + i] = (char)(unsigned char)(n >> (8 * i));
}

void wire_put_open(struct buf *b, const struct wire_open *o)
{
    size_t f = begin_frame(b, WIRE_OPEN);

    put_u32(b, WIRE_VERSION);
    put_u32(b, (uint32_t)o->timeout_ms);
    put_i64(b, o->max_rows);
    put_u64(b, o->max_bytes);
    put_i64(b, o->count_cap);
    put_str(b, o->path);
    end_frame(b, f);
}

void wire_put_sql(struct buf *b, int type, const char *sql)
{
    size_t f = begin_frame(b, type);

    put_str(b, sql);
    end_frame(b, f);
}

void wire_put_opened(struct buf *b, const char *version)
{
    size_t f = begin_frame(b, WIRE_OPENED);

    put_str(b, version);
    end_frame(b, f);
}

void wire_put_head(struct buf *b, const askdb_result *r)
{
    size_t f = begin_frame(b, WIRE_HEAD);
    int c;

    put_u32(b, (uint32_t)r->ncols);
    for (c = 0; c < r->ncols; c++) {
        const char *t = r->decltypes ? r->decltypes[c] : NULL;
        put_str(b, r->cols[c]);
        put_u8(b, t != NULL);
        put_str(b, t);
    }
    end_frame(b, f);
}

void wire_put_row(struct buf *b, const askdb_result *r, long row)
{
    size_t f = begin_frame(b, WIRE_ROW);
    const askdb_value *v = &r->cells[row * r->ncols];
    int c;

    for (c = 0; c < r->ncols; c++, v++) {
        put_u8(b, (unsigned)v->type);
        switch (v->type) {
        case ASKDB_INTEGER:
            put_i64(b, v->i);
            break;
        case ASKDB_REAL:
            put_f64(b, v->d);
            break;
        case ASKDB_TEXT:
        case ASKDB_BLOB:
            put_bytes(b, v->s, v->len);
            break;
        default:
            break;
        }
    }
    end_frame(b, f);
}

void wire_put_end(struct buf *b, int truncated, double exec_ms)
{
    size_t f = begin_frame(b, WIRE_END);

    put_u8(b, (unsigned)truncated);
    put_f64(b, exec_ms);
    end_frame(b, f);
}

void wire_put_error(struct buf *b, askdb_status st, const struct db_err *e)
{
    size_t f = begin_frame(b, WIRE_ERROR);

    put_u32(b, (uint32_t)st);
    put_u32(b, (uint32_t)e->ec);
    put_bytes(b, e->msg, strnlen(e->msg, MSG_MAX));
    end_frame(b, f);
}

/* ---------------------------------------------------------------------- */
/* Reading a payload: a cursor that never passes its end                  */
/* ---------------------------------------------------------------------- */

struct cur {
    const unsigned char *p;
    size_t n;                /* bytes left */
    int bad;                 /* a read went past the end */
};

static const unsigned char *take(struct cur *c, size_t k)
{
    const unsigned char *p = c->p;

    if (c->bad || k > c->n) {
        c->bad = 1;
        return NULL;
    }
    c->p += k;
    c->n -= k;
    return p;
}

static unsigned get_u8(struct cur *c)
{
    const unsigned char *p = take(c, 1);

    return p ? p[0] : 0;
}

static uint32_t get_u32(struct cur *c)
{
    const unsigned char *p = take(c, 4);
    uint32_t v = 0;
    int i;

    if (p)
        for (i = 0; i < 4; i++)
            v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static uint64_t get_u64(struct cur *c)
{
    const unsigned char *p = take(c, 8);
    uint64_t v = 0;
    int i;

    if (p)
        for (i = 0; i < 8; i++)
            v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int64_t get_i64(struct cur *c)
{
    uint64_t u = get_u64(c);

    /* Two's complement without an implementation-defined conversion. */
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

static double get_f64(struct cur *c)
{
    uint64_t u = get_u64(c);
    double d;

    memcpy(&d, &u, sizeof d);
    return d;
}

/* A string: *len bytes at the returned pointer (not NUL-terminated). */
static const char *get_bytes(struct cur *c, size_t *len)
{
    uint32_t n = get_u32(c);
    const unsigned char *p = take(c, n);

    *len = p ? n : 0;
    return (const char *)p;
}

/* A string that must hold no NUL, copied (malloc()ed); NULL when
** malformed or out of memory (c->bad tells which). */
static char *get_cstr(struct cur *c)
{
    size_t n;
    const char *s = get_bytes(c, &n);
    char *r;

    if (!s || memchr(s, '\0', n)) {
        c->bad = 1;
        return NULL;
    }
    r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\0';
    }
    return r;
}

/* ---------------------------------------------------------------------- */
/* Requests                                                               */
/* ---------------------------------------------------------------------- */

int wire_get_open(const unsigned char *p, size_t n, struct wire_open *o)
{
    struct cur c = {p, n, 0};
    uint32_t v = get_u32(&c);
    int64_t rows, cap;
    uint64_t bytes;
    size_t len;
    int32_t tmo;

    tmo = (int32_t)get_u32(&c);
    rows = get_i64(&c);
    bytes = get_u64(&c);
    cap = get_i64(&c);
    o->path = get_bytes(&c, &len);
    if (c.bad || c.n || v != WIRE_VERSION || tmo <= 0 || rows <= 0 ||
        bytes == 0 || bytes > SIZE_MAX || cap <= 0 || !len ||
        memchr(o->path, '\0', len))
        return -1;
    o->timeout_ms = tmo;
    o->max_rows = (long)rows;
    o->max_bytes = (size_t)bytes;
    o->count_cap = (long)cap;
    return 0;
}

int wire_get_sql(const unsigned char *p, size_t n, const char **sql)
{
    struct cur c = {p, n, 0};
    size_t len;

    *sql = get_bytes(&c, &len);
    if (c.bad || c.n || memchr(*sql, '\0', len))
        return -1;
    return 0;
}

int wire_write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    ssize_t k;

    while (n) {
        k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Read exactly n bytes; 1, 0 at end of file before any, -1 otherwise. */
static int read_all(int fd, void *p, size_t n)
{
    char *s = p;
    size_t got = 0;
    ssize_t k;

    while (got < n) {
        k = read(fd, s + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            return got ? -1 : 0;
        got += (size_t)k;
    }
    return 1;
}

int wire_read_frame(int fd, int *type, unsigned char **payload, size_t *len,
                    size_t max)
{
    unsigned char h[WIRE_HDR];
    struct cur c = {h + 1, 4, 0};
    unsigned char *p;
    uint32_t n;
    int r;

    *payload = NULL;
    *len = 0;
    r = read_all(fd, h, sizeof h);
    if (r <= 0)
        return r;
    *type = h[0];
    n = get_u32(&c);
    if (n > max)
        return -1;
    p = malloc((size_t)n + 1);
    if (!p)
        return -1;
    if (n && read_all(fd, p, n) != 1) {
        free(p);
        return -1;
    }
    p[n] = '\0';
    *payload = p;
    *len = n;
    return 1;
}

/* ---------------------------------------------------------------------- */
/* Replies                                                                */
/* ---------------------------------------------------------------------- */

void wire_dec_init(struct wire_dec *d, enum wire_reply kind, long max_rows,
                   size_t max_bytes)
{
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->max_rows = max_rows;
    d->max_bytes = max_bytes > SIZE_MAX / 4 ? SIZE_MAX / 2 : max_bytes * 2;
    d->frame_max = d->max_bytes > SIZE_MAX - HEAD_MAX
                       ? SIZE_MAX
                       : d->max_bytes + HEAD_MAX;
    if (d->frame_max > UINT32_MAX)
        d->frame_max = UINT32_MAX;
    d->state = ST_FIRST;
    d->status = ASKDB_OK;
}

void wire_dec_free(struct wire_dec *d)
{
    free(d->payload);
    d->payload = NULL;
    askdb_result_free(d->result);
    d->result = NULL;
}

askdb_result *wire_dec_take(struct wire_dec *d)
{
    askdb_result *r = NULL;

    if (d->state == ST_DONE && d->status == ASKDB_OK) {
        r = d->result;
        d->result = NULL;
    }
    return r;
}

static int bad(struct wire_dec *d, const char *why)
{
    snprintf(d->why, sizeof d->why, "%s", why);
    d->state = ST_BAD;
    askdb_result_free(d->result);
    d->result = NULL;
    return WIRE_BAD;
}

/* An 'X' frame: the helper's error, checked to be one it can give. */
static int take_error(struct wire_dec *d, struct cur *c)
{
    uint32_t st = get_u32(c), ec = get_u32(c);
    size_t n;
    const char *m = get_bytes(c, &n);

    if (c->bad || c->n)
        return bad(d, "an error frame of the wrong size");
    if (st == ASKDB_OK || st > ASKDB_ERR_CANCELLED || ec > ASKDB_EC_DATABASE)
        return bad(d, "an error with an unknown status or class");
    if (n > MSG_MAX || memchr(m, '\0', n))
        return bad(d, "an error message too long or with a NUL byte");
    d->status = (askdb_status)st;
    d->err.ec = (askdb_error_class)ec;
    memcpy(d->err.msg, m, n);
    d->err.msg[n] = '\0';
    askdb_result_free(d->result);
    d->result = NULL;
    d->state = ST_DONE;
    return WIRE_DONE;
}

static int take_head(struct wire_dec *d, struct cur *c)
{
    askdb_result *r;
    uint32_t n = get_u32(c);
    int i;

    /* Each column takes at least 9 bytes: a name, a flag, a type. */
    if (c->bad || n == 0 || n > c->n / 9)
        return bad(d, "a head with a wrong number of columns");
    r = db_result_new((int)n);
    if (!r)
        return bad(d, "out of memory");
    d->result = r;
    for (i = 0; i < (int)n; i++) {
        unsigned has;
        char *t;
        int empty;
        r->cols[i] = get_cstr(c);
        has = get_u8(c);
        t = get_cstr(c);
        empty = !t || !*t;
        if (has == 1)
            r->decltypes[i] = t;
        else
            free(t);
        /* No type is sent as an empty one. */
        if (c->bad || has > 1 || (has == 0 && !empty))
            return bad(d, "a malformed column in the head");
        if (!r->cols[i] || (has && !t))
            return bad(d, "out of memory");
    }
    if (c->n)
        return bad(d, "bytes after the head's columns");
    d->state = ST_ROWS;
    return WIRE_MORE;
}

static int take_row(struct wire_dec *d, struct cur *c)
{
    askdb_result *r = d->result;
    askdb_value *row;
    int i, ncols = r->ncols;

    if (r->nrows >= d->max_rows)
        return bad(d, "more rows than the row cap");
    /* Counted in r at once: freed with the result, even half read. */
    row = db_result_add_row(r, &d->cap_cells);
    if (!row)
        return bad(d, "out of memory");
    for (i = 0; i < ncols; i++) {
        askdb_value *v = &row[i];
        unsigned t = get_u8(c);
        size_t n;
        const char *s;
        char *p;
        d->bytes += sizeof *v;
        switch (t) {
        case ASKDB_NULL:
            break;
        case ASKDB_INTEGER:
            v->i = get_i64(c);
            break;
        case ASKDB_REAL:
            v->d = get_f64(c);
            break;
        case ASKDB_TEXT:
        case ASKDB_BLOB:
            s = get_bytes(c, &n);
            if (!s)
                break;
            d->bytes += n;
            if (d->bytes > d->max_bytes)
                return bad(d, "more bytes than the byte cap");
            p = malloc(n + 1);
            if (!p)
                return bad(d, "out of memory");
            memcpy(p, s, n);
            p[n] = '\0';
            v->s = p;
            v->len = n;
            break;
        default:
            return bad(d, "a cell of an unknown type");
        }
        if (c->bad)
            return bad(d, "a row cut short");
        v->type = (askdb_type)t;
        if (d->bytes > d->max_bytes)
            return bad(d, "more bytes than the byte cap");
    }
    if (c->n)
        return bad(d, "a row with more cells than columns");
    return WIRE_MORE;
}

static int take_end(struct wire_dec *d, struct cur *c)
{
    unsigned t = get_u8(c);
    double ms = get_f64(c);

    if (c->bad || c->n)
        return bad(d, "an end frame of the wrong size");
    if (t > 2 || (t && d->kind != WIRE_REPLY_RUN) || !(ms >= 0) ||
        isinf(ms))
        return bad(d, "an end frame with wrong values");
    if (d->kind == WIRE_REPLY_RUN)
        d->result->truncated = (int)t;
    d->state = ST_DONE;
    return WIRE_DONE;
}

static int take_opened(struct wire_dec *d, struct cur *c)
{
    size_t n;
    const char *v = get_bytes(c, &n);

    if (c->bad || c->n || n >= sizeof d->version || memchr(v, '\0', n))
        return bad(d, "a malformed version");
    memcpy(d->version, v, n);
    d->version[n] = '\0';
    d->state = ST_DONE;
    return WIRE_DONE;
}

/* One whole frame: is it one the reply may hold here? */
static int take_frame(struct wire_dec *d, int type)
{
    struct cur c = {d->payload, d->plen, 0};

    if (type == WIRE_ERROR)
        return take_error(d, &c);
    switch (d->kind) {
    case WIRE_REPLY_OPEN:
        if (type == WIRE_OPENED)
            return take_opened(d, &c);
        break;
    case WIRE_REPLY_CHECK:
        if (type == WIRE_END)
            return take_end(d, &c);
        break;
    case WIRE_REPLY_RUN:
        if (d->state == ST_FIRST && type == WIRE_HEAD)
            return take_head(d, &c);
        if (d->state == ST_ROWS && type == WIRE_ROW)
            return take_row(d, &c);
        if (d->state == ST_ROWS && type == WIRE_END)
            return take_end(d, &c);
        break;
    }
    return bad(d, "a frame out of place");
}

int wire_dec_feed(struct wire_dec *d, const void *data, size_t n)
{
    const unsigned char *p = data;
    struct cur c;
    size_t k;
    int r;

    if (d->state == ST_BAD)
        return WIRE_BAD;
    while (n) {
        if (d->state == ST_DONE)
            return bad(d, "bytes after the reply");
        if (d->nhdr < WIRE_HDR) {
            k = WIRE_HDR - d->nhdr < n ? WIRE_HDR - d->nhdr : n;
            memcpy(d->hdr + d->nhdr, p, k);
            d->nhdr += k;
            p += k;
            n -= k;
            if (d->nhdr < WIRE_HDR)
                break;
            c.p = d->hdr + 1;
            c.n = 4;
            c.bad = 0;
            d->plen = get_u32(&c);
            d->pgot = 0;
            if (d->plen > d->frame_max ||
                (d->hdr[0] == WIRE_HEAD ? d->plen > HEAD_MAX : 0))
                return bad(d, "a frame over the size cap");
            /* Grown as bytes come, not to what the length claims. */
            free(d->payload);
            d->payload = NULL;
            d->pcap = 0;
        }
        k = d->plen - d->pgot < n ? d->plen - d->pgot : n;
        if (k && d->pgot + k > d->pcap) {
            size_t nc = d->pcap ? d->pcap * 2 : 4096;
            unsigned char *q;
            while (nc < d->pgot + k)
                nc *= 2;
            if (nc > d->plen)
                nc = d->plen;
            q = realloc(d->payload, nc);
            if (!q)
                return bad(d, "out of memory");
            d->payload = q;
            d->pcap = nc;
        }
        if (k) {
            memcpy(d->payload + d->pgot, p, k);
            d->pgot += k;
            p += k;
            n -= k;
        }
        if (d->pgot < d->plen)
            break;
        r = take_frame(d, d->hdr[0]);
        free(d->payload);
        d->payload = NULL;
        d->pcap = 0;
        d->nhdr = 0;
        if (r == WIRE_BAD)
            return r;
    }
    return d->state == ST_DONE ? WIRE_DONE : WIRE_MORE;
}
