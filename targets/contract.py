#!/usr/bin/env python3
"""The avatar contract checker shared by every targets/<name>/test.sh.

    python3 targets/contract.py NAME [options]

Reads NAME's [[target]] entry from suites/avatar.toml and runs it the way
foxbench does: the build with `sh -c` in the target dir into a fresh OUT, the
start as `sh -c 'exec START'` in the target dir in its own process group, on a
free loopback port with N=5, SIGTERM to the group at the end. Then the common
checks (302 + Location, all N images, keep-alive or one-request-per-connection,
pipelining, Connection: close, garbage, SIGTERM, no process left), each printed
as "ok   NAME" or "FAIL NAME: WHY". A target's own checks live in
targets/<name>/checks.py, which may define

    extra(server)   run after the common checks, before SIGTERM
    after(run)      run after SIGTERM (e.g. second instances, other arguments)

using the helpers below. `--h2c` adds the HTTP/2 checks of contract_h2c.py (h2c with
prior knowledge beside HTTP/1.1 on the same port); `--h2c-start CMD` runs them on a
second, h2c-only instance (nginx's h2c row). The last line is "N passed, N failed"; the exit
status is non-zero if anything failed. The target's commands come from foxbench
itself (`foxbench shootout --list --json`, through targets/harness.py, which also
holds the report and the process helpers). Standard library only (Python 3.11).
"""
import argparse
import http.client
import importlib.util
import os
import resource
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

import harness
from harness import Failed, Group, need, free_port, proc_table  # noqa: F401 - checks.py use them

TARGETS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TARGETS)
SUITE = os.path.join(REPO, "suites", "avatar.toml")
LOCATION = r"https://avatar\.example/Renard-(\d+)\.png"
GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
CLOSE = b"\r\nconnection: close\r\n"  # compared with a lowercased head: names have no case


def connect(port, timeout=5):
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def drain(s):
    """Everything until EOF (a reset counts as EOF)."""
    buf = b""
    try:
        while chunk := s.recv(65536):
            buf += chunk
    except ConnectionResetError:
        pass
    return buf


def exchange(port, data, timeout=5):
    s = connect(port, timeout)
    try:
        s.sendall(data)
        return drain(s)
    finally:
        s.close()


def read_until(s, buf, marker, count):
    while buf.count(marker) < count:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf


class Server(Group):
    """One started instance: its process group, port and log."""

    def __init__(self, run, n, args=(), env=None, port=None, start=None):
        self.run, self.n = run, n
        self.port = port or free_port()
        self.sessions = []   # extra sessions whose processes belong to this run (php-fpm)
        self.hold = []       # sockets kept open until after SIGTERM
        t = run.commands(port=self.port, images=n)
        cmd = t["start"] if start is None else harness.fill_as(start, t)
        if args:
            cmd += " " + " ".join(shlex.quote(str(a)) for a in args)
        e = harness.environ(t)
        e.update(env or {})
        super().__init__(cmd, log=os.path.join(run.tmp, f"server-{self.port}.log"), cwd=run.dir, env=e,
                         shell=True)
        run.servers.append(self)

    def wait_ready(self, timeout=10):
        return self.wait_listening(self.port, timeout)

    def log_text(self):
        return self.output(2000)

    def leftovers(self):
        sessions = {pid for pid, p in proc_table().items() if p.state != "Z" and p.sid in self.sessions}
        return sorted(set(super().leftovers()) | sessions)

    def wait_gone(self, timeout):
        return bool(harness.wait_for(lambda: not self.leftovers(), timeout, 0.02))

    def term(self, timeout):
        """SIGTERM to the group; (status as a shell reports it, seconds, leftover pids)."""
        rc, took, left = self.stop(timeout)
        for s in self.hold:
            s.close()
        self.hold.clear()
        return rc, took, left

    def kill(self):
        for s in self.hold:
            s.close()
        super().kill()


