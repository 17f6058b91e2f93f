/* eval.c - askdb eval: run a suite through agents, score, record, resume. */
#define _XOPEN_SOURCE 700 /* realpath() */
#include "eval/eval.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "agent/state.h"
#include "core/outfile.h"
#include "db/db.h"
#include "db/rescmp.h"
#include "eval/compare.h"
#include "eval/record.h"
#include "eval/report.h"
#include "eval/summary.h"
#include "llm/llm.h"

/* The report is built in memory; beyond this something is wrong. */
#define REPORT_MAX_BYTES ((size_t)512 << 20)

static void set_msg(char *dst, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_msg(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

/* path with its folder resolved (realpath) and its own name kept, so that
** a file not made yet has one spelling; malloc()ed, NULL when the folder
** does not resolve. */
static char *resolved_name(const char *path)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char *dir, *rdir, *out = NULL;
    size_t n;

    if (!slash)
        dir = strdup(".");
    else if (slash == path)
        dir = strdup("/");
    else
        dir = strndup(path, (size_t)(slash - path));
    rdir = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (rdir) {
        n = strlen(rdir) + strlen(base) + 2;
        out = malloc(n);
        if (out)
            snprintf(out, n, "%s/%s", rdir, base);
    }
    free(rdir);
    return out;
}

/* Whether a and b (either may be NULL) name one file, made yet or not. */
static int one_file(const char *a, const char *b)
{
    char *ra, *rb;
    int same;

    if (!a || !b)
        return 0;
    if (strcmp(a, b) == 0 || outfile_same_file(a, b))
        return 1;
    ra = resolved_name(a);
    rb = resolved_name(b);
    same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    return same;
}

/* Why path, a file the run writes, may not be one: it is the suite, the
** --tables file or a database of the suite (its own, or the one
** --db-url names for it), which the run reads; NULL when none. A
** database is told by its name, not its first bytes: a CSV file has none
** of its own, and the report replaced one, --out --resume appended to
** it. */
static const char *input_refusal(const askdb_eval *ev, const char *path)
{
    const struct suite_item *it, *prev = NULL;
    char *url;
    long i;
    int same;

    if (outfile_same_file(path, ev->opt.suite_path))
        return "it is the suite being run";
    if (one_file(path, ev->opt.tables_path))
        return "it is the --tables file of the run";
    for (i = 0; i < ev->suite.n; i++) {
        it = &ev->suite.items[i];
        /* The items of a database mostly follow each other. */
        if (!it->db_path || (prev && strcmp(it->db_path, prev->db_path) == 0))
            continue;
        prev = it;
        same = outfile_same_file(path, it->db_path);
        if (!same && ev->opt.db_url && it->db_id) {
            url = eval_db_url(ev->opt.db_url, it->db_id);
            same = url && outfile_same_file(path, url);
            free(url);
        }
        if (same)
            return "it is a database of the suite (askdb never writes to "
                   "databases; choose another file)";
    }
    return NULL;
}

/*
** Why the run may not write path (its --out or its report), or NULL: a
** database (outfile.h), the suite itself or its --tables file, the run's
** other output, or
** something that is not a regular file (a device or a FIFO: the report
** would replace it, --resume would read it without end), or a folder
** that does not exist or cannot be written. other is the other output
** (or NULL).
*/
static const char *out_refusal(const askdb_eval *ev, const char *path,
                               const char *other)
{
    const char *why = outfile_refusal(path), *slash;
    char dir[4096];
    struct stat st;
    int exists;

    if (why)
        return why;
    exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode))
        return "it is not a regular file (askdb eval writes its records "
               "and its report to files)";
    why = input_refusal(ev, path);
    if (why)
        return why;
    if (one_file(path, other))
        return "--out and --report name the same file";
    if (exists)
        return NULL;
    slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s",
                 slash == path ? 1 : (int)(slash - path), path);
    if (access(dir, W_OK | X_OK) != 0)
        return "its folder does not exist or cannot be written";
    return NULL;
}

