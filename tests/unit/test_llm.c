/* test_llm.c - the model providers against the scripted fake_llm server. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <jansson.h>

#include "fakellm.h"
#include "llm/anthropic.h"
#include "llm/http.h"
#include "llm/llm.h"
#include "llm/openai.h"

/*
** Each test that needs a server starts its own fake_llm (FAKE_LLM=path)
** with its own script, or a one-shot raw HTTP responder thread for
** replies fake_llm cannot produce (malformed streams, cut connections).
** Teardown stops and reaps whatever was started, even after a failed
** assertion.
*/

/* A one-shot raw HTTP responder: accepts one connection, reads the
** request (unless write_first), writes `resp` in `chunk`-byte pieces,
** closes. */
struct raw {
    int fd;
    int port;
    int started;
    int write_first;         /* answer without reading: for a TLS client */
    pthread_t th;
    const char *resp;
    size_t resp_len;
    size_t chunk;
    const char *then;        /* NULL, or the answer to a second connection */
    int accepted;            /* connections answered */
    char req[65536];
    size_t req_len;
    char base[64];
};

/* Streamed pieces, concatenated. */
struct tokens {
    char text[4096];
    size_t len;
    int calls;
};

struct state {
    struct fake f;
    struct raw raw;
    askdb_config cfg;
    llm *m;
    struct llm_reply r;
    struct tokens tok;
    char url[160];       /* the endpoint URL messages should name */
};

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Assert that v equals the JSON text `want`. */
static void assert_json(const json_t *v, const char *want)
{
    json_t *w = json_loads(want, JSON_DECODE_ANY, NULL);
    char *got = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);

    assert_non_null(w);
    if (!json_equal(v, w))
        fail_msg("JSON differs:\n got  %s\n want %s", got ? got : "(null)",
                 want);
    free(got);
    json_decref(w);
}

static void *raw_main(void *arg)
{
    struct raw *r = arg;
    struct pollfd p;
    size_t off, want = 0;
    ssize_t n;
    const char *hdr_end, *cl;
    int c;

again:
    p.fd = r->fd;
    p.events = POLLIN;
    p.revents = 0;
    if (poll(&p, 1, 10000) <= 0)
        return NULL;
    c = accept(r->fd, NULL, NULL);
    if (c < 0)
        return NULL;
    r->accepted++;
    r->req_len = 0;
    while (!r->write_first) {
        n = read(c, r->req + r->req_len, sizeof r->req - 1 - r->req_len);
        if (n <= 0)
            break;
        r->req_len += (size_t)n;
        r->req[r->req_len] = '\0';
        hdr_end = strstr(r->req, "\r\n\r\n");
        if (!hdr_end)
            continue;
        cl = strstr(r->req, "Content-Length:");
        want = (size_t)(hdr_end + 4 - r->req) +
               (cl ? (size_t)strtoul(cl + 15, NULL, 10) : 0);
        if (r->req_len >= want)
            break;
    }
    for (off = 0; off < r->resp_len; off += r->chunk) {
        size_t k = r->resp_len - off < r->chunk ? r->resp_len - off : r->chunk;

        if (write(c, r->resp + off, k) != (ssize_t)k)
            break;
        sleep_ms(1);
    }
    close(c);
    if (r->accepted == 1 && r->then) {
        r->resp = r->then;
        r->resp_len = strlen(r->then);
        goto again;
    }
    return NULL;
}

/* Start the raw responder on a free port with the canned response. */
static void raw_start(struct raw *r, const char *resp, size_t len,
                      size_t chunk)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof a;

    r->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(r->fd >= 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(r->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(r->fd, 4), 0);
    assert_int_equal(getsockname(r->fd, (struct sockaddr *)&a, &alen), 0);
    r->port = ntohs(a.sin_port);
    r->resp = resp;
    r->resp_len = len;
    r->chunk = chunk;
    r->accepted = 0;
    snprintf(r->base, sizeof r->base, "http://127.0.0.1:%d/v1", r->port);
    assert_int_equal(pthread_create(&r->th, NULL, raw_main, r), 0);
    r->started = 1;
}

static void raw_stop(struct raw *r)
{
    if (r->started) {
        shutdown(r->fd, SHUT_RDWR);
        pthread_join(r->th, NULL);
        r->started = 0;
    }
    if (r->fd > 0)
        close(r->fd);
    r->fd = -1;
}

/* A TCP port on 127.0.0.1 that nothing listens on (bound, then closed). */
static int free_port(void)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;

    assert_true(fd >= 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static void on_token(void *ud, const char *piece, size_t len)
{
    struct tokens *t = ud;

    if (len < sizeof t->text - t->len) {
        memcpy(t->text + t->len, piece, len);
        t->len += len;
        t->text[t->len] = '\0';
    }
    t->calls++;
}

/* Create the provider for s->cfg; fails the test with the message. */
static void open_model(struct state *s)
{
    char err[512];
    askdb_status rc = llm_new(&s->cfg, &s->m, err, sizeof err);

    if (rc != ASKDB_OK)
        fail_msg("llm_new: %s", err);
}

static const struct llm_msg two_msgs[] = {
    {"system", "You write SQLite."},
    {"user", "How many rows are in t?"},
};

/* A request for the two messages above, temperature 0.25, 64 tokens. */
static struct llm_request basic_request(struct state *s)
{
    struct llm_request req;

    memset(&req, 0, sizeof req);
    req.msgs = two_msgs;
    req.nmsgs = 2;
    req.temperature = 0.25;
    req.max_tokens = 64;
    req.seed = -1;
    req.on_token = on_token;
    req.token_ud = &s->tok;
    return req;
}

/* Config for an OpenAI-compatible fake at base. */
static void openai_cfg(struct state *s, const char *base, const char *key)
{
    s->cfg.provider = "openai";
    s->cfg.llm_url = base;
    s->cfg.model = "gpt-test";
    s->cfg.api_key = key;
    snprintf(s->url, sizeof s->url, "%s/chat/completions", base);
}

/* The tests' own environment: no proxy, and none for loopback hosts
** (main() sets it; the proxy tests change it and teardown() restores
** it). */
static void clear_proxies(void)
{
    static const char *const vars[] = {"http_proxy", "https_proxy",
                                       "HTTPS_PROXY", "all_proxy",
                                       "ALL_PROXY"};
    size_t i;

    for (i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    setenv("no_proxy", "127.0.0.1,localhost", 1);
}

static int setup(void **ts)
{
    struct state *s = calloc(1, sizeof *s);

    if (!s)
        return -1;
    s->cfg = askdb_config_default();
    s->cfg.llm_retries = 0;
    s->cfg.llm_timeout_ms = 10000;
    s->raw.fd = -1;
    *ts = s;
    return 0;
}

static int teardown(void **ts)
{
    struct state *s = *ts;

    clear_proxies();   /* set by the proxy tests */
    llm_reply_free(&s->r);
    llm_free(s->m);
    fake_stop(&s->f);
    raw_stop(&s->raw);
    free(s);
    return 0;
}

/* ------------------------------------------------------------------ */
/* OpenAI-compatible                                                   */
/* ------------------------------------------------------------------ */

static void openai_returns_content_and_usage(void **ts)
{
    struct state *s = *ts;
    static const char *const stop[] = {"</sql>", NULL};
    struct llm_request req = basic_request(s);
    char base_slash[80];
    json_t *log, *e;
    llm *nokey = NULL;
    char err[512];
    askdb_config cfg2;

    fake_start(&s->f, "[{\"content\":\"SELECT count(*) FROM t;\","
                      "\"usage\":{\"prompt_tokens\":7,"
                      "\"completion_tokens\":3}},"
                      "{\"content\":\"SELECT 2;\"}]");
    openai_cfg(s, s->f.base, "sk-test-123456");
    open_model(s);
    assert_string_equal(llm_name(s->m), "openai");
    req.seed = 7;
    req.stop = stop;
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT count(*) FROM t;");
    assert_int_equal(s->r.prompt_tokens, 7);
    assert_int_equal(s->r.completion_tokens, 3);
    assert_int_equal(s->r.http_status, 200);
    assert_int_equal(s->r.retries, 0);
    assert_true(s->r.ms > 0);
    assert_int_equal(s->tok.calls, 0);   /* not streaming */

    /* Same server, no key, base URL with a trailing slash. */
    cfg2 = s->cfg;
    snprintf(base_slash, sizeof base_slash, "%s/", s->f.base);
    cfg2.llm_url = base_slash;
    cfg2.api_key = NULL;
    assert_int_equal(llm_new(&cfg2, &nokey, err, sizeof err), ASKDB_OK);
    req = basic_request(s);
    llm_reply_free(&s->r);
    assert_int_equal(llm_complete(nokey, &req, &s->r), ASKDB_OK);
    llm_free(nokey);
    assert_string_equal(s->r.text, "SELECT 2;");

    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 2);
    e = json_array_get(log, 0);
    assert_string_equal(json_string_value(json_object_get(e, "path")),
                        "/v1/chat/completions");
    assert_json(json_object_get(e, "headers"),
                "{\"authorization\":\"Bearer sk-test-123456\","
                "\"content-type\":\"application/json\"}");
    assert_json(json_object_get(e, "body"),
                "{\"model\":\"gpt-test\",\"messages\":["
                "{\"role\":\"system\",\"content\":\"You write SQLite.\"},"
                "{\"role\":\"user\",\"content\":\"How many rows are in t?\"}],"
                "\"temperature\":0.25,\"max_tokens\":64,\"seed\":7,"
                "\"stop\":[\"</sql>\"],\"stream\":false}");
    e = json_array_get(log, 1);
    assert_string_equal(json_string_value(json_object_get(e, "path")),
                        "/v1/chat/completions");
    assert_json(json_object_get(e, "headers"),
                "{\"content-type\":\"application/json\"}");
    assert_null(json_object_get(json_object_get(e, "body"), "seed"));
    assert_null(json_object_get(json_object_get(e, "body"), "stop"));
    json_decref(log);
}

/*
** OpenAI's reasoning models (o1, o3, gpt-5...) answer 400 to max_tokens
** ("Use 'max_completion_tokens' instead") and to a temperature but their
** default, naming the parameter: every question failed with that message
** and no option could change it. Now the request is sent again without
** it, and every later one leaves it out (a stop sequence too, which some
** refuse); a 400 that names another
** parameter, or one already left out, is the answer.
*/
static void a_parameter_the_model_refuses_is_left_out(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    static const char *const stop[] = {"</sql>", NULL};
    json_t *log, *b;
    int i;

    fake_start(&s->f,
        "[{\"status\":400,\"body\":{\"error\":{\"message\":\"Unsupported "
        "parameter: 'max_tokens' is not supported with this model. Use "
        "'max_completion_tokens' instead.\",\"type\":"
        "\"invalid_request_error\",\"param\":\"max_tokens\",\"code\":"
        "\"unsupported_parameter\"}}},"
        "{\"status\":400,\"body\":{\"error\":{\"message\":\"Unsupported "
        "value: 'temperature' does not support 0.25 with this model. Only "
        "the default (1) value is supported.\",\"type\":"
        "\"invalid_request_error\",\"param\":\"temperature\",\"code\":"
        "\"unsupported_value\"}}},"
        "{\"content\":\"SELECT 1;\"},"
        "{\"content\":\"SELECT 2;\"},"
        "{\"status\":400,\"body\":{\"error\":{\"message\":\"Unsupported "
        "parameter: 'stop' is not supported with this model.\",\"param\":"
        "\"stop\"}}},"
        "{\"content\":\"SELECT 3;\"},"
        "{\"status\":400,\"body\":{\"error\":{\"message\":\"Unsupported "
        "parameter: 'max_tokens'\",\"param\":\"max_tokens\"}}},"
        "{\"status\":400,\"body\":{\"error\":{\"message\":\"bad seed\","
        "\"param\":\"seed\"}}}]");
    openai_cfg(s, s->f.base, NULL);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 1;");
    llm_reply_free(&s->r);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 2;");
    llm_reply_free(&s->r);
    req.stop = stop;
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 3;");
    llm_reply_free(&s->r);
    /* Refused again though left out already: the 400 is the answer. */
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_non_null(strstr(llm_errmsg(s->m), "Unsupported parameter"));
    llm_reply_free(&s->r);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_non_null(strstr(llm_errmsg(s->m), "bad seed"));
    llm_reply_free(&s->r);

    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 8);
    b = json_object_get(json_array_get(log, 0), "body");
    assert_json(json_object_get(b, "max_tokens"), "64");
    assert_json(json_object_get(b, "temperature"), "0.25");
    b = json_object_get(json_array_get(log, 1), "body");
    assert_null(json_object_get(b, "max_tokens"));
    assert_json(json_object_get(b, "max_completion_tokens"), "64");
    assert_json(json_object_get(b, "temperature"), "0.25");
    for (i = 2; i < 8; i++) {
        b = json_object_get(json_array_get(log, (size_t)i), "body");
        assert_null(json_object_get(b, "max_tokens"));
        assert_json(json_object_get(b, "max_completion_tokens"), "64");
        assert_null(json_object_get(b, "temperature"));
        if (i == 4)
            assert_json(json_object_get(b, "stop"), "[\"</sql>\"]");
        else
            assert_null(json_object_get(b, "stop"));
    }
    json_decref(log);
}

