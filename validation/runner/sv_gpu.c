/* schedvalidate: GPU work of one child process (see sv_gpu.h). Every driver call is checked. */
#include "sv_gpu.h"

#include <math.h>
#include <nvrtc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sv_compare.h"
#include "sv_cu.h"
#include "sv_cupti.h"
#include "sv_metrics.h"
#include "sv_nvrtc.h"
#include "sv_output.h"

#define SV_LOG_MAX 4000 /* room for NVRTC's log in a message */

struct sv_gpu {
  sv_gpu_opts o;
  CUdevice dev;
  CUcontext ctx;
  char arch[16]; /* "sm_90" */
  CUdeviceptr flush;
  size_t flush_bytes;
  CUmodule flush_mod;
  CUfunction flush_fn;
  CUevent e0, e1;
  sv_cupti *cupti;
  /* current kernel */
  const sv_kernel *k;
  CUdeviceptr *d_arr, *d_pristine, *d_red;
  unsigned char **h_init; /* initial contents of each array */
  unsigned char **ref_out, **out;     /* written arrays: reference and current outputs */
  unsigned char (*ref_red)[8], (*out_red)[8];
  bool ref_ok;
  char ref_msg[512];
  sv_nvrtc_job *bins; /* per candidate of the kernel: compiled ahead by sv_gpu_precompile */
  /* current candidate */
  CUmodule mod;
  CUfunction fn;
  size_t mod_cand; /* 1 + the index of the candidate whose module is loaded, 0 none */
  unsigned grid[3], block[3]; /* its launch: the plan's, or a search point's */
  void **args;
};

static int msg(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

#define CU(call, what)                                                                             \
  do {                                                                                             \
    CUresult r_ = (call);                                                                          \
    if (r_ != CUDA_SUCCESS) {                                                                      \
      msg(err, errlen, "%s: %s", what, sv_cu_error(r_));                                           \
      return r_;                                                                                   \
    }                                                                                              \
  } while (0)

/* ---------------------------------------------------------------- device */

static int attr(sv_gpu *g, CUdevice_attribute a) {
  int v = 0;
  if (sv_cu.cuDeviceGetAttribute(&v, a, g->dev) != CUDA_SUCCESS) return -1;
  return v;
}

static void driver_string(char *buf, size_t len) {
  /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..." */
  buf[0] = 0;
  FILE *f = fopen("/proc/driver/nvidia/version", "r");
  if (!f) return;
  char line[512];
  if (fgets(line, sizeof line, f)) {
    const char *p = strstr(line, "Kernel Module");
    if (p) {
      p += strlen("Kernel Module");
      while (*p == ' ') p++;
      size_t n = strcspn(p, " \t\n");
      snprintf(buf, len, "%.*s", (int)n, p);
    } else {
      line[strcspn(line, "\n")] = 0;
      snprintf(buf, len, "%.100s", line);
    }
  }
  fclose(f);
}

static json_t *device_json(sv_gpu *g) {
  char name[256] = "", drv[128];
  sv_cu.cuDeviceGetName(name, sizeof name, g->dev);
  int cuver = 0, rmaj = 0, rmin = 0;
  sv_cu.cuDriverGetVersion(&cuver);
  nvrtcVersion(&rmaj, &rmin);
  size_t total = 0;
  sv_cu.cuDeviceTotalMem(&total, g->dev);
  driver_string(drv, sizeof drv);
  const char *chip = g->o.under_ncu ? NULL : sv_cupti_chip_name(g->o.device);
  char cc[16], nv[16];
  snprintf(cc, sizeof cc, "%d.%d", attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
           attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  snprintf(nv, sizeof nv, "%d.%d", rmaj, rmin);
  json_t *d = json_object();
  json_object_set_new(d, "name", sv_json_text(name));
  json_object_set_new(d, "cc", json_string(cc));
  json_object_set_new(d, "chip", chip ? json_string(chip) : json_null());
  json_object_set_new(d, "ordinal", json_integer(g->o.device));
  json_object_set_new(d, "sm_count", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)));
  json_object_set_new(d, "l2_bytes", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)));
  json_object_set_new(d, "sm_clock_mhz", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000));
  json_object_set_new(d, "mem_clock_mhz", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000));
  json_object_set_new(d, "mem_bus_bits", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)));
  json_object_set_new(d, "global_mem_bytes", json_integer((json_int_t)total));
  json_object_set_new(d, "driver", drv[0] ? sv_json_text(drv) : json_null());
  json_object_set_new(d, "cuda_driver_version", json_integer(cuver));
  json_object_set_new(d, "nvrtc_version", json_string(nv));
  json_object_set_new(d, "warp_size", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_WARP_SIZE)));
  json_object_set_new(d, "max_threads_per_block", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)));
  json_object_set_new(d, "max_threads_per_sm", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)));
  json_object_set_new(d, "max_blocks_per_sm", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)));
  json_object_set_new(d, "regs_per_sm", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)));
  json_object_set_new(d, "smem_per_sm", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)));
  json_object_set_new(d, "smem_per_block_optin", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)));
  json_object_set_new(d, "smem_reserved_per_block", json_integer(attr(g, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)));
  json_object_set_new(d, "global_l1_cache", json_boolean(attr(g, CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED) > 0));
  return d;
}

