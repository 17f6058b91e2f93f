/* testutil.h - what every unit test shares: cmocka, temporary directories
** and files, SQLite fixture files, the test databases, the environment. */
#ifndef ASKDB_TEST_TESTUTIL_H
#define ASKDB_TEST_TESTUTIL_H

/* cmocka wants these before it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "askdb.h"
#include "db/db.h"

/*
** Helpers return 0 or -1 where a test's setup calls them (a group's setup
** reports failure by its return value) and fail the test themselves where
** only tests call them. Every file a test makes lives under /tmp and goes
** when its test ends.
*/

/* TEST_FILTER (a cmocka pattern, e.g. TEST_FILTER='*journal*') runs only
** the tests whose names match: a quicker run, under valgrind too. Every
** test program calls it before running its tests. */
static inline void test_filter_from_env(void)
{
    const char *f = getenv("TEST_FILTER");

    if (f && *f)
        cmocka_set_test_filter(f);
}

/* The sanitizer build's askdb-exec (build/asan/askdb-exec, beside the
** folder of the test programs) runs the statements of the handles opened
** from now on with in_process 0, unless ASKDB_EXEC_HELPER names another:
** found neither beside a test program nor installed, none runs, and a
** test of "in askdb-exec and in this process" runs in this process twice.
** 1 when it set ASKDB_EXEC_HELPER, for test_no_exec_helper() to unset.
** The Makefile builds it before the tests that use it. */
static inline int test_use_exec_helper(void)
{
    char exe[4096], *slash;
    ssize_t n;

    if (getenv("ASKDB_EXEC_HELPER"))
        return 0;
    n = readlink("/proc/self/exe", exe, sizeof exe - 32);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';             /* build/asan/tests */
    slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    strcpy(slash, "/askdb-exec");   /* build/asan/askdb-exec */
    return setenv("ASKDB_EXEC_HELPER", exe, 1) == 0;
}

/* Undo test_use_exec_helper() when it returned set (1): the handles
** opened afterwards find no helper, as before. */
static inline void test_no_exec_helper(int set)
{
    if (set)
        unsetenv("ASKDB_EXEC_HELPER");
}

/* ---- temporary directories and files ------------------------------------ */

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

/* tmpdir_make(), and ASKDB_CACHE_DIR set to the new directory so that
** what askdb caches stays in it. 0, or -1. */
static inline int tmpdir_as_cache(char *dir, size_t n, const char *name)
{
    if (tmpdir_make(dir, n, name))
        return -1;
    return setenv("ASKDB_CACHE_DIR", dir, 1) == 0 ? 0 : -1;
}

/* A test file's own directory: tmpdir_setup() (as its group's setup)
** makes it, tmpdir_teardown() removes it with whatever the tests left in
** it. */
static char tmpdir[256] __attribute__((unused));

/* Group setup: make tmpdir. */
static inline int tmpdir_setup(void **state)
{
    (void)state;
    return tmpdir_make(tmpdir, sizeof tmpdir, "unit");
}

/* Group setup: make tmpdir and point ASKDB_CACHE_DIR at it. */
static inline int tmpdir_cache_setup(void **state)
{
    (void)state;
    return tmpdir_as_cache(tmpdir, sizeof tmpdir, "unit");
}

/* Group teardown: remove tmpdir. */
static inline int tmpdir_teardown(void **state)
{
    (void)state;
    return tmpdir_remove(tmpdir);
}

/* Make a new empty file /tmp/askdb-test-<name>-XXXXXX and put its path in
** path (n bytes); the test unlink()s it. 0, or -1. */
static inline int tmpfile_make(char *path, size_t n, const char *name)
{
    int len = snprintf(path, n, "/tmp/askdb-test-%s-XXXXXX", name);
    int fd;

    if (len < 0 || (size_t)len >= n)
        return -1;
    fd = mkstemp(path);
    if (fd < 0)
        return -1;
    return close(fd) == 0 ? 0 : -1;
}

