#!/usr/bin/env bash
# tests/e2e/eval.sh - end-to-end tests of `askdb eval` through the real binary.
#
#   ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm bash tests/e2e/eval.sh
#   bash tests/e2e/eval.sh --filter 'resume'     (ERE on test names)
#   E2E_KEEP=1     keep the temp dir      E2E_VERBOSE=1  show a failure's log
#
# The model is the scripted server tests/fake_llm; with --jobs 1 the items
# are asked in suite order (grouped by database), so each script lists the
# replies in that order and the expected EX, classes and report are exact.
# Output: "ok NAME" / "FAIL NAME: reason" per test, then one line
# "N passed, M failed". Exit status 0 only when M is 0.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
ASKDB=$(abspath "${ASKDB:-$ROOT/build/asan/askdb}")
FAKE_LLM=$(abspath "${FAKE_LLM:-$ROOT/build/asan/fake_llm}")
SHOP_DB=$(abspath "${SHOP_DB:-$ROOT/examples/shop.db}")
SUITE="$ROOT/tests/fixtures/eval/shop_suite.json"

FILTER=
while [ $# -gt 0 ]; do
    case $1 in
    --filter) FILTER=${2:-}; shift 2 ;;
    --filter=*) FILTER=${1#--filter=}; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "eval.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

for _v in $(compgen -e); do case $_v in ASKDB_*) unset "$_v" ;; esac; done
unset OPENAI_API_KEY ANTHROPIC_API_KEY http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy='127.0.0.1,localhost' NO_PROXY='127.0.0.1,localhost'
export ASKDB_RETRY_BASE_MS=1 LC_ALL=C PYTHONUTF8=1
PY=$(command -v python3) || { echo "eval.sh: python3 is needed" >&2; exit 2; }
for _f in "$ASKDB" "$FAKE_LLM"; do
    [ -x "$_f" ] || { echo "eval.sh: $_f is not built" >&2; exit 2; }
