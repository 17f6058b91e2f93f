/* http.c - the HTTP side of `askdb serve`: libmicrohttpd, routing, the
** token, CORS, errors, the access log, and shutdown on a signal. */
#define _GNU_SOURCE  /* getaddrinfo's flags, sigwait */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../mcp/mcp.h"
#include "mcp_http.h"
#include "request.h"
#include "server.h"
#include "stream.h"
#include "web_assets.h"

#define CONN_TIMEOUT_S 60     /* an idle or silent connection is closed */
#define CONN_LIMIT 8192       /* connections at once */
#define DROP_MAX ((size_t)64 << 20) /* body bytes read past --max-body */
#define THREAD_STACK (512 * 1024)

/* One request, from its first callback to its completion. */
struct req {
    char method[8];
    char path[256];
    char request_id[72];
    char db[128];
    char conv_id[40];
    char client[64];
    char *body;
    size_t len;
    size_t dropped;  /* bytes read past max_body, to answer 413 after */
    int too_big;
    int status;
    int answering;   /* counted in server.answering */
    double t0;
};

/* ---------------------------------------------------------------------- */
/* Responses                                                              */
/* ---------------------------------------------------------------------- */

static void add_common(struct server *s, struct MHD_Connection *c,
                       struct MHD_Response *r, const struct req *q)
{
    const char *origin;

    MHD_add_response_header(r, "X-Request-Id", q->request_id);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (s->cors_origin && origin && strcmp(origin, s->cors_origin) == 0) {
        MHD_add_response_header(r, "Access-Control-Allow-Origin", origin);
        MHD_add_response_header(r, "Access-Control-Expose-Headers",
                                "X-Request-Id, X-Conversation-Id, "
                                "Mcp-Session-Id");
        MHD_add_response_header(r, "Vary", "Origin");
    }
}

/* Queue a response of text (copied) with its type and status. */
static enum MHD_Result send_text(struct server *s, struct MHD_Connection *c,
                                 struct req *q, int status, const char *type,
                                 const char *text, size_t n)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    r = MHD_create_response_from_buffer(n, (void *)text,
                                        MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    add_common(s, c, r, q);
    q->status = status;
    ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

/* A JSON object (consumed) as the response. */
static enum MHD_Result send_json(struct server *s, struct MHD_Connection *c,
                                 struct req *q, int status, json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER)
                   : NULL;
    enum MHD_Result ret;

    json_decref(o);
    askdb_json_shorten_reals(text);
    if (!text)
        return send_text(s, c, q, 500, "application/json",
                         "{\"error\":{\"code\":\"internal\",\"message\":"
                         "\"out of memory\"}}", 58);
    ret = send_text(s, c, q, status, "application/json", text, strlen(text));
    free(text);
    return ret;
}

/* The methods a path takes, for Allow. */
static const char *allowed(const char *path)
{
    if (strcmp(path, "/api/ask") == 0 || strcmp(path, "/api/sql") == 0)
        return "POST, OPTIONS";
    if (strcmp(path, "/mcp") == 0)
        return "POST, DELETE, OPTIONS";
    return "GET, HEAD, OPTIONS";
}

/* {"error": {"code", "message"}} with the status; extra headers after. */
static enum MHD_Result send_error(struct server *s, struct MHD_Connection *c,
                                  struct req *q, int status, const char *code,
                                  const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static enum MHD_Result send_error(struct server *s, struct MHD_Connection *c,
                                  struct req *q, int status, const char *code,
                                  const char *fmt, ...)
{
    struct MHD_Response *r;
    enum MHD_Result ret;
    char msg[1024], *text;
    json_t *o;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* The message may quote the request (its path, Host, a header), any
    ** bytes: not UTF-8, jansson made no document of it and the client
    ** got no answer at all, the connection closed. */
    srv_utf8_clean(msg);
    o = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg);
    text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        return MHD_NO;
    r = MHD_create_response_from_buffer(strlen(text), text,
                                        MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    add_common(s, c, r, q);
    if (status == 401)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
    if (status == 503 || status == 429)
        MHD_add_response_header(r, "Retry-After", "1");
    if (status == 405)
        MHD_add_response_header(r, "Allow", allowed(q->path));
    q->status = status;
    ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

/* The 404 of a database name the server does not serve. */
static enum MHD_Result no_database(struct server *s, struct MHD_Connection *c,
                                   struct req *q, const char *name)
{
    return send_error(s, c, q, 404, "not_found", "no database '%s' (GET "
                      "/api/databases lists them)", name);
}

/* ---------------------------------------------------------------------- */
/* Checks                                                                 */
/* ---------------------------------------------------------------------- */

/* Equal in time that does not depend on where they differ. */
static int same_secret(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b), i;
    unsigned char d = na != nb;

    for (i = 0; i < nb; i++)
        d |= (unsigned char)(a[i % (na ? na : 1)] ^ b[i]);
    return d == 0 && na == nb;
}

static int authorized(struct server *s, struct MHD_Connection *c)
{
    const char *h;

    if (!s->token)
        return 1;
    h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return 0;
    return same_secret(h + 7, s->token);
}

/* The request's id: the client's X-Request-Id when it is a sane token
** (letters, digits, '-', '_', '.', at most 64), else a new one. */
static void request_id(struct MHD_Connection *c, char *out, size_t n)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                "X-Request-Id");

    if (srv_token_ok(h, n - 1 < 64 ? n - 1 : 64, "-_."))
        memcpy(out, h, strlen(h) + 1);
    else
        srv_random_id(out);
}

