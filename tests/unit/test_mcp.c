/* test_mcp.c - the MCP message handler (src/mcp/mcp.c) without a
** transport: JSON-RPC errors, the lifecycle, version negotiation, a tool
** call with progress, cancellation before a call starts. */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mcp/mcp.h"
#include "scripted.h"
#include "testutil.h"

/* What the handler emitted: each message parsed, in order. */
struct out {
    json_t *msgs;
    int responses;
};

static void capture(void *ud, enum mcp_out kind, const char *json,
                    size_t len)
{
    struct out *o = ud;
    json_t *j = json_loadb(json, len, JSON_ALLOW_NUL, NULL);

    assert_non_null(j);
    assert_null(memchr(json, '\n', len));
    o->responses += kind == MCP_OUT_RESPONSE;
    json_array_append_new(o->msgs, j);
}

struct fixture {
    struct script script;
    struct mcp_server *srv;
    struct mcp_session *s;
    struct out out;
};

/* Initialize f's session with revision 2025-11-25 and forget its answer:
** a session takes no request but ping before initialize. */
static void initialize(struct fixture *f)
{
    static const char line[] =
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
        "\"params\":{\"protocolVersion\":\"2025-11-25\"}}";

    json_array_clear(f->out.msgs);
    f->out.responses = 0;
    mcp_handle(f->s, line, strlen(line), capture, &f->out);
    assert_int_equal(f->out.responses, 1);
    assert_non_null(json_object_get(json_array_get(f->out.msgs, 0),
                                    "result"));
    json_array_clear(f->out.msgs);
    f->out.responses = 0;
}

/* An initialized session over the database at path, the model scripted
** with replies, statements stopped after timeout_ms (0: the default). */
static struct fixture *fixture_at(const char *path,
                                  const char *const *replies,
                                  int timeout_ms)
{
    struct fixture *f = calloc(1, sizeof *f);
    askdb_config cfg = askdb_config_default();
    const char *paths[1] = {path}, *names[1] = {NULL};
    char err[512];

    assert_non_null(f);
    f->script.replies = replies;
    cfg.llm_fn = scripted;
    cfg.llm_ud = &f->script;
    cfg.question_check = 0;
    if (timeout_ms)
        cfg.query_timeout_ms = timeout_ms;
    assert_int_equal(mcp_server_new(&cfg, 1, names, paths, &f->srv, err,
                                    sizeof err), ASKDB_OK);
    f->s = mcp_session_new(f->srv);
    assert_non_null(f->s);
    f->out.msgs = json_array();
    initialize(f);
    return f;
}

/* A session over examples/shop.db (named "shop"). */
static struct fixture *fixture_new(const char *const *replies)
{
    return fixture_at(testdb_shop(), replies, 0);
}

static void fixture_free(struct fixture *f)
{
    mcp_session_free(f->s);
    mcp_server_free(f->srv);
    json_decref(f->out.msgs);
    free(f);
}

static void send_line(struct fixture *f, const char *line)
{
    mcp_handle(f->s, line, strlen(line), capture, &f->out);
}

/* The last message emitted. */
static json_t *last(struct fixture *f)
{
    size_t n = json_array_size(f->out.msgs);

    assert_true(n > 0);
    return json_array_get(f->out.msgs, n - 1);
}

/* The result of the last response (a tools/call's). */
static json_t *last_result(struct fixture *f)
{
    json_t *r = json_object_get(last(f), "result");

    assert_non_null(r);
    return r;
}

/* The text of a tool result's first content block. */
static const char *result_text(json_t *r)
{
    return json_string_value(json_object_get(
        json_array_get(json_object_get(r, "content"), 0), "text"));
}

/* Call tool with args (a JSON object's text) as request id 1. */
static void call_tool(struct fixture *f, const char *tool, const char *args)
{
    char *line;
    size_t n = strlen(tool) + strlen(args) + 200;

    line = malloc(n);
    assert_non_null(line);
    snprintf(line, n, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
             "\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":"
             "%s}}", tool, args);
    send_line(f, line);
    free(line);
}

/* Cell [row][col] of a rows result's structuredContent. */
static json_t *cell(json_t *result, size_t row, size_t col)
{
    return json_array_get(json_array_get(json_object_get(json_object_get(
        result, "structuredContent"), "rows"), row), col);
}

static int error_code(json_t *m)
{
    return (int)json_integer_value(
        json_object_get(json_object_get(m, "error"), "code"));
}

