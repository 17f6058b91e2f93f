#!/usr/bin/env python3
"""silent_relay.py - a TCP relay that can fall silent, as a server does
whose host went down or whose network was cut.

    python3 tests/e2e/silent_relay.py HOST PORT PORT_FILE

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
"""
import os
import selectors
import signal
import socket
import sys

host, port, port_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
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
