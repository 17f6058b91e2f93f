#!/usr/bin/env python3
"""serve_load.py - askdb serve under load, all on loopback, with the scripted model.

    python3 bench/serve_load.py [--askdb build/askdb] [--fake build/asan/fake_llm]
                                [--seconds 5] [--clients 16]

Measures, against a release build of askdb serve and the scripted model
(tests/fake_llm, replying at once so that the server is what is timed):
  - requests per second and p50/p99 latency of POST /api/sql and of
    POST /api/ask (JSON), --clients keep-alive clients for --seconds each;
  - the server's own time per question: the client's latency minus the
    agent's total_ms (what the library spent), one client, 300 questions;
  - 200 streamed questions at once: all must end in `done` with status ok;
  - 1,000 idle connections held open: a new client must still be served;
  - the server's peak RSS (VmHWM) over all of it.
Every loop is bounded in count and time and talks to 127.0.0.1 only.
Prints a Markdown table (the README's) and exits 1 when a check failed.
"""
import argparse
import http.client
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOP = os.path.join(ROOT, "examples/shop.db")
SQL = "SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY n DESC"


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def start(args, tmp):
    script = os.path.join(tmp, "script.json")
    with open(script, "w") as f:
        json.dump([{"content": "```sql\n%s\n```" % SQL, "repeat": True}], f)
    pf = os.path.join(tmp, "fake.port")
    fake = subprocess.Popen([args.fake, "--script", script, "--log", "/dev/null",
                             "--port-file", pf], stderr=subprocess.DEVNULL)
    for _ in range(200):
        if os.path.exists(pf):
            break
        time.sleep(0.05)
    fport = int(open(pf).read())
    err = os.path.join(tmp, "serve.err")
    env = dict(os.environ, ASKDB_CACHE_DIR=os.path.join(tmp, "cache"))
    srv = subprocess.Popen([args.askdb, "serve", "--listen", "127.0.0.1:0", "--db",
                            "shop=" + SHOP, "--llm-url", "http://127.0.0.1:%d/v1" % fport,
                            "--model", "m", "--no-question-check", "--workers", "64",
                            "--queue", "1000", "--per-client", "1000",
                            "--conversations", "512", "--access-log", "off"],
                           stderr=open(err, "w"), env=env)
    for _ in range(400):
        text = open(err).read()
        if "listening on http://" in text:
            port = int(text.split("listening on http://")[1].split(":")[1].split("/")[0])
            return fake, srv, port
        time.sleep(0.05)
    raise SystemExit("server did not start: " + open(err).read())


def peak_rss_mb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    return -1


def load(port, path, body, clients, seconds):
    """clients keep-alive clients POSTing body for seconds; latencies (s)."""
    lats, errors = [], []
    lock = threading.Lock()
    stop = time.time() + seconds

    def run():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        n = 0
        while time.time() < stop and n < 100000:
            n += 1
            t0 = time.perf_counter()
            c.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
            mine.append(time.perf_counter() - t0)
            if r.status != 200:
                errors.append((r.status, data[:200]))
        c.close()
        with lock:
            lats.extend(mine)

    ts = [threading.Thread(target=run) for _ in range(clients)]
    t0 = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return lats, errors, time.time() - t0


def server_overhead(port, n=300):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    added = []
    body = json.dumps({"database": "shop", "question": "Customers per country?",
                       "conversation_id": "overhead"})
    for _ in range(n):
        t0 = time.perf_counter()
        c.request("POST", "/api/ask", body=body, headers={"Content-Type": "application/json"})
        a = json.loads(c.getresponse().read())
        wall = (time.perf_counter() - t0) * 1000
        added.append(wall - a["timings"]["total_ms"])
    c.close()
    return added


def streamed(port, n=200):
    results = [None] * n

    def one(i):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            c.request("POST", "/api/ask", body=json.dumps(
                {"database": "shop", "question": "Customers per country? #%d" % i}),
                headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
            r = c.getresponse()
            last = None
            while True:
                line = r.readline()
                if not line:
                    break
                if line.startswith(b"event: "):
                    last = line[7:].strip().decode()
                elif line.startswith(b"data: ") and last == "done":
                    results[i] = json.loads(line[6:])["status"]
                    break
            c.close()
        except Exception as e:   # noqa: BLE001 - counted as a failure
            results[i] = "error: %s" % e

    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    t0 = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return results, time.time() - t0


def idle_then_served(port, n=1000):
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")   # never finished
        socks.append(s)
    time.sleep(0.5)
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/health")
    ok = c.getresponse().status == 200
    ms = (time.perf_counter() - t0) * 1000
    c.close()
    for s in socks:
        s.close()
    return ok, ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--askdb", default=os.path.join(ROOT, "build/askdb"))
    ap.add_argument("--fake", default=os.path.join(ROOT, "build/asan/fake_llm"))
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--clients", type=int, default=16)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    tmp = tempfile.mkdtemp(prefix="askdb-load-")
    fake, srv, port = start(args, tmp)
    failed = []
    rows = []
    try:
        for name, path, body in (
                ("POST /api/sql", "/api/sql", json.dumps({"database": "shop", "sql": SQL})),
                ("POST /api/ask (JSON)", "/api/ask",
                 json.dumps({"database": "shop", "question": "Customers per country?"}))):
            lats, errors, took = load(port, path, body, args.clients, args.seconds)
            if errors:
                failed.append("%s: %d errors, first %s" % (name, len(errors), errors[0]))
            rows.append((name, "%d clients, %.0f s" % (args.clients, args.seconds),
                         "%.0f req/s" % (len(lats) / took),
                         "p50 %.2f ms, p99 %.2f ms" % (pct(lats, 50) * 1000, pct(lats, 99) * 1000)))
        added = server_overhead(port)
        rows.append(("server's own time per question", "1 client, 300 questions",
                     "p50 %.3f ms" % statistics.median(added),
                     "p99 %.3f ms (client latency minus the agent's total_ms)" % pct(added, 99)))
        res, took = streamed(port)
        bad = [r for r in res if r != "ok"]
        if bad:
            failed.append("streamed: %d of %d not ok: %s" % (len(bad), len(res), bad[:3]))
        rows.append(("200 streamed questions at once", "SSE", "%d of 200 done ok" % (200 - len(bad)),
                     "all in %.2f s" % took))
        ok, ms = idle_then_served(port)
        if not ok:
            failed.append("a new client was not served beside 1,000 idle connections")
        rows.append(("1,000 idle connections held", "then GET /health", "served" if ok else "NOT served",
                     "in %.1f ms" % ms))
        rows.append(("server peak RSS", "over all of the above", "%.1f MiB" % peak_rss_mb(srv.pid), ""))
    finally:
        srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(20)
        except subprocess.TimeoutExpired:
            srv.kill()
        fake.terminate()
        fake.wait(10)
    print("| measure | load | result | latency |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        print("| %s |" % " | ".join(r))
    for f in failed:
        print("FAILED:", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
