#!/usr/bin/env python3
"""specsim.py TRACE EVAL_JSONL [MODEL.gguf]: what speculative decoding with drafts
from an n-gram table of SQL would save on the greedy replies of a run.

Not built; this is the measurement that decided it (docs/agent.md,
"Sooner, the third time"). Drafts: after the token just sampled, up to K
tokens predicted by the longest context (4..1 tokens) of an n-gram table
whose most common next token has at least TH of its count (then TH2 for
the draft's later tokens), else by prompt lookup (the last 3 or 2 tokens
found in the prompt or the reply so far). The table is built from the
gold SQL of Spider's training split, without the validation databases
(bench/validation_dbs.txt) and without the run's own databases (those of
EVAL_JSONL, the run's --out), in the
reply's form (```sql ... ;```, white space collapsed). A step verifies
the token and its draft together, 1 + len(draft) rows of one sequence,
and advances by the drafted tokens the greedy reply has next, plus one.
Its cost is the row cost measured by bench/batch_rows.c on the 2-core
Xeon with the AVX-512 build (ms: 1 row 67, 2 100, 3 103 with the pad, 4
107), against one row a token without drafts. Only the greedy replies
(candidate 1, attempt 1) are replayed; the tokens come from
build/tokenize_lines (make build/tokenize_lines).
"""
import collections, gzip, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COST = {1: 67, 2: 100, 3: 103, 4: 107}
N = 4


def tokenize(model, texts):
    inp = ''.join(t.replace('\\', '\\\\').replace('\n', '\\n') + '\n'
                  for t in texts)
    out = subprocess.run([os.path.join(ROOT, 'build', 'tokenize_lines'),
                          model], input=inp.encode(), capture_output=True,
                         check=True).stdout.decode().split('\n')
    return [[int(x) for x in o.split()] for o in out[:len(texts)]]


def main():
    trace, evalf = sys.argv[1:3]
    model = sys.argv[3] if len(sys.argv) > 3 else os.path.expanduser(
        '~/.cache/askdb/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf')
    spider = os.path.join(ROOT, '..', 'shared', 'bench', 'spider-train')
    ev = collections.defaultdict(list)
    op = gzip.open if trace.endswith('.gz') else open
    for l in op(trace, 'rt'):
        e = json.loads(l)
        ev[e.get('request_id')].append(e)
    pairs, dbs = [], set()
    for es in ev.values():
        pr = [e for e in es if e.get('step') == 'prompt' and 'messages' in e]
        rp = [e for e in es if e.get('step') == 'reply' and
              e.get('attempt') == 1 and e.get('candidate', 1) == 1]
        if pr and rp and rp[0].get('reply'):
            pairs.append(('\n'.join(m['content'] for m in pr[0]['messages']),
                          rp[0]['reply']))
    val = set(l.strip() for l in open(os.path.join(HERE, 'validation_dbs.txt'))
              if l.strip() and not l.startswith('#'))
    for l in open(evalf):
        dbs.add(json.loads(l)['db'])
    corpus = []
    for q in json.load(open(os.path.join(spider, 'train.json'))):
        if q['db_id'] in val or q['db_id'] in dbs:
            continue
        corpus.append('```sql\n' + ' '.join(q['query'].split()).rstrip(';')
                      + ';\n```')
    C = tokenize(model, corpus)
    P = tokenize(model, [p for p, _ in pairs])
    R = tokenize(model, [r for _, r in pairs])
    ng = collections.defaultdict(collections.Counter)
    for s in C:
        for i in range(len(s)):
            for n in range(1, N + 1):
                if i - n < 0:
                    break
                ng[tuple(s[i - n:i])][s[i]] += 1

    def ngram_next(ctx, th):
        for n in range(N, 0, -1):
            c = ng.get(tuple(ctx[-n:])) if len(ctx) >= n else None
            if c:
                t, k = c.most_common(1)[0]
                return t if sum(c.values()) >= 3 and k / sum(c.values()) >= th else None
        return None

    def lookup(ctx, src):
        for n in (3, 2):
            key = ctx[-n:]
            for j in range(len(src) - n - 1, -1, -1):
                if src[j:j + n] == key:
                    return src[j + n]
        return None

    print('%d greedy replies, %d tokens; n-gram table from %d statements'
          % (len(R), sum(map(len, R)), len(C)))
    for K, th, th2, mode in [(1, .8, .8, 'ngram'), (3, .8, .8, 'ngram'),
                             (3, .8, .8, 'lookup'), (3, .7, .4, 'both'),
                             (3, .5, .2, 'both')]:
        base = new = acc = drafts = 0
        for p, r in zip(P, R):
            i = 0
            while i < len(r):
                c, d = r[:i + 1], []
                while len(d) < K:
                    t = ngram_next(c, th2 if d else th) if mode != 'lookup' else None
                    if t is None and mode != 'ngram':
                        t = lookup(c, p + c[:-1])
                    if t is None:
                        break
                    d.append(t)
                    c = c + [t]
                a = 0
                while a < len(d) and i + 1 + a < len(r) and r[i + 1 + a] == d[a]:
                    a += 1
                new += COST[1 + len(d)]
                i += 1 + a
                acc += a
                drafts += bool(d)
            base += len(r) * COST[1]
        print('K %d, TH %.1f/%.1f, %-6s: decoding %.1f s -> %.1f s (%.0f%%), '
              '%d drafts, %d drafted tokens taken' % (K, th, th2, mode,
              base / 1e3, new / 1e3, 100.0 * new / base, drafts, acc))


if __name__ == '__main__':
    main()
