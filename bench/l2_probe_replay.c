/* The fill-partner probe's trials (validation/probes/fill_partner_probe.cu) replayed on the
 * memory model's L2 structure: how much of a region the model loses to the data streamed after
 * it, beside what the GPU lost. It fits the arch's l2_reuse_set_sectors:
 *
 *   build/l2_probe_replay ARCH [SET_SECTORS...]
 *
 * For each set size (default: the arch's, then a fully associative L2) it prints, per region
 * (1 and 4 MiB) and filler (MiB), the share of the region's fill partners that miss again.
 * `python3 validation/results/h100/2026-11-27-fill-partner-probe/fit_sets.py` compares them
 * with the GPU's. A trial, as the probe runs it on an empty L2:
 *   1. read sector 0 of every 64-byte block of the region (each miss fills its block);
 *   2. read every sector of FILLER MiB of other data;
 *   3. read sector 1 of every block of the region: a miss is a loss. */
#include <stdio.h>
#include <stdlib.h>

#include "schedpredict/arch.h"
#include "schedpredict/cachemodel.h"

static void read_sector(sp_cm_lru *l2, uint64_t sector, int *hit, unsigned fill_shift)
{
  sp_cm_lookup r;
  sp_cm_lru_lookup(l2, sector, SP_CM_LOOKUP_INSERT, &r);
  *hit = r.hit;
  if (r.hit) return;
  uint64_t first = sector >> fill_shift << fill_shift;
  for (uint64_t q = first; q < first + (UINT64_C(1) << fill_shift); q++)
    if (q != sector && !sp_cm_lru_lookup(l2, q, SP_CM_LOOKUP_PEEK, NULL))
      sp_cm_lru_lookup(l2, q, SP_CM_LOOKUP_INSERT, NULL);
}

static double trial(sp_cm_lru *l2, const sp_arch *a, unsigned fill_shift, int region_mib, int filler_mib)
{
  sp_cm_lru_clear(l2);
  const uint64_t spb = UINT64_C(1) << fill_shift, mib = UINT64_C(1) << 20;
  const uint64_t region = (UINT64_C(1) << 40) / (uint64_t)a->l2_sector_bytes;
  const uint64_t filler = (UINT64_C(3) << 40) / (uint64_t)a->l2_sector_bytes;
  const uint64_t blocks = (uint64_t)region_mib * mib / (spb * (uint64_t)a->l2_sector_bytes);
  int hit;
  for (uint64_t b = 0; b < blocks; b++) read_sector(l2, region + b * spb, &hit, fill_shift);
  for (uint64_t s = 0; s < (uint64_t)filler_mib * mib / (uint64_t)a->l2_sector_bytes; s++)
    read_sector(l2, filler + s, &hit, fill_shift);
  uint64_t lost = 0;
  for (uint64_t b = 0; b < blocks; b++) {
    read_sector(l2, region + b * spb + (spb > 1), &hit, fill_shift);
    lost += !hit;
  }
  return (double)lost / (double)blocks;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s ARCH [SET_SECTORS...]   (0: fully associative)\n", argv[0]);
    return 2;
  }
  sp_arch a;
  char err[512];
  if (sp_arch_load(argv[1], &a, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  unsigned fill_shift = 0, line_shift = 0;
  while ((a.l2_sector_bytes << fill_shift) < a.l2_fill_bytes) fill_shift++;
  while ((a.l2_sector_bytes << line_shift) < a.l2_line_bytes) line_shift++;
  const uint64_t capacity = (uint64_t)(sp_arch_l2_model_bytes(&a) / a.l2_sector_bytes);
  int nsizes = argc - 2;
  long long sizes[64] = {a.l2_reuse_set_sectors, 0};
  if (nsizes == 0) nsizes = a.l2_reuse_set_sectors > 0 ? 2 : 1;
  for (int k = 0; k < argc - 2 && k < 64; k++) sizes[k] = atoll(argv[k + 2]);
  static const int regions[] = {1, 4}, fillers[] = {0, 8, 16, 24, 32, 40, 48, 64};
  const int nfill = (int)(sizeof fillers / sizeof *fillers);
  printf("arch %s, model L2 %llu sectors; lost share of the region's partners\n", a.name,
         (unsigned long long)capacity);
  printf("set_sectors region");
  for (int f = 0; f < nfill; f++) printf(" %6d", fillers[f]);
  printf("\n");
  for (int k = 0; k < nsizes; k++) {
    long long w = sizes[k];
    sp_cm_lru *l2 = w > 0 ? sp_cm_lru_create_sets((capacity + (uint64_t)w / 2) / (uint64_t)w,
                                                  (uint32_t)w, line_shift)
                          : sp_cm_lru_create(capacity);
    if (!l2) {
      fprintf(stderr, "set_sectors %lld: not a power of two, or no memory\n", w);
      return 2;
    }
    for (int r = 0; r < 2; r++) {
      printf("%11lld %6d", w, regions[r]);
      for (int f = 0; f < nfill; f++) printf(" %6.3f", trial(l2, &a, fill_shift, regions[r], fillers[f]));
      printf("\n");
      fflush(stdout);
    }
    sp_cm_lru_free(l2);
  }
  return 0;
}
