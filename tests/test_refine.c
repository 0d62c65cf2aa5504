/* Which candidates a refinement round refines (rank/refine.c), and how the plateau of near-ties
 * is ordered (rank.c), on hand-built rankings whose expected choices are worked out below. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rank/refine.h"
#include "sp_nestbuild.h"
#include "sp_test.h"

enum { MAXC = 16 };

/* Candidates here all have sms_used = active_warps_per_sm = 0 (the same occupancy) unless a test
 * sets them. */

typedef struct ranking {
  sp_rank_candidate c[MAXC];
  int order[MAXC];
  sp_rank_result r;
} ranking;

static void rk_init(ranking *k)
{
  memset(k, 0, sizeof *k);
  k->r.candidates = k->c;
  k->r.order = k->order;
  k->r.default_gcc = k->r.default_nvc = -1;
}

/* A candidate only screened, at `screened` seconds, on blocks bx x by x 1. */
static int rk_add(ranking *k, int bx, int by, double screened)
{
  int i = k->r.n++;
  k->c[i].schedule.block[0] = bx;
  k->c[i].schedule.block[1] = by;
  k->c[i].schedule.block[2] = 1;
  k->c[i].time.total_s = screened;
  return i;
}

static void rk_refine(ranking *k, int i, double refined)
{
  k->c[i].screened_s = k->c[i].time.total_s;
  k->c[i].time.total_s = refined;
  k->c[i].refined = true;
}

/* rank.c's sp_order_by_time: refined first, then by time (no ties here) */
static const ranking *rk_sort_ctx;
static int rk_cmp(const void *pa, const void *pb)
{
  const sp_rank_candidate *a = &rk_sort_ctx->c[*(const int *)pa], *b = &rk_sort_ctx->c[*(const int *)pb];
  if (a->refined != b->refined) return a->refined ? -1 : 1;
  return a->time.total_s < b->time.total_s ? -1 : a->time.total_s > b->time.total_s;
}

static void rk_order(ranking *k)
{
  for (int i = 0; i < k->r.n; i++) k->order[i] = i;
  rk_sort_ctx = k;
  qsort(k->order, (size_t)k->r.n, sizeof *k->order, rk_cmp);
}

static bool has(const int *idx, int n, int i)
{
  for (int q = 0; q < n; q++)
    if (idx[q] == i) return true;
  return false;
}

/* Round 0: the best per_round by screened time, the subset's best per_round / 2 counting those
 * already in, then both baselines. */
static void test_first_round(void)
{
  ranking k;
  rk_init(&k);
  for (int i = 0; i < 10; i++) rk_add(&k, 32, 1, 1.0 + 0.1 * i); /* 0 fastest */
  bool also[MAXC] = {0};
  also[1] = also[6] = also[7] = also[8] = true;
  k.r.default_gcc = 9;
  k.r.default_nvc = 3;
  rk_order(&k);
  int idx[MAXC];
  int n = sp_refine_select(&k.r, also, 0, 4, idx);
  /* 0..3 (1 of the subset among them), then 6 for the subset's second place, then gcc's 9 */
  CHECK_EQ_INT(n, 6);
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(idx[i], i);
  CHECK_EQ_INT(idx[4], 6);
  CHECK_EQ_INT(idx[5], 9);
}

/* The expected refined time: a twin's (same block, screened within SP_SCREEN_TWIN), scaled by
 * the screened times; else the baselines' calibration. */
