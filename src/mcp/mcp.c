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
**    as the protocol asks; a notification never gets one; one the server
**    stopped (mcp_session_cancel_all()) gets the error -32000 with the
**    server's reason;
**  - nothing a client sends ends the session: malformed input gets a
**    JSON-RPC error and the next message is read as usual;
**  - a request is registered in the session from mcp_parse() until its
**    response is ready, so a cancel that arrives while a tool call waits
**    for its database or runs is seen, and a request that reuses the id
**    of one still running is refused with id null (its own id would make
**    the client take the refusal for the answer to the first); s->lock
**    guards that list and the settings the client changes (protocol
**    revision, log level).
*/

/* By MCP_V... (tools.h), oldest first. */
static const char *const versions[] = {"2024-11-05", "2025-03-26",
                                       "2025-06-18", "2025-11-25",
                                       "2026-07-28"};
#define NVERSIONS ((int)(sizeof versions / sizeof versions[0]))
_Static_assert(NVERSIONS == MCP_V2026_07_28 + 1,
               "versions[] and the MCP_V_ enum (tools.h) disagree");

/* The reserved _meta keys of a stateless request and of its result. */
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_LOG "io.modelcontextprotocol/logLevel"
#define META_SERVER "io.modelcontextprotocol/serverInfo"

/* How long a stateless client may keep a result (ttlMs): the lists and
** server/discover hold for the server's life (a restart may serve other
** databases: a few minutes), a resource never (the database may change
** under askdb, which only reads it). */
#define TTL_LISTS_MS 300000
#define TTL_READ_MS 0

struct inflight {
    struct inflight *next;
    struct mcp_session *s;   /* its session */
    json_t *id;
    int cancelled;           /* stopped: by the client, or by the server */
    const char *stopped;     /* the server's reason (static), or NULL when
                                the client cancelled it */
    askdb_agent *running;    /* the question running, or NULL */
    int opening;             /* running is opening its database, or
                                running_db is a schema read's handle
                                being opened (call_schema()) */
    askdb_db *running_db;    /* the statement's database, or NULL */
};

/* The reason a call whose schema read was opening its database is
** stopped with when the server stops. */
#define STOPPED_OPENING "the server stopped while the database was being " \
    "opened: send this again once it runs"

struct mcp_session {
    struct mcp_server *srv;
    pthread_mutex_t lock;
    int version;             /* MCP_V..., the latest until initialize */
    int initialized;         /* an initialize was answered: another is
                                refused, the revision stays */
    int log_level;           /* MCP_LOG_..., -1 = no log messages */
    struct inflight *inflight;
};

struct mcp_msg {
    json_t *root;
    json_t *id;              /* borrowed from root */
    const char *method;      /* borrowed from root */
    json_t *params;          /* borrowed from root, may be NULL */
    struct inflight *fl;     /* tools/call: its registration */
    int stateless;           /* a 2026-07-28 request: its own _meta says
                                the revision and log level, not the
                                session */
    int version;             /* MCP_V..., when stateless */
    int log_level;           /* MCP_LOG_... or -1, when stateless */
    /* A batch (revision 2025-03-26): root is the array, method "", and
    ** these its requests, run one after the other; replies gathers the
    ** responses (those of malformed members first) for one array. */
    struct mcp_msg **items;
    size_t nitems;
    json_t *replies;
    pthread_mutex_t replies_lock;
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

/* The same with error.data (stolen). */
static json_t *error_response_data(json_t *id, int code,
                                   const char *message, json_t *data)
{
    json_t *o = error_response(id, code, message);

    if (o && data)
        json_object_set_new(json_object_get(o, "error"), "data", data);
    else
        json_decref(data);
    return o;
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

void mcp_error_too_long(mcp_emit_fn emit, void *ud)
{
    char msg[100];

    snprintf(msg, sizeof msg, "message over %zu MiB: send less at once",
             MCP_MAX_MESSAGE >> 20);
    reply_error(emit, ud, NULL, -32600, msg);
}

/* ---------------------------------------------------------------------- */
/* Reading                                                                */
/* ---------------------------------------------------------------------- */

static void msg_free(struct mcp_msg *m)
{
    size_t i;

    if (!m)
        return;
    if (m->replies) {
        for (i = 0; i < m->nitems; i++)
            msg_free(m->items[i]);
        free(m->items);
        json_decref(m->replies);
        pthread_mutex_destroy(&m->replies_lock);
    }
    json_decref(m->root);
    free(m);
}

/* Mark f cancelled and stop its question or statement; s->lock held.
** why: the server's reason, NULL when the client cancelled it (a client's
** cancel wins: such a request is answered by nothing). */
static void cancel_call(struct inflight *f, const char *why)
{
    if (!f->cancelled)
        f->stopped = why;
    else if (!why)
        f->stopped = NULL;
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
            cancel_call(f, NULL);
    pthread_mutex_unlock(&s->lock);
}

void mcp_session_cancel_opens(struct mcp_session *s)
{
    struct inflight *f;

    /* Not the client's cancel: the call still answers (it says why: an
    ** ask in its tool error, a schema read with STOPPED_OPENING). */
    pthread_mutex_lock(&s->lock);
    for (f = s->inflight; f; f = f->next)
        if (f->opening && f->running)
            askdb_agent_cancel(f->running);
        else if (f->opening && f->running_db)
            cancel_call(f, STOPPED_OPENING);
    pthread_mutex_unlock(&s->lock);
}

/*
** mcp_schema_fn of a call's first schema read (mcp_db_schema(), on a
** handle of its own; ud: the call's inflight): a cancel of the call
** reaches its open and its read from now on (a server that takes the
** connection and answers nothing would hold the open for its
** connect_timeout, a lock on the file the read for --timeout), at once
** when the call was cancelled before; an open that begins once the
** server stops (mcp_server_stop()) stops the call with STOPPED_OPENING.
*/
static void call_schema(void *ud, askdb_db *db, int opening)
{
    struct inflight *f = ud;
    struct mcp_session *s = f->s;

    pthread_mutex_lock(&s->lock);
    f->running_db = db;
    f->opening = opening;
    if (db && f->cancelled)
        askdb_db_cancel(db);
    else if (opening && atomic_load(&s->srv->stopping))
        cancel_call(f, STOPPED_OPENING);
    pthread_mutex_unlock(&s->lock);
}

/* mcp_cancelled_fn of a call (ud: its inflight). */
static int call_cancelled(void *ud)
{
    struct inflight *f = ud;
    int yes;

    pthread_mutex_lock(&f->s->lock);
    yes = f->cancelled;
    pthread_mutex_unlock(&f->s->lock);
    return yes;
}

void mcp_session_cancel_all(struct mcp_session *s, const char *why)
{
    struct inflight *f;

    pthread_mutex_lock(&s->lock);
    for (f = s->inflight; f; f = f->next)
        cancel_call(f, why);
    pthread_mutex_unlock(&s->lock);
}

/* Register a request under id; NULL when the id is in use already by a
** request still running (or out of memory: *dup says which). */
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
        f->s = s;
        f->id = json_incref(id);
        f->next = s->inflight;
        s->inflight = f;
    }
    pthread_mutex_unlock(&s->lock);
    return f;
}

