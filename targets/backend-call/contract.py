#!/usr/bin/env python3
"""The backend-call front-end contract checker shared by targets/backend-call/*/test.sh.

    python3 targets/backend-call/contract.py NAME [--row ROW]... [--bound [ROW=]N]...
        [--keep-out]

Takes the [[target]] NAME of suites/backend.toml as foxbench fills it (`foxbench shootout
suites/backend.toml --list --json`, through targets/harness.py): its rows (one per
parameter value, and per [[target]] of that name), what it requires, its environment, and
its build and start commands, filled by foxbench with {out} (a fresh directory for build
outputs, removed at the end; with --keep-out one kept under $TMPDIR between runs, so a
second run does not rebuild), {port} (the front end's port) and {service.hello.url} (the
backend's URL, like http://127.0.0.1:41234). No checker fills a placeholder itself.

Builds the real hello backend (targets/backend-call/hello, cached under $TMPDIR by the hash
of its sources), starts it on a free loopback port, builds the front end with `sh -c BUILD`
in the target's directory, and, for every row (or each --row, by its listed name such as
`java-blocking[threads=200,nodelay=true]`), starts a fresh backend and the row's START as
`sh -c 'exec START'` there, in its own process group. A target whose requirements are
missing is skipped with one line ("0 passed, 0 failed").

Then it checks the front-end contract, each printed as "ok   NAME" or "FAIL NAME: WHY":
the body and X-Request-Id of GET /, the forwarded query (?delay_ms=50 takes >= 50 ms),
GET / without an id, one backend call per request and keep-alive to the backend (from the
backend's /stats), keep-alive to the client, 50 concurrent clients, on a row whose name
has nodelay=true no Nagle stall (200 sequential keep-alive calls within 4 s; a ~40 ms stall
each would take 8 s), 502 (or another 5xx)
and no crash when the backend is gone, SIGTERM within 5 s and no process left behind.
The front end starts with its soft RLIMIT_NOFILE lowered to 1,024 (the usual default) and
must raise it to the hard limit itself: 10,000 clients need more descriptors than that.
With --bound N (every row) or --bound ROW=N (one row, by its listed name): 1.5 x N clients
send a call the backend holds for 10 s, and exactly N connections to the backend must be
open meanwhile (counted in /proc/net/tcp): the front end's pool is bounded at N, and the
check had enough calls in flight to see it.
The last line is "N passed, N failed"; the exit status is 1 if anything failed, 2 for a
usage or setup error. The report, the process groups, the ports and the listing are
targets/harness.py's.
Standard library only (Python 3.11).
"""
import argparse
import fcntl
import hashlib
import http.client
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402 - targets/harness.py, one directory up
from harness import Failed, Group, SetupError, free_port, need  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
HELLO = os.path.join(HERE, "hello")
SUITE = "suites/backend.toml"
READY_S = 60.0  # a loaded 2-core machine starting a JVM or a venv's aiohttp
STOP_S = 5.0


def hello_sources_hash():
    h = hashlib.sha256()
    files = ["Cargo.toml", "Cargo.lock"]
    for root, _, names in os.walk(os.path.join(HELLO, "src")):
        files += [os.path.relpath(os.path.join(root, n), HELLO) for n in names]
    for rel in sorted(files):
        h.update(rel.encode() + b"\0")
        with open(os.path.join(HELLO, rel), "rb") as f:
            h.update(f.read() + b"\0")
    return h.hexdigest()[:16]


