/* warm.h - the warm-up of askdb serve and askdb mcp: a thread gets each
** database's schema prompt ready before its first question. */
#ifndef ASKDB_CLI_WARM_H
#define ASKDB_CLI_WARM_H

#include <pthread.h>

#include "askdb.h"

/*
** A thread that gets the model from model_fn (which may load it: that
** is why it runs in the thread) and, when it is the local model, warms
** each database one after the other with an agent of its own on it
** (askdb_agent_warm: the schema read and the stable prefix of its prompt
** evaluated into the KV cache, or loaded from its prompt-cache file), so
** that no first question pays for it. A question that arrives meanwhile
** takes its turn in the decoder like any other call. A database that
** cannot be warmed is said on stderr ("<who>: <name>: ...") and skipped.
*/
struct warm {
    pthread_t thread;
    pthread_mutex_t mu;
    askdb_agent *ag;         /* the agent warming now, or NULL */
    int stop, running;
    askdb_config cfg;        /* steps, logs, tokens and trace off */
    int n;
    char **paths, **names;
    askdb_model *(*model_fn)(void *ud);   /* NULL: none to be had */
    void *ud;
    const char *who;         /* "askdb serve", "askdb mcp" */
};

/* Start the thread over paths[0..n) (copied), named names[i] in
** messages. 0, or -1 when it cannot start (nothing to stop then). */
int warm_start(struct warm *w, const askdb_config *cfg, int n,
               const char *const *paths, const char *const *names,
               askdb_model *(*model_fn)(void *ud), void *ud,
               const char *who);

/* Cancel the database warming now, start no other, and wait for the
** thread (a model still loading in model_fn is waited for). A struct
** warm that was zeroed or never started is left alone. */
void warm_stop(struct warm *w);

#endif