static void client_addr(struct MHD_Connection *c, char *out, size_t n)
{
    const union MHD_ConnectionInfo *ci;
    const struct sockaddr *sa;

    snprintf(out, n, "?");
    ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr)
        return;
    sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out,
                  (socklen_t)n);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr,
                  out, (socklen_t)n);
}

/*
** Whether an Accept header lists text/event-stream (its media type
** exactly, in any case) with a q above 0: "text/event-stream;q=0" and
** "text/event-streamx" do not ask for a stream.
*/
static int accepts_sse(const char *accept)
{
    static const char want[] = "text/event-stream";
    const char *p = accept, *end, *q;
    size_t n;

    while (p && *p) {
        p += strspn(p, " \t,");
        end = p + strcspn(p, ",");
        n = strcspn(p, ";,");
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n == sizeof want - 1 && strncasecmp(p, want, n) == 0) {
            double qv = 1;
            for (q = p + n; q < end; q++)
                if (*q == ';') {
                    const char *v = q + 1 + strspn(q + 1, " \t");
                    if ((v[0] == 'q' || v[0] == 'Q') && v[1] == '=')
                        qv = strtod(v + 2, NULL);
                }
            if (qv > 0)
                return 1;
        }
        p = end;
    }
    return 0;
}

/* A POST body must be JSON: 415 otherwise (queued, returns 0). */
static int json_typed(struct server *s, struct MHD_Connection *c,
                      struct req *q, enum MHD_Result *ret)
{
    const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                   "Content-Type");

    if (!type || strncasecmp(type, "application/json", 16) != 0 ||
        (type[16] && type[16] != ';' && type[16] != ' ')) {
        *ret = send_error(s, c, q, 415, "unsupported_media_type",
                          "send the request as application/json");
        return 0;
    }
    return 1;
}

/* The 400 of a parser's refusal. */
static enum MHD_Result bad_body(struct server *s, struct MHD_Connection *c,
                                struct req *q, int rc, const char *why)
{
    return send_error(s, c, q, 400, rc == SRV_BAD_JSON ? "bad_json"
                                                       : "bad_request",
                      "%s", why);
}

/* ---------------------------------------------------------------------- */
/* Endpoints                                                              */
/* ---------------------------------------------------------------------- */

static enum MHD_Result get_health(struct server *s, struct MHD_Connection *c,
                                  struct req *q)
{
    return send_json(s, c, q, 200,
                     json_pack("{s:s, s:s, s:s, s:s?, s:i}", "status", "ok",
                               "version", askdb_version(), "provider",
                               askdb_model_provider(s->model), "model",
                               s->cfg.model, "databases", s->ndbs));
}

static enum MHD_Result get_databases(struct server *s,
                                     struct MHD_Connection *c, struct req *q)
{
    json_t *arr = json_array();
    int i;

    for (i = 0; i < s->ndbs; i++)
        json_array_append_new(arr, json_pack("{s:s, s:s, s:i}", "name",
                                             s->dbs[i].name, "engine",
                                             s->dbs[i].engine, "tables",
                                             s->dbs[i].ntables));
    return send_json(s, c, q, 200, json_pack("{s:o}", "databases", arr));
}

static enum MHD_Result get_schema(struct server *s, struct MHD_Connection *c,
                                  struct req *q, const char *name)
{
    struct srv_db *db = srv_find_db(s, name);

    if (!db)
        return no_database(s, c, q, name);
    return send_text(s, c, q, 200, "application/json", db->schema_json,
                     strlen(db->schema_json));
}

/* srv_gone_fn of a statement's watch (ud: its handle): a hang-up
** cancels it, as it does a question. */
static void sql_gone(void *ud)
{
    askdb_db_cancel(ud);
}

/* Run sql on h while a thread watches the client (srv_watch). */
static askdb_status watched_query(struct MHD_Connection *c, askdb_db *h,
                                  const char *sql, askdb_result **out)
{
    const union MHD_ConnectionInfo *ci;
    struct srv_watch w;
    askdb_status st;

    ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    srv_watch_start(&w, ci ? ci->connect_fd : -1, sql_gone, h);
    st = askdb_db_query(h, sql, out);
    srv_watch_stop(&w);
    return st;
}

