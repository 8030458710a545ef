"""What the targets' checkers share: targets/contract.py (the avatar contract),
targets/backend-call/contract.py (the front ends) and targets/database/check.py (the
database suite).

- the check report: each check printed as "ok   NAME" or "FAIL NAME: WHY", and the last
  line "N passed, N failed" (Report, Failed, need);
- processes: a command in its own process group as foxbench starts a target (Group), the
  process table (proc_table, tree, alive, cmdline), free loopback ports, polling with a
  deadline (wait_for);
- the targets' commands as foxbench fills them (targets): `foxbench shootout SUITE --list
  --json --fill NAME=VALUE`, so no checker fills a placeholder itself. foxbench is
  $FOXBENCH when set, else `cargo run -q -p foxbench --` in this repository.

Standard library only (Python 3.11).
"""
import collections
import json
import os
import resource
import shlex
import signal
import socket
import subprocess
import tempfile
import time

TARGETS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TARGETS)

# Where foxbench also looks for a target's tools (shootout::cache::extra_dirs): Go's, rustup's
# and the sbin directories, for the commands the checkers run themselves.
for d in ("/usr/local/go/bin", os.path.expanduser("~/.cargo/bin"), "/usr/sbin"):
    if d not in os.environ.get("PATH", "").split(":"):
        os.environ["PATH"] = os.environ.get("PATH", "") + ":" + d


class Failed(Exception):
    """A check that failed; its text says why."""


class SetupError(Exception):
    """The checker cannot run (a build it needs failed, foxbench cannot list the suite)."""


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


def skip(line):
    """A checker that cannot run here: one line saying why, and an empty summary (exit 0)."""
    print(line, flush=True)
    print("0 passed, 0 failed", flush=True)
    return 0


class Report:
    """The checks' tally: one line per check, and the summary line last."""

    def __init__(self):
        self.passed = self.failed = 0

    def report(self, ok, name, why=""):
        if ok:
            self.passed += 1
            print(f"ok   {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}" + (f": {why}" if why else ""), flush=True)
        return ok

    def check(self, name, fn, *args, **kw):
        """Runs fn; a returned string is appended to the name; Failed or any exception fails it."""
        try:
            detail = fn(*args, **kw)
        except Failed as e:
            return self.report(False, name, str(e))
        except Exception as e:  # noqa: BLE001 - any error is a failed check
            return self.report(False, name, f"{type(e).__name__}: {e}")
        return self.report(True, f"{name} ({detail})" if detail else name)

    def summary(self):
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0


# ---- processes ----------------------------------------------------------------------

Stat = collections.namedtuple("Stat", "state ppid pgid sid")


def proc_table():
    """{pid: Stat(state, ppid, pgid, sid)} for every live process."""
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
        table[int(p)] = Stat(fields[0], int(fields[1]), int(fields[2]), int(fields[3]))
    return table


def tree(root):
    """ROOT and its live descendants."""
    table = proc_table()
    out, todo = set(), [root]
    while todo:
        p = todo.pop()
        if p in table and table[p].state != "Z" and p not in out:
            out.add(p)
            todo.extend(c for c, s in table.items() if s.ppid == p)
    return out


