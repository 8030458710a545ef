#!/usr/bin/env python3
"""Capacity under a latency objective: the highest constant rate each server holds p99 < 10 ms.

For each of avatar, c-epoll, nginx, go-nethttp and java-httpserver (the avatar challenge's
builds and start commands, suites/avatar.toml), the server runs pinned to CPU 1 and
`foxbench load --find-max 'p99<10ms'` (one thread, 100 connections, keep-alive) pinned to
CPU 0. Printed per server: the rate found, the bracket, why the search stopped, whether the
client was saturated (a client-bound capacity is foxbench's limit, not the server's), the
p99 at 50/80/100/110% of the rate, and how long the search took. JVM targets get a closed
warm-up of --warmup seconds first. Only ever sends traffic to 127.0.0.1.

Usage: python3 bench/capacity.py [--objective 'p99<10ms'] [--max-time 60] [--out DIR]
Needs: cargo, gcc, go, javac/java, nginx (nginx-light), taskset. Python stdlib only.
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER_CPU = "1"
CLIENT_CPU = "0"
IMAGES = "21"

# name, directory, build, start, JIT (warm up first): as in suites/avatar.toml.
TARGETS = [
    ("avatar", "targets/avatar", "sh build.sh {out}", "{out}/avatar {port} 21", False),
    ("c-epoll", "targets/c-epoll",
     "cc -std=c11 -O2 -Wall -o {out}/server server.c -pthread", "{out}/server {port} 21", False),
    ("nginx", "targets/nginx", "sh run.sh -t {out} 8080 21", "sh run.sh {out} {port} 21", False),
    ("go-nethttp", "targets/go-nethttp",
     "GOTOOLCHAIN=local go build -o {out}/server .", "{out}/server {port} 21", False),
    ("java-httpserver", "targets/java-httpserver", "javac -d {out} AvatarServer.java",
     "java -Xmx32m -XX:+UseSerialGC -cp {out} AvatarServer {port} 21", True),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def stop(proc):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, 15)
            proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, 9)
            proc.wait()


def p99(window):
    c = window.get("corrected") if window else None
    return c["p99_us"] if c else None


def human(us):
    if us is None:
        return "-"
    return f"{us / 1000:.2f}ms" if us >= 1000 else f"{us:.0f}µs"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objective", default="p99<10ms")
    ap.add_argument("--max-time", type=int, default=60, help="seconds per server")
    ap.add_argument("--window", default="2s")
    ap.add_argument("--connections", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=6, help="seconds of closed load for JITs")
    ap.add_argument("--targets", help="comma-separated subset")
    ap.add_argument("--foxbench", default=os.path.join(ROOT, "target/release/foxbench"))
    ap.add_argument("--avatar", help="an avatar binary to use instead of the suite's static build "
                    "(e.g. target/release/avatar; said so in SETUP.md)")
    ap.add_argument("--out", help="directory for raw.json, summary.md and SETUP.md")
    args = ap.parse_args()
    if not os.access(args.foxbench, os.X_OK):
        sys.exit(f"{args.foxbench} not found: cargo build --release -p foxbench")
    wanted = set(args.targets.split(",")) if args.targets else None
    build_root = tempfile.mkdtemp(prefix="foxbench-capacity-")
    load_before = os.getloadavg()
    results = []
    for name, rel, build, start, jit in TARGETS:
        if wanted and name not in wanted:
            continue
        out = os.path.join(build_root, name)
        os.makedirs(out)
        d = os.path.join(ROOT, rel)
        if name == "avatar" and args.avatar:
            build = f"cp {shlex.quote(os.path.abspath(args.avatar))} {{out}}/avatar"
        b = subprocess.run(build.format(out=out), shell=True, cwd=d, capture_output=True, text=True)
        if b.returncode != 0:
            print(f"{name}: build failed: {b.stderr.strip()[-300:]}", file=sys.stderr)
            results.append({"target": name, "error": "build failed"})
            continue
        port = free_port()
        cmd = ["taskset", "-c", SERVER_CPU] + shlex.split(start.format(out=out, port=port))
        server = subprocess.Popen(cmd, cwd=d, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            if not wait_listening(port, server):
                results.append({"target": name, "error": "did not listen"})
                continue
            url = f"http://127.0.0.1:{port}/"
            pin = ["taskset", "-c", CLIENT_CPU, args.foxbench, "load", "-t", "1", "-q"]
            if jit:
                subprocess.run(pin + ["-c", "10", "-d", f"{args.warmup}s", url],
                               capture_output=True, timeout=args.warmup + 30)
            fm = pin + ["-c", str(args.connections), "--json", "-",
                        "--find-max", args.objective, "--max-time", f"{args.max_time}s",
                        "--window", args.window, url]
            t0 = time.monotonic()
            r = subprocess.run(fm, capture_output=True, text=True, timeout=args.max_time + 60)
            wall = time.monotonic() - t0
            if r.returncode not in (0, 1) or not r.stdout:
                results.append({"target": name, "error": f"exit {r.returncode}: {r.stderr.strip()}"})
                continue
            c = json.loads(r.stdout)["capacity"]
            spectrum = {}
            for row in c["spectra"]:
                spectrum[f"{row['share_percent']:.0f}%"] = p99(c["windows"][row["window"]])
            results.append({
                "target": name,
                "command": " ".join(fm[:-1]) + " URL",
                "rate_per_sec": c["rate_per_sec"],
                "bracket": c["bracket"],
                "stopped": c["stopped"],
                "client_bound": c["client_bound"],
                "windows": len(c["windows"]),
                "elapsed_s": c["elapsed_s"],
                "wall_s": wall,
                "p99_us_at": spectrum,
                "capacity": c,
            })
        finally:
            stop(server)
    load_after = os.getloadavg()

    lines = [
        f"Capacity under `{args.objective}`: server on CPU {SERVER_CPU}, foxbench (1 thread, "
        f"{args.connections} connections) on CPU {CLIENT_CPU}, windows of {args.window}, "
        f"budget {args.max_time}s per server.",
        f"Load average before {load_before[0]:.2f}, after {load_after[0]:.2f}.",
        "",
        "| server | capacity (req/s) | bracket | stopped | client-bound | p99 at 50/80/100/110% | search |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['target']} | {r['error']} | | | | | |")
            continue
        b = r["bracket"]
        br = f"{b['held_per_sec'] or '-'}..{b['failed_per_sec'] or '-'}"
        sp = " / ".join(human(r["p99_us_at"].get(k)) for k in ("50%", "80%", "100%", "110%"))
        rate = f"{r['rate_per_sec']:.0f}" if r["rate_per_sec"] else "none"
        lines.append(
            f"| {r['target']} | {rate} | {br} | {r['stopped']} | "
            f"{'**yes**' if r['client_bound'] else 'no'} | {sp} | "
            f"{r['windows']} windows, {r['elapsed_s']:.1f} s |")
    summary = "\n".join(lines) + "\n"
    print(summary)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "raw.json"), "w") as f:
            json.dump({"objective": args.objective, "load_before": load_before,
                       "load_after": load_after, "results": results}, f, indent=2)
        with open(os.path.join(args.out, "summary.md"), "w") as f:
            f.write(summary)
        with open(os.path.join(args.out, "SETUP.md"), "w") as f:
            f.write(
                f"Date: {datetime.datetime.now(datetime.timezone.utc).isoformat()}\n"
                f"Machine: {platform.processor() or platform.machine()}, kernel "
                f"{platform.release()}, nproc {os.cpu_count()}\n"
                f"Command: python3 bench/capacity.py {' '.join(shlex.quote(a) for a in sys.argv[1:])}\n"
                f"Client: foxbench pinned to CPU {CLIENT_CPU}; servers pinned to CPU {SERVER_CPU}.\n"
                "Keep-alive HTTP/1.1, no pipelining, GET / (the avatar redirect).\n"
                + (f"avatar: {args.avatar} (not the suite's static build)\n" if args.avatar else ""))


if __name__ == "__main__":
    main()
