/* learned.c - the public API of learned pairs: askdb_memory_* over memory.c,
** and importing a file of pairs. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/memory.h"
#include "core/buf.h"
#include "core/json.h"
#include "core/text.h"
#include "db/db.h"

/*
** A handle wraps a store (struct memory), or none when it was opened
** without create and no store exists yet: that handle lists nothing,
** forgets nothing and refuses to learn. Every pair goes in through
** memory_learn(): the SQL passes the read-only guard and runs first.
*/

#define IMPORT_MAX_FILE ((size_t)256 << 20)

struct askdb_memory {
    struct memory *m;        /* NULL: no store yet */
    char *path;              /* as given (NULL = default) */
    int opened;              /* askdb_memory_open() succeeded; else the
                                handle is only for its message */
    char errmsg[1024];
};

static askdb_status fail(askdb_memory *h, askdb_status st, const char *fmt,
                         ...) __attribute__((format(printf, 3, 4)));
static askdb_status fail(askdb_memory *h, askdb_status st, const char *fmt,
                         ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(h->errmsg, sizeof h->errmsg, fmt, ap);
    va_end(ap);
    return st;
}

/*
** ASKDB_OK when h opened. The handle a failed askdb_memory_open() left
** for its message is no store, not even an empty one (it would list
** nothing as if the database had no pairs): ASKDB_ERR_USAGE, with the
** open's reason kept in the message.
*/
static askdb_status usable(askdb_memory *h)
{
    if (h->opened)
        return ASKDB_OK;
    text_prefix_once(h->errmsg, sizeof h->errmsg,
                     "this memory store did not open (askdb_memory_open() "
                     "failed): ");
    return ASKDB_ERR_USAGE;
}

/* ASKDB_OK when pairs can be stored through h: a handle that opened
** (usable()) on a store that exists; else ASKDB_ERR_USAGE, said on h
** where there is one. */
static askdb_status takes_pairs(askdb_memory *h)
{
    if (!h || usable(h))
        return ASKDB_ERR_USAGE;
    if (!h->m)
        return fail(h, ASKDB_ERR_USAGE, "the memory store was opened "
                    "without create and does not exist");
    return ASKDB_OK;
}

askdb_status askdb_memory_open(const char *path, int create,
                               askdb_memory **out)
{
    askdb_memory *h;
    int rc;

    if (!out)
        return ASKDB_ERR_USAGE;
    *out = NULL;
    h = calloc(1, sizeof *h);
    if (!h)
        return ASKDB_ERR_NOMEM;
    *out = h;
    if (path) {
        h->path = strdup(path);
        if (!h->path)
            return fail(h, ASKDB_ERR_NOMEM, "out of memory");
    }
    rc = memory_open(path, create, &h->m, h->errmsg, sizeof h->errmsg);
    if (rc < 0)
        return rc == MEMORY_OPEN_REFUSED ? ASKDB_ERR_USAGE : ASKDB_ERR_IO;
    h->errmsg[0] = '\0';
    h->opened = 1;
    return ASKDB_OK;
}

void askdb_memory_close(askdb_memory *h)
{
    if (!h)
        return;
    memory_close(h->m);
    free(h->path);
    free(h);
}

const char *askdb_memory_errmsg(const askdb_memory *h)
{
    return h ? h->errmsg : "out of memory";
}

const char *askdb_memory_path(const askdb_memory *h)
{
    if (!h)
        return "";
    if (h->m)
        return memory_file(h->m);
    return h->path ? h->path : "(the default store, not created yet)";
}

/* The status of a memory_learn() result, with the reason kept. */
static askdb_status learn_status(int rc)
{
    if (rc == MEMORY_REJECTED)
        return ASKDB_ERR_REFUSED;
    if (rc == MEMORY_ERROR)
        return ASKDB_ERR_IO;
    return ASKDB_OK;
}

