/* summary.h - the figures of an eval run, computed from its records. */
#ifndef ASKDB_EVAL_SUMMARY_H
#define ASKDB_EVAL_SUMMARY_H

#include "core/buf.h"
#include "core/json.h"

/*
** Everything here is computed from the records alone (record.h), so the
** figures of a resumed run equal those of a run made in one go (timings
** aside). Names are borrowed from the records. Definitions:
**   EX = correct / evaluated, evaluated = finished items that are not bad;
**   latency = the answer's total time per evaluated question, percentiles
**   by nearest rank (p-th = the ceil(p/100 * n)-th smallest);
**   tokens, model calls and stage times are means over evaluated items;
**   repair rate = evaluated items that needed more than one attempt.
*/

struct sum_count {
    const char *name;
    long n, correct;
};

struct summary {
    long selected;           /* items chosen for the run */
    long done;               /* with a record */
    long evaluated, correct, bad;
    struct sum_count *diff;  /* by difficulty, in level order */
    int ndiff;
    struct sum_count *dbs;   /* by database, by name */
    int ndbs;
    struct sum_count *classes; /* error classes, most frequent first */
    int nclasses;
    struct sum_count *bads;  /* bad item classes, most frequent first */
    int nbads;
    double *lat;             /* latencies (ms), ascending, nlat of them */
    long nlat;
    double p50, p90, max;
    double tokens, prompt_tokens, completion_tokens, calls; /* per q. */
    double stage_ms[5];      /* schema, prompt, model, validate, exec */
    long repaired, repaired_correct;
    double model_ms;         /* the run's model load, once (0: none;
                                set by the caller, not from the records) */
};

/* Compute from recs[0..n-1] (NULL entries are items not done).
** 0, or -1 when out of memory (s is then freed). */
int summary_compute(json_t *const *recs, long n, struct summary *s);
void summary_free(struct summary *s);

/* Nearest-rank percentile of sorted v[0..n-1]; 0 when n is 0. */
double summary_percentile(const double *v, long n, double p);

/* The text printed at the end of `askdb eval`. */
void summary_text(struct buf *b, const struct summary *s);

#endif
