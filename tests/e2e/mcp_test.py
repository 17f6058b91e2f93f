#!/usr/bin/env python3
"""tests/e2e/mcp_test.py - end-to-end tests of `askdb mcp` over stdio.

    ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm \
        ~/.cache/askdb/venv/bin/python tests/e2e/mcp_test.py [--filter ERE]

(tests/e2e/mcp.sh installs the pinned SDK and runs this.) The client is the
official MCP Python SDK (PyPI `mcp`), so the server is checked against what
real clients do; the malformed-input tests write raw lines instead. The
model is tests/fake_llm, scripted per test. Each test runs in its own
directory with a copy of examples/shop.db, which must be byte for byte the
original afterwards. Every server's stderr is checked for sanitizer
reports. Output: "ok NAME" or "FAIL NAME: reason" per test, then one line
"N passed, M failed"; exit status 0 only when M is 0.
"""
import contextlib
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
import traceback
from datetime import timedelta

import anyio
from jsonschema import Draft202012Validator
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ASKDB = os.path.abspath(os.environ.get("ASKDB", os.path.join(ROOT, "build/asan/askdb")))
FAKE_LLM = os.path.abspath(os.environ.get("FAKE_LLM", os.path.join(ROOT, "build/asan/fake_llm")))
SHOP_DB = os.path.abspath(os.environ.get("SHOP_DB", os.path.join(ROOT, "examples/shop.db")))
SANITIZER = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error:|"
                       r"SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer")
TOOLS = {"list_databases", "search_objects", "execute_sql", "ask", "explain_sql"}
# The protocol revision askdb answers a client that asks for it or for one
# askdb does not speak.
LATEST = "2025-11-25"

# A clean environment: nothing of the developer's setup leaks in.
ENV = {k: v for k, v in os.environ.items()
       if not k.startswith("ASKDB_") and k not in (
           "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "http_proxy", "https_proxy",
           "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")}
ENV.update(no_proxy="127.0.0.1,localhost", NO_PROXY="127.0.0.1,localhost",
           ASKDB_RETRY_BASE_MS="1", LC_ALL="C")


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def fence(sql):
    return "```sql\n%s\n```" % sql


def rows_of(sql):
    con = sqlite3.connect("file:%s?mode=ro" % SHOP_DB, uri=True)
    try:
        return [list(r) for r in con.execute(sql)]
    finally:
        con.close()


class Test:
    """One test's directory (T), sandbox (W, askdb's working directory,
    with shop.db) and scripted model."""

    def __init__(self, name, tmp):
        self.name = name
        self.T = os.path.join(tmp, name)
        self.W = os.path.join(self.T, "w")
        os.makedirs(self.W)
        self.db = os.path.join(self.W, "shop.db")
        shutil.copyfile(SHOP_DB, self.db)
        self.llm = None
        self.log = None
        self.url = None
        self.errlogs = []

    def start_llm(self, script):
        d = os.path.join(self.T, "llm")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "script.json"), "w") as f:
            json.dump(script, f)
        self.log = os.path.join(d, "log")
        port_file = os.path.join(d, "port")
        self.llm = subprocess.Popen(
            [FAKE_LLM, "--script", os.path.join(d, "script.json"), "--log",
             self.log, "--port", "0", "--port-file", port_file],
            stderr=open(os.path.join(d, "stderr"), "w"), env=ENV)
        for _ in range(200):
            if os.path.exists(port_file) and os.path.getsize(port_file):
                break
            assert self.llm.poll() is None, "fake_llm exited"
            time.sleep(0.05)
        with open(port_file) as f:
            self.url = "http://127.0.0.1:%s" % f.read().strip()
        return self.url

    def nreq(self):
        if not self.log or not os.path.exists(self.log):
            return 0
        with open(self.log) as f:
            return sum(1 for line in f if line.strip())

    def model_args(self):
        return ["--llm-url", self.url, "--model", "test", "--no-question-check"]

    @contextlib.asynccontextmanager
    async def session(self, *args):
        """An initialized SDK client session with `askdb mcp ARGS`."""
        errpath = os.path.join(self.T, "stderr%d" % len(self.errlogs))
        self.errlogs.append(errpath)
        params = StdioServerParameters(command=ASKDB, args=["mcp", *args],
                                       env=ENV, cwd=self.W)
        with open(errpath, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w):
                async with ClientSession(r, w) as s:
                    init = await s.initialize()
                    yield s, init

    def raw(self, args, lines, timeout=60):
        """Run `askdb mcp ARGS` with these lines on stdin (bytes or str);
        returns (exit code, stdout lines parsed, stderr)."""
        data = b"".join((l if isinstance(l, bytes) else l.encode()) + b"\n"
                        for l in lines)
        p = subprocess.run([ASKDB, "mcp", *args], input=data, cwd=self.W,
                           env=ENV, capture_output=True, timeout=timeout)
        errpath = os.path.join(self.T, "stderr%d" % len(self.errlogs))
        self.errlogs.append(errpath)
        with open(errpath, "wb") as f:
            f.write(p.stderr)
        self.stdout = p.stdout.decode()
        out = [json.loads(l) for l in self.stdout.splitlines()]
        return p.returncode, out, p.stderr.decode(errors="replace")

    def finish(self):
        if self.llm:
            self.llm.terminate()
            self.llm.wait()
        for p in self.errlogs:
            with open(p, errors="replace") as f:
                m = SANITIZER.search(f.read())
            assert not m, "sanitizer report in %s: %s" % (p, m.group(0))
        assert sha(self.db) == sha(SHOP_DB), "shop.db changed"


TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def by_id(replies):
    return {r.get("id"): r for r in replies}


# A statement that runs until its time limit (--timeout) or a cancel stops it.
ENDLESS = ("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) "
           "SELECT count(*) FROM r")


def raw_mcp(t, name, timeout):
    """askdb mcp on shop.db with --timeout ms, spoken to a line at a time
    (send_line()): the process; its stderr goes to the test's logs."""
    errpath = os.path.join(t.T, "stderr_" + name)
    t.errlogs.append(errpath)
    return subprocess.Popen([ASKDB, "mcp", "--timeout", str(timeout), "shop.db"], cwd=t.W,
                            env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(errpath, "w"))


def send_line(p, msg):
    """msg (a message or a batch) as one line to the process p."""
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()


def sql_call(i, sql):
    """The tools/call request of execute_sql with sql, id i."""
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "execute_sql", "arguments": {"sql": sql}}}


@contextlib.asynccontextmanager
async def running_call(s, tool, args):
    """A call of tool with args in session s, running beside the body of
    the with: yields a dict with the call's request id ("id"), which gets
    the response ("response") should one come. After the body, a moment
    for a late response, then the call is dropped."""
    call = {"id": s._request_id}      # the id the SDK gives the next request

    async def run():
        call["response"] = await s.call_tool(tool, args)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        yield call
        await anyio.sleep(0.3)
        tg.cancel_scope.cancel()


async def cancel(s, call):
    """Send notifications/cancelled for the running call."""
    await s.send_notification(types.ClientNotification(types.CancelledNotification(
        params=types.CancelledNotificationParams(requestId=call["id"], reason="test"))))


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

@test
async def initializes_and_lists_read_only_tools(t):
    async with t.session("shop.db") as (s, init):
        assert init.serverInfo.name == "askdb", init.serverInfo
        # The SDK (1.30.0) asks for 2025-11-25, which askdb speaks.
        assert init.protocolVersion == LATEST, init.protocolVersion
        assert init.serverInfo.description, init.serverInfo
        assert init.capabilities.tools is not None
        assert init.capabilities.resources is not None
        assert init.capabilities.prompts is None and init.capabilities.completions is None
        tools = (await s.list_tools()).tools
        assert {x.name for x in tools} == TOOLS, [x.name for x in tools]
        for x in tools:
            # 2025-11-25's guidance on names (SEP-986).
            assert re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", x.name), x.name
            assert x.inputSchema.get("type") == "object", x.name
            assert x.outputSchema and x.outputSchema.get("type") == "object", x.name
            # Schemas without $schema are JSON Schema 2020-12 (2025-11-25):
            # valid as such, and the SDK checks each result against its
            # output schema with the same dialect.
            assert "$schema" not in x.inputSchema and "$schema" not in x.outputSchema
            Draft202012Validator.check_schema(x.inputSchema)
            Draft202012Validator.check_schema(x.outputSchema)
            assert x.annotations and x.annotations.readOnlyHint is True, x.name
            assert x.description, x.name
        ex = next(x for x in tools if x.name == "execute_sql")
        assert ex.inputSchema["properties"]["database"]["enum"] == ["shop"]
        assert ex.inputSchema["required"] == ["sql"]
        # The library refuses a longer question or hint
        # (ASKDB_MAX_QUESTION); maxLength counts characters, as it does.
        ask = next(x for x in tools if x.name == "ask")
        assert ask.inputSchema["properties"]["question"]["maxLength"] == 8192
        assert ask.inputSchema["properties"]["hint"]["maxLength"] == 8192
        assert (await s.send_ping()) is not None