static void openai_streams_pieces_in_order(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    json_t *log, *body;

    fake_start(&s->f, "[{\"content\":\"SELECT name FROM t;\","
                      "\"usage\":{\"prompt_tokens\":11,"
                      "\"completion_tokens\":5}}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.stream = 1;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT name FROM t;");
    assert_string_equal(s->tok.text, "SELECT name FROM t;");
    assert_int_equal(s->tok.calls, 5);   /* 19 bytes in pieces of 4 */
    assert_int_equal(s->r.prompt_tokens, 11);
    assert_int_equal(s->r.completion_tokens, 5);
    log = fake_log(&s->f);
    body = json_object_get(json_array_get(log, 0), "body");
    assert_json(json_object_get(body, "stream"), "true");
    assert_json(json_object_get(body, "stream_options"),
                "{\"include_usage\":true}");
    json_decref(log);
}

static void openai_null_content_or_non_json_is_an_error(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];

    fake_start(&s->f,
               "[{\"status\":200,\"body\":{\"choices\":[{\"message\":"
               "{\"role\":\"assistant\",\"content\":null}}]}},"
               "{\"status\":200,\"body\":\"<html>hello</html>\"}]");
    openai_cfg(s, s->f.base, NULL);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_null(s->r.text);
    snprintf(want, sizeof want,
             "model endpoint %s: reply had no content "
             "(choices[0].message.content is missing or null)", s->url);
    assert_string_equal(llm_errmsg(s->m), want);

    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    snprintf(want, sizeof want,
             "model endpoint %s: reply is not a JSON object: "
             "<html>hello</html> (is --llm-url the model API's base URL?)",
             s->url);
    assert_string_equal(llm_errmsg(s->m), want);
}

/* A reasoning model that spends max_tokens thinking: vLLM's content is
** null (its thoughts in reasoning_content) with finish_reason "length",
** and a stream sends no text delta before it. That is a reply cut at
** max_tokens (the agent says to raise --max-tokens), not one with no
** content. */
static void reply_cut_before_any_text_comes_back_cut_and_empty(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);

    fake_start(&s->f,
               "[{\"status\":200,\"body\":{\"choices\":[{\"message\":"
               "{\"role\":\"assistant\",\"content\":null,"
               "\"reasoning_content\":\"Let me think\"},"
               "\"finish_reason\":\"length\"}]}},"
               "{\"content\":\"\",\"finish_reason\":\"length\"}]");
    openai_cfg(s, s->f.base, NULL);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "");
    assert_int_equal(s->r.cut, LLM_CUT_MAX_TOKENS);

    llm_reply_free(&s->r);
    llm_free(s->m);
    s->cfg.stream = 1;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "");
    assert_int_equal(s->r.cut, LLM_CUT_MAX_TOKENS);
}

/* ------------------------------------------------------------------ */
/* Retries                                                             */
/* ------------------------------------------------------------------ */

static void retries_429_then_succeeds_honouring_retry_after(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    double t0, ms;
    json_t *log;

    /* ASKDB_RETRY_BASE_MS=1 stays set: only Retry-After can explain 1 s. */
    fake_start(&s->f, "[{\"status\":429,\"headers\":{\"Retry-After\":\"1\"}},"
                      "{\"content\":\"SELECT 1;\"}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_retries = 3;
    open_model(s);
    t0 = now_ms();
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    ms = now_ms() - t0;
    assert_string_equal(s->r.text, "SELECT 1;");
    assert_int_equal(s->r.retries, 1);
    assert_int_equal(s->r.http_status, 200);
    if (ms < 950 || ms > 5000)
        fail_msg("took %.0f ms, want about 1000 (Retry-After: 1)", ms);
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 2);
    json_decref(log);
}

/* OpenAI and Azure send retry-after-ms beside Retry-After's whole
** seconds; the SDKs wait the milliseconds. askdb waited the seconds (5
** here), whichever came first. */
static void retry_after_ms_wins_over_retry_after(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    double t0, ms;

    fake_start(&s->f, "[{\"status\":429,\"headers\":{\"Retry-After\":\"5\","
                      "\"retry-after-ms\":\"1200.5\"}},"
                      "{\"content\":\"SELECT 1;\"}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_retries = 3;
    open_model(s);
    t0 = now_ms();
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    ms = now_ms() - t0;
    assert_string_equal(s->r.text, "SELECT 1;");
    assert_int_equal(s->r.retries, 1);
    if (ms < 1150 || ms > 4000)
        fail_msg("took %.0f ms, want about 1200 (retry-after-ms: 1200.5)",
                 ms);
}

static void retry_after_longer_than_the_time_left_is_said_as_such(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[768];
    json_t *log;

    /* After a wait of 1 s, 2 s of the 3 s are left: 3 s is too long,
    ** though 3 retries are left. */
    fake_start(&s->f, "[{\"status\":429,\"headers\":{\"Retry-After\":\"1\"}},"
                      "{\"status\":429,\"headers\":{\"Retry-After\":\"3\"},"
                      "\"body\":{\"error\":{\"message\":\"slow down\"}}},"
                      "{\"content\":\"SELECT 1;\"}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_retries = 4;
    s->cfg.llm_timeout_ms = 3000;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_int_equal(s->r.retries, 1);
    snprintf(want, sizeof want,
             "model endpoint %s rate limited the request (429 Too Many "
             "Requests) after 1 retry: slow down (its Retry-After asked for "
             "a wait of 3 s, more than the 2000 ms left of --llm-timeout "
             "3000 after waiting 1000 ms: try again later, or raise "
             "--llm-timeout to 4000 or more)", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 2);
    json_decref(log);
}

/* 408 too: the request did not come whole, no model ran. */
static void retries_408_and_5xx_then_succeeds(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    json_t *log;

    fake_start(&s->f, "[{\"status\":408},{\"status\":500},"
                      "{\"status\":502},{\"content\":\"SELECT 3;\"}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_retries = 4;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 3;");
    assert_int_equal(s->r.retries, 3);
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 4);
    json_decref(log);
}

static void does_not_retry_401_and_message_names_url_and_key_hint(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];
    json_t *log;

    /* The server echoes the key: the message must not. */
    fake_start(&s->f, "[{\"status\":401,\"body\":{\"error\":{\"message\":"
                      "\"Incorrect API key provided: sk-bad-key-99.\"}}},"
                      "{\"content\":\"never\"}]");
    openai_cfg(s, s->f.base, "sk-bad-key-99");
    s->cfg.llm_retries = 4;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_null(s->r.text);
    assert_int_equal(s->r.http_status, 401);
    assert_int_equal(s->r.retries, 0);
    snprintf(want, sizeof want,
             "model endpoint %s answered 401 Unauthorized: Incorrect API key "
             "provided: [redacted]. (check the API key: --api-key or "
             "ASKDB_API_KEY)", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
    assert_null(strstr(llm_errmsg(s->m), "sk-bad-key-99"));
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 1);
    json_decref(log);
}

/* The vendor's key variable is named only for the vendor's hosts, the only
** ones it is read for (askdb_config_from_env); elsewhere the advice would
** send the user to a key askdb never sends. */
static void key_hint_names_the_vendor_variable_only_for_its_host(void **ts)
{
    static const struct {
        const char *provider, *url, *hint;
    } cases[] = {
        {"openai", "https://api.openai.com/v1",
         "(check --api-key, ASKDB_API_KEY or OPENAI_API_KEY)"},
        {"openai", "http://127.0.0.1:1/v1", "(check --api-key or ASKDB_API_KEY)"},
        {"openai", "https://openai.com.example.net/v1",
         "(check --api-key or ASKDB_API_KEY)"},
        {"anthropic", "https://api.anthropic.com",
         "(check --api-key, ASKDB_API_KEY or ANTHROPIC_API_KEY)"},
        {"anthropic", "http://localhost:9/",
         "(check --api-key or ASKDB_API_KEY)"},
    };
    struct state *s = *ts;
    char err[512];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s->cfg.provider = cases[i].provider;
        s->cfg.llm_url = cases[i].url;
        s->cfg.model = "m";
        s->cfg.api_key = "sk-one\ntwo";
        err[0] = '\0';
        assert_int_equal(llm_new(&s->cfg, &s->m, err, sizeof err),
                         ASKDB_ERR_USAGE);
        assert_non_null(strstr(err, "line break"));
        if (!strstr(err, cases[i].hint))
            fail_msg("%s: %s", cases[i].url, err);
        llm_free(s->m);
        s->m = NULL;
    }
}

/* No 8-byte piece of key appears in msg. */
static void assert_no_key_piece(const char *msg, const char *key)
{
    char piece[9];
    size_t i, n = strlen(key);

    for (i = 0; i + 8 <= n; i++) {
        memcpy(piece, key + i, 8);
        piece[8] = '\0';
        if (strstr(msg, piece))
            fail_msg("part of the key (%s) in: %s", piece, msg);
    }
}

/*
** The key is redacted in the whole text before anything is cut: a server
** that echoes it where the 200-byte snippet ends, or where the message
** is cut to fit errmsg, must not leave half of it behind.
*/
static void key_is_redacted_before_any_cut(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    static const char key[] = "sk-live-0123456789abcdefghijklmnopqrstuv";
    char script[1024], base[600], pad[200];
    size_t n;

    /* The snippet cut (200 bytes) falls inside the key. */
    memset(pad, 'a', 180);
    pad[180] = '\0';
    snprintf(script, sizeof script, "[{\"status\":401,\"body\":{\"error\":"
             "{\"message\":\"%s %s is not valid\"}}}]", pad, key);
    fake_start(&s->f, script);
    openai_cfg(s, s->f.base, key);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_non_null(strstr(llm_errmsg(s->m), "a [redacted] is not v... ("));
    assert_no_key_piece(llm_errmsg(s->m), key);
    llm_free(s->m);
    s->m = NULL;

    /* The cut to errmsg's size falls inside the key: a long URL puts the
    ** server's message near the end. */
    snprintf(script, sizeof script, "[{\"status\":401,\"body\":{\"error\":"
             "{\"message\":\"%s is not valid\"}}}]", key);
    fake_stop(&s->f);
    fake_start(&s->f, script);
    n = strlen(s->f.base) + 1;
    snprintf(base, sizeof base, "%s/", s->f.base);
    memset(base + n, 'p', 430 - n);
    base[430] = '\0';
    openai_cfg(s, base, key);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_int_equal(s->r.http_status, 401);
    assert_no_key_piece(llm_errmsg(s->m), key);
}

/* A URL's "user:password@" is never shown: not in the URL of a message,
** not where the server echoes it. */
static void url_credentials_are_never_shown(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char base[160], want[512];

    fake_start(&s->f, "[{\"status\":401,\"body\":{\"error\":{\"message\":"
                      "\"user alice:s3cret-pass denied\"}}}]");
    snprintf(base, sizeof base, "http://alice:s3cret-pass@127.0.0.1:%d/v1",
             s->f.port);
    openai_cfg(s, base, NULL);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    snprintf(want, sizeof want, "model endpoint %s/chat/completions answered "
             "401 Unauthorized: user [redacted] denied (no API key was sent: "
             "set one with --api-key or ASKDB_API_KEY)",
             s->f.base);
    assert_string_equal(llm_errmsg(s->m), want);
    llm_free(s->m);
    s->m = NULL;

    /* Nothing listens there. */
    openai_cfg(s, "http://alice:s3cret-pass@127.0.0.1:1/v1", NULL);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    assert_non_null(strstr(llm_errmsg(s->m), "cannot reach model at "
                           "http://127.0.0.1:1/v1/chat/completions"));
    assert_null(strstr(llm_errmsg(s->m), "s3cret"));
    llm_free(s->m);
    s->m = NULL;

    /* Refused before any request. */
    s->cfg.model = NULL;
    assert_int_equal(llm_new(&s->cfg, &s->m, want, sizeof want),
                     ASKDB_ERR_USAGE);
    assert_null(strstr(want, "s3cret"));
    assert_non_null(strstr(want, "endpoint http://127.0.0.1:1/v1/chat/"));
}

/* A proxy's HTML error page is told by its title: its first 200 bytes
** are markup (a doctype, styles) that say nothing. */
static void html_error_page_is_told_by_its_title(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];

    fake_start(&s->f,
               "[{\"status\":502,\"body\":\"<!DOCTYPE html>\\n<html><head>"
               "<style>body{font-family:sans-serif;margin:0 auto;width:"
               "40em}</style>\\n<TITLE>\\n  example.com | 502: Bad "
               "gateway</Title></head><body><h1>Bad gateway</h1></body>"
               "</html>\"},"
               "{\"status\":502,\"body\":\"<html><title>Tom &amp; Jerry's "
               "&lt;proxy&gt; &#8212; &#x41;&#27;b &bogus; &#0; &#xD800; "
               "&amp</title></html>\"}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_retries = 0;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    snprintf(want, sizeof want,
             "model endpoint %s answered 502 Bad Gateway: an HTML page: "
             "example.com | 502: Bad gateway (the server is failing or "
             "overloaded; try again later)", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
    /* Its character references read, as a browser shows the title (a
    ** control character so made still becomes a space). */
    llm_reply_free(&s->r);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    snprintf(want, sizeof want,
             "model endpoint %s answered 502 Bad Gateway: an HTML page: "
             "Tom & Jerry's <proxy> \xe2\x80\x94 A b &bogus; &#0; &#xD800; "
             "&amp (the server is failing or overloaded; try again later)",
             s->url);
    assert_string_equal(llm_errmsg(s->m), want);
}

