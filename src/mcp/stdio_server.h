/* stdio_server.h - `askdb mcp`: the MCP server over stdin and stdout. */
#ifndef ASKDB_MCP_STDIO_SERVER_H
#define ASKDB_MCP_STDIO_SERVER_H

#include "askdb.h"

/*
** Serve the databases over stdin/stdout until stdin ends: one JSON-RPC
** message per line, stdout carries the protocol only, logs go to stderr.
** names[i] may be NULL (the file's stem). warm: start the warm-up
** (mcp_server_warm_start). Returns the exit code: 0, 2
** usage, 3 a database cannot be opened.
*/
int mcp_stdio_main(const askdb_config *cfg, int n, const char *const *names,
                   const char *const *paths, int warm);

#endif
