/* mcp_http.c - MCP's Streamable HTTP transport at /mcp inside askdb serve:
** the same protocol handler as askdb mcp (src/mcp/mcp.c), one session per
** Mcp-Session-Id, answers as JSON or as a stream of events. */
#include <jansson.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../mcp/mcp.h"
#include "mcp_http.h"
#include "server.h"
#include "stream.h"

/*
** - A POST carries one JSON-RPC message (or, in a session of revision
**   2025-03-26, a batch of them: one message to mcp.c, whose response is
**   an array, one JSON document or one event). A notification or a
**   response gets 202 and no body. A request gets its response: as one
**   JSON document, or, when the client accepts text/event-stream and the
**   request may take long (a tool call, a resource read), as events: the
**   notifications it makes on the way (progress, log lines), then the
**   response. One the client cancelled (notifications/cancelled) gets
**   no response, as on stdio and as the protocol asks: its stream ends
**   without one (an empty stream when it was not streamed); a client
**   that takes JSON alone, whose POST must get a document, gets
**   mcp_cancelled_reply()'s -32000 "request cancelled: ..." (a batch
**   whose every request was cancelled, an array of them). One the
**   server stops (shutdown, DELETE) gets -32000 with the reason.
** - At most MCP_MAX_RUNNING tool calls and resource reads run at once in
**   a session, as on stdio; more are refused "busy" (mcp_reject_busy()),
**   not queued. And at most --per-client of one client address, in all
**   its sessions and stateless requests together (each of which is a
**   session of its own: without that count a client had as many calls
**   running, each on a thread, as it sent).
** - `initialize` without a session header opens a session; its id comes
**   back in Mcp-Session-Id and every later message carries it (400
**   without, 404 for one the server does not know, e.g. after DELETE or
**   when it was dropped as the least recently used of MCP_SESSIONS).
** - A client that goes away is not a cancel (the protocol says so):
**   notifications/cancelled is, and it may come on any connection.
** - Once a stop begins (srv_mcp_stop_opens()) a POST gets 503, but one
**   of notifications/cancelled alone, which a client needs to cancel a
**   call the stop would wait for (up to 10 s); once srv_mcp_stop() saw
**   every POST answered, that one too.
** - GET (a stream the server starts) is not offered: 405.
** - A request of revision 2026-07-28 (its params._meta names the
**   revision; or, without a session, its MCP-Protocol-Version header
**   does, and then it needs that _meta all the same: -32602) has no
**   session: it runs in one of its own, never listed under an id, which
**   ends with its answer, and any Mcp-Session-Id it carries is ignored.
**   Its headers must say what its body says (-32020), its errors come
**   with the status the revision gives them (stateless_status(): 400 for
**   a bad request, 404 for an unknown method, 200 for the rest), and a
**   tool call is answered through a stream (events, or one JSON
**   document) whose closing by the client cancels it: that revision has
**   no notifications/cancelled over HTTP. A call that is not one (an
**   unknown tool) is answered before any stream, with its 400. A
**   resource read is answered as one document with its status, and the
**   client closing its connection cancels it too (srv_watch).
*/

#define MCP_SESSIONS 64

struct hsession {
    char id[40];
    struct mcp_session *ms;
    int users;               /* requests using it now (srv_mcp.mu) */
    int running;             /* its tool calls and resource reads running
                                (srv_mcp.mu) */
    int dead;                /* deleted: freed when the last user leaves */
    int stateless;           /* one request's alone: not counted in n */
    double last_used;
    struct hsession *next;
};

/* The tool calls and resource reads of one client address running now,
** in any session (srv_mcp.mu). */
struct hclient {
    char addr[64];
    int running;
    struct hclient *next;
};

struct srv_mcp {
    struct mcp_server *srv;
    int per_client;          /* calls of one address at once */
    struct hclient *clients; /* those with calls running */
    pthread_mutex_t mu;
    struct hsession *list;
    int n;
    int active;              /* POSTs being answered (srv_mcp_stop()) */
    int stopping;            /* STOP_...: new POSTs get 503 */
};

/* m->stopping: a stop began (srv_mcp_stop_opens()), new POSTs get 503 but
** those of cancels alone (post_begin_stopping()); then srv_mcp_stop() saw
** no POST left to answer, and every new one gets 503. */
enum { STOP_NONE, STOP_BEGUN, STOP_DONE };

struct srv_mcp *srv_mcp_new(struct mcp_server *srv, int per_client)
{
    struct srv_mcp *m = calloc(1, sizeof *m);

