/* stream.c - a response body that one thread writes while libmicrohttpd's
** connection thread sends it, watching the client, and a watch on the
** client of a request answered without a stream (see stream.h). */
#define _GNU_SOURCE  /* POLLRDHUP */
#include <microhttpd.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"
#include "stream.h"

#define WATCH_MS 100         /* how often a waiting reader looks at its
                                client */
#define KEEPALIVE_MS 15000   /* a keepalive after this much silence */

struct srv_stream {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *out;               /* bytes not yet sent */
    size_t len, cap, sent;
    int oom;
    int ended;               /* the writer is done */
    int gone;                /* the response was dropped */
    int sse, conn_fd;
    int body_begun;          /* the writer put something: no more blanks */
    double last_out;
    srv_gone_fn on_gone;
    void *ud;
    int refs;                /* the writer's and the response's */
};

/* Streams whose response libmicrohttpd has not yet finished with (sent
** to its end, or dropped): what a stop waits for (srv_streams_drain()). */
static atomic_int sending;

static void unref(struct srv_stream *st)
{
    int last;

    pthread_mutex_lock(&st->mu);
    last = --st->refs == 0;
    pthread_mutex_unlock(&st->mu);
    if (!last)
        return;
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
    free(st->out);
    free(st);
}

/* Append n bytes and wake the reader (st->mu held). */
static void put_locked(struct srv_stream *st, const char *p, size_t n)
{
    char *grown;
    size_t cap;

    if (st->oom || st->gone)
        return;
    if (st->len + n > st->cap) {
        cap = st->cap ? st->cap : 4096;
        while (cap < st->len + n)
            cap *= 2;
        grown = realloc(st->out, cap);
        if (!grown) {
            st->oom = 1;
            return;
        }
        st->out = grown;
        st->cap = cap;
    }
    memcpy(st->out + st->len, p, n);
    st->len += n;
    st->last_out = srv_now_ms();
    pthread_cond_broadcast(&st->cv);
}

void srv_stream_put(struct srv_stream *st, const char *p, size_t n)
{
    pthread_mutex_lock(&st->mu);
    st->body_begun = 1;
    put_locked(st, p, n);
    pthread_mutex_unlock(&st->mu);
}

void srv_stream_event(struct srv_stream *st, const char *name,
                      const char *json, size_t n)
{
    pthread_mutex_lock(&st->mu);
    if (name) {
        put_locked(st, "event: ", 7);
        put_locked(st, name, strlen(name));
        put_locked(st, "\n", 1);
    }
    put_locked(st, "data: ", 6);
    put_locked(st, json, n);
    put_locked(st, "\n\n", 2);
    pthread_mutex_unlock(&st->mu);
}

void srv_stream_event_json(struct srv_stream *st, const char *name,
                           json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER)
                   : NULL;

    json_decref(o);
    askdb_json_shorten_reals(text);
    if (text)
        srv_stream_event(st, name, text, strlen(text));
    free(text);
}

void srv_stream_json(struct srv_stream *st, json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER)
                   : NULL;

    json_decref(o);
    askdb_json_shorten_reals(text);
    pthread_mutex_lock(&st->mu);
    st->body_begun = 1;
    if (text)
        put_locked(st, text, strlen(text));
    else
        st->oom = 1;
    pthread_mutex_unlock(&st->mu);
    free(text);
}

void srv_stream_end(struct srv_stream *st)
{
    pthread_mutex_lock(&st->mu);
    st->ended = 1;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    unref(st);
}

