/* schema.c - schema lookups and the CREATE TABLE rendering the model sees. */
#include "schema.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/text.h"

void schema_free_table(struct db_table *t)
{
    int j, k;

    for (j = 0; j < t->ncols; j++) {
        struct db_column *c = &t->cols[j];
        free(c->name);
        free(c->type);
        free(c->dflt);
        for (k = 0; k < c->nsamples; k++)
            free(c->samples[k]);
        free(c->samples);
        free(c->comment);
    }
    for (j = 0; j < t->nfks; j++) {
        free(t->fks[j].from);
        free(t->fks[j].table);
        free(t->fks[j].to);
    }
    for (j = 0; j < t->nuniques; j++)
        free(t->uniques[j]);
    free(t->uniques);
    free(t->fks);
    free(t->cols);
    free(t->name);
    free(t->comment);
    free(t->namespace);
    free(t->qname);
    memset(t, 0, sizeof *t);
}

void schema_free(struct db_schema *s)
{
    int i;

    if (!s)
        return;
    for (i = 0; i < s->ntables; i++)
        schema_free_table(&s->tables[i]);
    free(s->tables);
    s->tables = NULL;
    s->ntables = 0;
    for (i = 0; i < s->nreserved; i++)
        free(s->reserved[i]);
    free(s->reserved);
    s->reserved = NULL;
    s->nreserved = 0;
}

