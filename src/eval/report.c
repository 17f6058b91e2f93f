/* report.c - the eval report: one HTML file with inline CSS and SVG charts. */
#include "eval/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/record.h"

void report_escape(struct buf *b, const char *s)
{
    const char *p;

    if (!s)
        return;
    for (p = s; *p; p++) {
        switch (*p) {
        case '&': buf_puts(b, "&amp;"); break;
        case '<': buf_puts(b, "&lt;"); break;
        case '>': buf_puts(b, "&gt;"); break;
        case '"': buf_puts(b, "&quot;"); break;
        case '\'': buf_puts(b, "&#39;"); break;
        default: buf_putc(b, *p); break;
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Charts                                                                 */
/* ---------------------------------------------------------------------- */

#define CHART_W 520
#define LABEL_W 130
#define BAR_H 22
#define BAR_GAP 8

void report_svg_bars(struct buf *b, const char *title,
                     const char *const *labels, const double *values, int n,
                     double vmax, int decimals, const char *suffix)
{
    int i, h = 34 + n * (BAR_H + BAR_GAP);
    double span = CHART_W - LABEL_W - 70;
    char val[64];

    buf_printf(b, "<svg class=\"chart\" "
               "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">"
               "<title>", CHART_W, h, CHART_W, h);
    report_escape(b, title);
    buf_puts(b, "</title><text x=\"0\" y=\"16\" class=\"ct\">");
    report_escape(b, title);
    buf_puts(b, "</text>");
    if (n == 0)
        buf_puts(b, "<text x=\"0\" y=\"40\" class=\"cl\">(none)</text>");
    for (i = 0; i < n; i++) {
        int y = 30 + i * (BAR_H + BAR_GAP);
        double w = vmax > 0 ? values[i] / vmax * span : 0;
        if (w < 0)
            w = 0;
        buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"cl\" "
                   "text-anchor=\"end\">", LABEL_W - 8, y + 16);
        report_escape(b, labels[i]);
        buf_printf(b, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" "
                   "height=\"%d\" class=\"bar\"/>", LABEL_W, y, w, BAR_H);
        snprintf(val, sizeof val, "%.*f%s", decimals, values[i], suffix);
        buf_printf(b, "<text x=\"%.1f\" y=\"%d\" class=\"cv\">", LABEL_W + w
                   + 6, y + 16);
        report_escape(b, val);
        buf_puts(b, "</text>");
    }
    buf_puts(b, "</svg>\n");
}

void report_svg_histogram(struct buf *b, const char *title, const double *lat,
                          long n, int bins)
{
    long *count = calloc((size_t)bins, sizeof *count), cmax = 0, i;
    double hi = n ? lat[n - 1] : 0, bw;
    int k, plot_h = 150, top = 30, x0 = 40;
    double colw = (double)(CHART_W - x0 - 10) / bins;

    if (!count) {
        buf_puts(b, "<p>(out of memory)</p>");
        return;
    }
    if (hi <= 0)
        hi = 1;
    bw = hi / bins;
    for (i = 0; i < n; i++) {
        k = (int)(lat[i] / bw);
        if (k >= bins)
            k = bins - 1;
        if (k < 0)
            k = 0;
        if (++count[k] > cmax)
            cmax = count[k];
    }
    buf_printf(b, "<svg class=\"chart\" "
               "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">"
               "<title>", CHART_W, top + plot_h + 40, CHART_W,
               top + plot_h + 40);
    report_escape(b, title);
    buf_puts(b, "</title><text x=\"0\" y=\"16\" class=\"ct\">");
    report_escape(b, title);
    buf_puts(b, "</text>");
    for (k = 0; k < bins; k++) {
        double h = cmax ? (double)count[k] / (double)cmax * plot_h : 0;
        double x = x0 + k * colw;
        buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                   "height=\"%.1f\" class=\"bar\"><title>%.0f-%.0f ms: %ld"
                   "</title></rect>", x + 1, top + plot_h - h, colw - 2, h,
                   k * bw, (k + 1) * bw, count[k]);
        if (count[k])
            buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"cv\" "
                       "text-anchor=\"middle\">%ld</text>", x + colw / 2,
                       top + plot_h - h - 3, count[k]);
    }
    buf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
               "class=\"axis\"/>", x0, top + plot_h, CHART_W - 10,
               top + plot_h);
    buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"cl\">0 ms</text>", x0,
               top + plot_h + 18);
    buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"cl\" text-anchor=\"end\">"
               "%.0f ms</text>", CHART_W - 10, top + plot_h + 18, hi);
    buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"cl\" "
               "text-anchor=\"middle\">%ld questions</text>",
               (x0 + CHART_W) / 2, top + plot_h + 34, n);
    buf_puts(b, "</svg>\n");
    free(count);
}

