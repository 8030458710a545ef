#!/usr/bin/env bash
# Builds targets/go-tcp into a temp dir, starts it on a free loopback port and
# checks the avatar contract for a sequential, one-request-per-connection
# server: every response says Connection: close and is followed by EOF, a
# silent client is dropped after the 1 s deadline, garbage is survived.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
N=5
passed=0
failed=0
server_pid=""
out="$(mktemp -d)"
log="$out/log"
command -v go >/dev/null || PATH="$PATH:/usr/local/go/bin"

cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill -KILL "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
    rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
finish() { echo "$passed passed, $failed failed"; [[ $failed -eq 0 ]]; exit $?; }

if (cd "$here" && go build -o "$out/server" .); then ok "build"; else fail "build"; finish; fi

# Port 0: the kernel picks a free port and the server prints it.
start_server() {
    : >"$log"
    "$out/server" 0 "$@" 2>"$log" &
    server_pid=$!
    port=""
    for _ in $(seq 1 50); do
        port="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")"
        [[ -n "$port" ]] && return 0
        sleep 0.1
    done
    return 1
}

# A custom template; every {n} gets the same number.
if start_server 1 'http://h.test/{n}/fox-{n}.gif'; then
    loc="$(curl -s -D - -o /dev/null --max-time 5 "http://127.0.0.1:$port/" | tr -d '\r' | sed -n 's/^Location: //p')"
    if [[ "$loc" == "http://h.test/1/fox-1.gif" ]]; then ok "custom template: $loc"; else fail "custom template" "$loc"; fi
    kill "$server_pid"; wait "$server_pid" 2>/dev/null; server_pid=""
else
    fail "startup with template" "$(cat "$log")"
fi

if start_server "$N"; then ok "prints 'listening on 127.0.0.1:$port'"; else fail "startup" "$(cat "$log")"; finish; fi
url="http://127.0.0.1:$port/"

# 1. One request: 302, Location pattern, Content-Length: 0, Connection: close.
head="$(curl -s -D - -o /dev/null --max-time 5 "$url" | tr -d '\r')"
if grep -q '^HTTP/1.1 302 Found$' <<<"$head" &&
    grep -Eq "^Location: https://avatar\.example/Renard-[1-$N]\.png$" <<<"$head" &&
    grep -q '^Content-Length: 0$' <<<"$head" &&
    grep -q '^Connection: close$' <<<"$head"; then
    ok "302 with Location, Content-Length: 0 and Connection: close"
else
    fail "302 response" "$head"
fi

py() { python3 - "$port" "$N" "$@"; }

# 2. All N images over 200 requests, each on its own connection, each
# answered once and followed by EOF even though the client asked for
# keep-alive.
out_="$(py <<'EOF'
import re, socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
seen = {}
for _ in range(200):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /any/path?x=1 HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
    buf = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    s.close()
    m = re.fullmatch(rb"HTTP/1\.1 302 Found\r\nLocation: https://avatar\.example/Renard-(\d+)\.png\r\n"
                     rb"Content-Length: 0\r\nConnection: close\r\n\r\n", buf)
    if not m:
        sys.exit(f"bad response {buf!r}")
    seen[int(m.group(1))] = seen.get(int(m.group(1)), 0) + 1
print(" ".join(f"{k}:{v}" for k, v in sorted(seen.items())))
sys.exit(0 if sorted(seen) == list(range(1, n + 1)) else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "all $N images over 200 connections, each one response then EOF ($out_)"; else fail "all $N images" "$out_"; fi

# 3. Connection: close, and a head split across writes.
out_="$(py <<'EOF'
import socket, sys, time
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHo")
time.sleep(0.05)
s.sendall(b"st: x\r\nConnection: close\r\n\r")
time.sleep(0.05)
s.sendall(b"\n")
buf = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
print(repr(buf[:60]))
sys.exit(0 if buf.count(b"302 Found") == 1 and b"Connection: close" in buf else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "Connection: close (head split over 3 writes) gets one response, then EOF"; else fail "Connection: close" "$out_"; fi

# 4. A silent client holds the listener for the 1 s deadline, no longer.
out_="$(py <<'EOF'
import socket, sys, time
port = int(sys.argv[1])
silent = socket.create_connection(("127.0.0.1", port), timeout=5)
time.sleep(0.05)
t0 = time.monotonic()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
ok = b"302 Found" in s.recv(4096)
waited = time.monotonic() - t0
closed = silent.recv(1) == b""
print(f"second client waited {waited:.2f} s, silent one closed: {closed}")
sys.exit(0 if ok and closed and 0.5 < waited < 2 else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "silent client dropped at the deadline ($out_)"; else fail "silent client" "$out_"; fi

# 5. Garbage, oversized heads and resets; a later request still works.
out_="$(py <<'EOF'
import os, random, socket, sys
port = int(sys.argv[1])
rnd = random.Random(7)
cases = [
    os.urandom(4096),
    b"\x00" * 9000,                                 # over the 8 KiB cap: closed
    b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 3000,   # never-ending head
    bytes(rnd.randrange(256) for _ in range(20000)),
    b"\xff\xfe" * 10 + b"\r\n\r\n",                # "head" of garbage: answered, harmless
    b"\r\n\r\n" * 5000,
]
for data in cases:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
    except OSError:
        pass  # a reset is an acceptable answer to garbage
    s.close()
for _ in range(20):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET / HTTP/1.1\r\n\r\n" * 200)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
sys.exit(0 if b"302 Found" in s.recv(4096) else 1)
EOF
)"
if [[ $? -eq 0 ]] && kill -0 "$server_pid" 2>/dev/null; then
    ok "garbage, oversized heads and resets do not crash it"
else
    fail "garbage" "$out_"
fi

# 6. SIGTERM: no handler, so the Go runtime's default applies and the process
# dies of the signal at once (status 143 from the shell's point of view).
start=$(date +%s%N)
kill -TERM "$server_pid"
wait "$server_pid"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
server_pid=""
if [[ ($rc -eq 0 || $rc -eq 143) && $ms -le 1000 ]]; then ok "SIGTERM ends it (status $rc) in ${ms} ms"; else fail "SIGTERM" "status $rc after ${ms} ms"; fi

finish
