// Probe: gathered rows and lanes that share an indirect subscript in groups. With j on the
// lanes, a warp reads on along a row from where a loaded value puts it:
//   rows_perm:   y[i][j] = a[perm[i]][j]   (rows of 2 KB, perm a permutation: each row a whole)
//   rows_offset: y[i][j] = x[col[i] + j]   (col[i] a random element: rows start anywhere)
// and with i on threadIdx.y of 16 x 16 blocks a warp spans two rows i, whose lanes share x[col[i]]
// in two groups of 16:
//   rows_groups: y[i][j] = x[col[i]]
// and x[col[j]], whose lanes share an element across rows i: on 128 x 1 blocks every lane reads
// its own (lane_rows), on 8 x 32 blocks (j on threadIdx.x, i on threadIdx.y) a warp's 4 rows
// share 8 elements (lane_groups), the schedule the model ranks first for it now:
//   lane_rows, lane_groups: y[i][j] = x[col[j]]
// The model took each lane of these as its own sector (32 a warp); now the analyzer keeps the
// subscript's affine rest (8 * j) and the trace lays the lanes that share col[i] out along it
// (traces/trace.c irregular_addrs). N = 4096 rows of M = 256 doubles; x has 2^20 doubles.
// rows_perm, rows_offset and lane_rows: blocks of 128 along j, grid 2 x 4096; rows_groups: 16 x 16,
// grid 16 x 256; lane_groups: 8 x 32, grid 32 x 128.
// Run under Nsight Compute for the counters (see the results' README); alone it checks the
// results and prints the kernels' times (CUDA events, minimum of 7 launches after 2 warm-ups, the
// L2 flushed before each).
//   nvcc -O3 -arch=sm_90 -o /tmp/grp validation/probes/gather_rows_probe.cu && /tmp/grp
// Prints CSV: kernel,time_us
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define N 4096
#define M 256
#define XN (1 << 20)

__global__ void rows_perm(const int *__restrict__ perm, const double *__restrict__ a, double *__restrict__ y) {
  const int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < M) y[(size_t)i * M + j] = a[(size_t)perm[i] * M + j];
}

__global__ void rows_offset(const int *__restrict__ col, const double *__restrict__ x, double *__restrict__ y) {
  const int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < M) y[(size_t)i * M + j] = x[col[i] + j];
}

__global__ void rows_groups(const int *__restrict__ col, const double *__restrict__ x, double *__restrict__ y) {
  const int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N && j < M) y[(size_t)i * M + j] = x[col[i]];
}

__global__ void lane_cols(const int *__restrict__ col, const double *__restrict__ x, double *__restrict__ y) {
  const int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N && j < M) y[(size_t)i * M + j] = x[col[j]];
}

static double hx[XN], ha[N * M], hy[N * M];
static int hperm[N], hcol[N];

// Every element against the host's gather (y poisoned with NaN before the launch).
static int check(const double *y, int which, const char *who) {
  if (cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      const double want = which == 0   ? ha[(size_t)hperm[i] * M + j]
                          : which == 1 ? hx[hcol[i] + j]
                          : which == 2 ? hx[hcol[i]]
                                       : hx[hcol[j]];
      if (hy[(size_t)i * M + j] != want) {
        fprintf(stderr, "gather_rows_probe: %s: y[%d][%d] wrong\n", who, i, j);
        return 1;
      }
    }
  return 0;
}

int main() {
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  srand(4243);
  for (int k = 0; k < XN; k++) hx[k] = (double)rand() / RAND_MAX + 0.25;
  for (int k = 0; k < N * M; k++) ha[k] = (double)rand() / RAND_MAX + 0.5;
  for (int k = 0; k < N; k++) hperm[k] = k;
  for (int k = N - 1; k > 0; k--) { /* Fisher-Yates */
    const int r = rand() % (k + 1), t = hperm[k];
    hperm[k] = hperm[r];
    hperm[r] = t;
  }
  for (int k = 0; k < N; k++) hcol[k] = rand() % (XN - M);
  int *perm, *col;
  double *x, *a, *y;
  if (cudaMalloc(&perm, sizeof hperm) || cudaMalloc(&col, sizeof hcol) || cudaMalloc(&x, sizeof hx) ||
      cudaMalloc(&a, sizeof ha) || cudaMalloc(&y, sizeof hy))
    return 1;
  cudaMemcpy(perm, hperm, sizeof hperm, cudaMemcpyHostToDevice);
  cudaMemcpy(col, hcol, sizeof hcol, cudaMemcpyHostToDevice);
  cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
  cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice);
  const dim3 grid_r((M + 127) / 128, N), block_r(128), grid_g(M / 16, N / 16), block_g(16, 16),
      grid_l(M / 8, N / 32), block_l(8, 32);
  cudaMemset(y, 0xFF, sizeof hy);
  rows_perm<<<grid_r, block_r>>>(perm, a, y);
  if (cudaDeviceSynchronize() != cudaSuccess || check(y, 0, "rows_perm")) return 1;
  cudaMemset(y, 0xFF, sizeof hy);
  rows_offset<<<grid_r, block_r>>>(col, x, y);
  if (cudaDeviceSynchronize() != cudaSuccess || check(y, 1, "rows_offset")) return 1;
  cudaMemset(y, 0xFF, sizeof hy);
  rows_groups<<<grid_g, block_g>>>(col, x, y);
  if (cudaDeviceSynchronize() != cudaSuccess || check(y, 2, "rows_groups")) return 1;
  cudaMemset(y, 0xFF, sizeof hy);
  lane_cols<<<grid_r, block_r>>>(col, x, y);
  if (cudaDeviceSynchronize() != cudaSuccess || check(y, 3, "lane_rows")) return 1;
  cudaMemset(y, 0xFF, sizeof hy);
  lane_cols<<<grid_l, block_l>>>(col, x, y);
  if (cudaDeviceSynchronize() != cudaSuccess || check(y, 3, "lane_groups")) return 1;
  printf("kernel,time_us\n");
  printf("rows_perm,%.2f\n", probe_time_us_each("rows_perm", 7, 2, flush, [&] { rows_perm<<<grid_r, block_r>>>(perm, a, y); }));
  printf("rows_offset,%.2f\n", probe_time_us_each("rows_offset", 7, 2, flush, [&] { rows_offset<<<grid_r, block_r>>>(col, x, y); }));
  printf("rows_groups,%.2f\n", probe_time_us_each("rows_groups", 7, 2, flush, [&] { rows_groups<<<grid_g, block_g>>>(col, x, y); }));
  printf("lane_rows,%.2f\n", probe_time_us_each("lane_rows", 7, 2, flush, [&] { lane_cols<<<grid_r, block_r>>>(col, x, y); }));
  printf("lane_groups,%.2f\n", probe_time_us_each("lane_groups", 7, 2, flush, [&] { lane_cols<<<grid_l, block_l>>>(col, x, y); }));
  return 0;
}
