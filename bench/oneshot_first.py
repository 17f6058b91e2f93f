"""oneshot_first.py - each database's first question as a one-shot `askdb ask`.

    python3 bench/oneshot_first.py ASKDB RECORDS.jsonl MODE [OUT.txt]

For each database of an eval record file (in its order), its first
question is asked by a new `askdb ask` process (2 threads) on a copy of
the database, with a prompt-cache directory of its own
(/tmp/askdb-oneshot/cache) holding, before each question:

    none  no file: the process evaluates the instructions and the schema
    sys   only the instructions' file (written by a question on another
          database first, its other files removed): what a user's first
          question on a new database finds once askdb has been used

Prints per database the wall time (process start to exit, model load
included), the time to the first token and the tokens read from a file,
then the medians. The model is ASKDB_MODEL or the default one.
"""
import glob, json, os, shutil, statistics, subprocess, sys, time

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
first = {}
for line in open(records):
    r = json.loads(line)
    first.setdefault(r['db'], r['question'])
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
for db, question in first.items():
    files = sorted(glob.glob(prompts + '/*.kv'), key=os.path.getsize)
    for f in files[1 if mode == 'sys' else 0:]:
        os.unlink(f)
    copy, trace = f'{work}/{db}.sqlite', work + '/trace.jsonl'
    shutil.copy(f'{spider}/{db}/{db}.sqlite', copy)
    t0 = time.time()
    p = ask(copy, question, trace)
    wall = time.time() - t0
    reply = next(e for e in map(json.loads, open(trace))
                 if e['step'] == 'reply')
    os.unlink(trace)
    os.unlink(copy)
    rows.append((wall, reply['ttft_ms'] / 1000, reply.get('file_tokens', 0)))
    print('%-28s wall %5.2f s  first token %5.2f s  file tokens %d  rc %d'
          % (db, wall, rows[-1][1], rows[-1][2], p.returncode), file=out)
print('%s: %d databases, wall p50 %.2f s, first token p50 %.2f s'
      % (mode, len(rows), statistics.median(r[0] for r in rows),
         statistics.median(r[1] for r in rows)), file=out)
