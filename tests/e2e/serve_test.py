#!/usr/bin/env python3
"""serve_test.py - askdb serve end to end: the real binary, the scripted model.

    ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm python3 tests/e2e/serve_test.py [NAME...]

Each test starts its own fake_llm (tests/fake_llm) and its own server on a
free loopback port, talks HTTP to it with the standard library only, and
stops both. Prints "ok NAME" / "FAIL NAME: why" and a closing
"N passed, N failed"; exits 1 when a test failed.
"""
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ASKDB = os.path.abspath(os.environ.get("ASKDB", os.path.join(ROOT, "build/asan/askdb")))
FAKE = os.path.abspath(os.environ.get("FAKE_LLM", os.path.join(ROOT, "build/asan/fake_llm")))
SHOP = os.path.join(ROOT, "examples/shop.db")

COUNTRY_SQL = ("SELECT country, count(*) AS n FROM customers GROUP BY country "
               "ORDER BY n DESC, country LIMIT 3")
COUNTRY_ROWS = [["DE", 10], ["US", 9], ["FR", 7]]


def reply(sql, **kw):
    e = {"content": "```sql\n%s\n```" % sql}
    e.update(kw)
    return e


class Env:
    """A temporary directory with a fake model and a server."""

    def __init__(self, name):
        self.dir = tempfile.mkdtemp(prefix="askdb-serve-%s-" % name)
        self.fake = None
        self.srv = None
        self.port = None
        self.fport = None

    def start_fake(self, script):
        path = os.path.join(self.dir, "script.json")
        with open(path, "w") as f:
            json.dump(script, f)
        portfile = os.path.join(self.dir, "fake.port")
        self.fake_log = os.path.join(self.dir, "fake.log")
        self.fake = subprocess.Popen(
            [FAKE, "--script", path, "--log", self.fake_log, "--port-file", portfile],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "fake.err"), "w"))
        for _ in range(200):
            if os.path.exists(portfile):
                self.fport = int(open(portfile).read())
                return
            time.sleep(0.05)
        raise AssertionError("fake_llm did not start")

    def requests_seen(self):
        try:
            return [json.loads(l) for l in open(self.fake_log) if l.strip()]
        except FileNotFoundError:
            return []

    def start(self, *args, script=None, dbs=(("shop", SHOP),), env=None, wait=True):
        if script is not None:
            self.start_fake(script)
        cmd = [ASKDB, "serve", "--listen", "127.0.0.1:0"]
        for name, path in dbs:
            cmd += ["--db", "%s=%s" % (name, path)]
        if self.fport:
            cmd += ["--llm-url", "http://127.0.0.1:%d/v1" % self.fport, "--model", "m"]
        # The question check would ask the model about questions that name
        # nothing of the schema ("q"): the scripts here answer SQL only.
        cmd += ["--no-question-check"] + list(args)
        e = dict(os.environ)
        e["ASKDB_CACHE_DIR"] = os.path.join(self.dir, "cache")
        e["ASKDB_RETRY_BASE_MS"] = "1"
        e.pop("ASKDB_SERVER_TOKEN", None)
        if env:
            e.update(env)
        self.err_path = os.path.join(self.dir, "serve.err")
        self.srv = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                    stderr=open(self.err_path, "w"), env=e)
        if not wait:
            return
        for _ in range(400):
            text = open(self.err_path).read()
            if "listening on http://" in text:
                self.port = int(text.split("listening on http://")[1].split(":")[1].split("/")[0])
                return
            if self.srv.poll() is not None:
                raise AssertionError("server exited %d: %s" % (self.srv.returncode, text))
            time.sleep(0.05)
        raise AssertionError("server did not start: " + open(self.err_path).read())

    def stderr(self):
        return open(self.err_path).read()

    def failure_context(self):
        """The server's state and the end of its stderr, for a failed test:
        a crash (a sanitizer's report) or a stop shows there, not in the
        assertion."""
        if not self.srv:
            return ""
        try:
            lines = open(self.err_path, errors="replace").read().splitlines()
        except OSError:
            lines = []
        rc = self.srv.poll()
        return "    server %s; its stderr ends:\n%s" % (
            "running" if rc is None else "exited %d" % rc,
            "\n".join("      " + l[:300] for l in lines[-25:]))

    def conn(self, timeout=30):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=30):
        h = {"Content-Type": "application/json"} if body is not None else {}
        h.update(headers or {})
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        c = self.conn(timeout)
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data

    def json(self, method, path, body=None, headers=None, want=200):
        status, hdrs, data = self.request(method, path, body, headers)
        assert status == want, "%s %s: status %d, want %d: %s" % (
            method, path, status, want, data[:300])
        return json.loads(data), hdrs

    def stop(self):
        if self.srv and self.srv.poll() is None:
            self.srv.send_signal(signal.SIGTERM)
            try:
                self.srv.wait(20)
            except subprocess.TimeoutExpired:
                self.srv.kill()
                self.srv.wait()
                raise AssertionError("server did not stop on SIGTERM")
        if self.fake and self.fake.poll() is None:
            self.fake.terminate()
            self.fake.wait(10)
        if self.srv:
            err = self.stderr()
            for bad in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                        "runtime error:", "SUMMARY: UndefinedBehaviorSanitizer"):
                assert bad not in err, "sanitizer report:\n" + err[-3000:]
        shutil.rmtree(self.dir, ignore_errors=True)


def sse_events(resp):
    """The (event, data) pairs of an SSE response, as they arrive."""
    event, data = None, []
    while True:
        line = resp.readline()
        if not line:
            return
        line = line.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                yield event or "message", json.loads("\n".join(data))
            event, data = None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))


def ask_stream(env, body, headers=None, timeout=60):
    c = env.conn(timeout)
    h = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    h.update(headers or {})
    c.request("POST", "/api/ask", body=json.dumps(body), headers=h)
    r = c.getresponse()
    return c, r


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

def test_health_databases_schema_openapi(env):
    env.start(script=[])
    h, _ = env.json("GET", "/health")
    assert h["status"] == "ok" and h["databases"] == 1 and h["provider"] == "openai", h
    d, _ = env.json("GET", "/api/databases")
    assert d == {"databases": [{"name": "shop", "engine": "sqlite", "tables": 7}]}, d
    s, _ = env.json("GET", "/api/databases/shop/schema")
    names = sorted(t["name"] for t in s["tables"])
    assert "customers" in names and "orders" in names, names
    orders = [t for t in s["tables"] if t["name"] == "orders"][0]
    assert orders["rows"] > 0 and orders["foreign_keys"], orders
    # The view first, then the tables (what ends the text stands right
    # before a question; bench/shop/README.md).
    assert s["text"].startswith("CREATE VIEW customer_revenue ("), \
        s["text"][:80]
    assert "\n\nCREATE TABLE categories (" in s["text"], s["text"][:200]
    env.json("GET", "/api/databases/nope/schema", want=404)
    o, _ = env.json("GET", "/api/openapi.json")
    assert o["openapi"].startswith("3.1") and "/api/ask" in o["paths"], o.keys()
    status, hdrs, body = env.request("GET", "/")
    assert status == 200 and hdrs["content-type"].startswith("text/html"), (status, hdrs)


def test_openapi_document_validates(env):
    # openapi-spec-validator (pinned in scripts/mcp_venv.sh, whose Python
    # make e2e runs this file with).
    from openapi_spec_validator import validate
    env.start(script=[])
    doc, _ = env.json("GET", "/api/openapi.json")
    validate(doc)
    ops = {(p, m) for p, v in doc["paths"].items() for m in v}
    for want in (("/api/ask", "post"), ("/api/sql", "post"), ("/mcp", "post"),
                 ("/api/databases/{name}/schema", "get"), ("/health", "get")):
        assert want in ops, (want, ops)
    # Every answer, an error's included, is a JSON document the server
    # must allocate: out of memory (or of threads for a question) it is a
    # 500 with the usual error body, which the document did not list.
    for p, v in doc["paths"].items():
        for m, op in v.items():
            assert op["responses"].get("500") == {"$ref": "#/components/responses/E500"}, (p, m)
    e500 = doc["components"]["responses"]["E500"]["content"]["application/json"]["schema"]
    assert e500 == {"$ref": "#/components/schemas/Error"}, e500


def test_responses_are_what_the_openapi_document_says(env):
    # Every body below validates against the schema the document gives
    # its path, method and status (jsonschema, from scripts/mcp_venv.sh).
    # Value was a oneOf of integer and number, and an integer is both, so
    # every result with an integer in it failed; other methods than GET on
    # / and /api/openapi.json get a 405 the document did not list.
    import jsonschema
    env.start(script=[reply("SELECT 7 AS n, 1.5 AS r, 'x' AS t, NULL AS z, x'00ff' AS b")])
    doc, _ = env.json("GET", "/api/openapi.json")

    def schema_of(path, method, status):
        op = doc["paths"][path][method]
        assert str(status) in op["responses"], (path, method, status, sorted(op["responses"]))
        r = op["responses"][str(status)]
        while "$ref" in r:
            ref, r = r["$ref"], doc
            for part in ref[2:].split("/"):
                r = r[part]
        return r["content"]["application/json"]["schema"]

    def valid(path, method, status, body):
        schema = dict(schema_of(path, method, status), components=doc["components"])
        jsonschema.validate(json.loads(body), schema, cls=jsonschema.Draft202012Validator)

    sql = "SELECT 7 AS n, 1.5 AS r, 'x' AS t, NULL AS z, x'00ff' AS b"
    tries = [
        ("POST", "/api/sql", {"database": "shop", "sql": sql}, {}, 200),
        ("POST", "/api/sql", {"database": "shop", "sql": "DELETE FROM orders"}, {}, 400),
        ("POST", "/api/sql", {"database": "nope", "sql": sql}, {}, 404),
        ("POST", "/api/sql", {"database": "shop"}, {}, 400),
        ("POST", "/api/ask", {"database": "shop", "question": "Seven?"}, {"Accept": "application/json"}, 200),
        ("POST", "/api/ask", {"database": "shop", "question": " "}, {}, 400),
        ("GET", "/api/databases/shop/schema", None, {}, 200),
        ("PUT", "/api/openapi.json", None, {}, 405),
        ("DELETE", "/", None, {}, 405),
    ]
    for method, path, body, headers, want in tries:
        status, _, data = env.request(method, path, body, headers)
        assert status == want, (method, path, status, data[:200])
        key = "/api/databases/{name}/schema" if path.endswith("/schema") else path
        op = "get" if method in ("PUT", "DELETE") else method.lower()
        valid(key, op, status, data)