done
[ -f "$SHOP_DB" ] || { echo "eval.sh: $SHOP_DB is missing (make examples/shop.db)" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/askdb-eval-e2e.XXXXXX") || exit 2
export ASKDB_CACHE_DIR=$TMP/cache   # value indexes, learned pairs
cleanup() {
    local pid
    if [ -f "$TMP/pids" ]; then
        while read -r pid; do [ -n "$pid" ] && kill "$pid" 2>/dev/null; done <"$TMP/pids"
    fi
    if [ -n "${E2E_KEEP:-}" ]; then echo "eval.sh: kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
: >"$TMP/pids"

# --------------------------------------------------------------------------
# Helpers (inside a test's subshell, in its own directory $T)
# --------------------------------------------------------------------------
fail() { printf '%s\n' "$*" | tr '\n' '|' | cut -c1-600 >"$T/.fail"; exit 1; }

# start_llm SCRIPT_JSON [NAME]: start the scripted model; sets URL, LLMLOG.
start_llm() {
    local name=${2:-llm} i
    printf '%s\n' "$1" >"$T/$name.script.json"
    rm -f "$T/$name.port"
    "$FAKE_LLM" --script "$T/$name.script.json" --log "$T/$name.log" \
        --port-file "$T/$name.port" 2>"$T/$name.err" &
    echo $! >>"$T/.pids"
    echo $! >>"$TMP/pids"
    for i in $(seq 100); do [ -s "$T/$name.port" ] && break; sleep 0.05; done
    [ -s "$T/$name.port" ] || fail "fake_llm did not start: $(cat "$T/$name.err")"
    URL="http://127.0.0.1:$(cat "$T/$name.port")/v1"
    LLMLOG="$T/$name.log"
}

# run ARGS...: askdb in $T; RC, stdout in $T/out, stderr in $T/err.
run() {
    (cd "$T" && exec timeout -k 5 60 "$ASKDB" "$@") </dev/null >"$T/out" 2>"$T/err"
    RC=$?
    { printf '$ askdb'; printf ' %q' "$@"; printf '\n-> %s\n' "$RC"; sed 's/^/  err: /' "$T/err" | head -20; } >>"$T/.log"
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/err"; then
        fail "sanitizer report: $(grep -m2 -E 'Sanitizer|runtime error' "$T/err")"
    fi
}

expect_rc() { [ "$RC" = "$1" ] || fail "exit $RC, want $1: $(head -c 300 "$T/err")"; }
nreq() { if [ -s "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }

# The summary without its timing lines (they differ from run to run).
stable() { grep -vE '^(latency|time per question|model load):' "$1"; }

# A db-root with shop/shop.sqlite -> the sample database.
make_root() { mkdir -p "$T/root/shop" && ln -sf "$SHOP_DB" "$T/root/shop/shop.sqlite"; }

fence() { "$PY" -c 'import json,sys; print(json.dumps({"content": "```sql\n" + sys.argv[1] + "\n```"}))' "$1"; }

# shop_script [FROM [SLOW_INDEX]]: the replies for the shop suite in the
# order of its items (the broken gold and the missing database never reach
# the model), from the FROM-th on (0-based); reply SLOW_INDEX (counted
# before FROM applies) waits 30 s.
shop_script() {
    "$PY" - "${1:-0}" "${2:--1}" <<'EOF'
import json, sys
f = lambda s: {"content": "```sql\n" + s + "\n```"}
loop = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r) SELECT count(*) FROM r"
rs = [
    f("SELECT COUNT(*) AS n FROM customers"),                        # 0 correct
    {"content": "SELECT name FROM categories ORDER BY name"},        # 1 correct, bare
    f("SELECT count(*) AS n, country FROM customers GROUP BY country ORDER BY count(*) DESC, country"),  # 2 columns swapped
    f("SELECT name FROM products ORDER BY price ASC LIMIT 3"),       # 3 wrong order
    f("SELECT nme FROM products WHERE category_id = (SELECT id FROM categories WHERE name = 'Audio')"),  # 4 repaired
    f("SELECT name FROM products WHERE category_id = (SELECT id FROM categories WHERE name = 'Audio')"),
    f("SELECT id FROM orders WHERE shipping_country = 'YY'"),        # 5 empty = empty
    f("SELECT id FROM orders WHERE shipping_country = 'ZZ'"),
    f("SELECT sum(total FROM orders"),                               # 6 syntax, twice
    f("SELECT sum(total FROM orders"),
    f("SELECT first_name FROM customers WHERE country = 'Spain'"),   # 9 empty result
    f("SELECT first_name FROM customers WHERE country = 'Espa\u00f1a'"),
    f("SELECT country FROM customers"),                              # 10 DISTINCT removed
    f("SELECT '10'"),                                                # 11 text vs int
    f(loop), f(loop),                                                # 12 timeout, twice
]
slow = int(sys.argv[2])
if slow >= 0:
    rs[slow]["delay_ms"] = 30000
print(json.dumps(rs[int(sys.argv[1]):]))
EOF
}

# The scoring is tested on the plain loop: the techniques (value
# retrieval, question check, checks, examples) would change the prompts
# and the number of model calls; they have their own tests.
SHOP_ARGS=(--max-attempts 2 --timeout 500 --model fake --no-values
           --no-question-check --no-checks --examples 0)

EXPECTED_SUMMARY='EX 6/11 = 54.5% (13 selected, 2 bad items)
by difficulty:
  easy         4/8      50.0%
  medium       1/2      50.0%
  extra        1/1     100.0%
by database:
  shop         6/11     54.5%
tokens per question: 1282.6 (prompt 1257.9, completion 24.7); model calls per question: 1.45
repair rate: 45.5% (5 of 11 needed a repair, 2 of them correct)
error classes:
  wrong_result     2
  empty_result     1
  syntax           1
  timeout          1
bad items (not scored):
  gold_error           1
  missing_database     1'

# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

spider_suite_scores_exactly() {
    make_root
    start_llm "$(shop_script)"
    run eval --suite "$SUITE" --db-root root --llm-url "$URL" "${SHOP_ARGS[@]}" --out run.jsonl
    expect_rc 0
    [ "$(stable "$T/out")" = "$EXPECTED_SUMMARY" ] || fail "summary differs: $(stable "$T/out" | diff - <(printf '%s\n' "$EXPECTED_SUMMARY") | head -8)"
    grep -qE '^latency: p50 [0-9]+ ms, p90 [0-9]+ ms, max [0-9]+ ms$' "$T/out" || fail "no latency line"
    [ "$(nreq "$LLMLOG")" = 16 ] || fail "$(nreq "$LLMLOG") model requests, want 16"
    # Not a terminal: plain progress lines every 10 items and at the end.
    grep -q '^askdb eval: 10/13 done, EX ' "$T/err" || fail "no progress line at 10"
    grep -q '^askdb eval: 13/13 done, EX 54.5%' "$T/err" || fail "no final progress line"
    "$PY" - "$T/run.jsonl" <<'EOF' || fail "records: $(cat "$T/py.err" 2>/dev/null)"
import json, sys
recs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    recs[r["index"]] = r
want = {0: (True, None, None), 1: (True, None, None), 2: (True, None, None),
        3: (False, "wrong_result", None), 4: (True, None, None),
        5: (True, None, None), 6: (False, "syntax", None),
        7: (False, None, "gold_error"), 8: (False, None, "missing_database"),
        9: (False, "empty_result", None), 10: (True, None, None),
        11: (False, "wrong_result", None), 12: (False, "timeout", None)}
assert sorted(recs) == list(range(13)), sorted(recs)
for i, (ok, cls, bad) in want.items():
    r = recs[i]
    assert (r["correct"], r["class"], r["bad"]) == (ok, cls, bad), (i, r["correct"], r["class"], r["bad"])
r = recs[4]
assert r["attempts"] == 2 and r["repairs"] == 1 and r["attempt_classes"] == ["unknown_column", "none"], r
assert r["llm_calls"] == 2 and r["prompt_tokens"] > 0 and r["completion_tokens"] > 0
for k in ("schema", "prompt", "model", "validate", "exec", "total", "gold", "compare"):
    assert k in r["ms"], k
assert recs[0]["ms"]["schema"] > 0 and recs[1]["ms"]["schema"] == 0  # schema read once
assert recs[3]["order_matters"] is True and recs[3]["pred_result"]["rows"][0] == ["Wool Socks 3-Pack"]
assert recs[3]["gold_result"]["rows"][0] == ["Aurora 16 Laptop Pro"]
assert "gold_result" not in recs[0]
assert recs[7]["message"] == "no such column: nope" and "model" not in recs[7].get("ms", {})
assert recs[12]["message"].startswith("query interrupted after the 500 ms")
assert recs[6]["pred"] == "SELECT sum(total FROM orders"
EOF
}

# --in-process: every statement, gold ones too, runs in askdb itself, so a
# helper that would fail every statement is never started.
in_process_scores_the_same() {
    make_root
    start_llm "$(shop_script)"
    ASKDB_EXEC_HELPER=/bin/false run eval --suite "$SUITE" --db-root root --llm-url "$URL" "${SHOP_ARGS[@]}" --in-process
    expect_rc 0
    [ "$(stable "$T/out")" = "$EXPECTED_SUMMARY" ] || fail "summary differs: $(stable "$T/out" | diff - <(printf '%s\n' "$EXPECTED_SUMMARY") | head -8)"
}

report_is_self_contained_and_escaped() {
    make_root
    start_llm "$(shop_script)"
    run eval --suite "$SUITE" --db-root root --llm-url "$URL" "${SHOP_ARGS[@]}" --report report.html -q
    expect_rc 0
    local r="$T/report.html"
    [ -s "$r" ] || fail "no report"
    [ ! -s "$T/err" ] || fail "-q still printed: $(head -c 200 "$T/err")"
    grep -q '<h2>Failures (5)</h2>' "$r" || fail "failure count"
    grep -q '<h2>Bad items (2)</h2>' "$r" || fail "bad item count"
    [ "$(grep -o '<svg' "$r" | wc -l)" = 3 ] || fail "want 3 inline SVG charts"
    grep -q 'Is the number of categories &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;ten&#39;?' "$r" || fail "question not escaped"
    ! grep -qi '<script' "$r" || fail "raw <script> in the report"
    ! grep -qiE 'src=|href=|url\(|@import|https?:' "$r" || fail "external reference: $(grep -oiE '.{20}(src=|href=|url\(|@import|https?:).{20}' "$r" | head -2)"
    grep -q "default-src 'none'" "$r" || fail "no CSP"
    grep -q 'SELECT name FROM products ORDER BY price ASC LIMIT 3' "$r" || fail "predicted SQL missing"
    grep -q 'Aurora 16 Laptop Pro' "$r" || fail "gold rows missing"
    grep -q 'Wool Socks 3-Pack' "$r" || fail "predicted rows missing"
    grep -q 'EX by difficulty' "$r" && grep -q 'Latency per question' "$r" && grep -q 'Error classes' "$r" || fail "chart titles"
    grep -q 'no such column: nope' "$r" || fail "bad item message"
    "$PY" - "$r" <<'EOF' || fail "report is not well-formed HTML"
import sys, html.parser
class P(html.parser.HTMLParser):
    void = {"meta", "br", "hr", "img", "input", "link", "rect", "line"}
    def __init__(s): super().__init__(); s.stack = []
    def handle_starttag(s, t, a):
        if t not in s.void: s.stack.append(t)
    def handle_startendtag(s, t, a): pass
    def handle_endtag(s, t):
        if t in s.void: return
        assert s.stack and s.stack[-1] == t, (t, s.stack[-3:])
        s.stack.pop()
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read()); p.close()
assert p.stack == [], p.stack
EOF
}

resume_after_kill_matches_uninterrupted() {
    make_root
    start_llm "$(shop_script)" full
    run eval --suite "$SUITE" --db-root root --llm-url "$URL" "${SHOP_ARGS[@]}" --out full.jsonl -q
    expect_rc 0
    stable "$T/out" >"$T/full.summary"

    # Item 3's reply is slow: kill -9 while the run waits for it.
    start_llm "$(shop_script 0 3)" slow
    (cd "$T" && exec "$ASKDB" eval --suite "$SUITE" --db-root root --llm-url "$URL" \
        "${SHOP_ARGS[@]}" --out part.jsonl -q >/dev/null 2>&1) &
    local pid=$! i
    for i in $(seq 200); do
        [ "$(nreq "$T/slow.log")" -ge 4 ] && break
        sleep 0.05
    done
    [ "$(nreq "$T/slow.log")" = 4 ] || fail "the slow request never came"
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    [ "$(nreq "$T/part.jsonl")" = 3 ] || fail "$(nreq "$T/part.jsonl") lines after the kill, want 3"

    # Resume with a model that has the remaining replies only.
    start_llm "$(shop_script 3)" rest
    run eval --suite "$SUITE" --db-root root --llm-url "$URL" "${SHOP_ARGS[@]}" --out part.jsonl --resume
    expect_rc 0
    [ "$(stable "$T/out")" = "$(cat "$T/full.summary")" ] || fail "summary after resume differs: $(stable "$T/out" | diff - "$T/full.summary" | head -6)"
    [ "$(nreq "$LLMLOG")" = 13 ] || fail "resumed run asked $(nreq "$LLMLOG") times, want 13 (no repeated work)"
    grep -q '^askdb eval: 13/13 done' "$T/err" || fail "progress does not count resumed items"
    "$PY" - "$T/part.jsonl" "$LLMLOG" <<'EOF' || fail "resumed records"
import json, sys
idx = [json.loads(l)["index"] for l in open(sys.argv[1])]
assert sorted(idx) == list(range(13)) and len(idx) == 13, idx
first = json.loads(open(sys.argv[2]).readline())["body"]["messages"][1]["content"]
assert "What are the 3 most expensive products?" in first, first[-200:]
EOF
    # A second resume has nothing left to do and asks nothing.
    start_llm '[]' none
    run eval --suite "$SUITE" --db-root root --llm-url "$URL" "${SHOP_ARGS[@]}" --out part.jsonl --resume -q
    expect_rc 0
    [ "$(nreq "$LLMLOG")" = 0 ] || fail "a finished run was asked again"
    [ "$(stable "$T/out")" = "$(cat "$T/full.summary")" ] || fail "summary of the finished run differs"
}

# An item whose database was missing was never asked: --resume does it
# again, so a run with a wrong --db-root is continued with the right one
# (it kept the 13 missing_database records before, and asked nothing).
resume_runs_again_what_a_missing_database_kept_from_asking() {
    make_root
    mkdir -p "$T/wrong"
    start_llm '[]' none
    run eval --suite "$SUITE" --db-root wrong --llm-url "$URL" "${SHOP_ARGS[@]}" --out run.jsonl -q
    expect_rc 0
    grep -q '^EX 0/0 = n/a (13 selected, 13 bad items)$' "$T/out" || fail "first run: $(head -1 "$T/out")"
    [ "$(nreq "$LLMLOG")" = 0 ] || fail "a missing database was asked about"
    start_llm "$(shop_script)"
    run eval --suite "$SUITE" --db-root root --llm-url "$URL" "${SHOP_ARGS[@]}" --out run.jsonl --resume
    expect_rc 0
    [ "$(stable "$T/out")" = "$EXPECTED_SUMMARY" ] || fail "summary after resume differs: $(stable "$T/out" | diff - <(printf '%s\n' "$EXPECTED_SUMMARY") | head -8)"
    [ "$(nreq "$LLMLOG")" = 16 ] || fail "$(nreq "$LLMLOG") model requests, want 16"
    grep -q '^askdb eval: 13/13 done, EX 54.5%' "$T/err" || fail "progress: $(tail -2 "$T/err")"
    # The last record of each index is the one that counts: 13 + 13 lines.
    [ "$(nreq "$T/run.jsonl")" = 26 ] || fail "$(nreq "$T/run.jsonl") records, want 26"
}

bird_evidence_goes_to_the_model_as_hint() {
    make_root
    cat >"$T/bird.json" <<'EOF'
[{"question_id": 0, "db_id": "shop", "question": "How many active products?",
  "evidence": "active refers to active = 1", "SQL": "SELECT count(*) FROM products WHERE active = 1",
  "difficulty": "simple"},
 {"question_id": 1, "db_id": "shop", "question": "Gold tier customers?",
  "evidence": "", "SQL": "SELECT id FROM customers WHERE loyalty_tier = 'gold'",
  "difficulty": "challenging"}]
EOF
    start_llm "[$(fence "SELECT count(*) FROM products WHERE active = 1"), $(fence "SELECT id FROM customers WHERE loyalty_tier = 'silver'")]"
    run eval --suite bird.json --db-root root --llm-url "$URL" --model fake
    expect_rc 0
    grep -q '^EX 1/2 = 50.0% (2 selected, 0 bad items)$' "$T/out" || fail "EX line: $(head -1 "$T/out")"
    grep -qE '^  simple +1/1 +100.0%$' "$T/out" || fail "simple level"
    grep -qE '^  challenging +0/1 +0.0%$' "$T/out" || fail "challenging level"
    "$PY" - "$LLMLOG" <<'EOF' || fail "hint not in the prompt"
import json, sys
reqs = [json.loads(l)["body"]["messages"] for l in open(sys.argv[1])]
assert "Hint (knowledge the question relies on): active refers to active = 1" in reqs[0][1]["content"]
assert "Hint" not in reqs[1][1]["content"]   # empty evidence: no hint line
EOF
}

json_lines_suite_with_paths() {
    mkdir -p "$T/dbs" && cp "$SHOP_DB" "$T/dbs/store.db"
    cat >"$T/suite.jsonl" <<'EOF'
{"db": "dbs/store.db", "question": "How many categories?", "gold": "SELECT count(*) FROM categories"}

{"db": "dbs/store.db", "question": "Cheapest product?", "gold": "SELECT name FROM products ORDER BY price LIMIT 1"}
{"db": "dbs/store.db", "question": "No gold here"}
EOF
    start_llm "[$(fence "SELECT count(*) FROM categories"), $(fence "SELECT name FROM products ORDER BY price DESC LIMIT 1")]"
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --out lines.jsonl
    expect_rc 0
    # Each record says its line: a blank line is no item, so the bad
    # item (index 2) is on line 4.
    "$PY" - "$T/lines.jsonl" <<'PY' || fail "records' lines: $(head -c 300 "$T/lines.jsonl")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert [(r["index"], r["line"]) for r in recs] == [(0, 1), (1, 3), (2, 4)], recs
PY
    grep -q '^EX 1/2 = 50.0% (3 selected, 1 bad item)$' "$T/out" || fail "EX line: $(head -1 "$T/out")"
    grep -qE '^  store +1/2 ' "$T/out" || fail "database named after the file"
    grep -qE '^  malformed_item +1$' "$T/out" || fail "malformed item not reported"
    # A name in --db that no item has is said (a slip for "store").
    start_llm "[$(fence "SELECT count(*) FROM categories"), $(fence "SELECT name FROM products ORDER BY price DESC LIMIT 1")]" typo
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --db "store, stroe"
    expect_rc 0
    grep -q "db names 'stroe', which no item of 'suite.jsonl' has" "$T/err" || fail "--db slip: $(head -c 300 "$T/err")"
    grep -q '^EX 1/2 = 50.0% ' "$T/out" || fail "--db with a space: $(head -1 "$T/out")"
    # A blank question is a bad item too: the run goes on (it stopped
    # the whole run with "the question is empty").
    cat >"$T/blank.jsonl" <<'EOF'
{"db": "dbs/store.db", "question": "How many categories?", "gold": "SELECT count(*) FROM categories"}
{"db": "dbs/store.db", "question": "   ", "gold": "SELECT 1"}
{"db": "dbs/store.db", "question": "", "gold": "SELECT 1"}
{"db": "dbs/store.db", "question": "How many categories again?", "gold": "SELECT count(*) FROM categories"}
EOF
    start_llm "[$(fence "SELECT count(*) FROM categories"), $(fence "SELECT count(*) FROM categories")]" blank
    run eval --suite blank.jsonl --llm-url "$URL" --model fake
    expect_rc 0
    grep -q '^EX 2/2 = 100.0% (4 selected, 2 bad items)$' "$T/out" || fail "blank questions: $(head -3 "$T/out") $(head -c 300 "$T/err")"
    # A "db" that names a folder exists and cannot be opened: a bad
    # database that says so, not a missing file (before: missing_database,
    # "no database file 'dbs'").
    printf '%s\n' '{"db": "dbs", "question": "How many categories?", "gold": "SELECT count(*) FROM categories"}' >"$T/folder.jsonl"
    run eval --suite folder.jsonl --llm-url "$URL" --model fake --out folder.out -q
    expect_rc 0
    grep -qE '^  bad_database +1$' "$T/out" || fail "a folder as db: $(cat "$T/out")"
    grep -q '"bad":"bad_database","message":"'"'"'./dbs'"'"' is a folder, not a database file"' "$T/folder.out" || fail "record: $(cat "$T/folder.out")"
}

suite_with_a_byte_order_mark_is_read() {
    # A suite saved with a UTF-8 byte order mark (Windows editors, "CSV
    # UTF-8" exports): its first line was a bad item, "line is not valid
    # JSON", and a JSON array one bad item a line.
    mkdir -p "$T/dbs" && cp "$SHOP_DB" "$T/dbs/store.db"
    local item='{"db": "dbs/store.db", "question": "How many categories?", "gold": "SELECT count(*) FROM categories"}' f
    printf '\357\273\277%s\n' "$item" >"$T/bom.jsonl"
    printf '\357\273\277[\n  %s\n]\n' "$item" >"$T/bom.json"
    for f in bom.jsonl bom.json; do
        start_llm "[$(fence "SELECT count(*) FROM categories")]" "$f"
        run eval --suite "$f" --llm-url "$URL" --model fake -q
        expect_rc 0
        grep -q '^EX 1/1 = 100.0% (1 selected' "$T/out" || fail "$f: $(head -1 "$T/out") $(head -c 300 "$T/err")"
    done
}

# The records' reals are the shortest text that reads back, as everywhere
# else askdb writes JSON: a result's 0.1 + 0.2 keeps its last digits
# (15 digits printed 0.3, the gold's value, for a result that is not).
records_keep_every_digit_of_their_reals() {
    mkdir -p "$T/dbs" && cp "$SHOP_DB" "$T/dbs/store.db"
    cat >"$T/suite.jsonl" <<'EOF'
{"db": "dbs/store.db", "question": "Three tenths?", "gold": "SELECT 0.3 AS x"}
EOF
    start_llm "[$(fence "SELECT 0.1 + 0.2 AS x")]"
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --no-question-check --no-checks --no-values --examples 0 --out run.jsonl --report report.html
    expect_rc 0
    # The report shows the values as the records do (before, with 17
    # digits: the gold 0.3 was 0.29999999999999999).
    grep -q '<td class="n">0.3</td>' "$T/report.html" || fail "gold value in the report: $(grep -o '<td class="n">[^<]*</td>' "$T/report.html" | head -3)"
    grep -q '<td class="n">0.30000000000000004</td>' "$T/report.html" || fail "predicted value in the report"
    "$PY" - "$T/run.jsonl" <<'EOF' || fail "record: $(head -c 400 "$T/run.jsonl")"
import json, re, sys
line = open(sys.argv[1]).read()
r = json.loads(line)
assert r["correct"] is False, r
assert r["pred_result"]["rows"] == [[0.30000000000000004]], r["pred_result"]
assert '[[0.30000000000000004]]' in line and '[[0.3]]' in line, line
for num in re.findall(r'-?[0-9][0-9.eE+-]*', line):
    if '.' in num or 'e' in num.lower():
        assert repr(float(num)) == num or float(num) == int(float(num)), num
EOF
}

sample_is_fixed_by_seed() {
    "$PY" - "$T/suite.jsonl" "$SHOP_DB" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(13):
        f.write(json.dumps({"db": sys.argv[2], "question": "Question %d: how many customers?" % i,
                            "gold": "SELECT count(*) FROM customers"}) + "\n")
EOF
    start_llm "[{\"content\": \"SELECT count(*) FROM customers\", \"repeat\": true}]"
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --sample 4 --seed 7 --out a.jsonl
    expect_rc 0
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --sample 4 --seed 7 --out b.jsonl
    expect_rc 0
    # splitmix64 sample of 4 out of 13 with seed 7 (docs/eval.md): 1 2 6 11
    local a b
    a=$("$PY" -c 'import json,sys; print(*sorted(json.loads(l)["index"] for l in open(sys.argv[1])))' "$T/a.jsonl")
    b=$("$PY" -c 'import json,sys; print(*sorted(json.loads(l)["index"] for l in open(sys.argv[1])))' "$T/b.jsonl")
    [ "$a" = "1 2 6 11" ] || fail "sample is '$a', want '1 2 6 11'"
    [ "$a" = "$b" ] || fail "two runs sampled '$a' and '$b'"
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --sample 4 --seed 7 --limit 2 --out c.jsonl
    a=$("$PY" -c 'import json,sys; print(*sorted(json.loads(l)["index"] for l in open(sys.argv[1])))' "$T/c.jsonl")
    [ "$a" = "1 2" ] || fail "--limit after --sample gave '$a'"
}

jobs_run_databases_in_parallel() {
    local d
    for d in a b c; do cp "$SHOP_DB" "$T/$d.db"; done
    "$PY" - "$T/suite.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(9):
        f.write(json.dumps({"db": "abc"[i % 3] + ".db", "question": "Q%d" % i,
                            "gold": "SELECT count(*) FROM customers"}) + "\n")
EOF
    start_llm '[{"content": "SELECT count(*) FROM customers", "delay_ms": 100, "repeat": true}]'
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --jobs 3 --out run.jsonl
    expect_rc 0
    grep -q '^EX 9/9 = 100.0% (9 selected, 0 bad items)$' "$T/out" || fail "EX line: $(head -1 "$T/out")"
    [ "$(nreq "$T/run.jsonl")" = 9 ] || fail "want 9 records"
    "$PY" - "$T/run.jsonl" <<'EOF' || fail "records are not whole lines / unique"
import json, sys
idx = [json.loads(l)["index"] for l in open(sys.argv[1])]
assert sorted(idx) == list(range(9)), idx
EOF
}

local_model_runs_one_job() {
    cat >"$T/suite.jsonl" <<'EOF'
{"db": "missing.db", "question": "Q", "gold": "SELECT 1"}
EOF
    run eval --suite suite.jsonl --provider local --jobs 4
    expect_rc 0
    grep -q 'note: --jobs 4 lowered to 1: the local model answers one question at a time' "$T/err" || fail "no note: $(cat "$T/err")"
    grep -qE '^  missing_database +1$' "$T/out" || fail "missing database not reported"
}

# Nothing scored (every item bad) is n/a, not 0%: in the progress line
# (it said "EX 0.0%" where the summary said n/a), the summary and the report.
nothing_scored_is_n_a_everywhere() {
    printf '%s\n' '{"db": "missing.db", "question": "Q", "gold": "SELECT 1"}' >"$T/suite.jsonl"
    run eval --suite suite.jsonl --llm-url http://127.0.0.1:9/v1 --model fake --report r.html
    expect_rc 0
    grep -q '^askdb eval: 1/1 done, EX n/a, ' "$T/err" || fail "progress: $(cat "$T/err")"
    grep -q '^EX 0/0 = n/a (1 selected, 1 bad item)$' "$T/out" || fail "summary: $(head -1 "$T/out")"
    grep -q '^repair rate: n/a (no item scored)$' "$T/out" || fail "repair rate: $(grep repair "$T/out")"
    grep -q '<b>n/a</b><span>execution accuracy (EX)</span>' "$T/r.html" || fail "report: no n/a EX card"
    grep -q '<b>n/a</b><span>repair rate</span>' "$T/r.html" || fail "report: no n/a repair card"
    ! grep -q '0\.0%' "$T/err" "$T/out" "$T/r.html" || fail "a 0.0% is left: $(grep -h '0\.0%' "$T/err" "$T/out" "$T/r.html" | head -3)"
}

distinct_removed_unless_keep_distinct() {
    "$PY" -c 'import json,sys; print(json.dumps({"db": sys.argv[1], "question": "Countries?", "gold": "SELECT DISTINCT country FROM customers"}))' "$SHOP_DB" >"$T/suite.jsonl"
    start_llm "[{\"content\": \"SELECT country FROM customers\", \"repeat\": true}]"
    run eval --suite suite.jsonl --llm-url "$URL" --model fake
    grep -q '^EX 1/1 = 100.0%' "$T/out" || fail "official rule: DISTINCT is removed before comparing"
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --keep-distinct
    grep -q '^EX 0/1 = 0.0%' "$T/out" || fail "--keep-distinct: 10 distinct countries are not 60 rows"
}

model_unreachable_stops_with_exit_4() {
    make_root
    run eval --suite "$SUITE" --db-root root --llm-url http://127.0.0.1:9/v1 --model fake --retries 0 --out run.jsonl -q
    expect_rc 4
    grep -q '^askdb eval: stopped: ' "$T/err" || fail "no stop message"
    grep -q '^EX 0/0 = n/a (13 selected, 0 bad items, 13 not run)$' "$T/out" || fail "summary: $(head -1 "$T/out")"
    [ "$(nreq "$T/run.jsonl")" = 0 ] || fail "an unanswered item was recorded"
}

# n_questions N: a JSON-lines suite of N questions on the sample database.
n_questions() {
    "$PY" - "$SHOP_DB" "$1" >"$T/suite.jsonl" <<'EOF'
import json, sys
for i in range(int(sys.argv[2])):
    print(json.dumps({"db": sys.argv[1], "question": "How many customers are there? (%d)" % i, "gold": "SELECT count(*) FROM customers"}))
EOF
}

# A key the provider refuses will be refused for every question: the run
# stops at the first, exit 4, the provider's message on stderr and in the
# item's record (which --resume asks again).
refused_key_stops_at_once_with_exit_4() {
    n_questions 6
    start_llm '[{"status": 401, "body": {"error": {"message": "Incorrect API key provided: sk-bad", "type": "invalid_request_error"}}, "repeat": true}]'
    run eval --suite suite.jsonl --llm-url "$URL" "${SHOP_ARGS[@]}" --api-key sk-bad --out run.jsonl
    expect_rc 4
    grep -q '^askdb eval: stopped: .*answered 401 Unauthorized.*Incorrect API key provided' "$T/err" || fail "stop message: $(cat "$T/err")"
    [ "$(nreq "$LLMLOG")" = 1 ] || fail "$(nreq "$LLMLOG") model requests, want 1"
    grep -q '^EX 0/1 = 0.0% (6 selected, 0 bad items, 5 not run)$' "$T/out" || fail "summary: $(head -1 "$T/out")"
    "$PY" - "$T/run.jsonl" <<'EOF' || fail "record: $(cat "$T/run.jsonl")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 1 and recs[0]["class"] == "model_error", recs
assert "401 Unauthorized" in recs[0]["message"] and "Incorrect API key" in recs[0]["message"], recs[0]["message"]
EOF
    # 403 (a key without access to the model) is as final.
    start_llm '[{"status": 403, "repeat": true}]' forbidden
    run eval --suite suite.jsonl --llm-url "$URL" "${SHOP_ARGS[@]}" --api-key sk-bad
    expect_rc 4
    grep -q '^askdb eval: stopped: .*answered 403 Forbidden' "$T/err" || fail "403: $(cat "$T/err")"
    [ "$(nreq "$LLMLOG")" = 1 ] || fail "403: $(nreq "$LLMLOG") model requests, want 1"
}

# Other model errors may belong to the question (a reply the provider
# cannot make): the run goes on, and stops only after 5 in a row.
other_model_errors_stop_after_five_in_a_row() {
    n_questions 7
    start_llm '[{"status": 404, "repeat": true}]'
    run eval --suite suite.jsonl --llm-url "$URL" "${SHOP_ARGS[@]}" --out run.jsonl
    expect_rc 4
    grep -q '^askdb eval: stopped: the model failed on 5 questions in a row, last: .*answered 404' "$T/err" || fail "stop message: $(cat "$T/err")"
    [ "$(nreq "$T/run.jsonl")" = 5 ] || fail "$(nreq "$T/run.jsonl") records, want 5"
    grep -q '^EX 0/5 = 0.0% (7 selected, 0 bad items, 2 not run)$' "$T/out" || fail "summary: $(head -1 "$T/out")"
}

usage_errors_exit_2() {
    make_root
    run eval
    expect_rc 2
    grep -q 'no suite given' "$T/err" || fail "no suite: $(cat "$T/err")"
    run eval --suite "$SUITE" --resume --db-root root
    expect_rc 2
    grep -q -- '--resume needs --out' "$T/err" || fail "resume without out"
    run eval --suite "$SUITE"
    expect_rc 2
    grep -q -- 'give --db-root' "$T/err" || fail "db_id without db-root: $(cat "$T/err")"
    echo '{"keep": 1}' >"$T/old.jsonl"
    run eval --suite "$SUITE" --db-root root --out old.jsonl
    expect_rc 2
    grep -q "already exists: add --resume" "$T/err" || fail "existing out"
    [ "$(cat "$T/old.jsonl")" = '{"keep": 1}' ] || fail "existing out was touched"
    echo '[{"db_id": ' >"$T/bad.json"
    run eval --suite bad.json --db-root root
    expect_rc 2
    grep -q "is not valid JSON" "$T/err" || fail "bad JSON: $(cat "$T/err")"
    run eval --suite "$SUITE" --db-root root --frobnicate
    expect_rc 2
    run eval --suite "$SUITE" --db-root root --temperature nan
    expect_rc 2
    grep -qF -- "--temperature takes a number from 0 to 2, not 'nan'" "$T/err" || fail "nan temperature: $(cat "$T/err")"
    run eval --suite "$SUITE" --db-root root --db nothere
    expect_rc 2
    grep -q "no item of .* is selected (check --db)" "$T/err" || fail "empty selection"
    run eval --suite "$SUITE" --db-root nowhere
    expect_rc 2
    grep -q -- "--db-root 'nowhere' is not a folder" "$T/err" || fail "db-root check"
    # A folder opens and fails at its first read: said as one, not as a
    # suite "with no entries" or a tables file "expected near end of file"
    # (and a tables file of another shape said nothing after its colon).
    run eval --suite root --db-root root
    expect_rc 2
    grep -qF "cannot read suite 'root': Is a directory" "$T/err" || fail "a folder as suite: $(cat "$T/err")"
    run eval --suite "$SUITE" --db-root root --tables root
    expect_rc 2
    grep -qF "cannot read tables file 'root': it is a folder" "$T/err" || fail "a folder as tables: $(cat "$T/err")"
    echo '{"db_id": "shop"}' >"$T/obj.json"
    run eval --suite "$SUITE" --db-root root --tables obj.json
    expect_rc 2
    grep -qF "cannot read tables file 'obj.json': it is not a JSON array" "$T/err" || fail "an object as tables: $(cat "$T/err")"
}

# eval scores SQL results: a plain-English answer would cost a model
# call per question, count in the calls, tokens and latency it measures,
# and be scored nowhere, so --answer is refused before any question.
answer_is_refused() {
    make_root
    start_llm "$(shop_script)"
    run eval --suite "$SUITE" --db-root root --llm-url "$URL" "${SHOP_ARGS[@]}" --answer --out run.jsonl
    expect_rc 2
    grep -qF -- "askdb eval: --answer is for ask, shell, serve and mcp (see 'askdb help eval')" "$T/err" || fail "no refusal: $(cat "$T/err")"
    [ "$(nreq "$LLMLOG")" = 0 ] || fail "the model was asked"
    [ ! -e "$T/run.jsonl" ] || fail "--out was written"
    run help eval
    ! grep -q -- '--answer' "$T/out" || fail "help eval lists --answer"
    grep -q -- '--examples K' "$T/out" || fail "help eval lost the options after --answer"
}

out_report_and_trace_never_write_a_database() {
    # --out, --report and --trace naming a database (here the one being
    # asked) are refused before anything is written to it.
    mkdir -p "$T/dbs" && cp "$SHOP_DB" "$T/dbs/store.db"
    printf '%s\n' '{"db": "dbs/store.db", "question": "How many categories?", "gold": "SELECT count(*) FROM categories"}' >"$T/suite.jsonl"
    local sum
    sum=$(sha256sum "$T/dbs/store.db" | cut -d' ' -f1)
    start_llm "[$(fence "SELECT count(*) FROM categories")]"
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --out dbs/store.db
    expect_rc 2
    grep -q "cannot write 'dbs/store.db': it is an SQLite database" "$T/err" || fail "--out: $(cat "$T/err")"
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --out dbs/store.db --resume
    expect_rc 2
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --report dbs/store.db
    expect_rc 2
    grep -q "cannot write report 'dbs/store.db': it is an SQLite database" "$T/err" || fail "--report: $(cat "$T/err")"
    [ "$(nreq "$LLMLOG")" = 0 ] || fail "the model was asked before the refusal"
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --trace dbs/store.db
    expect_rc 2
    grep -q "trace file 'dbs/store.db': it is an SQLite database" "$T/err" || fail "--trace: $(cat "$T/err")"
    [ "$(nreq "$LLMLOG")" = 0 ] || fail "the model was asked with a database as the trace"
    [ "$(sha256sum "$T/dbs/store.db" | cut -d' ' -f1)" = "$sum" ] || fail "the database was written"
    [ ! -e "$T/dbs/store.db.tmp" ] || fail "a report .tmp was left"
}

csv_database_of_the_suite_is_never_written() {
    # A CSV file has no first bytes to tell it by, so only its name says
    # it is a database of the suite: the report replaced it with HTML at
    # the end, and --out --resume appended the records to it (each ran
    # before; --trace was refused already). Refused before anything is
    # asked, under any name of it.
    printf 'id,name\n1,Audio\n2,Books\n' >"$T/cats.csv"
    ln "$T/cats.csv" "$T/hard.csv"
    mkdir "$T/alt" && cp "$T/cats.csv" "$T/alt/cats.csv"
    printf '%s\n' '{"db": "cats.csv", "question": "How many categories?", "gold": "SELECT count(*) FROM cats"}' >"$T/suite.jsonl"
    local sum o
    sum=$(sha256sum "$T/cats.csv" | cut -d' ' -f1)
    start_llm "[$(fence "SELECT count(*) FROM cats")]"
    # (--db-url names the file asked in the gold database's place.)
    for o in "--report cats.csv" "--report ./hard.csv" "--out cats.csv --resume" \
             "--out hard.csv --resume" "--trace cats.csv" \
             "--db-url alt/{db_id}.csv --report alt/cats.csv" \
             "--db-url alt/{db_id}.csv --out alt/cats.csv --resume"; do
        # shellcheck disable=SC2086
        run eval --suite suite.jsonl --llm-url "$URL" --model fake -q $o
        expect_rc 2
        grep -qE "it is (a|the) database (of the suite|being asked) \(askdb never writes to databases" "$T/err" ||
            fail "$o: $(head -c 300 "$T/err")"
    done
    [ "$(sha256sum "$T/cats.csv" | cut -d' ' -f1)" = "$sum" ] || fail "the CSV database was written: $(head -c 200 "$T/cats.csv")"
    [ "$(sha256sum "$T/alt/cats.csv" | cut -d' ' -f1)" = "$sum" ] || fail "the --db-url CSV was written: $(head -c 200 "$T/alt/cats.csv")"
    [ "$(nreq "$LLMLOG")" = 0 ] || fail "the model was asked before a refusal"
}

dash_names_no_output_file() {
    # "--out -" (standard output to many programs) made a file called "-"
    # in the working directory without a word, as did --report and
    # --trace, and ask's --trace: refused before anything is asked.
    mkdir -p "$T/dbs" && cp "$SHOP_DB" "$T/dbs/store.db"
    printf '%s\n' '{"db": "dbs/store.db", "question": "How many categories?", "gold": "SELECT count(*) FROM categories"}' >"$T/suite.jsonl"
    start_llm "[$(fence "SELECT count(*) FROM categories")]"
    local o
    for o in "--out -" "--out - --resume" "--report -" "--trace -"; do
        # shellcheck disable=SC2086
        run eval --suite suite.jsonl --llm-url "$URL" --model fake -q $o
        expect_rc 2
        grep -qF "'-' names no file here (askdb writes it to a file, not to standard output): give a file name, or ./- for one called -" "$T/err" ||
            fail "$o: $(head -c 300 "$T/err")"
        [ ! -e "$T/-" ] || fail "$o made a file called -"
    done
    run ask --llm-url "$URL" --model fake --trace - dbs/store.db "How many categories?"
    expect_rc 2
    grep -qF "cannot open trace file '-': '-' names no file here" "$T/err" || fail "ask --trace -: $(head -c 300 "$T/err")"
    [ ! -e "$T/-" ] || fail "ask --trace - made a file called -"
    [ "$(nreq "$LLMLOG")" = 0 ] || fail "the model was asked before a refusal"
}

out_and_report_never_replace_the_suite_each_other_or_a_device() {
    # Refused before anything is asked: the suite itself, --out and
    # --report naming one file, a device (the report replaced /dev/full
    # with a regular file when run as root), a folder that is not there.
    mkdir -p "$T/dbs" && cp "$SHOP_DB" "$T/dbs/store.db"
    printf '%s\n' '{"db": "dbs/store.db", "question": "How many categories?", "gold": "SELECT count(*) FROM categories"}' >"$T/suite.jsonl"
    local sum o
    sum=$(sha256sum "$T/suite.jsonl" | cut -d' ' -f1)
    start_llm "[$(fence "SELECT count(*) FROM categories")]"
    # --trace appends all run long: into the suite it made it JSON no
    # more, beside the records it broke --resume, and the report replaced
    # it at the end (each ran before).
    : >"$T/old.y"
    for o in "--report suite.jsonl" "--out suite.jsonl --resume" "--out same.x --report same.x" \
             "--report /dev/null" "--out /dev/zero --resume" "--report nodir/x.html" \
             "--trace suite.jsonl" "--out same.y --trace same.y" "--out old.y --trace ./old.y" \
             "--out new.y --trace ../${T##*/}/new.y" "--report same.z --trace same.z" \
             "--out new.w --report ./new.w"; do
        # shellcheck disable=SC2086
        run eval --suite suite.jsonl --llm-url "$URL" --model fake $o
        expect_rc 2
        grep -qE "it is the suite being run|name the same file|not a regular file|folder does not exist" "$T/err" ||
            fail "$o: $(head -c 300 "$T/err")"
    done
    # The --tables file is read by the run: the report replaced it at the
    # end, --out --resume and --trace appended to it (each ran before).
    printf '%s\n' '[{"db_id": "store", "table_names_original": ["categories"]}]' >"$T/tables.json"
    local tsum
    tsum=$(sha256sum "$T/tables.json" | cut -d' ' -f1)
    for o in "--report tables.json" "--out ./tables.json --resume" "--trace tables.json"; do
        # shellcheck disable=SC2086
        run eval --suite suite.jsonl --tables tables.json --llm-url "$URL" --model fake $o
        expect_rc 2
        grep -q "it is the --tables file of the run" "$T/err" || fail "$o: $(head -c 300 "$T/err")"
    done
    [ "$(sha256sum "$T/tables.json" | cut -d' ' -f1)" = "$tsum" ] || fail "the --tables file was written"
    [ "$(nreq "$LLMLOG")" = 0 ] || fail "the model was asked before a refusal"
    [ "$(sha256sum "$T/suite.jsonl" | cut -d' ' -f1)" = "$sum" ] || fail "the suite was written"
    [ -c /dev/null ] || fail "/dev/null is no longer a device"
    # A trace that cannot be written stops the run and says so (exit 0
    # before, the trace silently empty).
    if [ -w /dev/full ]; then
        run eval --suite suite.jsonl --llm-url "$URL" --model fake --trace /dev/full -q
        expect_rc 2
        grep -q "cannot write trace file '/dev/full'" "$T/err" || fail "--trace /dev/full: $(head -c 300 "$T/err")"
        start_llm "[$(fence "SELECT count(*) FROM categories")]" after
    fi
    # A report through a link replaces the file the link names.
    : >"$T/target.html"
    ln -s target.html "$T/link.html"
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --report link.html -q
    expect_rc 0
    [ -L "$T/link.html" ] && grep -q '<html' "$T/target.html" || fail "the link was replaced, or the target not written"
}

ctrl_c_finishes_the_question_and_reports_what_was_done() {
    # The first Ctrl-C lets the question being asked finish, asks no more,
    # and prints the summary and writes the report of what was done.
    mkdir -p "$T/dbs" && cp "$SHOP_DB" "$T/dbs/store.db"
    cat >"$T/suite.jsonl" <<'EOF'
{"db": "dbs/store.db", "question": "How many categories?", "gold": "SELECT count(*) FROM categories"}
{"db": "dbs/store.db", "question": "How many products?", "gold": "SELECT count(*) FROM products"}
{"db": "dbs/store.db", "question": "How many orders?", "gold": "SELECT count(*) FROM orders"}
EOF
    local slow pid i
    slow=$("$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); d["delay_ms"]=2500; print(json.dumps(d))' "$(fence "SELECT count(*) FROM products")")
    start_llm "[$(fence "SELECT count(*) FROM categories"), $slow, $(fence "SELECT count(*) FROM orders")]"
    (cd "$T" && exec "$ASKDB" eval --suite suite.jsonl --llm-url "$URL" --model fake --out o.jsonl --report r.html -q) </dev/null >"$T/out" 2>"$T/err" &
    pid=$!
    # Up to 30 s for the second request (an ASan build under load takes
    # more than the 10 s this waited before).
    for i in $(seq 600); do
        [ "$(nreq "$LLMLOG")" -ge 2 ] && break
        sleep 0.05
    done
    [ "$(nreq "$LLMLOG")" = 2 ] || fail "the slow request never came"
    kill -INT "$pid"
    wait "$pid"
    RC=$?
    expect_rc 130
    grep -q "stopping after the questions being asked" "$T/err" || fail "no word of the stop: $(head -c 300 "$T/err")"
    grep -q '^EX 2/2 = 100.0% (3 selected, 0 bad items, 1 not run)$' "$T/out" || fail "summary: $(head -3 "$T/out")"
    [ "$(nreq "$LLMLOG")" = 2 ] || fail "asked $(nreq "$LLMLOG") times after the stop"
    grep -q '<html' "$T/r.html" || fail "no report"
    [ "$(wc -l <"$T/o.jsonl")" = 2 ] || fail "records: $(wc -l <"$T/o.jsonl")"
    # The help's exit codes say so too.
    run help eval
    tr '\n' ' ' <"$T/out" | grep -qF "130 Ctrl-C" || fail "help eval lacks exit code 130"
}

learned_pair_of_the_question_scored_is_left_out() {
    # A learned pair of the very question the eval scores is its gold: it
    # never reaches the prompt; another question still gets it.
    mkdir -p "$T/dbs" && cp "$SHOP_DB" "$T/dbs/store.db"
    cat >"$T/suite.jsonl" <<'EOF'
{"db": "dbs/store.db", "question": "How many orders are there?", "gold": "SELECT count(*) FROM orders"}
{"db": "dbs/store.db", "question": "How many orders were shipped?", "gold": "SELECT count(*) FROM orders WHERE status = 'shipped'"}
EOF
    run learn dbs/store.db --memory mem.db --question "How many orders are there?" --sql "SELECT count(*) AS learned_n FROM orders"
    expect_rc 0
    start_llm "[$(fence "SELECT count(*) FROM orders"), $(fence "SELECT count(*) FROM orders WHERE status = 'shipped'")]"
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --memory mem.db -q
    expect_rc 0
    "$PY" - "$LLMLOG" <<'EOF' || fail "examples in the prompts: $(head -c 600 "$LLMLOG")"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
texts = [" ".join(m["content"] for m in r["body"]["messages"]) for r in reqs]
assert len(texts) == 2, len(texts)
assert "learned_n" not in texts[0], texts[0][-400:]
assert "learned_n" in texts[1], texts[1][-400:]
EOF
}

resume_drops_a_half_written_line() {
    # A run killed in the middle of a line: resuming drops that half (its
    # item runs again) and the file stays valid JSON lines.
    mkdir -p "$T/dbs" && cp "$SHOP_DB" "$T/dbs/store.db"
    cat >"$T/suite.jsonl" <<'EOF'
{"db": "dbs/store.db", "question": "How many categories?", "gold": "SELECT count(*) FROM categories"}
{"db": "dbs/store.db", "question": "How many products?", "gold": "SELECT count(*) FROM products"}
EOF
    start_llm "[$(fence "SELECT count(*) FROM categories"), $(fence "SELECT count(*) FROM products")]" first
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --out o.jsonl -q
    expect_rc 0
    truncate -s -40 "$T/o.jsonl"
    start_llm "[$(fence "SELECT count(*) FROM products")]" again
    run eval --suite suite.jsonl --llm-url "$URL" --model fake --out o.jsonl --resume -q
    expect_rc 0
    [ "$(nreq "$LLMLOG")" = 1 ] || fail "asked $(nreq "$LLMLOG") times, want 1"
    "$PY" - "$T/o.jsonl" <<'EOF' || fail "o.jsonl is not JSON lines: $(head -c 400 "$T/o.jsonl")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert sorted(r["index"] for r in recs) == [0, 1], [r["index"] for r in recs]
EOF
}

# --db-url asks another copy of the data (another engine, in real use)
# while the gold runs on the SQLite file: a copy that lost one customer
# turns the right count wrong; a URL askdb cannot read stops the run.
db_url_asks_elsewhere_gold_stays() {
    make_root
    mkdir -p "$T/copies"
    cp "$SHOP_DB" "$T/copies/shop.same"
    cp "$SHOP_DB" "$T/copies/shop.less"
    "$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA foreign_keys=OFF"); c.execute("DELETE FROM customers WHERE id=(SELECT max(id) FROM customers)"); c.commit()' "$T/copies/shop.less"
    start_llm "$(shop_script)"
    run eval --suite "$SUITE" --db-root root --db-url 'copies/{db_id}.same' --limit 1 --llm-url "$URL" "${SHOP_ARGS[@]}" -q
    expect_rc 0
    grep -q '^EX 1/1 = 100.0%' "$T/out" || fail "same copy: $(head -n1 "$T/out")"
    start_llm "$(shop_script)"
    run eval --suite "$SUITE" --db-root root --db-url 'copies/{db_id}.less' --limit 1 --llm-url "$URL" "${SHOP_ARGS[@]}" -q
    expect_rc 0
    grep -q '^EX 0/1 = 0.0%' "$T/out" || fail "smaller copy: $(head -n1 "$T/out")"
    run eval --suite "$SUITE" --db-root root --db-url 'gopher://u:s3cret@h/{db_id}' --limit 1 --llm-url "$URL" "${SHOP_ARGS[@]}" -q
    [ "$RC" != 0 ] || fail "an unknown URL scheme was accepted"
    grep -q 'gopher:// is not a database URL' "$T/err" || fail "unknown scheme: $(cat "$T/err")"
    ! grep -q s3cret "$T/err" "$T/out" || fail "the password was printed"
}

help_lists_eval() {
    run help
    grep -q '^  eval --suite FILE ' "$T/out" || fail "eval not in help"
    run help eval
    expect_rc 0
    grep -q -- '--resume' "$T/out" || fail "help eval"
    # The exit codes close the help, after every option (as ask's
    # "Other:" and serve's notes do), not between two lists of options.
    "$PY" - "$T/out" <<'EOF' || fail "help eval order: $(grep -E '^[A-Z]' "$T/out" | cut -d: -f1 | tr '\n' '/')"
import sys
heads = [l.split(":")[0] for l in open(sys.argv[1]) if l[:1].isupper()]
assert heads[-1] == "Exit codes", heads
assert heads.index("Agent and limits") + 1 == heads.index("Agent techniques (docs/agent.md; defaults follow the measurements)"), heads
EOF
}

TESTS=(spider_suite_scores_exactly report_is_self_contained_and_escaped
       resume_after_kill_matches_uninterrupted resume_runs_again_what_a_missing_database_kept_from_asking
       bird_evidence_goes_to_the_model_as_hint
       json_lines_suite_with_paths suite_with_a_byte_order_mark_is_read records_keep_every_digit_of_their_reals sample_is_fixed_by_seed jobs_run_databases_in_parallel
       local_model_runs_one_job nothing_scored_is_n_a_everywhere distinct_removed_unless_keep_distinct
       in_process_scores_the_same
       model_unreachable_stops_with_exit_4 refused_key_stops_at_once_with_exit_4
       other_model_errors_stop_after_five_in_a_row usage_errors_exit_2 answer_is_refused
       out_report_and_trace_never_write_a_database out_and_report_never_replace_the_suite_each_other_or_a_device
       csv_database_of_the_suite_is_never_written dash_names_no_output_file
       resume_drops_a_half_written_line learned_pair_of_the_question_scored_is_left_out
       ctrl_c_finishes_the_question_and_reports_what_was_done
       db_url_asks_elsewhere_gold_stays
       help_lists_eval)

PASSED=0
FAILED=0
for name in "${TESTS[@]}"; do
    if [ -n "$FILTER" ] && ! printf '%s\n' "$name" | grep -qE -- "$FILTER"; then
        continue
    fi
    T="$TMP/t/$name"
    mkdir -p "$T"
    : >"$T/.pids"
    ( "$name" ) >>"$T/.log" 2>&1
    rc=$?
    while read -r pid; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done <"$T/.pids"
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
