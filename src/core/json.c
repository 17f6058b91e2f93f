/* json.c - small helpers over jansson (see json.h). */
#include "json.h"

#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "askdb.h"
#include "core/buf.h"
#include "core/text.h"

const char *jsonx_str(const json_t *o, const char *key)
{
    const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

    return json_is_string(v) ? json_string_value(v) : NULL;
}

long long jsonx_int(const json_t *o, const char *key, long long dflt)
{
    const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v)) {
        double d = json_real_value(v);

        /* Converting a double outside long long's range is undefined. */
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
            return dflt;
        return (long long)d;
    }
    return dflt;
}

char *jsonx_dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

json_t *jsonx_text(const char *s, size_t n, int keep_nul)
{
    struct buf b;
    size_t i = 0, k;
    json_t *v;

    buf_init(&b, 0);
    while (i < n) {
        k = text_char_len(s + i, n - i, keep_nul);
        if (k) {
            buf_append(&b, s + i, k);
            i += k;
        } else {
            buf_puts(&b, TEXT_REPLACEMENT);
            i++;
        }
    }
    if (buf_err(&b)) {
        buf_free(&b);
        return NULL;
    }
    v = json_stringn(b.data ? b.data : "", b.len);
    buf_free(&b);
    return v;
}

json_t *jsonx_string(const char *s)
{
    json_t *v;

    if (!s)
        return json_null();
    /* Not UTF-8 (database text, a reply cut inside a character): repair
    ** it. jansson would refuse to serialize the whole document over one
    ** string it did not check. */
    v = json_string(s);
    return v ? v : jsonx_text(s, strlen(s), 0);
}

int jsonx_set_str(json_t *o, const char *key, const char *s)
{
    return json_object_set_new(o, key, jsonx_string(s));
}

/*
** The public name (askdb.h). jansson writes every real with one
** precision for all, and 17 digits make 0.1 "0.10000000000000001" where
** 15 lost digits of others ("123456789.12345678" came out
** "123456789.123457"). A number is what starts with '-' or a digit
** outside a string; those without '.' or 'e' (integers) stay as written,
** and so do those no double holds.
*/
char *askdb_json_shorten_reals(char *t)
{
    char *r = t, *w = t, *end, tmp[32];
    int in_str = 0;
    size_t k, m;

    if (!t)
        return NULL;
    while (*r) {
        if (in_str) {
            if (*r == '\\' && r[1])
                *w++ = *r++;
            else if (*r == '"')
                in_str = 0;
            *w++ = *r++;
            continue;
        }
        if (*r == '"')
            in_str = 1;
        if (*r != '-' && !(*r >= '0' && *r <= '9')) {
            *w++ = *r++;
            continue;
        }
        k = strspn(r, "-+0123456789.eE");
        if (k < sizeof tmp - 2 && (memchr(r, '.', k) || memchr(r, 'e', k) ||
                                   memchr(r, 'E', k))) {
            const char *point = localeconv()->decimal_point;
            double d;
            memcpy(tmp, r, k);
            tmp[k] = '\0';
            /* strtod() reads the locale's point; jansson writes '.'. */
            if (point && point[0] && point[0] != '.' && !point[1] &&
                (end = strchr(tmp, '.')) != NULL)
                *end = point[0];
            d = strtod(tmp, &end);
            /* A number past a double's range (1e400) reads as an infinity,
            ** whose text "inf" is no JSON: it stays as written. One that
            ** underflows is the 0 it reads as. */
            if (*end == '\0' && isfinite(d)) {
                askdb_real_text(d, tmp, sizeof tmp);
                m = strlen(tmp);
                if (!strpbrk(tmp, ".en"))
                    memcpy(tmp + m, ".0", 3), m += 2;
                if (m <= k) {
                    memmove(w, tmp, m);
                    w += m;
                    r += k;
                    continue;
                }
            }
        }
        memmove(w, r, k);
        w += k;
        r += k;
    }
    *w = '\0';
    return t;
}
