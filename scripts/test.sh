#!/usr/bin/env bash
# Sets up (Debian packages, CMake build) and runs the whole test suite under ctest: unit tests
# plain and under ASan+UBSan, golden IR of every example, command-line error paths, and the
# valgrind leak check of the CLI.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh" "$here/build"
ctest --test-dir "$here/build" --output-on-failure -j "$(nproc)"
