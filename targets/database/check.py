#!/usr/bin/env python3
"""The database suite's checker, shared by every targets/database/*/test.sh.

    python3 targets/database/check.py postgres     the service script's lifecycle, and its link
    python3 targets/database/check.py NAME         a target of suites/database.toml

Everything runs for real: PostgreSQL through targets/database/postgres/run.sh (initdb into
a temporary directory, the 10,000 documents, postgres on a free loopback port), the
target built and started from its [[target]] entry in suites/database.toml the way
foxbench does (build with `sh -c` in its dir into a fresh OUT; start as `sh -c 'exec
START'` in its own process group; {service.postgres.host} is 127.0.0.1).

A target is checked for: the right document for a few ids (against PostgreSQL's own
copy), 404 for a missing id, 400 for bad ones, keep-alive, the pool size honoured
(pg_stat_activity sampled while 20 clients load it: never more than 2 client backends
with pool 2, more than 2 with pool 10), 503 (or 500) once PostgreSQL is gone without
crashing, and SIGTERM. Each check prints "ok   NAME" or "FAIL NAME: WHY"; the last line
is "N passed, N failed". When a toolchain or PostgreSQL is missing, one line says which
package to install and the summary is "0 passed, 0 failed" (exit 0). The targets' and the
service's commands are filled by foxbench (`foxbench shootout --list --json`, through
targets/harness.py, which also holds the report and the process helpers). Standard library
only (Python 3.11); psql (postgresql-client) is the database client.
"""
import glob
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402 - targets/harness.py, one directory up
from harness import Failed, Group, alive, cmdline, free_port, need, skip, tree, wait_for  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SUITE = os.path.join(REPO, "suites", "database.toml")
RUN_SH = os.path.join(HERE, "postgres", "run.sh")
TMP_BASE = os.environ.get("TMPDIR", "/tmp")

def pg_bindir():
    """The directory of initdb/postgres/pg_isready, as run.sh finds it, or None."""
    exe = shutil.which("postgres")
    if exe and shutil.which("initdb"):
        d = os.path.dirname(os.path.realpath(exe))
        if os.access(os.path.join(d, "pg_isready"), os.X_OK):
            return d
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[4]), reverse=True):
        if all(os.access(os.path.join(d, x), os.X_OK) for x in ("initdb", "postgres", "pg_isready")):
            return d
    return None


# ---- PostgreSQL ---------------------------------------------------------------------

class Postgres(Group):
    """run.sh on a free port; ready() waits for its "postgres ready" line."""

    def __init__(self, tmp, args=()):
        self.port = free_port()
        super().__init__(["bash", RUN_SH, *args, str(self.port)], log=os.path.join(tmp, f"postgres-{self.port}.log"))

    def ready(self, timeout=90):
        ok = wait_for(lambda: "postgres ready on" in self.output() or self.proc.poll() is not None, timeout, 0.1)
        return ok and self.proc.poll() is None and "postgres ready on" in self.output()

    def data_dir(self):
        """The temporary directory run.sh made (from its ready line), or None."""
        for line in self.output().splitlines():
            if line.startswith("postgres ready on") and "(data " in line:
                return os.path.dirname(line.split("(data ", 1)[1].split(",", 1)[0])
        return None

    def psql(self, sql, timeout=20):
        r = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p",
                            str(self.port), "-U", "postgres", "-d", "postgres", "-c", sql],
                           capture_output=True, text=True, timeout=timeout)
        need(r.returncode == 0, f"psql {sql!r}: {r.stderr.strip()}")
        return r.stdout.strip()

    def client_backends(self):
        """Client backends other than psql's (so: the target's pool connections)."""
        return int(self.psql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                             "AND application_name <> 'psql'"))


def our_dirs():
    return set(glob.glob(os.path.join(TMP_BASE, "foxbench-pg.*")))


# ---- the service script's lifecycle ---------------------------------------------------

