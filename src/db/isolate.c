/* isolate.c - the statements of an SQLite or DuckDB file run in askdb-exec,
** a helper process killed at the deadline (see isolate.h). */
#define _GNU_SOURCE /* posix_spawn_file_actions_addclosefrom_np() */
#include "db/isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "db/wire.h"

/*
** Design, and why each choice:
**
** - A process, not a thread: SQLite and DuckDB cannot be stopped inside
**   one function call or operator, and a thread cannot be killed. The
**   statement's process can: at the deadline it gets SIGKILL, whatever it
**   is doing, and the kernel frees its memory and its locks.
** - posix_spawn() of a small program, not fork(): libaskdb lives in
**   programs with other threads (askdb serve's workers, an embedder's,
**   llama.cpp's), and a forked copy of such a process may find SQLite's,
**   DuckDB's or malloc's locks held by a thread that does not exist in it.
**   glibc's posix_spawn() execs at once (clone with CLONE_VFORK) and is
**   safe there. askdb-exec (src/exec/main.c) links the same driver code
**   and opens the file exactly as askdb_db_open() does: read-only (and
**   immutable for a WAL file at rest) for SQLite, READ_ONLY for DuckDB,
**   with every layer of the guard, and runs each statement through the
**   same driver with the same limits. Nothing else is shared.
** - One helper per handle, kept between statements: starting it and
**   opening the file costs milliseconds (DuckDB's library alone is 70 MB
**   to map); a statement after the first costs a round trip on a socket.
**   It starts at the first statement, not at open, so a handle that only
**   reads the schema starts nothing. After a timeout, a cancel, a crash
**   or a malformed reply it is killed and reaped, and the next statement
**   starts a new one.
** - The deadline is the statement's time limit plus a margin (half of it,
**   at least 250 ms), counted from the request, the helper's start
**   included: the helper's own watchdog interrupts an ordinary slow
**   statement at the limit and answers with the usual message; the kill
**   is for what no interrupt reaches. So every statement ends within
**   about 1.5 times --timeout, and reports a timeout the same way either
**   way. The cancel flag (Ctrl-C, askdb_agent_cancel) is looked at every
**   50 ms and kills the helper too.
** - A socket pair, not pipes: one descriptor each way, and send() with
**   MSG_NOSIGNAL, so a helper that died never raises SIGPIPE in the
**   program that embeds us. Our end is close-on-exec, so a helper another
**   thread starts at the same moment does not inherit it; the helper gets
**   its end as descriptors 0 and 1 and no other of ours (closefrom).
** - The reply is untrusted: the helper ran the model's statement. wire.c
**   decodes it strictly within the request's caps; anything else kills
**   the helper and is an error, never rows.
** - No zombie: every helper started is reaped, after SIGKILL when it must
**   be (an idle one at close gets a second to end by itself first). An
**   embedder whose SIGCHLD handler reaps every child first (or SIGCHLD
**   ignored) makes waitpid() fail with ECHILD, which is taken as reaped.
**   A helper whose parent died (Ctrl-C on askdb sql, which has no
**   handler) sees its socket close and ends at once, busy or not
**   (src/exec/main.c).
** - stderr is shared: the helper writes nothing there but a sanitizer's
**   or the C library's report of its own crash.
*/

/* How often the cancel flag is looked at while a statement runs. */
#define POLL_MS 50
/* The margin after the time limit before the helper is killed. */
#define MARGIN_MIN_MS 250
/* How long an idle helper has to end by itself when the handle closes. */
#define GRACE_MS 1000

#ifndef ASKDB_LIBEXECDIR
#define ASKDB_LIBEXECDIR "/usr/local/libexec/askdb"
#endif

extern char **environ;

struct db_iso {
    char *helper;           /* path of askdb-exec */
    pid_t pid;              /* the running helper, 0 = none */
    int fd;                 /* our end of its socket, -1 = none */
};

const char *db_iso_helper(const struct db_iso *iso)
{
    return iso->helper;
}

