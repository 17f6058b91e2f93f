/* format.c - output formats of the askdb command (see format.h). */
#include "cli/format.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/text.h"

int format_parse(const char *s)
{
    if (strcmp(s, "table") == 0)
        return FMT_TABLE;
    if (strcmp(s, "csv") == 0)
        return FMT_CSV;
    if (strcmp(s, "json") == 0)
        return FMT_JSON;
    if (strcmp(s, "markdown") == 0 || strcmp(s, "md") == 0)
        return FMT_MARKDOWN;
    return -1;
}

/* A cell as text into buf (for table, csv and markdown). NULL gives
** "NULL" except in CSV, where it is an empty field. */
static const char *cell_text(const askdb_value *v, char *buf, size_t n,
                             enum out_format f)
{
    size_t i, k;

    switch (v->type) {
    case ASKDB_INTEGER:
        snprintf(buf, n, "%lld", (long long)v->i);
        return buf;
    case ASKDB_REAL:
        snprintf(buf, n, "%.15g", v->d);
        return buf;
    case ASKDB_TEXT:
        return v->s;
    case ASKDB_BLOB:
        k = (size_t)snprintf(buf, n, "X'");
        for (i = 0; i < v->len && k + 8 < n; i++)
            k += (size_t)snprintf(buf + k, n - k, "%02X",
                                  (unsigned char)v->s[i]);
        snprintf(buf + k, n - k, i < v->len ? "...'" : "'");
        return buf;
    case ASKDB_NULL:
        break;
    }
    return f == FMT_CSV ? "" : "NULL";
}

/*
** The next character at s (NUL-terminated, *s not NUL): returns its
** bytes, and sets *with to NULL when it may be shown as it is, else to
** what is shown instead: one space for a control character - C0 (below
** 0x20), DEL, or a C1 control (U+0080..U+009F, 0xC2 0x80..0x9F in UTF-8)
** - and U+FFFD for a byte that starts no valid UTF-8 character. Text
** from the database and the model may hold any of them; written to a
** terminal as they are, ESC, BEL and CSI start sequences that move the
** cursor, retitle the window, plant links or set the clipboard (OSC 52),
** and a lone byte 0x9B, 0x9D or 0x9C is itself CSI, OSC or ST to a
** terminal that reads 8-bit controls.
*/
static size_t next_char(const char *s, const char **with)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t k;

    *with = NULL;
    if (u[0] < 0x20 || u[0] == 0x7f) {
        *with = " ";
        return 1;
    }
    if (u[0] < 0x80)
        return 1;
    k = text_char_len(s, strnlen(s, 4), 0);
    if (!k) {
        *with = TEXT_REPLACEMENT;
        return 1;
    }
    if (u[0] == 0xc2 && u[1] <= 0x9f)
        *with = " ";
    return k;
}

int format_is_tty(FILE *out)
{
    return isatty(fileno(out));
}

/* s with every control character but keep[] (NUL-terminated list) as one
** space. */
static void put_safe(FILE *out, const char *s, const char *keep)
{
    const char *with;
    size_t n;

    while (*s) {
        n = next_char(s, &with);
        if (with && !(n == 1 && strchr(keep, *s)))
            fputs(with, out);
        else
            fwrite(s, 1, n, out);
        s += n;
    }
}

void format_puts(FILE *out, const char *s)
{
    if (format_is_tty(out))
        put_safe(out, s, "\n\t");
    else
        fputs(s, out);
}

void format_printf(FILE *out, const char *fmt, ...)
{
    struct buf b;
    va_list ap;

    va_start(ap, fmt);
    if (!format_is_tty(out)) {
        vfprintf(out, fmt, ap);
        va_end(ap);
        return;
    }
    buf_init(&b, 0);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    put_safe(out, buf_err(&b) || !b.data ? "(out of memory)\n" : b.data,
             "\n\t");
    buf_free(&b);
}

