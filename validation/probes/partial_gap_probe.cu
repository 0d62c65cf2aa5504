// Probe: what decides the cost of a partly written store sector? partial_probe.cu found that
// jacobi2d's misaligned stores (j from 1) cost 14-17 ps a partial write where two warps of one
// block complete a sector at once, but its measured pick (64x4 blocks walking rows, i->ty+bx
// j->tx) ran 166 us against 114 for the compiler default, and 32x16 blocks walking rows 177 us,
// with the model predicting about 112. In those, a warp's last sector is completed by a warp of
// the same block (64x4: half of them) or by the same warp (32 wide) one iteration of the j loop
// later. This probe times the 5-point stencil and a store-only fill under
//   rows: i = 1 + ty + R bx (grid-stride), j = j0 + tx + W (by + GY k), k = 0, 1, ...
//   cols: i = 1 + ty + R by (grid-stride), j = j0 + tx + W (bx + GX k)
// with j0 = 1 (stores misaligned: every 32-double chunk leaves two sectors partly written) and
// j0 = 0 (aligned; j = 0 skipped), so that t(j0 = 1) - t(j0 = 0) is the partial writes' cost;
// and the fill with a __nanosleep of D ns in each iteration, which stretches the time between a
// sector's two writes when the same warp or block completes it one iteration later.
//   nvcc -O3 -arch=sm_90 -o partial_gap_probe validation/probes/partial_gap_probe.cu
//   ./partial_gap_probe          two CSV tables: kernel,map,W,R,gx,gy,j0,delay_ns,time_us for
//                                the kernels above, then the harness's generated kernels, each
//                                with B misaligned as generated and with B shifted to align
//                                its stores: kernel,block_x,block_y,grid_x,grid_y,b_offset_doubles,time_us
//   ./partial_gap_probe once     each kernel once, unflushed (for ncu)
// Times: CUDA events, minimum of 5 after 2 warm-ups, the L2 flushed (a read of twice its size)
// before each launch.
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_time.cuh"

#define N 4096

__global__ void stencil_map(double *sp_B, const double *sp_A, int rows, int j0) {
  double(*B)[N] = (double(*)[N])sp_B;
  const double(*A)[N] = (const double(*)[N])sp_A;
  int bi = rows ? blockIdx.x : blockIdx.y, bj = rows ? blockIdx.y : blockIdx.x;
  int gi = rows ? gridDim.x : gridDim.y, gj = rows ? gridDim.y : gridDim.x;
  for (int i = 1 + (int)(bi * blockDim.y + threadIdx.y); i < N - 1; i += blockDim.y * gi)
    for (int j = j0 + (int)(bj * blockDim.x + threadIdx.x); j < N - 1; j += blockDim.x * gj)
      if (j >= 1) B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
}

__global__ void fill_map(double *sp_B, int rows, int j0, int delay_ns) {
  double(*B)[N] = (double(*)[N])sp_B;
  int bi = rows ? blockIdx.x : blockIdx.y, bj = rows ? blockIdx.y : blockIdx.x;
  int gi = rows ? gridDim.x : gridDim.y, gj = rows ? gridDim.y : gridDim.x;
  for (int i = 1 + (int)(bi * blockDim.y + threadIdx.y); i < N - 1; i += blockDim.y * gi)
    for (int j = j0 + (int)(bj * blockDim.x + threadIdx.x); j < N - 1; j += blockDim.x * gj) {
      if (delay_ns) __nanosleep(delay_ns);
      if (j >= 1) B[i][j] = 1.0;
    }
}

// The harness's generated kernels (validation/plan.c, eighth and ninth runs), verbatim but for
// SP_ITERATION: nvcc unrolls their j loop 4x (35 loads, 7 stores in the PTX), the guarded kernels
// above not at all. The host passes B, or B + 3 doubles so that B[i][1] starts a sector: the same
// code with aligned stores.
#define GEN_KERNEL(name, I0, ISTEP, J0, JSTEP, PRAGMA)                                                  \
  extern "C" __global__ void name(double *sp_B, double *sp_A) {                                        \
    double(*B)[4096] = (double(*)[4096])sp_B;                                                          \
    double(*A)[4096] = (double(*)[4096])sp_A;                                                          \
    for (int i = (int)((1) + 1LL * (I0)); i < (N - 1); i += (int)(1LL * (ISTEP))) {                   \
      PRAGMA                                                                                           \
      for (int j = (int)((1) + 1LL * (J0)); j < (N - 1); j += (int)(1LL * (JSTEP))) {                 \
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);            \
      }                                                                                                \
    }                                                                                                  \
  }
#define TY_BX ((long long)blockIdx.x * blockDim.y + threadIdx.y)
#define TY_BY ((long long)blockIdx.y * blockDim.y + threadIdx.y)
#define TX_BX ((long long)blockIdx.x * blockDim.x + threadIdx.x)
#define TX_BY ((long long)blockIdx.y * blockDim.x + threadIdx.x)
GEN_KERNEL(gen_tybx_tx, TY_BX, ((long long)blockDim.y * gridDim.x), ((long long)threadIdx.x),
           ((long long)blockDim.x), )
GEN_KERNEL(gen_tybx_tx_unroll1, TY_BX, ((long long)blockDim.y * gridDim.x), ((long long)threadIdx.x),
           ((long long)blockDim.x), _Pragma("unroll 1"))
GEN_KERNEL(gen_tybx_txby, TY_BX, ((long long)blockDim.y * gridDim.x), TX_BY,
           ((long long)blockDim.x * gridDim.y), )
GEN_KERNEL(gen_tyby_txbx, TY_BY, ((long long)blockDim.y * gridDim.y), TX_BX,
           ((long long)blockDim.x * gridDim.x), )
