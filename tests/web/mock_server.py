#!/usr/bin/env python3
"""mock_server.py - a stand-in for `askdb serve` while the page is built.

    python3 tests/web/mock_server.py --db shop=examples/shop.db \
        --script SCRIPT.json [--port 0] [--port-file F] [--token T] \
        [--workers N] [--candidates N] [--max-rows N] [--vendor build/web/vendor]

Speaks the HTTP API of `askdb serve` (README, "The web page") with the
page's own files (the paths scripts/web_embed.py compiles in), so that the
page can be developed and its browser test run before the real server
exists. It is not askdb: there is no agent. Each question takes the next
entries of a script in tests/fake_llm's format (a JSON array of
{"content", "delay_ms", "status"}): the SQL in an entry's ```sql fence
is run on the database with Python's sqlite3 (read-only); an error makes
an error and a repair step and takes the next entry, up to 3 attempts;
with {"options": {"answer": true}} one more entry's content is the
plain-English answer (an entry with a "status" other than 200 fails it:
the rows stand, and an answer_text step says why, as askdb serve sends
it only then). A delay_ms sleeps in the "reply" step, sending SSE
comments, so that a closed connection (the page's Cancel) is seen.

GET /mock/log returns what the mock got: one object per question with
database, question, conversation_id, options and how it ended.
"""
import argparse
import json
import os
import re
import sqlite3
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import web_embed  # noqa: E402  (the asset paths, shared with the C build)

FENCE_RE = re.compile(r"```(?:sql)?\s*\n(.*?)```", re.S)


class Mock:
    def __init__(self, dbs, script, token, vendor, workers, candidates=1, max_rows=1000):
        self.dbs = dbs                   # name -> path
        self.script = script
        self.next = 0
        self.token = token
        self.assets = {p: (t, f) for p, t, f in web_embed.assets(vendor)}
        self.log = []
        self.lock = threading.Lock()
        self.slots = threading.Semaphore(workers)   # questions at once; others queue
        self.queue = []                  # the questions waiting for a slot, oldest first
        self.candidates = candidates
        self.max_rows = max_rows

    def take(self):
        with self.lock:
            if self.next >= len(self.script):
                return {"status": 500, "content": "mock: script exhausted"}
            e = self.script[self.next]
            self.next += 1
            return e


def schema_of(path):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        tables = []
        for name, kind in con.execute(
                "SELECT name, type FROM sqlite_schema WHERE type IN ('table','view') "
                "AND name NOT LIKE 'sqlite_%' ORDER BY type = 'view', name"):
            q = '"%s"' % name.replace('"', '""')
            cols = []
            for _, cname, ctype, notnull, default, pk in con.execute("PRAGMA table_info(%s)" % q):
                samples = []
                if (ctype or "").upper() == "TEXT":
                    samples = [r[0] for r in con.execute(
                        'SELECT DISTINCT "%s" FROM (SELECT * FROM %s LIMIT 200) WHERE "%s" IS NOT NULL LIMIT 3'
                        % (cname, q, cname))]
                cols.append({"name": cname, "type": ctype, "notnull": bool(notnull),
                             "default": default, "pk": pk, "samples": samples})
            fks = [{"from": r[3], "table": r[2], "to": r[4]}
                   for r in con.execute("PRAGMA foreign_key_list(%s)" % q)]
            uniq = []
            for _, iname, unique, _, _ in con.execute("PRAGMA index_list(%s)" % q):
                if unique:
                    uniq.append(", ".join(r[2] or "?" for r in con.execute("PRAGMA index_info(\"%s\")" % iname)))
            rows = con.execute("SELECT count(*) FROM %s" % q).fetchone()[0]
            tables.append({"name": name, "kind": kind, "rows": rows, "rows_capped": False,
                           "columns": cols, "foreign_keys": fks, "unique": uniq})
        return {"engine": "sqlite", "path": path, "tables": tables, "text": ""}
    finally:
        con.close()


def run_sql(path, sql, max_rows=1000):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        t0 = time.monotonic()
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description or []]
        rows = []
        got = cur.fetchmany(max_rows + 1)
        for r in got[:max_rows]:
            rows.append([{"blob_hex": v.hex()} if isinstance(v, bytes) else v for v in r])
        return cols, rows, (time.monotonic() - t0) * 1000, "rows" if len(got) > max_rows else False
    finally:
        con.close()


