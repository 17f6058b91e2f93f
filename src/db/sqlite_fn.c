/* sqlite_fn.c - checked stand-ins for long-running SQLite functions (see
** sqlite_fn.h). */
#include "db/sqlite_fn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/driver.h"

/*
** Each stand-in checks, then runs "SELECT name(?1, ?2, ...)" on the
** private connection with its own arguments bound, and returns that
** value. The statements are kept per function and argument count (up to
** MAX_CACHED_ARGS arguments; more are prepared per call).
*/

#define MAX_CACHED_ARGS 8

enum check { CHECK_NONE, CHECK_FORMAT, CHECK_PRODUCT };

static const struct fn {
    const char *name;
    int nargs;          /* -1: any */
    enum check check;
} fns[] = {
    {"printf", -1, CHECK_FORMAT},
    {"format", -1, CHECK_FORMAT},
    {"instr", 2, CHECK_PRODUCT},
    {"replace", 3, CHECK_PRODUCT},
    {"trim", 2, CHECK_PRODUCT},
    {"ltrim", 2, CHECK_PRODUCT},
    {"rtrim", 2, CHECK_PRODUCT},
    {"like", 2, CHECK_PRODUCT},
    {"like", 3, CHECK_PRODUCT},
    {"glob", 2, CHECK_PRODUCT},
    /* Linear, but each call may build a value up to the length limit:
    ** the deadline is checked between calls. */
    {"hex", 1, CHECK_NONE},
    {"quote", 1, CHECK_NONE},
    {"upper", 1, CHECK_NONE},
    {"lower", 1, CHECK_NONE},
    {"randomblob", 1, CHECK_NONE},
    {"substr", 2, CHECK_NONE},
    {"substr", 3, CHECK_NONE},
    {"substring", 2, CHECK_NONE},
    {"substring", 3, CHECK_NONE},
};
#define NFNS (sizeof fns / sizeof *fns)

struct sqlfn {
    sqlite3 *h;                 /* the connection the functions serve */
    sqlite3 *mem;               /* private, in memory: SQLite's own */
    const double *deadline;
    int *timed_out;
    sqlite3_stmt *cache[NFNS][MAX_CACHED_ARGS + 1];
};

/* A call's function and state, as registered. */
struct reg {
    struct sqlfn *f;
    size_t i;                   /* index in fns[] */
};

/* The largest width or precision in printf format fmt, reading '*'
** from argv[1..] as SQLite's printf() does; saturates at 2^62. */
static long long widest(const char *fmt, int argc, sqlite3_value **argv)
{
    const long long sat = (long long)1 << 62;
    long long most = 0, v;
    int next = 1, part;

    while (fmt && *fmt) {
        if (*fmt++ != '%')
            continue;
        if (*fmt == '%') {
            fmt++;
            continue;
        }
        while (*fmt && strchr("-+ 0#!,", *fmt))
            fmt++;
        for (part = 0; part < 2; part++) {
            if (part == 1) {
                if (*fmt != '.')
                    break;
                fmt++;
            }
            if (*fmt == '*') {
                v = next < argc ? sqlite3_value_int64(argv[next]) : 0;
                next++;
                fmt++;
                if (v < 0)
                    v = v < -sat ? sat : -v;
            } else {
                v = 0;
                while (*fmt >= '0' && *fmt <= '9') {
                    v = v < sat / 10 ? v * 10 + (*fmt - '0') : sat;
                    fmt++;
                }
            }
            if (v > most)
                most = v;
        }
        /* The conversion (after any 'l'/'ll') takes one argument, but
        ** for the ones that take none; extra arguments are harmless. */
        while (*fmt == 'l')
            fmt++;
        if (*fmt && *fmt != 'n')
            next++;
        if (*fmt)
            fmt++;
    }
    return most;
}

static long long value_bytes(sqlite3_value *v)
{
    return sqlite3_value_type(v) == SQLITE_NULL
               ? 0 : (long long)sqlite3_value_bytes(v);
}

/* NULL when the call may go ahead, else why not (static). */
static const char *refusal(const struct fn *fn, sqlite3 *h, int argc,
                           sqlite3_value **argv)
{
    long long limit = sqlite3_limit(h, SQLITE_LIMIT_LENGTH, -1);
    long long a, b;

    switch (fn->check) {
    case CHECK_FORMAT:
        if (argc > 0 &&
            widest((const char *)sqlite3_value_text(argv[0]), argc, argv) >
                limit)
            return "a width or precision larger than the longest value "
                   "allowed";
        break;
    case CHECK_PRODUCT:
        a = value_bytes(argv[0]);
        b = value_bytes(argv[1]);
        if (b && a > SQLFN_WORK_CAP / b)
            return "arguments too long to compare within the time limit";
        break;
    case CHECK_NONE:
        break;
    }
    return NULL;
}

