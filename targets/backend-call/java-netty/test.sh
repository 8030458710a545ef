#!/usr/bin/env bash
# Builds the Netty front end with Maven as suites/backend.toml does (the first build downloads
# Netty and Maven's plugins into ~/.m2), its commands as foxbench fills them, and checks the
# backend-call contract (../contract.py, against the real hello backend).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" java-netty
