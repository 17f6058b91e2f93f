#!/usr/bin/env python3
"""tests/e2e/mcp2_test.py - askdb with the MCP Python SDK 2.x client.

    ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm \
        ~/.cache/askdb/venv-mcp2/bin/python tests/e2e/mcp2_test.py

(tests/e2e/mcp.sh installs the pinned SDK, scripts/mcp2_venv.sh, and runs
this.) The 2.x client is of the 2026-07-28 era: by default it first
sends server/discover, which askdb answers (it speaks that revision beside
the handshake's), and stays stateless; pinned to mode="legacy" it opens
with initialize and gets 2025-11-25; pinned to mode="2026-07-28" it sends
its revision in each request's _meta. Each test drives `askdb mcp` over
stdio and askdb serve's /mcp with the scripted model (tests/fake_llm): the
revision, tools, a tool error, progress, a resource and its error,
cancellation; raw JSON checks what the SDK does not exercise (a revision
askdb does not speak, headers that disagree with the body, log levels).
mcp_test.py and mcp_http_test.py do the rest with the 1.x SDK, which this
one cannot share a process with. Output: "ok NAME" or "FAIL NAME:
reason" per test, then "N passed, M failed".
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

import http.client
import urllib.parse

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ASKDB = os.path.abspath(os.environ.get("ASKDB", os.path.join(ROOT, "build/asan/askdb")))
FAKE_LLM = os.path.abspath(os.environ.get("FAKE_LLM", os.path.join(ROOT, "build/asan/fake_llm")))
SHOP_DB = os.path.abspath(os.environ.get("SHOP_DB", os.path.join(ROOT, "examples/shop.db")))
SANITIZER = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error:|"
                       r"SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer")
ENV = {k: v for k, v in os.environ.items()
       if not k.startswith("ASKDB_") and k not in (
           "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "http_proxy", "https_proxy",
           "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")}
ENV.update(no_proxy="127.0.0.1,localhost", NO_PROXY="127.0.0.1,localhost",
           ASKDB_RETRY_BASE_MS="1", LC_ALL="C")
SQL = "SELECT id, first_name FROM customers ORDER BY id LIMIT 2"
ROWS = [[1, "Olivia"], [2, "Alejandro"]]


class Servers:
    """The scripted model and, for HTTP, askdb serve, in dir."""

    def __init__(self, dir):
        self.dir = dir
        self.errs = []
        with open(os.path.join(dir, "script.json"), "w") as f:
            json.dump([{"content": "```sql\n%s\n```" % SQL, "repeat": True}], f)
        pf = os.path.join(dir, "llm.port")
        self.llm = subprocess.Popen([FAKE_LLM, "--script", os.path.join(dir, "script.json"),
                                     "--log", os.path.join(dir, "llm.log"), "--port", "0",
                                     "--port-file", pf],
                                    stderr=subprocess.DEVNULL, env=ENV)
        for _ in range(200):
            if os.path.exists(pf) and os.path.getsize(pf):
                break
            assert self.llm.poll() is None, "fake_llm exited"
            time.sleep(0.05)
        self.model = ["--llm-url", "http://127.0.0.1:%s/v1" % open(pf).read().strip(),
                      "--model", "m", "--no-question-check"]
        self.serve = None

    def stdio(self, errlog, *extra):
        """`askdb mcp` as a transport for Client, its stderr to errlog."""
        params = StdioServerParameters(command=ASKDB, args=["mcp", *self.model, *extra, SHOP_DB],
                                       env=dict(ENV, ASKDB_CACHE_DIR=os.path.join(self.dir, "c")))
        return stdio_client(params, errlog=errlog)

    def stdio_raw(self):
        """`askdb mcp` for raw JSON lines: its stdin and stdout."""
        err = os.path.join(self.dir, "raw.err")
        self.errs.append(err)
        self.raw = subprocess.Popen([ASKDB, "mcp", *self.model, SHOP_DB], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=open(err, "w"),
                                    env=dict(ENV, ASKDB_CACHE_DIR=os.path.join(self.dir, "c")),
                                    text=True)
        return self.raw

    def http(self, *extra):
        err = os.path.join(self.dir, "serve.err")
        self.errs.append(err)
        self.serve = subprocess.Popen([ASKDB, "serve", "--listen", "127.0.0.1:0", "--db",
                                       "shop=" + SHOP_DB, *self.model, *extra],
                                      stderr=open(err, "w"),
                                      env=dict(ENV, ASKDB_CACHE_DIR=os.path.join(self.dir, "c")))
        for _ in range(400):
            text = open(err).read()
            if "listening on http://" in text:
                port = int(text.split("listening on http://")[1].split(":")[1].split("/")[0])
                return "http://127.0.0.1:%d/mcp" % port
            assert self.serve.poll() is None, text
            time.sleep(0.05)
        raise AssertionError("askdb serve did not start")

    def stop(self):
        raw = getattr(self, "raw", None)
        if raw:
            raw.stdin.close()
            raw.wait(20)
        if self.serve:
            self.serve.send_signal(signal.SIGTERM)
            self.serve.wait(20)
        self.llm.terminate()
        self.llm.wait(10)
        for p in self.errs:
            m = SANITIZER.search(open(p, errors="replace").read())
            assert not m, "sanitizer report in %s: %s" % (p, m.group(0))


async def calls(c, unknown_code):
    """What every era gives: execute_sql and a tool error, ask with its
    progress, a resource and the error for an unknown one (unknown_code).
    Returns the execute_sql and resource results for the era's own checks."""
    ran = await c.call_tool("execute_sql", {"sql": SQL})
    assert not ran.is_error and ran.structured_content["rows"] == ROWS, ran
    r = await c.call_tool("execute_sql", {"sql": 5})
    assert r.is_error and "'sql' is needed" in r.content[0].text, r
    seen = []

    async def progress(p, total, message):
        seen.append(message)

    r = await c.call_tool("ask", {"question": "First two customers?"}, progress_callback=progress)
    assert not r.is_error and r.structured_content["sql"] == SQL, r
    assert r.structured_content["rows"] == ROWS, r.structured_content
    assert "execute: 2 rows" in seen and seen[-1] == "answer: ok", seen
    read = await c.read_resource("askdb://shop/table/categories")
    assert json.loads(read.contents[0].text)["name"] == "categories", read
    try:
        await c.read_resource("askdb://shop/table/nope")
        raise AssertionError("no error for an unknown table")
    except MCPError as e:
        assert e.code == unknown_code and "no table 'nope'" in str(e), e
    return ran, read


