#!/usr/bin/env bash
# The seventh device call (a copy's walks; run in the repo root, OUT set):
#   OUT=DIR bash validation/results/h100/2026-11-29-partner-distance-probe/device_script_copy.sh
set -u
nvcc -O3 -arch=sm_90 -o /tmp/pdist validation/probes/partner_distance_probe.cu || exit 1
{ nvidia-smi; date -u; } > "$OUT/gpu_copy.txt"
/tmp/pdist copy > "$OUT/copy.csv"
date -u >> "$OUT/gpu_copy.txt"
cat "$OUT/copy.csv"
