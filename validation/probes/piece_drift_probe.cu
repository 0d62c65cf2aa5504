// Probe: how much the drift of a block's warps over grid-stride rounds costs, by the size of
// the piece of a row each warp reads. capped_stream_probe.cu measured it for one piece (a warp
// reading 32 B of each of 8 rows, 1.59x at 64 rounds, nothing with one barrier a round); the
// time model needs it for the pieces a candidate's warps read. Built and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o /tmp/pdp validation/probes/piece_drift_probe.cu && /tmp/pdp [m]
//
// stream: b = alpha a + beta b on 4096^2 doubles (the capped probe's stream, its harness-like
// kernel: one iteration in flight per thread, no __restrict__). Blocks of 256 threads; a warp
// reads R rows x 256/R bytes (lane l: row l % R, column l / R), the block's 8 warps side by side
// along the rows: a block tile is R rows x 2048/R bytes. R = 8, 4, 2, 1: pieces of 32, 64, 128
// and 256 bytes. Grid x over the row groups (4096 / R), grid y over the tiles along the rows,
// capped so that each thread runs `rounds` tiles (grid-stride); "synced" adds __syncthreads()
// after each tile (the warps kept together).
//
// xreuse: examples/xreuse.c (b[j][i] += sum_k w[k] a[j][i+k], a of 4096 x 4104) as its
// candidates map it: 8x32 blocks with j on tx + bx and i on ty + by, on the capped 512x2 grid
// (64 rounds; measured 464 us by the harness) and the full 512x128 grid, each cyclic and synced;
// and 2_1 (j on bx, i on tx, 256 threads, 4096 blocks, 16 rounds of the i loop; 145 us).
//
// stream_off (with argument "m"): the same for R = 8 and 1 with every index one double further,
// so that each warp's pieces start 8 bytes into a sector and the lines at their ends are shared
// with the neighbouring warps' pieces (a loop from 1; the time model's pieces per line).
//
// CUDA events, the minimum of 7 launches after 2 warm-ups, the L2 flushed before each.
// Prints CSV: kernel,R,piece_bytes,mode,gx,gy,rounds,time_us
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define N 4096
#define XR 8 /* xreuse's window */

template <int R, bool SYNC>
__global__ void stream(double *b, double *a, double alpha, double beta, int T, int off) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int cols_per_warp = 32 / R, cols_per_tile = 8 * cols_per_warp;
  const int i = blockIdx.x * R + lane % R;
#pragma unroll 1
  for (int t = blockIdx.y; t < T; t += gridDim.y) {
    const int j = t * cols_per_tile + warp * cols_per_warp + lane / R;
    const size_t p = (size_t)i * N + j + off;
    b[p] = alpha * a[p] + beta * b[p];
    if (SYNC) __syncthreads();
  }
}

template <bool SYNC>
__global__ void xreuse_8x32(double *b, const double *a, const double *w) {
  const int j = threadIdx.x + blockIdx.x * 8;
#pragma unroll 1
  for (int i = threadIdx.y + blockIdx.y * 32; i < N; i += 32 * gridDim.y) {
    double s = 0.0;
    for (int k = 0; k < XR; k++) s += w[k] * a[(size_t)j * (N + XR) + i + k];
    b[(size_t)j * N + i] += s;
    if (SYNC) __syncthreads();
  }
}

__global__ void xreuse_2_1(double *b, const double *a, const double *w) {
  const int j = blockIdx.x;
#pragma unroll 1
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    double s = 0.0;
    for (int k = 0; k < XR; k++) s += w[k] * a[(size_t)j * (N + XR) + i + k];
    b[(size_t)j * N + i] += s;
  }
}

template <int R>
static void run_stream(double *a, double *b, const probe_flusher &flush, int off) {
  const int gx = N / R, T = N / (2048 / R / 8);
  for (int sync = 0; sync < 2; sync++)
    for (int rounds = 1; rounds <= 64 && rounds <= T; rounds *= 2) {
      dim3 grid(gx, T / rounds);
      float us = probe_time_us_each("stream", 7, 2, flush, [&] {
        if (sync) stream<R, true><<<grid, 256>>>(b, a, 1.5, 0.5, T, off);
        else stream<R, false><<<grid, 256>>>(b, a, 1.5, 0.5, T, off);
      });
      printf("%s,%d,%d,%s,%d,%d,%d,%.2f\n", off ? "stream_off" : "stream", R, 256 / R,
             sync ? "synced" : "cyclic", gx, T / rounds, rounds, us);
    }
}

int main(int argc, char **argv) {
  const bool misaligned = argc > 1 && argv[1][0] == 'm';
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  double *a, *b, *xa, *w;
  const size_t n = (size_t)N * N + 8; /* room for stream_off's shift */
  if (cudaMalloc(&a, n * 8) || cudaMalloc(&b, n * 8) || cudaMalloc(&xa, (size_t)N * (N + XR) * 8) ||
      cudaMalloc(&w, XR * 8))
    return 1;
  cudaMemset(a, 0, n * 8);
  cudaMemset(b, 0, n * 8);
  cudaMemset(xa, 0, (size_t)N * (N + XR) * 8);
  cudaMemset(w, 0, XR * 8);
  printf("kernel,R,piece_bytes,mode,gx,gy,rounds,time_us\n");
  run_stream<8>(a, b, flush, 0);
  run_stream<4>(a, b, flush, 0);
  run_stream<2>(a, b, flush, 0);
  run_stream<1>(a, b, flush, 0);
  if (misaligned) { /* every warp's pieces 8 bytes past a sector: their end lines shared */
    run_stream<8>(a, b, flush, 1);
    run_stream<1>(a, b, flush, 1);
  }
  for (int sync = 0; sync < 2; sync++)
    for (int gy = 128; gy >= 2; gy /= 8) {
      dim3 grid(N / 8, gy), block(8, 32);
      float us = probe_time_us_each("xreuse", 7, 2, flush, [&] {
        if (sync) xreuse_8x32<true><<<grid, block>>>(b, xa, w);
        else xreuse_8x32<false><<<grid, block>>>(b, xa, w);
      });
      printf("xreuse_8x32,8,32,%s,%d,%d,%d,%.2f\n", sync ? "synced" : "cyclic", N / 8, gy, 128 / gy, us);
    }
  float us = probe_time_us_each("xreuse_2_1", 7, 2, flush, [&] { xreuse_2_1<<<N, 256>>>(b, xa, w); });
  printf("xreuse_2_1,1,256,cyclic,%d,1,%d,%.2f\n", N, N / 256, us);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "piece_drift_probe: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
