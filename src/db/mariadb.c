/* mariadb.c - the MariaDB/MySQL driver: URL, read-only session, schema,
** guard. */
#include "db/driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/text.h"

#ifndef ASKDB_HAVE_MARIADB

/* Built without libmariadb: the scheme is known, and says what is missing. */
static askdb_status my_open(askdb_db *db, const char *path)
{
    (void)path;
    snprintf(db->errmsg, sizeof db->errmsg,
             "cannot open '%s': this askdb was built without MariaDB/MySQL "
             "support (install libmariadb-dev and rebuild)", db->label);
    return ASKDB_ERR_DB_OPEN;
}

static void my_close(askdb_db *db)
{
    db->impl = NULL;
}

static askdb_status my_schema(askdb_db *db, struct db_schema *out)
{
    (void)db;
    (void)out;
    return ASKDB_ERR_DB;
}

static askdb_status my_check(askdb_db *db, const char *sql, struct db_err *e)
{
    (void)db;
    (void)sql;
    e->ec = ASKDB_EC_RUNTIME;
    return ASKDB_ERR_DB;
}

static askdb_status my_run(askdb_db *db, const char *sql, askdb_result **out,
                           struct db_err *e)
{
    (void)out;
    return my_check(db, sql, e);
}

#else /* ASKDB_HAVE_MARIADB */

#include <errmsg.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <poll.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/watch.h"

/*
** Defence in layers, each enough on its own for what it covers:
**   1. the text: one statement (nothing but blanks, comments and ';' after
**      it), starting with SELECT, WITH, VALUES, TABLE, SHOW, DESCRIBE,
**      EXPLAIN or '('; no executable comment (/x! ... x/), no function
**      that reads server files or holds locks past the statement
**      (LOAD_FILE, GET_LOCK, ...), no BENCHMARK() (a KILL QUERY of it
**      from another session cannot be told from its end), no INTO
**      OUTFILE/DUMPFILE, no sequence step; the scan knows the session's
**      quoting (ANSI_QUOTES, NO_BACKSLASH_ESCAPES), so nothing hides in
**      what it takes for a string or a comment;
**   2. the prepared-statement protocol: it runs exactly one statement,
**      cannot run LOAD DATA, LOCK, HANDLER and friends, and says how many
**      columns a statement returns: one that returns none is refused
**      before it runs (SET, DO, CALL, INTO @var, INTO OUTFILE);
**   3. the session is READ ONLY and each statement runs inside START
**      TRANSACTION READ ONLY: the server refuses writes even for a user
**      that may write; after it COM_RESET_CONNECTION rolls back and
**      clears what the statement left in the session (named locks a
**      DEFINER view took, user and session variables), and askdb's
**      settings go again before the next one (session_ready);
**   4. the client never sends a local file: MYSQL_OPT_LOCAL_INFILE is off
**      (again after the option files were read) and the local-infile
**      handler refuses; the session never takes several statements in
**      one query: askdb never asks for CLIENT_MULTI_STATEMENTS, and an
**      option file's multi-statements is turned off on the server after
**      the login (MYSQL_OPTION_MULTI_STATEMENTS_OFF), or no session;
**      the library never reconnects by itself (MYSQL_OPT_RECONNECT off,
**      again after the option files): a lost session fails, and askdb
**      opens the next one with its settings before any statement; an
**      option file's init-command, which the library runs on connecting
**      before askdb's settings, refuses the connection;
**   5. limits: max_statement_time (MariaDB) or max_execution_time (MySQL)
**      and lock_wait_timeout on the server, a watchdog thread that sends
**      KILL QUERY from a second connection at the deadline or on cancel
**      (and gives the session up when the kill gets no answer, or on
**      cancel when the kill connection is refused), socket
**      read timeouts for a server that hangs, sql_select_limit for
**      rows and a byte count while fetching (then KILL QUERY too).
*/

/* How the URL asks for TLS. */
enum ssl_mode { SSL_DEFAULT, SSL_DISABLE, SSL_REQUIRE, SSL_VERIFY };

/* A parsed mariadb:// URL; NULL fields were not given (the option files or
** the library's defaults apply). Strings are malloc()ed. */
struct murl {
    char *user, *password, *host, *database, *socket;
    char *sslca, *sslcert, *sslkey;
    unsigned port;
    unsigned connect_timeout;
    enum ssl_mode ssl;
};

/*
** The watchdog (db/watch.h) stops a statement of the main connection with
** KILL QUERY from the kill connection, at the deadline (asking first what
** the statement was doing, for the message) or when the cancel flag is
** raised, looked at every WATCH_TICK_MS; the statement's own thread kills
** it too when its result is full (WATCH_FULL).
*/
#define WATCH_TICK_MS 50
#define WATCH_FULL 3
/* How long a stop waits for the kill connection in all (stop_statement()):
** the connect and the greeting, the login's answer, the question's and
** the kill's, through the library's non-blocking calls (nb_wait()).
** KILL_IO_S is the same in the library's unit, seconds, for its own
** timeouts on each step, which come no sooner. */
#define KILL_MS 2000
#define KILL_IO_S (KILL_MS / 1000)

struct my {
    MYSQL *h;            /* the session questions run in */
    MYSQL *killer;       /* second connection for KILL QUERY, lazily */
    struct murl url;
    int mariadb;         /* MariaDB (else MySQL): which timeout variable */
    unsigned long server_version; /* 101119 for 10.11.19 */
    int dead;            /* the connection was lost: reconnect first */
    int setup;           /* the session holds askdb's settings (read-only,
                            sql_mode, ...): session_ready() */
    int set_timeout_ms;  /* the limits the session holds now, -1 none */
    long set_max_rows;
    unsigned lacks;      /* LACKS_ bits: optional settings refused */
    unsigned long thread_id;
    struct db_watch w;
    unsigned long watched_id; /* thread_id of the statement watched: what
                            stops kill (a reconnect rewrites thread_id
                            while a stop may still run) */
    int no_server;       /* a stop's: the kill connection was refused */
    int unanswered;      /* a stop's: the kill connection got no answer */
    char unheard[200];   /* a stop's: what it got instead, when it did not */
    unsigned refused_no; /* a stop's: the kill connection was refused by
                            a server that answered (1040, ...), or failed
                            otherwise: its error number, 1 for askdb's */
    char refusal[360];   /* a stop's: askdb's words for that, "" none */
    char state[64];      /* (w.mu) what the statement did at the deadline */
    char gone[400];      /* (w.mu) why the session was given up (cut_off):
                            askdb's words, "" when it was not */
    unsigned gone_no;    /* (w.mu) its error number */
    const atomic_int *cancel;
};

static struct my *MY(askdb_db *db)
{
    return db->impl;
}

/* ---------------------------------------------------------------------- */
/* The URL                                                                */
/* ---------------------------------------------------------------------- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decode s[0..n) into a new string; NULL when out of memory, and
** *bad set when an escape is broken or decodes to a NUL byte. */
static char *pct_decode(const char *s, size_t n, int *bad)
{
    char *out = malloc(n + 1), *o = out;
    size_t i;
    int hi, lo;

    if (!out)
        return NULL;
    for (i = 0; i < n; i++) {
        if (s[i] != '%') {
            *o++ = s[i];
            continue;
        }
        hi = i + 2 < n ? hexval((unsigned char)s[i + 1]) : -1;
        lo = i + 2 < n ? hexval((unsigned char)s[i + 2]) : -1;
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
            *bad = 1;
            free(out);
            return NULL;
        }
        *o++ = (char)(hi * 16 + lo);
        i += 2;
    }
    *o = '\0';
    return out;
}

static void murl_free(struct murl *u)
{
    char **f[] = {&u->user, &u->password, &u->host, &u->database,
                  &u->socket, &u->sslca, &u->sslcert, &u->sslkey};
    size_t i;

    for (i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (*f[i] && f[i] == &u->password)
            memset(*f[i], 0, strlen(*f[i]));
        free(*f[i]);
        *f[i] = NULL;
    }
}

/* Decode s[0..n) into *dst (replacing it). 0, or -1 with err set. */
static int take(char **dst, const char *s, size_t n, const char *what,
                char *err, size_t en)
{
    int bad = 0;
    char *v = pct_decode(s, n, &bad);

    if (!v) {
        snprintf(err, en, bad ? "the %s has a broken %%-escape (write %%XX "
                                "with two hex digits, not %%00)"
                              : "out of memory reading the %s", what);
        return -1;
    }
    free(*dst);
    *dst = v;
    return 0;
}

static int parse_uint(const char *s, size_t n, unsigned max, unsigned *out)
{
    unsigned long v = 0;
    size_t i;

    if (n == 0 || n > 9)
        return -1;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v == 0 || v > max)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* One query parameter key=value (value still encoded). */
static int url_param(struct murl *u, const char *k, size_t kn, const char *v,
                     size_t vn, char *err, size_t en)
{
    char *val = NULL;
    int rc = 0;

#define KEY(name) (kn == sizeof(name) - 1 && strncmp(k, name, kn) == 0)
    if (KEY("socket"))
        return take(&u->socket, v, vn, "socket path", err, en);
    if (KEY("password"))
        return take(&u->password, v, vn, "password", err, en);
    if (KEY("sslca") || KEY("ssl_ca"))
        return take(&u->sslca, v, vn, "sslca path", err, en);
    if (KEY("sslcert") || KEY("ssl_cert"))
        return take(&u->sslcert, v, vn, "sslcert path", err, en);
    if (KEY("sslkey") || KEY("ssl_key"))
        return take(&u->sslkey, v, vn, "sslkey path", err, en);
    if (KEY("connect_timeout")) {
        if (parse_uint(v, vn, 3600, &u->connect_timeout) == 0)
            return 0;
        snprintf(err, en, "connect_timeout must be whole seconds, 1 to 3600");
        return -1;
    }
    /* sslmode as PostgreSQL's URLs write it, ssl_mode as MySQL's
    ** options: the same values in either spelling. */
    if (KEY("ssl") || KEY("sslmode") || KEY("ssl_mode")) {
        if (take(&val, v, vn, "ssl value", err, en))
            return -1;
        if (!strcasecmp(val, "disable") || !strcasecmp(val, "disabled") ||
            !strcasecmp(val, "false") || !strcmp(val, "0"))
            u->ssl = SSL_DISABLE;
        else if (!strcasecmp(val, "require") ||
                 !strcasecmp(val, "required") || !strcasecmp(val, "true") ||
                 !strcmp(val, "1"))
            u->ssl = SSL_REQUIRE;
        else if (!strcasecmp(val, "verify-ca") ||
                 !strcasecmp(val, "verify_ca") ||
                 !strcasecmp(val, "verify-full") ||
                 !strcasecmp(val, "verify_identity") ||
                 !strcasecmp(val, "verify"))
            u->ssl = SSL_VERIFY;
        else if (!strcasecmp(val, "prefer") || !strcasecmp(val, "preferred"))
            u->ssl = SSL_DEFAULT;
        else {
            snprintf(err, en, "%.*s=%.40s is not one of disable, prefer, "
                              "require, verify-ca, verify-full", (int)kn, k,
                     val);
            rc = -1;
        }
        free(val);
        return rc;
    }
#undef KEY
    snprintf(err, en, "unknown URL parameter '%.*s' (known: socket, "
                      "password, ssl (or sslmode, ssl_mode), sslca (ssl_ca), "
                      "sslcert (ssl_cert), sslkey (ssl_key), "
                      "connect_timeout)", (int)(kn > 40 ? 40 : kn), k);
    return -1;
}

/*
** Parse mariadb://[user[:password]@][host|[v6]][:port][/database][?k=v&...]
** (also mysql://) into u. User, password, database and values are
** percent-decoded; the last '@' before the path ends the user part, so an
** '@' in a password works even unencoded. A host that decodes to a path
** (mariadb://%2Frun%2Fmysqld%2Fmysqld.sock/shop) is a socket; a socket
** goes with no host but localhost and no port. Returns 0, or -1 with a
** message in err that never holds the password.
*/
static int murl_parse(const char *url, struct murl *u, char *err, size_t en)
{
    size_t k = db_url_scheme(url);
    const char *p, *end, *at = NULL, *hp, *q, *colon;

    memset(u, 0, sizeof *u);
    if (!k || !((k == 7 && strncasecmp(url, "mariadb", 7) == 0) ||
                (k == 5 && strncasecmp(url, "mysql", 5) == 0))) {
        snprintf(err, en, "not a mariadb:// or mysql:// URL");
        return -1;
    }
    p = url + k + 3;
    if (strchr(p, '#')) {
        snprintf(err, en, "the URL has a '#': write it as %%23 (in a "
                          "password, too)");
        return -1;
    }
    end = p + strcspn(p, "/?");
    for (q = p; q < end; q++)
        if (*q == '@')
            at = q;
    if (at) {
        colon = memchr(p, ':', (size_t)(at - p));
        if (take(&u->user, p, (size_t)((colon ? colon : at) - p), "user",
                 err, en))
            goto bad;
        if (colon && take(&u->password, colon + 1,
                          (size_t)(at - colon - 1), "password", err, en))
            goto bad;
        p = at + 1;
    }
    /* host and port */
    hp = p;
    if (*hp == '[') {
        q = memchr(hp, ']', (size_t)(end - hp));
        if (!q) {
            snprintf(err, en, "an IPv6 host needs its closing ']'");
            goto bad;
        }
        if (take(&u->host, hp + 1, (size_t)(q - hp - 1), "host", err, en))
            goto bad;
        q++;
    } else {
        q = hp + strcspn(hp, ":/?");
        if (q > end)
            q = end;
        if (q > hp && take(&u->host, hp, (size_t)(q - hp), "host", err, en))
            goto bad;
    }
    if (q < end && *q == ':') {
        if (parse_uint(q + 1, (size_t)(end - q - 1), 65535, &u->port)) {
            snprintf(err, en, "the port must be a number from 1 to 65535");
            goto bad;
        }
    } else if (q != end) {
        snprintf(err, en, "unexpected text after the host");
        goto bad;
    }
    if (u->host && !u->host[0]) {
        free(u->host);
        u->host = NULL;
    }
    if (u->host && u->host[0] == '/') { /* a socket given as the host */
        free(u->socket);
        u->socket = u->host;
        u->host = NULL;
    }
    if (u->user && !u->user[0]) {
        free(u->user);
        u->user = NULL;
    }
    p = end;
    if (*p == '/') {
        q = p + 1 + strcspn(p + 1, "?");
        if (memchr(p + 1, '/', (size_t)(q - p - 1))) {
            snprintf(err, en, "the path must be just the database name");
            goto bad;
        }
        if (q > p + 1 &&
            take(&u->database, p + 1, (size_t)(q - p - 1), "database", err,
                 en))
            goto bad;
        p = q;
    }
    if (*p == '?')
        p++;
    while (*p) {
        size_t n = strcspn(p, "&"), kn;
        const char *eq = memchr(p, '=', n);
        if (n) {
            if (!eq) {
                snprintf(err, en, "URL parameter '%.*s' needs a value "
                                  "(key=value)", (int)(n > 40 ? 40 : n), p);
                goto bad;
            }
            kn = (size_t)(eq - p);
            if (url_param(u, p, kn, eq + 1, n - kn - 1, err, en))
                goto bad;
        }
        p += n;
        if (*p == '&')
            p++;
    }
    /* A socket reaches a server on this machine. Given another host too,
    ** the library connects to that host over TCP and never looks at the
    ** socket; given a port, it takes the socket and ignores the port. So
    ** a URL with both is refused, not read as one of them. */
    if (u->socket && u->host && strcmp(u->host, "localhost") != 0) {
        snprintf(err, en, "it names a host (%.60s) and a socket (%.80s), "
                          "and one would be ignored: drop ?socket= to "
                          "connect to the host over TCP, or write the host "
                          "as localhost to use the socket", u->host,
                 u->socket);
        goto bad;
    }
    if (u->socket && u->port) {
        snprintf(err, en, "it names a port (%u) and a socket (%.80s), and "
                          "the port would be ignored: drop the port to use "
                          "the socket, or drop ?socket= to connect over TCP",
                 u->port, u->socket);
        goto bad;
    }
    return 0;
bad:
    murl_free(u);
    return -1;
}

/* ---------------------------------------------------------------------- */
/* Connecting                                                             */
/* ---------------------------------------------------------------------- */

/* The client never sends a file, whatever the server asks and whatever an
** option file says about local-infile. */
static int li_init(void **ptr, const char *name, void *ud)
{
    (void)name;
    (void)ud;
    *ptr = NULL;
    return 1;
}

static int li_read(void *ptr, char *buf, unsigned int n)
{
    (void)ptr;
    (void)buf;
    (void)n;
    return -1;
}

static void li_end(void *ptr)
{
    (void)ptr;
}

static int li_error(void *ptr, char *msg, unsigned int n)
{
    (void)ptr;
    snprintf(msg, n, "askdb never sends local files (LOAD DATA LOCAL)");
    return CR_UNKNOWN_ERROR;
}

/* Seconds, rounded up, at least 1. */
static unsigned ceil_s(int ms)
{
    return ms <= 0 ? 1 : (unsigned)((ms + 999) / 1000);
}

