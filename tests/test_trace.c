/* Trace generation: every iteration exactly once, hand-computed transpose counts, the execution
 * order, waves and stats, sampling, irregular references. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "schedpredict/arch.h"
#include "schedpredict/placement.h"
#include "schedpredict/traces.h"
#include "tests/sp_nestbuild.h"
#include "tests/sp_test.h"

static sp_arch H100;

static uint64_t rng_state = 12345;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
  return (uint32_t)(rng_state >> 33) % n;
}

/* ---- property: every iteration exactly once ---- */

#define DIG 16 /* every index stays in [0, 16) */
typedef struct cover_ctx {
  uint64_t base[8];
  uint8_t *seen[2]; /* per probe reference: times each offset was accessed */
  int64_t size[2];
  int probe[2]; /* reference ids */
  int64_t outside;
  uint32_t block0_warps; /* bit w: warp w of block 0 issued an instruction */
  /* sp_warp_instr.shape's promise: the first instruction of each (shape, mask) seen, and the
   * later ones whose lane offsets differ from it */
  struct {
    uint64_t shape;
    uint32_t mask;
    uint64_t off[SP_WARP];
  } shapes[512];
  int nshapes;
  int64_t shaped, shape_broken;
} cover_ctx;

static void check_shape(cover_ctx *c, const sp_warp_instr *wi) {
  if (!wi->shape || !wi->active) return;
  c->shaped++;
  uint64_t a0 = wi->addr[__builtin_ctz(wi->active)];
  int k = 0;
  while (k < c->nshapes && (c->shapes[k].shape != wi->shape || c->shapes[k].mask != wi->active)) k++;
  if (k == c->nshapes) {
    if (k == 512) return;
    c->nshapes++;
    c->shapes[k].shape = wi->shape;
    c->shapes[k].mask = wi->active;
    for (int l = 0; l < SP_WARP; l++) c->shapes[k].off[l] = wi->addr[l] - a0;
    return;
  }
  for (int l = 0; l < SP_WARP; l++)
    if (wi->active >> l & 1 && wi->addr[l] - a0 != c->shapes[k].off[l]) {
      c->shape_broken++;
      return;
    }
}

static int cover_sink(void *vctx, const sp_warp_instr *wi) {
  cover_ctx *c = vctx;
  if (wi->block == 0 && wi->active && wi->warp < 32) c->block0_warps |= UINT32_C(1) << wi->warp;
  check_shape(c, wi);
  for (int p = 0; p < 2; p++) {
    if (wi->ref != c->probe[p]) continue;
    for (int l = 0; l < SP_WARP; l++) {
      if (!(wi->active >> l & 1)) continue;
      uint64_t off = wi->addr[l] - c->base[wi->array];
      if (off >= (uint64_t)c->size[p])
        c->outside++;
      else if (c->seen[p][off] < 255)
        c->seen[p][off]++;
    }
  }
  return 0;
}

/* brute-force enumeration of the domain (loop ids 0..nb-1 band, nb = the inner sequential
 * loop if present) */
static void enumerate(const sp_nest *n, int k, int last, int64_t *idx, uint8_t *exp0, uint8_t *exp1,
                      int64_t *count, int guard_loop) {
  if (k == last) {
    int64_t off = 0, mul = 1;
    for (int j = 0; j < last; j++, mul *= DIG) off += idx[j] * mul;
    if (n->loops[k - 1].band || last == 0) {
      exp0[off]++;
      (*count)++;
    } else {
      /* inner sequential loop reached: exp1 holds (band indices, m) with the guard */
      if (guard_loop < 0 || idx[last - 1] - idx[0] >= 0) exp1[off]++;
    }
    return;
  }
  const sp_loop *l = &n->loops[k];
  int64_t lo = l->lower.constant, hi = l->upper.constant;
  for (int j = 0; j < k; j++) lo += l->lower.coef[j] * idx[j], hi += l->upper.coef[j] * idx[j];
  for (int64_t i = lo; l->step > 0 ? i <= hi : i >= hi; i += l->step) {
    idx[k] = i;
    enumerate(n, k + 1, last, idx, exp0, exp1, count, guard_loop);
  }
}

static void random_nest(tnest *t, int *nb_out, bool *inner_out) {
  tn_init(t);
  int nb = 1 + (int)rnd(3);
  for (int k = 0; k < nb; k++) {
    int64_t a = rnd(8), b = rnd(8);
    if (a > b) { int64_t x = a; a = b; b = x; }
    int64_t lo_coef = 0, hi_coef = 0;
    if (k > 0 && rnd(3) == 0) { /* triangular: [outer, b+7] or [a, outer + b] */
      if (rnd(2)) lo_coef = 1, a = 0, b = 7 + (int64_t)rnd(2);
      else hi_coef = 1, b = rnd(4);
    }
    int64_t step = rnd(2) ? 1 : 2;
    bool neg = rnd(3) == 0;
    bool par = !(k < nb - 1 && rnd(6) == 0);
    if (neg) /* start at the high end */
      tn_loop(t, k - 1, true, par, b, hi_coef, a, lo_coef, -step);
    else
      tn_loop(t, k - 1, true, par, a, lo_coef, b, hi_coef, step);
  }
  if (nb >= 2 && rnd(3) == 0) {
    bool rect = true;
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < SP_MAX_LOOPS; j++)
        rect &= !t->n.loops[k].lower.coef[j] && !t->n.loops[k].upper.coef[j];
    if (rect) t->n.loops[0].clauses.collapse = 2, t->n.loops[1].collapsed_into = 0;
  }
  bool inner = rnd(2);
  int a0 = tn_array(t, 1, 1 << 20), a1 = tn_array(t, 1, 1 << 20);
  int chain[SP_MAX_LOOPS];
  int64_t coef[SP_MAX_LOOPS] = {0};
  int64_t mul = 1;
  for (int k = 0; k < nb; k++, mul *= DIG) chain[k] = k, coef[k] = mul;
  tn_ref(t, a0, false, 1, chain, nb, 0, coef);
  if (inner) { /* m from the innermost band index down to 0 or up to 9: lane-specific trips */
    /* m from the innermost band index down to 0, or from 0 up to it: lane-specific trips */
    int m = rnd(2) ? tn_loop(t, nb - 1, false, false, 0, 1, 0, 0, -1)
                   : tn_loop(t, nb - 1, false, false, 0, 0, 0, 1, 1);
    chain[nb] = m;
    coef[m] = mul;
    int r = tn_ref(t, a1, true, 1, chain, nb + 1, 0, coef);
    int64_t g[SP_MAX_LOOPS] = {0};
    g[m] = 1, g[0] = -1; /* m - i >= 0 */
    if (nb > 1) tn_guard(t, r, SP_CMP_GE0, 0, g);
  }
  *nb_out = nb;
  *inner_out = inner;
}

/* The property tests' user-style space: odd block shapes (narrow, 3-D, below a warp, rows that
 * straddle warps: 24x4's warps have different lane layouts) and grids capped at 1 and 2 blocks
 * per SM of a 3-SM GPU. */
static const int PROP_BLOCKS[][3] = {{32, 1, 1}, {8, 1, 1}, {64, 2, 1}, {4, 2, 1}, {2, 2, 2},
                                     {32, 4, 1}, {8, 4, 2}, {128, 1, 1}, {24, 4, 1}};
static const int64_t PROP_CAPS[] = {1, 2};

/* Blocks 0..nblk-1 shuffled, each dealt to a random SM of nsm (the lists keep the shuffled
 * order); sp_trace_placement_free frees it. */
static void random_placement(int64_t nblk, int nsm, sp_block_placement *out) {
  int64_t *first = calloc((size_t)nsm + 1, sizeof *first);
  int64_t *order = malloc(sizeof *order * (size_t)nblk), *block = malloc(sizeof *block * (size_t)nblk);
  int64_t *fill = calloc((size_t)nsm, sizeof *fill);
  int *sm_of = malloc(sizeof *sm_of * (size_t)nblk);
  for (int64_t b = 0; b < nblk; b++) order[b] = b;
  for (int64_t b = nblk - 1; b > 0; b--) {
    int64_t r = rnd((uint32_t)b + 1), x = order[b];
    order[b] = order[r], order[r] = x;
  }
  for (int64_t b = 0; b < nblk; b++) sm_of[b] = (int)rnd((uint32_t)nsm);
  for (int64_t b = 0; b < nblk; b++) first[sm_of[b] + 1]++;
  for (int q = 0; q < nsm; q++) first[q + 1] += first[q];
  for (int64_t b = 0; b < nblk; b++) block[first[sm_of[b]] + fill[sm_of[b]]++] = order[b];
  free(order), free(fill), free(sm_of);
  *out = (sp_block_placement){nsm, first, block};
}

/* ---- property: a negated guard group (an else branch) ----
 * b[i][j] = ... under i >= 1, i <= n-2, j >= 1, j <= m-2 (the if of guarded_stencil.c), c[i][j]
 * in its else (the same guards, a negated group), and d[i][j] under j >= 3 and not 5 <= i <= 20:
 * over a space of schedules, each reference's lanes touch exactly the points brute force gives
 * it, once each. */
