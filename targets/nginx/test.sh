#!/usr/bin/env bash
# Checks targets/nginx the way foxbench runs it: `run.sh -t` as the build,
# `run.sh OUT PORT N [TEMPLATE]` as the start command in its own process
# group, SIGTERM to the group at the end. Covers the avatar contract,
# keep-alive, pipelining, Connection: close, garbage input, how uniform
# split_clients is for N=5 and N=21, and a template with characters nginx
# treats specially.
# Prints "N passed, N failed" last; exits non-zero if anything failed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$(mktemp -d)"
passed=0
failed=0
pgid=""

stop() {  # SIGTERM to the whole process group, as foxbench does
    [[ -n "$pgid" ]] || return 0
    kill -TERM -- "-$pgid" 2>/dev/null
    for _ in $(seq 1 50); do pgrep -g "$pgid" >/dev/null || break; sleep 0.02; done
    ! pgrep -g "$pgid" >/dev/null
}
cleanup() {
    if [[ -n "$pgid" ]]; then stop || kill -KILL -- "-$pgid" 2>/dev/null; fi
    rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
finish() { echo "$passed passed, $failed failed"; [[ $failed -eq 0 ]]; exit $?; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start N [TEMPLATE]: run.sh in a new session (its own process group).
start() {
    port="$(free_port)"
    (cd "$here" && exec setsid sh run.sh "$out" "$port" "$@") >"$out/log" 2>&1 &
    pgid=$!
    for _ in $(seq 1 50); do
        if python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# Sends COUNT GET requests on one connection, pipelined in batches, and
# prints "n:count ..." for the numbers found with PATTERN in Location.
count() {
    python3 - "$port" "$@" <<'EOF'
import re, socket, sys
port, total, pattern = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
seen = {}
s = socket.create_connection(("127.0.0.1", port), timeout=10)
buf, got = b"", 0
while got < total:
    batch = min(100, total - got)
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * batch)
    for _ in range(batch):
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                sys.exit(f"closed after {got}")
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        length = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
        while len(buf) < length:
            buf += s.recv(65536)
        buf = buf[length:]
        m = re.search(rb"(?m)^Location: " + pattern + rb"\r?$", head)
        if not m:
            sys.exit(f"no Location matching {pattern!r} in {head!r}")
        k = int(m.group(1))
        seen[k] = seen.get(k, 0) + 1
        got += 1
print(" ".join(f"{k}:{v}" for k, v in sorted(seen.items())))
EOF
}

# uniform N COUNTS: all of 1..N seen, and a chi-square test at p = 0.001.
uniform() {
    python3 - "$@" <<'EOF'
import sys
n, counts = int(sys.argv[1]), dict(map(int, kv.split(":")) for kv in sys.argv[2].split())
total = sum(counts.values())
exp = total / n
chi2 = sum((counts.get(k, 0) - exp) ** 2 / exp for k in range(1, n + 1))
crit = {4: 18.47, 20: 45.31}[n - 1]  # chi-square, p = 0.001
dev = max(abs(counts.get(k, 0) / exp - 1) for k in range(1, n + 1))
print(f"chi2={chi2:.1f} (limit {crit}), worst bucket {dev:.1%} off")
sys.exit(0 if sorted(counts) == list(range(1, n + 1)) and chi2 < crit else 1)
EOF
}

N=5
if (cd "$here" && sh run.sh -t "$out" 8080 "$N") >"$out/log" 2>&1; then
    ok "build: run.sh -t writes a config that nginx -t accepts"
else
    fail "build" "$(cat "$out/log")"
    finish
fi
if start "$N"; then ok "starts and listens on 127.0.0.1:$port"; else fail "startup" "$(cat "$out/log")"; finish; fi
url="http://127.0.0.1:$port/"

head="$(curl -s -D - -o "$out/body" --max-time 5 "$url/any/path?x=1" | tr -d '\r')"
if grep -q '^HTTP/1.1 302 ' <<<"$head" &&
    grep -Eq "^Location: https://avatar\.example/Renard-[1-$N]\.png$" <<<"$head" &&
    grep -q '^Content-Length: 0$' <<<"$head" && [[ ! -s "$out/body" ]]; then
    ok "302 with Location and an empty body"
else
    fail "302 response" "$head"
fi

if out5="$(count 200 'https://avatar\.example/Renard-(\d+)\.png')" &&
    [[ "$(tr ' ' '\n' <<<"$out5" | cut -d: -f1 | tr '\n' ' ')" == "1 2 3 4 5 " ]]; then
    ok "all $N images over 200 keep-alive requests ($out5)"
else
    fail "all $N images" "$out5"
fi

if out5="$(count 50000 'https://avatar\.example/Renard-(\d+)\.png')" && res="$(uniform 5 "$out5")"; then
    ok "N=5 is uniform over 50000 requests: $res"
else
    fail "N=5 uniformity" "$out5 $res"
fi

python3 - "$port" <<'EOF' && ok "50 requests on one http.client connection" || fail "keep-alive"
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
c.connect()
sock = c.sock
for _ in range(50):
    c.request("GET", "/")
    r = c.getresponse()
    r.read()
    assert r.status == 302 and r.getheader("Location"), r.status
    assert c.sock is sock, "reconnected"
EOF

res="$(python3 - "$port" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 3 +
          b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
buf = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    buf += chunk
print(buf.count(b"HTTP/1.1 302"), buf.count(b"Connection: close"))
EOF
)"
if [[ "$res" == "4 1" ]]; then
    ok "4 pipelined requests, the last with Connection: close: 4 responses, then EOF"
else
    fail "pipelining / Connection: close" "$res"
fi

res="$(python3 - "$port" <<'EOF'
import os, socket, sys
port = int(sys.argv[1])
for data in [os.urandom(4096), b"\x00" * 9000, b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 20000,
             b"\xff\xfe\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n"]:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
    except OSError:
        pass  # a reset is an acceptable answer to garbage
    s.close()
for _ in range(20):  # reset with responses queued
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 200)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
print("alive" if b" 302 " in s.recv(4096) else "dead")
EOF
)"
if [[ "$res" == alive ]]; then ok "garbage, huge heads and resets: later requests still answered"; else fail "garbage" "$res"; fi

t0=$(date +%s%N)
if stop; then
    ok "SIGTERM to the process group: nginx gone in $((($(date +%s%N) - t0) / 1000000)) ms"
else
    fail "SIGTERM" "left running: $(pgrep -ag "$pgid")"
fi
pgid=""

# N=21 as in the post, with a template that needs escaping in nginx.conf.
N=21
if start "$N" 'http://x/$a"b\c/{n}-{n}.png'; then
    if out21="$(count 42000 'http://x/\$a"b\\c/(\d+)-\1\.png')" && res="$(uniform 21 "$out21")"; then
        ok "N=21: all 21 seen, uniform over 42000 requests: $res"
    else
        fail "N=21 uniformity" "$out21 $res"
    fi
else
    fail "startup with N=21" "$(cat "$out/log")"
fi
if stop; then ok "second instance gone after SIGTERM"; else fail "second SIGTERM"; fi
pgid=""

if (cd "$here" && sh run.sh "$out" "$(free_port)" 10001) 2>/dev/null; then
    fail "N=10001 accepted"
else
    ok "N over 10000 is refused (split_clients has 0.01% steps)"
fi
finish
