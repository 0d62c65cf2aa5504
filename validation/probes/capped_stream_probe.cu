// Probe: why a capped grid of a pure stream runs slower than its full grid. pointer_arith.c:10
// (b = alpha a + beta b on 4096^2 doubles, 8x32 blocks) moved the same DRAM bytes on a 512x2 grid
// as on 512x128 and took 1.75x the time (tenth H100 run); the model predicts them equal. Three
// explanations, one variant each:
//   mode 0 "cyclic":  the harness's kernel: block b runs tiles b, b + G, b + 2G, ... (grid-stride),
//                     one iteration in flight per thread (no __restrict__, unroll 1);
//   mode 1 "unroll4": the same tiles with __restrict__ and unroll 4: four iterations' loads in
//                     flight per thread (if the capped grid is slow for want of loads in flight);
//   mode 2 "chunked": block b runs tiles b R .. b R + R - 1, consecutive (if it is the order in
//                     which the blocks walk memory);
//   mode 3 "synced":  mode 0 with __syncthreads() after each tile: the block's warps kept on the
//                     same tile (if it is the warps of a block drifting apart over the rounds, so
//                     that the 32 B each reads of a row no longer reach DRAM together).
// Orientations (the threads' layout over the rows i and columns j of the arrays):
//   0: 8x32 blocks, i -> tx + bx, j -> ty + by (grid-stride over j): a warp reads 8 rows x 32 B;
//   1: 32x8 blocks, j -> tx + bx, i -> ty + by (grid-stride over i): a warp reads 256 B of a row;
//   2: 8x32 blocks, j -> ty + bx, i -> tx + by (grid-stride over i): as 0, blocks along j.
// CUDA events, the minimum of 7 launches after 2 warm-ups, the L2 flushed before each.
//   nvcc -O3 -arch=sm_90 -o /tmp/csp validation/probes/capped_stream_probe.cu && /tmp/csp
// Prints CSV: orient,mode,gx,gy,blocks,tiles_per_block,time_us,gb_per_s
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define N 4096

// the tile's (bx-independent) coordinate along the capped dimension, r-th of the block's
__device__ __forceinline__ int tile_of(int mode, int r, int T) {
  return mode == 2 ? blockIdx.y * ((T + gridDim.y - 1) / gridDim.y) + r : blockIdx.y + r * gridDim.y;
}

template <int ORIENT>
__device__ __forceinline__ void coords(int t, int *i, int *j) {
  if (ORIENT == 0) *i = threadIdx.x + blockIdx.x * 8, *j = threadIdx.y + t * 32;
  else if (ORIENT == 1) *j = threadIdx.x + blockIdx.x * 32, *i = threadIdx.y + t * 8;
  else *j = threadIdx.y + blockIdx.x * 32, *i = threadIdx.x + t * 8;
}

template <int ORIENT>
__global__ void stream_alias(double *b, double *a, double alpha, double beta, int mode, int T) {
  const int R = mode == 2 ? (T + gridDim.y - 1) / gridDim.y : (T - blockIdx.y + gridDim.y - 1) / gridDim.y;
#pragma unroll 1
  for (int r = 0; r < R; r++) {
    int t = tile_of(mode, r, T), i, j;
    if (t >= T) break;
    coords<ORIENT>(t, &i, &j);
    b[(size_t)i * N + j] = alpha * a[(size_t)i * N + j] + beta * b[(size_t)i * N + j];
    if (mode == 3) __syncthreads();
  }
}

template <int ORIENT>
__global__ void stream_restrict(double *__restrict__ b, const double *__restrict__ a, double alpha,
                                double beta, int T) {
  const int R = (T - blockIdx.y + gridDim.y - 1) / gridDim.y;
#pragma unroll 4
  for (int r = 0; r < R; r++) {
    int i, j;
    coords<ORIENT>(blockIdx.y + r * gridDim.y, &i, &j);
    b[(size_t)i * N + j] = alpha * a[(size_t)i * N + j] + beta * b[(size_t)i * N + j];
  }
}

template <int ORIENT>
static void run(double *a, double *b, const probe_flusher &flush) {
  const int bx = ORIENT == 1 ? 32 : 8, by = ORIENT == 1 ? 8 : 32;
  const int gx = ORIENT == 0 ? N / 8 : N / 32;   /* the full extent across */
  const int T = ORIENT == 0 ? N / 32 : N / 8;    /* tiles along the capped dimension */
  for (int mode = 0; mode < 4; mode++)
    for (int gy = T; gy >= 1; gy /= 2) {
      if ((long long)gx * gy < 132) break;
      dim3 grid(gx, gy), block(bx, by);
      float us = probe_time_us_each("stream", 7, 2, flush, [&] {
        if (mode == 1) stream_restrict<ORIENT><<<grid, block>>>(b, a, 1.5, 0.5, T);
        else stream_alias<ORIENT><<<grid, block>>>(b, a, 1.5, 0.5, mode, T);
      });
      printf("%d,%s,%d,%d,%d,%d,%.2f,%.1f\n", ORIENT, mode == 0 ? "cyclic" : mode == 1 ? "unroll4" : mode == 2 ? "chunked" : "synced",
             gx, gy, gx * gy, (T + gy - 1) / gy, us, 3.0 * 8 * N * N / (us * 1e3));
    }
}

int main() {
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  double *a, *b;
  cudaMalloc(&a, (size_t)N * N * sizeof(double));
  cudaMalloc(&b, (size_t)N * N * sizeof(double));
  cudaMemset(a, 0, (size_t)N * N * sizeof(double));
  cudaMemset(b, 0, (size_t)N * N * sizeof(double));
  printf("orient,mode,gx,gy,blocks,tiles_per_block,time_us,gb_per_s\n");
  run<0>(a, b, flush);
  run<1>(a, b, flush);
  run<2>(a, b, flush);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "capped_stream_probe: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
