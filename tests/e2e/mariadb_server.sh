# tests/e2e/mariadb_server.sh - a private MariaDB server for the tests
# (sourced by tests/e2e/mariadb.sh; usable by hand:
#   . tests/e2e/mariadb_server.sh; mdb_start DIR; ...; mdb_stop).
#
# mdb_start DIR [ARG...]: mariadb-install-db into DIR/data, then mariadbd
# (with the ARGs, e.g. --ssl-cert=FILE) on a free loopback port with its socket at DIR/sock, as the `mysql` OS user when
# run as root (servers refuse root), else as the current user. Sets
# MDB_PORT, MDB_SOCK, MDB_DIR, MDB_PID. Root is reachable without password
# on the socket only (mdb_admin). secure_file_priv is DIR/files, so a file
# written by the server can only land there.

mdb_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

mdb_admin() { mariadb --no-defaults --default-character-set=utf8mb4 --socket="$MDB_SOCK" -uroot "$@"; }

mdb_start() {
    MDB_DIR=$1
    shift
    local runas=() i
    mkdir -p "$MDB_DIR/data" "$MDB_DIR/files"
    if [ "$(id -u)" = 0 ]; then
        id mysql >/dev/null 2>&1 || { echo "mdb_start: no 'mysql' user to run the server as" >&2; return 1; }
        chown -R mysql: "$MDB_DIR"
        chmod 755 "$MDB_DIR"
        runas=(runuser -u mysql --)
    fi
    MDB_PORT=$(mdb_free_port)
    MDB_SOCK=$MDB_DIR/sock
    "${runas[@]}" mariadb-install-db --no-defaults --datadir="$MDB_DIR/data" \
        --auth-root-authentication-method=normal --skip-test-db \
        --lower-case-table-names=1 >"$MDB_DIR/install.log" 2>&1 ||
        { echo "mdb_start: mariadb-install-db failed:" >&2; tail -5 "$MDB_DIR/install.log" >&2; return 1; }
    # Thousands of tables need file descriptors: the soft limit goes up to
    # the hard one (mariadbd alone may not raise it).
    "${runas[@]}" sh -c 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"' mariadbd --no-defaults --datadir="$MDB_DIR/data" \
        --socket="$MDB_SOCK" --port="$MDB_PORT" --bind-address=127.0.0.1 \
        --pid-file="$MDB_DIR/mariadbd.pid" --log-error="$MDB_DIR/error.log" \
        --secure-file-priv="$MDB_DIR/files" --lower-case-table-names=1 \
        --innodb-buffer-pool-size=32M --innodb-log-file-size=16M \
        --skip-log-bin --skip-name-resolve --max-connections=60 \
        --open-files-limit=20000 --table-open-cache=4000 \
        --table-definition-cache=4000 --performance-schema=OFF "$@" \
        >"$MDB_DIR/stdout.log" 2>&1 &
    MDB_PID=$!
    for i in $(seq 1 300); do
        if mdb_admin -e 'SELECT 1' >/dev/null 2>&1; then
            return 0
        fi
        kill -0 "$MDB_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "mdb_start: the server did not start:" >&2
    tail -8 "$MDB_DIR/error.log" >&2
    return 1
}

# mdb_stop: stop the server (SIGTERM to mariadbd itself, whose pid file
# says which process it is: runuser stays in between), then SIGKILL after
# 20 s.
mdb_stop() {
    local i spid=
    [ -n "${MDB_PID:-}" ] || return 0
    [ -s "$MDB_DIR/mariadbd.pid" ] && spid=$(cat "$MDB_DIR/mariadbd.pid")
    [ -n "$spid" ] && kill "$spid" 2>/dev/null
    kill "$MDB_PID" 2>/dev/null
    for i in $(seq 1 200); do
        kill -0 "$MDB_PID" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$spid" ] && kill -9 "$spid" 2>/dev/null
    kill -9 "$MDB_PID" 2>/dev/null
    wait "$MDB_PID" 2>/dev/null
    MDB_PID=
}