/* Write n bytes of data to the file at path (made or emptied). 0, or -1. */
static inline int file_write(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    int bad;

    if (!f)
        return -1;
    bad = n && fwrite(data, 1, n, f) != n;
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

/* The whole file at path, malloc()ed and NUL-terminated (the caller frees
** it); its size in *len when len is not NULL. NULL when it cannot be
** read. */
static inline char *file_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL, *q;
    size_t n = 0, cap = 0, got;

    if (!f)
        return NULL;
    for (;;) {
        if (cap - n < 4096) {
            q = realloc(p, cap + 65536);
            if (!q) {
                free(p);
                fclose(f);
                return NULL;
            }
            p = q;
            cap += 65536;
        }
        got = fread(p + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    p[n] = '\0';
    if (len)
        *len = n;
    return p;
}

/* Copy the file at from to to. 0, or -1. */
static inline int file_copy(const char *from, const char *to)
{
    size_t n;
    char *p = file_read(from, &n);
    int rc = p ? file_write(to, p, n) : -1;

    free(p);
    return rc;
}

/* ---- SQLite files and the test databases -------------------------------- */

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

/* Leave a hot rollback journal beside the SQLite file at path: another
** process (python3's sqlite3, spawned: a process forked from one whose
** other threads may hold an allocator lock can hang in its first
** malloc()) begins a write that spills pages into the file and dies
** before it commits. Fails the test when it cannot. */
static inline void sqlfile_die_in_a_write(const char *path)
{
    static const char script[] =
        "import os, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA cache_size=1')\n"
        "c.execute('BEGIN')\n"
        "c.execute('CREATE TABLE spill(x)')\n"
        "c.execute('INSERT INTO spill SELECT randomblob(1000) FROM (WITH "
        "RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE "
        "i < 2000) SELECT i FROM n)')\n"
        "os._exit(0)  # no rollback, no unlock\n";
    char *const argv[] = {"python3", "-c", (char *)script, (char *)path,
                          NULL};
    extern char **environ;
    pid_t pid;
    int status = 0;

    assert_int_equal(posix_spawnp(&pid, "python3", NULL, NULL, argv,
                                  environ), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A writer of its own (a thread with its own connection) that holds an
** exclusive lock on an SQLite file for a while, as a commit does. A
** thread, not a child process: a process forked while another of its
** threads holds an allocator lock may hang in its first malloc(). */
struct sqlfile_locker {
    pthread_t th;
    const char *path;
    int ms;
    int fd[2];               /* one byte once the lock is held */
    int ok;
};

static inline void *sqlfile_locker_main(void *ud)
{
    struct sqlfile_locker *l = ud;
    sqlite3 *h = NULL;
    struct timespec ts;
    char c = 'x';

    if (sqlite3_open(l->path, &h) == SQLITE_OK &&
        sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK) {
        l->ok = 1;
        if (write(l->fd[1], &c, 1) != 1)
            l->ok = 0;
        ts.tv_sec = l->ms / 1000;
        ts.tv_nsec = (long)(l->ms % 1000) * 1000000L;
        nanosleep(&ts, NULL);
        if (sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
            l->ok = 0;
    } else {
        c = 'e';
        if (write(l->fd[1], &c, 1) != 1)
            l->ok = 0;
    }
    sqlite3_close(h);
    return NULL;
}

/* Hold an exclusive lock on the SQLite file at path for ms milliseconds;
** returns once it is held. sqlfile_lock_end() waits for its end. */
static inline void sqlfile_lock(struct sqlfile_locker *l, const char *path,
                                int ms)
{
    char c = 0;

    memset(l, 0, sizeof *l);
    l->path = path;
    l->ms = ms;
    assert_int_equal(pipe(l->fd), 0);
    assert_int_equal(pthread_create(&l->th, NULL, sqlfile_locker_main, l),
                     0);
    assert_int_equal(read(l->fd[0], &c, 1), 1);
    assert_int_equal(c, 'x');
}

/* Wait for sqlfile_lock()'s writer to commit; fails the test unless it
** held the lock and committed. */
static inline void sqlfile_lock_end(struct sqlfile_locker *l)
{
    assert_int_equal(pthread_join(l->th, NULL), 0);
    close(l->fd[0]);
    close(l->fd[1]);
    assert_true(l->ok);
}

/* The sample database (examples/shop.db, or $SHOP_DB). */
static inline const char *testdb_shop(void)
{
    const char *p = getenv("SHOP_DB");

    return p && *p ? p : "examples/shop.db";
}

/* Spider's training set ($SPIDER_DIR, which `make unit` sets when
** ../shared/bench/spider-train exists); skips the calling test without
** it. */
static inline const char *testdb_spider_dir(void)
{
    const char *dir = getenv("SPIDER_DIR");

    if (!dir || !*dir) {
        print_message("skipped: set SPIDER_DIR to Spider's training set "
                      "(../shared/bench/spider-train)\n");
        skip();
    }
    return dir;
}

/* The path of Spider's database id in out (n bytes); skips the calling
** test without Spider or without that database. */
static inline void testdb_spider(const char *id, char *out, size_t n)
{
    const char *dir = testdb_spider_dir();
    struct stat st;

    snprintf(out, n, "%s/database/%s/%s.sqlite", dir, id, id);
    if (stat(out, &st) != 0) {
        print_message("skipped: %s is missing\n", out);
        skip();
    }
}

/* Open the database at path with cfg (NULL: the defaults) and, when s is
** not NULL, read its schema into *s; fails the test when either fails. The
** caller closes the handle. */
static inline askdb_db *testdb_open(const char *path, const askdb_config *cfg,
                                    const struct db_schema **s)
{
    askdb_db *db = NULL;

    if (askdb_db_open(path, cfg, &db) != ASKDB_OK)
        fail_msg("cannot open %s: %s", path, askdb_db_errmsg(db));
    if (s && db_schema(db, s) != ASKDB_OK)
        fail_msg("cannot read the schema of %s: %s", path,
                 askdb_db_errmsg(db));
    return db;
}

/* A table "user" (id, name, "array", "only"): names that PostgreSQL,
** DuckDB and MariaDB reserve and SQLite does not, for the tests of how
** an engine's reserved words are shown, taken and named. Its schema's
** reserved words are the test's to add (schema_add_reserved()). */
static inline struct db_table *reserved_user_table(void)
{
    static struct db_column cols[] = {
        {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
        {"name", "text", 0, NULL, 0, NULL, 0, NULL},
        {"array", "integer", 0, NULL, 0, NULL, 0, NULL},
        {"only", "text", 0, NULL, 0, NULL, 0, NULL},
    };
    static struct db_table table = {
        "user", 0, cols, 4, NULL, 0, NULL, 0, 3, 0, 0, NULL, NULL, NULL, 0};

    return &table;
}

/* ---- the environment ---------------------------------------------------- */

/* The small GGUF model for the local-model tests ($ASKDB_SMALL_MODEL, set
** by `make unit` when scripts/models.sh fetched it), or NULL. */
static inline const char *testenv_small_model(void)
{
    const char *p = getenv("ASKDB_SMALL_MODEL");

    return p && *p ? p : NULL;
}

#endif
