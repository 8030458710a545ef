#!/usr/bin/env bash
# Builds the virtual-thread front end with the newest Temurin JDK, found as the suite finds
# it (requires = ["/usr/lib/jvm/temurin-*/bin/java"]: the newest by version, its bin/ first
# on PATH), and checks the backend-call contract (../contract.py, against the real hello
# backend). Without a Temurin JDK it prints a skip line and "0 passed, 0 failed".
# Prints "N passed, N failed" last; exits non-zero if anything failed.
java=$(ls -d /usr/lib/jvm/temurin-*/bin/java 2>/dev/null | sort -V | tail -n 1)
if [ -z "$java" ] || [ ! -x "$java" ] || [ ! -x "$(dirname "$java")/javac" ]; then
  echo "skip java-virtual-threads: no /usr/lib/jvm/temurin-*/bin/java with javac (virtual threads need JDK 21 or newer: install temurin-21-jdk or newer from Adoptium's apt repository)"
  echo "0 passed, 0 failed"
  exit 0
fi
export PATH="$(dirname "$java"):$PATH"
exec python3 "$(dirname "$0")/../contract.py" --name java-virtual-threads \
  --build 'javac --release 21 -d {out} VirtualThreadFrontEnd.java' \
  -- 'java -Xmx512m -XX:+UseSerialGC -cp {out} VirtualThreadFrontEnd {port} {backend}'
