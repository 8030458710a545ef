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
package to install and the summary is "0 passed, 0 failed" (exit 0). Standard library
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
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SUITE = os.path.join(REPO, "suites", "database.toml")
RUN_SH = os.path.join(HERE, "postgres", "run.sh")
TMP_BASE = os.environ.get("TMPDIR", "/tmp")

for d in ("/usr/local/go/bin", "/usr/sbin"):  # as foxbench does
    if d not in os.environ.get("PATH", "").split(":"):
        os.environ["PATH"] = os.environ.get("PATH", "") + ":" + d


class Failed(Exception):
    pass


def need(cond, why):
    if not cond:
        raise Failed(why)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(cond, timeout, step=0.05):
    """Polls COND until it is true or TIMEOUT s pass; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


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


# ---- processes ----------------------------------------------------------------------

def proc_table():
    """{pid: (ppid, pgid, state)} for every live process."""
    table = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        table[int(p)] = (int(fields[1]), int(fields[2]), fields[0])
    return table


def tree(root):
    """ROOT and its live descendants."""
    table = proc_table()
    out, todo = set(), [root]
    while todo:
        p = todo.pop()
        if p in table and table[p][2] != "Z" and p not in out:
            out.add(p)
            todo.extend(c for c, (pp, _, _) in table.items() if pp == p)
    return out


def alive(pids):
    table = proc_table()
    return sorted(p for p in pids if p in table and table[p][2] != "Z")


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Proc:
    """A command in its own process group, its output in a log file."""

    def __init__(self, args, log, cwd=None, env=None):
        self.log = log
        with open(log, "ab") as f:
            self.p = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=f,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        self.pid = self.p.pid
        self.seen = {self.pid}  # every process of its tree seen so far

    def watch(self):
        self.seen |= tree(self.pid)
        return self.seen

    def text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def send(self, sig, group=True):
        self.watch()
        try:
            if group:
                os.killpg(self.pid, sig)
            else:
                os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self, timeout, sig=signal.SIGTERM, group=True):
        """SIG, then waits: (exit status as a shell gives it or None, seconds, pids left)."""
        t0 = time.monotonic()
        self.send(sig, group)
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            rc = None
        wait_for(lambda: not alive(self.seen), max(0.0, timeout - (time.monotonic() - t0)))
        took = time.monotonic() - t0
        return (128 - rc if rc is not None and rc < 0 else rc), took, alive(self.seen)

    def kill(self):
        for pid in alive(self.watch()):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            pass


# ---- PostgreSQL ---------------------------------------------------------------------

class Postgres(Proc):
    """run.sh on a free port; ready() waits for its "postgres ready" line."""

    def __init__(self, tmp, args=()):
        self.port = free_port()
        super().__init__(["bash", RUN_SH, *args, str(self.port)], os.path.join(tmp, f"postgres-{self.port}.log"))

    def ready(self, timeout=90):
        ok = wait_for(lambda: "postgres ready on" in self.text() or self.p.poll() is not None, timeout, 0.1)
        return ok and self.p.poll() is None and "postgres ready on" in self.text()

    def data_dir(self):
        """The temporary directory run.sh made (from its ready line), or None."""
        for line in self.text().splitlines():
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


# ---- the report -----------------------------------------------------------------------

class Report:
    def __init__(self):
        self.passed = self.failed = 0

    def add(self, ok, name, why=""):
        if ok:
            self.passed += 1
            print(f"ok   {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}" + (f": {why}" if why else ""), flush=True)
        return ok

    def check(self, name, fn, *args):
        """Runs FN; a returned string is appended to the name; Failed/exceptions fail it."""
        try:
            detail = fn(*args)
        except Failed as e:
            return self.add(False, name, str(e))
        except Exception as e:  # noqa: BLE001 - any error is a failed check
            return self.add(False, name, f"{type(e).__name__}: {e}")
        return self.add(True, f"{name} ({detail})" if detail else name)

    def summary(self):
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0


def skip(line):
    print(line, flush=True)
    print("0 passed, 0 failed", flush=True)
    return 0


# ---- the service script's lifecycle ---------------------------------------------------

def postgres_checks(rep, tmp):
    pg = Postgres(tmp)
    try:
        if not rep.add(pg.ready(), f"run.sh PORT: initdb, seed, ready on 127.0.0.1:{pg.port}", pg.text()[-1500:]):
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
        if rep.add(pg.ready(), "second start"):
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
                need(seen, f"never saw {marker} running: {pg.text()[-500:]}")
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
        if rep.add(pg.ready(), "third start"):
            data = pg.data_dir()

            def sigkill():
                pids = pg.watch()
                pg.send(signal.SIGKILL, group=False)
                pg.p.wait(5)
                need(os.path.exists(data), "the directory vanished with SIGKILL?")
                for p in alive(pids):
                    os.kill(p, signal.SIGKILL)
                need(wait_for(lambda: not alive(pids), 10), f"left running: {alive(pids)}")
                nxt = Postgres(tmp)
                try:
                    need(nxt.ready(), nxt.text()[-800:])
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
    with open(SUITE, "rb") as f:
        service = next(s for s in tomllib.load(f)["service"] if s["name"] == "postgres")
    out = os.path.join(tmp, "service-out")
    os.makedirs(out)
    r = subprocess.run(["sh", "-c", service["build"].replace("{out}", out)], cwd=os.path.join(REPO, service["dir"]),
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
        rep.add(False, "the link's toxiproxy-server builds", str(e))
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
        if not rep.add(pg.ready(), "run.sh --link 1: ready through the link", pg.text()[-1500:]):
            return
        need_line = f"postgres ready on 127.0.0.1:{pg.port}, through a 1 ms link to 127.0.0.2:{pg.port}"

        def line():
            need(need_line in pg.text(), pg.text()[-500:])
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
            names = [cmdline(p).split()[:1] for p in tree(pg.p.pid)]
            need(any(n and n[0].endswith("toxiproxy-server") for n in names), f"tree: {names}")
            before = tree(pg.p.pid)
            pg.stop(30)
            need(wait_for(lambda: not alive(before), 10), f"left running: {[cmdline(p) for p in alive(before)]}")
            need(not (our_dirs() & {pg.data_dir()}), "data directory left")
        rep.check("SIGTERM to the group stops postgres and the link", stopped)
    finally:
        pg.kill()


# ---- a target -------------------------------------------------------------------------

class Target(Proc):
    def __init__(self, entry, tmp, out, pg, pool):
        self.port = free_port()
        cmd = (entry["start"].replace("{out}", out).replace("{dir}", os.path.join(REPO, entry["dir"]))
               .replace("{port}", str(self.port)).replace("{service.postgres.host}", "127.0.0.1")
               .replace("{service.postgres.port}", str(pg.port)).replace("{param.pool}", str(pool)))
        super().__init__(["sh", "-c", "exec " + cmd], os.path.join(tmp, f"target-{self.port}.log"),
                         cwd=os.path.join(REPO, entry["dir"]))

    def ready(self, timeout=60):
        def up():
            if self.p.poll() is not None:
                return True
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                return True
            except OSError:
                return False
        return wait_for(up, timeout) and self.p.poll() is None

    def get(self, path, conn=None):
        c = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        if conn is None:
            c.close()
        return r.status, r.getheader("Content-Type") or "", body


def target_checks(rep, tmp, name):
    with open(SUITE, "rb") as f:
        suite = tomllib.load(f)
    entry = next((t for t in suite.get("target", []) if t["name"] == name), None)
    if entry is None:
        sys.exit(f"check.py: no target {name!r} in {SUITE}")
    missing = [r for r in entry.get("requires", []) if not shutil.which(r)]
    if missing:
        return skip(f"{name}: skipped: {', '.join(missing)} not found (install {entry.get('install')})")
    if pg_bindir() is None or not shutil.which("psql"):
        return skip(f"{name}: skipped: PostgreSQL is not installed (Debian: apt-get install postgresql)")

    out = os.path.join(tmp, "out")
    os.mkdir(out)
    src = os.path.join(REPO, entry["dir"])
    before = git_status(src)
    build = (entry["build"].replace("{out}", out).replace("{dir}", src))
    r = subprocess.run(["sh", "-c", build], cwd=src, capture_output=True, text=True, timeout=900)
    if not rep.add(r.returncode == 0, "build", (r.stdout + r.stderr)[-2000:]):
        return
    rep.add(git_status(src) == before, "build writes nothing into the source dir", git_status(src))

    pg = Postgres(tmp)
    targets = []
    try:
        if not rep.add(pg.ready(), "PostgreSQL ready (run.sh)", pg.text()[-1500:]):
            return
        t = Target(entry, tmp, out, pg, 2)
        targets.append(t)
        if not rep.add(t.ready(), f"starts with pool 2, listens on 127.0.0.1:{t.port}", t.text()[-1500:]):
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

        rep.check("pool 2: 20 concurrent clients, never more than 2 client backends", pool_size, t, pg, 2)
        t.stop(15)

        t10 = Target(entry, tmp, out, pg, 10)
        targets.append(t10)
        if rep.add(t10.ready(), "starts with pool 10", t10.text()[-1500:]):
            rep.check("pool 10: 20 concurrent clients, more than 2 client backends", pool_size, t10, pg, 10)

            def db_gone():
                rc, _, _ = pg.stop(15)
                need(rc is not None, "PostgreSQL did not stop")
                codes = []
                for i in (1, 2, 3):
                    status, _, body = t10.get(f"/doc/{i}")
                    codes.append(status)
                need(all(c in (500, 503) for c in codes), f"statuses {codes}")
                need(t10.p.poll() is None, "the target exited")
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
    rep = Report()
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
        rep.add(False, "interrupted")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