static void test_estimate(void)
{
  ranking k;
  rk_init(&k);
  int r = rk_add(&k, 32, 4, 100e-6);
  rk_refine(&k, r, 180e-6);
  int twin = rk_add(&k, 32, 4, 100.3e-6), apart = rk_add(&k, 32, 4, 101e-6),
      other = rk_add(&k, 32, 8, 100e-6);
  CHECK(sp_screen_twins(&k.c[r], &k.c[twin]));
  CHECK(!sp_screen_twins(&k.c[r], &k.c[apart]));
  CHECK(!sp_screen_twins(&k.c[r], &k.c[other]));
  /* the same screening with another occupancy (half the blocks an SM) is not a twin */
  int fewer = rk_add(&k, 32, 4, 100.1e-6);
  k.c[fewer].time.active_warps_per_sm = 16;
  CHECK(!sp_screen_twins(&k.c[r], &k.c[fewer]));
  CHECK_NEAR(sp_refined_estimate(&k.r, &k.c[fewer], 1.25) * 1e6, 125.125, 1e-9);
  k.c[fewer].time.active_warps_per_sm = 0;
  k.c[fewer].time.sms_used = 66;
  CHECK(!sp_screen_twins(&k.c[r], &k.c[fewer]));
  CHECK_NEAR(sp_refined_estimate(&k.r, &k.c[twin], 1.25) * 1e6, 180.54, 1e-9);
  CHECK_NEAR(sp_refined_estimate(&k.r, &k.c[apart], 1.25) * 1e6, 126.25, 1e-9);
  CHECK_NEAR(sp_refined_estimate(&k.r, &k.c[other], 1.25) * 1e6, 125.0, 1e-9);
  /* of two twins, the smaller estimate */
  int r2 = rk_add(&k, 32, 4, 100.2e-6);
  rk_refine(&k, r2, 170e-6);
  CHECK_NEAR(sp_refined_estimate(&k.r, &k.c[twin], 1.25) * 1e6, 170 * 100.3 / 100.2, 1e-9);
}

/* The calibration scales only the sampled part of a time: each baseline's refined time less its
 * refined partly-written-sectors time, over its screened time less its screened one (which a
 * short sample can miss: himeno's 32-wide blocks screen with none, against 15.5 us refined).
 * gcc: (180 - 20) / (100 - 0) = 1.6; nvc: (330 - 30) / (310 - 10) = 1.0; sqrt(1.6) = 1.2649.
 * Taking the refined partial out of both (until 2026-11-24) gave sqrt(2.0 x 1.0714) = 1.4639. A
 * screened-only candidate is then expected at 1.2649 x (120 - 5) + 5 us. */
static void test_calibration_partial(void)
{
  ranking k;
  rk_init(&k);
  int gcc = rk_add(&k, 32, 32, 100e-6), nvc = rk_add(&k, 128, 1, 310e-6);
  k.c[nvc].time.partial_s = 10e-6;
  rk_refine(&k, gcc, 180e-6);
  rk_refine(&k, nvc, 330e-6);
  k.c[gcc].time.partial_s = 20e-6;
  k.c[nvc].screened_partial_s = 10e-6;
  k.c[nvc].time.partial_s = 30e-6;
  k.r.default_gcc = gcc;
  k.r.default_nvc = nvc;
  CHECK_NEAR(sp_screen_calibration(&k.r), sqrt(1.6), 1e-12);
  int c = rk_add(&k, 64, 2, 120e-6);
  k.c[c].time.partial_s = 5e-6;
  CHECK_NEAR(sp_refined_estimate(&k.r, &k.c[c], sp_screen_calibration(&k.r)) * 1e6,
             sqrt(1.6) * 115 + 5, 1e-9);
}

/* A later round (himeno's case): the baselines calibrate by sqrt(1.8 * 1.0) = 1.3416, but
 * group A's refined twin shows 1.8; group B has no refined twin and goes by the calibration,
 * one of it per round. Best refined 170: a contender must be expected under 166.6, or within
 * the plateau (178.5) by the margin, under 175.0, on blocks wider in x than the plateau's 32. */
