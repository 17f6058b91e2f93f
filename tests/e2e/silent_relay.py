#!/usr/bin/env python3
"""silent_relay.py - a TCP relay that can fall silent, as a server does
whose host went down or whose network was cut.

    python3 tests/e2e/silent_relay.py HOST PORT PORT_FILE [--hold-cancels]
                                      [--delay-new MS] [--slow-new MS]
                                      [--log FILE] [--listen ADDR[:PORT]]
                                      [--deaf-on TEXT]

Listens on a free loopback port (written to PORT_FILE once it listens)
and relays each connection to HOST:PORT. With --listen it listens on
ADDR instead of 127.0.0.1 (another loopback address: 127.0.0.2), and
on PORT if given, so that two relays can take one port on two addresses,
as two servers do behind one name. On SIGUSR1 it goes silent: the
listener closes (a new connection is refused, as by a host whose server
is gone), the server's side of every relayed connection closes, and the
client's side stays open without another byte - no FIN, no RST, as the
network says nothing of a host that is gone. On SIGUSR2 it goes deaf
instead: the same, but the listener stays and holds each new connection
open without a byte, relaying it nowhere, as a host whose server was
stopped (SIGSTOP) still completes the TCP handshake, or as a firewall or
proxy in front of it that takes connections and forwards none. On
SIGHUP it goes mute: the same as deaf, but each new connection is
relayed through the MySQL handshake (the server's greeting, the login
and its answer) and held without a byte from the client's first command
on (its first packet numbered 0), as a server does whose threads for
statements are all stuck, or a proxy that logs in and forwards nothing
after. On SIGWINCH it stops taking connections and fills its accept
queue, so that the kernel drops each new connection's SYN and its
connect times out, while the connections it relays go on: a server that
runs but is overloaded, or a lossy link to it. Any way PORT_FILE.quiet
is made once it went quiet. SIGTERM ends it.

With --hold-cancels it relays every connection but a PostgreSQL cancel
request (its first 16 bytes say so), which it holds open without a byte,
as a proxy does that takes cancel requests and forwards none; it writes
how many it holds to PORT_FILE.held.

With --delay-new MS it relays each connection but the first MS late (it
takes it at once, and connects on to the server MS later, so the
server's greeting comes that much late), as a server does that is slow
to take connections but runs.

With --slow-new MS it relays each connection but the first with every
chunk the server sends MS late (the greeting, the login's answer, each
statement's), as a server does that answers each step slowly but runs,
or a slow link to it.

With --deaf-on TEXT it goes deaf (as on SIGUSR2) the moment a client
sends bytes that hold TEXT, which it never relays: the network went
silent as the client sent them, and the client waits for an answer.

On SIGALRM it resets every connection it relays (an RST to the client,
the server's side closed) and goes on relaying new ones, as a NAT or a
firewall does that dropped its state for a connection; PORT_FILE.reset
is made once it did. The client hears of it at its next send, which
fails.

With --log FILE it appends what each client sends, a line per MySQL
packet up to its first command and then per command: "N login CAPS"
(its handshake response's capability flags, hex), "N cmd HEX" (the
command's first byte; for COM_QUERY the first 60 bytes of its text, for
COM_SET_OPTION its option: "N cmd 1b 1" is
MYSQL_OPTION_MULTI_STATEMENTS_OFF), N counting connections from 1.
"""
import os
import selectors
import signal
import socket
import struct
import sys
import time

host, port, port_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
opts = sys.argv[4:]
hold_cancels = "--hold-cancels" in opts
delay_new = (int(opts[opts.index("--delay-new") + 1]) / 1000
             if "--delay-new" in opts else 0)
slow_new = (int(opts[opts.index("--slow-new") + 1]) / 1000
            if "--slow-new" in opts else 0)
deaf_on = (opts[opts.index("--deaf-on") + 1].encode()
           if "--deaf-on" in opts else None)
accepted = 0       # connections taken so far
delayed = []       # (when, client): connections to relay from when on
slow = set()       # slow_new: the server's sockets whose chunks wait
late = []          # slow_new: (when, server socket, chunk) not yet sent
CANCEL_REQUEST = (16).to_bytes(4, "big") + (80877102).to_bytes(4, "big")
requested = None   # "refuse" (SIGUSR1), "hold" (SIGUSR2), "mute" (SIGHUP),
                   # "full" (SIGWINCH)
quiet = False
reset = False      # SIGALRM: reset the connections relayed
log_file = opts[opts.index("--log") + 1] if "--log" in opts else None
listen = (opts[opts.index("--listen") + 1]
          if "--listen" in opts else "127.0.0.1").split(":")
conn_no = {}       # --log: each client's socket -> its number
pending = {}       # --log: each client's socket -> bytes of an
                   # unfinished packet


def go_silent(signum, frame):
    global requested
    requested = {signal.SIGUSR1: "refuse", signal.SIGUSR2: "hold",
                 signal.SIGHUP: "mute", signal.SIGWINCH: "full"}[signum]


signal.signal(signal.SIGUSR1, go_silent)
signal.signal(signal.SIGWINCH, go_silent)
signal.signal(signal.SIGUSR2, go_silent)
signal.signal(signal.SIGHUP, go_silent)
signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))


