#!/usr/bin/env python3
"""Counts the client's user-space instructions per request with callgrind: a figure that a
busy machine does not move (BENCHMARKING.md: the same total twice, with the other core
loaded), for comparing two builds of foxbench, and foxbench with h2load over HTTP/2.

Each client runs under `valgrind --tool=callgrind` twice, for N and 2N requests, against the
same server; instructions per request are (I(2N) - I(N)) / N, so start-up and exit cancel
out. foxbench runs with `--interval 1h`: its per-interval work is paid per second, and
valgrind's slowdown would charge it to the requests. Only user space is counted: the kernel's TCP work, most of a request's cost on
loopback, is not (bench/load.py measures CPU time). Servers: targets/c-epoll for HTTP/1.1,
nginx (`listen ... http2`, made here) for h2c. Client on CPU 0, server on CPU 1. Only ever
sends traffic to 127.0.0.1. Python 3 stdlib only.

    python3 bench/instructions.py --foxbench target/release/foxbench \\
        --other before=/path/to/older/foxbench [--requests 20000] [--json out.json]
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"instructions.py: {what} exited before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"instructions.py: {what} did not listen on {port} within 10 s")


def start_c_epoll():
    subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "targets/c-epoll")], check=True)
    port = free_port()
    p = subprocess.Popen(["taskset", "-c", "1", os.path.join(ROOT, "targets/c-epoll/server"),
                          str(port), "21"], stdout=subprocess.DEVNULL)
    wait_port(port, p, "targets/c-epoll")
    return p, f"http://127.0.0.1:{port}/"


def start_nginx_h2c(tmp):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    port = free_port()
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off; master_process off; worker_processes 1; pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 1024; }}
http {{ client_body_temp_path {tmp}/b; proxy_temp_path {tmp}/p; fastcgi_temp_path {tmp}/f;
  uwsgi_temp_path {tmp}/u; scgi_temp_path {tmp}/s; access_log off; keepalive_requests 10000000;
  server {{ listen 127.0.0.1:{port} http2; location / {{ return 302 https://avatar.example/Renard-1.png; }} }} }}
""")
    p = subprocess.Popen(["taskset", "-c", "1", nginx, "-p", tmp, "-c", conf])
    wait_port(port, p, "nginx")
    return p, f"http://127.0.0.1:{port}/"


def instructions(cmd, tmp):
    """Runs cmd under callgrind on CPU 0; returns the instructions it executed."""
    out = os.path.join(tmp, "callgrind.out.%p")
    r = subprocess.run(["taskset", "-c", "0", "valgrind", "--tool=callgrind",
                        f"--callgrind-out-file={out}", *cmd],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"instructions.py: {' '.join(cmd)} failed ({r.returncode}): {r.stderr[-2000:]}")
    m = re.findall(r"Collected : (\d+)", r.stderr)
    if not m:
        sys.exit(f"instructions.py: no callgrind total in: {r.stderr[-2000:]}")
    return sum(int(x) for x in m)


def speaks_h2(binary):
    """Builds from before `--http2` have no h2 rows."""
    r = subprocess.run([binary, "load", "--help"], capture_output=True, text=True)
    return "--http2" in r.stdout


def per_request(make_cmd, n, tmp):
    small = instructions(make_cmd(n), tmp)
    large = instructions(make_cmd(2 * n), tmp)
    return (large - small) / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--foxbench", default=os.path.join(ROOT, "target/release/foxbench"))
    ap.add_argument("--other", action="append", default=[], metavar="NAME=PATH",
                    help="another foxbench build to compare with (repeatable)")
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    for tool in ["valgrind", "taskset"]:
        if not shutil.which(tool):
            sys.exit(f"instructions.py: {tool} missing: apt-get install {tool if tool == 'valgrind' else 'util-linux'}")
    n = args.requests
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        builds = [("foxbench", args.foxbench)] + [tuple(o.split("=", 1)) for o in args.other]
        server, url = start_c_epoll()
        try:
            for c in [10, 100]:
                for name, binary in builds:
                    fn = lambda k, b=binary, c=c: [b, "load", "-q", "--interval", "1h", "-t", "1", "-c", str(c), "-n", str(k), url]
                    rows.append(dict(scenario=f"http/1.1 keep-alive c{c}", client=name,
                                     per_request=per_request(fn, n, tmp)))
                    print(f"{rows[-1]['scenario']:32} {name:10} {rows[-1]['per_request']:10.0f} instructions/request", flush=True)
        finally:
            server.kill()
            server.wait()
        ngx_tmp = tempfile.mkdtemp(dir=tmp)
        server, url = start_nginx_h2c(ngx_tmp)
        try:
            for c, m in [(10, 1), (10, 10), (100, 10)]:
                clients = [(name, lambda k, b=binary, c=c, m=m: [b, "load", "-q", "--interval", "1h", "-t", "1", "--http2", "--streams", str(m),
                                                               "-c", str(c), "-n", str(k), url])
                           for name, binary in builds if speaks_h2(binary)]
                if shutil.which("h2load"):
                    clients.append(("h2load", lambda k, c=c, m=m: ["h2load", "-t", "1", "-c", str(c), "-m", str(m), "-n", str(k), url]))
                for name, fn in clients:
                    rows.append(dict(scenario=f"h2c c{c} x{m} streams", client=name, per_request=per_request(fn, n, tmp)))
                    print(f"{rows[-1]['scenario']:32} {name:10} {rows[-1]['per_request']:10.0f} instructions/request", flush=True)
        finally:
            server.kill()
            server.wait()
    print()
    for sc in dict.fromkeys(r["scenario"] for r in rows):
        fox = next(r["per_request"] for r in rows if r["scenario"] == sc and r["client"] == "foxbench")
        for r in rows:
            if r["scenario"] == sc and r["client"] != "foxbench":
                print(f"{sc:32} foxbench / {r['client']:8} {fox / r['per_request']:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(requests=n, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
