#!/usr/bin/env bash
# Copies server.js and installs undici (package-lock.json) in the build directory, as
# suites/database.toml does for its Node target, and starts the Node front end as
# suites/backend.toml does, with each client (the keep-alive http.Agent and the global fetch:
# two rows), and checks the backend-call contract (../contract.py). Prints "N passed, N failed"
# last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" --name node-fetch --skip-if-missing node --skip-if-missing npm \
  --build 'cp package.json package-lock.json server.js {out}/ && cd {out} && npm ci --silent --no-audit --no-fund' \
  --row agent --row fetch --bound 1024 -- 'node {out}/server.js {port} {backend} {row}'
