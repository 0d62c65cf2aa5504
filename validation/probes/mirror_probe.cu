// Why two mirror mappings of 2mm.c:26 (D[i][j] = beta D[i][j] + sum_k tmp[i][k] C[k][j], 800 x
// 1200 x 900 doubles) that the model predicts equal (499 us, the same counts) ran at 642 and
// 504 us on the H100 (validation/results/h100/2026-11-27-l1-miss-run14/), with the same L1 hit
// rate and DRAM bytes and fewer L2 reads for the slower one. Both use blocks of 16 x 16 threads
// (a warp: 2 rows i, 16 columns j) and 1,050 blocks, every one resident at once:
//   ij: i on threadIdx.y + blockIdx.x (50), j on threadIdx.x + blockIdx.y (21, grid-stride)
//   ji: i on threadIdx.y + blockIdx.y (14, grid-stride), j on threadIdx.x + blockIdx.x (75)
// the kernels as schedvalidate generates them. Each runs timed (min of 7, the L2 flushed before
// each) and once recording every block's SM and its start and end (%globaltimer), so that the
// per-block and per-SM spans say whether the slower one is slower everywhere or waits on a few
// SMs or blocks. The counters come from ncu on the same binary (see the results' README).
//
// Built and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o /tmp/mirror validation/probes/mirror_probe.cu
//   /tmp/mirror OUTDIR        (summary on stdout; OUTDIR/blocks_ij.csv, blocks_ji.csv)
//   ncu -k regex:'mm26|gen26' --metrics ... /tmp/mirror OUTDIR once   (each kernel once:
//   ij, ji, then gen26's ij and ji, then gen26_unrolled's, then gen26_if's)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#include "probe_sm.cuh"
#include "probe_time.cuh"

enum { NI = 800, NJ = 900, NL = 1200 };

template <bool I_ON_X, bool RECORD>
__global__ void mm26(double *D, const double *tmp, const double *C, double beta, unsigned *smid,
                     unsigned long long *start, unsigned long long *end) {
  const unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  const bool lead = threadIdx.x == 0 && threadIdx.y == 0;
  if (RECORD && lead) {
    smid[b] = probe_smid();
    start[b] = probe_now();
  }
  const int i0 = (I_ON_X ? blockIdx.x : blockIdx.y) * blockDim.y + threadIdx.y;
  const int di = I_ON_X ? NI : blockDim.y * gridDim.y;
  const int j0 = (I_ON_X ? blockIdx.y : blockIdx.x) * blockDim.x + threadIdx.x;
  const int dj = I_ON_X ? blockDim.x * gridDim.y : NL;
  for (int i = i0; i < NI; i += di)
    for (int j = j0; j < NL; j += dj) {
      double s = D[(size_t)i * NL + j] * beta;
      for (int k = 0; k < NJ; k++) s += tmp[(size_t)i * NJ + k] * C[(size_t)k * NL + j];
      D[(size_t)i * NL + j] = s;
    }
  if (RECORD) {
    __syncthreads();
    if (lead) end[b] = probe_now();
  }
}

// The same two nests as schedvalidate's plan writes them (schedpredict --emit-plan, 2mm.c:26,
// candidates i->ty+bx j->tx+by on 50x21 and i->ty+by j->tx+bx on 75x14): grid-stride loops on
// both indices, int indices into 2-D array views, the index loops not unrolled (SP_LANE_LOOP,
// gen26); gen26_unrolled is the same without that pragma.
#define NL_ 1200
#define NJ_ 900
#define SP_PRAGMA(x) _Pragma(#x)
#define MIRROR_GEN(NAME, LANE_LOOP)                                                              \
  template <bool I_ON_X>                                                                         \
  __global__ void NAME(double *sp_D, double *sp_tmp, double *sp_C, double beta) {               \
    double(*D)[NL_] = (double(*)[NL_])sp_D;                                                      \
    double(*tmp)[NJ_] = (double(*)[NJ_])sp_tmp;                                                  \
    double(*C)[NL_] = (double(*)[NL_])sp_C;                                                      \
    const long long bi = I_ON_X ? blockIdx.x : blockIdx.y, bj = I_ON_X ? blockIdx.y : blockIdx.x; \
    const long long gi = I_ON_X ? gridDim.x : gridDim.y, gj = I_ON_X ? gridDim.y : gridDim.x;     \
    LANE_LOOP                                                                                    \
    for (int i = (int)(bi * blockDim.y + threadIdx.y); i < NI; i += (int)(blockDim.y * gi)) {    \
      LANE_LOOP                                                                                  \
      for (int j = (int)(bj * blockDim.x + threadIdx.x); j < NL; j += (int)(blockDim.x * gj)) {  \
        double s = D[i][j] * beta;                                                               \
        for (int k = 0; k < NJ; k++) s += tmp[i][k] * C[k][j];                                   \
        D[i][j] = s;                                                                             \
      }                                                                                          \
    }                                                                                            \
  }
