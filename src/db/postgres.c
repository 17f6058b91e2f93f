/* postgres.c - the PostgreSQL driver (libpq): a read-only session, the
** catalogs read in a few set-based queries, and the guard. */
#define _XOPEN_SOURCE 700 /* strncasecmp, poll */
#include "db/driver.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** Defence in layers, each enough on its own for what it covers:
**   1. the session is read-only: default_transaction_read_only=on, with
**      statement_timeout, lock_timeout and
**      idle_in_transaction_session_timeout, all SET right after connecting
**      (and after every reconnect);
**   2. each statement runs inside BEGIN READ ONLY ... ROLLBACK, so even a
**      statement that changes a setting with set_config() leaves nothing
**      behind;
**   3. the statement goes through the extended protocol (Parse, Describe,
**      Execute): the server refuses more than one statement in a Parse,
**      and one that describes no result columns (SET, COPY, DO, CALL
**      without OUT arguments, utility statements) is refused before it
**      runs;
**   4. the role: a superuser (or a member of one) is refused unless
**      ASKDB_ALLOW_SUPERUSER=1, since a superuser reaches COPY ... TO
**      PROGRAM and the server's files, which no read-only transaction
**      stops; a role that can write gets a warning on stderr at connect;
**   5. the clock: the server cancels at statement_timeout, and the client
**      sends a cancel request (PQcancel, from a thread of its own: it
**      waits for the server's answer without a limit) itself shortly
**      after, or at once when db->cancel is set, so a statement never
**      outlives its limit on the server; rows and bytes are capped while
**      rows arrive (libpq's single-row mode) and the rest of the
**      statement is cancelled;
**   6. a call of a function whose effect no ROLLBACK takes back (a WAL
**      message, a transaction ID, a replication slot: denied_fns) is
**      refused before the statement reaches the server; the name alone
**      (a column named txid_current) is not.
** The password of the URL is never part of a message: db->label names the
** database, and libpq's own messages are scrubbed of it (a malformed URL
** can make libpq quote its user part).
**
** Text: askdb asks the server for UTF-8 (client_encoding), which it
** converts to and checks. A database of encoding SQL_ASCII has no
** encoding to convert from: the server checks each byte it sends against
** UTF-8 and fails the statement on one that is not ("invalid byte
** sequence"), so a Latin-1 name or value made the schema and the rows
** unreadable. There askdb asks for the bytes as stored (client_encoding
** SQL_ASCII) and makes them valid UTF-8 itself as they arrive: valid
** UTF-8 stays, each other byte becomes U+FFFD (text_repair()), in names,
** comments, samples, values and messages. The statement is sent as it
** was checked, byte for byte.
*/

#ifdef ASKDB_HAVE_LIBPQ

#include <errno.h>
#include <limits.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <strings.h>

#include "core/buf.h"
#include "core/text.h"

/* Why a running statement was asked to stop. */
enum pg_stop {
    STOP_NONE,
    STOP_TIMEOUT,  /* the time limit passed: cancel sent */
    STOP_CANCEL,   /* db->cancel was set: cancel sent */
    STOP_ENOUGH    /* max_rows or max_bytes reached: cancel sent */
};

/*
** One cancel request, sent by a thread of its own (cancel_main). libpq
** before 17 has no bounded way to send one (no PQcancelPoll(); this one
** is 15): PQcancel() connects to the session's address and waits for the
** server to close that connection, without a limit, so a server that
** takes the connection and never answers (stopped with SIGSTOP: its
** kernel still completes the handshake; a proxy or firewall that holds
** connections) held the statement's thread there for good, past the
** time limit and Ctrl-C alike. The thread owns its PGcancel, a copy
** made for the request, so it needs nothing of the session; the request
** is freed by the last of the thread and the session to let go of it.
** A request that never returns costs one parked thread, never the
** user's wait: pg_wait() gives up on it after CANCEL_GRACE_MS.
**
** Those threads are counted by the request's destination (route_take()),
** as askdb serve opens a session per request, and behind a proxy that
** holds cancel requests each statement cut short parked one more, without
** end. Past CANCEL_MAX_OUT unanswered to one destination, no request is
** sent there: the statement's session is given up at once instead
** (p->unsent says why), as it is when a request goes unanswered. The
** count is by destination, not for the process, so that one proxy that
** holds cancels does not take cancel away from the other servers of a
** process (askdb serve or mcp with several databases).
*/
struct cancel_req {
    PGcancel *cancel;       /* the thread's, freed by it */
    atomic_int refs;        /* the thread's and the session's */
    atomic_int done;        /* PQcancel() returned: ok and err are set */
    int route;              /* its slot in routes[] (route_take()) */
    int ok;                 /* it returned 1: the server took it */
    char err[256];          /* else libpq's words */
};

/*
** Cancel requests sent and not yet answered, at most: CANCEL_MAX_OUT to
** one destination, the address and port PQcancel() connects to
** (cancel_dest()), and CANCEL_MAX_ALL in all the process. A
** server answers one in a millisecond or two, so only requests that went
** unanswered add up to these. The bound for the process stays, as each
** request out is a parked thread (CANCEL_STACK) and a socket of the
** process's: a program that opens handles to many destinations that all
** hold cancels (a library user's, not askdb serve's fixed --db list)
** would otherwise park CANCEL_MAX_OUT more for each, without end; 128 is
** four such destinations' worth, 16 MiB of stacks at most. A destination
** takes a slot of routes[] while it has requests out, so CANCEL_ROUTES
** such destinations at once at most; routes_mu guards them, taken by a
** stop and by a request's thread as it ends, never while waiting.
*/
#define CANCEL_MAX_OUT 32
#define CANCEL_MAX_ALL 128
#define CANCEL_ROUTES 16
/* A destination's key, "ADDRESS port PORT" (cancel_dest()): room for the
** longest a session can have (a socket path of 107 bytes at most). */
#define CANCEL_DEST 128

struct cancel_route {
    char dest[CANCEL_DEST]; /* its key; the slot is free when out is 0 */
    int out;                /* its requests not yet answered */
};
static pthread_mutex_t routes_mu = PTHREAD_MUTEX_INITIALIZER;
static struct cancel_route routes[CANCEL_ROUTES];
static int cancels_all;     /* the sum of routes[].out */

struct pg {
    PGconn *conn;
    struct cancel_req *req; /* the cancel request not yet answered, or
                               NULL (cancel_pending) */
    double started;         /* when the statement was sent, db_now_ms() */
    double deadline;        /* client-side limit, ms on db_now_ms() */
    double stop_at;         /* when the cancel request went out */
    enum pg_stop stop;
    char gone[96];          /* why the cancel request found no server
                               (send_cancel), "" when it did */
    char unsent[320];       /* why no cancel request was sent (too many
                               unanswered), "" when one was */
    int lost;               /* the connection broke: reset before use */
    int ran_out;            /* pg_query()'s last statement ran out of
                               time (a cancel may still be on its way) */
    int raw;                /* SQL_ASCII: bytes as stored, repaired */
    int ambiguous;          /* db_url_ambiguous(): quote no libpq message
                               of a connection */
    /* A cancel the server left unanswered: what its session waited on
    ** (pg_stat_activity), seen from a second connection. */
    int stuck;              /* 1: seen (wait_type may be empty) */
    int stuck_ended;        /* pg_terminate_backend() was accepted */
    char wait_type[32], wait_event[64];
    const char *sent;       /* the statement being run (pg_arm), while it
                               runs: stuck_session() knows its session by
                               it */
    char *pw_raw;           /* the password as written in the URL */
    char *pw;               /* the password libpq would send, decoded */
    PQconninfoOption *settings; /* the first connection's (pg_open), for
                               every reconnect: one made to an entry of
                               a host list holds that entry alone */
};

static struct pg *PG(askdb_db *db)
{
    return db->impl;
}

/* snprintf() for messages that may be cut short: a message is built from
** the server's text, whose length the compiler cannot know. */
static void say(char *out, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

/* How long after the time limit the client cancels a statement itself
** (the server's statement_timeout normally comes first), and how long a
** cancelled statement, or a cancel request, may take to end before the
** connection is given up. */
#define CLIENT_GRACE_MS 250
#define CANCEL_GRACE_MS 3000
/* How often the wait loop looks at db->cancel; and, while a cancel
** request is out, at its answer (a live server's comes in a millisecond
** or two). */
#define POLL_SLICE_MS 50
#define CANCEL_SLICE_MS 5
/* The stack of a cancel request's thread (PQcancel() needs little). */
#define CANCEL_STACK (128 * 1024)
/* How long stuck_session() may take, its connection and query together. */
#define STUCK_LOOK_MS 3000
/* Schema sampling waits this long at most for a table another session
** has locked; the table then goes without samples. */
#define SAMPLE_LOCK_MS 200
#define SAMPLE_ROWS 200

/* ---------------------------------------------------------------------- */
/* Messages                                                               */
/* ---------------------------------------------------------------------- */

/*
** Overwrite with as many 'x' (the length stays) each occurrence of secret
** in s that stands where libpq quotes a password: as a whole quoted token
** ("invalid percent-encoded token: \"...\"") or as a value of the URL it
** echoes (":secret@", "=secret&"). The server never sends a password
** back, so it can be nowhere else; overwriting it everywhere garbled the
** text around it ("paxxword authentication failed" for the password
** "ss", "xxxxxxxxxx to server" for "connection").
*/
static void scrub(char *s, const char *secret)
{
    size_t n;
    char *p = s, after;

    if (!secret || !*secret)
        return;
    n = strlen(secret);
    while ((p = strstr(p, secret)) != NULL) {
        after = p[n];
        if (p > s && strchr("\":=", p[-1]) &&
            (after == '\0' || strchr("\"@&", after)))
            memset(p, 'x', n);
        p++;
    }
}

/*
** Copy a libpq message into out (size n) as one line of valid UTF-8:
** newlines and tabs become blanks, a trailing newline goes, and the
** password is scrubbed - in the bytes as libpq wrote them, before any is
** repaired (a password with a byte that is not UTF-8 would no longer
** match once that byte is U+FFFD) - and out is cut on a whole character.
*/
static void one_line(const struct pg *p, const char *msg, char *out,
                     size_t n)
{
    char *c, *raw = strdup(msg ? msg : "");
    size_t len;
    struct buf b;

    if (!n)
        return;
    out[0] = '\0';
    if (!raw)
        return;
    if (p) {
        scrub(raw, p->pw_raw);
        scrub(raw, p->pw);
    }
    /* A SQL_ASCII server quotes the statement's or the data's bytes. */
    buf_init(&b, 0);
    text_put(&b, raw, strlen(raw), 0);
    free(raw);
    if (b.data && !buf_err(&b)) {
        len = text_cut(b.data, b.len, n - 1);
        memcpy(out, b.data, len);
        out[len] = '\0';
    }
    buf_free(&b);
    for (c = out; *c; c++)
        if (*c == '\n' || *c == '\t' || *c == '\r')
            *c = ' ';
    len = strlen(out);
    while (len && out[len - 1] == ' ')
        out[--len] = '\0';
}

/*
** The URL as libpq is to read it: the scheme in lower case (libpq knows
** it so only), and every '@' of the user part but the last written %40.
** askdb's label (db_redact) and the MariaDB driver end the user part at
** its last '@', so that a password holding an unencoded '@' works; libpq
** ends it at the first, and would read the rest of the password as the
** host and quote it in its message. malloc()ed; NULL when out of memory.
*/
static char *libpq_url(const char *path)
{
    struct buf b;
    size_t k = db_url_scheme(path), i;
    const char *p = path + k + 3, *end, *last = NULL, *q;

    buf_init(&b, 0);
    for (i = 0; i < k; i++)
        buf_putc(&b, path[i] >= 'A' && path[i] <= 'Z'
                         ? (char)(path[i] - 'A' + 'a') : path[i]);
    buf_puts(&b, "://");
    end = p + strcspn(p, "/?");
    for (q = p; q < end; q++)
        if (*q == '@')
            last = q;
    for (q = p; q < end; q++) {
        if (*q == '@' && q != last)
            buf_puts(&b, "%40");
        else
            buf_putc(&b, *q);
    }
    buf_puts(&b, end);
    return buf_steal(&b);
}

/*
** The password of a URL as written ("pa%20ss" of "u:pa%20ss@h"), and of
** its password= parameter: malloc()ed, NULL when there is none. libpq
** decodes it; both forms are scrubbed from messages.
*/
static char *raw_password(const char *url)
{
    size_t k = db_url_scheme(url);
    const char *p, *end, *at = NULL, *colon, *q;

    if (!k)
        return NULL;
    p = url + k + 3;
    end = p + strcspn(p, "/?");
    for (q = p; q < end; q++)
        if (*q == '@')
            at = q;
    if (at) {
        colon = memchr(p, ':', (size_t)(at - p));
        if (colon && colon + 1 < at)
            return strndup(colon + 1, (size_t)(at - colon - 1));
    }
    q = strchr(end, '?');
    while (q) {
        q++;
        if (strncasecmp(q, "password=", 9) == 0 && q[9] && q[9] != '&')
            return strndup(q + 9, strcspn(q + 9, "&#"));
        q = strchr(q, '&');
    }
    return NULL;
}

/* The password libpq takes from conninfo (URL, parameter), or NULL. */
static char *parsed_password(const char *conninfo)
{
    PQconninfoOption *o, *opts;
    char *pw = NULL, *err = NULL;

    opts = PQconninfoParse(conninfo, &err);
    PQfreemem(err); /* may quote the URL: never shown */
    if (!opts)
        return NULL;
    for (o = opts; o->keyword; o++)
        if (strcmp(o->keyword, "password") == 0 && o->val && *o->val)
            pw = strdup(o->val);
    PQconninfoFree(opts);
    return pw;
}

/* What to do about a failed connection, from libpq's message. */
static const char *connect_advice(const char *m)
{
    if (strstr(m, "password authentication failed") ||
        strstr(m, "no password supplied") ||
        strstr(m, "password is required"))
        return "check the user name and the password (in the URL, "
               "PGPASSWORD or ~/.pgpass)";
    if (strstr(m, "server does not support SSL"))
        return "the server does not offer TLS: enable ssl on the server, or "
               "use sslmode=prefer (or disable) in the URL only on a "
               "network you trust";
    if (strstr(m, "SSL") || strstr(m, "certificate"))
        return "check the TLS settings of the URL (sslmode, sslrootcert) "
               "against the server's certificate";
    if (strstr(m, "Connection refused") ||
        strstr(m, "No such file or directory"))
        return "is the server running and listening there? check the "
               "host and port in the URL (or PGHOST and PGPORT)";
    if (strstr(m, "could not translate host name"))
        return "check the host name in the URL";
    if (strstr(m, "timeout expired") || strstr(m, "timed out"))
        return "the server did not answer in time (connect_timeout): check "
               "the host, the port and any firewall between";
    if (strstr(m, "no pg_hba.conf entry"))
        return "the server's pg_hba.conf does not let this user connect "
               "from here to that database: ask its administrator";
    if (strstr(m, "database") && strstr(m, "does not exist"))
        return "check the database name in the URL's path";
    if (strstr(m, "role") && strstr(m, "does not exist"))
        return "check the user name in the URL (or PGUSER)";
    if (strstr(m, "invalid") || strstr(m, "missing"))
        return "check the URL's form: postgresql://user@host:port/dbname"
               "?param=value";
    return "check the URL, and that the server runs and accepts this user";
}

/* ---------------------------------------------------------------------- */
/* Waiting for the server                                                 */
/* ---------------------------------------------------------------------- */

static void drop_notice(void *arg, const char *message);

/* Let go of a cancel request: the last of its two holders frees it. */
static void cancel_release(struct cancel_req *q)
{
    if (q && atomic_fetch_sub(&q->refs, 1) == 1) {
        PQfreeCancel(q->cancel);
        free(q);
    }
}

/*
** Count one request more out to dest (route_take()): its slot in routes[],
** or -1 when none may be sent, with why in why (askdb's words, for
** p->unsent).
*/
static int route_take(const char *dest, char *why, size_t wn)
{
    int i, slot = -1, spare = -1, busy = 0;

    pthread_mutex_lock(&routes_mu);
    for (i = 0; i < CANCEL_ROUTES; i++) {
        if (routes[i].out == 0) {
            if (spare < 0)
                spare = i;
            continue;
        }
        busy++;
        if (strcmp(routes[i].dest, dest) == 0)
            slot = i;
    }
    if (slot >= 0 && routes[slot].out >= CANCEL_MAX_OUT) {
        say(why, wn, "askdb sent no cancel request: %d it sent earlier to "
            "%s are still unanswered (a server or proxy that holds cancel "
            "requests?)", CANCEL_MAX_OUT, dest);
        slot = -1;
    } else if (cancels_all >= CANCEL_MAX_ALL || (slot < 0 && spare < 0)) {
        say(why, wn, "askdb sent no cancel request: %d it sent earlier, to "
            "%d servers, are still unanswered (servers or proxies that "
            "hold cancel requests?)", cancels_all, busy);
        slot = -1;
    } else {
        if (slot < 0) {
            slot = spare;
            say(routes[slot].dest, sizeof routes[slot].dest, "%s", dest);
        }
        routes[slot].out++;
        cancels_all++;
    }
    pthread_mutex_unlock(&routes_mu);
    return slot;
}

/* A request to routes[slot] answered, or never sent. */
static void route_give(int slot)
{
    pthread_mutex_lock(&routes_mu);
    routes[slot].out--;
    cancels_all--;
    pthread_mutex_unlock(&routes_mu);
}

/* The request's thread: send it, wait for the server's answer (without a
** limit), say how it went, let go. */
static void *cancel_main(void *arg)
{
    struct cancel_req *q = arg;

    q->ok = PQcancel(q->cancel, q->err, (int)sizeof q->err);
    route_give(q->route);
    PQfreeCancel(q->cancel);
    q->cancel = NULL;
    atomic_store(&q->done, 1);
    cancel_release(q);
    return NULL;
}

/*
** The key of the destination of conn's cancel requests, into dest (size
** CANCEL_DEST): where PQcancel() connects, the address the session
** itself is connected to, as text (PQhostaddr()), and the port, as
** "127.0.0.1 port 5432". Not the host name, as it was: one server
** reached under two names (localhost and 127.0.0.1) had a cap for each,
** and a name with several addresses (several A records, or hostaddr)
** one cap for all of them, so that a proxy at one of them that held
** cancel requests took cancel away from the servers at the others. A
** Unix socket has no address: its directory stands for it (PQhost()),
** a server's socket being that directory and the port. The port is the
** number libpq read ("05432" is 5432); one not given, libpq's default,
** stays as libpq reports it. The key is never cut short: an address is
** at most 45 characters, and libpq refuses a socket path (directory and
** port) longer than 107 bytes. Should libpq report no address for a TCP
** session (it keeps it in memory it allocates), the host name stands
** in, as before; a long one cut short shares its cap with the names it
** starts like, as two IPv6 link-local addresses do that differ only by
** interface (the address's text names none): stricter caps for them,
** never looser.
*/
static void cancel_dest(PGconn *conn, char *dest)
{
    const char *addr = PQhostaddr(conn), *port = PQport(conn);
    long n = port ? strtol(port, NULL, 10) : 0;

    if (!addr || !*addr)
        addr = PQhost(conn);
    if (!addr)
        addr = "";
    if (n > 0)
        say(dest, CANCEL_DEST, "%s port %ld", addr, n);
    else
        say(dest, CANCEL_DEST, "%s port %s", addr, port ? port : "");
}

/*
** Send a cancel request for conn's running statement from a thread of
** its own (detached; every signal blocked there: Ctrl-C is the
** statement's thread's). When no thread can start it is sent from here,
** as before, and may wait. Returns the request, held by the caller
** (cancel_release()), or NULL when none could be made (out of memory, a
** connection libpq knows no cancel key for) or may be: unsent (size n)
** then says why, too many requests being unanswered (route_take()).
*/
static struct cancel_req *cancel_start(PGconn *conn, char *unsent, size_t n)
{
    struct cancel_req *q;
    pthread_attr_t at;
    pthread_t th;
    sigset_t all, old;
    char dest[CANCEL_DEST];
    int started = 0, slot;

    cancel_dest(conn, dest);
    slot = route_take(dest, unsent, n);
    if (slot < 0)
        return NULL;
    q = calloc(1, sizeof *q);
    if (q)
        q->cancel = PQgetCancel(conn);
    if (!q || !q->cancel) {
        route_give(slot);
        free(q);
        return NULL;
    }
    q->route = slot;
    atomic_init(&q->refs, 2);
    atomic_init(&q->done, 0);
    if (pthread_attr_init(&at) == 0) {
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, CANCEL_STACK);
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        started = pthread_create(&th, &at, cancel_main, q) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&at);
    }
    if (!started)
        cancel_main(q);
    return q;
}

/*
** Ask the server to cancel the running statement (a second connection,
** to the address of the session's), from a thread of its own:
** cancel_pending() reads its answer. When too many requests are out
** unanswered, none is sent and p->unsent says so: the caller gives the
** session up (p->lost) rather than wait on a statement nothing stops.
*/
static void send_cancel(struct pg *p, enum pg_stop why)
{
    p->stop = why;
    p->stop_at = db_now_ms();
    cancel_release(p->req);
    p->req = cancel_start(p->conn, p->unsent, sizeof p->unsent);
}

/*
** Is the statement's cancel request still out, unanswered? Once it is
** answered, it is let go of, and what it found is noted. A request that
** cannot even connect found no server there: it stopped, or its host or
** the network to it went away, and the statement with it - though the
** session's own socket may say nothing of it for minutes (a host that is
** gone sends no FIN). p->gone then says why, and pg_wait() reports the
** connection lost at once. Any other failure shows up as the statement
** not ending: CANCEL_GRACE_MS then gives up on it; as it does on a
** request that gets no answer at all.
*/
static int cancel_pending(struct pg *p)
{
    static const char failed[] = "connect() failed: ";
    struct cancel_req *q = p->req;
    const char *c;
    long no;

    if (!q)
        return 0;
    if (!atomic_load(&q->done))
        return 1;
    p->req = NULL;
    /* libpq's words, never translated: "PQcancel() -- connect() failed:
    ** error 111" (the errno: PQcancel() is safe in a signal handler, so
    ** it calls neither gettext nor strerror). */
    c = q->ok ? NULL : strstr(q->err, failed);
    if (c) {
        c += sizeof failed - 1;
        no = strncmp(c, "error ", 6) == 0 ? strtol(c + 6, NULL, 10) : 0;
        one_line(p, no > 0 && no < INT_MAX ? strerror((int)no) : c,
                 p->gone, sizeof p->gone);
        if (!*p->gone) /* what pg_wait() looks at */
            say(p->gone, sizeof p->gone, "connect() failed");
    }
    cancel_release(q);
    return 0;
}

/* Arm the client-side clock for the statement sql, about to be sent
** (timeout_ms <= 0: no limit). */
static void pg_arm(struct pg *p, const char *sql, int timeout_ms)
{
    p->sent = sql;
    p->stop = STOP_NONE;
    cancel_release(p->req); /* left out by pg_wait(): p->lost is set */
    p->req = NULL;
    p->gone[0] = '\0';
    p->unsent[0] = '\0';
    p->stuck = 0;
    p->started = db_now_ms();
    p->deadline = timeout_ms > 0 ? p->started + timeout_ms + CLIENT_GRACE_MS
                                 : 0;
}

/* Wait until fd is ready for events, the time is deadline (on
** db_now_ms()'s clock) or cancel (may be NULL) is set, which is looked at
** every POLL_SLICE_MS and at once after a signal. 1 when fd is ready, -1
** when cancelled, else 0. */
static int ready_by(int fd, short events, double deadline,
                    const atomic_int *cancel)
{
    struct pollfd pfd;
    double left;
    int k;

    for (;;) {
        if (cancel && atomic_load(cancel))
            return -1;
        left = deadline - db_now_ms();
        if (fd < 0 || left <= 0)
            return 0;
        if (cancel && left > POLL_SLICE_MS)
            left = POLL_SLICE_MS;
        pfd.fd = fd;
        pfd.events = events;
        pfd.revents = 0;
        k = poll(&pfd, 1, (int)left + 1);
        if (k > 0)
            return 1;
        if (k < 0 && errno != EINTR)
            return 0;
    }
}

/* How a nonblocking connect ended (connect_poll()). */
enum pg_connect_end {
    CONNECT_MADE,
    CONNECT_MISSED,    /* no server took part (refused, unreachable, a
                          name not found), or libpq turned down the one
                          it reached for target_session_attrs: a host
                          list's next host is tried. PQerrorMessage()
                          says why */
    CONNECT_FAILED,    /* the server broke off or refused (TLS, the
                          login, the database): libpq tries no other
                          host. PQerrorMessage() says why */
    CONNECT_LATE,      /* the deadline passed first */
    CONNECT_CANCELLED  /* the cancel flag was set first */
};

/*
** Carry c, started with PQconnectStartParams(), through PQconnectPoll()
** until it is made or fails, the time is deadline or cancel (may be NULL)
** is set. libpq's connect_timeout bounds only its blocking connect, and
** in whole seconds: here deadline alone does. PQsocket() is read again
** before each wait, as libpq closes a socket and opens another when it
** moves to the name's next address.
**
** A failure is told apart as libpq's own connect to several hosts tells
** it (PQconnectPoll() moves on to the next host, or ends): from the
** state c was in before the call that failed. One that no server took
** part in (the TCP connect, the name, a socket that is not there) came
** before or while connecting; one where the server answered came later,
** but for libpq's check of target_session_attrs (tsa, "any" when none),
** made once the server has told its settings: a server that sent its
** server_version got through its start, and a failure after that with
** a target set is libpq turning it down.
*/
static enum pg_connect_end connect_poll(PGconn *c, double deadline,
                                        const atomic_int *cancel,
                                        const char *tsa)
{
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    ConnStatusType seen = CONNECTION_NEEDED;
    int k;

    while (PQstatus(c) != CONNECTION_BAD && st != PGRES_POLLING_FAILED) {
        if (st == PGRES_POLLING_OK)
            return CONNECT_MADE;
        k = ready_by(PQsocket(c),
                     st == PGRES_POLLING_READING ? POLLIN : POLLOUT,
                     deadline, cancel);
        if (k < 0)
            return CONNECT_CANCELLED;
        if (k == 0)
            return CONNECT_LATE;
        seen = PQstatus(c);
        st = PQconnectPoll(c);
    }
    if (seen == CONNECTION_NEEDED || seen == CONNECTION_STARTED)
        return CONNECT_MISSED;
    if (tsa && strcmp(tsa, "any") != 0 &&
        PQparameterStatus(c, "server_version"))
        return CONNECT_MISSED;
    return CONNECT_FAILED;
}

/* A connection made by deadline (connect_poll()), nonblocking (for
** query_by()), or NULL. */
static PGconn *connect_by(const char *const *keys, const char *const *vals,
                          double deadline)
{
    PGconn *c = PQconnectStartParams(keys, vals, 0);

    if (c && connect_poll(c, deadline, NULL, NULL) == CONNECT_MADE &&
        PQsetnonblocking(c, 1) == 0)
        return c;
    PQfinish(c);
    return NULL;
}

/* PQexecParams() that gives up at deadline, on c, nonblocking
** (connect_by()): what libpq could not send yet goes out here by the
** deadline too, where libpq's blocking mode waited for the server to read
** it without a limit. The last result (the caller PQclear()s it), or
** NULL. */
static PGresult *query_by(PGconn *c, const char *sql, int n,
                          const char *const *params, double deadline)
{
    PGresult *r, *last = NULL;
    int unsent;

    if (!PQsendQueryParams(c, sql, n, NULL, params, NULL, NULL, 0))
        return NULL;
    for (;;) {
        while (PQisBusy(c)) {
            unsent = PQflush(c);
            if (unsent < 0 ||
                ready_by(PQsocket(c), unsent ? POLLIN | POLLOUT : POLLIN,
                         deadline, NULL) <= 0 ||
                !PQconsumeInput(c)) {
                PQclear(last);
                return NULL;
            }
        }
        r = PQgetResult(c);
        if (!r)
            return last;
        PQclear(last);
        last = r;
    }
}

/*
** The server runs but did not end a statement askdb cancelled: its
** session waits where a cancel does not reach (postgres_fdw or dblink
** waiting on a foreign server that hangs: PostgreSQL waits for the
** remote's answer to its own cancel, up to 30 s, before it ends the
** statement). Look at that session from a second connection with the
** same settings, note what it waits on (p->stuck, wait_type,
** wait_event) and ask the server to end it (the role may end its own
** sessions), so that it does not go on after askdb has given up on it.
** When no second connection can be made (the server is gone), or it
** does not answer within STUCK_LOOK_MS, nothing is noted: the connection
** is lost.
*/
static void stuck_session(struct pg *p)
{
    /* The second connection goes to the server the first one reached,
    ** not to the URL's list of hosts, which may hold others. */
    static const char *const pinned[] = {"host", "hostaddr", "port",
                                         "load_balance_hosts",
                                         "target_session_attrs", NULL};
    PQconninfoOption *opts, *o;
    const char *keys[64], *vals[64], *params[2], *const *k, *v;
    char pid[16];
    double deadline = db_now_ms() + STUCK_LOOK_MS;
    PGconn *c;
    PGresult *r;
    int i = 0;

    if (!p->sent)
        return;
    opts = PQconninfo(p->conn);
    if (!opts)
        return;
    for (o = opts; o->keyword && i < 58; o++) {
        for (k = pinned; *k && strcmp(o->keyword, *k) != 0; k++)
            ;
        if (*k || !o->val || !*o->val)
            continue;
        keys[i] = o->keyword;
        vals[i++] = o->val;
    }
    if ((v = PQhost(p->conn)) != NULL && *v) {
        keys[i] = "host";
        vals[i++] = v;
    }
    if ((v = PQhostaddr(p->conn)) != NULL && *v) {
        keys[i] = "hostaddr";
        vals[i++] = v;
    }
    if ((v = PQport(p->conn)) != NULL && *v) {
        keys[i] = "port";
        vals[i++] = v;
    }
    keys[i] = NULL;
    vals[i] = NULL;
    c = connect_by(keys, vals, deadline);
    PQconninfoFree(opts);
    if (!c)
        return;
    (void)PQsetNoticeProcessor(c, drop_notice, NULL);
    /* The session is the one of that process id running this very
    ** statement (its text, as far as the server keeps it): behind a
    ** connection pooler the id may be another session's. */
    snprintf(pid, sizeof pid, "%d", PQbackendPID(p->conn));
    params[0] = pid;
    params[1] = p->sent;
    r = query_by(c,
                 "SELECT coalesce(wait_event_type, ''), "
                 "  coalesce(wait_event, ''), "
                 "  pg_terminate_backend(pid) "
                 "FROM pg_stat_activity WHERE pid = $1::int "
                 "AND query <> '' "
                 "AND left($2::text, length(query)) = query",
                 2, params, deadline);
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        p->stuck = 1;
        snprintf(p->wait_type, sizeof p->wait_type, "%s",
                 PQgetvalue(r, 0, 0));
        snprintf(p->wait_event, sizeof p->wait_event, "%s",
                 PQgetvalue(r, 0, 1));
        p->stuck_ended = PQgetvalue(r, 0, 2)[0] == 't';
    }
    PQclear(r);
    PQfinish(c);
}

