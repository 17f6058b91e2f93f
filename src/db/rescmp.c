/* rescmp.c - do two results denote the same answer? (Spider's EX rules) */
#include "db/rescmp.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"

/*
** Design (see compare.h for the rules):
** - Values are compared the way Python compares what sqlite3 returns.
**   vcmp() is a total order whose "equal" is exactly Python's `==` on those
**   values (numbers by exact value across int/float, text and blobs by
**   bytes, NULL only equal to NULL), so sorting with it turns multiset and
**   set comparisons into sorted-list comparisons.
** - Rows are never copied deeply: a row is a pointer into the result's
**   cells, or a small array of value structs that share the strings.
*/

/* ---------------------------------------------------------------------- */
/* Values                                                                 */
/* ---------------------------------------------------------------------- */

static int vrank(const askdb_value *v)
{
    switch (v->type) {
    case ASKDB_NULL: return 0;
    case ASKDB_INTEGER:
    case ASKDB_REAL: return 1;
    case ASKDB_TEXT: return 2;
    case ASKDB_BLOB: return 3;
    }
    return 4;
}

/* Exact comparison of an integer with a double (no rounding of i). */
static int cmp_int_real(int64_t i, double d)
{
    double fl;
    int64_t di;

    if (d < -9223372036854775808.0)
        return 1;
    if (d >= 9223372036854775808.0)
        return -1;
    fl = floor(d);
    di = (int64_t)fl;
    if (i != di)
        return i < di ? -1 : 1;
    return fl < d ? -1 : 0;
}

static int cmp_bytes(const char *a, size_t na, const char *b, size_t nb)
{
    int c = memcmp(a, b, na < nb ? na : nb);

    if (c)
        return c < 0 ? -1 : 1;
    return na == nb ? 0 : (na < nb ? -1 : 1);
}

/* Total order; 0 exactly when Python's == holds. */
static int vcmp(const askdb_value *a, const askdb_value *b)
{
    int ra = vrank(a), rb = vrank(b);

    if (ra != rb)
        return ra < rb ? -1 : 1;
    switch (a->type) {
    case ASKDB_NULL:
        return 0;
    case ASKDB_INTEGER:
        if (b->type == ASKDB_INTEGER)
            return a->i == b->i ? 0 : (a->i < b->i ? -1 : 1);
        return cmp_int_real(a->i, b->d);
    case ASKDB_REAL:
        if (b->type == ASKDB_INTEGER)
            return -cmp_int_real(b->i, a->d);
        return a->d == b->d ? 0 : (a->d < b->d ? -1 : 1);
    case ASKDB_TEXT:
    case ASKDB_BLOB:
        return cmp_bytes(a->s, a->len, b->s, b->len);
    }
    return 0;
}

/* Rows are compared lexicographically; every row of a list has ncols. */
struct row {
    const askdb_value *v;
    int ncols;
};

