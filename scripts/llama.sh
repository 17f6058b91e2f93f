#!/usr/bin/env bash
# scripts/llama.sh — fetch the pinned llama.cpp release and build it once, as
# static libraries, into the user cache (never into the work tree).
#
#   scripts/llama.sh                 download (if needed), verify, build, install;
#                                    prints the install prefix on stdout at the end
#   scripts/llama.sh --print-prefix  print the install prefix if already built, else exit 1
#   scripts/llama.sh --print-libs    print the link flags (absolute paths) if built, else exit 1
#   scripts/llama.sh --help
#
# Pins: models/llama.lock (npm package + version + sha256 of the tarball, sha256 of
# the git bundle inside it, llama.cpp release tag and commit). Any mismatch is fatal.
#
# Layout (CACHE = ${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askdb}):
#   $CACHE/dl/npm/<tarball>                 downloaded npm tarball (npm pack)
#   $CACHE/llama.cpp-<tag>/src              llama.cpp source (cloned from the bundle)
#   $CACHE/llama.cpp-<tag>/build            CMake build tree
#   $CACHE/llama.cpp-<tag>/install          include/llama.h, include/ggml*.h, lib/*.a
#   $CACHE/llama.cpp-<tag>/install/.askdb-built   stamp: "already built, skip"
#
# Network: only `npm pack` (the npm registry), and only when the tarball is not cached.
#
# Build choices: static libs, Release, no curl/openssl/common/tools/tests/examples/server.
# GGML_NATIVE=OFF: ggml then enables SSE4.2+AVX+AVX2+BMI2+FMA+F16C (x86-64-v3).
# On a CPU whose /proc/cpuinfo reports avx512f, avx512bw, avx512vl, avx512dq and
# avx512cd, AVX-512 is turned on too, with those of its extensions it reports (VNNI,
# VBMI, BF16; AVX-VNNI): prompt evaluation is about 1.3 times as fast then
# (bench/batch_rows.c, 87 against 66 tokens/s on 2 cores). ASKDB_LLAMA_ISA=base keeps
# x86-64-v3 (for a cache shared with older CPUs); ASKDB_LLAMA_ISA=auto (the default)
# or avx512 choose by the CPU. The library then runs only on such a CPU: the cache is
# the machine's own. The instruction sets are part of the stamp, so switching
# rebuilds. AMX stays off by default: it makes the prompt faster and a decode step
# slower (models/README.md), and g++ 12 at -O3 builds ggml's AMX kernels so that
# they die (SIGILL) in the first tile product. ASKDB_LLAMA_ISA=amx adds AMX (tile, int8, bf16) to the AVX-512 set
# where the CPU reports amx_tile and amx_int8, to measure it (use its own
# ASKDB_CACHE_DIR). ASKDB_LLAMA_NATIVE=1 builds with GGML_NATIVE=ON (-march=native,
# AMX included) instead.
# OpenMP is on (ggml default; faster thread sync) -> link with -fopenmp.
#
# Linking a C program against the install (static; order matters):
#   cc -std=c11 -I$PREFIX/include prog.c \
#      $PREFIX/lib/libllama.a $PREFIX/lib/libggml.a $PREFIX/lib/libggml-cpu.a \
#      $PREFIX/lib/libggml-base.a -lstdc++ -lm -lpthread -fopenmp
#   (i.e. LDLIBS = `scripts/llama.sh --print-libs`; libggml-cpu.a needs libgomp via -fopenmp;
#    -lstdc++ because llama/ggml are C++; link with the C compiler is fine.)
# In a Makefile:
#   LLAMA_PREFIX := $(shell scripts/llama.sh --print-prefix)
#   LLAMA_LIBS   := $(shell scripts/llama.sh --print-libs)
set -euo pipefail

die() { echo "llama.sh: error: $*" >&2; exit 1; }
log() { echo "llama.sh: $*" >&2; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
LOCK="$ROOT/models/llama.lock"
CACHE=${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?is not set (set ASKDB_CACHE_DIR or XDG_CACHE_HOME)}/.cache}/askdb}
JOBS=${ASKDB_JOBS:-2}

[ -f "$LOCK" ] || die "lock file not found: $LOCK"

# --- read the lock (KEY=VALUE, no shell evaluation) -------------------------
declare -A L=()
while IFS= read -r line || [ -n "$line" ]; do
    line=${line%%#*}
    line=${line//[[:space:]]/}
    [ -n "$line" ] || continue
    case $line in *=*) ;; *) die "bad line in $LOCK: $line" ;; esac
    L[${line%%=*}]=${line#*=}
done < "$LOCK"
for k in package version tarball sha256 bundle_path bundle_sha256 release_tag commit; do
    [ -n "${L[$k]:-}" ] || die "$LOCK: missing key '$k'"
done

TAG=${L[release_tag]}
BASE="$CACHE/llama.cpp-$TAG"
SRC="$BASE/src"
BUILD="$BASE/build"
PREFIX="$BASE/install"
STAMP="$PREFIX/.askdb-built"
DL="$CACHE/dl/npm"
LIBS_ORDER="libllama.a libggml.a libggml-cpu.a libggml-base.a"
SYS_LIBS="-lstdc++ -lm -lpthread -fopenmp"

NATIVE=OFF
[ "${ASKDB_LLAMA_NATIVE:-0}" = 1 ] && NATIVE=ON

# isa_flags: the GGML_* switches for the AVX-512 family this CPU reports (none with
# ASKDB_LLAMA_ISA=base, on another architecture or with GGML_NATIVE=ON).
case ${ASKDB_LLAMA_ISA:-auto} in
    auto|avx512|amx|base) ;;
    *) die "ASKDB_LLAMA_ISA must be auto, avx512, amx or base, not '$ASKDB_LLAMA_ISA'" ;;
