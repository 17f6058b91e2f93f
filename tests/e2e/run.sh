#!/usr/bin/env bash
# tests/e2e/run.sh - end-to-end tests of the askdb command.
#
#   ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm bash tests/e2e/run.sh
#   bash tests/e2e/run.sh --filter 'refuse|trace'     (ERE on test names)
#   bash tests/e2e/run.sh --list
#   E2E_VERBOSE=1  show the last commands and stderr of a failed test
#   E2E_KEEP=1     keep the temp dir (each test's files are in t/NAME/)
#   E2E_RUN_LIMIT_S=N  kill any single askdb run after N s (default 30)
#
# Each test is a shell function named after the behaviour it checks. It runs
# in a subshell inside its own directory under one temp dir, with its own
# scripted model (tests/fake_llm) started by start_llm, and stops at the
# first failed assertion. Output: "ok NAME" or "FAIL NAME: reason" per test
# (a few indented detail lines may follow a FAIL), then exactly one line
# "N passed, M failed". Exit status 0 only when M is 0.
#
# Every askdb run is also checked for sanitizer reports (AddressSanitizer,
# LeakSanitizer, UndefinedBehaviorSanitizer) on stderr.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

abspath() {
    case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s/%s\n' "$PWD" "$1" ;;
    esac
}

ASKDB=$(abspath "${ASKDB:-$ROOT/build/asan/askdb}")
FAKE_LLM=$(abspath "${FAKE_LLM:-$ROOT/build/asan/fake_llm}")
SHOP_DB=$(abspath "${SHOP_DB:-$ROOT/examples/shop.db}")

FILTER=
LIST=0
while [ $# -gt 0 ]; do
    case $1 in
    --filter) [ $# -ge 2 ] || { echo "run.sh: --filter needs a pattern" >&2; exit 2; }
              FILTER=$2; shift 2 ;;
    --filter=*) FILTER=${1#--filter=}; shift ;;
    --list) LIST=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (--filter PATTERN, --list)" >&2; exit 2 ;;
    esac
done

# --------------------------------------------------------------------------
# A clean environment: nothing of the developer's setup may leak in.
# --------------------------------------------------------------------------
for _v in $(compgen -e); do
    case $_v in ASKDB_*) unset "$_v" ;; esac
done
unset OPENAI_API_KEY ANTHROPIC_API_KEY
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy='127.0.0.1,localhost' NO_PROXY='127.0.0.1,localhost'
export ASKDB_RETRY_BASE_MS=1
# No single askdb run may take longer than this (a hang is a failure).
RUN_LIMIT_S=${E2E_RUN_LIMIT_S:-30}
export LC_ALL=C PYTHONIOENCODING=utf-8 PYTHONUTF8=1

# The interpreter itself, not a version-manager shim (saves ~0.1 s a call).
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
[ -n "$PY" ] && [ -x "$PY" ] || { echo "run.sh: python3 is needed" >&2; exit 2; }

for _f in "$ASKDB" "$FAKE_LLM"; do
    [ -x "$_f" ] || { echo "run.sh: $_f is not built (make build/asan/askdb build/asan/fake_llm)" >&2; exit 2; }
done
[ -f "$SHOP_DB" ] || { echo "run.sh: $SHOP_DB is missing (make examples/shop.db)" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/askdb-e2e.XXXXXX") || exit 2
export ASKDB_CACHE_DIR=$TMP/cache   # value indexes, learned pairs
: >"$TMP/llm.pids"
export XDG_STATE_HOME="$TMP/state"   # the shell's history never lands in $HOME

cleanup() {
    local pid
    if [ -f "$TMP/llm.pids" ]; then
        while read -r pid; do
            [ -n "$pid" ] && kill "$pid" 2>/dev/null
        done <"$TMP/llm.pids"
    fi
    if [ -n "${E2E_KEEP:-}" ]; then
        echo "run.sh: kept $TMP" >&2
    else
        rm -rf "$TMP"
    fi
}
TEST_PID=
# On a signal: stop the running test (its subshell stops its model), then
# leave; cleanup runs on exit.
on_signal() {
    trap - INT TERM
    if [ -n "$TEST_PID" ]; then
        kill -TERM "$TEST_PID" 2>/dev/null
        wait "$TEST_PID" 2>/dev/null
    fi
    exit "$1"
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

# --------------------------------------------------------------------------
# Helpers (used inside a test's subshell; T, W set by run_test)
#   T  the test's directory: harness files (out, err, model logs)
#   W  T/w, the sandbox: askdb's working directory, holds db copies
# --------------------------------------------------------------------------

# Fail the current test with a one-line reason (ends the test's subshell).
fail() {
    local msg
    msg=$(printf '%s' "$*" | tr '\n' '|' | cut -c1-600)
    printf '%s\n' "$msg" >"$T/.fail"
    exit 1
}

now_us() { local t=${EPOCHREALTIME/./}; printf '%s\n' "${t#0}"; }

# run ARGS...: run askdb in $W with stdin from $STDIN (default /dev/null).
# Sets RC and ELAPSED_MS; stdout in $T/out, stderr in $T/err.
run() {
    local t0 t1
    t0=$(now_us)
    (cd "$W" && exec timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" "$@") \
        <"${STDIN:-/dev/null}" >"$T/out" 2>"$T/err"
    RC=$?
    t1=$(now_us)
    ELAPSED_MS=$(((t1 - t0) / 1000))
    {
        printf '$ askdb'; printf ' %q' "$@"; printf '\n-> exit %s in %s ms\n' "$RC" "$ELAPSED_MS"
        sed 's/^/  stderr: /' "$T/err" | head -40
    } >>"$T/.trace"
    [ "$RC" != 124 ] && [ "$RC" != 137 ] ||
        fail "askdb $* did not finish within $RUN_LIMIT_S s (killed)"
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer' "$T/err"; then
        fail "sanitizer report from: askdb $* :: $(grep -m3 -E 'Sanitizer|runtime error' "$T/err")"
    fi
}

# run_tty ARGS...: like run, with stdout and stderr each on a terminal of
# their own (raw mode, so the bytes are askdb's own).
run_tty() {
    (cd "$W" && exec "$PY" - "$RUN_LIMIT_S" "$ASKDB" "$@" <<'PY'
import os, select, subprocess, sys, time, tty
limit, args = float(sys.argv[1]), sys.argv[2:]
m1, s1 = os.openpty()
m2, s2 = os.openpty()
tty.setraw(s1)
tty.setraw(s2)
p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=s1, stderr=s2)
os.close(s1)
os.close(s2)
got = {m1: b"", m2: b""}
live = [m1, m2]
end = time.time() + limit
while live and time.time() < end:
    r, _, _ = select.select(live, [], [], 0.5)
    for fd in r:
        try:
            d = os.read(fd, 65536)
        except OSError:
            d = b""
        if d:
            got[fd] += d
        else:
            live.remove(fd)
try:
    rc = p.wait(timeout=max(0.1, end - time.time()))
except subprocess.TimeoutExpired:
    p.kill()
    rc = 124
sys.stdout.buffer.write(got[m1])
sys.stderr.buffer.write(got[m2])
sys.exit(rc)
PY
    ) >"$T/out" 2>"$T/err"
    RC=$?
    {
        printf '$ (tty) askdb'; printf ' %q' "$@"; printf '\n-> exit %s\n' "$RC"
        sed 's/^/  stderr: /' "$T/err" | head -40
    } >>"$T/.trace"
    [ "$RC" != 124 ] || fail "askdb $* did not finish within $RUN_LIMIT_S s (killed)"
    if grep -qaE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer' "$T/err"; then
        fail "sanitizer report from: askdb $* :: $(grep -a -m3 -E 'Sanitizer|runtime error' "$T/err")"
    fi
}

# run_pty STEPS ARGS...: run askdb in $W on a terminal of its own (stdin,
# stdout and stderr; Ctrl-C typed there reaches it as at a keyboard) and
# play STEPS, a JSON list of ["type", TEXT] (once the line editor reads:
# the terminal is out of canonical mode, else Ctrl-D would be lost and
# the line echoed twice), ["send", TEXT] (at once: Ctrl-C while a
# command runs), ["wait", REGEX] (for what askdb writes, after the
# previous match), ["file", PATH] (until PATH is not empty),
# ["append", [PATH, TEXT]] (as another program writes to a file) or
# ["sleep", S]; then wait for it to end. Sets RC; the whole terminal
# output is in $T/out. A wait that times out fails the test. With
# PTY_STDOUT=PATH askdb's stdout is that file instead (stdin and stderr
# stay on the terminal); with PTY_COLS=N the terminal is N columns wide.
run_pty() {
    local steps=$1
    shift
    (cd "$W" && exec "$PY" - "$RUN_LIMIT_S" "$steps" "$ASKDB" "$@" <<'PY'
import json, os, pty, re, select, signal, sys, termios, time
limit, steps, args = float(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    # A test runs in the background, where SIGINT is ignored.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if os.environ.get("PTY_COLS"):
        import fcntl, struct
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, int(os.environ["PTY_COLS"]), 0, 0))
    if os.environ.get("PTY_STDOUT"):
        os.dup2(os.open(os.environ["PTY_STDOUT"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
    os.execv(args[0], args)
buf, pos, eof = b"", 0, False
def more(t):
    global buf, eof
    r, _, _ = select.select([fd], [], [], t)
    if r:
        try:
            d = os.read(fd, 65536)
        except OSError:
            d = b""
        buf += d
        eof = not d
def give_up(why):
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    sys.stdout.buffer.write(buf)
    sys.stderr.write(why + "\n")
    sys.exit(124)
for kind, arg in steps:
    end = time.time() + limit
    if kind == "type":
        while termios.tcgetattr(fd)[3] & termios.ICANON:
            if eof or time.time() > end:
                give_up("the line editor did not read %r" % arg)
            more(0.02)
    if kind in ("type", "send"):
        os.write(fd, arg.encode())
    elif kind == "sleep":
        time.sleep(arg)
    elif kind == "append":
        with open(arg[0], "a") as f:
            f.write(arg[1])
    elif kind == "file":
        while not (os.path.exists(arg) and os.path.getsize(arg) > 0):
            if time.time() > end:
                give_up("%s stayed empty" % arg)
            more(0.05)
    elif kind == "wait":
        pat = re.compile(arg.encode())
        while not pat.search(buf, pos):
            if eof or time.time() > end:
                give_up("no %r in the output" % arg)
            more(0.1)
        pos = pat.search(buf, pos).end()
end = time.time() + limit
while not eof and time.time() < end:
    more(0.1)
try:
    _, st = os.waitpid(pid, 0) if eof else (0, None)
except ChildProcessError:
    st = None
if st is None:
    give_up("askdb did not end")
sys.stdout.buffer.write(buf)
sys.exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st))
PY
    ) >"$T/out" 2>"$T/err"
    RC=$?
    {
        printf '$ (pty) askdb'; printf ' %q' "$@"; printf '\n-> exit %s\n' "$RC"
        sed 's/^/  err: /' "$T/err" | head -5
        sed 's/^/  tty: /' "$T/out" | tail -40
    } >>"$T/.trace"
    [ "$RC" != 124 ] || fail "askdb $*: $(cat "$T/err") (terminal: $(tail -c 300 "$T/out" | tr -d '\r'))"
    if grep -qaE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer' "$T/out"; then
        fail "sanitizer report from: askdb $* :: $(grep -a -m3 -E 'Sanitizer|runtime error' "$T/out")"
    fi
}

# expect_no_controls FILE: no ESC, BEL, CR, C1 control or bidirectional
# override or isolate (UTF-8) in FILE.
expect_no_controls() {
    "$PY" - "$1" <<'PY' || fail "control characters reached a terminal: $(show_bytes "$1")"
import re, sys
b = open(sys.argv[1], "rb").read()
sys.exit(1 if re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]", b) else 0)
PY
}

# start_llm SCRIPT_JSON: a fresh scripted model; sets URL (no path) and
# LLMLOG (its request log).
LLM_N=0
start_llm() {
    local d pid _
    stop_llms
    LLM_N=$((LLM_N + 1))
    d="$T/llm$LLM_N"
    mkdir -p "$d"
    printf '%s' "$1" >"$d/script.json"
    LLMLOG="$d/log"
    : >"$LLMLOG"
    "$FAKE_LLM" --script "$d/script.json" --log "$LLMLOG" --port 0 \
        --port-file "$d/port" 2>"$d/stderr" &
    pid=$!
    echo "$pid" >>"$T/.pids"
    echo "$pid" >>"$TMP/llm.pids"
    for _ in $(seq 1 100); do
        [ -s "$d/port" ] && break
        kill -0 "$pid" 2>/dev/null || fail "fake_llm exited: $(cat "$d/stderr")"
        sleep 0.05
    done
    [ -s "$d/port" ] || fail "fake_llm did not start"
    URL="http://127.0.0.1:$(cat "$d/port")"
}

# Stop (and reap) the models this test started. start_llm calls it, so at
# most one model runs at a time; the test's subshell, their parent, calls
# it on exit too.
stop_llms() {
    local pid
    [ -s "$T/.pids" ] || return 0
    while read -r pid; do
        [ -n "$pid" ] || continue
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done <"$T/.pids"
    : >"$T/.pids"
    : >"$TMP/llm.pids"
}

# A JSON script of plain completions, one per argument.
replies() {
    "$PY" -c 'import json,sys; print(json.dumps([{"content": a} for a in sys.argv[1:]]))' "$@"
}
# A JSON script whose one completion answers every request.
always() {
    "$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "repeat": True}]))' "$1"
}
# TEXT in a ```sql fence, as a model would write it.
# shellcheck disable=SC2016
fence() { printf '```sql\n%s\n```' "$1"; }

copy_db() { cp "$SHOP_DB" "$W/${1:-shop.db}"; }

sha() { sha256sum "$1" | cut -d' ' -f1; }

# A listing of the sandbox with checksums: any new, removed or changed file
# shows up as a difference.
snapshot() {
    (cd "$W" && find . | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}

nreq() { if [ -s "${LLMLOG:-}" ]; then wc -l <"$LLMLOG" | tr -d ' '; else echo 0; fi; }

expect_rc() {
    [ "$RC" = "$1" ] || fail "exit $RC, expected $1 (stderr: $(head -c 300 "$T/err"))"
}
expect_requests() {
    local n
    n=$(nreq)
    [ "$n" = "$1" ] || fail "the model got $n requests, expected $1"
}
expect_err_has() {
    grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1' (stderr: $(head -c 400 "$T/err"))"
}
expect_err_lacks() {
    ! grep -qF -- "$1" "$T/err" || fail "stderr has '$1' (stderr: $(head -c 400 "$T/err"))"
}
expect_out_has() {
    grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1' (stdout: $(head -c 400 "$T/out"))"
}
expect_out_lacks() {
    ! grep -qF -- "$1" "$T/out" || fail "stdout has '$1'"
}
expect_no_out() {
    [ ! -s "$T/out" ] || fail "stdout not empty: $(head -c 200 "$T/out")"
}
# expect_out FORMAT [ARGS]: stdout is exactly the printf expansion.
expect_out() {
    local fmt=$1
    shift
    # shellcheck disable=SC2059
    printf -- "$fmt" "$@" >"$T/expected"
    expect_out_file "$T/expected"
}
expect_out_file() {
    cmp -s "$1" "$T/out" || fail "stdout differs: expected $(show_bytes "$1") got $(show_bytes "$T/out")"
}
# A file's bytes as a Python literal (CR, NUL and friends visible).
show_bytes() {
    "$PY" -c 'import sys; b = open(sys.argv[1], "rb").read(); print(repr(b[:260]) + ("..." if len(b) > 260 else ""))' "$1"
}
expect_faster() {
    [ "$ELAPSED_MS" -lt "$1" ] || fail "took $ELAPSED_MS ms, expected under $1 ms"
}

# pycheck CODE [ARGS]: run Python assertions. In scope: out, err (the last
# run's stdout/stderr as text, CRLF kept), reqs (the model's request log,
# parsed), args, and the helpers msgs(i), user(i) (last user message of
# request i, 0-based), trace_lines(path).
pycheck() {
    local code=$1 msg
    shift
    msg=$("$PY" - "$T" "${LLMLOG:-}" "$code" "$@" <<'PY' 2>&1
import json, os, sys
tdir, log, code = sys.argv[1:4]
args = sys.argv[4:]
def rd(p):
    try:
        with open(p, encoding="utf-8", errors="replace", newline="") as f:
            return f.read()
    except FileNotFoundError:
        return ""
out = rd(os.path.join(tdir, "out"))
err = rd(os.path.join(tdir, "err"))
reqs = []
if log and os.path.exists(log):
    with open(log, encoding="utf-8") as f:
        reqs = [json.loads(l) for l in f if l.strip()]
def msgs(i):
    return reqs[i]["body"]["messages"]
def user(i):
    return [m for m in msgs(i) if m["role"] == "user"][-1]["content"]
def trace_lines(p):
    with open(p, encoding="utf-8") as f:
        return [json.loads(l) for l in f]
try:
    exec(code, globals())
except AssertionError as e:
    print(str(e) or "assertion failed")
    sys.exit(1)
except Exception as e:
    print("%s: %s" % (type(e).__name__, e))
    sys.exit(1)
PY
    ) || fail "$msg"
}

# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

repairs_unknown_column_on_second_attempt() {
    copy_db
    local bad good
    bad=$(fence "SELECT id, first_nam FROM customers ORDER BY id LIMIT 3")
    good=$(fence "SELECT id, first_name FROM customers ORDER BY id LIMIT 3")
    # A third reply that would be wrong, to catch a needless extra request.
    start_llm "$(replies "$bad" "$good" "$(fence "SELECT 'extra request' AS oops")")"
    run ask --llm-url "$URL" --model test -f csv shop.db "First three customers?"
    expect_rc 0
    expect_out 'id,first_name\n1,Olivia\n2,Alejandro\n3,Lucía\n'
    expect_requests 2
    pycheck '
m = msgs(1)
assert [x["role"] for x in m] == ["system", "user", "assistant", "user"], [x["role"] for x in m]
assert m[2]["content"] == args[0], "the failed reply is not replayed as the assistant turn"
last = m[-1]["content"]
assert "Error: no such column: first_nam\n" in last, "no exact error text: " + last
assert "SELECT id, first_nam FROM customers ORDER BY id LIMIT 3" in last, "failed SQL not shown: " + last
assert "customers.first_name" in last, "no hint naming the real column: " + last
assert reqs[0]["body"]["model"] == "test", reqs[0]["body"]["model"]
assert msgs(0)[0]["role"] == "system" and len(msgs(0)) == 2
assert msgs(0)[1]["content"].endswith("Question: First three customers?\n"), msgs(0)[1]["content"][-80:]
' "$bad"
}

gives_up_after_max_attempts_listing_every_attempt() {
    copy_db
    local s
    s=$(replies "$(fence "SELECT * FROM custmers")" \
                "$(fence "SELECT FROM WHERE")" \
                "$(fence "SELECT nope FROM orders")" \
                "$(fence "SELECT 1 AS fourth")")
    start_llm "$s"
    run ask --llm-url "$URL" --model test --no-question-check shop.db "Anything?"
    expect_rc 1
    expect_requests 3
    expect_err_has "no valid SQL after 3 attempts"
    expect_err_has "attempt 1: unknown_table: no such table: custmers"
    expect_err_has "attempt 2: syntax: "
    expect_err_has "syntax error"
    expect_err_has "attempt 3: unknown_column: no such column: nope"
    expect_err_lacks "attempt 4"
    expect_err_lacks "never changes the data"
    [ ! -s "$T/out" ] || fail "stdout not empty on failure: $(head -c 200 "$T/out")"
    pycheck '
assert "Error: no such table: custmers\n" in user(1), user(1)
assert "customers" in user(1).split("Hint:")[1], "the table hint does not name customers: " + user(1)
assert "Error: near \"FROM\": syntax error" in user(2), user(2)
assert [m["role"] for m in msgs(2)] == ["system", "user", "assistant", "user", "assistant", "user"]
'

    start_llm "$s"
    run ask --llm-url "$URL" --model test --max-attempts 2 --no-question-check shop.db "Anything?"
    expect_rc 1
    expect_requests 2
    expect_err_has "no valid SQL after 2 attempts"
    expect_err_has "attempt 2: syntax: "
    expect_err_lacks "attempt 3"

    start_llm "$s"
    run ask --llm-url "$URL" --model test --max-attempts 1 --no-question-check shop.db "Anything?"
    expect_rc 1
    expect_requests 1
    expect_err_has "no valid SQL after 1 attempt"
}

refuses_writes_and_keeps_db_unchanged() {
    copy_db
    local before after sum0 stmt n
    local -a stmts=(
        "DROP TABLE orders"
        "DELETE FROM orders"
        "UPDATE orders SET total = 0"
        "INSERT INTO categories (id, name) VALUES (999, 'x')"
        "ATTACH DATABASE '$W/attached.db' AS x"
        "PRAGMA journal_mode=DELETE"
        "PRAGMA user_version=5"
        "SELECT 1; DROP TABLE orders"
        "SELECT load_extension('$W/ext')"
        "WITH x AS (SELECT 1) DELETE FROM orders"
        "VACUUM INTO '$W/vacuumed.db'"
        "CREATE TABLE t(x)"
        "REPLACE INTO categories (id, name) VALUES (1, 'x')"
        "UPDATE orders SET total = (SELECT 0)"
        "BEGIN IMMEDIATE"
    )
    # Safety (exit code, unchanged file, no new file) fails at once; how
    # the refusal is reported is collected and checked at the end.
    sum0=$(sha "$W/shop.db")
    before=$(snapshot)
    for stmt in "${stmts[@]}"; do
        start_llm "$(always "$(fence "$stmt")")"
        run ask --llm-url "$URL" --model test --no-question-check shop.db "Please change the data"
        expect_rc 1
        # A change refused again after the repair's hint: no third call. A
        # read refused for what it calls is repaired to the end.
        case $stmt in "SELECT load_extension"*) n=3 ;; *) n=2 ;; esac
        expect_err_has "no valid SQL after $n attempts"
        expect_err_has "(askdb runs one read-only query and never changes the data: a question that asks to change it cannot be answered)"
        expect_requests $n
        [ ! -s "$T/out" ] || fail "ask printed rows for: $stmt"
        [ "$(sha "$W/shop.db")" = "$sum0" ] || fail "ask changed the database with: $stmt"
        pycheck '
import re
classes = re.findall(r"attempt \d: (\w+):", err)
ok = classes == ["refused"] * int(args[2]) and "Hint: write exactly one read-only query" in user(1)
open(args[1], "a").write("" if ok else "%s.. -> %s; " % (" ".join(args[0].split()[:2]), "/".join(sorted(set(classes)))))
' "$stmt" "$T/not_refused" $n

        run sql shop.db "$stmt"
        expect_rc 1
        expect_err_has "refused"
        [ ! -s "$T/out" ] || fail "sql printed rows for: $stmt"
        [ "$(sha "$W/shop.db")" = "$sum0" ] || fail "sql changed the database with: $stmt"
        after=$(snapshot)
        [ "$before" = "$after" ] || fail "files changed in the sandbox after: $stmt: $(diff <(echo "$before") <(echo "$after") | head -4)"
    done
    [ ! -s "$T/not_refused" ] ||
        fail "db unchanged, but these model replies were not classified 'refused' (attempt classes): $(cat "$T/not_refused")"
}

# A parameter (?, :name, @name, $name) has no value to bind: SQLite would
# run the query with NULL for it and answer another question. A syntax
# error, as PostgreSQL's $1 and MariaDB's ?, that the model repairs.
sqlite_parameters_are_a_syntax_error_to_repair() {
    copy_db
    local q
    for q in 'SELECT first_name FROM customers WHERE id = ?' \
             'SELECT first_name FROM customers WHERE id = :id' \
             'SELECT count(*) FROM customers WHERE country = @c OR ? IS NULL' \
             'SELECT $x IS NULL'; do
        run sql shop.db "$q"
        expect_rc 1
        expect_no_out
        expect_err_has " placeholder; write the values into the SQL"
    done
    expect_err_has 'the query has a $x placeholder'
    run sql shop.db "SELECT '?' AS q, ':id' AS n"
    expect_rc 0
    start_llm "$(replies "$(fence 'SELECT first_name FROM customers WHERE id = ?')" \
        "$(fence "SELECT first_name FROM customers WHERE id = 1")")"
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 -f json shop.db "Name of customer 1?"
    expect_rc 0
    expect_requests 2
    pycheck '
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["syntax", "none"], j["attempts"]
assert j["rows"] == [["Olivia"]], j["rows"]
assert "the query has a ? placeholder" in user(1), user(1)
'
}

missing_database_exits_3_and_creates_nothing() {
    start_llm "$(always "$(fence "SELECT 1")")"
    local cmd before
    mkdir "$W/adir"
    "$PY" -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 16 + b"not a database\n")' >"$W/junk.db"
    : >"$W/empty.db"
    local junk_sum
    junk_sum=$(sha "$W/junk.db")
    before=$(snapshot)
    for cmd in ask schema sql shell; do
        case $cmd in
        ask) run ask --llm-url "$URL" --model test nope.db "How many orders?" ;;
        schema) run schema nope.db ;;
        sql) run sql nope.db "SELECT 1" ;;
        shell) STDIN=/dev/null run shell --llm-url "$URL" --model test nope.db ;;
        esac
        expect_rc 3
        expect_err_has "No such file or directory"
        expect_err_has "askdb never creates databases"
        [ ! -e "$W/nope.db" ] || fail "$cmd created nope.db"

        case $cmd in
        ask) run ask --llm-url "$URL" --model test adir "How many orders?" ;;
        schema) run schema adir ;;
        sql) run sql adir "SELECT 1" ;;
        shell) run shell --llm-url "$URL" --model test adir ;;
        esac
        expect_rc 3
        expect_err_has "it is a directory"

        case $cmd in
        ask) run ask --llm-url "$URL" --model test junk.db "How many orders?" ;;
        schema) run schema junk.db ;;
        sql) run sql junk.db "SELECT 1" ;;
        shell) run shell --llm-url "$URL" --model test junk.db ;;
        esac
        expect_rc 3
        expect_err_has "not an SQLite database"
        [ "$(sha "$W/junk.db")" = "$junk_sum" ] || fail "$cmd changed junk.db"
    done
    # A URI-looking name is a plain path too: no mode=rwc, no new file.
    run sql 'file:new.db?mode=rwc' "SELECT 1"
    expect_rc 3
    expect_err_has "askdb never creates databases"
    # A ~ in quotes ("~/My Data/shop.db") no shell expanded: said as such,
    # not a bare "No such file" for a file that is in the home folder.
    for f in '~/shop.db' '~other/shop.db'; do
        run sql "$f" "SELECT 1"
        expect_rc 3
        expect_err_has "cannot open database '$f': No such file or directory (askdb never creates databases); a leading ~ is expanded by the shell, never inside quotes: write \"\$HOME/...\" or leave ~/ outside the quotes"
    done
    # An empty file is an empty database: nothing to ask about, still exit 3.
    run ask --llm-url "$URL" --model test empty.db "How many orders?"
    expect_rc 3
    expect_err_has "no tables"
    # schema says the same, in either format (it printed nothing, exit 0).
    for f in text json; do
        if [ "$f" = json ]; then run schema -f json empty.db; else run schema empty.db; fi
        expect_rc 3
        expect_err_has "askdb: database 'empty.db' has no tables or views to ask about"
        [ ! -s "$T/out" ] || fail "schema -f $f printed: $(head -c 200 "$T/out")"
    done
    # The shell opens it (tables may come later) and its .schema says why
    # it shows nothing (it printed nothing at all).
    printf '.schema\n' >"$T/in"
    STDIN="$T/in" run shell --llm-url "$URL" --model test empty.db
    expect_err_has "askdb: database 'empty.db' has no tables or views"
    [ ! -s "$W/empty.db" ] || fail "ask wrote into empty.db"
    [ "$before" = "$(snapshot)" ] || fail "files changed in the sandbox: $(diff <(echo "$before") <(snapshot) | head -4)"
    expect_requests 0
}

