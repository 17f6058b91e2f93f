#!/usr/bin/env bash
# tests/e2e/postgres.sh - askdb against a real PostgreSQL server.
#
#   ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm bash tests/e2e/postgres.sh
#   bash tests/e2e/postgres.sh --filter 'refuse|lock'   (ERE on test names)
#   E2E_VERBOSE=1  show the last commands and stderr of a failed test
#   E2E_KEEP=1     keep the temp dir (the server's log is in it)
#
# A private cluster in a temporary directory: initdb, a free loopback port,
# the unix socket in the directory too; as the `postgres` OS user when run
# as root (the server refuses root), else as the user running the test. It
# is stopped and removed at the end. examples/shop.db is loaded with
# scripts/load_postgres.py, then roles are made: reader (SELECT only),
# writer (may write), bob and dora (SELECT, a password, scram over TCP;
# trusted on the unix socket, as everyone), filer (pg_read_server_files),
# boss (a member of a superuser role).
# Output: "ok NAME" or "FAIL NAME: reason" per test, then "N passed, M
# failed"; exit 0 only when M is 0.
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
    --filter) FILTER=$2; shift 2 ;;
    --filter=*) FILTER=${1#--filter=}; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "postgres.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

# A clean environment: neither askdb's nor libpq's settings of the
# developer may leak in (~/.pgpass neither: HOME is the test's).
for _v in $(compgen -e); do
    case $_v in ASKDB_*|PG*) unset "$_v" ;; esac
done
unset OPENAI_API_KEY ANTHROPIC_API_KEY
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy='127.0.0.1,localhost' NO_PROXY='127.0.0.1,localhost'
export ASKDB_RETRY_BASE_MS=1 LC_ALL=C
RUN_LIMIT_S=${E2E_RUN_LIMIT_S:-30}
PY=$(python3 -c 'import sys; print(sys.executable)')

for _f in "$ASKDB" "$FAKE_LLM"; do
    [ -x "$_f" ] || { echo "postgres.sh: $_f is not built" >&2; exit 2; }
done
[ -f "$SHOP_DB" ] || { echo "postgres.sh: $SHOP_DB is missing (make examples/shop.db)" >&2; exit 2; }

# The server's programs: Debian keeps them out of PATH.
PGBIN=
for _d in "$(pg_config --bindir 2>/dev/null)" $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
    if [ -n "$_d" ] && [ -x "$_d/initdb" ] && [ -x "$_d/pg_ctl" ]; then
        PGBIN=$_d
        break
    fi
done
[ -n "$PGBIN" ] || { echo "postgres.sh: initdb not found (apt-get install postgresql; scripts/deps.sh does)" >&2; exit 2; }
command -v psql >/dev/null || { echo "postgres.sh: psql not found (postgresql-client)" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/askdb-pg.XXXXXX") || exit 2
chmod 755 "$TMP" # the server's user must reach its directory inside
export ASKDB_CACHE_DIR=$TMP/cache XDG_STATE_HOME=$TMP/state HOME=$TMP/home
mkdir -p "$HOME"
: >"$TMP/llm.pids"

# The server runs as postgres when we are root, else as ourselves.
if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "postgres.sh: running as root needs the 'postgres' OS user" >&2; exit 2; }
    as_srv() { runuser -u postgres -- "$@"; }
else
    as_srv() { "$@"; }
fi
PGDATA=$TMP/pg/data
SOCK=$TMP/pg/sock
PORT=

pg_ctl_() { as_srv "$PGBIN/pg_ctl" -D "$PGDATA" "$@"; }

