/* schedvalidate: the driver API through dlopen (see sv_cu.h). */
#include "sv_cu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sv_cu_api sv_cu;

#define SV_STR_(x) #x
#define SV_STR(x) SV_STR_(x)

int sv_cu_load(char *err, size_t errlen) {
  /* SCHEDVALIDATE_LIBCUDA: another driver library, e.g. a CUDA forward-compatibility libcuda
     outside the loader's path (the tests point it at a mock). */
  const char *lib = getenv("SCHEDVALIDATE_LIBCUDA");
  if (!lib || !*lib) lib = "libcuda.so.1";
  void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    snprintf(err, errlen, "no NVIDIA driver: cannot load %s (%s)", lib, dlerror());
    return -1;
  }
#define SV_CU_LOAD(f)                                                                              \
  {                                                                                                \
    void *p_ = dlsym(h, SV_STR(f));                                                                \
    if (!p_) {                                                                                     \
      snprintf(err, errlen, "the NVIDIA driver is too old: libcuda.so.1 lacks %s", SV_STR(f));    \
      return -1;                                                                                   \
    }                                                                                              \
    memcpy(&sv_cu.f, &p_, sizeof p_);                                                              \
  }
  SV_CU_FUNCS(SV_CU_LOAD)
#undef SV_CU_LOAD
  return 0;
}

const char *sv_cu_error(CUresult r) {
  static _Thread_local char buf[256];
  const char *name = NULL, *text = NULL;
  if (sv_cu.cuGetErrorName) sv_cu.cuGetErrorName(r, &name);
  if (sv_cu.cuGetErrorString) sv_cu.cuGetErrorString(r, &text);
  snprintf(buf, sizeof buf, "%s (%d): %s", name ? name : "CUDA error", (int)r, text ? text : "no description");
  return buf;
}