TOOLS = {"list_databases", "search_objects", "execute_sql", "ask", "explain_sql"}


async def exercise(c):
    """What every transport must give the 2.x client in its handshake mode."""
    # No probe: the handshake gave the newest revision of initialize.
    assert c.session.discover_result is None and c.session.initialize_result
    assert c.session.protocol_version == "2025-11-25", c.session.protocol_version
    assert c.session.server_info.name == "askdb", c.session.server_info
    assert c.session.server_info.description, c.session.server_info
    tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == TOOLS, tools.keys()
    await calls(c, -32002)


async def exercise_stateless(c):
    """What every transport must give the 2.x client at revision 2026-07-28."""
    assert c.session.protocol_version == "2026-07-28", c.session.protocol_version
    assert c.session.initialize_result is None
    tools = await c.list_tools()
    assert {t.name for t in tools.tools} == TOOLS, tools
    assert tools.result_type == "complete" and tools.ttl_ms > 0, tools
    assert tools.cache_scope == "private", tools
    assert tools.meta["io.modelcontextprotocol/serverInfo"]["name"] == "askdb", tools.meta
    # 2026-07-28 retired -32002: an unknown resource is invalid params.
    ran, read = await calls(c, -32602)
    assert ran.result_type == "complete", ran
    assert read.ttl_ms == 0 and read.cache_scope == "private" and read.result_type == "complete", read


ENDLESS = ("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) "
           "SELECT count(*) FROM r")


