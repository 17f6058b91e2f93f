/* check_false_alarms.c - how often each check of src/agent/check.c fires
** on Spider's gold queries (right by definition), and on gold queries
** broken on purpose.
**
**   check_false_alarms [--spider DIR] [--from K] [--limit N] [-v]
**
** For items K .. K+N-1 of DIR/train.json (DIR defaults to $SPIDER_DIR, else
** ../shared/bench/spider-train; K 0, N 1000) it opens the item's database
** read-only, runs check_before() on the gold query, runs the gold query
** through the guard (db_run) and check_after() on its rows. A check that
** fires on a gold query is a false alarm. Prints how much of the gold the
** analysis reads, then per kind the number of gold queries it fired on
** and the rate; -v prints each alarm with the question, the query and the
** hint, and each broken query a check missed.
**
** Then detection: each gold query is broken in three ways where it
** applies, and check_before() runs on the result when the engine still
** accepts it (db_check): the first text literal ('x', or "x" after =)
** with its case flipped ('Paris' -> 'PARIS'; expects literal_missing), the first ON clause dropped (expects
** cross_join), GROUP BY dropped from a query without HAVING (expects
** agg_no_group), and in col IN (SELECT x FROM ...) or col = (SELECT x
** FROM ...) the subquery's one column x written as col's own name, bare
** (expects outer_ref when the subquery's tables lack it: the model's
** shop_id NOT IN (SELECT shop_id FROM members)). Some mutants are harmless (a literal compared with
** LIKE, a GROUP BY over a key of a one-row result), so the detection rates
** are lower bounds.
**
** The databases of the validation split (bench/validation_dbs.txt, read
** from --validation FILE, default that file relative to the working
** directory) are skipped: no threshold may be set on them.
**
** Exit status: 0 when every kind fires on less than 2% of the gold
** queries, 1 otherwise, 2 on usage errors.
**
** Build by hand (the Makefile does not know it), after make
** build/libaskdb.a:
**   cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc \
**     $(pkg-config --cflags jansson sqlite3) bench/check_false_alarms.c \
**     -o build/check_false_alarms build/libaskdb.a \
**     $(pkg-config --libs sqlite3 jansson) -lm
*/
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/check.h"
#include "askdb.h"
#include "core/buf.h"
#include "db/db.h"
#include "eval/suite.h"
#include "sql/analyze.h"
#include "sql/extract.h"

enum { MUT_LITERAL, MUT_DROP_ON, MUT_DROP_GROUP, MUT_OUTER, NMUT };

static const char *const mut_name[NMUT] = {
    "literal case flipped", "ON clause dropped", "GROUP BY dropped",
    "subquery col = outer"
};
static const enum check_kind mut_expect[NMUT] = {
    CHECK_LITERAL_MISSING, CHECK_CROSS_JOIN, CHECK_AGG_NO_GROUP,
    CHECK_OUTER_REF
};

struct stats {
    long ran, noopen, noexec, readable, unreadable;
    long joins, with_joins, lits, with_lits;
    long fired[CHECK_NKINDS];
    long mut_tried[NMUT], mut_fired[NMUT];
};

static void usage(void)
{
    fprintf(stderr, "usage: check_false_alarms [--spider DIR] [--from K] "
                    "[--limit N] [--validation FILE] [-v]\n");
    exit(2);
}

static void nomem(void)
{
    fprintf(stderr, "check_false_alarms: out of memory\n");
    exit(2);
}

