/* cli.h - what the askdb command's files share: options and exit codes. */
#ifndef ASKDB_CLI_H
#define ASKDB_CLI_H

#include <getopt.h>

#include "askdb.h"
#include "format.h"

/* Exit codes (documented in the README and --help). */
enum {
    EXIT_ANSWERED = 0,
    EXIT_NO_SQL = 1,         /* no valid SQL after all attempts, refused */
    EXIT_USAGE = 2,
    EXIT_DB = 3,             /* database cannot be opened */
    EXIT_MODEL = 4,          /* model unreachable or failing */
    EXIT_CANCELLED = 130     /* Ctrl-C stopped the question (128 + SIGINT) */
};

struct cli_opts {
    askdb_config cfg;
    int format;              /* -1 = default for the output */
    int show_sql;
    int verbose;
};

/* Map a library status to the command's exit code. */
int cli_exit_code(askdb_status st);

/* A command serving the databases paths[0..n) with cfg: 0, or EXIT_USAGE
** with why on stderr ("PROG: cannot open trace file ...") when cfg's
** trace names one of them. Each agent checks its own database only. */
int cli_trace_check(const char *prog, const askdb_config *cfg, int n,
                    const char *const *paths);

/*
** A command that asks questions (ask, shell, eval, serve, mcp) with the
** learned-pairs store cfg->memory_path (--memory; NULL, the default
** store, is not checked: its cache folder is made with it): 0, or
** EXIT_USAGE with why on stderr when it can never be used, as askdb
** learn refuses it: not an askdb store (another database, any other
** file, a folder, a newer format) or in a folder that does not exist. A
** store that cannot be read now (a lock, permissions, damage) is said as
** a warning and 0 returned: the questions go on without learned
** examples, and try it again (a lock passes).
*/
int cli_memory_check(const char *prog, const askdb_config *cfg);

/* Whether the folder path's file is in exists (the working directory
** for a bare name; out of memory counts as yes: the store says it). */
int cli_folder_exists(const char *path);

/* Warn on stderr ("PROG: ASKDB_HUGEPAGES is neither 0 nor 1: ignored")
** about an environment variable askdb_config_from_env() reads and whose
** value it does not take. */
void cli_env_warn(const char *prog);

/* askdb_config.log_fn of -v: "askdb: [step] msg" on stderr. ud: NULL,
** or the struct format_stream of cli_log_token, whose streamed text gets
** a line break first when it did not end its line. */
void cli_log_step(void *ud, const char *step, const char *msg);

/* askdb_config.token_fn of -v --stream; ud: a zeroed struct
** format_stream that lives as long as the run. */
void cli_log_token(void *ud, const char *piece, size_t len);

/* Ask one question with an agent and print the answer; returns the exit
** code. Shared by `ask` and `shell` (output.c, like the three above). */
int cli_answer(askdb_agent *ag, const struct cli_opts *o,
               const char *question);

/*
** A question that was not asked (the shell without a model): why, on
** stderr as cli_answer says a failure, and with -f json on stdout the
** answer document cli_answer prints for a failed question (status st,
** error why, no SQL, no attempts), so a program reading the JSON gets one
** document per question. Returns the exit code of st.
*/
int cli_answer_refused(const struct cli_opts *o, const char *question,
                       askdb_status st, const char *why);

/*
** Until cli_interrupt_end(), Ctrl-C (SIGINT) calls askdb_agent_cancel(ag)
** (nothing when ag is NULL) and interrupts a blocking read (readline
** returns NULL); a second Ctrl-C ends askdb as usual. Nothing changes when
** askdb was started with SIGINT ignored (nohup, &). cli_interrupt_end()
** puts the former handler back and returns 1 when Ctrl-C came.
*/
void cli_interrupt_begin(askdb_agent *ag);
int cli_interrupt_end(void);

/* The same for a database handle of its own (`sql`, `schema`): Ctrl-C
** calls askdb_db_cancel(db). End with cli_interrupt_end(). */
void cli_interrupt_begin_db(askdb_db *db);

