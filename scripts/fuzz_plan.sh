#!/usr/bin/env bash
# Fuzzes schedvalidate's plan reader with libFuzzer (clang-14, ASan+UBSan), seeded with the
# hand-made plans.   scripts/fuzz_plan.sh [SECONDS]   (default 300)
# Crashes land in fuzz/crashes/; the working corpus in fuzz/corpus-plan/ (both git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
out=build-fuzz
mkdir -p $out fuzz/corpus-plan fuzz/crashes
clang-14 -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -Ivalidation/runner \
  fuzz/fuzz_plan.c validation/runner/sv_plan.c -ljansson -lm -o $out/fuzz_plan
cp -n tests/inputs/plans/*.json fuzz/corpus-plan/ 2>/dev/null || true
ASAN_OPTIONS=detect_leaks=1 $out/fuzz_plan -max_total_time="$secs" -timeout=10 -max_len=65536 \
  -dict=fuzz/plan.dict -artifact_prefix=fuzz/crashes/ -print_final_stats=1 fuzz/corpus-plan