/* Why the run may not append its trace (--trace) to path, or NULL: the
** suite, the --tables file, --out or the report (what each database of
** the suite says of it is asked apart: outfile_refusal_for()). */
static const char *trace_refusal(const askdb_eval *ev, const char *path)
{
    const char *why = input_refusal(ev, path);

    if (why)
        return why;
    if (one_file(path, ev->opt.out_path))
        return "--trace and --out name the same file";
    if (one_file(path, ev->opt.report_path))
        return "--trace and --report name the same file";
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* Scoring one item                                                       */
/* ---------------------------------------------------------------------- */

/* The last SQL the model wrote, for the record of a failed answer. */
static const char *last_sql(const askdb_answer *a)
{
    int i;

    for (i = a->nattempts - 1; i >= 0; i--)
        if (a->attempts[i].sql)
            return a->attempts[i].sql;
    return NULL;
}

static void set_class(json_t *rec, const char *cls, const char *msg)
{
    json_object_set_new(rec, "class", cls ? json_string(cls) : json_null());
    if (msg)
        jsonx_set_str(rec, "message", msg);
}

static void set_bad(json_t *rec, const char *bad, const char *msg)
{
    json_object_set_new(rec, "bad", json_string(bad));
    jsonx_set_str(rec, "message", msg);
}

askdb_status eval_item(askdb_agent *ag, askdb_db *gold_db,
                       const struct suite_item *it, int keep_distinct,
                       json_t *rec, char *errmsg, size_t errlen)
{
    /* With --db-url the gold runs on the SQLite file and the prediction
    ** where it was asked (another engine): never on the gold's file. */
    askdb_db *db = gold_db ? gold_db : askdb_agent_db(ag);
    askdb_db *pdb = askdb_agent_db(ag);
    askdb_result *gr = NULL, *own = NULL;
    const askdb_result *pr = NULL;
    askdb_answer *a = NULL;
    char *gsql = NULL, *psql = NULL;
    struct db_err e;
    askdb_status st, rc = ASKDB_ERR_NOMEM;
    double t0;
    int eq;

    gsql = cmp_prepare_sql(it->gold, 0, keep_distinct);
    if (!gsql)
        goto out;
    /* The gold first: a bad item never costs a model call. */
    t0 = db_now_ms();
    st = db_run(db, gsql, &gr, &e);
    rec_set_ms(rec, "gold", db_now_ms() - t0);
    if (st) {
        set_bad(rec, st == ASKDB_ERR_TIMEOUT ? REC_BAD_GOLD_TIMEOUT
                                             : REC_BAD_GOLD, e.msg);
        rc = ASKDB_OK;
        goto out;
    }
    if (gr->truncated) {
        set_bad(rec, REC_BAD_GOLD_LARGE,
                "the gold result is larger than the row or byte limit "
                "(raise --max-rows / --max-bytes)");
        rc = ASKDB_OK;
        goto out;
    }
    json_object_set_new(rec, "order_matters",
                        json_boolean(rescmp_order_matters(gsql)));

    st = askdb_agent_ask_hint(ag, it->question, it->hint, &a);
    if (!a)
        goto out;
    rec_set_answer(rec, a);
    /* ASKDB_ERR_IO: the trace (--trace) could not be written; the run
    ** stops rather than go on with a trace that misses steps. */
    if (st == ASKDB_ERR_LLM_UNREACHABLE || st == ASKDB_ERR_NOMEM ||
        st == ASKDB_ERR_UNSUPPORTED || st == ASKDB_ERR_USAGE ||
        st == ASKDB_ERR_IO) {
        set_msg(errmsg, errlen, "%s", a->error ? a->error : "model failed");
        rc = st;
        goto out;
    }
    rc = ASKDB_OK;
    if (st == ASKDB_ERR_DB_OPEN) {
        set_bad(rec, REC_BAD_DB, a->error ? a->error : "cannot use database");
        goto out;
    }
    json_object_set_new(rec, "gold_result", rec_result(gr, REC_MAX_ROWS));
    if (st == ASKDB_ERR_LLM) {
        jsonx_set_str(rec, "pred", last_sql(a));
        set_class(rec, REC_MODEL, a->error);
        /* A refused key is refused for every question: the run stops at
        ** the first, recorded, rather than after EVAL_MAX_MODEL_ERRORS. */
        if (llm_denied(ag->model)) {
            set_msg(errmsg, errlen, "%s", a->error ? a->error
                                                  : "the model provider "
                                                    "refused the key");
            rc = ASKDB_ERR_LLM;
        }
        goto out;
    }
    if (st != ASKDB_OK) {
        /* An answer can have no attempt (the schema could not be read). */
        const askdb_attempt *at =
            a->nattempts ? &a->attempts[a->nattempts - 1] : NULL;
        jsonx_set_str(rec, "pred", last_sql(a));
        set_class(rec, at ? rec_class_of(at->error) : REC_NO_SQL,
                  at && at->message ? at->message : a->error);
        goto out;
    }
    if (!a->sql) {
        /* Taken for no question about the database (a greeting, or the
        ** model's "no" to the question check): no SQL, a wrong answer. */
        set_class(rec, REC_NO_SQL, a->text ? a->text : "no SQL");
        goto out;
    }
    jsonx_set_str(rec, "pred", a->sql);

    /* Run the prediction as the official evaluation would: it may differ
    ** from what the agent ran (DISTINCT removed, "> =" joined). */
    rc = ASKDB_ERR_NOMEM;
    psql = cmp_prepare_sql(a->sql, 1, keep_distinct);
    if (!psql)
        goto out;
    rc = ASKDB_OK;
    t0 = db_now_ms();
    if (a->result && (strcmp(psql, a->sql) == 0 || a->result->truncated)) {
        pr = a->result;
    } else if (db_run(pdb, psql, &own, &e)) {
        rec_set_ms(rec, "compare", db_now_ms() - t0);
        set_class(rec, e.ec == ASKDB_EC_TIMEOUT ? REC_TIMEOUT
                                                : rec_class_of(e.ec), e.msg);
        goto out;
    } else {
        pr = own;
    }
    if (!pr) {
        set_class(rec, REC_NO_SQL, "no result to compare");
        goto out;
    }
    /* More rows than the cap while the gold fits: they cannot be equal. */
    eq = pr->truncated ? 0
                       : rescmp_equal(gr, pr, rescmp_order_matters(gsql));
    rec_set_ms(rec, "compare", db_now_ms() - t0);
    if (eq < 0) {
        rc = ASKDB_ERR_NOMEM;
        set_msg(errmsg, errlen, "out of memory comparing results");
        goto out;
    }
    json_object_set_new(rec, "correct", json_boolean(eq));
    if (eq) {
        json_object_del(rec, "gold_result");
    } else {
        set_class(rec, pr->nrows == 0 ? REC_EMPTY : REC_WRONG,
                  pr->truncated ? "the prediction has more rows than the "
                                  "row or byte limit"
                                : NULL);
        json_object_set_new(rec, "pred_result", rec_result(pr, REC_MAX_ROWS));
    }
out:
    if (rc == ASKDB_ERR_NOMEM && !errmsg[0])
        set_msg(errmsg, errlen, "out of memory scoring item %ld", it->index);
    askdb_answer_free(a);
    askdb_result_free(gr);
    askdb_result_free(own);
    free(gsql);
    free(psql);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Running                                                                */
/* ---------------------------------------------------------------------- */

/* Record a finished item: write its line, keep it, report progress. Takes
** over rec. */
static void finish_item(askdb_eval *ev, const struct suite_item *it,
                        json_t *rec)
{
    const char *cls = jsonx_str(rec, "class");

    pthread_mutex_lock(&ev->mu);
    if (ev->out && rec_write(ev->out, rec)) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "cannot write '%s': %s",
                ev->opt.out_path, strerror(errno));
        ev->fatal = ASKDB_ERR_IO;
        ev->stop = 1;
        json_decref(rec);
        pthread_mutex_unlock(&ev->mu);
        return;
    }
    json_decref(ev->recs[it->index]);
    ev->recs[it->index] = rec;
    ev->prog.done++;
    if (jsonx_str(rec, "bad")) {
        ev->prog.bad++;
    } else {
        ev->prog.evaluated++;
        ev->prog.correct += rec_bool(rec, "correct");
    }
    ev->model_errors = cls && strcmp(cls, REC_MODEL) == 0
                           ? ev->model_errors + 1 : 0;
    if (ev->model_errors >= EVAL_MAX_MODEL_ERRORS && !ev->stop) {
        set_msg(ev->errmsg, sizeof ev->errmsg,
                "the model failed on %d questions in a row, last: %s",
                ev->model_errors, jsonx_str(rec, "message")
                                      ? jsonx_str(rec, "message") : "?");
        ev->fatal = ASKDB_ERR_LLM;
        ev->stop = 1;
    }
    ev->prog.elapsed_ms = db_now_ms() - ev->t0;
    ev->prog.db = it->db_id;
    if (ev->opt.progress)
        ev->opt.progress(ev->opt.progress_ud, &ev->prog);
    pthread_mutex_unlock(&ev->mu);
}

