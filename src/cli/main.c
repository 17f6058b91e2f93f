/* main.c - the askdb command: ask, shell, schema, sql, and the dispatch to
** eval, learn, serve and mcp. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../mcp/cmd.h"
#include "../server/server.h"
#include "cli.h"
#include "learn.h"

/* `askdb eval` (eval.c). */

static const char usage_main[] =
    "usage: askdb COMMAND [options] DB [ARG]\n"
    "\n"
    "Ask questions of a database in plain English. askdb writes one\n"
    "read-only SQL query with a language model, checks it, runs it with\n"
    "time and row limits, repairs it when it fails, and prints the rows.\n"
    "It never writes to the database and never creates a database file.\n"
    "\n"
    "DB is one of:\n"
    "  shop.db                          an SQLite file (any other path)\n"
    "  shop.duckdb, x.parquet, x.csv    DuckDB (also .ddb, .tsv, .csv.gz)\n"
    "  postgresql://user@host:5432/db   PostgreSQL (libpq's PG* variables)\n"
    "  mariadb://user@host:3306/db      MariaDB or MySQL (also mysql://)\n"
    "\n"
    "Commands:\n"
    "  ask DB QUESTION     answer one question\n"
    "  shell DB            interactive prompt, one question per line\n"
    "  schema DB           print the whole schema as the model reads it\n"
    "  sql DB STATEMENT    run one read-only statement through the guard\n"
    "  eval --suite FILE   score execution accuracy on a question suite\n"
    "  learn DB --question Q --sql S\n"
    "                      verify and store a question/SQL pair that later\n"
    "                      questions about DB get as an example\n"
    "  serve --db NAME=PATH  an HTTP API with streamed steps, and a web page\n"
    "  mcp --db NAME=PATH  the databases as tools for assistants and\n"
    "                      editors (Model Context Protocol over stdio)\n"
    "  help [COMMAND]      this text, or a command's options\n"
    "  version             print the version\n"
    "\n"
    "Exit codes: 0 answered, 1 no valid SQL after all attempts (or a\n"
    "statement refused or failed), 2 usage error (or the output cannot\n"
    "be written), 3 database cannot be opened, 4 model unreachable or\n"
    "failing, 130 stopped by Ctrl-C.\n"
    "\n"
    "Run 'askdb help COMMAND' for the options of a command.\n";

static const char help_output[] =
    "Output:\n"
    "  -f, --format FMT      table, csv, json or markdown (also md; default:\n"
    "                        table on a terminal, csv otherwise; CSV lines\n"
    "                        end in LF, not CRLF; a table cell shows 100\n"
    "                        columns at most; a table too wide for the\n"
    "                        terminal, a record at a time; a line break\n"
    "                        in a Markdown cell is <br>)\n"
    "      --show-sql        print the SQL before the rows\n";

/* The options of ask and shell that follow cli_model_help's "Agent:". */
static const char help_agent[] =
    "      --dry-run         print the checked SQL, do not run it\n"
    "  -v, --verbose         print the steps on stderr\n";

/* The last of ask and shell, after cli_agent_help. */
static const char help_other[] =
    "Other:\n"
    "  -h, --help            this text\n";

/* The last options of sql. */
static const char help_db_cmd[] =
    "Other:\n"
    "  -v, --verbose         say on stderr where the statements run (the\n"
    "                        askdb-exec helper or this process)\n"
    "  -h, --help            this text\n";

/* The last options of schema, which runs no statement. */
static const char help_schema_other[] =
    "Other:\n"
    "  -v, --verbose         say on stderr how long reading the schema\n"
    "                        took (in this process: schema runs no\n"
    "                        statement)\n"
    "  -h, --help            this text\n";

/* The options of ask and shell, which are the same, after their usage. */
static void agent_options_help(void)
{
    fputs(help_output, stdout);
    fputs(cli_limits_help, stdout);
    fputs(cli_model_help, stdout);
    fputs(help_agent, stdout);
    fputs(cli_agent_help, stdout);
    fputs(help_other, stdout);
}

