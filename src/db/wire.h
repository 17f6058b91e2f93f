/* wire.h - the framing between libaskdb and askdb-exec: requests, rows and
** errors, and a strict decoder of what the helper sends back. */
#ifndef ASKDB_DB_WIRE_H
#define ASKDB_DB_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "askdb.h"
#include "core/buf.h"
#include "db/driver.h"

/*
** A frame is a type byte, the payload's length (4 bytes) and the payload.
** Integers are little-endian two's complement whatever the machine, a
** real is its IEEE-754 bits as a 64-bit integer, a string is a 4-byte
** length and its bytes (no NUL).
**
** libaskdb -> askdb-exec:
**   'O' open   u32 WIRE_VERSION, i32 timeout_ms, i64 max_rows,
**              u64 max_bytes, i64 count_cap, str path
**   'C' check  str sql
**   'R' run    str sql
** askdb-exec -> libaskdb, exactly one reply per request, in order:
**   'K' opened str engine version                       (to 'O')
**   'H' head   u32 ncols, then per column: str name, u8 has_type, str type
**   'W' row    per column: u8 askdb_type, then i64 | f64 | str | nothing
**   'E' end    u8 truncated (0, 1 = rows, 2 = bytes), f64 exec_ms
**   'X' error  u32 askdb_status, u32 askdb_error_class, str message
** A check's reply is 'E' or 'X'; a run's is 'H', any number of 'W', then
** 'E' or 'X'; an open's 'K' or 'X'. Nothing follows a reply until the next
** request.
**
** What askdb-exec sends is untrusted (it ran the model's statement, which
** may have crashed or taken over the process): the decoder accepts only
** the grammar above, within the caps of the request (rows, bytes, one
** frame's size), and never reads past a frame; anything else is a
** malformed reply and the caller kills the helper.
*/

#define WIRE_VERSION 1

/* Frame types. */
#define WIRE_OPEN 'O'
#define WIRE_CHECK 'C'
#define WIRE_RUN 'R'
#define WIRE_OPENED 'K'
#define WIRE_HEAD 'H'
#define WIRE_ROW 'W'
#define WIRE_END 'E'
#define WIRE_ERROR 'X'

/* Bytes of a frame's type and length. */
#define WIRE_HDR 5

/* The largest request payload askdb-exec reads, and so the longest
** statement it takes (its length field comes first). */
#define WIRE_REQUEST_MAX ((size_t)16 << 20)
#define WIRE_SQL_MAX (WIRE_REQUEST_MAX - 4)

/* The limits of one database handle, as the 'O' frame carries them. */
struct wire_open {
    int timeout_ms;
    long max_rows;
    size_t max_bytes;
    long count_cap;
    const char *path;        /* borrowed */
};

/* ---------------------------------------------------------------------- */
/* Encoding (both sides)                                                  */
/* ---------------------------------------------------------------------- */

/* Append one whole frame to b (errors are b's sticky error). */
void wire_put_open(struct buf *b, const struct wire_open *o);
void wire_put_sql(struct buf *b, int type, const char *sql);
void wire_put_opened(struct buf *b, const char *version);
void wire_put_head(struct buf *b, const askdb_result *r);
void wire_put_row(struct buf *b, const askdb_result *r, long row);
void wire_put_end(struct buf *b, int truncated, double exec_ms);
void wire_put_error(struct buf *b, askdb_status st, const struct db_err *e);

/* ---------------------------------------------------------------------- */
/* Requests (askdb-exec's side; its input comes from libaskdb)            */
/* ---------------------------------------------------------------------- */

/*
** Parse the payload of an 'O' frame into *o (o->path points into p) or
** of a 'C' / 'R' frame into *sql (into p): p must stay alive and hold a
** NUL after its n bytes, as wire_read_frame()'s payload does. 0 on
** success, -1 when malformed.
*/
int wire_get_open(const unsigned char *p, size_t n, struct wire_open *o);
int wire_get_sql(const unsigned char *p, size_t n, const char **sql);

/*
** Read one frame from fd (blocking): 1 with *type, and *payload (*len
** bytes and a NUL after them, malloc()ed, the caller's to free); 0 at end
** of file before a frame; -1 on an error, a frame cut short or one of
** more than max bytes.
*/
int wire_read_frame(int fd, int *type, unsigned char **payload, size_t *len,
                    size_t max);

/* Write n bytes at p to fd; 0, or -1 (errno set). */
int wire_write_all(int fd, const void *p, size_t n);

/* ---------------------------------------------------------------------- */
/* Replies (libaskdb's side; untrusted)                                   */
/* ---------------------------------------------------------------------- */

enum wire_reply { WIRE_REPLY_OPEN, WIRE_REPLY_CHECK, WIRE_REPLY_RUN };

enum { WIRE_MORE = 0, WIRE_DONE = 1, WIRE_BAD = -1 };

struct wire_dec {
    enum wire_reply kind;
    long max_rows;
    size_t max_bytes;        /* what the result may cost (see wire.c) */
    size_t frame_max;        /* the largest payload accepted */
    unsigned char hdr[WIRE_HDR];
    size_t nhdr;             /* bytes of hdr read */
    unsigned char *payload;  /* the frame being read */
    size_t plen, pgot, pcap; /* its length, bytes read, bytes allocated */
    int state;               /* see wire.c */
    askdb_result *result;    /* a run's rows, owned until taken */
    long cap_cells;
    size_t bytes;
    /* The reply, once wire_dec_feed() said WIRE_DONE: */
    askdb_status status;     /* ASKDB_OK or the helper's error */
    struct db_err err;       /* the helper's error class and message */
    char version[64];        /* an open's engine version */
    /* Why the reply is malformed, once it said WIRE_BAD. */
    char why[128];
};

/* Start decoding one reply of the given kind within the caps. */
void wire_dec_init(struct wire_dec *d, enum wire_reply kind, long max_rows,
                   size_t max_bytes);

/*
** Feed the next n bytes of the reply. WIRE_MORE: all taken, more needed;
** WIRE_DONE: the reply is whole and used every byte; WIRE_BAD: malformed
** (d->why says how; so is a byte after the end of the reply). After DONE
** or BAD, feeding again gives WIRE_BAD.
*/
int wire_dec_feed(struct wire_dec *d, const void *p, size_t n);

/* A run's result after WIRE_DONE with ASKDB_OK: the caller's to free;
** NULL otherwise. */
askdb_result *wire_dec_take(struct wire_dec *d);

/* Free what the decoder holds (a result not taken). */
void wire_dec_free(struct wire_dec *d);

#endif