typedef struct else_ctx {
  uint64_t base[8];
  int64_t n, m;
  uint8_t *seen[3];
  int64_t outside;
} else_ctx;

static int else_sink(void *vctx, const sp_warp_instr *wi) {
  else_ctx *c = vctx;
  for (int l = 0; l < SP_WARP; l++) {
    if (!(wi->active >> l & 1)) continue;
    uint64_t off = (wi->addr[l] - c->base[wi->array]) / 8;
    if (wi->array > 2 || off >= (uint64_t)(c->n * c->m)) c->outside++;
    else if (c->seen[wi->array][off] < 255) c->seen[wi->array][off]++;
  }
  return 0;
}

/* Each of a nest's 3 references (arrays 0-2, n x m doubles) touches exactly the elements
 * want[a][i * m + j] says, once each, under every schedule of a small space. Returns how many of
 * those schedules have a collapse group. */
static int check_lanes(const tnest *t, const sp_arch *arch, int64_t n, int64_t m, const uint8_t *want) {
  sp_space sp;
  char err[256];
  sp_space_options o = {PROP_BLOCKS, 9, PROP_CAPS, 2, true, false, false, 0};
  CHECK_EQ_INT(sp_space_build(&t->n, arch, &o, &sp, err, sizeof err), 0);
  int checked = 0, bad = 0, collapsed = 0;
  const size_t cells = (size_t)(n * m);
  uint8_t *got = calloc(3 * cells, 1);
  for (int i = 0; i < sp.n && got; i++) {
    else_ctx c = {.n = n, .m = m, .seen = {got, got + cells, got + 2 * cells}};
    sp_trace_array_bases(&t->n, c.base);
    memset(got, 0, 3 * cells);
    sp_trace_options to = {.active_blocks_per_sm = 0};
    sp_trace_stats st;
    int rc = sp_trace_run(&t->n, &sp.items[i], arch, &to, else_sink, &c, &st);
    bool ok = rc == 0 && c.outside == 0 && memcmp(got, want, 3 * cells) == 0;
    if (!ok && bad++ < 3) fprintf(stderr, "  schedule %s: rc %d, wrong lanes\n", sp.items[i].name, rc);
    checked++;
    collapsed += sp.items[i].collapse_count >= 2;
  }
  free(got);
  fprintf(stderr, "  %d schedules, each reference's lanes as brute force gives them\n", checked);
  CHECK(checked >= 20);
  CHECK_EQ_INT(bad, 0);
  sp_space_free(&sp);
  return collapsed;
}

/* An n x m nest (loops i, j) over three n x m arrays of doubles. */
static void tn_three_grids(tnest *t, int64_t n, int64_t m) {
  tn_2d(t, n, m);
  for (int a = 0; a < 3; a++) tn_array(t, 8, n * m * 8);
}

/* A store of element [i][j] of array a of tn_three_grids (m columns). */
static int tn_grid_store(tnest *t, int a, int64_t m) {
  int chain[2] = {0, 1};
  int64_t c2[SP_MAX_LOOPS] = {m * 8, 8};
  return tn_ref(t, a, true, 8, chain, 2, 0, c2);
}

/* sp_lanes_in, the active lanes' count the trace and the ranking take, against the builtin */
static void test_lanes_in(void) {
  uint64_t rng = 7;
  int wrong = sp_lanes_in(0) != 0 || sp_lanes_in(UINT32_MAX) != 32 || sp_lanes_in(0x80000001u) != 2;
  for (int k = 0; k < 100000; k++) {
    uint32_t m = (uint32_t)sp_test_rand(&rng) & (uint32_t)sp_test_rand(&rng);
    wrong += sp_lanes_in(m) != __builtin_popcount(m);
  }
  CHECK_EQ_INT(wrong, 0);
}

/* Collapsed schedules (the per-lane path) on a 7 x 100 nest: warps that stay within a row of
 * the group (lanes stepping along j: addresses from lane 0 and a per-reference table) and warps
 * that straddle two rows (per-lane rows). a[i][j] stored, b[j][i] (lanes 7 elements apart) and
 * c[i][j] read: each element once, as brute force gives it. */
static void test_collapsed_lanes(void) {
  sp_arch small = H100;
  small.sm_count = 3;
  const int64_t n = 7, m = 100;
  tnest t;
  tn_three_grids(&t, n, m);
  t.n.loops[0].clauses.collapse = 2, t.n.loops[1].collapsed_into = 0;
  tn_grid_store(&t, 0, m);
  int chain[2] = {0, 1};
  int64_t cb[SP_MAX_LOOPS] = {8, n * 8}, cc[SP_MAX_LOOPS] = {m * 8, 8};
  tn_ref(&t, 1, false, 8, chain, 2, 0, cb);
  tn_ref(&t, 2, false, 8, chain, 2, 0, cc);
  static uint8_t want[3][7 * 100];
  memset(want, 1, sizeof want);
  CHECK(check_lanes(&t, &small, n, m, want[0]) >= 10);
}

static void test_else_branch(void) {
  sp_arch small = H100;
  small.sm_count = 3;
  const int64_t n = 37, m = 45;
  tnest t;
  tn_three_grids(&t, n, m);
  const int64_t gi[SP_MAX_LOOPS] = {1, 0}, gim[SP_MAX_LOOPS] = {-1, 0}, gj[SP_MAX_LOOPS] = {0, 1};
  for (int a = 0; a < 2; a++) tn_edge_guards(&t, tn_grid_store(&t, a, m), n, m, a);
  int r = tn_grid_store(&t, 2, m);
  tn_guard(&t, r, SP_CMP_GE0, -3, gj);
  int first = t.nguards;
  tn_guard(&t, r, SP_CMP_GE0, -5, gi);
  tn_guard(&t, r, SP_CMP_GE0, 20, gim);
  for (int g = first; g < t.nguards; g++) t.guards[g].negated_group = 2;
  uint8_t want[3][37 * 45];
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) {
      bool inside = i >= 1 && i <= n - 2 && j >= 1 && j <= m - 2;
      want[0][i * m + j] = inside;
      want[1][i * m + j] = !inside;
      want[2][i * m + j] = j >= 3 && !(i >= 5 && i <= 20);
    }
  check_lanes(&t, &small, n, m, want[0]);
}

/* Parity guards: red-black's (i + j) % 2 == 0 and its else, and a remainder of an expression
 * that is negative at some iterations (C's % follows its sign) under a plain guard. */
static void test_parity_guards(void) {
  sp_arch small = H100;
  small.sm_count = 3;
  const int64_t n = 37, m = 45;
  tnest t;
  tn_three_grids(&t, n, m);
  const int64_t gij[SP_MAX_LOOPS] = {1, 1}, g2[SP_MAX_LOOPS] = {2, -1}, gj[SP_MAX_LOOPS] = {0, 1};
  for (int a = 0; a < 2; a++) {
    tn_guard(&t, tn_grid_store(&t, a, m), a ? SP_CMP_NE0 : SP_CMP_EQ0, 0, gij);
    t.guards[t.nguards - 1].modulus = 2;
  }
  int r = tn_grid_store(&t, 2, m);
  tn_guard(&t, r, SP_CMP_GE0, -3, gj);
  tn_guard(&t, r, SP_CMP_EQ0, -7, g2);
  t.guards[t.nguards - 1].modulus = 3;
  t.guards[t.nguards - 1].remainder = -1;
  uint8_t want[3][37 * 45];
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) {
      want[0][i * m + j] = (i + j) % 2 == 0;
      want[1][i * m + j] = (i + j) % 2 != 0;
      want[2][i * m + j] = j >= 3 && (2 * i - j - 7) % 3 == -1;
    }
  check_lanes(&t, &small, n, m, want[0]);
}