/*
** Wait until libpq holds a whole result (PQgetResult will not block),
** cancelling the statement on the server at the deadline or when
** db->cancel is set, and until the server answered the cancel request,
** if one went out (so that it lands on nothing askdb sends next).
** Returns 0, or -1 when the connection broke, or the server did not end
** a cancelled statement in time, or did not answer the request (p->lost
** is set then and msg says which). A statement that ended while the
** request got no answer keeps its result; p->lost is set, so that the
** session, which the request may yet reach, is made anew before the
** next statement.
**
** The session is nonblocking (pg_setup()): what of the command libpq
** could not send yet, as the server reads no more (a host gone without a
** word), is sent here as room comes, under the same clock and cancel
** flag as the answer; libpq's blocking mode waited for that room without
** a limit, deaf to a Ctrl-C, before the call that sent it returned.
*/
static int pg_wait(askdb_db *db, struct pg *p, char *msg, size_t n)
{
    struct pollfd pfd;
    double now;
    int fd = PQsocket(p->conn), busy, pending, unsent;

    for (;;) {
        unsent = PQflush(p->conn);
        if (unsent < 0) {
            one_line(p, PQerrorMessage(p->conn), msg, n);
            p->lost = 1;
            return -1;
        }
        busy = PQisBusy(p->conn);
        pending = cancel_pending(p);
        if (*p->gone) {
            say(msg, n, "askdb's cancel request found no server at the "
                "session's address: %s", p->gone);
            p->lost = 1;
            return -1;
        }
        if (*p->unsent) {
            say(msg, n, "%s", p->unsent);
            p->lost = 1;
            return -1;
        }
        if (!busy && !pending)
            return 0;
        now = db_now_ms();
        if (p->stop == STOP_NONE) {
            if (db->cancel && atomic_load(db->cancel))
                send_cancel(p, STOP_CANCEL);
            else if (p->deadline > 0 && now >= p->deadline)
                send_cancel(p, STOP_TIMEOUT);
        } else if (now - p->stop_at > CANCEL_GRACE_MS && pending) {
            p->lost = 1;
            if (!busy)
                return 0;
            snprintf(msg, n, "the server did not answer askdb's cancel "
                     "request within %d ms", CANCEL_GRACE_MS);
            return -1;
        } else if (now - p->stop_at > CANCEL_GRACE_MS) {
            stuck_session(p);
            snprintf(msg, n,
                     "the server did not end the statement within %d ms of "
                     "a cancel request; the connection to '%s' was closed",
                     CANCEL_GRACE_MS, db->label);
            p->lost = 1;
            return -1;
        }
        if (fd < 0) {
            p->lost = 1;
            one_line(p, PQerrorMessage(p->conn), msg, n);
            return -1;
        }
        pfd.fd = fd;
        pfd.events = unsent ? POLLIN | POLLOUT : POLLIN;
        pfd.revents = 0;
        if (poll(&pfd, 1, p->req ? CANCEL_SLICE_MS : POLL_SLICE_MS) < 0 &&
            errno != EINTR) {
            snprintf(msg, n, "waiting for the server: %s", strerror(errno));
            p->lost = 1;
            return -1;
        }
        if (!PQconsumeInput(p->conn)) {
            one_line(p, PQerrorMessage(p->conn), msg, n);
            p->lost = 1;
            return -1;
        }
    }
}

