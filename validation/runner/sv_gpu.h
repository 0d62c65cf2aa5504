/* schedvalidate: the GPU side, run only in child processes (the parent never loads the driver):
   device description, per-kernel arrays, and compile/run/check/time/profile of one candidate. */
#ifndef SV_GPU_H
#define SV_GPU_H
#include <jansson.h>
#include <stdbool.h>

#include "sv_plan.h"

/* Process exit codes (documented in --help). */
enum {
  SV_EXIT_OK = 0,
  SV_EXIT_ERROR = 1,  /* the run failed (output not writable, a child that cannot start, ...) */
  SV_EXIT_USAGE = 2,
  SV_EXIT_PLAN = 3,
  SV_EXIT_NOGPU = 4,  /* no driver (libcuda.so.1) or cuInit/device failure */
  SV_EXIT_NOPERM = 5, /* GPU performance counters not permitted */
  SV_EXIT_RESTART = 10 /* child: the context is dead after a fault; start a new child */
};

typedef struct {
  bool metrics;         /* CUPTI range profiler */
  bool under_ncu;       /* --run-one under Nsight Compute: no CUPTI call at all (ncu owns the
                           profiler; a CUPTI call from the application crashed it on the H100) */
  int warmup, repeats;
  double max_kernel_ms; /* first run slower than this: keep it as the only timed run */
  int device;           /* device ordinal */
} sv_gpu_opts;

typedef struct sv_gpu sv_gpu;

/* Loads the driver, opens the device and (with metrics) CUPTI. Returns an SV_EXIT_ code;
   *device gets the device description of measured.json. */
int sv_gpu_open(sv_gpu **g, const sv_gpu_opts *o, json_t **device, char *err, size_t errlen);
void sv_gpu_close(sv_gpu *g);

/* Allocates and initializes kernel k's arrays. 0, or 1 when it does not fit (err says why), or
   an SV_EXIT_ code (> 1) when the device failed. */
int sv_gpu_kernel_begin(sv_gpu *g, const sv_kernel *k, char *err, size_t errlen);
void sv_gpu_kernel_end(sv_gpu *g);
/* Compiles candidates cands[0..n) of the current kernel ahead, on every CPU; later runs of them
   only load the CUBIN. */
void sv_gpu_precompile(sv_gpu *g, const size_t *cands, size_t n);

/* Runs candidate c of the current kernel once and keeps its outputs as the reference.
   0; -1 when it failed (err says why); SV_EXIT_ codes > 1 when the process must end. */
int sv_gpu_reference(sv_gpu *g, size_t c, char *err, size_t errlen);
/* Marks the reference unusable (outputs are then not compared), with the reason. */
void sv_gpu_reference_failed(sv_gpu *g, const char *why);

/* Measures candidate c of the current kernel: a measured.json candidate record. When c is the
   kernel's reference and runs correctly, its outputs become the reference. *exit_code is
   SV_EXIT_OK, or SV_EXIT_RESTART after a fault (context dead), or SV_EXIT_NOPERM. */
json_t *sv_gpu_candidate(sv_gpu *g, size_t c, int *exit_code);

/* The same at another launch (a search point: grid (G,1,1), block (V,W,1)); the kernels are
   grid-strided, so any launch computes the same result. Outputs are compared with the reference
   only with check. The module stays loaded for the next point of the same candidate; a first run
   slower than max_kernel_ms is the only timed run. */
json_t *sv_gpu_candidate_at(sv_gpu *g, size_t c, const unsigned grid[3], const unsigned block[3], bool check,
                            double max_kernel_ms, int *exit_code);

/* --run-one: compile candidate c, initialize, launch once, synchronize. 0 or -1 (err). */
int sv_gpu_run_once(sv_gpu *g, size_t c, char *err, size_t errlen);
#endif
