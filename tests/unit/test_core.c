/* test_core.c - the core helpers: JSON strings from untrusted text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

/* The compact serialization of o, which must succeed; caller frees. */
static char *dump_ok(const json_t *o)
{
    char *s = jsonx_dump(o);

    if (!s)
        fail_msg("the document does not serialize");
    return s;
}

/*
** Text that is not UTF-8 (Latin-1 from a database, a reply cut inside a
** character) is repaired, so the document it goes into still serializes:
** an HTTP request body, a trace line.
*/
static void set_str_repairs_invalid_utf8(void **state)
{
    json_t *o = json_object(), *msgs = json_array(), *m = json_object();
    char *s;

    (void)state;
    assert_int_equal(jsonx_set_str(m, "role", "user"), 0);
    assert_int_equal(jsonx_set_str(m, "content", "caf\xe9 -- 'M\xfcller'"), 0);
    json_array_append_new(msgs, m);
    json_object_set_new(o, "messages", msgs);
    assert_int_equal(jsonx_set_str(o, "cut", "ab\xc3"), 0);
    assert_int_equal(jsonx_set_str(o, "ok", "Zo\xc3\xab \xe2\x82\xac"), 0);
    assert_int_equal(jsonx_set_str(o, "none", NULL), 0);
    s = dump_ok(o);
    assert_string_equal(s, "{\"messages\":[{\"role\":\"user\",\"content\":"
                           "\"caf\xef\xbf\xbd -- 'M\xef\xbf\xbdller'\"}],"
                           "\"cut\":\"ab\xef\xbf\xbd\","
                           "\"ok\":\"Zo\xc3\xab \xe2\x82\xac\","
                           "\"none\":null}");
    free(s);
    json_decref(o);
}

static void text_keeps_valid_bytes_and_nul_on_request(void **state)
{
    json_t *v;

    (void)state;
    v = jsonx_text("a\0b\xff", 4, 1);
    assert_int_equal(json_string_length(v), 6);
    assert_memory_equal(json_string_value(v), "a\0b\xef\xbf\xbd", 6);
    json_decref(v);
    v = jsonx_text("a\0b", 3, 0);
    assert_string_equal(json_string_value(v), "a\xef\xbf\xbd" "b");
    json_decref(v);
    /* Overlong forms and surrogates are not UTF-8 either. */
    v = jsonx_text("\xc0\xaf\xed\xa0\x80", 5, 0);
    assert_string_equal(json_string_value(v),
                        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                        "\xef\xbf\xbd");
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(set_str_repairs_invalid_utf8),
        cmocka_unit_test(text_keeps_valid_bytes_and_nul_on_request),
    };
    return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
