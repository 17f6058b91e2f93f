#!/usr/bin/env python3
"""tests/e2e/mcp_http_test.py - MCP over Streamable HTTP at askdb serve's /mcp.

    ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm \
        ~/.cache/askdb/venv/bin/python tests/e2e/mcp_http_test.py [--filter ERE]

The client is the official MCP Python SDK (streamablehttp_client); the
session, token, Origin and method rules are also checked with raw HTTP.
Each test starts its own scripted model and server on a free loopback
port. Output: "ok NAME" / "FAIL NAME: reason", then "N passed, M failed".
"""
import hashlib
import http.client
import sqlite3
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

import anyio
from mcp import ClientSession, types
from mcp.shared.exceptions import McpError
from mcp.client.streamable_http import streamablehttp_client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_test import (ENDLESS, ENV, FAKE_LLM, ASKDB, LATEST, SHOP_DB, SANITIZER,  # noqa: E402
                      TOOLS, fence, rows_of, sql_call)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Server:
    def __init__(self, name, tmp, script=None, args=()):
        self.dir = os.path.join(tmp, name)
        os.makedirs(self.dir)
        self.db = os.path.join(self.dir, "shop.db")
        shutil.copyfile(SHOP_DB, self.db)
        self.fake = None
        self.flog = os.path.join(self.dir, "fake.log")
        model = []
        if script is None:
            script = []   # no model call expected; askdb serve still needs one
        if script is not None:
            with open(os.path.join(self.dir, "script.json"), "w") as f:
                json.dump(script, f)
            pf = os.path.join(self.dir, "fake.port")
            self.fake = subprocess.Popen([FAKE_LLM, "--script", os.path.join(self.dir, "script.json"),
                                          "--log", self.flog, "--port-file", pf],
                                         stderr=subprocess.DEVNULL, env=ENV)
            for _ in range(200):
                if os.path.exists(pf) and os.path.getsize(pf):
                    break
                time.sleep(0.05)
            model = ["--llm-url", "http://127.0.0.1:%s/v1" % open(pf).read().strip(),
                     "--model", "m", "--no-question-check"]
        self.err = os.path.join(self.dir, "serve.err")
        env = dict(ENV, ASKDB_CACHE_DIR=os.path.join(self.dir, "cache"))
        self.srv = subprocess.Popen([ASKDB, "serve", "--listen", "127.0.0.1:0", "--db",
                                     "shop=" + self.db, *model, *args],
                                    stderr=open(self.err, "w"), env=env)
        for _ in range(400):
            text = open(self.err).read()
            if "listening on http://" in text:
                self.port = int(text.split("listening on http://")[1].split(":")[1].split("/")[0])
                break
            assert self.srv.poll() is None, text
            time.sleep(0.05)
        self.url = "http://127.0.0.1:%d/mcp" % self.port

    def nreq(self):
        if not os.path.exists(self.flog):
            return 0
        return sum(1 for l in open(self.flog) if l.strip())

    def raw(self, method, body=None, headers=None):
        h = {"Content-Type": "application/json",
             "Accept": "application/json, text/event-stream"}
        h.update(headers or {})
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, "/mcp", body=json.dumps(body) if body is not None else None, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data

    def session(self, version="2025-06-18"):
        """A session of that revision, initialized with raw HTTP: the
        headers its requests carry (Mcp-Session-Id, MCP-Protocol-Version)
        and the initialize result."""
        st, h, body = self.raw("POST", dict(INIT, params=dict(INIT["params"],
                                                              protocolVersion=version)))
        assert st == 200, (st, body)
        res = json.loads(body)["result"]
        assert res["protocolVersion"] == version, res
        return {"Mcp-Session-Id": h["mcp-session-id"], "MCP-Protocol-Version": version}, res

    def stop(self):
        self.srv.send_signal(signal.SIGTERM)
        self.srv.wait(20)
        if self.fake:
            self.fake.terminate()
            self.fake.wait(10)
        text = open(self.err, errors="replace").read()
        m = SANITIZER.search(text)
        assert not m, "sanitizer report: " + text[-2000:]
        assert sha(self.db) == sha(SHOP_DB), "shop.db changed"


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}}

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


