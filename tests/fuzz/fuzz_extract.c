/* fuzz_extract.c - libFuzzer harness for SQL extraction from model replies. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sql/extract.h"

/*
** The input is a model reply. sqlx_extract() runs on it as text (up to
** its first NUL, as the agent sees it), sqlx_check_readonly() on what it
** returns and on the raw text, and sqlx_token() over every NUL-separated
** piece of the input. Each string is its own exact-size allocation, so
** ASan catches a read past its terminating NUL. Invariants that do not
** hold abort(), which libFuzzer reports as a crash.
**
** The check's promise of "one statement" is held against SQLite's own
** tokenizer: when it accepts a text, no semicolon in it may end a
** statement in sqlite3_complete()'s eyes (else a second statement hid in
** what the lexer took for a string, name or comment).
*/

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *copy(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);

    if (!s)
        abort();
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* Tokenize s (len bytes, no NUL inside): every token makes progress, stays
** inside the string, and the tokens cover it exactly. */
static void check_tokens(const char *s, size_t len)
{
    const char *p = s, *end = s + len;
    size_t n;
    int kind = -1;

    while ((n = sqlx_token(p, &kind)) > 0) {
        if (n > (size_t)(end - p))
            abort();                       /* token past the end */
        if (kind <= SQLX_END || kind > SQLX_UNTERMINATED)
            abort();                       /* no kind, or a bad one */
        if (kind == SQLX_UNTERMINATED && p + n != end)
            abort();                       /* must swallow the rest */
        p += n;
    }
    if (kind != SQLX_END || p != end)
        abort();                           /* stopped before the NUL */
}

/* No semicolon in s ends a statement for SQLite. s is modified and
** restored. */
static void check_one_statement(char *s)
{
    char *p, save;

    for (p = strchr(s, ';'); p; p = strchr(p + 1, ';')) {
        save = p[1];
        p[1] = '\0';
        if (sqlite3_complete(s))
            abort();
        p[1] = save;
    }
}

/* The check's verdict is 0 or -1, and its reason always fits why. */
static void check_readonly(char *sql)
{
    char why[256], tiny[8];
    int r;

    memset(why, 'x', sizeof why);
    r = sqlx_check_readonly(sql, why, sizeof why);
    if (r != 0 && r != -1)
        abort();
    if (r == -1 && (!memchr(why, '\0', sizeof why) || !why[0]))
        abort();
    memset(tiny, 'x', sizeof tiny);
    if (sqlx_check_readonly(sql, tiny, sizeof tiny) != r ||
        (r == -1 && !memchr(tiny, '\0', sizeof tiny)))
        abort();
    if (r == 0)
        check_one_statement(sql);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = copy(data, size), *sql, *piece;
    const char *why = "unset";
    size_t i, start, n;

    sql = sqlx_extract(text, &why);
    if (sql) {
        n = strlen(sql);
        /* Trimmed, not empty, no longer than the reply. */
        if (why || n == 0 || n > strlen(text) ||
            isspace((unsigned char)sql[0]) ||
            isspace((unsigned char)sql[n - 1]) || sql[n - 1] == ';')
            abort();
        /* Shrink the allocation to the string so over-reads are caught. */
        piece = copy((const uint8_t *)sql, n);
        free(sql);
        check_readonly(piece);
        check_tokens(piece, n);
        free(piece);
    } else if (!why || !*why) {
        abort();
    }
    check_readonly(text);
    free(text);

    for (start = 0, i = 0; i <= size; i++) {
        if (i < size && data[i] != '\0')
            continue;
        piece = copy(data + start, i - start);
        check_tokens(piece, i - start);
        free(piece);
        start = i + 1;
    }
    return 0;
}
