#!/usr/bin/env bash
# Builds and starts targets/php as foxbench does (run.sh -t, then run.sh in its own
# process group) and checks the avatar contract (targets/contract.py), plus php-fpm's
# session, master and children and the php -S fallback (php/checks.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" php --no-content-length
