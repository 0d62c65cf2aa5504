/* Internal to rank/: which screened candidates a refinement round refines (rank.c's
 * sp_refine_rounds runs the rounds; refine.c says how they are chosen and why), and which SMs
 * a refined candidate's L1 runs on. */
#ifndef SP_RANK_REFINE_H
#define SP_RANK_REFINE_H

#include <stdbool.h>

#include "schedpredict/rank.h"

/* The later rounds refine a screened candidate only when it is expected to be this much faster
 * than the best refined one */
#define SP_REFINE_MARGIN 0.02
/* Screened times this close, on the same block, are one screening result (sp_screen_twins) */
#define SP_SCREEN_TWIN 0.005

/* The candidates round `round` (0 first) refines, as indices into out->candidates written to
 * idx (room for out->n); returns how many. out->order must list the candidates refined first,
 * then by time (rank.c's sp_order_by_time). also[i]: whether candidate i is one of the subset
 * refined on its own (sp_rank_options.refine_also); NULL: no subset. per_round: the round's
 * places (the subset has half as many), taken in the order of its times with time.lowering_s
 * added. -1 when out of memory. */
int sp_refine_select(const sp_rank_result *out, const bool *also, int round, int per_round,
                     int *idx);

/* The factor screened times are calibrated by when a candidate has no refined twin. */
double sp_screen_calibration(const sp_rank_result *out);

/* What a screened-only candidate is expected to take when refined. */
double sp_refined_estimate(const sp_rank_result *out, const sp_rank_candidate *c, double calib);

/* Whether a and b are screening twins. */
bool sp_screen_twins(const sp_rank_candidate *a, const sp_rank_candidate *b);

/* The SMs of a class (SMs first .. first + n - 1) that run in full for the L1 (rank.c's
 * sp_refine_l1): k of them, in up to SP_L1_STRATA groups of consecutive SMs, each at the middle
 * of its stratum of the class; with a period > 1, group j starts at the residue mod period that
 * the first j groups' SMs leave off at, counted from first. Fills out[] and len[] (room for
 * SP_L1_STRATA); returns the number of groups (one, the first k SMs, where k >= n or the
 * strata leave no room). */
#define SP_L1_STRATA 4
int sp_l1_strata(int first, int n, int k, int period, int *out, int *len);

/* A sample of an SM's blocks that is a prefix in time stands for a class of SMs; the blocks of
 * their waves can share a reference's data in L1 more or less than the sample's (rank.c's
 * sp_l1_census says why and how). The sample: SMs sm_first .. + nsms - 1, each from its
 * skip_blocks-th block, `waves` waves of `active` blocks (0: all); the instructions it
 * extrapolates from, window[0] .. window[1] of each SM's, in blocks' worth (a wave's blocks run
 * together: wave w spans w * active .. (w + 1) * active); the class: SMs cls_first .. + cls_n -
 * 1 of `sms`, block b on SM b mod sms. factor[nrefs]: the reference's misses per block
 * iteration over the class's waves over those in the window, as the blocks' keys give them. */
typedef struct sp_l1_census_in {
  int sms, active, cls_first, cls_n, sm_first, nsms;
  int64_t skip_blocks, waves;
  double window[2];
  int64_t l1_bytes; /* an array whose footprint fits stays in the L1 between waves: factor 1 */
  int l1_line_bytes; /* the unit of that footprint */
  /* where an SM's last wave runs the grid-stride loop on grid dimension drain_dim only up to
   * round drain_round (drain_per iterations of a block a round), its last round being sampled
   * on its own: 0 none */
  int64_t drain_round, drain_per;
  int drain_dim;
} sp_l1_census_in;
int sp_l1_census(const sp_nest *nest, const sp_schedule *sched, const sp_l1_census_in *in,
                 double *factor);

/* The band loop whose rounds a prefix of one SM runs one or two of instead (rank.c's
 * sp_refine_l1 says when, and why), or -1: the outermost loop on a thread dimension (and maybe
 * blocks) that runs in rounds, with a loop on a thread dimension only inside it that runs in
 * rounds over its lanes, of constant bounds that no other bound depends on. *trip: one round's
 * iterations (the block's threads along it times the grid's blocks); *round_bytes: one block's
 * bytes in one round (inner loops whole, sequential loops whole) where two of its rounds share
 * data, else 0. */
int sp_lane_round_loop(const sp_nest *n, const sp_arch *arch, const sp_schedule *s, int64_t *trip,
                       double *round_bytes);

/* Re-reads beyond a sample that is a prefix in time (rank.c's sp_simulate says how they are
 * charged). sp_reread_level: the innermost band loop whose second round the sample did not
 * reach, given the share `seen` of each of the first wave's blocks that it ran (-1: none).
 * sp_pass_overlap: the bytes (units of unit_bytes) of array a's accesses (SP_FOOT_READS,
 * SP_FOOT_WRITES) that a round of band loop `level` shares with the next (-1: a wave with the
 * next), over the run. */
int sp_reread_level(const sp_nest *n, const sp_schedule *s, double seen);
double sp_pass_overlap(const sp_nest *n, const sp_arch *arch, const sp_schedule *s, int level,
                       double waves, int a, int unit_bytes, unsigned accesses);

/* One candidate run alone as a refined one is (all SMs, sampling within `budget` warp
 * instructions, 0: exact), into *c (c->schedule set by the caller; free c->per_array), with
 * what it cost the memory model (model_lookups, model_sectors). For
 * tests that hold one schedule's sampled counts against its exact ones. */
int sp_rank_one(const sp_nest *nest, const sp_arch *arch, const sp_rank_options *opt,
                int64_t budget, sp_rank_candidate *c);

#endif
