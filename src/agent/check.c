/* check.c - doubts about a query that runs: joins, cross joins,
** aggregates, text values, NULL columns, result shape. */
#include "agent/check.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/text.h"
#include "db/db.h"
#include "agent/link.h"
#include "agent/values.h"
#include "sql/analyze.h"

/*
** Design
** ======
** The checks before execution read the statement through sqla_analyze()
** (src/sql/analyze.c) and compare what it found with the schema; only the
** value check touches the data, with small queries through db_run() (the
** same read-only guard and limits as every statement) that quote every
** identifier and string they build. The checks after execution look at
** the rows and at the question's wording.
**
** Each finding carries a hint written for the model: what is wrong, on
** which names, and what to write instead (the real foreign keys, the
** stored spellings). The thresholds are set for few false alarms on
** Spider's gold queries; see the comments at each check and
** bench/check_false_alarms.c.
*/

#define MAX_LIT_CHECKS 8     /* value checks per statement */
#define MAX_ALTERNATIVES 5   /* stored values shown per missing one */
#define MAX_FEW 12           /* a column of so few texts is shown whole */
#define MAX_LOOKS 40         /* columns looked into for a value, no index */
#define MAX_CANDIDATES 50    /* values containing it, read to choose from */
#define MAX_SHOWN 80         /* bytes of a stored value shown in a hint */
#define MAX_HINT 4096        /* a longer hint is cut, never dropped */
#define MAX_QUERY 4096       /* the value check's own queries */

struct findings {
    struct check_finding *f;
    int n;
    int oom;
};

/* Add a finding with the text of b (taken over, freed here), cut to
** MAX_HINT bytes between characters. */
static void add(struct findings *fs, enum check_kind kind, struct buf *b)
{
    struct check_finding *nf;
    struct buf cut;
    char *hint;

    if (!buf_err(b) && b->len > MAX_HINT) {
        buf_init(&cut, 0);
        text_put(&cut, b->data, b->len, MAX_HINT);
        buf_free(b);
        *b = cut;
    }
    hint = buf_steal(b);
    if (!hint) {
        fs->oom = 1;
        return;
    }
    nf = realloc(fs->f, (size_t)(fs->n + 1) * sizeof *nf);
    if (!nf) {
        free(hint);
        fs->oom = 1;
        return;
    }
    fs->f = nf;
    nf[fs->n].kind = kind;
    nf[fs->n].hint = hint;
    fs->n++;
}

static int finish(struct findings *fs, struct check_finding **out, int *n)
{
    if (fs->oom) {
        check_findings_free(fs->f, fs->n);
        *out = NULL;
        *n = 0;
        return -1;
    }
    *out = fs->f;
    *n = fs->n;
    return 0;
}

/* ---- foreign keys ------------------------------------------------------- */

static int is_pk(const struct db_table *t, const char *col)
{
    const struct db_column *c = schema_column(t, col);

    return c && c->pk > 0;
}

/* The column a foreign key points at: its `to`, or the referenced
** table's (first) primary key column. */
static const char *fk_target(const struct db_schema *s,
                             const struct db_fkey *fk)
{
    const struct db_table *t;
    int k;

    if (fk->to)
        return fk->to;
    t = schema_table(s, fk->table);
    for (k = 0; t && k < t->ncols; k++)
        if (t->cols[k].pk == 1)
            return t->cols[k].name;
    return NULL;
}

/* Whether from.fcol -> to.tcol is a declared foreign key. */
static int fk_is(const struct db_schema *s, const struct db_table *from,
                 const char *fcol, const struct db_table *to,
                 const char *tcol)
{
    const char *target;
    int k;

    for (k = 0; k < from->nfks; k++) {
        const struct db_fkey *fk = &from->fks[k];
        if (strcasecmp(fk->from, fcol) != 0 ||
            strcasecmp(fk->table, schema_qname(to)) != 0)
            continue;
        target = fk_target(s, fk);
        if (target ? strcasecmp(target, tcol) == 0 : is_pk(to, tcol))
            return 1;
    }
    return 0;
}

/* Append "t.column" as a message to the model names it (schema.h). */
static void say_column(struct buf *b, const struct db_schema *s,
                       const struct db_table *t, const char *column)
{
    schema_say_table(b, s, t);
    buf_putc(b, '.');
    schema_say_name(b, s, column);
}

/* Append "table.column" for a table named as schema_qname() names it. */
static void say_qcolumn(struct buf *b, const struct db_schema *s,
                        const char *qname, const char *column)
{
    schema_say_qname(b, s, qname);
    buf_putc(b, '.');
    schema_say_name(b, s, column);
}

/* End a hint's sentence with the tables of s (at most 6, not skip) that
** have a column named column: " (column is<also> a column of t1, t2). ",
** or ". " when none has. */
static void say_holders(struct buf *b, const struct db_schema *s,
                        const char *column, const struct db_table *skip,
                        const char *also)
{
    int k, n = 0;

    for (k = 0; k < s->ntables && n < 6; k++) {
        if (&s->tables[k] == skip || !schema_column(&s->tables[k], column))
            continue;
        if (n++ == 0) {
            buf_puts(b, " (");
            schema_say_name(b, s, column);
            buf_puts(b, also);
        } else {
            buf_puts(b, ", ");
        }
        schema_say_table(b, s, &s->tables[k]);
    }
    buf_puts(b, n ? "). " : ". ");
}

/* Append the foreign keys between a and b (either direction) as join
** conditions "a.x = b.y"; returns how many. */
static int put_fks(struct buf *b, const struct db_schema *s,
                   const struct db_table *x, const struct db_table *y)
{
    const struct db_table *from, *to;
    const char *target;
    int k, dir, n = 0;

    for (dir = 0; dir < 2; dir++) {
        from = dir ? y : x;
        to = dir ? x : y;
        if (dir && x == y)
            break;
        for (k = 0; k < from->nfks; k++) {
            const struct db_fkey *fk = &from->fks[k];
            if (strcasecmp(fk->table, schema_qname(to)) != 0)
                continue;
            target = fk_target(s, fk);
            if (!target)
                continue;
            buf_puts(b, n ? ", " : "");
            say_column(b, s, from, fk->from);
            buf_puts(b, " = ");
            say_column(b, s, to, target);
            n++;
        }
    }
    return n;
}

