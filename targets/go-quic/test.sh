#!/usr/bin/env bash
# Builds and starts targets/go-quic as foxbench does (suites/avatar-h3.toml) and checks the
# avatar contract over TLS on TCP and over h3 (targets/contract_h3.py).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract_h3.py" go-quic