static void not_found_names_path_and_model(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];

    fake_start(&s->f, "[{\"status\":404,\"body\":{\"error\":{\"message\":"
                      "\"model 'gpt-test' not found\"}}}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_retries = 2;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    snprintf(want, sizeof want,
             "model endpoint %s answered 404 Not Found: model 'gpt-test' not "
             "found (check the URL path and the model name 'gpt-test' "
             "(--model or ASKDB_MODEL); the base URL of an OpenAI-compatible "
             "server usually ends in /v1)", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
    assert_int_equal(s->r.retries, 0);
}

static void redirect_names_its_location_and_is_not_followed(void **ts)
{
    static const int codes[] = {301, 302, 307, 308};
    static const char *const reasons[] = {"Moved Permanently", "Found",
                                          "Temporary Redirect",
                                          "Permanent Redirect"};
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char script[256], want[768];
    json_t *log;
    size_t i;

    for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        /* To this very server: a redirect followed would show as a
        ** second request, with the key. */
        snprintf(script, sizeof script,
                 "[{\"status\":%d,\"headers\":{\"Location\":"
                 "\"/v2/chat/completions\"},\"body\":\"<p>moved</p>\"},"
                 "{\"content\":\"never\",\"repeat\":true}]", codes[i]);
        fake_start(&s->f, script);
        openai_cfg(s, s->f.base, "sk-redirect-key");
        s->cfg.llm_retries = 2;
        open_model(s);
        assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
        assert_int_equal(s->r.http_status, codes[i]);
        assert_int_equal(s->r.retries, 0);
        snprintf(want, sizeof want,
                 "model endpoint %s answered %d %s: the endpoint redirected "
                 "to http://127.0.0.1:%d/v2/chat/completions; give that URL "
                 "as --llm-url (askdb does not follow redirects, which could "
                 "take the API key to another host)", s->url, codes[i],
                 reasons[i], s->f.port);
        assert_string_equal(llm_errmsg(s->m), want);
        log = fake_log(&s->f);
        assert_int_equal(json_array_size(log), 1);
        json_decref(log);
        llm_reply_free(&s->r);
        llm_free(s->m);
        s->m = NULL;
        fake_stop(&s->f);
    }
}

static void gives_up_after_n_retries_on_503(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];
    json_t *log;

    fake_start(&s->f, "[{\"status\":503,\"repeat\":true}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_retries = 2;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_int_equal(s->r.retries, 2);
    assert_int_equal(s->r.http_status, 503);
    snprintf(want, sizeof want,
             "model endpoint %s answered 503 Service Unavailable after 2 "
             "retries: fake_llm status 503 (the server is failing or "
             "overloaded; try again later)", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 3);
    json_decref(log);
}

static void gives_up_after_n_retries_on_429_saying_rate_limited(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];
    json_t *log;

    fake_start(&s->f, "[{\"status\":429,\"repeat\":true,\"body\":"
                      "{\"error\":{\"message\":\"slow down\"}}}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_retries = 1;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    snprintf(want, sizeof want,
             "model endpoint %s rate limited the request (429 Too Many "
             "Requests) after 1 retry: slow down (wait a little and try "
             "again, raise --retries, or check the account's rate limits)",
             s->url);
    assert_string_equal(llm_errmsg(s->m), want);
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 2);
    json_decref(log);
}

static void connection_refused_is_unreachable(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char base[64], want[512];
    double t0;

    snprintf(base, sizeof base, "http://127.0.0.1:%d/v1", free_port());
    openai_cfg(s, base, NULL);
    s->cfg.llm_retries = 3;
    open_model(s);
    t0 = now_ms();
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    assert_true(now_ms() - t0 < 2000);
    assert_int_equal(s->r.retries, 0);
    assert_int_equal(s->r.http_status, 0);
    snprintf(want, sizeof want,
             "cannot reach model at %s: connection refused (is the server "
             "running? set --llm-url or ASKDB_LLM_URL)", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
}

/* A proxy that answers every request (or CONNECT) with `status`. */
static void proxy_refusing(struct state *s, const char *status)
{
    static char resp[256];

    snprintf(resp, sizeof resp, "HTTP/1.1 %s\r\nProxy-Authenticate: Basic "
             "realm=\"p\"\r\nContent-Length: 0\r\nConnection: close\r\n"
             "\r\n", status);
    raw_start(&s->raw, resp, strlen(resp), sizeof resp);
}

static void proxy_refusal_is_the_proxys_and_not_retried(void **ts)
{
    static const struct {
        const char *var, *url, *status, *user, *want;
    } cases[] = {
        {"https_proxy", "https://api.example.invalid/v1",
         "407 Proxy Authentication Required", "",
         "407 Proxy Authentication Required (give the proxy's user and "
         "password in its URL: http://user:password@host:port)"},
        {"https_proxy", "https://api.example.invalid/v1", "403 Forbidden",
         "", "403 Forbidden (the proxy does not let this host through: ask "
         "its administrator, or set no_proxy to go around it)"},
        {"http_proxy", "http://model.example.invalid/v1",
         "407 Proxy Authentication Required", "me:s3cret-pw@",
         "407 Proxy Authentication Required (check the user and password "
         "in the proxy's URL)"},
    };
    struct state *s = *ts;
    struct llm_request req;
    char proxy[128], want[768];
    double t0;
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        req = basic_request(s);
        proxy_refusing(s, cases[i].status);
        snprintf(proxy, sizeof proxy, "http://%s127.0.0.1:%d",
                 cases[i].user, s->raw.port);
        assert_int_equal(setenv(cases[i].var, proxy, 1), 0);
        openai_cfg(s, cases[i].url, "sk-proxy-test-key");
        s->cfg.llm_retries = 3;
        s->cfg.llm_timeout_ms = 3000;
        open_model(s);
        t0 = now_ms();
        assert_int_equal(llm_complete(s->m, &req, &s->r),
                         ASKDB_ERR_LLM_UNREACHABLE);
        /* The one-shot proxy answers once: a retry would wait out the
        ** time limit for an answer that never comes. */
        assert_true(now_ms() - t0 < 2000);
        assert_int_equal(s->r.retries, 0);
        snprintf(want, sizeof want, "the proxy http://127.0.0.1:%d (%s) "
                 "refused to connect to the model at %s: it answered %s",
                 s->raw.port, cases[i].var, s->url, cases[i].want);
        assert_string_equal(llm_errmsg(s->m), want);
        unsetenv(cases[i].var);
        llm_reply_free(&s->r);
        llm_free(s->m);
        s->m = NULL;
        raw_stop(&s->raw);
    }
}

/*
** The failures on the way through a proxy that libcurl tells apart from
** the model's: a 502, 503 or 504 answer to CONNECT (the proxy could not
** reach the model: not "does not let this host through"), a proxy that
** closes the connection before answering CONNECT, and TLS with an
** https:// proxy that fails (here a proxy that speaks plain HTTP); each
** names the proxy, not the model. A plain http:// request is relayed:
** the proxy's own 502 and its silent close cannot be told from the
** model's, and the message names the proxy beside the model.
*/
static void proxy_failures_on_the_way_name_the_proxy(void **ts)
{
    static const char bad_gateway[] = "HTTP/1.1 502 Bad Gateway\r\n"
        "Content-Length: 0\r\nConnection: close\r\n\r\n";
    static const char unavailable[] = "HTTP/1.1 503 Service Unavailable"
        "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    static const char not_tls[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
    static const char https_url[] = "https://api.example.invalid/v1";
    static const char http_url[] = "http://model.example.invalid/v1";
    static const char tls_tail[] = " (check that the proxy speaks TLS, "
        "else give it as http://, and its certificate, or set no_proxy to "
        "go around the proxy)";
    static const struct {
        const char *var, *scheme, *url, *resp;
        int write_first;
        askdb_status st;
        const char *want;   /* {P}: "the proxy URL (VAR)", {U}: the model */
        const char *tail;   /* NULL: want is the whole message */
    } cases[] = {
        {"https_proxy", "http", https_url, bad_gateway, 0, ASKDB_ERR_LLM_UNREACHABLE,
         "{P} could not connect to the model at {U}: it answered 502 Bad "
         "Gateway (the proxy cannot reach the model's host: check the host "
         "in --llm-url or ASKDB_LLM_URL and that the proxy may reach it, "
         "or set no_proxy to go around the proxy)", NULL},
        {"https_proxy", "http", https_url, unavailable, 0, ASKDB_ERR_LLM_UNREACHABLE,
         "{P} could not connect to the model at {U}: it answered 503 "
         "Service Unavailable (the proxy is unavailable or overloaded: try "
         "again later, or set no_proxy to go around the proxy)", NULL},
        {"https_proxy", "http", https_url, "", 0, ASKDB_ERR_LLM_UNREACHABLE,
         "{P} closed the connection without answering the CONNECT to the "
         "model at {U} (check the proxy's logs, or set no_proxy to go "
         "around the proxy)", NULL},
        {"http_proxy", "https", http_url, not_tls, 1, ASKDB_ERR_LLM_UNREACHABLE,
         "TLS with {P} failed on the way to the model at {U}: ", tls_tail},
        {"https_proxy", "https", https_url, not_tls, 1, ASKDB_ERR_LLM_UNREACHABLE,
         "TLS with {P} failed on the way to the model at {U}: ", tls_tail},
        {"http_proxy", "http", http_url, bad_gateway, 0, ASKDB_ERR_LLM,
         "model endpoint {U} answered 502 Bad Gateway through {P} (the "
         "proxy answers so itself when it cannot reach the server: check "
         "that the server is up and that the proxy may reach it, or set "
         "no_proxy to go around the proxy)", NULL},
        {"http_proxy", "http", http_url, "", 0, ASKDB_ERR_LLM_UNREACHABLE,
         "model at {U} closed the connection without replying through {P} "
         "(the proxy, or the server behind it, may be crashing or "
         "overloaded: check their logs, or set no_proxy to go around the "
         "proxy)", NULL},
    };
    struct state *s = *ts;
    struct llm_request req;
    char proxy[128], shown[160], want[768];
    const char *e, *t;
    size_t i, n, k;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_proxies();
        req = basic_request(s);
        s->raw.write_first = cases[i].write_first;
        raw_start(&s->raw, cases[i].resp, strlen(cases[i].resp), 4096);
        snprintf(proxy, sizeof proxy, "%s://127.0.0.1:%d", cases[i].scheme,
                 s->raw.port);
        assert_int_equal(setenv(cases[i].var, proxy, 1), 0);
        openai_cfg(s, cases[i].url, "sk-proxy-test-key");
        s->cfg.llm_retries = 0;
        s->cfg.llm_timeout_ms = 3000;
        open_model(s);
        assert_int_equal(llm_complete(s->m, &req, &s->r), cases[i].st);
        snprintf(shown, sizeof shown, "the proxy %s (%s)", proxy,
                 cases[i].var);
        /* want: the case's text with {P} and {U} filled in */
        for (t = cases[i].want, n = 0; *t && n + 1 < sizeof want;) {
            const char *v = strncmp(t, "{P}", 3) == 0   ? shown
                            : strncmp(t, "{U}", 3) == 0 ? s->url
                                                        : NULL;

            if (!v) {
                want[n++] = *t++;
                continue;
            }
            k = strlen(v) < sizeof want - 1 - n ? strlen(v)
                                                : sizeof want - 1 - n;
            memcpy(want + n, v, k);
            n += k;
            t += 3;
        }
        want[n] = '\0';
        e = llm_errmsg(s->m);
        k = cases[i].tail ? strlen(cases[i].tail) : 0;
        if (cases[i].tail ? strncmp(e, want, n) != 0 ||
                                strlen(e) < n + k ||
                                strcmp(e + strlen(e) - k, cases[i].tail) != 0
                          : strcmp(e, want) != 0)
            fail_msg("case %zu:\n got  %s\n want %s...%s", i, e, want,
                     cases[i].tail ? cases[i].tail : "");
        llm_reply_free(&s->r);
        llm_free(s->m);
        s->m = NULL;
        raw_stop(&s->raw);
    }
}

