/* test_mcp_http.c - askdb serve's /mcp (src/server/mcp_http.c) without a
** daemon: a POST taken as a stop begins is waited for by the stop, and
** a cancel is taken while the stop waits. */
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "mcp/mcp.h"
#include "mcp/server.h"
#include "server/mcp_http.h"
#include "scripted.h"
#include "testutil.h"

/*
** The test is linked with --wrap=mcp_in_read (Makefile): srv_mcp_post()'s
** reading of the body comes here, after its look at the stop and before
** the POST takes its session. When armed, a stop begins then, on a thread
** of its own, and is given 300 ms to end.
*/
void __real_mcp_in_read(struct mcp_in *in, const char *text, size_t len);
void __wrap_mcp_in_read(struct mcp_in *in, const char *text, size_t len);

static struct srv_mcp *armed;
static pthread_t stopper;
static atomic_int stopped, stopped_in_post;

static void *stop_main(void *ud)
{
    srv_mcp_stop(ud, 0);
    atomic_store(&stopped, 1);
    return NULL;
}

void __wrap_mcp_in_read(struct mcp_in *in, const char *text, size_t len)
{
    struct timespec pause = {0, 300 * 1000 * 1000};

    if (armed) {
        assert_int_equal(pthread_create(&stopper, NULL, stop_main, armed),
                         0);
        armed = NULL;
        nanosleep(&pause, NULL);
        atomic_store(&stopped_in_post, atomic_load(&stopped));
    }
    __real_mcp_in_read(in, text, len);
}

static const char init_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

/* An MCP server over the shop database whose model has nothing to say
** (script: the caller's, kept for the server's life), and its /mcp. */
static struct srv_mcp *new_mcp(struct script *script,
                               struct mcp_server **srv)
{
    static const char *const replies[] = {NULL};
    askdb_config cfg = askdb_config_default();
    const char *paths[1] = {testdb_shop()}, *names[1] = {NULL};
    struct srv_mcp *m;
    char err[512];

    memset(script, 0, sizeof *script);
    script->replies = replies;
    cfg.llm_fn = scripted;
    cfg.llm_ud = script;
    assert_int_equal(mcp_server_new(&cfg, 1, names, paths, srv, err,
                                    sizeof err), ASKDB_OK);
    m = srv_mcp_new(*srv, 8);
    assert_non_null(m);
    return m;
}

/* A stop that begins while a POST is past its look at the stop waits
** for it: the POST was counted only once it took its session, so the
** stop ended at once and the POST went on (on a stream's thread, past
** the freeing of the sessions, agents and model). */
static void a_stop_waits_for_a_post_taken_before_it(void **st)
{
    struct script script;
    struct mcp_server *srv;
    struct srv_mcp *m;
    struct srv_mcp_req q;
    struct MHD_Response *r;
    const char *why;
    char sid[40];
    int status;

    (void)st;
    m = new_mcp(&script, &srv);
    memset(&q, 0, sizeof q);
    q.body = init_body;
    q.len = strlen(init_body);
    q.conn_fd = -1;
    armed = m;
    r = srv_mcp_post(m, &q, &status, &why, sid);
    assert_false(atomic_load(&stopped_in_post));
    assert_int_equal(pthread_join(stopper, NULL), 0);
    assert_true(atomic_load(&stopped));
    if (r)
        MHD_destroy_response(r);
    /* Once the stop began, a POST gets 503. */
    r = srv_mcp_post(m, &q, &status, &why, sid);
    assert_null(r);
    assert_int_equal(status, 503);
    srv_mcp_free(m);
    mcp_server_free(srv);
}

/* The answer's status to body POSTed in session sid (NULL: none). */
static int post_status(struct srv_mcp *m, const char *sid, const char *body)
{
    struct srv_mcp_req q;
    struct MHD_Response *r;
    const char *why;
    char out[40];
    int status;

    memset(&q, 0, sizeof q);
    q.body = body;
    q.len = strlen(body);
    q.session = sid;
    q.conn_fd = -1;
    r = srv_mcp_post(m, &q, &status, &why, out);
    if (r)
        MHD_destroy_response(r);
    return status;
}

/* Once a stop began, a POST of notifications/cancelled alone is still
** taken (a client cancels a call the stop would wait for; it was 503,
** as every POST), any other gets 503; once the stop saw no POST left,
** a cancel gets 503 too. */
static void a_stop_takes_cancels_until_no_post_is_left(void **st)
{
    static const char ping[] =
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
    static const char cancel[] =
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
        "\"params\":{\"requestId\":3}}";
    struct script script;
    struct mcp_server *srv;
    struct srv_mcp *m;
    struct srv_mcp_req q;
    struct MHD_Response *r;
    const char *why;
    char sid[40];
    int status;

    (void)st;
    m = new_mcp(&script, &srv);
    memset(&q, 0, sizeof q);
    q.body = init_body;
    q.len = strlen(init_body);
    q.conn_fd = -1;
    r = srv_mcp_post(m, &q, &status, &why, sid);
    assert_non_null(r);
    MHD_destroy_response(r);
    assert_int_equal(status, 200);
    assert_true(sid[0] != '\0');
    srv_mcp_stop_opens(m);
    assert_int_equal(post_status(m, sid, ping), 503);
    assert_int_equal(post_status(m, NULL, cancel), 503);
    assert_int_equal(post_status(m, sid, cancel), 202);
    srv_mcp_stop(m, 0);
    assert_int_equal(post_status(m, sid, cancel), 503);
    srv_mcp_free(m);
    mcp_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_stop_waits_for_a_post_taken_before_it),
        cmocka_unit_test(a_stop_takes_cancels_until_no_post_is_left),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
