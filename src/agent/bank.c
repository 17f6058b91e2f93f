/* bank.c - the built-in bank of other databases' pairs and its search. */
#include "agent/bank.h"

#include <libstemmer.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>

#include "agent/link.h"
#include "sql/extract.h"

/*
** Invariants:
**   - the bank (one per process) is built by load() under pthread_once
**     and only read afterwards; entries point into one copy of the text.
**   - a feature is the XXH3-64 of a token ("u" + stem) or of a pair of
**     adjacent tokens ("b" + first + ' ' + second); an entry's features
**     are sorted and unique, so two entries meet by a merge.
**   - idf[] is sorted by feature, for bsearch; N = the number of entries.
*/

#define MAX_WORD 63
#define NEIGHBOURS 12                /* the close pairs whose skeletons vote */
#define BANK_SKELETON_WEIGHT 0.3
#define MAX_SQL_BYTES 400            /* longer pairs cost too many tokens */

extern const char askdb_bank_tsv[];  /* build/gen/bank.c, from data/bank.tsv */

struct feats {
    uint64_t *v;
    int n, cap;
};

struct entry {
    int db;                          /* index into bank.dbs */
    const char *question, *sql;
    uint64_t *f;                     /* sorted, unique */
    int nf;
    double norm;                     /* sqrt(sum of idf^2 over f) */
};

struct idf {
    uint64_t f;
    double w;
};

static struct {
    char *text;
    const char **dbs;
    int ndbs;
    struct entry *e;
    int n;
    struct idf *idf;
    int nidf;
    int failed;
} bank;

static pthread_once_t bank_once = PTHREAD_ONCE_INIT;

/* ---------------------------------------------------------------------- */
/* Words and masks                                                        */
/* ---------------------------------------------------------------------- */

/* A list of strings, each malloc()ed: the stems of a database's names
** (sorted by stems_seal for bsearch), or a question's tokens ("<n>",
** "<v>" or a stem). */
struct strs {
    char **v;
    int n, cap;
};

