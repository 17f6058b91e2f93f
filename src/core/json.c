/* json.c - small helpers over jansson (see json.h). */
#include "json.h"

#include <string.h>

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
