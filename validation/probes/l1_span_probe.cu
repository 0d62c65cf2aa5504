// What a warp's contiguous load costs the L1 on hits when it spans two 128-byte lines: the time
// model charges an SM's L1 one cycle a line (SP_L1_LINES_PER_CYCLE, from
// l1_throughput_probe.cu, whose requests all start on a line), so a warp's 32 floats that start
// 4 bytes into a line (a stencil's a[k+1], a loop from 1) cost two cycles, as 32 doubles do.
// This probe asks whether they do, or whether the L1 serves the 128 bytes in one.
//
// Every warp of 2 blocks of 1024 threads an SM (64 warps) loads words of a buffer that stays in
// the L1 (ld.global.ca), lane l at `offset` bytes + l x `stride` words past a 256-byte
// boundary, in a lean kernel (an LDG and an add per load, 16 loads an iteration) and, for
// unit strides, in l1_throughput_probe's kernel (address arithmetic and a mask per load, 4 in
// flight), which the SM's instruction issue bounds near 2 cycles a request. Each block reads
// %clock64 at its start and end (after __syncthreads); the cycles are the longest block's, the
// SM's clock. Each row also gives two models' cycles a request: the 128-byte lines touched,
// and a data array of 32 banks of 4-byte words (the most words any bank holds). The last
// cases are warps of 2-D blocks: rows of 2-16 lanes on consecutive words, rows a pitch apart
// (32,832 bytes: xreuse.c's rows of 4,104 doubles, 16 words off the banks' period; 32,768:
// on it). Then some of the same shapes again over a window the L1 cannot hold and the L2 does
// (rows "miss"): every request misses the L1.
//
//   nvcc -O3 -arch=sm_90 -o l1_span_probe validation/probes/l1_span_probe.cu
//   ./l1_span_probe > l1_span.csv
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_l1.cuh"
#include "probe_time.cuh"

/* The loads with as few instructions as a load can take: 16 loads an iteration at
 * constant offsets from one pointer (an LDG each, with its offset in the instruction), summed
 * in 4 independent chains, so that the SM's issue rate (4 warp instructions a cycle) does not
 * bound the L1 before its own rate does. Lane l reads word offset + (l / group) * pitch +
 * (l % group) * stride (group 32: a row of lanes `stride` words apart; fewer: rows of `group`
 * lanes, `pitch` words apart, as a warp of a 2-D block over a row-major array); each load is
 * `span` words past the last; the pointer walks a window that stays in the L1. */
template <typename T>
__global__ void l1_span_lean(const T *buf, unsigned offset_words, unsigned stride_words,
                             unsigned group, unsigned pitch_words, unsigned span, unsigned window,
                             int iters, T *sink, long long *cycles) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned lane_words = lane / group * pitch_words + lane % group * stride_words;
  unsigned start = (unsigned)((unsigned long long)(warp * 977u + blockIdx.x * 131u) * span % window);
  const T *p = buf + start + offset_words + lane_words;
  T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  __syncthreads();
  long long t0 = clock64();
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int u = 0; u < 16; u += 4) {
      a0 += __ldca(p + (u + 0) * span);
      a1 += __ldca(p + (u + 1) * span);
      a2 += __ldca(p + (u + 2) * span);
      a3 += __ldca(p + (u + 3) * span);
    }
    start = start + 16 * span >= window ? 0 : start + 16 * span;
    p = buf + start + offset_words + lane_words;
  }
  __syncthreads();
  long long t1 = clock64();
  T acc = a0 + a1 + a2 + a3;
  if (acc == (T)1234.5) *sink = acc;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

/* Cycles a request takes in a model of the L1's data array as 32 banks of 4-byte words (word w
 * in bank w mod 32, one word a bank a cycle, lanes reading the same word served together), and
 * in the 128-byte lines it touches (one a cycle, the time model's rule until now). */
static void request_models(unsigned word_bytes, unsigned offset_bytes, unsigned stride_words,
                           unsigned group, unsigned pitch_words, int *bank_cycles, int *lines) {
  int per_bank[32] = {0}, nlines = 0;
  long long seen[64];
  for (unsigned l = 0; l < 32; l++) {
    unsigned long long byte =
        offset_bytes + ((unsigned long long)(l / group) * pitch_words + l % group * stride_words) * word_bytes;
    for (unsigned w = 0; w < word_bytes / 4; w++) per_bank[(byte / 4 + w) % 32]++;
    long long line = (long long)(byte / 128), last = (long long)((byte + word_bytes - 1) / 128);
    for (long long q = line; q <= last; q++) {
      bool dup = false;
      for (int i = 0; i < nlines; i++) dup |= seen[i] == q;
      if (!dup && nlines < 64) seen[nlines++] = q;
    }
  }
  int worst = 0;
  for (int b = 0; b < 32; b++) worst = per_bank[b] > worst ? per_bank[b] : worst;
  *bank_cycles = worst;
  *lines = nlines;
}

/* miss: a window far larger than the L1 (8 MB, or 1 MB along each row of lanes), which the L2
 * holds after the first launch: every request misses the L1 and hits the L2 */