/*
** Read every result of the command just sent and return the one that
** counts: the first error, else the last result (the caller PQclear()s
** it). NULL when the connection broke (message in msg).
*/
static PGresult *pg_collect(askdb_db *db, struct pg *p, char *msg, size_t n)
{
    PGresult *keep = NULL, *r;

    for (;;) {
        if (pg_wait(db, p, msg, n) < 0) {
            PQclear(keep);
            return NULL;
        }
        r = PQgetResult(p->conn);
        if (!r)
            break;
        /* The first error is the one that explains the others. */
        if (keep && PQresultStatus(keep) == PGRES_FATAL_ERROR) {
            PQclear(r);
            continue;
        }
        PQclear(keep);
        keep = r;
    }
    if (!keep) {
        one_line(p, PQerrorMessage(p->conn), msg, n);
        if (!*msg)
            snprintf(msg, n, "no answer from the server");
        if (PQstatus(p->conn) == CONNECTION_BAD)
            p->lost = 1;
    } else if (p->lost) {
        /* The command ended while askdb's cancel request went unanswered
        ** (pg_wait()): the request may yet reach whatever is sent next on
        ** this session, so the operation ends here, and nothing more is
        ** sent (the statement's own rows, read by their own loop, are
        ** the one result kept in that case). */
        PQclear(keep);
        keep = NULL;
        snprintf(msg, n, "the server did not answer askdb's cancel "
                 "request within %d ms", CANCEL_GRACE_MS);
    }
    return keep;
}

/*
** Run one of askdb's own commands (simple protocol: it may hold several
** statements) with the time limit; 0 when it succeeded, else -1 with the
** server's message in msg.
*/
static int pg_command(askdb_db *db, struct pg *p, const char *sql,
                      int timeout_ms, char *msg, size_t n)
{
    PGresult *r;
    ExecStatusType st;

    pg_arm(p, sql, timeout_ms);
    if (!PQsendQuery(p->conn, sql)) {
        one_line(p, PQerrorMessage(p->conn), msg, n);
        if (PQstatus(p->conn) == CONNECTION_BAD)
            p->lost = 1;
        return -1;
    }
    r = pg_collect(db, p, msg, n);
    if (!r)
        return -1;
    st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        one_line(p, PQresultErrorMessage(r), msg, n);
        PQclear(r);
        return -1;
    }
    PQclear(r);
    return 0;
}

/* Run one of askdb's own queries; the rows, or NULL with msg set. */
static PGresult *pg_query(askdb_db *db, struct pg *p, const char *sql,
                          int nparams, const char *const *params,
                          char *msg, size_t n)
{
    PGresult *r;

    pg_arm(p, sql, db->query_timeout_ms);
    if (!PQsendQueryParams(p->conn, sql, nparams, NULL, params, NULL, NULL,
                           0)) {
        one_line(p, PQerrorMessage(p->conn), msg, n);
        if (PQstatus(p->conn) == CONNECTION_BAD)
            p->lost = 1;
        return NULL;
    }
    r = pg_collect(db, p, msg, n);
    p->ran_out = p->stop == STOP_TIMEOUT;
    if (r && PQresultStatus(r) != PGRES_TUPLES_OK) {
        const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

        p->ran_out |= state && strcmp(state, "57014") == 0 &&
                      p->stop != STOP_CANCEL;
        one_line(p, PQresultErrorMessage(r), msg, n);
        PQclear(r);
        return NULL;
    }
    return r;
}

/*
** End the statement's transaction. A cancel request that reached the
** server after the statement ended may interrupt the ROLLBACK itself;
** then it is sent again, until the session is idle. Advisory locks taken
** with pg_advisory_lock() are the one thing a read-only statement leaves
** in the session past its ROLLBACK: they go too.
*/
static void pg_rollback(askdb_db *db, struct pg *p)
{
    char msg[256];
    int i;

    for (i = 0; i < 3 && !p->lost; i++) {
        if (PQtransactionStatus(p->conn) == PQTRANS_IDLE)
            return;
        (void)pg_command(db, p,
                         "ROLLBACK; SELECT pg_advisory_unlock_all()",
                         db->query_timeout_ms, msg, sizeof msg);
    }
    if (!p->lost && PQtransactionStatus(p->conn) != PQTRANS_IDLE)
        p->lost = 1; /* start afresh rather than run in a stray transaction */
}

/* ---------------------------------------------------------------------- */
/* Connecting                                                             */
/* ---------------------------------------------------------------------- */

/*
** The session's settings: read-only by default, the time limits, and
** output formats askdb reads (UTF-8, or the bytes as stored in a
** SQL_ASCII database; ISO dates; shortest exact floats).
** statement_timeout is the limit itself; a lock wait ends at half of it,
** so that a lock held by another session is named as the cause;
** idle_in_transaction_session_timeout ends a session that askdb left in
** a transaction (it always rolls back at once, so only a client that died
** mid-statement gets there).
*/
static int pg_session(askdb_db *db, struct pg *p, char *msg, size_t n)
{
    char sql[640];
    int t = db->query_timeout_ms;
    int lock = t / 2 > 0 ? t / 2 : 1;

    snprintf(sql, sizeof sql,
             "SET default_transaction_read_only = on; "
             "SET statement_timeout = %d; "
             "SET lock_timeout = %d; "
             "SET idle_in_transaction_session_timeout = %d; "
             "SET client_encoding = '%s'; "
             "SET DateStyle = 'ISO'; "
             "SET IntervalStyle = 'postgres'; "
             "SET extra_float_digits = 1; "
             /* A server set otherwise reads '\' in a literal as an escape,
             ** where the guard, the checks and the fixes read SQL's. */
             "SET standard_conforming_strings = on",
             t, lock, t + 10000, p->raw ? "SQL_ASCII" : "UTF8");
    return pg_command(db, p, sql, t, msg, n);
}

/* The schemas askdb reads beside those of the search path (pg_namespace
** row n): every one the role may use, but the system's. */
#define OTHER_NSP(n)                                                         \
    "(" n ".nspname NOT IN ('pg_catalog', 'information_schema') "            \
    "AND " n ".nspname !~ '^pg_(toast|temp_)' "                              \
    "AND has_schema_privilege(" n ".oid, 'USAGE'))"

/* Privileges of the session's role that the guard cares about, over the
** schemas askdb reads. */
static const char role_sql[] =
    "SELECT current_user, r.rolsuper, "
    "  EXISTS (SELECT 1 FROM pg_roles s WHERE s.rolsuper "
    "          AND s.oid <> r.oid AND pg_has_role(r.oid, s.oid, 'MEMBER')), "
    "  EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n "
    "            ON n.oid = c.relnamespace "
    "          WHERE (n.nspname = ANY (current_schemas(false)) "
    "                 OR " OTHER_NSP("n") ") "
    "          AND c.relkind IN ('r', 'p', 'v', 'm', 'f') "
    "          AND has_table_privilege(c.oid, "
    "                'INSERT, UPDATE, DELETE, TRUNCATE')), "
    "  EXISTS (SELECT 1 FROM unnest(current_schemas(false)) s(name) "
    "          WHERE s.name <> 'pg_catalog' "
    "          AND has_schema_privilege(s.name, 'CREATE')) "
    "  OR EXISTS (SELECT 1 FROM pg_namespace n WHERE " OTHER_NSP("n")
    "             AND has_schema_privilege(n.oid, 'CREATE')) "
    "  OR has_database_privilege(current_database(), 'CREATE'), "
    "  pg_has_role(r.oid, 'pg_read_server_files', 'MEMBER') "
    "  OR pg_has_role(r.oid, 'pg_write_server_files', 'MEMBER') "
    "  OR pg_has_role(r.oid, 'pg_execute_server_program', 'MEMBER') "
    "FROM pg_roles r WHERE r.rolname = current_user";

static int is_true(const PGresult *r, int col)
{
    return !PQgetisnull(r, 0, col) && PQgetvalue(r, 0, col)[0] == 't';
}

static int allow_superuser(void)
{
    const char *v = getenv("ASKDB_ALLOW_SUPERUSER");

    return v && strcmp(v, "1") == 0;
}

/*
** Check the role: refuse a superuser (or a member of one) unless
** ASKDB_ALLOW_SUPERUSER=1; warn on stderr about one that can write or
** reach the server's files. 0, or -1 with db->errmsg set.
*/
static int pg_check_role(askdb_db *db, struct pg *p, int warn)
{
    char msg[512];
    PGresult *r;
    const char *who;
    int super, via, writes, creates, files;

    r = pg_query(db, p, role_sql, 0, NULL, msg, sizeof msg);
    if (!r || PQntuples(r) != 1) {
        say(db->errmsg, sizeof db->errmsg,
                 "cannot read the privileges of the role on '%s': %s",
                 db->label, r ? "no such role" : msg);
        PQclear(r);
        return -1;
    }
    who = PQgetvalue(r, 0, 0);
    super = is_true(r, 1);
    via = is_true(r, 2);
    writes = is_true(r, 3);
    creates = is_true(r, 4);
    files = is_true(r, 5);
    if ((super || via) && !allow_superuser()) {
        say(db->errmsg, sizeof db->errmsg,
                 "refusing to use '%s': role \"%s\" %s; a superuser can "
                 "reach COPY ... TO PROGRAM and the server's files, which no "
                 "read-only transaction stops. Connect as a role with only "
                 "SELECT privileges, or set ASKDB_ALLOW_SUPERUSER=1 to "
                 "allow it",
                 db->label, who,
                 super ? "is a superuser" : "is a member of a superuser role");
        PQclear(r);
        return -1;
    }
    if (warn && (super || via))
        fprintf(stderr,
                "askdb: warning: role \"%s\" on '%s' is a superuser "
                "(allowed by ASKDB_ALLOW_SUPERUSER=1): askdb keeps each "
                "statement read-only, but a superuser's statement can reach "
                "the server's files and programs\n", who, db->label);
    else if (warn && (writes || creates || files))
        fprintf(stderr,
                "askdb: warning: role \"%s\" on '%s' can %s; askdb keeps "
                "each statement read-only, but a role with only SELECT "
                "privileges is the safer choice\n", who, db->label,
                files ? "read or write the server's files "
                        "(pg_read_server_files, pg_write_server_files or "
                        "pg_execute_server_program)"
                      : writes ? "write (INSERT, UPDATE, DELETE or TRUNCATE "
                                 "on a table)"
                               : "create objects (CREATE on a schema or the "
                                 "database)");
    PQclear(r);
    return 0;
}

/* The settings and the role check of a fresh connection; also the
** version. ASKDB_OK, else ASKDB_ERR_DB_OPEN with db->errmsg set. */
static askdb_status pg_setup(askdb_db *db, struct pg *p, int warn)
{
    char msg[512];
    const char *v;

    p->lost = 0;
    v = PQparameterStatus(p->conn, "server_version");
    snprintf(db->version, sizeof db->version, "%.*s",
             v ? (int)strcspn(v, " ") : 0, v ? v : "");
    v = PQparameterStatus(p->conn, "server_encoding");
    p->raw = v && strcmp(v, "SQL_ASCII") == 0;
    /* Every command is then sent by pg_wait(), which a Ctrl-C and the
    ** time limit reach, not inside libpq's call. */
    if (PQsetnonblocking(p->conn, 1) < 0) {
        one_line(p, PQerrorMessage(p->conn), msg, sizeof msg);
        say(db->errmsg, sizeof db->errmsg,
            "cannot set up a read-only session on '%s': %s", db->label,
            msg);
        return ASKDB_ERR_DB_OPEN;
    }
    if (pg_session(db, p, msg, sizeof msg) < 0) {
        say(db->errmsg, sizeof db->errmsg,
                 "cannot set up a read-only session on '%s': %s", db->label,
                 msg);
        return ASKDB_ERR_DB_OPEN;
    }
    if (pg_check_role(db, p, warn) < 0)
        return ASKDB_ERR_DB_OPEN;
    return ASKDB_OK;
}

/* Notices and warnings of the server (RAISE NOTICE in a function the
** statement calls, ...) are dropped: libpq would print them to stderr as
** they come, control characters and all, past askdb's output. */
static void drop_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* The failed connection's message raw (libpq's words), with what to do,
** into db->errmsg ("cannot WHAT 'label'NOTE: ..."). The advice reads
** libpq's text before the password is masked in it. */
static void connect_error(askdb_db *db, struct pg *p, const char *raw,
                          const char *what, const char *note)
{
    char m[640];

    /* libpq may quote the host, port, database or a parameter, which may
    ** be parts of the password there ("missing key/value separator in
    ** URI query parameter: \"ef@host/db\""). */
    if (p->ambiguous) {
        say(db->errmsg, sizeof db->errmsg, "cannot %s '%s'%s: %s", what,
            db->label, note, DB_AMBIGUOUS_URL);
        return;
    }
    one_line(p, raw, m, sizeof m);
    say(db->errmsg, sizeof db->errmsg, "cannot %s '%s'%s: %s (%s)", what,
             db->label, note, *m ? m : "out of memory", connect_advice(raw));
}

/*
** connect_error() for a walk of a host list (connect_walk()), what being
** "connect to" for the first connect or "reconnect to":
** before, the words of the entries passed over, and last, those of the
** entry that ended the walk, which alone the advice reads (an entry
** passed over, refused, says nothing of a walk ended by a server's
** FATAL). The message goes to a database error, cut at room bytes: the
** words of the entries passed over are cut short ("...") so that the
** deciding entry's and the advice stay whole.
*/
static void walk_error(askdb_db *db, struct pg *p, const char *what,
                       const char *before, const char *last,
                       const char *note, size_t room)
{
    const char *advice = connect_advice(last), *lm;
    char m[640], b[1024];
    size_t len, keep;
    int k;

    if (p->ambiguous) {
        connect_error(db, p, last, what, note);
        return;
    }
    one_line(p, last, m, sizeof m);
    one_line(p, before, b, sizeof b);
    lm = *m ? m : "out of memory";
    /* The message but for b and the blank after it. */
    k = snprintf(NULL, 0, "cannot %s '%s'%s: %s (%s)", what, db->label,
                 note, lm, advice);
    len = strlen(b);
    if (len && k >= 0 && (size_t)k + len + 1 >= room) {
        /* room's last byte is the NUL; "..." and the blank take 4. */
        keep = room > (size_t)k + 5 ? room - (size_t)k - 5 : 0;
        keep = text_cut(b, len, keep);
        memcpy(b + keep, "...", 4);
    }
    say(db->errmsg, sizeof db->errmsg,
        "cannot %s '%s'%s: %s%s%s (%s)", what, db->label, note, b,
        *b ? " " : "", lm, advice);
}

/*
** Is s, a value of connect_timeout, an integer of 0 or less, as libpq
** reads it (decimal, blanks around it)? Its value goes to *v then. One
** that libpq cannot read is for libpq to refuse.
*/
static int no_limit(const char *s, long *v)
{
    char *end;

    if (!s)
        return 0;
    errno = 0;
    *v = strtol(s, &end, 10);
    if (end == s || errno)
        return 0;
    while (*end == ' ' || (*end >= '\t' && *end <= '\r'))
        end++;
    return !*end && *v <= 0 && *v >= INT_MIN;
}

