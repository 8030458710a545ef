#!/usr/bin/env bash
# Checks targets/php the way foxbench runs it: `run.sh -t` as the build,
# `run.sh OUT PORT N [TEMPLATE]` as the start command in its own process
# group, SIGTERM to the group at the end, after which no nginx or php-fpm
# process may be left. Then the same for the php -S fallback (PHP_FPM=).
# Prints "N passed, N failed" last; exits non-zero if anything failed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$(mktemp -d)"
N=5
passed=0
failed=0
pgid=""

# Every process the start command left: its process group, plus php-fpm,
# which calls setsid() and so has a session of its own.
leftovers() {
    [[ -n "$pgid" ]] || return 0
    { pgrep -g "$pgid"; [[ -n "${fpm_master:-}" ]] && pgrep -s "$fpm_master"; } 2>/dev/null | sort -u
}
stop() {  # SIGTERM to the whole process group, as foxbench does
    [[ -n "$pgid" ]] || return 0
    kill -TERM -- "-$pgid" 2>/dev/null
    for _ in $(seq 1 50); do [[ -z "$(leftovers)" ]] && return 0; sleep 0.02; done
    return 1
}
cleanup() {
    if [[ -n "$pgid" ]] && ! stop; then
        leftovers | xargs -r kill -KILL 2>/dev/null
    fi
    rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
finish() { echo "$passed passed, $failed failed"; [[ $failed -eq 0 ]]; exit $?; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start [ENV=VALUE...] -- ARGS: run.sh in a new session (its own process group).
start() {
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    port="$(free_port)"
    (cd "$here" && exec env "${envs[@]}" setsid sh run.sh "$out" "$port" "$@") >>"$out/log" 2>&1 &
    pgid=$!
    fpm_master=""
    for _ in $(seq 1 50); do
        if python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; then
            fpm_master="$(pgrep -P "$pgid" -f 'php-fpm: master')"
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# Sends COUNT requests (on one keep-alive connection, or a new connection
# each when $2 is "close") and prints "n:count ..." for Location's numbers.
count() {
    python3 - "$port" "$@" <<'EOF'
import http.client, re, sys
port, total, mode, pattern = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
seen = {}
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
c.connect()
sock = c.sock
for _ in range(total):
    if mode == "close":
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/some/path?q=1")
    r = c.getresponse()
    body = r.read()
    m = re.fullmatch(pattern, r.getheader("Location") or "")
    if r.status != 302 or body or not m:
        sys.exit(f"{r.status} {r.getheaders()} {body[:80]!r}")
    if mode != "close" and c.sock is not sock:
        sys.exit("the connection was not kept alive")
    k = int(m.group(1))
    seen[k] = seen.get(k, 0) + 1
print(" ".join(f"{k}:{v}" for k, v in sorted(seen.items())))
EOF
}
keys() { tr ' ' '\n' <<<"$1" | cut -d: -f1 | tr '\n' ' '; }

if (cd "$here" && sh run.sh -t "$out" 8080 "$N") >"$out/log" 2>&1; then
    ok "build: run.sh -t writes configs that php-fpm -t and nginx -t accept"
else
    fail "build" "$(cat "$out/log")"
    finish
fi
if start -- "$N" && [[ -n "$fpm_master" ]]; then
    ok "nginx on 127.0.0.1:$port, php-fpm master $fpm_master with $(pgrep -c -P "$fpm_master") children"
else
    fail "startup" "$(cat "$out/log")"
    finish
fi
url="http://127.0.0.1:$port/"

head="$(curl -s -D - -o "$out/body" --max-time 5 "$url" | tr -d '\r')"
if grep -q '^HTTP/1.1 302 Found$' <<<"$head" &&
    grep -Eq "^Location: https://avatar\.example/Renard-[1-$N]\.png$" <<<"$head" &&
    [[ ! -s "$out/body" ]]; then
    ok "302 Found with Location and an empty body"
else
    fail "302 response" "$head"
fi

# N comes from the argument: exactly 1..5, over one keep-alive connection.
if res="$(count 300 keepalive 'https://avatar\.example/Renard-(\d+)\.png')" && [[ "$(keys "$res")" == "1 2 3 4 5 " ]]; then
    ok "exactly images 1..$N over 300 requests on one keep-alive connection ($res)"
else
    fail "images 1..$N with keep-alive" "$res"
fi

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
print(buf.count(b"HTTP/1.1 302 Found"), buf.count(b"Connection: close"))
EOF
)"
if [[ "$res" == "4 1" ]]; then
    ok "4 pipelined requests, the last with Connection: close: 4 responses, then EOF"
else
    fail "pipelining / Connection: close" "$res"
fi

# More requests at once than the pool has children: they queue, none fail.
res="$(python3 - "$port" <<'EOF'
import http.client, sys, threading
port, codes = int(sys.argv[1]), []
def one():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for _ in range(5):
        c.request("GET", "/")
        r = c.getresponse(); r.read()
        codes.append(r.status)
ts = [threading.Thread(target=one) for _ in range(200)]
for t in ts: t.start()
for t in ts: t.join()
print(len(codes), sorted(set(codes)))
EOF
)"
if [[ "$res" == "1000 [302]" ]]; then ok "200 concurrent connections x 5 requests: all 302"; else fail "concurrency" "$res"; fi

res="$(python3 - "$port" <<'EOF'
import os, socket, sys
port = int(sys.argv[1])
for data in [os.urandom(4096), b"\x00" * 9000, b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 20000,
             b"\xff\xfe\r\n\r\n", b"POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\nshort"]:
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
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 50)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
print("alive" if b" 302 " in s.recv(4096) else "dead")
EOF
)"
if [[ "$res" == alive ]]; then ok "garbage, huge heads and resets: later requests still answered"; else fail "garbage" "$res"; fi

