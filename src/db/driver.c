/* driver.c - the helpers every database driver shares: results, errors,
** time. */
#include "db/driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/outfile.h"
#include "core/text.h"

/* Where a URL's authority ends, as both drivers read it: at the path or
** the query. A '#' there is the password's (libpq knows no fragment), not
** the end of the authority. */
#define AUTHORITY_END "/?"

const char *db_file_misnamed(const char *path, const char *not_engine)
{
    switch (outfile_kind(path)) {
    case FILE_SQLITE:
        return strcmp(not_engine, "sqlite") == 0 ? NULL :
               "it is an SQLite database: askdb picks the engine by the "
               "file's ending, so give it another ending, e.g. .db (a link "
               "will do)";
    case FILE_DUCKDB:
        return strcmp(not_engine, "duckdb") == 0 ? NULL :
               "it is a DuckDB database: askdb picks the engine by the "
               "file's ending, so give it the ending .duckdb (a link will "
               "do)";
    case FILE_PARQUET:
        return "it is a Parquet file: askdb picks the engine by the file's "
               "ending, so give it the ending .parquet (a link will do)";
    default:
        return NULL;
    }
}

askdb_result *db_result_new(int ncols)
{
    askdb_result *r = calloc(1, sizeof *r);
    size_t n = ncols > 0 ? (size_t)ncols : 1;

    if (!r)
        return NULL;
    r->cols = calloc(n, sizeof *r->cols);
    r->decltypes = calloc(n, sizeof *r->decltypes);
    if (!r->cols || !r->decltypes) {
        free(r->cols);
        free(r->decltypes);
        free(r);
        return NULL;
    }
    r->ncols = ncols;
    return r;
}

askdb_value *db_result_add_row(askdb_result *r, long *cap_cells)
{
    long need = (r->nrows + 1) * r->ncols, nc;
    askdb_value *p, *row;

    if (need > *cap_cells || !r->cells) {
        nc = *cap_cells ? *cap_cells * 2 : (r->ncols ? r->ncols : 1) * 16L;
        while (nc < need)
            nc *= 2;
        p = realloc(r->cells, (size_t)nc * sizeof *p);
        if (!p)
            return NULL;
        r->cells = p;
        *cap_cells = nc;
    }
    row = &r->cells[r->nrows * r->ncols];
    memset(row, 0, (size_t)r->ncols * sizeof *row);
    r->nrows++;
    return row;
}

double db_now_ms(void)
{
    return clockx_now_ms();
}

size_t db_url_scheme(const char *s)
{
    size_t i = 0;

    while ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
           (i > 0 && ((s[i] >= '0' && s[i] <= '9') || s[i] == '+' ||
                      s[i] == '-' || s[i] == '.')))
        i++;
    return i > 1 && strncmp(s + i, "://", 3) == 0 ? i : 0;
}

/* Does a keyword of a conninfo string ("host=", "dbname = ") start at s? Its
** length up to the '=' included, else 0. */
static size_t conninfo_key(const char *s, const char *key)
{
    size_t n = strlen(key), i;

    if (strncasecmp(s, key, n) != 0)
        return 0;
    for (i = n; s[i] == ' ' || s[i] == '\t'; i++)
        ;
    return s[i] == '=' ? i + 1 : 0;
}

/* Is there a word (at the start, or after a blank) that opens one of
** keys at s[i]? The length of the key and its '=', else 0. */
static size_t conninfo_word(const char *s, size_t i,
                            const char *const *keys, size_t nkeys)
{
    size_t j, n;

    if (i > 0 && s[i - 1] != ' ' && s[i - 1] != '\t')
        return 0;
    for (j = 0; j < nkeys; j++) {
        n = conninfo_key(s + i, keys[j]);
        if (n)
            return n;
    }
    return 0;
}

/* Does path look like a keyword/value connection string of PostgreSQL? */
static int looks_like_conninfo(const char *path)
{
    static const char *const keys[] = {"host", "hostaddr", "dbname",
                                       "service"};
    size_t i;

    for (i = 0; path[i]; i++)
        if (conninfo_word(path, i, keys, sizeof keys / sizeof keys[0]))
            return 1;
    return 0;
}

const char *db_missing_hint(const char *path)
{
    if (looks_like_conninfo(path))
        return "it looks like a PostgreSQL connection string: give askdb "
               "a postgresql:// URL instead, e.g. "
               "postgresql://user@host:5432/dbname";
    /* "~/My Data/shop.db" in quotes, or from a file: no shell expanded
    ** it, and askdb takes paths as they are. */
    if (path[0] == '~')
        return "a leading ~ is expanded by the shell, never inside "
               "quotes: write \"$HOME/...\" or leave ~/ outside the "
               "quotes";
    return NULL;
}