/*
** Refuse a connect_timeout of 0 or less, which libpq takes as no time
** limit at all: the first connect to a server that takes the connection
** and answers none would wait for ever. A limit of 0 is askdb's default
** elsewhere, where it is a setting left unset (db.c), but this one was
** written to mean "wait indefinitely", which askdb does not do: it says
** so (db->errmsg) and returns 1, rather than wait 10 s where the user
** asked for no limit. The value is libpq's: the URL's (PQconninfoParse()),
** else PGCONNECT_TIMEOUT's. A service file's (the URL's service= or
** PGSERVICE) is read by libpq only as it connects, out of askdb's reach:
** askdb's own 10 s, given when PGCONNECT_TIMEOUT is unset, comes before
** it, but beside PGCONNECT_TIMEOUT the file's comes first, so a file's 0
** would still wait for ever, and a file's own limit does not save a
** PGCONNECT_TIMEOUT of 0 from being refused.
*/
static int connect_unbounded(askdb_db *db, const char *url)
{
    PQconninfoOption *opts, *o;
    const char *env = getenv("PGCONNECT_TIMEOUT");
    char *err = NULL;
    long v;
    int in_url = 0, refused = 0;

    opts = PQconninfoParse(url, &err);
    PQfreemem(err); /* may quote the URL; libpq says it again */
    for (o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, "connect_timeout") == 0 && o->val) {
            in_url = 1;
            if (no_limit(o->val, &v)) {
                /* Not its value: in a URL that does not parse as one
                ** (db_url_ambiguous()) it may be part of a password. */
                say(db->errmsg, sizeof db->errmsg, "cannot connect to "
                    "'%s': a connect_timeout of 0 or less in the URL is "
                    "no time limit at all to libpq, which would wait for "
                    "ever for a server that does not answer: give it a "
                    "number of seconds (connect_timeout=10), or leave it "
                    "out for askdb's 10 s", db->label);
                refused = 1;
            }
        }
    PQconninfoFree(opts);
    if (!in_url && no_limit(env, &v)) {
        say(db->errmsg, sizeof db->errmsg, "cannot connect to '%s': "
            "PGCONNECT_TIMEOUT=%ld in the environment is no time limit at "
            "all to libpq, which would wait for ever for a server that "
            "does not answer: set it to a number of seconds "
            "(PGCONNECT_TIMEOUT=10), or unset it for askdb's 10 s", db->label,
            v);
        refused = 1;
    }
    return refused;
}

static void pg_close(askdb_db *db)
{
    struct pg *p = PG(db);

    cancel_release(p->req);
    PQfinish(p->conn);
    PQconninfoFree(p->settings);
    free(p->pw_raw);
    free(p->pw);
    free(p);
    db->impl = NULL;
}

/* A reconnect is given 2 s at least, however short the time limit: as
** libpq does a connect_timeout under 2. So is each entry of a host list
** that the walk reaches once the limit is spent (connect_walk()). */
#define RECONNECT_MIN_MS 2000

/* How a connect or a reconnect ended (connect_walk()). */
enum pg_redo {
    REDO_MADE,      /* p->conn is the new connection */
    REDO_FAILED,    /* none was made (why says why): p->conn is the old
                       one, lost */
    REDO_CANCELLED  /* db->cancel was set first: p->conn is the old one */
};

/* The value of keyword key in the settings s, or NULL. */
static const char *setting(const PQconninfoOption *s, const char *key)
{
    for (; s->keyword; s++)
        if (strcmp(s->keyword, key) == 0)
            return s->val;
    return NULL;
}

/* How many elements a comma-separated list of libpq's holds: one more
** than its commas, as libpq counts them; 0 for none (NULL or ""). */
static int list_len(const char *s)
{
    int n = 1;

    if (!s || !*s)
        return 0;
    for (; *s; s++)
        n += *s == ',';
    return n;
}

/* Element i (from 0) of such a list: where it starts in s, its length in
** *n; "" past the end of the list, or for none. */
static const char *list_item(const char *s, int i, size_t *n)
{
    const char *e;

    for (; s && *s && i > 0; s++)
        if (*s == ',')
            i--;
    if (!s || i > 0) {
        *n = 0;
        return "";
    }
    e = strchr(s, ',');
    *n = e ? (size_t)(e - s) : strlen(s);
    return s;
}

/* Append key='value' (n bytes of v) to b, quoted as libpq's keyword/value
** form reads it. */
static void put_param(struct buf *b, const char *key, const char *v,
                      size_t n)
{
    size_t i;

    buf_printf(b, "%s%s='", b->len ? " " : "", key);
    for (i = 0; i < n; i++) {
        if (v[i] == '\'' || v[i] == '\\')
            buf_putc(b, '\\');
        buf_putc(b, v[i]);
    }
    buf_putc(b, '\'');
}

/*
** Start a connect (PQconnectStartParams()) to entry i of the host list of
** the settings s: every setting as it is but host, hostaddr and port,
** which are the entry's (the list's one port, when it has one, for every
** entry), connect_timeout, which is ct, and target_session_attrs, which
** is tsa unless NULL. The entry goes with dbname in a keyword/value
** string that libpq expands (expand_dbname), where an empty value stays
** set, as an empty element of a list does: given as a keyword of its own
** it would be taken as unset, and PGHOST or PGPORT would stand where
** libpq's connect to the list takes its default. With i < 0, host,
** hostaddr, port and dbname are given as they are: libpq's own connect
** to them. NULL when out of memory.
*/
static PGconn *start_entry(const PQconninfoOption *s, int i, const char *ct,
                           const char *tsa)
{
    static const char *const listed[] = {"host", "hostaddr", "port",
                                         "dbname", NULL};
    const char *keys[64], *vals[64], *const *k, *v;
    const PQconninfoOption *o;
    struct buf b;
    PGconn *c = NULL;
    size_t n;
    int j = 0, whole = i < 0;

    buf_init(&b, 0);
    for (k = listed; !whole && *k; k++) {
        v = setting(s, *k);
        if (strcmp(*k, "dbname") == 0) {
            if (v && *v)
                put_param(&b, *k, v, strlen(v));
            continue;
        }
        v = list_item(v, strcmp(*k, "port") == 0 && list_len(v) == 1 ? 0 : i,
                      &n);
        put_param(&b, *k, v, n);
    }
    for (o = s; o->keyword && j < 60; o++) {
        for (k = listed; !whole && *k && strcmp(o->keyword, *k) != 0; k++)
            ;
        if ((!whole && *k) || !o->val || !*o->val ||
            strcmp(o->keyword, "connect_timeout") == 0 ||
            (tsa && strcmp(o->keyword, "target_session_attrs") == 0))
            continue;
        keys[j] = o->keyword;
        vals[j++] = o->val;
    }
    keys[j] = "connect_timeout";
    vals[j++] = ct;
    if (tsa) {
        keys[j] = "target_session_attrs";
        vals[j++] = tsa;
    }
    if (!whole) {
        keys[j] = "dbname";
        vals[j++] = b.data;
    }
    keys[j] = NULL;
    vals[j] = NULL;
    if (whole || (!buf_err(&b) && b.data))
        c = PQconnectStartParams(keys, vals, !whole);
    buf_free(&b);
    return c;
}

/*
** Whether libpq can read element i of the port list of the settings s
** (the list's one port, when it has one, for every entry) as a port to
** try: empty (its default), or an int in decimal with blanks around it,
** as parse_int_param() reads it. libpq reads a host's port only when it
** comes to that host, and one it cannot read ends its whole connect to
** the list ("invalid integer value"), where a port out of range, a name
** not found or a refused connect send it on to the next host; in the
** walk all of these fail inside PQconnectStartParams(), before any
** server, and look alike to connect_poll().
*/
static int port_readable(const PQconninfoOption *s, int i)
{
    const char *v = setting(s, "port");
    char *copy, *end;
    long x;
    size_t n;
    int ok;

    v = list_item(v, list_len(v) == 1 ? 0 : i, &n);
    if (n == 0)
        return 1;
    copy = strndup(v, n);
    if (!copy)
        return 1; /* libpq, out of memory too, fails the entry anyway */
    errno = 0;
    x = strtol(copy, &end, 10);
    ok = end != copy && !errno && x >= INT_MIN && x <= INT_MAX;
    while (ok && (*end == ' ' || (*end >= '\t' && *end <= '\r')))
        end++;
    ok = ok && !*end;
    free(copy);
    return ok;
}

/* Append to why (size wn) the text s. */
static void say_more(char *why, size_t wn, const char *s)
{
    size_t used = strlen(why);

    say(why + used, wn - used, "%s", s);
}

/* The end of a walk that failed (connect_walk()): when the words of the
** entry that ended it are those said last of the entries before (prev,
** from why's byte cut on), they are said once, as last. */
static enum pg_redo said_once(char *why, size_t cut, const char *prev,
                              const char *last)
{
    if (*prev && strcmp(prev, last) == 0)
        why[cut] = '\0';
    return REDO_FAILED;
}

/*
** Connect with the settings p->settings within ms, the walk's limit: for
** a reconnect (pg_ready()), made by the statement after a lost
** connection, the statement's time limit (RECONNECT_MIN_MS at least: the
** reconnect is part of the statement the user waits for; PQreset() kept
** the first connection's 10 s); for the first connect (pg_open()), its
** connect_timeout. libpq's blocking connect heeds nothing but its
** timeout: this one goes through libpq's nonblocking calls
** (connect_poll()), which a Ctrl-C (db->cancel) cuts short at once:
** there is no statement on the server yet for a cancel request to stop.
** Not a name lookup, though:
** libpq makes it (getaddrinfo()) inside PQconnectStartParams() or
** PQconnectPoll(), blocking, and neither the cancel flag nor the
** deadline is looked at until the resolver answers or gives up (a host
** given by its address, or with hostaddr, needs none).
**
** A host list (host or hostaddr with commas) is walked here as libpq's
** blocking connect walks it (PQconnectPoll()'s try_next_host, libpq 15):
** each entry in turn, as a connect to that one host with every other
** setting as it was (target_session_attrs, which libpq checks on a
** connect to one host too, sslmode, user, dbname, passfile...); on to
** the next when no server took part there, libpq turned it down for
** target_session_attrs, or it ran out of time; ended by a server that
** broke off or refused (TLS, the login, the database), after which
** libpq tries no other host either ("If a connection is established
** successfully, but authentication fails, the remaining hosts in the
** list are not tried"), and by a port libpq cannot read, which ends its
** connect to the list too (port_readable()). prefer-standby walks the
** list twice, for a standby and then for any server, as libpq does. The
** entries are libpq's (connectOptions2()): one for each element of
** hostaddr where it has any, else of host, else one; the port list has
** one element for all or one for each; an empty element is libpq's
** default there (its socket directory, port 5432). A list whose counts
** libpq refuses (more ports than hosts) is not walked (first_walkable()).
** A failure
** says each entry's error in turn, as libpq's own message for several
** hosts does. One host (no list) is not walked: its connect is libpq's
** own with the settings as they are, prefer-standby's two passes inside
** it as before there was a walk, within the one deadline (two connects
** of their own would give the second 2 s past the limit).
**
** Time: each entry gets ms (a shorter connect_timeout of the settings
** stays, 2 s at least), as libpq's
** connect_timeout is for each host. The walk as a whole keeps to ms
** too, so that N hosts that answer none do not take N
** times the limit, but an entry reached once the limit is spent still
** gets RECONNECT_MIN_MS: a list is there to reach the next server, and
** libpq's least is enough for one that answers, where an entry given no
** time would never be tried and each statement would wait on the same
** dead first host again. So the walk takes at most ms and 2 s for
** each further entry.
**
** Where it differs from libpq's blocking connect: an entry's time is for
** the name's addresses together (libpq's is for each address: where the
** first address of a name drops packets, the entry times out without
** trying the next); an entry past the limit gets 2 s, not
** its full time; libpq 16's load_balance_hosts=random, passed on to each
** entry, shuffles a name's addresses but not the entries, tried in the
** order written; and with target_session_attrs set, a server that fails
** after it reported its settings (a login event trigger of PostgreSQL
** 17) is taken for one turned down for them, and the walk goes on where
** libpq ends.
**
** libpq's words for a failure go to last (size ln) for the entry that
** ended the walk (the one that failed, or the last tried), and to why
** (size wn) for those passed over before it, in turn, "timeout expired"
** after the words of one that ran out of time, as libpq's blocking
** connect says it. The connection made replaces p->conn (NULL at the
** first connect); when none is, p->conn stays. *by_limit is 1 when the
** entry that ended the walk ran out of ms, 0 when it failed otherwise
** or ran out only of the settings' own shorter connect_timeout.
*/
static enum pg_redo connect_walk(askdb_db *db, struct pg *p, long ms,
                                 char *why, size_t wn, char *last,
                                 size_t ln, int *by_limit)
{
    const char *ct, *tsa, *list, *want = NULL;
    char limit[24], prev[512] = "";
    long s = (ms + 999) / 1000, each = ms, t, v;
    size_t cut = 0;
    double end, now;
    enum pg_connect_end how;
    PGconn *c;
    int i, n, pass, passes = 1;

    *why = '\0';
    *last = '\0';
    *by_limit = 0;
    snprintf(limit, sizeof limit, "%ld", s);
    ct = setting(p->settings, "connect_timeout");
    v = ct ? strtol(ct, NULL, 10) : 0;
    if (v > 0 && v < s)
        each = v < 2 ? 2000 : v * 1000;
    else
        ct = NULL;
    tsa = setting(p->settings, "target_session_attrs");
    list = setting(p->settings, "hostaddr");
    if (list_len(list) == 0)
        list = setting(p->settings, "host");
    n = list_len(list) > 0 ? list_len(list) : 1;
    if (n > 1 && tsa && strcmp(tsa, "prefer-standby") == 0)
        passes = 2;
    end = db_now_ms() + (double)ms;
    for (pass = 0; pass < passes; pass++) {
        if (passes == 2)
            want = pass == 0 ? "standby" : "any";
        for (i = 0; i < n; i++) {
            if (db->cancel && atomic_load(db->cancel))
                return REDO_CANCELLED;
            /* The entry before, passed over, unless its words are the
            ** ones said just before them (the same host twice, or a
            ** setting libpq refuses for every host: sslmode=bogus). */
            if (strcmp(prev, last) != 0) {
                cut = strlen(why);
                say(prev, sizeof prev, "%s", last);
                say_more(why, wn, last);
            }
            *last = '\0';
            now = db_now_ms();
            t = end - now > RECONNECT_MIN_MS ? (long)(end - now)
                                             : RECONNECT_MIN_MS;
            if (t > each)
                t = each;
            c = start_entry(p->settings, n > 1 ? i : -1, ct ? ct : limit,
                            want);
            how = c ? connect_poll(c, now + (double)t, db->cancel,
                                   want ? want : tsa)
                    : CONNECT_FAILED;
            if (how == CONNECT_MISSED && !port_readable(p->settings, i))
                how = CONNECT_FAILED;
            if (how == CONNECT_MADE) {
                PQfinish(p->conn);
                p->conn = c;
                (void)PQsetNoticeProcessor(c, drop_notice, NULL);
                return REDO_MADE;
            }
            if (how == CONNECT_CANCELLED) {
                PQfinish(c);
                return REDO_CANCELLED;
            }
            say(last, ln, "%s%s", c ? PQerrorMessage(c) : "out of memory\n",
                how == CONNECT_LATE ? "timeout expired\n" : "");
            *by_limit = how == CONNECT_LATE && (!ct || t < each);
            PQfinish(c);
            if (how == CONNECT_FAILED)
                return said_once(why, cut, prev, last);
        }
    }
    return said_once(why, cut, prev, last);
}

/*
** The settings of the first connect as libpq would take them, without
** connecting: the URL's (PQconninfoParse()), then for each it leaves
** unset the environment's and libpq's defaults (PQconndefaults():
** PGHOST, PGPORT, PGTARGETSESSIONATTRS, PGCONNECT_TIMEOUT, PGSERVICE's
** file...), then askdb's own (connect_timeout 10,
** fallback_application_name askdb). NULL when the URL does not parse
** (libpq's own connect says why), names a service (libpq reads its file
** only as it connects: a host list there is libpq's to walk), or out of
** memory.
*/
static PQconninfoOption *first_settings(const char *url)
{
    PQconninfoOption *s, *d, *o;
    const char *v;
    char *err = NULL;

    s = PQconninfoParse(url, &err);
    PQfreemem(err); /* may quote the URL; libpq says it again */
    v = s ? setting(s, "service") : NULL;
    d = s && !(v && *v) ? PQconndefaults() : NULL;
    if (!d) {
        PQconninfoFree(s);
        return NULL;
    }
    for (o = s; o->keyword; o++) {
        if (o->val)
            continue;
        v = setting(d, o->keyword);
        if (!v && strcmp(o->keyword, "connect_timeout") == 0)
            v = "10";
        if (!v && strcmp(o->keyword, "fallback_application_name") == 0)
            v = "askdb";
        if (v && (o->val = strdup(v)) == NULL) {
            PQconninfoFree(s);
            s = NULL;
            break;
        }
    }
    PQconninfoFree(d);
    return s;
}

