// How much L2 and DRAM bandwidth k SMs draw, for k from 1 to every SM: the time model divides
// a launch's L2 bytes by the bandwidth its SMs can draw (rank/time.c), and until this probe took
// an SM's share as 1/132 of the L2's (one SM: 37 GB/s on the H100), where the H100 ran
// candidates of 1-4 blocks about 3x faster than that predicted.
//
// Each of k blocks of 1024 threads (one an SM: a grid of fewer blocks than SMs is dealt one an
// SM) streams 16-byte loads that bypass the L1 (ld.global.cg), four in flight a thread:
//   l2:   every block reads the same 16 MB buffer, resident in the L2 (a first launch warms it),
//         4 times; bytes = k x 64 MB;
//   dram: the blocks read disjoint slices of a 4 GB buffer once; bytes = 4 GB;
//   l2_disjoint: each block reads its own 248 KB slice of a 32 MB buffer (L2-resident), 64 times.
// Each block records its SM, to check that the k blocks ran on k distinct SMs. The time is the
// minimum of 5 launches after one not counted (probe_time.cuh).
//
//   nvcc -O3 -arch=sm_90 -o sm_bandwidth_probe validation/probes/sm_bandwidth_probe.cu
//   ./sm_bandwidth_probe > sm_bandwidth.csv
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "probe_sm.cuh"
#include "probe_time.cuh"

__global__ void stream_read(const float4 *buf, unsigned long long per_block, int shared_slice,
                            int passes, float *sink, unsigned *sm_of) {
  const float4 *p = buf + (shared_slice ? 0 : blockIdx.x * per_block);
  float acc = 0;
  for (int pass = 0; pass < passes; pass++)
    for (unsigned long long i = threadIdx.x; i < per_block; i += 4ull * blockDim.x) {
      float4 v[4];
#pragma unroll
      for (int u = 0; u < 4; u++) {
        unsigned long long j = i + (unsigned long long)u * blockDim.x;
        v[u] = j < per_block ? __ldcg(p + j) : make_float4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < 4; u++) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
  if (acc == 1234.5f) *sink = acc;
  if (threadIdx.x == 0) sm_of[blockIdx.x] = probe_smid();
}

static int distinct_sms(const unsigned *sm_of, int k, int nsm) {
  int n = 0;
  char *seen = (char *)calloc((size_t)nsm + 1, 1);
  for (int b = 0; b < k; b++)
    if (sm_of[b] <= (unsigned)nsm && !seen[sm_of[b]]) seen[sm_of[b]] = 1, n++;
  free(seen);
  return n;
}

int main() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    fprintf(stderr, "sm_bandwidth_probe: no GPU\n");
    return 1;
  }
  const int nsm = prop.multiProcessorCount;
  const size_t l2_bytes = (size_t)16 << 20, dram_bytes = (size_t)4 << 30;
  float4 *l2buf, *dbuf;
  float *sink;
  unsigned *sm_of_d, sm_of[1024];
  if (cudaMalloc(&l2buf, l2_bytes) != cudaSuccess || cudaMalloc(&dbuf, dram_bytes) != cudaSuccess ||
      cudaMalloc(&sink, 4) != cudaSuccess || cudaMalloc(&sm_of_d, sizeof sm_of) != cudaSuccess) {
    fprintf(stderr, "sm_bandwidth_probe: cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(l2buf, 0, l2_bytes);
  cudaMemset(dbuf, 0, dram_bytes);
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
  printf("# %s, %d SMs, L2 %d bytes, clock %d kHz\n", prop.name, nsm, prop.l2CacheSize, khz);
  printf("mode,blocks,threads,distinct_sms,bytes,us,GBps,GBps_per_sm\n");
  const int ks[] = {1, 2, 4, 8, 12, 16, 24, 33, 44, 66, 99, 132, 264};
  for (int mode = 0; mode < 3; mode++)
    for (int ki = 0; ki < (int)(sizeof ks / sizeof ks[0]); ki++) {
      const int k = ks[ki], threads = 1024, passes = mode == 0 ? 4 : mode == 1 ? 1 : 64;
      if (mode == 2 && k > nsm) continue; /* the slices fill 32 MB at one block an SM */
      const unsigned long long per_block =
          mode == 0   ? l2_bytes / sizeof(float4)
          : mode == 1 ? dram_bytes / sizeof(float4) / (unsigned long long)k
                      : ((size_t)32 << 20) / sizeof(float4) / (unsigned long long)nsm;
      const char *name = mode == 0 ? "l2" : mode == 1 ? "dram" : "l2_disjoint";
      float us = probe_time_us_each(name, 6, 1, [] {}, [&] {
        stream_read<<<k, threads>>>(mode == 1 ? dbuf : mode == 0 ? l2buf : dbuf, per_block, mode == 0,
                                    passes, sink, sm_of_d);
      });
      if (us < 0) return 1;
      cudaMemcpy(sm_of, sm_of_d, sizeof(unsigned) * k, cudaMemcpyDeviceToHost);
      int used = distinct_sms(sm_of, k, nsm);
      double bytes = (double)k * passes * per_block * sizeof(float4);
      double gbps = bytes / (us * 1e-6) / 1e9;
      printf("%s,%d,%d,%d,%.0f,%.2f,%.1f,%.2f\n", name, k, threads, used, bytes,
             us, gbps, gbps / used);
      fflush(stdout);
    }
  return 0;
}
