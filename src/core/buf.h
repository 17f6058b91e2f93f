/* buf.h - one small growable byte buffer with a size cap and a sticky error. */
#ifndef ASKDB_BUF_H
#define ASKDB_BUF_H

#include <stdarg.h>
#include <stddef.h>

/*
** A buffer grows up to `max` bytes (0 = no cap). The first failure (out of
** memory or over the cap) sets `err` and every later append is a no-op, so
** a caller appends freely and checks buf_err() once at the end. data is
** always NUL-terminated when non-NULL; len excludes the NUL.
*/
struct buf {
    char *data;
    size_t len;
    size_t cap;
    size_t max;
    int err;       /* 0, BUF_ENOMEM or BUF_ETOOBIG */
};

#define BUF_ENOMEM 1
#define BUF_ETOOBIG 2

void buf_init(struct buf *b, size_t max);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);          /* len = 0, err cleared */
void buf_append(struct buf *b, const void *p, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
int buf_err(const struct buf *b);

/* Hand the contents to the caller (malloc()ed, NUL-terminated, never NULL
** unless out of memory) and reset the buffer. NULL if the buffer had an
** error; the buffer is freed either way. */
char *buf_steal(struct buf *b);

#endif