static void test_later_round(void)
{
  ranking k;
  rk_init(&k);
  int gcc = rk_add(&k, 32, 32, 100e-6), nvc = rk_add(&k, 128, 1, 300e-6);
  rk_refine(&k, gcc, 180e-6);
  rk_refine(&k, nvc, 300e-6);
  k.r.default_gcc = gcc;
  k.r.default_nvc = nvc;
  int a0 = rk_add(&k, 32, 4, 95e-6);
  rk_refine(&k, a0, 171e-6);
  int best = rk_add(&k, 32, 2, 97e-6);
  rk_refine(&k, best, 170e-6);
  int a1 = rk_add(&k, 32, 4, 95.1e-6), a2 = rk_add(&k, 32, 4, 95.2e-6);
  int b0 = rk_add(&k, 32, 8, 110e-6), b1 = rk_add(&k, 32, 8, 110.2e-6),
      b2 = rk_add(&k, 32, 8, 110.4e-6);
  int c0 = rk_add(&k, 16, 16, 120e-6); /* 161.0 expected */
  int d0 = rk_add(&k, 64, 1, 130e-6);  /* 174.4: in the plateau, wider */
  int e0 = rk_add(&k, 16, 2, 129e-6);  /* 173.1: in the plateau, narrower */
  int f0 = rk_add(&k, 128, 1, 131e-6); /* 175.7: in the plateau, but not by the margin */
  CHECK_NEAR(sp_screen_calibration(&k.r), sqrt(1.8), 1e-12);
  rk_order(&k);
  int idx[MAXC];
  int n = sp_refine_select(&k.r, NULL, 1, 8, idx);
  CHECK_EQ_INT(n, 3);
  CHECK(has(idx, n, b0) && has(idx, n, c0) && has(idx, n, d0));
  CHECK(!has(idx, n, a1) && !has(idx, n, a2) && !has(idx, n, b1) && !has(idx, n, b2) &&
        !has(idx, n, e0) && !has(idx, n, f0));
  /* B refines 1.82x: its twins are expected at 200.4 and 200.7; C at 150 is the new best, and
   * nothing is expected under 147, nor under 154.4 on blocks wider than C's 16 */
  rk_refine(&k, b0, 200.2e-6);
  rk_refine(&k, c0, 150e-6);
  rk_refine(&k, d0, 176e-6);
  rk_order(&k);
  CHECK_EQ_INT(sp_refine_select(&k.r, NULL, 2, 8, idx), 0);
}

/* The plateau's contenders alone: best refined 100 us on 32x4 blocks, no baselines (the
 * calibration is 1). Screened-only candidates expected within the plateau (105) by the margin
 * (under 102.94) on blocks wider in x than 32 are refined, one of each group of twins; once
 * one of 256x1 lands in the plateau, only blocks wider still are. */
static void test_plateau_contenders(void)
{
  ranking k;
  rk_init(&k);
  int best = rk_add(&k, 32, 4, 90e-6);
  rk_refine(&k, best, 100e-6);
  int wide = rk_add(&k, 256, 1, 102e-6), twin = rk_add(&k, 256, 1, 102.1e-6),
      narrow = rk_add(&k, 16, 16, 101e-6), far = rk_add(&k, 512, 1, 103.5e-6),
      mid = rk_add(&k, 128, 1, 102.5e-6), big = rk_add(&k, 1024, 1, 101.5e-6);
  rk_order(&k);
  int idx[MAXC];
  int n = sp_refine_select(&k.r, NULL, 1, 8, idx);
  CHECK_EQ_INT(n, 2);
  CHECK(has(idx, n, wide) && has(idx, n, mid));
  /* big is the widest in x, but its 1,024 threads come after the 128 of the best's 32x4 */
  CHECK(!has(idx, n, twin) && !has(idx, n, narrow) && !has(idx, n, far) && !has(idx, n, big));
  rk_refine(&k, wide, 103e-6);
  rk_refine(&k, mid, 104e-6);
  rk_order(&k);
  /* the twin is expected at 103 x 102.1 / 102 = 103.1, and is no wider than 256 */
  CHECK_EQ_INT(sp_refine_select(&k.r, NULL, 2, 8, idx), 0);
}

/* sp_l1_strata on every class of up to 132 SMs, k SMs of it and period 1-16: the groups lie in
 * the class, in order and apart, hold k SMs, cover the residues mod the period as k
 * consecutive SMs from the class's first do, and each lies in its stratum unless a residue or
 * the room for the groups after it pushed it on. A class of 132 SMs, 4 of them, no period: SMs
 * 16, 49, 82 and 115 (the strata's middles), by hand. */
