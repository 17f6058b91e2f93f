/* warm.c - the warm-up of askdb serve and askdb mcp (warm.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warm.h"

static void *warm_main(void *ud)
{
    struct warm *w = ud;
    askdb_model *m = w->model_fn ? w->model_fn(w->ud) : NULL;
    askdb_agent *ag;
    askdb_status st;
    int i, stop;

    if (!m || strcmp(askdb_model_provider(m), "local") != 0)
        return NULL;   /* nothing kept between questions to make ready */
    for (i = 0; i < w->n; i++) {
        ag = NULL;
        if (askdb_agent_new_with_model(&w->cfg, m, w->paths[i], &ag)) {
            askdb_agent_free(ag);
            continue;
        }
        pthread_mutex_lock(&w->mu);
        stop = w->stop;
        if (!stop)
            w->ag = ag;
        pthread_mutex_unlock(&w->mu);
        st = stop ? ASKDB_OK : askdb_agent_warm(ag);
        pthread_mutex_lock(&w->mu);
        w->ag = NULL;
        stop = w->stop;
        pthread_mutex_unlock(&w->mu);
        if (st && !stop)
            fprintf(stderr, "%s: %s: schema prompt not made ready: %s\n",
                    w->who, w->names[i], askdb_agent_errmsg(ag));
        askdb_agent_free(ag);
        if (stop)
            break;
    }
    return NULL;
}

static void free_copies(struct warm *w)
{
    int i;

    for (i = 0; i < w->n; i++) {
        free(w->paths ? w->paths[i] : NULL);
        free(w->names ? w->names[i] : NULL);
    }
    free(w->paths);
    free(w->names);
    w->paths = w->names = NULL;
}

int warm_start(struct warm *w, const askdb_config *cfg, int n,
               const char *const *paths, const char *const *names,
               askdb_model *(*model_fn)(void *ud), void *ud,
               const char *who)
{
    int i, ok;

    memset(w, 0, sizeof *w);
    w->cfg = *cfg;
    w->cfg.event_fn = NULL;
    w->cfg.log_fn = NULL;
    w->cfg.token_fn = NULL;
    w->cfg.trace_path = NULL;
    w->n = n;
    w->model_fn = model_fn;
    w->ud = ud;
    w->who = who;
    w->paths = calloc((size_t)n + 1, sizeof *w->paths);
    w->names = calloc((size_t)n + 1, sizeof *w->names);
    ok = w->paths && w->names;
    for (i = 0; ok && i < n; i++) {
        w->paths[i] = strdup(paths[i]);
        w->names[i] = strdup(names[i]);
        ok = w->paths[i] && w->names[i];
    }
    if (!ok) {
        free_copies(w);
        return -1;
    }
    pthread_mutex_init(&w->mu, NULL);
    if (pthread_create(&w->thread, NULL, warm_main, w) != 0) {
        pthread_mutex_destroy(&w->mu);
        free_copies(w);
        return -1;
    }
    w->running = 1;
    return 0;
}

void warm_stop(struct warm *w)
{
    if (!w->running)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    if (w->ag)
        askdb_agent_cancel(w->ag);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->mu);
    free_copies(w);
    w->running = 0;
}
