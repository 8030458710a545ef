#!/usr/bin/env bash
# Builds and starts targets/java-httpserver-pool as foxbench does and checks the avatar contract
# (targets/contract.py, plus java-httpserver-pool/checks.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" java-httpserver-pool --any-reason --listening-line --any-method --slow-reader 20000 --no-close-header --http10 --term-status 0,143