static void stop_run(askdb_eval *ev, askdb_status st, const char *msg)
{
    pthread_mutex_lock(&ev->mu);
    if (!ev->fatal) {
        ev->fatal = st;
        set_msg(ev->errmsg, sizeof ev->errmsg, "%s", msg);
    }
    ev->stop = 1;
    pthread_mutex_unlock(&ev->mu);
}

static int stopped(askdb_eval *ev)
{
    int s;

    if (atomic_load(&ev->interrupted))
        return 1;
    pthread_mutex_lock(&ev->mu);
    s = ev->stop;
    pthread_mutex_unlock(&ev->mu);
    return s;
}

char *eval_db_url(const char *tmpl, const char *db_id)
{
    static const char key[] = "{db_id}";
    struct buf b;
    const char *p;

    buf_init(&b, 0);
    while ((p = strstr(tmpl, key)) != NULL) {
        buf_append(&b, tmpl, (size_t)(p - tmpl));
        buf_puts(&b, db_id);
        tmpl = p + sizeof key - 1;
    }
    buf_puts(&b, tmpl);
    return buf_steal(&b);
}

/*
** The model every group's agent borrows: loaded by the first group that
** needs it, once for the run, as askdb serve and askdb mcp do. The local
** model's weights are then mapped once and a prefix one database's
** prompts share with the next (the system prompt) is evaluated once, so
** a database's first question no longer pays the model's load. NULL
** after stop_run() when it cannot be loaded.
*/
static askdb_model *run_model(askdb_eval *ev)
{
    askdb_status st = ASKDB_OK;
    askdb_model *m = NULL;
    char msg[512] = "";

    pthread_mutex_lock(&ev->mu);
    if (!ev->model && !ev->model_st) {
        double t0 = db_now_ms();

        st = askdb_model_new(&ev->cfg, &ev->model);
        ev->model_ms = db_now_ms() - t0;
        if (st) {
            ev->model_st = st;
            set_msg(msg, sizeof msg, "%s", askdb_model_errmsg(ev->model));
            askdb_model_free(ev->model);
            ev->model = NULL;
        }
    }
    m = ev->model;
    st = ev->model_st;
    pthread_mutex_unlock(&ev->mu);
    if (!m)
        stop_run(ev, st, msg);
    return m;
}