static void test_l1_strata(void)
{
  int out[SP_L1_STRATA], len[SP_L1_STRATA], bad = 0, spread = 0, cases = 0;
  for (int first = 0; first < 8; first += 7)
    for (int n = 1; n <= 132; n += n < 12 ? 1 : 11)
      for (int k = 1; k <= n; k++)
        for (int period = 1; period <= 16; period *= 2) {
          int g = sp_l1_strata(first, n, k, period, out, len);
          cases++;
          int sum = 0, end = first, res[16] = {0}, want[16] = {0};
          bool ok = g >= 1 && g <= SP_L1_STRATA;
          for (int j = 0; ok && j < g; j++) {
            ok = len[j] >= 1 && out[j] >= end && out[j] + len[j] <= first + n;
            for (int i = out[j]; ok && i < out[j] + len[j]; i++) res[i % period]++;
            end = out[j] + len[j];
            sum += len[j];
          }
          for (int i = first; i < first + k; i++) want[i % period]++;
          ok = ok && sum == k && memcmp(res, want, sizeof res) == 0;
          if (g == 1) ok = ok && (k >= n ? out[0] == first : 1);
          spread += g > 1;
          bad += !ok;
        }
  CHECK_EQ_INT(bad, 0);
  CHECK(spread > cases / 2);
  int g = sp_l1_strata(0, 132, 4, 1, out, len);
  CHECK_EQ_INT(g, 4);
  CHECK_EQ_INT(out[0], 16);
  CHECK_EQ_INT(out[1], 49);
  CHECK_EQ_INT(out[2], 82);
  CHECK_EQ_INT(out[3], 115);
  /* period 4 from SM 4, 2 SMs: residues 0 and 1 in the two halves */
  g = sp_l1_strata(4, 128, 2, 4, out, len);
  CHECK_EQ_INT(g, 2);
  CHECK(out[0] % 4 == 0 && out[1] % 4 == 1 && out[0] < 68 && out[1] >= 68);
}

/* The L1 census (sp_l1_census) against the keys counted here by brute force. 2mm.c:17's shape,
 * 800 x 900 doubles, k < 64: i on the lanes of 32-thread blocks and on blockIdx.y, j on
 * blockIdx.x (900 x 25 blocks, 32 an SM on 132 SMs). A[i][k] moves with blockIdx.y only: the
 * blocks of one row share their rows of A, and a wave's misses of A follow its distinct rows;
 * B[k][j] moves with blockIdx.x only, and no two blocks of a wave share a column. */
/* The distinct rows (b / gx) of blocks first, first + stride, ... (n of them), each weighed by its
 * lanes (32, and `last` in row `last_row`); *lanes: the blocks' lanes. */
static double distinct_rows(int64_t first, int n, int64_t stride, int64_t gx, int64_t last_row,
                            int last, double *lanes)
{
  int64_t rows[64];
  int nr = 0;
  double keys = 0;
  *lanes = 0;
  for (int j = 0; j < n; j++) {
    int64_t r = (first + stride * j) / gx;
    int w = r == last_row ? last : 32, q = 0;
    *lanes += w;
    while (q < nr && rows[q] != r) q++;
    if (q == nr) rows[nr++] = r, keys += w;
  }
  return keys;
}

/* The 2mm-like grid with `rows` rows of i (800: 25 full rows of blocks; 790: the last row of
 * blocks, in the last waves, holds 22 lanes, and its key counts for 22 / 32 of a full one's) */
