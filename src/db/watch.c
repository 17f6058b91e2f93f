/* watch.c - a handle's watchdog (watch.h). */
#include "db/watch.h"

#include <signal.h>
#include <time.h>

#include "db/driver.h"

/* ms on db_now_ms()'s clock (CLOCK_MONOTONIC) as a pthread_cond_timedwait()
** deadline on a condition made with that clock. */
static struct timespec ms_timespec(double ms)
{
    struct timespec ts;

    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
    if (ts.tv_nsec < 0)
        ts.tv_nsec = 0;
    if (ts.tv_nsec > 999999999L)
        ts.tv_nsec = 999999999L;
    return ts;
}

/* Call stop() for why, once per statement: mu held on entry and on
** return, let go of meanwhile (stop() takes it for what reaches the
** statement, db_watch_hold()). */
static void fire(struct db_watch *w, int why)
{
    w->fired = why;
    w->stopping = 1;
    pthread_mutex_unlock(&w->mu);
    w->stop(w->ud, why);
    pthread_mutex_lock(&w->mu);
    w->stopping = 0;
    pthread_cond_broadcast(&w->cv);
}

static void *watch_main(void *arg)
{
    struct db_watch *w = arg;
    struct timespec ts;
    double now, wake;

    pthread_mutex_lock(&w->mu);
    while (!w->quit) {
        if (!w->armed || w->fired ||
            (w->deadline <= 0 && !w->cancel)) {
            pthread_cond_wait(&w->cv, &w->mu);
            continue;
        }
        if (w->cancel && atomic_load(w->cancel)) {
            fire(w, DB_WATCH_CANCEL);
            continue;
        }
        now = db_now_ms();
        if (w->deadline > 0 && now >= w->deadline) {
            fire(w, DB_WATCH_DEADLINE);
            continue;
        }
        /* Without a cancel flag to look at, sleep to the deadline. A
        ** disarm needs no wake-up: the thread wakes at the old time,
        ** finds nothing armed, and sleeps again. */
        wake = w->cancel ? now + w->tick_ms : w->deadline;
        if (w->deadline > 0 && w->deadline < wake)
            wake = w->deadline;
        ts = ms_timespec(wake);
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

void db_watch_init(struct db_watch *w, db_watch_fn stop, void *ud,
                   int tick_ms, size_t stack)
{
    pthread_condattr_t ca;

    w->ready = w->started = w->quit = w->armed = w->fired = 0;
    w->stopping = 0;
    w->deadline = 0;
    w->cancel = NULL;
    w->tick_ms = tick_ms > 0 ? tick_ms : 50;
    w->stack = stack;
    w->stop = stop;
    w->ud = ud;
    if (pthread_condattr_init(&ca) != 0)
        return;
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
        pthread_cond_init(&w->cv, &ca) == 0) {
        if (pthread_mutex_init(&w->mu, NULL) == 0)
            w->ready = 1;
        else
            pthread_cond_destroy(&w->cv);
    }
    pthread_condattr_destroy(&ca);
}

int db_watch_arm(struct db_watch *w, double deadline,
                 const atomic_int *cancel)
{
    pthread_attr_t at;
    sigset_t all, old;

    if (!w->ready)
        return 0;
    if (!w->started && (deadline > 0 || cancel) &&
        pthread_attr_init(&at) == 0) {
        /* Every signal blocked, as the thread inherits the mask: a
        ** Ctrl-C goes to a thread of the program's own, where a blocking
        ** call it interrupts can notice it. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_attr_setstacksize(&at, w->stack);
        w->started = pthread_create(&w->th, &at, watch_main, w) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&at);
    }
    pthread_mutex_lock(&w->mu);
    while (w->stopping)
        pthread_cond_wait(&w->cv, &w->mu);
    w->armed = 1;
    w->fired = 0;
    w->deadline = deadline;
    w->cancel = cancel;
    pthread_mutex_unlock(&w->mu);
    if (w->started && (deadline > 0 || cancel))
        pthread_cond_signal(&w->cv);
    return w->started;
}

int db_watch_disarm(struct db_watch *w)
{
    int fired;

    if (!w->ready)
        return 0;
    pthread_mutex_lock(&w->mu);
    w->armed = 0;
    fired = w->fired;
    w->deadline = 0;
    w->cancel = NULL;
    pthread_mutex_unlock(&w->mu);
    return fired;
}

void db_watch_settle(struct db_watch *w)
{
    if (!w->ready)
        return;
    pthread_mutex_lock(&w->mu);
    while (w->stopping)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

int db_watch_hold(struct db_watch *w)
{
    pthread_mutex_lock(&w->mu);
    if (w->armed)
        return 1;
    pthread_mutex_unlock(&w->mu);
    return 0;
}

void db_watch_release(struct db_watch *w)
{
    pthread_mutex_unlock(&w->mu);
}

int db_watch_fire(struct db_watch *w, int why)
{
    int done = 0;

    if (!w->ready)
        return 0;
    pthread_mutex_lock(&w->mu);
    if (w->armed && !w->fired) {
        fire(w, why);
        done = 1;
    }
    pthread_mutex_unlock(&w->mu);
    return done;
}

void db_watch_end(struct db_watch *w)
{
    if (!w->ready)
        return;
    if (w->started) {
        pthread_mutex_lock(&w->mu);
        w->quit = 1;
        pthread_mutex_unlock(&w->mu);
        pthread_cond_signal(&w->cv);
        pthread_join(w->th, NULL);
        w->started = 0;
    }
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    w->ready = 0;
}
