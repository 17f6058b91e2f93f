/* test_core.c - the core helpers: JSON from untrusted text, configuration,
** the trace file, the clock. */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "askdb.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/trace.h"

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

static void string_repairs_and_maps_null(void **state)
{
    json_t *j;

    (void)state;
    j = jsonx_string("M\xe9xico");
    assert_non_null(j);
    assert_string_equal(json_string_value(j), "M\xef\xbf\xbdxico");
    json_decref(j);
    j = jsonx_string("Zo\xc3\xab");
    assert_string_equal(json_string_value(j), "Zo\xc3\xab");
    json_decref(j);
    j = jsonx_string(NULL);
    assert_true(json_is_null(j));
    json_decref(j);
}

/* The key askdb_config_from_env() picks for a provider and URL, with both
** vendor variables and no ASKDB_API_KEY set. */
static const char *env_key(const char *provider, const char *url)
{
    askdb_config c = askdb_config_default();

    c.provider = provider;
    c.llm_url = url;
    askdb_config_from_env(&c);
    return c.api_key;
}

/*
** A vendor's key variable goes only to that vendor's host: never to a
** gateway, a local server, or a URL that merely mentions the vendor.
*/
static void vendor_keys_go_only_to_their_own_host(void **state)
{
    (void)state;
    unsetenv("ASKDB_API_KEY");
    unsetenv("ASKDB_PROVIDER");
    unsetenv("ASKDB_LLM_URL");
    setenv("OPENAI_API_KEY", "sk-openai", 1);
    setenv("ANTHROPIC_API_KEY", "sk-ant-key", 1);

    assert_null(env_key(NULL, NULL));
    assert_null(env_key(NULL, "http://localhost:11434/v1"));
    assert_null(env_key(NULL, "http://gateway.example/v1"));
    assert_null(env_key("openai", "http://127.0.0.1:8080/v1"));
    assert_null(env_key("anthropic", "http://127.0.0.1:8080/v1"));
    assert_null(env_key(NULL, "http://evil.example/anthropic.com/v1"));
    assert_null(env_key(NULL, "http://api.openai.com.evil.example/v1"));
    assert_null(env_key(NULL, "http://notopenai.com/v1"));
    assert_null(env_key(NULL, "http://api.openai.com@evil.example/v1"));
    assert_null(env_key("local", NULL));

    assert_string_equal(env_key("openai", NULL), "sk-openai");
    assert_string_equal(env_key("OpenAI", NULL), "sk-openai");
    assert_string_equal(env_key("Anthropic", NULL), "sk-ant-key");
    assert_string_equal(env_key(NULL, "https://api.openai.com/v1"),
                        "sk-openai");
    assert_string_equal(env_key(NULL, "https://API.OpenAI.com:443/v1"),
                        "sk-openai");
    assert_string_equal(env_key("openai", "https://api.openai.com./v1"),
                        "sk-openai");
    assert_string_equal(env_key(NULL, "https://api.anthropic.com/v1"),
                        "sk-ant-key");
    assert_string_equal(env_key(NULL, "https://user@api.anthropic.com"),
                        "sk-ant-key");

    /* askdb's own variable goes wherever the URL points. */
    setenv("ASKDB_API_KEY", "askdb-key", 1);
    assert_string_equal(env_key(NULL, "http://gateway.example/v1"),
                        "askdb-key");
    unsetenv("ASKDB_API_KEY");
    unsetenv("OPENAI_API_KEY");
    unsetenv("ANTHROPIC_API_KEY");
}