/* Take fl off the list; returns whether the client cancelled it. When
** the server stopped it, *stopped is the reason (else NULL). */
static int unregister_call(struct mcp_session *s, struct inflight *fl,
                           const char **stopped)
{
    struct inflight **pp;
    int cancelled;

    pthread_mutex_lock(&s->lock);
    for (pp = &s->inflight; *pp; pp = &(*pp)->next)
        if (*pp == fl) {
            *pp = fl->next;
            break;
        }
    cancelled = fl->cancelled && !fl->stopped;
    *stopped = fl->cancelled ? fl->stopped : NULL;
    pthread_mutex_unlock(&s->lock);
    json_decref(fl->id);
    free(fl);
    return cancelled;
}

/* ---------------------------------------------------------------------- */
/* Stateless requests (2026-07-28)                                        */
/* ---------------------------------------------------------------------- */

/*
** A request of revision 2026-07-28 has no session behind it: its params'
** _meta names the revision and the client's capabilities (and may name
** its log level), and it is answered by what it says alone, whatever came
** before on the connection. A session that opened with initialize keeps
** its revision for the requests without that _meta, so both eras share a
** stdin or /mcp (the revision calls such a server dual-era). What tells
** the eras apart is that _meta alone, as the revision says: server/discover
** without it is an unknown method, as it was for the handshake's clients.
*/

static int version_of(const char *v);

/* The MCP_LOG_ level called name, or -1. */
static int level_of(const char *name)
{
    int i;

    for (i = 0; name && i < MCP_LOG_NLEVELS; i++)
        if (strcmp(name, mcp_log_levels[i]) == 0)
            return i;
    return -1;
}

/* Whether root (a request object) is of the stateless era. */
static int is_stateless(json_t *root)
{
    json_t *meta = json_object_get(json_object_get(root, "params"), "_meta");

    return json_object_get(meta, META_VERSION) != NULL;
}

int mcp_in_stateless(const struct mcp_in *in)
{
    return json_is_object(in->root) && json_object_get(in->root, "id") &&
           is_stateless(in->root);
}

int mcp_in_initialize(const struct mcp_in *in)
{
    const char *method =
        json_string_value(json_object_get(in->root, "method"));

    return method && strcmp(method, "initialize") == 0 &&
           json_object_get(in->root, "id") != NULL;
}

/* Whether m is a notifications/cancelled (no id). */
static int is_cancel(json_t *m)
{
    const char *method = json_string_value(json_object_get(m, "method"));

    return method && strcmp(method, "notifications/cancelled") == 0 &&
           !json_object_get(m, "id");
}

