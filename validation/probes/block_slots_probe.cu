// Probe: whether a short block's cost is its size or the few slots an SM has for it.
// short_block_probe.cu found one-round blocks of 1,024 threads (two an SM) 1.16x slower than long
// ones with one load in flight a thread, of 256 threads (eight an SM) 1.03x. Here the same
// stream (b[x] = s a[x], 2^24 doubles, the round loop rolled: one load in flight a thread) in
// blocks of T threads and k rounds, with dynamic shared memory that leaves an SM S slots for
// them (S T <= 2,048 threads), so that size and slots vary apart. The occupancy API's blocks an
// SM are printed beside the slots asked for.
// CUDA events, the minimum of 5 launches after 2 warm-ups, the L2 flushed before each.
//   nvcc -O3 -arch=sm_90 -o /tmp/bsp validation/probes/block_slots_probe.cu && /tmp/bsp
// Prints CSV: threads,rounds,slots_asked,slots,blocks,smem_bytes,time_us,gb_per_s
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define ELEMS (1 << 24)

__global__ void scale_slots(const double *__restrict__ a, double *__restrict__ b, double s,
                            int rounds) {
  extern __shared__ char reserve[]; // only to limit the blocks an SM holds
  const size_t base = (size_t)blockIdx.x * blockDim.x * rounds + threadIdx.x;
#pragma unroll 1
  for (int r = 0; r < rounds; r++) {
    const size_t x = base + (size_t)r * blockDim.x;
    b[x] = s * a[x];
  }
  if (rounds < 0) reserve[threadIdx.x] = 0; // never: keeps the array
}

int main() {
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  double *a, *b;
  if (cudaMalloc(&a, (size_t)ELEMS * sizeof(double)) != cudaSuccess ||
      cudaMalloc(&b, (size_t)ELEMS * sizeof(double)) != cudaSuccess) {
    fprintf(stderr, "block_slots_probe: out of device memory\n");
    return 1;
  }
  cudaMemset(a, 0, (size_t)ELEMS * sizeof(double));
  cudaFuncSetAttribute(scale_slots, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       (int)prop.sharedMemPerBlockOptin);
  const int threads[] = {128, 256, 512, 1024};
  const int rounds[] = {1, 4, 64};
  const int slots[] = {1, 2, 4, 8, 16};
  const double bytes = 2.0 * ELEMS * sizeof(double);
  printf("threads,rounds,slots_asked,slots,blocks,smem_bytes,time_us,gb_per_s\n");
  for (int t : threads)
    for (int sl : slots) {
      if (sl * t > prop.maxThreadsPerMultiProcessor) continue;
      // the SM's shared memory split S ways, less the 1 KB the runtime reserves per block
      size_t smem = prop.sharedMemPerMultiprocessor / sl - 1024;
      if (smem > prop.sharedMemPerBlockOptin) smem = prop.sharedMemPerBlockOptin;
      if (sl * t == prop.maxThreadsPerMultiProcessor) smem = 0; // threads alone limit it
      int got = 0;
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, scale_slots, t, smem);
      for (int k : rounds) {
        const int blocks = ELEMS / (t * k);
        float us = probe_time_us_each("scale_slots", 7, 2, flush, [&] {
          scale_slots<<<blocks, t, smem>>>(a, b, 2.0, k);
        });
        printf("%d,%d,%d,%d,%d,%zu,%.2f,%.1f\n", t, k, sl, got, blocks, smem, us,
               bytes / (us * 1e3));
      }
    }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "block_slots_probe: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