def init_line(i, version):
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "initialize",
                       "params": {"protocolVersion": version, "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "1"}}})


@test
async def negotiates_older_protocol_versions(t):
    # One session a revision: a session is initialized once.
    asked = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "1999-01-01",
             "2026-07-28"]
    got = {}
    for i, v in enumerate(asked):
        lines = [init_line(i, v),
                 json.dumps({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/list"})]
        rc, out, err = t.raw(["shop.db"], lines)
        assert rc == 0, err
        got.update(by_id(out))
    answered = [got[i]["result"]["protocolVersion"] for i in range(len(asked))]
    assert answered == asked[:4] + [LATEST, LATEST], answered
    # serverInfo.description is 2025-11-25's; the older revisions' clients
    # get what they got before.
    assert [got[i]["result"]["serverInfo"].get("description") is not None
            for i in range(len(asked))] == [False, False, False, True, True, True]
    assert "instructions" not in got[0]["result"] and got[1]["result"]["instructions"]
    old = got[10]["result"]["tools"]
    assert all("outputSchema" not in x and "annotations" not in x for x in old)
    mid = got[11]["result"]["tools"]
    assert all("outputSchema" not in x and x["annotations"]["readOnlyHint"] for x in mid)
    new = got[12]["result"]["tools"]
    assert all("outputSchema" in x and x["title"] for x in new)
    # 2025-11-25 changed nothing in the tools themselves.
    assert got[13]["result"]["tools"] == new == got[14]["result"]["tools"]


@test
async def initialize_needs_a_protocol_version_and_comes_once(t):
    # An initialize without protocolVersion (or with one that is no
    # string) got the latest revision, and a second initialize changed
    # the session's revision under the requests already answered.
    bad = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
           "params": {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    lines = [json.dumps(bad),
             json.dumps(dict(bad, id=2, params=dict(bad["params"], protocolVersion=20250618))),
             json.dumps({"jsonrpc": "2.0", "id": 3, "method": "initialize"}),
             init_line(4, "2025-03-26"),
             init_line(5, "2025-11-25"),
             json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}),
             '[{"jsonrpc":"2.0","id":7,"method":"ping"}]']
    rc, out, err = t.raw(["shop.db"], lines)
    assert rc == 0, err
    got = by_id([o for o in out if isinstance(o, dict)])
    for i in (1, 2, 3):
        assert got[i]["error"]["code"] == -32602, got[i]
        assert "params.protocolVersion" in got[i]["error"]["message"], got[i]
    assert got[4]["result"]["protocolVersion"] == "2025-03-26", got[4]
    e = got[5]["error"]
    assert e["code"] == -32600 and "already initialized" in e["message"], e
    assert "2025-03-26" in e["message"], e
    # Still 2025-03-26: its tools (no output schemas) and its batches.
    assert all("outputSchema" not in x for x in got[6]["result"]["tools"]), got[6]
    arrays = [o for o in out if isinstance(o, list)]
    assert arrays == [[{"jsonrpc": "2.0", "id": 7, "result": {}}]], out


@test
async def requests_before_initialize_are_refused_but_ping(t):
    # The lifecycle has the client initialize first, with ping alone
    # allowed before (the SDKs' servers refuse the rest); askdb served
    # lists, resources and tool calls before it, under a revision nobody
    # had agreed on. Now each gets -32600 saying to send initialize first,
    # a notification is ignored, and a stateless request (2026-07-28, its
    # revision in _meta) needs no initialize.
    def req(i, method, params=None):
        m = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            m["params"] = params
        return json.dumps(m)
    stateless = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities": {}}
    lines = [
        req(1, "tools/list"),
        req(2, "ping"),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        req(3, "tools/call", {"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}),
        req(4, "resources/read", {"uri": "askdb://shop/schema"}),
        req(5, "logging/setLevel", {"level": "debug"}),
        req(6, "no/such/method"),
        req(7, "tools/call", {"name": "no_such_tool"}),
        req(8, "tools/list", {"_meta": stateless}),
        init_line(9, "2025-06-18"),
        req(10, "tools/list"),
        req(11, "tools/call", {"name": "execute_sql", "arguments": {"sql": "SELECT 1 AS n"}}),
    ]
    rc, out, err = t.raw(["shop.db"], lines)
    assert rc == 0, err
    got = by_id(out)
    assert len(out) == 11 and sorted(got) == list(range(1, 12)), out
    assert got[2]["result"] == {}, got[2]
    for i in (1, 3, 4, 5, 6, 7):
        e = got[i]["error"]
        assert e["code"] == -32600, (i, e)
        assert e["message"] == ("not initialized: send initialize first (only ping may "
                                "come before it)"), (i, e)
    assert len(got[8]["result"]["tools"]) == 5, got[8]
    assert got[9]["result"]["protocolVersion"] == "2025-06-18", got[9]
    assert len(got[10]["result"]["tools"]) == 5, got[10]
    assert got[11]["result"]["structuredContent"]["rows"] == [[1]], got[11]
    # No log messages: the logging/setLevel before initialize set nothing.
    assert not [o for o in out if o.get("method") == "notifications/message"], out


@test
async def list_requests_refuse_a_cursor(t):
    # askdb's lists come whole (no nextCursor), so any cursor is one it
    # never gave: the spec answers an invalid cursor with -32602, and
    # askdb ignored it, answering the first page again.
    stateless = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities": {}}
    lines = [init_line(0, "2025-11-25")]
    for i, m in enumerate(["tools/list", "resources/list", "resources/templates/list"]):
        lines.append(json.dumps({"jsonrpc": "2.0", "id": 1 + i, "method": m}))
        lines.append(json.dumps({"jsonrpc": "2.0", "id": 11 + i, "method": m,
                                 "params": {"cursor": "eyJwYWdlIjogMn0="}}))
        lines.append(json.dumps({"jsonrpc": "2.0", "id": 21 + i, "method": m,
                                 "params": {"cursor": None}}))
        lines.append(json.dumps({"jsonrpc": "2.0", "id": 31 + i, "method": m,
                                 "params": {"cursor": "", "_meta": stateless}}))
    rc, out, err = t.raw(["shop.db"], lines)
    assert rc == 0, err
    got = by_id(out)
    for i in range(3):
        r = got[1 + i]["result"]
        assert "nextCursor" not in r and len(r) == 1, r
        assert got[21 + i]["result"] == r, got[21 + i]
        for k in (11, 31):
            e = got[k + i]["error"]
            assert e["code"] == -32602 and "invalid cursor" in e["message"], (k + i, e)


@test
async def each_revision_reports_bad_calls_as_it_says(t):
    # 2025-11-25 (SEP-1303) says what askdb did under every revision
    # already: a bad argument is the tool's error (isError, a message the
    # model can act on), a call that is not one (no name, an unknown tool,
    # arguments that are not an object) a JSON-RPC error. So every revision
    # answers alike. A task-augmented call (2025-11-25's tasks, which askdb
    # does not offer) runs as an ordinary call, as that revision asks;
    # server/discover (2026-07-28's probe) is an unknown method, which the
    # 2.x SDK's client takes as its cue to send initialize.
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"]:
        calls = [
            {"name": "execute_sql", "arguments": {"sql": 5}},
            {"name": "execute_sql", "arguments": {"sql": "SELECT 1", "max_rows": 0}},
            {"name": "search_objects", "arguments": {"limit": "ten"}},
            {"name": "execute_sql", "arguments": {"sql": "SELECT 1", "database": "nope"}},
            {"name": "execute_sql", "arguments": [1]},
            {"name": "no_such_tool", "arguments": {}},
            {"arguments": {}},
            {"name": "execute_sql", "arguments": {"sql": "SELECT 7 AS n"},
             "task": {"ttl": 60000}},
        ]
        lines = [init_line(0, version)]
        lines += [json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                              "params": p}) for i, p in enumerate(calls)]
        lines.append('{"jsonrpc":"2.0","id":99,"method":"server/discover","params":{}}')
        rc, out, err = t.raw(["shop.db"], lines)
        got = by_id(out)
        assert rc == 0, err
        assert got[0]["result"]["protocolVersion"] == version
        for i in (1, 2, 3, 4):
            r = got[i].get("result")
            assert r and r["isError"] is True, (version, i, got[i])
        assert "'sql' is needed" in got[1]["result"]["content"][0]["text"]
        assert "'max_rows' is a whole number" in got[2]["result"]["content"][0]["text"]
        assert "'limit' is a whole number" in got[3]["result"]["content"][0]["text"]
        assert "no database 'nope'" in got[4]["result"]["content"][0]["text"]
        for i in (5, 6, 7):
            assert got[i]["error"]["code"] == -32602, (version, i, got[i])
        assert "unknown tool 'no_such_tool'" in got[6]["error"]["message"]
        r = got[8]["result"]
        assert r["isError"] is False and "task" not in r, r
        assert json.loads(r["content"][0]["text"])["rows"] == [[7]]
        assert ("structuredContent" in r) == (version != "2024-11-05"), r
        assert got[99]["error"]["code"] == -32601, got[99]


@test
async def list_databases_names_and_counts_tables(t):
    shutil.copyfile(SHOP_DB, os.path.join(t.W, "other.db"))
    try:
        async with t.session("--db", "main=shop.db", "other.db") as (s, _):
            r = await s.call_tool("list_databases", {})
            assert not r.isError, r.content
            dbs = r.structuredContent["databases"]
            assert [(d["name"], d["path"], d["engine"], d["tables"]) for d in dbs] == [
                ("main", "shop.db", "sqlite", 7), ("other", "other.db", "sqlite", 7)], dbs
            assert json.loads(r.content[0].text) == r.structuredContent
            # Two databases: the tools need to be told which one.
            r = await s.call_tool("execute_sql", {"sql": "SELECT 1"})
            assert r.isError and "'database' is needed: one of main, other" in r.content[0].text
            r = await s.call_tool("execute_sql", {"sql": "SELECT 1", "database": "nope"})
            assert r.isError and "no database 'nope'" in r.content[0].text
    finally:
        assert sha(os.path.join(t.W, "other.db")) == sha(SHOP_DB)


def built_with_duckdb(t):
    """Whether this askdb reads a CSV (through DuckDB)."""
    path = os.path.join(t.T, "probe.csv")
    with open(path, "w") as f:
        f.write("a\n1\n")
    p = subprocess.run([ASKDB, "schema", path], env=ENV, capture_output=True)
    return "built without DuckDB" not in p.stderr.decode(errors="replace")


@test
async def tools_say_the_dialect_and_that_several_databases_need_a_name(t):
    # execute_sql said "(SQLite)" and "PRAGMAs are refused" whatever it
    # served, so a model wrote SQLite's SQL for a DuckDB or PostgreSQL
    # database (and left out a read-only PRAGMA, which runs); and with
    # several databases the schemas had 'database' optional though a call
    # without it fails.
    async with t.session("shop.db") as (s, _):
        tools = {x.name: x for x in (await s.list_tools()).tools}
        d = tools["execute_sql"].description
        assert "SQLite's dialect" in d and "PRAGMA" not in d, d
        for name in ("execute_sql", "explain_sql", "ask"):
            assert "database" not in tools[name].inputSchema["required"], name
        r = await s.call_tool("execute_sql", {"sql": "PRAGMA table_info(categories)"})
        assert not r.isError and r.structuredContent["rows"][0][1] == "id", r.content
    shutil.copyfile(SHOP_DB, os.path.join(t.W, "other.db"))
    args = ["shop.db", "other.db"]
    duck = built_with_duckdb(t)
    if duck:
        with open(os.path.join(t.W, "towns.csv"), "w") as f:
            f.write("town,people\nAusterlitz,3\nBrno,400000\n")
        args.append("towns.csv")
    try:
        async with t.session(*args) as (s, _):
            tools = {x.name: x for x in (await s.list_tools()).tools}
            for name in ("execute_sql", "explain_sql", "ask"):
                schema = tools[name].inputSchema
                assert "database" in schema["required"], (name, schema)
                Draft202012Validator.check_schema(schema)
            assert "database" not in tools["search_objects"].inputSchema.get("required", [])
            d = tools["execute_sql"].description
            if duck:
                assert "each database's own dialect (SQLite: shop, other; DuckDB: towns)" in d, d
                r = await s.call_tool("execute_sql", {"database": "towns", "sql":
                                                      "SELECT town FROM towns WHERE people > 10"})
                assert r.structuredContent["rows"] == [["Brno"]], r.content
            else:
                assert "SQLite's dialect" in d, d
    finally:
        assert sha(os.path.join(t.W, "other.db")) == sha(SHOP_DB)


@test
async def search_objects_by_substring_glob_and_detail(t):
    async with t.session("shop.db") as (s, _):
        r = await s.call_tool("search_objects", {"pattern": "CUSTOMER"})
        objs = r.structuredContent["objects"]
        # customers by its name; orders and customer_revenue by columns.
        assert {"database": "shop", "table": "customers"} in objs, objs
        orders = next(o for o in objs if o["table"] == "orders")
        assert orders["columns"] == ["customer_id"], orders
        r = await s.call_tool("search_objects", {"pattern": "order%items", "detail": "summary"})
        objs = r.structuredContent["objects"]
        assert [o["table"] for o in objs] == ["order_items"], objs
        assert objs[0]["rows"] == rows_of("SELECT count(*) FROM order_items")[0][0]
        assert "id INTEGER pk" in objs[0]["columns"], objs[0]
        r = await s.call_tool("search_objects", {"pattern": "categories", "detail": "full"})
        full = r.structuredContent["objects"][0]
        assert full["foreign_keys"] == [{"from": "parent_id", "table": "categories", "to": "id"}]
        assert full["columns"][1]["samples"], full
        r = await s.call_tool("search_objects", {"pattern": "cust", "database": None})
        assert not r.isError and r.structuredContent["objects"], r.content
        r = await s.call_tool("search_objects", {"limit": 2})
        assert len(r.structuredContent["objects"]) == 2 and r.structuredContent["truncated"] is True
        r = await s.call_tool("search_objects", {"detail": "everything"})
        assert r.isError and "names, summary or full" in r.content[0].text


@test
async def execute_sql_returns_exact_rows(t):
    sql = "SELECT id, name, parent_id FROM categories ORDER BY id"
    async with t.session("shop.db") as (s, _):
        r = await s.call_tool("execute_sql", {"sql": sql})
        assert not r.isError, r.content
        sc = r.structuredContent
        assert sc["columns"] == ["id", "name", "parent_id"]
        assert sc["rows"] == rows_of(sql), sc["rows"]
        assert sc["row_count"] == len(sc["rows"]) and sc["truncated"] is False
        assert sc["database"] == "shop" and sc["sql"] == sql
        r = await s.call_tool("execute_sql", {"sql": sql, "max_rows": 3})
        assert r.structuredContent["rows"] == rows_of(sql)[:3]
        assert r.structuredContent["truncated"] == "rows"
        r = await s.call_tool("execute_sql", {"sql": "SELECT nope FROM categories"})
        assert r.isError and "no such column: nope" in r.content[0].text, r.content


@test
async def execute_sql_max_rows_cannot_raise_the_cap(t):
    async with t.session("--max-rows", "4", "shop.db") as (s, _):
        r = await s.call_tool("execute_sql", {"sql": "SELECT id FROM customers ORDER BY id",
                                              "max_rows": 100})
        assert r.structuredContent["rows"] == [[1], [2], [3], [4]]
        assert r.structuredContent["truncated"] == "rows"


@test
async def whole_numbers_written_as_reals_are_counts(t):
    # JSON Schema's "integer" is any number with no fraction: 3.0 and 2e0
    # are valid max_rows and limit by the schemas tools/list gives, and a
    # client (Python's float, a model's JSON) may well send them so. They
    # were refused as no whole number; 2.5 still is.
    sql = "SELECT id FROM customers ORDER BY id"
    async with t.session("shop.db") as (s, _):
        tools = {x.name: x for x in (await s.list_tools()).tools}
        ex = Draft202012Validator(tools["execute_sql"].inputSchema)
        so = Draft202012Validator(tools["search_objects"].inputSchema)
        assert ex.is_valid({"sql": sql, "max_rows": 3.0})
        assert so.is_valid({"limit": 2e0})
        r = await s.call_tool("execute_sql", {"sql": sql, "max_rows": 3.0})
        assert not r.isError, r.content
        assert r.structuredContent["rows"] == [[1], [2], [3]], r.structuredContent
        assert r.structuredContent["truncated"] == "rows"
        r = await s.call_tool("search_objects", {"limit": 2e0})
        assert not r.isError, r.content
        assert len(r.structuredContent["objects"]) == 2
        assert r.structuredContent["truncated"] is True
        for tool, args in [("execute_sql", {"sql": sql, "max_rows": 2.5}),
                           ("execute_sql", {"sql": sql, "max_rows": 0.0}),
                           ("search_objects", {"limit": 501.0}),
                           ("search_objects", {"limit": 1e300})]:
            r = await s.call_tool(tool, args)
            assert r.isError and "is a whole number" in r.content[0].text, (args, r.content)


@test
async def write_statements_are_refused_and_the_file_unchanged(t):
    before = sha(t.db)
    async with t.session("shop.db") as (s, _):
        for sql in ["DELETE FROM customers",
                    "DROP TABLE orders",
                    "UPDATE products SET price = 0",
                    "SELECT 1; DELETE FROM customers",
                    "ATTACH DATABASE 'x.db' AS x",
                    "PRAGMA journal_mode = DELETE",
                    "CREATE TABLE t (x)"]:
            r = await s.call_tool("execute_sql", {"sql": sql})
            assert r.isError, sql
            assert "refused" in r.content[0].text, (sql, r.content[0].text)
            r = await s.call_tool("explain_sql", {"sql": sql})
            assert r.isError, sql
    assert sha(t.db) == before
    assert sorted(os.listdir(t.W)) == ["shop.db"], os.listdir(t.W)


@test
async def explain_sql_shows_the_plan_without_running(t):
    async with t.session("shop.db") as (s, _):
        r = await s.call_tool("explain_sql", {"sql": "SELECT * FROM orders WHERE customer_id = 3"})
        assert not r.isError, r.content
        plan = r.structuredContent["plan"]
        assert any("USING INDEX idx_orders_customer_id" in p["detail"] for p in plan), plan
        # The text block is the same JSON, as for every tool.
        assert json.loads(r.content[0].text) == r.structuredContent


@test
async def resources_give_schema_and_tables(t):
    async with t.session("shop.db") as (s, _):
        res = (await s.list_resources()).resources
        assert [str(x.uri) for x in res] == ["askdb://shop/schema"]
        tpl = (await s.list_resource_templates()).resourceTemplates
        assert [x.uriTemplate for x in tpl] == ["askdb://shop/table/{table}"]
        r = await s.read_resource("askdb://shop/schema")
        assert "CREATE TABLE customers" in r.contents[0].text
        r = await s.read_resource("askdb://shop/table/order_items")
        tbl = json.loads(r.contents[0].text)
        assert tbl["name"] == "order_items" and tbl["database"] == "shop"
        assert tbl["rows"] == rows_of("SELECT count(*) FROM order_items")[0][0]
        assert [c["name"] for c in tbl["columns"]] == [
            r[1] for r in rows_of("PRAGMA table_info(order_items)")]
        try:
            await s.read_resource("askdb://shop/table/nope")
            raise AssertionError("no error for an unknown table")
        except McpError as e:
            assert e.error.code == -32002 and "no table 'nope'" in e.error.message, e.error


@test
async def ask_answers_with_progress_notifications(t):
    sql = "SELECT id, first_name FROM customers ORDER BY id LIMIT 3"
    t.start_llm([{"content": fence(sql)}])
    seen = []

    async def progress(p, total, message):
        seen.append((p, message))

    async with t.session(*t.model_args(), "shop.db") as (s, _):
        r = await s.call_tool("ask", {"question": "First three customers?"},
                              progress_callback=progress)
        assert not r.isError, r.content
        sc = r.structuredContent
        assert sc["sql"] == sql and sc["rows"] == rows_of(sql), sc
        assert sc["columns"] == ["id", "first_name"]
        assert sc["confidence"] == 1 and len(sc["attempts"]) == 1, sc
        assert sc["question"] == "First three customers?"
    assert t.nreq() == 1
    values = [p for p, _ in seen]
    assert values == sorted(values) and len(set(values)) == len(values), seen
    msgs = [m for _, m in seen]
    assert "execute: 3 rows" in msgs and msgs[-1] == "answer: ok", msgs


@test
async def ask_without_valid_sql_is_a_tool_error(t):
    t.start_llm([{"content": "I cannot help with that.", "repeat": True}])
    async with t.session(*t.model_args(), "--max-attempts", "2", "shop.db") as (s, _):
        r = await s.call_tool("ask", {"question": "Anything?"})
        assert r.isError, r.content
        assert "no answer after 2 attempts" in r.content[0].text, r.content[0].text


@test
async def ask_refuses_a_question_over_the_limit_as_such(t):
    # A question over ASKDB_MAX_QUESTION (8192 characters, as askdb serve
    # takes) is refused by the library before any model call; the tool
    # error says why, not "no answer after 0 attempts".
    t.start_llm([{"content": fence("SELECT 1 AS one"), "repeat": True}])
    async with t.session(*t.model_args(), "shop.db") as (s, _):
        r = await s.call_tool("ask", {"question": "\u8868" * 8193})
        assert r.isError, r.content
        text = r.content[0].text
        assert text == ("the question is 8193 characters long, over the limit "
                        "of 8192 (ASKDB_MAX_QUESTION): ask it in fewer words"), text
    assert t.nreq() == 0


@test
async def cancelled_ask_stops_and_the_database_is_free_again(t):
    slow = "SELECT 'slow' AS which"
    fast = "SELECT 'fast' AS which"
    t.start_llm([{"delay_ms": 20000, "content": fence(slow)},
                 {"content": fence(fast), "repeat": True}])
    async with t.session(*t.model_args(), "shop.db") as (s, _):
        async with running_call(s, "ask", {"question": "slow one?"}) as first:
            with anyio.fail_after(10):
                while t.nreq() < 1:
                    await anyio.sleep(0.02)
            t0 = time.monotonic()
            await cancel(s, first)
            # One question at a time per database: this one can only run
            # once the cancelled one has stopped.
            r = await s.call_tool("ask", {"question": "fast one?"},
                                  read_timeout_seconds=timedelta(seconds=15))
            elapsed = time.monotonic() - t0
            assert (await s.send_ping()) is not None
    assert "response" not in first, "a cancelled request got a response: %r" % first
    assert not r.isError and r.structuredContent["rows"] == [["fast"]], r
    assert elapsed < 5, "the cancelled ask held the database for %.1f s" % elapsed
    assert t.nreq() == 2


@test
async def cancelled_execute_sql_stops_and_the_database_is_free_again(t):
    async with t.session("--timeout", "30000", "shop.db") as (s, _):
        async with running_call(s, "execute_sql", {"sql": ENDLESS}) as first:
            await anyio.sleep(0.5)
            t0 = time.monotonic()
            await cancel(s, first)
            # One statement at a time per database: this one can only run
            # once the cancelled one has stopped.
            r = await s.call_tool("execute_sql", {"sql": "SELECT 'fast' AS which"},
                                  read_timeout_seconds=timedelta(seconds=40))
            elapsed = time.monotonic() - t0
    assert "response" not in first, "a cancelled request got a response: %r" % first
    assert not r.isError and r.structuredContent["rows"] == [["fast"]], r
    assert elapsed < 5, "the cancelled statement held the database for %.1f s" % elapsed


@test
async def schema_lookups_do_not_wait_for_a_running_statement(t):
    # search_objects, list_databases and the resources read the schema
    # under the database's handle lock, so each waited for a statement
    # running there, up to --timeout (20 s here), though the schema is
    # read once and kept; then the first read alone did, through the
    # handle the statement runs on. It has a handle of its own now: these
    # are the first reads of the schema.
    async with t.session("--timeout", "20000", "shop.db") as (s, _):
        async with running_call(s, "execute_sql", {"sql": ENDLESS}) as first:
            await anyio.sleep(0.5)
            t0 = time.monotonic()
            r = await s.call_tool("search_objects", {"pattern": "cust"})
            assert {"database": "shop", "table": "customers"} in r.structuredContent["objects"]
            r = await s.call_tool("list_databases", {})
            assert r.structuredContent["databases"][0]["tables"] == 7, r.structuredContent
            r = await s.read_resource("askdb://shop/schema")
            assert "CREATE TABLE customers" in r.contents[0].text
            r = await s.read_resource("askdb://shop/table/orders")
            assert json.loads(r.contents[0].text)["name"] == "orders"
            elapsed = time.monotonic() - t0
            assert "response" not in first, "the statement ended before the lookups"
            await cancel(s, first)
    assert elapsed < 4, "the lookups waited %.1f s for the statement" % elapsed


@test
async def a_cancel_reaches_a_first_schema_read_held_by_a_lock(t):
    # The first read of the schema was told to no one: a resources/read
    # the client cancelled while another process held the file locked
    # went on waiting for the lock, up to --timeout (20 s here), though
    # no one would read its answer, and the end of input waited with it.
    # A model of a server that is not there: no local model to warm up.
    errpath = os.path.join(t.T, "stderr_locked")
    t.errlogs.append(errpath)
    p = subprocess.Popen([ASKDB, "mcp", "--timeout", "20000", "--llm-url",
                          "http://127.0.0.1:9/v1", "--model", "test", "shop.db"], cwd=t.W,
                         env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=open(errpath, "w"))
    lock = None
    try:
        send_line(p, json.loads(init_line(1, LATEST)))
        assert json.loads(p.stdout.readline())["id"] == 1
        send_line(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        lock = sqlite3.connect(t.db, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")
        send_line(p, {"jsonrpc": "2.0", "id": 2, "method": "resources/read",
                      "params": {"uri": "askdb://shop/schema"}})
        time.sleep(0.5)
        send_line(p, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": 2}})
        t0 = time.monotonic()
        p.stdin.close()
        rest = p.stdout.read()
        elapsed = time.monotonic() - t0
        assert p.wait(30) == 0
    finally:
        if lock:
            lock.execute("ROLLBACK")
            lock.close()
        if p.poll() is None:
            p.kill()
    assert rest == b"", rest
    assert elapsed < 5, "the cancelled read went on for %.1f s" % elapsed


@test
async def parallel_calls_all_get_their_own_rows(t):
    async with t.session("shop.db") as (s, _):
        got = {}

        async def one(i):
            r = await s.call_tool("execute_sql", {"sql": "SELECT %d AS i, count(*) FROM "
                                                  "customers WHERE id <= %d" % (i, i)})
            got[i] = r.structuredContent["rows"]

        async with anyio.create_task_group() as tg:
            for i in range(1, 13):
                tg.start_soon(one, i)
        assert got == {i: [[i, i]] for i in range(1, 13)}, got


@test
async def a_request_reusing_a_running_id_is_refused_without_that_id(t):
    # Ids are unique among a session's requests. A tool call reusing the
    # id of one still running got -32600 under that id, and a ping was
    # answered under it: either way the client took it for the answer to
    # its first request. Now the refusal has id null, the request is not
    # run, and the first gets its own answer; the id is free again after.
    p = raw_mcp(t, "dup", 3000)

    def send(msg):
        send_line(p, msg)

    try:
        send(json.loads(init_line("a", "2025-11-25")))
        assert json.loads(p.stdout.readline())["id"] == "a"
        send(sql_call(7, ENDLESS))
        time.sleep(0.3)
        send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
        send(sql_call(7, "SELECT 1"))
        send({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        got = [json.loads(p.stdout.readline()) for _ in range(3)]
        for r in got[:2]:
            assert r["id"] is None and r["error"]["code"] == -32600, got
            assert "request id 7 is in use" in r["error"]["message"], r
        assert got[2] == {"jsonrpc": "2.0", "id": 8, "result": {}}, got
        first = json.loads(p.stdout.readline())
        assert first["id"] == 7 and first["result"]["isError"] is True, first
        assert "time" in first["result"]["content"][0]["text"], first
        send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
        assert json.loads(p.stdout.readline()) == {"jsonrpc": "2.0", "id": 7, "result": {}}
    finally:
        p.stdin.close()
        assert p.wait(timeout=30) == 0


@test
async def a_cancelled_request_other_than_a_tool_call_gets_no_response(t):
    # Receivers SHOULD NOT answer a cancelled request: a cancelled tool
    # call got no response, but any other request still got one. In a
    # batch (2025-03-26) a ping and a resource read wait behind an endless
    # statement while their cancels come; the batch's array must leave
    # them out, and a request cancelled after its answer keeps it.
    p = raw_mcp(t, "cancel_batch", 3000)

    def send(msg):
        send_line(p, msg)

    def cancel(i):
        send({"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": i, "reason": "test"}})

    try:
        send(json.loads(init_line("a", "2025-03-26")))
        assert json.loads(p.stdout.readline())["id"] == "a"
        send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
        assert json.loads(p.stdout.readline()) == {"jsonrpc": "2.0", "id": 9, "result": {}}
        cancel(9)    # answered already: nothing to take back
        send([{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "execute_sql", "arguments": {"sql": ENDLESS}}},
              {"jsonrpc": "2.0", "id": 2, "method": "ping"},
              {"jsonrpc": "2.0", "id": 3, "method": "resources/read",
               "params": {"uri": "askdb://shop/schema"}},
              {"jsonrpc": "2.0", "id": 4, "method": "ping"}])
        time.sleep(0.3)
        cancel(2)
        cancel(3)
        got = json.loads(p.stdout.readline())
        assert isinstance(got, list), got
        assert sorted(r["id"] for r in got) == [1, 4], got
        assert by_id(got)[1]["result"]["isError"] is True, got
        assert by_id(got)[4]["result"] == {}, got
        send({"jsonrpc": "2.0", "id": 5, "method": "ping"})
        assert json.loads(p.stdout.readline()) == {"jsonrpc": "2.0", "id": 5, "result": {}}
    finally:
        p.stdin.close()
        assert p.wait(timeout=30) == 0


@test
async def the_17th_request_at_once_is_told_busy(t):
    # 16 tool calls and resource reads run at once on stdio; the 17th is
    # not queued (the reader would have to stop reading, cancels too) but
    # refused at once with -32000, JSON-RPC's server error, which the
    # client may send again: MCP has servers rate-limit tool calls and
    # names no code for it. 16 statements wait for the database behind
    # an endless one here; cancelling that one lets them run.
    p = raw_mcp(t, "busy", 20000)

    def send(msg):
        send_line(p, msg)

    try:
        send(json.loads(init_line("a", "2025-11-25")))
        assert json.loads(p.stdout.readline())["id"] == "a"
        send(sql_call(1, ENDLESS))
        time.sleep(0.3)     # the statement holds the database
        for i in range(2, 17):
            send(sql_call(i, "SELECT %d AS n" % i))
        send(sql_call(17, "SELECT 17 AS n"))
        send({"jsonrpc": "2.0", "id": 18, "method": "ping"})
        busy = json.loads(p.stdout.readline())
        # "16 calls" said less than it counts: resource reads too.
        assert busy == {"jsonrpc": "2.0", "id": 17, "error": {"code": -32000, "message":
                        "busy: 16 tool calls and resource reads are running in this "
                        "session; send this one again when one has finished"}}, busy
        assert json.loads(p.stdout.readline()) == {"jsonrpc": "2.0", "id": 18, "result": {}}
        send({"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": 1}})
        got = by_id(json.loads(p.stdout.readline()) for _ in range(15))
        assert sorted(got) == list(range(2, 17)), sorted(got)
        for i in range(2, 17):
            assert got[i]["result"]["structuredContent"]["rows"] == [[i]], got[i]
        send(sql_call(19, "SELECT 19 AS n"))
        r = json.loads(p.stdout.readline())
        assert r["id"] == 19 and r["result"]["structuredContent"]["rows"] == [[19]], r
    finally:
        p.stdin.close()
        assert p.wait(timeout=30) == 0


@test
async def many_calls_in_a_row_are_answered_in_order(t):
    # The reading moves between threads when a call runs long: every reply
    # must still come once, whole, for its own request.
    p = subprocess.Popen([ASKDB, "mcp", "shop.db"], cwd=t.W, env=ENV, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=open(os.path.join(t.T, "stderr_seq"), "w"))
    t.errlogs.append(os.path.join(t.T, "stderr_seq"))
    try:
        p.stdin.write((init_line(0, "2025-11-25") + "\n").encode())
        p.stdin.flush()
        assert json.loads(p.stdout.readline())["id"] == 0
        for i in range(1, 401):
            if i % 2:
                msg = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                       "params": {"name": "execute_sql", "arguments": {"sql": "SELECT %d" % i}}}
            else:
                msg = {"jsonrpc": "2.0", "id": i, "method": "ping"}
            p.stdin.write((json.dumps(msg) + "\n").encode())
            p.stdin.flush()
            reply = json.loads(p.stdout.readline())
            assert reply["id"] == i, (i, reply)
            if i % 2:
                assert reply["result"]["structuredContent"]["rows"] == [[i]], reply
            else:
                assert reply["result"] == {}, reply
    finally:
        p.stdin.close()
        assert p.wait(timeout=30) == 0


@test
async def malformed_input_gets_errors_and_the_server_goes_on(t):
    lines = [
        init_line(0, "2025-11-25"),
        "this is not json",
        '{"jsonrpc":"2.0","id":1,"method":"no/such/method"}',
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"x"}',
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}',
        '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{}}',
        '{"id":5,"method":"ping"}',
        '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}',
        '[{"jsonrpc":"2.0","id":6,"method":"ping"}]',
        '{"jsonrpc":"2.0","method":"notifications/whatever"}',
        '{"jsonrpc":"2.0","method":"no/such/notification","params":{}}',
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_sql","arguments":[1]}}',
        '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"execute_sql","arguments":{"sql":5}}}',
        '{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"loud"}}',
        b'{"jsonrpc":"2.0","id":10,"method":"ping","params":{"x":"\xff"}}',
        b'{"jsonrpc":"2.0","id":11,"method":"ping","params":{"pad":"' + b"x" * (5 << 20) + b'"}}',
        "",
        '{"jsonrpc":"2.0","id":12,"method":"ping"}',
        '{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"execute_sql","arguments":{"sql":"SELECT 42"}}}',
        '{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"execute_sql","arguments":'
        '{"sql":"SELECT 0.1 AS a, 123456789.12345678 AS b"}}}',
    ]
    rc, out, err = t.raw(["shop.db"], lines)
    assert rc == 0, err
    got = by_id([o for o in out if o.get("id") is not None])
    nulls = [o["error"]["code"] for o in out if o.get("id") is None]
    for o in out:
        assert o.get("jsonrpc") == "2.0" and ("result" in o) != ("error" in o), o
    # bad JSON, id of a bad type, a batch, invalid UTF-8, the 5 MiB line
    assert sorted(nulls) == sorted([-32700, -32600, -32600, -32700, -32600]), out
    assert got[1]["error"]["code"] == -32601
    assert got[2]["error"]["code"] == -32602
    assert got[3]["error"]["code"] == -32602 and "unknown tool" in got[3]["error"]["message"]
    assert got[4]["error"]["code"] == -32602
    assert got[5]["error"]["code"] == -32600
    assert got[7]["error"]["code"] == -32602
    assert got[8]["result"]["isError"] is True and "'sql' is needed" in got[8]["result"]["content"][0]["text"]
    assert got[9]["error"]["code"] == -32602
    assert got[12]["result"] == {}
    assert got[13]["result"]["structuredContent"]["rows"] == [[42]]
    # Reals as the shortest text that reads back, in the message and in
    # the text block inside it (jansson alone writes 0.10000000000000001).
    assert '"rows":[[0.1,123456789.12345678]]' in t.stdout, t.stdout
    assert '\\"rows\\":[[0.1,123456789.12345678]]' in t.stdout, t.stdout
    assert 6 not in got and 10 not in got and 11 not in got
    # Notifications are never answered: initialize, 5 null ids + 11 requests.
    assert len(out) == 17, out


@test
async def batches_in_revision_2025_03_26_alone(t):
    # 2025-03-26 has a server take JSON-RPC batches (2025-06-18 took them
    # out); askdb refused them in every revision.
    batch = json.dumps([
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "execute_sql", "arguments": {"sql": "SELECT 7 AS n"}}},
        42,
        {"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 5, "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
         "params": {"name": "execute_sql", "arguments": {"sql": "DELETE FROM orders"}}},
    ])
    lines = [init_line(1, "2025-03-26"), batch,
             '[{"jsonrpc":"2.0","method":"notifications/initialized"}]', "[]",
             '{"jsonrpc":"2.0","id":7,"method":"ping"}']
    rc, out, err = t.raw(["shop.db"], lines)
    assert rc == 0, err
    assert out[0]["id"] == 1 and out[0]["result"]["protocolVersion"] == "2025-03-26", out[0]
    arrays = [o for o in out if isinstance(o, list)]
    assert len(arrays) == 1, out          # the batch of a notification alone: nothing
    got = by_id(arrays[0])
    assert sorted(got, key=str) == sorted([2, 3, 4, 5, 6, None], key=str), arrays
    assert got[2]["result"] == {}
    assert got[3]["result"]["content"][0]["text"].startswith('{"sql":"SELECT 7 AS n"'), got[3]
    assert "structuredContent" not in got[3]["result"]    # not in 2025-03-26
    assert got[4]["error"]["code"] == -32600 and "batch" in got[4]["error"]["message"], got[4]
    assert got[5]["error"]["code"] == -32601
    assert got[6]["result"]["isError"] is True, got[6]
    assert got[None]["error"]["code"] == -32600, got[None]
    single = [o for o in out if isinstance(o, dict)]
    assert [o.get("id") for o in single] == [1, None, 7], single
    assert "empty batch" in single[1]["error"]["message"], single[1]
    # Another revision: a batch is refused whole, as before.
    rc, out, err = t.raw(["shop.db"], [init_line(1, "2025-06-18"),
                                       '[{"jsonrpc":"2.0","id":2,"method":"ping"}]'])
    assert out[1]["id"] is None and out[1]["error"]["code"] == -32600, out
    assert "only 2025-03-26 has batches" in out[1]["error"]["message"], out[1]


