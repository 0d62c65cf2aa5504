#!/bin/bash
# Device run of 2026-11-23 (README.md): placement of three candidate kernels, timed runs and
# one-pass ncu L1 counters. From the repository root on the GPU machine: OUT=DIR bash THIS
set -u
P=validation/probes/placement_run.cu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
date -u | tee -a $OUT/gpu.txt
build() { nvcc -O3 -arch=sm_90 -DSP_SOURCE="\"$1.cu\"" -DSP_KERNEL=$1 -DSP_NARRAYS=3 "${@:2}" -DSP_RECORD_END -Ivalidation/results/h100/2026-11-23-placement-replay/src -o /tmp/pr_$1 $P; }
build sp_matmul_14_c302 &
build sp_kernel_2mm_26_c270 -DSP_SCALAR1=1.2 &
build sp_kernel_syr2k_13_c19 -DSP_SCALAR1=1.2 -DSP_SCALAR2=1.5 &
wait
M=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
run() { # name grid block sizes...
  local n=$1 g=$2 b=$3; shift 3
  echo "== $n"
  /tmp/pr_$n $g $b 3 $OUT/$n "$@"
  for r in 1 2; do
    ncu --metrics $M --cache-control all --replay-mode kernel -k probe_kernel --csv /tmp/pr_$n $g $b 1 $OUT/${n}_ncu$r "$@" > $OUT/${n}_ncu$r.metrics.csv 2> $OUT/${n}_ncu$r.err
    grep -h "passes\|ERR" $OUT/${n}_ncu$r.err | head -3
    grep -v "^==" $OUT/${n}_ncu$r.metrics.csv | tail -3
  done
}
run sp_matmul_14_c302 8448 32 134217728 134217728 134217728
run sp_kernel_2mm_26_c270 8448 32 7680000 5760000 8640000
run sp_kernel_syr2k_13_c19 1056 256 9600000 9600000 11520000
gzip $OUT/sp_matmul_14_c302*.csv 2>/dev/null
ls -la $OUT | head -40