SLOW_SQL="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"

slow_query_is_interrupted() {
    copy_db
    run sql --timeout 200 shop.db "$SLOW_SQL"
    expect_rc 1
    expect_err_has "200 ms time limit"
    expect_faster 5000
    [ ! -s "$T/out" ] || fail "rows printed for an interrupted query"

    start_llm "$(always "$(fence "$SLOW_SQL")")"
    run ask --llm-url "$URL" --model test --timeout 200 -f json shop.db "Count forever"
    expect_rc 1
    expect_requests 3
    expect_faster 8000
    pycheck '
j = json.loads(out)
assert j["status"] == "no valid SQL", j["status"]
assert [a["error"] for a in j["attempts"]] == ["timeout"] * 3, j["attempts"]
assert all("200 ms time limit" in a["message"] for a in j["attempts"]), j["attempts"]
assert "rows" not in j
assert "longer than the 200 ms limit" in user(1), user(1)
'
    # Said as what happened: the SQL was valid, and too slow each time.
    start_llm "$(always "$(fence "$SLOW_SQL")")"
    run ask --llm-url "$URL" --model test --timeout 200 --max-attempts 2 shop.db "Count forever"
    expect_rc 1
    expect_err_has "askdb: no answer after 2 attempts: every query ran past the time limit"
    expect_err_has "attempt 2: timeout: "
    expect_err_lacks "no valid SQL"
}

retries_429_and_500_but_not_401() {
    copy_db
    local ok
    ok=$(fence "SELECT 1 AS x")
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([
        {"status": 429, "headers": {"Retry-After": "0"}},
        {"status": 500},
        {"content": sys.argv[1]}]))' "$ok")"
    run ask --llm-url "$URL" --model test --no-question-check shop.db "One?"
    expect_rc 0
    expect_requests 3
    expect_out 'x\n1\n'
    expect_faster 5000

    # A dropped connection is retried too.
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"close": True}, {"content": sys.argv[1]}]))' "$ok")"
    run ask --llm-url "$URL" --model test --no-question-check shop.db "One?"
    expect_rc 0
    expect_requests 2
    expect_out 'x\n1\n'

    # 401 is final: no retry, exit 4, a hint about the key.
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"status": 401}, {"content": sys.argv[1]}]))' "$ok")"
    run ask --llm-url "$URL" --model test --no-question-check shop.db "One?"
    expect_rc 4
    expect_requests 1
    expect_err_has "401"
    expect_err_has "API key"
    expect_err_has "--api-key"
    [ ! -s "$T/out" ] || fail "stdout not empty after 401"

    # Retries run out: exit 4 after 1 + --retries requests.
    start_llm '[{"status": 503, "repeat": true}]'
    run ask --llm-url "$URL" --model test --retries 2 --no-question-check shop.db "One?"
    expect_rc 4
    expect_requests 3
    expect_err_has "503"
    expect_err_has "after 2 retries"

    # Nothing listens: exit 4 quickly.
    local port
    port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    run ask --llm-url "http://127.0.0.1:$port/v1" --model test --no-question-check shop.db "One?"
    expect_rc 4
    expect_err_has "cannot reach model"
    expect_err_has "connection refused"
    expect_faster 5000
}

model_timeout_exits_4() {
    copy_db
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"delay_ms": 5000, "content": sys.argv[1]}]))' "$(fence "SELECT 1")")"
    run ask --llm-url "$URL" --model test --llm-timeout 300 --no-question-check shop.db "One?"
    expect_rc 4
    expect_err_has "did not answer within 300 ms"
    expect_requests 1
    expect_faster 4000
}

FMT_SQL="WITH t(id, name, price) AS (VALUES (1, 'Ann', 9.5), (2, 'Smith, \"Jo\"', NULL), (3, 'Zoë', 12.0)) SELECT * FROM t"

output_formats_are_exact() {
    copy_db
    run sql -f table shop.db "$FMT_SQL"
    expect_rc 0
    expect_out '%s\n' \
        '+----+-------------+-------+' \
        '| id | name        | price |' \
        '+----+-------------+-------+' \
        '|  1 | Ann         |   9.5 |' \
        '|  2 | Smith, "Jo" |       |' \
        '|  3 | Zoë         |  12.0 |' \
        '+----+-------------+-------+' \
        '(3 rows)'
    [ ! -s "$T/err" ] || fail "stderr not empty: $(cat "$T/err")"

    run sql -f csv shop.db "$FMT_SQL"
    expect_rc 0
    expect_out 'id,name,price\n1,Ann,9.5\n2,"Smith, ""Jo""",\n3,Zoë,12\n'

    # Reals: 15 digits and always a point in a table, as sqlite3 shows
    # them (60.0 never reads as an integer); in CSV and JSON as many as it
    # takes to read the same double back, and no more.
    run sql -f table shop.db "SELECT 0.1 + 0.2 AS a, 123456789.12345678 AS b, 0.1 AS c, 60.0 AS d"
    expect_rc 0
    expect_out_has '| 0.3 | 123456789.123457 | 0.1 | 60.0 |'
    run sql -f table shop.db "SELECT 1e300 * 10 AS a, 1e-7 AS b, 2.0 AS c"
    expect_rc 0
    expect_out_has '| 1.0e+301 | 1.0e-07 | 2.0 |'
    run sql -f csv shop.db "SELECT 0.1 + 0.2 AS a, 123456789.12345678 AS b, 0.1 AS c, 60.0 AS d"
    expect_rc 0
    expect_out 'a,b,c,d\n0.30000000000000004,123456789.12345678,0.1,60\n'
    run sql -f json shop.db "SELECT 0.1 + 0.2 AS a, 123456789.12345678 AS b, 0.1 AS c, 60.0 AS d, '-1.25' AS e"
    expect_rc 0
    pycheck 'import re; t = re.sub(r"\s+", "", out); assert "\"rows\":[[0.30000000000000004,123456789.12345678,0.1,60.0,\"-1.25\"]]" in t, t'

    # NULL is an empty field, empty text a quoted one
    run sql -f csv shop.db "SELECT NULL AS a, '' AS b, 'x' AS c"
    expect_rc 0
    expect_out 'a,b,c\n,"",x\n'

    # csv is the default when stdout is not a terminal
    run sql shop.db "$FMT_SQL"
    expect_rc 0
    expect_out 'id,name,price\n1,Ann,9.5\n2,"Smith, ""Jo""",\n3,Zoë,12\n'

    run sql -f markdown shop.db "$FMT_SQL"
    expect_rc 0
    expect_out '%s\n' \
        '| id  | name        | price |' \
        '| --- | ----------- | ----- |' \
        '| 1   | Ann         | 9.5   |' \
        '| 2   | Smith, "Jo" |       |' \
        '| 3   | Zoë         | 12.0  |'

    # A Markdown cell is one line: a line break in a value (LF, CR LF or
    # CR) is GitHub's <br>, a '|' is escaped, another control a space.
    run sql -f md shop.db "SELECT 'a' || char(10) || 'b|c' || char(13, 10) || 'd' || char(13) || 'e' || char(9) || 'f' AS v, 1 AS n"
    expect_rc 0
    expect_out '%s\n' \
        '| v                     | n   |' \
        '| --------------------- | --- |' \
        '| a<br>b\|c<br>d<br>e f | 1   |'

    # '<' and '&' are entities: a value shows as it is, not as HTML, an
    # autolink or an entity; the widths count what is printed.
    run sql -f md shop.db "SELECT '<b>x</b> & <a@b.c> &copy;' AS \"<v>\""
    expect_rc 0
    expect_out '%s\n' \
        '| &lt;v>                                     |' \
        '| ------------------------------------------ |' \
        '| &lt;b>x&lt;/b> &amp; &lt;a@b.c> &amp;copy; |'

    run sql --format json shop.db "$FMT_SQL"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["sql"] == args[0], j["sql"]
assert j["columns"] == ["id", "name", "price"], j["columns"]
rows = j["rows"]
assert rows == [[1, "Ann", 9.5], [2, "Smith, \"Jo\"", None], [3, "Zo\u00eb", 12.0]], rows
types = [[type(v).__name__ for v in r] for r in rows]
assert types == [["int", "str", "float"], ["int", "str", "NoneType"], ["int", "str", "float"]], types
assert j["row_count"] == 3 and type(j["row_count"]) is int
assert j["truncated"] is False, j["truncated"]
assert "error" not in j
' "$FMT_SQL"

    # A failing statement in JSON: the error is in the document too.
    run sql -f json shop.db "SELECT nope FROM orders"
    expect_rc 1
    pycheck '
j = json.loads(out)
assert "no such column: nope" in j["error"], j
assert "rows" not in j
'
}

ask_json_has_the_whole_answer() {
    copy_db
    local q="SELECT status, count(*) AS n FROM orders WHERE status IN ('cancelled', 'refunded') GROUP BY status ORDER BY status"
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([
        {"content": sys.argv[1], "usage": {"prompt_tokens": 1000, "completion_tokens": 20}},
        {"content": sys.argv[2], "usage": {"prompt_tokens": 1200, "completion_tokens": 25}}]))' \
        "$(fence "SELECT statuz FROM orders")" "$(fence "$q")")"
    run ask --llm-url "$URL" --model test -f json shop.db "Cancelled and refunded orders?"
    expect_rc 0
    expect_requests 2
    pycheck '
j = json.loads(out)
for k in ("question", "status", "sql", "columns", "rows", "row_count", "truncated", "attempts", "timings", "llm_calls", "tokens"):
    assert k in j, "missing key " + k
assert j["question"] == "Cancelled and refunded orders?"
assert j["status"] == "ok", j["status"]
assert j["sql"] == args[0], j["sql"]
assert j["columns"] == ["status", "n"], j["columns"]
assert all(type(r[0]) is str and type(r[1]) is int for r in j["rows"]), j["rows"]
assert [r[0] for r in j["rows"]] == ["cancelled", "refunded"], j["rows"]
assert j["row_count"] == 2 and j["truncated"] is False
a = j["attempts"]
assert len(a) == 2, a
assert a[0]["error"] == "unknown_column" and "no such column: statuz" in a[0]["message"], a[0]
assert a[0]["sql"] == "SELECT statuz FROM orders", a[0]
assert a[1]["error"] == "none" and a[1]["message"] is None and a[1]["sql"] == args[0], a[1]
assert j["llm_calls"] == 2, j["llm_calls"]
# one candidate by default with an HTTP model (3 only with the local one)
assert j["candidates"] == 1, j["candidates"]
assert j["tokens"] == {"prompt": 2200, "completion": 45}, j["tokens"]
for k in ("schema_ms", "prompt_ms", "llm_ms", "validate_ms", "exec_ms", "total_ms"):
    assert isinstance(j["timings"][k], (int, float)) and j["timings"][k] >= 0, (k, j["timings"])
assert j["timings"]["total_ms"] >= j["timings"]["llm_ms"]
assert "error" not in j
' "$q"
}

truncates_at_max_rows_with_a_notice() {
    copy_db
    local q="SELECT id FROM customers ORDER BY id"
    run sql -f table --max-rows 3 shop.db "$q"
    expect_rc 0
    expect_out '%s\n' '+----+' '| id |' '+----+' '|  1 |' '|  2 |' '|  3 |' '+----+' \
        '(3 rows; truncated at the row limit (--max-rows))'

    run sql -f csv --max-rows 3 shop.db "$q"
    expect_rc 0
    expect_out 'id\n1\n2\n3\n'
    expect_err_has "truncated at the row limit (--max-rows) after 3 rows"

    run sql -f markdown --max-rows 3 shop.db "$q"
    expect_rc 0
    expect_out_lacks "truncated"
    expect_err_has "truncated"

    run sql -f json --max-rows 3 shop.db "$q"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["rows"] == [[1], [2], [3]] and j["row_count"] == 3, j
assert j["truncated"] == "rows", j["truncated"]
'
    # Exactly max-rows rows is not truncated.
    run sql -f json --max-rows 3 shop.db "SELECT id FROM customers ORDER BY id LIMIT 3"
    expect_rc 0
    pycheck 'assert json.loads(out)["truncated"] is False, out'

    run sql -f json --max-bytes 100 shop.db "SELECT email FROM customers ORDER BY id"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["truncated"] == "bytes", j["truncated"]
assert 1 <= j["row_count"] < 60, j["row_count"]
'
    # Through ask as well.
    start_llm "$(replies "$(fence "$q")")"
    run ask --llm-url "$URL" --model test -f json --max-rows 3 shop.db "All customer ids"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["rows"] == [[1], [2], [3]] and j["truncated"] == "rows", j
'
}

sql_first_row_over_max_bytes_says_so_as_ask_does() {
    # A result cut at the byte cap before its first row is not an empty
    # result: sql says what ask says of it, exit 1 as ask's (no rows it
    # could give), in every format; the same rows under a larger cap come.
    copy_db
    local msg="the first row alone is larger than the 100-byte result cap (--max-bytes); select fewer or shorter columns (length() or substr() of long text)"
    local f
    for f in table csv markdown; do
        run sql --max-bytes 100 -f "$f" shop.db "SELECT * FROM customers"
        expect_rc 1
        expect_no_out
        expect_err_has "askdb: $msg"
    done
    run sql --max-bytes 100 -f json shop.db "SELECT * FROM customers"
    expect_rc 1
    pycheck 'import sys; j = json.loads(out); assert j["error"] == sys.argv[-1] and "rows" not in j, j' "$msg"
    start_llm "$(always "$(fence "SELECT * FROM customers")")"
    run ask --llm-url "$URL" --model test --no-question-check --max-attempts 1 --max-bytes 100 shop.db "Every customer"
    expect_rc 1
    expect_err_has "$msg"
    run sql --max-bytes 1000 -f csv shop.db "SELECT * FROM customers"
    expect_rc 0
    expect_err_has "result truncated at the size limit (--max-bytes) after"
}

huge_values_stop_at_max_bytes() {
    # A huge value is never made (zeroblob, randomblob): SQLite may hold
    # at most max(--max-bytes, 16 MiB) in one value, so the query fails at
    # once with a clear error instead of allocating gigabytes; a value
    # under that but over the cap is made, and its row is not kept.
    copy_db
    run sql -f table --max-bytes 100000 shop.db "SELECT zeroblob(900000000) AS z"
    expect_rc 1
    expect_err_has "makes or reads a value or row larger than 16777216 bytes"
    expect_faster 5000
    run sql -f csv --max-bytes 100000 shop.db "SELECT length(randomblob(900000000)) AS n"
    expect_rc 1
    expect_err_has "larger than 16777216 bytes"
    expect_faster 5000
    # Its first row alone over the cap: not an empty result (as ask says).
    run sql -f table --max-bytes 100000 shop.db "SELECT zeroblob(200000) AS z"
    expect_rc 1
    expect_no_out
    expect_err_has "askdb: the first row alone is larger than the 100000-byte result cap (--max-bytes); select fewer or shorter columns"
    run sql -f json --max-bytes 100000 shop.db \
        "SELECT id, replace(printf('%.*c', 3000, 'x'), 'x', '0123456789') AS pad FROM customers ORDER BY id"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["truncated"] == "bytes", j["truncated"]
assert j["row_count"] == 3, j["row_count"]
assert [r[0] for r in j["rows"]] == [1, 2, 3] and all(len(r[1]) == 30000 for r in j["rows"])
'
}

