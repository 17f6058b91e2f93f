/* tmpfiles.h - what several unit tests share: a temporary directory and
** SQLite files made from SQL (real files, as the tests want them). */
#ifndef ASKDB_TEST_TMPFILES_H
#define ASKDB_TEST_TMPFILES_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

/* Make a new directory /tmp/askdb-test-<name>-XXXXXX and put its path in
** dir (n bytes). 0, or -1. */
static inline int tmpdir_make(char *dir, size_t n, const char *name)
{
    int len = snprintf(dir, n, "/tmp/askdb-test-%s-XXXXXX", name);

    if (len < 0 || (size_t)len >= n)
        return -1;
    return mkdtemp(dir) ? 0 : -1;
}

/* Remove dir and everything in it. 0, or -1. */
static inline int tmpdir_remove(const char *dir)
{
    char cmd[400];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Write text to the file at path (made or emptied). 0, or -1. */
static inline int tmpfile_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    int bad;

    if (!f)
        return -1;
    bad = fputs(text, f) < 0;
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

/* Run the statements sql on the SQLite file at path, made when it is
** missing. 0, or -1 with SQLite's message on stderr. */
static inline int sqlfile_exec(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    char *err = NULL;
    int rc;

    if (sqlite3_open(path, &h) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", path, h ? sqlite3_errmsg(h) : "?");
        sqlite3_close(h);
        return -1;
    }
    rc = sqlite3_exec(h, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fprintf(stderr, "%s: %s\n", path, err ? err : sqlite3_errstr(rc));
    sqlite3_free(err);
    sqlite3_close(h);
    return rc == SQLITE_OK ? 0 : -1;
}

#endif