static void l1_census_2mm(int64_t rows)
{
  tnest t;
  tn_gemm_rect(&t, rows, 900, 64, false); /* references: A, B, C (store) */
  sp_schedule s;
  memset(&s, 0, sizeof s);
  s.nband = 2;
  s.map[0] = (sp_loop_map){0, 1};  /* i -> tx + by */
  s.map[1] = (sp_loop_map){-1, 0}; /* j -> bx */
  s.block[0] = 32, s.block[1] = s.block[2] = 1;
  s.grid[0] = 900, s.grid[1] = 25, s.grid[2] = 1;
  /* 22,500 blocks: SMs 0-59 hold 171, SMs 60-131 170; 5 full waves of 32 and a tail */
  for (int cls = 0; cls < 2; cls++) {
    const int first = cls ? 60 : 0, n = cls ? 72 : 60;
    for (int win = 0; win < 3; win++) {
      /* the sample: the class's first SM, half its first wave; all its first wave; its first
       * two and a half waves */
      static const double windows[3][2] = {{16, 32}, {0, 32}, {0, 80}};
      sp_l1_census_in in = {132, 32, first, n, first, 1, 0, 0, {windows[win][0], windows[win][1]}, 238848, 128, 0, 0, 0};
      double factor[3];
      CHECK_EQ_INT(sp_l1_census(&t.n, &s, &in, factor), 0);
      double all = 0, all_lanes = 0, seen = 0, seen_lanes = 0, all_b = 0, seen_b = 0;
      for (int sm = first; sm < first + n; sm++)
        for (int w = 0; w < 6; w++) { /* 5 waves of 32 blocks, and one of 10 or 11 */
          const int nb = (22500 - 1 - sm) / 132 + 1, in_wave = nb - 32 * w < 32 ? nb - 32 * w : 32;
          double lanes, k = distinct_rows(sm + 132 * 32 * w, in_wave, 132, 900, 24, (int)(rows - 24 * 32), &lanes);
          all += k, all_lanes += lanes, all_b += in_wave; /* B: a key a block */
          double lo = 32.0 * w, hi = lo + in_wave, f = fmax(0, fmin(hi, in.window[1]) - fmax(lo, in.window[0])) / in_wave;
          if (sm == first) seen += f * k, seen_lanes += f * lanes, seen_b += f * in_wave;
        }
      double expect = (all / all_lanes) / (seen / seen_lanes);
      double expect_b = (all_b / all_lanes) / (seen_b / seen_lanes); /* 1 where no block is partial */
      fprintf(stderr, "  %lld rows, class %d window %g-%g: A's factor %.4f (brute force %.4f), B %.4f, C %.4f\n",
              (long long)rows, cls, in.window[0], in.window[1], factor[0], expect, factor[1], factor[2]);
      CHECK(fabs(factor[0] - expect) < 1e-9);
      CHECK(fabs(factor[1] - expect_b) < 1e-9 && factor[2] == 1);
      if (rows == 800) CHECK(factor[1] == 1);
      if (win == 0) CHECK(factor[0] > 1.05); /* the first waves hold fewer rows than the later */
    }
  }
}

