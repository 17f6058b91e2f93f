/* values.c - the value index: build it, cache it, match a question to it. */
#include "agent/values.h"

#include <errno.h>
#include <libstemmer.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cache.h"
#include "core/text.h"
#include "db/db.h"
#include "db/schema.h"

/*
** The index (an SQLite file of our own, never written once it is renamed
** into place):
**
**   meta(k, v)        format, checksum, bounds, counts, build time
**   col(id, tbl, col, nvalues, capped)
**   val(id, col, value, folded, ntok)
**                     one row per distinct stored value; folded is the
**                     value's words as the unicode61 tokenizer gives them
**                     (lower case, diacritics removed) joined by one
**                     space, ntok how many there are
**   val_words         FTS5, unicode61 remove_diacritics 2, contentless,
**                     over val.value with rowid = val.id: phrase lookups
**   term(id, term, df, len)
**                     the distinct words of val_words (from fts5vocab),
**                     in how many values each occurs, length in characters
**   term_tri          FTS5, trigram, contentless, over the words of 6+
**                     letters: the candidates for a misspelt long word
**   term_del(variant, term)
**                     each word of 4-8 letters with one letter deleted:
**                     the candidates for a misspelt short word
**
** It is built in memory and then written with VACUUM INTO to a temporary
** file in the cache directory, which rename() puts in place: readers see
** a whole file or none. When that fails the memory copy is used.
**
** Invariants of the matching:
**   - question words are folded by the very tokenizer the index uses (the
**     fts5 API's unicode61 with the same arguments), so "Gröna", "GRONA"
**     and "grona" are one word everywhere;
**   - a value is fully named by a phrase of n words when it contains the
**     phrase and has n words itself (both word lists are then equal);
**   - a phrase that no value contains is not part of a longer phrase that
**     one does, which keeps the n-gram scan short;
**   - close spellings are found word by word: a question word the index
**     does not know gets the closest word it does know, and phrases with
**     such words are looked up like the others but count as approximate;
**   - two words within one edit share a one-letter deletion (or one is
**     the other's), so for short words (4-7 letters, one edit allowed)
**     the lookups of the word and its deletions in term and term_del find
**     every candidate; a swap or change in the middle of a short word
**     leaves it no trigram in common ("lnud", "lund"). Long words (two
**     edits allowed) keep enough trigrams: their candidates come from
**     term_tri, best bm25 first. Either way the edit distance decides;
**   - a question word that is a word of a table or column name, by stem
**     ("cities", "codes"), names the column: it is never corrected, does
**     not name a value by being a part of it, and a value it names fully
**     counts half.
*/

/* 2: tables are named by schema_qname() ("sales.orders"), and a DuckDB
** file's other schemas are indexed too. */
#define FORMAT "askdb-values-2"
/* The two must say the same: the index's tokenizer and the one that folds
** question words. */
#define TOKENIZE "unicode61 remove_diacritics 2"
static const char *const tokenize_args[] = {"remove_diacritics", "2"};

#define MAX_NGRAM 6      /* longest unquoted phrase, in words */
#define MAX_QWORDS 128   /* words of a question considered */
#define MAX_QUOTES 16
#define MAX_VWORDS 16    /* values with more words are not indexed */
#define DF_CAP 200       /* values containing a phrase counted up to this
                            (q_contains says LIMIT DF_CAP + 1) */
#define MAX_WORD 32      /* longest word (characters) spelled closely */
#define MAX_TRI (3 * MAX_WORD)
#define SHORT_WORD 7     /* longest word with one edit allowed */
#define PER_SPAN 4       /* matches kept for one phrase */
#define DEFAULT_MAX 8
#define PROBE_ROWS 1000  /* rows that show whether a numeric column has text */

/* Words that never name a value on their own. */
static const char *const stop_words[] = {
    "a", "about", "above", "after", "all", "also", "am", "an", "and", "any",
    "are", "as", "ascending", "at", "average", "be", "been", "before",
    "being", "below", "between", "both", "but", "by", "can", "could",
    "count", "descending", "did", "different", "distinct", "do", "does",
    "down", "during", "each", "either", "else", "every", "find", "for",
    "from", "get", "give", "had", "has", "have", "he", "her", "him", "his",
    "how", "i", "id", "ids", "if", "in", "into", "is", "it", "its", "just",
    "least", "less", "list", "many", "max", "maximum", "me", "might", "min",
    "minimum", "more", "most", "much", "must", "my", "name", "names", "no",
    "nor", "not", "number", "numbers", "of", "on", "only", "or", "order",
    "other", "our", "out", "over", "per", "please", "return", "s", "same",
    "shall", "she", "should", "show", "so", "some", "sort", "sorted",
    "such", "sum", "t", "tell", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "to", "total",
    "under", "up", "very", "was", "we", "were", "what", "when", "where",
    "whether", "which", "who", "whom", "whose", "why", "will", "with",
    "would", "you", "your", NULL
};

struct vindex_opts vindex_opts_default(void)
{
    struct vindex_opts o;

    o.per_column = 2000;
    o.total = 100000;
    o.max_len = 80;
    o.budget_ms = 20000;
    return o;
}

/* ---------------------------------------------------------------------- */
/* Words                                                                  */
/* ---------------------------------------------------------------------- */

static int is_stop(const char *w)
{
    int i;

    for (i = 0; stop_words[i]; i++)
        if (strcmp(stop_words[i], w) == 0)
            return 1;
    return 0;
}

