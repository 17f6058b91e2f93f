/* grammar_accept.c - does the SQL grammar admit Spider's gold queries, and
** refuse them once a column is renamed? Checked with llama.cpp's own
** grammar engine.
**
**   grammar_accept --model GGUF [--spider DIR] [--limit N] [--db ID]
**                  [--show N] [--mutate N] [--dump DB_ID]
**   grammar_accept --model GGUF --schema DB_FILE
**
** For each gold query of DIR/train.json (DIR defaults to $SPIDER_DIR, else
** ../shared/bench/spider-train) it builds sqlx_grammar() for the query's
** own database, wraps the query as the model must write it
** ("```sql\n" query "\n```"), tokenizes it with the model's vocabulary
** (loaded with vocab_only, no weights) and feeds it token by token: each
** token goes alone into llama_sampler_apply(), and is refused when its
** logit comes back -INFINITY; else llama_sampler_accept(). At the end the
** end-of-generation token must be allowed too. The model file defaults to
** $ASKDB_SMALL_MODEL. The gold text is used as it is, odd spacing and
** double-quoted string literals included: no normalisation.
**
** Reports: acceptance rate, failures per database, the first --show (30)
** refused queries with a caret at the character where the grammar refused
** them, and grammar size, generation and parse time per database (the
** largest one in full). Then the rejection check: for --mutate (500)
** accepted queries spread over the file, every occurrence of a real column
** name is in turn renamed to name_zz and the grammar must refuse the
** result; the rate is reported by the clause the name was in.
** --schema measures one database file instead: grammar size, generation and
** parse time, and the cost of one sampling step over the whole vocabulary
** at a few positions (the grammar's share of the time per token when it
** filters every candidate), in CPU time.
** Exit status: 0 when acceptance >= 99%, 1 otherwise, 2 on usage errors.
** Measured (2 vCPU, SmolLM2 vocabulary, --mutate 1000): 6,901 of 6,901
** accepted in about 50 s; 3,475 of 3,475 renamed columns refused.
*/
#define _POSIX_C_SOURCE 200809L

#include <askdb.h>
#include <llama.h>

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "db/db.h"
#include "eval/suite.h"
#include "sql/extract.h"
#include "sql/grammar.h"

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
                                                     noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "grammar_accept: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p)
        die("%s", "out of memory");
    return p;
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of this thread: unlike the wall clock it does not grow while
** other processes hold the CPUs (the machine is shared). */
static double cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void quiet_log(enum ggml_log_level level, const char *text, void *ud)
{
    (void)ud;
    if (level == GGML_LOG_LEVEL_ERROR)
        fputs(text, stderr);
}

/* ---- the grammar engine ------------------------------------------------ */

struct checker {
    const struct llama_vocab *vocab;
    struct llama_sampler *smpl;
    llama_token *toks;
    int ntoks_max;
};

enum { ACCEPTED, REFUSED, UNFINISHED };

/* Feed reply to the grammar from its start state. Returns ACCEPTED,
** REFUSED (*at = byte offset of the refused token) or UNFINISHED (every
** token fit but the grammar does not allow stopping there). */
static int check_reply(struct checker *c, const char *reply, size_t *at)
{
    int n, i;
    size_t off = 0;
    char piece[256];
    llama_token_data td;
    llama_token_data_array arr;
    int len;

    llama_sampler_reset(c->smpl);
    n = llama_tokenize(c->vocab, reply, (int32_t)strlen(reply), c->toks,
                       c->ntoks_max, false, false);
    if (n < 0)
        die("reply too long to tokenize (%d tokens)", -n);
    for (i = 0; i <= n; i++) {
        td.id = i < n ? c->toks[i] : llama_vocab_eos(c->vocab);
        td.logit = 0.0f;
        td.p = 0.0f;
        arr.data = &td;
        arr.size = 1;
        arr.selected = -1;
        arr.sorted = false;
        llama_sampler_apply(c->smpl, &arr);
        if (isinf(td.logit) && td.logit < 0) {
            *at = off;
            return i < n ? REFUSED : UNFINISHED;
        }
        if (i == n)
            break;
        llama_sampler_accept(c->smpl, td.id);
        len = llama_token_to_piece(c->vocab, td.id, piece,
                                   (int32_t)sizeof piece, 0, false);
        off += len > 0 ? (size_t)len : 0;
    }
    *at = off;
    return ACCEPTED;
}