    if (!m)
        return NULL;
    m->srv = srv;
    m->per_client = per_client;
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

static void hsession_free(struct hsession *h)
{
    mcp_session_cancel_all(h->ms, "the session ended");
    mcp_session_free(h->ms);
    free(h);
}

void srv_mcp_free(struct srv_mcp *m)
{
    struct hsession *h, *next;

    if (!m)
        return;
    for (h = m->list; h; h = next) {
        next = h->next;
        hsession_free(h);
    }
    pthread_mutex_destroy(&m->mu);
    free(m);
}

/* The session of id with one more user, or NULL. */
static struct hsession *acquire(struct srv_mcp *m, const char *id)
{
    struct hsession *h;

    pthread_mutex_lock(&m->mu);
    for (h = m->list; h; h = h->next)
        if (!h->dead && strcmp(h->id, id) == 0) {
            h->users++;
            h->last_used = srv_now_ms();
            break;
        }
    pthread_mutex_unlock(&m->mu);
    return h;
}

/* Unlink h (m->mu held). */
static void unlink_locked(struct srv_mcp *m, struct hsession *h)
{
    struct hsession **pp;

    for (pp = &m->list; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            if (!h->stateless)
                m->n--;
            return;
        }
}

/*
** A POST begins to be answered: counted in m->active, which
** srv_mcp_stop() waits to see at 0, unless the stop has begun (0: then
** it gets 503); cancels says it holds notifications/cancelled alone,
** which is taken until srv_mcp_stop() saw none active. The look at
** stopping and the count are one step under m->mu: a POST that saw no
** stop and was counted only later, when it took its session, could run
** past a stop that had seen none active, on a stream's thread that
** nothing then waited for, after the sessions, agents and model were
** freed.
*/
static int post_begin(struct srv_mcp *m, int cancels)
{
    int ok;

    pthread_mutex_lock(&m->mu);
    ok = m->stopping == STOP_NONE ||
         (cancels && m->stopping == STOP_BEGUN);
    if (ok)
        m->active++;
    pthread_mutex_unlock(&m->mu);
    return ok;
}

/* The POST post_begin() counted is answered: its thread's last use of m
** (see srv_mcp_stop()). */
static void post_end(struct srv_mcp *m)
{
    pthread_mutex_lock(&m->mu);
    m->active--;
    pthread_mutex_unlock(&m->mu);
}

/* One user of h less, and the POST that took it is answered
** (post_end()). */
static void release(struct srv_mcp *m, struct hsession *h)
{
    int drop;

    pthread_mutex_lock(&m->mu);
    h->users--;
    h->last_used = srv_now_ms();
    drop = h->dead && h->users == 0;
    if (drop)
        unlink_locked(m, h);
    pthread_mutex_unlock(&m->mu);
    if (drop)
        hsession_free(h);
    post_end(m);
}

/* A session's memory with its MCP session and one user, not listed yet.
** NULL when out of memory. */
static struct hsession *hsession_new(struct srv_mcp *m)
{
    struct hsession *h = calloc(1, sizeof *h);

    if (!h)
        return NULL;
    h->ms = mcp_session_new(m->srv);
    if (!h->ms) {
        free(h);
        return NULL;
    }
    h->users = 1;
    return h;
}

/* A new session with one user; past MCP_SESSIONS the least recently used
** idle one is dropped. NULL when out of memory. */
static struct hsession *open_session(struct srv_mcp *m)
{
    struct hsession *h = hsession_new(m), *old = NULL, *it;

    if (!h)
        return NULL;
    srv_random_id(h->id);
    h->last_used = srv_now_ms();
    pthread_mutex_lock(&m->mu);
    if (m->n >= MCP_SESSIONS) {
        for (it = m->list; it; it = it->next)
            if (it->users == 0 && (!old || it->last_used < old->last_used))
                old = it;
        if (old)
            unlink_locked(m, old);
    }
    h->next = m->list;
    m->list = h;
    m->n++;
    pthread_mutex_unlock(&m->mu);
    if (old)
        hsession_free(old);
    return h;
}

/* The session of one stateless request, with it as its user: dead from
** the start (no id reaches it), freed by its release(). Listed, so that
** srv_mcp_stop() cancels its call. NULL when out of memory. */
static struct hsession *open_stateless(struct srv_mcp *m)
{
    struct hsession *h = hsession_new(m);