/* Where word is in s->reserved, or where it would go: *found says which. */
static int reserved_at(const struct db_schema *s, const char *word,
                       int *found)
{
    int lo = 0, hi = s->nreserved, mid, c;

    *found = 0;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        c = strcasecmp(s->reserved[mid], word);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void *schema_push(void *arrp, int *n, size_t sz)
{
    void **arr = arrp;
    char *p = realloc(*arr, (size_t)(*n + 1) * sz);

    if (!p)
        return NULL;
    memset(p + (size_t)*n * sz, 0, sz);
    *arr = p;
    return p + (size_t)(*n)++ * sz;
}

int schema_has_sample(const struct db_column *c, const char *v)
{
    int i;

    for (i = 0; i < c->nsamples; i++)
        if (strcmp(c->samples[i], v) == 0)
            return 1;
    return 0;
}

int schema_add_sample(struct db_column *c, const char *v, int per_col)
{
    char **slot;

    if (c->nsamples >= per_col || !v || !*v ||
        strlen(v) > SCHEMA_SAMPLE_MAXLEN || schema_has_sample(c, v))
        return 0;
    slot = schema_push(&c->samples, &c->nsamples, sizeof *slot);
    if (!slot)
        return -1;
    *slot = strdup(v);
    if (!*slot) {
        c->nsamples--;
        return -1;
    }
    return 0;
}

int schema_add_reserved(struct db_schema *s, const char *word)
{
    char **grown, *w, *p;
    int at, found;

    at = reserved_at(s, word, &found);
    if (found)
        return 0;
    w = strdup(word);
    if (!w)
        return -1;
    for (p = w; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    grown = realloc(s->reserved, (size_t)(s->nreserved + 1) * sizeof *grown);
    if (!grown) {
        free(w);
        return -1;
    }
    s->reserved = grown;
    memmove(&grown[at + 1], &grown[at],
            (size_t)(s->nreserved - at) * sizeof *grown);
    grown[at] = w;
    s->nreserved++;
    return 0;
}

int schema_reserved(const struct db_schema *s, const char *word)
{
    int found;

    if (s->nreserved)
        reserved_at(s, word, &found);
    else
        found = 0;
    return found;
}

const struct db_table *schema_table(const struct db_schema *s,
                                    const char *name)
{
    int i;

    for (i = 0; i < s->ntables; i++)
        if (!s->tables[i].namespace &&
            strcasecmp(s->tables[i].name, name) == 0)
            return &s->tables[i];
    for (i = 0; i < s->ntables; i++)
        if (s->tables[i].qname && strcasecmp(s->tables[i].qname, name) == 0)
            return &s->tables[i];
    return NULL;
}

const struct db_table *schema_table_in(const struct db_schema *s,
                                       const char *nsp, const char *name)
{
    int i;

    for (i = 0; nsp && i < s->ntables; i++) {
        const struct db_table *t = &s->tables[i];
        if (t->namespace && strcasecmp(t->namespace, nsp) == 0 &&
            strcasecmp(t->name, name) == 0)
            return t;
    }
    for (i = 0; i < s->ntables; i++)
        if (!s->tables[i].namespace &&
            strcasecmp(s->tables[i].name, name) == 0)
            return &s->tables[i];
    return NULL;
}

const char *schema_qname(const struct db_table *t)
{
    return t->qname ? t->qname : t->name;
}

int schema_set_namespace(struct db_table *t, const char *nsp)
{
    size_t n = strlen(nsp), k = strlen(t->name);

    free(t->namespace);
    free(t->qname);
    t->namespace = strdup(nsp);
    t->qname = malloc(n + k + 2);
    if (!t->namespace || !t->qname) {
        free(t->namespace);
        free(t->qname);
        t->namespace = t->qname = NULL;
        return -1;
    }
    memcpy(t->qname, nsp, n);
    t->qname[n] = '.';
    memcpy(t->qname + n + 1, t->name, k + 1);
    return 0;
}

const struct db_column *schema_column(const struct db_table *t,
                                      const char *name)
{
    int i;

    for (i = 0; i < t->ncols; i++)
        if (strcasecmp(t->cols[i].name, name) == 0)
            return &t->cols[i];
    return NULL;
}

/* Append s bare when it is a plain word that neither SQLite's keywords
** nor sc's reserved words (sc NULL: none) hold, else quoted. SQLite's
** keywords count on every engine: the grammar's words that must be
** quoted (grammar.c kw_hard[]) are among them. */
static void put_ident(struct buf *b, const struct db_schema *sc,
                      const char *s, int fold)
{
    const char *p;
    int plain = (*s != '\0') && !(*s >= '0' && *s <= '9');

    for (p = s; *p && plain; p++)
        if (!((*p >= 'a' && *p <= 'z') || (!fold && *p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_'))
            plain = 0;
    if (plain && !sqlite3_keyword_check(s, (int)strlen(s)) &&
        !(sc && schema_reserved(sc, s))) {
        buf_puts(b, s);
        return;
    }
    text_put_quoted(b, s, '"');
}

void schema_put_ident(struct buf *b, const char *s)
{
    put_ident(b, NULL, s, 0);
}

void schema_put_name(struct buf *b, const struct db_schema *sc,
                     const char *s)
{
    put_ident(b, sc, s, sc->case_folds);
}

void schema_put_table(struct buf *b, const struct db_schema *s,
                      const struct db_table *t)
{
    if (t->namespace) {
        schema_put_name(b, s, t->namespace);
        buf_putc(b, '.');
    }
    schema_put_name(b, s, t->name);
}

void schema_put_quoted_table(struct buf *b, const struct db_table *t)
{
    if (t->namespace) {
        text_put_quoted(b, t->namespace, '"');
        buf_putc(b, '.');
    }
    text_put_quoted(b, t->name, '"');
}

void schema_say_name(struct buf *b, const struct db_schema *s,
                     const char *name)
{
    if (s->says_quoted)
        schema_put_name(b, s, name);
    else
        buf_puts(b, name);
}

void schema_say_table(struct buf *b, const struct db_schema *s,
                      const struct db_table *t)
{
    if (s->says_quoted)
        schema_put_table(b, s, t);
    else
        buf_puts(b, schema_qname(t));
}

void schema_say_qname(struct buf *b, const struct db_schema *s,
                      const char *qname)
{
    const struct db_table *t;

    if (!s->says_quoted) {
        buf_puts(b, qname);
        return;
    }
    t = schema_table(s, qname);
    if (t)
        schema_put_table(b, s, t);
    else
        schema_put_name(b, s, qname);
}

/* Append the table a foreign key references: as schema_put_table() when
** it is a table of s with a namespace, else as the key spells it. Only a
** name with a dot can be a qualified name: the others are not looked up
** (a schema of thousands of tables has as many keys). */
static void put_fkey_table(struct buf *b, const struct db_schema *s,
                           const char *table)
{
    const struct db_table *to = strchr(table, '.') ? schema_table(s, table)
                                                   : NULL;

    if (to && to->namespace)
        schema_put_table(b, s, to);
    else
        schema_put_name(b, s, table);
}

/* A sample value as an SQL string literal, newlines flattened so that the
** comment stays on one line. */
static void put_literal(struct buf *b, const char *s)
{
    buf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            buf_putc(b, '\'');
        buf_putc(b, (*s == '\n' || *s == '\r') ? ' ' : *s);
    }
    buf_putc(b, '\'');
}

/* A comment's text on one line, at most 200 bytes (cut at a character). */
static void put_comment(struct buf *b, const char *s)
{
    size_t n = 0;

    for (; *s && (n < 200 || ((unsigned char)*s & 0xC0) == 0x80); s++, n++)
        buf_putc(b, (*s == '\n' || *s == '\r' || *s == '\t') ? ' ' : *s);
    if (*s)
        buf_puts(b, "...");
}

/* Is column j of a table shown? keep NULL = every column is. */
static int shown(const unsigned char *keep, int j)
{
    return !keep || keep[j];
}

static int npk(const struct db_table *t, const unsigned char *keep)
{
    int i, n = 0;

    for (i = 0; i < t->ncols; i++)
        if (t->cols[i].pk && shown(keep, i))
            n++;
    return n;
}

/* Does every column of the unique index u (as rendered by the driver:
** names joined by ", ", as schema_put_name() writes them) stay shown? */
static int unique_shown(const struct db_schema *s, const struct db_table *t,
                        const char *u, const unsigned char *keep)
{
    struct buf b;
    int i, ok = 1;

    if (!keep)
        return 1;
    buf_init(&b, 0);
    for (i = 0; i < t->ncols && ok; i++) {
        const char *p = u;
        size_t n;
        if (keep[i])
            continue;
        buf_reset(&b);
        schema_put_name(&b, s, t->cols[i].name);
        if (buf_err(&b))
            break;
        n = b.len;
        for (;;) {
            if (strncmp(p, b.data, n) == 0 && (p[n] == '\0' || p[n] == ','))
                ok = 0;
            p = strstr(p, ", ");
            if (!p || !ok)
                break;
            p += 2;
        }
    }
    buf_free(&b);
    return ok;
}

/* Is foreign key f of a table shown? Its column must be, and so must the
** table it references when that table is in the schema. */
static int fkey_shown(const struct db_schema *s, const struct db_table *t,
                      const struct db_fkey *f, const unsigned char *keep_table,
                      const unsigned char *keep)
{
    const struct db_table *to;
    const struct db_column *c;

    if (keep) {
        c = schema_column(t, f->from);
        if (c && !keep[c - t->cols])
            return 0;
    }
    if (keep_table) {
        to = schema_table(s, f->table);
        if (to && !keep_table[to - s->tables])
            return 0;
    }
    return 1;
}

/* Render table t of s showing the columns keep marks (NULL = all) and the
** constraints on them; keep_table (NULL = all) says which tables a foreign
** key may point at. */
static void render_table(struct buf *b, const struct db_schema *s,
                         const struct db_table *t,
                         const unsigned char *keep_table,
                         const unsigned char *keep)
{
    int i, j, k, nlines, line = 0, pks = npk(t, NULL), kpks = npk(t, keep);
    int ncols = 0, nuniq = 0, nfk = 0;

    if (t->comment && *t->comment) {
        buf_puts(b, "-- ");
        put_comment(b, t->comment);
        buf_putc(b, '\n');
    }
    buf_printf(b, "CREATE %s ", t->is_view ? "VIEW" : "TABLE");
    schema_put_table(b, s, t);
    buf_puts(b, " (\n");
    for (i = 0; i < t->ncols; i++)
        ncols += shown(keep, i);
    for (i = 0; i < t->nuniques; i++)
        nuniq += unique_shown(s, t, t->uniques[i], keep);
    for (i = 0; i < t->nfks; i++)
        nfk += fkey_shown(s, t, &t->fks[i], keep_table, keep);
    nlines = ncols + nfk + nuniq + (pks > 1 && kpks > 0);
    for (i = 0; i < t->ncols; i++) {
        const struct db_column *c = &t->cols[i];
        if (!shown(keep, i))
            continue;
        buf_puts(b, "  ");
        schema_put_name(b, s, c->name);
        if (c->type[0])
            buf_printf(b, " %s", c->type);
        if (c->pk && pks == 1)
            buf_puts(b, " PRIMARY KEY");
        if (c->notnull && !(c->pk && pks == 1))
            buf_puts(b, " NOT NULL");
        if (c->dflt)
            buf_printf(b, " DEFAULT %s", c->dflt);
        if (++line < nlines)
            buf_putc(b, ',');
        if (c->comment && *c->comment) {
            buf_puts(b, " -- ");
            put_comment(b, c->comment);
        }
        if (c->nsamples) {
            buf_puts(b, c->comment && *c->comment ? "; e.g. " : " -- e.g. ");
            for (j = 0; j < c->nsamples; j++) {
                if (j)
                    buf_puts(b, ", ");
                put_literal(b, c->samples[j]);
            }
        }
        buf_putc(b, '\n');
    }
    if (pks > 1 && kpks > 0) {
        buf_puts(b, "  PRIMARY KEY (");
        for (k = 1, j = 0; k <= pks; k++)
            for (i = 0; i < t->ncols; i++)
                if (t->cols[i].pk == k && shown(keep, i)) {
                    if (j++)
                        buf_puts(b, ", ");
                    schema_put_name(b, s, t->cols[i].name);
                }
        buf_puts(b, ++line < nlines ? "),\n" : ")\n");
    }
    for (i = 0; i < t->nuniques; i++)
        if (unique_shown(s, t, t->uniques[i], keep))
            buf_printf(b, "  UNIQUE (%s)%s\n", t->uniques[i],
                       ++line < nlines ? "," : "");
    for (i = 0; i < t->nfks; i++) {
        const struct db_fkey *f = &t->fks[i];
        if (!fkey_shown(s, t, f, keep_table, keep))
            continue;
        buf_puts(b, "  FOREIGN KEY (");
        schema_put_name(b, s, f->from);
        buf_puts(b, ") REFERENCES ");
        put_fkey_table(b, s, f->table);
        if (f->to) {
            buf_putc(b, '(');
            schema_put_name(b, s, f->to);
            buf_putc(b, ')');
        }
        buf_puts(b, ++line < nlines ? ",\n" : "\n");
    }
    buf_puts(b, ");");
    if (t->rows >= 0)
        buf_printf(b, " -- %s%ld row%s",
                   t->rows_capped     ? "over "
                   : t->rows_estimated ? "about "
                                       : "",
                   t->rows, t->rows == 1 ? "" : "s");
    buf_putc(b, '\n');
}

char *schema_render(const struct db_schema *s)
{
    return schema_render_subset(s, NULL, NULL);
}

char *schema_render_subset(const struct db_schema *s,
                           const unsigned char *keep_table,
                           unsigned char *const *keep_col)
{
    struct buf b;
    int i, pass, n = 0;

    /* Views first (pass 0), then tables, each in the driver's order. What
    ** comes last stands right before the question, and a view's names
    ** there are copied into answers they have nothing to do with:
    ** examples/shop.db's view customer_revenue(order_count, revenue), last
    ** as created, gave "How many customers are from each country?" an
    ** order_count and a SUM(price) (bench/shop/README.md). */
    buf_init(&b, 0);
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < s->ntables; i++) {
            if ((keep_table && !keep_table[i]) ||
                (s->tables[i].is_view ? 0 : 1) != pass)
                continue;
            if (n++)
                buf_putc(&b, '\n');
            render_table(&b, s, &s->tables[i], keep_table,
                         keep_col ? keep_col[i] : NULL);
        }
    return buf_steal(&b);
}
