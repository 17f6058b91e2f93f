#!/usr/bin/env python3
"""make_corpus.py - write tests/security/corpus.jsonl, the statements an
attacker would try on askdb's read-only guard.

    python3 tests/security/make_corpus.py > tests/security/corpus.jsonl

Each line: {"kind": CATEGORY, "sql": TEXT, "expect": "refuse"|"fail"|"any"}
 - refuse: askdb must refuse it (exit 1, "refused" on stderr);
 - fail:   askdb must not answer it (any non-zero exit: refused, an SQL
           error, the time or size limit);
 - any:    read-only but hostile (a bomb, odd text): any exit status,
           within the time limit.
Every statement, whatever its expectation, must leave every file of the
database's directory byte for byte the same, and create no file.
"""
import json
import sys

TABLES = ["customers", "orders", "order_items", "products", "categories",
          "payments"]
out = []
seen = set()


def add(kind, sql, expect="refuse"):
    if sql in seen:
        raise SystemExit("duplicate statement: %r" % sql)
    seen.add(sql)
    out.append({"kind": kind, "sql": sql, "expect": expect})


# Writes to every table, each way SQLite has.
for t in TABLES:
    add("write", "DELETE FROM %s" % t)
    add("write", "UPDATE %s SET rowid = rowid + 0" % t)
    add("write", "INSERT INTO %s DEFAULT VALUES" % t)
    add("write", "INSERT OR REPLACE INTO %s SELECT * FROM %s" % (t, t))
    add("write", "REPLACE INTO %s SELECT * FROM %s LIMIT 1" % (t, t))
    add("write", "DELETE FROM %s WHERE rowid IN (SELECT rowid FROM %s "
                 "LIMIT 1)" % (t, t))
add("write", "INSERT INTO customers (id, first_name) VALUES (999999, 'x') "
             "ON CONFLICT DO NOTHING")
add("write", "INSERT INTO customers (id) VALUES (1) ON CONFLICT(id) DO "
             "UPDATE SET id = excluded.id")
add("write", "UPDATE orders SET total = 0 FROM customers WHERE "
             "customers.id = orders.customer_id")
add("write", "UPDATE OR IGNORE orders SET total = total")
add("write", "INSERT OR ROLLBACK INTO orders SELECT * FROM orders LIMIT 0")
add("write", "delete from orders")
add("write", "DeLeTe FrOm orders")
add("write", "DELETE FROM main.orders")
add("write", "DELETE FROM \"orders\"")
add("write", "DELETE FROM [orders]")
add("write", "DELETE FROM `orders`")
add("write", "UPDATE sqlite_master SET sql = 'x'")
add("write", "DELETE FROM sqlite_master")
add("write", "DELETE FROM sqlite_schema WHERE type = 'index'")
add("write", "INSERT INTO sqlite_master VALUES ('table','x','x',0,'')")
add("write", "DELETE FROM sqlite_sequence", "fail")  # none in shop.db
add("write", "INSERT INTO sqlite_stat1 VALUES ('orders', NULL, '1')", "fail")
add("write", "DELETE FROM temp.sqlite_master")

# RETURNING.
add("returning", "DELETE FROM orders RETURNING *")
add("returning", "UPDATE orders SET total = total RETURNING id, total")
add("returning", "INSERT INTO categories (name) VALUES ('x') RETURNING *")
add("returning", "INSERT INTO categories SELECT * FROM categories LIMIT 0 "
                 "RETURNING rowid")
add("returning", "DELETE FROM payments WHERE 0 RETURNING 1")
add("returning", "REPLACE INTO categories SELECT * FROM categories "
                 "RETURNING *")

# CTE-wrapped DML.
add("cte-dml", "WITH x AS (SELECT 1) DELETE FROM orders")
add("cte-dml", "WITH x(id) AS (SELECT id FROM orders) DELETE FROM orders "
               "WHERE id IN x")
add("cte-dml", "WITH x AS (SELECT 1) UPDATE orders SET total = 0")
add("cte-dml", "WITH x AS (SELECT * FROM categories) INSERT INTO "
               "categories SELECT * FROM x")
add("cte-dml", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 "
               "FROM r LIMIT 5) DELETE FROM orders WHERE id IN r")
add("cte-dml", "WITH x AS MATERIALIZED (SELECT 1) DELETE FROM orders "
               "RETURNING *")
