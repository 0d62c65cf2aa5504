#!/usr/bin/env bash
# Fetches, on this (networked) machine, what the GPU machine needs to build schedvalidate and may
# lack: jansson's headers and static library, from Debian's libjansson-dev package, unpacked into
# .deps/jansson/ (git-ignored; carry it to the GPU machine with the working tree).
#   scripts/fetch_gpu_deps.sh        -> .deps/jansson/usr/{include/jansson*.h, lib/x86_64-linux-gnu/libjansson.a}
set -euo pipefail
cd "$(dirname "$0")/.."
dl=.deps/download
mkdir -p "$dl"
rm -f "$dl"/libjansson-dev_*.deb
(cd "$dl" && apt-get download libjansson-dev)
rm -rf .deps/jansson
dpkg -x "$dl"/libjansson-dev_*.deb .deps/jansson
for f in usr/include/jansson.h usr/include/jansson_config.h usr/lib/x86_64-linux-gnu/libjansson.a; do
  [ -f ".deps/jansson/$f" ] || { echo "fetch_gpu_deps: .deps/jansson/$f missing from the package" >&2; exit 1; }
done
echo "fetch_gpu_deps: jansson in .deps/jansson/usr ($(ls "$dl"/libjansson-dev_*.deb))"