static void test_every_iteration_once(void) {
  sp_arch small = H100;
  small.sm_count = 3;
  int nschedules = 0, bad_nests = 0, nplaced = 0, nwarps_checked = 0, nlimited = 0;
  int64_t total_iters = 0, shaped = 0;
  for (int trial = 0; trial < 120; trial++) {
    tnest t;
    int nb;
    bool inner;
    random_nest(&t, &nb, &inner);
    int size = 1;
    for (int k = 0; k <= nb; k++) size *= DIG;
    uint8_t *exp0 = calloc((size_t)size, 1), *exp1 = calloc((size_t)size, 1);
    uint8_t *got0 = calloc((size_t)size, 1), *got1 = calloc((size_t)size, 1);
    int64_t idx[SP_MAX_LOOPS] = {0}, count = 0;
    if (inner) enumerate(&t.n, 0, nb + 1, idx, exp0, exp1, &count, nb > 1 ? 0 : -1);
    enumerate(&t.n, 0, nb, idx, exp0, exp1, &count, -1);
    /* every fourth trial: kernels of 40-119 registers a thread, fewer blocks an SM at once */
    sp_space_options o = {PROP_BLOCKS, 9, PROP_CAPS, 2, true, false, false, trial % 4 == 1 ? 40 + trial % 80 : 0};
    sp_space sp;
    char err[256];
    if (sp_space_build(&t.n, &small, trial % 2 ? &o : NULL, &sp, err, sizeof err) != 0) {
      fprintf(stderr, "space: %s\n", err);
      bad_nests++;
      goto next;
    }
    int stride = sp.n > 60 ? sp.n / 60 : 1;
    for (int i = 0; i < sp.n; i++) {
      if (i % stride && i != sp.default_index) continue;
      const sp_schedule *s = &sp.items[i];
      cover_ctx c;
      memset(&c, 0, sizeof c);
      sp_trace_array_bases(&t.n, c.base);
      memset(got0, 0, (size_t)size);
      memset(got1, 0, (size_t)size);
      c.seen[0] = got0, c.seen[1] = got1;
      c.size[0] = c.size[1] = size;
      c.probe[0] = 0, c.probe[1] = inner ? 1 : -1;
      sp_trace_options to = {.active_blocks_per_sm = 0};
      /* every other schedule: blocks dealt to random SMs in random order (a recorded placement) */
      int64_t nblk = s->grid[0] * s->grid[1] * s->grid[2];
      sp_block_placement place = {0};
      if (i % 2 && nblk <= 4096) {
        random_placement(nblk, small.sm_count, &place);
        to.placement = &place;
        nplaced++;
      }
      sp_trace_stats st;
      int rc = sp_trace_run(&t.n, s, &small, &to, cover_sink, &c, &st);
      sp_trace_placement_free(&place);
      /* the warps that issue in block 0 are the working warps; an upper bound where the band's
       * bounds vary (the first block's lanes may lack iterations that trip_max counts) */
      int issued = __builtin_popcount(c.block0_warps);
      bool warps_ok = sp_nest_rectangular(&t.n) ? issued == st.warps_working_per_block
                                                : issued <= st.warps_working_per_block;
      nwarps_checked += sp_nest_rectangular(&t.n);
      shaped += c.shaped;
      nlimited += s->registers > 0 && st.active_blocks_per_sm < sp_arch_active_blocks_per_sm(
                                           &small, s->block[0] * s->block[1] * s->block[2], 0, 0);
      bool ok = rc == 0 && c.outside == 0 && c.shape_broken == 0 && memcmp(got0, exp0, (size_t)size) == 0 &&
                st.iterations == count && (!inner || memcmp(got1, exp1, (size_t)size) == 0) &&
                warps_ok && st.active_blocks_per_sm == sp_schedule_blocks_per_sm(&small, s);
      nschedules++;
      if (!ok) {
        if (bad_nests < 5)
          fprintf(stderr, "trial %d schedule %s [%s] block %dx%dx%d grid %lldx%lldx%lld: rc %d, "
                  "outside %lld, iterations %lld of %lld, warps issued in block 0 %d of %d "
                  "working, %lld instructions break their shape's layout\n", trial, s->name, s->openacc, s->block[0],
                  s->block[1], s->block[2], (long long)s->grid[0], (long long)s->grid[1],
                  (long long)s->grid[2], rc, (long long)c.outside, (long long)st.iterations,
                  (long long)count, issued, st.warps_working_per_block, (long long)c.shape_broken);
        bad_nests++;
        break;
      }
      total_iters += st.iterations;
    }
    sp_space_free(&sp);
  next:
    free(exp0), free(exp1), free(got0), free(got1);
  }
  fprintf(stderr, "  %d schedules checked (%d under a random placement, %d with the working warps "
          "exact, %d with fewer blocks an SM for their registers), %lld iterations, %lld shaped "
          "instructions\n", nschedules, nplaced, nwarps_checked, nlimited, (long long)total_iters,
          (long long)shaped);
  CHECK_EQ_INT(bad_nests, 0);
  CHECK(nwarps_checked > 300);
  CHECK(nschedules > 1000);
  CHECK(nplaced > 400);
  CHECK(nlimited > 50);
  CHECK(shaped > 20000);
}

/* ---- one candidate per trace ----
 * The space keeps one schedule of each class sp_schedule_same_trace forms (a loop's hardware
 * dimensions of extent 1 dropped). The claim under that: adding or removing such a dimension
 * changes nothing a candidate is judged by. For random nests, each schedule of the space and
 * each legal variant of it one such dimension apart give the same warp instructions (every
 * field, addresses of active lanes), the same per-SM work, working blocks and uneven lanes. */

typedef struct stream_hash {
  uint64_t h, n;
} stream_hash;

static void mix(stream_hash *c, uint64_t v) {
  c->h = (c->h ^ v) * UINT64_C(0x100000001b3);
}

static int hash_sink(void *vctx, const sp_warp_instr *wi) {
  stream_hash *c = vctx;
  mix(c, (uint64_t)wi->sm);
  mix(c, (uint64_t)wi->block);
  mix(c, (uint64_t)wi->warp);
  mix(c, (uint64_t)wi->ref);
  mix(c, wi->active);
  for (int l = 0; l < SP_WARP; l++)
    if (wi->active >> l & 1) mix(c, wi->addr[l]);
  c->n++;
  return 0;
}

static int variants_one_dim_apart(const sp_schedule *s, sp_schedule *out) {
  int n = 0;
  bool bused[3] = {false}, tused[3] = {false};
  for (int k = 0; k < s->nband; k++) {
    if (s->map[k].block_dim >= 0) bused[s->map[k].block_dim] = true;
    if (s->map[k].thread_dim >= 0) tused[s->map[k].thread_dim] = true;
  }
  for (int k = 0; k < s->nband; k++) {
    sp_loop_map m = s->map[k];
    if (m.block_dim >= 0 && s->grid[m.block_dim] == 1) {
      out[n] = *s;
      out[n++].map[k].block_dim = -1;
    }
    if (m.thread_dim >= 0 && s->block[m.thread_dim] == 1) {
      out[n] = *s;
      out[n++].map[k].thread_dim = -1;
    }
    for (int e = 0; e < 3 && m.block_dim < 0; e++)
      if (!bused[e] && s->grid[e] == 1) {
        out[n] = *s;
        out[n++].map[k].block_dim = e;
      }
    for (int d = 0; d < 3 && m.thread_dim < 0; d++)
      if (!tused[d] && s->block[d] == 1) {
        out[n] = *s;
        out[n++].map[k].thread_dim = d;
      }
  }
  return n;
}

/* A random nest (without its inner loop where band_only) and its space on `small`: the default
 * space on even trials, the user-style one on odd ones. false where the space fails. */
static bool random_nest_space(int trial, const sp_arch *small, bool band_only, tnest *t, int *nb,
                              bool *inner, sp_space *sp) {
  random_nest(t, nb, inner);
  if (band_only && *inner) t->n.nloops = *nb, t->n.nrefs = 1;
  sp_space_options o = {PROP_BLOCKS, 9, PROP_CAPS, 2, true, false, false, 0};
  char err[256];
  return sp_space_build(&t->n, small, trial % 2 ? &o : NULL, sp, err, sizeof err) == 0;
}

static void test_same_trace(void) {
  sp_arch small = H100;
  small.sm_count = 3;
  int compared = 0, differ = 0, unequal = 0;
  for (int trial = 0; trial < 120; trial++) {
    tnest t;
    int nb;
    bool inner;
    sp_space sp;
    if (!random_nest_space(trial, &small, false, &t, &nb, &inner, &sp)) continue;
    for (int i = 0; i < sp.n; i++)
      for (int j = i + 1; j < sp.n; j++) unequal += sp_schedule_same_trace(&sp.items[i], &sp.items[j]);
    for (int i = 0; i < sp.n; i++) {
      const sp_schedule *s = &sp.items[i];
      sp_schedule var[4 * SP_MAX_LOOPS];
      int nv = variants_one_dim_apart(s, var);
      stream_hash a = {UINT64_C(0xcbf29ce484222325), 0};
      double wa[3], wb[3];
      int rwa = sp_trace_sm_work(&t.n, s, small.sm_count, wa);
      bool ran = false;
      for (int v = 0; v < nv; v++) {
        CHECK(sp_schedule_same_trace(s, &var[v]));
        if (sp_schedule_check(&t.n, &var[v], &small, NULL, 0) != 0) continue;
        if (!ran) CHECK_EQ_INT(sp_trace_run(&t.n, s, &small, NULL, hash_sink, &a, NULL), 0);
        ran = true;
        stream_hash b = {UINT64_C(0xcbf29ce484222325), 0};
        CHECK_EQ_INT(sp_trace_run(&t.n, &var[v], &small, NULL, hash_sink, &b, NULL), 0);
        bool same = a.h == b.h && a.n == b.n &&
                    sp_trace_working_blocks(&t.n, s) == sp_trace_working_blocks(&t.n, &var[v]) &&
                    sp_trace_lane_uneven_dims(&t.n, s) == sp_trace_lane_uneven_dims(&t.n, &var[v]);
        int rwb = sp_trace_sm_work(&t.n, &var[v], small.sm_count, wb);
        same &= rwa == rwb; /* work up to a factor all blocks share: compared as shares */
        for (int k = 0; rwa == 0 && rwb == 0 && k < small.sm_count; k++)
          same &= fabs(wa[k] / (wa[0] + wa[1] + wa[2]) - wb[k] / (wb[0] + wb[1] + wb[2])) < 1e-12;
        if (!same && differ++ < 3)
          fprintf(stderr, "trial %d: %s [%s] %dx%dx%d / %lldx%lldx%lld and a variant one "
                  "dimension of extent 1 apart differ\n", trial, s->name, s->openacc, s->block[0],
                  s->block[1], s->block[2], (long long)s->grid[0], (long long)s->grid[1],
                  (long long)s->grid[2]);
        compared++;
      }
    }
    sp_space_free(&sp);
  }
  fprintf(stderr, "  %d schedule pairs one dimension of extent 1 apart compared\n", compared);
  CHECK_EQ_INT(differ, 0);
  CHECK_EQ_INT(unequal, 0); /* the space holds one schedule per trace */
  CHECK(compared > 500);
}