async def cancel_stops_the_statement(c):
    """A call the client gives up on stops: stdio sends notifications/cancelled,
    HTTP closes the call's stream. One statement runs at a time on a
    database, so the next one runs only once the endless one has stopped."""
    got = {}

    async def endless():
        got["endless"] = await c.call_tool("execute_sql", {"sql": ENDLESS})

    async with anyio.create_task_group() as tg:
        tg.start_soon(endless)
        # Cancel only once it runs, so that the test cannot pass without
        # a cancel to stop it: then the database is busy, and a quick
        # statement sent beside it waits (given up on, it is cancelled
        # too, and runs nothing when the endless one has stopped).
        with anyio.fail_after(20):
            while True:
                await anyio.sleep(0.2)
                with anyio.move_on_after(1) as probe:
                    await c.call_tool("execute_sql", {"sql": "SELECT 1 AS probe"})
                if probe.cancelled_caught:
                    break
        assert "endless" not in got, got
        tg.cancel_scope.cancel()
    t0 = time.monotonic()
    with anyio.fail_after(20):
        r = await c.call_tool("execute_sql", {"sql": "SELECT 'fast' AS which"})
    elapsed = time.monotonic() - t0
    assert "endless" not in got, got
    assert not r.is_error and r.structured_content["rows"] == [["fast"]], r
    assert elapsed < 5, "the cancelled statement held the database for %.1f s" % elapsed