/* askdb_db_open()'s open_fn for a statement's handle: a stop cancels it
** (sql_stop_opens()), at once when the stop began before. */
static void sql_opening(void *ud, askdb_agent *ag, askdb_db *db)
{
    struct srv_sql *slot = ud;

    (void)ag;
    pthread_mutex_lock(&slot->srv->mu);
    slot->opening = db;
    if (db && atomic_load(&slot->srv->stopping))
        askdb_db_cancel(db);
    pthread_mutex_unlock(&slot->srv->mu);
}

/* The stop: cancel the opens of /api/sql in flight. An open to a server
** that takes the connection and answers nothing would hold its
** connection's thread, which MHD_stop_daemon() waits for, until its
** connect timeout; a statement that runs keeps its --timeout. */
static void sql_stop_opens(struct server *s)
{
    struct srv_sql *it;

    pthread_mutex_lock(&s->mu);
    for (it = s->sqls; it; it = it->next)
        if (it->opening)
            askdb_db_cancel(it->opening);
    pthread_mutex_unlock(&s->mu);
}

/* Count a statement of client in (slot: the caller's, until sql_end()):
** 0, or 429 / 503 when it may not run now. */
static int sql_begin(struct server *s, struct srv_sql *slot,
                     const char *client)
{
    const struct srv_sql *it;
    int mine = 0, rc = 0;

    pthread_mutex_lock(&s->mu);
    for (it = s->sqls; it; it = it->next)
        mine += strcmp(it->client, client) == 0;
    if (mine >= s->per_client) {
        rc = 429;
    } else if (s->nsql >= SRV_SQL_MAX) {
        rc = 503;
    } else {
        slot->client = client;
        slot->srv = s;
        slot->opening = NULL;
        slot->next = s->sqls;
        s->sqls = slot;
        s->nsql++;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static void sql_end(struct server *s, struct srv_sql *slot)
{
    struct srv_sql **pp;

    pthread_mutex_lock(&s->mu);
    for (pp = &s->sqls; *pp; pp = &(*pp)->next)
        if (*pp == slot) {
            *pp = slot->next;
            break;
        }
    s->nsql--;
    pthread_mutex_unlock(&s->mu);
}

static enum MHD_Result post_sql(struct server *s, struct MHD_Connection *c,
                                struct req *q)
{
    enum MHD_Result ret = MHD_NO;
    struct srv_sql_req rq;
    askdb_result *r = NULL;
    askdb_db *h = NULL;
    struct srv_sql slot;
    struct srv_db *db;
    askdb_config cfg;
    askdb_status st;
    char *text = NULL, why[512];
    int rc, running = 0;

    if (!json_typed(s, c, q, &ret))
        return ret;
    rc = srv_parse_sql(q->body, q->len, &rq, why, sizeof why);
    if (rc)
        return bad_body(s, c, q, rc, why);
    snprintf(q->db, sizeof q->db, "%s", rq.database);
    db = srv_find_db(s, rq.database);
    if (!db) {
        ret = no_database(s, c, q, rq.database);
        goto out;
    }
    rc = sql_begin(s, &slot, q->client);
    if (rc) {
        ret = rc == 429
            ? send_error(s, c, q, 429, "too_many_requests", "too many "
                         "statements from this client at once; wait for "
                         "one to finish")
            : send_error(s, c, q, 503, "unavailable", "%d statements are "
                         "running; try again shortly", SRV_SQL_MAX);
        goto out;
    }
    running = 1;
    cfg = s->cfg;
    cfg.open_fn = sql_opening;
    cfg.open_ud = &slot;
    st = askdb_db_open(db->path, &cfg, &h);
    if (st == ASKDB_ERR_CANCELLED && atomic_load(&s->stopping)) {
        ret = send_error(s, c, q, 503, "unavailable", "the server stopped "
                         "while the database was being opened; send the "
                         "statement again once it runs");
        goto out;
    }
    if (st) {
        ret = send_error(s, c, q, 503, "database", "%s", askdb_db_errmsg(h));
        goto out;
    }
    st = watched_query(c, h, rq.sql, &r);
    if (askdb_result_json(r, rq.sql, st ? askdb_db_errmsg(h) : NULL, 0,
                          &text) != ASKDB_OK) {
        ret = send_error(s, c, q, 500, "internal", "out of memory");
        goto out;
    }
    /* A refused or failing statement is the client's: 400 with the
    ** reason in the same document. */
    ret = send_text(s, c, q, st ? 400 : 200, "application/json", text,
                    strlen(text));
out:
    askdb_free(text);
    askdb_result_free(r);
    askdb_db_close(h);
    json_decref(rq.root);
    if (running)
        sql_end(s, &slot);
    return ret;
}

static enum MHD_Result post_ask(struct server *s, struct MHD_Connection *c,
                                struct req *q)
{
    const union MHD_ConnectionInfo *ci;
    enum MHD_Result ret = MHD_NO;
    struct MHD_Response *r;
    struct srv_ask_req rq;
    struct srv_ask a;
    const char *accept, *why;
    char msg[512];
    int rc, status;

    if (!json_typed(s, c, q, &ret))
        return ret;
    rc = srv_parse_ask(q->body, q->len, &rq, msg, sizeof msg);
    if (rc)
        return bad_body(s, c, q, rc, msg);
    memset(&a, 0, sizeof a);
    snprintf(q->db, sizeof q->db, "%s", rq.database);
    a.db = srv_find_db(s, rq.database);
    if (!a.db) {
        ret = no_database(s, c, q, rq.database);
        goto out;
    }
    accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    a.sse = accepts_sse(accept);
    a.question = rq.question;
    a.conversation_id = rq.conversation_id;
    a.answer = rq.answer;
    a.request_id = q->request_id;
    a.client = q->client;
    ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    a.conn_fd = ci ? ci->connect_fd : -1;
    r = srv_ask_response(s, &a, &status, &why, q->conv_id);
    if (!r) {
        ret = send_error(s, c, q, status, status == 429 ? "too_many_requests"
                         : status == 503 ? "unavailable" : "internal", "%s",
                         why);
        goto out;
    }
    MHD_add_response_header(r, "Content-Type", a.sse ? "text/event-stream"
                                                     : "application/json");
    MHD_add_response_header(r, "X-Conversation-Id", q->conv_id);
    if (a.sse)
        MHD_add_response_header(r, "X-Accel-Buffering", "no");
    add_common(s, c, r, q);
    q->status = 200;
    ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
out:
    srv_req_free(&rq);
    return ret;
}

/* The page's file at path p (web_assets.h: "/" and "/assets/NAME"), or
** NULL. */
static const struct web_asset *find_asset(const char *p)
{
    size_t i;

    if (strcmp(p, "/index.html") == 0)
        p = "/";
    for (i = 0; i < web_nassets; i++)
        if (strcmp(web_assets[i].path, p) == 0)
            return &web_assets[i];
    return NULL;
}

/*
** One of the page's files, compiled in (nothing is read from disk). The
** page gets a content security policy that allows only its own files and
** the API: what the model or a database says can never run as script.
*/
static enum MHD_Result send_asset(struct server *s, struct MHD_Connection *c,
                                  struct req *q, const struct web_asset *w)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    r = MHD_create_response_from_buffer(w->len, (void *)w->data,
                                        MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", w->type);
    MHD_add_response_header(r, "ETag", w->etag);
    if (strcmp(w->path, "/") == 0) {
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'self'; img-src 'self' data: "
                                "blob:; object-src 'none'; base-uri 'none'; "
                                "form-action 'none'; frame-ancestors 'none'");
        MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    }
    add_common(s, c, r, q);
    q->status = 200;
    ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/*
** Whether the request is addressed to this server by a name that only
** this machine gives it. Without a token the server listens on loopback
** alone, and the only thing between a web page of another site and the
** databases is the browser's same-origin rule: a site whose name the
** attacker re-points at 127.0.0.1 (DNS rebinding) is, to the browser, the
** page's own origin, and its requests carry that name in Host. So without
** a token the Host must be localhost or a loopback address (any port);
** with one, any name (behind a proxy, say): a rebinding page does not
** have the token. No Host at all (HTTP/1.0) is not a browser.
*/
static int host_ok(struct server *s, struct MHD_Connection *c)
{
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                   "Host");
    char name[256];
    const char *end;
    struct in_addr a4;
    struct in6_addr a6;
    size_t n;

    if (s->token || !host)
        return 1;
    if (host[0] == '[') {
        /* Any spelling of ::1 ([0:0:0:0:0:0:0:1], [::0001]), and
        ** 127.x.x.x mapped ([::ffff:127.0.0.1]): the same address. */
        end = strchr(host, ']');
        if (!end || (end[1] && end[1] != ':'))
            return 0;
        n = (size_t)(end - host) - 1;
        if (n == 0 || n >= sizeof name)
            return 0;
        memcpy(name, host + 1, n);
        name[n] = '\0';
        if (inet_pton(AF_INET6, name, &a6) != 1)
            return 0;
        return IN6_IS_ADDR_LOOPBACK(&a6) ||
               (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
    }
    end = strchr(host, ':');
    n = end ? (size_t)(end - host) : strlen(host);
    if (n == 0 || n >= sizeof name)
        return 0;
    memcpy(name, host, n);
    name[n] = '\0';
    if (n > 0 && name[n - 1] == '.')
        name[--n] = '\0';   /* "localhost." is localhost */
    if (strcasecmp(name, "localhost") == 0)
        return 1;
    return inet_pton(AF_INET, name, &a4) == 1 &&
           (ntohl(a4.s_addr) >> 24) == 127;
}

/* Whether a browser's Origin may talk to /mcp: none (not a browser), the
** server's own (http://, the name in Host, which host_ok() has checked),
** or --cors-origin. */
static int origin_ok(struct server *s, struct MHD_Connection *c)
{
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                     "Origin");
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                   "Host");
    const char *o;

    if (!origin)
        return 1;
    if (s->cors_origin && strcmp(origin, s->cors_origin) == 0)
        return 1;
    o = strncmp(origin, "http://", 7) == 0 ? origin + 7 : NULL;
    return o && host && strcmp(o, host) == 0;
}

