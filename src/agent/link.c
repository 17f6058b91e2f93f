/* link.c - schema linking: score tables by the question's words, keep the
** best ones and the foreign-key paths that join them. */
#include "agent/link.h"

#include <libstemmer.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
** Design
**
** Words. The question and every table and column name are split the same
** way: at anything but letters and digits, and in names also at camelCase
** humps and letter/digit changes. Words are lowercased; words of one
** letter, numbers and stop words are dropped, irregular forms become their
** base form ("taught" -> "teach"). Each word is kept raw and as its
** Snowball English stem, so "singers" meets "singer" and "countries" meets
** "country".
**
** Matching. A name word matches a question word fully (1) when the stems
** or the raw forms are equal; partly (COMPOUND_MATCH) when it is the
** question word run together with more letters ("gradepoint" for "grade",
** "fname" for "name"); and partly when it looks like an abbreviation of it
** (at least 3 letters, same first letter, 2 or more letters shorter): a
** prefix ("stu" for "student") counts PREFIX_MATCH, a subsequence ("dept"
** for "department", "crs" for "course") SUBSEQ_MATCH.
**
** Scores. Question word j weighs idf_j = log((N + 1) / df_j), where N is
** the number of tables and df_j the number of tables whose name or columns
** match it: "id" or "name", found in every table, says little about which
** table is meant. A table scores sum_j idf_j * max(NAME_WEIGHT * its
** name's match of j, its best column's match of j), plus its hints'
** weights, plus VALUE_WEIGHT per column with a sample value that appears
** in the question.
**
** Selection. Tables scoring at least min_rel * best, and tables the
** question names (all words of the name, or its last one, matched fully:
** "orders" names Customer_Orders, "customer" names neither it nor
** Ref_Customer_Types), are
** selected best first, at most max_tables. Then every table on a shortest
** path between two selected ones over the undirected foreign-key graph is
** added (all shortest paths, since which one the query joins through is
** not known, unless there are very many), and so is every table a
** selected one references whose non-key columns the question matches.
** BFS visits neighbours in schema order, so ties always break the same
** way. Kept tables keep all their columns unless
** wider than wide_table_cols: those keep their primary and foreign key
** columns, the columns other kept tables reference, and the matched,
** hinted and sample-matched ones.
**
** Tuning (bench/link_recall.c on Spider's 6,901 training questions, no
** hints): min_rel and max_tables trade recall for prompt size; all
** shortest paths, named tables, referenced tables with matched columns,
** compound and irregular-verb matching each raised recall at a given size.
** Weighting foreign-key columns' matches down did not. With the defaults,
** 97.8% of the questions whose schema is pruned keep all their gold
** tables, and the schema text shrinks by 55%.
**
** Nothing here keeps state between calls: the stemmer (not thread-safe) is
** made per call, so agents on several threads can link at once.
*/

#define NAME_WEIGHT 1.5
#define PREFIX_MATCH 0.7
#define SUBSEQ_MATCH 0.5
#define COMPOUND_MATCH 0.7
#define VALUE_WEIGHT 1.0
#define MAX_WORD 63
#define MAX_DETOURS 4

struct link_opts link_opts_default(void)
{
    struct link_opts o;

    /* The ablation (docs/agent.md) found no gain from cutting schemas
    ** of up to 7 kB (2,400 prompt tokens) for the default model, and a
    ** cut schema gets no prompt-cache file: below 8 KiB it stays whole. */
    o.keep_whole_tables = 6;
    o.keep_whole_bytes = 8192;
    o.max_tables = 6;
    o.wide_table_cols = 24;
    o.min_rel = 0.3;
    return o;
}

/* Words a question uses for its own grammar; never names of data. Sorted
** for bsearch. */
static const char *const stop_words[] = {
    "about", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "been", "being", "both", "but", "by", "can", "could", "did",
    "display", "do", "does", "each", "either", "every", "find", "for",
    "from", "get", "give", "had", "has", "have", "having", "he", "her",
    "here", "him", "his", "how", "if", "in", "into", "is", "it", "its",
    "list", "many", "me", "much", "my", "neither", "nor", "of", "on", "or",
    "our", "please", "return", "she", "should", "show", "so", "such",
    "tell", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "to", "us", "was", "we", "were",
    "what", "when", "where", "whether", "which", "while", "who", "whom",
    "whose", "why", "will", "with", "would", "you", "your",
};

