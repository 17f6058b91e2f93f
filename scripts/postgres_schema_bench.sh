#!/usr/bin/env bash
# postgres_schema_bench.sh - time askdb's schema reading on a PostgreSQL
# database of 2,000 tables in 3 schemas.
#
#   scripts/postgres_schema_bench.sh [RUNS]      (default 7)
#
# A private cluster in a temporary directory (as the `postgres` OS user
# when run as root), three databases of bench/gen_tables.c (667 tables of
# 20 rows each, 6-12 columns, foreign keys, unique indexes) loaded into
# schemas s1, s2 and s3 of one database by scripts/load_postgres.py, a
# SELECT-only role whose search_path is s1, s2, s3; then bench/
# schema_large.c times askdb_db_schema_text() (fresh handle each run):
# first with the tables never analysed (row counts and samples read from
# the tables), then analysed (row counts from the statistics), then
# without samples. The SQLite figure of the same generator is printed for
# comparison. Everything is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-7}
PKGS="sqlite3 libcurl jansson libxxhash libpq"
# The library links whatever other engines this build has.
pkg-config --exists libmariadb && PKGS="$PKGS libmariadb"
DUCKDB_PREFIX=$(scripts/duckdb.sh --print-prefix 2>/dev/null || true)
DUCKDB_LIBS=
[ -n "$DUCKDB_PREFIX" ] && DUCKDB_LIBS="-L$DUCKDB_PREFIX/lib -lduckdb -Wl,-rpath,$DUCKDB_PREFIX/lib"

make -s build/libaskdb.a
tmp=$(mktemp -d)
chmod 755 "$tmp"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -t/ -k5 -n | tail -1)
if [ "$(id -u)" -eq 0 ]; then as_srv() { runuser -u postgres -- "$@"; }; else as_srv() { "$@"; }; fi
stop() {
    [ -f "$tmp/data/postmaster.pid" ] && as_srv "$PGBIN/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null
    rm -rf "$tmp"
}
trap stop EXIT

LLAMA_LIBS=$(scripts/llama.sh --print-libs 2>/dev/null || true)
# shellcheck disable=SC2046,SC2086
cc -O2 -Iinclude $(pkg-config --cflags $PKGS) bench/schema_large.c \
    -o "$tmp/schema_large" build/libaskdb.a $(pkg-config --libs $PKGS) \
    -lstemmer -lm -lpthread $LLAMA_LIBS $DUCKDB_LIBS
# shellcheck disable=SC2046
cc -O2 bench/gen_tables.c -o "$tmp/gen_tables" $(pkg-config --cflags --libs sqlite3)

mkdir "$tmp/data" "$tmp/sock"
[ "$(id -u)" -eq 0 ] && chown postgres "$tmp/data" "$tmp/sock"
as_srv "$PGBIN/initdb" -D "$tmp/data" -U postgres -A trust --no-sync >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_srv "$PGBIN/pg_ctl" -D "$tmp/data" -l "$tmp/sock/log" -w start -o \
    "-p $port -k $tmp/sock -c listen_addresses=127.0.0.1 -c fsync=off -c autovacuum=off" >/dev/null
su="postgresql://postgres@127.0.0.1:$port"
for i in 1 2 3; do
    "$tmp/gen_tables" "$tmp/s$i.db" --tables 667 --seed $((100 + i)) >/dev/null
    replace=; [ "$i" = 1 ] && replace=--replace
    python3 scripts/load_postgres.py --dsn "$su/postgres" --sqlite "$tmp/s$i.db" \
        --db big --schema "s$i" --no-analyze --quiet $replace
done
psql -X -q -d "$su/big" -c "CREATE ROLE reader LOGIN;
    GRANT USAGE ON SCHEMA s1, s2, s3 TO reader;
    GRANT SELECT ON ALL TABLES IN SCHEMA s1, s2, s3 TO reader;
    ALTER ROLE reader SET search_path = s1, s2, s3"
url="postgresql://reader@127.0.0.1:$port/big"

echo "== never analysed (samples and counts read from the tables)"
"$tmp/schema_large" "$url" --runs "$RUNS"
psql -X -q -d "$su/big" -c "ANALYZE"
echo "== analysed"
"$tmp/schema_large" "$url" --runs "$RUNS"
echo "== analysed, --samples 0 (the catalog queries alone)"
"$tmp/schema_large" "$url" --runs "$RUNS" --samples 0
echo "== SQLite, the same generator, 2,000 tables in one file"
"$tmp/gen_tables" "$tmp/all.db" >/dev/null
"$tmp/schema_large" "$tmp/all.db" --runs "$RUNS"