/* libmicrohttpd's iterator over a request's headers, after r was looked
** up (the first of each name): one of the headers that mirror an MCP
** request other than that first is sent twice, and a proxy that reads the
** other one would route by what askdb does not run. */
static enum MHD_Result count_route(void *cls, enum MHD_ValueKind kind,
                                   const char *key, const char *value)
{
    static const char *const names[] = {"MCP-Protocol-Version",
                                        "Mcp-Method", "Mcp-Name"};
    struct mcp_route *r = cls;
    const char *first[] = {r->version, r->method, r->name};
    size_t i;

    (void)kind;
    for (i = 0; i < 3; i++)
        if (strcasecmp(key, names[i]) == 0 && value != first[i])
            r->duplicate = names[i];
    return MHD_YES;
}

/* /mcp: MCP's Streamable HTTP transport (mcp_http.c). */
static enum MHD_Result route_mcp(struct server *s, struct MHD_Connection *c,
                                 struct req *q)
{
    const union MHD_ConnectionInfo *ci;
    struct srv_mcp_req mq;
    struct MHD_Response *r;
    struct mcp_in in, *parsed = NULL;   /* &in once it holds the body */
    enum MHD_Result ret = MHD_NO;
    const char *accept, *why, *ver, *body = q->body ? q->body : "";
    char sid[40], known[100];
    int status, over;

