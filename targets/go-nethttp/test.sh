#!/usr/bin/env bash
# Builds and starts targets/go-nethttp as foxbench does and checks the avatar contract
# (targets/contract.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" go-nethttp --listening-line --any-method --huge-head 300000 --template