@test
async def a_database_that_cannot_be_opened_fails_at_start(t):
    rc, out, err = t.raw(["missing.db"], ['{"jsonrpc":"2.0","id":1,"method":"ping"}'])
    assert rc == 3 and out == [], (rc, out)
    assert "missing.db" in err, err
    assert not os.path.exists(os.path.join(t.W, "missing.db"))
    rc, out, err = t.raw(["--db", "bad name=shop.db"], [])
    assert rc == 2 and "may hold only letters" in err, err
    rc, out, err = t.raw(["shop.db", "./shop.db"], [])
    assert rc == 2 and "two databases are called 'shop'" in err, err
    rc, out, err = t.raw([], [])
    assert rc == 2 and "no database" in err, err


@test
async def config_file_names_databases_and_sets_limits(t):
    os.makedirs(os.path.join(t.W, "conf"))
    with open(os.path.join(t.W, "conf", "askdb.json"), "w") as f:
        json.dump({"databases": {"store": "../shop.db"},
                   "options": {"max-rows": 5, "no-linking": True}}, f)
    async with t.session("--config", "conf/askdb.json", "--max-rows", "2") as (s, _):
        r = await s.call_tool("list_databases", {})
        assert [d["name"] for d in r.structuredContent["databases"]] == ["store"]
        # The command line's --max-rows wins over the file's.
        r = await s.call_tool("execute_sql", {"sql": "SELECT id FROM customers ORDER BY id"})
        assert r.structuredContent["rows"] == [[1], [2]], r.structuredContent
    with open(os.path.join(t.W, "conf", "list.json"), "w") as f:
        json.dump({"databases": ["../shop.db"]}, f)
    # getopt takes --conf for --config: the file was left unread.
    for args in (["--config", "conf/list.json"], ["--conf", "conf/list.json"],
                 ["--conf=conf/list.json"]):
        async with t.session(*args) as (s, _):
            r = await s.call_tool("list_databases", {})
            assert [d["name"] for d in r.structuredContent["databases"]] == ["shop"], args
    with open(os.path.join(t.W, "conf", "bad.json"), "w") as f:
        f.write('{"options": {"max-rows": "many"}, "databases": ["../shop.db"]}')
    rc, out, err = t.raw(["--config", "conf/bad.json"], [])
    assert rc == 2 and "--max-rows takes a whole number" in err, err