    if (!origin_ok(s, c))
        return send_error(s, c, q, 403, "forbidden", "this Origin may not "
                          "use /mcp (see --cors-origin)");
    if (!authorized(s, c))
        return send_error(s, c, q, 401, "unauthorized",
                          "send the server's token as 'Authorization: "
                          "Bearer TOKEN'");
    ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                      "MCP-Protocol-Version");
    memset(&mq, 0, sizeof mq);
    mq.client = q->client;
    mq.session = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                             "Mcp-Session-Id");
    /* A stateless request (2026-07-28) is told of a revision askdb does
    ** not speak in its own terms, a JSON-RPC error (mcp_http.c); a
    ** session's request must name a revision of the handshake. The body
    ** is parsed here only when the header alone does not settle it
    ** (never for a request of the handshake), and then once: a POST
    ** hands what was read to srv_mcp_post(). A POST over
    ** MCP_MAX_MESSAGE is let through unread: srv_mcp_post() refuses it
    ** (-32600) whatever its header says, as under a known revision;
    ** mcp_in_read() leaves it unread here too, so it would never be
    ** found stateless and would get askdb's 400 below instead. */
    over = strcmp(q->method, "POST") == 0 && q->len > MCP_MAX_MESSAGE;
    if (ver && !mcp_version_known(ver) && !over &&
        !(mcp_version_stateless(ver) && !mq.session)) {
        mcp_in_read(&in, body, q->len);
        if (!mcp_in_stateless(&in)) {
            mcp_in_free(&in);
            mcp_versions_text(known, sizeof known);
            return send_error(s, c, q, 400, "bad_request", "unsupported "
                              "MCP-Protocol-Version '%s' (%s)%s", ver, known,
                              mcp_version_stateless(ver)
                              ? ": 2026-07-28 has no session, its requests "
                                "name it in params._meta" : "");
        }
        parsed = &in;
    }
    if (strcmp(q->method, "POST") != 0) {
        mcp_in_free(parsed);   /* only a POST's body is a message */
        parsed = NULL;
    }
    mq.route.version = ver;
    mq.route.method = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                  "Mcp-Method");
    mq.route.name = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                "Mcp-Name");
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_route, &mq.route);
    if (strcmp(q->method, "DELETE") == 0) {
        if (!mq.session)
            return send_error(s, c, q, 400, "bad_request",
                              "DELETE needs the Mcp-Session-Id");
        if (srv_mcp_delete(s->mcp, mq.session))
            return send_error(s, c, q, 404, "not_found", "no such MCP "
                              "session");
        return send_text(s, c, q, 204, "text/plain", "", 0);
    }
    if (strcmp(q->method, "POST") != 0)
        return send_error(s, c, q, 405, "method_not_allowed", "POST a "
                          "JSON-RPC message (this server starts no stream "
                          "of its own: no GET)");
    if (!json_typed(s, c, q, &ret)) {
        mcp_in_free(parsed);
        return ret;
    }
    accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    mq.sse = accepts_sse(accept);
    mq.body = body;
    mq.len = q->len;
    mq.in = parsed;
    ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    mq.conn_fd = ci ? ci->connect_fd : -1;
    r = srv_mcp_post(s->mcp, &mq, &status, &why, sid);
    if (!r)
        return send_error(s, c, q, status, status == 404 ? "not_found"
                          : status == 400 ? "bad_request"
                          : status == 503 ? "unavailable" : "internal",
                          "%s", why);
    if (sid[0])
        MHD_add_response_header(r, "Mcp-Session-Id", sid);
    add_common(s, c, r, q);
    q->status = status;
    ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result route(struct server *s, struct MHD_Connection *c,
                             struct req *q)
{
    int get = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
    int post = strcmp(q->method, "POST") == 0;
    const char *p = q->path;
    size_t n;

