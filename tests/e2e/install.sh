#!/usr/bin/env bash
# tests/e2e/install.sh - `make install` and a program embedding libaskdb.
#
#   FAKE_LLM=build/asan/fake_llm bash tests/e2e/install.sh
#   bash tests/e2e/install.sh --filter 'static'   (ERE on test names)
#   E2E_KEEP=1     keep the temp dir      E2E_VERBOSE=1  show a failure's log
#   MAKE=...       the make to run (make test passes its own)
#
# Installs the release build (build/) into a temporary prefix with `make
# install PREFIX=...`, then builds examples/embed.c against that copy alone,
# through `pkg-config askdb` (shared, and static with --static), and runs it
# on examples/shop.db with the scripted model (tests/fake_llm) as the model.
# Also: the shared library and the static archive export exactly the
# ASKDB_API functions of include/askdb.h (a program may have its own
# buf_init and still link libaskdb.a), what is installed looks for its
# libraries in the prefix alone (no run path into the build machine's
# cache), DESTDIR stages an install that `make uninstall` removes
# whole, and the man page renders without warnings, names the version
# `askdb --version` prints and documents every option the command's help
# lists.
# Output: "ok NAME" / "FAIL NAME: reason" per test, then one line
# "N passed, M failed". Exit status 0 only when M is 0.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
FAKE_LLM=$(abspath "${FAKE_LLM:-$ROOT/build/asan/fake_llm}")
SHOP_DB=$(abspath "${SHOP_DB:-$ROOT/examples/shop.db}")
MAKE=${MAKE:-make}
CC=${CC:-cc}

FILTER=
while [ $# -gt 0 ]; do
    case $1 in
    --filter) FILTER=${2:-}; shift 2 ;;
    --filter=*) FILTER=${1#--filter=}; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

# Nothing of the developer's setup may leak in: no model settings, and no
# compiler search paths that could find the work tree instead of the
# installed copy.
for _v in $(compgen -e); do case $_v in ASKDB_*) unset "$_v" ;; esac; done
unset OPENAI_API_KEY ANTHROPIC_API_KEY CPATH C_INCLUDE_PATH LIBRARY_PATH \
    LD_LIBRARY_PATH PKG_CONFIG_PATH PKG_CONFIG_LIBDIR
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy='127.0.0.1,localhost' NO_PROXY='127.0.0.1,localhost'
export ASKDB_RETRY_BASE_MS=1 LC_ALL=C

for _t in pkg-config nm readelf groff man "$CC"; do
    command -v "$_t" >/dev/null || { echo "install.sh: '$_t' is needed" >&2; exit 2; }