int mcp_in_cancels_only(const struct mcp_in *in)
{
    json_t *m;
    size_t i;

    if (!json_is_array(in->root))
        return is_cancel(in->root);
    json_array_foreach(in->root, i, m)
        if (!is_cancel(m))
            return 0;
    return json_array_size(in->root) > 0;
}

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/*
** What a mirrored header says: h itself, or the text of a value the
** client had to encode as "=?base64?...?=" (not header-safe ASCII).
** malloc()ed; NULL when the encoding is malformed or not canonical,
** decodes to a NUL, or out of memory.
*/
static char *header_text(const char *h)
{
    size_t n = strlen(h), i, o = 0;
    unsigned acc = 0;
    int bits = 0, v;
    char *out;

    if (n < 11 || strncmp(h, "=?base64?", 9) != 0 ||
        strcmp(h + n - 2, "?=") != 0)
        return strdup(h);
    h += 9;
    n -= 11;
    out = n % 4 == 0 ? malloc(n / 4 * 3 + 1) : NULL;
    for (i = 0; out && i < n; i++) {
        if (h[i] == '=') {
            /* Padding: the last one or two characters, nothing after. */
            if (i + 2 < n || (i + 1 < n && h[i + 1] != '='))
                goto bad;
            break;
        }
        v = b64val(h[i]);
        if (v < 0)
            goto bad;
        acc = acc << 6 | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)(acc >> bits & 0xff);
        }
    }
    if (!out)
        return NULL;
    /* Canonical only, as the SDK reads it: the bits a padded end leaves
    ** over are zero ("QR==" is not another way to write "QQ=="). */
    if (acc & ((1u << bits) - 1))
        goto bad;
    out[o] = '\0';
    if (strlen(out) == o)
        return out;
bad:
    free(out);
    return NULL;
}

/*
** Over HTTP the revision, method and name of a request are also in its
** headers, for the proxies on the way, which route by them: they must say
** what the body says (the body is what askdb runs). 1 with msg set when
** they do not.
*/
static int route_mismatch(const struct mcp_route *r, const struct mcp_msg *m,
                          const char *version, char *msg, size_t len)
{
    const char *key = NULL;
    json_t *body;
    char *h;
    int bad;

    if (r->duplicate) {
        snprintf(msg, len, "header mismatch: %s is sent more than once",
                 r->duplicate);
        return 1;
    }
    if (!r->version || !version || strcmp(r->version, version) != 0) {
        snprintf(msg, len, "header mismatch: MCP-Protocol-Version '%.40s' "
                 "is not the protocol version of params._meta ('%.40s')",
                 r->version ? r->version : "", version ? version : "");
        return 1;
    }
    if (!r->method || strcmp(r->method, m->method) != 0) {
        snprintf(msg, len, "header mismatch: Mcp-Method '%.60s' is not the "
                 "request's method '%.60s'", r->method ? r->method : "",
                 m->method);
        return 1;
    }
    if (strcmp(m->method, "tools/call") == 0 ||
        strcmp(m->method, "prompts/get") == 0)
        key = "name";
    else if (strcmp(m->method, "resources/read") == 0)
        key = "uri";
    body = key ? json_object_get(m->params, key) : NULL;
    if (!body || json_is_null(body))
        return 0;
    h = r->name ? header_text(r->name) : NULL;
    bad = !h || !mcp_cstr(body) || strcmp(h, json_string_value(body)) != 0;
    free(h);
    if (bad)
        snprintf(msg, len, "header mismatch: Mcp-Name '%.60s' is not the "
                 "request's params.%s", r->name ? r->name : "", key);
    return bad;
}

/* Every revision askdb speaks, newest first (new reference). */
static json_t *versions_array(void)
{
    json_t *a = json_array();
    int i;

    for (i = NVERSIONS - 1; a && i >= 0; i--)
        json_array_append_new(a, json_string(versions[i]));
    return a;
}

/*
** Check a stateless request before it runs, in the order of the SDK's own
** server: the _meta it needs (-32602), the headers that mirror it over
** HTTP (-32020), its revision (-32022, naming those askdb speaks: a client
** takes a stateless one of them and asks again, or, finding only the
** handshake's, falls back to initialize). On failure it is answered here
** and 0 returned.
*/
static int stateless_ok(struct mcp_msg *m, const struct mcp_route *route,
                        mcp_emit_fn emit, void *ud)
{
    json_t *meta = json_object_get(m->params, "_meta"), *lv;
    const char *v;
    char msg[300], known[120];

    if (!json_is_object(meta) || !json_object_get(meta, META_VERSION) ||
        !json_object_get(meta, META_CAPS)) {
        reply_error(emit, ud, m->id, -32602, "params._meta needs \""
                    META_VERSION "\" and \"" META_CAPS "\": a request of "
                    "revision 2026-07-28 carries them (it has no "
                    "initialize)");
        return 0;
    }
    v = mcp_cstr(json_object_get(meta, META_VERSION));
    if (route && route_mismatch(route, m, v, msg, sizeof msg)) {
        reply_error(emit, ud, m->id, -32020, msg);
        return 0;
    }
    if (!v) {
        reply_error(emit, ud, m->id, -32602, "\"" META_VERSION "\" must be "
                    "a string without NUL characters");
        return 0;
    }
    m->version = version_of(v);
    if (m->version < MCP_V_STATELESS) {
        mcp_versions_text(known, sizeof known);
        snprintf(msg, sizeof msg, "Unsupported protocol version '%.40s' in "
                 "params._meta (askdb speaks 2026-07-28 there, and %s "
                 "through initialize)", v, known);
        send_json(emit, ud, MCP_OUT_RESPONSE, error_response_data(
            m->id, -32022, msg, json_pack("{s:o,s:s}", "supported",
                                          versions_array(), "requested",
                                          v)));
        return 0;
    }
    m->log_level = -1;
    lv = json_object_get(meta, META_LOG);
    if (lv && (m->log_level = level_of(mcp_cstr(lv))) < 0) {
        reply_error(emit, ud, m->id, -32602, "\"" META_LOG "\" is one of "
                    "debug, info, notice, warning, error, critical, alert, "
                    "emergency");
        return 0;
    }
    m->stateless = 1;
    return 1;
}

