// Probe: what it costs DRAM when the pieces of one 128-byte line are read by blocks that run
// far apart in dispatch order. The replay has xreuse.c:16's 8x32 blocks with i (the contiguous
// index) on tx+bx at 162 us and the same blocks with i on tx+by at 240 us, with every counter
// equal (L1 hits, L2 reads, DRAM bytes): with i on by, the block that reads a line's other
// 64 bytes is gridDim.x = 128 blocks later. piece_drift_probe.cu measured the same loss when a
// block's own warps drift apart over grid-stride rounds; here the pieces are in different
// blocks, one round each. Built and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o /tmp/pdist validation/probes/partner_distance_probe.cu && /tmp/pdist [walk|w4|ww|ws|rot|pitch|copy]
//
// stream: b = alpha a + beta b on 4096^2 doubles (the drift probe's stream). A block of 256
// threads covers W doubles of 256/W rows (W = 4, 8, 16: pieces of 32, 64, 128 bytes; a warp
// reads 32/W rows). The P = 16/W blocks that read the pieces of one line group (the same rows)
// are D blocks apart in the 1-D grid's order; the line groups themselves are visited along the
// rows (consecutive groups side by side), whatever D, so only the partners' distance changes:
// block L: c = (L / (P D)) D + L % D is its line group, h = (L / D) % P its piece.
// D = 1 is the friendly order (xreuse's i on bx), D = 256 is gridDim.x of a 2-D grid with 256
// line groups a row of blocks. "rows" visits the line groups down the columns instead (the
// group under the last, 4096 / (256/W) of them a column), as xreuse's i on by does with D = 1.
//
// xreuse: examples/xreuse.c (b[j][i] += sum_k w[k] a[j][i+k], a of 4096 x 4104) as the two
// replayed 8x32 candidates map it: i on tx + bx, j on ty + by (grid 512x128: the partner strip
// is the next block, D = 1, "along") and i on tx + by, j on ty + bx (grid 128x512: D = 128,
// consecutive blocks down the rows, "down").
//
// walk (argument "walk"): 64-byte pieces in the 2-D grids the candidates have, i (rows) on ty
// and j (the contiguous index) on tx with blocks of 8x32 ("w4": 32-byte pieces, 4x64).
// "along" is j on tx + bx (the blocks walk along the rows, partners adjacent); "walkL" is i on ty + bx + L bz and j on
// tx + by: consecutive blocks walk L blocks down the rows before the next strip, whose block
// reads the other half of their lines L blocks later (D = L). "stream" is b = alpha a + beta b;
// "mix" is tile.c's c[i][j] = a[i][j] + x[j][i], whose transposed x is read in whole lines
// along its rows (i on ty + bx) in every order.
//
// rot (argument "rot"): reverse_loop.c's rotate180, out[i][j] = in[255 - i][65535 - j] on 256 x
// 65,536 doubles, in 8x32 blocks: "along" (j on tx + bx, grid 8192x8) and "walk" (i on ty + bx,
// j on tx + by, grid 8x8192: the blocks walk the whole column, 8 blocks, L = 8), each with the
// input reversed as rotate180 reads it and, as a check, read forward (a copy).
//
// copy (argument "copy"): the 64- and 32-byte walks of a copy, b = a (one array read, another
// written, as rotate180 does), on 4096^2 doubles.
//
// pitch (argument "pitch"): the 64-byte stream's walks on 128 MiB matrices of other shapes, R
// rows of C doubles (the rows' pitch 8C bytes: 32 KiB to 512 KiB), along and walking 8 blocks
// and the whole column (R / 32 blocks).
//
// CUDA events, the minimum of 7 launches after 2 warm-ups, the L2 flushed before each.
// Prints CSV: kernel,W,piece_bytes,order,D,blocks,time_us
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define N 4096
#define XR 8 /* xreuse's window */

template <int W>
__global__ void stream(double *b, const double *a, double alpha, double beta, int D, int down) {
  constexpr int P = 16 / W, ROWS = 256 / W, GROUPS_A_ROW = N / 16, GROUPS_A_COL = N / ROWS;
  const long L = blockIdx.x;
  const long c = L / ((long)P * D) * D + L % D;
  const int h = (int)(L / D % P);
  const long gr = down ? c % GROUPS_A_COL : c / GROUPS_A_ROW; /* the group's row of blocks */
  const long gc = down ? c / GROUPS_A_COL : c % GROUPS_A_ROW; /* its column of lines */
  const int i = (int)(gr * ROWS) + threadIdx.x / W;
  const int j = (int)(gc * 16) + h * W + threadIdx.x % W;
  const size_t p = (size_t)i * N + j;
  b[p] = alpha * a[p] + beta * b[p];
}

template <int W, bool MIX, bool COPY = false>
__global__ void walk(double *b, const double *a, const double *x, int along, int cols = N) {
  constexpr int ROWS = 256 / W;
  int i, j;
  if (along) {
    i = threadIdx.y + ROWS * blockIdx.y;
    j = threadIdx.x + W * blockIdx.x;
  } else {
    i = threadIdx.y + ROWS * (blockIdx.x + gridDim.x * blockIdx.z);
    j = threadIdx.x + W * blockIdx.y;
  }
  const size_t p = (size_t)i * cols + j;
  b[p] = COPY ? a[p] : 1.5 * a[p] + 0.5 * (MIX ? x[(size_t)j * N + i] : b[p]); /* MIX: square */
}

