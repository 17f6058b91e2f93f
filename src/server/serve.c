/* serve.c - the `askdb serve` command: options, databases, the model, and
** the server's life (see server.h and docs/server.md). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#include "../cli/config.h"
#include "../cli/warm.h"
#include "../mcp/server.h"
#include "mcp_http.h"
#include "request.h"
#include "server.h"

#define MAX_DBS 256

static const char usage_serve[] =
    "usage: askdb serve [options] [--db NAME=PATH]... [PATH]...\n"
    "\n"
    "Serve the databases over HTTP: a JSON API that streams each step of a\n"
    "question (server-sent events), and a web page at /. The model is\n"
    "loaded once and shared; questions run in parallel up to --workers.\n"
    "\n"
    "Server:\n"
    "      --listen HOST:PORT  where to listen (default 127.0.0.1:8080;\n"
    "                        port 0 picks a free one)\n"
    "      --db NAME=PATH    a database and its name in the API (repeat);\n"
    "                        a bare PATH is named after its file\n"
    "      --config FILE     JSON: {\"databases\": {NAME: PATH} or [PATH],\n"
    "                        \"options\": {\"llm-url\": URL, \"max-rows\": N,\n"
    "                        ...} (any model or agent flag without its\n"
    "                        dashes, as in askdb mcp's file), \"listen\",\n"
    "                        \"token\", \"cors_origin\", \"access_log\",\n"
    "                        \"workers\", \"queue\", \"per_client\",\n"
    "                        \"conversations\", \"max_body\"}, as the\n"
    "                        options (relative database paths from the\n"
    "                        file's folder); options given here win\n"
    "      --token TOKEN     require 'Authorization: Bearer TOKEN' on\n"
    "                        /api/ and /mcp (default: $ASKDB_SERVER_TOKEN)\n"
    "      --insecure-no-token  listen on a non-loopback address without a\n"
    "                        token (refused otherwise)\n"
    "      --cors-origin ORIGIN  let pages of this origin call the API\n"
    "      --workers N       questions answered at once (default 1 with the\n"
    "                        local model, 4 otherwise); the local model\n"
    "                        decodes them together, in one batch\n"
    "      --queue N         questions waiting past that; more get 503\n"
    "                        (default 64)\n"
    "      --per-client N    questions, statements and MCP calls of one\n"
    "                        client address at once; more get 429 (MCP:\n"
    "                        busy) (default 8)\n"
    "      --conversations N  follow-up conversations kept (least recently\n"
    "                        used dropped; default 8 local, 64 otherwise)\n"
    "      --max-body BYTES  request body cap (default 1048576)\n"
    "      --access-log FILE  JSON lines, one per request (default stderr;\n"
    "                        'off' for none)\n"
    "      --no-warm         the local model: do not get each database's\n"
    "                        schema prompt ready at start (by default a\n"
    "                        background thread evaluates it, or checks its\n"
    "                        prompt-cache file, one database after the\n"
    "                        other, so no first question pays for it)\n"
    "  -h, --help            this text\n";

/* After the options (cli.h's help of the model, limits and techniques). */
static const char serve_notes[] =
    "\n"
    "Endpoints: GET /health, GET /api/databases, GET /api/databases/NAME/\n"
    "schema, POST /api/ask, POST /api/sql, GET /api/openapi.json, GET /,\n"
    "and /mcp: the MCP tools of askdb mcp over Streamable HTTP.\n"
    "SIGINT or SIGTERM finishes the questions in flight (10 s at most),\n"
    "then stops; the opens of databases in flight are cancelled at once.\n";

enum { S_LISTEN = 300, S_DB, S_CONFIG, S_TOKEN, S_INSECURE, S_CORS,
       S_WORKERS, S_QUEUE, S_PER_CLIENT, S_CONVS, S_MAX_BODY, S_ACCESS_LOG,
       S_NO_WARM };