def postgres_checks(rep, tmp):
    pg = Postgres(tmp)
    try:
        if not rep.report(pg.ready(), f"run.sh PORT: initdb, seed, ready on 127.0.0.1:{pg.port}", pg.output()[-1500:]):
            return
        def seeded():
            count, avg = pg.psql("SELECT count(*), avg(length(body::text)) FROM docs").split("|")
            need(count == "10000", f"{count} rows")
            need(1800 <= float(avg) <= 2300, f"{float(avg):.0f} bytes on average")
            return f"{count} rows, {float(avg):.0f} bytes of JSON on average"
        rep.check("10,000 documents, about 2 KB each", seeded)

        def doc():
            d = json.loads(pg.psql("SELECT body::text FROM docs WHERE id = 42"))
            need(d.get("_id") == "doc-42" and d.get("type") == "article", str(d)[:200])
            again = json.loads(pg.psql("SELECT body::text FROM docs WHERE id = 42"))
            need(d == again, "not the same twice")
            return f"_id {d['_id']}, _rev {d['_rev'][:10]}..."
        rep.check("document 42 by primary key", doc)

        def tree_is_postgres():
            pids = pg.watch()
            names = sorted({cmdline(p).split(" ", 1)[0].rsplit("/", 1)[-1] for p in alive(pids) if p != pg.pid})
            need(any(n == "postgres" or n.startswith("postgres:") for n in names), f"descendants: {names}")
            return f"{len(alive(pids))} processes under run.sh"
        rep.check("postgres runs under the script (what the probe sees)", tree_is_postgres)

        data = pg.data_dir()
        held = subprocess.Popen(["psql", "-X", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres"],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: int(pg.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'psql'")) >= 2, 10)

        def sigterm():
            rc, took, left = pg.stop(10)
            need(rc is not None, f"still running after {took:.1f} s")
            need(rc in (0, 143), f"exit status {rc}")
            need(not left, f"left running: {[(p, cmdline(p)) for p in left]}")
            need(data and not os.path.exists(data), f"{data} still exists")
            return f"status {rc} in {took * 1000:.0f} ms, {data} removed"
        rep.check("SIGTERM to the group with a client connected: fast shutdown, data dir removed, nothing left",
                  sigterm)
        held.kill()
        held.wait()
    finally:
        pg.kill()

    # Ctrl-C to the script alone (not its group): it stops postgres itself.
    pg = Postgres(tmp)
    try:
        if rep.report(pg.ready(), "second start"):
            data = pg.data_dir()

            def sigint_script():
                rc, took, left = pg.stop(10, signal.SIGINT, group=False)
                need(rc == 130, f"exit status {rc}")
                need(not left, f"left running: {left}")
                need(not os.path.exists(data), f"{data} still exists")
                return f"in {took * 1000:.0f} ms"
            rep.check("SIGINT to the script alone: postgres stopped, data dir removed", sigint_script)
    finally:
        pg.kill()

    # Interrupted starts: during initdb, and during the seed (postgres --single).
    for phase, marker in (("initdb", "initdb"), ("the seed", "--single")):
        before = our_dirs()
        pg = Postgres(tmp)
        try:
            def interrupted():
                seen = wait_for(lambda: any(marker in cmdline(p) for p in pg.watch()), 60, 0.01)
                need(seen, f"never saw {marker} running: {pg.output()[-500:]}")
                rc, took, left = pg.stop(10)
                need(rc is not None, "still running")
                need(not left, f"left running: {[(p, cmdline(p)) for p in left]}")
                new = our_dirs() - before
                need(not new, f"left behind: {sorted(new)}")
                return f"status {rc} in {took * 1000:.0f} ms"
            rep.check(f"SIGTERM during {phase}: nothing left, no directory left", interrupted)
        finally:
            pg.kill()

    # SIGKILL of the script: postgres outlives it until killed (foxbench kills the marked
    # descendants); the next start removes the directory it left.
    pg = Postgres(tmp)
    try:
        if rep.report(pg.ready(), "third start"):
            data = pg.data_dir()

            def sigkill():
                pids = pg.watch()
                pg.send(signal.SIGKILL, group=False)
                pg.proc.wait(5)
                need(os.path.exists(data), "the directory vanished with SIGKILL?")
                for p in alive(pids):
                    os.kill(p, signal.SIGKILL)
                need(wait_for(lambda: not alive(pids), 10), f"left running: {alive(pids)}")
                nxt = Postgres(tmp)
                try:
                    need(nxt.ready(), nxt.output()[-800:])
                    need(not os.path.exists(data), f"{data} not removed by the next start")
                    nxt_data = nxt.data_dir()
                    nxt.stop(10)
                    need(not os.path.exists(nxt_data), f"{nxt_data} still exists")
                finally:
                    nxt.kill()
                return "removed by the next start"
            rep.check("SIGKILL of the script: its directory is removed by the next start", sigkill)
    finally:
        pg.kill()

    def bad_port():
        for args in (["x"], ["0"], ["70000"], []):
            r = subprocess.run(["bash", RUN_SH, *args], capture_output=True, text=True, timeout=30)
            need(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, f"{args}: {r.returncode} {r.stderr!r}")
    rep.check("bad PORT: exit 2, one line", bad_port)

    def taken_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            before = our_dirs()
            r = subprocess.run(["bash", RUN_SH, str(s.getsockname()[1])], capture_output=True, text=True, timeout=120)
        need(r.returncode == 1 and "exited during startup" in r.stderr, f"{r.returncode} {r.stderr[-300:]!r}")
        need(not (our_dirs() - before), "directory left behind")
    rep.check("port taken: exit 1 naming it, nothing left", taken_port)


