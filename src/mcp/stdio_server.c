/* stdio_server.c - `askdb mcp`: the MCP server over stdin and stdout, one
** JSON-RPC message per line. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcp.h"
#include "stdio_server.h"

/*
** One thread at a time reads stdin: the reader. It handles each message
** itself, tool calls included, so that a call starts at once on a thread
** that has a CPU: no hand-over to another thread, which costs up to a
** scheduler tick on a busy machine. So that a long call (an `ask`) does
** not stop the reading - a ping, another call, notifications/cancelled for
** that very call - a standby thread waits beside it: when the reader has
** been inside one call for HANDOVER_MS, the standby becomes the reader,
** and the old reader, its call done, becomes the standby (or ends, when
** there is one). Lines go to stdout whole, under ctx.lock, flushed each:
** stdout carries nothing but the protocol. At the end of stdin the
** running calls are awaited, then the process exits.
*/

/* At most MCP_MAX_RUNNING tool calls and resource reads run at once;
** more are answered "busy" (mcp_reject_busy()). Not queued: the reader
** would have to stop reading, and a ping or a cancel would wait with the
** calls. */

/* How long a call may hold the reading before the standby takes it. */
#define HANDOVER_MS 1

struct stdio_ctx {
    pthread_mutex_t lock;    /* guards the fields below and stdout */
    pthread_cond_t done;     /* threads, running or eof changed */
    pthread_cond_t wake;     /* the standby's: arm or eof changed */
    int threads;             /* threads other than main still alive */
    int running;             /* calls running */
    int eof;                 /* stdin ended */
    int broken;              /* stdout failed: the client is gone */
    int standby;             /* a standby thread waits */
    int *arm;                /* the reader runs a call since `since`: the
                                standby sets *arm when it takes the
                                reading; NULL when the reader reads */
    struct timespec since;
    struct mcp_session *session;
    FILE *out;               /* the protocol's stdout (see mcp_stdio_main) */
    char *line;              /* the reader's line buffer */
    size_t cap;
};

/* What a thread does next. */
enum role { ROLE_READER, ROLE_STANDBY, ROLE_END };

static void emit_line(void *ud, enum mcp_out kind, const char *json,
                      size_t len)
{
    struct stdio_ctx *ctx = ud;

    (void)kind;
    pthread_mutex_lock(&ctx->lock);
    if (!ctx->broken &&
        (fwrite(json, 1, len, ctx->out) != len ||
         putc('\n', ctx->out) == EOF || fflush(ctx->out) != 0))
        ctx->broken = 1;
    pthread_mutex_unlock(&ctx->lock);
}

static long read_line(char **buf, size_t *cap, int *over);

/* The standby (ctx->standby is set for it): wait for a call that holds
** the reading HANDOVER_MS, then take the reading over. */
static enum role standby(struct stdio_ctx *ctx)
{
    struct timespec deadline;
    enum role next = ROLE_END;

    pthread_mutex_lock(&ctx->lock);
    while (!ctx->eof) {
        if (!ctx->arm) {
            pthread_cond_wait(&ctx->wake, &ctx->lock);
            continue;
        }
        deadline = ctx->since;
        deadline.tv_nsec += HANDOVER_MS * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&ctx->wake, &ctx->lock, &deadline) == 0)
            continue;        /* woken: the call may have ended; look again */
        if (ctx->arm && !ctx->eof) {
            *ctx->arm = 1;
            ctx->arm = NULL;
            next = ROLE_READER;
            break;
        }
    }
    ctx->standby = 0;
    pthread_mutex_unlock(&ctx->lock);
    return next;
}

static void *thread_main(void *arg);

/* Make sure a standby waits (ctx->lock held). */
static void need_standby(struct stdio_ctx *ctx)
{
    pthread_attr_t attr;
    pthread_t t;

    if (ctx->standby || pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, thread_main, ctx) == 0) {
        ctx->standby = 1;
        ctx->threads++;
    }
    pthread_attr_destroy(&attr);
}

/* Run a slow message on this thread, the standby ready to take the
** reading. Returns 1 when this thread is still the reader. */
static int run_slow(struct stdio_ctx *ctx, struct mcp_msg *m)
{
    int busy, taken = 0;

    pthread_mutex_lock(&ctx->lock);
    busy = ctx->running >= MCP_MAX_RUNNING;
    if (!busy) {
        ctx->running++;
        need_standby(ctx);
        ctx->arm = &taken;
        clock_gettime(CLOCK_MONOTONIC, &ctx->since);
        pthread_cond_broadcast(&ctx->wake);
    }
    pthread_mutex_unlock(&ctx->lock);
    if (busy) {
        mcp_reject_busy(ctx->session, m, emit_line, ctx);
        return 1;
    }
    mcp_dispatch(ctx->session, m, emit_line, ctx);
    pthread_mutex_lock(&ctx->lock);
    ctx->running--;
    if (!taken) {
        ctx->arm = NULL;
        pthread_cond_broadcast(&ctx->wake);
    }
    pthread_cond_broadcast(&ctx->done);
    pthread_mutex_unlock(&ctx->lock);
    return !taken;
}

/* Read and handle lines until stdin ends or the reading passed to the
** standby; then this thread becomes the standby when none waits. */
static enum role reader(struct stdio_ctx *ctx)
{
    struct mcp_msg *m;
    enum role next;
    long len;
    int over;

