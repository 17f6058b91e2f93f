#!/usr/bin/env python3
"""bench/mcp_figures.py - the two figures of `askdb mcp` in the README.

    python bench/mcp_figures.py [--askdb build/askdb] [--db examples/shop.db] [--calls 1000]

(run it with the interpreter of scripts/mcp_venv.sh, which has the
tokenizer.)

1. The size of the tools/list reply, which an assistant reads into every
   conversation: bytes, and tokens with OpenAI's cl100k_base (bpe-openai,
   which has it built in; bytes/4 for comparison).
2. What execute_sql adds beyond the query: N calls of a trivial statement,
   one at a time over stdio; each call's round trip (write the line, read
   the reply) minus the query's own exec_ms. p50 and p99, with a ping's
   round trip (the protocol and pipes alone) beside it.
"""
import argparse
import json
import os
import subprocess
import time


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--askdb", default="build/askdb")
    ap.add_argument("--db", default="examples/shop.db")
    ap.add_argument("--calls", type=int, default=1000)
    a = ap.parse_args()
    p = subprocess.Popen([a.askdb, "mcp", a.db], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    n = [0]

    def call(method, params=None):
        n[0] += 1
        msg = {"jsonrpc": "2.0", "id": n[0], "method": method}
        if params is not None:
            msg["params"] = params
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
        line = p.stdout.readline()
        return json.loads(line), line

    call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "figures", "version": "1"}})
    reply, line = call("tools/list")
    tools = json.dumps(reply["result"], separators=(",", ":"))
    try:
        import bpe_openai
        tokens = len(bpe_openai.get_encoding("cl100k_base").encode(tools))
        how = "cl100k_base (bpe-openai)"
    except ImportError:
        tokens, how = None, "no tokenizer installed"
    print("tools/list: %d tools, %d bytes, %s tokens %s, bytes/4 = %d"
          % (len(reply["result"]["tools"]), len(tools), tokens, how,
             len(tools) // 4))

    args = {"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}
    for _ in range(50):                      # warm up
        call("tools/call", args)
    over, ping = [], []
    for _ in range(a.calls):
        t0 = time.perf_counter()
        reply, _ = call("tools/call", args)
        rtt = (time.perf_counter() - t0) * 1000
        if "result" not in reply:
            raise SystemExit("unexpected reply: %r" % reply)
        over.append(rtt - reply["result"]["structuredContent"]["exec_ms"])
        t0 = time.perf_counter()
        call("ping")
        ping.append((time.perf_counter() - t0) * 1000)
    p.stdin.close()
    p.wait()
    print("execute_sql overhead beyond exec_ms over %d calls: p50 %.3f ms, "
          "p99 %.3f ms (ping round trip: p50 %.3f ms, p99 %.3f ms)"
          % (a.calls, pct(over, 50), pct(over, 99), pct(ping, 50),
             pct(ping, 99)))


if __name__ == "__main__":
    main()
