/* extract.c - find the SQL statement in a model reply and check its shape. */
#include "sql/extract.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

size_t sqlx_token(const char *p, int *kind)
{
    const char *q = p;
    char close;

    if (!*p) {
        *kind = SQLX_END;
        return 0;
    }
    if (isspace((unsigned char)*p)) {
        while (isspace((unsigned char)*q))
            q++;
        *kind = SQLX_SPACE;
        return (size_t)(q - p);
    }
    if (p[0] == '-' && p[1] == '-') {
        while (*q && *q != '\n')
            q++;
        *kind = SQLX_COMMENT;
        return (size_t)(q - p);
    }
    if (p[0] == '/' && p[1] == '*') {
        /* Scanned by hand, as quotes are: strstr() here made the
        ** sanitizer builds quadratic (their strstr() measures all the
        ** rest of the text at each call: 100 KB of comments took 0.7 s). */
        for (q = p + 2; *q && !(q[0] == '*' && q[1] == '/'); q++)
            ;
        *kind = *q ? SQLX_COMMENT : SQLX_UNTERMINATED;
        return *q ? (size_t)(q + 2 - p) : (size_t)(q - p);
    }
    if (*p == '\'' || *p == '"' || *p == '`' || *p == '[') {
        close = *p == '[' ? ']' : *p;
        for (q = p + 1; *q; q++) {
            if (*q == close) {
                if (close != ']' && q[1] == close) { /* doubled quote */
                    q++;
                    continue;
                }
                *kind = *p == '\'' ? SQLX_STRING : SQLX_IDENT;
                return (size_t)(q + 1 - p);
            }
        }
        *kind = SQLX_UNTERMINATED;
        return strlen(p);
    }
    if (isdigit((unsigned char)*p) ||
        (*p == '.' && isdigit((unsigned char)p[1]))) {
        while (isalnum((unsigned char)*q) || *q == '.' ||
               ((*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E')))
            q++;
        *kind = SQLX_NUMBER;
        return (size_t)(q - p);
    }
    if (isalpha((unsigned char)*p) || *p == '_' || (unsigned char)*p >= 0x80) {
        while (isalnum((unsigned char)*q) || *q == '_' || *q == '$' ||
               (unsigned char)*q >= 0x80)
            q++;
        *kind = SQLX_WORD;
        return (size_t)(q - p);
    }
    *kind = SQLX_PUNCT;
    return 1;
}

static int word_is(const char *p, size_t n, const char *w)
{
    return strlen(w) == n && strncasecmp(p, w, n) == 0;
}

/* Whether the word at p (length n) is preceded by a line start, ignoring
** blanks (and a list marker or prompt such as "> "). */
static int at_line_start(const char *text, const char *p)
{
    while (p > text && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '>'))
        p--;
    return p == text || p[-1] == '\n' || p[-1] == ':';
}

static int all_upper(const char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (p[i] >= 'a' && p[i] <= 'z')
            return 0;
    return 1;
}

/*
** After WITH: [RECURSIVE] name [(cols)] AS - a CTE, not the English word.
** The head must end within SQLX_CTE_HEAD_MAX bytes: it is read from a
** bounded copy, so that each WITH of a long reply reads a bounded part of
** it (unbounded, WITH and an open comment, repeated, read the rest of the
** text at each WITH: 100 KB of it took 0.9 s). A token the bound cuts
** counts as no head.
*/
static int looks_like_cte(const char *text)
{
    char head[SQLX_CTE_HEAD_MAX + 1];
    size_t len = strnlen(text, SQLX_CTE_HEAD_MAX), n;
    const char *p = head;
    int kind, words = 0;

    memcpy(head, text, len);
    head[len] = '\0';
    while ((n = sqlx_token(p, &kind)) > 0 && words < 4) {
        if (len == SQLX_CTE_HEAD_MAX && p + n == head + len)
            return 0;
        if (kind == SQLX_WORD && word_is(p, n, "AS"))
            return 1;
        if (kind == SQLX_PUNCT && *p == '(') { /* column list */
            while (*p && *p != ')')
                p++;
            if (!*p)
                return 0;
            n = 1;
        } else if (kind == SQLX_WORD || kind == SQLX_IDENT) {
            words++;
        } else if (kind != SQLX_SPACE) {
            return 0;
        }
        p += n;
    }
    return 0;
}

/*
** Where the statement starts in prose, or NULL. The reply is prose, not
** SQL, so it is not tokenized as SQL (an apostrophe in "Here's" would open
** a string); a SELECT or WITH keyword counts when it starts a line (or
** follows a colon) or is written in capitals, and WITH must begin a CTE.
*/
static const char *find_start(const char *s)
{
    const char *p;
    size_t n;

    for (p = s; *p; p++) {
        if ((p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
            !(*p == 's' || *p == 'S' || *p == 'w' || *p == 'W'))
            continue;
        n = 0;
        while (isalnum((unsigned char)p[n]) || p[n] == '_')
            n++;
        if (!word_is(p, n, "SELECT") && !word_is(p, n, "WITH"))
            continue;
        if (!at_line_start(s, p) && !all_upper(p, n))
            continue;
        if (word_is(p, n, "WITH") && !looks_like_cte(p + n))
            continue;
        return p;
    }
    return NULL;
}

/* Words that start an SQL statement: text after a semicolon that begins
** with one is a second statement, kept so that the guard refuses it. */
static const char *const stmt_words[] = {
    "SELECT", "WITH", "VALUES", "INSERT", "UPDATE", "DELETE", "REPLACE",
    "DROP", "CREATE", "ALTER", "ATTACH", "DETACH", "PRAGMA", "VACUUM",
    "ANALYZE", "REINDEX", "BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT",
    "RELEASE", "EXPLAIN", NULL
};

/* Whether s (after blanks and comments) begins with a statement word. */
static int starts_stmt(const char *s)
{
    size_t n;
    int kind, i;

    while ((n = sqlx_token(s, &kind)) > 0 &&
           (kind == SQLX_SPACE || kind == SQLX_COMMENT))
        s += n;
    if (kind != SQLX_WORD)
        return 0;
    for (i = 0; stmt_words[i]; i++)
        if (word_is(s, n, stmt_words[i]))
            return 1;
    return 0;
}

/* A reply that is a JSON object with an "sql" (or "query") string, as
** some models answer when asked for SQL: that string, malloc()ed; else
** NULL. */
static char *json_sql(const char *text, size_t len)
{
    json_t *root = json_loadb(text, len, 0, NULL), *v;
    char *s = NULL;

    v = json_object_get(root, "sql");
    if (!json_is_string(v))
        v = json_object_get(root, "query");
    if (json_is_string(v))
        s = strdup(json_string_value(v));
    json_decref(root);
    return s;
}

/* Whether the fenced block body[0..len) begins with a statement word:
** read on a copy, so that a comment or quote left open in it does not run
** on into the text after its fence (each block's look reads only itself;
** before, "```x\n[" repeated read the rest of the text at each block). */
static int body_starts_stmt(const char *body, size_t len)
{
    char *s = strndup(body, len);
    int yes = s && starts_stmt(s);

    free(s);
    return yes;
}

/*
** The first needle in [p, stop), or NULL. A text's searches that go on
** from each find use this, bounded by the text's end measured once:
** strstr() on the rest, again and again, made the sanitizer builds
** quadratic (their strstr() measures all the rest at each call).
*/
static const char *find_in(const char *p, const char *stop,
                           const char *needle)
{
    size_t n = strlen(needle);

    while (p && (size_t)(stop - p) >= n) {
        p = memchr(p, *needle, (size_t)(stop - p) - n + 1);
        if (p && memcmp(p, needle, n) == 0)
            return p;
        if (p)
            p++;
    }
    return NULL;
}

/*
** The fence that ends a block whose body starts at body, or NULL. A fence
** inside a quoted string or name that closes on the fence's own line is
** the statement's text (SELECT '```' AS mark), not the block's end; one
** in a quote left open, or closed only on a later line, still ends it, as
** a fence glued to the statement's last word does. Each line is read once,
** on a copy, so that a quote left open does not run on to the text's end.
*/
static const char *fence_end(const char *body, const char *stop,
                             const char *fence)
{
    const char *e = body, *ls, *le, *lstart = NULL;
    char *line = NULL;
    size_t pos = 0, off, n = 0;
    int kind, inside;

    while ((e = find_in(e, stop, fence)) != NULL) {
        for (ls = e; ls > body && ls[-1] != '\n'; ls--)
            ;
        if (ls != lstart) {
            le = memchr(e, '\n', (size_t)(stop - e));
            free(line);
            line = strndup(ls, (size_t)((le ? le : stop) - ls));
            if (!line)
                return e;
            lstart = ls;
            pos = 0;
        }
        off = (size_t)(e - ls);
        inside = 0;
        while (pos <= off && (n = sqlx_token(line + pos, &kind)) > 0) {
            if (pos + n > off) {
                inside = pos < off &&
                         (kind == SQLX_STRING || kind == SQLX_IDENT) &&
                         (line[pos] == '\'' || line[pos] == '"');
                break;
            }
            pos += n;
        }
        if (!inside)
            break;
        pos += n;
        e = ls + pos;
    }
    free(line);
    return e;
}

/* The body of the first block fenced with fence (``` or ~~~) tagged sql,
** or of any tag (or none) starting with a statement word, or the "sql"
** of a block tagged json; malloc()ed, or NULL. */
static char *fenced(const char *text, const char *fence)
{
    const char *p = text, *stop = text + strlen(text), *body, *end, *info;
    size_t ilen;
    char *s;

    while ((p = find_in(p, stop, fence)) != NULL) {
        info = p + 3;
        body = memchr(info, '\n', (size_t)(stop - info));
        if (!body)
            return NULL;
        ilen = (size_t)(body - info);
        while (ilen && isspace((unsigned char)info[ilen - 1]))
            ilen--;
        body++;
        end = fence_end(body, stop, fence);
        if (!end) /* unterminated fence: the reply was cut; take the rest */
            end = stop;
        if (word_is(info, ilen, "json")) {
            s = json_sql(body, (size_t)(end - body));
            if (s)
                return s;
        }
        if (word_is(info, ilen, "sql") || word_is(info, ilen, "sqlite") ||
            body_starts_stmt(body, (size_t)(end - body))) {
            /* Whatever statement it holds, even a write: the checks
            ** refuse it with a reason the model can act on. */
            return strndup(body, (size_t)(end - body));
        }
        if (!*end)
            return NULL;
        p = end + 3;
    }
    return NULL;
}

/*
** Cut the statement at its first top-level semicolon when what follows is
** prose (or nothing). When a statement follows, the text is left whole:
** quietly running the first half of a multi-statement reply would hide
** what the model tried to do. Returns 1 when a statement follows.
*/
static int cut_after_semicolon(char *s)
{
    char *p = s, *q;
    size_t n;
    int kind, i;

    while ((n = sqlx_token(p, &kind)) > 0) {
        if (kind == SQLX_PUNCT && *p == ';') {
            q = p + 1;
            while ((n = sqlx_token(q, &kind)) > 0 &&
                   (kind == SQLX_SPACE || kind == SQLX_COMMENT ||
                    (kind == SQLX_PUNCT && *q == ';')))
                q += n;
            /* A separator SQL does not know (U+2028, U+0085, NBSP, a
            ** zero-width space) glued to the word does not hide it. */
            while (kind == SQLX_WORD && n > 0 && (unsigned char)*q >= 0x80) {
                q++;
                n--;
            }
            if (kind == SQLX_WORD)
                for (i = 0; stmt_words[i]; i++)
                    if (word_is(q, n, stmt_words[i]))
                        return 1;
            *p = '\0';
            return 0;
        }
        p += n;
    }
    return 0;
}

static void trim(char *s)
{
    size_t n = strlen(s), i = 0;

    while (n && (isspace((unsigned char)s[n - 1]) || s[n - 1] == ';'))
        s[--n] = '\0';
    while (isspace((unsigned char)s[i]))
        i++;
    memmove(s, s + i, n - i + 1);
}

/*
** The reply after a reasoning model's thoughts: "<think>...</think>" at
** its start (or a lone "</think>" that starts a line, where the chat
** template opened the block), whose drafts are not the answer. NULL when
** the thoughts never end (the reply was cut while thinking). A
** "</think>" inside a line ("... LIKE '%</think>%'") is not one.
*/
static const char *after_thoughts(const char *text)
{
    const char *p = text, *stop = text + strlen(text), *end;

    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (strncmp(p, "<think>", 7) == 0) {
        end = strstr(p, "</think>");
        return end ? end + 8 : NULL;
    }
    for (end = find_in(text, stop, "</think>"); end;
         end = find_in(end + 1, stop, "</think>")) {
        const char *q = end;
        while (q > text && (q[-1] == ' ' || q[-1] == '\t'))
            q--;
        if (q == text || q[-1] == '\n')
            return strstr(text, "<think>") ? text : end + 8;
    }
    return text;
}

char *sqlx_extract(const char *text, const char **why)
{
    char *s;
    const char *start;

    *why = NULL;
    text = after_thoughts(text);
    if (!text) {
        *why = "the reply is only the model's reasoning (<think> never "
               "closed: raise --max-tokens)";
        return NULL;
    }
    s = json_sql(text, strlen(text));
    if (!s)
        s = fenced(text, "```");
    if (!s)
        s = fenced(text, "~~~");
    if (!s) {
        start = find_start(text);
        if (!start && starts_stmt(text))
            start = text;
        if (!start) {
            *why = "the reply contains no SELECT or WITH statement";
            return NULL;
        }
        s = strdup(start);
        if (!s) {
            *why = "out of memory";
            return NULL;
        }
        /* Bare text: prose may follow the statement after a semicolon or
        ** a blank line. A blank line inside a statement is rare; after
        ** one, text that does not look like SQL is dropped. */
        if (!cut_after_semicolon(s)) {
            char *bl = strstr(s, "\n\n");
            if (bl && !find_start(bl))
                *bl = '\0';
        }
    } else {
        /* In a fenced block the statement may be preceded by comments;
        ** keep them (harmless) and leave multi-statement text for the
        ** check to refuse. */
        cut_after_semicolon(s);
    }
    trim(s);
    if (!*s) {
        free(s);
        *why = "the reply contains an empty SQL block";
        return NULL;
    }
    return s;
}

int sqlx_check_readonly(const char *sql, char *why, size_t why_len)
{
    const char *p = sql;
    size_t n;
    int kind, first = 1, depth = 0;

    while ((n = sqlx_token(p, &kind)) > 0) {
        if (kind == SQLX_UNTERMINATED) {
            snprintf(why, why_len,
                     "unterminated string, quoted name or comment");
            return -1;
        }
        if (kind == SQLX_SPACE || kind == SQLX_COMMENT) {
            p += n;
            continue;
        }
        if (first) {
            if (kind == SQLX_PUNCT && *p == '(') {
                depth++;
                p += n;
                continue;
            }
            if (!(kind == SQLX_WORD &&
                  (word_is(p, n, "SELECT") || word_is(p, n, "WITH") ||
                   word_is(p, n, "VALUES")))) {
                snprintf(why, why_len,
                         "the statement must be a query starting with "
                         "SELECT or WITH, not '%.*s'", (int)(n > 20 ? 20 : n),
                         p);
                return -1;
            }
            first = 0;
        }
        if (kind == SQLX_PUNCT && *p == ';') {
            snprintf(why, why_len,
                     "more than one statement; write exactly one query");
            return -1;
        }
        p += n;
    }
    if (first) {
        snprintf(why, why_len, "empty statement");
        return -1;
    }
    return 0;
}

/* 1 when the word at p starts a statement that reads: a query (DuckDB's
** PIVOT, UNPIVOT and SUMMARIZE too), or a look at the schema or a plan
** (a PRAGMA reads unless it sets). */
static int query_word(const char *p, size_t n)
{
    static const char *const w[] = {
        "SELECT", "WITH", "VALUES", "TABLE", "FROM", "SHOW", "DESCRIBE",
        "DESC", "EXPLAIN", "PRAGMA", "PIVOT", "UNPIVOT", "SUMMARIZE", NULL
    };
    int i;

    for (i = 0; w[i]; i++)
        if (word_is(p, n, w[i]))
            return 1;
    return 0;
}

/* 1 when the PRAGMA named at p reads with an argument in parentheses:
** SQLite's pragmas that act as a query with one argument (its pragma
** table's Result1 flag: the schema's tables, indexes, keys and checks),
** but optimize, which runs ANALYZE, and DuckDB's table_info and
** storage_info. Any other takes "(value)" as it takes "= value", to set. */
static int pragma_reads(const char *p, size_t n)
{
    static const char *const w[] = {
        "table_info", "table_xinfo", "table_list", "index_info",
        "index_xinfo", "index_list", "foreign_key_list",
        "foreign_key_check", "integrity_check", "quick_check",
        "storage_info", NULL
    };
    int i;

    for (i = 0; w[i]; i++)
        if (word_is(p, n, w[i]))
            return 1;
    return 0;
}

/* 1 when the PRAGMA named at p acts by its name alone. SQLite's: those
** its pragma table (tool/mkpragmatab.tcl) does not mark Result0 ("acts as
** query when no argument") and that do something bare: optimize runs
** ANALYZE, shrink_memory frees the connection's caches, wal_checkpoint
** checkpoints the log, incremental_vacuum empties the freelist (bare,
** wal_autocheckpoint, mmap_size and temp_store_directory return their
** value, case_sensitive_like and table_info(...) do nothing). DuckDB's
** pragmas that are not queries (its pragma_functions.cpp) switch
** profiling, verification, the optimizer, the object cache, progress bars
** or the checkpoint on shutdown on or off, or checkpoint the file; those
** it runs as a query (show_tables, version, database_size...) read. */
static int pragma_acts(const char *p, size_t n)
{
    static const char *const w[] = {
        "optimize", "shrink_memory", "wal_checkpoint", "incremental_vacuum",
        "enable_profile", "enable_profiling", "disable_profile",
        "disable_profiling", "enable_verification", "disable_verification",
        "verify_external", "disable_verify_external", "verify_fetch_row",
        "disable_verify_fetch_row", "verify_serializer",
        "disable_verify_serializer", "verify_parallelism",
        "disable_verify_parallelism", "enable_object_cache",
        "disable_object_cache", "enable_optimizer", "disable_optimizer",
        "force_checkpoint", "enable_progress_bar", "disable_progress_bar",
        "enable_print_progress_bar", "disable_print_progress_bar",
        "enable_checkpoint_on_shutdown", "disable_checkpoint_on_shutdown",
        NULL
    };
    int i;

    for (i = 0; w[i]; i++)
        if (word_is(p, n, w[i]))
            return 1;
    return 0;
}

/*
** What sqlx_changes() knows of the statement it is in, token by token.
** A WITH's CTE bodies are marked by depth: bit d of bodies is set while
** the parenthesis open at depth d is one ("AS (", "AS MATERIALIZED (").
** A statement's leading parentheses are not counted, so its own SELECT
** is at depth 0 or less ("(SELECT 1) UNION SELECT 2").
*/
struct change_scan {
    int start;                   /* the next word starts a statement */
    int query, with, pragma;     /* it started with SELECT or WITH, ... */
    int depth;                   /* parentheses open */
    unsigned long long bodies;
    int body;                    /* the token before opened or closed one */
    int as;                      /* the token before was AS or MATERIALIZED */
    int select;                  /* the last SELECT or UNPIVOT of the
                                    statement's own was SELECT */
    const char *name;            /* a PRAGMA's last word: its name */
    size_t name_n;
};

/* 1 when the word at p starts a statement that changes data, in a WITH. */
static int change_word(const char *p, size_t n)
{
    return word_is(p, n, "INSERT") || word_is(p, n, "UPDATE") ||
           word_is(p, n, "DELETE") || word_is(p, n, "MERGE");
}

/* A PRAGMA's token: 1 when it sets ('=', or '(' after a name that does
** not read with an argument). A name may be quoted ("..", [..], `..`, and
** '..' in SQLite): without its quotes it is the pragma it names; one
** with a doubled quote inside is none of those listed above. */
static int pragma_token(struct change_scan *s, const char *p, size_t n,
                        int kind)
{
    if (kind == SQLX_PUNCT && *p == '=')
        return 1;
    if (kind == SQLX_PUNCT && *p == '(') {
        if (!s->name || !pragma_reads(s->name, s->name_n))
            return 1;
        s->pragma = 0;           /* the rest is the argument */
    } else if (kind == SQLX_WORD) {
        s->name = p;
        s->name_n = n;
    } else if (kind == SQLX_IDENT || kind == SQLX_STRING) {
        s->name = p + 1;         /* sqlx_token(): both quotes are there */
        s->name_n = n - 2;
    }
    return 0;
}

/* A parenthesis of a query: counts depth, and in a WITH marks a CTE's
** body opening ("AS (") or closing (its statement may follow). */
static void query_paren(struct change_scan *s, char c, int as)
{
    unsigned long long bit;

    if (c == ')') {
        if (s->depth > 0 && s->depth < 64)
            s->body = (int)((s->bodies >> s->depth) & 1);
        s->depth--;
        return;
    }
    s->depth++;
    if (s->depth <= 0 || s->depth >= 64)
        return;
    bit = 1ULL << s->depth;
    s->bodies = s->with && as ? s->bodies | bit : s->bodies & ~bit;
    s->body = s->with && as;
}

/*
** A query's token: 1 for a statement that changes inside a WITH (the
** word that opens a CTE's body or follows one: "AS (DELETE ...",
** "...) DELETE"; not FOR UPDATE, nor a column named update, nor
** "SELECT (update)"), and for an INTO of the statement's own SELECT
** (PostgreSQL's SELECT ... INTO t makes a table, MySQL's INTO OUTFILE
** or @var writes): not one inside parentheses, nor UNPIVOT's INTO NAME.
*/
static int query_token(struct change_scan *s, const char *p, size_t n,
                       int kind)
{
    int body = s->body, as = s->as;

    s->body = s->as = 0;
    if (kind == SQLX_PUNCT && (*p == '(' || *p == ')')) {
        query_paren(s, *p, as);
        return 0;
    }
    if (kind != SQLX_WORD)
        return 0;
    if (body && change_word(p, n))
        return 1;
    s->as = word_is(p, n, "AS") || word_is(p, n, "MATERIALIZED");
    if (s->depth > 0)
        return 0;
    if (word_is(p, n, "SELECT") || word_is(p, n, "UNPIVOT"))
        s->select = word_is(p, n, "SELECT");
    return s->select && word_is(p, n, "INTO");
}

/* At a PRAGMA's end, with neither '=' nor '(' seen: 1 when its name acts
** (PRAGMA optimize, PRAGMA enable_profiling); a read's name does not
** (PRAGMA version). */
static int pragma_end(const struct change_scan *s)
{
    return s->pragma && s->name && pragma_acts(s->name, s->name_n);
}

/* The first word of a statement: 1 when it is not one that reads. */
static int start_token(struct change_scan *s, const char *p, size_t n,
                       int kind)
{
    if (kind != SQLX_WORD || !query_word(p, n))
        return 1;
    memset(s, 0, sizeof *s);
    s->with = word_is(p, n, "WITH");
    s->select = word_is(p, n, "SELECT");
    s->query = s->with || s->select;
    s->pragma = word_is(p, n, "PRAGMA");
    return 0;
}

int sqlx_changes(const char *sql)
{
    struct change_scan s;
    const char *p = sql;
    size_t n;
    int kind;

    memset(&s, 0, sizeof s);
    s.start = 1;
    while ((n = sqlx_token(p, &kind)) > 0 && kind != SQLX_UNTERMINATED) {
        if (kind == SQLX_SPACE || kind == SQLX_COMMENT ||
            (s.start && kind == SQLX_PUNCT && *p == '(')) {
            p += n;
            continue;
        }
        if (kind == SQLX_PUNCT && *p == ';') {
            if (pragma_end(&s))
                return 1;
            memset(&s, 0, sizeof s);
            s.start = 1;
        } else if (s.start) {
            if (start_token(&s, p, n, kind))
                return 1;
        } else if (s.pragma) {
            if (pragma_token(&s, p, n, kind))
                return 1;
        } else if (s.query) {
            if (query_token(&s, p, n, kind))
                return 1;
        }
        p += n;
    }
    return pragma_end(&s);
}
