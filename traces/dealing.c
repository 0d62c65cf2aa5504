/* Block placements: built from (block, SM) pairs, or dealt in the chip's order
 * (include/schedpredict/traces.h). */
#include "schedpredict/traces.h"

#include <stdlib.h>
#include <string.h>

static uint64_t deal_next(uint64_t *state) { /* splitmix64 */
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int sp_trace_deal_blocks(const sp_arch *arch, int64_t nblocks, int per_sm, sp_refill refill,
                         uint64_t seed, sp_block_placement *out) {
  if (!arch || !out || nblocks < 1 || nblocks > SP_DEAL_MAX_BLOCKS || per_sm < 1 ||
      arch->sm_count < 1 || (refill != SP_REFILL_FIFO && refill != SP_REFILL_RANDOM))
    return -1;
  memset(out, 0, sizeof *out);
  const int S = arch->sm_count;
  const int64_t wave = (int64_t)S * per_sm < nblocks ? (int64_t)S * per_sm : nblocks;
  int *sm_of = malloc(sizeof *sm_of * (size_t)nblocks);
  int *slot = malloc(sizeof *slot * (size_t)(S * (int64_t)per_sm));
  int *room = malloc(sizeof *room * (size_t)S);
  int rc = -1;
  if (!sm_of || !slot || !room) goto out;
  const int ncyc = arch->n_block_dealing_cycle;
  /* A wave of fewer blocks than slots is shared out evenly: each SM first takes up to
   * q = wave / S, then the rest go one more to an SM, from the cycle's start. The H100 does so
   * (1024 blocks of 128 threads: 100 SMs ran 8, 32 ran 7, where dealing on to the slots would
   * give SMs 124-131 11 each, validation/results/h100/2026-11-23-dealt-placement/). Every SM is
   * in the cycle (the loader checks it), so each turn of it places a block. */
  const int q = (int)(wave / S);
  int64_t b = 0;
  for (int phase = 0; phase < 2; phase++) {
    const int cap = phase == 0 ? q : (q + 1 < per_sm ? q + 1 : per_sm);
    const int64_t until = phase == 0 ? (int64_t)q * S : wave;
    for (int s = 0; s < S; s++) room[s] = phase ? cap - q : cap; /* q each, then one more */
    for (int64_t i = 0; b < until; i++) {
      int s = ncyc ? arch->block_dealing_cycle[i % ncyc] : (int)(i % S);
      if (room[s] > 0) {
        room[s]--;
        sm_of[b++] = s;
      }
    }
  }
  uint64_t state = seed;
  int64_t left = 0; /* slots of the current random round not yet taken */
  for (; b < nblocks; b++) {
    if (refill == SP_REFILL_FIFO) {
      sm_of[b] = sm_of[b - wave];
      continue;
    }
    if (left == 0) {
      left = (int64_t)S * per_sm;
      for (int64_t k = 0; k < left; k++) slot[k] = (int)(k / per_sm);
    }
    int64_t k = (int64_t)(deal_next(&state) % (uint64_t)left); /* bias < 2^-40 */
    sm_of[b] = slot[k];
    slot[k] = slot[--left];
  }
  rc = sp_trace_placement_build(S, nblocks, sm_of, NULL, out);
out:
  free(sm_of);
  free(slot);
  free(room);
  return rc;
}

int sp_trace_placement_build(int nsm, int64_t n, const int *sm, const int64_t *block,
                             sp_block_placement *out) {
  int64_t *first = calloc((size_t)nsm + 1, sizeof *first);
  int64_t *list = malloc(sizeof *list * (size_t)(n > 0 ? n : 1));
  int64_t *next = calloc((size_t)nsm, sizeof *next); /* blocks listed so far, per SM */
  if (!first || !list || !next) {
    free(first);
    free(list);
    free(next);
    return -1;
  }
  for (int64_t i = 0; i < n; i++) first[sm[i] + 1]++;
  for (int s = 0; s < nsm; s++) first[s + 1] += first[s];
  for (int64_t i = 0; i < n; i++) list[first[sm[i]] + next[sm[i]]++] = block ? block[i] : i;
  free(next);
  *out = (sp_block_placement){nsm, first, list};
  return 0;
}

void sp_trace_placement_free(sp_block_placement *p) {
  if (!p) return;
  free((void *)p->first);
  free((void *)p->block);
  memset(p, 0, sizeof *p);
}