class Run(harness.Report):
    def __init__(self, name, opts):
        super().__init__()
        self.name, self.opts = name, opts
        self.tmp = tempfile.mkdtemp(prefix=f"contract-{name}-")
        self.out = os.path.join(self.tmp, "out")
        os.mkdir(self.out)
        self.servers = []
        try:
            # A plain entry first; a parameterized one runs with its first row.
            self.target = self.commands()
        except harness.SetupError as e:
            shutil.rmtree(self.tmp, ignore_errors=True)
            sys.exit(f"contract.py: {e}")
        self.dir = self.target["dir"]

    def commands(self, port=8080, images=5):
        """The target's entry of the suite, its commands filled by foxbench for OUT, PORT and N."""
        return harness.target(SUITE, self.name, {"out": self.out, "port": port, "images": images})

    def build(self):
        t = self.target
        if t["missing"]:
            return self.report(False, "build", f"missing {', '.join(t['missing'])} (install {t.get('install')})")
        before = snapshot(self.dir)
        r = subprocess.run(["sh", "-c", t["build"] or "true"], cwd=self.dir, env=harness.environ(t),
                           capture_output=True, text=True)
        if r.returncode != 0:
            return self.report(False, "build", (r.stdout + r.stderr)[-2000:])
        after = snapshot(self.dir)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        return self.report(not changed, "build (nothing written to the source dir)",
                           f"changed in {os.path.relpath(self.dir, REPO)}: {changed[:10]}")

    def start(self, n=5, args=(), env=None, name=None, start=None):
        """An instance with N images; START replaces the suite row's start command."""
        srv = Server(self, n, args, env, start=start)
        ok = srv.wait_ready()
        if name:
            self.report(ok, name.format(port=srv.port), srv.log_text())
        return srv if ok else None

    def cleanup(self):
        for srv in self.servers:
            srv.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


def snapshot(d):
    snap = {}
    for root, dirs, files in os.walk(d):
        for f in files + dirs:
            p = os.path.join(root, f)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            snap[os.path.relpath(p, d)] = (st.st_mtime_ns, st.st_size)
    return snap


# ---- the checks ---------------------------------------------------------------------

def first_response(srv, headers=(), reason="Found", content_length=True, path="/some/path?x=1"):
    """One request: 302 (with REASON), Location in 1..N, empty body, the given header lines."""
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    heads = f"{r.status} {r.reason} {r.getheaders()} {body[:80]!r}"
    need(r.status == 302 and (not reason or r.reason == reason), heads)
    m = re.fullmatch(LOCATION, r.getheader("Location") or "")
    need(m and 1 <= int(m.group(1)) <= srv.n, heads)
    need(body == b"", heads)
    if content_length:
        need(r.getheader("Content-Length") == "0", heads)
    for h in headers:
        k, v = h.split(":", 1)
        need(r.getheader(k.strip()) == v.strip(), f"no {h!r}: {heads}")


def any_method(srv):
    for method, body in (("POST", "x=1"), ("DELETE", None)):
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        c.request(method, "/some/path?q=1", body=body)
        r = c.getresponse()
        data = r.read()
        c.close()
        need(r.status == 302 and re.fullmatch(LOCATION, r.getheader("Location") or "") and data == b"",
             f"{method}: {r.status} {r.getheaders()} {data[:80]!r}")


def count_keepalive(srv, total, path="/any/path?x=1", pattern=LOCATION):
    """TOTAL requests on one http.client connection: {n: count}; fails on a reconnect."""
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    c.connect()
    name = c.sock.getsockname()
    seen = {}
    for i in range(total):
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        m = re.fullmatch(pattern, r.getheader("Location") or "")
        need(r.status == 302 and m and body == b"", f"request {i}: {r.status} {r.getheaders()} {body[:80]!r}")
        need(c.sock is not None and c.sock.getsockname() == name, f"reconnected after {i} requests")
        k = int(m.group(1))
        seen[k] = seen.get(k, 0) + 1
    c.close()
    return seen