static int executable(const char *path)
{
    return access(path, X_OK) == 0;
}

/* "dir/askdb-exec" for the directory of the running program, or NULL. */
static char *beside_program(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash;
    struct buf b;

    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    buf_init(&b, 0);
    buf_append(&b, exe, (size_t)(slash - exe) + 1);
    buf_puts(&b, "askdb-exec");
    return buf_steal(&b);
}

/* The helper's path (malloc()ed), or NULL with why (and *named set when
** ASKDB_EXEC_HELPER named it). */
static char *find_helper(char *why, size_t n, int *named)
{
    const char *env = getenv("ASKDB_EXEC_HELPER");
    char *p;

    if (env && *env) {
        if (executable(env))
            return strdup(env);
        snprintf(why, n, "ASKDB_EXEC_HELPER='%s' is not an executable file",
                 env);
        *named = 1;
        return NULL;
    }
    p = beside_program();
    if (p && executable(p))
        return p;
    free(p);
    if (executable(ASKDB_LIBEXECDIR "/askdb-exec"))
        return strdup(ASKDB_LIBEXECDIR "/askdb-exec");
    snprintf(why, n,
             "askdb-exec was found neither beside this program nor in "
             ASKDB_LIBEXECDIR " (make install puts it there; "
             "ASKDB_EXEC_HELPER names another)");
    return NULL;
}

struct db_iso *db_iso_new(askdb_db *db, askdb_log_fn log, void *log_ud,
                          int *refused)
{
    struct db_iso *iso;
    char why[512], msg[768];
    int named = 0;
    char *helper = find_helper(why, sizeof why, &named);

    *refused = 0;
    if (!helper && named) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot open '%s' for statements: %s (unset it to use the "
                 "askdb-exec installed with askdb)", db->label, why);
        *refused = 1;
        return NULL;
    }
    if (!helper) {
        if (log) {
            snprintf(msg, sizeof msg,
                     "warning: %s; the statements on '%s' run inside this "
                     "process, where one long function call can outlast "
                     "--timeout", why, db->label);
            log(log_ud, "db", msg);
        }
        return NULL;
    }
    iso = calloc(1, sizeof *iso);
    if (!iso) {
        free(helper);
        return NULL;
    }
    iso->helper = helper;
    iso->fd = -1;
    if (log) {
        snprintf(msg, sizeof msg,
                 "statements run in %s, killed after the time limit", helper);
        log(log_ud, "db", msg);
    }
    return iso;
}

