#!/usr/bin/env python3
"""The avatar contract over TLS and HTTP/3, for a target of suites/avatar-h3.toml that
serves HTTP/1.1 and h2 over TLS on TCP and h3 over QUIC on UDP, on one port number
(targets/go-quic).

    python3 targets/contract_h3.py NAME

targets/contract.py's run (the suite's build into a fresh OUT, the start in its own
process group on a free loopback port with N=5, SIGTERM to the group at the end), read
from suites/avatar-h3.toml; the certificate is the one the build makes (OUT/tls, by
targets/nginx-tls/cert.sh), checked against OUT/tls/ca.pem. Over TLS on TCP, Python's
ssl and http.client; h2 and h3 loads by foxbench itself (`foxbench load --http2/--http3
--cacert`, $FOXBENCH as in harness.py), and h3 responses one by one by a second QUIC
stack, ngtcp2's example client (`gtlsclient`, Debian's ngtcp2-client; missing, its
checks fail). The last line is "N passed, N failed"; the exit status is non-zero if
anything failed. Standard library only (Python 3.11).
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile

import contract
import harness
from harness import Failed, need

SUITE = os.path.join(harness.REPO, "suites", "avatar-h3.toml")
N = 5
LOCATION = contract.LOCATION


class Run(contract.Run):
    """contract.py's run, with the target's commands from the HTTP/3 suite."""

    def commands(self, port=8080, images=N):
        return harness.target(SUITE, self.name, {"out": self.out, "port": port, "images": images})

    @property
    def cacert(self):
        return os.path.join(self.out, "tls", "ca.pem")

    def tls(self, alpn=("http/1.1",)):
        ctx = ssl.create_default_context(cafile=self.cacert)
        ctx.set_alpn_protocols(list(alpn))
        return ctx


def free_port_tcp_and_udp():
    """A loopback port number free on TCP and on UDP (harness.free_port checks TCP only)."""
    for _ in range(50):
        port = harness.free_port()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            try:
                u.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise harness.SetupError("no loopback port number free on both TCP and UDP in 50 tries")


def start(run):
    """An instance with N images on a port number free on TCP and UDP, ready on TCP."""
    srv = contract.Server(run, N, port=free_port_tcp_and_udp())
    ok = srv.wait_ready()
    run.report(ok, f"starts and listens on 127.0.0.1:{srv.port} (TCP)", srv.log_text())
    return srv if ok else None


def https(srv):
    return http.client.HTTPSConnection("127.0.0.1", srv.port, timeout=5, context=srv.run.tls())


def get(c, path="/"):
    c.request("GET", path)
    r = c.getresponse()
    return r.status, r.reason, {k.lower(): v for k, v in r.getheaders()}, r.read()


def image(location):
    m = re.fullmatch(LOCATION, location or "")
    need(m and 1 <= int(m.group(1)) <= N, f"Location {location!r}: want {LOCATION} with n in 1..{N}")
    return int(m.group(1))


# ---- TLS on TCP -------------------------------------------------------------------------

def first_response(srv):
    """HTTP/1.1 over TLS: 302 Found, a Location in 1..N, Content-Length: 0, no body."""
    c = https(srv)
    status, reason, h, body = get(c, "/some/path?x=1")
    c.close()
    need((status, reason) == (302, "Found"), f"{status} {reason}")
    image(h.get("location"))
    need(h.get("content-length") == "0" and body == b"", f"Content-Length {h.get('content-length')}, body {body[:80]!r}")
    need("date" in h and "content-type" not in h, f"headers {h}")
    return h["location"]


def all_images(srv, count=500):
    """All N images over COUNT requests on one keep-alive HTTP/1.1 connection over TLS."""
    c = https(srv)
    seen = set()
    for _ in range(count):
        status, _, h, body = get(c, "/")
        need(status == 302 and body == b"", f"{status} {body[:80]!r}")
        seen.add(image(h.get("location")))
    need(c.sock is not None, "the connection was closed")
    c.close()
    need(seen == set(range(1, N + 1)), f"images seen: {sorted(seen)}")


def alpn(srv):
    """TLS on TCP offers h2 and http/1.1 by ALPN."""
    got = []
    for offer in (("h2", "http/1.1"), ("http/1.1",)):
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as raw:
            with srv.run.tls(offer).wrap_socket(raw, server_hostname="127.0.0.1") as s:
                got.append(s.selected_alpn_protocol())
    need(got == ["h2", "http/1.1"], f"ALPN chose {got}")


def alt_svc(srv):
    """The TCP side advertises h3 on its own port number (Alt-Svc)."""
    c = https(srv)
    _, _, h, _ = get(c, "/")
    c.close()
    need(f'h3=":{srv.port}"' in h.get("alt-svc", ""), f"Alt-Svc {h.get('alt-svc')!r}")
    return h["alt-svc"]


def tls_garbage(srv):
    """Garbage in plain TCP, inside TLS, and cut handshakes do not kill it."""
    cases = contract.garbage_cases(2000)
    for data in cases:  # plaintext on the TLS port: not a handshake
        try:
            buf = contract.exchange(srv.port, data)
        except TimeoutError:
            raise Failed(f"no answer and no close within 5 s to plaintext {data[:20]!r}")
        except OSError:
            continue  # closed before all of it was sent: a reset is an answer to garbage
        need(b" 302 " not in buf, f"plaintext {data[:20]!r} got a 302")
    for data in cases:  # a good handshake, then garbage, then FIN (no close_notify)
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as raw:
            with srv.run.tls().wrap_socket(raw, server_hostname="127.0.0.1") as s:
                try:
                    s.sendall(data)
                    s.shutdown(socket.SHUT_WR)
                    while s.recv(65536):
                        pass
                except TimeoutError:
                    raise Failed(f"no answer and no close within 5 s to {data[:20]!r} inside TLS")
                except (OSError, ssl.SSLError):
                    pass  # a reset or an alert is an answer to garbage
    for _ in range(20):  # a ClientHello's first bytes, then a reset
        s = contract.connect(srv.port)
        s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(40))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
    need(srv.alive(), f"it exited: {srv.log_text()}")
    first_response(srv)


# ---- h2 and h3, by foxbench and ngtcp2 ----------------------------------------------------

def fox_load(srv, proto, count, *extra):
    """`foxbench load PROTO --cacert CA -n COUNT`: every answer a 302, no error, over PROTO."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        argv = harness.foxbench() + ["load", proto, "--cacert", srv.run.cacert, "-n", str(count), "-c", "2",
                                     "--streams", "10", "-s", "5s", "--json", f.name, *extra,
                                     f"https://127.0.0.1:{srv.port}/"]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        need(r.returncode == 0, f"exit {r.returncode}: {r.stderr[-1500:]}")
        with open(f.name) as j:
            d = json.load(j)
    need(d["status"] == {"302": count} and d["requests"]["errors"] == 0,
         f"statuses {d['status']}, errors {d['errors']}")
    want = proto.removeprefix("--http")
    need(d["tls"]["alpn"] == {"2": "h2", "3": "h3"}[want], f"ALPN {d['tls']['alpn']}")
    return f"{count} x 302 over {d['tls']['alpn']}, certificate verified by the CA"


