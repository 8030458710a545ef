"""The h2c checks of targets/contract.py (`--h2c`, `--h2c-start`): HTTP/2 over plain
TCP with prior knowledge, as the avatar challenge's h2 scenario loads a target.

The clients are the real ones Debian ships: curl (`--http2-prior-knowledge`, and
`--http2` for the Upgrade: h2c dance), nghttp (many streams on one connection, every
response's headers printed) and h2load (streams over several connections). A missing
one fails the check, naming the package. Standard library only.
"""
import re
import shutil
import subprocess
import tempfile
import time

import contract
from contract import need

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"   # length 0, type SETTINGS, stream 0
# GET / on stream 1, END_STREAM | END_HEADERS; HPACK: :method GET, :scheme http, :path /
# (static table 2, 6, 4), :authority x (literal without indexing, static name 1).
HEADERS_GET = b"\x00\x00\x06\x01\x05\x00\x00\x00\x01" + b"\x82\x86\x84\x01\x01x"
TOOLS = {"curl": "curl", "nghttp": "nghttp2-client", "h2load": "nghttp2-client"}


def tool(name):
    path = shutil.which(name)
    need(path, f"{name} not found: install {TOOLS[name]}")
    return path


def url(srv, path="/some/path?x=1"):
    return f"http://127.0.0.1:{srv.port}{path}"


def curl(srv, *args, path="/some/path?x=1"):
    """(header blocks as text, body bytes, exit status, stderr) of one curl request."""
    with tempfile.NamedTemporaryFile() as body:
        r = subprocess.run([tool("curl"), "-sS", "--max-time", "10", "-D", "-", "-o", body.name, *args,
                            url(srv, path)], capture_output=True, timeout=20)
        with open(body.name, "rb") as f:
            return r.stdout.decode(errors="replace"), f.read(), r.returncode, r.stderr


def headers(block):
    """{lowercase name: value} of the last response head in curl's -D output."""
    last = block.strip().split("\r\n\r\n")[-1]
    return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in last.split("\r\n")[1:])}


def prior_knowledge(srv):
    """One request over h2c prior knowledge: HTTP/2 302, Location in 1..N, no body."""
    heads, body, rc, err = curl(srv, "--http2-prior-knowledge")
    need(rc == 0, f"curl exit {rc}: {err[-300:]!r}")
    need(heads.startswith("HTTP/2 302"), f"not an HTTP/2 302: {heads!r}")
    m = re.fullmatch(contract.LOCATION, headers(heads).get("location", ""))
    need(m and 1 <= int(m.group(1)) <= srv.n, heads)
    need(body == b"", f"body {body[:80]!r}")


def streams(srv, total=200):
    """TOTAL requests as streams on one connection (nghttp -m): each a 302 with a right
    Location, and all N images among them."""
    r = subprocess.run([tool("nghttp"), "-nv", "-t", "10", "-m", str(total), url(srv)],
                       capture_output=True, timeout=30)
    out = r.stdout.decode(errors="replace")
    status = dict(re.findall(r"recv \(stream_id=(\d+)\) :status: (\d+)", out))
    locations = dict(re.findall(r"recv \(stream_id=(\d+)\) location: (\S+)", out))
    need(r.returncode == 0 and len(status) == total,
         f"nghttp exit {r.returncode}, {len(status)} of {total} answered: {out[-300:]!r} {r.stderr[-300:]!r}")
    bad = {k: v for k, v in status.items() if v != "302"}
    need(not bad, f"not 302: {dict(list(bad.items())[:5])}")
    seen = {}
    for sid in status:
        m = re.fullmatch(contract.LOCATION, locations.get(sid, ""))
        need(m and 1 <= int(m.group(1)) <= srv.n, f"stream {sid}: location {locations.get(sid)!r}")
        seen[int(m.group(1))] = seen.get(int(m.group(1)), 0) + 1
    need(sorted(seen) == list(range(1, srv.n + 1)), contract.fmt(seen))
    return contract.fmt(seen)


def h2load(srv, requests=200, clients=2, streams_each=10):
    """h2load -n REQUESTS -c CLIENTS -m STREAMS: every request succeeded with a 3xx."""
    r = subprocess.run([tool("h2load"), "-n", str(requests), "-c", str(clients), "-m", str(streams_each),
                        url(srv, "/")], capture_output=True, timeout=60)
    out = r.stdout.decode(errors="replace")
    done = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
                     r"(\d+) errored, (\d+) timeout", out)
    codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    proto = re.search(r"Application protocol: (\S+)", out)
    need(r.returncode == 0 and done and codes, f"h2load exit {r.returncode}: {out[-500:]!r}")
    need(proto and proto.group(1) == "h2c", f"protocol {proto and proto.group(1)}: {out[-300:]!r}")
    need(int(done.group(4)) == requests and int(codes.group(2)) == requests,
         f"{done.group(0)}; {codes.group(0)}")


