"""A deliberately faulty avatar server for foxbench's shootout lifecycle tests.

Usage: fox.py PORT N MODE
  good         answers the avatar contract with keep-alive
  wrong        answers 302 with a Location outside the template
  silent       never listens (never becomes ready)
  crash        answers correctly, then exits abruptly 0.8 s after its 100th request
  ignore-term  answers correctly and ignores SIGTERM
  forker       leaves a daemon (new session, ignores SIGTERM) behind, then answers correctly
  svg-wrong-colour  answers /<rrggbb>.svg with the fox in another colour
  svg-wrong-type    answers /<rrggbb>.svg as text/html
  svg-malformed     answers /<rrggbb>.svg with the fox cut short (not well-formed XML)

Every other mode answers /<rrggbb>.svg as avatar does: its fox in that colour.
"""
import http.server
import os
import random
import signal
import socketserver
import sys
import threading
import time

port, n, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
FOX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "avatar", "assets", "fox.svg")
with open(FOX) as f:
    fox = f.read()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    served = 0
    lock = threading.Lock()

    def svg(self):
        colour = self.path.split("?")[0][1:-4].lower()
        if mode == "svg-wrong-colour":
            colour = "000000"
        body = fox.replace("{{color}}", "#" + colour).encode()
        if mode == "svg-malformed":
            body = body[:-10]
        self.send_response(200)
        self.send_header("Content-Type", "text/html" if mode == "svg-wrong-type" else "image/svg+xml; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.split("?")[0].endswith(".svg"):
            return self.svg()
        if mode == "crash":
            with Handler.lock:
                Handler.served += 1
                if Handler.served == 100:
                    threading.Timer(0.8, lambda: os._exit(3)).start()
        if mode == "wrong":
            location = "http://wrong.example/"
        else:
            location = "https://avatar.example/Renard-%d.png" % random.randint(1, n)
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 128


if mode == "silent":
    print("starting, but never listening", flush=True)
    while True:
        time.sleep(1)
if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode == "forker":
    if os.fork() == 0:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.closerange(0, 1024)
        while True:
            time.sleep(1)

server = Server(("127.0.0.1", port), Handler)
print("listening on 127.0.0.1:%d, CPUs %s" % (port, sorted(os.sched_getaffinity(0))), flush=True)
server.serve_forever()
