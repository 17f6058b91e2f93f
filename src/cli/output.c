/* output.c - what ask, shell and sql print: the answer, the rows, the
** verbose log, and the exit code. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_trace_check(const char *prog, const askdb_config *cfg, int n,
                    const char *const *paths)
{
    const char *why;
    int i;

    for (i = 0; cfg->trace_path && i < n; i++)
        if ((why = askdb_output_refusal_for(cfg->trace_path, paths[i]))) {
            fprintf(stderr, "%s: cannot open trace file '%s': %s\n", prog,
                    cfg->trace_path, why);
            return EXIT_USAGE;
        }
    return 0;
}

int cli_folder_exists(const char *path)
{
    const char *slash = strrchr(path, '/');
    struct stat sb;
    char *dir;
    int ok;

    if (!slash)
        return 1;
    dir = slash == path ? strdup("/")
                        : strndup(path, (size_t)(slash - path));
    if (!dir)
        return 1;             /* out of memory: the store says it later */
    ok = stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
    free(dir);
    return ok;
}

int cli_memory_check(const char *prog, const askdb_config *cfg)
{
    const char *path = cfg->memory_path;
    askdb_memory *m = NULL;
    askdb_status st;
    int rc = 0;

    if (!path)
        return 0;
    /* Without create: nothing is made, and a missing store is an empty
    ** one, whose folder is looked at below. */
    st = askdb_memory_open(path, 0, &m);
    if (st == ASKDB_ERR_USAGE || st == ASKDB_ERR_NOMEM) {
        format_printf(stderr, "%s: --memory: %s\n", prog,
                      askdb_memory_errmsg(m));
        rc = EXIT_USAGE;
    } else if (!cli_folder_exists(path)) {
        /* No store can ever be made there: askdb learn refuses it too. */
        format_printf(stderr, "%s: --memory: cannot use memory store '%s': "
                              "its folder does not exist (askdb learn makes "
                              "the store, not its folder)\n", prog, path);
        rc = EXIT_USAGE;
    } else if (st) {
        format_printf(stderr, "%s: warning: --memory: %s; the questions go "
                              "on without learned examples\n", prog,
                      askdb_memory_errmsg(m));
    }
    askdb_memory_close(m);
    return rc;
}

void cli_env_warn(const char *prog)
{
    const char *v = getenv("ASKDB_HUGEPAGES");

    /* The library ignores it (a value neither 0 nor 1 says neither);
    ** an operator who set it should know. */
    if (v && *v && strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
        fprintf(stderr, "%s: ASKDB_HUGEPAGES is neither 0 nor 1: ignored "
                        "(unset, only askdb ask does without huge pages)\n",
                prog);
}

int cli_exit_code(askdb_status st)
{
    switch (st) {
    case ASKDB_OK:
        return EXIT_ANSWERED;
    case ASKDB_ERR_USAGE:
    case ASKDB_ERR_IO:
        return EXIT_USAGE;
    case ASKDB_ERR_DB_OPEN:
        return EXIT_DB;
    case ASKDB_ERR_LLM:
    case ASKDB_ERR_LLM_UNREACHABLE:
    case ASKDB_ERR_UNSUPPORTED:
        return EXIT_MODEL;
    case ASKDB_ERR_CANCELLED:
        return EXIT_CANCELLED;
    default:
        return EXIT_NO_SQL;
    }
}

void cli_log_step(void *ud, const char *step, const char *msg)
{
    struct format_stream *tokens = ud;

    /* Streamed text that did not end its line ends it first: the log
    ** line starts on a line of its own. */
    if (tokens && tokens->open) {
        fputc('\n', stderr);
        tokens->open = 0;
    }
    format_printf(stderr, "askdb: [%s] %s\n", step, msg);
}

/* ud: the struct format_stream of the run. */
void cli_log_token(void *ud, const char *piece, size_t len)
{
    format_stream_piece(ud, stderr, piece, len);
}

static int effective_format(const struct cli_opts *o)
{
    if (o->format >= 0)
        return o->format;
    return isatty(STDOUT_FILENO) ? FMT_TABLE : FMT_CSV;
}

/*
** Ctrl-C while a question or the shell's .sql runs stops it
** (askdb_agent_cancel only sets a flag: safe in a signal handler); a
** second Ctrl-C is the default one. At the shell's prompt it only makes
** readline return (EINTR). The agent being asked and the handler it
** replaced are the globals of the command.
*/
static askdb_agent *volatile asking;
static askdb_db *volatile asking_db;
/* The caller's variable that askdb_agent_new() or askdb_db_open() sets
** as it starts, while it opens (cli_agent_new, cli_db_open). */
static askdb_agent **volatile opening;
static askdb_db **volatile opening_db;
static volatile sig_atomic_t interrupted;
static struct sigaction before;

static void on_sigint(int sig)
{
    if (interrupted) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    interrupted = 1;
    askdb_agent_cancel(asking);
    if (asking_db)
        askdb_db_cancel(asking_db);
    if (opening)
        askdb_agent_cancel(*opening);
    if (opening_db && *opening_db)
        askdb_db_cancel(*opening_db);
}

void cli_interrupt_begin(askdb_agent *ag)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;   /* no SA_RESTART: a read returns EINTR */
    sigemptyset(&sa.sa_mask);
    asking = ag;
    interrupted = 0;
    sigaction(SIGINT, &sa, &before);
    if (before.sa_handler == SIG_IGN)   /* started to ignore it (nohup, &) */
        sigaction(SIGINT, &before, NULL);
}

