#!/usr/bin/env bash
# Stands in for Nsight Compute's `ncu` in sv_mock.sh: checks the options schedvalidate passes,
# runs the profiled command (schedvalidate --run-one ...) as ncu would, and prints the recorded
# CSV layout of tests/ncu_sample.csv with the kernel name that --kernel-name asked for.
set -u
here=$(dirname "$0")
kernel="" csv=0 base=0
while [ $# -gt 0 ]; do
  case $1 in
    --csv) csv=1; shift ;;
    --print-units) [ "$2" = base ] && base=1; shift 2 ;;
    --kernel-name) kernel=${2#regex:^}; kernel=${kernel%\$}; shift 2 ;;
    --metrics|--target-processes|--launch-count) shift 2 ;;
    -*) echo "fake ncu: unexpected option $1" >&2; exit 9 ;;
    *) break ;;
  esac
done
[ $csv -eq 1 ] && [ $base -eq 1 ] && [ -n "$kernel" ] || { echo "fake ncu: missing --csv/--print-units base/--kernel-name" >&2; exit 9; }
echo "==PROF== Connected to process $$ ($1)"
"$@" || { echo "==ERROR== The application returned an error code ($?)." ; exit 1; }
sed -n '/^"ID"/,$p' "$here/ncu_sample.csv" | sed "s/sp_transpose_9_c1/$kernel/"
