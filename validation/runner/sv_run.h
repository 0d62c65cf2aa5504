/* schedvalidate: runs the selected candidates in child processes, one at a time, under a
   per-candidate time limit; a child that hangs or dies costs one candidate, not the run. */
#ifndef SV_RUN_H
#define SV_RUN_H
#include <jansson.h>

#include "sv_gpu.h"
#include "sv_select.h"

typedef struct {
  const sv_plan *plan;
  const sv_item *items;
  size_t n_items;
  sv_gpu_opts gpu;
  int timeout_s;
} sv_job;

typedef struct {
  json_t *device;    /* the first child's device description */
  json_t **records;  /* per item: the candidate's measured.json record */
  bool *ref_bad;     /* per kernel: the reference failed, outputs are not compared */
  char **ref_msg;
  int exit_code;     /* SV_EXIT_ code that ended the run early, else 0 */
  bool interrupted;  /* SIGINT or SIGTERM: the items without a record were not run */
  char message[2048];
} sv_results;

/* Fills res (allocated here; sv_results_free). Progress lines go to stderr. On SIGINT or SIGTERM
   it kills the child and returns with res->interrupted set. */
int sv_run(const sv_job *job, sv_results *res);
void sv_results_free(sv_results *res, size_t n_items, size_t n_kernels);

/* The hidden --run-one mode (what ncu profiles): one launch of candidate c of kernel k. */
int sv_run_one(const sv_plan *plan, size_t k, size_t c, int device);
#endif