def build_toxiproxy(tmp):
    """toxiproxy-server built by the postgres service's own `build` line of the suite, into
    a fresh OUT; its path, or None (with the reason) when Go is missing."""
    if not shutil.which("go"):
        return None, "go is not installed (https://go.dev/dl, or Debian: apt-get install golang-go)"
    out = os.path.join(tmp, "service-out")
    os.makedirs(out)
    service = harness.service(SUITE, "postgres", {"out": out})
    r = subprocess.run(["sh", "-c", service["build"]], cwd=service["dir"], env=harness.environ(service),
                       capture_output=True, text=True, timeout=600)
    need(r.returncode == 0, f"the service's build failed: {r.stderr[-500:]}")
    path = os.path.join(out, "toxiproxy-server")
    need(os.access(path, os.X_OK), f"the build made no {path}")
    return path, ""


def link_checks(rep, tmp):
    """run.sh --link MS TOXIPROXY: postgres on 127.0.0.2, each answer MS ms later on
    127.0.0.1, the proxy in the tree and stopped with it."""
    toxiproxy, why = None, ""
    try:
        toxiproxy, why = build_toxiproxy(tmp)
    except Failed as e:
        rep.report(False, "the link's toxiproxy-server builds", str(e))
        return
    if toxiproxy is None:
        print(f"link: skipped: {why}", flush=True)
        return

    def bad_link():
        for args in (["--link", "x", toxiproxy, "5432"], ["--link", "1", "/nonexistent", "5432"], ["--link", "1"]):
            r = subprocess.run(["bash", RUN_SH, *args], capture_output=True, text=True, timeout=30)
            need(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, f"{args}: {r.returncode} {r.stderr!r}")
    rep.check("bad --link: exit 2, one line", bad_link)

    pg = Postgres(tmp, ["--link", "1", toxiproxy])
    try:
        if not rep.report(pg.ready(), "run.sh --link 1: ready through the link", pg.output()[-1500:]):
            return
        need_line = f"postgres ready on 127.0.0.1:{pg.port}, through a 1 ms link to 127.0.0.2:{pg.port}"

        def line():
            need(need_line in pg.output(), pg.output()[-500:])
        rep.check("it says so", line)

        def delayed():
            # 100 statements over one connection, through the link and straight to
            # postgres: the link adds 1 ms to each round trip (and to the handshake's).
            # Three rounds each, alternating, the fastest of each kept: a busy machine's
            # stall in one run does not read as the link's delay, or hide it.
            script = "SELECT 1;\n" * 100
            took = {}
            for _ in range(3):
                for host in ("127.0.0.1", "127.0.0.2"):
                    t = time.monotonic()
                    r = subprocess.run(["psql", "-X", "-q", "-h", host, "-p", str(pg.port), "-U", "postgres", "-d",
                                        "postgres", "-f", "-"], input=script, capture_output=True, text=True,
                                       timeout=60)
                    took[host] = min(took.get(host, float("inf")), time.monotonic() - t)
                    need(r.returncode == 0, f"{host}: {r.stderr.strip()}")
            extra = (took["127.0.0.1"] - took["127.0.0.2"]) / 100
            need(0.0009 <= extra <= 0.02, f"{extra * 1000:.2f} ms more per statement through the link")
            return f"{extra * 1000:.2f} ms more per statement"
        rep.check("each round trip through the link is 1 ms longer", delayed)

        def stopped():
            names = [cmdline(p).split()[:1] for p in tree(pg.proc.pid)]
            need(any(n and n[0].endswith("toxiproxy-server") for n in names), f"tree: {names}")
            before = tree(pg.proc.pid)
            pg.stop(30)
            need(wait_for(lambda: not alive(before), 10), f"left running: {[cmdline(p) for p in alive(before)]}")
            need(not (our_dirs() & {pg.data_dir()}), "data directory left")
        rep.check("SIGTERM to the group stops postgres and the link", stopped)
    finally:
        pg.kill()


