"""A small hello backend for foxbench's services tests (tests/shootout/services.rs).

Usage: backend.py PORT MODE
  good   GET /hello answers "hello <X-Request-Id>\n" and echoes the header; GET /stats
         answers {"requests": N} (the /hello responses sent)
  fails  prints why and exits 1 before listening (a service that fails to start)
  dies   as good, then exits abruptly (status 3) once it has answered 100 /hello requests
"""
import http.server
import json
import os
import socket
import socketserver
import sys
import threading

port, mode = int(sys.argv[1]), sys.argv[2]
if mode == "fails":
    print("backend: cannot open its database (on purpose)", flush=True)
    sys.exit(1)

lock = threading.Lock()
served = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # Headers and body go out in two writes: without this, Nagle and delayed ACKs
        # hold every response 40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def answer(self, status, body, headers=()):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        global served
        path = self.path.split("?")[0]
        if path == "/stats":
            with lock:
                n = served
            self.answer(200, json.dumps({"requests": n}).encode())
        elif path == "/hello":
            rid = self.headers.get("X-Request-Id")
            body = ("hello %s\n" % rid if rid else "hello\n").encode()
            self.answer(200, body, [("X-Request-Id", rid)] if rid else [])
            with lock:
                served += 1
                n = served
            if mode == "dies" and n >= 100:
                os._exit(3)
        else:
            self.answer(404, b"not found\n")

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


Server(("127.0.0.1", port), Handler).serve_forever()
