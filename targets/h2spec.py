#!/usr/bin/env python3
"""h2spec, HTTP/2's conformance suite, against every target of a suite that speaks HTTP/2
(h2c), each scored against the score its README records (issue 22).

    python3 targets/h2spec.py [SUITE] [--only NAMES] [--jobs N]

SUITE is suites/avatar-h2.toml unless given. The targets are those of SUITE that a scenario
loads over h2c, started as the shootout starts them, from the shootout's own builds: the
commands and the build cache's entry (`built`) come from `foxbench shootout SUITE --list
--json` (targets/harness.py). Run it after the shootout has built them (CI runs it after
`foxbench shootout suites/avatar-h2.toml --quick`); a target not built yet fails, naming
the command that builds it.

What it checks, per target:
- h2spec ran to its summary line, over every test of the suite (h2spec's own count), and
  the target was still running afterwards;
- the score (tests passed) is at least the one its README records (the `**N of 145**` in
  the "### h2spec" section of README.md in the target's directory) minus TOLERANCE, except
  that a README recording every test passed must see every test pass (avatar's 145/145).
Every score is printed, with the failing cases by h2spec's own selector
(`http2/5.1/8`: section 5.1, case 8, of the HTTP/2 group; `generic/...`, `hpack/...`),
which `h2spec -p PORT SELECTOR` runs alone.

Why TOLERANCE: a failing case makes h2spec wait for its timeout (2 s, h2spec's default, as
the READMEs' scores were measured), and a case the server passes fails when its answer
comes later than that; and run case by case, many at once, some targets score below their
whole-suite run. The READMEs record whole-suite runs; in CI's run, case by case on a quiet
machine, rust-hyper scored 137-139 against its README's 144 (five runs), node-http 132-135
against 136, go-nethttp 138-140 against 140. A target that stopped speaking h2 scores near
0 (nginx-h2c speaking HTTP/1.1 scored 0), and a regression of more than ten cases still
fails; a tolerance of 3 failed CI on rust-hyper's timing.

Why one h2spec process per test case, many at a time: the time goes to those timeouts,
not to CPU (one h2spec over the whole suite takes 59 s against nginx-h2c, which fails 30
cases, and 29 s against java-netty), and h2spec has no parallelism of its own (its `-j` is
a JUnit report). Each case runs alone (`h2spec ... http2/5.1/8`), every target's at once,
up to --jobs processes at a time: the six targets take about 10 s (measured on the loaded
2-core VM: 22 s with --jobs 8, 10-11 s with 32, 14 s with 64). h2spec opens a new
connection for every case either way, so the cases do not see each other.

Without h2spec it skips loudly (exit 0), and fails under FOXBENCH_REQUIRE=all (CI).
Standard library only (Python 3.11). The last line is "N passed, N failed".
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time

import harness
from harness import Failed, need

SUITE = os.path.join(harness.REPO, "suites", "avatar-h2.toml")
INSTALL = ("PATH=$PATH:/usr/local/go/bin GOTOOLCHAIN=local go install "
           "github.com/summerwind/h2spec/cmd/h2spec@v2.2.1+incompatible (lands in $(go env GOPATH)/bin)")
# A path with a body: h2spec's flow-control tests wait for DATA frames, which a bodiless
# 302 never sends (a target without the SVG route answers it with its 302 anyway).
PATH = "/a8db7d.svg"
# Tests passed a score may fall below its README's (see above).
TOLERANCE = 10
# The longest one h2spec process (one case) may take: far above a case's worst (a 2 s
# timeout or two), so that only a hung h2spec or target hits it.
CASE_LIMIT_S = 60
# h2spec's groups by their titles, and the selector each answers to.
GROUPS = {"Generic tests for HTTP/2 server": "generic",
          "Hypertext Transfer Protocol Version 2 (HTTP/2)": "http2",
          "HPACK: Header Compression for HTTP/2": "hpack"}
SUMMARY = re.compile(r"^(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed$", re.M)
SECTION = re.compile(r"^\s+(\d+(?:\.\d+)*)\. ")
CASE = re.compile(r"^\s+(\d+): ")
FAILED_CASE = re.compile(r"^\s+\u00d7 (\d+): ")
RECORDED = re.compile(r"\*\*(\d+) of (\d+)\*\*")


def find_h2spec():
    """h2spec's path: $H2SPEC (only it, when set), PATH, then where `go install` puts it."""
    if os.environ.get("H2SPEC"):
        path = os.environ["H2SPEC"]
        return path if os.access(path, os.X_OK) else None
    dirs = [os.environ.get("GOBIN")]
    dirs += [os.path.join(p, "bin") for p in os.environ.get("GOPATH", "").split(":") if p]
    dirs.append(os.path.expanduser("~/go/bin"))
    found = shutil.which("h2spec")
    return found or next((os.path.join(d, "h2spec") for d in dirs
                          if d and os.access(os.path.join(d, "h2spec"), os.X_OK)), None)


