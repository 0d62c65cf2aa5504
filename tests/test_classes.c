/* sp_trace_ref_classes against the trace itself: for random nests and every kind of schedule,
 * the classes' requests, sectors, lines and active lanes, per reference, equal those of the
 * generated trace coalesced instruction by instruction; and it declines exactly the references
 * it cannot count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/arch.h"
#include "schedpredict/cachemodel.h"
#include "schedpredict/traces.h"
#include "tests/sp_nestbuild.h"
#include "tests/sp_test.h"

static sp_arch H100;

static uint64_t rng_state = 777;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
  return (uint32_t)(rng_state >> 33) % n;
}

#define NCO 2 /* coalescers: 32-byte sectors in 128-byte lines, and Kepler's 128-byte transactions */
typedef struct tally {
  int64_t requests, sectors[NCO], lines[NCO], lanes;
} tally;

typedef struct count_ctx {
  sp_cm_coalescer co[NCO];
  tally *t; /* per reference */
  int only; /* the classes' sink: the reference it expects */
  int bad;
} count_ctx;

static void add(count_ctx *c, const sp_warp_instr *wi, int64_t times) {
  tally *t = &c->t[wi->ref];
  t->requests += times;
  t->lanes += times * __builtin_popcount(wi->active);
  for (int k = 0; k < NCO; k++) {
    sp_cm_warp_access wa;
    if (sp_cm_coalesce(&c->co[k], wi->addr, wi->active, wi->access_bytes, &wa) != 0) c->bad++;
    t->sectors[k] += times * wa.n_sectors;
    t->lines[k] += times * wa.n_lines;
  }
}

static int trace_sink(void *ctx, const sp_warp_instr *wi) {
  add(ctx, wi, 1);
  return 0;
}

static int class_sink(void *ctx, const sp_warp_instr *wi, int64_t count) {
  count_ctx *c = ctx;
  if (wi->ref != c->only || count <= 0 || !wi->active) c->bad++;
  add(c, wi, count);
  return 0;
}

/* A random nest: 1 to 3 band loops (some triangular, some collapsed), up to two sequential
 * loops in the body, four references with row-like strides, some irregular or guarded.
 * countable[r]: whether the reference can be counted by classes. */
static void random_nest(tnest *t, bool *countable) {
  tn_init(t);
  int nb = 1 + (int)rnd(3);
  int64_t budget = 1 << 16; /* band iterations at most */
  bool tri[SP_MAX_LOOPS] = {false};
  int64_t prev_trip = 0;
  for (int k = 0; k < nb; k++) {
    int64_t room = budget;
    for (int j = k; j < nb - 1; j++) room /= 4; /* leave the inner loops at least 4 */
    int64_t trip = 1 + (int64_t)rnd((uint32_t)(room < 300 ? room : 300));
    int64_t step = rnd(3) ? 1 : 2, lo = (int64_t)rnd(5) - 2;
    int64_t hi = lo + (trip - 1) * step;
    bool par = !(k < nb - 1 && rnd(6) == 0);
    if (k > 0 && rnd(8) == 0 && prev_trip <= 64 && budget >= 130) { /* triangular: [0, outer] */
      tri[k] = true;
      tn_loop(t, k - 1, true, par, 0, 0, 0, 1, 1);
      t->n.loops[k].trip_min = 0, t->n.loops[k].trip_max = 130;
      budget /= 130;
      prev_trip = 130;
      continue;
    }
    prev_trip = trip;
    budget /= trip;
    if (rnd(4) == 0) tn_loop(t, k - 1, true, par, hi, 0, lo, 0, -step);
    else tn_loop(t, k - 1, true, par, lo, 0, hi, 0, step);
  }
  if (nb >= 2 && rnd(5) == 0 && !tri[1]) {
    t->n.loops[0].clauses.collapse = 2, t->n.loops[1].collapsed_into = 0;
  }
  int nbody = (int)rnd(3), chain[SP_MAX_LOOPS];
  for (int k = 0; k < nb; k++) chain[k] = k;
  for (int j = 0; j < nbody; j++) {
    int64_t trip = 1 + (int64_t)rnd(4);
    chain[nb + j] = tn_loop(t, nb + j - 1, false, false, 0, 0, trip - 1, 0, 1);
  }
  int a0 = tn_array(t, 8, 1 << 24), a1 = tn_array(t, 4, 1 << 24);
  static const int64_t strides[] = {1, 1, 1, 2, 3, 7, 32, 33, 256, 257, 0, -1};
  /* depths rise, then may fall once (a store after the body's loops): each loop opens once */
  int depths[4];
  for (int r = 0; r < 4; r++) depths[r] = nb + (int)rnd((uint32_t)nbody + 1);
  for (int r = 1; r < 3; r++)
    for (int q = r; q > 0 && depths[q] < depths[q - 1]; q--) {
      int x = depths[q];
      depths[q] = depths[q - 1], depths[q - 1] = x;
    }
  for (int r = 0; r < 4; r++) {
    int a = rnd(2) ? a0 : a1;
    int64_t elem = a == a0 ? 8 : 4, coef[SP_MAX_LOOPS] = {0}, mul = elem;
    int depth = depths[r];
    for (int k = depth - 1; k >= 0; k--) {
      coef[chain[k]] = mul * strides[rnd(sizeof strides / sizeof *strides)];
      mul *= 64;
    }
    int ref = tn_ref(t, a, rnd(3) == 0, elem, chain, depth, (int64_t)rnd(9) * elem + (int64_t)rnd(2) * 4, coef);
    t->refs[ref].irregular = rnd(8) == 0;
    bool guarded = rnd(8) == 0;
    if (guarded) {
      int64_t g[SP_MAX_LOOPS] = {0};
      g[0] = 1;
      tn_guard(t, ref, SP_CMP_GE0, -3, g);
    }
    /* and a schedule without a collapse group; an irregular reference only as a line a lane,
     * not along a gathered row (an affine rest) */
    countable[ref] = !guarded && !(t->refs[ref].irregular && !sp_affine_is_const(&t->refs[ref].offset));
    for (int k = 0; k < depth; k++) countable[ref] &= !tri[chain[k]];
  }
}