static int all_digits(const char *p, int n)
{
    int i;

    for (i = 0; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return 0;
    return n > 0;
}

/* Decode UTF-8 into code points (a stray byte stands for itself); at most
** max are stored, the return value counts them all. */
static int utf8_decode(const char *s, uint32_t *out, int max)
{
    const unsigned char *p = (const unsigned char *)s;
    int n = 0, k, i;
    uint32_t c;

    while (*p) {
        c = *p;
        k = c >= 0xf0 && c < 0xf8 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
        if (k)
            c &= 0x3fu >> k;
        for (i = 1; i <= k; i++) {
            if ((p[i] & 0xc0) != 0x80)
                break;
            c = (c << 6) | (p[i] & 0x3fu);
        }
        if (i <= k) {
            c = *p;
            k = 0;
        }
        if (n < max && out)
            out[n] = c;
        n++;
        p += k + 1;
    }
    return n;
}

/* Code point c as UTF-8 into s; returns its length (1 to 4). */
static size_t utf8_encode(uint32_t c, char s[4])
{
    if (c < 0x80) {
        s[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        s[0] = (char)(0xc0 | (c >> 6));
        s[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        s[0] = (char)(0xe0 | (c >> 12));
        s[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        s[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    s[0] = (char)(0xf0 | (c >> 18));
    s[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    s[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    s[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

static void utf8_put(struct buf *b, uint32_t c)
{
    char s[4];

    buf_append(b, s, utf8_encode(c, s));
}

/*
** Damerau-Levenshtein distance (optimal string alignment: insertions,
** deletions, substitutions and transpositions of neighbours cost 1)
** between code point strings of at most MAX_WORD, capped: anything over
** cap is returned as cap + 1.
*/
static int edit_distance(const uint32_t *a, int la, const uint32_t *b,
                         int lb, int cap)
{
    int r0[MAX_WORD + 1], r1[MAX_WORD + 1], r2[MAX_WORD + 1];
    int *prev2 = r0, *prev = r1, *cur = r2, *t;
    int i, j, v, best;

    if (la > MAX_WORD || lb > MAX_WORD || abs(la - lb) > cap)
        return cap + 1;
    for (j = 0; j <= lb; j++)
        prev[j] = j;
    for (i = 1; i <= la; i++) {
        cur[0] = i;
        best = i;
        for (j = 1; j <= lb; j++) {
            v = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < v)
                v = prev[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < v)
                v = prev2[j - 2] + 1;
            cur[j] = v;
            if (v < best)
                best = v;
        }
        if (best > cap)
            return cap + 1;
        t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb] > cap ? cap + 1 : prev[lb];
}

/* ---------------------------------------------------------------------- */
/* The tokenizer (SQLite's own, through the fts5 API)                     */
/* ---------------------------------------------------------------------- */

struct tokzr {
    fts5_tokenizer api;
    Fts5Tokenizer *t;
};

/* An instance of unicode61 with the index's arguments, from connection h
** (which must outlive it). 0 or -1. */
static int tokzr_open(sqlite3 *h, struct tokzr *tz)
{
    const char *args[2];
    fts5_api *api = NULL;
    sqlite3_stmt *st = NULL;
    void *ud = NULL;

    memset(tz, 0, sizeof *tz);
    args[0] = tokenize_args[0];
    args[1] = tokenize_args[1];
    if (sqlite3_prepare_v2(h, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(st);
    sqlite3_finalize(st);
    if (!api || api->iVersion < 2 ||
        api->xFindTokenizer(api, "unicode61", &ud, &tz->api) != SQLITE_OK)
        return -1;
    if (tz->api.xCreate(ud, args, 2, &tz->t) != SQLITE_OK) {
        tz->t = NULL;
        return -1;
    }
    return 0;
}

static void tokzr_close(struct tokzr *tz)
{
    if (tz->t)
        tz->api.xDelete(tz->t);
    tz->t = NULL;
}

/* A value's words joined by one space, as val.folded holds them. */
struct joiner {
    struct buf *b;
    int n;               /* words */
    int numbers;         /* of those: only digits */
};

static int join_word(void *ctx, int tflags, const char *p, int n, int start,
                     int end)
{
    struct joiner *j = ctx;

    (void)tflags;
    (void)start;
    (void)end;
    if (j->n)
        buf_putc(j->b, ' ');
    buf_append(j->b, p, (size_t)n);
    j->n++;
    j->numbers += all_digits(p, n);
    return j->n > MAX_VWORDS ? SQLITE_DONE : SQLITE_OK;
}

#define W_STOP 1
#define W_NUM 2
#define W_SCHEMA 4       /* a word of a table or column name (by stem) */
#define W_CAP 8          /* capitalized, and not the question's first word */

/* A word of the question. */
struct word {
    char *fold;          /* folded text */
    char *fix;           /* closest word the index knows, or NULL */
    int start, end;      /* bytes in the question */
    int nchars;
    int flags;           /* W_* */
};

struct words {
    struct word *v;
    int n;
    int err;
};

static int collect_word(void *ctx, int tflags, const char *p, int n,
                        int start, int end)
{
    struct words *ws = ctx;
    struct word *w;

    (void)tflags;
    if (ws->n >= MAX_QWORDS)
        return SQLITE_DONE;
    w = &ws->v[ws->n];
    memset(w, 0, sizeof *w);
    w->fold = malloc((size_t)n + 1);
    if (!w->fold) {
        ws->err = 1;
        return SQLITE_NOMEM;
    }
    memcpy(w->fold, p, (size_t)n);
    w->fold[n] = '\0';
    w->start = start;
    w->end = end;
    w->nchars = utf8_decode(w->fold, NULL, 0);
    w->flags = (is_stop(w->fold) ? W_STOP : 0) | (all_digits(p, n) ? W_NUM : 0);
    ws->n++;
    return SQLITE_OK;
}

/* The English stem of w into out; 0, or -1 when it does not fit. */
static int stem_of(struct sb_stemmer *st, const char *w, char *out, size_t n)
{
    const sb_symbol *r;
    int len;

    r = sb_stemmer_stem(st, (const sb_symbol *)w, (int)strlen(w));
    len = sb_stemmer_length(st);
    if (!r || len < 0 || (size_t)len >= n)
        return -1;
    memcpy(out, r, (size_t)len);
    out[len] = '\0';
    return 0;
}

static void words_clear(struct words *ws)
{
    int i;

    for (i = 0; i < ws->n; i++) {
        free(ws->v[i].fold);
        free(ws->v[i].fix);
    }
    ws->n = 0;
    ws->err = 0;
}

/* ---------------------------------------------------------------------- */
/* Building                                                               */
/* ---------------------------------------------------------------------- */

struct vindex {
    sqlite3 *h;
    struct tokzr tz;
    struct sb_stemmer *stem;
    char **names;        /* stems of the words of table and column names, */
    int nnames;          /* sorted */
    sqlite3_stmt *q_contains, *q_full, *q_known, *q_similar, *q_deleted;
    struct vindex_stats st;
};

struct builder {
    askdb_db *db;
    struct vindex_opts o;
    sqlite3 *h;
    struct tokzr tz;
    sqlite3_stmt *ins_val, *ins_col, *ins_meta;
    struct vindex_stats *st;
    double deadline;
    int ncols;
    int cancelled;           /* a read was cancelled: the build is none */
    struct buf fold;
};

static const char build_ddl[] =
    "PRAGMA temp_store = MEMORY;"
    "CREATE TABLE meta(k TEXT PRIMARY KEY, v) WITHOUT ROWID;"
    "CREATE TABLE col(id INTEGER PRIMARY KEY, tbl TEXT NOT NULL,"
    "  col TEXT NOT NULL, nvalues INTEGER NOT NULL, capped INTEGER NOT NULL);"
    "CREATE TABLE val(id INTEGER PRIMARY KEY, col INTEGER NOT NULL,"
    "  value TEXT NOT NULL, folded TEXT NOT NULL, ntok INTEGER NOT NULL);"
    "CREATE TABLE term(id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE,"
    "  df INTEGER NOT NULL, len INTEGER NOT NULL);"
    "CREATE VIRTUAL TABLE val_words USING fts5(value, content='',"
    "  columnsize=0, tokenize='" TOKENIZE "');"
    "CREATE VIRTUAL TABLE term_tri USING fts5(term, content='',"
    "  tokenize='trigram');"
    "CREATE TABLE term_del(variant TEXT NOT NULL, term INTEGER NOT NULL,"
    "  PRIMARY KEY (variant, term)) WITHOUT ROWID;"
    "BEGIN;";

/* After the values: the word index, the vocabulary and its trigrams. */
static const char build_words[] =
    "INSERT INTO val_words(rowid, value) SELECT id, value FROM val;"
    "CREATE INDEX val_folded ON val(folded);"
    "CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, val_words, row);"
    "INSERT INTO term(term, df, len)"
    "  SELECT term, doc, length(term) FROM temp.vocab;"
    "DROP TABLE temp.vocab;"
    /* long words (SHORT_WORD + 1 letters and more) less two edits */
    "INSERT INTO term_tri(rowid, term) SELECT id, term FROM term"
    "  WHERE len >= 6 AND term GLOB '*[^0-9]*';"
    "INSERT INTO val_words(val_words) VALUES ('optimize');"
    "INSERT INTO term_tri(term_tri) VALUES ('optimize');";

static int meta_put(struct builder *bd, const char *k, const char *s,
                    double d)
{
    sqlite3_stmt *st = bd->ins_meta;

    sqlite3_bind_text(st, 1, k, -1, SQLITE_STATIC);
    if (s)
        sqlite3_bind_text(st, 2, s, -1, SQLITE_STATIC);
    else if (d == (double)(sqlite3_int64)d)
        sqlite3_bind_int64(st, 2, (sqlite3_int64)d);
    else
        sqlite3_bind_double(st, 2, d);
    if (sqlite3_step(st) != SQLITE_DONE) {
        sqlite3_reset(st);
        return -1;
    }
    sqlite3_reset(st);
    return 0;
}

/* Add one value of column colid: 1 added, 0 not worth indexing (control
** characters, no words, only numbers, too many words), -1 index error. */
static int add_value(struct builder *bd, int colid, const char *v, size_t n)
{
    struct joiner j = {&bd->fold, 0, 0};
    size_t i;
    int rc;

    for (i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20)
            return 0;
    buf_reset(&bd->fold);
    rc = bd->tz.api.xTokenize(bd->tz.t, &j, FTS5_TOKENIZE_DOCUMENT, v,
                              (int)n, join_word);
    if (rc != SQLITE_OK && rc != SQLITE_DONE)
        return -1;
    if (buf_err(&bd->fold))
        return -1;
    if (j.n == 0 || j.n > MAX_VWORDS || j.numbers == j.n)
        return 0;
    sqlite3_bind_int(bd->ins_val, 1, colid);
    sqlite3_bind_text(bd->ins_val, 2, v, (int)n, SQLITE_STATIC);
    sqlite3_bind_text(bd->ins_val, 3, bd->fold.data, (int)bd->fold.len,
                      SQLITE_STATIC);
    sqlite3_bind_int(bd->ins_val, 4, j.n);
    rc = sqlite3_step(bd->ins_val);
    sqlite3_reset(bd->ins_val);
    return rc == SQLITE_DONE ? 1 : -1;
}

/* The statement that reads column c of table t: its distinct non-empty
** text values, one more than the cap (to tell a capped column), the long
** ones as NULL (counted, not read). */
static char *column_sql(const struct builder *bd, const struct db_table *t,
                        const struct db_column *c)
{
    struct buf b;

    buf_init(&b, 0);
    if (strcmp(db_dialect(bd->db), "SQLite") != 0) {
        /* Other engines: the column is text by its declared type (see
        ** worth_reading); a derived table needs a name there; names are
        ** always quoted (PostgreSQL folds bare ones to lower case). */
        buf_printf(&b, "SELECT CASE WHEN length(v) <= %d THEN v END FROM "
                       "(SELECT DISTINCT ", bd->o.max_len);
        text_put_quoted(&b, c->name, '"');
        buf_puts(&b, " AS v FROM ");
        schema_put_quoted_table(&b, t);
        buf_puts(&b, " WHERE ");
        text_put_quoted(&b, c->name, '"');
        buf_printf(&b, " <> '' LIMIT %d) AS askdb_v", bd->o.per_column + 1);
        return buf_steal(&b);
    }
    buf_printf(&b, "SELECT CASE WHEN length(v) <= %d THEN v END FROM "
                   "(SELECT DISTINCT ", bd->o.max_len);
    schema_put_ident(&b, c->name);
    buf_puts(&b, " AS v FROM ");
    schema_put_ident(&b, t->name);
    buf_puts(&b, " WHERE typeof(");
    schema_put_ident(&b, c->name);
    buf_puts(&b, ") = 'text' AND ");
    schema_put_ident(&b, c->name);
    buf_printf(&b, " <> '' LIMIT %d)", bd->o.per_column + 1);
    return buf_steal(&b);
}

/* Run sql on the user's database through the read-only guard, with the
** row cap raised to per_column + 1 and the time limit cut to what is left
** of the budget. */
static askdb_status run_bounded(struct builder *bd, const char *sql,
                                askdb_result **r)
{
    askdb_db *db = bd->db;
    long saved_rows = db->max_rows;
    int saved_timeout = db->query_timeout_ms;
    double left = bd->deadline - db_now_ms();
    struct db_err e;
    askdb_status rc;

    db->max_rows = bd->o.per_column + 1;
    if (db->query_timeout_ms <= 0 || left < db->query_timeout_ms)
        db->query_timeout_ms = left < 1 ? 1 : (int)left;
    rc = db_run(db, sql, r, &e);
    db->max_rows = saved_rows;
    db->query_timeout_ms = saved_timeout;
    bd->st->db_queries++;
    return rc;
}

static int has_ci(const char *s, const char *w)
{
    size_t n = strlen(w);

    for (; *s; s++)
        if (strncasecmp(s, w, n) == 0)
            return 1;
    return 0;
}

/* SQLite's affinity rules: is a column of this declared type numeric? */
static int numeric_type(const char *type)
{
    if (has_ci(type, "INT"))
        return 1;
    if (has_ci(type, "CHAR") || has_ci(type, "CLOB") || has_ci(type, "TEXT") ||
        has_ci(type, "BLOB") || !*type)
        return 0;
    return 1;
}

/*
** Is column c worth reading? A column of numeric type holds text only by
** accident; in a big table, where reading it costs a scan, it is read
** only when its first PROBE_ROWS rows hold some. 1 yes, 0 no, -1 out of
** memory.
*/
static int worth_reading(struct builder *bd, const struct db_table *t,
                         const struct db_column *c)
{
    askdb_result *r = NULL;
    askdb_status rc;
    struct buf b;
    int yes;

    /* Other engines type their columns strictly: text columns only. */
    if (strcmp(db_dialect(bd->db), "SQLite") != 0)
        return db_text_type(c->type);
    if (!numeric_type(c->type) || t->rows <= PROBE_ROWS)
        return 1;
    buf_init(&b, 0);
    buf_puts(&b, "SELECT 1 FROM (SELECT ");
    schema_put_ident(&b, c->name);
    buf_puts(&b, " AS v FROM ");
    schema_put_ident(&b, t->name);
    buf_printf(&b, " LIMIT %d) WHERE typeof(v) = 'text' LIMIT 1",
               PROBE_ROWS);
    if (buf_err(&b)) {
        buf_free(&b);
        return -1;
    }
    rc = run_bounded(bd, b.data, &r);
    if (rc) {
        bd->cancelled = rc == ASKDB_ERR_CANCELLED;
        buf_free(&b);
        return 0;
    }
    yes = r->nrows > 0;
    askdb_result_free(r);
    buf_free(&b);
    return yes;
}

/*
** Index one column: its distinct short text values. A column whose
** distinct values are mostly long is free text and skipped, as are
** columns the database fails to read. Returns 0 (go on), 1 (a bound was
** reached: stop) or -1 (index error).
*/
static int index_column(struct builder *bd, const struct db_table *t,
                        const struct db_column *c)
{
    askdb_result *r = NULL;
    askdb_status rc;
    long i, nlong = 0, added = 0, nread;
    int colid, ret = 0, k;
    char *sql;

    if (bd->deadline - db_now_ms() < 1) {
        bd->st->partial = bd->st->out_of_time = 1;
        return 1;
    }
    k = worth_reading(bd, t, c);
    if (bd->cancelled)
        return 1;
    if (k <= 0)
        return k;
    sql = column_sql(bd, t, c);
    if (!sql)
        return -1;
    rc = run_bounded(bd, sql, &r);
    free(sql);
    if (rc == ASKDB_ERR_CANCELLED) {
        bd->cancelled = 1;
        return 1;
    }
    if (rc) {
        bd->st->columns_skipped++;
        if (rc == ASKDB_ERR_TIMEOUT && bd->deadline - db_now_ms() < 1) {
            bd->st->partial = bd->st->out_of_time = 1;
            return 1;
        }
        return rc == ASKDB_ERR_NOMEM ? -1 : 0;
    }
    for (i = 0; i < r->nrows; i++)
        nlong += r->cells[i * r->ncols].type == ASKDB_NULL;
    if (nlong * 4 > r->nrows) {
        bd->st->columns_skipped++;
        askdb_result_free(r);
        return 0;
    }
    colid = ++bd->ncols;
    nread = r->nrows < bd->o.per_column ? r->nrows : bd->o.per_column;
    for (i = 0; i < nread; i++) {
        const askdb_value *v = &r->cells[i * r->ncols];
        if (v->type != ASKDB_TEXT)
            continue;
        if (bd->st->values >= bd->o.total) {
            bd->st->partial = 1;
            ret = 1;
            break;
        }
        k = add_value(bd, colid, v->s, v->len);
        if (k < 0) {
            ret = -1;
            break;
        }
        added += k;
        bd->st->values += k;
    }
    if (ret >= 0 && added) {
        int capped = r->nrows > bd->o.per_column;
        sqlite3_bind_int(bd->ins_col, 1, colid);
        sqlite3_bind_text(bd->ins_col, 2, schema_qname(t), -1,
                          SQLITE_STATIC);
        sqlite3_bind_text(bd->ins_col, 3, c->name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(bd->ins_col, 4, added);
        sqlite3_bind_int(bd->ins_col, 5, capped);
        if (sqlite3_step(bd->ins_col) != SQLITE_DONE)
            ret = -1;
        sqlite3_reset(bd->ins_col);
        bd->st->columns++;
        bd->st->columns_capped += capped;
    }
    askdb_result_free(r);
    return ret;
}

/* Append the code points w[0..n) but w[skip] as UTF-8. */
static void put_without(struct buf *b, const uint32_t *w, int n, int skip)
{
    int i;

    for (i = 0; i < n; i++)
        if (i != skip)
            utf8_put(b, w[i]);
}

/* Fill term_del: every word of 4 to SHORT_WORD + 1 letters with each one
** of its letters deleted. 0 or -1. */
static int build_deletions(struct builder *bd)
{
    sqlite3_stmt *sel = NULL, *ins = NULL;
    uint32_t w[SHORT_WORD + 1];
    int rc, n, d;

    rc = sqlite3_prepare_v2(bd->h, "SELECT id, term FROM term WHERE len "
                                   "BETWEEN 4 AND ?1 AND term GLOB "
                                   "'*[^0-9]*'", -1, &sel, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(bd->h, "INSERT OR IGNORE INTO term_del "
                                       "VALUES (?1, ?2)", -1, &ins, NULL);
    if (rc == SQLITE_OK)
        sqlite3_bind_int(sel, 1, SHORT_WORD + 1);
    while (rc == SQLITE_OK && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(sel, 1);
        rc = SQLITE_OK;
        n = t ? utf8_decode(t, w, SHORT_WORD + 1) : 0;
        if (n > SHORT_WORD + 1)
            continue;
        for (d = 0; d < n && rc == SQLITE_OK; d++) {
            buf_reset(&bd->fold);
            put_without(&bd->fold, w, n, d);
            if (buf_err(&bd->fold)) {
                rc = SQLITE_NOMEM;
                break;
            }
            sqlite3_bind_text(ins, 1, bd->fold.data, (int)bd->fold.len,
                              SQLITE_STATIC);
            sqlite3_bind_int64(ins, 2, sqlite3_column_int64(sel, 0));
            rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
            sqlite3_reset(ins);
        }
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Count rows of a one-number query; -1 on error. */
static long one_long(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long n = -1;

    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/*
** Build the index of db's values (schema s, database checksum sum) in a
** new in-memory database. On success *out is the connection (caller
** closes). Returns 0 or -1 with the reason in err.
*/
static int build(askdb_db *db, const struct db_schema *s,
                 const struct vindex_opts *o, const char *sum,
                 struct vindex_stats *st, sqlite3 **out, char *err,
                 size_t errlen)
{
    struct builder bd;
    double t0 = db_now_ms();
    int i, j, rc = 0;

    *out = NULL;
    memset(&bd, 0, sizeof bd);
    bd.db = db;
    bd.o = *o;
    bd.st = st;
    bd.deadline = t0 + o->budget_ms;
    buf_init(&bd.fold, 0);
    if (sqlite3_open_v2(":memory:", &bd.h,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                            SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        goto sqlerr;
    if (sqlite3_exec(bd.h, build_ddl, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(bd.h, "INSERT INTO val(col, value, folded, ntok) "
                                 "VALUES (?1, ?2, ?3, ?4)", -1, &bd.ins_val,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(bd.h, "INSERT INTO col VALUES (?1,?2,?3,?4,?5)",
                           -1, &bd.ins_col, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(bd.h, "INSERT INTO meta VALUES (?1, ?2)", -1,
                           &bd.ins_meta, NULL) != SQLITE_OK)
        goto sqlerr;
    if (tokzr_open(bd.h, &bd.tz))
        goto sqlerr;
    for (i = 0; i < s->ntables && rc == 0; i++) {
        const struct db_table *t = &s->tables[i];
        /* Tables only: reading a view runs its query. rows is -1 for
        ** virtual tables, whose reads may be costly or fail. */
        if (t->is_view || t->rows <= 0)
            continue;
        for (j = 0; j < t->ncols && rc == 0; j++)
            rc = index_column(&bd, t, &t->cols[j]);
    }
    if (rc < 0)
        goto sqlerr;
    if (bd.cancelled) {
        /* what was read is not all there is, and a later open would
        ** take it from the cache as whole: no index */
        snprintf(err, errlen, "the value index of '%s' was not built: "
                 "cancelled", db->label);
        goto sqlerr;
    }
    if (sqlite3_exec(bd.h, build_words, NULL, NULL, NULL) != SQLITE_OK ||
        build_deletions(&bd))
        goto sqlerr;
    st->terms = one_long(bd.h, "SELECT count(*) FROM term");
    st->build_ms = db_now_ms() - t0;
    if (meta_put(&bd, "format", FORMAT, 0) ||
        meta_put(&bd, "checksum", sum, 0) ||
        meta_put(&bd, "per_column", NULL, o->per_column) ||
        meta_put(&bd, "total", NULL, (double)o->total) ||
        meta_put(&bd, "max_len", NULL, o->max_len) ||
        meta_put(&bd, "values", NULL, (double)st->values) ||
        meta_put(&bd, "terms", NULL, (double)st->terms) ||
        meta_put(&bd, "columns", NULL, st->columns) ||
        meta_put(&bd, "columns_capped", NULL, st->columns_capped) ||
        meta_put(&bd, "columns_skipped", NULL, st->columns_skipped) ||
        meta_put(&bd, "partial", NULL, st->partial) ||
        meta_put(&bd, "build_ms", NULL, st->build_ms))
        goto sqlerr;
    if (sqlite3_exec(bd.h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto sqlerr;
    sqlite3_finalize(bd.ins_val);
    sqlite3_finalize(bd.ins_col);
    sqlite3_finalize(bd.ins_meta);
    tokzr_close(&bd.tz);
    buf_free(&bd.fold);
    *out = bd.h;
    return 0;
sqlerr:
    if (!bd.cancelled)   /* a cancel said so above */
        snprintf(err, errlen, "cannot build the value index of '%s': %s",
                 db->label,
                 buf_err(&bd.fold) ? "out of memory"
                 : bd.h           ? sqlite3_errmsg(bd.h)
                                  : "out of memory");
    sqlite3_finalize(bd.ins_val);
    sqlite3_finalize(bd.ins_col);
    sqlite3_finalize(bd.ins_meta);
    tokzr_close(&bd.tz);
    buf_free(&bd.fold);
    sqlite3_close(bd.h);
    return -1;
}

/* ---------------------------------------------------------------------- */
/* The cache file                                                         */
/* ---------------------------------------------------------------------- */

/*
** Open the cache file at path read-only when it is an index of this
** database (checksum sum) in this format with these bounds; fill the
** statistics from it. 0, or -1 when it is missing or not usable (it is
** then rebuilt and replaced).
*/
static int open_cached(const char *path, const char *sum,
                       const struct vindex_opts *o, struct vindex_stats *st,
                       sqlite3 **out)
{
    struct stat sb;
    sqlite3 *h = NULL;
    sqlite3_stmt *q = NULL;
    int ok_format = 0, ok_sum = 0, ok_bounds = 0;

    *out = NULL;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return -1;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h, "SELECT k, v FROM meta", -1, &q, NULL) !=
            SQLITE_OK) {
        sqlite3_close(h);
        return -1;
    }
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(q, 0);
        const char *v = (const char *)sqlite3_column_text(q, 1);
        sqlite3_int64 n = sqlite3_column_int64(q, 1);
        if (!k || !v)
            continue;
        if (strcmp(k, "format") == 0)
            ok_format = strcmp(v, FORMAT) == 0;
        else if (strcmp(k, "checksum") == 0)
            ok_sum = strcmp(v, sum) == 0;
        else if (strcmp(k, "per_column") == 0)
            ok_bounds += n == o->per_column;
        else if (strcmp(k, "total") == 0)
            ok_bounds += n == o->total;
        else if (strcmp(k, "max_len") == 0)
            ok_bounds += n == o->max_len;
        else if (strcmp(k, "values") == 0)
            st->values = (long)n;
        else if (strcmp(k, "terms") == 0)
            st->terms = (long)n;
        else if (strcmp(k, "columns") == 0)
            st->columns = (int)n;
        else if (strcmp(k, "columns_capped") == 0)
            st->columns_capped = (int)n;
        else if (strcmp(k, "columns_skipped") == 0)
            st->columns_skipped = (int)n;
        else if (strcmp(k, "partial") == 0)
            st->partial = (int)n;
        else if (strcmp(k, "build_ms") == 0)
            st->build_ms = sqlite3_column_double(q, 1);
    }
    sqlite3_finalize(q);
    if (!ok_format || !ok_sum || ok_bounds != 3) {
        sqlite3_close(h);
        memset(st, 0, sizeof *st);
        return -1;
    }
    st->file_bytes = (long)sb.st_size;
    *out = h;
    return 0;
}

/*
** Write the in-memory index h to path: VACUUM INTO a new temporary file
** in dir, then rename() it over path. On success *out is path opened
** read-only. Returns 0, or -1 with a note saying why (the caller keeps h).
*/
static int save_cached(sqlite3 *h, const char *dir, const char *path,
                       const char *sum, sqlite3 **out, char *note,
                       size_t notelen)
{
    struct buf tmp;
    char *sql = NULL;
    int fd, rc = -1;

    *out = NULL;
    buf_init(&tmp, 0);
    buf_printf(&tmp, "%s/%s.fts.XXXXXX", dir, sum);
    if (buf_err(&tmp)) {
        snprintf(note, notelen, "out of memory");
        return -1;
    }
    fd = mkstemp(tmp.data);
    if (fd < 0) {
        snprintf(note, notelen, "cannot write in '%s': %s", dir,
                 strerror(errno));
        buf_free(&tmp);
        return -1;
    }
    close(fd);
    sql = sqlite3_mprintf("VACUUM INTO %Q", tmp.data);
    if (!sql || sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(note, notelen, "cannot write '%s': %s", tmp.data,
                 sql ? sqlite3_errmsg(h) : "out of memory");
        goto out;
    }
    if (rename(tmp.data, path) != 0) {
        snprintf(note, notelen, "cannot rename '%s' to '%s': %s", tmp.data,
                 path, strerror(errno));
        goto out;
    }
    if (sqlite3_open_v2(path, out, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        snprintf(note, notelen, "cannot open '%s': %s", path,
                 *out ? sqlite3_errmsg(*out) : "out of memory");
        sqlite3_close(*out);
        *out = NULL;
        sqlite3_free(sql);
        buf_free(&tmp);
        return -1;
    }
    rc = 0;
out:
    if (rc)
        unlink(tmp.data);
    sqlite3_free(sql);
    buf_free(&tmp);
    return rc;
}

/* A name with its camelCase words apart ("BillingCity" -> "Billing City",
** "HTMLTitle" -> "HTML Title"), for the tokenizer. */
static void put_split(struct buf *b, const char *name)
{
    const char *p;

    for (p = name; *p; p++) {
        if (p > name && *p >= 'A' && *p <= 'Z' &&
            ((p[-1] >= 'a' && p[-1] <= 'z') ||
             (p[-1] >= '0' && p[-1] <= '9') ||
             (p[-1] >= 'A' && p[-1] <= 'Z' && p[1] >= 'a' && p[1] <= 'z')))
            buf_putc(b, ' ');
        buf_putc(b, *p);
    }
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add the stems of the words of one name to vi->names. 0 or -1. */
static int add_name(struct vindex *vi, const char *name, struct buf *b,
                    struct words *ws, int *cap)
{
    char stem[4 * MAX_WORD + 1];
    int i, rc;

    buf_reset(b);
    put_split(b, name);
    if (buf_err(b))
        return -1;
    words_clear(ws);
    rc = vi->tz.api.xTokenize(vi->tz.t, ws, FTS5_TOKENIZE_DOCUMENT, b->data,
                              (int)b->len, collect_word);
    if (ws->err || (rc != SQLITE_OK && rc != SQLITE_DONE))
        return -1;
    for (i = 0; i < ws->n; i++) {
        if (stem_of(vi->stem, ws->v[i].fold, stem, sizeof stem))
            continue;
        if (vi->nnames == *cap) {
            int nc = *cap ? *cap * 2 : 64;
            char **p = realloc(vi->names, (size_t)nc * sizeof *p);
            if (!p)
                return -1;
            vi->names = p;
            *cap = nc;
        }
        vi->names[vi->nnames] = strdup(stem);
        if (!vi->names[vi->nnames])
            return -1;
        vi->nnames++;
    }
    return 0;
}

/*
** The stems of the words in the names of tables and columns, sorted and
** unique. A question word among them ("city", "codes", "dates") most
** likely names a column: it is not corrected to a value's spelling and
** names no value on its own by a part of it. 0 or -1.
*/
static int collect_names(struct vindex *vi, const struct db_schema *s)
{
    struct words ws;
    struct buf b;
    int i, j, k, cap = 0, rc = 0;

    memset(&ws, 0, sizeof ws);
    buf_init(&b, 0);
    ws.v = calloc(MAX_QWORDS, sizeof *ws.v);
    if (!ws.v)
        return -1;
    for (i = 0; i < s->ntables && rc == 0; i++) {
        rc = add_name(vi, s->tables[i].name, &b, &ws, &cap);
        for (j = 0; j < s->tables[i].ncols && rc == 0; j++)
            rc = add_name(vi, s->tables[i].cols[j].name, &b, &ws, &cap);
    }
    words_clear(&ws);
    free(ws.v);
    buf_free(&b);
    if (rc)
        return -1;
    if (vi->nnames > 1)
        qsort(vi->names, (size_t)vi->nnames, sizeof *vi->names, str_cmp);
    for (i = j = 0; i < vi->nnames; i++) {
        if (j > 0 && strcmp(vi->names[j - 1], vi->names[i]) == 0) {
            free(vi->names[i]);
            continue;
        }
        vi->names[j++] = vi->names[i];
    }
    for (k = j; k < vi->nnames; k++)
        vi->names[k] = NULL;
    vi->nnames = j;
    return 0;
}

/* What vindex_match needs on the final connection. 0 or -1. */
static int prepare_matching(struct vindex *vi)
{
    if (tokzr_open(vi->h, &vi->tz))
        return -1;
    vi->stem = sb_stemmer_new("english", NULL);
    if (!vi->stem)
        return -1;
    if (sqlite3_prepare_v2(
            vi->h,
            "SELECT v.ntok, v.value, c.tbl, c.col FROM val_words "
            "JOIN val v ON v.id = val_words.rowid JOIN col c ON c.id = v.col "
            "WHERE val_words MATCH ?1 LIMIT 201", -1, &vi->q_contains,
            NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(vi->h,
                           "SELECT v.ntok, v.value, c.tbl, c.col FROM val v "
                           "JOIN col c ON c.id = v.col WHERE v.folded = ?1 "
                           "LIMIT 16", -1, &vi->q_full, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(vi->h, "SELECT 1 FROM term WHERE term = ?1", -1,
                           &vi->q_known, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(vi->h,
                           "SELECT t.term, t.df FROM term_tri "
                           "JOIN term t ON t.id = term_tri.rowid "
                           "WHERE term_tri MATCH ?1 AND t.len BETWEEN ?2 "
                           "AND ?3 ORDER BY term_tri.rank LIMIT 64", -1,
                           &vi->q_similar, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(vi->h,
                           "SELECT t.term, t.df FROM term_del d "
                           "JOIN term t ON t.id = d.term WHERE d.variant = ?1 "
                           "UNION ALL SELECT term, df FROM term "
                           "WHERE term = ?1", -1, &vi->q_deleted, NULL) !=
            SQLITE_OK)
        return -1;
    return 0;
}

int vindex_open(askdb_db *db, const struct vindex_opts *opt,
                struct vindex **out, char *err, size_t errlen)
{
    struct vindex_opts o = opt ? *opt : vindex_opts_default();
    const struct db_schema *s;
    struct vindex *vi;
    char sum[33], why[512];
    char *dir = NULL, *path = NULL;
    sqlite3 *mem = NULL, *file = NULL;
    double t0 = db_now_ms();
    size_t n;

    *out = NULL;
    err[0] = '\0';
    why[0] = '\0';
    if (o.per_column < 1)
        o.per_column = 1;
    if (o.total < 1)
        o.total = 1;
    if (o.max_len < 1)
        o.max_len = 1;
    if (o.budget_ms < 1)
        o.budget_ms = 1;
    vi = calloc(1, sizeof *vi);
    if (!vi) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (db_schema(db, &s)) {
        snprintf(err, errlen, "cannot index the values of '%s': %s",
                 db->label, askdb_db_errmsg(db));
        goto fail;
    }
    if (cache_file_checksum(db->path, sum, why, sizeof why) == 0) {
        dir = cache_path("values", 1, why, sizeof why);
        if (dir) {
            n = strlen(dir) + sizeof sum + 8;
            path = malloc(n);
            if (!path) {
                snprintf(err, errlen, "out of memory");
                goto fail;
            }
            snprintf(path, n, "%s/%s.fts", dir, sum);
        }
    } else {
        snprintf(sum, sizeof sum, "none");
    }
    if (path && open_cached(path, sum, &o, &vi->st, &vi->h) == 0) {
        vi->st.reused = 1;
    } else {
        if (build(db, s, &o, sum, &vi->st, &mem, err, errlen))
            goto fail;
        /* A build the clock cut short (a loaded machine, a cold disk) is
        ** not cached, or it would stay partial until the database
        ** changes; one cut by a cap is the same every time. */
        if (vi->st.out_of_time)
            snprintf(why, sizeof why, "the %d ms budget ran out, so it is "
                                      "partial and built again next time",
                     o.budget_ms);
        if (path && !vi->st.out_of_time &&
            save_cached(mem, dir, path, sum, &file, why, sizeof why) == 0) {
            struct stat sb;
            sqlite3_close(mem);
            vi->h = file;
            if (stat(path, &sb) == 0)
                vi->st.file_bytes = (long)sb.st_size;
        } else {
            vi->h = mem;
            vi->st.in_memory = 1;
            snprintf(err, errlen, "value index kept in memory for this "
                                  "session: %s", why);
        }
    }
    if (prepare_matching(vi) || collect_names(vi, s)) {
        snprintf(err, errlen, "cannot use the value index: %s",
                 vi->h ? sqlite3_errmsg(vi->h) : "out of memory");
        goto fail;
    }
    vi->st.open_ms = db_now_ms() - t0;
    free(dir);
    free(path);
    *out = vi;
    return 0;
fail:
    free(dir);
    free(path);
    vindex_free(vi);
    return -1;
}

const struct vindex_stats *vindex_stats(const struct vindex *vi)
{
    return &vi->st;
}

void vindex_free(struct vindex *vi)
{
    int i;

    if (!vi)
        return;
    sqlite3_finalize(vi->q_contains);
    sqlite3_finalize(vi->q_full);
    sqlite3_finalize(vi->q_known);
    sqlite3_finalize(vi->q_similar);
    sqlite3_finalize(vi->q_deleted);
    tokzr_close(&vi->tz);
    if (vi->stem)
        sb_stemmer_delete(vi->stem);
    sqlite3_close(vi->h);
    for (i = 0; i < vi->nnames; i++)
        free(vi->names[i]);
    free(vi->names);
    free(vi);
}

/* ---------------------------------------------------------------------- */
/* Matching                                                               */
/* ---------------------------------------------------------------------- */

#define K_PART 1
#define K_APPROX 2
#define K_QUOTED 4

/* A value some phrase of the question names. */
struct cand {
    int s, e;            /* words [s, e) of the question */
    int ps, pe;          /* bytes of the phrase in the question */
    int kind;            /* K_* */
    int vwords;          /* words of the value */
    double score;
    char *table, *column, *value;
};

struct matcher {
    struct vindex *vi;
    const char *q;
    struct words ws;
    struct cand *c;
    int nc, cap;
    struct buf fq;       /* FTS query text */
    struct buf fold;     /* the phrase's words joined by one space */
};

static const char *word_at(const struct matcher *m, int i, int approx)
{
    const struct word *w = &m->ws.v[i];

    return approx && w->fix ? w->fix : w->fold;
}

/* Record a value (columns value, tbl, col of st, starting at column 1). */
static int add_cand(struct matcher *m, int s, int e, int ps, int pe,
                    int kind, int vwords, sqlite3_stmt *st)
{
    const char *v = (const char *)sqlite3_column_text(st, 1);
    const char *t = (const char *)sqlite3_column_text(st, 2);
    const char *c = (const char *)sqlite3_column_text(st, 3);
    struct cand *x;

    if (!v || !t || !c)
        return 0;
    /* One or two letters name a value only when quoted: "in" is no
    ** state code unless the question says 'IN'. */
    if (!(kind & K_QUOTED) && utf8_decode(v, NULL, 0) < 3)
        return 0;
    if (m->nc == m->cap) {
        int nc = m->cap ? m->cap * 2 : 32;
        struct cand *p = realloc(m->c, (size_t)nc * sizeof *p);
        if (!p)
            return -1;
        m->c = p;
        m->cap = nc;
    }
    x = &m->c[m->nc];
    memset(x, 0, sizeof *x);
    x->s = s;
    x->e = e;
    x->ps = ps;
    x->pe = pe;
    x->kind = kind;
    x->vwords = vwords;
    x->value = strdup(v);
    x->table = strdup(t);
    x->column = strdup(c);
    m->nc++;
    if (!x->value || !x->table || !x->column)
        return -1;
    return 0;
}

static void drop_cands(struct matcher *m, int from)
{
    while (m->nc > from) {
        struct cand *x = &m->c[--m->nc];
        free(x->value);
        free(x->table);
        free(x->column);
    }
}

/*
** How strongly a value is named: exact beats close spelling, the whole
** value beats a part of it, quoted beats unquoted, more words and letters
** beat fewer, and a phrase that many values contain (df) says little
** about any one of them.
*/
static double score_of(int kind, int n, int chars, int vwords, int df)
{
    double w = 1.0;

    if (kind & K_PART)
        w *= 0.4 + 0.4 * n / (double)vwords;
    if (kind & K_APPROX)
        w *= 0.5;
    if (kind & K_QUOTED)
        w *= 1.5;
    return w * (n + log2(1.0 + chars)) / log2(2.0 + df);
}

/*
** Look up the phrase of words [s, e) (with close spellings when kind has
** K_APPROX), bytes [ps, pe) of the question. When report is set, record
** the values it names fully, and those it is a good part of when partial
** is set. Returns how many values contain the phrase (up to DF_CAP + 1),
** or -1 on error.
*/
static int lookup(struct matcher *m, int s, int e, int ps, int pe, int kind,
                  int report, int partial)
{
    struct vindex *vi = m->vi;
    sqlite3_stmt *st = vi->q_contains;
    int i, n = e - s, df = 0, rc, first = m->nc, chars = 0, names = 1;

    buf_reset(&m->fq);
    buf_reset(&m->fold);
    for (i = s; i < e; i++) {
        if (i > s)
            buf_putc(&m->fold, ' ');
        buf_puts(&m->fold, word_at(m, i, kind & K_APPROX));
        if (!(m->ws.v[i].flags & (W_STOP | W_NUM))) {
            chars += m->ws.v[i].nchars;
            names &= (m->ws.v[i].flags & W_SCHEMA) != 0;
        }
    }
    /* The phrase as one FTS5 string. */
    text_put_quoted(&m->fq, m->fold.data ? m->fold.data : "", '"');
    if (buf_err(&m->fq) || buf_err(&m->fold))
        return -1;
    sqlite3_bind_text(st, 1, m->fq.data, (int)m->fq.len, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int vw = sqlite3_column_int(st, 0);
        df++;
        if (!report)
            continue;
        if (vw == n)
            rc = add_cand(m, s, e, ps, pe, kind, vw, st);
        else if (partial && vw <= 2 * n)
            rc = add_cand(m, s, e, ps, pe, kind | K_PART, vw, st);
        else
            rc = 0;
        if (rc) {
            sqlite3_reset(st);
            return -1;
        }
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return -1;
    if (report && df > DF_CAP) {
        /* Too common to say anything as a part, and the whole values may
        ** lie past the limit: look those up by their folded text. */
        drop_cands(m, first);
        st = vi->q_full;
        sqlite3_bind_text(st, 1, m->fold.data, (int)m->fold.len,
                          SQLITE_STATIC);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            if (add_cand(m, s, e, ps, pe, kind, n, st)) {
                sqlite3_reset(st);
                return -1;
            }
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
            return -1;
    }
    /* A phrase of column words ("speed") more likely names the column. */
    for (i = first; i < m->nc; i++)
        m->c[i].score = score_of(m->c[i].kind, n, chars, m->c[i].vwords, df) *
                        (names && !(kind & K_QUOTED) ? 0.5 : 1.0);
    return df;
}

/* Worth reporting: not only stop words or numbers, and for close
** spellings at least one corrected word. */
static int reportable(const struct matcher *m, int s, int e, int approx)
{
    int i, content = 0, fixed = 0;

    for (i = s; i < e; i++) {
        content += !(m->ws.v[i].flags & (W_STOP | W_NUM));
        fixed += m->ws.v[i].fix != NULL;
    }
    return content > 0 && (!approx || fixed > 0);
}

/*
** A part of a value is worth naming when the phrase has a real word that
** names no column: two words with one of 3+ letters, or one capitalized
** word of 4+ letters ("Lund" in 'Gröna Lund'; not "city" in 'Paradise
** City' or "live" in 'Santana Live'). With a corrected word, only two
** words or more: a close spelling of a part is too weak alone.
*/
static int partial_ok(const struct matcher *m, int s, int e, int approx)
{
    int i, n = e - s;

    if (approx && n < 2)
        return 0;
    for (i = s; i < e; i++) {
        const struct word *w = &m->ws.v[i];
        if (w->flags & (W_STOP | W_NUM | W_SCHEMA))
            continue;
        if (n >= 2 ? w->nchars >= 3 : (w->nchars >= 4 && (w->flags & W_CAP)))
            return 1;
    }
    return 0;
}

/* Every phrase of up to MAX_NGRAM words, longer ones only while some value
** contains the shorter one. */
static int scan(struct matcher *m, int approx)
{
    int s, e, df, j, any;

    for (s = 0; s < m->ws.n; s++) {
        if (approx) {
            for (any = 0, j = s; j < m->ws.n && j < s + MAX_NGRAM; j++)
                any |= m->ws.v[j].fix != NULL;
            if (!any)
                continue;
        }
        for (e = s + 1; e <= m->ws.n && e - s <= MAX_NGRAM; e++) {
            df = lookup(m, s, e, m->ws.v[s].start, m->ws.v[e - 1].end,
                        approx ? K_APPROX : 0, reportable(m, s, e, approx),
                        partial_ok(m, s, e, approx));
            if (df < 0)
                return -1;
            if (df == 0)
                break;
        }
    }
    return 0;
}

static int is_word_byte(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c >= 0x80;
}

/* Quoted strings of the question: "..." and '...' (an apostrophe inside
** a word opens and closes nothing), and the curly forms. Fills bytes of
** the insides; returns how many. */
static int find_quotes(const char *q, int spans[][2], int max)
{
    static const char *const opens[] = {"\"", "'", "\xe2\x80\x9c",
                                        "\xe2\x80\x98"};
    static const char *const closes[] = {"\"", "'", "\xe2\x80\x9d",
                                         "\xe2\x80\x99"};
    int n = 0, k;
    size_t i = 0, len = strlen(q), ol, cl, j;

    while (i < len && n < max) {
        for (k = 0; k < 4; k++)
            if (strncmp(q + i, opens[k], strlen(opens[k])) == 0)
                break;
        if (k == 4 || (i > 0 && is_word_byte((unsigned char)q[i - 1]) &&
                       k != 0 && k != 2)) {
            i++;
            continue;
        }
        ol = strlen(opens[k]);
        cl = strlen(closes[k]);
        for (j = i + ol; j < len; j++)
            if (strncmp(q + j, closes[k], cl) == 0 &&
                (k == 0 || k == 2 ||
                 !is_word_byte((unsigned char)q[j + cl])))
                break;
        if (j >= len) {
            i += ol;
            continue;
        }
        if (j > i + ol) {
            spans[n][0] = (int)(i + ol);
            spans[n][1] = (int)j;
            n++;
        }
        i = j + cl;
    }
    return n;
}

/* Do a and b share an English stem ("singers", "singer")? Such a pair is
** an inflection, not a misspelling. */
static int same_stem(struct vindex *vi, const char *a, const char *b)
{
    char sa[4 * MAX_WORD + 1], sb[4 * MAX_WORD + 1];

    return stem_of(vi->stem, a, sa, sizeof sa) == 0 &&
           stem_of(vi->stem, b, sb, sizeof sb) == 0 && strcmp(sa, sb) == 0;
}

static void put_trigram(struct buf *b, const uint32_t *t, int *nq)
{
    char s[3 * 4 + 1];
    size_t n = 0;
    int i;

    for (i = 0; i < 3; i++)
        n += utf8_encode(t[i], s + n);
    s[n] = '\0';
    if (*nq)
        buf_puts(b, " OR ");
    text_put_quoted(b, s, '"');
    (*nq)++;
}

/* The trigram query for a word of n code points: its own trigrams and
** those of the word with one letter deleted (which a swap or a stray
** letter leaves intact), joined by OR. */
static void similar_query(struct buf *b, const uint32_t *w, int n)
{
    uint32_t tri[MAX_TRI][3];
    int nt = 0, nq = 0, i, d, k;

    for (i = 0; i + 3 <= n; i++) {
        tri[nt][0] = w[i];
        tri[nt][1] = w[i + 1];
        tri[nt][2] = w[i + 2];
        nt++;
    }
    for (d = 0; d < n; d++) {
        /* Deleting w[d] makes new trigrams only across the gap. */
        if (d >= 2 && d + 1 < n && nt < MAX_TRI) {
            tri[nt][0] = w[d - 2];
            tri[nt][1] = w[d - 1];
            tri[nt][2] = w[d + 1];
            nt++;
        }
        if (d >= 1 && d + 2 < n && nt < MAX_TRI) {
            tri[nt][0] = w[d - 1];
            tri[nt][1] = w[d + 1];
            tri[nt][2] = w[d + 2];
            nt++;
        }
    }
    for (i = 0; i < nt; i++) {
        for (k = 0; k < i; k++)
            if (memcmp(tri[k], tri[i], sizeof tri[i]) == 0)
                break;
        if (k == i)
            put_trigram(b, tri[i], &nq);
    }
}

/* The search for the closest known word to a question word. */
struct fixer {
    struct vindex *vi;
    const char *word;
    uint32_t a[MAX_WORD];
    int la, cap;
    int best;            /* distance of best, -1 = none yet */
    long best_df;
    char *best_term;
    int inflected;       /* a close word shares the word's stem */
};

/* Weigh one candidate word t (in df values). 0, or -1 when out of memory. */
static int consider(struct fixer *f, const char *t, long df)
{
    uint32_t b[MAX_WORD];
    int lb, d;

    if (!t || f->inflected)
        return 0;
    lb = utf8_decode(t, b, MAX_WORD);
    d = edit_distance(f->a, f->la, b, lb, f->cap);
    if (d > f->cap)
        return 0;
    if (same_stem(f->vi, f->word, t)) {
        f->inflected = 1;
        return 0;
    }
    if (f->best >= 0 && (d > f->best || (d == f->best && df <= f->best_df)))
        return 0;
    free(f->best_term);
    f->best_term = strdup(t);
    if (!f->best_term)
        return -1;
    f->best = d;
    f->best_df = df;
    return 0;
}

/* Step st (bound by the caller) and weigh the words it gives. 0 or -1. */
static int consider_rows(struct fixer *f, sqlite3_stmt *st)
{
    int rc;

    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (consider(f, (const char *)sqlite3_column_text(st, 0),
                     (long)sqlite3_column_int64(st, 1))) {
            rc = SQLITE_NOMEM;
            break;
        }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Short words: the word and each of its one-letter deletions, looked up
** in term_del (words one letter longer or as long) and term (shorter). */
static int fix_short(struct matcher *m, struct fixer *f)
{
    sqlite3_stmt *st = m->vi->q_deleted;
    int d;

    for (d = -1; d < f->la; d++) {
        buf_reset(&m->fq);
        put_without(&m->fq, f->a, f->la, d);
        if (buf_err(&m->fq))
            return -1;
        sqlite3_bind_text(st, 1, m->fq.data, (int)m->fq.len, SQLITE_STATIC);
        if (consider_rows(f, st))
            return -1;
    }
    return 0;
}

/* Long words: the best trigram matches of about the same length. */
static int fix_long(struct matcher *m, struct fixer *f)
{
    sqlite3_stmt *st = m->vi->q_similar;

    buf_reset(&m->fq);
    similar_query(&m->fq, f->a, f->la);
    if (buf_err(&m->fq))
        return -1;
    sqlite3_bind_text(st, 1, m->fq.data, (int)m->fq.len, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, f->la - f->cap);
    sqlite3_bind_int(st, 3, f->la + f->cap);
    return consider_rows(f, st);
}

/*
** The closest word of the index for a question word it does not know:
** within 1 edit for 4-7 letters, 2 for longer, the most frequent on a
** tie. None when a close word shares the word's English stem: "circuits"
** is the plural of a known "circuit", not a misspelt "circuito". Sets
** w->fix (or leaves it NULL). 0, or -1 on error.
*/
static int find_fix(struct matcher *m, struct word *w)
{
    struct vindex *vi = m->vi;
    struct fixer f;
    int rc;

    if (w->nchars < 4 || w->nchars > MAX_WORD ||
        (w->flags & (W_STOP | W_NUM | W_SCHEMA)))
        return 0;
    sqlite3_bind_text(vi->q_known, 1, w->fold, -1, SQLITE_STATIC);
    rc = sqlite3_step(vi->q_known);
    sqlite3_reset(vi->q_known);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc != SQLITE_DONE)
        return -1;
    memset(&f, 0, sizeof f);
    f.vi = vi;
    f.word = w->fold;
    f.la = utf8_decode(w->fold, f.a, MAX_WORD);
    f.cap = f.la <= SHORT_WORD ? 1 : 2;
    f.best = -1;
    rc = f.la <= SHORT_WORD ? fix_short(m, &f) : fix_long(m, &f);
    if (rc || f.inflected) {
        free(f.best_term);
        return rc;
    }
    w->fix = f.best_term;
    return 0;
}

static int cand_cmp(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;
    int c;

    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if ((c = strcmp(a->table, b->table)) != 0)
        return c;
    if ((c = strcmp(a->column, b->column)) != 0)
        return c;
    return strcmp(a->value, b->value);
}

/* Is x explained already: the same value, or inside the words of a value
** named exactly and fully by more words (or as many, when x is a part or
** a close spelling), or its phrase has its share of values? */
static int redundant(const struct cand *x, const struct cand *const *sel,
                     int nsel)
{
    int i, same_span = 0;

    for (i = 0; i < nsel; i++) {
        const struct cand *y = sel[i];
        if (strcmp(x->table, y->table) == 0 &&
            strcmp(x->column, y->column) == 0 &&
            strcmp(x->value, y->value) == 0)
            return 1;
        if (!(y->kind & (K_PART | K_APPROX)) && x->s >= y->s && x->e <= y->e &&
            ((x->kind & (K_PART | K_APPROX)) || x->e - x->s < y->e - y->s))
            return 1;
        same_span += x->s == y->s && x->e == y->e;
    }
    return same_span >= PER_SPAN;
}

static void matcher_free(struct matcher *m)
{
    words_clear(&m->ws);
    free(m->ws.v);
    drop_cands(m, 0);
    free(m->c);
    buf_free(&m->fq);
    buf_free(&m->fold);
}

static char *dup_range(const char *s, int a, int b)
{
    char *p = malloc((size_t)(b - a) + 1);

    if (p) {
        memcpy(p, s + a, (size_t)(b - a));
        p[b - a] = '\0';
    }
    return p;
}

/* The word range [*s, *e) inside bytes [a, b). */
static void words_in(const struct matcher *m, int a, int b, int *s, int *e)
{
    int i;

    *s = *e = 0;
    for (i = 0; i < m->ws.n && m->ws.v[i].start < a; i++)
        ;
    *s = i;
    for (; i < m->ws.n && m->ws.v[i].end <= b; i++)
        ;
    *e = i;
}

/* Set the W_SCHEMA and W_CAP flags of word i. */
static void mark_word(struct matcher *m, int i)
{
    struct word *w = &m->ws.v[i];
    char stem[4 * MAX_WORD + 1];
    const char *key = stem;
    char c = m->q[w->start];

    if (stem_of(m->vi->stem, w->fold, stem, sizeof stem) == 0 &&
        m->vi->nnames &&
        bsearch(&key, m->vi->names, (size_t)m->vi->nnames,
                sizeof *m->vi->names, str_cmp))
        w->flags |= W_SCHEMA;
    if (i > 0 && c >= 'A' && c <= 'Z')
        w->flags |= W_CAP;
}

int vindex_match(struct vindex *vi, const char *question, int max,
                 struct value_match **out, int *n)
{
    struct matcher m;
    const struct cand **sel = NULL;
    struct value_match *res = NULL;
    int spans[MAX_QUOTES][2], nq, i, s, e, nsel = 0, nfix = 0, rc = -1;

    *out = NULL;
    *n = 0;
    if (max <= 0)
        max = DEFAULT_MAX;
    if (!question || !*question)
        return 0;
    memset(&m, 0, sizeof m);
    m.vi = vi;
    m.q = question;
    buf_init(&m.fq, 0);
    buf_init(&m.fold, 0);
    m.ws.v = calloc(MAX_QWORDS, sizeof *m.ws.v);
    if (!m.ws.v)
        goto out;
    i = vi->tz.api.xTokenize(vi->tz.t, &m.ws, FTS5_TOKENIZE_DOCUMENT,
                             question, (int)strlen(question), collect_word);
    if (m.ws.err || (i != SQLITE_OK && i != SQLITE_DONE))
        goto out;
    for (i = 0; i < m.ws.n; i++)
        mark_word(&m, i);
    for (i = 0; i < m.ws.n; i++) {
        if (find_fix(&m, &m.ws.v[i]))
            goto out;
        nfix += m.ws.v[i].fix != NULL;
    }
    /* Quoted strings as a whole, also when short or long. */
    nq = find_quotes(question, spans, MAX_QUOTES);
    for (i = 0; i < nq; i++) {
        words_in(&m, spans[i][0], spans[i][1], &s, &e);
        if (e <= s)
            continue;
        if (lookup(&m, s, e, spans[i][0], spans[i][1], K_QUOTED, 1, 1) < 0)
            goto out;
        if (reportable(&m, s, e, 1) &&
            lookup(&m, s, e, spans[i][0], spans[i][1], K_QUOTED | K_APPROX,
                   1, 1) < 0)
            goto out;
    }
    if (scan(&m, 0) || (nfix && scan(&m, 1)))
        goto out;
    if (m.nc > 1)
        qsort(m.c, (size_t)m.nc, sizeof *m.c, cand_cmp);
    sel = calloc((size_t)max, sizeof *sel);
    if (!sel)
        goto out;
    for (i = 0; i < m.nc && nsel < max; i++)
        if (!redundant(&m.c[i], sel, nsel))
            sel[nsel++] = &m.c[i];
    if (nsel) {
        res = calloc((size_t)nsel, sizeof *res);
        if (!res)
            goto out;
        for (i = 0; i < nsel; i++) {
            const struct cand *x = sel[i];
            res[i].table = strdup(x->table);
            res[i].column = strdup(x->column);
            res[i].value = strdup(x->value);
            res[i].phrase = dup_range(question, x->ps, x->pe);
            res[i].exact = !(x->kind & K_APPROX);
            res[i].partial = (x->kind & K_PART) != 0;
            res[i].score = x->score;
            if (!res[i].table || !res[i].column || !res[i].value ||
                !res[i].phrase) {
                value_matches_free(res, nsel);
                res = NULL;
                goto out;
            }
        }
    }
    *out = res;
    *n = nsel;
    rc = 0;
out:
    free(sel);
    matcher_free(&m);
    return rc;
}

void value_matches_free(struct value_match *m, int n)
{
    int i;

    if (!m)
        return;
    for (i = 0; i < n; i++) {
        free(m[i].table);
        free(m[i].column);
        free(m[i].value);
        free(m[i].phrase);
    }
    free(m);
}

/* ---------------------------------------------------------------------- */
/* The prompt                                                             */
/* ---------------------------------------------------------------------- */

void values_render(struct buf *b, const struct db_schema *s,
                   const struct value_match *m, int n)
{
    const struct db_table *t;
    int i, shown = 0;

    for (i = 0; i < n; i++) {
        /* A value that is not UTF-8 (a Latin-1 database) cannot be written
        ** in the model's SQL, nor sent to it: left out. */
        if (!text_valid(m[i].value, strlen(m[i].value)))
            continue;
        if (!shown++)
            buf_puts(b, "Values the question mentions, as stored:\n");
        buf_puts(b, "- ");
        t = schema_table(s, m[i].table);
        if (t && t->namespace)
            schema_put_table(b, s, t);
        else
            schema_put_name(b, s, m[i].table);
        buf_putc(b, '.');
        schema_put_name(b, s, m[i].column);
        buf_puts(b, " = ");
        text_put_quoted(b, m[i].value, '\'');
        buf_printf(b, " (question: \"%s\"%s%s)\n", m[i].phrase,
                   m[i].exact ? "" : ", close spelling",
                   m[i].partial ? ", part of the value" : "");
    }
}