def alive(pids):
    table = proc_table()
    return sorted(p for p in pids if p in table and table[p].state != "Z")


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Group:
    """A command started in its own process group, as foxbench starts a target: a shell
    command runs as `sh -c 'exec CMD'`. Its output goes to LOG (a temporary file when None).
    With NOFILE_SOFT, it starts with that soft RLIMIT_NOFILE."""

    def __init__(self, argv, log=None, cwd=None, env=None, shell=False, nofile_soft=None):
        if shell:
            argv = ["sh", "-c", "exec " + argv]
        if log is None:
            fd, log = tempfile.mkstemp(prefix="harness-", suffix=".log")
            os.close(fd)
            self._own_log = True
        else:
            self._own_log = False
        self.log = log
        preexec = None
        if nofile_soft is not None:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            preexec = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile_soft, hard))  # noqa: E731
        with open(log, "ab") as f:
            self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=f,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=preexec)
        self.pid = self.pgid = self.proc.pid
        self.seen = {self.pid}  # every process of its tree seen so far

    def output(self, limit=None):
        try:
            with open(self.log, errors="replace") as f:
                text = f.read()
        except OSError:
            return ""
        return text if limit is None else text[-limit:]

    def alive(self):
        return self.proc.poll() is None

    def watch(self):
        """Every process of its tree seen so far, this moment's included."""
        self.seen |= tree(self.pid)
        return self.seen

    def leftovers(self):
        """Live processes of its group, or of its tree as seen (a setsid daemon included)."""
        table = proc_table()
        return sorted(p for p, s in table.items()
                      if s.state != "Z" and (s.pgid == self.pgid or p in self.seen))

    def group_alive(self):
        try:
            os.killpg(self.pgid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True

    def wait_listening(self, port, timeout):
        """True once 127.0.0.1:PORT accepts a connection; False if it exits or TIMEOUT s pass."""
        def up():
            if self.proc.poll() is not None:
                return True
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return False
        return bool(wait_for(up, timeout)) and self.alive()

    def send(self, sig, group=True):
        self.watch()
        try:
            if group:
                os.killpg(self.pgid, sig)
            else:
                os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self, timeout, sig=signal.SIGTERM, group=True):
        """SIG (to the group, or to the first process alone), then waits for it and its
        processes: (exit status as a shell gives it or None, seconds, pids left)."""
        t0 = time.monotonic()
        self.send(sig, group)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            rc = None
        wait_for(lambda: not self.leftovers(), max(0.0, timeout - (time.monotonic() - t0)), 0.02)
        took = time.monotonic() - t0
        return (128 - rc if rc is not None and rc < 0 else rc), took, self.leftovers()

    def kill(self):
        """SIGKILL to every process left, the group too, then reap: nothing is left behind."""
        self.watch()
        for pid in self.leftovers():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.killpg(self.pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        if self._own_log:
            try:
                os.unlink(self.log)
            except OSError:
                pass


# ---- the targets' commands, from foxbench -----------------------------------------------

def foxbench():
    """The command that runs foxbench: $FOXBENCH, else cargo in this repository."""
    if os.environ.get("FOXBENCH"):
        return shlex.split(os.environ["FOXBENCH"])
    return ["cargo", "run", "--quiet", "--locked", "--manifest-path", os.path.join(REPO, "Cargo.toml"),
            "-p", "foxbench", "--"]


def listing(suite, only=None, fill=None):
    """`foxbench shootout SUITE --list --json`: {"targets": [...], "services": [...], ...},
    every command filled as the shootout fills it, and with FILL's values ({"port": 8080,
    "out": DIR, "images": 5, "service.postgres.port": 5432}). Targets and services are
    dicts: name, base, params, dir, requires, missing, install, build, start, artifact,
    env, ready, ready_timeout_s, uses."""
    argv = foxbench() + ["shootout", suite, "--list", "--json", "--root", REPO]
    if only:
        argv += ["--only", only]
    for name, value in (fill or {}).items():
        argv += ["--fill", f"{name}={value}"]
    r = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        raise SetupError(f"{shlex.join(argv)} exited {r.returncode}: {r.stderr.strip()[-2000:]}")
    return json.loads(r.stdout)


def target(suite, name, fill=None):
    """The [[target]] NAME of SUITE with FILL: the plain one, else its first parameter row."""
    listing_ = listing(suite, name, fill)
    rows = [t for t in listing_["targets"] if t["base"] == name]
    if not rows:
        raise SetupError(f"no target {name!r} in {suite}")
    entry = next((t for t in rows if not t["params"]), rows[0])
    return dict(entry, filled=dict(listing_["filled"], dir=entry["dir"]))


def fill_as(command, entry):
    """A command that is not the suite's (a checker's own argument, such as contract.py's
    --h2c-start) with the values foxbench filled ENTRY's commands with (`target`'s
    `filled`)."""
    for name, value in entry["filled"].items():
        command = command.replace("{" + name + "}", value)
    return command


def service(suite, name, fill=None):
    """The [[service]] NAME of SUITE with FILL."""
    for entry in listing(suite, None, fill)["services"]:
        if entry["name"] == name:
            return entry
    raise SetupError(f"no service {name!r} in {suite}")


def environ(entry):
    """The environment a target's build and start get: this process's, with its `env`."""
    env = dict(os.environ)
    env.update(entry.get("env", {}))
    return env