/*
** A 502, 503 or 504 to CONNECT is the proxy's transient failure (it could
** not reach the model's host, or is overloaded), retried with the
** backoff the model's own 5xx gets: a proxy that answers 503 once is
** asked again, and the second answer is the one reported (here a 403,
** for want of a TLS model behind a tunnel), after one retry; one that
** answers 502 to both tries says so after its retry. A 403 or 407 is
** not retried (proxy_refusal_is_the_proxys_and_not_retried).
*/
static void proxy_unavailable_to_connect_is_retried(void **ts)
{
    static const char unavailable[] = "HTTP/1.1 503 Service Unavailable"
        "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    static const char bad_gateway[] = "HTTP/1.1 502 Bad Gateway\r\n"
        "Content-Length: 0\r\nConnection: close\r\n\r\n";
    static const char forbidden[] = "HTTP/1.1 403 Forbidden\r\n"
        "Content-Length: 0\r\nConnection: close\r\n\r\n";
    static const char server_error[] = "HTTP/1.1 500 Internal Server Error"
        "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    static const struct {
        const char *first, *then;
        int retries;         /* --retries */
        const char *verb, *answer; /* of the message */
    } cases[] = {
        {unavailable, forbidden, 3, "refused to connect",
         "403 Forbidden after 1 retry (the proxy does not let this host "
         "through: ask its administrator, or set no_proxy to go around "
         "it)"},
        {bad_gateway, bad_gateway, 1, "could not connect",
         "502 Bad Gateway after 1 retry (the proxy cannot reach the model's "
         "host: check the host in --llm-url or ASKDB_LLM_URL and that the "
         "proxy may reach it, or set no_proxy to go around the proxy)"},
        /* Retried as transient, so not worded as a refusal. */
        {server_error, server_error, 1, "could not connect",
         "500 Internal Server Error after 1 retry (the proxy is unavailable "
         "or overloaded: try again later, or set no_proxy to go around the "
         "proxy)"},
    };
    struct state *s = *ts;
    struct llm_request req;
    char proxy[128], want[768];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_proxies();
        req = basic_request(s);
        s->raw.then = cases[i].then;
        raw_start(&s->raw, cases[i].first, strlen(cases[i].first), 4096);
        snprintf(proxy, sizeof proxy, "http://127.0.0.1:%d", s->raw.port);
        assert_int_equal(setenv("https_proxy", proxy, 1), 0);
        openai_cfg(s, "https://api.example.invalid/v1", "sk-proxy-test-key");
        s->cfg.llm_retries = cases[i].retries;
        s->cfg.llm_timeout_ms = 3000;
        open_model(s);
        assert_int_equal(llm_complete(s->m, &req, &s->r),
                         ASKDB_ERR_LLM_UNREACHABLE);
        assert_int_equal(s->r.retries, 1);
        snprintf(want, sizeof want, "the proxy %s (https_proxy) %s to the "
                 "model at %s: it answered %s", proxy, cases[i].verb, s->url,
                 cases[i].answer);
        assert_string_equal(llm_errmsg(s->m), want);
        llm_reply_free(&s->r);
        llm_free(s->m);
        s->m = NULL;
        raw_stop(&s->raw);
        assert_int_equal(s->raw.accepted, 2);
        s->raw.then = NULL;
    }
}

/* Whether name resolves here (a resolver that answers for .invalid
** names would make a test of one that does not meaningless). */
static int resolves(const char *name)
{
    struct addrinfo *ai = NULL;
    int r = getaddrinfo(name, NULL, NULL, &ai);

    if (ai)
        freeaddrinfo(ai);
    return r == 0;
}

/*
** A proxy that does not answer (a closed loopback port) or whose name
** does not resolve is the proxy's failure: the message names it (without
** its credentials) and its variable, not the model, and it is not
** retried (down now, down a second later too). With the model's host in
** no_proxy (or NO_PROXY, when no_proxy is unset or empty; an address
** range too) libcurl goes to the model directly, and the message stays
** the model's; a no_proxy that does not name the host changes nothing.
*/
/*
** A proxy whose password holds an unencoded '/', '?' or '#' cannot be
** told where its user part ends: whatever libcurl then fails with, the
** message shows no piece of the user or the password (it showed
** "http://me:pa" for http://me:pa/ss@...).
*/
static void ambiguous_proxy_password_never_shows(void **ts)
{
    /* The part before the password, the password, what follows the
    ** port: passwords whose '/', '?' or '#' ends the authority early,
    ** and proxies without a scheme with a "://" further on that starts
    ** nothing. */
    static const char *const cases[][3] = {
        {"http://meuser:", "pa/ss", ""},
        {"http://meuser:", "p?ss", ""},
        {"http://meuser:", "pa#ss", ""},
        {"http://meuser:", "12/3x", ""},
        {"meuser:", "pass", "/?x=http://y"},
        {"meuser:", "p://ss", ""},
    };
    struct state *s = *ts;
    struct llm_request req;
    char proxy[160];
    const char *e;
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_proxies();
        req = basic_request(s);
        snprintf(proxy, sizeof proxy, "%s%s@127.0.0.1:%d%s", cases[i][0],
                 cases[i][1], free_port(), cases[i][2]);
        assert_int_equal(setenv("https_proxy", proxy, 1), 0);
        assert_int_equal(setenv("http_proxy", proxy, 1), 0);
        openai_cfg(s, "http://model.example.invalid/v1", NULL);
        s->cfg.llm_retries = 0;
        s->cfg.llm_timeout_ms = 3000;
        open_model(s);
        assert_int_not_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
        e = llm_errmsg(s->m);
        if (strstr(e, "meuser") || strstr(e, cases[i][1]) ||
            strstr(e, ":p") || strstr(e, ":12") || strstr(e, "ss@") ||
            strstr(e, "3x@"))
            fail_msg("case %zu shows the user or the password: %s", i, e);
        llm_reply_free(&s->r);
        llm_free(s->m);
        s->m = NULL;
    }
    clear_proxies();
}

static void proxy_down_or_unresolvable_is_the_proxys(void **ts)
{
    static const char refused[] = "connection refused";
    static const char unresolved[] = "cannot resolve the proxy's host name";
    static const struct {
        const char *var, *user, *host;
        const char *url;        /* NULL: http://127.0.0.1:(closed)/v1 */
        const char *no_proxy, *no_proxy_uc;
        const char *why;        /* NULL: the model's failure */
    } cases[] = {
        {"http_proxy", "", "127.0.0.1", "http://model.example.invalid/v1",
         NULL, NULL, refused},
        {"HTTPS_PROXY", "me:s3cret-pw@", "127.0.0.1",
         "https://api.example.invalid/v1", NULL, NULL, refused},
        {"https_proxy", "", "proxy.invalid",
         "https://api.example.invalid/v1", NULL, NULL, unresolved},
        {"ALL_PROXY", "", "127.0.0.1", NULL, "127.0.0.10,localhost", NULL,
         refused},
        /* The model's host in no_proxy: the model's failure. */
        {"http_proxy", "", "127.0.0.1", NULL, "127.0.0.1,localhost", NULL,
         NULL},
        {"http_proxy", "", "127.0.0.1", NULL, "", "example.invalid "
         "127.0.0.0/8", NULL},
        {"all_proxy", "", "proxy.invalid", NULL, "*", NULL, NULL},
    };
    struct state *s = *ts;
    struct llm_request req;
    char proxy[128], url[128], want[768];
    int port;
    double t0;
    size_t i;

    if (resolves("proxy.invalid")) {
        print_message("this machine resolves proxy.invalid (.invalid is "
                      "reserved never to resolve): skipped\n");
        skip();
    }
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_proxies();
        req = basic_request(s);
        port = free_port();
        snprintf(proxy, sizeof proxy, "http://%s%s:%d", cases[i].user,
                 cases[i].host, port);
        assert_int_equal(setenv(cases[i].var, proxy, 1), 0);
        if (cases[i].no_proxy)
            setenv("no_proxy", cases[i].no_proxy, 1);
        if (cases[i].no_proxy_uc)
            setenv("NO_PROXY", cases[i].no_proxy_uc, 1);
        snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", free_port());
        openai_cfg(s, cases[i].url ? cases[i].url : url, NULL);
        s->cfg.llm_retries = 3;
        s->cfg.llm_timeout_ms = 3000;
        open_model(s);
        t0 = now_ms();
        assert_int_equal(llm_complete(s->m, &req, &s->r),
                         ASKDB_ERR_LLM_UNREACHABLE);
        assert_true(now_ms() - t0 < 2000);
        assert_int_equal(s->r.retries, 0);
        if (cases[i].why)
            snprintf(want, sizeof want, "cannot reach the proxy "
                     "http://%s:%d (%s) on the way to the model at %s: %s "
                     "(check the proxy's address in %s and that it is "
                     "running, or set no_proxy to go around it)",
                     cases[i].host, port, cases[i].var, s->url,
                     cases[i].why, cases[i].var);
        else
            snprintf(want, sizeof want, "cannot reach model at %s: "
                     "connection refused (is the server running? set "
                     "--llm-url or ASKDB_LLM_URL)", s->url);
        if (strcmp(llm_errmsg(s->m), want) != 0)
            fail_msg("case %zu:\n got  %s\n want %s", i, llm_errmsg(s->m),
                     want);
        llm_reply_free(&s->r);
        llm_free(s->m);
        s->m = NULL;
    }
}

static void connection_reset_is_retried(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    json_t *log;

    fake_start(&s->f, "[{\"close\":true},{\"content\":\"SELECT 4;\"}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_retries = 2;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 4;");
    assert_int_equal(s->r.retries, 1);
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 2);
    json_decref(log);
}

static void connection_reset_without_retries_is_unreachable(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];

    fake_start(&s->f, "[{\"close\":true}]");
    openai_cfg(s, s->f.base, NULL);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    snprintf(want, sizeof want,
             "model at %s closed the connection without replying (the server "
             "may be crashing or overloaded; check its logs)", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
}

static void timeout_is_reported(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];
    double t0, ms;

    fake_start(&s->f, "[{\"delay_ms\":3000,\"content\":\"too late\"}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_timeout_ms = 300;
    open_model(s);
    t0 = now_ms();
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    ms = now_ms() - t0;
    if (ms < 250 || ms > 2500)
        fail_msg("took %.0f ms, want about 300", ms);
    snprintf(want, sizeof want,
             "model at %s did not answer within 300 ms (the model may be "
             "slow or overloaded; raise --llm-timeout, in milliseconds)",
             s->url);
    assert_string_equal(llm_errmsg(s->m), want);
    assert_null(s->r.text);
}

/* A stream still coming when --llm-timeout runs out answered: its
** message says the reply was not finished, not that the model did not
** answer (which sends the user after a dead server). */
static void timeout_in_a_stream_says_the_reply_was_coming(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];

    fake_start(&s->f, "[{\"content\":\"SELECT a, b, c FROM t;\","
                      "\"content_repeat\":40,\"drip_ms\":2}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_timeout_ms = 1500;
    s->cfg.stream = 1;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    assert_true(s->tok.len > 0);   /* some of it came */
    snprintf(want, sizeof want,
             "model at %s did not finish its reply within 1500 ms (it was "
             "still sending it: the model may be slow or the reply long; "
             "raise --llm-timeout, in milliseconds, or lower --max-tokens)",
             s->url);
    assert_string_equal(llm_errmsg(s->m), want);
    assert_null(s->r.text);
}

/* Sets *flag after delay_ms (cancel_stops_a_slow_request_at_once). */
struct canceller {
    atomic_int *flag;
    int delay_ms;
    double at;           /* now_ms() when it set the flag */
};

static void *cancel_later(void *ud)
{
    struct canceller *c = ud;
    struct timespec ts = {c->delay_ms / 1000, (c->delay_ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
    c->at = now_ms();
    atomic_store(c->flag, 1);
    return NULL;
}

/* A cancel from another thread ends a request that is waiting for a slow
** server within 100 ms (the multi loop polls every 50 ms), with its own
** status, no retry and no reply. */
static void cancel_stops_a_slow_request_at_once(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    atomic_int flag;
    struct canceller c = {&flag, 300, 0};
    pthread_t th;
    double ms;

    atomic_init(&flag, 0);
    fake_start(&s->f, "[{\"delay_ms\":5000,\"content\":\"too late\"}]");
    openai_cfg(s, s->f.base, NULL);
    open_model(s);
    req.cancel = &flag;
    assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_CANCELLED);
    ms = now_ms() - c.at;
    pthread_join(th, NULL);
    if (ms > 100)
        fail_msg("stopped %.0f ms after the cancel, want 100 at most", ms);
    assert_string_equal(llm_errmsg(s->m), "cancelled");
    assert_int_equal(s->r.retries, 0);
    assert_null(s->r.text);
}

/* ------------------------------------------------------------------ */
/* Streams fake_llm cannot produce                                     */
/* ------------------------------------------------------------------ */

/* Comments, junk events, \r\n / \r / \n line ends, a two-line data field,
** no space after "data:", and no blank line after the last event (which
** still counts). Sent 3 bytes at a time. */
static const char messy_stream[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/event-stream\r\n"
    "Connection: close\r\n"
    "\r\n"
    ": a comment\r\n"
    "\r\n"
    "event: ping\r\n"
    "data: this is not json\r\n"
    "\r\n"
    "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\","
    "\"content\":\"SEL\"}}]}\r\n"
    "\r\n"
    "data: {\"choices\":[]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":42}}]}\n\n"
    "data: \n\n"
    "data:  \r\n\r\n"
    "data: {\"choices\":[{\"delta\":\r\n"
    "data: {\"content\":\"ECT\"}}]}\r\n\r\n"
    "id: 7\nretry: 10\nnocolon\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\" 1\"}}]}\r\r"
    "data:{\"choices\":[{\"delta\":{\"content\":\";\"},"
    "\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}";

