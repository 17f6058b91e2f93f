/* memory.c - the store of verified question/SQL pairs and its FTS5 search. */
#define _XOPEN_SOURCE 700   /* realpath() */
#include "agent/memory.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cache.h"
#include "core/outfile.h"
#include "core/text.h"
#include "db/db.h"

/*
** Invariants:
**   - askdb opens a file read-write as a store only when it is missing,
**     empty, or its SQLite header carries askdb's application_id: the
**     header is read with plain stdio before SQLite touches the file, so
**     pointing --memory at a user's database changes nothing (not even a
**     -wal or -journal file appears).
**   - pairs_fts indexes each pair's question and its database's tag
**     "db<dbs.id>" (rowid = pairs.id), kept in step by triggers. A search
**     is `dbtag:dbN AND question:(words)`: FTS5 intersects the question's
**     words with the one database's pairs instead of scoring every pair
**     of every database and filtering afterwards. With function words
**     left out of the query (stop_words), a search over Spider's 6,900
**     training pairs (145 databases) takes about 1 ms instead of 10.
**   - qkey is the folded question (trimmed, one space per run of white
**     space, ASCII lower case); (db_key, qkey) is unique, so adding the
**     same question again replaces its SQL.
**   - every statement binds its values; the FTS5 query string is built
**     from words only (memory_fts_query), so any question is valid syntax.
**   - a new store (a missing or empty file opened with create) is made by
**     the first pair stored, not by memory_open: a refused pair, or a
**     batch that stores nothing, leaves no file behind, and no cache
**     directory for the default store either (it is made with the store).
**     Until then the handle has no SQLite connection (h NULL) and reads
**     find nothing.
*/

#define MEMORY_APP_ID 0x61736b6dL    /* "askm" */
#define MEMORY_FORMAT 1              /* user_version of this layout */
#define MEMORY_BUSY_MS 5000
#define MEMORY_MAX_WORDS 32
#define MEMORY_MAX_WORD 64

struct memory {
    sqlite3 *h;              /* NULL: a new store, not made yet */
    char why[512];           /* reason(): the last SQLite failure */
    char *path;
    int batch;               /* a batch was begun before the store was made */
    int in_cache;            /* path is the default store's, in the cache
                                directory, which make_store may make */
};

static const char schema_sql[] =
    "CREATE TABLE dbs("
    " id INTEGER PRIMARY KEY,"
    " db_key TEXT NOT NULL UNIQUE);"
    "CREATE TABLE pairs("
    " id INTEGER PRIMARY KEY,"
    " db_key TEXT NOT NULL,"
    " question TEXT NOT NULL,"
    " qkey TEXT NOT NULL,"
    " sql TEXT NOT NULL,"
    " added_at TEXT NOT NULL,"
    " UNIQUE(db_key, qkey));"
    "CREATE VIRTUAL TABLE pairs_fts USING fts5(question, dbtag,"
    " tokenize='porter unicode61 remove_diacritics 2');"
    "CREATE TRIGGER pairs_ai AFTER INSERT ON pairs BEGIN"
    " INSERT OR IGNORE INTO dbs(db_key) VALUES (new.db_key);"
    " INSERT INTO pairs_fts(rowid, question, dbtag) VALUES (new.id,"
    " new.question, 'db' || (SELECT id FROM dbs WHERE db_key = new.db_key));"
    " END;"
    "CREATE TRIGGER pairs_ad AFTER DELETE ON pairs BEGIN"
    " DELETE FROM pairs_fts WHERE rowid = old.id;"
    " END;"
    "CREATE TRIGGER pairs_au AFTER UPDATE ON pairs BEGIN"
    " DELETE FROM pairs_fts WHERE rowid = old.id;"
    " INSERT OR IGNORE INTO dbs(db_key) VALUES (new.db_key);"
    " INSERT INTO pairs_fts(rowid, question, dbtag) VALUES (new.id,"
    " new.question, 'db' || (SELECT id FROM dbs WHERE db_key = new.db_key));"
    " END;"
    "PRAGMA application_id = 1634954093;"
    "PRAGMA user_version = 1;";