@test
async def config_file_false_turns_a_switch_off(t):
    # false was left out, a switch or not: "question-check": false kept the
    # check on (its default), and "hello" was answered as a greeting with
    # no SQL asked for. A switch with a counterpart (X, no-X) is it when
    # false; the command line still wins.
    sql = "SELECT 1 AS one"
    url = t.start_llm([{"content": fence(sql), "repeat": True}])
    with open(os.path.join(t.W, "c.json"), "w") as f:
        json.dump({"databases": ["shop.db"],
                   "options": {"llm-url": url, "model": "test",
                               "question-check": False}}, f)
    async with t.session("--config", "c.json") as (s, _):
        r = await s.call_tool("ask", {"question": "hello"})
        assert not r.isError and r.structuredContent["sql"] == sql, r.structuredContent
    assert t.nreq() == 1
    async with t.session("--config", "c.json", "--question-check") as (s, _):
        r = await s.call_tool("ask", {"question": "hello"})
        assert r.structuredContent["sql"] is None, r.structuredContent
    assert t.nreq() == 1


@test
async def config_file_errors_name_the_file_and_the_key(t):
    # As askdb serve --config does: the file, the key, and the keys it may
    # use; not getopt's words about a flag nobody typed.
    def bad(conf):
        with open(os.path.join(t.W, "bad.json"), "w") as f:
            json.dump(conf, f)
        rc, out, err = t.raw(["--config", "bad.json", "shop.db"], [])
        assert rc == 2 and out == [], (rc, out, err)
        assert "unrecognized option" not in err and "see 'askdb mcp --help'" not in err, err
        return err
    err = bad({"options": {"bogus": 1}})
    assert err.startswith("askdb mcp: config 'bad.json': unknown option \"bogus\" under "
                          "\"options\" (any flag of askdb mcp without its dashes: "), err
    valid = err.split("dashes: ", 1)[1].rstrip().rstrip(")").split(", ")
    for k in ("max-rows", "llm-url", "no-warm", "verbose", "no-linking", "timeout"):
        assert k in valid, (k, valid)
    for k in ("config", "db", "help"):
        assert k not in valid, (k, valid)
    err = bad({"databases": ["shop.db"], "option": {"max-rows": 2}})
    assert "config 'bad.json': unknown key \"option\" (databases, options)" in err, err
    err = bad({"options": {"no-warm": "yes"}})
    assert "config 'bad.json': option \"no-warm\" is a switch: true or false" in err, err
    # true for an option that takes a value would have taken the next
    # argument (here the database) as its value.
    err = bad({"options": {"trace": True}})
    assert "config 'bad.json': option \"trace\" takes a value: a string or a number" in err, err
    assert not os.path.exists(os.path.join(t.W, "--db=shop.db"))
    err = bad({"options": {"model": None}})
    assert "config 'bad.json': option \"model\" takes a value: a string or a number" in err, err
    # false leaves out an option that takes a value, and a switch without
    # a counterpart (no "--warm"): config_file_false_turns_a_switch_off.
    with open(os.path.join(t.W, "ok.json"), "w") as f:
        json.dump({"options": {"no-warm": False, "trace": False, "max-rows": 1}}, f)
    async with t.session("--config", "ok.json", "shop.db") as (s, _):
        r = await s.call_tool("execute_sql", {"sql": "SELECT id FROM customers ORDER BY id"})
        assert r.structuredContent["rows"] == [[1]], r.structuredContent