/* ---- transpose by hand ---- */

typedef struct tp_ctx {
  int64_t loads, stores, bad_loads, bad_stores;
} tp_ctx;

static int tp_sink(void *vctx, const sp_warp_instr *wi) {
  tp_ctx *c = vctx;
  bool contiguous = wi->active == 0xffffffffu, strided = contiguous;
  for (int l = 1; l < SP_WARP; l++) {
    contiguous &= wi->addr[l] == wi->addr[0] + 8 * (uint64_t)l;
    strided &= wi->addr[l] == wi->addr[0] + 32768 * (uint64_t)l;
  }
  if (wi->write) {
    c->stores++;
    c->bad_stores += !strided;
  } else {
    c->loads++;
    c->bad_loads += !contiguous;
  }
  return 0;
}

static void init_schedule(sp_schedule *s, int nband) {
  memset(s, 0, sizeof *s);
  s->nband = nband;
  for (int k = 0; k < SP_MAX_LOOPS; k++) s->map[k].thread_dim = s->map[k].block_dim = -1;
  s->block[0] = s->block[1] = s->block[2] = 1;
  s->grid[0] = s->grid[1] = s->grid[2] = 1;
}

static void test_transpose(void) {
  tnest t;
  tn_transpose(&t, 4096);
  sp_schedule s;
  init_schedule(&s, 2);
  s.map[1] = (sp_loop_map){0, 0}; /* j: threadIdx.x + blockIdx.x */
  s.map[0] = (sp_loop_map){1, 1}; /* i: threadIdx.y + blockIdx.y */
  s.block[0] = 32, s.block[1] = 8;
  s.grid[0] = 128, s.grid[1] = 512;
  tp_ctx c = {0};
  sp_trace_stats st;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, tp_sink, &c, &st), 0);
  CHECK_EQ_INT(c.loads, 524288);
  CHECK_EQ_INT(c.stores, 524288);
  CHECK_EQ_INT(c.bad_loads, 0);
  CHECK_EQ_INT(c.bad_stores, 0);
  CHECK_EQ_INT(st.iterations, 4096 * 4096);
  CHECK_EQ_INT(st.warp_instructions, 2 * 524288);
  CHECK_EQ_INT(st.blocks, 65536);
  CHECK_EQ_INT(st.blocks_simulated, 65536);
  int act = sp_arch_active_blocks_per_sm(&H100, 256, 0, 0);
  CHECK_EQ_INT(st.active_blocks_per_sm, act);
  CHECK_EQ_INT(st.waves, (65536 + act * H100.sm_count - 1) / (act * H100.sm_count));
}

/* ---- execution order ---- */

typedef struct seq_ctx {
  int n, cap;
  int sm[256], warp[256], ref[256];
  int64_t block[256];
} seq_ctx;

static int seq_sink(void *vctx, const sp_warp_instr *wi) {
  seq_ctx *c = vctx;
  if (c->n < c->cap) {
    c->sm[c->n] = wi->sm, c->block[c->n] = wi->block, c->warp[c->n] = wi->warp, c->ref[c->n] = wi->ref;
  }
  c->n++;
  return 0;
}

static void test_order(void) {
  sp_arch tiny = H100;
  tiny.sm_count = 2;
  /* 1-D loop, 64 threads per block (2 warps), one iteration per thread, two references */
  tnest t;
  tn_init(&t);
  tn_loop(&t, -1, true, true, 0, 0, 8 * 64 - 1, 0, 1);
  int a = tn_array(&t, 4, 8 * 64 * 4);
  int ch[1] = {0};
  int64_t c1[SP_MAX_LOOPS] = {4};
  tn_ref(&t, a, false, 4, ch, 1, 0, c1);
  tn_ref(&t, a, true, 4, ch, 1, 0, c1);
  sp_schedule s;
  init_schedule(&s, 1);
  s.map[0] = (sp_loop_map){0, 0};
  s.block[0] = 64;
  s.grid[0] = 8;
  /* one resident block: per SM, for each block in turn: ref 0 of warps 0, 1, then ref 1;
   * the two SMs alternate */
  sp_trace_options o = {.active_blocks_per_sm = 1};
  seq_ctx c = {.cap = 256};
  sp_trace_stats st;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &tiny, &o, seq_sink, &c, &st), 0);
  CHECK_EQ_INT(c.n, 8 * 2 * 2);
  int bad = 0;
  for (int i = 0; i < c.n && i < c.cap; i++) {
    int sm = i % 2, k = i / 2;         /* k-th instruction of this SM */
    int round = k / 4, within = k % 4; /* 4 instructions per block */
    int64_t block = sm + 2 * round;
    int ref = within / 2, warp = within % 2;
    if (c.sm[i] != sm || c.block[i] != block || c.warp[i] != warp || c.ref[i] != ref) {
      if (bad++ < 4)
        fprintf(stderr, "  instr %d: sm %d block %lld warp %d ref %d, expected %d %lld %d %d\n", i,
                c.sm[i], (long long)c.block[i], c.warp[i], c.ref[i], sm, (long long)block, warp, ref);
    }
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(st.waves, 4);

  /* two resident blocks: SM 0 holds blocks 0 and 2, interleaves their warps (b0w0, b0w1, b2w0,
   * b2w1 for ref 0, then ref 1), then blocks 4 and 6 */
  o.active_blocks_per_sm = 2;
  memset(&c, 0, sizeof c);
  c.cap = 256;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &tiny, &o, seq_sink, &c, &st), 0);
  CHECK_EQ_INT(c.n, 32);
  bad = 0;
  for (int i = 0; i < c.n && i < c.cap; i++) {
    int sm = i % 2, k = i / 2;
    int wave = k / 8, within = k % 8;
    int ref = within / 4, slot = (within % 4) / 2, warp = within % 2;
    int64_t block = sm + 2 * (2 * wave + slot);
    if (c.sm[i] != sm || c.block[i] != block || c.warp[i] != warp || c.ref[i] != ref) bad++;
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(st.waves, 2);
}

/* ---- waves, stats, sampling ---- */

typedef struct sm_offset_ctx {
  int first, nsm;
  int64_t n, bad, min_block;
} sm_offset_ctx;

static int sm_offset_sink(void *ctx, const sp_warp_instr *wi) {
  sm_offset_ctx *c = ctx;
  c->n++;
  c->bad += wi->block % c->nsm != c->first + wi->sm;
  if (wi->block < c->min_block) c->min_block = wi->block;
  return 0;
}

typedef struct count_ctx {
  int64_t n, per_sm_lt;
  int k;
  uint64_t hash; /* of the instructions of SMs < k, in order */
} count_ctx;

static int count_sink(void *vctx, const sp_warp_instr *wi) {
  count_ctx *c = vctx;
  c->n++;
  if (wi->sm < c->k) {
    c->per_sm_lt++;
    uint64_t h = c->hash ^ ((uint64_t)wi->sm << 48 ^ (uint64_t)wi->block << 8 ^ (uint64_t)wi->warp);
    h = (h ^ wi->addr[0] ^ wi->active) * UINT64_C(0x100000001b3);
    c->hash = h;
  }
  return 0;
}

