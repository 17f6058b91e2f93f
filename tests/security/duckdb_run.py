#!/usr/bin/env python3
"""duckdb_run.py - the read-only guard on DuckDB against the attack corpora.

    ASKDB=build/askdb FAKE_LLM=build/asan/fake_llm python3 tests/security/duckdb_run.py
    python3 tests/security/duckdb_run.py --filter copy   (regex on kind or SQL)

The targets: the sample shop database as shop.duckdb, and its orders table
as orders.csv and orders.parquet (scripts/load_duckdb.py makes them), each
alone in its own directory, which is askdb's working directory, beside a
secret.txt no statement may read.

- DuckDB's own corpus (tests/security/duckdb_corpus.jsonl: other files
  read through read_text() and friends, COPY ... TO, EXPORT, ATTACH,
  INSTALL, LOAD, SET, PRAGMA, CALL, writes, bombs) runs on every target,
  given directly (`askdb sql`) and as the scripted model's reply (`askdb
  ask`). {W} in a statement is the target's directory, {FILE} the target
  file's absolute path.
- The SQLite corpus (tests/security/corpus.jsonl) runs directly on
  shop.duckdb and orders.csv: a statement SQLite refuses or fails must not
  be answered by DuckDB either.

After every run the sha256 of every file in the directory is compared with
the first, no file may appear or go, and the paths the corpora name
outside it must not exist. "refuse" needs exit 1 and "refused" on stderr,
"fail" any exit but 0, "any" only the file checks and the time limit. SQLite's
corpus is SQLite's dialect: there "refuse" and "fail" both mean "not
answered" (DuckDB rejects most of it as a syntax or catalog error first),
and a statement DuckDB answers is listed in ANSWERED_OK only when what it
does in DuckDB is a harmless read.

Every statement is run, bombs included: DuckDB checks for an interrupt
between vectors of rows, never inside one function call, so repeat(),
printf() or range() asked to build gigabytes would run past the time
limit; askdb runs each statement in askdb-exec, a process it kills at the
deadline (docs/engines/duckdb.md, "Limits DuckDB cannot keep"), so they
too must end within twice the limit.
When askdb was built without DuckDB it prints one SKIP line and exits 0.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TIMEOUT_MS = 1000
RUN_LIMIT_S = 15.0
OUTSIDE = ["/tmp/askdb-attack.db", "/tmp/askdb-attack-copy.db"]

# SQLite corpus statements that DuckDB answers, and why that is harmless.
ANSWERED_OK = {
    # DuckDB's PRAGMA table_info / database_list are table functions:
    # reading the catalog.
    "PRAGMA table_info(orders)", "PRAGMA database_list",
    "PRAGMA table_info('orders')",
}


def env():
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("ASKDB_") and k.lower() not in (
             "openai_api_key", "anthropic_api_key", "http_proxy",
             "https_proxy", "all_proxy")}
    e["NO_PROXY"] = e["no_proxy"] = "127.0.0.1,localhost"
    e["ASKDB_RETRY_BASE_MS"] = "1"
    e["LC_ALL"] = "C"
    return e


def snapshot(d):
    got = {}
    for root, dirs, files in os.walk(d):
        for n in dirs:
            got[os.path.relpath(os.path.join(root, n), d)] = "dir"
        for n in files:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                got[os.path.relpath(p, d)] = hashlib.sha256(f.read()).hexdigest()
    return got


def make_copy(d, src):
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    shutil.copy(src, os.path.join(d, os.path.basename(src)))
    with open(os.path.join(d, "secret.txt"), "w") as f:
        f.write("the secret\n")


class Model:
    """A fake_llm answering every request with one reply."""

    def __init__(self, fake, tmp, reply):
        self.dir = tempfile.mkdtemp(dir=tmp)
        script = os.path.join(self.dir, "script.json")
        with open(script, "w") as f:
            json.dump([{"content": reply, "repeat": True}], f)
        port = os.path.join(self.dir, "port")
        self.proc = subprocess.Popen(
            [fake, "--script", script, "--log", os.path.join(self.dir, "log"),
             "--port", "0", "--port-file", port],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(400):
            if os.path.exists(port):
                with open(port) as f:
                    self.url = "http://127.0.0.1:" + f.read().strip()
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.005)
        self.stop()
        raise RuntimeError("fake_llm did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def run(args, cwd):
    t0 = time.monotonic()
    try:
        p = subprocess.run(args, cwd=cwd, env=env(), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=RUN_LIMIT_S)
        rc, err = p.returncode, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        rc, err = None, "killed after %.0f s" % RUN_LIMIT_S
    return rc, err, time.monotonic() - t0


def judge(item, way, rc, err, secs, foreign):
    """A failure message, or None. foreign: the item is SQLite's."""
    if rc is None:
        return "did not finish: " + err
    if rc < 0 or "Sanitizer" in err or "runtime error" in err:
        return "crashed (exit %s): %s" % (rc, err[:300])
    if secs > 2 * TIMEOUT_MS / 1000 + 2:
        return "took %.1f s with --timeout %d" % (secs, TIMEOUT_MS)
    exp = item["expect"]
    if foreign and exp == "refuse":
        exp = "fail"
    if way == "ask" and re.match(r"SELECT 1;", item["sql"]):
        # The agent takes the reply's first statement (SELECT 1) or
        # refuses the pair; either way nothing but SELECT 1 runs.
        exp = "any"
    if exp == "refuse" and rc == 1 and re.search(
            r"^askdb: (Binder|Catalog|Parser|Not implemented) Error", err,
            re.M):
        # DuckDB itself rejected it before it could run: a write to a
        # file's view ("Can only update base table"), a prepared
        # statement that does not exist, RESET ALL.
        exp = "fail"
    if exp == "refuse" and (rc != 1 or "refused" not in err):
        return "not refused (exit %s): %s" % (rc, err[:300])
    if exp == "fail" and rc == 0 and item["sql"] not in ANSWERED_OK:
        return "answered (exit 0), expected a refusal or an error"
    return None


