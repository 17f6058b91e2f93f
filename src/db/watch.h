/* watch.h - a handle's watchdog: a thread that stops the statement the
** handle runs at its deadline, or when its cancel flag is raised. */
#ifndef ASKDB_DB_WATCH_H
#define ASKDB_DB_WATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

/*
** Each engine stops a statement its own way (sqlite3_interrupt(),
** duckdb_interrupt(), KILL QUERY from a second connection) and tells the
** watchdog how with its stop function; the watching is the same for all.
**
** Discipline: the fields marked (mu) are read and written with mu held.
** stop() is called without it, so that a stop that takes its time (a
** second connection to make, a question to ask on it first) never holds
** the statement's thread: db_watch_disarm() returns at once. What
** reaches the statement (a kill sent, a socket shut) a stop does
** between db_watch_hold() and db_watch_release(), which hold mu and
** succeed only while the statement runs; so once db_watch_disarm() has
** returned, no stop() reaches the statement, nor the next one, whose
** db_watch_arm() waits for the stop still under way (db_watch_settle()
** waits for it too). A stop() that came just before (the statement was
** ending) is the engine's to make harmless, and each is (see the
** drivers). stop() is called at most once between an arm and its
** disarm, and never twice at once.
**
** The thread starts at the first arm that has something to watch (a
** deadline or a cancel flag). When it cannot start, the statement runs
** unwatched (arm returns 0): each engine keeps a limit of its own for
** that case (SQLite's progress handler, the server's statement timeout,
** DuckDB's fetch loop looking at the clock), and db_watch_fire() still
** works from the statement's own thread.
*/

enum {
    DB_WATCH_DEADLINE = 1,   /* the deadline passed */
    DB_WATCH_CANCEL = 2      /* the cancel flag was raised */
    /* an engine's own reasons for db_watch_fire() follow */
};

/* Stop the running statement (called without the watchdog's mu; what
** reaches the statement goes between db_watch_hold() and
** db_watch_release()). */
typedef void (*db_watch_fn)(void *ud, int why);

struct db_watch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    int ready;                /* mu and cv exist */
    int started;              /* th runs */
    int quit;                 /* (mu) leave at once */
    int armed;                /* (mu) a statement runs */
    int fired;                /* (mu) why it was stopped, 0 = it was not */
    int stopping;             /* (mu) a stop() is under way */
    double deadline;          /* (mu) ms on db_now_ms()'s clock, 0 = none */
    const atomic_int *cancel; /* (mu) looked at every tick_ms; NULL none */
    int tick_ms;
    size_t stack;             /* the thread's stack size */
    db_watch_fn stop;
    void *ud;
};

/* Make w ready (no thread yet). On failure (no mutex or condition) w
** watches nothing and every call below does nothing, arm returning 0. */
void db_watch_init(struct db_watch *w, db_watch_fn stop, void *ud,
                   int tick_ms, size_t stack);

/* A statement starts: stop it at deadline (ms on db_now_ms()'s clock, 0 =
** none) or when *cancel becomes non-zero (cancel NULL: not watched).
** Waits first for a stop of the last statement still under way. Returns
** 1 when a thread watches, 0 when none does. */
int db_watch_arm(struct db_watch *w, double deadline,
                 const atomic_int *cancel);

/* The statement is over: returns why it was stopped (0 = it was not).
** Does not wait for a stop under way: that one no longer reaches the
** statement (db_watch_hold() fails). */
int db_watch_disarm(struct db_watch *w);

/* Wait until no stop() is under way, so that what stops share with the
** statement's thread is the statement's thread's again. */
void db_watch_settle(struct db_watch *w);

/* In stop(): hold the watchdog (mu) and return 1 while the statement it
** stops still runs; else 0, holding nothing. After 1, reach the
** statement, then db_watch_release(). */
int db_watch_hold(struct db_watch *w);
void db_watch_release(struct db_watch *w);

/* Stop the running statement now, for the engine's own reason why (e.g.
** its result grew past a cap), unless it is over or was stopped already.
** Returns 1 when stop() was called. */
int db_watch_fire(struct db_watch *w, int why);

/* Stop the thread and free w; before the connection it stops is closed. */
void db_watch_end(struct db_watch *w);

#endif
