// Which stream makes collapse4.c:16's x->tx+bz candidates read 45 % more from DRAM than their
// x->tx+by twins (97 against 67 MB in the thirteenth run, validation/results/h100/
// 2026-11-27-drift-run13/), where the model gives both 67 MB. The fill-partner probe
// (2026-11-27-fill-partner-probe/) showed that a 64-byte fill's partner survives some 24 MB of
// traffic, and these partners come about 8 MB later, so it is not that the L2 loses them.
//
// The nest: out[((b*CH + c)*H + y)*W + x] = scale[c] * in[same] + shift[c], floats, 16 x 64
// planes of 128 x 128 (64 MB each array), blocks of 8 x 8 x 4 threads (x, y, plane), grid
// 256 x 16 x 16: the plane group on blockIdx.x, and x and y on blockIdx.y and .z, one way
// (`xz`: x on z, the candidate that read 97 MB) or the other (`xy`: x on y). Each order runs
//   both:  the nest as written
//   read:  the loads only (their sum goes to one word)
//   write: the stores only (of a value computed from the index)
//   contig: the loads as written, the stores to out in the order of the blocks and their
//           threads (block b, thread t at b * 256 + t: whole lines, written once each)
// so that ncu's dram__bytes_read / dram__bytes_write of each say which stream costs the extra
// reads, and timing says what it costs. The L2 is flushed before each launch.
//
// Built and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o /tmp/bop validation/probes/block_order_probe.cu
//   /tmp/bop                                       (times, one CSV line per kernel)
//   ncu --csv --metrics METRICS /tmp/bop           (counters, same order)
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "probe_time.cuh"

enum { NB = 16, CH = 64, H = 128, W = 128 };
enum { BOTH, READ, WRITE, CONTIG };

template <int X_ON_Z, int MODE>
__global__ void batchnorm(const float *in, const float *scale, const float *shift, float *out,
                          float *sink) {
  const int bc = blockIdx.x * 4 + threadIdx.z;
  const int y = (X_ON_Z ? blockIdx.y : blockIdx.z) * 8 + threadIdx.y;
  const int x = (X_ON_Z ? blockIdx.z : blockIdx.y) * 8 + threadIdx.x;
  const int c = bc % CH;
  const size_t i = ((size_t)bc * H + y) * W + x;
  if (MODE == WRITE) {
    out[i] = (float)i;
  } else {
    float v = scale[c] * in[i] + shift[c];
    if (MODE == BOTH) out[i] = v;
    else if (MODE == CONTIG)
      out[((size_t)(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * 256 +
          (threadIdx.z * 8 + threadIdx.y) * 8 + threadIdx.x] = v;
    else if (v == 1234.5f) *sink = v;
  }
}

int main() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    fprintf(stderr, "block_order_probe: no GPU\n");
    return 1;
  }
  const size_t n = (size_t)NB * CH * H * W;
  float *in, *out, *scale, *shift, *sink;
  probe_flusher flush(prop);
  if (!flush.ok || cudaMalloc(&in, n * 4) != cudaSuccess || cudaMalloc(&out, n * 4) != cudaSuccess ||
      cudaMalloc(&scale, CH * 4) != cudaSuccess || cudaMalloc(&shift, CH * 4) != cudaSuccess ||
      cudaMalloc(&sink, 4) != cudaSuccess) {
    fprintf(stderr, "block_order_probe: out of memory\n");
    return 1;
  }
  cudaMemset(in, 0, n * 4);
  cudaMemset(out, 0, n * 4);
  cudaMemset(scale, 0, CH * 4);
  cudaMemset(shift, 0, CH * 4);
  const dim3 block(8, 8, 4), grid(NB * CH / 4, 16, 16);
  struct {
    const char *order, *mode;
    void (*k)(const float *, const float *, const float *, float *, float *);
  } runs[] = {{"xz", "both", batchnorm<1, BOTH>},  {"xy", "both", batchnorm<0, BOTH>},
              {"xz", "read", batchnorm<1, READ>},  {"xy", "read", batchnorm<0, READ>},
              {"xz", "write", batchnorm<1, WRITE>}, {"xy", "write", batchnorm<0, WRITE>},
              {"xz", "contig", batchnorm<1, CONTIG>}, {"xy", "contig", batchnorm<0, CONTIG>}};
  printf("kernel,gpu,order,mode,us\n");
  for (int r = 0; r < (int)(sizeof runs / sizeof runs[0]); r++) {
    float us = probe_time_us_each(runs[r].mode, 6, 1, [&] { flush(); },
                                  [&] { runs[r].k<<<grid, block>>>(in, scale, shift, out, sink); });
    if (us < 0) return 1;
    printf("%d,%s,%s,%s,%.2f\n", r, prop.name, runs[r].order, runs[r].mode, us);
  }
  return 0;
}
