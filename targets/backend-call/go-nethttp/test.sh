#!/usr/bin/env bash
# Builds and starts the Go front end as suites/backend.toml does, with the default Transport
# and with IDLE=1000, and checks the backend-call contract (../contract.py) for each.
# Prints "N passed, N failed" last (both rows together); exits non-zero if anything failed.
here="$(dirname "$0")"
build='GOTOOLCHAIN=local go build -o {out}/server .'
status=0
total_p=0 total_f=0
for idle in "" 1000; do
  out=$(python3 "$here/../contract.py" --name go-nethttp --skip-if-missing go --build "$build" -- "{out}/server {port} {backend} $idle") || status=1
  # Each row's summary is relabelled so that only the last line below counts.
  summary=$(printf '%s\n' "$out" | tail -n 1)
  printf '%s\n' "$out" | sed '$d'
  echo "row IDLE=${idle:-default}: $summary"
  read -r p _ f _ <<< "$summary"
  total_p=$((total_p + p)) total_f=$((total_f + f))
done
echo "$total_p passed, $total_f failed"
exit $status
