#!/usr/bin/env bash
# tests/e2e/duckdb.sh - askdb on DuckDB: a .duckdb file, a CSV and a Parquet
# file, through the real binary.
#
#   ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm bash tests/e2e/duckdb.sh
#   bash tests/e2e/duckdb.sh --filter 'refuses'      (ERE on test names)
#   E2E_VERBOSE=1  show the last commands of a failed test
#   E2E_KEEP=1     keep the temp dir
#
# The sample shop database (examples/shop.db) is copied into DuckDB by
# scripts/load_duckdb.py, and its orders table exported to orders.csv and
# orders.parquet. The tests run schema, sql and ask (with the scripted
# model, tests/fake_llm) on each, DuckDB's own escapes (COPY ... TO,
# ATTACH, INSTALL, LOAD, read_text() and friends on other files, SET,
# PRAGMA, ...) with every file's sha256 and the directory's listing
# compared before and after, the time limit, the row and byte caps, and
# the faults of opening (missing, not a database, held by a writer).
# When this askdb was built without DuckDB (scripts/duckdb.sh not run)
# the script prints one SKIP line and exits 0.
# Output: "ok NAME" / "FAIL NAME: reason", then "N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
ASKDB=$(abspath "${ASKDB:-$ROOT/build/asan/askdb}")
FAKE_LLM=$(abspath "${FAKE_LLM:-$ROOT/build/asan/fake_llm}")
SHOP_DB=$(abspath "${SHOP_DB:-$ROOT/examples/shop.db}")

FILTER=
while [ $# -gt 0 ]; do
    case $1 in
    --filter) FILTER=${2:-}; shift 2 ;;
    --filter=*) FILTER=${1#--filter=}; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "duckdb.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

for _v in $(compgen -e); do case $_v in ASKDB_*) unset "$_v" ;; esac; done
unset OPENAI_API_KEY ANTHROPIC_API_KEY
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy='127.0.0.1,localhost' NO_PROXY='127.0.0.1,localhost'
export ASKDB_RETRY_BASE_MS=1 LC_ALL=C PYTHONIOENCODING=utf-8 PYTHONUTF8=1
RUN_LIMIT_S=${E2E_RUN_LIMIT_S:-60}

PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
[ -n "$PY" ] || { echo "duckdb.sh: python3 is needed" >&2; exit 2; }
for _f in "$ASKDB" "$FAKE_LLM"; do
    [ -x "$_f" ] || { echo "duckdb.sh: $_f is not built" >&2; exit 2; }
done
[ -f "$SHOP_DB" ] || { echo "duckdb.sh: $SHOP_DB is missing (make examples/shop.db)" >&2; exit 2; }

# A build without DuckDB says so for a .duckdb path (exit 3): then skip.
TMP=$(mktemp -d "${TMPDIR:-/tmp}/askdb-duckdb-e2e.XXXXXX") || exit 2
: >"$TMP/none.duckdb"
if "$ASKDB" schema "$TMP/none.duckdb" 2>&1 | grep -q "built without DuckDB"; then
    rm -rf "$TMP"
    echo "SKIP duckdb.sh: this askdb was built without DuckDB (run scripts/duckdb.sh, then make)"
    exit 0
fi
rm -f "$TMP/none.duckdb"
: >"$TMP/llm.pids"

