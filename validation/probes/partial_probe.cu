// Probe: is the slowness of jacobi2d's i->ty+bx j->tx+by candidates a matter of partly written
// sectors? The generated kernel starts j at 1, so a warp's 32 doubles straddle sector bounds and
// each end sector is completed by another warp. Under i->ty+bx j->tx+by on a 256x4 grid that warp
// belongs to the block 256 ids later (blockIdx.y + 1), often a later wave, and the L2 may have
// evicted the half-written sector by then. The H100's HBM3 has ECC on, so a partial write-back
// needs a read of the sector first.
//   nvcc -O3 -arch=sm_90 -o partial_probe validation/probes/partial_probe.cu && ./partial_probe
//   ncu --metrics ... ./partial_probe once     (each kernel launched once)
// Prints one CSV line per kernel and grid: the kernel time in microseconds without and with an
// L2 flush (a read of twice the L2) before each launch (CUDA events; min of 5 after 2 warm-ups).
//   gen_rows: the harness's generated kernel for candidate 235 of the eighth run, verbatim
//             (i = 1 + ty + 16 bx, j = 1 + tx + 32 by, grid-stride over both)
//   gen_cols: the generated kernel of candidate 255 (i on ty+by, j on tx+bx), verbatim
//   rows_j0:  gen_rows with j starting at 0 (a warp's doubles are whole sectors; j = 0 skipped)
//   cols_j0:  gen_cols with j starting at 0
//   fill_j1 / fill_j0: B[i][j] = 1 under gen_rows's mapping, j from 1 and from 0: writes only
// Then the pairs: one block of 1024 threads on each SM; every row of 4096 holds one 32-double
// chunk per SM, the chunk of slot k written by the SM whose id s has k = s * d^-1 mod SMs, so
// that a chunk's right neighbour is written by SM s + d. With offset 1 each chunk boundary is a
// sector written half by one SM and half by the other (d = 0: slot k by block k, so that the
// neighbour is the next block as the GPU deals them; d = -1: slots 2b and 2b + 1 by the even and
// odd warps of block b, 2048 rows of 264 slots). The SMs of odd slots run their rows `gap`
// steps ahead (of 128 steps; a step writes about 1 MB over the GPU), so that the two halves of a
// sector are written that far apart in time.
//   pairs,d,gap,offset,time_us,sms_with_one_block (add "once" for ncu)
#include <cstdio>
#include <cuda_runtime.h>

#include "probe_sm.cuh"
#include "probe_time.cuh"

#define N 4096

extern "C" __global__ void gen_rows(double *sp_B, double *sp_A) {
  double(*B)[4096] = (double(*)[4096])sp_B;
  double(*A)[4096] = (double(*)[4096])sp_A;
  for (int i = (int)((1) + 1LL * ((long long)blockIdx.x * blockDim.y + threadIdx.y)); i < (N - 1);
       i += (int)(1LL * ((long long)blockDim.y * gridDim.x))) {
    for (int j = (int)((1) + 1LL * ((long long)blockIdx.y * blockDim.x + threadIdx.x)); j < (N - 1);
         j += (int)(1LL * ((long long)blockDim.x * gridDim.y))) {
      B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
    }
  }
}

extern "C" __global__ void gen_cols(double *sp_B, double *sp_A) {
  double(*B)[4096] = (double(*)[4096])sp_B;
  double(*A)[4096] = (double(*)[4096])sp_A;
  for (int i = (int)((1) + 1LL * ((long long)blockIdx.y * blockDim.y + threadIdx.y)); i < (N - 1);
       i += (int)(1LL * ((long long)blockDim.y * gridDim.y))) {
    for (int j = (int)((1) + 1LL * ((long long)blockIdx.x * blockDim.x + threadIdx.x)); j < (N - 1);
         j += (int)(1LL * ((long long)blockDim.x * gridDim.x))) {
      B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
    }
  }
}