static const int BLOCKS[][3] = {{32, 1, 1}, {8, 1, 1}, {64, 2, 1}, {4, 2, 1}, {2, 2, 2},
                                {32, 4, 1}, {8, 4, 2}, {128, 1, 1}, {96, 1, 1}, {48, 3, 1}};
static const int64_t CAPS[] = {1, 2};

static void test_classes_equal_trace(void) {
  sp_arch small = H100;
  small.sm_count = 3;
  int checked = 0, declined = 0, mismatched = 0, wrongly_declined = 0, nests = 0;
  for (int trial = 0; trial < 150; trial++) {
    tnest t;
    bool countable[16] = {false};
    random_nest(&t, countable);
    sp_space_options o = {BLOCKS, 10, CAPS, 2, true, false, false, 0};
    sp_space sp;
    char err[256];
    if (sp_space_build(&t.n, &small, trial % 3 ? &o : NULL, &sp, err, sizeof err) != 0) {
      fprintf(stderr, "trial %d: space: %s\n", trial, err);
      mismatched++;
      continue;
    }
    nests++;
    int stride = sp.n > 12 ? sp.n / 12 : 1;
    for (int i = 0; i < sp.n; i += stride) {
      const sp_schedule *s = &sp.items[i];
      tally want[16], got[16];
      memset(want, 0, sizeof want);
      count_ctx c = {.t = want, .only = -1};
      for (int k = 0; k < NCO; k++) sp_cm_coalescer_init(&c.co[k], k ? 128 : 32, 128);
      sp_trace_options to = {0};
      if (sp_trace_run(&t.n, s, &small, &to, trace_sink, &c, NULL) != 0) {
        char why[256] = "";
        sp_schedule_check(&t.n, s, &small, why, sizeof why);
        if (mismatched++ < 5) fprintf(stderr, "trial %d %s: trace failed: %s\n", trial, s->name, why);
        continue;
      }
      for (int r = 0; r < t.n.nrefs; r++) {
        memset(got, 0, sizeof got);
        c.t = got;
        c.only = r;
        int rc = sp_trace_ref_classes(&t.n, s, r, class_sink, &c);
        bool can = countable[r] && s->collapse_count < 2;
        CHECK(rc == 0 || rc == 1);
        if (rc == 1) {
          declined++;
          wrongly_declined += can;
          continue;
        }
        checked++;
        bool same = got[r].requests == want[r].requests && got[r].lanes == want[r].lanes;
        for (int k = 0; k < NCO; k++)
          same &= got[r].sectors[k] == want[r].sectors[k] && got[r].lines[k] == want[r].lines[k];
        if (!same && mismatched++ < 5)
          fprintf(stderr, "trial %d %s [%s] block %dx%dx%d grid %lldx%lldx%lld ref %d: requests "
                  "%lld/%lld lanes %lld/%lld sectors %lld/%lld lines %lld/%lld (classes/trace)\n",
                  trial, s->name, s->openacc, s->block[0], s->block[1], s->block[2],
                  (long long)s->grid[0], (long long)s->grid[1], (long long)s->grid[2], r,
                  (long long)got[r].requests, (long long)want[r].requests, (long long)got[r].lanes,
                  (long long)want[r].lanes, (long long)got[r].sectors[0], (long long)want[r].sectors[0],
                  (long long)got[r].lines[0], (long long)want[r].lines[0]);
        if (!can && rc == 0) mismatched++; /* counted what it cannot */
      }
      CHECK_EQ_INT(c.bad, 0);
    }
    sp_space_free(&sp);
  }
  fprintf(stderr, "  %d nests, %d references counted and equal to the trace's, %d declined\n", nests,
          checked, declined);
  CHECK_EQ_INT(mismatched, 0);
  CHECK_EQ_INT(wrongly_declined, 0);
  CHECK(checked > 2000);
  CHECK(declined > 100);
}