static void test_waves_sampling(void) {
  tnest t;
  tn_2d_load(&t, 4096, 128, 8);
  sp_schedule s;
  init_schedule(&s, 2);
  s.map[1] = (sp_loop_map){0, -1}; /* 2_1: j on threadIdx.x, i on blockIdx.x */
  s.map[0] = (sp_loop_map){-1, 0};
  s.block[0] = 128;
  s.grid[0] = 4096;
  count_ctx full = {.k = 5};
  sp_trace_stats st;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, count_sink, &full, &st), 0);
  int act = sp_arch_active_blocks_per_sm(&H100, 128, 0, 0);
  CHECK_EQ_INT(st.active_blocks_per_sm, act);
  CHECK_EQ_INT(st.blocks, 4096);
  CHECK_EQ_INT(st.waves, (4096 + act * H100.sm_count - 1) / (act * H100.sm_count));
  CHECK_EQ_INT(st.warp_instructions, 4096 * 4);
  CHECK_EQ_INT(full.n, 4096 * 4);
  CHECK_EQ_INT(st.iterations, 4096 * 128);

  sp_trace_options o = {.sample_sms = 5};
  count_ctx samp = {.k = 5};
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, &o, count_sink, &samp, &st), 0);
  CHECK_EQ_INT(samp.n, full.per_sm_lt);
  CHECK(samp.hash == full.hash);
  CHECK_EQ_INT(st.warp_instructions, full.per_sm_lt);
  int64_t exp_blocks = 0;
  for (int i = 0; i < 5; i++) exp_blocks += (4096 - 1 - i) / H100.sm_count + 1;
  CHECK_EQ_INT(st.blocks_simulated, exp_blocks);

  /* SMs 7..11 instead of 0..4: their blocks (b mod #SMs = 7 + the sink's SM index) */
  o.sample_sm_first = 7;
  sm_offset_ctx off = {.first = 7, .nsm = H100.sm_count};
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, &o, sm_offset_sink, &off, &st), 0);
  CHECK_EQ_INT(off.bad, 0);
  CHECK_EQ_INT(off.n, st.warp_instructions);
  exp_blocks = 0;
  for (int i = 7; i < 12; i++) exp_blocks += (4096 - 1 - i) / H100.sm_count + 1;
  CHECK_EQ_INT(st.blocks_simulated, exp_blocks);
  CHECK_EQ_INT(st.warp_instructions, exp_blocks * 4);

  /* their last blocks only: each SM from its 31st block on (each has 31, so only its last);
   * and a skip past an SM's blocks leaves it nothing */
  o.sample_skip_blocks = 30;
  off = (sm_offset_ctx){.first = 7, .nsm = H100.sm_count, .min_block = INT64_MAX};
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, &o, sm_offset_sink, &off, &st), 0);
  CHECK_EQ_INT(off.bad, 0);
  CHECK_EQ_INT(off.min_block, 7 + 30 * H100.sm_count);
  exp_blocks = 0;
  for (int i = 7; i < 12; i++) exp_blocks += (4096 - 1 - i) / H100.sm_count + 1 - 30;
  CHECK_EQ_INT(st.blocks_simulated, exp_blocks);
  CHECK_EQ_INT(off.n, exp_blocks * 4);
  o.sample_waves = 1;
  o.sample_skip_blocks = 4096;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, &o, sm_offset_sink, &off, &st), 0);
  CHECK_EQ_INT(st.blocks_simulated, 0);
  o.sample_skip_blocks = 0;
  o.sample_waves = 0;
  o.sample_sm_first = 0;

  /* a grid capped at 1000 blocks: rounds of 1000 rows, the fifth holds 96; from the third
   * round on, every block starts at its row b + 2000 */
  o.sample_sms = 0;
  s.grid[0] = 1000;
  o.sample_skip_rounds = 2;
  count_ctx r2 = {.k = 0};
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, &o, count_sink, &r2, &st), 0);
  CHECK_EQ_INT(st.iterations, (4096 - 2000) * 128);
  CHECK_EQ_INT(r2.n, (4096 - 2000) * 4);
  o.sample_skip_rounds = 4;
  off = (sm_offset_ctx){.first = 0, .nsm = H100.sm_count, .min_block = INT64_MAX};
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, &o, sm_offset_sink, &off, &st), 0);
  CHECK_EQ_INT(st.iterations, 96 * 128);
  CHECK_EQ_INT(off.n, 96 * 4);
  CHECK_EQ_INT(off.min_block, 0);
  CHECK_EQ_INT(off.bad, 0);
  /* a 2-D grid skips the rounds of its one loop that takes more than one: j's 128 over 2 x 128
   * threads take one, so the fifth round of i's, where by = 1 holds no j */
  sp_schedule s2 = s;
  s2.map[1] = (sp_loop_map){0, 1};
  s2.grid[1] = 2;
  CHECK_EQ_INT(sp_trace_skip_dim(&t.n, &s2), 0);
  r2.n = 0;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s2, &H100, &o, count_sink, &r2, &st), 0);
  CHECK_EQ_INT(st.iterations, 96 * 128);
  CHECK_EQ_INT(r2.n, 96 * 4);
  /* ... and has none where both take more than one (j's 128 over 2 x 32 threads) */
  s2.block[0] = 32;
  CHECK_EQ_INT(sp_trace_skip_dim(&t.n, &s2), -1);
  CHECK(sp_trace_run(&t.n, &s2, &H100, &o, count_sink, &r2, &st) != 0);
  o.sample_skip_rounds = 0;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s2, &H100, &o, count_sink, &r2, &st), 0);
  s.grid[0] = 4096;

  /* one wave: each SM stops after `act` blocks */
  o.sample_sms = 0;
  o.sample_waves = 1;
  count_ctx w1 = {.k = 0};
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, &o, count_sink, &w1, &st), 0);
  CHECK_EQ_INT(st.blocks_simulated, (int64_t)act * H100.sm_count);
  CHECK_EQ_INT(w1.n, (int64_t)act * H100.sm_count * 4);
}

/* grid y capped at 65535 with a longer loop: the grid-stride loop covers the rest */
static void test_grid_stride_y(void) {
  tnest t;
  tn_2d_load(&t, 70000, 32, 4);
  sp_space sp;
  char err[256];
  CHECK_EQ_INT(sp_space_build(&t.n, &H100, NULL, &sp, err, sizeof err), 0);
  int found = 0;
  for (int i = 0; i < sp.n && !found; i++) {
    const sp_schedule *s = &sp.items[i];
    if (strcmp(s->name, "2_2") || s->block[0] != 32) continue;
    if (s->grid[1] != 65535) continue;
    found = 1;
    count_ctx c = {.k = 0};
    sp_trace_stats st;
    CHECK_EQ_INT(sp_trace_run(&t.n, s, &H100, NULL, count_sink, &c, &st), 0);
    CHECK_EQ_INT(st.iterations, 70000 * 32);
    CHECK_EQ_INT(c.n, 70000);
  }
  CHECK(found);
  sp_space_free(&sp);
}

/* j -> tx + bx, i -> ty + by on 32x8 blocks over the transpose's loops (i = loop 0, j = loop
 * 1), on a gx x gy grid. */
static void tile_schedule(sp_schedule *s, int64_t gx, int64_t gy) {
  init_schedule(s, 2);
  s->map[1] = (sp_loop_map){0, 0};
  s->map[0] = (sp_loop_map){1, 1};
  s->block[0] = 32, s->block[1] = 8;
  s->grid[0] = gx, s->grid[1] = gy;
}

/* Both loops collapsed onto tx + bx, on 1-D blocks and grid. */
static void collapsed_schedule(sp_schedule *s, int block, int64_t grid) {
  init_schedule(s, 2);
  s->collapse_first = 0, s->collapse_count = 2;
  s->map[0] = (sp_loop_map){0, 0};
  s->block[0] = block;
  s->grid[0] = grid;
}

/* Blocks with iterations, by hand on the 4096^2 transpose. */
static void test_working_blocks(void) {
  tnest t;
  tn_transpose(&t, 4096);
  sp_schedule s;
  tile_schedule(&s, 128, 512); /* covers the loops exactly */
  CHECK_EQ_INT(sp_trace_working_blocks(&t.n, &s), 65536);
  s.grid[0] = 64, s.grid[1] = 64; /* capped: grid-stride, every block works */
  CHECK_EQ_INT(sp_trace_working_blocks(&t.n, &s), 4096);
  s.grid[1] = 1000; /* i needs 4096 / 8 = 512 blocks along y */
  CHECK_EQ_INT(sp_trace_working_blocks(&t.n, &s), 64 * 512);
  /* GCC's default on jacobi's shape: i -> ty + bx (32 rows a block), j -> tx, 16,896 gangs */
  init_schedule(&s, 2);
  s.map[0] = (sp_loop_map){1, 0};
  s.map[1] = (sp_loop_map){0, -1};
  s.block[0] = 32, s.block[1] = 32;
  s.grid[0] = 16896;
  CHECK_EQ_INT(sp_trace_working_blocks(&t.n, &s), 128);
  /* and the trace agrees: only blocks 0..127 issue instructions */
  count_ctx c = {.k = 0};
  sp_trace_stats st;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, count_sink, &c, &st), 0);
  CHECK_EQ_INT(st.blocks, 16896);
  CHECK_EQ_INT(st.blocks_working, 128);
  CHECK_EQ_INT(st.iterations, 4096 * 4096);
  /* a block-only loop: one block per iteration at most */
  init_schedule(&s, 2);
  s.map[0] = (sp_loop_map){-1, 1};
  s.map[1] = (sp_loop_map){0, 0};
  s.block[0] = 256;
  s.grid[0] = 16, s.grid[1] = 5000;
  CHECK_EQ_INT(sp_trace_working_blocks(&t.n, &s), 16 * 4096);
  /* a collapsed pair spread over x: 4096^2 / 256 blocks needed */
  collapsed_schedule(&s, 256, 100000);
  CHECK_EQ_INT(sp_trace_working_blocks(&t.n, &s), 65536);
  s.grid[0] = 1320;
  CHECK_EQ_INT(sp_trace_working_blocks(&t.n, &s), 1320);
  CHECK_EQ_INT(sp_trace_working_warps(&t.n, &s), 8); /* 4096^2 iterations fill every lane */
}