@test
async def sdk_client_initializes_lists_and_calls_tools(tmp):
    s = Server("tools", tmp)
    try:
        async with streamablehttp_client(s.url) as (r, w, sid):
            async with ClientSession(r, w) as cs:
                init = await cs.initialize()
                # Every later request carries MCP-Protocol-Version: 2025-11-25.
                assert init.protocolVersion == LATEST, init
                assert init.serverInfo.description, init.serverInfo
                assert sid(), "no Mcp-Session-Id"
                tools = {t.name: t for t in (await cs.list_tools()).tools}
                assert set(tools) == TOOLS, tools.keys()
                assert all(t.annotations.readOnlyHint for t in tools.values())
                sql = "SELECT id, name FROM categories ORDER BY id LIMIT 3"
                res = await cs.call_tool("execute_sql", {"sql": sql})
                assert not res.isError, res.content
                assert res.structuredContent["rows"] == rows_of(sql), res.structuredContent
                res = await cs.call_tool("execute_sql", {"sql": "DELETE FROM categories"})
                assert res.isError and "refused" in res.content[0].text, res.content
                res = await cs.call_tool("explain_sql", {"sql": sql})
                assert not res.isError, res.content
    finally:
        s.stop()


@test
async def ask_streams_progress_over_http(tmp):
    sql = "SELECT id, first_name FROM customers ORDER BY id LIMIT 3"
    s = Server("ask", tmp, script=[{"content": fence(sql)}])
    seen = []

    async def progress(p, total, message):
        seen.append(message)

    try:
        async with streamablehttp_client(s.url) as (r, w, _):
            async with ClientSession(r, w) as cs:
                await cs.initialize()
                res = await cs.call_tool("ask", {"question": "First three customers?"},
                                         progress_callback=progress)
                assert not res.isError, res.content
                assert res.structuredContent["rows"] == rows_of(sql), res.structuredContent
        assert "execute: 3 rows" in seen and seen[-1] == "answer: ok", seen
    finally:
        s.stop()


@test
async def a_failed_model_is_said_to_be_askdb_serves(tmp):
    # At /mcp the tool error of a failed model said "check the model
    # options askdb mcp was started with": it was askdb serve.
    s = Server("model_fails", tmp, script=[{"status": 401, "repeat": True}])
    try:
        hdr, _ = s.session()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "ask", "arguments": {"question": "How many orders?"}}}
        st, _, body = s.raw("POST", call, dict(hdr, Accept="application/json"))
        r = json.loads(body)["result"]
        text = r["content"][0]["text"]
        assert r["isError"] is True and "the model failed" in text, body
        assert "askdb serve was started with" in text and "askdb mcp" not in text, text
    finally:
        s.stop()


@test
async def cancel_notification_stops_a_slow_ask(tmp):
    s = Server("cancel", tmp, script=[{"delay_ms": 20000, "content": fence("SELECT 1 AS one")},
                                      {"content": fence("SELECT 2 AS two"), "repeat": True}])
    got = {}
    try:
        async with streamablehttp_client(s.url) as (r, w, _):
            async with ClientSession(r, w) as cs:
                await cs.initialize()
                rid = cs._request_id

                async def first():
                    try:
                        got["first"] = await cs.call_tool("ask", {"question": "slow?"})
                    except McpError as e:   # what the SDK's own server answers
                        got["error"] = e.error

                async with anyio.create_task_group() as tg:
                    tg.start_soon(first)
                    with anyio.fail_after(10):
                        while s.nreq() < 1:
                            await anyio.sleep(0.02)
                    t0 = time.monotonic()
                    await cs.send_notification(types.ClientNotification(types.CancelledNotification(
                        params=types.CancelledNotificationParams(requestId=rid, reason="test"))))
                    res = await cs.call_tool("ask", {"question": "fast?"})
                    elapsed = time.monotonic() - t0
                    await anyio.sleep(0.5)     # time for a response that should not come
                    tg.cancel_scope.cancel()
        # No response, as the protocol asks (it was the error code 0 "Request
        # cancelled" of the SDK's own server, which JSON-RPC has no use for).
        assert got == {}, got
        assert res.structuredContent["rows"] == [[2]], res.structuredContent
        assert elapsed < 5, elapsed
    finally:
        s.stop()