/* Hand-computed: k = 1 .. 254 over floats a[k] on blocks of 32 (conv3d's innermost loop): 8
 * warps, the last with 30 lanes; a full warp's 128 bytes start 4 bytes into a sector and take
 * 5 sectors, the last warp's 120 bytes (900 .. 1019) take 4: 39 sectors, 8 requests. Under a
 * grid of 3 blocks (grid-stride) the same; and a 2-D nest of 3 such rows repeats it 3 times. */
static void test_hand_counted(void) {
  for (int rows = 1; rows <= 3; rows += 2) {
    for (int64_t grid = 8; grid >= 3; grid -= 5) {
      tnest t;
      tn_init(&t);
      int chain[2];
      if (rows > 1) chain[0] = tn_loop(&t, -1, true, true, 0, 0, rows - 1, 0, 1);
      chain[rows > 1] = tn_loop(&t, rows > 1 ? 0 : -1, true, true, 1, 0, 254, 0, 1);
      int a = tn_array(&t, 4, 3 * 256 * 4);
      int64_t coef[SP_MAX_LOOPS] = {0};
      coef[chain[rows > 1]] = 4;
      if (rows > 1) coef[chain[0]] = 1024;
      tn_ref(&t, a, false, 4, chain, rows > 1 ? 2 : 1, 0, coef);
      sp_schedule s;
      memset(&s, 0, sizeof s);
      s.nband = rows > 1 ? 2 : 1;
      for (int k = 0; k < s.nband; k++) s.map[k] = (sp_loop_map){-1, -1};
      s.map[s.nband - 1] = (sp_loop_map){0, 0};
      if (rows > 1) s.map[0] = (sp_loop_map){-1, 1};
      s.block[0] = 32, s.block[1] = s.block[2] = 1;
      s.grid[0] = grid, s.grid[1] = rows, s.grid[2] = 1;
      tally got[1];
      memset(got, 0, sizeof got);
      count_ctx c = {.t = got, .only = 0};
      for (int k = 0; k < NCO; k++) sp_cm_coalescer_init(&c.co[k], k ? 128 : 32, 128);
      CHECK_EQ_INT(sp_trace_ref_classes(&t.n, &s, 0, class_sink, &c), 0);
      CHECK_EQ_INT(got[0].requests, 8 * rows);
      CHECK_EQ_INT(got[0].lanes, 254 * rows);
      CHECK_EQ_INT(got[0].sectors[0], 39 * rows);
      CHECK_EQ_INT(got[0].lines[0], 15 * rows); /* two lines a full warp, one the last */
      CHECK_EQ_INT(c.bad, 0);
    }
  }
}

int main(void) {
  char err[512];
  if (sp_arch_load("h100", &H100, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  SP_RUN(test_hand_counted);
  SP_RUN(test_classes_equal_trace);
  return SP_TEST_END();
}