/*
** Whether the first connect with the settings s goes through
** connect_walk(): its host, hostaddr and port lists have counts libpq
** takes (connectOptions2(): one port, or one for each entry; as many
** host names as hostaddr values), which a walk of single-host connects
** would not check, and connect_timeout is a whole number of seconds,
** which gives the walk's limit *ms (2 s at least, as libpq reads it).
** Else libpq's own blocking connect says what it makes of them.
*/
static int first_walkable(const PQconninfoOption *s, long *ms)
{
    const char *ct = setting(s, "connect_timeout");
    int hosts = list_len(setting(s, "host"));
    int addrs = list_len(setting(s, "hostaddr"));
    int ports = list_len(setting(s, "port"));
    int n = addrs ? addrs : hosts ? hosts : 1;
    char *end;
    long v;

    if ((addrs && hosts && addrs != hosts) || (ports > 1 && ports != n) ||
        !ct)
        return 0;
    errno = 0;
    v = strtol(ct, &end, 10);
    if (end == ct || errno || v <= 0 || v > INT_MAX / 1000)
        return 0;
    while (*end == ' ' || (*end >= '\t' && *end <= '\r'))
        end++;
    if (*end)
        return 0;
    *ms = (v < 2 ? 2 : v) * 1000;
    return 1;
}

/*
** How long libpq's blocking connect would take at most with the settings
** of c, a connect started: its connect_timeout (2 s at least) for each
** entry of its host list, read from c, where libpq has read a service
** file's too. A connect_timeout of 0 or less, which only a service file
** can give here (connect_unbounded()), is no limit to libpq: the largest
** askdb keeps.
*/
static double blocking_ms(PGconn *c)
{
    PQconninfoOption *o = PQconninfo(c);
    const char *v = o ? setting(o, "connect_timeout") : NULL, *list;
    long t = v ? strtol(v, NULL, 10) : 0;
    int n;

    if (!o)
        return 10000;
    list = setting(o, "hostaddr");
    if (list_len(list) == 0)
        list = setting(o, "host");
    n = list_len(list) > 0 ? list_len(list) : 1;
    PQconninfoFree(o);
    if (t <= 0 || t > INT_MAX / 1000)
        return DB_TIMEOUT_MAX_MS;
    return (double)(t < 2 ? 2 : t) * 1000 * n;
}

/*
** The first connect as libpq's own connect to the URL (url, freed here),
** with askdb's defaults under it: for settings the walk does not take
** (first_walkable()). It goes through the nonblocking calls too, so that
** a Ctrl-C (db->cancel) ends it, within what libpq's blocking connect
** would take (blocking_ms()); libpq walks a service file's host list
** inside it. ASKDB_OK, ASKDB_ERR_CANCELLED, or ASKDB_ERR_DB_OPEN with
** db->errmsg set.
*/
static askdb_status libpq_open(askdb_db *db, struct pg *p, char *url)
{
    const char *keys[4], *vals[4];
    enum pg_connect_end how;
    char m[1024];
    int i = 0;

    /* Defaults first: the URL's own parameters (and PG* variables, for
    ** what they set) override them. */
    if (!getenv("PGCONNECT_TIMEOUT")) {
        keys[i] = "connect_timeout";
        vals[i++] = "10";
    }
    keys[i] = "fallback_application_name";
    vals[i++] = "askdb";
    keys[i] = "dbname";
    vals[i++] = url;
    keys[i] = NULL;
    vals[i] = NULL;
    p->conn = PQconnectStartParams(keys, vals, 1);
    free(url);
    if (!p->conn)
        return ASKDB_ERR_NOMEM;
    (void)PQsetNoticeProcessor(p->conn, drop_notice, NULL);
    how = connect_poll(p->conn, db_now_ms() + blocking_ms(p->conn),
                       db->cancel, NULL);
    if (how == CONNECT_CANCELLED)
        return ASKDB_ERR_CANCELLED;
    if (how != CONNECT_MADE) {
        say(m, sizeof m, "%s%s", PQerrorMessage(p->conn),
            how == CONNECT_LATE ? "timeout expired\n" : "");
        connect_error(db, p, m, "connect to", "");
        return ASKDB_ERR_DB_OPEN;
    }
    p->settings = PQconninfo(p->conn);
    return p->settings ? ASKDB_OK : ASKDB_ERR_NOMEM;
}

/*
** The first connect: the settings of the URL, the environment and askdb
** (first_settings()) walked as a reconnect walks them (connect_walk()),
** within their connect_timeout (askdb's 10 s unless the URL or
** PGCONNECT_TIMEOUT gives one): one host is libpq's one connect, a host
** list is walked entry by entry, and a Ctrl-C (db->cancel, which
** askdb_db_cancel() or askdb_agent_cancel() set while the handle is
** being opened) ends either at once, ASKDB_ERR_CANCELLED. Settings the
** walk does not take go to libpq's own connect (libpq_open()).
*/
static askdb_status pg_open(askdb_db *db, const char *path)
{
    char why[1024], last[1024];
    enum pg_redo end;
    askdb_status rc;
    struct pg *p;
    char *url;
    long ms;
    int by_limit;

    p = calloc(1, sizeof *p);
    if (!p)
        return ASKDB_ERR_NOMEM;
    db->impl = p;
    p->ambiguous = db_url_ambiguous(path);
    url = libpq_url(path);
    if (!url)
        return ASKDB_ERR_NOMEM;
    /* What libpq may quote: the password as libpq got it, and decoded. */
    p->pw_raw = raw_password(url);
    p->pw = parsed_password(url);
    if (connect_unbounded(db, url)) {
        free(url);
        return ASKDB_ERR_DB_OPEN;
    }
    p->settings = first_settings(url);
    if (!p->settings || !first_walkable(p->settings, &ms)) {
        PQconninfoFree(p->settings);
        p->settings = NULL;
        rc = libpq_open(db, p, url);
        if (rc == ASKDB_ERR_DB_OPEN &&
            !(db->cancel && atomic_load(db->cancel)))
            return rc;
    } else {
        free(url);
        end = connect_walk(db, p, ms, why, sizeof why, last, sizeof last,
                           &by_limit);
        if (end == REDO_FAILED &&
            !(db->cancel && atomic_load(db->cancel))) {
            walk_error(db, p, "connect to", why, last, "",
                       sizeof db->errmsg);
            return ASKDB_ERR_DB_OPEN;
        }
        rc = end == REDO_MADE ? ASKDB_OK : ASKDB_ERR_CANCELLED;
    }
    if (rc == ASKDB_OK)
        rc = pg_setup(db, p, 1);
    /* Cut short, or failed after a Ctrl-C (the session's settings): the
    ** user stopped it. */
    if (rc && db->cancel && atomic_load(db->cancel)) {
        say(db->errmsg, sizeof db->errmsg,
            "cancelled while connecting to '%s'", db->label);
        return ASKDB_ERR_CANCELLED;
    }
    return rc;
}

/*
** Make the connection usable: after a lost connection (the server
** restarted, a cancel went unanswered) connect again with the same
** settings, within the statement's time limit (connect_walk()). ASKDB_OK,
** else ASKDB_ERR_DB, or ASKDB_ERR_CANCELLED when a Ctrl-C (db->cancel)
** came first, with the reason in e and db->errmsg.
*/
static askdb_status pg_ready(askdb_db *db, struct pg *p, struct db_err *e)
{
    char within[96] = "", why[1024], last[1024];
    enum pg_redo end;
    int by_limit;

    if (!p->lost && PQstatus(p->conn) == CONNECTION_OK &&
        PQtransactionStatus(p->conn) == PQTRANS_IDLE)
        return ASKDB_OK;
    end = connect_walk(db, p,
                       db->query_timeout_ms > RECONNECT_MIN_MS
                           ? db->query_timeout_ms : RECONNECT_MIN_MS,
                       why, sizeof why, last, sizeof last, &by_limit);
    if (end == REDO_MADE) {
        if (pg_setup(db, p, 0) == ASKDB_OK)
            return ASKDB_OK;
    } else if (end != REDO_CANCELLED) {
        if (by_limit)
            say(within, sizeof within, " within the statement's %d ms "
                "time limit (--timeout; 2 s at least)",
                db->query_timeout_ms);
        walk_error(db, p, "reconnect to", why, last, within,
                   sizeof e->msg);
    }
    p->lost = 1;
    /* Cut short, or failed after a Ctrl-C (the session's settings,
    ** pg_setup()): the user stopped it. */
    if (end == REDO_CANCELLED || (db->cancel && atomic_load(db->cancel))) {
        say(db->errmsg, sizeof db->errmsg,
            "cancelled while connecting again to '%s'", db->label);
        e->ec = ASKDB_EC_RUNTIME;
        say(e->msg, sizeof e->msg, "%s", db->errmsg);
        return ASKDB_ERR_CANCELLED;
    }
    e->ec = ASKDB_EC_DATABASE;
    say(e->msg, sizeof e->msg, "%s", db->errmsg);
    return ASKDB_ERR_DB;
}

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */
/* ---------------------------------------------------------------------- */

static askdb_error_class class_of(const char *state)
{
    static const struct {
        const char *state;
        askdb_error_class ec;
    } map[] = {
        {"42703", ASKDB_EC_UNKNOWN_COLUMN}, /* undefined_column */
        {"42702", ASKDB_EC_UNKNOWN_COLUMN}, /* ambiguous_column */
        {"42P01", ASKDB_EC_UNKNOWN_TABLE},  /* undefined_table */
        {"42601", ASKDB_EC_SYNTAX},         /* syntax_error */
        {"57014", ASKDB_EC_TIMEOUT},        /* query_canceled */
        /* The database, not the statement: no repair helps. */
        {"55P03", ASKDB_EC_DATABASE},       /* lock_not_available */
        {"53100", ASKDB_EC_DATABASE},       /* disk_full */
        {"53300", ASKDB_EC_DATABASE},       /* too_many_connections */
        {"58030", ASKDB_EC_DATABASE},       /* io_error */
        {"XX001", ASKDB_EC_DATABASE},       /* data_corrupted */
        {"XX002", ASKDB_EC_DATABASE},       /* index_corrupted */
        {"25006", ASKDB_EC_REFUSED},        /* read_only_sql_transaction */
        {"42501", ASKDB_EC_REFUSED},        /* insufficient_privilege */
    };
    size_t i;

    for (i = 0; state && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].state, state) == 0)
            return map[i].ec;
    return ASKDB_EC_RUNTIME;
}

/* Is this SQLSTATE the connection ending (server shut down, crashed,
** network gone)? */
static int state_lost(const char *state)
{
    return state && (strncmp(state, "08", 2) == 0 ||
                     strncmp(state, "57P", 3) == 0);
}

/* The byte offset in sql of the error position PostgreSQL gives (a 1-based
** count of characters; of bytes when raw: SQL_ASCII has one a byte),
** or -1. */
static int stmt_pos(const PGresult *r, const char *sql, int raw)
{
    const char *s = r ? PQresultErrorField(r, PG_DIAG_STATEMENT_POSITION)
                      : NULL;
    const unsigned char *p = (const unsigned char *)sql;
    long chars = s ? strtol(s, NULL, 10) : 0;

    if (chars < 1)
        return -1;
    while (*p && --chars > 0) {
        p++;
        while (!raw && (*p & 0xC0) == 0x80)
            p++;
    }
    return *p && p - (const unsigned char *)sql < INT_MAX
               ? (int)(p - (const unsigned char *)sql) : -1;
}

/*
** A statement with parameters ($1) cannot run: askdb has no values to
** bind, and the server answers the Bind without them with a protocol
** error that ends the connection. A syntax error, so that the model
** writes the values in; the same words as MariaDB's for its '?'.
*/
static askdb_status placeholder_error(struct db_err *e)
{
    e->ec = ASKDB_EC_SYNTAX;
    say(e->msg, sizeof e->msg,
        "the query has a $1 placeholder; write the values into the SQL");
    return ASKDB_ERR_DB;
}

/* Does this error say that the type of a parameter ($n) is unknown? (The
** SQLSTATE alone is also that of an empty ARRAY[].) */
static int param_type_error(const char *state, const char *msg)
{
    const char *d;

    if (!state || strcmp(state, "42P18") != 0)
        return 0;
    for (d = strchr(msg, '$'); d; d = strchr(d + 1, '$'))
        if (d[1] >= '0' && d[1] <= '9')
            return 1;
    return 0;
}

/*
** A permission error on what a query reads (m is the server's "permission
** denied for table orders"): the role may not read that relation, or
** some column of it that the statement names, or may not use that
** schema. Said so into e, since "askdb runs only read-only queries" does
** not fit a plain SELECT. 0 when m names something else (a function, a
** sequence) or is in another language: the caller says it generally.
*/
static int read_refusal(const char *m, struct db_err *e)
{
    static const char *const rels[] = {
        "table ", "view ", "materialized view ", "foreign table "
    };
    static const char pre[] = "permission denied for ";
    size_t i, n;

    if (strncmp(m, pre, sizeof pre - 1) != 0)
        return 0;
    m += sizeof pre - 1;
    if (strncmp(m, "schema ", 7) == 0) {
        say(e->msg, sizeof e->msg,
            "refused: the role may not use schema %s (permission denied "
            "for schema %s); ask about the tables the schema shows",
            m + 7, m + 7);
        return 1;
    }
    for (i = 0; i < sizeof rels / sizeof rels[0]; i++) {
        n = strlen(rels[i]);
        if (strncmp(m, rels[i], n) == 0) {
            say(e->msg, sizeof e->msg,
                "refused: the role may not read %.*s%s, or not every "
                "column of it that the statement names (permission denied "
                "for %s); the schema shows only the tables and columns it "
                "may read", (int)n, m, m + n, m);
            return 1;
        }
    }
    return 0;
}

/*
** The time limit passed and the server, running, did not end the
** statement at askdb's cancel (stuck_session() saw its session): what it
** waited on, and that the session was ended. Class database, as for a
** lock another session holds: no rewrite of the statement helps while
** the foreign server does not answer.
*/
static askdb_status stuck_error(askdb_db *db, struct pg *p,
                                struct db_err *e)
{
    char what[160];

    p->lost = 1;
    if (strcmp(p->wait_type, "Extension") == 0)
        say(what, sizeof what, "waited on a foreign server or an extension "
            "(wait event Extension: postgres_fdw, dblink)");
    else if (*p->wait_type)
        say(what, sizeof what, "waited (wait event %s/%s)", p->wait_type,
            p->wait_event);
    else
        say(what, sizeof what, "was busy without a wait event (a foreign "
            "server's connection being made, an extension's loop)");
    e->ec = ASKDB_EC_DATABASE;
    say(e->msg, sizeof e->msg,
        "query interrupted: the %d ms time limit (--timeout) ran out while "
        "the server %s, and the server did not end the statement within "
        "%d ms of askdb's cancel; askdb %s and connects again at the next "
        "statement; ask again when the foreign server answers",
        db->query_timeout_ms, what, CANCEL_GRACE_MS,
        p->stuck_ended ? "ended the session (pg_terminate_backend)"
                       : "closed its connection");
    return ASKDB_ERR_TIMEOUT;
}