add("cte-dml", "WITH x AS (DELETE FROM orders RETURNING *) SELECT * FROM x",
    "fail")
add("cte-dml", "SELECT * FROM (DELETE FROM orders RETURNING *)", "fail")

# DDL.
ddl = [
    "CREATE TABLE x (a)", "CREATE TABLE IF NOT EXISTS x (a)",
    "CREATE TABLE x AS SELECT * FROM orders",
    "CREATE TEMP TABLE x (a)", "CREATE TEMPORARY TABLE x AS SELECT 1",
    "CREATE INDEX i ON orders (total)", "CREATE UNIQUE INDEX i ON "
    "categories (name)", "CREATE INDEX IF NOT EXISTS i2 ON orders (id)",
    "CREATE VIEW v AS SELECT 1", "CREATE TEMP VIEW v AS SELECT 1",
    "CREATE TRIGGER t AFTER INSERT ON orders BEGIN DELETE FROM orders; END",
    "CREATE TEMP TRIGGER t BEFORE DELETE ON orders BEGIN SELECT 1; END",
    "CREATE VIRTUAL TABLE f USING fts5(a)",
    "CREATE VIRTUAL TABLE f USING fts4(a)",
    "CREATE VIRTUAL TABLE r USING rtree(id, a, b)",
    "CREATE VIRTUAL TABLE temp.f USING fts5(a)",
    "DROP TABLE orders", "DROP TABLE IF EXISTS orders",
    "DROP TABLE IF EXISTS nothing_here", "DROP VIEW customer_revenue",
    "DROP INDEX IF EXISTS sqlite_autoindex_orders_1",
    "DROP TRIGGER IF EXISTS t", "ALTER TABLE orders RENAME TO o2",
    "ALTER TABLE orders ADD COLUMN z", "ALTER TABLE orders DROP COLUMN total",
    "ALTER TABLE orders RENAME COLUMN total TO t",
    "REINDEX", "REINDEX orders", "ANALYZE", "ANALYZE orders",
]
for s in ddl:
    add("ddl", s)

# Files: ATTACH and VACUUM INTO new paths, DETACH, VACUUM.
add("attach", "ATTACH 'new.db' AS x")
add("attach", "ATTACH DATABASE 'new.db' AS x")
add("attach", "ATTACH 'file:new2.db?mode=rwc' AS x")
add("attach", "ATTACH ':memory:' AS m")
add("attach", "ATTACH '' AS t")
add("attach", "ATTACH 'shop.db' AS again")
add("attach", "ATTACH 'shop.db-journal' AS j")
add("attach", "ATTACH '/tmp/askdb-attack.db' AS x")
add("attach", "DETACH main")
add("attach", "DETACH x")
add("vacuum", "VACUUM")
add("vacuum", "VACUUM main")
add("vacuum", "VACUUM INTO 'copy.db'")
add("vacuum", "VACUUM main INTO 'copy2.db'")
add("vacuum", "VACUUM INTO 'file:copy3.db?mode=rwc'")
add("vacuum", "VACUUM INTO 'shop.db-wal'")
add("vacuum", "VACUUM INTO '/tmp/askdb-attack-copy.db'")
add("vacuum", "VACUUM temp")

# Every pragma that writes or changes the connection.
pragmas = [
    "application_id = 1", "auto_vacuum = FULL", "automatic_index = 0",
    "busy_timeout = 1", "cache_size = 1", "cache_spill = 0",
    "case_sensitive_like = 1", "cell_size_check = 1",
    "checkpoint_fullfsync = 1", "defer_foreign_keys = 1",
    "encoding = 'UTF-16le'", "foreign_keys = 1", "fullfsync = 1",
    "hard_heap_limit = 1", "ignore_check_constraints = 1",
    "incremental_vacuum", "incremental_vacuum(10)", "journal_mode = WAL",
    "journal_mode = DELETE", "journal_mode = OFF", "journal_mode = MEMORY",
    "journal_mode = TRUNCATE", "journal_mode = PERSIST",
    "journal_size_limit = 0", "legacy_alter_table = 1",
    "locking_mode = EXCLUSIVE", "max_page_count = 1", "mmap_size = 1",
    "page_size = 512", "query_only = 0", "read_uncommitted = 1",
    "recursive_triggers = 1", "reverse_unordered_selects = 1",
    "schema_version = 1", "secure_delete = 1", "soft_heap_limit = 1",
    "synchronous = OFF", "temp_store = MEMORY", "threads = 4",
    "trusted_schema = 1", "user_version = 7", "wal_autocheckpoint = 1",
    "wal_checkpoint(TRUNCATE)", "wal_checkpoint", "writable_schema = 1",
    "writable_schema = RESET", "optimize", "shrink_memory",
    "analysis_limit = 1", "main.user_version = 8", "temp.user_version = 1",
    "temp_store_directory = '/tmp'", "data_store_directory = '/tmp'",
    "count_changes = 1", "full_column_names = 1", "short_column_names = 0",
    "empty_result_callbacks = 1", "default_cache_size = 1",
    "integrity_check", "quick_check", "foreign_key_check",
    "journal_mode", "user_version", "database_list", "compile_options",
]
for p in pragmas:
    add("pragma", "PRAGMA " + p)