/* What to do about a failed connection, by its error number (and for a
** TLS error, the library's words in msg). */
static const char *connect_advice(unsigned no, const char *msg,
                                  const struct murl *u)
{
    switch (no) {
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
        return "is the server running, and are the host and port (or "
               "?socket=PATH) in the URL right?";
    case CR_UNKNOWN_HOST:
        return "check the host name in the URL";
    case ER_ACCESS_DENIED_ERROR:
        return "check the user and password (in the URL, or password= in "
               "the [client] or [askdb] group of ~/.my.cnf)";
    case ER_DBACCESS_DENIED_ERROR:
    case ER_BAD_DB_ERROR:
        return "check the database name at the end of the URL and that "
               "this user may read it";
    case ER_HOST_NOT_PRIVILEGED:
        return "the server does not accept this user from this host: "
               "connect from an allowed host, or ask its administrator";
    case ER_CON_COUNT_ERROR:
    case ER_TOO_MANY_USER_CONNECTIONS:
        return "the server has too many connections: try again later";
    case CR_SSL_CONNECTION_ERROR:
        /* The server offers TLS, and its certificate failed the check:
        ** turning TLS on there is not the answer. (An alert is the
        ** server's word on askdb's own certificate: "sslv3 alert
        ** certificate expired".) */
        if (strstr(msg, "alert"))
            return "the server ended the TLS handshake (an alert: its word "
                   "on askdb's client certificate, or on the TLS versions "
                   "and ciphers): check sslcert= and sslkey=, and what the "
                   "server requires of its clients";
        if (strstr(msg, "certificate"))
            return "the server's certificate was not accepted: check that "
                   "sslca= names the CA that signed it, and that the URL's "
                   "host is a name the certificate carries (ssl=verify "
                   "checks it, ssl=require does not)";
        if (u->ssl == SSL_REQUIRE || u->ssl == SSL_VERIFY)
            return "the URL asks for TLS (ssl=require or verify): enable "
                   "TLS on the server (ssl_cert and ssl_key), check "
                   "sslca=, or connect without ssl=";
        return "check the TLS settings (ssl=, sslca=) and the server's "
               "certificate";
    case CR_SERVER_LOST:
    case CR_SERVER_GONE_ERROR:
        return "the server closed the connection while connecting: is "
               "this a MariaDB or MySQL server, and is it healthy?";
    default:
        return "check the URL and that the server is running";
    }
}

/* Replace each copy of secret (4 bytes or more) in msg by "xxx", in case
** a message ever echoes what the user typed in its place. */
static void scrub(char *msg, const char *secret)
{
    size_t sl = secret ? strlen(secret) : 0;
    char *p;

    if (sl < 4)
        return;
    while ((p = strstr(msg, secret)) != NULL) {
        memmove(p + 3, p + sl, strlen(p + sl) + 1);
        memcpy(p, "xxx", 3);
    }
}

/* How many init-commands the option files gave the library (askdb sets
** none): it ran them while connecting. */
static unsigned init_commands(MYSQL *m)
{
    char **cmds = NULL;
    unsigned n = 0;

    if (mysql_get_optionv(m, MYSQL_INIT_COMMAND, (void *)&cmds, &n))
        return 0;
    return cmds ? n : 0;
}

/* How often a wait with a cancel flag looks at it (nb_wait()). */
#define NB_CANCEL_MS 50

/*
** Wait for what a call of the library's non-blocking API waits for
** (status: MYSQL_WAIT_READ, _WRITE or _EXCEPT on m's socket, and
** MYSQL_WAIT_TIMEOUT for the library's own timeout), until deadline (ms
** on db_now_ms()'s clock) at the latest; returns what to go on with (the
** _cont() call's status): the events that came, or MYSQL_WAIT_TIMEOUT.
**
** A step the deadline ends cannot be taken up again (the protocol is out
** of step), so m's socket is shut then, with errno ETIMEDOUT: the library
** ends the call with its words for a timeout of its own ("system error:
** 110"), and a call over TLS, which reads on when told of a timeout,
** finds the socket closed and ends too.
**
** With cancel (may be NULL), a Ctrl-C ends the wait as the deadline
** does, within NB_CANCEL_MS: a reconnect, which has no statement on the
** server for a stop to kill, is cut short by it (connect_main()).
*/
static int nb_wait(MYSQL *m, int status, double deadline,
                   const atomic_int *cancel)
{
    struct pollfd p;
    double until = deadline, left;
    int n, stopped = 0;

    if (status & MYSQL_WAIT_TIMEOUT) {
        double lib = db_now_ms() + mysql_get_timeout_value_ms(m);
        if (lib < until)
            until = lib;
    }
    p.fd = mysql_get_socket(m);
    p.events = (short)(((status & MYSQL_WAIT_READ) ? POLLIN : 0) |
                       ((status & MYSQL_WAIT_WRITE) ? POLLOUT : 0) |
                       ((status & MYSQL_WAIT_EXCEPT) ? POLLPRI : 0));
    for (;;) {
        p.revents = 0;
        left = ceil(until - db_now_ms());
        if (left < 0)
            left = 0;
        if (cancel && left > NB_CANCEL_MS)
            left = NB_CANCEL_MS;
        n = poll(&p, 1, left > INT_MAX ? -1 : (int)left);
        if (cancel && atomic_load(cancel)) {
            stopped = 1;
            break;
        }
        if (n > 0 || (n < 0 && errno != EINTR) || db_now_ms() >= until)
            break;
    }
    if (n > 0 && !stopped) {
        /* An error or a hang-up is for the library's read or write to
        ** find: it says what happened. */
        if (p.revents & (POLLERR | POLLHUP | POLLNVAL))
            p.revents |= p.events & (POLLIN | POLLOUT);
        return ((p.revents & POLLIN) ? MYSQL_WAIT_READ : 0) |
               ((p.revents & POLLOUT) ? MYSQL_WAIT_WRITE : 0) |
               ((p.revents & POLLPRI) ? MYSQL_WAIT_EXCEPT : 0);
    }
    if (stopped || until >= deadline)
        shutdown(p.fd, SHUT_RDWR);
    errno = ETIMEDOUT;
    return MYSQL_WAIT_TIMEOUT |
           (status & (MYSQL_WAIT_READ | MYSQL_WAIT_WRITE));
}

/* The transport askdb sets for u (settings()), or 0 for the library's
** default. */
static unsigned url_protocol(const struct murl *u)
{
    if (u->socket)
        return MYSQL_PROTOCOL_SOCKET;
    /* "localhost" would mean the default socket to the library; a port
    ** says TCP. */
    if (u->host && u->port)
        return MYSQL_PROTOCOL_TCP;
    return 0;
}

/*
** What an option file set that askdb does not connect with, on m once the
** library has read the files (files_probe(), or a connect):
**  - a TLS promise of the URL's undone: ssl-enforce (tls-enforce) 0 under
**    ssl=require or verify (the login in plain text), ssl-verify-server-
**    cert (tls-verify-peer) off under ssl=verify (no check of the
**    server's host name; the library takes only 1 as on), an ssl-ca
**    (tls-ca) in place of the URL's sslca= or an ssl-capath (tls-capath)
**    beside it (other CAs trusted);
**  - a transport other than the URL's (protocol: a port's TCP taken back
**    to the default, which is the default socket for localhost);
**  - a connect timeout the library takes as none (connect-timeout or
**    timeout 0, negative, or over INT_MAX / 1000 s, which its socket code
**    multiplies into a negative int): a server that greets none, or
**    stalls the TLS handshake, would hold askdb for ever;
**  - before connecting (before), an init-command, which the library
**    would run on connecting, ahead of askdb's read-only settings.
** Says which in err and returns 1.
*/
static int files_refused(MYSQL *m, const struct murl *u, int before,
                         char *err, size_t en)
{
    static const char groups[] = "the [client], [client-server], "
                                 "[client-mariadb] and [askdb] groups";
    const char *done = before ? "askdb did not connect"
                              : "the login went ahead; nothing was run";
    my_bool verify = 0, enforce = 0;
    const char *ca = NULL, *capath = NULL;
    unsigned ct = 1, proto = 0;

    if (before && init_commands(m)) {
        snprintf(err, en, "an option file sets init-command, which the "
                          "library would run on connecting, before askdb "
                          "could make the session read-only; askdb runs no "
                          "statement it did not check (%s): remove "
                          "init-command from %s (the mariadb command's own "
                          "group is [mysql])", done, groups);
        return 1;
    }
    if ((u->ssl == SSL_REQUIRE || u->ssl == SSL_VERIFY) &&
        (mysql_get_optionv(m, MYSQL_OPT_SSL_ENFORCE, &enforce) ||
         !enforce)) {
        snprintf(err, en, "an option file sets ssl-enforce (or "
                          "tls-enforce) off, which would send the login "
                          "without the TLS that the URL's ssl=%s asks for "
                          "(%s): remove it from %s",
                 u->ssl == SSL_REQUIRE ? "require" : "verify", done,
                 groups);
        return 1;
    }
    if (u->ssl == SSL_VERIFY &&
        (mysql_get_optionv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify) ||
         !verify)) {
        snprintf(err, en, "an option file sets ssl-verify-server-cert (or "
                          "tls-verify-peer) to other than 1, the only value "
                          "the library takes as on, which turns off the "
                          "check of the server's host name that the URL's "
                          "ssl=verify asks for (%s): remove it from %s",
                 done, groups);
        return 1;
    }
    if (u->sslca && (mysql_get_optionv(m, MYSQL_OPT_SSL_CA, &ca) || !ca ||
                     strcmp(ca, u->sslca))) {
        snprintf(err, en, "an option file sets ssl-ca (or tls-ca), which "
                          "replaces the URL's sslca= as the CA the server's "
                          "certificate is checked against (%s): remove it "
                          "from %s, or sslca= from the URL", done, groups);
        return 1;
    }
    if (u->sslca && !mysql_get_optionv(m, MYSQL_OPT_SSL_CAPATH, &capath) &&
        capath) {
        snprintf(err, en, "an option file sets ssl-capath (or tls-capath), "
                          "whose CAs would be trusted beside the URL's "
                          "sslca= (%s): remove it from %s, or sslca= from "
                          "the URL", done, groups);
        return 1;
    }
    if (url_protocol(u) &&
        (mysql_get_optionv(m, MYSQL_OPT_PROTOCOL, &proto) ||
         proto != url_protocol(u))) {
        snprintf(err, en, "an option file sets protocol, which would "
                          "connect otherwise than the URL says (%s; the "
                          "library reads only its number, so protocol=tcp "
                          "is 0, the default: the default socket for "
                          "localhost) (%s): remove it from %s",
                 u->socket ? "over its socket" : "over TCP to its port",
                 done, groups);
        return 1;
    }
    if (!mysql_get_optionv(m, MYSQL_OPT_CONNECT_TIMEOUT, &ct) &&
        (ct == 0 || ct > INT_MAX / 1000)) {
        snprintf(err, en, "an option file sets connect-timeout (or "
                          "timeout) to %d, which the library takes as no "
                          "time limit at all (0, a negative number or more "
                          "than %d s): it would wait for ever for a server "
                          "that does not answer (%s): remove it, or give "
                          "askdb its own in an [askdb] group after it "
                          "(connect-timeout=10)", (int)ct, INT_MAX / 1000,
                 done);
        return 1;
    }
    return 0;
}

/*
** A connect's guard. Over TLS the library reads in the TLS library itself
** (the handshake, the login's answer, askdb's first SET), not in a wait
** of its non-blocking calls, so nb_wait() never looks at the cancel flag
** there: a Ctrl-C, or a program's cancel of an open (askdb serve's stop),
** was heeded only at the connect timeout. The guard's thread looks at the
** flag every NB_CANCEL_MS and, when it is raised, shuts the connection's
** socket: the TLS library's read fails at once, as after nb_wait()'s
** shut. It shuts a copy of the socket (its own until guard_end()), so
** that a socket the library closed, whose number another connection may
** take meanwhile, is never shut; a new socket (the library tries the
** next address of the host) gets a new copy (guard_socket()). The lookup
** of the host's name, inside the library's first call, has no socket:
** nothing cuts it short (docs/engines/mariadb.md).
*/
struct guard {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    int started;             /* th runs: mu, cv and th to end */
    int quit;                /* (mu) */
    int fd;                  /* (mu) the copy, or -1 */
    ino_t ino;               /* (mu) the socket it copies */
    const atomic_int *cancel;
};

static void *guard_main(void *arg)
{
    struct guard *g = arg;
    struct timespec ts;

    pthread_mutex_lock(&g->mu);
    while (!g->quit) {
        if (g->fd >= 0 && atomic_load(g->cancel)) {
            shutdown(g->fd, SHUT_RDWR);
            break;
        }
        clockx_deadline_in(&ts, NB_CANCEL_MS);
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

/* Guard a connect that cancel (NULL: none, and no thread) may stop. When
** no thread can start, the connect goes unguarded, as before. */
static void guard_start(struct guard *g, const atomic_int *cancel)
{
    pthread_attr_t attr;

    memset(g, 0, sizeof *g);
    g->fd = -1;
    g->cancel = cancel;
    if (!cancel || pthread_mutex_init(&g->mu, NULL))
        return;
    if (pthread_cond_init(&g->cv, NULL)) {
        pthread_mutex_destroy(&g->mu);
        return;
    }
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    g->started = pthread_create(&g->th, &attr, guard_main, g) == 0;
    pthread_attr_destroy(&attr);
    if (!g->started) {
        pthread_cond_destroy(&g->cv);
        pthread_mutex_destroy(&g->mu);
    }
}

/* The connection's socket is sock now (g may be NULL: unguarded). */
static void guard_socket(struct guard *g, int sock)
{
    struct stat st;

    if (!g || !g->started || sock < 0 || fstat(sock, &st))
        return;
    pthread_mutex_lock(&g->mu);
    if (g->fd < 0 || g->ino != st.st_ino) {
        if (g->fd >= 0)
            close(g->fd);
        g->fd = fcntl(sock, F_DUPFD_CLOEXEC, 0);
        g->ino = st.st_ino;
    }
    pthread_mutex_unlock(&g->mu);
}

/* The connect is over, well or not: no shut reaches its socket after. */
static void guard_end(struct guard *g)
{
    if (!g->started)
        return;
    pthread_mutex_lock(&g->mu);
    g->quit = 1;
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->th, NULL);
    if (g->fd >= 0)
        close(g->fd);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    g->started = 0;
}

/* mysql_real_connect() of m as u says, done by deadline (ms on
** db_now_ms()'s clock; 0: none but the library's timeouts) or a cancel
** (nb_wait(), and over TLS g: may be NULL). */
static MYSQL *connect_until(MYSQL *m, const struct murl *u, double deadline,
                            const atomic_int *cancel, struct guard *g)
{
    MYSQL *ret = NULL;
    int st;

    /* No CLIENT_MULTI_STATEMENTS: the server itself takes one statement.
    ** CLIENT_REMEMBER_OPTIONS keeps the options of a failed connect, the
    ** option files' among them, for connect_one()'s mysql_get_optionv(). */
    st = mysql_real_connect_start(&ret, m, u->host, u->user, u->password,
                                  u->database, u->port, u->socket,
                                  CLIENT_REMEMBER_OPTIONS);
    if (!deadline)
        deadline = HUGE_VAL;
    while (st) {
        guard_socket(g, mysql_get_socket(m));
        st = mysql_real_connect_cont(&ret, m,
                                     nb_wait(m, st, deadline, cancel));
    }
    return ret;
}

/* MYSQL_OPTION_MULTI_STATEMENTS_OFF on m, done by deadline as
** connect_until() (0: the blocking call). Returns 0 when the server took
** it. */
static int multi_off(MYSQL *m, double deadline, const atomic_int *cancel)
{
    int ret = 1, st;

    if (!deadline)
        return mysql_set_server_option(m, MYSQL_OPTION_MULTI_STATEMENTS_OFF);
    st = mysql_set_server_option_start(&ret, m,
                                       MYSQL_OPTION_MULTI_STATEMENTS_OFF);
    while (st)
        st = mysql_set_server_option_cont(&ret, m,
                                          nb_wait(m, st, deadline, cancel));
    return ret;
}

/* The coroutine stack of a handle's non-blocking calls: the login (the
** option files, a TLS handshake) runs on it, and nothing guards its end.
*/
#define NB_STACK (256 * 1024)

/*
** askdb's settings of a handle for u (ct: the connect timeout, rt: the
** read and write timeouts, in seconds), before the option files' groups
** ([client], [client-server], [client-mariadb], [askdb]), which the
** library reads in its connect, after them: what the files set wins.
** What must not be theirs is refused before connecting (files_probe())
** or set again once connected (local-infile, reconnect), and the connect
** timeout they may have set is read back (connect_one()'s ct_used) for
** the message.
*/
static void settings(MYSQL *m, const struct murl *u, unsigned ct,
                     unsigned rt)
{
    unsigned zero = 0, proto;
    my_bool yes = 1, no = 0;

    mysql_optionsv(m, MYSQL_READ_DEFAULT_GROUP, "askdb");
    mysql_optionsv(m, MYSQL_OPT_LOCAL_INFILE, &zero);
    mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
    mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &rt);
    mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &rt);
    mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    mysql_optionsv(m, MYSQL_OPT_RECONNECT, &no);
    if ((proto = url_protocol(u)) != 0)
        mysql_optionsv(m, MYSQL_OPT_PROTOCOL, &proto);
    if (u->ssl == SSL_DISABLE) {
        mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &no);
    } else if (u->ssl != SSL_DEFAULT || u->sslca || u->sslcert) {
        mysql_ssl_set(m, u->sslkey, u->sslcert, u->sslca, NULL, NULL);
        if (u->ssl == SSL_REQUIRE || u->ssl == SSL_VERIFY)
            mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &yes);
        mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT,
                       u->ssl == SSL_VERIFY ? &yes : &no);
    }
    mysql_set_local_infile_handler(m, li_init, li_read, li_end, li_error,
                                   NULL);
}