def post_async(s, body, headers):
    """POST body to s's /mcp on a thread: the thread and a dict that gets
    the answer under "r" (status, headers, body)."""
    got = {}
    th = threading.Thread(target=lambda: got.update(r=s.raw("POST", body, headers)))
    th.start()
    return th, got


def answer_of(st, h, body):
    """The JSON-RPC messages of a POST's answer: the JSON document, or the
    data of each event of a stream."""
    assert st == 200, (st, body)
    if h["content-type"].startswith("text/event-stream"):
        return [json.loads(l[5:]) for l in body.decode().splitlines() if l.startswith("data:")]
    return [json.loads(body)]


@test
async def a_cancelled_request_gets_no_response_but_its_post_is_answered(tmp):
    # The session sends nothing for a request the client cancelled (as on
    # stdio), but the POST had the SDK's error code 0 "Request cancelled",
    # which JSON-RPC has no use for. Now a client that takes a stream gets
    # one that ends without a response (the protocol: receivers SHOULD NOT
    # answer a cancelled request), and one that takes JSON alone, which
    # must get a document, -32000. A tool call (a slow model) and a
    # resource read (its first schema read waits for the test's lock on
    # the file, up to --timeout) in flight, each cancelled. The schema is
    # read once and kept: the two reads are of two copies of shop.db.
    two = os.path.join(tmp, "cancelled_two.db")
    shutil.copyfile(SHOP_DB, two)
    s = Server("cancelled", tmp, script=[{"delay_ms": 20000, "content": fence("SELECT 1 AS one")},
                                         {"delay_ms": 20000, "content": fence("SELECT 1 AS one")}],
               args=["--timeout", "20000", "--db", "two=" + two])
    lock = None
    try:
        st, h, body = s.raw("POST", INIT)
        assert st == 200, (st, body)
        sid = {"Mcp-Session-Id": h["mcp-session-id"]}
        both = "application/json, text/event-stream"
        cases = [(2, "application/json", "ask"), (3, both, "ask"),
                 (4, "application/json", "shop"), (5, both, "two")]
        for n, accept, what in cases:
            if what == "ask":
                req = {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                       "params": {"name": "ask", "arguments": {"database": "shop",
                                                               "question": "slow?"}}}
            else:
                req = {"jsonrpc": "2.0", "id": n, "method": "resources/read",
                       "params": {"uri": "askdb://%s/schema" % what}}
                lock = sqlite3.connect(s.db if what == "shop" else two, isolation_level=None)
                lock.execute("BEGIN EXCLUSIVE")
            th, got = post_async(s, req, dict(sid, Accept=accept))
            t0 = time.monotonic()
            if what == "ask":
                while s.nreq() < n - 1 and time.monotonic() - t0 < 10:
                    time.sleep(0.02)
            else:
                time.sleep(0.5)
            assert th.is_alive(), got
            note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": n, "reason": "test"}}
            st, _, body = s.raw("POST", note, sid)
            assert st == 202 and body == b"", (st, body)
            if lock:
                lock.execute("ROLLBACK")
                lock.close()
                lock = None
            th.join(10)
            assert not th.is_alive() and time.monotonic() - t0 < 10, "the cancelled request went on"
            msgs = answer_of(*got["r"])
            if accept == both:
                assert got["r"][1]["content-type"].startswith("text/event-stream"), got["r"]
                assert [m for m in msgs if m.get("id") == n] == [], msgs
            else:
                assert msgs == [{"jsonrpc": "2.0", "id": n, "error": {
                    "code": -32000, "message": "request cancelled: the client sent "
                    "notifications/cancelled for it, so its answer is not sent"}}], msgs
        # The session goes on.
        st, _, body = s.raw("POST", {"jsonrpc": "2.0", "id": 6, "method": "ping"}, sid)
        assert st == 200 and json.loads(body)["result"] == {}, (st, body)
    finally:
        if lock:
            lock.close()
        s.stop()


