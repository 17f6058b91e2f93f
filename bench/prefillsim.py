#!/usr/bin/env python3
"""prefillsim.py EVAL_JSONL TRACE[.gz] [S:D ...]: what a faster prompt
evaluation (S times as fast) with a slower or faster decode step (D times
the time) would make of a run's latency.

Not built; this is the measurement that decided against AMX (docs/agent.md,
"A cold first question"). Each question's time is split in two: the prompt's
evaluation, taken as the time to first token of its greedy replies (the
trace's reply events of candidate 1, one an attempt; it includes the first
decode step, about 80 ms), and the rest (decoding, validation, execution).
The modeled time is prompt / S + rest * D. The rest is not all decoding,
so D overstates a slower step a little. Prints the run's own p50/p90 and
the modeled ones for each S:D (default: the AMX build's 1.6:1.13, the same
prompt with today's decoding 1.6:1, and 2:1).

    python3 bench/prefillsim.py bench/results/validation/settle.jsonl \\
        bench/results/validation/settle.trace.gz
"""
import gzip
import json
import sys


def pct(a, p):
    a = sorted(a)
    k = (len(a) - 1) * p
    f = int(k)
    c = min(f + 1, len(a) - 1)
    return a[f] + (a[c] - a[f]) * (k - f)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    recs = [json.loads(l) for l in open(sys.argv[1])]
    opener = gzip.open if sys.argv[2].endswith('.gz') else open
    ids, ttft = [], {}
    with opener(sys.argv[2], 'rt') as f:
        for line in f:
            e = json.loads(line)
            if e.get('step') == 'question':
                ids.append(e['request_id'])
            elif (e.get('step') == 'reply' and 'ttft_ms' in e and
                  e.get('candidate', 1) == 1):
                ttft[e['request_id']] = ttft.get(e['request_id'], 0) + \
                    e['ttft_ms']
    if len(ids) != len(recs):
        sys.exit('prefillsim: %d questions in the trace, %d records' %
                 (len(ids), len(recs)))
    whatif = [tuple(map(float, a.split(':'))) for a in sys.argv[3:]] or \
        [(1.6, 1.13), (1.6, 1.0), (2.0, 1.0)]
    total = [r['ms']['total'] for r in recs]
    prompt = [min(ttft.get(i, 0.0), t) for i, t in zip(ids, total)]
    print('run: p50 %.2f s, p90 %.2f s (prompt %.0f%% of all time)' %
          (pct(total, .5) / 1e3, pct(total, .9) / 1e3,
           100 * sum(prompt) / sum(total)))
    for s, d in whatif:
        t = [p / s + (x - p) * d for p, x in zip(prompt, total)]
        print('prompt x%.2f, decode time x%.2f: p50 %.2f s, p90 %.2f s' %
              (s, d, pct(t, .5) / 1e3, pct(t, .9) / 1e3))


if __name__ == '__main__':
    main()