/* A Unix socket no server can listen on: a path under /proc, where no
** file can be made. */
#define NO_SERVER "/proc/self/askdb-no-server"

/* How long the check of the option files may take (files_probe()). */
#define PROBE_MS 2000

/*
** The option files, read for u before connecting: the library exports no
** reader of them, but reads them at the start of every connect, so a
** handle with askdb's settings connects where no server can be - a
** socket under /proc, or localhost's port 1 over TCP (the URL's port, or
** a file's protocol=1, says TCP) - with an empty password (none of the
** files' or MYSQL_PWD's) and a deadline of its own, and fails, nothing
** sent, its options kept (CLIENT_REMEMBER_OPTIONS) for files_refused().
** So what askdb does not connect with is refused before a login, a TLS
** handshake or an init-command, over any transport. Returns 1 with err
** set if so.
*/
static int files_probe(const struct murl *u, unsigned ct, unsigned rt,
                       char *err, size_t en)
{
    MYSQL *p = mysql_init(NULL), *ret = NULL;
    size_t stack = NB_STACK;
    double deadline = db_now_ms() + PROBE_MS;
    int refused, st;

    if (!p || mysql_optionsv(p, MYSQL_OPT_NONBLOCK, &stack)) {
        snprintf(err, en, "out of memory");
        mysql_close(p);
        return 1;
    }
    settings(p, u, ct, rt);
    st = mysql_real_connect_start(&ret, p, "localhost", "askdb", "", NULL,
                                  1, NO_SERVER, CLIENT_REMEMBER_OPTIONS);
    while (st)
        st = mysql_real_connect_cont(&ret, p, nb_wait(p, st, deadline,
                                                      NULL));
    if (ret) {
        /* Something took it: whatever it is, askdb says nothing to it. */
        snprintf(err, en, "askdb's check of the option files reached a "
                          "server at %s or localhost port 1", NO_SERVER);
        mysql_close(p);
        return 1;
    }
    refused = files_refused(p, u, 1, err, en);
    mysql_close(p);
    return refused;
}

/*
** Open one connection as the URL says, with the client-side guards (no
** local files, no multiple statements, timeouts: io_s seconds for each
** read or write once connected - the library applies them only then, the
** connect timeout before, the server's greeting and the login included:
** the URL's, or 10 s, at most ct_max when that is not 0), all of it done
** by deadline when that is not 0 (ms on db_now_ms()'s clock), or ended
** by a cancel (may be NULL; nb_wait(), and over TLS g, which may be NULL:
** struct guard). Returns
** the handle, or NULL with what failed in err - the library's words,
** with its error number in *eno, or askdb's (*eno 0) - which never holds
** the password - and in *ct_used (may be NULL) the connect timeout the
** library went by. That is not always askdb's: the library reads the
** option files when it connects, after every mysql_optionsv() here, so
** their connect-timeout (or timeout) wins over the URL's; what askdb does
** not connect with is refused before (files_probe()). The handle takes
** the library's non-blocking calls (exec() with a deadline).
*/
static MYSQL *connect_one(const struct murl *u, unsigned ct_max,
                          unsigned io_s, double deadline,
                          const atomic_int *cancel, struct guard *g,
                          char *err, size_t en, unsigned *eno,
                          unsigned *ct_used)
{
    MYSQL *m = mysql_init(NULL);
    unsigned ct = u->connect_timeout ? u->connect_timeout : 10;
    unsigned rt = io_s, zero = 0;
    size_t stack = NB_STACK;
    my_bool no = 0;

    if (ct_max && ct > ct_max)
        ct = ct_max;
    *eno = 0;
    if (ct_used)
        *ct_used = ct;
    if (!m) {
        snprintf(err, en, "out of memory");
        return NULL;
    }
    if (files_probe(u, ct, rt, err, en)) {
        mysql_close(m);
        return NULL;
    }
    settings(m, u, ct, rt);
    if (mysql_optionsv(m, MYSQL_OPT_NONBLOCK, &stack)) {
        snprintf(err, en, "out of memory");
        mysql_close(m);
        return NULL;
    }
    if (!connect_until(m, u, deadline, cancel, g)) {
        *eno = mysql_errno(m);
        snprintf(err, en, "%s", mysql_error(m));
        scrub(err, u->password);
        if (ct_used)
            (void)mysql_get_optionv(m, MYSQL_OPT_CONNECT_TIMEOUT, ct_used);
        mysql_close(m);
        return NULL;
    }
    /* The library may fall back to plain text where the server offers no
    ** TLS; the URL said it must not. */
    if ((u->ssl == SSL_REQUIRE || u->ssl == SSL_VERIFY) &&
        !mysql_get_ssl_cipher(m)) {
        snprintf(err, en, "the URL asks for TLS (ssl=%s) but the server "
                          "does not offer it; enable TLS on the server "
                          "(ssl_cert and ssl_key), or connect without ssl=",
                 u->ssl == SSL_REQUIRE ? "require" : "verify");
        mysql_close(m);
        return NULL;
    }
    /* The same as files_probe() found none of, for a file changed since:
    ** the login went ahead, and nothing runs. */
    if (files_refused(m, u, 0, err, en)) {
        mysql_close(m);
        return NULL;
    }
    /* Again, after the option files: an option file's local-infile must
    ** not turn it back on. */
    mysql_optionsv(m, MYSQL_OPT_LOCAL_INFILE, &zero);
    mysql_set_local_infile_handler(m, li_init, li_read, li_end, li_error,
                                   NULL);
    /* And its reconnect: the library would connect again behind askdb's
    ** back when a send fails, and send the statement on a fresh session
    ** that has none of askdb's settings (read-only, the limits, the
    ** quoting), its KILL QUERY going to the old session's id. A lost
    ** session fails instead, and askdb connects again (revive), its
    ** settings first. */
    mysql_optionsv(m, MYSQL_OPT_RECONNECT, &no);
    /* And its multi-statements (multi-queries): the login asked for
    ** CLIENT_MULTI_STATEMENTS, and the server would take several
    ** statements in one query on this session. Turned off on the server
    ** (COM_SET_OPTION, which COM_RESET_CONNECTION keeps), or no session:
    ** askdb runs nothing on one that takes them. */
    if ((m->client_flag & CLIENT_MULTI_STATEMENTS) &&
        multi_off(m, deadline, cancel)) {
        /* The library's own error (lost, timed out) is what connect_main
        ** words; the server's refusal is askdb's words alone. */
        if (mysql_errno(m) >= 2000 && mysql_errno(m) < 3000)
            *eno = mysql_errno(m);
        snprintf(err, en, "an option file asks for multi-statements and "
                          "the server did not turn them off again (%s); "
                          "remove multi-statements (or multi-queries) "
                          "from its [client], [client-server], "
                          "[client-mariadb] and [askdb] groups",
                 mysql_error(m));
        mysql_close(m);
        return NULL;
    }
    /* And its init-command, which files_probe() found none of: a file
    ** changed since. The library ran it on connecting, after the login and
    ** before askdb's settings, in a session that could write; askdb runs
    ** nothing on a session where a statement it did not check ran. */
    if (init_commands(m)) {
        snprintf(err, en, "an option file sets init-command, which the "
                          "library ran on connecting, before askdb could "
                          "make the session read-only; askdb runs no "
                          "statement it did not check: remove init-command "
                          "from the [client], [client-server], "
                          "[client-mariadb] and [askdb] groups (the mariadb "
                          "command's own group is [mysql])");
        mysql_close(m);
        return NULL;
    }
    return m;
}

/*
** Did a connect fail for its timeout (no answer) rather than a refusal?
** The library reports both as CR_CONNECTION_ERROR or CR_CONN_HOST_ERROR
** and tells them apart only by the system's error number, which it puts
** at the end of its message: "Can't connect to server on '127.0.0.1'
** (110)", ETIMEDOUT, against (111) for ECONNREFUSED. A TLS handshake
** that got no answer in time is a TLS error (CR_SSL_CONNECTION_ERROR)
** the same way: "TLS/SSL error: Connection timed out (110)".
*/
static int connect_timed_out(unsigned no, const char *msg)
{
    char tag[16];
    size_t ml = strlen(msg), tl;

    if (no != CR_CONNECTION_ERROR && no != CR_CONN_HOST_ERROR &&
        no != CR_SSL_CONNECTION_ERROR)
        return 0;
    tl = (size_t)snprintf(tag, sizeof tag, " (%d)", ETIMEDOUT);
    return ml >= tl && strcmp(msg + ml - tl, tag) == 0;
}

/* Did the server close the connection (or go away)? */
static int gone(unsigned no)
{
    return no == CR_SERVER_LOST || no == CR_SERVER_GONE_ERROR;
}

/*
** Run one statement of askdb's own, its whole answer read by deadline
** (ms on db_now_ms()'s clock; 0: none but the socket's timeouts, the
** blocking calls; HUGE_VAL: the same through the non-blocking calls,
** which a cancel ends, as nb_wait() does any deadline). Its
** rows, or NULL, in *out when out is not NULL (the caller frees them
** with mysql_free_result()), else dropped. 0 or the error number.
*/
static unsigned ask(MYSQL *h, const char *sql, double deadline,
                    const atomic_int *cancel, MYSQL_RES **out)
{
    MYSQL_RES *r = NULL;
    unsigned long len = (unsigned long)strlen(sql);
    int failed = 0, st;

    if (out)
        *out = NULL;
    if (!deadline) {
        failed = mysql_real_query(h, sql, len);
        if (!failed)
            r = mysql_store_result(h);
    } else {
        st = mysql_real_query_start(&failed, h, sql, len);
        while (st)
            st = mysql_real_query_cont(&failed, h,
                                       nb_wait(h, st, deadline, cancel));
        if (!failed) {
            st = mysql_store_result_start(&r, h);
            while (st)
                st = mysql_store_result_cont(&r, h,
                                             nb_wait(h, st, deadline,
                                                     cancel));
        }
    }
    if (failed)
        return mysql_errno(h) ? mysql_errno(h) : 1;
    if (out && !mysql_errno(h))
        *out = r;
    else
        mysql_free_result(r);
    return mysql_errno(h);
}

/* ask() with the rows dropped. */
static unsigned exec(MYSQL *h, const char *sql, double deadline,
                     const atomic_int *cancel)
{
    return ask(h, sql, deadline, cancel, NULL);
}

/* How much later than askdb's own deadline the server's comes. */
#define SERVER_GRACE_MS 250

/* The settings a server may lack (s->lacks): left out once refused. */
#define LACKS_DIV_PRECISION 1u
#define LACKS_INNODB 2u

/* One setting of askdb's session ("SESSION name = value"), and the
** LACKS_ bit of one the session can do without (0: required). */
struct setting {
    char text[80];
    unsigned optional;
};

/* The most settings_due() gives. */
#define MAX_SETTINGS 12

/* The settings the session lacks now, into set[MAX_SETTINGS]; how many. */
static int settings_due(const askdb_db *db, const struct my *s,
                        struct setting *set)
{
    int n = 0;

    memset(set, 0, MAX_SETTINGS * sizeof *set);
    if (!s->setup) {
        /* Read-only, ANSI quoting (double quotes name things, ||
        ** concatenates: the dialect the model writes), standard string
        ** literals. tx_read_only is transaction_read_only since MySQL
        ** 5.7.20 (the only name in 8.0) and MariaDB 11.1. */
        snprintf(set[n++].text, sizeof set->text, "SESSION %s = 1",
                 s->server_version >= (s->mariadb ? 110100ul : 50720ul)
                     ? "transaction_read_only" : "tx_read_only");
        snprintf(set[n++].text, sizeof set->text,
                 "SESSION sql_mode = 'ANSI,NO_BACKSLASH_ESCAPES'");
        snprintf(set[n++].text, sizeof set->text, "SESSION autocommit = 1");
        /* The connection's character set, as the handshake asked it
        ** (MYSQL_SET_CHARSET_NAME): MariaDB's reset keeps it, MySQL's
        ** puts the server's default back (latin1 on 5.7). */
        snprintf(set[n++].text, sizeof set->text,
                 "SESSION character_set_client = utf8mb4");
        snprintf(set[n++].text, sizeof set->text,
                 "SESSION character_set_connection = utf8mb4");
        snprintf(set[n++].text, sizeof set->text,
                 "SESSION character_set_results = utf8mb4");
        /* Division and AVG to 30 decimals, not the default 4: AVG(x) of
        ** 1, 1 and 2 is then 1.333333333333333 as a double, as on the
        ** other engines, not 1.3333. Not required: a server that refuses
        ** it still answers, to 4 decimals. */
        if (!(s->lacks & LACKS_DIV_PRECISION)) {
            set[n].optional = LACKS_DIV_PRECISION;
            snprintf(set[n++].text, sizeof set->text,
                     "SESSION div_precision_increment = 30");
        }
    }
    if (s->set_timeout_ms != db->query_timeout_ms) {
        /* The server's limit comes a little after the watchdog's, which
        ** looks at what the statement waits for before it kills it; the
        ** lock waits end after both. */
        if (s->mariadb)
            snprintf(set[n++].text, sizeof set->text,
                     "SESSION max_statement_time = %.3f",
                     (db->query_timeout_ms + SERVER_GRACE_MS) / 1000.0);
        else
            snprintf(set[n++].text, sizeof set->text,
                     "SESSION max_execution_time = %d",
                     db->query_timeout_ms + SERVER_GRACE_MS);
        snprintf(set[n++].text, sizeof set->text,
                 "SESSION lock_wait_timeout = %u",
                 ceil_s(db->query_timeout_ms) + 1);
        /* Only with InnoDB; a server without it has no row locks to wait
        ** for. */
        if (!(s->lacks & LACKS_INNODB)) {
            set[n].optional = LACKS_INNODB;
            snprintf(set[n++].text, sizeof set->text,
                     "SESSION innodb_lock_wait_timeout = %u",
                     ceil_s(db->query_timeout_ms) + 1);
        }
    }
    if (s->set_max_rows != db->max_rows)
        /* One row over the cap, so that a truncated result shows. */
        snprintf(set[n++].text, sizeof set->text,
                 "SESSION sql_select_limit = %ld", db->max_rows + 1);
    return n;
}

/*
** Make the session askdb's (read-only, ANSI quoting, the limits of db)
** where it is not: after the connect, after each statement (session_reset
** put the server's defaults back) and when db's limits changed. One
** round trip, a single SET; when the server refuses it, the settings one
** by one, and an optional one refused is left out from then on; all of
** it answered by deadline (exec()). Returns 0, or the error number with
** db->errmsg set.
*/
static unsigned session_ready(askdb_db *db, struct my *s, double deadline)
{
    struct setting set[MAX_SETTINGS];
    char sql[MAX_SETTINGS * (sizeof set->text + 2) + 8];
    char one[sizeof set->text + 8];
    const char *what = sql;
    size_t k = 0;
    int i, n = settings_due(db, s, set);
    unsigned no;

    if (n == 0)
        return 0;
    k += (size_t)snprintf(sql, sizeof sql, "SET");
    for (i = 0; i < n && k < sizeof sql; i++)
        k += (size_t)snprintf(sql + k, sizeof sql - k, "%s %s",
                              i ? "," : "", set[i].text);
    no = exec(s->h, sql, deadline, s->cancel);
    if (no && !gone(no)) {
        /* One by one, to find the one the server refuses. */
        what = one;
        for (i = 0, no = 0; i < n && !no; i++) {
            snprintf(one, sizeof one, "SET %.*s", (int)sizeof set->text,
                     set[i].text);
            no = exec(s->h, one, deadline, s->cancel);
            if (no && !gone(no) && set[i].optional) {
                s->lacks |= set[i].optional;
                no = 0;
            }
        }
    }
    if (no) {
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot make the session on '%s' read-only (%.200s: %s); "
                 "askdb runs nothing on a session it cannot guard",
                 db->label, what, mysql_error(s->h));
        return no;
    }
    s->setup = 1;
    s->set_timeout_ms = db->query_timeout_ms;
    s->set_max_rows = db->max_rows;
    return 0;
}

/*
** After a statement: the session as askdb made it, whatever the statement
** did. COM_RESET_CONNECTION ends the transaction (the ROLLBACK), releases
** named locks (GET_LOCK in a view or a DEFINER function), drops user
** variables, temporary tables and prepared statements, and puts every
** session variable back to the server's default, so that what a DEFINER
** function set (max_statement_time = 0, sql_select_limit) is gone too;
** askdb's own settings go again before the next statement (session_ready,
** one SET). A session that cannot be reset (MySQL before 5.7.3) is closed
** and opened anew before the next statement.
*/
static void session_reset(struct my *s)
{
    if (mysql_reset_connection(s->h) == 0) {
        s->setup = 0;
        s->set_timeout_ms = -1;
        s->set_max_rows = -1;
        return;
    }
    s->dead = 1;
}

/* Did the server take the connection and not greet it in time? The
** library says CR_SERVER_LOST, "... 'handshake: reading initial
** communication packet', system error: 110", ETIMEDOUT at the end. */
static int greeting_timed_out(unsigned no, const char *msg)
{
    char tag[32];
    size_t ml = strlen(msg), tl;

    if (no != CR_SERVER_LOST)
        return 0;
    tl = (size_t)snprintf(tag, sizeof tag, "system error: %d", ETIMEDOUT);
    return ml >= tl && strcmp(msg + ml - tl, tag) == 0;
}

