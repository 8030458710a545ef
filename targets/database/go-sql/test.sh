#!/usr/bin/env bash
# Builds and starts targets/database/go-sql against a real PostgreSQL and checks GET /doc/{id} (targets/database/check.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../check.py" go-sql

