/* cmd.h - the `askdb mcp` command: its options, then the stdio server. */
#ifndef ASKDB_MCP_CMD_H
#define ASKDB_MCP_CMD_H

/* askdb mcp; argv[0] is "askdb mcp" (getopt starts its messages with
** it). Returns the exit code: 0, 2 usage, 3 a database cannot be opened. */
int cmd_mcp(int argc, char **argv);

#endif
