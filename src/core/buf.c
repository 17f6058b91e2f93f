/* buf.c - growable byte buffer with a cap and a sticky error (see buf.h). */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

void buf_free(struct buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    b->err = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* Make room for n more bytes plus the NUL; sets err on failure. */
static int grow(struct buf *b, size_t n)
{
    size_t need, cap;
    char *p;

    if (b->err)
        return -1;
    if (n > (size_t)-1 / 2 - b->len) {
        b->err = BUF_ETOOBIG;
        return -1;
    }
    need = b->len + n + 1;
    if (b->max && need > b->max + 1) {
        b->err = BUF_ETOOBIG;
        return -1;
    }
    if (need <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    if (b->max && cap > b->max + 1)
        cap = b->max + 1;
    p = realloc(b->data, cap);
    if (!p) {
        b->err = BUF_ENOMEM;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

void buf_append(struct buf *b, const void *p, size_t n)
{
    if (grow(b, n))
        return;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
    buf_append(b, &c, 1);
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
    va_list cp;
    int n;

    if (b->err)
        return;
    va_copy(cp, ap);
    n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0) {
        b->err = BUF_ENOMEM;
        return;
    }
    if (grow(b, (size_t)n))
        return;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

int buf_err(const struct buf *b)
{
    return b->err;
}

char *buf_steal(struct buf *b)
{
    char *p;

    if (b->err) {
        buf_free(b);
        return NULL;
    }
    if (!b->data) {
        p = malloc(1);
        if (p)
            p[0] = '\0';
        return p;
    }
    p = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}