@test
async def a_bare_path_is_named_with_one_underscore_a_character(t):
    # The man page: each character but letters, digits, '-', '_' and '.'
    # made '_'. A UTF-8 character is one '_' (not one a byte), a byte that
    # starts none is one too, and a name that was valid stays as it is.
    files = {"Données 2024.db": "Donn_es_2024", "日本.db": "__",
             b"bad\xffbyte.db": "bad_byte", "my-data.v2_x.db": "my-data.v2_x"}
    paths = []
    for f in files:
        p = os.path.join(os.fsencode(t.W), f if isinstance(f, bytes) else f.encode())
        shutil.copyfile(SHOP_DB, p)
        paths.append(p)
    lines = [init_line(0, "2025-11-25"),
             '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":'
             '{"name":"list_databases","arguments":{}}}']
    p = subprocess.run([os.fsencode(ASKDB), b"mcp", *paths], cwd=t.W, env=ENV,
                       input=("\n".join(lines) + "\n").encode(), capture_output=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert not SANITIZER.search(p.stderr.decode(errors="replace")), p.stderr
    out = json.loads(p.stdout.decode().splitlines()[1])
    names = [d["name"] for d in out["result"]["structuredContent"]["databases"]]
    assert names == list(files.values()), names


@test
async def big_results_are_cut_and_say_so(t):
    sql = "SELECT id, printf('%.*c', 300000, 'x') AS pad FROM customers ORDER BY id"
    async with t.session("shop.db") as (s, _):
        r = await s.call_tool("execute_sql", {"sql": sql, "max_rows": 10})
        sc = r.structuredContent
        assert sc["truncated"] == "bytes", {k: sc[k] for k in sc if k != "rows"}
        assert 0 < sc["row_count"] < 4 and "under 1024 KiB" in sc["note"], sc["note"]
        assert [row[0] for row in sc["rows"]] == list(range(1, sc["row_count"] + 1))
        # The rows last: a reader of only the start of a long text block
        # (clients cap a tool's output) still sees the cut.
        text = r.content[0].text
        head = text[:text.index('"rows":')]
        assert '"truncated":"bytes"' in head and '"note":' in head and '"row_count":' in head, head
        assert list(sc)[-1] == "rows", list(sc)


@test
async def a_result_with_both_copies_stays_under_1_mib(t):
    # A result under the 1 MiB cap went out twice (structuredContent and
    # the same JSON as a text block, escaped once more): a response of
    # up to 2 MiB, more for text full of quotes. The cap counts both.
    xs = "SELECT id, printf('%.*c', 100000, 'x') AS pad FROM customers ORDER BY id LIMIT 9"
    qs = "SELECT id, printf('%.*c', 100000, '\"') AS pad FROM customers ORDER BY id LIMIT 3"

    def call(i, sql):
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                           "params": {"name": "execute_sql", "arguments": {"sql": sql}}})

    rc, out, err = t.raw(["shop.db"], [init_line(0, "2025-11-25"), call(1, xs), call(2, qs)])
    assert rc == 0, err
    lines = t.stdout.splitlines()
    got = by_id(out)
    for i in (1, 2):
        assert len(lines[i]) <= 1 << 20, (i, len(lines[i]))
        sc = got[i]["result"]["structuredContent"]
        assert sc["truncated"] == "bytes" and "under 1024 KiB" in sc["note"], (i, sc["note"])
        assert json.loads(got[i]["result"]["content"][0]["text"]) == sc
    # 2024-11-05 has the text block alone: all 9 rows fit in it.
    rc, out, err = t.raw(["shop.db"], [init_line(0, "2024-11-05"), call(1, xs)])
    r = by_id(out)[1]["result"]
    assert "structuredContent" not in r and len(t.stdout.splitlines()[1]) <= 1 << 20
    assert json.loads(r["content"][0]["text"])["truncated"] is False, r["content"][0]["text"][:200]


