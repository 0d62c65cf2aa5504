// Probe: rows reached through a table of row pointers (double **a, a[i][j] = b[j]), the form the
// analyzer now models as one array of m-element rows (analyzer/extract.c, sp_rows_addr) where it
// used to take each lane as its own sector. The model's pick for that nest (1000 x 1000, i on
// blockIdx.y, j on threadIdx.x + blockIdx.x, blocks of 256) run three ways:
//   rows_one   the rows of one allocation, one after another (what the model assumes);
//   rows_apart each row its own cudaMalloc (rows allocated apart);
//   flat       a plain 2-D array a[i * M + j], no row pointers;
//   rows_cols  rows_one's rows with i and j swapped between the dimensions (the model's
//              tx+bx|by candidate): each warp stores into 32 rows.
// Run under Nsight Compute for the counters (see the results' README); alone it checks the
// results and prints the kernels' times (CUDA events, minimum of 7 launches after 2 warm-ups,
// the L2 flushed before each).
//   nvcc -O3 -arch=sm_90 -o /tmp/rpp validation/probes/row_pointers_probe.cu && /tmp/rpp
// Prints CSV: kernel,time_us
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define N 1000
#define M 1000

__global__ void rows_kernel(double *const *__restrict__ a, const double *__restrict__ b) {
  const int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < M) a[i][j] = b[j];
}

// the same nest interchanged (i on threadIdx.x + blockIdx.x, j on blockIdx.y): a warp's 32 stores
// go to 32 rows
__global__ void rows_cols_kernel(double *const *__restrict__ a, const double *__restrict__ b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < N) a[i][j] = b[j];
}

__global__ void flat_kernel(double *__restrict__ a, const double *__restrict__ b) {
  const int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < M) a[(size_t)i * M + j] = b[j];
}

#define CHECK_CUDA(x)                                                                          \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "row_pointers_probe: %s: %s\n", #x, cudaGetErrorString(e_));             \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

// Every element of the rows equals b[j] (the rows poisoned with -1 before the launch).
static int check_rows(double *const *rows, const double *hb, const char *who) {
  static double host[M];
  for (int i = 0; i < N; i++) {
    if (cudaMemcpy(host, rows[i], sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
    for (int j = 0; j < M; j++)
      if (host[j] != hb[j]) {
        fprintf(stderr, "row_pointers_probe: %s: a[%d][%d] = %g, not %g\n", who, i, j, host[j], hb[j]);
        return 1;
      }
  }
  return 0;
}

int main() {
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  static double hb[M];
  srand(12345);
  for (int j = 0; j < M; j++) hb[j] = (double)rand() / RAND_MAX + 0.5;
  double *b, *one, **table_one, **table_apart;
  static double *apart[N], *one_rows[N];
  CHECK_CUDA(cudaMalloc(&b, M * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(b, hb, M * sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMalloc(&one, (size_t)N * M * sizeof(double)));
  for (int i = 0; i < N; i++) {
    one_rows[i] = one + (size_t)i * M;
    CHECK_CUDA(cudaMalloc(&apart[i], M * sizeof(double)));
  }
  CHECK_CUDA(cudaMalloc(&table_one, N * sizeof(double *)));
  CHECK_CUDA(cudaMalloc(&table_apart, N * sizeof(double *)));
  CHECK_CUDA(cudaMemcpy(table_one, one_rows, N * sizeof(double *), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(table_apart, apart, N * sizeof(double *), cudaMemcpyHostToDevice));
  const dim3 grid((M + 255) / 256, N), block(256);

  CHECK_CUDA(cudaMemset(one, 0xFF, (size_t)N * M * sizeof(double)));
  for (int i = 0; i < N; i++) CHECK_CUDA(cudaMemset(apart[i], 0xFF, M * sizeof(double)));
  rows_kernel<<<grid, block>>>(table_one, b);
  rows_kernel<<<grid, block>>>(table_apart, b);
  CHECK_CUDA(cudaDeviceSynchronize());
  if (check_rows(one_rows, hb, "rows_one") || check_rows(apart, hb, "rows_apart")) return 1;
  CHECK_CUDA(cudaMemset(one, 0xFF, (size_t)N * M * sizeof(double)));
  flat_kernel<<<grid, block>>>(one, b);
  CHECK_CUDA(cudaDeviceSynchronize());
  if (check_rows(one_rows, hb, "flat")) return 1;
  CHECK_CUDA(cudaMemset(one, 0xFF, (size_t)N * M * sizeof(double)));
  const dim3 grid_cols((N + 255) / 256, M);
  rows_cols_kernel<<<grid_cols, block>>>(table_one, b);
  CHECK_CUDA(cudaDeviceSynchronize());
  if (check_rows(one_rows, hb, "rows_cols")) return 1;

  printf("kernel,time_us\n");
  printf("rows_one,%.2f\n",
         probe_time_us_each("rows_one", 7, 2, flush, [&] { rows_kernel<<<grid, block>>>(table_one, b); }));
  printf("rows_apart,%.2f\n",
         probe_time_us_each("rows_apart", 7, 2, flush, [&] { rows_kernel<<<grid, block>>>(table_apart, b); }));
  printf("flat,%.2f\n",
         probe_time_us_each("flat", 7, 2, flush, [&] { flat_kernel<<<grid, block>>>(one, b); }));
  printf("rows_cols,%.2f\n", probe_time_us_each("rows_cols", 7, 2, flush, [&] {
           rows_cols_kernel<<<grid_cols, block>>>(table_one, b);
         }));
  return 0;
}
