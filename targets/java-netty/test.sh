#!/usr/bin/env bash
# Builds targets/java-netty with Maven and starts it as foxbench does, and checks the avatar
# contract (targets/contract.py with --h2c: contract_h2c.py; plus java-netty/checks.py: the SVG
# routes).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" java-netty --h2c --h2c-upgrade --h2c-svg --listening-line --any-method --slow-reader 20000 --http10 --http10-keepalive --garbage-no-302 --template --refuses 0,65536 --term-status 0,143
