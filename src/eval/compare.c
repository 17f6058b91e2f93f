/* compare.c - execution accuracy as the official Spider evaluation
** decides it. */
#include "eval/compare.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "db/rescmp.h"
#include "sql/extract.h"

/* The rules of equality are in db/rescmp.c; this file prepares the SQL. */

/* Replace every occurrence of `from` by `to` (plain text, like Python's
** str.replace). */
static void replace_all(struct buf *out, const char *s, const char *from,
                        const char *to)
{
    size_t n = strlen(from);
    const char *hit;

    while ((hit = strstr(s, from)) != NULL) {
        buf_append(out, s, (size_t)(hit - s));
        buf_puts(out, to);
        s = hit + n;
    }
    buf_puts(out, s);
}

/* Match YEAR\s*(\s*CURDATE\s*(\s*)\s*)\s* (any case) at p; returns its
** length or 0. */
static size_t match_cur_year(const char *p)
{
    static const char *const parts[] = {"year", "(", "curdate", "(", ")",
                                        ")"};
    const char *q = p;
    size_t i, n;

    for (i = 0; i < sizeof parts / sizeof *parts; i++) {
        n = strlen(parts[i]);
        if (strncasecmp(q, parts[i], n))
            return 0;
        q += n;
        while (isspace((unsigned char)*q))
            q++;
    }
    return (size_t)(q - p);
}

char *cmp_prepare_sql(const char *sql, int is_pred, int keep_distinct)
{
    struct buf a, b;
    const char *p;
    size_t n;
    int kind;
    char *s;

    /* evaluate(): p_str.replace(" value ", " 1 ") */
    buf_init(&a, 0);
    if (is_pred)
        replace_all(&a, sql, " value ", " 1 ");
    else
        buf_puts(&a, sql);
    s = buf_steal(&a);
    if (!s)
        return NULL;
    /* postprocess() */
    buf_init(&a, 0);
    replace_all(&a, s, "> =", ">=");
    free(s);
    s = buf_steal(&a);
    if (!s)
        return NULL;
    buf_init(&a, 0);
    replace_all(&a, s, "< =", "<=");
    free(s);
    s = buf_steal(&a);
    if (!s)
        return NULL;
    buf_init(&a, 0);
    replace_all(&a, s, "! =", "!=");
    free(s);
    s = buf_steal(&a);
    if (!s)
        return NULL;
    /* remove_distinct(): drop every DISTINCT keyword token, keep the rest
    ** (strings, quoted names and comments are single tokens). */
    buf_init(&b, 0);
    for (p = s; (n = sqlx_token(p, &kind)) > 0; p += n) {
        if (!keep_distinct && kind == SQLX_WORD && n == 8 &&
            strncasecmp(p, "distinct", 8) == 0)
            continue;
        buf_append(&b, p, n);
    }
    free(s);
    s = buf_steal(&b);
    if (!s)
        return NULL;
    /* replace_cur_year() */
    buf_init(&b, 0);
    for (p = s; *p;) {
        n = match_cur_year(p);
        if (n) {
            buf_puts(&b, "2020");
            p += n;
        } else {
            buf_putc(&b, *p++);
        }
    }
    free(s);
    return buf_steal(&b);
}
