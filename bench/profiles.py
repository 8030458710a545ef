#!/usr/bin/env python3
"""Times clean builds of foxbench under release-profile variants, side by side.

Each variant (LTO fat or thin, 1 or 16 codegen units) builds `-p foxbench` from nothing
(dependencies included, as on a fresh clone) into a target directory of its own, with the
profile's settings given as Cargo's environment overrides, so that Cargo.toml is not
edited. Variants alternate over --repeats rounds (A B C D A B C D); the wall time, the
build's CPU time (its children's user+sys from wait4) and the binary's size are kept, and
the binary of each variant's last round is left in its directory for bench/load.py
(`--foxbench DIR/release/foxbench --foxbench-base ...`).

    python3 bench/profiles.py --out bench/runs/$(date +%F)-build-profiles

Run it on a quiet machine: another process on the CPUs stretches the wall times, the
parallel variants' most. SETUP.md records the load average before and after.
"""

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time

VARIANTS = {
    "fat-1": ("fat", 1),
    "fat-16": ("fat", 16),
    "thin-1": ("thin", 1),
    "thin-16": ("thin", 16),
}


def build(root, name, lto, cgu, target_dir):
    shutil.rmtree(target_dir, ignore_errors=True)
    env = dict(os.environ,
               CARGO_TARGET_DIR=target_dir,
               CARGO_PROFILE_RELEASE_LTO=lto,
               CARGO_PROFILE_RELEASE_CODEGEN_UNITS=str(cgu),
               CARGO_TERM_COLOR="never")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "foxbench"],
                       cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{name}: cargo build failed:\n{p.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    binary = os.path.join(target_dir, "release", "foxbench")
    return dict(variant=name, lto=lto, codegen_units=cgu, wall_s=round(wall, 1),
                cpu_s=round(cpu, 1), binary_bytes=os.path.getsize(binary))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--dir", default="/tmp/foxbench-profiles",
                    help="where each variant's target directory goes (DIR/VARIANT)")
    ap.add_argument("--out", help="directory for raw.json, summary.md and SETUP.md")
    args = ap.parse_args()
    names = args.variants.split(",")
    for n in names:
        if n not in VARIANTS:
            ap.error(f"unknown variant {n!r}: expected some of {','.join(VARIANTS)}")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    load_before = open("/proc/loadavg").read().split()[:3]
    runs = []
    for rnd in range(args.repeats):
        for n in names:
            lto, cgu = VARIANTS[n]
            r = build(root, n, lto, cgu, os.path.join(args.dir, n))
            r["round"] = rnd
            runs.append(r)
            print(f"round {rnd + 1} {n}: {r['wall_s']} s wall, {r['cpu_s']} s CPU, "
                  f"{r['binary_bytes'] / 1e6:.1f} MB", file=sys.stderr)
    load_after = open("/proc/loadavg").read().split()[:3]
    rows = []
    base = statistics.median(r["wall_s"] for r in runs if r["variant"] == names[0])
    for n in names:
        mine = [r for r in runs if r["variant"] == n]
        wall = statistics.median(r["wall_s"] for r in mine)
        cpu = statistics.median(r["cpu_s"] for r in mine)
        rows.append(f"| {n} | {VARIANTS[n][0]} | {VARIANTS[n][1]} | {wall:.0f} s | "
                    f"{wall / base:.2f}× | {cpu:.0f} s | {mine[-1]['binary_bytes'] / 1e6:.1f} MB |")
    summary = "\n".join([
        f"Clean builds of `-p foxbench` (dependencies included), median of {args.repeats} "
        f"round(s); wall time against {names[0]}.",
        "",
        "| variant | LTO | codegen units | wall | vs first | CPU (user+sys) | binary |",
        "|---|---|---|---:|---:|---:|---:|",
        *rows,
        "",
    ])
    print(summary)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "raw.json"), "w") as f:
            json.dump(dict(runs=runs, load_before=load_before, load_after=load_after), f, indent=1)
        with open(os.path.join(args.out, "summary.md"), "w") as f:
            f.write(summary)
        cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                          if l.startswith("model name")), "unknown")
        rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
        with open(os.path.join(args.out, "SETUP.md"), "w") as f:
            f.write(f"""# Setup

- CPU: {cpu_model}, {os.cpu_count()} CPUs; kernel {platform.release()}
- {rustc}
- command: `python3 bench/profiles.py --variants {args.variants} --repeats {args.repeats}`
- each build: `cargo build --release --locked -p foxbench` in an emptied target directory,
  `CARGO_PROFILE_RELEASE_LTO` and `CARGO_PROFILE_RELEASE_CODEGEN_UNITS` set per variant
- load average before: {' '.join(load_before)}; after: {' '.join(load_after)}
""")


if __name__ == "__main__":
    main()
