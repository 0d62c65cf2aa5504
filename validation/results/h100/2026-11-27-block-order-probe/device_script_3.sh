#!/usr/bin/env bash
# The second device call (22:00 UTC, the probe with its contig mode), run in the repo root with OUT set:
#   OUT=DIR bash validation/results/h100/2026-11-27-block-order-probe/device_script_3.sh
# Its outputs were renamed here: block_order_contig* -> block_order_3*, gpu2.txt -> gpu_3.txt, ncu2.err -> ncu_3.err.
set -u
nvcc -O3 -arch=sm_90 -o /tmp/bop validation/probes/block_order_probe.cu || exit 1
{ nvidia-smi; date -u; } > "$OUT/gpu2.txt"
/tmp/bop > "$OUT/block_order_contig.csv"
m=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum,gpu__time_duration.sum
ncu --csv -k regex:batchnorm --metrics $m /tmp/bop > "$OUT/block_order_contig_ncu.csv" 2> "$OUT/ncu2.err"
gzip -9 "$OUT/block_order_contig_ncu.csv"; cat "$OUT/block_order_contig.csv"