/*
** Turn a failed statement's result (r, or NULL when the connection broke
** with connmsg) into e and a status, telling a timeout, a cancel, a lock
** wait, a refusal and a lost connection apart.
*/
static askdb_status pg_fail(askdb_db *db, struct pg *p, const PGresult *r,
                            const char *connmsg, struct db_err *e)
{
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    const char *prim = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)
                         : NULL;
    const char *hint = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_HINT) : NULL;
    char m[400], h[200];

    if (p->stop == STOP_CANCEL) {
        e->ec = ASKDB_EC_RUNTIME;
        say(e->msg, sizeof e->msg, "cancelled");
        p->lost = 1;   /* see the time limit's below */
        return ASKDB_ERR_CANCELLED;
    }
    if (!r && p->stuck && p->stop == STOP_TIMEOUT)
        return stuck_error(db, p, e);
    if (!r && *p->unsent && p->stop == STOP_TIMEOUT) {
        /* The time limit passed and askdb gave the session up itself:
        ** a timeout, not a server gone (p->lost is set: the next
        ** statement reconnects). */
        e->ec = ASKDB_EC_TIMEOUT;
        say(e->msg, sizeof e->msg,
            "query interrupted after the %d ms time limit (--timeout); "
            "the session was given up instead of cancelled (%s)",
            db->query_timeout_ms, p->unsent);
        return ASKDB_ERR_TIMEOUT;
    }
    if (!r || state_lost(state) || PQstatus(p->conn) == CONNECTION_BAD) {
        p->lost = 1;
        one_line(p, r ? PQresultErrorMessage(r) : connmsg, m, sizeof m);
        e->ec = ASKDB_EC_DATABASE;
        say(e->msg, sizeof e->msg,
                 "lost the connection to '%s' during the statement (%s); "
                 "check that the server runs, then ask again (askdb "
                 "reconnects)", db->label, *m ? m : "no answer");
        return ASKDB_ERR_DB;
    }
    one_line(p, prim ? prim : PQresultErrorMessage(r), m, sizeof m);
    one_line(p, hint, h, sizeof h);
    e->ec = class_of(state);
    if (param_type_error(state, m))
        return placeholder_error(e);
    if (state && strcmp(state, "57014") == 0 && p->stop == STOP_NONE &&
        db_now_ms() - p->started < db->query_timeout_ms) {
        /* Neither askdb's cancel nor statement_timeout, which cannot
        ** have passed: pg_cancel_backend() from another session, or the
        ** statement's own. Running it again would meet the same. */
        e->ec = ASKDB_EC_DATABASE;
        say(e->msg, sizeof e->msg,
            "the statement was cancelled by another session (an "
            "administrator?), not by askdb: its %d ms time limit had not "
            "passed", db->query_timeout_ms);
        return ASKDB_ERR_DB;
    }
    if (p->stop == STOP_TIMEOUT ||
        (state && strcmp(state, "57014") == 0)) {
        /* The next statement gets a session of its own: once in CI the
        ** one after a timed-out statement on the same session was
        ** cancelled before its own limit ("not by askdb: its time limit
        ** had not passed"), the cancel of the one before reaching it
        ** late. A connection costs little next to a time limit spent. */
        p->lost = 1;
        e->ec = ASKDB_EC_TIMEOUT;
        say(e->msg, sizeof e->msg,
                 "query interrupted after the %d ms time limit (--timeout); "
                 "cancelled on the server", db->query_timeout_ms);
        return ASKDB_ERR_TIMEOUT;
    }
    if (state && strcmp(state, "55P03") == 0) {
        say(e->msg, sizeof e->msg,
                 "query interrupted: it waited more than %d ms (lock_timeout,"
                 " half the time limit) for a lock another session holds on "
                 "a table it reads (%s); ask again when that session has "
                 "finished (pg_stat_activity and pg_locks show it)",
                 db->query_timeout_ms / 2 > 0 ? db->query_timeout_ms / 2 : 1,
                 m);
        return ASKDB_ERR_TIMEOUT;
    }
    if (state && strcmp(state, "42601") == 0 &&
        strstr(m, "cannot insert multiple commands")) {
        return db_many_statements(e);
    }
    if (e->ec == ASKDB_EC_REFUSED) {
        if (strcmp(state, "42501") == 0 && read_refusal(m, e))
            return ASKDB_ERR_REFUSED;
        say(e->msg, sizeof e->msg,
                 "refused: %s (%s); askdb runs only read-only queries",
                 state && strcmp(state, "25006") == 0
                     ? "the statement does more than read"
                     : "the role may not do this",
                 m);
        return ASKDB_ERR_REFUSED;
    }
    if (*h)
        say(e->msg, sizeof e->msg, "%s (HINT: %s)", m, h);
    else
        say(e->msg, sizeof e->msg, "%s", m);
    return ASKDB_ERR_DB;
}

/* ---------------------------------------------------------------------- */
/* Schema                                                                 */
/* ---------------------------------------------------------------------- */

/* Value (row, col) copied as valid UTF-8, NULL for SQL NULL; *nomem set
** when the copy failed. */
static char *dup_val(const PGresult *r, int row, int col, int *nomem)
{
    char *s;

    if (PQgetisnull(r, row, col))
        return NULL;
    s = text_repair(strdup(PQgetvalue(r, row, col)));
    if (!s)
        *nomem = 1;
    return s;
}

/*
** The relations askdb shows: tables, partitioned tables, views,
** materialized views and foreign tables that the role may read at least
** in part, of the schemas on the search path (current_schemas) and of
** every other schema it has USAGE on, but the system's (pg_catalog,
** information_schema, pg_toast*, pg_temp*). A partition is shown only
** when none of its ancestors is (the role may read it but not its
** parent): a parent shown stands for its partitions, whose rows it
** reads. bare says whether the name alone reaches a relation: it is in
** a schema of the search path and no schema before it there has the
** name, as for an unqualified name in a query; the others are shown
** qualified (a namespace). ord numbers them
** in the order they are shown: those of the search path in its order,
** then the others by schema. The other queries get their oids in that
** order as $1 (rels), so that the catalog is searched once, and name
** columns by number, which the columns already read turn into names.
*/
static const char q_tables[] =
    "WITH sp AS (SELECT n.oid, k.pos FROM unnest(current_schemas(false)) "
    "   WITH ORDINALITY k(name, pos) JOIN pg_namespace n "
    "   ON n.nspname = k.name "
    "   WHERE k.name NOT IN ('pg_catalog', 'information_schema')), "
    "ns AS (SELECT n.oid, n.nspname, sp.pos FROM pg_namespace n "
    "   LEFT JOIN sp ON sp.oid = n.oid "
    "   WHERE sp.oid IS NOT NULL OR " OTHER_NSP("n") "), "
    "readable AS (SELECT c.oid, c.relname, c.relkind, c.reltuples, "
    "   c.relispartition, ns.nspname, ns.pos "
    "   FROM pg_class c JOIN ns ON ns.oid = c.relnamespace "
    "   WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') "
    "   AND (has_table_privilege(c.oid, 'SELECT') "
    "        OR has_any_column_privilege(c.oid, 'SELECT'))), "
    "cand AS (SELECT * FROM readable x WHERE NOT x.relispartition "
    "   OR NOT EXISTS (SELECT 1 FROM pg_partition_ancestors(x.oid) a "
    "     JOIN readable y ON y.oid = a.relid WHERE a.relid <> x.oid)), "
    "bare AS (SELECT DISTINCT ON (relname) oid FROM cand "
    "   WHERE pos IS NOT NULL ORDER BY relname, pos), "
    "rels AS (SELECT cand.*, bare.oid IS NOT NULL AS bare, "
    "   row_number() OVER (ORDER BY bare.oid IS NULL, cand.pos, "
    "     cand.nspname, cand.oid) AS ord "
    "   FROM cand LEFT JOIN bare ON bare.oid = cand.oid) "
    "SELECT r.ord, r.relname, r.relkind, r.reltuples::float8, d.description, "
    "  r.nspname, r.oid, r.bare "
    "FROM rels r "
    "LEFT JOIN pg_description d ON d.objoid = r.oid "
    "  AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0 "
    "ORDER BY r.ord";

#define RELS_CTE                                                             \
    "WITH rels AS MATERIALIZED (SELECT r.oid, r.ord, "                       \
    "   has_table_privilege(r.oid, 'SELECT') AS tpriv "                      \
    "   FROM unnest($1::oid[]) WITH ORDINALITY r(oid, ord)) "

/* Columns the role may read, with their key position and comment. */
static const char q_columns[] =
    RELS_CTE
    "SELECT r.ord, a.attname, format_type(a.atttypid, a.atttypmod), "
    "  a.attnotnull, "
    "  CASE WHEN a.attgenerated = '' "
    "       THEN pg_get_expr(ad.adbin, ad.adrelid) END, "
    "  coalesce(array_position(pk.conkey, a.attnum), 0), d.description, "
    "  t.typcategory IN ('S', 'E'), a.attnum "
    "FROM rels r JOIN pg_attribute a ON a.attrelid = r.oid "
    "  AND a.attnum > 0 AND NOT a.attisdropped "
    "JOIN pg_type t ON t.oid = a.atttypid "
    "LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid "
    "  AND ad.adnum = a.attnum "
    "LEFT JOIN pg_constraint pk ON pk.conrelid = r.oid AND pk.contype = 'p' "
    "LEFT JOIN pg_description d ON d.objoid = r.oid "
    "  AND d.classoid = 'pg_class'::regclass AND d.objsubid = a.attnum "
    "WHERE r.tpriv OR has_column_privilege(r.oid, a.attnum, 'SELECT') "
    "ORDER BY r.ord, a.attnum";

/* Foreign keys between relations askdb shows, as (table, column number)
** pairs. */
static const char q_fkeys[] =
    RELS_CTE
    "SELECT r.ord, con.oid, k.src, r2.ord, k.dst "
    "FROM rels r JOIN pg_constraint con ON con.conrelid = r.oid "
    "  AND con.contype = 'f' "
    "JOIN rels r2 ON r2.oid = con.confrelid "
    "CROSS JOIN LATERAL unnest(con.conkey, con.confkey) "
    "  WITH ORDINALITY k(src, dst, n) "
    "ORDER BY r.ord, con.conname, con.oid, k.n";

/* Unique indexes and constraints over plain columns, whole-table ones
** (no expression, no predicate), key columns only. */
static const char q_uniques[] =
    RELS_CTE
    "SELECT r.ord, i.indexrelid, k.att "
    "FROM rels r JOIN pg_index i ON i.indrelid = r.oid AND i.indisunique "
    "  AND NOT i.indisprimary AND i.indexprs IS NULL AND i.indpred IS NULL "
    "CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY k(att, n) "
    "WHERE k.n <= i.indnkeyatts "
    "ORDER BY r.ord, i.indexrelid, k.n";

/*
** The server's words that a table or column name may not be written bare
** as (the appendix "SQL Key Words" of its manual): the reserved ones (R:
** FROM user reads the function current_user, SELECT array ... a syntax
** error) and those that may be a function or type name but not a column
** or table name (T: left, join, current_schema). The other non-reserved
** ones (C: "cannot be function or type", values, time, position) serve
** as table and column names wherever a query names one, as tried on
** PostgreSQL 15 for each word of the list: not quoted.
*/
static const char q_reserved[] =
    "SELECT word FROM pg_catalog.pg_get_keywords() "
    "WHERE catcode IN ('R', 'T')";

/* Per table, beside struct db_table: what sampling needs. */
struct pg_rel {
    char *nsp;              /* its schema, for a qualified name */
    char kind;              /* pg_class.relkind */
    double reltuples;       /* -1: never analysed */
    int *attnum;            /* [ncols]: pg_attribute.attnum of each column */
    unsigned char *textual; /* [ncols]: a string or enum column */
    int ntextual;
};

/* The schema's transaction: one snapshot for all the catalog queries;
** sampling waits for a table another session locks only briefly. */
static int pg_begin_schema(askdb_db *db, struct pg *p, char *msg, size_t n)
{
    char sql[160];

    snprintf(sql, sizeof sql,
             "BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ; "
             "SET LOCAL lock_timeout = %d", SAMPLE_LOCK_MS);
    return pg_command(db, p, sql, db->query_timeout_ms, msg, n);
}

/* Index of the table a row's column col (ord, 1-based) names, or -1. */
static int ord_index(const PGresult *r, int row, int col, int ntables)
{
    long v = strtol(PQgetvalue(r, row, col), NULL, 10);

    return v >= 1 && v <= ntables ? (int)v - 1 : -1;
}

/* Column of table ti with attribute number (row, col) of r, or -1. */
static int col_index(const struct db_schema *s, const struct pg_rel *rel,
                     int ti, const PGresult *r, int row, int col)
{
    long att = strtol(PQgetvalue(r, row, col), NULL, 10);
    int j;

    for (j = 0; ti >= 0 && j < s->tables[ti].ncols; j++)
        if (rel[ti].attnum[j] == att)
            return j;
    return -1;
}

/* The words of q_reserved's rows into out's reserved words. */
static int read_reserved(const PGresult *r, struct db_schema *out)
{
    int i, n = PQntuples(r);

    for (i = 0; i < n; i++)
        if (schema_add_reserved(out, PQgetvalue(r, i, 0)) < 0)
            return -1;
    return 0;
}

/* The tables of q_tables's rows into out and rel, and their oids as an
** array literal for the other queries into oids. */
static int read_tables(const PGresult *r, struct db_schema *out,
                       struct pg_rel *rel, struct buf *oids)
{
    int i, nomem = 0;
    struct db_table *t;

    buf_putc(oids, '{');
    for (i = 0; i < PQntuples(r); i++) {
        buf_printf(oids, "%s%s", i ? "," : "", PQgetvalue(r, i, 6));
        t = schema_push(&out->tables, &out->ntables, sizeof *t);
        if (!t)
            return -1;
        t->name = dup_val(r, i, 1, &nomem);
        t->comment = dup_val(r, i, 4, &nomem);
        rel[i].kind = PQgetvalue(r, i, 2)[0];
        rel[i].reltuples = strtod(PQgetvalue(r, i, 3), NULL);
        rel[i].nsp = dup_val(r, i, 5, &nomem);
        t->is_view = rel[i].kind == 'v';
        t->rows = -1;
        if (nomem || !t->name || !rel[i].nsp)
            return -1;
        if (PQgetvalue(r, i, 7)[0] != 't' &&
            schema_set_namespace(t, rel[i].nsp) < 0)
            return -1;
    }
    buf_putc(oids, '}');
    return buf_err(oids) ? -1 : 0;
}

static int read_columns(const PGresult *r, struct db_schema *out,
                        struct pg_rel *rel)
{
    int i, ti, n, nomem = 0;
    struct db_table *t;
    struct db_column *c;
    unsigned char *tx;
    int *an;

    for (i = 0; i < PQntuples(r); i++) {
        ti = ord_index(r, i, 0, out->ntables);
        if (ti < 0)
            continue;
        t = &out->tables[ti];
        c = schema_push(&t->cols, &t->ncols, sizeof *c);
        if (!c)
            return -1;
        n = t->ncols;
        tx = realloc(rel[ti].textual, (size_t)n);
        if (tx)
            rel[ti].textual = tx;
        an = realloc(rel[ti].attnum, (size_t)n * sizeof *an);
        if (an)
            rel[ti].attnum = an;
        if (!tx || !an)
            return -1;
        tx[n - 1] = PQgetvalue(r, i, 7)[0] == 't';
        rel[ti].ntextual += tx[n - 1];
        an[n - 1] = (int)strtol(PQgetvalue(r, i, 8), NULL, 10);
        c->name = dup_val(r, i, 1, &nomem);
        c->type = dup_val(r, i, 2, &nomem);
        c->notnull = PQgetvalue(r, i, 3)[0] == 't';
        c->dflt = dup_val(r, i, 4, &nomem);
        c->pk = (int)strtol(PQgetvalue(r, i, 5), NULL, 10);
        c->comment = dup_val(r, i, 6, &nomem);
        if (nomem || !c->name || !c->type)
            return -1;
    }
    return 0;
}

/* Foreign keys from q_fkeys's rows; a key with a column the role may not
** read is left out whole. */
static int read_fkeys(const PGresult *r, struct db_schema *out,
                      const struct pg_rel *rel)
{
    int i, j, k, ti, tj, from, to, n = PQntuples(r);
    struct db_table *t;
    struct db_fkey *f;

    for (i = 0; i < n; i = k) {
        /* Rows i .. k-1: the columns of one constraint. */
        for (k = i + 1; k < n && strcmp(PQgetvalue(r, k, 1),
                                        PQgetvalue(r, i, 1)) == 0;
             k++)
            ;
        ti = ord_index(r, i, 0, out->ntables);
        tj = ord_index(r, i, 3, out->ntables);
        for (j = i; j < k; j++)
            if (col_index(out, rel, ti, r, j, 2) < 0 ||
                col_index(out, rel, tj, r, j, 4) < 0)
                break;
        if (ti < 0 || tj < 0 || j < k)
            continue;
        t = &out->tables[ti];
        for (j = i; j < k; j++) {
            from = col_index(out, rel, ti, r, j, 2);
            to = col_index(out, rel, tj, r, j, 4);
            f = schema_push(&t->fks, &t->nfks, sizeof *f);
            if (!f)
                return -1;
            f->from = strdup(t->cols[from].name);
            f->table = strdup(schema_qname(&out->tables[tj]));
            f->to = strdup(out->tables[tj].cols[to].name);
            if (!f->from || !f->table || !f->to)
                return -1;
        }
    }
    return 0;
}

/* Unique keys from q_uniques's rows as "a, b"; one over a column the role
** may not read is left out. */
static int read_uniques(const PGresult *r, struct db_schema *out,
                        const struct pg_rel *rel)
{
    struct buf b;
    char **u;
    int i, j, k, ti, col, n = PQntuples(r);

    for (i = 0; i < n; i = k) {
        for (k = i + 1; k < n && strcmp(PQgetvalue(r, k, 1),
                                        PQgetvalue(r, i, 1)) == 0;
             k++)
            ;
        ti = ord_index(r, i, 0, out->ntables);
        if (ti < 0)
            continue;
        buf_init(&b, 0);
        for (j = i; j < k; j++) {
            col = col_index(out, rel, ti, r, j, 2);
            if (col < 0)
                break;
            if (j > i)
                buf_puts(&b, ", ");
            schema_put_name(&b, out, out->tables[ti].cols[col].name);
        }
        if (j < k) {
            buf_free(&b);
            continue;
        }
        u = schema_push(&out->tables[ti].uniques, &out->tables[ti].nuniques,
                 sizeof *u);
        if (!u) {
            buf_free(&b);
            return -1;
        }
        *u = buf_steal(&b);
        if (!*u)
            return -1;
    }
    return 0;
}