/* Irregular forms Snowball leaves alone, and their base forms: "taught"
** must meet a table "teaches". Inflections only, no synonyms. Sorted. */
static const char *const irregular[][2] = {
    {"began", "begin"},     {"begun", "begin"},     {"bought", "buy"},
    {"brought", "bring"},   {"built", "build"},     {"caught", "catch"},
    {"children", "child"},  {"chose", "choose"},    {"chosen", "choose"},
    {"drawn", "draw"},      {"drew", "draw"},       {"driven", "drive"},
    {"drove", "drive"},     {"fallen", "fall"},     {"fell", "fall"},
    {"felt", "feel"},       {"flew", "fly"},        {"flown", "fly"},
    {"fought", "fight"},    {"given", "give"},      {"gone", "go"},
    {"grew", "grow"},       {"grown", "grow"},      {"held", "hold"},
    {"kept", "keep"},       {"knew", "know"},       {"known", "know"},
    {"led", "lead"},        {"lent", "lend"},       {"lost", "lose"},
    {"made", "make"},       {"men", "man"},         {"met", "meet"},
    {"paid", "pay"},        {"people", "person"},   {"ran", "run"},
    {"ridden", "ride"},     {"rode", "ride"},       {"said", "say"},
    {"sang", "sing"},       {"seen", "see"},        {"sent", "send"},
    {"shot", "shoot"},      {"sold", "sell"},       {"spent", "spend"},
    {"spoke", "speak"},     {"spoken", "speak"},    {"stole", "steal"},
    {"stolen", "steal"},    {"stood", "stand"},     {"sung", "sing"},
    {"swam", "swim"},       {"taken", "take"},      {"taught", "teach"},
    {"thought", "think"},   {"threw", "throw"},     {"thrown", "throw"},
    {"took", "take"},       {"went", "go"},         {"women", "woman"},
    {"won", "win"},         {"wore", "wear"},       {"worn", "wear"},
    {"written", "write"},   {"wrote", "write"},
};

static int cmp_irregular(const void *key, const void *elem)
{
    return strcmp(key, ((const char *const *)elem)[0]);
}