static void malformed_messages_get_errors_and_notifications_nothing(void **st)
{
    struct fixture *f = fixture_new(NULL);

    (void)st;
    send_line(f, "{not json");
    assert_int_equal(error_code(last(f)), -32700);
    assert_true(json_is_null(json_object_get(last(f), "id")));
    send_line(f, "{}");
    assert_int_equal(error_code(last(f)), -32600);
    send_line(f, "[]");
    assert_int_equal(error_code(last(f)), -32600);
    /* Valid JSON that is not an object: not a request, not a parse error. */
    send_line(f, "42");
    assert_int_equal(error_code(last(f)), -32600);
    send_line(f, "\"str\"");
    assert_int_equal(error_code(last(f)), -32600);
    send_line(f, "null");
    assert_int_equal(error_code(last(f)), -32600);
    assert_true(json_is_null(json_object_get(last(f), "id")));
    send_line(f, "42 43");
    assert_int_equal(error_code(last(f)), -32700);
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}");
    assert_int_equal(error_code(last(f)), -32600);
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x/y\"}");
    assert_int_equal(error_code(last(f)), -32601);
    assert_string_equal(json_string_value(json_object_get(last(f), "id")),
                        "a");
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"drop_everything\"}}");
    assert_int_equal(error_code(last(f)), -32602);
    assert_int_equal(f->out.responses, 10);
    /* Notifications, known or not, and a stray response: no reply. */
    send_line(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                 "initialized\"}");
    send_line(f, "{\"jsonrpc\":\"2.0\",\"method\":\"x/y\"}");
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}");
    assert_int_equal(json_array_size(f->out.msgs), 10);
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
    assert_true(json_is_object(json_object_get(last(f), "result")));
    assert_int_equal(json_object_size(json_object_get(last(f), "result")), 0);
    fixture_free(f);
}

/*
** A message over MCP_MAX_MESSAGE is refused (-32600, id null) before a
** byte of it is read: its text here is memory that may not be read at
** all, so parsing it before the refusal faults. Nor is a text that is
** not JSON told apart (-32700): the size decides alone.
*/
static void a_message_over_the_limit_is_refused_unread(void **st)
{
    struct fixture *f = fixture_new(NULL);
    size_t len = MCP_MAX_MESSAGE + 1;
    void *text = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                      0);
    json_t *e;

    (void)st;
    assert_true(text != MAP_FAILED);
    mcp_handle(f->s, text, len, capture, &f->out);
    assert_int_equal(json_array_size(f->out.msgs), 1);
    assert_int_equal(error_code(last(f)), -32600);
    assert_true(json_is_null(json_object_get(last(f), "id")));
    e = json_object_get(last(f), "error");
    assert_string_equal(json_string_value(json_object_get(e, "message")),
                        "message over 4 MiB: send less at once");
    assert_int_equal(munmap(text, len), 0);
    /* The session reads on. */
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
    assert_non_null(json_object_get(last(f), "result"));
    fixture_free(f);
}

/*
** Before initialize a request other than ping is refused (-32600, saying
** to send initialize first) and a notification ignored; a stateless one
** (2026-07-28: _meta names the revision) needs no initialize.
*/
static void requests_before_initialize_are_refused(void **st)
{
    struct fixture *f = fixture_new(NULL);
    json_t *e;

    (void)st;
    mcp_session_free(f->s);
    f->s = mcp_session_new(f->srv);
    assert_non_null(f->s);
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    assert_int_equal(error_code(last(f)), -32600);
    assert_int_equal(json_integer_value(json_object_get(last(f), "id")), 1);
    e = json_object_get(last(f), "error");
    assert_string_equal(json_string_value(json_object_get(e, "message")),
                        "not initialized: send initialize first (only ping "
                        "may come before it)");
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    assert_non_null(json_object_get(last(f), "result"));
    send_line(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                 "initialized\"}");
    assert_int_equal(json_array_size(f->out.msgs), 2);
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\","
                 "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
                 "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
                 "clientCapabilities\":{}}}}");
    assert_non_null(json_object_get(last_result(f), "tools"));
    initialize(f);
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}");
    assert_non_null(json_object_get(last_result(f), "tools"));
    fixture_free(f);
}

static void initialize_negotiates_the_version(void **st)
{
    static const struct {
        const char *asked, *answered;
    } cases[] = {{"2024-11-05", "2024-11-05"}, {"2025-03-26", "2025-03-26"},
                 {"2025-06-18", "2025-06-18"}, {"2025-11-25", "2025-11-25"},
                 {"2026-07-28", "2025-11-25"}, {"2099-01-01", "2025-11-25"}};
    struct fixture *f = fixture_new(NULL);
    char line[300], known[100];
    json_t *r, *info;
    size_t i;

    (void)st;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* A session is initialized once: a new one for each. */
        mcp_session_free(f->s);
        f->s = mcp_session_new(f->srv);
        assert_non_null(f->s);
        snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
                 "\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                 "\"%s\"}}", i, cases[i].asked);
        send_line(f, line);
        r = json_object_get(last(f), "result");
        assert_string_equal(json_string_value(json_object_get(
                                r, "protocolVersion")), cases[i].answered);
        /* serverInfo.description is 2025-11-25's: older revisions' clients
        ** get the serverInfo they know. */
        info = json_object_get(r, "serverInfo");
        assert_string_equal(json_string_value(json_object_get(info, "name")),
                            "askdb");
        assert_int_equal(json_object_get(info, "description") != NULL,
                         strcmp(cases[i].answered, "2025-11-25") == 0);
    }
    /* Another initialize is refused and changes nothing. */
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\","
                 "\"params\":{\"protocolVersion\":\"2024-11-05\"}}");
    assert_int_equal(error_code(last(f)), -32600);
    assert_int_equal(json_integer_value(json_object_get(last(f), "id")), 9);
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":"
                 "\"tools/list\"}");
    r = json_array_get(json_object_get(last_result(f), "tools"), 0);
    assert_non_null(json_object_get(r, "outputSchema"));   /* not 2024's */
    /* What the HTTP transport checks MCP-Protocol-Version against. */
    assert_true(mcp_version_known("2025-11-25"));
    assert_true(mcp_version_known("2024-11-05"));
    assert_false(mcp_version_known("2026-07-28"));
    assert_false(mcp_version_known(NULL));
    mcp_versions_text(known, sizeof known);
    assert_string_equal(known,
                        "2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05");
    mcp_versions_text(known, 12);
    assert_string_equal(known, "2025-11-25,");
    fixture_free(f);
}