def cases(h2spec):
    """h2spec's test cases as selectors (`http2/5.1/8`), in its order, from `h2spec --dryrun`."""
    r = subprocess.run([h2spec, "--dryrun"], capture_output=True, text=True, timeout=60)
    group, section, out = None, None, []
    for line in r.stdout.splitlines():
        if line and not line[0].isspace():
            group = GROUPS.get(line.strip())
            if group is None:
                raise harness.SetupError(f"h2spec --dryrun: unknown group {line.strip()!r}: "
                                         f"not h2spec 2.2.1? ({INSTALL})")
        elif m := SECTION.match(line):
            section = m.group(1)
        elif m := CASE.match(line):
            out.append(f"{group}/{section}/{m.group(1)}")
    if not out:
        raise harness.SetupError(f"h2spec --dryrun listed no tests: {r.stdout[-300:]!r} {r.stderr[-300:]!r}")
    return out



def failures(text):
    """The failing cases of one h2spec output, as selectors, from its "Failures:" part."""
    _, _, tail = text.partition("\nFailures:")
    group, section, out = None, None, []
    for line in tail.splitlines():
        if line and not line[0].isspace():
            group = GROUPS.get(line.strip(), group)
        elif m := SECTION.match(line):
            section = m.group(1)
        elif m := FAILED_CASE.match(line):
            out.append(f"{group}/{section}/{m.group(1)}")
    return out


def recorded(entry):
    """(passed, of) that the target's README records in its "### h2spec" section."""
    readme = os.path.join(entry["dir"], "README.md")
    rel = os.path.relpath(readme, harness.REPO)
    try:
        with open(readme) as f:
            text = f.read()
    except OSError as e:
        raise Failed(f"{rel}: {e.strerror}: record its h2spec score there") from None
    part = text.partition("\n### h2spec\n")[2].split("\n#", 1)[0]
    found = RECORDED.findall(part)
    need(len(found) == 1, f"{rel} records no h2spec score: its '### h2spec' section must hold one "
                          f"'**N of 145**' ({len(found)} found); measure it with this script")
    return int(found[0][0]), int(found[0][1])


class Run:
    """One target started from its shootout build, and its h2spec output by case."""

    def __init__(self, suite, entry):
        self.name = entry["name"]
        need(not entry["missing"], f"missing {', '.join(entry['missing'])} (install {entry['install']})")
        need(entry["built"], f"not built in the shootout's cache: build it with `foxbench shootout "
                             f"{os.path.relpath(suite, harness.REPO)} --quick --only {self.name}`")
        self.port = harness.free_port()
        self.entry = harness.target(suite, entry["base"], {"port": self.port, "out": entry["built"]})
        self.group = harness.Group(self.entry["start"], shell=True, cwd=self.entry["dir"],
                                   env=harness.environ(self.entry))
        self.outputs = {}

    def ready(self):
        ok = self.group.wait_listening(self.port, self.entry["ready_timeout_s"])
        need(ok, f"not listening on {self.port} after {self.entry['ready_timeout_s']:.0f} s: "
                 f"{self.group.output(500)!r}")

    def stop(self):
        self.group.stop(5)
        self.group.kill()


def h2spec_case(h2spec, port, selector):
    """One h2spec process over the case SELECTOR: its output (stdout and stderr)."""
    try:
        r = subprocess.run([h2spec, "-h", "127.0.0.1", "-p", str(port), "-P", PATH, selector],
                           capture_output=True, text=True, timeout=CASE_LIMIT_S)
        return r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return out + f"\n(h2spec was stopped after {CASE_LIMIT_S} s)"


