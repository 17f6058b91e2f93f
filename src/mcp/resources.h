/* resources.h - the MCP resources: each database's schema and its tables. */
#ifndef ASKDB_MCP_RESOURCES_H
#define ASKDB_MCP_RESOURCES_H

#include <jansson.h>

#include "server.h"

/* resources/list and resources/templates/list results (new references). */
json_t *mcp_resources_list(struct mcp_server *srv);
json_t *mcp_resource_templates(struct mcp_server *srv);

/*
** resources/read of uri: askdb://NAME/schema (the schema as the model sees
** it, text) or askdb://NAME/table/TABLE (TABLE percent-encoded: its
** columns, keys and row count as JSON). Returns the result (new
** reference), or NULL with *code and msg (msglen bytes) set: -32002 no
** such resource, -32603 the database failed or the read was cancelled.
** schema_fn (may be NULL) is told of the handle of a first schema read
** (mcp_db_schema()); cancelled (may be NULL) ends the read's wait for
** the schema behind another call's first read (mcp_db_schema_lock());
** schema_ud is both's.
*/
json_t *mcp_resource_read(struct mcp_server *srv, const char *uri,
                          mcp_schema_fn schema_fn,
                          mcp_cancelled_fn cancelled, void *schema_ud,
                          int *code, char *msg, size_t msglen);

#endif
