/* test_db.c - read-only open, schema extraction, and the statement guard. */
#include "testutil.h"

#include <limits.h>
#include <stdatomic.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "db/db.h"
#include "db/driver.h"
#include "db/watch.h"

static char dbpath[300];

/* A small database of our own with every feature the schema reader
** handles: composite key, foreign keys, unique index, view, NULLs, blobs,
** long text, a keyword as a column name. */
static const char fixture_sql[] =
    "CREATE TABLE dept (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
    "  budget REAL DEFAULT 0);"
    "CREATE TABLE emp (id INTEGER PRIMARY KEY, dept_id INTEGER REFERENCES"
    "  dept(id), name TEXT, \"order\" INTEGER, photo BLOB, bio TEXT);"
    "CREATE TABLE proj_emp (proj TEXT, emp_id INTEGER REFERENCES emp,"
    "  PRIMARY KEY (proj, emp_id));"
    "CREATE UNIQUE INDEX emp_name ON emp(name, dept_id);"
    /* The same columns again, another collation: shown once. */
    "CREATE UNIQUE INDEX emp_name_nocase ON emp(name COLLATE NOCASE, "
    "dept_id);"
    "CREATE VIEW big AS SELECT name FROM dept WHERE budget > 100;"
    "INSERT INTO dept VALUES (1, 'Sales', 150.5), (2, 'R&D', 90),"
    "  (3, 'Ops', NULL);"
    "INSERT INTO emp VALUES (1, 1, 'Ann', 1, x'0102', 'short'),"
    "  (2, 1, 'Bob', 2, NULL, 'a very long biography that is certainly "
    "longer than forty characters in total'), (3, 2, 'Cy', NULL, NULL, NULL);"
    "INSERT INTO proj_emp VALUES ('apollo', 1), ('apollo', 2);";

static unsigned long long file_sum(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned long long h = 1469598103934665603ULL;
    int c;

    if (!f)
        return 0;
    while ((c = fgetc(f)) != EOF)
        h = (h ^ (unsigned)c) * 1099511628211ULL;
    fclose(f);
    return h;
}

static int setup(void **state)
{
    if (tmpdir_setup(state))
        return -1;
    snprintf(dbpath, sizeof dbpath, "%s/f.db", tmpdir);
    return sqlfile_exec(dbpath, fixture_sql);
}

/* The fixture, opened with a 300 ms query limit. */
static askdb_db *open_ok(void)
{
    askdb_config cfg = askdb_config_default();

    cfg.query_timeout_ms = 300;
    return testdb_open(dbpath, &cfg, NULL);
}

static void missing_path_is_an_error_and_creates_nothing(void **state)
{
    char p[400];
    askdb_db *db = NULL;
    struct stat st;

    (void)state;
    snprintf(p, sizeof p, "%s/nope.db", tmpdir);
    assert_int_equal(askdb_db_open(p, NULL, &db), ASKDB_ERR_DB_OPEN);
    assert_non_null(strstr(askdb_db_errmsg(db), "No such file"));
    assert_non_null(strstr(askdb_db_errmsg(db), "never creates"));
    assert_null(strstr(askdb_db_errmsg(db), "postgresql://"));
    askdb_db_close(db);
    assert_int_equal(stat(p, &st), -1);
}

/* PostgreSQL's keyword/value string is no file: the message says to give
** a URL, and leaves its password out. */
static void conninfo_path_is_told_to_use_a_url(void **state)
{
    static const char *const paths[] = {
        "host=127.0.0.1 port=5432 dbname=lab user=rd password=s3cret",
        "dbname = lab password = 'a s3cret \\' too'",
        "service=lab password=s3cret",
    };
    askdb_db *db;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        db = NULL;
        assert_int_equal(askdb_db_open(paths[i], NULL, &db),
                         ASKDB_ERR_DB_OPEN);
        assert_non_null(strstr(askdb_db_errmsg(db),
                               "it looks like a PostgreSQL connection "
                               "string: give askdb a postgresql:// URL"));
        assert_non_null(strstr(askdb_db_errmsg(db), "password"));
        assert_null(strstr(askdb_db_errmsg(db), "s3cret"));
        assert_null(strstr(askdb_db_label(db), "s3cret"));
        askdb_db_close(db);
    }
}

static void directory_and_junk_file_are_refused(void **state)
{
    static const char junk[] =
        "this is not a database, just some text long enough to have "
        "a header of a hundred bytes or so..............................";
    char p[400];
    askdb_db *db = NULL;
    unsigned long long before;

    (void)state;
    assert_int_equal(askdb_db_open(tmpdir, NULL, &db), ASKDB_ERR_DB_OPEN);
    assert_non_null(strstr(askdb_db_errmsg(db), "directory"));
    askdb_db_close(db);

    snprintf(p, sizeof p, "%s/junk.txt", tmpdir);
    assert_int_equal(file_write(p, junk, strlen(junk)), 0);
    before = file_sum(p);
    db = NULL;
    assert_int_equal(askdb_db_open(p, NULL, &db), ASKDB_ERR_DB_OPEN);
    assert_non_null(strstr(askdb_db_errmsg(db), "not an SQLite database"));
    askdb_db_close(db);
    assert_true(before == file_sum(p));
}

static void schema_reads_keys_samples_and_counts(void **state)
{
    askdb_db *db = open_ok();
    const struct db_schema *s;
    const struct db_table *t;
    const struct db_column *c;

    (void)state;
    assert_int_equal(db_schema(db, &s), ASKDB_OK);
    assert_int_equal(s->ntables, 4);
    assert_string_equal(s->tables[0].name, "dept");
    assert_string_equal(s->tables[3].name, "big");
    assert_true(s->tables[3].is_view);

    t = schema_table(s, "EMP");
    assert_non_null(t);
    assert_int_equal(t->ncols, 6);
    assert_int_equal(t->rows, 3);
    assert_int_equal(t->nfks, 1);
    assert_string_equal(t->fks[0].from, "dept_id");
    assert_string_equal(t->fks[0].table, "dept");
    assert_string_equal(t->fks[0].to, "id");
    assert_int_equal(t->nuniques, 1);
    assert_string_equal(t->uniques[0], "name, dept_id");
    c = schema_column(t, "name");
    assert_int_equal(c->nsamples, 3);
    assert_string_equal(c->samples[0], "Ann");
    c = schema_column(t, "bio"); /* long values are not samples */
    assert_int_equal(c->nsamples, 1);
    assert_string_equal(c->samples[0], "short");
    c = schema_column(t, "photo");
    assert_int_equal(c->nsamples, 0);

    t = schema_table(s, "proj_emp");
    assert_int_equal(schema_column(t, "proj")->pk, 1);
    assert_int_equal(schema_column(t, "emp_id")->pk, 2);
    assert_null(t->fks[0].to); /* REFERENCES emp: its primary key */
    askdb_db_close(db);
}

/* Every driver keeps its sample values through schema_add_sample(): short,
** non-empty, distinct, at most per_col of them, each a copy. */
static void samples_are_short_distinct_copies_up_to_per_col(void **state)
{
    struct db_table t;
    struct db_column *c;
    char v[] = "Ann", max[SCHEMA_SAMPLE_MAXLEN + 2];

    (void)state;
    memset(&t, 0, sizeof t);
    c = schema_push(&t.cols, &t.ncols, sizeof *c);
    assert_non_null(c);
    assert_int_equal(t.ncols, 1);
    assert_null(c->samples);
    memset(max, 'x', sizeof max - 1);
    max[sizeof max - 1] = '\0';
    assert_int_equal(schema_add_sample(c, max, 3), 0); /* 41 bytes */
    max[SCHEMA_SAMPLE_MAXLEN] = '\0';
    assert_int_equal(schema_add_sample(c, max, 3), 0); /* 40: kept */
    assert_int_equal(schema_add_sample(c, NULL, 3), 0);
    assert_int_equal(schema_add_sample(c, "", 3), 0);
    assert_int_equal(schema_add_sample(c, v, 3), 0);
    v[0] = 'B';                                      /* a copy was kept */
    assert_int_equal(schema_add_sample(c, "Ann", 3), 0);
    assert_int_equal(schema_add_sample(c, "Bob", 3), 0);
    assert_int_equal(schema_add_sample(c, "Cy", 3), 0);  /* c is full */
    assert_int_equal(c->nsamples, 3);
    assert_int_equal((int)strlen(c->samples[0]), SCHEMA_SAMPLE_MAXLEN);
    assert_string_equal(c->samples[1], "Ann");
    assert_string_equal(c->samples[2], "Bob");
    assert_true(schema_has_sample(c, "Bob"));
    assert_false(schema_has_sample(c, "Cy"));
    schema_free_table(&t);
}

/* Every driver starts its result with db_result_new(): the columns' arrays
** there, empty, so that askdb_result_free() takes it before it is filled
** (a failure on the way) as after. */
static void results_start_with_empty_columns(void **state)
{
    askdb_result *r;
    int c;

    (void)state;
    r = db_result_new(3);
    assert_non_null(r);
    assert_int_equal(r->ncols, 3);
    assert_int_equal(r->nrows, 0);
    assert_non_null(r->cols);
    assert_non_null(r->decltypes);
    for (c = 0; c < 3; c++)
        assert_true(!r->cols[c] && !r->decltypes[c]);
    r->cols[0] = strdup("a"); /* half filled */
    askdb_result_free(r);
    r = db_result_new(0);
    assert_non_null(r);
    assert_int_equal(r->ncols, 0);
    askdb_result_free(r);
}

