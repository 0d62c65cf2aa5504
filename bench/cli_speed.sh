#!/usr/bin/env bash
# Whole-run speed of the CLI per example: the minimum of N wall times (default 3) of
#   BIN -q examples/X.c ARGS   (ARGS from the example's `// schedpredict-args:` line)
# with its user CPU seconds and peak resident memory; with a second binary, the two run
# alternately, so that both see the same machine load.
#   bench/cli_speed.sh [-n N] BIN [BIN2] [-- EXAMPLE...]   (default: the dissertation's sizes)
set -eu
n=3
if [ "${1:-}" = -n ]; then n=$2; shift 2; fi
bins=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do bins+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
[ ${#bins[@]} -ge 1 ] || { echo "usage: bench/cli_speed.sh [-n N] BIN [BIN2] [-- EXAMPLE...]" >&2; exit 2; }
examples=("$@")
[ ${#examples[@]} -gt 0 ] || examples=(transpose jacobi matmul xreuse yreuse laplacian himeno divergence gemm heat3d conv3d gwv_explicit)
cd "$(dirname "$0")/.."
printf '%-14s %-40s %8s %8s %8s\n' example binary wall_s cpu_s peak_MB
for e in "${examples[@]}"; do
  src=examples/$e.c
  [ -f "$src" ] || { echo "no $src" >&2; exit 2; }
  args=$(grep -m1 '^// schedpredict-args:' "$src" | sed 's|^// schedpredict-args:||')
  declare -A best=() cpu=() mem=()
  for ((i = 0; i < n; i++)); do
    for b in "${bins[@]}"; do
      r=$( { eval "/usr/bin/time -f '%e %U %M' \"$b\" -q \"$src\" $args" > /dev/null; } 2>&1 | tail -1)
      read -r w u m <<< "$r"
      if [ -z "${best[$b]:-}" ] || awk -v a="$w" -v b="${best[$b]}" 'BEGIN { exit !(a < b) }'; then
        best[$b]=$w cpu[$b]=$u mem[$b]=$m
      fi
    done
  done
  for b in "${bins[@]}"; do
    printf '%-14s %-40s %8s %8s %8d\n' "$e" "$b" "${best[$b]}" "${cpu[$b]}" $((${mem[$b]} / 1024))
  done
  unset best cpu mem
done