static const struct option serve_opts[] = {
    {"listen", required_argument, NULL, S_LISTEN},
    {"db", required_argument, NULL, S_DB},
    {"config", required_argument, NULL, S_CONFIG},
    {"token", required_argument, NULL, S_TOKEN},
    {"insecure-no-token", no_argument, NULL, S_INSECURE},
    {"cors-origin", required_argument, NULL, S_CORS},
    {"workers", required_argument, NULL, S_WORKERS},
    {"queue", required_argument, NULL, S_QUEUE},
    {"per-client", required_argument, NULL, S_PER_CLIENT},
    {"conversations", required_argument, NULL, S_CONVS},
    {"max-body", required_argument, NULL, S_MAX_BODY},
    {"access-log", required_argument, NULL, S_ACCESS_LOG},
    {"no-warm", no_argument, NULL, S_NO_WARM},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
};

struct serve_opts {
    const char *listen, *token, *cors, *access_log;
    const char *names[MAX_DBS], *paths[MAX_DBS];
    int ndbs, insecure, no_warm;
    long workers, queue, per_client, convs, max_body;
};

/* Add NAME=PATH (with_name), or PATH named as askdb mcp names it
** (mcp_name_of_path(): "my data.v2.db" -> my_data.v2). The name is
** malloc()ed into *owned. 0 or -1. */
static int add_db(struct serve_opts *o, const char *arg, int with_name,
                  char **owned)
{
    const char *eq = strchr(arg, '='), *path = arg;

    *owned = NULL;
    if (o->ndbs >= MAX_DBS) {
        fprintf(stderr, "askdb serve: at most %d databases\n", MAX_DBS);
        return -1;
    }
    if (with_name) {
        *owned = strndup(arg, (size_t)(eq - arg));
        path = eq + 1;
    } else {
        *owned = mcp_name_of_path(arg);
    }
    if (!*owned)
        return -1;
    o->names[o->ndbs] = *owned;
    o->paths[o->ndbs] = path;
    o->ndbs++;
    return 0;
}

/* An origin as a browser sends it in Origin: "http://" or "https://",
** then a lower-case host (and port), nothing after it (no path, no "/"). */
static int origin_form(const char *s)
{
    const char *h = strncmp(s, "https://", 8) == 0 ? s + 8
                    : strncmp(s, "http://", 7) == 0 ? s + 7 : NULL;

    if (!h || !*h)
        return 0;
    for (; *h; h++)
        if (!((*h >= 'a' && *h <= 'z') || (*h >= '0' && *h <= '9') ||
              strchr("-.:[]", *h)))
            return 0;
    return 1;
}

/* A name the API can carry in a path: letters, digits, '-', '_', '.', at
** most 64 of them, as /mcp's (src/mcp/server.c) takes them: a longer
** one was refused there, in words of MCP's, after this let it by. */
static int good_name(const char *s)
{
    return srv_token_ok(s, 64, "-_.");
}

/* The range of each number option: the command line's and the config's. */
static void number_range(int c, long *lo, long *hi)
{
    *lo = c == S_QUEUE ? 0 : 1;
    *hi = c == S_MAX_BODY ? 1L << 30 : 100000;
}

/* Set number option c to v (in range). */
static void set_number(struct serve_opts *o, int c, long v)
{
    if (c == S_WORKERS) o->workers = v;
    if (c == S_QUEUE) o->queue = v + 1;   /* 0 is "unset" */
    if (c == S_PER_CLIENT) o->per_client = v;
    if (c == S_CONVS) o->convs = v;
    if (c == S_MAX_BODY) o->max_body = v;
}

/* The option a number key of the config file sets, or 0. */
static int number_key(const char *key)
{
    static const struct { const char *key; int opt; } keys[] = {
        {"workers", S_WORKERS}, {"queue", S_QUEUE},
        {"per_client", S_PER_CLIENT}, {"conversations", S_CONVS},
        {"max_body", S_MAX_BODY}};
    size_t i;

    for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(keys[i].key, key) == 0)
            return keys[i].opt;
    return 0;
}

