#!/usr/bin/env bash
# Host instructions the memory model executes per warp instruction, counted by valgrind's
# cachegrind: a figure this shared VM cannot blur, where wall times of the same binary move by
# 20-50 % from hour to hour. It says what the model costs in work, not in memory stalls: the
# exact model's large tables wait on host memory (bench_host_memory), which it does not count.
#   bench/host_instructions.sh [-n N] BENCH_MEMSYS [BENCH_MEMSYS2] [-- STREAM...]
# BENCH_MEMSYS: a bench_memsys binary (build/bench_memsys); N: its problem size (default 1024,
# 65,536 warp instructions a stream). Each stream (default: coalesced strided strided-w) runs
# under each of bench_memsys's five models. The count leaves out bench_memsys.c's own functions
# (the instruction generator, timed and subtracted in its wall figures) and includes creating
# the model's tables, a few host instructions per warp instruction at the default size.
set -eu
n=1024
if [ "${1:-}" = -n ]; then n=$2; shift 2; fi
bins=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do bins+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
[ ${#bins[@]} -ge 1 ] || { echo "usage: bench/host_instructions.sh [-n N] BENCH_MEMSYS [BENCH_MEMSYS2] [-- STREAM...]" >&2; exit 2; }
command -v valgrind > /dev/null || { echo "host_instructions.sh: valgrind is not installed (scripts/setup.sh installs it)" >&2; exit 2; }
streams=("$@")
[ ${#streams[@]} -gt 0 ] || streams=(coalesced strided strided-w)
models=("base/fully" "base/set-assoc" "modeled/fully" "sampled 4 SMs" "L2 1/16")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-10s %-16s' stream model
for b in "${bins[@]}"; do label=$(basename "$b"); printf ' %14s' "${label:0:14}"; done
printf '   (host instructions per warp instruction, n = %s)\n' "$n"
for s in "${streams[@]}"; do
  for m in "${models[@]}"; do
    printf '%-10s %-16s' "$s" "$m"
    for b in "${bins[@]}"; do
      valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$tmp/cg" "$b" "$n" h100 shaped "$s" "$m" \
        > "$tmp/out" 2> /dev/null
      # the row's instruction count: its first number after the model's name
      instr=$(awk -v s="$s" '$1 == s { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/ && $i + 0 > 1000) { print $i; exit } }' "$tmp/out")
      cg_annotate --threshold=0 "$tmp/cg" 2> /dev/null | awk -v n="$instr" '
        /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
        /bench_memsys\.c:/ { gsub(",", "", $1); bench += $1 }
        END { printf " %14.0f", (total - bench) / (2 * n) }'  # the stream runs twice: cold and warm
    done
    printf '\n'
  done
done
