// Timing shared by the timing probes (mlp_probe.cu, pitch_probe.cu, partial_probe.cu,
// partial_gap_probe.cu, empty_block_probe.cu, l2_merge_probe.cu).
#ifndef PROBE_TIME_CUH
#define PROBE_TIME_CUH
#include <cstdio>
#include <cuda_runtime.h>

// The kernel time of launch(), in microseconds: CUDA events around each of `reps` launches,
// before() run ahead of each one outside the events (an L2 flush, a counter reset), the first
// `warmups` not counted, the minimum of the others. -1, with a message naming `who`, if a
// launch failed.
template <typename B, typename F>
static float probe_time_us_each(const char *who, int reps, int warmups, B before, F launch) {
  static cudaEvent_t ev0, ev1;
  if (!ev0) {
    cudaEventCreate(&ev0);
    cudaEventCreate(&ev1);
  }
  float best = 1e30f;
  for (int r = 0; r < reps; r++) {
    before();
    cudaEventRecord(ev0);
    launch();
    cudaEventRecord(ev1);
    cudaEventSynchronize(ev1);
    float ms;
    cudaEventElapsedTime(&ms, ev0, ev1);
    if (r >= warmups && ms < best) best = ms;
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "%s: %s\n", who, cudaGetErrorString(e));
    return -1;
  }
  return best * 1000.0f;
}

// Device 0's properties, after printing the line every probe's CSV starts with: its name,
// ECC and SM count.
static cudaDeviceProp probe_device() {
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("# %s, ECC %s, %d SMs\n", prop.name, prop.ECCEnabled ? "on" : "off", prop.multiProcessorCount);
  return prop;
}

// Reads n words of p (twice the L2 or more: the L2 holds none of the kernel's data afterwards),
// the harness's flush before a timed launch. sink keeps the reads.
__global__ void flush_read(const unsigned *p, unsigned long long n, unsigned *sink) {
  unsigned s = 0;
  for (unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; k < n;
       k += (unsigned long long)gridDim.x * blockDim.x)
    s += p[k];
  if (s == 0x12345678u) *sink = s;
}

// A buffer of twice the L2 and a read of it: probe_flusher f(prop); ... f(); before a timed
// launch (the harness's flush). Allocation failure leaves ok false.
struct probe_flusher {
  unsigned *buf = nullptr, *sink = nullptr;
  unsigned long long words = 0;
  bool ok = false;
  explicit probe_flusher(const cudaDeviceProp &prop) {
    const size_t bytes = 2 * (size_t)prop.l2CacheSize;
    ok = cudaMalloc(&buf, bytes) == cudaSuccess && cudaMalloc(&sink, 4) == cudaSuccess;
    if (ok) cudaMemset(buf, 0x5a, bytes);
    words = bytes / 4;
  }
  void operator()() const { flush_read<<<1024, 256>>>(buf, words, sink); }
};

// 7 launches, the first 2 warm-ups, nothing before each.
template <typename F>
static float probe_time_us(const char *who, F launch) {
  return probe_time_us_each(who, 7, 2, [] {}, launch);
}

// The cycles of launch() as its slowest part reports them: each launch writes n %clock64 spans
// to cycles_d (one a block or a warp); the longest of each of `reps` launches, the first not
// counted (it warms the caches), the minimum of the others. -1, with a message naming `who`, if
// a launch failed or n exceeds probe_max_spans.
enum { probe_max_spans = 1024 };
template <typename F>
static long long probe_cycles(const char *who, int reps, const long long *cycles_d, int n, F launch) {
  long long cyc[probe_max_spans], best = -1;
  if (n < 1 || n > probe_max_spans) {
    fprintf(stderr, "%s: %d spans, at most %d\n", who, n, (int)probe_max_spans);
    return -1;
  }
  for (int rep = 0; rep < reps; rep++) {
    launch();
    if (cudaDeviceSynchronize() != cudaSuccess) {
      fprintf(stderr, "%s: %s\n", who, cudaGetErrorString(cudaGetLastError()));
      return -1;
    }
    cudaMemcpy(cyc, cycles_d, sizeof(long long) * n, cudaMemcpyDeviceToHost);
    long long worst = 0;
    for (int i = 0; i < n; i++) worst = cyc[i] > worst ? cyc[i] : worst;
    if (rep > 0 && (best < 0 || worst < best)) best = worst;
  }
  return best;
}
#endif
