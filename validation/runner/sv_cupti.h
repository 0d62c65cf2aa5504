/* schedvalidate: metrics through the CUPTI Range Profiler (KernelReplay + AutoRange). */
#ifndef SV_CUPTI_H
#define SV_CUPTI_H
#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

enum { SV_CUPTI_OK = 0, SV_CUPTI_ERROR = -1, SV_CUPTI_NOPERM = -2 };

typedef struct sv_cupti sv_cupti;

/* Host side only (no GPU needed): the config image for metrics on chip, with the device's
   counter availability image when there is one (NULL offline). Reports the replay passes.
   sv_cupti_close releases either kind. */
int sv_cupti_host_open(sv_cupti **out, const char *chip, const uint8_t *avail,
                       const char *const *metrics, size_t n_metrics, size_t *passes, char *err,
                       size_t errlen);

/* Target side: cuptiProfilerInitialize, chip name and counter availability of the current
   context's device, then the host config. Returns SV_CUPTI_NOPERM when counters are restricted. */
int sv_cupti_open(sv_cupti **out, CUcontext ctx, int device_index, const char *const *metrics,
                  size_t n_metrics, size_t *passes, char *err, size_t errlen);
/* Profiles the one kernel launch that launch(arg) makes in ctx (it must return 0 when the
   launch worked); fills values[n_metrics]. */
int sv_cupti_profile(sv_cupti *c, CUcontext ctx, int (*launch)(void *), void *arg, double *values,
                     char *err, size_t errlen);
void sv_cupti_close(sv_cupti *c);
/* The chip name CUPTI reports for a device (needs cuInit); NULL on failure. */
const char *sv_cupti_chip_name(int device_index);
#endif