free_port() {
    "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Start the cluster on a free port (a few tries: another program may take
# the port between the probe and the start).
start_server() {
    local i
    for i in 1 2 3; do
        PORT=$(free_port)
        sed -i "/^port = /d" "$PGDATA/postgresql.conf"
        echo "port = $PORT" >>"$PGDATA/postgresql.conf"
        if pg_ctl_ -l "$TMP/pg/log" -w -t 30 start >/dev/null; then
            return 0
        fi
    done
    echo "postgres.sh: the server did not start: $(tail -5 "$TMP/pg/log")" >&2
    return 1
}

make_cluster() {
    mkdir -p "$TMP/pg" "$SOCK"
    [ "$(id -u)" -eq 0 ] && chown -R postgres "$TMP/pg"
    as_srv "$PGBIN/initdb" -D "$PGDATA" -U postgres -A trust -E UTF8 \
        --locale=C --no-sync >"$TMP/pg/initdb.log" 2>&1 ||
        { echo "postgres.sh: initdb failed: $(tail -5 "$TMP/pg/initdb.log")" >&2; return 1; }
    cat >>"$PGDATA/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$SOCK'
fsync = off
synchronous_commit = off
full_page_writes = off
autovacuum = off
ssl = off
max_connections = 30
shared_buffers = 16MB
EOF
    # bob proves a password over TCP (scram); everyone else is trusted.
    cat >"$PGDATA/pg_hba.conf" <<EOF
local all all trust
host all bob 127.0.0.1/32 scram-sha-256
host all carol 127.0.0.1/32 scram-sha-256
host all dora 127.0.0.1/32 scram-sha-256
host all all 127.0.0.1/32 trust
EOF
    start_server
}

cleanup() {
    local pid
    while read -r pid; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null
    done <"$TMP/llm.pids"
    [ -f "$PGDATA/postmaster.pid" ] && pg_ctl_ -m immediate -w stop >/dev/null 2>&1
    if [ -n "${E2E_KEEP:-}" ]; then
        echo "postgres.sh: kept $TMP" >&2
    else
        rm -rf "$TMP"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

su_url() { echo "postgresql://postgres@127.0.0.1:$PORT/${1:-shop}"; }
url() { echo "postgresql://$1@127.0.0.1:$PORT/shop"; }
# psql as the superuser on shop (or $2): quiet, unaligned, no header.
su_sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$(su_url "${2:-shop}")" -c "$1"; }

BOB_PW='Ql8-bob-s3cret'
DORA_PW='Dz4-dora-s3cret'
# Every character a URL's user part may hold unencoded but ':' first: in
# the URL as CAROL_URL_PW ('/', '?' and '%' must be encoded).
CAROL_PW='p@ss:w/rd?#&%x@s3cr3t-carol'
CAROL_URL_PW='p@ss:w%2Frd%3F#&%25x@s3cr3t-carol'

setup_database() {
    # The loader grants the reader its SELECTs (--grant); the other roles
    # get theirs below.
    su_sql "CREATE ROLE reader LOGIN" postgres || return 1
    python3 "$ROOT/scripts/load_postgres.py" --dsn "$(su_url postgres)" \
        --sqlite "$SHOP_DB" --db shop --grant reader --quiet || return 1
    psql -X -q -v ON_ERROR_STOP=1 -d "$(su_url)" >"$TMP/pg/setup.log" 2>&1 <<EOF || { cat "$TMP/pg/setup.log" >&2; return 1; }
CREATE ROLE writer LOGIN;
CREATE ROLE bob LOGIN PASSWORD '$BOB_PW';
CREATE ROLE carol LOGIN PASSWORD '$CAROL_PW';
CREATE ROLE dora LOGIN PASSWORD '$DORA_PW';
CREATE ROLE filer LOGIN;
CREATE ROLE boss LOGIN;
CREATE ROLE admins SUPERUSER NOLOGIN;
GRANT admins TO boss;
GRANT pg_read_server_files TO filer;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO bob, dora, filer, boss;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO writer;
COMMENT ON TABLE orders IS 'One row per order; total in EUR';
COMMENT ON COLUMN customers.loyalty_tier IS 'bronze, silver or gold';
-- Never analysed (autovacuum is off): its count comes from count(*).
CREATE TABLE events (id int PRIMARY KEY, kind text NOT NULL);
INSERT INTO events SELECT g, CASE WHEN g % 2 = 0 THEN 'click' ELSE 'view' END
    FROM generate_series(1, 5000) g;
GRANT SELECT ON events TO reader, bob;
-- Never analysed and past count_cap (100000): counted up to the cap.
CREATE TABLE clicks (id int);
INSERT INTO clicks SELECT g FROM generate_series(1, 100500) g;
GRANT SELECT ON clicks TO reader;
-- A table of the second schema on the search path, and one whose name
-- the first schema already has.
CREATE SCHEMA extra;
CREATE TABLE extra.notes (id int PRIMARY KEY, body text);
CREATE TABLE extra.orders (id int, secret text);
INSERT INTO extra.orders VALUES (1, 'shadowed');
GRANT USAGE ON SCHEMA extra TO reader;
GRANT SELECT ON ALL TABLES IN SCHEMA extra TO reader;
ALTER ROLE reader SET search_path = public, extra;
-- A schema off the search path that the reader may use: a table only
-- there, and one named like public's orders. And one it has no USAGE on.
CREATE SCHEMA sales;
CREATE TABLE sales.regions (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO sales.regions VALUES (1, 'North'), (2, 'South'), (3, 'Lakeside');
CREATE TABLE sales.orders (id int PRIMARY KEY,
    region_id int NOT NULL REFERENCES sales.regions (id),
    amount numeric(10,2) NOT NULL, channel text NOT NULL);
INSERT INTO sales.orders VALUES (1, 1, 10.50, 'web'), (2, 2, 20.00, 'shop'),
    (3, 1, 5.25, 'web'), (4, 3, 7.00, 'phone');
COMMENT ON TABLE sales.orders IS 'Orders taken by the sales team';
GRANT USAGE ON SCHEMA sales TO reader;
GRANT SELECT ON ALL TABLES IN SCHEMA sales TO reader;
-- clerk may write only there, off its search path.
CREATE ROLE clerk LOGIN;
GRANT USAGE ON SCHEMA sales TO clerk;
GRANT SELECT, INSERT ON sales.orders TO clerk;
-- The reader may read some columns only.
CREATE TABLE staff (id int PRIMARY KEY, name text NOT NULL, salary int);
INSERT INTO staff VALUES (1, 'Ada', 5000);
GRANT SELECT (id, name) ON staff TO reader;
CREATE SCHEMA vault;
CREATE TABLE vault.keys (id int, k text);
GRANT SELECT ON vault.keys TO reader;
-- What the escapes of the corpus reach for.
CREATE EXTENSION dblink;
CREATE SEQUENCE order_seq;
GRANT USAGE ON SEQUENCE order_seq TO reader;
GRANT ALL ON SEQUENCE order_seq TO writer;
CREATE FUNCTION wipe_items() RETURNS int LANGUAGE sql SECURITY DEFINER
    AS 'DELETE FROM order_items RETURNING 1';
CREATE PROCEDURE wipe_payments(INOUT n int) LANGUAGE plpgsql SECURITY DEFINER
    AS \$\$BEGIN DELETE FROM payments; n := 1; END\$\$;
CREATE TABLE odd (id int PRIMARY KEY, b bytea, ts timestamp, d date,
    big numeric, f real, ok boolean, tags text[], j jsonb);
INSERT INTO odd VALUES (1, '\x00ff10', '2024-02-29 13:45:00', '2024-03-01',
    12345678901234567890.25, 1.5, true, '{a,b}', '{"k": [1, 2]}');
GRANT SELECT ON odd TO reader;
CREATE FUNCTION noisy() RETURNS int LANGUAGE plpgsql
    AS \$\$BEGIN RAISE NOTICE E'\\x1b[31mnotice from the server'; RETURN 7; END\$\$;
-- Columns and a table named like functions the guard refuses to call.
CREATE TABLE xact_log (id int PRIMARY KEY, txid_current bigint,
    pg_current_xact_id text);
INSERT INTO xact_log VALUES (1, 42, 'a'), (2, 43, 'b');
CREATE TABLE ts_stat (word text, n int);
INSERT INTO ts_stat VALUES ('cat', 3);
GRANT SELECT ON xact_log, ts_stat TO reader;
-- A partition the reader may read whose parent it may not, and a parent
-- it may read with its partition.
CREATE TABLE readings (id int, city text NOT NULL, at date NOT NULL)
    PARTITION BY RANGE (at);
CREATE TABLE readings_2023 PARTITION OF readings
    FOR VALUES FROM ('2023-01-01') TO ('2024-01-01');
CREATE TABLE readings_2024 PARTITION OF readings
    FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
INSERT INTO readings VALUES (1, 'Oslo', '2023-05-01'),
    (2, 'Rome', '2024-05-01'), (3, 'Lima', '2024-06-01');
GRANT SELECT ON readings_2024 TO reader;
CREATE TABLE visits (id int, at date NOT NULL) PARTITION BY RANGE (at);
CREATE TABLE visits_2024 PARTITION OF visits
    FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
INSERT INTO visits VALUES (1, '2024-02-02');
GRANT SELECT ON visits, visits_2024 TO reader;
ANALYZE customers;
EOF
    # A second database whose tables key the same thing with an integer
    # and with text, as Spider's SQLite schemas do.
    su_sql "CREATE DATABASE league" postgres || return 1
    psql -X -q -v ON_ERROR_STOP=1 -d "$(su_url league)" >>"$TMP/pg/setup.log" 2>&1 <<EOF || { cat "$TMP/pg/setup.log" >&2; return 1; }
CREATE TABLE teams (id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE players (name text NOT NULL, team_id text);
INSERT INTO teams VALUES (1, 'Red'), (2, 'Blue');
INSERT INTO players VALUES ('Ann', '1'), ('Bo', '2'), ('Cy', '2');
GRANT SELECT ON teams, players TO reader;
EOF
    # A subquery that names a column its own table lacks reads the outer
# row's (PostgreSQL resolves it as SQLite does): the NOT IN keeps nothing,
# the count is 0, and the check says why (outer_ref), with the names as
# a PostgreSQL query writes them.
ask_says_a_subquery_reads_the_outer_row() {
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM products WHERE category_id NOT IN (SELECT category_id FROM order_items)")" "$(fence "SELECT count(*) AS n FROM products WHERE id NOT IN (SELECT product_id FROM order_items)")" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -f csv "$READER" "How many products were never ordered?"
    expect_rc 0
    expect_out 'n\n4\n'
    expect_requests 2
    pycheck '
last = user(1)
assert "In the subquery over order_items, category_id is not a column of its table: it is the outer query'"'"'s products.category_id" in last, last
'
}

# Names that are reserved words of PostgreSQL but not of SQLite: a
    # table "user" (FROM user reads current_user) with columns "array"
    # and "only", and a foreign key to it.
    su_sql "CREATE DATABASE words" postgres || return 1
    psql -X -q -v ON_ERROR_STOP=1 -d "$(su_url words)" >>"$TMP/pg/setup.log" 2>&1 <<EOF || { cat "$TMP/pg/setup.log" >&2; return 1; }
CREATE TABLE "user" (id int PRIMARY KEY, name text NOT NULL, "array" int,
    "only" text);
INSERT INTO "user" VALUES (1, 'Ann', 10, 'yes'), (2, 'Bo', 20, 'no');
CREATE TABLE visits (id int PRIMARY KEY, user_id int REFERENCES "user" (id));
INSERT INTO visits VALUES (1, 1), (2, 1), (3, 2);
GRANT SELECT ON "user", visits TO reader;
EOF
    # A foreign table (postgres_fdw) whose remote view sleeps: the test
    # stops the remote session to make a foreign server that hangs.
    su_sql "CREATE DATABASE remote" postgres || return 1
    psql -X -q -v ON_ERROR_STOP=1 -d "$(su_url remote)" >>"$TMP/pg/setup.log" 2>&1 <<EOF || { cat "$TMP/pg/setup.log" >&2; return 1; }
CREATE ROLE farside LOGIN;
CREATE VIEW slow AS SELECT 1 AS x FROM pg_sleep(60);
GRANT SELECT ON slow TO farside;
EOF
    psql -X -q -v ON_ERROR_STOP=1 -d "$(su_url)" >>"$TMP/pg/setup.log" 2>&1 <<EOF || { cat "$TMP/pg/setup.log" >&2; return 1; }
CREATE EXTENSION postgres_fdw;
CREATE SERVER far FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '127.0.0.1', port '$PORT', dbname 'remote');
CREATE USER MAPPING FOR reader SERVER far
    OPTIONS (user 'farside', password_required 'false');
CREATE FOREIGN TABLE far_slow (x int) SERVER far OPTIONS (table_name 'slow');
GRANT SELECT ON far_slow TO reader;
EOF
    # A SQL_ASCII database holding Latin-1 bytes (0xe9: é) beside UTF-8
    # (Zöe) and a stray 0xff, in values, a comment and a name.
    createdb -h 127.0.0.1 -p "$PORT" -U postgres -E SQL_ASCII -T template0 \
        --locale=C legacy || return 1
    psql -X -q -v ON_ERROR_STOP=1 -d "$(su_url legacy)" >>"$TMP/pg/setup.log" 2>&1 <<<$'
CREATE TABLE people (id int PRIMARY KEY, name text NOT NULL, note text);
COMMENT ON TABLE people IS \'Caf\xe9 regulars\';
INSERT INTO people VALUES (1, \'Caf\xe9 de Flore\', \'Z\xc3\xb6e\'), (2, \'x\xff\', NULL);
CREATE TABLE "caf\xe9" (id int);
GRANT SELECT ON people, "caf\xe9" TO reader;' || { cat "$TMP/pg/setup.log" >&2; return 1; }
}

echo "postgres.sh: cluster in $TMP/pg ($PGBIN)" >&2
make_cluster || exit 2
setup_database || { echo "postgres.sh: loading the shop failed" >&2; exit 2; }
READER=$(url reader)

# --------------------------------------------------------------------------
# Helpers (inside a test's subshell; T is the test's directory)
# --------------------------------------------------------------------------
fail() {
    printf '%s\n' "$(printf '%s' "$*" | tr '\n' '|' | cut -c1-600)" >"$T/.fail"
    exit 1
}
now_ms() { local t=${EPOCHREALTIME/./}; echo $(( ${t#0} / 1000 )); }

# run ARGS...: askdb with stdin from /dev/null; RC, ELAPSED_MS, $T/out,
# $T/err. Every output is also kept for the password check at the end.
run() {
    local t0
    t0=$(now_ms)
    (cd "$T" && exec timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" "$@") </dev/null >"$T/out" 2>"$T/err"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
    {
        printf '$ askdb'; printf ' %q' "$@"; printf '\n-> exit %s in %s ms\n' "$RC" "$ELAPSED_MS"
        sed 's/^/  stderr: /' "$T/err" | head -20
    } >>"$T/.trace"
    cat "$T/out" "$T/err" >>"$TMP/all_output"
    [ "$RC" != 124 ] && [ "$RC" != 137 ] || fail "askdb $* did not finish within $RUN_LIMIT_S s"
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer' "$T/err"; then
        fail "sanitizer report from: askdb $* :: $(grep -m3 -E 'Sanitizer|runtime error' "$T/err")"
    fi
}
expect_rc() { [ "$RC" = "$1" ] || fail "exit $RC, expected $1 (stderr: $(head -c 400 "$T/err"))"; }
expect_err_has() { grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1' (stderr: $(head -c 500 "$T/err"))"; }
expect_err_lacks() { ! grep -qF -- "$1" "$T/err" || fail "stderr has '$1' (stderr: $(head -c 500 "$T/err"))"; }
expect_out_has() { grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1' (stdout: $(head -c 500 "$T/out"))"; }
expect_out_lacks() { ! grep -qF -- "$1" "$T/out" || fail "stdout has '$1'"; }
expect_out() {
    # shellcheck disable=SC2059
    printf -- "$@" >"$T/expected"
    cmp -s "$T/expected" "$T/out" || fail "stdout differs: expected $(od -c "$T/expected" | head -3) got $(head -c 300 "$T/out")"
}
expect_empty_out() { [ ! -s "$T/out" ] || fail "stdout not empty: $(head -c 200 "$T/out")"; }
expect_no_sanitizer() {
    ! grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer' "$T/err" ||
        fail "sanitizer report: $(grep -m3 -E 'Sanitizer|runtime error' "$T/err")"
}
expect_faster() { [ "$ELAPSED_MS" -lt "$1" ] || fail "took $ELAPSED_MS ms, expected under $1 ms"; }

# interrupt: Ctrl-C to the caller's $pid and wait for it; sets RC and
# ELAPSED_MS (from the Ctrl-C).
interrupt() {
    local t0
    t0=$(now_ms)
    kill -INT "$pid"
    wait "$pid"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
}

LLM_N=0
start_llm() {
    local d pid _
    LLM_N=$((LLM_N + 1))
    d="$T/llm$LLM_N"
    mkdir -p "$d"
    printf '%s' "$1" >"$d/script.json"
    LLMLOG="$d/log"
    : >"$LLMLOG"
    "$FAKE_LLM" --script "$d/script.json" --log "$LLMLOG" --port 0 \
        --port-file "$d/port" 2>"$d/stderr" &
    pid=$!
    echo "$pid" >>"$TMP/llm.pids"
    echo "$pid" >>"$T/.pids"
    for _ in $(seq 1 100); do
        [ -s "$d/port" ] && break
        sleep 0.05
    done
    [ -s "$d/port" ] || fail "fake_llm did not start"
    URL="http://127.0.0.1:$(cat "$d/port")"
}
stop_llms() {
    local pid
    [ -s "$T/.pids" ] || return 0
    while read -r pid; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done <"$T/.pids"
    : >"$T/.pids"
}
replies() { "$PY" -c 'import json,sys; print(json.dumps([{"content": a} for a in sys.argv[1:]]))' "$@"; }
always() { "$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "repeat": True}]))' "$1"; }
# shellcheck disable=SC2016
fence() { printf '```sql\n%s\n```' "$1"; }
nreq() { if [ -s "${LLMLOG:-}" ]; then wc -l <"$LLMLOG" | tr -d ' '; else echo 0; fi; }
expect_requests() { [ "$(nreq)" = "$1" ] || fail "the model got $(nreq) requests, expected $1"; }

# pycheck CODE [ARGS]: Python assertions over out, err, reqs (the model's
# request log), args.
pycheck() {
    local code=$1 msg
    shift
    msg=$("$PY" - "$T" "${LLMLOG:-}" "$code" "$@" <<'PY' 2>&1
import json, os, sys
tdir, log, code = sys.argv[1:4]
args = sys.argv[4:]
def rd(p):
    try:
        return open(p, encoding="utf-8", errors="replace").read()
    except FileNotFoundError:
        return ""
out, err = rd(os.path.join(tdir, "out")), rd(os.path.join(tdir, "err"))
reqs = [json.loads(l) for l in open(log)] if log and os.path.exists(log) else []
def msgs(i):
    return reqs[i]["body"]["messages"]
def user(i):
    return [m for m in msgs(i) if m["role"] == "user"][-1]["content"]
try:
    exec(code, globals())
except AssertionError as e:
    print(str(e) or "assertion failed"); sys.exit(1)
except Exception as e:
    print("%s: %s" % (type(e).__name__, e)); sys.exit(1)
PY
    ) || fail "$msg"
}

# still_running PATTERN: how many active statements like PATTERN the
# server has, after up to a second for a cancel to land (without one, the
# statements of these tests run for many seconds more).
still_running() {
    local n i
    for i in $(seq 1 20); do
        n=$(su_sql "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%$1%' AND state = 'active' AND pid <> pg_backend_pid()")
        [ "$n" = 0 ] && break
        sleep 0.05
    done
    echo "$n"
}

# A Ctrl-C sent to timeout(1) reaches its command once only with
# --foreground: without it, timeout sends it to the command and then to
# its process group, and a second SIGINT that comes after the first was
# handled is askdb's second Ctrl-C, which ends it at once, silently.
#
# start_script PORT_FILE SCRIPT ARG...: a stand-in of the test tree
# (tests/e2e/SCRIPT, which writes the port it listens on to PORT_FILE)
# started and waited for, its pid kept for the clean-up; SCRIPT_PID.
start_script() {
    local file=$1 script=$2
    shift 2
    rm -f "$file"
    "$PY" "$HERE/$script" "$@" &
    SCRIPT_PID=$!
    echo "$SCRIPT_PID" >>"$T/.pids"
    echo "$SCRIPT_PID" >>"$TMP/llm.pids"
    for _ in $(seq 1 100); do
        [ -s "$file" ] && return 0
        sleep 0.05
    done
    fail "$script did not start"
}

# start_relay: a relay to the server (tests/e2e/silent_relay.py) that
# stands for the network; RELAY_PORT, RELAY_PID. relay_silent: the server
# as seen through it goes away without a word. relay_deaf: it says no
# more, yet still takes connections, answering none. start_relay
# --hold-cancels: a relay that holds every cancel request unanswered.
start_relay() {
    rm -f "$T/relay.port.quiet"
    start_script "$T/relay.port" silent_relay.py 127.0.0.1 "$PORT" \
        "$T/relay.port" "$@"
    RELAY_PID=$SCRIPT_PID
    RELAY_PORT=$(cat "$T/relay.port")
}
relay_silent() {
    kill -USR1 "$RELAY_PID"
    for _ in $(seq 1 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$RELAY_PORT") 2>/dev/null || return 0
        sleep 0.05
    done
    fail "the relay still takes connections"
}
relay_deaf() {
    kill -USR2 "$RELAY_PID"
    for _ in $(seq 1 100); do
        [ -e "$T/relay.port.quiet" ] && return 0
        sleep 0.05
    done
    fail "the relay did not go deaf"
}

# wait_in FILE TEXT TRIES: wait up to TRIES times 50 ms for TEXT in FILE;
# 0 when it came. wait_err TEXT TRIES: the same for $T/err.
wait_in() {
    for _ in $(seq 1 "$3"); do
        grep -qF -- "$2" "$1" && return 0
        sleep 0.05
    done
    return 1
}
wait_err() { wait_in "$T/err" "$1" "$2"; }

# shell_on URL TIMEOUT_MS: askdb shell on URL with --timeout TIMEOUT_MS
# and no model (its lines are .sql), fed through fd 7, its pid in the
# caller's pid, its output in $T/out and $T/err; end_shell ends it.
shell_on() {
    mkfifo "$T/fifo"
    (cd "$T" && exec timeout 40 "$ASKDB" shell --llm-url http://127.0.0.1:9/v1 --model test \
        --timeout "$2" "$1") <"$T/fifo" >"$T/out" 2>"$T/err" &
    pid=$!
    exec 7>"$T/fifo"
}

# end_shell WHAT: the caller's shell (its pid in pid, its lines through
# fd 7) told its input ended and waited for; RC its status; WHAT and
# ELAPSED_MS to the trace; its output checked for sanitizer reports.
end_shell() {
    exec 7>&-
    wait "$pid"
    RC=$?
    echo "$1: exit $RC, $ELAPSED_MS ms" >>"$T/.trace"
    cat "$T/out" "$T/err" >>"$TMP/all_output"
    expect_no_sanitizer
}

# relays_deaf PID...: relay_deaf for each of a test's relays.
relays_deaf() {
    local RELAY_PID
    for RELAY_PID in "$@"; do
        rm -f "$T/relay.port.quiet"
        relay_deaf
    done
}

# start_standby_stub: a listener that answers as a hot standby does at its
# start (tests/e2e/standby_stub.py), which libpq turns down for
# target_session_attrs=read-write; STANDBY_PORT.
start_standby_stub() {
    start_script "$T/standby.port" standby_stub.py "$T/standby.port"
    STANDBY_PORT=$(cat "$T/standby.port")
}

# end_sessions ROLE: the server ends ROLE's sessions, idle ones (a relay
# passes the close on; the client hears of it at its next statement).
end_sessions() {
    su_sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = '$1'" >/dev/null
    for _ in $(seq 1 50); do
        [ "$(su_sql "SELECT count(*) FROM pg_stat_activity WHERE usename = '$1'")" = 0 ] && break
        sleep 0.05
    done
    sleep 0.3
}

# wait_active TEXT: wait up to 10 s for an active statement like TEXT.
wait_active() {
    for _ in $(seq 1 200); do
        [ "$(su_sql "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%$1%' AND state = 'active' AND pid <> pg_backend_pid()")" = 1 ] && return 0
        sleep 0.05
    done
    fail "the statement '$1' never ran on the server"
}

# Everything a statement could change, as the superuser sees it: every
# table's rows, the sequences, large objects, roles and their settings,
# the relations of every schema, and the files a COPY could write.
checksum() {
    psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$(su_url)" <<'EOF'
SELECT string_agg(format(
    'SELECT %L || '':'' || coalesce(md5(string_agg(t::text, ''|'' ORDER BY t::text)), ''-'') FROM %I.%I t',
    n.nspname || '.' || c.relname, n.nspname, c.relname), ' UNION ALL ' ORDER BY 1)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND n.nspname IN ('public', 'extra', 'sales') \gexec
SELECT last_value, is_called FROM order_seq;
SELECT count(*) FROM pg_largeobject_metadata;
SELECT string_agg(rolname || rolsuper::text || rolcanlogin::text, ',' ORDER BY rolname) FROM pg_roles;
SELECT count(*) FROM pg_db_role_setting;
SELECT string_agg(n.nspname || '.' || c.relname || c.relkind::text, ',' ORDER BY 1)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast');
SELECT string_agg(lanname, ',' ORDER BY 1) FROM pg_language;
EOF
    ls "$TMP/pwned"* 2>/dev/null
}

# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

schema_shows_keys_comments_and_estimates() {
    run schema "$READER"
    expect_rc 0
    expect_err_lacks "warning"
    expect_out_has "CREATE TABLE customers ("
    expect_out_has "  id bigint PRIMARY KEY,"
    expect_out_has "FOREIGN KEY (customer_id) REFERENCES customers(id)"
    expect_out_has "UNIQUE (email)"
    expect_out_has "UNIQUE (order_id, product_id)"
    expect_out_has "-- One row per order; total in EUR"
    expect_out_has "loyalty_tier text NOT NULL, -- bronze, silver or gold"
    expect_out_has "country text NOT NULL, -- ISO 3166 alpha-2"
    expect_out_has "CREATE VIEW customer_revenue ("
    pycheck '
import re
def block(name):
    m = re.search(r"(-- [^\n]*\n)?CREATE (TABLE|VIEW) " + name + r" \((.*?)\n\);([^\n]*)", out, re.S)
    assert m, "no table " + name + " in: " + out[:300]
    return m.group(3), m.group(4)
# analysed, more rows than the sample: the statistics estimate
assert block("orders")[1] == " -- about 250 rows", block("orders")[1]
# small: the sample read the whole table
assert block("categories")[1] == " -- 10 rows", block("categories")[1]
assert block("customers")[1] == " -- 60 rows", block("customers")[1]
# never analysed, larger than the sample: counted
assert block("events")[1] == " -- 5000 rows", block("events")[1]
assert block("clicks")[1] == " -- over 100000 rows", block("clicks")[1]
assert "'"'"'click'"'"'" in block("events")[0], block("events")[0]
# the second schema of the search path; its orders, which public.orders
# hides from the bare name, only qualified
assert "CREATE TABLE notes (" in out
assert out.count("CREATE TABLE orders (") == 1
assert "CREATE TABLE extra.orders (\n  id integer,\n  secret text" in out, out
# types as PostgreSQL names them
body = block("odd")[0]
for t in ("b bytea", "ts timestamp without time zone", "d date", "big numeric", "f real", "ok boolean", "tags text[]", "j jsonb"):
    assert t in body, t + " not in " + body
# nothing of another role shows
assert "writer" not in out
'
    # bob may not read events: it is not shown to him.
    run schema "postgresql://bob:$BOB_PW@127.0.0.1:$PORT/shop"
    expect_rc 0
    expect_out_lacks "notes"
    expect_out_has "CREATE TABLE events"
}

# Tables of schemas off the search path are shown qualified; the bare
# name stays the search path's table; a schema without USAGE is not shown.
# A partition the role may read whose parent it may not is a table of its
# own in the schema (sql and ask reach it); a parent the role may read
# stands for its partitions, which are not listed again.
partitions_show_when_their_parent_is_not_readable() {
    run schema "$READER"
    expect_rc 0
    expect_out_has "CREATE TABLE readings_2024 ("
    expect_out_has "CREATE TABLE visits ("
    expect_out_lacks "CREATE TABLE readings ("
    expect_out_lacks "readings_2023"
    expect_out_lacks "visits_2024"
    run schema -f json "$READER"
    expect_rc 0
    pycheck '
t = {x["name"]: x for x in json.loads(out)["tables"]}
assert [c["name"] for c in t["readings_2024"]["columns"]] == ["id", "city", "at"], t.get("readings_2024")
assert "visits_2024" not in t and "readings" not in t, sorted(t)
'
    run sql -f csv "$READER" "SELECT city FROM readings_2024 ORDER BY id"
    expect_rc 0
    expect_out 'city\nRome\nLima\n'
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM readings_2024 WHERE city = 'Lima'")" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -f csv "$READER" "How many 2024 readings are from Lima?"
    expect_rc 0
    expect_out 'n\n1\n'
    expect_requests 1
    pycheck '
first = msgs(0)[0]["content"] + msgs(0)[1]["content"]
assert "CREATE TABLE readings_2024 (" in first, first[:600]
'
}

other_schemas_show_qualified() {
    run schema "$READER"
    expect_rc 0
    expect_out_has "  name text NOT NULL -- e.g. 'North', 'South', 'Lakeside'"
    expect_out_has "FOREIGN KEY (region_id) REFERENCES sales.regions(id)"
    expect_out_has "CREATE TABLE sales.regions ("
    expect_out_lacks "vault"
    pycheck '
import re
assert "-- Orders taken by the sales team\nCREATE TABLE sales.orders (\n" in out, out
bare = re.search(r"\nCREATE TABLE orders \((.*?)\n\);", out, re.S).group(1)
assert "customer_id" in bare and "channel" not in bare, bare
assert out.index("CREATE TABLE sales.orders") > out.index("CREATE TABLE orders ("), out
'
    run schema -f json "$READER"
    expect_rc 0
    pycheck '
j = json.loads(out)
t = {x["name"]: x for x in j["tables"]}
assert t["sales.orders"]["schema"] == "sales", t["sales.orders"]
assert t["sales.orders"]["rows"] == 4, t["sales.orders"]
assert "schema" not in t["orders"] and "schema" not in t["customers"], t["orders"]
assert t["extra.orders"]["schema"] == "extra", list(t)
fk = t["sales.orders"]["foreign_keys"]
assert fk == [{"from": "region_id", "table": "sales.regions", "to": "id"}], fk
assert [c["name"] for c in t["sales.regions"]["columns"]] == ["id", "name"]
assert "CREATE TABLE sales.regions (" in j["text"]
'
    run sql -f csv "$READER" "SELECT r.name, count(*) AS n FROM sales.orders o JOIN sales.regions r ON r.id = o.region_id GROUP BY r.name ORDER BY r.name"
    expect_rc 0
    expect_out 'name,n\nLakeside,1\nNorth,2\nSouth,1\n'
    run sql -f csv "$READER" "SELECT (SELECT count(*) FROM orders) AS bare, (SELECT count(*) FROM sales.orders) AS sales"
    expect_rc 0
    expect_out 'bare,sales\n250,4\n'
}

# ask over a table of another schema: the prompt shows it qualified, the
# repair hint names it so, the value the question names is found in it,
# and the answer comes from it, not from the search path's orders.
ask_answers_from_another_schema() {
    local bad good
    bad=$(fence "SELECT count(*) AS n FROM sales.orders o JOIN sales.regions r ON r.id = o.region_id WHERE r.nme = 'Lakeside'")
    good=$(fence "SELECT count(*) AS n FROM sales.orders o JOIN sales.regions r ON r.id = o.region_id WHERE r.name = 'Lakeside'")
    start_llm "$(replies "$bad" "$good" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check --values -f csv "$READER" "How many sales orders came from the Lakeside region?"
    expect_rc 0
    expect_out 'n\n1\n'
    expect_requests 2
    pycheck '
first = msgs(0)[0]["content"] + msgs(0)[1]["content"]
assert "CREATE TABLE sales.regions (" in first and "CREATE TABLE sales.orders (" in first, first[:600]
assert "sales.regions.name = '"'"'Lakeside'"'"'" in first, first
last = user(1)
assert "column r.nme does not exist" in last, last
assert "there is no column '"'"'r.nme'"'"'; r is table sales.regions, which has columns: id, name" in last, last
'
}

# A text value found nowhere in its column, on PostgreSQL's types and
# counts (tables over 200 rows have an estimate): the few values of a
# code column are listed whole ('Japan' against country codes), and a
# value stored in a table a foreign key away is said so (payments.method),
# by the checks' own queries, before the count of 0 stands.
ask_says_where_a_missing_value_is() {
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM orders o JOIN customers c ON o.customer_id = c.id WHERE c.country = 'Japan'")" "$(fence "SELECT count(*) AS n FROM orders o JOIN customers c ON o.customer_id = c.id WHERE c.country = 'JP'")" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -f csv "$READER" "How many orders did customers from Japan place?"
    expect_rc 0
    expect_out 'n\n8\n'
    expect_requests 2
    pycheck '
last = user(1)
assert "customers.country has no value '"'"'Japan'"'"'; its 10 values are '"'"'DE'"'"', '"'"'ES'"'"'" in last, last
'
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM orders WHERE status = 'gift_card'")" "$(fence "SELECT count(*) AS n FROM payments WHERE method = 'gift_card'")" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -f csv "$READER" "How many payments were made with a gift card?"
    expect_rc 0
    expect_out 'n\n23\n'
    expect_requests 2
    pycheck '
last = user(1)
assert "'"'"'gift_card'"'"' is not a value of orders.status; it is stored in payments.method" in last, last
'
}

# Names that are reserved words of PostgreSQL but not of SQLite ("user",
# "array", "only": pg_get_keywords() R and T) are shown quoted, as a query
# must write them, and a query that writes them so runs, through sql and
# through ask.
reserved_words_are_quoted_in_the_schema() {
    local words="postgresql://reader@127.0.0.1:$PORT/words"
    run schema "$words"
    expect_rc 0
    pycheck '
want = ("CREATE TABLE \"user\" (\n"
        "  id integer PRIMARY KEY,\n"
        "  name text NOT NULL, -- e.g. \x27Ann\x27, \x27Bo\x27\n"
        "  \"array\" integer,\n"
        "  \"only\" text -- e.g. \x27yes\x27, \x27no\x27\n"
        ");")
assert want in out, out
assert "  FOREIGN KEY (user_id) REFERENCES \"user\"(id)\n" in out, out
'
    run sql -f csv "$words" 'SELECT name, "array", "only" FROM "user" ORDER BY id'
    expect_rc 0
    expect_out 'name,array,only\nAnn,10,yes\nBo,20,no\n'
    start_llm "$(replies "$(fence 'SELECT u.name, count(*) AS n FROM "user" u JOIN visits v ON v.user_id = u.id GROUP BY u.name ORDER BY u.name')" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv "$words" "Visits per user?"
    expect_rc 0
    expect_out 'name,n\nAnn,2\nBo,1\n'
    expect_requests 1
    pycheck '
first = msgs(0)[0]["content"] + msgs(0)[1]["content"]
assert "CREATE TABLE \"user\" (" in first and "  \"array\" integer," in first, first
'
}

# A reserved word written bare as a name: FROM user reads current_user,
# whose one column is not "name"; the repair hint names the table quoted
# and says why, and the quoted query answers.
ask_repairs_a_reserved_word_written_bare() {
    local words="postgresql://reader@127.0.0.1:$PORT/words"
    start_llm "$(replies "$(fence 'SELECT name FROM user ORDER BY id')" "$(fence 'SELECT name FROM "user" ORDER BY id')" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv "$words" "Names of the users?"
    expect_rc 0
    expect_out 'name\nAnn\nBo\n'
    expect_requests 2
    pycheck '
last = user(1)
assert "column \"name\" does not exist" in last, last
assert "Closest real columns: \"user\".name." in last, last
assert "Hint: user is a reserved word in PostgreSQL; write the name quoted: \"user\"." in last, last
'
}

ask_compares_a_number_with_text_as_text() {
    local league="postgresql://reader@127.0.0.1:$PORT/league" q
    q="SELECT t.name, count(*) AS n FROM players p JOIN teams t ON t.id = p.team_id GROUP BY t.name ORDER BY t.name"
    start_llm "$(replies "$(fence "$q")" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -v -f csv "$league" "How many players does each team have?"
    expect_rc 0
    expect_out 'name,n\nBlue,2\nRed,1\n'
    expect_requests 1
    expect_err_has "t.id = p.team_id compared as text"
    # off: the engine's refusal goes to the model, as before
    start_llm "$(replies "$(fence "$q")" "$(fence "SELECT 'repaired' AS r")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 --no-cast -f csv "$league" "How many players does each team have?"
    expect_rc 0
    expect_out 'r\nrepaired\n'
    expect_requests 2
    pycheck 'assert "operator does not exist: bigint = text" in user(1), user(1)'
}

# A server (or database) with standard_conforming_strings off reads a
# backslash in '...' as an escape, where askdb's guard, checks and fixes
# read SQL's literal: the session pins it on, so 'a\b' is three
# characters to both.
literals_read_as_sql_writes_them_whatever_the_server_says() {
    su_sql "ALTER DATABASE shop SET standard_conforming_strings = off"
    run sql -f csv "$READER" "SELECT length('a\\b') AS n, 'x\\' AS s"
    su_sql "ALTER DATABASE shop RESET standard_conforming_strings"
    expect_rc 0
    expect_out 'n,s\n3,x\\\n'
}

# A SQL_ASCII database's bytes come through as valid UTF-8: UTF-8 as it
# is, any other byte as U+FFFD, in the schema, the rows and the server's
# messages; the statement is sent as written (its UTF-8 matches the same
# bytes stored).
sql_ascii_database_reads_as_utf8() {
    local legacy="postgresql://reader@127.0.0.1:$PORT/legacy"
    run schema "$legacy"
    expect_rc 0
    pycheck '
assert "-- Caf\ufffd regulars\nCREATE TABLE people (\n" in out, out
assert "name text NOT NULL, -- e.g. \x27Caf\ufffd de Flore\x27, \x27x\ufffd\x27" in out, out
assert "note text -- e.g. \x27Z\u00f6e\x27" in out, out
assert "CREATE TABLE \"caf\ufffd\" (" in out, out
'
    run schema -f json "$legacy"
    expect_rc 0
    pycheck 'assert "caf\ufffd" in [t["name"] for t in json.loads(out)["tables"]], out'
    run sql -f json "$legacy" "SELECT id, name, note, name AS \"nom\" FROM people ORDER BY id"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["rows"] == [[1, "Caf\ufffd de Flore", "Z\u00f6e", "Caf\ufffd de Flore"], [2, "x\ufffd", None, "x\ufffd"]], j["rows"]
'
    run sql -f csv "$legacy" "SELECT id FROM people WHERE note = 'Zöe'"
    expect_rc 0
    expect_out 'id\n1\n'
    run sql "$legacy" "SELECT name::int FROM people WHERE id = 1"
    expect_rc 1
    pycheck 'assert "invalid input syntax for type integer: \"Caf\ufffd de Flore\"" in err, err'
    # --max-bytes counts the text as askdb keeps it: 'x' and U+FFFD (3
    # bytes) for each of the 50 "x\xe9", 200 bytes a cell and its value's
    # 40: 4 rows in 1000 (counted as the server's 100 bytes, 7 rows).
    run sql --max-bytes 1000 -f csv "$legacy" "SELECT repeat(name, 50) AS x FROM people, generate_series(1, 100) WHERE id = 2"
    expect_rc 0
    pycheck '
lines = out.splitlines()
assert len(lines) == 5 and lines[1] == "x\ufffd" * 50, (len(lines), lines[:2])
assert "truncated at the size limit (--max-bytes) after 4 rows" in err, err
'
}

sql_converts_types() {
    run sql -f json "$READER" "SELECT id, b, ts, d, big, f, ok, tags, j, 7::int2 AS i2, 2.50::numeric(5,2) AS price, sum(id) OVER () AS s, avg(id) OVER () AS a, NULL::int AS n, 'Zoë'::text AS t FROM odd"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["columns"] == ["id", "b", "ts", "d", "big", "f", "ok", "tags", "j", "i2", "price", "s", "a", "n", "t"], j["columns"]
row = j["rows"][0]
exp = [1, {"blob_hex": "00ff10"}, "2024-02-29 13:45:00", "2024-03-01", "12345678901234567890.25", 1.5, 1, "{a,b}", "{\"k\": [1, 2]}", 7, 2.5, 1, 1.0, None, "Zoë"]
assert row == exp, row
assert type(row[0]) is int and type(row[11]) is int and type(row[10]) is float and type(row[12]) is float, row
'
}

# What docs/engines/postgresql.md says of money, NaN and the infinities:
# money is text in the server's format; NaN and the infinities, of float8
# and of numeric, are reals: strings in JSON, nan/inf in CSV.
sql_shows_money_as_text_and_nan_as_strings() {
    local q="SELECT 12.5::money AS m, sum(2::money) AS sm, 'NaN'::float8 AS n, 'Infinity'::float8 AS i, '-Infinity'::numeric AS ni, 'NaN'::numeric AS nn"
    run sql -f json "$READER" "$q"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["rows"] == [["$12.50", "$2.00", "NaN", "Infinity", "-Infinity", "NaN"]], j["rows"]
'
    run sql -f csv "$READER" "$q"
    expect_rc 0
    expect_out 'm,sm,n,i,ni,nn\n$12.50,$2.00,nan,inf,-inf,nan\n'
}

server_notices_never_reach_the_terminal() {
    run sql -f csv "$READER" "SELECT noisy() AS n"
    expect_rc 0
    expect_out 'n\n7\n'
    expect_err_lacks "notice from the server"
    [ ! -s "$T/err" ] || fail "stderr: $(od -c "$T/err" | head -3)"
}

sql_limits_rows_and_bytes() {
    run sql --max-rows 3 -f csv "$READER" "SELECT g FROM generate_series(1, 1000000) g"
    expect_rc 0
    expect_out 'g\n1\n2\n3\n'
    expect_err_has "truncated at the row limit"
    expect_faster 5000
    run sql --max-bytes 1000 -f csv "$READER" "SELECT repeat('x', 100) AS x FROM generate_series(1, 100000)"
    expect_rc 0
    pycheck '
lines = out.splitlines()
# a cell costs its value (40 bytes) and its 100 bytes: 7 rows fit in 1000
assert lines == ["x"] + ["x" * 100] * 7, (len(lines), lines[:2])
assert "truncated at the size limit (--max-bytes) after 7 rows" in err, err
'
    # Nothing of either statement is left running on the server.
    local left
    left=$(still_running "generate_series(1, ")
    [ "$left" = 0 ] || fail "$left statements still run on the server"
}

timeout_cancels_the_statement_on_the_server() {
    run sql --timeout 300 "$READER" "SELECT pg_sleep(30)"
    expect_rc 1
    expect_err_has "300 ms time limit"
    expect_empty_out
    expect_faster 3000
    local left
    left=$(still_running "pg_sleep(30)")
    [ "$left" = 0 ] || fail "pg_sleep(30) is still on the server ($left)"
    # The same through ask: every attempt times out, and says so.
    start_llm "$(always "$(fence "SELECT pg_sleep(30)")")"
    run ask --llm-url "$URL" --model test --timeout 300 --no-question-check -f json "$READER" "Sleep?"
    expect_rc 1
    expect_faster 8000
    pycheck '
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["timeout"] * 3, j["attempts"]
'
    left=$(still_running "pg_sleep(30)")
    [ "$left" = 0 ] || fail "pg_sleep(30) is still on the server after ask ($left)"
}

ask_answers_and_repairs_with_the_servers_message() {
    local bad good
    bad=$(fence "SELECT id, first_nam FROM customers ORDER BY id LIMIT 3")
    good=$(fence "SELECT id, first_name FROM customers ORDER BY id LIMIT 3")
    start_llm "$(replies "$bad" "$good" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv "$READER" "First three customers?"
    expect_rc 0
    expect_out 'id,first_name\n1,Olivia\n2,Alejandro\n3,Lucía\n'
    expect_requests 2
    pycheck '
first = msgs(0)[0]["content"] + msgs(0)[1]["content"]
assert "PostgreSQL" in first, "the prompt does not name the engine"
assert "CREATE TABLE customers" in first and "One row per order" in first, first[:400]
last = user(1)
assert "column \"first_nam\" does not exist" in last, last
assert "customers.first_name" in last, last
'
}

# A parameter ($1) has no value to bind: a syntax error the model repairs,
# not a Bind that the server answers by ending the connection.
placeholders_are_a_syntax_error_to_repair() {
    local q
    for q in 'SELECT $1' 'SELECT id FROM customers WHERE id = $1' 'SELECT $1 IS NULL'; do
        run sql "$READER" "$q"
        expect_rc 1
        expect_empty_out
        expect_err_has 'the query has a $1 placeholder; write the values into the SQL'
        expect_err_lacks "lost the connection"
    done
    start_llm "$(replies "$(fence 'SELECT first_name FROM customers WHERE id = $1')" \
        "$(fence "SELECT first_name FROM customers WHERE id = 1")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -f json "$READER" "Name of customer 1?"
    expect_rc 0
    expect_requests 2
    pycheck '
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["syntax", "none"], j["attempts"]
assert j["rows"] == [["Olivia"]], j["rows"]
assert "the query has a $1 placeholder" in user(1), user(1)
'
}

# A SELECT on what the role may not read says so; the read-only advice is
# for what writes or reaches the server.
permission_errors_say_what_the_role_may_not_read() {
    run sql "$READER" "SELECT salary FROM staff"
    expect_rc 1
    expect_err_has "refused: the role may not read table staff, or not every column of it that the statement names (permission denied for table staff); the schema shows only the tables and columns it may read"
    expect_err_lacks "read-only queries"
    run sql -f csv "$READER" "SELECT name FROM staff"
    expect_rc 0
    expect_out 'name\nAda\n'
    run schema "$READER"
    expect_out_has "CREATE TABLE staff ("
    expect_out_lacks "salary"
    run sql "$READER" "SELECT * FROM vault.keys"
    expect_rc 1
    expect_err_has "refused: the role may not use schema vault (permission denied for schema vault)"
    expect_err_lacks "read-only queries"
    run sql "$READER" "SELECT pg_read_file('/etc/passwd')"
    expect_rc 1
    expect_err_has "refused: the role may not do this (permission denied for function pg_read_file); askdb runs only read-only queries"
}

refuses_escapes_and_keeps_data_unchanged() {
    local before after stmt
    local -a stmts=(
        "DELETE FROM orders"
        "UPDATE orders SET total = 0"
        "INSERT INTO categories VALUES (999, 'x', NULL)"
        "DROP TABLE orders"
        "TRUNCATE orders"
        "SELECT 1; DELETE FROM orders"
        "SELECT 1; COMMIT; DELETE FROM orders"
        "WITH d AS (DELETE FROM orders RETURNING id) SELECT count(*) FROM d"
        "EXPLAIN ANALYZE DELETE FROM orders"
        "SELECT * FROM orders FOR UPDATE"
        "COPY orders TO PROGRAM 'touch $TMP/pwned1'"
        "COPY (SELECT 1) TO '$TMP/pwned2'"
        "COPY orders FROM PROGRAM 'echo 1'"
        "SELECT pg_read_file('/etc/passwd')"
        "SELECT pg_ls_dir('.')"
        "SELECT lo_import('/etc/passwd')"
        "SELECT lo_export(1, '$TMP/pwned3')"
        "SELECT dblink_exec('host=127.0.0.1 port=$PORT dbname=shop user=postgres', 'DELETE FROM orders')"
        "SELECT * FROM dblink('dbname=shop user=writer', 'DELETE FROM orders RETURNING 1') AS t(x int)"
        "DO \$\$BEGIN DELETE FROM orders; END\$\$"
        "CALL wipe_payments(0)"
        "SELECT wipe_items()"
        "SET ROLE postgres"
        "SELECT set_config('role', 'postgres', false)"
        "SELECT set_config('transaction_read_only', 'off', true)"
        "SELECT nextval('order_seq')"
        "SELECT setval('order_seq', 100)"
        "CREATE TEMP TABLE t (x int)"
        "SELECT * INTO t2 FROM orders"
        "CREATE TABLE t (x int)"
        "ALTER ROLE reader SUPERUSER"
        "ALTER ROLE reader SET default_transaction_read_only = off"
        "GRANT ALL ON orders TO reader"
        "CREATE EXTENSION file_fdw"
        "LOCK TABLE orders"
        "VACUUM orders"
        "PREPARE p AS DELETE FROM orders"
        "BEGIN"
        "SET default_transaction_read_only = off"
        "SELECT pg_reload_conf()"
    )
    before=$(checksum)
    [ -n "$before" ] || fail "no checksum"
    for stmt in "${stmts[@]}"; do
        run sql "$READER" "$stmt"
        expect_rc 1
        expect_empty_out
        case $stmt in
        *dblink*|*"'transaction_read_only'"*) ;; # the server's own error
        *) expect_err_has "refused" ;;
        esac
        # The writer may write: only askdb's guard stands in the way.
        run sql "$(url writer)" "$stmt"
        expect_rc 1
        expect_empty_out
        case $stmt in
        *dblink*|*"'transaction_read_only'"*|*pg_read_file*|*pg_ls_dir*|*lo_*|*setval*|*"ROLE reader"*|*GRANT*|*EXTENSION*|*pg_reload_conf*|*"SET ROLE"*|*"'role'"*) ;;
        *) grep -q "refused: the statement \(returns no rows\|does more than read\)\|refused: more than one" "$T/err" ||
               fail "the writer's '$stmt' was not stopped by the guard: $(cat "$T/err")" ;;
        esac
        start_llm "$(always "$(fence "$stmt")")"
        run ask --llm-url "$URL" --model test --no-question-check "$READER" "Please change the data"
        expect_rc 1
        # A change refused twice ends the question; a read (refused for
        # what it calls, or failed on the server) is repaired to the end.
        case $stmt in
        *";"*|WITH*DELETE*|SELECT*" INTO "*) expect_err_has "no valid SQL after 2 attempts" ;;
        SELECT*|EXPLAIN*) expect_err_has "no valid SQL after 3 attempts" ;;
        *) expect_err_has "no valid SQL after 2 attempts" ;;
        esac
        expect_empty_out
        stop_llms
        after=$(checksum)
        [ "$before" = "$after" ] || fail "the data changed after: $stmt: $(diff <(echo "$before") <(echo "$after") | head -4)"
    done
    # Settings changed by a statement end with its transaction, and an
    # advisory lock with it: on the same connection (the shell), the
    # session is read-only again and holds no lock, and a write is refused.
    printf '%s\n' ".sql SELECT set_config('default_transaction_read_only', 'off', false) AS s" \
        ".sql SELECT pg_advisory_lock(42) AS l" \
        ".sql SELECT current_setting('default_transaction_read_only') AS ro" \
        ".sql SELECT count(*) AS locks FROM pg_locks WHERE locktype = 'advisory'" \
        ".sql WITH d AS (DELETE FROM orders RETURNING id) SELECT count(*) FROM d" >"$T/in"
    local who
    for who in reader writer; do
        (cd "$T" && exec timeout 30 "$ASKDB" shell --llm-url http://127.0.0.1:9/v1 --model test "$(url $who)") <"$T/in" >"$T/out" 2>"$T/err"
        # pg_advisory_lock() returns void: empty text, "" in CSV.
        pycheck 'assert out.splitlines() == ["s", "off", "l", "\"\"", "ro", "on", "locks", "0"], out'
        expect_err_has "refused: the statement does more than read (cannot execute"
    done
    [ "$before" = "$(checksum)" ] || fail "the data changed through the shell"
}

# The statement after one that ran out of time runs on a new session: a
# late cancel request of the one before reached the next in CI and cut it
# short ("not by askdb: its time limit had not passed"). One that ends on
# its own keeps the session.
a_timed_out_statement_leaves_its_session_behind() {
    printf '%s\n' '.sql SELECT pg_backend_pid() AS pid' '.sql SELECT pg_backend_pid() AS pid' \
        '.sql SELECT pg_sleep(30)' '.sql SELECT pg_backend_pid() AS pid' >"$T/in"
    (cd "$T" && exec timeout 30 "$ASKDB" shell --timeout 300 --llm-url http://127.0.0.1:9/v1 --model test "$READER") <"$T/in" >"$T/out" 2>"$T/err"
    RC=$?
    expect_err_has "300 ms time limit"
    pycheck '
pids = [l for l in out.splitlines() if l.isdigit()]
assert len(pids) == 3, out
assert pids[0] == pids[1] and pids[2] != pids[1], pids
'
}

# A .sql statement's dollar-quoted strings hold ';' and line breaks: the
# shell read a ';' in one at a line's end as the statement's end (PostgreSQL:
# 'unterminated dollar-quoted string'). Only the same tag ends one.
shell_sql_reads_dollar_quoted_strings() {
    printf '%s\n' '.sql SELECT $$a;' 'b$$ AS x, $fn$ c;$$d $fn$ AS y, $Q$e$q$f$Q$ AS z;' \
        '.sql SELECT 2 AS two' >"$T/in"
    (cd "$T" && exec timeout 30 "$ASKDB" shell --llm-url http://127.0.0.1:9/v1 --model test "$READER") <"$T/in" >"$T/out" 2>"$T/err"
    RC=$?
    expect_rc 0
    pycheck 'assert out.splitlines() == ["x,y,z", "\"a;", "b\", c;$$d ,e$q$f", "two", "2"], out'
    [ ! -s "$T/err" ] || fail "stderr: $(head -c 300 "$T/err")"
}

# What the read-only transaction does not stop and the ROLLBACK does not
# take back: a message written to the WAL, a transaction ID, a replication
# slot, an index changed in place, statistics reset, and the functions that
# would run any of them from a string. Refused by name before the server
# sees the statement, however it is written; no transaction ID is taken.
refuses_calls_that_outlive_the_transaction() {
    local stmt next
    local -a stmts=(
        "SELECT pg_logical_emit_message(false, 'askdb', 'hello')"
        "SELECT pg_logical_emit_message(true, 'askdb', 'hello'::bytea)"
        "SELECT * FROM PG_CATALOG.\"pg_logical_emit_message\"(false, 'a', 'b')"
        "SELECT txid_current()"
        "SELECT pg_current_xact_id()"
        "SELECT 1 AS x WHERE Txid_Current /* a comment */ () > 0"
        "SELECT pg_replication_origin_create('askdb')"
        "SELECT pg_replication_origin_session_setup('askdb')"
        "SELECT pg_create_physical_replication_slot('askdb')"
        "SELECT pg_logical_slot_get_changes('askdb', NULL, NULL)"
        "SELECT pg_stat_reset()"
        "SELECT brin_summarize_new_values('orders_pkey')"
        "SELECT query_to_xml('SELECT txid_current()', false, false, '')"
        "SELECT ts_stat('SELECT to_tsvector(''a'')')"
        "SELECT U&\"\\0074xid_current\"()"
    )
    next=$(su_sql "SELECT txid_snapshot_xmax(txid_current_snapshot())")
    for stmt in "${stmts[@]}"; do
        # The writer: only askdb's guard stands in the way.
        run sql "$(url writer)" "$stmt"
        expect_rc 1
        expect_empty_out
        expect_err_has "refused: "
    done
    run sql "$READER" "SELECT pg_logical_emit_message(false, 'askdb', 'hello')"
    expect_rc 1
    expect_err_has "refused: the statement calls pg_logical_emit_message(), which writes the server's log (WAL)"
    run sql "$READER" "SELECT U&\"\\0070g_current_xact_id\"()"
    expect_err_has 'refused: a name written with Unicode escapes (U&"...")'
    start_llm "$(always "$(fence "SELECT txid_current() AS t")")"
    run ask --llm-url "$URL" --model test --no-question-check "$READER" "Which transaction is this?"
    expect_rc 1
    expect_err_has "no valid SQL after 3 attempts"
    expect_empty_out
    [ "$(su_sql "SELECT txid_snapshot_xmax(txid_current_snapshot())")" = "$next" ] ||
        fail "a transaction ID was assigned"
    # Longer names that only start alike read, and are not refused.
    run sql -f csv "$READER" "SELECT txid_current_if_assigned() IS NULL AS none, pg_current_xact_id_if_assigned() IS NULL AS none2"
    expect_rc 0
    expect_out 'none,none2\n1,1\n'
}

# PostgreSQL's read-only transaction does not stop a large object's
# writes: lo_create(0) returned an OID to the reader, lo_put and lowrite
# changed the writer's object until the rollback, and each took a
# transaction ID, as txid_current() does. Each is refused before the
# server sees it; reading a large object still works.
refuses_large_object_writes() {
    local stmt next oid
    oid=$(su_sql "SELECT lo_from_bytea(0, 'orig')")
    su_sql "ALTER LARGE OBJECT $oid OWNER TO writer; GRANT SELECT ON LARGE OBJECT $oid TO reader"
    local -a stmts=(
        "SELECT lo_create(0)"
        "SELECT lo_creat(-1)"
        "SELECT lo_from_bytea(0, 'x')"
        "SELECT lo_put($oid, 0, 'HACK')"
        "SELECT lowrite(lo_open($oid, 131072), 'HACK')"
        "SELECT lo_truncate(lo_open($oid, 131072), 0)"
        "SELECT pg_catalog.\"lo_truncate64\" (lo_open($oid, 131072), 0)"
        "SELECT lo_unlink($oid)"
        "SELECT lo_import('/etc/hostname')"
        "SELECT lo_export($oid, '$TMP/pwned_lo')"
    )
    next=$(su_sql "SELECT txid_snapshot_xmax(txid_current_snapshot())")
    for stmt in "${stmts[@]}"; do
        run sql "$(url writer)" "$stmt"
        expect_rc 1
        expect_empty_out
        expect_err_has "refused: the statement calls lo"
    done
    run sql "$READER" "SELECT lo_create(0) AS l"
    expect_rc 1
    expect_err_has "refused: the statement calls lo_create(), which writes a large object"
    [ "$(su_sql "SELECT txid_snapshot_xmax(txid_current_snapshot())")" = "$next" ] ||
        fail "a transaction ID was assigned"
    [ ! -e "$TMP/pwned_lo" ] || fail "lo_export wrote a file"
    run sql -f csv "$READER" "SELECT convert_from(lo_get($oid), 'UTF8') AS v"
    expect_rc 0
    expect_out 'v\norig\n'
    su_sql "SELECT lo_unlink($oid)" >/dev/null
}

# The guard refuses a call, not a name: a column or a table named like a
# refused function reads as any other, through sql and ask; the call is
# refused however it is written.
denied_names_refuse_only_calls() {
    local stmt next
    next=$(su_sql "SELECT txid_snapshot_xmax(txid_current_snapshot())")
    run sql -f csv "$READER" "SELECT id, txid_current, x.pg_current_xact_id FROM xact_log x WHERE txid_current > 42 ORDER BY id"
    expect_rc 0
    expect_out 'id,txid_current,pg_current_xact_id\n2,43,b\n'
    run sql -f csv "$READER" "SELECT \"txid_current\" AS t, 'txid_current' AS s FROM public.xact_log WHERE id = 1"
    expect_rc 0
    expect_out 't,s\n42,txid_current\n'
    run sql -f csv "$READER" "SELECT word, n FROM ts_stat"
    expect_rc 0
    expect_out 'word,n\ncat,3\n'
    start_llm "$(replies "$(fence "SELECT max(txid_current) AS m FROM xact_log")" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -f csv "$READER" "What is the largest txid_current in the log?"
    expect_rc 0
    expect_out 'm\n43\n'
    expect_requests 1
    local -a stmts=(
        'SELECT "txid_current" (...)'
        'SELECT "txid_current" ()'
        'SELECT pg_catalog.txid_current()'
        'SELECT "pg_catalog"."txid_current"  ()'
        'SELECT txid_current/**/()'
        'SELECT txid_current /* a /* nested */ comment */ ()'
        $'SELECT txid_current -- a comment\n ()'
        $'SELECT txid_current --\r() AS x'
        $'SELECT txid_current -- a comment\r ()'
        $'SELECT pg_logical_emit_message --\r(false, \'p\', \'m\')'
        'SELECT txid_current /* a comment never ended'
        'SELECT txid_current FROM xact_log WHERE txid_current() > 0'
        "SELECT * FROM ts_stat('SELECT to_tsvector(''a'')')"
    )
    for stmt in "${stmts[@]}"; do
        run sql "$(url writer)" "$stmt"
        expect_rc 1
        expect_empty_out
        expect_err_has "refused: the statement calls "
    done
    [ "$(su_sql "SELECT txid_snapshot_xmax(txid_current_snapshot())")" = "$next" ] ||
        fail "a transaction ID was assigned"
}

sqlite_corpus_changes_nothing() {
    # The hardening corpus of the SQLite guard (tests/security/corpus.jsonl)
    # as the role that may write: most of it is SQLite's own syntax, which
    # PostgreSQL rejects; what it accepts must be refused or fail, and the
    # data must not change. "any" entries (time and memory bombs) may
    # answer, within the time limit.
    local before after exp stmt n=0
    before=$(checksum)
    "$PY" -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    sys.stdout.write(d["expect"] + "\t" + d["sql"].replace("\x00", "") + "\x00")
' "$ROOT/tests/security/corpus.jsonl" >"$T/corpus"
    while IFS=$'\t' read -r -d '' exp stmt; do
        n=$((n + 1))
        run sql --timeout 500 "$(url writer)" "$stmt"
        if [ "$exp" != any ] && [ "$RC" = 0 ]; then
            # PostgreSQL's EXPLAIN without ANALYZE shows the plan of a
            # write without running it: an answer, and nothing written.
            case $stmt in
            EXPLAIN\ *ANALYZE*|EXPLAIN\ *analyze*) fail "answered: $stmt" ;;
            EXPLAIN\ *) expect_out_has "QUERY PLAN" ;;
            *) fail "answered: $stmt" ;;
            esac
        fi
        [ "$ELAPSED_MS" -lt 5000 ] || fail "took $ELAPSED_MS ms: $stmt"
        if [ $((n % 40)) = 0 ]; then
            after=$(checksum)
            [ "$before" = "$after" ] || fail "the data changed by statement $n or before: $stmt"
        fi
    done <"$T/corpus"
    [ "$n" -gt 250 ] || fail "only $n statements read from the corpus"
    [ "$before" = "$(checksum)" ] || fail "the data changed"
}

superuser_is_refused_unless_allowed() {
    run sql "$(url postgres)" "SELECT 1 AS one"
    expect_rc 3
    expect_err_has 'role "postgres" is a superuser'
    expect_err_has "ASKDB_ALLOW_SUPERUSER=1"
    expect_empty_out
    run sql "$(url boss)" "SELECT 1 AS one"
    expect_rc 3
    expect_err_has "member of a superuser role"
    start_llm "$(always "$(fence "SELECT 1 AS one")")"
    run ask --llm-url "$URL" --model test "$(url postgres)" "One?"
    expect_rc 3
    expect_requests 0
    ASKDB_ALLOW_SUPERUSER=1 run sql -f csv "$(url postgres)" "SELECT 1 AS one"
    expect_rc 0
    expect_out 'one\n1\n'
    expect_err_has "warning: role \"postgres\""
    expect_err_has "superuser"
}

writer_and_file_reader_are_warned() {
    run sql -f csv "$(url writer)" "SELECT count(*) AS n FROM orders"
    expect_rc 0
    expect_out 'n\n250\n'
    expect_err_has 'askdb: warning: role "writer"'
    expect_err_has "can write"
    [ "$(grep -c warning "$T/err")" = 1 ] || fail "warned more than once: $(cat "$T/err")"
    run sql -f csv "$(url filer)" "SELECT 1 AS x"
    expect_rc 0
    expect_err_has "pg_read_server_files"
    # a table it can write in a schema off its search path counts too
    run sql -f csv "$(url clerk)" "SELECT count(*) AS n FROM sales.orders"
    expect_rc 0
    expect_out 'n\n4\n'
    expect_err_has 'askdb: warning: role "clerk"'
    expect_err_has "can write"
    run sql -f csv "$READER" "SELECT 1 AS x"
    expect_rc 0
    [ ! -s "$T/err" ] || fail "the reader got: $(cat "$T/err")"
}

learned_pairs_of_a_url_with_a_password_are_listed_and_forgotten() {
    # askdb learn keys a server's pairs by its URL without the password;
    # --list and --forget, given the same URL with its password, find
    # them (before, they looked for the URL as typed and found nothing).
    local url="postgresql://bob:$BOB_PW@127.0.0.1:$PORT/shop"
    run learn "$url" --memory "$T/m.sqlite" --question "How many customers?" --sql "SELECT count(*) FROM customers"
    expect_rc 0
    expect_out_has "stored (1 row): How many customers?"
    run learn "$url" --memory "$T/m.sqlite" --list
    expect_rc 0
    expect_out_has '{"question":"How many customers?","sql":"SELECT count(*) FROM customers"'
    ! grep -qF -- "$BOB_PW" "$T/m.sqlite" || fail "the password is in the store"
    run learn "$url" --memory "$T/m.sqlite" --forget "how many  customers?"
    expect_rc 0
    expect_out_has "forgot: how many  customers?"
    run learn "$url" --memory "$T/m.sqlite" --list
    expect_rc 0
    [ ! -s "$T/out" ] || fail "still listed: $(cat "$T/out")"
}

passwords_work_and_never_show() {
    run sql -f csv "postgresql://bob:$BOB_PW@127.0.0.1:$PORT/shop" "SELECT count(*) AS n FROM customers"
    expect_rc 0
    expect_out 'n\n60\n'
    # ~/.pgpass, as libpq reads it
    printf '127.0.0.1:%s:shop:bob:%s\n' "$PORT" "$BOB_PW" >"$HOME/.pgpass"
    chmod 600 "$HOME/.pgpass"
    run sql -f csv "postgresql://bob@127.0.0.1:$PORT/shop" "SELECT count(*) AS n FROM customers"
    rm -f "$HOME/.pgpass"
    expect_rc 0
    expect_out 'n\n60\n'
    # PGPASSWORD, and password= in the URL
    PGPASSWORD=$BOB_PW run sql -f csv "postgresql://bob@127.0.0.1:$PORT/shop" "SELECT 1 AS x"
    expect_rc 0
    run sql -f csv "postgresql://bob@127.0.0.1:$PORT/shop?password=$BOB_PW" "SELECT 1 AS x"
    expect_rc 0
    # A wrong one: exit 3, what failed and what to do, no password.
    run sql "postgresql://bob:Wr0ng-pw-x@127.0.0.1:$PORT/shop" "SELECT 1"
    expect_rc 3
    expect_err_has "password authentication failed for user \"bob\""
    expect_err_has "check the user name and the password"
    expect_err_has "postgresql://bob@127.0.0.1:$PORT/shop"
    expect_err_lacks "Wr0ng-pw-x"
    # None at all
    run sql "postgresql://bob@127.0.0.1:$PORT/shop" "SELECT 1"
    expect_rc 3
    expect_err_has "no password supplied"
    # A URL libpq cannot read quotes its user part: the password is masked.
    run sql "postgresql://bob:pw%zz-secret@127.0.0.1:$PORT/shop" "SELECT 1"
    expect_rc 3
    expect_err_has "check the URL's form"
    expect_err_lacks "zz-secret"
    # A password in a SQL error (the server's text) is the user's own.
    run schema "postgresql://bob:$BOB_PW@127.0.0.1:$PORT/shop?sslmode=disable"
    expect_rc 0
    expect_err_lacks "$BOB_PW"
    # The shell's banner names the database as the messages do (it showed
    # the URL as typed, password and all, on the terminal).
    "$PY" - "$ASKDB" "postgresql://bob:$BOB_PW@127.0.0.1:$PORT/shop" >"$T/tty" 2>&1 <<'PYEOF'
import os, pty, select, signal, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "shell", "--llm-url", "http://127.0.0.1:9/v1",
                           "--model", "test", sys.argv[2]])
buf, end, sent = b"", time.time() + 20, False
while time.time() < end:
    if b"askdb> " in buf and not sent:
        time.sleep(0.2)  # the line editor reads: Ctrl-D leaves
        os.write(fd, b"\x04")
        sent = True
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            d = os.read(fd, 65536)
        except OSError:
            d = b""
        if not d:
            break
        buf += d
if time.time() >= end:
    os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
sys.stdout.buffer.write(buf)
PYEOF
    grep -qaF "asking postgresql://bob@127.0.0.1:$PORT/shop." "$T/tty" || fail "banner: $(tr -d '\r' <"$T/tty" | head -c 300)"
    ! grep -qaF -- "$BOB_PW" "$T/tty" || fail "the password was on the terminal"
}

# An '@' (or a '#') in the password needs no encoding: the user part ends
# at the last '@' before the path, for askdb's label as for the MariaDB
# driver, and libpq is given the others encoded (it ends the user part at
# the first '@', and quoted the rest of the password as a host name).
passwords_with_at_signs_work_and_never_show() {
    run sql -f csv "postgresql://carol:$CAROL_URL_PW@127.0.0.1:$PORT/shop" "SELECT current_user AS u"
    expect_rc 0
    expect_out 'u\ncarol\n'
    run sql "postgresql://carol:hunter@s3cr3t-carol@127.0.0.1:$PORT/shop" "SELECT 1"
    expect_rc 3
    expect_err_has "cannot connect to 'postgresql://carol@127.0.0.1:$PORT/shop'"
    expect_err_has "password authentication failed for user \"carol\""
    expect_err_has "check the user name and the password"
    expect_err_lacks "s3cr3t"
    expect_err_lacks "hunter"
    run sql "postgresql://carol:p@ss:w%2Frd%3F#&%zz@s3cr3t-carol@127.0.0.1:$PORT/shop" "SELECT 1"
    expect_rc 3
    expect_err_has "check the URL's form"
    expect_err_lacks "s3cr3t"
    expect_err_lacks "w/rd"
    expect_err_lacks "w%2Frd"
    # A byte that is not UTF-8 in the password: scrubbed before libpq's
    # message is made valid UTF-8 (after, it no longer matched).
    run sql "postgresql://carol:s3cr"$'\xe9'"tpw%zz@127.0.0.1:$PORT/shop" "SELECT 1"
    expect_rc 3
    expect_err_has "check the URL's form"
    expect_err_lacks "s3cr"
    expect_err_lacks "tpw"
}

# A password with an unencoded '/' or '?' cannot be told from a database
# or parameter holding '@' (postgresql://carol:ab/cd?ef@host/db reads as
# host carol, database "cd", parameter "ef@host/db"): no message quotes
# libpq's words of it, and each says to percent-encode (libpq quoted
# "ef@127.0.0.1:PORT/shop" as a query parameter, a piece of the password).
ambiguous_url_never_shows_part_of_the_password() {
    local u pw c piece
    start_llm "$(always "$(fence "SELECT 1 AS one")")"
    for pw in "9311/Sl4shPw" "9312?Qm4rkPw" "Ab:9313/x7Yz" "Kd7w/9314?sslmode=Qz8w" "w@9315/Tk5v"; do
        u="postgresql://carol:$pw@127.0.0.1:$PORT/shop"
        for c in sql schema ask; do
            case $c in
            sql) run sql -v "$u" "SELECT 1" ;;
            schema) run schema -v "$u" ;;
            ask) run ask -v --llm-url "$URL" --model test --no-question-check "$u" "One?" ;;
            esac
            [ "$RC" = 3 ] || fail "exit $RC for $c $u"
            # Every piece of the password between its '/', '?', ':', '@', '='.
            for piece in $(printf '%s\n' "$pw" | tr '/?:@=' '     '); do
                [ ${#piece} -ge 4 ] || continue
                grep -qF -- "$piece" "$T/out" "$T/err" && fail "'$piece' of the password printed by $c $u: $(cat "$T/err")"
            done
            expect_err_has "cannot connect to 'postgresql://carol:xxx@127.0.0.1:$PORT/shop'"
            expect_err_has "percent-encode the password's '/', '?', '@' and ':'"
        done
    done
    # The same password encoded works.
    run sql -f csv "postgresql://carol:$CAROL_URL_PW@127.0.0.1:$PORT/shop" "SELECT 1 AS one"
    expect_rc 0
}

# The password is masked only where libpq can quote it (a token of the
# URL it could not read), never in the words around: passwords that are
# words of the message leave it whole, advice included.
wrong_passwords_leave_the_message_whole() {
    local pw
    for pw in pw ss connection password authentication server failed FATAL; do
        run sql "postgresql://bob:$pw@127.0.0.1:$PORT/shop" "SELECT 1"
        expect_rc 3
        pycheck '
want = ("askdb: cannot connect to \x27postgresql://bob@127.0.0.1:%s/shop\x27: "
        "connection to server at \"127.0.0.1\", port %s failed: FATAL:  "
        "password authentication failed for user \"bob\" (check the user "
        "name and the password (in the URL, PGPASSWORD or ~/.pgpass))\n"
        % (args[0], args[0]))
assert err == want, (args[1], err)
' "$PORT" "$pw"
    done
    run sql "postgresql://bob:connection%zz@127.0.0.1:$PORT/shop" "SELECT 1"
    expect_rc 3
    expect_err_has 'invalid percent-encoded token: "xxxxxxxxxxxxx"'
    run sql "postgresql://127.0.0.1:$PORT/shop?user=bob&password=connection%zz" "SELECT 1"
    expect_rc 3
    expect_err_has 'invalid percent-encoded token: "xxxxxxxxxxxxx"'
    expect_err_has "password=xxx"
}

connection_faults_exit_3_with_a_fix() {
    local port
    port=$(free_port)
    run sql "postgresql://reader@127.0.0.1:$port/shop" "SELECT 1"
    expect_rc 3
    expect_err_has "Connection refused"
    expect_err_has "check the host and port"
    expect_faster 5000
    run sql "postgresql://reader@127.0.0.1:$PORT/shop?sslmode=require" "SELECT 1"
    expect_rc 3
    expect_err_has "server does not support SSL, but SSL was required"
    expect_err_has "enable ssl on the server"
    run sql "postgresql://reader@127.0.0.1:$PORT/nosuchdb" "SELECT 1"
    expect_rc 3
    expect_err_has 'database "nosuchdb" does not exist'
    run schema "postgresql://nobody@127.0.0.1:$PORT/shop"
    expect_rc 3
    expect_err_has 'role "nobody" does not exist'
    # libpq's keyword/value string is no file: askdb says to give a URL.
    run sql "host=127.0.0.1 port=$PORT dbname=shop user=bob password=$BOB_PW" "SELECT 1"
    expect_rc 3
    expect_err_has "it looks like a PostgreSQL connection string: give askdb a postgresql:// URL"
    expect_err_has "password=xxx"
    # Both schemes, any case, and the unix socket through host=.
    run sql -f csv "postgres://reader@127.0.0.1:$PORT/shop" "SELECT 2 AS x"
    expect_rc 0
    expect_out 'x\n2\n'
    run sql -f csv "PostgreSQL://reader@/shop?host=$SOCK&port=$PORT" "SELECT 3 AS x"
    expect_rc 0
    expect_out 'x\n3\n'
}

# A cancel askdb did not send before the time limit (another session's
# pg_cancel_backend(), or the statement's own) is said so, class database:
# the agent ends the question instead of running it again.
foreign_cancel_is_not_a_timeout() {
    local pid i
    run sql "$READER" "SELECT pg_cancel_backend(pg_backend_pid())"
    expect_rc 1
    expect_empty_out
    expect_err_has "the statement was cancelled by another session (an administrator?), not by askdb: its 10000 ms time limit had not passed"
    expect_err_lacks "--timeout"
    (cd "$T" && exec timeout 30 "$ASKDB" sql --timeout 20000 "$READER" "SELECT pg_sleep(14) AS slept") </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    for i in $(seq 1 100); do
        [ "$(su_sql "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(14)%' AND state = 'active' AND pid <> pg_backend_pid()")" = 1 ] && break
        sleep 0.05
    done
    su_sql "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(14)%' AND pid <> pg_backend_pid()" >/dev/null
    wait "$pid"
    RC=$?
    cat "$T/out" "$T/err" >>"$TMP/all_output"
    expect_rc 1
    expect_err_has "cancelled by another session (an administrator?)"
    start_llm "$(always "$(fence "SELECT pg_cancel_backend(pg_backend_pid()) AS c")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -f json "$READER" "Cancel yourself?"
    expect_rc 1
    expect_requests 1
    pycheck '
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["database"], j["attempts"]
assert "cancelled by another session" in j["error"], j["error"]
'
}

# A statement whose server waits on a foreign server that hangs (its
# session stopped) outlives askdb's cancel: the message says that the
# time limit ran out while the server waited on a foreign server and
# that askdb ended the session, class database (one attempt), not a lost
# connection; the session ends on the server once the wait does.
foreign_server_that_hangs_is_said_so() {
    local pid rpid i
    stuck_run() {
        (cd "$T" && exec timeout 30 "$ASKDB" "$@") </dev/null >"$T/out" 2>"$T/err" &
        pid=$!
        rpid=
        for i in $(seq 1 100); do
            rpid=$(su_sql "SELECT pid FROM pg_stat_activity WHERE usename = 'farside' AND state = 'active'")
            [ -n "$rpid" ] && break
            sleep 0.05
        done
        [ -n "$rpid" ] && as_srv kill -STOP "$rpid"
        wait "$pid"
        RC=$?
        [ -n "$rpid" ] && as_srv kill -CONT "$rpid"
        cat "$T/out" "$T/err" >>"$TMP/all_output"
        [ -n "$rpid" ] || fail "the foreign server's session did not start: $(cat "$T/err")"
    }
    stuck_run sql --timeout 1000 "$READER" "SELECT x FROM far_slow"
    expect_rc 1
    expect_empty_out
    expect_err_has "query interrupted: the 1000 ms time limit (--timeout) ran out while the server waited on a foreign server or an extension (wait event Extension: postgres_fdw, dblink), and the server did not end the statement within 3000 ms of askdb's cancel; askdb ended the session (pg_terminate_backend)"
    expect_err_lacks "lost the connection"
    local left
    left=$(still_running "far_slow")
    [ "$left" = 0 ] || fail "the statement still runs on the server ($left)"
    start_llm "$(always "$(fence "SELECT x FROM far_slow")")"
    stuck_run ask --llm-url "$URL" --model test --timeout 1000 --no-question-check --candidates 1 -f json "$READER" "Anything far away?"
    expect_rc 1
    expect_requests 1
    pycheck '
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["database"], j["attempts"]
assert "waited on a foreign server" in j["error"], j["error"]
'
}

# stuck_session()'s look at a session that outlived askdb's cancel sends
# the statement's text along (the session is known by it), and went
# through libpq's blocking mode, which waited for room in the socket
# without a limit, the look's 3 s and a Ctrl-C alike: a statement longer
# than the sockets hold, on a server that stops reading the look's
# connection (here: the relay goes deaf as the look's query comes), left
# askdb there for good. The look's connection is nonblocking now and
# keeps to its 3 s: the statement, on a foreign server that hangs, is
# given up as when no look can be made (the time limit, 3 s for the
# cancel, 3 s for the look).
foreign_server_that_hangs_a_long_statement_is_given_up() {
    local pid rpid t0 url
    start_relay --deaf-on 'pg_terminate_backend'
    url="postgresql://reader@127.0.0.1:$RELAY_PORT/shop"
    shell_on "$url" 1000
    echo "$pid" >>"$T/.pids"
    t0=$(now_ms)
    "$PY" -c 'import sys; sys.stdout.write(".sql SELECT x FROM far_slow WHERE length(\x27" + "x" * (16 << 20) + "\x27) > 0\n")' >&7
    rpid=
    for _ in $(seq 1 200); do
        rpid=$(su_sql "SELECT pid FROM pg_stat_activity WHERE usename = 'farside' AND state = 'active'")
        [ -n "$rpid" ] && break
        sleep 0.05
    done
    [ -n "$rpid" ] || fail "the foreign server's session did not start: $(head -c 300 "$T/err")"
    as_srv kill -STOP "$rpid"
    wait_err "did not end the statement" 400
    ELAPSED_MS=$(($(now_ms) - t0))
    as_srv kill -CONT "$rpid"
    end_shell "a 16 MB statement on a foreign server that hangs, its look deaf, --timeout 1000"
    su_sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename IN ('reader', 'farside')" >/dev/null
    [ -e "$T/relay.port.quiet" ] || fail "askdb made no look at the session: $(head -c 300 "$T/err")"
    expect_err_has "the server did not end the statement within 3000 ms of a cancel request; the connection to '$url' was closed"
    expect_faster 12000
    kill "$RELAY_PID"
}

ctrl_c_cancels_the_statement_on_the_server() {
    # Ctrl-C while the statement runs: askdb ends at once (130) and the
    # server stops the statement too (PQcancel), not at its time limit.
    start_llm "$(always "$(fence "SELECT pg_sleep(25) AS slept")")"
    (cd "$T" && exec env --default-signal=INT "$ASKDB" ask --llm-url "$URL" \
        --model test --timeout 20000 --no-question-check "$READER" "Sleep?") \
        </dev/null >"$T/out" 2>"$T/err" &
    local pid=$! i left
    for i in $(seq 1 200); do
        [ "$(su_sql "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(25)%' AND state = 'active' AND pid <> pg_backend_pid()")" = 1 ] && break
        sleep 0.05
    done
    interrupt
    expect_rc 130
    expect_faster 2000
    expect_err_has "cancelled"
    expect_empty_out
    left=$(still_running "pg_sleep(25)")
    [ "$left" = 0 ] || fail "pg_sleep(25) still runs on the server"
}

# slow_db NAME ROWS SECONDS [SQL]: a database NAME of its own with a table
# slow of ROWS rows that the reader reads SECONDS a row (a row-level
# security policy that sleeps), and SQL run in it after.
slow_db() {
    su_sql "CREATE DATABASE $1" postgres || fail "cannot create the database $1"
    su_sql "CREATE TABLE slow (id int, name text);
INSERT INTO slow SELECT g, 'name ' || g FROM generate_series(1, $2) g;
ALTER TABLE slow ENABLE ROW LEVEL SECURITY;
CREATE POLICY sleepy ON slow FOR SELECT USING (pg_sleep($3) IS NOT NULL);
GRANT SELECT ON slow TO reader;
${4:-}" "$1" || fail "cannot make the slow table in $1"
}

# slow_reader_pid NAME PAUSE: the pid of the reader's session while it
# reads slow in NAME, looked for 200 times PAUSE seconds apart; "" when
# none was seen.
slow_reader_pid() {
    local i pid=""
    for i in $(seq 1 200); do
        pid=$(su_sql "SELECT pid FROM pg_stat_activity WHERE datname = '$1' AND usename = 'reader' AND state = 'active' AND query LIKE '%slow%'")
        [ -n "$pid" ] && break
        sleep "$2"
    done
    echo "$pid"
}

# expect_one_pid_but PID: stdout has one line of digits (a .sql SELECT
# pg_backend_pid()), and it is not PID: the statement ran on a new
# session.
expect_one_pid_but() {
    pycheck '
pids = [l.strip() for l in out.splitlines() if l.strip().isdigit()]
assert len(pids) == 1, (out, err)
assert pids[0] != args[0], (pids, args[0])
' "$1"
}

ctrl_c_during_the_schema_read_is_cancelled() {
    # A table the reader reads slowly (a row-level security policy that
    # sleeps 0.3 s a row), in a database of its own: Ctrl-C while its
    # samples are read ends the schema read as cancelled (130, nothing on
    # stdout), not with a schema whose samples the cancel took away.
    slow_db slowschema 30 0.3
    (cd "$T" && exec env --default-signal=INT "$ASKDB" schema --timeout 20000 \
        "postgresql://reader@127.0.0.1:$PORT/slowschema") </dev/null >"$T/out" 2>"$T/err" &
    local pid=$! i
    for i in $(seq 1 200); do
        [ "$(su_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = 'slowschema' AND usename = 'reader' AND state = 'active' AND query LIKE '%slow%'")" = 1 ] && break
        sleep 0.05
    done
    sleep 0.3
    interrupt
    su_sql "DROP DATABASE slowschema WITH (FORCE)" postgres >/dev/null
    expect_rc 130
    expect_faster 3000
    expect_err_has "cancelled"
    expect_empty_out
}

# Ctrl-C in the shell while a question reads the schema: the session
# whose sample was cancelled is given up, as a cancelled statement's is,
# and the next line runs on a new one. It was kept, the ROLLBACK sent
# into it with the cancel's stop still raised.
cancelled_schema_read_leaves_its_session_behind() {
    slow_db slowschema2 30 0.3
    mkfifo "$T/shin"
    (cd "$T" && exec env --default-signal=INT timeout 60 "$ASKDB" shell --timeout 20000 \
        --llm-url http://127.0.0.1:9/v1 --model test \
        "postgresql://reader@127.0.0.1:$PORT/slowschema2") <"$T/shin" >"$T/out" 2>"$T/err" &
    local pid=$! warm
    exec 7>"$T/shin"
    printf '%s\n' 'How many rows are slow?' >&7
    warm=$(slow_reader_pid slowschema2 0.05)
    [ -n "$warm" ] || { exec 7>&-; wait "$pid"; fail "the schema read never reached the slow table: $(cat "$T/err")"; return; }
    sleep 0.3
    kill -INT "$pid"
    sleep 0.5
    printf '%s\n' '.sql SELECT pg_backend_pid() AS pid' >&7
    exec 7>&-
    wait "$pid"
    RC=$?
    su_sql "DROP DATABASE slowschema2 WITH (FORCE)" postgres >/dev/null
    expect_err_has "cancelled"
    expect_one_pid_but "$warm"
}

# A sample that runs out of time during a schema read: the read goes on
# on a new session, as a question's next statement does after a timeout
# (a cancel request of askdb's own for it may land on the session's next
# statement). The session kept before: the statement after the read ran
# on the backend whose sample had timed out.
a_timed_out_sample_leaves_its_session_behind() {
    slow_db slowsample 5 1 "CREATE TABLE zz_after (id int, name text);
INSERT INTO zz_after VALUES (1, 'after');
GRANT SELECT ON zz_after TO reader"
    mkfifo "$T/shin"
    (cd "$T" && exec timeout 60 "$ASKDB" shell --timeout 500 \
        --llm-url http://127.0.0.1:9/v1 --model test \
        "postgresql://reader@127.0.0.1:$PORT/slowsample") <"$T/shin" >"$T/out" 2>"$T/err" &
    local pid=$! slowpid
    exec 7>"$T/shin"
    printf '%s\n' 'How many rows are slow?' >&7
    slowpid=$(slow_reader_pid slowsample 0.02)
    printf '%s\n' '.sql SELECT pg_backend_pid() AS pid' >&7
    exec 7>&-
    wait "$pid"
    RC=$?
    su_sql "DROP DATABASE slowsample WITH (FORCE)" postgres >/dev/null
    [ -n "$slowpid" ] || { fail "no sample of the slow table was seen: $(cat "$T/err")"; return; }
    expect_one_pid_but "$slowpid"
}

lock_held_by_another_session_ends_by_lock_timeout() {
    psql -X -q -d "$(su_url)" -c "BEGIN; LOCK TABLE orders IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(15); COMMIT" >/dev/null 2>&1 &
    local holder=$! i
    for i in $(seq 1 100); do
        [ "$(su_sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'orders' AND l.mode = 'AccessExclusiveLock' AND l.granted")" = 1 ] && break
        sleep 0.05
    done
    run sql --timeout 1000 "$READER" "SELECT count(*) FROM orders"
    local rc=$RC
    # The schema does not wait for the locked table either.
    run schema --timeout 1000 "$READER"
    local src=$RC selapsed=$ELAPSED_MS
    # Asked through the agent: the lock is the database's, not the SQL's:
    # one attempt, class "database", no repair asked of the model.
    start_llm "$(always "$(fence "SELECT count(*) AS n FROM orders")")"
    run ask --llm-url "$URL" --model test --timeout 1000 --no-question-check --candidates 1 -f json "$READER" "How many orders?"
    [ "$RC" = 1 ] || fail "ask: exit $RC while the table was locked, expected 1"
    expect_requests 1
    pycheck '
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["database"], j["attempts"]
assert "lock another session holds" in j["error"], j["error"]
'
    # And through MCP: the lock named, no advice to narrow the query.
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_sql","arguments":{"sql":"SELECT count(*) FROM orders"}}}' >"$T/mcp_in"
    (cd "$T" && exec timeout 30 "$ASKDB" mcp --timeout 1000 --llm-url http://127.0.0.1:9/v1 --model test "$READER") <"$T/mcp_in" >"$T/out" 2>"$T/err"
    pycheck '
r = [json.loads(l) for l in out.splitlines() if l.strip()][-1]["result"]
t = r["content"][0]["text"]
assert r["isError"] is True, r
assert "lock another session holds" in t and "narrow the query" not in t, t
'
    kill "$holder" 2>/dev/null
    su_sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%LOCK TABLE orders%' AND pid <> pg_backend_pid()" >/dev/null
    wait "$holder" 2>/dev/null
    [ "$src" = 0 ] || fail "schema failed while a table was locked (exit $src)"
    [ "$selapsed" -lt 5000 ] || fail "schema took $selapsed ms while a table was locked"
    RC=$rc
    run sql --timeout 1000 "$READER" "SELECT count(*) FROM orders"
    expect_rc 0
    RC=$rc
    [ "$RC" = 1 ] || fail "exit $RC while the table was locked, expected 1"
    grep -q "lock another session holds" "$T/.trace" || fail "no lock message: $(grep stderr "$T/.trace" | head -3)"
}

# A session the server ended while the shell sat idle (idle_session_timeout,
# pg_terminate_backend, a pooler) is made again before the next statement,
# one typed or one the model wrote: nothing had run on it.
idle_session_ended_by_the_server_reconnects() {
    local pid
    terminate_reader() {
        su_sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'reader'" >/dev/null
        for _ in $(seq 1 50); do
            [ "$(su_sql "SELECT count(*) FROM pg_stat_activity WHERE usename = 'reader'")" = 0 ] && return 0
            sleep 0.05
        done
        fail "the sessions of reader were not ended"
    }
    start_llm "$(always "$(fence "SELECT count(*) AS n FROM orders")")"
    mkfifo "$T/fifo"
    (cd "$T" && exec timeout 30 "$ASKDB" shell --llm-url "$URL" --model test --no-question-check --candidates 1 "$READER") <"$T/fifo" >"$T/out" 2>"$T/err" &
    pid=$!
    exec 7>"$T/fifo"
    echo ".sql SELECT 41 AS a" >&7
    wait_in "$T/out" 41 100
    terminate_reader
    echo ".sql SELECT 42 AS b" >&7
    wait_in "$T/out" 42 100
    terminate_reader
    echo "How many orders are there?" >&7
    exec 7>&-
    wait "$pid"
    RC=$?
    cat "$T/out" "$T/err" >>"$TMP/all_output"
    expect_rc 0
    pycheck '
lines = out.splitlines()
assert lines[:4] == ["a", "41", "b", "42"], (out, err)
assert len(reqs) == 1, len(reqs)
assert "lost the connection" not in err, err
'
}

server_killed_mid_query_is_reported() {
    (cd "$T" && exec timeout 30 "$ASKDB" sql --timeout 20000 "$READER" "SELECT pg_sleep(15)") </dev/null >"$T/out" 2>"$T/err" &
    local pid=$! i t0
    for i in $(seq 1 100); do
        [ "$(su_sql "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(15)%' AND pid <> pg_backend_pid()")" = 1 ] && break
        sleep 0.05
    done
    t0=$(now_ms)
    pg_ctl_ -m immediate -w stop >/dev/null || fail "pg_ctl stop failed"
    wait "$pid"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
    cat "$T/out" "$T/err" >>"$TMP/all_output"
    expect_rc 1
    expect_empty_out
    expect_err_has "lost the connection to 'postgresql://reader@127.0.0.1:$PORT/shop'"
    expect_err_has "check that the server runs"
    expect_faster 5000
    # While it is down: exit 3, refused.
    run sql "$READER" "SELECT 1"
    expect_rc 3
    expect_err_has "Connection refused"
    pg_ctl_ -l "$TMP/pg/log" -w -t 30 start >/dev/null || fail "restart failed"
    run sql -f csv "$READER" "SELECT count(*) AS n FROM categories"
    expect_rc 0
    expect_out 'n\n10\n'

    # A long-lived handle (the shell; askdb serve) whose server restarted
    # while it sat idle connects again by itself.
    mkfifo "$T/fifo"
    (cd "$T" && exec timeout 30 "$ASKDB" shell --llm-url http://127.0.0.1:9/v1 --model test "$READER") <"$T/fifo" >"$T/out" 2>"$T/err" &
    pid=$!
    exec 7>"$T/fifo"
    echo ".sql SELECT 41 AS a" >&7
    for i in $(seq 1 100); do
        grep -q 41 "$T/out" && break
        sleep 0.05
    done
    pg_ctl_ -m fast -w stop >/dev/null && pg_ctl_ -l "$TMP/pg/log" -w -t 30 start >/dev/null || fail "restart failed"
    echo ".sql SELECT 42 AS b" >&7
    exec 7>&-
    wait "$pid"
    cat "$T/out" "$T/err" >>"$TMP/all_output"
    pycheck 'assert out.splitlines() == ["a", "41", "b", "42"], (out, err)'
}

# relay_sql SECONDS BREAK LIMIT: `askdb sql --timeout 1000` of
# pg_sleep(SECONDS) through a new relay, which BREAK (relay_silent or
# relay_deaf) breaks once the statement runs; timeout(1) stops askdb after
# LIMIT s. Sets RC, ELAPSED_MS (from askdb's start) and url; the relay is
# left for the caller.
relay_sql() {
    local pid t0
    start_relay
    url="postgresql://reader@127.0.0.1:$RELAY_PORT/shop"
    t0=$(now_ms)
    (cd "$T" && exec timeout "$3" "$ASKDB" sql --timeout 1000 "$url" "SELECT pg_sleep($1)") </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    wait_active "pg_sleep($1)"
    "$2"
    wait "$pid"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
    cat "$T/out" "$T/err" >>"$TMP/all_output"
}

# relay_ctrl_c SECONDS BREAK LIMIT: `askdb ask` whose model answers
# pg_sleep(SECONDS), through a new relay that BREAK breaks once the
# statement runs, then Ctrl-C. Sets RC and ELAPSED_MS (from the Ctrl-C).
relay_ctrl_c() {
    local pid
    start_relay
    url="postgresql://reader@127.0.0.1:$RELAY_PORT/shop"
    start_llm "$(always "$(fence "SELECT pg_sleep($1) AS slept")")"
    (cd "$T" && exec timeout --foreground "$3" env --default-signal=INT "$ASKDB" ask --llm-url "$URL" \
        --model test --timeout 20000 --no-question-check "$url" "Sleep?") </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    wait_active "pg_sleep($1)"
    "$2"
    interrupt
    cat "$T/out" "$T/err" >>"$TMP/all_output"
}

# post_sql PORT N SQL [CUT]: N requests of SQL at once to askdb serve's
# /api/sql (database shop); each must answer 200 with 5 rows, cut short
# (--max-rows 5) unless CUT is 0. Prints how long they took in all, in
# ms, or what went wrong.
post_sql() {
    "$PY" - "$@" <<'PY'
import json, sys, threading, time, urllib.request
port, n, sql = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cut = sys.argv[4:] != ["0"]
bad = []
def one():
    req = urllib.request.Request(
        "http://127.0.0.1:%s/api/sql" % port,
        json.dumps({"database": "shop", "sql": sql}).encode(),
        {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            doc = json.load(r)
        if len(doc["rows"]) != 5 or bool(doc.get("truncated")) != cut:
            bad.append(json.dumps(doc)[:300])
    except Exception as e:
        bad.append("%s: %s" % (type(e).__name__, e))
t0 = time.monotonic()
ts = [threading.Thread(target=one) for _ in range(n)]
for t in ts:
    t.start()
for t in ts:
    t.join()
if bad:
    print("%d of %d failed: %s" % (len(bad), n, bad[0]))
    sys.exit(1)
print(int((time.monotonic() - t0) * 1000))
PY
}

# start_serve ARG...: askdb serve on a free loopback port with a model
# that is never asked, its output in $T/out and $T/err; sets pid and port
# (the caller's locals).
start_serve() {
    (cd "$T" && exec "$ASKDB" serve --listen 127.0.0.1:0 --llm-url http://127.0.0.1:9/v1 \
        --model test --access-log off "$@") </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    echo "$pid" >>"$T/.pids"
    for _ in $(seq 1 200); do
        grep -q 'listening on' "$T/err" && break
        sleep 0.05
    done
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$T/err" | sed 's/.*://')
    [ -n "$port" ] || fail "askdb serve did not start: $(head -c 300 "$T/err")"
}

# A proxy before the server that takes cancel requests and forwards none
# leaves each unanswered, and PQcancel() waits for an answer without a
# limit: the thread that sent it stays parked for good, with its socket
# (the statement itself gives up on it after 3 s). askdb serve opens a
# session per request, so each statement cut short through such a proxy
# (at --max-rows here) left one thread more in the server's process: 48
# statements, 48 threads. At most 32 requests are left unanswered now;
# past them none is sent, and the statement's session is given up at once
# (its rows kept) rather than waited on.
serve_bounds_the_cancel_requests_left_unanswered() {
    local pid port base tasks held ms round
    start_relay --hold-cancels
    url="postgresql://reader@127.0.0.1:$RELAY_PORT/shop"
    start_serve --max-rows 5 --per-client 16 --db "shop=$url"
    ms=$(post_sql "$port" 1 "SELECT g FROM generate_series(1, 5) g" 0) || fail "$ms"
    sleep 0.5
    base=$(ls "/proc/$pid/task" | wc -l)
    for round in 1 2 3; do
        ms=$(post_sql "$port" 16 "SELECT g FROM generate_series(1, 1000) g") || fail "round $round: $ms"
        echo "round $round: 16 statements in $ms ms" >>"$T/.trace"
    done
    sleep 0.5
    tasks=$(ls "/proc/$pid/task" | wc -l)
    held=$(cat "$T/relay.port.held" 2>/dev/null || echo 0)
    echo "threads: $base, then $tasks; cancel requests held: $held" >>"$T/.trace"
    [ "$held" = 32 ] || fail "$held cancel requests were left unanswered, expected 32 (the cap)"
    [ $((tasks - base)) -le 32 ] || fail "askdb serve went from $base to $tasks threads"
    # The last round sent none: it did not wait CANCEL_GRACE_MS (3000) for an answer.
    [ "$ms" -lt 3000 ] || fail "the statements past the cap took $ms ms"
    expect_no_sanitizer
}

# post_sql_one PORT DATABASE SQL OUT: one POST /api/sql, its HTTP status
# and body in OUT (in the background: the caller waits).
post_sql_one() {
    "$PY" - "$@" <<'PY'
import json, sys, urllib.error, urllib.request
port, db, sql, out = sys.argv[1:5]
req = urllib.request.Request(
    "http://127.0.0.1:%s/api/sql" % port,
    json.dumps({"database": db, "sql": sql}).encode(),
    {"Content-Type": "application/json"})
try:
    with urllib.request.urlopen(req, timeout=20) as r:
        status, body = r.status, r.read().decode()
except urllib.error.HTTPError as e:
    status, body = e.code, e.read().decode()
except Exception as e:
    status, body = 0, "%s: %s" % (type(e).__name__, e)
with open(out, "w") as f:
    f.write("%d %s" % (status, body))
PY
}

# sleep_past_the_limit PORT DATABASE SECONDS RELAY_PID OUT: SELECT
# pg_sleep(SECONDS) through DATABASE of askdb serve on PORT (--timeout
# 1000), whose relay (RELAY_PID) is stopped (SIGSTOP) for 1.8 s once the
# statement runs, so that askdb's own deadline comes before the server's
# statement_timeout is heard of; the relay then goes on, and takes
# askdb's cancel request. The HTTP status and body in OUT.
sleep_past_the_limit() {
    local post
    post_sql_one "$1" "$2" "SELECT pg_sleep($3)" "$5" &
    post=$!
    wait_active "pg_sleep($3)"
    kill -STOP "$4"
    sleep 1.8
    kill -CONT "$4"
    wait "$post"
}

# The cap on cancel requests left unanswered was the process's: once a
# proxy that holds them had 32, askdb serve sent no cancel to any other
# server either, and a statement of another database past its time limit
# was given up instead of cancelled. The cap is counted by destination
# now (the address and port the session uses). The statements outlive
# the server's statement_timeout as seen by askdb: their relay is stopped
# (SIGSTOP) while the server's answer comes, so that askdb's own deadline
# comes first. Through a second relay, the cancel is sent (taken once the
# relay goes on) and the statement reported as cancelled on the server;
# through the proxy past its cap, none is sent and the session is given
# up at once, which says so and names the destination.
serve_caps_unanswered_cancels_by_destination() {
    local pid port a_port a_pid b_port b_pid held ms round
    start_relay --hold-cancels
    a_port=$RELAY_PORT a_pid=$RELAY_PID
    start_relay  # its own .held is never written: it holds no cancels
    b_port=$RELAY_PORT b_pid=$RELAY_PID
    start_serve --max-rows 5 --timeout 1000 --per-client 16 \
        --db "shop=postgresql://reader@127.0.0.1:$a_port/shop" \
        --db "other=postgresql://reader@127.0.0.1:$b_port/shop"
    for round in 1 2 3; do
        ms=$(post_sql "$port" 16 "SELECT g FROM generate_series(1, 1000) g") || fail "round $round: $ms"
    done
    held=$(cat "$T/relay.port.held" 2>/dev/null || echo 0)
    [ "$held" = 32 ] || fail "$held cancel requests were left unanswered, expected 32 (the cap)"
    # Another route, past its time limit: cancelled.
    sleep_past_the_limit "$port" other 5.1 "$b_pid" "$T/b.json"
    echo "other route: $(cat "$T/b.json")" >>"$T/.trace"
    # The proxy's route past its cap: given up.
    post_sql_one "$port" shop "SELECT pg_sleep(5.2)" "$T/a.json" &
    local post=$!
    wait_active "pg_sleep(5.2)"
    kill -STOP "$a_pid"
    wait "$post"
    kill -CONT "$a_pid"
    echo "the proxy's route: $(cat "$T/a.json")" >>"$T/.trace"
    local bad
    bad=$("$PY" - "$T/b.json" "$T/a.json" "$a_port" <<'PY' 2>&1
import json, sys
def error(path):
    status, body = open(path).read().split(" ", 1)
    return "%s %s" % (status, json.loads(body).get("error"))
want = ("400 query interrupted after the 1000 ms time limit (--timeout); cancelled on the server",
        "400 query interrupted after the 1000 ms time limit (--timeout); the session was given up "
        "instead of cancelled (askdb sent no cancel request: 32 it sent earlier to 127.0.0.1 port %s "
        "are still unanswered (a server or proxy that holds cancel requests?))" % sys.argv[3])
for what, path, w in zip(("other route", "the proxy's route"), sys.argv[1:3], want):
    if error(path) != w:
        print("%s: %s" % (what, open(path).read()[:400]))
PY
    ) || fail "$bad"
    [ -z "$bad" ] || fail "$bad"
    kill "$b_pid" "$a_pid"
    expect_no_sanitizer
}

# held_settled N: how many cancel requests the relay holds, once it holds
# N or more and a second has passed with no more to come. askdb sends
# them from threads of its own, which may connect after the HTTP answer,
# so the count read at once can lag: short of N (the last ones not yet
# taken) or not yet past it (one too many not yet counted). Waits 10 s
# at most for N.
held_settled() {
    local held=0
    for _ in $(seq 1 200); do
        held=$(cat "$T/relay.port.held" 2>/dev/null || echo 0)
        [ "$held" -ge "$1" ] && break
        sleep 0.05
    done
    sleep 1
    cat "$T/relay.port.held" 2>/dev/null || echo 0
}

# The destination the cap counts by was the session's host name
# (PQhost()), not the address its cancel requests go to: one server
# reached under two names (localhost and 127.0.0.1) had a cap for each,
# 32 requests more parked on it for each name, and one name with several
# addresses made one cap of them all, so that a proxy at one address that
# held 32 took cancel away from the servers at the others. The cap is by
# the address the session uses now (PQhostaddr()). Here the name's two
# addresses are given as hostaddr (as DNS would give two A records): the
# relay that holds cancel requests on 127.0.0.1 and another on 127.0.0.2,
# at the same port. Once the first holds 32, a statement cut short
# through localhost, the same relay, sends none (it sent one, held, the
# 33rd), and one past its time limit through the name's other address is
# cancelled (it was given up, as if it were the proxy's).
serve_caps_unanswered_cancels_by_the_address_used() {
    local pid port a_port a_pid b_pid held ms round bad
    start_relay --hold-cancels
    a_port=$RELAY_PORT a_pid=$RELAY_PID
    start_relay --listen "127.0.0.2:$a_port"
    b_pid=$RELAY_PID
    start_serve --max-rows 5 --timeout 1000 --per-client 16 \
        --db "shop=postgresql://reader@db.askdb.test:$a_port/shop?hostaddr=127.0.0.1" \
        --db "local=postgresql://reader@localhost:$a_port/shop" \
        --db "other=postgresql://reader@db.askdb.test:$a_port/shop?hostaddr=127.0.0.2"
    for round in 1 2; do
        ms=$(post_sql "$port" 16 "SELECT g FROM generate_series(1, 1000) g") || fail "round $round: $ms"
    done
    held=$(held_settled 32)
    [ "$held" = 32 ] || fail "$held cancel requests were left unanswered, expected 32 (the cap)"
    # The same relay under another name: past the cap, none is sent.
    post_sql_one "$port" local "SELECT g FROM generate_series(1, 1000) g" "$T/l.json"
    echo "localhost: $(cat "$T/l.json")" >>"$T/.trace"
    held=$(held_settled 32)
    [ "$held" = 32 ] || fail "$held cancel requests were left unanswered after one through localhost, expected 32 (one cap for the relay under both names)"
    # The name's other address, past its time limit: cancelled.
    sleep_past_the_limit "$port" other 5.3 "$b_pid" "$T/b.json"
    echo "other address: $(cat "$T/b.json")" >>"$T/.trace"
    bad=$("$PY" - "$T/l.json" "$T/b.json" <<'PY' 2>&1
import json, sys
status, body = open(sys.argv[1]).read().split(" ", 1)
doc = json.loads(body)
if status != "200" or len(doc.get("rows", ())) != 5 or not doc.get("truncated"):
    print("localhost: %s" % open(sys.argv[1]).read()[:400])
status, body = open(sys.argv[2]).read().split(" ", 1)
want = "query interrupted after the 1000 ms time limit (--timeout); cancelled on the server"
if status != "400" or json.loads(body).get("error") != want:
    print("other address: %s" % open(sys.argv[2]).read()[:400])
PY
    ) || fail "$bad"
    [ -z "$bad" ] || fail "$bad"
    kill "$b_pid" "$a_pid"
    expect_no_sanitizer
}

# A server gone without a word (its host down, the network cut: the
# session's socket hears nothing) is found out by askdb's cancel at the
# time limit, whose connection is refused: the connection is reported
# lost then, not after the 3 s a cancelled statement has to end (it took
# 4.3 s with --timeout 1000); on Ctrl-C the same (it took 3 s).
server_gone_silently_is_reported_at_the_cancel() {
    local url
    relay_sql 15 relay_silent 30
    echo "silent server, --timeout 1000: exit $RC in $ELAPSED_MS ms" >>"$T/.trace"
    expect_rc 1
    expect_empty_out
    expect_err_has "lost the connection to '$url' during the statement (askdb's cancel request found no server at the session's address: Connection refused); check that the server runs"
    expect_faster 3000
    kill "$RELAY_PID"
    relay_ctrl_c 16 relay_silent 30
    echo "silent server, Ctrl-C: exit $RC in $ELAPSED_MS ms" >>"$T/.trace"
    expect_rc 130
    expect_err_has "cancelled"
    expect_faster 2000
}

# A server that takes connections but answers none (stopped with SIGSTOP,
# whose kernel still completes the handshake; a proxy or firewall that
# holds them) leaves askdb's cancel request unanswered, and PQcancel()
# waits for an answer without a limit: askdb waited for good, at the time
# limit and at Ctrl-C alike. The request is sent from a thread of its own
# now, and the statement's wait ends as for a cancel the server did not
# act on: 3 s after it, the connection reported lost (--timeout 1000: in
# about 4.3 s).
server_that_answers_no_connection_ends_at_the_cancel_grace() {
    local url
    relay_sql 30 relay_deaf 20
    echo "deaf server, --timeout 1000: exit $RC in $ELAPSED_MS ms" >>"$T/.trace"
    expect_rc 1
    expect_empty_out
    expect_no_sanitizer
    expect_err_has "lost the connection to '$url' during the statement (the server did not answer askdb's cancel request within 3000 ms); check that the server runs"
    expect_faster 6500
    kill "$RELAY_PID"
    relay_ctrl_c 31 relay_deaf 20
    echo "deaf server, Ctrl-C: exit $RC in $ELAPSED_MS ms" >>"$T/.trace"
    expect_rc 130
    expect_no_sanitizer
    expect_err_has "cancelled"
    expect_faster 5000
    kill "$RELAY_PID"
}

# long_sql_to_deaf_relay TIMEOUT_MS: a shell with --timeout TIMEOUT_MS
# (Ctrl-C reaches it: timeout --foreground) through a relay that goes
# deaf as it gets the start of the shell's .sql, a statement of 16 MB
# (a literal): more than the sockets between them hold, so askdb waits to
# send the rest of it, to a server that reads nothing more, as to a host
# gone without a word. Its pid in pid, t0 when the .sql was sent.
long_sql_to_deaf_relay() {
    start_relay --deaf-on 'deaf_here'
    url="postgresql://reader@127.0.0.1:$RELAY_PORT/shop"
    mkfifo "$T/fifo"
    (cd "$T" && exec timeout --foreground -k 5 "$RUN_LIMIT_S" env --default-signal=INT "$ASKDB" shell \
        --llm-url http://127.0.0.1:9/v1 --model test --timeout "$1" "$url") <"$T/fifo" >"$T/out" 2>"$T/err" &
    pid=$!
    echo "$pid" >>"$T/.pids"
    exec 7>"$T/fifo"
    echo ".sql SELECT 41 AS a" >&7
    wait_in "$T/out" 41 100 || fail "the first statement did not answer: $(head -c 300 "$T/err")"
    t0=$(now_ms)
    "$PY" -c 'import sys; sys.stdout.write(".sql SELECT length(\x27deaf_here" + "x" * (16 << 20) + "\x27) AS n\n")' >&7
    for _ in $(seq 1 100); do
        [ -e "$T/relay.port.quiet" ] && return 0
        sleep 0.05
    done
    fail "the relay did not go deaf"
}

# libpq's blocking mode sends a statement whole before its call returns,
# waiting for room in the socket as long as it takes, with no time limit
# and deaf to a Ctrl-C: a statement longer than the sockets hold, sent to
# a server that reads nothing more (a host gone without a word), left
# askdb there for good (or until TCP gives up, after many minutes) - the
# check's Parse here, before any wait of askdb's was armed. The session
# is nonblocking now, and askdb waits for the rest to go out as it waits
# for the answer: a Ctrl-C and the time limit reach it, and the
# cancel request, which a deaf server leaves unanswered, ends it 3 s
# after.
long_statement_to_a_deaf_server_is_given_up() {
    local pid t0 url
    long_sql_to_deaf_relay 1000
    wait_err "lost the connection" 200 || fail "the statement was not given up at its limit: $(head -c 300 "$T/err")"
    ELAPSED_MS=$(($(now_ms) - t0))
    end_shell "a 16 MB statement to a deaf server, --timeout 1000"
    expect_err_has "lost the connection to '$url' during the statement (the server did not answer askdb's cancel request within 3000 ms); check that the server runs"
    expect_faster 8000
    kill "$RELAY_PID"
    rm -f "$T/fifo"
    long_sql_to_deaf_relay 20000
    sleep 1
    grep -q "lost the connection\|cancelled" "$T/err" && fail "the statement ended before the Ctrl-C: $(head -c 400 "$T/err")"
    t0=$(now_ms)
    kill -INT "$pid"
    wait_err "cancelled" 200
    ELAPSED_MS=$(($(now_ms) - t0))
    end_shell "Ctrl-C on a 16 MB statement to a deaf server, --timeout 20000, to 'cancelled'"
    expect_err_has "cancelled"
    expect_faster 5000
    expect_rc 130
    kill "$RELAY_PID"
}

# A BEGIN READ ONLY that a server gone deaf leaves unanswered is given up
# as a statement is: at the time limit, 3 s after askdb's cancel request,
# unanswered too. askdb then connected again and sent BEGIN once more, as
# after a session the server closed while askdb sat idle, with a time
# limit of its own: one more limit (6 s here) before the statement said
# "cannot reconnect", 15 s after its .sql where its limit is 6 s. A
# session askdb gave up itself is not connected again within the same
# statement; the next one does.
deaf_server_at_begin_keeps_to_the_time_limit() {
    local pid t0 url
    start_relay
    url="postgresql://reader@127.0.0.1:$RELAY_PORT/shop"
    shell_on "$url" 6000
    echo "$pid" >>"$T/.pids"
    echo ".sql SELECT 41 AS a" >&7
    wait_in "$T/out" 41 100 || fail "the first statement did not answer: $(head -c 300 "$T/err")"
    relay_deaf
    t0=$(now_ms)
    echo ".sql SELECT 2 AS b" >&7
    wait_err "askdb:" 400
    ELAPSED_MS=$(($(now_ms) - t0))
    end_shell "BEGIN on a deaf server, --timeout 6000"
    expect_err_has "askdb: lost the connection to '$url' during the statement (the server did not answer askdb's cancel request within 3000 ms); check that the server runs"
    expect_err_lacks "reconnect to"
    expect_faster 12000
    kill "$RELAY_PID"
}

# After a lost connection the next statement connects again first, and
# libpq's PQreset() gave that the 10 s of connect_timeout, whatever the
# time limit: the shell's next .sql, with --timeout 1000, waited 10.1 s
# for a server that takes connections and answers none (Ctrl-C or not).
# Each host now gets the statement's time limit at most (whole seconds,
# 2 at least, as libpq counts them).
reconnect_after_a_loss_keeps_to_the_time_limit() {
    local pid t0
    start_relay
    url="postgresql://reader@127.0.0.1:$RELAY_PORT/shop"
    shell_on "$url" 1000
    echo ".sql SELECT pg_sleep(32)" >&7
    wait_active "pg_sleep(32)"
    relay_deaf
    wait_err "lost the connection" 200 || fail "the first statement was not lost: $(head -c 300 "$T/err")"
    t0=$(now_ms)
    echo ".sql SELECT 1 AS x" >&7
    wait_err "cannot reconnect" 300
    ELAPSED_MS=$(($(now_ms) - t0))
    end_shell "reconnect to a deaf server, --timeout 1000"
    expect_err_has "askdb: cannot reconnect to '$url' within the statement's 1000 ms time limit (--timeout; 2 s at least): connection to server at \"127.0.0.1\", port $RELAY_PORT failed: timeout expired"
    expect_faster 8000
    kill "$RELAY_PID"
}

# A reconnect has no statement on the server for a cancel request to
# stop, and libpq's blocking connect heeds nothing but its timeout: a
# Ctrl-C while a shell's .sql connected again to a server that takes the
# connection and answers none waited out the statement's whole limit (20 s
# here). With one host, askdb connects again through libpq's nonblocking
# calls, which a Ctrl-C ends at once: 'cancelled while connecting again',
# exit 130 as for a statement cancelled.
reconnect_is_cut_short_by_ctrl_c() {
    local pid t0
    start_relay
    url="postgresql://reader@127.0.0.1:$RELAY_PORT/shop"
    mkfifo "$T/fifo"
    # Ctrl-C reaches askdb through timeout(1) with --foreground, and is
    # not ignored as by a background job (env --default-signal).
    (cd "$T" && exec timeout --foreground -k 5 "$RUN_LIMIT_S" env --default-signal=INT "$ASKDB" shell \
        --llm-url http://127.0.0.1:9/v1 --model test --timeout 20000 "$url") <"$T/fifo" >"$T/out" 2>"$T/err" &
    pid=$!
    echo "$pid" >>"$T/.pids"
    exec 7>"$T/fifo"
    echo ".sql SELECT 41 AS a" >&7
    wait_in "$T/out" 41 100 || fail "the first statement did not answer: $(head -c 300 "$T/err")"
    # The server ends the idle session (the relay passes the close on),
    # then the relay takes connections and answers none: the next .sql
    # finds its session gone at BEGIN and connects again.
    su_sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'reader'" >/dev/null
    for _ in $(seq 1 50); do
        [ "$(su_sql "SELECT count(*) FROM pg_stat_activity WHERE usename = 'reader'")" = 0 ] && break
        sleep 0.05
    done
    sleep 0.3
    relay_deaf
    echo ".sql SELECT 1 AS x" >&7
    sleep 1
    grep -q "cannot reconnect\|cancelled\|lost the connection" "$T/err" && fail "the reconnect ended before the Ctrl-C: $(head -c 400 "$T/err")"
    t0=$(now_ms)
    kill -INT "$pid"
    wait_err "cancelled" 100
    ELAPSED_MS=$(($(now_ms) - t0))
    end_shell "Ctrl-C in a reconnect to a deaf server, --timeout 20000, to 'cancelled'"
    expect_err_has "askdb: cancelled while connecting again to '$url'"
    expect_faster 2000
    expect_rc 130
    kill "$RELAY_PID"
}

# With several hosts (a URL's host list) askdb connected again through
# libpq's blocking connect, which gave each host the statement's limit:
# N hosts that answer none took N times the limit before the next was
# tried (two here, 12 s with --timeout 6000), and a Ctrl-C waited for
# all of them. askdb walks the list itself, one host at a time, as libpq
# does: the first entry, a standby (the stub), is turned down for
# target_session_attrs=read-write; each deaf relay gets its time, but
# the walk as a whole keeps to the limit, an entry reached once it is
# spent getting 2 s: the server, fourth, answers within the limit and
# 2 s.
reconnect_to_several_hosts_reaches_the_one_that_answers() {
    local pid t0 r1 r1_pid r2 r2_pid url
    start_standby_stub
    start_relay
    r1=$RELAY_PORT r1_pid=$RELAY_PID
    start_relay
    r2=$RELAY_PORT r2_pid=$RELAY_PID
    url="postgresql://reader@127.0.0.1:$STANDBY_PORT,127.0.0.1:$r1,127.0.0.1:$r2,127.0.0.1:$PORT/shop?target_session_attrs=read-write"
    shell_on "$url" 6000
    echo ".sql SELECT 41 AS a" >&7
    wait_in "$T/out" 41 200 || fail "the first statement did not answer: $(head -c 300 "$T/err")"
    end_sessions reader
    relays_deaf "$r1_pid" "$r2_pid"
    t0=$(now_ms)
    echo ".sql SELECT 42 AS b" >&7
    wait_in "$T/out" 42 300
    ELAPSED_MS=$(($(now_ms) - t0))
    end_shell "reconnect past a standby and two deaf hosts, --timeout 6000"
    expect_out_has 42
    expect_err_lacks "cannot reconnect"
    expect_faster 9500
    expect_rc 0
    kill "$r1_pid" "$r2_pid"
}

# A Ctrl-C while askdb connected again to several hosts waited until
# libpq's blocking connect had given up on each (10 s for each here, by
# askdb's connect_timeout). Walked by askdb, the reconnect is cut short
# at once, at whichever host it is (the second here: the first, a
# standby, was turned down), as it is to one host.
reconnect_to_several_hosts_is_cut_short_by_ctrl_c() {
    local pid t0 r1 r1_pid r2 r2_pid url
    start_standby_stub
    start_relay
    r1=$RELAY_PORT r1_pid=$RELAY_PID
    start_relay
    r2=$RELAY_PORT r2_pid=$RELAY_PID
    url="postgresql://reader@127.0.0.1:$STANDBY_PORT,127.0.0.1:$r1,127.0.0.1:$r2/shop?target_session_attrs=read-write"
    mkfifo "$T/fifo"
    (cd "$T" && exec timeout --foreground -k 5 "$RUN_LIMIT_S" env --default-signal=INT "$ASKDB" shell \
        --llm-url http://127.0.0.1:9/v1 --model test --timeout 20000 "$url") <"$T/fifo" >"$T/out" 2>"$T/err" &
    pid=$!
    echo "$pid" >>"$T/.pids"
    exec 7>"$T/fifo"
    echo ".sql SELECT 41 AS a" >&7
    wait_in "$T/out" 41 200 || fail "the first statement did not answer: $(head -c 300 "$T/err")"
    end_sessions reader
    relays_deaf "$r1_pid" "$r2_pid"
    echo ".sql SELECT 1 AS x" >&7
    sleep 1
    grep -q "cannot reconnect\|cancelled\|lost the connection" "$T/err" && fail "the reconnect ended before the Ctrl-C: $(head -c 400 "$T/err")"
    t0=$(now_ms)
    kill -INT "$pid"
    wait_err "cancelled" 100
    ELAPSED_MS=$(($(now_ms) - t0))
    end_shell "Ctrl-C in a reconnect to a standby and two deaf hosts, --timeout 20000, to 'cancelled'"
    expect_err_has "askdb: cancelled while connecting again to '$url'"
    expect_faster 1000
    expect_rc 130
    kill "$r1_pid" "$r2_pid"
}

# A walk of several hosts that reaches no server says each host's error
# in turn, as libpq's message for several hosts does, within the
# statement's limit and 2 s for each further host (libpq's blocking
# connect: the limit for each, 12 s here). It ends at a server that
# refuses the login (dora's password changed), as libpq tries no other
# host then: the unix socket after it, where dora is trusted, is not
# tried, and the statement fails. Its advice and wording go by that
# refused login (the message said "within the statement's 6000 ms time
# limit" at first, of the hosts passed over, though the limit did not end
# the walk).
reconnect_to_several_hosts_says_each_hosts_error() {
    local pid t0 r1 r1_pid r2 r2_pid q url label
    su_sql "ALTER ROLE dora PASSWORD '$DORA_PW'" >/dev/null
    start_relay
    r1=$RELAY_PORT r1_pid=$RELAY_PID
    start_relay
    r2=$RELAY_PORT r2_pid=$RELAY_PID
    q="host=127.0.0.1,127.0.0.1,127.0.0.1,$SOCK&port=$r1,$r2,$PORT,$PORT"
    url="postgresql://dora:$DORA_PW@/shop?$q"
    label="postgresql://dora@/shop?$q"
    shell_on "$url" 6000
    echo ".sql SELECT 41 AS a" >&7
    wait_in "$T/out" 41 200 || fail "the first statement did not answer: $(head -c 300 "$T/err")"
    su_sql "ALTER ROLE dora PASSWORD 'Dora-changed-pw'" >/dev/null
    end_sessions dora
    relays_deaf "$r1_pid" "$r2_pid"
    t0=$(now_ms)
    echo ".sql SELECT 42 AS b" >&7
    wait_err "cannot reconnect" 300
    ELAPSED_MS=$(($(now_ms) - t0))
    end_shell "reconnect past two deaf hosts to a refused login, --timeout 6000"
    su_sql "ALTER ROLE dora PASSWORD '$DORA_PW'" >/dev/null
    expect_err_has "askdb: cannot reconnect to '$label': connection to server at \"127.0.0.1\", port $r1 failed: timeout expired connection to server at \"127.0.0.1\", port $r2 failed: timeout expired connection to server at \"127.0.0.1\", port $PORT failed: FATAL:  password authentication failed for user \"dora\" (check the user name and the password"
    expect_out_lacks 42
    expect_faster 9500
    kill "$r1_pid" "$r2_pid"
}

# walk_to_a_dropped_database HOSTS PORTS: a shell on database tmpdb by
# the host list HOSTS, PORTS (a URL's query: url), --timeout 6000; the
# first statement answers, then tmpdb is dropped, and the next statement's
# reconnect fails (stderr in err).
walk_to_a_dropped_database() {
    local pid
    su_sql "DROP DATABASE IF EXISTS tmpdb" >/dev/null
    su_sql "CREATE DATABASE tmpdb" >/dev/null
    url="postgresql://reader@/tmpdb?host=$1&port=$2"
    rm -f "$T/fifo"
    shell_on "$url" 6000
    echo ".sql SELECT 41 AS a" >&7
    wait_in "$T/out" 41 200 || fail "the first statement did not answer: $(head -c 300 "$T/err")"
    su_sql "DROP DATABASE tmpdb WITH (FORCE)" >/dev/null
    ELAPSED_MS=0
    echo ".sql SELECT 42 AS b" >&7
    wait_err "cannot reconnect" 300
    end_shell "reconnect by $1 to a database dropped"
}

# A walk's message said what to do from all its entries' words together,
# by rules in a fixed order, and an entry passed over could decide it:
# ended by the server's FATAL for the database, after a first host that
# refused the connect, it said "is the server running and listening
# there?". The advice, and the time limit's wording (tested in
# reconnect_to_several_hosts_says_each_hosts_error), go by the entry that
# ended the walk now. And the words of many entries passed over filled
# the reason's 1024 bytes, the deciding entry's, last, cut first: they
# are shortened now so that the deciding entry's and the advice stay
# whole within the 511 bytes of a database error.
reconnect_to_several_hosts_advises_on_the_host_that_ended_it() {
    local h p i
    walk_to_a_dropped_database "127.0.0.1,127.0.0.1,$SOCK" "1,$PORT,$PORT"
    expect_err_has "askdb: cannot reconnect to '$url': connection to server at \"127.0.0.1\", port 1 failed: Connection refused  Is the server running on that host and accepting TCP/IP connections? connection to server at \"127.0.0.1\", port $PORT failed: FATAL:  database \"tmpdb\" does not exist (check the database name in the URL's path)"
    expect_err_lacks "is the server running and listening there?"
    expect_out_lacks 42
    h= p=
    for i in 1 2 3 4 5 6 7 8; do h="${h}127.0.0.1," p="${p}1,"; done
    walk_to_a_dropped_database "${h}127.0.0.1,$SOCK" "${p}$PORT,$PORT"
    expect_err_has "askdb: cannot reconnect to '$url': connection to server at \"127.0.0.1\", port 1 failed: Connection refused"
    expect_err_has "connection to server at \"127.0.0.1\", port $PORT failed: FATAL:  database \"tmpdb\" does not exist (check the database name in the URL's path)"
    expect_out_lacks 42
    su_sql "DROP DATABASE IF EXISTS tmpdb" >/dev/null
}

# libpq checks a host's port only when it comes to that host, and a port
# it cannot read as a number ends its whole connect to the list (psql:
# 'invalid integer value "abc" for connection option "port"'). In askdb's
# walk that failure came inside PQconnectStartParams(), before any server,
# and was taken for a host that did not answer: the walk went on to the
# next entry and connected there. It ends there now with libpq's words.
# The first host, a relay, lets the first connect through, then is gone.
reconnect_to_several_hosts_ends_at_a_port_libpq_cannot_read() {
    local pid q psql_err
    start_relay
    q="host=127.0.0.1,127.0.0.1,127.0.0.1&port=$RELAY_PORT,abc,$PORT"
    url="postgresql://reader@/shop?$q"
    shell_on "$url" 6000
    echo ".sql SELECT 41 AS a" >&7
    wait_in "$T/out" 41 200 || fail "the first statement did not answer: $(head -c 300 "$T/err")"
    kill "$RELAY_PID"
    wait "$RELAY_PID" 2>/dev/null
    end_sessions reader
    # What libpq itself does with the list now.
    psql_err=$(psql -X -A -t -d "$url" -c "SELECT 42" 2>&1) && fail "psql connected: $psql_err"
    case $psql_err in
    *'invalid integer value "abc" for connection option "port"'*) ;;
    *) fail "psql did not stop at the port: $psql_err" ;;
    esac
    ELAPSED_MS=0
    echo ".sql SELECT 42 AS b" >&7
    wait_err "cannot reconnect" 300
    end_shell "reconnect to a gone host, then a port libpq cannot read"
    expect_err_has "askdb: cannot reconnect to '$url': connection to server at \"127.0.0.1\", port $RELAY_PORT failed: Connection refused  Is the server running on that host and accepting TCP/IP connections? invalid integer value \"abc\" for connection option \"port\" (check the URL's form: postgresql://user@host:port/dbname?param=value)"
    expect_out_lacks 42
}

# target_session_attrs=prefer-standby makes libpq try its hosts twice,
# for a standby and then for any server, within its one connect. The walk
# of a host list made two connects of it to one host too, each with its
# own time: a reconnect to a server that answers none took the limit and
# 2 s more (5 s with --timeout 3000, where the statement's limit is the
# most a reconnect may take) and said its error twice. A reconnect to one
# host is libpq's one connect with the settings as they are again, one
# deadline: 3 s, one "timeout expired".
reconnect_to_one_host_with_prefer_standby_keeps_to_the_limit() {
    local pid t0
    start_relay
    url="postgresql://reader@127.0.0.1:$RELAY_PORT/shop?target_session_attrs=prefer-standby"
    shell_on "$url" 3000
    echo ".sql SELECT 41 AS a" >&7
    wait_in "$T/out" 41 200 || fail "the first statement did not answer: $(head -c 300 "$T/err")"
    end_sessions reader
    relay_deaf
    t0=$(now_ms)
    echo ".sql SELECT 42 AS b" >&7
    wait_err "cannot reconnect" 300
    ELAPSED_MS=$(($(now_ms) - t0))
    end_shell "reconnect to one deaf host with prefer-standby, --timeout 3000"
    expect_err_has "askdb: cannot reconnect to '$url' within the statement's 3000 ms time limit (--timeout; 2 s at least): connection to server at \"127.0.0.1\", port $RELAY_PORT failed: timeout expired (the server did not answer in time"
    expect_out_lacks 42
    expect_faster 4500
    kill "$RELAY_PID"
}

# first_connect_ctrl_c CMD ARGS...: askdb CMD ARGS... started with
# Ctrl-C heeded (timeout --foreground, env --default-signal), given a
# Ctrl-C after a second of connecting; RC, ELAPSED_MS (from the Ctrl-C),
# $T/out, $T/err.
first_connect_ctrl_c() {
    local pid
    (cd "$T" && exec timeout --foreground -k 5 "$RUN_LIMIT_S" env --default-signal=INT "$ASKDB" "$@") \
        </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    echo "$pid" >>"$T/.pids"
    sleep 1
    [ -s "$T/err" ] && fail "askdb $1 ended before the Ctrl-C: $(head -c 400 "$T/err")"
    interrupt
    echo "Ctrl-C in the first connect of askdb $1: exit $RC, $ELAPSED_MS ms" >>"$T/.trace"
    cat "$T/out" "$T/err" >>"$TMP/all_output"
    expect_no_sanitizer
}

# expect_connect_cancelled WHO URL: what first_connect_ctrl_c ended with
# is a cancelled connect: exit 130 within a second of the Ctrl-C, "WHO:
# cancelled while connecting to 'URL'", nothing on stdout.
expect_connect_cancelled() {
    expect_rc 130
    expect_faster 1000
    expect_err_has "$1: cancelled while connecting to '$2'"
    expect_empty_out
}

# The first connect to several hosts was libpq's blocking connect, which
# heeds no Ctrl-C: askdb, given no handler then, was killed by the
# signal without a word (or, with one, waited until each host had timed
# out, 10 s each). It is walked as a reconnect is now, and a Ctrl-C ends
# it at once with what was cut short, exit 130, for sql, for ask
# (an agent's open) and for learn alike.
first_connect_to_several_hosts_is_cut_short_by_ctrl_c() {
    local r1 r1_pid r2 r2_pid url
    start_relay
    r1=$RELAY_PORT r1_pid=$RELAY_PID
    start_relay
    r2=$RELAY_PORT r2_pid=$RELAY_PID
    relays_deaf "$r1_pid" "$r2_pid"
    url="postgresql://reader@127.0.0.1:$r1,127.0.0.1:$r2,127.0.0.1:$PORT/shop"
    first_connect_ctrl_c sql --timeout 20000 "$url" "SELECT 42 AS b"
    expect_connect_cancelled askdb "$url"
    first_connect_ctrl_c ask --llm-url http://127.0.0.1:9/v1 --model test "$url" "How many?"
    expect_connect_cancelled askdb "$url"
    # askdb learn's open too: it was killed by the signal without a word.
    first_connect_ctrl_c learn "$url" --memory "$T/m.sqlite" --question "How many?" --sql "SELECT 42 AS b"
    expect_connect_cancelled "askdb learn" "$url"
    [ -e "$T/m.sqlite" ] && fail "a cancelled learn made the memory store"
    # A URL that names a service is libpq's own connect (libpq reads the
    # file as it connects), through the nonblocking calls too: with the
    # handler in place, its blocking connect heeded no Ctrl-C at all.
    printf '[deaf]\nhost=127.0.0.1\nport=%s\nuser=reader\ndbname=shop\n[real]\nhost=127.0.0.1\nport=%s\nuser=reader\ndbname=shop\n' \
        "$r1" "$PORT" >"$T/pg_service.conf"
    PGSERVICEFILE="$T/pg_service.conf" first_connect_ctrl_c sql --timeout 20000 "postgresql:///?service=deaf" "SELECT 42 AS b"
    expect_connect_cancelled askdb "postgresql:///?service=deaf"
    PGSERVICEFILE="$T/pg_service.conf" run sql -f csv "postgresql:///?service=real" "SELECT 42 AS b"
    expect_rc 0
    expect_out 'b\n42\n'
    kill "$r1_pid" "$r2_pid"
}

# The first connect's walk keeps libpq's rules and the reconnect's time:
# a standby (the stub) is turned down for target_session_attrs=read-write,
# each deaf host is given the connect_timeout (5 s here) but the walk as a
# whole keeps to it, a host reached once it is spent getting 2 s, so the
# server, fourth, answers within 5 + 2 s (libpq's blocking connect gave
# each deaf host 5 s: 10 s). Where no host answers, the error names each
# host in turn, within the same bound. A list whose counts libpq refuses
# (three ports for two hosts) is still libpq's to refuse.
first_connect_to_several_hosts_keeps_to_connect_timeout() {
    local r1 r1_pid r2 r2_pid url q
    start_standby_stub
    start_relay
    r1=$RELAY_PORT r1_pid=$RELAY_PID
    start_relay
    r2=$RELAY_PORT r2_pid=$RELAY_PID
    relays_deaf "$r1_pid" "$r2_pid"
    q="target_session_attrs=read-write&connect_timeout=5"
    url="postgresql://reader@127.0.0.1:$STANDBY_PORT,127.0.0.1:$r1,127.0.0.1:$r2,127.0.0.1:$PORT/shop?$q"
    run sql -f csv --timeout 20000 "$url" "SELECT 42 AS b"
    expect_rc 0
    expect_out 'b\n42\n'
    expect_faster 8500
    [ "$ELAPSED_MS" -ge 6500 ] || fail "took $ELAPSED_MS ms: the deaf hosts were not waited for"
    url="postgresql://reader@127.0.0.1:$r1,127.0.0.1:$r2/shop?connect_timeout=5"
    run sql --timeout 20000 "$url" "SELECT 42 AS b"
    expect_rc 3
    expect_err_has "askdb: cannot connect to '$url': connection to server at \"127.0.0.1\", port $r1 failed: timeout expired connection to server at \"127.0.0.1\", port $r2 failed: timeout expired (the server did not answer in time"
    expect_faster 8500
    url="postgresql://reader@/shop?host=127.0.0.1,127.0.0.1&port=$PORT,$PORT,$PORT"
    run sql "$url" "SELECT 42 AS b"
    expect_rc 3
    expect_err_has "could not match 3 port numbers to 2 hosts"
    # A setting libpq refuses fails every host the same way: said once,
    # not once a host.
    url="postgresql://reader@127.0.0.1:$PORT,127.0.0.1:$PORT,127.0.0.1:$PORT/shop?sslmode=bogus"
    run sql "$url" "SELECT 42 AS b"
    expect_rc 3
    expect_err_has "askdb: cannot connect to '$url': invalid sslmode value: \"bogus\" (check"
    kill "$r1_pid" "$r2_pid"
}

# libpq takes a connect_timeout of 0 or less as no time limit at all
# ("wait indefinitely"): with ?connect_timeout=0 in the URL or
# PGCONNECT_TIMEOUT=0, askdb's first connect to a server that takes the
# connection and answers none waited for ever. Such a setting is refused
# before connecting, with where it came from and what to write instead
# (exit 3); where libpq takes the URL's own value, the environment's is
# not looked at.
connect_timeout_of_0_is_refused() {
    local url
    start_relay
    relay_deaf
    url="postgresql://reader@127.0.0.1:$RELAY_PORT/shop"
    run sql "$url?connect_timeout=0" "SELECT 1"
    expect_rc 3
    expect_err_has "askdb: cannot connect to '$url?connect_timeout=0': a connect_timeout of 0 or less in the URL is no time limit at all to libpq, which would wait for ever for a server that does not answer: give it a number of seconds (connect_timeout=10), or leave it out for askdb's 10 s"
    expect_faster 5000
    run sql "$url?sslmode=disable&connect_timeout=%20-1" "SELECT 1"
    expect_rc 3
    expect_err_has "a connect_timeout of 0 or less in the URL is no time limit at all to libpq"
    expect_faster 5000
    PGCONNECT_TIMEOUT=0 run sql "$url" "SELECT 1"
    expect_rc 3
    expect_err_has "askdb: cannot connect to '$url': PGCONNECT_TIMEOUT=0 in the environment is no time limit at all to libpq, which would wait for ever for a server that does not answer: set it to a number of seconds (PGCONNECT_TIMEOUT=10), or unset it for askdb's 10 s"
    expect_faster 5000
    # The URL's value is the one libpq takes, whatever the environment's.
    PGCONNECT_TIMEOUT=5 run sql "$url?connect_timeout=0" "SELECT 1"
    expect_rc 3
    expect_err_has "a connect_timeout of 0 or less in the URL is no time limit"
    PGCONNECT_TIMEOUT=0 run sql -f csv "$READER?connect_timeout=5" "SELECT 4 AS x"
    expect_rc 0
    expect_out 'x\n4\n'
    # A limit still bounds the wait (libpq's 2 s at least).
    PGCONNECT_TIMEOUT=1 run sql "$url" "SELECT 1"
    expect_rc 3
    expect_err_has "timeout expired"
    expect_faster 5000
    kill "$RELAY_PID"
}

# opens_held RELAY_PORT N: wait (5 s at most) until N connections to the
# relay are open, which a deaf relay holds without a byte: the opens
# that made them are in flight.
opens_held() {
    local n
    for _ in $(seq 1 100); do
        n=$(ss -Htn state established "( dport = :$1 )" | wc -l)
        [ "$n" -ge "$2" ] && return 0
        sleep 0.05
    done
    fail "$n connections to the relay, expected $2"
}

# askdb serve opens the database for each statement of /api/sql, for
# each new conversation of /api/ask and for the first ask of /mcp. A stop (SIGTERM) while such an open
# waited for a server that takes connections and answers nothing waited
# for the open's connect_timeout (60 s here): nothing reached the handle
# that was being opened. The stop cancels the opens in flight at once,
# and each request is told that the server stopped.
serve_stop_cancels_the_opens_in_flight() {
    local pid port t0 ms sqlp askp mcpp held
    start_relay
    start_serve --db "shop=postgresql://reader@127.0.0.1:$RELAY_PORT/shop?connect_timeout=60"
    relay_deaf
    # /mcp's own handle stays connected to the relay.
    held=$(ss -Htn state established "( dport = :$RELAY_PORT )" | wc -l)
    post_sql_one "$port" shop "SELECT 1" "$T/sql.out" &
    sqlp=$!
    "$PY" - "$port" "$T/ask.out" <<'PY' &
import json, sys, urllib.error, urllib.request
req = urllib.request.Request(
    "http://127.0.0.1:%s/api/ask" % sys.argv[1],
    json.dumps({"database": "shop", "question": "How many orders?"}).encode(),
    {"Content-Type": "application/json"})
try:
    with urllib.request.urlopen(req, timeout=30) as r:
        status, body = r.status, r.read().decode()
except urllib.error.HTTPError as e:
    status, body = e.code, e.read().decode()
except Exception as e:
    status, body = 0, "%s: %s" % (type(e).__name__, e)
open(sys.argv[2], "w").write("%d %s" % (status, body))
PY
    askp=$!
    "$PY" - "$port" "$T/mcp.out" <<'PY' &
import json, sys, urllib.request
def post(body, sid=None):
    h = {"Content-Type": "application/json", "Accept": "application/json"}
    if sid:
        h["Mcp-Session-Id"] = sid
    req = urllib.request.Request("http://127.0.0.1:%s/mcp" % sys.argv[1],
                                 json.dumps(body).encode(), h)
    return urllib.request.urlopen(req, timeout=30)
try:
    r = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    sid = r.headers["Mcp-Session-Id"]
    r.read()
    r = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "ask", "arguments": {"question": "How many orders?"}}}, sid)
    out = "%d %s" % (r.status, r.read().decode())
except Exception as e:
    out = "0 %s: %s" % (type(e).__name__, e)
open(sys.argv[2], "w").write(out)
PY
    mcpp=$!
    opens_held "$RELAY_PORT" $((held + 3))
    t0=$(now_ms)
    kill -TERM "$pid"
    wait "$pid"
    ms=$(($(now_ms) - t0))
    wait "$sqlp" "$askp" "$mcpp"
    echo "stopped in $ms ms; sql: $(head -c 300 "$T/sql.out"); ask: $(head -c 300 "$T/ask.out"); mcp: $(head -c 300 "$T/mcp.out")" >>"$T/.trace"
    [ "$ms" -lt 3000 ] || fail "askdb serve took $ms ms to stop with three opens in flight"
    grep -qF '503 {"error":{"code":"unavailable","message":"the server stopped while the database was being opened; send the statement again once it runs"}}' "$T/sql.out" ||
        fail "sql: $(head -c 300 "$T/sql.out")"
    grep -qF '"status":"cancelled",' "$T/ask.out" &&
        grep -qF '"error":{"code":"cancelled","message":"the server stopped while the database was being opened; ask again once it runs"}}' "$T/ask.out" ||
        fail "ask: $(head -c 300 "$T/ask.out")"
    grep -qF '"isError":true' "$T/mcp.out" && grep -qF 'the server stopped while the database was being opened; ask again once it runs' "$T/mcp.out" ||
        fail "mcp: $(head -c 300 "$T/mcp.out")"
    expect_no_sanitizer
}

# askdb mcp reads the schema (search_objects, the schema resource) on a
# handle of its own, opened for that first read and closed after, so the
# read does not wait for a statement running on execute_sql's handle:
# on a PostgreSQL server too, and the extra session does not stay.
mcp_schema_read_does_not_wait_for_a_statement() {
    local out
    out=$("$PY" "$HERE/mcp_schema_read.py" "$ASKDB" "$T" "$READER" "SELECT pg_sleep(15)" -- \
        psql -X -A -t -d "$(su_url)" -c "SELECT count(*) FROM pg_stat_activity WHERE usename = 'reader' AND application_name = 'askdb'")
    echo "mcp: $out" >>"$T/.trace"
    pycheck '
j = json.loads(args[0])
assert j["rc"] == 0 and j["cust"] and j["schema"], j
assert j["ms"] < 5000, "the schema read waited %d ms for the statement" % j["ms"]
assert j["sessions"] == 1, "%d sessions of askdb after the schema read, want 1" % j["sessions"]
assert j["rows"][0][0] > 0, j
' "$out"
    expect_no_sanitizer
}

# mcp_cancel_in_open REQUEST: askdb mcp on the relay (start_relay, outside
# the command substitution that reads this), made deaf (a server
# that takes connections and answers nothing, connect_timeout 60 s), is
# sent REQUEST (id 2) and, once a second connection to the relay is open
# (the server's own handle and the request's open), its
# notifications/cancelled; then its input ends. Prints the milliseconds
# from the cancel to askdb mcp's exit, its exit status and what it wrote
# after the cancel (JSON).
mcp_cancel_in_open() {
    "$PY" - "$ASKDB" "$T" "postgresql://reader@127.0.0.1:$RELAY_PORT/shop?connect_timeout=60" \
        "$RELAY_PID" "$T/relay.port.quiet" "$RELAY_PORT" "$1" <<'PY'
import json, os, subprocess, sys, time
askdb, d, url, relay, quiet, rport, request = sys.argv[1:8]
err = open(os.path.join(d, "err"), "w")
p = subprocess.Popen([askdb, "mcp", "--llm-url", "http://127.0.0.1:9/v1", "--model", "test", "--db", "shop=" + url],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=d)
def send(m):
    p.stdin.write((json.dumps(m) + "\n").encode())
    p.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
json.loads(p.stdout.readline())
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
os.kill(int(relay), 12)   # SIGUSR2: deaf
for _ in range(100):
    if os.path.exists(quiet):
        break
    time.sleep(0.05)
send(json.loads(request))
for _ in range(100):
    n = subprocess.run(["ss", "-Htn", "state", "established", "( dport = :%s )" % rport],
                       capture_output=True, text=True).stdout.count("\n")
    if n >= 2:     # the server's own handle and the request's open
        break
    time.sleep(0.05)
send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
t0 = time.monotonic()
p.stdin.close()
try:
    rest = p.stdout.read()
    p.wait(90)
except subprocess.TimeoutExpired:
    p.kill()
    rest = b""
ms = int((time.monotonic() - t0) * 1000)
print(ms, p.returncode, json.dumps(rest.decode()[:300]))
PY
}

# An MCP client's notifications/cancelled of an ask whose agent was still
# opening its database (a server that takes connections and answers
# nothing) did not reach the open: the call, and askdb mcp after the end
# of its input, waited for the connect_timeout (60 s here).
mcp_cancel_stops_the_open_of_an_ask() {
    local ms
    start_relay
    ms=$(mcp_cancel_in_open '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {"question": "How many orders?"}}}')
    echo "mcp: $ms" >>"$T/.trace"
    set -- $ms
    [ "$2" = 0 ] || fail "askdb mcp exited $2: $(head -c 300 "$T/err")"
    [ "$3" = '""' ] || fail "the cancelled call was answered: $3"
    [ "$1" -lt 3000 ] || fail "askdb mcp took $1 ms to end after the cancel of an ask whose open was in flight"
    expect_no_sanitizer
}

# The first schema read (list_databases, search_objects, the resources)
# opens a handle of its own, and that open was told to no one: a
# notifications/cancelled of a resources/read waiting for a server that
# takes connections and answers nothing did not reach it, and askdb mcp,
# at the end of its input, waited for the connect_timeout (60 s here).
mcp_cancel_stops_the_open_of_a_first_schema_read() {
    local ms
    start_relay
    ms=$(mcp_cancel_in_open '{"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "askdb://shop/schema"}}')
    echo "mcp: $ms" >>"$T/.trace"
    set -- $ms
    [ "$2" = 0 ] || fail "askdb mcp exited $2: $(head -c 300 "$T/err")"
    [ "$3" = '""' ] || fail "the cancelled read was answered: $3"
    [ "$1" -lt 3000 ] || fail "askdb mcp took $1 ms to end after the cancel of a schema read whose open was in flight"
    expect_no_sanitizer
}

# Past its open, the first schema read's queries went on after the
# call's cancel: a table the reader reads slowly (a row-level security
# policy that sleeps 0.3 s a row, 9 s in all) held askdb mcp, at the end
# of its input, until its samples were read.
mcp_cancel_stops_a_first_schema_read() {
    local ms
    su_sql "CREATE DATABASE slowmcp" postgres || fail "cannot create the database"
    su_sql "CREATE TABLE slow (id int, name text);
INSERT INTO slow SELECT g, 'name ' || g FROM generate_series(1, 30) g;
ALTER TABLE slow ENABLE ROW LEVEL SECURITY;
CREATE POLICY sleepy ON slow FOR SELECT USING (pg_sleep(0.3) IS NOT NULL);
GRANT SELECT ON slow TO reader" slowmcp || fail "cannot make the slow table"
    ms=$("$PY" - "$ASKDB" "$T" "postgresql://reader@127.0.0.1:$PORT/slowmcp" "$(su_url)" <<'PY'
import json, os, subprocess, sys, time
askdb, d, url, su = sys.argv[1:5]
err = open(os.path.join(d, "err"), "w")
p = subprocess.Popen([askdb, "mcp", "--timeout", "20000", "--llm-url", "http://127.0.0.1:9/v1",
                      "--model", "test", "--db", "slow=" + url],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=d)
def send(m):
    p.stdin.write((json.dumps(m) + "\n").encode())
    p.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
json.loads(p.stdout.readline())
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
      "params": {"uri": "askdb://slow/schema"}})
q = ("SELECT count(*) FROM pg_stat_activity WHERE datname = 'slowmcp' AND usename = 'reader' "
     "AND state = 'active' AND query LIKE '%slow%'")
for _ in range(200):
    if subprocess.run(["psql", "-X", "-qtA", "-d", su, "-c", q], capture_output=True,
                      text=True).stdout.strip() == "1":
        break
    time.sleep(0.05)
time.sleep(0.3)
send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
t0 = time.monotonic()
p.stdin.close()
try:
    rest = p.stdout.read()
    p.wait(60)
except subprocess.TimeoutExpired:
    p.kill()
    rest = b""
ms = int((time.monotonic() - t0) * 1000)
print(ms, p.returncode, json.dumps(rest.decode()[:300]))
PY
)
    su_sql "DROP DATABASE slowmcp WITH (FORCE)" postgres >/dev/null
    echo "mcp: $ms" >>"$T/.trace"
    set -- $ms
    [ "$2" = 0 ] || fail "askdb mcp exited $2: $(head -c 300 "$T/err")"
    [ "$3" = '""' ] || fail "the cancelled read was answered: $3"
    [ "$1" -lt 3000 ] || fail "askdb mcp took $1 ms to end after the cancel of a schema read in flight"
    expect_no_sanitizer
}

# The same open, in askdb serve's /mcp: a stop (SIGTERM) waited for it,
# up to the connect_timeout (60 s here), where it cancels the other opens
# in flight at once; the read is told that the server stopped.
serve_stop_cancels_the_open_of_a_first_schema_read() {
    local pid port t0 ms mcpp held
    start_relay
    start_serve --db "shop=postgresql://reader@127.0.0.1:$RELAY_PORT/shop?connect_timeout=60"
    relay_deaf
    held=$(ss -Htn state established "( dport = :$RELAY_PORT )" | wc -l)
    "$PY" - "$port" "$T/mcp.out" <<'PY' &
import json, sys, urllib.request
def post(body, sid=None):
    h = {"Content-Type": "application/json", "Accept": "application/json"}
    if sid:
        h["Mcp-Session-Id"] = sid
    req = urllib.request.Request("http://127.0.0.1:%s/mcp" % sys.argv[1],
                                 json.dumps(body).encode(), h)
    return urllib.request.urlopen(req, timeout=90)
try:
    r = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    sid = r.headers["Mcp-Session-Id"]
    r.read()
    r = post({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
              "params": {"uri": "askdb://shop/schema"}}, sid)
    out = "%d %s" % (r.status, r.read().decode())
except Exception as e:
    out = "0 %s: %s" % (type(e).__name__, e)
open(sys.argv[2], "w").write(out)
PY
    mcpp=$!
    opens_held "$RELAY_PORT" $((held + 1))
    t0=$(now_ms)
    kill -TERM "$pid"
    wait "$pid"
    ms=$(($(now_ms) - t0))
    wait "$mcpp"
    echo "stopped in $ms ms; mcp: $(head -c 300 "$T/mcp.out")" >>"$T/.trace"
    [ "$ms" -lt 3000 ] || fail "askdb serve took $ms ms to stop with a schema read's open in flight"
    grep -qF '"error":{"code":-32000,' "$T/mcp.out" &&
        grep -qF 'the server stopped while the database was being opened' "$T/mcp.out" ||
        fail "mcp: $(head -c 300 "$T/mcp.out")"
    expect_no_sanitizer
}

TESTS=(
    ambiguous_url_never_shows_part_of_the_password
    shell_sql_reads_dollar_quoted_strings
    schema_shows_keys_comments_and_estimates
    other_schemas_show_qualified
    partitions_show_when_their_parent_is_not_readable
    ask_answers_from_another_schema
    ask_says_where_a_missing_value_is
    ask_says_a_subquery_reads_the_outer_row
    reserved_words_are_quoted_in_the_schema
    ask_repairs_a_reserved_word_written_bare
    ask_compares_a_number_with_text_as_text
    sql_converts_types
    sql_ascii_database_reads_as_utf8
    literals_read_as_sql_writes_them_whatever_the_server_says
    sql_shows_money_as_text_and_nan_as_strings
    server_notices_never_reach_the_terminal
    sql_limits_rows_and_bytes
    timeout_cancels_the_statement_on_the_server
    a_timed_out_statement_leaves_its_session_behind
    ctrl_c_cancels_the_statement_on_the_server
    foreign_cancel_is_not_a_timeout
    foreign_server_that_hangs_is_said_so
    foreign_server_that_hangs_a_long_statement_is_given_up
    ask_answers_and_repairs_with_the_servers_message
    placeholders_are_a_syntax_error_to_repair
    permission_errors_say_what_the_role_may_not_read
    refuses_escapes_and_keeps_data_unchanged
    refuses_calls_that_outlive_the_transaction
    refuses_large_object_writes
    denied_names_refuse_only_calls
    sqlite_corpus_changes_nothing
    superuser_is_refused_unless_allowed
    writer_and_file_reader_are_warned
    passwords_work_and_never_show
    learned_pairs_of_a_url_with_a_password_are_listed_and_forgotten
    passwords_with_at_signs_work_and_never_show
    wrong_passwords_leave_the_message_whole
    connection_faults_exit_3_with_a_fix
    connect_timeout_of_0_is_refused
    lock_held_by_another_session_ends_by_lock_timeout
    idle_session_ended_by_the_server_reconnects
    serve_bounds_the_cancel_requests_left_unanswered
    serve_caps_unanswered_cancels_by_destination
    serve_caps_unanswered_cancels_by_the_address_used
    server_gone_silently_is_reported_at_the_cancel
    server_that_answers_no_connection_ends_at_the_cancel_grace
    long_statement_to_a_deaf_server_is_given_up
    deaf_server_at_begin_keeps_to_the_time_limit
    reconnect_after_a_loss_keeps_to_the_time_limit
    reconnect_is_cut_short_by_ctrl_c
    reconnect_to_several_hosts_reaches_the_one_that_answers
    reconnect_to_several_hosts_is_cut_short_by_ctrl_c
    reconnect_to_several_hosts_says_each_hosts_error
    reconnect_to_one_host_with_prefer_standby_keeps_to_the_limit
    reconnect_to_several_hosts_ends_at_a_port_libpq_cannot_read
    reconnect_to_several_hosts_advises_on_the_host_that_ended_it
    first_connect_to_several_hosts_is_cut_short_by_ctrl_c
    first_connect_to_several_hosts_keeps_to_connect_timeout
    ctrl_c_during_the_schema_read_is_cancelled
    cancelled_schema_read_leaves_its_session_behind
    a_timed_out_sample_leaves_its_session_behind
    server_killed_mid_query_is_reported
    serve_stop_cancels_the_opens_in_flight
    mcp_schema_read_does_not_wait_for_a_statement
    mcp_cancel_stops_the_open_of_an_ask
    mcp_cancel_stops_the_open_of_a_first_schema_read
    mcp_cancel_stops_a_first_schema_read
    serve_stop_cancels_the_open_of_a_first_schema_read
)

PASSED=0
FAILED=0
: >"$TMP/all_output"
for name in "${TESTS[@]}"; do
    if [ -n "$FILTER" ] && ! printf '%s\n' "$name" | grep -qE -- "$FILTER"; then
        continue
    fi
    T="$TMP/t/$name"
    mkdir -p "$T"
    : >"$T/.pids"
    ( trap stop_llms EXIT; "$name" ) >>"$T/.trace" 2>&1
    if [ $? -eq 0 ] && [ ! -s "$T/.fail" ]; then
        PASSED=$((PASSED + 1))
        echo "ok $name"
    else
        FAILED=$((FAILED + 1))
        echo "FAIL $name: $( [ -s "$T/.fail" ] && head -n1 "$T/.fail" || echo "exited early")"
        [ -n "${E2E_VERBOSE:-}" ] && tail -n 12 "$T/.trace" | sed 's/^/    /'
    fi
done

# No password ever reached any output.
name=no_password_in_any_output
if [ -z "$FILTER" ] || printf '%s\n' "$name" | grep -qE -- "$FILTER"; then
    if grep -qF -e "$BOB_PW" -e "$DORA_PW" -e "Wr0ng-pw-x" -e "zz-secret" -e "s3cr3t-carol" -e "w%2Frd" "$TMP/all_output"; then
        FAILED=$((FAILED + 1))
        echo "FAIL $name: $(grep -m1 -F -e "$BOB_PW" -e "$DORA_PW" -e "Wr0ng-pw-x" -e "zz-secret" -e "s3cr3t-carol" -e "w%2Frd" "$TMP/all_output" | cut -c1-200)"
    else
        PASSED=$((PASSED + 1))
        echo "ok $name"
    fi
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