@test
async def a_huge_schema_resource_is_cut_and_says_so(t):
    # The schema resource had no cap: a database of thousands of tables
    # made one message of many MiB.
    big = os.path.join(t.T, "big.db")
    con = sqlite3.connect(big)
    cols = ", ".join("column_number_%02d TEXT" % i for i in range(30))
    for i in range(1500):
        con.execute("CREATE TABLE table_number_%04d (id INTEGER PRIMARY KEY, %s)" % (i, cols))
    con.commit()
    con.close()
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                       "params": {"uri": "askdb://big/schema"}})
    rc, out, err = t.raw(["--db", "big=" + big, "shop.db"], [init_line(0, "2025-11-25"), line,
                         line.replace("big/schema", "shop/schema").replace('"id": 1', '"id": 2')],
                         timeout=120)
    assert rc == 0, err
    assert len(t.stdout.splitlines()[1]) <= 1 << 20, len(t.stdout.splitlines()[1])
    text = by_id(out)[1]["result"]["contents"][0]["text"]
    m = re.search(r"\n\n-- cut here: the first (\d+) of 1500 tables only, to keep the "
                  r"schema under 1024 KiB; find the others with the tool search_objects, "
                  r"or read one with askdb://big/table/\{table\}\n$", text)
    assert m, text[-400:]
    kept = int(m.group(1))
    assert 500 < kept < 1500, kept
    # Whole tables: the last one kept ends its statement.
    assert text.count("CREATE TABLE") == kept, (text.count("CREATE TABLE"), kept)
    assert text[:m.start()].endswith(" rows"), text[m.start() - 100:m.start()]
    # A schema that fits comes whole, without the line.
    assert "-- cut here" not in by_id(out)[2]["result"]["contents"][0]["text"]


