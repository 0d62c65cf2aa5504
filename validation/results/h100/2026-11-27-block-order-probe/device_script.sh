#!/usr/bin/env bash
# The device call that made this directory's files (run in the repo root, OUT set):
#   OUT=DIR bash validation/results/h100/2026-11-27-block-order-probe/device_script.sh
set -u
nvcc -O3 -arch=sm_90 -o /tmp/bop validation/probes/block_order_probe.cu || exit 1
{ nvidia-smi; date -u; nvcc --version | tail -2; ncu --version | tail -1; } > "$OUT/gpu.txt"
/tmp/bop > "$OUT/block_order.csv"
/tmp/bop > "$OUT/block_order_2.csv"
m=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum,gpu__time_duration.sum
ncu --csv -k regex:batchnorm --metrics $m /tmp/bop > "$OUT/block_order_ncu.csv" 2> "$OUT/ncu.err"
gzip -9 "$OUT/block_order_ncu.csv"
cat "$OUT/block_order.csv" "$OUT/block_order_2.csv"; tail -3 "$OUT/ncu.err"
