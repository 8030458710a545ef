#!/usr/bin/env bash
# Builds the blocking front end with javac as suites/backend.toml does and checks the
# backend-call contract (../contract.py, against the real hello backend) with 200 and with
# 10,000 threads. Prints "N passed, N failed" last (both rows together); exits non-zero if
# anything failed.
here="$(dirname "$0")"
build='javac -d {out} BlockingFrontEnd.java'
status=0 total_p=0 total_f=0
for threads in 200 10000; do
  out=$(python3 "$here/../contract.py" --name java-blocking --skip-if-missing javac --skip-if-missing java \
    --build "$build" -- "java -Xmx256m -XX:+UseSerialGC -cp {out} BlockingFrontEnd {port} {backend} $threads") || status=1
  # Each row's summary is relabelled so that only the last line below counts.
  summary=$(printf '%s\n' "$out" | tail -n 1)
  printf '%s\n' "$out" | sed '$d'
  echo "row threads=$threads: $summary"
  read -r p _ f _ <<< "$summary"
  total_p=$((total_p + p)) total_f=$((total_f + f))
done
echo "$total_p passed, $total_f failed"
exit $status