broken_view_does_not_block_the_database() {
    # A view over a dropped table: SQLite opens the file and queries the
    # other tables; askdb must too (the view is left out of the schema).
    "$PY" - "$W/broken.db" <<'PY' || fail "cannot build broken.db"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("""
CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO items VALUES (1, 'bolt'), (2, 'nut');
CREATE TABLE old (v);
CREATE VIEW old_view AS SELECT v FROM old;
DROP TABLE old;
""")
c.close()
PY
    run schema broken.db
    expect_rc 0
    expect_out_has "CREATE TABLE items"
    expect_out_lacks "old_view"
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM items")")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv broken.db "How many items?"
    expect_rc 0
    expect_out 'n\n2\n'
}

hot_journal_is_refused_with_what_to_do() {
    # A writer killed in the middle of a transaction leaves a hot rollback
    # journal; reading the database needs it rolled back, which is a
    # write. askdb says so and what to do, exits 3 and changes nothing.
    copy_db h.db
    "$PY" - "$W/h.db" <<'PY' || fail "could not make a hot journal"
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA cache_size=1")
c.execute("BEGIN")
c.execute("UPDATE orders SET total = total + 1")
c.execute("CREATE TABLE big(x)")
c.execute("INSERT INTO big SELECT randomblob(1000) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000) SELECT i FROM c)")
os._exit(0)   # no rollback, no unlock: as if killed
PY
    [ -s "$W/h.db-journal" ] || fail "no journal was left"
    local before
    before=$(snapshot)
    run sql h.db "SELECT count(*) FROM orders"
    expect_rc 3
    expect_err_has "cannot open database 'h.db': it has a hot rollback journal ('h.db-journal')"
    expect_err_has "sqlite3 'h.db' 'PRAGMA quick_check', then ask again"
    start_llm "$(always "$(fence "SELECT 1")")"
    run ask --llm-url "$URL" --model test h.db "How many orders?"
    expect_rc 3
    expect_requests 0
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
}

wal_database_at_rest_gets_no_wal_files() {
    # A WAL-mode database closed cleanly has no -wal file; reading it must
    # not create -wal or -shm files next to it (a read-only handle could
    # not remove them again), whatever the file is called.
    local db
    for db in wal.db 'we?ird #%name.db' file:w.db; do
        "$PY" - "$W/$db" <<'PY' || fail "cannot build $db"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
c.executescript("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);"
                "INSERT INTO t (v) VALUES ('a'), ('b'), ('c');")
c.close()
PY
    done
    [ ! -e "$W/wal.db-wal" ] || fail "the fixture left a -wal file"
    local before
    before=$(snapshot)
    start_llm "$(always "$(fence "SELECT count(*) AS n FROM t")")"
    for db in wal.db 'we?ird #%name.db' file:w.db "$W/wal.db"; do
        run sql -f csv "$db" "SELECT v FROM t ORDER BY id"
        expect_rc 0
        expect_out 'v\na\nb\nc\n'
        run schema "$db"
        expect_rc 0
        expect_out_has "); -- 3 rows"
        run ask --llm-url "$URL" --model test --no-question-check -f csv "$db" "How many?"
        expect_rc 0
        expect_out 'n\n3\n'
    done
    [ "$before" = "$(snapshot)" ] || fail "files changed next to the database: $(diff <(echo "$before") <(snapshot) | head -4)"
}

trace_never_writes_a_database() {
    # --trace naming the database itself (or any SQLite file) is refused
    # before anything is written: the files stay byte for byte the same.
    copy_db
    copy_db other.db
    local before
    before=$(snapshot)
    start_llm "$(always "$(fence "SELECT 1 AS x")")"
    run ask --llm-url "$URL" --model test --trace shop.db shop.db "One?"
    expect_rc 2
    expect_err_has "cannot open trace file 'shop.db': it is an SQLite database (askdb never writes to databases; choose another file)"
    run ask --llm-url "$URL" --model test --trace other.db shop.db "One?"
    expect_rc 2
    printf 'How many?\n' >"$T/in"
    STDIN="$T/in" run shell --llm-url "$URL" --model test --trace other.db shop.db
    expect_rc 2
    expect_requests 0
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
}

dry_run_prints_sql_without_running() {
    copy_db
    start_llm "$(replies "$(fence "$SLOW_SQL")")"
    run ask --llm-url "$URL" --model test --dry-run --timeout 100 -f table shop.db "Count forever"
    expect_rc 0
    expect_out '%s\n' "$SLOW_SQL"
    expect_requests 1
    expect_faster 5000

    start_llm "$(replies "$(fence "$SLOW_SQL")")"
    run ask --llm-url "$URL" --model test --dry-run --timeout 100 -f json shop.db "Count forever"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["status"] == "ok" and j["sql"] == args[0], j
assert "rows" not in j, "dry run has rows"
' "$SLOW_SQL"

    # Several candidates: nothing runs, so there is no vote; one is made
    # and no "confidence: 0% (0 of 3 ...)" is claimed.
    start_llm "$(always "$(fence "$SLOW_SQL")")"
    run ask --llm-url "$URL" --model test --dry-run --candidates 3 --timeout 100 -f json shop.db "Count forever"
    expect_rc 0
    expect_requests 1
    pycheck '
j = json.loads(out)
assert j["status"] == "ok" and j["candidates"] == 1 and j["confidence"] == 1, j
'
    run ask --llm-url "$URL" --model test --dry-run --candidates 3 --timeout 100 -f table shop.db "Count forever"
    expect_rc 0
    expect_out '%s\n' "$SLOW_SQL"

    # A statement the guard refuses is not "checked SQL", even in a dry run.
    start_llm "$(always "$(fence "SELECT 1; DELETE FROM orders")")"
    run ask --llm-url "$URL" --model test --dry-run -f table shop.db "Delete"
    expect_rc 1
    expect_err_has "refused"
}

dry_run_sql_goes_to_stdout_when_piped() {
    # The SQL is the whole output of a dry run, so it belongs on stdout
    # with the default format too (csv when stdout is not a terminal).
    copy_db
    start_llm "$(replies "$(fence "SELECT count(*) FROM orders")")"
    run ask --llm-url "$URL" --model test --dry-run shop.db "How many orders?"
    expect_rc 0
    expect_out '%s\n' "SELECT count(*) FROM orders"
}

schema_command_prints_what_model_sees() {
    copy_db
    run schema shop.db
    expect_rc 0
    cp "$T/out" "$T/schema.txt"
    [ -s "$T/schema.txt" ] || fail "empty schema"
    start_llm "$(replies "$(fence "SELECT 1")")"
    run ask --llm-url "$URL" --model test --no-question-check shop.db "Which tables are there?"
    expect_rc 0
    pycheck '
with open(args[0], encoding="utf-8", newline="") as f:
    schema = f.read()
u = msgs(0)[1]["content"]
start = u.index("Database schema:\n") + len("Database schema:\n")
end = u.index("\nQuestion:")
sent = u[start:end]
assert sent == schema, "schema differs: sent %d bytes, schema cmd %d bytes" % (len(sent), len(schema))
for t in ("categories", "products", "customers", "orders", "order_items", "payments", "customer_revenue"):
    assert t in schema, t + " missing"
assert "CREATE TABLE orders" in schema and "CREATE VIEW customer_revenue" in schema
assert "REFERENCES customers(id)" in schema
' "$T/schema.txt"
}

empty_result_gets_one_retry_then_stands() {
    copy_db
    local e1="SELECT id, status FROM orders WHERE status = 'Shipped'"
    local e2="SELECT id, status FROM orders WHERE status = 'SHIPPED'"
    start_llm "$(replies "$(fence "$e1")" "$(fence "$e2")" "$(fence "SELECT 'third' AS oops, 1")")"
    run ask --llm-url "$URL" --model test -f table shop.db "Orders with status Shipped?"
    expect_rc 0
    expect_requests 2
    expect_out '%s\n' '+----+--------+' '| id | status |' '+----+--------+' '+----+--------+' '(0 rows)'
    pycheck '
assert "no rows" in user(1), user(1)
assert args[0] in user(1)
' "$e1"

    start_llm "$(replies "$(fence "$e1")" "$(fence "$e2")")"
    run ask --llm-url "$URL" --model test -f csv shop.db "Orders with status Shipped?"
    expect_rc 0
    expect_out 'id,status\n'

    start_llm "$(replies "$(fence "$e1")" "$(fence "SELECT count(*) AS n FROM orders WHERE status = 'shipped'")")"
    run ask --llm-url "$URL" --model test -f json shop.db "How many orders are shipped?"
    expect_rc 0
    expect_requests 2
    local n
    n=$(sqlite3 "$W/shop.db" "SELECT count(*) FROM orders WHERE status = 'shipped'")
    pycheck '
j = json.loads(out)
assert j["rows"] == [[int(args[0])]], j["rows"]
assert int(args[0]) > 0
assert [a["error"] for a in j["attempts"]] == ["empty", "none"], j["attempts"]
' "$n"

    # --max-attempts 1: the empty result stands without a retry.
    start_llm "$(replies "$(fence "$e1")" "$(fence "$e2")")"
    run ask --llm-url "$URL" --model test --max-attempts 1 -f csv shop.db "Shipped?"
    expect_rc 0
    expect_requests 1
    expect_out 'id,status\n'
}

trace_file_records_every_step() {
    copy_db
    local key="sk-e2e-SECRET-7f3a9c1d2b"
    start_llm "$(replies "$(fence "SELECT nme FROM categories")" "$(fence "SELECT name FROM categories ORDER BY id LIMIT 2")")"
    run ask --llm-url "$URL" --model test --api-key "$key" --trace trace.jsonl -v shop.db "Two categories?"
    expect_rc 0
    expect_requests 2
    pycheck '
import os
path = args[0]
raw = open(path, encoding="utf-8").read()
assert args[1] not in raw, "API key in the trace"
assert args[1] not in err and args[1] not in out, "API key on stderr/stdout"
lines = trace_lines(path)
steps = [l["step"] for l in lines]
for s in ("question", "schema", "prompt", "reply", "validate", "execute", "answer", "error"):
    assert s in steps, "no %s step in %r" % (s, steps)
assert steps[0] == "question" and steps[-1] == "answer", steps
assert steps.count("prompt") == 2 and steps.count("reply") == 2, steps
assert lines[0]["question"] == "Two categories?"
ans = lines[-1]
assert ans["status"] == "ok" and ans["attempts"] == 2, ans
assert ans["sql"] == "SELECT name FROM categories ORDER BY id LIMIT 2", ans
assert all("t_ms" in l for l in lines)
errs = [l for l in lines if l["step"] == "error"]
assert errs[0]["class"] == "unknown_column" and "nme" in errs[0]["message"], errs
assert reqs[0]["headers"].get("authorization") == "Bearer " + args[1], reqs[0]["headers"]
' "$W/trace.jsonl" "$key"

    # A server that echoes the key in its error: still never shown.
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"status": 401, "body": {"error": {"message": "Incorrect API key provided: " + sys.argv[1]}}}]))' "$key")"
    run ask --llm-url "$URL" --model test --api-key "$key" --trace trace2.jsonl -v shop.db "Two categories?"
    expect_rc 4
    expect_err_has "Incorrect API key provided"
    pycheck '
raw = open(args[0], encoding="utf-8").read()
assert args[1] not in err, "API key on stderr: " + err
assert args[1] not in raw, "API key in the trace"
for l in raw.splitlines():
    json.loads(l)
assert "answer" in [json.loads(l)["step"] for l in raw.splitlines()]
' "$W/trace2.jsonl" "$key"
}

learned_pairs_reach_the_prompt_and_v_says_so() {
    # A learned pair like the question goes into the prompt, and -v says
    # so with the closest question (before, -v said nothing of it: only
    # --trace showed the examples step).
    copy_db
    start_llm "$(always "$(fence "SELECT count(*) AS n FROM orders")")"
    run learn shop.db --memory mem.sqlite --question "How many orders were shipped to Spain?" --sql "SELECT count(*) AS learned_n FROM orders WHERE shipping_country = 'ES'"
    expect_rc 0
    run ask -v --llm-url "$URL" --model test --no-question-check --memory mem.sqlite shop.db "How many orders were shipped to Italy?"
    expect_rc 0
    expect_err_has "askdb: [examples] 1 learned pair in the prompt, the closest: How many orders were shipped to Spain?"
    grep -qF "learned_n" "$LLMLOG" || fail "the pair is not in the prompt"
    # Nothing alike: no examples, no line.
    run ask -v --llm-url "$URL" --model test --no-question-check --memory mem.sqlite shop.db "List the categories"
    expect_rc 0
    ! grep -qF "[examples]" "$T/err" || fail "examples said without any: $(grep -F "[examples]" "$T/err")"
}

memory_that_cannot_be_used_is_said_by_every_command() {
    # A --memory that can never serve (a database, a folder, a store in a
    # folder that does not exist) is a usage error for every command that
    # asks questions, as for askdb learn: said before anything runs, and
    # the database named stays untouched. A store that cannot be read now
    # is a warning, and the question goes on without learned examples.
    copy_db
    copy_db other.db
    local before cmd
    before=$(sha "$W/other.db")
    start_llm "$(always "$(fence "SELECT count(*) AS n FROM orders")")"
    for cmd in ask shell serve mcp eval; do
        local args=(shop.db)
        case $cmd in
        ask) args=(shop.db "How many orders?") ;;
        serve) args=(--db shop=shop.db --listen 127.0.0.1:0) ;;
        eval) args=(--suite nosuite.json) ;;
        esac
        run "$cmd" --llm-url "$URL" --model test --memory other.db "${args[@]}"
        expect_rc 2
        expect_err_has "askdb $cmd: --memory: 'other.db' is another SQLite database, not an askdb memory store"
        run "$cmd" --llm-url "$URL" --model test --memory "$W/nodir/m.sqlite" "${args[@]}"
        expect_rc 2
        expect_err_has "askdb $cmd: --memory: cannot use memory store '$W/nodir/m.sqlite': its folder does not exist"
    done
    run ask --llm-url "$URL" --model test --memory "$W" shop.db "How many orders?"
    expect_rc 2
    expect_err_has "is not a regular file"
    expect_requests 0
    [ "$(sha "$W/other.db")" = "$before" ] || fail "--memory changed a database"
    [ ! -e "$W/nodir" ] || fail "a folder was made"
    # A new store in a folder that exists: nothing learned yet, no word.
    run ask --llm-url "$URL" --model test --no-question-check --memory new.sqlite shop.db "How many orders?"
    expect_rc 0
    [ ! -s "$T/err" ] || fail "a new store was remarked on: $(cat "$T/err")"
    [ ! -e "$W/new.sqlite" ] || fail "asking made a store"
    # A damaged store: said without -v, and the question is answered.
    run learn shop.db --memory "$W/damaged.sqlite" --question "How many orders?" --sql "SELECT count(*) FROM orders"
    expect_rc 0
    "$PY" -c 'import sys; p = sys.argv[1]; b = open(p, "rb").read(); open(p, "wb").write(b[:100] + b"\xab" * (len(b) - 100))' "$W/damaged.sqlite"
    run ask --llm-url "$URL" --model test --no-question-check --memory damaged.sqlite shop.db "How many orders?"
    expect_rc 0
    expect_err_has "askdb ask: warning: --memory: memory store 'damaged.sqlite': database disk image is malformed; the questions go on without learned examples"
    expect_out_has "250"
}

usage_errors_exit_2() {
    copy_db
    start_llm "$(always "$(fence "SELECT 1")")"
    run
    expect_rc 2
    expect_err_has "usage: askdb"
    run frobnicate shop.db
    expect_rc 2
    expect_err_has "unknown command 'frobnicate'"
    run ask --bogus --llm-url "$URL" --model test shop.db "q?"
    expect_rc 2
    run ask -f xml --llm-url "$URL" --model test shop.db "q?"
    expect_rc 2
    expect_err_has "unknown format 'xml'"
    run ask --llm-url "$URL" --model test shop.db
    expect_rc 2
    expect_err_has "askdb ask: wrong number of arguments: give DB QUESTION (see 'askdb help ask')"
    run sql shop.db
    expect_rc 2
    expect_err_has "askdb sql: wrong number of arguments: give DB STATEMENT (see 'askdb help sql')"
    run schema
    expect_rc 2
    expect_err_has "askdb schema: wrong number of arguments: give DB (see 'askdb help schema')"
    # A statement typed without quotes, as a question: say to quote it.
    run sql shop.db SELECT 'count(*)' FROM orders
    expect_rc 2
    expect_err_has "askdb sql: the statement is 4 arguments (SELECT count(*) FROM orders): give it as one, in quotes: askdb sql shop.db \"SELECT count(*) FROM orders\""
    run ask --llm-url "$URL" --model test shop.db "q?" extra
    expect_rc 2
    # The operands the other way round: said, not "cannot open database
    # 'SELECT 1'" alone (exit 3).
    run sql "SELECT 1" shop.db
    expect_rc 2
    expect_err_has "askdb sql: 'SELECT 1' is no file and 'shop.db' is one: the database comes first (askdb sql DB STATEMENT)"
    run ask --llm-url "$URL" --model test "How many orders?" shop.db
    expect_rc 2
    expect_err_has "askdb ask: 'How many orders?' is no file and 'shop.db' is one: the database comes first (askdb ask DB QUESTION)"
    # A question typed without quotes is several arguments: say to quote it.
    run ask --llm-url "$URL" --model test shop.db how many orders
    expect_rc 2
    expect_err_has "askdb ask: the question is 3 arguments (how many orders): give it as one, in quotes: askdb ask shop.db \"how many orders\""
    expect_requests 0
    run ask --max-attempts 0 --llm-url "$URL" --model test shop.db "q?"
    expect_rc 2
    expect_err_has "--max-attempts"
    run sql --timeout abc shop.db "SELECT 1"
    expect_rc 2
    local o
    for o in --temperature --candidate-temperature; do
        run ask "$o" nan --llm-url "$URL" --model test shop.db "q?"
        expect_rc 2
        expect_err_has "$o takes a number from 0 to 2, not 'nan'"
    done
    run ask --candidate-cap 0.5 --llm-url "$URL" --model test shop.db "q?"
    expect_rc 2
    expect_err_has "--candidate-cap takes 0 (no cap) or a factor"
    run sql shop.db
    expect_rc 2
    run schema
    expect_rc 2
    run schema -f csv shop.db
    expect_rc 2
    expect_err_has "-f takes only json here"
    run ask --provider nonsense --model test shop.db "q?"
    expect_rc 2
    expect_err_has "nonsense"
    # A question that asks nothing is a usage error, not an answer.
    run ask --llm-url "$URL" --model test shop.db ""
    expect_rc 2
    expect_err_has "the question is empty"
    run ask --llm-url "$URL" --model test shop.db $' \t\n'
    expect_rc 2
    expect_requests 0

    run --help
    expect_rc 0
    expect_out_has "usage: askdb"
    local c
    for c in ask shell schema sql help version; do expect_out_has "$c"; done

    run version
    expect_rc 0
    grep -qE '^askdb [0-9]+\.[0-9]+\.[0-9]+' "$T/out" || fail "version: $(cat "$T/out")"

    local f
    for c in "help ask" "ask --help"; do
        # shellcheck disable=SC2086
        run $c
        expect_rc 0
        for f in -f --format --show-sql --timeout --max-rows --max-bytes --provider \
                 --llm-url --model --api-key --temperature --max-tokens --llm-timeout \
                 --retries --stream --seed --max-attempts --dry-run --trace -v --verbose; do
            grep -qE -- "(^|[ ,])$f([ ,=]|$)" "$T/out" || fail "'askdb $c' does not mention $f"
        done
    done
}

# A --llm-url that is no URL is a usage error, said before the database is
# opened (a missing one would say exit 3) and before any request.
malformed_llm_url_exits_2_before_any_work() {
    start_llm "$(always "$(fence "SELECT 1")")"
    local u
    for u in 'htp:/x' 'http://' 'http:// /v1' "http://exa mple.com:${URL##*:}/v1"; do
        run ask --llm-url "$u" --model test --no-question-check missing.db "One?"
        expect_rc 2
        expect_err_has "askdb: the model URL '$u' "
        expect_err_has "with --llm-url or ASKDB_LLM_URL)"
        expect_err_lacks "missing.db"
        expect_requests 0
    done
    # From the environment too.
    ASKDB_LLM_URL='http:// /v1' run ask --model test --no-question-check missing.db "One?"
    expect_rc 2
    expect_err_has "is not a valid URL"
}

getopt_messages_name_the_command() {
    # getopt's own messages start as askdb's do, "askdb CMD: ...", for
    # every command (not "ask: unrecognized option ...").
    copy_db
    local c
    for c in ask sql schema shell serve mcp eval learn; do
        run "$c" --bogus shop.db
        expect_rc 2
        [ "$(head -n1 "$T/err")" = "askdb $c: unrecognized option '--bogus'" ] ||
            fail "askdb $c --bogus said: $(head -c 300 "$T/err")"
        ! grep -v "^askdb $c: " "$T/err" | grep -q . ||
            fail "askdb $c --bogus: a line not starting 'askdb $c: ': $(head -c 300 "$T/err")"
    done
    run sql -x shop.db "SELECT 1"
    expect_rc 2
    expect_err_has "askdb sql: invalid option -- 'x'"
    run learn shop.db --timeout
    expect_rc 2
    expect_err_has "askdb learn: option '--timeout' requires an argument"
    run ask --c 3 shop.db "q?"
    expect_rc 2
    expect_err_has "askdb ask: option '--c' is ambiguous"
    expect_err_has "askdb ask: see 'askdb help ask'"
    run eval --suite
    expect_rc 2
    expect_err_has "askdb eval: option '--suite' requires an argument"
}