/* The progress of an ask, to a token that is an integer or, as JSON-RPC's
** numbers may be, a real (4.5 got no progress at all). */
static void ask_reports_progress_then_answers(void **st)
{
    static const char *const replies[] = {
        "```sql\nSELECT count(*) AS n FROM customers\n```", NULL};
    static const char *const tokens[] = {"42", "4.5"};
    struct fixture *f;
    json_t *m, *sc, *tok, *want;
    size_t i, k, nprog;
    char line[300];

    (void)st;
    for (k = 0; k < 2; k++) {
        f = fixture_new(replies);
        snprintf(line, sizeof line,
                 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"ask\",\"arguments\":{\"question\":"
                 "\"How many customers?\"},\"_meta\":{\"progressToken\":"
                 "%s}}}", tokens[k]);
        send_line(f, line);
        assert_int_equal(f->out.responses, 1);
        want = json_loads(tokens[k], JSON_DECODE_ANY, NULL);
        nprog = 0;
        json_array_foreach(f->out.msgs, i, m) {
            if (i + 1 == json_array_size(f->out.msgs))
                break;
            assert_string_equal(json_string_value(json_object_get(m,
                                    "method")), "notifications/progress");
            tok = json_object_get(json_object_get(m, "params"),
                                  "progressToken");
            assert_true(json_equal(tok, want));
            nprog++;
        }
        json_decref(want);
        assert_true(nprog >= 3);
        sc = json_object_get(json_object_get(last(f), "result"),
                             "structuredContent");
        assert_string_equal(json_string_value(json_object_get(sc, "sql")),
                            "SELECT count(*) AS n FROM customers");
        assert_int_equal(json_integer_value(json_array_get(json_array_get(
                             json_object_get(sc, "rows"), 0), 0)), 60);
        assert_int_equal(f->script.calls, 1);
        fixture_free(f);
    }
}

