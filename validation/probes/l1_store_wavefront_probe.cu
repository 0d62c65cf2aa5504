// Probe: how many L1 data-stage wavefronts a store request takes, by the shape of the warp. The
// time model charges a store request the larger of its bytes over 128 and its lines
// (rank/time.c); loads that miss in warps over several rows take twice their bank cycles
// (l1_miss_wavefront_probe.cu), and Nsight Compute counted twice the bank cycles for the
// stores of 8-row warps in xreuse.c and a stream of 32-byte pieces (validation/results/h100/
// 2026-11-27-piece-drift-probe/ncu/). Run under ncu for the counts:
//   nvcc -O3 -arch=sm_90 -o /tmp/lsw validation/probes/l1_store_wavefront_probe.cu
//   ncu -k regex:rows_write --metrics l1tex__data_pipe_lsu_wavefronts_cmd_write.sum,... /tmp/lsw
// and alone for the times (CSV: target,R,pitch_bytes,blocks,time_us).
//
// rows_write<R>: every thread stores one double, once; a warp writes R rows x 32/R consecutive
// doubles (lane l: row l % R, column l / R), the 8 warps of a block side by side along the rows
// (a block tile: R rows x 256/R doubles), blocks down the rows first, then along them. Rows are
// `pitch` doubles apart: 4096 (32,768 bytes, all rows on the same L1 banks) or 4104 (32,832
// bytes, xreuse.c's: rows alternate between two halves of the banks).
//   target "dram": 16,384 rows (512 MB), the L2 flushed before each launch;
//   target "l2":   512 rows (16 MB), after a warm-up launch: the L2 holds them.
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define COLS 4096

template <int R>
__global__ void rows_write(double *a, long pitch, int row_tiles) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int tile = blockIdx.x;
  const int row = (tile % row_tiles) * R + lane % R;
  const int col = (tile / row_tiles) * (256 / R) + warp * (32 / R) + lane / R;
  a[(long)row * pitch + col] = (double)(row + col);
}

template <int R>
static void run(const char *target, double *a, long pitch, int rows, const probe_flusher *flush) {
  const int row_tiles = rows / R, col_tiles = COLS / (256 / R);
  const int blocks = row_tiles * col_tiles;
  float us = flush ? probe_time_us_each("rows_write", 3, 1, *flush,
                                        [&] { rows_write<R><<<blocks, 256>>>(a, pitch, row_tiles); })
                   : probe_time_us_each("rows_write", 3, 1, [] {},
                                        [&] { rows_write<R><<<blocks, 256>>>(a, pitch, row_tiles); });
  printf("%s,%d,%ld,%d,%.2f\n", target, R, pitch * 8, blocks, us);
}

template <int R>
static void all_targets(double *big, double *small, const probe_flusher &flush) {
  for (long pitch = COLS; pitch <= COLS + 8; pitch += 8) {
    run<R>("dram", big, pitch, 16384, &flush);
    run<R>("l2", small, pitch, 512, nullptr);
  }
}

int main() {
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  double *big, *small;
  const size_t big_n = 16384L * (COLS + 8), small_n = 512L * (COLS + 8);
  if (cudaMalloc(&big, big_n * 8) || cudaMalloc(&small, small_n * 8)) return 1;
  cudaMemset(big, 0, big_n * 8);
  cudaMemset(small, 0, small_n * 8);
  printf("target,R,pitch_bytes,blocks,time_us\n");
  all_targets<1>(big, small, flush);
  all_targets<2>(big, small, flush);
  all_targets<4>(big, small, flush);
  all_targets<8>(big, small, flush);
  all_targets<16>(big, small, flush);
  all_targets<32>(big, small, flush);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "l1_store_wavefront_probe: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
