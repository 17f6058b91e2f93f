/* config.h - `askdb mcp --config FILE`: the file's settings as options. */
#ifndef ASKDB_MCP_CONFIG_H
#define ASKDB_MCP_CONFIG_H

#include <getopt.h>
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
** out). Each KEY must be a long option of opts (the command's getopt
** table) other than config, db and help, with a value of its kind (true
** or false for a switch); any other key is an error that names the file
** and the key and lists the keys it may use. On success returns 0 and
** *argv (*argc strings, each malloc()ed, like the array) is the caller's;
** on failure -1 with the reason in err.
*/
int mcp_config_argv(const char *path, const struct option *opts, int *argc,
                    char ***argv, char *err, size_t errlen);

#endif
