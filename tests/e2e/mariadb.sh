#!/usr/bin/env bash
# tests/e2e/mariadb.sh - askdb against a real, private MariaDB server.
#
#   ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm bash tests/e2e/mariadb.sh
#   bash tests/e2e/mariadb.sh --filter 'refuse|fault'   (ERE on test names)
#   E2E_VERBOSE=1  show the last commands of a failed test
#   E2E_KEEP=1     keep the temp dir (server logs in srv/, tests in t/)
#   MARIADB_TABLES=N  tables of the many-tables test (default 2000)
#
# The run starts its own server (tests/e2e/mariadb_server.sh: a mktemp
# dir, a free loopback port, the `mysql` OS user when root), loads
# examples/shop.db into it with scripts/load_mariadb.py, and creates a
# read-only user (SELECT only) and a writer (every privilege on the
# database, and FILE): askdb's own layers must hold even for the writer.
# The server is stopped on exit. Output: "ok NAME" or "FAIL NAME: reason"
# per test, then "N passed, M failed"; exit 0 only when M is 0. Every askdb
# run is checked for sanitizer reports and for a password in its output.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
ASKDB=$(abspath "${ASKDB:-$ROOT/build/asan/askdb}")
FAKE_LLM=$(abspath "${FAKE_LLM:-$ROOT/build/asan/fake_llm}")
SHOP_DB=$(abspath "${SHOP_DB:-$ROOT/examples/shop.db}")
NTABLES=${MARIADB_TABLES:-2000}

FILTER=
while [ $# -gt 0 ]; do
    case $1 in
    --filter) FILTER=$2; shift 2 ;;
    --filter=*) FILTER=${1#--filter=}; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "mariadb.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

for _v in $(compgen -e); do
    case $_v in ASKDB_*|MYSQL_*|MARIADB_*) unset "$_v" ;; esac
done
unset OPENAI_API_KEY ANTHROPIC_API_KEY http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy='127.0.0.1,localhost' NO_PROXY='127.0.0.1,localhost'
export ASKDB_RETRY_BASE_MS=1 LC_ALL=C PYTHONUTF8=1
RUN_LIMIT_S=${E2E_RUN_LIMIT_S:-60}

for _f in "$ASKDB" "$FAKE_LLM"; do
    [ -x "$_f" ] || { echo "mariadb.sh: $_f is not built" >&2; exit 2; }
done
[ -f "$SHOP_DB" ] || { echo "mariadb.sh: $SHOP_DB is missing (make examples/shop.db)" >&2; exit 2; }
for _c in mariadbd mariadb-install-db mariadb; do
    command -v "$_c" >/dev/null || { echo "mariadb.sh: $_c is missing (scripts/deps.sh installs mariadb-server)" >&2; exit 2; }
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/askdb-mariadb.XXXXXX") || exit 2
chmod 755 "$TMP"
# askdb's own files, and ~/.my.cnf: nothing of the developer's is read.
export ASKDB_CACHE_DIR=$TMP/cache XDG_STATE_HOME=$TMP/state HOME=$TMP/home
mkdir -p "$HOME"
: >"$TMP/pids"

# shellcheck source=tests/e2e/mariadb_server.sh
. "$HERE/mariadb_server.sh"

cleanup() {
    local pid
    while read -r pid; do [ -n "$pid" ] && kill "$pid" 2>/dev/null; done <"$TMP/pids"
    mdb_stop
    if [ -n "${E2E_KEEP:-}" ]; then
        echo "mariadb.sh: kept $TMP ${SRV:-}" >&2
    else
        rm -rf "$TMP"
        case ${SRV:-} in /dev/shm/askdb-mariadb.*) rm -rf "$SRV" ;; esac
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

RO_PW='ro-Pass:w0rd@7'     # ':' and '@' must survive the URL
RW_PW='rw-Secret-8831'
RO_PW_ENC='ro-Pass%3Aw0rd%407'

# The server's files on tmpfs when there is one: a durable disk makes
# creating thousands of tables take minutes (fsync), and nothing here
# needs to survive the run.
SRV=$TMP/srv
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    SRV=$(mktemp -d /dev/shm/askdb-mariadb.XXXXXX) || exit 2
fi
mdb_start "$SRV" || exit 1
python3 "$ROOT/scripts/load_mariadb.py" --socket "$MDB_SOCK" --user root \
    --sqlite "$SHOP_DB" --db shop --quiet || { echo "mariadb.sh: loading shop failed" >&2; exit 1; }
mdb_admin <<SQL || { echo "mariadb.sh: setting up users failed" >&2; exit 1; }
CREATE USER 'ro'@'%' IDENTIFIED BY '$RO_PW';
GRANT SELECT ON shop.* TO 'ro'@'%';
CREATE USER 'rw'@'%' IDENTIFIED BY '$RW_PW';
GRANT ALL PRIVILEGES ON shop.* TO 'rw'@'%';
GRANT FILE ON *.* TO 'rw'@'%';
ALTER TABLE shop.orders COMMENT = 'One row per checkout';
CREATE DATABASE types;
CREATE TABLE types.t (
  i INT, u BIGINT UNSIGNED, d DECIMAL(10,2), f FLOAT, g DOUBLE, b BIT(8),
  ok BOOL, dt DATE, ts DATETIME(3), tm TIME, c CHAR(3), v VARCHAR(20),
  tx TEXT, bl BLOB, vb VARBINARY(4), e ENUM('red','green'), n INT
);
INSERT INTO types.t VALUES (-7, 18446744073709551615, 12.34, 1.1, 2.5,
  b'00000101', TRUE, '2024-02-29', '2024-02-29 13:14:15.125', '-25:00:01',
  'abc', 'Zoë', 'long text', X'00FF', X'0102', 'green', NULL);
GRANT SELECT ON types.* TO 'ro'@'%';
SQL

# Names that are reserved words of MariaDB but not of SQLite: a table
# usage with columns condition, change and long, and a unique key on two.
mdb_admin <<'SQL' || { echo "mariadb.sh: setting up words failed" >&2; exit 1; }
CREATE DATABASE words;
CREATE TABLE words.`usage` (id INT PRIMARY KEY, `condition` VARCHAR(20) NOT NULL,
  `change` INT, `long` INT, UNIQUE KEY (`change`, `long`));
INSERT INTO words.`usage` VALUES (1, 'new', 10, 1), (2, 'used', 20, 2);
GRANT SELECT ON words.* TO 'ro'@'%';
SQL

RO_URL="mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/shop"
RW_URL="mariadb://rw:$RW_PW@127.0.0.1:$MDB_PORT/shop"