static void a_call_cancelled_before_it_runs_gets_no_response(void **st)
{
    static const char *const replies[] = {"```sql\nSELECT 1\n```", NULL};
    static const char call[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\","
        "\"params\":{\"name\":\"ask\",\"arguments\":{\"question\":\"q?\"}}}";
    struct fixture *f = fixture_new(replies);
    struct mcp_msg *m;

    (void)st;
    m = mcp_parse(f->s, call, strlen(call), capture, &f->out);
    assert_non_null(m);
    assert_true(mcp_msg_slow(m));
    /* The same id again while the first is in flight: refused. */
    send_line(f, call);
    assert_int_equal(error_code(last(f)), -32600);
    send_line(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                 "cancelled\",\"params\":{\"requestId\":\"c1\"}}");
    mcp_dispatch(f->s, m, capture, &f->out);
    assert_int_equal(json_array_size(f->out.msgs), 1);
    assert_int_equal(f->script.calls, 0);
    fixture_free(f);
}

/*
** The test is linked with --wrap=askdb_agent_ask_opts (Makefile): the
** ask tool's call of it comes here. When wrap_line is set, it is handled
** first, on the asking thread, after tool_ask() looked at the call's
** cancelled flag and before the agent starts its question afresh: the
** window a client's cancel could fall in unseen.
*/
askdb_status __real_askdb_agent_ask_opts(askdb_agent *ag, const char *q,
                                         const askdb_ask_options *opts,
                                         askdb_answer **out);
askdb_status __wrap_askdb_agent_ask_opts(askdb_agent *ag, const char *q,
                                         const askdb_ask_options *opts,
                                         askdb_answer **out);
static struct fixture *wrap_f;
static const char *wrap_line;

askdb_status __wrap_askdb_agent_ask_opts(askdb_agent *ag, const char *q,
                                         const askdb_ask_options *opts,
                                         askdb_answer **out)
{
    if (wrap_line) {
        send_line(wrap_f, wrap_line);
        wrap_line = NULL;
    }
    return __real_askdb_agent_ask_opts(ag, q, opts, out);
}

/* A cancel that comes just before the question starts stops it before
** its model call, and the call gets no response: the agent's fresh start
** wiped the cancel, so the ask ran to its end. */
static void a_cancel_just_before_the_question_stops_it(void **st)
{
    static const char *const replies[] = {"```sql\nSELECT 1\n```", NULL};
    static const char call[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"c2\",\"method\":\"tools/call\","
        "\"params\":{\"name\":\"ask\",\"arguments\":{\"question\":\"q?\"}}}";
    struct fixture *f = fixture_new(replies);
    struct mcp_msg *m;

    (void)st;
    /* An ask first, so that the agent exists and the next call reuses it. */
    call_tool(f, "ask", "{\"question\":\"one?\"}");
    assert_false(json_is_true(json_object_get(last_result(f), "isError")));
    assert_int_equal(f->script.calls, 1);
    f->script.next = 0;
    f->script.calls = 0;
    json_array_clear(f->out.msgs);
    m = mcp_parse(f->s, call, strlen(call), capture, &f->out);
    assert_non_null(m);
    wrap_f = f;
    wrap_line = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                "cancelled\",\"params\":{\"requestId\":\"c2\"}}";
    mcp_dispatch(f->s, m, capture, &f->out);
    assert_null(wrap_line);
    assert_int_equal(f->script.calls, 0);
    assert_int_equal(json_array_size(f->out.msgs), 0);
    call_tool(f, "ask", "{\"question\":\"again?\"}");
    assert_false(json_is_true(json_object_get(last_result(f), "isError")));
    assert_int_equal(f->script.calls, 1);
    fixture_free(f);
}

/* A NUL inside a text value is data: it comes back as "\u0000" in the
** rows, from execute_sql and from ask. */
static void text_with_a_nul_comes_back_whole(void **st)
{
    static const char *const replies[] = {
        "```sql\nSELECT 'a' || char(0) || 'b' AS x\n```", NULL};
    struct fixture *f = fixture_new(replies);
    json_t *r;

    (void)st;
    call_tool(f, "execute_sql",
              "{\"sql\":\"SELECT 'a' || char(0) || 'b' AS x\"}");
    r = last_result(f);
    assert_false(json_is_true(json_object_get(r, "isError")));
    assert_int_equal(json_string_length(cell(r, 0, 0)), 3);
    assert_memory_equal(json_string_value(cell(r, 0, 0)), "a\0b", 3);
    assert_non_null(strstr(result_text(r), "\"a\\u0000b\""));
    call_tool(f, "ask", "{\"question\":\"x?\"}");
    r = last_result(f);
    assert_false(json_is_true(json_object_get(r, "isError")));
    assert_int_equal(json_string_length(cell(r, 0, 0)), 3);
    assert_memory_equal(json_string_value(cell(r, 0, 0)), "a\0b", 3);
    fixture_free(f);
}

/* The tool result's first text starts with prefix. */
static void assert_tool_error(struct fixture *f, const char *prefix)
{
    json_t *r = last_result(f);

    assert_true(json_is_true(json_object_get(r, "isError")));
    assert_true(strncmp(result_text(r), prefix, strlen(prefix)) == 0);
}

/* A statement is at most MCP_MAX_SQL characters, as /api/sql takes: the
** result holds it (twice from 2025-06-18 on), and one of megabytes made
** a result over the cap, cut to no rows with advice to select fewer. The
** limit counts characters: 65,536 two-byte ones run. */
static void a_statement_over_the_limit_is_refused_saying_so(void **st)
{
    static const char head[] = "{\"sql\":\"SELECT 1 AS n -- ";
    struct fixture *f = fixture_new(NULL);
    size_t room = 65536 - (sizeof "SELECT 1 AS n -- " - 1), i;
    char *args = malloc(sizeof head + 2 * (room + 1) + 8), *p;
    json_t *tools, *t;
    int extra;

    (void)st;
    assert_non_null(args);
    for (extra = 0; extra <= 1; extra++) {
        p = args + sprintf(args, "%s", head);
        for (i = 0; i < room + (size_t)extra; i++)
            p += sprintf(p, "\xc3\xa9");
        strcpy(p, "\"}");
        call_tool(f, "execute_sql", args);
        if (!extra)
            assert_int_equal(json_integer_value(cell(last_result(f), 0, 0)),
                             1);
        else
            assert_tool_error(f, "'sql' is 65537 characters; a statement "
                                 "may have at most 65536");
        call_tool(f, "explain_sql", args);
        if (!extra)
            assert_false(json_is_true(json_object_get(last_result(f),
                                                      "isError")));
        else
            assert_tool_error(f, "'sql' is 65537 characters");
    }
    free(args);
    /* tools/list says so. */
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    tools = json_object_get(json_object_get(last(f), "result"), "tools");
    json_array_foreach(tools, i, t) {
        const char *name = json_string_value(json_object_get(t, "name"));
        json_t *sql = json_object_get(json_object_get(json_object_get(
            t, "inputSchema"), "properties"), "sql");

        if (strcmp(name, "execute_sql") == 0 ||
            strcmp(name, "explain_sql") == 0)
            assert_int_equal(json_integer_value(json_object_get(
                                 sql, "maxLength")), 65536);
    }
    fixture_free(f);
}

/* A question of nothing but white space is refused before any model
** call, as an empty one is. */
static void a_blank_question_is_refused(void **st)
{
    static const char *const replies[] = {"```sql\nSELECT 1\n```", NULL};
    struct fixture *f = fixture_new(replies);

    (void)st;
    call_tool(f, "ask", "{\"question\":\"\"}");
    assert_tool_error(f, "'question' is needed");
    call_tool(f, "ask", "{\"question\":\" \\t\\n \"}");
    assert_tool_error(f, "'question' is needed");
    assert_int_equal(f->script.calls, 0);
    fixture_free(f);
}

/* A request may hold "\u0000" anywhere: it is read (not a parse error
** with a null id, which leaves the client waiting), and a string that
** would be read as C text is refused whole rather than cut at the NUL
** into another statement, question, name or method. */
static void a_nul_in_a_request_is_read_and_never_cuts_text(void **st)
{
    static const char *const replies[] = {"```sql\nSELECT 1\n```", NULL};
    struct fixture *f = fixture_new(replies);
    json_t *id;

    (void)st;
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0000b\",\"method\":"
                 "\"ping\",\"params\":{\"pad\":\"\\u0000\"}}");
    id = json_object_get(last(f), "id");
    assert_int_equal(json_string_length(id), 3);
    assert_memory_equal(json_string_value(id), "a\0b", 3);
    assert_true(json_is_object(json_object_get(last(f), "result")));
    call_tool(f, "execute_sql", "{\"sql\":\"SELECT 1\\u0000; DELETE FROM "
                                "customers\"}");
    assert_tool_error(f, "'sql' holds a NUL character");
    call_tool(f, "explain_sql", "{\"sql\":\"SELECT 1\\u0000x\"}");
    assert_tool_error(f, "'sql' holds a NUL character");
    call_tool(f, "execute_sql", "{\"sql\":\"SELECT 1\",\"database\":"
                                "\"shop\\u0000x\"}");
    assert_tool_error(f, "'database' holds a NUL character");
    call_tool(f, "search_objects", "{\"pattern\":\"cust\\u0000x\"}");
    assert_tool_error(f, "'pattern' holds a NUL character");
    call_tool(f, "ask", "{\"question\":\"how many\\u0000?\"}");
    assert_tool_error(f, "'question' holds a NUL character");
    call_tool(f, "ask", "{\"question\":\"q?\",\"hint\":\"\\u0000\"}");
    assert_tool_error(f, "'hint' holds a NUL character");
    assert_int_equal(f->script.calls, 0);
    call_tool(f, "execute_sql\\u0000x", "{\"sql\":\"SELECT 1\"}");
    assert_int_equal(error_code(last(f)), -32602);
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\\u0000x\"}");
    assert_int_equal(error_code(last(f)), -32600);
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"logging/"
                 "setLevel\",\"params\":{\"level\":\"debug\\u0000x\"}}");
    assert_int_equal(error_code(last(f)), -32602);
    send_line(f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/"
                 "read\",\"params\":{\"uri\":\"askdb://shop/schema\\u0000"
                 "x\"}}");
    assert_int_equal(error_code(last(f)), -32602);
    /* A NUL where nothing reads it as C text is no matter. */
    call_tool(f, "execute_sql", "{\"sql\":\"SELECT 1 AS one\",\"x\":"
                                "\"\\u0000\"}");
    assert_int_equal(json_integer_value(cell(last_result(f), 0, 0)), 1);
    fixture_free(f);
}

