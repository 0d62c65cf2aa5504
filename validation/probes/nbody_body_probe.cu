// The n-body body of examples/aos_particles.c:21 on one SM, and four variants of it, so that
// the time model's floating-point terms can be held against each operation's share: cycles per
// iteration of one warp (32 particles against all 16,384), and SM cycles per warp iteration of
// one block of 32 warps. Variants: full (a division and a square root), nodiv (the division a
// multiply), nosqrt (the square root a multiply), neither, double_num (the float mass a double
// field). Then the full and neither bodies again on the validation runner's struct fills.
//   nvcc -O3 -arch=sm_90 -o nbody_body_probe validation/probes/nbody_body_probe.cu
//   ./nbody_body_probe > nbody.csv
#include <cstdio>
#include <cuda_runtime.h>
#define NP 16384
struct particle { double x, y, z; double vx, vy, vz; float mass; int species; };
template <int V>
__global__ void body(struct particle *p, double soft2, double dt, int n, long long *cyc) {
  __syncthreads();
  long long t0 = clock64();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    double ax = 0.0, ay = 0.0, az = 0.0;
    for (int j = 0; j < NP; j++) {
      double dx = p[j].x - p[i].x, dy = p[j].y - p[i].y, dz = p[j].z - p[i].z;
      double r2 = dx * dx + dy * dy + dz * dz + soft2;
      double inv;
      if (V == 0) inv = p[j].mass / (r2 * sqrt(r2));
      if (V == 1) inv = p[j].mass * (r2 * sqrt(r2));
      if (V == 2) inv = p[j].mass / (r2 * r2);
      if (V == 3) inv = p[j].mass * (r2 * r2);
      if (V == 4) inv = (double)p[j].x / (r2 * sqrt(r2));
      ax += dx * inv; ay += dy * inv; az += dz * inv;
    }
    p[i].vx += dt * ax; p[i].vy += dt * ay; p[i].vz += dt * az;
  }
  long long t1 = clock64();
  if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}
template <int V> void run(particle *p, long long *cyc, long long *h) {
  const char *nm[] = {"full", "nodiv", "nosqrt", "neither", "double_num"};
  // latency: 1 warp, 32 particles
  double lat = 1e30, tp = 1e30;
  for (int r = 0; r < 3; r++) {
    body<V><<<1, 32>>>(p, 0.01, 0.001, 32, cyc);
    cudaMemcpy(h, cyc, 8, cudaMemcpyDeviceToHost);
    if (r && h[0] < lat) lat = h[0];
  }
  // one SM full: 1 block of 1024 threads, 1024 particles
  for (int r = 0; r < 3; r++) {
    body<V><<<1, 1024>>>(p, 0.01, 0.001, 1024, cyc);
    cudaMemcpy(h, cyc, 8, cudaMemcpyDeviceToHost);
    if (r && h[0] < tp) tp = h[0];
  }
  printf("%s,%.1f,%.2f,%s\n", nm[V], lat / NP, tp / (NP * 32.0), cudaGetErrorString(cudaGetLastError()));
}
int main() {
  particle *p; long long *cyc, h[64];
  cudaMalloc(&p, NP * sizeof(particle)); cudaMalloc(&cyc, 64 * 8);
  particle *hp = new particle[NP];
  for (int i = 0; i < NP; i++) { hp[i].x = (i * 37 % 1000) * 1e-3; hp[i].y = (i * 91 % 1000) * 1e-3; hp[i].z = (i * 13 % 1000) * 1e-3; hp[i].vx = hp[i].vy = hp[i].vz = 0; hp[i].mass = 1.0f + (i % 7); hp[i].species = i % 3; }
  cudaMemcpy(p, hp, NP * sizeof(particle), cudaMemcpyHostToDevice);
  printf("variant,cycles_per_iter_1warp,sm_cycles_per_warp_iter_32warps,status\n");
  printf("# positions in [0, 1), masses 1-7\n");
  run<0>(p, cyc, h); run<1>(p, cyc, h); run<2>(p, cyc, h); run<3>(p, cyc, h); run<4>(p, cyc, h);
  /* the validation runner's struct fill before 2026-11-29: byte k = (k * 131 + 0) mod 251 */
  unsigned char *hb = (unsigned char *)hp;
  for (size_t k = 0; k < NP * sizeof(particle); k++) hb[k] = (unsigned char)(k * 131 % 251);
  cudaMemcpy(p, hp, NP * sizeof(particle), cudaMemcpyHostToDevice);
  printf("# bytes (k * 131) mod 251 (infinities, NaNs, denormals)\n");
  run<0>(p, cyc, h); run<3>(p, cyc, h);
  /* the runner's fill since: byte k = 0x3e + (k * 131) mod 3 */
  for (size_t k = 0; k < NP * sizeof(particle); k++) hb[k] = (unsigned char)(0x3e + k * 131 % 3);
  cudaMemcpy(p, hp, NP * sizeof(particle), cudaMemcpyHostToDevice);
  printf("# bytes 0x3e + (k * 131) mod 3 (moderate normal numbers)\n");
  run<0>(p, cyc, h); run<3>(p, cyc, h);
}
