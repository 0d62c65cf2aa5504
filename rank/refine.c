/* Choosing what a refinement round refines.
 *
 * The screening simulates every candidate on a short sample (1,000 warp instructions and more,
 * on one SM); the refinement simulates a few on the full sample. Round 0 refines the
 * screening's best per_round, the best per_round / 2 of the refine_also subset (the schedules a
 * compiler can express) and both compiler baselines. Each later round refines the next
 * candidates that are expected to beat the best refined one (of all, or of the subset) by more
 * than SP_REFINE_MARGIN, and the rounds end when there are none.
 *
 * "Expected" is the screened time corrected for the screening's bias, which differs between
 * candidates (himeno: 1.0x for blocks of one row whose time is L1 throughput, 1.75-1.86x for
 * those whose refined time is DRAM traffic that a short cold sample does not see; matmul:
 * 0.97x to 5.1x):
 *  - A candidate with a refined screening twin (the same block and occupancy, a screened time
 *    within SP_SCREEN_TWIN) is expected to take what the twin took, scaled by their screened
 *    times. Over 19 nests such an estimate is off by 3.9 % at the 90th percentile, the
 *    baselines' calibration by 27 %.
 *    The screening saw the same thing in both, so which one the order refined first was
 *    happenstance: the twin's ratio is free of the winner's curse.
 *  - Else the nest-wide calibration of the baselines (sp_screen_calibration). They are refined
 *    whatever their screened rank, so they too are free of the curse, but they are only two,
 *    and often unlike the candidate.
 *  - A later round takes one candidate of each group of twins. The rest of the group is then
 *    judged by its refined twin, so a round's places go to as many different screening results
 *    as it has. Before this, himeno's rounds 1-3 refined 24 candidates of 32x4x2 blocks that
 *    screened within 0.3 % of round 0's, all 1.8x optimistic against a calibration of 1.35x
 *    and 0.2-1.4 % slower than the best when refined: bench/results/2026-11-24-twins.md.
 *
 * A contender must beat the best by more than SP_REFINE_MARGIN: conv3d's 21 and divergence's 8
 * screened within 2.7 % of it refined to at most 0.2 % better and took 31 % and 11 % of their
 * rankings' CPU time, with the same picks and regret without them
 * (bench/results/2026-11-23-refine-margin.md). (Stopping once a round finds no new best was
 * tried earlier: himeno and laplacian then lost 29 % and 24 % against refining every
 * candidate.) */
#include "rank/refine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double sp_rank_built_s(const sp_rank_candidate *c) { return c->time.total_s + c->time.lowering_s; }

/* The part of c's time that sampling can move. */
static double sp_sampled_part(const sp_rank_candidate *c) {
  return c->time.total_s - c->time.partial_s;
}

static double sp_calibrated(const sp_rank_candidate *c, double calib) {
  return sp_sampled_part(c) * calib + c->time.partial_s;
}

/* Whether k is among idx[0..n). */
static bool sp_listed(const int *idx, int n, int k) {
  for (int q = 0; q < n; q++)
    if (idx[q] == k) return true;
  return false;
}

/* Screening twins: the same block, the same occupancy (SMs in use, resident warps per SM), and
 * screened times within SP_SCREEN_TWIN of each other. The screening saw the same thing in both;
 * what tells them apart is what its short sample on one SM does not see (later waves, the
 * grid-stride rounds, L2 capacity). Without the occupancy, 2mm.c:26's 512-thread blocks on
 * grids of 3x88 and 3x176 screen 0.3 % apart and refine 2.1x apart (2 and 4 blocks an SM). */
bool sp_screen_twins(const sp_rank_candidate *a, const sp_rank_candidate *b) {
  double ta = sp_rank_screened_s(a), tb = sp_rank_screened_s(b);
  return ta > 0 && tb > 0 && fabs(ta / tb - 1) <= SP_SCREEN_TWIN &&
         memcmp(a->schedule.block, b->schedule.block, sizeof a->schedule.block) == 0 &&
         a->time.sms_used == b->time.sms_used &&
         a->time.active_warps_per_sm == b->time.active_warps_per_sm;
}

