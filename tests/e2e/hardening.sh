# tests/e2e/hardening.sh - regression tests for the faults an attacker's
# run found around the read-only guard (issue #13). Sourced by run.sh,
# whose helpers they use; HARDEN_TESTS lists them in run order.

trace_refuses_a_databases_companion_names() {
    # A database's -journal, -wal and -shm names are refused as output
    # files whether or not the file exists, also through a link (even a
    # dangling one) and for the memory store: nothing appears beside it.
    copy_db
    ln -s shop.db "$W/link.db"
    ln -s shop.db-journal "$W/dangling.log"
    local before f
    before=$(snapshot)
    start_llm "$(always "$(fence "SELECT 1 AS x")")"
    for f in shop.db-journal shop.db-wal shop.db-shm link.db-wal \
             "$W/shop.db-journal" ./dangling.log; do
        run ask --llm-url "$URL" --model test --trace "$f" shop.db "One?"
        expect_rc 2
        expect_err_has "cannot open trace file '$f': it is the name of an SQLite database's"
    done
    run learn shop.db --memory shop.db-journal --question "Q?" --sql "SELECT 1"
    expect_rc 2
    expect_err_has "it is the name of an SQLite database's rollback journal"
    expect_requests 0
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
    # A DuckDB database (its header: a checksum, then "DUCK") and its
    # .wal name are refused the same way.
    printf '\0\0\0\0\0\0\0\0DUCK\100\0\0\0\0\0\0\0' >"$W/w.duckdb"
    before=$(snapshot)
    run ask --llm-url "$URL" --model test --trace w.duckdb shop.db "One?"
    expect_rc 2
    expect_err_has "cannot open trace file 'w.duckdb': it is a DuckDB database"
    run ask --llm-url "$URL" --model test --trace w.duckdb.wal shop.db "One?"
    expect_rc 2
    expect_err_has "cannot open trace file 'w.duckdb.wal': it is the name of a DuckDB database's write-ahead log"
    [ "$before" = "$(snapshot)" ] || fail "files changed beside the DuckDB file"
    # A -wal name with no database beside it is just a file name.
    run ask --llm-url "$URL" --model test --no-question-check --trace x.db-wal shop.db "One?"
    expect_rc 0
    [ -s "$W/x.db-wal" ] || fail "the trace x.db-wal was not written"
}

trace_on_a_full_disk_is_an_error() {
    # A trace that cannot be written is not lost in silence.
    copy_db
    [ -w /dev/full ] || return 0
    start_llm "$(always "$(fence "SELECT 1 AS x")")"
    run ask --llm-url "$URL" --model test --no-question-check --trace /dev/full shop.db "One?"
    expect_rc 2
    expect_err_has "cannot write trace file '/dev/full': No space left on device (the trace is incomplete)"
}

retry_after_stays_within_llm_timeout_and_is_told() {
    # A server asking for an hour is not waited for: the waits of one
    # request stay within --llm-timeout, and -v tells each wait and why.
    copy_db
    start_llm '[{"status": 429, "headers": {"Retry-After": "3600"}, "repeat": true}]'
    run ask --llm-url "$URL" --model test --no-question-check --llm-timeout 2000 --retries 3 shop.db "One?"
    expect_rc 4
    expect_faster 1500
    expect_requests 1
    expect_err_has "(429 Too Many Requests): fake_llm status 429 (its Retry-After asked for a wait of 3600 s, more than --llm-timeout 2000 allows: try again later, or raise --llm-timeout to 3600000 or more)"
    expect_err_lacks "--retries"
    start_llm "$(python3 -c 'import json; print(json.dumps([{"status": 503, "headers": {"Retry-After": "1"}}, {"content": "```sql\nSELECT 1 AS x\n```", "repeat": True}]))')"
    run ask -v --llm-url "$URL" --model test --no-question-check --llm-timeout 5000 shop.db "One?"
    expect_rc 0
    expect_err_has "waiting 1000 ms before retry 1 of"
    expect_err_has "the server answered 503 and asked to wait (Retry-After)"
}