#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"

/* ---------------------------------------------------------------------- */
/* Text                                                                   */
/* ---------------------------------------------------------------------- */

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '\v';
}

/* s without leading and trailing white space, malloc()ed; NULL on OOM. */
static char *trim_dup(const char *s)
{
    size_t n;

    while (is_space((unsigned char)*s))
        s++;
    n = strlen(s);
    while (n > 0 && is_space((unsigned char)s[n - 1]))
        n--;
    return strndup(s, n);
}

/* The folded question (see the invariants), malloc()ed; NULL on OOM. */
static char *fold(const char *q)
{
    char *out = malloc(strlen(q) + 1), *o = out;
    int gap = 0;

    if (!out)
        return NULL;
    for (; *q; q++) {
        unsigned char c = (unsigned char)*q;
        if (is_space(c)) {
            gap = o > out;
            continue;
        }
        if (gap)
            *o++ = ' ';
        gap = 0;
        *o++ = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    *o = '\0';
    return out;
}

/* Letters, digits, '_' and every byte of a UTF-8 sequence: words are cut
** only at ASCII bytes, so no multi-byte character is ever split. */
static int is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

/*
** English function words left out of the search: they are in most
** questions, so bm25 gives them almost no weight, but FTS5 still reads
** their whole posting lists to count them. Words that shape the SQL
** (how, many, not, no, than, most, each, all, ...) are kept.
*/
static const char *const stop_words[] = {
    "a", "an", "and", "are", "as", "at", "be", "been", "by", "did", "do",
    "does", "for", "from", "had", "has", "have", "her", "his", "i", "in",
    "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "s",
    "that", "the", "their", "them", "there", "these", "they", "this",
    "those", "to", "was", "we", "were", "with", "you", "your", NULL
};

/* Is w[0..n) (ASCII case ignored) one of list? */
static int word_in(const char *const *list, const char *w, size_t n)
{
    int i;

    for (i = 0; list[i]; i++)
        if (strlen(list[i]) == n && strncasecmp(list[i], w, n) == 0)
            return 1;
    return 0;
}

/* Is w[0..n) (ASCII case ignored) already in the query b? (b holds
** "w1" OR "w2" ...: each word sits between quotes.) */
static int seen(const struct buf *b, const char *w, size_t n)
{
    const char *p = b->data;

    while (p && (p = strchr(p, '"')) != NULL) {
        const char *e = strchr(p + 1, '"');
        if (!e)
            break;
        if ((size_t)(e - p - 1) == n && strncasecmp(p + 1, w, n) == 0)
            return 1;
        p = e + 1;
    }
    return 0;
}

char *memory_fts_query(const char *question)
{
    struct buf b;
    const char *p = question ? question : "", *w;
    size_t n;
    int words = 0;

    buf_init(&b, 0);
    buf_puts(&b, "");
    while (*p && words < MEMORY_MAX_WORDS) {
        if (!is_word((unsigned char)*p)) {
            p++;
            continue;
        }
        for (w = p; is_word((unsigned char)*p); p++)
            ;
        n = (size_t)(p - w);
        if (n > MEMORY_MAX_WORD || word_in(stop_words, w, n) ||
            seen(&b, w, n))
            continue;
        /* A word holds no '"', so quoting it needs no escapes; as an FTS5
        ** string, NEAR, AND, OR and NOT are plain words too. */
        buf_printf(&b, "%s\"%.*s\"", words ? " OR " : "", (int)n, w);
        words++;
    }
    return buf_steal(&b);
}

void memory_render(struct buf *b, const struct memory_pair *p, int n)
{
    const char *s;
    int i;

    if (n <= 0)
        return;
    buf_puts(b, "Examples of questions about this database and their SQL:\n");
    for (i = 0; i < n; i++) {
        buf_puts(b, "Q: ");
        for (s = p[i].question; *s; s++)
            buf_putc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
        buf_printf(b, "\nSQL: %s\n", p[i].sql);
    }
}

/* ---------------------------------------------------------------------- */
/* Opening                                                                */
/* ---------------------------------------------------------------------- */

enum file_state { F_MISSING, F_EMPTY, F_OURS };

/*
** Look at path before SQLite opens it: missing, empty, or an SQLite file
** with our application_id (header bytes 68..71, big-endian). Anything else
** is refused (MEMORY_OPEN_REFUSED), a file that cannot be looked at is
** MEMORY_OPEN_FAILED, with the reason in err.
*/
static int peek(const char *path, enum file_state *st, char *err,
                size_t errlen)
{
    unsigned char h[100];
    struct stat sb;
    unsigned long id;
    FILE *f;
    size_t got;

    if (stat(path, &sb)) {
        if (errno == ENOENT) {
            *st = F_MISSING;
            return 0;
        }
        snprintf(err, errlen, "cannot open memory store '%s': %s", path,
                 strerror(errno));
        return MEMORY_OPEN_FAILED;
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "memory store '%s' is not a regular file",
                 path);
        return MEMORY_OPEN_REFUSED;
    }
    if (sb.st_size == 0) {
        *st = F_EMPTY;
        return 0;
    }
    f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open memory store '%s': %s", path,
                 strerror(errno));
        return MEMORY_OPEN_FAILED;
    }
    got = fread(h, 1, sizeof h, f);
    fclose(f);
    if (got < sizeof h || memcmp(h, "SQLite format 3", 16) != 0) {
        snprintf(err, errlen, "'%s' is not an askdb memory store (not an "
                              "SQLite file); askdb leaves it untouched",
                 path);
        return MEMORY_OPEN_REFUSED;
    }
    id = (unsigned long)h[68] << 24 | (unsigned long)h[69] << 16 |
         (unsigned long)h[70] << 8 | (unsigned long)h[71];
    if (id != (unsigned long)MEMORY_APP_ID) {
        snprintf(err, errlen, "'%s' is another SQLite database, not an "
                              "askdb memory store; askdb leaves it untouched",
                 path);
        return MEMORY_OPEN_REFUSED;
    }
    *st = F_OURS;
    return 0;
}

