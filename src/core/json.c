/* json.c - small helpers over jansson (see json.h). */
#include "json.h"

#include <string.h>

#include "core/buf.h"

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

/* Length of the valid UTF-8 sequence at s (n bytes left, n > 0), or 0.
** NUL counts as valid only with keep_nul. */
static size_t utf8_len(const unsigned char *s, size_t n, int keep_nul)
{
    size_t len, i;
    unsigned cp;

    if (s[0] < 0x80)
        return s[0] || keep_nul ? 1 : 0;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        cp = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        cp = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}

json_t *jsonx_text(const char *s, size_t n, int keep_nul)
{
    const unsigned char *u = (const unsigned char *)s;
    struct buf b;
    size_t i = 0, k;
    json_t *v;

    buf_init(&b, 0);
    while (i < n) {
        k = utf8_len(u + i, n - i, keep_nul);
        if (k) {
            buf_append(&b, s + i, k);
            i += k;
        } else {
            buf_puts(&b, "\xef\xbf\xbd");
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

int jsonx_set_str(json_t *o, const char *key, const char *s)
{
    json_t *v = s ? json_string(s) : json_null();

    /* Not UTF-8 (database text, a reply cut inside a character): repair
    ** it. jansson would refuse to serialize the whole document over one
    ** string it did not check. */
    if (!v && s)
        v = jsonx_text(s, strlen(s), 0);
    return json_object_set_new(o, key, v);
}