no_command_prints_usage_on_stderr_and_exits_2() {
    run
    expect_rc 2
    [ ! -s "$T/out" ] || fail "stdout not empty: $(head -c 200 "$T/out")"
    grep -q '^usage: askdb COMMAND' "$T/err" || fail "stderr has no usage: $(head -c 300 "$T/err")"
    expect_err_has "Run 'askdb help COMMAND'"
}

help_lists_every_command() {
    local c w
    for c in help --help; do
        run "$c"
        expect_rc 0
        for w in ask shell schema sql eval learn help version; do
            grep -qE "^  $w( |$)" "$T/out" || fail "'askdb $c' does not list $w: $(cat "$T/out")"
        done
        # Every exit code of the man page's EXIT STATUS.
        for w in "0 answered" "1 no valid SQL" "2 usage error" "3 database cannot" \
                 "4 model unreachable" "130 stopped by Ctrl-C"; do
            tr '\n' ' ' <"$T/out" | grep -qF -- "$w" || fail "'askdb $c' does not give exit code $w"
        done
        # What DB may be: every engine's form.
        for w in shop.db .duckdb .parquet .csv postgresql:// mariadb:// mysql://; do
            grep -qF -- "$w" "$T/out" || fail "'askdb $c' does not say DB may be $w"
        done
    done
    run help learn
    expect_rc 0
    grep -q '^usage: askdb learn DB --question Q --sql S' "$T/out" ||
        fail "'askdb help learn': $(head -c 300 "$T/out")"
    expect_out_has "--forget-all"
    run help frobnicate
    expect_rc 2
    expect_err_has "no command 'frobnicate'"
    # help's own help, as every command gives its own after it.
    for c in "help --help" "help -h" "--help help"; do
        # shellcheck disable=SC2086
        run $c
        expect_rc 0
        grep -q '^usage: askdb help \[COMMAND\]' "$T/out" ||
            fail "'askdb $c': $(head -c 300 "$T/out" "$T/err")"
    done
}

# A --config that cannot be read says why, and a line number only when
# the JSON has one (not jansson's -1 for a missing file or a valid value
# of the wrong kind). A folder named as the file was said as JSON cut
# short: "'[' or '{' expected near end of file (line 1)".
config_file_errors_name_a_line_only_when_there_is_one() {
    copy_db
    printf '[1]\n' >array.json
    printf '{"databases":\n bad}\n' >broken.json
    mkdir folder.json
    local c
    for c in serve mcp; do
        run "$c" --config folder.json --llm-url http://127.0.0.1:9/v1 --model m
        expect_rc 2
        expect_err_has "cannot read config 'folder.json': it is a folder, not a file"
        expect_err_lacks "line 1"
        run "$c" --config missing.json --llm-url http://127.0.0.1:9/v1 --model m
        expect_rc 2
        expect_err_has "missing.json"
        expect_err_has "No such file or directory"
        expect_err_lacks "line -1"
        run "$c" --config array.json --llm-url http://127.0.0.1:9/v1 --model m
        expect_rc 2
        expect_err_lacks "line -1"
        run "$c" --config broken.json --llm-url http://127.0.0.1:9/v1 --model m
        expect_rc 2
        expect_err_has "(line 2)"
    done
}

# A database URL in a --config file is the server's, not a path to take
# from the file's folder: "conf/postgresql://..." was opened as an SQLite
# file ("cannot open database ... No such file"), and a scheme askdb does
# not read was not said as such.
config_file_database_urls_are_not_paths() {
    mkdir conf
    printf '{"databases": {"pg": "postgresql://127.0.0.1:1/x"}}\n' >conf/pg.json
    printf '{"databases": ["frob://host/x"]}\n' >conf/frob.json
    local c
    for c in serve mcp; do
        run "$c" --config conf/pg.json --llm-url http://127.0.0.1:9/v1 --model m
        expect_rc 3
        expect_err_has "'postgresql://127.0.0.1:1/x'"
        expect_err_lacks "conf/postgresql"
        expect_err_lacks "No such file"
        run "$c" --config conf/frob.json --llm-url http://127.0.0.1:9/v1 --model m
        expect_rc 2
        expect_err_has "frob:// is not a database URL askdb reads"
    done
}

# getopt takes --config cut short only where no other option starts so;
# the file was looked for at any prefix of it, so that "--con 8" (serve's
# --config and --conversations) or mcp's "--c 3" (--config, --candidates,
# --checks...) said "cannot read config '8'" instead of getopt's word.
config_flag_cut_short_is_the_file_only_where_getopt_takes_it() {
    copy_db
    printf '{"databases": ["shop.db"], "options": {"max-rows": "many"}}\n' >c.json
    run serve --con 8 shop.db
    expect_rc 2
    expect_err_has "option '--con' is ambiguous"
    expect_err_lacks "config '8'"
    run mcp --c 3 shop.db
    expect_rc 2
    expect_err_has "option '--c' is ambiguous"
    expect_err_lacks "config '3'"
    # Where getopt takes it, the file is read (its max-rows refused).
    local c
    for c in serve mcp; do
        run "$c" --conf c.json
        expect_rc 2
        expect_err_has "--max-rows takes a whole number"
    done
    run mcp --con=c.json
    expect_rc 2
    expect_err_has "--max-rows takes a whole number"
}

# A database's name in a --config file became "--db=NAME=PATH", which is
# cut at its first '=': {"a=b": "shop.db"} served 'b=conf/shop.db' as
# 'a', and {"": ...} was "--db takes NAME=PATH, not '=conf/shop.db'", an
# option no one gave. Both are said as the file's.
config_file_database_names_are_checked() {
    mkdir conf
    copy_db conf/shop.db
    printf '{"databases": {"a=b": "shop.db"}}\n' >conf/eq.json
    printf '{"databases": {"": "shop.db"}}\n' >conf/empty.json
    local c
    for c in serve mcp; do
        run "$c" --config conf/eq.json --llm-url http://127.0.0.1:9/v1 --model m
        expect_rc 2
        expect_err_has "config 'conf/eq.json': database name \"a=b\" has an '=' (a name is the part before the '=' of --db NAME=PATH)"
        run "$c" --config conf/empty.json --llm-url http://127.0.0.1:9/v1 --model m
        expect_rc 2
        expect_err_has "config 'conf/empty.json': database name \"\" is empty"
    done
}

every_help_lists_exactly_the_options_its_command_takes() {
    # For each command: the options it takes are those of its getopt
    # table (glibc lists them all for the ambiguous '--=') that it does
    # not refuse when tried one at a time before --help. Every one of
    # them must be in 'askdb help CMD' (in its list or beside an entry:
    # "(--no-values)"), and every entry of that list must be taken; the
    # same for the short forms ("-v, --verbose"; the letters tried are
    # those of the sources' getopt_long() calls). 'askdb CMD --help'
    # prints the same text. An option refused ("askdb sql: --trace is
    # for ask, shell, eval, serve and mcp") names exactly the commands
    # that take it.
    local before
    before=$(snapshot)
    "$PY" - "$ASKDB" "$RUN_LIMIT_S" "$ROOT/src" >"$T/problems" <<'PY' || fail "the check did not run: $(tail -c 300 "$T/problems")"
import glob, re, subprocess, sys
askdb, limit, src = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# The short options: the letters of every getopt_long() optstring.
shorts = set()
for f in glob.glob(src + "/**/*.c", recursive=True):
    for s in re.findall(r'getopt_long\([^,]*,[^,]*, *"([^"]*)"', open(f).read()):
        shorts |= set(s.replace(":", ""))
cmds = "ask shell schema sql eval learn serve mcp".split()
bad = []

def run(args):
    p = subprocess.run([askdb] + args, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=limit)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    if "Sanitizer" in err or "runtime error:" in err:
        bad.append("askdb %s: sanitizer report: %s" % (" ".join(args), err[:300]))
    return p.returncode, out, err

def refused(cmd, shown, err):
    # getopt's own words, or askdb's refusal of an option of another command
    return ("unrecognized option '%s" % shown.split("=")[0] in err or
            "invalid option -- '%s'" % shown[1:] in err or
            err.startswith("askdb %s: %s is for " % (cmd, shown.split("=")[0])))

no_arg = set()          # long names that take no value
taken_by = {}           # command: the long names it takes
refusals = {}           # command: {long name: the first line it said}

def takes(cmd, name):
    """Whether cmd takes --name (or -x): tried before --help, it is not
    refused, and nothing runs (help printed, or its value refused)."""
    opt = "--" + name if len(name) > 1 else "-" + name
    if len(name) == 1 or name in no_arg:
        rc, out, err = run([cmd, opt, "--help"])
        if "requires an argument" in err:
            rc, out, err = run([cmd, opt, "1", "--help"])
    else:
        rc, out, err = run([cmd, opt + "=1", "--help"])
        if "doesn't allow an argument" in err:
            no_arg.add(name)
            rc, out, err = run([cmd, opt, "--help"])
    if refused(cmd, opt, err):
        refusals.setdefault(cmd, {})[name] = err.split("\n")[0]
        return False
    if rc not in (0, 2) or (rc == 0 and not out.startswith("usage: askdb")):
        bad.append("askdb %s %s --help: exit %d, %s" % (cmd, opt, rc, err[:200]))
    return True

for cmd in cmds:
    rc, text, err = run(["help", cmd])
    rc2, text2, _ = run([cmd, "--help"])
    if rc or rc2 or text != text2 or not text.startswith("usage: askdb " + cmd):
        bad.append("askdb help %s (exit %d) and askdb %s --help (exit %d) differ"
                   % (cmd, rc, cmd, rc2))
    rc, _, err = run([cmd, "--="])
    m = re.search(r"possibilities:((?: '--[a-z-]+')+)", err)
    if not m:
        bad.append("askdb %s --= lists no options: %s" % (cmd, err[:200]))
        continue
    table = re.findall(r"'--([a-z-]+)'", m.group(1))
    taken = taken_by[cmd] = {n for n in table if takes(cmd, n)}
    mentioned = set(re.findall(r"(?<![\w-])--([a-z][a-z-]*)", text))
    listed = set(re.findall(r"(?m)^ +(?:-\w, )?--([a-z][a-z-]*)", text))
    pairs = dict(re.findall(r"(?m)^ +-(\w), --([a-z][a-z-]*)", text))
    for n in sorted(taken - mentioned):
        bad.append("askdb %s takes --%s; its help does not say so" % (cmd, n))
    for n in sorted(listed - taken):
        bad.append("askdb help %s lists --%s; the command refuses it" % (cmd, n))
    for x in sorted(shorts | set(pairs)):
        t = takes(cmd, x)
        if t and x not in pairs:
            bad.append("askdb %s takes -%s; its help does not list it" % (cmd, x))
        elif not t and x in pairs:
            bad.append("askdb help %s lists -%s; the command refuses it" % (cmd, x))
        elif t and pairs[x] not in taken:
            bad.append("askdb help %s: -%s, --%s: --%s is refused" % (cmd, x, pairs[x], pairs[x]))
# "askdb sql: --trace is for ask, shell, eval, serve and mcp (see ...)":
# exactly the commands that take it.
for cmd, refused_here in refusals.items():
    for n, line in sorted(refused_here.items()):
        if len(n) == 1:
            continue
        m = re.fullmatch(r"askdb %s: --%s is for (.*) \(see 'askdb help %s'\)"
                         % (cmd, n, cmd), line)
        said = set(re.split(r", | and ", m.group(1))) if m else None
        truth = {c for c in cmds if n in taken_by.get(c, ())}
        if n == "seed":     # eval's --seed seeds its sample, not the model
            truth.discard("eval")
        if said != truth:
            bad.append("%s: the commands that take --%s are %s"
                       % (line, n, ", ".join(c for c in cmds if c in truth)))
if bad:
    print("\n".join(bad))
PY
    [ ! -s "$T/problems" ] || fail "$(wc -l <"$T/problems") problems: $(head -c 500 "$T/problems")"
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
}

streaming_gives_the_same_rows() {
    copy_db
    local r
    r=$(fence "SELECT first_name, last_name, city FROM customers WHERE last_name IN ('Müller', 'López', 'Wójcik') ORDER BY id")
    start_llm "$(replies "$r")"
    run ask --llm-url "$URL" --model test -f csv shop.db "Customers named Müller, López, Wójcik?"
    expect_rc 0
    cp "$T/out" "$T/plain.out"
    grep -q 'Müller' "$T/plain.out" || fail "no rows: $(cat "$T/plain.out")"
    pycheck 'assert reqs[0]["body"].get("stream") in (False, None), reqs[0]["body"].get("stream")'

    start_llm "$(replies "$r")"
    run ask --llm-url "$URL" --model test --stream -v -f csv shop.db "Customers named Müller, López, Wójcik?"
    expect_rc 0
    expect_out_file "$T/plain.out"
    expect_err_has "'Müller', 'López', 'Wójcik'"
    pycheck 'assert reqs[0]["body"]["stream"] is True, reqs[0]["body"]'

    # The streamed text ends its line before the next log line, and counts
    # the server did not give are said to be unknown, not -1+-1.
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "usage": None}]))' "$r")"
    run ask --llm-url "$URL" --model test --stream -v -f csv shop.db "Customers named Müller, López, Wójcik?"
    expect_rc 0
    expect_out_file "$T/plain.out"
    pycheck '
import re
assert re.search(r"\n```\naskdb: \[generate\] reply in \d+ ms \(tokens unknown\)\n", err), err
assert "-1" not in err, err
'

    # Streaming through a repair too.
    start_llm "$(replies "$(fence "SELECT first_name, last_nam, city FROM customers")" "$r")"
    run ask --llm-url "$URL" --model test --stream -f csv shop.db "Customers named Müller, López, Wójcik?"
    expect_rc 0
    expect_requests 2
    expect_out_file "$T/plain.out"
}

garbled_stream_is_retried_or_fails_never_run() {
    # A streamed event that is not JSON (cut, invalid UTF-8) was skipped:
    # the SQL lost its WHERE and counted every customer. Before any text
    # it is retried; after some that -v showed, the reply fails (exit 4),
    # nothing runs; after some that no one saw, it is retried.
    copy_db
    local r
    r=$(fence "SELECT count(*) AS n FROM customers WHERE last_name = 'López'")
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "bad_event_at": 0}, {"content": sys.argv[1]}]))' "$r")"
    run ask --llm-url "$URL" --model test --stream --no-question-check -f csv shop.db "How many customers are named López?"
    expect_rc 0
    expect_requests 2
    expect_out 'n\n1\n'

    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "bad_event_at": 12, "repeat": True}]))' "$r")"
    run ask --llm-url "$URL" --model test --stream -v --no-question-check -f csv shop.db "How many customers are named López?"
    expect_rc 4
    expect_requests 1
    expect_err_has "sent a streamed event that is not valid JSON"
    [ ! -s "$T/out" ] || fail "stdout not empty: $(head -c 200 "$T/out")"

    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "bad_event_at": 12}, {"content": sys.argv[1]}]))' "$r")"
    run ask --llm-url "$URL" --model test --stream --no-question-check -f csv shop.db "How many customers are named López?"
    expect_rc 0
    expect_requests 2
    expect_out 'n\n1\n'
}

json_reply_cut_short_is_retried_and_events_are_read() {
    # A JSON body cut short with nothing to tell HTTP (the connection's end
    # ends it) is a dropped connection: retried, not "is --llm-url the
    # base URL?". A server that streams unasked is read as a stream.
    copy_db
    local r s
    r=$(fence "SELECT count(*) AS n FROM customers")
    s=$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "cut": 60, "framing": "close"}, {"content": sys.argv[1]}]))' "$r")
    start_llm "$s"
    run ask --llm-url "$URL" --model test --no-question-check -f csv shop.db "How many customers?"
    expect_rc 0
    expect_requests 2
    expect_out 'n\n60\n'

    s=$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "cut": 60, "framing": "close", "repeat": True}]))' "$r")
    start_llm "$s"
    run ask --llm-url "$URL" --model test --retries 1 --no-question-check shop.db "How many customers?"
    expect_rc 4
    expect_requests 2
    expect_err_has "cut its reply short after 1 retry"
    expect_err_lacks "--llm-url"

    s=$("$PY" -c '
import json,sys
ev = lambda d: "data: " + json.dumps(d) + "\n\n"
body = ev({"choices": [{"delta": {"content": sys.argv[1]}}]}) + ev({"choices": [{"delta": {}, "finish_reason": "stop"}]}) + "data: [DONE]\n\n"
print(json.dumps([{"status": 200, "body": body}]))' "$r")
    start_llm "$s"
    run ask --llm-url "$URL" --model test --no-question-check -f csv shop.db "How many customers?"
    expect_rc 0
    expect_out 'n\n60\n'
}

base_url_query_stays_after_the_path() {
    # Azure's base URLs carry ?api-version=...: the path goes before it.
    copy_db
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM customers")")"
    run ask --llm-url "$URL/v1?api-version=2024-06-01" --model test --no-question-check -f csv shop.db "How many customers?"
    expect_rc 0
    expect_out 'n\n60\n'
    pycheck 'assert (reqs[0]["path"], reqs[0].get("query")) == ("/v1/chat/completions", {"api-version": "2024-06-01"}), reqs[0]'
}

anthropic_gets_no_blank_turn_when_an_empty_reply_is_repaired() {
    # Anthropic refuses a message of white space alone (400: "all messages
    # must have non-empty content"): an empty reply sent back with the
    # repair would end the question there. It is left out of the turns.
    copy_db
    start_llm "$(replies "  " "$(fence "SELECT 1 AS one")")"
    run ask --provider anthropic --llm-url "$URL/v1" --api-key k --model m --no-question-check -f csv shop.db "One?"
    expect_rc 0
    expect_out 'one\n1\n'
    expect_requests 2
    pycheck '
m = reqs[1]["body"]["messages"]
assert all(x["content"].strip() for x in m), m
assert [x["role"] for x in m] == ["user"], m
assert "Question: One?" in m[0]["content"] and "Your reply could not be used." in m[0]["content"], m
'
}

anthropic_provider_uses_messages_api() {
    copy_db
    local r1 r2
    r1=$(fence "SELECT count(*) AS orders_to_germany FROM order WHERE shipping_country = 'DE'")
    r2=$(fence "SELECT count(*) AS orders_to_germany FROM orders WHERE shipping_country = 'DE'")
    start_llm "$(replies "$r1" "$r2")"
    run ask --provider anthropic --llm-url "$URL/v1" --api-key k --model m -f csv shop.db "How many orders were shipped to Germany?"
    expect_rc 0
    expect_out 'orders_to_germany\n32\n'
    expect_requests 2
    pycheck '
for r in reqs:
    assert r["path"] == "/v1/messages", r["path"]
    h = r["headers"]
    assert h.get("x-api-key") == "k", h
    assert "anthropic-version" in h, h
    assert "authorization" not in h, h
    b = r["body"]
    assert b["model"] == "m", b["model"]
    assert "max_tokens" in b, b.keys()
    sysmsg = b["system"] if isinstance(b["system"], str) else "".join(x["text"] for x in b["system"])
    assert "SQLite" in sysmsg, sysmsg
    assert all(m["role"] in ("user", "assistant") for m in b["messages"]), b["messages"]
roles = [m["role"] for m in reqs[1]["body"]["messages"]]
assert roles == ["user", "assistant", "user"], roles
def text(m):
    c = m["content"]
    return c if isinstance(c, str) else "".join(x.get("text", "") for x in c)
assert "Question: How many orders were shipped to Germany?" in text(reqs[0]["body"]["messages"][0])
assert "syntax error" in text(reqs[1]["body"]["messages"][-1]), text(reqs[1]["body"]["messages"][-1])
'
    start_llm "$(replies "$r2")"
    run ask --provider anthropic --llm-url "$URL/v1" --api-key k --model m --stream -f csv shop.db "How many orders were shipped to Germany?"
    expect_rc 0
    expect_out 'orders_to_germany\n32\n'
    pycheck 'assert reqs[0]["body"].get("stream") is True and reqs[0]["path"] == "/v1/messages", reqs[0]'

    # A URL with no path, as Anthropic's SDKs take it, gets /v1.
    start_llm "$(replies "$r2")"
    run ask --provider anthropic --llm-url "$URL" --api-key k --model m -f csv shop.db "How many orders were shipped to Germany?"
    expect_rc 0
    pycheck 'assert reqs[0]["path"] == "/v1/messages", reqs[0]["path"]'
    start_llm '[{"status": 404}]'
    run ask --provider anthropic --llm-url "$URL/" --api-key k --model m shop.db "How many orders?"
    expect_rc 4
    expect_err_has "$URL/v1/messages answered 404"
    expect_err_has "Anthropic's is https://api.anthropic.com/v1/messages"
    expect_err_lacks "OpenAI"

    start_llm '[{"status": 401, "body": {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}}]'
    run ask --provider anthropic --llm-url "$URL/v1" --api-key k --model m shop.db "How many orders?"
    expect_rc 4
    expect_requests 1
    expect_err_has "401"
    expect_err_has "invalid x-api-key"

    # An overloaded_error in the stream before any text: retried as a 529.
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"error_event": {"type": "overloaded_error", "message": "Overloaded"}}, {"content": sys.argv[1]}]))' "$r2")"
    run ask --provider anthropic --llm-url "$URL/v1" --api-key k --model m --stream -f csv shop.db "How many orders were shipped to Germany?"
    expect_rc 0
    expect_requests 2
    expect_out 'orders_to_germany\n32\n'
    start_llm '[{"error_event": {"type": "overloaded_error", "message": "Overloaded"}, "repeat": true}]'
    run ask --provider anthropic --llm-url "$URL/v1" --api-key k --model m --stream --retries 2 shop.db "How many orders?"
    expect_rc 4
    expect_requests 3
    expect_err_has "reported an error after 2 retries: overloaded_error: Overloaded"
}

