/* server.h - what the files of `askdb serve` share: the server, its
** databases, conversations and question jobs. */
#ifndef ASKDB_SERVER_H
#define ASKDB_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "askdb.h"

/*
** Design (docs/server.md has the whole picture):
** - libmicrohttpd runs one thread per connection (MHD_USE_THREAD_PER_
**   CONNECTION with poll(), so more than FD_SETSIZE connections work): a
**   slow or idle client holds only its own thread, and times out.
** - A question is a job on a thread of its own. It first waits for one of
**   srv.workers slots, in arrival order (a `queued` event tells its place),
**   then asks the agent of its conversation. Its output (SSE events, or
**   the one JSON document) goes into a stream (stream.h) that the
**   connection's thread sends as the response body, looking every 100 ms
**   whether the client has gone (poll POLLRDHUP): then the question is
**   cancelled (askdb_agent_cancel), generation and query stop.
** - A conversation holds one agent (config.conversation on), so that a
**   follow-up is read with the earlier questions; one question at a time
**   runs on it. At most srv.max_convs are kept, the least recently used
**   idle one is dropped first.
** - The model is loaded once (askdb_model) and shared by every agent.
*/

struct srv_db {
    char *name;
    char *path;
    char *schema_json;       /* askdb_db_schema_json, read at start */
    char engine[16];         /* askdb_db_engine */
    int ntables;
};

struct srv_conv {
    char id[40];
    struct srv_db *db;
    askdb_agent *ag;
    struct srv_job *job;     /* the job asking now (under conv's lock) */
    pthread_mutex_t mu;      /* held while a question runs */
    int users;               /* jobs holding or waiting for it (srv.mu) */
    double last_used;
    struct srv_conv *next;
};

struct srv_job;

/* A statement of POST /api/sql while it runs (http.c). */
struct srv_sql {
    const char *client;
    struct server *srv;
    askdb_db *opening;       /* the handle while its database is being
                                opened (srv.mu): a stop cancels it */
    struct srv_sql *next;
};

/* Statements of /api/sql at once, each in a process of its own: more get
** 503 (and one client's past --per-client, 429). */
#define SRV_SQL_MAX 16

struct server {
    askdb_config cfg;        /* model, limits and techniques */
    askdb_model *model;
    struct srv_db *dbs;
    int ndbs;
    const char *token;       /* bearer token, or NULL */
    const char *cors_origin; /* the one origin allowed, or NULL */
    int workers;             /* questions answered at the same time */
    int queue_max;           /* questions waiting past that: 503 */
    int per_client;          /* questions of one client address: 429 */
    size_t max_body;
    int max_convs;
    FILE *access_log;
    pthread_mutex_t log_mu;
    struct srv_mcp *mcp;     /* MCP over HTTP at /mcp (mcp_http.h) */

    pthread_mutex_t mu;      /* everything below */
    pthread_cond_t cv;
    int running;             /* slots in use */
    unsigned long next_ticket, serving;
    int waiting;
    struct srv_conv *convs;
    int nconvs;
    struct srv_job *jobs;    /* live jobs (shutdown cancels them) */
    struct srv_sql *sqls;    /* statements of /api/sql running */
    int nsql;
    struct srv_job *wait_head; /* the queue, oldest first */
    struct srv_job **wait_tail;
    atomic_int stopping;
    atomic_int answering;    /* requests from their routing (the body
                                read) to their end (on_completed): a
                                stop waits for them */
};

/* Milliseconds on a monotonic clock (common.c, as the three below). */
double srv_now_ms(void);

/* *ts set to ms milliseconds from now on CLOCK_REALTIME, its nanoseconds
** below one second: the deadline pthread_cond_timedwait() on a condition
** of the default clock, and pthread_mutex_timedlock(), take. (The
** library's is clockx_deadline_in(), which a front end cannot include.) */
void srv_deadline_in(struct timespec *ts, long ms);

/* A random id of 16 hex digits into out (17 bytes at least). */
void srv_random_id(char *out);

/* Each byte of s that starts no valid UTF-8 character made '?', in
** place: what a client sent (a path, a header) goes into JSON, which
** jansson refuses to hold unless it is UTF-8. */
void srv_utf8_clean(char *s);

/* The database called name, or NULL. */
struct srv_db *srv_find_db(struct server *s, const char *name);

/*
** A question as a response body (ask.c): start its job and return the
** libmicrohttpd response that streams it (sse) or returns its JSON at the
** end. conn_fd: the client's socket, watched for a hang-up. On a refusal
** (queue full, too many questions of this client) *status is 503 or 429,
** *why says so and NULL is returned.
*/
struct MHD_Response;
struct srv_ask {
    struct srv_db *db;
    const char *question;
    const char *conversation_id; /* NULL: a new conversation */
    const char *request_id;
    const char *client;      /* the client's address, for per_client */
    int sse;
    int answer;              /* options.answer */
    int conn_fd;
};
struct MHD_Response *srv_ask_response(struct server *s,
                                      const struct srv_ask *q, int *status,
                                      const char **why, char *conv_id);

/* Cancel every running question and wait for the jobs to end (shutdown,
** after grace_ms; a question still waiting for a worker, or for its
** database to open, at once). */
void srv_jobs_stop(struct server *s, int grace_ms);

/* Free the conversations (at exit, no job running). */
void srv_convs_free(struct server *s);

/* The OpenAPI 3.1 document of the API (openapi.c): static text. */
extern const char srv_openapi_json[];

/* Serve until SIGINT/SIGTERM (http.c); listen is "HOST:PORT". Returns
** the exit code. */
int srv_run(struct server *s, const char *listen);

/* Whether "HOST:PORT" parses as an address to listen on. */
int srv_listen_ok(const char *listen);

/* Whether "HOST:PORT" names a loopback address (127.0.0.0/8, ::1). */
int srv_is_loopback(const char *listen);

/* `askdb serve` (serve.c): argv[0] is "askdb serve" (getopt starts its
** messages with it); returns the exit code. */
int cmd_serve(int argc, char **argv);

#endif
