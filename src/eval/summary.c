/* summary.c - EX overall, by difficulty and database, latency, tokens,
** classes. */
#include "eval/summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/record.h"

/* Difficulty levels in reading order: Spider's, then BIRD's. */
static const char *const level_order[] = {
    "easy", "medium", "hard", "extra", "simple", "moderate", "challenging",
    NULL
};

static int level_rank(const char *name)
{
    int i;

    for (i = 0; level_order[i]; i++)
        if (strcmp(name, level_order[i]) == 0)
            return i;
    return i;
}

/* Find or add name in *arr; NULL when out of memory. */
static struct sum_count *bucket(struct sum_count **arr, int *n,
                                const char *name)
{
    struct sum_count *p;
    int i;

    for (i = 0; i < *n; i++)
        if (strcmp((*arr)[i].name, name) == 0)
            return &(*arr)[i];
    p = realloc(*arr, (size_t)(*n + 1) * sizeof *p);
    if (!p)
        return NULL;
    *arr = p;
    p = &p[(*n)++];
    p->name = name;
    p->n = 0;
    p->correct = 0;
    return p;
}

static int by_level(const void *a, const void *b)
{
    const struct sum_count *x = a, *y = b;
    int rx = level_rank(x->name), ry = level_rank(y->name);

    return rx != ry ? (rx < ry ? -1 : 1) : strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct sum_count *)a)->name,
                  ((const struct sum_count *)b)->name);
}

