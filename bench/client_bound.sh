#!/bin/bash
# A run where foxbench is client-bound on purpose: avatar (one worker, CPU 1) outruns one
# foxbench thread (CPU 0) at 100 and 1000 connections. The figures there are the client's;
# the kernel latency beside the read latency, and the client's delay, show by how much.
set -euo pipefail
out=${1:?usage: clientbound.sh OUTDIR}
fox=${FOX:-target/release/foxbench}
mkdir -p "$out"
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
taskset -c 1 target/release/avatar "$port" 21 --workers 1 --max-connections 50000 > "$out/avatar.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for i in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.05; done
for c in 100 1000; do
  for clock in kernel read; do
    cmd=(taskset -c 0 "$fox" load -t 1 -c "$c" -d 5s --latency-clock "$clock" --json "$out/c$c-$clock.json" "http://127.0.0.1:$port/")
    echo "\$ ${cmd[*]}" > "$out/c$c-$clock.txt"
    "${cmd[@]}" >> "$out/c$c-$clock.txt" 2>&1
  done
done
