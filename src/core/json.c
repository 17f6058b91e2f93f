/* json.c - small helpers over jansson (see json.h). */
#include "json.h"

#include <string.h>

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

int jsonx_set_str(json_t *o, const char *key, const char *s)
{
    json_t *v = s ? json_string(s) : json_null();

    if (!v) /* invalid UTF-8: keep the bytes visible rather than lose them */
        v = json_stringn_nocheck(s, strlen(s));
    return json_object_set_new(o, key, v);
}
