/* Internal to rank/: where a sample that is a prefix of a trace stops.
 *
 * A prefix stops after `cap` warp instructions. A screening prefix of one SM's trace may end
 * before every reference of the body has run once, since the SM's resident warps advance
 * together, one instruction each in turn: on 64 warps, himeno's 32 references take 2,048
 * instructions for one pass of the body, and a prefix of 1,250 left 4 of its 7 arrays unread;
 * conv3d's store follows a window loop of 27 steps (54 loads a warp, 3,456 instructions). An
 * unreached reference cannot be extrapolated and counted nothing: such candidates screened at
 * 10.2 M load requests where every schedule of himeno makes 16.5 M, and at 530 MB of DRAM reads
 * where the H200 read 860-975 MB (half of himeno's 1,008 screening samples and 583 of conv3d's
 * 920 had such a reference).
 *
 * So a screening prefix (limit > cap) may go on past cap while a reference has not run: to
 * where the last of them is expected to run for the first time, and as many instructions again
 * (the second part, whose rate the extrapolation takes: rank.c's split), but never past limit.
 * A reference r is expected after its warp has issued ahead[r] instructions (the executions of
 * the references before it in program order per execution of r: 1 + 2 x 1,024 for gemm's store
 * after its k loop), that is at W (ahead[r] + 1) instructions, W the warps in turn: the
 * instructions between the first warp's first two. A reference expected past limit (gemm's
 * store; conv3d's on a limit of two caps, rank.c; one that only an edge's blocks run) is not
 * waited for, nor one that has not come by twice its expected place. A prefix whose references
 * all ran within cap stops at cap; one whose last reference ran later, at twice that. */
#ifndef SP_RANK_PREFIX_STOP_H
#define SP_RANK_PREFIX_STOP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "schedpredict/traces.h"

typedef struct sp_prefix_stop {
  int64_t cap, limit; /* limit >= cap; limit == cap: a plain cap */
  int nrefs;
  double *ahead;      /* [nrefs]: instructions of a warp before the reference first runs; < 0:
                         not waited for (the run never executes it, or it has run) */
  int64_t turn;       /* W: warps in turn; 0 until the first warp issues again */
  int64_t late;       /* the last first run of a waited-for reference past cap; 0: none */
  int first_sm, first_warp;
  int64_t first_block;
} sp_prefix_stop;

/* ahead[r] < 0: reference r is not waited for. 0, or -1 on allocation failure. */
static inline int sp_prefix_stop_init(sp_prefix_stop *p, int64_t cap, int64_t limit, int nrefs,
                                      const double *ahead) {
  *p = (sp_prefix_stop){.cap = cap, .limit = limit > cap ? limit : cap, .nrefs = nrefs};
  p->ahead = calloc((size_t)(nrefs > 0 ? nrefs : 1), sizeof *p->ahead);
  if (!p->ahead) return -1;
  for (int r = 0; r < nrefs; r++) p->ahead[r] = ahead ? ahead[r] : -1;
  return 0;
}

static inline void sp_prefix_stop_free(sp_prefix_stop *p) {
  free(p->ahead);
  p->ahead = NULL;
}

/* After the n-th instruction (n >= 1), wi: whether the prefix ends. */
static inline bool sp_prefix_stop_after(sp_prefix_stop *p, const sp_warp_instr *wi, int64_t n) {
  if (n == 1) {
    p->first_sm = wi->sm, p->first_block = wi->block, p->first_warp = wi->warp;
  } else if (!p->turn && wi->sm == p->first_sm && wi->block == p->first_block &&
             wi->warp == p->first_warp) {
    p->turn = n - 1;
  }
  if (p->ahead && wi->ref >= 0 && wi->ref < p->nrefs && p->ahead[wi->ref] >= 0) {
    p->ahead[wi->ref] = -1;
    if (n > p->cap) p->late = n;
  }
  if (n < p->cap) return false;
  if (n >= p->limit) return true;
  /* where the last reference still waited for is expected; until the turn is known, every
   * warp has issued once at most, and the turn is n or more */
  const double turn = p->turn ? (double)p->turn : (double)n;
  double last = (double)p->late;
  for (int r = 0; r < p->nrefs; r++)
    if (p->ahead[r] >= 0 && turn * (p->ahead[r] + 1) <= (double)p->limit)
      last = last > turn * (p->ahead[r] + 1) ? last : turn * (p->ahead[r] + 1);
  return (double)n >= 2 * last;
}

#endif
