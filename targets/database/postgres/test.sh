#!/usr/bin/env bash
# The PostgreSQL service script's lifecycle (targets/database/check.py): start, seed, stop, interrupted starts.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../check.py" postgres

