/* analyze.c - a tolerant reading of one query: FROM items, joins,
** aggregates and literal comparisons, resolved against the schema. */
#include "sql/analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/text.h"
#include "db/schema.h"
#include "sql/extract.h"

/*
** Design
** ======
** The text is cut into tokens by sqlx_token() (blanks and comments
** dropped), and the parentheses are matched once, up front. A recursive
** descent then reads statements (WITH, compound SELECT), SELECT cores
** (select list, FROM, WHERE, GROUP BY, HAVING) and expressions. Every
** parenthesized part is parsed within its matching parenthesis and the
** reader resumes after it whatever happened inside, so an unknown
** construct costs at most its own parentheses; a clause it does not know
** is read as an expression, which only looks for column names,
** comparisons and subqueries.
**
** Each SELECT core is a level. Its FROM items (tref) carry their alias
** and, for a schema table, the schema's spelling of its name (a qualified
** sales.orders is the table of that namespace, or the one its name alone
** reaches: schema_table_in()); a derived table, a CTE or a table-valued
** function is opaque (its columns are not known). Tables are reported by
** schema_qname(), so two tables of one name in two schemas stay apart.
** Column references (ref) are collected with their level and their
** context (ctx): one per comparison group of WHERE and HAVING
** (split at each AND that does not close a BETWEEN and at each OR, outside
** function calls), one per ON clause, one for the select list and one for
** everything else. Comparisons are recorded by token position. Everything
** is resolved at the end, when all FROM clauses are known (a correlated
** subquery may name a table of an outer FROM that comes after it):
**   - a qualified name a.x finds the FROM item called (or aliased) a in
**     its level or the nearest enclosing one;
**   - a bare name x is the one schema table of the nearest level having a
**     column x; two such tables (ambiguous) or a level with opaque items
**     and none leave it unresolved.
** Two FROM items are linked when one context (a WHERE/HAVING group or an
** ON clause, including its subqueries) names columns of both; ON and
** USING link their item to the ones named, NATURAL and USING to the item
** before. Items of a level that stay in different groups are a cross join.
**
** Bounds (untrusted text): MAX_SQL bytes, MAX_TOKENS tokens, MAX_PAREN
** open parentheses at once, MAX_DEPTH nested statements, MAX_NAME bytes
** per name and MAX_LITERAL per literal (longer ones are not collected).
*/

#define MAX_SQL 100000
#define MAX_TOKENS 20000
#define MAX_PAREN 200
#define MAX_DEPTH 40
#define MAX_NAME 256
#define MAX_LITERAL 400

struct tok {
    const char *p;
    int n;
    int kind;            /* SQLX_* */
    int match;           /* index of the matching parenthesis, -1 none */
    int ref;             /* ref that starts at this token, -1 none */
};

struct tref {            /* one FROM item */
    int level;
    const struct db_table *tb; /* schema table (borrowed), NULL: opaque */
    char *written;       /* name as written without its schema, NULL for
                            a subquery */
    char *alias;
    int uf;              /* union-find parent */
};

struct level {           /* one SELECT core */
    int parent;          /* enclosing level, -1 for none */
    int parent_ctx;      /* context of the parent this level sits in */
    int opaque;          /* has a FROM item whose columns are unknown */
    int has_group;
    int star;            /* select list has * or t.* */
    int nagg;
    int minmax_only;     /* every aggregate is a one-argument min/max */
    int from_end;        /* token after its FROM clause, -1 for none */
    int member;          /* a subquery on the right of IN or of a
                            comparison: its select list is compared */
    char agg[16];        /* first aggregate's name */
};

struct ctx {
    int level;
    int linking;         /* a WHERE/HAVING group or an ON clause */
    int anchor;          /* the FROM item of an ON clause, -1 */
    int first;           /* first FROM item named in it, -1 */
    int unresolved;      /* names a column that did not resolve */
};

enum { REF_BARE = 1, REF_DQ = 2 };

struct ref {
    int level;
    int ctx;
    int flags;           /* REF_* */
    char *qual;
    char *col;
    int tref;            /* resolved FROM item, -1 */
    int qtok;            /* token of the qualifier, -1 when bare */
    const char *table;   /* resolved (borrowed from the schema) */
    const char *column;
};

struct cmp {
    int left, right;     /* first tokens: the column, the other side */
    char op[9];
};

struct parser {
    const struct db_schema *s;
    struct tok *t;
    int nt;
    int i;
    int depth;
    int bad;             /* 1 = not readable (bound or garbage) */
    int oom;
    struct level *lv;
    int nlv, caplv;
    struct tref *tr;
    int ntr, captr;
    struct ref *rf;
    int nrf, caprf;
    struct ctx *cx;
    int ncx, capcx;
    struct cmp *cm;
    int ncm, capcm;
    char **ctes;
    int ncte, capcte;
    int top;             /* first SELECT core of the statement, -1 */
};

/* ---- small helpers ------------------------------------------------------ */

/* Make room for element n of arr (elements of sz bytes, capacity *cap):
** returns the array, moved or not, or NULL when out of memory (arr is
** then left as it was). */
static void *grow(struct parser *p, void *arr, int n, int *cap, size_t sz)
{
    void *q;
    int nc;

    if (n < *cap)
        return arr;
    if (p->oom)
        return NULL;
    nc = *cap ? *cap * 2 : 16;
    q = realloc(arr, (size_t)nc * sz);
    if (!q) {
        p->oom = 1;
        return NULL;
    }
    *cap = nc;
    return q;
}

static int word_is(const struct tok *t, const char *w)
{
    return t->kind == SQLX_WORD && (size_t)t->n == strlen(w) &&
           strncasecmp(t->p, w, (size_t)t->n) == 0;
}

static int kw(const struct parser *p, int i, const char *w)
{
    return i >= 0 && i < p->nt && word_is(&p->t[i], w);
}

static int punct(const struct parser *p, int i, char c)
{
    return i >= 0 && i < p->nt && p->t[i].kind == SQLX_PUNCT &&
           p->t[i].p[0] == c;
}

static int in_list(const struct tok *t, const char *const *list)
{
    int k;

    if (t->kind != SQLX_WORD)
        return 0;
    for (k = 0; list[k]; k++)
        if (word_is(t, list[k]))
            return 1;
    return 0;
}

/* Words that are never a column name where an operand may stand. */
static const char *const expr_words[] = {
    "all", "and", "as", "asc", "between", "by", "case", "cast", "collate",
    "current_date", "current_time", "current_timestamp", "desc",
    "distinct", "else", "end", "escape", "except", "exists", "false",
    "filter", "from", "glob", "group", "having", "in", "intersect", "is",
    "isnull", "like", "limit", "not", "notnull", "null", "nulls", "offset",
    "on", "or", "order", "over", "partition", "regexp", "select", "then",
    "true", "union", "using", "when", "where", "with", NULL
};

/* Words that end a FROM item: not an alias. */
static const char *const from_words[] = {
    "on", "using", "join", "left", "right", "full", "inner", "cross",
    "natural", "outer", "where", "group", "having", "window", "order",
    "limit", "union", "intersect", "except", "indexed", "not", "as",
    "select", "from", "values", "offset", NULL
};

/* Clause words that end an expression of a SELECT core. */
static const char *const clause_words[] = {
    "from", "where", "group", "having", "window", "order", "limit",
    "union", "intersect", "except", NULL
};

/* And, inside an ON clause, the start of the next FROM item. */
static const char *const join_words[] = {
    "join", "left", "right", "full", "inner", "cross", "natural", NULL
};

static const char *const agg_words[] = {
    "count", "sum", "avg", "min", "max", "group_concat", "total",
    "string_agg", NULL
};

/* A name token (word or quoted identifier) as a malloc()ed string without
** its quotes; NULL when out of memory or over MAX_NAME. */
static char *tok_text(struct parser *p, const struct tok *t)
{
    const char *s = t->p;
    int n = t->n, k, j = 0;
    char close = 0, *out;

    if (t->kind == SQLX_IDENT || t->kind == SQLX_STRING) {
        close = s[0] == '[' ? ']' : s[0];
        s++;
        n -= 2;
    }
    if (n < 0 || n > (t->kind == SQLX_STRING ? MAX_LITERAL : MAX_NAME))
        return NULL;
    out = malloc((size_t)n + 1);
    if (!out) {
        p->oom = 1;
        return NULL;
    }
    for (k = 0; k < n; k++) {
        out[j++] = s[k];
        if (close && close != ']' && s[k] == close && k + 1 < n &&
            s[k + 1] == close)
            k++;
    }
    out[j] = '\0';
    return out;
}

static int is_name(const struct parser *p, int i)
{
    return i >= 0 && i < p->nt &&
           ((p->t[i].kind == SQLX_WORD &&
             !in_list(&p->t[i], expr_words)) ||
            p->t[i].kind == SQLX_IDENT);
}

/* ---- tokens ------------------------------------------------------------- */