/* Ask a question at log level `level` and list the levels of the log
** messages it sent, in order, comma-separated, into got. */
static void levels_logged(struct fixture *f, const char *level, char *got,
                          size_t n)
{
    char line[200];
    size_t i, from, used = 0;
    json_t *m;

    snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
             "\"logging/setLevel\",\"params\":{\"level\":\"%s\"}}", level);
    send_line(f, line);
    assert_true(json_is_object(json_object_get(last(f), "result")));
    from = json_array_size(f->out.msgs);
    call_tool(f, "ask", "{\"question\":\"How many customers?\"}");
    assert_false(json_is_true(json_object_get(last_result(f), "isError")));
    got[0] = '\0';
    for (i = from; i < json_array_size(f->out.msgs); i++) {
        m = json_array_get(f->out.msgs, i);
        if (strcmp(json_string_value(json_object_get(m, "method")) ?
                       json_string_value(json_object_get(m, "method")) : "",
                   "notifications/message") == 0)
            used += (size_t)snprintf(got + used, n - used, "%s%s",
                                     used ? "," : "",
                                     json_string_value(json_object_get(
                                         json_object_get(m, "params"),
                                         "level")));
    }
}

/* logging/setLevel L sends the messages at L and above (RFC 5424's
** order), not only at debug: a failed attempt is a warning, the answer
** info, the steps between debug. */
static void log_messages_at_and_above_the_set_level_are_sent(void **st)
{
    static const char *const replies[] = {
        "```sql\nSELECT nope FROM customers\n```",
        "```sql\nSELECT count(*) FROM customers\n```",
        "```sql\nSELECT nope FROM customers\n```",
        "```sql\nSELECT count(*) FROM customers\n```",
        "```sql\nSELECT nope FROM customers\n```",
        "```sql\nSELECT count(*) FROM customers\n```",
        "```sql\nSELECT nope FROM customers\n```",
        "```sql\nSELECT count(*) FROM customers\n```", NULL};
    struct fixture *f = fixture_new(replies);
    char got[2048];

    (void)st;
    levels_logged(f, "warning", got, sizeof got);
    assert_string_equal(got, "warning");
    levels_logged(f, "info", got, sizeof got);
    assert_string_equal(got, "warning,info");
    levels_logged(f, "error", got, sizeof got);
    assert_string_equal(got, "");
    levels_logged(f, "debug", got, sizeof got);
    assert_non_null(strstr(got, "debug,"));
    assert_non_null(strstr(got, ",warning,"));
    assert_true(strlen(got) > 5 &&
                strcmp(got + strlen(got) - 5, ",info") == 0);
    assert_int_equal(f->script.calls, 8);
    fixture_free(f);
}

