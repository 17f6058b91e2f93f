/* cli.h - what the askdb command's files share: options and exit codes. */
#ifndef ASKDB_CLI_H
#define ASKDB_CLI_H

#include "askdb.h"
#include "cli/format.h"

/* Exit codes (documented in the README and --help). */
enum {
    EXIT_ANSWERED = 0,
    EXIT_NO_SQL = 1,         /* no valid SQL after all attempts, refused */
    EXIT_USAGE = 2,
    EXIT_DB = 3,             /* database cannot be opened */
    EXIT_MODEL = 4           /* model unreachable or failing */
};

struct cli_opts {
    askdb_config cfg;
    int format;              /* -1 = default for the output */
    int show_sql;
    int verbose;
};

/* Map a library status to the command's exit code. */
int cli_exit_code(askdb_status st);

/* Ask one question with an agent and print the answer; returns the exit
** code. Shared by `ask` and `shell`. */
int cli_answer(askdb_agent *ag, const struct cli_opts *o,
               const char *question);

/* Run one statement through the guard and print it (`sql`, `.sql`). */
int cli_run_sql(askdb_db *db, const struct cli_opts *o, const char *sql);

/* The interactive shell (shell.c). */
int cli_shell(const struct cli_opts *o, const char *db_path);

/* askdb eval (eval.c): argv[0] is "eval"; returns the exit code. */
int cli_eval(int argc, char **argv);

#endif