def gtlsclient():
    path = shutil.which("gtlsclient") or ("/usr/bin/gtlsclient" if os.path.exists("/usr/bin/gtlsclient") else None)
    need(path, "gtlsclient not found: apt-get install ngtcp2-client")
    return path


def h3_responses(srv, count=300):
    """COUNT GETs over h3 on one connection (past the server's stream limit): each a 302
    with a good Location and content-length: 0, and all N images among them."""
    with tempfile.TemporaryDirectory() as dl:
        r = subprocess.run([gtlsclient(), "--exit-on-all-streams-close", "--no-quic-dump", "--no-http-dump",
                            f"--download={dl}", "-n", str(count), "127.0.0.1", str(srv.port),
                            f"https://127.0.0.1:{srv.port}/"], capture_output=True, text=True, timeout=30)
    text = r.stdout + r.stderr
    need(r.returncode == 0, f"gtlsclient exited {r.returncode}: {text[-1500:]}")
    streams = {}
    for stream, name, value in re.findall(r"http: stream (0x[0-9a-f]+) \[([^:\]]+|:status): ([^\]]*)\]", text):
        streams.setdefault(stream, {})[name] = value
    need(len(streams) == count, f"{len(streams)} responses of {count}: {text[-800:]}")
    seen = set()
    for stream, h in streams.items():
        need(h.get(":status") == "302" and h.get("content-length") == "0", f"stream {stream}: {h}")
        seen.add(image(h.get("location")))
    need(seen == set(range(1, N + 1)), f"images seen: {sorted(seen)}")
    return f"{count} x 302, all {N} images"


