#!/usr/bin/env python3
"""Side-by-side benchmark: avatar vs nginx `return 302` vs the minimal C epoll server.

Each server runs pinned to CPU 1, the load (wrk) pinned to CPU 0, over loopback keep-alive.
Servers alternate A B C A B C ... for --reps rounds; medians and ratios are reported.

Measured per server:
  * server CPU per request: utime+stime delta of the server process (/proc/PID/stat)
    over a wrk run, divided by the requests wrk completed;
  * req/s from wrk;
  * idle RSS (VmRSS) right after start and one verification request;
  * RSS with 10,000 open keep-alive connections, each having sent one request.
For avatar also the SVG route (/ff8800.svg) CPU per request.

Usage: python3 bench/avatar.py [--reps 3] [--duration 5] [--out bench/runs/DATE-avatar]
Needs: wrk, nginx (nginx-light), taskset (util-linux), cargo, make, gcc. Python stdlib only.
"""

import argparse
import datetime
import http.client
import json
import os
import platform
import re
import resource
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER_CPU = "1"
CLIENT_CPU = "0"
CONNS_10K = 10_000
FD_LIMIT = 20_000
STATIC_TARGET = "x86_64-unknown-linux-gnu"


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(FD_LIMIT, hard) if hard != resource.RLIM_INFINITY else FD_LIMIT
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build():
    """Builds avatar (static glibc, the deployment build, and the default dynamic build) and c-epoll."""
    env = dict(os.environ, RUSTFLAGS="-C target-feature=+crt-static")
    static_dir = os.path.join(ROOT, "target", "avatar-static")
    subprocess.run(["cargo", "build", "--release", "-p", "avatar", "--target", STATIC_TARGET,
                    "--target-dir", static_dir], check=True, cwd=ROOT, env=env)
    subprocess.run(["cargo", "build", "--release", "-p", "avatar", "-p", "foxbench"], check=True, cwd=ROOT)
    subprocess.run(["make", "-C", os.path.join(ROOT, "targets", "c-epoll")], check=True)
    return {
        "avatar": os.path.join(static_dir, STATIC_TARGET, "release", "avatar"),
        "avatar-dynamic": os.path.join(ROOT, "target", "release", "avatar"),
        "c-epoll": os.path.join(ROOT, "targets", "c-epoll", "server"),
    }


