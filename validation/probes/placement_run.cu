// Runs one candidate kernel as schedvalidate generates it (--dump-sources) and records, for
// every block, the SM that ran it and its start and end (%globaltimer): the placement the GPU
// chose in that very run, to simulate the model under it (validation/results/h100/2026-11-23-placement-replay/README.md).
//
//   nvcc -O3 -arch=sm_90 -DSP_SOURCE='"sp_matmul_14_c302.cu"' -DSP_KERNEL=sp_matmul_14_c302 \
//        -DSP_NARRAYS=3 -o placement_run validation/probes/placement_run.cu
//   placement_run GRID_X BLOCK_X RUNS OUTPREFIX BYTES_0 [BYTES_1 ...]
//
// The generated kernel becomes a __device__ function called by a wrapper kernel that records
// the placement around it (one store per block). Its arguments are the arrays, in order, of the
// given sizes (the generated kernels take them as double *; zero-filled: the candidates touched here have no data-dependent control flow or
// addresses). RUNS launches, each timed with events after an L2 flush, each writing
// OUTPREFIX.runN.csv (block,smid,start_ns,end_ns). Under ncu with RUNS = 1 and a one-pass metric
// set, the CSV is the placement of the profiled pass.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "probe_sm.cuh"

#ifdef SP_PLAIN /* the kernel as generated, launched alone: its time without the recording */
#include SP_SOURCE
#else
#pragma push_macro("__global__")
#undef __global__
#define __global__ __device__
#include SP_SOURCE
#pragma pop_macro("__global__")
#endif

#define CHECK(x)                                                                                \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));      \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

#ifndef SP_NARRAYS
#error "define SP_NARRAYS, the kernel's number of arrays (1-4)"
#endif
#if SP_NARRAYS == 1
#define SP_ARGS a.p[0]
#elif SP_NARRAYS == 2
#define SP_ARGS a.p[0], a.p[1]
#elif SP_NARRAYS == 3
#define SP_ARGS a.p[0], a.p[1], a.p[2]
#elif SP_NARRAYS == 4
#define SP_ARGS a.p[0], a.p[1], a.p[2], a.p[3]
#else
#error "SP_NARRAYS: 1-4"
#endif
/* the kernel's scalar arguments after its arrays: -DSP_SCALAR1=1.2 [-DSP_SCALAR2=1.5] (nvcc
 * splits -D values at commas) */
#if defined(SP_SCALAR2)
#define SP_SCALARS , SP_SCALAR1, SP_SCALAR2
#elif defined(SP_SCALAR1)
#define SP_SCALARS , SP_SCALAR1
#else
#define SP_SCALARS
#endif
struct probe_arrays {
  double *p[4];
};

#ifndef SP_PLAIN
/* With -DSP_RECORD_END the end is recorded too, after a __syncthreads; that keeps the start
 * time live across the kernel and changed matmul's code enough to slow it 1.74x (README). */
__global__ void probe_kernel(unsigned long long *rec, probe_arrays a)
{
  bool lead = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  size_t b = blockIdx.x + (size_t)gridDim.x * (blockIdx.y + (size_t)gridDim.y * blockIdx.z);
  if (lead) {
    rec[3 * b] = probe_smid();
    rec[3 * b + 1] = probe_now();
    rec[3 * b + 2] = 0;
  }
  SP_KERNEL(SP_ARGS SP_SCALARS);
#ifdef SP_RECORD_END
  __syncthreads();
  if (lead) rec[3 * b + 2] = probe_now();
#endif
}
#endif

__global__ void probe_flush(double *buf, size_t n, double *sink)
{
  double s = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    s += buf[i];
  if (s == 42.0) *sink = s;
}

int main(int argc, char **argv)
{
  if (argc < 6) {
    fprintf(stderr, "usage: %s GRID_X BLOCK_X RUNS OUTPREFIX BYTES_0 [BYTES_1 ...]\n", argv[0]);
    return 2;
  }
  int grid = atoi(argv[1]), block = atoi(argv[2]), runs = atoi(argv[3]);
  const char *prefix = argv[4];
  int narrays = argc - 5;
  if (grid < 1 || block < 1 || runs < 1 || narrays != SP_NARRAYS) {
    fprintf(stderr, "bad arguments (this build takes %d array sizes)\n", SP_NARRAYS);
    return 2;
  }
  double *arr[4] = {0};
  for (int i = 0; i < narrays; i++) {
    size_t bytes = strtoull(argv[5 + i], NULL, 10);
    CHECK(cudaMalloc(&arr[i], bytes));
    CHECK(cudaMemset(arr[i], 0, bytes));
  }
  probe_arrays pa = {{arr[0], arr[1], arr[2], arr[3]}};
  unsigned long long *rec;
  CHECK(cudaMalloc(&rec, sizeof *rec * 3 * (size_t)grid));
  unsigned long long *host = (unsigned long long *)malloc(sizeof *host * 3 * (size_t)grid);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  size_t flush_n = 2 * (size_t)prop.l2CacheSize / sizeof(double);
  double *flush, *sink;
  CHECK(cudaMalloc(&flush, flush_n * sizeof(double)));
  CHECK(cudaMemset(flush, 0, flush_n * sizeof(double)));
  CHECK(cudaMalloc(&sink, sizeof(double)));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  printf("device %s, %d SMs; grid %d x block %d, %d arrays\n", prop.name, prop.multiProcessorCount,
         grid, block, narrays);
  for (int r = 0; r < runs; r++) {
    probe_flush<<<prop.multiProcessorCount * 4, 256>>>(flush, flush_n, sink);
    CHECK(cudaEventRecord(e0));
#ifdef SP_PLAIN
    probe_arrays a = pa;
    SP_KERNEL<<<grid, block>>>(SP_ARGS SP_SCALARS);
#else
    probe_kernel<<<grid, block>>>(rec, pa);
#endif
    CHECK(cudaEventRecord(e1));
    CHECK(cudaGetLastError());
    CHECK(cudaEventSynchronize(e1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
#ifdef SP_PLAIN
    printf("run %d: %.3f ms (the kernel alone: no %s.run%d.csv)\n", r, ms, prefix, r);
#else
    CHECK(cudaMemcpy(host, rec, sizeof *host * 3 * (size_t)grid, cudaMemcpyDeviceToHost));
    char path[512];
    snprintf(path, sizeof path, "%s.run%d.csv", prefix, r);
    FILE *f = fopen(path, "w");
    if (!f) {
      perror(path);
      return 1;
    }
    unsigned long long t0 = host[1];
    for (int b = 0; b < grid; b++)
      if (host[3 * b + 1] < t0) t0 = host[3 * b + 1];
    fprintf(f, "block,smid,start_ns,end_ns\n");
    for (int b = 0; b < grid; b++)
      fprintf(f, "%d,%llu,%llu,%llu\n", b, host[3 * b], host[3 * b + 1] - t0,
              host[3 * b + 2] ? host[3 * b + 2] - t0 : 0);
    fclose(f);
    printf("run %d: %.3f ms -> %s\n", r, ms, path);
#endif
  }
  return 0;
}