def score(run, selectors, total):
    """(passed, failed selectors, summary words) over every case, or Failed when one
    case's h2spec did not reach its summary line."""
    passed = tests = skipped = 0
    failed = []
    for sel in selectors:
        text = run.outputs[sel]
        m = SUMMARY.search(text)
        need(m, f"h2spec {sel} ended without its summary line: {text.strip()[-400:]!r}")
        tests += int(m.group(1))
        passed += int(m.group(2))
        skipped += int(m.group(3))
        failed += failures(text)
    need(tests == total, f"h2spec ran {tests} tests, not its {total} (a selector matched more than its case?)")
    return passed, failed, f"{passed} of {total} passed, {skipped} skipped, {len(failed)} failed"


def listed(failed, most=40):
    """The failing cases, the first MOST of them."""
    more = f" and {len(failed) - most} more" if len(failed) > most else ""
    return " ".join(failed[:most]) + more


def judge(run, selectors, total):
    """The check of one target: its score against its README's."""
    # A target that died mid-run leaves cases without a summary line: say that, not "no summary".
    need(run.group.alive(), f"it exited during h2spec: {run.group.output(500)!r}")
    passed, failed, words = score(run, selectors, total)
    floor, of = recorded(run.entry)
    need(of == total, f"its README's score is of {of} tests, h2spec has {total}")
    print(f"h2spec {run.name}: {words}" + (f"; failed: {listed(failed)}" if failed else ""), flush=True)
    if floor == total:
        need(passed == total, f"{words}: its README records every test passed; failed: {listed(failed)}")
        return f"{passed}/{total}"
    need(passed >= floor - TOLERANCE,
         f"{words}, its README records {floor} (tolerance {TOLERANCE}); failed: {listed(failed)}")
    more = f"; above its README's {floor}: update it if it stays" if passed > floor else ""
    return f"{passed}/{total}, README {floor}, tolerance {TOLERANCE}{more}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", nargs="?", default=SUITE)
    ap.add_argument("--only", help="these targets only (comma-separated)")
    ap.add_argument("--jobs", type=int, default=32, help="h2spec processes at a time (default 32)")
    args = ap.parse_args()
    args.suite = os.path.abspath(args.suite)   # foxbench runs in the repository
    h2spec = find_h2spec()
    if not h2spec:
        line = f"h2spec not found: install it with {INSTALL}"
        if os.environ.get("FOXBENCH_REQUIRE") == "all":
            print(f"FAIL h2spec: {line}\n0 passed, 1 failed", flush=True)
            return 1
        return harness.skip(f"skipped: {line}")
    started = time.monotonic()
    report = harness.Report()
    selectors = cases(h2spec)
    total = len(selectors)
    listing = harness.listing(args.suite)
    only = set(args.only.split(",")) if args.only else None
    # h2c only: a target with a TLS scenario is left out (h2spec would need -t, and a
    # certificate check of its own; suites/production.toml's nginx rows are such targets).
    tls = {s["name"] for s in listing["scenarios"] if s["tls"]}
    h2c = [t for t in listing["targets"] if t["http2"] and not tls & set(t["scenarios"])]
    entries = [t for t in h2c if only is None or t["name"] in only]
    unknown = only - {t["name"] for t in entries} if only else set()
    if unknown or not entries:
        print(f"h2spec: no h2c target {', '.join(sorted(unknown))} in {args.suite}: "
              f"its h2c targets are {', '.join(t['name'] for t in h2c) or 'none'}", file=sys.stderr)
        return 2
    runs = []
    try:
        for t in entries:
            try:
                runs.append(Run(args.suite, t))
            except Failed as e:
                report.report(False, f"h2spec {t['name']}", str(e))
        live = [r for r in runs if report.check(f"{r.name} started", r.ready)]
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            # Case by case across the targets (every target's first case, then the second...),
            # so that the processes at any one time are spread over all of them.
            jobs = {(r, sel): pool.submit(h2spec_case, h2spec, r.port, sel) for sel in selectors for r in live}
            for (r, sel), job in jobs.items():
                r.outputs[sel] = job.result()
        for r in live:
            report.check(f"h2spec {r.name}", judge, r, selectors, total)
    finally:
        for r in runs:
            r.stop()
    print(f"h2spec: {len(runs)} targets, {len(selectors)} cases each, {args.jobs} at a time: "
          f"{time.monotonic() - started:.0f} s", flush=True)
    return report.summary()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except harness.SetupError as e:
        print(f"h2spec: {e}", file=sys.stderr)
        print("0 passed, 1 failed", flush=True)
        sys.exit(2)