class Server:
    def __init__(self, name, argv, port, pid_of=None, tmp=None):
        self.name, self.argv, self.port, self.tmp = name, argv, port, tmp
        self.proc = subprocess.Popen(["taskset", "-c", SERVER_CPU] + argv, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=raise_fd_limit)
        deadline = time.time() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError(f"{name} did not start: {argv}")
                time.sleep(0.05)
        self.pid = self.proc.pid

    def cpu_ticks(self):
        fields = open(f"/proc/{self.pid}/stat").read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime

    def rss_kib(self):
        for line in open(f"/proc/{self.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


def start(name, bins):
    port = free_port()
    if name in ("avatar", "avatar-dynamic"):
        return Server(name, [bins[name], str(port), "21", "--workers", "1", "--max-connections", "50000"], port)
    if name == "c-epoll":
        return Server(name, [bins[name], str(port), "21"], port)
    if name == "nginx":
        tmp = tempfile.mkdtemp(prefix="avatar-bench-nginx-")
        conf = f"""
worker_processes 1;
worker_rlimit_nofile {FD_LIMIT};
events {{ worker_connections {FD_LIMIT}; }}
http {{
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fcgi;
  uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
  server {{
    listen 127.0.0.1:{port};
    location / {{ add_header Cache-Control no-store always; return 302 https://avatar.example/Renard-1.png; }}
  }}
}}
"""
        with open(os.path.join(tmp, "nginx.conf"), "w") as f:
            f.write(conf)
        glob = f"daemon off; master_process off; pid {tmp}/nginx.pid; error_log stderr;"
        return Server(name, ["nginx", "-p", tmp, "-c", os.path.join(tmp, "nginx.conf"), "-g", glob], port, tmp=tmp)
    raise ValueError(name)


def verify(server, path="/"):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    c.request("GET", path)
    r = c.getresponse()
    r.read()
    c.close()
    if path == "/":
        loc = r.getheader("Location") or ""
        if r.status != 302 or not loc.startswith("https://avatar.example/Renard-"):
            raise RuntimeError(f"{server.name}: GET / gave {r.status} {loc!r}")
    elif r.status != 200 or r.getheader("Content-Type") != "image/svg+xml; charset=utf-8":
        raise RuntimeError(f"{server.name}: GET {path} gave {r.status}")


FOXBENCH = os.path.join(ROOT, "target", "release", "foxbench")


def client_command(client, url, duration):
    """The load command: foxbench load (the default), or wrk as the issue's stand-in."""
    if client == "wrk":
        return ["taskset", "-c", CLIENT_CPU, "wrk", "-t1", "-c10", f"-d{duration}s", url]
    return ["taskset", "-c", CLIENT_CPU, FOXBENCH, "load", "-q", "--json", "-", "-t", "1",
            "-c", "10", "-d", f"{duration}s", url]


def wrk_run(server, path, duration, client="foxbench"):
    url = f"http://127.0.0.1:{server.port}{path}"
    before = server.cpu_ticks()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    out = sh(client_command(client, url, duration))
    after = server.cpu_ticks()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.time() - t0
    client_s = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    if client == "wrk":
        requests = int(re.search(r"(\d+) requests in", out).group(1))
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
        errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)", out)
    else:
        result = json.loads(out)
        requests = result["requests"]["completed"]
        rps = result["throughput"]["requests_per_sec"]
        bad = result["requests"]["errors"] + result["requests"]["failed_status"]
        errors = re.search(r".+", f"{bad} failed: {result['errors']}") if bad else None
    tck = os.sysconf("SC_CLK_TCK")
    cpu_us = (after - before) / tck * 1e6
    return {"path": path, "requests": requests, "rps": rps, "server_cpu_s": cpu_us / 1e6,
            "cpu_us_per_req": cpu_us / max(requests, 1), "wall_s": wall,
            "client_cpu_us_per_req": client_s * 1e6 / max(requests, 1), "client_cpu_share": client_s / wall,
            "wrk_errors": errors.group(0) if errors else None}


def rss_with_connections(server, count=CONNS_10K):
    """Opens `count` keep-alive connections, one request each, and reads the server's RSS."""
    raise_fd_limit()
    sel = selectors.DefaultSelector()
    socks = []
    request = b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n"
    answered = 0
    try:
        for start_i in range(0, count, 500):
            pending = {}
            for _ in range(min(500, count - start_i)):
                s = socket.socket()
                s.setblocking(False)
                s.connect_ex(("127.0.0.1", server.port))
                socks.append(s)
                sel.register(s, selectors.EVENT_WRITE)
                pending[s.fileno()] = s
            deadline = time.time() + 30
            sent = set()
            while pending and time.time() < deadline:
                for key, ev in sel.select(timeout=1):
                    s = key.fileobj
                    if ev & selectors.EVENT_WRITE and s.fileno() not in sent:
                        s.send(request)
                        sent.add(s.fileno())
                        sel.modify(s, selectors.EVENT_READ)
                    elif ev & selectors.EVENT_READ:
                        data = s.recv(4096)
                        if data.startswith(b"HTTP/1.1 302"):
                            answered += 1
                        sel.unregister(s)
                        pending.pop(s.fileno(), None)
            for fd, s in list(pending.items()):
                sel.unregister(s)
        time.sleep(1.0)
        rss = server.rss_kib()
    finally:
        for s in socks:
            s.close()
        sel.close()
    return {"connections": count, "answered": answered, "rss_kib": rss}


