#!/usr/bin/env bash
# Builds and starts the hyper front end as suites/backend.toml does (the cargo target dir is
# kept under $TMPDIR between runs, so a second run does not rebuild hyper), then checks the
# backend-call contract (../contract.py). Prints "N passed, N failed" last; non-zero on failure.
cache="${TMPDIR:-/tmp}/foxbench-backend-call-hyper-cargo"
exec python3 "$(dirname "$0")/../contract.py" --name rust-hyper --skip-if-missing cargo --bound 1024 \
  --build "cargo build --quiet --release --locked --target-dir $cache && cp $cache/release/backend-call-hyper {out}/server" \
  -- '{out}/server {port} {backend}'
