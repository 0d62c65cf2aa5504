// What a floating-point operation costs a warp: its latency in a dependent chain, and the SM's
// cycles per warp instruction when every slot is full. The time model had no arithmetic at all:
// aos_particles.c:21 (an N-body force loop: a division and a square root in double per pair)
// ran 3.7-4x the predicted time on the H100 at every launch, its loads all L1 hits.
//
// Each operation as nvcc compiles it by default (IEEE division and square root, -fmad=true):
//   dadd x = x + c            dmul x = x * c            dfma x = x * c + d
//   ddiv x = c / x            dsqrt x = sqrt(x) (x stays near 1)
//   dexp x = exp(x) * c       (c < 1 keeps x in [0, 1]: one multiply more than the exp)
//   cvt  x = (double)(float)x (a double -> float -> double round trip: two conversions)
//   fadd, fmul, ffma, fdiv, fsqrt, fexp: the same in float
// latency: one warp on one SM, a chain of `iters` dependent operations, cycles per operation
//   from the warp's %clock64 span (the loop unrolled 16 times: its branch is amortized).
// throughput: 2048 threads on every SM (16 blocks of 128), each thread 8 independent chains;
//   SM cycles per warp instruction = the longest block's %clock64 span over the warp
//   instructions of its SM (all blocks resident at once, one wave).
//
//   nvcc -O3 -arch=sm_90 -o fp_op_probe validation/probes/fp_op_probe.cu
//   ./fp_op_probe > fp_op.csv
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

enum { DADD, DMUL, DFMA, DDIV, DSQRT, DEXP, CVT, FADD, FMUL, FFMA, FDIV, FSQRT, FEXP, NOPS };
static const char *op_name[NOPS] = {"dadd", "dmul", "dfma", "ddiv", "dsqrt", "dexp", "cvt",
                                    "fadd", "fmul", "ffma", "fdiv", "fsqrt", "fexp"};

template <int OP, typename T>
__device__ __forceinline__ T step(T x, T c, T d) {
  if (OP == DADD || OP == FADD) return x + c;
  if (OP == DMUL || OP == FMUL) return x * c;
  if (OP == DFMA || OP == FFMA) return x * c + d;
  if (OP == DDIV || OP == FDIV) return c / x;
  if (OP == DSQRT || OP == FSQRT) return sqrt(x);
  if (OP == DEXP || OP == FEXP) return exp(x) * c;
  return (T)(float)x; /* CVT */
}

template <int OP, typename T>
__global__ void chain(const T *in, int iters, T *sink, long long *cycles) {
  const int chains = 8;
  T x[chains];
  const T c = in[1], d = in[2];
  for (int k = 0; k < chains; k++) x[k] = in[0] + (T)(threadIdx.x + k) * (T)1e-3;
  __syncthreads();
  long long t0 = clock64();
  if (blockDim.x * gridDim.x == 32) { /* latency: one chain */
#pragma unroll 16
    for (int i = 0; i < iters; i++) x[0] = step<OP, T>(x[0], c, d);
  } else {
#pragma unroll 4
    for (int i = 0; i < iters; i++)
#pragma unroll
      for (int k = 0; k < chains; k++) x[k] = step<OP, T>(x[k], c, d);
  }
  long long t1 = clock64();
  T s = 0;
  for (int k = 0; k < chains; k++) s += x[k];
  if (s == (T)-12345) *sink = s;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

template <int OP, typename T>
static void run(const cudaDeviceProp &prop, T x0, T c, T d) {
  T h[3] = {x0, c, d}, *in, *sink;
  long long *cyc;
  const int blocks_per_sm = 16, threads = 128, grid = prop.multiProcessorCount * blocks_per_sm;
  cudaMalloc(&in, sizeof h);
  cudaMalloc(&sink, sizeof(T));
  cudaMalloc(&cyc, grid * sizeof(long long));
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  long long *hc = new long long[grid];
  /* latency */
  const int lat_iters = 1 << 14;
  double best_lat = 1e30;
  for (int r = 0; r < 3; r++) {
    chain<OP, T><<<1, 32>>>(in, lat_iters, sink, cyc);
    cudaMemcpy(hc, cyc, sizeof(long long), cudaMemcpyDeviceToHost);
    if (r > 0 && hc[0] < best_lat) best_lat = (double)hc[0];
  }
  /* throughput */
  const int tp_iters = 1 << 12;
  double best_tp = 1e30;
  float us = 0;
  for (int r = 0; r < 3; r++) {
    us = probe_time_us(op_name[OP], [&] { chain<OP, T><<<grid, threads>>>(in, tp_iters, sink, cyc); });
    cudaMemcpy(hc, cyc, grid * sizeof(long long), cudaMemcpyDeviceToHost);
    long long mx = 0;
    for (int b = 0; b < grid; b++)
      if (hc[b] > mx) mx = hc[b];
    if (r > 0 && mx < best_tp) best_tp = (double)mx;
  }
  double warp_instr_per_sm = (double)blocks_per_sm * (threads / 32) * 8.0 * tp_iters;
  cudaError_t e = cudaGetLastError();
  printf("%s,%s,%.2f,%.4f,%.1f,%s\n", op_name[OP], sizeof(T) == 8 ? "double" : "float",
         best_lat / lat_iters, best_tp / warp_instr_per_sm, us,
         e == cudaSuccess ? "ok" : cudaGetErrorString(e));
  delete[] hc;
  cudaFree(in);
  cudaFree(sink);
  cudaFree(cyc);
}

int main() {
  cudaDeviceProp prop = probe_device();
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
  printf("# clock %d kHz\n", khz);
  printf("op,type,latency_cycles,sm_cycles_per_warp_instr,throughput_kernel_us,status\n");
  run<DADD, double>(prop, 1.0, 1e-7, 0.0);
  run<DMUL, double>(prop, 1.0, 1.0000001, 0.0);
  run<DFMA, double>(prop, 1.0, 0.9999999, 1e-7);
  run<DDIV, double>(prop, 1.2, 1.5, 0.0);
  run<DSQRT, double>(prop, 1.7, 0.0, 0.0);
  run<DEXP, double>(prop, 0.5, 0.9, 0.0);
  run<CVT, double>(prop, 1.25, 0.0, 0.0);
  run<FADD, float>(prop, 1.0f, 1e-7f, 0.0f);
  run<FMUL, float>(prop, 1.0f, 1.0000001f, 0.0f);
  run<FFMA, float>(prop, 1.0f, 0.9999999f, 1e-7f);
  run<FDIV, float>(prop, 1.2f, 1.5f, 0.0f);
  run<FSQRT, float>(prop, 1.7f, 0.0f, 0.0f);
  run<FEXP, float>(prop, 0.5f, 0.9f, 0.0f);
  return 0;
}
