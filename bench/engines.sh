#!/usr/bin/env bash
# bench/engines.sh - execution accuracy of the same questions on every
# engine: SQLite, PostgreSQL, MariaDB and DuckDB (issue #16).
#
#   bash bench/engines.sh [--per-db K] [--seed S] [--engines LIST] [--out DIR]
#                         [--resume] [-- EXTRA askdb eval OPTIONS]
#
# The questions are K of each database of the validation split
# (bench/validation_dbs.txt; 20 databases, so --per-db 15 gives 300), drawn
# with --seed (default 17). Each engine gets the same databases, copied
# from Spider's SQLite files by the loaders (scripts/load_postgres.py,
# load_mariadb.py, load_duckdb.py) into a private server started here in a
# temporary directory (stopped at the end) or a .duckdb file. askdb eval
# then asks each engine (--db-url), while the gold SQL runs on the SQLite
# file: one reference for every engine (docs/eval.md). Records and
# summaries land in --out (default bench/results/engines/), one
# <engine>.jsonl and <engine>.txt each, and a table on stdout. --resume
# goes on with the records already in --out (askdb eval --resume) instead
# of starting them again: a long run can be stopped and continued.
# The table's last column is the time per question outside the model
# (schema, validation, execution, comparison: what the engine costs).
#
# The model is askdb's default (the local model) unless EXTRA options say
# otherwise. SPIDER_DIR defaults to ../shared/bench/spider-train.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ASKDB=${ASKDB:-$ROOT/build/askdb}
SPIDER_DIR=${SPIDER_DIR:-$ROOT/../shared/bench/spider-train}
PER_DB=15
SEED=17
ENGINES="sqlite postgresql mariadb duckdb"
OUT=$ROOT/bench/results/engines
EXTRA=()
RESUME=
while [ $# -gt 0 ]; do
    case $1 in
    --per-db) PER_DB=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --engines) ENGINES=${2//,/ }; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --resume) RESUME=--resume; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "engines.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$ASKDB" ] || { echo "engines.sh: build askdb first (make)" >&2; exit 2; }
[ -f "$SPIDER_DIR/train.json" ] || { echo "engines.sh: no $SPIDER_DIR/train.json" >&2; exit 2; }
mkdir -p "$OUT"
DBS=$(grep -v '^#' "$ROOT/bench/validation_dbs.txt" | paste -sd,)
DBROOT=$SPIDER_DIR/database

TMP=$(mktemp -d "${TMPDIR:-/tmp}/askdb-engines.XXXXXX")
chmod 755 "$TMP"
PG_UP= MDB_UP=
cleanup() {
    [ -n "$PG_UP" ] && as_pg "$PGBIN/pg_ctl" -D "$TMP/pg/data" -m fast -w stop >/dev/null 2>&1
    [ -n "$MDB_UP" ] && mdb_stop >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

if [ "$(id -u)" -eq 0 ]; then
    as_pg() { runuser -u postgres -- "$@"; }
else
    as_pg() { "$@"; }
fi

start_postgres() {
    PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    [ -x "$PGBIN/initdb" ] || { echo "engines.sh: no PostgreSQL server (scripts/deps.sh)" >&2; exit 2; }
    mkdir -p "$TMP/pg/sock"
    [ "$(id -u)" -eq 0 ] && chown -R postgres "$TMP/pg"
    as_pg "$PGBIN/initdb" -D "$TMP/pg/data" -U postgres -A trust -E UTF8 \
        --locale=C --no-sync >"$TMP/pg/initdb.log" 2>&1
    PG_PORT=$(free_port)
    cat >>"$TMP/pg/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$TMP/pg/sock'
fsync = off
synchronous_commit = off
EOF
    as_pg "$PGBIN/pg_ctl" -D "$TMP/pg/data" -l "$TMP/pg/log" -w -t 60 start >/dev/null
    PG_UP=1
    psql -X -q -d "postgresql://postgres@127.0.0.1:$PG_PORT/postgres" \
        -c "CREATE ROLE askdb LOGIN" >/dev/null
}

start_mariadb() {
    # shellcheck source=../tests/e2e/mariadb_server.sh
    . "$ROOT/tests/e2e/mariadb_server.sh"
    mdb_start "$TMP/mdb"
    MDB_UP=1
    mdb_admin -e "CREATE USER askdb@'127.0.0.1'; CREATE USER askdb@localhost"
}

# load ENGINE DB_ID: the SQLite file of DB_ID into the engine.
load() {
    local f=$DBROOT/$2/$2.sqlite
    case $1 in
    postgresql)
        python3 "$ROOT/scripts/load_postgres.py" --quiet \
            --dsn "postgresql://postgres@127.0.0.1:$PG_PORT/postgres" \
            --sqlite "$f" --db "$2"
        psql -X -q -d "postgresql://postgres@127.0.0.1:$PG_PORT/$2" \
            -c "GRANT USAGE ON SCHEMA public TO askdb; GRANT SELECT ON ALL TABLES IN SCHEMA public TO askdb" >/dev/null ;;
    mariadb)
        python3 "$ROOT/scripts/load_mariadb.py" --socket "$MDB_SOCK" \
            --sqlite "$f" --db "$2" >/dev/null
        mdb_admin -e "GRANT SELECT ON \`$2\`.* TO askdb@'127.0.0.1'; GRANT SELECT ON \`$2\`.* TO askdb@localhost" ;;
    duckdb)
        mkdir -p "$TMP/duck"
        python3 "$ROOT/scripts/load_duckdb.py" --sqlite "$f" \
            --out "$TMP/duck/$2.duckdb" >/dev/null ;;
    esac
}