static int fk_between(const struct db_table *x, const struct db_table *y)
{
    int k;

    for (k = 0; k < x->nfks; k++)
        if (strcasecmp(x->fks[k].table, schema_qname(y)) == 0)
            return 1;
    for (k = 0; k < y->nfks; k++)
        if (strcasecmp(y->fks[k].table, schema_qname(x)) == 0)
            return 1;
    return 0;
}

/* Whether join j follows a declared foreign key, either way round. */
static int join_on_fk(const struct db_schema *s, const struct sqla_join *j)
{
    const struct db_table *x = schema_table(s, j->a.table);
    const struct db_table *y = schema_table(s, j->b.table);

    return x && y && (fk_is(s, x, j->a.column, y, j->b.column) ||
                      fk_is(s, y, j->b.column, x, j->a.column));
}

/*
** A join a.x = b.y is doubted only when the schema declares foreign keys
** between a and b, this pair is none of them (in either direction) and
** the query does not also join a and b on a key (then the equality is a
** filter: WHERE e.id = d.manager_id next to ON e.dept_id = d.id).
** Spider's schemas, like many real ones, leave keys out; without a
** declared key between the two tables the join is not judged (flagging
** joins on clearly different names there, e.g. Faculty.FacID =
** Student.Advisor, fired on 0.3% of Spider's gold, all of them right).
*/
static void check_joins(struct findings *fs, const struct db_schema *s,
                        const struct sqla *a)
{
    const struct db_table *x, *y;
    struct buf b;
    int k, m;

    for (k = 0; k < a->njoins; k++) {
        const struct sqla_join *j = &a->joins[k];
        x = schema_table(s, j->a.table);
        y = schema_table(s, j->b.table);
        if (!x || !y || !fk_between(x, y) || join_on_fk(s, j))
            continue;
        for (m = 0; m < a->njoins; m++) {
            const struct sqla_join *o = &a->joins[m];
            if (((strcasecmp(o->a.table, schema_qname(x)) == 0 &&
                  strcasecmp(o->b.table, schema_qname(y)) == 0) ||
                 (strcasecmp(o->a.table, schema_qname(y)) == 0 &&
                  strcasecmp(o->b.table, schema_qname(x)) == 0)) &&
                join_on_fk(s, o))
                break;
        }
        if (m < a->njoins)
            continue;
        buf_init(&b, 0);
        buf_puts(&b, "The join condition ");
        say_column(&b, s, x, j->a.column);
        buf_puts(&b, " = ");
        say_column(&b, s, y, j->b.column);
        buf_puts(&b, " does not follow a foreign key. ");
        schema_say_table(&b, s, x);
        buf_puts(&b, " and ");
        schema_say_table(&b, s, y);
        buf_puts(&b, " are linked by: ");
        put_fks(&b, s, x, y);
        buf_puts(&b, ". Join on that key unless the question really "
                     "relates these two columns.");
        add(fs, CHECK_JOIN_NOT_FK, &b);
    }
}

static void check_cross(struct findings *fs, const struct db_schema *s,
                        const struct sqla *a)
{
    const struct db_table *x, *y;
    char left[256];
    const char *sep;
    struct buf b;
    size_t n;
    int k;

    for (k = 0; k < a->ncross; k++) {
        sep = strstr(a->cross_pairs[k], " x ");
        if (!sep)
            continue;
        n = (size_t)(sep - a->cross_pairs[k]);
        if (n >= sizeof left)
            continue;
        memcpy(left, a->cross_pairs[k], n);
        left[n] = '\0';
        x = schema_table(s, left);
        y = schema_table(s, sep + 3);
        if (!x || !y)
            continue;
        buf_init(&b, 0);
        schema_say_table(&b, s, x);
        buf_puts(&b, " and ");
        schema_say_table(&b, s, y);
        buf_puts(&b, " are in the same FROM with no condition linking "
                     "them, so every row of one is paired with every row "
                     "of the other (a cross join). ");
        if (fk_between(x, y)) {
            buf_puts(&b, "Join them on their foreign key: ");
            put_fks(&b, s, x, y);
            buf_puts(&b, ".");
        } else {
            buf_puts(&b, "Add the join condition (ON ...) that relates "
                         "them, through the tables their foreign keys "
                         "point to if they share no key, or drop the table "
                         "the question does not need.");
        }
        add(fs, CHECK_CROSS_JOIN, &b);
    }
}

static void check_agg(struct findings *fs, const struct sqla *a)
{
    struct buf b;
    const char *dot;

    if (!a->agg_without_group || !a->bare_col || !a->agg_func)
        return;
    dot = strrchr(a->bare_col, '.');
    buf_init(&b, 0);
    buf_printf(&b, "The select list mixes the aggregate %s(...) with the "
                   "column %s, and the query has no GROUP BY: SQLite then "
                   "returns one row with an arbitrary %s. Add GROUP BY %s "
                   "for one row per %s, or drop the column.",
               a->agg_func, a->bare_col, dot ? dot + 1 : a->bare_col,
               dot ? dot + 1 : a->bare_col, dot ? dot + 1 : a->bare_col);
    add(fs, CHECK_AGG_NO_GROUP, &b);
}

