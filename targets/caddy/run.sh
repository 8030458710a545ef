#!/bin/sh
# caddy (Debian's) serving the avatar challenge's redirect over TLS on one loopback port
# number: HTTP/1.1 and h2 on TCP, h3 on UDP. It answers every request with a 302 to
# https://avatar.example/Renard-1.png (caddy has no random number to pick an image with).
# The certificate is OUT/tls/{cert,key}.pem, made by targets/nginx-tls/cert.sh; caddy's
# own state (HOME, XDG dirs) stays under OUT.
#
#   run.sh OUT PORT
set -eu
if [ $# -ne 2 ]; then echo "usage: run.sh OUT PORT" >&2; exit 2; fi
out=$(cd "$1" && pwd)
port=$2
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
	redir https://avatar.example/Renard-1.png 302
}
CONF
export HOME="$out/caddy" XDG_DATA_HOME="$out/caddy/data" XDG_CONFIG_HOME="$out/caddy/config"
exec caddy run --adapter caddyfile --config "$out/caddy/Caddyfile"
