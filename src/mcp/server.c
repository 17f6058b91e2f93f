/* server.c - the databases, agents and model that every MCP session shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"

/* 1 when c may be in a name: an ASCII letter or digit, '_', '-', '.'. */
static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

/* A name clients can type and put into a URI unescaped. */
static int name_ok(const char *s)
{
    if (!*s || strlen(s) > 64)
        return 0;
    for (; *s; s++)
        if (!name_char(*s))
            return 0;
    return 1;
}

char *mcp_name_of_path(const char *path)
{
    const char *b = strrchr(path, '/');
    char *s, *dot, *p, *q;
    size_t k;

    s = strdup(b ? b + 1 : path);
    if (!s)
        return NULL;
    dot = strrchr(s, '.');
    if (dot && dot != s)
        *dot = '\0';
    /* A character, not a byte, becomes one '_': "Données" is Donn_es, as
    ** the man page says. A byte that starts no valid UTF-8 character is
    ** a character of its own. The name only shrinks, so it is done in
    ** place. */
    for (p = q = s; *p; p += k) {
        k = name_char(*p) ? 1 : askdb_utf8_len(p, strnlen(p, 4));
        if (k == 0)
            k = 1;
        *q++ = name_char(*p) ? *p : '_';
    }
    *q = '\0';
    if (strlen(s) > 64)
        s[64] = '\0';
    return s;
}

/* askdb_config.event_fn of every agent: hand the step to the question's
** listener. The agent lock is held by this very thread (the asker). */
static void db_event(void *ud, const askdb_event *ev)
{
    struct mcp_db *d = ud;

    if (d->step_fn)
        d->step_fn(d->step_ud, ev);
}

askdb_status mcp_server_new(const askdb_config *cfg, int n,
                            const char *const *names,
                            const char *const *paths,
                            struct mcp_server **out, char *err,
                            size_t errlen)
{
    struct mcp_server *s;
    askdb_status st = ASKDB_ERR_NOMEM;
    int i, j;

    *out = NULL;
    snprintf(err, errlen, "out of memory");
    if (n < 1) {
        snprintf(err, errlen, "no database: give one or more as PATH, "
                              "--db NAME=PATH or in --config FILE");
        return ASKDB_ERR_USAGE;
    }
    s = calloc(1, sizeof *s);
    if (!s)
        return ASKDB_ERR_NOMEM;
    s->cfg = *cfg;
    s->command = "askdb mcp";
    atomic_init(&s->stopping, 0);
    /* Each database has its own agent, and calls on different databases
    ** run at once: the local model gets a lane for each (up to 4), so
    ** they decode together instead of waiting for one lane. */
    if (s->cfg.parallel < 1)
        s->cfg.parallel = n < 4 ? n : 4;
    pthread_mutex_init(&s->model_lock, NULL);
    s->dbs = calloc((size_t)n, sizeof *s->dbs);
    if (!s->dbs)
        goto fail;
    for (i = 0; i < n; i++) {
        struct mcp_db *d = &s->dbs[i];

        pthread_mutex_init(&d->db_lock, NULL);
        pthread_mutex_init(&d->schema_lock, NULL);
        pthread_mutex_init(&d->agent_lock, NULL);
        d->cfg = &s->cfg;
        s->ndb++;
        d->name = names[i] ? strdup(names[i]) : mcp_name_of_path(paths[i]);
        d->path = strdup(paths[i]);
        if (!d->name || !d->path)
            goto fail;
        if (!name_ok(d->name)) {
            snprintf(err, errlen, "database name '%s' may hold only "
                     "letters, digits, '_', '-' and '.' (at most 64)",
                     d->name);
            st = ASKDB_ERR_USAGE;
            goto fail;
        }
        for (j = 0; j < i; j++)
            if (strcmp(s->dbs[j].name, d->name) == 0) {
                snprintf(err, errlen, "two databases are called '%s': "
                         "name them with --db NAME=PATH", d->name);
                st = ASKDB_ERR_USAGE;
                goto fail;
            }
        st = askdb_db_open(d->path, &s->cfg, &d->db);
        if (st) {
            snprintf(err, errlen, "%s", d->db ? askdb_db_errmsg(d->db)
                                              : "out of memory");
            goto fail;
        }
    }
    s->cfg.event_fn = db_event;
    *out = s;
    return ASKDB_OK;
fail:
    mcp_server_free(s);
    return st;
}