/* Cut sql into tokens and match parentheses. 0, -1 out of memory, 1 over
** a bound, an unterminated token or unbalanced parentheses. */
static int tokenize(struct parser *p, const char *sql)
{
    const char *q = sql;
    int stack[MAX_PAREN], sp = 0, cap = 0, kind;
    struct tok *nt;
    size_t n;

    if (strlen(sql) > MAX_SQL)
        return 1;
    while ((n = sqlx_token(q, &kind)) > 0) {
        if (kind == SQLX_UNTERMINATED)
            return 1;
        if (kind == SQLX_SPACE || kind == SQLX_COMMENT) {
            q += n;
            continue;
        }
        if (p->nt >= MAX_TOKENS)
            return 1;
        nt = grow(p, p->t, p->nt, &cap, sizeof *p->t);
        if (!nt)
            return -1;
        p->t = nt;
        p->t[p->nt].p = q;
        p->t[p->nt].n = (int)n;
        p->t[p->nt].kind = kind;
        p->t[p->nt].match = -1;
        p->t[p->nt].ref = -1;
        if (kind == SQLX_PUNCT && *q == '(') {
            if (sp == MAX_PAREN)
                return 1;
            stack[sp++] = p->nt;
        } else if (kind == SQLX_PUNCT && *q == ')') {
            if (sp == 0)
                return 1;
            sp--;
            p->t[p->nt].match = stack[sp];
            p->t[stack[sp]].match = p->nt;
        }
        p->nt++;
        q += n;
    }
    return sp ? 1 : 0; /* unbalanced parentheses */
}

/* ---- the model being built ---------------------------------------------- */

static int new_level(struct parser *p, int parent, int parent_ctx)
{
    struct level *l;

    l = grow(p, p->lv, p->nlv, &p->caplv, sizeof *p->lv);
    if (!l)
        return -1;
    p->lv = l;
    l = &p->lv[p->nlv];
    memset(l, 0, sizeof *l);
    l->parent = parent;
    l->parent_ctx = parent_ctx;
    l->minmax_only = 1;
    return p->nlv++;
}

static int new_ctx(struct parser *p, int level, int linking, int anchor)
{
    struct ctx *c;

    c = grow(p, p->cx, p->ncx, &p->capcx, sizeof *p->cx);
    if (!c)
        return -1;
    p->cx = c;
    c = &p->cx[p->ncx];
    c->level = level;
    c->linking = linking;
    c->anchor = anchor;
    c->first = -1;
    c->unresolved = 0;
    return p->ncx++;
}

/* Add a FROM item; written and alias are taken over. */
static int new_tref(struct parser *p, int level, const struct db_table *tb,
                    char *written, char *alias)
{
    struct tref *t;

    t = grow(p, p->tr, p->ntr, &p->captr, sizeof *p->tr);
    if (!t) {
        free(written);
        free(alias);
        return -1;
    }
    p->tr = t;
    t = &p->tr[p->ntr];
    t->level = level;
    t->tb = tb;
    t->written = written;
    t->alias = alias;
    t->uf = p->ntr;
    return p->ntr++;
}

/* Record the column reference written from token `first` to ci, with its
** qualifier at qi (-1 for none). */
static void add_ref(struct parser *p, int level, int ctx, int first, int qi,
                    int ci, int flags)
{
    struct ref *r;
    char *qual = NULL, *col;

    if (level < 0 || ctx < 0)
        return;
    r = grow(p, p->rf, p->nrf, &p->caprf, sizeof *p->rf);
    if (!r)
        return;
    p->rf = r;
    col = tok_text(p, &p->t[ci]);
    if (!col)
        return;
    if (qi >= 0) {
        qual = tok_text(p, &p->t[qi]);
        if (!qual) {
            free(col);
            return;
        }
    }
    if (p->t[ci].kind == SQLX_IDENT && p->t[ci].p[0] == '"' && qi < 0)
        flags |= REF_DQ;
    r = &p->rf[p->nrf];
    r->level = level;
    r->ctx = ctx;
    r->flags = flags;
    r->qual = qual;
    r->col = col;
    r->tref = -1;
    r->qtok = qi;
    r->table = r->column = NULL;
    p->t[first].ref = p->nrf;
    p->nrf++;
}

static void add_cmp(struct parser *p, int left, int right, const char *op)
{
    struct cmp *c;

    c = grow(p, p->cm, p->ncm, &p->capcm, sizeof *p->cm);
    if (!c)
        return;
    p->cm = c;
    c = &p->cm[p->ncm++];
    c->left = left;
    c->right = right;
    snprintf(c->op, sizeof c->op, "%s", op);
}

/* ---- comparisons -------------------------------------------------------- */

/* Tokens that, next to an operand, make it part of a larger expression. */
static int binds(const struct parser *p, int i)
{
    const struct tok *t;

    if (i < 0 || i >= p->nt)
        return 0;
    t = &p->t[i];
    if (t->kind == SQLX_PUNCT)
        return strchr(".+-*/%|&~<>=!(", t->p[0]) != NULL;
    return word_is(t, "collate") || word_is(t, "escape");
}

/* Whether the token before an operand, at i, binds it into a larger
** expression: as binds(), but an opening parenthesis only groups. */
static int binds_before(const struct parser *p, int i)
{
    return binds(p, i) && !punct(p, i, '(');
}

/* If a plain column name ([q.]c, or [s.]q.c) ends at token e and nothing
** before it binds it into a larger expression, its first token; else -1. */
static int col_start(const struct parser *p, int e)
{
    int b = e;

    if (!is_name(p, e) || punct(p, e + 1, '('))
        return -1;
    while (b >= 2 && punct(p, b - 1, '.') && is_name(p, b - 2) && e - b < 4)
        b -= 2;
    return binds_before(p, b - 1) ? -1 : b;
}

/* Whether a plain column name starts at token b and nothing after it
** binds it into a larger expression. */
static int col_from(const struct parser *p, int b)
{
    int e = b;

    if (!is_name(p, b))
        return 0;
    while (punct(p, e + 1, '.') && is_name(p, e + 2) && e - b < 4)
        e += 2;
    return is_name(p, e) && !binds(p, e + 1);
}

/* A string literal, or a double-quoted name SQLite may read as one, at
** token i. */
static int str_at(const struct parser *p, int i)
{
    return i >= 0 && i < p->nt &&
           (p->t[i].kind == SQLX_STRING ||
            (p->t[i].kind == SQLX_IDENT && p->t[i].p[0] == '"'));
}

/* A constant operand at token i: a string or a number. */
static int value_at(const struct parser *p, int i)
{
    return str_at(p, i) || (i >= 0 && i < p->nt &&
                            p->t[i].kind == SQLX_NUMBER);
}

/*
** At token i, an operator with a plain column on one side: =, ==, !=, <>,
** [NOT] IN (list), [NOT] LIKE. Records what it compares with (a column, a
** string or a number; a double-quoted name is told apart at resolution);
** returns how many tokens the operator spans (0 when i is not one).
*/
static int comparison(struct parser *p, int i)
{
    const struct tok *t = &p->t[i];
    int len = 0, l, r, k, neg, b;
    const char *op = NULL;

    if (punct(p, i, '=') && !punct(p, i - 1, '<') && !punct(p, i - 1, '>') &&
        !punct(p, i - 1, '!') && !punct(p, i - 1, '=')) {
        len = punct(p, i + 1, '=') ? 2 : 1;
        op = "=";
    } else if ((punct(p, i, '!') && punct(p, i + 1, '=')) ||
               (punct(p, i, '<') && punct(p, i + 1, '>'))) {
        len = 2;
        op = "!=";
    }
    if (op) {
        l = i - 1;
        r = i + len;
        if ((b = col_start(p, l)) >= 0) {
            if (col_from(p, r) || (value_at(p, r) && !binds(p, r + 1)))
                add_cmp(p, b, r, op);
        } else if (value_at(p, l) && !binds_before(p, l - 1) && col_from(p, r)) {
            add_cmp(p, r, l, op);
        }
        return len;
    }
    if (t->kind != SQLX_WORD)
        return 0;
    neg = kw(p, i - 1, "not");
    b = col_start(p, neg ? i - 2 : i - 1);
    if (b < 0)
        return 0;
    if (word_is(t, "in") && punct(p, i + 1, '(') && p->t[i + 1].match > 0 &&
        !kw(p, i + 2, "select") && !kw(p, i + 2, "with")) {
        /* Each element of the list that is a whole string. */
        for (k = i + 2; k < p->t[i + 1].match; k++)
            if ((punct(p, k - 1, '(') || punct(p, k - 1, ',')) &&
                (punct(p, k + 1, ')') || punct(p, k + 1, ',')) &&
                str_at(p, k))
                add_cmp(p, b, k, neg ? "NOT IN" : "IN");
        return 1;
    }
    if (word_is(t, "like") && i + 1 < p->nt &&
        p->t[i + 1].kind == SQLX_STRING && !binds(p, i + 2) &&
        !memchr(p->t[i + 1].p, '%', (size_t)p->t[i + 1].n) &&
        !memchr(p->t[i + 1].p, '_', (size_t)p->t[i + 1].n)) {
        add_cmp(p, b, i + 1, neg ? "NOT LIKE" : "LIKE");
        return 1;
    }
    return 0;
}

