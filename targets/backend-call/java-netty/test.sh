#!/usr/bin/env bash
# Builds the Netty front end with Maven as suites/backend.toml does (the first build downloads
# Netty and Maven's plugins into ~/.m2) and checks the backend-call contract (../contract.py,
# against the real hello backend). Prints "N passed, N failed" last; exits non-zero if
# anything failed.
exec python3 "$(dirname "$0")/../contract.py" --name java-netty --skip-if-missing mvn --skip-if-missing java \
  --build 'mvn -B -q -Dstyle.color=never -DbuildDir={out}/target package && cp {out}/target/backend-netty.jar {out}/' \
  -- 'java -Xmx128m -XX:+UseSerialGC -jar {out}/backend-netty.jar {port} {backend}'
