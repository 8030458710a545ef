"""A deliberately faulty avatar server for foxbench's shootout lifecycle tests.

Usage: fox.py PORT N MODE
  good         answers the avatar contract with keep-alive
  wrong        answers 302 with a Location outside the template
  silent       never listens (never becomes ready)
  crash        answers correctly, then exits abruptly 0.8 s after its 100th request
  ignore-term  answers correctly and ignores SIGTERM
  forker       leaves a daemon (new session, ignores SIGTERM) behind, then answers correctly
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


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    served = 0
    lock = threading.Lock()

    def do_GET(self):
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
