/* trace.c - JSON-lines trace writer (see trace.h). */
#include "core/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct trace {
    FILE *f;
    double t0;
};

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct trace *trace_open(const char *path, const char **err)
{
    struct trace *t;

    *err = NULL;
    if (!path)
        return NULL;
    t = calloc(1, sizeof *t);
    if (!t) {
        *err = "out of memory";
        return NULL;
    }
    t->f = fopen(path, "a");
    if (!t->f) {
        *err = strerror(errno);
        free(t);
        return NULL;
    }
    t->t0 = now_ms();
    return t;
}

void trace_close(struct trace *t)
{
    if (!t)
        return;
    fclose(t->f);
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
    json_object_set_new(ev, "t_ms", json_real(now_ms() - t->t0));
    line = json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(ev);
    if (!line)
        return;
    fputs(line, t->f);
    fputc('\n', t->f);
    fflush(t->f);
    free(line);
}