/* The keys of the --config file that serve reads itself (the databases
** and the model and agent options are the shared reader's, config.h):
** the strings, then the numbers (number_key). */
static const char *const config_keys[] = {
    "listen", "token", "cors_origin", "access_log", "workers", "queue",
    "per_client", "conversations", "max_body", NULL
};

/* Whether v is a whole number from lo to hi: an integer, or a real with
** no fraction (2000.0, 1e0), as a number under "options" is taken. */
static int whole_number(json_t *v, long lo, long hi)
{
    double d = json_number_value(v);

    if (json_is_integer(v))
        return json_integer_value(v) >= lo && json_integer_value(v) <= hi;
    return json_is_real(v) && d >= (double)lo && d <= (double)hi &&
           d == (double)(long)d;
}

/*
** Fill what the options left unset from serve's own keys of the --config
** file path (root, kept alive: its strings are used), each checked for
** its type and range. Its databases and its model and agent options
** ("llm-url", "max-rows", "no-linking": the names, checks and messages of
** askdb mcp's file) came as arguments before the command line's, which
** win over them (cli_config_read). 0 or -1 (message printed).
*/
static int read_config(struct serve_opts *o, const char *path, json_t *root)
{
    const char **fields[] = {&o->listen, &o->token, &o->cors,
                             &o->access_log};
    const char *key;
    long set[S_NO_WARM + 1] = {0}, lo, hi;
    json_t *v;
    size_t i;
    int c;

    set[S_WORKERS] = o->workers;
    set[S_QUEUE] = o->queue;
    set[S_PER_CLIENT] = o->per_client;
    set[S_CONVS] = o->convs;
    set[S_MAX_BODY] = o->max_body;
    json_object_foreach(root, key, v) {
        for (i = 0; i < sizeof fields / sizeof fields[0]; i++)
            if (strcmp(config_keys[i], key) == 0)
                break;
        if (i < sizeof fields / sizeof fields[0]) {
            if (!json_is_string(v)) {
                fprintf(stderr, "askdb serve: config '%s': \"%s\" is a "
                                "string\n", path, key);
                return -1;
            }
            if (!*fields[i])
                *fields[i] = json_string_value(v);
        } else if ((c = number_key(key)) != 0) {
            number_range(c, &lo, &hi);
            if (!whole_number(v, lo, hi)) {
                fprintf(stderr, "askdb serve: config '%s': \"%s\" takes a "
                                "whole number from %ld to %ld\n", path, key,
                        lo, hi);
                return -1;
            }
            if (!set[c])
                set_number(o, c, (long)json_number_value(v));
        }
        /* "databases" and "options" came as arguments; the reader
        ** refused any other key. */
    }
    return 0;
}

/* Open each database once: it must exist and have tables; its schema is
** kept as JSON for the API. 0 or the exit code. */
static int load_dbs(struct server *s, const struct serve_opts *o)
{
    askdb_db *h;
    askdb_status st;
    json_error_t je;
    json_t *j;
    int i, k;

    s->dbs = calloc((size_t)o->ndbs, sizeof *s->dbs);
    if (!s->dbs)
        return 2;
    for (i = 0; i < o->ndbs; i++) {
        if (!good_name(o->names[i])) {
            fprintf(stderr, "askdb serve: database name '%s': use letters, "
                            "digits, '-', '_' and '.', at most 64 (--db "
                            "NAME=PATH)\n", o->names[i]);
            return 2;
        }
        for (k = 0; k < i; k++)
            if (strcmp(o->names[k], o->names[i]) == 0) {
                fprintf(stderr, "askdb serve: two databases named '%s'\n",
                        o->names[i]);
                return 2;
            }
        h = NULL;
        st = askdb_db_open(o->paths[i], &s->cfg, &h);
        if (st == ASKDB_OK)
            st = askdb_db_schema_json(h, 0, &s->dbs[i].schema_json);
        if (st) {
            fprintf(stderr, "askdb serve: database '%s': %s\n", o->names[i],
                    askdb_db_errmsg(h));
            askdb_db_close(h);
            return cli_exit_code(st);
        }
        snprintf(s->dbs[i].engine, sizeof s->dbs[i].engine, "%s",
                 askdb_db_engine(h));
        askdb_db_close(h);
        j = json_loads(s->dbs[i].schema_json, 0, &je);
        s->dbs[i].ntables = (int)json_array_size(json_object_get(j,
                                                                 "tables"));
        json_decref(j);
        s->dbs[i].name = strdup(o->names[i]);
        s->dbs[i].path = strdup(o->paths[i]);
        s->ndbs++;
        if (!s->dbs[i].name || !s->dbs[i].path)
            return 2;
    }
    return 0;
}

