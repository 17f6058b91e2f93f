/* shell.c - askdb shell: questions line by line, with history (libedit). */
#include <editline/readline.h>
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char shell_help[] =
    "Type a question about the database, or a command:\n"
    "  .sql STATEMENT   run one read-only statement\n"
    "  .schema          print the schema as the model sees it\n"
    "  .new             forget the conversation: the next question is not\n"
    "                   a follow-up of the earlier ones\n"
    "  .help            this text\n"
    "  .quit            leave (also Ctrl-D)\n";

/* History file: $XDG_STATE_HOME/askdb/history, else
** ~/.local/state/askdb/history. Returns a malloc()ed path or NULL. The
** folder is created if missing (it is ours, not the user's database). */
static char *history_path(void)
{
    const char *base = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    char dir[4096], *p;
    size_t n;

    if (base && *base)
        snprintf(dir, sizeof dir, "%s/askdb", base);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.local/state/askdb", home);
    else
        return NULL;
    for (p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0700);
            *p = '/';
        }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return NULL;
    n = strlen(dir) + sizeof "/history";
    p = malloc(n);
    if (p)
        snprintf(p, n, "%s/history", dir);
    return p;
}

/* One line from stdin without editing (not a terminal). malloc()ed. */
static char *plain_line(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);

    if (n < 0) {
        free(line);
        return NULL;
    }
    if (n > 0 && line[n - 1] == '\n')
        line[n - 1] = '\0';
    return line;
}

/*
** libedit decodes what is typed, and the history file, with the LC_CTYPE
** locale: in "C" (nothing calls setlocale) it drops every non-ASCII
** character. The terminal's locale (LANG, LC_ALL, LC_CTYPE) is set for
** the main thread only while libedit runs (uselocale), not for the whole
** process with setlocale(): the SQL analysis, the checks and the stemmer
** use ctype and strcasecmp, which follow LC_CTYPE (in a Turkish locale
** tolower('I') is not 'i'), and the output is bytes askdb checks itself.
** (locale_t)0 when the environment names no locale there is.
*/
static locale_t editor_locale;

static void editor_begin(void)
{
    if (editor_locale)
        uselocale(editor_locale);
}

static void editor_end(void)
{
    if (editor_locale)
        uselocale(LC_GLOBAL_LOCALE);
}

/*
** One line from the terminal, with editing and history (malloc()ed), or
** NULL at Ctrl-D. Ctrl-C drops what was typed and gives a new prompt, as
** bash, psql and sqlite3 do: it interrupts readline, which then returns
** NULL as at the end of the input.
*/
static char *prompt_line(void)
{
    char *line;

    for (;;) {
        cli_interrupt_begin(NULL);
        editor_begin();
        line = readline("askdb> ");
        editor_end();
        if (!cli_interrupt_end() || line)
            return line;
        fputc('\n', stdout);
    }
}

static char *trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

/*
** The schema prompt is made ready (askdb_agent_warm) in a thread of its own
** while the person types the first line; every command but .help waits
** for it first, since the agent is not shared between threads. Quitting
** cancels it.
*/
struct warm {
    pthread_t thread;
    askdb_agent *ag;
    int running;
};

static void *warm_main(void *ud)
{
    struct warm *w = ud;

    askdb_agent_warm(w->ag);   /* a failure shows on the first question */
    return NULL;
}

/* The thread blocks SIGINT: Ctrl-C is for the main thread, where it
** interrupts readline (prompt_line). */
static void warm_start(struct warm *w, askdb_agent *ag)
{
    sigset_t block, old;

    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    w->ag = ag;
    w->running = pthread_create(&w->thread, NULL, warm_main, w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void warm_wait(struct warm *w, int cancel)
{
    if (!w->running)
        return;
    if (cancel)
        askdb_agent_cancel(w->ag);
    pthread_join(w->thread, NULL);
    w->running = 0;
}

/* .sql: the statement on the agent's database, which Ctrl-C cancels. */
static int sql_interruptible(askdb_agent *ag, const struct cli_opts *o,
                             const char *sql)
{
    int rc;

    cli_interrupt_begin(ag);
    rc = cli_run_sql(askdb_agent_db(ag), o, sql);
    (void)cli_interrupt_end();
    return rc;
}

int cli_shell(const struct cli_opts *o, const char *db_path)
{
    struct warm warm = {0};
    askdb_agent *ag = NULL;
    askdb_status st;
    int tty = isatty(STDIN_FILENO), rc = EXIT_ANSWERED;
    char *hist = NULL, *line, *q, *text;

    struct cli_opts so = *o;

    /* Follow-ups ("and only for 2023?") read in the context of the
    ** earlier questions. */
    so.cfg.conversation = 1;
    o = &so;
    st = cli_agent_new(&o->cfg, db_path, &ag);
    if (st)
        return cli_exit_code(st);
    if (tty) {
        hist = history_path();
        editor_locale = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
        editor_begin();
        using_history();
        if (hist)
            read_history(hist);
        editor_end();
        format_printf(stdout, "askdb %s - asking %s. Type .help for "
                              "commands.\n", askdb_version(), db_path);
        warm_start(&warm, ag);
    }
    for (;;) {
        line = tty ? prompt_line() : plain_line();
        if (!line)
            break;
        q = trim(line);
        if (!*q) {
            free(line);
            continue;
        }
        if (tty) {
            editor_begin();
            add_history(q);
            if (hist)
                write_history(hist);
            editor_end();
        }
        if (strcmp(q, ".quit") == 0 || strcmp(q, ".exit") == 0) {
            free(line);
            break;
        }
        if (strcmp(q, ".help") != 0)
            warm_wait(&warm, 0);
        /* Every line sets the code, the shell's own errors too: a script
        ** ends with its last line's, as askdb's commands give them (a
        ** usage error 2, a schema that cannot be read 3). */
        rc = EXIT_ANSWERED;
        if (strcmp(q, ".new") == 0) {
            askdb_agent_forget(ag);
            if (tty)
                puts("(a new conversation)");
        } else if (strcmp(q, ".help") == 0) {
            fputs(shell_help, stdout);
        } else if (strcmp(q, ".schema") == 0) {
            text = NULL;
            rc = EXIT_DB;
            if (askdb_db_schema_text(askdb_agent_db(ag), &text)) {
                format_printf(stderr, "askdb: %s\n",
                              askdb_db_errmsg(askdb_agent_db(ag)));
            } else if (!*text) {
                format_printf(stderr, "askdb: database '%s' has no tables "
                                      "or views\n",
                              askdb_db_label(askdb_agent_db(ag)));
            } else {
                format_puts(stdout, text);
                rc = EXIT_ANSWERED;
            }
            askdb_free(text);
        } else if (strncmp(q, ".sql", 4) == 0 && (q[4] == ' ' || !q[4])) {
            if (!*trim(q + 4)) {
                fprintf(stderr, "askdb: .sql needs a statement\n");
                rc = EXIT_USAGE;
            } else {
                rc = sql_interruptible(ag, o, trim(q + 4));
            }
        } else if (q[0] == '.') {
            format_printf(stderr, "askdb: unknown command '%s' (.help "
                                  "lists them)\n", q);
            rc = EXIT_USAGE;
        } else {
            rc = cli_answer(ag, o, q);
        }
        fflush(stdout);
        free(line);
    }
    warm_wait(&warm, 1);
    free(hist);
    if (editor_locale)
        freelocale(editor_locale);
    askdb_agent_free(ag);
    /* Like a script interpreter: the last line's result is the exit code
    ** when not interactive; an interactive session ends with 0. */
    return tty ? EXIT_ANSWERED : rc;
}
