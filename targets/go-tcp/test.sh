#!/usr/bin/env bash
# Builds and starts targets/go-tcp as foxbench does and checks the avatar contract
# (targets/contract.py, plus go-tcp/checks.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" go-tcp --closes --exact --no-pipelining --listening-line --template --term-status 0,143
