// Probe: what blocks without work cost when they are interleaved with working ones.
// triangular.c:12 (a[i][j] *= d[i] * d[j], j <= i, 4096^2 doubles) as `i->by j->tx+bx` on the
// full 16x4096 grid of 256-thread blocks ran 52.1 us on the H200 where the model predicted 43.1
// (DRAM-bound, over a dispatch floor of 39 us for 65,536 blocks), and the model's pick among
// near-ties. Nearly half of those blocks (by < 256 bx) have no work, and they are dealt between
// working ones. The same triangle timed six ways:
//   full       the 16x4096 grid as generated (empty blocks interleaved)
//   after      the working blocks first from a table, the empty ones after them (same grid size)
//   compact    the working blocks alone from the table (a 1-D grid of as many)
//   capped     the 16x66 capped grid (i grid-stride over blockIdx.y), the old pick
//   rows       i->bx j->tx, 1,056 blocks of 1,024 threads (grid-stride over i), the measured best
//   nothing    an empty kernel of 65,536 blocks of 256 threads (the dispatch floor)
// CUDA events, the minimum of 7 launches after 2 warm-ups, the L2 flushed before each.
//   nvcc -O3 -arch=sm_90 -o /tmp/iep validation/probes/interleaved_empty_probe.cu && /tmp/iep
// Prints CSV: kernel,threads,blocks,working_blocks,time_us
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define N 4096
#define TX 256
#define GX (N / TX)

__device__ __forceinline__ void tril_cell(double *a, const double *d, int i, int j) {
  if (j <= i) a[(size_t)i * N + j] *= d[i] * d[j];
}

__global__ void tril_full(double *__restrict__ a, const double *__restrict__ d) {
  tril_cell(a, d, blockIdx.y, blockIdx.x * TX + threadIdx.x);
}

// table[k] = bx + GX * by of the k-th working block; blocks past `working` return at once
__global__ void tril_table(double *__restrict__ a, const double *__restrict__ d, const int *table,
                           int working) {
  if (blockIdx.x >= (unsigned)working) return;
  const int t = table[blockIdx.x];
  tril_cell(a, d, t / GX, (t % GX) * TX + threadIdx.x);
}

__global__ void tril_capped(double *__restrict__ a, const double *__restrict__ d) {
  for (int i = blockIdx.y; i < N; i += gridDim.y) tril_cell(a, d, i, blockIdx.x * TX + threadIdx.x);
}

__global__ void tril_rows(double *__restrict__ a, const double *__restrict__ d) {
  for (int i = blockIdx.x; i < N; i += gridDim.x)
    for (int j = threadIdx.x; j <= i; j += blockDim.x) a[(size_t)i * N + j] *= d[i] * d[j];
}

__global__ void nothing(void) {}

int main() {
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  double *a, *d;
  int *table;
  std::vector<int> host;
  for (int by = 0; by < N; by++)
    for (int bx = 0; bx < GX; bx++)
      if (bx * TX <= by) host.push_back(bx + GX * by); /* the order the full grid deals them */
  const int working = (int)host.size(), all = GX * N;
  if (cudaMalloc(&a, (size_t)N * N * sizeof(double)) != cudaSuccess ||
      cudaMalloc(&d, N * sizeof(double)) != cudaSuccess ||
      cudaMalloc(&table, host.size() * sizeof(int)) != cudaSuccess) {
    fprintf(stderr, "interleaved_empty_probe: out of device memory\n");
    return 1;
  }
  cudaMemset(a, 0, (size_t)N * N * sizeof(double));
  cudaMemset(d, 0, N * sizeof(double));
  cudaMemcpy(table, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice);
  printf("kernel,threads,blocks,working_blocks,time_us\n");
  float us;
  us = probe_time_us_each("full", 7, 2, flush, [&] { tril_full<<<dim3(GX, N), TX>>>(a, d); });
  printf("full,%d,%d,%d,%.2f\n", TX, all, working, us);
  us = probe_time_us_each("after", 7, 2, flush,
                          [&] { tril_table<<<all, TX>>>(a, d, table, working); });
  printf("after,%d,%d,%d,%.2f\n", TX, all, working, us);
  us = probe_time_us_each("compact", 7, 2, flush,
                          [&] { tril_table<<<working, TX>>>(a, d, table, working); });
  printf("compact,%d,%d,%d,%.2f\n", TX, working, working, us);
  us = probe_time_us_each("capped", 7, 2, flush, [&] { tril_capped<<<dim3(GX, 66), TX>>>(a, d); });
  printf("capped,%d,%d,%d,%.2f\n", TX, GX * 66, GX * 66, us);
  us = probe_time_us_each("rows", 7, 2, flush, [&] { tril_rows<<<1056, 1024>>>(a, d); });
  printf("rows,%d,%d,%d,%.2f\n", 1024, 1056, 1056, us);
  us = probe_time_us_each("nothing", 7, 2, flush, [&] { nothing<<<all, TX>>>(); });
  printf("nothing,%d,%d,0,%.2f\n", TX, all, us);
  us = probe_time_us_each("nothing", 7, 2, flush, [&] { nothing<<<working, TX>>>(); });
  printf("nothing,%d,%d,0,%.2f\n", TX, working, us);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "interleaved_empty_probe: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
