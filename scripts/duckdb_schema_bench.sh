#!/usr/bin/env bash
# duckdb_schema_bench.sh - time askdb's schema reading on a DuckDB file of
# 2,000 tables.
#
#   scripts/duckdb_schema_bench.sh [--rev REV] [RUNS]      (default 7)
#
# bench/gen_tables.c makes the SQLite database of the large-schema
# benchmark (2,000 tables of 20 rows each, 6-12 columns, foreign keys,
# unique indexes), scripts/load_duckdb.py copies it into a .duckdb file
# (a few minutes, once: the file is kept in ${ASKDB_CACHE_DIR:-~/.cache/
# askdb}/bench/ and reused while the generator and the loader are
# unchanged), then bench/schema_large.c times askdb_db_schema_text()
# (fresh handle each run): with samples, then without (the first rows of
# each table are still read, for the exact count of a small one), then
# --read (what a question reads: the samples the read has no time for
# wait until a prompt shows their tables). The SQLite figure of the same database is printed for
# comparison. --rev REV times the library of another commit instead (built
# in a temporary git worktree), for a before/after figure on one machine.
# Needs DuckDB fetched (scripts/duckdb.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
REV=
if [ "${1:-}" = --rev ]; then REV=${2:?--rev needs a commit}; shift 2; fi
RUNS=${1:-7}
PKGS="sqlite3 libcurl jansson libxxhash"
pkg-config --exists libpq && PKGS="$PKGS libpq"
pkg-config --exists libmariadb && PKGS="$PKGS libmariadb"

prefix=$(scripts/duckdb.sh --print-prefix 2>/dev/null) || {
    echo "duckdb_schema_bench.sh: DuckDB is not fetched (run scripts/duckdb.sh)" >&2
    exit 2
}
tmp=$(mktemp -d)
cleanup() {
    [ -d "$tmp/rev" ] && git worktree remove --force "$tmp/rev"
    rm -rf "$tmp"
}
trap cleanup EXIT
lib=build/libaskdb.a
inc=include
if [ -n "$REV" ]; then
    git worktree add -q --detach "$tmp/rev" "$REV"
    make -s -C "$tmp/rev" -j2 build/libaskdb.a
    lib=$tmp/rev/build/libaskdb.a
    inc=$tmp/rev/include
    echo "== the library of $(git rev-parse --short "$REV")"
else
    make -s -j2 build/libaskdb.a
fi

LLAMA_LIBS=$(scripts/llama.sh --print-libs 2>/dev/null || true)
# shellcheck disable=SC2046,SC2086
cc -O2 -I"$inc" -I"${inc%include}src" $(pkg-config --cflags $PKGS) bench/schema_large.c \
    -o "$tmp/schema_large" "$lib" $(pkg-config --libs $PKGS) \
    -lstemmer -lm -lpthread $LLAMA_LIBS -L"$prefix/lib" -lduckdb \
    -Wl,-rpath,"$prefix/lib"
# shellcheck disable=SC2046
cc -O2 bench/gen_tables.c -o "$tmp/gen_tables" $(pkg-config --cflags --libs sqlite3)

# The DuckDB file is slow to load and depends only on the generator and
# the loader: keep it, named by their checksum.
cache=${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askdb}/bench
key=$(cat bench/gen_tables.c scripts/load_duckdb.py | sha256sum | cut -c1-16)
duck=$cache/tables2000-$key.duckdb
"$tmp/gen_tables" "$tmp/all.db" >/dev/null
if [ ! -f "$duck" ]; then
    mkdir -p "$cache"
    echo "== loading 2,000 tables into $duck (once)"
    rm -f "$duck.part"
    scripts/load_duckdb.py --sqlite "$tmp/all.db" --out "$duck.part" 2>"$tmp/load.log" || {
        tail -5 "$tmp/load.log" >&2
        exit 1
    }
    mv "$duck.part" "$duck"
fi

echo "== DuckDB, 2,000 tables in one file"
"$tmp/schema_large" "$duck" --runs "$RUNS"
echo "== DuckDB, --samples 0"
"$tmp/schema_large" "$duck" --runs "$RUNS" --samples 0
echo "== DuckDB, --read: what a question reads (samples within the budget)"
"$tmp/schema_large" "$duck" --runs "$RUNS" --read
echo "== SQLite, the same generator, 2,000 tables in one file"
"$tmp/schema_large" "$tmp/all.db" --runs "$RUNS"
echo "== SQLite, --read"
"$tmp/schema_large" "$tmp/all.db" --runs "$RUNS" --read
