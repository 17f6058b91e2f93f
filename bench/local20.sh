#!/usr/bin/env bash
# local20.sh - the local-model measurement of the local-model issue: 20
# fixed questions (seed 3) from two training databases (farm, student_1),
# asked in one process so the schema prefix stays in the KV cache, with and
# without SQL-constrained decoding. Needs `make llama model`.
set -euo pipefail
cd "$(dirname "$0")/.."
M=$(scripts/models.sh --path default)
S=${SPIDER_DIR:-../shared/bench/spider-train}
mkdir -p build/bench
for mode in grammar no-grammar; do
    flag=; [ "$mode" = no-grammar ] && flag=--no-grammar
    rm -f "build/bench/local20-$mode.jsonl"
    build/askdb eval --suite "$S/train.json" --db-root "$S/database" \
        --db farm,student_1 --sample 20 --seed 3 --model "$M" $flag \
        --out "build/bench/local20-$mode.jsonl" \
        --report "build/bench/local20-$mode.html" -q \
        > "build/bench/local20-$mode.txt"
    cat "build/bench/local20-$mode.txt"
done