/* The base form of an irregular word, or w itself. */
static const char *base_form(const char *w)
{
    const char *const *e =
        bsearch(w, irregular, sizeof irregular / sizeof *irregular,
                sizeof *irregular, cmp_irregular);

    return e ? e[1] : w;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int link_stop_word(const char *w)
{
    return bsearch(&w, stop_words, sizeof stop_words / sizeof *stop_words,
                   sizeof *stop_words, cmp_str) != NULL;
}


struct word {
    char *raw;
    char *stem;
};

struct words {
    struct word *v;
    int n, cap;
};

static void words_clear(struct words *w)
{
    int i;

    for (i = 0; i < w->n; i++) {
        free(w->v[i].raw);
        free(w->v[i].stem);
    }
    w->n = 0;
}

static void words_free(struct words *w)
{
    words_clear(w);
    free(w->v);
    w->v = NULL;
    w->cap = 0;
}

static int is_lower(int c) { return c >= 'a' && c <= 'z'; }
static int is_upper(int c) { return c >= 'A' && c <= 'Z'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }

/* Letters and digits; bytes of UTF-8 sequences count as letters so that
** non-English words stay whole. */
static int is_wordc(int c)
{
    return is_lower(c) || is_upper(c) || is_digit(c) || c >= 0x80;
}

/* Append word w (len bytes, lowercased) to out unless it is dropped.
** Returns 0, or -1 when out of memory. */
static int push_word(struct sb_stemmer *st, struct words *out, const char *w,
                     size_t len, int dedup)
{
    const sb_symbol *sym;
    struct word *nw;
    size_t i, slen;
    int digits = 1;

    if (len < 2)
        return 0;
    for (i = 0; i < len; i++)
        if (!is_digit((unsigned char)w[i]))
            digits = 0;
    if (digits || link_stop_word(w))
        return 0;
    w = base_form(w);
    len = strlen(w);
    sym = sb_stemmer_stem(st, (const sb_symbol *)w, (int)len);
    if (!sym)
        return -1;
    slen = (size_t)sb_stemmer_length(st);
    if (dedup)
        for (i = 0; i < (size_t)out->n; i++)
            if (strlen(out->v[i].stem) == slen &&
                memcmp(out->v[i].stem, sym, slen) == 0)
                return 0;
    if (out->n == out->cap) {
        int cap = out->cap ? 2 * out->cap : 16;
        struct word *v = realloc(out->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        out->v = v;
        out->cap = cap;
    }
    nw = &out->v[out->n];
    nw->raw = malloc(len + 1);
    nw->stem = malloc(slen + 1);
    if (!nw->raw || !nw->stem) {
        free(nw->raw);
        free(nw->stem);
        return -1;
    }
    memcpy(nw->raw, w, len + 1);
    memcpy(nw->stem, sym, slen);
    nw->stem[slen] = '\0';
    out->n++;
    return 0;
}

int link_split(const char *s, int name, link_word_fn fn, void *ud)
{
    char w[MAX_WORD + 1];
    size_t len = 0;
    const unsigned char *p = (const unsigned char *)s;

    for (;; p++) {
        int c = *p, cut = !is_wordc(c);

        if (!cut && name && len > 0) {
            int prev = p[-1];
            cut = (is_lower(prev) && is_upper(c)) ||
                  (is_upper(prev) && is_upper(c) && is_lower(p[1])) ||
                  (is_digit(prev) != is_digit(c));
        }
        if (cut && len > 0) {
            w[len] = '\0';
            if (fn(w, len, ud))
                return -1;
            len = 0;
        }
        if (c == '\0')
            return 0;
        if (is_wordc(c) && len < MAX_WORD)
            w[len++] = (char)(is_upper(c) ? c - 'A' + 'a' : c);
    }
}

struct split_to {
    struct sb_stemmer *st;
    struct words *out;
    int dedup;
};

static int split_push(const char *w, size_t len, void *ud)
{
    struct split_to *t = ud;

    return push_word(t->st, t->out, w, len, t->dedup);
}

/* Split s into words appended to out (see the design note and
** link_split()); dedup = 1 skips words whose stem is already in out.
** Returns 0 or -1 (out of memory). */
static int split_words(struct sb_stemmer *st, const char *s, int name,
                       int dedup, struct words *out)
{
    struct split_to t = {st, out, dedup};

    return link_split(s, name, split_push, &t);
}

/* Is a (shorter) a subsequence of b? */
static int is_subseq(const char *a, const char *b)
{
    for (; *a; a++) {
        b = strchr(b, *a);
        if (!b)
            return 0;
        b++;
    }
    return 1;
}

/* Is the name word n (ln bytes) the question word part w (lw bytes, at
** least 4) joined to more letters: "gradepoint" for "grade", "fname" for
** "name"? A prefix needs 3 more letters so that "count" is not "country". */
static int compound_of(const char *n, size_t ln, const char *w, size_t lw)
{
    if (lw < 4 || ln <= lw)
        return 0;
    return (ln >= lw + 3 && strncmp(n, w, lw) == 0) ||
           strcmp(n + ln - lw, w) == 0;
}

/* How well name word n matches question word q: 0 to 1. */
static double word_match(const struct word *n, const struct word *q)
{
    size_t ln, lq, i;

    if (strcmp(n->stem, q->stem) == 0 || strcmp(n->raw, q->raw) == 0)
        return 1.0;
    ln = strlen(n->raw);
    lq = strlen(q->raw);
    if (compound_of(n->raw, ln, q->raw, lq) ||
        compound_of(n->raw, ln, q->stem, strlen(q->stem)))
        return COMPOUND_MATCH;
    if (ln < 3 || lq < ln + 2 || n->raw[0] != q->raw[0])
        return 0;
    for (i = 0; i < ln; i++)
        if (!is_lower((unsigned char)n->raw[i]))
            return 0;
    if (strncmp(n->raw, q->raw, ln) == 0)
        return PREFIX_MATCH;
    return is_subseq(n->raw, q->raw) ? SUBSEQ_MATCH : 0;
}

#define MATCH_ANY 1     /* some word of the name matched */
#define MATCH_NAMED 2   /* all its words, or its last (head) word, fully */

/* For each question word j, ev[j] = max(ev[j], weight * best match of j
** by the words of name). Returns MATCH_* bits, or -1 when out of memory. */
static int match_name(struct sb_stemmer *st, const char *name,
                      const struct words *q, double weight, double *ev,
                      struct words *tmp)
{
    int i, j, any = 0, full = 0, last = 0;

    words_clear(tmp);
    if (split_words(st, name, 1, 0, tmp))
        return -1;
    for (i = 0; i < tmp->n; i++) {
        double best = 0;
        for (j = 0; j < q->n; j++) {
            double m = word_match(&tmp->v[i], &q->v[j]);
            if (m > best)
                best = m;
            if (m * weight > ev[j])
                ev[j] = m * weight;
        }
        any |= best > 0;
        full += best >= 1.0;
        last = best >= 1.0;
    }
    return (any ? MATCH_ANY : 0) |
           (tmp->n > 0 && (full == tmp->n || last) ? MATCH_NAMED : 0);
}

int link_names(const char *question, const char *name, const char *other)
{
    struct sb_stemmer *st = sb_stemmer_new("english", NULL);
    struct words q = {0}, n = {0}, o = {0};
    int i, j, k, rc = -1;

    if (!st)
        return -1;
    if (split_words(st, question ? question : "", 0, 1, &q) ||
        split_words(st, name, 1, 1, &n) ||
        (other && split_words(st, other, 1, 1, &o)))
        goto out;
    rc = 0;
    for (i = 0; i < n.n && !rc; i++) {
        for (k = 0; k < o.n; k++)
            if (strcmp(n.v[i].stem, o.v[k].stem) == 0)
                break;
        if (k < o.n)
            continue;   /* the other table's word too */
        for (j = 0; j < q.n && !rc; j++)
            rc = word_match(&n.v[i], &q.v[j]) >= 1.0;
    }
out:
    words_free(&q);
    words_free(&n);
    words_free(&o);
    sb_stemmer_delete(st);
    return rc;
}

/* Does value v (at least 3 bytes) occur in text as a whole word or phrase,
** ignoring case? */
static int value_in(const char *text, const char *v)
{
    size_t lv = strlen(v);
    const char *p;

    if (lv < 3)
        return 0;
    for (p = text; *p; p++)
        if (strncasecmp(p, v, lv) == 0 &&
            (p == text || !is_wordc((unsigned char)p[-1])) &&
            !is_wordc((unsigned char)p[lv]))
            return 1;
    return 0;
}

static int table_index(const struct db_schema *s, const char *name)
{
    const struct db_table *t = schema_table(s, name);

    return t ? (int)(t - s->tables) : -1;
}

static int column_index(const struct db_table *t, const char *name)
{
    const struct db_column *c = schema_column(t, name);

    return c ? (int)(c - t->cols) : -1;
}

void link_result_free(struct link_result *r)
{
    int i;

    if (!r)
        return;
    if (r->keep_col)
        for (i = 0; i < r->ntables; i++)
            free(r->keep_col[i]);
    free(r->keep_col);
    free(r->keep_table);
    free(r->table_score);
    memset(r, 0, sizeof *r);
}

/* Zeroed result arrays for s. Returns 0 or -1. */
static int result_alloc(const struct db_schema *s, struct link_result *r)
{
    int i;

    memset(r, 0, sizeof *r);
    r->ntables = s->ntables;
    r->keep_table = calloc((size_t)s->ntables + 1, 1);
    r->keep_col = calloc((size_t)s->ntables + 1, sizeof *r->keep_col);
    r->table_score = calloc((size_t)s->ntables + 1, sizeof *r->table_score);
    if (!r->keep_table || !r->keep_col || !r->table_score)
        return -1;
    for (i = 0; i < s->ntables; i++) {
        r->keep_col[i] = calloc((size_t)s->tables[i].ncols + 1, 1);
        if (!r->keep_col[i])
            return -1;
    }
    return 0;
}

/* The scoring state of one call. */
struct scorer {
    const struct db_schema *s;
    struct words q;             /* question words, distinct stems */
    double *name_ev, *col_ev;   /* [ntables * q.n] best matches */
    unsigned char **col_hit;    /* [ntables][ncols] matched, hinted, value */
    unsigned char *named;       /* [ntables] the question names the table */
};

static void scorer_free(struct scorer *sc)
{
    int i;

    words_free(&sc->q);
    free(sc->name_ev);
    free(sc->col_ev);
    free(sc->named);
    if (sc->col_hit)
        for (i = 0; i < sc->s->ntables; i++)
            free(sc->col_hit[i]);
    free(sc->col_hit);
}

/* Score every table into r->table_score and mark matched columns in
** sc->col_hit. Returns 0 or -1 (out of memory). */
static int score_tables(struct scorer *sc, const char *question,
                        const struct link_hint *hints, int nhints,
                        struct link_result *r)
{
    const struct db_schema *s = sc->s;
    struct sb_stemmer *st = sb_stemmer_new("english", NULL);
    struct words tmp = {0};
    double *idf = NULL;
    int t, c, j, k, nq, rc = -1;

    if (!st)
        return -1;
    if (split_words(st, question ? question : "", 0, 1, &sc->q))
        goto out;
    nq = sc->q.n;
    sc->name_ev = calloc((size_t)s->ntables * (size_t)nq + 1, sizeof(double));
    sc->col_ev = calloc((size_t)s->ntables * (size_t)nq + 1, sizeof(double));
    sc->col_hit = calloc((size_t)s->ntables + 1, sizeof *sc->col_hit);
    sc->named = calloc((size_t)s->ntables + 1, 1);
    idf = calloc((size_t)nq + 1, sizeof *idf);
    if (!sc->name_ev || !sc->col_ev || !sc->col_hit || !sc->named || !idf)
        goto out;
    for (t = 0; t < s->ntables; t++) {
        const struct db_table *tb = &s->tables[t];
        double *nev = sc->name_ev + (size_t)t * (size_t)nq;
        double *cev = sc->col_ev + (size_t)t * (size_t)nq;

        sc->col_hit[t] = calloc((size_t)tb->ncols + 1, 1);
        if (!sc->col_hit[t])
            goto out;
        k = match_name(st, tb->name, &sc->q, NAME_WEIGHT, nev, &tmp);
        if (k < 0)
            goto out;
        sc->named[t] = (k & MATCH_NAMED) != 0;
        for (c = 0; c < tb->ncols; c++) {
            const struct db_column *col = &tb->cols[c];
            int hit = match_name(st, col->name, &sc->q, 1.0, cev, &tmp);
            if (hit < 0)
                goto out;
            sc->col_hit[t][c] = (hit & MATCH_ANY) != 0;
            for (k = 0; k < col->nsamples && question; k++)
                if (value_in(question, col->samples[k])) {
                    sc->col_hit[t][c] = 1;
                    r->table_score[t] += VALUE_WEIGHT;
                    break;
                }
        }
    }
    for (j = 0; j < nq; j++) {
        int df = 0;
        for (t = 0; t < s->ntables; t++)
            if (sc->name_ev[(size_t)t * nq + j] > 0 ||
                sc->col_ev[(size_t)t * nq + j] > 0)
                df++;
        idf[j] = df ? log((double)(s->ntables + 1) / df) : 0;
    }
    for (t = 0; t < s->ntables; t++)
        for (j = 0; j < nq; j++) {
            double n = sc->name_ev[(size_t)t * nq + j];
            double cv = sc->col_ev[(size_t)t * nq + j];
            r->table_score[t] += idf[j] * (n > cv ? n : cv);
        }
    for (k = 0; k < nhints; k++) {
        if (!hints[k].table)
            continue;
        t = table_index(s, hints[k].table);
        if (t < 0)
            continue;
        r->table_score[t] += hints[k].weight;
        if (hints[k].column) {
            c = column_index(&s->tables[t], hints[k].column);
            if (c >= 0)
                sc->col_hit[t][c] = 1;
        }
    }
    rc = 0;
out:
    words_free(&tmp);
    free(idf);
    sb_stemmer_delete(st);
    return rc;
}

/* The foreign-key graph, undirected, as adjacency lists (CSR). */
struct graph {
    int *start;   /* [ntables + 1] */
    int *adj;
};

static int graph_build(const struct db_schema *s, struct graph *g)
{
    int t, k, u, n = s->ntables, *fill = NULL, total = 0;

    g->adj = NULL;
    g->start = calloc((size_t)n + 1, sizeof *g->start);
    fill = calloc((size_t)n + 1, sizeof *fill);
    if (!g->start || !fill)
        goto fail;
    for (t = 0; t < n; t++)
        for (k = 0; k < s->tables[t].nfks; k++) {
            u = table_index(s, s->tables[t].fks[k].table);
            if (u >= 0 && u != t) {
                g->start[t + 1]++;
                g->start[u + 1]++;
                total += 2;
            }
        }
    for (t = 0; t < n; t++)
        g->start[t + 1] += g->start[t];
    g->adj = malloc((size_t)total * sizeof *g->adj + 1);
    if (!g->adj)
        goto fail;
    for (t = 0; t < n; t++)
        for (k = 0; k < s->tables[t].nfks; k++) {
            u = table_index(s, s->tables[t].fks[k].table);
            if (u >= 0 && u != t) {
                g->adj[g->start[t] + fill[t]++] = u;
                g->adj[g->start[u] + fill[u]++] = t;
            }
        }
    free(fill);
    return 0;
fail:
    free(fill);
    free(g->start);
    g->start = NULL;
    return -1;
}

/* Distances (in FK hops) from table src to every table, -1 unreachable;
** queue has room for ntables entries. */
static void bfs(const struct graph *g, int n, int src, int *dist, int *queue)
{
    int head = 0, tail = 0, i, v;

    for (i = 0; i < n; i++)
        dist[i] = -1;
    dist[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        v = queue[head++];
        for (i = g->start[v]; i < g->start[v + 1]; i++)
            if (dist[g->adj[i]] < 0) {
                dist[g->adj[i]] = dist[v] + 1;
                queue[tail++] = g->adj[i];
            }
    }
}

/* Keep the tables on the shortest FK paths between every pair of the nsel
** selected tables: table v is on one when d(a, v) + d(v, b) = d(a, b).
** Every shortest path is kept, not one of them, since which one a query
** joins through is not known; but when the paths between a pair pass
** through more than MAX_DETOURS tables per hop, only one is. Returns 0 or
** -1. */
static int close_paths(const struct db_schema *s, const int *sel, int nsel,
                       unsigned char *keep)
{
    struct graph g;
    int n = s->ntables, *dist, *queue, a, b, v, rc = -1;

    if (nsel < 2)
        return 0;
    if (graph_build(s, &g))
        return -1;
    dist = malloc((size_t)nsel * (size_t)n * sizeof *dist);
    queue = malloc((size_t)n * sizeof *queue);
    if (!dist || !queue)
        goto out;
    for (a = 0; a < nsel; a++)
        bfs(&g, n, sel[a], dist + (size_t)a * n, queue);
    for (a = 0; a + 1 < nsel; a++) {
        const int *da = dist + (size_t)a * n;
        for (b = a + 1; b < nsel; b++) {
            const int *db = dist + (size_t)b * n;
            int d = da[sel[b]], on = 0;
            if (d < 0)
                continue;
            for (v = 0; v < n; v++)
                on += da[v] >= 0 && db[v] >= 0 && da[v] + db[v] == d;
            if (on - 2 <= MAX_DETOURS * (d - 1)) {
                for (v = 0; v < n; v++)
                    if (da[v] >= 0 && db[v] >= 0 && da[v] + db[v] == d)
                        keep[v] = 1;
                continue;
            }
            /* too many ways round (a large, densely linked schema): one
            ** path, through the first neighbour one hop closer each time */
            for (v = sel[b]; v != sel[a];) {
                int i;
                keep[v] = 1;
                for (i = g.start[v]; da[g.adj[i]] != da[v] - 1; i++)
                    ;
                v = g.adj[i];
            }
        }
    }
    rc = 0;
out:
    free(dist);
    free(queue);
    free(g.start);
    free(g.adj);
    return rc;
}

/* Keep the tables the nsel selected ones reference when the question
** matches one of their non-key columns: the names of a professor live in
** the employee table its key points at. */
static void add_parents(const struct db_schema *s, const struct scorer *sc,
                        const int *sel, int nsel, struct link_result *r)
{
    int i, k, c, u;

    for (i = 0; i < nsel; i++) {
        const struct db_table *tb = &s->tables[sel[i]];
        for (k = 0; k < tb->nfks; k++) {
            u = table_index(s, tb->fks[k].table);
            if (u < 0 || r->keep_table[u])
                continue;
            for (c = 0; c < s->tables[u].ncols; c++)
                if (sc->col_hit[u][c] && !s->tables[u].cols[c].pk)
                    r->keep_table[u] = 1;
        }
    }
}

/* A table and its score, to order tables best first, index breaking ties
** (qsort is not stable, and the order must not depend on it). */
struct ranked {
    double score;
    int t;
};

static int cmp_rank(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;

    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->t - y->t;
}

/* Columns of the kept tables: all, or for tables wider than wide_cols
** (0 = none is) the keys, the referenced and the hit ones. */
static void keep_columns(const struct db_schema *s, const struct scorer *sc,
                         int wide_cols, struct link_result *r)
{
    int t, c, k, u;

    for (t = 0; t < s->ntables; t++) {
        const struct db_table *tb = &s->tables[t];
        int wide = wide_cols > 0 && tb->ncols > wide_cols;

        if (!r->keep_table[t])
            continue;
        for (c = 0; c < tb->ncols; c++)
            r->keep_col[t][c] = !wide || tb->cols[c].pk || sc->col_hit[t][c];
        for (k = 0; k < tb->nfks; k++) {
            c = column_index(tb, tb->fks[k].from);
            if (c >= 0)
                r->keep_col[t][c] = 1;
            u = table_index(s, tb->fks[k].table);
            if (u >= 0 && r->keep_table[u] && tb->fks[k].to) {
                c = column_index(&s->tables[u], tb->fks[k].to);
                if (c >= 0)
                    r->keep_col[u][c] = 1;
            }
        }
    }
}

/* A lower bound of strlen(schema_render(s)), so that a large schema is
** not rendered just to learn that it is not small. */
static size_t render_floor(const struct db_schema *s)
{
    size_t n = 0;
    int t, c;

    for (t = 0; t < s->ntables; t++) {
        n += strlen("CREATE VIEW  (\n);\n") + strlen(s->tables[t].name);
        for (c = 0; c < s->tables[t].ncols; c++)
            n += strlen("  \n") + strlen(s->tables[t].cols[c].name);
    }
    return n;
}

askdb_status link_schema(const struct db_schema *s, const char *question,
                         const struct link_hint *hints, int nhints,
                         const struct link_opts *o, struct link_result *out)
{
    struct link_opts def = link_opts_default();
    struct scorer sc;
    struct ranked *rank = NULL;
    int *sel = NULL, nsel = 0, t, c, whole = 0;
    double best = 0;

    memset(&sc, 0, sizeof sc);
    sc.s = s;
    if (!o)
        o = &def;
    if (result_alloc(s, out) || score_tables(&sc, question, hints, nhints, out))
        goto nomem;
    for (t = 0; t < s->ntables; t++)
        if (out->table_score[t] > best)
            best = out->table_score[t];
    if (s->ntables <= o->keep_whole_tables || best <= 0) {
        whole = 1;
    } else if (o->keep_whole_bytes > 0 &&
               render_floor(s) <= (size_t)o->keep_whole_bytes) {
        char *text = schema_render(s);
        if (!text)
            goto nomem;
        whole = strlen(text) <= (size_t)o->keep_whole_bytes;
        free(text);
    }
    if (!whole) {
        rank = malloc((size_t)s->ntables * sizeof *rank);
        sel = malloc((size_t)s->ntables * sizeof *sel);
        if (!rank || !sel)
            goto nomem;
        for (t = 0; t < s->ntables; t++) {
            rank[t].score = out->table_score[t];
            rank[t].t = t;
        }
        qsort(rank, (size_t)s->ntables, sizeof *rank, cmp_rank);
        /* best > 0, so at least the best table is selected */
        for (t = 0; t < s->ntables && (nsel < o->max_tables || nsel == 0);
             t++) {
            int i = rank[t].t;
            if (rank[t].score <= 0)
                break;
            if (rank[t].score >= o->min_rel * best || sc.named[i]) {
                sel[nsel++] = i;
                out->keep_table[i] = 1;
            }
        }
        if (close_paths(s, sel, nsel, out->keep_table))
            goto nomem;
        add_parents(s, &sc, sel, nsel, out);
    } else {
        memset(out->keep_table, 1, (size_t)s->ntables);
    }
    out->whole = whole;
    keep_columns(s, &sc, whole ? 0 : o->wide_table_cols, out);
    for (t = 0; t < s->ntables; t++) {
        out->total_cols += s->tables[t].ncols;
        out->kept_tables += out->keep_table[t];
        for (c = 0; c < s->tables[t].ncols; c++)
            out->kept_cols += out->keep_col[t][c];
    }
    free(rank);
    free(sel);
    scorer_free(&sc);
    return ASKDB_OK;
nomem:
    free(rank);
    free(sel);
    scorer_free(&sc);
    link_result_free(out);
    return ASKDB_ERR_NOMEM;
}