/* Rounds a thread runs (sp_trace_thread_rounds), by hand on the 4096^2 transpose, and against
 * the trace where every thread runs the same count. */
static void test_thread_rounds(void) {
  tnest t;
  tn_transpose(&t, 4096);
  sp_schedule s;
  tile_schedule(&s, 128, 512);
  CHECK_EQ_INT(sp_trace_thread_rounds(&t.n, &s), 1);
  s.grid[0] = 64, s.grid[1] = 64; /* j: 4096 / (32 x 64) = 2, i: 4096 / (8 x 64) = 8 */
  CHECK_EQ_INT(sp_trace_thread_rounds(&t.n, &s), 16);
  count_ctx c = {.k = 0};
  sp_trace_stats st;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, count_sink, &c, &st), 0);
  CHECK_EQ_INT(st.iterations, 16 * st.blocks * 256);
  s.grid[1] = 3; /* i: ceil(4096 / 24) = 171 */
  CHECK_EQ_INT(sp_trace_thread_rounds(&t.n, &s), 2 * 171);
  /* j on threads only, i on blocks only */
  init_schedule(&s, 2);
  s.map[1] = (sp_loop_map){0, -1};
  s.map[0] = (sp_loop_map){-1, 0};
  s.block[0] = 256;
  s.grid[0] = 4096;
  CHECK_EQ_INT(sp_trace_thread_rounds(&t.n, &s), 16);
  /* i on no hardware dimension: every thread runs it whole */
  s.map[0] = (sp_loop_map){-1, -1};
  s.map[1] = (sp_loop_map){0, 0};
  s.grid[0] = 16;
  CHECK_EQ_INT(sp_trace_thread_rounds(&t.n, &s), 4096);
  /* a collapsed pair over x: 4096^2 / (256 x 1320) = 49.6 */
  collapsed_schedule(&s, 256, 1320);
  CHECK_EQ_INT(sp_trace_thread_rounds(&t.n, &s), 50);
  s.grid[0] = 65536;
  CHECK_EQ_INT(sp_trace_thread_rounds(&t.n, &s), 1);
}

/* sp_warp_instr.shape on a 64 x 64 transpose with 24 x 4 blocks: warp 0 holds rows 0 (24
 * lanes) and 1 (8), warp 1 rows 1 (16) and 2 (16), so the two have different lane layouts under
 * the same full mask and must not share a shape; every instruction of a shape keeps its layout.
 * A collapsed schedule (per-lane path) gives a shape per reference to the warps whose lanes stay
 * in one row of the group: all of them on 64-wide rows, and none of those that wrap into the
 * next row on 48-wide ones (warps 1, 4, 7, ...: lanes 32-47 of a row and 0-15 of the next). */
static int shape_sink(void *vctx, const sp_warp_instr *wi) {
  check_shape(vctx, wi);
  return 0;
}

static void test_shapes(void) {
  tnest t;
  tn_transpose(&t, 64);
  sp_schedule s;
  init_schedule(&s, 2);
  s.map[0] = (sp_loop_map){1, 1}; /* i -> ty + by */
  s.map[1] = (sp_loop_map){0, 0}; /* j -> tx + bx */
  s.block[0] = 24, s.block[1] = 4;
  s.grid[0] = 3, s.grid[1] = 16;
  cover_ctx *c = calloc(1, sizeof *c);
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, shape_sink, c, NULL), 0);
  CHECK_EQ_INT(c->shape_broken, 0);
  CHECK(c->shaped > 0);
  /* full-mask shapes: one per reference and warp of the block (3 warps, 2 references) */
  int full = 0;
  for (int k = 0; k < c->nshapes; k++) full += c->shapes[k].mask == UINT32_MAX;
  CHECK_EQ_INT(full, 6);
  memset(c, 0, sizeof *c);
  init_schedule(&s, 2);
  s.collapse_first = 0, s.collapse_count = 2;
  s.map[0] = (sp_loop_map){0, 0};
  s.block[0] = 128, s.grid[0] = 32;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, shape_sink, c, NULL), 0);
  CHECK_EQ_INT(c->shape_broken, 0);
  CHECK_EQ_INT(c->shaped, 2 * 64 * 64 / 32); /* every instruction of both references */
  CHECK_EQ_INT(c->nshapes, 2);
  tn_transpose(&t, 48);
  memset(c, 0, sizeof *c);
  s.grid[0] = 18; /* 48 x 48 / 128 */
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, shape_sink, c, NULL), 0);
  CHECK_EQ_INT(c->shape_broken, 0);
  CHECK_EQ_INT(c->shaped, 2 * (48 * 48 / 32) * 2 / 3); /* 72 warps, 24 of which wrap */
  free(c);
}

/* Warps with iterations, by hand on a 40 x 40 transpose (i = loop 0, j = loop 1). */
static void test_working_warps(void) {
  tnest t;
  tn_transpose(&t, 40);
  sp_schedule s;
  init_schedule(&s, 2);
  s.map[0] = (sp_loop_map){1, 1}; /* i -> ty + by */
  s.map[1] = (sp_loop_map){0, 0}; /* j -> tx + bx */
  s.block[0] = 64, s.block[1] = 4; /* a row of 64 lanes is 2 warps, lanes 0-39 work: all 8 */
  CHECK_EQ_INT(sp_trace_working_warps(&t.n, &s), 8);
  s.block[0] = 256, s.block[1] = 1; /* lanes 0-39: warps 0 and 1 of 8 */
  CHECK_EQ_INT(sp_trace_working_warps(&t.n, &s), 2);
  s.block[0] = 32, s.block[1] = 32; /* 32 of i's 40 rows, a warp each */
  CHECK_EQ_INT(sp_trace_working_warps(&t.n, &s), 32);
  s.block[0] = 1024, s.block[1] = 1; /* 40 lanes of 1024 */
  CHECK_EQ_INT(sp_trace_working_warps(&t.n, &s), 2);
  tn_transpose(&t, 4);
  s.block[0] = 32, s.block[1] = 8; /* rows 0-3 (a warp each), lanes 0-3 of each */
  CHECK_EQ_INT(sp_trace_working_warps(&t.n, &s), 4);
  s.block[0] = 8, s.block[1] = 32; /* 4 rows of 8 lanes, 4 rows a warp: rows 0-3 in warp 0 */
  CHECK_EQ_INT(sp_trace_working_warps(&t.n, &s), 1);
  /* a collapsed pair on x: 16 iterations of 128 lanes */
  collapsed_schedule(&s, 128, 1);
  CHECK_EQ_INT(sp_trace_working_warps(&t.n, &s), 1);
  tn_transpose(&t, 40); /* 1600 iterations: every warp of 1024 lanes */
  s.block[0] = 1024;
  CHECK_EQ_INT(sp_trace_working_warps(&t.n, &s), 32);
  /* and the trace's statistics carry it */
  s.block[0] = 1024, s.grid[0] = 2;
  s.collapse_count = 0;
  s.map[0] = (sp_loop_map){-1, 0}; /* i -> bx */
  s.map[1] = (sp_loop_map){0, -1}; /* j -> tx: 40 of 1024 lanes */
  count_ctx c = {.k = 0};
  sp_trace_stats st;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, count_sink, &c, &st), 0);
  CHECK_EQ_INT(st.warps_working_per_block, 2);
}

/* Iterations per SM, counted from the trace: the active lanes of its instructions (one
 * reference per iteration). */
static int lanes_per_sm_sink(void *vctx, const sp_warp_instr *wi) {
  double *per_sm = vctx;
  per_sm[wi->sm] += __builtin_popcount(wi->active);
  return 0;
}

/* sp_trace_sm_work against the trace itself: for every schedule of the space of a 70 x 50 nest
 * (partial blocks, empty blocks, grid-stride loops, collapses), each SM's share of the work is
 * its share of the iterations the trace runs on it; a triangular nest, whose blocks' work the
 * shares do not show, is refused. */