done
[ -x "$FAKE_LLM" ] || { echo "install.sh: $FAKE_LLM is not built (make build/asan/fake_llm)" >&2; exit 2; }
[ -f "$SHOP_DB" ] || { echo "install.sh: $SHOP_DB is missing (make examples/shop.db)" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/askdb-install-e2e.XXXXXX") || exit 2
LLM_PID=
cleanup() {
    [ -z "$LLM_PID" ] || kill "$LLM_PID" 2>/dev/null
    if [ -n "${E2E_KEEP:-}" ]; then echo "install.sh: kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --------------------------------------------------------------------------
# Helpers (inside a test's subshell; T set by the runner)
# --------------------------------------------------------------------------
fail() {
    [ -s "$T/.fail" ] || printf '%s\n' "$*" | tr '\n' '|' | cut -c1-600 >"$T/.fail"
    exit 1
}

# mk ARGS...: make in the work tree, output in $T/make.log.
mk() {
    "$MAKE" -C "$ROOT" --no-print-directory "$@" >>"$T/make.log" 2>&1 ||
        fail "make $* failed: $(tail -n 5 "$T/make.log")"
}

# pc PREFIX ARGS...: pkg-config seeing only PREFIX's askdb.pc (and the
# system's own packages, which askdb.pc requires).
pc() {
    local p=$1
    shift
    PKG_CONFIG_PATH="$p/lib/pkgconfig" pkg-config "$@" askdb
}

# The scripted model: one reply, with SQL that gives integers, text, NULL
# and reals.
SQL="SELECT c.id, c.name, c.parent_id, ROUND(AVG(p.price), 2) AS avg_price FROM categories c LEFT JOIN products p ON p.category_id = c.id WHERE c.id <= 3 GROUP BY c.id ORDER BY c.id"
QUESTION="For each of the first 3 categories, list its id, name, parent id and average product price."
start_llm() {
    local d=$T/llm _
    mkdir -p "$d"
    "$PY" -c 'import json,sys; print(json.dumps([{"content": "```sql\n" + sys.argv[1] + "\n```"}]))' \
        "$SQL" >"$d/script.json"
    : >"$d/log"
    "$FAKE_LLM" --script "$d/script.json" --log "$d/log" --port 0 \
        --port-file "$d/port" 2>"$d/stderr" &
    LLM_PID=$!
    for _ in $(seq 1 100); do
        [ -s "$d/port" ] && break
        kill -0 "$LLM_PID" 2>/dev/null || fail "fake_llm exited: $(cat "$d/stderr")"
        sleep 0.05
    done
    [ -s "$d/port" ] || fail "fake_llm did not start"
    URL="http://127.0.0.1:$(cat "$d/port")"
}
PY=$(command -v python3) || { echo "install.sh: python3 is needed" >&2; exit 2; }

# run_embed PROGRAM [ENV...]: the program on a copy of shop.db, the scripted
# model configured through the environment (askdb_config_from_env).
run_embed() {
    local prog=$1
    shift
    cp "$SHOP_DB" "$T/shop.db"
    start_llm
    (cd "$T" && env "$@" ASKDB_LLM_URL="$URL" ASKDB_MODEL=test \
        ASKDB_CACHE_DIR="$T/cache" timeout -k 5 60 "$prog" shop.db "$QUESTION") \
        >"$T/out" 2>"$T/err"
    RC=$?
    kill "$LLM_PID" 2>/dev/null
    wait "$LLM_PID" 2>/dev/null
    LLM_PID=
}

# The rows, exactly: embed.c prints the SQL, the column names, then the
# rows with '|' between cells (%g for reals, NULL for NULL).
expect_embed_output() {
    [ "$RC" = 0 ] || fail "embed exited $RC: $(head -c 300 "$T/err")"
    printf '%s\n' "$SQL" "id|name|parent_id|avg_price" "1|Electronics|NULL|169.45" \
        "2|Computers & Tablets|1|599.13" "3|Audio|1|154.23" >"$T/expected"
    cmp -s "$T/expected" "$T/out" ||
        fail "embed printed '$(cat "$T/out")', want '$(cat "$T/expected")'"
    [ "$(wc -l <"$T/llm/log")" = 1 ] ||
        fail "the model got $(wc -l <"$T/llm/log") requests, want 1"
    [ "$(sha256sum <"$T/shop.db")" = "$(sha256sum <"$SHOP_DB")" ] || fail "shop.db changed"
}

# The names declared ASKDB_API in include/askdb.h, one a line, sorted.
api_names() {
    "$PY" - "$ROOT/include/askdb.h" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)
names = set()
for decl in text.split("ASKDB_API")[1:]:
    m = re.search(r"\b(askdb_\w+)\s*\(", decl)
    if m:
        names.add(m.group(1))
print("\n".join(sorted(names)))
EOF
}

# The soname askdb's version calls for: libaskdb.so.MAJOR, and while the
# major is 0 libaskdb.so.0.MINOR (a 0.x minor may change the API).
soname() {
    local v
    v=$(sed -n 's/^#define ASKDB_VERSION "\(.*\)"$/\1/p' "$ROOT/src/core/config.c")
    case $v in
    0.*) v=${v#0.}; echo "libaskdb.so.0.${v%%.*}" ;;
    *) echo "libaskdb.so.${v%%.*}" ;;
    esac
}

# The functions a shared library exports, one a line, sorted.
exported() { nm -D --defined-only "$1" | awk '{print $NF}' | LC_ALL=C sort; }

# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

