/* trace.c - JSON-lines trace writer (see trace.h). */
#include "core/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "askdb.h"
#include "core/clock.h"
#include "core/outfile.h"

/*
** The file is opened O_APPEND and every line goes out in one write():
** agents of a parallel eval each have their own handle on the same file,
** and O_APPEND makes each write land whole at the end, so their lines
** never interleave (stdio would split a long line into several writes).
*/
struct trace {
    int fd;
    int err;  /* the first write error (errno), sticky */
    double t0;
};

struct trace *trace_open(const char *path, const char *db, const char **err)
{
    struct trace *t;

    *err = NULL;
    if (!path)
        return NULL;
    *err = outfile_refusal_for(path, db);
    if (*err)
        return NULL;
    t = calloc(1, sizeof *t);
    if (!t) {
        *err = "out of memory";
        return NULL;
    }
    t->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (t->fd < 0) {
        *err = strerror(errno);
        free(t);
        return NULL;
    }
    t->t0 = clockx_now_ms();
    return t;
}

void trace_close(struct trace *t)
{
    if (!t)
        return;
    close(t->fd);
    free(t);
}

void trace_write(struct trace *t, const char *step, json_t *ev)
{
    char *line;

    if (!t || !ev) {
        json_decref(ev);
        return;
    }
    json_object_set_new(ev, "step", json_string(step));
    json_object_set_new(ev, "t_ms", json_real(clockx_now_ms() - t->t0));
    line = askdb_json_shorten_reals(
        json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER));
    json_decref(ev);
    if (line)
        (void)trace_put(t, line, strlen(line));
    free(line);
}

const char *trace_failure(const struct trace *t)
{
    return t && t->err ? strerror(t->err) : NULL;
}

int trace_put(struct trace *t, const char *line, size_t n)
{
    struct iovec iov[2];
    size_t total = n + 1;
    ssize_t w;

    if (!t)
        return 0;
    iov[0].iov_base = (void *)line;
    iov[0].iov_len = n;
    iov[1].iov_base = (void *)"\n";
    iov[1].iov_len = 1;
    for (;;) {
        w = writev(t->fd, iov, 2);
        if (w < 0 && errno == EINTR)
            continue;
        break;
    }
    if (w >= 0 && (size_t)w < total)
        errno = ENOSPC; /* a short write (a full disk): the line is lost */
    if (w < 0 || (size_t)w < total) {
        if (!t->err)
            t->err = errno;
        return -1;
    }
    return 0;
}