MIRROR_GEN(gen26, SP_PRAGMA(unroll 1))
MIRROR_GEN(gen26_unrolled, )

// gen26 with the index whose grid covers its loop (i in ij, j in ji: one round) as a guard
// instead of a grid-stride loop; the other index's loop as in gen26.
template <bool I_ON_X>
__global__ void gen26_if(double *sp_D, double *sp_tmp, double *sp_C, double beta) {
  double(*D)[NL_] = (double(*)[NL_])sp_D;
  double(*tmp)[NJ_] = (double(*)[NJ_])sp_tmp;
  double(*C)[NL_] = (double(*)[NL_])sp_C;
  if (I_ON_X) {
    const int i = (int)((long long)blockIdx.x * blockDim.y + threadIdx.y);
    if (i < NI) {
#pragma unroll 1
      for (int j = (int)((long long)blockIdx.y * blockDim.x + threadIdx.x); j < NL;
           j += (int)((long long)blockDim.x * gridDim.y)) {
        double s = D[i][j] * beta;
        for (int k = 0; k < NJ; k++) s += tmp[i][k] * C[k][j];
        D[i][j] = s;
      }
    }
  } else {
    const int j = (int)((long long)blockIdx.x * blockDim.x + threadIdx.x);
    if (j < NL) {
#pragma unroll 1
      for (int i = (int)((long long)blockIdx.y * blockDim.y + threadIdx.y); i < NI;
           i += (int)((long long)blockDim.y * gridDim.y)) {
        double s = D[i][j] * beta;
        for (int k = 0; k < NJ; k++) s += tmp[i][k] * C[k][j];
        D[i][j] = s;
      }
    }
  }
}

static void fill(double *d, size_t n, double scale) {
  std::vector<double> h(n);
  for (size_t k = 0; k < n; k++) h[k] = scale * (double)(k % 97);
  cudaMemcpy(d, h.data(), n * sizeof(double), cudaMemcpyHostToDevice);
}

template <bool I_ON_X>
static int measure(const char *name, const char *outdir, dim3 grid, double *D, const double *tmp,
                   const double *C, const probe_flusher &flush, unsigned *smid,
                   unsigned long long *start, unsigned long long *end) {
  const dim3 block(16, 16);
  const unsigned nb = grid.x * grid.y;
  float us = probe_time_us_each(name, 7, 2, [&] { flush(); },
                                [&] { mm26<I_ON_X, false><<<grid, block>>>(D, tmp, C, 0.5, 0, 0, 0); });
  flush();
  mm26<I_ON_X, true><<<grid, block>>>(D, tmp, C, 0.5, smid, start, end);
  if (us < 0 || cudaDeviceSynchronize() != cudaSuccess) {
    fprintf(stderr, "mirror_probe: %s failed\n", name);
    return 1;
  }
  std::vector<unsigned> sm(nb);
  std::vector<unsigned long long> t0(nb), t1(nb);
  cudaMemcpy(sm.data(), smid, nb * sizeof(unsigned), cudaMemcpyDeviceToHost);
  cudaMemcpy(t0.data(), start, nb * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
  cudaMemcpy(t1.data(), end, nb * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
  unsigned long long first = *std::min_element(t0.begin(), t0.end());
  char path[1024];
  snprintf(path, sizeof path, "%s/blocks_%s.csv", outdir, name);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "mirror_probe: cannot write %s\n", path);
    return 1;
  }
  fprintf(f, "block,bx,by,rounds,smid,start_ns,end_ns\n");
  // rounds of the grid-stride loop: ij strides j over 75 tiles in 21, ji strides i over 50 in 14
  std::vector<double> dur(nb), per_sm(1024, 0.0), end_sm(1024, 0.0);
  std::vector<int> blocks_sm(1024, 0);
  double dur4 = 0, dur3 = 0;
  int n4 = 0, n3 = 0;
  for (unsigned b = 0; b < nb; b++) {
    unsigned bx = b % grid.x, by = b / grid.x;
    int tiles = I_ON_X ? 75 : 50, stride = (int)grid.y;
    int rounds = (tiles - (int)by + stride - 1) / stride;
    dur[b] = (double)(t1[b] - t0[b]);
    if (rounds == 4) dur4 += dur[b], n4++;
    else dur3 += dur[b], n3++;
    per_sm[sm[b] % 1024] += dur[b];
    end_sm[sm[b] % 1024] = std::max(end_sm[sm[b] % 1024], (double)(t1[b] - first));
    blocks_sm[sm[b] % 1024]++;
    fprintf(f, "%u,%u,%u,%d,%u,%llu,%llu\n", b, bx, by, rounds, sm[b], t0[b] - first, t1[b] - first);
  }
  fclose(f);
  std::vector<double> sorted = dur;
  std::sort(sorted.begin(), sorted.end());
  int sms = 0, most = 0;
  double last = 0, ends = 0;
  for (int s = 0; s < 1024; s++)
    if (blocks_sm[s]) sms++, most = std::max(most, blocks_sm[s]), last = std::max(last, end_sm[s]), ends += end_sm[s];
  printf("%s grid %ux%u: %.1f us timed; recorded run: %d SMs, at most %d blocks an SM; block span "
         "min %.1f median %.1f max %.1f us; 4-round blocks (%d) %.1f us, 3-round (%d) %.1f us; "
         "SMs end on average at %.1f us, the last at %.1f us\n",
         name, grid.x, grid.y, us, sms, most, sorted[0] / 1e3, sorted[nb / 2] / 1e3, sorted[nb - 1] / 1e3,
         n4, n4 ? dur4 / n4 / 1e3 : 0, n3, n3 ? dur3 / n3 / 1e3 : 0, ends / sms / 1e3, last / 1e3);
  return 0;
}

