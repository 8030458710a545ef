#!/usr/bin/env python3
"""A B A B: avatar's h3 server CPU per request, main (A) against avgso (B).

Server pinned to CPU 1 (--workers 1), client to CPU 0; CPU from /proc/PID/stat
utime+stime around the client's run, divided by completed requests."""
import json, os, subprocess, sys, time, re, urllib.request

BINS = {"A": "/work/wt/avgso-relA/release/avatar", "B": "/work/wt/avgso-relB/release/avatar"}
CLIENT = "/work/target-prof/release/deps/foxbench-5e3e4869947b6399"
TLS = "/tmp/m38/tls"
TCK = os.sysconf("SC_CLK_TCK")
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
PATHS = sys.argv[2].split(",") if len(sys.argv) > 2 else ["/", "/ff8800.svg"]
DUR = sys.argv[3] if len(sys.argv) > 3 else "3s"

def cpu_ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])

def snmp():
    lines = [l.split() for l in open("/proc/net/snmp") if l.startswith("Udp:")]
    d = dict(zip(lines[0][1:], map(int, lines[1][1:])))
    return d["RcvbufErrors"], d["SndbufErrors"]

def cpus():
    l = [x.split() for x in open("/proc/stat") if x.startswith("cpu0") or x.startswith("cpu1")]
    return [(sum(map(int, r[1:])), int(r[4]) + int(r[5])) for r in l]

def run(label, path, port):
    cmd = ["taskset", "-c", "1", BINS[label], str(port), "21", "--h3-listen", f"127.0.0.1:{port}",
           "--cert", f"{TLS}/cert.pem", "--key", f"{TLS}/key.pem", "--workers", "1"]
    srv = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = srv.stderr.readline()  # waits for the first line: the listening line
    deadline = time.time() + 10
    while "https://" not in line and time.time() < deadline:
        line = srv.stderr.readline()
    out = f"/tmp/m39/run-{label}-{port}.json"
    c0, s0, p0 = cpu_ticks(srv.pid), snmp(), cpus()
    t0 = time.time()
    subprocess.run(["taskset", "-c", "0", CLIENT, "load", "--http3", "--cacert", f"{TLS}/ca.pem",
                    "-c", "10", "--streams", "10", "-d", DUR, f"https://127.0.0.1:{port}{path}",
                    "--json", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.time() - t0
    c1, s1, p1 = cpu_ticks(srv.pid), snmp(), cpus()
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
    srv.terminate(); srv.wait(timeout=20)
    r = json.load(open(out))
    req = r["requests"]
    ok = req["ok"]
    cpu_s = (c1 - c0) / TCK
    m = {k: int(v) for k, v in re.findall(r'^(avatar_h3_(?:datagrams_total|udp_calls_total)\{[^}]*\}) (\d+)$', metrics, re.M)}
    busy = [1 - (b[1] - a[1]) / max(1, b[0] - a[0]) for a, b in zip(p0, p1)]
    return dict(label=label, path=path, ok=ok, completed=req["completed"], errors=req["errors"],
                rps=ok / wall, cpu_s=cpu_s, us_per_req=cpu_s * 1e6 / max(ok, 1),
                udp_drops=(s1[0] - s0[0], s1[1] - s0[1]), cpu_busy=[round(x, 2) for x in busy],
                metrics=m)

port = 18000 + os.getpid() % 1000
res = []
for path in PATHS:
    for rnd in range(ROUNDS):
        for label in ["A", "B"]:
            port += 1
            x = run(label, path, port)
            res.append(x)
            print(json.dumps(x), flush=True)
print("---")
for path in PATHS:
    ratios = []
    for rnd in range(ROUNDS):
        a, b = [x for x in res if x["path"] == path][2 * rnd: 2 * rnd + 2]
        ratios.append(b["us_per_req"] / a["us_per_req"])
        print(f"{path} round {rnd}: A {a['us_per_req']:.1f} us/req ({a['ok']} ok), B {b['us_per_req']:.1f} us/req ({b['ok']} ok), B/A {ratios[-1]:.3f}")
    ratios.sort()
    print(f"{path}: median B/A server CPU per request {ratios[len(ratios)//2]:.3f} over {ROUNDS} rounds")