# --------------------------------------------------------------------------
# Helpers (inside a test's subshell; T is the test's directory)
# --------------------------------------------------------------------------
fail() {
    printf '%s\n' "$(printf '%s' "$*" | tr '\n' '|' | cut -c1-700)" >"$T/.fail"
    exit 1
}
now_ms() { local t=${EPOCHREALTIME/./}; t=${t#0}; echo $((t / 1000)); }

# run ARGS...: askdb with stdout in $T/out, stderr in $T/err; RC, ELAPSED_MS.
run() {
    local t0
    t0=$(now_ms)
    timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" "$@" </dev/null >"$T/out" 2>"$T/err"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
    { printf '$ askdb'; printf ' %q' "$@"; printf '\n-> exit %s in %s ms\n' "$RC" "$ELAPSED_MS"
      sed 's/^/  stderr: /' "$T/err" | head -20; } >>"$T/.trace"
    [ "$RC" != 124 ] && [ "$RC" != 137 ] || fail "askdb $* did not finish within $RUN_LIMIT_S s"
    after_run "$*"
}
after_run() {
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer' "$T/err"; then
        fail "sanitizer report from: askdb $1 :: $(grep -m3 -E 'Sanitizer|runtime error' "$T/err")"
    fi
    if grep -qF -e "$RO_PW" -e "$RO_PW_ENC" -e "$RW_PW" "$T/out" "$T/err"; then
        fail "a password was printed by: askdb $1"
    fi
}
expect_rc() { [ "$RC" = "$1" ] || fail "exit $RC, expected $1 (stderr: $(head -c 400 "$T/err"))"; }
expect_err_has() { grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1' (stderr: $(head -c 500 "$T/err"))"; }
expect_empty_out() { [ ! -s "$T/out" ] || fail "stdout not empty: $(head -c 200 "$T/out")"; }
expect_out_has() { grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1' (stdout: $(head -c 500 "$T/out"))"; }
expect_out() {
    # shellcheck disable=SC2059
    printf -- "$@" >"$T/expected"
    cmp -s "$T/expected" "$T/out" || fail "stdout differs: expected $(head -c 300 "$T/expected" | od -c | head -5) got $(head -c 300 "$T/out")"
}
expect_faster() { [ "$ELAPSED_MS" -lt "$1" ] || fail "took $ELAPSED_MS ms, expected under $1 ms"; }

# pycheck CODE [ARGS]: Python assertions with out, err (text), reqs (the
# model's request log), args.
pycheck() {
    local code=$1 msg
    shift
    msg=$(python3 - "$T" "${LLMLOG:-}" "$code" "$@" <<'PY' 2>&1
import json, os, sys
tdir, log, code = sys.argv[1:4]
args = sys.argv[4:]
rd = lambda p: open(p, encoding="utf-8", errors="replace", newline="").read() if os.path.exists(p) else ""
out, err = rd(os.path.join(tdir, "out")), rd(os.path.join(tdir, "err"))
reqs = [json.loads(l) for l in open(log, encoding="utf-8") if l.strip()] if log and os.path.exists(log) else []
def msgs(i): return reqs[i]["body"]["messages"]
def user(i): return [m for m in msgs(i) if m["role"] == "user"][-1]["content"]
try:
    exec(code, globals())
except AssertionError as e:
    print(str(e) or "assertion failed"); sys.exit(1)
except Exception as e:
    print("%s: %s" % (type(e).__name__, e)); sys.exit(1)
PY
    ) || fail "$msg"
}

# The scripted model (tests/fake_llm): start_llm SCRIPT_JSON sets URL, LLMLOG.
LLM_N=0
start_llm() {
    local d pid _
    stop_llm
    LLM_N=$((LLM_N + 1))
    d="$T/llm$LLM_N"
    mkdir -p "$d"
    printf '%s' "$1" >"$d/script.json"
    LLMLOG="$d/log"
    : >"$LLMLOG"
    "$FAKE_LLM" --script "$d/script.json" --log "$LLMLOG" --port 0 --port-file "$d/port" 2>"$d/stderr" &
    pid=$!
    echo "$pid" >"$T/.llm"
    echo "$pid" >>"$TMP/pids"
    for _ in $(seq 1 100); do
        [ -s "$d/port" ] && break
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
replies() { python3 -c 'import json,sys; print(json.dumps([{"content": a} for a in sys.argv[1:]]))' "$@"; }
always() { python3 -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "repeat": True}]))' "$1"; }
fence() { printf '```sql\n%s\n```' "$1"; }

# The data of shop as one hash: every table's CHECKSUM, the list of tables
# and views, and the files under secure_file_priv.
data_hash() {
    {
        mdb_admin -N -e "CHECKSUM TABLE shop.categories, shop.products, shop.customers, shop.orders, shop.order_items, shop.payments EXTENDED;
            SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop' ORDER BY 1;
            SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA NOT IN ('shop', 'types', 'many', 'mysql', 'information_schema', 'performance_schema', 'sys');
            SELECT COUNT(*) FROM mysql.global_priv"
        find "$MDB_DIR/files" | LC_ALL=C sort
    } | sha256sum | cut -d' ' -f1
}

# corpus FILE: its statements, NUL-terminated ("expect<TAB>sql"), with
# @FILES@ made the server's file directory.
corpus() {
    python3 -c 'import json, sys
out = sys.stdout.buffer
for l in open(sys.argv[1], encoding="utf-8"):
    d = json.loads(l)
    if "sql" in d and "\0" not in d["sql"]:  # argv cannot carry a NUL
        out.write((d["expect"] + "\t" + d["sql"].replace("@FILES@", sys.argv[2])).encode() + b"\0")' "$1" "$MDB_DIR/files"
}

# Statements running on the server now whose text has $1.
running_like() {
    mdb_admin -N -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%$1%' AND ID <> CONNECTION_ID()"
}

# wait_running TEXT [TRIES [PAUSE]]: until a statement like TEXT runs on
# the server, looking TRIES times PAUSE seconds apart (100, 0.05); returns
# 1 if it never did.
wait_running() {
    local _
    for _ in $(seq 1 "${2:-100}"); do
        [ "$(running_like "$1")" = 1 ] && return 0
        sleep "${3:-0.05}"
    done
    return 1
}

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

# Close every session of the user ro on the server, as wait_timeout does
# to an idle one.
kill_ro() {
    local id
    for id in $(mdb_admin -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'ro'"); do
        mdb_admin -e "KILL CONNECTION $id" 2>/dev/null
    done
    for _ in $(seq 1 50); do
        [ "$(mdb_admin -N -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'ro'")" = 0 ] && return 0
        sleep 0.05
    done
    fail "the sessions of ro were not closed"
}

# A Ctrl-C sent to timeout(1) reaches its command once only with
# --foreground: without it, timeout sends it to the command and then to
# its process group, and a second SIGINT that comes after the first was
# handled is askdb's second Ctrl-C, which ends it at once, silently.
#
# start_relay [OPTION...]: a relay to the server (tests/e2e/silent_relay.py,
# with its options) that stands for the network; RELAY_PORT, RELAY_PID. relay_silent: the server
# as seen through it goes away without a word. relay_deaf: its sessions
# hear nothing more, and a new connection is taken but never greeted.
# relay_mute: the same, but a new connection is greeted and logged in,
# and its first statement goes unanswered. relay_full: its sessions go
# on, but its accept queue is full, so a new connection's connect times
# out (a running server that is overloaded, or a lossy link).
start_relay() {
    rm -f "$T/relay.port.quiet" "$T/relay.port.reset"
    start_listener "$T/relay.port" python3 "$HERE/silent_relay.py" 127.0.0.1 "$MDB_PORT" "$T/relay.port" "$@"
    RELAY_PID=$LISTENER_PID
    RELAY_PORT=$(cat "$T/relay.port")
}
# start_listener PORT_FILE COMMAND...: COMMAND in the background, which
# writes the port it listens on to PORT_FILE; its pid in LISTENER_PID.
start_listener() {
    local pf=$1
    shift
    rm -f "$pf"
    "$@" &
    LISTENER_PID=$!
    echo "$LISTENER_PID" >>"$TMP/pids"
    for _ in $(seq 1 100); do
        [ -s "$pf" ] && return 0
        sleep 0.05
    done
    fail "$* did not start"
}
relay_silent() {
    kill -USR1 "$RELAY_PID"
    for _ in $(seq 1 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$RELAY_PORT") 2>/dev/null || return 0
        sleep 0.05
    done
    fail "the relay still takes connections"
}
# relay_signal SIG FILE WHAT: SIG to the relay, which makes FILE once it
# did WHAT.
relay_signal() {
    kill "-$1" "$RELAY_PID"
    for _ in $(seq 1 100); do
        [ -e "$2" ] && return 0
        sleep 0.05
    done
    fail "the relay did not $3"
}
relay_quiet() { relay_signal "$1" "$T/relay.port.quiet" "go quiet"; }
relay_deaf() { relay_quiet USR2; }
relay_mute() { relay_quiet HUP; }
relay_full() { relay_quiet WINCH; }
# relay_reset: an RST to each client it relays (a NAT or firewall that
# dropped the connections); it goes on relaying new ones.
relay_reset() { relay_signal ALRM "$T/relay.port.reset" "reset its connections"; }

# relay_sql SECONDS BREAK: `askdb sql --timeout 1000` of SLEEP(SECONDS)
# through a new relay, which BREAK (relay_deaf, relay_mute) breaks once
# the statement runs. Sets RC, ELAPSED_MS (from askdb's start) and url;
# the relay is left for the caller.
relay_sql() {
    local pid t0
    start_relay
    url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop"
    t0=$(now_ms)
    timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" sql --timeout 1000 "$url" "SELECT SLEEP($1)" </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    wait_running "SLEEP($1)"
    "$2"
    wait "$pid"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
}

# relay_ctrl_c SECONDS BREAK [sql]: `askdb ask --timeout 20000` whose
# model answers SLEEP(SECONDS) (or `askdb sql` of it), through a new relay
# that BREAK breaks once the statement runs, then Ctrl-C. Sets RC and
# ELAPSED_MS (from the Ctrl-C).
relay_ctrl_c() {
    start_relay
    ctrl_c_sleep "$@"
}
# ctrl_c_sleep SECONDS BREAK [sql]: the same through the relay started.
ctrl_c_sleep() {
    local pid
    url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop"
    if [ "${3:-}" = sql ]; then
        set -- "$1" "$2" sql --timeout 20000 "$url" "SELECT SLEEP($1)"
    else
        start_llm "$(always "$(fence "SELECT SLEEP($1) AS s")")"
        set -- "$1" "$2" ask --llm-url "$URL" --model test --timeout 20000 --no-question-check "$url" "Sleep a while"
    fi
    timeout --foreground -k "$RUN_LIMIT_S" "$RUN_LIMIT_S" env --default-signal=INT "$ASKDB" "${@:3}" \
        </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    wait_running "SLEEP($1)"
    "$2"
    interrupt
}

# start_shell ARGS...: askdb shell ARGS in the background, reading its
# lines from $T/fifo (written through fd 7), its output in $T/out and
# $T/err; its pid in pid (the caller's local).
start_shell() {
    rm -f "$T/fifo"
    mkfifo "$T/fifo"
    (exec timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" shell "$@") <"$T/fifo" >"$T/out" 2>"$T/err" &
    pid=$!
    echo "$pid" >>"$TMP/pids"
    exec 7>"$T/fifo"
}

# start_shell_fg ARGS...: start_shell's shell under timeout --foreground,
# so that a Ctrl-C (kill -INT "$pid") reaches it once (see above); its
# -k counts from the first signal timeout passes on, a Ctrl-C too.
start_shell_fg() {
    rm -f "$T/fifo"
    mkfifo "$T/fifo"
    (exec timeout --foreground -k "$RUN_LIMIT_S" "$RUN_LIMIT_S" env --default-signal=INT "$ASKDB" shell "$@") \
        <"$T/fifo" >"$T/out" 2>"$T/err" &
    pid=$!
    echo "$pid" >>"$TMP/pids"
    exec 7>"$T/fifo"
}

# relay_holds_bytes: wait up to 5 s until a connection the relay took
# holds bytes it never read (/proc/net/tcp's rx_queue of an established
# connection on its port): a client of the deaf relay sent something and
# waits for its answer.
relay_holds_bytes() {
    for _ in $(seq 1 100); do
        python3 -c 'import sys
port = "%04X" % int(sys.argv[1])
for l in open("/proc/net/tcp").readlines()[1:]:
    f = l.split()
    if f[1].endswith(":" + port) and f[3] == "01" and int(f[4].split(":")[1], 16) > 0:
        sys.exit(0)
sys.exit(1)' "$RELAY_PORT" && return 0
        sleep 0.05
    done
    fail "nothing waits on the relay"
}

# reconnect_through BREAK SECONDS: a shell with --timeout 1000 through a
# new relay, whose first statement (SLEEP(SECONDS)) BREAK breaks once it
# runs, lost; then its next .sql, which must connect again. Sets RC and
# ELAPSED_MS (from that .sql to the shell's words that it cannot).
reconnect_through() {
    local pid t0
    start_relay
    url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop"
    start_shell --llm-url http://127.0.0.1:9/v1 --model test --timeout 1000 "$url"
    echo ".sql SELECT SLEEP($2) AS first" >&7
    wait_running "SLEEP($2)"
    "$1"
    wait_err "lost the connection" 10
    t0=$(now_ms)
    echo ".sql SELECT 1 AS x" >&7
    for _ in $(seq 1 400); do
        grep -qE "cannot (re)?connect|cannot make the session" "$T/err" && break
        sleep 0.05
    done
    ELAPSED_MS=$(($(now_ms) - t0))
    exec 7>&-
    wait "$pid"
    RC=$?
}

# wait_err TEXT [SECONDS]: wait up to SECONDS (5) for TEXT in $T/err.
wait_err() {
    for _ in $(seq 1 $((${2:-5} * 20))); do
        grep -qF -- "$1" "$T/err" && return 0
        sleep 0.05
    done
    fail "no '$1' in stderr: $(head -c 300 "$T/err")"
}

# wait_out TEXT: wait up to 5 s for TEXT in $T/out.
wait_out() {
    for _ in $(seq 1 100); do
        grep -qF -- "$1" "$T/out" && return 0
        sleep 0.05
    done
    fail "no '$1' in stdout: $(head -c 300 "$T/out") $(head -c 300 "$T/err")"
}

# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

schema_shows_keys_comments_and_estimates() {
    run schema "$RO_URL"
    expect_rc 0
    pycheck '
s = out
for x in ("CREATE TABLE categories", "CREATE TABLE orders (", "CREATE VIEW customer_revenue",
          "FOREIGN KEY (customer_id) REFERENCES customers(id)", "UNIQUE (order_id, product_id)",
          "-- EUR, = SUM(quantity * unit_price) of its items", "One row per checkout",
          "id bigint(20) PRIMARY KEY", "); -- 10 rows", "); -- 40 rows"):
    assert x in s, "schema lacks %r:\n%s" % (x, s[:1500])
o = s[s.index("CREATE TABLE orders ("):]
o = o[:o.index("\n);") + 40]
assert "about 250 rows" in o, "orders (250 rows, over the sample) has no estimate: " + o
assert "e.g. " in s and "Olivia" in s, "no sample values"
assert "types" not in s.split("CREATE")[0], s[:200]
'
    # The same over the socket, with mysql:// and the database in the URL.
    run schema "mysql://ro:$RO_PW_ENC@localhost/shop?socket=$MDB_SOCK"
    expect_rc 0
    expect_out_has "CREATE TABLE payments"
}

# A JSON column (MariaDB: LONGTEXT with CHECK (json_valid(doc))) is json
# in the schema, not longtext; a plain LONGTEXT stays longtext.
schema_names_json_columns() {
    mdb_admin types <<'SQL' || fail "creating docs failed"
CREATE TABLE docs (id INT, doc JSON, plain LONGTEXT, `od``d` JSON);
SQL
    run schema "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/types"
    expect_rc 0
    pycheck '
d = out[out.index("CREATE TABLE docs ("):]
d = d[:d.index(");")]
assert "  doc json,\n" in d and "  plain longtext,\n" in d and "\"od`d\" json" in d, d
'
}

sql_converts_every_type() {
    run sql -f json "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/types" "SELECT * FROM t"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["columns"] == ["i","u","d","f","g","b","ok","dt","ts","tm","c","v","tx","bl","vb","e","n"], j["columns"]
r = j["rows"][0]
want = [-7, "18446744073709551615", 12.34, 1.1, 2.5, 5, 1, "2024-02-29",
        "2024-02-29 13:14:15.125", "-25:00:01", "abc", "Zo\u00eb", "long text",
        {"blob_hex": "00ff"}, {"blob_hex": "0102"}, "green", None]
assert r == want, "\n%r\n%r" % (r, want)
'
    # ANSI: double quotes name columns, || concatenates; standard strings.
    run sql -f csv "$RO_URL" "SELECT \"first_name\" || ' ' || last_name AS n, 'a\\b' AS bs FROM customers WHERE id = 1"
    expect_rc 0
    expect_out 'n,bs\nOlivia Brown,a\\b\n'
    # Averages and divisions to a double's precision, not MariaDB's 4
    # decimals (div_precision_increment): as SQLite gives them.
    run sql -f json "$RO_URL" "SELECT AVG(x) AS a, 1 / 3 AS d FROM (SELECT 1 AS x UNION ALL SELECT 1 UNION ALL SELECT 2) q"
    expect_rc 0
    pycheck '
r = json.loads(out)["rows"][0]
assert abs(r[0] - 4 / 3) < 1e-12 and abs(r[1] - 1 / 3) < 1e-12, r
'
}

# BIT is unsigned: BIT(64) with every bit set is 18446744073709551615
# (was -1); past INT64_MAX its digits come as text, as DuckDB's UBIGINT.
bit_64_reads_as_unsigned() {
    mdb_admin types -e "CREATE TABLE bits (k INT, b BIT(64));
        INSERT INTO bits VALUES (1, 0), (2, 5), (3, 9223372036854775807), (4, 9223372036854775808),
        (5, b'1111111111111111111111111111111111111111111111111111111111111111');" || fail "creating bits failed"
    run sql -f json "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/types" "SELECT b FROM bits ORDER BY k"
    expect_rc 0
    pycheck '
r = [x[0] for x in json.loads(out)["rows"]]
assert r == [0, 5, 9223372036854775807, "9223372036854775808", "18446744073709551615"], r
'
}

# BIGINT UNSIGNED past INT64_MAX, and a DECIMAL past what a double
# holds (SUM() of one), keep every digit in each format: their text, as
# BIT(64)'s (they were reals: 1.84467440737096e+19).
bigint_unsigned_keeps_every_digit() {
    mdb_admin types -e "CREATE TABLE big (k INT, u BIGINT UNSIGNED);
        INSERT INTO big VALUES (1, 18446744073709551615), (2, 9223372036854775808), (3, 9223372036854775807), (4, 5);" ||
        fail "creating big failed"
    local q="SELECT k, u, SUM(u) AS s, CAST(u AS DECIMAL(65,0)) * 1000000 AS m FROM big GROUP BY k, u ORDER BY k"
    run sql -f json "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/types" "$q"
    expect_rc 0
    pycheck '
r = json.loads(out)["rows"]
assert r == [[1, "18446744073709551615", "18446744073709551615", "18446744073709551615000000"],
             [2, "9223372036854775808", "9223372036854775808", "9223372036854775808000000"],
             [3, 9223372036854775807, 9223372036854775807, "9223372036854775807000000"],
             [4, 5, 5.0, 5000000.0]], r
'
    run sql -f csv "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/types" "$q"
    expect_rc 0
    expect_out 'k,u,s,m\n1,18446744073709551615,18446744073709551615,18446744073709551615000000\n2,9223372036854775808,9223372036854775808,9223372036854775808000000\n3,9223372036854775807,9223372036854775807,9223372036854775807000000\n4,5,5,5000000\n'
    run sql -f table "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/types" "SELECT u FROM big WHERE k = 1"
    expect_rc 0
    expect_out_has "| 18446744073709551615 |"
    # The vote takes u and SUM(u) for the same answer, as their values are.
    start_llm "$(replies "$(fence "SELECT u FROM big WHERE k = 1")" "$(fence "SELECT SUM(u) AS u FROM big WHERE k = 1")")"
    run ask --llm-url "$URL" --model test --candidates 2 --retries 0 --no-settle --no-question-check -f json \
        "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/types" "The largest u"
    expect_rc 0
    pycheck '
d = json.loads(out)
assert d["rows"] == [["18446744073709551615"]] and d["candidates"] == 2 and d["confidence"] == 1, d
'
}

# A zero value comes in the form of its column: the time part of a zero
# DATETIME(6) (was '0000-00-00') and a zero TIME (was '0000-00-00' too).
zero_dates_keep_their_time_part() {
    mdb_admin types -e "CREATE TABLE zero (k INT, dt DATETIME(6), d0 DATETIME, tm TIME, t3 TIME(3), d DATE);
        INSERT INTO zero VALUES (1, '0000-00-00 00:00:00', '0000-00-00 00:00:00', '00:00:00', '00:00:00', '0000-00-00'),
        (2, '2024-02-29 00:00:00.000001', '2024-02-29 00:00:00', '-00:00:01', '838:59:59', '2024-02-29');" || fail "creating zero failed"
    run sql -f json "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/types" "SELECT dt, d0, tm, t3, d FROM zero ORDER BY k"
    expect_rc 0
    pycheck '
r = json.loads(out)["rows"]
assert r == [["0000-00-00 00:00:00.000000", "0000-00-00 00:00:00", "00:00:00", "00:00:00.000", "0000-00-00"],
             ["2024-02-29 00:00:00.000001", "2024-02-29 00:00:00", "-00:00:01", "838:59:59.000", "2024-02-29"]], r
'
}

sql_limits_rows_and_bytes() {
    run sql -f json --max-rows 3 "$RO_URL" "SELECT id FROM orders ORDER BY id"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["rows"] == [[1], [2], [3]] and j["truncated"] == "rows", j
'
    run sql -f json --max-rows 3 "$RO_URL" "SELECT id FROM orders ORDER BY id LIMIT 3"
    expect_rc 0
    pycheck 'assert json.loads(out)["truncated"] is False, out'
    run sql -f json --max-bytes 100000 "$RO_URL" "SELECT id, REPEAT('0123456789', 3000) AS pad FROM orders ORDER BY id"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["truncated"] == "bytes" and j["row_count"] == 3, (j["truncated"], j["row_count"])
assert all(len(r[1]) == 30000 for r in j["rows"])
'
    # A huge result stops at once: the rest is not read (KILL QUERY).
    run sql -f csv --max-bytes 100000 --timeout 20000 "$RO_URL" \
        "SELECT REPEAT('x', 50000) FROM orders a, orders b, orders c"
    expect_rc 0
    expect_faster 5000
    [ "$(running_like "orders a, orders b, orders c")" = 0 ] || fail "the big query still runs on the server"
}

sql_timeout_kills_the_query_on_the_server() {
    run sql --timeout 500 "$RO_URL" "SELECT SLEEP(30)"
    expect_rc 1
    expect_err_has "500 ms time limit"
    expect_faster 3000
    sleep 0.2
    [ "$(running_like 'SLEEP(30)')" = 0 ] || fail "SLEEP(30) still runs on the server"
    # SLEEP() in an expression: the time limit, not its 1 or 0 as a value.
    run sql --timeout 500 -f csv "$RO_URL" "SELECT SLEEP(30) = 0 AS s"
    expect_rc 1
    expect_err_has "500 ms time limit"
    expect_faster 3000
    [ ! -s "$T/out" ] || fail "rows printed: $(cat "$T/out")"
    # The same through ask: each attempt is a timeout, and the model hears it.
    start_llm "$(always "$(fence "SELECT SLEEP(30) AS s")")"
    run ask --llm-url "$URL" --model test --timeout 400 -f json --no-question-check "$RO_URL" "Sleep"
    expect_rc 1
    pycheck '
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["timeout"] * 3, j["attempts"]
'
}

ctrl_c_kills_the_running_query() {
    # Only askdb's own KILL QUERY can stop this in time: the server's limit
    # is the 30 s --timeout.
    local pid t0 _
    start_llm "$(always "$(fence "SELECT SLEEP(25) AS s")")"
    env --default-signal=INT "$ASKDB" ask --llm-url "$URL" --model test --timeout 30000 \
        --no-question-check "$RO_URL" "Sleep a while" >"$T/out" 2>"$T/err" &
    pid=$!
    wait_running 'SLEEP(25)' 100 0.1
    [ "$(running_like 'SLEEP(25)')" = 1 ] || fail "the query never started on the server"
    interrupt
    after_run "ask (Ctrl-C)"
    expect_rc 130
    expect_faster 3000
    expect_err_has "cancelled"
    sleep 0.3
    [ "$(running_like 'SLEEP(25)')" = 0 ] || fail "SLEEP(25) still runs on the server after Ctrl-C"
}

# A table whose sample values take seconds to read (a virtual column
# that hashes 8 MB a row), in a database of its own: Ctrl-C while the
# schema read samples it ends the read as cancelled (130, nothing on
# stdout), and the statement no longer runs on the server. Before, the
# schema read's statements blocked with no watch on the Ctrl-C: askdb
# printed the whole schema after the samples and exited 0.
ctrl_c_during_the_schema_read_is_cancelled() {
    local pid url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/slowschema"
    mdb_admin >"$T/setup" 2>&1 <<'SQL' || fail "cannot make the slow table: $(head -c 300 "$T/setup")"
CREATE DATABASE slowschema;
CREATE TABLE slowschema.slow (id INT PRIMARY KEY,
  h VARCHAR(128) AS (SHA2(REPEAT(CHAR(65 + id % 26), 8000000), 512)) VIRTUAL);
USE slowschema;
INSERT INTO slow (id) SELECT seq FROM seq_1_to_200;
GRANT SELECT ON slowschema.* TO 'ro'@'%';
SQL
    env --default-signal=INT "$ASKDB" schema --timeout 30000 "$url" </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    wait_running 'JSON_ARRAY' 200 0.05 || fail "the samples were never read"
    sleep 0.3
    interrupt
    after_run "schema (Ctrl-C)"
    sleep 0.5
    local still
    still=$(running_like 'JSON_ARRAY')
    mdb_admin -e "DROP DATABASE slowschema" >/dev/null
    expect_rc 130
    expect_faster 3000
    expect_err_has "cancelled"
    [ ! -s "$T/out" ] || fail "a schema was printed after Ctrl-C: $(head -c 300 "$T/out")"
    [ "$still" = 0 ] || fail "the samples' statement still runs on the server after Ctrl-C"
}

# kill_query_like TEXT: wait for a statement of ro whose text has TEXT,
# then KILL QUERY it from the admin's session, as a DBA would.
kill_query_like() {
    local id=
    for _ in $(seq 1 100); do
        id=$(mdb_admin -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'ro' AND INFO LIKE '%$1%'")
        [ -n "$id" ] && break
        sleep 0.1
    done
    [ -n "$id" ] || fail "the query '$1' never started on the server"
    mdb_admin -e "KILL QUERY $id" || fail "KILL QUERY $id failed"
}

# A statement another session stopped (a DBA's KILL QUERY: error 1317)
# long before askdb's limit is said so, class database: ask neither calls
# it a timeout nor repairs and runs it again.
killed_by_another_session_is_not_a_timeout() {
    local pid
    timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" sql --timeout 30000 "$RO_URL" "SELECT SLEEP(19) AS s" >"$T/out" 2>"$T/err" &
    pid=$!
    kill_query_like 'SLEEP(19)'
    wait "$pid"
    RC=$?
    after_run "sql (KILL QUERY by another session)"
    expect_rc 1
    expect_err_has "cancelled by another session"
    grep -q "time limit (--timeout)" "$T/err" && fail "called a timeout: $(cat "$T/err")"
    # A slow query, not SLEEP(): a join of billions of rows the server
    # works through until the KILL QUERY.
    timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" sql -f csv --timeout 30000 "$RO_URL" \
        "SELECT COUNT(*) AS n FROM order_items a, order_items b, order_items c, order_items d WHERE a.id + b.id + c.id + d.id > 7" >"$T/out" 2>"$T/err" &
    pid=$!
    kill_query_like 'order_items d WHERE'
    wait "$pid"
    RC=$?
    after_run "sql (slow join, KILL QUERY by another session)"
    expect_rc 1
    expect_err_has "askdb: the statement was cancelled by another session (Query execution was interrupted, error 1317), not by askdb's 30000 ms time limit: an administrator may have stopped it (KILL QUERY); ask again, or ask the server's administrator why"
    [ ! -s "$T/out" ] || fail "rows printed: $(cat "$T/out")"
    [ "$(running_like 'order_items d WHERE')" = 0 ] || fail "the join still runs on the server"
    # SLEEP() in an expression: not its 1 or 0 as the answer.
    timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" sql -f csv --timeout 30000 "$RO_URL" "SELECT SLEEP(17) = 0 AS s" >"$T/out" 2>"$T/err" &
    pid=$!
    kill_query_like 'SLEEP(17)'
    wait "$pid"
    RC=$?
    after_run "sql (SLEEP in an expression, KILL QUERY by another session)"
    expect_rc 1
    expect_err_has "cancelled by another session"
    [ ! -s "$T/out" ] || fail "rows printed: $(cat "$T/out")"
    start_llm "$(always "$(fence "SELECT SLEEP(18) AS s")")"
    timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" ask --llm-url "$URL" --model test --timeout 30000 --no-question-check \
        --candidates 1 -f json "$RO_URL" "Sleep a while" >"$T/out" 2>"$T/err" &
    pid=$!
    kill_query_like 'SLEEP(18)'
    wait "$pid"
    RC=$?
    after_run "ask (KILL QUERY by another session)"
    expect_rc 1
    pycheck '
assert len(reqs) == 1, ("the model was asked for a repair", len(reqs))
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["database"], j["attempts"]
assert "cancelled by another session" in j["error"], j["error"]
'
    [ "$(running_like 'SLEEP(18)')" = 0 ] || fail "the statement ran again"
}

# BENCHMARK() cut short by another session's KILL QUERY returns the 0 of
# one that ran to its end, with no error, warning or status to tell
# (MariaDB 10.11; SLEEP() ends with error 1317): it is refused before it
# runs, so no such 0 is ever taken as the answer (it was: exit 0, "0").
benchmark_is_refused_as_its_kill_cannot_be_told() {
    local pid id
    timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" sql -f csv --timeout 30000 "$RO_URL" \
        "SELECT BENCHMARK(2000000000, MD5('x')) AS b" >"$T/out" 2>"$T/err" &
    pid=$!
    # As a DBA would: KILL QUERY it while it runs, if it ever does.
    for _ in $(seq 1 30); do
        kill -0 "$pid" 2>/dev/null || break
        id=$(mdb_admin -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'ro' AND INFO LIKE '%BENCHMARK(2000000000%'")
        if [ -n "$id" ]; then
            sleep 0.3
            mdb_admin -e "KILL QUERY $id"
            break
        fi
        sleep 0.1
    done
    wait "$pid"
    RC=$?
    after_run "sql (BENCHMARK, KILL QUERY by another session)"
    expect_rc 1
    expect_err_has "refused: BENCHMARK() only measures time"
    [ ! -s "$T/out" ] || fail "rows printed: $(cat "$T/out")"
    # A quoted name is the same function; a column or a string so named is not.
    run sql "$RO_URL" "SELECT \`benchmark\`(1, 1)"
    expect_rc 1
    expect_err_has "refused: BENCHMARK()"
    run sql -f csv "$RO_URL" "SELECT 'benchmark(' AS benchmark"
    expect_rc 0
    expect_out 'benchmark\nbenchmark(\n'
    # Through ask: the model hears why, and its repair answers.
    start_llm "$(replies "$(fence "SELECT BENCHMARK(1000, MD5('x')) AS b")" "$(fence "SELECT COUNT(*) AS n FROM customers")")"
    run ask --llm-url "$URL" --model test --candidates 1 --no-question-check -f json "$RO_URL" "How many customers?"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["rows"] == [[60]] and [a["error"] for a in j["attempts"]] == ["refused", "none"], (j["rows"], j["attempts"])
assert "BENCHMARK()" in user(1), user(1)
'
}

ask_answers_and_repairs_with_the_model() {
    local bad good
    bad=$(fence 'SELECT id, first_nam FROM customers ORDER BY id LIMIT 3')
    good=$(fence 'SELECT id, first_name FROM customers ORDER BY id LIMIT 3')
    start_llm "$(replies "$bad" "$good" "$(fence "SELECT 'extra' AS oops")")"
    run ask --llm-url "$URL" --model test -f csv --no-question-check "$RO_URL" "First three customers?"
    expect_rc 0
    expect_out 'id,first_name\n1,Olivia\n2,Alejandro\n3,Luc\303\255a\n'
    pycheck '
assert len(reqs) == 2, len(reqs)
sys0 = msgs(0)[0]["content"] + msgs(0)[1]["content"]
assert "MariaDB" in sys0, "the prompt does not name the dialect"
assert "One row per checkout" in sys0 and "EUR, = SUM(quantity" in sys0, "comments missing from the prompt"
last = user(1)
assert "no such column: first_nam" in last, last
assert "customers.first_name" in last, "no hint naming the real column: " + last
'
    start_llm "$(replies "$(fence "SELECT status, COUNT(*) AS n FROM orders GROUP BY status ORDER BY status")")"
    run ask --llm-url "$URL" --model test -f csv --no-question-check "$RO_URL" "Orders per status?"
    expect_rc 0
    sqlite3 -csv -header "$SHOP_DB" "SELECT status, COUNT(*) AS n FROM orders GROUP BY status ORDER BY status" >"$T/want"
    cmp -s "$T/want" "$T/out" || fail "MariaDB and SQLite disagree: $(cat "$T/out") vs $(cat "$T/want")"
}

# A text value found nowhere in its column, on MariaDB's types and its
# estimated counts (tables over 200 rows): the few values of a code column
# are listed whole ('Japan' against country codes), and a value stored in
# a table a foreign key away is said so (payments.method), by the checks'
# own queries. shop is loaded with a binary collation, so '=' compares as
# SQLite's does; ask_follows_a_case_insensitive_collation has the other.
ask_says_where_a_missing_value_is() {
    start_llm "$(replies "$(fence "SELECT COUNT(*) AS n FROM orders o JOIN customers c ON o.customer_id = c.id WHERE c.country = 'Japan'")" "$(fence "SELECT COUNT(*) AS n FROM orders o JOIN customers c ON o.customer_id = c.id WHERE c.country = 'JP'")" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --candidates 1 -f csv --no-question-check "$RO_URL" "How many orders did customers from Japan place?"
    expect_rc 0
    expect_out 'n\n8\n'
    pycheck '
assert len(reqs) == 2, len(reqs)
last = user(1)
assert "customers.country has no value '"'"'Japan'"'"'; its 10 values are '"'"'DE'"'"', '"'"'ES'"'"'" in last, last
'
    start_llm "$(replies "$(fence "SELECT COUNT(*) AS n FROM orders WHERE status = 'gift_card'")" "$(fence "SELECT COUNT(*) AS n FROM payments WHERE method = 'gift_card'")" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --candidates 1 -f csv --no-question-check "$RO_URL" "How many payments were made with a gift card?"
    expect_rc 0
    expect_out 'n\n23\n'
    pycheck '
assert len(reqs) == 2, len(reqs)
last = user(1)
assert "'"'"'gift_card'"'"' is not a value of orders.status; it is stored in payments.method" in last, last
'
}

# The checks' looks compare as the engine does. Under MariaDB's usual
# case-insensitive collations (shop loaded again as shopci, with
# utf8mb4_general_ci) 'jp' = 'JP': a count of customers from 'jp' is
# right as written, and no check says the value is missing or offers
# 'JP', a spelling the engine takes for the same (one model request);
# 'GIFT_CARD' against orders.status is said to be stored in
# payments.method, which holds 'gift_card', since the engine matches it
# there.
ask_follows_a_case_insensitive_collation() {
    python3 "$ROOT/scripts/load_mariadb.py" --socket "$MDB_SOCK" --user root \
        --sqlite "$SHOP_DB" --db shopci --collation utf8mb4_general_ci --quiet ||
        fail "loading shopci failed"
    mdb_admin -e "GRANT SELECT ON shopci.* TO 'ro'@'%'" || fail "grant failed"
    local url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/shopci"
    start_llm "$(replies "$(fence "SELECT COUNT(*) AS n FROM customers WHERE country = 'jp'")" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test --candidates 1 -f csv --no-question-check "$url" "How many customers are from Japan?"
    expect_rc 0
    expect_out 'n\n4\n'
    pycheck 'assert len(reqs) == 1, [user(i) for i in range(1, len(reqs))]'
    # Asked without and with the value index (--values), whose matches
    # fold case: the engine, not a byte comparison, says whether they are
    # the value.
    local values
    for values in "" --values; do
        start_llm "$(replies "$(fence "SELECT COUNT(*) AS n FROM orders WHERE status = 'GIFT_CARD'")" "$(fence "SELECT COUNT(*) AS n FROM payments WHERE method = 'GIFT_CARD'")" "$(fence "SELECT 'extra request' AS oops")")"
        run ask --llm-url "$URL" --model test --candidates 1 -f csv --no-question-check $values "$url" "How many payments were made with a gift card?"
        expect_rc 0
        expect_out 'n\n23\n'
        pycheck '
assert len(reqs) == 2, len(reqs)
last = user(1)
assert "'"'"'GIFT_CARD'"'"' is not a value of orders.status; it is stored in payments.method" in last, last
'
    done
}

# Names that are reserved words of MariaDB but not of SQLite (usage,
# condition, change, long: the server's parser refuses them bare, asked
# word by word of information_schema.KEYWORDS) are shown quoted, as a
# query must write them (ANSI_QUOTES), and a query that writes them so
# runs, through sql and through ask.
reserved_words_are_quoted_in_the_schema() {
    local words="mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/words"
    run schema "$words"
    expect_rc 0
    pycheck '
want = ("CREATE TABLE \"usage\" (\n"
        "  id int(11) PRIMARY KEY,\n"
        "  \"condition\" varchar(20) NOT NULL, -- e.g. \x27new\x27, \x27used\x27\n"
        "  \"change\" int(11),\n"
        "  \"long\" int(11),\n"
        "  UNIQUE (\"change\", \"long\")\n"
        ");")
assert want in out, out
'
    run sql -f csv "$words" 'SELECT "condition", "change", "long" FROM "usage" ORDER BY id'
    expect_rc 0
    expect_out 'condition,change,long\nnew,10,1\nused,20,2\n'
    start_llm "$(replies "$(fence 'SELECT "condition" FROM "usage" WHERE "change" > 15')" "$(fence "SELECT 'extra' AS oops")")"
    run ask --llm-url "$URL" --model test -f csv --no-question-check "$words" "Which condition has a change over 15?"
    expect_rc 0
    expect_out 'condition\nused\n'
    pycheck '
assert len(reqs) == 1, len(reqs)
first = msgs(0)[0]["content"] + msgs(0)[1]["content"]
assert "CREATE TABLE \"usage\" (" in first and "  \"change\" int(11)," in first, first
'
}

# A reserved word written bare as a name is a syntax error (near
# 'condition ...'); the repair hint says to quote it, and the table's name
# too, and the quoted query answers.
ask_repairs_a_reserved_word_written_bare() {
    local words="mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/words"
    start_llm "$(replies "$(fence 'SELECT condition FROM usage ORDER BY id')" "$(fence 'SELECT "condition" FROM "usage" ORDER BY id')" "$(fence "SELECT 'extra' AS oops")")"
    run ask --llm-url "$URL" --model test -f csv --no-question-check "$words" "Conditions?"
    expect_rc 0
    expect_out 'condition\nnew\nused\n'
    pycheck '
assert len(reqs) == 2, len(reqs)
last = user(1)
assert "near \x27condition FROM usage" in last, last
assert "Hint: condition is a reserved word in MariaDB; write the name quoted: \"condition\".\n" in last, last
assert "Hint: usage is a reserved word in MariaDB; write the name quoted: \"usage\".\n" in last, last
'
}

# tests/security/mariadb_corpus.jsonl: each statement refused by `askdb
# sql` (exit 1, "refused"), as the writer; the data, the tables and the
# server's file directory unchanged after each.
refuses_writes_and_escapes_with_data_unchanged() {
    local h0 h q n
    h0=$(data_hash)
    corpus "$ROOT/tests/security/mariadb_corpus.jsonl" >"$T/corpus"
    [ "$(tr -cd '\0' <"$T/corpus" | wc -c)" -gt 60 ] || fail "the corpus is short"
    while IFS=$'\t' read -r -d '' _ q; do
        run sql -f csv "$RW_URL" "$q"
        [ "$RC" = 1 ] || fail "exit $RC for: $q ($(head -c 200 "$T/out"))"
        grep -q "refused" "$T/err" || echo "$q :: $(head -c 200 "$T/err")" >>"$T/not_refused"
        [ ! -s "$T/out" ] || fail "rows printed for: $q"
        h=$(data_hash)
        [ "$h" = "$h0" ] || fail "the data or the server's files changed after: $q"
    done <"$T/corpus"
    [ ! -s "$T/not_refused" ] || fail "failed but not as refused: $(cat "$T/not_refused")"
    # Through ask, a few, as the model's replies.
    local stmt
    for stmt in "DELETE FROM orders" "SELECT 1; DROP TABLE orders" "SELECT LOAD_FILE('/etc/passwd') AS f" \
                "SELECT * FROM orders INTO OUTFILE '$MDB_DIR/files/o.txt'" "INSERT INTO categories (id, name) VALUES (997, 'z') RETURNING id"; do
        start_llm "$(always "$(fence "$stmt")")"
        run ask --llm-url "$URL" --model test -f json --no-question-check "$RW_URL" "Please change the data"
        expect_rc 1
        pycheck '
j = json.loads(out)
# A change refused twice ends the question; a read is repaired to the end.
n = 3 if args[0].startswith("SELECT") and ";" not in args[0] and " INTO " not in args[0] else 2
assert [a["error"] for a in j["attempts"]] == ["refused"] * n, (args[0], j["attempts"])
' "$stmt"
        [ "$(data_hash)" = "$h0" ] || fail "ask changed the data with: $stmt"
    done
    n=$(mdb_admin -N -e "SELECT IS_FREE_LOCK('askdb')")
    [ "$n" = 1 ] || fail "a user lock is held after the run"
}

sqlite_corpus_changes_nothing() {
    # The SQLite attack corpus (tests/security/corpus.jsonl), as the writer:
    # in MariaDB's dialect most of it is refused or fails; whatever it
    # does, nothing changes. A statement the corpus expects to be refused
    # or to fail must not succeed here either.
    local h0 q expect
    h0=$(data_hash)
    corpus "$ROOT/tests/security/corpus.jsonl" >"$T/corpus"
    while IFS=$'\t' read -r -d '' expect q; do
        run sql -f csv --timeout 500 "$RW_URL" "$q"
        case $expect:$RC in
        any:0|any:1|refuse:1|fail:1) ;;
        *) fail "exit $RC (expected $expect) for: $q" ;;
        esac
    done <"$T/corpus"
    [ "$(data_hash)" = "$h0" ] || fail "the SQLite corpus changed the data"
}

server_layers_hold_without_the_text_guard() {
    # What askdb's session does, statement by statement, for the writer:
    # the server itself refuses the writes the text scan catches first.
    local out
    out=$(mariadb --no-defaults -h127.0.0.1 -P"$MDB_PORT" -urw -p"$RW_PW" shop 2>&1 <<'SQL'
SET SESSION TRANSACTION READ ONLY;
START TRANSACTION READ ONLY;
DELETE FROM orders;
SQL
)
    case $out in *1792*) ;; *) fail "a READ ONLY transaction let DELETE through: $out" ;; esac
    out=$(mariadb --no-defaults -h127.0.0.1 -P"$MDB_PORT" -urw -p"$RW_PW" shop 2>&1 <<'SQL'
SET SESSION TRANSACTION READ ONLY;
INSERT INTO categories (id, name) VALUES (996, 'w') RETURNING id;
SQL
)
    case $out in *1792*) ;; *) fail "a read-only session let INSERT ... RETURNING through: $out" ;; esac
    out=$(mariadb --no-defaults -h127.0.0.1 -P"$MDB_PORT" -urw -p"$RW_PW" shop 2>&1 <<'SQL'
PREPARE s FROM 'SELECT 1; DELETE FROM orders';
SQL
)
    case $out in *1064*) ;; *) fail "prepare took two statements: $out" ;; esac
    [ "$(mdb_admin -N -e 'SELECT COUNT(*) FROM shop.orders')" = 250 ] || fail "orders changed"
}

