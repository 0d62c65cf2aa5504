#!/usr/bin/env bash
# The fifth device call (rotate180's orders; run in the repo root, OUT set):
#   OUT=DIR bash validation/results/h100/2026-11-29-partner-distance-probe/device_script_rot.sh
set -u
nvcc -O3 -arch=sm_90 -o /tmp/pdist validation/probes/partner_distance_probe.cu || exit 1
{ nvidia-smi; date -u; } > "$OUT/gpu_rot.txt"
/tmp/pdist rot > "$OUT/rot.csv"
date -u >> "$OUT/gpu_rot.txt"
cat "$OUT/rot.csv"