    while ((len = read_line(&ctx->line, &ctx->cap, &over)) >= 0) {
        if (over) {
            mcp_error_too_long(emit_line, ctx);
            continue;
        }
        if (len == 0 || strspn(ctx->line, " \t") == (size_t)len)
            continue;
        m = mcp_parse(ctx->session, ctx->line, (size_t)len, emit_line, ctx);
        if (!m)
            continue;
        if (!mcp_msg_slow(m)) {
            mcp_dispatch(ctx->session, m, emit_line, ctx);
        } else if (!run_slow(ctx, m)) {
            pthread_mutex_lock(&ctx->lock);
            next = ctx->standby || ctx->eof ? ROLE_END : ROLE_STANDBY;
            if (next == ROLE_STANDBY)
                ctx->standby = 1;
            pthread_mutex_unlock(&ctx->lock);
            return next;
        }
    }
    pthread_mutex_lock(&ctx->lock);
    ctx->eof = 1;
    pthread_cond_broadcast(&ctx->wake);
    pthread_cond_broadcast(&ctx->done);
    pthread_mutex_unlock(&ctx->lock);
    return ROLE_END;
}

/* A thread's life: reader and standby by turns, until there is nothing
** left for it. The main thread starts as the reader, the others as the
** standby. */
static void serve(struct stdio_ctx *ctx, enum role role)
{
    while (role != ROLE_END)
        role = role == ROLE_READER ? reader(ctx) : standby(ctx);
}

static void *thread_main(void *arg)
{
    struct stdio_ctx *ctx = arg;

    serve(ctx, ROLE_STANDBY);
    pthread_mutex_lock(&ctx->lock);
    ctx->threads--;
    pthread_cond_broadcast(&ctx->done);
    pthread_mutex_unlock(&ctx->lock);
    return NULL;
}

/*
** Read one line of stdin into *buf (grown, at most MCP_MAX_MESSAGE bytes
** kept). Returns its length without the newline (and a final CR), or -1 at
** the end of input; *over is set when the line was longer than the cap
** (the rest of it is skipped).
*/
static long read_line(char **buf, size_t *cap, int *over)
{
    size_t n = 0;
    int c;

    *over = 0;
    for (;;) {
        c = getc_unlocked(stdin);
        if (c == EOF) {
            if (n == 0 && !*over)
                return -1;
            break;
        }
        if (c == '\n')
            break;
        if (n >= MCP_MAX_MESSAGE) {
            *over = 1;
            continue;
        }
        if (n + 1 >= *cap) {
            size_t ncap = *cap ? *cap * 2 : 4096;
            char *p = realloc(*buf, ncap);

            if (!p) {
                *over = 1;
                continue;
            }
            *buf = p;
            *cap = ncap;
        }
        (*buf)[n++] = (char)c;
    }
    if (n > 0 && (*buf)[n - 1] == '\r')
        n--;
    if (*buf)
        (*buf)[n] = '\0';
    return (long)n;
}

int mcp_stdio_main(const askdb_config *cfg, int n, const char *const *names,
                   const char *const *paths, int warm)
{
    struct mcp_server *srv = NULL;
    struct stdio_ctx ctx;
    pthread_condattr_t cattr;
    askdb_status st;
    char err[1024];
    int i;

    st = mcp_server_new(cfg, n, names, paths, &srv, err, sizeof err);
    if (st) {
        fprintf(stderr, "askdb mcp: %s\n", err);
        return st == ASKDB_ERR_DB_OPEN ? 3 : 2;
    }
    memset(&ctx, 0, sizeof ctx);
    /* The protocol gets its own copy of stdout, and file descriptor 1
    ** becomes stderr: whatever else writes to stdout (a library's
    ** message, a model runtime's log) lands in the log, not among the
    ** client's messages. */
    fflush(stdout);
    i = dup(STDOUT_FILENO);
    ctx.out = i >= 0 ? fdopen(i, "w") : NULL;
    if (!ctx.out || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        fprintf(stderr, "askdb mcp: cannot set up stdout: %s\n",
                strerror(errno));
        if (ctx.out)
            fclose(ctx.out);
        mcp_server_free(srv);
        return 2;
    }
    pthread_mutex_init(&ctx.lock, NULL);
    pthread_cond_init(&ctx.done, NULL);
    pthread_condattr_init(&cattr);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
    pthread_cond_init(&ctx.wake, &cattr);
    pthread_condattr_destroy(&cattr);
    ctx.session = mcp_session_new(srv);
    if (!ctx.session) {
        fprintf(stderr, "askdb mcp: out of memory\n");
        fclose(ctx.out);
        mcp_server_free(srv);
        return 2;
    }
    /* A client that closes its end makes writes fail, not kill us. */
    signal(SIGPIPE, SIG_IGN);
    fprintf(stderr, "askdb mcp: serving %d database%s over stdio:",
            srv->ndb, srv->ndb == 1 ? "" : "s");
    for (i = 0; i < srv->ndb; i++)
        fprintf(stderr, " %s (%s)", srv->dbs[i].name,
                srv->dbs[i].db ? askdb_db_label(srv->dbs[i].db)
                               : srv->dbs[i].path);
    fputc('\n', stderr);
    if (warm)
        mcp_server_warm_start(srv);

    serve(&ctx, ROLE_READER);
    /* End of input (seen by whichever thread read last): the calls still
    ** running finish and send their results (a client that is gone makes
    ** the writes fail), then we leave. A client that cannot wait ends the
    ** process. */
    pthread_mutex_lock(&ctx.lock);
    while (!ctx.eof || ctx.threads > 0 || ctx.running > 0)
        pthread_cond_wait(&ctx.done, &ctx.lock);
    pthread_mutex_unlock(&ctx.lock);
    free(ctx.line);
    mcp_session_free(ctx.session);
    pthread_cond_destroy(&ctx.done);
    pthread_cond_destroy(&ctx.wake);
    pthread_mutex_destroy(&ctx.lock);
    mcp_server_free(srv);
    fclose(ctx.out);
    return 0;
}