/* The db_ids of the validation split, one a line ('#' comments), as one
** string "\nid1\nid2\n...\n" for lookups; exits when it cannot be read. */
static char *held_out(const char *path)
{
    char line[512];
    struct buf b;
    FILE *f = fopen(path, "r");
    size_t n;

    if (!f) {
        fprintf(stderr, "check_false_alarms: %s: cannot read the validation "
                        "split (--validation FILE)\n", path);
        exit(2);
    }
    buf_init(&b, 0);
    buf_putc(&b, '\n');
    while (fgets(line, sizeof line, f)) {
        n = strcspn(line, "\r\n");
        line[n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        buf_puts(&b, line);
        buf_putc(&b, '\n');
    }
    fclose(f);
    if (buf_err(&b))
        nomem();
    return buf_steal(&b);
}

static int is_held_out(const char *split, const char *id)
{
    char key[520];

    snprintf(key, sizeof key, "\n%s\n", id);
    return strstr(split, key) != NULL;
}

static long num(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (*end || v < 0)
        usage();
    return v;
}

static int word_is(const char *p, size_t n, const char *w)
{
    return strlen(w) == n && strncasecmp(p, w, n) == 0;
}

static int word_in(const char *p, size_t n, const char *const *list)
{
    int k;

    for (k = 0; list[k]; k++)
        if (word_is(p, n, list[k]))
            return 1;
    return 0;
}

/* A token that may be a name. */
static int is_name_tok(int kind)
{
    return kind == SQLX_WORD || kind == SQLX_IDENT;
}

/*
** MUT_OUTER: the first col IN (SELECT x FROM ...) or col = (SELECT x
** FROM ...), col and x each a name or name.name, with x replaced by col's
** last name, bare. NULL when there is none.
*/
static char *mutate_outer(const char *sql)
{
    const char *tp[512];
    size_t tl[512];
    int tk[512], nt = 0, kind, i, j, c, s0;
    const char *p;
    size_t n;
    struct buf b;

    for (p = sql; (n = sqlx_token(p, &kind)) > 0 && nt < 512; p += n) {
        if (kind == SQLX_SPACE || kind == SQLX_COMMENT)
            continue;
        tp[nt] = p;
        tl[nt] = n;
        tk[nt++] = kind;
    }
    for (i = 1; i + 4 < nt; i++) {
        if (!(word_is(tp[i], tl[i], "in") ||
              (tk[i] == SQLX_PUNCT && *tp[i] == '=')) ||
            !(tk[i + 1] == SQLX_PUNCT && *tp[i + 1] == '(') ||
            !word_is(tp[i + 2], tl[i + 2], "select"))
            continue;
        c = i - 1 - (i >= 2 && word_is(tp[i - 1], tl[i - 1], "not"));
        if (c < 0 || !is_name_tok(tk[c]))
            continue;
        j = i + 3;
        if (word_is(tp[j], tl[j], "distinct"))
            j++;
        if (j + 1 >= nt || !is_name_tok(tk[j]))
            continue;
        if (j + 3 < nt && tk[j + 1] == SQLX_PUNCT && *tp[j + 1] == '.' &&
            is_name_tok(tk[j + 2]))
            j += 2;
        if (!word_is(tp[j + 1], tl[j + 1], "from"))
            continue;
        /* x (tokens s0 .. j) becomes col's last name: not when that is
        ** what x is already. */
        s0 = word_is(tp[i + 3], tl[i + 3], "distinct") ? i + 4 : i + 3;
        if (s0 == j && tl[j] == tl[c] &&
            strncasecmp(tp[j], tp[c], tl[c]) == 0)
            continue;
        buf_init(&b, 0);
        buf_append(&b, sql, (size_t)(tp[s0] - sql));
        buf_append(&b, tp[c], tl[c]);
        buf_puts(&b, tp[j] + tl[j]);
        return buf_steal(&b);
    }
    return NULL;
}

/*
** sql broken as mutation m asks, malloc()ed, or NULL when it does not
** apply. Works on tokens so that strings and names stay whole.
*/
static char *mutate(const char *sql, int m)
{
    static const char *const end_on[] = {
        "join", "left", "inner", "cross", "natural", "where", "group",
        "order", "limit", "union", "intersect", "except", NULL
    };
    static const char *const end_group[] = {
        "order", "limit", "union", "intersect", "except", NULL
    };
    const char *p = sql, *cut = NULL, *resume = NULL;
    int kind, depth = 0, seen_join = 0, after_eq = 0;
    size_t n, k;
    struct buf b;

    if (m == MUT_OUTER)
        return mutate_outer(sql);
    for (; (n = sqlx_token(p, &kind)) > 0; p += n) {
        if (kind == SQLX_PUNCT && *p == '(')
            depth++;
        if (kind == SQLX_PUNCT && *p == ')') {
            if (cut && depth == 0)
                break;
            depth--;
        }
        if (m == MUT_LITERAL && !cut &&
            (kind == SQLX_STRING || (kind == SQLX_IDENT && *p == '"' &&
                                     after_eq))) {
            for (k = 1; k + 1 < n && !isalpha((unsigned char)p[k]); k++)
                ;
            if (k + 1 < n) {
                cut = p;
                resume = p + n;
                break;
            }
        }
        if (kind != SQLX_SPACE && kind != SQLX_COMMENT)
            after_eq = kind == SQLX_PUNCT && *p == '=';
        if (kind != SQLX_WORD)
            continue;
        if (m == MUT_DROP_ON) {
            if (word_is(p, n, "join"))
                seen_join = 1;
            if (!cut && seen_join && word_is(p, n, "on")) {
                cut = p;
                depth = 0;
            } else if (cut && depth == 0 && word_in(p, n, end_on)) {
                break;
            }
        } else if (m == MUT_DROP_GROUP) {
            if (!cut && word_is(p, n, "group")) {
                cut = p;
                depth = 0;
            } else if (cut && depth == 0 && word_is(p, n, "having")) {
                return NULL;
            } else if (cut && depth == 0 && word_in(p, n, end_group)) {
                break;
            }
        }
    }
    if (!cut)
        return NULL;
    if (!resume)
        resume = p;
    buf_init(&b, 0);
    buf_append(&b, sql, (size_t)(cut - sql));
    if (m == MUT_LITERAL) {
        int lower = 0;
        for (p = cut; p < resume; p++)
            if (islower((unsigned char)*p))
                lower = 1;
        for (p = cut; p < resume; p++)
            buf_putc(&b, (char)(lower ? toupper((unsigned char)*p)
                                      : tolower((unsigned char)*p)));
    } else {
        buf_putc(&b, ' ');
    }
    buf_puts(&b, resume);
    return buf_steal(&b);
}

/* Check one gold query and its mutants; count into st. */
static void one(askdb_db *db, const struct db_schema *s, long item,
                const char *q, const char *sql, int verbose,
                struct stats *st)
{
    struct check_finding *f = NULL, *g = NULL;
    int nf = 0, ng = 0, k, m, seen[CHECK_NKINDS] = {0};
    askdb_result *r = NULL;
    struct db_err e;
    struct sqla an;
    int rc;

    st->ran++;
    rc = sqla_analyze(sql, s, &an);
    if (rc < 0)
        nomem();
    if (rc == 0)
        st->readable++;
    else
        st->unreadable++;
    if (rc == 1 && verbose)
        printf("[%ld] not readable: %s\n\n", item, sql);
    st->joins += an.njoins;
    st->with_joins += an.njoins > 0;
    st->lits += an.nlits;
    st->with_lits += an.nlits > 0;
    sqla_free(&an);

    if (check_before(db, s, NULL, q, sql, &f, &nf))
        nomem();
    if (db_run(db, sql, &r, &e) == ASKDB_OK) {
        if (check_after(q, sql, r, &g, &ng))
            nomem();
        askdb_result_free(r);
    } else {
        st->noexec++;
    }
    for (k = 0; k < nf + ng; k++) {
        const struct check_finding *x = k < nf ? &f[k] : &g[k - nf];
        if (!seen[x->kind])
            st->fired[x->kind]++;
        seen[x->kind] = 1;
        if (verbose)
            printf("[%ld] %s (%s)\n  Q: %s\n  SQL: %s\n  %s\n\n", item,
                   check_kind_str(x->kind), k < nf ? "before" : "after", q,
                   sql, x->hint);
    }
    check_findings_free(f, nf);
    check_findings_free(g, ng);

    for (m = 0; m < NMUT; m++) {
        char *bad = mutate(sql, m);
        if (!bad)
            continue;
        if (db_check(db, bad, &e) == ASKDB_OK) {
            st->mut_tried[m]++;
            if (check_before(db, s, NULL, q, bad, &f, &nf))
                nomem();
            for (k = 0; k < nf; k++)
                if (f[k].kind == mut_expect[m])
                    break;
            st->mut_fired[m] += k < nf;
            if (k == nf && verbose)
                printf("[%ld] missed (%s): %s\n\n", item, mut_name[m], bad);
            check_findings_free(f, nf);
        }
        free(bad);
    }
}

int main(int argc, char **argv)
{
    const char *dir = getenv("SPIDER_DIR");
    const char *vpath = "bench/validation_dbs.txt";
    char *split;
    long from = 0, limit = 1000, i, n, skipped = 0;
    int verbose = 0, a, k, bad = 0;
    char err[512], cur[512] = "";
    askdb_db *db = NULL;
    const struct db_schema *s = NULL;
    struct stats st;
    struct suite suite;

    memset(&st, 0, sizeof st);
    if (!dir)
        dir = "../shared/bench/spider-train";
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--spider") == 0 && a + 1 < argc)
            dir = argv[++a];
        else if (strcmp(argv[a], "--from") == 0 && a + 1 < argc)
            from = num(argv[++a]);
        else if (strcmp(argv[a], "--limit") == 0 && a + 1 < argc)
            limit = num(argv[++a]);
        else if (strcmp(argv[a], "--validation") == 0 && a + 1 < argc)
            vpath = argv[++a];
        else if (strcmp(argv[a], "-v") == 0)
            verbose = 1;
        else
            usage();
    }
    split = held_out(vpath);
    if (suite_load_spider(dir, &suite, err, sizeof err) != ASKDB_OK) {
        fprintf(stderr, "check_false_alarms: %s\n", err);
        return 2;
    }
    n = suite.n;
    for (i = from; i < n && i < from + limit; i++) {
        const struct suite_item *it = &suite.items[i];
        const char *id = it->db_id, *q = it->question, *sql = it->gold;

        if (it->malformed)
            continue;
        if (is_held_out(split, id)) {
            skipped++;
            continue;
        }
        if (strcmp(id, cur) != 0) {
            askdb_db_close(db);
            db = NULL;
            snprintf(cur, sizeof cur, "%s", id);
            if (askdb_db_open(it->db_path, NULL, &db) ||
                db_schema(db, &s)) {
                fprintf(stderr, "check_false_alarms: %s: %s\n", it->db_path,
                        askdb_db_errmsg(db));
                askdb_db_close(db);
                db = NULL;
            }
        }
        if (!db) {
            st.noopen++;
            continue;
        }
        one(db, s, i, q, sql, verbose, &st);
    }
    askdb_db_close(db);
    suite_free(&suite);
    free(split);

    printf("gold queries checked: %ld (items %ld..%ld of %s/train.json); "
           "database not opened: %ld; gold did not run: %ld\n", st.ran,
           from, i - 1, dir, st.noopen, st.noexec);
    printf("validation split skipped: %ld items (%s)\n", skipped, vpath);
    printf("analysis: %ld readable, %ld not; joins %ld (in %ld queries), "
           "text comparisons %ld (in %ld queries)\n", st.readable,
           st.unreadable, st.joins, st.with_joins, st.lits, st.with_lits);
    printf("false alarms on gold:\n%-16s %6s %7s\n", "check", "fired",
           "rate");
    for (k = 0; k < CHECK_NKINDS; k++) {
        double rate = st.ran ? 100.0 * (double)st.fired[k] / (double)st.ran
                             : 0;
        printf("%-16s %6ld %6.2f%%\n", check_kind_str((enum check_kind)k),
               st.fired[k], rate);
        if (rate >= 2.0)
            bad = 1;
    }
    printf("detection on broken gold (lower bounds):\n");
    for (k = 0; k < NMUT; k++)
        printf("%-22s -> %-16s %5ld of %5ld  %6.2f%%\n", mut_name[k],
               check_kind_str(mut_expect[k]), st.mut_fired[k],
               st.mut_tried[k],
               st.mut_tried[k] ? 100.0 * (double)st.mut_fired[k] /
                                     (double)st.mut_tried[k]
                               : 0);
    return bad;
}
