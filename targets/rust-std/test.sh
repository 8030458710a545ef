#!/usr/bin/env bash
# Builds targets/rust-std into a temp dir, starts it on a free loopback port and
# checks the avatar contract for a sequential, one-request-per-connection
# server: Connection: close on every response, garbage, silent and dribbling
# clients, resets, and a prompt exit on SIGTERM.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
N=5
passed=0
failed=0
server_pid=""
out="$(mktemp -d)"
log="$out/log"

cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
    rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
finish() { echo "$passed passed, $failed failed"; [[ $failed -eq 0 ]]; exit $?; }

# The suite's build command, run the way foxbench runs it.
if (cd "$here" && sh -c "rustc -C opt-level=3 -o $out/server main.rs") >"$log" 2>&1; then
    ok "build"
else
    fail "build" "$(cat "$log")"
    finish
fi

# Port 0: the server picks a free port and prints it.
"$out/server" 0 "$N" 2>"$log" &
server_pid=$!
port=""
for _ in $(seq 1 50); do
    port="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")"
    [[ -n "$port" ]] && break
    sleep 0.1
done
if [[ -n "$port" ]]; then ok "prints 'listening on 127.0.0.1:$port'"; else fail "startup" "$(cat "$log")"; finish; fi
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

# 2. All N images, one connection each; every connection ends after one response.
out_="$(py <<'EOF'
import re, socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
seen = {}
for _ in range(200):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /any/path?x=1 HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n")
    buf = b""
    while chunk := s.recv(4096):
        buf += chunk
    s.close()
    if buf.count(b"HTTP/1.1 302 Found") != 1:
        sys.exit(f"bad response {buf!r}")
    m = re.search(rb"\r\nLocation: https://avatar\.example/Renard-(\d+)\.png\r\n", buf)
    seen[int(m.group(1))] = seen.get(int(m.group(1)), 0) + 1
print(" ".join(f"{k}:{v}" for k, v in sorted(seen.items())))
sys.exit(0 if sorted(seen) == list(range(1, n + 1)) else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "all $N images over 200 connections, each closed after one response ($out_)"; else fail "all $N images" "$out_"; fi

# 3. A custom template, with {n} twice.
"$out/server" 0 3 'https://x.example/{n}/fox-{n}.png' 2>"$log.2" &
pid2=$!
port2=""
for _ in $(seq 1 50); do
    port2="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log.2")"
    [[ -n "$port2" ]] && break
    sleep 0.1
done
loc="$(curl -s -D - -o /dev/null --max-time 5 "http://127.0.0.1:$port2/" | tr -d '\r' | sed -n 's/^Location: //p')"
kill "$pid2"; wait "$pid2" 2>/dev/null
if [[ "$loc" =~ ^https://x\.example/([1-3])/fox-([1-3])\.png$ && "${BASH_REMATCH[1]}" == "${BASH_REMATCH[2]}" ]]; then
    ok "template with {n} twice ($loc)"
else
    fail "template" "$loc"
fi
if "$out/server" 0 0 2>/dev/null || "$out/server" 0 65536 2>/dev/null || "$out/server" 2>/dev/null; then
    fail "N outside 1..=65535 is refused"
else
    ok "N outside 1..=65535 is refused"
fi

# 4. Connection: keep-alive asked for, Connection: close given: a second
#    request on the same connection gets nothing.
out_="$(py <<'EOF'
import socket, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
buf = b""
while chunk := s.recv(4096):
    buf += chunk
try:
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    more = s.recv(4096)
except OSError:
    more = b""
ok = buf.count(b"302 Found") == 1 and b"\r\nConnection: close\r\n" in buf and more == b""
print(repr(buf[:40]), repr(more))
sys.exit(0 if ok else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "keep-alive not offered: one response, Connection: close, then EOF"; else fail "one request per connection" "$out_"; fi

# 5. Connection: close and HTTP/1.0 (ab's protocol).
out_="$(py <<'EOF'
import socket, sys
port = int(sys.argv[1])
for req in (b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", b"GET / HTTP/1.0\r\n\r\n"):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(req)
    buf = b""
    while chunk := s.recv(4096):
        buf += chunk
    if buf.count(b"302 Found") != 1:
        sys.exit(repr(buf))
EOF
)"
if [[ $? -eq 0 ]]; then ok "Connection: close and HTTP/1.0 get one response, then EOF"; else fail "Connection: close" "$out_"; fi

# 6. A silent client and one that dribbles a byte at a time hold the server
#    for at most the 1 s head deadline; the next client is served after it.
out_="$(py <<'EOF'
import socket, sys, threading, time
port = int(sys.argv[1])
silent = socket.create_connection(("127.0.0.1", port), timeout=5)
dribbler = socket.create_connection(("127.0.0.1", port), timeout=5)
def dribble():
    try:
        for b in b"GET / HTTP/1.1\r\nHost: x\r\n" * 10:
            dribbler.send(bytes([b]))
            time.sleep(0.05)
    except OSError:
        pass
threading.Thread(target=dribble, daemon=True).start()
time.sleep(0.1)
t0 = time.monotonic()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
buf = s.recv(4096)
waited = time.monotonic() - t0
print(f"served after {waited:.2f}s")
sys.exit(0 if b"302 Found" in buf and waited < 3.5 else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "silent and dribbling clients are cut off by the head deadline ($out_)"; else fail "silent client" "$out_"; fi

# 7. Garbage, oversized heads and resets.
out_="$(py <<'EOF'
import os, random, socket, sys
port = int(sys.argv[1])
rnd = random.Random(7)
cases = [
    os.urandom(4096),
    b"\x00" * 9000,                                # over the 8 KiB head cap
    b"\r\n\r\n" * 5000,
    b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 3000,    # never-ending head
    bytes(rnd.randrange(256) for _ in range(20000)),
    b"\xff\xfe" * 10 + b"\r\n\r\n",
    b"HELLO\r\n\r\n",
]
for data in cases:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        while chunk := s.recv(65536):
            if b"302" in chunk:
                sys.exit(f"garbage got a 302: {data[:20]!r}")
    except OSError:
        pass  # a reset is an acceptable answer to garbage
    s.close()
for _ in range(20):  # reset before and after the request
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET / HTTP/1.1\r\n\r\n")
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\n\r\n")
sys.exit(0 if b"302 Found" in s.recv(4096) else 1)
EOF
)"
if [[ $? -eq 0 ]] && kill -0 "$server_pid" 2>/dev/null; then
    ok "garbage, oversized heads and resets do not crash it"
else
    fail "garbage" "$out_"
fi

# 8. SIGTERM: the default action, so the status is 143; it must be prompt.
t0=$(date +%s%N)
kill "$server_pid"
wait "$server_pid"
status=$?
ms=$((($(date +%s%N) - t0) / 1000000))
server_pid=""
if [[ $ms -le 1000 ]]; then ok "SIGTERM exits in ${ms} ms (status $status)"; else fail "SIGTERM" "took ${ms} ms"; fi
finish
