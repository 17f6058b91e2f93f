#!/usr/bin/env bash
# bench/ablation.sh - what each agent technique is worth, measured.
#
#   bash bench/ablation.sh [CONFIG ...]        (default: every config)
#   bash bench/ablation.sh --table             the table of the runs so far
#   bash bench/ablation.sh --prewarm           fill the prompt-cache files
#
# Runs `askdb eval` with the default local model over one fixed, grouped
# sample of Spider's training split - ABL_DBS databases drawn with seed
# ABL_SEED, ABL_PER_DB questions of each (default 50 x 6 = 300) - once per
# configuration, then prints the ablation table: EX, the questions gained
# and lost against plain with the exact McNemar p-value of that difference,
# EX by Spider difficulty, latency p50 (all questions, the first of each
# database - which pays for the schema prompt unless a prompt-cache file
# holds it - and the later ones) and p90, prompt tokens and model calls
# per question. Each run is resumable (delete build/bench/ablation/<config>.jsonl to redo one).
#
# Configurations (flags added to `askdb eval`):
#   plain       the bare generate-validate-execute-repair loop
#   values      plain + value retrieval
#   linking     plain + schema linking
#   checks      plain + checks before/after execution
#   qcheck      plain + the question check
#   cand3       plain + 3 candidates voted on by their results
#   plan        plain + planning of multi-step questions
#   examples    plain + 3 learned pairs in the prompt: the store holds the
#               OTHER training questions of the same databases (never the
#               evaluated ones), as if a user had taught askdb with them
#   full        every technique on at once (values, linking, checks,
#               question check, 3 candidates, planning, 3 examples)
#   default     askdb's defaults (what `askdb ask` does)
#
# --prewarm asks one question of each sampled database (the sample read
# from a finished run) with linking off, so that the prompt-cache file of
# its whole schema exists before the configurations are timed: then the
# first question of each database costs the same in every configuration.
# Each run appends the askdb binary it used (sha256, version) to
# <config>.binary, so a run resumed with another binary says so.
#
# Environment: ASKDB, SPIDER, MODEL (as bench/eval_baseline.sh), ABL_DBS,
# ABL_PER_DB, ABL_SEED (default 7), ABL_OUT (default build/bench/ablation),
# ABL_FLAGS (more flags for every run, e.g. --threads 2).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SPIDER=${SPIDER:-$ROOT/../shared/bench/spider-train}
ASKDB=${ASKDB:-$ROOT/build/askdb}
OUT=${ABL_OUT:-$ROOT/build/bench/ablation}
DBS=${ABL_DBS:-50}
PER_DB=${ABL_PER_DB:-6}
SEED=${ABL_SEED:-7}

PLAIN="--no-values --no-linking --no-checks --no-question-check --no-plan --examples 0 --candidates 1"
declare -A CONF=(
    [plain]="$PLAIN"
    [values]="${PLAIN/--no-values/--values}"
    [linking]="${PLAIN/--no-linking/}"
    [checks]="${PLAIN/--no-checks/}"
    [qcheck]="${PLAIN/--no-question-check/}"
    [cand3]="${PLAIN/--candidates 1/--candidates 3}"
    [plan]="${PLAIN/--no-plan/--plan}"
    [examples]="${PLAIN/--examples 0/--examples 3} --memory $OUT/memory.sqlite"
    [full]="--values --plan --candidates 3 --examples 3 --memory $OUT/memory.sqlite"
    [default]=""
)
ORDER=(plain values linking checks qcheck cand3 plan examples full default)

