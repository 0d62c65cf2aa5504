set -u
P=validation/probes/placement_run.cu
S=validation/results/h100/2026-11-23-placement-replay/src
nvcc -O3 -arch=sm_90 -DSP_PLAIN -DSP_SOURCE='"sp_matmul_14_c302.cu"' -DSP_KERNEL=sp_matmul_14_c302 -DSP_NARRAYS=3 -I$S -o /tmp/plain $P &
nvcc -O3 -arch=sm_90 -DSP_RECORD_END -DSP_SOURCE='"sp_matmul_14_c302.cu"' -DSP_KERNEL=sp_matmul_14_c302 -DSP_NARRAYS=3 -I$S -o /tmp/rec $P &
wait
S3="134217728 134217728 134217728"
M=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
echo "== plain"; ncu --metrics $M --csv -k sp_matmul_14_c302 /tmp/plain 8448 32 1 $OUT/plain $S3 > $OUT/plain_l2.metrics.csv 2>&1; grep -i "pass\|ERR" $OUT/plain_l2.metrics.csv | head; grep '^"' $OUT/plain_l2.metrics.csv | cut -d, -f13-
for r in 1 2; do echo "== rec $r"; ncu --metrics $M --csv -k probe_kernel /tmp/rec 8448 32 1 $OUT/rec_l2_$r $S3 > $OUT/rec_l2_$r.metrics.csv 2>&1; grep -i "pass\|ERR" $OUT/rec_l2_$r.metrics.csv | head -3; grep '^"' $OUT/rec_l2_$r.metrics.csv | cut -d, -f13-; done
gzip $OUT/rec_l2_*.csv
ls $OUT