/* Print help for cmd (NULL: the overview); -1 if there is no such
** command. */
static int help(const char *cmd)
{
    if (!cmd) {
        fputs(usage_main, stdout);
    } else if (strcmp(cmd, "ask") == 0) {
        fputs("usage: askdb ask [options] DB QUESTION\n\n"
              "Answer one question: schema -> SQL from the model -> checks\n"
              "-> read-only execution -> repair on failure -> rows.\n"
              "QUESTION is one argument, in quotes: askdb ask shop.db\n"
              "\"how many orders?\"; at most 8192 characters of UTF-8.\n\n",
              stdout);
        agent_options_help();
    } else if (strcmp(cmd, "shell") == 0) {
        fputs("usage: askdb shell [options] DB\n\n"
              "Interactive prompt with history. Each line is a question;\n"
              "lines starting with a dot are commands:\n"
              "  .sql STATEMENT   run one read-only statement\n"
              "                   (.sql alone, or a line left open\n"
              "                   or ending with a comma: the lines\n"
              "                   up to one ending with ';'; a\n"
              "                   $$...$$ string is a quote on\n"
              "                   PostgreSQL and DuckDB)\n"
              "  .schema          print the schema as the model sees it\n"
              "  .new             forget the conversation: the next\n"
              "                   question is not a follow-up\n"
              "  .help            list the commands\n"
              "  .quit, .exit     leave (also Ctrl-D)\n"
              "A question is at most 8192 characters of UTF-8.\n"
              "Questions need a model, the commands do not: a model that\n"
              "cannot be loaded is said once, and the shell goes on\n"
              "without it.\n"
              "Ctrl-C stops the question or .sql that runs, or drops the\n"
              "line being typed.\n"
              "Follow-up questions (\"and only for 2023?\") are read in\n"
              "the context of the earlier ones.\n\n",
              stdout);
        agent_options_help();
    } else if (strcmp(cmd, "schema") == 0) {
        fputs("usage: askdb schema [options] DB\n\n"
              "Print the whole schema as the model reads it: CREATE TABLE\n"
              "text with keys, foreign keys, row counts and sample values\n"
              "(of a schema over 6 tables and 8 KiB, schema linking gives the\n"
              "model only the tables a question needs, unless ask is given\n"
              "--no-linking).\n\n"
              "Output:\n"
              "  -f, --format json     the schema for a program: every table\n"
              "                        with its columns, keys, row count and\n"
              "                        samples, and that text\n"
              "      --sample-values N distinct values shown per text column\n"
              "                        (default 3; 0 = none)\n",
              stdout);
        fputs(cli_schema_limits_help, stdout);
        fputs(help_schema_other, stdout);
    } else if (strcmp(cmd, "sql") == 0) {
        fputs("usage: askdb sql [options] DB STATEMENT\n\n"
              "Run one statement through the same read-only guard the\n"
              "agent uses: exactly one statement, read-only, authorizer,\n"
              "time/row/byte limits.\n\n",
              stdout);
        fputs(help_output, stdout);
        fputs(cli_limits_help, stdout);
        fputs(help_db_cmd, stdout);
    } else if (strcmp(cmd, "eval") == 0) {
        const char *hargv[] = {"askdb eval", "--help", NULL};
        return cli_eval(2, (char **)hargv);
    } else if (strcmp(cmd, "learn") == 0) {
        const char *hargv[] = {"askdb learn", "--help", NULL};
        return cmd_learn(2, (char **)hargv);
    } else if (strcmp(cmd, "serve") == 0) {
        const char *hargv[] = {"askdb serve", "--help", NULL};
        return cmd_serve(2, (char **)hargv);
    } else if (strcmp(cmd, "mcp") == 0) {
        const char *hargv[] = {"askdb mcp", "--help", NULL};
        return cmd_mcp(2, (char **)hargv);
    } else if (strcmp(cmd, "help") == 0) {
        fputs("usage: askdb help [COMMAND]\n\n"
              "The commands and what they do, or one command's options.\n",
              stdout);
    } else if (strcmp(cmd, "version") == 0) {
        fputs("usage: askdb version\n\n"
              "Print askdb's version (also --version).\n", stdout);
    } else {
        fprintf(stderr, "askdb: no command '%s' (see 'askdb help')\n", cmd);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Options                                                                */
/* ---------------------------------------------------------------------- */

enum { OPT_SHOW_SQL = 256, OPT_DRY_RUN };

static const struct option long_opts[] = {
    {"format", required_argument, NULL, 'f'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"show-sql", no_argument, NULL, OPT_SHOW_SQL},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {NULL, 0, NULL, 0}
};

/*
** Which options sql and schema take, by long name: the output options, -v
** and the limits of the database handle (askdb_db_open reads them), and
** for schema the sample values it shows. schema runs no statement, so of
** the limits only --timeout is its (each read of the schema waits that
** long at most): --max-rows and --max-bytes cap a statement's result,
** and its catalogue queries and samples are read whole (the samples
** bounded by --sample-values); --in-process says where statements run,
** and schema reads in askdb's own process, starting no askdb-exec.
** Every other option sets up the model or the agent, which sql and schema
** do not have: for them it is a usage error (refuse_option) that names
** the commands taking it, never silently ignored.
*/
enum { FOR_SQL = 1, FOR_SCHEMA = 2 };

static const struct {
    const char *name;
    int cmds;
} db_cmd_opts[] = {
    {"format", FOR_SQL | FOR_SCHEMA},
    {"verbose", FOR_SQL | FOR_SCHEMA},
    {"help", FOR_SQL | FOR_SCHEMA},
    {"show-sql", FOR_SQL},
    {"timeout", FOR_SQL | FOR_SCHEMA},
    {"max-rows", FOR_SQL},
    {"max-bytes", FOR_SQL},
    {"in-process", FOR_SQL},
    {"sample-values", FOR_SCHEMA},
};

/* Whether the getopt table opts has an option called name. */
static int in_table(const struct option *opts, const char *name)
{
    for (; opts->name; opts++)
        if (strcmp(opts->name, name) == 0)
            return 1;
    return 0;
}

/*
** The commands that take option name (one of ask's), as "ask, shell and
** sql" into out: ask and shell take all of them, sql and schema those of
** cmds (FOR_SQL, FOR_SCHEMA), eval its own and the agent's, learn its own,
** serve and mcp the model's and the agent's (their own options are none
** of ask's).
*/
static void commands_taking(const char *name, int cmds, char *out,
                            size_t size)
{
    const char *list[8];
    int n = 0, i;
    size_t len = 0;

    list[n++] = "ask";
    list[n++] = "shell";
    if (cmds & FOR_SQL)
        list[n++] = "sql";
    if (cmds & FOR_SCHEMA)
        list[n++] = "schema";
    /* eval's own --seed seeds its sample of questions; the model's seed
    ** is its --model-seed there. It refuses --answer (eval.c). */
    if ((in_table(cli_eval_opts, name) && strcmp(name, "seed") != 0) ||
        (in_table(cli_agent_opts, name) && strcmp(name, "answer") != 0))
        list[n++] = "eval";
    if (in_table(cli_learn_opts, name))
        list[n++] = "learn";
    if (in_table(cli_model_opts, name) || in_table(cli_agent_opts, name)) {
        list[n++] = "serve";
        list[n++] = "mcp";
    }
    out[0] = '\0';
    for (i = 0; i < n && len < size; i++) {
        snprintf(out + len, size - len, "%s%s",
                 i == 0 ? "" : i == n - 1 ? " and " : ", ", list[i]);
        len += strlen(out + len);
    }
}

/*
** 0 when cmd takes option c (getopt's code of an entry of opts; ask and
** shell take them all), else -1 with the usage error printed: "askdb sql:
** --answer is for ask, shell, eval, serve and mcp (see 'askdb help sql')".
*/
static int refuse_option(const char *cmd, const struct option *opts, int c)
{
    int bit = strcmp(cmd, "sql") == 0      ? FOR_SQL
              : strcmp(cmd, "schema") == 0 ? FOR_SCHEMA
                                           : 0;
    int cmds = 0;
    char takers[96];
    size_t i;

    while (opts->name && opts->val != c)
        opts++;
    if (!bit || !opts->name) /* not an option: getopt's '?' */
        return 0;
    for (i = 0; i < sizeof db_cmd_opts / sizeof db_cmd_opts[0]; i++)
        if (strcmp(db_cmd_opts[i].name, opts->name) == 0) {
            cmds = db_cmd_opts[i].cmds;
            break;
        }
    if (cmds & bit)
        return 0;
    commands_taking(opts->name, cmds, takers, sizeof takers);
    fprintf(stderr, "askdb %s: --%s is for %s (see 'askdb help %s')\n",
            cmd, opts->name, takers, cmd);
    return -1;
}

/* Whether a that starts with '-' has white space before any '=': no
** option does, a statement that starts with a comment ("-- why\n...")
** does. */
static int looks_like_statement(const char *a)
{
    return a[0] == '-' && strcspn(a, " \t\r\n=") < strcspn(a, "=");
}

/* Whether option argument a (not "--x=v") takes the next argument as
** its value. */
static int takes_value(const char *a, const struct option *opts)
{
    size_t n;

    if (strcmp(a, "-f") == 0)
        return 1;
    if (a[0] != '-' || a[1] != '-' || strchr(a, '='))
        return 0;
    n = strlen(a + 2);
    for (; opts->name; opts++)
        if (strncmp(opts->name, a + 2, n) == 0)
            return opts->has_arg == required_argument;
    return 0;
}

/*
** Move the arguments that look like statements (looks_like_statement)
** to the end of argv[1..argc), in their order, and return how many: they
** are operands, which getopt would take for unknown options. The value
** of an option that takes one, and everything after "--", stays put.
*/
static int statements_last(int argc, char **argv, const struct option *opts)
{
    char **tail = malloc((size_t)argc * sizeof *tail);
    int i, k = 1, n = 0;

    if (!tail)
        return 0;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            while (i < argc)
                argv[k++] = argv[i++];
            break;
        }
        if (looks_like_statement(argv[i])) {
            tail[n++] = argv[i];
            continue;
        }
        argv[k++] = argv[i];
        if (takes_value(argv[i], opts) && i + 1 < argc)
            argv[k++] = argv[++i];
    }
    memcpy(argv + k, tail, (size_t)n * sizeof *tail);
    free(tail);
    return n;
}

