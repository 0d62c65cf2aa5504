#!/usr/bin/env bash
# Whole-run speed of the CLI per example: the minimum of N wall times (default 3) of
#   BIN -q examples/X.c ARGS   (ARGS from the example's `// schedpredict-args:` line)
# with its user CPU seconds and peak resident memory; with a second binary, the two run
# alternately, so that both see the same machine load.
#   bench/cli_speed.sh [-n N] [--per-nest] BIN [BIN2] [-- EXAMPLE...]   (default: the dissertation's sizes)
# --per-nest times each nest of an example alone (--nest FILE:LINE), the issue's "one nest
# ranked in <= 1 s"; the example column then names the nest.
set -eu
n=3
per_nest=0
while [ "${1:-}" = -n ] || [ "${1:-}" = --per-nest ]; do
  if [ "$1" = -n ]; then n=$2; shift 2; else per_nest=1; shift; fi
done
bins=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do bins+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
[ ${#bins[@]} -ge 1 ] || { echo "usage: bench/cli_speed.sh [-n N] [--per-nest] BIN [BIN2] [-- EXAMPLE...]" >&2; exit 2; }
examples=("$@")
[ ${#examples[@]} -gt 0 ] || examples=(transpose jacobi matmul xreuse yreuse laplacian himeno divergence gemm heat3d conv3d gwv_explicit)
cd "$(dirname "$0")/.."
printf '%-14s %-40s %8s %8s %8s\n' example binary wall_s cpu_s peak_MB
# time_one LABEL SRC ARGS [--nest FILE:LINE]: the best of n runs of each binary
time_one() {
  local label=$1 src=$2 args=$3 sel=${4:-} i b r w u m
  declare -A best=() cpu=() mem=()
  for ((i = 0; i < n; i++)); do
    for b in "${bins[@]}"; do
      r=$( { eval "/usr/bin/time -f '%e %U %M' \"$b\" -q $sel \"$src\" $args" > /dev/null; } 2>&1 | tail -1)
      read -r w u m <<< "$r"
      if [ -z "${best[$b]:-}" ] || awk -v a="$w" -v b="${best[$b]}" 'BEGIN { exit !(a < b) }'; then
        best[$b]=$w cpu[$b]=$u mem[$b]=$m
      fi
    done
  done
  for b in "${bins[@]}"; do
    printf '%-14s %-40s %8s %8s %8d\n' "$label" "$b" "${best[$b]}" "${cpu[$b]}" $((${mem[$b]} / 1024))
  done
}
for e in "${examples[@]}"; do
  src=examples/$e.c
  [ -f "$src" ] || { echo "no $src" >&2; exit 2; }
  args=$(grep -m1 '^// schedpredict-args:' "$src" | sed 's|^// schedpredict-args:||')
  if [ $per_nest = 0 ]; then
    time_one "$e" "$src" "$args"
    continue
  fi
  eval "\"${bins[0]}\" -q --format json --top 1 \"$src\" $args" |
    python3 -c 'import json, sys; [print(n["location"].rsplit(":", 1)[0]) for n in json.load(sys.stdin)["nests"]]' |
    while read -r nest; do time_one "$(basename "$nest")" "$src" "$args" "--nest $nest"; done
done
