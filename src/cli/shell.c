/* shell.c - askdb shell: questions line by line, with history (libedit). */
#include <ctype.h>
#include <editline/readline.h>
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char shell_help[] =
    "Type a question about the database, or a command:\n"
    "  .sql STATEMENT   run one read-only statement\n"
    "  .sql             alone, or with a line that leaves a quote, comment\n"
    "                   or parenthesis open or ends with a comma, an\n"
    "                   operator (=, +, ||...) or a word such as AND,\n"
    "                   WHERE or ORDER BY: the statement goes on up to a\n"
    "                   line ending with ';'\n"
    "                   (Ctrl-C drops it; PostgreSQL's and DuckDB's\n"
    "                   $$...$$ and $tag$...$tag$ strings are quotes)\n"
    "  .schema          print the schema as the model sees it\n"
    "  .new             forget the conversation: the next question is not\n"
    "                   a follow-up of the earlier ones\n"
    "  .help            this text\n"
    "  .quit, .exit     leave (also Ctrl-D)\n"
    "Questions need a model; the commands do not.\n";

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
** The history keeps the last HISTORY_MAX lines. Each line typed is
** added to the history as the file holds it then, read again: of two
** shells open at once, each keeps the other's lines (writing this
** shell's history alone over the file lost what another had added since
** it started), and the file stays at HISTORY_MAX lines. (libedit's
** append_history(1) appends two lines once the history is full.)
*/
#define HISTORY_MAX 1000

static void history_start(const char *hist)
{
    using_history();
    stifle_history(HISTORY_MAX);
    if (hist)
        read_history(hist);
}

/* Keep line in the history and its file (hist, or none when NULL). */
static void history_keep(const char *hist, const char *line)
{
    editor_begin();
    if (hist && access(hist, R_OK) == 0) {
        clear_history();
        read_history(hist);
    }
    add_history(line);
    if (hist)
        write_history(hist);
    editor_end();
}

/*
** One line from the terminal, with editing and history (malloc()ed), or
** NULL at Ctrl-D. Ctrl-C drops what was typed: NULL with *cut set (as
** bash, psql and sqlite3 do, the caller gives a new prompt). It
** interrupts readline, which then returns NULL as at the end of the
** input.
*/
static char *prompt_line(const char *prompt, int *cut)
{
    char *line;

    cli_interrupt_begin(NULL);
    editor_begin();
    line = readline(prompt);
    editor_end();
    *cut = cli_interrupt_end() && !line;
    return line;
}