/* Parse options into o (argv[0] is "askdb CMD", which starts every
** message); returns the index of the first operand, or -1 (usage error,
** message printed), or -2 (help printed). */
static int parse_opts(int argc, char **argv, struct cli_opts *o,
                      const char *cmd)
{
    struct option *opts = cli_merge_opts(long_opts, 1);
    const char *prog = argv[0];
    int c, r;

    if (!opts) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return -1;
    }
    /* getopt sees all but those; they follow its operands. */
    argc -= statements_last(argc, argv, opts);
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:vh", opts, NULL)) != -1) {
        if (refuse_option(cmd, opts, c))
            goto bad;
        r = cli_agent_opt(c, optarg, &o->cfg, prog);
        if (!r)
            r = cli_model_opt(c, optarg, &o->cfg, prog);
        if (r) {
            if (r < 0)
                goto bad;
            continue;
        }
        switch (c) {
        case 'f':
            o->format = format_parse(optarg);
            if (o->format < 0) {
                fprintf(stderr, "%s: unknown format '%s' (table, csv, "
                                "json, markdown)\n", prog, optarg);
                goto bad;
            }
            break;
        case 'v':
            o->verbose = 1;
            break;
        case 'h':
            (void)help(cmd);
            free(opts);
            return -2;
        case OPT_SHOW_SQL:
            o->show_sql = 1;
            break;
        case OPT_DRY_RUN:
            o->cfg.dry_run = 1;
            break;
        default:
            fprintf(stderr, "%s: see 'askdb help %s'\n", prog, cmd);
            goto bad;
        }
    }
    free(opts);
    return optind;
