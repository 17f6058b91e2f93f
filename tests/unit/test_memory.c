/* test_memory.c - the store of learned pairs: add, replace, search, verify. */
#define _XOPEN_SOURCE 700   /* realpath() */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/memory.h"
#include "askdb.h"
#include "core/buf.h"
#include "core/cache.h"

/* tmpdir/name in a static slot (a few live at once). */
static const char *tmp(const char *name)
{
    static char slots[4][512];
    static int next;
    char *p = slots[next++ % 4];

    snprintf(p, sizeof slots[0], "%s/%s", tmpdir, name);
    return p;
}

static struct memory *open_new(const char *name)
{
    struct memory *m = NULL;
    char err[512];

    if (memory_open(tmp(name), 1, &m, err, sizeof err) != 0)
        fail_msg("memory_open(%s): %s", name, err);
    return m;
}

static void add(struct memory *m, const char *key, const char *q,
                const char *sql, int want)
{
    char err[512] = "";
    int rc = memory_add(m, key, q, sql, err, sizeof err);

    if (rc != want)
        fail_msg("memory_add(%s) = %d, want %d (%s)", q, rc, want, err);
}

static void adds_and_replaces_by_folded_question(void **state)
{
    struct memory *m = open_new("replace.sqlite");
    struct memory_pair *p = NULL;
    int n = -1;

    (void)state;
    add(m, "/db/a", "How many customers?", "SELECT count(*) FROM customers",
        0);
    add(m, "/db/a", "Which tiers exist?", "SELECT DISTINCT loyalty_tier "
        "FROM customers", 0);
    /* Case and white space fold; the new text and SQL replace the old. */
    add(m, "/db/a", "  how \t MANY\ncustomers?  ",
        "SELECT count(id) FROM customers", 1);
    /* Punctuation does not fold: this is another question. */
    add(m, "/db/a", "How many customers", "SELECT 1", 0);
    assert_int_equal(memory_list(m, "/db/a", &p, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(p[0].question, "how \t MANY\ncustomers?");
    assert_string_equal(p[0].sql, "SELECT count(id) FROM customers");
    assert_int_equal(strlen(p[0].added_at), 20);
    assert_string_equal(p[1].question, "Which tiers exist?");
    assert_string_equal(p[2].question, "How many customers");
    memory_pairs_free(p, n);
    memory_close(m);
}

static void rejects_empty_and_oversized_text(void **state)
{
    struct memory *m = open_new("empty.sqlite");
    char err[512], *big;
    struct memory_pair *p = NULL;
    int n = -1;

    (void)state;
    assert_int_equal(memory_add(m, "/db/a", "  \n ", "SELECT 1", err,
                                sizeof err), -1);
    assert_string_equal(err, "the question is empty");
    assert_int_equal(memory_add(m, "/db/a", "Q?", " ", err, sizeof err), -1);
    assert_string_equal(err, "the SQL is empty");
    assert_int_equal(memory_add(m, "/db/a", "Q\xff?", "SELECT 1", err,
                                sizeof err), -1);
    assert_string_equal(err, "the question is not valid UTF-8");
    big = malloc(MEMORY_MAX_QUESTION + 2);
    assert_non_null(big);
    memset(big, 'x', MEMORY_MAX_QUESTION + 1);
    big[MEMORY_MAX_QUESTION + 1] = '\0';
    assert_int_equal(memory_add(m, "/db/a", big, "SELECT 1", err,
                                sizeof err), -1);
    assert_string_equal(err, "the question is 8193 characters long, over "
                             "the limit of 8192 (ASKDB_MAX_QUESTION)");
    free(big);
    assert_int_equal(memory_list(m, "/db/a", &p, &n), 0);
    assert_int_equal(n, 0);
    assert_null(p);
    /* A question as long as one may be asked (ASKDB_MAX_QUESTION
    ** characters, 3 bytes each here) is learned: the limit was 4096
    ** bytes, below what askdb_agent_ask() takes. */
    big = malloc(3 * MEMORY_MAX_QUESTION + 1);
    assert_non_null(big);
    for (n = 0; n < MEMORY_MAX_QUESTION; n++)
        memcpy(big + 3 * n, "\xe3\x81\x82", 3);
    big[3 * MEMORY_MAX_QUESTION] = '\0';
    if (memory_add(m, "/db/b", big, "SELECT 1", err, sizeof err) != 0)
        fail_msg("%s", err);
    free(big);
    memory_close(m);
}

static const char *const shop_pairs[][2] = {
    {"How many customers are there?", "SELECT count(*) FROM customers"},
    {"List the names of all products in the Electronics category",
     "SELECT p.name FROM products p JOIN categories c ON c.id = "
     "p.category_id WHERE c.name = 'Electronics'"},
    {"What is the total amount of payments made by card?",
     "SELECT sum(amount) FROM payments WHERE method = 'card'"},
    {"Which orders were shipped to Germany?",
     "SELECT id FROM orders WHERE shipping_country = 'DE'"},
    {"Show the email of every customer from Japan",
     "SELECT email FROM customers WHERE country = 'JP'"},
    {"What is the average price of active products?",
     "SELECT avg(price) FROM products WHERE active = 1"},
};

static void fill_shop(struct memory *m, const char *key)
{
    size_t i;

    for (i = 0; i < sizeof shop_pairs / sizeof shop_pairs[0]; i++)
        add(m, key, shop_pairs[i][0], shop_pairs[i][1], 0);
}

/* The question memory_similar() puts first for q. */
static void expect_first(struct memory *m, const char *q, const char *want)
{
    struct memory_pair *p = NULL;
    int n = -1;

    assert_int_equal(memory_similar(m, "/db/shop", q, 3, &p, &n), 0);
    if (n < 1 || strcmp(p[0].question, want) != 0)
        fail_msg("for '%s' first is '%s', want '%s'", q,
                 n ? p[0].question : "(nothing)", want);
    memory_pairs_free(p, n);
}

static void similar_ranks_the_closest_question_first(void **state)
{
    struct memory *m = open_new("similar.sqlite");
    struct memory_pair *p = NULL;
    int n = -1, i;

    (void)state;
    fill_shop(m, "/db/shop");
    expect_first(m, "How many customers do we have?",
                 "How many customers are there?");
    expect_first(m, "average price of the products",
                 "What is the average price of active products?");
    expect_first(m, "card payments: total?",
                 "What is the total amount of payments made by card?");
    /* Stemming: "shipping" finds "shipped", "emails" finds "email". */
    expect_first(m, "orders shipping to germany",
                 "Which orders were shipped to Germany?");
    expect_first(m, "customer emails in Japan",
                 "Show the email of every customer from Japan");

    /* k caps the answer; scores never increase down the list. */
    assert_int_equal(memory_similar(m, "/db/shop", "What is the total of "
                                    "the products?", 2, &p, &n), 0);
    assert_int_equal(n, 2);
    for (i = 1; i < n; i++)
        assert_true(p[i - 1].score >= p[i].score);
    assert_true(p[0].score > 0);
    memory_pairs_free(p, n);

    /* No shared word, k 0: nothing, and no error. */
    assert_int_equal(memory_similar(m, "/db/shop", "zebra xylophone", 3, &p,
                                    &n), 0);
    assert_int_equal(n, 0);
    assert_null(p);
    assert_int_equal(memory_similar(m, "/db/shop", "customers", 0, &p, &n),
                     0);
    assert_int_equal(n, 0);
    memory_close(m);
}

static void keeps_databases_apart(void **state)
{
    struct memory *m = open_new("apart.sqlite");
    struct memory_pair *p = NULL;
    char err[512];
    int n = -1;

    (void)state;
    add(m, "/db/a", "How many rows?", "SELECT count(*) FROM a", 0);
    add(m, "/db/b", "How many rows?", "SELECT count(*) FROM b", 0);
    add(m, "/db/b", "How many rows are old?", "SELECT 2", 0);

    assert_int_equal(memory_similar(m, "/db/a", "how many rows", 5, &p, &n),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(p[0].sql, "SELECT count(*) FROM a");
    memory_pairs_free(p, n);
    assert_int_equal(memory_similar(m, "/db/b", "how many rows", 5, &p, &n),
                     0);
    assert_int_equal(n, 2);
    assert_string_equal(p[0].sql, "SELECT count(*) FROM b");
    memory_pairs_free(p, n);
    assert_int_equal(memory_similar(m, "/db/c", "how many rows", 5, &p, &n),
                     0);
    assert_int_equal(n, 0);

    /* Forgetting one question, then all of b, leaves a alone. */
    assert_int_equal(memory_forget(m, "/db/b", " HOW MANY ROWS? ", err,
                                   sizeof err), 1);
    assert_int_equal(memory_forget(m, "/db/b", "How many rows?", err,
                                   sizeof err), 0);
    assert_int_equal(memory_forget(m, "/db/b", NULL, err, sizeof err), 1);
    assert_int_equal(memory_list(m, "/db/b", &p, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(memory_list(m, "/db/a", &p, &n), 0);
    assert_int_equal(n, 1);
    memory_pairs_free(p, n);
    /* The index followed the deletes: b's question is not found. */
    assert_int_equal(memory_similar(m, "/db/b", "rows old", 5, &p, &n), 0);
    assert_int_equal(n, 0);
    memory_close(m);
}

static void builds_fts_queries_from_words_only(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"How many?", "\"How\" OR \"many\""},
        {"", ""},
        {" \"\" *** ^ : () ", ""},
        {"NEAR(x y)", "\"NEAR\" OR \"x\" OR \"y\""},
        {"x AND y NOT z", "\"x\" OR \"y\" OR \"NOT\" OR \"z\""},
        {"col:val*", "\"col\" OR \"val\""},
        {"caf\xc3\xa9-cr\xc3\xa8me", "\"caf\xc3\xa9\" OR \"cr\xc3\xa8me\""},
        {"x\"y", "\"x\" OR \"y\""},
        /* Function words and repeats are left out; case is ignored. */
        {"What is the name of THE the Name?", "\"What\" OR \"name\""},
        {"How many of them are there?", "\"How\" OR \"many\""},
        {"The of a an", ""},
    };
    struct buf b;
    const char *p;
    char *q;
    size_t i;
    int ors;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        q = memory_fts_query(cases[i].in);
        assert_non_null(q);
        assert_string_equal(q, cases[i].out);
        free(q);
    }
    q = memory_fts_query(NULL);
    assert_string_equal(q, "");
    free(q);

    /* At most 32 words; a word over 64 bytes is left out. */
    buf_init(&b, 0);
    for (i = 0; i < 40; i++)
        buf_printf(&b, "w%zu ", i);
    buf_printf(&b, "%065d end", 0);
    q = memory_fts_query(b.data);
    assert_non_null(q);
    for (p = q, ors = 0; (p = strstr(p, " OR ")) != NULL; p++)
        ors++;
    assert_int_equal(ors, 31);
    assert_non_null(strstr(q, "\"w31\""));
    assert_null(strstr(q, "\"w32\""));
    free(q);
    buf_reset(&b);
    buf_printf(&b, "%065d end", 0);
    q = memory_fts_query(b.data);
    assert_string_equal(q, "\"end\"");
    free(q);
    buf_free(&b);
}

/* A fixed pseudo-random sequence (xorshift), the same on every machine. */
static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void weird_questions_never_fail(void **state)
{
    static const char *const weird[] = {
        "", "   ", "\"", "\"\"\"", "'", "NEAR", "NEAR(a b, 2)",
        "a AND b OR NOT c", "AND", "OR", "NOT", "*", "a*", "^x", "-x", "+",
        "question:foo", "{question}: x", "(", ")", "((a)", "a \"b c",
        "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe8\xb3\xaa\xe5\x95"
        "\x8f",
        "\xf0\x9f\x99\x82 emoji", "\xff\xfe\xfd invalid bytes \xc3",
        "Ca\xcc\x81" "fe\xcc\x81 de\xcc\x81" "composed",
        "%s %n \\ \\\" ;; -- /* */", "SELECT * FROM pairs; DROP TABLE pairs",
    };
    struct memory *m = open_new("weird.sqlite");
    struct memory_pair *p = NULL;
    char s[256], *longq;
    uint32_t seed = 12345;
    size_t i;
    int n, j, len;

    (void)state;
    fill_shop(m, "/db/shop");
    for (i = 0; i < sizeof weird / sizeof weird[0]; i++) {
        if (memory_similar(m, "/db/shop", weird[i], 5, &p, &n) != 0)
            fail_msg("memory_similar failed on weird input %zu", i);
        memory_pairs_free(p, n);
    }
    /* Weird questions can be stored and found again by their own text. */
    add(m, "/db/weird", "NEAR(\"total\" AND orders*) ^col: x", "SELECT 1", 0);
    add(m, "/db/weird", "Caf\xc3\xa9 cr\xc3\xa8me \xe6\x97\xa5\xe6\x9c\xac?",
        "SELECT 2", 0);
    assert_int_equal(memory_similar(m, "/db/weird", "NEAR(\"total\" AND "
                                    "orders*) ^col: x", 5, &p, &n), 0);
    assert_true(n >= 1);
    assert_string_equal(p[0].sql, "SELECT 1");
    memory_pairs_free(p, n);
    /* remove_diacritics: "cafe creme" finds "Café crème". */
    assert_int_equal(memory_similar(m, "/db/weird", "cafe CREME", 5, &p, &n),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(p[0].sql, "SELECT 2");
    memory_pairs_free(p, n);

    /* Random bytes (no NUL), short and long. */
    for (j = 0; j < 3000; j++) {
        len = (int)(rnd(&seed) % (sizeof s - 1));
        for (i = 0; i < (size_t)len; i++)
            s[i] = (char)(rnd(&seed) % 255 + 1);
        s[len] = '\0';
        if (memory_similar(m, "/db/shop", s, 3, &p, &n) != 0)
            fail_msg("memory_similar failed on random input %d", j);
        memory_pairs_free(p, n);
    }
    longq = malloc(100001);
    assert_non_null(longq);
    for (i = 0; i < 100000; i++)
        longq[i] = "ab cd\"*()"[i % 9];
    longq[100000] = '\0';
    assert_int_equal(memory_similar(m, "/db/shop", longq, 3, &p, &n), 0);
    memory_pairs_free(p, n);
    free(longq);
    memory_close(m);
}

static void reopen_persists(void **state)
{
    struct memory *m = open_new("persist.sqlite");
    struct memory_pair *p = NULL;
    char err[512];
    int n = -1;

    (void)state;
    fill_shop(m, "/db/shop");
    add(m, "/db/shop", "How many customers are there?", "SELECT 42", 1);
    memory_close(m);
    m = NULL;
    assert_int_equal(memory_open(tmp("persist.sqlite"), 0, &m, err,
                                 sizeof err), 0);
    assert_non_null(m);
    assert_int_equal(memory_list(m, "/db/shop", &p, &n), 0);
    assert_int_equal(n, 6);
    assert_string_equal(p[0].sql, "SELECT 42");
    memory_pairs_free(p, n);
    expect_first(m, "how many customers", "How many customers are there?");
    memory_close(m);
}

static void missing_store_without_create_is_nothing_learned(void **state)
{
    struct memory *m = (struct memory *)1;
    char err[512];
    struct stat sb;

    (void)state;
    assert_int_equal(memory_open(tmp("absent.sqlite"), 0, &m, err,
                                 sizeof err), 1);
    assert_null(m);
    assert_int_equal(stat(tmp("absent.sqlite"), &sb), -1);
}

static void refuses_files_that_are_not_stores(void **state)
{
    static const char notes[] =
        "these are my notes, not a database at all; long enough to have "
        "a header's worth of bytes in it, more than one hundred.\n";
    char err[512], before[33], after[33];
    struct memory *m = NULL;

    (void)state;
    assert_int_equal(
        cache_file_checksum(testdb_shop(), before, err, sizeof err), 0);
    assert_int_equal(memory_open(testdb_shop(), 1, &m, err, sizeof err), -1);
    assert_null(m);
    assert_non_null(strstr(err, "not an askdb memory store"));
    assert_int_equal(
        cache_file_checksum(testdb_shop(), after, err, sizeof err), 0);
    assert_string_equal(before, after);

    assert_int_equal(file_write(tmp("notes.txt"), notes, strlen(notes)), 0);
    assert_int_equal(memory_open(tmp("notes.txt"), 1, &m, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "not an SQLite file"));
    assert_int_equal(memory_open(tmpdir, 1, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a regular file"));
}

static void default_store_lives_in_the_cache_dir(void **state)
{
    struct memory *m = NULL;
    char err[512];
    struct stat sb;

    (void)state;
    assert_int_equal(setenv("ASKDB_CACHE_DIR", tmp("cache"), 1), 0);
    assert_int_equal(memory_open(NULL, 0, &m, err, sizeof err), 1);
    assert_int_equal(memory_open(NULL, 1, &m, err, sizeof err), 0);
    assert_string_equal(memory_file(m), tmp("cache/memory.sqlite"));
    /* The directory is made with the store, by the first pair. */
    assert_int_equal(stat(tmp("cache"), &sb), -1);
    add(m, "/db/a", "Q?", "SELECT 1", 0);
    memory_close(m);
    assert_int_equal(stat(tmp("cache"), &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    assert_int_equal(stat(tmp("cache/memory.sqlite"), &sb), 0);
    assert_int_equal(memory_open(NULL, 0, &m, err, sizeof err), 0);
    memory_close(m);
    unsetenv("ASKDB_CACHE_DIR");
}

static void a_new_store_is_made_by_its_first_pair(void **state)
{
    struct memory *m = open_new("late.sqlite");
    struct memory_pair *p = NULL;
    char err[512];
    askdb_db *db = NULL;
    struct stat sb;
    int n = -1;

    (void)state;
    /* Reads, forgetting, refused pairs and an empty batch make nothing. */
    assert_int_equal(memory_list(m, "/db/a", &p, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(memory_similar(m, "/db/a", "anything", 3, &p, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(memory_forget(m, "/db/a", NULL, err, sizeof err), 0);
    assert_int_equal(memory_add(m, "/db/a", " ", "SELECT 1", err,
                                sizeof err), -1);
    assert_int_equal(askdb_db_open(testdb_shop(), NULL, &db), ASKDB_OK);
    assert_int_equal(memory_learn(m, db, "Wipe?", "DELETE FROM orders", NULL,
                                  err, sizeof err), MEMORY_REJECTED);
    assert_int_equal(memory_batch_begin(m, err, sizeof err), 0);
    assert_int_equal(memory_learn(m, db, "Names?", "SELECT nope FROM "
                                  "customers", NULL, err, sizeof err),
                     MEMORY_REJECTED);
    assert_int_equal(memory_batch_end(m, 1, err, sizeof err), 0);
    assert_int_equal(stat(tmp("late.sqlite"), &sb), -1);

    /* The first pair of a batch makes the store inside the batch. */
    assert_int_equal(memory_batch_begin(m, err, sizeof err), 0);
    assert_int_equal(memory_learn(m, db, "Categories?", "SELECT name FROM "
                                  "categories", NULL, err, sizeof err), 0);
    add(m, "/db/a", "Q?", "SELECT 1", 0);
    assert_int_equal(memory_batch_end(m, 1, err, sizeof err), 0);
    assert_int_equal(stat(tmp("late.sqlite"), &sb), 0);
    assert_int_equal(memory_list(m, "/db/a", &p, &n), 0);
    assert_int_equal(n, 1);
    memory_pairs_free(p, n);
    askdb_db_close(db);
    memory_close(m);

    /* An empty file stays empty; a folder that is not there fails now. */
    assert_int_equal(file_write(tmp("empty.sqlite"), "", 0), 0);
    memory_close(open_new("empty.sqlite"));
    assert_int_equal(stat(tmp("empty.sqlite"), &sb), 0);
    assert_int_equal(sb.st_size, 0);
    assert_int_equal(memory_open(tmp("nodir/x.sqlite"), 1, &m, err,
                                 sizeof err), MEMORY_OPEN_FAILED);
    assert_null(m);
    assert_non_null(strstr(err, "cannot open memory store"));
}

static void db_key_is_the_canonical_path(void **state)
{
    char *key, *direct, cwd[512];

    (void)state;
    direct = realpath(testdb_shop(), NULL);
    assert_non_null(direct);
    assert_int_equal(direct[0], '/');
    assert_int_equal(symlink(direct, tmp("link.db")), 0);
    key = memory_db_key(tmp("link.db"));
    assert_non_null(key);
    assert_string_equal(key, direct);
    free(key);
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    key = memory_db_key("./link.db");
    assert_int_equal(chdir(cwd), 0);
    assert_non_null(key);
    assert_string_equal(key, direct);
    free(key);
    assert_null(memory_db_key(tmp("no-such.db")));
    assert_null(memory_db_key(""));
    free(direct);
}

/* A server's pairs are keyed by its URL without the password (the
** database handle's label): the URL typed with the password, as for
** `askdb learn URL --list` or --forget, names the same pairs. Before, the
** URL was kept as typed, so --list showed nothing and --forget found no
** question for a URL with a password. */
static void db_key_of_a_url_has_no_password(void **state)
{
    static const char *const urls[][2] = {
        {"postgresql://bob:secret@127.0.0.1:5432/shop",
         "postgresql://bob@127.0.0.1:5432/shop"},
        {"postgresql://bob@127.0.0.1:5432/shop",
         "postgresql://bob@127.0.0.1:5432/shop"},
        {"mariadb://ann:pw@127.0.0.1/shop?password=pw2&ssl=0",
         "mariadb://ann@127.0.0.1/shop?password=xxx&ssl=0"},
    };
    char *key;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof urls / sizeof *urls; i++) {
        key = memory_db_key(urls[i][0]);
        assert_non_null(key);
        assert_string_equal(key, urls[i][1]);
        free(key);
        /* The key of the key (a label keyed again) is the same. */
        key = memory_db_key(urls[i][1]);
        assert_non_null(key);
        assert_string_equal(key, urls[i][1]);
        free(key);
    }
}

static void learn_verifies_sql_on_the_database(void **state)
{
    static const char *const refused[] = {
        "DELETE FROM orders", "UPDATE products SET price = 0",
        "DROP TABLE customers", "SELECT 1; DELETE FROM orders",
        "CREATE TABLE t(x)", "PRAGMA user_version = 3",
    };
    struct memory *m = open_new("learn.sqlite");
    struct memory_pair *p = NULL;
    char err[512], before[33], after[33], *key;
    askdb_config cfg = askdb_config_default();
    askdb_db *db = NULL;
    askdb_learned learned;
    size_t i;
    int n = -1;

    (void)state;
    assert_int_equal(
        cache_file_checksum(testdb_shop(), before, err, sizeof err), 0);
    assert_int_equal(askdb_db_open(testdb_shop(), NULL, &db), ASKDB_OK);

    assert_int_equal(memory_learn(m, db, "How many customers?",
                                  " SELECT count(*) AS n FROM customers; ",
                                  &learned, err, sizeof err), 0);
    assert_int_equal(learned.nrows, 1);
    assert_int_equal(memory_learn(m, db, "how many CUSTOMERS?",
                                  "SELECT count(id) FROM customers", &learned,
                                  err, sizeof err), 1);
    assert_int_equal(learned.replaced, 1);
    /* A query with no rows is still a verified query. */
    assert_int_equal(memory_learn(m, db, "Customers from Atlantis?",
                                  "SELECT id FROM customers WHERE country = "
                                  "'XX'", &learned, err, sizeof err), 0);
    assert_int_equal(learned.nrows, 0);

    for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        err[0] = '\0';
        if (memory_learn(m, db, "Change it", refused[i], NULL, err,
                         sizeof err) != MEMORY_REJECTED ||
            strncmp(err, "refused", 7) != 0)
            fail_msg("'%s' not refused: %s", refused[i], err);
    }
    assert_int_equal(memory_learn(m, db, "Names?", "SELECT nope FROM "
                                  "customers", NULL, err, sizeof err),
                     MEMORY_REJECTED);
    assert_string_equal(err, "the SQL fails on the database: no such "
                             "column: nope");
    assert_int_equal(memory_learn(m, db, "Broken?", "SELEC 1", NULL, err,
                                  sizeof err), MEMORY_REJECTED);
    assert_non_null(strstr(err, "syntax error"));
    assert_int_equal(memory_learn(m, db, "", "SELECT 1", NULL, err,
                                  sizeof err), MEMORY_REJECTED);
    assert_string_equal(err, "the question is empty");

    key = memory_db_key(testdb_shop());
    assert_int_equal(memory_list(m, key, &p, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(p[0].question, "how many CUSTOMERS?");
    assert_string_equal(p[0].sql, "SELECT count(id) FROM customers");
    assert_string_equal(p[1].sql, "SELECT id FROM customers WHERE country "
                                  "= 'XX'");
    memory_pairs_free(p, n);
    free(key);
    askdb_db_close(db);

    /* A run the row cap stopped says so: the query has more rows than
    ** the count. */
    cfg.max_rows = 2;
    assert_int_equal(askdb_db_open(testdb_shop(), &cfg, &db), ASKDB_OK);
    assert_int_equal(memory_learn(m, db, "Every customer?", "SELECT email "
                                  "FROM customers", &learned, err,
                                  sizeof err), 0);
    assert_int_equal(learned.nrows, 2);
    assert_int_equal(learned.truncated, 1);
    assert_int_equal(learned.replaced, 0);
    askdb_db_close(db);
    memory_close(m);
    assert_int_equal(
        cache_file_checksum(testdb_shop(), after, err, sizeof err), 0);
    assert_string_equal(before, after);
}

static void batch_rolls_back_when_not_committed(void **state)
{
    struct memory *m = open_new("batch.sqlite");
    struct memory_pair *p = NULL;
    char err[512];
    int n = -1;

    (void)state;
    assert_int_equal(memory_batch_begin(m, err, sizeof err), 0);
    fill_shop(m, "/db/shop");
    assert_int_equal(memory_batch_end(m, 0, err, sizeof err), 0);
    assert_int_equal(memory_list(m, "/db/shop", &p, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(memory_batch_begin(m, err, sizeof err), 0);
    fill_shop(m, "/db/shop");
    assert_int_equal(memory_batch_end(m, 1, err, sizeof err), 0);
    assert_int_equal(memory_list(m, "/db/shop", &p, &n), 0);
    assert_int_equal(n, 6);
    memory_pairs_free(p, n);
    /* The index was rolled back with the rows: searches still work. */
    expect_first(m, "average price", "What is the average price of active "
                                     "products?");
    memory_close(m);
}

static void renders_pairs_for_the_prompt(void **state)
{
    struct memory_pair p[2] = {
        {"How many\ncustomers?", "SELECT count(*) FROM customers", "", 1.5},
        {"Top product?", "SELECT name\nFROM products LIMIT 1", "", 0.5},
    };
    struct buf b;

    (void)state;
    buf_init(&b, 0);
    memory_render(&b, p, 0);
    assert_int_equal(b.len, 0);
    memory_render(&b, p, 2);
    assert_int_equal(buf_err(&b), 0);
    assert_string_equal(b.data,
                        "Examples of questions about this database and "
                        "their SQL:\n"
                        "Q: How many customers?\n"
                        "SQL: SELECT count(*) FROM customers\n"
                        "Q: Top product?\n"
                        "SQL: SELECT name\nFROM products LIMIT 1\n");
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adds_and_replaces_by_folded_question),
        cmocka_unit_test(rejects_empty_and_oversized_text),
        cmocka_unit_test(similar_ranks_the_closest_question_first),
        cmocka_unit_test(keeps_databases_apart),
        cmocka_unit_test(builds_fts_queries_from_words_only),
        cmocka_unit_test(weird_questions_never_fail),
        cmocka_unit_test(reopen_persists),
        cmocka_unit_test(missing_store_without_create_is_nothing_learned),
        cmocka_unit_test(refuses_files_that_are_not_stores),
        cmocka_unit_test(default_store_lives_in_the_cache_dir),
        cmocka_unit_test(a_new_store_is_made_by_its_first_pair),
        cmocka_unit_test(db_key_is_the_canonical_path),
        cmocka_unit_test(db_key_of_a_url_has_no_password),
        cmocka_unit_test(learn_verifies_sql_on_the_database),
        cmocka_unit_test(batch_rolls_back_when_not_committed),
        cmocka_unit_test(renders_pairs_for_the_prompt),
    };
    test_filter_from_env();

    unsetenv("ASKDB_CACHE_DIR");
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