    if (!host_ok(s, c))
        return send_error(s, c, q, 403, "forbidden", "this server answers "
                          "requests addressed to localhost or a loopback "
                          "address only, not to '%s': a web page of "
                          "another site could reach it under such a name "
                          "(DNS rebinding); use http://127.0.0.1:PORT/, or "
                          "set a token (--token) to allow any name",
                          MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                      "Host"));
    if (strcmp(q->method, "OPTIONS") == 0) {
        struct MHD_Response *r = MHD_create_response_from_buffer(
            0, (void *)"", MHD_RESPMEM_PERSISTENT);
        enum MHD_Result ret;
        if (!r)
            return MHD_NO;
        add_common(s, c, r, q);
        MHD_add_response_header(r, "Allow", allowed(p));
        if (s->cors_origin) {
            MHD_add_response_header(r, "Access-Control-Allow-Methods",
                                    allowed(p));
            MHD_add_response_header(r, "Access-Control-Allow-Headers",
                                    "Authorization, Content-Type, "
                                    "X-Request-Id, Accept, Mcp-Session-Id, "
                                    "MCP-Protocol-Version, Mcp-Method, "
                                    "Mcp-Name");
            MHD_add_response_header(r, "Access-Control-Max-Age", "600");
        }
        q->status = 204;
        ret = MHD_queue_response(c, 204, r);
        MHD_destroy_response(r);
        return ret;
    }
    if (find_asset(p)) {
        if (!get)
            return send_error(s, c, q, 405, "method_not_allowed",
                              "use GET");
        return send_asset(s, c, q, find_asset(p));
    }
    if (strcmp(p, "/health") == 0)
        return get ? get_health(s, c, q)
                   : send_error(s, c, q, 405, "method_not_allowed", "use GET");
    if (strcmp(p, "/api/openapi.json") == 0)
        return get ? send_text(s, c, q, 200, "application/json",
                               srv_openapi_json, strlen(srv_openapi_json))
                   : send_error(s, c, q, 405, "method_not_allowed", "use GET");
    if (strcmp(p, "/mcp") == 0)
        return route_mcp(s, c, q);
    if (strncmp(p, "/api/", 5) != 0)
        return send_error(s, c, q, 404, "not_found", "no such path: %s", p);
    if (!authorized(s, c))
        return send_error(s, c, q, 401, "unauthorized",
                          "send the server's token as 'Authorization: "
                          "Bearer TOKEN'");
    if (strcmp(p, "/api/databases") == 0)
        return get ? get_databases(s, c, q)
                   : send_error(s, c, q, 405, "method_not_allowed", "use GET");
    n = strlen("/api/databases/");
    if (strncmp(p, "/api/databases/", n) == 0 && strlen(p) > n + 7 &&
        strcmp(p + strlen(p) - 7, "/schema") == 0) {
        char name[128];
        size_t len = strlen(p) - n - 7;
        if (!get)
            return send_error(s, c, q, 405, "method_not_allowed", "use GET");
        if (len >= sizeof name)
            return send_error(s, c, q, 404, "not_found", "no such database");
        memcpy(name, p + n, len);
        name[len] = '\0';
        return get_schema(s, c, q, name);
    }
    if (strcmp(p, "/api/ask") == 0)
        return post ? post_ask(s, c, q)
                    : send_error(s, c, q, 405, "method_not_allowed",
                                 "use POST");
    if (strcmp(p, "/api/sql") == 0)
        return post ? post_sql(s, c, q)
                    : send_error(s, c, q, 405, "method_not_allowed",
                                 "use POST");
    return send_error(s, c, q, 404, "not_found", "no such path: %s", p);
}

/* The body's length its Content-Length announces; 0 without one (or
** one that is no number), SIZE_MAX past what size_t holds. */
static size_t announced(struct MHD_Connection *c)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                "Content-Length");
    unsigned long long n;
    char *end;

    if (!v || *v < '0' || *v > '9')
        return 0;
    errno = 0;
    n = strtoull(v, &end, 10);
    if (errno == ERANGE || n > SIZE_MAX)
        return SIZE_MAX;
    return *end ? 0 : (size_t)n;
}

