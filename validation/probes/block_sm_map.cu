// Probe: which SM runs which block, and when. The model deals blocks to SMs round-robin (block b
// on SM b mod #SMs, DESIGN.md, dissertation Eq. 7.1-7.2), so blocks b, b + #SMs, ... share an
// L1. Built and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o block_sm_map validation/probes/block_sm_map.cu && ./block_sm_map OUTDIR [BxT ...]
// (BxT: B blocks of T threads; without any, the configurations of stop 18 below)
// For each configuration (blocks x threads, each block spinning for SPIN_NS) it writes
// OUTDIR/blocks_B_T.csv (block, smid, start_ns, end_ns; times from %globaltimer, relative to the
// first start) and prints one summary line: how many blocks run on the SM the model gives them
// (b mod #SMs, after mapping the first wave's SMs to the model's), on the same SM as block
// b - #SMs, and as block b - 1, and how many blocks were resident at once on the busiest SM.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>
#include <algorithm>

#include "probe_sm.cuh"

#define SPIN_NS 20000ull

__global__ void probe(unsigned *smid, unsigned long long *start, unsigned long long *end) {
  __shared__ unsigned long long t0;
  if (threadIdx.x == 0) {
    smid[blockIdx.x] = probe_smid();
    t0 = probe_now();
    start[blockIdx.x] = t0;
  }
  __syncthreads();
  while (probe_now() - t0 < SPIN_NS) {
  }
  __syncthreads();
  if (threadIdx.x == 0) end[blockIdx.x] = probe_now();
}

static int run(const char *dir, int blocks, int threads, int nsm) {
  unsigned *d_sm;
  unsigned long long *d_s, *d_e;
  cudaMalloc(&d_sm, blocks * sizeof(unsigned));
  cudaMalloc(&d_s, blocks * sizeof(unsigned long long));
  cudaMalloc(&d_e, blocks * sizeof(unsigned long long));
  probe<<<blocks, threads>>>(d_sm, d_s, d_e); /* warm-up */
  cudaDeviceSynchronize();
  probe<<<blocks, threads>>>(d_sm, d_s, d_e);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    fprintf(stderr, "launch %d x %d failed: %s\n", blocks, threads, cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  std::vector<unsigned> sm(blocks);
  std::vector<unsigned long long> s(blocks), e(blocks);
  cudaMemcpy(sm.data(), d_sm, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost);
  cudaMemcpy(s.data(), d_s, blocks * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
  cudaMemcpy(e.data(), d_e, blocks * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
  cudaFree(d_sm);
  cudaFree(d_s);
  cudaFree(d_e);
  unsigned long long t0 = *std::min_element(s.begin(), s.end());
  char path[512];
  snprintf(path, sizeof path, "%s/blocks_%d_%d.csv", dir, blocks, threads);
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  fprintf(f, "block,smid,start_ns,end_ns\n");
  for (int b = 0; b < blocks; b++) fprintf(f, "%d,%u,%llu,%llu\n", b, sm[b], s[b] - t0, e[b] - t0);
  fclose(f);
  /* the model's SM of block b is b mod nsm; name the SMs by the first block each ran */
  std::vector<int> model_of(1024, -1);
  for (int b = 0; b < blocks && b < nsm; b++)
    if (sm[b] < 1024 && model_of[sm[b]] < 0) model_of[sm[b]] = b;
  int as_model = 0, as_b_minus_s = 0, as_prev = 0;
  for (int b = 0; b < blocks; b++) {
    as_model += sm[b] < 1024 && model_of[sm[b]] == b % nsm;
    as_b_minus_s += b >= nsm && sm[b] == sm[b - nsm];
    as_prev += b >= 1 && sm[b] == sm[b - 1];
  }
  /* most blocks resident at once on one SM: sweep each SM's start/end events */
  int most = 0;
  for (unsigned id = 0; id < 1024; id++) {
    std::vector<std::pair<unsigned long long, int>> ev;
    for (int b = 0; b < blocks; b++)
      if (sm[b] == id) ev.push_back({s[b], 1}), ev.push_back({e[b], -1});
    std::sort(ev.begin(), ev.end(), [](auto a, auto c) { return a.first < c.first || (a.first == c.first && a.second < c.second); });
    int cur = 0;
    for (auto &x : ev) most = std::max(most, cur += x.second);
  }
  printf("blocks %d threads %d: on the model's SM %d (%.1f %%), same SM as b-%d %d, as b-1 %d, "
         "most resident on one SM %d\n", blocks, threads, as_model, 100.0 * as_model / blocks, nsm,
         as_b_minus_s, as_prev, most);
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
  int nsm = p.multiProcessorCount;
  /* 2mm.c:17 and matmul's GCC default (32-thread blocks, 8448 = 64 an SM), 2mm.c:17's i->tx
   * j->bx (900 x 1024: 6 waves of 2 and a last one), a capped grid (264 x 1024), the nvc default
   * shape (1024 x 128), GCC's 16896 x 1024, and 1056 x 128 */
  std::vector<std::pair<int, int>> cfg = {{8448, 32}, {900, 1024}, {264, 1024}, {1024, 128},
                                           {16896, 1024}, {1056, 128}, {132, 256}};
  if (argc > 2) cfg.clear();
  for (int i = 2; i < argc; i++) {
    int b = 0, t = 0;
    char tail;
    if (sscanf(argv[i], "%dx%d%c", &b, &t, &tail) != 2 || b < 1 || t < 1 || t > 1024) {
      fprintf(stderr, "block_sm_map: '%s' is not BLOCKSxTHREADS (threads 1-1024)\n", argv[i]);
      return 2;
    }
    cfg.push_back({b, t});
  }
  int rc = 0;
  for (auto &c : cfg) rc |= run(dir, c.first, c.second, nsm);
  return rc;
}