void format_stream_piece(struct format_stream *fs, FILE *out,
                         const char *piece, size_t len)
{
    const unsigned char *u = (const unsigned char *)piece;
    const char *with;
    char ch[5];
    size_t i;

    if (!format_is_tty(out)) {
        fwrite(piece, 1, len, out);
        return;
    }
    /* A character may be split across pieces: its first bytes wait in
    ** fs->pend until it is whole (or shown to be invalid). */
    for (i = 0; i < len; i++) {
        if (fs->npend == 0) {
            if (u[i] == '\n' || u[i] == '\t')
                fputc(u[i], out);
            else if (u[i] < 0x20 || u[i] == 0x7f)
                fputc(' ', out);
            else if (u[i] < 0x80)
                fputc(u[i], out);
            else if (u[i] < 0xc2 || u[i] > 0xf4)
                fputs(TEXT_REPLACEMENT, out);
            else
                fs->pend[fs->npend++] = u[i];
            continue;
        }
        if ((u[i] & 0xc0) != 0x80) {
            /* The character broke off: its start is invalid, and this
            ** byte begins anew. */
            fputs(TEXT_REPLACEMENT, out);
            fs->npend = 0;
            i--;
            continue;
        }
        fs->pend[fs->npend++] = u[i];
        if (fs->npend < (fs->pend[0] < 0xe0 ? 2 : fs->pend[0] < 0xf0 ? 3 : 4))
            continue;
        memcpy(ch, fs->pend, (size_t)fs->npend);
        ch[fs->npend] = '\0';
        next_char(ch, &with);
        if (with)
            fputs(with, out);
        else
            fputs(ch, out);
        fs->npend = 0;
    }
}

/* Display width: code points, not bytes (UTF-8 continuation bytes do not
** count). Control characters are printed as one space (put_clean). */
static size_t width(const char *s)
{
    const char *with;
    size_t w = 0;

    while (*s) {
        s += next_char(s, &with);
        w++;
    }
    return w;
}

/* Width as printed in Markdown, where '|' is escaped as "\|". */
static size_t md_width(const char *s, int md)
{
    size_t w = width(s);

    for (; md && *s; s++)
        if (*s == '|')
            w++;
    return w;
}

/* A cell of a table or Markdown output: one line, every control
** character a space (these formats are for people, even in a file). */
static void put_clean(FILE *out, const char *s, int md)
{
    const char *with;
    size_t n;

    while (*s) {
        n = next_char(s, &with);
        if (with)
            fputs(with, out);
        else if (md && *s == '|')
            fputs("\\|", out);
        else
            fwrite(s, 1, n, out);
        s += n;
    }
}

static void pad(FILE *out, size_t n)
{
    while (n--)
        fputc(' ', out);
}

static int numeric(const askdb_value *v)
{
    return v->type == ASKDB_INTEGER || v->type == ASKDB_REAL;
}

static void rule(FILE *out, const size_t *w, int ncols)
{
    int c;
    size_t i;

    fputc('+', out);
    for (c = 0; c < ncols; c++) {
        for (i = 0; i < w[c] + 2; i++)
            fputc('-', out);
        fputc('+', out);
    }
    fputc('\n', out);
}

static const char *trunc_note(const askdb_result *r)
{
    return r->truncated == 1 ? "row limit (--max-rows)"
                             : "size limit (--max-bytes)";
}

static void print_table(FILE *out, const askdb_result *r, int md)
{
    size_t *w = calloc((size_t)r->ncols + 1, sizeof *w);
    char tmp[256];
    long i;
    int c;

    if (!w)
        return;
    for (c = 0; c < r->ncols; c++)
        w[c] = md_width(r->cols[c], md);
    for (i = 0; i < r->nrows; i++)
        for (c = 0; c < r->ncols; c++) {
            size_t x = md_width(cell_text(askdb_result_cell(r, i, c), tmp,
                                          sizeof tmp, FMT_TABLE), md);
            if (x > w[c])
                w[c] = x;
        }
    if (md) /* a Markdown rule needs three dashes */
        for (c = 0; c < r->ncols; c++)
            if (w[c] < 3)
                w[c] = 3;
    if (!md)
        rule(out, w, r->ncols);
    fputc('|', out);
    for (c = 0; c < r->ncols; c++) {
        fputc(' ', out);
        put_clean(out, r->cols[c], md);
        pad(out, w[c] - md_width(r->cols[c], md) + 1);
        fputc('|', out);
    }
    fputc('\n', out);
    if (md) {
        fputc('|', out);
        for (c = 0; c < r->ncols; c++) {
            size_t k;
            fputc(' ', out);
            for (k = 0; k < w[c]; k++)
                fputc('-', out);
            fputs(" |", out);
        }
        fputc('\n', out);
    } else {
        rule(out, w, r->ncols);
    }
    for (i = 0; i < r->nrows; i++) {
        fputc('|', out);
        for (c = 0; c < r->ncols; c++) {
            const askdb_value *v = askdb_result_cell(r, i, c);
            const char *t = cell_text(v, tmp, sizeof tmp, FMT_TABLE);
            size_t gap = w[c] - md_width(t, md);
            fputc(' ', out);
            if (numeric(v) && !md)
                pad(out, gap);
            put_clean(out, t, md);
            if (!numeric(v) || md)
                pad(out, gap);
            fputs(" |", out);
        }
        fputc('\n', out);
    }
    if (!md)
        rule(out, w, r->ncols);
    free(w);
}

