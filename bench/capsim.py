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
import json, sys, re, sqlite3, collections, os, gzip
trace, evalf = sys.argv[1:3]
root = sys.argv[3] if len(sys.argv) > 3 else '../shared/bench/spider-train/database'
recs = {}
for l in open(evalf):
    r = json.loads(l); recs[r['question']] = r
byreq = collections.defaultdict(list)
for l in (gzip.open(trace, 'rt') if trace.endswith('.gz') else open(trace)):
    e = json.loads(l); byreq[e.get('request_id')].append(e)
def sql_of(text):
    m = re.search(r'```sql\s*(.*?)```', text or '', re.S)
    return m.group(1).strip().rstrip(';') if m else None
def run(db, sql):
    if not sql: return None
    try:
        c = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
        c.text_factory = lambda b: b.decode('utf-8', 'replace')
        rows = c.execute(sql).fetchmany(5000); c.close(); return rows
    except Exception:
        return None
def norm(v):
    if isinstance(v, float) and v == int(v): return int(v)
    if isinstance(v, float): return round(v, 6)
    return v
def key(rows, ordered):
    if rows is None: return None
    a = [tuple(map(norm, r)) for r in rows]
    return tuple(a) if ordered else tuple(sorted(a, key=repr))
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
    keys = [key(run(db, sql_of(e['reply'])), ordered) for e in reps]
    L = reps[0]['completion_tokens']
    for name, cap in caps.items():
        c = cap(L)
        ks = [k if (i == 0 or reps[i]['completion_tokens'] <= c) else None for i, k in enumerate(keys)]
        w = vote(ks)
        res[name] += (w is not None and ks[w] == gold)
        saved[name] += sum(max(0, e['completion_tokens'] - c) for e in reps[1:])
print(n, 'questions with three candidates')
for name in caps: print('%-16s right %d  candidate tokens cut %d' % (name, res[name], saved[name]))
