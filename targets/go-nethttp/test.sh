#!/usr/bin/env bash
# Builds and starts targets/go-nethttp as foxbench does and checks the avatar contract
# (targets/contract.py with --h2c: contract_h2c.py; plus go-nethttp/checks.py: the SVG routes).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" go-nethttp --h2c --h2c-svg --listening-line --any-method --huge-head 300000 --template
