// Probe: what it costs to combine a reduction into one global address, per block and per warp,
// and what an empty block costs. Built and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o atomic_combine validation/probes/atomic_combine.cu && ./atomic_combine
// Prints one CSV line per (kind, per, threads, blocks): the kernel time in microseconds (CUDA
// events, min of 9 launches after 2 warm-ups). The harness (validation/plan.c) combines with warp
// shuffles, shared memory and one atomic per block; "warp" rows are the earlier per-warp scheme.
#include <cstdio>
#include <cuda_runtime.h>

__device__ void cas_max(double *p, double v) {
  unsigned long long *a = (unsigned long long *)p;
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    double cur = __longlong_as_double(assumed);
    double next = cur > v ? cur : v;
    old = atomicCAS(a, assumed, __double_as_longlong(next));
  } while (old != assumed);
}

// kind 0: nothing (empty blocks), 1: atomicAdd float, 2: atomicAdd double, 3: CAS max double.
// per 0: one atomic per block (thread 0, after __syncthreads), 1: one per warp (lane 0).
__global__ void combine(int kind, int per, float *f, double *d) {
  unsigned tid = threadIdx.x;
  double v = (double)(blockIdx.x * blockDim.x + tid);
  if (per == 0) __syncthreads();
  bool leader = per == 0 ? tid == 0 : (tid % 32) == 0;
  if (!leader) return;
  if (kind == 1) atomicAdd(f, (float)v);
  else if (kind == 2) atomicAdd(d, v);
  else if (kind == 3) cas_max(d, v);
}

int main() {
  float *f;
  double *d;
  cudaMalloc(&f, sizeof(float));
  cudaMalloc(&d, sizeof(double));
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  int clk = 0;
  cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  printf("# %s, %d SMs, clock %d kHz\n", p.name, p.multiProcessorCount, clk);
  printf("kind,per,threads,blocks,us\n");
  const char *kinds[] = {"empty", "add_float", "add_double", "cas_max_double"};
  int threads[] = {128, 512, 1024};
  int blocks[] = {132, 1056, 4224, 16896, 33792, 135168};
  for (int k = 0; k < 4; k++)
    for (int per = 0; per < 2; per++) {
      if (k == 0 && per == 1) continue;
      for (int t : threads)
        for (int nb : blocks) {
          float best = 1e30f;
          for (int r = 0; r < 11; r++) {
            cudaMemset(d, 0, sizeof(double));
            cudaMemset(f, 0, sizeof(float));
            cudaEventRecord(a);
            combine<<<nb, t>>>(k, per, f, d);
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            if (r >= 2 && ms < best) best = ms;
          }
          cudaError_t e = cudaGetLastError();
          if (e != cudaSuccess) {
            printf("# error %s\n", cudaGetErrorString(e));
            return 1;
          }
          printf("%s,%s,%d,%d,%.2f\n", kinds[k], per ? "warp" : "block", t, nb, best * 1000);
        }
    }
  return 0;
}
