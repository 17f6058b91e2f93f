/* text.c - valid UTF-8 for the model and the trace (see text.h). */
#include "agent/text.h"

#include <stdlib.h>
#include <string.h>

#define REPLACEMENT "\xEF\xBF\xBD" /* U+FFFD */

/* Length of the valid UTF-8 character at s[0..n) (n >= 1), 0 when none
** starts there: a stray continuation byte, an overlong form, a surrogate,
** a code point past U+10FFFF, a sequence cut short, or a NUL. */
static size_t char_len(const unsigned char *s, size_t n)
{
    unsigned long cp;
    size_t len, i;

    if (s[0] == 0)
        return 0;
    if (s[0] < 0x80)
        return 1;
    if (s[0] < 0xC2)
        return 0;
    if (s[0] < 0xE0) {
        len = 2;
        cp = s[0] & 0x1F;
    } else if (s[0] < 0xF0) {
        len = 3;
        cp = s[0] & 0x0F;
    } else if (s[0] < 0xF5) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
        return 0;
    if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))
        return 0;
    return len;
}

int text_valid(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, k;

    while (i < len) {
        k = char_len(u + i, len - i);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
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
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, k;

    while (i < len) {
        k = char_len(u + i, len - i);
        if (max && i + (k ? k : 1) > max) {
            buf_puts(b, "...");
            return;
        }
        if (k)
            buf_append(b, s + i, k);
        else
            buf_puts(b, REPLACEMENT);
        i += k ? k : 1;
    }
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

json_t *text_json(const char *s)
{
    struct buf b;
    json_t *j;

    if (!s)
        return json_null();
    if (text_valid(s, strlen(s)))
        return json_string(s);
    buf_init(&b, 0);
    text_put(&b, s, strlen(s), 0);
    j = buf_err(&b) ? NULL : json_string(b.data ? b.data : "");
    buf_free(&b);
    return j;
}
