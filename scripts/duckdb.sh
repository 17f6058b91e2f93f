#!/usr/bin/env bash
# scripts/duckdb.sh - fetch the pinned DuckDB C library and its header into the
# user cache (never into the work tree), for the DuckDB driver (src/db/duckdb.c).
#
#   scripts/duckdb.sh                 download (if needed), verify, install; prints
#                                     the install prefix on stdout at the end
#   scripts/duckdb.sh --print-prefix  print the install prefix if installed, else exit 1
#   scripts/duckdb.sh --help
#
# DuckDB publishes no Debian package. Its official C library, libduckdb.so,
# ships in the npm package @duckdb/node-bindings-linux-x64 (the Node bindings
# load it at run time); its header duckdb.h ships in the matching source
# release, the PyPI sdist duckdb (external/duckdb/src/include/duckdb.h). Both
# are pinned below by version and sha256; any mismatch is fatal. The header
# must match the library: DUCKDB_API_VERSION in duckdb.h is checked against
# the version pinned here.
#
# Layout (CACHE = ${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askdb}):
#   $CACHE/dl/npm/<tarball>              the npm tarball (npm pack)
#   $CACHE/dl/pypi/<sdist>               the PyPI source release
#   $CACHE/duckdb-<version>/include/duckdb.h
#   $CACHE/duckdb-<version>/lib/libduckdb.so
#   $CACHE/duckdb-<version>/LICENSE
#   $CACHE/duckdb-<version>/.askdb-installed   stamp: "already installed, skip"
#
# Network: `npm pack` (the npm registry) and PyPI's simple index plus one
# file download, and only for what is not cached yet.
set -euo pipefail

die() { echo "duckdb.sh: error: $*" >&2; exit 1; }
log() { echo "duckdb.sh: $*" >&2; }

VERSION=1.5.6
NPM_PACKAGE=@duckdb/node-bindings-linux-x64
NPM_VERSION=1.5.6-r.1
NPM_TARBALL=duckdb-node-bindings-linux-x64-1.5.6-r.1.tgz
NPM_SHA256=1b9f82478539bb9a1d1df44bd103121a12ae52142c07158dc52b97d2ec1d69ff
SDIST=duckdb-1.5.6.tar.gz
SDIST_SHA256=166a91dbfacfc0c9f08cc76c0243cb6d3d4296bfab5bad72a3cfb63140a5b7c8
SDIST_HEADER=duckdb-1.5.6/external/duckdb/src/include/duckdb.h
SDIST_LICENSE=duckdb-1.5.6/external/duckdb/LICENSE

CACHE=${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?is not set (set ASKDB_CACHE_DIR or XDG_CACHE_HOME)}/.cache}/askdb}
PREFIX="$CACHE/duckdb-$VERSION"
STAMP="$PREFIX/.askdb-installed"
STAMP_TEXT="npm=$NPM_PACKAGE@$NPM_VERSION sha256=$NPM_SHA256 sdist=$SDIST sha256=$SDIST_SHA256"

is_installed() {
    [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_TEXT" ] &&
        [ -f "$PREFIX/include/duckdb.h" ] && [ -f "$PREFIX/lib/libduckdb.so" ]
}

case "${1:-}" in
    --print-prefix)
        if is_installed; then echo "$PREFIX"; exit 0; fi
        echo "duckdb.sh: DuckDB $VERSION is not fetched yet (run scripts/duckdb.sh)" >&2
        exit 1 ;;
    -h|--help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) die "unknown argument: $1 (try --help)" ;;
esac

if is_installed; then
    log "DuckDB $VERSION already installed in $PREFIX"
    echo "$PREFIX"
    exit 0
fi

for t in tar sha256sum python3; do
    command -v "$t" >/dev/null 2>&1 || die "'$t' is required but not installed"
done

mkdir -p "$CACHE/dl/npm" "$CACHE/dl/pypi" "$PREFIX"
# One installer at a time (parallel make, two terminals).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$PREFIX/.lock"
    flock 9
    if is_installed; then echo "$PREFIX"; exit 0; fi
