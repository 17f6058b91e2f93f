#!/usr/bin/env bash
# run.sh - build the libFuzzer harnesses and fuzz each one for a while.
#
#   tests/fuzz/run.sh [SECONDS]      (default 60; 0 = build and replay the
#                                     seed corpora only)
#
# Each harness tests/fuzz/fuzz_NAME.c is built with clang into
# build/fuzz/fuzz_NAME (libFuzzer + ASan + UBSan, any sanitizer report
# fatal), replays tests/fuzz/corpus/NAME/ (seeds and past reproducers),
# then fuzzes for SECONDS with inputs up to 4096 bytes. Harnesses run in
# parallel, up to FUZZ_JOBS at a time (default: the number of CPUs).
# New interesting inputs go to build/fuzz/corpus/NAME/, never to the
# checked-in seeds; crashes to build/fuzz/artifacts/NAME/. Logs are in
# build/fuzz/NAME.log. Exits 1 when any harness crashed, 2 when a build
# failed. CLANG selects the compiler (default clang); FUZZ_CFLAGS adds
# flags, e.g. -fno-sanitize=float-cast-overflow to fuzz past a known bug.
set -u
cd "$(dirname "$0")/../.."

SECS=${1:-60}
CLANG=${CLANG:-clang}
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
OUT=build/fuzz
FUZZ=tests/fuzz

case $SECS in
''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac
if ! command -v "$CLANG" >/dev/null 2>&1; then
    echo "$0: $CLANG not found (apt-get install clang)" >&2
    exit 2
fi

CFLAGS="-std=c11 -g -O1 -fno-omit-frame-pointer
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
    -Wall -Wextra -D_POSIX_C_SOURCE=200809L -DASKDB_BUILD -Iinclude -Isrc
    ${FUZZ_CFLAGS:-}"

# Library sources and pkg-config packages per harness.
NAMES="extract sse reply hint analyze plan guard request mcp wire suite"
LLM_SRC="src/llm/http.c src/llm/provider.c src/llm/openai.c
    src/llm/anthropic.c src/core/buf.c src/core/json.c src/core/text.c"
src_extract="src/sql/extract.c";   pkgs_extract="sqlite3 jansson"
src_sse=$LLM_SRC;                  pkgs_sse="jansson libcurl"
src_reply=$LLM_SRC;                pkgs_reply="jansson libcurl"
src_hint="src/agent/hint.c src/sql/extract.c src/db/schema.c
    src/core/buf.c src/core/text.c";               pkgs_hint="sqlite3 jansson"
src_analyze="src/sql/analyze.c src/sql/extract.c src/db/schema.c
    src/core/buf.c src/core/text.c";               pkgs_analyze="sqlite3 jansson"
src_plan="src/agent/plan.c";       pkgs_plan="jansson"
src_wire="src/db/wire.c src/db/driver.c src/core/buf.c src/core/clock.c src/core/outfile.c
    src/core/text.c"; pkgs_wire=""
src_request="src/server/request.c"; pkgs_request="jansson"
src_suite="src/eval/suite.c src/eval/hardness.c src/sql/extract.c
    src/core/buf.c src/core/json.c src/core/text.c"; pkgs_suite="sqlite3 jansson"
src_guard="src/db/db.c src/db/driver.c src/db/sqlite.c src/db/sqlite_fn.c src/db/schema.c src/db/watch.c
    src/db/postgres.c src/db/mariadb.c src/db/duckdb.c src/db/isolate.c src/db/wire.c
    src/core/buf.c src/core/clock.c src/core/text.c src/core/config.c src/core/outfile.c"; pkgs_guard="sqlite3"
# The MCP handler runs real tools: the library below it, built without
# llama.cpp (the harness's model is a stub).
src_mcp="$(ls src/core/*.c src/db/*.c src/llm/*.c src/sql/*.c src/agent/*.c)
    src/mcp/mcp.c src/mcp/tools.c src/mcp/resources.c src/mcp/server.c
    src/cli/warm.c $OUT/bank.c"
pkgs_mcp="sqlite3 libcurl jansson libxxhash"; libs_mcp="-lstemmer -lm"

mkdir -p "$OUT"
# The example bank the agent's sources read (the Makefile's build/gen/bank.c).
python3 scripts/c_string.py askdb_bank_tsv data/bank.tsv "$OUT/bank.c" || exit 2
for n in $NAMES; do
    eval "src=\$src_$n pkgs=\$pkgs_$n libs=\${libs_$n:-}"
    pc_cflags="" pc_libs=""
    if [ -n "$pkgs" ]; then
        pc_cflags=$(pkg-config --cflags $pkgs) &&
            pc_libs=$(pkg-config --libs $pkgs) || exit 2
    fi
    echo "== build $OUT/fuzz_$n"
    # shellcheck disable=SC2086
    if ! "$CLANG" $CFLAGS $pc_cflags -o "$OUT/fuzz_$n" "$FUZZ/fuzz_$n.c" \
            $src $pc_libs $libs -lpthread; then
        echo "$0: building fuzz_$n failed" >&2
        exit 2
    fi
done

# Fuzz one harness; its log says how it went.
run_one() {
    local n=$1 log=$OUT/$1.log dict=()
    mkdir -p "$OUT/corpus/$n" "$OUT/artifacts/$n"
    [ -f "$FUZZ/$n.dict" ] && dict=(-dict="$FUZZ/$n.dict")
    {
        # Replay the checked-in corpus first: past crashes stay fixed.
        "$OUT/fuzz_$n" -runs=0 "${dict[@]}" \
            -artifact_prefix="$OUT/artifacts/$n/" "$FUZZ/corpus/$n" &&
        if [ "$SECS" -gt 0 ]; then
            "$OUT/fuzz_$n" -max_len=4096 -max_total_time="$SECS" \
                -print_final_stats=1 "${dict[@]}" \
                -artifact_prefix="$OUT/artifacts/$n/" \
                "$OUT/corpus/$n" "$FUZZ/corpus/$n"
        fi
    } >"$log" 2>&1
    echo $? >"$OUT/$n.rc"
}

running=0
for n in $NAMES; do
    rm -f "$OUT/$n.rc"
    run_one "$n" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

status=0
for n in $NAMES; do
    log=$OUT/$n.log
    rc=$(cat "$OUT/$n.rc" 2>/dev/null || echo 1)
    # The last status line: "#N DONE cov: C ft: F corp: ... exec/s: E".
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" |
        grep -oE '[0-9]+$')
    eps=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" |
        grep -oE '[0-9]+$')
    cov=$(echo "$last" | grep -oE 'cov: [0-9]+' | grep -oE '[0-9]+')
    ft=$(echo "$last" | grep -oE 'ft: [0-9]+' | grep -oE '[0-9]+')
    corp=$(echo "$last" | grep -oE 'corp: [0-9]+' | grep -oE '[0-9]+')
    if [ "$rc" -eq 0 ]; then
        printf '%-8s ok     %s runs, %s exec/s, cov %s, ft %s, corpus %s\n' \
            "$n" "${runs:--}" "${eps:--}" "${cov:--}" "${ft:--}" \
            "${corp:--}"
    else
        status=1
        printf '%-8s CRASH  (exit %s) see %s\n' "$n" "$rc" "$log"
        grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|artifact_prefix|Test unit written)' \
            "$log" | head -n 5 | sed 's/^/         /'
    fi
done
exit $status
