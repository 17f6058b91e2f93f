/* fakellm.h - the scripted model server (tests/fake_llm) for the unit
** tests that talk HTTP: start it with a script, read what it was sent,
** stop it. */
#ifndef ASKDB_TEST_FAKELLM_H
#define ASKDB_TEST_FAKELLM_H

#include <fcntl.h>
#include <jansson.h>
#include <signal.h>

#include "testutil.h"

/* A running fake_llm. */
struct fake {
    pid_t pid;
    char dir[64];
    char script[128], log[128], portfile[128], errfile[128];
    int port;
    char base[64];       /* http://127.0.0.1:PORT/v1 */
};

static inline void fake_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Start fake_llm with `script`; fails the test when it cannot. */
static inline void fake_start(struct fake *f, const char *script)
{
    const char *bin = getenv("FAKE_LLM");
    char *port = NULL, *end = NULL;
    int i, fd, st;

    if (!bin || !*bin)
        fail_msg("FAKE_LLM is not set (path to the fake_llm binary)");
    assert_int_equal(tmpdir_make(f->dir, sizeof f->dir, "llm"), 0);
    snprintf(f->script, sizeof f->script, "%s/script.json", f->dir);
    snprintf(f->log, sizeof f->log, "%s/log.jsonl", f->dir);
    snprintf(f->portfile, sizeof f->portfile, "%s/port", f->dir);
    snprintf(f->errfile, sizeof f->errfile, "%s/stderr", f->dir);
    assert_int_equal(file_write(f->script, script, strlen(script)), 0);
    f->pid = fork();
    assert_true(f->pid >= 0);
    if (f->pid == 0) {
        fd = open(f->errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0)
            dup2(fd, 2);
        execl(bin, "fake_llm", "--script", f->script, "--log", f->log,
              "--port-file", f->portfile, (char *)NULL);
        _exit(127);
    }
    for (i = 0; i < 400; i++) {
        port = file_read(f->portfile, NULL);
        if (port && *port)
            break;
        free(port);
        port = NULL;
        if (waitpid(f->pid, &st, WNOHANG) == f->pid) {
            f->pid = 0;
            fail_msg("fake_llm exited at start (status %d)", st);
        }
        fake_sleep_ms(25);
    }
    if (!port)
        fail_msg("fake_llm wrote no port file in 10 s");
    f->port = (int)strtol(port, &end, 10);
    free(port);
    assert_true(f->port > 0);
    snprintf(f->base, sizeof f->base, "http://127.0.0.1:%d/v1", f->port);
}

static inline void fake_stop(struct fake *f)
{
    int st;

    if (f->pid > 0) {
        kill(f->pid, SIGTERM);
        waitpid(f->pid, &st, 0);
        f->pid = 0;
    }
    if (f->dir[0]) {
        unlink(f->script);
        unlink(f->log);
        unlink(f->portfile);
        unlink(f->errfile);
        rmdir(f->dir);
        f->dir[0] = '\0';
    }
}

/* The request log as a JSON array (one entry per request). */
static inline json_t *fake_log(const struct fake *f)
{
    json_t *all = json_array(), *e;
    char *text = file_read(f->log, NULL), *line, *nl;

    for (line = text; line && *line; line = nl ? nl + 1 : line + strlen(line)) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (!*line)
            continue;
        e = json_loads(line, 0, NULL);
        assert_non_null(e);
        json_array_append_new(all, e);
    }
    free(text);
    return all;
}

#endif
