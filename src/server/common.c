/* common.c - the small helpers every file of the server uses: time, ids,
** finding a database, text made fit for JSON. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "server.h"

double srv_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void srv_deadline_in(struct timespec *ts, long ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_nsec += ms * 1000000L;
    ts->tv_sec += ts->tv_nsec / 1000000000L;
    ts->tv_nsec %= 1000000000L;
}

void srv_random_id(char *out)
{
    unsigned char r[8];
    FILE *f = fopen("/dev/urandom", "rb");
    size_t n = f ? fread(r, 1, sizeof r, f) : 0;
    double t;
    int i;

    if (f)
        fclose(f);
    if (n != sizeof r) {
        t = srv_now_ms();
        memcpy(r, &t, sizeof r);
    }
    for (i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
}

struct srv_db *srv_find_db(struct server *s, const char *name)
{
    int i;

    for (i = 0; i < s->ndbs; i++)
        if (strcmp(s->dbs[i].name, name) == 0)
            return &s->dbs[i];
    return NULL;
}

void srv_utf8_clean(char *s)
{
    size_t n = strlen(s), k;

    while (n > 0) {
        k = askdb_utf8_len(s, n);
        if (k == 0) {
            *s = '?';
            k = 1;
        }
        s += k;
        n -= k;
    }
}