# FILE holds no C0 (but CR, LF, TAB), DEL, C1 control (as a raw byte or
# in UTF-8) and is valid UTF-8.
expect_terminal_safe() {
    "$PY" - "$1" <<'PY' || fail "unsafe bytes reached a terminal: $(show_bytes "$1")"
import re, sys
b = open(sys.argv[1], "rb").read()
b.decode("utf-8")
sys.exit(1 if re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]", b) else 0)
PY
}

eight_bit_controls_never_reach_a_terminal() {
    # A lone 0x9D ... 0x9C is an 8-bit OSC sequence; as text it is not
    # UTF-8 either. On a terminal it becomes U+FFFD in every format, and
    # JSON escapes U+009B. Tables keep their columns aligned.
    copy_db
    local sql="SELECT CAST(x'9d303b70776e65649c' AS TEXT) AS a, 'x'||char(155)||'y' AS b"
    local f
    for f in table csv markdown json; do
        run_tty sql -f "$f" shop.db "$sql"
        expect_rc 0
        expect_terminal_safe "$T/out"
    done
    expect_out_has '\u009b'
    run_tty sql -f table shop.db "$sql"
    expect_out_has "| $(printf '\357\277\2750;pwned\357\277\275') | x y |"
    expect_out_has "+-----------+-----+"
    # An error that echoes a server body.
    start_llm "$("$PY" -c 'import json; print(json.dumps([{"status": 400, "body": {"error": {"message": "bad \u009d0;pwned\u009c \u009b31m"}}}]))')"
    run_tty ask --llm-url "$URL" --model test --no-question-check shop.db "One?"
    expect_rc 4
    expect_terminal_safe "$T/err"
    expect_err_has "bad  0;pwned   31m"
    # Not a terminal: the error text is cleaned all the same.
    run ask --llm-url "$URL" --model test --no-question-check shop.db "One?"
    expect_terminal_safe "$T/err"
}

one_guard_gives_one_answer_both_ways() {
    # A statement that starts with a comment is a statement, not an
    # option; pragma_table_info() gets the same answer from sql and ask;
    # dbstat and sqlite_stmt are refused as such; a refusal says
    # "refused" once; ~~~ fences and {"sql": ...} replies are understood.
    copy_db
    run sql -f csv shop.db "$(printf -- '-- the first customer\nSELECT id FROM customers ORDER BY id LIMIT 1')"
    expect_rc 0
    expect_out 'id\n1\n'
    run sql -f csv shop.db "$(printf -- '--x\nSELECT 2 AS two')" --timeout 2000
    expect_rc 0
    expect_out 'two\n2\n'
    local q="SELECT name FROM pragma_table_info('customers') ORDER BY cid LIMIT 1"
    run sql -f csv shop.db "$q"
    expect_rc 0
    expect_out 'name\nid\n'
    start_llm "$(always "$(fence "$q")")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv shop.db "First column?"
    expect_rc 0
    expect_out 'name\nid\n'
    local vt
    for vt in dbstat sqlite_stmt; do
        run sql shop.db "SELECT * FROM $vt"
        expect_rc 1
        expect_err_has "refused: the virtual table '$vt' is not available"
        start_llm "$(always "$(fence "SELECT * FROM $vt")")"
        run ask --llm-url "$URL" --model test --no-question-check --max-attempts 1 shop.db "Stats?"
        expect_rc 1
        expect_err_has "attempt 1: refused: the virtual table '$vt' is not available"
    done
    start_llm "$(always "$(fence "DELETE FROM orders")")"
    run ask --llm-url "$URL" --model test --no-question-check --max-attempts 1 shop.db "Clean up?"
    expect_rc 1
    expect_err_has "attempt 1: refused: the statement must be a query"
    expect_err_lacks "refused: refused"
    start_llm "$(replies '~~~sql
SELECT 42 AS x
~~~')"
    run ask --llm-url "$URL" --model test --no-question-check -f csv shop.db "Answer?"
    expect_rc 0
    expect_out 'x\n42\n'
    start_llm "$(replies '{"sql": "SELECT 43 AS x"}')"
    run ask --llm-url "$URL" --model test --no-question-check -f csv shop.db "Answer?"
    expect_rc 0
    expect_out 'x\n43\n'
}

