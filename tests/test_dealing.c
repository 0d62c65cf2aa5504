/* Placements from a dealing cycle (sp_trace_deal_blocks): a hand-dealt small cycle, Eq. 7.1's
 * round-robin from the plain cycle with FIFO refills (against b mod S, brute force, over many
 * grids), the invariants of random refills, and the H100's measured cycle putting blocks with
 * equal b mod 128 together as the GPU did. */
#include <stdlib.h>
#include <string.h>

#include "schedpredict/placement.h"
#include "schedpredict/traces.h"
#include "tests/sp_test.h"

static sp_arch H100;

static int sm_of(const sp_block_placement *p, int64_t b) {
  for (int s = 0; s < p->nsm; s++)
    for (int64_t i = p->first[s]; i < p->first[s + 1]; i++)
      if (p->block[i] == b) return s;
  return -1;
}

static void check_list(const sp_block_placement *p, int sm, const int64_t *want, int n) {
  CHECK_EQ_INT(p->first[sm + 1] - p->first[sm], n);
  for (int i = 0; i < n && p->first[sm] + i < p->first[sm + 1]; i++)
    CHECK_EQ_INT(p->block[p->first[sm] + i], want[i]);
}

/* Every block once, each SM's list in block order. */
static int placement_ok(const sp_block_placement *p, int64_t nblocks) {
  if (p->first[0] != 0 || p->first[p->nsm] != nblocks) return 0;
  unsigned char *seen = calloc((size_t)nblocks, 1);
  int ok = seen != NULL;
  for (int s = 0; s < p->nsm && ok; s++)
    for (int64_t i = p->first[s]; i < p->first[s + 1] && ok; i++) {
      int64_t b = p->block[i];
      ok = b >= 0 && b < nblocks && !seen[b] && (i == p->first[s] || b > p->block[i - 1]);
      if (ok) seen[b] = 1;
    }
  free(seen);
  return ok;
}

static void test_hand_dealt(void) {
  sp_arch a = H100;
  a.sm_count = 4;
  const int16_t cyc[] = {2, 3, 2, 3, 0, 1};
  memcpy(a.block_dealing_cycle, cyc, sizeof cyc);
  a.n_block_dealing_cycle = 6;
  /* 2 slots an SM: 0->2 1->3 2->2 3->3 4->0 5->1, SMs 2 and 3 full, 6->0 7->1; then FIFO:
   * 8 takes block 0's SM (2), 9 block 1's (3), 10 block 2's (2) */
  sp_block_placement p;
  CHECK_EQ_INT(sp_trace_deal_blocks(&a, 11, 2, SP_REFILL_FIFO, 0, &p), 0);
  CHECK_EQ_INT(p.nsm, 4);
  check_list(&p, 0, (const int64_t[]){4, 6}, 2);
  check_list(&p, 1, (const int64_t[]){5, 7}, 2);
  check_list(&p, 2, (const int64_t[]){0, 2, 8, 10}, 4);
  check_list(&p, 3, (const int64_t[]){1, 3, 9}, 3);
  sp_trace_placement_free(&p);
  CHECK(p.first == NULL && p.block == NULL);
  /* a grid smaller than the wave is shared out evenly: 3 blocks on 4 SMs, one an SM in the
   * cycle's order: 0->2 1->3 2->0 (dealing on to free slots would put block 2 on SM 2) */
  CHECK_EQ_INT(sp_trace_deal_blocks(&a, 3, 2, SP_REFILL_RANDOM, 7, &p), 0);
  check_list(&p, 0, (const int64_t[]){2}, 1);
  check_list(&p, 1, (const int64_t[]){0}, 0);
  check_list(&p, 2, (const int64_t[]){0}, 1);
  check_list(&p, 3, (const int64_t[]){1}, 1);
  sp_trace_placement_free(&p);
  /* 6 blocks: one each (2 3 0 1 in the cycle's order: blocks 0-3), then one more from the
   * cycle's start: 4->2 5->3 */
  CHECK_EQ_INT(sp_trace_deal_blocks(&a, 6, 2, SP_REFILL_FIFO, 0, &p), 0);
  check_list(&p, 0, (const int64_t[]){2}, 1);
  check_list(&p, 1, (const int64_t[]){3}, 1);
  check_list(&p, 2, (const int64_t[]){0, 4}, 2);
  check_list(&p, 3, (const int64_t[]){1, 5}, 2);
  sp_trace_placement_free(&p);

  CHECK_EQ_INT(sp_trace_deal_blocks(&a, 0, 2, SP_REFILL_FIFO, 0, &p), -1);
  CHECK_EQ_INT(sp_trace_deal_blocks(&a, 4, 0, SP_REFILL_FIFO, 0, &p), -1);
  CHECK_EQ_INT(sp_trace_deal_blocks(&a, SP_DEAL_MAX_BLOCKS + 1, 2, SP_REFILL_FIFO, 0, &p), -1);
  CHECK_EQ_INT(sp_trace_deal_blocks(NULL, 4, 2, SP_REFILL_FIFO, 0, &p), -1);
}