askdb_status askdb_memory_learn(askdb_memory *h, askdb_db *db,
                                const char *question, const char *sql,
                                askdb_learned *out)
{
    int rc;

    if (out)
        memset(out, 0, sizeof *out);
    if (takes_pairs(h))
        return ASKDB_ERR_USAGE;
    if (!db)
        return fail(h, ASKDB_ERR_USAGE, "no database given");
    if (!question || !sql)
        return fail(h, ASKDB_ERR_USAGE, "a pair needs a question and SQL");
    if (db_usable(db))
        return fail(h, ASKDB_ERR_USAGE, "%s", askdb_db_errmsg(db));
    rc = memory_learn(h->m, db, question, sql, out, h->errmsg,
                      sizeof h->errmsg);
    return learn_status(rc);
}

/* ---------------------------------------------------------------------- */
/* Importing a file                                                       */
/* ---------------------------------------------------------------------- */

struct import {
    askdb_memory *h;
    askdb_db *db;
    const char *file;
    char *stem;              /* the database's file name without extension */
    askdb_reject_fn on_reject;
    void *ud;
    askdb_import_counts *n;
};

static void reject(struct import *im, long line, const char *why)
{
    im->n->rejected++;
    if (im->on_reject)
        im->on_reject(im->ud, line, why);
}

/* One item of a file. 0, or -1 when the store failed (errmsg says why). */
static int import_item(struct import *im, const json_t *o, long line)
{
    const char *q, *s, *dbid;
    int rc;

    if (!json_is_object(o)) {
        reject(im, line, "not a JSON object");
        return 0;
    }
    dbid = jsonx_str(o, "db_id");
    if (dbid && strcmp(dbid, im->stem) != 0) {
        im->n->skipped++;
        return 0;
    }
    q = jsonx_str(o, "question");
    s = jsonx_str(o, "sql");
    if (!s)
        s = jsonx_str(o, "query");
    if (!s)
        s = jsonx_str(o, "SQL");
    if (!q) {
        reject(im, line, "no \"question\" string");
        return 0;
    }
    if (!s) {
        reject(im, line, "no \"sql\" (or \"query\") string");
        return 0;
    }
    rc = memory_learn(im->h->m, im->db, q, s, NULL, im->h->errmsg,
                      sizeof im->h->errmsg);
    if (rc == MEMORY_ERROR)
        return -1;
    if (rc == MEMORY_REJECTED)
        reject(im, line, im->h->errmsg);
    else if (rc == 1)
        im->n->replaced++;
    else
        im->n->stored++;
    return 0;
}

/* The whole file, NUL-terminated; NULL with errmsg set and *st. */
static char *slurp(struct import *im, askdb_status *st)
{
    char chunk[65536];
    struct buf b;
    size_t n;
    FILE *f = fopen(im->file, "rb");

    if (!f) {
        *st = fail(im->h, ASKDB_ERR_IO, "cannot read '%s': %s", im->file,
                   strerror(errno));
        return NULL;
    }
    buf_init(&b, IMPORT_MAX_FILE);
    buf_puts(&b, "");
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(&b, chunk, n);
    if (ferror(f))
        *st = fail(im->h, ASKDB_ERR_IO, "cannot read '%s': %s", im->file,
                   strerror(errno));
    else if (buf_err(&b))
        *st = fail(im->h, ASKDB_ERR_USAGE, "'%s' is larger than %zu bytes or "
                   "memory ran out", im->file, IMPORT_MAX_FILE);
    fclose(f);
    if (*st) {
        buf_free(&b);
        return NULL;
    }
    return buf_steal(&b);
}

/* Skip white space from *p up to end, counting line breaks into *line. */
static void skip_ws(const char **p, const char *end, long *line)
{
    while (*p < end && (**p == ' ' || **p == '\t' || **p == '\r' ||
                        **p == '\n')) {
        if (**p == '\n')
            (*line)++;
        (*p)++;
    }
}