/*
** Whether a tools/call is a call at all: a name askdb has a tool of and
** arguments that are an object (or none). Checked as it is read, with no
** database: a transport that streams the call (a stateless one over HTTP
** commits to status 200 first) answers this error before, with its own
** status. Answered here when not, 0 returned.
*/
static int call_ok(struct mcp_msg *m, mcp_emit_fn emit, void *ud)
{
    json_t *args = json_object_get(m->params, "arguments");
    json_t *jname = json_object_get(m->params, "name");
    const char *name = mcp_cstr(jname);
    char msg[300];

    if (args && !json_is_object(args) && !json_is_null(args))
        snprintf(msg, sizeof msg, "'arguments' must be an object");
    else if (json_is_string(jname) && !name)
        snprintf(msg, sizeof msg, "unknown tool: its name holds a NUL "
                 "character");
    else if (!name)
        snprintf(msg, sizeof msg, "tools/call needs params.name");
    else if (!mcp_tool_known(name))
        snprintf(msg, sizeof msg, "unknown tool '%.100s': the tools are "
                 "list_databases, search_objects, execute_sql, ask, "
                 "explain_sql", name);
    else
        return 1;
    reply_error(emit, ud, m->id, -32602, msg);
    return 0;
}

/*
** Any JSON value is read, so that a bare 42 is valid JSON but not a
** request (-32600), as JSON-RPC says, rather than a parse error. Any
** string may hold a NUL ("\u0000"): those read as C strings are taken
** through mcp_cstr(), which refuses them rather than cut them. A text
** over MCP_MAX_MESSAGE is not read at all: it is refused whatever it
** holds, so parsing it would only spend time and memory on the refusal.
*/
void mcp_in_read(struct mcp_in *in, const char *text, size_t len)
{
    json_error_t jerr;

    in->len = len;
    in->root = NULL;
    in->error[0] = '\0';
    if (len > MCP_MAX_MESSAGE)
        return;
    in->root = json_loadb(text, len, JSON_ALLOW_NUL | JSON_DECODE_ANY,
                          &jerr);
    if (!in->root)
        snprintf(in->error, sizeof in->error, "parse error: %s (line %d, "
                 "column %d)", jerr.text, jerr.line, jerr.column);
}

void mcp_in_reject(struct mcp_in *in, int code, const char *message,
                   mcp_emit_fn emit, void *ud)
{
    json_t *id = json_is_object(in->root) ? json_object_get(in->root, "id")
                                          : NULL;

    if (in->len > MCP_MAX_MESSAGE)
        mcp_error_too_long(emit, ud);
    else if (!in->root)
        mcp_error_null_id(emit, ud, -32700, in->error);
    else
        reply_error(emit, ud, json_is_string(id) || json_is_integer(id)
                              ? id : NULL, code, message);
    mcp_in_free(in);
}

void mcp_in_free(struct mcp_in *in)
{
    if (!in)
        return;
    json_decref(in->root);
    in->root = NULL;
}

struct mcp_msg *mcp_parse(struct mcp_session *s, const char *text,
                          size_t len, mcp_emit_fn emit, void *ud)
{
    struct mcp_in in;

    mcp_in_read(&in, text, len);
    return mcp_parse_in(s, &in, NULL, 0, emit, ud);
}

static struct mcp_msg *parse_batch(struct mcp_session *s, json_t *root,
                                   mcp_emit_fn emit, void *ud);

/*
** Refuse a request whose id is that of one still running in the session
** (JSON-RPC and MCP: ids are unique among a session's requests). The
** error goes with id null, as for a request whose id cannot be told:
** under its own id the client would take it for the answer to the first
** request, which still comes. The request is not run.
*/
static void reply_duplicate(json_t *id, mcp_emit_fn emit, void *ud)
{
    char *text = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
    char msg[300];

    snprintf(msg, sizeof msg, "request id %.80s is in use by a request "
             "still running: ids must be unique among a session's "
             "requests; this one was not run (send it again with a new "
             "id)", text ? text : "?");
    free(text);
    mcp_error_null_id(emit, ud, -32600, msg);
}

/* Whether s takes batches: its revision is 2025-03-26, the one revision
** that has them (2025-06-18 took them out again). */
static int takes_batches(struct mcp_session *s)
{
    int v;

    pthread_mutex_lock(&s->lock);
    v = s->version;
    pthread_mutex_unlock(&s->lock);
    return v == MCP_V2025_03_26;
}