/*
** An idle join (sqla.idle): a table joined on its foreign key to another
** table of the query, and named nowhere else in it. Each row of the other
** table then comes once per matching row of this one, and rows without
** one are dropped: the model's way of answering "all allergies and their
** types" through has_allergy. Silent when the key points the other way
** (joining the table a key points at keeps the rows as they are), and
** when the question names a word of the joined table's name that the
** other table's name lacks ("students who have an allergy" joins
** has_allergy on purpose).
*/
static void check_idle(struct findings *fs, const struct db_schema *s,
                       const struct sqla *a, const char *question)
{
    const struct db_table *x, *y;
    struct buf b, xs, ys, on;
    int k, named;

    for (k = 0; k < a->nidle; k++) {
        const struct sqla_join *j = &a->idle[k];
        x = schema_table(s, j->a.table);
        y = schema_table(s, j->b.table);
        if (!x || !y || x == y || !fk_is(s, x, j->a.column, y, j->b.column))
            continue;
        named = link_names(question, x->name, y->name);
        if (named != 0) {
            if (named < 0)
                fs->oom = 1;
            continue;
        }
        buf_init(&xs, 0);
        buf_init(&ys, 0);
        buf_init(&on, 0);
        schema_say_table(&xs, s, x);
        schema_say_table(&ys, s, y);
        say_column(&on, s, x, j->a.column);
        buf_puts(&on, " = ");
        say_column(&on, s, y, j->b.column);
        buf_init(&b, 0);
        if (buf_err(&xs) || buf_err(&ys) || buf_err(&on))
            b.err = BUF_ENOMEM; /* add() says so */
        else
            buf_printf(&b, "The query joins %s (on %s) but uses none of its "
                           "columns, so each %s row appears once per "
                           "matching %s row, and %s rows without one are "
                           "left out. Unless the question asks only for %s "
                           "rows that have a %s row, remove the join to %s.",
                       xs.data, on.data, ys.data, xs.data, ys.data, ys.data,
                       xs.data, xs.data);
        buf_free(&xs);
        buf_free(&ys);
        buf_free(&on);
        add(fs, CHECK_IDLE_JOIN, &b);
    }
}

/* ---- text values -------------------------------------------------------- */

/* A stored value in a hint, quoted as text_put_quoted() does; a long
** one (free text) cut to MAX_SHOWN bytes between characters, "..."
** inside the quotes saying so. */
static void put_shown(struct buf *b, const char *s)
{
    size_t len = strlen(s), n = text_cut(s, len, MAX_SHOWN), i;

    buf_putc(b, '\'');
    for (i = 0; i < n; i++) {
        if (s[i] == '\'')
            buf_putc(b, '\'');
        buf_putc(b, s[i]);
    }
    buf_puts(b, n < len ? "...'" : "'");
}

/* '%s%' for LIKE ... ESCAPE '\', s's own wildcards escaped. */
static void put_contains(struct buf *b, const char *s)
{
    buf_puts(b, "'%");
    for (; *s; s++) {
        if (*s == '%' || *s == '_' || *s == '\\')
            buf_putc(b, '\\');
        if (*s == '\'')
            buf_putc(b, '\'');
        buf_putc(b, *s);
    }
    buf_puts(b, "%' ESCAPE '\\'");
}

static int numeric(const char *s)
{
    char *end;

    if (!*s)
        return 0;
    (void)strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    return *end == '\0';
}

/* Run q (a buffer we built) through the guard; the result or NULL. */
static askdb_result *run(askdb_db *db, struct buf *q)
{
    askdb_result *r = NULL;
    struct db_err e;
    char *sql = buf_steal(q);

    if (!sql)
        return NULL;
    if (db_run(db, sql, &r, &e))
        r = NULL;
    free(sql);
    return r;
}

static int word_char(unsigned char c)
{
    return isalnum(c) || c == '_' || c >= 0x80;
}

/* Whether lit occurs in v (ASCII case-insensitively, as LIKE compares)
** starting at a word: "York" in "New York", "Uniform" in "Uniformed", not
** "RAY" in "TRAYWICK". */
static int at_word(const char *v, const char *lit)
{
    size_t n = strlen(lit), i;

    for (i = 0; v[i]; i++)
        if ((i == 0 || !word_char((unsigned char)v[i - 1])) &&
            strncasecmp(v + i, lit, n) == 0)
            return 1;
    return 0;
}

/* Whether text value v of a candidate row is worth showing for lit (all
** are, unless only those starting at a word count). Not a value that is
** not UTF-8: the model could not write it. */
static int shown_value(const askdb_value *v, const char *lit)
{
    return v->type == ASKDB_TEXT && text_valid(v->s, v->len) &&
           (!lit || at_word(v->s, lit));
}

/* Append up to max values of r's first column that shown_value() takes,
** as a list; returns how many. */
static int put_values(struct buf *b, const askdb_result *r, const char *lit,
                      int max)
{
    long i;
    int shown = 0;

    for (i = 0; r && i < r->nrows && shown < max; i++) {
        const askdb_value *v = &r->cells[i * r->ncols];
        if (!shown_value(v, lit))
            continue;
        if (b) {
            buf_puts(b, shown ? ", " : "");
            put_shown(b, v->s);
        }
        shown++;
    }
    return shown;
}

/*
** Whether reading all of t (a scan for a value, its distinct values) may
** be slow: its count stopped at the cap (rows_capped), or it has no count
** to go by. PostgreSQL, MariaDB and DuckDB count a table only up to 200
** rows and give a larger one its statistics' estimate (rows_estimated),
** never rows_capped: an estimate over the cap is as big, and a table
** (not a view) without even an estimate (-1) may be any size.
*/
static int too_big(askdb_db *db, const struct db_table *t)
{
    return t->rows_capped || (!t->is_view && t->rows < 0) ||
           (t->rows_estimated && t->rows > db_count_cap(db));
}

/* Begin q (a new buffer) as "SELECT DISTINCT "c" FROM t WHERE ". */
static void select_distinct(struct buf *q, const struct db_table *t,
                            const char *c)
{
    buf_init(q, MAX_QUERY);
    buf_puts(q, "SELECT DISTINCT ");
    text_put_quoted(q, c, '"');
    buf_puts(q, " FROM ");
    schema_put_quoted_table(q, t);
    buf_puts(q, " WHERE ");
}

/* Whether column c of table t holds the text v exactly: 1 or 0, -1 when
** the look failed (a time limit, an error). */
static int look(askdb_db *db, const struct db_table *t, const char *c,
                const char *v)
{
    askdb_result *r;
    struct buf q;
    int yes;

    buf_init(&q, MAX_QUERY);
    buf_puts(&q, "SELECT 1 FROM ");
    schema_put_quoted_table(&q, t);
    buf_puts(&q, " WHERE ");
    text_put_quoted(&q, c, '"');
    buf_puts(&q, " = ");
    text_put_quoted(&q, v, '\'');
    buf_puts(&q, " LIMIT 1");
    r = run(db, &q);
    yes = r ? r->nrows > 0 : -1;
    askdb_result_free(r);
    return yes;
}