static void test_l1_census(void)
{
  for (int rows = 800; rows >= 790; rows -= 10)
    l1_census_2mm(rows);
  tnest t;
  tn_gemm_rect(&t, 800, 900, 64, false); /* references: A, B, C (store) */
  sp_schedule s;
  memset(&s, 0, sizeof s);
  s.nband = 2;
  s.block[1] = s.block[2] = 1;
  s.grid[2] = 1;
  /* j capped at 528 blocks: blocks below 372 take two rounds of j, the others one, and their
   * waves lose step: no factor */
  s.map[0] = (sp_loop_map){0, -1}; /* i -> tx (800 lanes in blocks of 1024) */
  s.map[1] = (sp_loop_map){-1, 0};
  s.block[0] = 1024, s.grid[0] = 528, s.grid[1] = 1;
  sp_l1_census_in in = {132, 2, 0, 132, 0, 1, 0, 0, {0, 1}, 238848, 128, 0, 0, 0};
  double factor[3] = {0, 0, 0};
  CHECK_EQ_INT(sp_l1_census(&t.n, &s, &in, factor), 0);
  CHECK(factor[0] == 1 && factor[1] == 1 && factor[2] == 1);
  /* the same on 900 blocks, one round each: A, which every block reads, has one key a wave,
   * and the waves of two blocks share it where a last wave of one does not (SMs 0-107 hold 7
   * blocks, 4 waves; the others 6, 3 waves): 504 keys for 900 blocks over 1 for 2 */
  s.grid[0] = 900;
  in.window[1] = 2; /* SM 0's first wave */
  CHECK_EQ_INT(sp_l1_census(&t.n, &s, &in, factor), 0);
  fprintf(stderr, "  i on 1024 lanes, 900 blocks: A's factor %.4f (504 / 900 x 2 = 1.12)\n", factor[0]);
  CHECK(fabs(factor[0] - 504.0 / 900 * 2) < 1e-9 && factor[1] == 1 && factor[2] == 1);
  /* with an L1 of 512 KB, A's 400 KB stay in it from one wave to the next: no factor */
  in.l1_bytes = 512 << 10;
  CHECK_EQ_INT(sp_l1_census(&t.n, &s, &in, factor), 0);
  CHECK(factor[0] == 1);
  /* k < j + 1: block j's sequential loop runs j + 1 times, its blocks' work differs (which no
   * grid-dimension share shows) and their waves lose step */
  in.l1_bytes = 238848;
  t.n.loops[2].upper.coef[1] = 1, t.n.loops[2].upper.constant = 0;
  t.n.loops[2].trip_min = 1;
  CHECK(!sp_nest_rectangular(&t.n));
  CHECK_EQ_INT(sp_l1_census(&t.n, &s, &in, factor), 0);
  CHECK(factor[0] == 1);
}

/* A census whose SMs' last waves are drained: 2mm.c:17's i->by j->tx+bx on 29 x 291 blocks of
 * 32 threads (800 rows of i over 291 blocks of y: rows 0-217 of blocks take three rounds, the
 * others two). SMs 0-122 hold 64 blocks, two waves of 32; the second wave's blocks lie in
 * rows 145-290, and run their third round, those that have one, as a sample of its own (the
 * drain). The first waves' blocks differ in none of their rounds, the second's in none of
 * the first two: the census counts the keys of those, where the differing rounds left it
 * without factors. Over the class, the blocks' columns repeat every 29: the SMs whose
 * repeated columns hold the last, partial block (4 of 32 lanes) miss B more a lane than
 * SM 0, the sample (the L1 hit error of the candidate was +1.2 % against --exact). */
