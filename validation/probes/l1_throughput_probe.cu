// How many 128-byte lines, 32-byte sectors and bytes an SM's L1 serves a cycle on loads that hit
// it: the time model charges an SM's L1 work as the larger of its bytes over
// l1_bw_bytes_per_cycle (128, an estimate) and its lines at SP_L1_LINES_PER_CYCLE (1, from
// candidates that ran 2.5-5x longer with 4x the lines), rank/time.c.
//
// Every warp of 2 blocks of 1024 threads an SM (64 warps) loads 8-byte words of a 64 KB buffer
// that stays in the L1 (ld.global.ca), its lanes `lane_stride` bytes apart (8: 2 lines and 8 sectors a request;
// 32: 8 lines, 32 sectors; 64: 16 lines; 128 and 256: 32 lines), 4 independent loads in flight a
// thread, `iters` times. Each block reads %clock64 at its start and end (after __syncthreads);
// the cycles are the longest block's, the SM's clock. Requests, lines and sectors per SM cycle
// follow.
//
//   nvcc -O3 -arch=sm_90 -o l1_throughput_probe validation/probes/l1_throughput_probe.cu
//   ./l1_throughput_probe > l1_throughput.csv
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_l1.cuh"
#include "probe_time.cuh"

int main() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    fprintf(stderr, "l1_throughput_probe: no GPU\n");
    return 1;
  }
  const int nsm = prop.multiProcessorCount, blocks = 2 * nsm, threads = 1024, iters = 4096;
  const size_t words = 64 * 1024 / 8;
  double *buf, *sink;
  long long *cyc_d;
  if (cudaMalloc(&buf, words * 8) != cudaSuccess || cudaMalloc(&sink, 8) != cudaSuccess ||
      cudaMalloc(&cyc_d, sizeof(long long) * blocks) != cudaSuccess) {
    fprintf(stderr, "l1_throughput_probe: cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(buf, 0, words * 8);
  printf("# %s, %d SMs, %d blocks of %d threads, %d iterations of 4 loads\n", prop.name, nsm, blocks,
         threads, iters);
  printf("lane_stride_bytes,lines_per_request,sectors_per_request,cycles,requests_per_cycle,"
         "lines_per_cycle,sectors_per_cycle,bytes_per_cycle\n");
  const int strides[] = {8, 16, 32, 64, 128, 256};
  for (int si = 0; si < 6; si++) {
    const unsigned sw = strides[si] / 8;
    long long best = probe_cycles("l1_throughput_probe", 4, cyc_d, blocks, [&] {
      l1_masked_loads<double><<<blocks, threads>>>(buf, (unsigned)words - 1, 0, sw, 2048, 4096 + 7 * 32,
                                                   iters, sink, cyc_d);
    });
    if (best < 0) return 1;
    /* per SM: 64 warps x iters x 4 requests; a request's lines and sectors from its stride */
    const double requests = 64.0 * iters * 4;
    const int span = 32 * strides[si];
    const int lines = span <= 128 ? 1 : (strides[si] >= 128 ? 32 : span / 128);
    const int sectors = strides[si] >= 32 ? 32 : span / 32;
    printf("%d,%d,%d,%lld,%.4f,%.3f,%.3f,%.2f\n", strides[si], lines, sectors, best, requests / best,
           requests * lines / best, requests * sectors / best, requests * 256.0 / best);
    fflush(stdout);
  }
  return 0;
}
