// The L1 load kernel shared by l1_throughput_probe.cu and l1_span_probe.cu.
#ifndef PROBE_L1_CUH
#define PROBE_L1_CUH
#include <cuda_runtime.h>

// Every warp loads words of buf that stay in the L1 (ld.global.ca): lane l the word
// (base + u * u_step + l * lane_stride_words) & mask for u = 0..3, 4 independent loads in flight a
// thread, `iters` times, base moving by it_step words an iteration from (a spread of warps and
// blocks, 256-byte aligned) + first_words. Each block reads %clock64 at its start and end (after
// __syncthreads) into cycles[blockIdx.x]. The address arithmetic (a multiply-add and a mask a
// load) holds an SM near 2.1 cycles a request whatever the L1 does.
template <typename T>
__global__ void l1_masked_loads(const T *buf, unsigned mask, unsigned first_words,
                                unsigned lane_stride_words, unsigned u_step, unsigned it_step,
                                int iters, T *sink, long long *cycles) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned base = (warp * 977u + blockIdx.x * 131u) * (256u / sizeof(T)) + first_words;
  T acc = 0;
  __syncthreads();
  long long t0 = clock64();
  for (int it = 0; it < iters; it++) {
    T v[4];
#pragma unroll
    for (int u = 0; u < 4; u++) v[u] = __ldca(buf + ((base + u * u_step + lane * lane_stride_words) & mask));
#pragma unroll
    for (int u = 0; u < 4; u++) acc += v[u];
    base += it_step;
  }
  __syncthreads();
  long long t1 = clock64();
  if (acc == (T)1234.5) *sink = acc;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}
#endif