static void test_sm_work(void) {
  tnest t;
  tn_2d_load(&t, 70, 50, 4);
  sp_space sp;
  char err[256];
  CHECK_EQ_INT(sp_space_build(&t.n, &H100, NULL, &sp, err, sizeof err), 0);
  int S = H100.sm_count, checked = 0;
  double work[256], lanes[256];
  for (int i = 0; i < sp.n; i++) {
    const sp_schedule *s = &sp.items[i];
    if (sp_trace_sm_work(&t.n, s, S, work) != 0) continue;
    memset(lanes, 0, sizeof lanes);
    CHECK_EQ_INT(sp_trace_run(&t.n, s, &H100, NULL, lanes_per_sm_sink, lanes, NULL), 0);
    double tw = 0, tl = 0, worst = 0;
    for (int k = 0; k < S; k++) tw += work[k], tl += lanes[k];
    for (int k = 0; k < S; k++) worst = fmax(worst, fabs(work[k] / tw - lanes[k] / tl));
    CHECK(worst < 1e-12);
    checked++;
  }
  CHECK(checked == sp.n);
  sp_space_free(&sp);
  tnest tri;
  tn_init(&tri);
  tn_loop(&tri, -1, true, true, 0, 0, 63, 0, 1);
  tn_loop(&tri, 0, true, true, 0, 0, 0, 1, 1); /* j <= i */
  int b = tn_array(&tri, 4, 64 * 64 * 4);
  int64_t cb[SP_MAX_LOOPS] = {256, 4};
  int ch[2] = {0, 1};
  tn_ref(&tri, b, false, 4, ch, 2, 0, cb);
  CHECK_EQ_INT(sp_space_build(&tri.n, &H100, NULL, &sp, err, sizeof err), 0);
  CHECK(sp.n > 0);
  for (int i = 0; i < sp.n; i++) CHECK_EQ_INT(sp_trace_sm_work(&tri.n, &sp.items[i], S, work), -1);
  sp_space_free(&sp);
}

/* Band iterations per block, counted from the trace: the active lanes of reference 0's
 * instructions (it sits directly in the band: one per band iteration). */
typedef struct block_lanes {
  double *per_block;
  int64_t nblocks;
  int64_t outside;
} block_lanes;

static int block_lanes_sink(void *vctx, const sp_warp_instr *wi) {
  block_lanes *c = vctx;
  if (wi->ref != 0) return 0;
  if (wi->block < 0 || wi->block >= c->nblocks) c->outside++;
  else c->per_block[wi->block] += __builtin_popcount(wi->active);
  return 0;
}

/* sample_skip_rounds against the blocks' work: in a rectangular nest whose one grid-stride loop
 * (sp_trace_skip_dim; a collapse group too) takes more than one round, each block runs, from
 * round r on, its work times the share of its iterations of that loop that lie in rounds r and
 * later (per: its threads along the loop, c: its coordinate; iteration n of round n / (per G)).
 * work: sp_trace_block_work's; lanes: scratch of the grid's size. 1 where checked. */
static int check_skip_rounds(const sp_nest *n, const sp_schedule *s, const sp_arch *arch,
                             const double *work, double *lanes) {
  int d = sp_trace_skip_dim(n, s);
  if (d < 0 || !sp_nest_rectangular(n)) return 0;
  int k = 0;
  while (k < s->nband && (s->map[k].block_dim != d || sp_schedule_collapsed_away(s, k))) k++;
  if (k == s->nband) return 0; /* a 1-D grid with no loop on x */
  const int64_t trip = sp_trace_band_trip(n, s, k);
  const int64_t per = s->map[k].thread_dim >= 0 ? s->block[s->map[k].thread_dim] : 1;
  const int64_t G = s->grid[d], round = per * G, nblk = s->grid[0] * s->grid[1] * s->grid[2];
  const int64_t r = (trip - 1) / round; /* the last round */
  if (r < 1) return 0;
  memset(lanes, 0, sizeof *lanes * (size_t)nblk);
  block_lanes c = {lanes, nblk, 0};
  sp_trace_options o = {.sample_skip_rounds = r};
  CHECK_EQ_INT(sp_trace_run(n, s, arch, &o, block_lanes_sink, &c, NULL), 0);
  const int64_t span[3] = {s->grid[0], s->grid[0] * s->grid[1], nblk};
  int64_t wrong = 0;
  for (int64_t b = 0; b < nblk; b++) {
    int64_t cd = d == 0 ? b % span[0] : b % span[d] / span[d - 1], all = 0, late = 0;
    for (int64_t i = cd * per; i < trip; i += round)
      for (int64_t l = i; l < i + per && l < trip; l++) {
        all++;
        late += l / round >= r;
      }
    double want = all ? work[b] * (double)late / (double)all : 0;
    wrong += fabs(lanes[b] - want) > 1e-9 * (1 + want);
  }
  CHECK_EQ_INT(wrong, 0);
  return 1;
}

/* sp_trace_block_work against the trace itself, for random nests (triangular bounds, negative
 * steps, collapse groups) under every schedule of the space: every block's count equals the
 * iterations the trace runs in it, in triangular nests too (which sp_trace_sm_work refuses);
 * refused only for a collapse group and for two loops on one hardware dimension. */
static void test_block_work(void) {
  sp_arch small = H100;
  small.sm_count = 3;
  int checked = 0, triangular = 0, refused = 0, collapsed = 0, skipped = 0;
  for (int trial = 0; trial < 150; trial++) {
    tnest t;
    int nb;
    bool inner;
    sp_space sp;
    /* the band alone: its iterations are the work */
    if (!random_nest_space(trial, &small, true, &t, &nb, &inner, &sp)) continue;
    for (int i = 0; i < sp.n; i++) {
      const sp_schedule *s = &sp.items[i];
      int64_t nblk = s->grid[0] * s->grid[1] * s->grid[2];
      if (nblk > 4096) continue;
      double *work = malloc(sizeof *work * (size_t)nblk), *lanes = calloc((size_t)nblk, sizeof *lanes);
      int rc = sp_trace_block_work(&t.n, s, INT64_MAX, work);
      bool shared_dim = false;
      for (int a = 0; a < s->nband; a++)
        for (int b = a + 1; b < s->nband; b++)
          shared_dim |= (s->map[a].thread_dim >= 0 && s->map[a].thread_dim == s->map[b].thread_dim) ||
                        (s->map[a].block_dim >= 0 && s->map[a].block_dim == s->map[b].block_dim);
      CHECK_EQ_INT(rc, (s->collapse_count >= 2 && !sp_nest_rectangular(&t.n)) || shared_dim ? 1 : 0);
      if (rc == 0) {
        block_lanes c = {lanes, nblk, 0};
        CHECK_EQ_INT(sp_trace_run(&t.n, s, &small, NULL, block_lanes_sink, &c, NULL), 0);
        CHECK_EQ_INT(c.outside, 0);
        int64_t wrong = 0;
        for (int64_t b = 0; b < nblk; b++) wrong += work[b] != lanes[b];
        if (wrong) fprintf(stderr, "trial %d %s block %dx%dx%d grid %lldx%lldx%lld: %lld blocks wrong\n",
                           trial, s->name, s->block[0], s->block[1], s->block[2],
                           (long long)s->grid[0], (long long)s->grid[1], (long long)s->grid[2],
                           (long long)wrong);
        CHECK_EQ_INT(wrong, 0);
        checked++;
        triangular += !sp_nest_rectangular(&t.n);
        collapsed += s->collapse_count >= 2;
        skipped += check_skip_rounds(&t.n, s, &small, work, lanes);
      } else {
        refused++;
      }
      free(work), free(lanes);
    }
    sp_space_free(&sp);
  }
  fprintf(stderr, "  %d schedules' blocks counted exactly (%d in triangular nests, %d collapsed), "
          "%d refused; %d run from a later round\n", checked, triangular, collapsed, refused, skipped);
  CHECK(checked > 1000 && triangular > 200 && collapsed > 20 && skipped > 100);
  /* the step limit: each of the 8 blocks enumerates its 16 rows of a 64 x 64 triangle; under
   * 128 steps in all, every other row of each, weighing 2 */
  tnest tri;
  tn_init(&tri);
  tn_loop(&tri, -1, true, true, 0, 0, 63, 0, 1);
  tn_loop(&tri, 0, true, true, 0, 0, 0, 1, 1); /* j <= i */
  int b = tn_array(&tri, 4, 64 * 64 * 4);
  int64_t cb[SP_MAX_LOOPS] = {256, 4};
  int ch[2] = {0, 1};
  tn_ref(&tri, b, false, 4, ch, 2, 0, cb);
  sp_schedule s = {.nband = 2, .block = {32, 1, 1}, .grid = {2, 4, 1}};
  s.map[0] = (sp_loop_map){-1, 1}; /* i -> by: 16 rows a block */
  s.map[1] = (sp_loop_map){0, 0};  /* j -> tx + bx */
  double w[8];
  CHECK_EQ_INT(sp_trace_block_work(&tri.n, &s, 127, w), 0);
  /* block 0 samples rows 0, 8, .., 56: 2 (1 + 9 + 17 + 25 + 4 x 32); block 7 rows 35, 43, .., 63:
   * 2 (4 + 12 + 20 + 28) */
  CHECK(w[0] == 360 && w[7] == 128);
  double thinned = 0;
  for (int k = 0; k < 8; k++) thinned += w[k];
  CHECK(thinned == 1952); /* of 2080 */
  /* by hand: rows i = by + 4 m; block x = 0 takes j < 32 of each, x = 1 the rest */
  double want[8] = {0};
  for (int i = 0; i < 64; i++) want[(i % 4) * 2] += i < 32 ? i + 1 : 32, want[(i % 4) * 2 + 1] += i < 32 ? 0 : i - 31;
  CHECK_EQ_INT(sp_trace_block_work(&tri.n, &s, 128, w), 0);
  for (int k = 0; k < 8; k++) CHECK(w[k] == want[k]);
  /* block 0, rows 0, 4, .., 60: 1 + 5 + .. + 29, then 8 x 32; block 7, rows 35, .., 63: 4 + .. + 32 */
  CHECK(w[0] == 376 && w[7] == 144);
}

