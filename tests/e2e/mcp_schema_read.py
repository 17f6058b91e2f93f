#!/usr/bin/env python3
"""mcp_schema_read.py - askdb mcp's first schema read beside a statement.

    python3 tests/e2e/mcp_schema_read.py ASKDB DIR URL SLEEP_SQL -- COUNT...

Starts `askdb mcp` on URL (stderr to DIR/err), runs SLEEP_SQL (a
statement that sleeps 15 s on the server) through execute_sql, and while
it runs asks search_objects and the schema resource, the database's first
reads of its schema. Then runs COUNT (a command that prints how many
sessions the reader has on the server), cancels the statement and runs
one more. Prints one JSON line: ms (the two reads), sessions, rows (of
the last statement), rc (askdb mcp's exit), cust and schema (whether the
reads named the customers table). postgres.sh and mariadb.sh check it.
"""
import json
import os
import subprocess
import sys
import time


def main(argv):
    askdb, d, url, sleep_sql = argv[1:5]
    count = argv[argv.index("--") + 1:]
    err = open(os.path.join(d, "err"), "w")
    p = subprocess.Popen([askdb, "mcp", "--timeout", "20000", "--llm-url",
                          "http://127.0.0.1:9/v1", "--model", "test", url],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=err, cwd=d)

    def send(m):
        p.stdin.write((json.dumps(m) + "\n").encode())
        p.stdin.flush()

    def reply(want):
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == want:
                return m

    def call(i, name, args):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": name, "arguments": args}})

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    reply(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    call(2, "execute_sql", {"sql": sleep_sql})
    time.sleep(0.7)
    t0 = time.monotonic()
    call(3, "search_objects", {"pattern": "cust"})
    objs = reply(3)["result"]["structuredContent"]["objects"]
    send({"jsonrpc": "2.0", "id": 4, "method": "resources/read",
          "params": {"uri": "askdb://shop/schema"}})
    text = reply(4)["result"]["contents"][0]["text"]
    ms = int((time.monotonic() - t0) * 1000)
    time.sleep(0.3)   # a closed session leaves the server's list
    n = int(subprocess.run(count, capture_output=True, text=True,
                           check=True).stdout)
    send({"jsonrpc": "2.0", "method": "notifications/cancelled",
          "params": {"requestId": 2}})
    call(5, "execute_sql", {"sql": "SELECT COUNT(*) FROM customers"})
    rows = reply(5)["result"]["structuredContent"]["rows"]
    p.stdin.close()
    p.wait(30)
    print(json.dumps({"ms": ms, "sessions": n, "rows": rows,
                      "rc": p.returncode,
                      "cust": {"database": "shop", "table": "customers"}
                      in objs,
                      "schema": "CREATE TABLE customers" in text}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