def count_closing(srv, total, exact=False, pattern=LOCATION):
    """TOTAL requests, one connection each, asking for keep-alive: one response, then EOF."""
    seen = {}
    for _ in range(total):
        buf = exchange(srv.port, b"GET /any/path?x=1 HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
        if exact:
            m = re.fullmatch(rb"HTTP/1\.1 302 Found\r\nLocation: " + pattern.encode() +
                             rb"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", buf)
        else:
            m = re.search(rb"\r\nLocation: " + pattern.encode() + rb"\r\n", buf)
            m = m if buf.count(b"HTTP/1.1 302") == 1 and CLOSE in buf.lower() else None
        need(m, f"bad response {buf!r}")
        k = int(m.group(1))
        seen[k] = seen.get(k, 0) + 1
    return seen


def fmt(seen):
    return " ".join(f"{k}:{v}" for k, v in sorted(seen.items()))


def all_images(srv, closes=False, exact=False):
    seen = count_closing(srv, 200, exact) if closes else count_keepalive(srv, 200)
    need(sorted(seen) == list(range(1, srv.n + 1)), fmt(seen))
    return fmt(seen)


def keepalive(srv):
    count_keepalive(srv, 50, path="/")


def one_per_connection(srv):
    """Keep-alive asked for, Connection: close given; a second request gets nothing."""
    s = connect(srv.port)
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
    buf = drain(s)
    try:
        s.sendall(GET)
        more = s.recv(4096)
    except OSError:
        more = b""
    s.close()
    need(buf.count(b" 302 ") == 1 and CLOSE in buf.lower() and more == b"", f"{buf!r} {more!r}")


def pipelining(srv):
    """3 heads in one write, then a head split over 3 writes: 4 responses, in order."""
    s = connect(srv.port)
    s.sendall(GET * 3)
    buf = read_until(s, b"", b" 302 ", 3)
    for part in (b"GET / HTTP/1.1\r\nHo", b"st: x\r\n\r", b"\n"):
        s.sendall(part)
        time.sleep(0.05)
    buf = read_until(s, buf, b" 302 ", 4)
    s.close()
    need(buf.count(b" 302 ") == 4, f"got {buf.count(b' 302 ')} responses")


def slow_reader(srv, total):
    """TOTAL pipelined requests, far more than socket buffers hold, read late."""
    s = connect(srv.port, 30)
    sender = threading.Thread(target=s.sendall, args=(GET * total,), daemon=True)
    sender.start()
    time.sleep(0.5)
    got, tail = 0, b""
    while got < total:
        d = s.recv(1 << 20)
        if not d:
            break
        d = tail + d
        got += d.count(b"\r\n\r\n")
        tail = d[d.rfind(b"\r\n\r\n") + 4:]
    sender.join(10)
    s.close()
    need(got == total, f"got {got} responses")


def connection_close(srv, pipelined=True, header=True, drops_rest=False):
    """Connection: close (split over writes, any case): one response (saying Connection:
    close unless not HEADER), then EOF. With pipelining, 3 requests + a close one:
    4 responses, then EOF. DROPS_REST: a request after the close one is not answered."""
    for req in (b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                b"GET / HTTP/1.1\r\nHost: x\r\nconnection: Close\r\n\r\n"):
        s = connect(srv.port)
        for part in (req[:18], req[18:-1], req[-1:]):
            s.sendall(part)
            time.sleep(0.05)
        buf = drain(s)
        s.close()
        need(buf.count(b" 302 ") == 1 and (not header or CLOSE in buf.lower()),
             f"{req!r} -> {buf[:160]!r}")
    if pipelined:
        buf = exchange(srv.port, GET * 3 + b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        need(buf.count(b" 302 ") == 4 and (not header or buf.lower().count(b"connection: close") == 1),
             f"pipelined: {buf!r}")
    if drops_rest:
        buf = exchange(srv.port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + GET)
        need(buf.count(b" 302 ") == 1 and CLOSE in buf.lower(), f"close + GET: {buf!r}")


def http10(srv, close_header=True):
    """HTTP/1.0 without keep-alive (what ab sends): one response, Connection: close, EOF."""
    buf = exchange(srv.port, b"GET / HTTP/1.0\r\n\r\n")
    need(buf.count(b" 302 ") == 1 and (not close_header or CLOSE in buf.lower()), repr(buf))


def http10_keepalive(srv):
    """HTTP/1.0 with Connection: keep-alive (what ab -k sends) stays open."""
    s = connect(srv.port)
    for i in range(3):
        s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\nConnection: Keep-Alive\r\n\r\n")
        buf = s.recv(4096)
        need(b" 302 " in buf and b"\r\nconnection: keep-alive\r\n" in buf.lower(), f"{i}: {buf!r}")
    s.close()


def garbage_cases(huge_head=20000):
    rnd = random.Random(7)
    return [
        os.urandom(4096),
        b"\x00" * 9000,                                   # over an 8 KiB head cap
        b"\r\n\r\n" * 5000,                               # 5000 empty heads
        b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 3000,       # never-ending head
        b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * huge_head,
        b"GET / HTTP/1.1\r\nX: " + b"y" * 20000 + b"\r\n\r\n",
        bytes(rnd.randrange(256) for _ in range(20000)),
        b"\xff\xfe" * 10 + b"\r\n\r\n",
        b"HELLO\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET / HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
        b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"GET /\x7f\x00 HTTP/1.1\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\nshort",
    ]


def garbage(srv, huge_head=20000, no_302=False, strict=False, crlf_shutdown=True, no_host=False):
    """Garbage, oversized heads and resets do not kill it; a later request is answered.
    no_302: garbage never gets a 302. strict: the server closes each garbage connection
    itself (no half-close from us, except for the CRLF flood if crlf_shutdown) and
    answers nothing but the one good request in front of the garbage."""
    cases = garbage_cases(huge_head)
    # The cases a strict server must close by itself (node-http, python-asyncio).
    strict_cases = {cases[i] for i in (0, 1, 2, 4, 6, 7)} | {GET + b"HELLO\r\n\r\n" + GET}
    if strict:
        cases.append(GET + b"HELLO\r\n\r\n" + GET)
    for data in cases:
        tight = strict and data in strict_cases
        s = connect(srv.port)
        buf = b""
        try:
            s.sendall(data)
            if not tight or (crlf_shutdown and data.startswith(b"\r\n")):
                s.shutdown(socket.SHUT_WR)
            while chunk := s.recv(65536):
                buf += chunk
        except socket.timeout:
            need(not tight, f"{data[:20]!r}: not closed")
        except OSError:
            pass  # a reset is an acceptable answer to garbage
        s.close()
        if no_302 and data in cases[:9]:  # the non-HTTP ones
            need(b" 302 " not in buf, f"garbage got a 302: {data[:20]!r}")
        if tight:
            want = 1 if data.startswith(GET) else 0
            need(buf.count(b" 302 ") == want, f"{data[:20]!r}: {buf[:200]!r}")
    for pipelined in (1, 200):  # resets with unread responses queued
        for _ in range(20):
            s = connect(srv.port)
            s.sendall(GET * pipelined)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()
    s = connect(srv.port)
    s.sendall(b"GET / HTTP/1.1\r\n\r\n" if no_host else GET)
    buf = s.recv(4096)
    s.close()
    need(b" 302 " in buf, f"later request: {buf!r}")
    need(srv.alive(), "the server exited")


def template(run, closes=False):
    """A custom TEMPLATE argument with {n} twice, N=3."""
    srv = run.start(3, ["http://h.test/{n}/fox-{n}.gif"])
    need(srv, "startup with a template: " + run.servers[-1].log_text())
    locs = set()
    try:
        for _ in range(10):
            buf = exchange(srv.port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            m = re.search(rb"\r\n(?i:location): (http://h\.test/([1-3])/fox-\2\.gif)\r\n", buf)
            need(m, repr(buf))
            locs.add(m.group(1).decode())
    finally:
        srv.kill()
    return " ".join(sorted(locs))


def refuses(run, values):
    """The start command exits non-zero for each N in VALUES."""
    for n in values:
        srv = Server(run, n)
        try:
            rc = srv.proc.wait(10)
        except subprocess.TimeoutExpired:
            rc = None
        srv.kill()
        need(rc not in (None, 0), f"N={n}: {'still running' if rc is None else 'exit 0'}")


def head_deadline(srv, dribble=False, low=0.5, high=2.0):
    """A silent (and a dribbling) client holds a sequential server for the head deadline only."""
    silent = connect(srv.port)
    if dribble:
        dribbler = connect(srv.port)

        def go():
            try:
                for b in b"GET / HTTP/1.1\r\nHost: x\r\n" * 10:
                    dribbler.send(bytes([b]))
                    time.sleep(0.05)
            except OSError:
                pass
        threading.Thread(target=go, daemon=True).start()
    time.sleep(0.1 if dribble else 0.05)
    t0 = time.monotonic()
    s = connect(srv.port)
    s.sendall(GET)
    buf = s.recv(4096)
    waited = time.monotonic() - t0
    s.close()
    closed = silent.recv(1) == b""
    silent.close()
    detail = f"next client served after {waited:.2f} s, silent one closed: {closed}"
    need(b" 302 " in buf and closed and low < waited < high, detail)
    return detail


def stuck_clients(srv, count, timeout=2):
    """COUNT clients stuck mid-head; another client is answered within TIMEOUT s.
    Returns "served" or "blocked" (the caller decides whether blocked fails)."""
    stuck = [connect(srv.port) for _ in range(count)]
    for s in stuck:
        s.sendall(b"GET / HTTP/1.1\r\nHo")
    other = connect(srv.port, timeout)
    other.sendall(GET)
    try:
        res = "served" if b" 302 " in other.recv(4096) else "bad"
    except socket.timeout:
        res = "blocked"
    for s in stuck:
        s.close()
    if res == "blocked":  # EOF frees the server; it must answer then
        other.settimeout(5)
        other.recv(4096)
    other.close()
    return res


def sigterm(srv, timeout=1.0, statuses=(0,), idle=True):
    """SIGTERM to the process group (with an idle keep-alive connection open): the server
    exits with a status in STATUSES (None: any) within TIMEOUT s and no process is left."""
    if idle:
        s = connect(srv.port)
        s.sendall(GET)
        try:
            s.recv(4096)
        except OSError:
            pass
        srv.hold.append(s)
    before = len(srv.leftovers())
    rc, took, left = srv.term(timeout + 1)
    need(rc is not None, f"still running after {took:.2f} s")
    need(statuses is None or rc in statuses, f"status {rc} after {took * 1000:.0f} ms")
    need(took <= timeout, f"took {took * 1000:.0f} ms (status {rc})")
    need(not left, f"left running: {left}")
    return f"status {rc}, all {before} processes gone in {took * 1000:.0f} ms"


# ---- the SVG routes (avatar's /<rrggbb>.svg and /random.svg) ------------------------

FOX = os.path.join(REPO, "crates", "avatar", "assets", "fox.svg")
SVG_NS = "{http://www.w3.org/2000/svg}"


def get(conn, path):
    """One GET on a kept-alive http.client connection: (status, headers dict lowercased, body)."""
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def svg_body(srv, conn, path, color):
    """PATH answers 200 image/svg+xml: well-formed SVG, avatar's fox byte for byte in COLOR."""
    status, h, body = get(conn, path)
    need(status == 200, f"{path}: {status} {h} {body[:80]!r}")
    need(h.get("content-type", "").split(";")[0].strip() == "image/svg+xml", f"{path}: Content-Type {h}")
    need(h.get("content-length") == str(len(body)), f"{path}: Content-Length {h.get('content-length')} for {len(body)} bytes")
    root = ET.fromstring(body)
    need(root.tag == SVG_NS + "svg", f"{path}: root element {root.tag}")
    fills = {e.get("fill") for e in root.iter() if e.get("fill")}
    need("#" + color in fills, f"{path}: no fill=\"#{color}\" in {sorted(fills)}")
    with open(FOX, "rb") as f:
        want = f.read().replace(b"{{color}}", b"#" + color.encode())
    need(body == want, f"{path}: body differs from crates/avatar/assets/fox.svg in #{color}")


def svg_routes(srv):
    """avatar's SVG routes: /<rrggbb>.svg (any case, any query) is the fox in that colour,
    /random.svg a 302 to a random one, other *.svg 404, and /ff8800.SVG the image redirect."""
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    rnd = random.Random()
    for _ in range(20):  # random colours on one keep-alive connection
        color = f"{rnd.randrange(1 << 24):06x}"
        svg_body(srv, c, f"/{color}.svg", color)
    svg_body(srv, c, "/A8dB7D.svg", "a8db7d")
    svg_body(srv, c, "/ff8800.svg?size=64", "ff8800")
    seen = set()
    for _ in range(20):
        status, h, body = get(c, "/random.svg")
        m = re.fullmatch(r"/([0-9a-f]{6})\.svg", h.get("location", ""))
        need(status == 302 and m and body == b"", f"/random.svg: {status} {h} {body[:80]!r}")
        seen.add(m.group(1))
    need(len(seen) > 15, f"/random.svg gave only {len(seen)} colours in 20: {sorted(seen)}")
    svg_body(srv, c, f"/{min(seen)}.svg", min(seen))
    for path in ("/ff880.svg", "/ff88000.svg", "/gg8800.svg", "/x/ff8800.svg", "/ff8800.svgz.svg", "/.svg"):
        status, h, body = get(c, path)
        need(status == 404, f"{path}: {status}, want 404")
    for path in ("/ff8800.SVG", "/ff8800.svgz"):
        status, h, body = get(c, path)
        need(status == 302 and re.fullmatch(LOCATION, h.get("location", "")), f"{path}: {status} {h}")
    need(c.sock is not None, "the connection was closed")
    c.close()
    return f"{len(seen)} random colours"


# ---- main -----------------------------------------------------------------------------

def syntax(run, cmd):
    """Nothing to build: a syntax check (writing nothing next to the source)."""
    def check():
        r = subprocess.run(cmd, cwd=run.dir, capture_output=True, text=True)
        need(r.returncode == 0, r.stderr[-2000:])
    run.check("parses", check)


def many_connections(srv, count):
    """COUNT open keep-alive connections, all answered; they stay open through SIGTERM."""
    def check():
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4096)), hard))
        for _ in range(count):
            s = connect(srv.port)
            s.sendall(GET)
            srv.hold.append(s)
        answered = sum(b" 302 " in s.recv(4096) for s in srv.hold[-count:])
        need(answered == count, f"{answered} answered")
    srv.run.check(f"{count} concurrent keep-alive connections answered (held open through SIGTERM)", check)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name")
    p.add_argument("--closes", action="store_true", help="sequential: one response per connection")
    p.add_argument("--exact", action="store_true", help="with --closes: byte-exact responses")
    p.add_argument("--no-pipelining", action="store_true")
    p.add_argument("--slow-reader", type=int, default=0, metavar="COUNT")
    p.add_argument("--header", action="append", default=[], help="header line the 302 must carry")
    p.add_argument("--any-reason", action="store_true", help="302 with any reason phrase")
    p.add_argument("--no-content-length", action="store_true")
    p.add_argument("--listening-line", action="store_true", help="prints 'listening on 127.0.0.1:PORT'")
    p.add_argument("--any-method", action="store_true")
    p.add_argument("--http10", action="store_true")
    p.add_argument("--no-close-header", action="store_true",
                   help="the answer to Connection: close need not say Connection: close")
    p.add_argument("--close-drops-rest", action="store_true",
                   help="a request pipelined after a Connection: close one is not answered")
    p.add_argument("--http10-no-close-header", action="store_true")
    p.add_argument("--http10-keepalive", action="store_true")
    p.add_argument("--huge-head", type=int, default=20000, metavar="LINES")
    p.add_argument("--garbage-no-302", action="store_true")
    p.add_argument("--strict-garbage", action="store_true")
    p.add_argument("--no-crlf-shutdown", action="store_true")
    p.add_argument("--no-host-ok", action="store_true", help="HTTP/1.1 without Host is answered")
    p.add_argument("--template", action="store_true", help="check a TEMPLATE argument")
    p.add_argument("--refuses", default="", metavar="N,N", help="N values the start must refuse")
    p.add_argument("--h2c", action="store_true",
                   help="h2c prior knowledge on the same port as HTTP/1.1 (contract_h2c.py)")
    p.add_argument("--h2c-upgrade", action="store_true",
                   help="with --h2c: Upgrade: h2c switches to HTTP/2 (without: it is ignored)")
    p.add_argument("--h2c-svg", action="store_true", help="with --h2c: the SVG route over h2c too")
    p.add_argument("--h2c-start", metavar="CMD",
                   help="h2c only, on a second instance started with CMD (the start of the "
                        "target's h2c row); HTTP/1.1 must get no HTTP/1 answer there")
    # The shootout's own bound: SIGKILL follows SIGTERM after the suite's stop_grace, 2 s
    # unless a suite says otherwise. A 1 s bound failed rust-std, which dies of SIGTERM's
    # default action, at 1,314 ms on a machine at load average 20: the scheduler's time,
    # not the target's.
    p.add_argument("--term-timeout", type=float, default=2.0)
    p.add_argument("--term-status", default="0", help="comma list, or 'any'")
    return p.parse_args(argv)