GEN_KERNEL(gen_bx_tx, ((long long)blockIdx.x), ((long long)gridDim.x), ((long long)threadIdx.x),
           ((long long)blockDim.x), )

int main(int argc, char **argv) {
  const bool once = argc > 1 && argv[1][0] == 'o';
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  size_t bytes = (size_t)N * N * sizeof(double);
  double *A, *B; // B: 3 doubles of room for the aligned variants below
  const probe_flusher flusher(prop);
  if (cudaMalloc(&A, bytes) || cudaMalloc(&B, bytes + 64) || !flusher.ok) return 1;
  cudaMemset(A, 0, bytes);
  cudaMemset(B, 0, bytes);
  printf("# %s, ECC %s, L2 %d bytes, %d SMs\n", prop.name, prop.ECCEnabled ? "on" : "off",
         prop.l2CacheSize, prop.multiProcessorCount);
  auto flush = [&] { // before each timed launch ("once": ncu flushes itself)
    if (!once) flusher();
  };
  printf("kernel,map,W,R,gx,gy,j0,delay_ns,time_us\n");
  // kernel (0 stencil, 1 fill), rows?, W, R, grid x, grid y, delay
  const int runs[][7] = {
      // rows, one column group: the sector after a warp's chunk is completed by the next warp of
      // the block in the same iteration, or (the block's last warp of a row) by its first warp
      // one iteration later; W = 32: always the same warp, one iteration later
      {0, 1, 32, 16, 256, 1, 0}, {0, 1, 32, 8, 512, 1, 0},  {0, 1, 64, 4, 1024, 1, 0},
      {0, 1, 128, 2, 2048, 1, 0}, {0, 1, 256, 1, 4096, 1, 0},
      // rows, 2 and 4 column groups (the harness's gen_rows): other blocks complete them
      {0, 1, 32, 16, 256, 2, 0}, {0, 1, 32, 16, 256, 4, 0}, {0, 1, 64, 4, 1024, 2, 0},
      // cols: the next block in x completes the sector at once
      {0, 0, 32, 16, 128, 8, 0}, {0, 0, 64, 4, 64, 16, 0}, {0, 0, 256, 1, 16, 64, 0},
      // fill, rows, one group, iterations stretched by a sleep
      {1, 1, 32, 8, 512, 1, 0},  {1, 1, 32, 8, 512, 1, 200},  {1, 1, 32, 8, 512, 1, 1000},
      {1, 1, 32, 8, 512, 1, 4000}, {1, 1, 64, 4, 1024, 1, 0}, {1, 1, 64, 4, 1024, 1, 1000},
      {1, 1, 256, 1, 4096, 1, 0}, {1, 1, 256, 1, 4096, 1, 1000},
      {1, 0, 32, 16, 128, 8, 0}, {1, 0, 32, 16, 128, 8, 1000}};
  for (auto &r : runs) {
    for (int j0 = 0; j0 < 2; j0++) {
      dim3 block(r[2], r[3]), grid(r[4], r[5]);
      float us = probe_time_us_each(
          "partial_gap_probe", once ? 1 : 7, once ? 0 : 2,
          flush,
          [&] {
            if (r[0] == 0) stencil_map<<<grid, block>>>(B, A, r[1], j0);
            else fill_map<<<grid, block>>>(B, r[1], j0, r[6]);
          });
      if (us < 0) return 1;
      printf("%s,%s,%d,%d,%d,%d,%d,%d,%.2f\n", r[0] ? "fill" : "stencil", r[1] ? "rows" : "cols",
             r[2], r[3], r[4], r[5], j0, r[6], us);
    }
  }
  // the generated kernels: k = 0 gen_tybx_tx, 1 its unroll 1, 2 gen_tybx_txby, 3 gen_tyby_txbx,
  // 4 gen_bx_tx; block x, y, grid x, y (run 9's candidates)
  const int gens[][5] = {{0, 64, 4, 1024, 1},  {0, 32, 16, 256, 1}, {0, 32, 8, 512, 1},
                         {0, 128, 2, 2048, 1}, {0, 256, 1, 4096, 1}, {1, 64, 4, 1024, 1},
                         {1, 32, 16, 256, 1},  {2, 32, 16, 256, 4}, {2, 32, 16, 256, 2},
                         {3, 32, 16, 128, 8},  {3, 64, 4, 64, 16},  {4, 128, 1, 4094, 1},
                         {4, 256, 1, 4094, 1}};
  const char *gen_names[] = {"gen_tybx_tx", "gen_tybx_tx_unroll1", "gen_tybx_txby", "gen_tyby_txbx",
                             "gen_bx_tx"};
  printf("kernel,block_x,block_y,grid_x,grid_y,b_offset_doubles,time_us\n");
  for (auto &g : gens) {
    for (int off = 0; off <= 3; off += 3) {
      dim3 block(g[1], g[2]), grid(g[3], g[4]);
      double *b = B + off;
      float us = probe_time_us_each(
          "partial_gap_probe", once ? 1 : 7, once ? 0 : 2,
          flush,
          [&] {
            switch (g[0]) {
            case 0: gen_tybx_tx<<<grid, block>>>(b, A); break;
            case 1: gen_tybx_tx_unroll1<<<grid, block>>>(b, A); break;
            case 2: gen_tybx_txby<<<grid, block>>>(b, A); break;
            case 3: gen_tyby_txbx<<<grid, block>>>(b, A); break;
            default: gen_bx_tx<<<grid, block>>>(b, A); break;
            }
          });
      if (us < 0) return 1;
      printf("%s,%d,%d,%d,%d,%d,%.2f\n", gen_names[g[0]], g[1], g[2], g[3], g[4], off, us);
    }
  }
  return 0;
}
