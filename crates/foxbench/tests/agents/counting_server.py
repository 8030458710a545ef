"""A counting HTTP/1.1 server for the distributed-load tests: the server's own counts.

Usage: counting_server.py ADDRESS PORT
Answers every request head with `200`, `Content-Length: 2`, `ok`, keeping the connection
alive; prints `listening` once bound, and on SIGTERM prints one JSON line
{"ok": responses sent, "accepts": connections accepted} and exits.
"""

import json
import selectors
import signal
import socket
import sys

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"


def main():
    addr, port = sys.argv[1], int(sys.argv[2])
    counts = {"ok": 0, "accepts": 0}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    sel = selectors.DefaultSelector()
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((addr, port))
    lsock.listen(4096)
    lsock.setblocking(False)
    sel.register(lsock, selectors.EVENT_READ, None)
    print("listening", flush=True)
    buffers = {}
    while not stop:
        for key, _ in sel.select(timeout=0.1):
            if key.data is None:
                while True:
                    try:
                        conn, _ = lsock.accept()
                    except BlockingIOError:
                        break
                    counts["accepts"] += 1
                    conn.setblocking(False)
                    buffers[conn] = b""
                    sel.register(conn, selectors.EVENT_READ, "conn")
                continue
            conn = key.fileobj
            try:
                data = conn.recv(65536)
            except (ConnectionResetError, BlockingIOError):
                data = b""
            if not data:
                sel.unregister(conn)
                buffers.pop(conn, None)
                conn.close()
                continue
            buf = buffers[conn] + data
            n = buf.count(b"\r\n\r\n")
            if n:
                buf = buf[buf.rfind(b"\r\n\r\n") + 4 :]
                try:
                    conn.sendall(RESPONSE * n)
                    counts["ok"] += n
                except OSError:
                    pass
            buffers[conn] = buf
    print(json.dumps(counts), flush=True)


main()