    if (!h)
        return NULL;
    h->dead = 1;
    h->stateless = 1;
    pthread_mutex_lock(&m->mu);
    h->next = m->list;
    m->list = h;
    pthread_mutex_unlock(&m->mu);
    return h;
}

void srv_mcp_stop_opens(struct srv_mcp *m)
{
    struct hsession *h;

    if (!m)
        return;
    mcp_server_stop(m->srv);
    pthread_mutex_lock(&m->mu);
    /* Not only once the questions of /api/ask have ended (srv_mcp_stop(),
    ** up to 10 s later): a POST taken until then would start a call. */
    m->stopping = STOP_BEGUN;
    for (h = m->list; h; h = h->next)
        mcp_session_cancel_opens(h->ms);
    pthread_mutex_unlock(&m->mu);
}

void srv_mcp_stop(struct srv_mcp *m, int grace_ms)
{
    struct timespec ts = {0, 20 * 1000000L};
    double t0 = srv_now_ms();
    struct hsession *h;
    int n, cancelled = 0;

    if (!m)
        return;
    for (;;) {
        pthread_mutex_lock(&m->mu);
        n = m->active;
        /* Once none is left, none comes: not even a cancel, which would
        ** use the sessions the caller is about to free. */
        m->stopping = n ? STOP_BEGUN : STOP_DONE;
        if (n && !cancelled && srv_now_ms() - t0 > grace_ms) {
            for (h = m->list; h; h = h->next)
                mcp_session_cancel_all(h->ms, "the server is stopping: "
                                       "send this again once it is back");
            cancelled = 1;
        }
        pthread_mutex_unlock(&m->mu);
        if (!n)
            return;
        nanosleep(&ts, NULL);
    }
}

int srv_mcp_delete(struct srv_mcp *m, const char *id)
{
    struct hsession *h;
    int drop = 0;

    pthread_mutex_lock(&m->mu);
    for (h = m->list; h; h = h->next)
        if (!h->dead && strcmp(h->id, id) == 0)
            break;
    if (h) {
        h->dead = 1;
        mcp_session_cancel_all(h->ms, "the session was ended (DELETE "
                               "/mcp): initialize a new one and send this "
                               "again there");
        drop = h->users == 0;
        if (drop)
            unlink_locked(m, h);
    }
    pthread_mutex_unlock(&m->mu);
    if (drop)
        hsession_free(h);
    return h ? 0 : -1;
}

/* ---------------------------------------------------------------------- */
/* A POST                                                                 */
/* ---------------------------------------------------------------------- */

/* The messages of a request answered in one JSON document: only its
** response is kept. */
struct collect {
    pthread_mutex_t mu;
    char *response;
};

static void collect_emit(void *ud, enum mcp_out kind, const char *json,
                         size_t len)
{
    struct collect *c = ud;

    if (kind != MCP_OUT_RESPONSE)
        return;
    pthread_mutex_lock(&c->mu);
    if (!c->response)
        c->response = strndup(json, len);
    pthread_mutex_unlock(&c->mu);
}

/* A slow request answered through a stream, on a thread of its own: as
** events, or (sse 0) as the response alone. */
struct slow {
    struct srv_mcp *m;
    struct hsession *h;
    struct mcp_msg *msg;
    struct srv_stream *out;
    struct hclient *who;     /* its client's count (run_begin()) */
    int sse;
    int answered;            /* the response was sent */
};

static void stream_emit(void *ud, enum mcp_out kind, const char *json,
                        size_t len)
{
    struct slow *w = ud;

    if (kind == MCP_OUT_RESPONSE)
        w->answered = 1;
    if (w->sse)
        srv_stream_event(w->out, "message", json, len);
    else if (kind == MCP_OUT_RESPONSE)
        srv_stream_put(w->out, json, len);
}

/* srv_gone_fn of a stateless request (ud: its hsession): the client
** closed its connection, or the stream of a tool call on it, which is how
** revision 2026-07-28 cancels over HTTP. */
static void stateless_gone(void *ud)
{
    struct hsession *h = ud;

    mcp_session_cancel_all(h->ms, "the client closed the connection");
}

/* The outcome of run_begin(). */
enum { RUN_OK, RUN_SESSION_BUSY, RUN_CLIENT_BUSY, RUN_NOMEM };

/* Whether another tool call or resource read may run in h, for the client
** at addr; if so it is counted, in h and as the client's (*who, for
** run_end()), until run_end(). */
static int run_begin(struct srv_mcp *m, struct hsession *h,
                     const char *addr, struct hclient **who)
{
    struct hclient *c;
    int rc = RUN_OK;

    pthread_mutex_lock(&m->mu);
    for (c = m->clients; c && strcmp(c->addr, addr) != 0; c = c->next)
        ;
    if (h->running >= MCP_MAX_RUNNING)
        rc = RUN_SESSION_BUSY;
    else if (c && c->running >= m->per_client)
        rc = RUN_CLIENT_BUSY;
    else if (!c && !(c = calloc(1, sizeof *c)))
        rc = RUN_NOMEM;
    else {
        if (!c->running) {
            snprintf(c->addr, sizeof c->addr, "%s", addr);
            c->next = m->clients;
            m->clients = c;
        }
        c->running++;
        h->running++;
        *who = c;
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static void run_end(struct srv_mcp *m, struct hsession *h,
                    struct hclient *who)
{
    struct hclient **pp;

    pthread_mutex_lock(&m->mu);
    h->running--;
    if (--who->running == 0) {
        for (pp = &m->clients; *pp != who; pp = &(*pp)->next)
            ;
        *pp = who->next;
        free(who);
    }
    pthread_mutex_unlock(&m->mu);
}

static void *slow_main(void *arg)
{
    struct slow *w = arg;
    struct srv_mcp *m = w->m;
    struct hsession *h = w->h;
    char *gone = NULL;

    /* Cancelled by the client, the session answers nothing, as the
    ** protocol asks: the events end without a response (the stream is
    ** the request's alone); a JSON document, which must be one, is
    ** mcp_cancelled_reply(). */
    if (!w->sse)
        gone = mcp_cancelled_reply(w->msg);
    mcp_dispatch(h->ms, w->msg, stream_emit, w);
    if (!w->answered && gone)
        srv_stream_put(w->out, gone, strlen(gone));
    free(gone);
    srv_stream_end(w->out);
    run_end(m, h, w->who);
    free(w);
    release(m, h);
    return NULL;
}

/*
** Whether a response is an error that says the message was not taken: one
** without an id (what mcp_parse() says to a body it could not read as a
** message, its id unknown), a parse error (-32700) or an invalid request
** (-32600: not JSON-RPC 2.0, a batch outside 2025-03-26, an id in use, a
** second initialize). /mcp answers these with 400, as the transport has a
** server answer input it cannot accept and as the TypeScript SDK answers
** a second initialize; the errors of a request the session took and ran
** (-32601, -32602, -32002, -32603) come with 200.
*/
static int not_taken(const char *response)
{
    json_t *o = json_loads(response, JSON_ALLOW_NUL, NULL);
    json_t *e = json_object_get(o, "error");
    json_int_t code = json_integer_value(json_object_get(e, "code"));
    int yes = e && (json_is_null(json_object_get(o, "id")) ||
                    code == -32700 || code == -32600);

    json_decref(o);
    return yes;
}

/* Whether a response is an error. */
static int is_error(const char *response)
{
    json_t *o = json_loads(response, JSON_ALLOW_NUL, NULL);
    int yes = json_object_get(o, "error") != NULL;

    json_decref(o);
    return yes;
}

/* The HTTP status of a stateless request's answer: revision 2026-07-28
** has a client tell the eras apart by it (a 400 or 404 with one of these
** errors is a server of that revision; any other 4xx, a server of the
** handshake's). */
static int stateless_status(const char *response)
{
    json_t *o = json_loads(response, JSON_ALLOW_NUL, NULL);
    json_int_t code = json_integer_value(
        json_object_get(json_object_get(o, "error"), "code"));

    json_decref(o);
    switch (code) {
    case -32700: case -32600: case -32602:
    case -32020: case -32021: case -32022:
        return 400;
    case -32601:
        return 404;
    default:
        return 200;
    }
}

/* A response of JSON text (malloc'd: the response takes it, or it is
** freed); NULL with *status 500 and *why when out of memory. */
static struct MHD_Response *json_response(char *text, int *status,
                                          const char **why)
{
    struct MHD_Response *r = NULL;

    if (text)
        r = MHD_create_response_from_buffer(strlen(text), text,
                                            MHD_RESPMEM_MUST_FREE);
    if (r) {
        MHD_add_response_header(r, "Content-Type", "application/json");
        return r;
    }
    free(text);
    *status = 500;
    *why = "out of memory";
    return NULL;
}

/* The answer to a message over MCP_MAX_MESSAGE: its JSON-RPC error, with
** 400 as for any other body that is not a message (not_taken()). */
static struct MHD_Response *too_long(int *status, const char **why)
{
    struct collect col;

    memset(&col, 0, sizeof col);
    pthread_mutex_init(&col.mu, NULL);
    mcp_error_too_long(collect_emit, &col);
    pthread_mutex_destroy(&col.mu);
    *status = 400;
    return json_response(col.response, status, why);
}

/*
** A POST that came once the stop began: whether it is taken all the same
** (then counted, as by post_begin()), because its body (read into own
** unless the caller read it: *in) is notifications/cancelled alone, for
** requests of its session. A client may cancel its call that the stop
** would otherwise wait for, up to its 10 s; any other message is refused.
*/
static int post_begin_stopping(struct srv_mcp *m,
                               const struct srv_mcp_req *q,
                               struct mcp_in **in, struct mcp_in *own)
{
    if (!q->session || q->len > MCP_MAX_MESSAGE)
        return 0;
    if (!*in) {
        *in = own;
        mcp_in_read(own, q->body, q->len);
    }
    return mcp_in_cancels_only(*in) && post_begin(m, 1);
}

struct MHD_Response *srv_mcp_post(struct srv_mcp *m,
                                  const struct srv_mcp_req *q, int *status,
                                  const char **why, char *session_out)
{
    struct MHD_Response *r = NULL;
    struct collect col;
    struct hsession *h;
    char *gone;
    struct mcp_in own, *in = q->in;
    struct mcp_msg *msg;
    struct slow *w;
    pthread_t th;
    struct srv_watch watch;
    struct hclient *who = NULL;
    char busy[200];
    int stateless, streamed, counted, watched, opened = 0;

    *status = 200;
    *why = NULL;
    session_out[0] = '\0';
    if (!post_begin(m, 0) && !post_begin_stopping(m, q, &in, &own)) {
        mcp_in_free(in);
        *status = 503;
        *why = "the server is stopping";
        return NULL;
    }
    /* A message over MCP_MAX_MESSAGE is refused before it is read, and
    ** before a session is chosen for it: which one depends on what it
    ** says (an initialize would open one only to see it refused). */
    if (q->len > MCP_MAX_MESSAGE) {
        mcp_in_free(in);
        post_end(m);
        return too_long(status, why);
    }
    /* The body is parsed once, here, by the caller or (in a stop) by
    ** post_begin_stopping(): the one message chooses the session and is
    ** what mcp_parse_in() then checks and the session runs. Decided
    ** here, once: the session a request runs in
    ** and what mcp_parse_in() asks of it must agree (a header that says
    ** 2026-07-28 over a body of the handshake is -32602, never served as
    ** the handshake's). */
    if (!in) {
        in = &own;
        mcp_in_read(in, q->body, q->len);
    }
    stateless = (!q->session && mcp_version_stateless(q->route.version)) ||
                mcp_in_stateless(in);
    if (stateless) {
        h = open_stateless(m);
        if (!h) {
            *status = 500;
            *why = "out of memory";
        }
    } else if (q->session) {
        h = acquire(m, q->session);
        if (!h) {
            *status = 404;
            *why = "no such MCP session (it ended or was dropped): "
                   "initialize a new one";
        }
    } else if (mcp_in_initialize(in)) {
        opened = 1;
        h = open_session(m);
        if (!h) {
            *status = 500;
            *why = "out of memory";
        }
    } else {
        /* No session, and no initialize to open one: the JSON-RPC error
        ** stdio gives a request before initialize (under the request's
        ** id), with the 400 the transport has a server give a message
        ** without its Mcp-Session-Id. */
        memset(&col, 0, sizeof col);
        pthread_mutex_init(&col.mu, NULL);
        mcp_in_reject(in, -32600, "no session: send initialize first, "
                      "without Mcp-Session-Id, then this with the "
                      "Mcp-Session-Id its answer carries", collect_emit,
                      &col);
        pthread_mutex_destroy(&col.mu);
        *status = 400;
        post_end(m);
        return json_response(col.response, status, why);
    }
    if (!h) {
        mcp_in_free(in);
        post_end(m);
        return NULL;
    }
    snprintf(session_out, 40, "%s", h->id);
    memset(&col, 0, sizeof col);
    pthread_mutex_init(&col.mu, NULL);
    msg = mcp_parse_in(h->ms, in, &q->route, stateless, collect_emit,
                       &col);
    /* A tool call or resource read counts in its session and as its
    ** client's until it is answered, on this thread or on its stream's. */
    counted = msg && mcp_msg_slow(msg);
    if (counted) {
        switch (run_begin(m, h, q->client ? q->client : "", &who)) {
        case RUN_OK:
            break;
        case RUN_SESSION_BUSY:
            mcp_reject_busy(h->ms, msg, collect_emit, &col);
            break;
        case RUN_CLIENT_BUSY:
            snprintf(busy, sizeof busy, "busy: %d tool calls and resource "
                     "reads of this client are running (askdb serve "
                     "--per-client); send this one again when one has "
                     "finished", m->per_client);
            mcp_reject(h->ms, msg, MCP_ERR_SERVER, busy, collect_emit,
                       &col);
            break;
        default:
            mcp_reject(h->ms, msg, -32603, "out of memory", collect_emit,
                       &col);
            break;
        }
        if (!who) {
            msg = NULL;
            counted = 0;
        }
    }
    /* A stateless tool call always goes through a stream, which tells
    ** when its client closes it; its other requests are answered at once,
    ** with their status, and so is a call that is not one (an unknown
    ** tool: mcp_parse_in() answered it), which a stream would send
    ** with 200. */
    if (!msg)
        streamed = 0;
    else if (stateless)
        streamed = mcp_msg_is(msg, "tools/call");
    else
        streamed = q->sse && mcp_msg_slow(msg);
    if (streamed) {
        w = calloc(1, sizeof *w);
        if (w) {
            w->h = h;
            w->sse = q->sse;
            w->out = srv_stream_new(q->conn_fd, q->sse,
                                    stateless ? stateless_gone : NULL, h,
                                    &r);
        }
        if (w && w->out) {
            w->m = m;
            w->h = h;
            w->msg = msg;
            w->who = who;
            if (pthread_create(&th, NULL, slow_main, w) == 0) {
                pthread_detach(th);
                MHD_add_response_header(r, "Content-Type", q->sse
                                        ? "text/event-stream"
                                        : "application/json");
                pthread_mutex_destroy(&col.mu);
                return r;   /* the thread ends its run and releases h */
            }
            srv_stream_end(w->out);
            MHD_destroy_response(r);
            r = NULL;
        }
        free(w);
        mcp_reject(h->ms, msg, -32603, "cannot start the call (out of "
                   "memory or threads)", collect_emit, &col);
        msg = NULL;
    }
    /* A request the client cancelled while it ran gets no response from
    ** the session; its POST still needs an answer (JSON or a stream,
    ** never 202 for a request): see below. */
    gone = msg ? mcp_cancelled_reply(msg) : NULL;
    /* A stateless request that may take long and is answered here (a
    ** resource read) is cancelled by its client closing the connection,
    ** as a tool call is by the close of its stream: the revision has a
    ** disconnect cancel whatever the request does. */
    watched = stateless && counted;
    if (watched)
        srv_watch_start(&watch, q->conn_fd, stateless_gone, h);
    if (msg)
        mcp_dispatch(h->ms, msg, collect_emit, &col);
    if (watched)
        srv_watch_stop(&watch);
    if (counted)
        run_end(m, h, who);
    /* An initialize refused (no protocolVersion) opened no session: the
    ** client gets no id of one that never began. */
    if (opened && (!col.response || is_error(col.response))) {
        session_out[0] = '\0';
        (void)srv_mcp_delete(m, h->id);
    }
    release(m, h);
    pthread_mutex_destroy(&col.mu);
    if (!col.response && gone && q->sse) {
        /* No response, as the protocol asks: a stream that ends empty. */
        free(gone);
        r = MHD_create_response_from_buffer(0, (void *)"",
                                            MHD_RESPMEM_PERSISTENT);
        if (!r) {
            *status = 500;
            *why = "out of memory";
            return NULL;
        }
        MHD_add_response_header(r, "Content-Type", "text/event-stream");
        return r;
    }
    /* A client that takes JSON alone gets a document all the same. */
    if (!col.response) {
        col.response = gone;
        gone = NULL;
    }
    free(gone);
    if (!col.response) {
        *status = 202;   /* a notification or a response: accepted */
        return MHD_create_response_from_buffer(0, (void *)"",
                                               MHD_RESPMEM_PERSISTENT);
    }
    /* What was not a message the session could take (not JSON, not a
    ** request, a batch, a second initialize) is answered with its error
    ** and 400, as the transport asks. */
    if (stateless)
        *status = stateless_status(col.response);
    else if (not_taken(col.response))
        *status = 400;
    return json_response(col.response, status, why);
}