/* The warm-up's model (warm.h): loaded now unless a question did. A
** model that fails to load is said, and the first question, which tries
** again, reports it. */
static askdb_model *mcp_model(void *ud)
{
    struct mcp_server *s = ud;
    askdb_model *m;

    pthread_mutex_lock(&s->model_lock);
    if (!s->model && askdb_model_new(&s->cfg, &s->model) != ASKDB_OK) {
        fprintf(stderr, "askdb mcp: the model did not load: %s (the first "
                        "question tries again)\n",
                s->model ? askdb_model_errmsg(s->model) : "out of memory");
        askdb_model_free(s->model);
        s->model = NULL;
    }
    m = s->model;
    pthread_mutex_unlock(&s->model_lock);
    return m;
}

void mcp_server_warm_start(struct mcp_server *s)
{
    const char **paths, **names;
    int i;

    if (s->warm.running || s->model_borrowed)
        return;
    paths = calloc((size_t)s->ndb + 1, sizeof *paths);
    names = calloc((size_t)s->ndb + 1, sizeof *names);
    if (paths && names) {
        for (i = 0; i < s->ndb; i++) {
            paths[i] = s->dbs[i].path;
            names[i] = s->dbs[i].name;
        }
        warm_start(&s->warm, &s->cfg, s->ndb, paths, names, mcp_model, s,
                   "askdb mcp");
    }
    free(paths);
    free(names);
}

void mcp_server_free(struct mcp_server *s)
{
    int i;

    if (!s)
        return;
    warm_stop(&s->warm);
    for (i = 0; i < s->ndb; i++) {
        struct mcp_db *d = &s->dbs[i];

        askdb_agent_free(d->agent);
        askdb_db_close(d->db);
        json_decref(d->schema);
        free(d->schema_text);
        pthread_mutex_destroy(&d->db_lock);
        pthread_mutex_destroy(&d->schema_lock);
        pthread_mutex_destroy(&d->agent_lock);
        free(d->name);
        free(d->path);
    }
    if (!s->model_borrowed)
        askdb_model_free(s->model);
    pthread_mutex_destroy(&s->model_lock);
    free(s->dbs);
    free(s);
}

void mcp_server_share_model(struct mcp_server *s, askdb_model *m)
{
    s->model = m;
    s->model_borrowed = 1;
}

void mcp_server_set_command(struct mcp_server *s, const char *command)
{
    s->command = command;
}

struct mcp_db *mcp_server_find(struct mcp_server *s, const char *name)
{
    int i;

    for (i = 0; name && i < s->ndb; i++)
        if (strcmp(s->dbs[i].name, name) == 0)
            return &s->dbs[i];
    return NULL;
}

/* A schema read's mcp_schema_fn, as askdb_config.open_fn of its open. */
struct schema_watch {
    mcp_schema_fn fn;
    void *ud;
};

static void schema_opening(void *ud, askdb_agent *ag, askdb_db *db)
{
    struct schema_watch *w = ud;

    (void)ag;
    w->fn(w->ud, db, db != NULL);
}

/*
** Read d's schema, its JSON (without "text") into d->schema and its text
** into d->schema_text, on a handle of its own, opened for it and closed
** after: d->db runs execute_sql's statements under d->db_lock, and a read
** through it waited for the one running there, up to --timeout. The
** handle runs no statement of a client's, so it needs no askdb-exec
** (in_process): the schema is read in this process on every handle.
** fn (may be NULL) is told of the handle while it is opened and read,
** so that the call's cancel or the server's stop reaches it (a server
** that takes the connection and answers nothing holds the open for its
** connect_timeout, a lock on the file the read for --timeout).
** Caller holds d->schema_lock. On failure err (errlen bytes) says why
** and nothing is kept: the next use tries again.
*/
static askdb_status load_schema(struct mcp_db *d, mcp_schema_fn fn,
                                void *ud, char *err, size_t errlen)
{
    askdb_config cfg = *d->cfg;
    struct schema_watch w = {fn, ud};
    askdb_db *db = NULL;
    askdb_status st;
    char *text = NULL;
    json_t *j, *t;

    cfg.in_process = 1;
    cfg.open_fn = fn ? schema_opening : NULL;
    cfg.open_ud = &w;
    st = askdb_db_open(d->path, &cfg, &db);
    if (st == ASKDB_OK) {
        if (fn)
            fn(ud, db, 0);
        st = askdb_db_schema_json(db, 0, &text);
        if (fn)
            fn(ud, NULL, 0);
    }
    if (st)
        snprintf(err, errlen, "%s", db ? askdb_db_errmsg(db)
                                       : "out of memory");
    askdb_db_close(db);
    if (st)
        return st;
    j = json_loads(text, 0, NULL);
    askdb_free(text);
    t = json_object_get(j, "text");
    d->schema_text = json_is_string(t) ? strdup(json_string_value(t)) : NULL;
    if (!json_is_object(j) || !d->schema_text) {
        json_decref(j);
        free(d->schema_text);
        d->schema_text = NULL;
        snprintf(err, errlen, "out of memory");
        return ASKDB_ERR_NOMEM;
    }
    /* The prompt's text is the schema resource; keep the structure only. */
    json_object_del(j, "text");
    d->schema = j;
    return ASKDB_OK;
}