/*
** The operator at token i, in tokens (0 when none): a comparison (=, ==,
** !=, <>, <, <=, >, >=), and when arith is set + - * / as well.
*/
static int op_at(const struct parser *p, int i, int arith)
{
    if (i < 0 || i >= p->nt || p->t[i].kind != SQLX_PUNCT)
        return 0;
    switch (p->t[i].p[0]) {
    case '=':
        if (punct(p, i - 1, '<') || punct(p, i - 1, '>') ||
            punct(p, i - 1, '!') || punct(p, i - 1, '='))
            return 0;
        return punct(p, i + 1, '=') ? 2 : 1;
    case '!':
        return punct(p, i + 1, '=') ? 2 : 0;
    case '<':
        if (punct(p, i - 1, '<') || punct(p, i + 1, '<'))
            return 0;
        return punct(p, i + 1, '=') || punct(p, i + 1, '>') ? 2 : 1;
    case '>':
        if (punct(p, i - 1, '<') || punct(p, i - 1, '>') ||
            punct(p, i + 1, '>'))
            return 0;
        return punct(p, i + 1, '=') ? 2 : 1;
    case '+': case '-': case '*': case '/':
        return arith ? 1 : 0;
    }
    return 0;
}

/* The last token of the name that starts at token b ([s.]q.c). */
static int name_end(const struct parser *p, int b)
{
    int e = b;

    while (punct(p, e + 1, '.') && is_name(p, e + 2) && e - b < 4)
        e += 2;
    return e;
}

/*
** The column names on either side of the one that starts at token b,
** across an operator (op_at): *left and *right get their first tokens,
** -1 for none. Only plain names count (col_start, col_from): "a.x = b.x"
** has them, "a.x = b.x + 1" has not.
*/
static void operands(const struct parser *p, int b, int arith, int *left,
                     int *right)
{
    int e = name_end(p, b), n, s;

    *left = *right = -1;
    if ((n = op_at(p, e + 1, arith)) > 0 && col_from(p, e + 1 + n) &&
        !binds_before(p, b - 1))
        *right = e + 1 + n;
    if (op_at(p, b - 2, arith) == 2)
        s = b - 2;
    else if (op_at(p, b - 1, arith) == 1)
        s = b - 1;
    else
        return;
    if (!binds(p, e + 1))
        *left = col_start(p, s - 1);
}

/* ---- the parser --------------------------------------------------------- */

static void p_stmt(struct parser *p, int parent, int pctx, int end);
static void p_from(struct parser *p, int level, int end);

enum { MODE_SELECT, MODE_WHERE, MODE_ON, MODE_PLAIN, MODE_TAIL };

/* Whether token i ends an expression read in mode. */
static int stops(const struct parser *p, int i, int mode)
{
    const struct tok *t = &p->t[i];

    if (mode == MODE_TAIL)
        return 0;
    if (in_list(t, clause_words))
        return 1;
    if (mode == MODE_ON) /* the next FROM item (not left(x, n)) */
        return (in_list(t, join_words) && !punct(p, i + 1, '(')) ||
               punct(p, i, ',');
    return 0;
}

/* Whether token i ends an operand, so that a name right after it in a
** select list is an alias (SELECT count(*) n). */
static int operand_end(const struct parser *p, int i)
{
    const struct tok *t;

    if (i < 0)
        return 0;
    t = &p->t[i];
    return punct(p, i, ')') || t->kind == SQLX_STRING ||
           t->kind == SQLX_NUMBER || t->kind == SQLX_IDENT ||
           word_is(t, "end") || word_is(t, "null") ||
           (t->kind == SQLX_WORD && !in_list(t, expr_words));
}

/* The aggregate call whose name is at token i (a name and "(") in a
** select list: returns the index of its ")" when it is one (not a window
** function, not the two-argument scalar min/max), else -1. */
static int aggregate_call(const struct parser *p, int i)
{
    int open = i + 1, close, k, depth = 0, commas = 0, after;

    if (!in_list(&p->t[i], agg_words) || !punct(p, open, '('))
        return -1;
    close = p->t[open].match;
    if (close < 0)
        return -1;
    for (k = open + 1; k < close; k++) {
        if (punct(p, k, '('))
            depth++;
        else if (punct(p, k, ')'))
            depth--;
        else if (depth == 0 && punct(p, k, ','))
            commas++;
    }
    if (commas && (word_is(&p->t[i], "min") || word_is(&p->t[i], "max")))
        return -1;
    after = close + 1;
    if (kw(p, after, "filter") && punct(p, after + 1, '(') &&
        p->t[after + 1].match > 0)
        after = p->t[after + 1].match + 1;
    if (kw(p, after, "over"))
        return -1;
    return close;
}

/*
** Read an expression (or a list of them) from p->i up to end or a token
** that stops mode, in level `level` and context ctx: collect column names,
** comparisons, aggregates of a select list and subqueries. WHERE and
** HAVING (MODE_WHERE) open a new context at each AND (but the one of a
** BETWEEN) and each OR outside function calls: a.x = 1 OR b.y = 2 does not
** join a and b.
*/
static void p_expr(struct parser *p, int level, int ctx, int end, int mode)
{
    int depth = 0, fdepth = 0, between = 0, prev = -1, agg_end = -1, k, e;
    int flags;
    struct level *l;

    while (p->i < end && !p->oom) {
        int i = p->i;
        const struct tok *t = &p->t[i];

        if (agg_end >= 0 && i > agg_end)
            agg_end = -1;
        if (depth == 0 && stops(p, i, mode))
            break;
        if (punct(p, i, '(')) {
            if (t->match > i && (kw(p, i + 1, "select") ||
                                 kw(p, i + 1, "with") ||
                                 kw(p, i + 1, "values"))) {
                int first = p->nlv;
                int member = kw(p, i - 1, "in") || punct(p, i - 1, '=') ||
                             punct(p, i - 1, '<') || punct(p, i - 1, '>');
                p->i = i + 1;
                p_stmt(p, level, ctx, t->match);
                for (k = first; member && k < p->nlv; k++)
                    if (p->lv[k].parent == level)
                        p->lv[k].member = 1;
                p->i = t->match + 1;
                prev = t->match;
                continue;
            }
            depth++;
            fdepth += is_name(p, i - 1);
        } else if (punct(p, i, ')')) {
            if (depth > 0) {
                depth--;
                fdepth -= fdepth > 0 && is_name(p, t->match - 1);
            }
        } else if (depth == 0 && punct(p, i, ',') && mode == MODE_SELECT) {
            p->i = i + 1;
            prev = -1;
            continue;
        } else if (depth == 0 && punct(p, i, '*') && mode == MODE_SELECT &&
                   prev < 0 && level >= 0) {
            p->lv[level].star = 1;
        } else if (fdepth == 0 && mode == MODE_WHERE &&
                   word_is(t, "between")) {
            between = 1;
        } else if (fdepth == 0 && mode == MODE_WHERE &&
                   (word_is(t, "and") || word_is(t, "or"))) {
            if (between && word_is(t, "and")) {
                between = 0;
            } else {
                k = new_ctx(p, level, 1, -1);
                if (k >= 0)
                    ctx = k;
            }
        } else if (mode == MODE_SELECT && agg_end < 0 && level >= 0 &&
                   (e = aggregate_call(p, i)) > 0) {
            l = &p->lv[level];
            if (l->nagg++ == 0)
                snprintf(l->agg, sizeof l->agg, "%.*s", t->n, t->p);
            if (!word_is(t, "min") && !word_is(t, "max"))
                l->minmax_only = 0;
            agg_end = e;
        } else if ((k = comparison(p, i)) > 0) {
            p->i = i + k;
            prev = p->i - 1;
            continue;
        } else if (is_name(p, i) && !punct(p, i + 1, '(') &&
                   !kw(p, i - 1, "as") && !punct(p, i - 1, '.') &&
                   !(mode == MODE_SELECT && depth == 0 &&
                     operand_end(p, prev))) {
            /* A column: [schema.]table.column, table.column or column. */
            e = i;
            while (punct(p, e + 1, '.') && is_name(p, e + 2) && e - i < 4)
                e += 2;
            if (!punct(p, e + 1, '.')) {
                flags = mode == MODE_SELECT && agg_end < 0 ? REF_BARE : 0;
                add_ref(p, level, ctx, i, e > i ? e - 2 : -1, e, flags);
            } else if (punct(p, e + 1, '.') && punct(p, e + 2, '*')) {
                e += 2; /* t.* */
                if (mode == MODE_SELECT && depth == 0 && level >= 0)
                    p->lv[level].star = 1;
            }
            p->i = e + 1;
            prev = e;
            continue;
        }
        prev = i;
        p->i = i + 1;
    }
}

/* An alias after a FROM item ([AS] name), malloc()ed, or NULL. */
static char *p_alias(struct parser *p, int end)
{
    int i = p->i;

    if (kw(p, i, "as") && i + 1 < end) {
        p->i = i + 2;
        return tok_text(p, &p->t[i + 1]);
    }
    if (i < end && (p->t[i].kind == SQLX_IDENT ||
                    (p->t[i].kind == SQLX_WORD &&
                     !in_list(&p->t[i], from_words)))) {
        p->i = i + 1;
        return tok_text(p, &p->t[i]);
    }
    return NULL;
}

static int is_cte(const struct parser *p, const char *name)
{
    int k;

    for (k = 0; k < p->ncte; k++)
        if (strcasecmp(p->ctes[k], name) == 0)
            return 1;
    return 0;
}

