/* driver.c - the helpers every database driver shares: results, errors, time. */
#include "db/driver.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double db_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

askdb_error_class db_classify(const char *msg)
{
    if (strstr(msg, "no such column") || strstr(msg, "ambiguous column"))
        return ASKDB_EC_UNKNOWN_COLUMN;
    if (strstr(msg, "no such table"))
        return ASKDB_EC_UNKNOWN_TABLE;
    if (strstr(msg, "syntax error") || strstr(msg, "incomplete input") ||
        strstr(msg, "unrecognized token"))
        return ASKDB_EC_SYNTAX;
    if (strstr(msg, "not authorized") || strstr(msg, "may not be modified"))
        return ASKDB_EC_REFUSED;
    if (strstr(msg, "interrupted"))
        return ASKDB_EC_TIMEOUT;
    return ASKDB_EC_RUNTIME;
}

void askdb_result_free(askdb_result *r)
{
    long i, n;
    int c;

    if (!r)
        return;
    n = r->nrows * r->ncols;
    for (i = 0; i < n; i++)
        if (r->cells[i].type == ASKDB_TEXT || r->cells[i].type == ASKDB_BLOB)
            free((void *)r->cells[i].s);
    free(r->cells);
    for (c = 0; c < r->ncols; c++) {
        free(r->cols[c]);
        if (r->decltypes)
            free(r->decltypes[c]);
    }
    free(r->cols);
    free(r->decltypes);
    free(r);
}

const askdb_value *askdb_result_cell(const askdb_result *r, long row, int col)
{
    if (!r || row < 0 || row >= r->nrows || col < 0 || col >= r->ncols)
        return NULL;
    return &r->cells[row * r->ncols + col];
}