/* The tables search_objects found, comma-separated, into got. */
static void tables_found(struct fixture *f, const char *pattern, char *got,
                         size_t n)
{
    char args[4096];
    json_t *o;
    size_t i, used = 0;

    snprintf(args, sizeof args, "{\"pattern\":\"%s\"}", pattern);
    call_tool(f, "search_objects", args);
    got[0] = '\0';
    json_array_foreach(json_object_get(json_object_get(last_result(f),
                                                       "structuredContent"),
                                       "objects"), i, o)
        used += (size_t)snprintf(got + used, n - used, "%s%s",
                                 used ? "," : "",
                                 json_string_value(
                                     json_object_get(o, "table")));
}

/* search_objects' globs: % and * any run, _ and ? one character, the
** whole name, case folded; and a pattern of many runs over a long name
** is answered at once (it used to backtrack exponentially, 20 s of CPU
** and more under the database's lock). */
static void search_globs_match_whole_names_in_linear_time(void **st)
{
    char dir[] = "/tmp/test_mcp.XXXXXX", path[64], name[61], sql[100];
    char pat[50], got[2048];
    struct fixture *f;
    struct timespec t0, t1;
    sqlite3 *db;
    int i;

    (void)st;
    f = fixture_new(NULL);
    tables_found(f, "ORDER%ITEMS", got, sizeof got);
    assert_string_equal(got, "order_items");
    tables_found(f, "cust?mers", got, sizeof got);
    assert_string_equal(got, "customers");
    tables_found(f, "*_items", got, sizeof got);
    assert_string_equal(got, "order_items");
    tables_found(f, "cust%", got, sizeof got);     /* customer_id too */
    assert_string_equal(got, "customers,orders,customer_revenue");
    tables_found(f, "o_d_r%", got, sizeof got);
    assert_string_equal(got, "orders,order_items,payments,customer_revenue");
    tables_found(f, "%tomer", got, sizeof got);
    assert_string_equal(got, "");
    tables_found(f, "c%s%s", got, sizeof got);
    assert_string_equal(got, "customers");
    fixture_free(f);

    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/long.db", dir);
    memset(name, 'a', 60);
    name[60] = '\0';
    snprintf(sql, sizeof sql, "CREATE TABLE %s (x)", name);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    f = fixture_at(path, NULL, 0);
    /* "%a" 20 times, then "%b": no match, after C(60, 20) tries before. */
    for (i = 0; i < 20; i++)
        memcpy(pat + 2 * i, "%a", 2);
    snprintf(pat + 40, sizeof pat - 40, "%%b");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tables_found(f, pat, got, sizeof got);
    assert_string_equal(got, "");
    pat[41] = 'a';
    tables_found(f, pat, got, sizeof got);
    assert_string_equal(got, name);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 2);
    fixture_free(f);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* A failed statement is advised to check names with search_objects only