static int uf_find(struct parser *p, int a)
{
    while (p->tr[a].uf != a) {
        p->tr[a].uf = p->tr[p->tr[a].uf].uf;
        a = p->tr[a].uf;
    }
    return a;
}

static void uf_union(struct parser *p, int a, int b)
{
    a = uf_find(p, a);
    b = uf_find(p, b);
    if (a != b)
        p->tr[b].uf = a;
}

/* Read one FROM item at p->i; returns its tref or -1. */
static int p_from_item(struct parser *p, int level, int end)
{
    const struct db_table *tb;
    int i = p->i, close, ti;
    char *name, *nsp = NULL;

    if (punct(p, i, '(')) {
        close = p->t[i].match;
        if (close < 0 || close >= end) {
            p->bad = 1;
            p->i = end;
            return -1;
        }
        if (kw(p, i + 1, "select") || kw(p, i + 1, "with") ||
            kw(p, i + 1, "values")) {
            /* A derived table sees the enclosing levels, not this one. */
            p->i = i + 1;
            p_stmt(p, p->lv[level].parent, p->lv[level].parent_ctx, close);
            p->i = close + 1;
            p->lv[level].opaque = 1;
            return new_tref(p, level, NULL, NULL, p_alias(p, end));
        }
        /* A parenthesized join: its items belong to this level. */
        if (++p->depth > MAX_DEPTH) {
            p->bad = 1;
            p->i = end;
            p->depth--;
            return -1;
        }
        p->i = i + 1;
        p_from(p, level, close);
        p->i = close + 1;
        p->depth--;
        free(p_alias(p, end));
        return p->ntr > 0 && p->tr[p->ntr - 1].level == level ? p->ntr - 1
                                                               : -1;
    }
    if (!is_name(p, i) || in_list(&p->t[i], from_words))
        return -1;
    if (punct(p, i + 1, '.') && is_name(p, i + 2)) { /* schema.table */
        nsp = tok_text(p, &p->t[i]);
        i += 2;
        if (!nsp) {
            p->i = i + 1;
            return -1;
        }
    }
    name = tok_text(p, &p->t[i]);
    p->i = i + 1;
    if (!name) {
        free(nsp);
        return -1;
    }
    if (punct(p, p->i, '(')) { /* table-valued function */
        close = p->t[p->i].match;
        p->i = close > p->i && close < end ? close + 1 : end;
        p->lv[level].opaque = 1;
        free(name);
        free(nsp);
        return new_tref(p, level, NULL, NULL, p_alias(p, end));
    }
    /* A qualified name is never a CTE; its schema picks among the tables
    ** of that name (schema_table_in()). */
    tb = !nsp && is_cte(p, name) ? NULL : schema_table_in(p->s, nsp, name);
    free(nsp);
    if (!tb)
        p->lv[level].opaque = 1;
    ti = new_tref(p, level, tb, name, p_alias(p, end));
    if (kw(p, p->i, "indexed") && kw(p, p->i + 1, "by"))
        p->i += 3;
    else if (kw(p, p->i, "not") && kw(p, p->i + 1, "indexed"))
        p->i += 2;
    return ti;
}

/* Read a FROM clause (items, joins, their constraints) up to end. */
static void p_from(struct parser *p, int level, int end)
{
    int prev = -1, cur, natural = 0, c;

    while (p->i < end && !p->oom) {
        cur = p_from_item(p, level, end);
        if (cur < 0)
            break;
        if (natural && prev >= 0)
            uf_union(p, prev, cur);
        if (kw(p, p->i, "on")) {
            p->i++;
            c = new_ctx(p, level, 1, cur);
            p_expr(p, level, c, end, MODE_ON);
        } else if (kw(p, p->i, "using")) {
            p->i++;
            if (punct(p, p->i, '(') && p->t[p->i].match > p->i &&
                p->t[p->i].match < end)
                p->i = p->t[p->i].match + 1;
            if (prev >= 0)
                uf_union(p, prev, cur);
        }
        prev = cur;
        natural = 0;
        if (punct(p, p->i, ',')) {
            p->i++;
            continue;
        }
        if (kw(p, p->i, "natural")) {
            natural = 1;
            p->i++;
        }
        if (kw(p, p->i, "left") || kw(p, p->i, "right") ||
            kw(p, p->i, "full")) {
            p->i++;
            if (kw(p, p->i, "outer"))
                p->i++;
        } else if (kw(p, p->i, "inner") || kw(p, p->i, "cross")) {
            p->i++;
        }
        if (!kw(p, p->i, "join"))
            break;
        p->i++;
    }
}

/* Read one SELECT core at p->i (the SELECT keyword); returns its level. */
static int p_core(struct parser *p, int parent, int pctx, int end)
{
    int level = new_level(p, parent, pctx), c;

    p->i++;
    if (level < 0) {
        p->i = end;
        return -1;
    }
    if (p->top < 0 && parent < 0 && p->depth == 1)
        p->top = level;
    if (kw(p, p->i, "distinct") || kw(p, p->i, "all"))
        p->i++;
    c = new_ctx(p, level, 0, -1);
    p_expr(p, level, c, end, MODE_SELECT);
    p->lv[level].from_end = -1;
    if (kw(p, p->i, "from")) {
        p->i++;
        p_from(p, level, end);
        p->lv[level].from_end = p->i;
    }
    if (kw(p, p->i, "where")) {
        p->i++;
        p_expr(p, level, new_ctx(p, level, 1, -1), end, MODE_WHERE);
    }
    if (kw(p, p->i, "group") && kw(p, p->i + 1, "by")) {
        p->i += 2;
        p->lv[level].has_group = 1;
        p_expr(p, level, c, end, MODE_PLAIN);
    }
    if (kw(p, p->i, "having")) {
        p->i++;
        p_expr(p, level, new_ctx(p, level, 1, -1), end, MODE_WHERE);
    }
    if (kw(p, p->i, "window")) {
        p->i++;
        p_expr(p, level, c, end, MODE_PLAIN);
    }
    return level;
}

/* Read a compound SELECT and its ORDER BY / LIMIT, up to end. */
static void p_compound(struct parser *p, int parent, int pctx, int end)
{
    int last = -1, close;

    while (p->i < end && !p->oom) {
        if (punct(p, p->i, '(') && p->t[p->i].match > p->i &&
            p->t[p->i].match < end) {
            close = p->t[p->i].match;
            p->i++;
            p_stmt(p, parent, pctx, close);
            p->i = close + 1;
        } else if (kw(p, p->i, "select")) {
            last = p_core(p, parent, pctx, end);
        } else if (kw(p, p->i, "values")) {
            p->i++;
            p_expr(p, -1, -1, end, MODE_PLAIN);
        } else {
            p->bad = 1;
            p->i = end;
            return;
        }
        if (kw(p, p->i, "union")) {
            p->i++;
            if (kw(p, p->i, "all"))
                p->i++;
        } else if (kw(p, p->i, "intersect") || kw(p, p->i, "except")) {
            p->i++;
        } else {
            break;
        }
    }
    /* ORDER BY and LIMIT (and a final semicolon); anything else means a
    ** clause was not understood, and the analysis is incomplete. */
    if (p->i < end && !kw(p, p->i, "order") && !kw(p, p->i, "limit") &&
        !punct(p, p->i, ';'))
        p->bad = 1;
    if (p->i < end) {
        int c = last >= 0 ? new_ctx(p, last, 0, -1) : -1;
        p_expr(p, last, c, end, MODE_TAIL);
    }
}

/* Read one statement (WITH ... SELECT, or a compound SELECT) up to end. */
static void p_stmt(struct parser *p, int parent, int pctx, int end)
{
    int close;
    char *name, **ctes;

    if (++p->depth > MAX_DEPTH) {
        p->bad = 1;
        p->i = end;
        p->depth--;
        return;
    }
    if (kw(p, p->i, "with")) {
        p->i++;
        if (kw(p, p->i, "recursive"))
            p->i++;
        while (p->i < end && !p->oom) {
            if (!is_name(p, p->i)) {
                p->bad = 1;
                break;
            }
            name = tok_text(p, &p->t[p->i]);
            if (name) {
                ctes = grow(p, p->ctes, p->ncte, &p->capcte,
                            sizeof *p->ctes);
                if (!ctes) {
                    free(name);
                } else {
                    p->ctes = ctes;
                    p->ctes[p->ncte++] = name;
                }
            }
            p->i++;
            if (punct(p, p->i, '(') && p->t[p->i].match > p->i)
                p->i = p->t[p->i].match + 1;
            if (!kw(p, p->i, "as")) {
                p->bad = 1;
                break;
            }
            p->i++;
            if (kw(p, p->i, "not"))
                p->i++;
            if (kw(p, p->i, "materialized"))
                p->i++;
            close = punct(p, p->i, '(') ? p->t[p->i].match : -1;
            if (close < 0 || close >= end) {
                p->bad = 1;
                break;
            }
            p->i++;
            p_stmt(p, parent, pctx, close);
            p->i = close + 1;
            if (!punct(p, p->i, ','))
                break;
            p->i++;
        }
    }
    if (!p->bad)
        p_compound(p, parent, pctx, end);
    p->i = end;
    p->depth--;
}

/* ---- resolution --------------------------------------------------------- */

