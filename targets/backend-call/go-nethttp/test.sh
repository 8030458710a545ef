#!/usr/bin/env bash
# Builds and starts the Go front end as suites/backend.toml does, on the default Transport
# and with IDLE=1000 (two rows, one build), and checks the backend-call contract
# (../contract.py). Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" --name go-nethttp --skip-if-missing go \
  --build 'GOTOOLCHAIN=local go build -o {out}/server .' --row '' --row 1000 --bound 1000=1000 \
  -- '{out}/server {port} {backend} {row}'