esac
isa_flags() {
    [ "$NATIVE" = OFF ] && [ "${ASKDB_LLAMA_ISA:-auto}" != base ] || return 0
    [ "$(uname -m)" = x86_64 ] && [ -r /proc/cpuinfo ] || return 0
    local have f
    have=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
    for f in avx512f avx512bw avx512vl avx512dq avx512cd; do
        case $have in
            *" $f "*) ;;
            *) [ "${ASKDB_LLAMA_ISA:-auto}" != amx ] || die "ASKDB_LLAMA_ISA=amx: this CPU has no $f"
               return 0 ;;
        esac
    done
    echo -DGGML_AVX512=ON
    case $have in *" avx512_vnni "*) echo -DGGML_AVX512_VNNI=ON ;; esac
    case $have in *" avx512vbmi "*) echo -DGGML_AVX512_VBMI=ON ;; esac
    case $have in *" avx512_bf16 "*) echo -DGGML_AVX512_BF16=ON ;; esac
    case $have in *" avx_vnni "*) echo -DGGML_AVX_VNNI=ON ;; esac
    [ "${ASKDB_LLAMA_ISA:-auto}" = amx ] || return 0
    case $have in *" amx_tile "*) ;; *) die "ASKDB_LLAMA_ISA=amx: this CPU has no amx_tile" ;; esac
    case $have in *" amx_int8 "*) ;; *) die "ASKDB_LLAMA_ISA=amx: this CPU has no amx_int8" ;; esac
    echo -DGGML_AMX_TILE=ON
    echo -DGGML_AMX_INT8=ON
    case $have in *" amx_bf16 "*) echo -DGGML_AMX_BF16=ON ;; esac
    # At -O3 Debian 12's g++ 12 drops the stores that fill ggml's tile
    # configuration before _tile_loadconfig() (ggml_tile_config_init() in
    # amx/mmq.cpp: the config is loaded all zero but the palette), and the
    # first tile instruction raises SIGILL; -O2 keeps them.
    echo "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG"
}
ISA_TEXT=$(isa_flags)     # (not a process substitution: isa_flags may die)
mapfile -t ISA <<<"$ISA_TEXT"
[ -n "$ISA_TEXT" ] || ISA=()
CMAKE_ARGS=(
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_INSTALL_LIBDIR=lib
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON
    -DBUILD_SHARED_LIBS=OFF
    -DLLAMA_BUILD_IS_DEV=OFF
    -DLLAMA_BUILD_COMMON=OFF
    -DLLAMA_BUILD_TESTS=OFF
    -DLLAMA_BUILD_TOOLS=OFF
    -DLLAMA_BUILD_EXAMPLES=OFF
    -DLLAMA_BUILD_SERVER=OFF
    -DLLAMA_BUILD_APP=OFF
    -DLLAMA_OPENSSL=OFF
    -DGGML_NATIVE=$NATIVE
    ${ISA[@]+"${ISA[@]}"}
    -DGGML_OPENMP=ON
    -DGGML_CCACHE=OFF
)
# (LLAMA_CURL no longer exists in this release: the HTTP code lives in the
#  "common" library, which is not built at all.)

# The stamp records everything that defines the build; any change rebuilds.
STAMP_TEXT="package=${L[package]}@${L[version]} sha256=${L[sha256]} tag=$TAG commit=${L[commit]} cmake=${CMAKE_ARGS[*]}"

is_built() {
    [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_TEXT" ] && [ -f "$PREFIX/include/llama.h" ] || return 1
    local a; for a in $LIBS_ORDER; do [ -f "$PREFIX/lib/$a" ] || return 1; done
}

print_libs() {
    local out="" a
    for a in $LIBS_ORDER; do out+="$PREFIX/lib/$a "; done
    echo "$out$SYS_LIBS"
}

case "${1:-}" in
    --print-prefix)
        if is_built; then echo "$PREFIX"; exit 0; fi
        echo "llama.sh: llama.cpp $TAG is not built yet (run scripts/llama.sh)" >&2; exit 1 ;;
    --print-libs)
        if is_built; then print_libs; exit 0; fi
        echo "llama.sh: llama.cpp $TAG is not built yet (run scripts/llama.sh)" >&2; exit 1 ;;
    -h|--help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) die "unknown argument: $1 (try --help)" ;;
esac

if is_built; then
    log "llama.cpp $TAG already built (stamp $STAMP)"
    echo "$PREFIX"
    exit 0