/* Resolve one reference (see the design note). */
static void resolve(struct parser *p, struct ref *r)
{
    const struct db_column *c;
    int lv, k, found, n;

    for (lv = r->level; lv >= 0; lv = p->lv[lv].parent) {
        if (r->qual) {
            for (k = 0; k < p->ntr; k++) {
                const struct tref *t = &p->tr[k];
                const char *nm = t->alias ? t->alias : t->written;
                if (t->level == lv && nm && strcasecmp(nm, r->qual) == 0)
                    break;
            }
            if (k == p->ntr)
                continue;
            r->tref = k;
            c = p->tr[k].tb ? schema_column(p->tr[k].tb, r->col) : NULL;
            if (c) {
                r->table = schema_qname(p->tr[k].tb);
                r->column = c->name;
            }
            return;
        }
        found = -1;
        n = 0;
        c = NULL;
        for (k = 0; k < p->ntr; k++) {
            const struct tref *t = &p->tr[k];
            const struct db_column *ck;
            if (t->level != lv || !t->tb)
                continue;
            ck = schema_column(t->tb, r->col);
            if (ck) {
                found = k;
                c = ck;
                n++;
            }
        }
        if (n == 1) {
            r->tref = found;
            r->table = schema_qname(p->tr[found].tb);
            r->column = c->name;
            return;
        }
        if (n > 1 || p->lv[lv].opaque)
            return;
    }
}

/* The context in level `at` from which reference r (written in a level
** nested in `at`, or in `at` itself) is seen; -1 if `at` is not on its
** chain. */
static int ctx_in(const struct parser *p, const struct ref *r, int at)
{
    int lv = r->level;

    if (lv == at)
        return r->ctx;
    while (lv >= 0 && p->lv[lv].parent != at)
        lv = p->lv[lv].parent;
    return lv >= 0 ? p->lv[lv].parent_ctx : -1;
}

/* Link the FROM items that share a linking context. */
static void link_items(struct parser *p)
{
    int k, c, at;

    for (k = 0; k < p->nrf; k++) {
        struct ref *r = &p->rf[k];
        if (r->tref < 0) {
            /* A double-quoted name that is no column is a string. */
            if (!(r->flags & REF_DQ) && r->ctx >= 0 && p->cx[r->ctx].linking)
                p->cx[r->ctx].unresolved = 1;
            continue;
        }
        at = p->tr[r->tref].level;
        c = ctx_in(p, r, at);
        if (c < 0 || !p->cx[c].linking || p->cx[c].level != at)
            continue;
        if (p->cx[c].first < 0) {
            p->cx[c].first = r->tref;
            if (p->cx[c].anchor >= 0)
                uf_union(p, p->cx[c].anchor, r->tref);
        } else {
            uf_union(p, p->cx[c].first, r->tref);
        }
    }
}

/* ---- output ------------------------------------------------------------- */

static int out_strdup(char **dst, const char *s)
{
    *dst = s ? strdup(s) : NULL;
    return s && !*dst ? -1 : 0;
}

static int push_str(char ***arr, int *n, const char *s)
{
    char **q = realloc(*arr, (size_t)(*n + 1) * sizeof **arr);

    if (!q)
        return -1;
    *arr = q;
    if (out_strdup(&q[*n], s))
        return -1;
    (*n)++;
    return 0;
}

static int same(const char *a, const char *b)
{
    return a && b && strcasecmp(a, b) == 0;
}

static int out_tables(struct parser *p, struct sqla *out)
{
    int k, j;

    for (k = 0; k < p->ntr; k++) {
        const char *name;
        if (!p->tr[k].tb)
            continue;
        name = schema_qname(p->tr[k].tb);
        for (j = 0; j < out->ntables; j++)
            if (strcmp(out->tables[j], name) == 0)
                break;
        if (j == out->ntables && push_str(&out->tables, &out->ntables, name))
            return -1;
    }
    return 0;
}

/* A ref that a token position names, resolved, or NULL. */
static const struct ref *ref_at(const struct parser *p, int tok)
{
    int k = p->t[tok].ref;

    return k >= 0 && p->rf[k].table ? &p->rf[k] : NULL;
}

/* Add the pair a = b to (*arr)[0..*n) unless it is there, either way
** round. */
static int out_pair(struct sqla_join **arr, int *n, const struct ref *a,
                    const struct ref *b)
{
    struct sqla_join *j;
    int k;

    for (k = 0; k < *n; k++) {
        j = &(*arr)[k];
        if ((same(j->a.table, a->table) && same(j->a.column, a->column) &&
             same(j->b.table, b->table) && same(j->b.column, b->column)) ||
            (same(j->a.table, b->table) && same(j->a.column, b->column) &&
             same(j->b.table, a->table) && same(j->b.column, a->column)))
            return 0;
    }
    j = realloc(*arr, (size_t)(*n + 1) * sizeof *j);
    if (!j)
        return -1;
    *arr = j;
    j = &(*arr)[*n];
    memset(j, 0, sizeof *j);
    (*n)++;
    if (out_strdup(&j->a.table, a->table) ||
        out_strdup(&j->a.column, a->column) ||
        out_strdup(&j->b.table, b->table) ||
        out_strdup(&j->b.column, b->column))
        return -1;
    return 0;
}

static int out_literal(struct parser *p, struct sqla *out,
                       const struct ref *col, int tok, const char *op)
{
    struct sqla_literal *l;
    char *text = tok_text(p, &p->t[tok]);
    int k;

    if (!text)
        return p->oom ? -1 : 0;
    for (k = 0; k < out->nlits; k++) {
        l = &out->lits[k];
        if (same(l->col.table, col->table) &&
            same(l->col.column, col->column) &&
            strcmp(l->literal, text) == 0 && strcmp(l->op, op) == 0) {
            free(text);
            return 0;
        }
    }
    l = realloc(out->lits, (size_t)(out->nlits + 1) * sizeof *l);
    if (!l) {
        free(text);
        return -1;
    }
    out->lits = l;
    l = &out->lits[out->nlits++];
    memset(l, 0, sizeof *l);
    l->literal = text;
    snprintf(l->op, sizeof l->op, "%s", op);
    if (out_strdup(&l->col.table, col->table) ||
        out_strdup(&l->col.column, col->column))
        return -1;
    return 0;
}

/* Comparisons whose column resolved: with another column (a join when
** they belong to different FROM items), or with a string. */
static int out_compare(struct parser *p, struct sqla *out)
{
    const struct ref *a, *b;
    const struct cmp *c;
    int k, rk;

    for (k = 0; k < p->ncm; k++) {
        c = &p->cm[k];
        a = ref_at(p, c->left);
        if (!a || a->tref < 0)
            continue;
        rk = p->t[c->right].ref;
        if (rk >= 0 && (p->rf[rk].tref >= 0 || !(p->rf[rk].flags & REF_DQ))) {
            b = ref_at(p, c->right);
            if (b && strcmp(c->op, "=") == 0 && b->tref != a->tref &&
                out_pair(&out->joins, &out->njoins, a, b))
                return -1;
            continue;
        }
        if (str_at(p, c->right) && out_literal(p, out, a, c->right, c->op))
            return -1;
    }
    return 0;
}

/* Whether a linking context of level lv names a column that did not
** resolve (then what links its items cannot be fully read). */
static int level_unresolved(const struct parser *p, int lv)
{
    int c;

    for (c = 0; c < p->ncx; c++)
        if (p->cx[c].level == lv && p->cx[c].unresolved)
            return 1;
    return 0;
}

/*
** Idle joins: a FROM item (a schema table) whose one and only column
** reference is one side of an equality in an ON clause of its own level,
** the other side a column of another item of that level: the item adds
** nothing to the result but what the join does to its rows. Levels with
** an item of unknown columns, a name that did not resolve, a * in the
** select list, an aggregate or a GROUP BY (where the join's rows are
** what is counted) are skipped; so is an item that a subquery names.
*/
static int out_idle(struct parser *p, struct sqla *out)
{
    const struct ref *a, *b;
    int k, r, c, lv, n, only, other;

    for (k = 0; k < p->ntr; k++) {
        lv = p->tr[k].level;
        if (!p->tr[k].tb || p->lv[lv].opaque || p->lv[lv].star ||
            p->lv[lv].nagg || p->lv[lv].has_group || level_unresolved(p, lv))
            continue;
        n = 0;
        only = -1;
        for (r = 0; r < p->nrf; r++) {
            if (p->rf[r].tref != k)
                continue;
            n++;
            only = r;
        }
        if (n != 1 || p->rf[only].level != lv ||
            p->cx[p->rf[only].ctx].anchor < 0)
            continue;
        for (c = 0; c < p->ncm; c++) {
            if (strcmp(p->cm[c].op, "=") != 0)
                continue;
            if (p->t[p->cm[c].left].ref == only)
                other = p->t[p->cm[c].right].ref;
            else if (p->t[p->cm[c].right].ref == only)
                other = p->t[p->cm[c].left].ref;
            else
                continue;
            if (other < 0 || p->rf[other].tref < 0 ||
                p->rf[other].tref == k ||
                p->tr[p->rf[other].tref].level != lv)
                break;
            a = &p->rf[only];
            b = &p->rf[other];
            if (a->table && b->table &&
                out_pair(&out->idle, &out->nidle, a, b))
                return -1;
            break;
        }
    }
    return 0;
}

