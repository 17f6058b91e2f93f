# tests/e2e/isolation.sh - the statements' process, askdb-exec (src/db/
# isolate.c): killed at the deadline, on Ctrl-C and on a malformed reply,
# never left behind, and giving the same rows and errors as askdb's own
# process. Sourced by run.sh, whose helpers they use; ISOLATION_TESTS
# lists them in run order.

# bomb_sql: one row that runs hundreds of operators on 16 MB values, none
# of them a function askdb could replace (docs/security.md, promise 3).
bomb_sql() {
    printf "WITH t(s) AS (SELECT printf('%%.*c',16000000,'x')) SELECT %s FROM t" \
        "$("$PY" -c "print(','.join(['s=s'] * 1900))")"
}

# helpers_of PID: the askdb-exec processes whose parent is PID.
helpers_of() {
    local p
    for p in $(pgrep -P "$1" 2>/dev/null); do
        case $(readlink "/proc/$p/exe" 2>/dev/null) in
        */askdb-exec) echo "$p" ;;
        esac
    done
}

# zombies_of PID: children of PID that died and were not reaped.
zombies_of() { ps -o pid=,stat= --ppid "$1" 2>/dev/null | awk '$2 ~ /^Z/'; }

time_bombs_inside_one_row_end_within_twice_the_limit() {
    # The statements that ran 4 to 10 s with --timeout 1000 before the
    # statement had a process of its own: killed at the deadline, reported
    # as the time limit, nothing written. (Bounds are generous: the
    # sanitizer build starts its helper slowly.)
    copy_db
    local before q
    before=$(snapshot)
    run sql --timeout 1000 shop.db "$(bomb_sql)"
    expect_rc 1
    expect_faster 3000
    expect_err_has "query interrupted after the 1000 ms time limit (--timeout)"
    q="WITH t(s) AS (SELECT printf('%.*c',8000000,'x')) SELECT $("$PY" -c "print(','.join(['length(s||s)'] * 300))") FROM t"
    run sql --timeout 1000 shop.db "$q"
    expect_rc 1
    expect_faster 3000
    expect_err_has "query interrupted after the 1000 ms time limit (--timeout)"
    # As the model's reply too: each attempt ends at the limit.
    start_llm "$(always "$(fence "$(bomb_sql)")")"
    run ask --llm-url "$URL" --model test --no-question-check --max-attempts 2 \
        --timeout 1000 shop.db "Compare"
    expect_rc 1
    expect_faster 6000
    expect_err_has "1000 ms time limit"
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
}

helper_killed_at_the_deadline_leaves_no_process_and_no_file() {
    # In a long session (the shell): the helper killed at the deadline is
    # reaped at once (no zombie), the next statement starts a new one,
    # and closing the session leaves none.
    copy_db
    local before pid h1 h2 _
    before=$(snapshot)
    mkfifo "$T/in"
    (cd "$W" && exec "$ASKDB" shell --llm-url http://127.0.0.1:9 --model test \
        --timeout 1000 shop.db) <"$T/in" >"$T/out" 2>"$T/err" &
    pid=$!
    exec 3>"$T/in"
    printf '.sql SELECT 41 AS x\n' >&3
    for _ in $(seq 1 100); do grep -q 41 "$T/out" && break; sleep 0.05; done
    h1=$(helpers_of "$pid")
    [ -n "$h1" ] || { exec 3>&-; wait "$pid"; fail "no askdb-exec under the shell: $(cat "$T/err")"; }
    printf '.sql %s\n' "$(bomb_sql)" >&3
    for _ in $(seq 1 100); do grep -q "time limit" "$T/err" && break; sleep 0.05; done
    grep -q "time limit" "$T/err" || { exec 3>&-; wait "$pid"; fail "the bomb did not stop: $(cat "$T/err")"; }
    [ -z "$(zombies_of "$pid")" ] || { exec 3>&-; wait "$pid"; fail "a zombie is left: $(zombies_of "$pid")"; }
    [ -z "$(helpers_of "$pid")" ] || { exec 3>&-; wait "$pid"; fail "the killed helper still runs"; }
    kill -0 "$h1" 2>/dev/null && { exec 3>&-; wait "$pid"; fail "helper $h1 still exists"; }
    printf '.sql SELECT 42 AS x\n' >&3
    for _ in $(seq 1 100); do grep -q 42 "$T/out" && break; sleep 0.05; done
    h2=$(helpers_of "$pid")
    [ -n "$h2" ] && [ "$h2" != "$h1" ] || { exec 3>&-; wait "$pid"; fail "no new helper for the next statement ($h1, $h2)"; }
    exec 3>&-
    wait "$pid"
    RC=$?
    expect_rc 0
    kill -0 "$h2" 2>/dev/null && fail "helper $h2 outlived the shell"
    grep -q '^41' "$T/out" && grep -q '^42' "$T/out" || fail "rows missing: $(cat "$T/out")"
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
}