bad:
    free(opts);
    return -1;
}

/* Nothing but white space (a question that asks nothing). */
static int blank(const char *s)
{
    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    return *s == '\0';
}

static int cmd_ask(const struct cli_opts *o, const char *db,
                   const char *question)
{
    askdb_agent *ag = NULL;
    askdb_status st;
    int rc;

    st = cli_agent_new(&o->cfg, db, &ag);
    if (st)
        return cli_exit_code(st);
    rc = cli_answer(ag, o, question);
    askdb_agent_free(ag);
    return rc;
}

/* askdb schema: the schema as text or JSON; a database with no tables
** or views is an error, exit 3, as it is for ask (nothing to ask about).
** -v says how long the read took (its only step: no statement runs). */
static int print_schema(askdb_db *db, const struct cli_opts *o)
{
    askdb_status st;
    char *text = NULL, msg[160];
    double t0 = srv_now_ms();

    st = askdb_db_schema_text(db, &text);
    if (!st && o->verbose) {
        snprintf(msg, sizeof msg, "read the schema in %.0f ms, in this "
                 "process (schema runs no statement)", srv_now_ms() - t0);
        cli_log_step(NULL, "db", msg);
    }
    if (!st && !*text) {
        format_printf(stderr, "askdb: database '%s' has no tables or views "
                              "to ask about\n", askdb_db_label(db));
        askdb_free(text);
        return EXIT_DB;
    }
    if (!st && o->format == FMT_JSON) {
        askdb_free(text);
        text = NULL;
        st = askdb_db_schema_json(db, ASKDB_JSON_PRETTY, &text);
    }
    if (st) {
        format_printf(stderr, "askdb: %s\n", askdb_db_errmsg(db));
    } else {
        format_puts(stdout, text);
        if (o->format == FMT_JSON)
            fputc('\n', stdout);
    }
    askdb_free(text);
    return st == ASKDB_ERR_CANCELLED ? EXIT_CANCELLED
           : st                      ? EXIT_DB
                                     : EXIT_ANSWERED;
}

