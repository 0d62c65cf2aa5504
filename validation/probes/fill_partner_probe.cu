// How long a 64-byte fill's unrequested sector stays in the L2. A read miss brings the whole
// 64-byte block (arch/h100.json l2_fill_bytes) and the model installs the partner sector as it
// does the requested one: most recently used, kept until the LRU order pushes it out of 50 MB.
// collapse4.c:16's 8x8x4 blocks with x on blockIdx.z read each 64-byte block's second half
// 4,096 blocks (about 8 MB of traffic) after its first, and the H100 read 97 MB from DRAM where
// the model says 67 MB (validation/results/h100/2026-11-27-drift-run13/); with x on blockIdx.y,
// 256 blocks apart, it read 67 MB.
//
// One trial: an L2 flush (a read of twice the L2); `first` reads sector 0 of every 64-byte
// block of a region of R bytes; `filler` streams D bytes of other data (read, or written; or,
// with a third argument of 3, `write1`: one 32-byte sector written in each 128-byte line of a
// span of D bytes, what partly written lines cost the L2);
// `second` reads either the partners (sector 1 of every block: `partner`) or sector 0 again
// (`same`: when a requested sector is lost, for comparison). The counters of `second`, under
// ncu (--cache-control none, so that the L2 keeps what the earlier kernels left), say how many
// of its sectors hit in the L2: lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum over
// lts__t_sectors_srcunit_tex_op_read.sum, and dram__bytes_read.sum. The loads bypass the L1
// (ld.global.cg), so every sector is an L2 read.
//
// Built and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o /tmp/fpp validation/probes/fill_partner_probe.cu
//   /tmp/fpp [R_MB [3]]          (the trials, one CSV line each, with second's time in us)
//   ncu --csv --cache-control none -k regex:second --metrics METRICS /tmp/fpp [R_MB]
// The ncu rows of `second` come in the order of the trials the plain run prints.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "probe_time.cuh"

// sector `which` (0 or 1) of each of the region's nblocks 64-byte blocks: 8 floats a sector,
// one a thread
__global__ void first(const float *region, unsigned long long nblocks, float *sink) {
  unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (t >= nblocks * 8) return;
  float v = __ldcg(region + (t / 8) * 16 + t % 8);
  if (v == 1234.5f) *sink = v;
}

__global__ void second(const float *region, unsigned long long nblocks, int which, float *sink) {
  unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (t >= nblocks * 8) return;
  float v = __ldcg(region + (t / 8) * 16 + 8 * which + t % 8);
  if (v == 1234.5f) *sink = v;
}

__global__ void filler_read(const float4 *p, unsigned long long n, float *sink) {
  float s = 0;
  for (unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; k < n;
       k += (unsigned long long)gridDim.x * blockDim.x) {
    float4 v = __ldcg(p + k);
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 1234.5f) *sink = s;
}

// one sector (8 floats) of each 128-byte line (32 floats) of the span of n float4s
__global__ void filler_write1(float *p, unsigned long long n) {
  for (unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; k < n;
       k += (unsigned long long)gridDim.x * blockDim.x)
    p[(k / 8) * 32 + k % 8] = (float)k;
}

__global__ void filler_write(float4 *p, unsigned long long n) {
  for (unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; k < n;
       k += (unsigned long long)gridDim.x * blockDim.x)
    p[k] = make_float4((float)k, 1, 2, 3);
}

int main(int argc, char **argv) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    fprintf(stderr, "fill_partner_probe: no GPU\n");
    return 1;
  }
  const double region_mb = argc > 1 ? atof(argv[1]) : 4;
  const unsigned long long region_bytes = (unsigned long long)(region_mb * (1 << 20)) / 64 * 64;
  const unsigned long long nblocks = region_bytes / 64;
  static const double fill_mb[] = {0, 0.5, 1, 2, 4, 6, 8, 12, 16, 24, 32, 40, 48, 64};
  const int nfill = (int)(sizeof fill_mb / sizeof fill_mb[0]);
  const unsigned long long filler_bytes = (unsigned long long)64 << 20;
  float *region, *filler, *sink;
  probe_flusher flush(prop);
  if (!flush.ok || cudaMalloc(&region, region_bytes) != cudaSuccess ||
      cudaMalloc(&filler, filler_bytes) != cudaSuccess || cudaMalloc(&sink, 4) != cudaSuccess) {
    fprintf(stderr, "fill_partner_probe: out of memory\n");
    return 1;
  }
  cudaMemset(region, 0, region_bytes);
  cudaMemset(filler, 0, filler_bytes);
  const int threads = 256;
  const unsigned grid = (unsigned)((nblocks * 8 + threads - 1) / threads);
  printf("trial,gpu,region_mb,filler,filler_mb,second,second_us\n");
  int trial = 0;
  const int modes = argc > 2 && atoi(argv[2]) == 3 ? 3 : 2;
  static const char *mode_name[] = {"read", "write", "write1"};
  for (int writes = 0; writes < modes; writes++)
    for (int which = 1; which >= 0; which--)
      for (int f = 0; f < nfill; f++) {
        unsigned long long n4 = (unsigned long long)(fill_mb[f] * (1 << 20)) / 16;
        float us = probe_time_us_each("second", 1, 0,
            [&] {
              flush();
              first<<<grid, threads>>>(region, nblocks, sink);
              if (n4 && writes == 2) filler_write1<<<1056, 256>>>(filler, n4);
              else if (n4 && writes) filler_write<<<1056, 256>>>((float4 *)filler, n4);
              else if (n4) filler_read<<<1056, 256>>>((const float4 *)filler, n4, sink);
            },
            [&] { second<<<grid, threads>>>(region, nblocks, which, sink); });
        if (us < 0) return 1;
        printf("%d,%s,%.2f,%s,%.1f,%s,%.2f\n", trial++, prop.name, region_bytes / 1048576.0,
               mode_name[writes], fill_mb[f], which ? "partner" : "same", us);
      }
  return 0;
}
