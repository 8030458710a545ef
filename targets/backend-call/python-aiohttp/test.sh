#!/usr/bin/env bash
# Builds the venv (aiohttp from PyPI) and starts the aiohttp front end as suites/backend.toml
# does, its commands as foxbench fills them, and checks the backend-call contract
# (../contract.py), its pool bounded at 1,024.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" python-aiohttp --bound 1024
