#!/usr/bin/env bash
# Installs the Debian packages schedpredict needs to build and test, then configures and builds it.
# Usage: scripts/setup.sh [BUILD_DIR]   (default: build). Run as root, or with sudo available.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$here/build"}

packages=(
  build-essential cmake pkg-config
  libclang-14-dev clang-14 libclang-rt-14-dev   # analyzer (libclang C API); clang for the fuzzer
  libgsl-dev                                     # statistics for validation
  libjansson-dev                                 # JSON reading and writing
  valgrind python3
  python3-matplotlib                             # scripts/plot_validation.py, bench/time_vs_size.py
  gcc-12-offload-nvptx                           # tests: GCC OpenACC compiles every --fix result
  llvm-14-tools python3-yaml                     # tests: opt-viewer renders --format opt-record
  clang-tools-14 patch                           # tests: clang-apply-replacements, --fix=diff
  python3-jsonschema                             # tests: SARIF and JSON report schemas
  groff-base                                     # tests: the man page renders without warnings
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)"
