#!/usr/bin/env bash
# Builds the blocking front end and starts its TCP_NODELAY rows of suites/backend.toml (200
# and 10,000 threads), their commands as foxbench fills them, and checks the backend-call
# contract (../contract.py, against the real hello backend) on each.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" java-blocking --row 'java-blocking[threads=200,nodelay=true]' --row 'java-blocking[threads=10000,nodelay=true]'