# ---- a target -------------------------------------------------------------------------

def rows(name, fill):
    """NAME's parameter rows in suites/database.toml (its pools, as the suite lists them),
    their commands filled by foxbench with FILL."""
    return [t for t in harness.listing(SUITE, name, fill)["targets"] if t["base"] == name]


class Target(Group):
    """One row of a target, started as foxbench starts it, against PG."""

    def __init__(self, row, tmp, out, pg):
        self.port = free_port()
        self.pool = int(row["params"]["pool"])
        fill = {"out": out, "port": self.port, "service.postgres.port": pg.port}
        entry = next(t for t in rows(row["base"], fill) if t["name"] == row["name"])
        super().__init__(entry["start"], log=os.path.join(tmp, f"target-{self.port}.log"), cwd=entry["dir"],
                         env=harness.environ(entry), shell=True)

    def ready(self, timeout=60):
        return self.wait_listening(self.port, timeout)

    def get(self, path, conn=None):
        c = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        if conn is None:
            c.close()
        return r.status, r.getheader("Content-Type") or "", body


def target_checks(rep, tmp, name):
    out = os.path.join(tmp, "out")
    os.mkdir(out)
    try:
        found = rows(name, {"out": out})
    except harness.SetupError as e:
        sys.exit(f"check.py: {e}")
    if len(found) < 2:
        sys.exit(f"check.py: {name!r} in {SUITE} has {len(found)} rows: expected a small pool and a large one")
    entry, large = found[0], found[-1]
    if entry["missing"]:
        return skip(f"{name}: skipped: {', '.join(entry['missing'])} not found (install {entry.get('install')})")
    if pg_bindir() is None or not shutil.which("psql"):
        return skip(f"{name}: skipped: PostgreSQL is not installed (Debian: apt-get install postgresql)")

    src = entry["dir"]
    before = git_status(src)
    r = subprocess.run(["sh", "-c", entry["build"]], cwd=src, env=harness.environ(entry), capture_output=True,
                       text=True, timeout=900)
    if not rep.report(r.returncode == 0, "build", (r.stdout + r.stderr)[-2000:]):
        return
    rep.report(git_status(src) == before, "build writes nothing into the source dir", git_status(src))

    pg = Postgres(tmp)
    targets = []
    try:
        if not rep.report(pg.ready(), "PostgreSQL ready (run.sh)", pg.output()[-1500:]):
            return
        t = Target(entry, tmp, out, pg)
        targets.append(t)
        if not rep.report(t.ready(), f"starts with pool {t.pool}, listens on 127.0.0.1:{t.port}",
                          t.output()[-1500:]):
            return

        def right_docs():
            for i in (1, 42, 5000, 10000):
                status, ctype, body = t.get(f"/doc/{i}")
                need(status == 200, f"/doc/{i}: {status} {body[:100]!r}")
                need(ctype.split(";")[0].strip() == "application/json", f"/doc/{i}: Content-Type {ctype!r}")
                want = json.loads(pg.psql(f"SELECT body::text FROM docs WHERE id = {i}"))
                need(json.loads(body) == want, f"/doc/{i}: not document {i}: {body[:100]!r}")
            return "ids 1, 42, 5000, 10000, as PostgreSQL has them"
        rep.check("GET /doc/{id}: 200, application/json, the document of that id", right_docs)

        def missing_ids():
            for path in ("/doc/0", "/doc/10001", "/doc/2147483647"):
                status, _, body = t.get(path)
                need(status == 404, f"{path}: {status} {body[:100]!r}")
        rep.check("404 for a missing id (0, 10001, 2147483647)", missing_ids)

        def bad_ids():
            for path in ("/doc/abc", "/doc/-1", "/doc/1.5", "/doc/99999999999", "/doc/12x"):
                status, _, body = t.get(path)
                need(status == 400, f"{path}: {status} {body[:100]!r}")
        rep.check("400 for a bad id (abc, -1, 1.5, 99999999999, 12x)", bad_ids)

        def keepalive():
            c = http.client.HTTPConnection("127.0.0.1", t.port, timeout=30)
            c.connect()
            name = c.sock.getsockname()
            for i in range(1, 51):
                status, _, body = t.get(f"/doc/{i * 7}", c)
                need(status == 200 and json.loads(body)["_id"] == f"doc-{i * 7}", f"request {i}: {status}")
                need(c.sock is not None and c.sock.getsockname() == name, f"reconnected after {i} requests")
            c.close()
        rep.check("keep-alive: 50 documents on one connection", keepalive)

        rep.check(f"pool {t.pool}: 20 concurrent clients, never more than {t.pool} client backends", pool_size, t,
                  pg, t.pool)
        t.stop(15)

        t10 = Target(large, tmp, out, pg)
        targets.append(t10)
        if rep.report(t10.ready(), f"starts with pool {t10.pool}", t10.output()[-1500:]):
            rep.check(f"pool {t10.pool}: 20 concurrent clients, more than 2 client backends", pool_size, t10, pg,
                      t10.pool)

            def db_gone():
                rc, _, _ = pg.stop(15)
                need(rc is not None, "PostgreSQL did not stop")
                codes = []
                for i in (1, 2, 3):
                    status, _, body = t10.get(f"/doc/{i}")
                    codes.append(status)
                need(all(c in (500, 503) for c in codes), f"statuses {codes}")
                need(t10.proc.poll() is None, "the target exited")
                status, _, _ = t10.get("/doc/abc")
                need(status == 400, f"then /doc/abc: {status}")
                return f"statuses {codes}, still serving"
            rep.check("PostgreSQL stopped: 503/500 per request, no crash", db_gone)

            def sigterm():
                held = socket.create_connection(("127.0.0.1", t10.port), 5)  # an idle keep-alive client
                rc, took, left = t10.stop(5)
                held.close()
                need(rc is not None, f"still running after {took:.1f} s")
                need(not left, f"left running: {left}")
                return f"status {rc} in {took * 1000:.0f} ms"
            rep.check("SIGTERM to the group: exits within 5 s, nothing left", sigterm)
    finally:
        for t in targets:
            t.kill()
        pg.kill()


