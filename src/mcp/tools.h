/* tools.h - the MCP tools: their list and their calls. */
#ifndef ASKDB_MCP_TOOLS_H
#define ASKDB_MCP_TOOLS_H

#include <jansson.h>
#include <pthread.h>

#include "server.h"

/* Protocol revisions, oldest first: what a session negotiated with
** initialize, or what a request of the stateless era names in its _meta.
** MCP_V_LATEST is the newest of initialize, which a client that asks it
** for another gets; MCP_V_STATELESS and later have no initialize: each
** request carries its revision (mcp.c, "Stateless requests"). */
enum { MCP_V2024_11_05 = 0, MCP_V2025_03_26, MCP_V2025_06_18,
       MCP_V2025_11_25, MCP_V2026_07_28, MCP_V_LATEST = MCP_V2025_11_25,
       MCP_V_STATELESS = MCP_V2026_07_28 };

/* The levels of notifications/message (RFC 5424's, least severe first):
** logging/setLevel L has the messages at L and above sent. */
enum { MCP_LOG_DEBUG = 0, MCP_LOG_INFO, MCP_LOG_NOTICE, MCP_LOG_WARNING,
       MCP_LOG_ERROR, MCP_LOG_CRITICAL, MCP_LOG_ALERT, MCP_LOG_EMERGENCY,
       MCP_LOG_NLEVELS };
/* Their names, by level. */
extern const char *const mcp_log_levels[MCP_LOG_NLEVELS];

/* A tool result is cut (rows dropped from the end) to stay under this
** many bytes, its JSON as a text block and as structuredContent together,
** and says so; so is the schema resource's text (tables dropped from the
** end). */
#define MCP_RESULT_CAP ((size_t)1 << 20)

/* Characters (code points) of a statement of execute_sql and explain_sql,
** as many as askdb serve's /api/sql takes. */
#define MCP_MAX_SQL 65536

/*
** One tool call and what it may tell the client while it runs. The
** cancellation state lives in the session (mcp.c): under *lock,
** *cancelled says the client gave up on the call, *running holds the
** agent while a question runs, or while its database is opened (then
** *opening is 1), and *running_db the database while a statement runs
** (its db_lock held), or a first schema read's handle while it is opened
** (then *opening is 1) and read (schema_fn, which mcp_db_schema() takes,
** sets them), so that the reading thread can stop them
** (askdb_agent_cancel, askdb_db_cancel).
*/
struct mcp_call {
    struct mcp_server *srv;
    int version;             /* MCP_V... */
    json_t *progress_token;  /* params._meta.progressToken, or NULL */
    int log_level;           /* send each step at or above this MCP_LOG_
                                level as notifications/message; -1: none */
    void (*notify)(void *ud, const char *method, json_t *params);
    void *ud;                /* notify's; params are stolen */
    pthread_mutex_t *lock;
    int *cancelled;
    askdb_agent **running;
    int *opening;
    askdb_db **running_db;
    mcp_schema_fn schema_fn; /* a first schema read's handle (mcp.c) */
    void *schema_ud;
    double progress;         /* last progress value sent */
};

/* The tools/list result for a protocol revision (new reference). */
json_t *mcp_tools_list(struct mcp_server *srv, int version);

/*
** Call tool name with args (an object or NULL). Returns the tools/call
** result (new reference): failures of the tool itself are results with
** isError. NULL when the call is not one (unknown tool): *code and msg
** (msglen bytes) then hold the JSON-RPC error.
*/
json_t *mcp_tool_call(struct mcp_call *c, const char *name, json_t *args,
                      int *code, char *msg, size_t msglen);

/* Whether askdb has a tool called name (NULL: no). */
int mcp_tool_known(const char *name);

/* The text of v when it is a string without a NUL ("\u0000" in JSON),
** else NULL: C would read such a string only up to the NUL, as another
** one (borrowed from v). */
const char *mcp_cstr(json_t *v);

/* json_string() that never fails on bad UTF-8: such bytes become '?'. */
json_t *mcp_str(const char *s);

/* The bytes the n bytes of text s take written as a JSON string (its
** quotes and escapes), as a message carries a text block or a resource's
** text: what MCP_RESULT_CAP counts. */
size_t mcp_json_string_size(const char *s, size_t n);

#endif