/* Whether column c of table `table` (schema_qname()) holds the text v
** (exactly). A failed look, or no such table, is no evidence: 1. */
static int holds(askdb_db *db, const struct db_schema *s, const char *table,
                 const char *c, const char *v)
{
    const struct db_table *t = schema_table(s, table);

    return !t || look(db, t, c, v) != 0;
}

/* Whether the value index's match m is literal v as the engine compares
** them: the same bytes, or, when the index folded case or accents to
** match, a look into m's column finds v there (a column under a
** case-insensitive collation: MariaDB's default, SQLite's NOCASE, where
** 'gift_card' = 'GIFT_CARD'). */
static int same_to_engine(askdb_db *db, const struct db_schema *s,
                          const struct value_match *m, const char *v)
{
    const struct db_table *t;

    if (strcmp(m->value, v) == 0)
        return 1;
    t = schema_table(s, m->table);
    return t && look(db, t, m->column, v) == 1;
}

/* A column a missing value is stored in (both strings owned). */
struct place {
    char *table;                /* schema_qname() */
    char *column;
};

/* Add table.column to the list *places (n of them). */
static int add_place(struct place **places, int *n, const char *table,
                     const char *column)
{
    struct place *p = realloc(*places, (size_t)(*n + 1) * sizeof *p);

    if (!p)
        return -1;
    *places = p;
    p[*n].table = strdup(table);
    p[*n].column = strdup(column);
    if (!p[*n].table || !p[*n].column) {
        free(p[*n].table);
        free(p[*n].column);
        return -1;
    }
    ++*n;
    return 0;
}

static void free_places(struct place *places, int n)
{
    while (n > 0) {
        n--;
        free(places[n].table);
        free(places[n].column);
    }
    free(places);
}

/* Whether table t is one of the query's (a->tables) or one foreign key
** away from one of them, either way. */
static int near_query(const struct db_schema *s, const struct sqla *a,
                      const struct db_table *t)
{
    int i, k;

    for (i = 0; i < a->ntables; i++) {
        const struct db_table *u = schema_table(s, a->tables[i]);
        if (!u)
            continue;
        if (u == t)
            return 1;
        for (k = 0; k < t->nfks; k++)
            if (schema_table(s, t->fks[k].table) == u)
                return 1;
        for (k = 0; k < u->nfks; k++)
            if (schema_table(s, u->fks[k].table) == t)
                return 1;
    }
    return 0;
}

/*
** Without a value index: the columns of the query's tables and of the
** tables one foreign key from them that hold literal l exactly, by one
** small query each (SELECT 1 ... LIMIT 1, through the guard): at most
** MAX_LOOKS of them, not in views or tables too big to count
** (too_big()), text columns only on the engines that refuse to compare
** a number with text. Their "table.column" go to *places.
*/
static int look_around(askdb_db *db, const struct db_schema *s,
                       const struct sqla *a, const struct sqla_literal *l,
                       struct place **places, int *n)
{
    int sqlite = strcmp(db_dialect(db), "SQLite") == 0;
    int i, c, looks = 0;

    for (i = 0; i < s->ntables && looks < MAX_LOOKS && *n < 3; i++) {
        const struct db_table *t = &s->tables[i];
        const char *qn = schema_qname(t);
        if (t->is_view || too_big(db, t) || t->rows == 0 ||
            !near_query(s, a, t))
            continue;
        for (c = 0; c < t->ncols && looks < MAX_LOOKS && *n < 3; c++) {
            const struct db_column *col = &t->cols[c];
            if (!sqlite && !db_text_type(col->type))
                continue;
            if (strcasecmp(qn, l->col.table) == 0 &&
                strcasecmp(col->name, l->col.column) == 0)
                continue;
            looks++;
            if (look(db, t, col->name, l->literal) == 1 &&
                add_place(places, n, qn, col->name))
                return -1;
        }
    }
    return 0;
}

/*
** Whether literal l, compared with = or IN and absent from its column,
** is stored exactly in other columns: those the value index vi finds, or
** without one those look_around() finds in the query's tables and their
** neighbours. If so one sentence for the repair is appended to b ("'X'
** is not a value of t.c; it is stored in u.d, v.e. ") and 1 returned; 0
** when not, -1 when out of memory. absent: the caller has just seen l's
** own column lack it (check_literal()), which is then not read again.
*/
static int say_elsewhere(askdb_db *db, const struct db_schema *s,
                         struct vindex *vi, const struct sqla *a,
                         const struct sqla_literal *l, int absent,
                         struct buf *b)
{
    struct value_match *m = NULL;
    struct place *places = NULL;
    struct buf q;
    int k, nm = 0, n = 0, rc = 0;