def build_backend():
    """Path of the hello-backend binary, built once per source version into a shared cache
    (so the front ends' test.sh runs do not build it once each); a lock serialises builders."""
    cache = os.path.join(tempfile.gettempdir(), "foxbench-hello-backend-" + hello_sources_hash())
    binary = os.path.join(cache, "hello-backend")
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, "lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.access(binary, os.X_OK):
            return binary
        if shutil.which("cargo") is None:
            raise SetupError("cargo not found: install Rust (https://rustup.rs) to build the hello backend")
        cmd = ["cargo", "build", "--quiet", "--release", "--locked", "--target-dir", os.path.join(cache, "cargo")]
        r = subprocess.run(cmd, cwd=HELLO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise SetupError(f"building the hello backend failed ({' '.join(cmd)} in {HELLO}):\n{r.stdout[-3000:]}")
        shutil.copy(os.path.join(cache, "cargo", "release", "hello-backend"), binary + ".new")
        os.replace(binary + ".new", binary)
        return binary


class Process(Group):
    """A process started in its own group, named in failure reports."""

    def __init__(self, name, argv, cwd=None, env=None, shell=False, nofile_soft=None):
        self.name = name
        super().__init__(argv, cwd=cwd, env=env, shell=shell, nofile_soft=nofile_soft)

    def wait_listening(self, port, deadline_s=READY_S):
        if super().wait_listening(port, deadline_s):
            return
        if self.proc.poll() is not None:
            raise Failed(f"{self.name} exited with status {self.proc.returncode} before listening on "
                         f"{port}; its output:\n{self.output(2000)}")
        raise Failed(f"{self.name} not listening on {port} after {deadline_s:.0f} s; its output:\n{self.output(2000)}")


def get(port, path="/", request_id=None, conn=None, timeout=10):
    """(status, headers dict with lowercased names, body bytes) of one GET."""
    own = conn is None
    if own:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"X-Request-Id": request_id} if request_id is not None else {}
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        body = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body
    finally:
        if own:
            conn.close()


def backend_stats(port):
    import json
    status, _, body = get(port, "/stats")
    need(status == 200, f"backend /stats answered {status}")
    return json.loads(body)


def new_id():
    return "req-%016x" % random.getrandbits(64)


def expect_hello(status, headers, body, request_id):
    need(status == 200, f"status {status}, body {body[:200]!r}")
    want = b"hello\n" if request_id is None else f"hello {request_id}\n".encode()
    need(body == want, f"body {body[:200]!r}, expected {want!r}")
    ctype = headers.get("content-type", "")
    need(ctype.split(";")[0].strip() == "text/plain", f"Content-Type {ctype!r}, expected text/plain")
    if request_id is not None:
        echoed = headers.get("x-request-id")
        need(echoed == request_id, f"X-Request-Id {echoed!r}, expected {request_id!r}")


class Run(harness.Report):
    def check(self, name, fn, *args):
        """Runs fn; Failed, OSError and HTTP errors fail it (a bug in a check is not caught)."""
        try:
            fn(*args)
        except Failed as e:
            return self.report(False, name, str(e))
        except (OSError, http.client.HTTPException) as e:
            return self.report(False, name, f"{type(e).__name__}: {e}")
        return self.report(True, name)


# ---- the checks ----

def check_hello(fport, _bport):
    rid = new_id()
    expect_hello(*get(fport, "/", rid), rid)


def check_delay(fport, _bport):
    rid = new_id()
    t0 = time.monotonic()
    result = get(fport, "/?delay_ms=50", rid)
    took_ms = (time.monotonic() - t0) * 1000
    expect_hello(*result, rid)
    need(took_ms >= 50, f"answered in {took_ms:.1f} ms: the query ?delay_ms=50 did not reach the backend")


def check_no_id(fport, _bport):
    expect_hello(*get(fport, "/"), None)


def check_sequential(fport, bport):
    """200 requests on one client connection: 200 backend requests, few backend connections,
    and the client connection kept alive."""
    before = backend_stats(bport)
    conn = http.client.HTTPConnection("127.0.0.1", fport, timeout=10)
    local = None
    try:
        for i in range(200):
            rid = new_id()
            expect_hello(*get(fport, "/", rid, conn=conn), rid)
            name = conn.sock.getsockname() if conn.sock else None
            need(name is not None, f"the front end closed the client connection after request {i + 1}")
            need(local in (None, name), f"the client connection was not kept alive (request {i + 1} on a new one)")
            local = name
    finally:
        conn.close()
    after = backend_stats(bport)
    calls = after["requests"] - before["requests"]
    conns = after["connections"] - before["connections"]
    need(calls == 200, f"200 front-end requests made {calls} backend requests, expected exactly 200")
    need(conns <= 10, f"200 sequential requests opened {conns} backend connections: no keep-alive pool to the backend")