static int cmd_db(const struct cli_opts *o, const char *path,
                  const char *sql)
{
    askdb_db *db = NULL;
    askdb_status st;
    int rc;

    st = cli_db_open(path, &o->cfg, &db);
    if (st) {
        format_printf(stderr, "askdb: %s\n", askdb_db_errmsg(db));
        askdb_db_close(db);
        return cli_exit_code(st);
    }
    /* Ctrl-C cancels the statement or the schema read (on a server too:
    ** PostgreSQL and MariaDB are sent a cancel) instead of leaving it to
    ** run there until its time limit. */
    if (sql)
        cli_say_in_process(&o->cfg, db);
    cli_interrupt_begin_db(db);
    rc = sql ? cli_run_sql(db, o, sql) : print_schema(db, o);
    (void)cli_interrupt_end();
    askdb_db_close(db);
    return rc;
}

/*
** The exit code once what stdout holds is written out: a full disk or a
** failing device shows only at a flush, often the last one, and exit 0
** with the rows lost would say they were printed. A write error is
** reported and turns 0 into EXIT_USAGE, the code of a trace file that
** cannot be written; an earlier failure keeps its own code.
*/
static int output_written(int rc)
{
    int bad, err;

    errno = 0;
    bad = fflush(stdout) != 0 || ferror(stdout);
    err = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (!bad)
        return rc;
    fprintf(stderr, "askdb: cannot write the output%s%s\n", err ? ": " : "",
            err ? strerror(err) : "");
    return rc ? rc : EXIT_USAGE;
}