/* How often a call waiting for a schema_lock looks at its cancel. */
#define SCHEMA_WAIT_STEP_MS 20

/*
** A waiter in pthread_mutex_lock() saw its cancel only once the read
** ahead of it ended. The wait is cut into steps of SCHEMA_WAIT_STEP_MS
** (pthread_mutex_timedlock()) with a look at the cancel between them: a
** cancelled waiter leaves within a step, and schema_lock and the
** session's lock are never held together (a condition variable that the
** cancel woke would take them in both orders: the cancel holds the
** session's lock, the waiter would hold the schema's).
*/
askdb_status mcp_db_schema_lock(struct mcp_db *d, mcp_cancelled_fn cancelled,
                                void *ud)
{
    struct timespec until;

    if (!cancelled) {
        pthread_mutex_lock(&d->schema_lock);
        return ASKDB_OK;
    }
    for (;;) {
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += SCHEMA_WAIT_STEP_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (pthread_mutex_timedlock(&d->schema_lock, &until) == 0)
            return ASKDB_OK;
        if (cancelled(ud))
            return ASKDB_ERR_CANCELLED;
    }
}

askdb_status mcp_db_schema(struct mcp_db *d, mcp_schema_fn fn, void *ud,
                           json_t **out, char *err, size_t errlen)
{
    askdb_status st = d->schema ? ASKDB_OK
                                : load_schema(d, fn, ud, err, errlen);

    *out = d->schema;
    return st;
}

askdb_status mcp_db_schema_text(struct mcp_db *d, mcp_schema_fn fn,
                                void *ud, const char **out, char *err,
                                size_t errlen)
{
    askdb_status st = d->schema ? ASKDB_OK
                                : load_schema(d, fn, ud, err, errlen);

    *out = d->schema_text;
    return st;
}

void mcp_server_stop(struct mcp_server *s)
{
    atomic_store(&s->stopping, 1);
}

askdb_status mcp_db_agent(struct mcp_server *s, struct mcp_db *d,
                          askdb_open_fn open_fn, void *open_ud,
                          askdb_agent **out, char *err, size_t errlen)
{
    askdb_config cfg = s->cfg;
    askdb_status st = ASKDB_OK;

    *out = d->agent;
    if (d->agent)
        return ASKDB_OK;
    pthread_mutex_lock(&s->model_lock);
    if (!s->model) {
        st = askdb_model_new(&s->cfg, &s->model);
        if (st) {
            snprintf(err, errlen, "%s", s->model
                     ? askdb_model_errmsg(s->model) : "out of memory");
            askdb_model_free(s->model);
            s->model = NULL;
        }
    }
    pthread_mutex_unlock(&s->model_lock);
    if (st)
        return st;
    cfg.event_ud = d;
    cfg.open_fn = open_fn;
    cfg.open_ud = open_ud;
    st = askdb_agent_new_with_model(&cfg, s->model, d->path, &d->agent);
    if (st) {
        snprintf(err, errlen, "%s", d->agent ? askdb_agent_errmsg(d->agent)
                                             : "out of memory");
        askdb_agent_free(d->agent);
        d->agent = NULL;
        return st;
    }
    *out = d->agent;
    return ASKDB_OK;
}
