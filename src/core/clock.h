/* clock.h - the monotonic clock in milliseconds, and the deadline of a
** timed wait. */
#ifndef ASKDB_CLOCK_H
#define ASKDB_CLOCK_H

#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC, for how long something took (the
** trace's t_ms, the drivers' deadlines through db_now_ms()). */
double clockx_now_ms(void);

/* *ts set to ms milliseconds from now on CLOCK_REALTIME, its nanoseconds
** below one second: the deadline pthread_cond_timedwait() on a condition
** of the default clock, and pthread_mutex_timedlock(), take. */
void clockx_deadline_in(struct timespec *ts, long ms);

#endif