/* RFC 4180: quote fields with separators, quotes or line breaks. On a
** terminal (tty), control characters but line breaks and tabs are shown
** as spaces, as everywhere else; in a file or pipe every byte stays. */
static void csv_field(FILE *out, const char *s, int tty)
{
    struct buf b;

    if (!strpbrk(s, ",\"\r\n")) {
        if (tty)
            put_safe(out, s, "\t");
        else
            fputs(s, out);
        return;
    }
    buf_init(&b, 0);
    buf_putc(&b, '"');
    for (; *s; s++) {
        if (*s == '"')
            buf_putc(&b, '"');
        buf_putc(&b, *s);
    }
    buf_putc(&b, '"');
    if (buf_err(&b) || !b.data)
        fputs("(out of memory)", out);
    else if (tty)
        put_safe(out, b.data, "\r\n\t");
    else
        fputs(b.data, out);
    buf_free(&b);
}

static void print_csv(FILE *out, const askdb_result *r)
{
    int tty = format_is_tty(out);
    char tmp[256];
    long i;
    int c;

    for (c = 0; c < r->ncols; c++) {
        if (c)
            fputc(',', out);
        csv_field(out, r->cols[c], tty);
    }
    fputs("\r\n", out);
    for (i = 0; i < r->nrows; i++) {
        for (c = 0; c < r->ncols; c++) {
            if (c)
                fputc(',', out);
            csv_field(out, cell_text(askdb_result_cell(r, i, c), tmp,
                                     sizeof tmp, FMT_CSV), tty);
        }
        fputs("\r\n", out);
    }
}

void format_result(FILE *out, FILE *err, enum out_format f,
                   const askdb_result *r)
{
    switch (f) {
    case FMT_TABLE:
        print_table(out, r, 0);
        fprintf(out, "(%ld row%s", r->nrows, r->nrows == 1 ? "" : "s");
        if (r->truncated)
            fprintf(out, "; truncated at the %s", trunc_note(r));
        fputs(")\n", out);
        return;
    case FMT_MARKDOWN:
        print_table(out, r, 1);
        break;
    case FMT_CSV:
        print_csv(out, r);
        break;
    case FMT_JSON:
        return;
    }
    if (r->truncated)
        fprintf(err, "askdb: result truncated at the %s after %ld rows\n",
                trunc_note(r), r->nrows);
}

/* ---------------------------------------------------------------------- */
/* JSON                                                                   */
/* ---------------------------------------------------------------------- */

/* Text as a JSON string that always serializes: bytes that are not UTF-8
** (SQLite does not check text, a model can stop inside a character)
** become U+FFFD, so no field is ever dropped and the document stays
** valid. Everything else, NUL included, is kept exactly. */
static json_t *text_json(const char *s, size_t len)
{
    json_t *j = jsonx_text(s, len, 1);

    return j ? j : json_null();
}

/* A C string (or NULL -> null) as text_json() does it. */
static json_t *str_json(const char *s)
{
    return s ? text_json(s, strlen(s)) : json_null();
}

static json_t *value_json(const askdb_value *v)
{
    static const char hex[] = "0123456789abcdef";
    char *h;
    json_t *j;
    size_t i;

    switch (v->type) {
    case ASKDB_INTEGER:
        return json_integer((json_int_t)v->i);
    case ASKDB_REAL:
        /* JSON has no infinities or NaN: say which in a string. */
        if (isnan(v->d))
            return json_string("NaN");
        if (isinf(v->d))
            return json_string(v->d > 0 ? "Infinity" : "-Infinity");
        return json_real(v->d);
    case ASKDB_TEXT:
        return text_json(v->s, v->len);
    case ASKDB_BLOB:
        h = malloc(v->len * 2 + 1);
        if (!h)
            return json_null();
        for (i = 0; i < v->len; i++) {
            h[2 * i] = hex[(unsigned char)v->s[i] >> 4];
            h[2 * i + 1] = hex[(unsigned char)v->s[i] & 15];
        }
        h[2 * i] = '\0';
        j = json_pack("{s:s}", "blob_hex", h);
        free(h);
        return j;
    case ASKDB_NULL:
        break;
    }
    return json_null();
}

