/* link_recall.c - does schema linking keep what Spider's gold queries use,
** and how much of the prompt does it save?
**
**   link_recall [--spider DIR] [--min-tables N] [--limit N] [--show N]
**               [--whole-tables N] [--whole-bytes N] [--max-tables N]
**               [--wide-cols N] [--min-rel X] [--no-samples]
**
** For each item of DIR/train.json (DIR defaults to $SPIDER_DIR, else
** ../shared/bench/spider-train) the item's database is opened read-only
** with askdb's default configuration (so the schema text is the prompt's,
** sample values included, unless --no-samples), and the gold query is
** prepared on a second read-only connection under an authorizer: every
** SQLITE_READ names a table and a column, which is exactly what the query
** uses (reads with an empty column, as count(*) makes, name only the
** table). link_schema() then runs on the question alone, no hints, with
** link_opts_default() or the options given.
**
** Reported per group (all items; items where the schema was pruned; items
** on databases of 8 or more tables):
**   whole      share of items whose schema was kept whole;
**   tbl all    share of items whose gold tables were all kept;
**   tbl micro  kept gold tables / gold tables;
**   col all, col micro  the same for gold columns (a column counts as kept
**              when its table and the column itself are);
**   schema B, kept B    mean bytes of schema_render() and of
**              schema_render_subset() for the linking's masks;
**   saved      share of schema bytes saved, and the mean tokens saved per
**              question, estimated as bytes / 3.6 (no tokenizer is run).
** --min-tables N counts only databases with at least N tables; --show N
** prints the first N items missing a gold table. Exit status 0, or 2 on
** usage or data errors.
**
** Measured with the defaults (2 vCPU, about 1 s for the whole file):
**
**   items           n   whole tbl all tbl mic  schema B  kept B  saved ~tok
**   all          6901   77.5%   99.5%   99.6%      2100    1513  28.0%  163
**   pruned       1556    0.0%   97.8%   98.4%      4702    2098  55.4%  723
**   >= 8 tables  1521    9.7%   98.7%   99.1%      4693    2167  53.8%  702
**
** Column recall is the same as table recall there: no Spider table has
** more than 24 columns, so kept tables keep all their columns. Trimming
** tables wider than 12 (--wide-cols 12) saves 3 points more of the pruned
** schemas' bytes but keeps all gold columns of only 96.2% of them.
*/
#define _POSIX_C_SOURCE 200809L

#include <askdb.h>
#include <sqlite3.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "agent/link.h"
#include "db/db.h"
#include "eval/suite.h"

#define MAX_GOLD 1024
#define TOKEN_BYTES 3.6

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
                                                     noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "link_recall: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static double cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long num_arg(const char *opt, const char *v)
{
    char *end;
    long n;

    if (!v)
        die("%s needs a value", opt);
    n = strtol(v, &end, 10);
    if (*end || n < 0)
        die("%s: not a count: %s", opt, v);
    return n;
}

/* ---- gold tables and columns ------------------------------------------- */

/* What a gold query reads, as schema indices (column -1 = table only). */
struct gold {
    const struct db_schema *s;
    int t[MAX_GOLD], c[MAX_GOLD];
    int n;
};

static void gold_add(struct gold *g, int t, int c)
{
    int i;

    for (i = 0; i < g->n; i++)
        if (g->t[i] == t && g->c[i] == c)
            return;
    if (g->n < MAX_GOLD) {
        g->t[g->n] = t;
        g->c[g->n++] = c;
    }
}

static int on_auth(void *ud, int action, const char *a1, const char *a2,
                   const char *a3, const char *a4)
{
    struct gold *g = ud;
    const struct db_table *t;
    const struct db_column *c;

    (void)a3;
    (void)a4;
    if (action != SQLITE_READ || !a1)
        return SQLITE_OK;
    t = schema_table(g->s, a1);
    if (!t)
        return SQLITE_OK;
    gold_add(g, (int)(t - g->s->tables), -1);
    c = a2 && *a2 ? schema_column(t, a2) : NULL;
    if (c)
        gold_add(g, (int)(t - g->s->tables), (int)(c - t->cols));
    return SQLITE_OK;
}

/* ---- the figures ------------------------------------------------------- */

struct stats {
    long items, whole;
    long tbl_all, tbl_gold, tbl_kept;
    long col_all, col_gold, col_kept;
    double full_bytes, kept_bytes;
};

