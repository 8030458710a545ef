"""php's own checks, run by targets/contract.py: php-fpm's own session, its children
and master, the script-only SIGTERM, and the php -S fallback."""
import http.client
import os
import signal
import threading
import time

import contract


def fpm_master(srv):
    """php-fpm calls setsid(): its master is a child of run.sh in a session of its own."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        for pid, p in contract.proc_table().items():
            if p.ppid == srv.pgid and "php-fpm: master" in contract.harness.cmdline(pid):
                srv.sessions.append(p.sid)
                return pid
        time.sleep(0.05)
    return None


def children(pid):
    n = 0
    for p in os.listdir("/proc"):
        try:
            with open(f"/proc/{p}/stat") as f:
                n += int(f.read().rsplit(")", 1)[1].split()[1]) == pid
        except (OSError, ValueError):
            pass
    return n


def extra(srv):
    run = srv.run

    def master():
        pid = fpm_master(srv)
        contract.need(pid, "no php-fpm master: " + srv.log_text())
        return f"master {pid} with {children(pid)} children"
    run.check("php-fpm master runs behind nginx", master)

    def concurrency():
        codes = []

        def one():
            c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
            for _ in range(5):
                c.request("GET", "/")
                r = c.getresponse()
                r.read()
                codes.append(r.status)
        ts = [threading.Thread(target=one) for _ in range(200)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        contract.need(len(codes) == 1000 and set(codes) == {302}, f"{len(codes)} {sorted(set(codes))}")
    run.check("200 concurrent connections x 5 requests: all 302 (more than the pool)", concurrency)


def no_php_left(run):
    mine = []
    for p in os.listdir("/proc"):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if (run.out + "/php/").encode() in f.read():
                    mine.append(int(p))
        except OSError:
            pass
    contract.need(not mine, f"left: {mine}")


def after(run):
    run.check("no php-fpm or nginx process of this run left (cmdline scan)", no_php_left, run)

    # The script alone signalled (no group): it must still take both down.
    def script_only():
        srv = run.start(5)
        contract.need(srv and fpm_master(srv), "startup")
        os.kill(srv.pgid, signal.SIGTERM)
        contract.need(srv.wait_gone(1), f"left: {srv.leftovers()}")
    run.check("SIGTERM to run.sh alone also stops php-fpm and nginx", script_only)

    # php-fpm's master dies: run.sh must stop nginx and the orphaned children.
    def master_killed():
        srv = run.start(5)
        pid = srv and fpm_master(srv)
        contract.need(pid, "startup")
        os.kill(pid, signal.SIGKILL)
        contract.need(srv.wait_gone(2), f"left: {srv.leftovers()}")
    run.check("php-fpm master killed: run.sh stops its children and nginx, then exits", master_killed)

    # Fallback: no php-fpm, so php -S, one request per connection, TEMPLATE from the argument.
    srv = run.start(5, ["http://x/{n}.png"], env={"PHP_FPM": ""}, name="PHP_FPM= starts the php -S fallback")
    if srv:
        run.check("PHP_FPM= says it falls back to php -S",
                  lambda: contract.need("falling back to php -S" in srv.log_text(), srv.log_text()))

        def images():
            seen = {}
            for _ in range(100):
                c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
                c.request("GET", "/some/path?q=1")
                r = c.getresponse()
                body = r.read()
                c.close()
                m = contract.re.fullmatch(r"http://x/(\d+)\.png", r.getheader("Location") or "")
                contract.need(r.status == 302 and not body and m, f"{r.status} {r.getheaders()} {body[:80]!r}")
                seen[int(m.group(1))] = seen.get(int(m.group(1)), 0) + 1
            contract.need(sorted(seen) == [1, 2, 3, 4, 5], contract.fmt(seen))
            return contract.fmt(seen)
        run.check("php -S: exactly images 1..5 from the TEMPLATE argument over 100 connections", images)
        run.check("php -S exits on SIGTERM", contract.sigterm, srv, 1.0, None, False)