static void put_table(struct buf *b, const struct db_table *t,
                      const struct pg_rel *rel)
{
    text_put_quoted(b, rel->nsp, '"');
    buf_putc(b, '.');
    text_put_quoted(b, t->name, '"');
}

/* Keep value (row, col) of r as a sample of c when it is short, new and
** c has fewer than per_col. -1 when out of memory. */
static int add_sample(struct db_column *c, const PGresult *r, int row,
                      int col, int per_col)
{
    char *v, **slot;
    int len;

    if (c->nsamples >= per_col || PQgetisnull(r, row, col))
        return 0;
    len = PQgetlength(r, row, col);
    if (len == 0 || len > SCHEMA_SAMPLE_MAXLEN)
        return 0;
    v = text_repair(strdup(PQgetvalue(r, row, col)));
    if (!v)
        return -1;
    if (schema_has_sample(c, v)) {
        free(v);
        return 0;
    }
    slot = schema_push(&c->samples, &c->nsamples, sizeof *slot);
    if (!slot) {
        free(v);
        return -1;
    }
    *slot = v;
    return 0;
}

/* Does table i need reading: for samples, or for its row count (never
** analysed)? Never a view's query, nor a remote table's. */
static int wants_sample(const askdb_db *db, const struct pg_rel *rel)
{
    if (rel->kind == 'v' || rel->kind == 'f')
        return 0;
    return rel->reltuples < 0 ||
           (db->sample_values > 0 && rel->ntextual > 0);
}

/*
** Read the first rows of n tables (idx[], indexes into out) in one
** statement, a UNION ALL of one branch per table: its number in the batch
** and its text columns, padded with NULLs to the widest. One statement
** for many tables is what makes thousands of tables cheap: the rows are
** few, the round trips and statements are what costs. seen[] gets each
** table's row count up to SAMPLE_ROWS + 1. 0, -1 out of memory, 1 when
** the statement failed (msg says why; a table locked by another session
** makes the whole batch fail).
*/
static int sample_batch(askdb_db *db, struct pg *p, struct db_schema *out,
                        const struct pg_rel *rel, const int *idx, int n,
                        long *seen, char *msg, size_t msgn)
{
    struct buf b;
    PGresult *r;
    int i, j, k, w = 1, row, per = db->sample_values;

    for (i = 0; i < n; i++)
        if (per > 0 && rel[idx[i]].ntextual > w)
            w = rel[idx[i]].ntextual;
    buf_init(&b, 0);
    for (i = 0; i < n; i++) {
        const struct db_table *t = &out->tables[idx[i]];
        const struct pg_rel *rl = &rel[idx[i]];
        buf_printf(&b, "%s(SELECT %d", i ? " UNION ALL " : "", i);
        k = 0;
        for (j = 0; per > 0 && j < t->ncols; j++) {
            if (!rl->textual[j])
                continue;
            /* ::text: enums and bpchar come back as plain text. */
            buf_puts(&b, ", ");
            text_put_quoted(&b, t->cols[j].name, '"');
            buf_puts(&b, "::text");
            k++;
        }
        for (; k < w; k++)
            buf_puts(&b, ", NULL::text");
        buf_puts(&b, " FROM ");
        put_table(&b, t, rl);
        buf_printf(&b, " LIMIT %d)", SAMPLE_ROWS + 1);
    }
    if (buf_err(&b)) {
        buf_free(&b);
        return -1;
    }
    r = pg_query(db, p, b.data, 0, NULL, msg, msgn);
    buf_free(&b);
    if (!r)
        return 1;
    for (row = 0; row < PQntuples(r); row++) {
        struct db_table *t;
        i = (int)strtol(PQgetvalue(r, row, 0), NULL, 10);
        if (i < 0 || i >= n || ++seen[i] > SAMPLE_ROWS)
            continue;
        t = &out->tables[idx[i]];
        k = 1;
        for (j = 0; per > 0 && j < t->ncols; j++) {
            if (!rel[idx[i]].textual[j])
                continue;
            if (add_sample(&t->cols[j], r, row, k++, per) < 0) {
                PQclear(r);
                return -1;
            }
        }
    }
    PQclear(r);
    return 0;
}

/* The row count of a table never analysed and larger than the sample,
** capped at count_cap. 0, or 1 when the statement failed. */
static int count_table(askdb_db *db, struct pg *p, struct db_table *t,
                       const struct pg_rel *rel, char *msg, size_t msgn)
{
    struct buf b;
    PGresult *r;
    long n;

    buf_init(&b, 0);
    buf_puts(&b, "SELECT count(*) FROM (SELECT FROM ");
    put_table(&b, t, rel);
    buf_printf(&b, " LIMIT %ld) x", db->count_cap + 1);
    if (buf_err(&b)) {
        buf_free(&b);
        return -1;
    }
    r = pg_query(db, p, b.data, 0, NULL, msg, msgn);
    buf_free(&b);
    if (!r)
        return 1;
    n = strtol(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    t->rows = n > db->count_cap ? db->count_cap : n;
    t->rows_capped = n > db->count_cap;
    t->rows_estimated = 0;
    return 0;
}

/* After a failed statement the schema's transaction is over: start the
** next one. After one that ran out of time (the server's
** statement_timeout, or askdb's cancel request, which may land on
** whatever the session runs next: a sample of the next table, cut
** short) the read goes on on a new session, as a question's next
** statement does (pg_fail()). 0, or -2 when the connection is gone (or
** cannot be made again). */
static int schema_resume(askdb_db *db, struct pg *p, char *msg, size_t n)
{
    struct db_err e;

    if (p->ran_out && !p->lost) {
        p->lost = 1;
        if (pg_ready(db, p, &e) != ASKDB_OK) {
            say(msg, n, "%s", e.msg);
            return -2;
        }
        return pg_begin_schema(db, p, msg, n) < 0 ? -2 : 0;
    }
    if (p->lost || PQstatus(p->conn) != CONNECTION_OK)
        return -2;
    pg_rollback(db, p);
    if (p->lost || pg_begin_schema(db, p, msg, n) < 0)
        return -2;
    return 0;
}

#define SAMPLE_BATCH 100

/* Whether the handle's user cancelled (askdb_db_cancel, the agent's): a
** schema read then stops, and is ASKDB_ERR_CANCELLED (pg_schema()). */
static int schema_cancelled(const askdb_db *db)
{
    return db->cancel && atomic_load(db->cancel);
}

/*
** Samples and row counts, SAMPLE_BATCH tables a statement. A batch that
** fails (a table locked by another session, a view's broken base) is
** read again one table at a time, and a table that fails alone keeps no
** samples: not worth failing the schema for. Row counts: exact when the
** sample read the whole table, else the statistics' estimate the caller
** set, and for a table never analysed a count capped at count_cap.
** A cancel stops it (a statement it cut short is not read again). 0, -1
** out of memory, -2 when the connection broke.
*/
static int sample_tables(askdb_db *db, struct pg *p, struct db_schema *out,
                         const struct pg_rel *rel)
{
    int *idx, i, j, n = 0, rc = 0, one;
    long *seen;
    char msg[256];

    idx = calloc((size_t)out->ntables + 1, sizeof *idx);
    seen = calloc((size_t)out->ntables + 1, sizeof *seen);
    if (!idx || !seen) {
        free(idx);
        free(seen);
        return -1;
    }
    for (i = 0; i < out->ntables; i++)
        if (wants_sample(db, &rel[i]))
            idx[n++] = i;
    for (i = 0; i < n && rc >= 0 && !schema_cancelled(db);
         i += SAMPLE_BATCH) {
        int m = n - i < SAMPLE_BATCH ? n - i : SAMPLE_BATCH;
        rc = sample_batch(db, p, out, rel, idx + i, m, seen + i, msg,
                          sizeof msg);
        if (rc <= 0 || schema_cancelled(db))
            continue;
        rc = schema_resume(db, p, msg, sizeof msg);
        for (j = i; j < i + m && rc == 0 && !schema_cancelled(db); j++) {
            seen[j] = 0;
            one = sample_batch(db, p, out, rel, idx + j, 1, seen + j, msg,
                               sizeof msg);
            if (one > 0) {
                seen[j] = -1; /* unknown */
                rc = schema_resume(db, p, msg, sizeof msg);
            } else {
                rc = one;
            }
        }
    }
    for (i = 0; i < n && rc >= 0 && !schema_cancelled(db); i++) {
        struct db_table *t = &out->tables[idx[i]];
        if (seen[i] >= 0 && seen[i] <= SAMPLE_ROWS) {
            t->rows = seen[i] > db->count_cap ? db->count_cap : seen[i];
            t->rows_capped = seen[i] > db->count_cap;
            t->rows_estimated = 0;
        } else if (seen[i] > SAMPLE_ROWS && rel[idx[i]].reltuples < 0 &&
                   count_table(db, p, t, &rel[idx[i]], msg,
                               sizeof msg) > 0) {
            rc = schema_resume(db, p, msg, sizeof msg);
        }
    }
    free(idx);
    free(seen);
    return rc;
}

static void free_rels(struct pg_rel *rel, int n)
{
    int i;

    for (i = 0; rel && i < n; i++) {
        free(rel[i].nsp);
        free(rel[i].attnum);
        free(rel[i].textual);
    }
    free(rel);
}

/* Run one of the schema queries over the relations of oids ($1). */
static PGresult *rels_query(askdb_db *db, struct pg *p, const char *sql,
                            const struct buf *oids, char *msg, size_t n)
{
    const char *params[1];

    params[0] = oids->data;
    return pg_query(db, p, sql, 1, params, msg, n);
}

/*
** The schema in four set-based catalog queries whatever the number of
** tables (relations, columns, foreign keys, unique keys), then the first
** rows of the tables, many tables a statement, for sample values and the
** row counts the statistics do not have. A cancel (db->cancel, sent on to
** the server) is ASKDB_ERR_CANCELLED, whatever it cut short: a query's
** "canceling statement" error or a sample's missing rows; the schema read
** so far is not kept (db_schema() frees it).
*/
static askdb_status pg_schema(askdb_db *db, struct db_schema *out)
{
    struct pg *p = PG(db);
    struct db_err e;
    struct pg_rel *rel = NULL;
    PGresult *r = NULL;
    struct buf oids;
    char msg[512] = "";
    int i, nrels = 0, bad;
    askdb_status rc;

    memset(out, 0, sizeof *out);
    /* Bare names fold to lower case here: CustomerId must be written
    ** "CustomerId", so the rendering shows it so. */
    out->case_folds = 1;
    out->says_quoted = 1;
    buf_init(&oids, 0);
    rc = pg_ready(db, p, &e);
    if (rc)
        return rc;
    if (pg_begin_schema(db, p, msg, sizeof msg) < 0) {
        /* A connection the server ended while askdb sat idle (a restart,
        ** idle_session_timeout, pg_terminate_backend) is found broken
        ** here, before anything ran: connect again once. */
        if (!p->lost)
            goto failed;
        rc = pg_ready(db, p, &e);
        if (rc)
            return rc;
        if (pg_begin_schema(db, p, msg, sizeof msg) < 0)
            goto failed;
    }
    r = pg_query(db, p, q_reserved, 0, NULL, msg, sizeof msg);
    if (!r)
        goto failed;
    if (read_reserved(r, out) < 0)
        goto nomem;
    PQclear(r);
    r = pg_query(db, p, q_tables, 0, NULL, msg, sizeof msg);
    if (!r)
        goto failed;
    nrels = PQntuples(r);
    rel = calloc((size_t)nrels + 1, sizeof *rel);
    if (!rel || read_tables(r, out, rel, &oids) < 0)
        goto nomem;
    PQclear(r);
    r = rels_query(db, p, q_columns, &oids, msg, sizeof msg);
    if (!r)
        goto failed;
    if (read_columns(r, out, rel) < 0)
        goto nomem;
    PQclear(r);
    r = rels_query(db, p, q_fkeys, &oids, msg, sizeof msg);
    if (!r)
        goto failed;
    if (read_fkeys(r, out, rel) < 0)
        goto nomem;
    PQclear(r);
    r = rels_query(db, p, q_uniques, &oids, msg, sizeof msg);
    if (!r)
        goto failed;
    if (read_uniques(r, out, rel) < 0)
        goto nomem;
    PQclear(r);
    r = NULL;
    for (i = 0; i < out->ntables; i++) {
        if (rel[i].kind != 'v' && rel[i].kind != 'f' &&
            rel[i].reltuples >= 0) {
            out->tables[i].rows = (long)rel[i].reltuples;
            out->tables[i].rows_estimated = 1;
        }
    }
    bad = sample_tables(db, p, out, rel);
    if (bad == -1)
        goto nomem;
    if (bad == -2) {
        snprintf(msg, sizeof msg, "the connection broke");
        goto failed;
    }
    if (schema_cancelled(db))
        goto failed;
    pg_rollback(db, p);
    free_rels(rel, nrels);
    buf_free(&oids);
    return ASKDB_OK;
nomem:
    PQclear(r);
    pg_rollback(db, p);
    free_rels(rel, nrels);
    buf_free(&oids);
    say(db->errmsg, sizeof db->errmsg,
        "cannot read the schema of '%s': out of memory", db->label);
    return ASKDB_ERR_NOMEM;
failed:
    /* A read the time limit or a cancel cut short leaves its session
    ** behind, as a statement's does (pg_fail): a late cancel request
    ** could cut the next statement on it short. */
    if (p->stop == STOP_CANCEL || p->stop == STOP_TIMEOUT)
        p->lost = 1;
    pg_rollback(db, p);
    free_rels(rel, nrels);
    buf_free(&oids);
    if (schema_cancelled(db)) {
        say(db->errmsg, sizeof db->errmsg, "cancelled");
        return ASKDB_ERR_CANCELLED;
    }
    say(db->errmsg, sizeof db->errmsg, "cannot read the schema of '%s': %s",
        db->label, msg);
    return ASKDB_ERR_DB;
}

/* ---------------------------------------------------------------------- */
/* The guard                                                              */
/* ---------------------------------------------------------------------- */

/*
** Functions whose effect no read-only transaction stops and no ROLLBACK
** takes back: they write the server's log (WAL) or state that lives
** outside the transaction. PUBLIC may execute each (some then check a
** role attribute or ownership: a REPLICATION role, an index's owner
** passes), but those marked superuser, which a role may have been
** granted. The ones that run a statement given as text are here because
** that text is out of this list's sight. The large object functions
** that write are here because the read-only transaction lets them. A
** name ending in '*' is a prefix. The rest of what a statement can call
** is the read-only transaction's to stop (nextval, setval, ...) or ends
** with it (set_config, pg_notify, advisory locks: see pg_rollback).
*/
static const struct db_denied_fn denied_fns[] = {
#define WAL "writes the server's log (WAL) outside the statement's transaction"
#define SLOT "changes a replication slot, which no rollback takes back"
#define TEXT "runs a statement given as text, which askdb's guard cannot read"
#define LO "writes a large object, which PostgreSQL's read-only transaction " \
           "does not stop, and takes a transaction ID that outlives its " \
           "rollback"
    {"pg_logical_emit_message", WAL},
    {"txid_current", "gives the statement a transaction ID, which outlives "
                     "its rollback"},
    {"pg_current_xact_id", "gives the statement a transaction ID, which "
                           "outlives its rollback"},
    {"pg_create_physical_replication_slot", SLOT},
    {"pg_create_logical_replication_slot", SLOT},
    {"pg_copy_physical_replication_slot", SLOT},
    {"pg_copy_logical_replication_slot", SLOT},
    {"pg_drop_replication_slot", SLOT},
    {"pg_replication_slot_advance", SLOT},
    {"pg_logical_slot_get_*", SLOT}, /* consumes changes; peek only reads */
    {"brin_summarize_*", "changes an index outside the transaction"},
    {"brin_desummarize_range", "changes an index outside the transaction"},
    {"gin_clean_pending_list", "changes an index outside the transaction"},
    /* PostgreSQL's read-only transaction does not stop a large object's
    ** writes (15: lo_create(0) returns an OID): rolled back, but each took
    ** a transaction ID, and any role may create one. */
    {"lo_create", LO},
    {"lo_creat", LO},
    {"lo_from_bytea", LO},
    {"lo_put", LO},
    {"lowrite", LO},
    {"lo_truncate*", LO},
    {"lo_unlink", LO},
    {"lo_import", LO},
    {"lo_export", "writes a file on the server, which no rollback takes "
                  "back"},
    {"query_to_xml*", TEXT},
    {"ts_stat", TEXT},
    {"ts_rewrite", TEXT},
    /* superuser, unless granted */
    {"pg_replication_origin_*", "changes replication progress outside the "
                                "transaction"},
    {"pg_stat_reset*", "resets the server's statistics outside the "
                       "transaction"},
    {"pg_switch_wal", WAL},
    {"pg_create_restore_point", WAL},
#undef WAL
#undef SLOT
#undef TEXT
#undef LO
};

/*
** Refuse a statement that calls a function of denied_fns, before anything
** reaches the server (db_denied_call(): the name with its '(', wherever
** it stands, strings and comments too). The name alone is no call: a
** column or a table named txid_current reads as any other (PostgreSQL
** calls a function only with its parentheses; none of these takes the
** one composite argument that would let "x.f" call f(x)). A quoted
** identifier with Unicode escapes (U&"...") can spell any name, so it is
** refused as such. 0, or -1 with e set.
*/
static int refuse_denied(const char *sql, struct db_err *e)
{
    const char *p;

    for (p = sql; *p; p++)
        if ((*p == 'u' || *p == 'U') && p[1] == '&' && p[2] == '"') {
            e->ec = ASKDB_EC_REFUSED;
            say(e->msg, sizeof e->msg,
                "refused: a name written with Unicode escapes (U&\"...\"); "
                "write it plainly");
            return -1;
        }
    return db_refuse_denied(sql, denied_fns,
                            sizeof denied_fns / sizeof denied_fns[0], e);
}

/*
** Open the statement's read-only transaction and prepare sql in it as the
** unnamed statement, then describe it: exactly one statement (Parse
** refuses more) with result columns. On success *desc holds the
** description (the caller PQclear()s it) and the transaction stays open;
** on failure it is rolled back and e says why.
*/
static askdb_status prepare_guarded(askdb_db *db, const char *sql,
                                    PGresult **desc, struct db_err *e)
{
    struct pg *p = PG(db);
    PGresult *r;
    char msg[512] = "";
    askdb_status rc;

    *desc = NULL;
    if (!*db_skip_filler(sql, 1))
        return db_no_sql(e);
    if (refuse_denied(sql, e) < 0)
        return ASKDB_ERR_REFUSED;
    rc = pg_ready(db, p, e);
    if (rc)
        return rc;
    if (pg_command(db, p, "BEGIN READ ONLY", db->query_timeout_ms, msg,
                   sizeof msg) < 0) {
        /* A connection found broken before anything ran (the server
        ** restarted while askdb serve sat idle) is made again once; not
        ** one askdb gave up itself (p->stop: the time limit, a Ctrl-C,
        ** then no answer to its cancel), whose limit is spent and which
        ** a reconnect would give one more of its own. */
        rc = p->lost && p->stop == STOP_NONE ? pg_ready(db, p, e)
                                             : ASKDB_ERR_DB;
        if (rc == ASKDB_OK &&
            pg_command(db, p, "BEGIN READ ONLY", db->query_timeout_ms, msg,
                       sizeof msg) < 0)
            rc = ASKDB_ERR_DB;
        if (rc && e->ec == ASKDB_EC_NONE)
            rc = pg_fail(db, p, NULL, msg, e);
        if (rc)
            goto fail;
    }
    pg_arm(p, sql, db->query_timeout_ms);
    if (!PQsendPrepare(p->conn, "", sql, 0, NULL)) {
        rc = pg_fail(db, p, NULL, PQerrorMessage(p->conn), e);
        goto fail;
    }
    r = pg_collect(db, p, msg, sizeof msg);
    if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
        rc = pg_fail(db, p, r, msg, e);
        e->pos = stmt_pos(r, sql, p->raw);
        PQclear(r);
        goto fail;
    }
    PQclear(r);
    if (!PQsendDescribePrepared(p->conn, "")) {
        rc = pg_fail(db, p, NULL, PQerrorMessage(p->conn), e);
        goto fail;
    }
    r = pg_collect(db, p, msg, sizeof msg);
    if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
        rc = pg_fail(db, p, r, msg, e);
        PQclear(r);
        goto fail;
    }
    if (PQnfields(r) == 0) {
        /* SET, COPY, DO, NOTIFY, LOCK, CREATE ...: no rows to read. */
        PQclear(r);
        e->ec = ASKDB_EC_REFUSED;
        say(e->msg, sizeof e->msg,
                 "refused: the statement returns no rows; askdb runs "
                 "queries");
        rc = ASKDB_ERR_REFUSED;
        goto fail;
    }
    if (PQnparams(r) > 0) {
        PQclear(r);
        rc = placeholder_error(e);
        goto fail;
    }
    *desc = r;
    return ASKDB_OK;
