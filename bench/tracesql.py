"""tracesql.py: what bench/capsim.py and bench/gatesim.py share: the eval
records and trace events of a run (TRACE EVAL_JSONL [DB_ROOT] on the
command line; a trace may be gzipped), the SQL of a reply, a statement
run read-only on its SQLite file, and results compared as askdb eval
does (floats to 6 places, rows as a multiset unless ordered)."""
import collections, gzip, json, re, sqlite3, sys


def load(argv):
    """(records by question, trace events by request id, database root)."""
    trace, evalf = argv[1:3]
    root = argv[3] if len(argv) > 3 else '../shared/bench/spider-train/database'
    recs = {}
    for l in open(evalf):
        r = json.loads(l); recs[r['question']] = r
    byreq = collections.defaultdict(list)
    for l in (gzip.open(trace, 'rt') if trace.endswith('.gz') else open(trace)):
        e = json.loads(l); byreq[e.get('request_id')].append(e)
    return recs, byreq, root


def sql_of(text, whole=False):
    """The statement of a ```sql block; without one, None (or, with
    whole, the text itself)."""
    m = re.search(r'```sql\s*(.*?)```', text or '', re.S)
    if not m:
        return (text or '').strip().rstrip(';') if whole else None
    return m.group(1).strip().rstrip(';')


def run(db, sql):
    """Up to 5,000 rows of sql on the file db opened read-only; None when
    it fails."""
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
    """A comparable form of a result (None stays None)."""
    if rows is None: return None
    a = [tuple(map(norm, r)) for r in rows]
    return tuple(a) if ordered else tuple(sorted(a, key=repr))


def same(a, b, ordered):
    return a is not None and b is not None and key(a, ordered) == key(b, ordered)