/* ask or sql (cmd) given a question or statement (what) of n words
** (n > 1) not in quotes, which the shell split into arguments: say so,
** and how to give it. */
static void unquoted_words(const char *cmd, const char *what,
                           const char *db, char **words, int n)
{
    int i;

    format_printf(stderr, "askdb %s: the %s is %d arguments (", cmd, what,
                  n);
    for (i = 0; i < n; i++)
        format_printf(stderr, "%s%s", i ? " " : "", words[i]);
    format_printf(stderr, "): give it as one, in quotes: askdb %s %s \"",
                  cmd, db);
    for (i = 0; i < n; i++)
        format_printf(stderr, "%s%s", i ? " " : "", words[i]);
    fputs("\"\n", stderr);
}

/* The operands of cmd (ask, shell, schema or sql), as its usage says. */
static const char *operands(const char *cmd)
{
    return strcmp(cmd, "ask") == 0   ? "DB QUESTION"
           : strcmp(cmd, "sql") == 0 ? "DB STATEMENT"
                                     : "DB";
}

/*
** ask or sql (cmd) given its two operands the other way round: db is no
** file (nor a URL) and text, the question or statement, is one. Says so
** and returns 1; "cannot open database 'SELECT 1'" told only half.
*/
static int swapped(const char *cmd, const char *db, const char *text)
{
    struct stat sb;

    if (strstr(db, "://") || stat(db, &sb) == 0 || errno != ENOENT ||
        stat(text, &sb) != 0 || !S_ISREG(sb.st_mode))
        return 0;
    fprintf(stderr, "askdb %s: '%s' is no file and '%s' is one: the "
                    "database comes first (askdb %s %s)\n", cmd, db, text,
            cmd, operands(cmd));
    return 1;
}

