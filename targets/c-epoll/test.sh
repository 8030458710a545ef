#!/usr/bin/env bash
# Builds targets/c-epoll, starts it on a free loopback port and checks the
# avatar contract, pipelining, Connection: close and garbage input.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
N=5
passed=0
failed=0
server_pid=""
log="$(mktemp)"

cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
    rm -f "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
finish() { echo "$passed passed, $failed failed"; [[ $failed -eq 0 ]]; exit $?; }

if make -s -C "$here" >/dev/null; then ok "build"; else fail "build"; finish; fi

# Port 0: the server picks a free port and prints it.
"$here/server" 0 "$N" 2>"$log" &
server_pid=$!
port=""
for _ in $(seq 1 50); do
    port="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")"
    [[ -n "$port" ]] && break
    sleep 0.1
done
if [[ -n "$port" ]]; then ok "prints 'listening on 127.0.0.1:$port'"; else fail "startup" "$(cat "$log")"; finish; fi
url="http://127.0.0.1:$port/"

# 1. One request: 302, Location pattern, Content-Length: 0, Cache-Control.
head="$(curl -s -D - -o /dev/null --max-time 5 "$url" | tr -d '\r')"
if grep -q '^HTTP/1.1 302 Found$' <<<"$head" &&
    grep -Eq "^Location: https://avatar\.example/Renard-[1-$N]\.png$" <<<"$head" &&
    grep -q '^Content-Length: 0$' <<<"$head" &&
    grep -q '^Cache-Control: no-store$' <<<"$head"; then
    ok "302 with Location, Content-Length and Cache-Control"
else
    fail "302 response" "$head"
fi

# 2-5 use raw sockets, so responses are counted exactly.
py() { python3 - "$port" "$N" "$@"; }

out="$(py <<'EOF'
import re, socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
seen = {}
s = socket.create_connection(("127.0.0.1", port), timeout=5)
buf = b""
for _ in range(200):
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            sys.exit("closed early")
        buf += chunk
    resp, buf = buf.split(b"\r\n\r\n", 1)
    m = re.search(rb"Location: https://avatar\.example/Renard-(\d+)\.png", resp)
    seen[int(m.group(1))] = seen.get(int(m.group(1)), 0) + 1
print(" ".join(f"{k}:{v}" for k, v in sorted(seen.items())))
sys.exit(0 if sorted(seen) == list(range(1, n + 1)) else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "all $N images over 200 keep-alive requests ($out)"; else fail "all $N images" "$out"; fi

out="$(py <<'EOF'
import socket, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 3)  # one write, three heads
buf = b""
while buf.count(b"HTTP/1.1 302 Found") < 3:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
# A partial head split across writes must be kept and answered later.
s.sendall(b"GET / HTTP/1.1\r\nHo")
s.sendall(b"st: x\r\n\r")
s.sendall(b"\n")
while buf.count(b"HTTP/1.1 302 Found") < 4:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
print(buf.count(b"HTTP/1.1 302 Found"))
sys.exit(0 if buf.count(b"HTTP/1.1 302 Found") == 4 else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "3 pipelined requests in one write get 3 responses, split head gets 1"; else fail "pipelining" "got $out responses"; fi

out="$(py <<'EOF'
import socket, sys, threading, time
port, total = int(sys.argv[1]), 100000
s = socket.create_connection(("127.0.0.1", port), timeout=10)
# Pipeline far more than the socket buffers hold and read late: the server
# must park its output on EAGAIN and resume reading once it drains.
sender = threading.Thread(target=s.sendall, args=(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * total,))
sender.start()
time.sleep(0.5)
got, tail = 0, b""
while got < total:
    d = s.recv(1 << 20)
    if not d:
        break
    d = tail + d
    got += d.count(b"\r\n\r\n")
    tail = d[d.rfind(b"\r\n\r\n") + 4:]
sender.join()
print(got)
sys.exit(0 if got == total else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "100000 pipelined requests to a slow reader all answered"; else fail "slow reader" "got $out responses"; fi

out="$(py <<'EOF'
import socket, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
buf = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
ok = buf.count(b"302 Found") == 1 and b"Connection: close" in buf
print(repr(buf[:60]))
sys.exit(0 if ok else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "Connection: close gets one response, then EOF"; else fail "Connection: close" "$out"; fi

out="$(py <<'EOF'
import os, random, socket, sys
port = int(sys.argv[1])
rnd = random.Random(7)
cases = [
    os.urandom(4096),
    b"\x00" * 9000,                       # over the 8 KiB head cap: closed
    b"\r\n\r\n" * 5000,                   # 5000 empty heads
    b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 3000,   # never-ending head
    bytes(rnd.randrange(256) for _ in range(20000)),
    b"\xff\xfe" * 10 + b"\r\n\r\n",
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
# Reset with unread responses queued.
for _ in range(20):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET / HTTP/1.1\r\n\r\n" * 200)
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
    fail "garbage" "$out"
fi

if kill "$server_pid" && wait "$server_pid"; then ok "SIGTERM exits with status 0"; else fail "SIGTERM exit status"; fi
server_pid=""
finish