static int by_count(const void *a, const void *b)
{
    const struct sum_count *x = a, *y = b;

    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

double summary_percentile(const double *v, long n, double p)
{
    long k;

    if (n <= 0)
        return 0;
    k = (long)ceil(p / 100.0 * (double)n) - 1;
    if (k < 0)
        k = 0;
    if (k >= n)
        k = n - 1;
    return v[k];
}

static const char *str_or(const json_t *rec, const char *key,
                          const char *dflt)
{
    const char *s = jsonx_str(rec, key);

    return s ? s : dflt;
}

int summary_compute(json_t *const *recs, long n, struct summary *s)
{
    static const char *const stages[5] = {"schema", "prompt", "model",
                                          "validate", "exec"};
    struct sum_count *c;
    double tok = 0, ptok = 0, ctok = 0, calls = 0;
    long i;
    int k;

    memset(s, 0, sizeof *s);
    s->selected = n;
    s->lat = malloc((size_t)(n ? n : 1) * sizeof *s->lat);
    if (!s->lat)
        return -1;
    for (i = 0; i < n; i++) {
        const json_t *r = recs[i];
        const char *bad, *cls;
        int ok;
        if (!r)
            continue;
        s->done++;
        bad = jsonx_str(r, "bad");
        if (bad) {
            s->bad++;
            c = bucket(&s->bads, &s->nbads, bad);
            if (!c)
                goto oom;
            c->n++;
            continue;
        }
        ok = rec_bool(r, "correct");
        s->evaluated++;
        s->correct += ok;
        c = bucket(&s->diff, &s->ndiff, str_or(r, "difficulty", "?"));
        if (!c)
            goto oom;
        c->n++;
        c->correct += ok;
        c = bucket(&s->dbs, &s->ndbs, str_or(r, "db", "?"));
        if (!c)
            goto oom;
        c->n++;
        c->correct += ok;
        cls = jsonx_str(r, "class");
        if (!ok && cls) {
            c = bucket(&s->classes, &s->nclasses, cls);
            if (!c)
                goto oom;
            c->n++;
        }
        s->lat[s->nlat++] = rec_ms(r, "total");
        ptok += (double)jsonx_int(r, "prompt_tokens", 0);
        ctok += (double)jsonx_int(r, "completion_tokens", 0);
        calls += (double)jsonx_int(r, "llm_calls", 0);
        for (k = 0; k < 5; k++)
            s->stage_ms[k] += rec_ms(r, stages[k]);
        if (jsonx_int(r, "attempts", 0) > 1) {
            s->repaired++;
            s->repaired_correct += ok;
        }
    }
    tok = ptok + ctok;
    if (s->evaluated) {
        s->tokens = tok / (double)s->evaluated;
        s->prompt_tokens = ptok / (double)s->evaluated;
        s->completion_tokens = ctok / (double)s->evaluated;
        s->calls = calls / (double)s->evaluated;
        for (k = 0; k < 5; k++)
            s->stage_ms[k] /= (double)s->evaluated;
    }
    qsort(s->lat, (size_t)s->nlat, sizeof *s->lat, cmp_double);
    s->p50 = summary_percentile(s->lat, s->nlat, 50);
    s->p90 = summary_percentile(s->lat, s->nlat, 90);
    s->max = s->nlat ? s->lat[s->nlat - 1] : 0;
    if (s->ndiff)
        qsort(s->diff, (size_t)s->ndiff, sizeof *s->diff, by_level);
    if (s->ndbs)
        qsort(s->dbs, (size_t)s->ndbs, sizeof *s->dbs, by_name);
    if (s->nclasses)
        qsort(s->classes, (size_t)s->nclasses, sizeof *s->classes, by_count);
    if (s->nbads)
        qsort(s->bads, (size_t)s->nbads, sizeof *s->bads, by_count);
    return 0;
oom:
    summary_free(s);
    return -1;
}

void summary_free(struct summary *s)
{
    free(s->diff);
    free(s->dbs);
    free(s->classes);
    free(s->bads);
    free(s->lat);
    memset(s, 0, sizeof *s);
}

static double pct(long num, long den)
{
    return den ? 100.0 * (double)num / (double)den : 0.0;
}

char *askdb_eval_pct_text(long num, long den, char *buf, size_t n)
{
    if (den)
        snprintf(buf, n, "%.1f%%", pct(num, den));
    else
        snprintf(buf, n, "n/a");
    return buf;
}

static void rows(struct buf *b, const struct sum_count *c, int n)
{
    int i, w = 8;

    for (i = 0; i < n; i++)
        if ((int)strlen(c[i].name) > w)
            w = (int)strlen(c[i].name);
    for (i = 0; i < n; i++)
        buf_printf(b, "  %-*s %5ld/%-5ld %5.1f%%\n", w, c[i].name,
                   c[i].correct, c[i].n, pct(c[i].correct, c[i].n));
}

static void counts(struct buf *b, const struct sum_count *c, int n)
{
    int i, w = 8;

    for (i = 0; i < n; i++)
        if ((int)strlen(c[i].name) > w)
            w = (int)strlen(c[i].name);
    for (i = 0; i < n; i++)
        buf_printf(b, "  %-*s %5ld\n", w, c[i].name, c[i].n);
}

void summary_text(struct buf *b, const struct summary *s)
{
    char v[32];

    /* Nothing scored (the model unreachable, every item bad) is no 0%. */
    buf_printf(b, "EX %ld/%ld = %s", s->correct, s->evaluated,
               askdb_eval_pct_text(s->correct, s->evaluated, v, sizeof v));
    buf_printf(b, " (%ld selected, %ld bad item%s", s->selected, s->bad,
               s->bad == 1 ? "" : "s");
    if (s->done < s->selected)
        buf_printf(b, ", %ld not run", s->selected - s->done);
    buf_puts(b, ")\n");
    if (s->ndiff) {
        buf_puts(b, "by difficulty:\n");
        rows(b, s->diff, s->ndiff);
    }
    if (s->ndbs) {
        buf_puts(b, "by database:\n");
        rows(b, s->dbs, s->ndbs);
    }
    buf_printf(b, "latency: p50 %.0f ms, p90 %.0f ms, max %.0f ms\n", s->p50,
               s->p90, s->max);
    if (s->model_ms > 0)
        buf_printf(b, "model load: %.0f ms, once for the run (in no "
                   "question's latency)\n", s->model_ms);
    buf_printf(b, "time per question: schema %.1f ms, prompt %.1f ms, model "
               "%.1f ms, validation %.1f ms, execution %.1f ms\n",
               s->stage_ms[0], s->stage_ms[1], s->stage_ms[2], s->stage_ms[3],
               s->stage_ms[4]);
    buf_printf(b, "tokens per question: %.1f (prompt %.1f, completion %.1f); "
               "model calls per question: %.2f\n", s->tokens,
               s->prompt_tokens, s->completion_tokens, s->calls);
    buf_printf(b, "repair rate: %s",
               askdb_eval_pct_text(s->repaired, s->evaluated, v, sizeof v));
    if (s->evaluated == 0)
        buf_puts(b, " (no item scored)\n");
    else
        buf_printf(b, " (%ld of %ld needed a repair, %ld of them correct)\n",
                   s->repaired, s->evaluated, s->repaired_correct);
    if (s->nclasses) {
        buf_puts(b, "error classes:\n");
        counts(b, s->classes, s->nclasses);
    }
    if (s->nbads) {
        buf_puts(b, "bad items (not scored):\n");
        counts(b, s->bads, s->nbads);
    }
}
