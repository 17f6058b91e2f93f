/* config.h - `askdb mcp --config FILE`: the file's settings as options. */
#ifndef ASKDB_MCP_CONFIG_H
#define ASKDB_MCP_CONFIG_H

#include <stddef.h>

/*
** Read a JSON config file and turn it into command-line options, so that
** the command's own parser checks them and flags given after override
** them:
**
**   {"databases": {"shop": "shop.db", ...}   or ["shop.db", ...],
**    "options": {"llm-url": "http://...", "max-rows": 200,
**                "no-linking": true}}
**
** A database becomes "--db=NAME=PATH" (a relative PATH is taken from the
** file's folder), an option "--KEY=VALUE" (true: "--KEY", false: left
** out). On success returns 0 and *argv (*argc strings, each malloc()ed,
** like the array) is the caller's; on failure -1 with the reason in err.
*/
int mcp_config_argv(const char *path, int *argc, char ***argv, char *err,
                    size_t errlen);

#endif