enum { G_ALL, G_PRUNED, G_LARGE, NGROUPS };
static const char *const group_name[NGROUPS] = {
    "all", "pruned", ">= 8 tables",
};

static double pct(long a, long b)
{
    return b ? 100.0 * (double)a / (double)b : 0;
}

static void print_row(const char *name, const struct stats *st)
{
    double n = st->items ? (double)st->items : 1;

    printf("%-12s %6ld %6.1f%% %6.1f%% %6.1f%% %6.1f%% %6.1f%% %8.0f %8.0f "
           "%6.1f%% %7.0f\n",
           name, st->items, pct(st->whole, st->items),
           pct(st->tbl_all, st->items), pct(st->tbl_kept, st->tbl_gold),
           pct(st->col_all, st->items), pct(st->col_kept, st->col_gold),
           st->full_bytes / n, st->kept_bytes / n,
           st->full_bytes > 0
               ? 100.0 * (st->full_bytes - st->kept_bytes) / st->full_bytes
               : 0,
           (st->full_bytes - st->kept_bytes) / n / TOKEN_BYTES);
}

/* ---- the run ----------------------------------------------------------- */

struct db_state {
    char id[256];
    askdb_db *db;
    sqlite3 *raw;
    const struct db_schema *s;
    size_t full_len;
};

static void db_close_state(struct db_state *d)
{
    askdb_db_close(d->db);
    sqlite3_close(d->raw);
    memset(d, 0, sizeof *d);
}

static void db_switch(struct db_state *d, const char *id, const char *path,
                      int samples)
{
    askdb_config cfg = askdb_config_default();
    char *text;

    if (strcmp(d->id, id) == 0)
        return;
    db_close_state(d);
    snprintf(d->id, sizeof d->id, "%s", id);
    if (!samples)
        cfg.sample_values = 0;
    if (askdb_db_open(path, &cfg, &d->db) != ASKDB_OK)
        die("cannot open %s: %s", path, askdb_db_errmsg(d->db));
    if (db_schema(d->db, &d->s) != ASKDB_OK)
        die("cannot read the schema of %s: %s", path, d->db->errmsg);
    if (sqlite3_open_v2(path, &d->raw, SQLITE_OPEN_READONLY, NULL) !=
        SQLITE_OK)
        die("cannot open %s: %s", path, sqlite3_errmsg(d->raw));
    text = schema_render(d->s);
    if (!text)
        die("%s", "out of memory");
    d->full_len = strlen(text);
    free(text);
}