/* The least time a reconnect has (connect_main()): a server that runs
** greets, logs in and answers a SET within it however slow its
** statements, as it answers the kill connection within KILL_MS. */
#define RECONNECT_MIN_MS 2000

/* Did a Ctrl-C (s->cancel) cut the connect, a reconnect or a statement
** short? */
static int cancelled(const struct my *s)
{
    return s->cancel && atomic_load(s->cancel);
}

/* The message of a connect (again: a reconnect) that a Ctrl-C cut short. */
static void say_cancelled(askdb_db *db, int again)
{
    snprintf(db->errmsg, sizeof db->errmsg,
             "cancelled while connecting %sto '%s'", again ? "again " : "",
             db->label);
}

/*
** (Re)connect the main session. 0, or -1 with db->errmsg set. A
** reconnect (again), made by the statement after a lost connection, is
** part of that statement: the whole of it - the connect, the server's
** greeting, the login and the session's first SET - gets the statement's
** time limit (RECONNECT_MIN_MS at least; a shorter connect_timeout of
** the URL stays for the connect, the greeting and the login), not 10 s
** for the greeting and the session's read timeout (the limit and 10 s
** more, which its statements need) for the SET. The first connect has
** no deadline of askdb's: the library's timeouts bound it, the connect
** timeout until the login, the read timeout for the SET. Both go through
** the library's non-blocking calls, so that a Ctrl-C (s->cancel, which
** askdb_db_cancel() or askdb_agent_cancel() set while the handle is
** being opened) cuts either short within NB_CANCEL_MS, as there is no
** statement on the server to stop (say_cancelled()), over TLS too, whose
** reads wait in the TLS library (struct guard); but for what the library
** waits for without askdb and without a socket: the lookup of the host's
** name.
*/
static int connect_main(askdb_db *db, struct my *s, int again)
{
    char why[400], within[160] = "";
    const char *v;
    unsigned no, limit = ceil_s(db->query_timeout_ms);
    unsigned ct = s->url.connect_timeout ? s->url.connect_timeout : 10;
    int ms = db->query_timeout_ms > RECONNECT_MIN_MS ? db->query_timeout_ms
                                                     : RECONNECT_MIN_MS;
    double deadline = again ? db_now_ms() + ms : HUGE_VAL;
    struct guard g;
    int timed_out, late;
    unsigned used, kept;

    if (limit < 2)
        limit = 2;
    /* The connect timeout askdb gave the library (connect_one()). */
    kept = again && limit < ct ? limit : ct;
    /* A read waits for a statement's answer, which its time limit
    ** bounds: the limit and 10 s more. */
    /* Over TLS from the connect to the session's first SET. */
    guard_start(&g, s->cancel);
    s->h = connect_one(&s->url, again ? limit : 0,
                       ceil_s(db->query_timeout_ms) + 10, deadline,
                       s->cancel, &g, why, sizeof why, &no, &used);
    if (s->h) {
        v = mysql_get_server_info(s->h);
        snprintf(db->version, sizeof db->version, "%s", v ? v : "");
        s->mariadb = v && strstr(v, "MariaDB") != NULL;
        s->server_version = mysql_get_server_version(s->h);
        s->thread_id = mysql_thread_id(s->h);
        s->setup = 0;
        s->set_timeout_ms = -1;
        s->set_max_rows = -1;
        no = session_ready(db, s, deadline);
        guard_end(&g);
        if (!no) {
            s->dead = 0;
            return 0;
        }
        snprintf(why, sizeof why, "%s", mysql_error(s->h));
        mysql_close(s->h);
        s->h = NULL;
        /* A SET refused, or a session lost otherwise: session_ready()'s
        ** words say it. */
        if (!cancelled(s) && (!again || db_now_ms() < deadline))
            return -1;
    }
    guard_end(&g);
    if (cancelled(s)) {
        say_cancelled(db, again);
        return -1;
    }
    /* A connect, greeting, login or SET that timed out heard nothing:
    ** not a server that closed the connection, nor one refused. */
    late = again && db_now_ms() >= deadline;
    timed_out = late || connect_timed_out(no, why) ||
                greeting_timed_out(no, why);
    /* The wait named is the one the library kept: an option file's
    ** connect-timeout replaces askdb's (connect_one), and on a reconnect
    ** askdb's may be the statement's limit (kept) - whose timeout may
    ** fire a hair before the deadline. */
    if (late || (timed_out && used == kept && kept != ct))
        snprintf(within, sizeof within, " within the statement's %d ms "
                 "time limit (--timeout; 2 s at least)",
                 db->query_timeout_ms);
    else if (timed_out && used != kept &&
             s->url.connect_timeout)
        snprintf(within, sizeof within, " within %u s (connect-timeout of "
                 "an option file, over the URL's connect_timeout=%u; "
                 "remove it there to use the URL's)", used,
                 s->url.connect_timeout);
    else if (timed_out && used != kept)
        snprintf(within, sizeof within, " within %u s (connect-timeout of "
                 "an option file)", used);
    else if (timed_out)
        snprintf(within, sizeof within, " within %u s (%sconnect_timeout)",
                 kept, s->url.connect_timeout ? "" : "the default ");
    if (no)
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot %s '%s'%s: %s (error %u); %s",
                 again ? "reconnect to" : "connect to", db->label, within,
                 why, no,
                 timed_out ? "the server did not answer in time: check "
                             "that it runs and is reachable, then ask again"
                           : connect_advice(no, why, &s->url));
    else
        snprintf(db->errmsg, sizeof db->errmsg, "cannot %s '%s': %s",
                 again ? "reconnect to" : "connect to", db->label, why);
    return -1;
}

/* ---------------------------------------------------------------------- */
/* The watchdog                                                           */
/* ---------------------------------------------------------------------- */

/*
** The stops run without w.mu (db/watch.h), so that the statement's thread
** never waits for a kill connection being made, or a question being
** asked on it: on a slow server that takes seconds, while the statement
** may end meanwhile (the server's own limit ends it at the same
** deadline). What they share with the statement's thread: the kill
** connection, no_server, unanswered and refused_no with their words
** (theirs alone: one stop runs at a time, watch_start() settles it, and
** my_close() comes after db_watch_end()), watched_id (set before the arm),
** and what reaches the statement - its socket shut, the KILL QUERY sent,
** state and gone written - which goes holding w.mu, while the statement
** runs (db_watch_hold()); its thread reads state and gone once it
** disarmed.
*/

/*
** Give the session up while its statement runs: its socket is shut, so
** that the statement ends now, its connection lost, and s->gone says why
** (askdb's words), with the error number no (s->h is its thread's, and
** in use). For a kill connection refused (killer()), or a kill that got
** no answer (stop_statement()).
*/
static void cut_off(struct my *s, const char *why, unsigned no)
{
    if (!db_watch_hold(&s->w))
        return;
    snprintf(s->gone, sizeof s->gone, "%s", why);
    s->gone_no = no;
    shutdown(mysql_get_socket(s->h), SHUT_RDWR);
    db_watch_release(&s->w);
}

/* The kill connection got no answer (the library's words in what): noted
** for the stop, and closed; killer() opens none again for this
** statement. */
static void no_answer(struct my *s, const char *what)
{
    s->unanswered = 1;
    snprintf(s->unheard, sizeof s->unheard, "%s", what);
    if (s->killer) {
        mysql_close(s->killer);
        s->killer = NULL;
    }
}

/*
** What to do about a kill connection the server refused, for the words
** of a stop cut short by it.
*/
static const char *refusal_advice(unsigned no, const char *msg,
                                  const struct murl *u)
{
    switch (no) {
    case ER_CON_COUNT_ERROR:
        return "askdb stops a statement from a second connection: raise "
               "the server's max_connections, or close idle sessions";
    case ER_TOO_MANY_USER_CONNECTIONS:
        return "askdb stops a statement from a second connection of the "
               "same user: raise its max_user_connections, or close its "
               "idle sessions";
    default:
        return connect_advice(no, msg, u);
    }
}

/*
** The kill connection refused by a server that answers (too many
** connections, the user's limit, a host blocked) or failed for another
** reason than no server or no answer: noted for the stop, with askdb's
** words in s->refusal; killer() opens none again for this statement.
*/
static void refused(struct my *s, unsigned no, const char *err)
{
    s->refused_no = no ? no : 1;
    if (!no)
        snprintf(s->refusal, sizeof s->refusal, "askdb could not open "
                 "its kill connection: %s", err);
    else if (no < 2000 || (no >= 3000 && no < 5000))
        /* the server's: the library's own are 2000-2999 (CR_) and 5000
        ** on (CR_ERR_NET_READ, CR_ERR_LOAD_PLUGIN, ...) */
        snprintf(s->refusal, sizeof s->refusal, "the server refused "
                 "askdb's kill connection: %.120s (error %u), and the "
                 "statement runs on there until its time limit; %s", err,
                 no, refusal_advice(no, err, &s->url));
    else
        snprintf(s->refusal, sizeof s->refusal, "askdb could not open "
                 "its kill connection: %.120s (error %u); %s", err, no,
                 connect_advice(no, err, &s->url));
}

/*
** The kill connection, opened at its first use, by a stop, by until (the
** stop's deadline, ms on db_now_ms()'s clock). NULL when it cannot be
** opened, and from then on for the statement when it found no server or
** no answer, or was refused (refused()). A stop waits KILL_MS in all for
** its answers, the server's greeting included: a greeting, a login, a
** kill or a processlist row comes at once from a server that runs,
** however slow its statements, while a connection kept from an earlier
** statement over a network since gone silent hears nothing at all, and
** only its read timeout sent askdb on to connect anew (it was 15 s).
**
** When the connection is refused (no), nothing listens where the
** session's server was, or its host is unreachable: the server stopped,
** or its host or the network to it went away, and the statement with it,
** though the session's socket may not hear of it before its read timeout
** (the time limit and 10 s more; a host that is gone sends no FIN). The
** session is cut off at once. A connection taken but never greeted
** (CR_SERVER_LOST: a stopped server's kernel, a proxy or firewall that
** holds it) is no answer (stop_statement()), and so is a connect that
** timed out (connect_timed_out()): its SYNs went unanswered, as when a
** running server's accept queue is full or a link drops packets, and the
** statement may well run on. Any other failure is a refusal: a server
** that answers with an error (ER_CON_COUNT_ERROR, too many connections;
** the user's max_user_connections) runs, and ends the statement itself
** at its own limit, but not before; stop_statement() decides.
*/
static MYSQL *killer(struct my *s, double until)
{
    char err[200], why[300];
    unsigned no;

    if (!s->killer && !s->no_server && !s->unanswered && !s->refused_no) {
        s->killer = connect_one(&s->url, KILL_IO_S, KILL_IO_S, until, NULL,
                                NULL, err, sizeof err, &no, NULL);
        if (s->killer)
            return s->killer;
        if (gone(no) || connect_timed_out(no, err)) {
            no_answer(s, err);
        } else if (no == CR_CONNECTION_ERROR || no == CR_CONN_HOST_ERROR) {
            s->no_server = 1;
            snprintf(why, sizeof why, "askdb's KILL QUERY found no server "
                     "at the session's address: %s", err);
            cut_off(s, why, no);
        } else if (db_now_ms() >= until) {
            /* Ended by the stop's deadline, whatever the library called
            ** it (over TLS a handshake cut short is a TLS error): no
            ** answer, not a refusal. */
            no_answer(s, err);
        } else {
            refused(s, no, err);
        }
    }
    return s->killer;
}

/* The main session usable: connected again when it was lost (dead) or
** never made. 0, or -1 with db->errmsg set (and cancelled(s) when a
** Ctrl-C cut the reconnect short). */
static int revive(askdb_db *db, struct my *s)
{
    if (!s->dead && s->h)
        return 0;
    if (s->h)
        mysql_close(s->h);
    s->h = NULL;
    /* The caller's flag: an agent points db->cancel at its own after the
    ** open, and a check or the schema may come before any run. */
    s->cancel = db->cancel;
    return connect_main(db, s, 1);
}

/*
** A kill connection the server closed while it sat idle (wait_timeout, a
** KILL, a restart): closed here, so that killer() opens it anew, at once
** for the caller's one retry.
*/
static void drop_killer(struct my *s)
{
    mysql_close(s->killer);
    s->killer = NULL;
}

/*
** What the main session's statement is doing (the processlist's STATE,
** "Waiting for table metadata lock"), into s->state while it runs, asked
** by until (the stop's deadline). Asked at the deadline, before the kill,
** so that a timeout can say it was a lock another session holds.
*/
static void probe_state(struct my *s, double until)
{
    char sql[128];
    MYSQL *k = NULL;
    MYSQL_RES *r;
    MYSQL_ROW row;
    int tries;

    snprintf(sql, sizeof sql,
             "SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = %lu",
             s->watched_id);
    for (tries = 0; tries < 2; tries++) {
        int kept = s->killer != NULL;
        unsigned no;
        if ((k = killer(s, until)) == NULL)
            return;
        no = ask(k, sql, until, NULL, &r);
        if (!no)
            break;
        if (!gone(no))
            return;
        if (!kept) {
            /* A new connection, greeted and logged in, that hears
            ** nothing by the stop's deadline: the server's threads are
            ** stuck, or something between holds what is sent. No KILL
            ** QUERY follows (kill_query() finds no kill connection):
            ** the deadline has passed, and the session is cut off
            ** (stop_statement()): the server ends the statement when it
            ** finds its connection gone, at the latest as it sends the
            ** result, and at the deadline its own limit ends it as
            ** well. */
            no_answer(s, mysql_error(k));
            return;
        }
        drop_killer(s);
    }
    if (tries == 2)
        return;
    if (r && (row = mysql_fetch_row(r)) != NULL && row[0] &&
        db_watch_hold(&s->w)) {
        snprintf(s->state, sizeof s->state, "%s", row[0]);
        db_watch_release(&s->w);
    }
    mysql_free_result(r);
}

/* KILL QUERY the main session's statement from the kill connection, if
** it still runs, answered by until (the stop's deadline). Returns 0 when
** the server took the kill, or there was nothing left to kill. */
static int kill_query(struct my *s, double until)
{
    char sql[64];
    MYSQL *k;
    int tries;

    snprintf(sql, sizeof sql, "KILL QUERY %lu", s->watched_id);
    for (tries = 0; tries < 2; tries++) {
        unsigned no;
        int kept = s->killer != NULL;

        if ((k = killer(s, until)) == NULL)
            return -1;
        /* Sent while the statement runs, and answered before its thread
        ** goes on: a kill on its way still would reach what the session
        ** runs next. */
        if (!db_watch_hold(&s->w))
            return 0;
        no = exec(k, sql, until, NULL);
        db_watch_release(&s->w);
        if (no == 0)
            return 0;
        /* Any failure closes it (opened anew next time); only a closed
        ** one kept from before is worth a second try now: a new one
        ** that is closed or hears nothing is no answer. */
        if (gone(no) && !kept) {
            no_answer(s, mysql_error(k));
            return -1;
        }
        drop_killer(s);
        if (!gone(no))
            return -1;
    }
    return -1;
}

/*
** The watchdog's stop (without w.mu): KILL QUERY, after asking, at the
** deadline, what the statement was doing.
**
** When the kill connection gets no answer (killer()), the kill is not
** delivered and askdb cannot know that the statement ends: on a server
** that takes connections and answers none (stopped with SIGSTOP; a
** proxy or firewall that holds them; a network that went silent past
** the handshake) the session hears nothing either, and its read timeout
** (the time limit and 10 s more) was all that ended the wait: 30 s
** after a Ctrl-C, 11 to 21 s with --timeout 1000, then reported as a
** timeout. So at the deadline and on Ctrl-C the session is cut off then,
** as for a refused kill connection: KILL_MS after the stop began, in all,
** whichever step heard nothing (it was up to 2 s for each step, so 6 to
** 8 s for a server that answered each just in time). A kept kill
** connection that hears nothing by then is tried anew, on a new
** connection whose connect gets no more wait: one refused at once (no
** server) is told from one that hears nothing.
** What the user sees decides the rule. A server that runs answers the
** kill connection within KILL_MS, however slow its statements, and a
** kill it answered is never cut: the statement ends by it.
** At the deadline the server's own limit (SERVER_GRACE_MS later) ends
** the statement too, so a server that is merely slow to greet reports
** its timeout before the cut can come (cut_off() reaches a statement
** only while it runs). On Ctrl-C the user is told "cancelled" either
** way; the next statement connects again. A statement cut short at its
** rows or bytes (WATCH_FULL) is not cut off: its rows are kept.
**
** A kill connection the server refused (refused(): too many connections,
** most likely) leaves the kill undelivered too, by a server that runs.
** On Ctrl-C the session is cut off then, with the refusal's words: the
** user asked to stop now, and the statement would run on to the
** server's own limit, --timeout later (30 s by default), while the
** server ends it there itself. At the deadline it is not: that same
** limit ends the statement SERVER_GRACE_MS later, reported as the
** timeout it is, and the session is kept (a new one may well be refused
** too).
*/
static void stop_statement(void *ud, int why)
{
    struct my *s = ud;
    char gone_why[300];
    double until = db_now_ms() + KILL_MS;

    if (why == DB_WATCH_DEADLINE)
        probe_state(s, until);
    kill_query(s, until);
    if (s->unanswered && why != WATCH_FULL) {
        snprintf(gone_why, sizeof gone_why, "the server did not answer "
                 "askdb's KILL QUERY within %d s: %s", KILL_MS / 1000,
                 s->unheard);
        cut_off(s, gone_why, CR_SERVER_LOST);
    } else if (s->refused_no && why == DB_WATCH_CANCEL) {
        cut_off(s, s->refusal, s->refused_no);
    }
}

