#!/usr/bin/env python3
"""serve_local.py - askdb serve with the local model: 4 questions one after
another against the same 4 at once.

    python3 bench/serve_local.py [--askdb build/askdb] [--model PATH.gguf]
                                 [--db examples/shop.db]
                                 [--settings 1x2,4x2] [--rounds N]
                                 [--warm N]

For each setting WORKERSxTHREADS (the server's --workers and --threads), a
fresh server loads the model once, answers the first --warm questions
(default all 4) once to warm up (the weights paged in, the schema's
prompt-cache file), then, N rounds
(default 1):
  - one after another: the 4 questions, each waiting for the last (each
    question alone: its latency is the single-question figure);
  - together: the same 4 sent at once (each in its own conversation).
With the local model, --workers N decodes N questions as sequences of one
batch. Prints a Markdown table of the wall times, the per-question
latencies (min/median/max) and whether all were answered. The default
model is the one `make demo` fetches (scripts/models.sh).
"""
import argparse
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUESTIONS = [
    "How many customers are there in each country?",
    "What are the 5 most expensive products?",
    "How many orders were placed in 2024?",
    "What is the total of all payments?",
]


def start(args, workers, threads, tmp):
    err = os.path.join(tmp, "serve-%d-%d.err" % (workers, threads))
    cmd = [args.askdb, "serve", "--listen", "127.0.0.1:0", "--db", "shop=" + args.db,
           "--provider", "local", "--workers", str(workers), "--threads", str(threads),
           "--conversations", "16", "--access-log", "off"]
    if args.model:
        cmd += ["--model", args.model]
    srv = subprocess.Popen(cmd, stderr=open(err, "w"),
                           env=dict(os.environ, ASKDB_CACHE_DIR=args.cache))
    for _ in range(1200):
        text = open(err).read()
        if "listening on http://" in text:
            return srv, int(text.split("listening on http://")[1].split(":")[1].split("/")[0])
        if srv.poll() is not None:
            raise SystemExit("server exited: " + text)
        time.sleep(0.1)
    raise SystemExit("server did not start")


def ask(port, q, out, i):
    """Ask q as a stream of events (their keep-alives hold the connection
    open however long the question takes on a busy machine); the done
    event carries the answer."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t0 = time.time()
    c.request("POST", "/api/ask", body=json.dumps({"database": "shop", "question": q}),
              headers={"Content-Type": "application/json",
                       "Accept": "text/event-stream"})
    r = c.getresponse()
    event, status = None, None
    for line in r:
        line = line.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == "done":
            status = json.loads(line[6:])["status"]
            break
    out[i] = (status, time.time() - t0)
    c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--askdb", default=os.path.join(ROOT, "build/askdb"))
    ap.add_argument("--model", default=None)
    ap.add_argument("--db", default=os.path.join(ROOT, "examples/shop.db"))
    ap.add_argument("--cache", default=os.environ.get(
        "ASKDB_CACHE_DIR", os.path.expanduser("~/.cache/askdb")))
    ap.add_argument("--settings", default="1x2,4x2")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--warm", type=int, default=4)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="askdb-local-")
    rows = []
    settings = [tuple(int(x) for x in s.split("x"))
                for s in args.settings.split(",")]
    for workers, threads in settings:
        srv, port = start(args, workers, threads, tmp)
        try:
            # Warm: the weights paged in, the schema's prompt-cache file
            # written, each question asked once (their answers are the
            # same every time: greedy decoding).
            warm = [None] * 4
            for i, q in enumerate(QUESTIONS[:args.warm]):
                ask(port, q, warm, i)
            for r in range(args.rounds):
                seq = [None] * 4
                t0 = time.time()
                for i, q in enumerate(QUESTIONS):
                    ask(port, q, seq, i)
                t_seq = time.time() - t0
                tog = [None] * 4
                ts = [threading.Thread(target=ask, args=(port, q, tog, i))
                      for i, q in enumerate(QUESTIONS)]
                t0 = time.time()
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                t_tog = time.time() - t0
                ok = sum(1 for s in seq + tog if s and s[0] == "ok")
                rows.append((workers, threads, t_seq, t_tog, ok,
                             lat(seq), lat(tog), os.getloadavg()[0]))
                print("workers %d threads %d: one after another %.1f s (%s), "
                      "together %.1f s (%s), %d/8 ok, load %.2f"
                      % (workers, threads, t_seq, lat(seq), t_tog, lat(tog),
                         ok, os.getloadavg()[0]), file=sys.stderr)
        finally:
            srv.send_signal(signal.SIGTERM)
            srv.wait(60)
    print("| --workers | --threads | 4 one after another | each alone (min/med/max) "
          "| 4 at once | each, at once (min/med/max) | answered | load (1 min) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for w, t, a, b, ok, la, lb, load in rows:
        print("| %d | %d | %.1f s | %s | %.1f s | %s | %d of 8 | %.2f |"
              % (w, t, a, la, b, lb, ok, load))
    return 0


def lat(res):
    """min/median/max of the latencies in res, in seconds."""
    xs = sorted(r[1] for r in res if r)
    if not xs:
        return "-"
    return "%.1f/%.1f/%.1f s" % (xs[0], xs[len(xs) // 2], xs[-1])


if __name__ == "__main__":
    sys.exit(main())