/*
** Whether s was initialized. The lifecycle has a client send nothing but
** ping before initialize has been answered; the SDKs' servers refuse the
** rest, and so does askdb (-32600, NOT_INITIALIZED), rather than serve
** them under a revision nobody agreed on. Notifications are ignored as
** ever; a stateless request (2026-07-28) has no initialize to wait for.
** On stdio initialize is answered before the next line is read; over
** HTTP a session exists only once its initialize was.
*/
static int initialized(struct mcp_session *s)
{
    int yes;

    pthread_mutex_lock(&s->lock);
    yes = s->initialized;
    pthread_mutex_unlock(&s->lock);
    return yes;
}

#define NOT_INITIALIZED                                                    \
    "not initialized: send initialize first (only ping may come before "  \
    "it)"

/* mcp_parse_in(); a member of a batch (in_batch) is never one itself. */
static struct mcp_msg *parse_one(struct mcp_session *s, struct mcp_in *in,
                                 const struct mcp_route *route,
                                 int stateless, int in_batch,
                                 mcp_emit_fn emit, void *ud)
{
    json_t *root = in->root, *id, *method, *params, *v;
    struct mcp_msg *m;
    int dup;

    in->root = NULL;   /* root is ours now */
    if (in->len > MCP_MAX_MESSAGE) {   /* mcp_in_read() left it unread */
        mcp_error_too_long(emit, ud);
        return NULL;
    }
    if (!root) {
        mcp_error_null_id(emit, ud, -32700, in->error);
        return NULL;
    }
    if (json_is_array(root) && json_array_size(root) > 0 && !in_batch &&
        !stateless && takes_batches(s))
        return parse_batch(s, root, emit, ud);
    if (!json_is_object(root)) {
        mcp_error_null_id(emit, ud, -32600, !json_is_array(root)
                          ? "a message is a JSON object"
                          : in_batch ? "a batch holds messages, not batches"
                          : json_array_size(root) == 0
                          ? "an empty batch: send at least one message"
                          : "batches are not supported: send one message "
                            "per line (of the revisions askdb speaks, only "
                            "2025-03-26 has batches)");
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
    if ((stateless || is_stateless(root)) &&
        !stateless_ok(m, route, emit, ud)) {
        msg_free(m);
        return NULL;
    }
    if (!m->stateless && !initialized(s) &&
        strcmp(m->method, "initialize") != 0 &&
        strcmp(m->method, "ping") != 0) {
        reply_error(emit, ud, id, -32600, NOT_INITIALIZED);
        msg_free(m);
        return NULL;
    }
    if (in_batch && strcmp(m->method, "initialize") == 0) {
        reply_error(emit, ud, id, -32600, "initialize may not be part of "
                    "a batch: send it alone");
        msg_free(m);
        return NULL;
    }
    if (strcmp(m->method, "tools/call") == 0 && !call_ok(m, emit, ud)) {
        msg_free(m);
        return NULL;
    }
    m->fl = register_call(s, id, &dup);
    if (!m->fl) {
        if (dup)
            reply_duplicate(id, emit, ud);
        else
            reply_error(emit, ud, id, -32603, "out of memory");
        msg_free(m);
        return NULL;
    }
    return m;
}

struct mcp_msg *mcp_parse_in(struct mcp_session *s, struct mcp_in *in,
                             const struct mcp_route *route, int stateless,
                             mcp_emit_fn emit, void *ud)
{
    return parse_one(s, in, route, stateless, 0, emit, ud);
}

/* A batch's mcp_emit_fn: its responses go into the array, the
** notifications of its requests (progress, log lines) out at once. */
struct batch_out {
    struct mcp_msg *b;
    mcp_emit_fn emit;
    void *ud;
};

static void batch_emit(void *ud, enum mcp_out kind, const char *json,
                       size_t len)
{
    struct batch_out *o = ud;
    json_t *v;

    if (kind != MCP_OUT_RESPONSE) {
        o->emit(o->ud, kind, json, len);
        return;
    }
    v = json_loadb(json, len, JSON_ALLOW_NUL, NULL);
    pthread_mutex_lock(&o->b->replies_lock);
    if (v)
        json_array_append_new(o->b->replies, v);
    pthread_mutex_unlock(&o->b->replies_lock);
}

/* Send a batch's responses as one array, when there are any (a batch of
** notifications alone gets nothing back). */
static void batch_send(struct mcp_msg *b, mcp_emit_fn emit, void *ud)
{
    if (json_array_size(b->replies) > 0)
        send_json(emit, ud, MCP_OUT_RESPONSE, json_incref(b->replies));
}

/*
** A batch (root, a non-empty array, taken) of a session of revision
** 2025-03-26, which has a server take them: each member is read as a
** message of its own, its errors kept for the batch's response, and the
** requests among them make one mcp_msg run by mcp_dispatch(). NULL when
** none is left to run (the errors, if any, are sent).
*/
static struct mcp_msg *parse_batch(struct mcp_session *s, json_t *root,
                                   mcp_emit_fn emit, void *ud)
{
    struct mcp_msg *b = calloc(1, sizeof *b), *m;
    struct batch_out out;
    struct mcp_in in;
    size_t i, n = json_array_size(root);

    if (b) {
        b->items = calloc(n, sizeof *b->items);
        b->replies = json_array();
    }
    if (!b || !b->items || !b->replies) {
        if (b) {
            free(b->items);
            json_decref(b->replies);
            free(b);
        }
        json_decref(root);
        mcp_error_null_id(emit, ud, -32603, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&b->replies_lock, NULL);
    b->root = root;
    b->method = "";
    out.b = b;
    out.emit = emit;
    out.ud = ud;
    for (i = 0; i < n; i++) {
        in.root = json_incref(json_array_get(root, i));
        in.len = 0;
        in.error[0] = '\0';
        m = parse_one(s, &in, NULL, 0, 1, batch_emit, &out);
        if (m)
            b->items[b->nitems++] = m;
    }
    if (b->nitems == 0) {
        batch_send(b, emit, ud);
        msg_free(b);
        return NULL;
    }
    return b;
}

int mcp_msg_slow(const struct mcp_msg *m)
{
    size_t i;

    for (i = 0; i < m->nitems; i++)
        if (mcp_msg_slow(m->items[i]))
            return 1;
    return strcmp(m->method, "tools/call") == 0 ||
           strcmp(m->method, "resources/read") == 0;
}

/* The response of a cancelled request (m has an id); NULL when out of
** memory. */
static json_t *cancelled_response(const struct mcp_msg *m)
{
    return error_response(m->id, MCP_ERR_SERVER, "request cancelled: the "
                          "client sent notifications/cancelled for it, so "
                          "its answer is not sent");
}

char *mcp_cancelled_reply(const struct mcp_msg *m)
{
    json_t *o;
    char *text;
    size_t i;

    if (!m->replies) {
        o = m->id ? cancelled_response(m) : NULL;
    } else {
        /* A batch (its members are requests): an array of theirs, for a
        ** batch whose every request was cancelled. */
        o = json_array();
        for (i = 0; i < m->nitems; i++)
            if (json_array_append_new(o, cancelled_response(m->items[i])))
                break;
        if (i < m->nitems || json_array_size(o) == 0) {
            json_decref(o);
            o = NULL;
        }
    }
    text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

void mcp_reject(struct mcp_session *s, struct mcp_msg *m, int code,
                const char *message, mcp_emit_fn emit, void *ud)
{
    struct batch_out out = {m, emit, ud};
    const char *stopped;
    size_t i;

    if (m->replies) {
        for (i = 0; i < m->nitems; i++)
            mcp_reject(s, m->items[i], code, message, batch_emit, &out);
        m->nitems = 0;
        batch_send(m, emit, ud);
        msg_free(m);
        return;
    }
    if (m->fl)
        (void)unregister_call(s, m->fl, &stopped);
    reply_error(emit, ud, m->id, code, message);
    msg_free(m);
}

void mcp_reject_busy(struct mcp_session *s, struct mcp_msg *m,
                     mcp_emit_fn emit, void *ud)
{
    char msg[200];

    snprintf(msg, sizeof msg, "busy: %d tool calls and resource reads are "
             "running in this session; send this one again when one has "
             "finished", MCP_MAX_RUNNING);
    mcp_reject(s, m, MCP_ERR_SERVER, msg, emit, ud);
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
    int i = version_of(v);

    return i >= 0 && i <= MCP_V_LATEST;
}

int mcp_version_stateless(const char *v)
{
    return version_of(v) >= MCP_V_STATELESS;
}

int mcp_msg_stateless(const struct mcp_msg *m)
{
    return m->stateless;
}

int mcp_msg_is(const struct mcp_msg *m, const char *method)
{
    return strcmp(m->method, method) == 0;
}

void mcp_versions_text(char *buf, size_t len)
{
    size_t used = 0;
    int i;

    buf[0] = '\0';
    for (i = MCP_V_LATEST; i >= 0 && used < len; i--)
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 i < MCP_V_LATEST ? ", " : "", versions[i]);
}

/*
** The capabilities are the same in every revision: tools, resources and
** log messages. Prompts, completions, sampling, elicitation, roots and
** tasks are neither offered nor used, so a request for a task (2025-11-25:
** params.task of tools/call) is run as an ordinary call, as that revision
** has a server without the tasks capability do.
*/
static json_t *capabilities(void)
{
    return json_pack("{s:{s:b},s:{s:b,s:b},s:{}}", "tools", "listChanged", 0,
                     "resources", "listChanged", 0, "subscribe", 0,
                     "logging");
}

/* The server's Implementation for revision v (new reference). */
static json_t *server_info(int v)
{
    json_t *o = json_pack("{s:s,s:s}", "name", "askdb", "version",
                          askdb_version());

    /* 2025-11-25 gave Implementation a description, for the user. */
    if (o && v >= MCP_V2025_11_25)
        json_object_set_new(o, "description", json_string(
            "Read-only SQL databases for assistants: search tables, run "
            "SQL, or ask in plain English"));
    return o;
}

#define INSTRUCTIONS                                                        \
    "Read-only access to SQL databases. Find tables with search_objects, " \
    "run SQL you write with execute_sql, or let askdb's own model answer " \
    "a plain-English question with ask."

/*
** initialize: the client's revision when askdb speaks it through
** initialize, else askdb's latest of those (the revision a client names
** is the latest it speaks; it decides whether it can go on with ours).
** Its params need protocolVersion, a string, as the schema of every
** revision says (-32602 without, as from the SDK's server, which refuses
** params it cannot read). A session is initialized once: another
** initialize is refused (-32600) and changes nothing, as from the
** TypeScript SDK, since the requests already answered and those still
** running were under the revision it has. NULL with *code and msg set
** when refused.
*/
static json_t *do_initialize(struct mcp_session *s, json_t *params,
                             int *code, char *msg, size_t len)
{
    json_t *pv = json_object_get(params, "protocolVersion"), *r;
    int v = version_of(mcp_cstr(pv)), again;

    if (!mcp_cstr(pv)) {
        *code = -32602;
        snprintf(msg, len, "initialize needs params.protocolVersion: the "
                 "latest protocol revision the client speaks, a string "
                 "(e.g. \"%s\")", versions[MCP_V_LATEST]);
        return NULL;
    }
    if (v < 0 || v >= MCP_V_STATELESS)
        v = MCP_V_LATEST;
    pthread_mutex_lock(&s->lock);
    again = s->initialized;
    if (again) {
        v = s->version;
    } else {
        s->initialized = 1;
        s->version = v;
    }
    pthread_mutex_unlock(&s->lock);
    if (again) {
        *code = -32600;
        snprintf(msg, len, "already initialized: this session speaks "
                 "revision %s; initialize comes once, first (for another "
                 "revision start a new session: a new process, or over "
                 "HTTP an initialize without Mcp-Session-Id)", versions[v]);
        return NULL;
    }
    r = json_pack("{s:s,s:o,s:o}", "protocolVersion", versions[v],
                  "capabilities", capabilities(), "serverInfo",
                  server_info(v));
    if (r && v >= MCP_V2025_03_26)
        json_object_set_new(r, "instructions", json_string(INSTRUCTIONS));
    return r;
}

/* server/discover: what initialize told, for the stateless era, and every
** revision askdb speaks. */
static json_t *do_discover(void)
{
    return json_pack("{s:o,s:o,s:s}", "supportedVersions", versions_array(),
                     "capabilities", capabilities(), "instructions",
                     INSTRUCTIONS);
}

/*
** A stateless request's result (r, returned): resultType, which 2026-07-28
** asks of every result (askdb's are all complete), the server in _meta (a
** result is all that tells a stateless client who answered) and, with
** ttl >= 0, how long it may be kept. The scope is private: askdb may sit
** behind a token, and its lists name the databases it serves.
*/
static json_t *stamp(json_t *r, int ttl)
{
    json_t *meta;

    if (!r)
        return NULL;
    json_object_set_new(r, "resultType", json_string("complete"));
    meta = json_object_get(r, "_meta");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(r, "_meta", meta);
    }
    json_object_set_new(meta, META_SERVER, server_info(MCP_V_STATELESS));
    if (ttl >= 0) {
        json_object_set_new(r, "ttlMs", json_integer(ttl));
        json_object_set_new(r, "cacheScope", json_string("private"));
    }
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
    const char *stopped;
    struct mcp_call c;
    json_t *args = json_object_get(m->params, "arguments"), *tok, *r;
    const char *name = mcp_cstr(json_object_get(m->params, "name"));
    char msg[300];
    int code = 0;

    /* call_ok() passed: the name is a tool's, the arguments an object. */
    memset(&c, 0, sizeof c);
    tok = json_object_get(json_object_get(m->params, "_meta"),
                          "progressToken");
    c.srv = s->srv;
    c.progress_token = json_is_string(tok) || json_is_number(tok) ? tok
                                                                   : NULL;
    c.notify = notify;
    c.ud = &nc;
    c.lock = &s->lock;
    c.cancelled = &m->fl->cancelled;
    c.running = &m->fl->running;
    c.opening = &m->fl->opening;
    c.running_db = &m->fl->running_db;
    c.schema_fn = call_schema;
    c.schema_ud = m->fl;
    pthread_mutex_lock(&s->lock);
    c.version = m->stateless ? m->version : s->version;
    c.log_level = m->stateless ? m->log_level : s->log_level;
    pthread_mutex_unlock(&s->lock);
    r = mcp_tool_call(&c, name, json_is_object(args) ? args : NULL, &code,
                      msg, sizeof msg);
    if (unregister_call(s, m->fl, &stopped)) {
        /* Cancelled: the client expects no response. */
        json_decref(r);
        return;
    }
    if (stopped) {
        json_decref(r);
        reply_error(emit, ud, m->id, MCP_ERR_SERVER, stopped);
    } else if (r)
        reply_result(emit, ud, m->id, m->stateless ? stamp(r, -1) : r);
    else
        reply_error(emit, ud, m->id, code, msg);
}

/* Whether method is one of the list methods the spec pages: askdb
** offers no prompts, so prompts/list is an unknown method. */
static int is_list(const char *method)
{
    return strcmp(method, "tools/list") == 0 ||
           strcmp(method, "resources/list") == 0 ||
           strcmp(method, "resources/templates/list") == 0;
}

/* Whether params carry a cursor (null is none). */
static int cursor_given(json_t *params)
{
    json_t *c = json_object_get(params, "cursor");

    return c && !json_is_null(c);
}

void mcp_dispatch(struct mcp_session *s, struct mcp_msg *m,
                  mcp_emit_fn emit, void *ud)
{
    const char *method = m->method, *str, *stopped;
    json_t *r = NULL;
    char msg[300];
    int code = 0, i, ttl = TTL_LISTS_MS, cancelled;
    int old = !m->stateless;  /* a method of the handshake era alone */
    struct batch_out out = {m, emit, ud};
    size_t k;

    if (m->replies) {
        /* A batch: its requests one after the other (a cancelled one
        ** has no response in the array). */
        for (k = 0; k < m->nitems; k++)
            mcp_dispatch(s, m->items[k], batch_emit, &out);
        m->nitems = 0;
        batch_send(m, emit, ud);
        msg_free(m);
        return;
    }
    if (strcmp(method, "tools/call") == 0) {
        do_tools_call(s, m, emit, ud);
        msg_free(m);
        return;
    }
    if (old && strcmp(method, "initialize") == 0) {
        r = do_initialize(s, m->params, &code, msg, sizeof msg);
    } else if (is_list(method) && cursor_given(m->params)) {
        /* askdb's lists come whole: it hands out no nextCursor, so any
        ** cursor is one it never gave, which the spec answers so. */
        code = -32602;
        snprintf(msg, sizeof msg, "invalid cursor: askdb gives its lists "
                 "whole, without nextCursor, so there is no next page "
                 "(send %.40s without params.cursor)", method);
    } else if (old && strcmp(method, "ping") == 0) {
        r = json_object();
    } else if (!old && strcmp(method, "server/discover") == 0) {
        r = do_discover();
    } else if (strcmp(method, "tools/list") == 0) {
        pthread_mutex_lock(&s->lock);
        i = m->stateless ? m->version : s->version;
        pthread_mutex_unlock(&s->lock);
        r = mcp_tools_list(s->srv, i);
    } else if (strcmp(method, "resources/list") == 0) {
        r = mcp_resources_list(s->srv);
    } else if (strcmp(method, "resources/templates/list") == 0) {
        r = mcp_resource_templates(s->srv);
    } else if (strcmp(method, "resources/read") == 0) {
        ttl = TTL_READ_MS;
        str = mcp_cstr(json_object_get(m->params, "uri"));
        if (!str) {
            code = -32602;
            snprintf(msg, sizeof msg, "resources/read needs params.uri, a "
                     "string without NUL characters");
        } else {
            r = mcp_resource_read(s->srv, str,
                                  m->fl ? call_schema : NULL,
                                  m->fl ? call_cancelled : NULL, m->fl,
                                  &code, msg, sizeof msg);
            if (r)
                code = 0;
        }
    } else if (old && strcmp(method, "logging/setLevel") == 0) {
        i = level_of(mcp_cstr(json_object_get(m->params, "level")));
        if (i < 0) {
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
        snprintf(msg, sizeof msg, "unknown method '%.100s'%s", method,
                 !old && (strcmp(method, "initialize") == 0 ||
                          strcmp(method, "ping") == 0 ||
                          strcmp(method, "logging/setLevel") == 0)
                 ? " in revision 2026-07-28 (each request's _meta says what "
                   "initialize and logging/setLevel said): send it without "
                   "that _meta for a revision of the handshake" : "");
    }
    /* 2026-07-28 made an unknown resource invalid params; -32002 is the
    ** handshake revisions' own code. */
    if (code == -32002 && !old)
        code = -32602;
    /* Off the list before the response goes: the client may reuse the id
    ** as soon as it has it. A request cancelled until then gets no
    ** response, as the protocol asks (a cancel that comes later finds it
    ** gone: the response is sent, and stays); initialize is answered all
    ** the same, since a client may not cancel it and the session took
    ** it. */
    stopped = NULL;
    cancelled = m->fl && unregister_call(s, m->fl, &stopped) &&
                strcmp(method, "initialize") != 0;
    m->fl = NULL;
    if (stopped && strcmp(method, "initialize") != 0) {
        json_decref(r);
        r = NULL;
        code = MCP_ERR_SERVER;
        snprintf(msg, sizeof msg, "%s", stopped);
    }
    if (cancelled)
        json_decref(r);
    else if (code)
        reply_error(emit, ud, m->id, code, msg);
    else
        reply_result(emit, ud, m->id, old ? r : stamp(r, ttl));
    msg_free(m);
}

void mcp_handle(struct mcp_session *s, const char *text, size_t len,
                mcp_emit_fn emit, void *ud)
{
    struct mcp_msg *m = mcp_parse(s, text, len, emit, ud);

    if (m)
        mcp_dispatch(s, m, emit, ud);
}