extern "C" __global__ void rows_j0(double *sp_B, double *sp_A) {
  double(*B)[4096] = (double(*)[4096])sp_B;
  double(*A)[4096] = (double(*)[4096])sp_A;
  for (int i = 1 + (int)(blockIdx.x * blockDim.y + threadIdx.y); i < N - 1; i += blockDim.y * gridDim.x)
    for (int j = (int)(blockIdx.y * blockDim.x + threadIdx.x); j < N - 1; j += blockDim.x * gridDim.y)
      if (j >= 1) B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
}

extern "C" __global__ void cols_j0(double *sp_B, double *sp_A) {
  double(*B)[4096] = (double(*)[4096])sp_B;
  double(*A)[4096] = (double(*)[4096])sp_A;
  for (int i = 1 + (int)(blockIdx.y * blockDim.y + threadIdx.y); i < N - 1; i += blockDim.y * gridDim.y)
    for (int j = (int)(blockIdx.x * blockDim.x + threadIdx.x); j < N - 1; j += blockDim.x * gridDim.x)
      if (j >= 1) B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
}

__global__ void fill(double *sp_B, int j0) {
  double(*B)[4096] = (double(*)[4096])sp_B;
  for (int i = 1 + (int)(blockIdx.x * blockDim.y + threadIdx.y); i < N - 1; i += blockDim.y * gridDim.x)
    for (int j = j0 + (int)(blockIdx.y * blockDim.x + threadIdx.x); j < N - 1; j += blockDim.x * gridDim.y)
      if (j >= 1) B[i][j] = 1.0;
}

#define PAIR_ROWS 4096

__global__ void pair_fill(double *B, long pitch, const int *slot_of_sm, int nsm, int gap, int offset,
                          int by_block, int same_block, int *blocks_on_sm) {
  extern __shared__ char hold_sm[]; // sized so that one block fills an SM
  unsigned s = probe_smid();
  if (threadIdx.x == 0) atomicAdd(&blocks_on_sm[s], 1);
  if (s >= (unsigned)nsm) return;
  int k = slot_of_sm[s], w = threadIdx.x / 32, lane = threadIdx.x % 32, warps_per_row = 32;
  if (by_block) k = blockIdx.x;
  if (same_block) { // slots 2b and 2b + 1 of half as many rows, by odd and even warps
    k = 2 * blockIdx.x + (w & 1);
    w >>= 1;
    warps_per_row = 16;
  }
  const int per_warp = PAIR_ROWS / 32;
  for (int m = 0; m < per_warp; m++) {
    int mm = (k & 1) ? (m + gap) % per_warp : m;
    long r = w + (long)warps_per_row * mm;
    if (same_block && r >= PAIR_ROWS / 2) break;
    B[r * pitch + offset + 32L * k + lane] = 1.0;
  }
  if (hold_sm[threadIdx.x] == 123) B[0] = 2.0; // keeps the shared array
}