def two_slow_asks(s, hdr):
    """Two ask calls (ids 2 and 3), one POST accepting JSON only and one
    accepting an event stream, once the model has both: [(id, post)]."""
    posts = []
    for n, accept in ((2, "application/json"), (3, "application/json, text/event-stream")):
        call = {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "ask", "arguments": {"question": "slow?"}}}
        posts.append((n, post_async(s, call, dict(hdr, Accept=accept))))
    t0 = time.monotonic()
    while s.nreq() < 2 and time.monotonic() - t0 < 10:
        time.sleep(0.02)
    return posts


def expect_stopped(posts, wait_s, message):
    """Each of two_slow_asks()'s POSTs ends within wait_s with the
    server's -32000 and message."""
    for n, (th, got) in posts:
        th.join(wait_s)
        assert not th.is_alive(), "the call went on"
        msgs = answer_of(*got["r"])
        assert msgs[-1] == {"jsonrpc": "2.0", "id": n, "error": {
            "code": -32000, "message": message}}, msgs


@test
async def ending_a_session_answers_its_calls_in_flight(tmp):
    # DELETE /mcp stops the session's calls; their POSTs got code 0
    # "Request cancelled", as if the client had cancelled them. They are
    # the server's doing: -32000 and why.
    s = Server("deleted", tmp, script=[{"delay_ms": 20000, "content": fence("SELECT 1 AS one")},
                                       {"delay_ms": 20000, "content": fence("SELECT 1 AS one")}])
    try:
        hdr, _ = s.session()
        posts = two_slow_asks(s, hdr)
        st, _, _ = s.raw("DELETE", None, hdr)
        assert st == 204, st
        expect_stopped(posts, 10, "the session was ended (DELETE /mcp): "
                       "initialize a new one and send this again there")
    finally:
        s.stop()


@test
async def a_shutdown_answers_the_calls_it_stops(tmp):
    # SIGTERM lets the calls in flight finish for 10 s, then stops them;
    # their POSTs got code 0 "Request cancelled", as if the client had
    # cancelled them. Now -32000 and why.
    s = Server("stopped", tmp, script=[{"delay_ms": 30000, "content": fence("SELECT 1 AS one")},
                                       {"delay_ms": 30000, "content": fence("SELECT 1 AS one")}])
    try:
        hdr, _ = s.session()
        posts = two_slow_asks(s, hdr)
        s.srv.send_signal(signal.SIGTERM)
        expect_stopped(posts, 25, "the server is stopping: send this again "
                       "once it is back")
        assert s.srv.wait(20) == 0
    finally:
        s.stop()


@test
async def the_17th_request_at_once_in_a_session_is_told_busy(tmp):
    # stdio runs at most 16 tool calls and resource reads at once; /mcp
    # had no such cap: a session could start any number. Now each session
    # has stdio's, with its -32000 "busy"; another session is not held to
    # the first's. 16 statements wait for the database behind an endless
    # one; cancelling that one lets them run.
    s = Server("busy", tmp, args=["--timeout", "20000", "--per-client", "64"])
    try:
        hdr, _ = s.session()
        js = dict(hdr, Accept="application/json")
        read = {"jsonrpc": "2.0", "id": 18, "method": "resources/read",
                "params": {"uri": "askdb://shop/schema"}}
        st, _, body = s.raw("POST", read, js)     # the schema, read once and kept
        assert st == 200 and "result" in json.loads(body), body
        posts = [post_async(s, sql_call(1, ENDLESS), js)]
        time.sleep(0.5)        # the statement holds the database
        posts += [post_async(s, sql_call(i, "SELECT %d AS n" % i), js) for i in range(2, 17)]
        time.sleep(1.0)
        st, _, body = s.raw("POST", sql_call(17, "SELECT 17 AS n"), js)
        assert st == 200 and json.loads(body) == {"jsonrpc": "2.0", "id": 17, "error": {
            "code": -32000, "message": "busy: 16 tool calls and resource reads are running "
            "in this session; send this one again when one has finished"}}, (st, body)
        st, _, body = s.raw("POST", read, js)
        assert json.loads(body)["error"]["code"] == -32000, body
        # Another session reads at once.
        other, _ = s.session()
        t0 = time.monotonic()
        st, _, body = s.raw("POST", read, dict(other, Accept="application/json"))
        assert "CREATE TABLE customers" in json.loads(body)["result"]["contents"][0]["text"], body
        assert time.monotonic() - t0 < 3, time.monotonic() - t0
        st, _, _ = s.raw("POST", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                  "params": {"requestId": 1}}, hdr)
        assert st == 202, st
        for i, (th, got) in enumerate(posts, 1):
            th.join(20)
            assert not th.is_alive(), i
            if i > 1:
                r = json.loads(got["r"][2])
                assert r["result"]["structuredContent"]["rows"] == [[i]], r
        st, _, body = s.raw("POST", sql_call(19, "SELECT 19 AS n"), js)
        assert json.loads(body)["result"]["structuredContent"]["rows"] == [[19]], body
    finally:
        s.stop()