/* A conninfo string with the value of its password= (bare or quoted)
** written xxx; malloc()ed, NULL when out of memory. */
static char *redact_conninfo(const char *s)
{
    static const char *const pw[] = {"password"};
    struct buf b;
    size_t i = 0, n;

    buf_init(&b, 0);
    while (s[i]) {
        n = conninfo_word(s, i, pw, 1);
        if (!n) {
            buf_putc(&b, s[i++]);
            continue;
        }
        buf_append(&b, s + i, n);
        for (i += n; s[i] == ' ' || s[i] == '\t'; i++)
            buf_putc(&b, s[i]);
        buf_puts(&b, "xxx");
        if (s[i] == '\'') {
            for (i++; s[i] && s[i] != '\''; i++)
                if (s[i] == '\\' && s[i + 1])
                    i++;
            if (s[i])
                i++;
        } else {
            while (s[i] && s[i] != ' ' && s[i] != '\t')
                i++;
        }
    }
    return buf_steal(&b);
}

int db_url_ambiguous(const char *url)
{
    size_t k = db_url_scheme(url);
    const char *colon;

    return k && text_url_ambiguous(url + k + 3, AUTHORITY_END, &colon);
}

char *db_redact(const char *path)
{
    struct buf b;
    const char *p, *at, *colon, *end, *q, *last;
    size_t k = db_url_scheme(path);

    if (!k)
        return looks_like_conninfo(path) ? redact_conninfo(path)
                                         : strdup(path);
    buf_init(&b, 0);
    p = path + k + 3;
    /* The user part ends at the last '@' of the authority. */
    end = p + strcspn(p, AUTHORITY_END);
    at = NULL;
    for (q = p; q < end; q++)
        if (*q == '@')
            at = q;
    buf_append(&b, path, (size_t)(p - path));
    /* An '@' after the path or the query starts: everything from the
    ** first ':' to the last '@' may be the password's, and goes. */
    last = text_url_ambiguous(p, AUTHORITY_END, &colon);
    if (colon) {
        buf_append(&b, p, (size_t)(colon - p));
        buf_puts(&b, ":xxx");
        /* That '@' may be inside a password= value whose parameter starts
        ** in what went (host:5432/db?password=Summer@2024): then its
        ** tail, to the next '&' or '#', goes too. */
        for (q = colon; q < last; q++)
            if ((*q == '?' || *q == '&') &&
                strncasecmp(q + 1, "password=", 9) == 0)
                break;
        p = q < last ? last + strcspn(last, "&#") : last;
    } else if (at) {
        colon = memchr(p, ':', (size_t)(at - p));
        buf_append(&b, p, (size_t)((colon ? colon : at) - p));
        p = at;
    }
    /* The rest, with the value of each password= parameter dropped. */
    while (*p) {
        size_t pl = strcspn(p, "?&");
        buf_append(&b, p, pl);
        p += pl;
        if (!*p)
            break;
        buf_putc(&b, *p++);
        if (strncasecmp(p, "password=", 9) == 0) {
            buf_puts(&b, "password=xxx");
            p += strcspn(p, "&#");
        }
    }
    return buf_steal(&b);
}

askdb_error_class db_classify(const char *msg)
{
    if (strstr(msg, "no such column") || strstr(msg, "ambiguous column"))
        return ASKDB_EC_UNKNOWN_COLUMN;
    if (strstr(msg, "no such table"))
        return ASKDB_EC_UNKNOWN_TABLE;
    if (strstr(msg, "syntax error") || strstr(msg, "incomplete input") ||
        strstr(msg, "unrecognized token"))
        return ASKDB_EC_SYNTAX;
    if (strstr(msg, "not authorized") || strstr(msg, "may not be modified"))
        return ASKDB_EC_REFUSED;
    if (strstr(msg, "interrupted"))
        return ASKDB_EC_TIMEOUT;
    return ASKDB_EC_RUNTIME;
}

askdb_status db_no_sql(struct db_err *e)
{
    e->ec = ASKDB_EC_NO_SQL;
    snprintf(e->msg, sizeof e->msg, "refused: no SQL statement (the text "
             "is empty or only comments); askdb runs exactly one read-only "
             "statement");
    return ASKDB_ERR_REFUSED;
}