** when a name is unknown; other errors say what the database said. */
static void only_unknown_names_are_sent_to_search_objects(void **st)
{
    static const char advice[] =
        " (check table and column names with search_objects)";
    static const struct {
        const char *tool, *sql, *text;
        int unknown_name;
    } cases[] = {
        {"execute_sql", "SELECT nope FROM customers",
         "no such column: nope", 1},
        {"explain_sql", "SELECT * FROM nope", "no such table: nope", 1},
        {"execute_sql", "SELEC 1", "near \"SELEC\": syntax error", 0},
        {"execute_sql", "SELECT abs(1, 2)",
         "wrong number of arguments to function abs()", 0},
    };
    struct fixture *f = fixture_new(NULL);
    size_t i, n = (size_t)3 << 20;
    char want[300], *args, *big;

    (void)st;
    big = malloc(n + 20);
    assert_non_null(big);
    memcpy(big, "SELECT '", 8);
    memset(big + 8, 'x', n);
    memcpy(big + 8 + n, "'", 2);
    for (i = 0; i <= sizeof cases / sizeof cases[0]; i++) {
        /* Last, a statement too big (3 MiB, over MCP_MAX_SQL): no name
        ** is wrong in it. */
        int last_case = i == sizeof cases / sizeof cases[0];
        json_t *a = json_pack("{s:s}", "sql",
                              last_case ? big : cases[i].sql);

        args = json_dumps(a, JSON_COMPACT);
        json_decref(a);
        call_tool(f, last_case ? "execute_sql" : cases[i].tool, args);
        free(args);
        snprintf(want, sizeof want, "%s%s",
                 last_case ? "'sql' is 3145737 characters; a statement "
                             "may have at most 65536" : cases[i].text,
                 !last_case && cases[i].unknown_name ? advice : "");
        assert_true(json_is_true(json_object_get(last_result(f),
                                                 "isError")));
        assert_string_equal(result_text(last_result(f)), want);
    }
    free(big);
    fixture_free(f);
}

struct dispatch {
    struct fixture *f;
    struct mcp_msg *m;
};

/* mcp_dispatch() on a thread of its own, as a transport runs a slow call. */
static void *dispatch_main(void *ud)
{
    struct dispatch *d = ud;

    mcp_dispatch(d->f->s, d->m, capture, &d->f->out);
    return NULL;
}

