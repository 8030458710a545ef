#!/usr/bin/env python3
"""The hello backend's own checks (run by test.sh): the contract in COMMON.md's terms, plus
that delays are timers (100 concurrent delayed requests finish together), pipelined order,
the /stats counters, 404, 400, bad arguments and SIGTERM. Ends with "N passed, N failed"."""
import os
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from contract import Failed, Process, Run, SetupError, backend_stats, build_backend, expect_hello, free_port, get, need  # noqa: E402


def read_responses(sock, n, deadline_s=10):
    """The first n responses on sock, as (status, headers, body), framed by Content-Length."""
    sock.settimeout(deadline_s)
    buf, out = b"", []
    while len(out) < n:
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            need(chunk, f"connection closed after {len(out)} of {n} responses")
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(buf) < length:
            chunk = sock.recv(65536)
            need(chunk, "connection closed inside a body")
            buf += chunk
        out.append((int(lines[0].split()[1]), headers, buf[:length]))
        buf = buf[length:]
    return out


def read_to_eof(sock, deadline_s=10):
    sock.settimeout(deadline_s)
    buf = b""
    try:
        while chunk := sock.recv(65536):
            buf += chunk
    except ConnectionResetError:
        pass
    return buf


def check_echo(port):
    rid = "abc-123"
    status, headers, body = get(port, "/hello", rid)
    expect_hello(status, headers, body, rid)
    need(headers.get("content-length") == str(len(body)), f"Content-Length {headers.get('content-length')}")


def check_no_id(port):
    status, headers, body = get(port, "/hello")
    expect_hello(status, headers, body, None)
    need("x-request-id" not in headers, "X-Request-Id echoed for a request without one")


def check_delay(port):
    t0 = time.monotonic()
    expect_hello(*get(port, "/hello?x=1&delay_ms=200", "d"), "d")
    took = time.monotonic() - t0
    need(took >= 0.2, f"?delay_ms=200 answered in {took * 1000:.0f} ms")


