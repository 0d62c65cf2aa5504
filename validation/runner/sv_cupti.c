/* schedvalidate: CUPTI Range Profiler from C (shared/notes/cupti-from-c.md §1). The config image
   is built once per process; each profile resets the counter data image. */
#include "sv_cupti.h"

#include <stdbool.h>

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sv_cupti {
  CUpti_Profiler_Host_Object *host;
  uint8_t *config;
  size_t config_size;
  const char **metrics;
  size_t n_metrics;
  int target; /* cuptiProfilerInitialize done */
  CUpti_RangeProfiler_Object *rp;
  uint8_t *counter_data;
  size_t counter_data_size;
};

static int fail(char *err, size_t errlen, CUptiResult r, const char *fmt, ...) {
  const char *s = NULL;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) s = "unknown CUPTI error";
  int k = 0;
  va_list ap;
  va_start(ap, fmt);
  k = vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  if (k >= 0 && (size_t)k < errlen) snprintf(err + k, errlen - (size_t)k, ": %s (CUPTI %d)", s, (int)r);
  return r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? SV_CUPTI_NOPERM : SV_CUPTI_ERROR;
}

#define CK(call, ...)                                                                              \
  do {                                                                                             \
    CUptiResult r_ = (call);                                                                       \
    if (r_ != CUPTI_SUCCESS) return fail(err, errlen, r_, __VA_ARGS__);                            \
  } while (0)