# The Nagle check's bound: 200 sequential keep-alive calls in at most 4 s. A front end
# that stalls on Nagle waits for the client's delayed ACK (>= 40 ms) on every response:
# 200 x 40 ms = 8 s at least; without the stall each call takes a few ms, well under 20 ms
# even on a loaded machine.
NAGLE_CALLS = 200
NAGLE_BOUND_S = 4.0


def nodelay_row(row):
    """True for a row that sets TCP_NODELAY (`nodelay=true` in its listed name): the Nagle
    check runs on it."""
    return "nodelay=true" in row


def check_no_nagle(fport, _bport):
    """NAGLE_CALLS sequential keep-alive calls within NAGLE_BOUND_S: no Nagle stall."""
    conn = http.client.HTTPConnection("127.0.0.1", fport, timeout=10)
    try:
        start = time.monotonic()
        for _ in range(NAGLE_CALLS):
            rid = new_id()
            expect_hello(*get(fport, "/", rid, conn=conn), rid)
        took = time.monotonic() - start
    finally:
        conn.close()
    need(took <= NAGLE_BOUND_S,
         f"{NAGLE_CALLS} sequential keep-alive calls took {took:.1f} s, {took / NAGLE_CALLS * 1e3:.0f} ms each: "
         f"a Nagle stall (~40 ms each) though the row sets nodelay=true; set TCP_NODELAY on the front end's sockets")


def check_concurrent(fport, bport):
    clients, per_client = 50, 10
    before = backend_stats(bport)
    errors = []

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", fport, timeout=30)
        try:
            for _ in range(per_client):
                rid = new_id()
                expect_hello(*get(fport, "/", rid, conn=conn), rid)
        except (Failed, OSError, http.client.HTTPException) as e:
            errors.append(f"{type(e).__name__}: {e}")
        finally:
            conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    need(not any(t.is_alive() for t in threads), "clients still waiting after 60 s")
    need(not errors, f"{len(errors)} of {clients} clients failed, first: {errors[:1]}")
    calls = backend_stats(bport)["requests"] - before["requests"]
    need(calls == clients * per_client, f"{clients * per_client} requests made {calls} backend requests")


# The soft RLIMIT_NOFILE a front end starts with (a common default); it must raise it itself.
START_NOFILE = 1024


