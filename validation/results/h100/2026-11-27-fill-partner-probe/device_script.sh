#!/usr/bin/env bash
# The device call that made this directory's files (run in the repo root, OUT set):
#   OUT=DIR bash validation/results/h100/2026-11-27-fill-partner-probe/device_script.sh
set -u
nvcc -O3 -arch=sm_90 -o /tmp/fpp validation/probes/fill_partner_probe.cu || exit 1
{ nvidia-smi; date -u; nvcc --version | tail -2; ncu --version | tail -1; } > "$OUT/gpu.txt"
/tmp/fpp 4 > "$OUT/fill_partner_r4.csv"
/tmp/fpp 1 > "$OUT/fill_partner_r1.csv"
m=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,dram__bytes_read.sum
for r in 4 1; do
  ncu --csv --cache-control none --replay-mode application -k regex:second --metrics $m \
      /tmp/fpp $r > "$OUT/fill_partner_r${r}_ncu.csv" 2>> "$OUT/ncu.err"
done
gzip -9 "$OUT"/*_ncu.csv
tail -3 "$OUT/ncu.err"; head -20 "$OUT/fill_partner_r4.csv"