cleanup() {
    local pid
    while read -r pid; do [ -n "$pid" ] && kill "$pid" 2>/dev/null; done <"$TMP/llm.pids"
    if [ -n "${E2E_KEEP:-}" ]; then echo "duckdb.sh: kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The data, once: shop.duckdb (with comments, as people write them for
# exactly this), orders.csv and orders.parquet. The loader's own venv
# lives in the user's cache, not the test's.
DATA=$TMP/data
mkdir -p "$DATA"
"$ROOT/scripts/load_duckdb.py" --sqlite "$SHOP_DB" --out "$DATA/shop.duckdb" \
    --export orders --csv "$DATA/orders.csv" --parquet "$DATA/orders.parquet" \
    >"$TMP/load.log" 2>&1 || { echo "duckdb.sh: load_duckdb.py failed: $(tail -5 "$TMP/load.log")" >&2; exit 2; }
DPY=$("$ROOT/scripts/load_duckdb.py" --print-python 2>>"$TMP/load.log")
"$DPY" - "$DATA/shop.duckdb" <<'EOF' || { echo "duckdb.sh: cannot add comments" >&2; exit 2; }
import duckdb, sys
c = duckdb.connect(sys.argv[1])
c.execute("COMMENT ON TABLE orders IS 'One row per order placed in the shop'")
c.execute("COMMENT ON COLUMN orders.total IS 'EUR, the sum of the order''s items'")
# A second schema: a table only there, and one named like main's orders.
c.execute("CREATE SCHEMA sales")
c.execute("CREATE TABLE sales.regions (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL)")
c.execute("INSERT INTO sales.regions VALUES (1, 'North'), (2, 'South'), (3, 'Lakeside')")
c.execute("CREATE TABLE sales.orders (id INTEGER PRIMARY KEY, "
          "region_id INTEGER NOT NULL REFERENCES sales.regions (id), "
          "amount DOUBLE NOT NULL, channel VARCHAR NOT NULL)")
c.execute("INSERT INTO sales.orders VALUES (1, 1, 10.5, 'web'), (2, 2, 20.0, 'shop'), "
          "(3, 1, 5.25, 'web'), (4, 3, 7.0, 'phone')")
c.execute("COMMENT ON TABLE sales.orders IS 'Orders taken by the sales team'")
c.execute("CHECKPOINT")
c.close()
EOF
# Many tables: more than the schema read samples in its time budget.
"$DPY" - "$DATA/many.duckdb" <<'EOF' || { echo "duckdb.sh: cannot make many.duckdb" >&2; exit 2; }
import duckdb, sys
c = duckdb.connect(sys.argv[1])
C, V = "bdfgklmnprstvz", "aeiou"
for i in range(150):
    # a word a question can name: 1 dabor, 136 sudor
    t = C[i % 14] + V[i // 14 % 5] + C[i // 70] + "or"
    c.execute(f"CREATE TABLE {t} (id INTEGER PRIMARY KEY, label VARCHAR NOT NULL, note VARCHAR)")
    c.execute(f"INSERT INTO {t} VALUES (1, 'label_{i:03d}', 'note_{i:03d}'), (2, 'other_{i:03d}', NULL)")
c.execute("CHECKPOINT")
c.close()
EOF
export ASKDB_CACHE_DIR=$TMP/cache

# --------------------------------------------------------------------------
# Helpers (inside a test's subshell; T = the test's dir, W = T/w, askdb's
# working directory with fresh copies of the data)
# --------------------------------------------------------------------------
fail() {
    printf '%s\n' "$*" | tr '\n' '|' | cut -c1-700 >"$T/.fail"
    exit 1
}
now_ms() { local t=${EPOCHREALTIME/./}; echo $(( ${t#0} / 1000 )); }

run() {
    local t0
    t0=$(now_ms)
    (cd "$W" && exec timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" "$@") \
        </dev/null >"$T/out" 2>"$T/err"
    RC=$?
    ELAPSED_MS=$(( $(now_ms) - t0 ))
    { printf '$ askdb'; printf ' %q' "$@"; printf '\n-> exit %s in %s ms\n' "$RC" "$ELAPSED_MS"
      sed 's/^/  stderr: /' "$T/err" | head -20; } >>"$T/.trace"
    [ "$RC" != 124 ] && [ "$RC" != 137 ] || fail "askdb $* did not finish within $RUN_LIMIT_S s"
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer' "$T/err"; then
        fail "sanitizer report from askdb $* :: $(grep -m3 -E 'Sanitizer|runtime error' "$T/err")"
    fi
}

start_llm() {
    local d=$T/llm pid _
    stop_llm
    mkdir -p "$d"
    printf '%s' "$1" >"$d/script.json"
    LLMLOG=$d/log
    : >"$LLMLOG"
    rm -f "$d/port"
    "$FAKE_LLM" --script "$d/script.json" --log "$LLMLOG" --port 0 --port-file "$d/port" 2>"$d/stderr" &
    pid=$!
    echo "$pid" >"$T/.llm"
    echo "$pid" >>"$TMP/llm.pids"
    for _ in $(seq 1 100); do
        [ -s "$d/port" ] && break
        kill -0 "$pid" 2>/dev/null || fail "fake_llm exited: $(cat "$d/stderr")"
        sleep 0.05
    done
    [ -s "$d/port" ] || fail "fake_llm did not start"
    URL="http://127.0.0.1:$(cat "$d/port")"
}
stop_llm() {
    [ -s "$T/.llm" ] || return 0
    kill "$(cat "$T/.llm")" 2>/dev/null
    wait "$(cat "$T/.llm")" 2>/dev/null
    : >"$T/.llm"
}
replies() { "$PY" -c 'import json,sys; print(json.dumps([{"content": a} for a in sys.argv[1:]]))' "$@"; }
always() { "$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "repeat": True}]))' "$1"; }
fence() { printf '```sql\n%s\n```' "$1"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
# The sandbox's listing with checksums: a new, removed or changed file
# (a .wal, a .tmp directory, an exported file) shows up as a difference.
snapshot() { (cd "$W" && find . | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort); }
nreq() { if [ -s "${LLMLOG:-}" ]; then wc -l <"$LLMLOG" | tr -d ' '; else echo 0; fi; }

expect_rc() { [ "$RC" = "$1" ] || fail "exit $RC, expected $1 (stderr: $(head -c 300 "$T/err"))"; }
expect_err_has() { grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1' (stderr: $(head -c 400 "$T/err"))"; }
expect_err_lacks() { ! grep -qF -- "$1" "$T/err" || fail "stderr has '$1' (stderr: $(head -c 400 "$T/err"))"; }
expect_out_has() { grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1' (stdout: $(head -c 600 "$T/out"))"; }
expect_out() {
    local fmt=$1
    shift
    # shellcheck disable=SC2059
    printf -- "$fmt" "$@" >"$T/expected"
    cmp -s "$T/expected" "$T/out" || fail "stdout differs: expected $(head -c 300 "$T/expected" | od -c | head -5) got $(head -c 300 "$T/out" | od -c | head -5)"
}
# pycheck CODE [ARGS]: Python assertions over out, err, reqs (the model's
# requests) and user(i) (the last user message of request i).
pycheck() {
    local code=$1 msg
    shift
    msg=$("$PY" - "$T" "${LLMLOG:-}" "$code" "$@" <<'PY' 2>&1
import json, os, sys
tdir, log, code = sys.argv[1:4]
args = sys.argv[4:]
def rd(p):
    try:
        return open(p, encoding="utf-8", errors="replace", newline="").read()
    except FileNotFoundError:
        return ""
out, err = rd(os.path.join(tdir, "out")), rd(os.path.join(tdir, "err"))
reqs = [json.loads(l) for l in open(log)] if log and os.path.exists(log) else []
def msgs(i):
    return reqs[i]["body"]["messages"]
def user(i):
    return [m for m in msgs(i) if m["role"] == "user"][-1]["content"]
exec(code)
PY
    ) || fail "check failed: $msg"
}
copy_data() { cp "$DATA/shop.duckdb" "$DATA/orders.csv" "$DATA/orders.parquet" "$W/"; }

# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

schema_shows_keys_comments_samples_and_estimates() {
    copy_data
    run schema shop.duckdb
    expect_rc 0
    expect_out_has "-- One row per order placed in the shop"
    expect_out_has "CREATE TABLE orders ("
    expect_out_has "  id BIGINT PRIMARY KEY,"
    expect_out_has "  total DOUBLE NOT NULL, -- EUR, the sum of the order's items"
    expect_out_has "  FOREIGN KEY (customer_id) REFERENCES customers(id)"
    expect_out_has "  UNIQUE (order_id, product_id),"
    expect_out_has "  FOREIGN KEY (parent_id) REFERENCES categories(id)"
    expect_out_has "); -- about 250 rows"
    expect_out_has "); -- 60 rows"
    expect_out_has "status VARCHAR NOT NULL, -- e.g. 'delivered', 'refunded', 'cancelled'"
    expect_out_has "CREATE VIEW customer_revenue ("
    pycheck '
tables = [l.split()[2] for l in out.splitlines() if l.startswith("CREATE ")]
assert sorted(tables[:7]) == sorted(["categories", "customers", "orders", "payments",
    "products", "order_items", "customer_revenue"]), tables
# main first, then the other schema, qualified
assert tables[7:] == ["sales.regions", "sales.orders"], tables
'
    run schema orders.csv
    expect_rc 0
    expect_out_has "CREATE TABLE orders ("
    expect_out_has "  order_date TIMESTAMP,"
    expect_out_has "); -- 250 rows"
    run schema orders.parquet
    expect_rc 0
    expect_out_has "CREATE TABLE orders ("
    expect_out_has "  shipping_country VARCHAR, -- e.g. "
    expect_out_has "); -- 250 rows"
}

# A schema read that leaves samples for later (ASKDB_DUCKDB_SAMPLE_MS=0:
# only the first 20 tables) still shows every sample where it shows the
# table: the listing, the prompt cut to the linked tables, the whole one.
samples_read_later_are_shown_where_their_tables_are() {
    cp "$DATA/many.duckdb" "$W/"
    run schema many.duckdb
    expect_rc 0
    cp "$T/out" "$T/all.txt"
    expect_out_has "  label VARCHAR NOT NULL, -- e.g. 'label_137', 'other_137'"
    ASKDB_DUCKDB_SAMPLE_MS=0 run schema many.duckdb
    expect_rc 0
    cmp -s "$T/out" "$T/all.txt" || fail "the listing differs when samples are read later"
    start_llm "$(always "$(fence "SELECT count(*) AS n FROM sudor")")"
    ASKDB_DUCKDB_SAMPLE_MS=0 run ask --llm-url "$URL" --model test --no-question-check -f csv many.duckdb "How many sudors are there?"
    expect_rc 0
    expect_out 'n\n2\n'
    ASKDB_DUCKDB_SAMPLE_MS=0 run ask --llm-url "$URL" --model test --no-question-check --no-linking -f csv many.duckdb "How many sudors are there?"
    expect_rc 0
    pycheck '
cut = msgs(0)[0]["content"] + msgs(0)[1]["content"]
assert "CREATE TABLE sudor (" in cut and "CREATE TABLE dabor (" not in cut, cut[:800]
assert "'"'"'label_136'"'"'" in cut and "'"'"'note_136'"'"'" in cut, cut
whole = msgs(1)[0]["content"] + msgs(1)[1]["content"]
for t in ("001", "137", "149"):
    assert "'"'"'label_%s'"'"'" % t in whole, t
assert "); -- 2 rows" in whole, whole[:600]
'
}

# The tables of another schema of the file are shown qualified; main's
# keep their bare names, even the one named like another schema's.
other_schemas_show_qualified() {
    copy_data
    run schema shop.duckdb
    expect_rc 0
    pycheck '
import re
assert "CREATE TABLE sales.regions (\n  id INTEGER PRIMARY KEY,\n  name VARCHAR NOT NULL -- e.g. '"'"'North'"'"', '"'"'South'"'"', '"'"'Lakeside'"'"'\n); -- 3 rows\n" in out, out
assert "-- Orders taken by the sales team\nCREATE TABLE sales.orders (\n" in out, out
assert "  FOREIGN KEY (region_id) REFERENCES sales.regions(id)\n); -- 4 rows" in out, out
bare = re.search(r"\nCREATE TABLE orders \((.*?)\n\);", out, re.S).group(1)
assert "customer_id" in bare and "channel" not in bare, bare
'
    run schema -f json shop.duckdb
    expect_rc 0
    pycheck '
j = json.loads(out)
t = {x["name"]: x for x in j["tables"]}
assert t["sales.orders"]["schema"] == "sales" and t["sales.orders"]["rows"] == 4, t["sales.orders"]
assert "schema" not in t["orders"], t["orders"]
assert t["sales.orders"]["foreign_keys"] == [{"from": "region_id", "table": "sales.regions", "to": "id"}]
'
    run sql -f csv shop.duckdb "SELECT r.name, count(*) AS n FROM sales.orders o JOIN sales.regions r ON r.id = o.region_id GROUP BY r.name ORDER BY r.name"
    expect_rc 0
    expect_out 'name,n\nLakeside,1\nNorth,2\nSouth,1\n'
    run sql -f csv shop.duckdb "SELECT (SELECT count(*) FROM orders) AS bare, (SELECT count(*) FROM sales.orders) AS sales"
    expect_rc 0
    expect_out 'bare,sales\n250,4\n'
    # MCP: the table resource and search_objects name it qualified.
    printf '%s\n' \
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"askdb://shop/table/sales.orders"}}' \
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_objects","arguments":{"pattern":"orders"}}}' \
        >"$T/mcp.in"
    (cd "$W" && exec timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" mcp shop.duckdb) <"$T/mcp.in" >"$T/out" 2>"$T/err"
    ! grep -qE 'Sanitizer|runtime error:' "$T/err" || fail "sanitizer report from askdb mcp: $(head -c 300 "$T/err")"
    pycheck '
got = {r["id"]: r for r in map(json.loads, out.splitlines())}
t = json.loads(got[2]["result"]["contents"][0]["text"])
assert t["name"] == "sales.orders" and t["schema"] == "sales", t
names = [o["table"] for o in got[3]["result"]["structuredContent"]["objects"]]
assert "orders" in names and "sales.orders" in names, names
'
}

# ask over a table of another schema: qualified in the prompt, in the
# value the question names and in the repair hint; the answer is its.
ask_answers_from_another_schema() {
    copy_data
    local bad good
    bad=$(fence "SELECT count(*) AS n FROM sales.orders o JOIN sales.regions r ON r.id = o.region_id WHERE r.nme = 'Lakeside'")
    good=$(fence "SELECT count(*) AS n FROM sales.orders o JOIN sales.regions r ON r.id = o.region_id WHERE r.name = 'Lakeside'")
    start_llm "$(replies "$bad" "$good" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check --values -f csv shop.duckdb "How many sales orders came from the Lakeside region?"
    expect_rc 0
    expect_out 'n\n1\n'
    [ "$(nreq)" = 2 ] || fail "the model got $(nreq) requests, expected 2"
    pycheck '
first = msgs(0)[0]["content"] + msgs(0)[1]["content"]
assert "CREATE TABLE sales.regions (" in first and "CREATE TABLE sales.orders (" in first, first[:600]
assert "sales.regions.name = '"'"'Lakeside'"'"'" in first, first
last = user(1)
assert "there is no column '"'"'r.nme'"'"'; r is table sales.regions, which has columns: id, name" in last, last
'
}

# A text value found nowhere in its column, on DuckDB's types and its
# estimated counts (tables over 200 rows): the few values of a code
# column are listed whole ('Japan' against country codes), and a value
# stored in a table a foreign key away is said so (payments.method), by
# the checks' own queries.
ask_says_where_a_missing_value_is() {
    copy_data
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM orders o JOIN customers c ON o.customer_id = c.id WHERE c.country = 'Japan'")" "$(fence "SELECT count(*) AS n FROM orders o JOIN customers c ON o.customer_id = c.id WHERE c.country = 'JP'")" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -f csv shop.duckdb "How many orders did customers from Japan place?"
    expect_rc 0
    expect_out 'n\n8\n'
    [ "$(nreq)" = 2 ] || fail "the model got $(nreq) requests, expected 2"
    pycheck '
last = user(1)
assert "customers.country has no value '"'"'Japan'"'"'; its 10 values are '"'"'DE'"'"', '"'"'ES'"'"'" in last, last
'
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM orders WHERE status = 'gift_card'")" "$(fence "SELECT count(*) AS n FROM payments WHERE method = 'gift_card'")" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -f csv shop.duckdb "How many payments were made with a gift card?"
    expect_rc 0
    expect_out 'n\n23\n'
    [ "$(nreq)" = 2 ] || fail "the model got $(nreq) requests, expected 2"
    pycheck '
last = user(1)
assert "'"'"'gift_card'"'"' is not a value of orders.status; it is stored in payments.method" in last, last
'
}

sql_reads_the_same_rows_from_every_form() {
    copy_data
    local f q="SELECT id, customer_id, status, total FROM orders WHERE id <= 3 ORDER BY id"
    cp "$SHOP_DB" "$W/shop.db"
    run sql -f csv shop.db "$q"
    expect_rc 0
    cp "$T/out" "$T/sqlite.csv"
    grep -q '^1,' "$T/sqlite.csv" || fail "sqlite gave no rows: $(cat "$T/sqlite.csv")"
    for f in shop.duckdb orders.csv orders.parquet; do
        run sql -f csv "$f" "$q"
        expect_rc 0
        cmp -s "$T/out" "$T/sqlite.csv" || fail "$f: $(cat "$T/out") differs from SQLite's $(cat "$T/sqlite.csv")"
    done
}

# askdb shell on orders.csv with the lines of $T/in (no model: .sql
# lines alone), its output in $T/out and $T/err, its code in RC.
shell_on_orders() {
    (cd "$W" && exec timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" shell --llm-url http://127.0.0.1:9 \
        --model test orders.csv) <"$T/in" >"$T/out" 2>"$T/err"
    RC=$?
}

# The shell's .sql goes on over lines while a quote is open; in an E'...'
# string a backslash escapes the quote after it (a plain '...' keeps its
# backslash): read as a quote that closed, E'it\'s' left the statement
# open, and the next line was taken into it.
shell_sql_reads_escape_strings() {
    copy_data
    printf '%s\n' ".sql SELECT E'it\\'s' AS a, 'C:\\' AS b" '.sql SELECT 2 AS two' \
        ".sql SELECT e'x\\'" "' AS c" ';' >"$T/in"
    shell_on_orders
    expect_rc 0
    printf '%s\n' 'a,b' "it's,C:\\" 'two' '2' 'c' "\"x'" '"' >"$T/want"
    cmp -s "$T/want" "$T/out" || fail "stdout: $(od -c "$T/out" | head -8) (stderr: $(head -c 300 "$T/err"))"
}

# A .sql statement's dollar-quoted strings ($$...$$, $tag$...$tag$, as
# PostgreSQL reads them, DuckDB too) hold ';' and line breaks: a ';' in one
# ended the statement, which DuckDB found unterminated. Only the same tag
# ends one (case counts); $$ ending a name, $1 and $t without its closing
# '$' are no quotes.
shell_sql_reads_dollar_quoted_strings() {
    copy_data
    printf '%s\n' '.sql SELECT $$a;' 'b$$ AS x, $t$c;$$d$t$ AS y, $T$e$t$f$T$ AS z;' \
        '.sql SELECT 1 AS "q$$", $_1$;$_1$ AS w' '.sql SELECT 2 AS two' >"$T/in"
    shell_on_orders
    expect_rc 0
    printf '%s\n' 'x,y,z' '"a;' 'b",c;$$d,e$t$f' 'q$$,w' '1,;' 'two' '2' >"$T/want"
    cmp -s "$T/want" "$T/out" || fail "stdout: $(od -c "$T/out" | head -8) (stderr: $(head -c 300 "$T/err"))"
    [ ! -s "$T/err" ] || fail "stderr: $(head -c 300 "$T/err")"
}

# A .sql line that ends with a word that cannot end a statement (ORDER,
# AND...) goes on to the next line; one that ends with such a word as a
# name (after AS, or after a '.', as DuckDB and PostgreSQL take it), or
# with the '*' of DuckDB's FROM t SELECT *, is a statement of its own.
shell_sql_keyword_as_a_name_ends_the_line() {
    copy_data
    printf '%s\n' '.sql SELECT 1 AS order' \
        '.sql SELECT 2 AS x FROM (SELECT 3 AS "from") AS o ORDER BY o.from' \
        '.sql FROM (SELECT 4 AS four) SELECT *' '.sql SELECT 5 AS five ORDER' 'BY five;' >"$T/in"
    shell_on_orders
    expect_rc 0
    printf '%s\n' 'order' '1' 'x' '2' 'four' '4' 'five' '5' >"$T/want"
    cmp -s "$T/want" "$T/out" || fail "stdout: $(od -c "$T/out" | head -8) (stderr: $(head -c 300 "$T/err"))"
    [ ! -s "$T/err" ] || fail "stderr: $(head -c 300 "$T/err")"
}

# A parameter has no value to bind: a syntax error in the words of the
# other engines' (it was a runtime error, "the statement has parameters").
parameters_are_a_syntax_error_to_repair() {
    copy_data
    local q
    for q in 'SELECT first_name FROM customers WHERE id = ?' \
             'SELECT first_name FROM customers WHERE id = $1' \
             'SELECT first_name FROM customers WHERE id = $id'; do
        run sql shop.duckdb "$q"
        expect_rc 1
        expect_err_has "the query has a placeholder (\$1, ?, \$name); write the values into the SQL"
    done
    start_llm "$(replies "$(fence 'SELECT first_name FROM customers WHERE id = ?')" \
        "$(fence "SELECT first_name FROM customers WHERE id = 1")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -f json shop.duckdb "Name of customer 1?"
    expect_rc 0
    [ "$(nreq)" = 2 ] || fail "the model got $(nreq) requests, expected 2"
    pycheck '
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["syntax", "none"], j["attempts"]
assert j["rows"] == [["Olivia"]], j["rows"]
'
}

comments_end_where_duckdb_ends_them() {
    # The DuckDB guard skipped comments by rules of its own: a "--" comment
    # ran to a line feed only, so one that a carriage return ends (as
    # DuckDB's lexer, which is PostgreSQL's, ends it) hid the statement
    # after it, refused as "no SQL statement". The guard now skips them
    # as the PostgreSQL driver does (db_skip_filler): to '\r' or '\n',
    # block comments nesting.
    copy_data
    run sql shop.duckdb $'-- a note\rSELECT 42 AS n'
    expect_rc 0
    expect_out 'n\n42\n'
    run sql shop.duckdb $'/* a /* nested */ note */ SELECT 43 AS n'
    expect_rc 0
    expect_out 'n\n43\n'
    run sql shop.duckdb $'/* a /* nested */ note */ -- and one more\r'
    expect_rc 1
    expect_err_has "refused: no SQL statement (the text is empty or only comments)"
}

values_convert_to_askdb_types() {
    copy_data
    run sql -f json shop.duckdb "SELECT 42::TINYINT AS i, 170141183460469231731687303715884105727::HUGEINT AS big, -5::HUGEINT AS small_huge, 18446744073709551615::UBIGINT AS ubig, 12.34::DECIMAL(10,2) AS dec, 1.5::FLOAT AS f, true AS b, DATE '2024-01-02' AS d, TIMESTAMP '2024-01-02 03:04:05' AS ts, [1, 2] AS l, {'x': 1} AS s, '\\xAA'::BLOB AS bl, NULL AS n, 'Lucía' AS t"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["columns"] == ["i", "big", "small_huge", "ubig", "dec", "f", "b", "d", "ts", "l", "s", "bl", "n", "t"], j["columns"]
r = j["rows"][0]
assert r[0] == 42 and r[1] == "170141183460469231731687303715884105727" and r[2] == -5, r
assert r[3] == "18446744073709551615" and r[4] == 12.34 and r[5] == 1.5 and r[6] == 1, r
assert r[7] == "2024-01-02" and r[8] == "2024-01-02 03:04:05", r
assert r[9] == "[1, 2]" and r[10] == "{'"'"'x'"'"': 1}" and r[12] is None and r[13] == "Lucía", r
'
}

ask_names_duckdb_and_repairs_from_its_error() {
    copy_data
    local bad good
    bad=$(fence "SELECT id, first_nam FROM customers ORDER BY id LIMIT 3")
    good=$(fence "SELECT id, first_name FROM customers ORDER BY id LIMIT 3")
    start_llm "$(replies "$bad" "$good" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test -f csv shop.duckdb "First three customers?"
    expect_rc 0
    expect_out 'id,first_name\n1,Olivia\n2,Alejandro\n3,Lucía\n'
    [ "$(nreq)" = 2 ] || fail "the model got $(nreq) requests, expected 2"
    pycheck '
sysmsg = msgs(0)[0]["content"] + msgs(0)[1]["content"]
assert "DuckDB" in sysmsg, sysmsg[:400]
assert "CREATE TABLE customers" in sysmsg
last = user(1)
assert "Referenced column \"first_nam\" not found" in last, last
'
}

ask_answers_over_csv_and_parquet_in_place() {
    copy_data
    local f q
    q=$(fence "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY n DESC, status LIMIT 2")
    cp "$SHOP_DB" "$W/shop.db"
    start_llm "$(always "$q")"
    run ask --llm-url "$URL" --model test -f csv --no-question-check shop.db "Top two statuses?"
    expect_rc 0
    cp "$T/out" "$T/want"
    [ "$(wc -l <"$T/want")" = 3 ] || fail "sqlite: $(cat "$T/want")"
    for f in orders.csv orders.parquet; do
        start_llm "$(always "$q")"
        run ask --llm-url "$URL" --model test -f csv --no-question-check "$f" "Top two statuses?"
        expect_rc 0
        cmp -s "$T/out" "$T/want" || fail "$f: $(cat "$T/out") want $(cat "$T/want")"
        pycheck 'assert "CREATE TABLE orders" in msgs(0)[0]["content"] + msgs(0)[1]["content"]'
    done
}

# What stderr must say for statement $2 on file $1: refused, or an error of
# DuckDB's own that comes first (a write to a file's view fails to bind; a
# path without a reader is a table name that does not exist).
why() {
    case $1:$2 in
    orders.*:INSERT*|orders.*:UPDATE*|orders.*:DELETE*)
        echo "^askdb: (refused|Binder Error: Can only (update|delete from) base table|Catalog Error: orders is not an table)" ;;
    *:"SELECT * FROM '/etc/passwd'")
        echo "^askdb: (refused|Catalog Error: Table with name /etc/passwd does not exist)" ;;
    *:"SELECT * FROM query("*)
        echo "^askdb: (refused|Parser Error: Expected a single SELECT statement)" ;;
    *) echo "^askdb: refused" ;;
    esac
}

# DuckDB's ways out of a read-only query. Each must be refused (exit 1,
# "refused" on stderr) by sql and by ask, on the .duckdb file and on the
# CSV and Parquet views, leaving every file as it was and no new one.
refuses_duckdb_escapes_and_changes_no_file() {
    copy_data
    echo "secret" >"$W/other.csv"
    local f stmt before n
    local -a stmts=(
        "COPY orders TO '$W/out.csv'"
        "COPY (SELECT 1 AS x) TO '$W/orders.csv' (USE_TMP_FILE false)"
        "COPY (SELECT 1 AS x) TO '$W/orders.parquet' (FORMAT parquet)"
        "EXPORT DATABASE '$W/exp'"
        "ATTACH '$W/new.duckdb' AS x"
        "ATTACH '$W/orders.csv' AS x"
        "ATTACH ':memory:' AS m"
        "DETACH memory"
        "INSTALL httpfs"
        "LOAD httpfs"
        "LOAD '$W/ext.duckdb_extension'"
        "FORCE INSTALL parquet"
        "UPDATE EXTENSIONS"
        "SELECT * FROM read_text('/etc/passwd')"
        "SELECT * FROM read_csv('/etc/passwd', sep = ':')"
        "SELECT * FROM read_csv('$W/other.csv')"
        "SELECT * FROM read_blob('/etc/hostname')"
        "SELECT * FROM read_json('/etc/os-release')"
        "SELECT * FROM read_parquet('/etc/passwd')"
        "SELECT * FROM '/etc/passwd'"
        "SELECT * FROM glob('/etc/*')"
        "SELECT * FROM glob('$W/*')"
        "SELECT * FROM sniff_csv('/etc/passwd')"
        "SELECT * FROM duckdb_secrets()"
        "SET enable_external_access = true"
        "SET allowed_directories = ['/']"
        "SET threads = 1"
        "RESET memory_limit"
        "SET VARIABLE v = 1"
        "PRAGMA enable_profiling"
        "PRAGMA profiling_output = '$W/prof.txt'"
        "CALL enable_logging()"
        "CREATE TABLE t AS SELECT 1 AS x"
        "CREATE TEMP TABLE t (x INTEGER)"
        "CREATE MACRO m(x) AS x + 1"
        "CREATE VIEW v AS SELECT 1"
        "INSERT INTO orders (id) VALUES (99999)"
        "UPDATE orders SET total = 0"
        "DELETE FROM orders"
        "DROP VIEW orders"
        "ALTER TABLE orders ADD COLUMN z INTEGER"
        "CHECKPOINT"
        "VACUUM"
        "BEGIN TRANSACTION"
        "USE memory"
        "SELECT 1; DROP TABLE orders"
        "SELECT 1; COPY orders TO '$W/out2.csv'"
        "EXPLAIN ANALYZE SELECT count(*) FROM orders"
        "SELECT * FROM query('COPY orders TO ''$W/out3.csv''')"
    )
    before=$(snapshot)
    for f in shop.duckdb orders.csv orders.parquet; do
        for stmt in "${stmts[@]}"; do
            run sql "$f" "$stmt"
            [ "$RC" = 1 ] || fail "$f: sql exit $RC for: $stmt"
            grep -qE "$(why "$f" "$stmt")" "$T/err" ||
                echo "$f: $stmt -> $(head -c 160 "$T/err")" >>"$T/not_refused"
            [ ! -s "$T/out" ] || fail "$f: rows printed for: $stmt"
            [ "$(snapshot)" = "$before" ] ||
                fail "$f: files changed after: $stmt: $(diff <(echo "$before") <(snapshot) | head -4)"
        done
    done
    [ ! -s "$T/not_refused" ] || fail "not reported as refused: $(cat "$T/not_refused")"
    # As the model's reply: refused attempts (a change refused twice ends
    # the question, a read is repaired to the end), and nothing changed.
    for stmt in "COPY orders TO '$W/out.csv'" "SELECT * FROM read_text('/etc/passwd')" "ATTACH '$W/orders.csv' AS x"; do
        for f in shop.duckdb orders.csv; do
            start_llm "$(always "$(fence "$stmt")")"
            run ask --llm-url "$URL" --model test --no-question-check "$f" "Please do it"
            expect_rc 1
            case $stmt in SELECT*) n=3 ;; *) n=2 ;; esac
            [ "$(nreq)" = $n ] || fail "$f: the model got $(nreq) requests for: $stmt"
            pycheck '
import re
classes = re.findall(r"attempt \d: (\w+):", err)
assert classes == ["refused"] * int(args[0]), (classes, err[:300])
' $n
            [ "$(snapshot)" = "$before" ] || fail "$f: files changed after ask: $stmt"
        done
    done
}

# The guard's settings are the ones each handle runs with. DuckDB refuses
# temp_directory once enable_external_access is off, and the refusal was
# only a return value: a .duckdb file kept "<database>.tmp", and a sort
# larger than memory_limit made that directory beside the file and left
# gigabytes of spill files in it.
settings_are_the_guards_on_every_file() {
    copy_data
    local f
    for f in shop.duckdb orders.csv orders.parquet; do
        run sql -f csv "$f" "SELECT current_setting('temp_directory') AS tmp, current_setting('enable_external_access') AS ext, current_setting('lock_configuration') AS locked, current_setting('autoload_known_extensions') AS autoload, current_setting('autoinstall_known_extensions') AS autoinstall"
        expect_rc 0
        expect_out 'tmp,ext,locked,autoload,autoinstall\n"",0,1,0,0\n'
    done
}

# Statements that run, read only, and must leave the files as they were:
# DuckDB's checkpoint() table function is a SELECT.
harmless_selects_change_nothing() {
    copy_data
    local f before
    before=$(snapshot)
    for f in shop.duckdb orders.csv orders.parquet; do
        run sql "$f" "SELECT * FROM checkpoint()"
        [ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "exit $RC"
        run sql "$f" "SELECT * FROM force_checkpoint()"
        [ "$(snapshot)" = "$before" ] || fail "$f: files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
        run sql -f csv "$f" "SELECT count(*) AS n FROM orders"
        expect_rc 0
        expect_out 'n\n250\n'
    done
}

interrupts_a_long_query_at_the_time_limit() {
    copy_data
    local f q="SELECT count(*) FROM range(100000000000) a(x) WHERE x % 7 = 3"
    for f in shop.duckdb orders.parquet; do
        run sql --timeout 1000 "$f" "$q"
        expect_rc 1
        expect_err_has "query interrupted after the 1000 ms time limit"
        # Interrupted within twice the limit, start-up included.
        [ "$ELAPSED_MS" -lt 2000 ] || fail "$f: took $ELAPSED_MS ms for a 1000 ms limit"
    done
    start_llm "$(always "$(fence "$q")")"
    run ask --llm-url "$URL" --model test --timeout 500 -f json --no-question-check shop.duckdb "Count forever"
    expect_rc 1
    pycheck '
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["timeout"] * 3, j["attempts"]
'
}

single_calls_that_build_gigabytes_end_within_twice_the_limit() {
    # DuckDB never looks for an interrupt inside one function call: these
    # ran 4 to 20 s past a 1000 ms limit while they ran in askdb's own
    # process. In askdb-exec they are killed at the deadline (this
    # sanitizer build has no memory cap, so the kill is what stops them)
    # or fail at once for memory (the release build's cap); either way
    # within twice the limit, and nothing written.
    copy_data
    local before q
    before=$(snapshot)
    for q in "SELECT repeat('x', 2000000000)" \
             "SELECT length(repeat('x', 900000000))" \
             "SELECT sum(x) FROM (SELECT unnest(range(1000000000)) AS x)" \
             "SELECT printf('%2147483647d', 1)"; do
        run sql --timeout 1000 shop.duckdb "$q"
        expect_rc 1
        [ "$ELAPSED_MS" -lt 2500 ] || fail "$q: took $ELAPSED_MS ms for a 1000 ms limit"
        grep -qE "query interrupted after the 1000 ms time limit|Out of Memory" "$T/err" ||
            fail "$q: neither the time limit nor memory: $(head -c 300 "$T/err")"
    done
    # The check before a run (askdb ask --dry-run) folds constants in
    # DuckDB's planner: it runs in the helper too.
    start_llm "$(always "$(fence "SELECT length(repeat('x', 900000000)) AS n")")"
    run ask --llm-url "$URL" --model test --no-question-check --max-attempts 1 \
        --dry-run --timeout 1000 shop.duckdb "Long?"
    [ "$ELAPSED_MS" -lt 3000 ] || fail "the dry run took $ELAPSED_MS ms"
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
}

caps_rows_and_bytes_while_streaming() {
    copy_data
    # A result far too large to build: the cap stops it early.
    run sql -f csv --max-rows 3 --timeout 5000 shop.duckdb "SELECT x FROM range(1000000000000) t(x)"
    expect_rc 0
    expect_out 'x\n0\n1\n2\n'
    expect_err_has "truncated at the row limit (--max-rows) after 3 rows"
    [ "$ELAPSED_MS" -lt 4000 ] || fail "took $ELAPSED_MS ms: the result was not streamed"
    run sql -f json --max-bytes 2000 --timeout 5000 orders.parquet "SELECT repeat('x', 100) AS pad, id FROM orders ORDER BY id"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["truncated"] == "bytes", j["truncated"]
assert 1 <= j["row_count"] < 20, j["row_count"]
assert [r[1] for r in j["rows"]] == list(range(1, j["row_count"] + 1)), j["rows"]
'
}

explain_is_only_for_plans() {
    copy_data
    run sql shop.duckdb "EXPLAIN SELECT * FROM orders"
    expect_rc 1
    expect_err_has "refused"
    # The plan askdb asks for itself (MCP's explain_sql) is given, for a
    # database file and a CSV file alike; a write is still refused.
    local f
    for f in shop.duckdb orders.csv; do
        {
            printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
            printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
            printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"explain_sql","arguments":{"sql":"SELECT status, count(*) FROM orders GROUP BY status"}}}'
            printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"explain_sql","arguments":{"sql":"DELETE FROM orders"}}}'
        } >"$T/mcp.in"
        (cd "$W" && timeout -k 5 60 "$ASKDB" mcp "$f") <"$T/mcp.in" >"$T/out" 2>"$T/err"
        RC=$?
        expect_rc 0
        pycheck '
msgs = {m.get("id"): m for m in map(json.loads, out.splitlines())}
r = msgs[2]["result"]
assert not r.get("isError"), r
t = r["content"][0]["text"]
assert "GROUP" in t.upper() or "AGGREGATE" in t.upper(), t[:300]
r = msgs[3]["result"]
# A view cannot be written to at all: DuckDB says so before the guard.
assert r.get("isError") and ("refused" in r["content"][0]["text"] or
                             "Can only delete from base table" in r["content"][0]["text"]), r
'
    done
}

# A refusal names the kind of statement DuckDB read, not its number in
# duckdb.h, and EXPLAIN says where a plan is to be had.
refusals_name_the_statement_kind() {
    copy_data
    run sql orders.csv "EXPLAIN SELECT 1"
    expect_rc 1
    expect_err_has "refused: DuckDB reads the statement as EXPLAIN, not a query"
    expect_err_has "explain_sql"
    expect_err_lacks "type 4"
    local pair
    for pair in "SET threads=1|SET" "VACUUM|VACUUM" "PRAGMA enable_profiling|PRAGMA" \
                "BEGIN TRANSACTION|BEGIN, COMMIT or ROLLBACK" "DELETE FROM orders|DELETE" \
                "CREATE TEMP TABLE t (x INTEGER)|CREATE" "ATTACH ':memory:' AS m|ATTACH" \
                "LOAD httpfs|LOAD or INSTALL"; do
        run sql shop.duckdb "${pair%%|*}"
        expect_rc 1
        expect_err_has "refused: DuckDB reads the statement as ${pair#*|}, not a query; askdb runs only read-only SELECT statements"
        expect_err_lacks "statement type"
        expect_err_lacks "explain_sql"
    done
}

open_faults_exit_3_with_the_reason() {
    copy_data
    run schema missing.duckdb
    expect_rc 3
    expect_err_has "cannot open database 'missing.duckdb'"
    [ ! -e "$W/missing.duckdb" ] || fail "askdb created missing.duckdb"
    echo "not a database at all" >"$W/junk.duckdb"
    run schema junk.duckdb
    expect_rc 3
    expect_err_has "cannot open database 'junk.duckdb'"
    # Another engine's file under this one's ending says what to do.
    cp "$SHOP_DB" "$W/sqlite.duckdb"
    run schema sqlite.duckdb
    expect_rc 3
    expect_err_has "it is an SQLite database: askdb picks the engine by the file's ending"
    cp "$W/shop.duckdb" "$W/duck.db"
    cp "$W/orders.parquet" "$W/orders.db"
    run schema duck.db
    expect_rc 3
    expect_err_has "not an SQLite database; it is a DuckDB database: askdb picks the engine by the file's ending, so give it the ending .duckdb"
    run schema orders.db
    expect_rc 3
    expect_err_has "it is a Parquet file"
    echo "a,b" >"$W/empty.csv"
    run sql -f csv empty.csv "SELECT count(*) AS n FROM empty"
    expect_rc 0
    expect_out 'n\n0\n'
    mkdir "$W/dir.parquet"
    run schema dir.parquet
    expect_rc 3
    expect_err_has "it is a directory"
    # A ~ in quotes no shell expanded: said as such, as for SQLite.
    run schema '~/shop.duckdb'
    expect_rc 3
    expect_err_has "(askdb never creates databases); a leading ~ is expanded by the shell, never inside quotes"
    printf 'name,city\nJos\351,M\374nchen\n' >"$W/latin1.csv"
    run schema latin1.csv
    expect_rc 3
    expect_err_has "cannot read 'latin1.csv' as CSV: it is not UTF-8, which askdb reads CSV files as; convert it first"
    # A writer holds the file: DuckDB's lock refuses a second process.
    "$DPY" - "$W/shop.duckdb" "$T/held" <<'EOF' &
import duckdb, os, sys, time
c = duckdb.connect(sys.argv[1])
open(sys.argv[2], "w").close()
time.sleep(20)
EOF
    local holder=$! _
    for _ in $(seq 1 100); do [ -e "$T/held" ] && break; sleep 0.1; done
    run schema shop.duckdb
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
    expect_rc 3
    expect_err_has "another program has it open for writing"
}

sanitized_view_name_for_odd_file_names() {
    cp "$DATA/orders.csv" "$W/2024 Orders-EU.csv"
    run sql -f csv "2024 Orders-EU.csv" "SELECT count(*) AS n FROM t_2024_orders_eu"
    expect_rc 0
    expect_out 'n\n250\n'
    gzip -c "$DATA/orders.csv" >"$W/orders.csv.gz"
    run sql -f csv orders.csv.gz "SELECT count(*) AS n FROM orders"
    expect_rc 0
    expect_out 'n\n250\n'
    # Letters of other scripts are kept; symbols and invisible ones not.
    cp "$DATA/orders.csv" "$W/Données 2024.csv"
    cp "$DATA/orders.csv" "$W/日本.csv"
    cp "$DATA/orders.csv" "$W/a€b"$'\xe2\x80\x8b'"c.csv"
    run sql -f csv "Données 2024.csv" "SELECT count(*) AS n FROM \"Données_2024\""
    expect_rc 0
    expect_out 'n\n250\n'
    run schema "日本.csv"
    expect_rc 0
    expect_out_has 'CREATE TABLE "日本" ('
    run schema "a€b"$'\xe2\x80\x8b'"c.csv"
    expect_rc 0
    expect_out_has 'CREATE TABLE a___b___c ('
}

# Names that are reserved words of DuckDB but not of SQLite (show, at,
# qualify: duckdb_keywords() reserved and type_function; a file semi.csv,
# whose view is semi) are shown quoted, as a query must write them, and a
# query that writes them so runs.
reserved_words_are_quoted_in_the_schema() {
    printf 'id,show,at,qualify\n1,10,x,true\n2,20,y,false\n' >"$W/cols.csv"
    cp "$W/cols.csv" "$W/semi.csv"
    run schema cols.csv
    expect_rc 0
    pycheck '
assert "CREATE TABLE cols (\n  id BIGINT,\n  \"show\" BIGINT,\n  \"at\" VARCHAR, -- e.g. \x27x\x27, \x27y\x27\n  \"qualify\" BOOLEAN\n);" in out, out
'
    run sql -f csv cols.csv 'SELECT id, "show", "at", "qualify" FROM cols ORDER BY id'
    expect_rc 0
    expect_out 'id,show,at,qualify\n1,10,x,1\n2,20,y,0\n'
    run schema semi.csv
    expect_rc 0
    expect_out_has 'CREATE TABLE "semi" ('
    run sql -f csv semi.csv 'SELECT sum("show") AS n FROM "semi"'
    expect_rc 0
    expect_out 'n\n30\n'
}

# A reserved word written bare as a name is a syntax error; the repair
# hint says to quote it, and the table's name too, and the quoted query
# answers.
ask_repairs_a_reserved_word_written_bare() {
    printf 'id,show\n1,10\n2,20\n' >"$W/semi.csv"
    start_llm "$(replies "$(fence 'SELECT sum(show) AS n FROM semi')" "$(fence 'SELECT sum("show") AS n FROM "semi"')" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv semi.csv "How many shows in all?"
    expect_rc 0
    expect_out 'n\n30\n'
    [ "$(nreq)" = 2 ] || fail "the model got $(nreq) requests, expected 2"
    pycheck '
first = msgs(0)[0]["content"] + msgs(0)[1]["content"]
assert "CREATE TABLE \"semi\" (\n  id BIGINT,\n  \"show\" BIGINT\n" in first, first
last = user(1)
assert "syntax error at or near \"show\"" in last, last
assert "Hint: show is a reserved word in DuckDB; write the name quoted: \"show\".\n" in last, last
assert "Hint: semi is a reserved word in DuckDB; write the name quoted: \"semi\".\n" in last, last
'
}

glob_characters_in_a_file_name_name_that_file_only() {
    # DuckDB's readers take a path as a glob pattern: "[s]ecret.csv" would
    # read secret.csv, "a*b.csv" any a...b.csv. The file asked is the one
    # read, and the others stay out of reach.
    printf 'mine\n1\n' >"$W/[s]ecret.csv"
    printf 'password\nhunter2\n' >"$W/secret.csv"
    printf 'star\n7\n' >"$W/a*b.csv"
    printf 'other\n8\n' >"$W/aXb.csv"
    run schema "[s]ecret.csv"
    expect_rc 0
    expect_out_has "mine BIGINT"
    grep -q password "$T/out" && fail "another file's header: $(cat "$T/out")"
    run sql -f csv "[s]ecret.csv" "SELECT * FROM _s_ecret"
    expect_rc 0
    expect_out 'mine\n1\n'
    run sql -f csv "[s]ecret.csv" "SELECT * FROM read_csv('$W/secret.csv')"
    expect_rc 1
    expect_err_has "refused: the statement calls read_csv(), which reads files by their path"
    run sql -f csv "[s]ecret.csv" "SELECT * FROM '$W/secret.csv'"
    expect_rc 1
    expect_err_has "Permission Error"
    run sql -f csv "$W/a*b.csv" "SELECT * FROM a_b"
    expect_rc 0
    expect_out 'star\n7\n'
    # A backslash beside a glob character: no pattern names the file
    # alone, so it is refused with what to do.
    printf 'x\n1\n' >"$W/a\\b[1].csv"
    run schema 'a\b[1].csv'
    expect_rc 3
    expect_err_has "has a backslash and a glob character"
}

# A path with glob characters is a pattern to DuckDB wherever it stands,
# and its guard (allowed_paths) checks the pattern, not the files it
# matches: with "[s]ecret.csv" allowed, glob('.../[s]ecret.csv') listed
# secret.csv, read_text() and read_csv() named it in their Permission
# Error, and ".../*/../[s]ecret.csv" listed the folder's subfolders. Such
# a file is read whole at open and then nothing outside is reachable: no
# statement, the model's or the user's, names or reads a file beside it,
# and questions are answered from it.
a_glob_named_file_shows_nothing_beside_it() {
    local f stmt qa
    printf 'mine\n1\n' >"$W/[s]ecret.csv"
    printf 'sibling_pw\nhunter2\n' >"$W/secret.csv"
    printf 'star\n7\n' >"$W/a*b.csv"
    printf 'other_pw\nswordfish\n' >"$W/aXb.csv"
    mkdir "$W/private_folder"
    printf 'deep_pw\nopensesame\n' >"$W/private_folder/deep.csv"
    "$DPY" -c 'import duckdb, sys; duckdb.sql("COPY (SELECT 1 AS mine) TO '"'"'%s'"'"' (FORMAT parquet)" % sys.argv[1])' "$W/[s]ecret.parquet" ||
        fail "cannot write the Parquet file"
    local -a stmts=(
        "SELECT * FROM glob('*')"
        "SELECT * FROM glob('$W/*')"
        "SELECT * FROM glob('$W/[s]ecret.csv')"
        "SELECT * FROM glob('$W/a*b.csv')"
        "SELECT * FROM glob('$W/*/../[s]ecret.csv')"
        "SELECT * FROM glob('$W/*/../a*b.csv')"
        "SELECT * FROM read_text('$W/[s]ecret.csv')"
        "SELECT * FROM read_text('$W/secret.csv')"
        "SELECT * FROM read_text('$W/a*b.csv')"
        "SELECT * FROM read_csv('$W/[s]ecret.csv')"
        "SELECT * FROM read_csv('$W/secret.csv')"
        "SELECT * FROM read_csv('$W/a*b.csv')"
        "SELECT * FROM read_blob('$W/[s]ecret.parquet')"
        "SELECT * FROM '$W/[s]ecret.csv'"
        "SELECT * FROM '[s]ecret.csv'"
    )
    for f in "[s]ecret.csv" "$W/a*b.csv" "[s]ecret.parquet"; do
        for stmt in "${stmts[@]}"; do
            run sql -f csv "$f" "$stmt"
            for leak in secret.csv aXb.csv private_folder sibling_pw hunter2 other_pw swordfish deep_pw; do
                # a name the statement says itself is no leak
                case $stmt in *"$leak"*) continue ;; esac
                ! grep -qF "$leak" "$T/out" "$T/err" ||
                    fail "$f: $stmt showed $leak: $(head -c 300 "$T/out") $(head -c 300 "$T/err")"
            done
        done
    done
    # The model tries them, each error going back to it, and then asks
    # the file itself.
    qa=$(fence "SELECT mine FROM _s_ecret")
    start_llm "$(replies "$(fence "SELECT * FROM glob('*')")" \
        "$(fence "SELECT * FROM glob('$W/[s]ecret.csv')")" \
        "$(fence "SELECT content FROM read_text('$W/[s]ecret.csv')")" \
        "$(fence "SELECT * FROM read_csv('$W/[s]ecret.csv')")" \
        "$(fence "SELECT * FROM glob('$W/*/../[s]ecret.csv')")" \
        "$(fence "SELECT content FROM read_text('$W/secret.csv')")" \
        "$(fence "SELECT * FROM read_csv('$W/secret.csv')")" "$qa" "$qa")"
    run ask --llm-url "$URL" --model test --no-question-check --max-attempts 8 -f csv "[s]ecret.csv" "What is mine?"
    expect_rc 0
    expect_out 'mine\n1\n'
    [ "$(nreq)" = 8 ] || fail "the model got $(nreq) requests, expected 8"
    for leak in aXb.csv private_folder sibling_pw hunter2 other_pw swordfish deep_pw; do
        ! grep -qF "$leak" "$T/out" "$T/err" "$LLMLOG" || fail "ask showed $leak: $(grep -F "$leak" "$T/err" "$LLMLOG" | head -c 400)"
    done
    # secret.csv only after the model wrote it itself (the 6th statement)
    pycheck '
for i in range(6):
    m = json.dumps(msgs(i))
    assert "secret.csv" not in m, (i, m[-600:])
assert "secret.csv" not in out, out
' 
    # Each such file still answers from itself, the schema too.
    run schema "[s]ecret.csv"
    expect_rc 0
    expect_out_has "mine BIGINT"
    run sql -f csv "$W/a*b.csv" "SELECT * FROM a_b"
    expect_rc 0
    expect_out 'star\n7\n'
    run sql -f csv "[s]ecret.parquet" "SELECT * FROM _s_ecret"
    expect_rc 0
    expect_out 'mine\n1\n'
    # A database is not copied: DuckDB allows its path whatever askdb
    # sets, so such a path is refused, with what to do.
    cp "$DATA/shop.duckdb" "$W/shop.duckdb"
    cp "$DATA/shop.duckdb" "$W/[s]hop.duckdb"
    run sql -f csv "[s]hop.duckdb" "SELECT * FROM glob('$W/[s]hop.duckdb')"
    expect_rc 3
    expect_err_has "cannot open database '[s]hop.duckdb': its path has a glob character (*, ? or [)"
    expect_err_has "rename it, or copy it to a path without *, ? and ["
    ! grep -q "/shop.duckdb" "$T/out" "$T/err" || fail "showed shop.duckdb: $(cat "$T/out" "$T/err")"
}

trace_never_writes_a_file_asked_or_read() {
    # --trace naming the CSV or Parquet file being asked (under any name),
    # or a Parquet or DuckDB file, is refused before anything is written.
    copy_data
    ln -s orders.csv link.csv
    ln orders.csv hard.csv
    local before t
    before=$(snapshot)
    start_llm "$(always "$(fence "SELECT count(*) AS n FROM orders")")"
    for t in orders.csv ./orders.csv link.csv hard.csv "$W/orders.csv"; do
        run ask --llm-url "$URL" --model test --trace "$t" orders.csv "How many orders?"
        expect_rc 2
        expect_err_has "cannot open trace file '$t': it is the database being asked (askdb never writes to databases; choose another file)"
    done
    run ask --llm-url "$URL" --model test --trace orders.parquet orders.csv "How many orders?"
    expect_rc 2
    expect_err_has "it is a Parquet file, which askdb reads as a database"
    run ask --llm-url "$URL" --model test --trace shop.duckdb orders.csv "How many orders?"
    expect_rc 2
    expect_err_has "it is a DuckDB database"
    # The server's access log, against every database it serves.
    run serve --llm-url "$URL" --model test --listen 127.0.0.1:0 --db s=shop.duckdb --db o=orders.csv --access-log link.csv
    expect_rc 2
    expect_err_has "--access-log 'link.csv': it is the database being asked"
    # A trace naming another database served (each agent knows only its
    # own): serve and mcp refuse it at the start.
    run serve --llm-url "$URL" --model test --listen 127.0.0.1:0 --db s=shop.duckdb --db o=orders.csv --trace link.csv
    expect_rc 2
    expect_err_has "cannot open trace file 'link.csv': it is the database being asked"
    run mcp --llm-url "$URL" --model test --trace hard.csv shop.duckdb orders.csv
    expect_rc 2
    expect_err_has "cannot open trace file 'hard.csv': it is the database being asked"
    [ "$(nreq)" = 0 ] || fail "the model was asked $(nreq) times"
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
    # A trace beside it is written, and the answer is the file's.
    run ask --llm-url "$URL" --model test -f csv --no-question-check --trace t.jsonl orders.csv "How many orders?"
    expect_rc 0
    expect_out 'n\n250\n'
    [ -s t.jsonl ] || fail "no trace written"
}

ctrl_c_stops_a_running_query() {
    # Ctrl-C while DuckDB runs the statement: the watchdog sees the
    # cancel flag and interrupts it; askdb exits 130 at once.
    copy_data
    local pid t0 _
    start_llm "$(always "$(fence "SELECT count(*) FROM range(100000000000) a(x) WHERE x % 7 = 3")")"
    (cd "$W" && exec env --default-signal=INT "$ASKDB" ask --llm-url "$URL" \
        --model test --no-question-check --timeout 30000 shop.duckdb "Count forever") \
        >"$T/out" 2>"$T/err" &
    pid=$!
    for _ in $(seq 1 200); do
        [ -s "$LLMLOG" ] && break
        sleep 0.05
    done
    [ -s "$LLMLOG" ] || fail "the model got no request"
    sleep 1
    t0=$(now_ms)
    kill -INT "$pid"
    wait "$pid"
    RC=$?
    ELAPSED_MS=$(( $(now_ms) - t0 ))
    expect_rc 130
    [ "$ELAPSED_MS" -lt 1000 ] || fail "ended $ELAPSED_MS ms after Ctrl-C"
    expect_err_has "cancelled"
}

csv_values_past_the_guessed_rows_are_read() {
    # DuckDB guesses a CSV's column types from its first 20,480 rows: a
    # later "abc" in a column of numbers failed every statement that read
    # it, advising read_csv() options no askdb user can pass. The schema
    # read checks the first 100,001 rows and the types come from the
    # whole file then; a value further on makes the first statement that
    # meets it take them and run again.
    "$PY" - "$W" <<'PYEOF'
import sys
w = sys.argv[1]
with open(w + "/late.csv", "w") as f:
    f.write("id,v,d\n")
    f.writelines("%d,%d,2024-01-%02d\n" % (i, i, i % 28 + 1) for i in range(30000))
    f.write("30000,abc,n/a\n")
with open(w + "/later.csv", "w") as f:
    f.write("id,v\n")
    f.writelines("%d,%d\n" % (i, i) for i in range(150000))
    f.write("150000,abc\n")
PYEOF
    run schema late.csv
    expect_rc 0
    expect_out_has "v VARCHAR"
    expect_out_has "d VARCHAR"
    expect_out_has "30001 rows"
    run sql -f csv late.csv "SELECT count(*) AS n, max(v) AS v, max(d) AS d FROM late"
    expect_rc 0
    expect_out 'n,v,d\n30001,abc,n/a\n'
    run sql -f csv later.csv "SELECT count(*) AS n, max(v) AS v FROM later"
    expect_rc 0
    expect_out 'n,v\n150001,abc\n'
    # The statements run in askdb-exec, whose view is another: it takes
    # the whole file's types too, so a comparison with the text the schema
    # shows is not a conversion error there.
    run sql -f csv late.csv "SELECT count(*) AS n FROM late WHERE v = 'abc'"
    expect_rc 0
    expect_out 'n\n1\n'
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM late WHERE v = 'abc'")")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv late.csv "How many abc?"
    expect_rc 0
    expect_out 'n\n1\n'
    [ "$(nreq)" = 1 ] || fail "$(nreq) model requests, expected 1"
    stop_llm
    # The model's statement too, in ask: one model call, no repair.
    start_llm "$(replies "$(fence 'SELECT max(v) AS v FROM later')")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv later.csv "Largest v?"
    expect_rc 0
    expect_out 'v\nabc\n'
    [ "$(nreq)" = 1 ] || fail "$(nreq) model requests, expected 1"
    stop_llm
}