def svg(srv, color="a8db7d"):
    """/<rrggbb>.svg over h2c: 200 image/svg+xml, avatar's fox in that colour, byte for byte."""
    heads, body, rc, err = curl(srv, "--http2-prior-knowledge", path=f"/{color.upper()}.svg")
    need(rc == 0 and heads.startswith("HTTP/2 200"), f"curl exit {rc}: {heads!r} {err[-300:]!r}")
    h = headers(heads)
    need(h.get("content-type", "").split(";")[0].strip() == "image/svg+xml", f"Content-Type: {h}")
    with open(contract.FOX, "rb") as f:
        want = f.read().replace(b"{{color}}", b"#" + color.encode())
    need(body == want, f"body differs from crates/avatar/assets/fox.svg in #{color}: {body[:80]!r}")


def beside_http1(srv):
    """An h2c connection (preface sent, the server's SETTINGS read) stays open while
    HTTP/1.1 on another connection to the same port gets its 302."""
    h2 = contract.connect(srv.port)
    try:
        h2.sendall(PREFACE + EMPTY_SETTINGS)
        frame = b""
        while len(frame) < 9:
            chunk = h2.recv(4096)
            need(chunk, f"h2c connection closed after {frame!r}")
            frame += chunk
        need(frame[3] == 4 and frame[5:9] == b"\0\0\0\0", f"first frame is not SETTINGS: {frame[:9].hex()}")
        buf = contract.exchange(srv.port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        need(buf.startswith(b"HTTP/1.1 302 ") and re.search(rb"(?im)^location: " + contract.LOCATION.encode(), buf),
             f"HTTP/1.1 beside h2c: {buf[:200]!r}")
        # The h2c connection is still open and serving: a GET on stream 1 gets its HEADERS.
        h2.sendall(HEADERS_GET)
        frames_until_response(h2)
    finally:
        h2.close()


def frames_until_response(s):
    """(type, flags, stream) of each frame read from S until a HEADERS frame on stream 1."""
    buf, frames = b"", []
    while not any(t == 1 and sid == 1 for t, _, sid in frames):
        chunk = s.recv(65536)
        need(chunk, f"closed after the frames {frames}")
        buf += chunk
        while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
            n = int.from_bytes(buf[:3], "big")
            frames.append((buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF))
            buf = buf[9 + n:]
    return frames


def split_preface(srv):
    """The preface in three writes (a server that sniffs the first bytes must wait for the
    rest): the server's SETTINGS first, and a GET on stream 1 answered with HEADERS."""
    s = contract.connect(srv.port)
    try:
        for part in (PREFACE[:5], PREFACE[5:17], PREFACE[17:] + EMPTY_SETTINGS):
            s.sendall(part)
            time.sleep(0.05)
        s.sendall(HEADERS_GET)
        frames = frames_until_response(s)
        need(frames[0][0] == 4, f"the first frame is not SETTINGS: {frames}")
    finally:
        s.close()


def http1_refused(srv):
    """An h2c-only listener: an HTTP/1.1 request gets no HTTP/1.1 answer."""
    buf = contract.exchange(srv.port, contract.GET)
    need(not buf.startswith(b"HTTP/"), f"answered HTTP/1: {buf[:120]!r}")
    need(srv.alive(), "the server exited")
    return f"{len(buf)} bytes back, not HTTP/1" if buf else "closed"


def upgrade(srv, switches):
    """curl --http2 sends Upgrade: h2c. SWITCHES: 101, then the 302 over HTTP/2;
    otherwise the Upgrade is ignored and the 302 comes over HTTP/1.1."""
    heads, body, rc, err = curl(srv, "--http2")
    need(rc == 0, f"curl exit {rc}: {err[-300:]!r}")
    want = ("HTTP/1.1 101", "HTTP/2 302") if switches else ("HTTP/1.1 302",)
    got = tuple(" ".join(b.split(" ", 2)[:2]) for b in heads.strip().split("\r\n\r\n"))
    need(got == want, f"want {want}, got {got}: {heads!r}")
    need(re.fullmatch(contract.LOCATION, headers(heads).get("location", "")), heads)


def checks(srv, *, same_port=True, switches=False, with_svg=False):
    """Every h2c check on SRV, each reported through srv.run.check."""
    c = srv.run.check
    c("h2c prior knowledge: HTTP/2 302, Location in 1..N, empty body", prior_knowledge, srv)
    c(f"h2c: all {srv.n} images over 200 streams on one connection (nghttp -m 200)", streams, srv)
    c("h2c: h2load -n 200 -c 2 -m 10, all 3xx", h2load, srv)
    c("h2c: the preface split over 3 writes, then a GET answered on stream 1", split_preface, srv)
    if with_svg:
        c("h2c: /A8DB7D.svg is avatar's fox in #a8db7d", svg, srv)
    if same_port:
        c("h2c and HTTP/1.1 on the same port, at the same time", beside_http1, srv)
        c("Upgrade: h2c " + ("switches to HTTP/2 (101)" if switches else "is ignored: HTTP/1.1 302"),
          upgrade, srv, switches)
    else:
        c("h2c only: HTTP/1.1 gets no HTTP/1 answer", http1_refused, srv)


def only(run, start):
    """The target's h2c-only row: started with START, the h2c checks, then SIGTERM."""
    quoted = start.replace("{", "{{").replace("}", "}}")  # run.start formats the name
    srv = run.start(5, start=start, name=f"h2c row ({quoted}) starts on 127.0.0.1:{{port}}")
    if srv:
        checks(srv, same_port=False)
        run.check("h2c row: SIGTERM, nothing left", contract.sigterm, srv, 1.0, None, False)