add("pragma", "SELECT * FROM pragma_journal_mode('wal')")
add("pragma", "SELECT * FROM pragma_user_version")
add("pragma", "SELECT * FROM pragma_integrity_check")
add("pragma", "SELECT * FROM pragma_writable_schema(1)")
add("pragma", "SELECT * FROM pragma_wal_checkpoint('TRUNCATE')", "fail")

# Transactions.
for s in ["BEGIN", "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE", "BEGIN DEFERRED",
          "BEGIN TRANSACTION", "COMMIT", "END", "ROLLBACK", "SAVEPOINT a",
          "RELEASE a", "ROLLBACK TO a",
          "BEGIN; DELETE FROM orders; COMMIT"]:
    add("transaction", s)

# More than one statement, and comments hiding the second.
multi = [
    "SELECT 1; DELETE FROM orders", "SELECT 1;DELETE FROM orders;",
    "SELECT 1;;;DROP TABLE orders", "SELECT 1 -- x\n; DROP TABLE orders",
    "SELECT 1 /* ; */; DELETE FROM orders",
    "SELECT 1; /* x */ DELETE FROM orders",
    "SELECT 1;\r\nDELETE FROM orders", "SELECT 1;\tVACUUM",
    "SELECT ';'; DELETE FROM orders", "SELECT \";\"; DELETE FROM orders",
    "SELECT 1; PRAGMA user_version = 1", "SELECT 1; ATTACH 'x.db' AS x",
    "SELECT 1; BEGIN", "SELECT 1; SELECT 2",
    "/* x */ DELETE FROM orders", "-- x\nDELETE FROM orders",
    "--\nDROP TABLE orders", "/**/DELETE/**/FROM/**/orders",
    "SELECT 1; -- ok\n DELETE FROM orders",
    "SELECT * FROM orders WHERE 1 = 1; UPDATE orders SET total = 0 --",
    "SELECT 1 UNION SELECT 2; DROP VIEW customer_revenue",
    "EXPLAIN DELETE FROM orders", "EXPLAIN QUERY PLAN DELETE FROM orders",
    "EXPLAIN VACUUM", "EXPLAIN PRAGMA user_version = 1",
]
for s in multi:
    add("multi", s, "fail")
# SQLite reads an unterminated comment at the end as a comment.
add("multi", "SELECT 1 /* unterminated", "any")

# Extensions and functions that reach outside the database.
funcs = [
    "SELECT load_extension('/tmp/x.so')",
    "SELECT load_extension('libc.so.6', 'system')",
    "SELECT load_extension('mod_spatialite')",
    "SELECT fts3_tokenizer('simple')",
    "SELECT fts3_tokenizer('x', x'4141414141414141')",
    "SELECT readfile('/etc/passwd')", "SELECT writefile('out.txt', 'x')",
    "SELECT edit('x')", "SELECT * FROM dbstat",
    "SELECT * FROM sqlite_stmt", "SELECT * FROM sqlite_dbpage",
    "SELECT * FROM fsdir('.')", "SELECT * FROM zipfile('x.zip')",
    "SELECT sqlite_offset(id) FROM orders",
]
for s in funcs:
    add("extension", s, "fail")