# wait_gone PID: true once PID has ended (within 2 s).
wait_gone() {
    local _
    for _ in $(seq 1 40); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
    return 1
}

ctrl_c_kills_the_statements_process() {
    # Ctrl-C during a statement no interrupt reaches. askdb ask cancels
    # the question: it kills its helper and exits 130 at once. askdb sql
    # just dies of it: its helper sees the socket close and ends too.
    copy_db
    local pid h t0 _
    start_llm "$(always "$(fence "$(bomb_sql)")")"
    (cd "$W" && exec env --default-signal=INT "$ASKDB" ask --llm-url "$URL" \
        --model test --no-question-check --timeout 30000 shop.db "Compare") \
        >"$T/out" 2>"$T/err" &
    pid=$!
    h=
    for _ in $(seq 1 200); do h=$(helpers_of "$pid"); [ -n "$h" ] && break; sleep 0.05; done
    [ -n "$h" ] || { kill "$pid"; wait "$pid"; fail "no askdb-exec under askdb ask"; }
    sleep 0.5
    t0=$(now_us)
    kill -INT "$pid"
    wait "$pid"
    RC=$?
    ELAPSED_MS=$((($(now_us) - t0) / 1000))
    expect_rc 130
    [ "$ELAPSED_MS" -lt 1000 ] || fail "ask ended $ELAPSED_MS ms after Ctrl-C"
    expect_err_has "cancelled"
    wait_gone "$h" || fail "helper $h outlived askdb ask"
    (cd "$W" && exec env --default-signal=INT "$ASKDB" sql --timeout 30000 \
        shop.db "$(bomb_sql)") >"$T/out" 2>"$T/err" &
    pid=$!
    h=
    for _ in $(seq 1 200); do h=$(helpers_of "$pid"); [ -n "$h" ] && break; sleep 0.05; done
    [ -n "$h" ] || { kill "$pid"; wait "$pid"; fail "no askdb-exec under askdb sql"; }
    sleep 0.5
    kill -INT "$pid"
    wait "$pid"
    RC=$?
    expect_rc 130
    wait_gone "$h" || fail "helper $h outlived askdb sql"
    [ ! -s "$T/out" ] || fail "rows after Ctrl-C: $(head -c 200 "$T/out")"
}

same_rows_and_errors_in_process_and_in_the_helper() {
    # Values of every type, caps with their notices, and the engine's
    # errors with their classes: byte for byte the same either way.
    copy_db
    local q m
    for q in "SELECT 9223372036854775807 AS big, -9223372036854775808 AS small, 0.1 AS d, 1e308 AS e, NULL AS n, x'00ff10' AS b, 'a' || char(0) || 'b' AS t, 'h' || char(233) AS u" \
             "SELECT * FROM customers ORDER BY 1" \
             "SELECT nosuch FROM customers" \
             "SELECT * FROM nosuch" \
             "SELEC 1" \
             "DELETE FROM customers" \
             "SELECT 1; SELECT 2" \
             "SELECT zeroblob(100000000)" \
             "PRAGMA table_info(customers)"; do
        for m in --in-process ""; do
            run sql $m -f json --max-rows 5 --max-bytes 2000 shop.db "$q"
            sed 's/"exec_ms": [0-9.e+-]*/"exec_ms": 0/' "$T/out" >"$T/got$m"
            echo "$RC" >>"$T/got$m"
            cat "$T/err" >>"$T/got$m"
        done
        cmp -s "$T/got" "$T/got--in-process" ||
            fail "differs for $q: $(diff "$T/got--in-process" "$T/got" | head -4)"
    done
    # The repair loop sees the same class and hint: an unknown column is
    # repaired on the second attempt.
    start_llm "$(replies "$(fence "SELECT nme FROM customers LIMIT 1")" "$(fence "SELECT count(*) AS n FROM customers")")"
    run ask --llm-url "$URL" --model test --no-question-check -f json shop.db "How many?"
    expect_rc 0
    pycheck '
j = json.loads(out)
assert [a["error"] for a in j["attempts"]] == ["unknown_column", "none"], j["attempts"]
assert "no such column: nme" in j["attempts"][0]["message"], j["attempts"]
assert "no such column: nme" in user(1), user(1)
'
}