/* Whether the request says "Expect: 100-continue". */
static int expects_continue(struct MHD_Connection *c)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                "Expect");

    return v && strcasecmp(v, "100-continue") == 0;
}

static enum MHD_Result too_large(struct server *s, struct MHD_Connection *c,
                                 struct req *q)
{
    return send_error(s, c, q, 413, "too_large", "the body is larger than "
                      "%zu bytes", s->max_body);
}

/*
** q is about to be answered: a stop waits (within its grace) until its
** response is sent. A request still sending its body is not counted: a
** slow uploader held a stop for the whole grace, for a request that
** would only have been refused.
*/
static void answering(struct server *s, struct req *q)
{
    if (!q->answering) {
        q->answering = 1;
        atomic_fetch_add(&s->answering, 1);
    }
}

/* libmicrohttpd's access handler: collect the body (capped), then route. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    struct server *s = cls;
    struct req *q = *con_cls;
    char *grown;

    (void)version;
    if (!q) {
        q = calloc(1, sizeof *q);
        if (!q)
            return MHD_NO;
        q->t0 = srv_now_ms();
        snprintf(q->method, sizeof q->method, "%s", method);
        snprintf(q->path, sizeof q->path, "%s", url);
        request_id(c, q->request_id, sizeof q->request_id);
        client_addr(c, q->client, sizeof q->client);
        *con_cls = q;
        /* A body announced past the cap by a client that waits for "100
        ** Continue" before sending it is refused now, unsent (answered
        ** here, libmicrohttpd sends no 100). One that sends its body
        ** straight away is read to its end and then refused: answered
        ** early, it would find the connection closed under its upload
        ** (a broken pipe, not the 413). */
        if (expects_continue(c) && announced(c) > s->max_body) {
            q->too_big = 1;
            answering(s, q);
            return too_large(s, c, q);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (!q->too_big && q->len + *upload_size > s->max_body) {
            q->too_big = 1;
            free(q->body);
            q->body = NULL;
            q->len = 0;
        }
        /* Read to its end so the client hears the 413, but not past
        ** DROP_MAX: a body that never ends (chunked) held a connection's
        ** thread for as long as it was sent. Cut, the client sees its
        ** connection closed; the access log says 413, not completed. */
        if (q->too_big && (q->dropped += *upload_size) > DROP_MAX) {
            q->status = 413;
            return MHD_NO;
        }
        if (!q->too_big) {
            grown = realloc(q->body, q->len + *upload_size + 1);
            if (!grown)
                return MHD_NO;
            q->body = grown;
            memcpy(q->body + q->len, upload, *upload_size);
            q->len += *upload_size;
            q->body[q->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (q->status)   /* answered already */
        return MHD_YES;
    answering(s, q);
    if (q->too_big)
        return too_large(s, c, q);
    return route(s, c, q);
}

/* The access log line of a finished request, as JSON. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct server *s = cls;
    struct req *q = *con_cls;
    char ts[32], *line;
    struct tm tm;
    time_t now;
    json_t *o;

    (void)c;
    if (!q)
        return;
    if (s->access_log) {
        /* The path is as the client sent it (decoded, any bytes) and,
        ** as the database, cut to its buffer, maybe within a character:
        ** not UTF-8, the line was not written, and a request could keep
        ** itself out of the log. */
        srv_utf8_clean(q->method);
        srv_utf8_clean(q->path);
        srv_utf8_clean(q->db);
        now = time(NULL);
        gmtime_r(&now, &tm);
        strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
        o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:f, s:b}", "ts", ts,
                      "request_id", q->request_id, "client", q->client,
                      "method", q->method, "path", q->path, "status",
                      q->status, "ms", srv_now_ms() - q->t0, "completed",
                      toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
        if (o && q->db[0])
            json_object_set_new(o, "database", json_string(q->db));
        if (o && q->conv_id[0])
            json_object_set_new(o, "conversation_id",
                                json_string(q->conv_id));
        line = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        askdb_json_shorten_reals(line);
        if (line) {
            pthread_mutex_lock(&s->log_mu);
            fprintf(s->access_log, "%s\n", line);
            fflush(s->access_log);
            pthread_mutex_unlock(&s->log_mu);
        }
        free(line);
    }
    if (q->answering)
        atomic_fetch_sub(&s->answering, 1);
    free(q->body);
    free(q);
    *con_cls = NULL;
}

/* Wait (wait_ms at most) until every request taken is answered: a
** response written but not yet sent (a statement's of /api/sql, ended by
** the stop) would be cut off by MHD_stop_daemon(). */
static void answered_wait(struct server *s, int wait_ms)
{
    double t0 = srv_now_ms();
    struct timespec ts = {0, 10 * 1000000L};

    while (atomic_load(&s->answering) > 0 && srv_now_ms() - t0 < wait_ms)
        nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------------- */
/* Running                                                                */
/* ---------------------------------------------------------------------- */

/*
** libmicrohttpd's messages, on stderr with askdb's prefix. One is left
** out: "Closing connection (application error generating response)" is
** what it says when a streamed body ends because its client went away
** (stream.c ends the body so, and the access log has the request): every
** closed browser tab or cancelled curl printed it.
*/
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];

    (void)cls;
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (strstr(msg, "application error generating response"))
        return;
    fprintf(stderr, "askdb serve: %s", msg);
}

