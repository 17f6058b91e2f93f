/* test_grammar.c - the constrained-decoding grammar, checked by llama.cpp's
** own grammar engine: real queries pass, unknown names and writes do not. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/schema.h"
#include "sql/extract.h"
#include "sql/grammar.h"

#ifdef ASKDB_HAVE_LLAMA
#include <llama.h>

#include "eval/suite.h"
#endif

/* A schema of our own: a column with a space, one named like a keyword,
** a table that needs quotes, and names shared by two tables. */
static struct db_column emp_cols[] = {
    {"id", "INTEGER", 0, NULL, 1, NULL, 0, NULL},
    {"name", "TEXT", 0, NULL, 0, NULL, 0, NULL},
    {"dept_id", "INTEGER", 0, NULL, 0, NULL, 0, NULL},
    {"salary", "REAL", 0, NULL, 0, NULL, 0, NULL},
    {"hired", "DATE", 0, NULL, 0, NULL, 0, NULL},
    {"first name", "TEXT", 0, NULL, 0, NULL, 0, NULL},
    {"order", "INTEGER", 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column dept_cols[] = {
    {"id", "INTEGER", 0, NULL, 1, NULL, 0, NULL},
    {"name", "TEXT", 0, NULL, 0, NULL, 0, NULL},
    {"budget", "REAL", 0, NULL, 0, NULL, 0, NULL},
};
static struct db_column item_cols[] = {
    {"OrderId", "INTEGER", 0, NULL, 0, NULL, 0, NULL},
    {"qty", "INTEGER", 0, NULL, 0, NULL, 0, NULL},
};
static struct db_table tables[] = {
    {"employees", 0, emp_cols, 7, NULL, 0, NULL, 0, 10, 0, 0, NULL, NULL,
     NULL, 0},
    {"departments", 0, dept_cols, 3, NULL, 0, NULL, 0, 3, 0, 0, NULL, NULL,
     NULL, 0},
    {"Order Items", 0, item_cols, 2, NULL, 0, NULL, 0, 5, 0, 0, NULL, NULL,
     NULL, 0},
};
static const struct db_schema schema = {.tables = tables, .ntables = 3};

static void grammar_starts_with_the_fenced_reply(void **state)
{
    char *g = sqlx_grammar(&schema);
    const char *root = "root ::= \"```sql\\n\" ws (select-stmt | with-stmt)"
                       " ws (\";\" ws)? \"\\n```\"\n";

    (void)state;
    assert_non_null(g);
    assert_memory_equal(g, root, strlen(root));
    /* Names are case-insensitive character classes; a name with a space
    ** is only in the trie of names written in quotes. */
    assert_non_null(strstr(g, "\ndb-column-b ::="));
    assert_non_null(strstr(g, "[bB] [uU] [dD] [gG] [eE] [tT]"));
    assert_non_null(strstr(g, "\ndb-table-q ::= [oO] [rR] [dD] [eE] [rR] "
                              "\" \" [iI] [tT] [eE] [mM] [sS] |"));
    assert_null(strstr(g, "\ndb-table-b ::= [oO] [rR] [dD] [eE] [rR] "
                          "\" \""));
    free(g);
}

static void empty_schema_still_gives_a_grammar(void **state)
{
    const struct db_schema none = {.tables = NULL};
    char *g = sqlx_grammar(&none);

    (void)state;
    assert_non_null(g);
    assert_non_null(strstr(g, "\ndb-table-b ::= \"\\u0000\"\n"));
    free(g);
}

#ifdef ASKDB_HAVE_LLAMA

static struct llama_model *model;
static const struct llama_vocab *vocab;

static void quiet_log(enum ggml_log_level level, const char *text, void *ud)
{
    (void)level;
    (void)text;
    (void)ud;
}

static int load_vocab(void **state)
{
    const char *path = testenv_small_model();
    struct llama_model_params mp = llama_model_default_params();

    (void)state;
    if (!path)
        return 0;
    llama_log_set(quiet_log, NULL);
    llama_backend_init();
    mp.vocab_only = true;
    model = llama_model_load_from_file(path, mp);
    if (!model) {
        fprintf(stderr, "cannot load the vocabulary of %s\n", path);
        return -1;
    }
    vocab = llama_model_get_vocab(model);
    return 0;
}

static int free_vocab(void **state)
{
    (void)state;
    if (model) {
        llama_model_free(model);
        llama_backend_free();
    }
    return 0;
}

#define NEED_VOCAB()                                                         \
    do {                                                                     \
        if (!vocab) {                                                        \
            printf("skipped: set ASKDB_SMALL_MODEL to a GGUF "               \
                   "(scripts/models.sh --path small)\n");                   \
            skip();                                                          \
        }                                                                    \
    } while (0)

/*
** Feed reply to a fresh grammar token by token, each token alone through
** llama_sampler_apply(); then the end-of-generation token. Returns -1 when
** all of it fits and the grammar may end there, else the byte offset of
** the token refused (the length of the reply when only the end is).
*/
static long refused_at(struct llama_sampler *g, const char *reply)
{
    llama_token toks[1024];
    llama_token_data td;
    llama_token_data_array arr;
    char piece[256];
    long off = 0;
    int n, i, len;

    llama_sampler_reset(g);
    n = llama_tokenize(vocab, reply, (int32_t)strlen(reply), toks, 1024,
                       false, false);
    assert_true(n > 0);
    for (i = 0; i <= n; i++) {
        td.id = i < n ? toks[i] : llama_vocab_eos(vocab);
        td.logit = 0.0f;
        td.p = 0.0f;
        arr.data = &td;
        arr.size = 1;
        arr.selected = -1;
        arr.sorted = false;
        llama_sampler_apply(g, &arr);
        if (td.logit < -1e30f)
            return off;
        if (i == n)
            break;
        llama_sampler_accept(g, td.id);
        len = llama_token_to_piece(vocab, td.id, piece, (int32_t)sizeof piece,
                                   0, false);
        off += len > 0 ? len : 0;
    }
    return -1;
}

static struct llama_sampler *grammar_for(const struct db_schema *s)
{
    char *g = sqlx_grammar(s);
    struct llama_sampler *smpl;

    assert_non_null(g);
    smpl = llama_sampler_init_grammar(vocab, g, "root");
    free(g);
    assert_non_null(smpl);
    return smpl;
}

/* Check replies given as bare SQL, each wrapped in the fence. */
static void expect(struct llama_sampler *g, const char *const *sqls,
                   int accepted)
{
    char reply[2048];
    long at;

    for (; *sqls; sqls++) {
        snprintf(reply, sizeof reply, "```sql\n%s\n```", *sqls);
        at = refused_at(g, reply);
        if (accepted && at >= 0)
            fail_msg("refused at byte %ld: %s", at - 7, *sqls);
        if (!accepted && at < 0)
            fail_msg("accepted: %s", *sqls);
    }
}

/* Check ok (accepted) and bad (refused) replies, either NULL, against the
** grammar of the test schema. */
static void expect_schema(const char *const *ok, const char *const *bad)
{
    struct llama_sampler *g = grammar_for(&schema);

    if (ok)
        expect(g, ok, 1);
    if (bad)
        expect(g, bad, 0);
    llama_sampler_free(g);
}

/* Each dialect takes its own functions and syntax, and refuses the
** others' where they differ; SQLite's grammar is the one it always was. */
static void dialects_take_their_own_sql(void **state)
{
    static const char *const pg_ok[] = {
        "SELECT extract(year FROM hired) AS y, count(*) FROM employees "
        "GROUP BY 1",
        "SELECT name FROM employees WHERE name ILIKE 'a%'",
        "SELECT salary::int FROM employees",
        "SELECT date_trunc('month', hired), string_agg(name, ', ') FROM "
        "employees GROUP BY 1",
        "SELECT name FROM employees WHERE hired > now() - interval '30 days'",
        NULL
    };
    static const char *const pg_no[] = {
        "SELECT strftime('%Y', hired) FROM employees",
        "SELECT julianday(hired) FROM employees",
        NULL
    };
    static const char *const my_ok[] = {
        "SELECT year(hired), group_concat(name) FROM employees GROUP BY 1",
        "SELECT date_format(hired, '%Y-%m') FROM employees",
        "SELECT extract(month FROM hired) FROM employees",
        NULL
    };
    static const char *const my_no[] = {
        "SELECT salary::int FROM employees",
        "SELECT name FROM employees WHERE name ILIKE 'a%'",
        NULL
    };
    static const char *const sq_no[] = {
        "SELECT extract(year FROM hired) FROM employees",
        "SELECT salary::int FROM employees",
        NULL
    };
    static const char *const duck_ok[] = {
        "SELECT year(hired), median(salary), hired::date FROM employees "
        "GROUP BY 1, 3",
        NULL
    };
    struct llama_sampler *g;
    char *a, *b;
    int d;

    (void)state;
    a = sqlx_grammar(&schema);
    b = sqlx_grammar_dialect(&schema, SQLX_SQLITE);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    free(a);
    free(b);
    assert_int_equal(sqlx_dialect_of("PostgreSQL"), SQLX_POSTGRES);
    assert_int_equal(sqlx_dialect_of("MariaDB"), SQLX_MARIADB);
    assert_int_equal(sqlx_dialect_of("DuckDB"), SQLX_DUCKDB);
    assert_int_equal(sqlx_dialect_of("SQLite"), SQLX_SQLITE);
    assert_int_equal(sqlx_dialect_of(NULL), SQLX_SQLITE);
    NEED_VOCAB();
    for (d = SQLX_SQLITE; d <= SQLX_DUCKDB; d++) {
        a = sqlx_grammar_dialect(&schema, (enum sqlx_dialect)d);
        assert_non_null(a);
        g = llama_sampler_init_grammar(vocab, a, "root");
        free(a);
        assert_non_null(g);
        if (d == SQLX_SQLITE)
            expect(g, sq_no, 0);
        if (d == SQLX_POSTGRES) {
            expect(g, pg_ok, 1);
            expect(g, pg_no, 0);
        }
        if (d == SQLX_MARIADB) {
            expect(g, my_ok, 1);
            expect(g, my_no, 0);
        }
        if (d == SQLX_DUCKDB)
            expect(g, duck_ok, 1);
        llama_sampler_free(g);
    }
}

static void accepts_what_real_questions_need(void **state)
{
    static const char *const ok[] = {
        "SELECT name FROM employees",
        "select Name, SALARY from EMPLOYEES where salary > 1000;",
        "SELECT e.name, d.name AS dept FROM employees AS e\n"
        "JOIN departments d ON e.dept_id = d.id\nWHERE d.budget >= 1e6",
        "SELECT * FROM employees LEFT OUTER JOIN departments USING (id)",
        "SELECT e.* FROM employees e NATURAL JOIN departments",
        "SELECT emp.name, employees.id FROM employees emp",
        "SELECT count(*) FROM employees CROSS JOIN departments",
        "SELECT a.name FROM employees a, departments b WHERE a.id = b.id",
        "SELECT name FROM employees WHERE salary > (SELECT avg(salary) "
        "FROM employees)",
        "SELECT name FROM departments WHERE id IN (SELECT dept_id FROM "
        "employees) AND NOT EXISTS (SELECT 1 FROM employees WHERE "
        "dept_id = departments.id AND salary IS NULL)",
        "SELECT t.id FROM (SELECT id, count(*) AS n FROM employees) AS t",
        "SELECT name FROM employees UNION ALL SELECT name FROM departments "
        "INTERSECT SELECT name FROM employees EXCEPT SELECT 'x'",
        "SELECT dept_id, count(DISTINCT name) FROM employees GROUP BY "
        "dept_id HAVING count(*) > 1 ORDER BY dept_id ASC, 2 DESC "
        "LIMIT 5 OFFSET 10",
        "SELECT CASE WHEN salary < 10 THEN 'low' ELSE 'high' END, "
        "cast(salary AS INTEGER), coalesce(hired, date('now', '-1 year')) "
        "FROM employees",
        "SELECT name FROM employees WHERE name LIKE 'A%' OR name GLOB "
        "'B*' OR id IN (1, 2, 3) OR salary BETWEEN 1 AND 2.5 OR hired "
        "IS NOT NULL OR NOT (id = 1)",
        "SELECT name || ' (' || id || ')', -salary * 2 / 3 % 4, "
        "salary <> 1, salary != 2 FROM employees",
        "SELECT \"first name\", `first name`, [first name], \"order\", "
        "\"Order\" FROM employees",
        "SELECT OrderId, orderid, \"ORDERID\" FROM \"Order Items\"",
        "SELECT [Order Items].qty FROM [Order Items]",
        "SELECT name FROM employees WHERE name = 'it''s' OR name = \"Bob\"",
        "SELECT DISTINCT(name) FROM employees",
        "SELECT name, rank() OVER (PARTITION BY dept_id ORDER BY salary "
        "DESC) FROM employees",
        "SELECT strftime('%Y', hired) AS year, count(*) AS n FROM employees "
        "GROUP BY year HAVING n > 1 ORDER BY n DESC",
        "WITH big AS (SELECT dept_id, sum(salary) AS total FROM employees "
        "GROUP BY dept_id) SELECT total FROM big WHERE total > 10",
        "WITH RECURSIVE x(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM x "
        "WHERE k < 5) SELECT k FROM x",
        "SELECT rowid, id FROM employees WHERE salary IS NULL",
        "  SELECT\n    name\n  FROM\n    employees\n  ;",
        NULL
    };

    (void)state;
    NEED_VOCAB();
    expect_schema(ok, NULL);
}

static void refuses_unknown_columns_and_tables(void **state)
{
    static const char *const bad[] = {
        "SELECT nme FROM employees",
        "SELECT e.nme FROM employees e",
        "SELECT name FROM employees WHERE salry > 1",
        "SELECT name FROM employees e JOIN departments d ON e.dept = d.id",
        "SELECT name FROM employees JOIN departments USING (dept)",
        "SELECT count(*) FROM employees GROUP BY dept",
        "SELECT count(*) FROM employees GROUP BY dept_id HAVING max(pay) > 1",
        "SELECT name FROM employees ORDER BY pay DESC",
        "SELECT \"first_name\" FROM employees",
        /* An invented column cannot hide as a qualifier: a qualifier is
        ** a table name or an alias of at most 4 characters. */
        "SELECT created_date.name FROM employees",
        "SELECT worker.name FROM employees AS worker",
        "SELECT first name FROM employees",
        "SELECT name FROM employee",
        "SELECT name FROM \"Order_Items\"",
        /* A derived table's own aliases are not known outside it. */
        "SELECT t.n FROM (SELECT count(*) AS n FROM employees) AS t",
        NULL
    };

    (void)state;
    NEED_VOCAB();
    expect_schema(NULL, bad);
}

/* A table of another schema (a namespace) is written qualified, bare or
** in double quotes; its name alone reaches nothing, but qualifies its
** columns. */
static void namespaced_table_is_written_qualified(void **state)
{
    static struct db_column ord_cols[] = {
        {"id", "integer", 0, NULL, 1, NULL, 0, NULL},
        {"amount", "numeric", 0, NULL, 0, NULL, 0, NULL},
        {"emp_id", "integer", 0, NULL, 0, NULL, 0, NULL},
    };
    static struct db_table ns_tables[] = {
        {"employees", 0, emp_cols, 7, NULL, 0, NULL, 0, 10, 0, 0, NULL,
         NULL, NULL, 0},
        {"orders", 0, ord_cols, 3, NULL, 0, NULL, 0, 4, 0, 0, NULL, "sales",
         "sales.orders", 0},
    };
    static const struct db_schema ns = {
        .tables = ns_tables, .ntables = 2, .case_folds = 1};
    static const char *const ok[] = {
        "SELECT amount FROM sales.orders",
        "SELECT o.amount FROM sales.orders o",
        "SELECT orders.amount FROM sales.orders",
        "SELECT sales.orders.amount FROM sales.orders",
        "SELECT amount FROM \"sales\".\"orders\"",
        "SELECT e.name, sum(o.amount) FROM employees e JOIN sales.orders o "
        "ON o.emp_id = e.id GROUP BY e.name",
        NULL
    };
    static const char *const bad[] = {
        "SELECT amount FROM orders",
        "SELECT amount FROM sales.order",
        "SELECT amount FROM hr.orders",
        "SELECT name FROM sales.employees",
        NULL
    };
    struct llama_sampler *g;
    char *a;

    (void)state;
    a = sqlx_grammar_dialect(&ns, SQLX_POSTGRES);
    assert_non_null(a);
    assert_non_null(strstr(a, "\ndb-table-b ::= [sS] [aA] [lL] [eE] [sS] "
                              "\".\" [oO] [rR]"));
    assert_non_null(strstr(a, "\ndb-table-q ::= [eE] [mM] [pP] [lL] [oO] "
                              "[yY] [eE] [eE] [sS]\n"));
    assert_non_null(strstr(a, "\ndb-table-s ::= \"\\\"\" [sS] [aA] [lL] "
                              "[eE] [sS] \"\\\"\" \".\" \"\\\"\" [oO]"));
    if (!vocab)
        free(a);   /* NEED_VOCAB() skips: nothing else frees it */
    NEED_VOCAB();
    g = llama_sampler_init_grammar(vocab, a, "root");
    assert_non_null(g);
    expect(g, ok, 1);
    expect(g, bad, 0);
    llama_sampler_free(g);
    free(a);
}

static void free_reserved(struct db_schema *s)
{
    int i;

    for (i = 0; i < s->nreserved; i++)
        free(s->reserved[i]);
    free(s->reserved);
    s->reserved = NULL;
    s->nreserved = 0;
}

/* An engine's own reserved words (db_schema.reserved, which its driver
** reads from the server) stand only quoted as names, and are no table
** alias or qualifier either (user.name); a schema without them
** (SQLite's) takes the same names bare. */
static void engine_reserved_names_are_taken_only_quoted(void **state)
{
    struct db_table *user_tables = reserved_user_table();
    static const char *const quoted[] = {
        "SELECT name FROM \"user\"",
        "SELECT u.name, \"array\", \"only\" FROM \"user\" u "
        "WHERE \"array\" > 1",
        "SELECT \"user\".name FROM \"user\" ORDER BY \"only\"",
        NULL
    };
    static const char *const bare[] = {
        "SELECT name FROM user",
        "SELECT array FROM \"user\"",
        "SELECT name FROM \"user\" WHERE only = 'x'",
        "SELECT user.name FROM \"user\"",
        "SELECT u.name FROM \"user\" AS user",
        NULL
    };
    struct db_schema plain = {.tables = user_tables, .ntables = 1};
    struct db_schema pg = {
        .tables = user_tables, .ntables = 1, .case_folds = 1};
    struct llama_sampler *g;
    char *a, *b;
    int d;

    (void)state;
    assert_int_equal(schema_add_reserved(&pg, "USER"), 0);
    assert_int_equal(schema_add_reserved(&pg, "only"), 0);
    assert_int_equal(schema_add_reserved(&pg, "array"), 0);
    assert_int_equal(schema_add_reserved(&pg, "user"), 0);
    assert_int_equal(pg.nreserved, 3);
    assert_true(schema_reserved(&pg, "User"));
    assert_false(schema_reserved(&pg, "name"));
    assert_false(schema_reserved(&plain, "user"));
    /* The bare names' trie lacks them; the quoted ones' has them. */
    a = sqlx_grammar_dialect(&pg, SQLX_POSTGRES);
    b = sqlx_grammar_dialect(&plain, SQLX_POSTGRES);
    assert_non_null(a);
    assert_non_null(b);
    assert_null(strstr(a, "\ndb-table-b ::= [uU] [sS] [eE] [rR]"));
    assert_non_null(strstr(b, "\ndb-table-b ::= [uU] [sS] [eE] [rR]"));
    assert_non_null(strstr(a, "\ndb-table-q ::= [uU] [sS] [eE] [rR]"));
    free(a);
    free(b);
    if (!vocab)
        free_reserved(&pg); /* NEED_VOCAB() skips: nothing else frees it */
    NEED_VOCAB();
    for (d = SQLX_POSTGRES; d <= SQLX_DUCKDB; d++) {
        a = sqlx_grammar_dialect(&pg, (enum sqlx_dialect)d);
        assert_non_null(a);
        g = llama_sampler_init_grammar(vocab, a, "root");
        free(a);
        assert_non_null(g);
        expect(g, quoted, 1);
        expect(g, bare, 0);
        llama_sampler_free(g);
    }
    g = grammar_for(&plain);
    expect(g, quoted, 1);
    expect(g, bare, 1);
    llama_sampler_free(g);
    free_reserved(&pg);
}

static void refuses_writes_and_second_statements(void **state)
{
    static const char *const bad[] = {
        "DELETE FROM employees",
        "DROP TABLE employees",
        "UPDATE employees SET salary = 0",
        "INSERT INTO employees (id) VALUES (1)",
        "PRAGMA table_info(employees)",
        "ATTACH DATABASE 'x.db' AS x",
        "SELECT 1; DROP TABLE employees",
        "SELECT 1; SELECT 2",
        "SELECT name FROM employees -- comment",
        "WITH x AS (SELECT 1) DELETE FROM employees",
        "SELECT load_extension('evil')",
        "SELECTname FROM employees",
        NULL
    };

    (void)state;
    NEED_VOCAB();
    expect_schema(NULL, bad);
}

static void reply_is_exactly_one_fenced_block(void **state)
{
    struct llama_sampler *g;

    (void)state;
    NEED_VOCAB();
    g = grammar_for(&schema);
    assert_int_equal(refused_at(g, "```sql\nSELECT id FROM employees\n```"),
                     -1);
    assert_int_equal(refused_at(g, "Here it is:\n```sql\nSELECT 1\n```"), 0);
    assert_int_equal(refused_at(g, "SELECT 1"), 0);
    /* Nothing after the fence, not even a newline: the model must stop. */
    assert_true(refused_at(g, "```sql\nSELECT 1\n```\nDone.") >= 16);
    /* An unfinished reply cannot end. */
    assert_int_equal(refused_at(g, "```sql\nSELECT name FROM"), 23);
    llama_sampler_free(g);
}

/*
** A table alias is a word of up to 4 characters (the cap keeps an
** invented column from passing as a qualifier), but no reserved word:
** those the cap let through (on, as, join, left, null, case, ...) read
** as an alias ("FROM employees join", "SELECT null.name"), where the
** longer ones (where, order, group) never did. A word that merely
** begins like one, or goes on past one, is an alias.
*/
static void table_alias_is_no_reserved_word(void **state)
{
    static const char *const ok[] = {
        "SELECT e.name FROM employees e",
        "SELECT T1.name FROM employees AS T1 JOIN departments AS T2 "
        "ON T1.dept_id = T2.id",
        "SELECT jo.name FROM employees jo",
        "SELECT nul.name FROM employees AS nul",
        "SELECT alls.name FROM employees alls",
        "SELECT ins.name FROM employees ins",
        "SELECT o.name FROM employees o LEFT JOIN departments d "
        "ON o.dept_id = d.id",
        "SELECT c_1.name FROM employees c_1",
        "SELECT asc.name FROM employees asc",
        "SELECT x.name FROM (SELECT name FROM employees) x",
        NULL
    };
    static const char *const bad[] = {
        "SELECT name FROM employees join",
        "SELECT name FROM employees AS on",
        "SELECT name FROM employees AS LEFT",
        "SELECT null.name FROM employees",
        "SELECT case.name FROM employees case",
        "SELECT name FROM employees AS from",
        "SELECT name FROM employees e JOIN departments AS full "
        "ON e.dept_id = full.id",
        "SELECT name FROM (SELECT name FROM employees) AS is",
        NULL
    };

    (void)state;
    NEED_VOCAB();
    expect_schema(ok, bad);
}

static void aliases_are_free_only_where_defined(void **state)
{
    static const char *const ok[] = {
        "SELECT name AS who FROM employees ORDER BY who",
        "SELECT name who FROM employees ORDER BY who DESC",
        "SELECT id, count(*) AS c FROM employees GROUP BY id "
        "ORDER BY c DESC",
        NULL
    };
    static const char *const bad[] = {
        "SELECT name FROM employees ORDER BY who",
        "SELECT name AS who FROM employees WHERE whom = 1",
        "SELECT name AS who, whom FROM employees",
        NULL
    };

    (void)state;
    NEED_VOCAB();
    expect_schema(ok, bad);
}

/* ---- Spider: gold queries of a few training databases -------------------- */

/* 5 databases of different shapes, their first PER_DB gold queries. */
#define PER_DB 20
static const char *const spider_dbs[] = {
    "bike_1", "chinook_1", "hospital_1", "music_4", "product_catalog", NULL
};

static int is_column(const struct db_schema *s, const char *name)
{
    int i;

    for (i = 0; i < s->ntables; i++)
        if (schema_column(&s->tables[i], name))
            return 1;
    return 0;
}

/* Offset of the nth bare column name in sql (counting from 0), its
** length in *len; -1 when there are fewer. */
static long nth_column(const struct db_schema *s, const char *sql, int nth,
                       size_t *len)
{
    const char *p;
    char word[256];
    size_t n;
    int kind;

    for (p = sql; (n = sqlx_token(p, &kind)) > 0; p += n) {
        if (kind != SQLX_WORD || n >= sizeof word)
            continue;
        memcpy(word, p, n);
        word[n] = '\0';
        if (is_column(s, word) && !schema_table(s, word) && nth-- == 0) {
            *len = n;
            return (long)(p - sql);
        }
    }
    return -1;
}

/* Rename one bare column name of sql (name -> name_zz): the nth, or the
** first when there are fewer. The grammar must refuse the result. (Were
** the name in ORDER BY, GROUP BY or HAVING of a query whose select list
** defines aliases it would pass; the queries below have none there.)
** Returns 1 when there was a column to rename. */
static int check_renamed(struct llama_sampler *g, const struct db_schema *s,
                         const char *sql, int nth)
{
    char reply[4096];
    size_t len;
    long at = nth_column(s, sql, nth, &len);

    if (at < 0)
        at = nth_column(s, sql, 0, &len);
    if (at < 0)
        return 0;
    snprintf(reply, sizeof reply, "```sql\n%.*s_zz%s\n```",
             (int)(at + (long)len), sql, sql + at + len);
    if (refused_at(g, reply) < 0)
        fail_msg("renamed column accepted: %s", reply);
    return 1;
}

static void spider_gold_accepted_renamed_columns_refused(void **state)
{
    char path[1024], reply[4096], err[512];
    struct suite suite;
    long i;
    int d, total = 0, refused = 0, renamed = 0;

    (void)state;
    NEED_VOCAB();
    if (suite_load_spider(testdb_spider_dir(), &suite, err, sizeof err))
        fail_msg("%s", err);
    for (d = 0; spider_dbs[d]; d++) {
        const struct db_schema *s;
        askdb_db *db;
        struct llama_sampler *g;
        askdb_config cfg = askdb_config_default();

        int n = 0;

        cfg.sample_values = 0;
        testdb_spider(spider_dbs[d], path, sizeof path);
        db = testdb_open(path, &cfg, &s);
        g = grammar_for(s);
        for (i = 0; i < suite.n; i++) {
            const char *id = suite.items[i].db_id, *q = suite.items[i].gold;

            if (!q || strcmp(id, spider_dbs[d]) || n++ >= PER_DB)
                continue;
            total++;
            snprintf(reply, sizeof reply, "```sql\n%s\n```", q);
            if (refused_at(g, reply) >= 0) {
                refused++;
                printf("refused [%s]: %s\n", id, q);
                continue;
            }
            renamed += check_renamed(g, s, q, total);
        }
        llama_sampler_free(g);
        askdb_db_close(db);
    }
    suite_free(&suite);
    printf("spider sample: %d of %d gold queries accepted, %d renamed "
           "columns refused\n", total - refused, total, renamed);
    assert_int_equal(total, 5 * PER_DB);
    assert_int_equal(refused, 0);
    assert_true(renamed > 4 * PER_DB);
}

#endif /* ASKDB_HAVE_LLAMA */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grammar_starts_with_the_fenced_reply),
        cmocka_unit_test(empty_schema_still_gives_a_grammar),
#ifdef ASKDB_HAVE_LLAMA
        cmocka_unit_test(accepts_what_real_questions_need),
        cmocka_unit_test(dialects_take_their_own_sql),
        cmocka_unit_test(refuses_unknown_columns_and_tables),
        cmocka_unit_test(namespaced_table_is_written_qualified),
        cmocka_unit_test(engine_reserved_names_are_taken_only_quoted),
        cmocka_unit_test(refuses_writes_and_second_statements),
        cmocka_unit_test(reply_is_exactly_one_fenced_block),
        cmocka_unit_test(aliases_are_free_only_where_defined),
        cmocka_unit_test(table_alias_is_no_reserved_word),
        cmocka_unit_test(spider_gold_accepted_renamed_columns_refused),
#endif
    };
    test_filter_from_env();

#ifdef ASKDB_HAVE_LLAMA
    return cmocka_run_group_tests(tests, load_vocab, free_vocab);
#else
    printf("test_grammar: built without llama.cpp (ASKDB_HAVE_LLAMA); "
           "only the grammar text is checked\n");
    return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