def meta(version="2026-07-28", **more):
    m = {"io.modelcontextprotocol/protocolVersion": version,
         "io.modelcontextprotocol/clientCapabilities": {},
         "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}
    m.update(more)
    return m


def post(url, body, headers):
    """POST body (an object) to url; (status, headers, the JSON answer or None)."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.putrequest("POST", u.path)
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Accept", "application/json, text/event-stream")
    for k, v in headers:
        conn.putheader(k, v)
    data = json.dumps(body).encode()
    conn.putheader("Content-Length", str(len(data)))
    conn.endheaders(data)
    r = conn.getresponse()
    text = r.read().decode()
    conn.close()
    return r.status, r.headers, json.loads(text) if text.strip() else None


def routed(version="2026-07-28", method="tools/list", name=None):
    h = [("MCP-Protocol-Version", version), ("Mcp-Method", method)]
    return h + [("Mcp-Name", name)] if name is not None else h


TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


@test
async def sdk2_client_handshake_works_over_stdio(s):
    errpath = os.path.join(s.dir, "stdio.err")
    s.errs.append(errpath)
    with open(errpath, "w") as err:
        async with Client(s.stdio(err), mode="legacy") as c:
            await exercise(c)


@test
async def sdk2_client_handshake_works_over_http(s):
    async with Client(s.http(), mode="legacy") as c:
        await exercise(c)


@test
async def sdk2_client_discovers_and_stays_stateless_over_stdio(s):
    errpath = os.path.join(s.dir, "stdio.err")
    s.errs.append(errpath)
    with open(errpath, "w") as err:
        async with Client(s.stdio(err)) as c:
            d = c.session.discover_result
            assert d and "2026-07-28" in d.supported_versions, d
            assert "2025-11-25" in d.supported_versions and d.capabilities.tools, d
            assert d.result_type == "complete" and d.instructions, d
            await exercise_stateless(c)


@test
async def sdk2_client_discovers_and_stays_stateless_over_http(s):
    async with Client(s.http()) as c:
        assert c.session.discover_result, "no server/discover"
        await exercise_stateless(c)


@test
async def sdk2_client_pinned_to_2026_07_28_over_stdio(s):
    errpath = os.path.join(s.dir, "stdio.err")
    s.errs.append(errpath)
    with open(errpath, "w") as err:
        async with Client(s.stdio(err, "--timeout", "30000"), mode="2026-07-28") as c:
            await exercise_stateless(c)
            await cancel_stops_the_statement(c)


@test
async def sdk2_client_pinned_to_2026_07_28_over_http(s):
    async with Client(s.http("--timeout", "30000"), mode="2026-07-28") as c:
        await exercise_stateless(c)
        await cancel_stops_the_statement(c)


@test
async def stateless_errors_over_stdio(s):
    p = s.stdio_raw()

    def ask(msg):
        p.stdin.write(json.dumps(msg) + "\n")
        p.stdin.flush()
        lines = []
        while True:
            o = json.loads(p.stdout.readline())
            lines.append(o)
            if "id" in o:
                return o, lines[:-1]

    # A revision askdb does not speak: -32022 with those it does.
    r, _ = ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                "params": {"_meta": meta("1900-01-01")}})
    assert r["error"]["code"] == -32022, r
    assert r["error"]["data"]["requested"] == "1900-01-01", r
    assert r["error"]["data"]["supported"][:2] == ["2026-07-28", "2025-11-25"], r
    # The _meta of the era without its client capabilities: invalid params.
    m = meta()
    del m["io.modelcontextprotocol/clientCapabilities"]
    r, _ = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": m}})
    assert r["error"]["code"] == -32602 and "clientCapabilities" in r["error"]["message"], r
    # The handshake's methods are not of that era.
    r, _ = ask({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"_meta": meta()}})
    assert r["error"]["code"] == -32601, r
    # Log messages go to a request that asks for them in its _meta, at its
    # level, and to no other.
    q = {"name": "ask", "arguments": {"question": "First two customers?"}}
    r, notes = ask({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                    "params": dict(q, _meta=meta(**{"io.modelcontextprotocol/logLevel": "debug"}))})
    assert r["result"]["structuredContent"]["rows"] == ROWS, r
    logs = [n for n in notes if n["method"] == "notifications/message"]
    assert logs and all(n["params"]["logger"] == "askdb" for n in logs), notes
    r, notes = ask({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                    "params": dict(q, _meta=meta())})
    assert r["result"]["resultType"] == "complete", r
    assert not [n for n in notes if n["method"] == "notifications/message"], notes
    # The handshake on the same stdin is as it was: no resultType, -32002.
    r, _ = ask({"jsonrpc": "2.0", "id": 6, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "1"}}})
    assert r["result"]["protocolVersion"] == "2025-06-18" and "resultType" not in r["result"], r
    r, _ = ask({"jsonrpc": "2.0", "id": 7, "method": "resources/read",
                "params": {"uri": "askdb://shop/table/nope"}})
    assert r["error"]["code"] == -32002, r
    r, _ = ask({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})
    assert "resultType" not in r["result"] and "ttlMs" not in r["result"], r


@test
async def stateless_errors_over_http(s):
    url = s.http()
    tl = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}
    st, h, r = post(url, tl, routed())
    assert st == 200 and r["result"]["resultType"] == "complete", (st, r)
    assert "Mcp-Session-Id" not in h, h.items()
    # A session id on a stateless request is ignored.
    st, h, r = post(url, tl, routed() + [("Mcp-Session-Id", "nosuchsession")])
    assert st == 200 and "tools" in r["result"] and "Mcp-Session-Id" not in h, (st, r)
    # A revision askdb does not speak: 400 and -32022 with those it does.
    bad = {"jsonrpc": "2.0", "id": 2, "method": "tools/list",
           "params": {"_meta": meta("1900-01-01")}}
    st, _, r = post(url, bad, routed("1900-01-01"))
    assert st == 400 and r["error"]["code"] == -32022, (st, r)
    assert "2026-07-28" in r["error"]["data"]["supported"], r
    assert r["error"]["data"]["requested"] == "1900-01-01", r
    # Headers that say other than the body: 400 and -32020.
    for hdrs in (routed(method="tools/call"), routed(version="2025-11-25"),
                 [("MCP-Protocol-Version", "2026-07-28")],
                 routed() + [("Mcp-Method", "tools/list")]):
        st, _, r = post(url, tl, hdrs)
        assert st == 400 and r["error"]["code"] == -32020, (hdrs, st, r)
    rd = {"jsonrpc": "2.0", "id": 3, "method": "resources/read",
          "params": {"uri": "askdb://shop/schema", "_meta": meta()}}
    st, _, r = post(url, rd, routed(method="resources/read", name="askdb://shop/other"))
    assert st == 400 and r["error"]["code"] == -32020 and "Mcp-Name" in r["error"]["message"], r
    st, _, r = post(url, rd, routed(method="resources/read"))
    assert st == 400 and r["error"]["code"] == -32020, (st, r)
    # A name in the header's base64 form is what it encodes.
    st, _, r = post(url, rd, routed(method="resources/read",
                                    name="=?base64?YXNrZGI6Ly9zaG9wL3NjaGVtYQ==?="))
    assert st == 200 and r["result"]["contents"][0]["text"], (st, r)
    # Only in its canonical form, as the SDK's server reads it: "YR==" has
    # leftover bits set and would decode as "YQ==" does.
    st, _, r = post(url, rd, routed(method="resources/read",
                                    name="=?base64?YXNrZGI6Ly9zaG9wL3NjaGVtYR==?="))
    assert st == 400 and r["error"]["code"] == -32020, (st, r)
    # An unknown method: 404 with -32601; an unknown resource: 400, -32602.
    st, _, r = post(url, {"jsonrpc": "2.0", "id": 4, "method": "nope/nope",
                          "params": {"_meta": meta()}}, routed(method="nope/nope"))
    assert st == 404 and r["error"]["code"] == -32601, (st, r)
    rd["params"]["uri"] = "askdb://shop/table/nope"
    st, _, r = post(url, rd, routed(method="resources/read", name="askdb://shop/table/nope"))
    assert st == 400 and r["error"]["code"] == -32602, (st, r)
    # Without its client capabilities: 400, -32602.
    m = meta()
    del m["io.modelcontextprotocol/clientCapabilities"]
    st, _, r = post(url, {"jsonrpc": "2.0", "id": 5, "method": "tools/list",
                          "params": {"_meta": m}}, routed())
    assert st == 400 and r["error"]["code"] == -32602, (st, r)
    # The header alone makes a request without a session stateless: one
    # without the _meta of the era is -32602 and 400, as from the SDK's
    # server, not a request of the handshake (which initialize would open).
    st, h, r = post(url, {"jsonrpc": "2.0", "id": 6, "method": "tools/list"}, routed())
    assert st == 400 and r["error"]["code"] == -32602, (st, r)
    assert "protocolVersion" in r["error"]["message"], r
    st, h, r = post(url, {"jsonrpc": "2.0", "id": 7, "method": "initialize",
                          "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "raw", "version": "1"}}},
                    routed(method="initialize"))
    assert st == 400 and r["error"]["code"] == -32602, (st, r)
    assert "Mcp-Session-Id" not in h, h.items()
    # A tool call that is not one (an unknown tool, arguments that are not
    # an object, no name) is found before it would stream: 400, -32602,
    # where a stream would have committed to 200 first.
    for params, name, why in (({"name": "nope", "arguments": {}}, "nope", "unknown tool"),
                              ({"name": "execute_sql", "arguments": 5}, "execute_sql",
                               "'arguments'"),
                              ({"arguments": {}}, None, "params.name")):
        call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                "params": dict(params, _meta=meta())}
        st, _, r = post(url, call, routed(method="tools/call", name=name))
        assert st == 400 and r["error"]["code"] == -32602, (params, st, r)
        assert why in r["error"]["message"], (params, r)
    # A _meta with the capabilities but not the revision: -32602 too.
    m = meta()
    del m["io.modelcontextprotocol/protocolVersion"]
    st, _, r = post(url, {"jsonrpc": "2.0", "id": 8, "method": "tools/list",
                          "params": {"_meta": m}}, routed())
    assert st == 400 and r["error"]["code"] == -32602, (st, r)
    assert "protocolVersion" in r["error"]["message"], r


def main(argv):
    for f in (ASKDB, FAKE_LLM):
        if not os.access(f, os.X_OK):
            print("mcp2_test.py: %s is not built" % f, file=sys.stderr)
            return 2
    tmp = tempfile.mkdtemp(prefix="askdb-mcp2.")
    passed = failed = 0
    try:
        for fn in TESTS:
            d = os.path.join(tmp, fn.__name__)
            os.makedirs(d)
            s = Servers(d)
            try:
                anyio.run(fn, s)
                s.stop()
                print("ok", fn.__name__, flush=True)
                passed += 1
            except BaseException as e:   # ExceptionGroups from task groups too
                if isinstance(e, KeyboardInterrupt):
                    raise
                failed += 1
                while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
                    e = e.exceptions[0]
                why = "".join(traceback.format_exception_only(type(e), e)).strip()
                print("FAIL %s: %s" % (fn.__name__, why.replace("\n", " | ")[:600]), flush=True)
                if os.environ.get("E2E_VERBOSE"):
                    traceback.print_exc()
                try:
                    s.stop()
                except BaseException:
                    pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