fail:
    pg_rollback(db, p);
    return rc;
}

static askdb_status pg_check(askdb_db *db, const char *sql, struct db_err *e)
{
    PGresult *desc;
    askdb_status rc = prepare_guarded(db, sql, &desc, e);

    PQclear(desc);
    if (rc == ASKDB_OK)
        pg_rollback(db, PG(db));
    return rc;
}

/* Type OIDs (pg_type.h) askdb reads as numbers, and a few names. */
enum {
    OID_BOOL = 16, OID_BYTEA = 17, OID_INT8 = 20, OID_INT2 = 21,
    OID_INT4 = 23, OID_TEXT = 25, OID_OID = 26, OID_FLOAT4 = 700,
    OID_FLOAT8 = 701, OID_BPCHAR = 1042, OID_VARCHAR = 1043,
    OID_DATE = 1082, OID_TIME = 1083, OID_TIMESTAMP = 1114,
    OID_TIMESTAMPTZ = 1184, OID_INTERVAL = 1186, OID_NUMERIC = 1700,
    OID_UUID = 2950, OID_JSON = 114, OID_JSONB = 3802
};

static const char *type_name(Oid t)
{
    switch (t) {
    case OID_BOOL: return "boolean";
    case OID_BYTEA: return "bytea";
    case OID_INT8: return "bigint";
    case OID_INT2: return "smallint";
    case OID_INT4: return "integer";
    case OID_TEXT: return "text";
    case OID_OID: return "oid";
    case OID_FLOAT4: return "real";
    case OID_FLOAT8: return "double precision";
    case OID_BPCHAR: return "character";
    case OID_VARCHAR: return "character varying";
    case OID_DATE: return "date";
    case OID_TIME: return "time without time zone";
    case OID_TIMESTAMP: return "timestamp without time zone";
    case OID_TIMESTAMPTZ: return "timestamp with time zone";
    case OID_INTERVAL: return "interval";
    case OID_NUMERIC: return "numeric";
    case OID_UUID: return "uuid";
    case OID_JSON: return "json";
    case OID_JSONB: return "jsonb";
    default: return NULL;
    }
}

static int parse_int(const char *s, int64_t *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = (int64_t)v;
    return 0;
}

/*
** A numeric as askdb shows it: an integer when it has no fraction and
** fits 64 bits (sum() of bigint is numeric), a real when a double keeps
** its whole integer part (up to 15 digits before the point: avg()), else
** text, so that no digit of a large value is lost. NaN and the
** infinities are reals, as in float8 (JSON output writes them as
** strings). money is no numeric: it stays text ("$12.50").
*/
static void numeric_value(const char *s, askdb_value *v)
{
    const char *d;
    int digits = 0;

    if (!strchr(s, '.') && parse_int(s, &v->i) == 0) {
        v->type = ASKDB_INTEGER;
        return;
    }
    d = s + (*s == '-' || *s == '+');
    while (*d == '0')
        d++;
    for (; *d >= '0' && *d <= '9'; d++)
        digits++;
    if (digits > 15) {
        v->type = ASKDB_TEXT;
        return;
    }
    v->type = ASKDB_REAL;
    v->d = strtod(s, NULL);
}

/* What one cell costs in a result: its askdb_value plus its bytes, as
** askdb keeps them (raw: SQL_ASCII text, each byte that starts no UTF-8
** character becomes U+FFFD, three bytes). */
static size_t cell_cost(const PGresult *r, int row, int col, int raw)
{
    size_t n = sizeof(askdb_value), i, k;
    size_t len = (size_t)PQgetlength(r, row, col);
    const char *s;

    if (PQgetisnull(r, row, col))
        return n;
    if (PQftype(r, col) == OID_BYTEA && len >= 2)
        return n + (len - 2) / 2; /* "\x" and two hex digits a byte */
    if (!raw)
        return n + len;
    s = PQgetvalue(r, row, col);
    for (i = 0; i < len; i += k ? k : 1)
        n += (k = text_char_len(s + i, len - i, 1)) ? k : 3;
    return n;
}

/* Fill v from cell (row, col) of r, text as valid UTF-8; -1 when out of
** memory. */
static int convert(const PGresult *r, int row, int col, askdb_value *v)
{
    const char *s = PQgetvalue(r, row, col);
    size_t len = (size_t)PQgetlength(r, row, col);
    char *dst;

    if (PQgetisnull(r, row, col)) {
        v->type = ASKDB_NULL;
        return 0;
    }
    switch (PQftype(r, col)) {
    case OID_INT2:
    case OID_INT4:
    case OID_INT8:
    case OID_OID:
        if (parse_int(s, &v->i) == 0) {
            v->type = ASKDB_INTEGER;
            return 0;
        }
        break;
    case OID_FLOAT4:
    case OID_FLOAT8:
        v->type = ASKDB_REAL;
        v->d = strtod(s, NULL);
        return 0;
    case OID_NUMERIC:
        numeric_value(s, v);
        if (v->type != ASKDB_TEXT)
            return 0;
        break;
    case OID_BOOL:
        v->type = ASKDB_INTEGER;
        v->i = s[0] == 't';
        return 0;
    case OID_BYTEA: {
        size_t n = 0;
        unsigned char *raw = PQunescapeBytea((const unsigned char *)s, &n);
        if (!raw)
            return -1;
        dst = malloc(n + 1);
        if (!dst) {
            PQfreemem(raw);
            return -1;
        }
        if (n)
            memcpy(dst, raw, n);
        dst[n] = '\0';
        PQfreemem(raw);
        v->type = ASKDB_BLOB;
        v->s = dst;
        v->len = n;
        return 0;
    }
    default:
        break;
    }
    dst = malloc(len + 1);
    if (!dst)
        return -1;
    memcpy(dst, s, len);
    dst[len] = '\0';
    if (!text_valid(dst, len)) {
        /* Only a SQL_ASCII database sends bytes that are not UTF-8. */
        dst = text_repair(dst);
        if (!dst)
            return -1;
        len = strlen(dst);
    }
    v->type = ASKDB_TEXT;
    v->s = dst;
    v->len = len;
    return 0;
}

/* The result's columns, from the statement's description. */
static askdb_result *new_result(const PGresult *desc)
{
    int i, n = PQnfields(desc);
    askdb_result *r = db_result_new(n);

    if (!r)
        return NULL;
    for (i = 0; i < n; i++) {
        const char *tn = type_name(PQftype(desc, i));
        r->cols[i] = text_repair(strdup(PQfname(desc, i)));
        r->decltypes[i] = tn ? strdup(tn) : NULL;
        if (!r->cols[i] || (tn && !r->decltypes[i])) {
            askdb_result_free(r);
            return NULL;
        }
    }
    return r;
}

/*
** Append row `row` of the single-row result pr to r unless a cap stops
** it: 0 added, 1 max_rows reached, 2 max_bytes reached, -1 out of memory.
*/
static int add_row(askdb_db *db, askdb_result *r, const PGresult *pr,
                   size_t *bytes, long *cap_cells)
{
    askdb_value *row;
    size_t row_bytes = 0;
    int i, n = r->ncols;

    if (r->nrows >= db->max_rows)
        return 1;
    for (i = 0; i < n && i < PQnfields(pr); i++)
        row_bytes += cell_cost(pr, 0, i, PG(db)->raw);
    if (db->max_bytes && *bytes + row_bytes > db->max_bytes)
        return 2;
    *bytes += row_bytes;
    row = db_result_add_row(r, cap_cells);
    if (!row)
        return -1;
    for (i = 0; i < n; i++)
        if (i < PQnfields(pr) && convert(pr, 0, i, &row[i]) < 0)
            return -1;
    return 0;
}

static askdb_status pg_run(askdb_db *db, const char *sql, askdb_result **out,
                           struct db_err *e)
{
    struct pg *p = PG(db);
    PGresult *desc = NULL, *pr, *err = NULL;
    askdb_result *r = NULL;
    askdb_status ret;
    char msg[512] = "";
    size_t bytes = 0;
    long cap_cells = 0;
    double t0 = db_now_ms();
    int k, nomem = 0, broke = 0;

    ret = prepare_guarded(db, sql, &desc, e);
    if (ret)
        return ret;
    r = new_result(desc);
    PQclear(desc);
    if (!r) {
        ret = ASKDB_ERR_NOMEM;
        goto out;
    }
    pg_arm(p, sql, db->query_timeout_ms);
    if (!PQsendQueryPrepared(p->conn, "", 0, NULL, NULL, NULL, 0)) {
        ret = pg_fail(db, p, NULL, PQerrorMessage(p->conn), e);
        goto out;
    }
    /* Rows one at a time, so that the caps apply as they arrive; the
    ** statement is cancelled once they are reached. */
    (void)PQsetSingleRowMode(p->conn);
    for (;;) {
        if (pg_wait(db, p, msg, sizeof msg) < 0) {
            broke = 1;
            break;
        }
        pr = PQgetResult(p->conn);
        if (!pr)
            break;
        switch (PQresultStatus(pr)) {
        case PGRES_SINGLE_TUPLE:
            if (p->stop != STOP_NONE || nomem)
                break; /* draining after a stop */
            k = add_row(db, r, pr, &bytes, &cap_cells);
            if (k < 0) {
                nomem = 1;
                send_cancel(p, STOP_ENOUGH);
            } else if (k > 0) {
                r->truncated = k;
                send_cancel(p, STOP_ENOUGH);
            }
            break;
        case PGRES_TUPLES_OK:
        case PGRES_COMMAND_OK:
            break;
        default:
            if (!err) {
                err = pr;
                pr = NULL;
            }
            break;
        }
        PQclear(pr);
        if (*p->unsent) {
            /* No cancel went out for the rows past the cap: they are
            ** not waited for, and the session goes with them. */
            p->lost = 1;
            break;
        }
    }
    if (nomem) {
        ret = ASKDB_ERR_NOMEM;
    } else if (broke) {
        ret = pg_fail(db, p, NULL, msg, e);
    } else if (err && p->stop == STOP_ENOUGH) {
        ret = ASKDB_OK; /* the cancel we sent after the last row we keep */
    } else if (err) {
        ret = pg_fail(db, p, err, msg, e);
    } else if (p->stop == STOP_CANCEL) {
        ret = pg_fail(db, p, NULL, msg, e);
    } else {
        ret = ASKDB_OK;
    }
    if (ret == ASKDB_OK) {
        r->exec_ms = db_now_ms() - t0;
        *out = r;
        r = NULL;
    }
out:
    if (ret == ASKDB_ERR_NOMEM) {
        e->ec = ASKDB_EC_RUNTIME;
        say(e->msg, sizeof e->msg, "out of memory reading the result");
    }
    PQclear(err);
    askdb_result_free(r);
    if (!p->lost)
        pg_rollback(db, p);
    return ret;
}

const struct db_driver db_postgres_driver = {
    "postgresql", "PostgreSQL", pg_open, pg_close, pg_schema, pg_check,
    pg_run, NULL
};

#else /* !ASKDB_HAVE_LIBPQ */

/* A build without libpq still knows the URL, and says what is missing. */
static askdb_status pg_open(askdb_db *db, const char *path)
{
    (void)path;
    snprintf(db->errmsg, sizeof db->errmsg,
             "cannot open '%s': this askdb was built without PostgreSQL "
             "support (install libpq-dev, then rebuild)", db->label);
    return ASKDB_ERR_DB_OPEN;
}

static void pg_close(askdb_db *db)
{
    db->impl = NULL;
}

static askdb_status pg_schema(askdb_db *db, struct db_schema *out)
{
    (void)db;
    memset(out, 0, sizeof *out);
    return ASKDB_ERR_UNSUPPORTED;
}

static askdb_status pg_check(askdb_db *db, const char *sql, struct db_err *e)
{
    (void)db;
    (void)sql;
    e->ec = ASKDB_EC_RUNTIME;
    snprintf(e->msg, sizeof e->msg, "PostgreSQL support is not built in");
    return ASKDB_ERR_UNSUPPORTED;
}

static askdb_status pg_run(askdb_db *db, const char *sql, askdb_result **out,
                           struct db_err *e)
{
    *out = NULL;
    return pg_check(db, sql, e);
}

const struct db_driver db_postgres_driver = {
    "postgresql", "PostgreSQL", pg_open, pg_close, pg_schema, pg_check,
    pg_run, NULL
};

#endif
