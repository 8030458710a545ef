#!/usr/bin/env bash
# Builds and starts targets/nginx as foxbench does (run.sh -t, then run.sh in its own
# process group) and checks the avatar contract (targets/contract.py), plus
# split_clients uniformity for N=5 and N=21 and a tricky template (nginx/checks.py),
# then the h2c row (run.sh --h2c, the suite's nginx-h2c): the h2c checks of
# targets/contract_h2c.py, and no HTTP/1 answer on that port.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" nginx --any-reason --refuses 10001 \
    --h2c-start 'sh run.sh --h2c {out} {port} {images}'
