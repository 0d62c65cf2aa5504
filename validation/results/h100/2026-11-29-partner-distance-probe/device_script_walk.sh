#!/usr/bin/env bash
# The second device call (the walks; run in the repo root, OUT set):
#   OUT=DIR bash validation/results/h100/2026-11-29-partner-distance-probe/device_script_walk.sh
set -u
nvcc -O3 -arch=sm_90 -o /tmp/pdist validation/probes/partner_distance_probe.cu || exit 1
{ nvidia-smi; date -u; } > "$OUT/gpu_walk.txt"
/tmp/pdist walk > "$OUT/walk.csv"
/tmp/pdist walk > "$OUT/walk_2.csv"
m=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
ncu --csv -k regex:walk --metrics $m /tmp/pdist walk > "$OUT/walk_ncu.csv" 2> "$OUT/walk_ncu.err"
gzip -9 "$OUT/walk_ncu.csv"
date -u >> "$OUT/gpu_walk.txt"
paste -d, "$OUT/walk.csv" "$OUT/walk_2.csv"; tail -2 "$OUT/walk_ncu.err"
