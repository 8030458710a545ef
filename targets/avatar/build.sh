#!/bin/sh
# Builds the avatar service (crates/avatar) the way it is deployed: release profile, glibc
# linked statically (it idles in about 1.8 MiB instead of 2.6), into $1.
set -eu
out="$1"
host=$(rustc -vV | sed -n 's/^host: //p')
cd "$(dirname "$0")/../.."
# AVATAR_TARGET_DIR, when set, is a cargo target directory shared by every build of it (CI
# sets one: each suite's avatar entry, and the production suite's behind nginx, then link
# from dependencies compiled once); by default each build compiles from scratch in OUT.
dir=${AVATAR_TARGET_DIR:-$out/cargo}
RUSTFLAGS='-C target-feature=+crt-static' cargo build --quiet --release --locked -p avatar \
  --target "$host" --target-dir "$dir"
cp "$dir/$host/release/avatar" "$out/avatar"