@test
async def a_client_runs_per_client_calls_at_once_in_all_its_sessions(tmp):
    # --per-client bounded a client's questions to /api/ask and statements
    # to /api/sql, but not its MCP calls: MCP_MAX_RUNNING is a session's,
    # a client may open any number of sessions, and each stateless request
    # (2026-07-28) is a session of its own, so one client had as many
    # calls running, each on a thread, as it sent. Now a client has at
    # most --per-client, in all its sessions together.
    s = Server("per_client", tmp, args=["--timeout", "20000", "--per-client", "2"])
    try:
        a, _ = s.session()
        b, _ = s.session()
        js = dict(a, Accept="application/json")
        posts = [post_async(s, sql_call(1, ENDLESS), js),
                 post_async(s, sql_call(2, ENDLESS), dict(b, Accept="application/json"))]
        time.sleep(1.0)        # both run
        busy = {"code": -32000, "message": "busy: 2 tool calls and resource reads of this "
                "client are running (askdb serve --per-client); send this one again when "
                "one has finished"}
        c, _ = s.session()
        st, _, body = s.raw("POST", sql_call(3, "SELECT 3 AS n"), dict(c, Accept="application/json"))
        assert st == 200 and json.loads(body) == {"jsonrpc": "2.0", "id": 3, "error": busy}, (st, body)
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        call = sql_call(4, "SELECT 4 AS n")
        call["params"]["_meta"] = meta
        st, h, body = s.raw("POST", call, {"Accept": "application/json",
                                           "MCP-Protocol-Version": "2026-07-28",
                                           "Mcp-Method": "tools/call", "Mcp-Name": "execute_sql"})
        assert json.loads(body)["error"] == busy, (st, body)
        # What is no call runs as ever.
        st, _, body = s.raw("POST", {"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
                            dict(c, Accept="application/json"))
        assert st == 200 and json.loads(body)["result"]["tools"], (st, body)
        for i, h_ in ((1, a), (2, b)):
            st, _, _ = s.raw("POST", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                      "params": {"requestId": i}}, h_)
            assert st == 202, st
        for i, (th, got) in enumerate(posts, 1):
            th.join(20)
            assert not th.is_alive(), i
            r = json.loads(got["r"][2])
            assert r["error"]["message"].startswith("request cancelled"), r
        # Both counted out: two at once again.
        posts = [post_async(s, sql_call(6 + i, "SELECT %d AS n" % i), dict(h_, Accept="application/json"))
                 for i, h_ in enumerate((a, b))]
        for th, got in posts:
            th.join(20)
            assert json.loads(got["r"][2])["result"]["structuredContent"]["rows"], got
        st, _, body = s.raw("POST", sql_call(9, "SELECT 9 AS n"), dict(c, Accept="application/json"))
        assert json.loads(body)["result"]["structuredContent"]["rows"] == [[9]], body
    finally:
        s.stop()


