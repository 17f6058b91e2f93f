/* hardness.c - Spider's eval_hardness over a light parse of the gold SQL. */
#include "eval/hardness.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/extract.h"

/*
** Tokens (no blanks or comments) carry the parenthesis depth they sit at:
** '(' and ')' have the outer depth, what is between them one more. A
** query span [a, b) at depth d sees only tokens of depth d as its own.
*/

struct tok {
    const char *p;
    size_t n;
    int kind;
    int depth;
};

struct toks {
    struct tok *t;
    int n;
};

static int word(const struct tok *t, const char *w)
{
    return t->kind == SQLX_WORD && strlen(w) == t->n &&
           strncasecmp(t->p, w, t->n) == 0;
}

static int punct(const struct tok *t, char c)
{
    return t->kind == SQLX_PUNCT && t->p[0] == c;
}

static int tokenize(const char *sql, struct toks *ts)
{
    const char *p = sql;
    size_t n;
    int kind, depth = 0, cap = 64;

    ts->n = 0;
    ts->t = malloc((size_t)cap * sizeof *ts->t);
    if (!ts->t)
        return -1;
    while ((n = sqlx_token(p, &kind)) > 0) {
        if (kind != SQLX_SPACE && kind != SQLX_COMMENT) {
            if (ts->n == cap) {
                struct tok *nt;
                cap *= 2;
                nt = realloc(ts->t, (size_t)cap * sizeof *nt);
                if (!nt)
                    return -1;
                ts->t = nt;
            }
            if (kind == SQLX_PUNCT && *p == ')' && depth > 0)
                depth--;
            ts->t[ts->n].p = p;
            ts->t[ts->n].n = n;
            ts->t[ts->n].kind = kind;
            ts->t[ts->n].depth = depth;
            ts->n++;
            if (kind == SQLX_PUNCT && *p == '(')
                depth++;
        }
        p += n;
    }
    return 0;
}

/* First token in [a, b) at depth d that is one of the words, or b. */
static int find_word(const struct toks *ts, int a, int b, int d,
                     const char *const *words)
{
    int i, k;

    for (i = a; i < b; i++) {
        if (ts->t[i].depth != d)
            continue;
        for (k = 0; words[k]; k++)
            if (word(&ts->t[i], words[k]))
                return i;
    }
    return b;
}

static int is_agg(const struct tok *t)
{
    return word(t, "max") || word(t, "min") || word(t, "count") ||
           word(t, "sum") || word(t, "avg");
}

/* Conditions of one clause: what the official counts look at. */
struct conds {
    int n;          /* condition units */
    int n_andor;    /* AND/OR between them */
    int n_or;
    int n_like;
    int n_not;      /* units with NOT before the operator */
    int n_nested;   /* subqueries as values */
};

/* One condition unit [a, b) at depth d. */
static void cond_unit(const struct toks *ts, int a, int b, int d,
                      struct conds *c)
{
    int i;

    c->n++;
    for (i = a; i < b; i++) {
        const struct tok *t = &ts->t[i];
        if (t->depth != d)
            continue;
        if (word(t, "like"))
            c->n_like++;
        if (word(t, "not") && i > a && !word(&ts->t[i - 1], "is"))
            c->n_not++;
        if (punct(t, '(') && i + 1 < b && word(&ts->t[i + 1], "select"))
            c->n_nested++;
    }
}

static int op_punct(const struct tok *t)
{
    return punct(t, '=') || punct(t, '<') || punct(t, '>') || punct(t, '!');
}

/*
** Split [a, b) at AND/OR of depth d (not the AND of a BETWEEN). As in the
** official parser, a value that is a column name (x = T2.y, and either
** value of a BETWEEN) runs on up to the next AND: nothing in that stretch
** counts (an OR does not split, a LIKE or a NOT is not seen).
*/
static void conditions(const struct toks *ts, int a, int b, int d,
                       struct conds *c)
{
    int i, start = a, between = 0, after_op = 0, cut = -1;