a_file_gone_since_it_was_opened_is_said() {
    # A CSV deleted while a shell has it open read as a directory DuckDB
    # may not glob: "refused: Permission Error: Cannot access file
    # .../t.csv/**/*.csv ... askdb reads only the database it was given",
    # and the agent asked the model to repair. Now the file is named as
    # gone, class database, with no repair.
    cp "$DATA/orders.csv" "$W/gone.csv"
    start_llm "$(always "$(fence 'SELECT count(*) AS n FROM gone')")"
    # The file goes once the first answer is out (the shell flushes each):
    # a fixed 3 s was too short under load, and the first question failed.
    (printf 'How many orders?\n'
     for _ in $(seq 300); do grep -q 250 "$T/out" 2>/dev/null && break; sleep 0.1; done
     rm -f "$W/gone.csv"
     printf 'How many orders now?\n'; sleep 2) |
        (cd "$W" && timeout 30 "$ASKDB" shell --llm-url "$URL" --model test \
            --no-question-check -f csv gone.csv) >"$T/out" 2>"$T/err"
    expect_out_has '250'
    expect_err_has "cannot read 'gone.csv': No such file or directory (the file was moved or deleted since askdb opened it)"
    [ "$(nreq)" = 2 ] || fail "$(nreq) model requests, expected 2 (no repair)"
    stop_llm
}

