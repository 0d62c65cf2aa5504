#!/usr/bin/env bash
# The wide blocks' walks (run in the repo root, OUT set):
#   OUT=DIR bash validation/results/h200/2026-11-29-wide-walk-probe/device_script.sh
set -u
nvcc -O3 -arch=sm_90 -o /tmp/pdist validation/probes/partner_distance_probe.cu || exit 1
{ nvidia-smi; date -u; } > "$OUT/gpu.txt"
/tmp/pdist ww > "$OUT/wide_walk.csv"
m=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
ncu --csv -k regex:walk --metrics $m /tmp/pdist ww > "$OUT/wide_walk_ncu.csv" 2> "$OUT/wide_walk_ncu.err"
gzip -9 "$OUT/wide_walk_ncu.csv"
date -u >> "$OUT/gpu.txt"
cat "$OUT/wide_walk.csv"; tail -2 "$OUT/wide_walk_ncu.err"
