#!/usr/bin/env bash
# Fuzzes the analyzer with libFuzzer (clang-14, ASan+UBSan), seeded with the examples.
#   scripts/fuzz.sh [SECONDS]        default 600; prints the run's statistics and any crash
# Crashes, leaks and timeouts land in fuzz/crashes/; the working corpus in fuzz/corpus-work/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
out=build-fuzz
mkdir -p $out fuzz/corpus-work fuzz/crashes
srcs=$(sed -n 's|^ *\(analyzer/[a-z_]*\.c\)$|\1|p' analyzer/sources.cmake)
clang-14 -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -Iinclude -I. -I/usr/lib/llvm-14/include \
  -DSP_VERSION='"fuzz"' -DSP_SOURCE_DIR="\"$PWD\"" \
  fuzz/fuzz_analyzer.c $srcs -L/usr/lib/llvm-14/lib -lclang -ljansson -lm \
  -Wl,-rpath,/usr/lib/llvm-14/lib -o $out/fuzz_analyzer
cp -n examples/*.c tests/inputs/*.c fuzz/corpus-work/ 2>/dev/null || true
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
  $out/fuzz_analyzer -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -max_len=65536 \
  -artifact_prefix=fuzz/crashes/ -print_final_stats=1 fuzz/corpus-work