static int host_config(sv_cupti *c, const char *chip, const uint8_t *avail, size_t *passes,
                       char *err, size_t errlen) {
  CUpti_Profiler_Host_Initialize_Params hi = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  hi.pChipName = chip;
  hi.pCounterAvailabilityImage = avail;
  CK(cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize(chip %s)", chip);
  c->host = hi.pHostObject;
  CUpti_Profiler_Host_ConfigAddMetrics_Params am = {.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  am.pHostObject = c->host;
  am.ppMetricNames = c->metrics;
  am.numMetrics = c->n_metrics;
  CK(cuptiProfilerHostConfigAddMetrics(&am),
     "cuptiProfilerHostConfigAddMetrics: one of the %zu metric names is not known for chip %s",
     c->n_metrics, chip);
  CUpti_Profiler_Host_GetConfigImageSize_Params cs = {.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  cs.pHostObject = c->host;
  CK(cuptiProfilerHostGetConfigImageSize(&cs), "cuptiProfilerHostGetConfigImageSize");
  c->config_size = cs.configImageSize;
  if (!(c->config = malloc(c->config_size ? c->config_size : 1))) {
    snprintf(err, errlen, "out of memory for the CUPTI config image");
    return SV_CUPTI_ERROR;
  }
  CUpti_Profiler_Host_GetConfigImage_Params ci = {.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  ci.pHostObject = c->host;
  ci.configImageSize = c->config_size;
  ci.pConfigImage = c->config;
  CK(cuptiProfilerHostGetConfigImage(&ci), "cuptiProfilerHostGetConfigImage");
  CUpti_Profiler_Host_GetNumOfPasses_Params np = {.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  np.configImageSize = c->config_size;
  np.pConfigImage = c->config;
  CK(cuptiProfilerHostGetNumOfPasses(&np), "cuptiProfilerHostGetNumOfPasses");
  *passes = np.numOfPasses;
  return SV_CUPTI_OK;
}

/* The host side alone (ctx NULL: chip and avail given), or the device's (chip and counter
   availability read from ctx's device). */
static int open_cupti(sv_cupti **out, CUcontext ctx, int device_index, const char *chip,
                      const uint8_t *avail, const char *const *metrics, size_t n_metrics,
                      size_t *passes, char *err, size_t errlen);

int sv_cupti_host_open(sv_cupti **out, const char *chip, const uint8_t *avail,
                       const char *const *metrics, size_t n_metrics, size_t *passes, char *err,
                       size_t errlen) {
  return open_cupti(out, NULL, 0, chip, avail, metrics, n_metrics, passes, err, errlen);
}

static void release_host(sv_cupti *c) {
  if (c->host) {
    CUpti_Profiler_Host_Deinitialize_Params d = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    d.pHostObject = c->host;
    cuptiProfilerHostDeinitialize(&d);
  }
  free(c->config);
}

/* cuptiDeviceGetChipName crashes (seen on an H100, CUDA 13.0) unless the profiler is initialized:
 * initialize around the call and keep a copy of the name. */
const char *sv_cupti_chip_name(int device_index) {
  static char name[64];
  CUpti_Profiler_Initialize_Params pi = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  bool inited = cuptiProfilerInitialize(&pi) == CUPTI_SUCCESS; /* fails under the tests' mock driver */
  CUpti_Device_GetChipName_Params p = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  p.deviceIndex = (size_t)device_index;
  bool ok = cuptiDeviceGetChipName(&p) == CUPTI_SUCCESS && p.pChipName;
  if (ok) snprintf(name, sizeof name, "%s", p.pChipName);
  if (inited) {
    CUpti_Profiler_DeInitialize_Params pd = {.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
    cuptiProfilerDeInitialize(&pd);
  }
  return ok ? name : NULL;
}

static int target_open(sv_cupti *c, CUcontext ctx, int device_index, size_t *passes, char *err,
                       size_t errlen) {
  CUpti_Profiler_Initialize_Params pi = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  CK(cuptiProfilerInitialize(&pi), "cuptiProfilerInitialize");
  c->target = 1;
  const char *chip = sv_cupti_chip_name(device_index);
  if (!chip) {
    snprintf(err, errlen, "cuptiDeviceGetChipName failed for device %d", device_index);
    return SV_CUPTI_ERROR;
  }
  CUpti_Profiler_GetCounterAvailability_Params ca = {.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  ca.ctx = ctx;
  CK(cuptiProfilerGetCounterAvailability(&ca), "cuptiProfilerGetCounterAvailability (size)");
  uint8_t *avail = malloc(ca.counterAvailabilityImageSize ? ca.counterAvailabilityImageSize : 1);
  if (!avail) {
    snprintf(err, errlen, "out of memory");
    return SV_CUPTI_ERROR;
  }
  ca.pCounterAvailabilityImage = avail;
  CUptiResult r = cuptiProfilerGetCounterAvailability(&ca);
  int rc = r == CUPTI_SUCCESS ? host_config(c, chip, avail, passes, err, errlen)
                              : fail(err, errlen, r, "cuptiProfilerGetCounterAvailability");
  free(avail);
  return rc;
}

int sv_cupti_open(sv_cupti **out, CUcontext ctx, int device_index, const char *const *metrics,
                  size_t n_metrics, size_t *passes, char *err, size_t errlen) {
  return open_cupti(out, ctx, device_index, NULL, NULL, metrics, n_metrics, passes, err, errlen);
}

static int open_cupti(sv_cupti **out, CUcontext ctx, int device_index, const char *chip,
                      const uint8_t *avail, const char *const *metrics, size_t n_metrics,
                      size_t *passes, char *err, size_t errlen) {
  *out = NULL;
  sv_cupti *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(err, errlen, "out of memory");
    return SV_CUPTI_ERROR;
  }
  c->metrics = (const char **)metrics;
  c->n_metrics = n_metrics;
  int rc = ctx ? target_open(c, ctx, device_index, passes, err, errlen)
               : host_config(c, chip, avail, passes, err, errlen);
  if (rc) sv_cupti_close(c);
  else *out = c;
  return rc;
}

/* Enables the range profiler on the context and sizes the counter data image. */
static int enable(sv_cupti *c, CUcontext ctx, char *err, size_t errlen) {
  CUpti_RangeProfiler_Enable_Params en = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  en.ctx = ctx;
  CK(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable");
  c->rp = en.pRangeProfilerObject;
  CUpti_RangeProfiler_GetCounterDataSize_Params ds = {.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  ds.pRangeProfilerObject = c->rp;
  ds.pMetricNames = c->metrics;
  ds.numMetrics = c->n_metrics;
  ds.maxNumOfRanges = 1;
  ds.maxNumRangeTreeNodes = 1;
  CK(cuptiRangeProfilerGetCounterDataSize(&ds), "cuptiRangeProfilerGetCounterDataSize");
  if (ds.counterDataSize > c->counter_data_size) {
    free(c->counter_data);
    c->counter_data_size = 0;
    if (!(c->counter_data = malloc(ds.counterDataSize))) {
      snprintf(err, errlen, "out of memory for the counter data image");
      return SV_CUPTI_ERROR;
    }
  }
  c->counter_data_size = ds.counterDataSize;
  return SV_CUPTI_OK;
}

static void disable(sv_cupti *c) {
  if (!c->rp) return;
  CUpti_RangeProfiler_Disable_Params d = {.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
  d.pRangeProfilerObject = c->rp;
  cuptiRangeProfilerDisable(&d);
  c->rp = NULL;
}

static int collect(sv_cupti *c, int (*launch)(void *), void *arg, double *values, char *err,
                   size_t errlen) {
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci = {
      .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  ci.pRangeProfilerObject = c->rp;
  ci.counterDataSize = c->counter_data_size;
  ci.pCounterData = c->counter_data;
  CK(cuptiRangeProfilerCounterDataImageInitialize(&ci), "cuptiRangeProfilerCounterDataImageInitialize");
  CUpti_RangeProfiler_SetConfig_Params sc = {.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  sc.pRangeProfilerObject = c->rp;
  sc.configSize = c->config_size;
  sc.pConfig = c->config;
  sc.counterDataImageSize = c->counter_data_size;
  sc.pCounterDataImage = c->counter_data;
  sc.range = CUPTI_AutoRange;
  sc.replayMode = CUPTI_KernelReplay;
  sc.maxRangesPerPass = 1;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  CK(cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig");
  /* Kernel replay submits every pass within one launch; the loop only guards against a CUPTI
     that asks for more launches. */
  for (int round = 0;; round++) {
    CUpti_RangeProfiler_Start_Params st = {.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    st.pRangeProfilerObject = c->rp;
    CK(cuptiRangeProfilerStart(&st), "cuptiRangeProfilerStart");
    int lr = launch(arg);
    CUpti_RangeProfiler_Stop_Params sp = {.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    sp.pRangeProfilerObject = c->rp;
    CUptiResult r = cuptiRangeProfilerStop(&sp);
    if (lr) {
      snprintf(err, errlen, "the kernel launch under the profiler failed");
      return SV_CUPTI_ERROR;
    }
    if (r != CUPTI_SUCCESS) return fail(err, errlen, r, "cuptiRangeProfilerStop");
    if (sp.isAllPassSubmitted) break;
    if (round >= 16) {
      snprintf(err, errlen, "CUPTI still wants passes after %d launches", round + 1);
      return SV_CUPTI_ERROR;
    }
  }
  CUpti_RangeProfiler_DecodeData_Params dd = {.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  dd.pRangeProfilerObject = c->rp;
  CK(cuptiRangeProfilerDecodeData(&dd), "cuptiRangeProfilerDecodeData");
  CUpti_RangeProfiler_GetCounterDataInfo_Params di = {.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  di.pCounterDataImage = c->counter_data;
  di.counterDataImageSize = c->counter_data_size;
  CK(cuptiRangeProfilerGetCounterDataInfo(&di), "cuptiRangeProfilerGetCounterDataInfo");
  if (di.numTotalRanges < 1) {
    snprintf(err, errlen, "CUPTI recorded no range (%zu dropped)", dd.numOfRangeDropped);
    return SV_CUPTI_ERROR;
  }
  CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
  ev.pHostObject = c->host;
  ev.pCounterDataImage = c->counter_data;
  ev.counterDataImageSize = c->counter_data_size;
  ev.rangeIndex = 0;
  ev.ppMetricNames = c->metrics;
  ev.numMetrics = c->n_metrics;
  ev.pMetricValues = values;
  CK(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
  return SV_CUPTI_OK;
}

/* The range profiler is enabled only for the profiled launch, so that the timed launches run
   without it. */
int sv_cupti_profile(sv_cupti *c, CUcontext ctx, int (*launch)(void *), void *arg, double *values,
                     char *err, size_t errlen) {
  int rc = enable(c, ctx, err, errlen);
  if (!rc) rc = collect(c, launch, arg, values, err, errlen);
  disable(c);
  return rc;
}

void sv_cupti_close(sv_cupti *c) {
  if (!c) return;
  disable(c);
  free(c->counter_data);
  release_host(c);
  if (c->target) {
    CUpti_Profiler_DeInitialize_Params d = {.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
    cuptiProfilerDeInitialize(&d);
  }
  free(c);
}
