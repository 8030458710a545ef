#!/bin/bash
# PostgreSQL as a suite service, started the way a user would run it by hand: initdb into a
# fresh temporary directory, the seed loaded in single-user mode, then `postgres` on
# 127.0.0.1:PORT with a socket directory of its own. Never the system service.
#
#   run.sh [-k] [--link MS TOXIPROXY] PORT
#     -k   keep the data directory when stopped (for a look at it afterwards)
#     --link MS TOXIPROXY
#          serve PORT through a link MS milliseconds long, as a database on another
#          host would be: postgres listens on 127.0.0.2:PORT, and TOXIPROXY (the path of
#          Shopify's toxiproxy-server) on 127.0.0.1:PORT forwards to it, each answer
#          delayed MS ms (a `latency` toxic downstream: MS ms more per round trip). The
#          proxy's API listens on 127.0.0.3:PORT. This kernel has no netem qdisc
#          (CONFIG_NET_SCH_NETEM is not set), so the delay is in user space.
#
# The process tree is this script (bash, waiting, no CPU) and postgres under it. The seed
# (seed.sql: table docs, 10,000 JSON documents of about 2 KB) is in before postgres opens
# its TCP port, so "the port accepts" means "ready and seeded". The script prints
# "postgres ready on 127.0.0.1:PORT (data DIR)" then. With --link, the proxy is in the tree
# too, and PORT opens only once the proxy and its delay are in place.
#
# Stopping: SIGTERM or SIGINT to the script (or to its process group, as foxbench stops a
# service) gives postgres a fast shutdown (SIGINT: open sessions are ended, not waited
# for), then removes the data directory. If the script itself is SIGKILLed, postgres keeps
# running until it is killed too (foxbench kills the group and the marked descendants); the
# directory it leaves is removed by the next start (directories of ours that no live
# process holds locked), so a SIGKILL leaves at most one directory until the next run.
#
# PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user
# (Debian's package creates it) or, when there is none, a system user `foxbench-pg` made
# here; otherwise as the calling user. Exit status: 2 for a usage error or PostgreSQL not
# installed (one line naming the package), 1 when it fails to start, else postgres's own.
set -eu

usage="usage: run.sh [-k] [--link MS TOXIPROXY] PORT"
keep=
link_ms=
toxiproxy=
while [ $# -gt 1 ]; do
    case $1 in
        -k) keep=1; shift ;;
        --link)
            [ $# -ge 4 ] || { echo "$usage" >&2; exit 2; }
            link_ms=$2; toxiproxy=$3; shift 3
            case $link_ms in '' | *[!0-9]*) echo "run.sh: bad --link MS: $link_ms (whole milliseconds, e.g. 1)" >&2; exit 2 ;; esac
            [ -x "$toxiproxy" ] || { echo "run.sh: --link: no toxiproxy-server at $toxiproxy (build it: GOBIN=DIR go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0)" >&2; exit 2; }
            command -v curl >/dev/null 2>&1 || { echo "run.sh: --link needs curl (Debian: apt-get install curl)" >&2; exit 2; }
            ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
port=$1
case $port in '' | *[!0-9]*) echo "run.sh: bad PORT: $port (a number, 1-65535)" >&2; exit 2 ;; esac
[ "$port" -ge 1 ] && [ "$port" -le 65535 ] || { echo "run.sh: bad PORT: $port (1-65535)" >&2; exit 2; }
# Where postgres listens: PORT itself, or behind the link on 127.0.0.2.
pg_host=127.0.0.1
[ -z "$link_ms" ] || pg_host=127.0.0.2

here=$(cd "$(dirname "$0")" && pwd)

# The server binaries: on PATH, else Debian's versioned directory (not on PATH), newest first.
bindir=
if command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1 &&
    [ -x "$(dirname "$(readlink -f "$(command -v postgres)")")/pg_isready" ]; then
    bindir=$(dirname "$(readlink -f "$(command -v postgres)")")   # a symlink's real directory