    if (strcmp(l->op, "=") != 0 && strcmp(l->op, "IN") != 0)
        return 0;
    if (numeric(l->literal) || strlen(l->literal) > 200 ||
        strlen(l->literal) < 2)
        return 0;
    if (!vi) {
        const struct db_table *t = schema_table(s, l->col.table);
        /* Its own column first, read whole when the value is not there:
        ** not on a table too big for that (once per value). */
        if (t && !too_big(db, t) &&
            (absent ||
             !holds(db, s, l->col.table, l->col.column, l->literal)))
            rc = look_around(db, s, a, l, &places, &n);
    } else {
        /* The value as a quoted phrase: the index's exact look-up. */
        buf_init(&q, 0);
        buf_putc(&q, '"');
        buf_puts(&q, l->literal);
        buf_putc(&q, '"');
        if (buf_err(&q) || vindex_match(vi, q.data, 8, &m, &nm)) {
            rc = buf_err(&q) ? -1 : 0;
            buf_free(&q);
            return rc;
        }
        buf_free(&q);
        for (k = 0; k < nm && rc == 0; k++) {
            if (!m[k].exact || m[k].partial ||
                !same_to_engine(db, s, &m[k], l->literal))
                continue;
            if (strcasecmp(m[k].table, l->col.table) == 0 &&
                strcasecmp(m[k].column, l->col.column) == 0) {
                free_places(places, n);
                places = NULL;
                n = 0;  /* it is there after all: not this note's case */
                break;
            }
            rc = add_place(&places, &n, m[k].table, m[k].column);
        }
        value_matches_free(m, nm);
        if (rc == 0 && n > 0 && !absent &&
            holds(db, s, l->col.table, l->col.column, l->literal)) {
            free_places(places, n);
            places = NULL;
            n = 0;
        }
    }
    if (rc == 0 && n > 0) {
        buf_putc(b, '\'');
        buf_puts(b, l->literal);
        buf_puts(b, "' is not a value of ");
        say_qcolumn(b, s, l->col.table, l->col.column);
        buf_puts(b, "; it is stored in ");
        for (k = 0; k < n; k++) {
            buf_puts(b, k ? ", " : "");
            say_qcolumn(b, s, places[k].table, places[k].column);
        }
        buf_puts(b, ". ");
    }
    free_places(places, n);
    if (rc < 0 || buf_err(b))
        return -1;
    return n > 0;
}

/*
** Text value l, compared with = or IN, is not in its column t.c, and no
** other spelling of it is (check_literal()). The result still has rows
** (a count of 0, the rows of the other side of a NOT IN), so no repair
** looks for the value as one of an empty result does. Said when there is
** evidence of another reading: it is stored exactly in another column,
** where the value index or look_around() finds it
** (CHECK_VALUE_ELSEWHERE: a name compared with a code
** column, 'American Airlines' in routes.airline that is in
** airlines.name), or the column holds so few distinct texts that all can
** be shown (CHECK_LITERAL_MISSING: 'Japan' against country codes that
** include 'JP'). Silent otherwise: the question may ask about a value
** that is simply not there.
*/
static void literal_nowhere(struct findings *fs, askdb_db *db,
                            const struct db_schema *s, struct vindex *vi,
                            const struct sqla *a, const struct db_table *t,
                            const struct sqla_literal *l)
{
    int sqlite = strcmp(db_dialect(db), "SQLite") == 0, rc;
    askdb_result *r;
    struct buf q, b;

    buf_init(&b, 0);
    rc = say_elsewhere(db, s, vi, a, l, 1, &b);
    if (rc > 0) {
        buf_puts(&b, "Compare the column that stores it, joining its "
                     "table if the query lacks it.");
        add(fs, CHECK_VALUE_ELSEWHERE, &b);
        return;
    }
    buf_free(&b);
    if (rc < 0) {
        fs->oom = 1;
        return;
    }
    if (too_big(db, t) || strcmp(l->op, "=") != 0 ||
        strlen(l->literal) > 200)
        return;
    select_distinct(&q, t, l->col.column);
    text_put_quoted(&q, l->col.column, '"');
    buf_puts(&q, sqlite ? " IS NOT NULL AND typeof(" : " IS NOT NULL");
    if (sqlite) {
        text_put_quoted(&q, l->col.column, '"');
        buf_puts(&q, ") = 'text'");
    }
    buf_puts(&q, " ORDER BY 1");
    buf_printf(&q, " LIMIT %d", MAX_FEW + 1);
    r = run(db, &q);
    if (r && r->nrows >= 1 && r->nrows <= MAX_FEW &&
        put_values(NULL, r, NULL, MAX_FEW) == r->nrows) {
        buf_init(&b, 0);
        say_column(&b, s, t, l->col.column);
        buf_puts(&b, " has no value ");
        text_put_quoted(&b, l->literal, '\'');
        buf_printf(&b, "; its %ld values are ", r->nrows);
        put_values(&b, r, NULL, MAX_FEW);
        buf_puts(&b, ". Compare with the one the question means, exactly "
                     "as stored; keep the query if it means none of "
                     "them.");
        add(fs, CHECK_LITERAL_MISSING, &b);
    }
    askdb_result_free(r);
}

/*
** One comparison of t.c with a text value: silent when the value occurs
** (as the comparison itself would find it), when it is a number, or when
** nothing similar is stored (the question may ask about a value that is
** simply not there). Otherwise the hint names the stored spellings: the
** same text in another case, else values containing it from the start of
** a word (3+ characters, not on tables too big to scan).
*/
static void check_literal(struct findings *fs, askdb_db *db,
                          const struct db_schema *s, struct vindex *vi,
                          const struct sqla *a, const struct sqla_literal *l)
{
    const struct db_table *t = schema_table(s, l->col.table);
    const struct db_column *c;
    int like = strstr(l->op, "LIKE") != NULL, contains = 0;
    int sqlite = strcmp(db_dialect(db), "SQLite") == 0;
    askdb_result *r;
    struct buf q, b;

    if (!t || !l->col.column || numeric(l->literal) ||
        strlen(l->literal) > 200)
        return;
    /* The other engines refuse to compare a number or a date with text,
    ** and their LIKE wants text: only text columns are looked into. */
    c = schema_column(t, l->col.column);
    if (!sqlite && (!c || !db_text_type(c->type)))
        return;
    buf_init(&q, MAX_QUERY);
    buf_puts(&q, "SELECT 1 FROM ");
    schema_put_quoted_table(&q, t);
    buf_puts(&q, " WHERE ");
    text_put_quoted(&q, l->col.column, '"');
    buf_puts(&q, like ? " LIKE " : " = ");
    text_put_quoted(&q, l->literal, '\'');
    buf_puts(&q, " LIMIT 1");
    r = run(db, &q);
    if (!r || r->nrows > 0) {
        askdb_result_free(r);
        return;
    }
    askdb_result_free(r);
    r = NULL;
    if (!like) {
        select_distinct(&q, t, l->col.column);
        if (sqlite) {
            text_put_quoted(&q, l->col.column, '"');
            buf_puts(&q, " = ");
            text_put_quoted(&q, l->literal, '\'');
            buf_printf(&q, " COLLATE NOCASE LIMIT %d", MAX_ALTERNATIVES);
        } else { /* lower() on both sides: every engine has it */
            buf_puts(&q, "lower(");
            text_put_quoted(&q, l->col.column, '"');
            buf_puts(&q, ") = lower(");
            text_put_quoted(&q, l->literal, '\'');
            buf_printf(&q, ") LIMIT %d", MAX_ALTERNATIVES);
        }
        r = run(db, &q);
    }
    if (put_values(NULL, r, NULL, MAX_ALTERNATIVES) == 0 &&
        strlen(l->literal) >= 3 && !too_big(db, t)) {
        askdb_result_free(r);
        select_distinct(&q, t, l->col.column);
        if (sqlite) {
            buf_puts(&q, "typeof(");
            text_put_quoted(&q, l->col.column, '"');
            buf_puts(&q, ") = 'text' AND ");
            text_put_quoted(&q, l->col.column, '"');
            buf_puts(&q, " LIKE ");
        } else { /* a text column (see below); LIKE by lower case */
            buf_puts(&q, "lower(");
            text_put_quoted(&q, l->col.column, '"');
            buf_puts(&q, ") LIKE lower(");
        }
        put_contains(&q, l->literal);
        if (!sqlite)
            buf_putc(&q, ')');
        buf_printf(&q, " LIMIT %d", MAX_CANDIDATES);
        r = run(db, &q);
        contains = 1;
    }
    if (put_values(NULL, r, contains ? l->literal : NULL,
                   MAX_ALTERNATIVES) > 0) {
        buf_init(&b, 0);
        say_column(&b, s, t, l->col.column);
        buf_puts(&b, " has no value ");
        text_put_quoted(&b, l->literal, '\'');
        buf_puts(&b, contains ? "; values containing it: " : "; it has ");
        put_values(&b, r, contains ? l->literal : NULL, MAX_ALTERNATIVES);
        buf_puts(&b, ". Compare with the value exactly as stored.");
        add(fs, CHECK_LITERAL_MISSING, &b);
    } else if (!like) {
        literal_nowhere(fs, db, s, vi, a, t, l);
    }
    askdb_result_free(r);
}

