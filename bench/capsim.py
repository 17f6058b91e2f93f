#!/usr/bin/env python3
"""capsim.py TRACE EVAL_JSONL [DB_ROOT]: what the follow cap
(--candidate-cap) would have changed in a run without it. For every
question whose first attempt had three candidates, each candidate's SQL
(its reply in the trace) is run on the SQLite file read-only and the vote
is taken again over the results (most votes, non-empty before empty, the
first candidate on a tie) with the candidates longer than the cap's length
left out. Prints, for each cap rule, the questions right and the candidate
tokens the cap would have saved. Fixes and repairs are not replayed, so
"right" counts the first attempt's vote only. docs/agent.md, "Sooner".
"""
import collections, os, sys
from tracesql import load, sql_of, run, key

recs, byreq, root = load(sys.argv)
def vote(keys):
    best = None; bv = -1
    for i, k in enumerate(keys):
        if k is None: continue
        v = sum(1 for x in keys if x == k)
        sc = (v, len(k) > 0)
        if best is None or (sc[1], sc[0]) > (bk[1], bk[0]): best, bk = i, sc
    return best
caps = {'none': lambda L: 10**9, 'L+max(16,L/2)': lambda L: L + max(16, L // 2),
        '2L+8': lambda L: 2 * L + 8, 'L+max(24,L)': lambda L: L + max(24, L), '2L': lambda L: max(2*L, 24)}
res = collections.Counter(); saved = collections.Counter(); n = 0
for rid, evs in byreq.items():
    q = next((e['question'] for e in evs if e.get('step') == 'question'), None)
    if q not in recs: continue
    reps = sorted([e for e in evs if e.get('step') == 'reply' and e.get('attempt') == 1], key=lambda e: e.get('candidate', 1))
    if len(reps) < 3: continue
    n += 1
    r = recs[q]; db = os.path.join(root, r['db'], r['db'] + '.sqlite')
    ordered = 'order by' in r['gold'].lower()
    gold = key(run(db, r['gold']), ordered)
    sqls = [sql_of(e['reply']) for e in reps]
    keys = [key(run(db, q), ordered) if q else None for q in sqls]
    L = reps[0]['completion_tokens']
    for name, cap in caps.items():
        c = cap(L)
        ks = [k if (i == 0 or reps[i]['completion_tokens'] <= c) else None for i, k in enumerate(keys)]
        w = vote(ks)
        res[name] += (w is not None and ks[w] == gold)
        saved[name] += sum(max(0, e['completion_tokens'] - c) for e in reps[1:])
print(n, 'questions with three candidates')
for name in caps: print('%-16s right %d  candidate tokens cut %d' % (name, res[name], saved[name]))