def start_nofile():
    """The soft limit to start a front end with, or None when the hard limit leaves no room."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return START_NOFILE if hard == resource.RLIM_INFINITY or hard > START_NOFILE else None


def check_nofile(front):
    if start_nofile() is None:
        print(f"note: hard RLIMIT_NOFILE is <= {START_NOFILE}: nothing to raise, not checked", flush=True)
        return
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    with open(f"/proc/{front.proc.pid}/limits") as f:
        line = next(l for l in f if l.startswith("Max open files"))
    soft = line.split()[3]
    if hard == resource.RLIM_INFINITY:
        ok, want = soft == "unlimited", "unlimited"
    else:
        # Go's runtime raises it to hard - 1 on purpose (syscall/rlimit.go: it then notices
        # another process changing it with prlimit): that counts as raised.
        ok, want = soft.isdigit() and int(soft) >= hard - 1, str(hard)
    need(ok, f"started with a soft RLIMIT_NOFILE of {START_NOFILE}, it is still {soft}, "
             f"not the hard limit {want}: raise it at start (setrlimit)")


BOUND_DELAY_MS = 10_000


def open_connections(port):
    """Established TCP connections whose local port is `port` (the backend's side of each
    front-end connection), from /proc/net/tcp: connections open now, not ever accepted."""
    n = 0
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            local, state = line.split()[1], line.split()[3]
            n += state == "01" and int(local.rpartition(":")[2], 16) == port
    return n


def check_bound(fport, bport, bound):
    """1.5 x bound clients each send one call the backend holds for BOUND_DELAY_MS; while they
    wait, the connections open to the backend must rise to the bound and no further."""
    clients = bound * 3 // 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < clients + 100:
        need(hard == resource.RLIM_INFINITY or hard >= clients + 100,
             f"this check needs {clients + 100} descriptors; the hard RLIMIT_NOFILE is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    request = b"GET /?delay_ms=%d HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: bound\r\n\r\n" % BOUND_DELAY_MS
    socks = []
    try:
        start = time.monotonic()
        for _ in range(clients):
            s = socket.create_connection(("127.0.0.1", fport), timeout=10)
            s.sendall(request)
            socks.append(s)
        # Until the first held call ends (less a margin), the count may only grow to the bound.
        # A client pool replaces a connection it is closing (Go's Transport retires an idle one
        # asynchronously) a moment before the backend's side of the old one leaves ESTABLISHED,
        # so a snapshot of /proc/net/tcp may see a replacement and its predecessor at once:
        # 1% (at least 2) over the bound is that race, an unbounded pool is far beyond it (Go's
        # default Transport held 1,437 for a bound of 1,000).
        slack = max(2, bound // 100)
        deadline = start + BOUND_DELAY_MS / 1000 * 0.8
        peak, reached = 0, None
        while time.monotonic() < deadline:
            peak = max(peak, open_connections(bport))
            need(peak <= bound + slack, f"{clients} calls in flight held {peak} backend connections open, "
                                        f"over the bound {bound} (+{slack} for connections being replaced)")
            if peak >= bound and reached is None:
                reached = time.monotonic()
            if reached is not None and time.monotonic() - reached > 1.0:
                break
            time.sleep(0.05)
        need(peak >= bound, f"{clients} calls in flight held only {peak} backend connections in "
                            f"{BOUND_DELAY_MS * 0.8 / 1000:.0f} s: the bound {bound} was never reached")
    finally:
        for s in socks:
            s.close()


def check_backend_gone(fport, front, backend):
    backend.kill()
    for i in range(2):
        status, _, body = get(fport, "/", new_id(), timeout=15)
        need(500 <= status <= 599, f"request {i + 1} with the backend gone answered {status} {body[:100]!r}, expected 502")
        need(front.proc.poll() is None, f"the front end exited ({front.proc.returncode}) when the backend went away")
    if status != 502:  # any 5xx passes; the contract asks for 502
        print(f"note: the front end answers {status} (not 502) when the backend is gone", flush=True)


def check_sigterm(front):
    os.killpg(front.pgid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_S
    while time.monotonic() < deadline and front.proc.poll() is None:
        time.sleep(0.02)
    need(front.proc.poll() is not None, f"still running {STOP_S:.0f} s after SIGTERM")
    while time.monotonic() < deadline and front.group_alive():
        time.sleep(0.02)
    need(not front.group_alive(), "the front end exited but left processes in its group")


def rows(name, fill):
    """NAME's rows in the suite, their commands filled by foxbench with FILL."""
    return [t for t in harness.listing(SUITE, name, fill)["targets"] if t["base"] == name]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 usage="contract.py NAME [--row ROW]... [--bound [ROW=]N]... [--keep-out]")
    ap.add_argument("name", help=f"the front end: a [[target]] of {SUITE}")
    ap.add_argument("--row", action="append", metavar="ROW",
                    help="check only this row, by its listed name (repeatable); every row without it")
    ap.add_argument("--bound", action="append", default=[], metavar="[ROW=]N",
                    help="the front end opens at most N backend connections (in ROW only, with ROW=)")
    ap.add_argument("--keep-out", action="store_true",
                    help="keep {out} under $TMPDIR between runs, so that a second run does not rebuild")
    args = ap.parse_args(argv)
    bounds = {}
    for b in args.bound:
        row, _, n = b.rpartition("=") if "=" in b else (None, "", b)
        if not n.isdigit() or int(n) < 1:
            print(f"contract.py: --bound {b!r} is not [ROW=]N with N a positive integer", file=sys.stderr)
            return 2
        bounds[row] = int(n)
    if args.keep_out:
        out = os.path.join(tempfile.gettempdir(), f"foxbench-backend-call-{args.name}-out")
        os.makedirs(out, exist_ok=True)
    else:
        out = tempfile.mkdtemp(prefix=f"backend-call-{args.name}-")
    run = Run()
    try:
        try:
            listed = rows(args.name, {"out": out})
        except SetupError as e:
            print(f"contract.py: {e}", file=sys.stderr)
            return 2
        if not listed:
            print(f"contract.py: no [[target]] {args.name!r} in {SUITE}", file=sys.stderr)
            return 2
        names = [t["name"] for t in listed]
        unknown = [r for r in (args.row or []) + [r for r in bounds if r is not None] if r not in names]
        if unknown:
            print(f"contract.py: no row {unknown[0]!r} of {args.name}: its rows are {', '.join(names)}",
                  file=sys.stderr)
            return 2
        missing = sorted({m for t in listed for m in t["missing"]})
        if missing:
            print(f"skip {args.name}: {', '.join(missing)} not found (install {listed[0].get('install')})")
            print("0 passed, 0 failed")
            return 0
        try:
            hello = build_backend()
        except SetupError as e:
            print(f"contract.py: {e}", file=sys.stderr)
            return 2
        # One build serves every row: the rows differ only in their start commands.
        first = listed[0]
        r = subprocess.run(["sh", "-c", first["build"]], cwd=first["dir"], env=harness.environ(first),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if not run.check("build", need, r.returncode == 0,
                         f"`{first['build']}` exited {r.returncode}:\n{r.stdout[-3000:]}"):
            return run.summary()
        chosen = [n for n in names if args.row is None or n in args.row]
        for name in chosen:
            label = "" if len(names) == 1 else f"[{name}] "
            check_front_end(run, args.name, name, out, hello, label, bounds.get(name, bounds.get(None)))
        return run.summary()
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        return run.summary() or 1
    finally:
        if not args.keep_out:
            shutil.rmtree(out, ignore_errors=True)


def check_front_end(run, base, row, out, hello, label, bound=None):
    """Starts a backend and the front end's ROW as foxbench fills it, and runs every check,
    each name prefixed with label; both are killed (their groups) at the end."""
    backend = front = None
    try:
        bport, fport = free_port(), free_port()
        backend = Process("hello-backend", [hello, str(bport), "0"])
        if not run.check(label + "backend starts", backend.wait_listening, bport):
            return
        fill = {"out": out, "port": fport, "service.hello.url": f"http://127.0.0.1:{bport}"}
        entry = next(t for t in rows(base, fill) if t["name"] == row)
        print(f"start: {entry['start']}", flush=True)
        front = Process(base, entry["start"], cwd=entry["dir"], env=harness.environ(entry), shell=True,
                        nofile_soft=start_nofile())
        if not run.check(label + "starts and listens", front.wait_listening, fport):
            return
        failed = run.failed
        run.check(label + "raises its soft RLIMIT_NOFILE to the hard limit", check_nofile, front)
        run.check(label + "GET / -> hello <id> with X-Request-Id", check_hello, fport, bport)
        run.check(label + "query forwarded: ?delay_ms=50 takes >= 50 ms", check_delay, fport, bport)
        run.check(label + "GET / without X-Request-Id -> hello", check_no_id, fport, bport)
        run.check(label + "200 sequential: 200 backend calls, keep-alive both sides", check_sequential, fport, bport)
        run.check(label + "50 concurrent keep-alive clients", check_concurrent, fport, bport)
        if nodelay_row(row):
            run.check(label + f"nodelay: {NAGLE_CALLS} sequential calls within {NAGLE_BOUND_S:.0f} s (Nagle: >= 8 s)",
                      check_no_nagle, fport, bport)
        if bound is not None:
            run.check(label + f"at most {bound} backend connections with {bound * 3 // 2} calls in flight",
                      check_bound, fport, bport, bound)
        run.check(label + "backend gone -> 5xx, front end stays up", check_backend_gone, fport, front, backend)
        run.check(label + "SIGTERM stops it within 5 s, nothing left", check_sigterm, front)
        if run.failed > failed:
            print(f"--- {row} output (last 2000 chars) ---\n{front.output(2000)}", flush=True)
    finally:
        for p in (front, backend):
            if p is not None:
                p.kill()


if __name__ == "__main__":
    sys.exit(main())
