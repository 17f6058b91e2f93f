#!/usr/bin/env python3
"""tls_stall.py - a MariaDB server that stalls the TLS handshake.

    python3 tests/e2e/tls_stall.py PORT_FILE

Listens on a free loopback port (written to PORT_FILE once it listens).
Each connection gets a server's greeting that offers TLS (CLIENT_SSL);
what the client sends then (its SSL request, its TLS ClientHello) is
read and never answered, as by a server or a middlebox that hangs in
the handshake. A client waits in the TLS library's own read there, not
in a wait of the MariaDB library's non-blocking calls. SIGTERM ends it.
"""
import os
import socket
import struct
import sys
import threading

# CLIENT_LONG_PASSWORD | CLIENT_CONNECT_WITH_DB | CLIENT_PROTOCOL_41 |
# CLIENT_SSL | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION |
# CLIENT_PLUGIN_AUTH
CAPS = 0x1 | 0x8 | 0x200 | 0x800 | 0x2000 | 0x8000 | 0x80000


def greeting():
    """Protocol 10's initial handshake packet, numbered 0."""
    body = bytes([10]) + b"10.11.0-MariaDB-stall\0" + struct.pack("<I", 1)
    body += b"12345678\0" + struct.pack("<H", CAPS & 0xFFFF)
    body += bytes([45]) + struct.pack("<H", 2) + struct.pack("<H", CAPS >> 16)
    body += bytes([21]) + bytes(10) + b"9abcdefghijk\0"
    body += b"mysql_native_password\0"
    return struct.pack("<I", len(body))[:3] + b"\0" + body


def serve(conn, held):
    held.append(conn)
    try:
        conn.sendall(greeting())
        while conn.recv(4096):
            pass
    except OSError:
        pass


def main():
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(16)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(lst.getsockname()[1]))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    held = []
    while True:
        conn, _ = lst.accept()
        threading.Thread(target=serve, args=(conn, held), daemon=True).start()


if __name__ == "__main__":
    main()