askdb_status db_many_statements(struct db_err *e)
{
    e->ec = ASKDB_EC_REFUSED;
    snprintf(e->msg, sizeof e->msg, "refused: more than one statement; "
             "askdb runs exactly one read-only statement");
    return ASKDB_ERR_REFUSED;
}

const char *db_skip_filler(const char *s, int semis)
{
    int depth;

    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' ||
               *s == '\f' || *s == '\v' || (semis && *s == ';'))
            s++;
        if (s[0] == '-' && s[1] == '-') {
            while (*s && *s != '\n' && *s != '\r')
                s++;
        } else if (s[0] == '/' && s[1] == '*') {
            for (depth = 1, s += 2; *s && depth > 0; s++) {
                if (s[0] == '/' && s[1] == '*') {
                    depth++;
                    s++;
                } else if (s[0] == '*' && s[1] == '/') {
                    depth--;
                    s++;
                }
            }
        } else {
            return s;
        }
    }
}

/* Can c continue an identifier (a letter, digit, '_', '$', or a byte of a
** multibyte character)? */
static int ident_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '$' || c >= 0x80;
}

/* Does a name of fns start at s (case-insensitive, whole identifier, or
** a prefix for a name ending in '*')? Its index, or -1. */
static int denied_at(const char *s, const struct db_denied_fn *fns, size_t n)
{
    size_t i, len;

    for (i = 0; i < n; i++) {
        len = strlen(fns[i].name);
        if (fns[i].name[len - 1] == '*') {
            if (strncasecmp(s, fns[i].name, len - 1) == 0)
                return (int)i;
        } else if (strncasecmp(s, fns[i].name, len) == 0 &&
                   !ident_char((unsigned char)s[len])) {
            return (int)i;
        }
    }
    return -1;
}

int db_denied_call(const char *sql, const struct db_denied_fn *fns, size_t n,
                   char *name, size_t namelen)
{
    const unsigned char *s = (const unsigned char *)sql;
    const char *after;
    size_t i, k;
    int d;

    for (i = 0; s[i]; i++) {
        /* Inside a longer name: not the function. A digit or '$' before
        ** counts as a start (more refusals, never fewer). */
        if (i > 0 && ident_char(s[i - 1]) &&
            !(s[i - 1] >= '0' && s[i - 1] <= '9') && s[i - 1] != '$')
            continue;
        d = denied_at(sql + i, fns, n);
        if (d < 0)
            continue;
        for (k = 0; ident_char(s[i + k]); k++)
            if (k + 1 < namelen)
                name[k] = (char)(s[i + k] >= 'A' && s[i + k] <= 'Z'
                                     ? s[i + k] - 'A' + 'a' : s[i + k]);
        if (namelen)
            name[k + 1 < namelen ? k : namelen - 1] = '\0';
        /* "txid_current" (...): past the closing quote of a quoted name. */
        if (i > 0 && s[i - 1] == '"' && s[i + k] == '"')
            k++;
        after = db_skip_filler(sql + i + k, 0);
        if (*after == '(' ||
            (!*after && (strstr(sql + i + k, "--") ||
                         strstr(sql + i + k, "/*"))))
            return d;
    }
    return -1;
}

int db_refuse_denied(const char *sql, const struct db_denied_fn *fns,
                     size_t n, struct db_err *e)
{
    char name[64];
    int d;

    d = db_denied_call(sql, fns, n, name, sizeof name);
    if (d < 0)
        return 0;
    e->ec = ASKDB_EC_REFUSED;
    snprintf(e->msg, sizeof e->msg,
             "refused: the statement calls %s(), which %s; askdb runs only "
             "read-only queries", name, fns[d].why);
    return -1;
}

void askdb_result_free(askdb_result *r)
{
    long i, n;
    int c;

    if (!r)
        return;
    n = r->nrows * r->ncols;
    for (i = 0; i < n; i++)
        if (r->cells[i].type == ASKDB_TEXT || r->cells[i].type == ASKDB_BLOB)
            free((void *)r->cells[i].s);
    free(r->cells);
    for (c = 0; c < r->ncols; c++) {
        free(r->cols[c]);
        if (r->decltypes)
            free(r->decltypes[c]);
    }
    free(r->cols);
    free(r->decltypes);
    free(r);
}

const askdb_value *askdb_result_cell(const askdb_result *r, long row, int col)
{
    if (!r || row < 0 || row >= r->nrows || col < 0 || col >= r->ncols)
        return NULL;
    return &r->cells[row * r->ncols + col];
}