/* Kill the helper (if one runs) and reap it; *status (may be NULL) gets
** its wait status, or -1 when it had been reaped elsewhere. */
static void stop(struct db_iso *iso, int *status)
{
    int st = -1;

    if (iso->fd >= 0)
        close(iso->fd);
    iso->fd = -1;
    if (iso->pid > 0) {
        kill(iso->pid, SIGKILL);
        while (waitpid(iso->pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    iso->pid = 0;
    if (status)
        *status = st;
}

/* Let an idle helper end by itself (its input closes: it closes the
** database and exits, and a sanitizer build checks itself for leaks),
** within GRACE_MS; then kill it. Reaped either way. */
static void finish(struct db_iso *iso)
{
    struct timespec ms = {0, 1000000};
    pid_t r;
    int i;

    if (iso->fd >= 0)
        close(iso->fd);
    iso->fd = -1;
    for (i = 0; iso->pid > 0 && i < GRACE_MS; i++) {
        r = waitpid(iso->pid, NULL, WNOHANG);
        if (r == iso->pid || (r < 0 && errno != EINTR))
            iso->pid = 0;
        else
            nanosleep(&ms, NULL);
    }
    stop(iso, NULL);
}

/* Start the helper on a new socket; 0, or an errno value. */
static int spawn_helper(struct db_iso *iso)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, dflt;
    char *argv[3];
    int sv[2], err, child;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return errno;
    child = sv[1];
    /* dup2() onto itself would keep close-on-exec: make it 3 or more. */
    if (child <= 2) {
        child = fcntl(sv[1], F_DUPFD_CLOEXEC, 3);
        close(sv[1]);
        if (child < 0) {
            err = errno;
            close(sv[0]);
            return err;
        }
    }
    err = posix_spawn_file_actions_init(&fa);
    if (err)
        goto out_fds;
    err = posix_spawnattr_init(&at);
    if (err) {
        posix_spawn_file_actions_destroy(&fa);
        goto out_fds;
    }
    /* Descriptors 0 and 1 are the socket, 2 is ours, no other is open. */
    err = posix_spawn_file_actions_adddup2(&fa, child, 0);
    if (!err)
        err = posix_spawn_file_actions_adddup2(&fa, child, 1);
#if defined(__GLIBC__) &&                                                     \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    if (!err)
        err = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
    /* No signal blocked (a server's thread blocks SIGINT and SIGTERM),
    ** and the ones the helper relies on at their default action, even
    ** when this program ignores them. */
    sigemptyset(&none);
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGPIPE);
    sigaddset(&dflt, SIGALRM);
    sigaddset(&dflt, SIGTERM);
    sigaddset(&dflt, SIGCHLD);
    if (!err)
        err = posix_spawnattr_setsigmask(&at, &none);
    if (!err)
        err = posix_spawnattr_setsigdefault(&at, &dflt);
    if (!err)
        err = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
                                                POSIX_SPAWN_SETSIGDEF);
    argv[0] = iso->helper;
    argv[1] = (char *)"--libaskdb";
    argv[2] = NULL;
    if (!err)
        err = posix_spawn(&iso->pid, iso->helper, &fa, &at, argv, environ);
    if (err)
        iso->pid = 0;
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
out_fds:
    close(child);
    if (err) {
        close(sv[0]);
        return err;
    }
    iso->fd = sv[0];
    if (fcntl(iso->fd, F_SETFL, fcntl(iso->fd, F_GETFL) | O_NONBLOCK) != 0) {
        err = errno;
        stop(iso, NULL);
        return err;
    }
    return 0;
}

/* How an exchange with the helper ended. */
enum outcome { X_DONE, X_TIMEOUT, X_CANCEL, X_GONE, X_BAD };

/*
** Send req and decode the reply into d until it is whole, the helper
** goes away, the deadline (ms on db_now_ms()'s clock) passes or cancel
** is raised.
*/
static enum outcome exchange(struct db_iso *iso, const struct buf *req,
                             struct wire_dec *d, double kill_at,
                             const atomic_int *cancel)
{
    unsigned char in[16384];
    struct pollfd pf;
    size_t sent = 0;
    double left;
    ssize_t k;
    int r;

    for (;;) {
        if (cancel && atomic_load(cancel))
            return X_CANCEL;
        left = kill_at - db_now_ms();
        if (left <= 0)
            return X_TIMEOUT;
        pf.fd = iso->fd;
        pf.events = POLLIN | (sent < req->len ? POLLOUT : 0);
        pf.revents = 0;
        r = poll(&pf, 1, left < POLL_MS ? (int)left + 1 : POLL_MS);
        if (r < 0 && errno != EINTR)
            return X_GONE;
        if (r <= 0)
            continue;
        if ((pf.revents & POLLOUT) && sent < req->len) {
            k = send(iso->fd, req->data + sent, req->len - sent,
                     MSG_NOSIGNAL);
            if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                errno != EINTR)
                return X_GONE;
            if (k > 0)
                sent += (size_t)k;
        }
        if (pf.revents & (POLLIN | POLLHUP | POLLERR)) {
            k = recv(iso->fd, in, sizeof in, 0);
            if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
                          errno == EINTR))
                continue;
            if (k <= 0)
                return X_GONE;
            r = wire_dec_feed(d, in, (size_t)k);
            if (r == WIRE_BAD)
                return X_BAD;
            if (r == WIRE_DONE)
                return sent == req->len ? X_DONE : X_BAD;
        }
    }
}