int srv_client_gone(int fd)
{
    struct pollfd p = {fd, POLLRDHUP, 0};

    if (fd < 0)
        return 0;
    return poll(&p, 1, 0) > 0 &&
           (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

static void *watch_main(void *arg)
{
    struct srv_watch *w = arg;
    struct timespec ts;

    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (srv_client_gone(w->fd)) {
            w->on_gone(w->ud);
            break;
        }
        srv_deadline_in(&ts, WATCH_MS);
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

void srv_watch_start(struct srv_watch *w, int fd, srv_gone_fn on_gone,
                     void *ud)
{
    memset(w, 0, sizeof *w);
    w->fd = fd;
    w->on_gone = on_gone;
    w->ud = ud;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->running = fd >= 0 && pthread_create(&w->th, NULL, watch_main, w) == 0;
}

void srv_watch_stop(struct srv_watch *w)
{
    if (w->running) {
        pthread_mutex_lock(&w->mu);
        w->done = 1;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->th, NULL);
    }
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

/* Tell the writer once that its reader is gone (st->mu held). */
static void gone_locked(struct srv_stream *st)
{
    if (!st->gone && !st->ended && st->on_gone)
        st->on_gone(st->ud);
    st->gone = 1;
}

/* libmicrohttpd's content reader: hand out what was written, wait for
** more, watch the client. */
static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct srv_stream *st = cls;
    struct timespec ts;
    size_t n;

    (void)pos;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        if (st->sent < st->len) {
            n = st->len - st->sent < max ? st->len - st->sent : max;
            memcpy(buf, st->out + st->sent, n);
            st->sent += n;
            if (st->sent == st->len)
                st->sent = st->len = 0;
            pthread_mutex_unlock(&st->mu);
            return (ssize_t)n;
        }
        if (st->ended || st->oom) {
            pthread_mutex_unlock(&st->mu);
            /* libmicrohttpd's own note of it is left out (http.c). */
            if (st->oom)
                fputs("askdb serve: out of memory writing a response; its "
                      "connection was closed\n", stderr);
            return st->oom ? MHD_CONTENT_READER_END_WITH_ERROR
                           : MHD_CONTENT_READER_END_OF_STREAM;
        }
        srv_deadline_in(&ts, WATCH_MS);
        pthread_cond_timedwait(&st->cv, &st->mu, &ts);
        if (st->len == 0 && !st->ended && srv_client_gone(st->conn_fd)) {
            gone_locked(st);
            pthread_mutex_unlock(&st->mu);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        /* Silence closes the connection (libmicrohttpd's idle timeout,
        ** a proxy's): an SSE comment, or for a JSON document a line
        ** break before it, which JSON reads as the blank it is. */
        if (st->len == 0 && !st->ended &&
            srv_now_ms() - st->last_out > KEEPALIVE_MS) {
            if (st->sse)
                put_locked(st, ": keepalive\n\n", 13);
            else if (!st->body_begun)
                put_locked(st, "\n", 1);
        }
    }
}

/* The response is done with the stream: sent, or dropped. */
static void reader_free(void *cls)
{
    struct srv_stream *st = cls;

    pthread_mutex_lock(&st->mu);
    gone_locked(st);
    pthread_mutex_unlock(&st->mu);
    atomic_fetch_sub(&sending, 1);
    unref(st);
}

int srv_streams_drain(int wait_ms)
{
    double t0 = srv_now_ms();
    struct timespec ts = {0, 10 * 1000000L};

    while (atomic_load(&sending) > 0) {
        if (srv_now_ms() - t0 >= wait_ms)
            return atomic_load(&sending);
        nanosleep(&ts, NULL);
    }
    return 0;
}

struct srv_stream *srv_stream_new(int conn_fd, int sse, srv_gone_fn on_gone,
                                  void *ud, struct MHD_Response **resp)
{
    struct srv_stream *st = calloc(1, sizeof *st);

    *resp = NULL;
    if (!st)
        return NULL;
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->cv, NULL);
    st->conn_fd = conn_fd;
    st->sse = sse;
    st->on_gone = on_gone;
    st->ud = ud;
    st->last_out = srv_now_ms();
    st->refs = 2;
    *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, reader,
                                              st, reader_free);
    if (!*resp) {
        pthread_mutex_destroy(&st->mu);
        pthread_cond_destroy(&st->cv);
        free(st);
        return NULL;
    }
    atomic_fetch_add(&sending, 1);
    return st;
}