def check_timers_concurrent(port):
    n, delay_ms = 100, 200
    errors = []
    socks = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(n)]

    def one(i, s):
        try:
            s.sendall(f"GET /hello?delay_ms={delay_ms} HTTP/1.1\r\nHost: x\r\nX-Request-Id: c{i}\r\n\r\n".encode())
            [(status, _, body)] = read_responses(s, 1, deadline_s=30)
            need(status == 200 and body == f"hello c{i}\n".encode(), f"client {i}: {status} {body!r}")
        except (Failed, OSError) as e:
            errors.append(str(e))

    t0 = time.monotonic()
    threads = [threading.Thread(target=one, args=(i, s)) for i, s in enumerate(socks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    took = time.monotonic() - t0
    for s in socks:
        s.close()
    need(not errors, f"{len(errors)} failed, first: {errors[:1]}")
    need(took >= delay_ms / 1000, f"finished in {took * 1000:.0f} ms, before the delay")
    # Serialised, they would take n * 200 ms = 20 s; concurrent timers take ~200 ms plus the
    # clients' own overhead on a loaded machine.
    need(took < n * delay_ms / 1000 / 4, f"{n} concurrent {delay_ms} ms requests took {took:.1f} s: delays block each other")


def check_pipelined_order(port):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        reqs = [(300, "a"), (0, "b"), (100, "c"), (0, "d")]
        s.sendall(b"".join(f"GET /hello?delay_ms={d} HTTP/1.1\r\nHost: x\r\nX-Request-Id: {i}\r\n\r\n".encode() for d, i in reqs))
        t0 = time.monotonic()
        got = read_responses(s, len(reqs))
        took = time.monotonic() - t0
        bodies = [b for _, _, b in got]
        need(bodies == [f"hello {i}\n".encode() for _, i in reqs], f"pipelined answers out of order: {bodies}")
        need(took >= 0.3, f"the first (300 ms) reply came after {took * 1000:.0f} ms")


def check_counts(port):
    before = backend_stats(port)
    conn_reqs = 3
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /hello HTTP/1.1\r\n\r\n" * conn_reqs + b"GET /nope HTTP/1.1\r\n\r\n")
        read_responses(s, conn_reqs + 1)
    for _ in range(2):
        get(port, "/hello")
    after = backend_stats(port)
    need(after["requests"] - before["requests"] == conn_reqs + 2,
         f"requests went {before['requests']} -> {after['requests']}, expected +{conn_reqs + 2} (/stats and 404 not counted)")
    # Each get() and backend_stats() call is a connection: 1 + 2 + the second /stats.
    need(after["connections"] - before["connections"] == 4,
         f"connections went {before['connections']} -> {after['connections']}, expected +4")


def check_404_keeps_alive(port):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /nope HTTP/1.1\r\n\r\nGET /hello HTTP/1.1\r\nX-Request-Id: after\r\n\r\n")
        (st1, _, _), (st2, _, b2) = read_responses(s, 2)
        need(st1 == 404, f"/nope answered {st1}")
        need(st2 == 200 and b2 == b"hello after\n", f"the request after a 404 got {st2} {b2!r}")


def check_400(port):
    cases = [
        ("garbage", b"\x00\x01 this is not http\r\n\r\n"),
        ("head over 16 KiB", b"GET /hello HTTP/1.1\r\nX-Pad: " + b"a" * 20000 + b"\r\n\r\n"),
        ("chunked body", b"GET /hello HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ]
    for name, raw in cases:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(raw)
            data = read_to_eof(s)
            need(data.startswith(b"HTTP/1.1 400 "), f"{name}: answered {data[:60]!r}, expected 400")
            need(b"connection: close" in data.lower(), f"{name}: 400 without Connection: close")
    status, _, _ = get(port, "/hello?delay_ms=60001")
    need(status == 400, f"delay_ms=60001 answered {status}, expected 400")
    status, _, _ = get(port, "/hello?delay_ms=soon")
    need(status == 400, f"delay_ms=soon answered {status}, expected 400")


def check_default_delay(binary):
    port = free_port()
    p = Process("hello-backend (default delay 150)", [binary, str(port), "150"])
    try:
        p.wait_listening(port)
        t0 = time.monotonic()
        expect_hello(*get(port, "/hello", "x"), "x")
        took = time.monotonic() - t0
        need(took >= 0.15, f"the start delay 150 ms was not applied: answered in {took * 1000:.0f} ms")
    finally:
        p.kill()


def check_bad_args(binary):
    for args in ([], ["8080"], ["port", "0"], ["0", "60001"], ["0", "-1"]):
        r = subprocess.run([binary, *args], capture_output=True, text=True, timeout=10)
        need(r.returncode == 2, f"{args}: exit {r.returncode}, expected 2")
        lines = r.stderr.strip().splitlines()
        need(len(lines) == 1 and "usage" in lines[0], f"{args}: stderr {r.stderr!r}, expected one usage line")


def check_unit_tests():
    """The protocol's byte-string tables (src/lib.rs), built into the shared cache's target dir."""
    cache = os.path.dirname(build_backend())
    r = subprocess.run(["cargo", "test", "--quiet", "--release", "--locked", "--target-dir", os.path.join(cache, "cargo")],
                       cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True, text=True)
    need(r.returncode == 0, f"cargo test failed:\n{(r.stdout + r.stderr)[-3000:]}")


def check_sigterm(p):
    os.killpg(p.pgid, signal.SIGTERM)
    try:
        p.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        raise Failed("still running 5 s after SIGTERM")


def main():
    run = Run()
    try:
        binary = build_backend()
    except SetupError as e:
        print(f"checks.py: {e}", file=sys.stderr)
        return 2
    run.check("protocol unit tests (cargo test)", check_unit_tests)
    port = free_port()
    p = Process("hello-backend", [binary, str(port), "0"])
    try:
        if not run.check("starts and listens", p.wait_listening, port):
            return run.summary()
        run.check("echo: hello <id> and X-Request-Id", check_echo, port)
        run.check("no id: hello, no X-Request-Id", check_no_id, port)
        run.check("?delay_ms=200 honoured", check_delay, port)
        run.check("100 concurrent 200 ms delays finish together (timers, not threads)", check_timers_concurrent, port)
        run.check("pipelined replies in request order despite delays", check_pipelined_order, port)
        run.check("/stats counts /hello replies and connections", check_counts, port)
        run.check("404 keeps the connection", check_404_keeps_alive, port)
        run.check("malformed -> 400 and close; bad delay_ms -> 400", check_400, port)
        run.check("start DELAY_MS is the default delay", check_default_delay, binary)
        run.check("bad arguments: one line, exit 2", check_bad_args, binary)
        run.check("SIGTERM exits at once", check_sigterm, p)
    finally:
        p.kill()
    return run.summary()


if __name__ == "__main__":
    sys.exit(main())
