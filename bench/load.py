#!/usr/bin/env python3
"""Runs HTTP load generators side by side and compares req/s and CPU per request.

The client is pinned to CPU 0 and the server to CPU 1. Client CPU comes from
wait4() rusage of the tool's process, the same way for every tool; server CPU
from /proc/<pid>/stat deltas summed over the server's processes. Tools are
alternated (A B C A B C) and each figure is a median over --repeats runs;
ratios are medians of per-round ratios against a baseline tool run in the
same round (wrk; ab without keep-alive; wrk + pipeline.lua when pipelining).

Only ever sends traffic to 127.0.0.1. Python 3 stdlib only.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLK_TCK = os.sysconf("SC_CLK_TCK")
LOADAVG_START = "n/a"
CLIENT_CPU = "0"
SERVER_CPU = "1"
AVATAR_PREFIX = b"https://avatar.example/Renard-"

# ---------------------------------------------------------------- scenarios

# name -> (connections, keep-alive, pipeline depth, servers it runs against)
SCENARIOS = {
    "ka-c10": dict(c=10, keepalive=True, pipeline=1, desc="keep-alive, c=10"),
    "ka-c100": dict(c=100, keepalive=True, pipeline=1, desc="keep-alive, c=100"),
    "noka-c10": dict(c=10, keepalive=False, pipeline=1, desc="no keep-alive, c=10"),
    "pipe16-c10": dict(c=10, keepalive=True, pipeline=16, desc="pipelining x16, c=10"),
    "ka-c10000": dict(c=10000, keepalive=True, pipeline=1, desc="keep-alive, c=10000",
                      servers=["nginx"], tools=["foxbench"]),
    # TLS against nginx-tls (ECDSA P-256, made at start). tls: "resume" lets a client resume
    # sessions on reconnect if it can; "full" asks for a full handshake on every connection.
    "tls-ka-c10": dict(c=10, keepalive=True, pipeline=1, tls="resume",
                       desc="TLS, keep-alive, c=10", servers=["nginx-tls"]),
    "tls-ka-c100": dict(c=100, keepalive=True, pipeline=1, tls="resume",
                        desc="TLS, keep-alive, c=100", servers=["nginx-tls"]),
    "tls-noka-full-c10": dict(c=10, keepalive=False, pipeline=1, tls="full",
                              desc="TLS, new connection per request, full handshakes, c=10",
                              servers=["nginx-tls"]),
    "tls-noka-resume-c10": dict(c=10, keepalive=False, pipeline=1, tls="resume",
                                desc="TLS, new connection per request, sessions resumed, c=10",
                                servers=["nginx-tls"]),
    # HTTP/2 (h2: streams per connection) against nginx with `listen ... http2`, over TLS
    # (ALPN) and h2c (prior knowledge). The baseline is h2load, nghttp2's own client.
    # caddy runs them too, beside its h3 below: QUIC's cost against TCP + TLS, same server.
    "h2-c10-m1": dict(c=10, keepalive=True, pipeline=1, h2=1, desc="HTTP/2, c=10, 1 stream",
                      servers=["nginx-h2", "nginx-h2c", "caddy"],
                      tools=["foxbench", "h2load", "oha"]),
    "h2-c10-m10": dict(c=10, keepalive=True, pipeline=1, h2=10, desc="HTTP/2, c=10, 10 streams",
                       servers=["nginx-h2", "nginx-h2c", "avatar-h2c", "caddy"],
                       tools=["foxbench", "h2load", "oha"]),
    "h2-c100-m10": dict(c=100, keepalive=True, pipeline=1, h2=10,
                        desc="HTTP/2, c=100, 10 streams",
                        servers=["nginx-h2", "nginx-h2c", "caddy"],
                        tools=["foxbench", "h2load", "oha"]),
    # The same at one fixed rate, below every tool's and nginx's capacity: each tool paces
    # its requests (foxbench -R, h2load --rps per connection, oha -q). The closed scenarios
    # above compare a client that outruns nginx (and is woken per response or two) with
    # one that cannot keep up (and finds ten responses per wake-up); here no tool is
    # saturated by the load. foxbench's open model spins the last 50 us before each due
    # instant (worker SPIN_NS, for send precision), so at 60k req/s (17 us apart) it is
    # always spinning: its CPU here is the price of that precision, not of the requests
    # (bench/runs/2026-11-26-h2-rate). h2load's --rps fires a timer per connection and
    # does not report how late it sent.
    "h2-c100-m10-r60k": dict(c=100, keepalive=True, pipeline=1, h2=10, rate=60000,
                             desc="HTTP/2, c=100, 10 streams, at 60k req/s",
                             servers=["nginx-h2", "nginx-h2c"],
                             tools=["foxbench", "h2load", "oha"]),
}
# HTTP/3 (h3: streams per connection) over QUIC against caddy (Debian's, quic-go inside) and
# targets/go-quic (quic-go's http3), each serving h3 on UDP beside TLS on TCP. The peer is
# oha built with its http3 feature (h3 + quinn): `cargo install oha --locked --features
# http3`; h2load 1.52 (Debian's) has no HTTP/3.
for _c, _m in [(10, 1), (10, 10), (100, 10)]:
    SCENARIOS[f"h3-c{_c}-m{_m}"] = dict(
        c=_c, keepalive=True, pipeline=1, h3=_m,
        desc=f"HTTP/3, c={_c}, {_m} stream{'s' if _m > 1 else ''}",
        servers=["caddy", "go-quic"], tools=["foxbench", "oha"])
BASELINE = {"h3-c10-m1": "oha", "h3-c10-m10": "oha", "h3-c100-m10": "oha",
            "h2-c10-m1": "h2load", "h2-c10-m10": "h2load", "h2-c100-m10": "h2load",
            "h2-c100-m10-r60k": "h2load",
            "noka-c10": "ab", "pipe16-c10": "wrk", "tls-noka-full-c10": "ab",
            "tls-noka-resume-c10": "oha"}  # default: wrk


def runs_on(sc, server):
    """Scenarios name their servers; the rest run on every plain-HTTP server."""
    return server in sc.get("servers", ["c-epoll", "nginx"])

# ---------------------------------------------------------------- tools


class Skip(Exception):
    """This tool cannot run this scenario; the message says why."""


def find_bin(name, extra=()):
    for p in extra:
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return shutil.which(name)


def num(pattern, text, conv=float, default=None):
    m = re.search(pattern, text, re.M)
    return conv(m.group(1)) if m else default


def parse_duration_s(text, unit):
    return float(text) * {"s": 1, "ms": 1e-3, "us": 1e-6, "m": 60}[unit]


class Tool:
    name = ""
    binary = ""
    install = ""
    sized_by_count = False  # runs -n N rather than for a duration
    path = None

    def locate(self, args):
        self.path = find_bin(self.binary)
        return self.path

    def version(self):
        return ""

    def command(self, sc, url, seconds, count):
        raise NotImplementedError

    def parse(self, out, err):
        """Returns dict(completed, rps, errors, detail)."""
        raise NotImplementedError


class Wrk(Tool):
    name, binary, install = "wrk", "wrk", "apt-get install wrk"

    def version(self):
        r = subprocess.run([self.path, "-v"], capture_output=True, text=True)
        return (r.stdout + r.stderr).splitlines()[0] if (r.stdout + r.stderr) else ""

    def command(self, sc, url, seconds, count):
        if not sc["keepalive"]:
            raise Skip("wrk has no no-keep-alive mode; `-H 'Connection: close'` makes it "
                       "reconnect after each response, but it times requests from the write, "
                       "so connect cost is hidden; left out rather than half-compared")
        cmd = [self.path, "-t1", f"-c{sc['c']}", f"-d{seconds}s"]
        if sc["pipeline"] > 1:
            cmd += ["-s", os.path.join(HERE, "pipeline.lua"), url, "--", str(sc["pipeline"])]
        else:
            cmd += [url]
        return cmd

    def parse(self, out, err):
        completed = num(r"^\s*(\d+) requests in", out, int)
        rps = num(r"^Requests/sec:\s*([\d.]+)", out)
        errors = {}
        m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
        if m:
            errors = dict(zip(["connect", "read", "write", "timeout"], map(int, m.groups())))
        bad = num(r"Non-2xx or 3xx responses:\s*(\d+)", out, int, 0)
        if bad:
            errors["status"] = bad
        return dict(completed=completed, rps=rps, errors=errors)


class Ab(Tool):
    name, binary, install = "ab", "ab", "apt-get install apache2-utils"
    sized_by_count = True

    def version(self):
        r = subprocess.run([self.path, "-V"], capture_output=True, text=True)
        return r.stdout.splitlines()[0] if r.stdout else ""

    def command(self, sc, url, seconds, count):
        if sc["pipeline"] > 1:
            raise Skip("ab cannot pipeline")
        if sc.get("tls") == "resume" and not sc["keepalive"]:
            raise Skip("ab starts every TLS connection with a full handshake: it cannot resume")
        cmd = [self.path, "-q", "-r", f"-c{sc['c']}", f"-n{max(count, sc['c'])}"]
        if sc["keepalive"]:
            cmd.insert(1, "-k")
        return cmd + [url]

    def parse(self, out, err):
        completed = num(r"^Complete requests:\s*(\d+)", out, int)
        rps = num(r"^Requests per second:\s*([\d.]+)", out)
        errors = {}
        failed = num(r"^Failed requests:\s*(\d+)", out, int, 0)
        if failed:
            m = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", out)
            if m:
                for k, v in zip(["connect", "read", "length", "other"], map(int, m.groups())):
                    if v:
                        errors[k] = v
            else:
                errors["failed"] = failed
        # ab counts our 302s as "Non-2xx responses"; that is expected, not an error.
        return dict(completed=completed, rps=rps, errors=errors)


class H2load(Tool):
    name, binary, install = "h2load", "h2load", "apt-get install nghttp2-client"
    sized_by_count = True

    def version(self):
        r = subprocess.run([self.path, "--version"], capture_output=True, text=True)
        return r.stdout.strip()

    def command(self, sc, url, seconds, count):
        if not sc["keepalive"]:
            raise Skip("h2load has no no-keep-alive mode")
        if sc.get("h2"):
            m = sc["h2"]
            if sc.get("rate"):
                # --rps paces each connection; -n makes the run last `seconds` at that rate.
                per_conn = max(1, round(sc["rate"] / sc["c"]))
                return [self.path, "-t1", f"-c{sc['c']}", f"-m{m}", f"--rps={per_conn}",
                        f"-n{round(per_conn * sc['c'] * seconds)}", url]
            return [self.path, "-t1", f"-c{sc['c']}", f"-m{m}", f"-n{max(count, sc['c'] * m)}", url]
        cmd = [self.path, "--h1", "-t1", f"-c{sc['c']}", f"-n{max(count, sc['c'] * sc['pipeline'])}"]
        if sc["pipeline"] > 1:
            cmd.append(f"-m{sc['pipeline']}")  # with --h1, -m is the pipelining depth
        return cmd + [url]

    def parse(self, out, err):
        m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                      r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
        if not m:
            return dict(completed=None, rps=None, errors={})
        total, started, done, ok, failed, errored, timeout = map(int, m.groups())
        errors = {k: v for k, v in (("failed", failed), ("errored", errored), ("timeout", timeout)) if v}
        rps = num(r"finished in [\d.]+\w+, ([\d.]+) req/s", out)
        return dict(completed=done, rps=rps, errors=errors, detail=dict(succeeded=ok))


class Hey(Tool):
    name, binary, install = "hey", "hey", "go install github.com/rakyll/hey@latest"

    def locate(self, args):
        self.path = find_bin("hey", [os.path.expanduser("~/go/bin/hey"), "/root/go/bin/hey"])
        return self.path

    def version(self):
        go = shutil.which("go") or "/usr/local/go/bin/go"
        if os.path.exists(go):
            r = subprocess.run([go, "version", "-m", self.path], capture_output=True, text=True)
            m = re.search(r"^\s*mod\s+(\S+)\s+(\S+)", r.stdout, re.M)
            if m:
                return f"{m.group(1)} {m.group(2)}"
        return "hey (version unknown)"

    def command(self, sc, url, seconds, count):
        if sc["pipeline"] > 1:
            raise Skip("hey cannot pipeline")
        if sc.get("tls") == "resume" and not sc["keepalive"]:
            raise Skip("hey keeps no TLS session cache: it cannot resume")
        # -disable-redirects: hey follows 302s by default (to a host we must not reach).
        cmd = [self.path, "-z", f"{seconds}s", "-c", str(sc["c"]), "-cpus", "1", "-disable-redirects"]
        if not sc["keepalive"]:
            cmd.append("-disable-keepalive")
        return cmd + [url]

    def parse(self, out, err):
        total_s = num(r"^\s*Total:\s*([\d.]+) secs", out)
        codes = re.search(r"Status code distribution:\n((?:\s*\[\d+\]\s+\d+ responses\n?)*)", out)
        completed = None
        if codes:
            completed = sum(int(n) for n in re.findall(r"\[\d+\]\s+(\d+) responses", codes.group(1)))
        errors = {}
        e = re.search(r"Error distribution:\n((?:\s*\[\d+\].*\n?)*)", out)
        if e:
            n = sum(int(x) for x in re.findall(r"^\s*\[(\d+)\]", e.group(1), re.M))
            if n:
                errors["error"] = n
        # hey's own Requests/sec counts errors too; use responses over time.
        rps = completed / total_s if completed is not None and total_s else None
        return dict(completed=completed, rps=rps, errors=errors)


class Oha(Tool):
    name, binary, install = "oha", "oha", "cargo install oha --locked"
    json_flag = None

    def locate(self, args):
        self.path = find_bin("oha", [os.path.expanduser("~/.cargo/bin/oha")])
        if self.path:
            h = subprocess.run([self.path, "--help"], capture_output=True, text=True).stdout
            if "--output-format" in h:
                self.json_flag = ["--output-format", "json"]
            elif re.search(r"-j, --json", h):
                self.json_flag = ["-j"]
            self.has_no_tui = "--no-tui" in h
            self.has_worker_threads = "--worker-threads" in h
            # Built with the http3 feature: its --http-version help names 3.
            self.has_http3 = re.search(r"--http-version[^\n]*\n?[^\n]*\b3\b", h) is not None
        return self.path

    def version(self):
        return subprocess.run([self.path, "--version"], capture_output=True, text=True).stdout.strip()

    def command(self, sc, url, seconds, count):
        if sc["pipeline"] > 1:
            raise Skip("oha cannot pipeline")
        if sc.get("tls") == "full" and not sc["keepalive"]:
            raise Skip("oha resumes TLS sessions and has no switch to stop it")
        # --redirect 0: oha follows redirects by default.
        cmd = [self.path, "-z", f"{seconds}s", "-c", str(sc["c"]), "--redirect", "0"]
        if self.has_no_tui:
            cmd.append("--no-tui")
        if self.has_worker_threads:
            cmd += ["--worker-threads", "1"]  # its default is the number of cores, not the affinity mask
        if self.json_flag:
            cmd += self.json_flag
        if not sc["keepalive"]:
            cmd.append("--disable-keepalive")
        if sc.get("tls") or url.startswith("https"):
            cmd.append("--insecure")  # the test certificate; the others do not verify either
        if sc.get("h2"):
            if url.startswith("http://"):
                raise Skip("oha speaks h2 only over TLS (no prior-knowledge h2c)")
            cmd += ["--http2", "-p", str(sc["h2"])]
        if sc.get("h3"):
            if not self.has_http3:
                raise Skip("this oha was built without HTTP/3: cargo install oha --locked --features http3")
            cmd += ["--http-version", "3", "-p", str(sc["h3"])]
        if sc.get("rate"):
            cmd += ["-q", str(sc["rate"])]
        return cmd + [url]

    def parse(self, out, err):
        if self.json_flag:
            try:
                j = json.loads(out)
            except ValueError:
                return dict(completed=None, rps=None, errors={})
            codes = j.get("statusCodeDistribution") or {}
            completed = sum(codes.values())
            s = j.get("summary", {})
            total = s.get("total")
            errors = {k: v for k, v in (j.get("errorDistribution") or {}).items()}
            # Requests cut off by -z are not failures; wrk and hey drop them silently.
            aborted = errors.pop("aborted due to deadline", 0)
            rps = completed / total if total else s.get("requestsPerSec")
            return dict(completed=completed, rps=rps, errors=errors,
                        detail=dict(aborted_at_deadline=aborted))
        codes = re.findall(r"\[(\d{3})\]\s+(\d+) responses", out)
        completed = sum(int(n) for _, n in codes) if codes else None
        total = num(r"^\s*Total:\s*([\d.]+) secs", out)
        rps = completed / total if completed and total else num(r"Requests/sec:\s*([\d.]+)", out)
        errors = {}
        e = re.search(r"Error distribution:\n((?:\s*\[\d+\].*\n?)*)", out)
        if e:
            n = sum(int(x) for x in re.findall(r"^\s*\[(\d+)\] (?!aborted due to deadline)", e.group(1), re.M))
            if n:
                errors["error"] = n
        return dict(completed=completed, rps=rps, errors=errors)


class Foxbench(Tool):
    name, binary = "foxbench", "foxbench"
    install = "cargo build --release -p foxbench"

    def locate(self, args):
        p = args.foxbench if os.path.isabs(args.foxbench) else os.path.join(ROOT, args.foxbench)
        if not (os.path.isfile(p) and os.access(p, os.X_OK)):
            return None
        r = subprocess.run([p, "load", "--help"], capture_output=True, text=True)
        if r.returncode != 0 or "--json" not in r.stdout + r.stderr:
            self.install = f"{p} exists but `foxbench load --help` does not work yet; " + self.install
            return None
        self.path = p
        return p

    def version(self):
        r = subprocess.run([self.path, "--version"], capture_output=True, text=True)
        return (r.stdout or r.stderr).strip() or "foxbench (no --version)"

    def command(self, sc, url, seconds, count):
        cmd = [self.path, "load", "-t", "1", "-c", str(sc["c"]), "-d", f"{seconds}s",
               "--quiet", "--json", "-"]
        if sc["pipeline"] > 1:
            cmd += ["--pipeline", str(sc["pipeline"])]
        if not sc["keepalive"]:
            cmd.append("--no-keepalive")
        if sc.get("h2"):
            cmd += ["--http2", "--streams", str(sc["h2"])]
        if sc.get("h3"):
            cmd += ["--http3", "--streams", str(sc["h3"])]
        if sc.get("rate"):
            cmd += ["-R", str(sc["rate"])]
        if sc.get("tls") or url.startswith("https"):
            # Verifies the handshake's signature, not the test certificate's chain.
            cmd.append("--insecure")
            if sc.get("tls") == "full":
                cmd += ["--tls-resume", "off"]
        return cmd + [url]

    def parse(self, out, err):
        try:
            j = json.loads(out)
        except ValueError:
            return dict(completed=None, rps=None, errors={})
        req = j.get("requests", {})
        # The contract's kinds; finer sub-kinds (connect_refused, ...) go to detail so
        # nothing is counted twice.
        all_errors = j.get("errors") or {}
        errors = {k: all_errors[k] for k in ("connect", "write", "read", "parse", "timeout", "tls",
                                             "reset", "protocol")
                  if all_errors.get(k)}
        if req.get("failed_status"):
            errors["status"] = req["failed_status"]
        completed = req.get("completed")
        if completed is None and "ok" in req:
            completed = req["ok"] + req.get("failed_status", 0)
        rps = (j.get("throughput") or {}).get("requests_per_sec")
        tls = j.get("tls") or {}
        client = j.get("client") or {}
        return dict(completed=completed, rps=rps, errors=errors,
                    spin_s=client.get("spin_s") or 0.0,
                    fox_client=client,
                    detail=dict(sent=req.get("sent"), in_flight=req.get("in_flight"),
                                elapsed_s=j.get("elapsed_s"),
                                handshakes_full=tls.get("handshakes_full"),
                                handshakes_resumed=tls.get("handshakes_resumed"),
                                tls_version=tls.get("version"),
                                # --http3: QUIC's own figures (datagrams and system calls
                                # per request, GSO's datagrams per send, losses).
                                quic=(j.get("http3") or {}).get("quic"),
                                udp=j.get("udp"),
                                error_kinds={k: v for k, v in all_errors.items() if v}))


class FoxbenchBase(Foxbench):
    """Another foxbench build (--foxbench-base), to compare an engine change side by side."""

    name = "foxbench-base"
    install = "build the base commit in a worktree and pass --foxbench-base PATH"

    def locate(self, args):
        if not args.foxbench_base:
            return None
        return Foxbench.locate(self, argparse.Namespace(foxbench=args.foxbench_base))


class FoxbenchBuild(Foxbench):
    """A named foxbench build (--build NAME=PATH): builds of other commits or profiles,
    any number of them, side by side in one run."""

    install = "pass --build NAME=PATH with an existing binary"

    def __init__(self, name, path):
        self.name = f"foxbench-{name}"
        self.build_path = path

    def locate(self, args):
        return Foxbench.locate(self, argparse.Namespace(foxbench=self.build_path))


TOOLS = {t.name: t for t in (Wrk(), Ab(), H2load(), Oha(), Hey(), Foxbench(), FoxbenchBase())}

# ---------------------------------------------------------------- processes

LIVE = []  # Popen objects to kill on exit, each leading its own process group


def raise_nofile():
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for want in (1 << 20, 65536, hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(want, hard)))
            return
        except (ValueError, OSError):
            continue


def spawn(cmd, cpu, stdout, stderr, cwd=None):
    p = subprocess.Popen(["taskset", "-c", cpu] + cmd, stdout=stdout, stderr=stderr,
                         stdin=subprocess.DEVNULL, cwd=cwd, start_new_session=True,
                         preexec_fn=raise_nofile)
    LIVE.append(p)
    return p


def kill_group(p, grace_s=3.0):
    if p.returncode is not None:
        return
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        p.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    except ChildProcessError:
        pass


def kill_all():
    while LIVE:
        kill_group(LIVE.pop())


def descendants(pid):
    """pid and every process below it, from /proc/<pid>/task/*/children."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def cpu_ticks(pid):
    """utime+stime of pid's process tree; a process's stat covers all its threads."""
    total = 0
    for p in descendants(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        except (OSError, IndexError):
            pass
    return total


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tls_directives(prefix):
    """An ECDSA P-256 certificate made now, and nginx's TLS settings for it: TLS 1.2 and
    1.3, a session cache (TLS 1.2 session IDs) and tickets (the default)."""
    cert, key = os.path.join(prefix, "cert.pem"), os.path.join(prefix, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return (f"        ssl_certificate {cert};\n        ssl_certificate_key {key};\n"
            f"        ssl_protocols TLSv1.2 TLSv1.3;\n        ssl_session_cache shared:TLS:10m;\n")


def http_get(port, timeout=2.0, tls=False):
    import ssl
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as raw:
        s = raw
        if tls:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return buf
            buf += chunk


# ---------------------------------------------------------------- servers


class Server:
    def __init__(self, name, args, tmp):
        self.name, self.args, self.tmp = name, args, tmp
        self.proc = None
        self.port = free_port()
        self.cmd = None

    TLS = ("nginx-tls", "nginx-h2", "caddy", "go-quic")

    @property
    def url(self):
        scheme = "https" if self.name in self.TLS else "http"
        return f"{scheme}://127.0.0.1:{self.port}/"

    def start(self):
        log = open(os.path.join(self.tmp, f"{self.name}.log"), "wb")
        if self.name == "c-epoll":
            binary = os.path.join(ROOT, "targets/c-epoll/server")
            subprocess.run(["make", "-s", "-C", os.path.dirname(binary)], check=True)
            self.cmd = [binary, "-w", "1", str(self.port), "5"]
            self.proc = spawn(self.cmd, SERVER_CPU, log, log)
        elif self.name in ("nginx", "nginx-tls", "nginx-h2", "nginx-h2c"):
            prefix = os.path.join(self.tmp, self.name)
            os.makedirs(os.path.join(prefix, "tmp"), exist_ok=True)
            with open(os.path.join(HERE, "nginx/return302.conf")) as f:
                conf = f.read().replace("127.0.0.1:8081", f"127.0.0.1:{self.port}")
            if self.name in ("nginx-tls", "nginx-h2"):
                http2 = " http2" if self.name == "nginx-h2" else ""
                conf = conf.replace(" reuseport;", f" reuseport ssl{http2};\n" + tls_directives(prefix))
            elif self.name == "nginx-h2c":
                conf = conf.replace(" reuseport;", " reuseport http2;")
            conf_path = os.path.join(prefix, "nginx.conf")
            with open(conf_path, "w") as f:
                f.write(conf)
            nginx = shutil.which("nginx") or "/usr/sbin/nginx"
            self.cmd = [nginx, "-p", prefix, "-e", "stderr", "-c", conf_path, "-g", "daemon off;"]
            self.proc = spawn(self.cmd, SERVER_CPU, log, log)
        elif self.name in ("caddy", "go-quic"):
            # HTTP/1.1 and h2 over TLS on TCP, h3 over QUIC on UDP, one port number, with a
            # private CA's certificate (targets/nginx-tls/cert.sh); the targets' own
            # scripts, as the shootout runs them: targets/caddy (a 302 to one of 21 images,
            # drawn by its templates) and targets/go-quic (quic-go's http3).
            out = os.path.join(self.tmp, self.name)
            os.makedirs(out, exist_ok=True)
            subprocess.run(["sh", os.path.join(ROOT, "targets/nginx-tls/cert.sh"), out],
                           check=True, capture_output=True)
            if self.name == "caddy":
                self.cmd = ["bash", os.path.join(ROOT, "targets/caddy/run.sh"), out,
                            str(self.port), "redirect", "21"]
            else:
                binary = os.path.join(out, "server")
                subprocess.run(["go", "build", "-o", binary, "."], check=True,
                               cwd=os.path.join(ROOT, "targets/go-quic"),
                               env=dict(os.environ, GOTOOLCHAIN="local"))
                self.cmd = [binary, str(self.port), "21", os.path.join(out, "tls/cert.pem"),
                            os.path.join(out, "tls/key.pem")]
            self.proc = spawn(self.cmd, SERVER_CPU, log, log)
        elif self.name == "avatar-h2c":
            # avatar, the project's own server: HTTP/1.1 and h2c (prior knowledge) on one port,
            # one worker. A server that outruns the clients: their own cost shows.
            binary = os.path.join(ROOT, "target/release/avatar")
            if not os.access(binary, os.X_OK):
                raise SystemExit(f"{binary} is missing: run `cargo build --release -p avatar`")
            self.cmd = [binary, str(self.port), "21", "--workers", "1", "--max-connections", "50000"]
            self.proc = spawn(self.cmd, SERVER_CPU, log, log)
        else:
            raise SystemExit(f"unknown server {self.name!r}: expected c-epoll, nginx, nginx-tls, "
                             "nginx-h2, nginx-h2c, avatar-h2c, caddy or go-quic")
        deadline = time.monotonic() + 10
        while True:
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name} exited at startup; see {log.name}")
            if self.name in ("nginx-h2c", "avatar-h2c"):
                # h2c only: verified by h2load below, HTTP/1.1 is not spoken on this port.
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    resp = None
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit(f"{self.name} did not listen on 127.0.0.1:{self.port}")
                    time.sleep(0.05)
                    continue
            try:
                resp = http_get(self.port, tls=self.name in self.TLS)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{self.name} did not listen on 127.0.0.1:{self.port} within 10 s")
                time.sleep(0.05)
        if resp is None:
            h2load = shutil.which("h2load") or "/usr/bin/h2load"
            r = subprocess.run([h2load, "-n1", "-c1", self.url], capture_output=True, text=True,
                               timeout=10)
            if "1 succeeded" not in r.stdout or "0 2xx, 1 3xx" not in r.stdout:
                raise SystemExit(f"{self.name} did not answer h2c with a 302: {r.stdout[-300:]}")
            return
        # Verify before loading: a fast wrong answer wins nothing.
        head = resp.split(b"\r\n\r\n", 1)[0]
        if not re.match(rb"HTTP/1\.1 302 ", head) or b"\r\nLocation: " + AVATAR_PREFIX not in head:
            raise SystemExit(f"{self.name} answered {head[:200]!r}, expected a 302 to {AVATAR_PREFIX!r}")

    def cpu_ticks(self):
        return cpu_ticks(self.proc.pid)

    def stop(self):
        if self.proc:
            kill_group(self.proc)
            if self.proc in LIVE:
                LIVE.remove(self.proc)


# ---------------------------------------------------------------- running


def run_tool(tool, sc, server, seconds, count, tmp):
    """One pinned run; returns a result dict (never raises on a tool failure)."""
    cmd = tool.command(sc, server.url, seconds, count)
    out_path = os.path.join(tmp, "out")
    err_path = os.path.join(tmp, "err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        srv0 = server.cpu_ticks()
        t0 = time.monotonic()
        p = spawn(cmd, CLIENT_CPU, out, err)
        limit = t0 + seconds * 4 + 60
        ru = status = None
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > limit:
                os.killpg(p.pid, signal.SIGKILL)
                _, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.02)
        wall_s = time.monotonic() - t0
        srv1 = server.cpu_ticks()
        p.returncode = os.waitstatus_to_exitcode(status)
        LIVE.remove(p)
    with open(out_path, errors="replace") as f:
        out_text = f.read()
    with open(err_path, errors="replace") as f:
        err_text = f.read()
    r = dict(tool=tool.name, cmd=["taskset", "-c", CLIENT_CPU] + cmd, exit=p.returncode,
             wall_s=round(wall_s, 3), client_cpu_s=ru.ru_utime + ru.ru_stime,
             client_user_s=ru.ru_utime, client_sys_s=ru.ru_stime,
             client_maxrss_kib=ru.ru_maxrss, server_cpu_s=(srv1 - srv0) / CLK_TCK)
    try:
        parsed = tool.parse(out_text, err_text)
    except Exception as e:  # a tool's output format we did not expect
        parsed = dict(completed=None, rps=None, errors={}, parse_error=repr(e))
    r.update(parsed)
    n = r.get("completed")
    if n:
        r["client_cpu_us_per_req"] = r["client_cpu_s"] / n * 1e6
        # The client's work: its CPU less the time it spent polling with nothing to do (a
        # foxbench run's own `client.spin_s`; the peers never spin).
        r["client_work_us_per_req"] = max(r["client_cpu_s"] - r.get("spin_s", 0.0), 0.0) / n * 1e6
        r["server_cpu_us_per_req"] = r["server_cpu_s"] / n * 1e6
    else:
        r["stdout_tail"] = out_text[-2000:]
        r["stderr_tail"] = err_text[-2000:]
    r["client_cpu_util"] = r["client_cpu_s"] / wall_s if wall_s else None
    # Client-bound is judged on the work (CPU less spin): a spinning client is busy by choice.
    r["client_work_util"] = (max(r["client_cpu_s"] - r.get("spin_s", 0.0), 0.0) / wall_s
                             if wall_s else None)
    return r


def calibrate(tool, sc, server, seconds, tmp):
    """Sizes -n for count-based tools so a run lasts about `seconds`; doubles as warm-up."""
    n = max(20000, sc["c"] * sc["pipeline"] * 50)
    for _ in range(4):
        r = run_tool(tool, sc, server, seconds, n, tmp)
        rps = r.get("rps") or (r.get("completed") or 0) / max(r["wall_s"], 1e-3)
        if r["wall_s"] >= 0.5 or not rps:
            break
        n = int(rps)  # too short to trust: rerun for about a second
    return max(int(rps * seconds), sc["c"] * sc["pipeline"], 1000), r


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(runs, baseline_name):
    """Per-tool medians and per-round ratios against the baseline tool."""
    by_tool = {}
    for r in runs:
        by_tool.setdefault(r["tool"], []).append(r)
    base = {r["round"]: r for r in by_tool.get(baseline_name, [])}
    out = {}
    for name, rs in by_tool.items():
        s = dict(
            runs=len(rs),
            rps=median([r.get("rps") for r in rs]),
            client_cpu_us_per_req=median([r.get("client_cpu_us_per_req") for r in rs]),
            client_work_us_per_req=median([r.get("client_work_us_per_req") for r in rs]),
            server_cpu_us_per_req=median([r.get("server_cpu_us_per_req") for r in rs]),
            client_cpu_util=median([r.get("client_cpu_util") for r in rs]),
            client_work_util=median([r.get("client_work_util") for r in rs]),
            client_maxrss_kib=max(r["client_maxrss_kib"] for r in rs),
            errors_total=median([sum(r.get("errors", {}).values()) for r in rs]),
            completed=median([r.get("completed") for r in rs]),
            parse_failures=sum(1 for r in rs if not r.get("completed")),
        )
        ratios = {k: [] for k in ("rps", "client_cpu_us_per_req", "client_work_us_per_req",
                                  "server_cpu_us_per_req")}
        for r in rs:
            b = base.get(r["round"])
            for k, xs in ratios.items():
                if b and r.get(k) and b.get(k):
                    xs.append(r[k] / b[k])
        s["rps_ratio"] = median(ratios["rps"])
        s["client_cpu_ratio"] = median(ratios["client_cpu_us_per_req"])
        s["client_work_ratio"] = median(ratios["client_work_us_per_req"])
        s["server_cpu_ratio"] = median(ratios["server_cpu_us_per_req"])
        out[name] = s
    return out


# ---------------------------------------------------------------- report


def fmt_rate(x):
    if x is None:
        return "n/a"
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k" if x >= 1e3 else f"{x:.0f}"


def fmt(x, spec=".2f", suffix=""):
    return "n/a" if x is None else f"{x:{spec}}{suffix}"


def markdown(results, skipped, args):
    lines = []
    for key, block in results.items():
        sc = SCENARIOS[block["scenario"]]
        lines.append(f"### {block['server']}: {sc['desc']}"
                     f" (baseline {block['baseline']})" if block["baseline"] else
                     f"### {block['server']}: {sc['desc']}")
        lines.append("")
        big = block["scenario"] == "ka-c10000"
        hdr = ["tool", "req/s", "vs base", "client µs/req", "vs base", "client work µs/req",
               "vs base", "client CPU", "server µs/req", "vs base", "errors/run"]
        if big:
            hdr = ["tool", "req/s", "client µs/req", "client CPU", "server µs/req",
                   "errors/run (by kind, worst run)", "peak RSS"]
        lines.append("| " + " | ".join(hdr) + " |")
        lines.append("|" + "---|" * len(hdr))
        for name, s in block["summary"].items():
            util = s["client_cpu_util"]
            util_s = fmt(util * 100 if util is not None else None, ".0f", "%")
            work = s.get("client_work_util", util)
            if work is not None and util is not None and work < util - 0.05:
                util_s += f" ({work * 100:.0f}% work)"
            if work is not None and work > 0.9:
                util_s += " (client-bound)"
            if big:
                worst = max(block["runs"], key=lambda r: sum(r.get("errors", {}).values()))
                kinds = ", ".join(f"{k} {v}" for k, v in worst.get("errors", {}).items()) or "none"
                lines.append(f"| {name} | {fmt_rate(s['rps'])} | {fmt(s['client_cpu_us_per_req'])} | "
                             f"{util_s} | {fmt(s['server_cpu_us_per_req'])} | "
                             f"{fmt(s['errors_total'], '.0f')} ({kinds}) | "
                             f"{s['client_maxrss_kib'] / 1024:.0f} MiB |")
            else:
                lines.append(f"| {name} | {fmt_rate(s['rps'])} | {fmt(s['rps_ratio'], '.2f', '×')} | "
                             f"{fmt(s['client_cpu_us_per_req'])} | {fmt(s['client_cpu_ratio'], '.2f', '×')} | "
                             f"{fmt(s.get('client_work_us_per_req'))} | "
                             f"{fmt(s.get('client_work_ratio'), '.2f', '×')} | "
                             f"{util_s} | {fmt(s['server_cpu_us_per_req'])} | "
                             f"{fmt(s.get('server_cpu_ratio'), '.2f', '×')} | "
                             f"{fmt(s['errors_total'], '.0f')} |")
            if s["parse_failures"]:
                lines.append(f"| ↳ {name}: {s['parse_failures']} run(s) with no parsable request count |" +
                             " |" * (len(hdr) - 1))
        lines.append("")
    full = results.get("nginx-tls/tls-noka-full-c10", {}).get("summary", {})
    resumed = results.get("nginx-tls/tls-noka-resume-c10", {}).get("summary", {})
    for name in sorted(set(full) & set(resumed)):
        f, r = full[name], resumed[name]
        ratio = lambda k: (f[k] / r[k]) if f.get(k) and r.get(k) else None
        lines.append(f"A resumed TLS connection against a full handshake ({name}): "
                     f"{fmt(ratio('client_cpu_us_per_req'), '.2f', '×')} less client CPU per request, "
                     f"{fmt(ratio('server_cpu_us_per_req'), '.2f', '×')} less server CPU per request.")
        lines.append("")
    if skipped:
        lines.append("Skipped:")
        lines.append("")
        for s in skipped:
            lines.append(f"- {s}")
        lines.append("")
    lines.append(f"Medians of {args.repeats} alternating runs of ~{args.seconds} s; ratios are medians "
                 f"of per-round ratios. Client on CPU {CLIENT_CPU} (`taskset -c {CLIENT_CPU}`), "
                 f"server on CPU {SERVER_CPU}. Client CPU = wait4() rusage user+sys / completed "
                 f"requests; client work = client CPU less foxbench's own `client.spin_s` (time polled with "
                 f"nothing to do; 0 for the peers); server CPU = /proc/<pid>/stat utime+stime delta "
                 f"over its processes / completed requests. \"client CPU\" is client CPU time / wall time (with the work's share when foxbench "
                 f"spun); work above 90% means the client, not the server, was the bottleneck.")
    return "\n".join(lines) + "\n"


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return "n/a"


def setup_md(args, tools, results, argv, nofile):
    cpu = num(r"^model name\s*:\s*(.+)$", read("/proc/cpuinfo"), str, "unknown")
    lines = [
        "# Setup",
        "",
        f"- Date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"- Command: `{' '.join(argv)}`",
        f"- Commit: {sh('git -C ' + ROOT + ' rev-parse --short HEAD') or 'n/a'}; files changed "
        f"but not committed under crates/ and targets/: "
        f"{sh('git -C ' + ROOT + ' status --porcelain crates targets | wc -l') or 'n/a'}",
        f"- CPU: {cpu}; nproc {os.cpu_count()}; kernel {platform.release()}",
        f"- Pinning: client `taskset -c {CLIENT_CPU}`, server `taskset -c {SERVER_CPU}` "
        f"(nginx master and worker both inherit CPU {SERVER_CPU})",
        f"- Each tool runs with one thread: wrk -t1, h2load -t1 --h1, hey -cpus 1, "
        f"oha --worker-threads 1, foxbench -t 1; ab is single-threaded",
        f"- net.core.somaxconn = {read('/proc/sys/net/core/somaxconn')}",
        f"- net.ipv4.ip_local_port_range = {read('/proc/sys/net/ipv4/ip_local_port_range')}",
        f"- net.ipv4.tcp_tw_reuse = {read('/proc/sys/net/ipv4/tcp_tw_reuse')}",
        f"- ulimit -n for tools and servers: {nofile}",
        f"- Load average (1/5/15 min) at start: {LOADAVG_START}; at end: {read('/proc/loadavg')} "
        f"(the machine is shared: other jobs may have run during the benchmark)",
        f"- Repeats {args.repeats}, ~{args.seconds} s per run, tools alternated A B C A B C; "
        f"ab and h2load use -n sized from an unrecorded calibration run (which is also their warm-up)",
        "",
        "## Versions",
        "",
    ]
    for t in tools:
        # Cargo puts a profile's binaries in target/<profile>/ (release's in target/release).
        built = (f", built with the `{os.path.basename(os.path.dirname(t.path))}` profile"
                 if t.name.startswith("foxbench") else "")
        lines.append(f"- {t.name}: {t.version()} (`{t.path}`{built})")
    lines.append(f"- nginx: {sh('nginx -v 2>&1')}")
    lines.append(f"- gcc: {sh('gcc --version').splitlines()[0] if sh('gcc --version') else 'n/a'}")
    lines += ["", "## Servers", "",
              "- c-epoll: `targets/c-epoll/server -w 1 PORT 5` (one thread, 5 avatar URLs)",
              "- nginx: `bench/nginx/return302.conf` (1 worker, access_log off, "
              "`return 302 https://avatar.example/Renard-1.png;`, keepalive_requests 1e9; "
              "its 302 carries a 138-byte HTML body), run as "
              "`nginx -p TMP -e stderr -c TMP/nginx.conf -g 'daemon off;'`",
              f"- caddy ({sh('caddy version 2>/dev/null').split(' ')[0] or 'n/a'}): "
              "`targets/caddy/run.sh OUT PORT redirect 21` (HTTP/1.1 and h2 over TLS on TCP, h3 on "
              "UDP, one port; a 302 to one of 21 images by its templates)",
              f"- go-quic ({sh('go version 2>/dev/null') or 'n/a'}, quic-go per targets/go-quic/go.mod): "
              "`targets/go-quic/server PORT 21 CERT KEY` (quic-go's http3 beside net/http over TLS)",
              "", "## Commands (first round of each)", ""]
    for block in results.values():
        seen = set()
        for r in block["runs"]:
            if r["tool"] in seen:
                continue
            seen.add(r["tool"])
            cmd = " ".join(r["cmd"]).replace(block["url"], "URL")
            lines.append(f"- {block['server']} {block['scenario']} {r['tool']}: `{cmd}`")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--tools", default="wrk,ab,h2load,oha,hey,foxbench")
    ap.add_argument("--servers", default="c-epoll,nginx,nginx-tls")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--foxbench", default="target/release/foxbench")
    ap.add_argument("--foxbench-base", help="another foxbench binary, run as the tool foxbench-base"
                    " (add it to --tools) to measure an engine change side by side")
    ap.add_argument("--build", action="append", default=[], metavar="NAME=PATH",
                    help="another foxbench binary, run as the tool foxbench-NAME beside the "
                    "others (repeat it: several commits or build profiles in one run)")
    ap.add_argument("--out", help="directory for raw.json, summary.md and SETUP.md")
    args = ap.parse_args()
    builds = []
    for b in args.build:
        name, sep, path = b.partition("=")
        if not sep or not name or not path:
            ap.error(f"--build {b!r}: write NAME=PATH, e.g. --build thin=/tmp/thin/release/foxbench")
        t = FoxbenchBuild(name, path)
        if t.name in TOOLS:
            ap.error(f"--build {b!r}: {t.name} is taken; choose another NAME")
        TOOLS[t.name] = t
        builds.append(t.name)
    if builds:
        args.tools = ",".join(args.tools.split(",") + builds)

    for name in args.tools.split(","):
        if name not in TOOLS:
            ap.error(f"unknown tool {name!r}: expected some of {','.join(TOOLS)}")
    for name in args.scenarios.split(","):
        if name not in SCENARIOS:
            ap.error(f"unknown scenario {name!r}: expected some of {','.join(SCENARIOS)}")
    if shutil.which("taskset") is None:
        sys.exit("taskset not found: apt-get install util-linux")
    if (os.cpu_count() or 1) < 2:
        sys.exit("needs 2 CPUs: the client runs on CPU 0 and the server on CPU 1")

    tools, skipped = [], []
    for name in args.tools.split(","):
        t = TOOLS[name]
        if t.locate(args):
            tools.append(t)
        else:
            msg = f"{name}: not found; install with `{t.install}`"
            print(f"skip {msg}", file=sys.stderr)
            skipped.append(msg)

    def on_term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)  # also when started with SIGINT ignored (a background job)

    raise_nofile()
    nofile = sh("ulimit -n")
    global LOADAVG_START
    LOADAVG_START = read("/proc/loadavg")
    tmp = tempfile.mkdtemp(prefix="foxbench-load-")
    results = {}
    try:
        for server_name in args.servers.split(","):
            scenarios = [s for s in args.scenarios.split(",") if runs_on(SCENARIOS[s], server_name)]
            if not scenarios:
                continue
            server = Server(server_name, args, tmp)
            server.start()
            print(f"# {server_name} on {server.url} (pid {server.proc.pid}, CPU {SERVER_CPU})",
                  file=sys.stderr)
            try:
                for sc_name in scenarios:
                    sc = SCENARIOS[sc_name]
                    runnable, counts = [], {}
                    for t in tools:
                        # foxbench-base and the --build ones are foxbench (other builds): each
                        # runs where foxbench does.
                        kind = "foxbench" if t.name.startswith("foxbench") else t.name
                        if kind not in sc.get("tools", [kind]):
                            continue
                        try:
                            t.command(sc, server.url, args.seconds, 1)
                        except Skip as e:
                            msg = f"{t.name} in {sc_name}: {e}"
                            if msg not in skipped:
                                skipped.append(msg)
                            continue
                        runnable.append(t)
                    if not runnable:
                        continue
                    for t in runnable:
                        if t.sized_by_count and not sc.get("rate"):
                            counts[t.name], cal = calibrate(t, sc, server, args.seconds, tmp)
                            print(f"  {sc_name} {t.name}: calibrated -n {counts[t.name]}",
                                  file=sys.stderr)
                    runs = []
                    for rnd in range(args.repeats):
                        for t in runnable:
                            r = run_tool(t, sc, server, args.seconds, counts.get(t.name, 0), tmp)
                            r["round"] = rnd
                            runs.append(r)
                            print(f"  {server_name} {sc_name} round {rnd + 1} {t.name}: "
                                  f"{fmt_rate(r.get('rps'))} req/s, "
                                  f"client {fmt(r.get('client_cpu_us_per_req'))} µs/req, "
                                  f"server {fmt(r.get('server_cpu_us_per_req'))} µs/req, "
                                  f"errors {sum(r.get('errors', {}).values())}"
                                  + ("" if r.get("completed") else " (OUTPUT NOT PARSED)"),
                                  file=sys.stderr)
                    names = [t.name for t in runnable]
                    baseline = BASELINE.get(sc_name, "wrk")
                    if baseline not in names or sc_name == "ka-c10000":
                        baseline = None
                    results[f"{server_name}/{sc_name}"] = dict(
                        server=server_name, scenario=sc_name, url=server.url,
                        server_cmd=["taskset", "-c", SERVER_CPU] + server.cmd,
                        baseline=baseline, runs=runs, summary=summarize(runs, baseline))
            finally:
                server.stop()
    except KeyboardInterrupt:
        print("interrupted; servers stopped", file=sys.stderr)
        kill_all()
        sys.exit(130)
    finally:
        kill_all()
        shutil.rmtree(tmp, ignore_errors=True)

    md = markdown(results, skipped, args)
    print(md)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        raw = dict(args=vars(args), argv=sys.argv, skipped=skipped, clk_tck=CLK_TCK,
                   client_cpu=CLIENT_CPU, server_cpu=SERVER_CPU, results=results)
        with open(os.path.join(args.out, "raw.json"), "w") as f:
            json.dump(raw, f, indent=1)
        with open(os.path.join(args.out, "summary.md"), "w") as f:
            f.write(md)
        with open(os.path.join(args.out, "SETUP.md"), "w") as f:
            f.write(setup_md(args, tools, results, ["bench/load.py"] + sys.argv[1:], nofile))
        print(f"wrote {args.out}/raw.json, summary.md, SETUP.md", file=sys.stderr)


if __name__ == "__main__":
    main()
