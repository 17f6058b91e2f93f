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

HARDEN_TESTS=(
    trace_refuses_a_databases_companion_names
    trace_on_a_full_disk_is_an_error
)
