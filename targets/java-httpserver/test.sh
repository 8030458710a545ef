#!/usr/bin/env bash
# Builds targets/java-httpserver into a temp dir, starts it on a free loopback
# port with the suite's JVM flags and checks the avatar contract, keep-alive,
# pipelining, Connection: close, garbage input and SIGTERM.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
N=5
JAVA_FLAGS=(-Xmx32m -XX:+UseSerialGC) # keep in step with the suite entry in README.md
passed=0
failed=0
server_pid=""
out="$(mktemp -d)"
log="$out/server.log"

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

if (cd "$here" && javac -d "$out/classes" AvatarServer.java); then ok "build"; else fail "build"; finish; fi

# Port 0: the JDK picks a free port and the server prints it.
java "${JAVA_FLAGS[@]}" -cp "$out/classes" AvatarServer 0 "$N" >"$log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 100); do
    port="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")"
    [[ -n "$port" ]] && break
    sleep 0.05
done
if [[ -n "$port" ]]; then ok "prints 'listening on 127.0.0.1:$port'"; else fail "startup" "$(cat "$log")"; finish; fi
url="http://127.0.0.1:$port/"

# 1. One request: 302, Location pattern, Content-Length: 0. The JDK spells the
#    reason "Temporary Redirect" and the header "Content-length".
head="$(curl -s -D - -o /dev/null --max-time 5 "$url" | tr -d '\r')"
if grep -q '^HTTP/1.1 302 ' <<<"$head" &&
    grep -Eq "^Location: https://avatar\.example/Renard-[1-$N]\.png$" <<<"$head" &&
    grep -iq '^Content-Length: 0$' <<<"$head"; then
    ok "302 with Location and Content-Length: 0"
else
    fail "302 response" "$head"
fi

# A custom template and any method or path.
head="$(curl -s -X DELETE -D - -o /dev/null --max-time 5 "${url}some/path?q=1" | tr -d '\r')"
if grep -q '^HTTP/1.1 302 ' <<<"$head" && grep -Eq "^Location: https://avatar\.example/Renard-[1-$N]\.png$" <<<"$head"; then
    ok "any method and path get the 302"
else
    fail "any method and path" "$head"
fi

py() { python3 - "$port" "$N" "$@"; }

# 2. Keep-alive: 200 requests on one http.client connection, all N images seen.
out_="$(py <<'EOF'
import http.client, re, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
seen, socks = {}, set()
for _ in range(200):
    c.request("GET", "/")
    r = c.getresponse()
    r.read()
    socks.add(id(c.sock))
    m = re.fullmatch(r"https://avatar\.example/Renard-(\d+)\.png", r.getheader("Location", ""))
    if r.status != 302 or not m:
        sys.exit(f"bad response {r.status} {r.getheaders()}")
    seen[int(m.group(1))] = seen.get(int(m.group(1)), 0) + 1
print(" ".join(f"{k}:{v}" for k, v in sorted(seen.items())), f"connections:{len(socks)}")
sys.exit(0 if sorted(seen) == list(range(1, n + 1)) and len(socks) == 1 else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "all $N images over 200 requests on one keep-alive connection ($out_)"; else fail "keep-alive / all $N images" "$out_"; fi

# 3. Pipelining: the JDK answers requests it already buffered before going back
#    to the selector, so heads sent in one write all get answered, in order.
out_="$(py <<'EOF'
import socket, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=5)
def read_until(buf, count):
    while buf.count(b"HTTP/1.1 302") < count:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 3)  # one write, three heads
buf = read_until(b"", 3)
s.sendall(b"GET / HTTP/1.1\r\nHo")                    # a head split across writes
s.sendall(b"st: x\r\n\r")
s.sendall(b"\n")
buf = read_until(buf, 4)
print(buf.count(b"HTTP/1.1 302"))
sys.exit(0 if buf.count(b"HTTP/1.1 302") == 4 else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "3 pipelined requests in one write get 3 responses, split head gets 1"; else fail "pipelining" "got $out_ responses"; fi

out_="$(py <<'EOF'
import socket, sys, threading, time
port, total = int(sys.argv[1]), 20000
s = socket.create_connection(("127.0.0.1", port), timeout=10)
# More than the socket buffers hold, read late: the server's blocking write
# waits for us, then it carries on with the buffered requests.
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
if [[ $? -eq 0 ]]; then ok "20000 pipelined requests to a slow reader all answered"; else fail "slow reader" "got $out_ responses"; fi

# 4. Connection: close (HTTP/1.1), and HTTP/1.0 without keep-alive (what ab sends).
out_="$(py <<'EOF'
import socket, sys
port = int(sys.argv[1])
def one(req):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(req)
    buf = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            return buf
        buf += chunk
a = one(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
b = one(b"GET / HTTP/1.0\r\n\r\n")
print(repr(a[:40]), repr(b[:40]))
sys.exit(0 if a.count(b" 302 ") == 1 and b.count(b" 302 ") == 1 and b"Connection: close" in b else 1)
EOF
)"
if [[ $? -eq 0 ]]; then ok "Connection: close and HTTP/1.0 get one response, then EOF"; else fail "Connection: close" "$out_"; fi

# 5. Garbage and resets close the connection; the server keeps serving.
out_="$(py <<'EOF'
import os, random, socket, sys
port = int(sys.argv[1])
rnd = random.Random(7)
cases = [
    os.urandom(4096),
    b"\x00" * 9000,
    b"\r\n\r\n" * 5000,
    b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 3000,     # more headers than the JDK allows
    b"GET / HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
    b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    b"GET /\x7f\x00 HTTP/1.1\r\n\r\n",
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
sys.exit(0 if b" 302 " in s.recv(4096) else 1)
EOF
)"
if [[ $? -eq 0 ]] && kill -0 "$server_pid" 2>/dev/null; then
    ok "garbage, bad heads and resets do not crash it"
else
    fail "garbage" "$out_"
fi

# 6. A client stuck in the middle of a head: the dispatcher thread blocks reading
#    it, so everyone else waits (the pool target does not). Reported, not failed.
out_="$(py <<'EOF'
import socket, sys
port = int(sys.argv[1])
stuck = socket.create_connection(("127.0.0.1", port), timeout=5)
stuck.sendall(b"GET / HTTP/1.1\r\nHo")
other = socket.create_connection(("127.0.0.1", port), timeout=1)
other.sendall(b"GET / HTTP/1.1\r\n\r\n")
try:
    print("served" if b" 302 " in other.recv(4096) else "bad")
except socket.timeout:
    print("blocked")
stuck.close()  # EOF frees the dispatcher
other.settimeout(5)
other.recv(4096)
EOF
)"
echo "note another client while one is stuck mid-head: $out_"

# 7. SIGTERM with a keep-alive connection open: exits within 1 s. The JVM's
#    status for SIGTERM is 143 (128 + 15).
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' >&3
start=$(date +%s%N)
kill "$server_pid"
wait "$server_pid"
status=$?
ms=$((($(date +%s%N) - start) / 1000000))
exec 3>&-
server_pid=""
if [[ $status -eq 143 || $status -eq 0 ]] && [[ $ms -le 1000 ]]; then
    ok "SIGTERM exits in ${ms} ms (status $status)"
else
    fail "SIGTERM" "status $status after ${ms} ms"
fi
finish
