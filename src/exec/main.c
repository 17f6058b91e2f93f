/* main.c - askdb-exec: runs the statements of one SQLite or DuckDB file for
** libaskdb, in a process of its own that libaskdb kills at the deadline. */
#define _GNU_SOURCE /* POLLRDHUP */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "db/db.h"
#include "db/wire.h"

/*
** libaskdb starts this program (src/db/isolate.c has why and how) with a
** socket as descriptors 0 and 1 and speaks wire.h's framing on it: first
** an 'O' frame, which opens the file through the same driver and guard as
** askdb_db_open() (read-only, immutable for a WAL file at rest, DuckDB's
** READ_ONLY), then any number of 'C' (check) and 'R' (run) frames, each
** answered in turn through db_check() and db_run() in this process, with
** the limits the 'O' frame gave. The end of its input ends it.
**
** What it adds to the driver's own limits, since here a process is
** cheap to lose:
**   - its address space is capped (2 GiB plus three times the result's
**     byte cap), so a statement that builds gigabytes fails or dies
**     instead of taking the machine's memory (not under AddressSanitizer,
**     which reserves terabytes of address space for itself);
**   - no core file (a crash would write one in the working directory,
**     which may be the database's);
**   - Ctrl-C at the terminal reaches the whole process group: ignored
**     here, so that libaskdb decides (it kills this process on cancel, and
**     askdb serve lets the statements in flight finish);
**   - a thread that ends this process at once when libaskdb's end of the
**     socket closes (the program using libaskdb died, Ctrl-C on askdb sql
**     included), even in the middle of a statement, and an alarm at twice
**     the time limit plus 2 s for every statement in case that is missed
**     (a program that forked without exec still holds the socket).
*/

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* Rows are written in pieces of about this much. */
#define FLUSH_AT ((size_t)64 << 10)

/* Set by the main thread, read by watch_parent(): a statement runs; the
** thread is to return. */
static atomic_int busy, quit;