@test
async def a_schema_whose_first_table_is_over_the_cap_gives_that_tables_first_lines(t):
    # Whole tables only: a database whose first table's text alone is
    # over 1 MiB got "the first 0 of 3 tables only" and nothing of any
    # table. Now that table's first lines, whole, and a note that says so.
    # 2000 columns (SQLite's most) whose names hold 470 backslashes: the
    # CREATE TABLE stays under the 1 MiB of SQL askdb reads, the text as a
    # JSON string (each backslash two bytes) does not.
    wide = os.path.join(t.T, "wide.db")
    names = ["c%04d_" % i + "\\" * 470 for i in range(2000)]
    con = sqlite3.connect(wide)
    con.execute("CREATE TABLE a_wide (%s)" % ", ".join('"%s" TEXT' % n for n in names))
    con.execute("CREATE TABLE b_small (a INTEGER PRIMARY KEY, b TEXT)")
    con.execute("CREATE TABLE c_small (a INTEGER PRIMARY KEY, b TEXT)")
    con.commit()
    con.close()
    # One column line alone over the cap: a name of 300,000 "\é" (four
    # bytes in JSON, three in UTF-8) is cut at a character, never inside
    # the é, and not before its line (whole lines would keep 18 bytes).
    long = os.path.join(t.T, "long.db")
    con = sqlite3.connect(long)
    con.execute('CREATE TABLE one ("%s" TEXT)' % ("\\\u00e9" * 300000))
    con.commit()
    con.close()

    def read(i, uri):
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": "resources/read",
                           "params": {"uri": uri}})
    rc, out, err = t.raw(["--db", "wide=" + wide, "--db", "long=" + long],
                         [init_line(0, "2025-11-25"), read(1, "askdb://wide/schema"),
                          read(2, "askdb://long/schema")], timeout=120)
    assert rc == 0, err
    for line in t.stdout.splitlines():
        assert len(line.encode()) <= 1 << 20, len(line)
    got = by_id(out)
    text = got[1]["result"]["contents"][0]["text"]
    m = re.search(r"\n-- cut here: the first table, a_wide, is over 1024 KiB alone: its "
                  r"first (\d+) of 2002 lines only \(the other 2 tables left out\); read a "
                  r"table as JSON with askdb://wide/table/\{table\}, or find tables and "
                  r"columns by name with the tool search_objects\n$", text)
    assert m, text[-600:]
    lines = text[:m.start() + 1].splitlines()
    assert len(lines) == int(m.group(1)) and 1000 < len(lines) < 2000, (len(lines), m.group(1))
    assert lines[0] == "CREATE TABLE a_wide (", lines[0]
    # Whole lines: the columns in order, each to its comma.
    for i, line in enumerate(lines[1:]):
        assert line == '  "%s" TEXT,' % names[i], (i, line[:40], line[-40:])
    text = got[2]["result"]["contents"][0]["text"]
    assert text.startswith('CREATE TABLE one (\n  "\\\u00e9'), text[:40]
    m = re.search(r"\n-- cut here: the first table, one, is over 1024 KiB alone: its text "
                  r"only up to line 2 of 3, which is cut short; read a table as JSON with "
                  r"askdb://long/table/\{table\}, or find tables and columns by name with "
                  r"the tool search_objects\n$", text)
    assert m, text[-400:]
    assert text[m.start() - 1] in "\\\u00e9", repr(text[m.start() - 8:m.start()])
    assert len(json.dumps(text)) > 1 << 19, len(json.dumps(text))


@test
async def the_cut_notes_first_table_name_is_never_cut_inside_a_character(t):
    # The note named the first table with "%.200s": a name of 199 "x" and
    # an "\u00e9" was cut between the é's two bytes, the text was no
    # longer UTF-8, and every non-ASCII byte of the 1 MiB schema, the
    # name's own é in its CREATE TABLE line included, came out as "?".
    wide = os.path.join(t.T, "wide.db")
    name = "x" * 199 + "\u00e9"
    con = sqlite3.connect(wide)
    con.execute('CREATE TABLE "%s" (%s)' % (name, ", ".join(
        '"c%04d_%s" TEXT' % (i, "\\" * 470) for i in range(2000))))
    con.commit()
    con.close()
    rc, out, err = t.raw(["--db", "wide=" + wide],
                         [init_line(0, "2025-11-25"),
                          json.dumps({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                                      "params": {"uri": "askdb://wide/schema"}})],
                         timeout=120)
    assert rc == 0, err
    text = by_id(out)[1]["result"]["contents"][0]["text"]
    assert text.startswith("CREATE TABLE %s (" % name) or \
        text.startswith('CREATE TABLE "%s" (' % name), text[:250]
    assert "?" not in text, text[text.index("?") - 20:text.index("?") + 20]
    m = re.search(r"\n-- cut here: the first table, (x+)\u00e9?, is over 1024 KiB alone: its "
                  r"first \d+ of 2002 lines only; ", text)
    assert m, text[-600:]