static void test_l1_census_drained(void)
{
  tnest t;
  tn_gemm_rect(&t, 800, 900, 64, false); /* references: A, B, C (store) */
  sp_schedule s;
  memset(&s, 0, sizeof s);
  s.nband = 2;
  s.map[0] = (sp_loop_map){-1, 1}; /* i -> by */
  s.map[1] = (sp_loop_map){0, 0};  /* j -> tx + bx */
  s.block[0] = 32, s.block[1] = s.block[2] = 1;
  s.grid[0] = 29, s.grid[1] = 291, s.grid[2] = 1;
  sp_l1_census_in in = {132, 32, 0, 123, 0, 1, 0, 0, {0, 32}, 238848, 128, 0, 0, 0};
  double factor[3];
  CHECK_EQ_INT(sp_l1_census(&t.n, &s, &in, factor), 0);
  CHECK(factor[0] == 1 && factor[1] == 1 && factor[2] == 1); /* undrained: the rounds differ */
  in.drain_round = 2, in.drain_per = 1, in.drain_dim = 1;
  CHECK_EQ_INT(sp_l1_census(&t.n, &s, &in, factor), 0);
  /* per key (a wave's row for A, its column for B): its iterations along its dimension (A: the
   * row's rounds; B: the column's lanes) times the rounds of its blocks along the other */
  double keys[2][2] = {{0, 0}, {0, 0}}, work[2] = {0, 0}; /* [class, sample] */
  for (int sm = 0; sm < 123; sm++)
    for (int w = 0; w < 2; w++) {
      int64_t seen_rows[32], seen_cols[32];
      int nrow = 0, ncol = 0;
      double ka = 0, kb = 0, wk = 0;
      for (int m = 32 * w; m < 32 * w + 32; m++) {
        const int64_t b = sm + 132 * m, bx = b % 29, by = b / 29;
        const int rounds = w == 1 ? 2 : by < 218 ? 3 : 2, lanes = bx == 28 ? 4 : 32;
        wk += lanes * rounds;
        int q = 0;
        while (q < nrow && seen_rows[q] != by) q++;
        if (q == nrow) seen_rows[nrow++] = by, ka += rounds;
        q = 0;
        while (q < ncol && seen_cols[q] != bx) q++;
        if (q == ncol) seen_cols[ncol++] = bx, kb += lanes * rounds;
      }
      keys[0][0] += ka, keys[1][0] += kb, work[0] += wk;
      if (sm == 0 && w == 0) keys[0][1] += ka, keys[1][1] += kb, work[1] += wk;
    }
  const double fa = keys[0][0] / work[0] / (keys[0][1] / work[1]);
  const double fb = keys[1][0] / work[0] / (keys[1][1] / work[1]);
  fprintf(stderr, "  drained 29 x 291: A's factor %.5f (brute force %.5f), B's %.5f (%.5f)\n",
          factor[0], fa, factor[1], fb);
  CHECK(fabs(factor[0] - fa) < 1e-9 && fabs(factor[1] - fb) < 1e-9 && factor[2] == 1);
  /* SM 0 repeats full columns only: the class misses 0.28 % more a lane (of its 16 % L1 hits,
   * 1.5 %) */
  CHECK(factor[1] > 1.002);
}

/* Candidate i as a 2-D nest's schedule: i on threadIdx.y, j on threadIdx.x, each dealt over the
 * grid dimension given (-1: none); the grid has gx x gy blocks. */
static void rk_map2(ranking *k, int i, int i_block, int j_block, int gx, int gy)
{
  sp_schedule *s = &k->c[i].schedule;
  s->nband = 2;
  s->map[0] = (sp_loop_map){1, i_block};
  s->map[1] = (sp_loop_map){0, j_block};
  s->grid[0] = gx, s->grid[1] = gy, s->grid[2] = 1;
}

static void rk_check_order(const ranking *k, const int *want, int n)
{
  for (int q = 0; q < n; q++) CHECK(k->order[q] == want[q]);
}

/* The plateau: the widest block x first (all of at most 256 threads), then a grid across the grain (j, on threadIdx.x, dealt
 * over blockIdx.y) behind every grid along it with the same threads, then by time. */