int main(int argc, char **argv)
{
    const char *spider = getenv("SPIDER_DIR");
    struct link_opts o = link_opts_default();
    struct stats st[NGROUPS];
    struct db_state d;
    struct suite suite;
    char err[512];
    long min_tables = 0, limit = -1, show = 0, shown = 0, unprepared = 0, k;
    int samples = 1, i, g;
    double link_ms = 0;

    memset(st, 0, sizeof st);
    memset(&d, 0, sizeof d);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--spider") == 0 && v)
            spider = argv[++i];
        else if (strcmp(a, "--min-tables") == 0)
            min_tables = num_arg(a, v), i++;
        else if (strcmp(a, "--limit") == 0)
            limit = num_arg(a, v), i++;
        else if (strcmp(a, "--show") == 0)
            show = num_arg(a, v), i++;
        else if (strcmp(a, "--whole-tables") == 0)
            o.keep_whole_tables = (int)num_arg(a, v), i++;
        else if (strcmp(a, "--whole-bytes") == 0)
            o.keep_whole_bytes = (int)num_arg(a, v), i++;
        else if (strcmp(a, "--max-tables") == 0)
            o.max_tables = (int)num_arg(a, v), i++;
        else if (strcmp(a, "--wide-cols") == 0)
            o.wide_table_cols = (int)num_arg(a, v), i++;
        else if (strcmp(a, "--min-rel") == 0 && v)
            o.min_rel = strtod(argv[++i], NULL);
        else if (strcmp(a, "--no-samples") == 0)
            samples = 0;
        else
            die("usage: link_recall [--spider DIR] [--min-tables N] "
                "[--limit N] [--show N] [--whole-tables N] [--whole-bytes N] "
                "[--max-tables N] [--wide-cols N] [--min-rel X] "
                "[--no-samples]");
    }
    if (!spider || !*spider)
        spider = "../shared/bench/spider-train";
    if (suite_load_spider(spider, &suite, err, sizeof err) != ASKDB_OK)
        die("%s", err);

    for (k = 0; k < suite.n; k++) {
        const struct suite_item *it = &suite.items[k];
        const char *id = it->db_id, *q = it->question, *sql = it->gold;
        struct link_result r;
        struct gold gd;
        sqlite3_stmt *stmt = NULL;
        char *sub;
        int all_t = 1, all_c = 1, nt = 0, nc = 0, kt = 0, kc = 0, j;
        double t0;

        if (limit >= 0 && k >= limit)
            break;
        if (it->malformed)
            die("%s/train.json: entry %ld: %s", spider, k, it->malformed);
        db_switch(&d, id, it->db_path, samples);
        if (d.s->ntables < min_tables)
            continue;
        memset(&gd, 0, sizeof gd);
        gd.s = d.s;
        sqlite3_set_authorizer(d.raw, on_auth, &gd);
        if (sqlite3_prepare_v2(d.raw, sql, -1, &stmt, NULL) != SQLITE_OK ||
            gd.n == 0) {
            sqlite3_finalize(stmt);
            unprepared++;
            continue;
        }
        sqlite3_finalize(stmt);
        sqlite3_set_authorizer(d.raw, NULL, NULL);

        t0 = cpu_ms();
        if (link_schema(d.s, q, NULL, 0, &o, &r) != ASKDB_OK)
            die("%s", "out of memory");
        link_ms += cpu_ms() - t0;
        sub = schema_render_subset(d.s, r.keep_table, r.keep_col);
        if (!sub)
            die("%s", "out of memory");

        for (j = 0; j < gd.n; j++) {
            int t = gd.t[j], c = gd.c[j];
            int kept = r.keep_table[t] && (c < 0 || r.keep_col[t][c]);
            if (c < 0) {
                nt++;
                kt += kept;
                all_t &= kept;
            } else {
                nc++;
                kc += kept;
                all_c &= kept;
            }
        }
        for (g = 0; g < NGROUPS; g++) {
            struct stats *x = &st[g];
            if ((g == G_PRUNED && r.whole) ||
                (g == G_LARGE && d.s->ntables < 8))
                continue;
            x->items++;
            x->whole += r.whole;
            x->tbl_all += all_t;
            x->tbl_gold += nt;
            x->tbl_kept += kt;
            x->col_all += all_c;
            x->col_gold += nc;
            x->col_kept += kc;
            x->full_bytes += (double)d.full_len;
            x->kept_bytes += (double)strlen(sub);
        }
        if (!all_t && shown < show) {
            shown++;
            printf("miss %s: %s\n  gold:", id, q);
            for (j = 0; j < gd.n; j++)
                if (gd.c[j] < 0)
                    printf(" %s%s", d.s->tables[gd.t[j]].name,
                           r.keep_table[gd.t[j]] ? "" : "(dropped)");
            printf("\n  kept:");
            for (j = 0; j < d.s->ntables; j++)
                if (r.keep_table[j])
                    printf(" %s(%.2f)", d.s->tables[j].name,
                           r.table_score[j]);
            printf("\n");
        }
        free(sub);
        link_result_free(&r);
    }
    db_close_state(&d);
    suite_free(&suite);

    printf("link_recall: %s, %ld items%s (%ld gold queries not prepared, "
           "skipped)\n",
           spider, st[G_ALL].items,
           min_tables ? " on databases of enough tables" : "", unprepared);
    printf("options: whole if <= %d tables or <= %d bytes, max %d tables, "
           "wide > %d columns, min_rel %.2f; samples %s; link_schema "
           "%.3f ms/item (CPU)\n",
           o.keep_whole_tables, o.keep_whole_bytes, o.max_tables,
           o.wide_table_cols, o.min_rel, samples ? "on" : "off",
           st[G_ALL].items ? link_ms / (double)st[G_ALL].items : 0);
    printf("%-12s %6s %7s %7s %7s %7s %7s %8s %8s %7s %7s\n", "items",
           "n", "whole", "tbl all", "tbl mic", "col all", "col mic",
           "schema B", "kept B", "saved", "~tok");
    for (g = 0; g < NGROUPS; g++)
        print_row(group_name[g], &st[g]);
    printf("(~tok = mean prompt tokens saved per question, estimated as "
           "bytes / %.1f)\n", TOKEN_BYTES);
    return 0;
}
