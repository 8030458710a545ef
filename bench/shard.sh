#!/usr/bin/env bash
# The overhead of sharding: `foxbench load --shard 0/1` against plain `foxbench load`, side
# by side (A B A B ...), foxbench on CPU 0 and the c-epoll server on CPU 1, same target;
# prints the client CPU per request of each run and the median ratio.
# Usage: bash bench/shard.sh [FOXBENCH] [PAIRS] [DURATION]
set -euo pipefail
cd "$(dirname "$0")/.."
fox=${1:-target/release/foxbench}
pairs=${2:-5}
dur=${3:-5s}
make -s -C targets/c-epoll
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c 1 targets/c-epoll/server "$port" 5 > /dev/null &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null' EXIT
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
tmp=$(mktemp -d); trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$tmp"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $("$fox" --version)"
echo "command: taskset -c 0 $fox load -t 1 -c 10 -d $dur [--shard 0/1] http://127.0.0.1:$port/"
for i in $(seq "$pairs"); do
  for mode in plain shard; do
    extra=(); [ "$mode" = shard ] && extra=(--shard 0/1)
    taskset -c 0 "$fox" load -q -t 1 -c 10 -d "$dur" "${extra[@]}" --json "$tmp/$mode-$i.json" "http://127.0.0.1:$port/"
  done
done
python3 - "$tmp" "$pairs" <<'PY'
import json, statistics, sys
d, pairs = sys.argv[1], int(sys.argv[2])
ratios = []
for i in range(1, pairs + 1):
    a = json.load(open(f"{d}/plain-{i}.json")); b = json.load(open(f"{d}/shard-{i}.json"))
    ca, cb = a["client"]["cpu_us_per_request"], b["client"]["cpu_us_per_request"]
    assert "shard" not in a and b["shard"]["count"] == 1
    ratios.append(cb / ca)
    print(f"pair {i}: plain {ca:.2f} µs/req ({a['throughput']['requests_per_sec']:.0f} req/s), "
          f"--shard 0/1 {cb:.2f} µs/req ({b['throughput']['requests_per_sec']:.0f} req/s), ratio {cb / ca:.3f}")
print(f"median ratio --shard 0/1 / plain: {statistics.median(ratios):.3f} "
      f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
PY