# DuckDB invalidates its database on an INTERNAL error, and then fails
# every later statement ("database has been invalidated ... must be
# restarted"): count(name) over a CSV file with a byte that is no UTF-8
# past the rows DuckDB samples is such an error (DuckDB 1.5.6). The shell,
# askdb-exec and askdb serve keep their handle, so every later question
# on the file failed until askdb was started again. The database is
# opened again after such an error: the next statement answers, in
# askdb-exec and in askdb's own process, and the model's repair too.
an_internal_error_of_duckdb_leaves_the_file_answering() {
    "$PY" - "$W/late.csv" <<'PYEOF'
import sys
with open(sys.argv[1], "wb") as f:
    f.write(b"id,name\n")
    f.writelines(b"%d,n%d\n" % (i, i) for i in range(25000))
    f.write(b"25000,Jos\xe9\n")
PYEOF
    local ip
    for ip in --no-in-process --in-process; do
        [ "$ip" = --no-in-process ] && ip=
        printf '.sql SELECT count(name) AS n FROM late\n.sql SELECT count(*) AS n FROM late\n' |
            (cd "$W" && timeout 60 "$ASKDB" shell $ip --llm-url http://127.0.0.1:1/v1 \
                --model test -f csv late.csv) >"$T/out" 2>"$T/err"
        expect_err_has "INTERNAL Error: Attempted to access index 1 within vector of size 1"
        expect_err_lacks "invalidated"
        # DuckDB's stack trace is no message for the user or the model
        expect_err_lacks "Stack Trace"
        expect_out 'n\n25001\n'
    done
    start_llm "$(replies "$(fence 'SELECT count(name) AS n FROM late')" \
        "$(fence 'SELECT count(*) AS n FROM late')" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv late.csv "How many rows?"
    expect_rc 0
    expect_out 'n\n25001\n'
    [ "$(nreq)" = 2 ] || fail "the model got $(nreq) requests, expected 2"
}