/*
** Flags override the environment: a .gguf ASKDB_MODEL (which selects the
** local model before any URL) does not beat a URL the caller gave, nor
** does ASKDB_PROVIDER=local.
*/
static void env_gguf_model_does_not_beat_a_given_url(void **state)
{
    askdb_config c = askdb_config_default();

    (void)state;
    unsetenv("ASKDB_PROVIDER");
    unsetenv("ASKDB_LLM_URL");
    setenv("ASKDB_MODEL", "/models/m.GGUF", 1);
    c.llm_url = "http://gateway.example/v1";
    askdb_config_from_env(&c);
    assert_null(c.model);

    c = askdb_config_default();
    askdb_config_from_env(&c);
    assert_string_equal(c.model, "/models/m.GGUF");

    c = askdb_config_default();
    c.llm_url = "http://gateway.example/v1";
    c.provider = "Local";
    askdb_config_from_env(&c);
    assert_string_equal(c.model, "/models/m.GGUF");

    /* A URL from the environment too: neither is a flag, the model's
    ** rule (.gguf = local) stands. */
    c = askdb_config_default();
    setenv("ASKDB_LLM_URL", "http://gateway.example/v1", 1);
    askdb_config_from_env(&c);
    assert_string_equal(c.model, "/models/m.GGUF");
    unsetenv("ASKDB_LLM_URL");

    /* Nor does ASKDB_PROVIDER=local (any case); another provider does
    ** (Anthropic through a gateway's URL, say). */
    setenv("ASKDB_PROVIDER", "LOCAL", 1);
    c = askdb_config_default();
    c.llm_url = "http://gateway.example/v1";
    askdb_config_from_env(&c);
    assert_null(c.provider);
    assert_null(c.model);
    c = askdb_config_default();
    askdb_config_from_env(&c);
    assert_string_equal(c.provider, "LOCAL");
    setenv("ASKDB_PROVIDER", "anthropic", 1);
    c = askdb_config_default();
    c.llm_url = "http://gateway.example/v1";
    askdb_config_from_env(&c);
    assert_string_equal(c.provider, "anthropic");
    unsetenv("ASKDB_PROVIDER");

    /* A model name (not a file) from the environment still serves a
    ** given URL. */
    setenv("ASKDB_MODEL", "qwen2.5-coder:1.5b", 1);
    c = askdb_config_default();
    c.llm_url = "http://gateway.example/v1";
    askdb_config_from_env(&c);
    assert_string_equal(c.model, "qwen2.5-coder:1.5b");
    unsetenv("ASKDB_MODEL");
}

/* Huge pages are asked for by default; ASKDB_HUGEPAGES=0 or 1 decides
** over the caller's choice (askdb ask's 0), empty leaves it, and so does
** any other value: "yes", "off" or "2" say neither, and turned them on. */
static void env_hugepages_sets_the_choice(void **state)
{
    askdb_config c = askdb_config_default();

    (void)state;
    assert_int_equal(c.huge_pages, 1);
    unsetenv("ASKDB_HUGEPAGES");
    askdb_config_from_env(&c);
    assert_int_equal(c.huge_pages, 1);
    setenv("ASKDB_HUGEPAGES", "0", 1);
    askdb_config_from_env(&c);
    assert_int_equal(c.huge_pages, 0);
    c.huge_pages = 0;
    setenv("ASKDB_HUGEPAGES", "1", 1);
    askdb_config_from_env(&c);
    assert_int_equal(c.huge_pages, 1);
    c.huge_pages = 0;
    setenv("ASKDB_HUGEPAGES", "", 1);
    askdb_config_from_env(&c);
    assert_int_equal(c.huge_pages, 0);
    setenv("ASKDB_HUGEPAGES", "off", 1);
    askdb_config_from_env(&c);
    assert_int_equal(c.huge_pages, 0);
    setenv("ASKDB_HUGEPAGES", "2", 1);
    askdb_config_from_env(&c);
    assert_int_equal(c.huge_pages, 0);
    c.huge_pages = 1;
    setenv("ASKDB_HUGEPAGES", "no", 1);
    askdb_config_from_env(&c);
    assert_int_equal(c.huge_pages, 1);
    setenv("ASKDB_HUGEPAGES", " 0", 1);
    askdb_config_from_env(&c);
    assert_int_equal(c.huge_pages, 1);
    unsetenv("ASKDB_HUGEPAGES");
}