/* The statement calling SQLite's own fns[i] with argc arguments. */
static sqlite3_stmt *stmt_for(struct sqlfn *f, size_t i, int argc,
                              int *cached)
{
    sqlite3_stmt *st = NULL;
    char sql[256];
    size_t n;
    int k;

    *cached = argc <= MAX_CACHED_ARGS;
    if (*cached && f->cache[i][argc])
        return f->cache[i][argc];
    n = (size_t)snprintf(sql, sizeof sql, "SELECT %s(", fns[i].name);
    for (k = 0; k < argc && n + 8 < sizeof sql; k++)
        n += (size_t)snprintf(sql + n, sizeof sql - n, "%s?", k ? "," : "");
    if (k < argc)
        return NULL; /* more arguments than the text can hold */
    snprintf(sql + n, sizeof sql - n, ")");
    if (sqlite3_prepare_v3(f->mem, sql, -1,
                           *cached ? SQLITE_PREPARE_PERSISTENT : 0, &st,
                           NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return NULL;
    }
    if (*cached)
        f->cache[i][argc] = st;
    return st;
}

static void call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const struct reg *r = sqlite3_user_data(ctx);
    struct sqlfn *f = r->f;
    const char *why;
    sqlite3_stmt *st;
    int k, rc, cached;

    if (*f->deadline > 0 && db_now_ms() > *f->deadline) {
        *f->timed_out = 1;
        sqlite3_result_error(ctx, "interrupted", -1);
        sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
        return;
    }
    why = refusal(&fns[r->i], f->h, argc, argv);
    if (why && fns[r->i].check == CHECK_FORMAT) {
        sqlite3_result_error_toobig(ctx);
        return;
    }
    if (why) {
        char *m = sqlite3_mprintf("%s(): %s (askdb refuses calls that "
                                  "need more than %lld steps)", fns[r->i].name,
                                  why, SQLFN_WORK_CAP);
        sqlite3_result_error(ctx, m ? m : why, -1);
        sqlite3_free(m);
        return;
    }
    sqlite3_limit(f->mem, SQLITE_LIMIT_LENGTH,
                  sqlite3_limit(f->h, SQLITE_LIMIT_LENGTH, -1));
    st = stmt_for(f, r->i, argc, &cached);
    if (!st) {
        sqlite3_result_error(ctx, "out of memory or too many arguments", -1);
        return;
    }
    for (k = 0; k < argc; k++)
        sqlite3_bind_value(st, k + 1, argv[k]);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
    } else {
        sqlite3_result_error(ctx, sqlite3_errmsg(f->mem), -1);
        sqlite3_result_error_code(ctx, sqlite3_extended_errcode(f->mem));
    }
    if (cached) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    } else {
        sqlite3_finalize(st);
    }
}

struct sqlfn *sqlfn_install(sqlite3 *h, const double *deadline,
                            int *timed_out)
{
    static const int flags = SQLITE_UTF8 | SQLITE_INNOCUOUS;
    struct sqlfn *f = calloc(1, sizeof *f + NFNS * sizeof(struct reg));
    struct reg *regs;
    size_t i;

    if (!f)
        return NULL;
    regs = (struct reg *)(f + 1);
    f->h = h;
    f->deadline = deadline;
    f->timed_out = timed_out;
    if (sqlite3_open_v2(":memory:", &f->mem,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        sqlfn_free(f);
        return NULL;
    }
    for (i = 0; i < NFNS; i++) {
        regs[i].f = f;
        regs[i].i = i;
        /* Fails only when out of memory: that one function stays
        ** SQLite's own, the others are registered and use f. Not
        ** randomblob() as deterministic: SQLite computes such a call
        ** with constant arguments once per statement, one value for
        ** every row. */
        sqlite3_create_function_v2(h, fns[i].name, fns[i].nargs,
                                   strcmp(fns[i].name, "randomblob") == 0
                                       ? flags
                                       : flags | SQLITE_DETERMINISTIC,
                                   &regs[i], call, NULL, NULL, NULL);
    }
    return f;
}

void sqlfn_free(struct sqlfn *f)
{
    size_t i;
    int k;

    if (!f)
        return;
    for (i = 0; i < NFNS; i++)
        for (k = 0; k <= MAX_CACHED_ARGS; k++)
            sqlite3_finalize(f->cache[i][k]);
    sqlite3_close(f->mem);
    free(f);
}