static void add_result(json_t *o, const askdb_result *r)
{
    json_t *cols = json_array(), *rows = json_array();
    long i;
    int c;

    for (c = 0; c < r->ncols; c++)
        json_array_append_new(cols, str_json(r->cols[c]));
    for (i = 0; i < r->nrows; i++) {
        json_t *row = json_array();
        for (c = 0; c < r->ncols; c++)
            json_array_append_new(row,
                                  value_json(askdb_result_cell(r, i, c)));
        json_array_append_new(rows, row);
    }
    json_object_set_new(o, "columns", cols);
    json_object_set_new(o, "rows", rows);
    json_object_set_new(o, "row_count", json_integer(r->nrows));
    json_object_set_new(o, "truncated",
                        r->truncated == 0 ? json_false()
                        : json_string(r->truncated == 1 ? "rows" : "bytes"));
}

/* JSON text for a terminal: DEL and the C1 controls, which the JSON
** writer keeps as they are, as \u escapes (they occur only inside
** strings, where an escape means the same character). */
static void put_json_tty(FILE *out, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;

    for (; *u; u++) {
        if (*u == 0x7f) {
            fputs("\\u007f", out);
        } else if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f) {
            fprintf(out, "\\u00%02x", u[1]);
            u++;
        } else {
            fputc(*u, out);
        }
    }
}

/* Serialize in memory first so that a failure prints nothing half-done. */
static int dump(FILE *out, json_t *o)
{
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                   JSON_REAL_PRECISION(15));

    json_decref(o);
    if (!text) {
        fprintf(stderr, "askdb: cannot write the result as JSON\n");
        return -1;
    }
    if (format_is_tty(out))
        put_json_tty(out, text);
    else
        fputs(text, out);
    fputc('\n', out);
    free(text);
    return 0;
}

int format_answer_json(FILE *out, const char *question,
                       const askdb_answer *a)
{
    json_t *o = json_object(), *atts = json_array(), *t;
    int i;

    json_object_set_new(o, "question", str_json(question));
    json_object_set_new(o, "status", json_string(askdb_status_str(a->status)));
    json_object_set_new(o, "sql", str_json(a->sql));
    if (a->result)
        add_result(o, a->result);
    if (a->error)
        json_object_set_new(o, "error", str_json(a->error));
    for (i = 0; i < a->nattempts; i++) {
        const askdb_attempt *at = &a->attempts[i];
        json_array_append_new(
            atts, json_pack("{s:o, s:s, s:o, s:f}", "sql", str_json(at->sql),
                            "error", askdb_error_class_str(at->error),
                            "message", str_json(at->message),
                            "llm_ms", at->llm_ms));
    }
    json_object_set_new(o, "attempts", atts);
    t = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "schema_ms", a->t.schema_ms,
                  "prompt_ms", a->t.prompt_ms, "llm_ms", a->t.llm_ms,
                  "validate_ms", a->t.validate_ms, "exec_ms", a->t.exec_ms,
                  "total_ms", a->t.total_ms);
    json_object_set_new(o, "timings", t);
    json_object_set_new(o, "llm_calls", json_integer(a->llm_calls));
    json_object_set_new(o, "candidates", json_integer(a->ncandidates));
    json_object_set_new(o, "confidence", json_real(a->confidence));
    json_object_set_new(o, "answer", str_json(a->text));
    json_object_set_new(o, "not_a_question",
                        json_boolean(a->not_a_question));
    json_object_set_new(o, "tokens",
                        json_pack("{s:I, s:I}", "prompt",
                                  (json_int_t)a->prompt_tokens, "completion",
                                  (json_int_t)a->completion_tokens));
    return dump(out, o);
}

int format_result_json(FILE *out, const char *sql, const askdb_result *r,
                       const char *error)
{
    json_t *o = json_object();

    json_object_set_new(o, "sql", str_json(sql));
    if (r) {
        add_result(o, r);
        json_object_set_new(o, "exec_ms", json_real(r->exec_ms));
    }
    if (error)
        json_object_set_new(o, "error", str_json(error));
    return dump(out, o);
}
