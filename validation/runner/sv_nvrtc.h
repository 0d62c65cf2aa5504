/* schedvalidate: NVRTC compilation of a candidate (no GPU needed). */
#ifndef SV_NVRTC_H
#define SV_NVRTC_H
#include <stddef.h>

/* Compiles prelude + "\n" + source for arch ("sm_90") into a CUBIN (*cubin malloc'ed). -1 with
   NVRTC's log (cut to a few KB) in err on failure. */
int sv_nvrtc_compile(const char *prelude, const char *source, const char *name, const char *arch,
                     char **cubin, size_t *size, char *err, size_t errlen);
#endif
