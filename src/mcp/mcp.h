/* mcp.h - the Model Context Protocol's messages, whatever carries them. */
#ifndef ASKDB_MCP_H
#define ASKDB_MCP_H

#include <stddef.h>

#include "server.h"

/*
** A session is one client's conversation with a server (stdio has one; the
** HTTP transport, one per Mcp-Session-Id). The transport hands it each
** message as JSON text and gets back the messages for the client through
** an mcp_emit_fn: the response (at most one per message, none for a
** notification) and, before it, notifications about that request
** (progress, log lines). Any thread may handle a message while others run
** (that is how notifications/cancelled reaches a running `ask`); emit is
** then called from several threads and the transport serialises its
** writes.
**
** JSON-RPC errors: -32700 not JSON, -32600 not a request (also JSON that
** is not an object, over-long messages and batches, but in a session of
** revision 2025-03-26: there a batch is one mcp_msg whose requests run
** one after the other and whose responses go out as one array, emitted
** as one MCP_OUT_RESPONSE; its members' notifications go out as they
** come; and, with id null, a request reusing the id of one still
** running, which is not run), -32601 unknown
** method, -32602 bad params (also an unknown tool or a name with a NUL),
** -32002 unknown resource (-32602 in 2026-07-28), -32603 internal; and
** for a request of revision 2026-07-28 (params._meta names it, or over
** HTTP its header): -32602 without the _meta it needs, -32020 HTTP
** headers that do not say what the body says, -32022 a revision askdb
** does not speak (data.supported lists those it does). Any string may
** hold "\u0000"; one read as C text is refused whole (mcp_cstr()), never
** cut there.
*/

/* JSON-RPC's server error, of the range (-32000 to -32099) it leaves to
** implementations: a request the server did not run to its end (too many
** running, stopped by the server, cancelled by the client over HTTP). */
#define MCP_ERR_SERVER (-32000)

/* Tool calls and resource reads one session runs at once (stdio, and each
** session of /mcp); more are refused with mcp_reject_busy(). */
#define MCP_MAX_RUNNING 16

/* Longest message read (bytes, without the newline). */
#define MCP_MAX_MESSAGE ((size_t)4 << 20)

enum mcp_out { MCP_OUT_RESPONSE, MCP_OUT_NOTIFICATION };

/* One message for the client: JSON text without a newline in it, borrowed
** for the call. */
typedef void (*mcp_emit_fn)(void *ud, enum mcp_out kind, const char *json,
                            size_t len);

struct mcp_session;
struct mcp_msg;

/* A session over srv (which must outlive it); NULL when out of memory. */
struct mcp_session *mcp_session_new(struct mcp_server *srv);
void mcp_session_free(struct mcp_session *s);

/*
** Read one message. Returns it for mcp_dispatch(), or NULL when nothing is
** left to do: a malformed one was answered with its error, or it needed no
** work (a response, an unknown notification, notifications/cancelled,
** which stops the tool call it names at once: its question or statement
** at the next step, or before it starts; any request it names gets no
** response, but initialize and one already answered). Before the session
** is initialized a request other than initialize and ping (and a
** stateless one) is refused with -32600, "not initialized: send
** initialize first". Every request is registered here, so a cancel that
** follows it is seen.
*/
struct mcp_msg *mcp_parse(struct mcp_session *s, const char *text,
                          size_t len, mcp_emit_fn emit, void *ud);

/*
** What an HTTP request's headers say of its message: MCP-Protocol-Version,
** Mcp-Method, Mcp-Name (each NULL when absent) and the name of one sent
** twice, or NULL. Revision 2026-07-28 has proxies route by them, so they
** must match the body (-32020).
*/
struct mcp_route {
    const char *version;
    const char *method;
    const char *name;
    const char *duplicate;
};

/*
** A message's text read as JSON once, for a transport that looks at it
** before a session takes it (HTTP: which session runs it, by
** mcp_in_stateless() and mcp_in_initialize()). mcp_in_read() fills it;
** mcp_parse_in() then takes it, or mcp_in_free() drops it (NULL: no-op).
** A text over MCP_MAX_MESSAGE is left unread (root NULL, len over the
** limit), which mcp_parse_in() refuses as too long.
*/
struct json_t;
struct mcp_in {
    struct json_t *root;    /* the JSON value; NULL when the text is not */
    size_t len;             /* the text's length */
    char error[300];        /* why root is NULL */
};
void mcp_in_read(struct mcp_in *in, const char *text, size_t len);
void mcp_in_free(struct mcp_in *in);

/* Answer the message of in (freed) with a JSON-RPC error instead of
** taking it: code and message under its id (null when it has none, e.g. a
** notification), or, for a text that is no JSON or over MCP_MAX_MESSAGE,
** the error mcp_parse_in() would give it. For a transport that has no
** session to run it in (HTTP: a request without Mcp-Session-Id). */
void mcp_in_reject(struct mcp_in *in, int code, const char *message,
                   mcp_emit_fn emit, void *ud);

