// Probe: what blocks without work cost. GCC launches 16,896 gangs whatever the loop needs
// (jacobi's 4,094 rows leave 12,802 blocks that only start and stop), and the model counted only
// the working blocks' time. Here a streaming kernel whose first W blocks (W = 1024 or 4096) each
// copy one row of 4096 doubles and whose other blocks return at once, launched with grids of W
// to 67,584 blocks of 64 to 1024 threads; and an empty kernel alone. CUDA events, the minimum of 7 launches after 2 warm-ups, the L2
// flushed before each (as the harness does).
//   nvcc -O3 -arch=sm_90 -o /tmp/ebp validation/probes/empty_block_probe.cu && /tmp/ebp
// Prints CSV: kernel,threads,grid,working_blocks,time_us
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define COLS 4096

__global__ void rows_copy(const double *__restrict__ a, double *__restrict__ b, int rows) {
  if (blockIdx.x >= (unsigned)rows) return;
  for (int j = threadIdx.x; j < COLS; j += blockDim.x)
    b[(size_t)blockIdx.x * COLS + j] = a[(size_t)blockIdx.x * COLS + j];
}

__global__ void nothing(void) {}

int main() {
  const int row_counts[] = {1024, 4096};
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  double *a, *b;
  cudaMalloc(&a, (size_t)4096 * COLS * sizeof(double));
  cudaMalloc(&b, (size_t)4096 * COLS * sizeof(double));
  cudaMemset(a, 0, (size_t)4096 * COLS * sizeof(double));
  const int threads[] = {64, 128, 256, 512, 1024};
  const int grids[] = {1024, 2048, 4096, 4224, 8448, 16896, 33792, 67584};
  printf("kernel,threads,grid,working_blocks,time_us\n");
  for (int rows : row_counts)
  for (int t : threads)
    for (int g : grids) {
      if (g < rows) continue;
      float us = probe_time_us_each("rows_copy", 7, 2, flush, [&] { rows_copy<<<g, t>>>(a, b, rows); });
      printf("rows_copy,%d,%d,%d,%.2f\n", t, g, rows, us);
    }
  for (int t : threads)
    for (int g : grids) {
      float us = probe_time_us_each("nothing", 7, 2, flush, [&] { nothing<<<g, t>>>(); });
      printf("nothing,%d,%d,0,%.2f\n", t, g, us);
    }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "empty_block_probe: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
