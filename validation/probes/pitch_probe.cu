// Probe: is the slowness of jacobi2d's i->ty+bx j->tx+by candidates (2.0-2.8x the model's time,
// 1.3-1.7x its DRAM bytes) a matter of the row pitch? The same 5-point stencil on 4094 x 4094
// interior points of 4096-column rows, stored with a pitch of 4096 doubles (32 KB, a power of
// two) and of 4096 + 16, + 32, + 64. Built and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o pitch_probe validation/probes/pitch_probe.cu && ./pitch_probe
// Prints one CSV line per mapping and pitch: the kernel time in microseconds (CUDA events, min of
// 5 launches after 2 warm-ups).
//   rows_on_bx: i = ty + 16 bx (bx < 256), j = tx + 32 by + 128 t (by < 4): one block row of 16
//               rows per bx, each thread walking its row in steps of 128 columns (slow on the H100)
//   cols_on_bx: j = tx + 32 bx (bx < 128), i = ty + 16 by + 128 t (by < 8): the measured best shape
//   one_each:   j = tx + 32 bx, i = ty + 16 by on 128 x 256 blocks, no loop
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define N 4096

__device__ __forceinline__ void point(const double *A, double *B, long p, int i, int j) {
  if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1)
    B[i * p + j] = 0.2 * (A[i * p + j] + A[(i - 1) * p + j] + A[(i + 1) * p + j] +
                          A[i * p + j - 1] + A[i * p + j + 1]);
}

__global__ void rows_on_bx(const double *A, double *B, long p) {
  int i = threadIdx.y + 16 * blockIdx.x;
  for (int j = threadIdx.x + 32 * blockIdx.y; j < N; j += 32 * gridDim.y) point(A, B, p, i, j);
}

__global__ void cols_on_bx(const double *A, double *B, long p) {
  int j = threadIdx.x + 32 * blockIdx.x;
  for (int i = threadIdx.y + 16 * blockIdx.y; i < N; i += 16 * gridDim.y) point(A, B, p, i, j);
}

__global__ void one_each(const double *A, double *B, long p) {
  point(A, B, p, threadIdx.y + 16 * blockIdx.y, threadIdx.x + 32 * blockIdx.x);
}

int main() {
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  const long pitches[] = {N, N + 16, N + 32, N + 64};
  size_t bytes = (size_t)N * (N + 64) * sizeof(double);
  double *A, *B;
  if (cudaMalloc(&A, bytes) != cudaSuccess || cudaMalloc(&B, bytes) != cudaSuccess) return 1;
  cudaMemset(A, 0, bytes);
  cudaMemset(B, 0, bytes);
  printf("# %s\n", prop.name);
  printf("kernel,grid_x,grid_y,pitch_doubles,time_us\n");
  dim3 block(32, 16);
  struct { const char *name; dim3 grid; int k; } runs[] = {
      {"rows_on_bx", dim3(256, 4), 0}, {"rows_on_bx", dim3(256, 2), 0},
      {"cols_on_bx", dim3(128, 8), 1}, {"cols_on_bx", dim3(128, 4), 1},
      {"one_each", dim3(128, 256), 2}};
  for (auto &r : runs)
    for (long p : pitches) {
      float us = probe_time_us("pitch_probe", [&] {
        if (r.k == 0) rows_on_bx<<<r.grid, block>>>(A, B, p);
        else if (r.k == 1) cols_on_bx<<<r.grid, block>>>(A, B, p);
        else one_each<<<r.grid, block>>>(A, B, p);
      });
      if (us < 0) return 1;
      printf("%s,%u,%u,%ld,%.2f\n", r.name, r.grid.x, r.grid.y, p, us);
    }
  return 0;
}