/*
** askdb_db_open() and askdb_agent_new() for the commands: with a
** PostgreSQL or MariaDB URL, Ctrl-C during the open cancels the connect
** (a PostgreSQL walk of a host list included), which ends
** ASKDB_ERR_CANCELLED ("cancelled while connecting to ..."); a file
** opens as before, Ctrl-C ending askdb. cli_agent_new() says a failure
** on stderr itself ("askdb: ..."), frees the agent and leaves *ag NULL;
** a Ctrl-C that came after the connect (while a local model loads) ends
** it too, as "cancelled".
*/
askdb_status cli_db_open(const char *path, const askdb_config *cfg,
                         askdb_db **db);
askdb_status cli_agent_new(const askdb_config *cfg, const char *path,
                           askdb_agent **ag);

/* With -v (cfg->log_fn) and --in-process, say that the statements of the
** SQLite or DuckDB file db run in this process, as -v says it of
** askdb-exec otherwise; nothing for a server's database. cli_agent_new()
** calls it; sql calls it after its open (schema, which sets in_process
** itself to start no helper, does not). */
void cli_say_in_process(const askdb_config *cfg, askdb_db *db);

/* Run one statement through the guard and print it (`sql`, `.sql`). */
int cli_run_sql(askdb_db *db, const struct cli_opts *o, const char *sql);

/* The interactive shell (shell.c). */
int cli_shell(const struct cli_opts *o, const char *db_path);

/* askdb eval (eval.c): argv[0] is "askdb eval" (getopt starts its
** messages with it); returns the exit code. */
int cli_eval(int argc, char **argv);
/* Its own options, before the agent's (cli_agent_opts). */
extern const struct option cli_eval_opts[];

/* The agent technique options shared by ask, shell and eval
** (agentopts.c). Their getopt codes start at CLI_AGENT_OPT_BASE. */
#define CLI_AGENT_OPT_BASE 1000
extern const struct option cli_agent_opts[];
extern const char cli_agent_help[];

/* Apply option c (with its argument) to cfg: 1 = it was one of ours, 0 =
** not ours, -1 = bad argument (message printed, prefixed with prog). */
int cli_agent_opt(int c, const char *arg, askdb_config *cfg,
                  const char *prog);

/* A whole number in [lo, hi] from an option argument into *out: 0, or -1
** with "PROG: OPT takes a whole number from LO to HI, not 'S'" printed. */
int cli_number(const char *prog, const char *opt, const char *s, long lo,
               long hi, long *out);

/* A number (strtod's syntax, the whole of s) from an option argument into
** *out: 0, or -1 when s is not one. Nothing is printed: each option says
** what range it takes. */
int cli_real(const char *s, double *out);

/* The model and limit options of ask, shell, sql, schema, serve and mcp
** (--provider, --llm-url, --model, --api-key, --temperature, --max-tokens,
** --llm-timeout, --retries, --stream, --seed, --threads, --no-grammar,
** --no-prompt-cache, --trace, --max-attempts, --timeout, --max-rows,
** --max-bytes, --in-process), and their parser: as cli_agent_opt. */
extern const struct option cli_model_opts[];
/* Their help: the limits (--timeout, --max-rows, --max-bytes,
** --in-process), and the rest (model, --max-attempts, --trace); schema's
** limit is --timeout alone, said as what it bounds there (it runs no
** statement to cap or to run in askdb-exec). */
extern const char cli_limits_help[];
extern const char cli_schema_limits_help[];
extern const char cli_model_help[];
int cli_model_opt(int c, const char *arg, askdb_config *cfg,
                  const char *prog);

/* askdb_config_from_env(cfg) for a command that asks a model (ask,
** shell, eval, serve, mcp), then its provider checked: 0, or -1 with
** "PROG: --provider 'x' is not a model provider: use ..." (or
** ASKDB_PROVIDER='x', where it came from) on stderr. */
int cli_model_env(const char *prog, askdb_config *cfg);

/* own options, then the model options (with_model), then the agent
** options, in one malloc()ed array for getopt_long (NULL when out of
** memory). */
struct option *cli_merge_opts(const struct option *own, int with_model);

#endif
