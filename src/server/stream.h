/* stream.h - a response body written by one thread while libmicrohttpd's
** connection thread sends it, and a watch on a client (stream.c). */
#ifndef ASKDB_SERVER_STREAM_H
#define ASKDB_SERVER_STREAM_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>

/*
** The writer (a question's job, an MCP call) appends bytes or SSE events;
** the connection's thread reads them out as the response body, waiting on
** a condition variable in 100 ms steps, and each step asks the socket
** whether the client has gone (poll POLLRDHUP). Then, or when
** libmicrohttpd drops the response for any other reason before the writer
** ended, on_gone(ud) is called once, with the stream's lock held (it may
** take the writer's own locks, but must not call back into the stream).
** After srv_stream_end() it is never called, so ud may be freed then.
** After 15 s of silence an SSE stream gets a ": keepalive" comment, and
** a JSON one that has no byte of its document yet a line break (blank to
** JSON), so that no idle timeout closes a connection that waits.
*/
struct srv_stream;
struct MHD_Response;

typedef void (*srv_gone_fn)(void *ud);

/* A stream and the response that sends it (*resp, the caller queues and
** destroys it). NULL when out of memory. */
struct srv_stream *srv_stream_new(int conn_fd, int sse, srv_gone_fn on_gone,
                                  void *ud, struct MHD_Response **resp);

/* Append n bytes (no-op once the client is gone). */
void srv_stream_put(struct srv_stream *st, const char *p, size_t n);

/* One SSE event: "event: NAME\n" (when name is not NULL), "data: JSON\n\n";
** the JSON is one line. */
void srv_stream_event(struct srv_stream *st, const char *name,
                      const char *json, size_t n);

/* The same with a JSON object (consumed). */
void srv_stream_event_json(struct srv_stream *st, const char *name,
                           json_t *o);

/* A JSON object (consumed) as the whole body, compact. */
void srv_stream_json(struct srv_stream *st, json_t *o);

/* The writer is done: the body ends when it is sent. Drops the writer's
** hold on st. */
void srv_stream_end(struct srv_stream *st);

/* Whether the client of the connection fd hung up (its socket's peer
** closed or failed); 0 for fd < 0. */
int srv_client_gone(int fd);

/*
** A watch on the client of a request answered on its connection's own
** thread, with no stream to notice a hang-up (a statement of /api/sql, a
** stateless MCP resource read): a thread of its own asks
** srv_client_gone() every 100 ms and, when the client hung up, calls
** on_gone(ud) once, on that thread. srv_watch_stop() ends it, after
** which on_gone is never called. Without a thread (fd < 0, none to be
** had) the request is simply not watched.
*/
struct srv_watch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    int fd;
    int running;             /* th was started */
    int done;                /* srv_watch_stop() (mu) */
    srv_gone_fn on_gone;
    void *ud;
};

void srv_watch_start(struct srv_watch *w, int fd, srv_gone_fn on_gone,
                     void *ud);
void srv_watch_stop(struct srv_watch *w);

/* Wait until libmicrohttpd has sent every stream to its end (or dropped
** it), at most wait_ms: a stop calls it after the last writer ended and
** before it closes the connections, which would cut off what was
** written but not yet sent (the end of an answer, its done event).
** Returns how many were still being sent (0: all). */
int srv_streams_drain(int wait_ms);

#endif