/*
** A JSON array, read one item at a time so that every item has its line,
** and each item learned when learn is set (else only the syntax is
** checked). p points at '['. ASKDB_OK, ASKDB_ERR_USAGE (malformed array)
** or ASKDB_ERR_IO (store failure), with errmsg set.
*/
static askdb_status import_array(struct import *im, const char *p,
                                 const char *end, long line, int learn)
{
    json_error_t je;
    json_t *o;
    const char *s;
    long at;
    int rc;

    p++;
    skip_ws(&p, end, &line);
    if (p < end && *p == ']')
        return ASKDB_OK;
    for (;;) {
        at = line;
        o = json_loadb(p, (size_t)(end - p),
                       JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &je);
        if (!o)
            return fail(im->h, ASKDB_ERR_USAGE, "%s:%ld: not valid JSON: %s",
                        im->file, at + je.line - 1, je.text);
        for (s = p; s < p + je.position; s++)
            line += *s == '\n';
        p += je.position;
        rc = learn ? import_item(im, o, at) : 0;
        json_decref(o);
        if (rc)
            return ASKDB_ERR_IO;
        skip_ws(&p, end, &line);
        if (p < end && *p == ',') {
            p++;
            skip_ws(&p, end, &line);
            continue;
        }
        if (p < end && *p == ']')
            break;
        return fail(im->h, ASKDB_ERR_USAGE, "%s:%ld: not valid JSON: "
                    "expected ',' or ']' after an item", im->file, line);
    }
    p++;
    skip_ws(&p, end, &line);
    if (p < end)
        return fail(im->h, ASKDB_ERR_USAGE, "%s:%ld: not valid JSON: text "
                    "after the array", im->file, line);
    return ASKDB_OK;
}

/* JSON lines: one object per non-blank line; a line that is not JSON is
** a rejected item. ASKDB_OK or ASKDB_ERR_IO (store failure). */
static askdb_status import_lines(struct import *im, char *text)
{
    json_error_t je;
    char *p, *nl, why[300];
    long line = 0;
    json_t *o;
    int rc;

    for (p = text; p && *p; p = nl) {
        nl = strchr(p, '\n');
        if (nl)
            *nl++ = '\0';
        line++;
        if (!p[strspn(p, " \t\r")])
            continue;
        o = json_loads(p, 0, &je);
        if (!o) {
            snprintf(why, sizeof why, "not valid JSON: %s", je.text);
            reject(im, line, why);
            continue;
        }
        rc = import_item(im, o, line);
        json_decref(o);
        if (rc)
            return ASKDB_ERR_IO;
    }
    return ASKDB_OK;
}

askdb_status askdb_memory_import(askdb_memory *h, askdb_db *db,
                                 const char *file, askdb_reject_fn on_reject,
                                 void *ud, askdb_import_counts *counts)
{
    struct import im;
    askdb_import_counts none;
    askdb_status st = ASKDB_OK;
    char err[1024], *text, *body;
    const char *p, *end;
    long line = 1;

    if (!counts)
        counts = &none;
    memset(counts, 0, sizeof *counts);
    if (takes_pairs(h))
        return ASKDB_ERR_USAGE;
    if (!db || !file)
        return fail(h, ASKDB_ERR_USAGE, "an import needs a database and "
                    "a file");
    if (db_usable(db))
        return fail(h, ASKDB_ERR_USAGE, "%s", askdb_db_errmsg(db));
    memset(&im, 0, sizeof im);
    im.h = h;
    im.db = db;
    im.file = file;
    im.on_reject = on_reject;
    im.ud = ud;
    im.n = counts;
    im.stem = text_file_stem(db->path);
    if (!im.stem)
        return fail(h, ASKDB_ERR_NOMEM, "out of memory");
    text = slurp(&im, &st);
    if (!text) {
        free(im.stem);
        return st;
    }
    /* A UTF-8 byte order mark (Windows editors write one) is no JSON:
    ** the first line was rejected, a whole array with it. */
    body = strncmp(text, "\xef\xbb\xbf", 3) == 0 ? text + 3 : text;
    p = body;
    end = text + strlen(text);
    skip_ws(&p, end, &line);
    /* A broken array stores nothing: it is found before any item is
    ** verified, so a new store is not even made. */
    if (*p == '[')
        st = import_array(&im, p, end, line, 0);
    if (st)
        goto out;
    if (memory_batch_begin(h->m, h->errmsg, sizeof h->errmsg)) {
        st = ASKDB_ERR_IO;
        goto out;
    }
    st = *p == '[' ? import_array(&im, p, end, line, 1)
                   : import_lines(&im, body);
    if (st)
        (void)memory_batch_end(h->m, 0, err, sizeof err);
    else if (memory_batch_end(h->m, 1, h->errmsg, sizeof h->errmsg))
        st = ASKDB_ERR_IO;
out:
    free(text);
    free(im.stem);
    if (st)
        memset(counts, 0, sizeof *counts);
    return st;
}

