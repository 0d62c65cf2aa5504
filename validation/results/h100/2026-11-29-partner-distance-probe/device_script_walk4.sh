#!/usr/bin/env bash
# The fourth device call (the walks of 32-byte pieces; run in the repo root, OUT set):
#   OUT=DIR bash validation/results/h100/2026-11-29-partner-distance-probe/device_script_walk4.sh
set -u
nvcc -O3 -arch=sm_90 -o /tmp/pdist validation/probes/partner_distance_probe.cu || exit 1
{ nvidia-smi; date -u; } > "$OUT/gpu_walk4.txt"
/tmp/pdist w4 > "$OUT/walk4.csv"
/tmp/pdist w4 > "$OUT/walk4_2.csv"
/tmp/pdist walk > "$OUT/walk_3.csv"
m=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
ncu --csv -k regex:walk --metrics $m /tmp/pdist w4 > "$OUT/walk4_ncu.csv" 2> "$OUT/walk4_ncu.err"
gzip -9 "$OUT/walk4_ncu.csv"
date -u >> "$OUT/gpu_walk4.txt"
paste -d, "$OUT/walk4.csv" "$OUT/walk4_2.csv" | cut -d, -f1,4,5,7,14; cut -d, -f1,4,5,7 "$OUT/walk_3.csv"; tail -2 "$OUT/walk4_ncu.err"
