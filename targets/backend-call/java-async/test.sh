#!/usr/bin/env bash
# Builds and starts the async front end's TCP_NODELAY row of suites/backend.toml, its commands
# as foxbench fills them, and checks the backend-call contract (../contract.py, against the
# real hello backend). The nodelay=false row differs only by the JDK's default, which costs
# each response a delayed ACK (issue 26).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" java-async --row 'java-async[nodelay=true]'
