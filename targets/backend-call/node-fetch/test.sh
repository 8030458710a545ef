#!/usr/bin/env bash
# Starts the Node front end as suites/backend.toml does, with each client (the keep-alive
# http.Agent and the global fetch: two rows), and checks the backend-call contract
# (../contract.py). Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" --name node-fetch --skip-if-missing node \
  --row agent --row fetch -- 'node server.js {port} {backend} {row}'