shared_library_exports_only_the_public_api() {
    local so want got
    so=$(readlink -f "$ROOT/build/libaskdb.so")
    [ -f "$so" ] || fail "build/libaskdb.so is not built"
    readelf -d "$so" | grep -qF "Library soname: [$(soname)]" ||
        fail "soname: $(readelf -d "$so" | grep SONAME)"
    want=$(api_names)
    [ "$(printf '%s\n' "$want" | wc -l)" -gt 20 ] || fail "read too few ASKDB_API names: $want"
    got=$(exported "$so")
    [ "$got" = "$want" ] ||
        fail "exports differ from askdb.h's ASKDB_API names: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -8)"
    # Every dependency is linked: nothing is left for the program to supply.
    ! ldd -r "$so" 2>&1 | grep -E 'undefined symbol|not found' ||
        fail "unresolved: $(ldd -r "$so" 2>&1 | grep -m3 -E 'undefined symbol|not found')"
}

install_puts_every_file_under_the_prefix() {
    local p=$TMP/prefix v files want
    v=$(pc "$p" --modversion) || fail "pkg-config does not find askdb in $p"
    [ "$("$p/bin/askdb" --version)" = "askdb $v" ] ||
        fail "askdb --version: '$("$p/bin/askdb" --version 2>&1)', askdb.pc says $v"
    files=$(cd "$p" && find . \( -type f -o -type l \) ! -path './lib/askdb/*' | LC_ALL=C sort)
    want=$(printf '%s\n' ./bin/askdb ./include/askdb.h ./lib/libaskdb.a ./lib/libaskdb.so \
        "./lib/$(soname)" "./lib/libaskdb.so.$v" ./lib/pkgconfig/askdb.pc \
        ./libexec/askdb/askdb-exec ./share/man/man1/askdb.1 | LC_ALL=C sort)
    [ "$files" = "$want" ] || fail "installed files: $(echo $files), want $(echo $want)"
    [ "$(readlink "$p/lib/libaskdb.so")" = "$(soname)" ] || fail "libaskdb.so -> $(readlink "$p/lib/libaskdb.so")"
    [ "$(readlink "$p/lib/$(soname)")" = "libaskdb.so.$v" ] || fail "$(soname) -> $(readlink "$p/lib/$(soname)")"
    cmp -s "$ROOT/include/askdb.h" "$p/include/askdb.h" || fail "installed askdb.h differs"
    [ "$(exported "$p/lib/libaskdb.so.$v")" = "$(api_names)" ] || fail "installed library exports more than the API"
    [ "$(pc "$p" --variable=prefix)" = "$p" ] || fail "askdb.pc prefix: $(pc "$p" --variable=prefix)"
    # (pkg-config ends its output with a blank)
    [ "$(pc "$p" --cflags)" = "-I$p/include " ] || fail "cflags: $(pc "$p" --cflags)"
    [ "$(pc "$p" --libs)" = "-L$p/lib -laskdb " ] || fail "libs: $(pc "$p" --libs)"
    # llama.cpp's archives, for static linking, beside it (when built in).
    if nm "$p/lib/libaskdb.a" 2>/dev/null | grep -q ' U llama_'; then
        [ -f "$p/lib/askdb/libllama.a" ] || fail "libaskdb.a needs llama.cpp, lib/askdb/libllama.a is missing"
    fi
    [ "$(MANPATH="$p/share/man" man -w askdb)" = "$p/share/man/man1/askdb.1" ] ||
        fail "man -w askdb: $(MANPATH="$p/share/man" man -w askdb 2>&1)"
}

installed_programs_run_statements_in_the_installed_helper() {
    # askdb and a program linking libaskdb find askdb-exec where make
    # install put it (LIBEXECDIR, compiled in), and it finds its libraries
    # there too.
    local p=$TMP/prefix h=$TMP/prefix/libexec/askdb/askdb-exec
    [ -x "$h" ] || fail "no $h"
    (cd "$T" && "$p/bin/askdb" sql -v -f csv "$SHOP_DB" "SELECT count(*) AS n FROM customers") \
        >"$T/out" 2>"$T/err" || fail "askdb sql: $(head -c 300 "$T/err")"
    [ "$(tr -d '\r' <"$T/out")" = "$(printf 'n\n60')" ] || fail "rows: $(cat "$T/out")"
    grep -qF "statements run in $h, killed after the time limit" "$T/err" ||
        fail "not run in the installed helper: $(head -c 300 "$T/err")"
    local d
    d=$(ldd "$h" | awk '$1 == "libduckdb.so" {print $3}')
    if [ -n "$d" ]; then
        [ "$(readlink -f "$d")" = "$(readlink -f "$p/lib/askdb/libduckdb.so")" ] ||
            fail "the helper loads another DuckDB: $d"
    fi
}

