#!/usr/bin/env bash
# Builds and starts targets/python-asyncio as foxbench does and checks the avatar contract
# (targets/contract.py, plus python-asyncio/checks.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" python-asyncio --listening-line --slow-reader 100000 --http10 --http10-keepalive --close-drops-rest --strict-garbage --no-crlf-shutdown --template --refuses 0,65536