def udp_garbage(srv):
    """Garbage datagrams on the UDP port do not kill it; h3 is answered after them."""
    cases = [b"\x00", b"GET / HTTP/1.1\r\n\r\n", os.urandom(1200),
             b"\xc0\x00\x00\x00\x01" + os.urandom(1195),   # a QUIC v1 long header, garbage after
             b"\xc0\x1a\x2a\x3a\x4a" + os.urandom(1195),   # an unknown version: negotiation
             b"\x40" + os.urandom(60)]                     # a short header for no connection
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for data in cases * 20:
            s.sendto(data, ("127.0.0.1", srv.port))
    need(srv.alive(), f"it exited: {srv.log_text()}")
    return fox_load(srv, "--http3", 50)


# ---- the end ----------------------------------------------------------------------------

def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sigterm(srv, timeout=2.0):
    """SIGTERM while foxbench loads it over h3 and a TLS keep-alive connection idles:
    exit status 0 within TIMEOUT s (the suite's stop_grace), nothing left."""
    idle = https(srv)
    get(idle, "/")
    load = harness.Group(harness.foxbench() + ["load", "--http3", "--cacert", srv.run.cacert, "-c", "2",
                                               "--streams", "10", "-d", "30s", f"https://127.0.0.1:{srv.port}/"])
    try:
        # Loaded: the server has spent 0.1 s of CPU more than before the load started.
        before = cpu_s(srv.pid)
        loaded = harness.wait_for(lambda: cpu_s(srv.pid) - before >= 0.1 or not load.alive(), 15)
        need(loaded and load.alive(), f"no h3 load reached it: {load.output(1500)}")
        rc, took, left = srv.term(timeout)
    finally:
        load.kill()
        idle.close()
    need(rc == 0 and took < timeout and not left, f"status {rc} after {took:.2f} s, left {left}: {srv.log_text()}")
    return f"{took * 1000:.0f} ms"


def bad_arguments(run):
    """Bad arguments: one line on stderr and exit status 2."""
    server, tls = run.target["artifact"], os.path.join(run.out, "tls")
    cert, key = os.path.join(tls, "cert.pem"), os.path.join(tls, "key.pem")
    for args, says in ((["0", "5"], "usage"), (["x", "5", cert, key], "PORT"), (["0", "0", cert, key], "N"),
                       (["0", "5", os.path.join(tls, "missing.pem"), key], "certificate")):
        r = subprocess.run([server, *args], capture_output=True, text=True, timeout=10)
        lines = r.stderr.strip().splitlines()
        need(r.returncode == 2 and len(lines) == 1 and says in lines[0], f"{args}: exit {r.returncode}, {r.stderr!r}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.exit("usage: contract_h3.py NAME")
    run = Run(argv[0], None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        if run.build():
            srv = start(run)
            if srv:
                checks(run, srv)
            run.check("bad arguments: one line and exit status 2", bad_arguments, run)
    except KeyboardInterrupt:
        run.report(False, "interrupted")
    finally:
        run.cleanup()
    return run.summary()


def checks(run, srv):
    c = run.check

    def listening():
        line = f"listening on 127.0.0.1:{srv.port}"
        need(harness.wait_for(lambda: line in srv.log_text(), 2), srv.log_text())
    c("prints 'listening on 127.0.0.1:PORT'", listening)
    c(f"HTTP/1.1 over TLS: 302 Found, Location in 1..{N}, Content-Length: 0, no body", first_response, srv)
    c(f"all {N} images over 500 requests on one HTTP/1.1 keep-alive connection over TLS", all_images, srv)
    c("ALPN over TLS on TCP: h2, else http/1.1", alpn, srv)
    c("h2 over TLS: foxbench --http2, 200 requests", fox_load, srv, "--http2", 200)
    c("h3 over QUIC on the same port number: foxbench --http3, 500 requests", fox_load, srv, "--http3", 500)
    c("h3 by ngtcp2's client: 300 requests on one connection", h3_responses, srv)
    c("Alt-Svc over TCP names h3 on the same port", alt_svc, srv)
    c("garbage on TCP, in TLS and cut handshakes do not kill it", tls_garbage, srv)
    c("garbage UDP datagrams do not kill it; h3 answered after them", udp_garbage, srv)
    c("SIGTERM under h3 load, a TLS connection idle: exits 0 within 2 s, nothing left", sigterm, srv)


if __name__ == "__main__":
    sys.exit(main())
