#!/usr/bin/env bash
# Builds the venv (aiohttp from PyPI, requirements.txt) and starts the aiohttp front end as
# suites/backend.toml does, then checks the backend-call contract (../contract.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" --name python-aiohttp --skip-if-missing python3 --bound 1024 \
  --build 'python3 -m venv {out}/venv && {out}/venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt' \
  -- '{out}/venv/bin/python server.py {port} {backend}'