static const char sv_flush_src[] =
    "extern \"C\" __global__ void sv_flush_read(unsigned *p, unsigned long long n) {\n"
    "  unsigned acc = 0;\n"
    "  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (unsigned long long)gridDim.x * blockDim.x) acc ^= p[i];\n"
    "  if (acc == 0x9e3779b9u && n == 0) p[0] = acc; /* never true: keeps the loads */\n"
    "}\n";

/* The L2 flush buffer and its read kernel (see flush_l2). */
static int flush_open(sv_gpu *g, char *err, size_t errlen) {
  char *cubin;
  size_t n;
  if (sv_nvrtc_compile("", sv_flush_src, "sv_flush_read", g->arch, &cubin, &n, err, errlen)) return -1;
  CUresult r = sv_cu.cuModuleLoadData(&g->flush_mod, cubin);
  free(cubin);
  if (r == CUDA_SUCCESS) r = sv_cu.cuModuleGetFunction(&g->flush_fn, g->flush_mod, "sv_flush_read");
  if (r == CUDA_SUCCESS) r = sv_cu.cuMemAlloc(&g->flush, g->flush_bytes);
  if (r == CUDA_SUCCESS) r = sv_cu.cuMemsetD32(g->flush, 0x5a5a5a5a, g->flush_bytes / 4);
  if (r != CUDA_SUCCESS) return msg(err, errlen, "cannot set up the L2 flush: %s", sv_cu_error(r)), -1;
  return 0;
}