/* irregular references: every active lane on its own sector */
static int irr_sink(void *vctx, const sp_warp_instr *wi) {
  int64_t *bad = vctx;
  for (int l = 0; l < SP_WARP; l++)
    for (int m = l + 1; m < SP_WARP; m++)
      if ((wi->active >> l & 1) && (wi->active >> m & 1) && wi->addr[l] / 32 == wi->addr[m] / 32)
        (*bad)++;
  return 0;
}

/* the active lanes' addresses that differ from the first active lane's */
static int irr_one_sink(void *vctx, const sp_warp_instr *wi) {
  int64_t *apart = vctx;
  const int l0 = __builtin_ctz(wi->active);
  for (int l = 0; l < SP_WARP; l++)
    if ((wi->active >> l & 1) && wi->addr[l] != wi->addr[l0]) (*apart)++;
  return 0;
}

/* lanes of a 16 x 2 block warp share their address exactly where they share the row (ty) */
static int irr_rows_sink(void *vctx, const sp_warp_instr *wi) {
  int64_t *bad = vctx;
  for (int l = 0; l < SP_WARP; l++)
    for (int m = l + 1; m < SP_WARP; m++)
      if ((wi->active >> l & 1) && (wi->active >> m & 1) && (wi->addr[l] == wi->addr[m]) != (l / 16 == m / 16))
        (*bad)++;
  return 0;
}

/* lanes l at their 8 * l bytes from lane l0's within the array's 2^19 bytes (x[col[i] + j]) */
static int irr_row_sink(void *vctx, const sp_warp_instr *wi) {
  int64_t *bad = vctx;
  const uint64_t span = UINT64_C(1) << 19;
  const int l0 = __builtin_ctz(wi->active);
  for (int l = l0; l < SP_WARP; l++)
    if ((wi->active >> l & 1) && (wi->addr[l] + span - wi->addr[l0]) % span != 8 * (uint64_t)(l - l0)) (*bad)++;
  return 0;
}

/* the places within its 128-byte line where each active lane's address falls (bit p / 8) */
typedef struct irr_places {
  uint64_t base;
  uint32_t seen;
  int64_t odd; /* addresses off 8 bytes */
} irr_places;

static int irr_places_sink(void *vctx, const sp_warp_instr *wi) {
  irr_places *p = vctx;
  for (int l = 0; l < SP_WARP; l++)
    if (wi->active >> l & 1) {
      const uint64_t at = (wi->addr[l] - p->base) % 128;
      p->seen |= UINT32_C(1) << (at / 8);
      p->odd += at % 8 != 0;
    }
  return 0;
}

static void test_irregular(void) {
  tnest t;
  tn_2d(&t, 64, 100);
  int a = tn_array(&t, 8, 1 << 16);
  int ch[2] = {0, 1};
  int64_t ca[SP_MAX_LOOPS] = {0, 0};
  int r = tn_ref(&t, a, false, 8, ch, 2, 0, ca);
  t.refs[r].irregular = true;
  sp_schedule s;
  init_schedule(&s, 2);
  s.map[1] = (sp_loop_map){0, -1};
  s.map[0] = (sp_loop_map){-1, 0};
  s.block[0] = 64;
  s.grid[0] = 64;
  int64_t bad = 0;
  sp_trace_stats st;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, irr_sink, &bad, &st), 0);
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(st.warp_instructions, 64 * 4); /* 100 = 64 + 36: two steps of two warps */
  /* the same with the loops it depends on given: j (on the lanes) keeps the lanes apart */
  t.refs[r].irregular_loops = SP_REF_LOOPS_KNOWN | 2u;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, irr_sink, &bad, &st), 0);
  CHECK_EQ_INT(bad, 0);
  /* i alone (x[col[i]], i on blockIdx.x): every active lane reads one element */
  t.refs[r].irregular_loops = SP_REF_LOOPS_KNOWN | 1u;
  int64_t apart = 0;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, irr_one_sink, &apart, &st), 0);
  CHECK_EQ_INT(apart, 0);
  /* and on no loop at all, likewise */
  t.refs[r].irregular_loops = SP_REF_LOOPS_KNOWN;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, irr_one_sink, &apart, &st), 0);
  CHECK_EQ_INT(apart, 0);
  /* x[col[i] + j]: the lanes along j read on from their shared col[i], 8 bytes apart */
  t.refs[r].irregular_loops = SP_REF_LOOPS_KNOWN | 1u;
  t.refs[r].offset.coef[1] = 8;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, irr_row_sink, &bad, &st), 0);
  CHECK_EQ_INT(bad, 0);
  /* where a loaded row starts in its line: on any of its 8 bytes for x[col[j] + 1024 * i] (scale
   * 8), at the line's start for rows of 2 KB (a[perm[j]][i], scale 2048), where the scale is
   * unknown, and for a lone element (x[col[j]], no affine rest) */
  uint64_t bases[8];
  sp_trace_array_bases(&t.n, bases);
  t.refs[r].offset.coef[1] = 0;
  t.refs[r].offset.coef[0] = 1024;
  t.refs[r].irregular_loops = SP_REF_LOOPS_KNOWN | 2u;
  const int64_t scales[4] = {8, 2048, 0, 8};
  for (int k = 0; k < 4; k++) {
    t.refs[r].irregular_scale = scales[k];
    if (k == 3) t.refs[r].offset.coef[0] = 0;
    irr_places p = {bases[a], 0, 0};
    CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, irr_places_sink, &p, &st), 0);
    CHECK_EQ_INT(p.odd, 0);
    if (k == 0) CHECK_EQ_INT(p.seen, 0xFFFF); /* 6,400 lanes on all 16 places */
    else CHECK_EQ_INT(p.seen, 1);
  }
  t.refs[r].irregular_scale = 0;
  t.refs[r].irregular_loops = SP_REF_LOOPS_KNOWN | 1u;
  /* a warp over two rows i of a 16 x 2 block: two groups of 16 lanes, one address each (each
   * lane had a sector of its own before) */
  t.refs[r].offset.coef[1] = 0;
  s.map[1] = (sp_loop_map){0, -1};
  s.map[0] = (sp_loop_map){1, 0};
  s.block[0] = 16;
  s.block[1] = 2;
  s.grid[0] = 32;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, irr_rows_sink, &bad, &st), 0);
  CHECK_EQ_INT(bad, 0);
}

/* a sink's non-zero value stops the trace and is returned */
static int stop_sink(void *vctx, const sp_warp_instr *wi) {
  (void)wi;
  return ++*(int *)vctx == 10 ? 7 : 0;
}

static void test_stop_and_errors(void) {
  tnest t;
  tn_transpose(&t, 256);
  sp_schedule s;
  init_schedule(&s, 2);
  s.map[1] = (sp_loop_map){0, 0};
  s.map[0] = (sp_loop_map){-1, 1};
  s.block[0] = 128;
  s.grid[0] = 2, s.grid[1] = 256;
  int n = 0;
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, stop_sink, &n, NULL), 7);
  CHECK_EQ_INT(n, 10);
  s.block[1] = 2; /* no loop on thread y */
  CHECK_EQ_INT(sp_trace_run(&t.n, &s, &H100, NULL, stop_sink, &n, NULL), -1);
}

int main(void) {
  char err[512];
  if (sp_arch_load("h100", &H100, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  SP_RUN(test_order);
  SP_RUN(test_waves_sampling);
  SP_RUN(test_irregular);
  SP_RUN(test_stop_and_errors);
  SP_RUN(test_grid_stride_y);
  SP_RUN(test_transpose);
  SP_RUN(test_working_blocks);
  SP_RUN(test_working_warps);
  SP_RUN(test_thread_rounds);
  SP_RUN(test_shapes);
  SP_RUN(test_sm_work);
  SP_RUN(test_block_work);
  SP_RUN(test_every_iteration_once);
  SP_RUN(test_lanes_in);
  SP_RUN(test_else_branch);
  SP_RUN(test_collapsed_lanes);
  SP_RUN(test_parity_guards);
  SP_RUN(test_same_trace);
  return SP_TEST_END();
}