wal_log_without_shm_leaves_no_file_behind() {
    # A WAL database with a -wal (frames in it) and no -shm: reading the
    # log would create a -shm that stays. askdb refuses and says what to
    # do; with an empty -wal it reads the file as it is. Never a new file.
    "$PY" - "$W" <<'PY' || fail "cannot build the fixture"
import os, shutil, sqlite3, sys
w = sys.argv[1]
c = sqlite3.connect(os.path.join(w, "live.db"))
c.execute("PRAGMA journal_mode = WAL")
c.execute("PRAGMA wal_autocheckpoint = 0")
c.executescript("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a'), ('b');")
# Copies taken while the log holds the rows: no -shm beside them.
shutil.copy(os.path.join(w, "live.db"), os.path.join(w, "log.db"))
shutil.copy(os.path.join(w, "live.db-wal"), os.path.join(w, "log.db-wal"))
c.close()
shutil.copy(os.path.join(w, "live.db"), os.path.join(w, "empty.db"))
open(os.path.join(w, "empty.db-wal"), "wb").close()
os.remove(os.path.join(w, "live.db"))
PY
    [ ! -e "$W/log.db-shm" ] || fail "the fixture has a -shm"
    local before
    before=$(snapshot)
    run sql -f csv log.db "SELECT count(*) AS n FROM t"
    expect_rc 3
    expect_err_has "it has a write-ahead log ('log.db-wal') but no '-shm' file, which reading it would create and leave behind"
    expect_err_has "PRAGMA wal_checkpoint(TRUNCATE)"
    run sql -f csv empty.db "SELECT count(*) AS n FROM t"
    expect_rc 0
    expect_out 'n\n2\n'
    [ "$before" = "$(snapshot)" ] || fail "files changed: $(diff <(echo "$before") <(snapshot) | head -4)"
}

time_limit_holds_inside_function_calls() {
    # printf() builds a huge width or precision before SQLite's length
    # limit applies, and a row can call it again and again with no loop
    # step between: refused at once, and every statement ends within
    # about twice --timeout. Ordinary calls still give SQLite's answers.
    copy_db
    local q
    for q in "SELECT coalesce(printf('%.*c',2147483647,'x'),printf('%.*c',2147483647,'x'),printf('%.*c',2147483647,'x'))" \
             "SELECT length(printf('%.*c',1000000000,'x'))" \
             "SELECT length(printf('%2147483647d',1))" \
             "SELECT length(format('%.*f',2000000000,1.0))"; do
        run sql --timeout 1000 shop.db "$q"
        expect_rc 1
        expect_faster 1500
        expect_err_has "larger than 16777216 bytes"
    done
    # (A long --timeout: building the arguments takes a while under ASan.)
    run sql --timeout 8000 shop.db "SELECT instr(printf('%.*c',16000000,'x'), printf('%.*c',8000000,'x')||'y')"
    expect_rc 1
    expect_faster 8000
    expect_err_has "instr(): arguments too long to compare within the time limit"
    q="SELECT $("$PY" -c "print('+'.join(['length(printf(\'%.*c\',16000000,\'x\'))'] * 300))")"
    run sql --timeout 1000 shop.db "$q"
    expect_rc 1
    expect_faster 2500
    expect_err_has "query interrupted after the 1000 ms time limit"
    run sql -f csv shop.db "SELECT printf('%5.2f|%-4d|%s|%%', 3.14159, 7, 'ab') AS p, instr('hello','ll') AS i, replace('aXbX','X','-') AS r, trim('  a  ') AS t, 'abc' LIKE 'A%' AS l, 'a_c' LIKE 'a!_c' ESCAPE '!' AS e, upper(substr('hello',2,3)) AS u"
    expect_rc 0
    expect_out 'p,i,r,t,l,e,u\n 3.14|7   |ab|%%,3,a-b-,a,1,1,ELL\n'
}

# script EXPR: a JSON script from a Python expression; R is $REPLY.
script() { REPLY_TEXT=${REPLY_TEXT:-} "$PY" -c 'import json,os,sys; R = os.environ.get("REPLY_TEXT", ""); print(json.dumps(eval(sys.argv[1])))' "$1"; }