template <typename T>
static int run_case(int nsm, unsigned offset_bytes, unsigned stride_words, unsigned group = 32,
                    unsigned pitch_bytes = 0, bool miss = false) {
  const int blocks = 2 * nsm, threads = 1024, iters = 1024;
  const unsigned per256 = 256 / sizeof(T), pitch_words = pitch_bytes / sizeof(T);
  unsigned span = group * stride_words;
  span = (span + per256 - 1) / per256 * per256;
  /* rows of lanes: each load a span further along the rows, a window of 16 spans (every row's
   * 16 x span stays in the L1) */
  const unsigned window = miss ? (group < 32 ? 1u << 20 : 8u << 20) / sizeof(T)
                         : group < 32 ? 16 * span : 64 * 1024 / sizeof(T);
  const size_t words = (size_t)(32 / group) * pitch_words + window + 16 * (size_t)span + per256;
  T *buf, *sink;
  long long *cyc_d;
  if (cudaMalloc(&buf, words * sizeof(T)) != cudaSuccess ||
      cudaMalloc(&sink, sizeof(T)) != cudaSuccess ||
      cudaMalloc(&cyc_d, sizeof(long long) * blocks) != cudaSuccess) {
    fprintf(stderr, "l1_span_probe: cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(buf, 0, words * sizeof(T));
  const unsigned ow = offset_bytes / sizeof(T);
  long long best = -1;
  if (stride_words == 1 && group == 32 && !miss)
    best = probe_cycles("l1_span_probe", 4, cyc_d, blocks, [&] {
      l1_masked_loads<T><<<blocks, threads>>>(buf, window - 1, ow, 1, 8 * per256, 23 * per256,
                                              4 * iters, sink, cyc_d);
    });
  long long lean = probe_cycles("l1_span_probe", 4, cyc_d, blocks, [&] {
    l1_span_lean<T><<<blocks, threads>>>(buf, ow, stride_words, group, pitch_words, span, window,
                                         iters, sink, cyc_d);
  });
  cudaFree(buf);
  cudaFree(sink);
  cudaFree(cyc_d);
  if (lean < 0) return 1;
  int banks, lines;
  request_models(sizeof(T), offset_bytes, stride_words, group, pitch_words, &banks, &lines);
  const double requests = 64.0 * iters * 16; /* per SM, either kernel */
  printf("%s,%d,%u,%u,%u,%u,%d,%d,%lld,%.4f,%lld,%.4f\n", miss ? "miss" : "hit", (int)sizeof(T),
         offset_bytes, stride_words * (unsigned)sizeof(T), group, pitch_bytes, lines, banks, best,
         best < 0 ? 0.0 : best / requests, lean, lean / requests);
  fflush(stdout);
  return 0;
}

int main() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    fprintf(stderr, "l1_span_probe: no GPU\n");
    return 1;
  }
  const int nsm = prop.multiProcessorCount;
  printf("# %s, %d SMs, 2 blocks of 1024 threads an SM, 4096 iterations of 4 loads\n", prop.name, nsm);
  printf("l1,word_bytes,offset_bytes,lane_stride_bytes,lanes_per_row,row_pitch_bytes,"
         "lines_per_request,bank_cycles_per_request,masked_cycles,masked_cycles_per_request,"
         "lean_cycles,lean_cycles_per_request\n");
  int rc = 0;
  const unsigned fcases[][2] = {{0, 1}, {4, 1}, {64, 1}, {124, 1}, {0, 2}, {0, 3}, {4, 3},
                                {0, 4}, {0, 5}, {0, 8}, {0, 32}};
  const unsigned dcases[][2] = {{0, 1}, {8, 1}, {0, 2}, {0, 3}, {8, 3}, {0, 4}, {0, 16}};
  for (const auto &c : fcases) rc |= run_case<float>(nsm, c[0], c[1]);
  for (const auto &c : dcases) rc |= run_case<double>(nsm, c[0], c[1]);
  /* warps of 2-D blocks over row-major arrays: (lanes a row, row pitch in bytes) */
  const unsigned rows2d[][2] = {{4, 32832}, {4, 32768}, {8, 32832}, {8, 32768}, {2, 32832},
                                {16, 32832}, {16, 32768}};
  for (const auto &c : rows2d) rc |= run_case<double>(nsm, 0, 1, c[0], c[1]);
  const unsigned rows2f[][2] = {{8, 16416}, {8, 16384}, {16, 16416}, {4, 16400}};
  for (const auto &c : rows2f) rc |= run_case<float>(nsm, 0, 1, c[0], c[1]);
  /* the same shapes missing the L1 (L2 hits): does a miss cost its lines, or its banks? */
  rc |= run_case<float>(nsm, 0, 1, 32, 0, true);
  rc |= run_case<float>(nsm, 4, 1, 32, 0, true);
  rc |= run_case<double>(nsm, 0, 1, 32, 0, true);
  rc |= run_case<double>(nsm, 8, 1, 32, 0, true);
  rc |= run_case<float>(nsm, 0, 3, 32, 0, true);
  rc |= run_case<double>(nsm, 0, 2, 32, 0, true);
  rc |= run_case<double>(nsm, 0, 4, 32, 0, true);
  for (const auto &c : rows2d) rc |= run_case<double>(nsm, 0, 1, c[0], c[1], true);
  for (const auto &c : rows2f) rc |= run_case<float>(nsm, 0, 1, c[0], c[1], true);
  return rc;
}