/* What a helper's wait status says, for a message. */
static void describe_end(int st, char *out, size_t n)
{
    static const struct {
        int sig;
        const char *name;
    } sigs[] = {{SIGKILL, "SIGKILL"}, {SIGSEGV, "SIGSEGV"},
                {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},
                {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
                {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"}};
    size_t i;

    if (st == -1) {
        snprintf(out, n, "it ended");
    } else if (WIFSIGNALED(st)) {
        for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            if (sigs[i].sig == WTERMSIG(st)) {
                snprintf(out, n, "it was killed by %s", sigs[i].name);
                return;
            }
        snprintf(out, n, "it was killed by signal %d", WTERMSIG(st));
    } else {
        snprintf(out, n, "it exited with status %d", WEXITSTATUS(st));
    }
}

/* Fill e for an exchange that did not end in a reply; the helper is
** stopped (killed or reaped) here. */
static askdb_status failed(askdb_db *db, struct db_iso *iso, enum outcome x,
                           const struct wire_dec *d, struct db_err *e)
{
    char how[64];
    int st;

    e->ec = ASKDB_EC_RUNTIME;
    switch (x) {
    case X_TIMEOUT:
        stop(iso, NULL);
        e->ec = ASKDB_EC_TIMEOUT;
        snprintf(e->msg, sizeof e->msg,
                 "query interrupted after the %d ms time limit (--timeout)",
                 db->query_timeout_ms);
        return ASKDB_ERR_TIMEOUT;
    case X_CANCEL:
        stop(iso, NULL);
        snprintf(e->msg, sizeof e->msg, "cancelled");
        return ASKDB_ERR_CANCELLED;
    case X_BAD:
        stop(iso, NULL);
        snprintf(e->msg, sizeof e->msg,
                 "the statement's process (%s) sent a malformed reply (%s); "
                 "it was stopped", iso->helper, d->why);
        return ASKDB_ERR_DB;
    default:
        /* It closed its socket: dead, or as good as (SIGKILL does not
        ** change the status of one that had ended). */
        stop(iso, &st);
        describe_end(st, how, sizeof how);
        snprintf(e->msg, sizeof e->msg,
                 "the statement's process (%s) ended before it answered: %s "
                 "(out of memory, or a crash); askdb itself is unharmed",
                 iso->helper, how);
        return ASKDB_ERR_DB;
    }
}

/* Milliseconds after the request when the helper is killed. */
static double kill_after_ms(int timeout_ms)
{
    double margin = timeout_ms / 2.0;

    return timeout_ms + (margin < MARGIN_MIN_MS ? MARGIN_MIN_MS : margin);
}

/*
** The helper opens the file by its resolved path (db->iso_path: a
** /proc/self/fd/3 or a relative link would name another file in it); its
** messages name the file as the user gave it (db->path), as askdb's own
** process does.
*/
static void said_as_given(const askdb_db *db, struct db_err *e)
{
    char msg[sizeof e->msg];
    const char *at;
    size_t n;

    if (!db->iso_path || strcmp(db->iso_path, db->path) == 0 ||
        !(at = strstr(e->msg, db->iso_path)))
        return;
    n = strlen(db->iso_path);
    snprintf(msg, sizeof msg, "%.*s%s%s", (int)(at - e->msg), e->msg,
             db->path, at + n);
    memcpy(e->msg, msg, sizeof msg);
}

/* Start the helper and open db's file in it, by kill_at. */
static askdb_status start(askdb_db *db, struct db_iso *iso, double kill_at,
                          struct db_err *e)
{
    struct wire_open o;
    struct wire_dec d;
    struct buf req;
    enum outcome x;
    askdb_status rc;
    int err;

    err = spawn_helper(iso);
    if (err) {
        e->ec = ASKDB_EC_RUNTIME;
        snprintf(e->msg, sizeof e->msg,
                 "cannot start %s, which runs the statement: %s",
                 iso->helper, strerror(err));
        return ASKDB_ERR_DB;
    }
    o.timeout_ms = db->query_timeout_ms;
    o.max_rows = db->max_rows;
    o.max_bytes = db->max_bytes;
    o.count_cap = db->count_cap;
    o.path = db->iso_path ? db->iso_path : db->path;
    buf_init(&req, 0);
    wire_put_open(&req, &o);
    if (buf_err(&req)) {
        buf_free(&req);
        stop(iso, NULL);
        e->ec = ASKDB_EC_RUNTIME;
        snprintf(e->msg, sizeof e->msg, "out of memory");
        return ASKDB_ERR_NOMEM;
    }
    wire_dec_init(&d, WIRE_REPLY_OPEN, 1, 1);
    x = exchange(iso, &req, &d, kill_at, db->cancel);
    buf_free(&req);
    if (x != X_DONE) {
        rc = failed(db, iso, x, &d, e);
    } else if (d.status != ASKDB_OK) {
        /* The file cannot be opened any more (it was replaced, removed,
        ** or locked by a writer since this handle opened it): the
        ** database failed, not the statement, as a lock met by a
        ** statement in askdb's process is (ASKDB_EC_DATABASE, no repair
        ** asked for); the handle itself is open, so no ASKDB_ERR_DB_OPEN
        ** for the statement. */
        stop(iso, NULL);
        *e = d.err;
        said_as_given(db, e);
        rc = d.status;
        if (rc == ASKDB_ERR_DB_OPEN) {
            e->ec = ASKDB_EC_DATABASE;
            rc = ASKDB_ERR_DB;
        } else if (e->ec == ASKDB_EC_NONE) {
            e->ec = ASKDB_EC_RUNTIME;
        }
    } else {
        rc = ASKDB_OK;
    }
    wire_dec_free(&d);
    return rc;
}

askdb_status db_iso_call(askdb_db *db, struct db_iso *iso, int type,
                         const char *sql, askdb_result **out,
                         struct db_err *e)
{
    struct wire_dec d;
    struct buf req;
    enum outcome x;
    askdb_status rc;
    double t0 = db_now_ms(), kill_at;
    int st;

    *out = NULL;
    kill_at = t0 + kill_after_ms(db->query_timeout_ms);
    /* A helper that ended while idle (the OOM killer, a signal from
    ** outside) is reaped and replaced, not sent a request. */
    if (iso->pid > 0) {
        pid_t r = waitpid(iso->pid, &st, WNOHANG);
        if (r == iso->pid || (r < 0 && errno == ECHILD)) {
            iso->pid = 0;
            stop(iso, NULL);
        }
    }
    if (iso->pid == 0) {
        rc = start(db, iso, kill_at, e);
        if (rc)
            return rc;
    }
    buf_init(&req, 0);
    wire_put_sql(&req, type, sql);
    if (buf_err(&req)) {
        buf_free(&req);
        e->ec = ASKDB_EC_RUNTIME;
        snprintf(e->msg, sizeof e->msg, "out of memory");
        return ASKDB_ERR_NOMEM;
    }
    wire_dec_init(&d, type == WIRE_RUN ? WIRE_REPLY_RUN : WIRE_REPLY_CHECK,
                  db->max_rows, db->max_bytes);
    x = exchange(iso, &req, &d, kill_at, db->cancel);
    buf_free(&req);
    if (x != X_DONE) {
        rc = failed(db, iso, x, &d, e);
    } else if (d.status != ASKDB_OK) {
        *e = d.err;
        rc = d.status;
    } else {
        *out = wire_dec_take(&d);
        if (*out)
            (*out)->exec_ms = db_now_ms() - t0;
        rc = ASKDB_OK;
    }
    wire_dec_free(&d);
    return rc;
}

void db_iso_free(struct db_iso *iso)
{
    if (!iso)
        return;
    finish(iso);
    free(iso->helper);
    free(iso);
}
