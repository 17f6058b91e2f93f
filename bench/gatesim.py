#!/usr/bin/env python3
"""gatesim.py TRACE EVAL_JSONL [DB_ROOT]: what a lower candidate gate
(--candidate-gate) would have given in a run with the default 0.5. A
question whose greedy reply's least token probability (min_p_words) is at
or above the gate answers with the greedy SQL alone (run on the SQLite
file read-only and compared with the gold: repairs are not replayed); its
time is estimated as the greedy reply's time to first token plus 73 ms a
token (one row a step on the 2-core Xeon). The others keep the run's answer
and time. docs/agent.md, "Sooner".
"""
import os, sys
from tracesql import load, sql_of, run, same

recs, byreq, root = load(sys.argv)
rows = []
for rid, evs in byreq.items():
    q = next((e['question'] for e in evs if e.get('step') == 'question'), None)
    if q is None or q not in recs: continue
    r = recs[q]
    reps = [e for e in evs if e.get('step') == 'reply' and e.get('attempt') == 1]
    g = [e for e in reps if e.get('candidate', 1) == 1]
    if not g: continue
    g = g[0]
    db = os.path.join(root, r['db'], r['db'] + '.sqlite')
    gold = run(db, r['gold']); ordered = 'order by' in r['gold'].lower()
    gok = same(run(db, sql_of(g['reply'], whole=True)), gold, ordered)
    n = len(reps)
    est = g['ttft_ms'] + g['completion_tokens'] * 73.0
    rows.append((g.get('min_p_words', 1), n, r['correct'], gok, r['ms']['total'], est))
for gate in [0.5, 0.4, 0.3, 0.2, 0.1]:
    ok = 0; t = []
    for mpw, n, final, gok, ms, est in rows:
        if n > 1 and mpw >= gate:
            ok += gok; t.append(est)
        else:
            ok += final; t.append(ms)
    t.sort()
    p = lambda q: t[min(len(t) - 1, int(q * len(t) + 0.999) - 1)]
    print('gate %.1f: %d/%d right, unsure %d, p50 %.1f s p90 %.1f s' % (gate, ok, len(rows), sum(1 for r in rows if r[1] > 1 and r[0] < gate), p(0.5)/1000, p(0.9)/1000))