# A CSV file whose bytes stop being UTF-8 past the rows DuckDB looks at
# when it opens the file: the statement that reads them was given
# DuckDB's advice (encoding = ..., ignore_errors = true: read_csv()
# options no askdb user can pass), as a runtime error the model was asked
# to repair, which no statement can. It is said as for a file that is no
# UTF-8 from its start, with the line, class database: no repair.
csv_bytes_not_utf8_past_the_start_are_said() {
    "$PY" - "$W/late.csv" <<'PYEOF'
import sys
with open(sys.argv[1], "wb") as f:
    f.write(b"id,name\n")
    f.writelines(b"%d,n%d\n" % (i, i) for i in range(25000))
    f.write(b"25000,Jos\xe9\n")
PYEOF
    local said="cannot read 'late.csv' as CSV: its line 25002 is not UTF-8, which askdb reads CSV files as; convert it first, e.g. iconv -f latin1 -t utf-8 (or the file's encoding)"
    run sql late.csv "SELECT name FROM late WHERE id = 25000"
    expect_rc 1
    expect_err_has "$said"
    expect_err_lacks "ignore_errors"
    start_llm "$(replies "$(fence 'SELECT name FROM late WHERE id = 25000')" \
        "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv late.csv "Name of 25000?"
    expect_rc 1
    expect_err_has "$said"
    [ "$(nreq)" = 1 ] || fail "the model got $(nreq) requests, expected 1 (no repair)"
}