/* A statement starts (deadline in ms, 0 = none). Without a thread the
** server's own limit still holds. */
static void watch_start(struct my *s, double deadline)
{
    /* The last statement's stop may still be under way: what the stops
    ** share is the main thread's once it is over. */
    db_watch_settle(&s->w);
    s->state[0] = '\0';
    s->gone[0] = '\0';
    s->no_server = 0;
    s->unanswered = 0;
    s->refused_no = 0;
    s->refusal[0] = '\0';
    s->watched_id = s->thread_id;
    db_watch_arm(&s->w, deadline, s->cancel);
}

/* ---------------------------------------------------------------------- */
/* Open and close                                                         */
/* ---------------------------------------------------------------------- */

static void my_close(askdb_db *db)
{
    struct my *s = MY(db);

    db_watch_end(&s->w);
    if (s->h)
        mysql_close(s->h);
    if (s->killer)
        mysql_close(s->killer);
    murl_free(&s->url);
    free(s);
    db->impl = NULL;
}

static askdb_status my_open(askdb_db *db, const char *path)
{
    struct my *s;
    char err[300];

    s = calloc(1, sizeof *s);
    if (!s)
        return ASKDB_ERR_NOMEM;
    db->impl = s;
    s->cancel = db->cancel;
    if (murl_parse(path, &s->url, err, sizeof err)) {
        /* Not the URL itself: a password in a URL that does not parse
        ** (no '@' before it) is not known to be one. Nor, when an '@'
        ** comes after a '/' or '?', what the parser quotes of it
        ** ("URL parameter 'ss@host' needs a value"). */
        snprintf(db->errmsg, sizeof db->errmsg,
                 "cannot use the %.*s:// URL: %s (see "
                 "docs/engines/mariadb.md)", (int)db_url_scheme(path), path,
                 db_url_ambiguous(path) ? DB_AMBIGUOUS_URL : err);
        return ASKDB_ERR_DB_OPEN;
    }
    db_watch_init(&s->w, stop_statement, s, WATCH_TICK_MS, 256 * 1024);
    if (connect_main(db, s, 0)) {
        if (cancelled(s))
            return ASKDB_ERR_CANCELLED;
        /* The server's words may quote the host, port or database,
        ** which may be parts of the password there. */
        if (db_url_ambiguous(path))
            snprintf(db->errmsg, sizeof db->errmsg,
                     "cannot connect to '%s': %s", db->label,
                     DB_AMBIGUOUS_URL);
        return ASKDB_ERR_DB_OPEN;
    }
    if (!s->url.database) {
        /* An option file may name it; without one, nothing to read. Its
        ** answer is waited for as the connect's (connect_main()). */
        MYSQL_RES *r = NULL;
        MYSQL_ROW row;
        int have = 0;
        if (ask(s->h, "SELECT DATABASE()", HUGE_VAL, s->cancel, &r) == 0 &&
            r && (row = mysql_fetch_row(r)) != NULL && row[0])
            have = 1;
        mysql_free_result(r);
        if (!have && cancelled(s)) {
            say_cancelled(db, 0);
            return ASKDB_ERR_CANCELLED;
        }
        if (!have) {
            snprintf(db->errmsg, sizeof db->errmsg,
                     "cannot open '%s': no database named; put it at the end "
                     "of the URL (mariadb://user@host/DATABASE)", db->label);
            return ASKDB_ERR_DB_OPEN;
        }
    }
    return ASKDB_OK;
}

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */
/* ---------------------------------------------------------------------- */

/* The first '...'-quoted name in msg into out (size n); 0 if none. */
static int quoted_name(const char *msg, char *out, size_t n)
{
    const char *a = strchr(msg, '\''), *b;
    size_t len;

    if (!a)
        return 0;
    b = strchr(a + 1, '\'');
    if (!b || b == a + 1)
        return 0;
    len = (size_t)(b - a - 1);
    if (len >= n)
        len = n - 1;
    memcpy(out, a + 1, len);
    out[len] = '\0';
    return 1;
}

static askdb_error_class classify(unsigned no)
{
    switch (no) {
    case ER_BAD_FIELD_ERROR:       /* 1054 */
    case ER_NON_UNIQ_ERROR:        /* 1052 */
        return ASKDB_EC_UNKNOWN_COLUMN;
    case ER_NO_SUCH_TABLE:         /* 1146 */
    case ER_BAD_TABLE_ERROR:       /* 1051 */
    case ER_UNKNOWN_TABLE:         /* 1109 */
        return ASKDB_EC_UNKNOWN_TABLE;
    case ER_PARSE_ERROR:           /* 1064 */
    case ER_SYNTAX_ERROR:          /* 1149 */
        return ASKDB_EC_SYNTAX;
    case 1969:                     /* MariaDB max_statement_time */
    case 3024:                     /* MySQL max_execution_time */
    case ER_QUERY_INTERRUPTED:     /* 1317, our KILL QUERY */
    case ER_LOCK_WAIT_TIMEOUT:     /* 1205 */
        return ASKDB_EC_TIMEOUT;
    case 1792:                     /* in a READ ONLY transaction */
    case ER_TABLEACCESS_DENIED_ERROR:  /* 1142 */
    case ER_COLUMNACCESS_DENIED_ERROR: /* 1143 */
    case ER_SPECIFIC_ACCESS_DENIED_ERROR: /* 1227 */
    case ER_PROCACCESS_DENIED_ERROR:   /* 1370 */
    case ER_DBACCESS_DENIED_ERROR:     /* 1044 */
    case ER_UNSUPPORTED_PS:            /* 1295 */
    case ER_OPTION_PREVENTS_STATEMENT: /* 1290 read_only, secure_file_priv */
        return ASKDB_EC_REFUSED;
    case ER_DISK_FULL:             /* 1021 */
    case ER_GET_ERRNO:             /* 1030, from the storage engine */
    case ER_NOT_KEYFILE:           /* 1034 */
    case ER_CRASHED_ON_USAGE:      /* 1194 */
    case ER_CRASHED_ON_REPAIR:     /* 1195 */
    case ER_CON_COUNT_ERROR:       /* 1040 */
        return ASKDB_EC_DATABASE;  /* the database's: no repair helps */
    default:
        return ASKDB_EC_RUNTIME;
    }
}

/* Why the server refused a statement, after its own words: a privilege
** the user lacks is not a write that askdb stops. */
static const char *refused_why(unsigned no)
{
    switch (no) {
    case ER_TABLEACCESS_DENIED_ERROR:
        return "the database user may not read that table (or it does "
               "not exist: the server does not tell such a user which); "
               "ask about tables it may read, or grant it SELECT on this "
               "one";
    case ER_COLUMNACCESS_DENIED_ERROR:
        return "the database user may not read that column; ask about "
               "columns it may read, or grant it SELECT on this one";
    case ER_PROCACCESS_DENIED_ERROR:
        return "the database user may not run that routine";
    case ER_SPECIFIC_ACCESS_DENIED_ERROR:
    case ER_DBACCESS_DENIED_ERROR:
        return "the database user lacks that privilege";
    default:
        return "askdb runs only read-only queries";
    }
}

/*
** Fill e from the server's error: the class, and a message that starts the
** way the repair hints read names ("no such column: x") followed by the
** server's own words. Returns the status for it.
*/
static askdb_status server_error(askdb_db *db, struct my *s, unsigned no,
                                 const char *msg, int fired, struct db_err *e)
{
    char name[200];

    e->ec = classify(no);
    if (fired == DB_WATCH_CANCEL ||
        (s->cancel && atomic_load(s->cancel))) {
        e->ec = ASKDB_EC_RUNTIME;
        if (fired && *s->gone) {
            /* The stop cut the session off (cut_off): say why. */
            s->dead = 1;
            snprintf(e->msg, sizeof e->msg, "cancelled (%s; the "
                     "connection to '%s' was closed)", s->gone, db->label);
        } else
            snprintf(e->msg, sizeof e->msg, "cancelled");
        return ASKDB_ERR_CANCELLED;
    }
    if (no == CR_SERVER_LOST || no == CR_SERVER_GONE_ERROR ||
        no == CR_CONNECTION_ERROR || no == CR_CONN_HOST_ERROR) {
        s->dead = 1;
        e->ec = ASKDB_EC_DATABASE;
        snprintf(e->msg, sizeof e->msg,
                 "lost the connection to '%s' (%s, error %u): the server "
                 "stopped, restarted or hung; check that it runs, then ask "
                 "again", db->label, msg, no);
        return ASKDB_ERR_DB;
    }
    /* A KILL QUERY askdb did not send (fired 0), before its time limit
    ** (the caller says 1969 past it): another session stopped the
    ** statement, an administrator most likely. Not a timeout: running it
    ** again, repaired or not, would go against that. */
    if (no == ER_QUERY_INTERRUPTED && fired == 0) {
        e->ec = ASKDB_EC_DATABASE;
        snprintf(e->msg, sizeof e->msg,
                 "the statement was cancelled by another session (%s, "
                 "error %u), not by askdb's %d ms time limit: an "
                 "administrator may have stopped it (KILL QUERY); ask "
                 "again, or ask the server's administrator why", msg, no,
                 db->query_timeout_ms);
        return ASKDB_ERR_DB;
    }
    if (e->ec == ASKDB_EC_TIMEOUT) {
        const char *lock = NULL;
        if (no == ER_LOCK_WAIT_TIMEOUT)
            lock = msg;
        else if (fired == DB_WATCH_DEADLINE && strstr(s->state, "lock"))
            lock = s->state;
        if (lock) {
            e->ec = ASKDB_EC_DATABASE;   /* another session's lock */
            snprintf(e->msg, sizeof e->msg,
                     "query interrupted after the %d ms time limit "
                     "(--timeout): it was waiting for a lock that another "
                     "session holds (%s); ask again when that session is "
                     "done, or ask its owner to release it",
                     db->query_timeout_ms, lock);
        } else
            snprintf(e->msg, sizeof e->msg,
                     "query interrupted after the %d ms time limit "
                     "(--timeout)", db->query_timeout_ms);
        return ASKDB_ERR_TIMEOUT;
    }
    if ((no == ER_BAD_FIELD_ERROR) && quoted_name(msg, name, sizeof name))
        snprintf(e->msg, sizeof e->msg, "no such column: %s (error %u: %s)",
                 name, no, msg);
    else if (no == ER_NON_UNIQ_ERROR && quoted_name(msg, name, sizeof name))
        snprintf(e->msg, sizeof e->msg,
                 "ambiguous column name: %s (error %u: %s)", name, no, msg);
    else if (no == ER_NO_SUCH_TABLE && quoted_name(msg, name, sizeof name)) {
        /* "Table 'shop.x' doesn't exist": the model wrote x. */
        const char *dot = strchr(name, '.');
        snprintf(e->msg, sizeof e->msg, "no such table: %s (error %u: %s)",
                 dot ? dot + 1 : name, no, msg);
    } else if (e->ec == ASKDB_EC_REFUSED)
        snprintf(e->msg, sizeof e->msg, "refused: %s (error %u); %s", msg,
                 no, refused_why(no));
    else
        snprintf(e->msg, sizeof e->msg, "%s (error %u)", msg, no);
    return e->ec == ASKDB_EC_REFUSED ? ASKDB_ERR_REFUSED : ASKDB_ERR_DB;
}

/* ---------------------------------------------------------------------- */
/* The guard's text scan                                                  */
/* ---------------------------------------------------------------------- */

enum tok { T_END, T_WORD, T_STRING, T_IDENT, T_SEMI, T_LPAREN, T_RPAREN,
           T_OTHER,
           T_EXEC_COMMENT, T_VAR };

/* Skip blanks and comments from p as the server does with the session's
** sql_mode ("-- " needs a blank or control after it; '#' to the end of
** the line). An executable comment (slash-star-! or slash-star-M!) is
** code to the server: *exec is set and p stops at it. */
static const char *skip_space(const char *p, int *exec)
{
    for (;;) {
        while (*p && (unsigned char)*p <= ' ')
            p++;
        if (p[0] == '-' && p[1] == '-' &&
            (p[2] == '\0' || (unsigned char)p[2] <= ' ')) {
            while (*p && *p != '\n')
                p++;
        } else if (p[0] == '#') {
            while (*p && *p != '\n')
                p++;
        } else if (p[0] == '/' && p[1] == '*') {
            if (p[2] == '!' || (p[2] == 'M' && p[3] == '!')) {
                *exec = 1;
                return p;
            }
            {
                const char *e = strstr(p + 2, "*/");
                p = e ? e + 2 : p + strlen(p);
            }
        } else {
            return p;
        }
    }
}

/* The token at p: its kind, and *len its length (0 at the end). */
static enum tok next_tok(const char *p, size_t *len)
{
    const char *q = p;
    char quote;

    *len = 0;
    if (!*p)
        return T_END;
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
        (*p >= '0' && *p <= '9') || *p == '$' || (unsigned char)*p >= 0x80) {
        while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
               *q == '_' || (*q >= '0' && *q <= '9') || *q == '$' ||
               (unsigned char)*q >= 0x80)
            q++;
        *len = (size_t)(q - p);
        return T_WORD;
    }
    if (*p == '\'' || *p == '"' || *p == '`') {
        /* NO_BACKSLASH_ESCAPES: only a doubled quote escapes one. */
        quote = *p;
        q++;
        for (;;) {
            if (!*q)
                break;
            if (*q == quote) {
                if (q[1] == quote) {
                    q += 2;
                    continue;
                }
                q++;
                break;
            }
            q++;
        }
        *len = (size_t)(q - p);
        return quote == '\'' ? T_STRING : T_IDENT;
    }
    *len = 1;
    if (*p == ';')
        return T_SEMI;
    if (*p == '(')
        return T_LPAREN;
    if (*p == ')')
        return T_RPAREN;
    if (*p == '@')
        return T_VAR;
    return T_OTHER;
}

static int word_is(const char *p, size_t n, const char *w)
{
    return strlen(w) == n && strncasecmp(p, w, n) == 0;
}

/* Words that may start a statement askdb runs. */
static const char *const first_words[] = {
    "SELECT", "WITH", "VALUES", "TABLE", "SHOW", "DESCRIBE", "DESC",
    "EXPLAIN", NULL
};

/* Functions no question needs: they read server files, hold locks past
** the statement, wait on replication or step sequences (why NULL: said
** so). BENCHMARK() only spends time, and one that another session stops
** (KILL QUERY) returns the same 0 as one that ran to its end, with no
** error, warning or status to tell (MariaDB 10.11, text and binary
** protocol alike): its rows could be a statement cut short taken for the
** answer. */
static const struct denied_fn {
    const char *name;
    const char *why;         /* the refusal, or NULL for the common one */
} denied_functions[] = {
    {"LOAD_FILE", NULL}, {"GET_LOCK", NULL}, {"RELEASE_LOCK", NULL},
    {"RELEASE_ALL_LOCKS", NULL}, {"MASTER_POS_WAIT", NULL},
    {"MASTER_GTID_WAIT", NULL}, {"SOURCE_POS_WAIT", NULL},
    {"WAIT_FOR_EXECUTED_GTID_SET", NULL},
    {"WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS", NULL}, {"NEXTVAL", NULL},
    {"SETVAL", NULL}, {"LASTVAL", NULL}, {"SYS_EXEC", NULL},
    {"SYS_EVAL", NULL},
    {"BENCHMARK", "refused: BENCHMARK() only measures time (its value is "
                  "always 0), and one cancelled by another session (KILL "
                  "QUERY) returns that same 0 without an error, so its "
                  "result could not be told from an answer; ask without "
                  "it"},
    {NULL, NULL}
};

/* The entry of denied_functions named p (n bytes), or NULL. */
static const struct denied_fn *denied_function(const char *p, size_t n)
{
    const struct denied_fn *f;

    for (f = denied_functions; f->name; f++)
        if (word_is(p, n, f->name))
            return f;
    return NULL;
}

/* Words that, anywhere outside strings and quoted names, make a statement
** more than a query. */
static const char *const denied_words[] = {
    "OUTFILE", "DUMPFILE", NULL
};

static int in_words(const char *const *list, const char *p, size_t n)
{
    int i;

    for (i = 0; list[i]; i++)
        if (word_is(p, n, list[i]))
            return 1;
    return 0;
}

