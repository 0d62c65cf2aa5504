// Probe: imperfect gang/vector nests, as OpenACC compilers run them and as the model now takes
// them (analyzer/imperfect.c): the outer loop i on the gangs (blockIdx.x, a grid-stride loop when
// the grid is smaller), and optionally on a thread dimension (workers); the inner loop j on the
// other thread dimension; the statements around j run once per i, by one lane; a reduction over j
// folds through shared memory. Three nests:
//   mvt1      s = x[i]; for j: s += A[i][j] * y[j]; x[i] = s      (mvt.c's first nest, N = 4000)
//   mvt2      s = x[i]; for j: s += A[j][i] * y[j]; x[i] = s      (mvt.c's second nest)
//   rowscale  si = s[i]; for j: x[i][j] += si * y[i][j]          (N = 4096, no reduction)
// Each under several launch configurations: block (bx, by) with i on threadIdx.y ("i->ty+bx
// j->tx", by = 1: "i->bx j->tx") or on threadIdx.x ("i->tx+bx j->ty"), and a grid.
//   nvcc -O3 -arch=sm_90 -o /tmp/ip validation/probes/imperfect_probe.cu && /tmp/ip
// With PROBE_CHECK_ONLY set, only the checked launches run (for Nsight Compute's counters).
// Prints CSV: nest,mapping,block_x,block_y,grid,time_us,max_rel_err (CUDA events, the minimum of 7
// launches after 2 warm-ups, the L2 flushed before each; the result of one launch checked against
// the host).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "probe_time.cuh"

enum { MVT1, MVT2, ROWSCALE };

// i_on_x: i on threadIdx.x (j on threadIdx.y), else i on threadIdx.y (j on threadIdx.x).
template <int NEST>
__global__ void imperfect_kernel(int n, const double *__restrict__ a, const double *__restrict__ y,
                                 double *__restrict__ x, const double *__restrict__ s,
                                 double *__restrict__ out, int i_on_x) {
  extern __shared__ double part[];
  const int iw = i_on_x ? blockDim.x : blockDim.y, jw = i_on_x ? blockDim.y : blockDim.x;
  const int il = i_on_x ? threadIdx.x : threadIdx.y, jl = i_on_x ? threadIdx.y : threadIdx.x;
  const int slot = threadIdx.y * blockDim.x + threadIdx.x;
  for (long base = (long)blockIdx.x * iw; base < n; base += (long)gridDim.x * iw) {
    const long i = base + il;
    const bool active = i < n;
    if (NEST == ROWSCALE) {
      if (!active) continue; /* no barrier below */
      const double si = s[i];
      for (long j = jl; j < n; j += jw) out[i * n + j] += si * y[i * n + j];
      continue;
    }
    double acc = 0;
    if (active)
      for (long j = jl; j < n; j += jw) acc += (NEST == MVT1 ? a[i * n + j] : a[j * n + i]) * y[j];
    part[slot] = acc;
    for (int w = jw / 2; w > 0; w /= 2) {
      __syncthreads();
      if (jl < w) part[slot] += part[i_on_x ? slot + w * blockDim.x : slot + w];
    }
    __syncthreads();
    if (active && jl == 0) x[i] = x[i] + part[slot];
    __syncthreads();
  }
}

#define CHECK_CUDA(x)                                                                          \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "imperfect_probe: %s: %s\n", #x, cudaGetErrorString(e_));               \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

struct config {
  int nest, n, bx, by, i_on_x;
  long grid;
};

static const config configs[] = {
    /* mvt1: the compilers' forms (GCC: 32 x 32 in 16,896 gangs; gang/vector(32) in 8,448),
     * vector(128) a gang a row, the model's 2_1 picks, a worker form */
    {MVT1, 4000, 32, 32, 0, 16896}, {MVT1, 4000, 32, 1, 0, 8448}, {MVT1, 4000, 128, 1, 0, 4000},
    {MVT1, 4000, 256, 1, 0, 1056},  {MVT1, 4000, 1024, 1, 0, 528}, {MVT1, 4000, 32, 4, 0, 1000},
    /* mvt2: the same, and i on threadIdx.x (the model's pick, j on threadIdx.y) */
    {MVT2, 4000, 32, 32, 0, 16896}, {MVT2, 4000, 32, 1, 0, 8448}, {MVT2, 4000, 128, 1, 0, 4000},
    {MVT2, 4000, 64, 4, 0, 1000},   {MVT2, 4000, 8, 32, 1, 500},   {MVT2, 4000, 16, 16, 1, 250},
    {MVT2, 4000, 32, 16, 1, 125},
    /* rowscale */
    {ROWSCALE, 4096, 256, 1, 0, 4096}, {ROWSCALE, 4096, 128, 1, 0, 4096},
    {ROWSCALE, 4096, 32, 1, 0, 8448},  {ROWSCALE, 4096, 64, 4, 0, 1024},
    {ROWSCALE, 4096, 1024, 1, 0, 1056},
};

