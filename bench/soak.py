#!/usr/bin/env python3
"""Long runs in constant memory, and the dashboard's cost (issue 25).

1. `foxbench load --interval 10ms -d 5m` against avatar (release), with `--dashboard` and a
   headless Chromium page connected the whole time: foxbench's RSS sampled every second from
   /proc (minute 1 and minute 5 compared), the JSON's size and rows, screenshots of the page
   mid-run and at the end.
2. The same plan as two shards (`--shard 0/2`, `1/2`, one `--start-at`), merged: the merged
   series adds up to the merged totals, and the shards' schedule to the unsharded one's.
3. Client CPU per request with `--dashboard` and a connected page against without, A B A B.

foxbench on CPU 0, avatar on CPU 1, Chromium on CPU 1 (beside the server: it stands for a
browser elsewhere). Usage: python3 bench/soak.py --out bench/runs/DATE-soak [--minutes 5]
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOX = os.environ.get("FOXBENCH_BIN", os.path.join(ROOT, "target/release/foxbench"))
AVATAR = os.environ.get("AVATAR_BIN", os.path.join(ROOT, "target/release/avatar"))
CDP = os.path.join(ROOT, "crates/foxbench/tests/dashboard/cdp.py")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def wait_port(port, seconds=10):
    end = time.time() + seconds
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on {port}")


def soak(args, url, out, python):
    cmd = ["taskset", "-c", "0", FOX, "load", "-q", "-t", "1", "-c", "50", "-R", str(args.rate),
           "--interval", "10ms", "-d", f"{args.minutes}m", "--dashboard",
           "--json", os.path.join(WORK, "soak.json"), url]
    print("command:", " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    dash = line.strip().split("dashboard at ")[-1]
    rest = []
    threading.Thread(target=lambda: rest.extend(p.stderr), daemon=True).start()
    env = dict(os.environ, CDP_MID_RUN_DELAY_S=str(args.minutes * 30), CDP_CALL_TIMEOUT_S="240",
               CDP_LIVE_WAIT_S="20",
               CDP_END_WAIT_S=str(args.minutes * 60 + 120))
    report_html = os.path.join(WORK, "report", "soak.html")
    cdp = subprocess.Popen(["taskset", "-c", "1", python, CDP, "/usr/bin/chromium", dash, out,
                            report_html], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=env)
    samples = []
    t0 = time.time()
    while p.poll() is None:
        r = rss_bytes(p.pid)
        if r is not None:
            samples.append((round(time.time() - t0, 1), r))
        time.sleep(1)
    subprocess.run([FOX, "report", os.path.join(WORK, "soak.json"), "--out",
                    os.path.join(WORK, "report")], check=True, capture_output=True)
    cdp_out, cdp_err = cdp.communicate(timeout=600)
    for page in ("final-page.html", "report-page.html"):
        # Compared here, not committed: a megabyte each.
        if os.path.exists(os.path.join(out, page)):
            os.replace(os.path.join(out, page), os.path.join(WORK, page))
    same = (open(os.path.join(WORK, "final-page.html")).read()
            == open(os.path.join(WORK, "report-page.html")).read()
            if os.path.exists(os.path.join(WORK, "final-page.html")) else None)
    with open(os.path.join(out, "rss.json"), "w") as f:
        json.dump(samples, f)
    at = lambda s: min(samples, key=lambda x: abs(x[0] - s))
    m1, m5 = at(60), at(args.minutes * 60 - 2)
    r = json.load(open(os.path.join(WORK, "soak.json")))
    size = os.path.getsize(os.path.join(WORK, "soak.json"))
    return {
        "exit": p.returncode, "stderr": "".join(rest)[-500:],
        "rss_minute_1": m1, "rss_end": m5, "rss_growth_bytes": m5[1] - m1[1],
        "rss_max_bytes": max(x[1] for x in samples),
        "json_bytes": size, "rows": len(r["intervals"]), "segments": r.get("interval_segments"),
        "intervals_run": round(r["elapsed_s"] / 0.01),
        "completed": r["requests"]["completed"],
        "series_sum": sum(i["requests"] for i in r["intervals"]),
        "client_us_per_request": r["client"]["cpu_us_per_request"],
        "cdp": cdp_out.strip() or cdp_err[-500:],
        "final_page_equals_report": same,
    }


def shards(args, url, out):
    procs = []
    for i in range(2):
        cmd = ["taskset", "-c", "0", FOX, "load", "-q", "-t", "1", "-c", "50", "-R",
               str(args.rate), "--interval", "10ms", "-d", f"{args.minutes}m",
               "--shard", f"{i}/2", "--start-at", "+3s",
               "--json", os.path.join(WORK, f"shard-{i}.json"), url]
        procs.append(subprocess.Popen(cmd, env=dict(os.environ, FOXBENCH_START_BASE=START_BASE)))
    for p in procs:
        p.wait()
    merged = os.path.join(WORK, "merged.json")
    m = subprocess.run([FOX, "merge", "-q", "-o", merged, os.path.join(WORK, "shard-0.json"),
                        os.path.join(WORK, "shard-1.json")], capture_output=True, text=True)
    s = [json.load(open(os.path.join(WORK, f"shard-{i}.json"))) for i in range(2)]
    r = json.load(open(merged))
    return {
        "merge_exit": m.returncode, "merge_stderr": m.stderr[-300:],
        "shard_rows": [len(x["intervals"]) for x in s],
        "merged_rows": len(r["intervals"]),
        "merged_completed": r["requests"]["completed"],
        "shards_completed": sum(x["requests"]["completed"] for x in s),
        "merged_series_sum": sum(i["requests"] for i in r["intervals"]),
        "merged_errors": r["requests"]["errors"],
        "merged_series_errors": sum(i["errors"] for i in r["intervals"]),
        "merged_scheduled": r["open"]["scheduled"],
        "shards_scheduled": [x["open"]["scheduled"] for x in s],
        "json_bytes": [os.path.getsize(os.path.join(WORK, f"shard-{i}.json")) for i in range(2)],
    }


def cpu_pairs(args, url, out, python):
    rows = []
    own = {}
    for i in range(args.pairs):
        for mode in ("plain", "dashboard"):
            j = os.path.join(WORK, f"cpu-{mode}-{i}.json")
            # A fixed rate below the server's capacity: both runs send the same requests at
            # the same pace, whatever the browser beside the server costs it.
            cmd = ["taskset", "-c", "0", FOX, "load", "-q", "-t", "1", "-c", "10", "-d",
                   f"{args.cpu_seconds}s", "-R", str(args.cpu_rate), "--json", j, url]
            if mode == "plain":
                subprocess.run(cmd, check=True)
                continue
            p = subprocess.Popen(cmd[:6] + ["--dashboard"] + cmd[6:], stderr=subprocess.PIPE,
                                 text=True)
            dash = p.stderr.readline().strip().split("dashboard at ")[-1]
            with tempfile.TemporaryDirectory() as d:
                cdp = subprocess.Popen(
                    ["taskset", "-c", "1", python, CDP, "/usr/bin/chromium", dash, d,
                     os.path.join(d, "none.html")], stdout=subprocess.PIPE,
                    # The browser stands for one on another machine: below the server here.
                    preexec_fn=lambda: os.nice(19),
                    stderr=subprocess.PIPE, text=True,
                    env=dict(os.environ, CDP_END_WAIT_S=str(args.cpu_seconds + 30),
                             CDP_LIVE_WAIT_S="20",
                             CDP_REPORT_WAIT_S="0"))
                err = p.stderr.read()
                p.wait()
                own[i] = next((float(x.split("(")[1].split()[0]) for x in err.splitlines()
                               if "the dashboard's threads used" in x), None)
                try:
                    cdp.communicate(timeout=90)
                except subprocess.TimeoutExpired:
                    cdp.kill()
        a = json.load(open(os.path.join(WORK, f"cpu-plain-{i}.json")))
        b = json.load(open(os.path.join(WORK, f"cpu-dashboard-{i}.json")))
        ca, cb = a["client"]["cpu_us_per_request"], b["client"]["cpu_us_per_request"]
        rows.append({"plain_us": ca, "dashboard_us": cb, "ratio": cb / ca,
                     "dashboard_threads_us": own.get(i),
                     "plain_rps": a["throughput"]["requests_per_sec"],
                     "dashboard_rps": b["throughput"]["requests_per_sec"]})
        print(f"pair {i}: plain {ca:.2f} µs/req, --dashboard + page {cb:.2f} µs/req, "
              f"ratio {cb / ca:.3f}; the dashboard's own threads {own.get(i)} µs/req", flush=True)
    return {"pairs": rows, "median_ratio": statistics.median(r["ratio"] for r in rows)}


def main():
    global START_BASE
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=5)
    ap.add_argument("--rate", type=int, default=10000)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--cpu-seconds", type=int, default=20)
    ap.add_argument("--cpu-rate", type=int, default=10000)
    ap.add_argument("--python", default=sys.executable, help="a python with websocket-client")
    ap.add_argument("--skip", default="", help="comma-separated: soak,shards,cpu")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    skip = set(filter(None, args.skip.split(",")))
    port = free_port()
    srv = subprocess.Popen(["taskset", "-c", "1", AVATAR, str(port), "21"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        url = f"http://127.0.0.1:{port}/"
        res = {"loadavg_start": open("/proc/loadavg").read().split()[:3], "nproc": os.cpu_count(),
               "version": subprocess.run([FOX, "--version"], capture_output=True,
                                         text=True).stdout.strip()}
        print(res, flush=True)
        if "soak" not in skip:
            res["soak"] = soak(args, url, args.out, args.python)
            print(json.dumps(res["soak"], indent=1), flush=True)
        if "shards" not in skip:
            START_BASE = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            res["shards"] = shards(args, url, args.out)
            print(json.dumps(res["shards"], indent=1), flush=True)
        if "cpu" not in skip:
            res["cpu"] = cpu_pairs(args, url, args.out, args.python)
            print(json.dumps(res["cpu"], indent=1), flush=True)
        res["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        with open(os.path.join(args.out, "raw.json"), "w") as f:
            json.dump(res, f, indent=1)
    finally:
        srv.terminate()
        srv.wait()


START_BASE = ""
# The results (megabytes each) go here; --out gets the figures and the screenshots.
WORK = tempfile.mkdtemp(prefix="foxbench-soak-")
if __name__ == "__main__":
    main()
