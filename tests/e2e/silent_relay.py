#!/usr/bin/env python3
"""silent_relay.py - a TCP relay that can fall silent, as a server does
whose host went down or whose network was cut.

    python3 tests/e2e/silent_relay.py HOST PORT PORT_FILE [--hold-cancels]

Listens on a free loopback port (written to PORT_FILE once it listens)
and relays each connection to HOST:PORT. On SIGUSR1 it goes silent: the
listener closes (a new connection is refused, as by a host whose server
is gone), the server's side of every relayed connection closes, and the
client's side stays open without another byte - no FIN, no RST, as the
network says nothing of a host that is gone. On SIGUSR2 it goes deaf
instead: the same, but the listener stays and holds each new connection
open without a byte, relaying it nowhere, as a host whose server was
stopped (SIGSTOP) still completes the TCP handshake, or as a firewall or
proxy in front of it that takes connections and forwards none. Either
way PORT_FILE.quiet is made once it went quiet. SIGTERM ends it.

With --hold-cancels it relays every connection but a PostgreSQL cancel
request (its first 16 bytes say so), which it holds open without a byte,
as a proxy does that takes cancel requests and forwards none; it writes
how many it holds to PORT_FILE.held.
"""
import os
import selectors
import signal
import socket
import sys

host, port, port_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
hold_cancels = sys.argv[4:] == ["--hold-cancels"]
CANCEL_REQUEST = (16).to_bytes(4, "big") + (80877102).to_bytes(4, "big")
requested = None   # "refuse" (SIGUSR1) or "hold" (SIGUSR2)
quiet = False


def go_silent(signum, frame):
    global requested
    requested = "refuse" if signum == signal.SIGUSR1 else "hold"


signal.signal(signal.SIGUSR1, go_silent)
signal.signal(signal.SIGUSR2, go_silent)
signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))

listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(16)
sel = selectors.DefaultSelector()
sel.register(listener, selectors.EVENT_READ)
peer = {}          # each relayed socket -> the other end
upstream = set()   # the sockets to the server
muted = []         # clients' sockets kept open after going quiet

with open(port_file + ".tmp", "w") as f:
    f.write(str(listener.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)


def is_cancel(client):
    """Does the connection open with a cancel request? (Its client sends
    first: a cancel request, an SSL request or a startup packet.)"""
    client.settimeout(2)
    try:
        head = client.recv(8, socket.MSG_PEEK | socket.MSG_WAITALL)
    except OSError:
        head = b""
    client.settimeout(None)
    return head == CANCEL_REQUEST


def write_held():
    with open(port_file + ".held.tmp", "w") as f:
        f.write(str(len(muted)))
    os.rename(port_file + ".held.tmp", port_file + ".held")


def close_pair(s):
    other = peer.pop(s)
    peer.pop(other, None)
    for x in (s, other):
        sel.unregister(x)
        upstream.discard(x)
        x.close()


while True:
    if requested and not quiet:
        quiet = True
        if requested == "refuse":
            sel.unregister(listener)
            listener.close()
            listener = None
        for s in list(peer):
            sel.unregister(s)
            if s in upstream:
                s.close()
            else:
                muted.append(s)
        peer.clear()
        upstream.clear()
        open(port_file + ".quiet", "w").close()
    for key, _ in sel.select(0.05):
        s = key.fileobj
        if s is listener:
            client, _ = listener.accept()
            if quiet:
                muted.append(client)
                continue
            if hold_cancels and is_cancel(client):
                muted.append(client)
                write_held()
                continue
            server = socket.create_connection((host, port))
            peer[client], peer[server] = server, client
            upstream.add(server)
            sel.register(client, selectors.EVENT_READ)
            sel.register(server, selectors.EVENT_READ)
            continue
        if s not in peer:
            continue
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if not data:
            close_pair(s)
            continue
        try:
            peer[s].sendall(data)
        except OSError:
            close_pair(s)
