#!/usr/bin/env bash
# Builds and starts targets/c-epoll as foxbench does and checks the avatar contract
# (targets/contract.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" c-epoll --header 'Cache-Control: no-store' --slow-reader 100000 --listening-line --no-host-ok
