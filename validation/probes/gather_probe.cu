// Probe: indirect subscripts that a warp's lanes share or not. y[i][j] = x[col[i]] with i on
// blockIdx.y and j on the lanes reads one element of x a warp (col[i] is the same in every lane);
// y[i][j] = x[col[j]] reads 32 elements spread over x. The model took every lane of an indirect
// access as its own sector until it knew which loops the subscript depends on
// (sp_ref.irregular_loops, traces/trace.c irregular_addrs). 1000 x 1000 iterations, blocks of 256,
// grid 4 x 1000; x has 2^20 doubles, col random in [0, 2^20).
// Run under Nsight Compute for the counters (see the results' README); alone it checks the
// results and prints the kernels' times (CUDA events, minimum of 7 launches after 2 warm-ups, the
// L2 flushed before each).
//   nvcc -O3 -arch=sm_90 -o /tmp/gp validation/probes/gather_probe.cu && /tmp/gp
// Prints CSV: kernel,time_us
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define N 1000
#define M 1000
#define XN (1 << 20)

__global__ void gather_row(const int *__restrict__ col, const double *__restrict__ x, double *__restrict__ y) {
  const int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < M) y[(size_t)i * M + j] = x[col[i]];
}

__global__ void gather_lane(const int *__restrict__ col, const double *__restrict__ x, double *__restrict__ y) {
  const int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < M) y[(size_t)i * M + j] = x[col[j]];
}

static double hx[XN], hy[N * M];
static int hcol[N > M ? N : M];

// Every element against the host's gather (y poisoned with NaN before the launch).
static int check(const double *y, bool by_row, const char *who) {
  if (cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      if (hy[(size_t)i * M + j] != hx[hcol[by_row ? i : j]]) {
        fprintf(stderr, "gather_probe: %s: y[%d][%d] wrong\n", who, i, j);
        return 1;
      }
  return 0;
}

int main() {
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  srand(4242);
  for (int k = 0; k < XN; k++) hx[k] = (double)rand() / RAND_MAX + 0.25;
  for (int k = 0; k < (N > M ? N : M); k++) hcol[k] = rand() % XN;
  int *col;
  double *x, *y;
  if (cudaMalloc(&col, sizeof hcol) || cudaMalloc(&x, sizeof hx) || cudaMalloc(&y, sizeof hy)) return 1;
  cudaMemcpy(col, hcol, sizeof hcol, cudaMemcpyHostToDevice);
  cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
  const dim3 grid((M + 255) / 256, N), block(256);
  cudaMemset(y, 0xFF, sizeof hy);
  gather_row<<<grid, block>>>(col, x, y);
  if (cudaDeviceSynchronize() != cudaSuccess || check(y, true, "gather_row")) return 1;
  cudaMemset(y, 0xFF, sizeof hy);
  gather_lane<<<grid, block>>>(col, x, y);
  if (cudaDeviceSynchronize() != cudaSuccess || check(y, false, "gather_lane")) return 1;
  printf("kernel,time_us\n");
  printf("gather_row,%.2f\n", probe_time_us_each("gather_row", 7, 2, flush, [&] { gather_row<<<grid, block>>>(col, x, y); }));
  printf("gather_lane,%.2f\n", probe_time_us_each("gather_lane", 7, 2, flush, [&] { gather_lane<<<grid, block>>>(col, x, y); }));
  return 0;
}