/* mcp_parse() of a message already read (it takes in's JSON) that came
** over HTTP with these headers: a stateless request's are checked
** against its body. stateless says the transport took it for one (its
** MCP-Protocol-Version header names 2026-07-28): a request then needs
** that revision's _meta (-32602) even when its body does not name the
** revision, so it is never served as one of the handshake. */
struct mcp_msg *mcp_parse_in(struct mcp_session *s, struct mcp_in *in,
                             const struct mcp_route *route, int stateless,
                             mcp_emit_fn emit, void *ud);

/* Whether in is a request of the stateless era (revision 2026-07-28:
** params._meta names a protocol version), which no session's state
** applies to. */
int mcp_in_stateless(const struct mcp_in *in);

/* Whether in is an initialize request (one that opens a session). */
int mcp_in_initialize(const struct mcp_in *in);

/* Whether in holds notifications/cancelled alone (one, or a batch of
** them and nothing else): what a transport still takes while it stops,
** so that a client can cancel its calls that the stop waits for. */
int mcp_in_cancels_only(const struct mcp_in *in);

/* Whether m is such a request, and whether its method is method. */
int mcp_msg_stateless(const struct mcp_msg *m);
int mcp_msg_is(const struct mcp_msg *m, const char *method);

/* 1 when the message may take long (a tool call, a resource read): a
** transport that reads on runs it on another thread. */
int mcp_msg_slow(const struct mcp_msg *m);

/* Handle a parsed message and emit its response; frees m. */
void mcp_dispatch(struct mcp_session *s, struct mcp_msg *m,
                  mcp_emit_fn emit, void *ud);

/*
** What m's response is when the client cancelled it, as JSON text (free()
** it): MCP_ERR_SERVER, "request cancelled: ..."; for a batch, the array
** of its requests' (what a batch whose every request was cancelled is
** answered with); NULL for a notification, or when out of memory. The session sends no response to a
** cancelled request, as the protocol asks; a transport that must still
** answer with a JSON document (HTTP, for a client that does not take
** text/event-stream: a POST's answer is JSON or a stream) sends this one
** instead.
*/
char *mcp_cancelled_reply(const struct mcp_msg *m);

/* Answer m with a JSON-RPC error instead of handling it; frees m. */
void mcp_reject(struct mcp_session *s, struct mcp_msg *m, int code,
                const char *message, mcp_emit_fn emit, void *ud);

/* Refuse m (a tool call or resource read) because MCP_MAX_RUNNING of them
** run in its session: MCP_ERR_SERVER, "busy: ...", which the client may
** send again (MCP has servers rate-limit tool calls and names no code for
** it); frees m. */
void mcp_reject_busy(struct mcp_session *s, struct mcp_msg *m,
                     mcp_emit_fn emit, void *ud);

/* mcp_parse() then mcp_dispatch() on this thread. */
void mcp_handle(struct mcp_session *s, const char *text, size_t len,
                mcp_emit_fn emit, void *ud);

/* Emit a JSON-RPC error with a null id (a message that could not be read
** at all, e.g. one over MCP_MAX_MESSAGE). */
void mcp_error_null_id(mcp_emit_fn emit, void *ud, int code,
                       const char *message);

/* Emit the error of a message over MCP_MAX_MESSAGE: -32600, id null,
** "message over 4 MiB: send less at once". A transport refuses such a
** message with it before reading it as JSON. */
void mcp_error_too_long(mcp_emit_fn emit, void *ud);

/* Whether v (e.g. an MCP-Protocol-Version header) names a protocol
** revision askdb speaks through initialize: one a session may have. */
int mcp_version_known(const char *v);

/* Whether v names a revision askdb speaks that has no initialize
** (2026-07-28): it goes with each request, in params._meta. */
int mcp_version_stateless(const char *v);

/* The revisions of initialize, newest first, as "2025-11-25, 2025-06-18,
** ..." in buf (len bytes, cut to fit): for messages. */
void mcp_versions_text(char *buf, size_t len);

/* Stop every running request of the session (the server stops, the
** session ends): each is answered with MCP_ERR_SERVER and why (a static
** string, e.g. "the server is stopping: ..."), but one the client
** cancelled, which gets no response. */
void mcp_session_cancel_all(struct mcp_session *s, const char *why);

/* Stop the tool calls and resource reads of the session whose database
** is still being opened (an ask's agent, a first schema read's handle:
** the server stops; mcp_server_stop() cancels those to come); each still
** answers, with an error that says so. */
void mcp_session_cancel_opens(struct mcp_session *s);

#endif