/* askdb CMD ...: argv[1] is "askdb CMD" (see main). */
static int run(const char *cmd, int argc, char **argv)
{
    struct format_stream tokens = {0};
    struct cli_opts o;
    int first, nargs;

    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
        strcmp(cmd, "help") == 0) {
        const char *what = argc > 2 ? argv[2] : NULL;

        /* askdb help --help: help's own, as every command gives its own */
        if (what && (strcmp(what, "-h") == 0 || strcmp(what, "--help") == 0))
            what = "help";
        return help(what) ? EXIT_USAGE : EXIT_ANSWERED;
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        if (argc > 2 && (strcmp(argv[2], "-h") == 0 ||
                         strcmp(argv[2], "--help") == 0))
            return help("version") ? EXIT_USAGE : EXIT_ANSWERED;
        printf("askdb %s\n", askdb_version());
        return EXIT_ANSWERED;
    }
    if (strcmp(cmd, "eval") == 0)
        return cli_eval(argc - 1, argv + 1);
    if (strcmp(cmd, "learn") == 0)
        return cmd_learn(argc - 1, argv + 1);
    if (strcmp(cmd, "ask") && strcmp(cmd, "shell") && strcmp(cmd, "schema") &&
        strcmp(cmd, "sql")) {
        fprintf(stderr, "askdb: unknown command '%s'\n\n", cmd);
        fputs(usage_main, stderr);
        return EXIT_USAGE;
    }
    memset(&o, 0, sizeof o);
    o.cfg = askdb_config_default();
    o.format = -1;
    first = parse_opts(argc - 1, argv + 1, &o, cmd);
    if (first == -2)
        return EXIT_ANSWERED;
    if (first < 0)
        return EXIT_USAGE;
    /* The schema is CREATE TABLE text or JSON: no table of it to draw. */
    if (strcmp(cmd, "schema") == 0 && o.format >= 0 && o.format != FMT_JSON) {
        fprintf(stderr, "askdb schema: -f takes only json here (the default "
                        "is the schema's CREATE TABLE text)\n");
        return EXIT_USAGE;
    }
    first += 1; /* parse_opts saw argv shifted by one */
    nargs = argc - first;
    /* One question does not pay back what 2 MiB pages cost at load
    ** (docs/agent.md, "Huge pages"); ASKDB_HUGEPAGES=1 still asks. */
    if (strcmp(cmd, "ask") == 0)
        o.cfg.huge_pages = 0;
    /* sql and schema ask no model: a provider they would not use is not
    ** theirs to refuse. */
    if (strcmp(cmd, "ask") == 0 || strcmp(cmd, "shell") == 0) {
        if (cli_model_env(argv[1], &o.cfg))
            return EXIT_USAGE;
    } else {
        askdb_config_from_env(&o.cfg);
    }
    if (o.verbose) {
        o.cfg.log_fn = cli_log_step;
        if (o.cfg.stream) {
            o.cfg.token_fn = cli_log_token;
            o.cfg.token_ud = &tokens;
            o.cfg.log_ud = &tokens;
        }
    }

    if ((strcmp(cmd, "ask") == 0 || strcmp(cmd, "sql") == 0) &&
        nargs == 2 && swapped(cmd, argv[first], argv[first + 1]))
        return EXIT_USAGE;
    if (strcmp(cmd, "ask") == 0 && nargs == 2 && blank(argv[first + 1])) {
        fprintf(stderr, "askdb ask: the question is empty (give it as the "
                        "second argument, in quotes)\n");
        return EXIT_USAGE;
    }
    if (((strcmp(cmd, "ask") == 0 && nargs == 2) ||
         (strcmp(cmd, "shell") == 0 && nargs == 1)) &&
        cli_memory_check(argv[1], &o.cfg))
        return EXIT_USAGE;
    if (strcmp(cmd, "ask") == 0 && nargs == 2)
        return cmd_ask(&o, argv[first], argv[first + 1]);
    if (strcmp(cmd, "shell") == 0 && nargs == 1)
        return cli_shell(&o, argv[first]);
    /* The helper starts at a handle's first statement, and schema runs
    ** none: not looking for it spares -v a line about where statements
    ** would run, and a wrong ASKDB_EXEC_HELPER a refusal of a command
    ** that never needs it. */
    if (strcmp(cmd, "schema") == 0 && nargs == 1) {
        o.cfg.in_process = 1;
        return cmd_db(&o, argv[first], NULL);
    }
    if (strcmp(cmd, "sql") == 0 && nargs == 2)
        return cmd_db(&o, argv[first], argv[first + 1]);
    if (strcmp(cmd, "ask") == 0 && nargs > 2) {
        unquoted_words(cmd, "question", argv[first], argv + first + 1,
                       nargs - 1);
        return EXIT_USAGE;
    }
    if (strcmp(cmd, "sql") == 0 && nargs > 2) {
        unquoted_words(cmd, "statement", argv[first], argv + first + 1,
                       nargs - 1);
        return EXIT_USAGE;
    }
    fprintf(stderr, "askdb %s: wrong number of arguments: give %s (see "
                    "'askdb help %s')\n", cmd, operands(cmd), cmd);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    char prog[64];
    const char *cmd;

    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_USAGE;
    }
    /* Each command parses argv + 1, and getopt starts its own messages
    ** with that argv[0]: make it "askdb CMD", as askdb's messages start
    ** ("askdb ask: unrecognized option '--bogus'", not "ask: ..."). */
    cmd = argv[1];
    snprintf(prog, sizeof prog, "askdb %s", cmd);
    argv[1] = prog;
    cli_env_warn(prog);
    /* The servers speak their protocols and end their own way. */
    if (strcmp(cmd, "serve") == 0)
        return cmd_serve(argc - 1, argv + 1);
    if (strcmp(cmd, "mcp") == 0)
        return cmd_mcp(argc - 1, argv + 1);
    return output_written(run(cmd, argc, argv));
}