/* All items of one database with one agent. With --db-url the agent asks
** the database the URL names (the same data in another engine) and the
** gold still runs on the SQLite file: one reference for every engine. */
static void run_group(askdb_eval *ev, const struct eval_group *g)
{
    askdb_agent *ag = NULL;
    askdb_db *gold_db = NULL;
    askdb_model *m = NULL;
    const char *bad = NULL;
    char msg[1024] = "", *url = NULL;
    struct stat sb;
    askdb_status st;
    long k;

    if (g->db_path && stat(g->db_path, &sb) != 0) {
        bad = REC_BAD_MISSING_DB;
        set_msg(msg, sizeof msg, "no database file '%s'", g->db_path);
    } else if (g->db_path && !S_ISREG(sb.st_mode)) {
        /* It exists: a slip in the path (a folder), not a missing file. */
        bad = REC_BAD_DB;
        set_msg(msg, sizeof msg, "'%s' is %s, not a database file",
                g->db_path,
                S_ISDIR(sb.st_mode) ? "a folder" : "no regular file");
    } else if (g->db_path && ev->opt.db_url && g->n > 0) {
        url = eval_db_url(ev->opt.db_url,
                          ev->suite.items[g->items[0]].db_id);
        st = url ? askdb_db_open(g->db_path, &ev->cfg, &gold_db)
                 : ASKDB_ERR_NOMEM;
        if (st == ASKDB_OK && !(m = run_model(ev)))
            goto out;
        if (st == ASKDB_OK)
            st = askdb_agent_new_with_model(&ev->cfg, m, url, &ag);
        if (st == ASKDB_ERR_DB_OPEN) {
            bad = REC_BAD_DB;
            set_msg(msg, sizeof msg, "%s",
                    ag ? askdb_agent_errmsg(ag) : askdb_db_errmsg(gold_db));
        } else if (st) {
            stop_run(ev, st, ag ? askdb_agent_errmsg(ag)
                                : askdb_db_errmsg(gold_db));
            goto out;
        }
    } else if (g->db_path) {
        if (!(m = run_model(ev)))
            goto out;
        st = askdb_agent_new_with_model(&ev->cfg, m, g->db_path, &ag);
        if (st == ASKDB_ERR_DB_OPEN) {
            bad = REC_BAD_DB;
            set_msg(msg, sizeof msg, "%s", askdb_agent_errmsg(ag));
        } else if (st) {
            stop_run(ev, st, askdb_agent_errmsg(ag));
            goto out;
        }
    }
    /* A learned pair of the very question being scored is its gold. */
    if (ag)
        ag->mem_skip_same = 1;
    /* A failed warm-up shows again, and is recorded, on the question. */
    if (ag && !bad && ev->opt.warm && g->n > 0 && !stopped(ev))
        askdb_agent_warm(ag);
    for (k = 0; k < g->n && !stopped(ev); k++) {
        const struct suite_item *it = &ev->suite.items[g->items[k]];
        json_t *rec = rec_new(it);
        char err[1024] = "";
        if (!rec) {
            stop_run(ev, ASKDB_ERR_NOMEM, "out of memory");
            break;
        }
        if (it->malformed) {
            set_bad(rec, REC_BAD_MALFORMED, it->malformed);
        } else if (bad || !ag) {
            set_bad(rec, bad ? bad : REC_BAD_MALFORMED,
                    bad ? msg : "no database");
        } else {
            st = eval_item(ag, gold_db, it, ev->opt.keep_distinct, rec,
                           err, sizeof err);
            if (st == ASKDB_ERR_LLM) {
                /* Stopped first, so that the record's model_error is not
                ** taken for one of EVAL_MAX_MODEL_ERRORS in a row. */
                stop_run(ev, st, err);
                finish_item(ev, it, rec);
                break;
            }
            if (st) {
                json_decref(rec);
                stop_run(ev, st, err);
                break;
            }
        }
        finish_item(ev, it, rec);
    }
out:
    askdb_agent_free(ag);
    askdb_db_close(gold_db);
    free(url);
}

static void free_groups(askdb_eval *ev)
{
    long i;

    for (i = 0; ev->groups && i < ev->ngroups; i++)
        free(ev->groups[i].items);
    free(ev->groups);
    ev->groups = NULL;
    ev->ngroups = 0;
}

/* Group the selected items that are not done (no record yet) by database
** file, groups in order of first appearance, in place of the groups of an
** earlier run. -1 when out of memory. */
static int make_groups(askdb_eval *ev)
{
    long i, g;

    free_groups(ev);
    ev->groups = calloc((size_t)ev->nsel + 1, sizeof *ev->groups);
    if (!ev->groups)
        return -1;
    for (i = 0; i < ev->nsel; i++) {
        const struct suite_item *it = &ev->suite.items[ev->sel[i]];
        struct eval_group *gr = NULL;
        if (ev->recs[it->index])
            continue;
        for (g = 0; g < ev->ngroups; g++) {
            const char *p = ev->groups[g].db_path;
            if ((!p && !it->db_path) ||
                (p && it->db_path && strcmp(p, it->db_path) == 0)) {
                gr = &ev->groups[g];
                break;
            }
        }
        if (!gr) {
            gr = &ev->groups[ev->ngroups++];
            gr->db_path = it->db_path;
            gr->items = calloc((size_t)ev->nsel, sizeof *gr->items);
            if (!gr->items)
                return -1;
        }
        gr->items[gr->n++] = it->index;
    }
    return 0;
}

static void *worker(void *arg)
{
    askdb_eval *ev = arg;
    const struct eval_group *g;

    for (;;) {
        pthread_mutex_lock(&ev->mu);
        g = !ev->stop && !atomic_load(&ev->interrupted) &&
                    ev->next_group < ev->ngroups
                ? &ev->groups[ev->next_group++] : NULL;
        pthread_mutex_unlock(&ev->mu);
        if (!g)
            break;
        run_group(ev, g);
    }
    return NULL;
}

void askdb_eval_interrupt(askdb_eval *ev)
{
    if (ev)
        atomic_store(&ev->interrupted, 1);
}

/* The run's status: the first fatal failure, or an interrupt. The run
** takes the interrupt it saw: a later askdb_eval_run() goes on with what
** is left. */
static askdb_status run_status(askdb_eval *ev)
{
    if (atomic_exchange(&ev->interrupted, 0) && !ev->fatal) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "interrupted: the questions "
                "not asked yet are not run%s", ev->opt.out_path
                ? " (--resume continues the run)" : "");
        return ASKDB_ERR_CANCELLED;
    }
    return ev->fatal;
}