static void free_dbs(struct server *s)
{
    int i;

    for (i = 0; i < s->ndbs; i++) {
        free(s->dbs[i].name);
        free(s->dbs[i].path);
        askdb_free(s->dbs[i].schema_json);
    }
    free(s->dbs);
}

/* Parse argv; 0, 1 (help printed) or -1 (usage error printed). */
static int parse(int argc, char **argv, struct serve_opts *o,
                 askdb_config *cfg, char **owned, int *nowned)
{
    struct option *opts = cli_merge_opts(serve_opts, 1);
    long v, lo, hi;
    int c, r, rc = 0;

    if (!opts)
        return -1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        r = cli_agent_opt(c, optarg, cfg, "askdb serve");
        if (!r)
            r = cli_model_opt(c, optarg, cfg, "askdb serve");
        if (r < 0)
            goto bad;
        if (r)
            continue;
        switch (c) {
        case S_LISTEN: o->listen = optarg; break;
        case S_CONFIG: break;   /* read before the flags (config_args) */
        case S_TOKEN: o->token = optarg; break;
        case S_INSECURE: o->insecure = 1; break;
        case S_NO_WARM: o->no_warm = 1; break;
        case S_CORS: o->cors = optarg; break;
        case S_ACCESS_LOG: o->access_log = optarg; break;
        case S_DB:
            if (!strchr(optarg, '=') || optarg[0] == '=') {
                fprintf(stderr, "askdb serve: --db takes NAME=PATH, not "
                                "'%s'\n", optarg);
                goto bad;
            }
            if (add_db(o, optarg, 1, &owned[(*nowned)++]))
                goto bad;
            break;
        case S_WORKERS:
        case S_QUEUE:
        case S_PER_CLIENT:
        case S_CONVS:
        case S_MAX_BODY:
            number_range(c, &lo, &hi);
            if (cli_number("askdb serve", "this option", optarg, lo, hi, &v))
                goto bad;
            set_number(o, c, v);
            break;
        case 'h':
            fputs(usage_serve, stdout);
            fputs(cli_limits_help, stdout);
            fputs(cli_model_help, stdout);
            fputs(cli_agent_help, stdout);
            fputs(serve_notes, stdout);
            rc = 1;
            goto out;
        default:
            fprintf(stderr, "askdb serve: see 'askdb serve --help'\n");
            goto bad;
        }
    }
    for (; optind < argc; optind++)
        if (add_db(o, argv[optind], 0, &owned[(*nowned)++]))
            goto bad;
    goto out;
bad:
    rc = -1;
out:
    free(opts);
    return rc;
}

