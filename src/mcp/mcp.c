/* mcp.c - the Model Context Protocol's messages: JSON-RPC 2.0 requests in,
** responses and notifications out, whatever transport carries them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "resources.h"
#include "tools.h"

/*
** Invariants:
**  - every request (a message with an id) gets exactly one response,
**    unless the client cancelled it (notifications/cancelled): then none,
**    as the protocol asks; a notification never gets one;
**  - nothing a client sends ends the session: malformed input gets a
**    JSON-RPC error and the next message is read as usual;
**  - a tool call is registered in the session from mcp_parse() until its
**    result is ready, so a cancel that arrives while it waits for its
**    database or runs is seen; s->lock guards that list and the settings
**    the client changes (protocol revision, log level).
*/

/* By MCP_V... (tools.h), oldest first. */
static const char *const versions[] = {"2024-11-05", "2025-03-26",
                                       "2025-06-18", "2025-11-25"};
#define NVERSIONS ((int)(sizeof versions / sizeof versions[0]))
_Static_assert(NVERSIONS == MCP_V_LATEST + 1,
               "versions[] and the MCP_V_ enum (tools.h) disagree");

struct inflight {
    struct inflight *next;
    json_t *id;
    int cancelled;
    askdb_agent *running;    /* the question running, or NULL */
    askdb_db *running_db;    /* the statement's database, or NULL */
};

struct mcp_session {
    struct mcp_server *srv;
    pthread_mutex_t lock;
    int version;             /* MCP_V..., the latest until initialize */
    int log_level;           /* MCP_LOG_..., -1 = no log messages */
    struct inflight *inflight;
};

struct mcp_msg {
    json_t *root;
    json_t *id;              /* borrowed from root */
    const char *method;      /* borrowed from root */
    json_t *params;          /* borrowed from root, may be NULL */
    struct inflight *fl;     /* tools/call: its registration */
};

struct mcp_session *mcp_session_new(struct mcp_server *srv)
{
    struct mcp_session *s = calloc(1, sizeof *s);