shell_answers_questions_and_dot_commands() {
    copy_db
    run schema shop.db
    expect_rc 0
    cp "$T/out" "$T/schema.txt"
    start_llm "$(replies "$(fence "SELECT c.id, c.first_name, c.last_name, ROUND(SUM(o.total), 2) AS spent_2024
FROM customers c
JOIN orders o ON o.customer_id = c.id
WHERE o.status <> 'cancelled'
  AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01'
GROUP BY c.id
ORDER BY spent_2024 DESC
LIMIT 5;")")"
    printf 'Which 5 customers spent the most in 2024?\n\n.sql SELECT 1 AS x\n.frob\n.schema\n.quit\n.sql SELECT 2 AS after_quit\n' >"$T/in"
    STDIN="$T/in" run shell --llm-url "$URL" --model test shop.db
    expect_rc 0
    expect_requests 1
    {
        printf 'id,first_name,last_name,spent_2024\n2,Alejandro,López,2983.28\n27,Isla,Thompson,2743.5\n35,Lukas,Müller,2341.7\n29,Ethan,Miller,2285.8\n46,Amelia,Clarke,1446.52\n'
        printf 'x\n1\n'
        cat "$T/schema.txt"
    } >"$T/shell.expected"
    expect_out_file "$T/shell.expected"
    expect_err_has "unknown command '.frob'"
    pycheck 'assert user(0).endswith("Question: Which 5 customers spent the most in 2024?\n"), user(0)[-100:]'
    [ ! -e "$XDG_STATE_HOME/askdb/history" ] || fail "history written when stdin is not a terminal"

    # The last line decides the exit code when not interactive.
    printf '.sql SELECT nope\n' >"$T/in2"
    STDIN="$T/in2" run shell --llm-url "$URL" --model test shop.db
    expect_rc 1
    expect_err_has "no such column: nope"

    # .sql goes through the guard as well.
    local sum0
    sum0=$(sha "$W/shop.db")
    printf '.sql DELETE FROM orders\n' >"$T/in3"
    STDIN="$T/in3" run shell --llm-url "$URL" --model test shop.db
    expect_rc 1
    expect_err_has "refused"
    [ "$(sha "$W/shop.db")" = "$sum0" ] || fail "shell .sql changed the database"

    # .exit leaves as .quit does; .help and 'askdb help shell' say so
    # (neither did), and the -f help names md, which -f takes.
    printf '.help\n.exit\n.sql SELECT 2 AS after_exit\n' >"$T/in4"
    STDIN="$T/in4" run shell --llm-url "$URL" --model test shop.db
    expect_rc 0
    expect_out_has '  .quit, .exit     leave (also Ctrl-D)'
    expect_out_lacks 'after_exit'
    run help shell
    expect_rc 0
    expect_out_has '  .quit, .exit     leave (also Ctrl-D)'
    expect_out_has 'table, csv, json or markdown (also md;'
}

shell_sql_statements_go_over_lines() {
    # A statement pasted or written over several lines ran its first line
    # alone ("incomplete input") and sent each line after it to the model
    # as a question. A .sql alone on its line, or whose line leaves a
    # quote, comment or parenthesis open or ends with a comma, goes on up
    # to a line that ends with ';' (outside quotes and comments); a
    # one-line .sql is run as it is, ';' or not.
    copy_db
    start_llm "$(always "$(fence "SELECT 1")")"
    printf '%s\n' '.sql SELECT id,' '  first_name' '  FROM customers ORDER BY id LIMIT 2;' \
        '.sql' 'SELECT count(*) AS n -- a comment; not the end' 'FROM customers' '' 'WHERE id < 10;' \
        ".sql SELECT (1 +" " 2) AS x, 'a;" "b' AS s; -- done" \
        '.sql /* a comment' 'over lines; */ SELECT 4 AS four' ';' \
        '.sql SELECT 5 AS five' '.sql' 'SELECT 6 AS six' >"$T/in"
    STDIN="$T/in" run shell --llm-url "$URL" --model test shop.db
    expect_rc 0
    expect_requests 0
    expect_out 'id,first_name\n1,Olivia\n2,Alejandro\nn\n9\nx,s\n3,"a;\nb"\nfour\n4\nfive\n5\nsix\n6\n'
    [ ! -s "$T/err" ] || fail "stderr: $(cat "$T/err")"

    # In SQLite $a is a parameter, and $a$ starts no dollar-quoted string
    # (PostgreSQL's and DuckDB's alone): the line is the statement.
    printf '%s\n' '.sql SELECT $a$ AS v;' '.sql SELECT 7 AS seven' >"$T/in"
    STDIN="$T/in" run shell --llm-url "$URL" --model test shop.db
    expect_rc 0
    expect_requests 0
    expect_out 'seven\n7\n'
    expect_err_has 'placeholder'

    # On a terminal: the lines after it are typed at "   ...> ", and
    # Ctrl-C there drops the statement.
    local steps
    steps=$("$PY" -c 'import json; print(json.dumps([
        ["wait", "askdb> "], ["type", ".sql SELECT 40 + 1 AS x,\r"], ["wait", r"   \.\.\.> "],
        ["type", "2 AS y;\r"], ["wait", r"\| +41 \| +2 \|"], ["wait", "askdb> "],
        ["type", ".sql\r"], ["wait", r"   \.\.\.> "], ["type", "SELECT 99 AS dropped\r"],
        ["wait", r"   \.\.\.> "], ["type", "\x03"], ["wait", "askdb> "],
        ["type", ".sql SELECT 42 AS y\r"], ["wait", r"\| +42 \|"], ["wait", "askdb> "],
        ["type", "\x04"]]))')
    run_pty "$steps" shell --llm-url "$URL" --model test shop.db
    expect_rc 0
    expect_requests 0
    ! grep -qa '| *99 |' "$T/out" || fail "the statement dropped with Ctrl-C ran"
    # Ctrl-D ends the line of the last prompt: the next prompt (the
    # shell's) does not follow "askdb> " (the terminal shows "^D").
    pycheck 'assert out.rsplit("askdb> ", 1)[1] in ("\r\n", "^D\r\n"), repr(out[-40:])'

}

shell_sql_line_ending_with_an_operator_goes_on() {
    # A .sql line that ends with an operator (=, +, ||...) or with a word
    # that cannot end a statement (AND, WHERE, ORDER BY...) ran alone, cut
    # short (a syntax error), and the lines after it went to the model as
    # questions. It goes on as a line ending with a comma does; a quoted
    # name that is a keyword ends the line's statement.
    copy_db
    start_llm "$(always "$(fence "SELECT 1")")"
    printf '%s\n' '.sql SELECT count(*) AS n FROM customers WHERE id >' '  5 AND' '  id <= 7;' \
        '.sql SELECT 1 +' '2 AS three;' ".sql SELECT 'a' ||" "'b' AS ab;" \
        '.sql SELECT first_name FROM customers ORDER BY' 'id LIMIT 1;' \
        '.sql SELECT' '8 AS eight;' '.sql SELECT 9 AS "where"' '.sql SELECT 10 AS ten' >"$T/in"
    STDIN="$T/in" run shell --llm-url "$URL" --model test shop.db
    expect_rc 0
    expect_requests 0
    expect_out 'n\n2\nthree\n3\nab\nab\nfirst_name\nOlivia\neight\n8\nwhere\n9\nten\n10\n'
    [ ! -s "$T/err" ] || fail "stderr: $(cat "$T/err")"
}

questions_are_utf8_of_at_most_8192_characters() {
    # A question is text a person typed: one with a byte that starts no
    # UTF-8 character (a Latin-1 terminal) went to the model with U+FFFD
    # in its place, and one of 380 KB went whole (once per candidate). The
    # library refuses both (ASKDB_MAX_QUESTION: 8192 characters, as askdb
    # serve takes), for ask and the shell alike; nothing reaches the model.
    copy_db
    start_llm "$(always "$(fence "SELECT 1 AS one")")"
    run ask --llm-url "$URL" --model test shop.db "$(printf 'How many live in M\351xico?')"
    expect_rc 2
    expect_err_has "askdb: the question is not valid UTF-8: byte 19 (0xE9) starts no character; askdb reads questions as UTF-8 (is the terminal set to another encoding?)"
    run ask --llm-url "$URL" --model test shop.db "$(head -c 8193 /dev/zero | tr '\0' a)"
    expect_rc 2
    expect_err_has "askdb: the question is 8193 characters long, over the limit of 8192 (ASKDB_MAX_QUESTION): ask it in fewer words"
    expect_requests 0
    # 8192 characters of 2 bytes each are a question.
    run ask --llm-url "$URL" --model test --no-question-check --candidates 1 shop.db "$("$PY" -c 'print("é" * 8192)')"
    expect_rc 0
    expect_requests 1

    start_llm "$(always "$(fence "SELECT 1 AS one")")"
    { printf 'caf\303\n'; head -c 380000 /dev/zero | tr '\0' b; printf '\n.sql SELECT 2 AS two\n'; } >"$T/in"
    STDIN="$T/in" run shell --llm-url "$URL" --model test shop.db
    expect_rc 0
    expect_requests 0
    expect_out 'two\n2\n'
    expect_err_has "askdb: the question is not valid UTF-8: byte 4 (0xC3) starts no character"
    expect_err_has "askdb: the question is 380000 characters long, over the limit of 8192 (ASKDB_MAX_QUESTION)"
}

shell_script_exits_with_its_last_lines_code() {
    # A script's exit code is its last line's, as sqlite3's is: an error
    # of the shell itself (.sql without a statement, an unknown command)
    # is a usage error (2), a failed statement 1, and a line that works
    # (.help, .new, .schema, a statement) 0, whatever came before.
    copy_db
    start_llm "$(always "$(fence "SELECT 1")")"
    local script want
    while IFS='|' read -r want script; do
        # shellcheck disable=SC2059
        printf "$script" >"$T/in"
        STDIN="$T/in" run shell --llm-url "$URL" --model test shop.db
        [ "$RC" = "$want" ] || fail "'$script' exited $RC, want $want (stderr: $(head -c 200 "$T/err"))"
    done <<'EOF'
2|.sql\n
2|.sql   \n
2|.bogus\n
2|.sql SELECT 1\n.bogus\n
0|.bogus\n.sql SELECT 1\n
1|.sql SELECT nope\n
0|.sql SELECT nope\n.help\n
0|.sql SELECT nope\n.new\n
0|.bogus\n.schema\n
2|.bogus\n.quit\n
EOF
    expect_requests 0
}

shell_sql_may_be_followed_by_a_tab() {
    # ".sql<TAB>SELECT ..." (pasted from a script or an editor that
    # indents with tabs) was "unknown command '.sql	SELECT ...'", exit 2.
    copy_db
    printf '.sql\tSELECT 7 AS seven\n.sql\t\n\tSELECT 8 AS eight;\n' >"$T/in"
    STDIN="$T/in" run shell --model none.gguf shop.db
    expect_rc 0
    expect_out 'seven\n7\neight\n8\n'
    expect_err_lacks "unknown command"
}

shell_runs_sql_without_a_model() {
    # The shell made its agent, which loads the model, before its first
    # line: with a model that could not be loaded (a missing or bad local
    # model file) it never started, so .sql and .schema, which need no
    # model, could not run either. It says once why there is no model and
    # goes on; each question says that it needs one and how to give one
    # (exit 4, a model failing), and the database is still opened first.
    copy_db
    run schema shop.db
    expect_rc 0
    cp "$T/out" "$T/schema.txt"
    { cat "$T/schema.txt"; printf 'x\n1\ny\n2\n'; } >"$T/want"
    printf '.schema\n.sql SELECT 1 AS x\nHow many customers are there?\n.sql SELECT 2 AS y\n' >"$T/in"
    printf 'not a model\n' >junk.gguf
    local m n
    for m in none.gguf junk.gguf; do
        STDIN="$T/in" run shell --model "$m" shop.db
        expect_rc 0
        expect_out_file "$T/want"
        n=$(grep -c "model file '$m'" "$T/err")
        [ "$n" = 1 ] || fail "--model $m: why there is no model was said $n times (stderr: $(head -c 400 "$T/err"))"
        expect_err_has "askdb: no model, so no questions: .sql and .schema work"
        expect_err_has "askdb: a question needs a model: start the shell with --model FILE.gguf, or --llm-url URL --model NAME"
    done
    # The last line decides the code: a question without a model is 4.
    printf '.sql SELECT 1 AS x\nHow many customers are there?\n' >"$T/in2"
    STDIN="$T/in2" run shell --model none.gguf shop.db
    expect_rc 4
    # A database that cannot be opened is said as before, and nothing else.
    STDIN="$T/in" run shell --model none.gguf missing.db
    expect_rc 3
    expect_err_has "cannot open database 'missing.db'"
    expect_err_lacks "no model"
    expect_no_out

    # A model server that does not answer: SQL works, a question says so.
    STDIN="$T/in2" run shell --llm-url http://127.0.0.1:9/v1 --model test shop.db
    expect_rc 4
    expect_out 'x\n1\n'
    expect_err_has "cannot reach model at http://127.0.0.1:9/v1/chat/completions"

    # At a terminal: the prompt comes, .sql runs, a question is refused,
    # Ctrl-D ends it with 0.
    local steps
    steps=$("$PY" -c 'import json; print(json.dumps([
        ["wait", "askdb> "], ["type", ".sql SELECT 41 AS x\r"], ["wait", r"\| +41 \|"],
        ["wait", "askdb> "], ["type", "How many customers are there?\r"],
        ["wait", "a question needs a model"], ["wait", "askdb> "], ["type", "\x04"]]))')
    run_pty "$steps" shell --model none.gguf shop.db
    expect_rc 0
    grep -qa "cannot open model file 'none.gguf'" "$T/out" || fail "the terminal did not say why there is no model"
}

shell_without_a_model_answers_a_question_in_json() {
    # Without a model, a question in `askdb shell -f json` was refused on
    # stderr alone: a program reading the JSON stream got nothing for that
    # line. It now gets what `askdb ask -f json` prints for a question whose
    # model failed (the same keys but request_id, as no request was made),
    # and stderr still says why.
    copy_db
    printf '.sql SELECT 1 AS x\nHow many customers are there?\n' >"$T/in"
    run ask -f json --llm-url http://127.0.0.1:9/v1 --model test --retries 0 shop.db "How many customers are there?"
    expect_rc 4
    cp "$T/out" "$T/ask.json"
    printf 'not a model\n' >junk.gguf
    local m
    for m in none.gguf junk.gguf; do
        STDIN="$T/in" run shell -f json --model "$m" shop.db
        expect_rc 4
        expect_err_has "askdb: a question needs a model: start the shell with --model FILE.gguf"
        pycheck 'docs, s = [], out.lstrip()
while s:
    j, n = json.JSONDecoder().raw_decode(s)
    docs.append(j)
    s = s[n:].lstrip()
assert len(docs) == 2, docs
assert docs[0]["sql"] == "SELECT 1 AS x" and docs[0]["rows"] == [[1]], docs[0]
a, q = json.loads(open(tdir + "/ask.json").read()), docs[1]
assert list(q) == [k for k in a if k != "request_id"], (list(q), list(a))
assert q["question"] == "How many customers are there?", q
assert q["status"] == "model error", q["status"]
assert q["error"].startswith("a question needs a model: start the shell with --model FILE.gguf"), q["error"]
assert q["sql"] is None and q["attempts"] == [] and q["answer"] is None, q
assert q["llm_calls"] == 0 and q["candidates"] == 0 and q["not_a_question"] is False, q
assert set(q["timings"]) == set(a["timings"]) and set(q["tokens"]) == set(a["tokens"]), q'
    done
}

shell_schema_in_json_is_the_schema_commands_document() {
    # `askdb shell -f json` wrote .schema as CREATE TABLE text among its
    # JSON documents, which a program reading them could not parse: it is
    # the document `askdb schema -f json` prints.
    copy_db
    run schema -f json shop.db
    expect_rc 0
    cp "$T/out" "$T/schema.json"
    printf '.schema\n.sql SELECT 1 AS x\n' >"$T/in"
    STDIN="$T/in" run shell -f json --model none.gguf shop.db
    expect_rc 0
    pycheck 'docs, s = [], out.lstrip()
while s:
    j, n = json.JSONDecoder().raw_decode(s)
    docs.append(j)
    s = s[n:].lstrip()
assert len(docs) == 2, docs
assert docs[0] == json.loads(open(tdir + "/schema.json").read()), docs[0]
assert docs[1]["rows"] == [[1]], docs[1]'
}

extracts_sql_from_prose_and_bare_replies() {
    copy_db
    local want='n\n32\n' r
    for r in \
        "Sure! Here is the query you asked for:

\`\`\`sql
SELECT count(*) AS n FROM orders WHERE shipping_country = 'DE';
\`\`\`

This counts every order shipped to Germany, whatever its status." \
        "SELECT count(*) AS n FROM orders WHERE shipping_country = 'DE'" \
        "SELECT count(*) AS n FROM orders WHERE shipping_country = 'DE'; -- counts German orders" \
        "SELECT count(*) AS n
FROM orders
WHERE shipping_country = 'DE'

This query counts the orders shipped to Germany." \
        "Note: I will use the orders table.
\`\`\`
SELECT count(*) AS n FROM orders WHERE shipping_country = 'DE'
\`\`\`"; do
        start_llm "$(replies "$r" "$(fence "SELECT 'repair was needed' AS oops")")"
        run ask --llm-url "$URL" --model test -f csv shop.db "How many orders were shipped to Germany?"
        expect_rc 0
        expect_requests 1
        expect_out "$want"
    done
}

reply_without_sql_is_repaired_as_no_sql() {
    # askdb.h: ASKDB_EC_NO_SQL = "reply held no SQL statement". Prose that
    # merely contains the word "with" or "select" is not a statement.
    copy_db
    local r
    for r in "I am sorry, I cannot help with that." \
             "Please select a table first."; do
        start_llm "$(replies "$r" "$(fence "SELECT count(*) AS n FROM orders WHERE shipping_country = 'DE'")")"
        run ask --llm-url "$URL" --model test -f json shop.db "How many orders were shipped to Germany?"
        expect_rc 0
        expect_requests 2
        pycheck '
j = json.loads(out)
assert j["rows"] == [[32]], j
a = j["attempts"][0]
ok = (a["error"], a["sql"]) == ("no_sql", None) and "Your reply could not be used." in user(1)
# The message shows how the reply began: what the model said instead.
ok = ok and a["message"] == "the reply contains no SELECT or WITH statement; the reply began: \"%s\"" % args[0]
open(args[1], "a").write("" if ok else "reply %r taken as SQL %r (class %s, message %r); " % (args[0], a["sql"], a["error"], a["message"]))
' "$r" "$T/wrong"
    done
    [ ! -s "$T/wrong" ] || fail "$(cat "$T/wrong")"
    # An empty or blank reply says so; a long one is cut at 80 bytes.
    start_llm "$(replies "  " "$("$PY" -c 'print("No: " + "é" * 60)')" "$(fence "SELECT 1 AS one")")"
    run ask --llm-url "$URL" --model test --no-question-check -f json shop.db "One?"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["attempts"][0]["message"] == "empty reply", j["attempts"][0]
assert j["attempts"][1]["message"].endswith("the reply began: \"No: " + "é" * 38 + "...\""), j["attempts"][1]
'
}

reply_cut_at_max_tokens_is_repaired_not_run() {
    # A reply the provider stopped at --max-tokens (OpenAI finish_reason
    # "length", Anthropic stop_reason "max_tokens") may end in a statement
    # cut short that still runs: here the LIMIT 5 is missing and 55 rows
    # would come back. It is left out and repaired like a reply with no SQL.
    copy_db
    local q cut whole s
    q="SELECT c.first_name, c.last_name, sum(oi.quantity * oi.unit_price) AS spent FROM customers c JOIN orders o ON o.customer_id = c.id JOIN order_items oi ON oi.order_id = o.id GROUP BY c.id ORDER BY spent DESC"
    cut=$(printf '```sql\n%s' "$q")
    whole=$(fence "$q LIMIT 5;")
    s=$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "finish_reason": "length", "stop_reason": "max_tokens"}, {"content": sys.argv[2]}]))' "$cut" "$whole")
    start_llm "$s"
    run ask --llm-url "$URL" --model test --max-tokens 64 --no-question-check -f csv shop.db "Top 5 customers by spending"
    expect_rc 0
    expect_requests 2
    [ "$(wc -l <"$T/out")" = 6 ] || fail "expected 5 rows: $(head -c 300 "$T/out")"
    expect_out_has "Alejandro,López,9901.559999999998"
    pycheck 'assert "Error: cut: the reply hit --max-tokens (64) before it ended" in user(1), user(1)'

    start_llm "$s"
    run ask --provider anthropic --llm-url "$URL/v1" --api-key k --model m --stream --max-tokens 64 --no-question-check -f csv shop.db "Top 5 customers by spending"
    expect_rc 0
    expect_requests 2
    [ "$(wc -l <"$T/out")" = 6 ] || fail "expected 5 rows (anthropic, streamed): $(head -c 300 "$T/out")"

    # Every reply cut: nothing usable remains, and the message says why.
    s=$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "finish_reason": "length", "repeat": True}]))' "$cut")
    start_llm "$s"
    run ask --llm-url "$URL" --model test --stream --max-tokens 64 --no-question-check shop.db "Top 5 customers by spending"
    expect_rc 1
    expect_requests 3
    expect_err_has "attempt 1: no_sql: cut: the reply hit --max-tokens (64) before it ended"
    expect_err_has "attempt 3: no_sql: cut: the reply hit --max-tokens (64)"
    expect_err_has "(a reply hit --max-tokens before it ended: raise --max-tokens)"
    [ ! -s "$T/out" ] || fail "stdout not empty: $(head -c 200 "$T/out")"
}