class Cancelled(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    server_version = "askdb-mock/0"
    mock = None  # set in main

    def log_message(self, fmt, *args):
        if os.environ.get("MOCK_VERBOSE"):
            sys.stderr.write("mock: " + fmt % args + "\n")

    def send_json(self, status, obj, headers=None):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, code, message):
        self.send_json(status, {"error": {"code": code, "message": message}})

    def authorized(self):
        if not self.mock.token:
            return True
        if self.headers.get("Authorization") == "Bearer " + self.mock.token:
            return True
        self.error(401, "unauthorized", "this server needs a bearer token (askdb serve --token)")
        return False

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path in self.mock.assets:
            ctype, fpath = self.mock.assets[path]
            with open(fpath, "rb") as f:
                body = f.read()
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(body)
            return
        if path == "/health":
            return self.send_json(200, {"status": "ok", "version": "mock", "model": "m",
                                        "databases": len(self.mock.dbs)})
        if path == "/mock/log":
            return self.send_json(200, self.mock.log)
        if not path.startswith("/api/"):
            return self.error(404, "not_found", "no such page: %s" % path)
        if not self.authorized():
            return
        if path == "/api/databases":
            out = []
            for name, p in self.mock.dbs.items():
                out.append({"name": name, "engine": "sqlite", "path": p,
                            "tables": len(schema_of(p)["tables"])})
            return self.send_json(200, {"databases": out})
        m = re.fullmatch(r"/api/databases/([^/]+)/schema", path)
        if m:
            name = m.group(1)
            if name not in self.mock.dbs:
                return self.error(404, "unknown_database", "no database named '%s'" % name)
            return self.send_json(200, schema_of(self.mock.dbs[name]))
        return self.error(404, "not_found", "no such endpoint: %s" % path)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > 1 << 20:
            self.error(413, "too_large", "request body over 1 MiB")
            return None
        try:
            return json.loads(self.rfile.read(n) or b"null")
        except ValueError:
            self.error(400, "bad_json", "the body is not JSON")
            return None

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        if path not in ("/api/ask", "/api/sql"):
            return self.error(404, "not_found", "no such endpoint: %s" % path)
        if not self.authorized():
            return
        body = self.read_body()
        if body is None:
            return
        db = self.mock.dbs.get(body.get("database") if isinstance(body, dict) else None)
        if db is None:
            return self.error(404, "unknown_database", "no database named '%s'" % body.get("database"))
        if path == "/api/sql":
            try:
                cols, rows, ms, cut = run_sql(db, body.get("sql", ""))
                return self.send_json(200, {"sql": body["sql"], "columns": cols, "rows": rows,
                                            "row_count": len(rows), "truncated": cut, "exec_ms": ms})
            except sqlite3.Error as e:
                return self.send_json(200, {"sql": body.get("sql"), "error": str(e)})
        self.ask(db, body)

    # --- /api/ask -----------------------------------------------------------

    def sse(self, event, data):
        self.wfile.write(("event: %s\ndata: %s\n\n" % (event, json.dumps(data))).encode())
        self.wfile.flush()

    def sleep(self, ms):
        end = time.monotonic() + ms / 1000
        while time.monotonic() < end:
            time.sleep(min(0.1, max(0, end - time.monotonic())))
            try:
                self.wfile.write(b": waiting\n\n")
                self.wfile.flush()
            except OSError:
                raise Cancelled()

    def wait_slot(self, emit, stream):
        """Take a slot, or wait in the queue for one, oldest first, as
        askdb serve does: a `queued` event with the place whenever it
        changes. True once the slot is taken (a hang-up raises OSError)."""
        if self.mock.slots.acquire(blocking=False):
            return True
        me = object()
        with self.mock.lock:
            self.mock.queue.append(me)
        try:
            last = 0
            while True:
                with self.mock.lock:
                    pos = self.mock.queue.index(me) + 1
                if pos != last:
                    emit("queued", {"position": pos})
                    last = pos
                if pos == 1 and self.mock.slots.acquire(timeout=0.1):
                    return True
                if pos != 1:
                    time.sleep(0.1)
                if stream:
                    self.wfile.write(b": queued\n\n")
                    self.wfile.flush()
        finally:
            with self.mock.lock:
                self.mock.queue.remove(me)

    def results(self, body, answer, step, emit):
        """The events after a query ran: sql, rows, the answer in words
        (as askdb serve sends them: with the words asked for, the result
        step comes first, and the words after the rows, after any delay_ms
        of their entry)."""
        words = (body.get("options") or {}).get("answer")
        if words:
            step("result", sql=answer["sql"], row_count=answer["row_count"],
                 truncated=answer["truncated"], confidence=answer.get("confidence") or 1)
        emit("sql", {"sql": answer["sql"]})
        emit("rows", {"sql": answer["sql"], "columns": answer["columns"], "rows": answer["rows"],
                      "row_count": answer["row_count"], "truncated": answer["truncated"], "exec_ms": 1})
        if words:
            # As askdb serve: the words' prompt and reply steps; an
            # answer_text step only when the words could not be had (its
            # error), then no answer event; else the answer event.
            t = self.mock.take()
            step("prompt", **{"for": "answer", "provider": "mock"})
            self.sleep(t.get("delay_ms", 0))
            answer["llm_calls"] += 1
            if t.get("status", 200) != 200:
                why = "the model answered %s" % t["status"]
                err = (t.get("body") or {}).get("error") if isinstance(t.get("body"), dict) else None
                if isinstance(err, dict) and err.get("message"):
                    why += ": " + err["message"]
                step("reply", error=why, **{"for": "answer"})
                step("answer_text", error=why)
                return
            answer["answer"] = t.get("content", "")
            step("reply", reply=answer["answer"], ms=t.get("delay_ms", 40), prompt_tokens=300,
                 completion_tokens=len(answer["answer"]) // 4 + 1, **{"for": "answer"})
            emit("answer", {"text": answer["answer"]})

    def vote(self, db, body, answer, step, emit):
        """Candidates as the agent asks an HTTP model for them: the greedy
        one, then the others one at a time until a majority of the N agree
        (the rest are settled: not asked); each is run, and the most common
        rows win with their share of the N as the confidence."""
        n = self.mock.candidates
        answer["candidates"] = n
        step("prompt", **{"for": "sql", "attempt": 1, "candidates": 1, "provider": "mock"})
        ran, keys = [], []
        for k in range(1, n + 1):
            if k == 2:
                step("prompt", **{"for": "sql", "attempt": 1, "candidates": n - 1,
                                  "first_candidate": 2, "provider": "mock"})
            agreed = max((keys.count(x) for x in keys if x), default=0)
            if agreed > n // 2:
                step("reply", reply=None, attempt=1, candidate=k, settled=True)
                ran.append((None, None))
                keys.append(None)
                continue
            e = self.mock.take()
            answer["llm_calls"] += 1
            m = FENCE_RE.search(e.get("content", ""))
            sql = (m.group(1) if m else e.get("content", "")).strip()
            step("reply", reply=e.get("content", ""), ms=40, attempt=1, candidate=k,
                 completion_tokens=len(sql) // 4 + 1)
            try:
                r = run_sql(db, sql, self.mock.max_rows)
            except sqlite3.Error:
                r = None
            ran.append((sql, r))
            keys.append(json.dumps(sorted(json.dumps(row) for row in r[1])) if r else None)
        settled = sum(1 for s_, _ in ran if s_ is None)
        step("validate", ok=any(r for _, r in ran), settled=settled,
             candidates=["no_sql" if s_ is None else "none" if r else "db" for s_, r in ran])
        votes = [keys.count(k) if k else 0 for k in keys]
        win = votes.index(max(votes))
        sql, (cols, rows, ems, cut) = ran[win]
        nran = sum(1 for k in keys if k)
        conf = votes[win] / n
        step("execute", rows=len(rows), truncated=0, ms=round(ems, 2), candidate=win + 1,
             votes=votes, ran=nran, settled=settled, confidence=conf)
        answer["attempts"].append({"sql": sql, "error": None, "message": None, "llm_ms": 40})
        answer.update(status="ok", sql=sql, columns=cols, rows=rows, row_count=len(rows),
                      confidence=conf, truncated=cut, settled=settled)
        self.results(body, answer, step, emit)

    def ask(self, db, body):
        rid = uuid.uuid4().hex[:16]
        conv = body.get("conversation_id") or uuid.uuid4().hex[:16]
        entry = {"database": body.get("database"), "question": body.get("question"),
                 "conversation_id": body.get("conversation_id"), "options": body.get("options"),
                 "request_id": rid, "end": "running"}
        self.mock.log.append(entry)
        stream = "text/event-stream" in (self.headers.get("Accept") or "")
        t0 = time.monotonic()
        ms = lambda: int((time.monotonic() - t0) * 1000)  # noqa: E731
        events = []

        def emit(event, data):
            events.append((event, data))
            if stream:
                try:
                    self.sse(event, data)
                except OSError:
                    raise Cancelled()
                time.sleep(0.15)   # steps a person can watch arrive

        def step(name, **fields):
            emit("step", dict(step=name, request_id=rid, t_ms=ms(), **fields))

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if stream else "application/json")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Request-Id", rid)
        self.send_header("X-Conversation-Id", conv)
        self.end_headers()
        answer = {"question": body.get("question"), "request_id": rid, "conversation_id": conv,
                  "status": "error", "sql": None, "columns": None, "rows": None, "row_count": 0,
                  "truncated": False, "error": None, "attempts": [], "timings": {},
                  "llm_calls": 0, "candidates": 1, "confidence": None, "answer": None,
                  "not_a_question": False, "tokens": {"prompt": 0, "completion": 0},
                  # The mock keeps every conversation: only a first question starts one.
                  "conversation_started": not body.get("conversation_id")}
        slot = False
        try:
            slot = self.wait_slot(emit, stream)
            step("question", question=body.get("question"), hint=None)
            ntables = len(schema_of(db)["tables"])
            step("schema", tables=ntables, bytes=0, ms=1)
            step("link", on=True, whole=True, tables=ntables, of_tables=ntables)
            step("qcheck", question=True, why="names or values match")
            if self.mock.candidates > 1:
                self.vote(db, body, answer, step, emit)
                attempts = range(0)
            else:
                attempts = range(1, 4)
            for attempt in attempts:
                # Taken before the step is sent: a page that saw the step
                # knows the model was asked.
                e = self.mock.take()
                step("prompt", **{"for": "sql", "attempt": attempt, "candidates": 1, "provider": "mock"})
                answer["llm_calls"] += 1
                if e.get("delay_ms"):
                    if stream:
                        self.sleep(e["delay_ms"])
                    else:
                        time.sleep(e["delay_ms"] / 1000)
                if e.get("status", 200) != 200:
                    step("reply", error="model answered %s" % e["status"], attempt=attempt)
                    answer["error"] = {"code": "llm", "message": "the model answered %s" % e["status"]}
                    break
                m = FENCE_RE.search(e.get("content", ""))
                sql = (m.group(1) if m else e.get("content", "")).strip()
                step("reply", reply=e.get("content", ""), ms=e.get("delay_ms", 40), attempt=attempt,
                     prompt_tokens=900, completion_tokens=len(sql) // 4 + 1)
                try:
                    cols, rows, ems, cut = run_sql(db, sql, self.mock.max_rows)
                except sqlite3.Error as err:
                    cls = "unknown_column" if "no such column" in str(err) else \
                        "unknown_table" if "no such table" in str(err) else "syntax" if "syntax" in str(err) else "db"
                    step("error", **{"class": cls, "message": str(err), "sql": sql})
                    answer["attempts"].append({"sql": sql, "error": cls, "message": str(err), "llm_ms": 40})
                    if attempt < 3:
                        step("repair", **{"class": cls, "attempt": attempt + 1})
                    continue
                step("validate", ok=True)
                step("execute", rows=len(rows), truncated=cut or 0, ms=round(ems, 2))
                answer["attempts"].append({"sql": sql, "error": None, "message": None, "llm_ms": 40})
                answer.update(status="ok", sql=sql, columns=cols, rows=rows,
                              row_count=len(rows), error=None, confidence=1.0, truncated=cut)
                self.results(body, answer, step, emit)
                break
            else:
                if answer["status"] != "ok":
                    answer["error"] = {"code": "no_valid_sql",
                                       "message": "no valid SQL after 3 attempts; the last one failed: %s"
                                       % answer["attempts"][-1]["message"]}
            if answer["error"]:
                emit("error", {"error": answer["error"], "attempts": answer["attempts"]})
                # The answer object has the message alone, as askdb_answer_json writes it.
                answer["error"] = answer["error"]["message"]
            answer["timings"] = {"total_ms": ms()}
            step("answer", status=answer["status"], sql=answer["sql"], timings=answer["timings"])
            entry["end"] = answer["status"]
            if stream:
                self.sse("done", answer)
            else:
                self.wfile.write(json.dumps(answer).encode())
        except (Cancelled, OSError):
            entry["end"] = "cancelled"
        finally:
            if slot:
                self.mock.slots.release()


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", action="append", default=[], help="NAME=FILE")
    ap.add_argument("--script", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--token")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--max-rows", type=int, default=1000)
    ap.add_argument("--candidates", type=int, default=1,
                    help="N > 1: the first attempt takes N entries and votes on their rows")
    ap.add_argument("--vendor", default=os.path.join(ROOT, "build", "web", "vendor"))
    args = ap.parse_args(argv[1:])
    dbs = {}
    for d in args.db:
        name, _, path = d.partition("=")
        if not path or not os.path.isfile(path):
            ap.error("--db NAME=FILE with an existing file: %s" % d)
        dbs[name] = os.path.abspath(path)
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    Handler.mock = Mock(dbs, script, args.token, args.vendor, args.workers, args.candidates, args.max_rows)
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.replace(args.port_file + ".tmp", args.port_file)
    sys.stderr.write("mock: listening on 127.0.0.1:%d\n" % port)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