# A .duckdb file's views over files (a folder of Parquet files, as DuckDB
# users keep one) read paths the guard does not allow: every query of
# one is refused. The schema showed them as any other view, and the
# model chose them; each says so in its comment now, in askdb schema
# and in the prompt, and a view over the file's own tables does not.
views_over_files_say_they_are_refused() {
    mkdir -p "$W/data"
    "$DPY" - "$W" <<'PYEOF' || fail "cannot make views.duckdb"
import duckdb, sys
w = sys.argv[1]
c = duckdb.connect()
c.execute("COPY (SELECT 1 AS id, 'x' AS s) TO '%s/data/a.parquet' (FORMAT parquet)" % w)
c.close()
c = duckdb.connect(w + "/views.duckdb")
c.execute("CREATE VIEW over_files AS SELECT * FROM read_parquet('%s/data/*.parquet')" % w)
c.execute("CREATE TABLE t AS SELECT * FROM read_parquet('%s/data/*.parquet')" % w)
c.execute("CREATE VIEW over_t AS SELECT * FROM t")
c.execute("COMMENT ON VIEW over_files IS 'Everything in data/'")
c.close()
PYEOF
    local note="reads files outside this database, which askdb does not read: every query of it is refused"
    run schema views.duckdb
    expect_rc 0
    pycheck '
assert "-- Everything in data/; '"$note"'\nCREATE VIEW over_files (" in out, out
assert out.count("askdb does not read") == 1, out
'
    run sql views.duckdb "SELECT * FROM over_files"
    expect_rc 1
    expect_err_has "refused: Permission Error"
    start_llm "$(replies "$(fence 'SELECT count(*) AS n FROM over_t')")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv views.duckdb "How many rows?"
    expect_rc 0
    expect_out 'n\n1\n'
    pycheck '
p = msgs(0)[0]["content"] + msgs(0)[1]["content"]
assert "'"$note"'\nCREATE VIEW over_files (" in p, p[:800]
'
}

