#!/usr/bin/env bash
# Builds and starts both go-nethttp rows of suites/backend.toml (the default Transport, and
# MaxIdleConnsPerHost 1,024), their commands as foxbench fills them, and checks the
# backend-call contract (../contract.py), the tuned row's pool bounded at 1,024.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" go-nethttp --bound 'go-nethttp[idle=1024]=1024'