/*
** SQLite's message for the last failure on m->h (in m->why, valid until
** the next call). A store locked past the busy wait (MEMORY_BUSY_MS) is
** being written by another process, which only askdb learn does: a
** --file import keeps its write lock until the whole file is verified.
*/
static const char *reason(struct memory *m)
{
    int busy = (sqlite3_errcode(m->h) & 0xff) == SQLITE_BUSY;

    snprintf(m->why, sizeof m->why, "%s%s", sqlite3_errmsg(m->h),
             busy ? " (another askdb learn is writing to this store; a "
                    "--file import holds it until the import ends: try "
                    "again when it has finished)" : "");
    return m->why;
}

/* One integer from a statement without parameters; -1 on error. */
static long long query_int(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long v = -1;

    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/*
** Inside one write transaction: set up the schema on a fresh file (another
** process may have done it meanwhile), or check the format of ours. 0,
** MEMORY_OPEN_REFUSED (not ours, another format) or MEMORY_OPEN_FAILED
** (SQLite failed: locked, read-only, I/O), with the reason in err.
*/
static int setup(struct memory *m, int create, char *err, size_t errlen)
{
    long long id, ver, ntab;
    int rc = MEMORY_OPEN_FAILED;

    if (create && sqlite3_exec(m->h, "BEGIN IMMEDIATE", NULL, NULL, NULL)) {
        snprintf(err, errlen, "memory store '%s': %s", m->path,
                 reason(m));
        return MEMORY_OPEN_FAILED;
    }
    /* Stop at the first failure: a store locked by a writer would make
    ** each query wait out the busy timeout. */
    id = query_int(m->h, "PRAGMA application_id");
    ver = id < 0 ? -1 : query_int(m->h, "PRAGMA user_version");
    ntab = ver < 0 ? -1 : query_int(m->h, "SELECT count(*) FROM sqlite_master");
    if (id < 0 || ver < 0 || ntab < 0) {
        snprintf(err, errlen, "memory store '%s': %s", m->path,
                 reason(m));
    } else if (id == 0 && ntab == 0 && create) {
        if (sqlite3_exec(m->h, schema_sql, NULL, NULL, NULL))
            snprintf(err, errlen, "cannot set up memory store '%s': %s",
                     m->path, reason(m));
        else
            rc = 0;
    } else if (id != MEMORY_APP_ID) {
        snprintf(err, errlen, "'%s' is not an askdb memory store", m->path);
        rc = MEMORY_OPEN_REFUSED;
    } else if (ver != MEMORY_FORMAT) {
        snprintf(err, errlen, "memory store '%s' has format %lld; this "
                              "askdb reads format %d (a newer askdb made it?)",
                 m->path, ver, MEMORY_FORMAT);
        rc = MEMORY_OPEN_REFUSED;
    } else {
        rc = 0;
    }
    if (create) {
        if (rc == 0 && sqlite3_exec(m->h, "COMMIT", NULL, NULL, NULL)) {
            snprintf(err, errlen, "cannot set up memory store '%s': %s",
                     m->path, reason(m));
            rc = MEMORY_OPEN_FAILED;
        }
        if (rc)
            sqlite3_exec(m->h, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

/* The default store file, malloc()ed; its directory is not made here
** (make_store makes it with the store). */
static char *default_path(char *err, size_t errlen)
{
    char *dir = cache_path("", 0, err, errlen), *p;
    size_t n;

    if (!dir)
        return NULL;
    n = strlen(dir) + sizeof "/memory.sqlite";
    p = malloc(n);
    if (p)
        snprintf(p, n, "%s/memory.sqlite", dir);
    else
        snprintf(err, errlen, "out of memory");
    free(dir);
    return p;
}

/*
** Open the store file with SQLite and set it up (create: a fresh file gets
** the schema) or check it. 0 or MEMORY_OPEN_*, with the reason in err;
** on failure m->h is NULL again.
*/
static int connect(struct memory *m, int create, char *err, size_t errlen)
{
    int flags = SQLITE_OPEN_READWRITE, rc;

    if (create)
        flags |= SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(m->path, &m->h, flags, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open memory store '%s': %s", m->path,
                 m->h ? reason(m) : "out of memory");
        rc = MEMORY_OPEN_FAILED;
        goto out;
    }
    sqlite3_extended_result_codes(m->h, 1);
    sqlite3_busy_timeout(m->h, MEMORY_BUSY_MS);
    sqlite3_db_config(m->h, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    rc = setup(m, create, err, errlen);
out:
    if (rc) {
        sqlite3_close(m->h);
        m->h = NULL;
    }
    return rc;
}

/*
** Whether the store at path (missing or empty: fs) can be made later:
** an empty file must be readable and writable, a missing one's folder
** must exist and be writable, or, in_cache, the nearest of its folders
** that exists (make_store makes the rest). 0, or MEMORY_OPEN_FAILED with
** the reason.
*/
static int creatable(const char *path, enum file_state fs, int in_cache,
                     char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    char *dir, *cut;
    int rc = 0;

    if (fs == F_EMPTY) {
        if (access(path, R_OK | W_OK) == 0)
            return 0;
        snprintf(err, errlen, "cannot open memory store '%s': %s", path,
                 strerror(errno));
        return MEMORY_OPEN_FAILED;
    }
    dir = !slash ? strdup(".")
          : slash == path ? strdup("/")
                          : strndup(path, (size_t)(slash - path));
    if (!dir) {
        snprintf(err, errlen, "out of memory");
        return MEMORY_OPEN_FAILED;
    }
    while (in_cache && access(dir, F_OK) != 0 && errno == ENOENT) {
        cut = strrchr(dir, '/');
        if (!cut) {             /* "relcache": the working directory */
            dir[0] = '.';       /* dir holds one byte at least */
            dir[1] = '\0';
            break;
        }
        cut[cut == dir] = '\0';  /* "/askdbcache": the root */
        if (cut == dir)
            break;
    }
    if (access(dir, W_OK | X_OK)) {
        snprintf(err, errlen, "cannot open memory store '%s': %s", path,
                 strerror(errno));
        rc = MEMORY_OPEN_FAILED;
    }
    free(dir);
    return rc;
}

int memory_open(const char *path, int create, struct memory **out,
                char *err, size_t errlen)
{
    struct memory *m;
    enum file_state fs;
    int rc = MEMORY_OPEN_FAILED;

    *out = NULL;
    /* SQLite would open "" as a private temporary database, gone with
    ** the handle: every pair learned into it would be lost. */
    if (path && !*path) {
        snprintf(err, errlen, "the memory store's path is empty (NULL "
                              "names the default store)");
        return MEMORY_OPEN_REFUSED;
    }
    m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return MEMORY_OPEN_FAILED;
    }
    m->path = path ? strdup(path) : default_path(err, errlen);
    m->in_cache = !path;
    if (!m->path) {
        if (path)
            snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (outfile_companion_refusal(m->path)) {
        snprintf(err, errlen, "cannot use memory store '%s': %s", m->path,
                 outfile_companion_refusal(m->path));
        rc = MEMORY_OPEN_REFUSED;
        goto fail;
    }
    rc = peek(m->path, &fs, err, errlen);
    if (rc)
        goto fail;
    if (fs != F_OURS && !create) {
        memory_close(m);
        return 1;
    }
    /* A new store waits for its first pair (make_store). */
    rc = fs == F_OURS ? connect(m, create, err, errlen)
                      : creatable(m->path, fs, m->in_cache, err, errlen);
    if (rc)
        goto fail;
    *out = m;
    return 0;
fail:
    memory_close(m);
    return rc;
}

void memory_close(struct memory *m)
{
    if (!m)
        return;
    sqlite3_close(m->h);
    free(m->path);
    free(m);
}

const char *memory_file(const struct memory *m)
{
    return m->path;
}

const char *memory_errmsg(struct memory *m)
{
    return m->h ? reason(m) : "";
}

char *memory_db_key(const char *db_path)
{
    if (!db_path || !*db_path) {
        errno = ENOENT;
        return NULL;
    }
    /* A server's URL: the pairs learned through a database handle are
    ** keyed by its label, which has no password; the URL as typed for
    ** --list or --forget still carries it. Redacting a label again
    ** changes nothing. */
    if (strstr(db_path, "://"))
        return db_redact(db_path);
    return realpath(db_path, NULL);
}

/* ---------------------------------------------------------------------- */
/* Writing                                                                */
/* ---------------------------------------------------------------------- */

static int store_err(struct memory *m, const char *what, char *err,
                     size_t errlen)
{
    snprintf(err, errlen, "memory store '%s': %s: %s", m->path, what,
             reason(m));
    return -1;
}

/*
** Make the new store of a handle opened with create (its first pair is
** being stored): the default store's cache directory is made, the file
** is looked at again, as it may have changed since memory_open, then
** created and set up; a batch begun meanwhile starts now. 0, or -1 with
** the reason in err (m stays without a store).
*/
static int make_store(struct memory *m, char *err, size_t errlen)
{
    enum file_state fs;
    char *dir = NULL;

    if (m->in_cache) {
        dir = cache_path("", 1, err, errlen);
        if (!dir)
            return -1;
        free(dir);
    }
    if (peek(m->path, &fs, err, errlen) || connect(m, 1, err, errlen))
        return -1;
    if (m->batch && sqlite3_exec(m->h, "BEGIN IMMEDIATE", NULL, NULL, NULL))
        return store_err(m, "starting a write", err, errlen);
    return 0;
}

/* Trimmed copies of question and sql, checked for emptiness and size.
** 0, or -1 with the reason in err (*q and *s NULL). */
static int clean_pair(const char *question, const char *sql, char **q,
                      char **s, char *err, size_t errlen)
{
    size_t chars;

    *q = question ? trim_dup(question) : NULL;
    *s = sql ? trim_dup(sql) : NULL;
    if ((question && !*q) || (sql && !*s))
        snprintf(err, errlen, "out of memory");
    else if (!*q || !**q)
        snprintf(err, errlen, "the question is empty");
    else if (!*s || !**s)
        snprintf(err, errlen, "the SQL is empty");
    else if (strlen(*s) > MEMORY_MAX_SQL)
        snprintf(err, errlen, "the SQL is longer than %d bytes",
                 MEMORY_MAX_SQL);
    /* Stored text must be UTF-8: listings print it as JSON. */
    else if (!text_valid(*q, strlen(*q)))
        snprintf(err, errlen, "the question is not valid UTF-8");
    else if (!text_valid(*s, strlen(*s)))
        snprintf(err, errlen, "the SQL is not valid UTF-8");
    else if ((chars = text_chars(*q, strlen(*q))) > MEMORY_MAX_QUESTION)
        snprintf(err, errlen, "the question is %zu characters long, over "
                 "the limit of %d (ASKDB_MAX_QUESTION)", chars,
                 MEMORY_MAX_QUESTION);
    else
        return 0;
    free(*q);
    free(*s);
    *q = *s = NULL;
    return -1;
}

/* Insert or replace (q, s) under db_key inside the current transaction:
** 0 added, 1 replaced, -1 error. */
static int upsert(struct memory *m, const char *db_key, const char *q,
                  const char *s, const char *qkey, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    sqlite3_int64 id = 0;
    int rc;

    rc = sqlite3_prepare_v2(m->h,
                            "SELECT id FROM pairs WHERE db_key = ?1 AND "
                            "qkey = ?2", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, db_key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, qkey, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            id = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return store_err(m, "looking up the question", err, errlen);

    if (id)
        rc = sqlite3_prepare_v2(m->h,
                                "UPDATE pairs SET question = ?2, sql = ?3, "
                                "added_at = " NOW_SQL " WHERE id = ?5",
                                -1, &st, NULL);
    else
        rc = sqlite3_prepare_v2(m->h,
                                "INSERT INTO pairs(db_key, question, sql, "
                                "qkey, added_at) VALUES (?1, ?2, ?3, ?4, "
                                NOW_SQL ")", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        if (!id) {
            sqlite3_bind_text(st, 1, db_key, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 4, qkey, -1, SQLITE_STATIC);
        }
        sqlite3_bind_text(st, 2, q, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, s, -1, SQLITE_STATIC);
        if (id)
            sqlite3_bind_int64(st, 5, id);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return store_err(m, "storing the pair", err, errlen);
    return id ? 1 : 0;
}

int memory_add(struct memory *m, const char *db_key, const char *question,
               const char *sql, char *err, size_t errlen)
{
    char *q = NULL, *s = NULL, *qkey = NULL;
    int own = 0, rc = -1;

    if (!db_key || !*db_key) {
        snprintf(err, errlen, "no database key");
        return -1;
    }
    if (clean_pair(question, sql, &q, &s, err, errlen))
        return -1;
    qkey = fold(q);
    if (!qkey) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (!m->h && make_store(m, err, errlen))
        goto out;
    /* Outside a batch the add is its own transaction. */
    if (sqlite3_get_autocommit(m->h)) {
        if (sqlite3_exec(m->h, "BEGIN IMMEDIATE", NULL, NULL, NULL)) {
            store_err(m, "starting a write", err, errlen);
            goto out;
        }
        own = 1;
    }
    rc = upsert(m, db_key, q, s, qkey, err, errlen);
    if (own) {
        if (rc >= 0 && sqlite3_exec(m->h, "COMMIT", NULL, NULL, NULL))
            rc = store_err(m, "committing", err, errlen);
        if (rc < 0)
            sqlite3_exec(m->h, "ROLLBACK", NULL, NULL, NULL);
    }
out:
    free(q);
    free(s);
    free(qkey);
    return rc;
}

int memory_learn(struct memory *m, askdb_db *db, const char *question,
                 const char *sql, askdb_learned *out, char *err,
                 size_t errlen)
{
    char *q = NULL, *s = NULL, *key = NULL, *self = NULL;
    askdb_result *r = NULL;
    struct db_err e;
    askdb_status st;
    int rc = MEMORY_REJECTED;

    if (out)
        memset(out, 0, sizeof *out);
    if (clean_pair(question, sql, &q, &s, err, errlen))
        return MEMORY_REJECTED;
    key = memory_db_key(db->label);
    if (!key) {
        snprintf(err, errlen, "cannot resolve database path '%s': %s",
                 db->label, strerror(errno));
        rc = MEMORY_ERROR;
        goto out;
    }
    self = realpath(m->path, NULL);
    if (self && strcmp(self, key) == 0) {
        snprintf(err, errlen, "the memory store '%s' is the database "
                              "itself; use another file", m->path);
        rc = MEMORY_ERROR;
        goto out;
    }
    /* db_run checks again; checking first refuses a write without
    ** running anything. A refusal's message says "refused: ..." itself. */
    st = db_check(db, s, &e);
    if (st == ASKDB_OK)
        st = db_run(db, s, &r, &e);
    if (st) {
        if (st == ASKDB_ERR_REFUSED)
            snprintf(err, errlen, "%s", e.msg);
        else
            snprintf(err, errlen, "the SQL fails on the database: %s",
                     e.msg);
        goto out;
    }
    rc = memory_add(m, key, q, s, err, errlen);
    if (rc < 0) {
        rc = MEMORY_ERROR;
    } else if (out) {
        out->nrows = r->nrows;
        out->truncated = r->truncated;
        out->replaced = rc == 1;
    }
out:
    askdb_result_free(r);
    free(q);
    free(s);
    free(key);
    free(self);
    return rc;
}

int memory_batch_begin(struct memory *m, char *err, size_t errlen)
{
    if (!m->h) {             /* begins with the store (make_store) */
        m->batch = 1;
        return 0;
    }
    if (sqlite3_exec(m->h, "BEGIN IMMEDIATE", NULL, NULL, NULL))
        return store_err(m, "starting a write", err, errlen);
    return 0;
}

int memory_batch_end(struct memory *m, int commit, char *err, size_t errlen)
{
    m->batch = 0;
    if (!m->h)               /* nothing was stored, no store was made */
        return 0;
    if (commit && sqlite3_exec(m->h, "COMMIT", NULL, NULL, NULL)) {
        store_err(m, "committing", err, errlen);
        sqlite3_exec(m->h, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    if (!commit)
        sqlite3_exec(m->h, "ROLLBACK", NULL, NULL, NULL);
    return 0;
}

int memory_forget(struct memory *m, const char *db_key,
                  const char *question, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    char *q = NULL, *qkey = NULL;
    int rc;

    if (!m->h)
        return 0;
    if (question) {
        q = trim_dup(question);
        qkey = q ? fold(q) : NULL;
        if (!qkey) {
            free(q);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    rc = sqlite3_prepare_v2(m->h,
                            qkey ? "DELETE FROM pairs WHERE db_key = ?1 AND "
                                   "qkey = ?2"
                                 : "DELETE FROM pairs WHERE db_key = ?1",
                            -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, db_key, -1, SQLITE_STATIC);
        if (qkey)
            sqlite3_bind_text(st, 2, qkey, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    free(q);
    free(qkey);
    if (rc != SQLITE_DONE)
        return store_err(m, "forgetting", err, errlen);
    return sqlite3_changes(m->h);
}

/* ---------------------------------------------------------------------- */
/* Reading                                                                */
/* ---------------------------------------------------------------------- */

void memory_pair_clear(struct memory_pair *p)
{
    free(p->question);
    free(p->sql);
    free(p->added_at);
}

void memory_pairs_free(struct memory_pair *p, int n)
{
    int i;

    if (!p)
        return;
    for (i = 0; i < n; i++)
        memory_pair_clear(&p[i]);
    free(p);
}

static char *col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);

    return strdup(t ? (const char *)t : "");
}

/* Step st to the end collecting (question, sql, added_at, score) rows.
** 0, or -1 (out and n cleared). */
static int collect(sqlite3_stmt *st, struct memory_pair **out, int *n)
{
    struct memory_pair *p = NULL, *np, *x;
    int cap = 0, cnt = 0, rc;

    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (cnt == cap) {
            cap = cap ? cap * 2 : 8;
            np = realloc(p, (size_t)cap * sizeof *p);
            if (!np)
                goto fail;
            p = np;
        }
        x = &p[cnt];
        x->question = col_dup(st, 0);
        x->sql = col_dup(st, 1);
        x->added_at = col_dup(st, 2);
        x->score = sqlite3_column_double(st, 3);
        cnt++;
        if (!x->question || !x->sql || !x->added_at)
            goto fail;
    }
    if (rc != SQLITE_DONE)
        goto fail;
    *out = p;
    *n = cnt;
    return 0;
fail:
    memory_pairs_free(p, cnt);
    return -1;
}

/* The FTS5 tag of db_key's pairs ("db<id>") in tag; 0, 1 when db_key has
** none (nothing ever stored), -1 on error. */
static int db_tag(struct memory *m, const char *db_key, char *tag,
                  size_t taglen)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;

    if (sqlite3_prepare_v2(m->h, "SELECT id FROM dbs WHERE db_key = ?1", -1,
                           &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, db_key, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            snprintf(tag, taglen, "db%lld",
                     (long long)sqlite3_column_int64(st, 0));
            rc = 0;
        } else {
            rc = rc == SQLITE_DONE ? 1 : -1;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

int memory_similar(struct memory *m, const char *db_key,
                   const char *question, int k, struct memory_pair **out,
                   int *n)
{
    sqlite3_stmt *st = NULL;
    struct buf match;
    char *words, tag[32];
    int rc;

    *out = NULL;
    *n = 0;
    if (k <= 0 || !m->h)
        return 0;
    if (k > MEMORY_MAX_K)
        k = MEMORY_MAX_K;
    rc = db_tag(m, db_key, tag, sizeof tag);
    if (rc)
        return rc < 0 ? -1 : 0;
    words = memory_fts_query(question);
    if (!words)
        return -1;
    if (!*words) {
        free(words);
        return 0;
    }
    buf_init(&match, 0);
    buf_printf(&match, "dbtag:%s AND question:(%s)", tag, words);
    free(words);
    if (buf_err(&match)) {
        buf_free(&match);
        return -1;
    }
    /* bm25() is lower for better matches; the tag column weighs nothing;
    ** newer pairs win ties. */
    rc = -1;
    if (sqlite3_prepare_v2(m->h,
                           "SELECT p.question, p.sql, p.added_at,"
                           " -bm25(pairs_fts, 1.0, 0.0) AS score"
                           " FROM pairs_fts JOIN pairs p"
                           " ON p.id = pairs_fts.rowid"
                           " WHERE pairs_fts MATCH ?1 AND p.db_key = ?2"
                           " ORDER BY score DESC, p.id DESC LIMIT ?3",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, match.data, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, db_key, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, k);
        rc = collect(st, out, n);
    }
    sqlite3_finalize(st);
    buf_free(&match);
    return rc;
}

int memory_list(struct memory *m, const char *db_key,
                struct memory_pair **out, int *n)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;

    *out = NULL;
    *n = 0;
    if (!m->h)
        return 0;
    if (sqlite3_prepare_v2(m->h,
                           "SELECT question, sql, added_at, 0.0 FROM pairs"
                           " WHERE db_key = ?1 ORDER BY id",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, db_key, -1, SQLITE_STATIC);
        rc = collect(st, out, n);
    }
    sqlite3_finalize(st);
    return rc;
}