/* ---------------------------------------------------------------------- */
/* Page                                                                   */
/* ---------------------------------------------------------------------- */

static const char css[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;"
    "max-width:1100px;padding:0 16px;color:#1d232b;background:#fff}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
    "border-bottom:1px solid #dde2e8;padding-bottom:4px}"
    ".sub{color:#5b6573;margin:0 0 16px}"
    ".cards{display:flex;flex-wrap:wrap;gap:12px}"
    ".card{border:1px solid #dde2e8;border-radius:6px;padding:10px 14px;"
    "min-width:130px}.card b{display:block;font-size:22px}"
    ".card span{color:#5b6573;font-size:12px}"
    ".charts{display:flex;flex-wrap:wrap;gap:18px}"
    ".chart .bar{fill:#3b6fb6}.chart .ct{font-weight:600;font-size:13px}"
    ".chart .cl,.chart .cv{font-size:12px;fill:#333}"
    ".chart .axis{stroke:#888}"
    "table{border-collapse:collapse;margin:6px 0}"
    "td,th{border:1px solid #dde2e8;padding:3px 8px;text-align:left;"
    "vertical-align:top}th{background:#f3f5f8}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "details{border:1px solid #dde2e8;border-radius:6px;margin:6px 0;"
    "padding:6px 10px}summary{cursor:pointer}"
    ".cls{display:inline-block;font-size:12px;padding:0 6px;border-radius:4px;"
    "background:#fbe3e3;color:#8a1f1f;margin-right:6px}"
    "pre{background:#f6f8fa;padding:8px;overflow:auto;white-space:pre-wrap;"
    "word-break:break-word;margin:4px 0}"
    ".null{color:#8a94a3;font-style:italic}.k{color:#5b6573;font-size:12px}"
    ".grid{display:flex;flex-wrap:wrap;gap:18px}";

static void card(struct buf *b, const char *value, const char *label)
{
    buf_puts(b, "<div class=\"card\"><b>");
    report_escape(b, value);
    buf_puts(b, "</b><span>");
    report_escape(b, label);
    buf_puts(b, "</span></div>");
}

static double pct(long num, long den)
{
    return den ? 100.0 * (double)num / (double)den : 0.0;
}

/* One cell value of a stored result row. */
static void cell(struct buf *b, const json_t *v)
{
    char *s;

    if (json_is_null(v)) {
        buf_puts(b, "<td class=\"null\">NULL</td>");
    } else if (json_is_string(v)) {
        buf_puts(b, "<td>");
        report_escape(b, json_string_value(v));
        buf_puts(b, "</td>");
    } else if (json_is_object(v) && jsonx_str(v, "blob_hex")) {
        buf_puts(b, "<td>x'");
        report_escape(b, jsonx_str(v, "blob_hex"));
        buf_puts(b, "'</td>");
    } else {
        /* A real as the records write it (0.3, not 0.29999999999999999). */
        s = askdb_json_shorten_reals(jsonx_dump(v));
        buf_puts(b, "<td class=\"n\">");
        report_escape(b, s ? s : "?");
        buf_puts(b, "</td>");
        free(s);
    }
}

/* A stored result ({columns, rows, row_count}) as a table. */
static void result_table(struct buf *b, const char *title, const json_t *r)
{
    const json_t *cols = json_object_get(r, "columns");
    const json_t *rows = json_object_get(r, "rows"), *row, *v;
    long total = (long)jsonx_int(r, "row_count", 0);
    size_t i, j;

    buf_puts(b, "<div><div class=\"k\">");
    report_escape(b, title);
    if (!json_is_object(r)) {
        buf_puts(b, ": none</div></div>");
        return;
    }
    buf_printf(b, ": %ld row%s%s</div><table><tr>", total,
               total == 1 ? "" : "s",
               (long)json_array_size(rows) < total ? " (first ones)" : "");
    json_array_foreach(cols, i, v) {
        buf_puts(b, "<th>");
        report_escape(b, json_string_value(v));
        buf_puts(b, "</th>");
    }
    buf_puts(b, "</tr>");
    json_array_foreach(rows, i, row) {
        buf_puts(b, "<tr>");
        json_array_foreach(row, j, v)
            cell(b, v);
        buf_puts(b, "</tr>");
    }
    buf_puts(b, "</table></div>");
}

static void failure(struct buf *b, const json_t *r)
{
    const char *cls = jsonx_str(r, "class"), *msg = jsonx_str(r, "message");
    const char *pred = jsonx_str(r, "pred"), *hint = jsonx_str(r, "hint");

    buf_printf(b, "<details><summary><span class=\"cls\">");
    report_escape(b, cls ? cls : "wrong");
    buf_printf(b, "</span>#%lld <b>", jsonx_int(r, "index", -1));
    report_escape(b, jsonx_str(r, "db"));
    buf_puts(b, "</b> ");
    report_escape(b, jsonx_str(r, "question"));
    buf_puts(b, "</summary><p><span class=\"k\">difficulty</span> ");
    report_escape(b, jsonx_str(r, "difficulty"));
    buf_printf(b, " &middot; <span class=\"k\">attempts</span> %lld "
               "&middot; <span class=\"k\">time</span> %.0f ms</p>",
               jsonx_int(r, "attempts", 0), rec_ms(r, "total"));
    if (hint) {
        buf_puts(b, "<p><span class=\"k\">hint</span> ");
        report_escape(b, hint);
        buf_puts(b, "</p>");
    }
    buf_puts(b, "<div class=\"k\">gold SQL</div><pre>");
    report_escape(b, jsonx_str(r, "gold"));
    buf_puts(b, "</pre><div class=\"k\">predicted SQL</div><pre>");
    if (pred)
        report_escape(b, pred);
    else
        buf_puts(b, "<span class=\"null\">(none)</span>");
    buf_puts(b, "</pre>");
    if (msg) {
        buf_puts(b, "<div class=\"k\">error</div><pre>");
        report_escape(b, msg);
        buf_puts(b, "</pre>");
    }
    buf_puts(b, "<div class=\"grid\">");
    result_table(b, "gold result", json_object_get(r, "gold_result"));
    result_table(b, "predicted result", json_object_get(r, "pred_result"));
    buf_puts(b, "</div></details>\n");
}

static void bad_item(struct buf *b, const json_t *r)
{
    buf_printf(b, "<tr><td class=\"n\">%lld</td><td>",
               jsonx_int(r, "index", -1));
    report_escape(b, jsonx_str(r, "db"));
    buf_puts(b, "</td><td>");
    report_escape(b, jsonx_str(r, "bad"));
    buf_puts(b, "</td><td>");
    report_escape(b, jsonx_str(r, "question"));
    buf_puts(b, "</td><td><pre>");
    report_escape(b, jsonx_str(r, "gold"));
    buf_puts(b, "</pre></td><td>");
    report_escape(b, jsonx_str(r, "message"));
    buf_puts(b, "</td></tr>\n");
}

static void count_table(struct buf *b, const char *head,
                        const struct sum_count *c, int n, int with_ex)
{
    int i;

    buf_puts(b, "<table><tr><th>");
    report_escape(b, head);
    buf_puts(b, with_ex ? "</th><th>correct</th><th>questions</th><th>EX</th>"
                          "</tr>"
                        : "</th><th>count</th></tr>");
    for (i = 0; i < n; i++) {
        buf_puts(b, "<tr><td>");
        report_escape(b, c[i].name);
        if (with_ex)
            buf_printf(b, "</td><td class=\"n\">%ld</td><td class=\"n\">%ld"
                       "</td><td class=\"n\">%.1f%%</td></tr>", c[i].correct,
                       c[i].n, pct(c[i].correct, c[i].n));
        else
            buf_printf(b, "</td><td class=\"n\">%ld</td></tr>", c[i].n);
    }
    buf_puts(b, "</table>\n");
}

void report_html(struct buf *b, const char *title, const char *subtitle,
                 json_t *const *recs, long n, const struct summary *s)
{
    const char **labels;
    double *vals, vmax = 0;
    char v[64];
    long i, nfail = 0;
    int k, m = s->ndiff > s->nclasses ? s->ndiff : s->nclasses;

    labels = calloc((size_t)m + 1, sizeof *labels);
    vals = calloc((size_t)m + 1, sizeof *vals);
    if (!labels || !vals) {
        free(labels);
        free(vals);
        b->err = BUF_ENOMEM;
        return;
    }
    buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
                "charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-"
                "Policy\" content=\"default-src 'none'; style-src "
                "'unsafe-inline'\">\n<meta name=\"viewport\" content=\"width="
                "device-width, initial-scale=1\">\n<title>");
    report_escape(b, title);
    buf_printf(b, "</title>\n<style>%s</style></head>\n<body>\n<h1>", css);
    report_escape(b, title);
    buf_puts(b, "</h1><p class=\"sub\">");
    report_escape(b, subtitle);
    buf_puts(b, "</p>\n<div class=\"cards\">");
    card(b, askdb_eval_pct_text(s->correct, s->evaluated, v, sizeof v),
         "execution accuracy (EX)");
    snprintf(v, sizeof v, "%ld / %ld", s->correct, s->evaluated);
    card(b, v, "correct / evaluated");
    snprintf(v, sizeof v, "%ld", s->bad);
    card(b, v, "bad items (not scored)");
    snprintf(v, sizeof v, "%.0f / %.0f ms", s->p50, s->p90);
    card(b, v, "latency p50 / p90");
    snprintf(v, sizeof v, "%.0f", s->tokens);
    card(b, v, "tokens per question");
    card(b, askdb_eval_pct_text(s->repaired, s->evaluated, v, sizeof v),
         "repair rate");
    if (s->done < s->selected) {
        snprintf(v, sizeof v, "%ld", s->selected - s->done);
        card(b, v, "not run");
    }
    buf_puts(b, "</div>\n<h2>Charts</h2><div class=\"charts\">\n");
    for (k = 0; k < s->ndiff; k++) {
        labels[k] = s->diff[k].name;
        vals[k] = pct(s->diff[k].correct, s->diff[k].n);
    }
    report_svg_bars(b, "EX by difficulty", labels, vals, s->ndiff, 100, 1,
                    "%");
    report_svg_histogram(b, "Latency per question", s->lat, s->nlat, 20);
    for (k = 0; k < s->nclasses; k++) {
        labels[k] = s->classes[k].name;
        vals[k] = (double)s->classes[k].n;
        if (vals[k] > vmax)
            vmax = vals[k];
    }
    report_svg_bars(b, "Error classes", labels, vals, s->nclasses, vmax, 0,
                    "");
    buf_puts(b, "</div>\n<h2>By difficulty</h2>\n");
    count_table(b, "difficulty", s->diff, s->ndiff, 1);
    buf_puts(b, "<h2>By database</h2>\n");
    count_table(b, "database", s->dbs, s->ndbs, 1);
    buf_printf(b, "<h2>Where the time goes (mean per question)</h2>\n"
               "<table><tr><th>schema</th><th>prompt</th><th>model</th>"
               "<th>validation</th><th>execution</th></tr><tr>");
    for (k = 0; k < 5; k++)
        buf_printf(b, "<td class=\"n\">%.1f ms</td>", s->stage_ms[k]);
    buf_printf(b, "</tr></table><p>model calls per question %.2f; tokens per "
               "question %.1f (prompt %.1f, completion %.1f); %ld of %ld "
               "questions needed a repair, %ld of them ended correct.</p>\n",
               s->calls, s->tokens, s->prompt_tokens, s->completion_tokens,
               s->repaired, s->evaluated, s->repaired_correct);
    for (i = 0; i < n; i++)
        if (recs[i] && !jsonx_str(recs[i], "bad") &&
            !rec_bool(recs[i], "correct"))
            nfail++;
    buf_printf(b, "<h2>Failures (%ld)</h2>\n", nfail);
    for (i = 0; i < n; i++)
        if (recs[i] && !jsonx_str(recs[i], "bad") &&
            !rec_bool(recs[i], "correct"))
            failure(b, recs[i]);
    buf_printf(b, "<h2>Bad items (%ld)</h2>\n", s->bad);
    if (s->bad) {
        count_table(b, "reason", s->bads, s->nbads, 0);
        buf_puts(b, "<table><tr><th>#</th><th>database</th><th>reason</th>"
                    "<th>question</th><th>gold SQL</th><th>message</th>"
                    "</tr>\n");
        for (i = 0; i < n; i++)
            if (recs[i] && jsonx_str(recs[i], "bad"))
                bad_item(b, recs[i]);
        buf_puts(b, "</table>\n");
    }
    buf_puts(b, "</body></html>\n");
    free(labels);
    free(vals);
}