static int open_device(sv_gpu *g, json_t **device, char *err, size_t errlen) {
  int n = 0;
  CUresult r = sv_cu.cuInit(0);
  if (r != CUDA_SUCCESS) {
    msg(err, errlen, "no usable GPU: cuInit failed: %s", sv_cu_error(r));
    return SV_EXIT_NOGPU;
  }
  if ((r = sv_cu.cuDeviceGetCount(&n)) != CUDA_SUCCESS || n <= g->o.device) {
    msg(err, errlen, "no GPU with ordinal %d (%d device%s)", g->o.device, n, n == 1 ? "" : "s");
    return SV_EXIT_NOGPU;
  }
  if ((r = sv_cu.cuDeviceGet(&g->dev, g->o.device)) != CUDA_SUCCESS ||
      (r = sv_cu.cuDevicePrimaryCtxRetain(&g->ctx, g->dev)) != CUDA_SUCCESS ||
      (r = sv_cu.cuCtxSetCurrent(g->ctx)) != CUDA_SUCCESS) {
    msg(err, errlen, "cannot open GPU %d: %s", g->o.device, sv_cu_error(r));
    return SV_EXIT_NOGPU;
  }
  snprintf(g->arch, sizeof g->arch, "sm_%d%d", attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
           attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  *device = device_json(g);
  int l2 = attr(g, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  g->flush_bytes = (size_t)(l2 > 0 ? l2 : 1 << 20) * 2;
  if (flush_open(g, err, errlen)) return SV_EXIT_ERROR;
  if (sv_cu.cuEventCreate(&g->e0, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
      sv_cu.cuEventCreate(&g->e1, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    msg(err, errlen, "cannot create the timing events");
    return SV_EXIT_ERROR;
  }
  return SV_EXIT_OK;
}

int sv_gpu_open(sv_gpu **out, const sv_gpu_opts *o, json_t **device, char *err, size_t errlen) {
  *out = NULL;
  *device = NULL;
  if (sv_cu_load(err, errlen)) return SV_EXIT_NOGPU;
  sv_gpu *g = calloc(1, sizeof *g);
  if (!g) return msg(err, errlen, "out of memory"), SV_EXIT_ERROR;
  g->o = *o;
  int rc = open_device(g, device, err, errlen);
  if (!rc && o->metrics) {
    size_t passes = 0;
    int cr = sv_cupti_open(&g->cupti, g->ctx, o->device, sv_metric_names, SV_N_METRICS, &passes,
                           err, errlen);
    if (cr == SV_CUPTI_NOPERM) rc = SV_EXIT_NOPERM;
    else if (cr) { /* time without counters rather than not at all */
      fprintf(stderr, "schedvalidate: CUPTI unusable, timing only: %s\n", err);
      json_object_set_new(*device, "profiler_error", sv_json_text(err));
    } else {
      /* CUPTI may name the chip only once its profiler is initialized */
      const char *chip = sv_cupti_chip_name(o->device);
      if (chip) json_object_set_new(*device, "chip", json_string(chip));
      json_object_set_new(*device, "profiler_passes", json_integer((json_int_t)passes));
      fprintf(stderr, "schedvalidate: CUPTI: %zu replay pass%s per candidate for the %zu metrics\n", passes,
              passes == 1 ? "" : "es", SV_N_METRICS);
    }
  }
  if (rc) {
    sv_gpu_close(g);
    json_decref(*device);
    *device = NULL;
    return rc;
  }
  *out = g;
  return SV_EXIT_OK;
}

void sv_gpu_close(sv_gpu *g) {
  if (!g) return;
  sv_gpu_kernel_end(g);
  sv_cupti_close(g->cupti);
  if (g->flush) sv_cu.cuMemFree(g->flush);
  if (g->flush_mod) sv_cu.cuModuleUnload(g->flush_mod);
  if (g->e0) sv_cu.cuEventDestroy(g->e0);
  if (g->e1) sv_cu.cuEventDestroy(g->e1);
  if (g->ctx) sv_cu.cuDevicePrimaryCtxRelease(g->dev);
  free(g);
}

/* ---------------------------------------------------------------- kernel arrays */

static size_t n_elems(const sv_array *a) {
  return a->init == SV_INIT_BYTES ? (size_t)a->bytes : (size_t)a->bytes / (size_t)a->elem_size;
}

void sv_gpu_precompile(sv_gpu *g, const size_t *cands, size_t n) {
  const sv_kernel *k = g->k;
  if (!k || g->bins || !(g->bins = calloc(k->n_cands, sizeof *g->bins))) return;
  sv_nvrtc_job *jobs = calloc(n ? n : 1, sizeof *jobs);
  if (!jobs) return;
  for (size_t i = 0; i < n; i++) jobs[i] = (sv_nvrtc_job){k->cands[cands[i]].source, k->cands[cands[i]].kernel_name, NULL, 0, NULL};
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  sv_nvrtc_compile_all(k->prelude, g->arch, jobs, n, cpus > 1 ? (int)cpus : 1);
  for (size_t i = 0; i < n; i++) g->bins[cands[i]] = jobs[i];
  free(jobs);
}

static void unload(sv_gpu *g);

void sv_gpu_kernel_end(sv_gpu *g) {
  const sv_kernel *k = g->k;
  if (!k) return;
  unload(g); /* a module sv_gpu_candidate_at kept belongs to this kernel */
  for (size_t i = 0; g->bins && i < k->n_cands; i++) {
    free(g->bins[i].cubin);
    free(g->bins[i].err);
  }
  free(g->bins);
  g->bins = NULL;
  for (size_t i = 0; i < k->n_arrays; i++) {
    if (g->d_arr && g->d_arr[i]) sv_cu.cuMemFree(g->d_arr[i]);
    if (g->d_pristine && g->d_pristine[i]) sv_cu.cuMemFree(g->d_pristine[i]);
    if (g->h_init) free(g->h_init[i]);
    if (g->ref_out) free(g->ref_out[i]);
    if (g->out) free(g->out[i]);
  }
  for (size_t i = 0; g->d_red && i < k->n_reductions; i++)
    if (g->d_red[i]) sv_cu.cuMemFree(g->d_red[i]);
  free(g->d_arr);
  free(g->d_pristine);
  free(g->d_red);
  free(g->h_init);
  free(g->ref_out);
  free(g->out);
  free(g->ref_red);
  free(g->out_red);
  free(g->args);
  g->d_arr = g->d_pristine = g->d_red = NULL;
  g->h_init = g->ref_out = g->out = NULL;
  g->ref_red = g->out_red = NULL;
  g->args = NULL;
  g->k = NULL;
}

int sv_gpu_kernel_begin(sv_gpu *g, const sv_kernel *k, char *err, size_t errlen) {
  sv_gpu_kernel_end(g);
  g->k = k;
  g->ref_ok = false;
  snprintf(g->ref_msg, sizeof g->ref_msg, "the reference candidate has not run");
  size_t na = k->n_arrays ? k->n_arrays : 1, nr = k->n_reductions ? k->n_reductions : 1;
  g->d_arr = calloc(na, sizeof *g->d_arr);
  g->d_pristine = calloc(na, sizeof *g->d_pristine);
  g->h_init = calloc(na, sizeof *g->h_init);
  g->ref_out = calloc(na, sizeof *g->ref_out);
  g->out = calloc(na, sizeof *g->out);
  g->d_red = calloc(nr, sizeof *g->d_red);
  g->ref_red = calloc(nr, sizeof *g->ref_red);
  g->out_red = calloc(nr, sizeof *g->out_red);
  g->args = calloc(k->n_params ? k->n_params : 1, sizeof *g->args);
  if (!g->d_arr || !g->d_pristine || !g->h_init || !g->ref_out || !g->out || !g->d_red ||
      !g->ref_red || !g->out_red || !g->args)
    return msg(err, errlen, "out of host memory"), 1;

  size_t free_b = 0, total_b = 0;
  CUresult r = sv_cu.cuMemGetInfo(&free_b, &total_b);
  if (r != CUDA_SUCCESS) return msg(err, errlen, "cuMemGetInfo: %s", sv_cu_error(r)), SV_EXIT_RESTART;
  unsigned long long need = 0, pristine = 0;
  for (size_t i = 0; i < k->n_arrays; i++) {
    need += (unsigned long long)k->arrays[i].bytes;
    if (k->arrays[i].written) pristine += (unsigned long long)k->arrays[i].bytes;
  }
  need += 256ull * k->n_reductions;
  unsigned long long avail = free_b - free_b / 20 - (64ull << 20); /* headroom for the module */
  if (free_b < (64ull << 20) || need > avail)
    return msg(err, errlen, "the arrays need %llu bytes of device memory, the device has %zu free (of %zu)", need, free_b,
               total_b), 1;
  bool keep_pristine = need + pristine <= avail;

  for (size_t i = 0; i < k->n_arrays; i++) {
    const sv_array *a = &k->arrays[i];
    size_t bytes = (size_t)a->bytes, n = n_elems(a), es = a->init == SV_INIT_BYTES ? 1 : (size_t)a->elem_size;
    if (!(g->h_init[i] = malloc(bytes)) ||
        (a->written && (!(g->ref_out[i] = malloc(bytes)) || !(g->out[i] = malloc(bytes)))))
      return msg(err, errlen, "array %s: %zu bytes do not fit in host memory", a->name, bytes), 1;
    for (size_t e = 0; e < n; e++) sv_init_value(a, (int)i, e, g->h_init[i] + e * es);
    if ((r = sv_cu.cuMemAlloc(&g->d_arr[i], bytes)) != CUDA_SUCCESS)
      return msg(err, errlen, "array %s: cuMemAlloc(%zu): %s", a->name, bytes, sv_cu_error(r)), 1;
    if (a->written && keep_pristine) {
      if (sv_cu.cuMemAlloc(&g->d_pristine[i], bytes) != CUDA_SUCCESS) g->d_pristine[i] = 0;
      else if ((r = sv_cu.cuMemcpyHtoD(g->d_pristine[i], g->h_init[i], bytes)) != CUDA_SUCCESS)
        return msg(err, errlen, "array %s: cuMemcpyHtoD: %s", a->name, sv_cu_error(r)), SV_EXIT_RESTART;
    }
  }
  for (size_t i = 0; i < k->n_reductions; i++)
    if ((r = sv_cu.cuMemAlloc(&g->d_red[i], 8)) != CUDA_SUCCESS)
      return msg(err, errlen, "reduction %s: cuMemAlloc: %s", k->reductions[i].name, sv_cu_error(r)), 1;
  for (size_t i = 0; i < k->n_params; i++) {
    const sv_param *p = &k->params[i];
    g->args[i] = p->kind == SV_PARAM_ARRAY    ? (void *)&g->d_arr[p->index]
                 : p->kind == SV_PARAM_SCALAR ? (void *)k->scalars[p->index].value
                                              : (void *)&g->d_red[p->index];
  }
  return 0;
}

/* Puts the initial values back: every array (all) or only the written ones, and the reductions'
   identities. */
static CUresult reset_inputs(sv_gpu *g, bool all) {
  const sv_kernel *k = g->k;
  CUresult r = CUDA_SUCCESS;
  for (size_t i = 0; i < k->n_arrays && r == CUDA_SUCCESS; i++) {
    const sv_array *a = &k->arrays[i];
    if (!all && !a->written) continue;
    r = g->d_pristine[i] ? sv_cu.cuMemcpyDtoD(g->d_arr[i], g->d_pristine[i], (size_t)a->bytes)
                         : sv_cu.cuMemcpyHtoD(g->d_arr[i], g->h_init[i], (size_t)a->bytes);
  }
  for (size_t i = 0; i < k->n_reductions && r == CUDA_SUCCESS; i++) {
    unsigned char id[8];
    sv_red_identity(k->reductions[i].op, k->reductions[i].type, id);
    r = sv_cu.cuMemcpyHtoD(g->d_red[i], id, (size_t)k->reductions[i].type.size);
  }
  return r;
}

/* Evicts the L2 by *reading* a buffer twice its size, so that the L2 is left clean: a flush by
 * writing (cuMemset) would leave it full of dirty lines whose write-back the timed kernel would
 * pay for. The buffer is written once, at open. */
static CUresult flush_l2(sv_gpu *g) {
  unsigned long long words = g->flush_bytes / 4;
  void *args[] = {&g->flush, &words};
  return sv_cu.cuLaunchKernel(g->flush_fn, 1024, 1, 1, 256, 1, 1, 0, NULL, args, NULL);
}

/* ---------------------------------------------------------------- one candidate */

static void unload(sv_gpu *g) {
  if (g->mod) sv_cu.cuModuleUnload(g->mod);
  g->mod = NULL;
  g->fn = NULL;
  g->mod_cand = 0;
}

/* NVRTC-compiles and loads candidate c. -1 with the compiler log in err. */
static int build(sv_gpu *g, const sv_candidate *c, char *err, size_t errlen) {
  size_t idx = (size_t)(c - g->k->cands);
  if (g->mod && g->mod_cand == idx + 1) return 0; /* kept loaded by sv_gpu_candidate_at */
  unload(g);
  char *cubin;
  size_t n;
  sv_nvrtc_job *j = g->bins ? &g->bins[idx] : NULL;
  if (j && j->err) return msg(err, errlen, "%s", j->err);
  bool kept = j && j->cubin; /* stays with the kernel: a search loads it again after a switch */
  if (kept)
    cubin = j->cubin;
  else if (sv_nvrtc_compile(g->k->prelude, c->source, c->kernel_name, g->arch, &cubin, &n, err, errlen))
    return -1;
  CUresult r = sv_cu.cuModuleLoadData(&g->mod, cubin);
  if (!kept) free(cubin);
  if (r != CUDA_SUCCESS) {
    g->mod = NULL;
    return msg(err, errlen, "cuModuleLoadData: %s", sv_cu_error(r));
  }
  if ((r = sv_cu.cuModuleGetFunction(&g->fn, g->mod, c->kernel_name)) != CUDA_SUCCESS) {
    unload(g);
    return msg(err, errlen, "cuModuleGetFunction(%s): %s (is the kernel extern \"C\"?)", c->kernel_name,
               sv_cu_error(r));
  }
  g->mod_cand = idx + 1;
  return 0;
}

/* Sets the launch the next runs use: the plan's (c->grid, c->block), or a search point's. */
static void set_launch(sv_gpu *g, const unsigned grid[3], const unsigned block[3]) {
  memcpy(g->grid, grid, sizeof g->grid);
  memcpy(g->block, block, sizeof g->block);
}

/* Launches the loaded candidate at g->grid / g->block (the plan's, or a search point's). */
static CUresult launch(sv_gpu *g) {
  return sv_cu.cuLaunchKernel(g->fn, g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1],
                              g->block[2], 0, NULL, g->args, NULL);
}

typedef enum { RUN_OK, RUN_LAUNCH_ERROR, RUN_FAULT } run_status;

/* One timed launch: inputs reset, L2 flushed, events around the launch. */
static run_status timed_run(sv_gpu *g, bool all_inputs, float *ms,
                            char *err, size_t errlen) {
  CUresult r;
  if ((r = reset_inputs(g, all_inputs)) != CUDA_SUCCESS || (r = flush_l2(g)) != CUDA_SUCCESS ||
      (r = sv_cu.cuCtxSynchronize()) != CUDA_SUCCESS) {
    msg(err, errlen, "resetting the inputs: %s", sv_cu_error(r));
    return RUN_FAULT;
  }
  if ((r = sv_cu.cuEventRecord(g->e0, NULL)) != CUDA_SUCCESS) {
    msg(err, errlen, "cuEventRecord: %s", sv_cu_error(r));
    return RUN_FAULT;
  }
  if ((r = launch(g)) != CUDA_SUCCESS) {
    msg(err, errlen, "cuLaunchKernel(grid %u,%u,%u block %u,%u,%u): %s", g->grid[0], g->grid[1],
        g->grid[2], g->block[0], g->block[1], g->block[2], sv_cu_error(r));
    sv_cu.cuCtxSynchronize();
    /* An error of an earlier asynchronous operation leaves the context dead. */
    return r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ||
                   r == CUDA_ERROR_INVALID_HANDLE || r == CUDA_ERROR_NOT_FOUND
               ? RUN_LAUNCH_ERROR
               : RUN_FAULT;
  }
  if ((r = sv_cu.cuEventRecord(g->e1, NULL)) != CUDA_SUCCESS ||
      (r = sv_cu.cuEventSynchronize(g->e1)) != CUDA_SUCCESS ||
      (r = sv_cu.cuEventElapsedTime(ms, g->e0, g->e1)) != CUDA_SUCCESS) {
    msg(err, errlen, "the kernel failed: %s", sv_cu_error(r));
    return RUN_FAULT;
  }
  return RUN_OK;
}

/* Copies the written arrays and reductions to out / out_red. */
static CUresult fetch_outputs(sv_gpu *g, unsigned char **out, unsigned char (*out_red)[8]) {
  const sv_kernel *k = g->k;
  CUresult r = CUDA_SUCCESS;
  for (size_t i = 0; i < k->n_arrays && r == CUDA_SUCCESS; i++)
    if (k->arrays[i].written) r = sv_cu.cuMemcpyDtoH(out[i], g->d_arr[i], (size_t)k->arrays[i].bytes);
  for (size_t i = 0; i < k->n_reductions && r == CUDA_SUCCESS; i++) {
    memset(out_red[i], 0, 8);
    r = sv_cu.cuMemcpyDtoH(out_red[i], g->d_red[i], (size_t)k->reductions[i].type.size);
  }
  return r;
}

/* Compares out with the reference: the result object, and a message when they differ. */
static json_t *compare_outputs(sv_gpu *g, bool *wrong, char *why, size_t whylen) {
  const sv_kernel *k = g->k;
  bool tolerance = false;
  double worst = 0;
  *wrong = false;
  why[0] = 0;
  for (size_t i = 0; i < k->n_arrays; i++) {
    const sv_array *a = &k->arrays[i];
    if (!a->written) continue;
    const sv_ctype *t = a->init == SV_INIT_BYTES ? NULL : &a->type;
    size_t es = t ? (size_t)t->size : 1;
    sv_diff d = sv_compare(t, g->out[i], g->ref_out[i], n_elems(a));
    if (d.equal) continue;
    worst = fmax(worst, d.max_rel_diff);
    if (!*wrong) {
      char gv[64], rv[64];
      sv_format_elem(t, g->out[i] + (size_t)d.first * es, gv, sizeof gv);
      sv_format_elem(t, g->ref_out[i] + (size_t)d.first * es, rv, sizeof rv);
      snprintf(why, whylen, "array %s differs from the reference: first at element %lld (%s, reference %s)",
               a->name, (long long)d.first, gv, rv);
    }
    *wrong = true;
  }
  for (size_t i = 0; i < k->n_reductions; i++) {
    const sv_reduction *rd = &k->reductions[i];
    sv_diff d = sv_compare(&rd->type, g->out_red[i], g->ref_red[i], 1);
    if (d.equal) continue;
    worst = fmax(worst, d.max_rel_diff);
    if (d.max_rel_diff <= sv_reduction_tolerance(rd->type)) {
      tolerance = true;
      continue;
    }
    if (!*wrong) {
      char gv[64], rv[64];
      sv_format_elem(&rd->type, g->out_red[i], gv, sizeof gv);
      sv_format_elem(&rd->type, g->ref_red[i], rv, sizeof rv);
      snprintf(why, whylen, "reduction %s is %s, the reference's %s (relative difference %.3g)", rd->name, gv,
               rv, d.max_rel_diff);
    }
    *wrong = true;
  }
  json_t *res = json_object();
  json_object_set_new(res, "equal", json_string(*wrong ? "differs" : tolerance ? "tolerance" : "bitwise"));
  json_object_set_new(res, "max_rel_diff", isfinite(worst) ? json_real(worst) : json_null()); /* NaN or inf involved */
  return res;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

static json_t *timing_json(const float *ms, int n) {
  float *s = malloc((size_t)n * sizeof *s);
  json_t *t = json_object(), *runs = json_array();
  for (int i = 0; i < n; i++) json_array_append_new(runs, json_real(1000.0 * ms[i]));
  if (s) {
    memcpy(s, ms, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_float);
    double med = n % 2 ? s[n / 2] : 0.5 * ((double)s[n / 2 - 1] + s[n / 2]);
    json_object_set_new(t, "median", json_real(1000.0 * med));
    json_object_set_new(t, "min", json_real(1000.0 * s[0]));
    json_object_set_new(t, "max", json_real(1000.0 * s[n - 1]));
    free(s);
  }
  json_object_set_new(t, "runs", runs);
  return t;
}

static int profiled_launch(void *g) { return launch(g) != CUDA_SUCCESS; }

static void set_status(json_t *rec, const char *status, const char *message) {
  json_object_set_new(rec, "status", json_string(status));
  if (message && message[0]) json_object_set_new(rec, "message", sv_json_text(message));
}

static void keep_reference(sv_gpu *g) {
  const sv_kernel *k = g->k;
  for (size_t i = 0; i < k->n_arrays; i++)
    if (k->arrays[i].written) memcpy(g->ref_out[i], g->out[i], (size_t)k->arrays[i].bytes);
  memcpy(g->ref_red, g->out_red, (k->n_reductions ? k->n_reductions : 1) * sizeof *g->ref_red);
  g->ref_ok = true;
}

void sv_gpu_reference_failed(sv_gpu *g, const char *why) {
  g->ref_ok = false;
  snprintf(g->ref_msg, sizeof g->ref_msg, "%.500s", why);
}

/* Measures candidate ci at the launch in g->grid/block. Without check the outputs are not
   copied back (no "result"); with keep the module stays loaded for the next point. */
static json_t *measure(sv_gpu *g, size_t ci, bool check, bool keep, double max_kernel_ms, int *exit_code) {
  const sv_candidate *c = &g->k->cands[ci];
  /* the reference at its plan launch (always checked); a search point of it is compared with it */
  bool is_ref = ci == g->k->reference && !keep;
  char err[SV_LOG_MAX + 512], note[1024] = "";
  size_t errlen = sizeof err;
  json_t *rec = json_object();
  json_object_set_new(rec, "id", json_integer(c->id));
  json_object_set_new(rec, "status", json_string("ok")); /* here, so that it prints second */
  *exit_code = SV_EXIT_OK;
  if (build(g, c, err, errlen)) {
    set_status(rec, "compile_error", err);
    if (is_ref) sv_gpu_reference_failed(g, err);
    return rec;
  }
  int regs = 0;
  if (sv_cu.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, g->fn) == CUDA_SUCCESS)
    json_object_set_new(rec, "registers", json_integer(regs));

  int nruns = g->o.repeats;
  float *ms = calloc((size_t)nruns + 1, sizeof *ms);
  if (!ms) {
    set_status(rec, "launch_error", "out of host memory");
    return rec;
  }
  run_status rs = timed_run(g, true, &ms[0], err, errlen);
  CUresult r = rs == RUN_OK && check ? fetch_outputs(g, g->out, g->out_red) : CUDA_SUCCESS;
  if (rs == RUN_OK && r != CUDA_SUCCESS) {
    snprintf(err, errlen, "copying the outputs back: %s", sv_cu_error(r));
    rs = RUN_FAULT;
  }
  if (rs != RUN_OK) {
    set_status(rec, rs == RUN_FAULT ? "fault" : "launch_error", err);
    if (is_ref) sv_gpu_reference_failed(g, err);
    if (rs == RUN_FAULT) *exit_code = SV_EXIT_RESTART;
    free(ms);
    unload(g);
    return rec;
  }
  bool wrong = false;
  if (is_ref) {
    keep_reference(g);
    json_t *res = json_object();
    json_object_set_new(res, "equal", json_string("bitwise"));
    json_object_set_new(res, "max_rel_diff", json_real(0));
    json_object_set_new(rec, "result", res);
  } else if (check) {
    if (g->ref_ok)
      json_object_set_new(rec, "result", compare_outputs(g, &wrong, note, sizeof note));
    else
      snprintf(note, sizeof note, "outputs not compared: the reference candidate %lld failed: %.900s",
               (long long)g->k->cands[g->k->reference].id, g->ref_msg);
  }

  /* Timing: the checked run is the first warm-up. */
  int got = 0;
  if (ms[0] > max_kernel_ms) {
    got = 1;
    size_t nl = strlen(note);
    snprintf(note + nl, sizeof note - nl, "%sfirst run took %.1f ms > --max-kernel-ms: timed once",
             nl ? "; " : "", ms[0]);
  } else {
    for (int w = 1; w < g->o.warmup && rs == RUN_OK; w++) {
      float dummy;
      rs = timed_run(g, false, &dummy, err, errlen);
    }
    for (; got < nruns && rs == RUN_OK; got++) rs = timed_run(g, false, &ms[got], err, errlen);
  }
  if (rs != RUN_OK) {
    /* It ran once and failed later: report the failure, not a partial time. */
    set_status(rec, rs == RUN_FAULT ? "fault" : "launch_error", err);
    if (rs == RUN_FAULT) *exit_code = SV_EXIT_RESTART;
    free(ms);
    unload(g);
    return rec;
  }
  json_object_set_new(rec, "time_us", timing_json(ms, got));
  free(ms);

  if (g->cupti) {
    double v[SV_N_METRICS];
    CUresult rr = reset_inputs(g, false);
    if (rr == CUDA_SUCCESS) rr = flush_l2(g);
    if (rr == CUDA_SUCCESS) rr = sv_cu.cuCtxSynchronize();
    int pr = rr == CUDA_SUCCESS ? sv_cupti_profile(g->cupti, g->ctx, profiled_launch, g, v, err, errlen)
                                : (snprintf(err, errlen, "resetting inputs: %s", sv_cu_error(rr)), SV_CUPTI_ERROR);
    if (pr == SV_CUPTI_OK) {
      json_t *m = json_object();
      for (size_t i = 0; i < SV_N_METRICS; i++)
        json_object_set_new(m, sv_metric_names[i], isfinite(v[i]) ? json_real(v[i]) : json_null());
      json_object_set_new(rec, "metrics", m);
    } else {
      size_t nl = strlen(note);
      snprintf(note + nl, sizeof note - nl, "%smetrics not collected: %.600s", nl ? "; " : "", err);
      if (pr == SV_CUPTI_NOPERM) *exit_code = SV_EXIT_NOPERM;
      else if (sv_cu.cuCtxSynchronize() != CUDA_SUCCESS) *exit_code = SV_EXIT_RESTART;
    }
  }
  if (!keep) unload(g);
  set_status(rec, wrong ? "wrong_result" : "ok", note);
  return rec;
}

json_t *sv_gpu_candidate(sv_gpu *g, size_t ci, int *exit_code) {
  set_launch(g, g->k->cands[ci].grid, g->k->cands[ci].block);
  return measure(g, ci, true, false, g->o.max_kernel_ms, exit_code);
}

json_t *sv_gpu_candidate_at(sv_gpu *g, size_t ci, const unsigned grid[3], const unsigned block[3], bool check,
                            double max_kernel_ms, int *exit_code) {
  set_launch(g, grid, block);
  return measure(g, ci, check, true, max_kernel_ms, exit_code);
}

int sv_gpu_reference(sv_gpu *g, size_t ci, char *err, size_t errlen) {
  const sv_candidate *c = &g->k->cands[ci];
  float ms;
  set_launch(g, c->grid, c->block);
  if (build(g, c, err, errlen)) return -1;
  run_status rs = timed_run(g, true, &ms, err, errlen);
  CUresult r = rs == RUN_OK ? fetch_outputs(g, g->out, g->out_red) : CUDA_SUCCESS;
  unload(g);
  if (rs == RUN_OK && r != CUDA_SUCCESS) {
    msg(err, errlen, "copying the outputs back: %s", sv_cu_error(r));
    rs = RUN_FAULT;
  }
  if (rs != RUN_OK) return rs == RUN_FAULT ? SV_EXIT_RESTART : -1;
  keep_reference(g);
  return 0;
}

int sv_gpu_run_once(sv_gpu *g, size_t ci, char *err, size_t errlen) {
  const sv_candidate *c = &g->k->cands[ci];
  float ms;
  set_launch(g, c->grid, c->block);
  if (build(g, c, err, errlen)) return -1;
  run_status rs = timed_run(g, true, &ms, err, errlen);
  unload(g);
  return rs == RUN_OK ? 0 : -1;
}