/*
** A trace path that is an SQLite database (the one being asked, say), or
** its write-ahead log or journal, is refused before anything is written.
*/
static void trace_refuses_sqlite_files(void **state)
{
    static const struct {
        const char *name, *bytes;
        size_t n;
        const char *why;
    } files[] = {
        {"a.db", "SQLite format 3\0\x10\0\x01\x01", 20, "SQLite database"},
        {"a.db-wal", "\x37\x7f\x06\x82\0\x2d\xe2\x18", 8, "write-ahead log"},
        {"a.db-journal", "\xd9\xd5\x05\xf9\x20\xa1\x63\xd7\0\0", 10,
         "SQLite journal"},
    };
    char p[400], *got;
    const char *err;
    struct trace *t;
    size_t i, n = 0;

    (void)state;
    for (i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", tmpdir, files[i].name);
        assert_int_equal(file_write(p, files[i].bytes, files[i].n), 0);
        t = trace_open(p, NULL, &err);
        assert_null(t);
        assert_non_null(err);
        assert_non_null(strstr(err, files[i].why));
        assert_non_null(strstr(err, "askdb never writes to databases"));
        got = file_read(p, &n);
        assert_non_null(got);
        assert_int_equal(n, files[i].n);
        assert_memory_equal(got, files[i].bytes, n);
        free(got);
    }
    /* Text, or nothing yet: a trace. */
    snprintf(p, sizeof p, "%s/run.jsonl", tmpdir);
    assert_int_equal(file_write(p, "{}\n", 3), 0);
    t = trace_open(p, NULL, &err);
    assert_non_null(t);
    trace_write(t, "x", json_object());
    trace_close(t);
    got = file_read(p, &n);
    assert_non_null(got);
    assert_true(strncmp(got, "{}\n{\"step\":\"x\",\"t_ms\":",
                        strlen("{}\n{\"step\":\"x\",\"t_ms\":")) == 0);
    assert_int_equal(got[n - 1], '\n');
    free(got);
}

struct writer {
    const char *path;
    char tag;
};

static void *write_many(void *arg)
{
    const struct writer *w = arg;
    const char *err;
    struct trace *t = trace_open(w->path, NULL, &err);
    char *big = malloc(20000 + 1);
    json_t *ev;
    int i;

    if (!t || !big) {
        free(big);
        trace_close(t);
        return NULL;
    }
    memset(big, w->tag, 20000);
    big[20000] = '\0';
    for (i = 0; i < 500; i++) {
        ev = json_object();
        json_object_set_new(ev, "i", json_integer(i));
        jsonx_set_str(ev, "prompt", big);
        trace_write(t, "prompt", ev);
    }
    free(big);
    trace_close(t);
    return arg;
}

/*
** Two handles on one trace file (a parallel eval: one agent per worker)
** write long lines at the same time: every line must stay whole.
*/
static void parallel_trace_lines_never_interleave(void **state)
{
    struct writer w[2];
    pthread_t th[2];
    void *ok[2];
    char p[400], *all, *line, *next;
    size_t n;
    int i, lines = 0;

    (void)state;
    snprintf(p, sizeof p, "%s/parallel.jsonl", tmpdir);
    for (i = 0; i < 2; i++) {
        w[i].path = p;
        w[i].tag = i ? 'b' : 'a';
        assert_int_equal(pthread_create(&th[i], NULL, write_many, &w[i]), 0);
    }
    for (i = 0; i < 2; i++) {
        pthread_join(th[i], &ok[i]);
        assert_non_null(ok[i]);
    }
    all = file_read(p, &n);
    assert_non_null(all);
    for (line = all; *line; line = next) {
        size_t na, nb, len;
        next = strchr(line, '\n');
        assert_non_null(next);
        len = (size_t)(next - line);
        *next++ = '\0';
        /* A whole line: one object, 20000 of its writer's letter and none
        ** of the other's (the keys hold neither). */
        for (na = nb = 0, n = 0; n < len; n++) {
            na += line[n] == 'a';
            nb += line[n] == 'b';
        }
        if (line[0] != '{' || line[len - 1] != '}' ||
            !((na == 20000 && nb == 0) || (nb == 20000 && na == 0)))
            fail_msg("line %d is not one whole event (interleaved writes?)",
                     lines + 1);
        lines++;
    }
    assert_int_equal(lines, 1000);
    free(all);
}

/* Significant digits of the number text s: those of its mantissa from
** the first one not 0 to the last one not 0. */
static int digits(const char *s)
{
    int n = 0, zeros = 0, seen = 0;

    for (; *s && *s != 'e' && *s != 'E'; s++) {
        if (*s < '0' || *s > '9')
            continue;
        if (*s == '0') {
            zeros += seen;
            continue;
        }
        n += zeros + 1;
        zeros = 0;
        seen = 1;
    }
    return n;
}

/* The fewest significant digits that read back as d, tried one after
** another (what askdb_real_text must write). */
static int fewest_digits(double d)
{
    char buf[32];
    int prec;

    for (prec = 1; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return prec;
    }
    return 17;
}