int main(int argc, char **argv) {
  const char *outdir = argc > 1 ? argv[1] : ".";
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    fprintf(stderr, "mirror_probe: no GPU\n");
    return 1;
  }
  double *D, *tmp, *C;
  unsigned *smid;
  unsigned long long *start, *end;
  if (cudaMalloc(&D, sizeof(double) * NI * NL) != cudaSuccess ||
      cudaMalloc(&tmp, sizeof(double) * NI * NJ) != cudaSuccess ||
      cudaMalloc(&C, sizeof(double) * NJ * NL) != cudaSuccess ||
      cudaMalloc(&smid, 4096 * sizeof(unsigned)) != cudaSuccess ||
      cudaMalloc(&start, 4096 * sizeof(unsigned long long)) != cudaSuccess ||
      cudaMalloc(&end, 4096 * sizeof(unsigned long long)) != cudaSuccess) {
    fprintf(stderr, "mirror_probe: out of GPU memory\n");
    return 1;
  }
  fill(D, (size_t)NI * NL, 1e-3);
  fill(tmp, (size_t)NI * NJ, 1e-2);
  fill(C, (size_t)NJ * NL, 1e-2);
  probe_flusher flush(prop);
  if (!flush.ok) return 1;
  if (argc > 2) { // "once": each kernel once after a flush, for ncu
    flush();
    mm26<true, false><<<dim3(50, 21), dim3(16, 16)>>>(D, tmp, C, 0.5, 0, 0, 0);
    flush();
    mm26<false, false><<<dim3(75, 14), dim3(16, 16)>>>(D, tmp, C, 0.5, 0, 0, 0);
    flush();
    gen26<true><<<dim3(50, 21), dim3(16, 16)>>>(D, tmp, C, 0.5);
    flush();
    gen26<false><<<dim3(75, 14), dim3(16, 16)>>>(D, tmp, C, 0.5);
    flush();
    gen26_unrolled<true><<<dim3(50, 21), dim3(16, 16)>>>(D, tmp, C, 0.5);
    flush();
    gen26_unrolled<false><<<dim3(75, 14), dim3(16, 16)>>>(D, tmp, C, 0.5);
    flush();
    gen26_if<true><<<dim3(50, 21), dim3(16, 16)>>>(D, tmp, C, 0.5);
    flush();
    gen26_if<false><<<dim3(75, 14), dim3(16, 16)>>>(D, tmp, C, 0.5);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
  }
  printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  int rc = measure<true>("ij", outdir, dim3(50, 21), D, tmp, C, flush, smid, start, end);
  rc |= measure<false>("ji", outdir, dim3(75, 14), D, tmp, C, flush, smid, start, end);
  const dim3 block(16, 16);
  float gij = probe_time_us_each("gen ij", 7, 2, [&] { flush(); },
                                 [&] { gen26<true><<<dim3(50, 21), block>>>(D, tmp, C, 0.5); });
  float gji = probe_time_us_each("gen ji", 7, 2, [&] { flush(); },
                                 [&] { gen26<false><<<dim3(75, 14), block>>>(D, tmp, C, 0.5); });
  float uij = probe_time_us_each("unrolled ij", 7, 2, [&] { flush(); },
                                 [&] { gen26_unrolled<true><<<dim3(50, 21), block>>>(D, tmp, C, 0.5); });
  float uji = probe_time_us_each("unrolled ji", 7, 2, [&] { flush(); },
                                 [&] { gen26_unrolled<false><<<dim3(75, 14), block>>>(D, tmp, C, 0.5); });
  float fij = probe_time_us_each("guard ij", 7, 2, [&] { flush(); },
                                 [&] { gen26_if<true><<<dim3(50, 21), block>>>(D, tmp, C, 0.5); });
  float fji = probe_time_us_each("guard ji", 7, 2, [&] { flush(); },
                                 [&] { gen26_if<false><<<dim3(75, 14), block>>>(D, tmp, C, 0.5); });
  printf("as generated: ij %.1f us, ji %.1f us; without unroll 1: ij %.1f us, ji %.1f us; covering "
         "index as a guard: ij %.1f us, ji %.1f us\n", gij, gji, uij, uji, fij, fji);
  return rc || gij < 0 || gji < 0 || uij < 0 || uji < 0 || fij < 0 || fji < 0;
}