/* Parse "HOST:PORT" ("[::1]:8080" for IPv6) into an address. */
static int parse_listen(const char *listen, struct sockaddr_storage *ss,
                        socklen_t *len)
{
    struct addrinfo hints, *res = NULL;
    char host[256];
    const char *colon = strrchr(listen, ':'), *d;
    size_t n;

    if (!colon || colon == listen || !colon[1])
        return -1;
    /* 0 to 65535 in decimal digits: getaddrinfo() takes 99999 modulo
    ** 65536 without a word. */
    for (d = colon + 1; *d >= '0' && *d <= '9'; d++)
        ;
    if (*d || d - (colon + 1) > 5 || strtol(colon + 1, NULL, 10) > 65535)
        return -1;
    n = (size_t)(colon - listen);
    if (listen[0] == '[' && n >= 2 && listen[n - 1] == ']') {
        listen++;
        n -= 2;
    }
    if (n >= sizeof host)
        return -1;
    memcpy(host, listen, n);
    host[n] = '\0';
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || !res)
        return -1;
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

/* Whether the address is a loopback one (127.0.0.0/8 or ::1). */
static int is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >>
                24) == 127;
    if (ss->ss_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(
            &((const struct sockaddr_in6 *)ss)->sin6_addr);
    return 0;
}

int srv_listen_ok(const char *listen)
{
    struct sockaddr_storage ss;
    socklen_t len;

    return parse_listen(listen, &ss, &len) == 0;
}

int srv_is_loopback(const char *listen)
{
    struct sockaddr_storage ss;
    socklen_t len;

    return parse_listen(listen, &ss, &len) == 0 && is_loopback(&ss);
}

int srv_run(struct server *s, const char *listen)
{
    struct sockaddr_storage ss;
    const union MHD_DaemonInfo *di;
    struct rlimit rl;
    struct MHD_Daemon *d;
    sigset_t set;
    socklen_t len;
    unsigned flags;
    MHD_socket lfd;
    double t0;
    int sig, grace;

    if (parse_listen(listen, &ss, &len)) {
        fprintf(stderr, "askdb serve: --listen takes HOST:PORT (e.g. "
                        "127.0.0.1:8080 or [::1]:8080), not '%s'\n", listen);
        return 2;
    }
    /* Many idle connections take a descriptor each. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    /* Signals are taken by this thread alone (sigwait below); every thread
    ** libmicrohttpd and the jobs start inherits the mask. */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
            MHD_USE_POLL | MHD_USE_ERROR_LOG | MHD_USE_ITC;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIMIT,
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)THREAD_STACK,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "askdb serve: cannot listen on %s: %s (is the port "
                        "taken? choose another with --listen)\n", listen,
                strerror(errno));
        return 3;
    }
    di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    {
        char host[256];
        const char *colon = strrchr(listen, ':');
        size_t hn = colon ? (size_t)(colon - listen) : 0;
        snprintf(host, sizeof host, "%.*s", (int)hn, listen);
        fprintf(stderr, "askdb serve: listening on http://%s:%u/ (%d "
                        "database%s, model: %s)\n", host, di ? di->port : 0,
                s->ndbs, s->ndbs == 1 ? "" : "s",
                askdb_model_provider(s->model));
    }
    fflush(stderr);
    sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    fprintf(stderr, "askdb serve: %s: finishing the questions in flight\n",
            sig == SIGINT ? "interrupt" : "terminate");
    atomic_store(&s->stopping, 1);
    /* No new connections: the listening socket closes, so a client is
    ** refused at once rather than left waiting in its backlog. */
    lfd = MHD_quiesce_daemon(d);
    if (lfd != MHD_INVALID_SOCKET)
        close(lfd);
    sql_stop_opens(s);
    srv_mcp_stop_opens(s->mcp);
    t0 = srv_now_ms();
    srv_jobs_stop(s, 10000);
    grace = 10000 - (int)(srv_now_ms() - t0);
    srv_mcp_stop(s->mcp, grace > 0 ? grace : 0);
    /* The answers written are sent before the connections close (under
    ** load the last events of a finished question were cut off). */
    grace = 10000 - (int)(srv_now_ms() - t0);
    t0 = srv_now_ms();
    grace = grace > 1000 ? grace : 1000;
    srv_streams_drain(grace);
    answered_wait(s, grace - (int)(srv_now_ms() - t0));
    MHD_stop_daemon(d);
    fprintf(stderr, "askdb serve: stopped\n");
    return 0;
}