check_validates_without_running() {
    # askdb sql runs check's prepare first: a bad name fails without
    # running anything; a good one runs.
    run sql "$RO_URL" "SELECT nope FROM orders"
    expect_rc 1
    expect_err_has "no such column: nope"
    run sql "$RO_URL" "SELECT * FROM custmers"
    expect_rc 1
    expect_err_has "no such table: custmers"
    run sql "$RO_URL" "SELECT id FROM orders o JOIN customers c ON c.id = o.customer_id"
    expect_rc 1
    expect_err_has "ambiguous column name: id"
    run sql "$RO_URL" "SELECT FROM WHERE"
    expect_rc 1
    expect_err_has "error 1064"
    run sql "$RO_URL" "SELECT ? AS p"
    expect_rc 1
    expect_err_has "placeholder"
}

# A table or column the user may not read is said so (error 1142, 1143),
# not "askdb runs only read-only queries", which is for writes.
permission_errors_say_the_user_may_not_read() {
    mdb_admin <<'SQL' || fail "creating priv failed"
CREATE DATABASE priv;
CREATE TABLE priv.open (id INT, name TEXT);
CREATE TABLE priv.secret (id INT, pw TEXT);
CREATE TABLE priv.cols (id INT, pw TEXT);
GRANT SELECT ON priv.open TO 'ro'@'%';
GRANT SELECT (id) ON priv.cols TO 'ro'@'%';
SQL
    local u="mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/priv"
    run sql "$u" "SELECT * FROM secret"
    expect_rc 1
    expect_err_has "refused: SELECT command denied to user 'ro'"
    expect_err_has "(error 1142); the database user may not read that table"
    grep -q "read-only" "$T/err" && fail "a denied SELECT is called a write: $(cat "$T/err")"
    run sql "$u" "SELECT pw FROM cols"
    expect_rc 1
    expect_err_has "(error 1143); the database user may not read that column"
    run sql -f csv "$u" "SELECT id FROM cols"
    expect_rc 0
}

