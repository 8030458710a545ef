#!/usr/bin/env python3
"""The open model's precision: does foxbench send on time, and hold the rate it is asked?

avatar runs on CPU 1, foxbench (one thread) on CPU 0. Each round runs, in order:
  - a closed loop on one connection: the server's own latency with no queueing;
  - the open model at -R 1000, 5000 and 20000 on 50 connections: its p50 against the
    closed loop's, and the p99 of the client's send lateness (open.send_lateness);
  - the open model at 1k, 10k and 100k req/s: the achieved rate against the asked one.
Figures are medians over --repeats rounds. Only ever sends traffic to 127.0.0.1.
"""

import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(dist, p):
    if not dist:
        return None
    for x in dist.get("percentiles", []):
        if abs(x["percentile"] - p) < 1e-9:
            return x["value_us"]
    return None


def load(foxbench, url, args):
    cmd = ["taskset", "-c", "0", foxbench, "load", "-t", "1", "-q", "--json", "-"] + args + [url]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    return cmd, json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--foxbench", default=os.path.join(ROOT, "target/release/foxbench"))
    ap.add_argument("--avatar", default=os.path.join(ROOT, "target/release/avatar"))
    ap.add_argument("--out", help="directory for raw.json, summary.md and SETUP.md")
    args = ap.parse_args()
    for b in (args.foxbench, args.avatar):
        if not os.access(b, os.X_OK):
            sys.exit(f"{b} not found: cargo build --release -p foxbench -p avatar")
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = subprocess.Popen(["taskset", "-c", "1", args.avatar, str(port), "21"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    runs = []
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit("avatar did not listen")
                time.sleep(0.02)
        d = f"{args.seconds}s"
        plan = [("closed c1", ["-c", "1", "-d", d])]
        plan += [(f"R {r}", ["-c", "50", "-d", d, "-R", str(r)]) for r in (1000, 5000, 20000)]
        plan += [(f"rate {r}", ["-c", "100", "-d", d, "-R", str(r)]) for r in (10000, 100000)]
        for rnd in range(args.repeats):
            for name, flags in plan:
                cmd, j = load(args.foxbench, url, flags)
                o = j.get("open") or {}
                r = dict(round=rnd, name=name, cmd=cmd,
                         p50_us=pct(j["latency"], 50.0), p99_us=pct(j["latency"], 99.0),
                         service_p50_us=pct(o.get("service"), 50.0),
                         lateness_p50_us=pct(o.get("send_lateness"), 50.0),
                         lateness_p99_us=pct(o.get("send_lateness"), 99.0),
                         late=o.get("late"), sent=j["requests"]["sent"],
                         elapsed_s=j["elapsed_s"], scheduled=o.get("scheduled"),
                         client_cpu_percent=j["client"]["cpu_percent"],
                         rps=j["throughput"]["requests_per_sec"], warnings=o.get("warnings"))
                runs.append(r)
                print(f"round {rnd + 1} {name}: p50 {r['p50_us']} µs, p99 {r['p99_us']} µs, "
                      f"lateness p99 {r['lateness_p99_us']} µs, sent {r['sent']} in "
                      f"{r['elapsed_s']:.2f} s, client CPU {r['client_cpu_percent']:.0f}%",
                      file=sys.stderr)
    finally:
        os.killpg(server.pid, 15)
        server.wait()

    def med(name, key):
        xs = [r[key] for r in runs if r["name"] == name and r[key] is not None]
        return statistics.median(xs) if xs else None

    base = med("closed c1", "p50_us")
    lines = ["### Send precision against avatar (medians of %d rounds)" % args.repeats, "",
             "| load | p50 | p50 / closed-loop p50 | p99 | send lateness p50 | send lateness p99 | late | client CPU |",
             "|---|---|---|---|---|---|---|---|"]
    for name in ["closed c1", "R 1000", "R 5000", "R 20000"]:
        p50 = med(name, "p50_us")
        ratio = f"{p50 / base:.2f}×" if p50 and base else "n/a"
        f = lambda v: "n/a" if v is None else f"{v:.1f} µs"
        lines.append(f"| {name} | {f(p50)} | {ratio} | {f(med(name, 'p99_us'))} | "
                     f"{f(med(name, 'lateness_p50_us'))} | {f(med(name, 'lateness_p99_us'))} | "
                     f"{med(name, 'late') if name != 'closed c1' else 'n/a'} | "
                     f"{med(name, 'client_cpu_percent'):.0f}% |")
    lines += ["", "### Achieved rate", "", "| asked | sent per second | error |", "|---|---|---|"]
    for asked, name in [(1000, "R 1000"), (10000, "rate 10000"), (100000, "rate 100000")]:
        rates = [r["sent"] / r["elapsed_s"] for r in runs if r["name"] == name]
        got = statistics.median(rates)
        lines.append(f"| {asked} | {got:.0f} | {100 * (got - asked) / asked:+.2f}% |")
    lines.append("")
    lines.append(f"foxbench -t 1 on CPU 0, avatar on CPU 1, {args.seconds} s per run; open-model "
                 f"runs on 50 connections (100 for the rate runs). p50/p99 are the corrected "
                 f"latency (from each request's due instant).")
    md = "\n".join(lines) + "\n"
    print(md)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "raw.json"), "w") as f:
            json.dump(dict(argv=sys.argv, runs=runs), f, indent=1)
        with open(os.path.join(args.out, "summary.md"), "w") as f:
            f.write(md)
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                    if l.startswith("model name")), "unknown")
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        with open(os.path.join(args.out, "SETUP.md"), "w") as f:
            f.write(f"# Setup\n\n- Date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}\n"
                    f"- Command: `{' '.join(sys.argv)}`\n- Commit: {commit}\n"
                    f"- CPU: {cpu}; nproc {os.cpu_count()}; kernel {platform.release()}\n"
                    f"- Load average at the end: {open('/proc/loadavg').read().strip()}\n"
                    f"- Pinning: foxbench `taskset -c 0`, avatar `taskset -c 1`\n")


if __name__ == "__main__":
    main()