@test
async def sessions_tokens_origins_and_methods(tmp):
    s = Server("rules", tmp, args=["--token", "t0ken"])
    try:
        auth = {"Authorization": "Bearer t0ken"}
        st, _, _ = s.raw("POST", INIT)
        assert st == 401, st
        st, h, body = s.raw("POST", INIT, auth)
        assert st == 200 and h["content-type"] == "application/json", (st, h, body)
        sid = h["mcp-session-id"]
        assert json.loads(body)["result"]["protocolVersion"] == "2025-06-18"
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        st, _, body = s.raw("POST", ping, auth)                     # no session
        assert st == 400, (st, body)
        st, _, body = s.raw("POST", ping, dict(auth, **{"Mcp-Session-Id": "nope"}))
        assert st == 404, (st, body)
        st, _, body = s.raw("POST", ping, dict(auth, **{"Mcp-Session-Id": sid}))
        assert st == 200 and json.loads(body)["result"] == {}, (st, body)
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        st, _, body = s.raw("POST", note, dict(auth, **{"Mcp-Session-Id": sid}))
        assert st == 202 and body == b"", (st, body)
        st, _, body = s.raw("POST", {"jsonrpc": "2.0", "id": 3, "method": "nope"},
                            dict(auth, **{"Mcp-Session-Id": sid}))
        assert st == 200 and json.loads(body)["error"]["code"] == -32601, body
        st, _, _ = s.raw("POST", ping, dict(auth, **{"Mcp-Session-Id": sid,
                                                     "Origin": "http://evil.example"}))
        assert st == 403, st
        st, _, _ = s.raw("POST", ping, dict(auth, **{"Mcp-Session-Id": sid,
                                                     "MCP-Protocol-Version": "1999-01-01"}))
        assert st == 400, st
        st, h, _ = s.raw("GET", None, auth)
        assert st == 405, st
        st, _, _ = s.raw("DELETE", None, dict(auth, **{"Mcp-Session-Id": sid}))
        assert st == 204, st
        st, _, _ = s.raw("POST", ping, dict(auth, **{"Mcp-Session-Id": sid}))
        assert st == 404, st
    finally:
        s.stop()


@test
async def each_revision_over_http(tmp):
    # The revision a session negotiated is the MCP-Protocol-Version its
    # requests carry; one askdb does not speak is refused with 400 and the
    # list of those it does. An Origin of another site gets 403 (2025-11-25
    # says so; askdb did already).
    s = Server("revisions", tmp)
    try:
        for version in ("2025-06-18", "2025-11-25"):
            hdr, res = s.session(version)
            assert ("description" in res["serverInfo"]) == (version == "2025-11-25"), res
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "execute_sql", "arguments": {"sql": 5}}}
            st, _, body = s.raw("POST", call, dict(hdr, Accept="application/json"))
            res = json.loads(body)["result"]
            assert st == 200 and res["isError"] is True, (st, body)
            st, _, body = s.raw("POST", {"jsonrpc": "2.0", "id": 3, "method": "ping"},
                                dict(hdr, Origin="http://evil.example"))
            assert st == 403, (st, body)
        st, _, body = s.raw("POST", {"jsonrpc": "2.0", "id": 4, "method": "ping"},
                            dict(hdr, **{"MCP-Protocol-Version": "2026-07-28"}))
        assert st == 400, (st, body)
        assert "2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05" in body.decode(), body
        # The 2.x SDK's first message, server/discover (2026-07-28) without
        # a session: a 400 it falls back from to initialize.
        probe = {"jsonrpc": "2.0", "id": 5, "method": "server/discover", "params": {}}
        st, _, body = s.raw("POST", probe)
        assert st == 400, (st, body)
    finally:
        s.stop()