fault_refused_connection_exits_3() {
    local port
    port=$(mdb_free_port)
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$port/shop" "SELECT 1"
    expect_rc 3
    expect_err_has "cannot connect to 'mariadb://ro@127.0.0.1:$port/shop'"
    expect_err_has "is the server running"
    expect_faster 5000
    run ask --llm-url http://127.0.0.1:9/v1 --model test "mariadb://ro:$RO_PW_ENC@127.0.0.1:$port/shop" "Anything?"
    expect_rc 3
    run schema "mariadb://ro:$RO_PW_ENC@localhost/shop?socket=$TMP/no.sock"
    expect_rc 3
    expect_err_has "socket"
}

fault_bad_password_exits_3() {
    run sql "mariadb://ro:Wrong-Pass-123@127.0.0.1:$MDB_PORT/shop" "SELECT 1"
    expect_rc 3
    expect_err_has "Access denied for user 'ro'"
    expect_err_has "check the user and password"
    grep -qF "Wrong-Pass-123" "$T/err" && fail "the wrong password was printed"
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/nodb" "SELECT 1"
    expect_rc 3
    expect_err_has "check the database name"
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT" "SELECT 1"
    expect_rc 3
    expect_err_has "cannot open 'mariadb://ro@127.0.0.1:$MDB_PORT': no database named"
}

fault_tls_required_but_not_offered() {
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/shop?ssl=require" "SELECT 1"
    expect_rc 3
    expect_err_has "asks for TLS (ssl=require) but the server does not offer it"
    expect_err_has "enable TLS on the server"
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/shop?ssl=disable" "SELECT 1 AS one"
    expect_rc 0
}