int check_value_elsewhere(askdb_db *db, const struct db_schema *s,
                          struct vindex *vi, const char *sql, struct buf *b)
{
    struct sqla a;
    int i, said = 0, rc;

    if (!sql)
        return 0;
    rc = sqla_analyze(sql, s, &a);
    if (rc < 0) {
        sqla_free(&a);
        return -1;
    }
    for (i = 0; i < a.nlits && i < MAX_LIT_CHECKS && said < 3; i++) {
        rc = say_elsewhere(db, s, vi, &a, &a.lits[i], 0, b);
        if (rc < 0) {
            said = -1;  /* out of memory: no count of the notes so far */
            break;
        }
        said += rc;
    }
    sqla_free(&a);
    return buf_err(b) ? -1 : said;
}

/* What one of the checks below says of an analysis: its sentences
** appended to b (each ending with a blank); how many. */
typedef int sayer(struct buf *b, const struct db_schema *s,
                  const struct sqla *a);

/* What say says of sql over s, appended to b: how many sentences (0 also
** for SQL that cannot be analyzed), -1 when out of memory. */
static int say_of_sql(const struct db_schema *s, const char *sql,
                      struct buf *b, sayer *say)
{
    struct sqla a;
    int rc, n = 0;

    rc = sqla_analyze(sql, s, &a);
    if (rc == 0)
        n = say(b, s, &a);
    sqla_free(&a);
    if (rc < 0 || buf_err(b))
        return -1;
    return n;
}

/* What say says of a, when it says anything, as a finding of kind k. */
static void check_said(struct findings *fs, const struct db_schema *s,
                       const struct sqla *a, sayer *say, enum check_kind k)
{
    struct buf b;

    buf_init(&b, 0);
    if (say(&b, s, a) == 0) {
        buf_free(&b);
        return;
    }
    if (!buf_err(&b) && b.len > 0 && b.data[b.len - 1] == ' ')
        b.data[--b.len] = '\0';
    add(fs, k, &b);
}

/*
** A compared subquery's select-list column that its own tables lack
** (sqla.outer): SQL reads it from the outer query, so in id NOT IN
** (SELECT shop_id FROM members) each shop is compared with its own id
** and the NOT IN is false for every row (an IN, true). Spider's gold
** queries never do this; the model does when it picks a table that
** lacks the column (bench/check_false_alarms.c). The hint names the
** tables that have a column of that name.
*/
static void say_outer(struct buf *b, const struct db_schema *s,
                      const struct sqla_outer *o)
{
    int k;

    buf_puts(b, "In the subquery over ");
    for (k = 0; k < o->nfrom; k++) {
        buf_puts(b, k ? ", " : "");
        schema_say_qname(b, s, o->from[k]);
    }
    buf_puts(b, ", ");
    schema_say_name(b, s, o->col.column);
    buf_puts(b, o->nfrom > 1 ? " is not a column of its tables: it is the "
                             : " is not a column of its table: it is the ");
    buf_puts(b, "outer query's ");
    say_qcolumn(b, s, o->col.table, o->col.column);
    buf_puts(b, ", so each outer row is compared with its own value. "
                "Select a column of the subquery's own tables, joining "
                "the table that holds the value if it is not one of them");
    say_holders(b, s, o->col.column, NULL, " is a column of ");
}

/* say_outer() for each of the first 3 outer reads of a; how many. */
static int say_outers(struct buf *b, const struct db_schema *s,
                      const struct sqla *a)
{
    int k;

    for (k = 0; k < a->nouter && k < 3; k++)
        say_outer(b, s, &a->outer[k]);
    return k;
}

int check_outer_refs(const struct db_schema *s, const char *sql,
                     struct buf *b)
{
    return say_of_sql(s, sql, b, say_outers);
}

