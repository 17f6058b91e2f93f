/* cmd.c - the `askdb mcp` command: its options, then the stdio server. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#include "../cli/config.h"
#include "cmd.h"
#include "stdio_server.h"

static const char usage_mcp[] =
    "usage: askdb mcp [options] [--db NAME=PATH]... [--config FILE] [PATH]...\n"
    "\n"
    "Serve the databases to an assistant or editor over the Model Context\n"
    "Protocol: JSON-RPC on stdin/stdout, one message a line (protocol\n"
    "2026-07-28, stateless, for a request whose _meta names it; through\n"
    "initialize 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05); logs\n"
    "go to stderr.\n"
    "Tools: list_databases, search_objects, execute_sql (one read-only\n"
    "statement through the guard), ask (a question in plain English, with\n"
    "progress and cancellation) and explain_sql; every one only reads.\n"
    "Resources: askdb://NAME/schema and askdb://NAME/table/{table}.\n"
    "\n"
    "Databases:\n"
    "      --db NAME=PATH    serve PATH as NAME (a bare PATH is named after\n"
    "                        its file: data/shop.db is 'shop')\n"
    "      --config FILE     JSON: {\"databases\": {NAME: PATH} or [PATH],\n"
    "                        \"options\": {\"llm-url\": URL, \"max-rows\": N,\n"
    "                        ...}} (any flag of askdb mcp without its\n"
    "                        dashes; flags on the command line win;\n"
    "                        relative paths are from the file's folder)\n"
    "  -v, --verbose         print the agent's steps on stderr\n"
    "      --no-warm         do not load the model and get each database's\n"
    "                        schema prompt ready at start (the local model;\n"
    "                        by default a thread does, so that no first\n"
    "                        question waits for it)\n"
    "Limits (every execute_sql and every query of ask):\n"
    "      --timeout MS      query time limit in ms (default 10000)\n"
    "      --max-rows N      row cap (default 1000); execute_sql's max_rows\n"
    "                        may only lower it\n"
    "      --max-bytes N     result size cap (default 4194304); a tool\n"
    "                        result is also cut to 1 MiB and says so\n"
    "      --in-process      run the statements of SQLite and DuckDB files\n"
    "                        in askdb's own process, not in askdb-exec (a\n"
    "                        helper killed at the time limit): one long\n"
    "                        function call can then outlast --timeout\n";

enum { M_DB = 300, M_CONFIG, M_NO_WARM };

static const struct option mcp_opts[] = {
    {"db", required_argument, NULL, M_DB},
    {"config", required_argument, NULL, M_CONFIG},
    {"no-warm", no_argument, NULL, M_NO_WARM},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
};

struct mcp_opts {
    askdb_config cfg;
    const char **names, **paths;
    int n, verbose, no_warm;
};

/* Parse argv into o (names and paths have room for argc); 0, 1 (help
** printed) or -1 (usage error printed). */
static int parse(int argc, char **argv, const struct option *opts,
                 struct mcp_opts *o)
{
    char *eq;
    int c, r;

    optind = 1;
    while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
        r = cli_agent_opt(c, optarg, &o->cfg, "askdb mcp");
        if (!r)
            r = cli_model_opt(c, optarg, &o->cfg, "askdb mcp");
        if (r < 0)
            return -1;
        if (r)
            continue;
        switch (c) {
        case M_CONFIG:
            break;           /* read before the flags (they override it) */
        case M_DB:
            eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1]) {
                fprintf(stderr, "askdb mcp: --db takes NAME=PATH, not "
                                "'%s'\n", optarg);
                return -1;
            }
            *eq = '\0';
            o->names[o->n] = optarg;
            o->paths[o->n++] = eq + 1;
            break;
        case M_NO_WARM:
            o->no_warm = 1;
            break;
        case 'v':
            o->verbose = 1;
            break;
        case 'h':
            fputs(usage_mcp, stdout);
            fputs(cli_model_help, stdout);
            fputs(cli_agent_help, stdout);
            fputs("Other:\n"
                  "  -h, --help            this text\n", stdout);
            return 1;
        default:
            fprintf(stderr, "askdb mcp: see 'askdb mcp --help'\n");
            return -1;
        }
    }
    for (; optind < argc; optind++) {
        o->names[o->n] = NULL;
        o->paths[o->n++] = argv[optind];
    }
    return 0;
}

int cmd_mcp(int argc, char **argv)
{
    struct option *opts = cli_merge_opts(mcp_opts, 1);
    struct cli_config_spec spec = {NULL, "any flag of askdb mcp", NULL,
                                   NULL};
    struct cli_config conf;
    char err[2048];
    struct mcp_opts o;
    int rc = EXIT_USAGE;

    memset(&o, 0, sizeof o);
    if (!opts) {
        fprintf(stderr, "askdb mcp: out of memory\n");
        return EXIT_USAGE;
    }
    spec.opts = opts;
    if (cli_config_read(argc, argv, &spec, &conf, err, sizeof err)) {
        fprintf(stderr, "askdb mcp: %s\n", err);
        free(opts);
        return EXIT_USAGE;
    }
    o.names = calloc((size_t)conf.argc + 1, sizeof *o.names);
    o.paths = calloc((size_t)conf.argc + 1, sizeof *o.paths);
    if (!o.names || !o.paths) {
        fprintf(stderr, "askdb mcp: out of memory\n");
        goto out;
    }
    o.cfg = askdb_config_default();
    rc = parse(conf.argc, conf.argv, opts, &o);
    if (rc) {
        rc = rc > 0 ? EXIT_ANSWERED : EXIT_USAGE;
        goto out;
    }
    if (cli_model_env(argv[0], &o.cfg)) {
        rc = EXIT_USAGE;
        goto out;
    }
    if (o.verbose)
        o.cfg.log_fn = cli_log_step;
    rc = cli_trace_check("askdb mcp", &o.cfg, o.n, o.paths);
    if (rc == 0)
        rc = cli_memory_check("askdb mcp", &o.cfg);
    if (rc == 0)
        rc = mcp_stdio_main(&o.cfg, o.n, o.names, o.paths, !o.no_warm);
out:
    cli_config_free(&conf);
    free(o.names);
    free(o.paths);
    free(opts);
    return rc;
}