/* Every driver adds its rows through db_result_add_row(): each row zeroed
** and counted at once, the cells growing as they must, none lost. */
static void result_rows_are_added_zeroed_and_counted(void **state)
{
    askdb_result r;
    askdb_value *row;
    long cap = 0, i;
    int c;

    (void)state;
    memset(&r, 0, sizeof r);
    r.ncols = 3;
    for (i = 0; i < 1000; i++) {
        row = db_result_add_row(&r, &cap);
        assert_non_null(row);
        assert_int_equal(r.nrows, i + 1);
        assert_true(cap >= r.nrows * r.ncols);
        for (c = 0; c < r.ncols; c++) {
            assert_int_equal(row[c].type, ASKDB_NULL);
            row[c].type = ASKDB_INTEGER;
            row[c].i = i * 3 + c;
        }
    }
    for (i = 0; i < r.nrows * r.ncols; i++)
        assert_true(r.cells[i].type == ASKDB_INTEGER && r.cells[i].i == i);
    free(r.cells);

    /* No columns: the row is counted, and r has cells to free. */
    memset(&r, 0, sizeof r);
    cap = 0;
    assert_non_null(db_result_add_row(&r, &cap));
    assert_int_equal(r.nrows, 1);
    free(r.cells);
}

/*
** A view over a dropped table, or a virtual table whose module SQLite does
** not have, cannot list its columns; SQLite opens such a database and
** runs queries on the other tables, and so must askdb: those objects are
** left out of the schema, not the whole database refused.
*/
static void broken_views_and_unknown_modules_are_left_out(void **state)
{
    askdb_db *db = NULL;
    askdb_result *r = NULL;
    const struct db_schema *s;
    char p[400], *text = NULL;

    (void)state;
    snprintf(p, sizeof p, "%s/broken.db", tmpdir);
    assert_int_equal(sqlfile_exec(p,
        "CREATE TABLE a (x INTEGER);"
        "INSERT INTO a VALUES (7);"
        "CREATE TABLE b (y);"
        "CREATE VIEW va AS SELECT x FROM a;"
        "CREATE VIEW vb AS SELECT y FROM b;"
        "CREATE VIEW vab AS SELECT x, y FROM a, b;"
        "DROP TABLE b;"
        "PRAGMA writable_schema = ON;"
        "INSERT INTO sqlite_schema (type, name, tbl_name, rootpage, sql) "
        "VALUES ('table', 'vt', 'vt', 0, "
        "'CREATE VIRTUAL TABLE vt USING nosuchmodule(c)');"
        "PRAGMA writable_schema = OFF;"), 0);

    assert_int_equal(askdb_db_open(p, NULL, &db), ASKDB_OK);
    assert_int_equal(db_schema(db, &s), ASKDB_OK);
    assert_int_equal(s->ntables, 2);
    assert_string_equal(s->tables[0].name, "a");
    assert_string_equal(s->tables[1].name, "va");
    assert_int_equal(askdb_db_schema_text(db, &text), ASKDB_OK);
    assert_string_equal(text, "CREATE VIEW va (\n"
                              "  x INTEGER\n"
                              ");\n"
                              "\n"
                              "CREATE TABLE a (\n"
                              "  x INTEGER\n"
                              "); -- 1 row\n");
    askdb_free(text);
    assert_int_equal(askdb_db_query(db, "SELECT x FROM va", &r), ASKDB_OK);
    assert_int_equal(askdb_result_cell(r, 0, 0)->i, 7);
    askdb_result_free(r);
    r = NULL;
    assert_int_equal(askdb_db_query(db, "SELECT * FROM vb", &r),
                     ASKDB_ERR_DB);
    assert_non_null(strstr(askdb_db_errmsg(db), "no such table"));
    askdb_db_close(db);
}

/* Generated columns are columns a query may name: in the schema, with
** samples, and read back (pragma_table_info leaves them out). */
static void generated_columns_are_in_the_schema(void **state)
{
    askdb_db *db = NULL;
    askdb_result *r = NULL;
    char p[400], *text = NULL;

    (void)state;
    snprintf(p, sizeof p, "%s/generated.db", tmpdir);
    assert_int_equal(sqlfile_exec(p,
        "CREATE TABLE g (a INT, b INT GENERATED ALWAYS AS (a * 2) VIRTUAL,"
        " c TEXT GENERATED ALWAYS AS (a || 'x') STORED, d TEXT);"
        "INSERT INTO g (a, d) VALUES (1, 'one'), (2, 'two');"), 0);
    assert_int_equal(askdb_db_open(p, NULL, &db), ASKDB_OK);
    assert_int_equal(askdb_db_schema_text(db, &text), ASKDB_OK);
    assert_string_equal(text, "CREATE TABLE g (\n"
                              "  a INT,\n"
                              "  b INT,\n"
                              "  c TEXT, -- e.g. '1x', '2x'\n"
                              "  d TEXT -- e.g. 'one', 'two'\n"
                              "); -- 2 rows\n");
    askdb_free(text);
    assert_int_equal(askdb_db_query(db, "SELECT b, c FROM g WHERE a = 2",
                                    &r), ASKDB_OK);
    assert_int_equal(askdb_result_cell(r, 0, 0)->i, 4);
    askdb_result_free(r);
    askdb_db_close(db);
}

/* A text value with a NUL byte inside is no sample: as a C string it
** would be cut at the NUL, a value the column does not hold ('a' for
** 'a' || char(0) || 'b'), which the model would then filter on. */
static void text_with_a_nul_is_no_sample(void **state)
{
    askdb_db *db = NULL;
    char p[400], *text = NULL;

    (void)state;
    snprintf(p, sizeof p, "%s/nul.db", tmpdir);
    assert_int_equal(sqlfile_exec(p,
        "CREATE TABLE n (s TEXT);"
        "INSERT INTO n VALUES ('a' || char(0) || 'b'), ('zz');"), 0);
    assert_int_equal(askdb_db_open(p, NULL, &db), ASKDB_OK);
    assert_int_equal(askdb_db_schema_text(db, &text), ASKDB_OK);
    assert_string_equal(text, "CREATE TABLE n (\n"
                              "  s TEXT -- e.g. 'zz'\n"
                              "); -- 2 rows\n");
    askdb_free(text);
    askdb_db_close(db);
}

static void schema_text_is_compact_create_table(void **state)
{
    askdb_db *db = open_ok();
    char *text = NULL;

    (void)state;
    assert_int_equal(askdb_db_schema_text(db, &text), ASKDB_OK);
    /* The view first, though created last: what ends the schema stands
    ** right before the question (bench/shop/README.md). */
    assert_string_equal(
        text,
        "CREATE VIEW big (\n"
        "  name TEXT\n"
        ");\n"
        "\n"
        "CREATE TABLE dept (\n"
        "  id INTEGER PRIMARY KEY,\n"
        "  name TEXT NOT NULL, -- e.g. 'Sales', 'R&D', 'Ops'\n"
        "  budget REAL DEFAULT 0,\n"
        "  UNIQUE (name)\n"
        "); -- 3 rows\n"
        "\n"
        "CREATE TABLE emp (\n"
        "  id INTEGER PRIMARY KEY,\n"
        "  dept_id INTEGER,\n"
        "  name TEXT, -- e.g. 'Ann', 'Bob', 'Cy'\n"
        "  \"order\" INTEGER,\n"
        "  photo BLOB,\n"
        "  bio TEXT, -- e.g. 'short'\n"
        "  UNIQUE (name, dept_id),\n"
        "  FOREIGN KEY (dept_id) REFERENCES dept(id)\n"
        "); -- 3 rows\n"
        "\n"
        "CREATE TABLE proj_emp (\n"
        "  proj TEXT, -- e.g. 'apollo'\n"
        "  emp_id INTEGER,\n"
        "  PRIMARY KEY (proj, emp_id),\n"
        "  FOREIGN KEY (emp_id) REFERENCES emp\n"
        "); -- 2 rows\n");
    askdb_free(text);
    askdb_db_close(db);
}