static int rowcmp(const void *pa, const void *pb)
{
    const struct row *a = pa, *b = pb;
    int i, c;

    for (i = 0; i < a->ncols; i++) {
        c = vcmp(&a->v[i], &b->v[i]);
        if (c)
            return c;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Python's str() of a value, for the official quick rejection            */
/* ---------------------------------------------------------------------- */

void rescmp_py_float_repr(double d, char *out, size_t outlen)
{
    char tmp[40], digits[24];
    const char *p;
    int prec, exp10, nd = 0, neg, i;
    struct buf b;
    char *s;

    if (isnan(d)) {
        snprintf(out, outlen, "nan");
        return;
    }
    if (isinf(d)) {
        snprintf(out, outlen, "%s", d < 0 ? "-inf" : "inf");
        return;
    }
    /* The shortest %e precision that reads back as d: Python's repr. */
    for (prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    neg = tmp[0] == '-';
    for (p = tmp + neg; *p && *p != 'e'; p++)
        if (isdigit((unsigned char)*p) && nd < (int)sizeof digits - 1)
            digits[nd++] = *p;
    digits[nd] = '\0';
    exp10 = *p == 'e' ? (int)strtol(p + 1, NULL, 10) : 0;
    while (nd > 1 && digits[nd - 1] == '0') /* %e pads; repr does not */
        digits[--nd] = '\0';

    buf_init(&b, 64);
    if (neg)
        buf_putc(&b, '-');
    if (exp10 < -4 || exp10 >= 16) {
        buf_putc(&b, digits[0]);
        if (nd > 1) {
            buf_putc(&b, '.');
            buf_puts(&b, digits + 1);
        }
        buf_printf(&b, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    } else if (exp10 < 0) {
        buf_puts(&b, "0.");
        for (i = 0; i < -exp10 - 1; i++)
            buf_putc(&b, '0');
        buf_puts(&b, digits);
    } else {
        for (i = 0; i <= exp10; i++)
            buf_putc(&b, i < nd ? digits[i] : '0');
        buf_putc(&b, '.');
        if (nd > exp10 + 1)
            buf_puts(&b, digits + exp10 + 1);
        else
            buf_putc(&b, '0');
    }
    s = buf_steal(&b);
    snprintf(out, outlen, "%s", s ? s : "?");
    free(s);
}

/* Python's repr() of bytes: b'...' with its quoting and escapes. */
static void py_bytes_repr(struct buf *b, const unsigned char *s, size_t n)
{
    size_t i;
    int sq = 0, dq = 0;
    char q;

    for (i = 0; i < n; i++) {
        sq |= s[i] == '\'';
        dq |= s[i] == '"';
    }
    q = sq && !dq ? '"' : '\'';
    buf_putc(b, 'b');
    buf_putc(b, q);
    for (i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == (unsigned char)q || c == '\\') {
            buf_putc(b, '\\');
            buf_putc(b, (char)c);
        } else if (c == '\t') {
            buf_puts(b, "\\t");
        } else if (c == '\n') {
            buf_puts(b, "\\n");
        } else if (c == '\r') {
            buf_puts(b, "\\r");
        } else if (c < 0x20 || c >= 0x7f) {
            buf_printf(b, "\\x%02x", c);
        } else {
            buf_putc(b, (char)c);
        }
    }
    buf_putc(b, q);
}

/* str(v) + str(type(v)) into b (may hold NUL bytes from text). */
static void py_key(struct buf *b, const askdb_value *v)
{
    char f[40];

    switch (v->type) {
    case ASKDB_NULL:
        buf_puts(b, "None<class 'NoneType'>");
        break;
    case ASKDB_INTEGER:
        buf_printf(b, "%lld<class 'int'>", (long long)v->i);
        break;
    case ASKDB_REAL:
        rescmp_py_float_repr(v->d, f, sizeof f);
        buf_printf(b, "%s<class 'float'>", f);
        break;
    case ASKDB_TEXT:
        buf_append(b, v->s, v->len);
        buf_puts(b, "<class 'str'>");
        break;
    case ASKDB_BLOB:
        py_bytes_repr(b, (const unsigned char *)v->s, v->len);
        buf_puts(b, "<class 'bytes'>");
        break;
    }
}

char *rescmp_py_key(const askdb_value *v)
{
    struct buf b;

    buf_init(&b, 0);
    py_key(&b, v);
    return buf_steal(&b);
}

/* ---------------------------------------------------------------------- */
/* The official quick rejection (quick_rej with unorder_row)              */
/* ---------------------------------------------------------------------- */

struct keyed {
    const askdb_value *v;
    const char *key;
    size_t klen;
};

static int keyedcmp(const void *pa, const void *pb)
{
    const struct keyed *a = pa, *b = pb;

    /* Python compares str by code point; for UTF-8 that is byte order. */
    return cmp_bytes(a->key, a->klen, b->key, b->klen);
}

/*
** Each row's values sorted by their Python key, as one value array of
** nrows * ncols (sharing strings with r). NULL when out of memory.
*/
static askdb_value *unordered_rows(const askdb_result *r)
{
    askdb_value *out;
    struct keyed *k;
    struct buf *keys;
    long row;
    int c, failed = 0;

    out = calloc((size_t)(r->nrows * r->ncols) + 1, sizeof *out);
    k = calloc((size_t)r->ncols + 1, sizeof *k);
    keys = calloc((size_t)r->ncols + 1, sizeof *keys);
    if (!out || !k || !keys) {
        free(out);
        free(k);
        free(keys);
        return NULL;
    }
    for (c = 0; c < r->ncols; c++)
        buf_init(&keys[c], 0);
    for (row = 0; row < r->nrows && !failed; row++) {
        const askdb_value *src = &r->cells[row * r->ncols];
        for (c = 0; c < r->ncols; c++) {
            buf_reset(&keys[c]);
            py_key(&keys[c], &src[c]);
            if (buf_err(&keys[c]))
                failed = 1;
            k[c].v = &src[c];
            k[c].key = keys[c].data ? keys[c].data : "";
            k[c].klen = keys[c].len;
        }
        qsort(k, (size_t)r->ncols, sizeof *k, keyedcmp);
        for (c = 0; c < r->ncols; c++)
            out[row * r->ncols + c] = *k[c].v;
    }
    for (c = 0; c < r->ncols; c++)
        buf_free(&keys[c]);
    free(k);
    free(keys);
    if (failed) {
        free(out);
        return NULL;
    }
    return out;
}

/* Row list over a value array of nrows * ncols. NULL when out of memory. */
static struct row *row_list(const askdb_value *cells, long nrows, int ncols)
{
    struct row *rows = calloc((size_t)nrows + 1, sizeof *rows);
    long i;

    if (!rows)
        return NULL;
    for (i = 0; i < nrows; i++) {
        rows[i].v = &cells[i * ncols];
        rows[i].ncols = ncols;
    }
    return rows;
}

/* Sort rows and drop duplicates; returns the new count. */
static long sort_unique(struct row *rows, long n)
{
    long i, k = 0;

    qsort(rows, (size_t)n, sizeof *rows, rowcmp);
    for (i = 0; i < n; i++)
        if (k == 0 || rowcmp(&rows[k - 1], &rows[i]))
            rows[k++] = rows[i];
    return k;
}

/* 1 when quick_rej() lets the pair through, 0 when it rejects, -1 OOM. */
static int quick_pass(const askdb_result *g, const askdb_result *p,
                      int order_matters)
{
    askdb_value *ug = unordered_rows(g), *up = unordered_rows(p);
    struct row *rg = NULL, *rp = NULL;
    long i, ng, np;
    int ret = -1;

    if (!ug || !up)
        goto out;
    rg = row_list(ug, g->nrows, g->ncols);
    rp = row_list(up, p->nrows, p->ncols);
    if (!rg || !rp)
        goto out;
    ret = 1;
    if (order_matters) {
        for (i = 0; i < g->nrows && ret; i++)
            if (rowcmp(&rg[i], &rp[i]))
                ret = 0;
        goto out;
    }
    ng = sort_unique(rg, g->nrows);
    np = sort_unique(rp, p->nrows);
    if (ng != np)
        ret = 0;
    for (i = 0; i < ng && ret; i++)
        if (rowcmp(&rg[i], &rp[i]))
            ret = 0;
out:
    free(ug);
    free(up);
    free(rg);
    free(rp);
    return ret;
}

/* ---------------------------------------------------------------------- */
/* Column permutations                                                    */
/* ---------------------------------------------------------------------- */

struct perm_search {
    const askdb_result *g, *p;
    int order_matters;
    int n;                   /* columns */
    unsigned char *ok;       /* ok[i*n+j]: pred column j fits gold col i */
    int *perm, *used;
    struct row *gsorted;     /* gold rows, sorted (unordered case) */
    askdb_value *pcells;     /* permuted prediction */
    struct row *prows;
    long tried;
    int found, oom;
};

static int valcmp_q(const void *a, const void *b)
{
    return vcmp(*(const askdb_value *const *)a, *(const askdb_value *const *)b);
}

/* ok[i][j] = every value of pred column j occurs in gold column i (the
** official get_constraint_permutation test, over every row). */
static int fill_ok(struct perm_search *s)
{
    const askdb_value **col;
    long r, nr = s->g->nrows;
    int i, j;

    col = calloc((size_t)nr + 1, sizeof *col);
    if (!col)
        return -1;
    for (i = 0; i < s->n; i++) {
        for (r = 0; r < nr; r++)
            col[r] = &s->g->cells[r * s->n + i];
        qsort(col, (size_t)nr, sizeof *col, valcmp_q);
        for (j = 0; j < s->n; j++) {
            int fits = 1;
            for (r = 0; r < s->p->nrows && fits; r++) {
                const askdb_value *v = &s->p->cells[r * s->n + j];
                fits = bsearch(&v, col, (size_t)nr, sizeof *col,
                               valcmp_q) != NULL;
            }
            s->ok[i * s->n + j] = (unsigned char)fits;
        }
    }
    free(col);
    return 0;
}

/* Does the prediction, columns permuted by s->perm, equal the gold? */
static int perm_matches(struct perm_search *s)
{
    long r, nr = s->g->nrows;
    int i, n = s->n;

    if (s->order_matters) {
        for (r = 0; r < nr; r++)
            for (i = 0; i < n; i++)
                if (vcmp(&s->g->cells[r * n + i],
                         &s->p->cells[r * n + s->perm[i]]))
                    return 0;
        return 1;
    }
    for (r = 0; r < nr; r++) {
        for (i = 0; i < n; i++)
            s->pcells[r * n + i] = s->p->cells[r * n + s->perm[i]];
        s->prows[r].v = &s->pcells[r * n];
        s->prows[r].ncols = n;
    }
    qsort(s->prows, (size_t)nr, sizeof *s->prows, rowcmp);
    for (r = 0; r < nr; r++)
        if (rowcmp(&s->gsorted[r], &s->prows[r]))
            return 0;
    return 1;
}

/* Try every bijection allowed by ok[], identity-first order. */
static void search(struct perm_search *s, int i)
{
    int j;

    if (s->found || s->tried >= RESCMP_MAX_PERMS)
        return;
    if (i == s->n) {
        s->tried++;
        if (perm_matches(s))
            s->found = 1;
        return;
    }
    for (j = 0; j < s->n && !s->found; j++) {
        int jj = (i + j) % s->n;
        if (s->used[jj] || !s->ok[i * s->n + jj])
            continue;
        s->used[jj] = 1;
        s->perm[i] = jj;
        search(s, i + 1);
        s->used[jj] = 0;
    }
}

int rescmp_equal(const askdb_result *gold, const askdb_result *pred,
                  int order_matters)
{
    struct perm_search s;
    int ret = -1, q;
    size_t n;

    if (gold->nrows == 0 && pred->nrows == 0)
        return 1;
    if (gold->nrows != pred->nrows)
        return 0;
    if (gold->ncols != pred->ncols)
        return 0;
    q = quick_pass(gold, pred, order_matters);
    if (q <= 0)
        return q;

    memset(&s, 0, sizeof s);
    s.g = gold;
    s.p = pred;
    s.order_matters = order_matters;
    s.n = gold->ncols;
    n = (size_t)s.n;
    s.ok = calloc(n * n + 1, 1);
    s.perm = calloc(n + 1, sizeof *s.perm);
    s.used = calloc(n + 1, sizeof *s.used);
    if (!s.ok || !s.perm || !s.used)
        goto out;
    if (!order_matters) {
        s.gsorted = row_list(gold->cells, gold->nrows, s.n);
        s.pcells = calloc((size_t)(gold->nrows * s.n) + 1, sizeof *s.pcells);
        s.prows = calloc((size_t)gold->nrows + 1, sizeof *s.prows);
        if (!s.gsorted || !s.pcells || !s.prows)
            goto out;
        qsort(s.gsorted, (size_t)gold->nrows, sizeof *s.gsorted, rowcmp);
    }
    if (fill_ok(&s))
        goto out;
    search(&s, 0);
    ret = s.found;
out:
    free(s.ok);
    free(s.perm);
    free(s.used);
    free(s.gsorted);
    free(s.pcells);
    free(s.prows);
    return ret;
}

int rescmp_order_matters(const char *gold_sql)
{
    const char *p;

    for (p = gold_sql; *p; p++)
        if (strncasecmp(p, "order by", 8) == 0)
            return 1;
    return 0;
}

