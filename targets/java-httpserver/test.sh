#!/usr/bin/env bash
# Builds and starts targets/java-httpserver as foxbench does and checks the avatar contract
# (targets/contract.py, plus java-httpserver/checks.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" java-httpserver --any-reason --listening-line --any-method --slow-reader 20000 --no-close-header --http10 --term-status 0,143