before="$(leftovers | wc -l)"
t0=$(date +%s%N)
if stop; then
    ok "SIGTERM to the group: all $before processes gone in $((($(date +%s%N) - t0) / 1000000)) ms"
else
    fail "SIGTERM" "left running: $(leftovers | xargs -r ps -o pid,cmd -p)"
fi
pgid=""
if ! pgrep -f "$out/php/" >/dev/null; then ok "no php-fpm or nginx process of this run left (pgrep)"; else fail "leftovers" "$(pgrep -af "$out/php/")"; fi

# The script alone signalled (no group): it must still take both down.
if start -- "$N"; then
    script_pid=$pgid
    kill -TERM "$script_pid"
    for _ in $(seq 1 50); do [[ -z "$(leftovers)" ]] && break; sleep 0.02; done
    if [[ -z "$(leftovers)" ]]; then ok "SIGTERM to run.sh alone also stops php-fpm and nginx"; else fail "script-only SIGTERM" "$(leftovers | xargs -r ps -o pid,cmd -p)"; fi
else
    fail "second startup" "$(cat "$out/log")"
fi
pgid=""

# php-fpm's master dies: run.sh must stop nginx and the orphaned children.
if start -- "$N" && [[ -n "$fpm_master" ]]; then
    kill -KILL "$fpm_master"
    for _ in $(seq 1 100); do [[ -z "$(leftovers)" ]] && break; sleep 0.02; done
    if [[ -z "$(leftovers)" ]]; then ok "php-fpm master killed: run.sh stops its children and nginx, then exits"; else fail "master killed" "$(leftovers | xargs -r ps -o pid,cmd -p)"; fi
else
    fail "third startup" "$(cat "$out/log")"
fi
pgid=""

# Fallback: no php-fpm, so php -S, one request per connection.
if start PHP_FPM= -- "$N" 'http://x/{n}.png'; then
    if grep -q 'falling back to php -S' "$out/log"; then ok "PHP_FPM= starts php -S and says so"; else fail "fallback message"; fi
    if res="$(count 100 close 'http://x/(\d+)\.png')" && [[ "$(keys "$res")" == "1 2 3 4 5 " ]]; then
        ok "php -S: exactly images 1..$N from the TEMPLATE argument over 100 connections ($res)"
    else
        fail "php -S images" "$res"
    fi
    if stop; then ok "php -S exits on SIGTERM"; else fail "php -S SIGTERM"; fi
else
    fail "fallback startup" "$(cat "$out/log")"
fi
pgid=""
finish
