/* hint.c - repair hints: closest names, error positions, advice by class. */
#include "agent/hint.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/text.h"
#include "sql/extract.h"

#define MAX_SUGGEST 5
#define MAX_LIST 40
/* The most of the erring line a syntax hint shows on either side of the
** token (bytes): a statement written on one huge line is not shown whole,
** nor is its caret a line of as many blanks. */
#define LINE_SIDE 2048

int hint_distance(const char *a, const char *b, int cap)
{
    size_t la = strlen(a), lb = strlen(b), i, j;
    int *row, best, d, prev, tmp;

    if (la > 64 || lb > 64)
        return strcasecmp(a, b) == 0 ? 0 : cap + 1;
    row = malloc((lb + 1) * sizeof *row);
    if (!row)
        return cap + 1;
    for (j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (i = 1; i <= la; i++) {
        prev = row[0];
        row[0] = (int)i;
        best = row[0];
        for (j = 1; j <= lb; j++) {
            int cost = tolower((unsigned char)a[i - 1]) !=
                       tolower((unsigned char)b[j - 1]);
            tmp = row[j];
            d = prev + cost;
            if (row[j] + 1 < d)
                d = row[j] + 1;
            if (row[j - 1] + 1 < d)
                d = row[j - 1] + 1;
            row[j] = d;
            prev = tmp;
            if (d < best)
                best = d;
        }
        if (best > cap) {
            free(row);
            return cap + 1;
        }
    }
    d = row[lb];
    free(row);
    return d > cap ? cap + 1 : d;
}

/* Score how well candidate matches the wanted name: lower is better.
** Substring matches (e.g. "name" in "first_name") count as close. */
static int score(const char *want, const char *cand)
{
    size_t lw = strlen(want), lc = strlen(cand), i;
    int d = hint_distance(want, cand, 8);

    if (lw >= 3 && lc >= 3) {
        for (i = 0; i + lw <= lc; i++)
            if (strncasecmp(cand + i, want, lw) == 0)
                return d < 2 ? d : 2;
        for (i = 0; i + lc <= lw; i++)
            if (strncasecmp(want + i, cand, lc) == 0)
                return d < 2 ? d : 2;
    }
    return d;
}

struct cand {
    const char *table;
    const char *col;
    int score;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;

    return x->score - y->score;
}

/* The name after "prefix" in msg (e.g. "no such column: t.x"), copied
** into out; 0 if absent. */
static int name_after(const char *msg, const char *prefix, char *out,
                      size_t n)
{
    const char *p = strstr(msg, prefix);
    size_t i = 0;

    if (!p)
        return 0;
    p += strlen(prefix);
    while (*p == ' ')
        p++;
    while (*p && *p != ' ' && *p != '\n' && i + 1 < n)
        out[i++] = *p++;
    out[i] = '\0';
    return i > 0;
}

/* The text between pre and the next post in msg, copied into out; 0 if
** absent or empty. */
static int name_between(const char *msg, const char *pre, const char *post,
                        char *out, size_t n)
{
    const char *p = strstr(msg, pre), *e;
    size_t len;

    if (!p)
        return 0;
    p += strlen(pre);
    e = strstr(p, post);
    len = e ? (size_t)(e - p) : 0;
    if (len == 0 || len >= n || memchr(p, '\n', len))
        return 0;
    memcpy(out, p, len);
    out[len] = '\0';
    return 1;
}

/*
** The unknown name an engine's message gives, into out (n bytes): for a
** table SQLite's (and the MariaDB driver's) "no such table: x",
** PostgreSQL's 'relation "x" does not exist', DuckDB's 'Table with name
** x does not exist'; for a column "no such column: x", PostgreSQL's
** 'column "x" does not exist' (or 'column t.x ...', and 'column
** reference "x" is ambiguous'), DuckDB's 'Referenced column "x" not
** found', 'Table "t" does not have a column named "x"' (as t.x) and
** 'reference to column name "x"'; never from PostgreSQL's " (HINT: ...)"
** that the PostgreSQL driver appends. 0 when the message names none.
*/
static int message_name(const char *full, int column, char *out, size_t n)
{
    char t[120], c[120], msg[600];
    const char *h = strstr(full, " (HINT: ");
    size_t len = h ? (size_t)(h - full) : strlen(full);

    /* PostgreSQL's hint names the column it guesses: read the message
    ** before it. */
    if (len >= sizeof msg)
        len = sizeof msg - 1;
    memcpy(msg, full, len);
    msg[len] = '\0';

    if (!column)
        return name_after(msg, "table:", out, n) ||
               name_between(msg, "relation \"", "\"", out, n) ||
               name_between(msg, "Table with name ", " does not exist",
                            out, n);
    if (name_after(msg, "column:", out, n) ||
        name_after(msg, "column name:", out, n) ||
        name_between(msg, "column \"", "\"", out, n) ||
        name_between(msg, "column reference \"", "\"", out, n) ||
        name_between(msg, "column name \"", "\"", out, n) ||
        name_between(msg, "Referenced column \"", "\"", out, n))
        return 1;
    if (name_between(msg, "Table \"", "\" does not have", t, sizeof t) &&
        name_between(msg, "a column named \"", "\"", c, sizeof c)) {
        snprintf(out, n, "%s.%s", t, c);
        return 1;
    }
    return name_between(msg, "column ", " does not exist", out, n) &&
           !strchr(out, ' ');
}

/* Copy a name token (bare or quoted) without its quotes. */
static void unquote(const char *p, size_t n, int kind, char *out, size_t cap)
{
    size_t i, k = 0;

    if (kind == SQLX_IDENT && n >= 2) {
        p++;
        n -= 2;
    }
    for (i = 0; i < n && k + 1 < cap; i++)
        out[k++] = p[i];
    out[k] = '\0';
}

/* The table that alias stands for in sql ("FROM orders o", "JOIN orders
** AS o", "FROM sales.orders o"), or NULL. */
static const struct db_table *alias_table(const struct db_schema *s,
                                          const char *sql, const char *alias)
{
    const struct db_table *last = NULL;
    const char *p = sql;
    char word[256], prev[256] = "";
    size_t n;
    int kind, dot = 0;

    if (!sql)
        return NULL;
    while ((n = sqlx_token(p, &kind)) > 0) {
        if (kind == SQLX_WORD || kind == SQLX_IDENT) {
            unquote(p, n, kind, word, sizeof word);
            if (last && strcasecmp(word, alias) == 0)
                return last;
            if (last && strcasecmp(word, "AS") == 0) {
                p += n;
                continue;
            }
            /* After "schema." the word is a table of that schema. */
            last = dot ? schema_table_in(s, prev, word)
                       : schema_table(s, word);
            memcpy(prev, word, strlen(word) + 1);
            dot = 0;
        } else if (kind == SQLX_PUNCT && *p == '.' && prev[0]) {
            last = NULL;
            dot = 1;
        } else if (kind != SQLX_SPACE && kind != SQLX_COMMENT) {
            last = NULL;
            prev[0] = '\0';
            dot = 0;
        }
        p += n;
    }
    return NULL;
}

/* Append "table.column" as a message to the model names it
** (schema_say_qname(), schema_say_name()). */
static void say_column(struct buf *b, const struct db_schema *s,
                       const struct cand *c)
{
    schema_say_qname(b, s, c->table);
    buf_putc(b, '.');
    schema_say_name(b, s, c->col);
}

static void hint_column(struct buf *b, const struct db_schema *s,
                        const char *sql, const char *msg)
{
    char name[256];
    const char *col, *dot;
    struct cand *c;
    int i, j, n = 0, total = 0, shown = 0;

    if (!message_name(msg, 1, name, sizeof name))
        return;
    dot = strrchr(name, '.');
    col = dot ? dot + 1 : name;
    for (i = 0; i < s->ntables; i++)
        total += s->tables[i].ncols;
    c = calloc((size_t)total + 1, sizeof *c);
    if (!c)
        return;
    for (i = 0; i < s->ntables; i++)
        for (j = 0; j < s->tables[i].ncols; j++) {
            c[n].table = schema_qname(&s->tables[i]);
            c[n].col = s->tables[i].cols[j].name;
            c[n].score = score(col, c[n].col);
            n++;
        }
    qsort(c, (size_t)n, sizeof *c, cand_cmp);
    if (strstr(msg, "ambiguous")) {
        buf_printf(b, "Hint: several tables have a column '%s'; qualify it "
                      "with the table name or alias (", col);
        for (i = 0; i < n && c[i].score == 0; i++) {
            buf_puts(b, i ? ", " : "");
            say_column(b, s, &c[i]);
        }
        buf_puts(b, ").\n");
        free(c);
        return;
    }
    buf_printf(b, "Hint: there is no column '%s'", name);
    if (dot) {
        /* Qualified by a table name or alias: list that table's columns
        ** and rank them first. */
        char tname[256];
        size_t tl = (size_t)(dot - name);
        const struct db_table *t = NULL;
        if (tl < sizeof tname) {
            memcpy(tname, name, tl);
            tname[tl] = '\0';
            t = schema_table(s, tname);
            if (!t)
                t = alias_table(s, sql, tname);
        }
        if (t) {
            const char *tn = schema_qname(t);
            buf_printf(b, "; %s%s", strcasecmp(tname, tn) ? tname : "",
                       strcasecmp(tname, tn) ? " is table " : "table ");
            schema_say_table(b, s, t);
            buf_puts(b, ", which has columns: ");
            for (i = 0; i < t->ncols && i < MAX_LIST; i++) {
                buf_puts(b, i ? ", " : "");
                schema_say_name(b, s, t->cols[i].name);
            }
            for (i = 0; i < n; i++)
                if (c[i].table != tn)
                    c[i].score += 3;
            qsort(c, (size_t)n, sizeof *c, cand_cmp);
        }
    }
    for (i = 0; i < n && shown < MAX_SUGGEST; i++) {
        if (c[i].score > 3 && shown > 0)
            break;
        if (c[i].score > (int)strlen(col) / 2 + 1)
            break;
        buf_puts(b, shown ? ", " : ". Closest real columns: ");
        say_column(b, s, &c[i]);
        shown++;
    }
    buf_puts(b, ".\n");
    free(c);
}

static void hint_table(struct buf *b, const struct db_schema *s,
                       const char *msg)
{
    char name[256];
    struct cand *c;
    int i, n = s->ntables;

    if (!message_name(msg, 0, name, sizeof name))
        name[0] = '\0';
    c = calloc((size_t)n + 1, sizeof *c);
    if (!c)
        return;
    for (i = 0; i < n; i++) {
        c[i].table = schema_qname(&s->tables[i]);
        c[i].score = name[0] ? score(name, c[i].table) : 0;
    }
    if (name[0])
        qsort(c, (size_t)n, sizeof *c, cand_cmp);
    buf_printf(b, "Hint: there is no table '%s'. The tables are%s: ", name,
               name[0] && n > 1 ? " (closest first)" : "");
    for (i = 0; i < n && i < MAX_LIST; i++) {
        buf_puts(b, i ? ", " : "");
        schema_say_qname(b, s, c[i].table);
    }
    if (n > MAX_LIST)
        buf_printf(b, ", ... (%d more)", n - MAX_LIST);
    buf_puts(b, ".\n");
    free(c);
}

/* The schema's spelling of name when it names a table (without a
** namespace) or a column of s, else NULL. */
static const char *name_in_schema(const struct db_schema *s,
                                  const char *name)
{
    const struct db_table *t = schema_table(s, name);
    const struct db_column *c;
    int i;

    if (t && !t->namespace)
        return t->name;
    for (i = 0; i < s->ntables; i++) {
        c = schema_column(&s->tables[i], name);
        if (c)
            return c->name;
    }
    return NULL;
}

/* Say that the word w (n bytes) is one of the engine's reserved words
** and how to write the name, when it is one and a table or column of s
** has that name; said[] holds the words already said (at most 4). */
static void say_reserved(struct buf *b, const struct db_schema *s,
                         const char *w, size_t n, const char *dialect,
                         char said[4][65])
{
    char word[65];
    const char *name;
    int i;

    if (n == 0 || n >= sizeof word)
        return;
    memcpy(word, w, n);
    word[n] = '\0';
    if (!schema_reserved(s, word))
        return;
    name = name_in_schema(s, word);
    if (!name)
        return;
    for (i = 0; i < 4 && said[i][0]; i++)
        if (strcasecmp(said[i], word) == 0)
            return;
    if (i == 4)
        return;
    memcpy(said[i], word, n + 1);
    buf_printf(b, "Hint: %s is a reserved word in %s; write the name "
                  "quoted: ", word, dialect);
    schema_put_name(b, s, name);
    buf_puts(b, ".\n");
}

/*
** On an engine with reserved words of its own (s->reserved: not SQLite),
** say to quote a table or column name that sql writes bare where it is
** one of them: the word the engine stopped at (near, tl bytes; a syntax
** error, SELECT show ...), and the words right after FROM and JOIN,
** which PostgreSQL may read as something else without a syntax error
** (FROM user is the function current_user, and the message then names
** a column).
*/
static void hint_reserved(struct buf *b, const struct db_schema *s,
                          const char *sql, const char *near, size_t tl,
                          const char *dialect)
{
    char said[4][65] = {"", "", "", ""};
    const char *p, *prev = NULL;
    size_t n, prevn = 0;
    int kind;

    if (!s->nreserved)
        return;
    if (near)
        say_reserved(b, s, near, tl, dialect, said);
    for (p = sql ? sql : ""; (n = sqlx_token(p, &kind)) > 0; p += n) {
        if (kind == SQLX_SPACE || kind == SQLX_COMMENT)
            continue;
        if (kind == SQLX_WORD && prev &&
            ((prevn == 4 && strncasecmp(prev, "from", 4) == 0) ||
             (prevn == 4 && strncasecmp(prev, "join", 4) == 0)))
            say_reserved(b, s, p, n, dialect, said);
        prev = kind == SQLX_WORD ? p : NULL;
        prevn = n;
    }
}

/* Show the line of sql holding the token near which SQLite stopped, with a
** caret under it. The token is searched outside strings and comments. */
static void hint_syntax(struct buf *b, const struct db_schema *s,
                        const char *sql, const char *msg,
                        const char *dialect)
{
    const char *near = strstr(msg, "near \""), *end, *p, *at = NULL;
    const char *ls, *le;
    size_t tl, n;
    int kind, line = 1, cut_start, cut_end;

    if (!near) {
        buf_puts(b, "Hint: the statement is incomplete or malformed; check "
                    "parentheses, quotes and commas.\n");
        /* MariaDB quotes the rest of the statement from where it
        ** stopped: near 'condition FROM t' at line 1. */
        near = strstr(msg, "near '");
        if (near) {
            near += 6;
            tl = sqlx_token(near, &kind);
            if (kind != SQLX_WORD)
                tl = 0;
        }
        hint_reserved(b, s, sql, near, near ? tl : 0, dialect);
        return;
    }
    near += 6;
    end = strstr(near, "\": syntax error");
    if (!end)
        end = strchr(near, '"');
    if (!end)
        return;
    tl = (size_t)(end - near);
    for (p = sql; (n = sqlx_token(p, &kind)) > 0; p += n)
        if (kind != SQLX_COMMENT && kind != SQLX_SPACE && n >= tl &&
            strncasecmp(p, near, tl) == 0) {
            at = p;
            break;
        }
    if (!at) {
        buf_printf(b, "Hint: syntax error near \"%.*s\".\n", (int)tl, near);
        hint_reserved(b, s, sql, near, tl, dialect);
        return;
    }
    for (p = sql; p < at; p++)
        if (*p == '\n')
            line++;
    for (ls = at; ls > sql && ls[-1] != '\n'; ls--)
        ;
    le = strchr(at, '\n');
    if (!le)
        le = at + strlen(at);
    /* a huge line: LINE_SIDE bytes either side of the token, "..." for
    ** the rest, cut between characters */
    cut_start = at - ls > LINE_SIDE;
    if (cut_start)
        for (ls = at - LINE_SIDE; ((unsigned char)*ls & 0xC0) == 0x80; ls++)
            ;
    cut_end = (size_t)(le - at) > LINE_SIDE;
    if (cut_end)
        le = at + text_cut(at, (size_t)(le - at), LINE_SIDE);
    buf_printf(b, "Hint: syntax error at line %d, near \"%.*s\":\n  %s%.*s"
               "%s\n  %s", line, (int)tl, near, cut_start ? "..." : "",
               (int)(le - ls), ls, cut_end ? "..." : "",
               cut_start ? "   " : "");
    for (p = ls; p < at; p++)
        buf_putc(b, *p == '\t' ? '\t' : ' ');
    buf_puts(b, "^\n");
    hint_reserved(b, s, sql, near, tl, dialect);
}

void hint_write(struct buf *b, const struct db_schema *s, const char *sql,
                askdb_error_class ec, const char *msg, int timeout_ms,
                const char *dialect)
{
    switch (ec) {
    case ASKDB_EC_UNKNOWN_COLUMN:
        hint_column(b, s, sql, msg);
        hint_reserved(b, s, sql, NULL, 0, dialect);
        break;
    case ASKDB_EC_UNKNOWN_TABLE:
        hint_table(b, s, msg);
        hint_reserved(b, s, sql, NULL, 0, dialect);
        break;
    case ASKDB_EC_SYNTAX:
        hint_syntax(b, s, sql ? sql : "", msg, dialect);
        break;
    case ASKDB_EC_REFUSED:
        buf_puts(b, "Hint: write exactly one read-only query (SELECT or "
                    "WITH); no changes to the database, no PRAGMA, no "
                    "ATTACH, no second statement.\n");
        break;
    case ASKDB_EC_NO_SQL:
        buf_printf(b, "Hint: answer with one %s query in a ```sql code "
                      "block.\n", dialect);
        break;
    case ASKDB_EC_EMPTY:
        /* MariaDB's default collations compare text ignoring case: a
        ** word on case would send the model after the wrong fault. */
        buf_printf(b, "Hint: the query ran but returned no rows. Reconsider "
                      "the filters (exact spelling%s of text values - see "
                      "the sample values in the schema -, date and number "
                      "formats) and the joins (join on the foreign keys). "
                      "If you are sure nothing matches, repeat the same "
                      "query.\n",
                   dialect && strcmp(dialect, "MariaDB") == 0 ? ""
                                                              : " and case");
        break;
    case ASKDB_EC_TIMEOUT:
        buf_printf(b, "Hint: the query ran longer than the %d ms limit. "
                      "Simplify it: join on keys, avoid cross joins and "
                      "correlated subqueries over large tables.\n",
                   timeout_ms);
        break;
    case ASKDB_EC_RUNTIME:
        buf_printf(b, "Hint: use only %s's built-in functions and check "
                      "the arguments and types.\n", dialect);
        hint_reserved(b, s, sql, NULL, 0, dialect);
        break;
    case ASKDB_EC_NONE:
    case ASKDB_EC_LLM:
    case ASKDB_EC_CHECK:     /* the check's own hint is in the message */
    case ASKDB_EC_DATABASE:  /* never repaired */
        break;
    }
}