def test_limits_count_characters_as_the_openapi_document_does(env):
    # The document's maxLength counts characters (code points); the server
    # counted UTF-8 bytes: 3,000 CJK characters (9,000 bytes) passed the
    # schema and got a 400, so a question in Japanese had a third of an
    # English one's room. Now both count characters, whatever their bytes.
    import jsonschema
    env.start(script=[reply(COUNTRY_SQL), reply(COUNTRY_SQL)])
    doc, _ = env.json("GET", "/api/openapi.json")
    comp = doc["components"]["schemas"]
    qmax = comp["AskRequest"]["properties"]["question"]["maxLength"]
    sql_schema = doc["paths"]["/api/sql"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    smax = sql_schema["properties"]["sql"]["maxLength"]
    assert (qmax, smax) == (8192, 65536), (qmax, smax)
    ask = dict(comp["AskRequest"], components=doc["components"])

    def post(path, body):
        status, _, data = env.request("POST", path, body, {"Accept": "application/json"})
        return status, json.loads(data)

    # 3,000 CJK characters, and the most the schema allows with a 4-byte
    # character in it (32,768 bytes): the schema and the server take them.
    for q in ("顧客" * 1500, "How many customers? 🙂 " + "表" * (qmax - 22)):
        body = {"database": "shop", "question": q}
        jsonschema.validate(body, ask, cls=jsonschema.Draft202012Validator)
        status, a = post("/api/ask", body)
        assert status == 200 and a["status"] == "ok", (len(q), status, str(a)[:300])
    # One more: both refuse it, and the message counts characters.
    body = {"database": "shop", "question": "表" * (qmax + 1)}
    assert not jsonschema.Draft202012Validator(ask).is_valid(body)
    status, e = post("/api/ask", body)
    assert status == 400 and "at most 8192 characters" in e["error"]["message"], (status, e)
    # The statement of /api/sql the same way.
    head = "SELECT 1 AS n -- "
    status, r = post("/api/sql", {"database": "shop", "sql": head + "é" * (smax - len(head))})
    assert status == 200 and r["rows"] == [[1]], (status, str(r)[:300])
    status, e = post("/api/sql", {"database": "shop", "sql": head + "é" * (smax - len(head) + 1)})
    assert status == 400 and "at most 65536 characters" in e["error"]["message"], (status, e)


def test_a_database_name_too_long_is_refused_as_the_document_says(env):
    # The server refuses a database name over 127 characters with a 400;
    # the document set no maxLength on it, so a client that checked the
    # body had it refused all the same, with a message that asked for
    # "database" as a string, which it was. And a name it does not serve
    # is a 404 that says where the names are.
    import jsonschema
    env.start(script=[])
    doc, _ = env.json("GET", "/api/openapi.json")
    ask = dict(doc["components"]["schemas"]["AskRequest"], components=doc["components"])
    sql = doc["paths"]["/api/sql"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    for path, schema, body in (("/api/ask", ask, {"question": "q"}),
                               ("/api/sql", sql, {"sql": "SELECT 1"})):
        ok = dict(body, database="é" * 127)
        jsonschema.validate(ok, schema, cls=jsonschema.Draft202012Validator)
        status, _, data = env.request("POST", path, ok)
        e = json.loads(data)["error"]
        assert status == 404 and "GET /api/databases lists them" in e["message"], (path, status, e)
        long = dict(body, database="é" * 128)
        assert not jsonschema.Draft202012Validator(schema).is_valid(long), path
        status, _, data = env.request("POST", path, long)
        e = json.loads(data)["error"]
        assert status == 400 and "\"database\" (at most 127 characters)" in e["message"], (path, e)
    status, _, data = env.request("GET", "/api/databases/nope/schema")
    assert status == 404 and "GET /api/databases lists them" in json.loads(data)["error"]["message"]


def test_a_question_of_unicode_white_space_is_blank(env):
    # The document's pattern "\S" (JSON Schema's regex, ECMA-262's) takes any
    # Unicode white space for white space, as its description says, "a
    # question of nothing but white space is a 400"; the server looked at
    # ASCII's alone and sent an ideographic or no-break space to the model.
    import jsonschema
    env.start(script=[reply(COUNTRY_SQL)])
    doc, _ = env.json("GET", "/api/openapi.json")
    ask = dict(doc["components"]["schemas"]["AskRequest"], components=doc["components"])
    for q in ("\u3000", " \u00a0\t", "\u2003\u2028\n"):
        body = {"database": "shop", "question": q}
        assert not jsonschema.Draft202012Validator(ask).is_valid(body), repr(q)
        status, _, data = env.request("POST", "/api/ask", body, {"Accept": "application/json"})
        assert status == 400 and "not blank" in json.loads(data)["error"]["message"], (repr(q), status, data[:200])
    assert env.requests_seen() == [], env.requests_seen()
    # White space around words is still a question.
    body = {"database": "shop", "question": "\u3000Customers per country?\u00a0"}
    a, _ = env.json("POST", "/api/ask", body, {"Accept": "application/json"})
    assert a["status"] == "ok" and a["rows"] == COUNTRY_ROWS, a


def test_openapi_describes_mcp_as_served(env):
    # The OpenAPI document's /mcp is what the server speaks: the revisions
    # of its MCP-Protocol-Version header are those server/discover lists
    # (2026-07-28 was missing), the stateless revision's Mcp-Method and
    # Mcp-Name headers are named, and every status the tries below get is
    # among the operation's responses (413 was missing).
    env.start("--max-body", "2000", script=[])
    doc, _ = env.json("GET", "/api/openapi.json")
    op = doc["paths"]["/mcp"]["post"]
    params = {p["name"]: p for p in op["parameters"]}
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    status, _, data = env.request(
        "POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                         "params": {"_meta": meta}},
        headers={"Accept": "application/json", "MCP-Protocol-Version": "2026-07-28",
                 "Mcp-Method": "server/discover"})
    assert status == 200, (status, data)
    spoken = json.loads(data)["result"]["supportedVersions"]
    assert params["MCP-Protocol-Version"]["schema"]["enum"] == spoken, (params, spoken)
    assert "Mcp-Method" in params and "Mcp-Name" in params, sorted(params)
    sid = mcp_session(env)
    tries = [
        ({"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"Mcp-Session-Id": sid}),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, {"Mcp-Session-Id": sid}),
        ({"jsonrpc": "2.0", "id": 3, "method": "ping"}, {}),
        ({"jsonrpc": "2.0", "id": 4, "method": "ping"}, {"Mcp-Session-Id": "nope"}),
        ({"jsonrpc": "2.0", "id": 5, "method": "ping", "pad": "x" * 3000},
         {"Mcp-Session-Id": sid}),
        ({"jsonrpc": "2.0", "id": 6, "method": "ping"},
         {"Mcp-Session-Id": sid, "Origin": "http://evil.example"}),
        ({"jsonrpc": "2.0", "id": 7, "method": "ping"},
         {"Mcp-Session-Id": sid, "Content-Type": "text/plain"}),
    ]
    seen = set()
    for body, h in tries:
        status, _, data = env.request("POST", "/mcp", body,
                                      headers=dict(h, Accept="application/json"))
        seen.add(status)
        assert str(status) in op["responses"], (status, body, data[:200], sorted(op["responses"]))
    assert {200, 202, 400, 404, 413, 403, 415} <= seen, seen


def test_ask_json_returns_the_answer(env):
    env.start(script=[reply(COUNTRY_SQL)])
    a, hdrs = env.json("POST", "/api/ask", {"database": "shop", "question": "Customers per country?"},
                       headers={"X-Request-Id": "req-1"})
    assert a["status"] == "ok", a
    assert a["sql"] == COUNTRY_SQL and a["rows"] == COUNTRY_ROWS, a
    assert a["columns"] == ["country", "n"] and a["request_id"] == "req-1", a
    assert hdrs["x-request-id"] == "req-1", hdrs
    assert a["conversation_id"] == hdrs["x-conversation-id"], (a, hdrs)
    # The access log line is written once the response is done, a moment
    # after the client has it.
    for _ in range(50):
        log = [json.loads(l) for l in env.stderr().splitlines() if l.startswith("{")]
        if any(l["request_id"] == "req-1" for l in log):
            break
        time.sleep(0.1)
    assert any(l["request_id"] == "req-1" and l["status"] == 200 and l["path"] == "/api/ask"
               for l in log), log


def shortest_reals(text):
    """The JSON text parsed, asserting every real in it is written with no
    more significant digits than the shortest text that reads back."""
    def sig(t):
        return len(re.split("[eE]", t)[0].lstrip("-").replace(".", "").strip("0"))

    def check(t):
        assert sig(t) <= sig(repr(float(t))), "%s: not the shortest" % t
        return float(t)
    return json.loads(text, parse_float=check)


def test_reals_are_the_shortest_text_that_reads_back(env):
    # jansson alone writes every real with 17 digits (0.1 as
    # 0.10000000000000001): the answer, the stream's events and the
    # access log give each the shortest that reads back as the same double.
    sql = "SELECT 0.1 AS a, 123456789.12345678 AS b"
    env.start(script=[dict(reply(sql), repeat=True)])
    status, _, data = env.request("POST", "/api/ask", {"database": "shop", "question": "q"},
                                  headers={"Accept": "application/json"})
    assert status == 200 and b'"rows":[[0.1,123456789.12345678]]' in data, data[:300]
    shortest_reals(data)
    c, r = ask_stream(env, {"database": "shop", "question": "q"})
    raw = r.read().decode()
    c.close()
    assert raw.count('"rows":[[0.1,123456789.12345678]]') == 2, raw[-600:]
    for line in raw.splitlines():
        if line.startswith("data: "):
            shortest_reals(line[6:])
    for _ in range(50):
        log = [l for l in env.stderr().splitlines() if l.startswith("{")]
        if len(log) >= 2:
            break
        time.sleep(0.1)
    assert len(log) >= 2, log
    for line in log:
        shortest_reals(line)


def test_ask_json_keeps_a_slow_answers_connection_alive(env):
    # A JSON answer sends nothing until it is done: after 15 s of waiting
    # a line break goes first (blank to JSON), so that no idle timeout
    # (libmicrohttpd's 60 s, a proxy's) closes the connection and loses
    # the answer. The document after it is whole and parses.
    env.start(script=[reply(COUNTRY_SQL, delay_ms=16500)])
    status, hdrs, data = env.request("POST", "/api/ask",
                                     {"database": "shop", "question": "Customers per country?"},
                                     timeout=60)
    assert status == 200, (status, data[:200])
    assert data.startswith(b"\n") and data.lstrip().startswith(b"{"), data[:40]
    assert data.count(b"\n") >= 1 and b"\n" not in data.strip(), data[:200]
    a = json.loads(data)
    assert a["status"] == "ok" and a["rows"] == COUNTRY_ROWS, a


def test_accept_header_is_read_as_media_types(env):
    # A stream only when text/event-stream itself is accepted (any case,
    # with parameters), not at q=0 nor as part of another type's name.
    env.start(script=[dict(reply(COUNTRY_SQL), repeat=True)])
    for accept, sse in (("text/event-stream", True), ("TEXT/Event-Stream", True),
                        ("application/json, text/event-stream", True),
                        ("text/event-stream; charset=utf-8", True),
                        ("text/event-stream;q=0, application/json", False),
                        ("text/event-stream ; q=0.0", False),
                        ("text/event-streamx", False), ("application/json", False)):
        status, hdrs, data = env.request("POST", "/api/ask", {"database": "shop", "question": "q"},
                                         headers={"Accept": accept})
        assert status == 200, (accept, status, data[:200])
        ctype = hdrs["content-type"]
        assert ctype.startswith("text/event-stream") == sse, (accept, ctype)
        if not sse:
            assert json.loads(data)["status"] == "ok", (accept, data[:200])


def test_ask_streams_steps_then_done(env):
    env.start(script=[reply("SELECT nope FROM customers"), reply(COUNTRY_SQL)])
    c, r = ask_stream(env, {"database": "shop", "question": "Customers per country?"},
                      headers={"X-Request-Id": "s-1"})
    assert r.status == 200 and r.getheader("Content-Type") == "text/event-stream", r.status
    evs = list(sse_events(r))
    c.close()
    names = [e for e, _ in evs]
    assert names[-1] == "done", names
    steps = [d["step"] for e, d in evs if e == "step"]
    for want in ("question", "schema", "prompt", "reply", "error", "repair",
                 "validate", "execute", "answer"):
        assert want in steps, (want, steps)
    assert all(d["request_id"] == "s-1" for e, d in evs if e == "step"), evs
    err = [d for e, d in evs if e == "step" and d["step"] == "error"][0]
    assert err["class"] == "unknown_column", err
    i_sql, i_rows, i_done = names.index("sql"), names.index("rows"), names.index("done")
    assert i_sql < i_rows < i_done, names
    rows = dict(evs)["rows"]
    assert rows["rows"] == COUNTRY_ROWS and rows["truncated"] is False, rows
    done = evs[-1][1]
    assert done["status"] == "ok" and done["rows"] == COUNTRY_ROWS, done
    assert len(done["attempts"]) == 2, done["attempts"]


def test_follow_up_reads_the_conversation(env):
    env.start(script=[reply(COUNTRY_SQL), reply("SELECT count(*) AS n FROM customers"),
                      reply("SELECT count(*) AS n FROM customers"), reply("SELECT count(*) AS n FROM customers")])
    a, _ = env.json("POST", "/api/ask", {"database": "shop", "question": "Customers per country?"})
    cid = a["conversation_id"]
    assert a["conversation_started"] is True, a
    b, _ = env.json("POST", "/api/ask", {"database": "shop", "question": "and in total?",
                                         "conversation_id": cid})
    assert b["conversation_id"] == cid and b["rows"] == [[60]], b
    assert b["conversation_started"] is False, b
    reqs = env.requests_seen()
    last_user = [m for m in reqs[-1]["body"]["messages"] if m["role"] == "user"][-1]["content"]
    assert "Customers per country?" in last_user, last_user
    # Another conversation does not see it.
    c, _ = env.json("POST", "/api/ask", {"database": "shop", "question": "anything"})
    assert c["conversation_id"] != cid, c
    # An id the server does not know (it restarted, or dropped it): the
    # question starts that conversation, and says so.
    g, _ = env.json("POST", "/api/ask", {"database": "shop", "question": "and in total?",
                                         "conversation_id": "gone-1"})
    assert g["conversation_id"] == "gone-1" and g["conversation_started"] is True, g


def test_a_conversation_of_another_database_says_what_to_do(env):
    # A follow-up's conversation_id names a conversation of another
    # database: nothing is asked, the answer's status is usage, and the
    # message says what to do about it (it said only what was wrong).
    other = os.path.join(env.dir, "other.db")
    shutil.copyfile(SHOP, other)
    env.start(script=[reply(COUNTRY_SQL)], dbs=(("shop", SHOP), ("other", other)))
    a, _ = env.json("POST", "/api/ask", {"database": "shop", "question": "Customers per country?"},
                    {"Accept": "application/json"})
    cid = a["conversation_id"]
    for accept in ("application/json", "text/event-stream"):
        status, hdrs, data = env.request("POST", "/api/ask", {
            "database": "other", "question": "and in total?", "conversation_id": cid},
            {"Accept": accept})
        assert status == 200 and hdrs["x-conversation-id"] == cid, (status, hdrs)
        if accept == "text/event-stream":
            data = data.decode().split("event: done\ndata: ")[1]
        b = json.loads(data)
        assert b["status"] == "usage", b
        msg = b["error"]["message"]
        assert msg.startswith("conversation '%s' belongs to database 'shop'" % cid), msg
        assert "leave out conversation_id" in msg, msg
    assert len(env.requests_seen()) == 1


def test_errors_have_their_status(env):
    env.start("--max-body", "2000", script=[])
    cases = [
        ("POST", "/api/ask", "{not json", {"Content-Type": "application/json"}, 400, "bad_json"),
        ("POST", "/api/ask", json.dumps({"database": "shop"}), {"Content-Type": "application/json"}, 400, "bad_request"),
        ("POST", "/api/ask", json.dumps({"database": "shop", "question": 5}), {"Content-Type": "application/json"}, 400, "bad_request"),
        ("POST", "/api/ask", json.dumps({"database": "shop", "question": ""}), {"Content-Type": "application/json"}, 400, "bad_request"),
        ("POST", "/api/ask", json.dumps({"database": "shop", "question": " \t\n "}), {"Content-Type": "application/json"}, 400, "bad_request"),
        ("POST", "/api/ask", json.dumps({"database": "shop", "question": "q", "conversation_id": "../x"}), {"Content-Type": "application/json"}, 400, "bad_request"),
        ("POST", "/api/ask", json.dumps({"database": "nope", "question": "q"}), {"Content-Type": "application/json"}, 404, "not_found"),
        ("POST", "/api/ask", json.dumps({"database": "shop", "question": "q"}), {"Content-Type": "text/plain"}, 415, "unsupported_media_type"),
        ("POST", "/api/ask", json.dumps({"database": "shop", "question": "x" * 5000}), {"Content-Type": "application/json"}, 413, "too_large"),
        ("GET", "/api/ask", None, {}, 405, "method_not_allowed"),
        ("DELETE", "/api/databases", None, {}, 405, "method_not_allowed"),
        ("GET", "/nope", None, {}, 404, "not_found"),
        ("POST", "/api/sql", json.dumps({"database": "shop"}), {"Content-Type": "application/json"}, 400, "bad_request"),
    ]
    for method, path, body, hdrs, want, code in cases:
        c = env.conn()
        c.request(method, path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        c.close()
        assert r.status == want, (method, path, r.status, data[:200])
        e = json.loads(data)
        assert e["error"]["code"] == code and e["error"]["message"], (path, e)
        if want == 405:
            assert r.getheader("Allow"), (path, r.getheaders())


def test_a_body_announced_too_large_is_refused_before_it_is_sent(env):
    # A client that waits for "100 Continue" before a body whose
    # Content-Length is past --max-body gets the 413 at once, no 100: the
    # server said 100 and read (and dropped) every byte before its 413, so
    # curl sent all of a 100 MB upload to be refused.
    env.start("--max-body", "2000", script=[])
    s = socket.create_connection(("127.0.0.1", env.port), timeout=5)
    try:
        s.sendall(b"POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Content-Type: application/json\r\nContent-Length: 100000000\r\n"
                  b"Expect: 100-continue\r\n\r\n")
        head = b""
        while b"}}" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
    finally:
        s.close()
    assert head.startswith(b"HTTP/1.1 413 ") and b'"too_large"' in head, head[:300]
    # A client that sends its body at once (Python's http.client) is
    # still read to the end and gets the 413, not a broken pipe.
    status, _, data = env.request("POST", "/api/sql", {"database": "shop", "sql": "x" * 3000000})
    assert status == 413 and json.loads(data)["error"]["code"] == "too_large", (status, data[:200])
    h, _ = env.json("GET", "/health")
    assert h["status"] == "ok", h


def test_a_body_that_never_ends_is_cut(env):
    # A body past --max-body is read to its end so that the client hears
    # the 413; a chunked one that never ended held its connection's thread
    # for as long as it was sent. Past 64 MiB dropped the connection is
    # closed, and the access log says 413, not completed.
    env.start("--max-body", "2000", script=[])
    s = socket.create_connection(("127.0.0.1", env.port), timeout=10)
    chunk = b"%x\r\n%s\r\n" % (1 << 20, b"x" * (1 << 20))
    sent = 0
    t0 = time.time()
    try:
        s.sendall(b"POST /api/sql HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        while sent < (1 << 30) and time.time() - t0 < 60:
            s.sendall(chunk)
            sent += 1 << 20
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        s.close()
    assert sent < 200 << 20, "the server read %d MiB of an endless body" % (sent >> 20)
    h, _ = env.json("GET", "/health")
    assert h["status"] == "ok", h
    env.srv.send_signal(signal.SIGTERM)
    assert env.srv.wait(15) == 0
    log = [json.loads(l) for l in env.stderr().splitlines() if l.startswith('{"ts"')]
    cut = [l for l in log if l["path"] == "/api/sql"]
    assert len(cut) == 1 and cut[0]["status"] == 413 and cut[0]["completed"] is False, log


def test_token_is_required_on_the_api(env):
    env.start("--token", "s3cret-token", script=[reply(COUNTRY_SQL)])
    status, hdrs, body = env.request("GET", "/api/databases")
    assert status == 401 and hdrs.get("www-authenticate") == "Bearer", (status, hdrs)
    status, _, _ = env.request("GET", "/api/databases", headers={"Authorization": "Bearer wrong"})
    assert status == 401
    status, _, _ = env.request("GET", "/api/databases", headers={"Authorization": "Bearer s3cret-token-and-more"})
    assert status == 401
    env.json("GET", "/api/databases", headers={"Authorization": "Bearer s3cret-token"})
    env.json("GET", "/health")       # open: liveness only
    env.json("POST", "/api/ask", {"database": "shop", "question": "q"},
             headers={"Authorization": "bearer s3cret-token"})


def test_non_loopback_needs_a_token(env):
    env.start_fake([])
    p = subprocess.run([ASKDB, "serve", "--listen", "0.0.0.0:0", "--db", "shop=" + SHOP,
                        "--llm-url", "http://127.0.0.1:%d/v1" % env.fport, "--model", "m"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 2 and "not a loopback address" in p.stderr, (p.returncode, p.stderr)


def test_an_empty_token_is_refused(env):
    # --token "" (say --token "$TOKEN" with TOKEN unset), or "token": ""
    # in --config, was a token: a non-loopback address was served, any
    # Host taken, and "Authorization: Bearer " with nothing after it let
    # anyone in. (ASKDB_SERVER_TOKEN set empty is no token, as before.)
    env.start_fake([])
    conf = os.path.join(env.dir, "serve.json")
    with open(conf, "w") as f:
        json.dump({"token": ""}, f)
    base = [ASKDB, "serve", "--listen", "0.0.0.0:0", "--db", "shop=" + SHOP,
            "--llm-url", "http://127.0.0.1:%d/v1" % env.fport, "--model", "m"]
    for extra in (["--token", ""], ["--config", conf]):
        p = subprocess.run(base + extra, capture_output=True, text=True, timeout=20)
        assert p.returncode == 2 and "the token is empty" in p.stderr, (extra, p.returncode, p.stderr)
    p = subprocess.run(base, capture_output=True, text=True, timeout=20,
                       env=dict(os.environ, ASKDB_SERVER_TOKEN=""))
    assert p.returncode == 2 and "not a loopback address" in p.stderr, (p.returncode, p.stderr)


def test_a_database_name_too_long_is_refused_saying_so(env):
    # serve took names of up to 100 characters and refused a longer one
    # with "use letters, digits, ...", which it did; /mcp refused one of
    # 65 to 100 after that, as an MCP error. Both say the limit now.
    env.start_fake([])
    for n in (65, 101):
        p = subprocess.run([ASKDB, "serve", "--listen", "127.0.0.1:0", "--db",
                            "%s=%s" % ("a" * n, SHOP), "--llm-url",
                            "http://127.0.0.1:%d/v1" % env.fport, "--model", "m"],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 2, (n, p.returncode, p.stderr)
        assert p.stderr == ("askdb serve: database name '%s': use letters, digits, '-', '_' "
                            "and '.', at most 64 (--db NAME=PATH)\n" % ("a" * n)), p.stderr
    env.start("--db", "%s=%s" % ("a" * 64, SHOP))
    d, _ = env.json("GET", "/api/databases")
    assert [x["name"] for x in d["databases"]] == ["shop", "a" * 64], d


def test_cors_only_for_the_named_origin(env):
    env.start("--cors-origin", "http://app.example", script=[])
    status, hdrs, _ = env.request("OPTIONS", "/api/ask", headers={
        "Origin": "http://app.example", "Access-Control-Request-Method": "POST"})
    assert status == 204 and hdrs["access-control-allow-origin"] == "http://app.example", hdrs
    assert "Authorization" in hdrs["access-control-allow-headers"], hdrs
    _, hdrs, _ = env.request("GET", "/api/databases", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in hdrs, hdrs
    _, hdrs, _ = env.request("GET", "/api/databases", headers={"Origin": "http://app.example"})
    assert hdrs["access-control-allow-origin"] == "http://app.example", hdrs


def test_no_cors_by_default(env):
    env.start(script=[])
    _, hdrs, _ = env.request("GET", "/api/databases", headers={"Origin": "http://app.example"})
    assert "access-control-allow-origin" not in hdrs, hdrs


def test_writes_are_refused_and_the_database_is_unchanged(env):
    db = os.path.join(env.dir, "shop.db")
    shutil.copy(SHOP, db)
    before = sha(db)
    env.start(script=[reply("DELETE FROM customers", repeat=True)], dbs=(("shop", db),))
    status, _, body = env.request("POST", "/api/sql", {"database": "shop", "sql": "DELETE FROM customers"})
    r = json.loads(body)
    assert status == 400 and "refused" in r["error"], (status, r)
    for sql in ("DROP TABLE customers", "SELECT 1; DELETE FROM customers",
                "ATTACH 'x.db' AS x", "PRAGMA writable_schema=1"):
        status, _, body = env.request("POST", "/api/sql", {"database": "shop", "sql": sql})
        assert status == 400, (sql, status, body)
    a, _ = env.json("POST", "/api/ask", {"database": "shop", "question": "delete everyone"})
    assert a["status"] != "ok" and a["sql"] is None, a
    assert all(t["error"] == "refused" for t in a["attempts"]), a["attempts"]
    r, _ = env.json("POST", "/api/sql", {"database": "shop", "sql": "SELECT count(*) AS n FROM customers"})
    assert r["rows"] == [[60]], r
    assert sha(db) == before
    assert sorted(os.listdir(env.dir)) == sorted(os.listdir(env.dir)), None
    assert not [f for f in os.listdir(env.dir) if f.startswith("shop.db-")], os.listdir(env.dir)


def test_hang_up_cancels_the_question(env):
    # The model takes 20 s; one worker. A client that hangs up frees the
    # worker at once, so the next question is answered within seconds.
    env.start("--workers", "1", script=[reply(COUNTRY_SQL, delay_ms=20000), reply(COUNTRY_SQL)])
    c, r = ask_stream(env, {"database": "shop", "question": "slow"}, headers={"X-Request-Id": "gone-1"})
    for e, d in sse_events(r):
        if e == "step" and d["step"] == "prompt":
            break
    time.sleep(0.3)
    c.sock.shutdown(socket.SHUT_RDWR)
    c.close()
    t0 = time.time()
    a, _ = env.json("POST", "/api/ask", {"database": "shop", "question": "fast"})
    took = time.time() - t0
    assert a["status"] == "ok" and took < 3, (a["status"], took)
    for _ in range(50):
        log = [json.loads(l) for l in env.stderr().splitlines() if l.startswith("{")]
        gone = [l for l in log if l["request_id"] == "gone-1"]
        if gone:
            break
        time.sleep(0.1)
    assert gone and gone[0]["completed"] is False, gone
    # The access log says it; libmicrohttpd's "application error" note
    # for the same hang-up is left out of stderr.
    assert "application error" not in env.stderr(), env.stderr()


def test_hang_up_stops_a_long_query(env):
    long_sql = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                "WHERE x < 2000000000) SELECT count(*) AS n FROM c")
    env.start("--workers", "1", "--timeout", "60000", script=[reply(long_sql), reply(COUNTRY_SQL)])
    c, r = ask_stream(env, {"database": "shop", "question": "count a lot"})
    for e, d in sse_events(r):
        if e == "step" and d["step"] == "validate":
            break
    time.sleep(0.3)
    c.sock.shutdown(socket.SHUT_RDWR)
    c.close()
    t0 = time.time()
    a, _ = env.json("POST", "/api/ask", {"database": "shop", "question": "fast"})
    assert a["status"] == "ok" and time.time() - t0 < 3, (a["status"], time.time() - t0)


def test_a_follow_up_waiting_for_its_conversation_holds_no_worker(env):
    # Two workers; two questions on one conversation, then another one:
    # the follow-up waits for its conversation without a worker, so the
    # third is answered at once, not after the first.
    env.start("--workers", "2", script=[reply(COUNTRY_SQL, delay_ms=2500)] * 3)
    c1, r1 = ask_stream(env, {"database": "shop", "question": "first", "conversation_id": "conv-z"})
    next(sse_events(r1))
    c2, r2 = ask_stream(env, {"database": "shop", "question": "second", "conversation_id": "conv-z"})
    time.sleep(0.3)
    t0 = time.time()
    c3, r3 = ask_stream(env, {"database": "shop", "question": "third"})
    ev3 = list(sse_events(r3))
    took = time.time() - t0
    assert not [e for e, _ in ev3 if e == "queued"], ev3[:3]
    assert ev3[-1][1]["status"] == "ok" and took < 4.5, (ev3[-1][1]["status"], took)
    ev1, ev2 = list(sse_events(r1)), list(sse_events(r2))
    assert ev1[-1][1]["status"] == "ok" and ev2[-1][1]["status"] == "ok", (ev1[-1], ev2[-1])
    # The follow-up saw the first question: it ran after it, in order.
    q2 = [d for e, d in ev2 if e == "step" and d["step"] == "prompt"][0]
    assert "first" in json.dumps(q2), q2
    for c in (c1, c2, c3):
        c.close()


def test_busy_server_queues_then_refuses(env):
    # One worker, one place in the queue: the second question waits (and
    # is told its place), the third is refused with 503 and Retry-After.
    env.start("--workers", "1", "--queue", "1",
              script=[reply(COUNTRY_SQL, delay_ms=1500), reply(COUNTRY_SQL), reply(COUNTRY_SQL)])
    c1, r1 = ask_stream(env, {"database": "shop", "question": "first"})
    next(sse_events(r1))
    c2, r2 = ask_stream(env, {"database": "shop", "question": "second"})
    first = next(sse_events(r2))
    assert first == ("queued", {"position": 1}), first
    status, hdrs, body = env.request("POST", "/api/ask", {"database": "shop", "question": "third"})
    assert status == 503 and hdrs.get("retry-after"), (status, hdrs, body)
    evs1 = list(sse_events(r1))
    evs2 = list(sse_events(r2))
    assert evs1[-1][0] == "done" and evs1[-1][1]["status"] == "ok"
    assert evs2[-1][0] == "done" and evs2[-1][1]["status"] == "ok"
    c1.close()
    c2.close()


def test_one_client_is_capped(env):
    env.start("--per-client", "1", script=[reply(COUNTRY_SQL, delay_ms=1500), reply(COUNTRY_SQL)])
    c1, r1 = ask_stream(env, {"database": "shop", "question": "first"})
    next(sse_events(r1))
    status, hdrs, body = env.request("POST", "/api/ask", {"database": "shop", "question": "second"})
    assert status == 429 and hdrs.get("retry-after"), (status, body)
    assert list(sse_events(r1))[-1][0] == "done"
    c1.close()


def test_malformed_http_is_refused_and_the_server_goes_on(env):
    env.start(script=[])
    for raw in (b"GARBAGE\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                b"POST /api/sql HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab",
                b"\x00\xff\xfe\r\n\r\n"):
        s = socket.create_connection(("127.0.0.1", env.port), timeout=5)
        s.sendall(raw)
        s.shutdown(socket.SHUT_WR)
        try:
            s.recv(4096)
        except OSError:
            pass
        s.close()
    env.json("GET", "/health")


def test_bytes_that_are_no_utf8_are_answered_and_logged(env):
    # A path or header is any bytes: quoted in an error as they came, one
    # that was no UTF-8 made no JSON, and the client got no answer at all
    # (the connection closed) and the access log no line. A path or
    # database name cut to its buffer within a character was the same.
    env.start(script=[])
    cases = [("GET", "/%ff", {}, 404, "no such path: /?"),
             ("GET", "/a" + "%c3%a9" * 128, {}, 404, "no such path: /a" + "é" * 126 + "?"),
             ("GET", "/api/databases/%e2%82/schema", {}, 404, "no database '??'"),
             ("GET", "/health", {"Host": "\xff"}, 403, "not to '?'"),
             ("POST", "/mcp", {"MCP-Protocol-Version": "9\xff"}, 400,
              "unsupported MCP-Protocol-Version '9?'")]
    for method, path, headers, want, says in cases:
        status, _, data = env.request(method, path, "{}" if method == "POST" else None,
                                      headers)
        assert status == want, (path, status, data)
        msg = json.loads(data)["error"]["message"]
        assert says in msg, (path, msg)
    status, _, data = env.request("POST", "/api/sql", {"database": "é" * 100, "sql": "SELECT 1"})
    assert status == 404, (status, data)
    env.srv.send_signal(signal.SIGTERM)
    assert env.srv.wait(15) == 0
    log = [json.loads(l) for l in env.stderr().splitlines() if l.startswith('{"ts"')]
    paths = [l["path"] for l in log]
    assert paths == ["/?", "/a" + "é" * 126 + "?", "/api/databases/??/schema", "/health",
                     "/mcp", "/api/sql"], paths
    assert log[-1]["database"] == "é" * 63 + "?", log[-1]


def test_a_failure_that_quotes_bytes_no_utf8_is_answered(env):
    # A database file named in Latin-1 ("caf\xe9.db") that cannot be
    # opened when a question comes: the error quotes its path, which is
    # no UTF-8, so fail() made no document and the client got a 200
    # whose body broke off ("out of memory writing a response").
    d = os.path.join(env.dir, "lat").encode()
    os.makedirs(d)
    db = d + b"/caf\xe9.db"
    shutil.copyfile(SHOP, db)
    env.start(script=[], dbs=(("cafe", os.fsdecode(db)),))
    os.remove(db)
    status, _, data = env.request("POST", "/api/ask", {"database": "cafe", "question": "q"},
                                  {"Accept": "application/json"})
    a = json.loads(data)
    assert status == 200 and a["status"] != "ok", (status, a)
    assert "caf?.db" in a["error"]["message"], a
    status, _, data = env.request("POST", "/api/ask", {"database": "cafe", "question": "q"},
                                  {"Accept": "text/event-stream"})
    events = re.findall(r"event: (\w+)\ndata: (.*)\n\n", data.decode())
    assert [e for e, _ in events] == ["error", "done"], events
    assert "caf?.db" in json.loads(events[1][1])["error"]["message"], events


def test_shutdown_finishes_the_question_in_flight(env):
    env.start(script=[reply(COUNTRY_SQL, delay_ms=1000)])
    c, r = ask_stream(env, {"database": "shop", "question": "q"})
    next(sse_events(r))
    env.srv.send_signal(signal.SIGTERM)
    evs = list(sse_events(r))
    c.close()
    assert evs[-1][0] == "done" and evs[-1][1]["status"] == "ok", evs[-3:]
    assert env.srv.wait(15) == 0
    assert "stopped" in env.stderr()


def test_shutdown_sends_the_whole_answer_to_a_slow_reader(env):
    # An answer larger than the sockets' buffers, whose client reads it
    # only after the server was told to stop: the question ends at once,
    # but its rows and done event wait in the stream. The stop closed the
    # connections as soon as the question ended, cutting them off; now
    # it waits (within its grace) until they are sent.
    big = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
           "WHERE x < 40000) SELECT x, printf('%0600d', x) AS pad FROM c")
    env.start("--max-rows", "50000", "--max-bytes", "100000000",
              script=[reply(big, delay_ms=300)])
    c, r = ask_stream(env, {"database": "shop", "question": "q"})
    next(sse_events(r))
    env.srv.send_signal(signal.SIGTERM)
    for _ in range(200):
        if "finishing the questions" in env.stderr():
            break
        time.sleep(0.05)
    time.sleep(2.5)   # the question has ended: the stop is under way
    evs = list(sse_events(r))
    c.close()
    assert evs and evs[-1][0] == "done" and evs[-1][1]["status"] == "ok", \
        [e for e, _ in evs][-5:]
    rows = [d for e, d in evs if isinstance(d, dict) and "rows" in d]
    assert rows and len(rows[-1]["rows"]) == 40000, [e for e, _ in evs]
    assert env.srv.wait(15) == 0
    assert "stopped" in env.stderr()


def test_answer_option_adds_the_words(env):
    env.start(script=[reply(COUNTRY_SQL), {"content": "Germany has the most customers."}])
    c, r = ask_stream(env, {"database": "shop", "question": "Customers per country?",
                            "options": {"answer": True}})
    evs = list(sse_events(r))
    c.close()
    d = dict(evs)
    assert d["answer"]["text"].startswith("Germany has the most customers."), d.get("answer")
    assert evs[-1][1]["answer"].startswith("Germany"), evs[-1][1]


def test_rows_stream_before_the_words(env):
    # With an answer in words the rows are final before the words are
    # asked: sql and rows come at the result step, seconds before the
    # slow words, and are not sent again after them.
    env.start(script=[reply(COUNTRY_SQL),
                      {"content": "Germany has the most customers.", "delay_ms": 2500}])
    c, r = ask_stream(env, {"database": "shop", "question": "Customers per country?",
                            "options": {"answer": True}})
    evs, at = [], {}
    for e, d in sse_events(r):
        evs.append((e, d))
        at.setdefault(e, time.time())
    c.close()
    names = [e for e, _ in evs]
    assert names.count("sql") == 1 and names.count("rows") == 1, names
    steps = [(e, d.get("step")) for e, d in evs]
    i_res = steps.index(("step", "result"))
    assert names[i_res + 1:i_res + 3] == ["sql", "rows"], names
    assert names.index("rows") < names.index("answer") < names.index("done"), names
    res = evs[i_res][1]
    assert res["sql"] == COUNTRY_SQL and res["row_count"] == 3, res
    assert res["truncated"] is False and res["confidence"] == 1, res
    assert "rows" not in res, res
    d = dict(evs)
    assert d["sql"] == {"sql": COUNTRY_SQL}, d["sql"]
    assert d["rows"]["rows"] == COUNTRY_ROWS and d["rows"]["sql"] == COUNTRY_SQL, d["rows"]
    assert d["answer"]["text"].startswith("Germany"), d["answer"]
    assert at["answer"] - at["rows"] > 2, (at["rows"], at["answer"])
    done = evs[-1][1]
    assert done["status"] == "ok" and done["rows"] == COUNTRY_ROWS, done


def test_hang_up_during_the_words_keeps_the_rows(env):
    # The page's Cancel while the words are written (20 s here): the rows
    # came already (they came only after the words), and the hang-up
    # frees the worker at once.
    env.start("--workers", "1",
              script=[reply(COUNTRY_SQL), {"content": "words", "delay_ms": 20000},
                      reply(COUNTRY_SQL)])
    c, r = ask_stream(env, {"database": "shop", "question": "Customers per country?",
                            "options": {"answer": True}},
                      headers={"X-Request-Id": "words-1"}, timeout=8)
    rows = None
    for e, d in sse_events(r):
        assert e not in ("answer", "done"), (e, d)
        if e == "rows":
            rows = d
            break
    assert rows and rows["rows"] == COUNTRY_ROWS, rows
    c.sock.shutdown(socket.SHUT_RDWR)
    c.close()
    t0 = time.time()
    a, _ = env.json("POST", "/api/ask", {"database": "shop", "question": "fast"})
    assert a["status"] == "ok" and time.time() - t0 < 3, (a["status"], time.time() - t0)


def test_failed_question_streams_error_then_done(env):
    env.start("--max-attempts", "2", script=[reply("SELECT nope FROM customers", repeat=True)])
    c, r = ask_stream(env, {"database": "shop", "question": "q"})
    evs = list(sse_events(r))
    c.close()
    names = [e for e, _ in evs]
    assert names[-2:] == ["error", "done"], names
    err = evs[-2][1]
    assert err["error"]["code"] == "no valid SQL" and len(err["attempts"]) == 2, err
    assert evs[-1][1]["status"] == "no valid SQL", evs[-1][1]


def test_rebinding_names_are_refused_without_a_token(env):
    # A page of another site whose name now resolves to 127.0.0.1 sends
    # its own name in Host (and Origin): refused everywhere, /mcp too.
    env.start(script=[])
    evil = {"Host": "attacker.example:%d" % env.port,
            "Origin": "http://attacker.example:%d" % env.port}
    status, _, body = env.request("POST", "/api/sql",
                                  {"database": "shop", "sql": "SELECT email FROM customers"},
                                  headers=evil)
    assert status == 403 and b"email" not in body, (status, body[:200])
    assert json.loads(body)["error"]["code"] == "forbidden", body
    init = MCP_INIT
    status, hdrs, body = env.request("POST", "/mcp", init, headers=dict(
        evil, Accept="application/json, text/event-stream"))
    assert status == 403 and "mcp-session-id" not in hdrs, (status, body[:200])
    for host in ("localhost:%d" % env.port, "LOCALHOST", "127.0.0.1:%d" % env.port,
                 "127.1.2.3", "[::1]:%d" % env.port, "[0:0:0:0:0:0:0:1]:%d" % env.port,
                 "[::0001]", "[::ffff:127.0.0.1]:%d" % env.port):
        status, _, body = env.request("GET", "/api/databases", headers={"Host": host})
        assert status == 200, (host, status, body[:200])
    for host in ("attacker.example", "127.0.0.1.attacker.example", "localhost.attacker.example",
                 "[::2]:%d" % env.port, "0x7f000001", "[::ffff:10.0.0.1]", "[::1%lo]",
                 "[::1]x", "[]", "[localhost]"):
        status, _, body = env.request("GET", "/", headers={"Host": host})
        assert status == 403, (host, status, body[:200])
    # An Origin of another scheme is not the server's own.
    status, _, _ = env.request("POST", "/mcp", init, headers={
        "Origin": "https://127.0.0.1:%d" % env.port, "Accept": "application/json"})
    assert status == 403, status


def test_a_token_allows_any_name(env):
    env.start("--token", "s3cret-token", script=[])
    status, _, body = env.request("GET", "/api/databases", headers={
        "Host": "askdb.internal.example", "Authorization": "Bearer s3cret-token"})
    assert status == 200, (status, body[:200])


def test_allow_names_each_paths_methods(env):
    env.start("--cors-origin", "http://app.example", script=[])
    for method, path, allow in (("GET", "/mcp", "POST, DELETE, OPTIONS"),
                                ("GET", "/api/sql", "POST, OPTIONS"),
                                ("POST", "/health", "GET, HEAD, OPTIONS")):
        status, hdrs, _ = env.request(method, path, headers={"Accept": "application/json"})
        assert status == 405 and hdrs.get("allow") == allow, (method, path, status, hdrs)
    status, hdrs, _ = env.request("OPTIONS", "/mcp", headers={
        "Origin": "http://app.example", "Access-Control-Request-Method": "DELETE"})
    assert status == 204 and "DELETE" in hdrs["access-control-allow-methods"], hdrs


def test_shutdown_turns_away_the_queued_question(env):
    # One worker: the second question waits. SIGTERM lets the first
    # finish, and tells the second at once why it will not be asked
    # (error, then done), as JSON to a client that wants JSON.
    env.start("--workers", "1", "--queue", "2",
              script=[reply(COUNTRY_SQL, delay_ms=2500), reply(COUNTRY_SQL), reply(COUNTRY_SQL)])
    c1, r1 = ask_stream(env, {"database": "shop", "question": "first"})
    next(sse_events(r1))
    c2, r2 = ask_stream(env, {"database": "shop", "question": "second"})
    assert next(sse_events(r2)) == ("queued", {"position": 1})
    c3 = env.conn()
    c3.request("POST", "/api/ask", body=json.dumps({"database": "shop", "question": "third"}),
               headers={"Content-Type": "application/json", "Accept": "application/json"})
    time.sleep(0.3)
    t0 = time.time()
    env.srv.send_signal(signal.SIGTERM)
    evs2 = list(sse_events(r2))
    assert time.time() - t0 < 2, time.time() - t0
    assert [e for e, _ in evs2[-2:]] == ["error", "done"], evs2
    assert evs2[-1][1]["status"] == "cancelled" and "stopped" in evs2[-1][1]["error"]["message"], evs2
    r3 = c3.getresponse()
    doc = json.loads(r3.read())
    assert doc["status"] == "cancelled", doc
    assert doc["sql"] is None and doc["attempts"] == [], doc   # the Answer schema
    evs1 = list(sse_events(r1))
    assert evs1[-1][0] == "done" and evs1[-1][1]["status"] == "ok", evs1[-2:]
    for c in (c1, c2, c3):
        c.close()
    assert env.srv.wait(15) == 0
    assert len(env.requests_seen()) == 1, env.requests_seen()


def test_shutdown_does_not_wait_for_a_slow_upload(env):
    # A client that sent its headers and part of its body, and then
    # nothing: its request is not in flight (nothing was asked), so the
    # stop does not wait for it. It held the stop for the whole 10 s grace.
    env.start(script=[reply(COUNTRY_SQL)])
    sk = socket.create_connection(("127.0.0.1", env.port), timeout=30)
    sk.sendall(("POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                "Content-Type: application/json\r\nContent-Length: 1000\r\n"
                "\r\n{\"database\": \"shop\", " % env.port).encode())
    time.sleep(0.5)
    t0 = time.time()
    env.srv.send_signal(signal.SIGTERM)
    try:
        rc = env.srv.wait(6)
    finally:
        sk.close()
    assert rc == 0 and "stopped" in env.stderr(), env.stderr()[-500:]
    assert time.time() - t0 < 6, time.time() - t0
    assert env.requests_seen() == [], env.requests_seen()


MCP_INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "0"}}}


def mcp_session(env):
    """An MCP session initialized over POST /mcp; its Mcp-Session-Id."""
    status, hdrs, _ = env.request("POST", "/mcp", MCP_INIT, headers={"Accept": "application/json"})
    assert status == 200, status
    return hdrs["mcp-session-id"]


def mcp_call(env, sid, body, sse):
    c = env.conn(30)
    c.request("POST", "/mcp", body=json.dumps(body), headers={
        "Content-Type": "application/json", "Mcp-Session-Id": sid,
        "Accept": "application/json, text/event-stream" if sse else "application/json"})
    return c


def test_shutdown_finishes_the_mcp_calls_in_flight(env):
    # MCP tools/call ask, streamed and not, in flight at SIGTERM: each gets
    # its result, new MCP posts get 503, and the server frees nothing they
    # still use (a sanitizer build saw a use after free here).
    env.start(script=[reply(COUNTRY_SQL, delay_ms=1500), reply(COUNTRY_SQL, delay_ms=1500)])
    sid = mcp_session(env)
    calls = []
    for i, sse in ((2, True), (3, False)):
        calls.append((mcp_call(env, sid, {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                          "params": {"name": "ask", "arguments": {
                                              "database": "shop", "question": "q%d" % i}}},
                              sse), sse))
    time.sleep(0.5)
    keep = env.conn()
    keep.request("GET", "/health")
    keep.getresponse().read()
    env.srv.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    keep.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
                 headers={"Content-Type": "application/json", "Mcp-Session-Id": sid,
                          "Accept": "application/json"})
    r = keep.getresponse()
    assert r.status == 503, (r.status, r.read()[:200])
    r.read()
    keep.close()
    for c, sse in calls:
        r = c.getresponse()
        if sse:
            msgs = [d for e, d in sse_events(r)]
        else:
            msgs = [json.loads(r.read())]
        c.close()
        res = msgs[-1].get("result")
        assert res and not res.get("isError") and res["structuredContent"]["rows"] == COUNTRY_ROWS, msgs[-1]
    assert env.srv.wait(15) == 0
    # New connections are refused once the server stops listening.
    try:
        socket.create_connection(("127.0.0.1", env.port), timeout=2).close()
        refused = False
    except OSError:
        refused = True
    assert refused


def test_shutdown_refuses_new_mcp_posts_while_the_questions_finish(env):
    # /mcp set its 503 only once the questions of /api/ask had finished (up
    # to 10 s): until then a POST on an open connection was taken, and a
    # tool call ran, where /api/* answered 503 from the stop's start.
    env.start(script=[reply(COUNTRY_SQL, delay_ms=2500)])
    sid = mcp_session(env)
    c1, r1 = ask_stream(env, {"database": "shop", "question": "first"})
    next(sse_events(r1))
    keep = env.conn()
    keep.request("GET", "/health")
    keep.getresponse().read()
    env.srv.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    keep.request("POST", "/mcp", body=json.dumps({
        "jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
            "name": "execute_sql", "arguments": {"database": "shop", "sql": "SELECT 1"}}}),
        headers={"Content-Type": "application/json", "Mcp-Session-Id": sid,
                 "Accept": "application/json"})
    r = keep.getresponse()
    body = r.read()
    assert r.status == 503, (r.status, body[:200])
    keep.close()
    assert list(sse_events(r1))[-1][1]["status"] == "ok"
    c1.close()
    assert env.srv.wait(15) == 0


def test_shutdown_takes_a_cancel_of_a_running_mcp_call(env):
    # From SIGTERM on, /mcp answered every POST 503, notifications/cancelled
    # too: a client could not cancel its own call, and the stop waited for
    # that call until its 10 s were over (the model's reply is 20 s away).
    # A POST of cancels alone is still taken during the stop; any other
    # is 503.
    env.start(script=[reply(COUNTRY_SQL, delay_ms=20000)])
    sid = mcp_session(env)
    call = mcp_call(env, sid, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                               "params": {"name": "ask", "arguments": {
                                   "database": "shop", "question": "slow"}}}, False)
    time.sleep(0.5)
    keep = [env.conn() for _ in range(2)]
    for c in keep:
        c.request("GET", "/health")
        c.getresponse().read()
    t0 = time.time()
    env.srv.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    headers = {"Content-Type": "application/json", "Mcp-Session-Id": sid,
               "Accept": "application/json"}
    keep[0].request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
                    headers=headers)
    r = keep[0].getresponse()
    body = r.read()
    assert r.status == 503, (r.status, body[:200])
    keep[1].request("POST", "/mcp", body=json.dumps({
        "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}),
        headers=headers)
    r = keep[1].getresponse()
    body = r.read()
    assert r.status == 202, (r.status, body[:200])
    doc = json.loads(call.getresponse().read())
    call.close()
    assert doc["id"] == 2 and doc["error"]["code"] == -32000, doc
    assert doc["error"]["message"].startswith("request cancelled"), doc
    for c in keep:
        c.close()
    assert env.srv.wait(15) == 0
    assert time.time() - t0 < 5, "the stop waited %.1f s for the cancelled call" % (time.time() - t0)


def test_config_file_takes_the_model_and_agent_options_as_mcp_does(env):
    # askdb serve's --config took its own keys only: the model ("llm-url",
    # "model") and the agent's options ("max-rows", "no-linking") could not
    # be set there as askdb mcp's file sets them. They go under "options",
    # with mcp's names, checks and messages; the command line wins.
    sub = os.path.join(env.dir, "conf")
    os.makedirs(sub)
    shutil.copyfile(SHOP, os.path.join(env.dir, "shop.db"))
    conf = os.path.join(sub, "askdb.json")
    env.start_fake([reply(COUNTRY_SQL, repeat=True)])
    url, env.fport = "http://127.0.0.1:%d/v1" % env.fport, None
    with open(conf, "w") as f:
        json.dump({"databases": ["../shop.db"], "workers": 1,
                   "options": {"llm-url": url, "model": "m", "max-rows": 2,
                               "no-linking": True}}, f)
    env.start("--config", conf, dbs=())
    doc, _ = env.json("GET", "/api/databases")
    assert [d["name"] for d in doc["databases"]] == ["shop"], doc
    doc, _ = env.json("POST", "/api/sql", {"database": "shop",
                                           "sql": "SELECT id FROM customers ORDER BY id"})
    assert doc["rows"] == [[1], [2]], doc
    doc, _ = env.json("POST", "/api/ask", {"database": "shop", "question": "q"},
                      headers={"Accept": "application/json"})
    assert doc["status"] == "ok" and doc["rows"] == COUNTRY_ROWS[:2], doc
    assert len(env.requests_seen()) == 1
    env.srv.send_signal(signal.SIGTERM)
    assert env.srv.wait(20) == 0
    # getopt takes --conf for --config: the file is read so too.
    env.start("--conf=" + conf, "--max-rows", "3", dbs=())
    doc, _ = env.json("POST", "/api/sql", {"database": "shop",
                                           "sql": "SELECT id FROM customers ORDER BY id"})
    assert doc["rows"] == [[1], [2], [3]], doc

    def bad(options, top=None):
        with open(conf, "w") as f:
            json.dump(dict(top or {}, options=options), f)
        p = subprocess.run([ASKDB, "serve", "--config", conf, SHOP],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 2, (options, p.returncode, p.stderr)
        assert "unrecognized option" not in p.stderr, p.stderr
        return p.stderr
    err = bad({"bogus": 1})
    assert err.startswith("askdb serve: config '%s': unknown option \"bogus\" under "
                          "\"options\" (any model or agent flag of askdb serve without "
                          "its dashes: " % conf), err
    valid = err.split("dashes: ", 1)[1].rstrip().rstrip(")").split(", ")
    for k in ("llm-url", "model", "max-rows", "no-linking", "timeout", "trace"):
        assert k in valid, (k, valid)
    # serve's own settings stay keys of their own, as before.
    for k in ("listen", "workers", "config", "db", "help", "no-warm"):
        assert k not in valid, (k, valid)
    assert 'option "no-linking" is a switch: true or false' in bad({"no-linking": "yes"})
    assert 'option "trace" takes a value: a string or a number' in bad({"trace": True})
    assert "askdb serve: --max-rows takes a whole number" in bad({"max-rows": "many"})
    err = bad({}, top={"option": {}})
    assert ('unknown key "option" (databases, options, listen, token, cors_origin, '
            'access_log, workers, queue, per_client, conversations, max_body)') in err, err


def test_config_file_numbers_are_the_values_written(env):
    # A real number under "options" became its "%g" text: 4194304.0 was
    # "4.1943e+06", which --max-bytes refused as no whole number, and
    # 0.1234567 was 0.123457, another temperature than the one written.
    conf = os.path.join(env.dir, "askdb.json")
    env.start_fake([reply(COUNTRY_SQL, repeat=True)])
    url, env.fport = "http://127.0.0.1:%d/v1" % env.fport, None
    with open(conf, "w") as f:
        f.write('{"databases": {"shop": "%s"}, "options": {"llm-url": "%s", '
                '"model": "m", "max-bytes": 4194304.0, "max-rows": 2.0, '
                '"temperature": 0.1234567}}' % (SHOP, url))
    env.start("--config", conf, dbs=())
    doc, _ = env.json("POST", "/api/ask", {"database": "shop", "question": "q"},
                      headers={"Accept": "application/json"})
    assert doc["status"] == "ok" and doc["rows"] == COUNTRY_ROWS[:2], doc
    temps = [r["body"].get("temperature") for r in env.requests_seen()]
    assert temps == [0.1234567], temps


def test_config_file_takes_serves_own_numbers_written_as_reals(env):
    # "max-rows": 2.0 under "options" is 2, but serve's own keys took
    # integers alone: "max_body": 2000.0 in the same file stopped the
    # server ("takes a whole number"), though it is one.
    conf = os.path.join(env.dir, "askdb.json")
    with open(conf, "w") as f:
        f.write('{"databases": {"shop": "%s"}, "max_body": 2000.0, "workers": 1e0}' % SHOP)
    env.start("--config", conf, dbs=(), script=[])
    status, _, _ = env.request("POST", "/api/sql", {"database": "shop", "sql": "SELECT 1 -- " + "x" * 2000})
    assert status == 413, status
    env.json("POST", "/api/sql", {"database": "shop", "sql": "SELECT 1"})
    for bad in ("2000.5", "0.0", "1e300"):
        with open(conf, "w") as f:
            f.write('{"databases": {"shop": "%s"}, "max_body": %s}' % (SHOP, bad))
        p = subprocess.run([ASKDB, "serve", "--config", conf], capture_output=True, text=True,
                           timeout=20)
        assert p.returncode == 2 and '"max_body" takes a whole number from 1 to 1073741824' in p.stderr, \
            (bad, p.returncode, p.stderr)


def test_config_file_is_checked_and_read_as_the_options(env):
    # Paths from the file's folder, "queue" as --queue means it (1: one
    # question may wait), and a wrong key, type or range is an error.
    sub = os.path.join(env.dir, "conf")
    os.makedirs(sub)
    shutil.copyfile(SHOP, os.path.join(env.dir, "shop.db"))
    conf = os.path.join(sub, "askdb.json")
    with open(conf, "w") as f:
        json.dump({"databases": {"shop": "../shop.db"}, "workers": 1, "queue": 1}, f)
    env.start("--config", conf, dbs=(),
              script=[reply(COUNTRY_SQL, delay_ms=1500), reply(COUNTRY_SQL), reply(COUNTRY_SQL)])
    c1, r1 = ask_stream(env, {"database": "shop", "question": "first"})
    next(sse_events(r1))
    c2, r2 = ask_stream(env, {"database": "shop", "question": "second"})
    assert next(sse_events(r2)) == ("queued", {"position": 1})
    status, _, body = env.request("POST", "/api/ask", {"database": "shop", "question": "third"})
    assert status == 503, (status, body[:200])
    assert list(sse_events(r1))[-1][1]["status"] == "ok"
    assert list(sse_events(r2))[-1][1]["status"] == "ok"
    c1.close()
    c2.close()
    for bad, want in (({"workers": -1}, '"workers" takes a whole number from 1'),
                      ({"queue": -1}, '"queue" takes a whole number from 0'),
                      ({"max_body": 0}, '"max_body" takes a whole number from 1'),
                      ({"listen": 8080}, '"listen" is a string'),
                      ({"lisen": "127.0.0.1:0"}, 'unknown key "lisen"'),
                      ({"databases": {"x": 5}}, "database 'x' needs a path")):
        with open(conf, "w") as f:
            json.dump(bad, f)
        p = subprocess.run([ASKDB, "serve", "--config", conf, SHOP, "--llm-url",
                            "http://127.0.0.1:9/v1", "--model", "m"],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 2 and want in p.stderr, (bad, p.returncode, p.stderr)
    # --cors-origin is one origin, never "*".
    for bad in ("*", "app.example.com", "https://app.example.com/", "https://App.example.com"):
        p = subprocess.run([ASKDB, "serve", "--cors-origin", bad, SHOP, "--llm-url",
                            "http://127.0.0.1:9/v1", "--model", "m"],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 2 and "--cors-origin takes one origin" in p.stderr, (bad, p.stderr)
    # A port past 65535 is refused, not taken modulo 65536.
    for listen in ("127.0.0.1", "127.0.0.1:65536", "127.0.0.1:99999", "127.0.0.1:4294967296",
                   "127.0.0.1:-1", "127.0.0.1:80x"):
        p = subprocess.run([ASKDB, "serve", "--listen", listen, SHOP, "--llm-url",
                            "http://127.0.0.1:9/v1", "--model", "m"],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 2 and "--listen takes HOST:PORT" in p.stderr, (listen, p.stderr)


def test_a_bare_path_is_named_as_the_api_can_carry_it(env):
    # "my data.v2.db" is served as my_data.v2 (askdb mcp names it so too).
    odd = os.path.join(env.dir, "my data.v2.db")
    shutil.copyfile(SHOP, odd)
    env.start(odd, dbs=(), script=[reply(COUNTRY_SQL)])
    d, _ = env.json("GET", "/api/databases")
    assert [x["name"] for x in d["databases"]] == ["my_data.v2"], d
    a, _ = env.json("POST", "/api/ask", {"database": "my_data.v2", "question": "Customers per country?"})
    assert a["status"] == "ok" and a["rows"] == COUNTRY_ROWS, a


def test_statements_are_capped_per_client(env):
    # /api/sql runs each statement in a process of its own: one client
    # has --per-client at once (429 past that); a hang-up stops the
    # statement and frees its place at once (not at --timeout).
    env.start("--per-client", "2", "--timeout", "60000", script=[])
    long_sql = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                "WHERE x < 2000000000) SELECT count(*) AS n FROM c")
    conns = []
    for _ in range(2):
        c = env.conn()
        c.request("POST", "/api/sql", body=json.dumps({"database": "shop", "sql": long_sql}),
                  headers={"Content-Type": "application/json"})
        conns.append(c)
    time.sleep(0.5)
    status, hdrs, body = env.request("POST", "/api/sql", {"database": "shop", "sql": "SELECT 1 AS x"})
    assert status == 429 and hdrs.get("retry-after"), (status, body[:200])
    assert json.loads(body)["error"]["code"] == "too_many_requests", body
    for c in conns:
        c.sock.shutdown(socket.SHUT_RDWR)
        c.close()
    t0 = time.time()
    for _ in range(50):
        status, _, body = env.request("POST", "/api/sql", {"database": "shop", "sql": "SELECT 1 AS x"})
        if status == 200:
            break
        time.sleep(0.1)
    assert status == 200 and time.time() - t0 < 3, (status, body[:200], time.time() - t0)


def test_mcp_input_that_is_no_message_gets_400(env):
    # Streamable HTTP: what is not a JSON-RPC message gets an HTTP error
    # (with the JSON-RPC error, id null), a notification 202.
    env.start(script=[])
    h = {"Accept": "application/json", "Mcp-Session-Id": mcp_session(env)}
    for body in ("{not json", "[]", '[{"jsonrpc": "2.0", "id": 2, "method": "ping"}]'):
        status, _, data = env.request("POST", "/mcp", body, headers=h)
        e = json.loads(data)
        assert status == 400 and e["id"] is None and e["error"]["code"] < 0, (body, status, data)
    status, _, data = env.request("POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                  headers=h)
    assert status == 202 and data == b"", (status, data)
    status, _, data = env.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 3, "method": "nope"}, headers=h)
    assert status == 200 and json.loads(data)["error"]["code"] == -32601, (status, data)


def test_mcp_message_over_4_mib_is_refused_unread(env):
    # MCP reads messages of 4 MiB at most; a --max-body above that lets a
    # longer body reach /mcp. It is refused before it is parsed, whatever
    # it holds: 400 with JSON-RPC's -32600 (id null), never the 400 of a
    # request without a session, a parse error or a session opened for it;
    # and whatever its MCP-Protocol-Version says: under a revision askdb
    # does not speak it is not read to see whether it is stateless (it got
    # askdb's 400 "unsupported MCP-Protocol-Version").
    env.start("--max-body", str(8 << 20), script=[])
    sid = mcp_session(env)
    pad = "x" * (5 << 20)
    stateless = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "pad": pad,
                 "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                      "io.modelcontextprotocol/clientCapabilities": {}}}}
    session = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    want = {"jsonrpc": "2.0", "id": None,
            "error": {"code": -32600, "message": "message over 4 MiB: send less at once"}}
    for what, body, h in (
            ("not JSON, no session", "{" + pad, {}),
            ("an initialize", dict(MCP_INIT, pad=pad), {}),
            ("a stateless request", stateless,
             {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}),
            ("a stateless request of an unknown revision", stateless,
             {"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"}),
            ("not JSON, in a session", "{" + pad, session),
            ("a ping, in a session", {"jsonrpc": "2.0", "id": 2, "method": "ping", "pad": pad},
             session)):
        status, hdrs, data = env.request("POST", "/mcp", body,
                                         headers=dict(h, Accept="application/json"))
        assert status == 400 and json.loads(data) == want, (what, status, data[:200])
        if "Mcp-Session-Id" not in h:
            assert "mcp-session-id" not in hdrs, (what, hdrs)
    status, _, data = env.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 4, "method": "ping"},
                                  headers=dict(session, Accept="application/json"))
    assert status == 200 and json.loads(data)["result"] == {}, (status, data)


TESTS = [v for k, v in sorted(globals().items()) if k.startswith("test_")]


def main(argv):
    only = set(argv[1:])
    passed = failed = 0
    for t in TESTS:
        name = t.__name__[5:]
        if only and name not in only:
            continue
        env = Env(name[:20])
        try:
            t(env)
            env.stop()
            print("ok", name, flush=True)
            passed += 1
        except Exception as e:   # noqa: BLE001 - report every failure
            context = env.failure_context()
            try:
                env.stop()
            except Exception as e2:   # noqa: BLE001
                e = AssertionError("%s; and at stop: %s" % (e, e2))
            print("FAIL %s: %s" % (name, e), flush=True)
            traceback.print_exc()
            if context:
                print(context, flush=True)
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