static int pairs(bool once) {
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  int nsm = prop.multiProcessorCount;
  long pitch = 32L * nsm + 32;
  double *B;
  int *slot_of_sm, *blocks_on_sm;
  if (cudaMalloc(&B, PAIR_ROWS * pitch * sizeof(double)) || cudaMalloc(&slot_of_sm, nsm * sizeof(int)) ||
      cudaMalloc(&blocks_on_sm, 1024 * sizeof(int)))
    return 1;
  int smem = (int)prop.sharedMemPerBlockOptin;
  cudaFuncSetAttribute(pair_fill, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  printf("pairs,d,gap,offset,time_us,sms_with_one_block\n");
  const int modes[][3] = {{1, 0, 1},  {1, 1, 1},  {1, 4, 1},  {1, 16, 1},  {1, 64, 1},
                          {67, 0, 1}, {67, 1, 1}, {67, 4, 1}, {67, 16, 1}, {67, 64, 1},
                          {17, 0, 1}, {1, 0, 0},  {1, 64, 0}, {67, 0, 0},  {67, 64, 0},
                          {0, 0, 1},  {-1, 0, 1}, {0, 0, 0},  {-1, 0, 0}};
  for (auto &md : modes) {
    int d = md[0] > 0 ? md[0] : 1, host_slot[1024], inv = -1;
    int by_block = md[0] == 0, same_block = md[0] == -1;
    long p = same_block ? 2 * pitch - 32 : pitch;
    for (int x = 1; x < nsm; x++)
      if ((long)x * d % nsm == 1) inv = x;
    if (inv < 0) continue; // d shares a factor with the SM count
    for (int sm = 0; sm < nsm; sm++) host_slot[sm] = (int)((long)sm * inv % nsm);
    cudaMemcpy(slot_of_sm, host_slot, nsm * sizeof(int), cudaMemcpyHostToDevice);
    float us = probe_time_us_each(
        "partial_probe: pairs", once ? 1 : 7, once ? 0 : 2,
        [&] { cudaMemset(blocks_on_sm, 0, 1024 * sizeof(int)); },
        [&] {
          pair_fill<<<nsm, 1024, smem>>>(B, p, slot_of_sm, nsm, md[1], md[2], by_block, same_block,
                                         blocks_on_sm);
        });
    if (us < 0) return 1;
    int host_blocks[1024], one = 0; // of the last launch
    cudaMemcpy(host_blocks, blocks_on_sm, sizeof host_blocks, cudaMemcpyDeviceToHost);
    for (int sm = 0; sm < nsm; sm++) one += host_blocks[sm] == 1;
    printf("pairs,%d,%d,%d,%.2f,%d\n", md[0], md[1], md[2], us, one);
  }
  return 0;
}

int main(int argc, char **argv) {
  // "once": each kernel once, unflushed (for ncu, which flushes the caches itself)
  const bool once = argc > 1 && argv[1][0] == 'o';
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  size_t bytes = (size_t)N * N * sizeof(double);
  double *A, *B;
  const probe_flusher flusher(prop);
  if (cudaMalloc(&A, bytes) || cudaMalloc(&B, bytes) || !flusher.ok) return 1;
  cudaMemset(A, 0, bytes);
  cudaMemset(B, 0, bytes);
  printf("# %s, ECC %s, L2 %d bytes\n", prop.name, prop.ECCEnabled ? "on" : "off", prop.l2CacheSize);
  printf("kernel,grid_x,grid_y,time_us_no_flush,time_us_flushed\n");
  dim3 block(32, 16);
  struct { const char *name; int k; dim3 grid; } runs[] = {
      {"gen_rows", 0, dim3(256, 4)}, {"gen_rows", 0, dim3(256, 2)}, {"gen_rows", 0, dim3(512, 2)},
      {"rows_j0", 2, dim3(256, 4)},  {"rows_j0", 2, dim3(256, 2)},  {"gen_cols", 1, dim3(128, 8)},
      {"gen_cols", 1, dim3(128, 4)}, {"fill_j1", 3, dim3(256, 4)},  {"fill_j0", 4, dim3(256, 4)},
      {"fill_j1", 3, dim3(256, 2)},  {"cols_j0", 5, dim3(128, 8)}};
  for (auto &r : runs) {
    float us[2] = {1000.0f * 1e30f, 1000.0f * 1e30f}; // "once" leaves the flushed column unset
    for (int flushed = 0; flushed < (once ? 1 : 2); flushed++) {
      us[flushed] = probe_time_us_each(
          "partial_probe", once ? 1 : 7, once ? 0 : 2,
          [&] {
            if (flushed) flusher();
          },
          [&] {
            switch (r.k) {
            case 0: gen_rows<<<r.grid, block>>>(B, A); break;
            case 1: gen_cols<<<r.grid, block>>>(B, A); break;
            case 2: rows_j0<<<r.grid, block>>>(B, A); break;
            case 3: fill<<<r.grid, block>>>(B, 1); break;
            case 4: fill<<<r.grid, block>>>(B, 0); break;
            default: cols_j0<<<r.grid, block>>>(B, A); break;
            }
          });
      if (us[flushed] < 0) return 1;
    }
    printf("%s,%u,%u,%.2f,%.2f\n", r.name, r.grid.x, r.grid.y, us[0], us[1]);
  }
  return pairs(once);
}