else
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -rn); do
        if [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && [ -x "$d/pg_isready" ]; then bindir=$d; break; fi
    done
fi
if [ -z "$bindir" ]; then
    echo "postgres: skipped: PostgreSQL's server is not installed (Debian: apt-get install postgresql)" >&2
    exit 2
fi

# Who runs the server.
run_as=()
user=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
    user=postgres
    if ! id -u postgres >/dev/null 2>&1; then
        user=foxbench-pg
        id -u "$user" >/dev/null 2>&1 ||
            useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
    fi
    # setpriv execs (no parent left behind, unlike runuser) and keeps the environment,
    # so foxbench's mark on the service's processes survives the change of user.
    run_as=(setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups --)
fi

base=${TMPDIR:-/tmp}
# Each run holds a lock on DIR/lock for its life (postgres inherits it, so an orphaned
# postgres still holds it). Directories of earlier runs that were SIGKILLed before they
# could clean up are ours (the name) and unlocked: removed here.
for old in "$base"/foxbench-pg.*; do
    [ -d "$old" ] || continue
    if [ -e "$old/lock" ]; then
        flock -n "$old/lock" true 2>/dev/null || continue
    elif [ -z "$(find "$old" -maxdepth 0 -mmin +1 2>/dev/null)" ]; then
        continue   # no lock yet: another run between mktemp and flock, unless it is old
    fi
    rm -rf "$old" 2>/dev/null || true
done

tmp=$(mktemp -d "$base/foxbench-pg.XXXXXX")
exec 9>"$tmp/lock"
flock 9
data=$tmp/data
sock=$tmp/sock
mkdir -p "$sock"
chmod 755 "$tmp"   # the server's user must reach its data and socket directories
[ "$(id -u)" -ne 0 ] || chown -R "$user:" "$tmp"

pid=
proxy=
cleanup() {
    trap - EXIT INT TERM
    if [ -n "$proxy" ]; then
        kill "$proxy" 2>/dev/null || true
        wait "$proxy" 2>/dev/null || true
    fi
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -INT "$pid" 2>/dev/null || true   # fast shutdown
        wait "$pid" 2>/dev/null || true
    fi
    if [ -z "$keep" ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'cleanup; exit 143' TERM
trap 'cleanup; exit 130' INT

# -A trust: any local user connects as any role, over the socket and over loopback only
# (listen_addresses below). --no-sync: the directory is thrown away at the end.
"${run_as[@]}" "$bindir/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C --no-sync \
    >"$tmp/initdb.log" 2>&1 || {
    echo "run.sh: initdb failed:" >&2
    tail -n 20 "$tmp/initdb.log" >&2
    exit 1
}

# The settings, in the data directory's own config so every start (the seed, the server)
# reads them. max_connections: the largest pool (150) plus monitoring and slack.
# fsync and synchronous_commit off: the data is a throwaway seed; reads are what's measured.
cat >>"$data/postgresql.conf" <<EOF
listen_addresses = '$pg_host'
port = $port
unix_socket_directories = '$sock'
max_connections = 200
shared_buffers = 64MB
fsync = off
synchronous_commit = off
full_page_writes = off
logging_collector = off
log_min_messages = warning
EOF

# The seed, in single-user mode (no socket, no port open yet). -j: statements end at a
# semicolon followed by an empty line.
"${run_as[@]}" "$bindir/postgres" --single -j -D "$data" postgres <"$here/seed.sql" >"$tmp/seed.log" 2>&1 || {
    echo "run.sh: seeding failed:" >&2
    tail -n 20 "$tmp/seed.log" >&2
    exit 1
}
grep -q 'ERROR' "$tmp/seed.log" && {
    echo "run.sh: seeding failed:" >&2
    grep -m 5 'ERROR' "$tmp/seed.log" >&2
    exit 1
}

"${run_as[@]}" "$bindir/postgres" -D "$data" &
pid=$!

# Ready within 60 s (a loaded machine), or stop. pg_isready is the client's own check.
isready=$bindir/pg_isready
deadline=$((SECONDS + 60))
until "$isready" -q -h "$pg_host" -p "$port" -U postgres -d postgres -t 2; do
    if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid" || true
        echo "run.sh: postgres exited during startup (is port $port taken?)" >&2
        pid=
        exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then
        echo "run.sh: postgres not ready on $pg_host:$port within 60 s" >&2
        exit 1
    fi
    sleep 0.1
done

link=
if [ -n "$link_ms" ]; then
    # The link: toxiproxy-server (one OS thread's worth: it shares the services' CPUs),
    # its proxy created disabled, the delay added, then enabled: PORT opens with the
    # delay already in place.
    api=http://127.0.0.3:$port
    GOMAXPROCS=1 "$toxiproxy" -host 127.0.0.3 -port "$port" >"$tmp/toxiproxy.log" 2>&1 &
    proxy=$!
    deadline=$((SECONDS + 30))
    until curl -sf -o /dev/null "$api/version"; do
        if ! kill -0 "$proxy" 2>/dev/null; then
            echo "run.sh: toxiproxy-server exited at start:" >&2; tail -n 5 "$tmp/toxiproxy.log" >&2; proxy=; exit 1
        fi
        [ $SECONDS -lt $deadline ] || { echo "run.sh: toxiproxy-server's API not up on $api within 30 s" >&2; exit 1; }
        sleep 0.1
    done
    call() {
        curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' "$api$1" -d "$2" ||
            { echo "run.sh: toxiproxy refused POST $1 $2 (is 127.0.0.1:$port taken?)" >&2; exit 1; }
    }
    call /proxies "{\"name\":\"postgres\",\"listen\":\"127.0.0.1:$port\",\"upstream\":\"127.0.0.2:$port\",\"enabled\":false}"
    call /proxies/postgres/toxics "{\"name\":\"link\",\"type\":\"latency\",\"stream\":\"downstream\",\"attributes\":{\"latency\":$link_ms,\"jitter\":0}}"
    call /proxies/postgres "{\"enabled\":true}"
    link=", through a ${link_ms} ms link to 127.0.0.2:$port"
fi
echo "postgres ready on 127.0.0.1:$port$link (data $data, socket $sock, user $user, $bindir)"

# Stay in the foreground as long as postgres (and the link) run; the first to exit ends
# the service, with its status.
status=0
if [ -n "$proxy" ]; then
    wait -n "$pid" "$proxy" || status=$?
    kill -0 "$proxy" 2>/dev/null || { echo "run.sh: the link (toxiproxy-server) exited" >&2; proxy=; }
else
    wait "$pid" || status=$?
    pid=
fi
exit "$status"