without_the_helper_statements_run_in_process_and_say_so() {
    # No askdb-exec beside the program nor installed: the statement still
    # runs, in askdb's own process, and -v says so once, with why.
    copy_db
    mkdir -p "$T/bin"
    cp "$ASKDB" "$T/bin/askdb"
    "$T/bin/askdb" sql -v -f csv "$W/shop.db" "SELECT count(*) AS n FROM customers" >"$T/out" 2>"$T/err"
    RC=$?
    expect_rc 0
    expect_out 'n\n60\n'
    expect_err_has "warning: askdb-exec was found neither beside this program nor in "
    expect_err_has "the statements on '$W/shop.db' run inside this process"
    [ "$(grep -c "warning: askdb-exec" "$T/err")" = 1 ] || fail "warned more than once"
    # A helper named on purpose and mistyped is an error, not a silent
    # fall-back that leaves the time limit to an interrupt.
    ASKDB_EXEC_HELPER=/nonexistent/askdb-exec run sql -f csv shop.db "SELECT count(*) AS n FROM customers"
    expect_rc 3
    expect_err_has "cannot open 'shop.db' for statements: ASKDB_EXEC_HELPER='/nonexistent/askdb-exec' is not an executable file"
    ASKDB_EXEC_HELPER=/nonexistent/askdb-exec run sql --in-process -f csv shop.db "SELECT count(*) AS n FROM customers"
    expect_rc 0
    run sql -v -f csv shop.db "SELECT count(*) AS n FROM customers"
    expect_rc 0
    expect_err_has "statements run in "
    expect_err_has "/askdb-exec, killed after the time limit"
    # and with --in-process -v says that too, as 'askdb help sql' has it
    # ("where the statements run (the askdb-exec helper or this process)").
    run sql -v --in-process -f csv shop.db "SELECT count(*) AS n FROM customers"
    expect_rc 0
    expect_err_lacks "askdb-exec"
    expect_err_has "statements on 'shop.db' run in this process (--in-process)"
}

a_helper_that_crashes_or_lies_is_a_clear_error() {
    # The helper's reply is untrusted: a crash is an error that says so,
    # and a malformed reply kills it; never rows, never a hang.
    copy_db
    printf '#!/bin/sh\nkill -SEGV $$\n' >"$T/crash"
    printf '#!/bin/sh\necho $$ >"%s"\nhead -c 5 >/dev/null\nprintf "Kxxxxxxxx"\nexec sleep 30\n' "$T/liar.pid" >"$T/liar"
    chmod +x "$T/crash" "$T/liar"
    ASKDB_EXEC_HELPER="$T/crash" run sql shop.db "SELECT 1"
    expect_rc 1
    expect_err_has "the statement's process ($T/crash) ended before it answered: it was killed by SIGSEGV"
    ASKDB_EXEC_HELPER="$T/liar" run sql shop.db "SELECT 1"
    expect_rc 1
    expect_faster 3000
    expect_err_has "the statement's process ($T/liar) sent a malformed reply (a frame over the size cap); it was stopped"
    kill -0 "$(cat "$T/liar.pid")" 2>/dev/null && fail "the lying helper was left running"
    [ ! -s "$T/out" ] || fail "rows from a broken helper: $(cat "$T/out")"
}

helper_opens_the_file_a_process_relative_path_names() {
    # /dev/stdin and /dev/fd/N name this process's file, which askdb-exec
    # (with other descriptors) would not see: it gets the path resolved.
    # A pipe is no file and is refused before anything runs.
    copy_db
    local before
    before=$(snapshot)
    STDIN="$W/shop.db" run sql -f csv /dev/stdin "SELECT count(*) AS n FROM orders"
    expect_rc 0
    expect_out 'n\n250\n'
    (cd "$W" && exec "$ASKDB" sql -f csv /dev/fd/3 "SELECT count(*) AS n FROM customers") \
        3<"$W/shop.db" >"$T/out" 2>"$T/err"
    RC=$?
    expect_rc 0
    expect_out 'n\n60\n'
    start_llm "$(always "$(fence "SELECT count(*) AS n FROM orders")")"
    STDIN="$W/shop.db" run ask -f csv --llm-url "$URL" --model test --no-question-check \
        /dev/stdin "How many orders?"
    expect_rc 0
    expect_requests 1
    expect_out 'n\n250\n'
    (cd "$W" && cat shop.db | exec "$ASKDB" sql /dev/stdin "SELECT 1") >"$T/out" 2>"$T/err"
    RC=$?
    expect_rc 3
    expect_err_has "cannot open database '/dev/stdin': not a regular file"
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
}

