#!/usr/bin/env bash
# bench/eval_baseline.sh - EX of the default local model on a fixed Spider sample.
#
#   bash bench/eval_baseline.sh [more askdb eval options]
#
# The fixed sample: 200 questions of Spider's training split
# (../shared/bench/spider-train/train.json), drawn by `askdb eval --sample
# 200 --seed 1` (splitmix64, the same on every machine; docs/eval.md). The
# model is the default local one (scripts/models.sh default), so the run
# needs no network. Results go to build/bench/eval_baseline.jsonl (one line
# per question, resumed if the run was interrupted: delete the file to
# start afresh, e.g. after changing the model or the prompt) and
# build/bench/eval_baseline.html; the summary (EX overall, by hardness and
# database, latency p50/p90, tokens per question, repair rate, error
# classes) is printed at the end.
#
# Environment: ASKDB (default build/askdb), SPIDER (default
# ../shared/bench/spider-train), MODEL (default: the default local model),
# OUT (default build/bench/eval_baseline.jsonl).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SPIDER=${SPIDER:-$ROOT/../shared/bench/spider-train}
ASKDB=${ASKDB:-$ROOT/build/askdb}
OUT=${OUT:-$ROOT/build/bench/eval_baseline.jsonl}
REPORT=${OUT%.jsonl}.html
SAMPLE=200
SEED=1

[ -x "$ASKDB" ] || { echo "eval_baseline.sh: build askdb first (make)" >&2; exit 2; }
[ -f "$SPIDER/train.json" ] || { echo "eval_baseline.sh: no Spider data at $SPIDER" >&2; exit 2; }
if [ -z "${MODEL:-}" ]; then
    MODEL=$("$ROOT/scripts/models.sh" --path default) || {
        echo "eval_baseline.sh: the default model is not fetched (scripts/models.sh default)" >&2
        exit 2
    }
fi
mkdir -p "$(dirname "$OUT")"

set -x
exec "$ASKDB" eval \
    --suite "$SPIDER/train.json" --db-root "$SPIDER/database" \
    --tables "$SPIDER/tables.json" \
    --sample "$SAMPLE" --seed "$SEED" \
    --provider local --model "$MODEL" \
    --out "$OUT" --resume --report "$REPORT" "$@"
