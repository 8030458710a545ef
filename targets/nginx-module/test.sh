#!/usr/bin/env bash
# Builds targets/nginx-module as foxbench does (build.sh against the installed nginx's
# nginx-dev sources, then run.sh in its own process group) and checks the avatar contract
# (targets/contract.py), plus uniformity and a tricky template (nginx-module/checks.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" nginx-module --listening-line --any-method --slow-reader 20000 --http10 --template --refuses 0,65536
