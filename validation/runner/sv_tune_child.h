/* schedvalidate tune: one GPU child process that measures search points on request, under a time
   limit per point; a child that faults, dies or hangs costs one point and is replaced. */
#ifndef SV_TUNE_CHILD_H
#define SV_TUNE_CHILD_H
#include <jansson.h>
#include <stdbool.h>

#include "sv_gpu.h"

typedef struct sv_tchild sv_tchild;

sv_tchild *sv_tchild_new(const sv_plan *plan, const sv_gpu_opts *o, int timeout_s);
void sv_tchild_free(sv_tchild *c);

/* Makes kernel k current: its arrays, the CUBINs of cands[0..n) (plan indices) and the reference's
   outputs. 0; -1 when the kernel cannot run here (why); an SV_EXIT_ code > 1 when the run must end
   (no GPU, ...). */
int sv_tchild_kernel(sv_tchild *c, size_t k, const size_t *cands, size_t n, char *why, size_t len);
/* Whether the current kernel's reference ran (outputs can be checked), and why not. */
bool sv_tchild_reference_ok(const sv_tchild *c, const char **why);

/* One point of candidate cand (plan index) of the current kernel: a measured.json candidate
   record. A child that dies or sends nothing for the time limit gives a "fault" or "timeout"
   record and is replaced at the next call. NULL with *fatal (an SV_EXIT_ code) and why when the
   run must end. */
json_t *sv_tchild_point(sv_tchild *c, size_t cand, const unsigned grid[3], const unsigned block[3], bool check,
                        double max_kernel_ms, int *fatal, char *why, size_t len);

/* Monotonic seconds (per-point costs, budgets). */
double sv_tchild_clock_s(void);

/* The device description the first child sent (borrowed), or NULL. */
const json_t *sv_tchild_device(const sv_tchild *c);
#endif
