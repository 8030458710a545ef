#!/bin/sh
# Builds ngx_http_avatar_module.so into OUT against the installed nginx, the way Debian
# builds its libnginx-mod-* packages (debhelper's nginx_mod build system, from nginx-dev):
# nginx's own configure with the flags Debian built nginx with (conf_flags) plus
# --add-dynamic-module=this dir, then `make modules`. configure writes a Makefile into the
# source tree, so the read-only /usr/share/nginx/src is copied into OUT first. Last, the
# module is loaded by `nginx -t`, which refuses a module whose binary signature differs.
#
#   build.sh OUT
set -eu
if [ $# -ne 1 ]; then
    echo "usage: build.sh OUT" >&2
    exit 2
fi
out=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=/usr/share/nginx/src
nginx=$(PATH=$PATH:/usr/sbin:/usr/local/sbin command -v nginx) || {
    echo "build.sh: nginx not found: apt-get install nginx-light nginx-dev" >&2
    exit 127
}
if [ ! -x "$src/configure" ] || [ ! -f "$src/conf_flags" ]; then
    echo "build.sh: no nginx sources in $src: apt-get install nginx-dev" >&2
    exit 127
fi

rm -rf "$out/src" "$out/build"
cp -R "$src" "$out/src"
cd "$out/src"
# conf_flags is a bash array (NGX_CONF_FLAGS); the compiler flags are Debian's defaults,
# as debhelper passes them.
bash -c '. ./conf_flags
    ./configure \
        --with-cc-opt="$(dpkg-buildflags --get CFLAGS) -fPIC $(dpkg-buildflags --get CPPFLAGS)" \
        --with-ld-opt="$(dpkg-buildflags --get LDFLAGS) -fPIC" \
        "${NGX_CONF_FLAGS[@]}" \
        --add-dynamic-module="$1" \
        --builddir="$2"' configure "$here" "$out/build" >"$out/configure.log" 2>&1 || {
    tail -n 30 "$out/configure.log" >&2
    exit 1
}
make -s -f "$out/build/Makefile" -C "$out/src" modules
cp "$out/build/ngx_http_avatar_module.so" "$out/"
rm -rf "$out/src" "$out/build"

# The binary compatibility check: nginx compares the module's signature with its own.
printf 'load_module %s/ngx_http_avatar_module.so;\nevents {}\n' "$out" >"$out/check.conf"
"$nginx" -t -q -e stderr -g "error_log stderr; pid $out/check.pid;" -c "$out/check.conf"
rm -f "$out/check.conf" "$out/check.pid"