/* a 5-point stencil in the walk kernel's orders (interior points only): three rows of a a block */
template <int W>
__global__ void walk_stencil(double *b, const double *a, int along) {
  constexpr int ROWS = 256 / W;
  int i, j;
  if (along) {
    i = threadIdx.y + ROWS * blockIdx.y;
    j = threadIdx.x + W * blockIdx.x;
  } else {
    i = threadIdx.y + ROWS * (blockIdx.x + gridDim.x * blockIdx.z);
    j = threadIdx.x + W * blockIdx.y;
  }
  if (i < 1 || i >= N - 1 || j < 1 || j >= N - 1) return;
  const size_t p = (size_t)i * N + j;
  b[p] = 0.25 * (a[p - N] + a[p + N] + a[p - 1] + a[p + 1]);
}

template <int W>
static void run_walk_stencil(double *b, const double *a, const probe_flusher &flush) {
  constexpr int ROWS = 256 / W;
  const int walks[] = {0, 2, 8, 32, N / ROWS};
  for (int L : walks) {
    const dim3 block(W, ROWS), grid = L ? dim3(L, N / W, N / ROWS / L) : dim3(N / W, N / ROWS);
    float us = probe_time_us_each("walk", 7, 2, flush, [&] { walk_stencil<W><<<grid, block>>>(b, a, L == 0); });
    printf("walk_stencil,%d,%d,%s,%d,%d,%.2f\n", W, W * 8, L ? "walk" : "along", L ? L : 1, (N / W) * (N / ROWS), us);
  }
}

template <bool REVERSED>
__global__ void rot(double *out, const double *in, int along) {
  constexpr int NLEN = 256, NSYS = 65536;
  const int i = threadIdx.y + 32 * (along ? blockIdx.y : blockIdx.x);
  const int j = threadIdx.x + 8 * (along ? blockIdx.x : blockIdx.y);
  const size_t src = REVERSED ? (size_t)(NLEN - 1 - i) * NSYS + (NSYS - 1 - j) : (size_t)i * NSYS + j;
  out[(size_t)i * NSYS + j] = in[src];
}

static void run_pitch(double *b, const double *a, const probe_flusher &flush) {
  for (int rows = 4096; rows >= 256; rows /= 2) {
    const int cols = N * N / rows;
    const int walks[] = {0, 8, rows / 32};
    for (int L : walks) {
      const dim3 block(8, 32), grid = L ? dim3(L, cols / 8, rows / 32 / L) : dim3(cols / 8, rows / 32);
      float us = probe_time_us_each("pitch", 7, 2, flush, [&] { walk<8, false><<<grid, block>>>(b, a, nullptr, L == 0, cols); });
      printf("pitch_%d,8,64,%s,%d,%d,%.2f\n", cols * 8 / 1024, L ? "walk" : "along", L ? L : 1,
             (cols / 8) * (rows / 32), us);
    }
  }
}

static void run_rot(double *out, const double *in, const probe_flusher &flush) {
  for (int reversed = 1; reversed >= 0; reversed--)
    for (int along = 1; along >= 0; along--) {
      const dim3 block(8, 32), grid = along ? dim3(8192, 8) : dim3(8, 8192);
      float us = probe_time_us_each("rot", 7, 2, flush, [&] {
        if (reversed) rot<true><<<grid, block>>>(out, in, along);
        else rot<false><<<grid, block>>>(out, in, along);
      });
      printf("rot_%s,8,64,%s,%d,%d,%.2f\n", reversed ? "reversed" : "forward", along ? "along" : "walk",
             along ? 1 : 8, 8192 * 8, us);
    }
}

template <int W, bool MIX, bool COPY = false>
static void run_walk(double *b, const double *a, const double *x, const probe_flusher &flush) {
  constexpr int ROWS = 256 / W;
  const int walks[] = {0, 2, 8, 32, N / ROWS}; /* 0: along; the last, the whole column */
  for (int L : walks) {
    const dim3 block(W, ROWS), grid = L ? dim3(L, N / W, N / ROWS / L) : dim3(N / W, N / ROWS);
    float us = probe_time_us_each("walk", 7, 2, flush, [&] { walk<W, MIX, COPY><<<grid, block>>>(b, a, x, L == 0); });
    printf("walk_%s,%d,%d,%s,%d,%d,%.2f\n", COPY ? "copy" : MIX ? "mix" : "stream", W, W * 8, L ? "walk" : "along",
           L ? L : 1, (N / W) * (N / ROWS), us);
  }
}

template <bool I_ON_BX>
__global__ void xreuse_8x32(double *b, const double *a, const double *w) {
  const int i = threadIdx.x + 8 * (I_ON_BX ? blockIdx.x : blockIdx.y);
  const int j = threadIdx.y + 32 * (I_ON_BX ? blockIdx.y : blockIdx.x);
  double s = 0.0;
  for (int k = 0; k < XR; k++) s += w[k] * a[(size_t)j * (N + XR) + i + k];
  b[(size_t)j * N + i] += s;
}