/*
** The text checks. On success *len is the length of the one statement
** (without the blanks, comments and ';' after it). Returns 0, or -1 with
** e filled (REFUSED, or NO_SQL for an empty text).
*/
static int guard_text(const char *sql, size_t *len, struct db_err *e)
{
    const char *p = sql, *end = NULL;
    const char *prev = NULL, *prev2 = NULL;
    const struct denied_fn *fn;
    size_t n = 0, pn = 0, p2n = 0;
    int exec = 0, first = 1, with = 0, depth = 0;
    enum tok t;

    for (;;) {
        p = skip_space(p, &exec);
        if (exec) {
            snprintf(e->msg, sizeof e->msg,
                     "refused: executable comments (/*! ... */) are not "
                     "accepted; write plain SQL");
            goto refused;
        }
        t = next_tok(p, &n);
        if (t == T_END)
            break;
        if (t == T_SEMI) {
            const char *q = p;
            while (*q == ';' || (unsigned char)*q <= ' ') {
                q = skip_space(q, &exec);
                if (exec || *q != ';')
                    break;
                q++;
            }
            if (!exec)
                q = skip_space(q, &exec);
            if (*q || exec) {
                (void)db_many_statements(e);
                goto refused;
            }
            break;
        }
        if (t == T_LPAREN)
            depth++;
        if (t == T_RPAREN && depth > 0)
            depth--;
        if (first) {
            first = 0;
            with = t == T_WORD && word_is(p, n, "WITH");
            if (t != T_LPAREN &&
                !(t == T_WORD && in_words(first_words, p, n))) {
                snprintf(e->msg, sizeof e->msg,
                         "refused: '%.*s' is not a query; askdb runs one "
                         "read-only statement (SELECT, WITH, VALUES, SHOW, "
                         "DESCRIBE, EXPLAIN)", (int)(n > 30 ? 30 : n), p);
                goto refused;
            }
        }
        if (t == T_WORD && in_words(denied_words, p, n)) {
            snprintf(e->msg, sizeof e->msg,
                     "refused: %.*s writes a file on the server; askdb "
                     "only reads", (int)n, p);
            goto refused;
        }
        if (t == T_LPAREN && prev && (fn = denied_function(prev, pn))) {
            if (fn->why)
                snprintf(e->msg, sizeof e->msg, "%s", fn->why);
            else
                snprintf(e->msg, sizeof e->msg,
                         "refused: the function %.*s reaches outside the "
                         "query (files, locks, sequences); askdb runs only "
                         "read-only queries", (int)pn, prev);
            goto refused;
        }
        /* WITH ... DELETE / UPDATE / INSERT (MySQL 8 runs them): the CTE's
        ** statement is what runs, at the outer level. */
        if (with && depth == 0 && t == T_WORD &&
            (word_is(p, n, "DELETE") || word_is(p, n, "UPDATE") ||
             word_is(p, n, "INSERT")) &&
            !(prev && word_is(prev, pn, "FOR"))) {
            snprintf(e->msg, sizeof e->msg,
                     "refused: WITH ... %.*s is not a query; askdb runs "
                     "only read-only queries", (int)n, p);
            goto refused;
        }
        /* FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE: row locks that make
        ** other sessions wait; a question needs none. */
        if (t == T_WORD && prev &&
            ((word_is(prev, pn, "FOR") &&
              (word_is(p, n, "UPDATE") || word_is(p, n, "SHARE"))) ||
             (word_is(prev, pn, "LOCK") && word_is(p, n, "IN")))) {
            snprintf(e->msg, sizeof e->msg,
                     "refused: the query locks rows (%.*s %.*s); askdb runs "
                     "only plain read-only queries", (int)pn, prev, (int)n,
                     p);
            goto refused;
        }
        /* NEXT VALUE FOR seq / PREVIOUS VALUE FOR seq */
        if (t == T_WORD && word_is(p, n, "FOR") && prev && prev2 &&
            word_is(prev, pn, "VALUE") &&
            (word_is(prev2, p2n, "NEXT") || word_is(prev2, p2n, "PREVIOUS"))) {
            snprintf(e->msg, sizeof e->msg,
                     "refused: sequences are not stepped; askdb runs only "
                     "read-only queries");
            goto refused;
        }
        prev2 = prev;
        p2n = pn;
        prev = t == T_WORD ? p : NULL;
        pn = n;
        /* A quoted name calls the native function all the same:
        ** `LOAD_FILE`('/etc/passwd'), "GET_LOCK"('x', 0). */
        if (t == T_IDENT && n >= 2 && p[n - 1] == p[0]) {
            prev = p + 1;
            pn = n - 2;
        }
        p += n;
        end = p;
    }
    if (!end) {
        (void)db_no_sql(e);
        return -1;
    }
    *len = (size_t)(end - sql);
    return 0;
refused:
    e->ec = ASKDB_EC_REFUSED;
    return -1;
}

/*
** mysql_stmt_prepare() of st, on the session h, through the library's
** non-blocking calls: a Ctrl-C (cancel) ends it as nb_wait() does, the
** library's read timeout holding as before. Returns 0 when prepared.
*/
static int prepare_cancellable(MYSQL_STMT *st, MYSQL *h, const char *sql,
                               unsigned long len, const atomic_int *cancel)
{
    int ret = 1, status;

    status = mysql_stmt_prepare_start(&ret, st, sql, len);
    while (status)
        status = mysql_stmt_prepare_cont(&ret, st,
                                         nb_wait(h, status, HUGE_VAL,
                                                 cancel));
    return ret;
}

/* Did a Ctrl-C cut short one of the session's round trips that no stop
** watches (the settings, the prepare, the transaction's start), which
** failed with error no? nb_wait() shut its socket then, and the error
** is the library's own (2000-2999, 5000 on; refused()), not the
** server's. */
static int cut_by_cancel(const struct my *s, unsigned no)
{
    return ((no >= 2000 && no < 3000) || no >= 5000) && cancelled(s);
}

/*
** The guard up to execution: the text, then prepare. On success *out is a
** prepared statement that returns rows (the caller closes it). Returns the
** status with e filled on failure.
**
** The round trips here (the settings, the prepare) come before the
** statement runs, with no watchdog armed: a Ctrl-C stops them itself,
** through the non-blocking calls (nb_wait()), and the session is given
** up; they waited in the blocking calls before, for the session's read
** timeout (the time limit and 10 s more, 30 s after a Ctrl-C with
** --timeout 20000), when the server went silent just then.
*/
static askdb_status prepare_guarded(askdb_db *db, const char *sql,
                                    MYSQL_STMT **out, struct db_err *e)
{
    struct my *s = MY(db);
    MYSQL_STMT *st = NULL;
    askdb_status rc;
    size_t len;
    unsigned no;
    int again = 1;

    *out = NULL;
    /* The caller's flag: an agent points db->cancel at its own after the
    ** open, and a check may come before any run. */
    s->cancel = db->cancel;
    if (guard_text(sql, &len, e))
        return e->ec == ASKDB_EC_REFUSED || e->ec == ASKDB_EC_NO_SQL
                   ? ASKDB_ERR_REFUSED
                   : ASKDB_ERR_DB;
    for (;;) {
        if (revive(db, s)) {
            /* The server, not the statement: no repair helps. */
            e->ec = cancelled(s) ? ASKDB_EC_RUNTIME : ASKDB_EC_DATABASE;
            snprintf(e->msg, sizeof e->msg, "%.500s", db->errmsg);
            return cancelled(s) ? ASKDB_ERR_CANCELLED : ASKDB_ERR_DB;
        }
        no = session_ready(db, s, HUGE_VAL);
        if (cut_by_cancel(s, no))
            break;
        if (no && !gone(no)) {
            /* The session, not the statement: no repair helps. */
            e->ec = ASKDB_EC_DATABASE;
            snprintf(e->msg, sizeof e->msg, "%.500s", db->errmsg);
            return ASKDB_ERR_DB;
        }
        if (!no) {
            st = mysql_stmt_init(s->h);
            if (!st) {
                e->ec = ASKDB_EC_RUNTIME;
                snprintf(e->msg, sizeof e->msg,
                         "out of memory preparing the query");
                return ASKDB_ERR_NOMEM;
            }
            if (!prepare_cancellable(st, s->h, sql, (unsigned long)len,
                                     s->cancel))
                break;
            no = mysql_stmt_errno(st);
            if (!no)
                no = CR_UNKNOWN_ERROR; /* failed all the same */
            if (cut_by_cancel(s, no))
                break;
        }
        /* A session the server closed while askdb sat idle (wait_timeout,
        ** a KILL, a restart) fails its first round trip. Nothing has run
        ** on it: connect again once and go on. */
        if (!again || !gone(no))
            break;
        again = 0;
        if (st)
            mysql_stmt_close(st);
        st = NULL;
        s->dead = 1;
    }
    if (no) {
        /* Said "cancelled" (server_error()); the next statement connects
        ** again. */
        if (cut_by_cancel(s, no))
            s->dead = 1;
        rc = server_error(db, s, no,
                          st ? mysql_stmt_error(st) : mysql_error(s->h), 0,
                          e);
        if (st)
            mysql_stmt_close(st);
        return rc;
    }
    if (mysql_stmt_field_count(st) == 0) {
        e->ec = ASKDB_EC_REFUSED;
        snprintf(e->msg, sizeof e->msg,
                 "refused: the statement returns no rows; askdb runs "
                 "queries");
        mysql_stmt_close(st);
        return ASKDB_ERR_REFUSED;
    }
    if (mysql_stmt_param_count(st) > 0) {
        e->ec = ASKDB_EC_SYNTAX;
        snprintf(e->msg, sizeof e->msg,
                 "the query has a ? placeholder; write the values into the "
                 "SQL");
        mysql_stmt_close(st);
        return ASKDB_ERR_DB;
    }
    *out = st;
    return ASKDB_OK;
}

static askdb_status my_check(askdb_db *db, const char *sql, struct db_err *e)
{
    MYSQL_STMT *st;
    askdb_status rc = prepare_guarded(db, sql, &st, e);

    if (st)
        mysql_stmt_close(st);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Running a query                                                        */
/* ---------------------------------------------------------------------- */

/* How a column's values become askdb values. */
enum kind { K_INT, K_UINT, K_DOUBLE, K_FLOAT, K_DECIMAL, K_BIT, K_TIME,
            K_TEXT, K_BLOB, K_NULL };

struct col {
    enum kind kind;
    MYSQL_BIND *b;
    long long i;
    double d;
    float f;
    MYSQL_TIME t;
    char *buf;           /* K_DECIMAL, K_BIT, K_TEXT, K_BLOB: bound */
    unsigned long cap;
    char *big;           /* a value longer than buf, fetched again */
    unsigned long bigcap;
    const char *data;    /* the value fetched: buf or big */
    unsigned long len;
    unsigned decimals;   /* K_TIME: digits of the fraction (0..6) */
    enum enum_field_types ftype; /* K_TIME: DATE, TIME, DATETIME, ... */
    my_bool is_null, error;
};

static enum kind kind_of(const MYSQL_FIELD *f)
{
    switch (f->type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_YEAR:
        return f->flags & UNSIGNED_FLAG ? K_UINT : K_INT;
    case MYSQL_TYPE_DOUBLE:
        return K_DOUBLE;
    case MYSQL_TYPE_FLOAT:
        return K_FLOAT;
    case MYSQL_TYPE_DECIMAL:
    case MYSQL_TYPE_NEWDECIMAL:
        return K_DECIMAL;
    case MYSQL_TYPE_BIT:
        return K_BIT;
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE:
    case MYSQL_TYPE_DATETIME:
    case MYSQL_TYPE_TIMESTAMP:
    case MYSQL_TYPE_TIME:
        return K_TIME;
    case MYSQL_TYPE_NULL:
        return K_NULL;
    case MYSQL_TYPE_GEOMETRY:
        return K_BLOB;
    default:
        /* Strings and blobs alike: the binary character set (63) makes a
        ** blob, any other a text. */
        return f->charsetnr == 63 ? K_BLOB : K_TEXT;
    }
}

/* A name for the column's type, as SQLite's declared type. */
static const char *type_name(const MYSQL_FIELD *f)
{
    switch (f->type) {
    case MYSQL_TYPE_TINY: return "TINYINT";
    case MYSQL_TYPE_SHORT: return "SMALLINT";
    case MYSQL_TYPE_INT24: return "MEDIUMINT";
    case MYSQL_TYPE_LONG: return "INT";
    case MYSQL_TYPE_LONGLONG: return "BIGINT";
    case MYSQL_TYPE_YEAR: return "YEAR";
    case MYSQL_TYPE_DOUBLE: return "DOUBLE";
    case MYSQL_TYPE_FLOAT: return "FLOAT";
    case MYSQL_TYPE_DECIMAL:
    case MYSQL_TYPE_NEWDECIMAL: return "DECIMAL";
    case MYSQL_TYPE_BIT: return "BIT";
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE: return "DATE";
    case MYSQL_TYPE_DATETIME: return "DATETIME";
    case MYSQL_TYPE_TIMESTAMP: return "TIMESTAMP";
    case MYSQL_TYPE_TIME: return "TIME";
    case MYSQL_TYPE_NULL: return "NULL";
    case MYSQL_TYPE_ENUM: return "ENUM";
    case MYSQL_TYPE_SET: return "SET";
    case MYSQL_TYPE_JSON: return "JSON";
    case MYSQL_TYPE_GEOMETRY: return "GEOMETRY";
    case MYSQL_TYPE_TINY_BLOB:
    case MYSQL_TYPE_MEDIUM_BLOB:
    case MYSQL_TYPE_LONG_BLOB:
    case MYSQL_TYPE_BLOB: return f->charsetnr == 63 ? "BLOB" : "TEXT";
    case MYSQL_TYPE_STRING: return f->charsetnr == 63 ? "BINARY" : "CHAR";
    default: return f->charsetnr == 63 ? "VARBINARY" : "VARCHAR";
    }
}

/* Bind column c of field f to its buffer. 0, or -1 out of memory. */
static int bind_col(struct col *c, MYSQL_BIND *b, const MYSQL_FIELD *f)
{
    memset(b, 0, sizeof *b);
    c->b = b;
    c->kind = kind_of(f);
    c->decimals = f->decimals;
    c->ftype = f->type;
    b->is_null = &c->is_null;
    b->error = &c->error;
    b->length = &c->len;
    switch (c->kind) {
    case K_INT:
    case K_UINT:
        b->buffer_type = MYSQL_TYPE_LONGLONG;
        b->buffer = &c->i;
        b->is_unsigned = c->kind == K_UINT;
        break;
    case K_DOUBLE:
        b->buffer_type = MYSQL_TYPE_DOUBLE;
        b->buffer = &c->d;
        break;
    case K_FLOAT:
        b->buffer_type = MYSQL_TYPE_FLOAT;
        b->buffer = &c->f;
        break;
    case K_TIME:
        b->buffer_type = f->type == MYSQL_TYPE_NEWDATE ? MYSQL_TYPE_DATE
                                                       : f->type;
        b->buffer = &c->t;
        b->buffer_length = sizeof c->t;
        break;
    default:
        /* Texts and blobs start small; a longer value is fetched again
        ** into a buffer of its size (MYSQL_DATA_TRUNCATED). */
        c->cap = 128;
        c->buf = malloc(c->cap);
        if (!c->buf)
            return -1;
        b->buffer_type = c->kind == K_BLOB || c->kind == K_BIT
                             ? MYSQL_TYPE_BLOB : MYSQL_TYPE_STRING;
        b->buffer = c->buf;
        b->buffer_length = c->cap;
        break;
    }
    return 0;
}

/* What a cell costs in a result: its askdb_value plus its bytes. */
static size_t col_cost(const struct col *c)
{
    size_t n = sizeof(askdb_value);

    if (!c->is_null && (c->kind == K_TEXT || c->kind == K_BLOB))
        n += c->len;
    return n;
}

/* The shortest text that reads back as the same float: "1.1", not the
** "1.100000023841858" of its double. */
static double float_value(float f)
{
    char tmp[32];
    int prec;

    for (prec = 6; prec <= 9; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, (double)f);
        if (strtof(tmp, NULL) == f)
            break;
    }
    return strtod(tmp, NULL);
}

/* MYSQL_TIME of a column of type ftype as ISO 8601 text: "2024-05-01",
** "2024-05-01 12:30:00", "-838:59:59", with as many digits of fraction as
** the column has (decimals, 0 to 6; more means "not known": all six when
** there is one). The form is the column's: a zero value comes with no
** time_type (the protocol sends it as no bytes), and a zero DATETIME(6) is
** "0000-00-00 00:00:00.000000", a zero TIME "00:00:00". */
static int time_text(const MYSQL_TIME *t, enum enum_field_types ftype,
                     unsigned decimals, char *out, size_t n)
{
    unsigned long frac = t->second_part;
    unsigned d;
    int k;

    switch (ftype) {
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE:
        return snprintf(out, n, "%04u-%02u-%02u", t->year, t->month, t->day);
    case MYSQL_TYPE_TIME:
        k = snprintf(out, n, "%s%02u:%02u:%02u", t->neg ? "-" : "",
                     t->hour + t->day * 24, t->minute, t->second);
        break;
    default:
        k = snprintf(out, n, "%04u-%02u-%02u %02u:%02u:%02u", t->year,
                     t->month, t->day, t->hour, t->minute, t->second);
        break;
    }
    if (decimals > 6)
        decimals = frac ? 6 : 0;
    for (d = 6; d > decimals; d--)
        frac /= 10;
    if (decimals && k > 0 && (size_t)k < n)
        k += snprintf(out + k, n - (size_t)k, ".%0*lu", (int)decimals, frac);
    return k;
}

/* v becomes a text holding a copy of s[0..k), k being what snprintf()
** into s (of size n) returned: cut at n - 1. 0, or -1 out of memory. */
static int text_value(askdb_value *v, const char *s, int k, size_t n)
{
    size_t len = k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
    char *p = malloc(len + 1);

    if (!p)
        return -1;
    memcpy(p, s, len);
    p[len] = '\0';
    v->s = p;
    v->len = len;
    v->type = ASKDB_TEXT;
    return 0;
}