/*
** ASKDB_ERR_USAGE for an eval whose askdb_eval_new() failed (the handle
** it left for askdb_eval_errmsg()): half set up, it has nothing to run.
** The message keeps why it failed.
*/
static askdb_status not_set_up(askdb_eval *ev)
{
    static const char pre[] = "this eval was not set up (askdb_eval_new() "
                              "failed): ";
    char why[sizeof ev->errmsg];

    if (strncmp(ev->errmsg, pre, sizeof pre - 1) != 0) {
        snprintf(why, sizeof why, "%s", ev->errmsg);
        set_msg(ev->errmsg, sizeof ev->errmsg, "%s%s", pre, why);
    }
    return ASKDB_ERR_USAGE;
}

askdb_status askdb_eval_run(askdb_eval *ev)
{
    pthread_t *th;
    int i, n, started = 0;

    if (!ev)
        return ASKDB_ERR_USAGE;
    if (!ev->ready)
        return not_set_up(ev);
    /* Only what no run finished yet (an earlier run stopped, or this is
    ** another call): the items done keep their one record and count. */
    if (make_groups(ev)) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "out of memory");
        return ASKDB_ERR_NOMEM;
    }
    ev->stop = 0;
    ev->fatal = ASKDB_OK;
    ev->model_errors = 0;
    ev->errmsg[0] = '\0';
    if (!ev->model)
        ev->model_st = ASKDB_OK; /* a model that failed to load is tried
                                    again */
    n = ev->opt.jobs;
    ev->t0 = db_now_ms();
    ev->next_group = 0;
    if (n > ev->ngroups)
        n = (int)ev->ngroups;
    if (n <= 1) {
        worker(ev);
        return run_status(ev);
    }
    th = calloc((size_t)n, sizeof *th);
    if (!th)
        return ASKDB_ERR_NOMEM;
    for (i = 0; i < n; i++) {
        if (pthread_create(&th[i], NULL, worker, ev) != 0)
            break;
        started++;
    }
    if (started == 0)
        worker(ev);
    for (i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    return run_status(ev);
}

/* ---------------------------------------------------------------------- */
/* Setting up                                                             */
/* ---------------------------------------------------------------------- */

askdb_eval_options askdb_eval_options_default(void)
{
    askdb_eval_options o;

    memset(&o, 0, sizeof o);
    o.jobs = 1;
    return o;
}

/* Keep a copy of *s owned by ev and point *s at it. -1 when OOM. */
static int own(askdb_eval *ev, const char **s)
{
    char *c;

    if (!*s)
        return 0;
    if (ev->nowned >= (int)(sizeof ev->owned / sizeof *ev->owned))
        return -1;
    c = strdup(*s);
    if (!c)
        return -1;
    ev->owned[ev->nowned++] = c;
    *s = c;
    return 0;
}

/*
** Whether --resume does an item of a previous run again: the model failed
** on it, or its database could not be used (missing, not a database), so
** it was never asked, and the cause may be gone (a corrected --db-root, a
** file copied since, a server started).
*/
static int resume_again(const json_t *rec)
{
    const char *cls = jsonx_str(rec, "class"), *bad = jsonx_str(rec, "bad");

    return (cls && strcmp(cls, REC_MODEL) == 0) ||
           (bad && (strcmp(bad, REC_BAD_MISSING_DB) == 0 ||
                    strcmp(bad, REC_BAD_DB) == 0));
}

