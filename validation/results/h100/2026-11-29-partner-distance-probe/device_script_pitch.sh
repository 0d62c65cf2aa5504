#!/usr/bin/env bash
# The sixth device call (the rows' pitch; run in the repo root, OUT set):
#   OUT=DIR bash validation/results/h100/2026-11-29-partner-distance-probe/device_script_pitch.sh
set -u
nvcc -O3 -arch=sm_90 -o /tmp/pdist validation/probes/partner_distance_probe.cu || exit 1
{ nvidia-smi; date -u; } > "$OUT/gpu_pitch.txt"
/tmp/pdist pitch > "$OUT/pitch.csv"
date -u >> "$OUT/gpu_pitch.txt"
cat "$OUT/pitch.csv"
