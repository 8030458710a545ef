#!/usr/bin/env bash
# Builds the Node front end and starts both its rows of suites/backend.toml (the keep-alive
# http.Agent and the global fetch), their commands as foxbench fills them, and checks the
# backend-call contract (../contract.py), each pool bounded at 1,024.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" node-fetch --bound 1024