static double since_ms(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1000.0 +
           (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* notifications/cancelled stops a running execute_sql at once, not at the
** time limit (30 s here), and one cancelled before it starts runs
** nothing; either way no response, and the database runs the next
** statement as usual. */
static void a_cancelled_statement_stops_at_once(void **st)
{
    static const char endless[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"long\",\"method\":\"tools/call\","
        "\"params\":{\"name\":\"execute_sql\",\"arguments\":{\"sql\":"
        "\"WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) "
        "SELECT count(*) FROM r\"}}}";
    static const char cancel[] =
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
        "\"params\":{\"requestId\":\"long\"}}";
    static const char *const tools[] = {"execute_sql", "explain_sql"};
    struct fixture *f = fixture_at(testdb_shop(), NULL, 30000);
    struct timespec t0, pause = {0, 300 * 1000 * 1000};
    struct dispatch d;
    pthread_t th;
    char line[300];
    size_t i;

    (void)st;
    d.f = f;
    d.m = mcp_parse(f->s, endless, strlen(endless), capture, &f->out);
    assert_non_null(d.m);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(pthread_create(&th, NULL, dispatch_main, &d), 0);
    nanosleep(&pause, NULL);
    send_line(f, cancel);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(since_ms(&t0) < 3000);
    assert_int_equal(json_array_size(f->out.msgs), 0);
    call_tool(f, "execute_sql", "{\"sql\":\"SELECT 1\"}");
    assert_int_equal(json_integer_value(cell(last_result(f), 0, 0)), 1);
    /* Cancelled before it starts, whichever SQL tool. */
    for (i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":\"long\","
                 "\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                 "\"arguments\":{\"sql\":\"SELECT 2\"}}}", tools[i]);
        d.m = mcp_parse(f->s, line, strlen(line), capture, &f->out);
        assert_non_null(d.m);
        send_line(f, cancel);
        mcp_dispatch(f->s, d.m, capture, &f->out);
        assert_int_equal(json_array_size(f->out.msgs), 1);
    }
    call_tool(f, "execute_sql", "{\"sql\":\"SELECT 3\"}");
    assert_int_equal(json_integer_value(cell(last_result(f), 0, 0)), 3);
    fixture_free(f);
}

/* A call of line dispatched on a thread of its own, and whether it
** returned. */
struct waiter {
    struct dispatch d;
    pthread_t th;
    atomic_int done;
};

static void *waiter_main(void *ud)
{
    struct waiter *w = ud;

    dispatch_main(&w->d);
    atomic_store(&w->done, 1);
    return NULL;
}

/* A call that waits for the database's schema_lock (another call's first
** read of the schema holds it: here the test does) stops waiting when it
** is cancelled: it saw its cancel only once the read ahead of it ended,
** which may be --timeout later (a lock on the file). Each such call, a
** tool's and a resource's, gets no response. */
static void a_cancel_reaches_a_call_waiting_for_the_schema_lock(void **st)
{
    static const char *const lines[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":\"w0\",\"method\":\"tools/call\","
        "\"params\":{\"name\":\"search_objects\",\"arguments\":"
        "{\"pattern\":\"cust\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":\"w1\",\"method\":\"tools/call\","
        "\"params\":{\"name\":\"list_databases\",\"arguments\":{}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":\"w2\",\"method\":\"resources/read\","
        "\"params\":{\"uri\":\"askdb://shop/schema\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":\"w3\",\"method\":\"resources/read\","
        "\"params\":{\"uri\":\"askdb://shop/table/orders\"}}"};
    enum { N = sizeof lines / sizeof lines[0] };
    struct fixture *f = fixture_new(NULL);
    struct timespec t0, pause = {0, 200 * 1000 * 1000},
                        step = {0, 10 * 1000 * 1000};
    struct waiter w[N];
    char cancel[200];
    int i, all;

    (void)st;
    pthread_mutex_lock(&f->srv->dbs[0].schema_lock);
    for (i = 0; i < N; i++) {
        w[i].d.f = f;
        w[i].d.m = mcp_parse(f->s, lines[i], strlen(lines[i]), capture,
                             &f->out);
        assert_non_null(w[i].d.m);
        atomic_init(&w[i].done, 0);
        assert_int_equal(pthread_create(&w[i].th, NULL, waiter_main, &w[i]),
                         0);
    }
    nanosleep(&pause, NULL);
    for (i = 0; i < N; i++)
        assert_false(atomic_load(&w[i].done));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (i = 0; i < N; i++) {
        snprintf(cancel, sizeof cancel, "{\"jsonrpc\":\"2.0\",\"method\":"
                 "\"notifications/cancelled\",\"params\":{\"requestId\":"
                 "\"w%d\"}}", i);
        send_line(f, cancel);
    }
    /* The lock stays held meanwhile: up to 2 s for all to return. */
    do {
        nanosleep(&step, NULL);
        for (all = 1, i = 0; i < N; i++)
            all = all && atomic_load(&w[i].done);
    } while (!all && since_ms(&t0) < 2000);
    pthread_mutex_unlock(&f->srv->dbs[0].schema_lock);
    for (i = 0; i < N; i++)
        assert_int_equal(pthread_join(w[i].th, NULL), 0);
    assert_true(all);
    assert_int_equal(json_array_size(f->out.msgs), 0);
    call_tool(f, "search_objects", "{\"pattern\":\"cust\"}");
    assert_false(json_is_true(json_object_get(last_result(f), "isError")));
    fixture_free(f);
}

/* Every tool's text block is its structuredContent as JSON, as the spec
** asks and the README says: explain_sql's was the plan as indented
** lines. */
static void every_result_text_is_the_structured_content(void **st)
{
    static const char *const replies[] = {"```sql\nSELECT 1 AS one\n```",
                                          NULL};
    static const struct {
        const char *tool, *args;
    } calls[] = {
        {"list_databases", "{}"},
        {"search_objects", "{\"pattern\":\"cust\"}"},
        {"execute_sql", "{\"sql\":\"SELECT id FROM customers LIMIT 2\"}"},
        {"explain_sql",
         "{\"sql\":\"SELECT * FROM orders WHERE customer_id = 3\"}"},
        {"ask", "{\"question\":\"One?\"}"},
    };
    struct fixture *f = fixture_new(replies);
    json_t *r, *text;
    size_t i;

    (void)st;
    for (i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        call_tool(f, calls[i].tool, calls[i].args);
        r = last_result(f);
        assert_false(json_is_true(json_object_get(r, "isError")));
        text = json_loads(result_text(r), 0, NULL);
        assert_non_null(text);
        assert_true(json_equal(text, json_object_get(r,
                                                     "structuredContent")));
        json_decref(text);
    }
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(malformed_messages_get_errors_and_notifications_nothing),
        cmocka_unit_test(a_message_over_the_limit_is_refused_unread),
        cmocka_unit_test(requests_before_initialize_are_refused),
        cmocka_unit_test(initialize_negotiates_the_version),
        cmocka_unit_test(ask_reports_progress_then_answers),
        cmocka_unit_test(a_statement_over_the_limit_is_refused_saying_so),
        cmocka_unit_test(a_call_cancelled_before_it_runs_gets_no_response),
        cmocka_unit_test(a_cancel_just_before_the_question_stops_it),
        cmocka_unit_test(text_with_a_nul_comes_back_whole),
        cmocka_unit_test(a_nul_in_a_request_is_read_and_never_cuts_text),
        cmocka_unit_test(a_blank_question_is_refused),
        cmocka_unit_test(log_messages_at_and_above_the_set_level_are_sent),
        cmocka_unit_test(search_globs_match_whole_names_in_linear_time),
        cmocka_unit_test(only_unknown_names_are_sent_to_search_objects),
        cmocka_unit_test(a_cancelled_statement_stops_at_once),
        cmocka_unit_test(a_cancel_reaches_a_call_waiting_for_the_schema_lock),
        cmocka_unit_test(every_result_text_is_the_structured_content),
    };
    test_filter_from_env();

    return cmocka_run_group_tests(tests, NULL, NULL);
}