void cli_interrupt_begin_db(askdb_db *db)
{
    asking_db = db;
    cli_interrupt_begin(NULL);
}

int cli_interrupt_end(void)
{
    sigaction(SIGINT, &before, NULL);
    asking = NULL;
    asking_db = NULL;
    opening = NULL;
    opening_db = NULL;
    return interrupted;
}

/* A PostgreSQL or MariaDB URL, whose open connects with Ctrl-C heeded
** (docs/engines/postgresql.md, docs/engines/mariadb.md). A file opens at
** once, and Ctrl-C ends askdb as the default does. */
static int cancellable_open(const char *path)
{
    return path && (strncasecmp(path, "postgresql://", 13) == 0 ||
                    strncasecmp(path, "postgres://", 11) == 0 ||
                    strncasecmp(path, "mariadb://", 10) == 0 ||
                    strncasecmp(path, "mysql://", 8) == 0);
}

askdb_status cli_db_open(const char *path, const askdb_config *cfg,
                         askdb_db **db)
{
    askdb_status st;

    *db = NULL;
    if (!cancellable_open(path))
        return askdb_db_open(path, cfg, db);
    opening_db = db;
    cli_interrupt_begin(NULL);
    st = askdb_db_open(path, cfg, db);
    /* A Ctrl-C as the connect was made left db cancelled: what runs on
    ** it next ends cancelled. */
    (void)cli_interrupt_end();
    return st;
}

void cli_say_in_process(const askdb_config *cfg, askdb_db *db)
{
    const char *e = db ? askdb_db_engine(db) : NULL;
    char msg[768];

    if (!cfg->in_process || !cfg->log_fn || !e ||
        (strcmp(e, "sqlite") != 0 && strcmp(e, "duckdb") != 0))
        return;
    snprintf(msg, sizeof msg, "statements on '%s' run in this process "
             "(--in-process): one long function call can outlast --timeout",
             askdb_db_label(db));
    cfg->log_fn(cfg->log_ud, "db", msg);
}

askdb_status cli_agent_new(const askdb_config *cfg, const char *path,
                           askdb_agent **ag)
{
    askdb_status st;
    int cut;

    *ag = NULL;
    if (cancellable_open(path)) {
        opening = ag;
        cli_interrupt_begin(NULL);
    }
    st = askdb_agent_new(cfg, path, ag);
    cut = cancellable_open(path) && cli_interrupt_end();
    if (st)
        format_printf(stderr, "askdb: %s\n", askdb_agent_errmsg(*ag));
    else if (cut) /* after the connect: the agent was made all the same */
        format_printf(stderr, "askdb: cancelled\n");
    if (st || cut) {
        askdb_agent_free(*ag);
        *ag = NULL;
    } else {
        cli_say_in_process(cfg, askdb_agent_db(*ag));
    }
    return st ? st : cut ? ASKDB_ERR_CANCELLED : ASKDB_OK;
}

/* Ask with Ctrl-C turned into a cancel for the time of the question;
** *cut says whether one came. */
static askdb_status ask_interruptible(askdb_agent *ag, const char *question,
                                      askdb_answer **a, int *cut)
{
    askdb_status st;

    cli_interrupt_begin(ag);
    st = askdb_agent_ask(ag, question, a);
    *cut = cli_interrupt_end();
    return st;
}

/* "confidence: 67% (2 of 3 candidate queries agree, 1 not needed)": the
** candidates not needed were never made (the vote was decided without
** them), so they are not said to disagree. */
static void print_confidence(FILE *out, int markdown, const askdb_answer *a)
{
    fprintf(out, "%sconfidence: %.0f%% (%.0f of %d candidate queries agree",
            markdown ? "\n" : "", a->confidence * 100,
            a->confidence * a->ncandidates, a->ncandidates);
    if (a->nsettled > 0)
        fprintf(out, ", %d not needed", a->nsettled);
    fputs(")\n", out);
}

static void fence(size_t n)
{
    while (n--)
        fputc('`', stdout);
}

