/* schedvalidate: NVRTC compilation. */
#include "sv_nvrtc.h"

#include <nvrtc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SV_LOG_MAX 4000

/* "--include-path=<toolkit>/include" when the toolkit's headers are there, so that candidates may
   include e.g. <cuda_fp16.h>. */
static int toolkit_include(char *opt, size_t len) {
  const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
    char probe[4096];
    if (!roots[i] || !*roots[i] || strlen(roots[i]) > 4000) continue;
    snprintf(probe, sizeof probe, "%s/include/cuda_fp16.h", roots[i]);
    if (access(probe, R_OK) == 0) {
      snprintf(opt, len, "--include-path=%s/include", roots[i]);
      return 1;
    }
  }
  return 0;
}

int sv_nvrtc_compile(const char *prelude, const char *source, const char *name, const char *arch,
                     char **cubin, size_t *size, char *err, size_t errlen) {
  *cubin = NULL;
  *size = 0;
  size_t pl = strlen(prelude), sl = strlen(source);
  char *src = malloc(pl + sl + 2);
  if (!src) return snprintf(err, errlen, "out of memory"), -1;
  memcpy(src, prelude, pl);
  src[pl] = '\n';
  memcpy(src + pl + 1, source, sl + 1);
  nvrtcProgram prog;
  nvrtcResult nr = nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL);
  free(src);
  if (nr != NVRTC_SUCCESS) return snprintf(err, errlen, "nvrtcCreateProgram: %s", nvrtcGetErrorString(nr)), -1;
  char archopt[48], incopt[4200];
  snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
  const char *opts[4] = {archopt, "-default-device", "-lineinfo", incopt};
  nr = nvrtcCompileProgram(prog, toolkit_include(incopt, sizeof incopt) ? 4 : 3, opts);
  if (nr != NVRTC_SUCCESS) {
    size_t ln = 0;
    char *log = NULL;
    if (nvrtcGetProgramLogSize(prog, &ln) == NVRTC_SUCCESS && (log = malloc(ln + 1)) &&
        nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
      log[ln] = 0;
    snprintf(err, errlen, "NVRTC (%s): %s: %.*s", arch, nvrtcGetErrorString(nr), SV_LOG_MAX,
             log ? log : "");
    free(log);
    nvrtcDestroyProgram(&prog);
    return -1;
  }
  size_t n = 0;
  char *bin = NULL;
  if ((nr = nvrtcGetCUBINSize(prog, &n)) != NVRTC_SUCCESS || !n || !(bin = malloc(n)) ||
      (nr = nvrtcGetCUBIN(prog, bin)) != NVRTC_SUCCESS) {
    free(bin);
    nvrtcDestroyProgram(&prog);
    return snprintf(err, errlen, "NVRTC gave no CUBIN for %s: %s", arch, nvrtcGetErrorString(nr)), -1;
  }
  nvrtcDestroyProgram(&prog);
  *cubin = bin;
  *size = n;
  return 0;
}

typedef struct {
  const char *prelude, *arch;
  sv_nvrtc_job *jobs;
  size_t n;
  atomic_size_t next;
} batch;

static void *worker(void *p) {
  batch *b = p;
  char err[8192];
  for (size_t i; (i = atomic_fetch_add(&b->next, 1)) < b->n;) {
    sv_nvrtc_job *j = &b->jobs[i];
    if (sv_nvrtc_compile(b->prelude, j->source, j->name, b->arch, &j->cubin, &j->size, err, sizeof err))
      j->err = strdup(err);
  }
  return NULL;
}

void sv_nvrtc_compile_all(const char *prelude, const char *arch, sv_nvrtc_job *jobs, size_t n,
                          int threads) {
  batch b = {prelude, arch, jobs, n, 0};
  if (threads > (int)n) threads = (int)n;
  if (threads > 64) threads = 64;
  pthread_t t[64];
  int started = 0;
  for (; started < threads - 1; started++)
    if (pthread_create(&t[started], NULL, worker, &b)) break;
  worker(&b); /* this thread works too, and alone when no thread could start */
  for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
}