@test
async def search_objects_is_cut_to_1_mib_as_every_result(t):
    # Every result is cut to 1 MiB, both its copies counted, but
    # search_objects' was not: detail full with limit 500 over 300 wide
    # tables made a message of 5.5 MB, which a client refuses or cuts
    # anywhere. Now it keeps whole objects up to the cap, says truncated,
    # and a note says what to do.
    wide = os.path.join(t.T, "wide.db")
    con = sqlite3.connect(wide)
    for k in range(300):
        con.execute("CREATE TABLE table_with_a_long_name_%03d (id INTEGER PRIMARY KEY, %s)" % (
            k, ", ".join("column_with_a_rather_long_name_%03d TEXT" % i for i in range(60))))
        con.execute("INSERT INTO table_with_a_long_name_%03d VALUES (1, %s)" % (
            k, ", ".join("'sample value number %d'" % i for i in range(60))))
    con.commit()
    con.close()
    for version, detail in (("2025-11-25", "full"), ("2025-11-25", "summary"),
                            ("2024-11-05", "full")):
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "search_objects",
                           "arguments": {"detail": detail, "limit": 500}}}
        rc, out, err = t.raw(["--db", "wide=" + wide], [init_line(0, version), json.dumps(call)],
                             timeout=120)
        assert rc == 0, err
        line = [l for l in t.stdout.splitlines() if l.startswith('{"jsonrpc":"2.0","id":1,')][0]
        assert len(line.encode()) <= 1 << 20, (version, detail, len(line.encode()))
        r = by_id(out)[1]["result"]
        assert r["isError"] is False, r
        got = json.loads(r["content"][0]["text"])
        n = len(got["objects"])
        assert 0 < n < 300 and got["truncated"] is True, (version, detail, n)
        assert ["table_with_a_long_name_%03d" % k for k in range(n)] == \
            [o["table"] for o in got["objects"]]
        assert "to keep the result under 1024 KiB" in got["note"], got["note"]
        if version == "2025-11-25":
            assert r["structuredContent"] == got
    # Within the cap nothing changes: no note.
    call["params"]["arguments"] = {"limit": 500}
    rc, out, err = t.raw(["--db", "wide=" + wide], [init_line(0, "2025-11-25"), json.dumps(call)])
    got = by_id(out)[1]["result"]["structuredContent"]
    assert len(got["objects"]) == 300 and got["truncated"] is False and "note" not in got, got.keys()


@test
async def every_cut_result_says_so_in_a_note(t):
    # Only the 1 MiB cut had a note: rows cut by --max-rows or max_rows,
    # or by --max-bytes, came with truncated alone, which a model reading
    # the rows took for all of them.
    sql = "SELECT id, email FROM customers ORDER BY id"
    t.start_llm([{"content": fence(sql), "repeat": True}])
    async with t.session(*t.model_args(), "--max-rows", "4", "shop.db") as (s, _):
        r = await s.call_tool("execute_sql", {"sql": sql})
        sc = r.structuredContent
        assert sc["truncated"] == "rows" and sc["row_count"] == 4, sc
        assert "the first 4 rows only" in sc["note"] and "row cap of 4" in sc["note"], sc
        assert json.loads(r.content[0].text)["note"] == sc["note"]
        r = await s.call_tool("execute_sql", {"sql": sql, "max_rows": 2})
        assert "the first 2 rows only" in r.structuredContent["note"], r.structuredContent
        r = await s.call_tool("ask", {"question": "Every customer's email?"})
        sc = r.structuredContent
        assert sc["truncated"] == "rows" and "row cap of 4" in sc["note"], sc
        assert list(sc)[-1] == "rows", list(sc)
        r = await s.call_tool("execute_sql", {"sql": "SELECT id FROM customers WHERE id < 3"})
        assert r.structuredContent["truncated"] is False and "note" not in r.structuredContent
    async with t.session("--max-bytes", "300", "shop.db") as (s, _):
        r = await s.call_tool("execute_sql", {"sql": sql})
        sc = r.structuredContent
        assert sc["truncated"] == "bytes" and 0 < sc["row_count"] < 10, sc
        assert ("cut to %d rows at the result size cap of 300 bytes" % sc["row_count"]
                in sc["note"]), sc


@test
async def a_huge_table_resource_is_cut_and_says_so(t):
    # The table resource had no cap (the schema's has one): a table of
    # many long column names made one message of many MiB.
    wide = os.path.join(t.T, "wide.db")
    # 2000 columns (SQLite's most) of 480 characters: the CREATE TABLE
    # stays under the 1 MiB of SQL askdb reads, the JSON does not.
    names = ["c%04d_" % i + "x" * 474 for i in range(2000)]
    con = sqlite3.connect(wide)
    con.execute("CREATE TABLE wide (%s)" % ", ".join('"%s" TEXT' % n for n in names))
    con.execute("CREATE TABLE small (a INTEGER PRIMARY KEY, b TEXT REFERENCES wide(c0000))")
    con.commit()
    con.close()

    def read(i, uri):
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": "resources/read",
                           "params": {"uri": uri}})
    rc, out, err = t.raw(["--db", "wide=" + wide], [init_line(0, "2025-11-25"),
                         read(1, "askdb://wide/table/wide"),
                         read(2, "askdb://wide/table/small")], timeout=120)
    assert rc == 0, err
    for line in t.stdout.splitlines():
        assert len(line.encode()) <= 1 << 20, len(line)
    got = by_id(out)
    c = got[1]["result"]["contents"][0]
    assert c["mimeType"] == "application/json", c["mimeType"]
    o = json.loads(c["text"])
    kept = len(o["columns"])
    assert 1000 < kept < 2000, kept
    # Whole columns, the first ones, in order.
    assert [col["name"] for col in o["columns"]] == names[:kept]
    assert o["name"] == "wide" and o["database"] == "wide", (o["name"], o["database"])
    assert o["cut"] == ("the first %d of 2000 columns only, to keep the table under "
                        "1024 KiB; find the others by name with the tool "
                        "search_objects" % kept), o["cut"]
    # A table that fits comes whole, without "cut".
    small = json.loads(got[2]["result"]["contents"][0]["text"])
    assert "cut" not in small and [col["name"] for col in small["columns"]] == ["a", "b"], small
    assert small["foreign_keys"] == [{"from": "b", "table": "wide", "to": "c0000"}], small


@test
async def log_messages_when_the_client_asks_for_them_and_stdout_stays_clean(t):
    sql = "SELECT count(*) AS n FROM orders"
    t.start_llm([{"content": fence(sql)}])
    lines = [
        init_line(0, "2025-11-25"),
        '{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}',
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "ask", "arguments": {"question": "How many orders?"},
                               "_meta": {"progressToken": "p1"}}}),
    ]
    # -v logs every step on stderr; stdout stays the protocol's alone
    # (raw() parses each of its lines as JSON).
    rc, out, err = t.raw(t.model_args() + ["-v", "shop.db"], lines)
    assert rc == 0, err
    assert "askdb: [" in err, err
    logs = [o for o in out if o.get("method") == "notifications/message"]
    prog = [o for o in out if o.get("method") == "notifications/progress"]
    assert logs and all(o["params"]["logger"] == "askdb" for o in logs), out
    assert prog and all(o["params"]["progressToken"] == "p1" for o in prog)
    final = [o for o in out if o.get("id") == 2][0]
    assert out.index(final) == len(out) - 1, "notifications after the response"
    assert final["result"]["structuredContent"]["rows"] == rows_of(sql)


# --------------------------------------------------------------------------

def main(argv):
    pattern = None
    if len(argv) == 3 and argv[1] == "--filter":
        pattern = re.compile(argv[2])
    elif len(argv) != 1:
        print("usage: mcp_test.py [--filter ERE]", file=sys.stderr)
        return 2
    for f in (ASKDB, FAKE_LLM):
        if not os.access(f, os.X_OK):
            print("mcp_test.py: %s is not built" % f, file=sys.stderr)
            return 2
    tmp = tempfile.mkdtemp(prefix="askdb-mcp-e2e.")
    passed = failed = 0
    try:
        for fn in TESTS:
            name = fn.__name__
            if pattern and not pattern.search(name):
                continue
            t = Test(name, tmp)
            try:
                anyio.run(fn, t)
                t.finish()
                print("ok", name, flush=True)
                passed += 1
            except BaseException as e:  # an ExceptionGroup from a task group too
                if isinstance(e, KeyboardInterrupt):
                    raise
                failed += 1
                why = "".join(traceback.format_exception_only(type(e), e)).strip()
                print("FAIL %s: %s" % (name, why.replace("\n", " | ")[:600]), flush=True)
                if os.environ.get("E2E_VERBOSE"):
                    traceback.print_exc()
                with contextlib.suppress(Exception):
                    t.finish()
    finally:
        if os.environ.get("E2E_KEEP"):
            print("mcp_test.py: kept %s" % tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
