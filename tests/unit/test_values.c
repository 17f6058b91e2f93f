/* test_values.c - the value index: build, cache, fallback, matching. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/values.h"
#include "core/buf.h"
#include "core/cache.h"
#include "db/db.h"

/* A fresh cache directory for one test: tmpdir/name. */
static void use_cache(const char *name)
{
    char p[400];

    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    assert_int_equal(setenv("ASKDB_CACHE_DIR", p, 1), 0);
}

static struct vindex *open_index(askdb_db *db, const struct vindex_opts *o,
                                 char *note, size_t n)
{
    struct vindex *vi = NULL;

    if (vindex_open(db, o, &vi, note, n) != 0)
        fail_msg("vindex_open: %s", note);
    assert_non_null(vi);
    return vi;
}

static const struct value_match *find(const struct value_match *m, int n,
                                      const char *table, const char *column,
                                      const char *value)
{
    int i;

    for (i = 0; i < n; i++)
        if (strcmp(m[i].table, table) == 0 &&
            strcmp(m[i].column, column) == 0 &&
            strcmp(m[i].value, value) == 0)
            return &m[i];
    return NULL;
}

static int has_value(const struct value_match *m, int n, const char *value)
{
    int i;

    for (i = 0; i < n; i++)
        if (strcmp(m[i].value, value) == 0)
            return 1;
    return 0;
}

/* The names in a directory, sorted, one a line. */
static void listing(const char *dir, struct buf *out)
{
    struct dirent **ents = NULL;
    int i, n = scandir(dir, &ents, NULL, alphasort);

    assert_true(n >= 0);
    buf_reset(out);
    for (i = 0; i < n; i++) {
        buf_printf(out, "%s\n", ents[i]->d_name);
        free(ents[i]);
    }
    free(ents);
}

/* Files in dir whose name ends with suffix. */
static int count_files(const char *dir, const char *suffix)
{
    struct dirent *e;
    DIR *d = opendir(dir);
    size_t ls = strlen(suffix), l;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        l = strlen(e->d_name);
        n += l > ls && strcmp(e->d_name + l - ls, suffix) == 0;
    }
    closedir(d);
    return n;
}

static void shop_city_found_despite_case_and_accents(void **state)
{
    askdb_db *db;
    struct vindex *vi;
    const struct vindex_stats *st;
    struct value_match *m = NULL;
    const struct value_match *x;
    char note[512], sum[33], path[600];
    struct stat sb;
    int n = 0;

    (void)state;
    use_cache("shop");
    db = testdb_open(testdb_shop(), NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    assert_string_equal(note, "");
    st = vindex_stats(vi);
    assert_int_equal(st->reused, 0);
    assert_int_equal(st->in_memory, 0);
    assert_int_equal(st->partial, 0);
    assert_true(st->values > 100);
    assert_true(st->db_queries > 0);
    assert_true(st->file_bytes > 0);
    assert_int_equal(
        cache_file_checksum(testdb_shop(), sum, note, sizeof note), 0);
    snprintf(path, sizeof path, "%s/shop/values/%s.fts", tmpdir, sum);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal((long)sb.st_size, st->file_bytes);

    assert_int_equal(vindex_match(vi, "How many customers live in "
                                      "DUSSELDORF or malmo?", 0, &m, &n), 0);
    x = find(m, n, "customers", "city", "Düsseldorf");
    assert_non_null(x);
    assert_string_equal(x->phrase, "DUSSELDORF");
    assert_int_equal(x->exact, 1);
    assert_int_equal(x->partial, 0);
    x = find(m, n, "customers", "city", "Malmö");
    assert_non_null(x);
    assert_string_equal(x->phrase, "malmo");
    assert_int_equal(x->exact, 1);
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);
}