/*
** Read a previous run's output for --resume: the last record of each
** index counts; what resume_again() says is done again. An index out of
** range or a question that differs means the file belongs to another
** suite.
*/
static askdb_status load_out(askdb_eval *ev, int *ends_nl)
{
    FILE *f = fopen(ev->opt.out_path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0, bad_lines = 0;
    off_t off = 0, whole = 0; /* bytes read; up to the last full line */
    int cut_bad = 0;          /* the last line is cut short and unreadable */
    askdb_status rc = ASKDB_OK;

    *ends_nl = 1;
    if (!f) {
        if (errno == ENOENT)
            return ASKDB_OK;
        set_msg(ev->errmsg, sizeof ev->errmsg, "cannot read '%s': %s",
                ev->opt.out_path, strerror(errno));
        return ASKDB_ERR_IO;
    }
    while ((len = getline(&line, &cap, f)) > 0) {
        json_t *o;
        long long idx;
        const char *q;
        lineno++;
        off += len;
        *ends_nl = line[len - 1] == '\n';
        if (*ends_nl)
            whole = off;
        o = json_loads(line, 0, NULL);
        cut_bad = !*ends_nl && !json_is_object(o);
        if (!json_is_object(o)) {
            bad_lines++;
            json_decref(o);
            continue;
        }
        idx = jsonx_int(o, "index", -1);
        q = jsonx_str(o, "question");
        if (idx < 0 || idx >= ev->suite.n ||
            (q && ev->suite.items[idx].question &&
             strcmp(q, ev->suite.items[idx].question) != 0)) {
            set_msg(ev->errmsg, sizeof ev->errmsg,
                    "'%s' line %ld does not match the suite (item %lld "
                    "differs): was it written for another suite? (use "
                    "another --out)", ev->opt.out_path, lineno, idx);
            json_decref(o);
            rc = ASKDB_ERR_USAGE;
            break;
        }
        json_decref(ev->recs[idx]);
        ev->recs[idx] = NULL;
        if (resume_again(o))
            json_decref(o);
        else
            ev->recs[idx] = o;
    }
    free(line);
    fclose(f);
    /* A run killed in the middle of a line left half a record: it goes,
    ** so that the file stays valid JSON lines (its item runs again). */
    if (rc == ASKDB_OK && cut_bad) {
        if (truncate(ev->opt.out_path, whole) != 0) {
            set_msg(ev->errmsg, sizeof ev->errmsg, "cannot cut the "
                    "unfinished last line of '%s': %s", ev->opt.out_path,
                    strerror(errno));
            return ASKDB_ERR_IO;
        }
        *ends_nl = 1;
    }
    if (bad_lines)
        buf_printf(&ev->notes, "%ld unreadable line%s in '%s' ignored (an "
                   "interrupted write?); those items run again\n", bad_lines,
                   bad_lines == 1 ? "" : "s", ev->opt.out_path);
    return rc;
}

/* askdb_eval_new() on the handle it made: copy the settings, load and
** select, check the outputs. */
static askdb_status eval_setup(askdb_eval *ev, const askdb_config *cfg,
                               const askdb_eval_options *opt)
{
    askdb_status rc;
    const char *provider, *p, *name;
    struct stat sb;
    long unknown, i;
    size_t len;
    int ends_nl = 1;

    ev->cfg = cfg ? *cfg : askdb_config_default();
    ev->opt = opt ? *opt : askdb_eval_options_default();
    /* Every string field of askdb_config and askdb_eval_options: the
    ** header promises copies, and the caller may free its own at once. */
    if (own(ev, &ev->cfg.provider) || own(ev, &ev->cfg.llm_url) ||
        own(ev, &ev->cfg.model) || own(ev, &ev->cfg.api_key) ||
        own(ev, &ev->cfg.memory_path) ||
        own(ev, &ev->cfg.trace_path) || own(ev, &ev->opt.suite_path) ||
        own(ev, &ev->opt.db_root) || own(ev, &ev->opt.tables_path) ||
        own(ev, &ev->opt.dbs) || own(ev, &ev->opt.out_path) ||
        own(ev, &ev->opt.db_url) || own(ev, &ev->opt.report_path))
        return ASKDB_ERR_NOMEM;

    rc = ASKDB_ERR_USAGE;
    if (!ev->opt.suite_path) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "no suite given (--suite "
                "FILE)");
        return rc;
    }
    if (ev->opt.resume && !ev->opt.out_path) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "--resume needs --out FILE "
                "(the output of the run to continue)");
        return rc;
    }
    if (ev->cfg.dry_run) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "an eval runs every query; "
                "--dry-run does not apply");
        return rc;
    }
    if (ev->opt.limit < 0 || ev->opt.sample < 0 || ev->opt.sample_dbs < 0 ||
        ev->opt.per_db < 0) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "--limit, --sample, "
                "--sample-dbs and --per-db take a positive number");
        return rc;
    }
    if (ev->opt.db_root && (stat(ev->opt.db_root, &sb) != 0 ||
                            !S_ISDIR(sb.st_mode))) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "--db-root '%s' is not a "
                "folder", ev->opt.db_root);
        return rc;
    }
    provider = llm_choose(&ev->cfg);
    if (!provider) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "unknown model provider '%s' "
                "(valid: openai, anthropic, local)", ev->cfg.provider);
        return rc;
    }
    if (llm_check_numbers(&ev->cfg, ev->errmsg, sizeof ev->errmsg))
        return rc;
    if (ev->opt.jobs < 1)
        ev->opt.jobs = 1;
    if (ev->opt.jobs > 1 && strcmp(provider, "local") == 0) {
        buf_printf(&ev->notes, "--jobs %d lowered to 1: the local model "
                   "answers one question at a time\n", ev->opt.jobs);
        ev->opt.jobs = 1;
    }

    rc = suite_load(ev->opt.suite_path, ev->opt.db_root, &ev->suite,
                    ev->errmsg, sizeof ev->errmsg);
    if (rc)
        return rc;
    if (ev->opt.tables_path) {
        if (suite_check_tables(&ev->suite, ev->opt.tables_path, &unknown,
                               ev->errmsg, sizeof ev->errmsg))
            return ASKDB_ERR_USAGE;
        if (unknown)
            buf_printf(&ev->notes, "%ld item%s a db_id that '%s' does "
                       "not describe\n", unknown,
                       unknown == 1 ? " names" : "s name",
                       ev->opt.tables_path);
    }
    {
        struct suite_pick pick;
        memset(&pick, 0, sizeof pick);
        pick.dbs = ev->opt.dbs;
        pick.sample_dbs = ev->opt.sample_dbs;
        pick.per_db = ev->opt.per_db;
        pick.sample = ev->opt.sample;
        pick.limit = ev->opt.limit;
        pick.seed = ev->opt.seed;
        if (suite_pick(&ev->suite, &pick, &ev->sel, &ev->nsel))
            return ASKDB_ERR_NOMEM;
    }
    /* A name in --db that no item has (a slip: "shpo") is said. */
    p = ev->opt.dbs ? ev->opt.dbs : "";
    while (suite_list_next(&p, &name, &len)) {
        long k;
        for (k = 0; k < ev->suite.n; k++) {
            const char *id = ev->suite.items[k].db_id;
            if (id && strlen(id) == len && strncmp(id, name, len) == 0)
                break;
        }
        if (len && k == ev->suite.n)
            buf_printf(&ev->notes, "--db names '%.*s', which no item of "
                       "'%s' has\n", (int)len, name, ev->opt.suite_path);
    }
    if (ev->nsel == 0) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "no item of '%s' is "
                "selected%s", ev->opt.suite_path,
                ev->opt.dbs ? " (check --db)" : "");
        return ASKDB_ERR_USAGE;
    }
    ev->recs = calloc((size_t)ev->suite.n, sizeof *ev->recs);
    if (!ev->recs)
        return ASKDB_ERR_NOMEM;

    /* Each agent checks the trace against its own database; one that
    ** names the database of another group of the suite is refused now. */
    for (i = 0; ev->cfg.trace_path && i < ev->suite.n; i++) {
        const char *dbp = ev->suite.items[i].db_path, *why;
        if (!dbp || (i > 0 && ev->suite.items[i - 1].db_path &&
                     strcmp(dbp, ev->suite.items[i - 1].db_path) == 0))
            continue;
        why = outfile_refusal_for(ev->cfg.trace_path, dbp);
        if (why) {
            set_msg(ev->errmsg, sizeof ev->errmsg, "cannot open trace file "
                    "'%s': %s", ev->cfg.trace_path, why);
            return ASKDB_ERR_USAGE;
        }
    }
    /* The trace is appended to all run long: in the suite (or the
    ** --tables file) it would make it JSON no more, beside the records
    ** --resume could not read them, and the report would replace it at
    ** the end. */
    if (ev->cfg.trace_path) {
        const char *why = trace_refusal(ev, ev->cfg.trace_path);
        if (why) {
            set_msg(ev->errmsg, sizeof ev->errmsg, "cannot open trace file "
                    "'%s': %s", ev->cfg.trace_path, why);
            return ASKDB_ERR_USAGE;
        }
    }
    /* The report is written at the end: what would keep it from being
    ** written is said now, not after the whole run. */
    if (ev->opt.report_path) {
        const char *why = out_refusal(ev, ev->opt.report_path,
                                      ev->opt.out_path);
        if (why) {
            set_msg(ev->errmsg, sizeof ev->errmsg, "cannot write report "
                    "'%s': %s", ev->opt.report_path, why);
            return ASKDB_ERR_USAGE;
        }
    }
    if (ev->opt.out_path) {
        const char *why = out_refusal(ev, ev->opt.out_path,
                                      ev->opt.report_path);
        if (why) {
            set_msg(ev->errmsg, sizeof ev->errmsg, "cannot write '%s': %s",
                    ev->opt.out_path, why);
            return ASKDB_ERR_USAGE;
        }
        if (!ev->opt.resume && stat(ev->opt.out_path, &sb) == 0 &&
            sb.st_size > 0) {
            set_msg(ev->errmsg, sizeof ev->errmsg, "'%s' already exists: "
                    "add --resume to continue that run, or choose another "
                    "--out", ev->opt.out_path);
            return ASKDB_ERR_USAGE;
        }
        if (ev->opt.resume) {
            rc = load_out(ev, &ends_nl);
            if (rc)
                return rc;
        }
        ev->out = fopen(ev->opt.out_path, "a");
        if (!ev->out) {
            set_msg(ev->errmsg, sizeof ev->errmsg, "cannot write '%s': %s",
                    ev->opt.out_path, strerror(errno));
            return ASKDB_ERR_IO;
        }
        /* A run killed mid-line left a partial line: end it first. */
        if (!ends_nl && (fputc('\n', ev->out) == EOF || fflush(ev->out))) {
            set_msg(ev->errmsg, sizeof ev->errmsg, "cannot write '%s': %s",
                    ev->opt.out_path, strerror(errno));
            return ASKDB_ERR_IO;
        }
    }
    ev->prog.total = ev->nsel;
    for (i = 0; i < ev->nsel; i++) {
        const json_t *r = ev->recs[ev->sel[i]];
        if (!r)
            continue;
        ev->prog.done++;
        ev->prog.resumed++;
        if (jsonx_str(r, "bad")) {
            ev->prog.bad++;
        } else {
            ev->prog.evaluated++;
            ev->prog.correct += rec_bool(r, "correct");
        }
    }
    return ASKDB_OK;
}