static const char *nest_name(int k) { return k == MVT1 ? "mvt1" : k == MVT2 ? "mvt2" : "rowscale"; }

static void launch(const config &c, const double *a, const double *y, double *x, const double *s,
                   double *out) {
  dim3 block(c.bx, c.by), grid((unsigned)c.grid);
  size_t shm = sizeof(double) * c.bx * c.by;
  if (c.nest == MVT1) imperfect_kernel<MVT1><<<grid, block, shm>>>(c.n, a, y, x, s, out, c.i_on_x);
  else if (c.nest == MVT2) imperfect_kernel<MVT2><<<grid, block, shm>>>(c.n, a, y, x, s, out, c.i_on_x);
  else imperfect_kernel<ROWSCALE><<<grid, block>>>(c.n, a, a, x, s, out, c.i_on_x); /* y: an n x n matrix */
}

int main() {
  cudaDeviceProp prop = probe_device();
  probe_flusher flush(prop);
  if (!flush.ok) return 1;
  const int nmax = 4096;
  const size_t nn = (size_t)nmax * nmax;
  double *h_a = (double *)malloc(nn * sizeof(double)), *h_y = (double *)malloc(nmax * sizeof(double));
  double *h_x = (double *)malloc(nmax * sizeof(double)), *h_out = (double *)malloc(nn * sizeof(double));
  double *h_ref = (double *)malloc(nmax * sizeof(double));
  if (!h_a || !h_y || !h_x || !h_out || !h_ref) return 1;
  for (size_t k = 0; k < nn; k++) h_a[k] = (double)(k % 1000) / 1000.0;
  for (int k = 0; k < nmax; k++) h_y[k] = 1.0 + (k % 7) / 7.0, h_x[k] = k % 5;
  double *a, *y, *x, *s, *out;
  CHECK_CUDA(cudaMalloc(&a, nn * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&out, nn * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&y, nmax * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&x, nmax * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&s, nmax * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(a, h_a, nn * sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(y, h_y, nmax * sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(s, h_y, nmax * sizeof(double), cudaMemcpyHostToDevice));
  printf("nest,mapping,block_x,block_y,grid,time_us,max_rel_err\n");
  for (const config &c : configs) {
    const int n = c.n;
    /* one checked launch from a known state */
    CHECK_CUDA(cudaMemcpy(x, h_x, nmax * sizeof(double), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(out, h_a, nn * sizeof(double), cudaMemcpyHostToDevice));
    launch(c, a, y, x, s, out);
    CHECK_CUDA(cudaDeviceSynchronize());
    double err = 0;
    if (c.nest == ROWSCALE) {
      CHECK_CUDA(cudaMemcpy(h_out, out, (size_t)n * n * sizeof(double), cudaMemcpyDeviceToHost));
      for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
          double want = h_a[i * n + j] + h_y[i] * h_a[i * n + j];
          err = fmax(err, fabs(h_out[i * n + j] - want) / fmax(1.0, fabs(want)));
        }
    } else {
      CHECK_CUDA(cudaMemcpy(h_ref, x, n * sizeof(double), cudaMemcpyDeviceToHost));
      for (long i = 0; i < n; i++) {
        double want = h_x[i];
        for (long j = 0; j < n; j++) want += (c.nest == MVT1 ? h_a[i * n + j] : h_a[j * n + i]) * h_y[j];
        err = fmax(err, fabs(h_ref[i] - want) / fmax(1.0, fabs(want)));
      }
    }
    if (getenv("PROBE_CHECK_ONLY")) { /* under Nsight Compute: the checked launch alone */
      printf("%s,%s,%d,%d,%ld,,%.1e\n", nest_name(c.nest),
             c.i_on_x ? "i->tx+bx j->ty" : c.by > 1 ? "i->ty+bx j->tx" : "i->bx j->tx", c.bx, c.by,
             c.grid, err);
      continue;
    }
    float us = probe_time_us_each(nest_name(c.nest), 7, 2, flush,
                                  [&] { launch(c, a, y, x, s, out); });
    printf("%s,%s,%d,%d,%ld,%.2f,%.1e\n", nest_name(c.nest),
           c.i_on_x ? "i->tx+bx j->ty" : c.by > 1 ? "i->ty+bx j->tx" : "i->bx j->tx", c.bx, c.by,
           c.grid, us, err);
  }
  return 0;
}