/*
** A DECIMAL (the server's text s of len bytes) as askdb shows it: a real
** while a double keeps its whole integer part (up to 15 digits before the
** point: money, AVG()); past that an integer when it has no fraction and
** fits 64 bits, else its text, every digit kept (SUM() of a BIGINT
** UNSIGNED near 2^64, DECIMAL(65,0)), as PostgreSQL's large numeric (a
** small one stays a real here, where PostgreSQL's numeric of 42 is the
** integer 42). 0, or -1 out of memory.
*/
static int decimal_value(const char *s, unsigned long len, askdb_value *v)
{
    char tmp[64], *end;
    unsigned long i = 0;
    int digits = 0;
    long long n;

    if (i < len && (s[i] == '-' || s[i] == '+'))
        i++;
    while (i < len && s[i] == '0')
        i++;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (len < sizeof tmp) {
        memcpy(tmp, s, len);
        tmp[len] = '\0';
        if (digits <= 15) {
            v->type = ASKDB_REAL;
            v->d = strtod(tmp, NULL);
            return 0;
        }
        errno = 0;
        n = strtoll(tmp, &end, 10);
        if (!errno && end != tmp && *end == '\0') {
            v->type = ASKDB_INTEGER;
            v->i = n;
            return 0;
        }
    }
    return text_value(v, s, (int)len, (size_t)len + 1);
}

/* Store the fetched column into v. 0, or -1 out of memory. */
static int take_value(struct col *c, askdb_value *v)
{
    char tmp[64];
    unsigned long i;
    int k;

    if (c->is_null || c->kind == K_NULL) {
        v->type = ASKDB_NULL;
        return 0;
    }
    switch (c->kind) {
    case K_INT:
        v->type = ASKDB_INTEGER;
        v->i = c->i;
        return 0;
    case K_UINT:
        /* BIGINT UNSIGNED past INT64_MAX: its digits as text, as BIT(64)
        ** below (a real lost them: 18446744073709551615 was
        ** 1.84467440737096e+19). */
        if ((unsigned long long)c->i > (unsigned long long)INT64_MAX) {
            k = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)c->i);
            return text_value(v, tmp, k, sizeof tmp);
        }
        v->type = ASKDB_INTEGER;
        v->i = c->i;
        return 0;
    case K_DOUBLE:
        v->type = ASKDB_REAL;
        v->d = c->d;
        return 0;
    case K_FLOAT:
        v->type = ASKDB_REAL;
        v->d = float_value(c->f);
        return 0;
    case K_DECIMAL:
        return decimal_value(c->data, c->len, v);
    case K_BIT: {
        /* Unsigned, big-endian: BIT(64) with every bit set is
        ** 18446744073709551615, past INT64_MAX, so its digits as text (as
        ** DuckDB's UBIGINT), not -1. */
        unsigned long long u = 0;
        for (i = 0; i < c->len && i < 8; i++)
            u = u << 8 | (unsigned char)c->data[i];
        if (u <= (unsigned long long)INT64_MAX) {
            v->type = ASKDB_INTEGER;
            v->i = (long long)u;
            return 0;
        }
        k = snprintf(tmp, sizeof tmp, "%llu", u);
        return text_value(v, tmp, k, sizeof tmp);
    }
    case K_TIME:
        k = time_text(&c->t, c->ftype, c->decimals, tmp, sizeof tmp);
        return text_value(v, tmp, k, sizeof tmp);
    default: {
        char *dst = malloc((size_t)c->len + 1);
        if (!dst)
            return -1;
        if (c->len)
            memcpy(dst, c->data, c->len);
        dst[c->len] = '\0';
        v->type = c->kind == K_BLOB ? ASKDB_BLOB : ASKDB_TEXT;
        v->s = dst;
        v->len = c->len;
        return 0;
    }
    }
}

/* After a fetch: fetch again each column longer than its bound buffer,
** into a buffer of its own (the bound one stays where the statement knows
** it). 0, -1 out of memory, or 1 with a fetch error. */
static int fetch_long(MYSQL_STMT *st, struct col *cols, int n)
{
    MYSQL_BIND b;
    unsigned long got;
    my_bool isnull, err;
    int i;

    for (i = 0; i < n; i++) {
        struct col *c = &cols[i];
        c->data = c->buf;
        if (c->is_null || !c->buf || c->len <= c->cap)
            continue;
        if (c->len > c->bigcap) {
            char *p = realloc(c->big, c->len);
            if (!p)
                return -1;
            c->big = p;
            c->bigcap = c->len;
        }
        b = *c->b;
        b.buffer = c->big;
        b.buffer_length = c->len;
        b.length = &got;
        b.is_null = &isnull;
        b.error = &err;
        if (mysql_stmt_fetch_column(st, &b, (unsigned)i, 0))
            return 1;
        c->data = c->big;
    }
    return 0;
}

/* The error of a failed statement call: the statement's, else the
** connection's (a fetch that meets the server's error packet sets only
** the latter). */
static unsigned stmt_errno(MYSQL_STMT *st, MYSQL *h, const char **msg)
{
    if (mysql_stmt_errno(st)) {
        *msg = mysql_stmt_error(st);
        return mysql_stmt_errno(st);
    }
    *msg = mysql_error(h);
    return mysql_errno(h);
}

static askdb_status my_run(askdb_db *db, const char *sql, askdb_result **out,
                           struct db_err *e)
{
    struct my *s = MY(db);
    MYSQL_STMT *st = NULL;
    MYSQL_RES *meta = NULL;
    MYSQL_FIELD *fields;
    MYSQL_BIND *binds = NULL;
    struct col *cols = NULL;
    askdb_result *r = NULL;
    askdb_status ret;
    long cap_cells = 0;
    size_t bytes = 0, row_bytes;
    double t0 = db_now_ms();
    int i, ncols = 0, frc, fired, in_trx = 0, stopped = 0;
    unsigned eno = 0;
    char emsg[512] = "";
    const char *m;

    *out = NULL;
    s->cancel = db->cancel;
    ret = prepare_guarded(db, sql, &st, e);
    if (ret)
        return ret;
    /* Not watched yet either: a Ctrl-C stops it as the prepare
    ** (prepare_guarded()). */
    if (exec(s->h, "START TRANSACTION READ ONLY", HUGE_VAL, s->cancel)) {
        if (cut_by_cancel(s, mysql_errno(s->h)))
            s->dead = 1;
        ret = server_error(db, s, mysql_errno(s->h), mysql_error(s->h), 0, e);
        goto out;
    }
    in_trx = 1;
    ret = ASKDB_ERR_NOMEM;
    meta = mysql_stmt_result_metadata(st);
    ncols = (int)mysql_stmt_field_count(st);
    r = db_result_new(ncols);
    cols = calloc((size_t)ncols, sizeof *cols);
    binds = calloc((size_t)ncols, sizeof *binds);
    if (!meta || !r || !cols || !binds)
        goto out;
    fields = mysql_fetch_fields(meta);
    for (i = 0; i < ncols; i++) {
        r->cols[i] = strdup(fields[i].name ? fields[i].name : "");
        r->decltypes[i] = strdup(type_name(&fields[i]));
        if (!r->cols[i] || !r->decltypes[i] ||
            bind_col(&cols[i], &binds[i], &fields[i]))
            goto out;
    }
    watch_start(s, db->query_timeout_ms > 0
                       ? t0 + db->query_timeout_ms : 0);
    if (mysql_stmt_execute(st) || mysql_stmt_bind_result(st, binds)) {
        eno = stmt_errno(st, s->h, &m);
        snprintf(emsg, sizeof emsg, "%s", m);
        goto failed;
    }
    for (;;) {
        askdb_value *row;
        frc = mysql_stmt_fetch(st);
        /* A statement killed while it sends rows (max_statement_time in
        ** BENCHMARK()) ends with an error where the end of rows was due:
        ** the rows so far are not the answer. */
        if (frc == MYSQL_NO_DATA && !mysql_stmt_errno(st) &&
            !mysql_errno(s->h))
            break;
        if (frc == 1 || frc == MYSQL_NO_DATA) {
            eno = stmt_errno(st, s->h, &m);
            snprintf(emsg, sizeof emsg, "%s", m);
            goto failed;
        }
        if (r->nrows >= db->max_rows) {
            r->truncated = 1;
            stopped = 1;
            break;
        }
        /* The whole row is measured first: a row that would take the
        ** result over the byte cap is not copied at all. */
        row_bytes = 0;
        for (i = 0; i < ncols; i++)
            row_bytes += col_cost(&cols[i]);
        if (db->max_bytes && bytes + row_bytes > db->max_bytes) {
            r->truncated = 2;
            stopped = 1;
            break;
        }
        bytes += row_bytes;
        frc = fetch_long(st, cols, ncols);
        if (frc < 0)
            goto out;
        if (frc > 0) {
            eno = stmt_errno(st, s->h, &m);
            snprintf(emsg, sizeof emsg, "%s", m);
            goto failed;
        }
        row = db_result_add_row(r, &cap_cells);
        if (!row)
            goto out;
        for (i = 0; i < ncols; i++)
            if (take_value(&cols[i], &row[i]))
                goto out;
    }
    /* Rows the result will not hold are not read: the server stops. */
    if (stopped)
        db_watch_fire(&s->w, WATCH_FULL);
    fired = db_watch_disarm(&s->w);
    /* max_statement_time can end a statement early without an error
    ** (BENCHMARK() over the binary protocol returns 0): a statement that
    ** used its whole time is taken as cut short. */
    if (!stopped && (fired == DB_WATCH_DEADLINE ||
                     fired == DB_WATCH_CANCEL ||
                     (db->query_timeout_ms > 0 &&
                      db_now_ms() - t0 >= db->query_timeout_ms))) {
        /* 1969: the server's own limit, when askdb killed nothing. */
        ret = server_error(db, s, fired ? ER_QUERY_INTERRUPTED : 1969, "",
                           fired, e);
        goto out;
    }
    r->exec_ms = db_now_ms() - t0;
    *out = r;
    r = NULL;
    ret = ASKDB_OK;
    goto out;
failed:
    fired = db_watch_disarm(&s->w);
    if (*s->gone) {
        /* The kill found no server, or no answer, and cut the session
        ** off. */
        eno = s->gone_no;
        snprintf(emsg, sizeof emsg, "%s", s->gone);
    } else if (fired == DB_WATCH_DEADLINE)
        eno = ER_QUERY_INTERRUPTED; /* our deadline: a timeout */
    else if (!fired && eno == ER_QUERY_INTERRUPTED &&
             db->query_timeout_ms > 0 &&
             db_now_ms() - t0 >= db->query_timeout_ms)
        eno = 1969; /* another's kill, but past the limit: a timeout */
    ret = server_error(db, s, eno, emsg, fired, e);
out:
    if (ret == ASKDB_ERR_NOMEM) {
        db_watch_disarm(&s->w);
        e->ec = ASKDB_EC_RUNTIME;
        snprintf(e->msg, sizeof e->msg, "out of memory reading the result");
    }
    if (st)
        mysql_stmt_close(st); /* reads what is left of a killed result */
    mysql_free_result(meta);
    if (in_trx && !s->dead)
        session_reset(s);
    for (i = 0; cols && i < ncols; i++) {
        free(cols[i].buf);
        free(cols[i].big);
    }
    free(cols);
    free(binds);
    askdb_result_free(r);
    return ret;
}

/* ---------------------------------------------------------------------- */
/* Schema                                                                 */
/* ---------------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

/* No row cap for askdb's own queries: an explicit LIMIT wins over the
** session's sql_select_limit (max_rows + 1), which is for questions. */
#define ALL_ROWS "LIMIT 18446744073709551615"

/*
** A statement of the schema read on the main session, watched as a
** question's statement is (watch_start()) but with no time limit of
** askdb's own (a large schema is not cut short; the session's read
** timeout holds): a Ctrl-C (s->cancel) makes the watchdog KILL QUERY it
** from the kill connection, or cut the session off when the server does
** not answer (stop_statement()), and my_schema() says "cancelled".
** 0 or the error number, as ask(); rows in *out when out is not NULL.
*/
static unsigned watched(struct my *s, const char *sql, MYSQL_RES **out)
{
    unsigned no;

    watch_start(s, 0);
    no = ask(s->h, sql, 0, NULL, out);
    db_watch_disarm(&s->w);
    return no;
}

/* watched() with its rows, or NULL with the session's error. */
static MYSQL_RES *query(struct my *s, const char *sql)
{
    MYSQL_RES *r;

    return watched(s, sql, &r) ? NULL : r;
}

/*
** The server's words that a table or column name may not be written bare
** as. MariaDB's information_schema.KEYWORDS (10.6 and later) lists every
** keyword, reserved or not (name, status, date among them), and says no
** more: the server's own parser tells them apart, one PREPARE of
** "SELECT word FROM (SELECT 1 AS x) AS t" per word, in one compound
** statement: a word read as a name fails with "unknown column" (1054);
** a reserved one with a syntax error, or is read as something else
** (current_date, true) and prepares. The words collect in a user
** variable, which askdb reads next (keywords only: the reset after the
** next statement drops it, session_reset()). As a
** table name no word fails that fails here too (tried on 10.11). MySQL
** 8's KEYWORDS says it itself (RESERVED). A server older than the table
** (error 1109) has no list: its names are quoted for SQLite's keywords
** alone, as before.
*/
static const char q_reserved_mariadb[] =
    "BEGIN NOT ATOMIC "
    " DECLARE done, ident INT DEFAULT 0; "
    " DECLARE w VARCHAR(64); "
    " DECLARE words TEXT DEFAULT ''; "
    " DECLARE c CURSOR FOR SELECT WORD FROM information_schema.KEYWORDS "
    "  WHERE WORD REGEXP '^[A-Za-z_][A-Za-z0-9_]*$'; "
    " DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1; "
    " OPEN c; "
    " words: LOOP "
    "  FETCH c INTO w; "
    "  IF done THEN LEAVE words; END IF; "
    "  SET ident = 0; "
    "  BEGIN "
    "   DECLARE CONTINUE HANDLER FOR 1054 SET ident = 1; "
    "   DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END; "
    "   PREPARE askdb_word FROM "
    "    CONCAT('SELECT ', w, ' FROM (SELECT 1 AS x) AS t'); "
    "   DEALLOCATE PREPARE askdb_word; "
    "  END; "
    "  IF NOT ident THEN SET words = CONCAT(words, ' ', w); END IF; "
    " END LOOP; "
    " CLOSE c; "
    " SET @askdb_reserved = words; "
    "END";

/* Read the server's reserved words (above) into out. 0, 1 when the
** server has no list, -1 on a failure (the session's error) or when out
** of memory (*nomem set). */
static int read_reserved(struct my *s, struct db_schema *out, int *nomem)
{
    MYSQL_RES *res;
    MYSQL_ROW row;
    char *w, *end;
    int rc = 0;

    *nomem = 0;
    if (s->mariadb) {
        if (watched(s, q_reserved_mariadb, NULL))
            return mysql_errno(s->h) == ER_UNKNOWN_TABLE ? 1 : -1;
        res = query(s, "SELECT @askdb_reserved");
    } else {
        res = query(s, "SELECT WORD FROM information_schema.KEYWORDS "
                          "WHERE RESERVED = 1");
        if (!res && mysql_errno(s->h) == ER_UNKNOWN_TABLE)
            return 1;
    }
    if (!res)
        return -1;
    while (rc == 0 && (row = mysql_fetch_row(res)) != NULL) {
        for (w = row[0]; w && *w; w = end) {
            while (*w == ' ')
                w++;
            for (end = w; *end && *end != ' '; end++)
                ;
            if (*end)
                *end++ = '\0';
            if (*w && schema_add_reserved(out, w) < 0) {
                *nomem = 1;
                rc = -1;
                break;
            }
        }
    }
    mysql_free_result(res);
    return rc;
}

/* Index of a table by name in a sorted index (strcmp order); -1 if none. */
struct tix {
    const char *name;
    int i;
};

static int tix_cmp(const void *a, const void *b)
{
    return strcmp(((const struct tix *)a)->name,
                  ((const struct tix *)b)->name);
}

static int find_table(const struct tix *ix, int n, const char *name)
{
    struct tix key, *hit;

    if (!name)
        return -1;
    key.name = name;
    key.i = 0;
    hit = bsearch(&key, ix, (size_t)n, sizeof *ix, tix_cmp);
    return hit ? hit->i : -1;
}

static int find_col(const struct db_table *t, const char *name)
{
    int i;

    for (i = 0; name && i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0)
            return i;
    return -1;
}

#define SAMPLE_ROWS 200
/* Tables per sampling statement (sample_batch()). */
#define SAMPLE_BATCH 64

