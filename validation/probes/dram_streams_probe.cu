// What DRAM bandwidth a kernel draws when each thread reads n arrays at its own index (n
// streams of lines in flight at once), and whether it matters that the arrays lie a power of two
// apart. Himeno (examples/himeno.c: 13 arrays read, one written, each 64 MB, allocated one
// after another) ran at 2.4-2.5 TB/s from DRAM on the H200 where the 1- and 2-array stencils
// drew 3.5-4.0, with its counters (L1, L2, DRAM bytes) within 3 % of the model's.
//
// Each case: n arrays of E elements read (float or double), the sum written to one more array
// (or, "read only", kept in a register); thread i does element i, blocks of 256 threads, one
// grid covering E. The arrays are carved from one allocation at a spacing of E elements (a power
// of two: 64 or 128 MB, as cudaMalloc lays out equal arrays) or of E elements plus 4,352 bytes
// (not a power of two). The time is the minimum of 5 launches after one not counted, each after
// an L2 flush (probe_time.cuh); bytes are (n + 1) E x size (n E x size read only).
//
//   nvcc -O3 -arch=sm_90 -o dram_streams_probe validation/probes/dram_streams_probe.cu
//   ./dram_streams_probe > dram_streams.csv
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

enum { max_streams = 24 };

template <typename T> struct stream_args {
  const T *in[max_streams];
};

template <typename T, int N, bool WRITE>
__global__ void read_streams(stream_args<T> a, T *out, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  T s = 0;
#pragma unroll
  for (int k = 0; k < N; k++) s += a.in[k][i];
  if (WRITE) out[i] = s;
  else if (s == (T)1234.5) out[0] = s;
}

template <typename T, int N, bool WRITE>
static void run_case(const char *type, char *base, size_t spacing, unsigned long long elems,
                     const probe_flusher &flush, int pad) {
  stream_args<T> a;
  for (int k = 0; k < N; k++) a.in[k] = (const T *)(base + (size_t)k * spacing);
  T *out = (T *)(base + (size_t)N * spacing);
  const int threads = 256;
  const unsigned long long blocks = (elems + threads - 1) / threads;
  float us = probe_time_us_each("dram_streams_probe", 6, 1, flush, [&] {
    read_streams<T, N, WRITE><<<(unsigned)blocks, threads>>>(a, out, elems);
  });
  if (us < 0) return;
  double bytes = (double)(N + (WRITE ? 1 : 0)) * (double)elems * sizeof(T);
  printf("%s,%d,%s,%s,%zu,%.0f,%.2f,%.1f\n", type, N, WRITE ? "write" : "read_only",
         pad ? "padded" : "power_of_two", spacing, bytes, us, bytes / (us * 1e-6) / 1e9);
  fflush(stdout);
}

template <typename T, bool WRITE>
static void run_all(const char *type, char *base, unsigned long long elems, const probe_flusher &f) {
  for (int pad = 0; pad < 2; pad++) {
    const size_t spacing = elems * sizeof(T) + (pad ? 4352 : 0);
    run_case<T, 1, WRITE>(type, base, spacing, elems, f, pad);
    run_case<T, 2, WRITE>(type, base, spacing, elems, f, pad);
    run_case<T, 3, WRITE>(type, base, spacing, elems, f, pad);
    run_case<T, 4, WRITE>(type, base, spacing, elems, f, pad);
    run_case<T, 6, WRITE>(type, base, spacing, elems, f, pad);
    run_case<T, 8, WRITE>(type, base, spacing, elems, f, pad);
    run_case<T, 10, WRITE>(type, base, spacing, elems, f, pad);
    run_case<T, 13, WRITE>(type, base, spacing, elems, f, pad);
    run_case<T, 16, WRITE>(type, base, spacing, elems, f, pad);
    run_case<T, 24, WRITE>(type, base, spacing, elems, f, pad);
  }
}

int main() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    fprintf(stderr, "dram_streams_probe: no GPU\n");
    return 1;
  }
  prop = probe_device();
  const unsigned long long elems = 1ull << 24; /* 64 MB of floats, 128 MB of doubles an array */
  const size_t bytes = (size_t)(max_streams + 1) * (elems * sizeof(double) + 4352);
  char *base;
  if (cudaMalloc(&base, bytes) != cudaSuccess) {
    fprintf(stderr, "dram_streams_probe: cudaMalloc of %zu bytes failed\n", bytes);
    return 1;
  }
  cudaMemset(base, 0, bytes);
  probe_flusher flush(prop);
  if (!flush.ok) {
    fprintf(stderr, "dram_streams_probe: cannot allocate the L2 flush buffer\n");
    return 1;
  }
  printf("type,streams,mode,spacing,spacing_bytes,bytes,us,GBps\n");
  run_all<float, true>("float", base, elems, flush);
  run_all<double, true>("double", base, elems, flush);
  run_all<float, false>("float", base, elems, flush);
  run_all<double, false>("double", base, elems, flush);
  return 0;
}
