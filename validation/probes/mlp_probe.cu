// Probe: how many loads a thread and an SM keep in flight, which the time model's latency term
// depends on. Built and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o mlp_probe validation/probes/mlp_probe.cu && ./mlp_probe
// Prints one CSV line per kernel and launch: the kernel time in microseconds (CUDA events, min
// of 5 launches after 2 warm-ups), the bytes it moves and the rate.
//
// reduce<U>: each thread sums K doubles A[k*T + t] (coalesced, every load a new L1 line), U
//   loads issued before their sum (U = 1: one load in flight per thread), no store in the loop.
// update<U>: B[k*T + t] = 2 A[k*T + t] + B[k*T + t], unrolled U times; A and B may alias, so a
//   load of iteration k+1 stays behind the store of iteration k. update_restrict<U> declares them
//   __restrict__, so the compiler may hoist the loads.
// stream_one / stream_stride: the same update over N elements, one element per thread (N/256
//   blocks of 256) against a grid-stride loop on one wave of blocks (8 per SM of 256 threads),
//   with and without __restrict__: the per-thread loops that measured 1.6x slower on the H100.
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

template <int U>
__global__ void reduce(const double *A, double *out, long T, int K) {
  long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
  double s = 0;
#pragma unroll 1
  for (int k = 0; k < K; k += U) {
    double v[U];
#pragma unroll
    for (int u = 0; u < U; u++) v[u] = A[(long)(k + u) * T + t];
#pragma unroll
    for (int u = 0; u < U; u++) s += v[u];
  }
  out[t] = s;
}

template <int U>
__global__ void update(const double *A, double *B, long T, int K) {
  long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll U
  for (int k = 0; k < K; k++) {
    long i = (long)k * T + t;
    B[i] = 2.0 * A[i] + B[i];
  }
}

template <int U>
__global__ void update_restrict(const double *__restrict__ A, double *__restrict__ B, long T,
                                int K) {
  long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll U
  for (int k = 0; k < K; k++) {
    long i = (long)k * T + t;
    B[i] = 2.0 * A[i] + B[i];
  }
}

__global__ void stream_one(const double *A, double *B, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) B[i] = 2.0 * A[i] + B[i];
}

__global__ void stream_stride(const double *A, double *B, long n) {
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    B[i] = 2.0 * A[i] + B[i];
}

__global__ void stream_stride_restrict(const double *__restrict__ A, double *__restrict__ B, long n) {
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    B[i] = 2.0 * A[i] + B[i];
}

static void row(const char *kernel, int u, int blocks, int threads, int K, double bytes, float us) {
  printf("%s,%d,%d,%d,%d,%.0f,%.2f,%.1f,%.2f\n", kernel, u, blocks, threads, K, bytes, us,
         bytes / (us * 1e3), us * 1e3 / K);
}

#define REDUCE(U)                                                                              \
  row("reduce", U, blocks, threads, K, bytes,                                                  \
      probe_time_us("mlp_probe", [&] { reduce<U><<<blocks, threads>>>(A, B, T, K); }))
#define UPDATE(KERNEL, U)                                                                      \
  row(#KERNEL, U, blocks, threads, K, 3 * bytes,                                               \
      probe_time_us("mlp_probe", [&] { KERNEL<U><<<blocks, threads>>>(A, B, T, K); }))

int main() {
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  int sms = p.multiProcessorCount;
  const int K = 2048;
  long max_threads = (long)sms * 2048;
  size_t elems = (size_t)max_threads * K;
  double *A, *B;
  if (cudaMalloc(&A, elems * sizeof(double)) != cudaSuccess ||
      cudaMalloc(&B, elems * sizeof(double)) != cudaSuccess) {
    fprintf(stderr, "mlp_probe: cannot allocate 2 x %zu doubles\n", elems);
    return 1;
  }
  cudaMemset(A, 0, elems * sizeof(double));
  cudaMemset(B, 0, elems * sizeof(double));
  printf("# %s, %d SMs, driver/runtime via nvidia-smi\n", p.name, sms);
  printf("kernel,unroll,blocks,threads,K,bytes,time_us,GB_per_s,ns_per_iteration\n");
  const int warps_per_sm[] = {1, 2, 4, 8, 16, 32, 64};
  for (int w : warps_per_sm) {
    int threads = w <= 32 ? 32 * w : 1024, blocks = w <= 32 ? sms : sms * 2;
    long T = (long)blocks * threads;
    double bytes = (double)T * K * sizeof(double);
    REDUCE(1); REDUCE(2); REDUCE(4); REDUCE(8); REDUCE(16); REDUCE(32);
    UPDATE(update, 1); UPDATE(update, 4); UPDATE(update, 16);
    UPDATE(update_restrict, 1); UPDATE(update_restrict, 4); UPDATE(update_restrict, 16);
  }
  long n = 1L << 25; /* 32 Mi doubles: 256 MiB per array */
  double bytes = 3.0 * n * sizeof(double);
  row("stream_one", 1, (int)(n / 256), 256, 1, bytes,
      probe_time_us("mlp_probe", [&] { stream_one<<<n / 256, 256>>>(A, B, n); }));
  const int per_sm[] = {1, 2, 4, 8};
  for (int b : per_sm) {
    row("stream_stride", 1, sms * b, 256, (int)(n / (sms * b * 256L)), bytes,
        probe_time_us("mlp_probe", [&] { stream_stride<<<sms * b, 256>>>(A, B, n); }));
    row("stream_stride_restrict", 1, sms * b, 256, (int)(n / (sms * b * 256L)), bytes,
        probe_time_us("mlp_probe", [&] { stream_stride_restrict<<<sms * b, 256>>>(A, B, n); }));
  }
  return 0;
}
