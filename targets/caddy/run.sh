#!/bin/bash
# caddy (Debian's, quic-go inside) on one loopback port number over TLS: HTTP/1.1 and h2 on
# TCP, h3 on UDP.
#
#   run.sh OUT PORT redirect N
#       the avatar challenge's redirect: a 302 to https://avatar.example/Renard-{n}.png,
#       n uniform in 1..N, drawn by caddy's templates (Sprig's randInt)
#   run.sh OUT PORT static
#       the production path's image: OUT/srv/images/ (targets/nginx-tls/image.py)
#   run.sh OUT PORT proxy APP [ARG...]
#       the production path's proxy: APP started on a free loopback port (the word APP_PORT
#       in its arguments becomes that port), caddy terminating TLS in front of it and
#       passing every request on over kept-alive connections (reverse_proxy's default)
#
# The certificate is OUT/tls/{cert,key}.pem (targets/nginx-tls/cert.sh); caddy's own state
# (HOME, XDG dirs) stays under OUT. Both processes run as children of this script
# (targets/supervise.sh), which stops both when either exits or it is signalled (SIGTERM,
# as foxbench stops a target).
set -eu

usage() {
    echo "usage: run.sh OUT PORT redirect N | run.sh OUT PORT static | run.sh OUT PORT proxy APP [ARG...]" >&2
    exit 2
}
[ $# -ge 3 ] || usage
out=$1 port=$2 mode=$3
shift 3
case $port in '' | *[!0-9]*) echo "run.sh: bad PORT: $port" >&2; exit 2 ;; esac
case $mode in
redirect)
    [ $# -eq 1 ] || usage
    case $1 in '' | *[!0-9]* | 0) echo "run.sh: bad N (images): $1" >&2; exit 2 ;; esac
    ;;
static) [ $# -eq 0 ] || usage ;;
proxy) [ $# -ge 1 ] || usage ;;
*) usage ;;
esac
command -v caddy >/dev/null || { echo "run.sh: caddy not found: apt-get install caddy" >&2; exit 127; }
out=$(cd "$out" && pwd)
for f in "$out/tls/cert.pem" "$out/tls/key.pem"; do
    [ -r "$f" ] || { echo "run.sh: $f is missing: run targets/nginx-tls/cert.sh OUT first" >&2; exit 2; }
done

app_port=
case $mode in
redirect)
    # A template per response: caddy has no other random number. The body is empty; the
    # header is set while the template runs, before the response is written.
    site="templates
	respond \`{{.RespHeader.Set \"Location\" (printf \"https://avatar.example/Renard-%d.png\" (add1 (randInt 0 $1)))}}\` 302"
    ;;
static)
    [ -r "$out/srv/images" ] || { echo "run.sh: $out/srv/images is missing: run targets/nginx-tls/image.py OUT first" >&2; exit 2; }
    site="root * $out/srv
	file_server"
    ;;
proxy)
    # A free loopback port for the app, chosen the way foxbench chooses the target's.
    app_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    site="reverse_proxy 127.0.0.1:$app_port"
    ;;
esac

mkdir -p "$out/caddy"
# `bind 127.0.0.1`: with no SNI (an IP address), caddy picks the certificate by the local
# address, which its QUIC listener on [::] reports as `::`, and none matches.
cat >"$out/caddy/Caddyfile" <<CONF
{
	auto_https off
	admin off
	servers {
		protocols h1 h2 h3
	}
}
https://127.0.0.1:$port {
	bind 127.0.0.1
	tls $out/tls/cert.pem $out/tls/key.pem
	$site
}
CONF
export HOME="$out/caddy" XDG_DATA_HOME="$out/caddy/data" XDG_CONFIG_HOME="$out/caddy/config"

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../supervise.sh
. "$here/../supervise.sh"
# The app's command line in proxy mode (redirect's N is in the Caddyfile already).
[ "$mode" = proxy ] || set --
supervise "$port" caddy run --adapter caddyfile --config "$out/caddy/Caddyfile" -- "$@"
