// Probe: does the GPU send every L1 miss to the L2? On the H100 the model's L1 hits agree with
// the counters on matmul, gemm and 2mm (within 1 %), but the L2 read sectors measured are 1/2 to
// 1/3.5 of the L1 misses (validation/results/h100/2026-11-23-placement-replay/). The model
// sends every L1 miss to the L2. This probe reads the same data from several SMs and counts.
//
// One block per SM (the dynamic shared memory allows no second), 1024 threads, each block
// reading a region of R doubles once, coalesced, through L1 (nothing is reused in an L1). The
// region a block reads is chosen from its %smid:
//   own      region smid: no two SMs read the same data (control: L2 reads = L1 misses)
//   all      region 0 for every SM, all starting at its beginning together
//   all_rot  region 0, but SM s starts at offset s * R / #SMs and wraps: the same sectors,
//            never at the same time
//   tpc      region smid / 2: the two SMs of a TPC (smid 2k, 2k + 1) read the same data together
//   tpc_rot  as tpc, the odd SM starting half a region later
//   far      region smid mod (#SMs / 2): SMs s and s + #SMs / 2 read the same data together
//   intra    region smid; warps w and w + 16 of the block read the same addresses together
//   delay_N  as tpc, the odd SM starting N ns later (%globaltimer): how long a miss stays
//            mergeable
//   pair_D   SMs s and s + D (s / D even) read the same data together: which SMs merge
//            (pair_1 is tpc; the H100's dealing cycle in arch/h100.json puts smid 2k and 2k + 1
//            in one TPC and, from its rows, smid 0-15, 16-31, 32-47, 48-63 in one GPC each)
// and a GCC-default matrix product (i on blocks, j on 128 lanes, k sequential) of N = 1024, to
// hold the difference between its L1 misses and L2 reads against the L2 request coalescer's
// (lrc__) counters.
//
// Built and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o /tmp/l2m validation/probes/l2_merge_probe.cu
//   /tmp/l2m [R]                      (times, and whether every block had an SM of its own)
//   ncu --csv --metrics METRICS /tmp/l2m [R] once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>
#include <algorithm>

#include "probe_sm.cuh"
#include "probe_time.cuh"

enum { OWN, ALL, ALL_ROT, TPC, TPC_ROT, FAR, INTRA, PAIR, DELAY, NMODES };
static const char *mode_name[NMODES] = {"own", "all", "all_rot", "tpc", "tpc_rot", "far", "intra", "pair", "delay"};
static const int pair_distances[] = {2, 4, 8, 16, 32};
static const int delays_ns[] = {250, 500, 1000, 2000, 4000, 8000};

__global__ void read_region(const double *__restrict__ a, unsigned long long r, int mode, int nsm,
                            int d, unsigned *smid, double *sink) {
  extern __shared__ double keep_alone[]; // sized to leave room for one block per SM
  const unsigned sm = probe_smid();
  unsigned long long region = sm, start = 0;
  unsigned t = threadIdx.x, stride = blockDim.x;
  switch (mode) {
  case ALL: region = 0; break;
  case ALL_ROT: region = 0; start = (unsigned long long)sm * (r / nsm); break;
  case TPC: region = sm / 2; break;
  case TPC_ROT: region = sm / 2; start = (sm & 1) ? r / 2 : 0; break;
  case FAR: region = sm % (nsm / 2); break;
  case INTRA: t = (threadIdx.x / 32 % 16) * 32 + threadIdx.x % 32; stride = 512; break;
  case PAIR: region = (sm / d) % 2 ? sm - d : sm; break;
  case DELAY:
    region = sm / 2;
    if (sm & 1) {
      const unsigned long long t0 = probe_now();
      while (probe_now() - t0 < (unsigned long long)d) {
      }
    }
    break;
  default: break;
  }
  const double *p = a + region * r;
  double s = 0;
  for (unsigned long long k = t; k < r; k += stride) {
    unsigned long long at = k + start;
    if (at >= r) at -= r;
    s += p[at];
  }
  if (threadIdx.x == 0) smid[blockIdx.x] = sm;
  if (s == 1234.5) { // never true: keeps the loads
    keep_alone[0] = s;
    sink[blockIdx.x] = keep_alone[threadIdx.x];
  }
}

__global__ void matmul_gcc(const double *__restrict__ a, const double *__restrict__ b,
                           double *__restrict__ c, int n) {
  const int i = blockIdx.x;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    double sum = 0;
    for (int k = 0; k < n; k++) sum += a[(size_t)i * n + k] * b[(size_t)k * n + j];
    c[(size_t)i * n + j] = sum;
  }
}

int main(int argc, char **argv) {
  unsigned long long r = argc > 1 && strcmp(argv[1], "once") ? strtoull(argv[1], 0, 10) : 262144; // 2 MB
  const bool once = argc > 1 && !strcmp(argv[argc - 1], "once");
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  const int nsm = prop.multiProcessorCount;
  // more than half of an SM's shared memory: one block per SM
  const int smem = (int)(prop.sharedMemPerMultiprocessor / 2 + 4096);
  cudaFuncSetAttribute(read_region, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  double *a, *sink;
  unsigned *d_sm;
  cudaMalloc(&a, (size_t)nsm * r * sizeof(double));
  cudaMemset(a, 0, (size_t)nsm * r * sizeof(double));
  cudaMalloc(&sink, nsm * sizeof(double));
  cudaMalloc(&d_sm, nsm * sizeof(unsigned));
  printf("gpu,%s,sms,%d,region_doubles,%llu,shared_per_block,%d\n", prop.name, nsm, r, smem);
  printf("mode,time_us,distinct_sms,l1_sectors_expected\n");
  std::vector<std::pair<int, int>> runs; // (mode, d)
  for (int m = 0; m < PAIR; m++) runs.push_back({m, 0});
  for (int d : pair_distances) runs.push_back({PAIR, d});
  for (int d : delays_ns) runs.push_back({DELAY, d});
  for (auto run : runs) {
    const int m = run.first, d = run.second;
    auto launch = [&] { read_region<<<nsm, 1024, smem>>>(a, r, m, nsm, d, d_sm, sink); };
    float us;
    if (once) {
      launch();
      cudaDeviceSynchronize();
      us = 0;
    } else {
      us = probe_time_us(mode_name[m], launch);
    }
    std::vector<unsigned> sm(nsm);
    cudaMemcpy(sm.data(), d_sm, nsm * sizeof(unsigned), cudaMemcpyDeviceToHost);
    std::sort(sm.begin(), sm.end());
    int distinct = (int)(std::unique(sm.begin(), sm.end()) - sm.begin());
    // every block looks up each of its region's sectors once (INTRA: twice)
    unsigned long long sectors = (unsigned long long)nsm * r * 8 / 32 * (m == INTRA ? 2 : 1);
    char name[32];
    snprintf(name, sizeof name, m >= PAIR ? "%s_%d" : "%s", mode_name[m], d);
    printf("%s,%.2f,%d,%llu\n", name, us, distinct, sectors);
  }
  const int n = 1024; // the product reads a's 8 MB and b's 8 MB
  double *c;
  cudaMalloc(&c, (size_t)n * n * sizeof(double));
  auto mm = [&] { matmul_gcc<<<n, 128>>>(a, a + (size_t)n * n, c, n); };
  float us = 0;
  if (once) {
    mm();
    cudaDeviceSynchronize();
  } else {
    us = probe_time_us("matmul_gcc", mm);
  }
  printf("matmul_gcc_1024,%.2f,,\n", us);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "l2_merge_probe: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
