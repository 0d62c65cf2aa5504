#!/usr/bin/env bash
# Ranking time and peak memory against problem size for two kernels whose sizes are run-time
# parameters (gemm: n x n x n; colmajor_runtime: m x n with m = n):
#   bench/time_vs_size.sh [SCHEDPREDICT]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/schedpredict}
printf "%-18s %8s %14s %10s %10s\n" kernel n iterations seconds peak_MB
for n in 128 256 512 1024 2048 4096 8192; do
  for k in gemm colmajor; do
    if [ $k = gemm ]; then
      args="examples/gemm.c --param ni=$n --param nj=$n --param nk=$n"; it=$((n * n * n))
    else
      args="examples/colmajor_runtime.c --param m=$n --param n=$n"; it=$((n * n))
    fi
    out=$( { /usr/bin/time -f "%e %M" "$bin" -q --top 1 $args > /dev/null; } 2>&1 | tail -1)
    printf "%-18s %8d %14d %10s %10d\n" $k $n $it "${out% *}" $(( ${out#* } / 1024 ))
  done
done
