/* format.c - output formats of the askdb command (see format.h). */
#define _XOPEN_SOURCE 700   /* wcwidth() */
#include "format.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>


/* U+FFFD, shown for a byte that starts no valid UTF-8 character. */
#define REPLACEMENT "\xEF\xBF\xBD"

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

/*
** A real for reading, as sqlite3 shows one: 15 significant digits
** (183.925, not 183.92499999999987) and always a point, so that a real
** never reads as an integer (100.0, 1.0e+301). The infinities and NaN
** (PostgreSQL, DuckDB) are inf, -inf and nan, as in CSV.
*/
static const char *real_for_reading(double d, char *buf, size_t n)
{
    size_t k;
    char *e;

    k = (size_t)snprintf(buf, n, "%.15g", d);
    if (k + 3 > n || !isfinite(d) || strchr(buf, '.'))
        return buf;
    e = strchr(buf, 'e');
    if (!e) {
        memcpy(buf + k, ".0", 3);
    } else {
        memmove(e + 2, e, strlen(e) + 1);
        memcpy(e, ".0", 2);
    }
    return buf;
}

/* A cell as text into buf (for table, csv and markdown). NULL gives ""
** (a table shows it on a terminal: print_table); a real is
** real_for_reading(), in CSV as many digits as it takes to read back. */
static const char *cell_text(const askdb_value *v, char *buf, size_t n,
                             enum out_format f)
{
    size_t i, k;

