"""oneshot_first.py - each database's first question as a one-shot `askdb ask`.

    python3 bench/oneshot_first.py ASKDB RECORDS.jsonl MODE [OUT.txt]

For each database of an eval record file (in its order), its first
question (its NTH with NTH=n in the environment) is asked by a new
`askdb ask` process (2 threads) on a copy of the database, with a
prompt-cache directory of its own (/tmp/askdb-oneshot/cache) holding,
before each question:

    none    no file: the process evaluates the instructions and the schema
    sys     only the instructions' file (written by a question on another
            database first, its other files removed): what a user's first
            question on a new database finds once askdb has been used
    prefix  the database's own file, written by its first question asked
            in a process before (with NTH=2: what a user's second
            question finds)

Prints per database the wall time (process start to exit, model load
included), the time to the first token, the tokens read from a file and
whether the answer's SQL is the record's (`same`: the one-shot process
answered as the eval run did; the eval must have the same build and
options) and, with EVAL_TRACE set to that run's --trace file, whether its
greedy reply is the eval's (`greedy same`), then the medians. The model is
ASKDB_MODEL or the default one.
"""
import glob, gzip, json, os, shutil, statistics, subprocess, sys, time

askdb, records, mode = sys.argv[1], sys.argv[2], sys.argv[3]
out = open(sys.argv[4], 'w') if len(sys.argv) > 4 else sys.stdout
work = '/tmp/askdb-oneshot'
cache = work + '/cache'
prompts = cache + '/prompts'
spider = os.environ.get('SPIDER_DB', '../shared/bench/spider-train/database')
env = dict(os.environ, ASKDB_CACHE_DIR=cache)
if 'ASKDB_MODEL' not in env:
    env['ASKDB_MODEL'] = os.path.expanduser(
        '~/.cache/askdb/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf')
nth = int(os.environ.get('NTH', '1'))
asked = {}   # db -> its questions, in the records' order
for line in open(records):
    r = json.loads(line)
    asked.setdefault(r['db'], []).append(r)
first = {db: rs[0]['question'] for db, rs in asked.items()}
chosen = {db: rs[nth - 1] for db, rs in asked.items() if len(rs) >= nth}
pred = {db: r.get('pred') for db, r in chosen.items()}
greedy = {}   # question -> the eval's first greedy reply
if os.environ.get('EVAL_TRACE'):
    q = None
    opener = gzip.open if os.environ['EVAL_TRACE'].endswith('.gz') else open
    with opener(os.environ['EVAL_TRACE'], 'rt') as f:
        for e in map(json.loads, f):
            if e.get('step') == 'question':
                q = e['question']
            elif (e.get('step') == 'reply' and e.get('candidate', 1) == 1
                  and q not in greedy):
                greedy[q] = e.get('reply')
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def ask(db_file, question, trace=None):
    cmd = [askdb, 'ask', '--threads', '2']
    if trace:
        cmd += ['--trace', trace]
    return subprocess.run(cmd + [db_file, question], env=env,
                          capture_output=True, text=True)


if mode == 'sys':
    # a question on a database that is not in the list writes the files
    other = [d for d in sorted(os.listdir(spider)) if d not in first][0]
    shutil.copy(f'{spider}/{other}/{other}.sqlite', work + '/other.sqlite')
    ask(work + '/other.sqlite', 'How many rows does the first table have?')
rows = []
for db, r in chosen.items():
    question = r['question']
    files = sorted(glob.glob(prompts + '/*.kv'), key=os.path.getsize)
    for f in files[1 if mode == 'sys' else 0:] if mode != 'prefix' else []:
        os.unlink(f)
    copy, trace = f'{work}/{db}.sqlite', work + '/trace.jsonl'
    shutil.copy(f'{spider}/{db}/{db}.sqlite', copy)
    if mode == 'prefix':
        ask(copy, first[db])
    t0 = time.time()
    p = ask(copy, question, trace)
    wall = time.time() - t0
    events = [json.loads(l) for l in open(trace)]
    reply = next(e for e in events if e['step'] == 'reply')
    sql = next((e.get('sql') for e in reversed(events) if 'status' in e
                and 'sql' in e), None)
    os.unlink(trace)
    os.unlink(copy)
    same = sql is not None and sql == pred[db]
    g = ''
    if question in greedy:
        g = '  greedy ' + ('same' if reply.get('reply') == greedy[question]
                           else 'other')
    rows.append((wall, reply['ttft_ms'] / 1000, reply.get('file_tokens', 0),
                 same, g.endswith('same')))
    print('%-28s wall %5.2f s  first token %5.2f s  file tokens %d  sql %s%s'
          '  rc %d' % (db, wall, rows[-1][1], rows[-1][2],
                       'same' if same else 'other', g, p.returncode),
          file=out)
print('%s: %d databases, wall p50 %.2f s, first token p50 %.2f s, '
      'the record\'s SQL %d of %d%s'
      % (mode, len(rows), statistics.median(r[0] for r in rows),
         statistics.median(r[1] for r in rows), sum(r[3] for r in rows),
         len(rows), ', the eval\'s greedy reply %d' % sum(r[4] for r in rows)
         if greedy else ''), file=out)