    if (!s)
        return NULL;
    s->srv = srv;
    s->version = MCP_V_LATEST;
    s->log_level = -1;
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

void mcp_session_free(struct mcp_session *s)
{
    struct inflight *f, *next;

    if (!s)
        return;
    for (f = s->inflight; f; f = next) {
        next = f->next;
        json_decref(f->id);
        free(f);
    }
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* ---------------------------------------------------------------------- */
/* Output                                                                 */
/* ---------------------------------------------------------------------- */

/* Emit o (stolen) as one line of compact JSON. */
static void send_json(mcp_emit_fn emit, void *ud, enum mcp_out kind,
                      json_t *o)
{
    char *text = askdb_json_shorten_reals(o ? json_dumps(o, JSON_COMPACT)
                                            : NULL);

    if (text)
        emit(ud, kind, text, strlen(text));
    else
        fprintf(stderr, "askdb mcp: out of memory: a message was lost\n");
    free(text);
    json_decref(o);
}

/* The error response of id (NULL: null); NULL when out of memory. */
static json_t *error_response(json_t *id, int code, const char *message)
{
    return json_pack("{s:s,s:O?,s:{s:i,s:o}}", "jsonrpc", "2.0", "id", id,
                     "error", "code", code, "message", mcp_str(message));
}

static void reply_error(mcp_emit_fn emit, void *ud, json_t *id, int code,
                        const char *message)
{
    send_json(emit, ud, MCP_OUT_RESPONSE, error_response(id, code, message));
}

/* The response of id with result (stolen; NULL: out of memory). */
static void reply_result(mcp_emit_fn emit, void *ud, json_t *id,
                         json_t *result)
{
    if (!result) {
        reply_error(emit, ud, id, -32603, "out of memory");
        return;
    }
    send_json(emit, ud, MCP_OUT_RESPONSE,
              json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id,
                        "result", result));
}

void mcp_error_null_id(mcp_emit_fn emit, void *ud, int code,
                       const char *message)
{
    reply_error(emit, ud, NULL, code, message);
}

/* ---------------------------------------------------------------------- */
/* Reading                                                                */
/* ---------------------------------------------------------------------- */

static void msg_free(struct mcp_msg *m)
{
    if (!m)
        return;
    json_decref(m->root);
    free(m);
}

/* Mark f cancelled and stop its question or statement; s->lock held. */
static void cancel_call(struct inflight *f)
{
    f->cancelled = 1;
    if (f->running)
        askdb_agent_cancel(f->running);
    if (f->running_db)
        askdb_db_cancel(f->running_db);
}

/* Cancel the tool call with this id. */
static void cancel_request(struct mcp_session *s, json_t *id)
{
    struct inflight *f;

    pthread_mutex_lock(&s->lock);
    for (f = s->inflight; f; f = f->next)
        if (json_equal(f->id, id))
            cancel_call(f);
    pthread_mutex_unlock(&s->lock);
}

void mcp_session_cancel_all(struct mcp_session *s)
{
    struct inflight *f;

    pthread_mutex_lock(&s->lock);
    for (f = s->inflight; f; f = f->next)
        cancel_call(f);
    pthread_mutex_unlock(&s->lock);
}

/* Register a tool call under id; NULL when the id is in use already (or
** out of memory: *dup says which). */
static struct inflight *register_call(struct mcp_session *s, json_t *id,
                                      int *dup)
{
    struct inflight *f;

    *dup = 0;
    pthread_mutex_lock(&s->lock);
    for (f = s->inflight; f; f = f->next)
        if (json_equal(f->id, id)) {
            *dup = 1;
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
    f = calloc(1, sizeof *f);
    if (f) {
        f->id = json_incref(id);
        f->next = s->inflight;
        s->inflight = f;
    }
    pthread_mutex_unlock(&s->lock);
    return f;
}

/* Take fl off the list; returns whether it was cancelled. */
static int unregister_call(struct mcp_session *s, struct inflight *fl)
{
    struct inflight **pp;
    int cancelled;

    pthread_mutex_lock(&s->lock);
    for (pp = &s->inflight; *pp; pp = &(*pp)->next)
        if (*pp == fl) {
            *pp = fl->next;
            break;
        }
    cancelled = fl->cancelled;
    pthread_mutex_unlock(&s->lock);
    json_decref(fl->id);
    free(fl);
    return cancelled;
}

struct mcp_msg *mcp_parse(struct mcp_session *s, const char *text,
                          size_t len, mcp_emit_fn emit, void *ud)
{
    json_t *root, *id, *method, *params, *v;
    struct mcp_msg *m;
    json_error_t jerr;
    char msg[300];
    int dup;

    if (len > MCP_MAX_MESSAGE) {
        snprintf(msg, sizeof msg, "message over %zu MiB: send less at "
                 "once", MCP_MAX_MESSAGE >> 20);
        mcp_error_null_id(emit, ud, -32600, msg);
        return NULL;
    }
    /* Any string may hold a NUL ("\u0000"): those read as C strings are
    ** taken through mcp_cstr(), which refuses them rather than cut them.
    ** Any JSON value is read, so that a bare 42 is valid JSON but not a
    ** request (-32600), as JSON-RPC says, rather than a parse error. */
    root = json_loadb(text, len, JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
    if (!root) {
        snprintf(msg, sizeof msg, "parse error: %s (line %d, column %d)",
                 jerr.text, jerr.line, jerr.column);
        mcp_error_null_id(emit, ud, -32700, msg);
        return NULL;
    }
    if (!json_is_object(root)) {
        mcp_error_null_id(emit, ud, -32600, json_is_array(root)
                          ? "batches are not supported: send one message "
                            "per line"
                          : "a message is a JSON object");
        json_decref(root);
        return NULL;
    }
    id = json_object_get(root, "id");
    if (id && !json_is_string(id) && !json_is_integer(id)) {
        mcp_error_null_id(emit, ud, -32600, "'id' must be a string or an "
                          "integer");
        json_decref(root);
        return NULL;
    }
    method = json_object_get(root, "method");
    v = json_object_get(root, "jsonrpc");
    if (!mcp_cstr(v) || strcmp(json_string_value(v), "2.0") != 0 ||
        (method && !mcp_cstr(method))) {
        reply_error(emit, ud, id, -32600, "not a JSON-RPC 2.0 message: it "
                    "needs \"jsonrpc\": \"2.0\" and a string \"method\" "
                    "(without NUL characters)");
        json_decref(root);
        return NULL;
    }
    if (!method) {
        /* A response to a request of ours: we send none, so ignore it. */
        if (!id || !(json_object_get(root, "result") ||
                     json_object_get(root, "error")))
            reply_error(emit, ud, id, -32600, "a request needs a "
                        "\"method\"");
        json_decref(root);
        return NULL;
    }
    params = json_object_get(root, "params");
    if (params && !json_is_object(params)) {
        if (id)
            reply_error(emit, ud, id, -32602, "'params' must be an object");
        json_decref(root);
        return NULL;
    }
    if (!id) {
        /* Notifications: never answered. */
        if (strcmp(json_string_value(method), "notifications/cancelled")
                == 0) {
            v = json_object_get(params, "requestId");
            if (v)
                cancel_request(s, v);
        }
        json_decref(root);
        return NULL;
    }
    m = calloc(1, sizeof *m);
    if (!m) {
        reply_error(emit, ud, id, -32603, "out of memory");
        json_decref(root);
        return NULL;
    }
    m->root = root;
    m->id = id;
    m->method = json_string_value(method);
    m->params = params;
    if (strcmp(m->method, "tools/call") == 0) {
        m->fl = register_call(s, id, &dup);
        if (!m->fl) {
            reply_error(emit, ud, id, dup ? -32600 : -32603, dup
                        ? "this request id is in use by a running call"
                        : "out of memory");
            msg_free(m);
            return NULL;
        }
    }
    return m;
}

int mcp_msg_slow(const struct mcp_msg *m)
{
    return strcmp(m->method, "tools/call") == 0 ||
           strcmp(m->method, "resources/read") == 0;
}

char *mcp_cancelled_reply(const struct mcp_msg *m)
{
    json_t *o;
    char *text;

    if (!m->id)
        return NULL;
    o = error_response(m->id, 0, "Request cancelled");
    text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

void mcp_reject(struct mcp_session *s, struct mcp_msg *m, int code,
                const char *message, mcp_emit_fn emit, void *ud)
{
    if (m->fl)
        (void)unregister_call(s, m->fl);
    reply_error(emit, ud, m->id, code, message);
    msg_free(m);
}

/* ---------------------------------------------------------------------- */
/* Methods                                                                */
/* ---------------------------------------------------------------------- */

/* The MCP_V... of revision v, or -1 when askdb does not speak it. */
static int version_of(const char *v)
{
    int i;

    for (i = 0; v && i < NVERSIONS; i++)
        if (strcmp(v, versions[i]) == 0)
            return i;
    return -1;
}

int mcp_version_known(const char *v)
{
    return version_of(v) >= 0;
}

void mcp_versions_text(char *buf, size_t len)
{
    size_t used = 0;
    int i;

    buf[0] = '\0';
    for (i = NVERSIONS - 1; i >= 0 && used < len; i--)
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 i < NVERSIONS - 1 ? ", " : "", versions[i]);
}

/*
** The capabilities are the same in every revision: tools, resources and
** log messages. Prompts, completions, sampling, elicitation, roots and
** tasks are neither offered nor used, so a request for a task (2025-11-25:
** params.task of tools/call) is run as an ordinary call, as that revision
** has a server without the tasks capability do.
*/
static json_t *do_initialize(struct mcp_session *s, json_t *params)
{
    int v = version_of(mcp_cstr(json_object_get(params, "protocolVersion")));
    json_t *r;

    /* The client's revision when we speak it, else our latest. */
    if (v < 0)
        v = MCP_V_LATEST;
    pthread_mutex_lock(&s->lock);
    s->version = v;
    pthread_mutex_unlock(&s->lock);
    r = json_pack("{s:s,s:{s:{s:b},s:{s:b,s:b},s:{}},s:{s:s,s:s}}",
                  "protocolVersion", versions[v], "capabilities", "tools",
                  "listChanged", 0, "resources", "listChanged", 0,
                  "subscribe", 0, "logging", "serverInfo", "name", "askdb",
                  "version", askdb_version());
    /* 2025-11-25 gave Implementation a description, for the user. */
    if (v >= MCP_V2025_11_25)
        json_object_set_new(json_object_get(r, "serverInfo"), "description",
                            json_string("Read-only SQL databases for "
                                        "assistants: search tables, run "
                                        "SQL, or ask in plain English"));
    if (v >= MCP_V2025_03_26)
        json_object_set_new(r, "instructions", json_string(
            "Read-only access to SQL databases. Find tables with "
            "search_objects, run SQL you write with execute_sql, or let "
            "askdb's own model answer a plain-English question with ask."));
    return r;
}

struct notify_ctx {
    mcp_emit_fn emit;
    void *ud;
};

/* mcp_call.notify: a notification for the client (params stolen). */
static void notify(void *ud, const char *method, json_t *params)
{
    struct notify_ctx *n = ud;

    if (!params)
        return;
    send_json(n->emit, n->ud, MCP_OUT_NOTIFICATION,
              json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method", method,
                        "params", params));
}

static void do_tools_call(struct mcp_session *s, struct mcp_msg *m,
                          mcp_emit_fn emit, void *ud)
{
    struct notify_ctx nc = {emit, ud};
    struct mcp_call c;
    json_t *args = json_object_get(m->params, "arguments"), *tok, *r = NULL;
    json_t *jname = json_object_get(m->params, "name");
    const char *name = mcp_cstr(jname);
    char msg[300];
    int code = 0;

    memset(&c, 0, sizeof c);
    if (args && !json_is_object(args) && !json_is_null(args)) {
        code = -32602;
        snprintf(msg, sizeof msg, "'arguments' must be an object");
    } else if (json_is_string(jname) && !name) {
        code = -32602;
        snprintf(msg, sizeof msg, "unknown tool: its name holds a NUL "
                 "character");
    } else {
        tok = json_object_get(json_object_get(m->params, "_meta"),
                              "progressToken");
        c.srv = s->srv;
        c.progress_token =
            json_is_string(tok) || json_is_integer(tok) ? tok : NULL;
        c.notify = notify;
        c.ud = &nc;
        c.lock = &s->lock;
        c.cancelled = &m->fl->cancelled;
        c.running = &m->fl->running;
        c.running_db = &m->fl->running_db;
        pthread_mutex_lock(&s->lock);
        c.version = s->version;
        c.log_level = s->log_level;
        pthread_mutex_unlock(&s->lock);
        r = mcp_tool_call(&c, name, json_is_object(args) ? args : NULL,
                          &code, msg, sizeof msg);
    }
    if (unregister_call(s, m->fl)) {
        /* Cancelled: the client expects no response. */
        json_decref(r);
        return;
    }
    if (r)
        reply_result(emit, ud, m->id, r);
    else
        reply_error(emit, ud, m->id, code, msg);
}

void mcp_dispatch(struct mcp_session *s, struct mcp_msg *m,
                  mcp_emit_fn emit, void *ud)
{
    const char *method = m->method, *str;
    json_t *r = NULL;
    char msg[300];
    int code = 0, i;

    if (strcmp(method, "tools/call") == 0) {
        do_tools_call(s, m, emit, ud);
        msg_free(m);
        return;
    }
    if (strcmp(method, "initialize") == 0) {
        r = do_initialize(s, m->params);
    } else if (strcmp(method, "ping") == 0) {
        r = json_object();
    } else if (strcmp(method, "tools/list") == 0) {
        pthread_mutex_lock(&s->lock);
        i = s->version;
        pthread_mutex_unlock(&s->lock);
        r = mcp_tools_list(s->srv, i);
    } else if (strcmp(method, "resources/list") == 0) {
        r = mcp_resources_list(s->srv);
    } else if (strcmp(method, "resources/templates/list") == 0) {
        r = mcp_resource_templates(s->srv);
    } else if (strcmp(method, "resources/read") == 0) {
        str = mcp_cstr(json_object_get(m->params, "uri"));
        if (!str) {
            code = -32602;
            snprintf(msg, sizeof msg, "resources/read needs params.uri, a "
                     "string without NUL characters");
        } else {
            r = mcp_resource_read(s->srv, str, &code, msg, sizeof msg);
            if (r)
                code = 0;
        }
    } else if (strcmp(method, "logging/setLevel") == 0) {
        str = mcp_cstr(json_object_get(m->params, "level"));
        for (i = 0; str && i < MCP_LOG_NLEVELS; i++)
            if (strcmp(str, mcp_log_levels[i]) == 0)
                break;
        if (!str || i == MCP_LOG_NLEVELS) {
            code = -32602;
            snprintf(msg, sizeof msg, "'level' is one of debug, info, "
                     "notice, warning, error, critical, alert, emergency");
        } else {
            pthread_mutex_lock(&s->lock);
            s->log_level = i;
            pthread_mutex_unlock(&s->lock);
            r = json_object();
        }
    } else {
        code = -32601;
        snprintf(msg, sizeof msg, "unknown method '%.100s'", method);
    }
    if (code)
        reply_error(emit, ud, m->id, code, msg);
    else
        reply_result(emit, ud, m->id, r);
    msg_free(m);
}

void mcp_handle(struct mcp_session *s, const char *text, size_t len,
                mcp_emit_fn emit, void *ud)
{
    struct mcp_msg *m = mcp_parse(s, text, len, emit, ud);

    if (m)
        mcp_dispatch(s, m, emit, ud);
}
