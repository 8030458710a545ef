#!/usr/bin/env bash
# Builds and starts targets/node-http as foxbench does and checks the avatar contract
# (targets/contract.py with --h2c: contract_h2c.py; plus node-http/checks.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" node-http --h2c --h2c-svg --listening-line --slow-reader 100000 --http10 --http10-keepalive --close-drops-rest --strict-garbage --template --refuses 0,65536
