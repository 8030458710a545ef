#!/usr/bin/env bash
# Builds the async front end with javac as suites/backend.toml does and checks the
# backend-call contract (../contract.py, against the real hello backend).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
exec python3 "$(dirname "$0")/../contract.py" --name java-async --skip-if-missing javac --skip-if-missing java \
  --build 'javac -d {out} AsyncFrontEnd.java' \
  -- 'java -Xmx1g -XX:+UseSerialGC -Djava.util.concurrent.ForkJoinPool.common.parallelism=2 -cp {out} AsyncFrontEnd {port} {backend}'