/* A table of another schema is rendered qualified, each part quoted as
** the engine needs it, and so is a foreign key to it; one that its name
** reaches is rendered as before, whatever other schema has its name. */
static void namespaced_tables_render_qualified(void **state)
{
    static struct db_column ord_cols[] = {
        {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
    };
    static struct db_column sord_cols[] = {
        {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
        {"region_id", "integer", 0, NULL, 0, NULL, 0, NULL},
    };
    static struct db_column reg_cols[] = {
        {"id", "integer", 1, NULL, 1, NULL, 0, NULL},
    };
    static struct db_fkey sord_fk[] = {{"region_id", "Sales.Regions", "id"}};
    static struct db_table tables[] = {
        {"orders", 0, ord_cols, 1, NULL, 0, NULL, 0, 10, 0, 0, NULL, NULL,
         NULL, 0},
        {"orders", 0, sord_cols, 2, sord_fk, 1, NULL, 0, 10, 0, 0, NULL,
         "sales", "sales.orders", 0},
        {"Regions", 0, reg_cols, 1, NULL, 0, NULL, 0, -1, 0, 0, NULL,
         "Sales", "Sales.Regions", 0},
    };
    struct db_schema s = {.tables = tables, .ntables = 3, .case_folds = 1};
    char *text;
    struct buf b;

    (void)state;
    text = schema_render(&s);
    assert_non_null(text);
    assert_string_equal(text,
                        "CREATE TABLE orders (\n"
                        "  id integer PRIMARY KEY\n"
                        "); -- 10 rows\n"
                        "\n"
                        "CREATE TABLE sales.orders (\n"
                        "  id integer PRIMARY KEY,\n"
                        "  region_id integer,\n"
                        "  FOREIGN KEY (region_id) REFERENCES "
                        "\"Sales\".\"Regions\"(id)\n"
                        "); -- 10 rows\n"
                        "\n"
                        "CREATE TABLE \"Sales\".\"Regions\" (\n"
                        "  id integer PRIMARY KEY\n"
                        ");\n");
    free(text);
    /* Where bare names keep their case (SQLite, DuckDB), only what is no
    ** plain word is quoted. */
    s.case_folds = 0;
    text = schema_render(&s);
    assert_non_null(strstr(text, "REFERENCES Sales.Regions(id)\n"));
    free(text);
    buf_init(&b, 0);
    schema_put_quoted_table(&b, &tables[1]);
    buf_putc(&b, ' ');
    schema_put_quoted_table(&b, &tables[0]);
    assert_string_equal(b.data, "\"sales\".\"orders\" \"orders\"");
    buf_free(&b);
    assert_string_equal(schema_qname(&tables[0]), "orders");
    assert_string_equal(schema_qname(&tables[2]), "Sales.Regions");
}

static void query_keeps_value_types(void **state)
{
    askdb_db *db = open_ok();
    askdb_result *r = NULL;
    const askdb_value *v;

    (void)state;
    assert_int_equal(askdb_db_query(db, "SELECT 42, 2.5, 'x', NULL, "
                                        "x'00ff' AS b", &r), ASKDB_OK);
    assert_int_equal(r->ncols, 5);
    assert_int_equal(r->nrows, 1);
    assert_string_equal(r->cols[4], "b");
    v = askdb_result_cell(r, 0, 0);
    assert_int_equal(v->type, ASKDB_INTEGER);
    assert_int_equal(v->i, 42);
    v = askdb_result_cell(r, 0, 1);
    assert_int_equal(v->type, ASKDB_REAL);
    assert_true(v->d == 2.5);
    v = askdb_result_cell(r, 0, 2);
    assert_int_equal(v->type, ASKDB_TEXT);
    assert_string_equal(v->s, "x");
    assert_int_equal(askdb_result_cell(r, 0, 3)->type, ASKDB_NULL);
    v = askdb_result_cell(r, 0, 4);
    assert_int_equal(v->type, ASKDB_BLOB);
    assert_int_equal(v->len, 2);
    assert_int_equal((unsigned char)v->s[1], 0xff);
    assert_null(askdb_result_cell(r, 1, 0));
    askdb_result_free(r);
    askdb_db_close(db);
}

/*
** randomblob() runs through askdb's checked stand-in (sqlite_fn.c), which
** must not tell SQLite it is deterministic: SQLite then computes a call
** with constant arguments once for the whole statement, and every row
** got the same "random" value.
*/
static void randomblob_differs_from_row_to_row(void **state)
{
    askdb_db *db = open_ok();
    askdb_result *r = NULL;

    (void)state;
    assert_int_equal(askdb_db_query(db, "WITH RECURSIVE n(i) AS (SELECT 1 "
                                        "UNION ALL SELECT i + 1 FROM n "
                                        "WHERE i < 20) SELECT count(DISTINCT "
                                        "randomblob(8)) FROM n", &r),
                     ASKDB_OK);
    assert_int_equal(askdb_result_cell(r, 0, 0)->i, 20);
    askdb_result_free(r);
    askdb_db_close(db);
}

/* Every kind of write or escape is refused and the file stays the same. */
static void writes_and_escapes_are_refused(void **state)
{
    static const char *const bad[] = {
        "DELETE FROM emp",
        "UPDATE emp SET name = 'x'",
        "INSERT INTO dept VALUES (9, 'x', 1)",
        "DROP TABLE emp",
        "CREATE TABLE x (a)",
        "ALTER TABLE emp ADD COLUMN z",
        "ATTACH DATABASE '/tmp/askdb-attach-test.db' AS x",
        "PRAGMA user_version = 7",
        "PRAGMA journal_mode = WAL",
        "PRAGMA optimize",
        "VACUUM",
        "VACUUM INTO '/tmp/askdb-vacuum-test.db'",
        "REINDEX",
        "ANALYZE",
        "BEGIN",
        "SELECT load_extension('/tmp/nothing')",
        "SELECT 1; DELETE FROM emp",
        "WITH x AS (SELECT 1) DELETE FROM emp",
        "REPLACE INTO dept VALUES (1, 'x', 1)",
        NULL
    };
    unsigned long long before = file_sum(dbpath);
    askdb_db *db = open_ok();
    askdb_result *r;
    struct db_err e;
    struct stat st;
    int i;

    (void)state;
    for (i = 0; bad[i]; i++) {
        r = NULL;
        if (db_run(db, bad[i], &r, &e) != ASKDB_ERR_REFUSED)
            fail_msg("not refused: %s (%s)", bad[i], e.msg);
        assert_null(r);
        assert_int_equal(e.ec, ASKDB_EC_REFUSED);
        assert_non_null(strstr(e.msg, "refused"));
    }
    askdb_db_close(db);
    assert_true(before == file_sum(dbpath));
    assert_int_equal(stat("/tmp/askdb-attach-test.db", &st), -1);
    assert_int_equal(stat("/tmp/askdb-vacuum-test.db", &st), -1);
}

/* More than one statement is refused in the words every driver uses
** (db_many_statements), here as SQLite's guard finds it. */
static void two_statements_are_refused_as_every_driver_says(void **state)
{
    static const char want[] = "refused: more than one statement; askdb "
                               "runs exactly one read-only statement";
    askdb_db *db = open_ok();
    askdb_result *r = NULL;
    struct db_err e;

    (void)state;
    assert_int_equal(db_run(db, "SELECT 1; SELECT 2", &r, &e),
                     ASKDB_ERR_REFUSED);
    assert_null(r);
    assert_int_equal(e.ec, ASKDB_EC_REFUSED);
    assert_string_equal(e.msg, want);
    memset(&e, 0, sizeof e);
    assert_int_equal(db_many_statements(&e), ASKDB_ERR_REFUSED);
    assert_int_equal(e.ec, ASKDB_EC_REFUSED);
    assert_string_equal(e.msg, want);
    askdb_db_close(db);
}

static void introspection_pragmas_are_allowed(void **state)
{
    askdb_db *db = open_ok();
    askdb_result *r = NULL;

    (void)state;
    assert_int_equal(askdb_db_query(db, "PRAGMA table_info(emp)", &r),
                     ASKDB_OK);
    assert_int_equal(r->nrows, 6);
    askdb_result_free(r);
    askdb_db_close(db);
}

/* JSON's table-valued functions read their argument alone: a JSON
** column's array is asked of with json_each(), as people do, in askdb's
** process and in askdb-exec. They were refused as virtual tables "not
** available"; dbstat still is. */
static void json_table_functions_are_allowed(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_db *db;
    askdb_result *r = NULL;
    int in_process, helper;

    (void)state;
    helper = test_use_exec_helper();
    for (in_process = 0; in_process < 2; in_process++) {
        cfg.in_process = in_process;
        db = testdb_open(dbpath, &cfg, NULL);
        assert_true(in_process ? !db->iso : db->iso != NULL);
        assert_int_equal(askdb_db_query(db, "SELECT sum(value) FROM "
                                            "json_each('[1,2,3]')", &r),
                         ASKDB_OK);
        assert_int_equal(askdb_result_cell(r, 0, 0)->i, 6);
        askdb_result_free(r);
        r = NULL;
        assert_int_equal(askdb_db_query(db, "SELECT count(*) FROM json_tree("
                                            "'{\"a\":[1,2]}')", &r),
                         ASKDB_OK);
        assert_int_equal(askdb_result_cell(r, 0, 0)->i, 4);
        askdb_result_free(r);
        r = NULL;
        assert_int_equal(askdb_db_query(db, "SELECT * FROM dbstat", &r),
                         ASKDB_ERR_REFUSED);
        assert_non_null(strstr(askdb_db_errmsg(db), "'dbstat' is not "
                                                    "available"));
        askdb_result_free(r);
        r = NULL;
        askdb_db_close(db);
    }
    test_no_exec_helper(helper);
}

/* A parameter has no value to bind: a syntax error naming it, before
** anything runs (SQLite would bind NULL and answer another question). */
static void parameters_are_a_syntax_error(void **state)
{
    static const char *const sql[][2] = {
        {"SELECT name FROM emp WHERE id = ?", "?"},
        {"SELECT name FROM emp WHERE id = ?2", "?2"},
        {"SELECT name FROM emp WHERE id = :id", ":id"},
        {"SELECT name FROM emp WHERE name = @name", "@name"},
        {"SELECT name FROM emp WHERE id > $min AND id < ?", "$min"},
    };
    askdb_db *db = open_ok();
    askdb_result *r;
    struct db_err e;
    char want[128];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof sql / sizeof sql[0]; i++) {
        snprintf(want, sizeof want, "the query has a %s placeholder; write "
                 "the values into the SQL", sql[i][1]);
        assert_int_equal(db_check(db, sql[i][0], &e), ASKDB_ERR_DB);
        assert_int_equal(e.ec, ASKDB_EC_SYNTAX);
        assert_string_equal(e.msg, want);
        r = NULL;
        assert_int_equal(db_run(db, sql[i][0], &r, &e), ASKDB_ERR_DB);
        assert_null(r);
        assert_string_equal(e.msg, want);
    }
    /* Text that only looks like one is no parameter. */
    r = NULL;
    assert_int_equal(db_run(db, "SELECT '?', ':id', '$x' AS \"@y\"", &r,
                            &e), ASKDB_OK);
    askdb_result_free(r);
    askdb_db_close(db);
}

static void errors_are_classified(void **state)
{
    askdb_db *db = open_ok();
    struct db_err e;

    (void)state;
    assert_int_equal(db_check(db, "SELECT nme FROM emp", &e), ASKDB_ERR_DB);
    assert_int_equal(e.ec, ASKDB_EC_UNKNOWN_COLUMN);
    assert_string_equal(e.msg, "no such column: nme");
    db_check(db, "SELECT * FROM emps", &e);
    assert_int_equal(e.ec, ASKDB_EC_UNKNOWN_TABLE);
    db_check(db, "SELECT FROM WHERE", &e);
    assert_int_equal(e.ec, ASKDB_EC_SYNTAX);
    db_check(db, "SELECT nosuchfn(1)", &e);
    assert_int_equal(e.ec, ASKDB_EC_RUNTIME);
    db_check(db, "SELECT id FROM emp, dept", &e);
    assert_int_equal(e.ec, ASKDB_EC_UNKNOWN_COLUMN); /* ambiguous */
    assert_int_equal(db_check(db, "  -- only a comment", &e),
                     ASKDB_ERR_REFUSED);
    assert_int_equal(e.ec, ASKDB_EC_NO_SQL);
    assert_int_equal(db_check(db, "SELECT 1; -- trailing\n;", &e), ASKDB_OK);
    askdb_db_close(db);
}

/* A writer that dies mid-write while askdb has the file open leaves a
** hot journal: the next statement says so and what to do, not SQLite's
** "attempt to write a readonly database" (which reads as if the
** statement had tried to write), and nothing is written. */
static void hot_journal_after_opening_is_explained(void **state)
{
    char path[300], journal[320];
    askdb_config cfg = askdb_config_default();
    askdb_db *db;
    askdb_result *r = NULL;
    unsigned long long before;
    struct stat sb;

    (void)state;
    snprintf(path, sizeof path, "%s/hot.db", tmpdir);
    snprintf(journal, sizeof journal, "%s-journal", path);
    assert_int_equal(sqlfile_exec(path, fixture_sql), 0);
    db = testdb_open(path, &cfg, NULL);
    assert_int_equal(askdb_db_query(db, "SELECT count(*) FROM emp", &r),
                     ASKDB_OK);
    askdb_result_free(r);
    r = NULL;
    sqlfile_die_in_a_write(path);
    assert_int_equal(stat(journal, &sb), 0);
    before = file_sum(path);
    assert_int_equal(askdb_db_query(db, "SELECT count(*) FROM emp", &r),
                     ASKDB_ERR_DB);
    assert_null(r);
    assert_non_null(strstr(askdb_db_errmsg(db),
                           "the database has a hot rollback journal ("));
    assert_non_null(strstr(askdb_db_errmsg(db), "PRAGMA quick_check"));
    assert_null(strstr(askdb_db_errmsg(db), "readonly"));
    assert_int_equal(askdb_db_errclass(db), ASKDB_EC_DATABASE);
    assert_true(file_sum(path) == before);
    assert_int_equal(stat(journal, &sb), 0);
    askdb_db_close(db);
    unlink(journal);
    unlink(path);
}

/* A database named through a symbolic link has its -journal and -wal
** beside the file the link names, where SQLite looks for them: that is
** the file the messages name (they named one beside the link, which
** does not exist). */
static void companions_of_a_linked_database_are_named_where_they_are(
    void **state)
{
    static const char wal_script[] =
        "import os, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA journal_mode=wal')\n"
        "c.execute('PRAGMA wal_autocheckpoint=0')\n"
        "c.execute('CREATE TABLE t(a)')\n"
        "c.execute('INSERT INTO t VALUES (1)')\n"
        "os.unlink(sys.argv[1] + '-shm')\n"
        "os._exit(0)\n";
    char dir[300], real[320], link[320], want[400];
    askdb_config cfg = askdb_config_default();
    askdb_db *db = NULL;
    askdb_result *r = NULL;
    char *const argv[] = {"python3", "-c", (char *)wal_script, real, NULL};
    extern char **environ;
    pid_t pid;
    int status = 0;

    (void)state;
    cfg.in_process = 1;
    snprintf(dir, sizeof dir, "%s/linked", tmpdir);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(real, sizeof real, "%s/real.db", dir);
    snprintf(link, sizeof link, "%s/link.db", tmpdir);
    assert_int_equal(symlink(real, link), 0);

    /* A hot journal left after the open: the statement's message. */
    assert_int_equal(sqlfile_exec(real, fixture_sql), 0);
    db = testdb_open(link, &cfg, NULL);
    sqlfile_die_in_a_write(real);
    snprintf(want, sizeof want, "linked/real.db-journal'), left by");
    assert_int_equal(askdb_db_query(db, "SELECT count(*) FROM emp", &r),
                     ASKDB_ERR_DB);
    if (!strstr(askdb_db_errmsg(db), want))
        fail_msg("no '%s' in: %s", want, askdb_db_errmsg(db));
    askdb_db_close(db);
    /* And at the open. */
    db = NULL;
    assert_int_equal(askdb_db_open(link, &cfg, &db), ASKDB_ERR_DB_OPEN);
    if (!strstr(askdb_db_errmsg(db), want))
        fail_msg("no '%s' in: %s", want, askdb_db_errmsg(db));
    askdb_db_close(db);
    snprintf(want, sizeof want, "%s-journal", real);
    unlink(want);
    unlink(real);

    /* A write-ahead log with no -shm. */
    assert_int_equal(posix_spawnp(&pid, "python3", NULL, NULL, argv,
                                  environ), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    snprintf(want, sizeof want, "linked/real.db-wal') but no");
    db = NULL;
    assert_int_equal(askdb_db_open(link, &cfg, &db), ASKDB_ERR_DB_OPEN);
    if (!strstr(askdb_db_errmsg(db), want))
        fail_msg("no '%s' in: %s", want, askdb_db_errmsg(db));
    askdb_db_close(db);
}

/* A writer's lock (its commit) is waited for while the statement's time
** limit lasts (SQLite alone says "database is locked" at once): a lock
** that ends within it costs only the wait; one that outlasts it fails the
** statement as the database's failure, saying so, at the limit. */
static void locks_are_waited_for_within_the_limit(void **state)
{
    askdb_db *db = open_ok(); /* 300 ms */
    askdb_result *r = NULL;
    struct sqlfile_locker l;
    double t0, ms;

    (void)state;
    sqlfile_lock(&l, dbpath, 150);
    assert_int_equal(askdb_db_query(db, "SELECT count(*) FROM emp", &r),
                     ASKDB_OK);
    assert_int_equal(r->nrows, 1);
    askdb_result_free(r);
    r = NULL;
    sqlfile_lock_end(&l);
    sqlfile_lock(&l, dbpath, 2000);
    t0 = db_now_ms();
    assert_int_equal(askdb_db_query(db, "SELECT count(*) FROM emp", &r),
                     ASKDB_ERR_DB);
    ms = db_now_ms() - t0;
    assert_null(r);
    assert_int_equal(askdb_db_errclass(db), ASKDB_EC_DATABASE);
    assert_non_null(strstr(askdb_db_errmsg(db), "the database is locked: "
                                                "another program is writing"));
    assert_true(ms >= 250 && ms < 1800);
    sqlfile_lock_end(&l);
    /* And afterwards it reads again. */
    assert_int_equal(askdb_db_query(db, "SELECT count(*) FROM emp", &r),
                     ASKDB_OK);
    askdb_result_free(r);
    askdb_db_close(db);
}

/*
** A writer's lock met while the database is opened: the open waits as
** long as one statement may (--timeout), in all, then says how long it
** waited. Each of the statements the open makes waited up to 5 s of its
** own (35 s for --timeout 500).
*/
static void lock_at_open_is_waited_for_within_the_limit(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_db *db = NULL;
    struct sqlfile_locker l;
    double t0, ms, waited;
    const char *m;

    (void)state;
    cfg.query_timeout_ms = 300;
    sqlfile_lock(&l, dbpath, 4000);
    t0 = db_now_ms();
    assert_int_equal(askdb_db_open(dbpath, &cfg, &db), ASKDB_ERR_DB_OPEN);
    ms = db_now_ms() - t0;
    m = askdb_db_errmsg(db);
    assert_non_null(strstr(m, "is locked: another program is writing"));
    /* It says the whole wait: about 300 ms (35 s of waits said 504). */
    assert_non_null(strstr(m, "(waited "));
    waited = atof(strstr(m, "(waited ") + 8);
    assert_true(waited >= 250 && waited < 2000);
    assert_true(ms >= 250 && ms < 2000);
    askdb_db_close(db);
    sqlfile_lock_end(&l);
    /* Once the writer is done it opens. */
    db = open_ok();
    askdb_db_close(db);
}

/* The ways cte_chain() writes each table ck of the chain. */
enum chain { TWICE, ONCE, QUOTED };

/* WITH c0(a) AS (SELECT 1), c1 AS (...), ... ck ... SELECT count(*) FROM
** ck, each ci naming c(i-1) twice (TWICE: SQLite copies c0 2^k times),
** once (ONCE), or twice with quotes of each kind (QUOTED). */
static char *cte_chain(int k, enum chain how)
{
    struct buf b;
    int i;

    buf_init(&b, 0);
    buf_puts(&b, "WITH c0(a) AS (SELECT 1)");
    for (i = 1; i <= k; i++)
        if (how == TWICE)
            buf_printf(&b, ", c%d AS (SELECT x.a FROM c%d x UNION ALL "
                       "SELECT y.a FROM c%d y)", i, i - 1, i - 1);
        else if (how == ONCE)
            buf_printf(&b, ", c%d AS (SELECT a + 1 AS a FROM c%d)", i,
                       i - 1);
        else
            buf_printf(&b, ", \"c%d\" AS MATERIALIZED (SELECT x.a FROM "
                       "[c%d] x, `c%d` y)", i, i - 1, i - 1);
    buf_printf(&b, " SELECT count(*) FROM c%d", k);
    assert_false(buf_err(&b));
    return buf_steal(&b);
}

/*
** SQLite copies a WITH table's query for each reference while it
** prepares, before any step the time limit could stop: a chain whose
** tables each name the one before twice took seconds to prepare at 17
** tables and grows twice as long with each (fuzz_guard's slow input, in
** process with nothing to stop it). The guard counts the copies in one
** pass and refuses over 1000, before SQLite sees the text; the count, not
** the clock, is what this checks. Names in strings and comments, a
** recursive table's own name and a chain that names each table once are
** no copies.
*/
static void with_tables_copied_exponentially_are_refused(void **state)
{
    askdb_db *db = open_ok();
    askdb_result *r = NULL;
    struct db_err e;
    char *sql;

    (void)state;
    /* 8 tables: 2^9 - 1 copies, answered (256 rows counted). */
    sql = cte_chain(8, TWICE);
    if (db_run(db, sql, &r, &e) != ASKDB_OK)
        fail_msg("8 tables: %s", e.msg);
    assert_int_equal(r->cells[0].i, 256);
    askdb_result_free(r);
    free(sql);
    /* 9 tables: 2^10 - 1, refused before it is prepared. */
    sql = cte_chain(9, TWICE);
    r = NULL;
    assert_int_equal(db_run(db, sql, &r, &e), ASKDB_ERR_DB);
    assert_null(r);
    assert_int_equal(e.ec, ASKDB_EC_RUNTIME);
    assert_non_null(strstr(e.msg, "more than 1000 times"));
    free(sql);
    /* The slow input itself: 40 tables, refused as fast. */
    sql = cte_chain(40, TWICE);
    assert_int_equal(db_run(db, sql, &r, &e), ASKDB_ERR_DB);
    free(sql);
    /* Quoted names are the same names. */
    sql = cte_chain(9, QUOTED);
    assert_int_equal(db_run(db, sql, &r, &e), ASKDB_ERR_DB);
    free(sql);
    /* Each named once: 300 tables are 300 copies at most. */
    sql = cte_chain(300, ONCE);
    assert_int_equal(db_run(db, sql, &r, &e), ASKDB_OK);
    askdb_result_free(r);
    free(sql);
    assert_int_equal(db_run(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION "
                                "ALL SELECT x + 1 FROM c WHERE x < 3) "
                                "SELECT 'c c c c', count(*) FROM c, c AS d "
                                "/* c c c */", &r, &e), ASKDB_OK);
    assert_int_equal(r->cells[1].i, 9);
    askdb_result_free(r);
    askdb_db_close(db);
}

/*
** SQLite finds a WITH table named anywhere in its WITH clause, a later
** one too, and a name in a nested WITH hides an outer table only inside
** the query it belongs to: the count follows both, so a chain written
** last table first, or one that a nested WITH of the same name seems to
** cut, is refused as the plain chain is (either took seconds and more to
** prepare at 17 tables). A table's name as a qualifier (b.x) is no copy:
** an ordinary query that names its tables' columns so is answered.
*/
static void with_tables_are_counted_as_sqlite_finds_them(void **state)
{
    askdb_db *db = open_ok();
    askdb_result *r = NULL;
    struct db_err e;
    struct buf b;
    char *sql;
    int i;

    (void)state;
    /* Last table first: 9 tables naming the next one twice. */
    buf_init(&b, 0);
    buf_puts(&b, "WITH ");
    for (i = 9; i >= 1; i--)
        buf_printf(&b, "c%d AS (SELECT x.a FROM c%d x UNION ALL "
                   "SELECT y.a FROM c%d y), ", i, i - 1, i - 1);
    buf_puts(&b, "c0(a) AS (SELECT 1) SELECT count(*) FROM c9");
    sql = buf_steal(&b);
    if (db_run(db, sql, &r, &e) != ASKDB_ERR_DB)
        fail_msg("a chain written last table first was answered");
    assert_non_null(strstr(e.msg, "more than 1000 times"));
    free(sql);
    /* c8 (511 copies) named twice after a nested WITH's own c8. */
    buf_init(&b, 0);
    buf_puts(&b, "WITH c0(a) AS (SELECT 1)");
    for (i = 1; i <= 8; i++)
        buf_printf(&b, ", c%d AS (SELECT x.a FROM c%d x UNION ALL "
                   "SELECT y.a FROM c%d y)", i, i - 1, i - 1);
    buf_puts(&b, ", s AS (WITH c8(a) AS (SELECT 2) SELECT a FROM c8), "
             "d AS (SELECT x.a FROM c8 x UNION ALL SELECT y.a FROM c8 y) "
             "SELECT count(*) FROM d");
    sql = buf_steal(&b);
    r = NULL;
    if (db_run(db, sql, &r, &e) != ASKDB_ERR_DB)
        fail_msg("a chain behind a nested WITH of the same name was "
                 "answered");
    free(sql);
    /* A quote doubled in a name stands for one, whatever the quotes. */
    buf_init(&b, 0);
    buf_puts(&b, "WITH \"c0\"\"q\"(a) AS (SELECT 1)");
    for (i = 1; i <= 9; i++)
        buf_printf(&b, ", \"c%d\"\"q\" AS (SELECT x.a FROM [c%d\"q] x "
                   "UNION ALL SELECT y.a FROM `c%d\"q` y)", i, i - 1, i - 1);
    buf_puts(&b, " SELECT count(*) FROM \"c9\"\"q\"");
    sql = buf_steal(&b);
    r = NULL;
    if (db_run(db, sql, &r, &e) != ASKDB_ERR_DB)
        fail_msg("a chain of names with a doubled quote was answered");
    free(sql);
    /* Five tables, each named once, its columns qualified by its name. */
    r = NULL;
    if (db_run(db, "WITH a AS (SELECT 1 AS x, 2 AS y, 3 AS z), "
               "b AS (SELECT a.x, a.y, a.z, a.x + a.y AS s FROM a "
               "WHERE a.z > 0), "
               "c AS (SELECT b.x, b.y, b.z, b.s FROM b WHERE b.x > 0), "
               "d AS (SELECT c.x, c.y, c.z, c.s FROM c WHERE c.y > 0), "
               "e AS (SELECT d.x, d.y FROM d WHERE d.s > 0 AND d.z > 0) "
               "SELECT e.x, e.y FROM e WHERE e.x > 0 AND e.y > 0",
               &r, &e) != ASKDB_OK)
        fail_msg("qualified columns: %s", e.msg);
    assert_int_equal(r->nrows, 1);
    askdb_result_free(r);
    askdb_db_close(db);
}

static void slow_query_is_interrupted_at_the_limit(void **state)
{
    askdb_db *db = open_ok(); /* 300 ms */
    askdb_result *r = NULL;
    struct db_err e;
    double t0 = db_now_ms(), ms;

    (void)state;
    assert_int_equal(db_run(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                                "SELECT x + 1 FROM c) SELECT count(*) FROM c",
                            &r, &e), ASKDB_ERR_TIMEOUT);
    ms = db_now_ms() - t0;
    assert_int_equal(e.ec, ASKDB_EC_TIMEOUT);
    assert_non_null(strstr(e.msg, "300 ms"));
    assert_true(ms >= 300 && ms < 3000);
    /* The handle is usable afterwards. */
    assert_int_equal(db_run(db, "SELECT 1", &r, &e), ASKDB_OK);
    askdb_result_free(r);
    askdb_db_close(db);
}

/*
** count(*) over a whole table is one VDBE instruction (a walk over every
** b-tree page) that the progress handler never interrupts: the watchdog
** must. A table of about 100,000 one-row pages (page size 512), warm in
** the page cache, takes a few hundred ms to count.
*/
static void count_over_a_big_table_stops_at_the_limit(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_db *db = NULL;
    askdb_result *r = NULL;
    struct db_err e;
    char p[400];
    double t0, full, ms;

    (void)state;
    snprintf(p, sizeof p, "%s/big.db", tmpdir);
    assert_int_equal(sqlfile_exec(p, "PRAGMA page_size = 512;"
                                     "PRAGMA journal_mode = OFF;"
                                     "CREATE TABLE t (x);"
                                     "WITH RECURSIVE c(i) AS (SELECT 1 UNION "
                                     "ALL SELECT i + 1 FROM c LIMIT 100000) "
                                     "INSERT INTO t SELECT zeroblob(400) "
                                     "FROM c;"), 0);

    cfg.query_timeout_ms = 60000;
    assert_int_equal(askdb_db_open(p, &cfg, &db), ASKDB_OK);
    t0 = db_now_ms();
    assert_int_equal(db_run(db, "SELECT count(*) FROM t", &r, &e), ASKDB_OK);
    full = db_now_ms() - t0;
    assert_int_equal(askdb_result_cell(r, 0, 0)->i, 100000);
    askdb_result_free(r);
    askdb_db_close(db);

    cfg.query_timeout_ms = 5;
    db = NULL;
    assert_int_equal(askdb_db_open(p, &cfg, &db), ASKDB_OK);
    r = NULL;
    t0 = db_now_ms();
    if (db_run(db, "SELECT count(*) FROM t", &r, &e) != ASKDB_ERR_TIMEOUT)
        fail_msg("not interrupted (the whole count takes %.0f ms)", full);
    ms = db_now_ms() - t0;
    assert_null(r);
    assert_int_equal(e.ec, ASKDB_EC_TIMEOUT);
    assert_non_null(strstr(e.msg, "5 ms"));
    if (ms > full / 2)
        fail_msg("interrupted after %.0f ms (5 ms limit, the whole count "
                 "takes %.0f ms)", ms, full);
    /* The next statement is not hit by that interrupt. */
    assert_int_equal(db_run(db, "SELECT 1", &r, &e), ASKDB_OK);
    askdb_result_free(r);
    askdb_db_close(db);
    unlink(p);
}

/* A cancel (askdb_db_cancel, Ctrl-C) raised while a statement of a
** handle that runs them in this process spends its time in one long step
** (count(*) walking a whole table, which no progress handler sees) stops
** it at once, as the time limit does; it ran to its end, the time limit
** (10 s by default) the only other stop. */
struct canceller {
    askdb_db *db;
    int after_ms;
};

static void *cancel_later(void *arg)
{
    struct canceller *c = arg;
    struct timespec ts = {0, (long)c->after_ms * 1000000L};

    nanosleep(&ts, NULL);
    askdb_db_cancel(c->db);
    return NULL;
}

static void cancel_stops_a_count_over_a_big_table(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_db *db = NULL;
    askdb_result *r = NULL;
    struct canceller c;
    pthread_t th;
    char p[400];
    double t0, full, ms;
    askdb_status st;

    (void)state;
    snprintf(p, sizeof p, "%s/bigc.db", tmpdir);
    assert_int_equal(sqlfile_exec(p, "PRAGMA page_size = 512;"
                                     "PRAGMA journal_mode = OFF;"
                                     "CREATE TABLE t (x);"
                                     "WITH RECURSIVE c(i) AS (SELECT 1 UNION "
                                     "ALL SELECT i + 1 FROM c LIMIT 200000) "
                                     "INSERT INTO t SELECT zeroblob(400) "
                                     "FROM c;"), 0);
    cfg.query_timeout_ms = 60000;
    cfg.in_process = 1;
    assert_int_equal(askdb_db_open(p, &cfg, &db), ASKDB_OK);
    t0 = db_now_ms();
    assert_int_equal(askdb_db_query(db, "SELECT count(*) FROM t", &r),
                     ASKDB_OK);
    full = db_now_ms() - t0;
    askdb_result_free(r);
    r = NULL;
    c.db = db;
    c.after_ms = 5;
    t0 = db_now_ms();
    assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
    st = askdb_db_query(db, "SELECT count(*) FROM t", &r);
    ms = db_now_ms() - t0;
    pthread_join(th, NULL);
    if (st != ASKDB_ERR_CANCELLED)
        fail_msg("not cancelled: %d after %.0f ms (the whole count takes "
                 "%.0f ms)", (int)st, ms, full);
    assert_null(r);
    assert_string_equal(askdb_db_errmsg(db), "cancelled");
    if (ms > full * 3 / 4)
        fail_msg("cancelled after %.0f ms (the whole count takes %.0f ms)",
                 ms, full);
    /* The next statement runs, the flag lowered. */
    askdb_db_uncancel(db);
    assert_int_equal(askdb_db_query(db, "SELECT 1", &r), ASKDB_OK);
    askdb_result_free(r);
    askdb_db_close(db);
    unlink(p);
}

static void rows_and_bytes_are_capped(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_db *db = NULL;
    askdb_result *r = NULL;
    const char *many = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT "
                       "x + 1 FROM c LIMIT 50) SELECT x, 'abcdefghij' FROM c";

    (void)state;
    cfg.max_rows = 10;
    assert_int_equal(askdb_db_open(dbpath, &cfg, &db), ASKDB_OK);
    assert_int_equal(askdb_db_query(db, many, &r), ASKDB_OK);
    assert_int_equal(r->nrows, 10);
    assert_int_equal(r->truncated, 1);
    askdb_result_free(r);
    askdb_db_close(db);

    /* A row costs its values (8 + 10 bytes) and its two cells; the row
    ** that would go over the cap is not taken. */
    cfg.max_rows = 1000;
    cfg.max_bytes = 3 * (2 * sizeof(askdb_value) + 18) + 10;
    db = NULL;
    assert_int_equal(askdb_db_open(dbpath, &cfg, &db), ASKDB_OK);
    assert_int_equal(askdb_db_query(db, many, &r), ASKDB_OK);
    assert_int_equal(r->nrows, 3);
    assert_int_equal(r->truncated, 2);
    askdb_result_free(r);
    askdb_db_close(db);
}

/* Peak resident memory of this process, in MiB. */
static long peak_rss_mib(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

/*
** A single value larger than the byte cap is never made (SQLite's own
** length limit is the cap while the statement runs), so memory stays
** small and the result says it stopped at the size limit; a row whose
** values each fit but not together is not copied; NULL cells count what
** they cost, so many columns cannot multiply the cap.
*/
static void huge_values_stop_at_the_byte_cap(void **state)
{
    static const struct {
        const char *sql;
        int error;   /* 1 refused: a value over SQLite's length limit; 2
                        failed: the first row alone over the result's cap
                        (no rows to give, not an empty result) */
        long nrows;
        int truncated;
    } huge[] = {
        {"SELECT zeroblob(200000000) AS z", 1, 0, 0},
        {"SELECT length(randomblob(200000000)) AS n", 1, 0, 0},
        {"SELECT replace(printf('%.*c', 1000, 'x'), 'x', 'padding!') AS r",
         2, 0, 0},
        {"SELECT 1 AS a UNION ALL SELECT zeroblob(200000000)", 1, 0, 0},
        /* Under the length limit: made, but over the result's cap. */
        {"SELECT printf('%.*c', 1000000, 'x') AS p", 2, 0, 0},
        /* SQLite's own printf() would build it for seconds and then give
        ** NULL; askdb's refuses the width at once. */
        {"SELECT printf('%.*c', 100000000, 'x') AS p", 1, 0, 0},
        {NULL, 0, 0, 0}
    };
    askdb_config cfg = askdb_config_default();
    askdb_db *db = NULL;
    askdb_result *r;
    struct buf nulls;
    long before = peak_rss_mib();
    int i;

    (void)state;
    cfg.max_bytes = 4000;
    assert_int_equal(askdb_db_open(dbpath, &cfg, &db), ASKDB_OK);
    for (i = 0; huge[i].sql; i++) {
        r = NULL;
        if (huge[i].error) {
            assert_int_equal(askdb_db_query(db, huge[i].sql, &r),
                             ASKDB_ERR_DB);
            assert_null(r);
            assert_non_null(strstr(askdb_db_errmsg(db),
                                   huge[i].error == 1
                                       ? "value or row larger than "
                                         "16777216 bytes"
                                       : "the first row alone is larger "
                                         "than the 4000-byte result cap"));
            continue;
        }
        if (askdb_db_query(db, huge[i].sql, &r) != ASKDB_OK)
            fail_msg("%s: %s", huge[i].sql, askdb_db_errmsg(db));
        if (r->nrows != huge[i].nrows || r->truncated != huge[i].truncated)
            fail_msg("%s: %ld rows, truncated %d", huge[i].sql, r->nrows,
                     r->truncated);
        askdb_result_free(r);
    }
    /* Each value fits, the row does not: nothing of it is copied, and
    ** the statement fails saying so. */
    r = NULL;
    assert_int_equal(askdb_db_query(db, "SELECT zeroblob(3000) AS a, "
                                        "zeroblob(3000) AS b", &r),
                     ASKDB_ERR_DB);
    assert_null(r);
    assert_int_equal(askdb_db_errclass(db), ASKDB_EC_RUNTIME);
    assert_string_equal(askdb_db_errmsg(db),
                        "the first row alone is larger than the 4000-byte "
                        "result cap (--max-bytes); select fewer or shorter "
                        "columns (length() or substr() of long text)");
    assert_true(peak_rss_mib() - before < 100);
    /* The handle still works afterwards. */
    r = NULL;
    assert_int_equal(askdb_db_query(db, "SELECT length(zeroblob(100))", &r),
                     ASKDB_OK);
    assert_int_equal(askdb_result_cell(r, 0, 0)->i, 100);
    askdb_result_free(r);
    askdb_db_close(db);

    /* 100 NULL columns: 100 cells a row, whatever their values. */
    buf_init(&nulls, 0);
    buf_puts(&nulls, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                     "FROM c LIMIT 1000) SELECT NULL");
    for (i = 1; i < 100; i++)
        buf_puts(&nulls, ", NULL");
    buf_puts(&nulls, " FROM c");
    assert_false(buf_err(&nulls));
    cfg.max_bytes = 10 * 100 * sizeof(askdb_value);
    db = NULL;
    assert_int_equal(askdb_db_open(dbpath, &cfg, &db), ASKDB_OK);
    r = NULL;
    assert_int_equal(askdb_db_query(db, nulls.data, &r), ASKDB_OK);
    assert_int_equal(r->nrows, 10);
    assert_int_equal(r->truncated, 2);
    askdb_result_free(r);
    askdb_db_close(db);
    buf_free(&nulls);
}

/* A table row larger than the result's byte cap can still be filtered
** and counted (SQLite's length limit is not the result cap); only a
** result row over the cap is cut. */
static void rows_bigger_than_the_cap_stay_readable(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_db *db = NULL;
    askdb_result *r = NULL;
    char path[400];

    (void)state;
    snprintf(path, sizeof path, "%s/big.db", tmpdir);
    assert_int_equal(sqlfile_exec(path,
                         "CREATE TABLE docs (id INTEGER PRIMARY KEY, "
                         "title TEXT, body TEXT);"
                         "INSERT INTO docs VALUES (1, 'X', "
                         "printf('%.*c', 100000, 'y')), (2, 'Y', 'short');"),
                     0);
    cfg.max_bytes = 4000;
    assert_int_equal(askdb_db_open(path, &cfg, &db), ASKDB_OK);
    assert_int_equal(askdb_db_query(db, "SELECT count(*) FROM docs WHERE "
                                        "title = 'X'", &r), ASKDB_OK);
    assert_int_equal(r->nrows, 1);
    assert_int_equal(r->truncated, 0);
    assert_int_equal(askdb_result_cell(r, 0, 0)->i, 1);
    askdb_result_free(r);
    r = NULL;
    assert_int_equal(askdb_db_query(db, "SELECT length(body) FROM docs "
                                        "ORDER BY id", &r), ASKDB_OK);
    assert_int_equal(r->nrows, 2);
    assert_int_equal(askdb_result_cell(r, 0, 0)->i, 100000);
    askdb_result_free(r);
    r = NULL;
    assert_int_equal(askdb_db_query(db, "SELECT body FROM docs WHERE "
                                        "id = 1", &r), ASKDB_ERR_DB);
    assert_null(r);
    assert_non_null(strstr(askdb_db_errmsg(db), "the first row alone"));
    askdb_db_close(db);
    assert_int_equal(unlink(path), 0);
}

/* A zeroed or negative config (not from askdb_config_default()) keeps
** every limit: 0 or less means the default, never "no limit". */
static void zero_or_negative_limits_mean_the_defaults(void **state)
{
    askdb_config cfg, dflt = askdb_config_default();
    askdb_db *db = NULL;
    askdb_result *r = NULL;

    (void)state;
    memset(&cfg, 0, sizeof cfg);
    assert_int_equal(askdb_db_open(dbpath, &cfg, &db), ASKDB_OK);
    assert_int_equal(db->query_timeout_ms, dflt.query_timeout_ms);
    assert_int_equal(db_timeout_ms(db), dflt.query_timeout_ms);
    assert_int_equal(db->max_rows, dflt.max_rows);
    assert_true(db->max_bytes == dflt.max_bytes);
    assert_int_equal(db->count_cap, dflt.count_cap);
    assert_int_equal(askdb_db_query(db, "SELECT id FROM emp", &r), ASKDB_OK);
    assert_int_equal(r->nrows, 3);
    assert_int_equal(r->truncated, 0);
    askdb_result_free(r);
    askdb_db_close(db);

    cfg.query_timeout_ms = -1;
    cfg.max_rows = -5;
    cfg.count_cap = -1;
    db = NULL;
    assert_int_equal(askdb_db_open(dbpath, &cfg, &db), ASKDB_OK);
    assert_int_equal(db->query_timeout_ms, dflt.query_timeout_ms);
    assert_int_equal(db_timeout_ms(db), dflt.query_timeout_ms);
    assert_int_equal(db->max_rows, dflt.max_rows);
    assert_int_equal(db->count_cap, dflt.count_cap);
    r = NULL;
    assert_int_equal(askdb_db_query(db, "SELECT id FROM emp", &r), ASKDB_OK);
    assert_int_equal(r->nrows, 3);
    askdb_result_free(r);
    askdb_db_close(db);
}

/* The largest limits the config's types hold are limits, not overflows:
** counting stops one row past count_cap (to tell a table at the cap from
** a larger one), and LONG_MAX + 1 was signed overflow (UBSan stops the
** test) on a table past the sample's rows whose count is a scan
** (WITHOUT ROWID), in this process and in askdb-exec; and a CSV file
** (DuckDB) is counted to count_cap + 1 as it opens. The handle holds
** the largest limits it takes (db.h). */
static void largest_limits_the_config_holds_do_not_overflow(void **state)
{
    askdb_config cfg = askdb_config_default();
    askdb_db *db = NULL;
    askdb_result *r = NULL;
    char p[400], csv[400], *json = NULL;
    int in_process, helper;

    (void)state;
    snprintf(p, sizeof p, "%s/wide.db", tmpdir);
    snprintf(csv, sizeof csv, "%s/k.csv", tmpdir);
    assert_int_equal(sqlfile_exec(p, "CREATE TABLE k (id INTEGER PRIMARY "
                                     "KEY, v TEXT) WITHOUT ROWID;"
                                     "WITH RECURSIVE c(i) AS (SELECT 1 UNION "
                                     "ALL SELECT i + 1 FROM c LIMIT 300) "
                                     "INSERT INTO k SELECT i, 'v' || i "
                                     "FROM c;"), 0);
    assert_int_equal(file_write(csv, "a,b\n1,x\n2,y\n3,z\n", 16), 0);
    cfg.count_cap = LONG_MAX;
    cfg.max_rows = LONG_MAX;
    cfg.max_bytes = SIZE_MAX;
    cfg.query_timeout_ms = INT_MAX;
    cfg.sample_values = INT_MAX;
    helper = test_use_exec_helper();
    for (in_process = 0; in_process < 2; in_process++) {
        cfg.in_process = in_process;
        db = NULL;
        assert_int_equal(askdb_db_open(p, &cfg, &db), ASKDB_OK);
        /* In askdb-exec indeed, when not in this process. */
        assert_true(in_process ? !db->iso : db->iso != NULL);
        /* What the engines get (MariaDB's session: max_rows + 1 and the
        ** limit plus a grace, which no unit test reaches). */
        assert_int_equal(db->count_cap, DB_COUNT_CAP_MAX);
        assert_int_equal(db->max_rows, DB_MAX_ROWS_MAX);
        assert_int_equal(db->query_timeout_ms, DB_TIMEOUT_MAX_MS);
        assert_int_equal(askdb_db_schema_json(db, 0, &json), ASKDB_OK);
        if (!strstr(json, "\"rows\":300,\"rows_capped\":false"))
            fail_msg("in_process %d: no exact count in %.300s", in_process,
                     json);
        askdb_free(json);
        json = NULL;
        assert_int_equal(askdb_db_query(db, "SELECT count(*) FROM k", &r),
                         ASKDB_OK);
        assert_int_equal(askdb_result_cell(r, 0, 0)->i, 300);
        askdb_result_free(r);
        r = NULL;
        askdb_db_close(db);
        db = NULL;
        assert_int_equal(askdb_db_open(csv, &cfg, &db), ASKDB_OK);
        assert_int_equal(askdb_db_query(db, "SELECT count(*) FROM k", &r),
                         ASKDB_OK);
        assert_int_equal(askdb_result_cell(r, 0, 0)->i, 3);
        askdb_result_free(r);
        r = NULL;
        askdb_db_close(db);
    }
    test_no_exec_helper(helper);
    unlink(p);
    unlink(csv);
}

/* A URL's password never reaches a message: the label drops it, an
** unknown scheme is a usage error naming only the scheme. */
static void urls_lose_their_passwords(void **state)
{
    static const char *const cases[][2] = {
        {"postgresql://ann:s3cret@db.example:5432/shop?sslmode=require",
         "postgresql://ann@db.example:5432/shop?sslmode=require"},
        {"mariadb://ann:p%40ss@h/shop", "mariadb://ann@h/shop"},
        {"postgresql://h/shop?user=ann&password=s3cret&sslmode=disable",
         "postgresql://h/shop?user=ann&password=xxx&sslmode=disable"},
        {"postgresql://ann:a@b@h/x", "postgresql://ann@h/x"},
        {"postgresql://ann:a#b@h/x", "postgresql://ann@h/x"},
        {"postgresql://ann:p@ss:w#r%3Fd@h:5/x?password=y",
         "postgresql://ann@h:5/x?password=xxx"},
        /* An '@' after a '/' or '?': all from the first ':' to the last
        ** '@' may be the password's. */
        {"mariadb://ann:pa/ss@h/shop", "mariadb://ann:xxx@h/shop"},
        {"mariadb://ann:pa?ss@h:5/shop", "mariadb://ann:xxx@h:5/shop"},
        {"mariadb://ann:p@a/s?s@h/x?ssl=require",
         "mariadb://ann:xxx@h/x?ssl=require"},
        {"mariadb://h:3306/a@b", "mariadb://h:xxx@b"},
        {"mariadb://ann@h/x?password=a/b@c", "mariadb://ann@h/x?password=xxx"},
        /* ... with a port: that ':' is the first, and the last '@' is
        ** inside the password= value, whose tail goes too. */
        {"postgresql://app@db:5432/prod?password=Summer@2024",
         "postgresql://app@db:xxx"},
        {"mariadb://ann@h:3306/x?password=a/b@c&ssl=require",
         "mariadb://ann@h:xxx&ssl=require"},
        {"mariadb://ann@h:3306/x?Password=a@c#f", "mariadb://ann@h:xxx#f"},
        {"mariadb://h/a@b", "mariadb://h/a@b"},
        {"examples/shop.db", "examples/shop.db"},
        {"/tmp/a:b@c.db", "/tmp/a:b@c.db"},
        {"host=h password=s3cret user=u", "host=h password=xxx user=u"},
        {"dbname=d password = 'a \\' b' x=1", "dbname=d password = xxx x=1"},
        {"my password=x.db", "my password=x.db"},
    };
    size_t i;
    askdb_db *db = NULL;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *r = db_redact(cases[i][0]);
        assert_non_null(r);
        assert_string_equal(r, cases[i][1]);
        free(r);
    }
    assert_int_equal(db_url_scheme("postgresql://x"), 10);
    assert_int_equal(db_url_scheme("c:/x"), 0);
    assert_int_equal(db_url_scheme("shop.db"), 0);
    assert_int_equal(askdb_db_open("gopher://ann:s3cret@h/x", NULL, &db),
                     ASKDB_ERR_USAGE);
    assert_non_null(strstr(askdb_db_errmsg(db), "gopher://"));
    assert_null(strstr(askdb_db_errmsg(db), "s3cret"));
    assert_null(strstr(askdb_db_label(db), "s3cret"));
    askdb_db_close(db);
    /* Text by declared type, as the strict engines declare it. */
    assert_true(db_text_type("character varying(40)"));
    assert_true(db_text_type("VARCHAR"));
    assert_true(db_text_type("text"));
    assert_true(db_text_type("enum('a','b')"));
    assert_false(db_text_type("integer"));
    assert_false(db_text_type("numeric(10,2)"));
    assert_false(db_text_type("timestamp without time zone"));
    assert_false(db_text_type(""));
}

/* ---- the watchdog (db/watch.c) ---------------------------------------- */

struct stops {
    atomic_int n;
    atomic_int why;
};

static void count_stop(void *ud, int why)
{
    struct stops *st = ud;

    atomic_store(&st->why, why);
    atomic_fetch_add(&st->n, 1);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Wait up to ms for st->n to reach n. */
static int stops_reach(struct stops *st, int n, int ms)
{
    double end = db_now_ms() + ms;

    while (atomic_load(&st->n) < n && db_now_ms() < end)
        sleep_ms(2);
    return atomic_load(&st->n) >= n;
}

/* A stop that takes its time (a kill connection being made on a slow
** server) until the test opens its gate (or 2 s have passed, so that a
** watchdog that waits for it fails the test instead of hanging it),
** then reaches the statement only while it runs. */
struct slow {
    struct db_watch *w;
    atomic_int started, acted, done, gate;
};

static void slow_stop(void *ud, int why)
{
    struct slow *sl = ud;
    double t0 = db_now_ms();
    (void)why;

    atomic_store(&sl->started, 1);
    while (!atomic_load(&sl->gate) && db_now_ms() - t0 < 2000)
        sleep_ms(2);
    if (sl->w && db_watch_hold(sl->w)) {
        atomic_fetch_add(&sl->acted, 1);
        db_watch_release(sl->w);
    }
    atomic_fetch_add(&sl->done, 1);
}

static void slow_init(struct slow *sl)
{
    atomic_init(&sl->started, 0);
    atomic_init(&sl->acted, 0);
    atomic_init(&sl->done, 0);
    atomic_init(&sl->gate, 0);
}

/* The statement ended while its stop was still making its connection:
** its thread goes on at once (it waited out the stop: MariaDB's KILL
** QUERY, made from a second connection, can take seconds), and the next
** statement starts once the stop is over. */
static void watchdog_disarm_does_not_wait_for_a_stop_under_way(void **state)
{
    struct db_watch w;
    struct slow sl = {0};
    double t;
    (void)state;

    slow_init(&sl);
    db_watch_init(&w, slow_stop, &sl, 10, 128 * 1024);
    assert_true(w.ready);
    assert_int_equal(db_watch_arm(&w, db_now_ms() + 20, NULL), 1);
    while (!atomic_load(&sl.started))
        sleep_ms(2);
    t = db_now_ms();
    assert_int_equal(db_watch_disarm(&w), DB_WATCH_DEADLINE);
    assert_true(db_now_ms() - t < 200);
    assert_int_equal(atomic_load(&sl.done), 0);
    atomic_store(&sl.gate, 1);
    db_watch_arm(&w, 0, NULL);
    assert_int_equal(atomic_load(&sl.done), 1);
    assert_int_equal(db_watch_disarm(&w), 0);
    db_watch_end(&w);
}

/* What a stop under way does to the statement it does only while the
** statement runs: never once it was disarmed, nor to the next one. */
static void watchdog_stop_reaches_no_statement_after_disarm(void **state)
{
    struct db_watch w;
    struct slow sl = {0};
    (void)state;

    slow_init(&sl);
    sl.w = &w;
    db_watch_init(&w, slow_stop, &sl, 10, 128 * 1024);
    assert_true(w.ready);

    /* Disarmed while the stop gets ready: it reaches nothing. */
    db_watch_arm(&w, db_now_ms() + 20, NULL);
    while (!atomic_load(&sl.started))
        sleep_ms(2);
    assert_int_equal(db_watch_disarm(&w), DB_WATCH_DEADLINE);
    atomic_store(&sl.gate, 1);
    db_watch_settle(&w);
    assert_int_equal(atomic_load(&sl.done), 1);
    assert_int_equal(atomic_load(&sl.acted), 0);

    /* Still running: it does. */
    atomic_store(&sl.started, 0);
    db_watch_arm(&w, db_now_ms() + 20, NULL);
    while (atomic_load(&sl.done) < 2)
        sleep_ms(2);
    assert_int_equal(atomic_load(&sl.acted), 1);
    assert_int_equal(db_watch_disarm(&w), DB_WATCH_DEADLINE);

    /* The statement's own thread stops it (a full result): the same
    ** stop, at once, holding the watchdog as it reaches the statement. */
    db_watch_arm(&w, 0, NULL);
    assert_int_equal(db_watch_fire(&w, 3), 1);
    assert_int_equal(atomic_load(&sl.acted), 2);
    assert_int_equal(db_watch_disarm(&w), 3);
    db_watch_end(&w);
}

static void watchdog_stops_once_and_never_after_disarm(void **state)
{
    struct db_watch w;
    struct stops st;
    atomic_int flag;
    (void)state;

    atomic_init(&st.n, 0);
    atomic_init(&st.why, 0);
    atomic_init(&flag, 0);
    db_watch_init(&w, count_stop, &st, 10, 128 * 1024);
    assert_true(w.ready);

    /* Nothing to watch: no thread; the statement's own thread may still
    ** fire, once, and not after the disarm. */
    assert_int_equal(db_watch_arm(&w, 0, NULL), 0);
    assert_int_equal(db_watch_fire(&w, 3), 1);
    assert_int_equal(db_watch_fire(&w, 3), 0);
    assert_int_equal(atomic_load(&st.n), 1);
    assert_int_equal(atomic_load(&st.why), 3);
    assert_int_equal(db_watch_disarm(&w), 3);
    assert_int_equal(db_watch_fire(&w, 3), 0);

    /* A deadline: stopped once, however long the statement goes on. */
    assert_int_equal(db_watch_arm(&w, db_now_ms() + 30, NULL), 1);
    assert_true(stops_reach(&st, 2, 5000));
    sleep_ms(100);
    assert_int_equal(atomic_load(&st.n), 2);
    assert_int_equal(atomic_load(&st.why), DB_WATCH_DEADLINE);
    assert_int_equal(db_watch_disarm(&w), DB_WATCH_DEADLINE);

    /* Disarmed before its deadline: never stopped, and the next
    ** statement starts clean. */
    db_watch_arm(&w, db_now_ms() + 60, NULL);
    assert_int_equal(db_watch_disarm(&w), 0);
    sleep_ms(150);
    assert_int_equal(atomic_load(&st.n), 2);

    /* The cancel flag, looked at every tick, before a far deadline. */
    db_watch_arm(&w, db_now_ms() + 60000, &flag);
    sleep_ms(30);
    assert_int_equal(atomic_load(&st.n), 2);
    atomic_store(&flag, 1);
    assert_true(stops_reach(&st, 3, 5000));
    assert_int_equal(atomic_load(&st.why), DB_WATCH_CANCEL);
    assert_int_equal(db_watch_disarm(&w), DB_WATCH_CANCEL);

    /* The flag lowered again: the next statement runs on. */
    atomic_store(&flag, 0);
    db_watch_arm(&w, 0, &flag);
    sleep_ms(50);
    assert_int_equal(db_watch_disarm(&w), 0);
    assert_int_equal(atomic_load(&st.n), 3);
    db_watch_end(&w);
    assert_false(w.ready);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_path_is_an_error_and_creates_nothing),
        cmocka_unit_test(directory_and_junk_file_are_refused),
        cmocka_unit_test(schema_reads_keys_samples_and_counts),
        cmocka_unit_test(samples_are_short_distinct_copies_up_to_per_col),
        cmocka_unit_test(results_start_with_empty_columns),
        cmocka_unit_test(result_rows_are_added_zeroed_and_counted),
        cmocka_unit_test(schema_text_is_compact_create_table),
        cmocka_unit_test(generated_columns_are_in_the_schema),
        cmocka_unit_test(text_with_a_nul_is_no_sample),
        cmocka_unit_test(namespaced_tables_render_qualified),
        cmocka_unit_test(broken_views_and_unknown_modules_are_left_out),
        cmocka_unit_test(query_keeps_value_types),
        cmocka_unit_test(randomblob_differs_from_row_to_row),
        cmocka_unit_test(writes_and_escapes_are_refused),
        cmocka_unit_test(two_statements_are_refused_as_every_driver_says),
        cmocka_unit_test(introspection_pragmas_are_allowed),
        cmocka_unit_test(json_table_functions_are_allowed),
        cmocka_unit_test(parameters_are_a_syntax_error),
        cmocka_unit_test(errors_are_classified),
        cmocka_unit_test(hot_journal_after_opening_is_explained),
        cmocka_unit_test(
            companions_of_a_linked_database_are_named_where_they_are),
        cmocka_unit_test(locks_are_waited_for_within_the_limit),
        cmocka_unit_test(lock_at_open_is_waited_for_within_the_limit),
        cmocka_unit_test(with_tables_copied_exponentially_are_refused),
        cmocka_unit_test(with_tables_are_counted_as_sqlite_finds_them),
        cmocka_unit_test(slow_query_is_interrupted_at_the_limit),
        cmocka_unit_test(count_over_a_big_table_stops_at_the_limit),
        cmocka_unit_test(cancel_stops_a_count_over_a_big_table),
        cmocka_unit_test(rows_and_bytes_are_capped),
        cmocka_unit_test(huge_values_stop_at_the_byte_cap),
        cmocka_unit_test(rows_bigger_than_the_cap_stay_readable),
        cmocka_unit_test(zero_or_negative_limits_mean_the_defaults),
        cmocka_unit_test(largest_limits_the_config_holds_do_not_overflow),
        cmocka_unit_test(urls_lose_their_passwords),
        cmocka_unit_test(conninfo_path_is_told_to_use_a_url),
        cmocka_unit_test(watchdog_stops_once_and_never_after_disarm),
        cmocka_unit_test(watchdog_disarm_does_not_wait_for_a_stop_under_way),
        cmocka_unit_test(watchdog_stop_reaches_no_statement_after_disarm),
    };
    test_filter_from_env();
    return cmocka_run_group_tests_name("db", tests, setup,
                                       tmpdir_teardown);
}