/* The next line, from the terminal (tty) or not; NULL at the end of the
** input, or at Ctrl-C with *cut set. */
static char *next_line(int tty, const char *prompt, int *cut)
{
    *cut = 0;
    return tty ? prompt_line(prompt, cut) : plain_line();
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
** Where a statement typed over several lines stands: in a quote ('text',
** "name", `name`; a doubled quote is one; a backslash escapes the next
** character in an E'...' string alone: askdb's MariaDB sessions read
** standard strings, NO_BACKSLASH_ESCAPES), in a dollar-quoted string
** ($$text$$, $tag$text$tag$: PostgreSQL and DuckDB alone, dollar set; in
** SQLite $name is a parameter), in a block comment, how many parentheses
** are open, its last character outside them (0 for none yet) and its
** last two words (a word is "" when it is no keyword: too long, or after
** a '.'). A -- comment ends with its line. Lexical only: it tells a
** statement that cannot be complete yet, not one that is.
*/
struct sql_scan {
    int dollar;       /* the engine reads dollar-quoted strings */
    char quote;       /* '$' in a dollar-quoted string, tag its tag */
    int escapes;      /* in the quote, a backslash escapes what follows */
    char *tag;        /* "$tag$" (malloc()ed) while quote is '$' */
    int comment;
    int depth;
    char last;
    char word[16], before[16]; /* the last word, and the token before it
                                  when that was a word ("" otherwise) */
};

/* 1 when s, a quote, starts an E'...' string (PostgreSQL, DuckDB: a
** backslash escapes in it); line is the start of s's line. */
static int escape_string(const char *line, const char *s)
{
    return *s == '\'' && s > line && (s[-1] == 'E' || s[-1] == 'e') &&
           (s - 1 == line || !(isalnum((unsigned char)s[-2]) ||
                               s[-2] == '_'));
}

/* PostgreSQL's identifier characters (scan.l: ident_start, ident_cont,
** a byte of a UTF-8 character among them); a tag takes them but '$'. */
static int ident_char(char c, int first)
{
    return isalpha((unsigned char)c) || c == '_' ||
           (unsigned char)c >= 0x80 || (!first && isdigit((unsigned char)c));
}

/*
** The length of the dollar quote "$tag$" that starts at s (a '$'), 0 when
** none does: as PostgreSQL's scan.l reads one (dolqdelim), a tag is empty
** or an identifier without '$', and the '$' does not continue a name or a
** number before it (abc$$ is a name, $1 a parameter).
*/
static size_t dollar_quote(const char *line, const char *s)
{
    size_t n = 1;

    if (s > line && (ident_char(s[-1], 0) || s[-1] == '$'))
        return 0;
    if (s[n] != '$' && !ident_char(s[n], 1))
        return 0;
    while (s[n] != '$' && ident_char(s[n], 0))
        n++;
    return s[n] == '$' ? n + 1 : 0;
}

/* A token outside quotes and comments ends at last: a word of n bytes
** at w, or anything else (n 0). */
static void sql_scan_token(struct sql_scan *sc, const char *w, size_t n,
                           char last)
{
    memcpy(sc->before, sc->word, sizeof sc->word);
    if (n >= sizeof sc->word)
        n = 0;
    memcpy(sc->word, w, n);
    sc->word[n] = '\0';
    sc->last = last;
}

/* The length of the word (a name or keyword) that starts at s, 0 when
** none does: one goes on after a letter, digit, '_' or '$'. */
static size_t word_at(const char *line, const char *s)
{
    size_t n = 0;

    if (s > line && (ident_char(s[-1], 0) || s[-1] == '$' || s[-1] == '.'))
        return 0;
    if (!ident_char(*s, 1))
        return 0;
    while (ident_char(s[n], 0) || s[n] == '$')
        n++;
    return n;
}

static void sql_scan_line(struct sql_scan *sc, const char *s)
{
    const char *line = s;
    size_t n;

    for (; *s; s++) {
        if (sc->comment) {
            if (s[0] == '*' && s[1] == '/') {
                sc->comment = 0;
                s++;
            }
        } else if (sc->quote == '$') {
            /* Only the same tag ends it: $a$ x $b$ y $a$ is one string. */
            n = strlen(sc->tag);
            if (strncmp(s, sc->tag, n) == 0) {
                free(sc->tag);
                sc->tag = NULL;
                sc->quote = 0;
                sql_scan_token(sc, s, 0, '$');
                s += n - 1;
            }
        } else if (sc->quote) {
            if (sc->escapes && *s == '\\' && s[1]) {
                s++;
            } else if (*s == sc->quote && s[1] == sc->quote) {
                s++;
            } else if (*s == sc->quote) {
                sc->quote = 0;
                sql_scan_token(sc, s, 0, *s);
            }
        } else if (s[0] == '-' && s[1] == '-') {
            return;
        } else if (s[0] == '/' && s[1] == '*') {
            sc->comment = 1;
            s++;
        } else if (*s == '\'' || *s == '"' || *s == '`') {
            sc->quote = *s;
            sc->escapes = escape_string(line, s);
        } else if (*s == '$' && sc->dollar &&
                   (n = dollar_quote(line, s)) > 0) {
            sc->tag = strndup(s, n);
            /* Out of memory: read on as if the string had ended. */
            sc->quote = sc->tag ? '$' : 0;
            s += n - 1;
        } else if ((n = word_at(line, s)) > 0) {
            sql_scan_token(sc, s, n, s[n - 1]);
            s += n - 1;
        } else if (*s != ' ' && *s != '\t' && *s != '\r') {
            if (*s == '(')
                sc->depth++;
            else if (*s == ')' && sc->depth > 0)
                sc->depth--;
            sql_scan_token(sc, s, 0, *s);
        }
    }
}

/*
** 1 when the statement's last word cannot end one: AND, WHERE, ORDER
** BY... (keywords that PostgreSQL, MariaDB, SQLite and DuckDB all
** reserve, so that none is a bare name there) but after AS, where
** PostgreSQL and DuckDB take any word for a name (a '.' before one makes
** it "", a name, too).
*/
static int sql_open_word(const struct sql_scan *sc)
{
    static const char *const w[] = {
        "SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "IN", "IS", "JOIN",
        "ON", "AS", "CASE", "WHEN", "THEN", "ELSE", "UNION", "INTERSECT",
        "EXCEPT", "HAVING", "DISTINCT", "GROUP", "ORDER", "LIMIT", "INTO",
        NULL
    };
    int i;

    if (strcasecmp(sc->before, "AS") == 0)
        return 0;
    if (strcasecmp(sc->word, "BY") == 0)
        return strcasecmp(sc->before, "GROUP") == 0 ||
               strcasecmp(sc->before, "ORDER") == 0 ||
               strcasecmp(sc->before, "PARTITION") == 0;
    for (i = 0; w[i]; i++)
        if (strcasecmp(sc->word, w[i]) == 0)
            return 1;
    return 0;
}

/* 1 while the statement cannot be complete: a quote, comment or
** parenthesis open, or its last line ends with a comma, an operator
** (=, <, +, ||...: not '*', which ends DuckDB's FROM t SELECT *, nor
** '!', PostgreSQL's old factorial, nor '?', a parameter) or a word that
** cannot end it (sql_open_word). */
static int sql_open(const struct sql_scan *sc)
{
    return sc->quote || sc->comment || sc->depth > 0 || sc->last == ',' ||
           (sc->last && strchr("=<>+-/%|&^~", sc->last)) ||
           sql_open_word(sc);
}

/*
** The statement of a .sql line: its text on the line (stmt), and when
** that is empty or sql_open() the lines after it, up to one that ends
** with ';' (outside quotes and comments), as psql and sqlite3 read a
** statement. What a line holds decides it, never its timing, so a
** statement pasted and one typed read alike. On a
** terminal the lines after it are typed at "   ...> " and go to the
** history as the .sql line did. Returns the statement (malloc()ed, its
** lines joined by line feeds, which keeps a -- comment to its line), or
** NULL at Ctrl-C (*cut set) or out of memory; at the end of the input
** what was read (its error says what is missing).
*/
static char *sql_statement(int tty, const char *hist, int dollar,
                           const char *stmt, int *cut)
{
    struct sql_scan sc = {0};
    size_t len = strlen(stmt), cap = len + 1, n;
    char *text = strdup(stmt), *line, *more;
    int lines;

    sc.dollar = dollar;
    sql_scan_line(&sc, stmt);
    lines = !*stmt || sql_open(&sc);
    while (text && lines && (sql_open(&sc) || sc.last != ';')) {
        line = next_line(tty, "   ...> ", cut);
        if (!line)
            break;
        n = strlen(line);
        if (n > 0 && line[n - 1] == '\r')
            line[--n] = '\0';
        if (tty && n)
            history_keep(hist, line);
        /* Grown by half again at least: a statement of many lines (a
        ** pasted dump) was copied whole at each, quadratic (a minute for
        ** 18 MB under ASan, which copies at every realloc()). */
        more = text;
        if (len + n + 2 > cap) {
            cap = len + n + 2 > cap + cap / 2 ? len + n + 2 : cap + cap / 2;
            more = realloc(text, cap);
        }
        if (more) {
            if (len)
                more[len++] = '\n';
            memcpy(more + len, line, n + 1);
            len += n;
        } else {
            free(text);
        }
        text = more;
        sql_scan_line(&sc, line);
        free(line);
    }
    free(sc.tag);
    if (*cut) {
        free(text);
        return NULL;
    }
    return text;
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

/*
** Wait for the warm-up before a command, with Ctrl-C heeded: it cancels
** the warm-up (a local model evaluating the schema prompt, a server's
** schema read), which then ends. Ctrl-C here ended the shell, as the
** default does. Returns 1 when it was cancelled so.
*/
static int warm_wait_interruptible(struct warm *w, askdb_agent *ag)
{
    if (!w->running)
        return 0;
    cli_interrupt_begin(ag);
    warm_wait(w, 0);
    return cli_interrupt_end();
}

/*
** What the shell asks: its database and, when the model could be had,
** the agent over it. Without a model (ag NULL: why was said as the shell
** opened) db is a handle of the shell's own, on which .sql and .schema
** run as askdb sql and askdb schema do; with one, db is the agent's.
*/
struct shell {
    askdb_agent *ag;
    askdb_db *db;
};

/* 1 when a failed askdb_agent_new() may have failed on the model, not
** on the database: a database that cannot be opened, a Ctrl-C and a
** trace file that cannot be written are not the model's. */
static int model_may_have_failed(askdb_status st)
{
    return st != ASKDB_ERR_DB_OPEN && st != ASKDB_ERR_CANCELLED &&
           st != ASKDB_ERR_IO;
}

/*
** Open the shell on db_path: the agent, as ask makes it (a failure said
** by cli_agent_new). When the agent could not be made but the database
** opens on its own, what failed was the model (a missing or bad model
** file, a setting that cannot work): the shell goes on without one,
** saying so, since .sql and .schema need none. Returns 0, or the exit
** code when the shell cannot start (the agent's, or 130 for a Ctrl-C
** during the second open).
*/
static int shell_open(const struct cli_opts *o, const char *db_path,
                      struct shell *sh)
{
    askdb_status st, again;

    st = cli_agent_new(&o->cfg, db_path, &sh->ag);
    if (st == ASKDB_OK) {
        sh->db = askdb_agent_db(sh->ag);
        return 0;
    }
    if (!model_may_have_failed(st))
        return cli_exit_code(st);
    again = cli_db_open(db_path, &o->cfg, &sh->db);
    if (again) {
        /* Said already, by the agent: its settings were refused before
        ** the database was opened, or the database failed. */
        if (again == ASKDB_ERR_CANCELLED)
            format_printf(stderr, "askdb: %s\n", askdb_db_errmsg(sh->db));
        askdb_db_close(sh->db);
        sh->db = NULL;
        return cli_exit_code(again == ASKDB_ERR_CANCELLED ? again : st);
    }
    cli_say_in_process(&o->cfg, sh->db);
    fputs("askdb: no model, so no questions: .sql and .schema work\n",
          stderr);
    return 0;
}

static void shell_close(struct shell *sh)
{
    if (sh->ag)
        askdb_agent_free(sh->ag);
    else
        askdb_db_close(sh->db);
}

/* A question: the agent's answer, or without a model what gives one
** (with -f json, as the answer of a question whose model failed: status
** "model error", exit 4). */
static int shell_ask(const struct shell *sh, const struct cli_opts *o,
                     const char *q)
{
    if (sh->ag)
        return cli_answer(sh->ag, o, q);
    return cli_answer_refused(
        o, q, ASKDB_ERR_LLM,
        "a question needs a model: start the shell with --model "
        "FILE.gguf, or --llm-url URL --model NAME (ASKDB_MODEL, "
        "ASKDB_LLM_URL); why it has none was said as it started");
}

/*
** .schema: the schema as askdb schema prints it, as JSON with -f json
** (a program reading the shell's JSON documents got CREATE TABLE text
** among them). Returns the exit code: 3 when it cannot be read or has no
** tables.
*/
static int shell_schema(askdb_db *db, const struct cli_opts *o)
{
    char *text = NULL;
    int rc = EXIT_DB;

    if (askdb_db_schema_text(db, &text)) {
        format_printf(stderr, "askdb: %s\n", askdb_db_errmsg(db));
    } else if (!*text) {
        format_printf(stderr, "askdb: database '%s' has no tables or "
                              "views\n", askdb_db_label(db));
    } else if (o->format == FMT_JSON) {
        askdb_free(text);
        text = NULL;
        if (askdb_db_schema_json(db, ASKDB_JSON_PRETTY, &text)) {
            format_printf(stderr, "askdb: %s\n", askdb_db_errmsg(db));
        } else {
            format_puts(stdout, text);
            fputc('\n', stdout);
            rc = EXIT_ANSWERED;
        }
    } else {
        format_puts(stdout, text);
        rc = EXIT_ANSWERED;
    }
    askdb_free(text);
    return rc;
}

/* .sql: the statement on the shell's database, which Ctrl-C cancels. */
static int sql_interruptible(const struct shell *sh,
                             const struct cli_opts *o, const char *sql)
{
    int rc;

    if (sh->ag)
        cli_interrupt_begin(sh->ag);
    else
        cli_interrupt_begin_db(sh->db);
    rc = cli_run_sql(sh->db, o, sql);
    (void)cli_interrupt_end();
    return rc;
}

int cli_shell(const struct cli_opts *o, const char *db_path)
{
    struct warm warm = {0};
    struct shell sh = {NULL, NULL};
    int tty = isatty(STDIN_FILENO), rc = EXIT_ANSWERED, cut, dollar;
    const char *engine;
    FILE *talk = stdout;   /* what is said to the person, not the rows */
    char *hist = NULL, *line, *q, *text;

    struct cli_opts so = *o;

    /* Follow-ups ("and only for 2023?") read in the context of the
    ** earlier questions. */
    so.cfg.conversation = 1;
    o = &so;
    rc = shell_open(o, db_path, &sh);
    if (rc)
        return rc;
    /* Read before the warm-up's thread starts, which may use the handle:
    ** the engine is known once the database is open. */
    engine = askdb_db_engine(sh.db);
    dollar = strcmp(engine, "postgresql") == 0 || strcmp(engine, "duckdb") == 0;
    if (tty) {
        /* The results may go to a file or a pipe (askdb shell DB >
        ** rows.csv): the prompt, the line being edited and the banner
        ** are for the person, on the terminal, as Python's prompt is.
        ** libedit on a stdout that is no terminal edited nothing and
        ** showed no prompt. */
        if (!isatty(STDOUT_FILENO) && isatty(STDERR_FILENO)) {
            rl_outstream = stderr;
            talk = stderr;
        }
        hist = history_path();
        editor_locale = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
        editor_begin();
        history_start(hist);
        editor_end();
        /* The label, as every message names the database: a URL's
        ** password is not shown (to a screen shared, a recording). */
        format_printf(talk, "askdb %s - asking %s. Type .help for "
                            "commands.\n", askdb_version(),
                      askdb_db_label(sh.db));
        if (sh.ag)
            warm_start(&warm, sh.ag);
    }
    for (;;) {
        line = next_line(tty, "askdb> ", &cut);
        if (!line && cut) {
            fputc('\n', talk);
            continue;
        }
        if (!line) {
            /* Ctrl-D: what comes next (the shell's prompt) starts on a
            ** line of its own, not after "askdb> ". */
            if (tty)
                fputc('\n', talk);
            break;
        }
        q = trim(line);
        if (!*q) {
            free(line);
            continue;
        }
        if (tty)
            history_keep(hist, q);
        if (strcmp(q, ".quit") == 0 || strcmp(q, ".exit") == 0) {
            free(line);
            break;
        }
        if (strcmp(q, ".help") != 0 &&
            warm_wait_interruptible(&warm, sh.ag)) {
            /* The line is dropped: its question has not started. */
            fputs("askdb: cancelled\n", stderr);
            free(line);
            continue;
        }
        /* Every line sets the code, the shell's own errors too: a script
        ** ends with its last line's, as askdb's commands give them (a
        ** usage error 2, a schema that cannot be read 3). */
        rc = EXIT_ANSWERED;
        if (strcmp(q, ".new") == 0) {
            askdb_agent_forget(sh.ag);
            if (tty)
                fputs("(a new conversation)\n", talk);
        } else if (strcmp(q, ".help") == 0) {
            /* Said to the person, as the banner: not into the rows. */
            fputs(shell_help, talk);
        } else if (strcmp(q, ".schema") == 0) {
            rc = shell_schema(sh.db, o);
        } else if (strncmp(q, ".sql", 4) == 0 &&
                   (q[4] == ' ' || q[4] == '\t' || !q[4])) {
            /* A tab after it too: a line pasted from a script or an
            ** editor that indents with tabs was an unknown command. */
            text = sql_statement(tty, hist, dollar, trim(q + 4), &cut);
            if (cut) {
                fputc('\n', talk);
            } else if (!text) {
                fprintf(stderr, "askdb: out of memory\n");
                rc = EXIT_NO_SQL;
            } else if (!*trim(text)) {
                fprintf(stderr, "askdb: .sql needs a statement\n");
                rc = EXIT_USAGE;
            } else {
                rc = sql_interruptible(&sh, o, trim(text));
            }
            free(text);
        } else if (q[0] == '.') {
            format_printf(stderr, "askdb: unknown command '%s' (.help "
                                  "lists them)\n", q);
            rc = EXIT_USAGE;
        } else {
            rc = shell_ask(&sh, o, q);
        }
        fflush(stdout);
        free(line);
    }
    warm_wait(&warm, 1);
    free(hist);
    if (editor_locale)
        freelocale(editor_locale);
    shell_close(&sh);
    /* Like a script interpreter: the last line's result is the exit code
    ** when not interactive; an interactive session ends with 0. */
    return tty ? EXIT_ANSWERED : rc;
}