static void views_are_not_indexed(void **state)
{
    askdb_db *db;
    struct vindex *vi;
    struct value_match *m = NULL;
    char note[512];
    int n = 0, i;

    (void)state;
    use_cache("shop");
    db = testdb_open(testdb_shop(), NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    /* customer_revenue.customer_name holds 'Oskar Nilsson'; the tables
    ** hold the two names apart. */
    assert_int_equal(vindex_match(vi, "Total spent by Oskar Nilsson", 0, &m,
                                  &n), 0);
    assert_non_null(find(m, n, "customers", "first_name", "Oskar"));
    assert_non_null(find(m, n, "customers", "last_name", "Nilsson"));
    for (i = 0; i < n; i++)
        assert_string_not_equal(m[i].table, "customer_revenue");
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);
}

static void short_codes_count_only_when_quoted(void **state)
{
    askdb_db *db;
    struct vindex *vi;
    struct value_match *m = NULL;
    const struct value_match *x;
    char note[512];
    int n = 0;

    (void)state;
    use_cache("shop");
    db = testdb_open(testdb_shop(), NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    assert_int_equal(vindex_match(vi, "Orders shipped to DE", 0, &m, &n), 0);
    x = find(m, n, "orders", "status", "shipped");
    assert_non_null(x);
    assert_int_equal(x->exact, 1);
    assert_int_equal(has_value(m, n, "DE"), 0);
    value_matches_free(m, n);

    assert_int_equal(vindex_match(vi, "Orders with shipping country 'DE'", 0,
                                  &m, &n), 0);
    x = find(m, n, "orders", "shipping_country", "DE");
    assert_non_null(x);
    assert_string_equal(x->phrase, "DE");
    assert_non_null(find(m, n, "customers", "country", "DE"));
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);
}

static void typo_found_as_close_spelling(void **state)
{
    askdb_db *db;
    struct vindex *vi;
    struct value_match *m = NULL;
    const struct value_match *x;
    char note[512];
    int n = 0;

    (void)state;
    use_cache("shop");
    db = testdb_open(testdb_shop(), NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    assert_int_equal(vindex_match(vi, "customers from Amsterdan", 0, &m, &n),
                     0);
    x = find(m, n, "customers", "city", "Amsterdam");
    assert_non_null(x);
    assert_string_equal(x->phrase, "Amsterdan");
    assert_int_equal(x->exact, 0);
    value_matches_free(m, n);

    /* Inflections are no typos: "customers" is not a misspelt value. */
    assert_int_equal(vindex_match(vi, "How many of them are there in 2024?",
                                  0, &m, &n), 0);
    assert_int_equal(n, 0);
    assert_null(m);
    vindex_free(vi);
    askdb_db_close(db);
}

static void spider_countries_exact_and_misspelt(void **state)
{
    char path[600], note[512];
    askdb_db *db;
    struct vindex *vi;
    struct value_match *m = NULL;
    const struct value_match *x;
    int n = 0;

    (void)state;
    testdb_spider("formula_1", path, sizeof path);
    use_cache("spider");
    db = testdb_open(path, NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    assert_int_equal(
        vindex_match(vi, "What are the ids and locations of all circuits in "
                         "France or Belgium?", 0, &m, &n), 0);
    x = find(m, n, "circuits", "country", "France");
    assert_non_null(x);
    assert_int_equal(x->exact, 1);
    assert_string_equal(x->phrase, "France");
    assert_non_null(find(m, n, "circuits", "country", "Belgium"));
    value_matches_free(m, n);

    assert_int_equal(vindex_match(vi, "circuits in Frnace", 0, &m, &n), 0);
    x = find(m, n, "circuits", "country", "France");
    assert_non_null(x);
    assert_int_equal(x->exact, 0);
    assert_string_equal(x->phrase, "Frnace");
    value_matches_free(m, n);

    assert_int_equal(vindex_match(vi, "races held in FRANCE", 0, &m, &n), 0);
    x = find(m, n, "circuits", "country", "France");
    assert_non_null(x);
    assert_int_equal(x->exact, 1);
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);
}

static void spider_accents_and_parts_of_values(void **state)
{
    char path[600], note[512];
    askdb_db *db;
    const struct db_schema *s;
    struct vindex *vi;
    struct value_match *m = NULL;
    const struct value_match *x;
    struct buf b;
    int n = 0;

    (void)state;
    testdb_spider("roller_coaster", path, sizeof path);
    use_cache("spider");
    db = testdb_open(path, NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    assert_int_equal(vindex_match(vi, "Which roller coasters are at grona "
                                      "lund?", 0, &m, &n), 0);
    x = find(m, n, "roller_coaster", "Park", "Gröna Lund");
    assert_non_null(x);
    assert_int_equal(x->exact, 1);
    assert_int_equal(x->partial, 0);
    assert_string_equal(x->phrase, "grona lund");
    value_matches_free(m, n);
    assert_int_equal(vindex_match(vi, "speed of coasters in Grona Lnud", 0,
                                  &m, &n), 0);
    x = find(m, n, "roller_coaster", "Park", "Gröna Lund");
    assert_non_null(x);
    assert_int_equal(x->exact, 0);
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);

    testdb_spider("perpetrator", path, sizeof path);
    db = testdb_open(path, NULL, &s);
    vi = open_index(db, NULL, note, sizeof note);
    assert_int_equal(vindex_match(vi, "How many people are from los angeles?",
                                  0, &m, &n), 0);
    x = find(m, n, "people", "Home Town", "Los Angeles, CA");
    assert_non_null(x);
    assert_int_equal(x->exact, 1);
    assert_int_equal(x->partial, 1);
    buf_init(&b, 0);
    values_render(&b, s, x, 1);
    assert_string_equal(b.data,
                        "Values the question mentions, as stored:\n"
                        "- people.\"Home Town\" = 'Los Angeles, CA' "
                        "(question: \"los angeles\", part of the value)\n");
    buf_free(&b);
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);
}