# A second server, with TLS (the shared one has none: the test above),
# whose certificate, signed by the test's CA, names localhost alone: the
# URL's ssl=verify holds (the CA and the host name are checked, over the
# library's non-blocking calls), and an option file, read by the library
# after the URL's settings, cannot undo either check: the connection is
# refused before askdb logs in (the server's general log has no login).
tls_checks_hold_against_the_option_files() {
    local url ca=$T/ca.pem n cnf
    command -v openssl >/dev/null || fail "openssl is missing (scripts/deps.sh installs it)"
    {
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=askdb-test-ca \
            -keyout "$T/ca.key" -out "$ca" &&
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca \
            -keyout "$T/other.key" -out "$T/other.pem" &&
        openssl req -newkey rsa:2048 -nodes -subj /CN=localhost \
            -keyout "$T/server.key" -out "$T/server.csr" &&
        printf 'subjectAltName=DNS:localhost\n' >"$T/ext" &&
        openssl x509 -req -in "$T/server.csr" -CA "$ca" -CAkey "$T/ca.key" \
            -CAcreateserial -days 2 -extfile "$T/ext" -out "$T/server.pem"
    } >"$T/openssl.log" 2>&1 || fail "making the certificates failed: $(tail -3 "$T/openssl.log")"
    chmod 644 "$T"/*.pem "$T"/*.key
    # This subshell's MDB_* are the TLS server's from here on.
    trap 'stop_llm; mdb_stop' EXIT
    mdb_start "$SRV/tls" --ssl-cert="$T/server.pem" --ssl-key="$T/server.key" \
        --general-log=1 --general-log-file="$SRV/tls/general.log" >"$T/start.log" 2>&1 ||
        fail "the TLS server did not start: $(tail -3 "$T/start.log")"
    mdb_admin -e "CREATE DATABASE d; CREATE USER t@'%' IDENTIFIED BY 'T-pw-4471';
                  GRANT SELECT ON d.* TO t@'%';" || fail "setting up the TLS server failed"
    url="mariadb://t:T-pw-4471@localhost:$MDB_PORT/d?ssl=verify&sslca=$ca"
    run sql -f csv "$url" "SELECT 1 AS one"
    expect_rc 0
    expect_out 'one\n1\n'
    # The name: 127.0.0.1 is not the certificate's; ssl=require does not
    # check it.
    run sql "${url/localhost/127.0.0.1}" "SELECT 1"
    expect_rc 3
    expect_err_has "Validation of SSL server certificate failed"
    expect_err_has "the server's certificate was not accepted: check that sslca= names the CA that signed it, and that the URL's host is a name the certificate carries"
    run sql -f csv "mariadb://t:T-pw-4471@127.0.0.1:$MDB_PORT/d?ssl=require&sslca=$ca" "SELECT 1 AS one"
    expect_rc 0
    n=$(logins)
    # The library takes only 1 as on: true is off.
    for cnf in ssl-verify-server-cert=0 ssl-verify-server-cert=true tls-verify-peer=0; do
        printf '[client]\n%s\n' "$cnf" >"$HOME/.my.cnf"
        run sql "${url/localhost/127.0.0.1}" "SELECT 1"
        expect_rc 3
        expect_err_has "an option file sets ssl-verify-server-cert (or tls-verify-peer) to other than 1, the only value the library takes as on, which turns off the check of the server's host name that the URL's ssl=verify asks for (askdb did not connect)"
    done
    # ssl-enforce=0 sent the login in plain text to a server that offers
    # TLS (and askdb then said the server did not offer it).
    printf '[client]\nssl-enforce=0\n' >"$HOME/.my.cnf"
    run sql "mariadb://t:T-pw-4471@localhost:$MDB_PORT/d?ssl=require" "SELECT 1"
    expect_rc 3
    expect_err_has "an option file sets ssl-enforce (or tls-enforce) off, which would send the login without the TLS that the URL's ssl=require asks for (askdb did not connect)"
    # protocol=tcp is 0 to the library, the default: the default socket
    # for localhost, not the URL's port.
    printf '[client]\nprotocol=tcp\n' >"$HOME/.my.cnf"
    run sql "$url" "SELECT 1"
    expect_rc 3
    expect_err_has "an option file sets protocol, which would connect otherwise than the URL says (over TCP to its port"
    [ "$(logins)" = "$n" ] || fail "askdb logged in: $(grep 'Connect' "$SRV/tls/general.log" | tail -2)"
    rm -f "$HOME/.my.cnf"
    # The CA: the URL's other CA refuses the server; an option file's
    # ssl-ca would have let it in.
    run sql "${url/ca.pem/other.pem}" "SELECT 1"
    expect_rc 3
    expect_err_has "TLS/SSL error"
    expect_err_has "the server's certificate was not accepted"
    printf '[askdb]\nssl-ca=%s\n' "$ca" >"$HOME/.my.cnf"
    run sql "${url/ca.pem/other.pem}" "SELECT 1"
    expect_rc 3
    expect_err_has "an option file sets ssl-ca (or tls-ca), which replaces the URL's sslca= as the CA the server's certificate is checked against (askdb did not connect)"
    [ "$(logins)" = "$n" ] || fail "askdb logged in: $(grep 'Connect' "$SRV/tls/general.log" | tail -2)"
    # An ssl-capath adds its CAs to the URL's.
    mkdir -p "$T/capath"
    cp "$ca" "$T/capath/" && openssl rehash "$T/capath" >/dev/null 2>&1 || fail "openssl rehash failed"
    printf '[client]\nssl-capath=%s\n' "$T/capath" >"$HOME/.my.cnf"
    run sql "${url/ca.pem/other.pem}" "SELECT 1"
    expect_rc 3
    expect_err_has "an option file sets ssl-capath (or tls-capath), whose CAs would be trusted beside the URL's sslca= (askdb did not connect)"
    [ "$(logins)" = "$n" ] || fail "askdb logged in: $(grep 'Connect' "$SRV/tls/general.log" | tail -2)"
    printf '[askdb]\nssl-ca=%s\n' "$ca" >"$HOME/.my.cnf"
    # The same CA in both is no conflict.
    run sql -f csv "$url" "SELECT 1 AS one"
    expect_rc 0
    [ "$(logins)" -gt "$n" ] || fail "the server's general log shows no login: $(tail -3 "$SRV/tls/general.log")"
    rm -f "$HOME/.my.cnf"
}

# logins: how many logins of the user t the TLS server's general log has.
logins() { grep -c $'Connect\tt@' "$SRV/tls/general.log"; }

# A server that stalls the TLS handshake (tests/e2e/tls_stall.py): askdb
# waits in the TLS library's own read there, which the library bounds by
# its connect timeout alone. It is no answer, not a server without TLS;
# and an option file's connect-timeout=0, no bound at all (askdb hung
# there for ever), is refused before the handshake.
tls_handshake_that_stalls_is_no_answer() {
    local url cnf
    start_listener "$T/stall.port" python3 "$HERE/tls_stall.py" "$T/stall.port"
    url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$(cat "$T/stall.port")/shop?ssl=require&connect_timeout=2"
    run sql "$url" "SELECT 1"
    expect_rc 3
    expect_err_has "within 2 s (connect_timeout): TLS/SSL error: Connection timed out (110) (error 2026); the server did not answer in time"
    expect_faster 5000
    # 0, negative, or so large that the library's milliseconds overflow:
    # no limit at all to it.
    for cnf in connect-timeout=0 timeout=-1 connect-timeout=2147484; do
        printf '[client]\n%s\n' "$cnf" >"$HOME/.my.cnf"
        run sql "$url" "SELECT 1"
        expect_rc 3
        expect_err_has "an option file sets connect-timeout (or timeout) to ${cnf#*=}, which the library takes as no time limit at all (0, a negative number or more than 2147483 s): it would wait for ever for a server that does not answer (askdb did not connect): remove it, or give askdb its own in an [askdb] group after it"
        expect_faster 2000
    done
    # An [askdb] group after it gives askdb its own.
    printf '[client]\nconnect-timeout=0\n[askdb]\nconnect-timeout=1\n' >"$HOME/.my.cnf"
    run sql "$url" "SELECT 1"
    expect_rc 3
    expect_err_has "within 1 s (connect-timeout of an option file, over the URL's connect_timeout=2; remove it there to use the URL's): TLS/SSL error: Connection timed out (110)"
    rm -f "$HOME/.my.cnf"
    kill "$LISTENER_PID"
}

# Over TLS the library reads the handshake in the TLS library's own read,
# not in a wait of its non-blocking calls that askdb makes with the
# cancel flag: a Ctrl-C while a server stalled the handshake was heeded
# only at the connect timeout (30 s here), and a program could not stop
# such an open either (askdb serve's stop, an MCP cancel).
tls_handshake_that_stalls_is_cut_short_by_ctrl_c() {
    local url
    start_listener "$T/stall.port" python3 "$HERE/tls_stall.py" "$T/stall.port"
    url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$(cat "$T/stall.port")/shop?ssl=require&connect_timeout=30"
    first_connect_ctrl_c sql "$url" "SELECT 1"
    expect_connect_cancelled askdb "${url/:$RO_PW_ENC/}"
    first_connect_ctrl_c ask --llm-url http://127.0.0.1:9/v1 --model test "$url" "How many?"
    expect_connect_cancelled askdb "${url/:$RO_PW_ENC/}"
    kill "$LISTENER_PID"
}

fault_lock_held_by_another_session() {
    local pid
    mdb_admin shop -e "LOCK TABLES orders WRITE; SELECT SLEEP(20);" >/dev/null 2>&1 &
    pid=$!
    echo "$pid" >>"$TMP/pids"
    wait_running 'SLEEP(20)' 50 0.1
    run sql --timeout 1500 "$RO_URL" "SELECT COUNT(*) FROM orders"
    expect_rc 1
    expect_faster 4000
    expect_err_has "waiting for a lock that another session holds"
    # The schema does not wait for it either: no samples for that table.
    run schema --timeout 1500 "$RO_URL"
    expect_rc 0
    expect_faster 4000
    expect_out_has "CREATE TABLE orders"
    # Asked through the agent: the lock is the database's, not the SQL's:
    # one attempt, class "database", no repair asked of the model.
    start_llm "$(always "$(fence "SELECT COUNT(*) AS n FROM orders")")"
    run ask --llm-url "$URL" --model test --timeout 1500 --no-question-check --candidates 1 -f json "$RO_URL" "How many orders?"
    expect_rc 1
    pycheck '
assert len(reqs) == 1, len(reqs)
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["database"], j["attempts"]
assert "waiting for a lock that another session holds" in j["error"], j["error"]
'
    mdb_admin -e "KILL $(mdb_admin -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE '%SLEEP(20)%' AND ID <> CONNECTION_ID()")" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

url_parsing_is_strict_and_never_echoes_passwords() {
    local u
    for u in "mariadb://ro:$RO_PW_ENC@127.0.0.1:0/shop" "mariadb://ro:$RO_PW_ENC@127.0.0.1:99999/shop" \
             "mariadb://ro:$RO_PW_ENC@127.0.0.1:12x/shop" "mariadb://ro:$RO_PW_ENC@[::1/shop" \
             "mariadb://ro:ro-Pass%zz@127.0.0.1/shop" "mariadb://ro:$RO_PW_ENC@127.0.0.1/shop?ssl=maybe" \
             "mariadb://ro:$RO_PW_ENC@127.0.0.1/shop?bogus=1" "mariadb://ro:$RO_PW_ENC@127.0.0.1/a/b" \
             "mariadb://ro:$RO_PW_ENC@127.0.0.1/shop#frag" "mariadb://ro:%00x@127.0.0.1/shop" \
             "mariadb://ro:$RO_PW_ENC@127.0.0.1/shop?connect_timeout=0" "mariadb://ro:$RO_PW_ENC@127.0.0.1/shop?ssl"; do
        run sql "$u" "SELECT 1"
        [ "$RC" = 3 ] || fail "exit $RC for $u"
        grep -q "cannot use the mariadb:// URL\|cannot connect" "$T/err" || fail "no clear message for $u: $(cat "$T/err")"
    done
    # A socket with a host other than localhost, or with a port: the
    # library would use one and ignore the other without a word (the
    # host over TCP; the socket), so askdb says which to drop.
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1/shop?socket=$MDB_SOCK" "SELECT 1"
    expect_rc 3
    expect_err_has "cannot use the mariadb:// URL: it names a host (127.0.0.1) and a socket ($MDB_SOCK), and one would be ignored: drop ?socket= to connect to the host over TCP, or write the host as localhost to use the socket (see docs/engines/mariadb.md)"
    run sql "mysql://ro:$RO_PW_ENC@db.example.com:3306/shop?socket=/run/mysqld/mysqld.sock" "SELECT 1"
    expect_rc 3
    expect_err_has "cannot use the mysql:// URL: it names a host (db.example.com) and a socket (/run/mysqld/mysqld.sock), and one would be ignored"
    run sql "mariadb://ro:$RO_PW_ENC@localhost:1/shop?socket=$MDB_SOCK" "SELECT 1"
    expect_rc 3
    expect_err_has "cannot use the mariadb:// URL: it names a port (1) and a socket ($MDB_SOCK), and the port would be ignored: drop the port to use the socket, or drop ?socket= to connect over TCP"
    run sql -f csv "mariadb://ro:$RO_PW_ENC@localhost/shop?socket=$MDB_SOCK" "SELECT 1 AS one"
    expect_rc 0
    expect_out 'one\n1\n'
    # The message lists every parameter the docs do, aliases too.
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/shop?bogus=1" "SELECT 1"
    expect_rc 3
    expect_err_has "known: socket, password, ssl (or sslmode, ssl_mode), sslca (ssl_ca), sslcert (ssl_cert), sslkey (ssl_key), connect_timeout"
    # sslmode (PostgreSQL's spelling) and ssl_mode (MySQL's, with its
    # values) are ssl; the password may be a parameter.
    run sql -f csv "mariadb://ro@127.0.0.1:$MDB_PORT/shop?password=$RO_PW_ENC&sslmode=disable" "SELECT 1 AS one"
    expect_rc 0
    expect_out 'one\n1\n'
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/shop?ssl_mode=VERIFY_CA" "SELECT 1"
    expect_rc 3
    expect_err_has "the URL asks for TLS"
    # Random mutations: askdb never crashes, never prints a password.
    python3 - "$MDB_PORT" >"$T/urls" <<'PY'
import random, sys
random.seed(16)
# The scheme stays: a text that is no URL is a path, printed as given.
base = "ro:ro-Pass%%3Aw0rd%%407@127.0.0.1:%s/shop?socket=/x&ssl=disable" % sys.argv[1]
alpha = "%:@/?&=[]#.-_aZ09\\ \x01\xff"
for _ in range(60):
    s = list(base)
    for _ in range(random.randint(1, 6)):
        i = random.randrange(len(s))
        op = random.random()
        if op < 0.4: s[i] = random.choice(alpha)
        elif op < 0.7: del s[i]
        else: s.insert(i, random.choice(alpha))
    print("mariadb://" + "".join(s).replace("\n", ""))
PY
    while IFS= read -r u; do
        run sql --timeout 2000 "$u" "SELECT 1"
        # 2: a scheme that is no longer mariadb:// is a usage error.
        case $RC in 0|1|2|3) ;; *) fail "exit $RC for $u" ;; esac
    done <"$T/urls"
}

# A password with an unencoded '/' or '?' cannot be told from a database
# or parameter with '@': no message quotes any part of it (one quoted
# "ss@127.0.0.1" or the whole URL), and each says to percent-encode it.
ambiguous_url_never_shows_part_of_the_password() {
    local u pw c piece
    start_llm "$(always "$(fence "SELECT 1 AS one")")"
    for pw in "9311/Sl4shPw" "9312?Qm4rkPw" "Ab:9313/x7Yz" "9314?sslmode=Qz8w" "w@9315/Tk5v"; do
        for u in "mariadb://ro:$pw@127.0.0.1" "mariadb://ro:$pw@127.0.0.1:$MDB_PORT/shop" "mysql://ro:$pw@localhost/shop?socket=$MDB_SOCK"; do
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
                expect_err_has "percent-encode the password's '/', '?', '@' and ':'"
            done
        done
    done
    # The label hides all from the first ':' to the last '@'; the same URL
    # with the password encoded works.
    run sql "mariadb://ro:9311/Sl4shPw@127.0.0.1" "SELECT 1"
    expect_err_has "cannot connect to 'mariadb://ro:xxx@127.0.0.1': "
    run sql -f csv "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/shop" "SELECT 1 AS one"
    expect_rc 0
    # A database with '@' is said the same way: it may be a password's.
    run sql "mariadb://127.0.0.1:$MDB_PORT/a@b" "SELECT 1"
    expect_rc 3
    expect_err_has "cannot connect to 'mariadb://127.0.0.1:xxx@b': it has an '@' after a '/' or '?'"
}

option_file_gives_the_password() {
    # ~/.my.cnf's [askdb] group: no password in the URL.
    printf '[askdb]\npassword=%s\nlocal-infile=1\n' "$RO_PW" >"$HOME/.my.cnf"
    chmod 600 "$HOME/.my.cnf"
    run sql -f csv "mariadb://ro@127.0.0.1:$MDB_PORT/shop" "SELECT COUNT(*) AS n FROM customers"
    rm -f "$HOME/.my.cnf"
    expect_rc 0
    expect_out 'n\n60\n'
}

many_tables_schema_reads_fast() {
    local i
    {
        echo "CREATE DATABASE many; USE many;"
        for i in $(seq 1 "$NTABLES"); do
            echo "CREATE TABLE t$i (id INT PRIMARY KEY, name VARCHAR(20) COMMENT 'name $i', ref INT, UNIQUE (name), FOREIGN KEY (ref) REFERENCES t1 (id)) ENGINE=InnoDB;"
        done
        echo "INSERT INTO t1 VALUES (1, 'one', NULL), (2, 'two', 1);"
        echo "FLUSH TABLES;"
        echo "GRANT SELECT ON many.* TO 'ro'@'%';"
    } | mdb_admin || fail "creating $NTABLES tables failed"
    run schema "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/many"
    expect_rc 0
    local n
    n=$(grep -c '^CREATE TABLE' "$T/out")
    [ "$n" = "$NTABLES" ] || fail "schema has $n tables, expected $NTABLES"
    expect_out_has "name varchar(20), -- name 1; e.g. 'one', 'two'"
    expect_out_has "FOREIGN KEY (ref) REFERENCES t1(id)"
    local cold=$ELAPSED_MS
    run schema "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/many"
    expect_rc 0
    echo "schema of $NTABLES InnoDB tables (${ASKDB#"$ROOT"/}): $cold ms cold (after FLUSH TABLES), $ELAPSED_MS ms warm" >"$T/figure"
    cp "$T/figure" "$TMP/figure.many"
    expect_faster 20000
}

# A long-lived handle (the shell; askdb serve) whose session the server
# closed while it sat idle (wait_timeout, a KILL, a proxy) connects again
# by itself before its next statement, for a statement typed and for one
# the model wrote: nothing had run on the dead session.
fault_idle_session_closed_by_the_server() {
    local pid
    start_llm "$(always "$(fence "SELECT COUNT(*) AS n FROM orders")")"
    start_shell --llm-url "$URL" --model test --no-question-check --candidates 1 "$RO_URL"
    echo ".sql SELECT 41 AS a" >&7
    wait_out 41
    kill_ro
    echo ".sql SELECT 42 AS b" >&7
    wait_out 42
    kill_ro
    echo "How many orders are there?" >&7
    exec 7>&-
    wait "$pid"
    RC=$?
    after_run "shell (idle session killed)"
    expect_rc 0
    pycheck '
assert "42" in out, (out, err)
assert len(reqs) == 1, len(reqs)
n = [l for l in out.splitlines() if l.strip(" |").isdigit()]
assert n, (out, err)
assert "lost the connection" not in err, err
'
}

# The same for the second session, the one that kills a statement at its
# deadline: closed while idle, it is opened again at once, so the kill
# still comes from askdb and the message still says a lock held it.
fault_idle_kill_session_closed_by_the_server() {
    local pid holder
    start_shell --llm-url http://127.0.0.1:9/v1 --model test --timeout 1500 "$RO_URL"
    # A statement past its deadline opens the kill session.
    echo ".sql SELECT SLEEP(3) AS s" >&7
    for _ in $(seq 1 100); do
        grep -q "time limit" "$T/err" && break
        sleep 0.05
    done
    grep -q "time limit" "$T/err" || fail "no timeout: $(head -c 300 "$T/err")"
    kill_ro
    mdb_admin shop -e "LOCK TABLES orders WRITE; SELECT SLEEP(20);" >/dev/null 2>&1 &
    holder=$!
    echo "$holder" >>"$TMP/pids"
    wait_running 'SLEEP(20)' 50 0.1
    echo ".sql SELECT COUNT(*) AS n FROM orders" >&7
    exec 7>&-
    wait "$pid"
    RC=$?
    mdb_admin -e "KILL $(mdb_admin -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE '%SLEEP(20)%' AND ID <> CONNECTION_ID()")" 2>/dev/null
    wait "$holder" 2>/dev/null
    after_run "shell (idle kill session closed)"
    expect_err_has "waiting for a lock that another session holds"
    pycheck '
assert "lost the connection" not in err, err
assert err.count("time limit") == 2, err
'
}

# Nothing a statement leaves in its session reaches the next one, on a
# handle that lives long (the shell; serve and MCP alike): a named lock
# taken by a DBA's DEFINER view (the text has no GET_LOCK to refuse), a
# user variable, session variables a DEFINER function changed. Each
# statement starts with askdb's settings again, in utf8mb4.
each_statement_starts_from_a_clean_session() {
    local pid
    mdb_admin types <<'SQL' || fail "creating the view and the function failed"
CREATE DEFINER=root@localhost SQL SECURITY DEFINER VIEW v_lock AS SELECT GET_LOCK('via_view', 0) AS l;
DELIMITER //
CREATE DEFINER=root@localhost FUNCTION f_state() RETURNS INT SQL SECURITY DEFINER
  BEGIN SET @y = 'two'; SET @@session.max_statement_time = 0; SET @@session.sql_select_limit = 1; RETURN 1; END//
DELIMITER ;
GRANT EXECUTE ON FUNCTION types.f_state TO 'ro'@'%';
SQL
    start_shell --llm-url http://127.0.0.1:9/v1 --model test --max-rows 50 --timeout 7000 \
        "mariadb://ro:$RO_PW_ENC@127.0.0.1:$MDB_PORT/types"
    echo ".sql SELECT l AS got_lock FROM v_lock" >&7
    wait_out got_lock
    wait_out 1
    [ "$(mdb_admin -N -e "SELECT IS_USED_LOCK('via_view')")" = NULL ] ||
        fail "askdb's session still holds the view's lock after the statement"
    echo ".sql SELECT @x := 'one' AS a" >&7
    wait_out one
    echo ".sql SELECT f_state() AS f" >&7
    echo ".sql SELECT @x AS x, @y AS y, @@max_statement_time AS mst, @@sql_select_limit AS sl, @@tx_read_only AS ro, @@sql_mode AS mode, 'a' || 'b' AS ab, v FROM t" >&7
    exec 7>&-
    wait "$pid"
    RC=$?
    after_run "shell (session state)"
    expect_rc 0
    pycheck '
import csv, io
rows = list(csv.reader(io.StringIO(out)))
i = rows.index(["x", "y", "mst", "sl", "ro", "mode", "ab", "v"])
r = dict(zip(rows[i], rows[i + 1]))
assert r["x"] == "" and r["y"] == "", ("user variables survived", r)
assert r["mst"] == "7.25" and r["sl"] == "51" and r["ro"] == "1", ("session settings", r)
assert "ANSI_QUOTES" in r["mode"] and "NO_BACKSLASH_ESCAPES" in r["mode"], r
assert r["ab"] == "ab" and r["v"] == "Zo\u00eb", r
'
}

# A server gone without a word (its host down, the network cut: the
# session's socket hears nothing) is found out by askdb's KILL QUERY at
# the time limit, whose connection is refused: the session is cut off and
# reported lost then, not at its read timeout (the limit and 10 s more:
# it took 11 s with --timeout 1000, and said 'time limit'); on Ctrl-C
# the same (it took 30 s with --timeout 20000).
fault_server_gone_silently_is_found_by_the_kill() {
    local pid t0
    start_relay
    t0=$(now_ms)
    timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" sql --timeout 1000 "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop" \
        "SELECT SLEEP(15)" </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    wait_running 'SLEEP(15)'
    relay_silent
    wait "$pid"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
    echo "silent server, --timeout 1000: exit $RC in $ELAPSED_MS ms" >>"$T/.trace"
    after_run "sql (server gone silently)"
    expect_rc 1
    expect_err_has "lost the connection to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop' (askdb's KILL QUERY found no server at the session's address: Can't connect to server on '127.0.0.1'"
    expect_err_has "check that it runs"
    expect_faster 3000
    kill "$RELAY_PID"
    start_relay
    start_llm "$(always "$(fence "SELECT SLEEP(16) AS s")")"
    timeout --foreground -k 5 "$RUN_LIMIT_S" env --default-signal=INT "$ASKDB" ask --llm-url "$URL" --model test --timeout 20000 \
        --no-question-check "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop" "Sleep a while" </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    wait_running 'SLEEP(16)'
    relay_silent
    interrupt
    echo "silent server, Ctrl-C: exit $RC in $ELAPSED_MS ms" >>"$T/.trace"
    after_run "ask (server gone silently, Ctrl-C)"
    expect_rc 130
    expect_err_has "cancelled"
    expect_faster 2000
    kill "$RELAY_PID"
}

# A session whose earlier statement ran out of time keeps its kill
# connection. When the network then goes silent, the next statement's
# deadline asks on that connection (what the statement does, then KILL
# QUERY), which hears nothing: askdb waited for its read timeout (15 s:
# 16 s in all with --timeout 1000) before it connected anew, was refused
# and cut the session off. The kill connection waits 2 s for an answer.
fault_server_gone_silently_is_found_by_an_open_kill_connection() {
    local pid t0 url last_id
    start_relay
    url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop"
    last_id=$(mdb_admin -N -e "SELECT CONNECTION_ID()")
    start_shell --llm-url http://127.0.0.1:9/v1 --model test --timeout 1000 "$url"
    echo ".sql SELECT SLEEP(5) AS first" >&7
    wait_err "1000 ms time limit"
    # Its session and kill connection: ro's sessions that were not there
    # before (an earlier test's SLEEP may still run).
    [ "$(mdb_admin -N -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'ro' AND ID > $last_id")" = 2 ] ||
        fail "no kill connection beside the session"
    echo ".sql SELECT SLEEP(17) AS second" >&7
    wait_running 'SLEEP(17)'
    relay_silent
    t0=$(now_ms)
    exec 7>&-
    wait "$pid"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
    echo "silent server, kill connection open: exit $RC in $ELAPSED_MS ms" >>"$T/.trace"
    after_run "shell (server gone silently, kill connection open)"
    expect_err_has "lost the connection to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop' (askdb's KILL QUERY found no server at the session's address: Can't connect to server on '127.0.0.1'"
    expect_faster 5000
    kill "$RELAY_PID"
}

# A server that takes connections and answers none (stopped with
# SIGSTOP: its kernel still completes the handshake; a proxy or firewall
# that holds them) greets no kill connection, and its session hears
# nothing more. askdb waited for the session's read timeout: 21 s with
# --timeout 1000 (the kill connection waited 10 s for a greeting, twice),
# reported as a timeout, and 30 s after a Ctrl-C (--timeout 20000). The
# kill connection waits 2 s for its greeting, then the session is given
# up.
fault_server_that_greets_no_kill_connection_is_given_up_at_the_limit() {
    relay_sql 30 relay_deaf
    echo "deaf server, --timeout 1000: exit $RC in $ELAPSED_MS ms" >>"$T/.trace"
    after_run "sql (deaf server)"
    expect_rc 1
    expect_err_has "lost the connection to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop' (the server did not answer askdb's KILL QUERY within 2 s: Lost connection to server at 'handshake: reading initial communication packet'"
    expect_err_has "check that it runs"
    expect_faster 10000
    kill "$RELAY_PID"
}
fault_server_that_greets_no_kill_connection_is_given_up_on_ctrl_c() {
    relay_ctrl_c 31 relay_deaf
    echo "deaf server, Ctrl-C: exit $RC in $ELAPSED_MS ms" >>"$T/.trace"
    after_run "ask (deaf server, Ctrl-C)"
    expect_rc 130
    expect_err_has "cancelled"
    expect_faster 8000
    kill "$RELAY_PID"
}

# A server that goes deaf between two statements of a shell: the next
# .sql first sends askdb's settings (then prepares, then starts its
# transaction), which no stop watches as nothing runs yet, and waited in
# the library's blocking calls for the session's read timeout (the time
# limit and 10 s more) whatever the Ctrl-C, whose EINTR the library's
# poll() goes on after: 30 s with --timeout 20000. A Ctrl-C ends that
# wait at once now (the next statement connects again).
fault_server_gone_deaf_before_a_statement_runs_is_given_up_on_ctrl_c() {
    shell_deaf_before_ctrl_c ".sql SELECT SLEEP(44) AS second" 20 "the statement"
    expect_faster 3000
    grep -q SLEEP "$T/out" && fail "the statement ran: $(cat "$T/out")"
    kill "$RELAY_PID"
}

# shell_deaf_before_ctrl_c LINE SECONDS WHAT: a shell through a new relay
# runs a first .sql, the relay goes deaf, LINE is sent and, once askdb
# waits on the relay, Ctrl-C'd; "cancelled" must come within SECONDS.
# Sets ELAPSED_MS (from the Ctrl-C) and RC; the relay is left for the
# caller.
shell_deaf_before_ctrl_c() {
    local pid t0
    start_relay
    start_shell_fg --llm-url http://127.0.0.1:9/v1 --model test --timeout 20000 \
        "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop"
    echo ".sql SELECT 41 AS first" >&7
    wait_out 41
    relay_deaf
    echo "$1" >&7
    relay_holds_bytes
    t0=$(now_ms)
    kill -INT "$pid"
    wait_err "cancelled" "$2"
    ELAPSED_MS=$(($(now_ms) - t0))
    exec 7>&-
    wait "$pid"
    RC=$?
    echo "deaf before $3, Ctrl-C: exit $RC, cancelled in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    after_run "shell (deaf before $3, Ctrl-C)"
}

# The same when the next line is a question, whose first step reads the
# schema: it sends askdb's settings first too, in the library's blocking
# call, and waited the session's read timeout (30 s here) whatever the
# Ctrl-C. A Ctrl-C ends that wait at once now.
fault_server_gone_deaf_before_a_schema_read_is_given_up_on_ctrl_c() {
    shell_deaf_before_ctrl_c "How many customers are there?" 40 "the schema read"
    expect_faster 3000
    kill "$RELAY_PID"
}

# The same in `ask`, whose statement is prepared (to check it, then to
# run it) before it runs: the processlist shows its text then (COMMAND
# Prepare), so wait_running may find it before it runs, and a server gone
# deaf then (here: as the check's prepare is sent) left askdb waiting
# unwatched for the prepare's answer, or START TRANSACTION's: 30 s after
# the Ctrl-C with --timeout 20000, as
# fault_server_that_greets_no_kill_connection_is_given_up_on_ctrl_c
# once took under load (30042 ms, where it expects under 8 s).
fault_server_gone_deaf_as_a_statement_is_prepared_is_given_up_on_ctrl_c() {
    local pid
    start_relay --deaf-on 'SLEEP(48)'
    start_llm "$(always "$(fence "SELECT SLEEP(48) AS s")")"
    timeout --foreground -k "$RUN_LIMIT_S" "$RUN_LIMIT_S" env --default-signal=INT "$ASKDB" ask --llm-url "$URL" --model test \
        --timeout 20000 --no-question-check "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop" "Sleep a while" \
        </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    for _ in $(seq 1 400); do
        [ -e "$T/relay.port.quiet" ] && break
        sleep 0.05
    done
    [ -e "$T/relay.port.quiet" ] || fail "askdb sent no SLEEP(48): $(head -c 300 "$T/err")"
    interrupt
    echo "deaf as the statement is prepared, Ctrl-C: exit $RC in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    after_run "ask (deaf as the statement is prepared, Ctrl-C)"
    expect_rc 130
    expect_err_has "cancelled"
    expect_faster 3000
    kill "$RELAY_PID"
}

# The same with a kill connection kept from an earlier statement (a
# Ctrl-C stopped it): on the next Ctrl-C it hears nothing for the stop's
# 2 s (the library says CR_SERVER_LOST), and the new one made then is
# never greeted, so the session is given up then.
fault_server_gone_deaf_is_given_up_on_ctrl_c_with_a_kept_kill_connection() {
    local pid t0 last_id
    start_relay
    last_id=$(mdb_admin -N -e "SELECT CONNECTION_ID()")
    start_shell_fg --llm-url http://127.0.0.1:9/v1 --model test --timeout 20000 \
        "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop"
    echo ".sql SELECT SLEEP(45) AS first" >&7
    wait_running 'SLEEP(45)' || fail "SLEEP(45) did not run"
    kill -INT "$pid"
    wait_err "cancelled"
    [ "$(mdb_admin -N -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'ro' AND ID > $last_id")" = 2 ] ||
        fail "no kill connection beside the session"
    echo ".sql SELECT SLEEP(46) AS second" >&7
    wait_running 'SLEEP(46)' || fail "SLEEP(46) did not run"
    relay_deaf
    t0=$(now_ms)
    kill -INT "$pid"
    for _ in $(seq 1 400); do
        [ "$(grep -c cancelled "$T/err")" -ge 2 ] && break
        sleep 0.05
    done
    ELAPSED_MS=$(($(now_ms) - t0))
    exec 7>&-
    wait "$pid"
    RC=$?
    echo "deaf server, kept kill connection, Ctrl-C: exit $RC, cancelled in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    after_run "shell (deaf server, kept kill connection, Ctrl-C)"
    expect_err_has "cancelled (the server did not answer askdb's KILL QUERY within 2 s: Lost connection to server at 'handshake: reading initial communication packet'"
    expect_faster 8000
    kill "$RELAY_PID"
}

# The same with a kill connection that is greeted and logged in, and
# whose question or KILL QUERY goes unanswered (a server whose threads for
# statements are all stuck; a proxy that logs in and forwards nothing
# after): askdb waited 11 s with --timeout 1000 (2 s for each of two
# processlist questions and two kills), reported as a timeout, and 30 s
# after a Ctrl-C. A new kill connection that hears nothing for 2 s is
# not tried again now, and the session is given up then.
fault_server_that_answers_no_kill_is_given_up_at_the_limit() {
    relay_sql 32 relay_mute
    echo "mute server, --timeout 1000: exit $RC in $ELAPSED_MS ms" >>"$T/.trace"
    after_run "sql (mute server)"
    expect_rc 1
    expect_err_has "lost the connection to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop' (the server did not answer askdb's KILL QUERY within 2 s: Lost connection to server during query, error 2013)"
    expect_err_has "check that it runs"
    expect_faster 10000
    kill "$RELAY_PID"
}
fault_server_that_answers_no_kill_is_given_up_on_ctrl_c() {
    relay_ctrl_c 33 relay_mute sql
    echo "mute server, Ctrl-C: exit $RC in $ELAPSED_MS ms" >>"$T/.trace"
    after_run "sql (mute server, Ctrl-C)"
    expect_rc 130
    expect_err_has "cancelled (the server did not answer askdb's KILL QUERY within 2 s: Lost connection to server during query; the connection to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop' was closed)"
    expect_faster 8000
    kill "$RELAY_PID"
}

# A server slow to take connections, but running, is not given up: its
# kill connection greeted 1 s late, a Ctrl-C's KILL QUERY reaches the
# statement, which is cancelled with its session kept (nothing said of a
# closed connection); greeted 3 s late, past the kill connection's 2 s,
# the server's own time limit ends the statement first, and that is
# reported as the timeout it is.
fault_server_slow_to_take_connections_is_not_given_up() {
    start_relay --delay-new 1000
    ctrl_c_sleep 34 : sql
    echo "slow server, Ctrl-C: exit $RC in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    after_run "sql (slow server, Ctrl-C)"
    expect_rc 130
    expect_err_has "cancelled"
    grep -qF "closed" "$T/err" && fail "the session was given up: $(cat "$T/err")"
    expect_faster 8000
    kill "$RELAY_PID"
    start_relay --delay-new 3000
    url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop"
    run sql --timeout 1000 "$url" "SELECT SLEEP(35)"
    echo "slow server, --timeout 1000: exit $RC in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    after_run "sql (slow server)"
    expect_rc 1
    expect_err_has "query interrupted after the 1000 ms time limit (--timeout)"
    expect_faster 10000
    kill "$RELAY_PID"
}

# A server whose accept queue is full (running but overloaded; a lossy
# link drops SYNs the same way) lets the kill connection's connect time
# out: that is no answer, not a server gone. askdb took the timeout's
# error 2002 for a refusal and told a Ctrl-C user that the KILL QUERY
# "found no server" while the statement ran on.
fault_full_accept_queue_is_no_answer_not_no_server() {
    relay_ctrl_c 36 relay_full sql
    echo "full accept queue, Ctrl-C: exit $RC in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    after_run "sql (full accept queue, Ctrl-C)"
    expect_rc 130
    expect_err_has "cancelled (the server did not answer askdb's KILL QUERY within 2 s: Can't connect to server on '127.0.0.1' (110)"
    grep -qF "found no server" "$T/err" && fail "a connect that timed out was taken for no server: $(cat "$T/err")"
    expect_faster 8000
    kill "$RELAY_PID"
}

# fill_connections: the server at its max_connections (10, its least, or
# the connections there are now when more), made up with connections
# that say nothing (FILL_PID); one more of a user without SUPER is
# refused with error 1040. unfill_connections puts it back.
fill_connections() {
    local n max
    FILL_SAVED=$(mdb_admin -N -e "SELECT @@max_connections")
    n=$(mdb_admin -N -e "SELECT VARIABLE_VALUE - 1 FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED'")
    max=$((n > 10 ? n : 10))
    mdb_admin -e "SET GLOBAL max_connections = $max"
    rm -f "$T/fill.ready"
    python3 -c 'import socket, sys, time
ss = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(int(sys.argv[2]))]
for s in ss:
    s.recv(1)  # its greeting: the server counts it
open(sys.argv[3], "w").close()
time.sleep(60)' "$MDB_PORT" "$((max - n))" "$T/fill.ready" &
    FILL_PID=$!
    echo "$FILL_PID" >>"$TMP/pids"
    for _ in $(seq 1 100); do
        [ -e "$T/fill.ready" ] && return 0
        sleep 0.05
    done
    unfill_connections
    fail "the connections that fill the server were not made"
}
unfill_connections() {
    kill "$FILL_PID" 2>/dev/null
    wait "$FILL_PID" 2>/dev/null
    for _ in $(seq 1 100); do
        mdb_admin -e "SET GLOBAL max_connections = $FILL_SAVED" 2>/dev/null && return 0
        sleep 0.05
    done
    fail "max_connections was not put back"
}

# A server at its max_connections refuses the kill connection with error
# 1040, which is neither no server nor no answer: nothing cut the session,
# and a Ctrl-C waited for the statement to its time limit (20 s with
# --timeout 20000). The session is given up at once now, with the refusal
# and what to do. At the time limit the server's own limit ends the
# statement 250 ms later, reported as the timeout it is.
fault_kill_connection_refused_for_too_many_connections() {
    local pid t0
    timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" sql --timeout 3000 "$RO_URL" "SELECT SLEEP(39)" </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    wait_running 'SLEEP(39)'
    fill_connections
    wait "$pid"
    RC=$?
    unfill_connections
    echo "kill connection refused, --timeout 3000: exit $RC: $(cat "$T/err")" >>"$T/.trace"
    after_run "sql (kill connection refused)"
    expect_rc 1
    expect_err_has "query interrupted after the 3000 ms time limit (--timeout)"
    timeout --foreground -k "$RUN_LIMIT_S" "$RUN_LIMIT_S" env --default-signal=INT "$ASKDB" sql --timeout 20000 "$RO_URL" "SELECT SLEEP(40)" \
        </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    wait_running 'SLEEP(40)'
    fill_connections
    interrupt
    unfill_connections
    echo "kill connection refused, Ctrl-C: exit $RC in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    after_run "sql (kill connection refused, Ctrl-C)"
    expect_rc 130
    expect_err_has "cancelled (the server refused askdb's kill connection: Too many connections (error 1040), and the statement runs on there until its time limit; askdb stops a statement from a second connection: raise the server's max_connections, or close idle sessions; the connection to 'mariadb://ro@127.0.0.1:$MDB_PORT/shop' was closed)"
    expect_faster 3000
}

# After a lost connection the next statement connects again first, and
# that connect waited the URL's connect_timeout (10 s) for the greeting,
# whatever the time limit: the shell's next .sql, with --timeout 1000,
# waited 10 s for a server that takes connections and greets none. It
# now waits the statement's time limit at most (whole seconds, 2 at
# least, as the library counts them), and says so.
reconnect_after_a_loss_keeps_to_the_time_limit() {
    reconnect_through relay_deaf 37
    echo "reconnect to a deaf server, --timeout 1000: $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    after_run "shell (reconnect to a deaf server)"
    expect_err_has "cannot reconnect to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop' within the statement's 1000 ms time limit (--timeout; 2 s at least): Lost connection to server at 'handshake: reading initial communication packet'"
    expect_err_has "the server did not answer in time: check that it runs and is reachable, then ask again"
    expect_faster 4000
    kill "$RELAY_PID"
}

# A reconnect has no statement on the server for a stop to kill: a
# Ctrl-C while a shell's .sql connected again to a server that greets
# none waited out the statement's whole limit (20 s here). It ends the
# reconnect at once, and the shell goes on.
reconnect_is_cut_short_by_ctrl_c() {
    local pid t0
    start_relay
    url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop"
    rm -f "$T/fifo"
    mkfifo "$T/fifo"
    # Ctrl-C reaches askdb through timeout(1) with --foreground, and is
    # not ignored as by a background job (env --default-signal).
    timeout --foreground -k 5 "$RUN_LIMIT_S" env --default-signal=INT "$ASKDB" shell \
        --llm-url http://127.0.0.1:9/v1 --model test --timeout 20000 "$url" \
        <"$T/fifo" >"$T/out" 2>"$T/err" &
    pid=$!
    echo "$pid" >>"$TMP/pids"
    exec 7>"$T/fifo"
    echo ".sql SELECT SLEEP(47) AS first" >&7
    wait_running "SLEEP(47)"
    relay_deaf
    wait_err "lost the connection" 25
    echo ".sql SELECT 1 AS x" >&7
    sleep 1
    grep -q "cannot reconnect\|cancelled" "$T/err" && fail "the reconnect ended before the Ctrl-C: $(cat "$T/err")"
    t0=$(now_ms)
    kill -INT "$pid"
    wait_err "cancelled" 25
    ELAPSED_MS=$(($(now_ms) - t0))
    echo "Ctrl-C in a reconnect to a deaf server, --timeout 20000: $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    expect_err_has "cancelled while connecting again to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop'"
    expect_faster 2000
    # The shell goes on: its next .sql finds no server.
    kill "$RELAY_PID"
    echo ".sql SELECT 2 AS y" >&7
    wait_err "cannot reconnect" 25
    exec 7>&-
    wait "$pid"
    after_run "shell (Ctrl-C in a reconnect)"
}

# The same reconnect to a server that greets it and logs it in, then
# answers nothing (the relay gone mute): the connect and the greeting
# kept to the time limit, but the session's first SET waited the
# session's read timeout (the limit and 10 s more: 11 s with --timeout
# 1000), then said that the session could not be made read-only. The
# whole reconnect - connect, greeting, login and the first SET - now has
# the statement's limit (2 s at least) in all, and says so.
reconnect_whose_settings_get_no_answer_keeps_to_the_time_limit() {
    local cnf
    # With an option file's multi-statements the reconnect's first
    # command is askdb's COM_SET_OPTION that turns them off: the same
    # deadline (it waited the read timeout, 11 s, before).
    for cnf in "" multi-statements; do
        [ -n "$cnf" ] && printf '[askdb]\n%s=1\n' "$cnf" >"$HOME/.my.cnf"
        reconnect_through relay_mute 43
        rm -f "$HOME/.my.cnf"
        echo "reconnect to a mute server, --timeout 1000${cnf:+, $cnf}: $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
        after_run "shell (reconnect to a mute server${cnf:+, $cnf})"
        if [ -z "$cnf" ]; then
            expect_err_has "cannot reconnect to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop' within the statement's 1000 ms time limit (--timeout; 2 s at least): Lost connection to server during query (error 2013); the server did not answer in time: check that it runs and is reachable, then ask again"
        else
            expect_err_has "cannot reconnect to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop' within the statement's 1000 ms time limit (--timeout; 2 s at least): an option file asks for multi-statements and the server did not turn them off again (Lost connection"
        fi
        expect_faster 3500
        kill "$RELAY_PID"
    done
}

# A kill connection to a server that answers each step late, but within
# the 2 s each step waited (every answer 1.5 s late: the greeting, the
# login's, the KILL QUERY's), took 4.5 s after a Ctrl-C here, and up to
# 6-8 s with answers later still. The kill connection's whole exchange
# now has 2 s in all: the session is given up then, and says why.
fault_kill_connection_slow_at_each_step_is_given_up_within_2_s() {
    start_relay --slow-new 1500
    ctrl_c_sleep 44 : sql
    echo "slow server at each step, Ctrl-C: exit $RC in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    after_run "sql (slow server at each step, Ctrl-C)"
    expect_rc 130
    # Which step the 2 s ended (the greeting comes 1.5 s in) depends on
    # the machine's load: only that they ended, and the session closed.
    expect_err_has "cancelled (the server did not answer askdb's KILL QUERY within 2 s: Lost connection to server at '"
    expect_err_has "; the connection to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop' was closed)"
    expect_faster 3000
    kill "$RELAY_PID"
}

# The first connect to a server that takes the connection and greets it
# not (the relay gone deaf) ends at the URL's connect_timeout with error
# 2013, system error 110; askdb advised that the server closed the
# connection while connecting, as for a server that did close it. It
# says that the server did not answer in time, as a reconnect does; and
# the same for a connect whose SYNs go unanswered (a full accept queue:
# error 2002, (110)).
first_connect_that_times_out_says_no_answer() {
    start_relay
    relay_deaf
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop?connect_timeout=1" "SELECT 1"
    echo "deaf server, first connect: exit $RC in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    expect_rc 3
    expect_err_has "cannot connect to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop?connect_timeout=1' within 1 s (connect_timeout): Lost connection to server at 'handshake: reading initial communication packet', system error: 110 (error 2013); the server did not answer in time: check that it runs and is reachable, then ask again"
    grep -qF "closed the connection" "$T/err" && fail "a greeting that timed out was taken for a close: $(cat "$T/err")"
    expect_faster 4000
    kill "$RELAY_PID"
    start_relay
    relay_full
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop?connect_timeout=1" "SELECT 1"
    echo "full accept queue, first connect: exit $RC in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    expect_rc 3
    expect_err_has "cannot connect to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop?connect_timeout=1' within 1 s (connect_timeout): Can't connect to server on '127.0.0.1' (110) (error 2002); the server did not answer in time: check that it runs and is reachable, then ask again"
    expect_faster 4000
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
    echo "$pid" >>"$TMP/pids"
    sleep 1
    [ -s "$T/err" ] && fail "askdb $1 ended before the Ctrl-C: $(head -c 400 "$T/err")"
    interrupt
    echo "Ctrl-C in the first connect of askdb $1: exit $RC in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    after_run "$1 (Ctrl-C in the first connect)"
}

# expect_connect_cancelled WHO URL: what first_connect_ctrl_c ended with
# is a cancelled connect: exit 130 within a second of the Ctrl-C, "WHO:
# cancelled while connecting to 'URL'" (the URL quoted, as PostgreSQL's),
# nothing on stdout.
expect_connect_cancelled() {
    expect_rc 130
    expect_faster 1000
    expect_err_has "$1: cancelled while connecting to '$2'"
    expect_empty_out
}

# The first connect was left to the library's own timeouts and heeded no
# Ctrl-C: askdb installed no handler for a MariaDB URL, and was killed by
# the signal without a word (exit 130, stderr empty), and learn's open
# the same for every engine. A server that takes the connection and
# greets it not (a listening socket that never answers), or one that
# greets and logs it in and answers no SET, is waited on through the
# library's non-blocking calls, which a Ctrl-C ends at once: exit 130,
# "cancelled while connecting to", for sql, ask (an agent's open) and
# learn, under mysql:// as under mariadb://.
first_connect_is_cut_short_by_ctrl_c() {
    local label
    start_relay
    relay_deaf
    url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop"
    label="mariadb://ro@127.0.0.1:$RELAY_PORT/shop"
    first_connect_ctrl_c sql --timeout 20000 "$url" "SELECT 42 AS b"
    expect_connect_cancelled askdb "$label"
    first_connect_ctrl_c ask --llm-url http://127.0.0.1:9/v1 --model test "$url" "How many?"
    expect_connect_cancelled askdb "$label"
    first_connect_ctrl_c learn "mysql://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop" --memory "$T/m.sqlite" \
        --question "How many?" --sql "SELECT 42 AS b"
    expect_connect_cancelled "askdb learn" "mysql://ro@127.0.0.1:$RELAY_PORT/shop"
    [ -e "$T/m.sqlite" ] && fail "a cancelled learn made the memory store"
    kill "$RELAY_PID"
    # Greeted and logged in, then nothing: askdb's first SET waits.
    start_relay
    relay_mute
    url="mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop"
    label="mariadb://ro@127.0.0.1:$RELAY_PORT/shop"
    first_connect_ctrl_c sql --timeout 20000 "$url" "SELECT 42 AS b"
    expect_connect_cancelled askdb "$label"
    kill "$RELAY_PID"
    # The server itself still answers, and learn stores through it.
    run learn "$RO_URL" --memory "$T/m.sqlite" --question "How many?" --sql "SELECT 42 AS b"
    expect_rc 0
    expect_out_has "stored (1 row): How many?"
}

# The library reads the option files when it connects, after askdb set
# the URL's connect_timeout, so an option file's connect-timeout (or
# timeout) is the one it waits: with connect-timeout=4 in [askdb] and
# connect_timeout=1 in the URL, a server that never greets was waited 4 s
# and askdb said "within 1 s (connect_timeout)". It names the wait the
# library kept and where it came from; without the URL's, the option
# file's is named, not "the default".
connect_timeout_named_is_the_one_waited() {
    start_relay
    relay_deaf
    printf '[askdb]\nconnect-timeout=3\n' >"$HOME/.my.cnf"
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop?connect_timeout=1" "SELECT 1"
    echo "option file's connect-timeout=3, URL's 1: exit $RC in $ELAPSED_MS ms: $(cat "$T/err")" >>"$T/.trace"
    expect_rc 3
    expect_err_has "cannot connect to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop?connect_timeout=1' within 3 s (connect-timeout of an option file, over the URL's connect_timeout=1; remove it there to use the URL's): Lost connection to server at 'handshake: reading initial communication packet'"
    [ "$ELAPSED_MS" -ge 2500 ] || fail "took $ELAPSED_MS ms: the option file's 3 s was not waited, the message should not name it"
    printf '[client]\ntimeout=2\n' >"$HOME/.my.cnf"
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop" "SELECT 1"
    expect_rc 3
    expect_err_has "cannot connect to 'mariadb://ro@127.0.0.1:$RELAY_PORT/shop' within 2 s (connect-timeout of an option file): Lost connection"
    expect_faster 5000
    # A file's connect-timeout=0 is none to the library, which waited for
    # ever for the greeting: refused before it.
    printf '[client]\nconnect-timeout=0\n' >"$HOME/.my.cnf"
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop?connect_timeout=1" "SELECT 1"
    expect_rc 3
    expect_err_has "an option file sets connect-timeout (or timeout) to 0, which the library takes as no time limit at all"
    expect_faster 2000
    rm -f "$HOME/.my.cnf"
    run sql "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop?connect_timeout=1" "SELECT 1"
    expect_rc 3
    expect_err_has "within 1 s (connect_timeout): Lost connection"
    expect_faster 4000
    kill "$RELAY_PID"
}

# An option file's reconnect=1 (MYSQL_OPT_RECONNECT) must not make the
# library reconnect behind askdb's back: it would send the statement on a
# fresh session that has none of askdb's settings (read-only, the time
# limit, sql_select_limit, ANSI quoting) and askdb's KILL QUERY would go
# to the old session's id. The relay resets the shell's idle session (as a
# NAT or firewall that dropped it does) after its first SET: the next
# statement's prepare cannot be sent, and askdb, not the library, connects
# again. (With the library's reconnect the statement ran on a session
# that answered tx_read_only 0, max_statement_time 0, no sql_select_limit.)
option_file_cannot_turn_reconnect_on() {
    local pid
    start_relay --log "$T/relay.log"
    printf '[askdb]\nreconnect=1\n' >"$HOME/.my.cnf"
    start_shell --llm-url http://127.0.0.1:9/v1 --model test --timeout 7000 --max-rows 50 \
        "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop"
    # Reset once the session holds askdb's settings (its SET was answered)
    # and sits idle.
    local idle=
    for _ in $(seq 1 200); do
        grep -q '^1 cmd 03 SET' "$T/relay.log" 2>/dev/null &&
            [ "$(mdb_admin -N -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'ro' AND COMMAND = 'Sleep'")" = 1 ] &&
            { idle=1; break; }
        sleep 0.05
    done
    [ -n "$idle" ] || fail "the shell's session never sat idle with askdb's settings"
    sleep 0.2
    relay_reset
    echo ".sql SELECT @@session.tx_read_only AS ro, @@session.max_statement_time AS mst, @@session.sql_select_limit AS sl" >&7
    exec 7>&-
    wait "$pid"
    RC=$?
    rm -f "$HOME/.my.cnf"
    cat "$T/relay.log" >>"$T/.trace"
    after_run "shell (reconnect=1, session reset)"
    expect_rc 0
    # The reset broke the first session and a second one logged in: the
    # rows below are not the first session's.
    [ "$(grep -c ' login ' "$T/relay.log")" -ge 2 ] ||
        fail "no second login after the reset: $(cat "$T/relay.log")"
    pycheck '
import csv, io
rows = list(csv.reader(io.StringIO(out)))
i = rows.index(["ro", "mst", "sl"])
r = dict(zip(rows[i], rows[i + 1]))
assert r == {"ro": "1", "mst": "7.25", "sl": "51"}, ("rows from a session without the settings of askdb", r, err)
'
    kill "$RELAY_PID"
}

# An option file's multi-statements (or multi-queries) makes the library
# ask for CLIENT_MULTI_STATEMENTS at login, after askdb's options: the
# server would then take several statements in one query on askdb's
# session. askdb sends nothing of the user's as a plain query (statements
# go through the prepare, which takes one; askdb's own queries are
# fixed), so no two-statement text can reach the server this way to show
# it; what shows is the protocol: every session askdb opens either did
# not ask for it, or turns it off (COM_SET_OPTION,
# MYSQL_OPTION_MULTI_STATEMENTS_OFF) before any other command.
option_file_cannot_turn_multi_statements_on() {
    local group opt
    start_relay --log "$T/relay.log"
    for group in client askdb; do
        for opt in multi-statements multi-queries; do
            : >"$T/relay.log"
            printf '[%s]\n%s=1\n' "$group" "$opt" >"$HOME/.my.cnf"
            run sql -f csv "mariadb://ro:$RO_PW_ENC@127.0.0.1:$RELAY_PORT/shop" "SELECT COUNT(*) AS n FROM customers"
            rm -f "$HOME/.my.cnf"
            cat "$T/relay.log" >>"$T/.trace"
            expect_rc 0
            expect_out 'n\n60\n'
            python3 - "$T/relay.log" "[$group] $opt=1" 2>"$T/py.err" <<'PY' || fail "$(cat "$T/py.err")"
import sys
multi, first, logins = {}, {}, 0
for line in open(sys.argv[1]):
    n, what, arg = (line.split(" ", 2) + [""])[:3]
    if what == "login":
        logins += 1
        multi[n] = int(arg, 16) & 0x10000 != 0
    elif n not in first:
        first[n] = what + " " + arg.strip()
assert logins, "no session logged in through the relay"
assert any(multi.values()), "with %s no session asked for CLIENT_MULTI_STATEMENTS: the option file was not read" % sys.argv[2]
for n, m in multi.items():
    if m and not first.get(n, "").startswith("cmd 1b 1"):
        sys.stderr.write("with %s, session %s asked for CLIENT_MULTI_STATEMENTS and its first command was '%s', not COM_SET_OPTION MULTI_STATEMENTS_OFF\n" % (sys.argv[2], n, first.get(n)))
        sys.exit(1)
PY
        done
    done
    kill "$RELAY_PID"
}

# An option file's init-command runs inside the library's connect, after
# the login and before askdb's settings, in a session that may write (the
# writer's INSERT went in, once, before askdb refused the session). askdb
# now reads the files first, on a connect to no server, and refuses to
# connect at all, saying which setting and where: the INSERT never runs.
# A harmless SET is refused alike: askdb runs no statement it did not
# check.
option_file_init_command_is_refused() {
    local n
    mdb_admin -e "DROP DATABASE IF EXISTS initlog; CREATE DATABASE initlog; CREATE TABLE initlog.t (x INT); GRANT INSERT, SELECT ON initlog.t TO 'rw'@'%';" ||
        fail "creating initlog failed"
    printf '[client]\ninit-command=INSERT INTO initlog.t VALUES (1)\n' >"$HOME/.my.cnf"
    # Over the socket too, where the connect needs no wait (the greeting
    # may be there at once): the files are read before any connect.
    run sql "mariadb://rw:$RW_PW@localhost/shop?socket=$MDB_SOCK" "SELECT COUNT(*) AS n FROM orders"
    expect_rc 3
    expect_err_has "an option file sets init-command"
    run sql "$RW_URL" "SELECT COUNT(*) AS n FROM orders"
    rm -f "$HOME/.my.cnf"
    n=$(mdb_admin -N -e "SELECT COUNT(*) FROM initlog.t")
    mdb_admin -e "DROP DATABASE initlog"
    echo "rows the init-command wrote: $n" >>"$T/.trace"
    expect_rc 3
    expect_err_has "cannot connect to 'mariadb://rw@127.0.0.1:$MDB_PORT/shop': an option file sets init-command, which the library would run on connecting, before askdb could make the session read-only; askdb runs no statement it did not check (askdb did not connect)"
    expect_err_has "remove init-command from the [client], [client-server], [client-mariadb] and [askdb] groups"
    [ -s "$T/out" ] && fail "a result came from a connection that ran an init-command: $(head -c 200 "$T/out")"
    # Not at all (it wrote 1 row before askdb read the files first).
    [ "$n" = 0 ] || fail "the init-command wrote $n rows, expected none"
    printf '[askdb]\ninit-command=SET time_zone = "+05:00"\n' >"$HOME/.my.cnf"
    run sql "$RO_URL" "SELECT 1 AS one"
    rm -f "$HOME/.my.cnf"
    expect_rc 3
    expect_err_has "an option file sets init-command"
}

# Last: it kills the server.
fault_server_killed_mid_query() {
    local pid spid shell
    run sql "$RO_URL" "SELECT 1"
    expect_rc 0
    # A shell open on it, to ask once the server is gone.
    start_llm "$(always "$(fence "SELECT COUNT(*) AS n FROM orders")")"
    mkfifo "$T/fifo"
    (exec timeout -k 5 60 "$ASKDB" shell --llm-url "$URL" --model test --no-question-check --candidates 1 "$RO_URL") <"$T/fifo" >"$T/shell.out" 2>"$T/shell.err" &
    shell=$!
    echo "$shell" >>"$TMP/pids"
    exec 7>"$T/fifo"
    echo ".sql SELECT 41 AS a" >&7
    for _ in $(seq 1 100); do
        grep -q 41 "$T/shell.out" && break
        sleep 0.05
    done
    timeout -k 5 30 "$ASKDB" sql --timeout 30000 "$RO_URL" "SELECT SLEEP(25)" >"$T/out" 2>"$T/err" &
    pid=$!
    wait_running 'SLEEP(25)' 100 0.1
    spid=$(cat "$MDB_DIR/mariadbd.pid")
    kill -9 "$spid"
    local t0
    t0=$(now_ms)
    wait "$pid"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
    after_run "sql (server killed)"
    expect_rc 1
    expect_faster 5000
    expect_err_has "lost the connection to 'mariadb://ro@127.0.0.1:$MDB_PORT/shop'"
    expect_err_has "check that it runs"
    run sql "$RO_URL" "SELECT 1"
    expect_rc 3
    expect_err_has "is the server running"
    # The question fails for the server, not its SQL: no repair asked.
    echo "How many orders are there?" >&7
    exec 7>&-
    wait "$shell"
    cp "$T/shell.out" "$T/out"
    cp "$T/shell.err" "$T/err"
    after_run "shell (server gone)"
    pycheck '
assert len(reqs) <= 1, len(reqs)
assert "is the server running" in err, err
assert "attempts" not in err, err
'
}

# askdb mcp reads the schema (search_objects, the schema resource) on a
# handle of its own, opened for that first read and closed after, so the
# read does not wait for a statement running on execute_sql's handle:
# on a MariaDB server too, and the extra session does not stay.
mcp_schema_read_does_not_wait_for_a_statement() {
    local out
    kill_ro
    out=$(python3 "$HERE/mcp_schema_read.py" "$ASKDB" "$T" "$RO_URL" "SELECT SLEEP(15)" -- \
        mariadb --no-defaults --socket="$MDB_SOCK" -uroot -N -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'ro'")
    echo "mcp: $out" >>"$T/.trace"
    pycheck '
j = json.loads(args[0])
assert j["rc"] == 0 and j["cust"] and j["schema"], j
assert j["ms"] < 5000, "the schema read waited %d ms for the statement" % j["ms"]
assert j["sessions"] == 1, "%d sessions of ro after the schema read, want 1" % j["sessions"]
assert int(j["rows"][0][0]) > 0, j
' "$out"
    after_run "mcp"
}

TESTS=(
    schema_shows_keys_comments_and_estimates
    ask_says_where_a_missing_value_is
    ask_follows_a_case_insensitive_collation
    schema_names_json_columns
    sql_converts_every_type
    bit_64_reads_as_unsigned
    bigint_unsigned_keeps_every_digit
    zero_dates_keep_their_time_part
    sql_limits_rows_and_bytes
    sql_timeout_kills_the_query_on_the_server
    ctrl_c_kills_the_running_query
    ctrl_c_during_the_schema_read_is_cancelled
    killed_by_another_session_is_not_a_timeout
    benchmark_is_refused_as_its_kill_cannot_be_told
    ask_answers_and_repairs_with_the_model
    reserved_words_are_quoted_in_the_schema
    ask_repairs_a_reserved_word_written_bare
    refuses_writes_and_escapes_with_data_unchanged
    sqlite_corpus_changes_nothing
    server_layers_hold_without_the_text_guard
    check_validates_without_running
    permission_errors_say_the_user_may_not_read
    fault_refused_connection_exits_3
    fault_bad_password_exits_3
    fault_tls_required_but_not_offered
    tls_checks_hold_against_the_option_files
    tls_handshake_that_stalls_is_no_answer
    tls_handshake_that_stalls_is_cut_short_by_ctrl_c
    fault_lock_held_by_another_session
    url_parsing_is_strict_and_never_echoes_passwords
    ambiguous_url_never_shows_part_of_the_password
    option_file_gives_the_password
    many_tables_schema_reads_fast
    fault_idle_session_closed_by_the_server
    fault_idle_kill_session_closed_by_the_server
    each_statement_starts_from_a_clean_session
    fault_server_gone_silently_is_found_by_the_kill
    fault_server_gone_silently_is_found_by_an_open_kill_connection
    fault_server_that_greets_no_kill_connection_is_given_up_at_the_limit
    fault_server_that_greets_no_kill_connection_is_given_up_on_ctrl_c
    fault_server_gone_deaf_before_a_statement_runs_is_given_up_on_ctrl_c
    fault_server_gone_deaf_before_a_schema_read_is_given_up_on_ctrl_c
    fault_server_gone_deaf_as_a_statement_is_prepared_is_given_up_on_ctrl_c
    fault_server_gone_deaf_is_given_up_on_ctrl_c_with_a_kept_kill_connection
    fault_server_that_answers_no_kill_is_given_up_at_the_limit
    fault_server_that_answers_no_kill_is_given_up_on_ctrl_c
    fault_server_slow_to_take_connections_is_not_given_up
    fault_full_accept_queue_is_no_answer_not_no_server
    fault_kill_connection_refused_for_too_many_connections
    reconnect_after_a_loss_keeps_to_the_time_limit
    reconnect_whose_settings_get_no_answer_keeps_to_the_time_limit
    reconnect_is_cut_short_by_ctrl_c
    fault_kill_connection_slow_at_each_step_is_given_up_within_2_s
    first_connect_that_times_out_says_no_answer
    first_connect_is_cut_short_by_ctrl_c
    connect_timeout_named_is_the_one_waited
    option_file_cannot_turn_reconnect_on
    option_file_cannot_turn_multi_statements_on
    option_file_init_command_is_refused
    mcp_schema_read_does_not_wait_for_a_statement
    fault_server_killed_mid_query
)

PASSED=0
FAILED=0
for t in "${TESTS[@]}"; do
    if [ -n "$FILTER" ] && ! printf '%s\n' "$t" | grep -qE -- "$FILTER"; then
        continue
    fi
    T="$TMP/t/$t"
    mkdir -p "$T"
    ( trap stop_llm EXIT; cd "$T" && "$t" ) >>"$T/.trace" 2>&1
    rc=$?
    # An option file a test wrote is its own, whether it passed or not:
    # the next tests (and mdb_admin, which reads [client]) must not go by
    # its connect-timeout, reconnect or multi-statements.
    rm -f "$HOME/.my.cnf"
    if [ "$rc" -eq 0 ] && [ ! -s "$T/.fail" ]; then
        PASSED=$((PASSED + 1))
        echo "ok $t"
    else
        FAILED=$((FAILED + 1))
        if [ -s "$T/.fail" ]; then echo "FAIL $t: $(head -n1 "$T/.fail")"; else echo "FAIL $t: exited $rc"; fi
        [ -n "${E2E_VERBOSE:-}" ] && tail -n 12 "$T/.trace" | sed 's/^/    /'
    fi
done
[ -s "$TMP/figure.many" ] && sed 's/^/mariadb.sh: /' "$TMP/figure.many"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