/* What a screened-only candidate c is expected to take when refined. Where c has refined
 * screening twins, it is their refined time scaled by c's screened time over theirs (the least
 * of them): which twin the ordering refined first was happenstance, so the twin's refinement
 * is an estimate for c free of the winner's curse, and of the nest-wide calib's averaging over
 * unlike candidates. Else c's screened time calibrated by calib. */
double sp_refined_estimate(const sp_rank_result *out, const sp_rank_candidate *c, double calib) {
  double twin = INFINITY;
  for (int i = 0; i < out->n; i++) {
    const sp_rank_candidate *r = &out->candidates[i];
    if (r->refined && sp_screen_twins(r, c))
      twin = fmin(twin, r->time.total_s * (c->time.total_s / r->screened_s));
  }
  return isfinite(twin) ? twin : sp_calibrated(c, calib);
}

/* Whether one of the n candidates queued in idx is a screening twin of c. */
static bool sp_twin_queued(const sp_rank_result *out, const sp_rank_candidate *c, const int *idx,
                           int n) {
  for (int q = 0; q < n; q++)
    if (sp_screen_twins(&out->candidates[idx[q]], c)) return true;
  return false;
}

/* The factor screened times are multiplied by before they are compared with refined ones: the
 * refined over screened time of the refined compiler baselines (geometric mean) when that shows
 * an optimistic screening, else 1 (a pessimistic screening is not a reason to refine more: the
 * best screened candidates are refined anyway). Only the sampled part of the time is scaled:
 * the refinement's partly written sectors' time comes from exact counts (sp_calibrated), and
 * each time's own is taken out of it. (Until 2026-11-24 the refined one was taken out of both;
 * a short screening sample can miss those stores, himeno's 32-wide blocks screen with none, and
 * a baseline's ratio was then too large.) */
double sp_screen_calibration(const sp_rank_result *out) {
  int defs[2] = {out->default_gcc, out->default_nvc}, n = 0;
  double log_sum = 0;
  for (int d = 0; d < 2; d++) {
    if (defs[d] < 0 || (d == 1 && defs[1] == defs[0])) continue;
    const sp_rank_candidate *c = &out->candidates[defs[d]];
    double refined = sp_sampled_part(c);
    double screened = sp_rank_screened_s(c) - sp_rank_screened_partial_s(c);
    if (!c->refined || !(screened > 0) || !(refined > 0)) continue;
    log_sum += log(refined / screened);
    n++;
  }
  return n ? fmax(1.0, exp(log_sum / n)) : 1;
}

/* The shape the plateau's order (sp_rank_order_plateau) puts first so far: of the refined
 * candidates within SP_RANK_PLATEAU of best (of the subset where also is not NULL), the one no
 * other's shape comes before; NULL where there is none. */
static const sp_schedule *sp_plateau_head(const sp_rank_result *out, const bool *also,
                                          double best) {
  const sp_schedule *head = NULL;
  for (int i = 0; i < out->n; i++) {
    const sp_rank_candidate *c = &out->candidates[i];
    double t = also ? sp_rank_built_s(c) : c->time.total_s;
    if (c->refined && (!also || also[i]) && t <= SP_RANK_PLATEAU * best &&
        (!head || sp_rank_plateau_shape_before(&c->schedule, head)))
      head = &c->schedule;
  }
  return head;
}

/* A screened-only candidate worth refining in round `round`: any in the first; later one
 * expected to be faster than `best` by more than SP_REFINE_MARGIN, or expected within the
 * plateau (SP_RANK_PLATEAU of best) on a block shape the plateau's order puts before head's,
 * where it would come first; and no twin of one already queued in idx[0..n). Without the
 * second kind the plateau's order chose among the refined candidates only: himeno's 256x1
 * blocks, screened 2 % behind the 32x4x2 ones, were left unrefined once the screening saw every
 * reference (prefix_stop.h), and the H100 ran the 32x4x2 pick 19 % slower than them. */
