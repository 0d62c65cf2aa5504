// Probe: how many L1 data-stage wavefronts a load request takes when its sectors miss, by the
// shape of the warp and where the sectors come from. On hits a request takes its bank cycles
// exactly (l1_span_probe.cu under Nsight Compute); xreuse.c's 8x32 warps took 2.3x that on the
// H100 and the L1's data stage was the bottleneck (validation/results/h100/
// 2026-11-27-piece-drift-probe/ncu/). Run under ncu for the counts:
//   nvcc -O3 -arch=sm_90 -o /tmp/lmw validation/probes/l1_miss_wavefront_probe.cu
//   ncu -k regex:rows_read --metrics l1tex__data_pipe_lsu_wavefronts_cmd_read.sum,... /tmp/lmw
// and alone for the times (CSV: source,R,pitch_bytes,blocks,time_us).
//
// rows_read<R>: every thread loads one double, once; a warp reads R rows x 32/R consecutive
// doubles (lane l: row l % R, column l / R), the 8 warps of a block side by side along the rows
// (a block tile: R rows x 256/R doubles), blocks down the rows first, then along them. Rows are
// `pitch` doubles apart: 4096 (32,768 bytes, all rows on the same L1 banks) or 4104 (32,832
// bytes, xreuse.c's: rows alternate between two halves of the banks).
//   source "dram": 16,384 rows (512 MB), the L2 flushed before each launch: sectors from DRAM;
//   source "l2":   512 rows (16 MB), after a warm-up launch: the L2 holds them, the L1 not
//                  (each launch reads every sector once);
//   source "pend": the "dram" launch with each block's tile read by two blocks at once (block
//                  b and b + 1 read the same tile): half the requests hit sectors in flight.
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define COLS 4096

template <int R>
__global__ void rows_read(const double *a, long pitch, int row_tiles, int dup, double *sink) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int tile = blockIdx.x / dup;
  const int row = (tile % row_tiles) * R + lane % R;
  const int col = (tile / row_tiles) * (256 / R) + warp * (32 / R) + lane / R;
  const double v = a[(long)row * pitch + col];
  if (v == 12345.0) *sink = v;
}

template <int R>
static void run(const char *source, const double *a, long pitch, int rows, int dup,
                const probe_flusher *flush, double *sink) {
  const int row_tiles = rows / R, col_tiles = COLS / (256 / R);
  const int blocks = row_tiles * col_tiles * dup;
  float us = flush ? probe_time_us_each("rows_read", 3, 1, *flush,
                                        [&] { rows_read<R><<<blocks, 256>>>(a, pitch, row_tiles, dup, sink); })
                   : probe_time_us_each("rows_read", 3, 1, [] {},
                                        [&] { rows_read<R><<<blocks, 256>>>(a, pitch, row_tiles, dup, sink); });
  printf("%s,%d,%ld,%d,%.2f\n", source, R, pitch * 8, blocks, us);
}

template <int R>
static void all_sources(const double *big, const double *small, const probe_flusher &flush,
                        double *sink) {
  for (long pitch = COLS; pitch <= COLS + 8; pitch += 8) {
    run<R>("dram", big, pitch, 16384, 1, &flush, sink);
    run<R>("l2", small, pitch, 512, 1, nullptr, sink);
    run<R>("pend", big, pitch, 16384, 2, &flush, sink);
  }
}

int main() {
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  double *big, *small, *sink;
  const size_t big_n = 16384L * (COLS + 8), small_n = 512L * (COLS + 8);
  if (cudaMalloc(&big, big_n * 8) || cudaMalloc(&small, small_n * 8) || cudaMalloc(&sink, 8)) return 1;
  cudaMemset(big, 0, big_n * 8);
  cudaMemset(small, 0, small_n * 8);
  printf("source,R,pitch_bytes,blocks,time_us\n");
  all_sources<1>(big, small, flush, sink);
  all_sources<2>(big, small, flush, sink);
  all_sources<4>(big, small, flush, sink);
  all_sources<8>(big, small, flush, sink);
  all_sources<16>(big, small, flush, sink);
  all_sources<32>(big, small, flush, sink);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "l1_miss_wavefront_probe: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
