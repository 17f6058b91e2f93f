/* report.h - the self-contained HTML report of an eval run. */
#ifndef ASKDB_EVAL_REPORT_H
#define ASKDB_EVAL_REPORT_H

#include "core/buf.h"
#include "core/json.h"
#include "eval/summary.h"

/*
** One HTML file that needs nothing else: inline CSS, charts drawn here as
** inline SVG, no script, and a Content-Security-Policy that forbids any
** fetch. Every piece of text from the suite, the model or the database is
** untrusted and goes through report_escape().
*/

/* Append s with & < > " ' escaped (NULL appends nothing). */
void report_escape(struct buf *b, const char *s);

/*
** Horizontal bar chart as an <svg> element: one bar per label, bar length
** values[i] / vmax, the value printed after the bar with `decimals`
** decimals and then suffix (e.g. 1 and "%").
*/
void report_svg_bars(struct buf *b, const char *title,
                     const char *const *labels, const double *values, int n,
                     double vmax, int decimals, const char *suffix);

/* Latency histogram of sorted lat[0..n-1] in `bins` equal bins. */
void report_svg_histogram(struct buf *b, const char *title, const double *lat,
                          long n, int bins);

/* The whole page for recs[0..n-1] (NULL entries: not run) and s. title
** and subtitle are plain text. */
void report_html(struct buf *b, const char *title, const char *subtitle,
                 json_t *const *recs, long n, const struct summary *s);

#endif