/* Split lines, comments, blank data (keep-alives) and an event of
** another name that is not JSON: read, or carry nothing. */
static void stream_reads_split_lines_and_skips_keepalives(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);

    raw_start(&s->raw, messy_stream, sizeof messy_stream - 1, 3);
    openai_cfg(s, s->raw.base, NULL);
    s->cfg.stream = 1;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 1;");
    assert_string_equal(s->tok.text, "SELECT 1;");
    assert_int_equal(s->tok.calls, 4);
    assert_int_equal(s->r.prompt_tokens, 3);
    assert_int_equal(s->r.completion_tokens, 2);
    assert_non_null(strstr(s->raw.req, "Accept: text/event-stream"));
}

/* The tester's stream: 'ó' split across two chunks, each then invalid
** UTF-8, so neither is JSON. Skipped, the WHERE was lost and the rest
** ran; it must fail the reply (not retried: text was shown). */
static void stream_event_that_is_not_json_fails_the_reply(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    static const char resp[] =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        "Connection: close\r\n\r\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\"SELECT count(*) "
        "FROM customers\"}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\" WHERE last_name = "
        "'L\xc3\"}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\"\xb3pez'\"}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\";\"},"
        "\"finish_reason\":\"stop\"}]}\n\n"
        "data: [DONE]\n\n";
    const char *msg;

    raw_start(&s->raw, resp, sizeof resp - 1, 4096);
    openai_cfg(s, s->raw.base, NULL);
    s->cfg.stream = 1;
    s->cfg.llm_retries = 3;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    assert_null(s->r.text);
    assert_int_equal(s->r.retries, 0);
    assert_string_equal(s->tok.text, "SELECT count(*) FROM customers");
    msg = llm_errmsg(s->m);
    if (!strstr(msg, "sent a streamed event that is not valid JSON ("
                     "{\"choices\":[{\"delta\":{\"content\":\" WHERE "
                     "last_name = 'L\xEF\xBF\xBD\"}}]}) (the server or a "
                     "proxy between garbled the stream"))
        fail_msg("message: %s", msg);
}

static void stream_cut_mid_reply_is_not_retried(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    static char resp[512];
    static const char ev[] =
        "data: {\"choices\":[{\"delta\":{\"content\":\"SEL\"}}]}\n\n";
    char want[512];

    /* Chunked, and closed before the last chunk: a cut transfer. */
    snprintf(resp, sizeof resp,
             "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
             "Transfer-Encoding: chunked\r\n\r\n%zx\r\n%s\r\n",
             sizeof ev - 1, ev);
    raw_start(&s->raw, resp, strlen(resp), 1024);
    openai_cfg(s, s->raw.base, NULL);
    s->cfg.stream = 1;
    s->cfg.llm_retries = 3;
    s->cfg.llm_timeout_ms = 3000;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    assert_string_equal(s->tok.text, "SEL");
    assert_int_equal(s->r.retries, 0);
    snprintf(want, sizeof want,
             "model at %s dropped the connection in the middle of a streamed "
             "reply (the server may be crashing or overloaded; check its "
             "logs)", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
}

/* The issue's cut: no Content-Length, no chunked encoding, closed before
** the rest of the SQL, no [DONE] and no finish_reason. */
static void stream_ending_without_its_marker_is_an_error(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    static const char resp[] =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        "Connection: close\r\n\r\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\"```sql\\nSELECT "
        "count(*) AS n FROM customers\"}}]}\n\n";
    char want[512];

    raw_start(&s->raw, resp, sizeof resp - 1, 1024);
    openai_cfg(s, s->raw.base, NULL);
    s->cfg.stream = 1;
    s->cfg.llm_retries = 3;
    s->cfg.llm_timeout_ms = 3000;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    assert_null(s->r.text);
    assert_int_equal(s->r.retries, 0);
    snprintf(want, sizeof want,
             "model at %s ended its streamed reply without the end marker "
             "(the reply was cut off) (the server or a proxy between may "
             "have dropped the connection; check its logs)", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
}

/* Anthropic's stream ends with message_stop; without it, it was cut. */
static void anthropic_stream_without_message_stop_is_an_error(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    static const char resp[] =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        "Connection: close\r\n\r\n"
        "event: content_block_delta\n"
        "data: {\"type\":\"content_block_delta\",\"index\":0,"
        "\"delta\":{\"type\":\"text_delta\",\"text\":\"SELECT 1\"}}\n\n"
        "event: message_delta\n"
        "data: {\"type\":\"message_delta\",\"delta\":"
        "{\"stop_reason\":\"end_turn\"}}\n\n";

    raw_start(&s->raw, resp, sizeof resp - 1, 1024);
    s->cfg.provider = "anthropic";
    s->cfg.llm_url = s->raw.base;
    s->cfg.model = "claude-test";
    s->cfg.api_key = "sk-ant-test-key";
    s->cfg.stream = 1;
    s->cfg.llm_retries = 0;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    assert_non_null(strstr(llm_errmsg(s->m), "without the end marker"));
}

/* A NUL in the reply's text ("\u0000") is read, kept visible as U+FFFD,
** and not taken for a body that is not JSON. */
static void nul_in_reply_text_is_kept_as_a_replacement(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    static const char resp[] =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        "Connection: close\r\n\r\n"
        "{\"choices\":[{\"message\":{\"content\":\"SELECT 1\\u0000;\"}}]}";

    raw_start(&s->raw, resp, sizeof resp - 1, 1024);
    openai_cfg(s, s->raw.base, NULL);
    s->cfg.llm_retries = 0;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 1\xEF\xBF\xBD;");
}

/* A body shorter than its Content-Length was cut, even when what came
** is valid JSON. */
static void body_shorter_than_content_length_is_an_error(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    static const char resp[] =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        "Content-Length: 400\r\nConnection: close\r\n\r\n"
        "{\"choices\":[{\"message\":{\"content\":\"SELECT 1\"}}]}";

    raw_start(&s->raw, resp, sizeof resp - 1, 1024);
    openai_cfg(s, s->raw.base, NULL);
    s->cfg.llm_retries = 0;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    assert_null(s->r.text);
    assert_non_null(strstr(llm_errmsg(s->m), "cut its reply short"));
}

/* Ask once per streaming mode (plain, then streamed) on the fake's
** script: reply i's text and cut flag must be want[i] and cut[i]. */
static void expect_cuts(struct state *s, const char *const *want,
                        const int *cut, int n)
{
    struct llm_request req = basic_request(s);
    int i;

    for (i = 0; i < n; i++) {
        if (i == n / 2) {
            llm_free(s->m);
            s->cfg.stream = 1;
            open_model(s);
        }
        llm_reply_free(&s->r);
        assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
        assert_string_equal(s->r.text, want[i]);
        if (s->r.cut != cut[i])
            fail_msg("reply %d: cut %d, expected %d", i, s->r.cut, cut[i]);
    }
}

/* finish_reason "length": the reply stopped at max_tokens, streamed or
** not; it comes back cut, never as a whole reply. */
static void openai_reply_stopped_at_max_tokens_comes_back_cut(void **ts)
{
    struct state *s = *ts;
    static const char *const want[] = {"SELECT a FROM t GROUP BY",
                                       "SELECT 1;", "SELECT a FROM",
                                       "SELECT 2;"};
    static const int cut[] = {LLM_CUT_MAX_TOKENS, 0, LLM_CUT_MAX_TOKENS, 0};

    fake_start(&s->f,
               "[{\"content\":\"SELECT a FROM t GROUP BY\","
               "\"finish_reason\":\"length\"},"
               "{\"content\":\"SELECT 1;\"},"
               "{\"content\":\"SELECT a FROM\",\"finish_reason\":\"length\"},"
               "{\"content\":\"SELECT 2;\"}]");
    openai_cfg(s, s->f.base, NULL);
    open_model(s);
    expect_cuts(s, want, cut, 4);
}

/* A JSON body cut short where HTTP cannot tell (no length: the
** connection's end ends it) is a dropped connection: retried, never
** "is --llm-url the base URL?". */
static void json_body_cut_short_is_retried(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    const char *msg;

    fake_start(&s->f, "[{\"content\":\"SELECT 1;\",\"cut\":30,"
                      "\"framing\":\"close\"},{\"content\":\"SELECT 2;\"},"
                      "{\"content\":\"SELECT 3;\",\"cut\":90,"
                      "\"framing\":\"close\",\"repeat\":true}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.llm_retries = 1;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 2;");
    assert_int_equal(s->r.retries, 1);
    llm_reply_free(&s->r);
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    assert_int_equal(s->r.retries, 1);
    msg = llm_errmsg(s->m);
    if (!strstr(msg, "cut its reply short after 1 retry") ||
        strstr(msg, "--llm-url"))
        fail_msg("message: %s", msg);
}

/* JSON with invalid UTF-8 is said to be invalid JSON, with where; the
** base-URL hint is for bodies that are not JSON at all. */
static void invalid_json_body_is_not_blamed_on_the_url(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    static const char resp[] =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        "Content-Length: 51\r\nConnection: close\r\n\r\n"
        "{\"choices\":[{\"message\":{\"content\":\"\xff\xfe "
        "SELECT 1\"}}]}";
    char want[512];

    raw_start(&s->raw, resp, sizeof resp - 1, 4096);
    openai_cfg(s, s->raw.base, NULL);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    snprintf(want, sizeof want,
             "model endpoint %s: reply is not valid JSON (unable to decode "
             "byte 0xff near '\"', at byte 35): {\"choices\":[{\"message\":"
             "{\"content\":\"\xEF\xBF\xBD\xEF\xBF\xBD SELECT 1\"}}]}",
             s->url);
    assert_string_equal(llm_errmsg(s->m), want);
}

/* Server-sent events labelled application/json are read as a stream,
** asked for or not. */
static void events_labelled_json_are_read_as_a_stream(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    static const char resp[] =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        "Connection: close\r\n\r\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\"SELECT\"}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\" 1;\"},"
        "\"finish_reason\":\"stop\"}]}\n\n"
        "data: [DONE]\n\n";

    raw_start(&s->raw, resp, sizeof resp - 1, 4096);
    openai_cfg(s, s->raw.base, NULL);
    s->cfg.stream = 1;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 1;");
    assert_string_equal(s->tok.text, "SELECT 1;");
}

/* ------------------------------------------------------------------ */
/* Anthropic                                                           */
/* ------------------------------------------------------------------ */

static const struct llm_msg chat[] = {
    {"system", "You write SQL."},
    {"user", "q1"},
    {"system", "Schema: t(a)"},
    {"user", "q2"},
    {"assistant", "a1"},
    {"user", "q3"},
};

/* Config for an Anthropic fake at base (a local URL, so the provider is
** named explicitly). */
static void anthropic_cfg(struct state *s, const char *base)
{
    s->cfg.provider = "anthropic";
    s->cfg.llm_url = base;
    s->cfg.model = "claude-test";
    s->cfg.api_key = "sk-ant-test-key";
    s->cfg.max_tokens = 128;
    snprintf(s->url, sizeof s->url, "%s/messages", base);
}

/* A reply with no text says how it ended, which tells what came instead
** (a tool call, a content filter, a refusal); only a short word of the
** server's is repeated. */
static void reply_with_no_content_says_how_it_ended(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];

    fake_start(&s->f,
               "[{\"status\":200,\"body\":{\"choices\":[{\"message\":"
               "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":"
               "[]},\"finish_reason\":\"tool_calls\"}]}},"
               "{\"status\":200,\"body\":{\"choices\":[{\"message\":"
               "{\"content\":null},\"finish_reason\":\"x\\u001b[2J\"}]}},"
               "{\"status\":200,\"body\":{\"type\":\"message\","
               "\"content\":[],\"stop_reason\":\"refusal\"}}]");
    openai_cfg(s, s->f.base, NULL);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    snprintf(want, sizeof want,
             "model endpoint %s: reply had no content "
             "(choices[0].message.content is missing or null; it ended "
             "with finish_reason \"tool_calls\")", s->url);
    assert_string_equal(llm_errmsg(s->m), want);

    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    snprintf(want, sizeof want,
             "model endpoint %s: reply had no content "
             "(choices[0].message.content is missing or null)", s->url);
    assert_string_equal(llm_errmsg(s->m), want);

    llm_free(s->m);
    s->m = NULL;
    anthropic_cfg(s, s->f.base);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    snprintf(want, sizeof want,
             "model endpoint %s: reply had no content "
             "(content[].text is missing or null; it ended with "
             "stop_reason \"refusal\")", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
}

/*
** A reply that ended as a finished one does, with no text: a stream with
** no text delta ("stop"), Anthropic's content [] ("end_turn"). It was an
** error of the model that ended the question (exit 4), where OpenAI's
** content "" in a body was an empty reply the agent asks again for: all
** are that now.
*/
static void a_finished_reply_with_no_text_is_an_empty_reply(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    int i;

    fake_start(&s->f,
               "[{\"content\":\"\"},"
               "{\"status\":200,\"body\":{\"choices\":[{\"message\":"
               "{\"content\":\"\"},\"finish_reason\":\"stop\"}]}},"
               "{\"status\":200,\"body\":{\"type\":\"message\","
               "\"content\":[],\"stop_reason\":\"end_turn\"}},"
               "{\"content\":\"\"}]");
    /* OpenAI streamed and not, Anthropic not and streamed */
    for (i = 0; i < 4; i++) {
        if (i < 2)
            openai_cfg(s, s->f.base, NULL);
        else
            anthropic_cfg(s, s->f.base);
        s->cfg.stream = i == 0 || i == 3;
        open_model(s);
        assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
        assert_string_equal(s->r.text, "");
        assert_int_equal(s->r.cut, LLM_CUT_NONE);
        llm_reply_free(&s->r);
        llm_free(s->m);
        s->m = NULL;
    }
}

/* Anthropic takes a temperature from 0 to 1: past it, every request got a
** 400; now the model is refused at its start, saying which option. */
static void anthropic_refuses_a_temperature_over_1_at_once(void **ts)
{
    struct state *s = *ts;
    llm *m = NULL;
    char err[256];

    anthropic_cfg(s, "http://127.0.0.1:9/v1");
    s->cfg.temperature = 1.5;
    assert_int_equal(llm_new(&s->cfg, &m, err, sizeof err), ASKDB_ERR_USAGE);
    assert_null(m);
    assert_string_equal(err, "Anthropic takes a temperature from 0 to 1, "
                             "not 1.5 (--temperature)");
    s->cfg.temperature = 1;
    s->cfg.candidate_temperature = 1.2;
    assert_int_equal(llm_new(&s->cfg, &m, err, sizeof err), ASKDB_ERR_USAGE);
    assert_string_equal(err, "Anthropic takes a temperature from 0 to 1, "
                             "not 1.2 (--candidate-temperature)");
    s->cfg.candidate_temperature = 1;
    assert_int_equal(llm_new(&s->cfg, &m, err, sizeof err), ASKDB_OK);
    llm_free(m);
}

static void anthropic_sends_system_separately_and_reads_text(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    json_t *log, *e;

    fake_start(&s->f, "[{\"content\":\"SELECT a FROM t;\",\"usage\":"
                      "{\"input_tokens\":20,\"output_tokens\":6}}]");
    anthropic_cfg(s, s->f.base);
    open_model(s);
    assert_string_equal(llm_name(s->m), "anthropic");
    req.msgs = chat;
    req.nmsgs = 6;
    req.max_tokens = 0;   /* falls back to cfg.max_tokens */
    req.seed = 5;         /* the Messages API has no seed */
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT a FROM t;");
    assert_int_equal(s->r.prompt_tokens, 20);
    assert_int_equal(s->r.completion_tokens, 6);
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 1);
    e = json_array_get(log, 0);
    assert_string_equal(json_string_value(json_object_get(e, "path")),
                        "/v1/messages");
    assert_json(json_object_get(e, "headers"),
                "{\"x-api-key\":\"sk-ant-test-key\","
                "\"anthropic-version\":\"2023-06-01\","
                "\"content-type\":\"application/json\"}");
    assert_json(json_object_get(e, "body"),
                "{\"model\":\"claude-test\",\"max_tokens\":128,"
                "\"system\":\"You write SQL.\\n\\nSchema: t(a)\","
                "\"messages\":[{\"role\":\"user\",\"content\":\"q1\\n\\nq2\"},"
                "{\"role\":\"assistant\",\"content\":\"a1\"},"
                "{\"role\":\"user\",\"content\":\"q3\"}],"
                "\"temperature\":0.25}");
    json_decref(log);
}

static void anthropic_streams(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    json_t *log;

    fake_start(&s->f, "[{\"content\":\"SELECT * FROM orders;\",\"usage\":"
                      "{\"input_tokens\":30,\"output_tokens\":9}}]");
    anthropic_cfg(s, s->f.base);
    s->cfg.stream = 1;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT * FROM orders;");
    assert_string_equal(s->tok.text, "SELECT * FROM orders;");
    assert_int_equal(s->tok.calls, 6);   /* 21 bytes in pieces of 4 */
    assert_int_equal(s->r.prompt_tokens, 30);
    assert_int_equal(s->r.completion_tokens, 9);
    log = fake_log(&s->f);
    assert_json(json_object_get(json_object_get(json_array_get(log, 0),
                                                "body"), "stream"), "true");
    json_decref(log);
}

/* stop_reason "max_tokens" (in message_delta when streamed): cut. */
static void anthropic_reply_stopped_at_max_tokens_comes_back_cut(void **ts)
{
    struct state *s = *ts;
    static const char *const want[] = {"SELECT a FROM t GROUP BY",
                                       "SELECT 1;", "SELECT a FROM",
                                       "SELECT 2;"};
    static const int cut[] = {LLM_CUT_MAX_TOKENS, 0, LLM_CUT_MAX_TOKENS, 0};

    fake_start(&s->f,
               "[{\"content\":\"SELECT a FROM t GROUP BY\","
               "\"stop_reason\":\"max_tokens\"},"
               "{\"content\":\"SELECT 1;\"},"
               "{\"content\":\"SELECT a FROM\",\"stop_reason\":\"max_tokens\"},"
               "{\"content\":\"SELECT 2;\"}]");
    anthropic_cfg(s, s->f.base);
    open_model(s);
    expect_cuts(s, want, cut, 4);
}

/* A garbled event before any text: tried again, as a dropped connection
** would be (for Anthropic after message_start, whose usage is dropped
** with the failed try). */
static void stream_garbled_before_any_text_is_retried(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    json_t *log;

    fake_start(&s->f, "[{\"content\":\"SELECT 1;\",\"bad_event_at\":0,"
                      "\"usage\":{\"input_tokens\":70}},"
                      "{\"content\":\"SELECT 2;\",\"usage\":"
                      "{\"input_tokens\":20,\"output_tokens\":3}},"
                      "{\"content\":\"SELECT 3;\",\"bad_event_at\":1}]");
    anthropic_cfg(s, s->f.base);
    s->cfg.stream = 1;
    s->cfg.llm_retries = 2;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 2;");
    assert_string_equal(s->tok.text, "SELECT 2;");
    assert_int_equal(s->r.retries, 1);
    assert_int_equal(s->r.prompt_tokens, 20);
    assert_int_equal(s->r.completion_tokens, 3);
    llm_reply_free(&s->r);
    /* After a piece of text: an error, not another try. */
    s->tok.len = 0;
    assert_int_equal(llm_complete(s->m, &req, &s->r),
                     ASKDB_ERR_LLM_UNREACHABLE);
    assert_null(s->r.text);
    assert_int_equal(s->r.retries, 0);
    assert_string_equal(s->tok.text, "SELE");
    assert_non_null(strstr(llm_errmsg(s->m), "sent a streamed event that is "
                                             "not valid JSON"));
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 3);
    json_decref(log);
}

