#!/usr/bin/env bash
# tests/e2e/learn.sh - end-to-end tests of `askdb learn` through the real binary.
#
#   ASKDB=build/asan/askdb bash tests/e2e/learn.sh
#   bash tests/e2e/learn.sh --filter 'forget'     (ERE on test names)
#   E2E_KEEP=1     keep the temp dir      E2E_VERBOSE=1  show a failure's log
#
# Each test runs in its own directory $T with a copy of examples/shop.db in
# $T/w (askdb's working directory) and its own cache ($ASKDB_CACHE_DIR =
# $T/cache, where the default store memory.sqlite lives). After every test
# the database copy must be byte for byte the original, and the sandbox
# may hold no file besides the ones the test made itself.
# Output: "ok NAME" / "FAIL NAME: reason" per test, then one line
# "N passed, M failed". Exit status 0 only when M is 0.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
ASKDB=$(abspath "${ASKDB:-$ROOT/build/asan/askdb}")
SHOP_DB=$(abspath "${SHOP_DB:-$ROOT/examples/shop.db}")

FILTER=
while [ $# -gt 0 ]; do
    case $1 in
    --filter) FILTER=${2:-}; shift 2 ;;
    --filter=*) FILTER=${1#--filter=}; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "learn.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

for _v in $(compgen -e); do case $_v in ASKDB_*) unset "$_v" ;; esac; done
unset XDG_CACHE_HOME
export LC_ALL=C PYTHONUTF8=1
PY=$(command -v python3) || { echo "learn.sh: python3 is needed" >&2; exit 2; }
[ -x "$ASKDB" ] || { echo "learn.sh: $ASKDB is not built (make build/asan/askdb)" >&2; exit 2; }
[ -f "$SHOP_DB" ] || { echo "learn.sh: $SHOP_DB is missing (make examples/shop.db)" >&2; exit 2; }
SHOP_SUM=$(sha256sum "$SHOP_DB" | cut -d' ' -f1)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/askdb-learn-e2e.XXXXXX") || exit 2
cleanup() {
    if [ -n "${E2E_KEEP:-}" ]; then echo "learn.sh: kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --------------------------------------------------------------------------
# Helpers (inside a test's subshell; T and W set by the runner)
# --------------------------------------------------------------------------
# The first failure is the one reported (a later one may be its echo).
fail() {
    [ -s "$T/.fail" ] || printf '%s\n' "$*" | tr '\n' '|' | cut -c1-600 >"$T/.fail"
    exit 1
}

# run ARGS...: askdb in $W; RC, stdout in $T/out, stderr in $T/err.
run() {
    (cd "$W" && exec timeout -k 5 60 "$ASKDB" "$@") </dev/null >"$T/out" 2>"$T/err"
    RC=$?
    { printf '$ askdb'; printf ' %q' "$@"; printf '\n-> %s\n' "$RC"; sed 's/^/  err: /' "$T/err" | head -20; } >>"$T/.log"
    [ "$RC" != 124 ] && [ "$RC" != 137 ] || fail "askdb $* did not finish within 60 s"
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer' "$T/err"; then
        fail "sanitizer report from: askdb $* :: $(grep -m2 -E 'Sanitizer|runtime error' "$T/err")"
    fi
}

expect_rc() { [ "$RC" = "$1" ] || fail "exit $RC, want $1 (stderr: $(head -c 300 "$T/err"))"; }
expect_err_has() { grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1' (stderr: $(head -c 400 "$T/err"))"; }
expect_out_has() { grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1' (stdout: $(head -c 400 "$T/out"))"; }
# expect_out LINE...: stdout is exactly these lines.
expect_out() {
    printf '%s\n' "$@" >"$T/expected"
    cmp -s "$T/expected" "$T/out" || fail "stdout is '$(cat "$T/out")', want '$(cat "$T/expected")'"
}
expect_no_out() { [ ! -s "$T/out" ] || fail "stdout not empty: $(head -c 200 "$T/out")"; }

sha() { sha256sum "$1" | cut -d' ' -f1; }

# listed: the (question, sql) pairs of `askdb learn DB --list` in order,
# one "question => sql" line each, checked to be JSON lines with added_at.
listed() {
    run learn "$@" --list
    expect_rc 0
    "$PY" - "$T/out" <<'EOF' || fail "--list output is not JSON lines: $(head -c 300 "$T/out")"
import json, re, sys
for line in open(sys.argv[1], encoding="utf-8"):
    o = json.loads(line)
    assert sorted(o) == ["added_at", "question", "sql"], o
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", o["added_at"]), o
    print("%s => %s" % (o["question"], o["sql"]))
EOF
}
expect_listed() {
    local got
    got=$(listed "$1")
    [ ! -s "$T/.fail" ] || exit 1
    shift
    [ "$got" = "$(printf '%s\n' "$@")" ] || fail "listed '$got', want '$(printf '%s\n' "$@")'"
}

# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

stores_a_verified_pair_and_replaces_it() {
    run learn shop.db --question "How many customers?" --sql "SELECT count(*) AS n FROM customers"
    expect_rc 0
    expect_out "stored (1 row): How many customers?"
    [ -f "$T/cache/memory.sqlite" ] || fail "no store in \$ASKDB_CACHE_DIR"
    run learn shop.db --question "Top categories?" --sql "SELECT name FROM categories ORDER BY id LIMIT 3"
    expect_rc 0
    expect_out "stored (3 rows): Top categories?"
    # The same question after folding case and white space replaces the SQL;
    # the echo is the question as stored (and listed): without the white
    # space around it.
    run learn shop.db --question "  how many   CUSTOMERS? " --sql "SELECT count(id) FROM customers;"
    expect_rc 0
    expect_out "replaced (1 row): how many   CUSTOMERS?"
    expect_listed shop.db "how many   CUSTOMERS? => SELECT count(id) FROM customers;" \
        "Top categories? => SELECT name FROM categories ORDER BY id LIMIT 3"
    # The options may come before the database.
    run learn --sql "SELECT 1 AS one" --question "One?" shop.db
    expect_rc 0
    expect_out "stored (1 row): One?"
    run learn shop.db --question "$(printf '\t Two?\r\n')" --sql "SELECT 2 AS two"
    expect_rc 0
    expect_out "stored (1 row): Two?"
    expect_listed shop.db "how many   CUSTOMERS? => SELECT count(id) FROM customers;" \
        "Top categories? => SELECT name FROM categories ORDER BY id LIMIT 3" \
        "One? => SELECT 1 AS one" "Two? => SELECT 2 AS two"
}

a_capped_verifying_run_says_its_count_is_a_lower_bound() {
    # A run the 1000-row cap stopped has more rows than it counted: the
    # count is a lower bound and says so (not "(1000 rows)"); exactly 1000
    # rows is no cap.
    run learn shop.db --question "Five thousand numbers?" --sql \
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 5000) SELECT i FROM r"
    expect_rc 0
    expect_out "stored (at least 1000 rows: the verifying run stops at the row limit): Five thousand numbers?"
    run learn shop.db --question "A thousand numbers?" --sql \
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 1000) SELECT i FROM r"
    expect_rc 0
    expect_out "stored (1000 rows): A thousand numbers?"
}

rejects_writes_and_failing_sql() {
    local stmt
    for stmt in "DELETE FROM orders" "UPDATE products SET price = 0" "DROP TABLE customers" \
                "INSERT INTO categories (id, name) VALUES (999, 'x')" "SELECT 1; DELETE FROM orders" \
                "PRAGMA user_version = 7" "CREATE TABLE t(x)"; do
        run learn shop.db --question "Change the data" --sql "$stmt"
        expect_rc 1
        expect_err_has "askdb learn: not stored: refused"
        expect_no_out
    done
    run learn shop.db --question "Names?" --sql "SELECT nope FROM customers"
    expect_rc 1
    expect_err_has "not stored: the SQL fails on the database: no such column: nope"
    run learn shop.db --question "Broken?" --sql "SELEC name FROM customers"
    expect_rc 1
    expect_err_has "syntax error"
    run learn shop.db --question "Slow?" --timeout 200 --sql \
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r"
    expect_rc 1
    expect_err_has "not stored: the SQL fails on the database: query interrupted after the 200 ms"
    run learn shop.db --question "   " --sql "SELECT 1"
    expect_rc 1
    expect_err_has "not stored: the question is empty"
    # A parameter has no value: SQLite would run the query with NULL for
    # it, and store a pair that answers nothing the question asks.
    for stmt in "SELECT email FROM customers WHERE id = ?" \
                "SELECT email FROM customers WHERE id = :id" \
                "SELECT email FROM customers WHERE city = @city" \
                "SELECT email FROM customers WHERE id = \$id" \
                "SELECT email FROM customers WHERE id = ?1"; do
        run learn shop.db --question "Email of customer 1?" --sql "$stmt"
        expect_rc 1
        expect_err_has "askdb learn: not stored: the SQL fails on the database: the query has a "
        expect_err_has " placeholder; write the values into the SQL"
        expect_no_out
    done
    printf '%s\n' '{"question": "Email of customer 1?", "sql": "SELECT email FROM customers WHERE id = ?"}' >"$T/p.jsonl"
    run learn shop.db --file "$T/p.jsonl"
    expect_rc 1
    expect_out "0 stored, 0 replaced, 1 rejected"
    expect_err_has "p.jsonl:1: rejected: the SQL fails on the database: the query has a ? placeholder"
    expect_listed shop.db
}

imports_a_json_lines_file_with_counts() {
    cat >"$W/pairs.jsonl" <<'EOF'
{"question": "How many customers?", "sql": "SELECT count(*) FROM customers"}
{"question": "Category names?", "query": "SELECT name FROM categories"}

{"question": "Wipe orders", "sql": "DELETE FROM orders"}
{"question": "Bad column?", "sql": "SELECT nope FROM orders"}
this is not json
{"question": "No SQL here"}
["a", "list"]
{"question": "how many customers?", "sql": "SELECT count(id) FROM customers"}
{"question": "Caf\u00e9 products?", "sql": "SELECT name FROM products WHERE name LIKE '%caf%'"}
EOF
    run learn shop.db --file pairs.jsonl
    expect_rc 1
    expect_out "3 stored, 1 replaced, 5 rejected"
    expect_err_has "askdb learn: pairs.jsonl:4: rejected: refused"
    expect_err_has "askdb learn: pairs.jsonl:5: rejected: the SQL fails on the database: no such column: nope"
    expect_err_has "askdb learn: pairs.jsonl:6: rejected: not valid JSON"
    expect_err_has 'askdb learn: pairs.jsonl:7: rejected: no "sql" (or "query") string'
    expect_err_has "askdb learn: pairs.jsonl:8: rejected: not a JSON object"
    [ "$(grep -c 'rejected' "$T/err")" = 5 ] || fail "not 5 rejection lines: $(cat "$T/err")"
    expect_listed shop.db "how many customers? => SELECT count(id) FROM customers" \
        "Category names? => SELECT name FROM categories" \
        "Café products? => SELECT name FROM products WHERE name LIKE '%caf%'"

    # A clean file exits 0; importing it again replaces every pair.
    head -n 2 "$W/pairs.jsonl" >"$W/good.jsonl"
    run learn shop.db --file good.jsonl
    expect_rc 0
    expect_out "0 stored, 2 replaced, 0 rejected"
    run learn shop.db --file missing.jsonl
    expect_rc 2
    expect_err_has "cannot read 'missing.jsonl'"
    # A UTF-8 byte order mark (Windows editors write one) starts no pair:
    # the first line was rejected as "not valid JSON", and an array whole.
    printf '\357\273\277' >"$W/bom.jsonl"
    cat "$W/good.jsonl" >>"$W/bom.jsonl"
    run learn shop.db --file bom.jsonl
    expect_rc 0
    expect_out "0 stored, 2 replaced, 0 rejected"
    printf '\357\273\277[%s]\n' "$(head -n 1 "$W/good.jsonl")" >"$W/bom.json"
    run learn shop.db --file bom.json
    expect_rc 0
    expect_out "0 stored, 1 replaced, 0 rejected"
}

imports_a_spider_array_for_its_db_id() {
    # Spider's train.json: an array over many databases; only items whose
    # db_id is the database's file name without extension are learned.
    cp "$SHOP_DB" "$W/concert_singer.sqlite"
    cat >"$W/train.json" <<'EOF'
[
    {
        "db_id": "shop",
        "question": "How many products are there?",
        "query": "SELECT count(*) FROM products"
    },
    {
        "db_id": "concert_singer",
        "question": "How many singers do we have?",
        "query": "SELECT count(*) FROM singer"
    },
    {
        "db_id": "shop",
        "question": "List the singers.",
        "query": "SELECT name FROM singer"
    },
    {"db_id": "shop", "question": "Countries of customers?",
     "query": "SELECT DISTINCT country FROM customers"},
    {"question": "Cheapest product?", "sql": "SELECT name FROM products ORDER BY price LIMIT 1"}
]
EOF
    run learn shop.db --file train.json
    expect_rc 1
    expect_out "3 stored, 0 replaced, 1 rejected, 1 skipped (other db_id)"
    expect_err_has "askdb learn: train.json:12: rejected: the SQL fails on the database: no such table: singer"
    expect_listed shop.db "How many products are there? => SELECT count(*) FROM products" \
        "Countries of customers? => SELECT DISTINCT country FROM customers" \
        "Cheapest product? => SELECT name FROM products ORDER BY price LIMIT 1"
    # Another file name, another db_id: the singer item is now the one
    # that matches (and fails: shop has no such table).
    run learn concert_singer.sqlite --file train.json
    expect_rc 1
    expect_out "1 stored, 0 replaced, 1 rejected, 3 skipped (other db_id)"
    expect_err_has "train.json:7: rejected: the SQL fails on the database: no such table: singer"

    # A broken array stops the import and keeps nothing of it.
    printf '[{"question": "Q1?", "sql": "SELECT 1"},\n {"question": "Q2?" "sql": "SELECT 2"}]\n' >"$W/broken.json"
    run learn shop.db --file broken.json
    expect_rc 2
    expect_err_has "broken.json:2: not valid JSON"
    expect_err_has "nothing from 'broken.json' was stored"
    expect_listed shop.db "How many products are there? => SELECT count(*) FROM products" \
        "Countries of customers? => SELECT DISTINCT country FROM customers" \
        "Cheapest product? => SELECT name FROM products ORDER BY price LIMIT 1"
}

list_round_trips_and_forget_removes() {
    cp "$SHOP_DB" "$W/other.db"
    run learn shop.db --question 'Say "hi" in SQL?' --sql "SELECT 'hi' AS greeting"
    expect_rc 0
    run learn shop.db --question "Active products?" --sql "SELECT name FROM products WHERE active = 1"
    expect_rc 0
    run learn shop.db --list
    cp "$T/out" "$W/export.jsonl"
    # Another database has its own pairs: the export goes in as a file.
    expect_listed other.db
    run learn other.db --file export.jsonl
    expect_rc 0
    expect_out "2 stored, 0 replaced, 0 rejected"
    expect_listed other.db "Say \"hi\" in SQL? => SELECT 'hi' AS greeting" \
        "Active products? => SELECT name FROM products WHERE active = 1"

    run learn shop.db --forget '  say "HI" in sql?'
    expect_rc 0
    expect_out 'forgot:   say "HI" in sql?'
    run learn shop.db --forget 'Say "hi" in SQL?'
    expect_rc 1
    expect_err_has "no stored question 'Say \"hi\" in SQL?' for 'shop.db'"
    expect_listed shop.db "Active products? => SELECT name FROM products WHERE active = 1"
    run learn shop.db --forget-all
    expect_rc 0
    expect_out "forgot 1 pair"
    expect_listed shop.db
    # other.db kept its pairs.
    [ "$(listed other.db | wc -l)" = 2 ] || fail "forgetting shop.db touched other.db"
}

pairs_belong_to_the_canonical_path() {
    mkdir -p "$W/sub"
    ln -s ../shop.db "$W/sub/link.db"
    run learn ./sub/../shop.db --question "How many orders?" --sql "SELECT count(*) FROM orders"
    expect_rc 0
    expect_listed sub/link.db "How many orders? => SELECT count(*) FROM orders"
    expect_listed "$W/shop.db" "How many orders? => SELECT count(*) FROM orders"
    # The data may change: the pairs stay with the path (a copy with the
    # same content elsewhere is another database).
    cp "$SHOP_DB" "$W/sub/copy.db"
    expect_listed sub/copy.db
    rm "$W/sub/link.db" "$W/sub/copy.db"
    rmdir "$W/sub"
}

memory_option_uses_another_store_and_refuses_databases() {
    run learn shop.db --memory "$T/mine.sqlite" --question "How many payments?" --sql "SELECT count(*) FROM payments"
    expect_rc 0
    [ -f "$T/mine.sqlite" ] || fail "--memory file not created"
    [ ! -e "$T/cache/memory.sqlite" ] || fail "the default store was created too"
    expect_listed shop.db
    run learn shop.db --memory "$T/mine.sqlite" --list
    expect_rc 0
    expect_out_has '"question":"How many payments?"'

    # Pointing --memory at a database (even the one being learned) changes
    # nothing: it is refused before SQLite opens it.
    cp "$SHOP_DB" "$T/user.db"
    run learn shop.db --memory "$T/user.db" --question "Q?" --sql "SELECT 1"
    expect_rc 2
    expect_err_has "is another SQLite database, not an askdb memory store"
    [ "$(sha "$T/user.db")" = "$SHOP_SUM" ] || fail "--memory changed a database"
    run learn shop.db --memory shop.db --question "Q?" --sql "SELECT 1"
    expect_rc 2
    expect_err_has "not an askdb memory store"
    run learn shop.db --memory shop.db --forget-all
    expect_rc 2
    printf 'plain text, not a database\n' >"$T/notes.txt"
    run learn shop.db --memory "$T/notes.txt" --list
    expect_rc 2
    expect_err_has "not an askdb memory store (not an SQLite file)"
    [ ! -e "$T/user.db-journal" ] && [ ! -e "$T/user.db-wal" ] || fail "a journal appeared next to the database"
    rm "$T/user.db"
}

nothing_learned_yet_lists_nothing() {
    run learn shop.db --list
    expect_rc 0
    expect_no_out
    run learn shop.db --forget "Anything?"
    expect_rc 1
    expect_err_has "no stored question 'Anything?'"
    run learn shop.db --forget-all
    expect_rc 0
    expect_out "forgot 0 pairs"
    [ ! -e "$T/cache/memory.sqlite" ] || fail "listing created a store"
    # A --memory in a folder that does not exist is no store that has
    # nothing yet: a slip in the path is said, as by learning and asking
    # (before, --list printed nothing and --forget-all 'forgot 0 pairs').
    local a
    for a in --list "--forget Anything?" --forget-all; do
        # shellcheck disable=SC2086
        run learn shop.db --memory "$T/nodir/m.sqlite" $a
        expect_rc 2
        expect_err_has "askdb learn: --memory: cannot use memory store '$T/nodir/m.sqlite': its folder does not exist"
        expect_no_out
    done
    [ ! -e "$T/nodir" ] || fail "a folder was made"
}

refused_pairs_and_broken_files_create_no_store() {
    # A new store is made by the first pair stored: a refused or failing
    # pair, a file with nothing to store or a broken one leaves no file.
    run learn shop.db --memory "$T/new.sqlite" --question x --sql "DELETE FROM orders"
    expect_rc 1
    expect_err_has "askdb learn: not stored: refused"
    [ ! -e "$T/new.sqlite" ] || fail "a refused pair left a store behind"
    run learn shop.db --question "Names?" --sql "SELECT nope FROM customers"
    expect_rc 1
    [ ! -e "$T/cache/memory.sqlite" ] || fail "a failing pair made the default store"
    printf '{"question": "Wipe", "sql": "DELETE FROM orders"}\nnot json\n' >"$W/bad.jsonl"
    run learn shop.db --memory "$T/new.sqlite" --file bad.jsonl
    expect_rc 1
    expect_out "0 stored, 0 replaced, 2 rejected"
    [ ! -e "$T/new.sqlite" ] || fail "a file of rejected pairs left a store behind"
    # Broken after an item that would be stored: found before any is.
    printf '[{"question": "Q1?", "sql": "SELECT 1"},\n {"question": "Q2?" "sql": "SELECT 2"}]\n' >"$W/broken.json"
    run learn shop.db --memory "$T/new.sqlite" --file broken.json
    expect_rc 2
    expect_err_has "broken.json:2: not valid JSON"
    expect_err_has "nothing from 'broken.json' was stored"
    [ ! -e "$T/new.sqlite" ] || fail "a broken file left a store behind"
    # An empty file given as the store stays empty until a pair is stored.
    : >"$T/empty.sqlite"
    run learn shop.db --memory "$T/empty.sqlite" --question x --sql "DROP TABLE orders"
    expect_rc 1
    [ ! -s "$T/empty.sqlite" ] || fail "a refused pair wrote to an empty store file"
    # A folder that is not there is a store error at once.
    run learn shop.db --memory "$T/nodir/s.sqlite" --question "One?" --sql "SELECT 1"
    expect_rc 2
    expect_err_has "cannot open memory store '$T/nodir/s.sqlite'"
    [ ! -e "$T/nodir" ] || fail "a folder was made for the store"
    # The first stored pair makes the store.
    run learn shop.db --memory "$T/new.sqlite" --question "One?" --sql "SELECT 1"
    expect_rc 0
    [ -s "$T/new.sqlite" ] || fail "the first pair made no store"
    expect_listed shop.db
    run learn shop.db --memory "$T/new.sqlite" --list
    expect_rc 0
    expect_out_has '"question":"One?"'
}

nothing_stored_makes_no_cache_directory() {
    # The default store's folder (the cache directory) is made with the
    # store, by the first pair stored: a refused or failing pair, a file
    # of rejected pairs, a listing or a forget leaves nothing on disk.
    export ASKDB_CACHE_DIR="$T/fresh/cache"
    run learn shop.db --question x --sql "DELETE FROM orders"
    expect_rc 1
    run learn shop.db --question "Names?" --sql "SELECT nope FROM customers"
    expect_rc 1
    printf '{"question": "Wipe", "sql": "DELETE FROM orders"}\n' >"$W/bad.jsonl"
    run learn shop.db --file bad.jsonl
    expect_rc 1
    expect_out "0 stored, 0 replaced, 1 rejected"
    run learn shop.db --list
    expect_rc 0
    run learn shop.db --forget-all
    expect_rc 0
    [ ! -e "$T/fresh" ] || fail "made without a pair stored: $(cd "$T" && find fresh | tr '\n' ' ')"
    # A cache directory that cannot be made is said at once, as before.
    : >"$T/file"
    ASKDB_CACHE_DIR="$T/file/cache" run learn shop.db --question "One?" --sql "SELECT 1"
    expect_rc 2
    expect_err_has "$T/file/cache"
    # The first stored pair makes the folder and the store.
    run learn shop.db --question "One?" --sql "SELECT 1"
    expect_rc 0
    [ -s "$T/fresh/cache/memory.sqlite" ] || fail "the first pair made no store"
    [ "$(stat -c %a "$T/fresh/cache")" = 700 ] || fail "the cache folder is not private: $(stat -c %a "$T/fresh/cache")"
    # A relative cache directory, one level and two, made in the working
    # directory by the first pair as well.
    for rel in relcache rel/cache; do
        ASKDB_CACHE_DIR=$rel run learn shop.db --question "One?" --sql "SELECT 1"
        expect_rc 0
        [ -s "$W/$rel/memory.sqlite" ] || fail "a relative $rel made no store"
    done
    rm -rf "$W/relcache" "$W/rel"
}

# A --file import holds the store's write lock until it ends: a second
# learn waits 5 s for it, then says who holds the store and what to do
# (it said only "database is locked" before).
a_second_learn_during_an_import_says_the_store_is_busy() {
    local pid i locked=
    run learn shop.db --question "How many customers?" --sql "SELECT count(*) FROM customers"
    expect_rc 0
    # The first item runs until its --timeout (10 s), the lock held all along.
    printf '%s\n' \
        '{"question": "Forever?", "sql": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r"}' \
        '{"question": "How many orders?", "sql": "SELECT count(*) FROM orders"}' >"$T/slow.jsonl"
    (cd "$W" && exec "$ASKDB" learn shop.db --timeout 10000 --file "$T/slow.jsonl") </dev/null >"$T/import.out" 2>"$T/import.err" &
    pid=$!
    # shellcheck disable=SC2064
    trap "kill $pid 2>/dev/null" EXIT
    for i in $(seq 100); do
        if ! "$PY" -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
c.execute("BEGIN IMMEDIATE"); c.execute("ROLLBACK")' "$T/cache/memory.sqlite" 2>/dev/null; then
            locked=1
            break
        fi
        sleep 0.05
    done
    [ -n "$locked" ] || fail "the import never took the store"
    run learn shop.db --question "How many products?" --sql "SELECT count(*) FROM products"
    expect_rc 2
    expect_err_has "database is locked"
    expect_err_has "another askdb learn is writing to this store"
    expect_err_has "try again when it has finished"
    wait "$pid"
    trap - EXIT
    grep -qx "1 stored, 0 replaced, 1 rejected" "$T/import.out" || fail "import: $(cat "$T/import.out" "$T/import.err")"
    run learn shop.db --question "How many products?" --sql "SELECT count(*) FROM products"
    expect_rc 0
    expect_listed shop.db "How many customers? => SELECT count(*) FROM customers" \
        "How many orders? => SELECT count(*) FROM orders" \
        "How many products? => SELECT count(*) FROM products"
}

damaged_store_says_why() {
    # A store damaged after its header: --list says what SQLite found, as
    # ask's warning does (before: only "cannot read the memory store").
    "$PY" -c 'import json
for i in range(300): print(json.dumps({"question": "How many orders above %d?" % i, "sql": "SELECT count(*) FROM orders WHERE total > %d" % i}))' >"$T/p.jsonl"
    run learn shop.db --memory "$T/d.sqlite" --file "$T/p.jsonl"
    expect_rc 0
    # The schema pages stay whole (the store opens); the pairs' do not.
    "$PY" -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
for pg in range(5, len(b) // 4096, 3): b[pg * 4096 + 200:pg * 4096 + 400] = b"\xab" * 200
open(p, "wb").write(b)' "$T/d.sqlite"
    run learn shop.db --memory "$T/d.sqlite" --list
    expect_rc 2
    expect_err_has "askdb learn: cannot read the memory store '$T/d.sqlite': database disk image is malformed"
    expect_no_out
}

usage_errors_exit_2_and_missing_db_exits_3() {
    run learn
    expect_rc 2
    expect_err_has "give exactly one database"
    run learn shop.db
    expect_rc 2
    expect_err_has "give exactly one of --question/--sql, --file, --list, --forget, --forget-all"
    run learn shop.db --question "Q?"
    expect_rc 2
    expect_err_has "--question and --sql go together"
    run learn shop.db --list --forget-all
    expect_rc 2
    run learn shop.db other.db --list
    expect_rc 2
    run learn shop.db --list --timeout 0
    expect_rc 2
    expect_err_has "--timeout takes a whole number"
    run learn shop.db --list --bogus
    expect_rc 2
    expect_err_has "see 'askdb help learn'"
    run learn missing.db --question "Q?" --sql "SELECT 1"
    expect_rc 3
    expect_err_has "missing.db"
    [ ! -e "$W/missing.db" ] || fail "a database file was created"
    run learn missing.db --list
    expect_rc 3
    [ ! -e "$T/cache/memory.sqlite" ] || fail "a store was created by a failed command"

    run learn --help
    expect_rc 0
    expect_out_has "usage: askdb learn DB --question Q --sql S"
    expect_out_has "--forget-all"
    run help learn
    expect_rc 0
    expect_out_has "usage: askdb learn DB --question Q --sql S"
}

TESTS=(stores_a_verified_pair_and_replaces_it
       a_capped_verifying_run_says_its_count_is_a_lower_bound rejects_writes_and_failing_sql
       imports_a_json_lines_file_with_counts imports_a_spider_array_for_its_db_id
       list_round_trips_and_forget_removes pairs_belong_to_the_canonical_path
       memory_option_uses_another_store_and_refuses_databases
       nothing_learned_yet_lists_nothing refused_pairs_and_broken_files_create_no_store
       nothing_stored_makes_no_cache_directory damaged_store_says_why
       a_second_learn_during_an_import_says_the_store_is_busy
       usage_errors_exit_2_and_missing_db_exits_3)

PASSED=0
FAILED=0
for name in "${TESTS[@]}"; do
    if [ -n "$FILTER" ] && ! printf '%s\n' "$name" | grep -qE -- "$FILTER"; then
        continue
    fi
    T="$TMP/t/$name"
    W="$T/w"
    mkdir -p "$W"
    cp "$SHOP_DB" "$W/shop.db"
    (
        export ASKDB_CACHE_DIR="$T/cache"
        "$name"
        # The database is never written, and nothing appears beside it.
        [ "$(sha "$W/shop.db")" = "$SHOP_SUM" ] || fail "shop.db changed"
        extra=$(cd "$W" && find . -name 'shop.db?*')
        [ -z "$extra" ] || fail "files appeared beside the database: $extra"
    ) >>"$T/.log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && [ ! -s "$T/.fail" ]; then
        PASSED=$((PASSED + 1)); echo "ok $name"
    else
        FAILED=$((FAILED + 1))
        echo "FAIL $name: $(head -n1 "$T/.fail" 2>/dev/null || echo "exit $rc")"
        [ -n "${E2E_VERBOSE:-}" ] && tail -n 15 "$T/.log" | sed 's/^/    /'
    fi
done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