/* Cross joins: per level, the groups of linked items holding a schema
** table, when there are two or more (levels with a linking context we
** could not fully read are skipped). */
static int out_cross(struct parser *p, struct sqla *out)
{
    int lv, k, j, first, root;
    char pair[4 * MAX_NAME + 8];

    for (lv = 0; lv < p->nlv; lv++) {
        if (level_unresolved(p, lv))
            continue;
        first = -1;
        for (k = 0; k < p->ntr; k++) {
            if (p->tr[k].level != lv || !p->tr[k].tb)
                continue;
            root = uf_find(p, k);
            for (j = 0; j < k; j++)
                if (p->tr[j].level == lv && p->tr[j].tb &&
                    uf_find(p, j) == root)
                    break;
            if (j < k)
                continue; /* its group is already represented */
            if (first < 0) {
                first = k;
                continue;
            }
            snprintf(pair, sizeof pair, "%s x %s",
                     schema_qname(p->tr[first].tb), schema_qname(p->tr[k].tb));
            for (j = 0; j < out->ncross; j++)
                if (strcmp(out->cross_pairs[j], pair) == 0)
                    break;
            if (j == out->ncross &&
                push_str(&out->cross_pairs, &out->ncross, pair))
                return -1;
        }
    }
    return 0;
}

/* Whether bare reference r is fixed to one value by an equality with a
** constant in a WHERE, HAVING or ON condition of its level (WHERE
** state = 'CA'), so that it is no arbitrary pick next to an aggregate. */
static int fixed(const struct parser *p, const struct ref *r)
{
    const struct ref *c;
    int k, rk;

    for (k = 0; k < p->ncm; k++) {
        if (strcmp(p->cm[k].op, "=") != 0)
            continue;
        rk = p->t[p->cm[k].left].ref;
        if (rk < 0)
            continue;
        c = &p->rf[rk];
        if (c->tref != r->tref || !same(c->column, r->column) ||
            c->ctx < 0 || !p->cx[c->ctx].linking ||
            p->cx[c->ctx].level != r->level)
            continue;
        rk = p->t[p->cm[k].right].ref;
        if (rk < 0 || (p->rf[rk].tref < 0 && (p->rf[rk].flags & REF_DQ)))
            return 1; /* a string, a number or a string in "" */
    }
    return 0;
}

/* Aggregates mixed with bare columns of the same level, no GROUP BY (one
** min() or max() alone is SQLite's documented bare-column query). */
static int out_agg(struct parser *p, struct sqla *out)
{
    const struct level *l;
    const struct ref *r;
    char col[3 * MAX_NAME + 3];
    int k;

    for (k = 0; k < p->nrf; k++) {
        r = &p->rf[k];
        if (!(r->flags & REF_BARE) || !r->table || r->tref < 0 ||
            p->tr[r->tref].level != r->level)
            continue;
        l = &p->lv[r->level];
        if (!l->nagg || l->has_group || (l->nagg == 1 && l->minmax_only) ||
            fixed(p, r))
            continue;
        out->agg_without_group = 1;
        snprintf(col, sizeof col, "%s.%s", r->table, r->column);
        if (out_strdup(&out->agg_func, l->agg) ||
            out_strdup(&out->bare_col, col))
            return -1;
        return 0;
    }
    return 0;
}

/*
** Select-list columns of a compared subquery that read the enclosing
** query's row (sqla_outer): a bare name that no FROM item of its own
** level has, resolved to an item of an outer level; not in a subquery
** without a table of its own (x = (SELECT y)).
*/
static int out_outer(struct parser *p, struct sqla *out)
{
    struct sqla_outer *o;
    int k, j, lv;

    for (k = 0; k < p->nrf; k++) {
        const struct ref *r = &p->rf[k];
        lv = r->level;
        if (!(r->flags & REF_BARE) || r->qual || r->tref < 0 ||
            !r->table || lv < 0 || !p->lv[lv].member ||
            p->tr[r->tref].level == lv)
            continue;
        for (j = 0; j < out->nouter; j++)
            if (same(out->outer[j].col.table, r->table) &&
                same(out->outer[j].col.column, r->column))
                break;
        if (j < out->nouter)
            continue;
        for (j = 0; j < p->ntr; j++)
            if (p->tr[j].level == lv && p->tr[j].tb)
                break;
        if (j == p->ntr)
            continue;   /* no table of its own: SELECT outer_col on purpose */
        o = realloc(out->outer, (size_t)(out->nouter + 1) * sizeof *o);
        if (!o)
            return -1;
        out->outer = o;
        o = &o[out->nouter++];
        memset(o, 0, sizeof *o);
        if (out_strdup(&o->col.table, r->table) ||
            out_strdup(&o->col.column, r->column))
            return -1;
        for (j = 0; j < p->ntr; j++)
            if (p->tr[j].level == lv && p->tr[j].tb &&
                push_str(&o->from, &o->nfrom, schema_qname(p->tr[j].tb)))
                return -1;
    }
    return 0;
}

/*
** Comparisons of a column with itself (sqla_self): both sides plain names
** of one column of one FROM item, as in ON t3.id = t3.id.
*/
static int out_self(struct parser *p, struct sqla *out)
{
    struct sqla_self *o;
    const struct ref *a, *b;
    int i, l, r, e, j;

    for (i = 0; i < p->nt; i++) {
        if (p->t[i].ref < 0)
            continue;
        a = &p->rf[p->t[i].ref];
        operands(p, i, 0, &l, &r);
        if (r < 0 || p->t[r].ref < 0 || !a->table || a->tref < 0)
            continue;
        b = &p->rf[p->t[r].ref];
        if (b->tref != a->tref || !b->table || !same(a->column, b->column))
            continue;
        for (j = 0; j < out->nself; j++)
            if (same(out->self[j].col.table, a->table) &&
                same(out->self[j].col.column, a->column))
                break;
        if (j < out->nself)
            continue;
        e = name_end(p, r);
        if (p->t[e].p + p->t[e].n - p->t[i].p > MAX_LITERAL)
            continue;
        o = realloc(out->self, (size_t)(out->nself + 1) * sizeof *o);
        if (!o)
            return -1;
        out->self = o;
        o = &o[out->nself++];
        memset(o, 0, sizeof *o);
        o->on = a->ctx >= 0 && p->cx[a->ctx].anchor >= 0;
        o->text = strndup(p->t[i].p,
                          (size_t)(p->t[e].p + p->t[e].n - p->t[i].p));
        if (!o->text || out_strdup(&o->col.table, a->table) ||
            out_strdup(&o->col.column, a->column))
            return -1;
    }
    return 0;
}

static void parser_free(struct parser *p)
{
    int k;

    for (k = 0; k < p->ntr; k++) {
        free(p->tr[k].written);
        free(p->tr[k].alias);
    }
    for (k = 0; k < p->nrf; k++) {
        free(p->rf[k].qual);
        free(p->rf[k].col);
    }
    for (k = 0; k < p->ncte; k++)
        free(p->ctes[k]);
    free(p->t);
    free(p->lv);
    free(p->tr);
    free(p->rf);
    free(p->cx);
    free(p->cm);
    free(p->ctes);
}

int sqla_analyze(const char *sql, const struct db_schema *s,
                 struct sqla *out)
{
    static const struct db_schema none;
    struct parser p;
    int rc, k;

    memset(out, 0, sizeof *out);
    memset(&p, 0, sizeof p);
    p.s = s ? s : &none;
    p.top = -1;
    if (!sql)
        return 1;
    rc = tokenize(&p, sql);
    if (rc) {
        parser_free(&p);
        return rc;
    }
    if (p.nt == 0) {
        parser_free(&p);
        return 1;
    }
    p_stmt(&p, -1, -1, p.nt);
    if (p.oom) {
        parser_free(&p);
        return -1;
    }
    for (k = 0; k < p.nrf; k++)
        resolve(&p, &p.rf[k]);
    link_items(&p);
    if (p.top >= 0)
        out->select_star = p.lv[p.top].star;
    rc = out_tables(&p, out) || out_compare(&p, out) ||
         out_cross(&p, out) || out_agg(&p, out) || out_idle(&p, out) ||
         out_outer(&p, out) || out_self(&p, out) ? -1 : 0;
    if (rc == 0 && p.bad)
        rc = 1;
    parser_free(&p);
    return rc;
}

/* ---- re-qualification -------------------------------------------------- */

/* The one FROM item of level lv whose schema table has column col, or -1
** (none, several, or a level with an item of unknown columns). */
static int sole_owner(const struct parser *p, int lv, const char *col)
{
    int k, found = -1;

    if (p->lv[lv].opaque)
        return -1;
    for (k = 0; k < p->ntr; k++) {
        const struct tref *t = &p->tr[k];
        if (t->level != lv || !t->tb || !schema_column(t->tb, col))
            continue;
        if (found >= 0)
            return -1;
        found = k;
    }
    return found;
}

/* Append a name as an identifier: bare when a plain word, else quoted. */
static void put_name(struct buf *b, const char *s)
{
    const char *c;
    int plain = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                *s == '_';

    for (c = s; *c && plain; c++)
        plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                (*c >= '0' && *c <= '9') || *c == '_';
    if (plain)
        buf_puts(b, s);
    else
        text_put_quoted(b, s, '"');
}