/* ---------------------------------------------------------------------- */
/* Listing and forgetting                                                 */
/* ---------------------------------------------------------------------- */

/*
** The db_key of db_path into *key (malloc()ed): 1. 0 when there is no
** store yet (*key NULL: nothing to list or forget), -1 when db_path does
** not resolve, -2 when it is NULL (errmsg set).
*/
static int key_of(askdb_memory *h, const char *db_path, char **key)
{
    *key = NULL;
    if (!db_path) {
        fail(h, ASKDB_ERR_USAGE, "no database path given");
        return -2;
    }
    *key = memory_db_key(db_path);
    if (!*key) {
        fail(h, ASKDB_ERR_DB_OPEN, "cannot open database '%s': %s", db_path,
             strerror(errno));
        return -1;
    }
    if (!h->m) {
        free(*key);
        *key = NULL;
        return 0;
    }
    return 1;
}

/* The status of a key_of() result of 0 or less. */
static askdb_status key_status(int rc)
{
    return rc == -2 ? ASKDB_ERR_USAGE : rc < 0 ? ASKDB_ERR_DB_OPEN : ASKDB_OK;
}

askdb_status askdb_memory_list(askdb_memory *h, const char *db_path,
                               askdb_pair **out, int *n)
{
    struct memory_pair *p = NULL;
    askdb_pair *q;
    char *key;
    int i, rc;

    if (!h || !out || !n)
        return ASKDB_ERR_USAGE;
    *out = NULL;
    *n = 0;
    if (usable(h))
        return ASKDB_ERR_USAGE;
    rc = key_of(h, db_path, &key);
    if (rc <= 0)
        return key_status(rc);
    rc = memory_list(h->m, key, &p, n);
    free(key);
    if (rc)
        return fail(h, ASKDB_ERR_IO, "cannot read the memory store '%s': %s",
                    memory_file(h->m), memory_errmsg(h->m));
    q = calloc(*n ? (size_t)*n : 1, sizeof *q);
    if (!q) {
        memory_pairs_free(p, *n);
        *n = 0;
        return fail(h, ASKDB_ERR_NOMEM, "out of memory");
    }
    /* The same strings, handed over. */
    for (i = 0; i < *n; i++) {
        q[i].question = p[i].question;
        q[i].sql = p[i].sql;
        q[i].added_at = p[i].added_at;
    }
    free(p);
    *out = q;
    return ASKDB_OK;
}

void askdb_pairs_free(askdb_pair *p, int n)
{
    int i;

    if (!p)
        return;
    for (i = 0; i < n; i++) {
        free(p[i].question);
        free(p[i].sql);
        free(p[i].added_at);
    }
    free(p);
}

askdb_status askdb_memory_forget(askdb_memory *h, const char *db_path,
                                 const char *question, long *removed)
{
    char *key;
    int n;

    if (removed)
        *removed = 0;
    if (!h)
        return ASKDB_ERR_USAGE;
    if (usable(h))
        return ASKDB_ERR_USAGE;
    n = key_of(h, db_path, &key);
    if (n <= 0)
        return key_status(n);
    n = memory_forget(h->m, key, question, h->errmsg, sizeof h->errmsg);
    free(key);
    if (n < 0)
        return ASKDB_ERR_IO;
    if (removed)
        *removed = n;
    return ASKDB_OK;
}
