/* What GCC 12's OpenACC reduction code adds to a schedule it states (nvptx offloading).
 *
 * GCC folds a reduction with compare-and-swap loops on one word (its PTX: atom.cas.b64 in a
 * retry loop), measured on the H200 (validation/results/h200/gcc-openacc/
 * 2026-12-01-reduction-lowering/; the arch constants refitted at the boost clock in
 * 2026-12-02-reduction-boost/, scripts/gcc_reduction_sweep.sh and gcc_reduction_fit.py):
 *  - A vector loop of vector_length V > 32 ends with every lane folding its part into one
 *    shared-memory word. Each success changes a sum's word, so the other lanes retry: V(V+1)/2
 *    attempts each time the loop is entered (once per row of the loops outside it). A max or min
 *    mostly finds the word kept and succeeds at once: V attempts. The attempts are serialized per
 *    SM (rowsum at the boost clock: 218 us at V = 128, 913 at 256, 14,025 at 1,024 over V = 32,
 *    with the same number of gangs; jacobi's max at V = 256 took 196 us in all). V = 32 folds
 *    with shuffles.
 *  - A gang loop ends with each gang folding into the global word, one success at a time, and a
 *    success takes longer the more gangs retry at once: cas_global_base_ns +
 *    cas_global_per_contender_ns x (gangs resident together). For a max or min the word is
 *    mostly kept: not charged.
 *  - A worker loop folds once per gang: not charged (num_workers 2-16 at vector_length 32 ran
 *    faster than one worker, 113-219 us against 253).
 * nvc's reduction code was not measured: nothing is added for it; nor for omp target nests,
 * which GCC lowers otherwise (not measured either). */
#include <math.h>
#include <string.h>

#include "schedpredict/advice.h"

/* A fold whose every success changes the word (sum, product, bitwise or logical or/and/xor
 * over varying values): the other contenders retry. max and min mostly keep the word. */
static bool sp_adv_changes_word(const char *item) {
  return strncmp(item, "max:", 4) != 0 && strncmp(item, "min:", 4) != 0;
}

/* Band loops outside position pos, iterated: how often the loop at pos is entered in all. */
static double sp_adv_entries(const sp_nest *nest, const sp_adv_plan *p, int pos) {
  double n = 1;
  for (int q = 0; q < pos; q++) {
    const sp_loop *l = &nest->loops[p->perm[q]];
    n *= 0.5 * (double)(l->trip_min + l->trip_max);
  }
  return n;
}

double sp_adv_lowering_s(const sp_nest *nest, const sp_schedule *s, const sp_trace_stats *st,
                         const sp_arch *arch, sp_adv_compiler cc, sp_adv_lowering *parts) {
  sp_adv_lowering z = {0, 0};
  if (parts) *parts = z;
  if (cc != SP_ADV_GCC || arch->cas_shared_ns <= 0 || arch->sm_count < 1) return 0;
  /* OpenACC's reduction code: an omp target nest gets GCC's OpenMP lowering, not measured */
  if (nest->construct != SP_CONSTRUCT_ACC_PARALLEL && nest->construct != SP_CONSTRUCT_ACC_KERNELS &&
      nest->construct != SP_CONSTRUCT_ACC_SERIAL)
    return 0;
  /* called for every candidate the ranking simulates: most nests have no reduction to price */
  bool any = false;
  for (int k = 0; k < s->nband && k < nest->nloops; k++)
    any |= nest->loops[k].clauses.reduction != NULL;
  if (!any) return 0;
  sp_adv_plan plan;
  if (!sp_adv_express(nest, s, cc, &plan, NULL, 0)) return 0;
  int64_t gangs = st && st->blocks_working > 0 ? st->blocks_working : s->grid[0];
  int per_sm = st && st->active_blocks_per_sm > 0 ? st->active_blocks_per_sm : 1;
  double sms = fmin((double)arch->sm_count, (double)(gangs > 0 ? gangs : 1));
  char items[SP_ADV_RED_MAX][SP_ADV_RED_ITEM];
  for (int pos = 0; pos < plan.nband; pos++) {
    const char *c = plan.clauses[pos];
    int n = sp_adv_reduction_items(plan.reduction[pos], items, SP_ADV_RED_MAX);
    if (n <= 0) continue;
    if (strstr(c, "vector") && plan.vector_length > 32) {
      double v = plan.vector_length, entries;
      if (strstr(c, "gang") || strstr(c, "worker"))
        entries = (double)gangs * (plan.num_workers > 0 ? plan.num_workers : 1);
      else
        entries = sp_adv_entries(nest, &plan, pos);
      double attempts = 0;
      for (int i = 0; i < n; i++) attempts += sp_adv_changes_word(items[i]) ? v * (v + 1) / 2 : v;
      z.vector_s += entries / sms * attempts * arch->cas_shared_ns * 1e-9;
    }
    if (strstr(c, "gang") && arch->cas_global_base_ns > 0) {
      double contenders = fmin((double)gangs, (double)per_sm * arch->sm_count);
      double success = arch->cas_global_base_ns + arch->cas_global_per_contender_ns * contenders;
      for (int i = 0; i < n; i++)
        if (sp_adv_changes_word(items[i])) z.gang_s += (double)gangs * success * 1e-9;
    }
  }
  if (parts) *parts = z;
  return z.vector_s + z.gang_s;
}

double sp_adv_built_s(const sp_rank_candidate *c) { return sp_rank_built_s(c); }
