/* Which SM ran which block on a real GPU (validation/probes/placement_run.cu records it), and
 * the model's L1 and L2 counts of one SM under that placement beside its own (block b on SM
 * b mod S, Eq. 7.1): whether an error of the model is the placement's or the caches'.
 * Prefix sp_place_. */
#ifndef SCHEDPREDICT_PLACEMENT_H
#define SCHEDPREDICT_PLACEMENT_H

#include <stdint.h>
#include <stdio.h>

#include "schedpredict/arch.h"
#include "schedpredict/ir.h"
#include "schedpredict/memsys.h"
#include "schedpredict/traces.h"

/* Reads a placement CSV (header "block,smid,start_ns,end_ns", one row a block) of a grid of
 * nblocks blocks on nsm SMs into *out: each SM's blocks in the order they started (ties: lower
 * block first). Every block must appear exactly once. 0, or -1 with a message naming
 * name:line in err. Free with sp_trace_placement_free. */
int sp_place_read_csv(FILE *f, const char *name, int nsm, int64_t nblocks,
                      sp_block_placement *out, char *err, size_t errlen);

/* The model's counters of SM `sm` alone over the whole run of schedule s (its L1 exactly; its
 * L2 as a 1/S share of the L2, as the sampling does), its blocks dealt by `placement`, or by
 * b mod S when NULL. *blocks: how many blocks it ran. 0, or -1 (bad arguments, or the trace or
 * memory model failed). */
int sp_place_simulate_sm(const sp_nest *nest, const sp_schedule *s, const sp_arch *arch,
                         const sp_cm_options *cm, const sp_block_placement *placement, int sm,
                         sp_cm_counters *out, int64_t *blocks);

#endif
