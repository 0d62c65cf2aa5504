/* schedvalidate: NVRTC compilation of a candidate (no GPU needed). */
#ifndef SV_NVRTC_H
#define SV_NVRTC_H
#include <stddef.h>

/* Compiles prelude + "\n" + source for arch ("sm_90") into a CUBIN (*cubin malloc'ed). -1 with
   NVRTC's log (cut to a few KB) in err on failure. */
int sv_nvrtc_compile(const char *prelude, const char *source, const char *name, const char *arch,
                     char **cubin, size_t *size, char *err, size_t errlen);

/* One candidate of a batch: source and name in; cubin (malloc'ed) or err (malloc'ed) out. */
typedef struct {
  const char *source, *name;
  char *cubin;
  size_t size;
  char *err;
} sv_nvrtc_job;

/* Compiles every job (same prelude and arch) on up to `threads` threads; NVRTC compiles distinct
   programs concurrently. */
void sv_nvrtc_compile_all(const char *prelude, const char *arch, sv_nvrtc_job *jobs, size_t n,
                          int threads);
#endif