static void test_plateau_grain(void)
{
  ranking k;
  rk_init(&k);
  rk_add(&k, 16, 16, 1.000); /* 0: across, the fastest */
  rk_map2(&k, 0, 0, 1, 50, 21);
  rk_add(&k, 16, 16, 1.001); /* 1: along, a capped grid of another shape */
  rk_map2(&k, 1, 1, 0, 75, 14);
  rk_add(&k, 8, 32, 1.002); /* 2: along, other threads */
  rk_map2(&k, 2, 1, 0, 150, 7);
  rk_add(&k, 16, 16, 1.003); /* 3: along, j on blockIdx.x only */
  rk_map2(&k, 3, -1, 0, 75, 1);
  rk_add(&k, 16, 16, 1.06); /* 4: along, beyond the plateau */
  rk_map2(&k, 4, 1, 0, 75, 50);
  rk_order(&k);
  CHECK(sp_rank_across_grain(&k.c[0].schedule) && !sp_rank_across_grain(&k.c[1].schedule));
  CHECK(sp_rank_same_threads(&k.c[0].schedule, &k.c[1].schedule));
  CHECK(!sp_rank_same_threads(&k.c[0].schedule, &k.c[2].schedule));
  CHECK(sp_rank_plateau_size(&k.r) == 4);
  sp_rank_order_plateau(&k.r, k.order);
  /* block x 16 before 8; among the 16s, 0 behind 1 and 3 */
  rk_check_order(&k, (const int[]){1, 3, 0, 2, 4}, 5);

  /* a wider block x across the grain stays first (the block-x rule comes first), and so does a
   * grid across the grain alone in its plateau */
  const struct {
    int along_bx, along_by;
    double along_s;
  } stays[] = {{16, 16, 1.00}, {32, 8, 1.10}};
  for (int q = 0; q < 2; q++) {
    rk_init(&k);
    rk_add(&k, 32, 8, 1.00);
    rk_map2(&k, 0, 0, 1, 128, 512);
    rk_add(&k, stays[q].along_bx, stays[q].along_by, stays[q].along_s);
    rk_map2(&k, 1, 1, 0, 4096 / stays[q].along_bx, 4096 / stays[q].along_by);
    rk_order(&k);
    sp_rank_order_plateau(&k.r, k.order);
    rk_check_order(&k, (const int[]){0, 1}, 2);
  }

  /* blocks of another shape, or the loops on other threads, are not the same threads */
  sp_schedule a = k.c[0].schedule, b = k.c[1].schedule;
  CHECK(sp_rank_same_threads(&a, &b));
  b.block[2] = 2;
  CHECK(!sp_rank_same_threads(&a, &b));
  b = k.c[1].schedule;
  b.map[0].thread_dim = 2;
  CHECK(!sp_rank_same_threads(&a, &b));
  b = k.c[1].schedule;
  b.collapse_first = 0, b.collapse_count = 2;
  CHECK(!sp_rank_same_threads(&a, &b));
}

/* The plateau's shapes: blocks of at most SP_RANK_PLATEAU_THREADS threads first, widest x first
 * within each kind, then the faster; blocks of more threads after them, however fast. */
static void test_plateau_threads(void)
{
  ranking k;
  rk_init(&k);
  rk_add(&k, 1024, 1, 1.000); /* 0 */
  rk_add(&k, 32, 8, 1.001);   /* 1 */
  rk_add(&k, 512, 1, 1.002);  /* 2 */
  rk_add(&k, 256, 1, 1.010);  /* 3 */
  rk_add(&k, 32, 4, 1.003);   /* 4: the same x as 1, slower */
  rk_add(&k, 64, 8, 1.004);   /* 5: 512 threads, wider x than 1 */
  rk_add(&k, 128, 1, 1.20);   /* 6: beyond the plateau */
  for (int i = 0; i < k.r.n; i++) {
    sp_schedule *s = &k.c[i].schedule;
    s->nband = 1;
    s->map[0] = (sp_loop_map){0, 0};
    s->grid[0] = s->grid[1] = s->grid[2] = 1;
  }
  rk_order(&k);
  CHECK(sp_rank_plateau_size(&k.r) == 6);
  sp_rank_order_plateau(&k.r, k.order);
  rk_check_order(&k, (const int[]){3, 1, 4, 0, 2, 5, 6}, 7);
  CHECK(sp_rank_plateau_shape_before(&k.c[3].schedule, &k.c[0].schedule));
  CHECK(!sp_rank_plateau_shape_before(&k.c[0].schedule, &k.c[3].schedule));
  CHECK(sp_rank_plateau_shape_before(&k.c[5].schedule, &k.c[2].schedule) == false);
  CHECK(!sp_rank_plateau_shape_before(&k.c[1].schedule, &k.c[4].schedule) &&
        !sp_rank_plateau_shape_before(&k.c[4].schedule, &k.c[1].schedule));
}

int main(void)
{
  SP_RUN(test_plateau_grain);
  SP_RUN(test_plateau_threads);
  SP_RUN(test_l1_census);
  SP_RUN(test_l1_census_drained);
  SP_RUN(test_first_round);
  SP_RUN(test_estimate);
  SP_RUN(test_calibration_partial);
  SP_RUN(test_later_round);
  SP_RUN(test_plateau_contenders);
  SP_RUN(test_l1_strata);
  return sp_test_failures ? 1 : 0;
}
