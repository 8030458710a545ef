#!/bin/sh
# A private CA and an ECDSA P-256 server certificate it signs, for 127.0.0.1 and
# localhost, made fresh into OUT/tls/ (ca.pem, cert.pem, key.pem): nothing secret is
# committed. The suite verifies nginx against ca.pem (cacert = "{out}/tls/ca.pem"); a
# self-signed leaf would not do, as rustls refuses a CA certificate as the server's.
#
#   cert.sh OUT
set -eu
if [ $# -ne 1 ]; then echo "usage: cert.sh OUT" >&2; exit 2; fi
dir=$1/tls
mkdir -p "$dir"
cd "$dir"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
# Ten years: builds are cached by their inputs, and a cached certificate must not expire.
# shellcheck disable=SC2086
openssl req -x509 $ec -days 3650 -subj "/CN=foxbench test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
    -keyout ca.key -out ca.pem 2>/dev/null
# shellcheck disable=SC2086
openssl req $ec -subj "/CN=localhost" -keyout key.pem -out server.csr 2>/dev/null
printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth" "subjectAltName=IP:127.0.0.1,DNS:localhost" >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 \
    -extfile server.ext -out cert.pem 2>/dev/null
rm -f ca.key server.csr server.ext ca.srl
chmod 600 key.pem