askdb_status askdb_eval_new(const askdb_config *cfg,
                            const askdb_eval_options *opt, askdb_eval **out)
{
    askdb_eval *ev;
    askdb_status rc;

    if (!out)
        return ASKDB_ERR_USAGE;
    *out = NULL;
    ev = calloc(1, sizeof *ev);
    if (!ev)
        return ASKDB_ERR_NOMEM;
    atomic_init(&ev->interrupted, 0);
    *out = ev;
    pthread_mutex_init(&ev->mu, NULL);
    buf_init(&ev->notes, 1 << 16);
    rc = eval_setup(ev, cfg, opt);
    ev->ready = rc == ASKDB_OK;
    return rc;
}

void askdb_eval_free(askdb_eval *ev)
{
    long i;
    int k;

    if (!ev)
        return;
    if (ev->out)
        fclose(ev->out);
    for (i = 0; ev->recs && i < ev->suite.n; i++)
        json_decref(ev->recs[i]);
    free(ev->recs);
    free_groups(ev);
    free(ev->sel);
    suite_free(&ev->suite);
    for (k = 0; k < ev->nowned; k++)
        free(ev->owned[k]);
    buf_free(&ev->notes);
    askdb_model_free(ev->model);
    pthread_mutex_destroy(&ev->mu);
    free(ev);
}

