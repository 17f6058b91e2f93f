#!/usr/bin/env bash
# scripts/web_vendor.sh - fetch the web page's npm libraries, verify, extract.
#
#   scripts/web_vendor.sh [OUTDIR]      (default build/web/vendor)
#
# Reads src/server/web/vendor.lock. Each package's tarball is fetched once
# with `npm pack NAME@VERSION` into $CACHE/npm and its sha256 checked
# against the lock; then each listed file is taken out of it, its sha256
# checked, and written to OUTDIR/ASSET-NAME. With every tarball in the
# cache, no network is used. Any mismatch is fatal and leaves no unverified file
# behind. Writes OUTDIR/.stamp last, so that make sees a complete set.
#
# CACHE = ${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askdb}
# Needs: bash, tar, sha256sum, and npm only when a tarball is missing.
set -euo pipefail

die() { echo "web_vendor.sh: error: $*" >&2; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCK="$ROOT/src/server/web/vendor.lock"
OUT=${1:-$ROOT/build/web/vendor}
CACHE=${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?is not set}/.cache}/askdb}
DL="$CACHE/npm"

[ -f "$LOCK" ] || die "lock file not found: $LOCK"
sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# npm pack names a tarball "@scope/name" as scope-name-VERSION.tgz.
tgz_name() { local n=${1#@}; echo "${n//\//-}-$2.tgz"; }

declare -A P_VER=() P_SHA=()
FILES=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    line=${line%%#*}
    read -r -a f <<<"$line" || true
    [ ${#f[@]} -gt 0 ] || continue
    case ${f[0]} in
    package)
        [ ${#f[@]} -eq 5 ] || die "$LOCK:$lineno: 'package' needs 4 fields"
        P_VER[${f[1]}]=${f[2]}; P_SHA[${f[1]}]=${f[3]} ;;
    file)
        [ ${#f[@]} -eq 5 ] || die "$LOCK:$lineno: 'file' needs 4 fields"
        [ -n "${P_VER[${f[1]}]:-}" ] || die "$LOCK:$lineno: file of undeclared package ${f[1]}"
        case ${f[3]} in */*|.*) die "$LOCK:$lineno: bad asset name ${f[3]}" ;; esac
        FILES+=("${f[1]}|${f[2]}|${f[3]}|${f[4]}") ;;
    *) die "$LOCK:$lineno: unknown record '${f[0]}'" ;;
    esac
done <"$LOCK"

mkdir -p "$DL" "$OUT"
rm -f "$OUT/.stamp"

for p in "${!P_VER[@]}"; do
    tgz="$DL/$(tgz_name "$p" "${P_VER[$p]}")"
    if [ ! -f "$tgz" ] || [ "$(sha_of "$tgz")" != "${P_SHA[$p]}" ]; then
        command -v npm >/dev/null || die "npm is needed to fetch $p@${P_VER[$p]} (scripts/deps.sh)"
        rm -f "$tgz"
        echo "web_vendor.sh: npm pack $p@${P_VER[$p]}" >&2
        (cd "$DL" && npm pack --silent "$p@${P_VER[$p]}" >/dev/null) ||
            die "npm pack $p@${P_VER[$p]} failed"
        [ -f "$tgz" ] || die "npm pack did not write $tgz"
        got=$(sha_of "$tgz")
        if [ "$got" != "${P_SHA[$p]}" ]; then
            rm -f "$tgz"
            die "$p@${P_VER[$p]}: tarball sha256 $got, lock says ${P_SHA[$p]}"
        fi
    fi
done

for e in "${FILES[@]}"; do
    IFS='|' read -r p member name sha <<<"$e"
    tgz="$DL/$(tgz_name "$p" "${P_VER[$p]}")"
    tmp="$OUT/.$name.tmp"
    tar -xzf "$tgz" -O "$member" >"$tmp" || { rm -f "$tmp"; die "$member not in $tgz"; }
    got=$(sha_of "$tmp")
    if [ "$got" != "$sha" ]; then
        rm -f "$tmp"
        die "$p $member: sha256 $got, lock says $sha"
    fi
    mv -f "$tmp" "$OUT/$name"
done
touch "$OUT/.stamp"
