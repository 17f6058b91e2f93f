/* fuzz_mcp.c - libFuzzer harness for the MCP message handler (src/mcp/). */
#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "askdb.h"
#include "mcp/mcp.h"

/*
** The input is one message as a client would send it, handed over as
** libFuzzer's exact-size buffer with no NUL after it. It goes through
** mcp_handle() on one initialized session over a small database, so tools
** really run (statements through the guard with a short time limit, `ask`
** with a stub model), and on a session that never initializes. Whatever
** the input: every message out is one JSON-RPC 2.0 object (or, for a
** batch once a 2025-03-26 initialize set the session's revision, one
** array of them), at most one of them is a response, a response to a
** request with a valid id carries that id, and before initialize a
** request other than ping that does not name the stateless revision in
** its _meta gets an error. A broken invariant calls abort().
*/

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct mcp_server *srv;
static struct mcp_session *sess;     /* initialized */
static struct mcp_session *fresh;    /* never initialized */

struct seen {
    int responses;
    int error;               /* the response was an error */
    json_t *id;              /* the response's id (a copy) */
};

static int stub_model(void *ud, int n, const char *const *roles,
                      const char *const *contents, char **reply)
{
    (void)ud;
    (void)n;
    (void)roles;
    (void)contents;
    *reply = strdup("```sql\nSELECT a, b FROM t ORDER BY a\n```");
    return *reply ? 0 : 1;
}

static void check_emit(void *ud, enum mcp_out kind, const char *json,
                       size_t len)
{
    struct seen *s = ud;
    json_t *j = json_loadb(json, len, JSON_ALLOW_NUL, NULL), *v, *r;
    size_t i;

    if (memchr(json, '\n', len))
        abort();
    /* A batch's response (a session of 2025-03-26): a non-empty array of
    ** responses, sent as one. */
    if (json_is_array(j) && kind == MCP_OUT_RESPONSE) {
        if (json_array_size(j) == 0 || ++s->responses > 1)
            abort();
        json_array_foreach(j, i, r) {
            v = json_object_get(r, "jsonrpc");
            if (!json_is_string(v) ||
                strcmp(json_string_value(v), "2.0") != 0 ||
                !json_object_get(r, "result") == !json_object_get(r, "error"))
                abort();
        }
        json_decref(j);
        return;
    }
    if (!json_is_object(j))
        abort();
    v = json_object_get(j, "jsonrpc");
    if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
        abort();
    if (kind == MCP_OUT_RESPONSE) {
        if (++s->responses > 1)
            abort();
        if (!json_object_get(j, "result") == !json_object_get(j, "error"))
            abort();
        s->id = json_deep_copy(json_object_get(j, "id"));
        s->error = json_object_get(j, "error") != NULL;
    } else if (!json_is_string(json_object_get(j, "method"))) {
        abort();
    }
    json_decref(j);
}

static char dir[] = "/tmp/fuzz_mcp.XXXXXX";

/* The scratch database and its folder go at exit (SQLite's companion
** files too, should there be any): every run made one, and /tmp kept it. */
static void cleanup(void)
{
    static const char *const ext[] = {"", "-journal", "-wal", "-shm"};
    char path[96];
    size_t i;

    for (i = 0; i < sizeof ext / sizeof *ext; i++) {
        snprintf(path, sizeof path, "%s/db.sqlite%s", dir, ext[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* A session, initialized (with the latest revision, as a client that
** names one askdb does not speak gets) or not: a session takes no request
** but ping before initialize. */
static struct mcp_session *new_session(int init)
{
    static const char line[] =
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
        "\"params\":{\"protocolVersion\":\"latest\",\"capabilities\":{},"
        "\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"0\"}}}";
    struct mcp_session *m = mcp_session_new(srv);
    struct seen s = {0, 0, NULL};

    if (!m)
        abort();
    if (init) {
        mcp_handle(m, line, sizeof line - 1, check_emit, &s);
        if (s.responses != 1 || s.error)
            abort();
        json_decref(s.id);
    }
    return m;
}

/* Whether in is a request that a session not initialized must refuse:
** neither initialize nor ping, nor of the stateless revision (its
** params._meta names a protocol version: such a request has no
** initialize). */
static int refused_before_initialize(json_t *in)
{
    const char *method = json_string_value(json_object_get(in, "method"));
    json_t *id = json_object_get(in, "id"), *meta;

    meta = json_object_get(json_object_get(in, "params"), "_meta");
    return method && (json_is_string(id) || json_is_integer(id)) &&
           strcmp(method, "initialize") != 0 &&
           strcmp(method, "ping") != 0 &&
           !json_object_get(meta, "io.modelcontextprotocol/protocolVersion");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char path[64], err[256];
    const char *paths[1] = {path}, *names[1] = {"db"};
    askdb_config cfg = askdb_config_default();
    sqlite3 *db;

    (void)argc;
    (void)argv;
    if (!mkdtemp(dir))
        abort();
    atexit(cleanup);
    snprintf(path, sizeof path, "%s/db.sqlite", dir);
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db,
                     "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT);"
                     "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, NULL);"
                     "CREATE TABLE u (x INTEGER REFERENCES t(a), y REAL);"
                     "CREATE INDEX u_x ON u(x);"
                     "CREATE VIEW v AS SELECT b FROM t;",
                     NULL, NULL, NULL) != SQLITE_OK)
        abort();
    sqlite3_close(db);
    cfg.llm_fn = stub_model;
    cfg.query_timeout_ms = 200;
    cfg.in_process = 1; /* no askdb-exec beside the harness */
    cfg.max_rows = 50;
    cfg.max_attempts = 1;
    if (mcp_server_new(&cfg, 1, names, paths, &srv, err, sizeof err))
        abort();
    sess = new_session(1);
    fresh = new_session(0);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct seen s = {0, 0, NULL}, f = {0, 0, NULL};
    json_t *in, *id = NULL;
    const char *method;

    in = json_loadb((const char *)data, size, JSON_ALLOW_NUL, NULL);
    if (json_is_object(in))
        id = json_object_get(in, "id");
    /* An initialize opens a session of its own, as a client's does (a
    ** session takes one initialize): the inputs after it run under the
    ** revision it asks for, 2025-03-26's batches too. */
    method = json_string_value(json_object_get(in, "method"));
    if (id && method && strcmp(method, "initialize") == 0) {
        mcp_session_free(sess);
        sess = new_session(0);
    } else {
        mcp_handle(fresh, (const char *)data, size, check_emit, &f);
        if (json_is_object(in) && refused_before_initialize(in) &&
            f.responses && !f.error)
            abort();
        json_decref(f.id);
    }
    mcp_handle(sess, (const char *)data, size, check_emit, &s);
    /* A refused initialize leaves the session as it was, uninitialized:
    ** the inputs after it get one that is. */
    if (id && method && strcmp(method, "initialize") == 0 && s.error) {
        mcp_session_free(sess);
        sess = new_session(1);
    }
    /* A request with a valid id and a method gets its own id back. */
    if (s.responses && json_is_string(json_object_get(in, "method")) &&
        (json_is_string(id) || json_is_integer(id)) &&
        !json_equal(id, s.id))
        abort();
    json_decref(s.id);
    json_decref(in);
    return 0;
}