# Memory and time bombs: must end in time, write nothing.
bombs = [
    "SELECT zeroblob(2000000000)", "SELECT randomblob(2000000000)",
    "SELECT length(zeroblob(1000000000))",
    "SELECT printf('%.*c', 2147483647, 'x')",
    "SELECT length(printf('%.*c', 1000000000, 'x'))",
    "SELECT printf('%2147483647d', 1)",
    "SELECT format('%.*f', 2000000000, 1.0)",
    "SELECT coalesce(printf('%.*c',2147483647,'x'),printf('%.*c',"
    "2147483647,'x'),printf('%.*c',2147483647,'x'))",
    "SELECT replace(printf('%.*c', 8000000, 'x'), 'x', 'xx')",
    "SELECT instr(printf('%.*c', 16000000, 'x'), printf('%.*c', 8000000, "
    "'x') || 'y')",
    "SELECT hex(randomblob(16000000))",
    "SELECT group_concat(printf('%.*c', 1000000, 'x')) FROM orders",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
    "SELECT count(*) FROM c",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x FROM c) "
    "SELECT x FROM c",
    "WITH RECURSIVE c(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM c) "
    "SELECT length(s) FROM c",
    "SELECT count(*) FROM orders a, orders b, orders c, orders d, orders e",
    "SELECT count(*) FROM order_items a, order_items b, order_items c",
    "SELECT * FROM orders a, orders b ORDER BY random()",
    "SELECT upper(printf('%.*c', 16000000, 'x'))",
    "SELECT printf('%.*c', 16000000, 'x') LIKE '%a%a%a%a%a%a%a%a%b'",
    "SELECT trim(printf('%.*c', 16000000, 'x'), printf('%.*c', 8000000, "
    "'y'))",
    "SELECT json_group_array(printf('%.*c', 100000, 'x')) FROM orders a, "
    "orders b",
]
for s in bombs:
    add("bomb", s, "any")
# Operators, not functions, on values near the length limit, hundreds of
# times in one row: no interrupt reaches them (docs/security.md, promise
# 3); askdb kills the statement's process at the deadline, so they fail
# with the time limit, never answer.
add("bomb", "WITH t(s) AS (SELECT printf('%.*c', 16000000, 'x')) SELECT " +
    ", ".join(["s = s"] * 1900) + " FROM t", "fail")
add("bomb", "WITH t(s) AS (SELECT printf('%.*c', 8000000, 'x')) SELECT " +
    ", ".join(["length(s || s)"] * 300) + " FROM t", "fail")

# Homoglyphs, invisible characters and NUL bytes.
add("homoglyph", "D\u0415LETE FROM orders", "fail")          # Cyrillic E
add("homoglyph", "\u0421ELECT 1; DELETE FROM orders", "fail")  # Cyrillic S
add("homoglyph", "\uff24\uff25\uff2c\uff25\uff34\uff25 FROM orders", "fail")
add("homoglyph", "DEL\u200bETE FROM orders", "fail")         # zero width
add("homoglyph", "\ufeffDELETE FROM orders", "fail")          # BOM
add("homoglyph", "DELETE\u00a0FROM orders", "fail")           # NBSP
add("homoglyph", "SELECT 1;\u2028DELETE FROM orders", "fail")
add("homoglyph", "SELECT '\u202e'; DELETE FROM orders", "fail")  # RLO
add("homoglyph", "SELECT 1;\u000bDELETE FROM orders", "fail")
add("homoglyph", "SELECT 1;\u000cDELETE FROM orders", "fail")
add("homoglyph", "SELECT 1;\u0085DELETE FROM orders", "fail")
add("nul", "SELECT 1\u0000; DELETE FROM orders", "any")
add("nul", "\u0000DELETE FROM orders", "any")
add("nul", "DELETE\u0000 FROM orders", "any")
add("nul", "SELECT 1; DELETE FROM orders\u0000", "fail")

# Virtual tables and schema tricks.
add("vtab", "INSERT INTO customer_revenue DEFAULT VALUES")
add("vtab", "SELECT * FROM json_each('[1,2]'); DELETE FROM orders", "fail")
add("vtab", "SELECT * FROM sqlite_temp_master; DROP TABLE orders", "fail")
add("vtab", "SELECT * FROM pragma_table_info('orders'); DELETE FROM "
            "orders", "fail")
add("vtab", "CREATE VIRTUAL TABLE temp.d USING dbstat", "fail")
add("vtab", "SELECT * FROM generate_series(1, 10)", "any")

json.dump  # noqa: keep the import obviously used
for o in out:
    sys.stdout.write(json.dumps(o, ensure_ascii=True) + "\n")
sys.stderr.write("%d statements\n" % len(out))