/*
** Events in a reply not labelled as a stream - application/json to a
** request that asked for one, or a 2xx to one that did not - are read as
** they come too, so what a labelled stream gets they get: one that
** cannot be read, or that ends without its end marker, before any text
** is tried again, not reported at once.
*/
static void unlabelled_stream_cut_or_garbled_before_text_is_retried(
    void **ts)
{
    static const char cut[] =
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n";
    static const char garbled[] =
        "data: {\"choices\":[{\"delta\":{\"content\":\"SEL\n\n";
    static const char json[] = "application/json";
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    json_t *script, *log;
    char *text;

    script = json_pack("[{s:s,s:i,s:s},{s:i,s:s,s:s},{s:s,s:s},{s:i,s:s},"
                       "{s:s}]",
                       "content", "SELECT 1;", "bad_event_at", 0,
                       "content_type", json,
                       "status", 200, "body", cut, "content_type", json,
                       "content", "SELECT 2;", "content_type", json,
                       "status", 200, "body", garbled,
                       "content", "SELECT 3;");
    text = json_dumps(script, 0);
    assert_non_null(text);
    fake_start(&s->f, text);
    free(text);
    json_decref(script);
    openai_cfg(s, s->f.base, NULL);
    s->cfg.stream = 1;
    s->cfg.llm_retries = 2;
    open_model(s);
    if (llm_complete(s->m, &req, &s->r) != ASKDB_OK)
        fail_msg("streamed: %s", llm_errmsg(s->m));
    assert_string_equal(s->r.text, "SELECT 2;");
    assert_string_equal(s->tok.text, "SELECT 2;");
    assert_int_equal(s->r.retries, 2);
    llm_reply_free(&s->r);
    llm_free(s->m);
    s->m = NULL;
    /* Asked for no stream, the server streams all the same. */
    s->cfg.stream = 0;
    open_model(s);
    if (llm_complete(s->m, &req, &s->r) != ASKDB_OK)
        fail_msg("not streamed: %s", llm_errmsg(s->m));
    assert_string_equal(s->r.text, "SELECT 3;");
    assert_int_equal(s->r.retries, 1);
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 5);
    json_decref(log);
}

/*
** Text of a stream that reached no one - no token callback, or no stream
** asked for - was not delivered: a garbled event after it is retried
** like one before any text, and only the new try's text is the reply.
*/
static void stream_garbled_after_text_no_one_saw_is_retried(void **ts)
{
    static const char garbled[] =
        "data: {\"choices\":[{\"delta\":{\"content\":\"SELE\"}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\"CT\n\n";
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    json_t *script, *log;
    char *text;

    script = json_pack("[{s:s,s:i},{s:s},{s:i,s:s},{s:s}]",
                       "content", "SELECT 1;", "bad_event_at", 1,
                       "content", "SELECT 2;",
                       "status", 200, "body", garbled,
                       "content", "SELECT 3;");
    text = json_dumps(script, 0);
    assert_non_null(text);
    fake_start(&s->f, text);
    free(text);
    json_decref(script);
    openai_cfg(s, s->f.base, NULL);
    s->cfg.stream = 1;
    s->cfg.llm_retries = 1;
    open_model(s);
    req.on_token = NULL;
    if (llm_complete(s->m, &req, &s->r) != ASKDB_OK)
        fail_msg("no token callback: %s", llm_errmsg(s->m));
    assert_string_equal(s->r.text, "SELECT 2;");
    assert_int_equal(s->r.retries, 1);
    llm_reply_free(&s->r);
    llm_free(s->m);
    s->m = NULL;
    /* Asked for no stream, the server streams all the same. */
    s->cfg.stream = 0;
    open_model(s);
    req = basic_request(s);
    if (llm_complete(s->m, &req, &s->r) != ASKDB_OK)
        fail_msg("not streamed: %s", llm_errmsg(s->m));
    assert_string_equal(s->r.text, "SELECT 3;");
    assert_int_equal(s->r.retries, 1);
    assert_int_equal(s->tok.calls, 0);
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 4);
    json_decref(log);
}

/* An in-stream overloaded_error before any text is retried as a 529
** would be; with no retry left it is reported, saying after how many. */
static void anthropic_stream_overloaded_before_text_is_retried(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];
    json_t *log;

    fake_start(&s->f, "[{\"error_event\":{\"type\":\"overloaded_error\","
                      "\"message\":\"Overloaded\"}},"
                      "{\"content\":\"SELECT 1;\"},"
                      "{\"error_event\":{\"type\":\"overloaded_error\","
                      "\"message\":\"Overloaded\"},\"repeat\":true}]");
    anthropic_cfg(s, s->f.base);
    s->cfg.stream = 1;
    s->cfg.llm_retries = 2;
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 1;");
    assert_int_equal(s->r.retries, 1);
    llm_reply_free(&s->r);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_null(s->r.text);
    assert_int_equal(s->r.retries, 2);
    snprintf(want, sizeof want,
             "model endpoint %s reported an error after 2 retries: "
             "overloaded_error: Overloaded", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 5);
    json_decref(log);
}

/* A base URL with no path, as Anthropic's SDKs take it, gets /v1; a 404
** names Anthropic's URL, not an OpenAI-compatible server's. */
static void anthropic_base_without_a_path_gets_v1(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char base[64], want[512];
    json_t *log;

    fake_start(&s->f, "[{\"content\":\"SELECT 1;\"},{\"status\":404}]");
    snprintf(base, sizeof base, "http://127.0.0.1:%d", s->f.port);
    anthropic_cfg(s, base);
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 1;");
    llm_reply_free(&s->r);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    snprintf(want, sizeof want,
             "model endpoint %s/v1/messages answered 404 Not Found: fake_llm "
             "status 404 (check the URL path and the model name "
             "'claude-test' (--model or ASKDB_MODEL); askdb posts to the "
             "base URL plus /messages, Anthropic's is "
             "https://api.anthropic.com/v1/messages)", base);
    assert_string_equal(llm_errmsg(s->m), want);
    log = fake_log(&s->f);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(log, 0), "path")),
                        "/v1/messages");
    json_decref(log);
}