# runpath FILE: FILE's RUNPATH (or RPATH) entries, one a line.
runpath() {
    readelf -d "$1" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]$/\1/p' | tr ':' '\n'
}

installed_files_find_their_libraries_in_the_prefix() {
    # The library, the command and the helper look for libduckdb.so only
    # where make install put it (via $ORIGIN, or the prefix), never in the
    # cache of the machine that built them.
    local p=$TMP/prefix v f e d
    v=$(pc "$p" --modversion)
    for f in "$p/lib/libaskdb.so.$v" "$p/bin/askdb" "$p/libexec/askdb/askdb-exec"; do
        [ -f "$f" ] || fail "no $f"
        for e in $(runpath "$f"); do
            case $e in
            '$ORIGIN'/*|"$p"/*) ;;
            *) fail "$f looks for libraries in $e (RUNPATH $(runpath "$f" | paste -sd:))" ;;
            esac
        done
        readelf -d "$f" | grep -qF '[libduckdb.so]' || continue
        d=$(ldd "$f" | awk '$1 == "libduckdb.so" {print $3}')
        [ "$(readlink -f "$d")" = "$(readlink -f "$p/lib/askdb/libduckdb.so")" ] ||
            fail "$f loads libduckdb.so from '$d', not $p/lib/askdb"
    done
}

embed_links_the_installed_shared_library() {
    local p=$TMP/prefix flags
    cp "$ROOT/examples/embed.c" "$T/embed.c"
    flags=$(pc "$p" --cflags --libs) || fail "pkg-config --cflags --libs askdb failed"
    # shellcheck disable=SC2086
    (cd "$T" && "$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror embed.c -o embed $flags) \
        >"$T/cc.log" 2>&1 || fail "cc embed.c $flags: $(head -c 400 "$T/cc.log")"
    readelf -d "$T/embed" | grep -qF "Shared library: [$(soname)]" || fail "embed does not need $(soname)"
    LD_LIBRARY_PATH="$p/lib" ldd "$T/embed" | grep -qF "$(soname) => $p/lib/$(soname) " ||
        fail "embed does not load the installed library: $(LD_LIBRARY_PATH="$p/lib" ldd "$T/embed" | grep askdb)"
    run_embed "$T/embed" LD_LIBRARY_PATH="$p/lib"
    expect_embed_output
}

static_library_exports_only_the_public_api() {
    local p=$TMP/prefix got want
    want=$(api_names)
    # Defined global names (nm -g --defined-only: NAME is the third field).
    got=$(nm -g --defined-only "$p/lib/libaskdb.a" 2>/dev/null |
        awk 'NF == 3 {print $3}' | LC_ALL=C sort -u)
    [ "$got" = "$want" ] ||
        fail "libaskdb.a's global names differ from askdb.h's ASKDB_API names: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -8)"
    # What it needs of other libraries is left to the program's link.
    nm -u "$p/lib/libaskdb.a" | grep -qw sqlite3_open_v2 ||
        fail "libaskdb.a does not leave sqlite3_open_v2 to the program's link"
    if [ -f "$p/lib/askdb/libllama.a" ]; then
        nm -u "$p/lib/libaskdb.a" | grep -q ' llama_' ||
            fail "libaskdb.a does not leave llama.cpp's names to lib/askdb/libllama.a"
    fi
}

static_program_may_have_the_librarys_internal_names() {
    # buf_init and trace_open are names of libaskdb's own functions: a
    # program's own ones must not clash with them ('multiple definition').
    local p=$TMP/prefix flags
    cat >"$T/clash.c" <<'EOF'
#include <stdio.h>
#include <askdb.h>
int buf_init(void);
int trace_open(void);
int buf_init(void) { return 40; }
int trace_open(void) { return 2; }
int main(int argc, char **argv)
{
    askdb_db *db = NULL;
    askdb_result *r = NULL;
    int ok = argc == 2 && askdb_db_open(argv[1], NULL, &db) == ASKDB_OK &&
             askdb_db_query(db, "SELECT count(*) FROM customers", &r) ==
                 ASKDB_OK;
    printf("%d %lld\n", buf_init() + trace_open(),
           ok ? (long long)askdb_result_cell(r, 0, 0)->i : -1LL);
    askdb_result_free(r);
    askdb_db_close(db);
    return !ok;
}
EOF
    flags=$(pc "$p" --cflags --libs --static) || fail "pkg-config --static askdb failed"
    flags=${flags/ -laskdb / -l:libaskdb.a }
    # shellcheck disable=SC2086
    (cd "$T" && "$CC" -std=c11 -Wall -Wextra -Werror clash.c -o clash $flags) \
        >"$T/cc.log" 2>&1 || fail "cc clash.c $flags: $(head -c 400 "$T/cc.log")"
    ! readelf -d "$T/clash" | grep -q 'libaskdb' || fail "the static build needs a libaskdb.so"
    (cd "$T" && timeout -k 5 60 ./clash "$SHOP_DB") >"$T/out" 2>"$T/err" ||
        fail "clash exited $?: $(head -c 300 "$T/err")"
    [ "$(cat "$T/out")" = "42 60" ] || fail "clash printed '$(cat "$T/out")', want '42 60'"
}

embed_links_the_installed_static_library() {
    local p=$TMP/prefix flags
    cp "$ROOT/examples/embed.c" "$T/embed.c"
    flags=$(pc "$p" --cflags --libs --static) || fail "pkg-config --static askdb failed"
    case " $flags " in *" -laskdb "*) ;; *) fail "no -laskdb in $flags" ;; esac
    # -l:libaskdb.a picks the archive where -laskdb would take the .so.
    flags=${flags/ -laskdb / -l:libaskdb.a }
    # shellcheck disable=SC2086
    (cd "$T" && "$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror embed.c -o embed $flags) \
        >"$T/cc.log" 2>&1 || fail "cc embed.c $flags: $(head -c 400 "$T/cc.log")"
    ! readelf -d "$T/embed" | grep -q 'libaskdb' || fail "the static build needs a libaskdb.so"
    run_embed "$T/embed"
    expect_embed_output
}

destdir_stages_the_install_and_uninstall_removes_it() {
    local s=$T/stage left
    mk install DESTDIR="$s" PREFIX=/opt/askdb-test
    [ -x "$s/opt/askdb-test/bin/askdb" ] || fail "no $s/opt/askdb-test/bin/askdb"
    [ ! -e /opt/askdb-test ] || fail "/opt/askdb-test exists outside DESTDIR"
    grep -qx 'prefix=/opt/askdb-test' "$s/opt/askdb-test/lib/pkgconfig/askdb.pc" ||
        fail "askdb.pc: $(grep '^prefix' "$s/opt/askdb-test/lib/pkgconfig/askdb.pc")"
    ! grep -qF "$s" "$s/opt/askdb-test/lib/pkgconfig/askdb.pc" || fail "askdb.pc records DESTDIR"
    ! runpath "$s/opt/askdb-test/bin/askdb" | grep -qF "$s" || fail "askdb's RUNPATH records DESTDIR"
    mk uninstall DESTDIR="$s" PREFIX=/opt/askdb-test
    left=$(cd "$s" && find . \( -type f -o -type l \))
    [ -z "$left" ] || fail "left after uninstall: $(echo $left)"
}

man_page_renders_and_lists_every_option() {
    local man=$ROOT/docs/askdb.1 warn c o
    warn=$(groff -man -ww -z "$man" 2>&1)
    [ -z "$warn" ] || fail "groff warns: $warn"
    MANWIDTH=100 man -l "$man" >"$T/man.txt" 2>"$T/man.err" || fail "man -l: $(cat "$T/man.err")"
    [ ! -s "$T/man.err" ] || fail "man -l: $(cat "$T/man.err")"
    # Its header names the version the command prints.
    grep -qF "\"$("$ROOT/build/askdb" --version)\"" <(grep '^\.TH ' "$man") ||
        fail "man page header '$(grep '^\.TH ' "$man")' lacks '$("$ROOT/build/askdb" --version)'"
    for c in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS ENVIRONMENT "EXIT STATUS" FILES EXAMPLES "SEE ALSO"; do
        grep -qx "$c" "$T/man.txt" || fail "no section $c"
    done
    for c in ask shell schema sql eval learn serve mcp help version; do
        grep -qE "^ +askdb $c( |$)" "$T/man.txt" || fail "command $c is not in the synopsis"
    done
    # Every option the command's help lists is in the man page.
    : >"$T/help.all"
    for c in ask shell schema sql eval learn serve mcp; do
        "$ROOT/build/askdb" help "$c" >"$T/help.txt" 2>&1 || fail "askdb help $c failed"
        cat "$T/help.txt" >>"$T/help.all"
        for o in $(grep -oE -- '(^|[ ,])--[a-z][a-z-]+' "$T/help.txt" | tr -d ' ,' | sort -u); do
            grep -qE -- "$o([^a-z-]|$)" "$T/man.txt" || fail "option $o (askdb help $c) is not in the man page"
        done
    done
    # And every option the man page describes (its OPTIONS entries) is in
    # some command's help: none that the command no longer takes.
    for o in $(sed -n '/^\.SH OPTIONS/,/^\.SH ENVIRONMENT/p' "$man" |
               grep -A1 '^\.TP' | sed 's/\\-/-/g' |
               grep -oE -- '(^|[ ,"])--[a-z][a-z-]+' | tr -d ' ,"' | sort -u); do
        grep -qE -- "(^|[ ,;(])$o([^a-z-]|$)" "$T/help.all" ||
            fail "option $o of the man page is in no command's help"
    done
    for o in ASKDB_PROVIDER ASKDB_LLM_URL ASKDB_MODEL ASKDB_API_KEY OPENAI_API_KEY \
             ANTHROPIC_API_KEY ASKDB_CACHE_DIR ASKDB_PROMPT_CACHE_MB ASKDB_EXEC_HELPER \
             XDG_CACHE_HOME XDG_STATE_HOME; do
        grep -qF "$o" "$T/man.txt" || fail "environment variable $o is not in the man page"
    done
}

TESTS=(shared_library_exports_only_the_public_api install_puts_every_file_under_the_prefix
       installed_programs_run_statements_in_the_installed_helper
       installed_files_find_their_libraries_in_the_prefix
       embed_links_the_installed_shared_library embed_links_the_installed_static_library
       static_library_exports_only_the_public_api
       static_program_may_have_the_librarys_internal_names
       destdir_stages_the_install_and_uninstall_removes_it man_page_renders_and_lists_every_option)

# One install, into $TMP/prefix, for the tests that use it.
T=$TMP/t/make-install
mkdir -p "$T"
if ! (mk install PREFIX="$TMP/prefix"); then
    echo "FAIL make install PREFIX=$TMP/prefix: $(head -n1 "$T/.fail")"
    [ -n "${E2E_VERBOSE:-}" ] && tail -n 15 "$T/make.log" | sed 's/^/    /'
    echo "0 passed, 1 failed"
    exit 1
fi

PASSED=0
FAILED=0
for name in "${TESTS[@]}"; do
    if [ -n "$FILTER" ] && ! printf '%s\n' "$name" | grep -qE -- "$FILTER"; then
        continue
    fi
    T="$TMP/t/$name"
    mkdir -p "$T"
    (
        trap '[ -z "$LLM_PID" ] || kill "$LLM_PID" 2>/dev/null' EXIT
        "$name"
    ) >>"$T/.log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && [ ! -s "$T/.fail" ]; then
        PASSED=$((PASSED + 1)); echo "ok $name"
    else
        FAILED=$((FAILED + 1))
        echo "FAIL $name: $(head -n1 "$T/.fail" 2>/dev/null || echo "exit $rc")"
        [ -n "${E2E_VERBOSE:-}" ] && tail -n 15 "$T/.log" | sed 's/^/    /'
    fi
done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