model_faults_are_errors_never_answers() {
    # The scripted model's fault modes (tests/fake_llm): every cut,
    # stalled, oversize, reset or garbled reply ends in an error or a
    # retry, never in rows from half an answer.
    copy_db
    local REPLY_TEXT
    REPLY_TEXT=$(fence "SELECT count(*) AS n FROM customers WHERE country = 'DE'")
    export REPLY_TEXT
    # The issue's cut: no length, no chunks, closed mid-SQL, no [DONE].
    start_llm "$(script "[{'content': R, 'cut': 700, 'framing': 'close', 'repeat': True}]")"
    run ask --stream --llm-url "$URL" --model test --no-question-check -f csv shop.db "How many German customers?"
    expect_rc 4
    [ ! -s "$T/out" ] || fail "a cut stream gave rows: $(head -c 200 "$T/out")"
    expect_err_has "ended its streamed reply without the end marker"
    # The same cut in chunked encoding.
    start_llm "$(script "[{'content': R, 'cut': 700, 'framing': 'chunked', 'repeat': True}]")"
    run ask --stream --llm-url "$URL" --model test --no-question-check -f csv shop.db "How many German customers?"
    expect_rc 4
    [ ! -s "$T/out" ] || fail "a cut chunked stream gave rows"
    # Cut before its first event, a stream is retried like a dropped
    # connection (nothing of it was shown yet).
    start_llm "$(script "[{'content': R, 'cut': 10, 'framing': 'close'}, {'content': R, 'repeat': True}]")"
    run ask --stream --llm-url "$URL" --model test --no-question-check -f csv shop.db "How many German customers?"
    expect_rc 0
    expect_out 'n\n10\n'
    expect_requests 2
    # A body shorter than its Content-Length is retried, as is a reset.
    start_llm "$(script "[{'content': R, 'cut': 40}, {'close': True}, {'content': R, 'repeat': True}]")"
    run ask --llm-url "$URL" --model test --no-question-check -f csv shop.db "How many German customers?"
    expect_rc 0
    expect_out 'n\n10\n'
    expect_requests 3
    # One byte a second: the request's time limit holds.
    start_llm "$(script "[{'content': R, 'drip_ms': 1000, 'repeat': True}]")"
    run ask --llm-url "$URL" --model test --no-question-check --llm-timeout 1500 --retries 0 shop.db "How many?"
    expect_rc 4
    expect_faster 4000
    expect_err_has "did not finish its reply within 1500 ms (it was still sending it"
    # A reply over the size cap.
    start_llm "$(script "[{'content': 'x' * 1024, 'content_repeat': 9000, 'repeat': True}]")"
    run ask --llm-url "$URL" --model test --no-question-check shop.db "How many?"
    expect_rc 4
    expect_err_has "is larger than 8 MiB"
    # A date far ahead in Retry-After is not waited for either.
    start_llm "$(script "[{'status': 503, 'headers': {'Retry-After': 'Wed, 21 Oct 2099 07:28:00 GMT'}, 'repeat': True}]")"
    run ask --llm-url "$URL" --model test --no-question-check --llm-timeout 3000 shop.db "How many?"
    expect_rc 4
    expect_faster 2000
    expect_err_has "more than --llm-timeout 3000 allows"
    # Raw control bytes and invalid UTF-8 in an error body.
    start_llm "$(script "[{'status': 500, 'body_hex': '1b5d303b70776e6564079d303b70776e65649cff41', 'repeat': True}]")"
    run_tty ask --llm-url "$URL" --model test --no-question-check --retries 0 shop.db "How many?"
    expect_rc 4
    expect_terminal_safe "$T/err"
    expect_err_has "pwned"
}

HARDEN_TESTS=(
    trace_refuses_a_databases_companion_names
    trace_on_a_full_disk_is_an_error
    retry_after_stays_within_llm_timeout_and_is_told
    eight_bit_controls_never_reach_a_terminal
    one_guard_gives_one_answer_both_ways
    wal_log_without_shm_leaves_no_file_behind
    time_limit_holds_inside_function_calls
    model_faults_are_errors_never_answers
)