@test
async def batches_over_http_in_2025_03_26(tmp):
    # A session of 2025-03-26 may POST a batch (that revision's transport
    # says so); askdb answered every batch with 400.
    s = Server("batches", tmp)
    try:
        hdr, _ = s.session("2025-03-26")
        batch = [{"jsonrpc": "2.0", "id": 2, "method": "ping"},
                 {"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                  "params": {"name": "execute_sql", "arguments": {"sql": "SELECT 7 AS n"}}}]
        st, h2, body = s.raw("POST", batch, dict(hdr, Accept="application/json"))
        assert st == 200 and h2["content-type"] == "application/json", (st, h2, body)
        got = {r["id"]: r for r in json.loads(body)}
        assert got[2]["result"] == {} and '"rows":[[7]]' in got[3]["result"]["content"][0]["text"], got
        # Through a stream: the array is one event.
        st, h2, body = s.raw("POST", batch, hdr)
        assert st == 200 and h2["content-type"].startswith("text/event-stream"), (st, h2)
        data = [json.loads(l[5:]) for l in body.decode().splitlines() if l.startswith("data:")]
        assert len(data) == 1 and sorted(r["id"] for r in data[0]) == [2, 3], data
        # Notifications alone: accepted, no body.
        st, _, body = s.raw("POST", [{"jsonrpc": "2.0", "method": "notifications/initialized"}], hdr)
        assert st == 202 and body == b"", (st, body)
        # A session of another revision: refused with 400, as before.
        hdr, _ = s.session("2025-06-18")
        st, _, body = s.raw("POST", batch, hdr)
        assert st == 400 and json.loads(body)["error"]["code"] == -32600, (st, body)
    finally:
        s.stop()


@test
async def a_batch_whose_requests_are_all_cancelled_still_gets_its_document(tmp):
    # A POST of requests is answered with JSON or a stream, never 202. A
    # batch whose every request the client cancelled had no response from
    # the session, and mcp_cancelled_reply() gave none for a batch: a
    # client that takes JSON alone got 202 and no body. Now the array of
    # the cancelled replies, as a lone request gets its own.
    s = Server("batch_cancelled", tmp, args=["--timeout", "20000"])
    try:
        hdr, _ = s.session("2025-03-26")
        th, got = post_async(s, [sql_call(2, ENDLESS)], dict(hdr, Accept="application/json"))
        time.sleep(0.5)
        assert th.is_alive(), got
        st, _, body = s.raw("POST", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                     "params": {"requestId": 2}}, hdr)
        assert st == 202, (st, body)
        th.join(10)
        assert not th.is_alive(), "the cancelled batch went on"
        st, h, body = got["r"]
        assert st == 200 and h["content-type"] == "application/json", (st, h, body)
        assert json.loads(body) == [{"jsonrpc": "2.0", "id": 2, "error": {
            "code": -32000, "message": "request cancelled: the client sent "
            "notifications/cancelled for it, so its answer is not sent"}}], body
    finally:
        s.stop()


@test
async def initialize_comes_once_over_http(tmp):
    # At /mcp: an initialize without protocolVersion got the latest
    # revision and a session, and a second initialize changed the
    # session's revision.
    s = Server("init_once", tmp)
    try:
        bad = dict(INIT, params={k: v for k, v in INIT["params"].items()
                                 if k != "protocolVersion"})
        st, h, body = s.raw("POST", bad)
        e = json.loads(body)["error"]
        assert e["code"] == -32602 and "protocolVersion" in e["message"], (st, body)
        assert "mcp-session-id" not in h, h
        hdr, _ = s.session("2025-06-18")
        again = dict(INIT, id=2, params=dict(INIT["params"], protocolVersion="2024-11-05"))
        st, _, body = s.raw("POST", again, hdr)
        e = json.loads(body)["error"]
        assert e["code"] == -32600 and "already initialized" in e["message"], (st, body)
        # With 400, as the TypeScript SDK's transport answers it, and as
        # /mcp answers every message it cannot take (-32700, -32600); the
        # body is the JSON-RPC error, under the request's id.
        assert st == 400 and json.loads(body)["id"] == 2, (st, body)
        st, _, body = s.raw("POST", {"jsonrpc": "1.0", "id": 4, "method": "ping"}, hdr)
        r = json.loads(body)
        assert st == 400 and r["id"] == 4 and r["error"]["code"] == -32600, (st, body)
        # The errors of a request it takes stay 200.
        st, _, body = s.raw("POST", {"jsonrpc": "2.0", "id": 5, "method": "nope"}, hdr)
        assert st == 200 and json.loads(body)["error"]["code"] == -32601, (st, body)
        # Still 2025-06-18: its results have structuredContent.
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "execute_sql", "arguments": {"sql": "SELECT 1 AS n"}}}
        st, _, body = s.raw("POST", call, dict(hdr, Accept="application/json"))
        assert json.loads(body)["result"]["structuredContent"]["rows"] == [[1]], body
    finally:
        s.stop()