/* A word of a column name ("city") names the column, not a part of a
** value ('Paradise City'), nor does one lower-case word ("live" in
** 'Santana Live'); quotes, straight or curly, keep a phrase whole,
** misspelt or not. */
static void column_words_and_quoted_phrases(void **state)
{
    char path[600], note[512];
    askdb_db *db;
    struct vindex *vi;
    struct value_match *m = NULL;
    const struct value_match *x;
    int n = 0, i;

    (void)state;
    testdb_spider("chinook_1", path, sizeof path);
    use_cache("spider");
    db = testdb_open(path, NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    assert_int_equal(vindex_match(vi, "Find the birth dates corresponding to "
                                      "employees who live in the city of "
                                      "Edmonton.", 0, &m, &n), 0);
    assert_int_equal(n, 3);
    assert_non_null(find(m, n, "Customer", "City", "Edmonton"));
    assert_non_null(find(m, n, "Employee", "City", "Edmonton"));
    assert_non_null(find(m, n, "Invoice", "BillingCity", "Edmonton"));
    value_matches_free(m, n);

    assert_int_equal(vindex_match(vi, "albums of 'Led Zepelin'", 0, &m, &n),
                     0);
    assert_true(n >= 2);
    assert_string_equal(m[0].table, "Artist");
    assert_string_equal(m[0].value, "Led Zeppelin");
    assert_string_equal(m[0].phrase, "Led Zepelin");
    assert_int_equal(m[0].exact, 0);
    x = find(m, n, "Album", "Title", "Led Zeppelin II");
    assert_non_null(x);
    assert_int_equal(x->partial, 1);
    for (i = 1; i < n; i++)
        assert_true(m[i].score <= m[i - 1].score);
    value_matches_free(m, n);

    assert_int_equal(vindex_match(vi, "songs in the \u201cHeavy Metal\u201d "
                                      "genre", 0, &m, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(m[0].value, "Heavy Metal");
    assert_string_equal(m[0].phrase, "Heavy Metal");
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);
}

static void second_open_reuses_the_cache_file(void **state)
{
    askdb_db *db;
    struct vindex *vi;
    const struct vindex_stats *st;
    struct value_match *m = NULL;
    char note[512], sum[33], path[600];
    struct stat a, b;
    long values;
    int n = 0;

    (void)state;
    use_cache("reuse");
    db = testdb_open(testdb_shop(), NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    st = vindex_stats(vi);
    assert_int_equal(st->reused, 0);
    assert_true(st->db_queries > 0);
    values = st->values;
    vindex_free(vi);
    askdb_db_close(db);
    assert_int_equal(
        cache_file_checksum(testdb_shop(), sum, note, sizeof note), 0);
    snprintf(path, sizeof path, "%s/reuse/values/%s.fts", tmpdir, sum);
    assert_int_equal(stat(path, &a), 0);

    db = testdb_open(testdb_shop(), NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    st = vindex_stats(vi);
    assert_int_equal(st->reused, 1);
    assert_int_equal(st->db_queries, 0);
    assert_int_equal(st->values, values);
    assert_true(st->build_ms > 0);
    assert_int_equal(stat(path, &b), 0);
    assert_int_equal(a.st_ino, b.st_ino);
    assert_int_equal(a.st_mtime, b.st_mtime);
    /* Nothing else there: no temporary file left behind. */
    snprintf(path, sizeof path, "%s/reuse/values", tmpdir);
    assert_int_equal(count_files(path, ""), 3); /* ., .. and the index */
    assert_int_equal(vindex_match(vi, "buyers in Malmo", 0, &m, &n), 0);
    assert_non_null(find(m, n, "customers", "city", "Malmö"));
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);
}

static void changed_database_is_reindexed(void **state)
{
    askdb_db *db;
    struct vindex *vi;
    struct value_match *m = NULL;
    char note[512], dir[400], copy[450], vals[450];
    int n = 0;

    (void)state;
    use_cache("changed");
    snprintf(dir, sizeof dir, "%s/changed-db", tmpdir);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(copy, sizeof copy, "%s/shop.db", dir);
    assert_int_equal(file_copy(testdb_shop(), copy), 0);
    db = testdb_open(copy, NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    assert_int_equal(vindex_stats(vi)->reused, 0);
    vindex_free(vi);
    askdb_db_close(db);

    assert_int_equal(sqlfile_exec(copy, "UPDATE customers SET city = "
                                        "'Zürich' WHERE city = 'Stockholm'"),
                     0);
    db = testdb_open(copy, NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    assert_int_equal(vindex_stats(vi)->reused, 0);
    assert_true(vindex_stats(vi)->db_queries > 0);
    assert_int_equal(vindex_match(vi, "customers in zurich or stockholm", 0,
                                  &m, &n), 0);
    assert_non_null(find(m, n, "customers", "city", "Zürich"));
    assert_int_equal(has_value(m, n, "Stockholm"), 0);
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);
    /* One index per content of the database. */
    snprintf(vals, sizeof vals, "%s/changed/values", tmpdir);
    assert_int_equal(count_files(vals, ".fts"), 2);
}

/* Open, check the memory fallback note, and match. */
static void expect_memory_fallback(const char *dbpath)
{
    askdb_db *db;
    struct vindex *vi = NULL;
    struct value_match *m = NULL;
    char note[512];
    int n = 0;

    db = testdb_open(dbpath, NULL, NULL);
    assert_int_equal(vindex_open(db, NULL, &vi, note, sizeof note), 0);
    assert_non_null(strstr(note, "kept in memory"));
    assert_int_equal(vindex_stats(vi)->in_memory, 1);
    assert_int_equal(vindex_stats(vi)->file_bytes, 0);
    assert_int_equal(vindex_match(vi, "customers in Malmo", 0, &m, &n), 0);
    assert_non_null(find(m, n, "customers", "city", "Malmö"));
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);
}

static void unwritable_cache_falls_back_to_memory(void **state)
{
    char p[400], vals[450];

    (void)state;
    /* The cache directory cannot be created: its parent is a file. */
    snprintf(p, sizeof p, "%s/plainfile", tmpdir);
    assert_int_equal(file_write(p, "", 0), 0);
    use_cache("plainfile/cache");
    expect_memory_fallback(testdb_shop());

    /* It exists, but values/ in it is a file: no temporary file. */
    use_cache("badvalues");
    snprintf(p, sizeof p, "%s/badvalues", tmpdir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(vals, sizeof vals, "%s/values", p);
    assert_int_equal(file_write(vals, "", 0), 0);
    expect_memory_fallback(testdb_shop());

    /* A read-only directory (root writes anyway: only as another user). */
    if (geteuid() != 0) {
        use_cache("readonly");
        snprintf(p, sizeof p, "%s/readonly", tmpdir);
        assert_int_equal(mkdir(p, 0700), 0);
        snprintf(vals, sizeof vals, "%s/values", p);
        assert_int_equal(mkdir(vals, 0500), 0);
        expect_memory_fallback(testdb_shop());
        assert_int_equal(count_files(vals, ""), 2); /* . and .. */
        assert_int_equal(chmod(vals, 0700), 0);
    } else {
        fprintf(stderr, "running as root: read-only directory case "
                        "skipped\n");
    }
}

static void database_file_is_untouched(void **state)
{
    askdb_db *db;
    struct vindex *vi;
    struct value_match *m = NULL;
    char note[512], dir[400], copy[450], s0[33], s1[33], r0[33], r1[33];
    struct buf before, after;
    int n = 0;

    (void)state;
    use_cache("untouched");
    snprintf(dir, sizeof dir, "%s/untouched-db", tmpdir);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(copy, sizeof copy, "%s/shop.db", dir);
    assert_int_equal(file_copy(testdb_shop(), copy), 0);
    buf_init(&before, 0);
    buf_init(&after, 0);
    listing(dir, &before);
    assert_int_equal(cache_file_checksum(copy, s0, note, sizeof note), 0);
    assert_int_equal(
        cache_file_checksum(testdb_shop(), r0, note, sizeof note), 0);

    db = testdb_open(copy, NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    assert_int_equal(vindex_match(vi, "paid orders in Paris", 0, &m, &n), 0);
    assert_non_null(find(m, n, "customers", "city", "Paris"));
    value_matches_free(m, n);
    listing(dir, &after);
    assert_string_equal(before.data, after.data);
    vindex_free(vi);
    askdb_db_close(db);
    db = testdb_open(testdb_shop(), NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    vindex_free(vi);
    askdb_db_close(db);

    listing(dir, &after);
    assert_string_equal(before.data, after.data);
    assert_int_equal(cache_file_checksum(copy, s1, note, sizeof note), 0);
    assert_string_equal(s0, s1);
    assert_int_equal(
        cache_file_checksum(testdb_shop(), r1, note, sizeof note), 0);
    assert_string_equal(r0, r1);
    buf_free(&before);
    buf_free(&after);
}

static void bounds_cap_the_index(void **state)
{
    struct vindex_opts o = vindex_opts_default();
    askdb_db *db;
    struct vindex *vi;
    const struct vindex_stats *st;
    char note[512];

    (void)state;
    use_cache("bounds");
    db = testdb_open(testdb_shop(), NULL, NULL);
    o.per_column = 3;
    vi = open_index(db, &o, note, sizeof note);
    st = vindex_stats(vi);
    assert_true(st->columns_capped > 0);
    assert_true(st->values <= 3L * st->columns);
    assert_int_equal(st->partial, 0);
    vindex_free(vi);

    o = vindex_opts_default();
    o.total = 10;
    vi = open_index(db, &o, note, sizeof note);
    st = vindex_stats(vi);
    assert_int_equal(st->values, 10);
    assert_int_equal(st->partial, 1);
    assert_int_equal(st->reused, 0);
    vindex_free(vi);
    askdb_db_close(db);
}

/* A build the time budget cut short is kept in memory and not cached: on
** a loaded machine it would otherwise stay partial until the database
** changes. (A cut by a cap, above, is the same every time and cached.) */
static void build_cut_by_the_clock_is_not_cached(void **state)
{
    struct vindex_opts o = vindex_opts_default();
    askdb_db *db;
    struct vindex *vi;
    const struct vindex_stats *st;
    char note[512], dir[450];

    (void)state;
    use_cache("clock");
    snprintf(dir, sizeof dir, "%s/clock/values", tmpdir);
    db = testdb_open(testdb_shop(), NULL, NULL);
    o.budget_ms = 1;
    vi = open_index(db, &o, note, sizeof note);
    st = vindex_stats(vi);
    assert_int_equal(st->partial, 1);
    assert_int_equal(st->out_of_time, 1);
    assert_int_equal(st->in_memory, 1);
    assert_non_null(strstr(note, "the 1 ms budget ran out, so it is partial "
                                 "and built again next time"));
    assert_true(count_files(dir, ".fts") <= 0);
    vindex_free(vi);
    vi = open_index(db, &o, note, sizeof note);
    assert_int_equal(vindex_stats(vi)->reused, 0);
    vindex_free(vi);
    /* with time enough, the next build is cached */
    vi = open_index(db, NULL, note, sizeof note);
    st = vindex_stats(vi);
    assert_int_equal(st->out_of_time, 0);
    assert_int_equal(st->in_memory, 0);
    assert_int_equal(count_files(dir, ".fts"), 1);
    vindex_free(vi);
    askdb_db_close(db);
}

/* A build cancelled midway (askdb_agent_cancel: Ctrl-C during the first
** question) is no index: every later read fails at once, and an index of
** what was read before would be cached as whole, every column after the
** cancel missing until the database changes. The next open builds it. */
static void cancelled_build_is_not_cached(void **state)
{
    const struct db_schema *s;
    askdb_db *db;
    struct vindex *vi = NULL;
    struct value_match *m = NULL;
    char note[512], dir[450];
    int n = 0;

    (void)state;
    use_cache("cancel");
    snprintf(dir, sizeof dir, "%s/cancel/values", tmpdir);
    db = testdb_open(testdb_shop(), NULL, &s);
    askdb_db_cancel(db);
    assert_int_equal(vindex_open(db, NULL, &vi, note, sizeof note), -1);
    assert_null(vi);
    assert_non_null(strstr(note, "cancelled"));
    assert_true(count_files(dir, ".fts") <= 0);
    askdb_db_uncancel(db);
    vi = open_index(db, NULL, note, sizeof note);
    assert_int_equal(vindex_stats(vi)->reused, 0);
    assert_int_equal(count_files(dir, ".fts"), 1);
    assert_int_equal(vindex_match(vi, "buyers in Malmo", 0, &m, &n), 0);
    assert_non_null(find(m, n, "customers", "city", "Malmö"));
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);
}

static void free_text_and_numbers_are_not_indexed(void **state)
{
    struct buf sql;
    askdb_db *db;
    struct vindex *vi;
    const struct vindex_stats *st;
    struct value_match *m = NULL;
    char note[512], path[400];
    int i, n = 0;

    (void)state;
    use_cache("freetext");
    snprintf(path, sizeof path, "%s/notes.db", tmpdir);
    buf_init(&sql, 0);
    buf_puts(&sql, "CREATE TABLE notes (id INTEGER PRIMARY KEY, kind TEXT,"
                   " body TEXT, day TEXT);"
                   "CREATE VIEW kinds AS SELECT kind || 'zz' AS k FROM notes;");
    for (i = 0; i < 20; i++)
        buf_printf(&sql, "INSERT INTO notes VALUES (%d, '%s', '%s%d', "
                         "'2024-01-%02d');", i, i % 2 ? "memo" : "letter",
                   i < 4 ? "short note "
                         : "a long body of free text that goes on and on "
                           "well past eighty characters, as notes do, ",
                   i, i + 1);
    assert_int_equal(buf_err(&sql), 0);
    assert_int_equal(sqlfile_exec(path, sql.data), 0);
    buf_free(&sql);

    db = testdb_open(path, NULL, NULL);
    vi = open_index(db, NULL, note, sizeof note);
    st = vindex_stats(vi);
    assert_int_equal(st->columns, 1);       /* kind */
    assert_int_equal(st->columns_skipped, 1); /* body */
    assert_int_equal(st->values, 2);        /* day has only numbers */
    assert_int_equal(vindex_match(vi, "every letter written on 2024-01-05", 0,
                                  &m, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(m[0].table, "notes");
    assert_string_equal(m[0].column, "kind");
    assert_string_equal(m[0].value, "letter");
    value_matches_free(m, n);
    assert_int_equal(vindex_match(vi, "memozz or short note", 0, &m, &n), 0);
    assert_int_equal(has_value(m, n, "memozz"), 0);
    value_matches_free(m, n);
    vindex_free(vi);
    askdb_db_close(db);
}

static void render_says_column_and_spelling(void **state)
{
    struct value_match m[3] = {
        {"singer", "Country", "France", "Frnace", 0, 0, 1.0},
        {"order items", "status", "Chef's", "chef's", 1, 0, 2.0},
        {"Sales.regions", "name", "North", "north", 1, 0, 2.0},
    };
    /* A table of another schema is written qualified, its names as the
    ** schema's engine needs them (capitals quoted where names fold, in
    ** every name: singer."Country", as the schema text writes it). */
    static char t_regions[] = "regions", n_sales[] = "Sales",
                q_regions[] = "Sales.regions";
    struct db_table tables[] = {
        {t_regions, 0, NULL, 0, NULL, 0, NULL, 0, 2, 0, 0, NULL, n_sales,
         q_regions, 0},
    };
    const struct db_schema s = {
        .tables = tables, .ntables = 1, .case_folds = 1};
    struct buf b;

    (void)state;
    buf_init(&b, 0);
    values_render(&b, &s, m, 0);
    assert_int_equal(b.len, 0);
    values_render(&b, &s, m, 3);
    assert_string_equal(b.data,
                        "Values the question mentions, as stored:\n"
                        "- singer.\"Country\" = 'France' (question: "
                        "\"Frnace\", close spelling)\n"
                        "- \"order items\".status = 'Chef''s' (question: "
                        "\"chef's\")\n"
                        "- \"Sales\".regions.name = 'North' (question: "
                        "\"north\")\n");
    buf_free(&b);
    vindex_free(NULL);
    value_matches_free(NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shop_city_found_despite_case_and_accents),
        cmocka_unit_test(views_are_not_indexed),
        cmocka_unit_test(short_codes_count_only_when_quoted),
        cmocka_unit_test(typo_found_as_close_spelling),
        cmocka_unit_test(spider_countries_exact_and_misspelt),
        cmocka_unit_test(spider_accents_and_parts_of_values),
        cmocka_unit_test(column_words_and_quoted_phrases),
        cmocka_unit_test(second_open_reuses_the_cache_file),
        cmocka_unit_test(changed_database_is_reindexed),
        cmocka_unit_test(unwritable_cache_falls_back_to_memory),
        cmocka_unit_test(database_file_is_untouched),
        cmocka_unit_test(bounds_cap_the_index),
        cmocka_unit_test(build_cut_by_the_clock_is_not_cached),
        cmocka_unit_test(cancelled_build_is_not_cached),
        cmocka_unit_test(free_text_and_numbers_are_not_indexed),
        cmocka_unit_test(render_says_column_and_spelling),
    };
    test_filter_from_env();
    return cmocka_run_group_tests_name("values", tests, tmpdir_setup,
                                       tmpdir_teardown);
}
