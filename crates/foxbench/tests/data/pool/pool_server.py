"""A front end behind a pool of 2 connections to its backend, for the pool diagnosis test
(tests/shootout/pool.rs). A thread per client connection (ThreadingHTTPServer); each
request takes one of 2 keep-alive connections to the backend from a queue (a semaphore
of 2 around the backend call), calls GET /hello, and answers the backend's body. With
more clients than 2, the threads wait on the queue. Nothing in the suite says so: foxbench
must find the pool from the connections to the backend and the threads' wait states.

    python3 pool_server.py PORT BACKEND_URL
"""

import http.client
import queue
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

POOL_SIZE = 2
backend = urlsplit(sys.argv[2])
pool = queue.Queue()
for _ in range(POOL_SIZE):
    pool.put(http.client.HTTPConnection(backend.hostname, backend.port, timeout=10))


def call_backend():
    conn = pool.get()  # the semaphore: blocks while both connections are in use
    try:
        conn.request("GET", "/hello")
        r = conn.getresponse()
        return r.status, r.read()
    except (OSError, http.client.HTTPException):
        conn.close()  # reconnects on its next request
        return 502, b"backend failed\n"
    finally:
        pool.put(conn)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        status, body = call_backend()
        self.send_response(200 if status == 200 else 502)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