def load_checks(name):
    path = os.path.join(TARGETS, name, "checks.py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location(f"checks_{name.replace('-', '_')}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


sys.modules.setdefault("contract", sys.modules[__name__])  # for contract_h2c and checks.py


def main(argv=None):
    o = parse(argv if argv is not None else sys.argv[1:])
    run = Run(o.name, o)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        extras = load_checks(o.name)
        if run.build():
            srv = run.start(5, name="starts and listens on 127.0.0.1:{port}")
            if srv:
                body(run, srv, o, extras)
    except KeyboardInterrupt:
        run.report(False, "interrupted")
    finally:
        run.cleanup()
    print(f"{run.passed} passed, {run.failed} failed", flush=True)
    return 1 if run.failed else 0


def body(run, srv, o, extras):
    c = run.check
    if o.listening_line:
        def listening():
            line, deadline = f"listening on 127.0.0.1:{srv.port}", time.monotonic() + 2
            while line not in srv.log_text() and time.monotonic() < deadline:
                time.sleep(0.02)
            need(line in srv.log_text(), srv.log_text())
        c("prints 'listening on 127.0.0.1:PORT'", listening)
    hdrs = list(o.header) + (["Connection: close"] if o.closes else [])
    c("302 with Location in 1..N, empty body" + ("" if o.no_content_length else ", Content-Length: 0")
      + "".join(f", {h}" for h in hdrs), first_response, srv, hdrs,
      None if o.any_reason else "Found", not o.no_content_length)
    if o.any_method:
        c("POST and DELETE to another path get the 302", any_method, srv)
    if o.closes:
        c("all 5 images over 200 connections, each one response then EOF", all_images, srv, True, o.exact)
        c("keep-alive asked for: one response, Connection: close, then EOF", one_per_connection, srv)
    else:
        c("all 5 images over 200 requests on one keep-alive connection", all_images, srv)
        c("keep-alive: 50 requests on one http.client connection", keepalive, srv)
    if not o.no_pipelining:
        c("3 pipelined requests in one write get 3 responses, split head gets 1", pipelining, srv)
    if o.slow_reader:
        c(f"{o.slow_reader} pipelined requests to a slow reader all answered", slow_reader, srv, o.slow_reader)
    c("Connection: close gets one response, then EOF" + ("" if o.no_pipelining else "; also pipelined"),
      connection_close, srv, not o.no_pipelining, not o.no_close_header, o.close_drops_rest)
    if o.http10:
        c("HTTP/1.0 gets one response" + ("" if o.http10_no_close_header else " with Connection: close")
          + ", then EOF", http10, srv, not o.http10_no_close_header)
    if o.http10_keepalive:
        c("HTTP/1.0 with Connection: keep-alive stays open", http10_keepalive, srv)
    c("garbage, oversized heads and resets do not kill it", garbage, srv, o.huge_head,
      o.garbage_no_302, o.strict_garbage, not o.no_crlf_shutdown, o.no_host_ok)
    if extras and hasattr(extras, "extra"):
        extras.extra(srv)
    if o.h2c:
        import contract_h2c
        contract_h2c.checks(srv, switches=o.h2c_upgrade, with_svg=o.h2c_svg)
    statuses = None if o.term_status == "any" else tuple(int(x) for x in o.term_status.split(","))
    c(f"SIGTERM to the process group: exits within {o.term_timeout:g} s, nothing left",
      sigterm, srv, o.term_timeout, statuses)
    if o.template:
        c("TEMPLATE argument with {n} twice", template, run)
    if o.refuses:
        c(f"N in {o.refuses} is refused", refuses, run, [int(x) for x in o.refuses.split(",")])
    if o.h2c_start:
        import contract_h2c
        contract_h2c.only(run, o.h2c_start)
    if extras and hasattr(extras, "after"):
        extras.after(run)


if __name__ == "__main__":
    sys.exit(main())
