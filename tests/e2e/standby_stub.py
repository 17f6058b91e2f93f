#!/usr/bin/env python3
"""standby_stub.py - a listener that answers each connection as a
PostgreSQL hot standby does at its start, and runs nothing.

    python3 tests/e2e/standby_stub.py PORT_FILE

Listens on a free loopback port (written to PORT_FILE once it listens).
Each connection is told no to TLS and to GSSAPI encryption, let in
without a password (AuthenticationOk) and told the server's settings: a
standby's (in_hot_standby and default_transaction_read_only on,
server_version 15.0), then ReadyForQuery. That is all libpq needs to
turn the server down for target_session_attrs=read-write ("session is
read-only") or primary ("server is in hot standby mode"), without a
query, as it does a real standby's. Whatever the client sends next (its
Terminate, or a statement, which a client that took the stub for a
server would send) closes the connection. SIGTERM ends it.
"""
import os
import socket
import struct
import sys
import threading

SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104


def recv_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def message(kind, body):
    return kind + struct.pack("!I", len(body) + 4) + body


def setting(name, value):
    return message(b"S", name.encode() + b"\0" + value.encode() + b"\0")


def serve(conn):
    with conn:
        while True:
            head = recv_exact(conn, 8)
            if head is None:
                return
            length, code = struct.unpack("!II", head)
            if length == 8 and code in (SSL_REQUEST, GSSENC_REQUEST):
                conn.sendall(b"N")
                continue
            if not 8 <= length <= 10000 or \
                    recv_exact(conn, length - 8) is None:
                return
            break
        conn.sendall(message(b"R", struct.pack("!I", 0))
                     + setting("server_version", "15.0")
                     + setting("server_encoding", "UTF8")
                     + setting("client_encoding", "UTF8")
                     + setting("standard_conforming_strings", "on")
                     + setting("integer_datetimes", "on")
                     + setting("DateStyle", "ISO, MDY")
                     + setting("in_hot_standby", "on")
                     + setting("default_transaction_read_only", "on")
                     + message(b"K", struct.pack("!II", os.getpid(), 0))
                     + message(b"Z", b"I"))
        conn.recv(1)


port_file = sys.argv[1]
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
with open(port_file + ".tmp", "w") as f:
    f.write("%d\n" % listener.getsockname()[1])
os.rename(port_file + ".tmp", port_file)
while True:
    client, _ = listener.accept()
    threading.Thread(target=serve, args=(client,), daemon=True).start()