/* The SQL before the rows (--show-sql, --dry-run) in format f (not
** JSON, which holds it). A dry run's SQL is its whole output: always
** stdout. Shown next to CSV rows it goes to stderr to keep the CSV
** clean. */
static void print_sql(int f, int dry_run, const char *sql)
{
    size_t n = 3, run = 0;
    const char *s;

    if (f != FMT_MARKDOWN) {
        format_printf(f == FMT_CSV && !dry_run ? stderr : stdout, "%s\n",
                      sql);
        return;
    }
    /* A fence of more backticks than the SQL has in a row (CommonMark):
    ** a ``` in a string or comment of it does not end the block. */
    for (s = sql; *s; s++) {
        run = *s == '`' ? run + 1 : 0;
        if (run >= n)
            n = run + 1;
    }
    fence(n);
    format_printf(stdout, "sql\n%s\n", sql);
    fence(n);
    fputc('\n', stdout);
}

int cli_answer(askdb_agent *ag, const struct cli_opts *o,
               const char *question)
{
    askdb_answer *a = NULL;
    askdb_status st;
    int f = effective_format(o), i, cut;

    st = ask_interruptible(ag, question, &a, &cut);
    /* Ctrl-C while the words were written: the rows stand (ASKDB_OK, no
    ** text), and are printed; the code still says it was cancelled. */
    cut = cut && st == ASKDB_OK && o->cfg.answer && a && !a->text &&
          a->result && !o->cfg.dry_run;
    if (o->cfg.stream && o->verbose)
        fputc('\n', stderr);
    if (!a) {
        fprintf(stderr, "askdb: out of memory\n");
        return EXIT_NO_SQL;
    }
    if (f == FMT_JSON) {
        format_answer_json(stdout, a);
    } else if (st == ASKDB_OK && a->not_a_question) {
        /* Answered without SQL: the words are the whole answer. */
        format_printf(f == FMT_CSV ? stderr : stdout, "%s\n", a->text);
    } else if (st == ASKDB_OK) {
        if (o->show_sql || o->cfg.dry_run)
            print_sql(f, o->cfg.dry_run, a->sql);
        /* The answer in words first; CSV keeps stdout for the rows. */
        if (a->text)
            format_printf(f == FMT_CSV ? stderr : stdout, "%s\n\n", a->text);
        if (a->result)
            format_result(stdout, stderr, f, a->result);
        if (cut)
            fprintf(stderr, "askdb: cancelled while the answer in words "
                            "was written; the rows are the answer\n");
        else if (o->cfg.answer && !a->text && a->result && !o->cfg.dry_run)
            fprintf(stderr, "askdb: the answer in words could not be "
                            "written (the model failed%s); the rows are "
                            "the answer\n",
                    o->verbose ? ": see above" : "; -v says why");
        if (a->ncandidates > 1)
            print_confidence(f == FMT_CSV ? stderr : stdout,
                             f == FMT_MARKDOWN, a);
    }
    if (st != ASKDB_OK) {
        format_printf(stderr, "askdb: %s\n", a->error ? a->error : "failed");
    } else if (o->verbose) {
        for (i = 0; i < a->nattempts; i++)
            if (a->attempts[i].error != ASKDB_EC_NONE)
                format_printf(stderr, "askdb: attempt %d: %s: %s\n", i + 1,
                              askdb_error_class_str(a->attempts[i].error),
                              a->attempts[i].message ? a->attempts[i].message
                                                     : "");
        fprintf(stderr,
                "askdb: %d attempt%s, %ld model call%s, %ld+%ld tokens, "
                "%.0f ms (model %.0f ms)\n",
                a->nattempts, a->nattempts == 1 ? "" : "s", a->llm_calls,
                a->llm_calls == 1 ? "" : "s", a->prompt_tokens,
                a->completion_tokens, a->t.total_ms, a->t.llm_ms);
    }
    askdb_answer_free(a);
    return cut ? EXIT_CANCELLED : cli_exit_code(st);
}

int cli_answer_refused(const struct cli_opts *o, const char *question,
                       askdb_status st, const char *why)
{
    askdb_answer a;

    memset(&a, 0, sizeof a);
    if (effective_format(o) == FMT_JSON) {
        /* Borrowed strings: a is never freed. */
        a.question = (char *)question;
        a.status = st;
        a.error = (char *)why;
        format_answer_json(stdout, &a);
    }
    format_printf(stderr, "askdb: %s\n", why);
    return cli_exit_code(st);
}

int cli_run_sql(askdb_db *db, const struct cli_opts *o, const char *sql)
{
    askdb_result *r = NULL;
    askdb_status st = askdb_db_query(db, sql, &r);
    int f = effective_format(o);

    if (f == FMT_JSON) {
        format_result_json(stdout, sql, r, st ? askdb_db_errmsg(db) : NULL);
    } else if (st == ASKDB_OK) {
        if (o->show_sql)
            print_sql(f, 0, sql);
        format_result(stdout, stderr, f, r);
    }
    if (st)
        format_printf(stderr, "askdb: %s\n", askdb_db_errmsg(db));
    askdb_result_free(r);
    return st == ASKDB_OK              ? EXIT_ANSWERED
           : st == ASKDB_ERR_CANCELLED ? EXIT_CANCELLED
                                       : EXIT_NO_SQL;
}
