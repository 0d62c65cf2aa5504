/* A stand-in libcuda.so.1 for testing schedvalidate's process handling without a GPU: device
   memory is host memory, a "kernel" does nothing unless its name asks for trouble:
     *_fault      the launch faults: the next synchronization returns CUDA_ERROR_ILLEGAL_ADDRESS
     *_crash      the process dies (SIGABRT) in the launch
     *_hang       the launch never returns
     *_badlaunch  cuLaunchKernel returns CUDA_ERROR_INVALID_VALUE
     *_wrong      writes 0xff into the first byte of the array given as the second parameter
     *_slow       takes 30 ms
     *_surface    its time is a bowl over the launch, 0.1 ms at grid 160, block 32x1, growing by
                  0.01 ms per 32 blocks and per doubling of block.x away (squared), 0.02 ms per
                  block.y above 1; at grid 160, block 32x1 it writes a wrong result (as *_wrong);
     *_surface2   the same bowl around grid 96, block 64x1, no wrong point, but it writes 0x77 into
                  the second byte of the second parameter's array (unlike *_surface: a launch of
                  a stale function shows as a difference)
   A block of more than 1024 threads fails to launch (CUDA_ERROR_INVALID_VALUE), as on a GPU.
   It reports an H100-like device with 1 GiB of free memory. Test use only: run the runner with
   SCHEDVALIDATE_LIBCUDA=<this library> LD_PRELOAD=<this library>. Its name must not be
   libcuda.so.1: NVRTC loads libcuda.so.1 itself and needs the real driver's export table. */
#include <cuda.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static CUresult sticky = CUDA_SUCCESS;
static char fn_names[64][128];
static int n_fn;
static double surface_ms = -1; /* the last launch's synthetic time, -1 for a real one */

CUresult CUDAAPI cuInit(unsigned int f) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGet(CUdevice *d, int o) { *d = o; return o == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice d) {
  strncpy(name, "Mock H100 (tests/mock_libcuda.c)", (size_t)len);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 52428800; break;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *v = 32; break;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
  case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *v = 1024; break;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: *v = 1; break;
  default: *v = 0;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceTotalMem(size_t *b, CUdevice d) { *b = (size_t)80 << 30; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { *c = (CUcontext)&sticky; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxSynchronize(void) { return sticky; }
CUresult CUDAAPI cuMemGetInfo(size_t *f, size_t *t) {
  *f = (size_t)1 << 30;
  *t = (size_t)80 << 30;
  return sticky;
}
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t n) {
  void *m = malloc(n);
  *p = (CUdeviceptr)m;
  return m ? sticky : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult CUDAAPI cuMemFree(CUdeviceptr p) { free((void *)p); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n) { if (!sticky) memcpy((void *)d, s, n); return sticky; }
CUresult CUDAAPI cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n) { if (!sticky) memcpy(d, (void *)s, n); return sticky; }
CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) { if (!sticky) memcpy((void *)d, (void *)s, n); return sticky; }
CUresult CUDAAPI cuMemsetD32(CUdeviceptr d, unsigned int v, size_t n) {
  for (size_t i = 0; i < n && !sticky; i++) ((unsigned *)d)[i] = v;
  return sticky;
}
CUresult CUDAAPI cuModuleLoadData(CUmodule *m, const void *img) {
  *m = (CUmodule)&n_fn;
  return memcmp(img, "\177ELF", 4) ? CUDA_ERROR_INVALID_IMAGE : sticky;
}
CUresult CUDAAPI cuModuleUnload(CUmodule m) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  if (n_fn == 64) n_fn = 0;
  strncpy(fn_names[n_fn], name, 127);
  *f = (CUfunction)fn_names[n_fn++];
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) { *v = 16; return CUDA_SUCCESS; }
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                unsigned by, unsigned bz, unsigned sh, CUstream s, void **args, void **extra) {
  const char *name = (const char *)f;
  if (sticky) return sticky;
  surface_ms = -1;
  if (strstr(name, "_badlaunch") || bx * by * bz > 1024) return CUDA_ERROR_INVALID_VALUE;
  if (strstr(name, "_surface")) {
    bool two = strstr(name, "_surface2") != NULL;
    double dg = ((double)gx - (two ? 96 : 160)) / 32, dv = log2((double)bx) - (two ? 6 : 5);
    surface_ms = 0.1 + 0.01 * (dg * dg + dv * dv) + 0.02 * (by - 1);
    if (!two && gx == 160 && bx == 32 && by == 1) *(unsigned char *)*(CUdeviceptr *)args[1] = 0xff;
    if (two) ((unsigned char *)*(CUdeviceptr *)args[1])[1] = 0x77; /* its own output, at every launch */
  }
  if (strstr(name, "_crash")) raise(SIGABRT);
  if (strstr(name, "_hang"))
    for (;;) pause();
  if (strstr(name, "_fault")) sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
  if (strstr(name, "_wrong")) *(unsigned char *)*(CUdeviceptr *)args[1] = 0xff;
  if (strstr(name, "_slow")) {
    struct timespec t = {0, 30000000};
    nanosleep(&t, NULL);
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned int f) {
  *e = calloc(1, sizeof(struct timespec));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventDestroy(CUevent e) { free(e); return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  clock_gettime(CLOCK_MONOTONIC, (struct timespec *)e);
  return sticky;
}
CUresult CUDAAPI cuEventSynchronize(CUevent e) { return sticky; }
CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  const struct timespec *x = (const void *)a, *y = (const void *)b;
  *ms = (float)((double)(y->tv_sec - x->tv_sec) * 1e3 + (double)(y->tv_nsec - x->tv_nsec) * 1e-6);
  if (surface_ms >= 0) *ms = (float)surface_ms;
  return sticky;
}
CUresult CUDAAPI cuGetErrorString(CUresult r, const char **s) {
  *s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "an illegal memory access was encountered" : "mock error";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorName(CUresult r, const char **s) {
  *s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS"
       : r == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_MOCK";
  return CUDA_SUCCESS;
}
/* libcupti's chip query talks to the real driver; the test preloads this library so that the
   runner's call lands here instead. */
#include <cupti_target.h>
CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p) {
  p->pChipName = "GH100";
  return CUPTI_SUCCESS;
}