    switch (v->type) {
    case ASKDB_INTEGER:
        snprintf(buf, n, "%lld", (long long)v->i);
        return buf;
    case ASKDB_REAL:
        if (f == FMT_CSV)
            return askdb_real_text(v->d, buf, n);
        return real_for_reading(v->d, buf, n);
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
    return "";
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
** terminal that reads 8-bit controls. The bidirectional overrides and
** isolates (U+202A..U+202E, U+2066..U+2069) are a space too: invisible,
** they reorder what follows them, so a value could show other text than
** it holds ("Trojan Source").
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
    k = askdb_utf8_len(s, strnlen(s, 4));
    if (!k) {
        *with = REPLACEMENT;
        return 1;
    }
    if (u[0] == 0xc2 && u[1] <= 0x9f)
        *with = " ";
    if (k == 3 && u[0] == 0xe2 &&
        ((u[1] == 0x80 && u[2] >= 0xaa && u[2] <= 0xae) ||
         (u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)))
        *with = " ";
    return k;
}

int format_is_tty(FILE *out)
{
    return isatty(fileno(out));
}

/* The len bytes at s (a NUL among them included; a NUL follows them)
** with every control character but keep[] (NUL-terminated list) as one
** space. */
static void put_safe(FILE *out, const char *s, size_t len, const char *keep)
{
    const char *with;
    size_t n;

    while (len > 0) {
        n = next_char(s, &with);
        if (n > len)
            n = len;
        if (with && !(n == 1 && *s && strchr(keep, *s)))
            fputs(with, out);
        else
            fwrite(s, 1, n, out);
        s += n;
        len -= n;
    }
}

void format_puts(FILE *out, const char *s)
{
    if (format_is_tty(out))
        put_safe(out, s, strlen(s), "\n\t");
    else
        fputs(s, out);
}

void format_printf(FILE *out, const char *fmt, ...)
{
    va_list ap, ap2;
    char *text = NULL;
    const char *shown;
    int n;

    va_start(ap, fmt);
    if (!format_is_tty(out)) {
        vfprintf(out, fmt, ap);
        va_end(ap);
        return;
    }
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    if (n >= 0)
        text = malloc((size_t)n + 1);
    if (text)
        vsnprintf(text, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    va_end(ap);
    shown = text ? text : "(out of memory)\n";
    put_safe(out, shown, strlen(shown), "\n\t");
    free(text);
}

void format_stream_piece(struct format_stream *fs, FILE *out,
                         const char *piece, size_t len)
{
    const unsigned char *u = (const unsigned char *)piece;
    const char *with;
    char ch[5];
    size_t i;

    if (len)
        fs->open = piece[len - 1] != '\n';
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
                fputs(REPLACEMENT, out);
            else
                fs->pend[fs->npend++] = u[i];
            continue;
        }
        if ((u[i] & 0xc0) != 0x80) {
            /* The character broke off: its start is invalid, and this
            ** byte begins anew. */
            fputs(REPLACEMENT, out);
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

/* C.UTF-8's character classes, for wcwidth() whatever the process's
** locale (askdb never calls setlocale(): "C" knows no width of "界"). */
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;
static locale_t utf8_locale;

static void utf8_init(void)
{
    utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* The code points the grapheme rules of width() look at. */
#define ZWJ 0x200D            /* zero width joiner */
#define VS16 0xFE0F           /* variation selector 16: emoji picture */
#define RI_FIRST 0x1F1E6      /* regional indicators A..Z: two a flag */
#define RI_LAST 0x1F1FF
#define TONE_FIRST 0x1F3FB    /* emoji modifiers: skin tones */
#define TONE_LAST 0x1F3FF

/*
** Display width: the columns a terminal gives the text, by wcwidth() in
** C.UTF-8 (2 for an East Asian wide character: CJK, most emoji; 0 for a
** combining mark or a zero-width one; 1 for the rest), a code point at a
** time, with the rules that make an emoji sequence one picture, as
** terminals that draw them (and UTS #51) do: a skin-tone modifier after
** a picture adds nothing (👍🏽 is 2, not 4); a character joined by a ZWJ to
** a picture adds nothing (👨‍👩‍👧 is 2, not 6); a VS16 makes a one-column
** character a two-column picture (❤️, 🏳️); two regional indicators are
** a flag of 2 (🇩🇪; glibc gives each 1). A control character or a byte
** that starts no valid UTF-8 character is printed as one column
** (put_clean). Without C.UTF-8: one column a code point.
**
** With cut not NULL, *cut is the length in bytes of the longest start of
** s that is at most max columns wide and ends where a character (with
** its marks, modifiers and joined characters) ends, all of s when it
** fits, and *cut_w its width.
*/
static size_t width_cut(const char *s, size_t max, size_t *cut,
                        size_t *cut_w)
{
    const char *with, *s0 = s;
    size_t w = 0, n;
    locale_t old = (locale_t)0;
    mbstate_t st;
    wchar_t wc;
    int cw, cluster = 0, joined = 0, ri_open = 0, over = 0;

    pthread_once(&utf8_once, utf8_init);
    if (utf8_locale)
        old = uselocale(utf8_locale);
    while (*s) {
        n = next_char(s, &with);
        cw = 1;
        wc = 0;
        if (!with && n > 1 && utf8_locale) {
            memset(&st, 0, sizeof st);
            if (mbrtowc(&wc, s, n, &st) == n && (cw = wcwidth(wc)) < 0)
                cw = 1;
        }
        /* cluster: the width of the picture or character being drawn,
        ** which the marks, modifiers and joined characters after it
        ** belong to (a mark of width 0 leaves it as it is). */
        if (wc == ZWJ) {
            joined = cluster == 2;
        } else if (joined && !with) {
            cw = 0;
        } else if (wc == VS16) {
            cw = cluster == 1;
            cluster = cluster ? 2 : 0;
        } else if (wc >= TONE_FIRST && wc <= TONE_LAST && cluster == 2) {
            cw = 0;
        } else if (wc >= RI_FIRST && wc <= RI_LAST && ri_open) {
            cw = 2 - cluster;          /* the flag's second half */
            cluster = 2;
        } else if (cw > 0) {
            cluster = cw;
        }
        if (wc != ZWJ)
            joined = 0;
        ri_open = wc >= RI_FIRST && wc <= RI_LAST && !ri_open;
        /* A character that starts a new one (not a mark, modifier or
        ** joined part of the one before) past max ends the start that
        ** fits; so does one that makes the last one wider than max. */
        if (cut && !over && w + (size_t)cw > max) {
            over = 1;
            *cut = (size_t)(s - s0);
            *cut_w = w;
        }
        w += (size_t)cw;
        s += n;
    }
    if (cut && !over) {
        *cut = (size_t)(s - s0);
        *cut_w = w;
    }
    if (utf8_locale)
        uselocale(old);
    return w;
}

static size_t width(const char *s)
{
    return width_cut(s, 0, NULL, NULL);
}

/*
** In Markdown a cell is one line of a table row: a '|' in it is escaped as
** "\|", and a line break (CR LF, LF or CR) is GitHub's "<br>", which a
** table cell takes; every other control character is a space, as in a
** table. '<' and '&' are "&lt;" and "&amp;", so that a value shows as it
** is, not as HTML, an autolink or an entity ("<b>x</b>", "<a@b.c>",
** "&copy;"). md_break() is the bytes of a line break at s, 0 when none;
** md_escape() the text of the character c, NULL when it is itself.
*/
#define MD_BREAK "<br>"

static const char *md_escape(char c)
{
    switch (c) {
    case '|': return "\\|";
    case '<': return "&lt;";
    case '&': return "&amp;";
    default: return NULL;
    }
}

static size_t md_break(const char *s)
{
    if (s[0] == '\r' && s[1] == '\n')
        return 2;
    return s[0] == '\n' || s[0] == '\r';
}

/* Width as printed (in Markdown when md: md_break(), md_escape()). */
static size_t md_width(const char *s, int md)
{
    size_t w = width(s), n;
    const char *e;

    while (md && *s) {
        n = md_break(s);
        if (n) {
            /* width() counted each of its bytes as a space. */
            w += strlen(MD_BREAK) - n;
            s += n;
            continue;
        }
        if ((e = md_escape(*s)) != NULL)
            w += strlen(e) - 1;
        s++;
    }
    return w;
}

/* The first len bytes of a cell of a table or Markdown output (s ends
** with a NUL after them or later): one line, every control character a
** space (these formats are for people, even in a file), in Markdown a
** line break "<br>". */
static void put_clean(FILE *out, const char *s, size_t len, int md)
{
    const char *with, *end = s + len;
    size_t n;

    while (s < end && *s) {
        n = md ? md_break(s) : 0;
        if (n) {
            fputs(MD_BREAK, out);
            s += n;
            continue;
        }
        n = next_char(s, &with);
        if (with)
            fputs(with, out);
        else if (md && md_escape(*s))
            fputs(md_escape(*s), out);
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

/* cell_text() for a table: a text with NUL bytes whole, each NUL shown
** as the space a control character is (*owned is the copy to free). */
static const char *table_text(const askdb_value *v, char *buf, size_t n,
                              char **owned)
{
    size_t i;

    *owned = NULL;
    if (v->type != ASKDB_TEXT || !memchr(v->s, '\0', v->len))
        return cell_text(v, buf, n, FMT_TABLE);
    *owned = malloc(v->len + 1);
    if (!*owned)
        return "(out of memory)";
    for (i = 0; i < v->len; i++)
        (*owned)[i] = v->s[i] ? v->s[i] : ' ';
    (*owned)[v->len] = '\0';
    return *owned;
}

/*
** How a table shows NULL: on a terminal a dim "NULL" (SGR 2, as the web
** page shows it apart), so that it is neither the text 'NULL' nor empty
** text; elsewhere, and with NO_COLOR set or TERM=dumb, an empty cell, as
** psql and sqlite3 show it (CSV's empty field). NULL or the styled text.
*/
#define NULL_DIM "\033[2mNULL\033[22m"
#define NULL_DIM_WIDTH 4

static const char *null_dim(FILE *out)
{
    const char *term = getenv("TERM"), *nc = getenv("NO_COLOR");

    if (!format_is_tty(out) || (nc && *nc) || (term && !strcmp(term, "dumb")))
        return NULL;
    return NULL_DIM;
}

/*
** A table cell shows at most CELL_MAX columns: a longer value shows its
** start and "..." (CSV and JSON have it whole). Else one long value -
** a document, a hex dump - made every row of its column as wide, and a
** table of 1000 rows with one value of 1 MB was 1 GB of spaces. A
** Markdown cell is whole (a document made of it should hold the value),
** its column padded to CELL_MAX columns at most: a wider cell stands out
** of it unpadded, as Markdown allows.
*/
#define CELL_MAX 100
#define CELL_MORE "..."

/* How cell text t is shown: *len of its bytes, then "..." when *more;
** returns the width shown. */
static size_t cell_shown(const char *t, int md, size_t *len, int *more)
{
    size_t w, cut_w;

    *more = 0;
    if (md) {
        *len = strlen(t);
        return md_width(t, 1);
    }
    w = width_cut(t, CELL_MAX - strlen(CELL_MORE), len, &cut_w);
    if (w <= CELL_MAX) {
        *len = strlen(t);
        return w;
    }
    *more = 1;
    return cut_w + strlen(CELL_MORE);
}

/* Cell text t, padded to w columns (left, or right when right_align);
** returns 1 when it was cut. */
static int put_cell(FILE *out, const char *t, size_t w, int md,
                    int right_align)
{
    size_t len, shown;
    int more;

    shown = cell_shown(t, md, &len, &more);
    if (right_align && shown < w)
        pad(out, w - shown);
    put_clean(out, t, len, md);
    if (more)
        fputs(CELL_MORE, out);
    if (!right_align && shown < w)
        pad(out, w - shown);
    return more;
}

/* The columns of the terminal out is, or 0 when it is none. */
static size_t term_cols(FILE *out)
{
    struct winsize ws;

    if (!format_is_tty(out) || ioctl(fileno(out), TIOCGWINSZ, &ws) != 0)
        return 0;
    return ws.ws_col;
}

/* 1 when a table of columns w[0..ncols) is wider than the terminal out
** is (never when out is no terminal). */
static int too_wide(FILE *out, const size_t *w, int ncols)
{
    size_t cols = term_cols(out), total = 1;
    int c;

    for (c = 0; c < ncols; c++)
        total += w[c] + 3;
    return cols > 0 && total > cols;
}

/* A record's first line: head, then dashes to the width of its lines
** (name, " | ", value), within the terminal's cols. */
static void record_head(FILE *out, const char *head, size_t width,
                        size_t cols)
{
    size_t k;

    fputs(head, out);
    for (k = strlen(head); k < width && k + 1 < cols; k++)
        fputc('-', out);
    fputc('\n', out);
}

/*
** A table wider than the terminal, a record at a time, as psql's
** expanded display (\x auto) shows it: a line per column, its name and
** its value; wrapped by the terminal, a wide table's rows no longer read
** as rows. w[] holds the columns' widths. With no rows, the column names
** alone, a line each, under "-[ NO ROWS ]". Returns 1 when a cell was cut.
*/
static int print_records(FILE *out, const askdb_result *r, const size_t *w,
                         const char *dim)
{
    size_t nw = 0, vw = 0, len, k, cols = term_cols(out);
    char tmp[256];
    long i;
    int c, more, cut = 0;

    for (c = 0; c < r->ncols; c++) {
        k = cell_shown(r->cols[c], 0, &len, &more);
        if (k > nw)
            nw = k;
        if (w[c] > vw)
            vw = w[c];
    }
    if (r->nrows == 0) {
        /* No record to show, but the columns it would have, as a table
        ** of no rows shows its header (psql's \x shows none). */
        record_head(out, "-[ NO ROWS ]", nw + 3 + vw, cols);
        for (c = 0; c < r->ncols; c++) {
            cut |= put_cell(out, r->cols[c], 0, 0, 0);
            fputc('\n', out);
        }
    }
    for (i = 0; i < r->nrows; i++) {
        snprintf(tmp, sizeof tmp, "-[ RECORD %ld ]", i + 1);
        record_head(out, tmp, nw + 3 + vw, cols);
        for (c = 0; c < r->ncols; c++) {
            const askdb_value *v = askdb_result_cell(r, i, c);
            char *owned;
            const char *t = table_text(v, tmp, sizeof tmp, &owned);
            cut |= put_cell(out, r->cols[c], nw, 0, 0);
            fputs(" | ", out);
            if (dim && v->type == ASKDB_NULL)
                fputs(dim, out);
            else
                cut |= put_cell(out, t, 0, 0, 0);
            free(owned);
            fputc('\n', out);
        }
    }
    return cut;
}

/* Print r as a table or (md) Markdown; returns 1 when a cell was cut. */
static int print_table(FILE *out, const askdb_result *r, int md)
{
    size_t *w = calloc((size_t)r->ncols + 1, sizeof *w), len, x;
    const char *dim = null_dim(out);
    char tmp[256];
    long i;
    int c, more, cut = 0;

    if (!w)
        return 0;
    for (c = 0; c < r->ncols; c++)
        w[c] = cell_shown(r->cols[c], md, &len, &more);
    for (i = 0; i < r->nrows; i++)
        for (c = 0; c < r->ncols; c++) {
            const askdb_value *v = askdb_result_cell(r, i, c);
            char *owned;
            x = cell_shown(table_text(v, tmp, sizeof tmp, &owned), md, &len,
                           &more);
            free(owned);
            if (dim && v->type == ASKDB_NULL)
                x = NULL_DIM_WIDTH;
            if (x > w[c])
                w[c] = x;
        }
    for (c = 0; c < r->ncols; c++) {
        if (md && w[c] < 3) /* a Markdown rule needs three dashes */
            w[c] = 3;
        if (md && w[c] > CELL_MAX)
            w[c] = CELL_MAX;
    }
    if (!md && too_wide(out, w, r->ncols)) {
        cut = print_records(out, r, w, dim);
        free(w);
        return cut;
    }
    if (!md)
        rule(out, w, r->ncols);
    fputc('|', out);
    for (c = 0; c < r->ncols; c++) {
        fputc(' ', out);
        cut |= put_cell(out, r->cols[c], w[c], md, 0);
        fputs(" |", out);
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
            char *owned;
            const char *t = table_text(v, tmp, sizeof tmp, &owned);
            fputc(' ', out);
            if (dim && v->type == ASKDB_NULL) {
                fputs(dim, out);
                pad(out, w[c] - NULL_DIM_WIDTH);
            } else {
                cut |= put_cell(out, t, w[c], md, numeric(v) && !md);
            }
            free(owned);
            fputs(" |", out);
        }
        fputc('\n', out);
    }
    if (!md)
        rule(out, w, r->ncols);
    free(w);
    return cut;
}

/* The len bytes at s as they are, or on a terminal (tty) with control
** characters but keep[] as spaces. */
static void put_bytes(FILE *out, const char *s, size_t len, int tty,
                      const char *keep)
{
    if (tty)
        put_safe(out, s, len, keep);
    else
        fwrite(s, 1, len, out);
}

/* RFC 4180's quoting: quote fields with separators, quotes or line
** breaks. On a
** terminal (tty), control characters but line breaks and tabs are shown
** as spaces, as everywhere else; in a file or pipe every byte stays, a
** NUL too: the field is the len bytes at s (a NUL follows them). */
static void csv_field(FILE *out, const char *s, size_t len, int tty)
{
    const char *q;
    size_t i, k;

    for (i = 0; i < len; i++)
        if (s[i] && strchr(",\"\r\n", s[i]))
            break;
    if (i == len) {
        put_bytes(out, s, len, tty, "\t");
        return;
    }
    fputc('"', out);
    while (len > 0) {
        /* Up to and with the next quote, which is then doubled. */
        q = memchr(s, '"', len);
        k = q ? (size_t)(q - s) + 1 : len;
        put_bytes(out, s, k, tty, "\r\n\t");
        if (q)
            fputc('"', out);
        s += k;
        len -= k;
    }
    fputc('"', out);
}

/* One value as a CSV field: all of it (a table shows a long blob cut).
** NULL is an empty field and empty text a quoted one (`""`), as
** PostgreSQL's COPY and the web page's download write them, so the two
** stay apart for a reader that tells them apart. */
static void csv_value(FILE *out, const askdb_value *v, int tty)
{
    char tmp[64], *hex;
    const char *t;
    size_t i;

    if (v->type == ASKDB_TEXT && v->len == 0) {
        fputs("\"\"", out);
    } else if (v->type == ASKDB_TEXT) {
        csv_field(out, v->s, v->len, tty);
    } else if (v->type == ASKDB_BLOB) {
        hex = malloc(2 * v->len + 4);
        if (!hex) {
            fputs("(out of memory)", out);
            return;
        }
        memcpy(hex, "X'", 2);
        for (i = 0; i < v->len; i++)
            snprintf(hex + 2 + 2 * i, 3, "%02X", (unsigned char)v->s[i]);
        memcpy(hex + 2 + 2 * v->len, "'", 2);
        csv_field(out, hex, 2 * v->len + 3, tty);
        free(hex);
    } else {
        t = cell_text(v, tmp, sizeof tmp, FMT_CSV);
        csv_field(out, t, strlen(t), tty);
    }
}

/*
** Records end with a line feed, not RFC 4180's CRLF: as psql --csv and
** sqlite3 -csv write them here, and what a shell pipeline takes whole
** (`n=$(askdb sql db "SELECT count(*) ..." | tail -1)` is "250", not
** "250\r"); CSV readers take either. A CR or LF inside a value stays in
** its quoted field.
*/
static void print_csv(FILE *out, const askdb_result *r)
{
    int tty = format_is_tty(out);
    long i;
    int c;

    for (c = 0; c < r->ncols; c++) {
        if (c)
            fputc(',', out);
        csv_field(out, r->cols[c], strlen(r->cols[c]), tty);
    }
    fputc('\n', out);
    for (i = 0; i < r->nrows; i++) {
        for (c = 0; c < r->ncols; c++) {
            if (c)
                fputc(',', out);
            csv_value(out, askdb_result_cell(r, i, c), tty);
        }
        fputc('\n', out);
    }
}

void format_result(FILE *out, FILE *err, enum out_format f,
                   const askdb_result *r)
{
    int cut;

    switch (f) {
    case FMT_TABLE:
        cut = print_table(out, r, 0);
        fprintf(out, "(%ld row%s", r->nrows, r->nrows == 1 ? "" : "s");
        if (r->truncated)
            fprintf(out, "; truncated at the %s", trunc_note(r));
        if (cut)
            fprintf(out, "; values over %d columns cut: -f csv or json "
                         "shows them whole", CELL_MAX);
        fputs(")\n", out);
        return;
    case FMT_MARKDOWN:
        (void)print_table(out, r, 1);
        break;
    case FMT_CSV:
        print_csv(out, r);
        break;
    case FMT_JSON:
        return;
    }
    if (r->truncated)
        fprintf(err, "askdb: result truncated at the %s after %ld row%s\n",
                trunc_note(r), r->nrows, r->nrows == 1 ? "" : "s");
}

/* ---------------------------------------------------------------------- */
/* JSON (written by the library: askdb_answer_json, askdb_result_json)    */
/* ---------------------------------------------------------------------- */

/* Write a library JSON document with a newline; on a terminal its C1
** controls are escaped too. */
static int put_json(FILE *out, askdb_status st, char *text)
{
    if (st || !text) {
        fprintf(stderr, "askdb: cannot write the result as JSON (%s)\n",
                askdb_status_str(st));
        return -1;
    }
    fputs(text, out);
    fputc('\n', out);
    askdb_free(text);
    return 0;
}

static int json_flags(FILE *out)
{
    return ASKDB_JSON_PRETTY | (format_is_tty(out) ? ASKDB_JSON_TERMINAL : 0);
}

int format_answer_json(FILE *out, const askdb_answer *a)
{
    char *text = NULL;
    askdb_status st = askdb_answer_json(a, json_flags(out), &text);

    return put_json(out, st, text);
}

int format_result_json(FILE *out, const char *sql, const askdb_result *r,
                       const char *error)
{
    char *text = NULL;
    askdb_status st = askdb_result_json(r, sql, error, json_flags(out), &text);

    return put_json(out, st, text);
}