def environment(commands):
    def first_line(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
            return (r.stdout or r.stderr).strip().splitlines()[0]
        except (OSError, IndexError):
            return "unavailable"

    def read(path):
        try:
            return open(path).read().strip()
        except OSError:
            return "unavailable"

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_model": cpu,
        "kernel": platform.release(),
        "nproc": os.cpu_count(),
        "wrk": first_line(["wrk", "--version"]),
        "nginx": first_line(["nginx", "-v"]),
        "rustc": first_line(["rustc", "--version"]),
        "gcc": first_line(["gcc", "--version"]),
        "python": sys.version.split()[0],
        "net.core.somaxconn": read("/proc/sys/net/core/somaxconn"),
        "net.ipv4.ip_local_port_range": read("/proc/sys/net/ipv4/ip_local_port_range"),
        "net.ipv4.tcp_tw_reuse": read("/proc/sys/net/ipv4/tcp_tw_reuse"),
        "ulimit_n": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
        "loadavg_at_start": read("/proc/loadavg"),
        "commands": commands,
    }


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def summarize(samples, names):
    rows = {}
    for name in names:
        s = [x for x in samples if x["server"] == name]
        rows[name] = {
            "cpu_us_302": median([x["r302"]["cpu_us_per_req"] for x in s]),
            "rps_302": median([x["r302"]["rps"] for x in s]),
            "client_share_302": median([x["r302"]["client_cpu_share"] for x in s]),
            "client_us_302": median([x["r302"]["client_cpu_us_per_req"] for x in s]),
            "idle_rss_kib": median([x["idle_rss_kib"] for x in s]),
            "rss_10k_kib": median([x["conns"]["rss_kib"] for x in s]),
            "answered_10k": min(x["conns"]["answered"] for x in s),
            "cpu_us_svg": median([x["rsvg"]["cpu_us_per_req"] for x in s if x.get("rsvg")]),
            "rps_svg": median([x["rsvg"]["rps"] for x in s if x.get("rsvg")]),
        }
    return rows


