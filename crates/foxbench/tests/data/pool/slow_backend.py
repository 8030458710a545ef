"""A backend that is idle but slow, for the pool diagnosis test (tests/shootout/pool.rs):
GET /hello answers "hello\n" after DELAY_MS, a thread per connection, HTTP/1.1 keep-alive.

    python3 slow_backend.py PORT DELAY_MS
"""

import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DELAY = int(sys.argv[2]) / 1000.0
BODY = b"hello\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        time.sleep(DELAY)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
