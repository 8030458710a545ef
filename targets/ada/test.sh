#!/usr/bin/env bash
# Builds and starts targets/ada as foxbench does and checks the avatar contract
# (targets/contract.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" ada --listening-line --no-host-ok --http10 --http10-keepalive --term-status any