fi

for t in git cmake tar sha256sum; do
    command -v "$t" >/dev/null 2>&1 || die "'$t' is required but not installed"
done
command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || die "a C++ compiler (g++) is required"

mkdir -p "$DL" "$BASE"
# One builder at a time (e.g. parallel make, two terminals).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$BASE/.lock"
    flock 9
    if is_built; then echo "$PREFIX"; exit 0; fi
fi

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# --- 1. download + verify the npm tarball ----------------------------------
TGZ="$DL/${L[tarball]}"
if [ -f "$TGZ" ] && [ "$(sha_of "$TGZ")" != "${L[sha256]}" ]; then
    log "cached $TGZ does not match the lock; downloading it again"
    rm -f "$TGZ"
fi
if [ ! -f "$TGZ" ]; then
    command -v npm >/dev/null 2>&1 || die "'npm' is required to download ${L[package]}@${L[version]}"
    log "downloading ${L[package]}@${L[version]} from the npm registry"
    tmpd=$(mktemp -d "$DL/.pack.XXXXXX")
    ( cd "$tmpd" && npm pack --ignore-scripts --silent "${L[package]}@${L[version]}" >/dev/null ) \
        || { rm -rf "$tmpd"; die "npm pack ${L[package]}@${L[version]} failed"; }
    [ -f "$tmpd/${L[tarball]}" ] || { ls -la "$tmpd" >&2; rm -rf "$tmpd"; die "npm pack did not produce ${L[tarball]}"; }
    mv "$tmpd/${L[tarball]}" "$TGZ"
    rm -rf "$tmpd"
fi
got=$(sha_of "$TGZ")
[ "$got" = "${L[sha256]}" ] || die "checksum mismatch for $TGZ: got $got, lock says ${L[sha256]} — refusing to build"
log "verified $TGZ (sha256 $got)"

# --- 2. extract the source from the git bundle -----------------------------
if [ ! -f "$SRC/CMakeLists.txt" ] || [ "$(git -C "$SRC" rev-parse HEAD 2>/dev/null)" != "${L[commit]}" ]; then
    work=$(mktemp -d "$BASE/.extract.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    tar -xzf "$TGZ" -C "$work" "${L[bundle_path]}" || die "tarball has no ${L[bundle_path]}"
    bundle="$work/${L[bundle_path]}"
    got=$(sha_of "$bundle")
    [ "$got" = "${L[bundle_sha256]}" ] || die "bundle checksum mismatch: got $got, lock says ${L[bundle_sha256]}"
    git -c advice.detachedHead=false clone --quiet "$bundle" "$work/src" || die "git clone of the bundle failed"
    head=$(git -C "$work/src" rev-parse HEAD)
    [ "$head" = "${L[commit]}" ] || die "bundle HEAD is $head, lock says ${L[commit]}"
    # The npm package also has patches/ it applies for its own build; we deliberately
    # use the release as tagged, unpatched.
    rm -rf "$SRC" "$BUILD"
    mv "$work/src" "$SRC"
    rm -rf "$work"; trap - EXIT
    log "extracted llama.cpp $TAG (${L[commit]}) to $SRC"
fi

# --- 3. build + install -----------------------------------------------------
log "configuring (GGML_NATIVE=$NATIVE${ISA[*]:+ ${ISA[*]}}) in $BUILD"
start=$(date +%s)
# A fresh configure: CMake keeps the options of an earlier one in its cache
# (GGML_AVX512=ON would outlive a build without it), and the stamp must
# describe what is built.
rm -f "$BUILD/CMakeCache.txt"
cmake -S "$SRC" -B "$BUILD" "${CMAKE_ARGS[@]}" -DCMAKE_INSTALL_PREFIX="$PREFIX" >"$BASE/cmake-configure.log" 2>&1 \
    || { tail -n 40 "$BASE/cmake-configure.log" >&2; die "cmake configure failed (full log: $BASE/cmake-configure.log)"; }
log "building with -j$JOBS (about 5-10 minutes on 2 cores; log: $BASE/cmake-build.log)"
cmake --build "$BUILD" --config Release -j "$JOBS" >"$BASE/cmake-build.log" 2>&1 \
    || { tail -n 40 "$BASE/cmake-build.log" >&2; die "build failed (full log: $BASE/cmake-build.log)"; }
rm -rf "$PREFIX"
cmake --install "$BUILD" --config Release >"$BASE/cmake-install.log" 2>&1 \
    || { tail -n 40 "$BASE/cmake-install.log" >&2; die "install failed (full log: $BASE/cmake-install.log)"; }
for a in $LIBS_ORDER; do
    [ -f "$PREFIX/lib/$a" ] || die "expected $PREFIX/lib/$a after install, not found"
done
[ -f "$PREFIX/include/llama.h" ] || die "expected $PREFIX/include/llama.h after install, not found"
printf '%s\n' "$STAMP_TEXT" > "$STAMP"
log "built llama.cpp $TAG in $(( $(date +%s) - start )) s"
log "link flags: $(print_libs)"
echo "$PREFIX"