/* ---- Spider ------------------------------------------------------------- */

static int is_column(const struct db_schema *s, const char *name)
{
    int i;

    for (i = 0; i < s->ntables; i++)
        if (schema_column(&s->tables[i], name))
            return 1;
    return 0;
}

/* Unquote a "..." / `...` / [...] token of length n into out (size cap). */
static void unquote(const char *p, size_t n, char *out, size_t cap)
{
    char close = p[0] == '[' ? ']' : p[0];
    size_t i, o = 0;

    for (i = 1; i + 1 < n && o + 1 < cap; i++) {
        out[o++] = p[i];
        if (p[i] == close && p[i + 1] == close && close != ']')
            i++;
    }
    out[o] = '\0';
}

static char *wrap(const char *sql)
{
    size_t n = strlen(sql) + 16;
    char *r = xmalloc(n);

    snprintf(r, n, "```sql\n%s\n```", sql);
    return r;
}

/* Clause a token at offset `at` of sql belongs to, for the mutation
** report: the last clause word before it, or "alias" right after AS. */
static const char *clause_at(const char *sql, size_t at)
{
    static const char *const words[] = {
        "select", "from", "join", "where", "on", "using", "group", "having",
        "order", "limit", NULL
    };
    const char *p = sql, *last = "select", *prev = NULL;
    size_t n, prevn = 0;
    int kind, i;

    while ((size_t)(p - sql) < at && (n = sqlx_token(p, &kind)) > 0) {
        if (kind == SQLX_WORD) {
            for (i = 0; words[i]; i++)
                if (strlen(words[i]) == n && !strncasecmp(p, words[i], n))
                    last = words[i];
        }
        if (kind != SQLX_SPACE && kind != SQLX_COMMENT) {
            prev = p;
            prevn = n;
        }
        p += n;
    }
    if (prev && prevn == 2 && !strncasecmp(prev, "as", 2))
        return "alias";
    if (!strcmp(last, "join"))
        return "from";
    return last;
}

struct mstat {
    const char *clause;
    long tried, refused;
};

static struct mstat mstats[] = {
    {"select", 0, 0}, {"from", 0, 0}, {"where", 0, 0}, {"on", 0, 0},
    {"using", 0, 0}, {"group", 0, 0}, {"having", 0, 0}, {"order", 0, 0},
    {"limit", 0, 0}, {"alias", 0, 0}, {NULL, 0, 0}
};

/* Rename each real column name of sql in turn (name -> name_zz) and count
** how often the grammar refuses the result. Prints the first few that
** pass. */
static void mutate(struct checker *c, const struct db_schema *s,
                   const char *sql, int *shown)
{
    const char *p = sql;
    size_t n, at, len = strlen(sql);
    int kind, i, r;
    char name[1024];

    while ((n = sqlx_token(p, &kind)) > 0) {
        int quoted = kind == SQLX_IDENT;

        if (kind == SQLX_WORD || quoted) {
            if (quoted)
                unquote(p, n, name, sizeof name);
            else
                snprintf(name, sizeof name, "%.*s", (int)n, p);
            /* A word that is also a table name could be either. */
            if (is_column(s, name) && !schema_table(s, name)) {
                size_t cut = (size_t)(p - sql) + (quoted ? n - 1 : n);
                char *m = xmalloc(len + 8), *w;
                const char *cl = clause_at(sql, (size_t)(p - sql));

                memcpy(m, sql, cut);
                memcpy(m + cut, "_zz", 3);
                memcpy(m + cut + 3, sql + cut, len - cut + 1);
                w = wrap(m);
                r = check_reply(c, w, &at);
                for (i = 0; mstats[i].clause; i++)
                    if (!strcmp(mstats[i].clause, cl))
                        break;
                if (mstats[i].clause) {
                    mstats[i].tried++;
                    mstats[i].refused += r != ACCEPTED;
                }
                if (r == ACCEPTED && (*shown)++ < 10)
                    printf("  passes (%s): %s\n", cl, m);
                free(w);
                free(m);
            }
        }
        p += n;
    }
}

