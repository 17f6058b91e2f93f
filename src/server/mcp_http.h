/* mcp_http.h - MCP's Streamable HTTP transport at /mcp (mcp_http.c). */
#ifndef ASKDB_SERVER_MCP_HTTP_H
#define ASKDB_SERVER_MCP_HTTP_H

#include <stddef.h>

#include "../mcp/mcp.h"

struct mcp_server;
struct srv_mcp;
struct MHD_Response;

/* The sessions over srv (borrowed: it must outlive them), running at most
** per_client tool calls and resource reads of one client address at once.
** NULL when out of memory. */
struct srv_mcp *srv_mcp_new(struct mcp_server *srv, int per_client);
void srv_mcp_free(struct srv_mcp *m);

/* One POST to /mcp. */
struct srv_mcp_req {
    const char *body;
    size_t len;
    struct mcp_in *in;       /* the body as mcp_in_read() read it already
                             ** (srv_mcp_post() takes its JSON), or NULL:
                             ** srv_mcp_post() reads it */
    const char *session;     /* the Mcp-Session-Id header, or NULL */
    struct mcp_route route;  /* MCP-Protocol-Version, Mcp-Method, ... */
    int sse;                 /* the client accepts text/event-stream */
    int conn_fd;
    const char *client;      /* its address, for --per-client */
};

/*
** The response to a POST (Content-Type set; *status 200 or 202, or 400
** and 404 with a JSON-RPC error of a stateless request), and in
** session_out (40 bytes) the session's id for the Mcp-Session-Id header
** (empty for a stateless request). NULL with *status 400, 404, 500 or
** 503 and *why when refused. It takes q->in's JSON in every case.
** The body is read as JSON once, by the caller or here, and not at all
** when it is over MCP_MAX_MESSAGE or refused first.
*/
struct MHD_Response *srv_mcp_post(struct srv_mcp *m,
                                  const struct srv_mcp_req *q, int *status,
                                  const char **why, char *session_out);

/* Shutdown, first: new POSTs get 503 from now on, as every other request
** of the stop does, but one of notifications/cancelled alone (a client
** may cancel a call the stop waits for) until srv_mcp_stop() returns;
** and the calls whose database is still being opened
** (an ask's agent, a first schema read) are cancelled, now and to come
** (they have no answer to finish). */
void srv_mcp_stop_opens(struct srv_mcp *m);

/*
** Shutdown, after srv_mcp_stop_opens() and the questions of /api/ask
** (srv_jobs_stop()): new POSTs get 503 (a cancel is taken while a call
** is left); the calls being answered may finish for grace_ms, then every
** session's calls are cancelled; returns once none is left, after which
** no POST is taken, so that the sessions and what they use can be freed.
*/
void srv_mcp_stop(struct srv_mcp *m, int grace_ms);

/* End the session id (DELETE /mcp): its calls are cancelled. 0, or -1 when
** there is no such session. */
int srv_mcp_delete(struct srv_mcp *m, const char *id);

#endif
