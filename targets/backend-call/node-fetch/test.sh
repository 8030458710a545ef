#!/usr/bin/env bash
# Installs undici (package-lock.json) into the build directory and starts the Node front end as
# suites/backend.toml does, with each client (the keep-alive http.Agent and the global fetch:
# two rows), and checks the backend-call contract (../contract.py). Prints "N passed, N failed"
# last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" --name node-fetch --skip-if-missing node --skip-if-missing npm \
  --build 'cp package.json package-lock.json {out}/ && npm ci --silent --no-audit --no-fund --prefix {out}' \
  --row agent --row fetch -- 'env NODE_PATH={out}/node_modules node server.js {port} {backend} {row}'