url_of() {
    case $1 in
    sqlite) echo "" ;;
    postgresql) echo "postgresql://askdb@127.0.0.1:$PG_PORT/{db_id}" ;;
    mariadb) echo "mariadb://askdb@127.0.0.1:$MDB_PORT/{db_id}" ;;
    duckdb) echo "$TMP/duck/{db_id}.duckdb" ;;
    esac
}

printf '| engine | EX | easy | medium | hard | extra | p50 | p90 | outside the model p50 / p90 |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
for e in $ENGINES; do
    case $e in
    postgresql) [ -n "$PG_UP" ] || start_postgres ;;
    mariadb) [ -n "$MDB_UP" ] || start_mariadb ;;
    sqlite|duckdb) ;;
    *) echo "engines.sh: unknown engine '$e'" >&2; exit 2 ;;
    esac
    if [ "$e" != sqlite ]; then
        for d in ${DBS//,/ }; do
            load "$e" "$d" || { echo "engines.sh: loading $d into $e failed" >&2; exit 1; }
        done
    fi
    url=$(url_of "$e")
    [ -n "$RESUME" ] || rm -f "$OUT/$e.jsonl"
    "$ASKDB" eval --suite "$SPIDER_DIR/train.json" --db-root "$DBROOT" \
        --db "$DBS" --per-db "$PER_DB" --seed "$SEED" \
        ${url:+--db-url "$url"} --out "$OUT/$e.jsonl" $RESUME -q "${EXTRA[@]}" \
        >"$OUT/$e.txt"
    python3 - "$e" "$OUT/$e.jsonl" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[2])]
recs = [r for r in recs if not r.get("bad")]
def ex(rs):
    return "%d/%d" % (sum(1 for r in rs if r["correct"]), len(rs))
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))] if v else 0
ms = [(r.get("ms") or {}).get("total", 0) / 1000 for r in recs]
rest = [(r.get("ms") or {}).get("total", 0) - (r.get("ms") or {}).get("model", 0)
        for r in recs]
ok = sum(1 for r in recs if r["correct"])
cols = [ex([r for r in recs if r.get("difficulty") == d])
        for d in ("easy", "medium", "hard", "extra")]
print("| %s | %.1f%% (%s) | %s | %.1f s | %.1f s | %.1f / %.1f ms |" % (
    sys.argv[1], 100.0 * ok / max(1, len(recs)), ex(recs), " | ".join(cols),
    pct(ms, 0.5), pct(ms, 0.9), pct(rest, 0.5), pct(rest, 0.9)))
EOF
done