/* Parse and resolve sql for a rewrite: 1 readable (p is the caller's to
** parser_free()), 0 not (nothing to free), -1 out of memory. */
static int parse_resolved(struct parser *p, const char *sql,
                          const struct db_schema *s)
{
    int rc, k;

    memset(p, 0, sizeof *p);
    p->s = s;
    p->top = -1;
    if (!sql || !s)
        return 0;
    rc = tokenize(p, sql);
    if (rc || p->nt == 0) {
        parser_free(p);
        return rc < 0 ? -1 : 0;
    }
    p_stmt(p, -1, -1, p->nt);
    for (k = 0; k < p->nrf && !p->oom; k++)
        resolve(p, &p->rf[k]);
    if (p->oom || p->bad) {
        rc = p->oom ? -1 : 0;
        parser_free(p);
        return rc;
    }
    return 1;
}

/* Finish a rewrite: b holds the text up to from, w what changed. With n
** changes, *out and *what (when asked for) get them: n; else 0; -1 when
** out of memory. b and w are freed either way. */
static int take_rewrite(struct buf *b, struct buf *w, const char *from,
                        int n, char **out, char **what)
{
    if (n == 0) {
        buf_free(b);
        buf_free(w);
        return 0;
    }
    buf_puts(b, from);
    *out = buf_steal(b);
    if (what)
        *what = buf_steal(w);
    else
        buf_free(w);
    if (!*out || (what && !*what)) {
        free(*out);
        *out = NULL;
        if (what) {
            free(*what);
            *what = NULL;
        }
        return -1;
    }
    return n;
}

/*
** Whether r sits in the ON clause of the FROM item its qualifier names,
** with no other column of that item there: re-qualified, the clause
** would link the item to nothing ("JOIN lots ON t.id = lots.tid" made
** "ON t.id = t.tid"), a cross join that runs and answers wrong rows.
*/
static int unanchors(const struct parser *p, const struct ref *r)
{
    int k;

    if (r->ctx < 0 || r->tref < 0 || p->cx[r->ctx].anchor != r->tref)
        return 0;
    for (k = 0; k < p->nrf; k++) {
        const struct ref *o = &p->rf[k];
        if (o != r && o->ctx == r->ctx && o->tref == r->tref && o->table)
            return 0;
    }
    return 1;
}

/*
** The FROM item that sqla_requalify() qualifies reference r by, or
** -1 when it leaves r alone (resolved, bare, schema.table.column, a
** derived table, no sole owner, or an ON clause it would unanchor).
*/
static int requalify_owner(const struct parser *p, const struct ref *r)
{
    const struct tref *t;
    int lv, owner;

    if (!r->qual || r->qtok < 0 || r->table || punct(p, r->qtok - 1, '.'))
        return -1;
    /* The qualifier names an item of this or an enclosing level whose
    ** table lacks the column; or names no item at all. Either way, the
    ** column's one owner in that item's level (else in the reference's
    ** own level) takes its place. */
    if (r->tref >= 0) {
        t = &p->tr[r->tref];
        if (!t->tb)
            return -1; /* a derived table: its columns are unknown */
        lv = t->level;
    } else {
        lv = r->level;
    }
    owner = sole_owner(p, lv, r->col);
    if (owner < 0 || owner == r->tref || unanchors(p, r))
        return -1;
    return owner;
}

/*
** Whether qualifying the reference at token b by FROM item owner would
** set it against the same column of the same item across an operator
** (each side's item as it will be: tgt[], the item of every reference
** after the rewrite, -1 unknown): "c.balance > s.balance", s not in the
** query and c the one owner, would become "c.balance > c.balance",
** never true, and "ON t2.sid = t3.sid" with t2 lacking it "ON t3.sid =
** t3.sid", a join that links t3 to nothing. The mistake is elsewhere
** (a table the query lacks); the reference is left for the repair.
*/
static int meets_itself(const struct parser *p, const int *tgt, int b,
                        int owner)
{
    const struct ref *r = &p->rf[p->t[b].ref];
    int side[2], k, o;

    operands(p, b, 1, &side[0], &side[1]);
    for (k = 0; k < 2; k++)
        if (side[k] >= 0 && (o = p->t[side[k]].ref) >= 0 &&
            tgt[o] == owner && strcasecmp(p->rf[o].col, r->col) == 0)
            return 1;
    return 0;
}

int sqla_requalify(const char *sql, const struct db_schema *s, char **out,
                   char **what)
{
    struct parser p;
    struct buf b, w;
    const char *from;
    int *tgt;
    int rc, i, owner, n = 0;

    *out = NULL;
    if (what)
        *what = NULL;
    rc = parse_resolved(&p, sql, s);
    if (rc <= 0)
        return rc;
    tgt = malloc((size_t)(p.nrf ? p.nrf : 1) * sizeof *tgt);
    if (!tgt) {
        parser_free(&p);
        return -1;
    }
    /* Each reference's item after the rewrite: its owner when it is
    ** re-qualified, else its own item when it resolved (requalify_owner()
    ** leaves resolved ones alone), else unknown. */
    for (i = 0; i < p.nrf; i++) {
        owner = requalify_owner(&p, &p.rf[i]);
        tgt[i] = owner >= 0 ? owner : p.rf[i].table ? p.rf[i].tref : -1;
    }
    buf_init(&b, 0);
    buf_init(&w, 0);
    from = sql;
    for (i = 0; i < p.nt; i++) {
        const struct ref *r;
        const struct tref *t;
        if (p.t[i].ref < 0)
            continue;
        r = &p.rf[p.t[i].ref];
        owner = r->table ? -1 : tgt[p.t[i].ref];
        if (owner < 0 || meets_itself(&p, tgt, i, owner))
            continue;
        t = &p.tr[owner];
        buf_append(&b, from, (size_t)(p.t[r->qtok].p - from));
        put_name(&b, t->alias ? t->alias : t->written);
        from = p.t[r->qtok].p + p.t[r->qtok].n;
        if (what) {
            buf_printf(&w, "%s%s.%s -> ", n ? ", " : "", r->qual, r->col);
            put_name(&w, t->alias ? t->alias : t->written);
            buf_printf(&w, ".%s", r->col);
        }
        n++;
    }
    free(tgt);
    parser_free(&p);
    return take_rewrite(&b, &w, from, n, out, what);
}

/* The one foreign key between schema table tb and the items of level lv
** (either direction): *item is the item, *near its column, *far tb's.
** 0 found, -1 none or more than one. */
static int sole_link(const struct parser *p, int lv, const struct db_table *tb,
                     int *item, const char **near, const char **far)
{
    int k, j, n = 0;

    for (k = 0; k < p->ntr; k++) {
        const struct tref *t = &p->tr[k];
        if (t->level != lv || !t->tb)
            continue;
        if (t->tb == tb)
            return -1; /* already in the query: not this fix's case */
        for (j = 0; j < t->tb->nfks; j++) /* item -> tb */
            if (strcasecmp(t->tb->fks[j].table, schema_qname(tb)) == 0) {
                *item = k;
                *near = t->tb->fks[j].from;
                *far = t->tb->fks[j].to;
                n++;
            }
        for (j = 0; j < tb->nfks; j++) /* tb -> item */
            if (strcasecmp(tb->fks[j].table, schema_qname(t->tb)) == 0) {
                *item = k;
                *near = tb->fks[j].to;
                *far = tb->fks[j].from;
                n++;
            }
    }
    return n == 1 ? 0 : -1;
}

/* A table's one primary-key column, or NULL. */
static const char *sole_pk(const struct db_table *tb)
{
    const char *pk = NULL;
    int j;

    for (j = 0; j < tb->ncols; j++)
        if (tb->cols[j].pk) {
            if (pk)
                return NULL;
            pk = tb->cols[j].name;
        }
    return pk;
}

/* A new alias for level lv: T<n+1> when its items are aliased T1, T2, ...,
** else the table's own name when no item is called so; NULL when
** neither fits (or out of memory). */
static char *new_alias(const struct parser *p, int lv, const char *table)
{
    char buf[32];
    int k, max = 0, tn = 0, taken = 0;

    for (k = 0; k < p->ntr; k++) {
        const struct tref *t = &p->tr[k];
        const char *nm = t->alias ? t->alias : t->written;
        if (!nm)
            continue;
        if ((nm[0] == 'T' || nm[0] == 't') && nm[1] >= '0' && nm[1] <= '9' &&
            strspn(nm + 1, "0123456789") == strlen(nm + 1)) {
            long v = strlen(nm + 1) < 6 ? strtol(nm + 1, NULL, 10) : 100000;
            tn++;
            if (v > max)
                max = (int)v;
        }
        if (strcasecmp(nm, table) == 0 && t->level == lv)
            taken = 1;
    }
    if (tn > 0 && max < 1000) {
        snprintf(buf, sizeof buf, "T%d", max + 1);
        return strdup(buf);
    }
    return taken ? NULL : strdup(table);
}