    if (a >= b)
        return;
    for (i = a; i < b; i++) {
        const struct tok *t = &ts->t[i];
        if (t->depth != d)
            continue;
        if (cut >= 0 && !word(t, "and"))
            continue;   /* read on by the column value before it */
        if (op_punct(t) || word(t, "like") || word(t, "in") ||
            word(t, "is")) {
            after_op = 1;
            continue;
        }
        if (word(t, "between")) {
            between = 1;
            after_op = 1;
            continue;
        }
        if (after_op) {
            after_op = 0;
            if (t->kind == SQLX_WORD && !word(t, "not") &&
                !word(t, "null") && !word(t, "select")) {
                cut = i + 1;
                continue;
            }
        }
        if (word(t, "and") && between) {
            between = 0;
            cut = -1;
            after_op = 1;   /* the BETWEEN's second value follows */
        } else if (word(t, "and") || word(t, "or")) {
            cond_unit(ts, start, cut >= 0 ? cut : i, d, c);
            c->n_andor++;
            if (word(t, "or"))
                c->n_or++;
            start = i + 1;
            cut = -1;
        }
    }
    cond_unit(ts, start, cut >= 0 ? cut : b, d, c);
}

/* Items of a comma list [a, b) at depth d; *aggs gets the items that start
** with an aggregate call. */
static int items(const struct toks *ts, int a, int b, int d, int *aggs)
{
    int i, n = 0, start = 1;

    for (i = a; i < b; i++) {
        const struct tok *t = &ts->t[i];
        if (t->depth != d)
            continue;
        if (start) {
            n++;
            if (aggs && is_agg(t) && i + 1 < b && punct(&ts->t[i + 1], '('))
                (*aggs)++;
            start = 0;
        }
        if (punct(t, ','))
            start = 1;
    }
    return n;
}

/* Aggregates among the (at most two) operands of each ORDER BY item. */
static int order_aggs(const struct toks *ts, int a, int b, int d)
{
    int i, n = 0, operand = 0, start = 1;

    for (i = a; i < b; i++) {
        const struct tok *t = &ts->t[i];
        if (t->depth != d)
            continue;
        if (start && operand < 2) {
            if (is_agg(t) && i + 1 < b && punct(&ts->t[i + 1], '('))
                n++;
            operand++;
        }
        start = 0;
        if (punct(t, ',')) {
            start = 1;
            operand = 0;
        } else if (punct(t, '+') || punct(t, '-') || punct(t, '*') ||
                   punct(t, '/')) {
            start = 1;
        }
    }
    return n;
}

/* Where the clause at pos[k] ends: at the next clause present, or b. */
static int clause_end(const int *pos, int npos, int k, int b)
{
    int j, e = b;

    for (j = 0; j < npos; j++)
        if (pos[j] > pos[k] && pos[j] < e)
            e = pos[j];
    return e;
}

enum { C_FROM, C_WHERE, C_GROUP, C_HAVING, C_ORDER, C_LIMIT, C_N };

/* The counts of one query [a, b) at depth d (set operators excluded). */
static void query(const struct toks *ts, int a, int b, int d,
                  struct hardness_counts *hc)
{
    static const char *const names[C_N] = {"from", "where", "group",
                                           "having", "order", "limit"};
    const char *one[2] = {NULL, NULL};
    struct conds on, wh, hv;
    int pos[C_N], end[C_N], sel, i, k, seg, agg;
    int tables = 0, sel_items, sel_aggs = 0, grp_items = 0, grp_aggs = 0;
    int ord_aggs = 0;

    memset(&on, 0, sizeof on);
    memset(&wh, 0, sizeof wh);
    memset(&hv, 0, sizeof hv);
    for (k = 0; k < C_N; k++) {
        one[0] = names[k];
        pos[k] = find_word(ts, a, b, d, one);
    }
    for (k = 0; k < C_N; k++)
        end[k] = clause_end(pos, C_N, k, b);
    sel = a;
    if (sel < b && word(&ts->t[sel], "select"))
        sel++;
    if (sel < b && word(&ts->t[sel], "distinct"))
        sel++;

    /* SELECT list */
    sel_items = items(ts, sel, pos[C_FROM] < b ? pos[C_FROM] : end[C_FROM],
                      d, &sel_aggs);

