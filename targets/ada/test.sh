#!/usr/bin/env bash
# Builds targets/ada into a temp dir, starts it on a free loopback port and
# checks the avatar contract, keep-alive, pipelining, Connection: close,
# garbage input and SIGTERM.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
N=5
passed=0
failed=0
server_pid=""
out="$(mktemp -d)"
log="$out/log"
: >"$log"

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

# The suite's build and start commands, {out} = $out, {port} = 0.
before="$(ls -A "$here")"
if (cd "$here" && gnatmake -q -O2 -D "$out" -o "$out/server" avatar_server.adb) && [[ "$(ls -A "$here")" == "$before" ]]; then
    ok "build (nothing written to the source dir)"
else
    fail "build"; finish
fi

(cd "$here" && exec "$out/server" 0 "$N") >"$log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 100); do
    port="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")"
    [[ -n "$port" ]] && break
    sleep 0.1
done
if [[ -n "$port" ]]; then ok "prints 'listening on 127.0.0.1:$port'"; else fail "startup" "$(cat "$log")"; finish; fi
url="http://127.0.0.1:$port/"

head="$(curl -s -D - -o /dev/null --max-time 5 "$url/some/path?x=1" | tr -d '\r')"
if grep -q '^HTTP/1.1 302 Found$' <<<"$head" &&
    grep -Eq "^Location: https://avatar\.example/Renard-[1-$N]\.png$" <<<"$head" &&
    grep -q '^Content-Length: 0$' <<<"$head"; then
    ok "302 with Location and Content-Length: 0"
else
    fail "302 response" "$head"
fi

py() { python3 - "$port" "$N" "$@"; }

res="$(py <<'EOF'
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
if [[ $? -eq 0 ]]; then ok "all $N images over 200 requests ($res)"; else fail "all $N images" "$res"; fi

res="$(py <<'EOF'
import http.client, sys
port = int(sys.argv[1])
c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
names = set()
for _ in range(50):
    c.request("GET", "/")
    r = c.getresponse()
    r.read()
    assert r.status == 302, r.status
    names.add(c.sock.getsockname())  # http.client reconnects silently; catch it
print(len(names))
sys.exit(0 if len(names) == 1 else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "keep-alive: 50 requests on one connection (http.client)"; else fail "keep-alive" "$res"; fi

res="$(py <<'EOF'
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
if [[ $? -eq 0 ]]; then ok "3 pipelined requests in one write get 3 responses, split head gets 1"; else fail "pipelining" "got $res responses"; fi

res="$(py <<'EOF'
import socket, sys
port = int(sys.argv[1])
def exchange(req):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(req)
    buf = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            return buf
        buf += chunk
for req in (b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\nconnection: Close\r\n\r\n",
            b"GET / HTTP/1.0\r\n\r\n"):
    buf = exchange(req)  # returns only at EOF
    if buf.count(b"302 Found") != 1 or b"Connection: close" not in buf:
        sys.exit(repr(req) + " -> " + repr(buf[:80]))
EOF
)"
if [[ $? -eq 0 ]]; then ok "Connection: close (and HTTP/1.0) get one response, then EOF"; else fail "Connection: close" "$res"; fi

res="$(py <<'EOF'
import socket, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=5)
for _ in range(3):  # what ab -k sends
    s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\nConnection: Keep-Alive\r\n\r\n")
    buf = s.recv(4096)
    if b"302 Found" not in buf or b"Connection: keep-alive" not in buf:
        sys.exit(repr(buf))
EOF
)"
if [[ $? -eq 0 ]]; then ok "HTTP/1.0 with Connection: keep-alive stays open"; else fail "HTTP/1.0 keep-alive" "$res"; fi

res="$(py <<'EOF'
import os, random, socket, sys
port = int(sys.argv[1])
rnd = random.Random(7)
cases = [
    os.urandom(4096),
    b"\x00" * 9000,
    b"\r\n\r\n" * 5000,
    b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 3000,
    b"GET / HTTP/1.1\r\nX: " + b"y" * 20000 + b"\r\n\r\n",
    bytes(rnd.randrange(256) for _ in range(20000)),
    b"\xff\xfe" * 10 + b"\r\n\r\n",
    b"HELLO\r\n\r\n",
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
for _ in range(20):  # reset with unread responses queued
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
    ok "garbage, oversized heads and resets do not kill it"
else
    fail "garbage" "$res"
fi

# SIGTERM keeps its default action: the process dies of it (status 143).
start=$(date +%s%N)
kill -TERM "$server_pid"
wait "$server_pid"
status=$?
ms=$((($(date +%s%N) - start) / 1000000))
server_pid=""
if [[ $ms -le 1000 ]]; then ok "SIGTERM: exited in ${ms} ms (status $status)"; else fail "SIGTERM" "took ${ms} ms"; fi
finish