/*
** A column compared with itself (sqla.self): ON t3.id = t3.id links t3 to
** nothing (each of its rows meets every row of the others), and WHERE
** c.balance > c.balance is never true. Of Spider's 6,354 gold queries
** only activity_1's 8 do it, all one mistake of Spider's own
** (bench/check_false_alarms.c); the model does when it names a table
** that lacks the column it means. The hint names the other tables that
** have a column of that name.
*/
static void say_self(struct buf *b, const struct db_schema *s,
                     const struct sqla_self *o)
{
    buf_puts(b, o->on ? "ON " : "");
    buf_puts(b, o->text);
    buf_puts(b, " compares ");
    say_qcolumn(b, s, o->col.table, o->col.column);
    buf_puts(b, o->on ? " with itself, so the join links it to no other "
                        "table: each of its rows meets every row of the "
                        "others."
                      : " with itself, the same value on both sides in "
                        "every row.");
    buf_puts(b, " Compare it with the column of another table that the "
                "question means, joining that table if the query lacks it");
    say_holders(b, s, o->col.column, schema_table(s, o->col.table),
                " is also a column of ");
}

/* say_self() for each of the first 3 of a's; how many. */
static int say_selfs(struct buf *b, const struct db_schema *s,
                     const struct sqla *a)
{
    int k;

    for (k = 0; k < a->nself && k < 3; k++)
        say_self(b, s, &a->self[k]);
    return k;
}

int check_self_compares(const struct db_schema *s, const char *sql,
                        struct buf *b)
{
    return say_of_sql(s, sql, b, say_selfs);
}

int check_before(askdb_db *db, const struct db_schema *s,
                 struct vindex *vi, const char *question, const char *sql,
                 struct check_finding **out, int *n)
{
    struct findings fs = {NULL, 0, 0};
    struct sqla a;
    int rc, k;

    *out = NULL;
    *n = 0;
    rc = sqla_analyze(sql, s, &a);
    if (rc < 0) {
        sqla_free(&a);
        return -1;
    }
    if (rc == 0) {
        check_said(&fs, s, &a, say_outers, CHECK_OUTER_REF);
        check_said(&fs, s, &a, say_selfs, CHECK_SELF_COMPARE);
        check_joins(&fs, s, &a);
        check_cross(&fs, s, &a);
        check_agg(&fs, &a);
        check_idle(&fs, s, &a, question);
        for (k = 0; db && k < a.nlits && k < MAX_LIT_CHECKS; k++)
            check_literal(&fs, db, s, vi, &a, &a.lits[k]);
    }
    sqla_free(&a);
    return finish(&fs, out, n);
}

/* ---- after execution ---------------------------------------------------- */

/*
** Columns NULL in every row. A NULL everywhere usually means the wrong
** column, a LEFT JOIN that matched nothing or an aggregate over no rows;
** but a table may hold no values in a column at all, so the hint leaves
** the model the choice to keep the query. For SELECT * only a result that
** is NULL throughout counts (the star takes the empty columns along).
*/
static void check_nulls(struct findings *fs, const askdb_result *r,
                        int star)
{
    struct buf names, h;
    long i;
    int c, n = 0;

    if (!r || r->nrows < 1)
        return;
    buf_init(&names, 0);
    for (c = 0; c < r->ncols; c++) {
        for (i = 0; i < r->nrows; i++)
            if (r->cells[i * r->ncols + c].type != ASKDB_NULL)
                break;
        if (i < r->nrows)
            continue;
        buf_puts(&names, n ? ", " : "");
        text_put_quoted(&names, r->cols[c] ? r->cols[c] : "?", '\'');
        n++;
    }
    if (!n || (star && n < r->ncols)) {
        buf_free(&names);
        return;
    }
    buf_init(&h, 0);
    if (n == r->ncols)
        buf_printf(&h, "Every value of the result is NULL (%ld row%s). ",
                   r->nrows, r->nrows == 1 ? "" : "s");
    else
        buf_printf(&h, "Result column%s %s %s NULL in every row. ",
                   n == 1 ? "" : "s", names.data ? names.data : "",
                   n == 1 ? "is" : "are");
    buf_free(&names);
    buf_puts(&h, "Check that the column is the one the question asks for, "
                 "that the join matches rows (a LEFT JOIN without a match "
                 "gives NULLs) and that an aggregate is not taken over no "
                 "rows (SUM, AVG, MIN and MAX of nothing are NULL). If the "
                 "data simply holds no value there, repeat the same "
                 "query.");
    add(fs, CHECK_ALL_NULL, &h);
}

/* The question in lower case, blanks and punctuation as single spaces,
** with a space at both ends, so phrases match as whole words. */
static char *normalize(const char *q)
{
    size_t n = strlen(q), i, k = 0;
    char *s = malloc(n + 3);

    if (!s)
        return NULL;
    s[k++] = ' ';
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)q[i];
        char o = isalnum(c) || c >= 0x80 || c == '\'' ? (char)tolower(c)
                                                       : ' ';
        if (o == ' ' && s[k - 1] == ' ')
            continue;
        s[k++] = o;
    }
    if (s[k - 1] != ' ')
        s[k++] = ' ';
    s[k] = '\0';
    return s;
}

static int has(const char *s, const char *const *phrases)
{
    int k;

    for (k = 0; phrases[k]; k++)
        if (strstr(s, phrases[k]))
            return 1;
    return 0;
}

static int starts(const char *s, const char *const *phrases)
{
    int k;

    for (k = 0; phrases[k]; k++)
        if (strncmp(s, phrases[k], strlen(phrases[k])) == 0)
            return 1;
    return 0;
}

/* Question openings (space-delimited, see normalize()) that ask for one
** value. Only openings: "What are the names ... and how many ..." asks
** for rows. */
static const char *const one_value[] = {
    " how many ", " what is the total ", " what is the average ",
    " what is the number of ", " what's the total ", " what's the average ",
    " what's the number of ", " count the number of ",
    " find the number of ", " find the total number ", " what is the sum ",
    " give the total number ", " tell me how many ",
    " return the number of ", " give the number of ", NULL
};

/* Words that ask for one value per group, for several values, or for
** rows in an order. */
static const char *const many[] = {
    " each ", " every ", " per ", " respectively ", " grouped by ",
    " broken down by ", " top ", " sorted ", " ascending ", " descending ",
    " order of ", " and how many ", " and what ", " and which ",
    " and list ", " along with ", NULL
};