reply_cut_before_any_text_says_to_raise_max_tokens() {
    # A reasoning model can spend all of --max-tokens thinking: vLLM then
    # sends content null (its thoughts in reasoning_content) with
    # finish_reason "length", and a stream no text at all. That is a cut
    # reply, whose way out is a larger --max-tokens, not a model error.
    copy_db
    local s
    s=$("$PY" -c 'import json; print(json.dumps([{"status": 200, "repeat": True, "body": {"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "reasoning_content": "Let me think about the tables"}, "finish_reason": "length"}]}}]))')
    start_llm "$s"
    run ask --llm-url "$URL" --model test --max-tokens 64 --no-question-check shop.db "Top 5 customers by spending"
    expect_rc 1
    expect_requests 3
    expect_err_has "attempt 1: no_sql: cut: the reply hit --max-tokens (64) before it ended"
    expect_err_has "(a reply hit --max-tokens before it ended: raise --max-tokens)"
    expect_err_lacks "no content"

    start_llm '[{"content": "", "finish_reason": "length", "repeat": true}]'
    run ask --llm-url "$URL" --model test --stream --max-tokens 64 --no-question-check shop.db "Top 5 customers by spending"
    expect_rc 1
    expect_requests 3
    expect_err_has "(a reply hit --max-tokens before it ended: raise --max-tokens)"
    expect_err_lacks "no content"

    # The question check's yes or no has 4 tokens, which such a model
    # spends thinking: that is no "no", and the question goes on (it
    # used to end at once with exit 4, whatever was asked).
    s=$("$PY" -c 'import json,sys; print(json.dumps([{"status": 200, "body": {"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "reasoning_content": "The user asks"}, "finish_reason": "length"}]}}, {"content": sys.argv[1]}]))' "$(fence "SELECT count(*) AS n FROM customers")")
    start_llm "$s"
    run ask --llm-url "$URL" --model test -f csv shop.db "xyzzy frobs"
    expect_rc 0
    expect_requests 2
    expect_out 'n\n60\n'
}

finds_sql_after_quoted_prose_and_in_other_fences() {
    # extract.h: the first ```sql block, or the first fenced block of any
    # kind that starts with SELECT/WITH, else the text from the first
    # SELECT/WITH keyword. Prose with an apostrophe or a non-sql fence
    # before the statement must not hide it.
    copy_db
    local r
    for r in \
        "Here's the query:

SELECT count(*) AS n FROM orders WHERE shipping_country = 'DE';" \
        "\`\`\`postgresql
SELECT count(*) AS n FROM orders WHERE shipping_country = 'DE'
\`\`\`"; do
        start_llm "$(replies "$r" "$(fence "SELECT 'repair was needed' AS oops")")"
        run ask --llm-url "$URL" --model test -f json shop.db "How many orders were shipped to Germany?"
        expect_rc 0
        pycheck '
j = json.loads(out)
a = j["attempts"][0]
ok = len(j["attempts"]) == 1 and j["rows"] == [[32]] and len(reqs) == 1
open(args[1], "a").write("" if ok else "reply %r: attempt 1 %s (%s); " % (args[0], a["error"], a["message"]))
' "$r" "$T/missed"
    done
    [ ! -s "$T/missed" ] || fail "$(cat "$T/missed")"
}

hugepages_other_than_0_or_1_is_ignored_with_a_warning() {
    # ASKDB_HUGEPAGES is an operator's switch: 0 and 1 decide, and a value
    # that says neither ("yes", "off") is named as ignored, once, by every
    # command (it turned huge pages on, silently).
    copy_db
    local v
    for v in yes off 2; do
        ASKDB_HUGEPAGES=$v run sql shop.db "SELECT 1 AS x"
        expect_rc 0
        expect_err_has "askdb sql: ASKDB_HUGEPAGES is neither 0 nor 1: ignored"
        [ "$(grep -c HUGEPAGES "$T/err")" = 1 ] || fail "not warned once: $(cat "$T/err")"
    done
    for v in 0 1 ''; do
        ASKDB_HUGEPAGES=$v run sql shop.db "SELECT 1 AS x"
        expect_rc 0
        expect_err_lacks "HUGEPAGES"
    done
}

# A model name that is not a .gguf file, for the local model, is a usage
# error that names where the name came from and why the local model was
# chosen: not "with no --llm-url" when a URL was given with --provider
# local, and not "--model" for ASKDB_MODEL.
local_provider_with_a_model_name_says_why() {
    copy_db
    run ask --provider local --llm-url http://127.0.0.1:9/v1 --model m shop.db "One?"
    if grep -q "not built into this askdb" "$T/err"; then return 0; fi
    expect_rc 2
    expect_err_has "the model 'm' (--model or ASKDB_MODEL) is not a .gguf file"
    expect_err_has "the provider is local (--provider or ASKDB_PROVIDER)"
    expect_err_lacks "with no --llm-url"
    ASKDB_PROVIDER=local ASKDB_LLM_URL=http://127.0.0.1:9/v1 ASKDB_MODEL=m run ask shop.db "One?"
    expect_rc 2
    expect_err_has "the model 'm' (--model or ASKDB_MODEL) is not a .gguf file"
    expect_err_lacks "with no --llm-url"
    run ask --provider local --model m shop.db "One?"
    expect_rc 2
    expect_err_has "the model 'm' (--model or ASKDB_MODEL) is not a .gguf file, and with no URL"
    expect_err_has "--provider openai or anthropic"
}

environment_configures_model_and_flags_override_it() {
    copy_db
    start_llm "$(always "$(fence "SELECT 1 AS x")")"
    ASKDB_LLM_URL="$URL" ASKDB_MODEL=envmodel ASKDB_API_KEY=envkey123 run ask --no-question-check shop.db "One?"
    expect_rc 0
    expect_out 'x\n1\n'
    ASKDB_LLM_URL="$URL" ASKDB_MODEL=envmodel ASKDB_API_KEY=envkey123 run ask --model flagmodel --api-key flagkey456 --no-question-check shop.db "One?"
    expect_rc 0
    # The vendors' own keys go only to their own hosts, never to this
    # local server, whatever the provider says.
    OPENAI_API_KEY=openaikey789 ANTHROPIC_API_KEY=antkey789 run ask --llm-url "$URL" --model test --no-question-check shop.db "One?"
    expect_rc 0
    OPENAI_API_KEY=openaikey789 ASKDB_PROVIDER=OpenAI run ask --llm-url "$URL/v1" --model test --no-question-check shop.db "One?"
    expect_rc 0
    expect_requests 4
    # A .gguf ASKDB_MODEL would select the local model; the --llm-url flag
    # beats it (and then asks for a model name).
    ASKDB_MODEL="$W/nothere.gguf" run ask --llm-url "$URL" --no-question-check shop.db "One?"
    expect_rc 2
    expect_err_has "no model name given for the OpenAI-compatible endpoint $URL/chat/completions"
    ASKDB_MODEL="$W/nothere.gguf" run ask --llm-url "$URL" --model test --no-question-check shop.db "One?"
    expect_rc 0
    expect_requests 5
    pycheck '
b = [(r["body"]["model"], r["headers"].get("authorization")) for r in reqs]
assert b[0] == ("envmodel", "Bearer envkey123"), b[0]
assert b[1] == ("flagmodel", "Bearer flagkey456"), b[1]
assert b[2] == ("test", None), b[2]
assert b[3] == ("test", None), b[3]
assert all("x-api-key" not in r["headers"] for r in reqs), reqs
'
}

# A provider that is none of askdb's says where the name came from, and
# never offers 'custom' (a program's own model function, which only the
# library can take); sql, which asks no model, does not care.
provider_errors_say_where_the_name_came_from() {
    copy_db
    start_llm "$(always "$(fence "SELECT 1 AS x")")"
    local args=(--llm-url "$URL" --model test --no-question-check)
    ASKDB_PROVIDER=bogus run ask "${args[@]}" shop.db "One?"
    expect_rc 2
    expect_err_has "askdb ask: ASKDB_PROVIDER='bogus' is not a model provider: use openai (any OpenAI-compatible server: Ollama, vLLM, llama.cpp's), anthropic or local"
    expect_err_lacks "custom"
    run ask --provider bogus "${args[@]}" shop.db "One?"
    expect_rc 2
    expect_err_has "askdb ask: --provider 'bogus' is not a model provider: use openai"
    expect_err_lacks "custom"
    ASKDB_PROVIDER=bogus run ask --provider custom "${args[@]}" shop.db "One?"
    expect_rc 2
    expect_err_has "askdb ask: --provider 'custom' is not a model provider: use openai"
    expect_err_lacks "llm_fn"
    ASKDB_PROVIDER=bogus run shell "${args[@]}" shop.db
    expect_rc 2
    expect_err_has "askdb shell: ASKDB_PROVIDER='bogus' is not a model provider"
    ASKDB_PROVIDER=bogus run eval --suite nothere.jsonl "${args[@]}"
    expect_rc 2
    expect_err_has "askdb eval: ASKDB_PROVIDER='bogus' is not a model provider"
    ASKDB_PROVIDER=custom run mcp "${args[@]}" shop.db
    expect_rc 2
    expect_err_has "askdb mcp: ASKDB_PROVIDER='custom' is not a model provider"
    ASKDB_PROVIDER=bogus run serve --listen 127.0.0.1:0 "${args[@]}" shop.db
    expect_rc 2
    expect_err_has "askdb serve: ASKDB_PROVIDER='bogus' is not a model provider"
    expect_requests 0
    ASKDB_PROVIDER=bogus run sql -f csv shop.db "SELECT 2 AS y"
    expect_rc 0
    expect_out_has "2"
}

sql_command_reports_errors_with_exit_1() {
    copy_db
    run sql shop.db "SELEC 1"
    expect_rc 1
    expect_err_has "syntax error"
    run sql shop.db "SELECT * FROM nosuchtable"
    expect_rc 1
    expect_err_has "no such table: nosuchtable"
    run sql -f csv shop.db "SELECT name FROM categories WHERE parent_id IS NULL ORDER BY id LIMIT 2"
    expect_rc 0
    expect_out 'name\nElectronics\nHome & Kitchen\n'
}

sql_show_sql_prints_the_statement_and_refuses_ask_only_options() {
    # --show-sql prints the statement before the rows as ask does (on
    # stderr beside CSV, fenced in Markdown); --dry-run and --trace, which
    # sql cannot honour (the statement would run; nothing is traced), are
    # usage errors that run nothing and create no file.
    copy_db
    local before
    run sql --show-sql -f table shop.db "SELECT 1 AS x"
    expect_rc 0
    expect_out 'SELECT 1 AS x\n+---+\n| x |\n+---+\n| 1 |\n+---+\n(1 row)\n'
    run sql --show-sql -f csv shop.db "SELECT 1 AS x"
    expect_rc 0
    expect_out 'x\n1\n'
    [ "$(cat "$T/err")" = "SELECT 1 AS x" ] || fail "stderr: $(cat "$T/err")"
    run sql --show-sql -f markdown shop.db "SELECT 1 AS x"
    expect_rc 0
    expect_out '```sql\nSELECT 1 AS x\n```\n| x   |\n| --- |\n| 1   |\n'
    # A ``` in the statement does not end its block: the fence is longer
    # than any run of backticks in it (CommonMark).
    run sql --show-sql -f md shop.db "SELECT '\`\`\`' AS x, '\`\`\`\`' AS \"y\""
    expect_rc 0
    expect_out '%s\n' '`````sql' "SELECT '\`\`\`' AS x, '\`\`\`\`' AS \"y\"" '`````' \
        '| x   | y    |' '| --- | ---- |' '| ``` | ```` |'
    before=$(snapshot)
    run sql --dry-run shop.db "SELECT 1 AS x"
    expect_rc 2
    expect_err_has "askdb sql: --dry-run is for ask and shell"
    [ ! -s "$T/out" ] || fail "stdout not empty: $(head -c 200 "$T/out")"
    run sql --trace t.jsonl shop.db "SELECT 1 AS x"
    expect_rc 2
    expect_err_has "askdb sql: --trace is for ask, shell, eval, serve and mcp"
    run schema --trace t.jsonl shop.db
    expect_rc 2
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
}

sql_and_schema_refuse_every_option_of_ask_and_shell() {
    # Every option 'askdb help ask' lists and 'askdb help sql' does not
    # sets up the model or the agent: sql and schema refuse it (exit 2,
    # nothing run, no file made) instead of ignoring it. Only -v (where
    # the statements run) and, for schema, --sample-values are theirs too.
    copy_db
    local before opt arg n=0
    run help sql
    expect_rc 0
    cp "$T/out" "$T/help_sql"
    run help ask
    expect_rc 0
    "$PY" - "$T/out" >"$T/opts" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
valued = set(re.findall(r"(?m)^ +(?:-\w, )?(--[a-z][a-z-]*) [A-Z]", text))
for o in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", text))):
    print(o, "V" if o in valued else "")
PY
    before=$(snapshot)
    while read -r opt arg; do
        case $opt in --verbose) continue ;; esac
        ! grep -qE -- "(^|[^a-z-])$opt([^a-z-]|$)" "$T/help_sql" || continue
        n=$((n + 1))
        run sql "$opt" ${arg:+1} shop.db "SELECT 1 AS x"
        expect_rc 2
        expect_err_has "askdb sql: $opt is for ask"
        expect_no_out
        [ "$opt" != --sample-values ] || continue
        run schema "$opt" ${arg:+1} shop.db
        expect_rc 2
        expect_err_has "askdb schema: $opt is for ask"
        expect_err_has " (see 'askdb help schema')"
        expect_no_out
    done <"$T/opts"
    [ "$n" -ge 40 ] || fail "only $n options of ask that sql lacks: $(tr '\n' ' ' <"$T/opts")"
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
    run sql --answer shop.db "SELECT 1 AS x"
    expect_err_has "askdb sql: --answer is for ask, shell, serve and mcp (see 'askdb help sql')"
    run sql --sample-values 1 shop.db "SELECT 1 AS x"
    expect_err_has "askdb sql: --sample-values is for ask, shell, schema, eval, serve and mcp"
    run schema --show-sql shop.db
    expect_rc 2
    expect_err_has "askdb schema: --show-sql is for ask, shell and sql"

    # What they do take still works; the model's variables stay ignored.
    ASKDB_LLM_URL=http://127.0.0.1:9/v1 ASKDB_MODEL=m ASKDB_PROVIDER=openai \
        run sql -v --show-sql --timeout 5000 --max-rows 1 --max-bytes 100000 \
        --in-process -f csv shop.db "SELECT id FROM customers ORDER BY id"
    expect_rc 0
    expect_out 'id\n1\n'
    expect_err_has "SELECT id FROM customers ORDER BY id"
    ASKDB_LLM_URL=http://127.0.0.1:9/v1 \
        run schema -v --sample-values 0 --timeout 5000 shop.db
    expect_rc 0
    expect_out_has "CREATE TABLE customers"
    expect_out_lacks "e.g."
}

schema_refuses_max_rows_which_caps_none_of_its_reads() {
    # --max-rows caps the rows of a statement; schema runs none: its
    # catalogue queries and sample values are read whole (the samples
    # capped by --sample-values), so the same schema came out whatever
    # the cap. It is refused (exit 2, nothing read) as an option of the
    # statements, and its help does not list it.
    copy_db
    run schema --max-rows 1 shop.db
    expect_rc 2
    expect_err_has "askdb schema: --max-rows is for ask, shell, sql, eval, serve and mcp (see 'askdb help schema')"
    expect_no_out
    run help schema
    expect_rc 0
    expect_out_lacks "--max-rows"
    expect_out_has "--timeout MS"
    run sql --max-rows 1 -f csv shop.db "SELECT id FROM customers ORDER BY id"
    expect_rc 0
    expect_out 'id\n1\n'
}

schema_takes_only_the_limit_its_reads_have() {
    # Of the limits, schema takes --timeout alone: it bounds each read of
    # the schema (the open's wait for a writer's lock, each table's
    # samples and count, a server's catalogue queries). --max-bytes caps
    # a statement's result and --in-process says where statements run;
    # schema runs none and never starts askdb-exec, so the same schema
    # came out with --max-bytes 1 and with --in-process. They are refused
    # as --max-rows is (exit 2, nothing read), its help lists neither,
    # and -v says the schema was read in this process, not that
    # statements run in askdb-exec: no helper is looked for, so one that
    # ASKDB_EXEC_HELPER names wrongly stops sql, not schema.
    copy_db
    local opt
    for opt in --max-bytes --in-process; do
        if [ "$opt" = --max-bytes ]; then
            run schema --max-bytes 1 shop.db
        else
            run schema --in-process shop.db
        fi
        expect_rc 2
        expect_err_has "askdb schema: $opt is for ask, shell, sql, eval, serve and mcp (see 'askdb help schema')"
        expect_no_out
    done
    run help schema
    expect_rc 0
    expect_out_lacks "--max-bytes"
    expect_out_lacks "--in-process"
    expect_out_lacks "askdb-exec"
    expect_out_has "--timeout MS      time limit in ms of each read of the schema"
    run schema -v shop.db
    expect_rc 0
    expect_out_has "CREATE TABLE customers"
    expect_err_has "askdb: [db] read the schema in "
    expect_err_has " ms, in this process (schema runs no statement)"
    expect_err_lacks "askdb-exec"
    expect_err_lacks "killed after the time limit"
    expect_err_lacks "(--in-process)"
    ASKDB_EXEC_HELPER=/nonexistent/askdb-exec run schema shop.db
    expect_rc 0
    expect_out_has "CREATE TABLE customers"
    ASKDB_EXEC_HELPER=/nonexistent/askdb-exec run sql shop.db "SELECT 1"
    expect_rc 3
    expect_err_has "ASKDB_EXEC_HELPER='/nonexistent/askdb-exec' is not an executable file"
    run sql --max-bytes 100000 --in-process -f csv shop.db "SELECT id FROM customers ORDER BY id LIMIT 1"
    expect_rc 0
    expect_out 'id\n1\n'
}

# CSV, the default off a terminal, ends its records with a line feed as
# psql --csv and sqlite3 -csv do here, so a shell takes a value as it is;
# a line break inside a value stays in its quoted field.
csv_records_end_in_a_line_feed_for_the_shell() {
    copy_db
    local n
    n=$(cd "$W" && "$ASKDB" sql shop.db "SELECT count(*) AS n FROM orders" | tail -1)
    [ "$n" = 250 ] || fail "the last line is $(printf '%q' "$n"), not 250"
    run sql shop.db "SELECT 'a' || char(13, 10) || 'b' AS t, 2 AS u"
    expect_rc 0
    expect_out 't,u\n"a\r\nb",2\n'
}

csv_keeps_every_byte_of_text_and_blobs() {
    # CSV to a file or a pipe is exact: text past a NUL and the whole of
    # a long blob (a table shows it cut); on a terminal the NUL is a space.
    copy_db
    run sql -f csv shop.db "SELECT 'a' || char(0) || 'b' AS t, 'q' || char(0) || ',\"' AS u, X'' AS e, CAST(X'00FF10' || zeroblob(300) AS BLOB) AS b"
    expect_rc 0
    "$PY" -c 'import sys; sys.stdout.buffer.write(b"t,u,e,b\na\0b,\"q\0,\"\"\",X\x27\x27,X\x2700FF10" + b"00" * 300 + b"\x27\n")' >"$T/csv.expected"
    expect_out_file "$T/csv.expected"
    run_tty sql -f csv shop.db "SELECT 'a' || char(0) || 'b' AS t"
    expect_rc 0
    expect_out 't\na b\n'
    # A table and Markdown show the whole text too, the NUL as a space.
    run sql -f table shop.db "SELECT 'a' || char(0) || 'b' AS t"
    expect_rc 0
    expect_out '+-----+\n| t   |\n+-----+\n| a b |\n+-----+\n(1 row)\n'
    run sql -f markdown shop.db "SELECT 'zero' || char(0) || 'byte' AS t"
    expect_rc 0
    expect_out_has '| zero byte |'
}

# full_stdout ARGS...: askdb with stdout on a full device (/dev/full);
# it must say so and exit 2.
full_stdout() {
    (cd "$W" && exec timeout -k 5 "$RUN_LIMIT_S" "$ASKDB" "$@") >/dev/full 2>"$T/err"
    RC=$?
    expect_rc 2
    expect_err_has "askdb: cannot write the output: No space left on device"
}

failed_writes_to_stdout_exit_2() {
    # Rows that never reached the disk are not "answered": a write error on
    # stdout is reported, and the exit code is 2.
    [ -w /dev/full ] || { echo "skipped: no /dev/full"; return 0; }
    copy_db
    start_llm "$(always "$(fence "SELECT count(*) AS n FROM orders")")"
    run learn shop.db --question "How many orders?" --sql "SELECT count(*) AS n FROM orders"
    expect_rc 0
    full_stdout sql shop.db "SELECT * FROM orders"
    full_stdout sql shop.db "SELECT 1"
    full_stdout schema shop.db
    full_stdout ask --llm-url "$URL" --model test --no-question-check shop.db "How many orders?"
    full_stdout learn shop.db --list
    full_stdout help sql
}