const char *askdb_eval_errmsg(const askdb_eval *ev)
{
    return ev ? ev->errmsg : "out of memory";
}

const char *askdb_eval_notes(const askdb_eval *ev)
{
    return ev && ev->notes.data ? ev->notes.data : "";
}

/* ---------------------------------------------------------------------- */
/* Summary and report                                                     */
/* ---------------------------------------------------------------------- */

/* The records of the selected items, in selection order (borrowed). */
static json_t **selected_recs(askdb_eval *ev)
{
    json_t **r = calloc((size_t)ev->nsel + 1, sizeof *r);
    long i;

    if (r)
        for (i = 0; i < ev->nsel; i++)
            r[i] = ev->recs[ev->sel[i]];
    return r;
}

askdb_status askdb_eval_summary(askdb_eval *ev, char **out)
{
    json_t **recs;
    struct summary s;
    struct buf b;

    if (!out)
        return ASKDB_ERR_USAGE;
    *out = NULL;
    if (!ev)
        return ASKDB_ERR_USAGE;
    if (!ev->ready)
        return not_set_up(ev);
    recs = selected_recs(ev);
    if (!recs || summary_compute(recs, ev->nsel, &s)) {
        free(recs);
        return ASKDB_ERR_NOMEM;
    }
    /* The local model's load (HTTP providers load nothing). */
    {
        const char *p = llm_choose(&ev->cfg);

        s.model_ms = ev->model && p && strcmp(p, "local") == 0
                         ? ev->model_ms : 0;
    }
    buf_init(&b, 0);
    summary_text(&b, &s);
    summary_free(&s);
    free(recs);
    *out = buf_steal(&b);
    return *out ? ASKDB_OK : ASKDB_ERR_NOMEM;
}

askdb_status askdb_eval_write_report(askdb_eval *ev, const char *path)
{
    json_t **recs;
    struct summary s;
    struct buf b, title, sub, tmp;
    const char *base;
    askdb_status rc = ASKDB_ERR_NOMEM;
    const char *why, *given = path;
    char *real = NULL;
    FILE *f = NULL;

    if (!ev)
        return ASKDB_ERR_USAGE;
    if (!ev->ready)
        return not_set_up(ev);
    if (!path) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "no report file given");
        return ASKDB_ERR_USAGE;
    }
    /* The report replaces path (through path.tmp): neither may be a
    ** database, the suite, the records or a device. */
    why = out_refusal(ev, path, ev->opt.out_path);
    if (why) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "cannot write report '%s': "
                "%s", path, why);
        return ASKDB_ERR_USAGE;
    }
    base = strrchr(ev->opt.suite_path, '/');
    recs = selected_recs(ev);
    buf_init(&b, REPORT_MAX_BYTES);
    buf_init(&title, 0);
    buf_init(&sub, 0);
    buf_init(&tmp, 0);
    if (!recs || summary_compute(recs, ev->nsel, &s)) {
        free(recs);
        return rc;
    }
    buf_printf(&title, "askdb eval: %s", base ? base + 1
                                             : ev->opt.suite_path);
    buf_printf(&sub, "%ld questions from %s; model %s (%s); up to %d "
               "attempts per question; EX as the official Spider "
               "execution evaluation decides it%s", ev->nsel,
               ev->opt.suite_path, ev->cfg.model ? ev->cfg.model : "default",
               llm_choose(&ev->cfg) ? llm_choose(&ev->cfg) : "?",
               agent_max_attempts(&ev->cfg),
               ev->opt.keep_distinct ? " (DISTINCT kept)" : "");
    report_html(&b, title.data ? title.data : "askdb eval",
                sub.data ? sub.data : "", recs, ev->nsel, &s);
    summary_free(&s);
    free(recs);
    if (buf_err(&b))
        goto out;
    /* A link is followed: the file it names is replaced, not the link. */
    real = realpath(path, NULL);
    if (real)
        path = real;
    buf_printf(&tmp, "%s.tmp", path);
    if (buf_err(&tmp))
        goto out;
    why = outfile_refusal(tmp.data);
    if (why) {
        rc = ASKDB_ERR_USAGE;
        set_msg(ev->errmsg, sizeof ev->errmsg, "cannot write report '%s' "
                "through '%s': %s", given, tmp.data, why);
        goto out;
    }
    rc = ASKDB_ERR_IO;
    f = fopen(tmp.data, "w");
    if (!f) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "cannot write report '%s': "
                "%s", given, strerror(errno));
        goto out;
    }
    if (fwrite(b.data, 1, b.len, f) != b.len || fflush(f) != 0) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "cannot write report '%s': "
                "%s", given, strerror(errno));
        fclose(f);
        remove(tmp.data);
        goto out;
    }
    if (fclose(f) != 0) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "cannot write report '%s': "
                "%s", given, strerror(errno));
        remove(tmp.data);
        goto out;
    }
    if (rename(tmp.data, path) != 0) {
        set_msg(ev->errmsg, sizeof ev->errmsg, "cannot write report '%s': "
                "%s", given, strerror(errno));
        remove(tmp.data);
        goto out;
    }
    rc = ASKDB_OK;
out:
    if (rc == ASKDB_ERR_NOMEM)
        set_msg(ev->errmsg, sizeof ev->errmsg, "out of memory building the "
                "report");
    buf_free(&b);
    buf_free(&title);
    buf_free(&sub);
    buf_free(&tmp);
    free(real);
    return rc;
}