int sqla_join_missing(const char *sql, const struct db_schema *s, char **out,
                      char **what)
{
    struct parser p;
    struct buf b, w;
    const struct db_table *own = NULL;
    const struct ref *r0 = NULL;
    const char *near = NULL, *far = NULL, *from;
    char *alias = NULL;
    int rc, i, k, lv = -1, item = -1, n = 0, at;

    *out = NULL;
    if (what)
        *what = NULL;
    rc = parse_resolved(&p, sql, s);
    if (rc <= 0)
        return rc;
    /* The first column no table of its level has, that exactly one schema
    ** table has, linked to the level by exactly one foreign key. */
    for (k = 0; k < p.nrf && !own; k++) {
        const struct ref *r = &p.rf[k];
        int j, owners = 0;
        if (r->table || (r->qual && r->tref >= 0 && !p.tr[r->tref].tb) ||
            (r->qtok > 0 && punct(&p, r->qtok - 1, '.')))
            continue;
        lv = r->qual && r->tref >= 0 ? p.tr[r->tref].level : r->level;
        if (p.lv[lv].opaque || p.lv[lv].from_end < 1 || sole_owner(&p, lv,
                                                            r->col) >= 0)
            continue;
        for (j = 0; j < s->ntables; j++)
            if (!s->tables[j].is_view &&
                schema_column(&s->tables[j], r->col)) {
                owners++;
                own = &s->tables[j];
            }
        if (owners != 1 || sole_link(&p, lv, own, &item, &near, &far) ||
            (!far && !(far = sole_pk(own))) ||
            (!near && !(near = sole_pk(p.tr[item].tb)))) {
            own = NULL;
            continue;
        }
        r0 = r;
    }
    if (!own || !(alias = new_alias(&p, lv, own->name))) {
        parser_free(&p);
        return alias || !own ? 0 : -1;
    }
    buf_init(&b, 0);
    buf_init(&w, 0);
    from = sql;
    at = p.lv[lv].from_end - 1; /* the FROM clause's last token */
    for (i = 0; i < p.nt; i++) {
        const struct ref *r = p.t[i].ref >= 0 ? &p.rf[p.t[i].ref] : NULL;
        int lvr;
        if (r && r->table && !r->qual && r->tref >= 0 &&
            p.tr[r->tref].level == lv && r->level == lv &&
            schema_column(own, r->col)) {
            /* A bare column of the level the new table also has: it
            ** would turn ambiguous, so it keeps its table in words. */
            const struct tref *t = &p.tr[r->tref];
            buf_append(&b, from, (size_t)(p.t[i].p - from));
            put_name(&b, t->alias ? t->alias : t->written);
            buf_putc(&b, '.');
            from = p.t[i].p;
        } else if (r && !r->table && strcasecmp(r->col, r0->col) == 0) {
            lvr = r->qual && r->tref >= 0 ? p.tr[r->tref].level : r->level;
            if (lvr == lv) {
                /* Its qualifier becomes the new alias, or it gets one. */
                int q = r->qtok >= 0 ? r->qtok : i;
                buf_append(&b, from, (size_t)(p.t[q].p - from));
                put_name(&b, alias);
                if (r->qtok < 0)
                    buf_putc(&b, '.');
                from = r->qtok >= 0 ? p.t[q].p + p.t[q].n : p.t[q].p;
                n++;
            }
        }
        if (i == at) {
            const struct tref *t = &p.tr[item];
            buf_append(&b, from, (size_t)(p.t[i].p + p.t[i].n - from));
            from = p.t[i].p + p.t[i].n;
            buf_puts(&b, " JOIN ");
            if (own->namespace) {
                put_name(&b, own->namespace);
                buf_putc(&b, '.');
            }
            put_name(&b, own->name);
            if (strcmp(alias, own->name) != 0) {
                buf_puts(&b, " AS ");
                put_name(&b, alias);
            }
            buf_puts(&b, " ON ");
            put_name(&b, alias);
            buf_putc(&b, '.');
            put_name(&b, far);
            buf_puts(&b, " = ");
            put_name(&b, t->alias ? t->alias : t->written);
            buf_putc(&b, '.');
            put_name(&b, near);
            if (what) {
                buf_printf(&w, "%s%s%s: JOIN %s", r0->qual ? r0->qual : "",
                           r0->qual ? "." : "", r0->col, schema_qname(own));
                if (strcmp(alias, own->name) != 0)
                    buf_printf(&w, " AS %s", alias);
                buf_printf(&w, " ON %s.%s = %s.%s", alias, far,
                           t->alias ? t->alias : t->written, near);
            }
        }
    }
    parser_free(&p);
    free(alias);
    return take_rewrite(&b, &w, from, n, out, what) < 0 ? -1 : n > 0;
}

/* Free the strings of pairs j[0..n) and the array. */
static void free_pairs(struct sqla_join *j, int n)
{
    int k;

    for (k = 0; k < n; k++) {
        free(j[k].a.table);
        free(j[k].a.column);
        free(j[k].b.table);
        free(j[k].b.column);
    }
    free(j);
}

void sqla_free(struct sqla *a)
{
    int k, j;

    if (!a)
        return;
    for (k = 0; k < a->ntables; k++)
        free(a->tables[k]);
    free_pairs(a->joins, a->njoins);
    free_pairs(a->idle, a->nidle);
    for (k = 0; k < a->ncross; k++)
        free(a->cross_pairs[k]);
    for (k = 0; k < a->nlits; k++) {
        free(a->lits[k].col.table);
        free(a->lits[k].col.column);
        free(a->lits[k].literal);
    }
    for (k = 0; k < a->nouter; k++) {
        free(a->outer[k].col.table);
        free(a->outer[k].col.column);
        for (j = 0; j < a->outer[k].nfrom; j++)
            free(a->outer[k].from[j]);
        free(a->outer[k].from);
    }
    free(a->outer);
    for (k = 0; k < a->nself; k++) {
        free(a->self[k].col.table);
        free(a->self[k].col.column);
        free(a->self[k].text);
    }
    free(a->self);
    free(a->tables);
    free(a->cross_pairs);
    free(a->lits);
    free(a->agg_func);
    free(a->bare_col);
    memset(a, 0, sizeof *a);
}

/* ---------------------------------------------------------------------- */
/* Comparing as text                                                      */
/* ---------------------------------------------------------------------- */

/* A token that may stand on one side of the comparison: a name, a
** string or a number. */
static int operand(const struct parser *p, int i)
{
    return is_name(p, i) ||
           (i >= 0 && i < p->nt && (p->t[i].kind == SQLX_STRING ||
                                    p->t[i].kind == SQLX_NUMBER));
}

/* An arithmetic or concatenation operator: the operand next to it is only
** part of the comparison's side. */
static int arith(const struct parser *p, int i)
{
    return i >= 0 && i < p->nt && p->t[i].kind == SQLX_PUNCT &&
           strchr("+-*/%|", p->t[i].p[0]);
}

int sqla_cast_compare(const char *sql, int pos, char **out, char **what)
{
    struct parser p;
    struct buf b, w;
    const char *at, *oe, *ls, *le, *rs, *re;
    int op, ope, k, rc;

    *out = NULL;
    if (what)
        *what = NULL;
    if (!sql || pos < 0 || (size_t)pos >= strlen(sql))
        return 0;
    memset(&p, 0, sizeof p);
    rc = tokenize(&p, sql);
    if (rc) {
        parser_free(&p);
        return rc < 0 ? -1 : 0;
    }
    at = sql + pos;
    for (op = 0; op < p.nt && p.t[op].p < at; op++)
        ;
    /* the operator: one or two of = < > ! written together */
    if (op >= p.nt || p.t[op].p != at ||
        !(punct(&p, op, '=') || punct(&p, op, '<') || punct(&p, op, '>') ||
          punct(&p, op, '!')))
        goto none;
    ope = op + 1;
    if (ope < p.nt && p.t[ope].p == at + 1 &&
        (punct(&p, ope, '=') || punct(&p, ope, '>')))
        ope++;
    oe = p.t[ope - 1].p + p.t[ope - 1].n;
    /* the left operand: a literal, or name(.name)* right before it */
    k = op - 1;
    if (!operand(&p, k))
        goto none;
    if (is_name(&p, k))
        while (punct(&p, k - 1, '.') && is_name(&p, k - 2))
            k -= 2;
    if (punct(&p, k - 1, '.') || arith(&p, k - 1))
        goto none;
    ls = p.t[k].p;
    le = p.t[op - 1].p + p.t[op - 1].n;
    /* the right operand, likewise */
    k = ope;
    if (!operand(&p, k))
        goto none;
    if (is_name(&p, k))
        while (punct(&p, k + 1, '.') && is_name(&p, k + 2))
            k += 2;
    if (punct(&p, k + 1, '(') || punct(&p, k + 1, '.') || arith(&p, k + 1))
        goto none; /* a function call, a longer name, arithmetic */
    rs = p.t[ope].p;
    re = p.t[k].p + p.t[k].n;
    parser_free(&p);
    buf_init(&b, 0);
    buf_init(&w, 0);
    buf_printf(&b, "%.*sCAST(%.*s AS TEXT)%.*sCAST(%.*s AS TEXT)",
               (int)(ls - sql), sql, (int)(le - ls), ls, (int)(rs - le), le,
               (int)(re - rs), rs);
    buf_printf(&w, "%.*s %.*s %.*s compared as text", (int)(le - ls), ls,
               (int)(oe - at), at, (int)(re - rs), rs);
    return take_rewrite(&b, &w, re, 1, out, what);
none:
    parser_free(&p);
    return 0;
}