json_output_stays_valid_for_any_value() {
    # -f json must always be one parseable document whose rows have one
    # value per column: text that is not UTF-8 (SQLite does not check it),
    # infinite reals (1e999 overflows to inf), blobs.
    copy_db
    local -a bad=()
    local q
    for q in "SELECT CAST(X'41FF42' AS TEXT) AS t, 1 AS n" \
             "SELECT 1e999 AS inf, -1e999 AS ninf, 0.5 AS r" \
             "SELECT X'00ff10' AS b, 'x' AS s"; do
        run sql -f json shop.db "$q"
        expect_rc 0
        "$PY" - "$T/out" "$q" >>"$T/bad" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
try:
    j = json.loads(raw.decode("utf-8"))
    w = len(j["columns"])
    assert all(len(r) == w for r in j["rows"]), "rows %r for columns %r" % (j["rows"], j["columns"])
    assert j["row_count"] == 1 and len(j["rows"]) == 1
    if "X'00ff10'" in sys.argv[2]:
        assert j["rows"][0][0] == {"blob_hex": "00ff10"}, j["rows"][0]
    if "41FF42" in sys.argv[2]:
        t = j["rows"][0][0]
        assert isinstance(t, str) and t.startswith("A") and t.endswith("B"), t
except Exception as e:
    print("%s -> %s: %s (output %r); " % (sys.argv[2], type(e).__name__, str(e)[:120], raw[-60:]), end="")
PY
    done
    [ ! -s "$T/bad" ] || fail "$(cat "$T/bad")"

    # Names, SQL and messages that are not UTF-8 are repaired, never
    # dropped: the columns still line up with the rows. A question that is
    # not UTF-8 is refused (exit 2), its JSON valid, the question in it
    # repaired.
    run sql -f json shop.db $'SELECT 1 AS "caf\xe9", 2 AS n -- \xff'
    expect_rc 0
    pycheck '
j = json.loads(out)
assert j["columns"] == ["caf\ufffd", "n"], j["columns"]
assert j["rows"] == [[1, 2]], j["rows"]
assert j["sql"].endswith("-- \ufffd"), j.get("sql")
'
    run sql -f json shop.db $'SELECT * FROM "t\xe9"'
    expect_rc 1
    pycheck '
j = json.loads(out)
assert j["error"] == "no such table: t\ufffd", j.get("error")
'
    start_llm "$(replies "$(fence 'SELECT 1 AS "x"')")"
    run ask --llm-url "$URL" --model test --no-question-check -f json shop.db $'Caf\xe9 count?'
    expect_rc 2
    expect_requests 0
    pycheck '
j = json.loads(out)
assert j["question"] == "Caf\ufffd count?", j.get("question")
assert j["status"] == "usage" and "byte 4 (0xE9)" in j["error"], j
'
}

latin1_text_reaches_the_model_and_the_trace() {
    # Latin-1 text in the database (SQLite does not check UTF-8) goes into
    # the prompt as a sample value: the request body must still be JSON
    # (the bytes repaired to U+FFFD), not fail as "out of memory", and the
    # trace must keep the prompt event.
    "$PY" - "$W/latin1.db" <<'PY' || fail "cannot build latin1.db"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT)")
c.execute("INSERT INTO people (name) VALUES (CAST(X'4DFC6C6C6572' AS TEXT))")
c.commit()
c.close()
PY
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM people")")"
    run ask --llm-url "$URL" --model test --no-question-check --trace "$T/trace.jsonl" -f csv latin1.db "How many people?"
    expect_rc 0
    expect_out 'n\n1\n'
    expect_requests 1
    pycheck '
body = json.dumps(reqs[0]["body"], ensure_ascii=False)
assert "M\ufffdller" in body, body[:400]
ev = trace_lines(args[0])
prompts = [e for e in ev if e["step"] == "prompt"]
assert prompts and "M\ufffdller" in json.dumps(prompts[0], ensure_ascii=False), [e["step"] for e in ev]
' "$T/trace.jsonl"
}

terminal_never_gets_control_characters() {
    # Text from the model or the database can hold ESC, BEL and C1
    # controls (OSC 52 sets the clipboard, OSC 0 retitles the window).
    # On a terminal every one becomes a space: cells (CSV too), SQL, the
    # answer, errors, streamed tokens. CSV and JSON to a file stay exact;
    # table and Markdown cells are cleaned even in a file.
    copy_db
    local sql answer script
    sql=$(printf "SELECT '\033]52;c;ZWNobyBoaQ==\007' AS x, 'a\302\233""31mb' AS y")
    answer=$(printf 'It is \033]0;pwned\007 done.')
    script=$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1], "repeat": False}, {"content": sys.argv[2]}]))' "$(fence "$sql")" "$answer")
    start_llm "$script"
    run_tty ask --llm-url "$URL" --model test --no-question-check --answer --show-sql shop.db "Clipboard?"
    expect_rc 0
    expect_no_controls "$T/out"
    expect_out_has "]52;c;ZWNobyBoaQ=="
    expect_out_has "It is  ]0;pwned  done."
    expect_out_has "| a 31mb |"

    start_llm "$script"
    run_tty ask --llm-url "$URL" --model test --no-question-check --answer --stream -v shop.db "Clipboard?"
    expect_rc 0
    expect_no_controls "$T/out"
    expect_no_controls "$T/err"
    expect_err_has "]52;c;ZWNobyBoaQ=="

    # A bidirectional override would show "abcfed" for what holds
    # "abc<RLO>def": a space in a table on a terminal or in a file.
    run_tty sql -f table shop.db "SELECT 'abc' || char(8238) || 'def' || char(8294) || 'g' AS x"
    expect_rc 0
    expect_no_controls "$T/out"
    expect_out_has "| abc def g |"
    run sql -f markdown shop.db "SELECT 'abc' || char(8238) || 'def' AS x"
    expect_rc 0
    expect_no_controls "$T/out"

    # An error that quotes the SQL.
    run_tty sql shop.db "$(printf 'SELECT * FROM "\033]0;x\007"')"
    expect_rc 1
    expect_no_controls "$T/err"
    expect_err_has "no such table:  ]0;x "

    # CSV on a terminal is cleaned too (its line breaks stay).
    run_tty sql -f csv shop.db "$sql"
    expect_rc 0
    "$PY" - "$T/out" <<'PY' || fail "control characters in CSV on a terminal: $(show_bytes "$T/out")"
import re, sys
b = open(sys.argv[1], "rb").read()
sys.exit(1 if re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]", b) or b"]52;c;ZWNobyBoaQ==" not in b else 0)
PY

    # Not a terminal: CSV and JSON keep every byte, a table is cleaned.
    run sql -f csv shop.db "$sql"
    expect_rc 0
    expect_out "x,y\n\033]52;c;ZWNobyBoaQ==\007,a\302\233""31mb\n"
    run sql -f json shop.db "$sql"
    expect_rc 0
    pycheck 'j = json.loads(out); assert j["rows"] == [["\x1b]52;c;ZWNobyBoaQ==\x07", "a\x9b31mb"]], j["rows"]'
    run sql -f table shop.db "$sql"
    expect_rc 0
    expect_no_controls "$T/out"
}

markdown_rule_has_three_dashes_in_every_column() {
    # format.c pads Markdown columns to three dashes, but only when the
    # first column is narrow; a narrow later column gets a shorter rule.
    copy_db
    run sql -f markdown shop.db "SELECT 'abcd' AS name, 1 AS n"
    expect_rc 0
    expect_out '%s\n' '| name | n   |' '| ---- | --- |' '| abcd | 1   |'
}


table_columns_line_up_with_wide_and_combining_characters() {
    # A terminal gives a CJK character two columns and a combining accent
    # none (format.c: wcwidth() in C.UTF-8); counting code points misaligned
    # the bars.
    copy_db
    local sql="SELECT '界界' AS w, 'e' || char(769) AS c, 'x' AS n UNION ALL SELECT 'ab', 'ee', 'y'"
    run sql -f table shop.db "$sql"
    expect_rc 0
    expect_out '%s\n' '+------+----+---+' '| w    | c  | n |' '+------+----+---+' \
        $'| 界界 | e\xcc\x81  | x |' '| ab   | ee | y |' '+------+----+---+' \
        '(2 rows)'
    run sql -f markdown shop.db "$sql"
    expect_rc 0
    expect_out '%s\n' '| w    | c   | n   |' '| ---- | --- | --- |' \
        $'| 界界 | e\xcc\x81   | x   |' '| ab   | ee  | y   |'
}

# One long value made every row of its column as wide: a table of 1000
# rows with one value of 500 KB was 1 GB of spaces. A table cell shows at
# most 100 columns (the start, at a character's end, and "..."), and says
# so; Markdown keeps the value whole and pads its column to 100 at most.
table_cuts_long_values_and_says_so() {
    copy_db
    local sql="SELECT 1 AS n, printf('%.150c', 'a') AS v UNION ALL SELECT 2, '界' || printf('%.120c', 'b') UNION ALL SELECT 3, 'short' UNION ALL SELECT 4, 'bb' || replace(printf('%.60c', 'x'), 'x', '界')"
    run sql -f table shop.db "$sql"
    expect_rc 0
    pycheck '
rule = "+---+" + "-" * 102 + "+"
want = [rule, "| n | v" + " " * 99 + " |", rule,
        "| 1 | " + "a" * 97 + "... |",
        "| 2 | \u754c" + "b" * 95 + "... |",
        "| 3 | short" + " " * 95 + " |",
        "| 4 | bb" + "\u754c" * 47 + "...  |", rule,
        "(4 rows; values over 100 columns cut: -f csv or json shows them whole)", ""]
assert out == "\n".join(want), "\n" + out
'
    run sql -f markdown shop.db "$sql"
    expect_rc 0
    pycheck '
want = ["| n   | v" + " " * 99 + " |", "| --- | " + "-" * 100 + " |",
        "| 1   | " + "a" * 150 + " |",
        "| 2   | \u754c" + "b" * 120 + " |",
        "| 3   | short" + " " * 95 + " |",
        "| 4   | bb" + "\u754c" * 60 + " |", ""]
assert out == "\n".join(want), "\n" + out
'
    run sql -f table shop.db "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) SELECT x, CASE WHEN x = 1 THEN printf('%.300000c', 'z') ELSE 'x' END AS v FROM c"
    expect_rc 0
    [ "$(wc -c <"$T/out")" -lt 200000 ] || fail "a table of 1000 short rows and one long value is $(wc -c <"$T/out") bytes"
    run sql -f csv shop.db "$sql"
    expect_rc 0
    pycheck 'assert ("a" * 150 + "\n") in out, out'
}

# A table wider than the terminal, wrapped by it, no longer read as rows:
# on a terminal too narrow for it a table is shown a record at a time, as
# psql's expanded display (\x auto) shows it; one that fits, and a table
# to a file or a pipe, as before.
table_wider_than_the_terminal_is_shown_by_record() {
    copy_db
    local sql="SELECT id, first_name, email, city, loyalty_tier FROM customers WHERE id IN (1, 38) ORDER BY id"
    PTY_COLS=50 run_pty '[]' sql shop.db "$sql"
    expect_rc 0
    pycheck '
o = out.replace("\r\n", "\n")
rule = "-" * 28   # to the name, " | " and the widest value: 41 columns
want = """-[ RECORD 1 ]%s
id           | 1
first_name   | Olivia
email        | olivia_brown37@example.net
city         | Austin
loyalty_tier | gold
-[ RECORD 2 ]%s
id           | 38
""" % (rule, rule)
assert o.startswith(want), "\n" + o
assert "city         | \x1b[2mNULL\x1b[22m\n" in o and o.endswith("(2 rows)\n"), "\n" + o
'
    PTY_COLS=200 run_pty '[]' sql shop.db "$sql"
    expect_rc 0
    pycheck 'o = out.replace("\r\n", "\n"); assert o.startswith("+----+") and "| id | first_name |" in o and "RECORD" not in o, o'
    run sql -f table shop.db "$sql"
    expect_rc 0
    expect_out_lacks "RECORD"
    # No rows: the columns still, a line each (a table of no rows shows
    # its header; psql's \x shows nothing but the count).
    PTY_COLS=50 run_pty '[]' sql shop.db "SELECT id, first_name, email, 1 AS a_column_name_that_takes_room FROM customers WHERE id < 0"
    expect_rc 0
    pycheck '
o = out.replace("\r\n", "\n")
rule = "-" * 37   # to the terminal: 49 columns
want = "-[ NO ROWS ]%s\nid\nfirst_name\nemail\na_column_name_that_takes_room\n(0 rows)\n" % rule
assert o.endswith(want), "\n" + o
'
}

# A terminal draws an emoji with a skin-tone modifier, a ZWJ sequence and
# a flag (a pair of regional indicators) as one picture two columns wide;
# wcwidth() alone, a code point at a time, made them 4, 6 and 2.
table_measures_emoji_sequences_as_one_picture() {
    copy_db
    # 👍🏽, 🇩🇪, 👨‍👩‍👧, 🏳️‍🌈 (U+FE0F asks for the emoji picture of
    # a one-column flag), ❤️, then a lone regional indicator (one column).
    local sql="SELECT char(128077, 127997) AS e, 1 AS n UNION ALL SELECT char(127465, 127466), 2 UNION ALL SELECT char(128104, 8205, 128105, 8205, 128103), 3 UNION ALL SELECT char(127987, 65039, 8205, 127752), 4 UNION ALL SELECT char(10084, 65039), 5 UNION ALL SELECT char(127465) || 'x', 6 UNION ALL SELECT 'ab', 7"
    run sql -f table shop.db "$sql"
    expect_rc 0
    pycheck '
cells = ["\U0001F44D\U0001F3FD", "\U0001F1E9\U0001F1EA", "\U0001F468\u200d\U0001F469\u200d\U0001F467",
         "\U0001F3F3\ufe0f\u200d\U0001F308", "\u2764\ufe0f", "\U0001F1E9x", "ab"]
want = ["+----+---+", "| e  | n |", "+----+---+"]
want += ["| %s | %d |" % (c, i + 1) for i, c in enumerate(cells)]
want += ["+----+---+", "(7 rows)", ""]
assert out == "\n".join(want), "\n" + out
'
    run sql -f markdown shop.db "$sql"
    expect_rc 0
    pycheck '
cells = ["\U0001F44D\U0001F3FD", "\U0001F1E9\U0001F1EA", "\U0001F468\u200d\U0001F469\u200d\U0001F467",
         "\U0001F3F3\ufe0f\u200d\U0001F308", "\u2764\ufe0f", "\U0001F1E9x", "ab"]
want = ["| e   | n   |", "| --- | --- |"]
want += ["| %s  | %d   |" % (c, i + 1) for i, c in enumerate(cells)] + [""]
assert out == "\n".join(want), "\n" + out
'
}

# A real NULL is not the text 'NULL': a table and Markdown show it as an
# empty cell, as psql and sqlite3 do (and CSV an empty field); on a
# terminal it is a dim NULL, as the web page shows it apart, unless
# NO_COLOR is set.
table_shows_null_apart_from_the_text_null() {
    copy_db
    local sql="SELECT 'NULL' AS a, NULL AS b, '' AS c"
    run sql -f table shop.db "$sql"
    expect_rc 0
    expect_out '%s\n' '+------+---+---+' '| a    | b | c |' '+------+---+---+' \
        '| NULL |   |   |' '+------+---+---+' '(1 row)'
    run sql -f markdown shop.db "$sql"
    expect_rc 0
    expect_out '%s\n' '| a    | b   | c   |' '| ---- | --- | --- |' '| NULL |     |     |'
    run_tty sql -f table shop.db "$sql"
    expect_rc 0
    expect_out '%s\n' '+------+------+---+' '| a    | b    | c |' '+------+------+---+' \
        $'| NULL | \e[2mNULL\e[22m |   |' '+------+------+---+' '(1 row)'
    run_tty sql -f markdown shop.db "$sql"
    expect_rc 0
    expect_out '%s\n' '| a    | b    | c   |' '| ---- | ---- | --- |' $'| NULL | \e[2mNULL\e[22m |     |'
    NO_COLOR=1 run_tty sql -f table shop.db "$sql"
    expect_rc 0
    expect_out_has '| NULL |   |   |'
    expect_no_controls "$T/out"
}

a_failed_candidate_request_costs_the_candidate_only() {
    # An HTTP model answers the greedy candidate, then rate-limits the
    # next one: the question used to end with the 429 (exit 4) though a
    # statement was in hand. Now the candidates from the failed one on
    # are out of the vote (class llm), and the greedy one answers.
    copy_db
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1]}, {"status": 429, "repeat": True}]))' "$(fence "SELECT count(*) AS n FROM customers")")"
    run ask --llm-url "$URL" --model test --candidates 3 --retries 0 --no-settle \
        --no-question-check -v -f json shop.db "How many customers are there?"
    expect_rc 0
    expect_requests 2
    expect_err_has "candidate 2: "
    expect_err_has "candidate 3: not asked: an earlier candidate's request failed"
    pycheck 'd = json.loads(out); assert d["status"] == "ok" and d["rows"] == [[60]], d; assert d["candidates"] == 3 and abs(d["confidence"] - 1/3) < 1e-9, d; assert d["llm_calls"] == 2, d["llm_calls"]'
    # The greedy one failing still ends the question: nothing is in hand.
    start_llm '[{"status": 429, "repeat": true}]'
    run ask --llm-url "$URL" --model test --candidates 3 --retries 0 --no-settle \
        --no-question-check shop.db "How many customers are there?"
    expect_rc 4
}

a_failed_answer_in_words_is_said() {
    # --answer with a model that fails the words: the rows are printed and
    # a line says the words could not be written (it said nothing).
    copy_db
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1]}, {"status": 500, "repeat": True}]))' "$(fence "SELECT count(*) AS n FROM customers")")"
    run ask --llm-url "$URL" --model test --answer --retries 0 --no-question-check -f csv \
        shop.db "How many customers are there?"
    expect_rc 0
    expect_out $'n\n60\n'
    expect_err_has "askdb: the answer in words could not be written (the model failed; -v says why); the rows are the answer"
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1]}, {"status": 500, "repeat": True}]))' "$(fence "SELECT count(*) AS n FROM customers")")"
    run ask --llm-url "$URL" --model test --answer --retries 0 --no-question-check -v -f csv \
        shop.db "How many customers are there?"
    expect_rc 0
    expect_err_has "no answer in words: "
    # An empty reply (a reasoning model that spent its tokens thinking)
    # is no answer either, not a blank line in its place.
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1]}, {"content": "", "finish_reason": "length", "repeat": True}]))' "$(fence "SELECT count(*) AS n FROM customers")")"
    run ask --llm-url "$URL" --model test --answer --retries 0 --no-question-check -v -f csv \
        shop.db "How many customers are there?"
    expect_rc 0
    expect_out $'n\n60\n'
    expect_err_has "no answer in words: the model's reply was empty"
    expect_err_has "askdb: the answer in words could not be written"
}

a_huge_bad_reply_is_sent_back_cut() {
    # A 2 MB reply with no statement: the repair turn sent it back whole,
    # and each later request was larger than the one before.
    copy_db
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"content": "x" * 2000000}, {"content": sys.argv[1]}]))' "$(fence "SELECT 1 AS one")")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv shop.db "One?"
    expect_rc 0
    expect_requests 2
    pycheck '
m = [x for x in msgs(1) if x["role"] == "assistant"]
assert len(m) == 1 and len(m[0]["content"]) < 9000, [len(x["content"]) for x in m]
assert m[0]["content"].endswith("[... 1991808 more bytes of this reply left out]"), m[0]["content"][-80:]
'
}

candidates_confidence_and_answer_in_every_format() {
    copy_db
    local f
    # Three candidates (the HTTP model is asked three times), two agree;
    # then the answer in words.
    for f in table csv json markdown; do
        start_llm "$(replies "$(fence "SELECT 1 AS n")" \
            "$(fence "SELECT count(*) AS n FROM customers")" \
            "$(fence "SELECT count(id) AS n FROM customers")" \
            "There are 60 customers.")"
        run ask --llm-url "$URL" --model test --candidates 3 --answer -f "$f" \
            shop.db "How many customers are there?"
        expect_rc 0
        expect_requests 4
        case $f in
        table|markdown)
            expect_out_has "There are 60 customers."
            expect_out_has "confidence: 67% (2 of 3 candidate queries agree)" ;;
        csv)
            expect_out $'n\n60\n'
            expect_err_has "There are 60 customers."
            expect_err_has "confidence: 67%" ;;
        json)
            pycheck 'd = json.loads(out); assert d["candidates"] == 3 and abs(d["confidence"] - 2/3) < 1e-9, d; assert d["answer"] == "There are 60 customers.", d["answer"]; assert d["rows"] == [[60]], d["rows"]; assert d["llm_calls"] == 4, d["llm_calls"]' ;;
        esac
    done
    pycheck 'assert "Question: How many customers are there?" in user(3) and "60" in user(3), user(3)'
}

# The first two candidates agree on a result the third could not outvote:
# it is never asked, and the confidence line says it was not needed
# rather than counting it as disagreeing in silence.
settled_candidate_is_not_needed() {
    copy_db
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM customers")" \
        "$(fence "SELECT count(id) AS n FROM customers")" \
        "$(fence "SELECT 1 AS n")")"
    run ask --llm-url "$URL" --model test --candidates 3 -f table shop.db \
        "How many customers are there?"
    expect_rc 0
    expect_requests 2
    expect_out_has "confidence: 67% (2 of 3 candidate queries agree, 1 not needed)"
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM customers")" \
        "$(fence "SELECT count(id) AS n FROM customers")")"
    run ask --llm-url "$URL" --model test --candidates 3 -f json shop.db \
        "How many customers are there?"
    expect_rc 0
    pycheck 'd = json.loads(out); assert d["candidates"] == 3 and d["settled"] == 1 and d["llm_calls"] == 2, d'
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM customers")" \
        "$(fence "SELECT count(id) AS n FROM customers")" \
        "$(fence "SELECT 1 AS n")")"
    run ask --llm-url "$URL" --model test --candidates 3 --no-settle -f table \
        shop.db \
        "How many customers are there?"
    expect_rc 0
    expect_requests 3
    expect_out_has "confidence: 67% (2 of 3 candidate queries agree)"
    expect_out_lacks "not needed"
}