static void strs_free(struct strs *s)
{
    int i;

    for (i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Append str (taken over; NULL = out of memory). Returns 0 or -1. */
static int strs_push(struct strs *s, char *str)
{
    if (!str)
        return -1;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 32;
        char **v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v) {
            free(str);
            return -1;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = str;
    return 0;
}

static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int stems_has(const struct strs *s, const char *w)
{
    return s->n > 0 &&
           bsearch(&w, s->v, (size_t)s->n, sizeof *s->v, cmp_strp) != NULL;
}

static int is_upper(int c) { return c >= 'A' && c <= 'Z'; }
static int is_lower(int c) { return c >= 'a' && c <= 'z'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_wordc(int c)
{
    return is_lower(c) || is_upper(c) || is_digit(c) || c >= 0x80;
}

/* The Snowball stem of w (lower case) as a malloc()ed string. */
static char *stem(struct sb_stemmer *st, const char *w)
{
    const sb_symbol *sym = sb_stemmer_stem(st, (const sb_symbol *)w,
                                           (int)strlen(w));
    size_t n;
    char *s;

    if (!sym)
        return NULL;
    n = (size_t)sb_stemmer_length(st);
    s = malloc(n + 1);
    if (s) {
        memcpy(s, sym, n);
        s[n] = '\0';
    }
    return s;
}

struct stems_to {
    struct sb_stemmer *st;
    struct strs *s;
};

/* link_split()'s callback for stems_add_name(). */
static int stems_push_word(const char *w, size_t len, void *ud)
{
    struct stems_to *t = ud;

    if (len < 2 || is_digit((unsigned char)w[0]) || link_stop_word(w))
        return 0;
    return strs_push(t->s, stem(t->st, w));
}

/* Add the words of name (split as link_split() splits names; grammar
** words, single letters and words that start with a digit left out) to
** s, unsorted. Returns 0 or -1 (out of memory). */
static int stems_add_name(struct sb_stemmer *st, struct strs *s,
                          const char *name)
{
    struct stems_to t = {st, s};

    return link_split(name, 1, stems_push_word, &t);
}

/* Sort s and drop repeats. */
static void stems_seal(struct strs *s)
{
    int i, j = 0;

    if (s->n == 0)
        return;
    qsort(s->v, (size_t)s->n, sizeof *s->v, cmp_strp);
    for (i = 0; i < s->n; i++) {
        if (j > 0 && strcmp(s->v[j - 1], s->v[i]) == 0)
            free(s->v[i]);
        else
            s->v[j++] = s->v[i];
    }
    s->n = j;
}

/* Append tok (taken over; NULL = out of memory) to a question's tokens,
** one mark for a run of the same mark. Returns 0 or -1. */
static int toks_push(struct strs *t, char *tok)
{
    if (tok && tok[0] == '<' && t->n > 0 && strcmp(t->v[t->n - 1], tok) == 0) {
        free(tok);
        return 0;
    }
    return strs_push(t, tok);
}

/* A quote that opens a value: ' or " not inside a word (an apostrophe is
** "student's"), and closed later in the question before a non-word byte.
** Returns the closing quote or NULL. */
static const unsigned char *quoted(const unsigned char *q,
                                   const unsigned char *start)
{
    const unsigned char *e;

    if ((*q != '\'' && *q != '"') || (q > start && is_wordc(q[-1])))
        return NULL;
    for (e = q + 1; *e; e++)
        if (*e == *q && !is_wordc(e[1]))
            return e > q + 1 ? e : NULL;
    return NULL;
}

/* Mask question against the name stems of its database (see bank.h). */
static int mask(struct sb_stemmer *st, const char *question,
                const struct strs *names, struct strs *out)
{
    const unsigned char *start = (const unsigned char *)question, *p, *e;
    char w[MAX_WORD + 1];
    int nwords = 0;

    for (p = start; *p;) {
        size_t len = 0;
        int cap;

        if ((e = quoted(p, start)) != NULL) {
            if (toks_push(out, strdup("<v>")))
                return -1;
            p = e + 1;
            nwords++;
            continue;
        }
        if (!is_wordc(*p)) {
            p++;
            continue;
        }
        cap = is_upper(*p);
        if (is_digit(*p)) {
            while (is_wordc(*p) || ((*p == '.' || *p == ',') &&
                                    is_digit(p[1])))
                p++;
            if (toks_push(out, strdup("<v>")))
                return -1;
            nwords++;
            continue;
        }
        while (is_wordc(*p)) {
            if (len < MAX_WORD)
                w[len++] = (char)(is_upper(*p) ? *p - 'A' + 'a' : *p);
            p++;
        }
        w[len] = '\0';
        nwords++;
        if (*p == '\'' && p[1] == 's' && !is_wordc(p[2]))
            p += 2; /* "student's" is "student" */
        {
            char *t = stem(st, w);
            if (!t)
                return -1;
            if (!link_stop_word(w) && len >= 2 && stems_has(names, t)) {
                free(t);
                t = strdup("<n>");
            } else if (cap && nwords > 1 && strcmp(w, "i") != 0) {
                free(t);
                t = strdup("<v>");
            }
            if (toks_push(out, t))
                return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Features                                                               */
/* ---------------------------------------------------------------------- */

static int feats_push(struct feats *f, uint64_t h)
{
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 32;
        uint64_t *v = realloc(f->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        f->v = v;
        f->cap = cap;
    }
    f->v[f->n++] = h;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static void feats_seal(struct feats *f)
{
    int i, j = 0;

    if (f->n == 0)
        return;
    qsort(f->v, (size_t)f->n, sizeof *f->v, cmp_u64);
    for (i = 0; i < f->n; i++)
        if (j == 0 || f->v[j - 1] != f->v[i])
            f->v[j++] = f->v[i];
    f->n = j;
}

static uint64_t hash2(char tag, const char *a, const char *b)
{
    char buf[2 * MAX_WORD + 8];
    int n = snprintf(buf, sizeof buf, "%c%s %s", tag, a, b ? b : "");

    return XXH3_64bits(buf, (size_t)(n < (int)sizeof buf
                                         ? n
                                         : (int)sizeof buf - 1));
}

/* The words (not the marks) and the pairs of adjacent tokens, the first
** token paired with the start ("^"). */
static int question_feats(const struct strs *t, struct feats *f)
{
    int i;

    for (i = 0; i < t->n; i++) {
        if (t->v[i][0] != '<' && feats_push(f, hash2('u', t->v[i], NULL)))
            return -1;
        if (feats_push(f, hash2('b', i ? t->v[i - 1] : "^", t->v[i])))
            return -1;
    }
    feats_seal(f);
    return 0;
}

/* SQL words kept in a skeleton; any other word is a name. Sorted. */
static const char *const sql_words[] = {
    "and", "as", "asc", "avg", "between", "by", "case", "count", "cross",
    "desc", "distinct", "else", "end", "except", "exists", "from", "group",
    "having", "in", "inner", "intersect", "is", "join", "left", "like",
    "limit", "max", "min", "not", "null", "offset", "on", "or", "order",
    "outer", "select", "sum", "then", "union", "when", "where", "with",
};

static int cmp_word(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

/* The skeleton's features: pairs of adjacent skeleton tokens (SQL words,
** operators, "_" for a name, "v" for a value; "a.b" is one name). */
static int skeleton_feats(const char *sql, struct feats *f)
{
    const char *p = sql;
    char cur[16], prev[16] = "^";
    int kind;

    while (*p) {
        size_t n = sqlx_token(p, &kind), i;
        const char *tok = NULL;

        if (n == 0)
            break;
        if (kind == SQLX_WORD) {
            tok = "_";
            if (n < sizeof cur) {
                for (i = 0; i < n; i++)
                    cur[i] = (char)(is_upper((unsigned char)p[i])
                                        ? p[i] - 'A' + 'a' : p[i]);
                cur[n] = '\0';
                if (bsearch(cur, sql_words,
                            sizeof sql_words / sizeof *sql_words,
                            sizeof *sql_words, cmp_word))
                    tok = cur;
            }
        } else if (kind == SQLX_IDENT) {
            tok = *p == '"' ? "v" : "_"; /* Spider quotes values so */
        } else if (kind == SQLX_STRING || kind == SQLX_NUMBER) {
            tok = "v";
        } else if (kind == SQLX_PUNCT && *p == '.') {
            p += n; /* "a.b": the name after the dot is the same name */
            n = sqlx_token(p, &kind);
        } else if (kind == SQLX_PUNCT && *p != ';') {
            cur[0] = *p;
            cur[1] = '\0';
            tok = cur;
        }
        p += n;
        if (!tok || (strcmp(tok, "_") == 0 && strcmp(prev, "_") == 0))
            continue;
        if (feats_push(f, hash2('s', prev, tok)))
            return -1;
        snprintf(prev, sizeof prev, "%s", tok);
    }
    feats_seal(f);
    return 0;
}

/* |a & b| / |a | b| of two sealed sets. */
static double jaccard(const uint64_t *a, int na, const uint64_t *b, int nb)
{
    int i = 0, j = 0, both = 0;

    while (i < na && j < nb) {
        if (a[i] == b[j]) {
            both++;
            i++;
            j++;
        } else if (a[i] < b[j]) {
            i++;
        } else {
            j++;
        }
    }
    return na + nb - both > 0 ? (double)both / (na + nb - both) : 0;
}

/* ---------------------------------------------------------------------- */
/* Loading                                                                */
/* ---------------------------------------------------------------------- */

static int cmp_idf(const void *a, const void *b)
{
    return cmp_u64(&((const struct idf *)a)->f, &((const struct idf *)b)->f);
}

static double idf_of(uint64_t f)
{
    struct idf key, *hit;

    key.f = f;
    hit = bank.nidf ? bsearch(&key, bank.idf, (size_t)bank.nidf,
                              sizeof *bank.idf, cmp_idf)
                    : NULL;
    return hit ? hit->w : log((double)(bank.n + 1));
}

/* Split line into at most 3 tab-separated fields (in place). */
static int fields(char *line, char **f)
{
    int n = 0;

    f[n++] = line;
    while (n < 3 && (line = strchr(line, '\t')) != NULL) {
        *line++ = '\0';
        f[n++] = line;
    }
    return n;
}

static int load_text(struct sb_stemmer *st)
{
    struct strs names = {0};
    struct strs t = {0};
    struct feats all = {0};
    char *line, *next, *f[3], *name, *save;
    int cap = 0, dcap = 0, i, j, rc = -1;

    bank.text = strdup(askdb_bank_tsv);
    if (!bank.text)
        return -1;
    for (line = bank.text; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0] == '#' || fields(line, f) != 3)
            continue;
        if (strcmp(f[0], "D") == 0) {
            if (bank.ndbs == dcap) {
                const char **v;
                dcap = dcap ? 2 * dcap : 64;
                v = realloc(bank.dbs, (size_t)dcap * sizeof *v);
                if (!v)
                    goto out;
                bank.dbs = v;
            }
            bank.dbs[bank.ndbs++] = f[1];
            strs_free(&names);
            for (name = strtok_r(f[2], " ", &save); name;
                 name = strtok_r(NULL, " ", &save))
                if (stems_add_name(st, &names, name))
                    goto out;
            stems_seal(&names);
        } else if (strcmp(f[0], "Q") == 0 && bank.ndbs > 0 &&
                   strlen(f[2]) <= MAX_SQL_BYTES) {
            struct feats qf = {0};
            struct entry *e;
            if (bank.n == cap) {
                struct entry *v;
                cap = cap ? 2 * cap : 1024;
                v = realloc(bank.e, (size_t)cap * sizeof *v);
                if (!v)
                    goto out;
                bank.e = v;
            }
            strs_free(&t);
            if (mask(st, f[1], &names, &t) || question_feats(&t, &qf)) {
                free(qf.v);
                goto out;
            }
            e = &bank.e[bank.n++];
            e->db = bank.ndbs - 1;
            e->question = f[1];
            e->sql = f[2];
            e->f = qf.v;
            e->nf = qf.n;
            e->norm = 0;
            for (j = 0; j < qf.n; j++)
                if (feats_push(&all, qf.v[j]))
                    goto out;
        }
    }
    /* IDF: log((N + 1) / (df + 1)) + 1 */
    if (all.n > 0)
        qsort(all.v, (size_t)all.n, sizeof *all.v, cmp_u64);
    bank.idf = malloc(((size_t)all.n + 1) * sizeof *bank.idf);
    if (!bank.idf)
        goto out;
    for (i = 0; i < all.n; i = j) {
        for (j = i; j < all.n && all.v[j] == all.v[i]; j++)
            ;
        bank.idf[bank.nidf].f = all.v[i];
        bank.idf[bank.nidf].w = log((bank.n + 1.0) / (j - i + 1.0)) + 1.0;
        bank.nidf++;
    }
    for (i = 0; i < bank.n; i++) {
        double s = 0;
        for (j = 0; j < bank.e[i].nf; j++) {
            double w = idf_of(bank.e[i].f[j]);
            s += w * w;
        }
        bank.e[i].norm = sqrt(s);
    }
    rc = 0;
out:
    strs_free(&names);
    strs_free(&t);
    free(all.v);
    return rc;
}

static void load(void)
{
    struct sb_stemmer *st = sb_stemmer_new("english", NULL);

    if (!st || load_text(st))
        bank.failed = 1;
    sb_stemmer_delete(st);
}

int bank_size(void)
{
    pthread_once(&bank_once, load);
    return bank.failed ? -1 : bank.n;
}

/* ---------------------------------------------------------------------- */
/* Search                                                                 */
/* ---------------------------------------------------------------------- */

static int schema_stems(struct sb_stemmer *st, const struct db_schema *s,
                        struct strs *out)
{
    int i, j;

    for (i = 0; s && i < s->ntables; i++) {
        const struct db_table *t = &s->tables[i];
        if (stems_add_name(st, out, t->name))
            return -1;
        for (j = 0; j < t->ncols; j++)
            if (stems_add_name(st, out, t->cols[j].name))
                return -1;
    }
    stems_seal(out);
    return 0;
}

char *bank_mask(const char *question, const char *const *names)
{
    struct sb_stemmer *st = sb_stemmer_new("english", NULL);
    struct strs ns = {0};
    struct strs t = {0};
    struct buf b;
    char *res = NULL;
    int i;

    if (!st)
        return NULL;
    for (i = 0; names && names[i]; i++)
        if (stems_add_name(st, &ns, names[i]))
            goto out;
    stems_seal(&ns);
    if (mask(st, question, &ns, &t))
        goto out;
    buf_init(&b, 0);
    buf_puts(&b, "");
    for (i = 0; i < t.n; i++) {
        if (i)
            buf_putc(&b, ' ');
        buf_puts(&b, t.v[i]);
    }
    res = buf_steal(&b);
out:
    strs_free(&t);
    strs_free(&ns);
    sb_stemmer_delete(st);
    return res;
}

struct cand {
    int e;
    double q, score;
    struct feats sk;
};

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;

    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->e - y->e; /* the bank's order: deterministic */
}

int bank_similar(const struct db_schema *s, const char *db_name,
                 const char *question, int k, struct bank_pick *out, int *n)
{
    struct sb_stemmer *st;
    struct strs ns = {0};
    struct strs t = {0};
    struct feats qf = {0};
    struct cand c[NEIGHBOURS];
    double *w = NULL, qnorm = 0;
    int nc = 0, i, j, rc = -1;

    *n = 0;
    if (k > BANK_MAX)
        k = BANK_MAX;
    if (k <= 0)
        return 0;
    if (bank_size() < 0)
        return -1;
    st = sb_stemmer_new("english", NULL);
    if (!st)
        return -1;
    memset(c, 0, sizeof c);
    if (schema_stems(st, s, &ns) || mask(st, question, &ns, &t) ||
        question_feats(&t, &qf))
        goto out;
    w = malloc(((size_t)qf.n + 1) * sizeof *w);
    if (!w)
        goto out;
    for (i = 0; i < qf.n; i++) {
        w[i] = idf_of(qf.v[i]);
        qnorm += w[i] * w[i];
    }
    qnorm = sqrt(qnorm);
    for (i = 0; i < bank.n && qnorm > 0; i++) {
        const struct entry *e = &bank.e[i];
        double dot = 0, sim;
        int a = 0, b = 0;

        if (db_name && strcasecmp(bank.dbs[e->db], db_name) == 0)
            continue;
        while (a < qf.n && b < e->nf) {
            if (qf.v[a] == e->f[b]) {
                dot += w[a] * w[a];
                a++;
                b++;
            } else if (qf.v[a] < e->f[b]) {
                a++;
            } else {
                b++;
            }
        }
        if (dot <= 0 || e->norm <= 0)
            continue;
        sim = dot / (qnorm * e->norm);
        /* keep the NEIGHBOURS best, c[] sorted best first */
        if (nc == NEIGHBOURS && sim <= c[nc - 1].q)
            continue;
        j = nc < NEIGHBOURS ? nc++ : nc - 1;
        for (; j > 0 && c[j - 1].q < sim; j--)
            c[j] = c[j - 1];
        c[j].e = i;
        c[j].q = sim;
    }
    /* The skeletons of the close pairs vote (see bank.h). */
    for (i = 0; i < nc; i++)
        if (skeleton_feats(bank.e[c[i].e].sql, &c[i].sk))
            goto out;
    for (i = 0; i < nc; i++) {
        double agree = 0;
        for (j = 0; j < nc; j++)
            if (j != i)
                agree += jaccard(c[i].sk.v, c[i].sk.n, c[j].sk.v, c[j].sk.n);
        if (nc > 1)
            agree /= nc - 1;
        c[i].score = c[i].q * (1 - BANK_SKELETON_WEIGHT +
                               BANK_SKELETON_WEIGHT * agree);
    }
    qsort(c, (size_t)nc, sizeof *c, cmp_cand);
    for (i = 0; i < nc && i < k; i++) {
        const struct entry *e = &bank.e[c[i].e];
        out[i].db = bank.dbs[e->db];
        out[i].question = e->question;
        out[i].sql = e->sql;
        out[i].score = c[i].q;
    }
    *n = i;
    rc = 0;
out:
    for (i = 0; i < nc; i++)
        free(c[i].sk.v);
    free(w);
    free(qf.v);
    strs_free(&t);
    strs_free(&ns);
    sb_stemmer_delete(st);
    return rc;
}

void bank_render(struct buf *b, const struct bank_pick *p, int n)
{
    int i;

    if (n <= 0)
        return;
    buf_puts(b, "Examples from other databases (their tables are not this "
                "one's):\n");
    for (i = 0; i < n; i++)
        buf_printf(b, "Q: %s\nSQL: %s\n", p[i].question, p[i].sql);
}
