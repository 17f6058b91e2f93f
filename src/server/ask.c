/* ask.c - questions as jobs: the queue, the conversations, and the stream
** of events a job writes for its response (see server.h). */
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"
#include "stream.h"

#define WATCH_MS 100         /* how often a waiting job looks at its
                                cancel */

struct srv_job {
    struct server *s;
    struct srv_db *db;
    char *question;
    char conv_id[40];
    int conv_new;            /* this question began its conversation */
    char request_id[72];
    char client[64];
    int sse, answer;
    int rows_sent;           /* sql and rows went out at the result event */
    struct srv_stream *out;  /* the response body */

    pthread_mutex_t mu;      /* ag, opening */
    askdb_agent *ag;         /* the agent while it asks, or opens */
    int opening;             /* ag's database is being opened: a stop
                                cancels it at once */

    atomic_int cancelled;
    int waiting;             /* in the queue (srv.mu) */
    int conv_wait;           /* waiting, with no slot, for its busy
                                conversation (srv.mu) */
    struct srv_job *next_wait;
    struct srv_job *next;    /* srv.jobs (srv.mu) */
};

/* The job failed before or instead of asking: an error (and a done event
** with the same error, so that a stream always ends with done). */
static void fail(struct srv_job *j, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(struct srv_job *j, const char *code, const char *fmt, ...)
{
    char msg[1024];
    json_t *done;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* The library's message may quote bytes that are no UTF-8 (a file
    ** name in Latin-1): jansson made no document of it, and the response
    ** broke off with nothing. */
    srv_utf8_clean(msg);
    /* The Answer document of api/openapi.json: sql and attempts too. */
    done = json_pack("{s:s, s:s, s:s, s:s, s:n, s:[], s:{s:s, s:s}}",
                     "question", j->question, "request_id", j->request_id,
                     "status", code, "conversation_id", j->conv_id, "sql",
                     "attempts", "error", "code", code, "message", msg);
    if (j->sse) {
        srv_stream_event_json(j->out, "error",
                              json_pack("{s:{s:s, s:s}}", "error", "code",
                                        code, "message", msg));
        srv_stream_event_json(j->out, "done", done);
    } else {
        srv_stream_json(j->out, done);
    }
}

/* The job was cancelled before its question was asked: say so (a client
** that went away reads nothing; one the shutdown turned away reads why). */
static void not_asked(struct srv_job *j)
{
    if (atomic_load(&j->s->stopping))
        fail(j, "cancelled", "the server stopped before the question's "
             "turn came; ask again once it runs");
    else
        fail(j, "cancelled", "cancelled before the question was asked");
}

/* ---------------------------------------------------------------------- */
/* The job's life                                                         */
/* ---------------------------------------------------------------------- */

static void job_free(struct srv_job *j)
{
    pthread_mutex_destroy(&j->mu);
    free(j->question);
    free(j);
}

/* Stop the job's question (client gone, shutdown). */
static void job_cancel(struct srv_job *j)
{
    atomic_store(&j->cancelled, 1);
    pthread_mutex_lock(&j->mu);
    if (j->ag)
        askdb_agent_cancel(j->ag);
    pthread_mutex_unlock(&j->mu);
}

/* The job's new agent opens its database (askdb_open_fn): a cancel
** reaches it from now on, at once when the server stops (an open that
** has not ended has no answer to finish; one to a server that answers
** nothing waits for its connect timeout). */
static void job_opening(void *ud, askdb_agent *ag, askdb_db *db)
{
    struct srv_job *j = ud;

    (void)db;
    pthread_mutex_lock(&j->mu);
    j->ag = ag;
    j->opening = ag != NULL;
    if (ag && (atomic_load(&j->cancelled) || atomic_load(&j->s->stopping)))
        askdb_agent_cancel(ag);
    pthread_mutex_unlock(&j->mu);
}

/* Stop the job's open in flight, if any (the server stops). */
static void job_cancel_open(struct srv_job *j)
{
    pthread_mutex_lock(&j->mu);
    if (j->opening && j->ag) {
        atomic_store(&j->cancelled, 1);
        askdb_agent_cancel(j->ag);
    }
    pthread_mutex_unlock(&j->mu);
}

/* The stream's reader is gone before the job ended. */
static void on_gone(void *ud)
{
    job_cancel(ud);
}