# --sample-values N: the schema the model reads shows N values per text
# column; 0 shows none.
sample_values_set_what_the_schema_shows() {
    copy_db
    start_llm "$(always "$(fence "SELECT count(*) AS n FROM customers")")"
    run ask --llm-url "$URL" --model test --sample-values 1 shop.db \
        "How many customers are there?"
    expect_rc 0
    pycheck 'import re; u = user(0); assert "  name TEXT NOT NULL, -- e.g. '"'"'Electronics'"'"'\n" in u, u[:400]; assert not re.search(r"e\.g\. [^\n]*, '"'"'", u), u'
    run ask --llm-url "$URL" --model test --sample-values 0 shop.db \
        "How many customers are there?"
    expect_rc 0
    pycheck 'assert "CREATE TABLE customers" in user(1) and "e.g." not in user(1), user(1)[:400]'
    run ask --llm-url "$URL" --model test --sample-values 11 shop.db "x"
    expect_rc 2
    expect_err_has "--sample-values takes a whole number from 0 to 10, not '11'"
}

greeting_is_answered_without_sql() {
    copy_db
    start_llm "$(always "$(fence "SELECT 1")")"
    run ask --llm-url "$URL" --model test -f table shop.db "Hello!"
    expect_rc 0
    expect_requests 0
    expect_out_has "Hello! Ask me a question about this database"
    expect_out_has "customers"
    run ask --llm-url "$URL" --model test -f json shop.db "thanks"
    expect_rc 0
    pycheck 'd = json.loads(out); assert d["not_a_question"] is True and d["sql"] is None, d'
}

question_check_asking_the_model_shows_with_v() {
    # When no name or value of the database matches, the question check
    # asks the model (yes/no; with the local model that can take seconds):
    # -v says so, as it says every other model call.
    copy_db
    start_llm "$(replies "yes" "$(fence "SELECT count(*) AS n FROM orders")")"
    run ask -v --llm-url "$URL" --model test -f csv shop.db "xyzzy frobs"
    expect_rc 0
    expect_requests 2
    pycheck '
lines = [l for l in err.splitlines() if l.startswith("askdb: [")]
q = [i for i, l in enumerate(lines) if l.startswith("askdb: [qcheck] ")]
g = [i for i, l in enumerate(lines) if l.startswith("askdb: [generate] ")]
assert len(q) == 2 and g and q[1] < g[0], lines
assert "asking the model" in lines[q[0]] and "the model: a question about the database" in lines[q[1]], lines
'
    # Names that match skip the model, and -v has no qcheck line then.
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM orders")")"
    run ask -v --llm-url "$URL" --model test -f csv shop.db "How many orders?"
    expect_rc 0
    expect_requests 1
    expect_err_lacks "[qcheck]"
}

shell_follows_up_until_new() {
    copy_db
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM orders")" \
        "$(fence "SELECT count(*) AS n FROM orders WHERE order_date LIKE '2023%'")" \
        "$(fence "SELECT count(*) AS n FROM customers")")"
    printf 'How many orders are there?\nand only for 2023?\n.new\nHow many customers are there?\n' >"$T/in"
    STDIN="$T/in" run shell --llm-url "$URL" --model test shop.db
    expect_rc 0
    expect_requests 3
    pycheck 'assert "Earlier questions" not in user(0); assert "1. How many orders are there?\n   SQL: SELECT count(*) AS n FROM orders" in user(1), user(1); assert "Earlier questions" not in user(2), user(2)'
}

plan_rows_with_accents_reach_the_model() {
    copy_db
    local plan
    # Step 1's row is cut at 60 bytes for the final prompt; byte 60 falls
    # inside an "é", and the request must still be valid JSON.
    plan='{"tasks": [{"id": 1, "task": "the tour"}, {"id": 2, "task": "its name", "depends_on": [1]}]}'
    start_llm "$(replies "$plan" \
        "$(fence "SELECT 'Best of Paris - Île-de-France: château de Versailles, musée d''Orsay' AS tour")" \
        "$(fence "SELECT 1 AS n")")"
    run ask --llm-url "$URL" --model test --no-question-check --plan -f csv shop.db "Which tour has both Versailles and Orsay?"
    expect_rc 0
    expect_requests 3
    expect_out 'n\n1\n'
    pycheck 'assert "Best of Paris - \u00cele-de-France: ch\u00e2teau de Versailles, mus...\n" in user(2), user(2)[-400:]'
}

plan_task_model_unreachable_is_reported_as_such() {
    copy_db
    local plan
    plan='{"tasks": [{"id": 1, "task": "the average"}, {"id": 2, "task": "above it", "depends_on": [1]}]}'
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1]}, {"close": True, "repeat": True}]))' "$plan")"
    run ask --llm-url "$URL" --model test --no-question-check --retries 0 --plan -f json shop.db "Which orders have a total higher than the average?"
    expect_rc 4
    expect_err_has "closed the connection without replying"
    pycheck 'j = json.loads(out); assert j["status"] == "model unreachable", j["status"]
assert "Reply with JSON only" in user(0) and "for step 1 only" in user(1), user(1)[-300:]'
}

sql_ctrl_c_cancels_the_statement() {
    # `askdb sql` died of Ctrl-C with no word, leaving a server's statement
    # to run until its time limit; now the statement is cancelled (its
    # askdb-exec killed here; a server is sent a cancel) and askdb says so.
    copy_db
    local pid t0 h _
    (cd "$W" && exec env --default-signal=INT "$ASKDB" sql --timeout 30000 shop.db \
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c") \
        >"$T/out" 2>"$T/err" &
    pid=$!
    for _ in $(seq 1 200); do
        h=$(helpers_of "$pid")
        [ -n "$h" ] && break
        sleep 0.05
    done
    [ -n "$h" ] || fail "no askdb-exec ran the statement"
    sleep 0.3
    t0=$(now_us)
    kill -INT "$pid"
    wait "$pid"
    RC=$?
    ELAPSED_MS=$((($(now_us) - t0) / 1000))
    expect_rc 130
    [ "$ELAPSED_MS" -lt 1000 ] || fail "ended $ELAPSED_MS ms after Ctrl-C"
    expect_err_has "askdb: cancelled"
    ! kill -0 "$h" 2>/dev/null || fail "askdb-exec $h still runs"
}

ctrl_c_cancels_the_question() {
    # Ctrl-C while the model thinks: the question stops at once with its
    # own exit code (130), not when the model would have answered.
    copy_db
    local pid t0 _
    start_llm '[{"delay_ms": 20000, "content": "SELECT 1 AS one"}]'
    (cd "$W" && exec env --default-signal=INT "$ASKDB" ask --llm-url "$URL" \
        --model test --no-question-check shop.db "How many customers?") \
        >"$T/out" 2>"$T/err" &
    pid=$!
    for _ in $(seq 1 200); do
        [ -s "$LLMLOG" ] && break
        sleep 0.05
    done
    [ -s "$LLMLOG" ] || fail "the model got no request"
    t0=$(now_us)
    kill -INT "$pid"
    wait "$pid"
    RC=$?
    ELAPSED_MS=$((($(now_us) - t0) / 1000))
    expect_rc 130
    [ "$ELAPSED_MS" -lt 1000 ] || fail "ended $ELAPSED_MS ms after Ctrl-C"
    expect_err_has "cancelled"
    [ ! -s "$T/out" ] || fail "stdout not empty: $(head -c 200 "$T/out")"
}

ctrl_c_during_the_words_keeps_the_rows() {
    # --answer, Ctrl-C while the model writes the words: the rows were
    # final, so they are printed (they were lost with the words) and a line
    # says why there are no words; the code is still Ctrl-C's (130).
    copy_db
    local pid _
    start_llm "$("$PY" -c 'import json,sys; print(json.dumps([{"content": sys.argv[1]}, {"delay_ms": 20000, "content": "There are 60."}]))' "$(fence "SELECT count(*) AS n FROM customers")")"
    (cd "$W" && exec env --default-signal=INT "$ASKDB" ask --llm-url "$URL" \
        --model test --answer --no-question-check -f csv shop.db "How many customers?") \
        >"$T/out" 2>"$T/err" &
    pid=$!
    for _ in $(seq 1 200); do
        [ "$(nreq)" = 2 ] && break
        sleep 0.05
    done
    [ "$(nreq)" = 2 ] || fail "the model was not asked for the words"
    kill -INT "$pid"
    wait "$pid"
    RC=$?
    expect_rc 130
    expect_out $'n\n60\n'
    expect_err_has "askdb: cancelled while the answer in words was written; the rows are the answer"
}

shell_ctrl_c_returns_to_the_prompt() {
    # In askdb shell on a terminal, Ctrl-C stops what runs and the prompt
    # comes back: a question (and the .sql after it runs: the cancel was
    # the question's), a line being typed (dropped, not run), a long .sql;
    # Ctrl-D then ends the shell with 0.
    copy_db
    local long steps
    start_llm '[{"delay_ms": 20000, "content": "SELECT 1 AS one"}]'
    long="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) AS n FROM c"
    steps=$("$PY" -c 'import json, sys; log, long = sys.argv[1:]; print(json.dumps([
        ["wait", "askdb> "], ["type", "How many orders?\r"], ["file", log],
        ["send", "\x03"], ["wait", "cancelled"], ["wait", "askdb> "],
        ["type", ".sql SELECT 41 AS x\r"], ["wait", r"\| +41 \|"], ["wait", "askdb> "],
        ["type", ".sql SELECT 99 AS dropped"], ["sleep", 0.3], ["type", "\x03"],
        ["wait", "askdb> "], ["type", ".sql SELECT 42 AS y\r"], ["wait", r"\| +42 \|"],
        ["wait", "askdb> "], ["type", ".sql " + long + "\r"], ["sleep", 1],
        ["send", "\x03"], ["wait", "cancelled"], ["wait", "askdb> "],
        ["type", ".sql SELECT 43 AS z\r"], ["wait", r"\| +43 \|"], ["wait", "askdb> "],
        ["type", "\x04"]]))' "$LLMLOG" "$long")
    run_pty "$steps" shell --llm-url "$URL" --model test --no-question-check \
        --timeout 60000 shop.db
    expect_rc 0
    expect_requests 1
    ! grep -qa '| *99 |' "$T/out" || fail "the line dropped with Ctrl-C ran"
}

shell_history_keeps_the_last_1000_lines_of_every_shell() {
    # Each line rewrote the history file with this shell's history: it
    # grew without end, and of two shells open at once the last to write
    # lost the other's lines. Now a line is added to the history as the
    # file holds it then, and the file keeps the last 1000 lines.
    copy_db
    start_llm "$(always "$(fence "SELECT 1")")"
    local h="$XDG_STATE_HOME/askdb/history" steps
    mkdir -p "$XDG_STATE_HOME/askdb"
    "$PY" -c 'import sys; open(sys.argv[1], "w").write("_HiStOrY_V2_\n" + "".join("q%d\n" % i for i in range(1, 1501)))' "$h"
    steps=$("$PY" -c 'import json, sys; print(json.dumps([
        ["wait", "askdb> "], ["append", [sys.argv[1], "from\\040the\\040other\\040shell\n"]],
        ["type", ".help\r"], ["wait", "askdb> "], ["type", "\x04"]]))' "$h")
    run_pty "$steps" shell --llm-url "$URL" --model test shop.db
    expect_rc 0
    "$PY" - "$h" <<'PY' || fail "history file: $(head -2 "$h" | tr '\n' '|') ... $(tail -3 "$h" | tr '\n' '|') ($(wc -l <"$h") lines)"
import sys
lines = open(sys.argv[1]).read().split("\n")
want = ["_HiStOrY_V2_"] + ["q%d" % i for i in range(503, 1501)] + ["from\\040the\\040other\\040shell", ".help", ""]
sys.exit(lines != want)
PY
}

shell_prompts_on_the_terminal_when_the_rows_go_to_a_file() {
    # askdb shell DB >rows.csv: libedit, its stdout no terminal, showed no
    # prompt and edited nothing, and the banner, "(a new conversation)"
    # and .help's list went into the rows. The prompt, the line being
    # edited and what is said to the person go to stderr, the terminal;
    # stdout holds the rows.
    copy_db
    local steps
    start_llm "$(always "$(fence "SELECT 1")")"
    steps=$("$PY" -c 'import json; print(json.dumps([
        ["wait", "askdb> "], ["type", ".sql SELECT 7 AS seven\r"], ["wait", "askdb> "],
        ["type", ".new\r"], ["wait", r"\(a new conversation\)"], ["wait", "askdb> "],
        ["type", ".help\r"], ["wait", "Type a question about the database"], ["wait", "askdb> "],
        ["type", "dropped"], ["sleep", 0.3], ["type", "\x03"], ["wait", "askdb> "],
        ["type", "\x04"]]))')
    PTY_STDOUT="$T/rows" run_pty "$steps" shell --llm-url "$URL" --model test shop.db
    expect_rc 0
    expect_requests 0
    grep -qa "asking shop.db" "$T/out" || fail "no banner on the terminal: $(show_bytes "$T/out")"
    printf 'seven\n7\n' >"$T/rows.expected"
    cmp -s "$T/rows" "$T/rows.expected" || fail "stdout is not the rows alone: $(show_bytes "$T/rows")"
}

shell_keeps_what_is_typed_in_utf8() {
    # A UTF-8 terminal: what is typed at the prompt keeps its non-ASCII
    # characters, in a .sql, a question to the model and the history.
    copy_db
    local steps
    start_llm "$(replies "$(fence "SELECT count(*) AS n FROM customers WHERE last_name = 'Müller'")")"
    steps=$("$PY" -c 'import json; print(json.dumps([
        ["wait", "askdb> "], ["type", ".sql SELECT \u0027Müller\u0027 AS name\r"],
        ["wait", r"\| Müller \|"], ["wait", "askdb> "],
        ["type", "Wie viele Kunden heißen Müller?\r"], ["wait", r"\| +\d+ \|"],
        ["wait", "askdb> "], ["type", "\x04"]]))')
    LC_ALL=C.UTF-8 run_pty "$steps" shell --llm-url "$URL" --model test \
        --no-question-check shop.db
    expect_rc 0
    expect_requests 1
    pycheck 'assert user(0).endswith("Question: Wie viele Kunden heißen Müller?\n"), user(0)[-100:]'
    # (libedit writes a space as \040)
    grep -qF 'Kunden\040heißen\040Müller?' "$XDG_STATE_HOME/askdb/history" ||
        fail "history lacks the question: $(cat "$XDG_STATE_HOME/askdb/history")"
}

# --------------------------------------------------------------------------
# Runner# --------------------------------------------------------------------------
# Runner# --------------------------------------------------------------------------
# Runner
# --------------------------------------------------------------------------

TESTS=(
    repairs_unknown_column_on_second_attempt
    gives_up_after_max_attempts_listing_every_attempt
    refuses_writes_and_keeps_db_unchanged
    sqlite_parameters_are_a_syntax_error_to_repair
    missing_database_exits_3_and_creates_nothing
    wal_database_at_rest_gets_no_wal_files
    hot_journal_is_refused_with_what_to_do
    slow_query_is_interrupted
    retries_429_and_500_but_not_401
    model_timeout_exits_4
    output_formats_are_exact
    ask_json_has_the_whole_answer
    truncates_at_max_rows_with_a_notice
    huge_values_stop_at_max_bytes
    sql_first_row_over_max_bytes_says_so_as_ask_does
    dry_run_prints_sql_without_running
    dry_run_sql_goes_to_stdout_when_piped
    schema_command_prints_what_model_sees
    broken_view_does_not_block_the_database
    empty_result_gets_one_retry_then_stands
    trace_file_records_every_step
    trace_never_writes_a_database
    usage_errors_exit_2
    memory_that_cannot_be_used_is_said_by_every_command
    learned_pairs_reach_the_prompt_and_v_says_so
    malformed_llm_url_exits_2_before_any_work
    getopt_messages_name_the_command
    no_command_prints_usage_on_stderr_and_exits_2
    help_lists_every_command
    config_file_errors_name_a_line_only_when_there_is_one
    config_file_database_urls_are_not_paths
    config_file_database_names_are_checked
    config_flag_cut_short_is_the_file_only_where_getopt_takes_it
    every_help_lists_exactly_the_options_its_command_takes
    streaming_gives_the_same_rows
    garbled_stream_is_retried_or_fails_never_run
    json_reply_cut_short_is_retried_and_events_are_read
    base_url_query_stays_after_the_path
    anthropic_gets_no_blank_turn_when_an_empty_reply_is_repaired
    anthropic_provider_uses_messages_api
    shell_answers_questions_and_dot_commands
    shell_script_exits_with_its_last_lines_code
    shell_runs_sql_without_a_model
    shell_sql_may_be_followed_by_a_tab
    shell_without_a_model_answers_a_question_in_json
    shell_schema_in_json_is_the_schema_commands_document
    questions_are_utf8_of_at_most_8192_characters
    shell_sql_statements_go_over_lines
    shell_sql_line_ending_with_an_operator_goes_on
    extracts_sql_from_prose_and_bare_replies
    reply_without_sql_is_repaired_as_no_sql
    reply_cut_at_max_tokens_is_repaired_not_run
    reply_cut_before_any_text_says_to_raise_max_tokens
    finds_sql_after_quoted_prose_and_in_other_fences
    environment_configures_model_and_flags_override_it
    local_provider_with_a_model_name_says_why
    hugepages_other_than_0_or_1_is_ignored_with_a_warning
    provider_errors_say_where_the_name_came_from
    sql_command_reports_errors_with_exit_1
    sql_show_sql_prints_the_statement_and_refuses_ask_only_options
    sql_and_schema_refuse_every_option_of_ask_and_shell
    schema_refuses_max_rows_which_caps_none_of_its_reads
    schema_takes_only_the_limit_its_reads_have
    csv_records_end_in_a_line_feed_for_the_shell
    csv_keeps_every_byte_of_text_and_blobs
    failed_writes_to_stdout_exit_2
    json_output_stays_valid_for_any_value
    latin1_text_reaches_the_model_and_the_trace
    markdown_rule_has_three_dashes_in_every_column
    table_columns_line_up_with_wide_and_combining_characters
    table_cuts_long_values_and_says_so
    table_wider_than_the_terminal_is_shown_by_record
    table_measures_emoji_sequences_as_one_picture
    table_shows_null_apart_from_the_text_null
    terminal_never_gets_control_characters
    candidates_confidence_and_answer_in_every_format
    a_failed_candidate_request_costs_the_candidate_only
    a_failed_answer_in_words_is_said
    a_huge_bad_reply_is_sent_back_cut
    settled_candidate_is_not_needed
    sample_values_set_what_the_schema_shows
    greeting_is_answered_without_sql
    question_check_asking_the_model_shows_with_v
    shell_follows_up_until_new
    plan_rows_with_accents_reach_the_model
    plan_task_model_unreachable_is_reported_as_such
    ctrl_c_cancels_the_question
    ctrl_c_during_the_words_keeps_the_rows
    sql_ctrl_c_cancels_the_statement
    shell_ctrl_c_returns_to_the_prompt
    shell_keeps_what_is_typed_in_utf8
    shell_prompts_on_the_terminal_when_the_rows_go_to_a_file
    shell_history_keeps_the_last_1000_lines_of_every_shell
)

# The hardening tests (issue #13) live in a file of their own.
# shellcheck source=tests/e2e/hardening.sh
. "$HERE/hardening.sh"
TESTS+=("${HARDEN_TESTS[@]}")
# The statements' process (askdb-exec), likewise.
# shellcheck source=tests/e2e/isolation.sh
. "$HERE/isolation.sh"
TESTS+=("${ISOLATION_TESTS[@]}")

if [ "$LIST" = 1 ]; then
    printf '%s\n' "${TESTS[@]}"
    exit 0
fi

PASSED=0
FAILED=0
run_test() {
    local name=$1 rc
    T="$TMP/t/$name"
    W="$T/w"
    mkdir -p "$W"
    # In the background so that a signal to this script is handled at once
    # (bash runs traps only between foreground commands).
    (
        trap stop_llms EXIT
        trap 'exit 143' TERM
        cd "$W" || exit 1
        "$name"
    ) >>"$T/.trace" 2>&1 &
    TEST_PID=$!
    wait "$TEST_PID"
    rc=$?
    TEST_PID=
    if [ "$rc" -eq 0 ] && [ ! -s "$T/.fail" ]; then
        PASSED=$((PASSED + 1))
        echo "ok $name"
    else
        FAILED=$((FAILED + 1))
        if [ -s "$T/.fail" ]; then
            echo "FAIL $name: $(head -n1 "$T/.fail")"
        else
            echo "FAIL $name: test exited with status $rc"
        fi
        if [ -n "${E2E_VERBOSE:-}" ]; then
            tail -n 12 "$T/.trace" | sed 's/^/    /'
        fi
    fi
}

for t in "${TESTS[@]}"; do
    if [ -n "$FILTER" ] && ! printf '%s\n' "$t" | grep -qE -- "$FILTER"; then
        continue
    fi
    run_test "$t"
done

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