/*
** End at once when libaskdb's end of the socket closes while a statement
** runs. A request never arrives while one runs, so only the hang-up wakes
** this up; when idle, the main thread reads the end of its input and
** exits the ordinary way (closing the database; a sanitizer build checks
** for leaks), and this thread only waits.
*/
static void *watch_parent(void *arg)
{
    struct timespec ms10 = {0, 10000000};
    struct pollfd pf;

    (void)arg;
    for (;;) {
        pf.fd = 0;
        pf.events = POLLRDHUP;
        pf.revents = 0;
        if (poll(&pf, 1, -1) <= 0 ||
            !(pf.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
            continue;
        if (atomic_load(&quit))
            break;
        if (atomic_load(&busy))
            _exit(0);
        nanosleep(&ms10, NULL);
    }
    return NULL;
}

static void limit_self(size_t max_bytes)
{
    struct rlimit rl;

    rl.rlim_cur = rl.rlim_max = 0;
    setrlimit(RLIMIT_CORE, &rl);
#ifndef UNDER_ASAN
    {
        rlim_t as = (rlim_t)2 << 30;
        if (max_bytes < ((rlim_t)-1 - as) / 4)
            as += 3 * (rlim_t)max_bytes;
        else
            as = RLIM_INFINITY;
        if (getrlimit(RLIMIT_AS, &rl) == 0 &&
            (rl.rlim_max == RLIM_INFINITY || as < rl.rlim_max)) {
            rl.rlim_cur = as;
            setrlimit(RLIMIT_AS, &rl);
        }
    }
#else
    (void)max_bytes;
#endif
}

/* Write and empty b; exits when libaskdb is gone (or b failed). */
static void flush(struct buf *b)
{
    if (buf_err(b) || wire_write_all(1, b->data, b->len) != 0)
        exit(1);
    buf_reset(b);
}

static void reply_error(struct buf *b, askdb_status st, askdb_error_class ec,
                        const char *msg)
{
    struct db_err e;

    e.ec = ec;
    snprintf(e.msg, sizeof e.msg, "%s", msg);
    wire_put_error(b, st, &e);
    flush(b);
}

/* The 'O' frame: open the file as askdb_db_open() does, in this process;
** *timeout_ms gets the statements' time limit. Exits on any failure,
** after saying why. */
static askdb_db *open_db(struct buf *b, const unsigned char *p, size_t n,
                         int *timeout_ms)
{
    askdb_config cfg = askdb_config_default();
    const struct db_driver *drv;
    struct wire_open o;
    askdb_db *db;
    askdb_status rc;
    char err[256];

    if (wire_get_open(p, n, &o) != 0) {
        reply_error(b, ASKDB_ERR_USAGE, ASKDB_EC_NONE,
                    "askdb-exec cannot read the open request (a libaskdb "
                    "and an askdb-exec of different versions?)");
        exit(1);
    }
    drv = db_pick(o.path, err, sizeof err);
    if (drv != &db_sqlite_driver && drv != &db_duckdb_driver) {
        reply_error(b, ASKDB_ERR_USAGE, ASKDB_EC_NONE,
                    "askdb-exec opens SQLite and DuckDB files only");
        exit(1);
    }
    limit_self(o.max_bytes);
    cfg.in_process = 1;
    cfg.query_timeout_ms = o.timeout_ms;
    cfg.max_rows = o.max_rows;
    cfg.max_bytes = o.max_bytes;
    cfg.count_cap = o.count_cap;
    cfg.sample_values = 0;
    rc = askdb_db_open(o.path, &cfg, &db);
    if (rc) {
        reply_error(b, rc, ASKDB_EC_NONE, askdb_db_errmsg(db));
        askdb_db_close(db);
        buf_free(b);
        exit(1);
    }
    wire_put_opened(b, askdb_db_version(db));
    flush(b);
    *timeout_ms = o.timeout_ms;
    return db;
}

/* A 'C' or 'R' frame: the statement through the guard, the reply. */
static void serve(askdb_db *db, struct buf *b, int type, const char *sql,
                  int timeout_ms)
{
    askdb_result *r = NULL;
    struct db_err e;
    askdb_status rc;
    long i;

    atomic_store(&busy, 1);
    alarm((unsigned)(timeout_ms / 1000) * 2 + 2);
    if (type == WIRE_CHECK)
        rc = db_check(db, sql, &e);
    else
        rc = db_run(db, sql, &r, &e);
    alarm(0);
    if (rc) {
        wire_put_error(b, rc, &e);
    } else if (type == WIRE_CHECK) {
        wire_put_end(b, 0, 0);
    } else {
        wire_put_head(b, r);
        for (i = 0; i < r->nrows; i++) {
            wire_put_row(b, r, i);
            if (b->len >= FLUSH_AT)
                flush(b);
        }
        wire_put_end(b, r->truncated, r->exec_ms);
    }
    askdb_result_free(r);
    flush(b);
    atomic_store(&busy, 0);
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    pthread_t th;
    int watching;
    askdb_db *db = NULL;
    unsigned char *p;
    const char *sql;
    struct buf b;
    int type, r, timeout_ms = 0;
    size_t n;

    if (argc != 2 || strcmp(argv[1], "--libaskdb") != 0) {
        fprintf(stderr, "askdb-exec: runs statements for libaskdb, which "
                        "starts it; not a command to run by hand\n");
        return 2;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    watching = pthread_create(&th, NULL, watch_parent, NULL) == 0;
    buf_init(&b, 0);
    for (;;) {
        r = wire_read_frame(0, &type, &p, &n, WIRE_REQUEST_MAX);
        if (r <= 0)
            break;
        if (!db && type == WIRE_OPEN) {
            db = open_db(&b, p, n, &timeout_ms);
        } else if (db && (type == WIRE_CHECK || type == WIRE_RUN) &&
                   wire_get_sql(p, n, &sql) == 0) {
            serve(db, &b, type, sql, timeout_ms);
        } else {
            reply_error(&b, ASKDB_ERR_USAGE, ASKDB_EC_NONE,
                        "askdb-exec got a request out of place");
            free(p);
            break;
        }
        free(p);
    }
    buf_free(&b);
    askdb_db_close(db);
    /* Shutting the socket down wakes the thread's poll(). */
    if (watching) {
        atomic_store(&quit, 1);
        shutdown(0, SHUT_RDWR);
        pthread_join(th, NULL);
    }
    return r < 0 ? 1 : 0;
}
