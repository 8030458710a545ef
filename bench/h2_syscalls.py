"""Why nginx spends more CPU on each of foxbench's HTTP/2 requests over TLS than on h2load's
(issue 21): the system calls per request of nginx's worker and of the client, counted by
the kernel's syscall tracepoints (`perf stat -e syscalls:sys_enter_*`, no ptrace: the
batching under study is not disturbed), over 2 s in the middle of a 4 s run at the same
connections and streams. Client on CPU 0, nginx on CPU 1, as bench/load.py does.

Usage: python3 bench/h2_syscalls.py FOXBENCH [--server nginx-h2|nginx-h2c] [-c 100] [-m 10] [--rounds 2]
"""
import argparse, importlib.util, json, os, re, shutil, subprocess, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench_load", os.path.join(HERE, "load.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

CALLS = ["read", "write", "writev", "sendmsg", "sendto", "recvfrom", "recvmsg", "epoll_wait",
         "epoll_pwait", "epoll_ctl", "clock_nanosleep", "nanosleep"]


def perf_stat(pid, seconds, out):
    events = ",".join(f"syscalls:sys_enter_{c}" for c in CALLS)
    return subprocess.Popen(["perf", "stat", "-x", ",", "-e", events, "-p", str(pid), "-o", out,
                             "--", "sleep", str(seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def counts(path):
    got = {}
    for line in open(path):
        parts = line.strip().split(",")
        if len(parts) > 2 and parts[2].startswith("syscalls:sys_enter_"):
            got[parts[2].removeprefix("syscalls:sys_enter_")] = int(parts[0]) if parts[0].isdigit() else 0
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("foxbench")
    ap.add_argument("--server", default="nginx-h2")
    ap.add_argument("-c", type=int, default=100)
    ap.add_argument("-m", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="h2sys-")
    srv = bench.Server(a.server, None, tmp)
    srv.start()
    try:
        worker = int(subprocess.run(["pgrep", "-P", str(srv.proc.pid)], capture_output=True,
                                    text=True).stdout.split()[0])
        tools = {
            "foxbench": [a.foxbench, "load", "-t", "1", "-c", str(a.c), "-d", "4s", "--http2", "--streams",
                         str(a.m), "--insecure", "-q", "--json", "-", srv.url],
            "h2load": [shutil.which("h2load"), "-t", "1", "-c", str(a.c), "-m", str(a.m), "-D", "4", srv.url],
        }
        print(f"{a.server}, {a.c} connections x {a.m} streams; system calls per request over 2 s mid-run")
        print("| round | client | req/s | nginx: " + " | ".join(CALLS[:8]) + " | client: reads | writes | epoll_wait | sleeps |")
        for r in range(a.rounds):
            for name, cmd in tools.items():
                p = subprocess.Popen(["taskset", "-c", "0", *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                time.sleep(1.0)
                n_out, c_out = os.path.join(tmp, "n.txt"), os.path.join(tmp, "c.txt")
                pn, pc = perf_stat(worker, 2, n_out), perf_stat(p.pid, 2, c_out)
                pn.wait(); pc.wait()
                out, err = p.communicate(timeout=30)
                if name == "foxbench":
                    j = json.loads(out)
                    rps = j["throughput"]["requests_per_sec"]
                else:
                    m = re.search(r"finished in [^,]+, ([\d.]+) req/s", out)
                    rps = float(m.group(1))
                reqs = rps * 2
                n, c = counts(n_out), counts(c_out)
                per = lambda d, k: d.get(k, 0) / reqs
                client_reads = sum(c.get(k, 0) for k in ("read", "recvfrom", "recvmsg")) / reqs
                client_writes = sum(c.get(k, 0) for k in ("write", "writev", "sendmsg", "sendto")) / reqs
                client_epoll = sum(c.get(k, 0) for k in ("epoll_wait", "epoll_pwait")) / reqs
                # foxbench's coalescing waits (--coalesce) are sleeps before an epoll_wait.
                client_sleeps = sum(c.get(k, 0) for k in ("clock_nanosleep", "nanosleep")) / reqs
                print(f"| {r + 1} | {name} | {rps / 1000:.1f}k | " + " | ".join(f"{per(n, k):.3f}" for k in CALLS[:8])
                      + f" | {client_reads:.3f} | {client_writes:.3f} | {client_epoll:.3f} | {client_sleeps:.3f} |", flush=True)
    finally:
        srv.proc.terminate()
        srv.proc.wait(10)


if __name__ == "__main__":
    main()
