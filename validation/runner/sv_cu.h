/* schedvalidate: the CUDA driver API loaded at run time with dlopen, so that the runner starts
   (and says "no driver") on a machine without libcuda.so.1, and the parent process never loads it.
   Members carry cuda.h's names; cuda.h's macros turn e.g. cuMemAlloc into cuMemAlloc_v2 both in
   the member and the looked-up symbol, as linking would. */
#ifndef SV_CU_H
#define SV_CU_H
#include <cuda.h>

#define SV_CU_FUNCS(X)                                                                             \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)            \
  X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain)                          \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuMemGetInfo)              \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD32)        \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute)               \
  X(cuLaunchKernel) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)      \
  X(cuEventElapsedTime) X(cuGetErrorString) X(cuGetErrorName)

#define SV_CU_MEMBER(f) __typeof__(&f) f;
struct sv_cu_api {
  SV_CU_FUNCS(SV_CU_MEMBER)
};
#undef SV_CU_MEMBER
extern struct sv_cu_api sv_cu;

/* dlopen libcuda.so.1 and resolve every function; -1 with a message when that fails. */
int sv_cu_load(char *err, size_t errlen);
/* "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered" */
const char *sv_cu_error(CUresult r);
#endif
