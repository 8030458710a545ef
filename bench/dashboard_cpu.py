"""The dashboard's CPU cost (issue 25): `foxbench load -c 10 -t 1 -d 10s` against avatar, with and without
--dashboard (an SSE client reading the events stream: a page without a browser), A B A B, for two
builds; client on CPU 0, avatar on CPU 1. Prints one line per run: the process's CPU per request
(utime+stime of the child), and the CPU of the dashboard's own threads as foxbench prints it.

Usage: python3 bench/dashboard_cpu.py BEFORE_FOXBENCH AFTER_FOXBENCH AVATAR [ROUNDS]
"""
import json, os, re, socket, subprocess, sys, threading, time

BEFORE, AFTER, AVATAR = sys.argv[1], sys.argv[2], sys.argv[3]
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 2
PORT = 6767
srv = subprocess.Popen(["taskset", "-c", "1", AVATAR, str(PORT), "21"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(0.5)

def sse(url, stop):
    rest = url[len("http://"):]
    host, path = rest.split("/", 1)
    h, p = host.split(":")
    s = socket.create_connection((h, int(p)))
    s.sendall(f"GET /{path}events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    s.settimeout(1)
    n = 0
    while not stop.is_set():
        try:
            b = s.recv(65536)
            if not b: break
            n += len(b)
        except socket.timeout:
            pass
    s.close()

def one(binary, dash):
    out = f"/tmp/foxbench-dashboard-cpu.json"
    args = ["taskset", "-c", "0", binary, "load", "-c", "10", "-t", "1", "-d", "10s", "-q", "--json", out]
    if dash: args.append("--dashboard")
    args.append(f"http://127.0.0.1:{PORT}/")
    t0 = os.times()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stop = threading.Event(); th = None
    if dash:
        line = p.stderr.readline()
        m = re.search(r"dashboard at (\S+)", line)
        th = threading.Thread(target=sse, args=(m.group(1), stop)); th.start()
    err = p.stderr.read()
    p.wait()
    stop.set()
    if th: th.join()
    t1 = os.times()
    cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    v = json.load(open(out))
    req = v["requests"]["completed"]
    own = None
    for x in err.splitlines():
        m = re.search(r"dashboard's threads used ([0-9.]+) s of CPU \(([0-9.]+) µs per request", x)
        if m: own = (float(m.group(1)), float(m.group(2)))
    return cpu, req, own

rows = []
for r in range(ROUNDS):
    for name, binary in [("before", BEFORE), ("after", AFTER)]:
        for dash in [False, True]:
            cpu, req, own = one(binary, dash)
            us = cpu * 1e6 / max(req, 1)
            rows.append((r, name, dash, cpu, req, us, own))
            print(f"round {r} {name:6} dashboard={dash!s:5} cpu={cpu:.2f}s requests={req} {us:.3f} us/req dashboard-threads (s, us/req)={own}", flush=True)
srv.kill()
import statistics
for name in ["before", "after"]:
    ratios = []
    for r in range(ROUNDS):
        a = [x for x in rows if x[0] == r and x[1] == name and not x[2]][0][5]
        b = [x for x in rows if x[0] == r and x[1] == name and x[2]][0][5]
        ratios.append(b / a)
    own = [x[6] for x in rows if x[1] == name and x[2]]
    print(f"{name}: with/without dashboard per round {[round(x, 3) for x in ratios]}, median {statistics.median(ratios):.3f}; dashboard threads (s, us/req) {own}")