def want_reset(signum, frame):
    global reset
    reset = True


signal.signal(signal.SIGALRM, want_reset)

listener = socket.socket()
listener.bind((listen[0], int(listen[1]) if len(listen) > 1 else 0))
listener.listen(16)
sel = selectors.DefaultSelector()
sel.register(listener, selectors.EVENT_READ)
peer = {}          # each relayed socket -> the other end
upstream = set()   # the sockets to the server
muted = []         # clients' sockets kept open after going quiet
login = {}         # mute: each new client's socket -> its bytes not yet
                   # relayed (an unfinished MySQL packet)
fillers = []       # full: the connections that fill the accept queue

with open(port_file + ".tmp", "w") as f:
    f.write(str(listener.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)


def relay(client):
    """Relay client to the server from now on. A server that is not there
    (stopped by the test) refuses it: the client's connection is reset, as
    a refused connect would be, and the relay goes on (it died of the
    error, with a traceback in the test's output, and refused every later
    connection for good)."""
    try:
        server = socket.create_connection((host, port))
    except OSError:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                          struct.pack("ii", 1, 0))
        client.close()
        return
    peer[client], peer[server] = server, client
    upstream.add(server)
    if slow_new and accepted > 1:
        slow.add(server)
    sel.register(client, selectors.EVENT_READ)
    sel.register(server, selectors.EVENT_READ)
    if quiet:
        login[client] = b""
    if log_file:
        conn_no[client] = accepted
        pending[client] = b""


def log_packets(client, data):
    """--log: a line for each whole packet client sent with data."""
    buf = pending[client] + data
    with open(log_file, "a") as f:
        while len(buf) >= 4:
            size = int.from_bytes(buf[:3], "little")
            if len(buf) < 4 + size:
                break
            seq, body = buf[3], buf[4:4 + size]
            buf = buf[4 + size:]
            if seq == 1 and len(body) >= 4:
                f.write("%d login %x\n" % (conn_no[client],
                        int.from_bytes(body[:4], "little")))
            elif seq == 0 and body:
                arg = ""
                if body[0] == 0x1b:
                    arg = " %d" % int.from_bytes(body[1:3], "little")
                elif body[0] == 0x03:
                    arg = " " + body[1:61].decode("utf-8", "replace")
                f.write("%d cmd %02x%s\n" % (conn_no[client], body[0], arg))
    pending[client] = buf


def reset_all():
    """RST each client relayed; close its server's side."""
    for s in list(peer):
        if s in upstream or s not in peer:
            continue
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
        close_pair(s)
    open(port_file + ".reset", "w").close()


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


def fill_queue():
    """Take no connection from now on, with an accept queue of one that
    is full: Linux drops the SYN of any connection past it, which
    retries until its connect times out."""
    sel.unregister(listener)
    listener.listen(0)
    for _ in range(3):
        f = socket.socket()
        f.setblocking(False)
        f.connect_ex(listener.getsockname())
        fillers.append(f)
    time.sleep(0.2)


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
        slow.discard(x)
        login.pop(x, None)
        conn_no.pop(x, None)
        pending.pop(x, None)
        x.close()


def mute_pair(client):
    """Hold client without another byte; close its server's side."""
    server = peer.pop(client)
    peer.pop(server)
    for x in (client, server):
        sel.unregister(x)
    upstream.discard(server)
    server.close()
    login.pop(client)
    muted.append(client)


def login_part(client, data):
    """The whole MySQL packets of what client sent (after the bytes left
    over before) up to its first command; None once that came."""
    buf = login[client] + data
    out = b""
    while len(buf) >= 4:
        size = int.from_bytes(buf[:3], "little")
        if buf[3] == 0:
            return None
        if len(buf) < 4 + size:
            break
        out, buf = out + buf[:4 + size], buf[4 + size:]
    login[client] = buf
    return out


while True:
    if reset:
        reset = False
        reset_all()
    if requested == "full" and not quiet:
        quiet = True
        fill_queue()
        open(port_file + ".quiet", "w").close()
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
    while delayed and delayed[0][0] <= time.monotonic() and not quiet:
        relay(delayed.pop(0)[1])
    while late and late[0][0] <= time.monotonic():
        _, server, data = late.pop(0)
        if server in peer:
            try:
                peer[server].sendall(data)
            except OSError:
                close_pair(server)
    for key, _ in sel.select(0.05):
        s = key.fileobj
        if s is listener:
            client, _ = listener.accept()
            accepted += 1
            if quiet and requested != "mute":
                muted.append(client)
                continue
            if hold_cancels and is_cancel(client):
                muted.append(client)
                write_held()
                continue
            if delay_new and accepted > 1 and not quiet:
                delayed.append((time.monotonic() + delay_new, client))
                continue
            relay(client)
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
        if deaf_on and s not in upstream and deaf_on in data:
            requested = "hold"
            continue
        if s in pending:
            log_packets(s, data)
        if s in login:
            data = login_part(s, data)
            if data is None:
                mute_pair(s)
                continue
        if s in slow:
            late.append((time.monotonic() + slow_new, s, data))
            continue
        try:
            peer[s].sendall(data)
        except OSError:
            close_pair(s)
