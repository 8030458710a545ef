#!/usr/bin/env bash
# Builds and starts the hyper front end as suites/backend.toml does, its commands as foxbench
# fills them, with {out} kept under $TMPDIR between runs (--keep-out), so a second run does
# not rebuild hyper; checks the backend-call contract (../contract.py), its pool bounded at 1,024.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" rust-hyper --bound 1024 --keep-out
