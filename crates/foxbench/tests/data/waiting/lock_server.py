"""A server that holds one lock around a 5 ms sleep per request: every request waits its
turn, so throughput is flat at ~200 req/s whatever the connections, while both CPUs idle.

A thread per connection (ThreadingHTTPServer), HTTP/1.1 keep-alive. foxbench's diagnosis
must find the lock by itself: nothing in the suite says what this server does.

    python3 lock_server.py PORT
"""

import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
BODY = b"waited\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        with LOCK:
            time.sleep(0.005)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def main():
    port = int(sys.argv[1])
    Server(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