/* No cycle and FIFO refills: block b on SM b mod S (Eq. 7.1), whatever the grid and slots. */
static void test_round_robin(void) {
  sp_arch a = H100;
  a.n_block_dealing_cycle = 0;
  srand(11);
  int cases = 0;
  for (int t = 0; t < 300; t++) {
    a.sm_count = 1 + rand() % 20;
    int per = 1 + rand() % 5;
    int64_t n = 1 + rand() % (a.sm_count * per * 4);
    sp_block_placement p;
    if (sp_trace_deal_blocks(&a, n, per, SP_REFILL_FIFO, 0, &p) != 0) {
      CHECK(0);
      continue;
    }
    int ok = placement_ok(&p, n);
    for (int64_t b = 0; b < n && ok; b++) ok = sm_of(&p, b) == b % a.sm_count;
    if (!ok) fprintf(stderr, "  S=%d per=%d n=%lld: not b mod S\n", a.sm_count, per, (long long)n);
    CHECK(ok);
    cases += ok;
    sp_trace_placement_free(&p);
  }
  CHECK_EQ_INT(cases, 300);
}

/* Random refills: the first wave as dealt; each later full round gives every SM exactly its
 * slots; a seed repeats its placement and another seed changes it. */
static void test_random_refill(void) {
  sp_arch a = H100;
  const int per = 3, S = a.sm_count;
  const int64_t wave = (int64_t)S * per, n = 4 * wave + 100;
  sp_block_placement p, q, r, fifo;
  CHECK_EQ_INT(sp_trace_deal_blocks(&a, n, per, SP_REFILL_RANDOM, 5, &p), 0);
  CHECK_EQ_INT(sp_trace_deal_blocks(&a, n, per, SP_REFILL_RANDOM, 5, &q), 0);
  CHECK_EQ_INT(sp_trace_deal_blocks(&a, n, per, SP_REFILL_RANDOM, 6, &r), 0);
  CHECK_EQ_INT(sp_trace_deal_blocks(&a, n, per, SP_REFILL_FIFO, 0, &fifo), 0);
  CHECK(placement_ok(&p, n));
  CHECK(placement_ok(&r, n));
  CHECK(memcmp(p.block, q.block, sizeof *p.block * (size_t)n) == 0);
  CHECK(memcmp(p.first, q.first, sizeof *p.first * (size_t)(S + 1)) == 0);
  CHECK(memcmp(p.block, r.block, sizeof *p.block * (size_t)n) != 0);
  int first_same = 1, rounds_even = 1, last_capped = 1, moved = 0;
  for (int64_t b = 0; b < wave; b++) first_same &= sm_of(&p, b) == sm_of(&fifo, b);
  for (int s = 0; s < S; s++) {
    int64_t per_round[5] = {0};
    for (int64_t i = p.first[s]; i < p.first[s + 1]; i++) per_round[p.block[i] / wave]++;
    for (int k = 0; k < 4; k++) rounds_even &= per_round[k] == per;
    last_capped &= per_round[4] <= per;
  }
  for (int64_t b = wave; b < n; b++) moved += sm_of(&p, b) != sm_of(&p, b - wave);
  CHECK(first_same);
  CHECK(rounds_even);
  CHECK(last_capped);
  /* the SM of block b - W by chance about once in S; far from FIFO */
  CHECK(moved > (n - wave) * 9 / 10);
  sp_trace_placement_free(&p);
  sp_trace_placement_free(&q);
  sp_trace_placement_free(&r);
  sp_trace_placement_free(&fifo);
}

/* matmul's GCC default (8448 blocks of 32 threads, 32 an SM) reads B's columns by b mod 128.
 * Its first wave under the H100's cycle puts 1,324 of the 65,472 pairs of blocks that share an
 * SM on equal b mod 128 (an independent brute force over the cycle in Python gives the same);
 * the GPU's first waves had 1,290 (spin probe, blocks_8448_32.csv.gz) and 1,398 (matmul's ncu
 * pass 1); b mod S puts none together. */
