#!/usr/bin/env bash
# Starts targets/node-http on a free loopback port and checks the avatar
# contract, keep-alive, pipelining, Connection: close, HTTP/1.0, garbage input,
# many open connections and a clean exit on SIGTERM.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
N=5
passed=0
failed=0
server_pid=""
hold_pid=""
out="$(mktemp -d)"
log="$out/log"

cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
    [[ -n "$hold_pid" ]] && kill "$hold_pid" 2>/dev/null
    rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
finish() { echo "$passed passed, $failed failed"; [[ $failed -eq 0 ]]; exit $?; }

# Nothing to build; a syntax check that writes nothing next to the source.
if node --check "$here/server.js" 2>"$log"; then
    ok "parses"
else
    fail "parses" "$(cat "$log")"
    finish
fi

start() { # start PORT N [TEMPLATE...]; sets started_pid and started_port
    node "$here/server.js" "$@" >"$log.$1.$2" 2>&1 &
    started_pid=$!
    started_port=""
    for _ in $(seq 1 50); do
        started_port="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log.$1.$2")"
        [[ -n "$started_port" ]] && return 0
        sleep 0.1
    done
    return 1
}

# Port 0: the server picks a free port and prints it.
if start 0 "$N"; then
    server_pid=$started_pid port=$started_port
    ok "prints 'listening on 127.0.0.1:$port'"
else
    fail "startup" "$(cat "$log".*)"
    finish
fi
url="http://127.0.0.1:$port/"

# 1. One request: 302, Location pattern, Content-Length: 0.
head="$(curl -s -D - -o /dev/null --max-time 5 "$url" | tr -d '\r')"
if grep -q '^HTTP/1.1 302 Found$' <<<"$head" &&
    grep -Eq "^Location: https://avatar\.example/Renard-[1-$N]\.png$" <<<"$head" &&
    grep -q '^Content-Length: 0$' <<<"$head"; then
    ok "302 with Location and Content-Length: 0"
else
    fail "302 response" "$head"
fi

py() { python3 - "$port" "$N" "$@"; }

# 2. All N images over 200 requests on one connection.
out_="$(py <<'EOF'
import re, socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
seen = {}
s = socket.create_connection(("127.0.0.1", port), timeout=5)
buf = b""
for _ in range(200):
    s.sendall(b"GET /any/path?x=1 HTTP/1.1\r\nHost: x\r\n\r\n")
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            sys.exit("closed early")
        buf += chunk
    resp, buf = buf.split(b"\r\n\r\n", 1)
    m = re.search(rb"\r\nLocation: https://avatar\.example/Renard-(\d+)\.png(\r\n|$)", resp)
    seen[int(m.group(1))] = seen.get(int(m.group(1)), 0) + 1