/*
** Wait for a slot: the job was queued at its start when every slot was
** taken; a finishing job hands its slot to the oldest waiter. Sends a
** `queued` event with the place whenever it changes. 0 with a slot, -1
** when cancelled while waiting (it left the queue).
*/
static int wait_slot(struct srv_job *j)
{
    struct server *s = j->s;
    struct srv_job *w, **pp;
    struct timespec ts;
    int pos, last = 0;

    pthread_mutex_lock(&s->mu);
    while (j->waiting) {
        pos = 1;
        for (w = s->wait_head; w && w != j; w = w->next_wait)
            pos++;
        if (pos != last && j->sse) {
            pthread_mutex_unlock(&s->mu);
            srv_stream_event_json(j->out, "queued",
                                  json_pack("{s:i}", "position", pos));
            pthread_mutex_lock(&s->mu);
            last = pos;
            continue;
        }
        if (atomic_load(&j->cancelled)) {
            for (pp = &s->wait_head; *pp; pp = &(*pp)->next_wait)
                if (*pp == j) {
                    *pp = j->next_wait;
                    break;
                }
            if (!s->wait_head)
                s->wait_tail = &s->wait_head;
            else
                for (s->wait_tail = &s->wait_head; *s->wait_tail;
                     s->wait_tail = &(*s->wait_tail)->next_wait)
                    ;
            j->waiting = 0;
            s->waiting--;
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
            return -1;
        }
        srv_deadline_in(&ts, WATCH_MS);
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* Put j at the end of the queue for a slot (srv.mu held). */
static void enqueue_locked(struct server *s, struct srv_job *j)
{
    j->waiting = 1;
    j->next_wait = NULL;
    *s->wait_tail = j;
    s->wait_tail = &j->next_wait;
    s->waiting++;
}

/* Give the slot back: to the oldest waiter, if any. */
static void release_slot(struct server *s)
{
    struct srv_job *w;

    pthread_mutex_lock(&s->mu);
    w = s->wait_head;
    if (w) {
        s->wait_head = w->next_wait;
        if (!s->wait_head)
            s->wait_tail = &s->wait_head;
        w->waiting = 0;
        s->waiting--;
    } else {
        s->running--;
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* ---------------------------------------------------------------------- */
/* Conversations                                                          */
/* ---------------------------------------------------------------------- */

/* The sql and rows events of the answer (put_answer), or of the result
** event, which comes before the answer in words: the rows are shown while
** the words are written. */
static void put_rows(struct srv_job *j, const char *sql,
                     const askdb_result *r)
{
    char *rows = NULL;

    if (sql)
        srv_stream_event_json(j->out, "sql", json_pack("{s:s}", "sql", sql));
    if (r && askdb_result_json(r, sql, NULL, 0, &rows) == ASKDB_OK) {
        srv_stream_event(j->out, "rows", rows, strlen(rows));
        askdb_free(rows);
    }
}

/* The result event: its step, then the sql and rows at once. */
static void on_result(struct srv_job *j, const askdb_event *ev)
{
    json_error_t je;
    json_t *o = json_loads(ev->json, 0, &je);
    const char *sql = json_string_value(json_object_get(o, "sql"));

    srv_stream_event(j->out, "step", ev->json, ev->json_len);
    if (sql && ev->result) {
        put_rows(j, sql, ev->result);
        j->rows_sent = 1;
    }
    json_decref(o);
}

/* The agent's step events go to the job asking on the conversation. */
static void on_event(void *ud, const askdb_event *ev)
{
    struct srv_conv *c = ud;
    struct srv_job *j = c->job;

    if (!j)
        return;
    /* A cancel that came before the question reset the agent's flag
    ** (askdb_agent_ask starts afresh): say it again at its first event. */
    if (ev->type == ASKDB_EVENT_QUESTION && atomic_load(&j->cancelled))
        askdb_agent_cancel(c->ag);
    if (j->sse && ev->type == ASKDB_EVENT_RESULT)
        on_result(j, ev);
    else if (j->sse)
        srv_stream_event(j->out, "step", ev->json, ev->json_len);
}

/* Drop the least recently used idle conversation over the cap (srv.mu
** held); returns it to be freed outside the lock, or NULL. */
static struct srv_conv *evict_locked(struct server *s)
{
    struct srv_conv **pp, **old = NULL, *c;

    if (s->nconvs < s->max_convs)
        return NULL;
    for (pp = &s->convs; *pp; pp = &(*pp)->next)
        if ((*pp)->users == 0 &&
            (!old || (*pp)->last_used < (*old)->last_used))
            old = pp;
    if (!old)
        return NULL;
    c = *old;
    *old = c->next;
    s->nconvs--;
    return c;
}

static void conv_free(struct srv_conv *c)
{
    if (!c)
        return;
    askdb_agent_free(c->ag);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/*
** The conversation of the job (found by id, or a new one), with one more
** user. NULL when out of memory, or (*clash set to the conversation's
** database, which lives as long as the server) when the id belongs to
** another database.
*/
static struct srv_conv *conv_acquire(struct srv_job *j,
                                     const struct srv_db **clash)
{
    struct server *s = j->s;
    struct srv_conv *c, *dropped = NULL;

    *clash = NULL;
    pthread_mutex_lock(&s->mu);
    for (c = s->convs; c; c = c->next)
        if (strcmp(c->id, j->conv_id) == 0)
            break;
    if (c && c->db != j->db) {
        *clash = c->db;
        pthread_mutex_unlock(&s->mu);
        return NULL;
    }
    if (!c) {
        dropped = evict_locked(s);
        c = calloc(1, sizeof *c);
        if (c) {
            snprintf(c->id, sizeof c->id, "%s", j->conv_id);
            c->db = j->db;
            pthread_mutex_init(&c->mu, NULL);
            c->next = s->convs;
            s->convs = c;
            s->nconvs++;
        }
    }
    if (c) {
        c->users++;
        c->last_used = srv_now_ms();
    }
    pthread_mutex_unlock(&s->mu);
    conv_free(dropped);
    return c;
}

static void conv_release(struct server *s, struct srv_conv *c)
{
    pthread_mutex_lock(&s->mu);
    c->users--;
    c->last_used = srv_now_ms();
    pthread_mutex_unlock(&s->mu);
}

void srv_convs_free(struct server *s)
{
    struct srv_conv *c, *next;

    for (c = s->convs; c; c = next) {
        next = c->next;
        conv_free(c);
    }
    s->convs = NULL;
    s->nconvs = 0;
}

/* ---------------------------------------------------------------------- */
/* Asking                                                                 */
/* ---------------------------------------------------------------------- */

/* The events after the answer: sql, rows (unless the result event sent
** them already), answer, error; then done with the whole answer (and the
** conversation's id). */
static void put_answer(struct srv_job *j, const askdb_answer *a)
{
    json_error_t je;
    json_t *o = NULL, *ev;
    char *text = NULL;
    const char *why = a->error ? a->error : "failed";

    /* Cancelled by the server's shutdown, not by the client. */
    if (a->status == ASKDB_ERR_CANCELLED && atomic_load(&j->s->stopping))
        why = "cancelled: the server shut down before the answer was "
              "complete; ask again when it runs";
    if (askdb_answer_json(a, 0, &text) == ASKDB_OK)
        o = json_loads(text, 0, &je);
    askdb_free(text);
    if (!o) {
        fail(j, "out of memory", "the answer could not be written as JSON");
        return;
    }
    if (a->status != ASKDB_OK && json_is_string(json_object_get(o, "error")))
        json_object_set_new(o, "error", json_string(why));
    json_object_set_new(o, "conversation_id", json_string(j->conv_id));
    /* True also when the request named a conversation the server no
    ** longer has (it restarted, or dropped it past --conversations): the
    ** client can tell that the question was asked without its history. */
    json_object_set_new(o, "conversation_started", json_boolean(j->conv_new));
    if (!j->sse) {
        srv_stream_json(j->out, o);
        return;
    }
    if (!j->rows_sent)
        put_rows(j, a->sql, a->result);
    if (a->text)
        srv_stream_event_json(j->out, "answer", json_pack("{s:s}", "text",
                                                          a->text));
    if (a->status != ASKDB_OK) {
        ev = json_pack("{s:{s:s, s:s}, s:O}", "error", "code",
                       askdb_status_str(a->status), "message", why,
                       "attempts", json_object_get(o, "attempts"));
        srv_stream_event_json(j->out, "error", ev);
    }
    srv_stream_event_json(j->out, "done", o);
}

/* Ask on the conversation c (its lock held). */
static void ask_on(struct srv_job *j, struct srv_conv *c)
{
    struct server *s = j->s;
    askdb_ask_options o;
    askdb_answer *a = NULL;
    askdb_config cfg;
    askdb_status st;

    j->conv_new = c->ag == NULL;
    if (!c->ag) {
        cfg = s->cfg;
        cfg.conversation = 1;
        cfg.event_fn = on_event;
        cfg.event_ud = c;
        cfg.log_fn = NULL;
        cfg.token_fn = NULL;
        cfg.open_fn = job_opening;
        cfg.open_ud = j;
        st = askdb_agent_new_with_model(&cfg, s->model, c->db->path, &c->ag);
        if (st == ASKDB_ERR_CANCELLED && atomic_load(&s->stopping))
            fail(j, "cancelled", "the server stopped while the database was "
                 "being opened; ask again once it runs");
        else if (st)
            fail(j, askdb_status_str(st), "%s", askdb_agent_errmsg(c->ag));
        if (st) {
            askdb_agent_free(c->ag);
            c->ag = NULL;
            return;
        }
    }
    c->job = j;
    pthread_mutex_lock(&j->mu);
    j->ag = c->ag;
    pthread_mutex_unlock(&j->mu);
    memset(&o, 0, sizeof o);
    o.request_id = j->request_id;
    o.answer = j->answer;
    /* A failed question is an answer too: its status and attempts say how
    ** it failed, and it is sent like any other. */
    st = askdb_agent_ask_opts(c->ag, j->question, &o, &a);
    (void)st;
    pthread_mutex_lock(&j->mu);
    j->ag = NULL;
    pthread_mutex_unlock(&j->mu);
    c->job = NULL;
    if (!a) {
        fail(j, "out of memory", "out of memory");
        return;
    }
    put_answer(j, a);
    askdb_answer_free(a);
}

static void jobs_remove(struct server *s, struct srv_job *j)
{
    struct srv_job **pp;

    pthread_mutex_lock(&s->mu);
    for (pp = &s->jobs; *pp; pp = &(*pp)->next)
        if (*pp == j) {
            *pp = j->next;
            break;
        }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/*
** The job holds a slot and its conversation is answering an earlier
** question: give the slot to the next waiter, wait for the conversation
** (c->mu, taken on return), then queue for a slot again, so that
** follow-ups to one busy conversation do not hold every worker idle. 0
** with a slot again, -1 when cancelled meanwhile (no slot).
*/
static int wait_conversation(struct srv_job *j, struct srv_conv *c)
{
    struct server *s = j->s;

    pthread_mutex_lock(&s->mu);
    j->conv_wait = 1;
    pthread_mutex_unlock(&s->mu);
    release_slot(s);
    pthread_mutex_lock(&c->mu);
    pthread_mutex_lock(&s->mu);
    j->conv_wait = 0;
    if (atomic_load(&j->cancelled) || atomic_load(&s->stopping)) {
        pthread_mutex_unlock(&s->mu);
        return -1;
    }
    if (s->running < s->workers && !s->wait_head)
        s->running++;
    else
        enqueue_locked(s, j);
    pthread_mutex_unlock(&s->mu);
    return wait_slot(j);
}

static void *job_main(void *ud)
{
    struct srv_job *j = ud;
    struct server *s = j->s;
    struct srv_conv *c;
    const struct srv_db *clash = NULL;
    int slot;

    if (wait_slot(j) == 0) {
        slot = 1;
        c = atomic_load(&j->cancelled) ? NULL : conv_acquire(j, &clash);
        if (c) {
            if (pthread_mutex_trylock(&c->mu) != 0 &&
                wait_conversation(j, c) != 0)
                slot = 0;
            if (slot && !atomic_load(&j->cancelled))
                ask_on(j, c);
            else
                not_asked(j);
            pthread_mutex_unlock(&c->mu);
            conv_release(s, c);
        } else if (atomic_load(&j->cancelled)) {
            not_asked(j);
        } else if (clash) {
            fail(j, "usage", "conversation '%s' belongs to database "
                 "'%s': ask this of '%s' with it, or of '%s' in a "
                 "conversation of its own (leave out conversation_id)",
                 j->conv_id, clash->name, clash->name, j->db->name);
        } else {
            fail(j, "out of memory", "out of memory");
        }
        if (slot)
            release_slot(s);
    } else {
        not_asked(j);
    }
    jobs_remove(s, j);
    srv_stream_end(j->out);   /* after this the stream never calls back */
    job_free(j);
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* Starting                                                               */
/* ---------------------------------------------------------------------- */

/* Run fn(arg) on a thread of its own, detached from the start. 0, or
** an error number. */
static int start_detached(void *(*fn)(void *), void *arg)
{
    pthread_attr_t at;
    pthread_t th;
    int rc = pthread_attr_init(&at);

    if (rc != 0)
        return rc;
    rc = pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (rc == 0)
        rc = pthread_create(&th, &at, fn, arg);
    pthread_attr_destroy(&at);
    return rc;
}

/* Jobs of one client address (srv.mu held). */
static int client_jobs(struct server *s, const char *client)
{
    const struct srv_job *j;
    int n = 0;

    for (j = s->jobs; j; j = j->next)
        n += strcmp(j->client, client) == 0;
    return n;
}

struct MHD_Response *srv_ask_response(struct server *s,
                                      const struct srv_ask *q, int *status,
                                      const char **why, char *conv_id)
{
    struct MHD_Response *r = NULL;
    struct srv_job *j;

    *status = 200;
    *why = NULL;
    j = calloc(1, sizeof *j);
    if (!j || !(j->question = strdup(q->question))) {
        free(j);
        *status = 500;
        *why = "out of memory";
        return NULL;
    }
    j->s = s;
    j->db = q->db;
    j->sse = q->sse;
    j->answer = q->answer;
    atomic_init(&j->cancelled, 0);
    pthread_mutex_init(&j->mu, NULL);
    snprintf(j->request_id, sizeof j->request_id, "%s", q->request_id);
    snprintf(j->client, sizeof j->client, "%s", q->client);
    if (q->conversation_id)
        snprintf(j->conv_id, sizeof j->conv_id, "%s", q->conversation_id);
    else
        srv_random_id(j->conv_id);
    snprintf(conv_id, 40, "%s", j->conv_id);
    j->out = srv_stream_new(q->conn_fd, q->sse, on_gone, j, &r);
    if (!j->out) {
        job_free(j);
        *status = 500;
        *why = "out of memory";
        return NULL;
    }

    pthread_mutex_lock(&s->mu);
    if (atomic_load(&s->stopping)) {
        *status = 503;
        *why = "the server is shutting down";
    } else if (client_jobs(s, j->client) >= s->per_client) {
        *status = 429;
        *why = "too many questions from this client at once; wait for "
               "one to finish";
    } else if (s->running < s->workers && !s->wait_head) {
        s->running++;
    } else if (s->waiting >= s->queue_max) {
        *status = 503;
        *why = "every worker is busy and the queue is full; try again "
               "shortly";
    } else {
        enqueue_locked(s, j);
    }
    if (*status == 200) {
        j->next = s->jobs;
        s->jobs = j;
    }
    pthread_mutex_unlock(&s->mu);
    /* Started detached, its id kept nowhere in j: a question that fails
    ** at once (a database that cannot be opened) frees j in job_main()
    ** before pthread_create() has returned here, and a pthread_detach()
    ** of j's field after it read freed memory (ASan saw it in CI). */
    if (*status == 200 && start_detached(job_main, j) != 0) {
        /* Never started: out of the queue (or its slot back) again. */
        atomic_store(&j->cancelled, 1);
        if (wait_slot(j) == 0)
            release_slot(s);
        jobs_remove(s, j);
        *status = 500;
        *why = "cannot start the question (out of threads)";
    }
    if (*status != 200) {
        srv_stream_end(j->out);
        MHD_destroy_response(r);
        job_free(j);
        return NULL;
    }
    return r;
}

void srv_jobs_stop(struct server *s, int grace_ms)
{
    struct srv_job *j;
    double t0 = srv_now_ms();
    struct timespec ts = {0, 20 * 1000000L};

    /* The questions still waiting for a worker are not in flight: they
    ** are turned away at once (each gets its error and done), and so are
    ** those whose database is still being opened (job_opening() cancels
    ** an open that begins from now on). */
    pthread_mutex_lock(&s->mu);
    for (j = s->jobs; j; j = j->next)
        if (j->waiting || j->conv_wait)
            job_cancel(j);
        else
            job_cancel_open(j);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (;;) {
        pthread_mutex_lock(&s->mu);
        j = s->jobs;
        if (j && srv_now_ms() - t0 > grace_ms)
            for (; j; j = j->next)
                job_cancel(j);
        j = s->jobs;
        pthread_mutex_unlock(&s->mu);
        if (!j)
            return;
        nanosleep(&ts, NULL);
    }
}
