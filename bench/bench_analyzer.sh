#!/usr/bin/env bash
# Analyzer speed on a generated file (default 5,000 lines, 200 nests): prints lines, nests found
# and the wall time of `schedpredict --dump-ir` (best of 5).
#   bench/bench_analyzer.sh [SCHEDPREDICT] [NESTS] [LINES]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/schedpredict}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 bench/gen_nests.py "${2:-200}" "${3:-5000}" > "$tmp/big.c"
best=
for r in 1 2 3 4 5; do
  s=$(date +%s.%N)
  "$bin" --dump-ir -q "$tmp/big.c" --param n=4096 --param m=4096 > "$tmp/ir.json"
  e=$(date +%s.%N)
  t=$(echo "$e - $s" | bc)
  if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
done
nests=$(grep -c '"function"' "$tmp/ir.json")
echo "lines: $(wc -l < "$tmp/big.c"), nests found: $nests, best of 5: ${best} s ($(nproc) cores, $(uname -m))"