static const char anthropic_error_stream[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/event-stream\r\n"
    "Connection: close\r\n"
    "\r\n"
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"usage\":"
    "{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
    "{\"type\":\"text_delta\",\"text\":\"SEL\"}}\n\n"
    "event: error\n"
    "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
    "\"message\":\"Overloaded\"}}\n\n";

static void anthropic_stream_error_event_is_reported(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    char want[512];

    raw_start(&s->raw, anthropic_error_stream,
              sizeof anthropic_error_stream - 1, 4096);
    anthropic_cfg(s, s->raw.base);
    s->cfg.stream = 1;
    s->cfg.llm_retries = 3;   /* not used: text came before the error */
    open_model(s);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_null(s->r.text);
    snprintf(want, sizeof want,
             "model endpoint %s reported an error: overloaded_error: "
             "Overloaded", s->url);
    assert_string_equal(llm_errmsg(s->m), want);
    assert_non_null(strstr(s->raw.req, "x-api-key: sk-ant-test-key"));
}

/* ------------------------------------------------------------------ */
/* Choice, custom, local                                               */
/* ------------------------------------------------------------------ */

static int fake_fn(void *ud, int n, const char *const *roles,
                   const char *const *contents, char **reply)
{
    int *fail = ud;

    if (*fail) {
        *reply = strdup("ignored");   /* must be freed by the library */
        return *fail > 1 ? *fail : 3;
    }
    if (n != 2 || strcmp(roles[0], "system") != 0 ||
        strcmp(contents[1], "How many rows are in t?") != 0)
        return 1;
    *reply = strdup("SELECT 42;");
    return 0;
}

static void provider_choice_rules(void **ts)
{
    askdb_config c = askdb_config_default();
    llm *m = NULL;
    char err[512];

    (void)ts;
    assert_string_equal(llm_choose(&c), "local");
    c.llm_url = "http://localhost:11434/v1";
    assert_string_equal(llm_choose(&c), "openai");
    c.llm_url = "https://api.Anthropic.com/v1";
    assert_string_equal(llm_choose(&c), "anthropic");
    c.llm_url = "https://anthropic.com./v1";
    assert_string_equal(llm_choose(&c), "anthropic");
    /* The host decides, not the text: a gateway that names it elsewhere
    ** speaks OpenAI's protocol. */
    c.llm_url = "https://gateway.example/anthropic.com/v1";
    assert_string_equal(llm_choose(&c), "openai");
    c.llm_url = "https://api.anthropic.com.evil.example/v1";
    assert_string_equal(llm_choose(&c), "openai");
    c.llm_url = "http://localhost:4000/v1?upstream=api.anthropic.com";
    assert_string_equal(llm_choose(&c), "openai");
    c.llm_url = "https://notanthropic.com/v1";
    assert_string_equal(llm_choose(&c), "openai");
    c.llm_url = NULL;
    c.api_key = "sk-proj-abc";
    assert_string_equal(llm_choose(&c), "openai");
    c.api_key = "sk-ant-abc";
    assert_string_equal(llm_choose(&c), "anthropic");
    c.llm_url = "http://127.0.0.1:8080/v1"; /* the URL decides */
    assert_string_equal(llm_choose(&c), "openai");
    c.llm_url = NULL;
    c.llm_fn = fake_fn;
    assert_string_equal(llm_choose(&c), "custom");
    c.provider = "openai";
    assert_string_equal(llm_choose(&c), "openai");
    c.provider = "local";
    assert_string_equal(llm_choose(&c), "local");
    c.provider = "Anthropic";
    assert_string_equal(llm_choose(&c), "anthropic");
    c.provider = "";   /* empty = unset */
    assert_string_equal(llm_choose(&c), "custom");
    c.provider = "gpt";
    assert_null(llm_choose(&c));
    assert_int_equal(llm_new(&c, &m, err, sizeof err), ASKDB_ERR_USAGE);
    assert_null(m);
    assert_string_equal(err, "unknown model provider 'gpt' (valid: openai "
                             "(any OpenAI-compatible server: Ollama, vLLM, "
                             "llama.cpp's), anthropic, local; custom for a "
                             "program's own llm_fn)");
}

static void http_providers_require_a_model_and_http_url(void **ts)
{
    askdb_config c = askdb_config_default();
    llm *m = NULL;
    char err[512];

    (void)ts;
    c.llm_url = "http://127.0.0.1:8080/v1/";
    assert_int_equal(llm_new(&c, &m, err, sizeof err), ASKDB_ERR_USAGE);
    assert_null(m);
    assert_string_equal(err, "no model name given for the OpenAI-compatible "
                             "endpoint http://127.0.0.1:8080/v1/chat/"
                             "completions: pass --model NAME or set "
                             "ASKDB_MODEL");
    c.model = "m";
    c.llm_url = "ftp://example.com/v1";
    assert_int_equal(llm_new(&c, &m, err, sizeof err), ASKDB_ERR_USAGE);
    assert_string_equal(err, "the model URL 'ftp://example.com/v1' must "
                             "start with http:// or https:// (give the "
                             "server's base URL, e.g. http://localhost:"
                             "11434/v1, with --llm-url or ASKDB_LLM_URL)");
    c.llm_url = "http://127.0.0.1:8080/v1";
    c.api_key = "sk-x\r\nX-Evil: 1";
    assert_int_equal(llm_new(&c, &m, err, sizeof err), ASKDB_ERR_USAGE);
    assert_null(m);
}

static void malformed_url_is_a_usage_error(void **ts)
{
    static const char *const bad[][2] = {
        {"htp:/x", "must start with http:// or https://"},
        {"http://", "names no host"},
        {"https:///v1", "names no host"},
        {"http:// /v1", "is not a valid URL (Bad hostname)"},
        {"http://exa mple.com/v1", "is not a valid URL (Bad hostname)"},
        {"http://h:99999/v1", "is not a valid URL (Port number was not a "
                              "decimal number between 0 and 65535)"},
        {"http://u:secret@h/v 1", "is not a valid URL (Bad path)"},
        /* A password's unencoded '/' ends the authority early: all from
        ** the first ':' to the last '@' is hidden. */
        {"http://u:pa/Secr3t@h/v1", "is not a valid URL (Port number was "
                                    "not a decimal number between 0 and "
                                    "65535)"},
        /* No scheme: still a user and a password before the '@' (the
        ** form a proxy variable may take), never shown. */
        {"me:s3cretpw@h:8080/v1", "must start with http:// or https://"},
        {"me:pa/Secr3t@h/v1", "must start with http:// or https://"},
        /* A "://" past the start is no scheme's end. */
        {"me:s3cretpw@h:8080/v1?next=http://x", "must start with http:// "
                                                "or https://"},
        {"me:s3c://pw@h/v1", "must start with http:// or https://"},
    };
    askdb_config c = askdb_config_default();
    const char *shown;
    char err[512], want[512];
    llm *m = NULL;
    size_t i;

    (void)ts;
    c.model = "m";
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c.llm_url = bad[i][0];
        shown = i == 6   ? "http://h/v 1"
                : i == 7 ? "http://u:xxx@h/v1"
                : i == 8 ? "h:8080/v1"
                : i == 9 ? "me:xxx@h/v1"
                : i == 10 ? "h:8080/v1?next=http://x"
                : i == 11 ? "me:xxx@h/v1"
                          : bad[i][0];
        snprintf(want, sizeof want, "the model URL '%s' %s (give the "
                 "server's base URL, e.g. http://localhost:11434/v1, with "
                 "--llm-url or ASKDB_LLM_URL)", shown, bad[i][1]);
        c.provider = NULL;
        assert_int_equal(llm_new(&c, &m, err, sizeof err), ASKDB_ERR_USAGE);
        assert_null(m);
        assert_string_equal(err, want);
        c.provider = "anthropic";
        assert_int_equal(llm_new(&c, &m, err, sizeof err), ASKDB_ERR_USAGE);
        assert_string_equal(err, want);
    }
    c.provider = NULL;
    c.llm_url = "http://h/v1";
    assert_int_equal(llm_new(&c, &m, err, sizeof err), ASKDB_OK);
    llm_free(m);
}

static void endpoint_urls_are_built_from_the_base(void **ts)
{
    char *u;

    (void)ts;
    u = http_endpoint(NULL, "https://api.openai.com/v1", NULL,
                      "/chat/completions");
    assert_string_equal(u, "https://api.openai.com/v1/chat/completions");
    free(u);
    u = http_endpoint("http://h:1/v1//", "x", NULL, "/chat/completions");
    assert_string_equal(u, "http://h:1/v1/chat/completions");
    free(u);
    u = http_endpoint("http://h:1/v1/chat/completions/", "x", NULL,
                      "/chat/completions");
    assert_string_equal(u, "http://h:1/v1/chat/completions");
    free(u);
    u = http_endpoint("", "https://api.anthropic.com/v1", "/v1", "/messages");
    assert_string_equal(u, "https://api.anthropic.com/v1/messages");
    free(u);
    /* A query (Azure's api-version) stays after the path. */
    u = http_endpoint("http://h:1/v1?api-version=2024-06-01", "x", NULL,
                      "/chat/completions");
    assert_string_equal(u, "http://h:1/v1/chat/completions?"
                           "api-version=2024-06-01");
    free(u);
    u = http_endpoint("https://r.openai.azure.com/openai/deployments/d/"
                      "?api-version=1&x=/a/", "x", NULL, "/chat/completions");
    assert_string_equal(u, "https://r.openai.azure.com/openai/deployments/d/"
                           "chat/completions?api-version=1&x=/a/");
    free(u);
    u = http_endpoint("http://h:1/v1/chat/completions?k=1", "x", NULL,
                      "/chat/completions");
    assert_string_equal(u, "http://h:1/v1/chat/completions?k=1");
    free(u);
    u = http_endpoint("http://h:1/v1#frag", "x", NULL, "/messages");
    assert_string_equal(u, "http://h:1/v1/messages#frag");
    free(u);
    /* "://" at the end or after the query: no read past the base (the
    ** URL is then refused by http_url_check()). */
    u = http_endpoint("https://", "x", "/v1", "/messages");
    assert_string_equal(u, "https:/messages");
    free(u);
    u = http_endpoint("h?x=://", "x", "/v1", "/messages");
    assert_string_equal(u, "h/messages?x=://");
    free(u);
    /* Anthropic's SDK form, with no path: /v1 comes first. */
    u = http_endpoint("https://api.anthropic.com", "x", "/v1", "/messages");
    assert_string_equal(u, "https://api.anthropic.com/v1/messages");
    free(u);
    u = http_endpoint("http://u:p@h:1/?k=/a", "x", "/v1", "/messages");
    assert_string_equal(u, "http://u:p@h:1/v1/messages?k=/a");
    free(u);
    u = http_endpoint("http://h:1/anthropic", "x", "/v1", "/messages");
    assert_string_equal(u, "http://h:1/anthropic/messages");
    free(u);
    u = http_endpoint("http://h:1", "x", NULL, "/chat/completions");
    assert_string_equal(u, "http://h:1/chat/completions");
    free(u);
}

static void custom_callback_reply_and_failure(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    int fail = 0;

    s->cfg.llm_fn = fake_fn;
    s->cfg.llm_ud = &fail;
    open_model(s);
    assert_string_equal(llm_name(s->m), "custom");
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(s->r.text, "SELECT 42;");
    assert_int_equal(s->r.prompt_tokens, -1);
    assert_int_equal(s->r.completion_tokens, -1);
    assert_int_equal(s->r.http_status, 0);
    llm_reply_free(&s->r);
    fail = 1;
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_null(s->r.text);
    assert_string_equal(llm_errmsg(s->m),
                        "custom model callback failed (it returned 3)");
    assert_int_equal(llm_denied(s->m), 0);
    /* 401 and 403 say the credentials were refused, as an HTTP provider's
    ** status would: llm_denied() (eval stops at once). */
    fail = 401;
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_null(s->r.text);
    assert_int_equal(llm_denied(s->m), 1);
    assert_string_equal(llm_errmsg(s->m),
                        "custom model callback refused the credentials or "
                        "the permission to use the model (it returned 401)");
    fail = 403;
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_ERR_LLM);
    assert_int_equal(llm_denied(s->m), 1);
    fail = 0;
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_int_equal(llm_denied(s->m), 0);
    llm_reply_free(&s->r);
    fail = 1;
    /* Cancelled: the request says so, and no reply is kept. */
    {
        atomic_int stop;
        atomic_init(&stop, 1);
        fail = 0;
        req.cancel = &stop;
        assert_int_equal(llm_complete(s->m, &req, &s->r),
                         ASKDB_ERR_CANCELLED);
        assert_null(s->r.text);
        assert_string_equal(llm_errmsg(s->m), "cancelled");
    }
}

/* ------------------------------------------------------------------ */
/* Several replies (llm_complete_n)                                    */
/* ------------------------------------------------------------------ */

/* A callback that answers call k with "SELECT k;" and fails call fail_at
** (1-based; 0 = never). */
struct counting {
    int calls;
    int fail_at;
};

static int counting_fn(void *ud, int n, const char *const *roles,
                       const char *const *contents, char **reply)
{
    struct counting *c = ud;
    char text[32];

    (void)n, (void)roles, (void)contents;
    c->calls++;
    if (c->calls == c->fail_at)
        return 5;
    snprintf(text, sizeof text, "SELECT %d;", c->calls);
    *reply = strdup(text);
    return 0;
}

