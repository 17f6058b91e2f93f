/* server.h - what the MCP sessions share: the databases, their agents
** and the model. */
#ifndef ASKDB_MCP_SERVER_H
#define ASKDB_MCP_SERVER_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

#include "askdb.h"
#include "../cli/warm.h"

/*
** One server serves many sessions (stdio has one; the HTTP transport will
** have one per client). Everything here is created at start or lazily
** under its lock and lives until mcp_server_free():
**
**   db_lock     guards db (the handle of execute_sql and explain_sql):
**               askdb handles are used by one thread at a time
**   schema_lock guards schema and schema_text (read once, on a handle of
**               their own, then kept): list_databases, search_objects and
**               the resources use them under this lock alone, so that a
**               statement running on the database (up to --timeout) does
**               not hold them up, not even the first read; a call takes
**               it with mcp_db_schema_lock(), so that its cancel ends its
**               wait behind another call's first read
**   agent_lock  guards agent and step_fn/step_ud: one question at a time
**               per database, so calls of `ask` on one database queue up
**               while other databases answer in parallel
*/

/* Called with each step event of the question running on a database's
** agent (on the asking thread). */
typedef void (*mcp_step_fn)(void *ud, const askdb_event *ev);

struct mcp_db {
    char *name;              /* the name clients use, [A-Za-z0-9_.-]+ */
    char *path;
    pthread_mutex_t db_lock;
    askdb_db *db;
    pthread_mutex_t schema_lock;
    json_t *schema;          /* askdb_db_schema_json without "text" */
    char *schema_text;       /* its "text", as askdb_db_schema_text */
    const askdb_config *cfg; /* the server's, to open the schema's handle */
    pthread_mutex_t agent_lock;
    askdb_agent *agent;      /* NULL until the first question */
    mcp_step_fn step_fn;     /* the running question's listener, or NULL */
    void *step_ud;
};

struct mcp_server {
    askdb_config cfg;        /* copied; its strings outlive the server */
    struct mcp_db *dbs;
    int ndb;
    pthread_mutex_t model_lock;
    askdb_model *model;      /* NULL until the first question */
    int model_borrowed;      /* the model is the embedder's (serve's) */
    struct warm warm;        /* mcp_server_warm_start() */
    const char *command;     /* what started it, for messages that name
                                its options: "askdb mcp" (the default)
                                or "askdb serve" */
    atomic_int stopping;     /* mcp_server_stop(): opens are cancelled */
};

/*
** Open every database (read-only, as askdb always does) so that a bad path
** fails at start. names[i] may be NULL: the name is then the file's stem.
** On failure returns the status with a message in err (errlen bytes) and
** *out is NULL. ASKDB_ERR_USAGE: a bad or repeated name, no database.
*/
/* The name a database given as a bare path goes by (askdb mcp, askdb
** serve): the file's stem ("data/shop.db" -> "shop"), each character a
** name may not hold made one '_' (a UTF-8 character, or a byte that
** starts none), at most 64 bytes. malloc()ed, or NULL. */
char *mcp_name_of_path(const char *path);

askdb_status mcp_server_new(const askdb_config *cfg, int n,
                            const char *const *names,
                            const char *const *paths,
                            struct mcp_server **out, char *err,
                            size_t errlen);
void mcp_server_free(struct mcp_server *s);

/*
** The warm-up of askdb mcp (askdb serve warms its own): a thread loads
** the model now rather than at the first question, and with the local
** model gets each database's schema prompt ready, one after the other,
** with an agent of its own (askdb_agent_warm), so that no first question
** pays for it. A question that arrives meanwhile takes its turn in the
** decoder. A model that fails to load is said on stderr and tried again
** by the first question, which reports it. mcp_server_free() stops it.
*/
void mcp_server_warm_start(struct mcp_server *s);

/* Use m (loaded by the caller, e.g. askdb serve's, and outliving s)
** instead of loading a model of its own. */
void mcp_server_share_model(struct mcp_server *s, askdb_model *m);

/* Name the command that serves s (a static string, e.g. "askdb serve"),
** which messages name when they point at its options. */
void mcp_server_set_command(struct mcp_server *s, const char *command);

/* The database called name, or NULL. */
struct mcp_db *mcp_server_find(struct mcp_server *s, const char *name);

/*
** Told of the handle of a first schema read (mcp_db_schema()), on the
** reading thread: with opening 1 once it can be cancelled and before its
** database is opened, with opening 0 while the schema is read on it, and
** with db NULL when the read is over. In between another thread may stop
** it with askdb_db_cancel(db) (a server that takes the connection and
** answers nothing, a file another process holds locked).
*/
typedef void (*mcp_schema_fn)(void *ud, askdb_db *db, int opening);

/* Whether the call behind ud was cancelled (by its client or by the
** server). */
typedef int (*mcp_cancelled_fn)(void *ud);

/*
** Take d->schema_lock for a call: ASKDB_OK with it held (the caller
** unlocks it), or ASKDB_ERR_CANCELLED without it once cancelled(ud) says
** the call was cancelled while another call held the lock (a first read
** of the schema, which a lock on the file may hold up to --timeout): it
** is asked every SCHEMA_WAIT_STEP_MS. cancelled NULL: wait as long as it
** takes.
*/
askdb_status mcp_db_schema_lock(struct mcp_db *d, mcp_cancelled_fn cancelled,
                                void *ud);

/*
** The database's schema JSON (askdb_db_schema_json, without its "text")
** and its text as the model reads it (askdb_db_schema_text), both read on
** first use and kept: on a handle opened for that read and closed after,
** not through d->db, so that neither waits for a statement running there.
** fn (may be NULL) is told of that handle (mcp_schema_fn), so that a
** cancel of the call or a stop of the server reaches its open and read.
** Caller holds d->schema_lock; *out is borrowed for as long as the server
** lives. On failure *out is NULL and err (errlen bytes) says why.
*/
askdb_status mcp_db_schema(struct mcp_db *d, mcp_schema_fn fn, void *ud,
                           json_t **out, char *err, size_t errlen);
askdb_status mcp_db_schema_text(struct mcp_db *d, mcp_schema_fn fn,
                                void *ud, const char **out, char *err,
                                size_t errlen);

/*
** The database's agent, made on first use over the server's one model;
** open_fn (may be NULL) is told of its open (askdb_config.open_fn), so
** that a cancel of the call stops it. Caller holds d->agent_lock. On
** failure returns the status (ASKDB_ERR_CANCELLED for a cancelled open)
** and writes why into err.
*/
askdb_status mcp_db_agent(struct mcp_server *s, struct mcp_db *d,
                          askdb_open_fn open_fn, void *open_ud,
                          askdb_agent **out, char *err, size_t errlen);

/* The server stops (askdb serve's /mcp): a database an ask call or a
** schema read begins to open from now on is cancelled at once. */
void mcp_server_stop(struct mcp_server *s);

#endif
