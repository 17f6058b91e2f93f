/* stdio_server.c - `askdb mcp`: the MCP server over stdin and stdout, one
** JSON-RPC message per line. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "stdio_server.h"

/*
** The main thread reads stdin. Quick requests are answered on it; tool
** calls and resource reads run on a thread each, so that the next line -
** a ping, another call, or notifications/cancelled for the running `ask`
** - is read at once. Lines go to stdout whole, under ctx.lock, flushed
** each: stdout carries nothing but the protocol. At the end of stdin the
** running calls are awaited, then the process exits.
*/

/* Tool calls running at once; more are answered "busy". */
#define MAX_RUNNING 16

struct stdio_ctx {
    pthread_mutex_t lock;    /* guards the fields below and stdout */
    pthread_cond_t idle;     /* signalled when running drops */
    int running;
    int broken;              /* stdout failed: the client is gone */
    struct mcp_session *session;
};

struct job {
    struct stdio_ctx *ctx;
    struct mcp_msg *m;
};

static void emit_line(void *ud, enum mcp_out kind, const char *json,
                      size_t len)
{
    struct stdio_ctx *ctx = ud;

    (void)kind;
    pthread_mutex_lock(&ctx->lock);
    if (!ctx->broken &&
        (fwrite(json, 1, len, stdout) != len || putchar('\n') == EOF ||
         fflush(stdout) != 0))
        ctx->broken = 1;
    pthread_mutex_unlock(&ctx->lock);
}

static void *run_job(void *arg)
{
    struct job *j = arg;
    struct stdio_ctx *ctx = j->ctx;

    mcp_dispatch(ctx->session, j->m, emit_line, ctx);
    free(j);
    pthread_mutex_lock(&ctx->lock);
    ctx->running--;
    pthread_cond_broadcast(&ctx->idle);
    pthread_mutex_unlock(&ctx->lock);
    return NULL;
}

/* Run m on a thread of its own (or here, when none can be made). */
static void start_job(struct stdio_ctx *ctx, struct mcp_msg *m)
{
    pthread_attr_t attr;
    pthread_t t;
    struct job *j;
    int busy, ok = 0;

    pthread_mutex_lock(&ctx->lock);
    busy = ctx->running >= MAX_RUNNING;
    if (!busy)
        ctx->running++;
    pthread_mutex_unlock(&ctx->lock);
    if (busy) {
        mcp_reject(ctx->session, m, -32000, "busy: 16 calls are running; "
                   "send this one again when one has finished", emit_line,
                   ctx);
        return;
    }
    j = malloc(sizeof *j);
    if (j && pthread_attr_init(&attr) == 0) {
        j->ctx = ctx;
        j->m = m;
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = pthread_create(&t, &attr, run_job, j) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!ok) {
        free(j);
        mcp_dispatch(ctx->session, m, emit_line, ctx);
        pthread_mutex_lock(&ctx->lock);
        ctx->running--;
        pthread_mutex_unlock(&ctx->lock);
    }
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
                   const char *const *paths)
{
    struct mcp_server *srv = NULL;
    struct stdio_ctx ctx;
    struct mcp_msg *m;
    askdb_status st;
    char err[1024], *line = NULL, msg[200];
    size_t cap = 0;
    long len;
    int over, i;

    st = mcp_server_new(cfg, n, names, paths, &srv, err, sizeof err);
    if (st) {
        fprintf(stderr, "askdb mcp: %s\n", err);
        return st == ASKDB_ERR_DB_OPEN ? 3 : 2;
    }
    memset(&ctx, 0, sizeof ctx);
    pthread_mutex_init(&ctx.lock, NULL);
    pthread_cond_init(&ctx.idle, NULL);
    ctx.session = mcp_session_new(srv);
    if (!ctx.session) {
        fprintf(stderr, "askdb mcp: out of memory\n");
        mcp_server_free(srv);
        return 2;
    }
    /* A client that closes its end makes writes fail, not kill us. */
    signal(SIGPIPE, SIG_IGN);
    fprintf(stderr, "askdb mcp: serving %d database%s over stdio:",
            srv->ndb, srv->ndb == 1 ? "" : "s");
    for (i = 0; i < srv->ndb; i++)
        fprintf(stderr, " %s (%s)", srv->dbs[i].name, srv->dbs[i].path);
    fputc('\n', stderr);

    while ((len = read_line(&line, &cap, &over)) >= 0) {
        if (over) {
            snprintf(msg, sizeof msg, "message over %zu MiB: send less at "
                     "once", MCP_MAX_MESSAGE >> 20);
            mcp_error_null_id(emit_line, &ctx, -32600, msg);
            continue;
        }
        if (len == 0 || strspn(line, " \t") == (size_t)len)
            continue;
        m = mcp_parse(ctx.session, line, (size_t)len, emit_line, &ctx);
        if (!m)
            continue;
        if (mcp_msg_slow(m))
            start_job(&ctx, m);
        else
            mcp_dispatch(ctx.session, m, emit_line, &ctx);
    }
    free(line);
    /* End of input: the calls still running finish and send their
    ** results (a client that is gone makes the writes fail), then we
    ** leave. A client that cannot wait ends the process. */
    pthread_mutex_lock(&ctx.lock);
    while (ctx.running > 0)
        pthread_cond_wait(&ctx.idle, &ctx.lock);
    pthread_mutex_unlock(&ctx.lock);
    mcp_session_free(ctx.session);
    pthread_cond_destroy(&ctx.idle);
    pthread_mutex_destroy(&ctx.lock);
    mcp_server_free(srv);
    return 0;
}
