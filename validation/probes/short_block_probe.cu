// Probe: what a block's shortness costs a stream. interleaved_empty_probe.cu found triangular.c's
// 34,816 one-element blocks 1.23x slower than the same bytes in 1,056 long blocks, while the
// model takes the larger of the memory time and the block dispatch. Here one stream of the same
// bytes (b[x] = s a[x], 2^24 doubles: 128 MiB read, 128 MiB written), each block running k
// rounds of its T threads over consecutive elements (round r: block base + r T + thread), so
// that T k elements a block give 2^24 / (T k) blocks; T = 128 .. 1024, k = 1 .. 64. And an
// empty kernel of each grid (the dispatch alone).
// nvcc unrolls scale_rounds' loop (its SASS issues the rounds' loads together), so its rounds
// also set the loads in flight; scale_rolled keeps the loop rolled (#pragma unroll 1): one load
// in flight a thread whatever k, so that its k = 1 against k = 4 is the blocks' shortness alone.
// CUDA events, the minimum of 5 launches after 2 warm-ups, the L2 flushed before each.
//   nvcc -O3 -arch=sm_90 -o /tmp/sbp validation/probes/short_block_probe.cu && /tmp/sbp
// Prints CSV: kernel,threads,rounds,blocks,time_us,gb_per_s
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define ELEMS (1 << 24)

__global__ void scale_rounds(const double *__restrict__ a, double *__restrict__ b, double s,
                             int rounds) {
  const size_t base = (size_t)blockIdx.x * blockDim.x * rounds + threadIdx.x;
  for (int r = 0; r < rounds; r++) {
    const size_t x = base + (size_t)r * blockDim.x;
    b[x] = s * a[x];
  }
}

__global__ void scale_rolled(const double *__restrict__ a, double *__restrict__ b, double s,
                             int rounds) {
  const size_t base = (size_t)blockIdx.x * blockDim.x * rounds + threadIdx.x;
#pragma unroll 1
  for (int r = 0; r < rounds; r++) {
    const size_t x = base + (size_t)r * blockDim.x;
    b[x] = s * a[x];
  }
}

__global__ void nothing(void) {}

int main() {
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  double *a, *b;
  if (cudaMalloc(&a, (size_t)ELEMS * sizeof(double)) != cudaSuccess ||
      cudaMalloc(&b, (size_t)ELEMS * sizeof(double)) != cudaSuccess) {
    fprintf(stderr, "short_block_probe: out of device memory\n");
    return 1;
  }
  cudaMemset(a, 0, (size_t)ELEMS * sizeof(double));
  const int threads[] = {128, 256, 512, 1024};
  const int rounds[] = {1, 2, 4, 8, 16, 32, 64};
  const double bytes = 2.0 * ELEMS * sizeof(double);
  printf("kernel,threads,rounds,blocks,time_us,gb_per_s\n");
  for (int t : threads)
    for (int k : rounds) {
      const int blocks = ELEMS / (t * k);
      float us = probe_time_us_each("scale_rounds", 7, 2, flush,
                                    [&] { scale_rounds<<<blocks, t>>>(a, b, 2.0, k); });
      printf("scale,%d,%d,%d,%.2f,%.1f\n", t, k, blocks, us, bytes / (us * 1e3));
      us = probe_time_us_each("scale_rolled", 7, 2, flush,
                              [&] { scale_rolled<<<blocks, t>>>(a, b, 2.0, k); });
      printf("scale_rolled,%d,%d,%d,%.2f,%.1f\n", t, k, blocks, us, bytes / (us * 1e3));
      us = probe_time_us_each("nothing", 7, 2, flush, [&] { nothing<<<blocks, t>>>(); });
      printf("nothing,%d,%d,%d,%.2f,0\n", t, k, blocks, us);
    }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "short_block_probe: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
