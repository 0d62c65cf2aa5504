#!/usr/bin/env bash
# The stencil's walks (run in the repo root, OUT set):
#   OUT=DIR bash validation/results/h200/2026-11-29-wide-walk-probe/device_script_stencil.sh
set -u
nvcc -O3 -arch=sm_90 -o /tmp/pdist validation/probes/partner_distance_probe.cu || exit 1
{ nvidia-smi; date -u; } > "$OUT/gpu_stencil.txt"
/tmp/pdist ws > "$OUT/stencil_walk.csv"
m=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum
ncu --csv -k regex:walk --metrics $m /tmp/pdist ws > "$OUT/stencil_walk_ncu.csv" 2> "$OUT/stencil_walk_ncu.err"
gzip -9 "$OUT/stencil_walk_ncu.csv"
date -u >> "$OUT/gpu_stencil.txt"
cat "$OUT/stencil_walk.csv"; tail -2 "$OUT/stencil_walk_ncu.err"