static askdb_db *open_db(const char *path, const struct db_schema **s)
{
    askdb_config cfg = askdb_config_default();
    askdb_db *db = NULL;

    cfg.sample_values = 0;
    if (askdb_db_open(path, &cfg, &db) != ASKDB_OK)
        die("cannot open %s: %s", path, askdb_db_errmsg(db));
    if (db_schema(db, s) != ASKDB_OK)
        die("cannot read the schema of %s: %s", path, db->errmsg);
    return db;
}

static int count_rules(const char *g)
{
    int n = 0;
    const char *p;

    for (p = g; (p = strstr(p, " ::=")) != NULL; p += 4)
        n++;
    return n;
}

/* ---- --schema: cost of one database's grammar ---------------------------- */

static void measure_schema(const struct llama_vocab *vocab, const char *path)
{
    const struct db_schema *s;
    askdb_db *db = open_db(path, &s);
    double t0, t_gen, t_parse;
    char *g, prefix[1024];
    struct llama_sampler *smpl;
    int nv = llama_vocab_n_tokens(vocab), i, j, ncols = 0;
    llama_token_data *td = xmalloc((size_t)nv * sizeof *td);
    llama_token toks[512];
    const char *tname = s->ntables ? s->tables[0].name : "t";
    const char *cname = s->ntables && s->tables[0].ncols
                            ? s->tables[0].cols[0].name : "x";

    for (i = 0; i < s->ntables; i++)
        ncols += s->tables[i].ncols;
    t0 = cpu_ms();
    g = sqlx_grammar(s);
    t_gen = cpu_ms() - t0;
    if (!g)
        die("%s", "sqlx_grammar: out of memory");
    t0 = cpu_ms();
    smpl = llama_sampler_init_grammar(vocab, g, "root");
    t_parse = cpu_ms() - t0;
    if (!smpl)
        die("llama.cpp refused the grammar of %s", path);
    printf("%s: %d tables, %d columns; grammar %zu bytes, %d rules; "
           "generated in %.1f ms, parsed by llama.cpp in %.1f ms (CPU)\n",
           path, s->ntables, ncols, strlen(g), count_rules(g), t_gen,
           t_parse);

    for (j = 0; j < 5; j++) {
        int n, k, runs = 5;
        double best = 1e9, best1 = 1e9;
        size_t allowed = 0;

        /* the start, a select list, a table, a WHERE operand, a column */
        if (j == 0)
            snprintf(prefix, sizeof prefix, "```sql\n");
        else if (j == 1)
            snprintf(prefix, sizeof prefix, "```sql\nSELECT ");
        else if (j == 2)
            snprintf(prefix, sizeof prefix, "```sql\nSELECT * FROM ");
        else if (j == 3)
            snprintf(prefix, sizeof prefix,
                     "```sql\nSELECT * FROM \"%s\" WHERE ", tname);
        else
            snprintf(prefix, sizeof prefix, "```sql\nSELECT \"%s\"",
                     cname);
        for (k = 0; k < runs; k++) {
            llama_token_data_array arr;

            llama_sampler_reset(smpl);
            n = llama_tokenize(vocab, prefix, (int32_t)strlen(prefix), toks,
                               512, false, false);
            for (i = 0; i < n; i++)
                llama_sampler_accept(smpl, toks[i]);
            for (i = 0; i < nv; i++) {
                td[i].id = i;
                td[i].logit = 0.0f;
                td[i].p = 0.0f;
            }
            arr.data = td;
            arr.size = (size_t)nv;
            arr.selected = -1;
            arr.sorted = false;
            t0 = cpu_ms();
            llama_sampler_apply(smpl, &arr);
            t0 = cpu_ms() - t0;
            if (t0 < best)
                best = t0;
            allowed = 0;
            for (i = 0; i < nv; i++)
                allowed += !isinf(td[i].logit);
            /* What a sampler that asks only about its pick pays: one
            ** allowed token alone. */
            for (i = 0; i < nv && isinf(td[i].logit); i++)
                ;
            td[0].id = i < nv ? i : 0;
            td[0].logit = 0.0f;
            arr.size = 1;
            t0 = cpu_ms();
            llama_sampler_apply(smpl, &arr);
            t0 = cpu_ms() - t0;
            if (t0 < best1)
                best1 = t0;
        }
        printf("  after \"%s\": all %d tokens %.1f ms CPU (%zu allowed), "
               "one token %.3f ms\n", prefix + 7, nv, best, allowed, best1);
    }
    llama_sampler_free(smpl);
    free(g);
    free(td);
    askdb_db_close(db);
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *spider = getenv("SPIDER_DIR");
    const char *model = getenv("ASKDB_SMALL_MODEL");
    const char *only = NULL, *dump = NULL, *schema_path = NULL;
    long limit = -1, show = 30, nmut = 500;
    int i, j, nitems, shown = 0, mshown = 0;
    char path[4096], err[512];
    struct suite suite;
    const struct suite_item *items;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!v)
            die("%s needs a value (see the comment at the top of "
                "bench/grammar_accept.c)", a);
        if (!strcmp(a, "--spider"))
            spider = v;
        else if (!strcmp(a, "--model"))
            model = v;
        else if (!strcmp(a, "--limit"))
            limit = strtol(v, NULL, 10);
        else if (!strcmp(a, "--show"))
            show = strtol(v, NULL, 10);
        else if (!strcmp(a, "--mutate"))
            nmut = strtol(v, NULL, 10);
        else if (!strcmp(a, "--db"))
            only = v;
        else if (!strcmp(a, "--dump"))
            dump = v;
        else if (!strcmp(a, "--schema"))
            schema_path = v;
        else
            die("unknown option %s", a);
        i++;
    }
    if (!spider)
        spider = "../shared/bench/spider-train";

    if (dump) {
        const struct db_schema *s;
        askdb_db *db;
        char *g;

        snprintf(path, sizeof path, "%s/database/%s/%s.sqlite", spider, dump,
                 dump);
        db = open_db(path, &s);
        g = sqlx_grammar(s);
        fputs(g, stdout);
        free(g);
        askdb_db_close(db);
        return 0;
    }
    if (!model)
        die("%s", "no model: pass --model GGUF or set ASKDB_SMALL_MODEL "
                  "(scripts/models.sh --path small)");

    llama_log_set(quiet_log, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    struct llama_model *lm = llama_model_load_from_file(model, mp);
    if (!lm)
        die("cannot load the vocabulary of %s", model);
    const struct llama_vocab *vocab = llama_model_get_vocab(lm);

    if (schema_path) {
        measure_schema(vocab, schema_path);
        llama_model_free(lm);
        llama_backend_free();
        return 0;
    }

    if (suite_load_spider(spider, &suite, err, sizeof err) != ASKDB_OK)
        die("%s", err);
    if (suite.n > INT_MAX)
        die("%s/train.json: too many entries", spider);
    items = suite.items;
    nitems = suite.n > 0 ? (int)suite.n : 0;
    for (i = 0; i < nitems; i++)
        if (items[i].malformed)
            die("%s/train.json: entry %d: %s", spider, i, items[i].malformed);
    if (limit >= 0 && limit < nitems)
        nitems = (int)limit;

    struct checker c = {vocab, NULL, NULL, 8192};
    c.toks = xmalloc((size_t)c.ntoks_max * sizeof *c.toks);
    int *done = calloc((size_t)nitems, sizeof *done);
    int *ok = calloc((size_t)nitems, sizeof *ok);
    long total = 0, accepted = 0, unfinished = 0;
    double t_start = now_ms(), max_parse = 0, max_gen = 0;
    size_t max_bytes = 0;
    const char *max_db = "";
    int max_rules = 0, ndbs = 0;

    printf("== acceptance of gold queries\n");
    for (i = 0; i < nitems; i++) {
        const struct db_schema *s;
        askdb_db *db;
        char *g;
        double t0, tg, tp;
        long dbn = 0, dbok = 0;

        if (done[i] || (only && strcmp(items[i].db_id, only)))
            continue;
        db = open_db(items[i].db_path, &s);
        t0 = now_ms();
        g = sqlx_grammar(s);
        tg = now_ms() - t0;
        if (!g)
            die("%s", "sqlx_grammar: out of memory");
        t0 = now_ms();
        c.smpl = llama_sampler_init_grammar(vocab, g, "root");
        tp = now_ms() - t0;
        if (!c.smpl)
            die("llama.cpp refused the grammar of %s", items[i].db_id);
        ndbs++;
        if (strlen(g) > max_bytes) {
            max_bytes = strlen(g);
            max_db = items[i].db_id;
            max_rules = count_rules(g);
            max_gen = tg;
            max_parse = tp;
        }
        for (j = i; j < nitems; j++) {
            const char *q = items[j].gold;
            char *w;
            size_t at;
            int r;

            if (done[j] || strcmp(items[j].db_id, items[i].db_id))
                continue;
            done[j] = 1;
            w = wrap(q);
            r = check_reply(&c, w, &at);
            total++;
            dbn++;
            if (r == ACCEPTED) {
                accepted++;
                dbok++;
                ok[j] = 1;
            } else {
                unfinished += r == UNFINISHED;
                if (shown++ < show) {
                    size_t off = at >= 7 ? at - 7 : 0;

                    printf("[%s #%d] %s at byte %zu:\n  %s\n  %*s^\n",
                           items[j].db_id, j,
                           r == REFUSED ? "refused" : "cannot end", off, q,
                           (int)off, "");
                }
            }
            free(w);
        }
        if (dbok < dbn)
            printf("  db %s: %ld of %ld refused\n", items[i].db_id,
                   dbn - dbok, dbn);
        llama_sampler_free(c.smpl);
        free(g);
        askdb_db_close(db);
    }
    printf("accepted %ld of %ld (%.2f%%), %ld of the refusals at the end; "
           "%d databases; %.1f s\n",
           accepted, total, total ? 100.0 * accepted / total : 0.0,
           unfinished, ndbs, (now_ms() - t_start) / 1e3);
    printf("largest grammar: %s, %zu bytes, %d rules, generated in %.2f ms, "
           "parsed by llama.cpp in %.2f ms\n", max_db, max_bytes, max_rules,
           max_gen, max_parse);

    if (nmut > 0 && accepted > 0) {
        long step = accepted / nmut > 0 ? accepted / nmut : 1, seen = 0, k;
        long tried = 0, refused = 0;

        printf("== rejection of renamed columns (name -> name_zz), every "
               "column occurrence of %ld accepted queries\n",
               nmut < accepted ? nmut : accepted);
        for (i = 0; i < nitems; i++) {
            const struct db_schema *s;
            askdb_db *db;
            char *g;

            if (!ok[i] || seen++ % step || seen / step > nmut)
                continue;
            db = open_db(items[i].db_path, &s);
            g = sqlx_grammar(s);
            c.smpl = llama_sampler_init_grammar(vocab, g, "root");
            if (!c.smpl)
                die("llama.cpp refused the grammar of %s", items[i].db_id);
            mutate(&c, s, items[i].gold, &mshown);
            llama_sampler_free(c.smpl);
            free(g);
            askdb_db_close(db);
        }
        for (k = 0; mstats[k].clause; k++) {
            tried += mstats[k].tried;
            refused += mstats[k].refused;
            if (mstats[k].tried)
                printf("  %-7s %5ld renamed, %5ld refused (%.1f%%)\n",
                       mstats[k].clause, mstats[k].tried, mstats[k].refused,
                       100.0 * mstats[k].refused / mstats[k].tried);
        }
        printf("refused %ld of %ld renamed columns (%.2f%%)\n", refused,
               tried, tried ? 100.0 * refused / tried : 0.0);
    }

    free(c.toks);
    free(done);
    free(ok);
    suite_free(&suite);
    llama_model_free(lm);
    llama_backend_free();
    return total && accepted * 100 >= total * 99 ? 0 : 1;
}
