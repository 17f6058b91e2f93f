"""onclause_scan.py: the requalify fixes of recorded traces that left a
join's ON clause without its own table (c7b38f0 keeps those as written).

    python3 bench/onclause_scan.py bench/results/*/*.trace.gz

For each trace: its requalify fix events, and those whose ON clause of
`JOIN X [AS a] ON ...` named X (or a) before the fix and does not after;
with the run's .jsonl beside it, whether that question's prediction was
the fixed statement and whether it was right. A regular expression over
the SQL, not a parse: a survey, not a check."""
import gzip, json, os, re, sys

ON = re.compile(r'JOIN\s+(\w+)(?:\s+(?:AS\s+)?(?!ON\b)(\w+))?\s+ON\s+(.*?)'
                r'(?=\bJOIN\b|\bLEFT\b|\bINNER\b|\bWHERE\b|\bGROUP\b|'
                r'\bORDER\b|\bLIMIT\b|\)|$)', re.I | re.S)


def clauses(sql):
    return [(m.group(2) or m.group(1), m.group(3)) for m in ON.finditer(sql)]


def names(on, item):
    return re.search(r'\b' + re.escape(item) + r'\.', on, re.I) is not None


def unanchored(before, after):
    return any(names(on, a) and not names(on2, a2)
               for (a, on), (a2, on2) in zip(clauses(before), clauses(after)))


def norm(s):
    return ' '.join((s or '').split()).rstrip(';')


def main(paths):
    total = hits = 0
    for path in paths:
        jl = path.replace('.trace.gz', '.jsonl')
        recs = {}
        if os.path.exists(jl):
            for l in open(jl):
                r = json.loads(l)
                recs[r['question']] = r
        asked, n, found = {}, 0, []
        for l in gzip.open(path, 'rt'):
            e = json.loads(l)
            if e.get('step') == 'question':
                asked[e['request_id']] = e.get('question')
            if e.get('kind') != 'requalify':
                continue
            n += 1
            if unanchored(e['from'], e['sql']):
                r = recs.get(asked.get(e['request_id']))
                found.append('%s %s' % (
                    e['changes'],
                    'no record' if not r else '%s, %s' % (
                        'the prediction' if norm(r['pred']) == norm(e['sql'])
                        else 'not the prediction',
                        'right' if r['correct'] else 'wrong')))
        print('%s: %d requalify fixes, %d left an ON clause without its '
              'table' % (path, n, len(found)))
        for f in found:
            print('    ' + f)
        total += n
        hits += len(found)
    print('all: %d of %d' % (hits, total))


if __name__ == '__main__':
    main(sys.argv[1:])