print(" ".join(f"{k}:{v}" for k, v in sorted(seen.items())))
sys.exit(0 if sorted(seen) == list(range(1, n + 1)) else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "all $N images over 200 keep-alive requests ($out_)"; else fail "all $N images" "$out_"; fi

# 3. A custom template, with {n} twice.
if start 0 3 'https://x.example/{n}/fox-{n}.png'; then
    loc="$(curl -s -D - -o /dev/null --max-time 5 "http://127.0.0.1:$started_port/" | tr -d '\r' | sed -n 's/^Location: //p')"
    kill "$started_pid"; wait "$started_pid" 2>/dev/null
fi
if [[ "${loc:-}" =~ ^https://x\.example/([1-3])/fox-([1-3])\.png$ && "${BASH_REMATCH[1]}" == "${BASH_REMATCH[2]}" ]]; then
    ok "template with {n} twice ($loc)"
else
    fail "template" "${loc:-}"
fi
if node "$here/server.js" 0 0 2>/dev/null || node "$here/server.js" 0 65536 2>/dev/null; then
    fail "N outside 1..=65535 is refused"
else
    ok "N outside 1..=65535 is refused"
fi

# 4. http.client: 50 requests on one connection.
out_="$(py <<'EOF'
import http.client, sys
port = int(sys.argv[1])
c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
c.connect()
sock = c.sock
for i in range(50):
    c.request("GET", f"/{i}")
    r = c.getresponse()
    r.read()
    if r.status != 302 or not r.getheader("Location") or c.sock is not sock:
        sys.exit(f"request {i}: {r.status} {r.getheaders()}")
print("50 on one socket")
EOF
)"
if [[ $? -eq 0 ]]; then ok "keep-alive: http.client makes 50 requests on one connection"; else fail "keep-alive" "$out_"; fi

# 5. Pipelining: three heads in one write, a head split across writes.
out_="$(py <<'EOF'
import socket, sys, time
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
buf = b""
while buf.count(b"HTTP/1.1 302 Found") < 3:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
for part in (b"GET / HTTP/1.1\r\nHo", b"st: x\r\n\r", b"\n"):
    s.sendall(part)
    time.sleep(0.05)
while buf.count(b"HTTP/1.1 302 Found") < 4:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
print(buf.count(b"HTTP/1.1 302 Found"))
sys.exit(0 if buf.count(b"HTTP/1.1 302 Found") == 4 else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "3 pipelined requests in one write get 3 responses, split head gets 1"; else fail "pipelining" "got $out_ responses"; fi

out_="$(py <<'EOF'
import socket, sys, threading, time
port, total = int(sys.argv[1]), 100000
s = socket.create_connection(("127.0.0.1", port), timeout=30)
# Far more than the socket buffers hold, read late: the server must stop
# reading while its answers are not being taken, then resume.
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
if [[ $? -eq 0 ]]; then ok "100000 pipelined requests to a slow reader all answered"; else fail "slow reader" "got $out_ responses"; fi

# 6. Connection: close, HTTP/1.0 with and without keep-alive.
out_="$(py <<'EOF'
import socket, sys
port = int(sys.argv[1])
def drain(s):
    buf = b""
    while chunk := s.recv(4096):
        buf += chunk
    return buf
s = socket.create_connection(("127.0.0.1", port), timeout=5)
# The request after the Connection: close one must not be answered.
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
buf = drain(s)
if buf.count(b"302 Found") != 1 or b"\r\nConnection: close\r\n" not in buf:
    sys.exit(f"close: {buf!r}")
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
buf = drain(s)
if buf.count(b"302 Found") != 1:
    sys.exit(f"1.0: {buf!r}")
s = socket.create_connection(("127.0.0.1", port), timeout=5)
for i in range(2):
    s.sendall(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
    buf = s.recv(4096)
    if b"302 Found" not in buf or b"\r\nConnection: keep-alive\r\n" not in buf.replace(b"Keep-Alive", b"keep-alive"):
        sys.exit(f"1.0 keep-alive {i}: {buf!r}")
EOF
)"
if [[ $? -eq 0 ]]; then ok "Connection: close, HTTP/1.0, and HTTP/1.0 + keep-alive"; else fail "Connection handling" "$out_"; fi

# 7. Garbage gets Node's 400 and a close (after answering what came before it).
#    Node skips empty lines before a request (RFC 9112 2.2), so for the
#    CRLF flood the client ends the connection.
out_="$(py <<'EOF'
import random, socket, sys
port = int(sys.argv[1])
rnd = random.Random(7)
cases = [
    rnd.randbytes(4096),
    b"\x00" * 9000,
    b"\r\n\r\n" * 5000,
    b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 20000,   # never-ending head
    bytes(rnd.randrange(256) for _ in range(20000)),
    b"\xff\xfe" * 10 + b"\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\nHELLO\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
]
for data in cases:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    buf = b""
    try:
        s.sendall(data)
        if data.startswith(b"\r\n"):
            s.shutdown(socket.SHUT_WR)
        while chunk := s.recv(65536):  # EOF (or a reset) is the answer
            buf += chunk
    except socket.timeout:
        sys.exit(f"{data[:20]!r}: not closed")
    except OSError:
        pass
    s.close()
    if buf.count(b"302 Found") != (1 if data.startswith(b"GET / HTTP/1.1\r\nHost") else 0):
        sys.exit(f"{data[:20]!r}: {buf!r}")
for _ in range(20):  # resets with responses queued
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 200)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
sys.exit(0 if b"302 Found" in s.recv(4096) else 1)
EOF
)"
if [[ $? -eq 0 ]] && kill -0 "$server_pid" 2>/dev/null; then
    ok "garbage and oversized heads close the connection; resets do not crash it"
else
    fail "garbage" "$out_"
fi

# 8. 2000 open keep-alive connections, then SIGTERM while they are open.
exec {hold}< <(py <<'EOF'
import resource, socket, sys
port = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
conns = []
for _ in range(2000):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    conns.append(s)
answered = sum(b"302 Found" in s.recv(4096) for s in conns)
print(answered, flush=True)
conns[0].settimeout(30)
try:
    conns[0].recv(1)  # returns at EOF, when the server has gone
except OSError:
    pass
EOF
)
hold_pid=$!
read -r -t 20 answered <&"$hold"
if [[ "${answered:-0}" -eq 2000 ]]; then ok "2000 concurrent keep-alive connections answered"; else fail "2000 connections" "${answered:-none}"; fi
t0=$(date +%s%N)
kill "$server_pid"
wait "$server_pid"
status=$?
ms=$((($(date +%s%N) - t0) / 1000000))
server_pid=""
exec {hold}<&-
if [[ $status -eq 0 && $ms -le 1000 ]]; then ok "SIGTERM with 2000 open connections: exit 0 in ${ms} ms"; else fail "SIGTERM" "status $status after ${ms} ms"; fi
finish