# A pattern as the argument, as DuckDB's users name a folder of files:
# it said only "No such file or directory (askdb never creates
# databases)". It says askdb reads one file, and how to ask several;
# nothing is created.
a_pattern_as_the_argument_says_how_to_ask_several_files() {
    copy_data
    mkdir "$W/data"
    cp "$DATA/orders.parquet" "$W/data/a.parquet"
    cp "$DATA/orders.parquet" "$W/data/b.parquet"
    local before
    before=$(snapshot)
    run schema 'data/*.parquet'
    expect_rc 3
    expect_err_has "cannot open database 'data/*.parquet': no such file; askdb reads one file, not a pattern of several (make them one .duckdb file once, CREATE TABLE t AS SELECT * FROM read_parquet('data/*.parquet'), and ask that)"
    run sql -f csv 'data/*.csv' "SELECT 1"
    expect_rc 3
    expect_err_has "FROM read_csv('data/*.csv')"
    [ "$(snapshot)" = "$before" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
}

# A PIVOT whose ON column has no IN list is two statements to DuckDB (a
# type of the column's values is created first): one statement as
# written, it was refused as "more than one statement", which the model
# cannot act on. The refusal names what to write, and the repair with
# the values answers; a text with two statements, and COPY FROM DATABASE
# (several to DuckDB too), are still "more than one statement".
pivot_without_values_says_to_name_them() {
    copy_data
    local said="refused: DuckDB runs a PIVOT whose ON column has no IN list as two statements (it creates a type of the column's values first), and askdb runs one; name the values: PIVOT t ON col IN ('a', 'b') USING sum(x)"
    run sql orders.csv "PIVOT orders ON status USING count(*)"
    expect_rc 1
    expect_err_has "$said"
    run sql orders.csv "SELECT 1 AS x; SELECT 2 AS y"
    expect_rc 1
    expect_err_has "refused: more than one statement"
    run sql orders.csv "COPY FROM DATABASE memory TO memory"
    expect_rc 1
    expect_err_has "refused: more than one statement"
    start_llm "$(replies "$(fence 'SELECT * FROM (PIVOT orders ON status USING count(*)) AS p')" \
        "$(fence "SELECT * FROM (PIVOT (SELECT status FROM orders) ON status IN ('delivered', 'refunded') USING count(*)) AS p")" \
        "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check -f json orders.csv "Delivered against refunded?"
    expect_rc 0
    [ "$(nreq)" = 2 ] || fail "the model got $(nreq) requests, expected 2"
    pycheck '
j = json.loads(out)
assert j["columns"] == ["delivered", "refunded"] and j["row_count"] == 1, j
assert [a["error"] for a in j["attempts"]] == ["refused", "none"], j["attempts"]
assert "name the values: PIVOT t ON col IN" in user(1), user(1)
'
}

# Table functions a SELECT may call that change the connection for the
# statements after it, past lock_configuration: enable_profiling() made
# DuckDB print every later statement's profile, its text as written, raw
# to stderr (an escape sequence in a string reached the terminal), and
# with a save_location every later statement failed with an INTERNAL
# Error; query() ran such a call built from strings. Each is refused, as
# the shell's statement and as the model's reply, and the statements
# after it run as before.
session_changing_functions_are_refused() {
    copy_data
    local f stmt before esc=$'\033'
    local -a stmts=(
        "SELECT * FROM enable_profiling()"
        "SELECT * FROM \"ENABLE_PROFILING\" /* x */ ()"
        "SELECT * FROM system.main.enable_profiling(save_location = '$W/p.txt')"
        "SELECT * FROM enable_logging(storage = 'file', storage_path = '$W/logs')"
        "SELECT * FROM truncate_duckdb_logs()"
        "SELECT * FROM enable_peg_parser()"
        "SELECT * FROM query('SELECT * FROM enable_' || 'profiling()')"
        "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT * FROM enable_profiling()'))"
    )
    before=$(snapshot)
    for f in shop.duckdb orders.csv; do
        for stmt in "${stmts[@]}"; do
            printf '.sql %s\n.sql SELECT count(*) AS n FROM orders WHERE status <> '"'"'%s]0;owned\a'"'"'\n' \
                "$stmt" "$esc" |
                (cd "$W" && timeout 30 "$ASKDB" shell --llm-url "http://127.0.0.1:1/v1" \
                    --model test -f csv "$f") >"$T/out" 2>"$T/err"
            grep -q "^askdb: refused: the statement calls [a-z_]*()" "$T/err" ||
                fail "$f: not refused: $stmt: $(head -c 300 "$T/err")"
            ! grep -q "$esc" "$T/err" || fail "$f: an escape sequence reached stderr after: $stmt"
            ! grep -qE "Query Profiling|INTERNAL" "$T/err" || fail "$f: after $stmt: $(head -c 300 "$T/err")"
            expect_out 'n\n250\n'
            [ "$(snapshot)" = "$before" ] || fail "$f: files changed after: $stmt"
        done
        start_llm "$(always "$(fence "SELECT * FROM enable_profiling()")")"
        run ask --llm-url "$URL" --model test --no-question-check "$f" "Profile it"
        expect_rc 1
        [ "$(nreq)" = 3 ] || fail "$f: the model got $(nreq) requests"
        expect_err_has "refused: the statement calls enable_profiling()"
        stop_llm
    done
    # A column named query, or like a denied prefix, is read as any other.
    run sql -f csv orders.csv "SELECT count(*) AS query, 1 AS enable_x FROM orders"
    expect_rc 0
    expect_out 'query,enable_x\n250,1\n'
}

# read_csv()'s store_rejects options make a SELECT create tables in the
# session: rejects_table = 'orders' made a temp table that hid the view,
# and the shell's next question counted 0 orders instead of 250. Each is
# refused (read_csv() is, as every reader of files by a path), and the
# view keeps its rows.
rejects_tables_never_hide_the_view() {
    copy_data
    local f stmt before
    local -a stmts=(
        "SELECT count(*) AS n FROM read_csv('%s', store_rejects = true, rejects_table = 'orders')"
        "SELECT count(*) AS n FROM read_csv('%s', \"REJECTS_TABLE\" = 'orders')"
        "SELECT count(*) AS n FROM read_csv('%s', rejects_table = 'x', rejects_scan = 'orders')"
    )
    before=$(snapshot)
    for f in orders.csv orders.parquet; do
        for stmt in "${stmts[@]}"; do
            # shellcheck disable=SC2059
            printf ".sql $stmt\n.sql SELECT count(*) AS n FROM orders\n" "$W/$f" |
                (cd "$W" && timeout 30 "$ASKDB" shell --llm-url "http://127.0.0.1:1/v1" \
                    --model test -f csv "$f") >"$T/out" 2>"$T/err"
            grep -q "^askdb: refused: the statement calls read_csv(), which reads files by their path" "$T/err" ||
                fail "$f: not refused: $stmt: $(head -c 300 "$T/err")"
            expect_out 'n\n250\n'
            [ "$(snapshot)" = "$before" ] || fail "$f: files changed after: $stmt"
        done
    done
}

# DuckDB checks the path a statement names against allowed_paths with its
# ".." folded, not the files a pattern matches: glob('DIR/*/../orders.csv')
# passed as the asked file and listed every folder of DIR, and so did the
# same path as a table name, quoted any way, and the file readers given
# it. The readers of files by a path are refused by name, and a text with
# a wildcard and "/.." is refused whole; the file's own table answers, and
# no folder name reaches the output, the errors or the model.
folder_names_beside_the_file_stay_hidden() {
    copy_data
    mkdir -p "$W/d/hidden_alpha" "$W/d/hidden_beta/inner_gamma"
    cp "$DATA/orders.csv" "$DATA/orders.parquet" "$DATA/shop.duckdb" "$W/d/"
    local f stmt pat
    local -a stmts
    for f in orders.csv orders.parquet shop.duckdb; do
        pat="$W/d/*/../$f"
        stmts=(
            "SELECT * FROM glob('$pat')"
            "SELECT * FROM glob('$W/d/' || chr(42) || '/*/../../$f')"
            "SELECT * FROM '$pat'"
            "SELECT * FROM \"$pat\""
            "SELECT * FROM \$\$$pat\$\$"
            "SELECT filename FROM read_text('$pat')"
            "SELECT * FROM read_blob('$W/d/*/*/../../$f')"
            "SELECT * FROM parquet_metadata('$pat')"
            "SELECT * FROM sniff_csv('$pat')"
        )
        for stmt in "${stmts[@]}"; do
            run sql -f csv "d/$f" "$stmt"
            expect_rc 1
            grep -q "^askdb: refused: the statement" "$T/err" || fail "$f: not refused: $stmt: $(head -c 300 "$T/err")"
            ! grep -q "hidden_\|inner_" "$T/out" "$T/err" || fail "$f: a folder's name after: $stmt: $(head -c 300 "$T/out" "$T/err")"
        done
    done
    run sql -f csv d/orders.csv "SELECT count(*) AS n FROM orders"
    expect_rc 0
    expect_out 'n\n250\n'
    # The model's glob is refused and repaired; it never sees a folder.
    start_llm "$(replies "$(fence "SELECT * FROM glob('$W/d/*/../orders.csv')")" \
        "$(fence "SELECT * FROM '$W/d/*/../orders.csv'")" "$(fence "SELECT count(*) AS n FROM orders")")"
    run ask --llm-url "$URL" --model test --no-question-check d/orders.csv "How many orders?"
    expect_rc 0
    expect_out_has '250'
    [ "$(nreq)" = 3 ] || fail "the model got $(nreq) requests, expected 3"
    ! grep -q "hidden_\|inner_" "$LLMLOG" || fail "a folder's name reached the model"
    stop_llm
}

TESTS=(schema_shows_keys_comments_samples_and_estimates other_schemas_show_qualified
       shell_sql_reads_escape_strings shell_sql_reads_dollar_quoted_strings
       shell_sql_keyword_as_a_name_ends_the_line
       ask_answers_from_another_schema ask_says_where_a_missing_value_is
       samples_read_later_are_shown_where_their_tables_are
       sql_reads_the_same_rows_from_every_form parameters_are_a_syntax_error_to_repair
       comments_end_where_duckdb_ends_them
       values_convert_to_askdb_types ask_names_duckdb_and_repairs_from_its_error
       ask_answers_over_csv_and_parquet_in_place refuses_duckdb_escapes_and_changes_no_file
       harmless_selects_change_nothing settings_are_the_guards_on_every_file
       session_changing_functions_are_refused
       rejects_tables_never_hide_the_view folder_names_beside_the_file_stay_hidden
       interrupts_a_long_query_at_the_time_limit
       single_calls_that_build_gigabytes_end_within_twice_the_limit
       caps_rows_and_bytes_while_streaming explain_is_only_for_plans
       refusals_name_the_statement_kind
       open_faults_exit_3_with_the_reason sanitized_view_name_for_odd_file_names
       glob_characters_in_a_file_name_name_that_file_only
       a_glob_named_file_shows_nothing_beside_it
       reserved_words_are_quoted_in_the_schema ask_repairs_a_reserved_word_written_bare
       trace_never_writes_a_file_asked_or_read ctrl_c_stops_a_running_query
       csv_values_past_the_guessed_rows_are_read a_file_gone_since_it_was_opened_is_said
       an_internal_error_of_duckdb_leaves_the_file_answering
       csv_bytes_not_utf8_past_the_start_are_said views_over_files_say_they_are_refused
       a_pattern_as_the_argument_says_how_to_ask_several_files pivot_without_values_says_to_name_them)

PASSED=0
FAILED=0
for name in "${TESTS[@]}"; do
    if [ -n "$FILTER" ] && ! printf '%s\n' "$name" | grep -qE -- "$FILTER"; then
        continue
    fi
    T=$TMP/t/$name
    W=$T/w
    mkdir -p "$W"
    ( trap stop_llm EXIT; cd "$W" && "$name" ) >>"$T/.trace" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && [ ! -s "$T/.fail" ]; then
        PASSED=$((PASSED + 1)); echo "ok $name"
    else
        FAILED=$((FAILED + 1))
        echo "FAIL $name: $(head -n1 "$T/.fail" 2>/dev/null || echo "exit $rc")"
        [ -n "${E2E_VERBOSE:-}" ] && tail -n 12 "$T/.trace" | sed 's/^/    /'
    fi
done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
