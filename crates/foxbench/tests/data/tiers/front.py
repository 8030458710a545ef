"""A small front end for foxbench's services tests: GET / calls the backend's /hello once.

Usage: front.py PORT BACKEND_URL MODE [THREADS]
  good    forwards X-Request-Id to BACKEND_URL/hello (a keep-alive connection per thread)
          and answers the backend's body and X-Request-Id
  lazy    never calls the backend: answers "hello\n" without the id
"""
import http.client
import http.server
import socket
import socketserver
import sys
import threading
import urllib.parse

port, backend, mode = int(sys.argv[1]), urllib.parse.urlparse(sys.argv[2]), sys.argv[3]
local = threading.local()


def call(rid):
    for attempt in range(2):
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = http.client.HTTPConnection(backend.hostname, backend.port, timeout=5)
        try:
            conn.request("GET", "/hello", headers={"X-Request-Id": rid} if rid else {})
            r = conn.getresponse()
            return r.status, r.read(), r.getheader("X-Request-Id")
        except (OSError, http.client.HTTPException):
            conn.close()
            local.conn = None
            if attempt:
                raise


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # Headers and body go out in two writes: without this, Nagle and delayed ACKs
        # hold every response 40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self):
        rid = self.headers.get("X-Request-Id")
        echo = None
        if mode == "lazy":
            status, body = 200, b"hello\n"
        else:
            try:
                status, body, echo = call(rid)
            except (OSError, http.client.HTTPException):
                status, body = 502, b"backend failed\n"
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        if echo:
            self.send_header("X-Request-Id", echo)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


Server(("127.0.0.1", port), Handler).serve_forever()