def markdown(rows, env, reps, duration, client="foxbench"):
    load = "wrk -t1 -c10 -d{0}s" if client == "wrk" else "foxbench load -t 1 -c 10 -d {0}s"
    out = [f"Pinned: server on CPU {SERVER_CPU}, {client} on CPU {CLIENT_CPU}; `{load.format(duration)}`, "
           f"keep-alive, no pipelining; {reps} alternating rounds, medians. {env['cpu_model']}, {env['nproc']} CPUs, "
           f"Linux {env['kernel']}.", "",
           f"| server | server CPU µs/req (302) | req/s (302) | {client} CPU µs/req, busy | idle RSS | RSS, 10k conns | server CPU µs/req (SVG) |",
           "|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        svg = f"{r['cpu_us_svg']:.2f}" if r["cpu_us_svg"] == r["cpu_us_svg"] else "–"
        out.append(f"| {name} | {r['cpu_us_302']:.2f} | {r['rps_302']:,.0f} | "
                   f"{r['client_us_302']:.2f}, {100 * r['client_share_302']:.0f}% | {r['idle_rss_kib'] / 1024:.2f} MiB "
                   f"| {r['rss_10k_kib'] / 1024:.1f} MiB ({r['answered_10k']} answered) | {svg} |")
    out += ["", f"{client} at about 100% of its CPU means the client, not the server, set the req/s; "
            "server CPU per request is the figure compared."]
    a = rows.get("avatar")
    if a:
        out += ["", "| bar | value | target | met |", "|---|---|---|---|"]

        def bar(label, value, target, ok):
            out.append(f"| {label} | {value} | {target} | {'yes' if ok else '**no**'} |")

        if "nginx" in rows:
            r = a["cpu_us_302"] / rows["nginx"]["cpu_us_302"]
            bar("avatar / nginx CPU per 302", f"{r:.2f}×", "≤ 0.90×", r <= 0.9)
        if "c-epoll" in rows:
            r = a["cpu_us_302"] / rows["c-epoll"]["cpu_us_302"]
            bar("avatar / c-epoll CPU per 302", f"{r:.2f}×", "≤ 1.15×", r <= 1.15)
        bar("avatar idle RSS", f"{a['idle_rss_kib'] / 1024:.2f} MiB", "≤ 2 MiB", a["idle_rss_kib"] <= 2048)
        bar("avatar RSS with 10k connections", f"{a['rss_10k_kib'] / 1024:.1f} MiB", "≤ 40 MiB",
            a["rss_10k_kib"] <= 40 * 1024)
        r = a["cpu_us_svg"] / a["cpu_us_302"]
        bar("avatar SVG / 302 CPU per request", f"{r:.2f}×", "≤ 1.5×", r <= 1.5)
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--duration", type=int, default=5)
    p.add_argument("--servers", default="avatar,nginx,c-epoll,avatar-dynamic")
    p.add_argument("--out", help="directory for SETUP.md, raw.json, summary.md")
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--client", choices=["foxbench", "wrk"], default="foxbench",
                   help="the load generator (default foxbench load; wrk was the stand-in before it)")
    args = p.parse_args()
    for tool in ([args.client] if args.client == "wrk" else []) + ["nginx", "taskset"]:
        if shutil.which(tool) is None:
            sys.exit(f"bench/avatar.py: `{tool}` is missing (Debian: wrk, nginx-light, util-linux)")
    raise_fd_limit()
    bins = {
        "avatar": os.path.join(ROOT, "target", "avatar-static", STATIC_TARGET, "release", "avatar"),
        "avatar-dynamic": os.path.join(ROOT, "target", "release", "avatar"),
        "c-epoll": os.path.join(ROOT, "targets", "c-epoll", "server"),
    } if args.no_build else build()
    names = args.servers.split(",")
    # The script itself (the 10k opener) runs on the client CPU; servers get taskset -c 1.
    os.sched_setaffinity(0, {int(CLIENT_CPU)})
    samples = []
    for rep in range(args.reps):
        for name in names:
            server = start(name, bins)
            try:
                verify(server)
                time.sleep(0.3)
                sample = {"server": name, "rep": rep, "idle_rss_kib": server.rss_kib()}
                sample["r302"] = wrk_run(server, "/", args.duration, args.client)
                if name.startswith("avatar"):
                    verify(server, "/ff8800.svg")
                    sample["rsvg"] = wrk_run(server, "/ff8800.svg", args.duration, args.client)
                sample["conns"] = rss_with_connections(server)
                samples.append(sample)
                print(f"rep {rep} {name}: {sample['r302']['cpu_us_per_req']:.2f} µs/req, "
                      f"{sample['r302']['rps']:.0f} req/s, idle {sample['idle_rss_kib']} KiB, "
                      f"10k {sample['conns']['rss_kib']} KiB", file=sys.stderr)
            finally:
                server.stop()
    commands = {
        "avatar": f"taskset -c {SERVER_CPU} avatar PORT 21 --workers 1 --max-connections 50000 "
                  "(static: RUSTFLAGS='-C target-feature=+crt-static' cargo build --release -p avatar "
                  f"--target {STATIC_TARGET})",
        "avatar-dynamic": f"taskset -c {SERVER_CPU} target/release/avatar PORT 21 --workers 1 (cargo build --release)",
        "nginx": f"taskset -c {SERVER_CPU} nginx (master_process off, worker_processes 1, return 302, access_log off)",
        "c-epoll": f"taskset -c {SERVER_CPU} targets/c-epoll/server PORT 21",
        "load": " ".join(client_command(args.client, "http://127.0.0.1:PORT/", args.duration))
                + " (and /ff8800.svg)",
        "10k": f"bench/avatar.py opener: {CONNS_10K} connections in batches of 500, one GET each, kept open; "
               f"VmRSS read 1 s after; RLIMIT_NOFILE {FD_LIMIT} for client and server",
        "script": "python3 bench/avatar.py " + " ".join(sys.argv[1:]),
    }
    env = environment(commands)
    rows = summarize(samples, names)
    table = markdown(rows, env, args.reps, args.duration, args.client)
    print(table)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "raw.json"), "w") as f:
            json.dump({"environment": env, "samples": samples, "summary": rows}, f, indent=2)
        with open(os.path.join(args.out, "summary.md"), "w") as f:
            f.write("# avatar shootout\n\n" + table)
        with open(os.path.join(args.out, "SETUP.md"), "w") as f:
            f.write("# Setup\n\n")
            for k, v in env.items():
                if k != "commands":
                    f.write(f"- {k}: `{v}`\n")
            f.write("\n## Commands\n\n")
            for k, v in commands.items():
                f.write(f"- {k}: `{v}`\n")
            f.write(f"\nPinning: every server process under `taskset -c {SERVER_CPU}`, the load generator and the 10k opener "
                    f"on CPU {CLIENT_CPU}. Keep-alive, "
                    "no pipelining. Servers alternate in each round.\n")


if __name__ == "__main__":
    main()