def check_target(src, items, ways, askdb, fake, tmp, foreign):
    name = os.path.basename(src)
    d = os.path.join(tmp, name + ".d")
    make_copy(d, src)
    target = os.path.join(d, name)
    base = snapshot(d)
    fails, runs = [], 0
    for item in items:
        sql = item["sql"].replace("{W}", d).replace("{FILE}", target)
        direct = sql.split("\0")[0]
        model = Model(fake, tmp, "```sql\n%s\n```" % sql) if "ask" in ways else None
        try:
            for way in ways:
                if way == "sql":
                    args = [askdb, "sql", "--timeout", str(TIMEOUT_MS), name,
                            direct]
                else:
                    args = [askdb, "ask", "--llm-url", model.url, "--model",
                            "test", "--no-question-check", "--max-attempts",
                            "1", "--timeout", str(TIMEOUT_MS), name,
                            "Please run this."]
                rc, err, secs = run(args, d)
                runs += 1
                why = judge(item, way, rc, err, secs, foreign)
                if why and rc == 1 and "time limit" in err:
                    # Interrupted at its time limit before the guard's
                    # verdict was reached: a machine too loaded to open
                    # the file and prepare within --timeout. The verdict
                    # does not depend on time: run it once more (the
                    # files are compared after both runs).
                    rc, err, secs = run(args, d)
                    runs += 1
                    why = judge(item, way, rc, err, secs, foreign)
                now = snapshot(d)
                if now != base:
                    diff = sorted(set(now.items()) ^ set(base.items()))
                    why = "FILES CHANGED: %s" % diff[:4]
                for p in OUTSIDE:
                    if os.path.exists(p):
                        why = "created %s" % p
                        os.remove(p)
                if "the secret" in err:
                    why = "secret.txt reached the output"
                if why:
                    fails.append("%s %s [%s] %r: %s" % (
                        name, way, item["kind"], sql[:120], why))
                    make_copy(d, src)
                    base = snapshot(d)
        finally:
            if model:
                model.stop()
    return fails, runs


def load(items_path, flt):
    with open(items_path) as f:
        items = [json.loads(line) for line in f if line.strip()]
    if flt:
        r = re.compile(flt)
        items = [i for i in items if r.search(i["kind"]) or r.search(i["sql"])]
    return items


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--filter", default="")
    a = ap.parse_args()
    askdb = os.path.abspath(os.environ.get(
        "ASKDB", os.path.join(ROOT, "build", "askdb")))
    fake = os.path.abspath(os.environ.get(
        "FAKE_LLM", os.path.join(ROOT, "build", "asan", "fake_llm")))
    shop = os.path.abspath(os.environ.get(
        "SHOP_DB", os.path.join(ROOT, "examples", "shop.db")))
    for p in (askdb, fake, shop):
        if not os.path.exists(p):
            sys.exit("duckdb_run.py: %s is missing (make build/askdb "
                     "build/asan/fake_llm examples/shop.db)" % p)
    tmp = tempfile.mkdtemp(prefix="askdb-security-duckdb.")
    try:
        probe = os.path.join(tmp, "none.duckdb")
        open(probe, "w").close()
        p = subprocess.run([askdb, "schema", probe], env=env(),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if b"built without DuckDB" in p.stderr:
            print("SKIP duckdb_run.py: this askdb was built without DuckDB "
                  "(run scripts/duckdb.sh, then make)")
            return 0
        data = os.path.join(tmp, "data")
        os.makedirs(data)
        files = [os.path.join(data, n) for n in
                 ("shop.duckdb", "orders.csv", "orders.parquet")]
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts",
                        "load_duckdb.py"), "--sqlite", shop,
                        "--out", files[0], "--export", "orders",
                        "--csv", files[1], "--parquet", files[2]],
                       check=True, stdout=subprocess.DEVNULL)
        own = load(os.path.join(HERE, "duckdb_corpus.jsonl"), a.filter)
        sqlite = load(os.path.join(HERE, "corpus.jsonl"), a.filter)
        jobs = [(f, own, ("sql", "ask"), False) for f in files] + \
               [(f, sqlite, ("sql",), True) for f in files[:2]]
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
            futs = [ex.submit(check_target, f, items, ways, askdb, fake,
                              os.path.join(tmp, "j%d" % i), foreign)
                    for i, (f, items, ways, foreign) in enumerate(jobs)
                    if not os.makedirs(os.path.join(tmp, "j%d" % i))]
            res = [f.result() for f in futs]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    fails = [x for r in res for x in r[0]]
    runs = sum(r[1] for r in res)
    for x in fails:
        print("FAIL " + x)
    print("security corpus on DuckDB: %d DuckDB statements x 3 files x 2 "
          "ways, %d SQLite statements x 2 files; %d runs, %d failed"
          % (len(own), len(sqlite), runs, len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
