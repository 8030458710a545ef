#!/usr/bin/env bash
# Builds and starts targets/rust-hyper as foxbench does and checks the avatar contract
# (targets/contract.py with --h2c: contract_h2c.py; plus rust-hyper/checks.py: the SVG routes).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" rust-hyper --h2c --h2c-svg --listening-line --any-method --slow-reader 20000 --http10 --http10-no-close-header --template --refuses 0,65536
