#!/usr/bin/env bash
# bench/run.sh - build and run askdb's benchmarks, then print the figures in
# a form ready to paste into the README.
#
#   bash bench/run.sh [overhead options, e.g. --limit 500 --dbs 20]
#
# Environment: SPIDER (default ../shared/bench/spider-train relative to the
# repository), ROUNDS (overhead rounds, best per question; default 3), RUNS
# (schema runs; default 7), TABLES (default 2000), CC (default gcc),
# OUT (where binaries and JSON go; default build/bench).
#
# 1. overhead: every question of SPIDER/train.json answered by askdb with a
#    zero-latency scripted model (askdb_config.llm_fn returns the gold SQL);
#    per-question time askdb adds, split by step; peak RSS.
# 2. schema_large: askdb_db_schema_text() on a generated TABLES-table
#    database (made in a temporary directory, removed at the end).
# Both binaries are linked with --no-as-needed so that every library the
# askdb command loads (libcurl and its TLS stack among them) counts in the
# peak RSS, as it would in the command.
set -euo pipefail
cd "$(dirname "$0")/.."

CC=${CC:-gcc}
SPIDER=${SPIDER:-../shared/bench/spider-train}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-7}
TABLES=${TABLES:-2000}
OUT=${OUT:-build/bench}
PKGS="sqlite3 libcurl jansson libedit libxxhash"
CFLAGS="-std=c11 -O2 -g -Wall -Wextra -Wshadow -Wpedantic"

if [ ! -f "$SPIDER/train.json" ]; then
    echo "run.sh: $SPIDER/train.json not found (set SPIDER)" >&2
    exit 2
fi

t_start=$(date +%s.%N)
echo "== build"
make -s build/libaskdb.a
# The library has llama.cpp in it when scripts/llama.sh has built it (the
# Makefile's LLAMA=auto); its link flags then go on every link line.
LLAMA_LIBS=$(scripts/llama.sh --print-libs 2>/dev/null || true)
mkdir -p "$OUT"
# shellcheck disable=SC2046,SC2086
$CC $CFLAGS -Iinclude -Isrc $(pkg-config --cflags $PKGS) bench/overhead.c \
    -o "$OUT/overhead" build/libaskdb.a \
    -Wl,--no-as-needed $(pkg-config --libs $PKGS) -lstemmer -lm -lpthread \
    $LLAMA_LIBS
# shellcheck disable=SC2046,SC2086
$CC $CFLAGS -Iinclude $(pkg-config --cflags $PKGS) bench/schema_large.c \
    -o "$OUT/schema_large" build/libaskdb.a \
    -Wl,--no-as-needed $(pkg-config --libs $PKGS) -lstemmer -lm -lpthread \
    $LLAMA_LIBS
# shellcheck disable=SC2046,SC2086
$CC $CFLAGS bench/gen_tables.c -o "$OUT/gen_tables" \
    $(pkg-config --cflags --libs sqlite3)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
machine="$(nproc) CPUs, ${cpu:-unknown CPU}, $(uname -sr),"
machine+=" SQLite $(pkg-config --modversion sqlite3),"
machine+=" $CC $($CC -dumpversion) -O2"

echo "== generate a $TABLES-table database"
"$OUT/gen_tables" "$tmp/tables.db" --tables "$TABLES"
ls -l "$tmp/tables.db" | awk '{printf "%s: %.1f MB\n", $NF, $5/1048576}'

# The Spider files are read once so that the first run does not measure the
# disk: the benchmark is about askdb, not about cold page caches.
cat "$SPIDER"/database/*/*.sqlite > /dev/null

load_before=$(cut -d' ' -f1-3 /proc/loadavg)

echo "== schema of $TABLES tables ($RUNS runs)"
"$OUT/schema_large" "$tmp/tables.db" --runs "$RUNS" \
    --json "$OUT/schema_large.json" --md > "$tmp/schema.txt"
sed '/^| /,$d' "$tmp/schema.txt"

echo "== overhead per question ($ROUNDS rounds)"
rc=0
"$OUT/overhead" --spider "$SPIDER" --rounds "$ROUNDS" \
    --json "$OUT/overhead.json" --md "$@" > "$tmp/overhead.txt" || rc=$?
sed '/^| /,$d' "$tmp/overhead.txt"

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
t_end=$(date +%s.%N)

echo "== for the README"
echo
echo "Machine: $machine;"
echo "load average $load_before before, $load_after after."
secs=$(awk -v a="$t_start" -v b="$t_end" 'BEGIN{printf "%.0f", b-a}')
echo "Command: \`bash bench/run.sh\` (ROUNDS=$ROUNDS, RUNS=$RUNS);" \
     "run time $secs s."
echo
sed -n '/^| /,$p' "$tmp/overhead.txt"
echo
sed -n '/^| /,$p' "$tmp/schema.txt"
echo
echo "JSON: $OUT/overhead.json, $OUT/schema_large.json"
if [ "$rc" -ne 0 ]; then
    echo "run.sh: some gold queries failed (see above)" >&2
    exit "$rc"
fi
