#!/usr/bin/env python3
"""The database targets by hand, before the suite services land: each target at 10 and
150 connections with pool 2 and pool 150, against one PostgreSQL.

    python3 bench/database.py FOXBENCH [-d 5s] [--only go-sql,node-pg]

PostgreSQL (targets/database/postgres/run.sh) and each target run on CPU 1, foxbench on
CPU 0 (`taskset`). Builds come from suites/database.toml into a temporary directory. Per
cell: a 3 s warm-up at the same connection count (JIT runtimes), then `foxbench load -c N
-d D --json` on random ids; the cell's line gives req/s, p50, p99, errors, PostgreSQL's
CPU and the target's CPU (utime+stime of their process trees over the measured run, as %
of one CPU) and the load average at its end. Prints a Markdown table.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "targets", "database"))
import check  # noqa: E402  (the checker's Postgres and Target helpers)

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pids):
    """CPU seconds of a process tree: each live process's utime+stime plus cutime+cstime,
    the time of children it reaped. A PostgreSQL backend that exits (go-sql's pool closes a
    connection whose request was cancelled, as at the end of every run) moves its time into
    the postmaster's cutime, so the sum stays whole; summing live processes alone lost it."""
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                s = f.read()
        except OSError:
            continue
        fields = s[s.rindex(")") + 2:].split()
        total += sum(int(x) for x in fields[11:15])
    return total / TICK


def pct(dist, p):
    return next(x["value_us"] for x in dist["percentiles"] if abs(x["percentile"] - p) < 1e-9)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("foxbench")
    ap.add_argument("-d", default="5s")
    ap.add_argument("--only", default="")
    o = ap.parse_args()
    with open(check.SUITE, "rb") as f:
        suite = tomllib.load(f)
    names = [t["name"] for t in suite["target"]]
    if o.only:
        names = [n for n in names if n in o.only.split(",")]
    tmp = tempfile.mkdtemp(prefix="dbbench-")
    pg = check.Postgres(tmp)
    os.sched_setaffinity(pg.pid, {1})  # run.sh and everything it starts inherit CPU 1
    rows = []
    try:
        if not pg.ready():
            sys.exit("postgres did not start: " + pg.text()[-800:])
        for name in names:
            entry = next(t for t in suite["target"] if t["name"] == name)
            out = os.path.join(tmp, name)
            os.mkdir(out)
            src = os.path.join(REPO, entry["dir"])
            r = subprocess.run(["sh", "-c", entry["build"].replace("{out}", out).replace("{dir}", src)],
                               cwd=src, capture_output=True, text=True)
            if r.returncode:
                print(f"{name}: build failed: {r.stderr[-500:]}", file=sys.stderr)
                continue
            for pool in (2, 150):
                t = check.Target(entry, tmp, out, pg, pool)
                os.sched_setaffinity(t.pid, {1})
                try:
                    if not t.ready():
                        print(f"{name} pool {pool}: not ready: {t.text()[-500:]}", file=sys.stderr)
                        continue
                    for c in (10, 150):
                        rows.append(cell(o, name, pool, c, t, pg, tmp))
                        print(rows[-1], flush=True)
                finally:
                    t.stop(10)
                    t.kill()
    finally:
        pg.stop(10)
        pg.kill()
    print()
    print("| target | pool | c | req/s | p50 | p99 | errors | postgres CPU | target CPU | load avg |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(r)


def cell(o, name, pool, c, t, pg, tmp):
    url = f"http://127.0.0.1:{t.port}/doc/{{int:1-10000}}"
    fox = ["taskset", "-c", "0", o.foxbench, "load", "-q", "-c", str(c)]
    subprocess.run(fox + ["-d", "3s", url], check=True, stdout=subprocess.DEVNULL)
    js = os.path.join(tmp, f"{name}-{pool}-{c}.json")
    pg0, t0 = cpu_s(check.tree(pg.pid)), cpu_s(check.tree(t.pid))
    w0 = time.monotonic()
    subprocess.run(fox + ["-d", o.d, "--json", js, url], check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - w0
    pg1, t1 = cpu_s(check.tree(pg.pid)), cpu_s(check.tree(t.pid))
    with open(js) as f:
        res = json.load(f)
    lat = res["latency"]
    errors = sum(res["errors"].values()) if isinstance(res["errors"], dict) else res["errors"]
    rps = lat["count"] / res["elapsed_s"]
    load = open("/proc/loadavg").read().split()[0]
    return (f"| {name} | {pool} | {c} | {rps:,.0f} | {pct(lat, 50) / 1000:.2f} ms | {pct(lat, 99) / 1000:.2f} ms "
            f"| {errors} | {100 * (pg1 - pg0) / wall:.0f}% | {100 * (t1 - t0) / wall:.0f}% | {load} |")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    main()