/* Settle what the options and the environment leave open, and refuse
** what may not run. 0, or -1 with the message printed. */
static int settle(struct serve_opts *o)
{
    if (!o->token && getenv("ASKDB_SERVER_TOKEN") &&
        *getenv("ASKDB_SERVER_TOKEN"))
        o->token = getenv("ASKDB_SERVER_TOKEN");
    /* An empty token is none that a client could be asked for: taken as
    ** one, it served any address and any Host to "Bearer " alone (an
    ** unset variable in --token "$TOKEN"). The environment's empty one
    ** is no token, as it was. */
    if (o->token && !*o->token) {
        fprintf(stderr, "askdb serve: the token is empty (--token, or "
                        "\"token\" in --config): give a secret, e.g. "
                        "--token \"$(openssl rand -hex 32)\", or none to "
                        "serve a loopback address alone\n");
        return -1;
    }
    if (!o->listen)
        o->listen = "127.0.0.1:8080";
    if (o->ndbs == 0) {
        fprintf(stderr, "askdb serve: give at least one database (--db "
                        "NAME=PATH or PATH)\n");
        return -1;
    }
    if (!srv_listen_ok(o->listen)) {
        fprintf(stderr, "askdb serve: --listen takes HOST:PORT (e.g. "
                        "127.0.0.1:8080 or [::1]:8080), not '%s'\n",
                o->listen);
        return -1;
    }
    /* One origin, as the browser sends it: "*" would let every page of
    ** every site ask (it matched none: a page's Origin is never "*"). */
    if (o->cors && !origin_form(o->cors)) {
        fprintf(stderr, "askdb serve: --cors-origin takes one origin, "
                        "scheme and host as a browser sends it (e.g. "
                        "https://app.example.com), not '%s'\n", o->cors);
        return -1;
    }
    if (!o->token && !o->insecure && !srv_is_loopback(o->listen)) {
        fprintf(stderr, "askdb serve: %s is not a loopback address: set a "
                        "token (--token or ASKDB_SERVER_TOKEN) so that only "
                        "its holders can ask, or say --insecure-no-token\n",
                o->listen);
        return -1;
    }
    return 0;
}

/* The server's settings and locks from the options (the model loaded). */
static void setup(struct server *s, const struct serve_opts *o)
{
    int local = strcmp(askdb_model_provider(s->model), "local") == 0;

    s->token = o->token;
    s->cors_origin = o->cors;
    s->workers = o->workers ? (int)o->workers : local ? 1 : 4;
    s->queue_max = o->queue ? (int)o->queue - 1 : 64;
    s->per_client = o->per_client ? (int)o->per_client : 8;
    s->max_convs = o->convs ? (int)o->convs : local ? 8 : 64;
    s->max_body = o->max_body ? (size_t)o->max_body : 1048576;
    s->wait_tail = &s->wait_head;
    atomic_init(&s->stopping, 0);
    atomic_init(&s->answering, 0);
}

/* The access log: stderr, none ("off"), or a file appended to, never
** one of the databases served. 0 or the exit code (message printed). */
static int open_access_log(struct server *s, const struct serve_opts *o,
                           const char *path)
{
    const char *why = NULL;
    int i;

    if (!path || strcmp(path, "-") == 0) {
        s->access_log = stderr;
        return 0;
    }
    if (strcmp(path, "off") == 0)
        return 0;
    for (i = 0; i < o->ndbs && !why; i++)
        why = askdb_output_refusal_for(path, o->paths[i]);
    if (why || (why = askdb_output_refusal(path)) != NULL) {
        fprintf(stderr, "askdb serve: --access-log '%s': %s\n", path, why);
        return 2;
    }
    s->access_log = fopen(path, "a");
    if (!s->access_log) {
        fprintf(stderr, "askdb serve: cannot open --access-log '%s': %s\n",
                path, strerror(errno));
        return 2;
    }
    return 0;
}

/* MCP at /mcp: the same databases and the server's model. 0 or the exit
** code (message printed). */
static int open_mcp(struct server *s, const struct serve_opts *o,
                    struct mcp_server **mcp)
{
    char err[512];
    askdb_status st;

    st = mcp_server_new(&s->cfg, o->ndbs, o->names, o->paths, mcp, err,
                        sizeof err);
    if (st) {
        fprintf(stderr, "askdb serve: MCP: %s\n", err);
        return cli_exit_code(st);
    }
    mcp_server_share_model(*mcp, s->model);
    mcp_server_set_command(*mcp, "askdb serve");
    s->mcp = srv_mcp_new(*mcp, s->per_client);
    return s->mcp ? 0 : 2;
}

/* The warm-up's model (warm.h): the server's, loaded at start. */
static askdb_model *serve_model(void *ud)
{
    return ((struct server *)ud)->model;
}

