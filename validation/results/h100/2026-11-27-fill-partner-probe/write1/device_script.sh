#!/usr/bin/env bash
# The third device call (H100, 22:02 UTC), run in the repo root with OUT set:
#   OUT=DIR bash validation/results/h100/2026-11-27-fill-partner-probe/write1/device_script.sh
# Its outputs were renamed here: fill_partner_write1_r* -> fill_partner_r*, gpu_write1.txt -> gpu.txt, ncu_write1.err -> ncu.err,
# so that summarize.py reads this folder as it reads the others:
#   python3 validation/results/h100/2026-11-27-fill-partner-probe/summarize.py validation/results/h100/2026-11-27-fill-partner-probe/write1
nvcc -O3 -arch=sm_90 -o /tmp/fpp validation/probes/fill_partner_probe.cu || exit 1
{ nvidia-smi; date -u; } > "$OUT/gpu_write1.txt"
m=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,dram__bytes_read.sum
for r in 1 4; do
  /tmp/fpp $r 3 > "$OUT/fill_partner_write1_r$r.csv"
  ncu --csv --cache-control none --replay-mode application -k regex:second --metrics $m \
      /tmp/fpp $r 3 > "$OUT/fill_partner_write1_r${r}_ncu.csv" 2>> "$OUT/ncu_write1.err"
done
gzip -9 "$OUT"/*_ncu.csv; tail -2 "$OUT/ncu_write1.err"; grep -c . "$OUT/fill_partner_write1_r1.csv"