def pool_size(t, pg, pool):
    """20 client threads load the target (bounded: 4 s or 2,000 requests each) while
    pg_stat_activity is sampled: the most client backends seen, against POOL."""
    stop = threading.Event()
    errors, counts = [], []

    def client(k):
        c = http.client.HTTPConnection("127.0.0.1", t.port, timeout=30)
        try:
            for i in range(2000):
                if stop.is_set():
                    break
                status, _, _ = t.get(f"/doc/{(k * 997 + i) % 10000 + 1}", c)
                if status != 200:
                    errors.append(status)
                    break
                counts.append(1)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))
        finally:
            c.close()

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(20)]
    for th in threads:
        th.start()
    samples = []
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline and any(th.is_alive() for th in threads):
        samples.append(pg.client_backends())
        time.sleep(0.05)
    stop.set()
    for th in threads:
        th.join(30)
    need(not errors, f"client errors: {errors[:3]}")
    need(len(samples) >= 5, f"only {len(samples)} samples")
    most = max(samples)
    if pool <= 2:
        need(1 <= most <= pool, f"up to {most} client backends with pool {pool}: {samples}")
    else:
        need(2 < most <= pool, f"up to {most} client backends with pool {pool}: {samples}")
    return f"{len(counts)} requests, at most {most} backends in {len(samples)} samples"


def git_status(path):
    r = subprocess.run(["git", "status", "--porcelain", "--ignored", "--", "."], cwd=path,
                       capture_output=True, text=True)
    return r.stdout


def main(argv):
    if len(argv) != 1:
        print("usage: check.py postgres | check.py TARGET", file=sys.stderr)
        return 2
    name = argv[0]
    rep = harness.Report()
    tmp = tempfile.mkdtemp(prefix=f"dbcheck-{name}-")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        if name == "postgres":
            if pg_bindir() is None or not shutil.which("psql"):
                return skip("postgres: skipped: PostgreSQL is not installed (Debian: apt-get install postgresql)")
            postgres_checks(rep, tmp)
            link_checks(rep, tmp)
        else:
            if target_checks(rep, tmp, name) == 0 and rep.passed == rep.failed == 0:
                return 0
    except KeyboardInterrupt:
        rep.report(False, "interrupted")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
