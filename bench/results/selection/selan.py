import json, sys, re, sqlite3, collections, os
# selan.py TRACE EVAL_JSONL [DB_ROOT]: for each `select` event of the trace,
# whether the vote's candidate and the chosen one give the gold result
# (each candidate's SQL as its reply or its fix wrote it, run on the SQLite
# file read-only). DB_ROOT: Spider's database/ directory, for records whose
# db is an id (default ../shared/bench/spider-train/database).
trace, evalf = sys.argv[1:3]
root = sys.argv[3] if len(sys.argv) > 3 else '../shared/bench/spider-train/database'
recs = {}
for l in open(evalf):
    r = json.loads(l); recs[r['question']] = r
byreq = collections.defaultdict(list)
for l in open(trace):
    e = json.loads(l); byreq[e.get('request_id')].append(e)
def sql_of(text):
    m = re.search(r'```sql\s*(.*?)```', text or '', re.S)
    s = m.group(1) if m else (text or '')
    return s.strip().rstrip(';')
def run(db, sql):
    try:
        c = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
        c.text_factory = lambda b: b.decode('utf-8', 'replace')
        rows = c.execute(sql).fetchmany(5000); c.close(); return rows
    except Exception:
        return None
def norm(v):
    if isinstance(v, float) and v == int(v): return int(v)
    return v
def same(a, b, ordered):
    if a is None or b is None: return False
    a = [tuple(map(norm, r)) for r in a]; b = [tuple(map(norm, r)) for r in b]
    return a == b if ordered else collections.Counter(a) == collections.Counter(b)
st = collections.Counter()
for rid, evs in byreq.items():
    q = next((e['question'] for e in evs if e.get('step') == 'question'), None)
    sel = [e for e in evs if e.get('step') == 'select']
    if q is None or q not in recs: continue
    st['questions'] += 1
    if not sel: continue
    s = sel[0]; r = recs[q]
    db = r['db'] if r['db'].endswith('.sqlite') else os.path.join(root, r['db'], r['db'] + '.sqlite')
    cands = {}
    for e in evs:
        if e.get('step') == 'reply' and e.get('attempt') == 1:
            cands[e.get('candidate', 1)] = sql_of(e.get('reply'))
        if e.get('step') == 'fix' and e.get('ok') and e.get('sql'):
            cands[e.get('candidate', 1)] = e['sql']
    gold = run(db, r['gold']); ordered = 'order by' in r['gold'].lower()
    ok = lambda k: same(run(db, cands.get(k, '')), gold, ordered)
    v, c = s['voted'], s['chosen']
    st['selects'] += 1
    st['voted_ok'] += ok(v); st['chosen_ok'] += ok(c)
    st['changed'] += v != c
    st['gain'] += (not ok(v)) and ok(c); st['loss'] += ok(v) and not ok(c)
    st['any_ok'] += any(ok(k) for k in s['options'])
    st['disagree'] += 'two orders' in (s.get('error') or '')
    print(q[:70], 'opts', s['options'], 'voted', v, ok(v), 'chosen', c, ok(c), 'picks', s.get('picks'), s.get('error',''))
print(dict(st))