fi

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# verified FILE SHA256: the file exists and has that checksum; a cached file
# that does not is removed, so that it is downloaded again.
verified() {
    [ -f "$1" ] || return 1
    [ "$(sha_of "$1")" = "$2" ] && return 0
    log "cached $1 does not match its pinned checksum; downloading it again"
    rm -f "$1"
    return 1
}

# --- 1. the npm tarball (libduckdb.so) --------------------------------------
TGZ="$CACHE/dl/npm/$NPM_TARBALL"
if ! verified "$TGZ" "$NPM_SHA256"; then
    command -v npm >/dev/null 2>&1 || die "'npm' is required to download $NPM_PACKAGE@$NPM_VERSION"
    log "downloading $NPM_PACKAGE@$NPM_VERSION from the npm registry"
    tmpd=$(mktemp -d "$CACHE/dl/npm/.pack.XXXXXX")
    ( cd "$tmpd" && npm pack --ignore-scripts --silent "$NPM_PACKAGE@$NPM_VERSION" >/dev/null ) ||
        { rm -rf "$tmpd"; die "npm pack $NPM_PACKAGE@$NPM_VERSION failed"; }
    [ -f "$tmpd/$NPM_TARBALL" ] || { ls -la "$tmpd" >&2; rm -rf "$tmpd"; die "npm pack did not produce $NPM_TARBALL"; }
    mv "$tmpd/$NPM_TARBALL" "$TGZ"
    rmdir "$tmpd"
fi
got=$(sha_of "$TGZ")
[ "$got" = "$NPM_SHA256" ] || die "checksum mismatch for $TGZ: got $got, pinned $NPM_SHA256"
log "verified $TGZ"

# --- 2. the PyPI sdist (duckdb.h) --------------------------------------------
# The sdist's address comes from PyPI's simple index (JSON form); pip
# download of an sdist would build its metadata, which needs a compiler
# toolchain and minutes, for a file we only unpack.
SD="$CACHE/dl/pypi/$SDIST"
if ! verified "$SD" "$SDIST_SHA256"; then
    command -v curl >/dev/null 2>&1 || die "'curl' is required to download $SDIST"
    log "downloading $SDIST from PyPI"
    index=${ASKDB_PYPI_SIMPLE:-https://pypi.org/simple}
    url=$(curl -fsSL -H 'Accept: application/vnd.pypi.simple.v1+json' "$index/duckdb/" |
        python3 -c 'import json, sys
for f in json.load(sys.stdin)["files"]:
    if f["filename"] == sys.argv[1]:
        print(f["url"])
        break' "$SDIST") || die "cannot read PyPI's index of duckdb ($index/duckdb/)"
    [ -n "$url" ] || die "PyPI's index of duckdb has no $SDIST"
    curl -fsSL -o "$SD.part" "$url" || { rm -f "$SD.part"; die "download of $url failed"; }
    mv "$SD.part" "$SD"
fi
got=$(sha_of "$SD")
[ "$got" = "$SDIST_SHA256" ] || die "checksum mismatch for $SD: got $got, pinned $SDIST_SHA256"
log "verified $SD"

# --- 3. install ---------------------------------------------------------------
work=$(mktemp -d "$PREFIX/.extract.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xzf "$TGZ" -C "$work" package/libduckdb.so || die "$TGZ has no package/libduckdb.so"
tar -xzf "$SD" -C "$work" "$SDIST_HEADER" "$SDIST_LICENSE" || die "$SD has no $SDIST_HEADER"
hv=$(sed -n 's/^#define DUCKDB_API_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
    "$work/$SDIST_HEADER" | paste -sd.)
[ "$hv" = "$VERSION" ] || die "duckdb.h says version '$hv', pinned $VERSION"
rm -rf "$PREFIX/include" "$PREFIX/lib"
mkdir -p "$PREFIX/include" "$PREFIX/lib"
install -m 644 "$work/$SDIST_HEADER" "$PREFIX/include/duckdb.h"
install -m 755 "$work/package/libduckdb.so" "$PREFIX/lib/libduckdb.so"
install -m 644 "$work/$SDIST_LICENSE" "$PREFIX/LICENSE"
printf '%s\n' "$STAMP_TEXT" >"$STAMP"
log "installed DuckDB $VERSION in $PREFIX"
echo "$PREFIX"