# The store for `examples`: every training pair of the sampled databases
# except the sampled questions themselves (their indexes are read from a
# finished run of another configuration: one with all DBS x PER_DB items,
# so that a run still going cannot leak evaluated questions into the store).
# finished_run WHY: the records of a run with all DBS x PER_DB items (the
# whole sample) on stdout; exits saying WHY when there is none.
finished_run() {
    local f
    for f in "$OUT"/*.jsonl; do
        [ -f "$f" ] && [ "$(wc -l < "$f")" -ge $((DBS * PER_DB)) ] && { echo "$f"; return 0; }
    done
    echo "ablation.sh: $1" >&2
    exit 2
}

build_memory() {
    local done_run db
    [ -s "$OUT/memory.sqlite" ] && return 0
    done_run=$(finished_run "finish another config first (examples needs the whole selection)") || exit 2
    python3 - "$SPIDER/train.json" "$done_run" "$OUT/pairs" <<'PY'
import json, os, sys
train = json.load(open(sys.argv[1]))
recs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
used = {r["index"] for r in recs}
dbs = {r["db"] for r in recs}
os.makedirs(sys.argv[3], exist_ok=True)
for db in dbs:
    pairs = [{"db_id": db, "question": it["question"], "query": it["query"]}
             for i, it in enumerate(train) if it["db_id"] == db and i not in used]
    json.dump(pairs, open(os.path.join(sys.argv[3], db + ".json"), "w"))
PY
    for f in "$OUT"/pairs/*.json; do
        db=$(basename "$f" .json)
        "$ASKDB" learn "$SPIDER/database/$db/$db.sqlite" --file "$f" \
            --memory "$OUT/memory.sqlite" >/dev/null 2>>"$OUT/learn.err" || true
    done
}

[ -x "$ASKDB" ] || { echo "ablation.sh: build askdb first (make)" >&2; exit 2; }
[ -f "$SPIDER/train.json" ] || { echo "ablation.sh: no Spider data at $SPIDER" >&2; exit 2; }
if [ -z "${MODEL:-}" ]; then
    MODEL=$("$ROOT/scripts/models.sh" --path default) || {
        echo "ablation.sh: the default model is not fetched (scripts/models.sh default)" >&2
        exit 2
    }
fi
mkdir -p "$OUT"
# 50 schemas' prompt-cache files (~20 MB each) must all stay.
export ASKDB_PROMPT_CACHE_MB=${ASKDB_PROMPT_CACHE_MB:-4096}
configs=("$@")
TABLE_ONLY=0
if [ "${1:-}" = --table ]; then   # the table of the runs so far, nothing run
    TABLE_ONLY=1
    configs=()
fi
if [ "${1:-}" = --prewarm ]; then
    done_run=$(finished_run "--prewarm needs a finished run (the sample)") || exit 2
    python3 -c 'import json, sys
seen = []
for l in open(sys.argv[1]):
    d = json.loads(l)["db"]
    if d not in seen:
        seen.append(d)
print("\n".join(seen))' "$done_run" | while read -r db; do
        # shellcheck disable=SC2086
        "$ASKDB" ask --no-linking --no-values --no-question-check --examples 0 \
            --max-attempts 1 --max-tokens 1 --model "$MODEL" ${ABL_FLAGS:-} \
            -f csv "$SPIDER/database/$db/$db.sqlite" "How many rows are there?" \
            </dev/null >/dev/null 2>&1 || true
        echo "prewarmed $db" >&2
    done
    exit 0
fi
[ ${#configs[@]} -gt 0 ] || [ "$TABLE_ONLY" = 1 ] || configs=("${ORDER[@]}")

for c in "${configs[@]}"; do
    [ -n "${CONF[$c]+x}" ] || { echo "ablation.sh: no config '$c' (${ORDER[*]})" >&2; exit 2; }
    case $c in examples|full) build_memory ;; esac
    echo "== $c: ${CONF[$c]:-(defaults)}" >&2
    echo "$(date -u +%FT%TZ) $(sha256sum "$ASKDB" | cut -c1-16) $("$ASKDB" --version)" \
        >> "$OUT/$c.binary"
    # shellcheck disable=SC2086
    "$ASKDB" eval --suite "$SPIDER/train.json" --db-root "$SPIDER/database" \
        --tables "$SPIDER/tables.json" \
        --sample-dbs "$DBS" --per-db "$PER_DB" --seed "$SEED" \
        --provider local --model "$MODEL" \
        --out "$OUT/$c.jsonl" --resume --report "$OUT/$c.html" -q \
        ${CONF[$c]} ${ABL_FLAGS:-} > "$OUT/$c.txt"
done

python3 - "$OUT" "${ORDER[@]}" <<'PY'
# EX, latency, tokens and calls per config; against plain on the same
# questions: questions gained (+) and lost (-), and the exact two-sided
# McNemar p-value of that difference (small p: unlikely to be chance).
# "plain" is the plain run made with the same askdb build as the config
# (<config>.binary): plain.jsonl, or a kept older one, plain-<commit>.jsonl.
# Two builds can differ by a few questions where nothing asked differs
# (floating-point order), so a config is only compared within its build.
import glob, json, math, os, statistics, sys
out, order = sys.argv[1], sys.argv[2:]
plains = sorted(os.path.basename(p)[:-6]
                for p in glob.glob(os.path.join(out, "plain*.jsonl")))
order = [c for c in order if c != "plain"]
order[0:0] = plains

def builds(c):
    p = os.path.join(out, c + ".binary")
    if not os.path.exists(p):
        return set()
    return {l.split()[1] for l in open(p) if len(l.split()) > 1}

plain_builds = {p: builds(p) for p in plains}

def base_of(c):
    b = builds(c)
    for p in plains:
        if b and plain_builds[p] == b:
            return p
    return "plain"

loaded = {}   # a plain's records serve every config of its build

def load(c):
    if c not in loaded:
        p = os.path.join(out, c + ".jsonl")
        recs = ([json.loads(l) for l in open(p) if l.strip()]
                if os.path.exists(p) else [])
        loaded[c] = {r["index"]: r for r in recs if not r.get("bad")} or None
    return loaded[c]

def mcnemar(b, c):
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)

LEVELS = ("easy", "medium", "hard", "extra")
print("| config | EX | vs plain | McNemar p | %s | p50 latency |"
      " p50 first q/db | p50 later q | p90 latency | prompt tokens/q |"
      " model calls/q |" % " | ".join(LEVELS))
print("| --- |" + " ---: |" * 13)
for c in order:
    ev = load(c)
    if ev is None:
        continue
    bname = base_of(c)
    base = load(bname)
    rs = list(ev.values())
    ok = sum(1 for r in rs if r.get("correct"))
    lat = [r["ms"]["total"] / 1000 for r in rs]
    p90 = sorted(lat)[math.ceil(0.9 * len(lat)) - 1]   # nearest rank
    levels = " | ".join(
        "%d/%d" % (sum(1 for r in rs if r["difficulty"] == d and r.get("correct")),
                   sum(1 for r in rs if r["difficulty"] == d))
        for d in LEVELS)
    seen, first, later = set(), [], []
    for r in rs:   # in run order: the first question of each database
        (later if r["db"] in seen else first).append(r["ms"]["total"] / 1000)
        seen.add(r["db"])
    pt = sum(r.get("prompt_tokens", 0) for r in rs) / len(rs)
    calls = sum(r.get("llm_calls", 0) for r in rs) / len(rs)
    vs, p = "", ""
    if base is not None and not c.startswith("plain"):
        common = [i for i in ev if i in base]
        gain = sum(1 for i in common
                   if ev[i].get("correct") and not base[i].get("correct"))
        lost = sum(1 for i in common
                   if base[i].get("correct") and not ev[i].get("correct"))
        vs = "+%d/-%d" % (gain, lost)
        if bname != "plain":
            vs += " (vs %s)" % bname
        p = "%.2f" % mcnemar(gain, lost)
    print("| %s | %.1f%% (%d/%d) | %s | %s | %s | %.1f s | %.1f s | %s | %.1f s |"
          " %.0f | %.2f |" %
          (c, 100 * ok / len(rs), ok, len(rs), vs, p, levels,
           statistics.median(lat), statistics.median(first),
           "%.1f s" % statistics.median(later) if later else "", p90,
           pt, calls))
PY
