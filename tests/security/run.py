#!/usr/bin/env python3
"""run.py - the read-only guard against the attack corpus.

    ASKDB=build/askdb FAKE_LLM=build/asan/fake_llm python3 tests/security/run.py
    python3 tests/security/run.py --filter pragma      (regex on kind or SQL)

Every statement of tests/security/corpus.jsonl is run two ways - given
directly (`askdb sql`) and as the scripted model's reply (`askdb ask`,
tests/fake_llm) - against two copies of examples/shop.db, one in rollback
journal mode and one in WAL mode, each alone in its own directory, which
is askdb's working directory (so a relative ATTACH or VACUUM INTO would
land there). After every run, the sha256 of every file in the directory
is compared with the first, and no file may have appeared or gone; the
absolute paths the corpus names outside it must not exist either. The
exit status and the time taken are checked against the statement's
"expect" (see make_corpus.py). The two journal modes run in parallel.

Prints one line per failure and a summary:
    security corpus: S statements x 2 ways x 2 journal modes = R runs,
    F file checks, 0 failed
Exit status 0 only when nothing failed.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TIMEOUT_MS = 500          # askdb --timeout for every run
RUN_LIMIT_S = 10.0        # a run that takes longer fails (and is killed)
OUTSIDE = ["/tmp/askdb-attack.db", "/tmp/askdb-attack-copy.db"]


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
    """{relative path: sha256} of every file under d (dirs as 'dir')."""
    got = {}
    for root, dirs, files in os.walk(d):
        for n in dirs:
            got[os.path.relpath(os.path.join(root, n), d)] = "dir"
        for n in files:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                got[os.path.relpath(p, d)] = hashlib.sha256(f.read()).hexdigest()
    return got


def make_copy(d, mode, shop):
    os.makedirs(d)
    db = os.path.join(d, "shop.db")
    shutil.copy(shop, db)
    if mode == "wal":
        c = sqlite3.connect(db)
        assert c.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
        c.close()
    else:
        c = sqlite3.connect(db)
        assert c.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == \
            "delete"
        c.close()
    for p in os.listdir(d):
        if p != "shop.db":
            raise SystemExit("run.py: the %s copy left %s" % (mode, p))


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


def judge(item, way, rc, err, secs):
    """A failure message, or None."""
    if rc is None:
        return "did not finish: " + err
    if rc < 0 or "Sanitizer" in err or "runtime error" in err:
        return "crashed (exit %s): %s" % (rc, err[:300])
    if secs > 2 * TIMEOUT_MS / 1000 + 2:
        return "took %.1f s with --timeout %d" % (secs, TIMEOUT_MS)
    exp = item["expect"]
    if exp == "refuse" and (rc != 1 or "refused" not in err):
        return "not refused (exit %s): %s" % (rc, err[:300])
    if exp == "fail" and rc == 0:
        return "answered (exit 0), expected a refusal or an error"
    return None


def check_mode(mode, items, askdb, fake, shop, tmp):
    d = os.path.join(tmp, mode)
    make_copy(d, mode, shop)
    base = snapshot(d)
    fails, runs, checks = [], 0, 0
    for item in items:
        sql = item["sql"]
        # An argument cannot hold a NUL: the shell would pass the text
        # up to it. The model's reply carries it whole.
        direct = sql.split("\0")[0]
        model = Model(fake, tmp, "```sql\n%s\n```" % sql)
        try:
            ways = [
                ("sql", [askdb, "sql", "--timeout", str(TIMEOUT_MS),
                         "shop.db", direct]),
                ("ask", [askdb, "ask", "--llm-url", model.url, "--model",
                         "test", "--no-question-check", "--max-attempts",
                         "1", "--timeout", str(TIMEOUT_MS), "shop.db",
                         "Please run this."]),
            ]
            for way, args in ways:
                rc, err, secs = run(args, d)
                runs += 1
                why = judge(item, way, rc, err, secs)
                if why and rc == 1 and "time limit" in err:
                    # Interrupted at its time limit before the guard's
                    # verdict was reached: a machine too loaded to open
                    # the file and prepare within --timeout. The verdict
                    # does not depend on time: run it once more (the
                    # files are compared after both runs).
                    rc, err, secs = run(args, d)
                    runs += 1
                    why = judge(item, way, rc, err, secs)
                now = snapshot(d)
                checks += len(base)
                if now != base:
                    diff = sorted(set(now.items()) ^ set(base.items()))
                    why = "FILES CHANGED: %s" % diff[:4]
                for p in OUTSIDE:
                    if os.path.exists(p):
                        why = "created %s" % p
                if why:
                    fails.append("%s %s [%s] %r: %s" % (
                        mode, way, item["kind"], sql[:120], why))
                    # Start the next statement from a clean copy.
                    shutil.rmtree(d)
                    make_copy(d, mode, shop)
                    base = snapshot(d)
                    for p in OUTSIDE:
                        if os.path.exists(p):
                            os.remove(p)
        finally:
            model.stop()
    return fails, runs, checks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--filter", default="")
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus.jsonl"))
    a = ap.parse_args()
    askdb = os.path.abspath(os.environ.get(
        "ASKDB", os.path.join(ROOT, "build", "askdb")))
    fake = os.path.abspath(os.environ.get(
        "FAKE_LLM", os.path.join(ROOT, "build", "asan", "fake_llm")))
    shop = os.path.abspath(os.environ.get(
        "SHOP_DB", os.path.join(ROOT, "examples", "shop.db")))
    for p in (askdb, fake, shop):
        if not os.path.exists(p):
            sys.exit("run.py: %s is missing (make build/askdb "
                     "build/asan/fake_llm examples/shop.db)" % p)
    with open(a.corpus) as f:
        items = [json.loads(line) for line in f if line.strip()]
    if a.filter:
        r = re.compile(a.filter)
        items = [i for i in items if r.search(i["kind"]) or r.search(i["sql"])]
    for p in OUTSIDE:
        if os.path.exists(p):
            sys.exit("run.py: %s exists before the run; remove it" % p)
    tmp = tempfile.mkdtemp(prefix="askdb-security.")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
            futs = [ex.submit(check_mode, m, items, askdb, fake, shop, tmp)
                    for m in ("journal", "wal")]
            res = [f.result() for f in futs]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    fails = [x for r in res for x in r[0]]
    runs = sum(r[1] for r in res)
    checks = sum(r[2] for r in res)
    for x in fails:
        print("FAIL " + x)
    print("security corpus: %d statements x 2 ways x 2 journal modes = %d "
          "runs, %d file checks, %d failed"
          % (len(items), runs, checks, len(fails)))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