static bool sp_contender(const sp_rank_result *out, const sp_rank_candidate *c, double calib,
                         double best, const sp_schedule *head, int round, const int *idx, int n,
                         double extra) {
  if (c->refined) return false;
  if (round == 0) return true;
  double est = sp_refined_estimate(out, c, calib) + extra;
  return (est < best * (1 - SP_REFINE_MARGIN) ||
          (est * (1 + SP_REFINE_MARGIN) <= best * SP_RANK_PLATEAU &&
           (!head || sp_rank_plateau_shape_before(&c->schedule, head)))) &&
         !sp_twin_queued(out, c, idx, n);
}

typedef struct sp_also_key {
  double t;
  int cand;
  int rank; /* its place in out->order, for ties (qsort is not stable) */
} sp_also_key;

static int sp_by_also_key(const void *a, const void *b) {
  const sp_also_key *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The subset in the order of its times with its compiler's own code (time.lowering_s) added,
 * or as out->order has it where none has any. order: room for out->n; returns how many, or -1
 * when out of memory. */
static int sp_also_order(const sp_rank_result *out, const bool *also, int *order) {
  int n = 0;
  bool lowered = false;
  for (int i = 0; i < out->n; i++)
    if (also[out->order[i]]) {
      order[n++] = out->order[i];
      lowered |= out->candidates[out->order[i]].time.lowering_s > 0;
    }
  if (!lowered) return n;
  sp_also_key *keys = malloc((size_t)(n > 0 ? n : 1) * sizeof *keys);
  if (!keys) return -1;
  for (int i = 0; i < n; i++) {
    const sp_rank_candidate *c = &out->candidates[order[i]];
    keys[i] = (sp_also_key){sp_rank_built_s(c), order[i], i};
  }
  qsort(keys, (size_t)n, sizeof *keys, sp_by_also_key);
  for (int i = 0; i < n; i++) order[i] = keys[i].cand;
  free(keys);
  return n;
}

int sp_refine_select(const sp_rank_result *out, const bool *also, int round, int per_round,
                     int *idx) {
  double best = INFINITY, best_also = INFINITY, calib = sp_screen_calibration(out);
  for (int i = 0; i < out->n; i++) {
    const sp_rank_candidate *c = &out->candidates[i];
    double t_also = sp_rank_built_s(c);
    if (c->refined && c->time.total_s < best) best = c->time.total_s;
    if (c->refined && also && also[i] && t_also < best_also) best_also = t_also;
  }
  const sp_schedule *head = sp_plateau_head(out, NULL, best);
  const sp_schedule *head_also = also ? sp_plateau_head(out, also, best_also) : NULL;
  int nref = 0, nalso = 0;
  for (int i = 0; i < out->n && nref < per_round; i++) {
    const sp_rank_candidate *c = &out->candidates[out->order[i]];
    if (sp_contender(out, c, calib, best, head, round, idx, nref, 0)) {
      nalso += also && also[out->order[i]];
      idx[nref++] = out->order[i];
    }
  }
  int *also_order = also ? malloc((size_t)(out->n > 0 ? out->n : 1) * sizeof *also_order) : NULL;
  int nsub = also_order ? sp_also_order(out, also, also_order) : also ? -1 : 0;
  if (nsub < 0) {
    free(also_order);
    return -1;
  }
  for (int i = 0, first = nref; i < nsub && nalso < per_round / 2; i++) {
    int k = also_order[i];
    const sp_rank_candidate *c = &out->candidates[k];
    if (!sp_listed(idx, first, k) &&
        sp_contender(out, c, calib, best_also, head_also, round, idx, nref, c->time.lowering_s)) {
      idx[nref++] = k;
      nalso++;
    }
  }
  free(also_order);
  int defs[2] = {out->default_gcc, out->default_nvc}; /* both baselines refined */
  for (int d = 0; d < 2 && round == 0; d++)
    if (defs[d] >= 0 && nref < out->n && !sp_listed(idx, nref, defs[d])) idx[nref++] = defs[d];
  return nref;
}