static void complete_n_custom_calls_the_callback_once_per_reply(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    struct llm_reply r[3];
    struct counting c = {0, 0};
    int i;

    s->cfg.llm_fn = counting_fn;
    s->cfg.llm_ud = &c;
    open_model(s);
    assert_int_equal(llm_complete_n(s->m, &req, 3, r), ASKDB_OK);
    assert_int_equal(c.calls, 3);
    assert_string_equal(r[0].text, "SELECT 1;");
    assert_string_equal(r[1].text, "SELECT 2;");
    assert_string_equal(r[2].text, "SELECT 3;");
    for (i = 0; i < 3; i++) {
        assert_int_equal(r[i].prompt_tokens, -1);
        assert_int_equal(r[i].completion_tokens, -1);
        assert_true(r[i].ms == r[0].ms);   /* the whole call's time */
        llm_reply_free(&r[i]);
    }

    /* n = 1 is llm_complete. */
    assert_int_equal(llm_complete_n(s->m, &req, 1, r), ASKDB_OK);
    assert_int_equal(llm_complete(s->m, &req, &s->r), ASKDB_OK);
    assert_string_equal(r[0].text, "SELECT 4;");
    assert_string_equal(s->r.text, "SELECT 5;");
    llm_reply_free(&r[0]);

    /* The second call fails: the first reply is kept, the second says
    ** it failed and the third was not asked. */
    c.calls = 0;
    c.fail_at = 2;
    assert_int_equal(llm_complete_n(s->m, &req, 3, r), ASKDB_OK);
    assert_int_equal(c.calls, 2);
    assert_non_null(r[0].text);
    assert_int_equal(r[0].failed, 0);
    assert_null(r[1].text);
    assert_int_equal(r[1].failed, 1);
    assert_null(r[2].text);
    assert_int_equal(r[2].failed, 2);
    assert_string_equal(llm_errmsg(s->m),
                        "custom model callback failed (it returned 5)");
    llm_reply_free(&r[0]);
    /* The first call fails: nothing is kept, the call fails. */
    c.calls = 0;
    c.fail_at = 1;
    assert_int_equal(llm_complete_n(s->m, &req, 3, r), ASKDB_ERR_LLM);
    assert_int_equal(c.calls, 1);
    for (i = 0; i < 3; i++)
        assert_null(r[i].text);

    assert_int_equal(llm_complete_n(s->m, &req, 0, r), ASKDB_ERR_USAGE);
    assert_string_equal(llm_errmsg(s->m), "asked for 0 replies (at least 1)");
    assert_int_equal(llm_complete_n(NULL, &req, 2, r), ASKDB_ERR_USAGE);
    assert_null(r[0].text);
}

static void complete_n_openai_sends_one_request_per_seed(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    struct llm_reply r[3];
    json_t *log;
    int i;

    fake_start(&s->f, "[{\"content\":\"SELECT 1;\"},"
                      "{\"content\":\"SELECT 2;\","
                      "\"usage\":{\"prompt_tokens\":9,"
                      "\"completion_tokens\":4}},"
                      "{\"content\":\"SELECT 3;\"},"
                      "{\"content\":\"one\"},"
                      "{\"content\":\"two\"},"
                      "{\"content\":\"single\"},"
                      "{\"content\":\"ok\"},"
                      "{\"status\":400}]");
    openai_cfg(s, s->f.base, NULL);
    s->cfg.stream = 1;
    open_model(s);
    req.temperature = 0;
    req.alt_temperature = 0.5;
    req.seed = 7;
    assert_int_equal(llm_complete_n(s->m, &req, 3, r), ASKDB_OK);
    assert_string_equal(r[0].text, "SELECT 1;");
    assert_string_equal(r[1].text, "SELECT 2;");
    assert_string_equal(r[2].text, "SELECT 3;");
    assert_int_equal(r[1].prompt_tokens, 9);
    assert_int_equal(r[1].completion_tokens, 4);
    for (i = 0; i < 3; i++) {
        assert_int_equal(r[i].http_status, 200);
        assert_true(r[i].ms > 0 && r[i].ms == r[0].ms);
        llm_reply_free(&r[i]);
    }
    /* Only the first reply streams. */
    assert_string_equal(s->tok.text, "SELECT 1;");

    /* No seed asked for: reply 0 sends none, the others 1, 2, ...; the
    ** default temperature for the others. */
    req.seed = -1;
    req.alt_temperature = 0;
    assert_int_equal(llm_complete_n(s->m, &req, 2, r), ASKDB_OK);
    assert_string_equal(r[0].text, "one");
    assert_string_equal(r[1].text, "two");
    llm_reply_free(&r[0]);
    llm_reply_free(&r[1]);

    /* n = 1: one plain request, as llm_complete sends it. */
    assert_int_equal(llm_complete_n(s->m, &req, 1, r), ASKDB_OK);
    assert_string_equal(r[0].text, "single");
    llm_reply_free(&r[0]);

    /* A later request failing costs its reply only. */
    assert_int_equal(llm_complete_n(s->m, &req, 2, r), ASKDB_OK);
    assert_string_equal(r[0].text, "ok");
    assert_null(r[1].text);
    assert_int_equal(r[1].failed, 1);
    assert_int_equal(r[1].http_status, 400);
    llm_reply_free(&r[0]);

    log = fake_log(&s->f);
    assert_int_equal(json_array_size(log), 8);
#define BODY(k) json_object_get(json_array_get(log, k), "body")
    assert_json(json_object_get(BODY(0), "temperature"), "0.0");
    assert_json(json_object_get(BODY(0), "seed"), "7");
    assert_json(json_object_get(BODY(1), "temperature"), "0.5");
    assert_json(json_object_get(BODY(1), "seed"), "8");
    assert_json(json_object_get(BODY(2), "temperature"), "0.5");
    assert_json(json_object_get(BODY(2), "seed"), "9");
    assert_null(json_object_get(BODY(3), "seed"));
    assert_json(json_object_get(BODY(4), "temperature"), "0.7");
    assert_json(json_object_get(BODY(4), "seed"), "1");
    assert_json(json_object_get(BODY(5), "temperature"), "0.0");
    assert_null(json_object_get(BODY(5), "seed"));
    for (i = 0; i < 8; i++)
        assert_json(json_object_get(BODY(i), "stream"), "true");
#undef BODY
    json_decref(log);
}

/* on_end for complete_n: which replies it was told of. */
static int told_of(void *ud, int i, const char *text, int pending)
{
    int *told = ud;

    (void)text;
    (void)pending;
    *told |= 1 << i;
    return 0;
}

/* One call a reply (HTTP): a reply cut at max_tokens is not told to
** on_end as ended, as the local model's cut ones are not. */
static void complete_n_does_not_tell_a_cut_reply_as_ended(void **ts)
{
    struct state *s = *ts;
    struct llm_request req = basic_request(s);
    struct llm_reply r[2];
    int told = 0, i;

    fake_start(&s->f, "[{\"content\":\"SELECT a FROM t ORDER BY a\","
                      "\"finish_reason\":\"length\"},"
                      "{\"content\":\"SELECT 2;\"}]");
    openai_cfg(s, s->f.base, NULL);
    open_model(s);
    req.on_end = told_of;
    req.end_ud = &told;
    assert_int_equal(llm_complete_n(s->m, &req, 2, r), ASKDB_OK);
    assert_int_equal(r[0].cut, LLM_CUT_MAX_TOKENS);
    assert_int_equal(r[1].cut, 0);
    assert_int_equal(told, 2);
    for (i = 0; i < 2; i++)
        llm_reply_free(&r[i]);
}

static void candidate_seeds_and_temperatures(void **ts)
{
    struct llm_request req;

    (void)ts;
    memset(&req, 0, sizeof req);
    req.temperature = 0.1;
    req.seed = -1;
    assert_true(llm_candidate_temperature(&req, 0) == 0.1);
    assert_true(llm_candidate_temperature(&req, 2) == LLM_ALT_TEMPERATURE);
    req.alt_temperature = 1.2;
    assert_true(llm_candidate_temperature(&req, 1) == 1.2);
    assert_int_equal(llm_candidate_seed(&req, 0), -1);
    assert_int_equal(llm_candidate_seed(&req, 3), 3);
    req.seed = 40;
    assert_int_equal(llm_candidate_seed(&req, 0), 40);
    assert_int_equal(llm_candidate_seed(&req, 2), 42);
    req.seed = 2147483647;
    assert_int_equal(llm_candidate_seed(&req, 1), 0);   /* stays >= 0 */
}

/* A server's body in an error message: trailing blanks dropped, control
** characters as spaces, at most 200 bytes cut between characters. */
static void snippet_is_cut_between_characters(void **ts)
{
    char body[300];
    struct buf m;

    (void)ts;
    memset(body, 'a', sizeof body);
    memcpy(body + 199, "\xc3\xa9", 2);   /* an e-acute over byte 200 */
    buf_init(&m, 0);
    http_put_snippet(&m, body, sizeof body);
    assert_int_equal(m.len, 199 + 3);
    assert_memory_equal(m.data + 196, "aaa...", 7);
    buf_reset(&m);
    http_put_snippet(&m, "no\tsuch \xc3\xa9 \n\r\t ", 15);
    assert_string_equal(m.data, "no such \xc3\xa9");
    buf_free(&m);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(openai_returns_content_and_usage),
        T(a_parameter_the_model_refuses_is_left_out),
        T(openai_streams_pieces_in_order),
        T(stream_ending_without_its_marker_is_an_error),
        T(anthropic_stream_without_message_stop_is_an_error),
        T(body_shorter_than_content_length_is_an_error),
        T(json_body_cut_short_is_retried),
        T(invalid_json_body_is_not_blamed_on_the_url),
        T(events_labelled_json_are_read_as_a_stream),
        T(nul_in_reply_text_is_kept_as_a_replacement),
        T(openai_null_content_or_non_json_is_an_error),
        T(reply_cut_before_any_text_comes_back_cut_and_empty),
        T(reply_with_no_content_says_how_it_ended),
        T(a_finished_reply_with_no_text_is_an_empty_reply),
        T(anthropic_refuses_a_temperature_over_1_at_once),
        T(retries_429_then_succeeds_honouring_retry_after),
        T(retry_after_ms_wins_over_retry_after),
        T(retries_408_and_5xx_then_succeeds),
        T(retry_after_longer_than_the_time_left_is_said_as_such),
        T(key_hint_names_the_vendor_variable_only_for_its_host),
        T(does_not_retry_401_and_message_names_url_and_key_hint),
        T(key_is_redacted_before_any_cut),
        T(url_credentials_are_never_shown),
        T(html_error_page_is_told_by_its_title),
        T(not_found_names_path_and_model),
        T(redirect_names_its_location_and_is_not_followed),
        T(gives_up_after_n_retries_on_503),
        T(gives_up_after_n_retries_on_429_saying_rate_limited),
        T(connection_refused_is_unreachable),
        T(proxy_refusal_is_the_proxys_and_not_retried),
        T(proxy_down_or_unresolvable_is_the_proxys),
        T(proxy_failures_on_the_way_name_the_proxy),
        T(proxy_unavailable_to_connect_is_retried),
        T(ambiguous_proxy_password_never_shows),
        T(connection_reset_is_retried),
        T(connection_reset_without_retries_is_unreachable),
        T(timeout_is_reported),
        T(timeout_in_a_stream_says_the_reply_was_coming),
        T(cancel_stops_a_slow_request_at_once),
        T(stream_reads_split_lines_and_skips_keepalives),
        T(stream_event_that_is_not_json_fails_the_reply),
        T(stream_garbled_before_any_text_is_retried),
        T(unlabelled_stream_cut_or_garbled_before_text_is_retried),
        T(stream_garbled_after_text_no_one_saw_is_retried),
        T(stream_cut_mid_reply_is_not_retried),
        T(anthropic_sends_system_separately_and_reads_text),
        T(anthropic_streams),
        T(anthropic_base_without_a_path_gets_v1),
        T(anthropic_stream_error_event_is_reported),
        T(anthropic_stream_overloaded_before_text_is_retried),
        T(openai_reply_stopped_at_max_tokens_comes_back_cut),
        T(anthropic_reply_stopped_at_max_tokens_comes_back_cut),
        T(provider_choice_rules),
        T(http_providers_require_a_model_and_http_url),
        T(malformed_url_is_a_usage_error),
        T(endpoint_urls_are_built_from_the_base),
        T(custom_callback_reply_and_failure),
        T(complete_n_custom_calls_the_callback_once_per_reply),
        T(complete_n_openai_sends_one_request_per_seed),
        T(complete_n_does_not_tell_a_cut_reply_as_ended),
        T(candidate_seeds_and_temperatures),
        cmocka_unit_test(snippet_is_cut_between_characters),
    };
    test_filter_from_env();

    /* Fast backoff; local servers only (no proxy in between). */
    setenv("ASKDB_RETRY_BASE_MS", "1", 1);
    clear_proxies();
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
