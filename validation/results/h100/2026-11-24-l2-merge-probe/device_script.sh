#!/usr/bin/env bash
# The device call that made this directory's files (run in the repo root, OUT set):
#   OUT=DIR bash validation/results/h100/2026-11-24-l2-merge-probe/device_script.sh
set -u
nvcc -O3 -arch=sm_90 -o /tmp/l2m validation/probes/l2_merge_probe.cu || exit 1
nvidia-smi > "$OUT/gpu.txt"
/tmp/l2m > "$OUT/l2_merge_probe.csv"
ncu --query-metrics --chip gh100 > "$OUT/metrics_gh100.txt" 2>&1
want="l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum
l1tex__m_xbar2l1tex_read_sectors.sum l1tex__m_l1tex2xbar_req.sum l1tex__m_xbar2l1tex_read_bytes.sum lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_tex_op_read.sum lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
lts__t_requests_srcunit_tex_op_read.sum lts__t_sectors_srcunit_tex.sum lts__t_sectors_op_read.sum
dram__bytes_read.sum gpu__time_duration.sum"
# keep the names this ncu knows (an unknown one fails the whole run), and any lrc__ counter
known=""
for m in $want; do grep -q "^${m%.sum} " "$OUT/metrics_gh100.txt" && known="$known,$m"; done
lrc=$(grep -o '^lrc__[A-Za-z0-9_]*' "$OUT/metrics_gh100.txt" | sort -u | sed 's/$/.sum/' | paste -sd, -)
[ -n "$known" ] || known=$(echo $want | tr " " ",")
echo "metrics: ${known#,}" > "$OUT/metrics_used.txt"
echo "lrc: $lrc" >> "$OUT/metrics_used.txt"
ncu --csv --metrics "${known#,}" /tmp/l2m once > "$OUT/l2_merge_probe_ncu.csv" 2> "$OUT/ncu.err"
[ -n "$lrc" ] && ncu --csv --metrics "$lrc" /tmp/l2m once > "$OUT/l2_merge_probe_lrc.csv" 2>> "$OUT/ncu.err"
head -c 3000 "$OUT/metrics_used.txt"; cat "$OUT/l2_merge_probe.csv"; tail -5 "$OUT/ncu.err"