/*
** Samples from the first SAMPLE_ROWS + 1 rows of t, text columns only;
** *nrows gets how many rows there were (SAMPLE_ROWS + 1 meaning "more").
** A table that cannot be read (no privilege on it) gets no samples.
** Names are double-quoted (text_put_quoted): the session runs with
** ANSI_QUOTES. 0, or -1 out of memory.
*/
static int read_samples(struct my *s, struct db_table *t, int per_col,
                        long *nrows)
{
    struct buf b;
    MYSQL_RES *res;
    MYSQL_ROW row;
    MYSQL_FIELD *f;
    unsigned long *lens;
    int i;

    *nrows = SAMPLE_ROWS + 1;
    buf_init(&b, 0);
    buf_puts(&b, "SELECT ");
    for (i = 0; i < t->ncols; i++) {
        if (i)
            buf_puts(&b, ", ");
        text_put_quoted(&b, t->cols[i].name, '"');
    }
    buf_puts(&b, " FROM ");
    text_put_quoted(&b, t->name, '"');
    buf_printf(&b, " LIMIT %d", SAMPLE_ROWS + 1);
    if (buf_err(&b)) {
        buf_free(&b);
        return -1;
    }
    res = query(s, b.data);
    buf_free(&b);
    if (!res)
        return 0;
    f = mysql_fetch_fields(res);
    *nrows = 0;
    while ((row = mysql_fetch_row(res)) != NULL) {
        if (++*nrows > SAMPLE_ROWS)
            break;
        lens = mysql_fetch_lengths(res);
        for (i = 0; i < t->ncols && i < (int)mysql_num_fields(res); i++) {
            struct db_column *c = &t->cols[i];
            if (!row[i] || lens[i] > SCHEMA_SAMPLE_MAXLEN ||
                kind_of(&f[i]) != K_TEXT || memchr(row[i], '\0', lens[i]))
                continue;
            if (schema_add_sample(c, row[i], per_col)) {
                mysql_free_result(res);
                return -1;
            }
        }
    }
    mysql_free_result(res);
    return 0;
}

/* Whether a COLUMN_TYPE holds text worth sampling (not binary). */
static int is_text_type(const char *type)
{
    static const char *const prefixes[] = {
        "varchar", "char", "tinytext", "text", "mediumtext", "longtext",
        "enum", "set", NULL
    };
    int i;

    for (i = 0; prefixes[i]; i++)
        if (strncasecmp(type, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/*
** Samples and sizes of n tables in one statement: per table its first
** SAMPLE_ROWS + 1 rows as a JSON array of its short text values,
**   (SELECT k, JSON_ARRAY(IF(LENGTH("c") <= 40, "c", NULL), ...)
**      FROM "t" LIMIT 201) UNION ALL ...
** so that thousands of tables cost tens of round trips, not thousands.
** seen[k] gets the rows of tabs[k] (SAMPLE_ROWS + 1 meaning "more").
** Returns 0, -1 out of memory, or 1 when the statement failed (a table
** not readable, or locked): the caller then reads them one by one.
*/
static int sample_batch(struct my *s, struct db_table **tabs, int n,
                        int per_col, long *seen)
{
    struct buf b;
    MYSQL_RES *res;
    MYSQL_ROW row;
    unsigned long *lens;
    int k, i, rc = 0;

    buf_init(&b, 0);
    for (k = 0; k < n; k++) {
        struct db_table *t = tabs[k];
        int any = 0;
        seen[k] = 0;
        buf_printf(&b, "%s(SELECT %d, JSON_ARRAY(", k ? " UNION ALL " : "",
                   k);
        for (i = 0; i < t->ncols && per_col > 0; i++) {
            if (any++)
                buf_puts(&b, ", ");
            if (!is_text_type(t->cols[i].type)) {
                buf_puts(&b, "NULL");
                continue;
            }
            buf_puts(&b, "IF(LENGTH(");
            text_put_quoted(&b, t->cols[i].name, '"');
            buf_printf(&b, ") <= %d, ", SCHEMA_SAMPLE_MAXLEN);
            text_put_quoted(&b, t->cols[i].name, '"');
            buf_puts(&b, ", NULL)");
        }
        buf_puts(&b, ") FROM ");
        text_put_quoted(&b, t->name, '"');
        buf_printf(&b, " LIMIT %d)", SAMPLE_ROWS + 1);
    }
    if (buf_err(&b)) {
        buf_free(&b);
        return -1;
    }
    res = query(s, b.data);
    buf_free(&b);
    if (!res)
        return 1;
    while (rc == 0 && (row = mysql_fetch_row(res)) != NULL) {
        json_t *arr;
        long kk = row[0] ? strtol(row[0], NULL, 10) : -1;
        if (kk < 0 || kk >= n || ++seen[kk] > SAMPLE_ROWS || !row[1] ||
            per_col <= 0)
            continue;
        lens = mysql_fetch_lengths(res);
        arr = json_loadb(row[1], lens[1], 0, NULL);
        for (i = 0; arr && i < tabs[kk]->ncols; i++) {
            const char *v = json_string_value(json_array_get(arr, (size_t)i));
            if (v && schema_add_sample(&tabs[kk]->cols[i], v, per_col))
                rc = -1;
        }
        json_decref(arr);
    }
    mysql_free_result(res);
    return rc;
}

/*
** The column a CHECK clause says holds JSON: the clause is exactly
** json_valid("name") (or with backquotes), as MariaDB writes the check
** of a JSON column. The name, unquoted, into out (size n); 1, or 0 when
** the clause is anything else.
*/
static int json_check_column(const char *clause, char *out, size_t n)
{
    const char *p;
    char q;
    size_t k = 0;

    if (!clause || strncasecmp(clause, "json_valid(", 11) != 0)
        return 0;
    p = clause + 11;
    q = *p++;
    if (q != '"' && q != '`')
        return 0;
    for (;; p++) {
        if (!*p || k + 1 >= n)
            return 0;
        if (*p == q) {
            if (p[1] != q)
                break;
            p++; /* a doubled quote is one */
        }
        out[k++] = *p;
    }
    out[k] = '\0';
    return k > 0 && strcmp(p + 1, ")") == 0; /* p: the closing quote */
}

/*
** The tables and views of the current database, in five set-based
** queries over information_schema (tables, columns, JSON checks, unique
** keys, foreign keys), then per table the sample values. Row counts: the
** whole table when the samples read it all (at most SAMPLE_ROWS), else
** the engine's statistics (TABLE_ROWS, an estimate for InnoDB:
** rows_estimated).
*/
static askdb_status my_schema(askdb_db *db, struct db_schema *out)
{
    struct my *s = MY(db);
    MYSQL_RES *res = NULL;
    MYSQL_ROW row;
    struct tix *ix = NULL;
    long *estimates = NULL;
    const char *what = "tables";
    int i, n, ti, ci, again, nomem;
    askdb_status rc = ASKDB_ERR_NOMEM;

    memset(out, 0, sizeof *out);
    s->cancel = db->cancel;
    for (again = 1;; again = 0) {
        if (revive(db, s))
            return cancelled(s) ? ASKDB_ERR_CANCELLED : ASKDB_ERR_DB;
        /* No deadline of askdb's own (the library's read timeout
        ** holds), but a Ctrl-C heeded: the settings are sent before any
        ** statement the watchdog could stop. */
        if (!session_ready(db, s, HUGE_VAL) &&
            (res = query(s,
                         "SELECT TABLE_NAME, TABLE_TYPE, TABLE_ROWS, "
                         "TABLE_COMMENT FROM information_schema.TABLES "
                         "WHERE TABLE_SCHEMA = DATABASE() "
                         "ORDER BY TABLE_NAME " ALL_ROWS)) != NULL)
            break;
        /* A session the server closed while idle: connect again once. */
        if (!again || !gone(mysql_errno(s->h)) || cancelled(s))
            goto dberr;
        s->dead = 1;
    }
    out->says_quoted = 1;
    n = (int)mysql_num_rows(res);
    ix = calloc((size_t)n + 1, sizeof *ix);
    estimates = calloc((size_t)n + 1, sizeof *estimates);
    if (!ix || !estimates)
        goto out;
    while ((row = mysql_fetch_row(res)) != NULL) {
        struct db_table *t = schema_push(&out->tables, &out->ntables, sizeof *t);
        if (!t)
            goto out;
        t->name = strdup(row[0] ? row[0] : "");
        t->is_view = row[1] && strcmp(row[1], "VIEW") == 0;
        t->rows = -1;
        estimates[out->ntables - 1] = row[2] ? strtol(row[2], NULL, 10) : -1;
        if (!t->is_view && row[3] && *row[3]) {
            t->comment = strdup(row[3]);
            if (!t->comment)
                goto out;
        }
        if (!t->name)
            goto out;
    }
    mysql_free_result(res);
    res = NULL;
    for (i = 0; i < out->ntables; i++) {
        ix[i].name = out->tables[i].name;
        ix[i].i = i;
    }
    qsort(ix, (size_t)out->ntables, sizeof *ix, tix_cmp);

    what = "reserved words";
    if (read_reserved(s, out, &nomem) < 0) {
        if (nomem)
            goto out;
        goto dberr;
    }

    what = "columns";
    res = query(s,
                "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, "
                "COLUMN_DEFAULT, COLUMN_COMMENT "
                "FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = DATABASE() "
                "ORDER BY TABLE_NAME, ORDINAL_POSITION " ALL_ROWS);
    if (!res)
        goto dberr;
    while ((row = mysql_fetch_row(res)) != NULL) {
        struct db_column *c;
        ti = find_table(ix, out->ntables, row[0]);
        if (ti < 0)
            continue;
        c = schema_push(&out->tables[ti].cols, &out->tables[ti].ncols, sizeof *c);
        if (!c)
            goto out;
        c->name = strdup(row[1] ? row[1] : "");
        c->type = strdup(row[2] ? row[2] : "");
        c->notnull = row[3] && strcmp(row[3], "NO") == 0;
        /* MariaDB writes no default as NULL and a NULL default as
        ** "NULL": neither is worth a word in the prompt; nor are the
        ** defaults a view's columns report. */
        if (row[4] && strcmp(row[4], "NULL") != 0 &&
            !out->tables[ti].is_view) {
            c->dflt = strdup(row[4]);
            if (!c->dflt)
                goto out;
        }
        if (row[5] && *row[5]) {
            c->comment = strdup(row[5]);
            if (!c->comment)
                goto out;
        }
        if (!c->name || !c->type)
            goto out;
    }
    mysql_free_result(res);
    res = NULL;

    /* MariaDB's JSON is a LONGTEXT with CHECK (json_valid(col)), and
    ** COLUMN_TYPE says longtext: such a column is named json, so that
    ** the model knows what it holds. MySQL's JSON is a type of its own;
    ** a server without CHECK_CONSTRAINTS (MariaDB before 10.2) just
    ** keeps longtext. */
    if (s->mariadb &&
        (res = query(s,
                     "SELECT TABLE_NAME, CHECK_CLAUSE "
                     "FROM information_schema.CHECK_CONSTRAINTS "
                     "WHERE CONSTRAINT_SCHEMA = DATABASE() "
                     "AND LEFT(CHECK_CLAUSE, 11) = 'json_valid(' "
                     ALL_ROWS)) != NULL) {
        char name[200];
        while ((row = mysql_fetch_row(res)) != NULL) {
            struct db_column *c;
            char *json;
            ti = find_table(ix, out->ntables, row[0]);
            if (ti < 0 || !json_check_column(row[1], name, sizeof name) ||
                (ci = find_col(&out->tables[ti], name)) < 0)
                continue;
            c = &out->tables[ti].cols[ci];
            if (strncasecmp(c->type, "longtext", 8) != 0)
                continue;
            json = strdup("json");
            if (!json)
                goto out;
            free(c->type);
            c->type = json;
        }
        mysql_free_result(res);
        res = NULL;
    }

    /* Primary and unique keys: one row per key column, in key order. */
    what = "keys";
    res = query(s,
                "SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME, SEQ_IN_INDEX "
                "FROM information_schema.STATISTICS "
                "WHERE TABLE_SCHEMA = DATABASE() AND NON_UNIQUE = 0 "
                "ORDER BY TABLE_NAME, INDEX_NAME = 'PRIMARY' DESC, "
                "INDEX_NAME, SEQ_IN_INDEX " ALL_ROWS);
    if (!res)
        goto dberr;
    {
        struct buf u;
        char *cur_index = NULL;
        int cur_table = -1, bad = 0;

        buf_init(&u, 0);
        for (;;) {
            row = mysql_fetch_row(res);
            /* A finished unique key goes to its table. */
            if (cur_table >= 0 && cur_index &&
                (!row || find_table(ix, out->ntables, row[0]) != cur_table ||
                 !row[1] || strcmp(row[1], cur_index) != 0)) {
                if (strcmp(cur_index, "PRIMARY") != 0 && !bad && u.len) {
                    struct db_table *t = &out->tables[cur_table];
                    char **slot = schema_push(&t->uniques, &t->nuniques,
                                       sizeof *slot);
                    if (!slot || !(*slot = buf_steal(&u))) {
                        free(cur_index);
                        buf_free(&u);
                        goto out;
                    }
                }
                buf_free(&u);
                buf_init(&u, 0);
                free(cur_index);
                cur_index = NULL;
                bad = 0;
            }
            if (!row)
                break;
            ti = find_table(ix, out->ntables, row[0]);
            if (ti < 0 || !row[1])
                continue;
            if (!cur_index) {
                cur_index = strdup(row[1]);
                cur_table = ti;
                if (!cur_index) {
                    buf_free(&u);
                    goto out;
                }
            }
            ci = find_col(&out->tables[ti], row[2]);
            if (ci < 0) { /* an expression key: not a column list */
                bad = 1;
                continue;
            }
            if (strcmp(row[1], "PRIMARY") == 0) {
                out->tables[ti].cols[ci].pk =
                    row[3] ? (int)strtol(row[3], NULL, 10) : 1;
                continue;
            }
            if (u.len)
                buf_puts(&u, ", ");
            schema_put_name(&u, out, row[2]);
        }
        buf_free(&u);
    }
    mysql_free_result(res);
    res = NULL;

    what = "foreign keys";
    res = query(s,
                "SELECT TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, "
                "REFERENCED_COLUMN_NAME "
                "FROM information_schema.KEY_COLUMN_USAGE "
                "WHERE TABLE_SCHEMA = DATABASE() "
                "AND REFERENCED_TABLE_SCHEMA = DATABASE() "
                "AND REFERENCED_TABLE_NAME IS NOT NULL "
                "ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION "
                ALL_ROWS);
    if (!res)
        goto dberr;
    while ((row = mysql_fetch_row(res)) != NULL) {
        struct db_fkey *f;
        ti = find_table(ix, out->ntables, row[0]);
        if (ti < 0 || !row[1] || !row[2])
            continue;
        f = schema_push(&out->tables[ti].fks, &out->tables[ti].nfks, sizeof *f);
        if (!f)
            goto out;
        f->from = strdup(row[1]);
        f->table = strdup(row[2]);
        f->to = dup_or_null(row[3]);
        if (!f->from || !f->table || (row[3] && *row[3] && !f->to))
            goto out;
    }
    mysql_free_result(res);
    res = NULL;

    /* Samples and row counts, table by table (views are not run). A
    ** table another session has locked is not waited for: it goes
    ** without samples (lock_wait_timeout 0 is NOWAIT; the next statement
    ** sets the limits again). */
    if (watched(s, "SET SESSION lock_wait_timeout = 0", NULL) == 0)
        s->set_timeout_ms = -1;
    for (i = 0; i < out->ntables; i += SAMPLE_BATCH) {
        struct db_table *tabs[SAMPLE_BATCH];
        long seen[SAMPLE_BATCH];
        int idx[SAMPLE_BATCH], k, m = 0, brc;

        for (k = i; k < out->ntables && k < i + SAMPLE_BATCH; k++)
            if (!out->tables[k].is_view && out->tables[k].ncols > 0) {
                idx[m] = k;
                tabs[m++] = &out->tables[k];
            }
        if (!m)
            continue;
        brc = sample_batch(s, tabs, m, db->sample_values, seen);
        if (brc < 0)
            goto out;
        /* A batch the cancel cut short is not read again table by
        ** table: each would fail, and the schema end without samples. */
        if (cancelled(s))
            goto dberr;
        for (k = 0; k < m; k++) {
            struct db_table *t = tabs[k];
            long est = estimates[idx[k]];
            if (brc > 0) { /* one by one: the unreadable one goes alone */
                seen[k] = SAMPLE_ROWS + 1;
                if (read_samples(s, t, db->sample_values, &seen[k]))
                    goto out;
            }
            if (seen[k] <= SAMPLE_ROWS) {
                t->rows = seen[k] > db->count_cap ? db->count_cap : seen[k];
                t->rows_capped = seen[k] > db->count_cap;
            } else if (est >= 0) {
                t->rows = est;
                t->rows_estimated = 1;
            }
        }
    }
    rc = ASKDB_OK;
    /* A cancel that came after the last statement: nothing is kept, as
    ** on every engine. */
    if (!cancelled(s))
        goto out;
dberr:
    if (cancelled(s)) {
        /* A session the stop may have cut off, or one whose statement
        ** was killed: the next statement connects again. */
        s->dead = 1;
        snprintf(db->errmsg, sizeof db->errmsg, "cancelled");
        rc = ASKDB_ERR_CANCELLED;
        goto out;
    }
    snprintf(db->errmsg, sizeof db->errmsg,
             "cannot read the schema (%s) of '%s': %s (error %u)", what,
             db->label, mysql_error(s->h), mysql_errno(s->h));
    if (gone(mysql_errno(s->h)))
        s->dead = 1;
    rc = ASKDB_ERR_DB;
out:
    if (rc == ASKDB_ERR_NOMEM)
        snprintf(db->errmsg, sizeof db->errmsg,
                 "out of memory reading the schema of '%s'", db->label);
    mysql_free_result(res);
    free(ix);
    free(estimates);
    return rc;
}

#endif /* ASKDB_HAVE_MARIADB */

const struct db_driver db_mariadb_driver = {
    "mariadb", "MariaDB", my_open, my_close, my_schema, my_check, my_run,
    NULL
};