/* The shortest text that reads back as the double: no digit lost (15
** lost them), none added (17 gave 0.1 as 0.10000000000000001). */
static void real_text_is_the_shortest_that_reads_back(void **state)
{
    static const double v[] = {0.1, 0.1 + 0.2, 123456789.12345678, 60.0,
                               -1.5e300, 1e-7, 5e-324, 1.7976931348623157e308,
                               9007199254740993.0, 183.92499999999987,
                               2.2250738585072009e-308, 4.9e-322,
                               2.2250738585072014e-308, 1e23};
    char buf[32];
    size_t i;

    (void)state;
    assert_string_equal(askdb_real_text(0.1, buf, sizeof buf), "0.1");
    assert_string_equal(askdb_real_text(0.1 + 0.2, buf, sizeof buf),
                        "0.30000000000000004");
    assert_string_equal(askdb_real_text(123456789.12345678, buf, sizeof buf),
                        "123456789.12345678");
    assert_string_equal(askdb_real_text(60.0, buf, sizeof buf), "60");
    /* Subnormals carry fewer than 15 digits: 15 wrote noise that reads
    ** back ("4.94065645841247e-324"). */
    assert_string_equal(askdb_real_text(5e-324, buf, sizeof buf), "5e-324");
    assert_string_equal(askdb_real_text(-1e-310, buf, sizeof buf),
                        "-1e-310");
    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        askdb_real_text(v[i], buf, sizeof buf);
        assert_true(strtod(buf, NULL) == v[i]);
        if (digits(buf) != fewest_digits(v[i]))
            fail_msg("%s has %d digits, %d read back", buf, digits(buf),
                     fewest_digits(v[i]));
    }
}

/* A real the JSON text holds and no double can (1e400) stays as written:
** "inf" is not JSON. What underflows is the double it reads as (0). */
static void json_shorten_reals_keeps_what_a_double_cannot_hold(void **state)
{
    char t[] = "[1e400,-1.5E+999,0.10000000000000001,1e-400,\"1e400\"]";

    (void)state;
    assert_string_equal(askdb_json_shorten_reals(t),
                        "[1e400,-1.5E+999,0.1,0.0,\"1e400\"]");
}

/* A deadline is ms from now on the clock pthread_cond_timedwait() reads,
** a second or more included, with its nanoseconds below a second. */
static void deadline_in_is_ms_from_now(void **state)
{
    static const long ms[] = {0, 1, 250, 999, 1000, 1500, 62001};
    struct timespec before, after, d;
    long long b, a, got, want;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        clock_gettime(CLOCK_REALTIME, &before);
        clockx_deadline_in(&d, ms[i]);
        clock_gettime(CLOCK_REALTIME, &after);
        assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
        b = before.tv_sec * 1000000000LL + before.tv_nsec;
        a = after.tv_sec * 1000000000LL + after.tv_nsec;
        got = d.tv_sec * 1000000000LL + d.tv_nsec;
        want = ms[i] * 1000000LL;
        if (got < b + want || got > a + want)
            fail_msg("%ld ms: the deadline is %lld ns from now", ms[i],
                     got - b);
    }
}

/* The monotonic clock goes on in milliseconds, never back. */
static void now_ms_is_monotonic_in_milliseconds(void **state)
{
    struct timespec pause = {0, 20 * 1000000L};
    double t0, t1;

    (void)state;
    t0 = clockx_now_ms();
    nanosleep(&pause, NULL);
    t1 = clockx_now_ms();
    if (t1 - t0 < 19.0 || t1 - t0 > 5000.0)
        fail_msg("20 ms of sleep measured as %.3f ms", t1 - t0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(set_str_repairs_invalid_utf8),
        cmocka_unit_test(real_text_is_the_shortest_that_reads_back),
        cmocka_unit_test(json_shorten_reals_keeps_what_a_double_cannot_hold),
        cmocka_unit_test(text_keeps_valid_bytes_and_nul_on_request),
        cmocka_unit_test(string_repairs_and_maps_null),
        cmocka_unit_test(vendor_keys_go_only_to_their_own_host),
        cmocka_unit_test(env_gguf_model_does_not_beat_a_given_url),
        cmocka_unit_test(env_hugepages_sets_the_choice),
        cmocka_unit_test(trace_refuses_sqlite_files),
        cmocka_unit_test(parallel_trace_lines_never_interleave),
        cmocka_unit_test(deadline_in_is_ms_from_now),
        cmocka_unit_test(now_ms_is_monotonic_in_milliseconds),
    };
    test_filter_from_env();
    return cmocka_run_group_tests_name("core", tests, tmpdir_setup,
                                       tmpdir_teardown);
}
