/* text.c - valid UTF-8: validation, cutting, repair; quoting; URLs (see
** text.h). */
#include "core/text.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "askdb.h"

size_t text_char_len(const char *s, size_t n, int keep_nul)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned long cp;
    size_t len, i;

    if (u[0] < 0x80)
        return u[0] || keep_nul ? 1 : 0;
    if (u[0] < 0xC2)
        return 0;
    if (u[0] < 0xE0) {
        len = 2;
        cp = u[0] & 0x1F;
    } else if (u[0] < 0xF0) {
        len = 3;
        cp = u[0] & 0x0F;
    } else if (u[0] < 0xF5) {
        len = 4;
        cp = u[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (u[i] & 0x3F);
    }
    if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
        return 0;
    if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))
        return 0;
    return len;
}

size_t text_valid_len(const char *s, size_t len)
{
    size_t i = 0, k;

    while (i < len) {
        k = text_char_len(s + i, len - i, 0);
        if (!k)
            break;
        i += k;
    }
    return i;
}

int text_valid(const char *s, size_t len)
{
    return text_valid_len(s, len) == len;
}

size_t text_chars(const char *s, size_t len)
{
    size_t i, c = 0;

    for (i = 0; i < len; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

size_t text_cut(const char *s, size_t len, size_t max)
{
    size_t n;

    if (len <= max)
        return len;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

void text_put(struct buf *b, const char *s, size_t len, size_t max)
{
    size_t i = 0, k;

    while (i < len) {
        k = text_char_len(s + i, len - i, 0);
        if (max && i + (k ? k : 1) > max) {
            buf_puts(b, "...");
            return;
        }
        if (k)
            buf_append(b, s + i, k);
        else
            buf_puts(b, TEXT_REPLACEMENT);
        i += k ? k : 1;
    }
}

void text_put_quoted(struct buf *b, const char *s, char q)
{
    const char *p;

    buf_putc(b, q);
    for (p = s; *p; p++) {
        if (*p == q)
            buf_putc(b, q);
        buf_putc(b, *p);
    }
    buf_putc(b, q);
}

char *text_repair(char *s)
{
    struct buf b;

    if (!s || text_valid(s, strlen(s)))
        return s;
    buf_init(&b, 0);
    text_put(&b, s, strlen(s), 0);
    free(s);
    return buf_steal(&b);
}

char *text_file_stem(const char *path)
{
    const char *base = strrchr(path, '/'), *dot;

    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    return strndup(base, dot && dot > base ? (size_t)(dot - base)
                                           : strlen(base));
}

/* The public name (askdb.h). */
char *askdb_real_text(double d, char *buf, size_t n)
{
    char *end, *p;
    int prec;

    if (!buf || n == 0)
        return buf;
    /* Any text of at most 15 digits (DBL_DIG) that reads back as a normal
    ** double is what %.15g writes of it: the first precision to try. A
    ** subnormal has fewer digits of its own (5e-324 is one bit), and 15
    ** write noise that reads back ("4.94065645841247e-324"): from 1.
    ** 17 read back for every double. strtod() and snprintf() share the
    ** locale's point. */
    prec = d != 0 && fabs(d) < DBL_MIN ? 1 : DBL_DIG;
    for (; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, d);
        if (d != d || strtod(buf, &end) == d)
            break;
    }
    for (p = buf; *p; p++)
        if (*p == ',')   /* a locale's decimal comma */
            *p = '.';
    return buf;
}

size_t askdb_utf8_len(const char *s, size_t n)
{
    return s && n ? text_char_len(s, n, 1) : 0;
}

int text_ends_nocase(const char *s, const char *suffix)
{
    size_t n = s ? strlen(s) : 0, k = strlen(suffix);

    return s && n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/*
** 1 when the host of url (scheme://[user@]host[:port]/...) is domain or
** one of its subdomains, ignoring ASCII case. Anything else, a URL that
** merely contains the domain elsewhere included, gives 0.
*/
int text_url_host_is(const char *url, const char *domain)
{
    const char *h = strstr(url, "://"), *end, *p;
    size_t n, d = strlen(domain);

    if (!h)
        return 0;
    h += 3;
    end = h + strcspn(h, "/?#");
    for (p = h; p < end; p++)
        if (*p == '@')
            h = p + 1;
    for (p = h; p < end && *p != ':'; p++)
        ;
    n = (size_t)(p - h);
    if (n && h[n - 1] == '.') /* "api.openai.com." is the same host */
        n--;
    if (n == d)
        return strncasecmp(h, domain, d) == 0;
    return n > d && h[n - d - 1] == '.' &&
           strncasecmp(h + n - d, domain, d) == 0;
}

const char *text_url_ambiguous(const char *auth, const char *ends,
                               const char **colon)
{
    const char *last = strrchr(auth + strcspn(auth, ends), '@');

    *colon = last ? strchr(auth, ':') : NULL;
    if (*colon && *colon > last)
        *colon = NULL;
    return last;
}

void text_prefix_once(char *msg, size_t n, const char *pre)
{
    size_t lp = strlen(pre), lm;

    if (n == 0 || strncmp(msg, pre, lp) == 0)
        return;
    if (lp >= n) {
        lp = text_cut(pre, lp, n - 1);
        memcpy(msg, pre, lp);
        msg[lp] = '\0';
        return;
    }
    lm = strlen(msg);
    lm = text_cut(msg, lm, n - 1 - lp);
    memmove(msg + lp, msg, lm);
    memcpy(msg, pre, lp);
    msg[lp + lm] = '\0';
}
