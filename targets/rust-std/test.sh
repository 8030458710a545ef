#!/usr/bin/env bash
# Builds and starts targets/rust-std as foxbench does and checks the avatar contract
# (targets/contract.py, plus rust-std/checks.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" rust-std --closes --no-pipelining --listening-line --template --refuses 0,65536 --http10 --garbage-no-302 --no-host-ok --term-status any