a_writers_lock_at_the_helpers_start_is_the_databases_failure() {
    # A writer takes its lock after the handle opened and before its first
    # statement, which starts the helper: the helper's open waits for it
    # as a statement does, and then the question ends there, as in
    # askdb's process (the database failed, class "database": a repair
    # cannot help), instead of the model being asked to repair SQL that
    # was never wrong.
    copy_db
    local m before _
    before=$(snapshot)
    start_llm "$(always "$(fence "SELECT count(*) AS n FROM customers")")"
    for m in --in-process ""; do
        rm -f "$T/in" "$T/locked" "$T/unlock"
        mkfifo "$T/in"
        # shellcheck disable=SC2086
        (cd "$W" && exec "$ASKDB" shell $m --llm-url "$URL" --model test \
            --timeout 500 -f json shop.db) <"$T/in" >"$T/out" 2>"$T/err" &
        local pid=$!
        exec 3>"$T/in"
        printf '.schema\n' >&3
        for _ in $(seq 1 200); do grep -q "CREATE TABLE" "$T/out" && break; sleep 0.05; done
        grep -q "CREATE TABLE" "$T/out" || { exec 3>&-; wait "$pid"; fail "$m: the shell did not open: $(cat "$T/err")"; }
        "$PY" - "$W/shop.db" "$T/locked" "$T/unlock" <<'PY' &
import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
for _ in range(400):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.05)
c.execute("ROLLBACK")
PY
        local locker=$!
        for _ in $(seq 1 100); do [ -e "$T/locked" ] && break; sleep 0.05; done
        [ -e "$T/locked" ] || { exec 3>&-; wait "$pid"; fail "no writer's lock"; }
        : >"$LLMLOG"
        printf 'How many customers?\n' >&3
        for _ in $(seq 1 200); do grep -q "locked" "$T/err" && break; sleep 0.05; done
        : >"$T/unlock"
        wait "$locker"
        exec 3>&-
        wait "$pid"
        [ "$(nreq)" = 1 ] || fail "$m: $(nreq) model calls for a locked database: $(cat "$T/err")"
        expect_err_has "is locked: another program is writing to it"
        expect_err_lacks "attempt 2"
    done
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
}

# A file gone between the handle's open and its first statement, which
# starts the helper: the message names it as it was given (shop.db), as in
# askdb's process, not by the resolved path the helper opens.
a_file_gone_at_the_helpers_start_is_named_as_given() {
    copy_db
    rm -f "$T/in"
    mkfifo "$T/in"
    (cd "$W" && exec "$ASKDB" shell --llm-url http://127.0.0.1:9 --model x \
        shop.db) <"$T/in" >"$T/out" 2>"$T/err" &
    local pid=$! _
    exec 3>"$T/in"
    printf '.schema\n' >&3
    for _ in $(seq 1 200); do grep -q "CREATE TABLE" "$T/out" && break; sleep 0.05; done
    mv "$W/shop.db" "$W/shop.moved"
    printf '.sql SELECT 1;\n' >&3
    exec 3>&-
    wait "$pid"
    mv "$W/shop.moved" "$W/shop.db"
    expect_err_has "cannot open database 'shop.db': No such file or directory"
    expect_err_lacks "$W/shop.db"
}

statement_over_the_helpers_request_cap_is_said_the_same_both_ways() {
    # A statement longer than askdb-exec reads (16 MiB, the shell's .sql or
    # the API can give one) is refused with what is wrong, in askdb's
    # process and in the helper alike; the helper read a frame over its
    # cap as a broken request and exited, which was told as "ended before
    # it answered ... (out of memory, or a crash)".
    copy_db
    local m
    "$PY" -c "print('.sql SELECT ' + '1,' * 8400000 + '1;'); print('.sql SELECT 42 AS x;')" >"$T/big.in"
    for m in --in-process ""; do
        # shellcheck disable=SC2086
        (cd "$W" && exec "$ASKDB" shell $m --llm-url http://127.0.0.1:9 \
            --model test shop.db) <"$T/big.in" >"$T/out" 2>"$T/err"
        expect_err_has "the statement is 16800009 bytes, more than the 16777212 bytes askdb takes for one statement"
        expect_err_lacks "ended before it answered"
        grep -q '^42' "$T/out" || fail "$m: no rows after it: $(cat "$T/out")"
    done
}

ISOLATION_TESTS=(
    time_bombs_inside_one_row_end_within_twice_the_limit
    helper_killed_at_the_deadline_leaves_no_process_and_no_file
    ctrl_c_kills_the_statements_process
    same_rows_and_errors_in_process_and_in_the_helper
    without_the_helper_statements_run_in_process_and_say_so
    a_helper_that_crashes_or_lies_is_a_clear_error
    helper_opens_the_file_a_process_relative_path_names
    a_writers_lock_at_the_helpers_start_is_the_databases_failure
    statement_over_the_helpers_request_cap_is_said_the_same_both_ways
    a_file_gone_at_the_helpers_start_is_named_as_given
)