static void test_h100_cycle(void) {
  sp_block_placement p;
  const int64_t wave = 132 * 32;
  CHECK_EQ_INT(sp_trace_deal_blocks(&H100, 8448, 32, SP_REFILL_RANDOM, 1, &p), 0);
  int64_t pairs = 0, equal = 0;
  for (int s = 0; s < 132; s++) {
    int64_t count[128] = {0}, k = 0;
    for (int64_t i = p.first[s]; i < p.first[s + 1]; i++)
      if (p.block[i] < wave) count[p.block[i] % 128]++, k++;
    CHECK_EQ_INT(k, 32);
    pairs += k * (k - 1) / 2;
    for (int m = 0; m < 128; m++) equal += count[m] * (count[m] - 1) / 2;
  }
  CHECK_EQ_INT(pairs, 65472);
  CHECK_EQ_INT(equal, 1324);
  /* one wave of 1024 blocks, 16 slots an SM: the GPU ran 8 on 100 SMs and 7 on 32, SMs 124-131
   * among the 8s (blocks_1024_128.csv); dealing on to free slots would give those 11 each */
  sp_block_placement w;
  CHECK_EQ_INT(sp_trace_deal_blocks(&H100, 1024, 16, SP_REFILL_RANDOM, 1, &w), 0);
  int eights = 0, sevens = 0;
  for (int s = 0; s < 132; s++) {
    int64_t k = w.first[s + 1] - w.first[s];
    eights += k == 8;
    sevens += k == 7;
    if (s >= 124) CHECK_EQ_INT(k, 8);
  }
  CHECK_EQ_INT(eights, 100);
  CHECK_EQ_INT(sevens, 32);
  sp_trace_placement_free(&w);
  /* the cycle starts with the 4-TPC group, then GPC rows of TPC pairs */
  CHECK_EQ_INT(sm_of(&p, 0), 124);
  CHECK_EQ_INT(sm_of(&p, 8), 10);
  CHECK_EQ_INT(sm_of(&p, 9), 11);
  CHECK_EQ_INT(sm_of(&p, 10), 26);
  sp_trace_placement_free(&p);
}


/* Every first wave the H100 recorded as a plain CSV: its SMs' block counts, sorted, and the
 * 4-TPC group's, equal the rule's. The eight launches of recorded/ were chosen after the rule
 * was written (stop 20), the others are those it was read from (stop 18). */
static void test_recorded_counts(void) {
  static const struct {
    const char *dir;
    int blocks, threads;
  } rec[] = {
      {"2026-11-24-block-placement", 1024, 128}, {"2026-11-24-block-placement", 1056, 128},
      {"2026-11-24-block-placement", 132, 256},  {"2026-11-24-block-placement", 264, 1024},
      {"2026-11-24-block-placement", 900, 1024}, {"2026-11-23-dealt-placement/recorded", 100, 512},
      {"2026-11-23-dealt-placement/recorded", 200, 1024},
      {"2026-11-23-dealt-placement/recorded", 500, 256},
      {"2026-11-23-dealt-placement/recorded", 1300, 96},
      {"2026-11-23-dealt-placement/recorded", 2000, 64},
      {"2026-11-23-dealt-placement/recorded", 3000, 32},
      {"2026-11-23-dealt-placement/recorded", 4224, 32},
      {"2026-11-23-dealt-placement/recorded", 6000, 128},
  };
  for (size_t i = 0; i < sizeof rec / sizeof rec[0]; i++) {
    char path[256], err[256];
    snprintf(path, sizeof path, "validation/results/h100/%s/blocks_%d_%d.csv", rec[i].dir,
             rec[i].blocks, rec[i].threads);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) continue;
    sp_block_placement gpu, rule;
    int per = sp_arch_active_blocks_per_sm(&H100, rec[i].threads, 0, 0);
    int64_t wave = (int64_t)132 * per < rec[i].blocks ? (int64_t)132 * per : rec[i].blocks;
    int ok = sp_place_read_csv(f, path, 132, rec[i].blocks, &gpu, err, sizeof err) == 0;
    fclose(f);
    CHECK(ok);
    if (!ok) continue;
    CHECK_EQ_INT(sp_trace_deal_blocks(&H100, rec[i].blocks, per, SP_REFILL_RANDOM, 1, &rule), 0);
    int hist_gpu[33] = {0}, hist_rule[33] = {0}, same = 1;
    for (int s = 0; s < 132; s++) {
      int k[2] = {0, 0};
      const sp_block_placement *p[2] = {&gpu, &rule};
      for (int j = 0; j < 2; j++)
        for (int64_t x = p[j]->first[s]; x < p[j]->first[s + 1]; x++) k[j] += p[j]->block[x] < wave;
      hist_gpu[k[0] < 32 ? k[0] : 32]++;
      hist_rule[k[1] < 32 ? k[1] : 32]++;
      if (s >= 124) same &= k[0] == k[1];
    }
    same &= memcmp(hist_gpu, hist_rule, sizeof hist_gpu) == 0;
    if (!same) fprintf(stderr, "  %s: the rule's block counts differ\n", path);
    CHECK(same);
    sp_trace_placement_free(&gpu);
    sp_trace_placement_free(&rule);
  }
}

int main(void) {
  char err[512];
  if (sp_arch_load("h100", &H100, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  SP_RUN(test_hand_dealt);
  SP_RUN(test_round_robin);
  SP_RUN(test_random_refill);
  SP_RUN(test_h100_cycle);
  SP_RUN(test_recorded_counts);
  return SP_TEST_END();
}