    /* FROM: tables (JOINs, commas) and the ON conditions */
    if (pos[C_FROM] < b) {
        tables = 1;
        seg = -1;
        for (i = pos[C_FROM] + 1; i < end[C_FROM]; i++) {
            const struct tok *t = &ts->t[i];
            if (t->depth != d)
                continue;
            if (word(t, "join") || punct(t, ',')) {
                if (seg >= 0)
                    conditions(ts, seg, i, d, &on);
                seg = -1;
                tables++;
            } else if (word(t, "on")) {
                if (seg >= 0)
                    conditions(ts, seg, i, d, &on);
                seg = i + 1;
            }
        }
        if (seg >= 0)
            conditions(ts, seg, end[C_FROM], d, &on);
    }
    if (pos[C_WHERE] < b)
        conditions(ts, pos[C_WHERE] + 1, end[C_WHERE], d, &wh);
    if (pos[C_GROUP] < b) {
        i = pos[C_GROUP] + 1;
        if (i < end[C_GROUP] && word(&ts->t[i], "by"))
            i++;
        grp_items = items(ts, i, end[C_GROUP], d, &grp_aggs);
    }
    if (pos[C_HAVING] < b)
        conditions(ts, pos[C_HAVING] + 1, end[C_HAVING], d, &hv);
    if (pos[C_ORDER] < b) {
        i = pos[C_ORDER] + 1;
        if (i < end[C_ORDER] && word(&ts->t[i], "by"))
            i++;
        ord_aggs = order_aggs(ts, i, end[C_ORDER], d);
    }

    /* count_component1 */
    hc->comp1 += wh.n > 0;
    hc->comp1 += grp_items > 0;
    hc->comp1 += pos[C_ORDER] < b;
    hc->comp1 += pos[C_LIMIT] < b;
    if (tables > 0)
        hc->comp1 += tables - 1;
    hc->comp1 += on.n_or + wh.n_or + hv.n_or;
    hc->comp1 += on.n_like + wh.n_like + hv.n_like;
    /* count_component2: subqueries in conditions (not FROM subqueries) */
    hc->comp2 += on.n_nested + wh.n_nested + hv.n_nested;
    /* count_others, with the official aggregate count (see header) */
    agg = sel_aggs + wh.n_not + grp_aggs + ord_aggs + hv.n_not + hv.n_andor;
    hc->others += agg > 1;
    hc->others += sel_items > 1;
    hc->others += wh.n > 1;
    hc->others += grp_items > 1;
}

static const char *level(const struct hardness_counts *c)
{
    int c1 = c->comp1, c2 = c->comp2, o = c->others;

    if (c1 <= 1 && o == 0 && c2 == 0)
        return "easy";
    if ((o <= 2 && c1 <= 1 && c2 == 0) || (c1 <= 2 && o < 2 && c2 == 0))
        return "medium";
    if ((o > 2 && c1 <= 2 && c2 == 0) ||
        (2 < c1 && c1 <= 3 && o <= 2 && c2 == 0) ||
        (c1 <= 1 && o == 0 && c2 <= 1))
        return "hard";
    return "extra";
}

const char *hardness_classify(const char *sql, struct hardness_counts *out)
{
    static const char *const setops[] = {"intersect", "union", "except",
                                         NULL};
    struct hardness_counts hc = {0, 0, 0};
    struct toks ts = {NULL, 0};
    int a = 0, b, d = 0, end;

    if (sql && tokenize(sql, &ts) == 0) {
        b = ts.n;
        /* A statement wrapped whole in parentheses is the same query. */
        while (a < b && punct(&ts.t[a], '(') && punct(&ts.t[b - 1], ')') &&
               ts.t[b - 1].depth == ts.t[a].depth) {
            int i, closes_early = 0;
            for (i = a + 1; i < b - 1; i++)
                if (ts.t[i].depth == ts.t[a].depth)
                    closes_early = 1;
            if (closes_early)
                break;
            a++;
            b--;
            d++;
        }
        if (b > a && punct(&ts.t[b - 1], ';'))
            b--;
        end = find_word(&ts, a, b, d, setops);
        if (end < b)
            hc.comp2++;
        query(&ts, a, end, d, &hc);
    }
    free(ts.t);
    if (out)
        *out = hc;
    return level(&hc);
}
