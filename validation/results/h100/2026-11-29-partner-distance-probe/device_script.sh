#!/usr/bin/env bash
# The device call that made this directory's files (run in the repo root, OUT set):
#   OUT=DIR bash validation/results/h100/2026-11-29-partner-distance-probe/device_script.sh
set -u
nvcc -O3 -arch=sm_90 -o /tmp/pdist validation/probes/partner_distance_probe.cu || exit 1
{ nvidia-smi; date -u; nvcc --version | tail -2; ncu --version | tail -1; } > "$OUT/gpu.txt"
/tmp/pdist > "$OUT/partner_distance.csv"
/tmp/pdist > "$OUT/partner_distance_2.csv"
m=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,gpu__time_duration.sum
ncu --csv -k regex:"stream|xreuse" --metrics $m /tmp/pdist > "$OUT/partner_distance_ncu.csv" 2> "$OUT/ncu.err"
gzip -9 "$OUT/partner_distance_ncu.csv"
date -u >> "$OUT/gpu.txt"
cat "$OUT/partner_distance.csv"; paste -d, "$OUT/partner_distance.csv" "$OUT/partner_distance_2.csv" | cut -d, -f7,14 | tail -n +3 | head -3; tail -3 "$OUT/ncu.err"
