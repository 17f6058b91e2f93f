#!/usr/bin/env python3
"""tests/e2e/mcp2_test.py - askdb with the MCP Python SDK 2.x client.

    ASKDB=build/asan/askdb FAKE_LLM=build/asan/fake_llm \
        ~/.cache/askdb/venv-mcp2/bin/python tests/e2e/mcp2_test.py

(tests/e2e/mcp.sh installs the pinned SDK, scripts/mcp2_venv.sh, and runs
this.) The 2.x client is of the 2026-07-28 era: it first sends
server/discover, and when the server answers with an error that is not a
modern one (askdb: -32601 on stdio, 400 over HTTP) it falls back to
initialize, where askdb gives it 2025-11-25. Each test drives `askdb mcp`
over stdio and askdb serve's /mcp with the scripted model
(tests/fake_llm): the negotiated revision, tools, a tool error, progress,
a resource and its error. mcp_test.py and mcp_http_test.py do the rest
with the 1.x SDK, which this one cannot share a process with. Output: "ok
NAME" or "FAIL NAME: reason" per test, then "N passed, M failed".
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

    def stdio(self, errlog):
        """`askdb mcp` as a transport for Client, its stderr to errlog."""
        params = StdioServerParameters(command=ASKDB, args=["mcp", *self.model, SHOP_DB],
                                       env=ENV)
        return stdio_client(params, errlog=errlog)

    def http(self):
        err = os.path.join(self.dir, "serve.err")
        self.errs.append(err)
        self.serve = subprocess.Popen([ASKDB, "serve", "--listen", "127.0.0.1:0", "--db",
                                       "shop=" + SHOP_DB, *self.model],
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
        if self.serve:
            self.serve.send_signal(signal.SIGTERM)
            self.serve.wait(20)
        self.llm.terminate()
        self.llm.wait(10)
        for p in self.errs:
            m = SANITIZER.search(open(p, errors="replace").read())
            assert not m, "sanitizer report in %s: %s" % (p, m.group(0))


async def exercise(c):
    """What every transport must give the 2.x client."""
    # The probe failed, the handshake gave the newest revision askdb speaks.
    assert c.session.discover_result is None and c.session.initialize_result
    assert c.session.protocol_version == "2025-11-25", c.session.protocol_version
    assert c.session.server_info.name == "askdb", c.session.server_info
    assert c.session.server_info.description, c.session.server_info
    tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == {"list_databases", "search_objects", "execute_sql", "ask",
                          "explain_sql"}, tools.keys()
    r = await c.call_tool("execute_sql", {"sql": SQL})
    assert not r.is_error and r.structured_content["rows"] == ROWS, r
    r = await c.call_tool("execute_sql", {"sql": 5})
    assert r.is_error and "'sql' is needed" in r.content[0].text, r
    seen = []

    async def progress(p, total, message):
        seen.append(message)

    r = await c.call_tool("ask", {"question": "First two customers?"}, progress_callback=progress)
    assert not r.is_error and r.structured_content["sql"] == SQL, r
    assert r.structured_content["rows"] == ROWS, r.structured_content
    assert "execute: 2 rows" in seen and seen[-1] == "answer: ok", seen
    r = await c.read_resource("askdb://shop/table/categories")
    assert json.loads(r.contents[0].text)["name"] == "categories", r
    try:
        await c.read_resource("askdb://shop/table/nope")
        raise AssertionError("no error for an unknown table")
    except MCPError as e:
        assert e.code == -32002 and "no table 'nope'" in str(e), e


TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


@test
async def sdk2_client_falls_back_and_works_over_stdio(s):
    errpath = os.path.join(s.dir, "stdio.err")
    s.errs.append(errpath)
    with open(errpath, "w") as err:
        async with Client(s.stdio(err)) as c:
            await exercise(c)


@test
async def sdk2_client_falls_back_and_works_over_http(s):
    async with Client(s.http()) as c:
        await exercise(c)


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