static const char *const superlatives[] = {
    "most ", "highest ", "largest ", "lowest ", "least ", "fewest ",
    "smallest ", "greatest ", "biggest ", NULL
};

/* "different" other than in "how many different": one value per kind. */
static int per_kind(const char *q)
{
    const char *p = q;

    while ((p = strstr(p, " different ")) != NULL) {
        if (!((p - q >= 9 && strncmp(p - 9, " how many", 9) == 0) ||
              (p - q >= 10 && strncmp(p - 10, " number of", 10) == 0)))
            return 1;
        p++;
    }
    return 0;
}

/* "which <one to three words> has the <superlative>" or "who has the
** <superlative>": the one item with the most of something. */
static int asks_top_one(const char *q)
{
    const char *p, *v;
    int words = 0;

    if (strncmp(q, " who has the ", 13) == 0 ||
        strncmp(q, " who had the ", 13) == 0)
        return starts(q + 13, superlatives);
    if (strncmp(q, " which ", 7) != 0)
        return 0;
    for (p = q + 6; *p; p++) {
        if (*p != ' ')
            continue;
        if (strncmp(p, " has the ", 9) == 0 ||
            strncmp(p, " had the ", 9) == 0) {
            v = p + 9;
            return words >= 1 && words <= 3 && starts(v, superlatives);
        }
        if (++words > 3)
            return 0;
    }
    return 0;
}

/* Number of times phrase occurs in s. */
static int count(const char *s, const char *phrase)
{
    int n = 0;

    while ((s = strstr(s, phrase)) != NULL) {
        n++;
        s++;
    }
    return n;
}

static const char *const list_start[] = {
    " list ", " show ", " what are the names ", " give me the names ",
    " find the names ", " return the names ", " names of all ", NULL
};

static const char *const counting[] = {
    " number ", " numbers ", " count ", " how many ", " total ", " average ",
    " sum ", " maximum ", " minimum ", " max ", " min ", " most ", " least ",
    " mean ", NULL
};

static int is_aggregate_name(const char *col)
{
    static const char *const prefixes[] = {
        "count(", "sum(", "avg(", "total(", NULL
    };
    int k;

    for (k = 0; col && prefixes[k]; k++)
        if (strncasecmp(col, prefixes[k], strlen(prefixes[k])) == 0)
            return 1;
    return 0;
}

/*
** The number of rows against the question's wording: a question that
** opens asking for one value or that asks for the one item with the most
** of something, and several rows; or a list asked for and one aggregate
** (count(...), sum(...) by the column's name) returned. Questions with
** words of grouping, ordering or several asks are left alone.
*/
static void check_shape(struct findings *fs, const char *question,
                        const askdb_result *r)
{
    struct buf b;
    char *q;

    if (!question || !r || r->nrows < 1)
        return;
    q = normalize(question);
    if (!q) {
        fs->oom = 1;
        return;
    }
    buf_init(&b, 0);
    if (r->nrows > 1 && (has(q, many) || per_kind(q) ||
                         count(q, " how many ") > 1)) {
        buf_free(&b);
    } else if (r->nrows > 1 && starts(q, one_value)) {
        buf_printf(&b, "The question asks for a single value, but the "
                       "query returned %ld rows. Compute it in one row over "
                       "all matching rows (e.g. COUNT(*) or COUNT(DISTINCT "
                       "...) without GROUP BY) unless the question asks "
                       "for one value per group.", r->nrows);
        add(fs, CHECK_SHAPE, &b);
    } else if (r->nrows > 1 && asks_top_one(q)) {
        buf_printf(&b, "The question asks for the one item with the most "
                       "(or least), but the query returned %ld rows. Order "
                       "by the measure and keep the first row (ORDER BY ... "
                       "DESC LIMIT 1).", r->nrows);
        add(fs, CHECK_SHAPE, &b);
    } else if (r->nrows == 1 && r->ncols == 1 &&
               is_aggregate_name(r->cols[0]) && has(q, list_start) &&
               !has(q, counting)) {
        buf_printf(&b, "The question asks for a list, but the query "
                       "returned a single aggregate (%s). Select the rows "
                       "themselves instead of aggregating them.",
                   r->cols[0]);
        add(fs, CHECK_SHAPE, &b);
    } else {
        buf_free(&b);
    }
    free(q);
}

int check_after(const char *question, const char *sql, const askdb_result *r,
                struct check_finding **out, int *n)
{
    struct findings fs = {NULL, 0, 0};
    struct sqla a;
    int star = 0;

    *out = NULL;
    *n = 0;
    if (sql) {
        if (sqla_analyze(sql, NULL, &a) < 0) {
            sqla_free(&a);
            return -1;
        }
        star = a.select_star;
        sqla_free(&a);
    }
    check_nulls(&fs, r, star);
    check_shape(&fs, question, r);
    return finish(&fs, out, n);
}

void check_findings_free(struct check_finding *f, int n)
{
    int k;

    for (k = 0; f && k < n; k++)
        free(f[k].hint);
    free(f);
}

void check_drop_kind(struct check_finding *f, int *n, enum check_kind k)
{
    int i, m = 0;

    for (i = 0; i < *n; i++) {
        if (f[i].kind == k) {
            free(f[i].hint);
            continue;
        }
        f[m++] = f[i];
    }
    *n = m;
}

const char *check_kind_str(enum check_kind k)
{
    switch (k) {
    case CHECK_JOIN_NOT_FK: return "join_not_fk";
    case CHECK_CROSS_JOIN: return "cross_join";
    case CHECK_AGG_NO_GROUP: return "agg_no_group";
    case CHECK_LITERAL_MISSING: return "literal_missing";
    case CHECK_ALL_NULL: return "all_null";
    case CHECK_SHAPE: return "shape";
    case CHECK_IDLE_JOIN: return "idle_join";
    case CHECK_VALUE_ELSEWHERE: return "value_elsewhere";
    case CHECK_OUTER_REF: return "outer_ref";
    case CHECK_SELF_COMPARE: return "self_compare";
    }
    return "unknown";
}