/* Start the warm-up of every database (warm.h); 0 or -1. */
static int serve_warm(struct warm *w, struct server *s)
{
    const char **paths = calloc((size_t)s->ndbs + 1, sizeof *paths);
    const char **names = calloc((size_t)s->ndbs + 1, sizeof *names);
    int i, rc = -1;

    if (paths && names) {
        for (i = 0; i < s->ndbs; i++) {
            paths[i] = s->dbs[i].path;
            names[i] = s->dbs[i].name;
        }
        rc = warm_start(w, &s->cfg, s->ndbs, paths, names, serve_model, s,
                        "askdb serve");
    }
    free(paths);
    free(names);
    return rc;
}

int cmd_serve(int argc, char **argv)
{
    struct serve_opts o;
    struct warm warm = {0};
    struct server s;
    struct mcp_server *mcp = NULL;
    static const struct option none[] = {{NULL, 0, NULL, 0}};
    struct cli_config_spec spec = {NULL, "any model or agent flag of "
                                         "askdb serve", config_keys, NULL};
    struct cli_config conf;
    struct option *opts = cli_merge_opts(none, 1);
    struct option *all = cli_merge_opts(serve_opts, 1);
    askdb_status st;
    char *owned[MAX_DBS + 2], err[2048];
    int nowned = 0, rc = -1, i;

    memset(&o, 0, sizeof o);
    memset(&s, 0, sizeof s);
    s.cfg = askdb_config_default();
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    pthread_mutex_init(&s.log_mu, NULL);
    memset(&conf, 0, sizeof conf);
    /* The file's options are the model's and the agent's alone: serve's
    ** own settings are keys of their own (config_keys). */
    spec.opts = opts;
    spec.all_opts = all;
    if (!opts || !all)
        fprintf(stderr, "askdb serve: out of memory\n");
    else if (cli_config_read(argc, argv, &spec, &conf, err, sizeof err))
        fprintf(stderr, "askdb serve: %s\n", err);
    else
        rc = parse(conf.argc, conf.argv, &o, &s.cfg, owned, &nowned);
    free(opts);
    free(all);
    if (rc == 0 && conf.root && read_config(&o, conf.path, conf.root))
        rc = -1;
    if (rc == 0)
        rc = cli_model_env(argv[0], &s.cfg) ? -1 : settle(&o);
    if (rc == 0 && cli_memory_check("askdb serve", &s.cfg))
        rc = -1;
    if (rc) {
        rc = rc > 0 ? 0 : 2;
        goto out;
    }
    /* The local model decodes as many questions at once as there are
    ** workers (one lane of its batch each); HTTP models ignore it. */
    s.cfg.parallel = (int)o.workers;
    st = askdb_model_new(&s.cfg, &s.model);
    if (st) {
        fprintf(stderr, "askdb serve: %s\n", askdb_model_errmsg(s.model));
        rc = cli_exit_code(st);
        goto out;
    }
    setup(&s, &o);
    rc = open_access_log(&s, &o, o.access_log);
    if (rc == 0)
        rc = cli_trace_check("askdb serve", &s.cfg, o.ndbs, o.paths);
    if (rc == 0)
        rc = load_dbs(&s, &o);
    if (rc == 0)
        rc = open_mcp(&s, &o, &mcp);
    if (rc == 0 && !o.no_warm &&
        strcmp(askdb_model_provider(s.model), "local") == 0)
        serve_warm(&warm, &s);
    if (rc == 0)
        rc = srv_run(&s, o.listen);
    warm_stop(&warm);
out:
    srv_mcp_free(s.mcp);
    mcp_server_free(mcp);
    srv_convs_free(&s);
    free_dbs(&s);
    askdb_model_free(s.model);
    if (s.access_log && s.access_log != stderr)
        fclose(s.access_log);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.log_mu);
    for (i = 0; i < nowned; i++)
        free(owned[i]);
    cli_config_free(&conf);
    return rc;
}