template <int W>
static void run(double *a, double *b, const probe_flusher &flush) {
  constexpr int P = 16 / W;
  const int blocks = N / W * (N / (256 / W));
  static const int ds[] = {1, 2, 8, 32, 128, 256, 512, 1024, 2048, 4096, 8192};
  for (int down = 0; down < 2; down++)
    for (int d : ds) {
      if (P == 1 && d > 1) break; /* whole lines: no partner */
      if ((long)d * P > blocks) break;
      float us = probe_time_us_each("stream", 7, 2, flush, [&] {
        stream<W><<<blocks, 256>>>(b, a, 1.5, 0.5, d, down);
      });
      printf("stream,%d,%d,%s,%d,%d,%.2f\n", W, W * 8, down ? "down" : "along", d, blocks, us);
    }
}

int main(int argc, char **argv) {
  const bool walks_only = argc > 1 && argv[1][0] == 'w', rot_only = argc > 1 && argv[1][0] == 'r';
  const bool pitch_only = argc > 1 && argv[1][0] == 'p';
  const cudaDeviceProp prop = probe_device();
  const probe_flusher flush(prop);
  if (!flush.ok) return 1;
  double *a, *b;
  const size_t n = (size_t)N * N;
  if (cudaMalloc(&a, n * 8) || cudaMalloc(&b, n * 8)) return 1;
  cudaMemset(a, 0, n * 8);
  cudaMemset(b, 0, n * 8);
  printf("kernel,W,piece_bytes,order,D,blocks,time_us\n");
  if (argc > 1 && argv[1][0] == 'c') {
    for (int rep = 0; rep < 2; rep++) {
      run_walk<8, false, true>(b, a, nullptr, flush);
      run_walk<8, false>(b, a, nullptr, flush); /* the stream beside it, for the same hour */
      run_walk<4, false, true>(b, a, nullptr, flush);
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
  }
  if (pitch_only) { /* kernel pitch_K: rows K KiB apart */
    run_pitch(b, a, flush);
    run_pitch(b, a, flush);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
  }
  if (rot_only) { /* 256 x 65,536 doubles = 128 MiB, as a and b */
    run_rot(b, a, flush);
    run_rot(b, a, flush);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
  }
  if (walks_only) {
    double *x;
    if (cudaMalloc(&x, n * 8)) return 1;
    cudaMemset(x, 0, n * 8);
    if (argv[1][1] == 's') { /* "ws": a 5-point stencil's walks, blocks of 8 to 64 doubles a row */
      for (int rep = 0; rep < 2; rep++) {
        run_walk_stencil<8>(b, a, flush);
        run_walk_stencil<16>(b, a, flush);
        run_walk_stencil<32>(b, a, flush);
        run_walk_stencil<64>(b, a, flush);
        run_walk<32, false>(b, a, x, flush); /* the 256-byte stream beside them */
      }
    } else if (argv[1][1] == 'w') { /* "ww": blocks of 16, 32 and 64 doubles a row (128-512 bytes) */
      for (int rep = 0; rep < 2; rep++) {
        run_walk<16, false>(b, a, x, flush);
        run_walk<32, false>(b, a, x, flush);
        run_walk<64, false>(b, a, x, flush);
        run_walk<16, false, true>(b, a, x, flush);
        run_walk<32, false, true>(b, a, x, flush);
        run_walk<64, false, true>(b, a, x, flush);
        run_walk<32, true>(b, a, x, flush);
        run_walk<8, false>(b, a, x, flush); /* the 64-byte stream beside them, for the hour */
      }
    } else if (argv[1][1] == '4') { /* "w4": 32-byte pieces */
      run_walk<4, false>(b, a, x, flush);
      run_walk<4, true>(b, a, x, flush);
    } else {
      run_walk<8, false>(b, a, x, flush);
      run_walk<8, true>(b, a, x, flush);
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
  }
  run<4>(a, b, flush);
  run<8>(a, b, flush);
  run<16>(a, b, flush);
  double *xa, *w;
  if (cudaMalloc(&xa, (size_t)N * (N + XR) * 8) || cudaMalloc(&w, XR * 8)) return 1;
  cudaMemset(xa, 0, (size_t)N * (N + XR) * 8);
  cudaMemset(w, 0, XR * 8);
  for (int on_bx = 1; on_bx >= 0; on_bx--) {
    const dim3 block(8, 32), grid = on_bx ? dim3(N / 8, N / 32) : dim3(N / 32, N / 8);
    float us = probe_time_us_each("xreuse", 7, 2, flush, [&] {
      if (on_bx) xreuse_8x32<true><<<grid, block>>>(b, xa, w);
      else xreuse_8x32<false><<<grid, block>>>(b, xa, w);
    });
    printf("xreuse_8x32,8,64,%s,%d,%d,%.2f\n", on_bx ? "along" : "down", on_bx ? 1 : N / 32, N / 8 * (N / 32), us);
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "partner_distance_probe: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
