#!/usr/bin/env bash
# Builds and starts the virtual-thread front end with the newest Temurin JDK, found as the
# suite finds it (requires = ["/usr/lib/jvm/temurin-*/bin/java", ...]; its bin/ first on the
# target's PATH), its commands as foxbench fills them, and checks the backend-call contract
# (../contract.py, against the real hello backend). Without a Temurin JDK it prints a skip
# line and "0 passed, 0 failed".
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" java-virtual-threads