@test
async def requests_without_a_session_are_told_to_initialize(tmp):
    # A POST without Mcp-Session-Id that is not initialize got 400 with
    # askdb's own error body ({"error": {"code": "bad_request"}}), which a
    # JSON-RPC client cannot read as the answer to its request. It is now
    # the JSON-RPC error of stdio (-32600, send initialize first) under
    # the request's id (null for a notification), still with 400.
    s = Server("no_session", tmp)
    try:
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}}
        for msg, rid in [(call, 2), ({"jsonrpc": "2.0", "id": "p", "method": "ping"}, "p"),
                         ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None)]:
            st, h, body = s.raw("POST", msg)
            assert st == 400 and "mcp-session-id" not in h, (st, h, body)
            r = json.loads(body)
            assert r["jsonrpc"] == "2.0" and r["id"] == rid, r
            assert r["error"]["code"] == -32600, r
            assert r["error"]["message"] == (
                "no session: send initialize first, without Mcp-Session-Id, then "
                "this with the Mcp-Session-Id its answer carries"), r
        st, _, body = s.raw("POST", "not a message")     # a JSON string
        r = json.loads(body)
        assert st == 400 and r["id"] is None and r["error"]["code"] == -32600, (st, body)
    finally:
        s.stop()


@test
async def a_stateless_client_that_closes_a_slow_resource_read_cancels_it(tmp):
    # Revision 2026-07-28 has no notifications/cancelled over HTTP: a
    # client cancels a request by closing its connection, and the server
    # must take that as the cancel of whatever the request does. askdb
    # watched the stream of a tool call only: a resources/read whose first
    # read of the schema waited for a lock on the file went on after its
    # client left, up to --timeout (20 s here). The access log's line for
    # the POST is written once the request has ended.
    s = Server("closed_read", tmp, args=("--timeout", "20000"))
    lock = None
    try:
        lock = sqlite3.connect(s.db, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")
        uri = "askdb://shop/schema"
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
        c.request("POST", "/mcp", body=json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "resources/read",
            "params": {"uri": uri, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}}),
            headers={"Content-Type": "application/json", "Accept": "application/json",
                     "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read",
                     "Mcp-Name": uri})
        time.sleep(0.5)
        c.sock.shutdown(socket.SHUT_RDWR)
        c.close()
        t0 = time.monotonic()
        ended = None
        while ended is None and time.monotonic() - t0 < 5:
            time.sleep(0.05)
            for line in open(s.err, errors="replace"):
                if line.startswith("{") and '"path":"/mcp"' in line:
                    ended = time.monotonic() - t0
        assert ended is not None, "the read went on with its client gone"
        assert ended < 3, "the read went on for %.1f s with its client gone" % ended
    finally:
        if lock:
            lock.execute("ROLLBACK")
            lock.close()
        s.stop()


def main(argv):
    pattern = None
    if len(argv) == 3 and argv[1] == "--filter":
        pattern = re.compile(argv[2])
    elif len(argv) != 1:
        print("usage: mcp_http_test.py [--filter ERE]", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="askdb-mcp-http.")
    passed = failed = 0
    try:
        for fn in TESTS:
            if pattern and not pattern.search(fn.__name__):
                continue
            try:
                anyio.run(fn, tmp)
                print("ok", fn.__name__, flush=True)
                passed += 1
            except BaseException as e:   # ExceptionGroups from task groups too
                if isinstance(e, KeyboardInterrupt):
                    raise
                failed += 1
                why = "".join(traceback.format_exception_only(type(e), e)).strip()
                print("FAIL %s: %s" % (fn.__name__, why.replace("\n", " | ")[:600]), flush=True)
                if os.environ.get("E2E_VERBOSE"):
                    traceback.print_exc()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
