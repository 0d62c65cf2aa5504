/* The footprint estimate (rank/footprint.c) against counting every touched sector. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "schedpredict/rank.h"
#include "tests/sp_nestbuild.h"
#include "tests/sp_test.h"

static uint64_t rng_state = 777;
static int64_t rnd(int64_t n) {
  rng_state = rng_state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
  return (int64_t)((rng_state >> 33) % (uint64_t)n);
}

/* Whether a reference runs at the iteration idx (per position in its loops): its plain guards
 * hold and, of each negated group, not all. */
static bool guards_hold(const sp_ref *ref, const int64_t *idx) {
  bool plain = true, group_all[8] = {true, true, true, true, true, true, true, true};
  for (int g = 0; g < ref->nguards; g++) {
    const sp_guard *G = &ref->guards[g];
    int64_t v = G->expr.constant;
    for (int k = 0; k < ref->nloops; k++) v += G->expr.coef[ref->loops[k]] * idx[k];
    bool holds = G->cmp == SP_CMP_GE0 ? v >= 0 : G->cmp == SP_CMP_EQ0 ? v == 0 : v != 0;
    if (G->negated_group) group_all[G->negated_group % 8] &= holds;
    else plain &= holds;
  }
  bool runs = plain;
  for (int g = 0; g < ref->nguards; g++)
    if (ref->guards[g].negated_group) runs &= !group_all[ref->guards[g].negated_group % 8];
  return runs;
}

/* Distinct sectors of `array` the references of `accesses` touch over every iteration (loops
 * with constant bounds, each nested in the previous one), or over extent[l] iterations of each
 * loop l from its iteration start[l] (both or neither NULL). */
static int64_t brute_window(const sp_nest *n, int array, int sector, unsigned accesses,
                            const double *extent, const double *start) {
  int64_t total = n->arrays[array].total_bytes, nsec = (total + sector - 1) / sector;
  uint8_t *seen = calloc((size_t)nsec, 1);
  int64_t idx[SP_MAX_LOOPS] = {0}, count = 0;
  for (int r = 0; r < n->nrefs; r++) {
    const sp_ref *ref = &n->refs[r];
    unsigned kind = ref->access == SP_READ ? SP_FOOT_READS : SP_FOOT_WRITES;
    if (ref->array != array || !(accesses & kind)) continue;
    int64_t lo[SP_MAX_LOOPS], hi[SP_MAX_LOOPS];
    bool empty = false;
    for (int k = 0; k < ref->nloops; k++) {
      const sp_loop *L = &n->loops[ref->loops[k]];
      int l = ref->loops[k];
      lo[k] = L->lower.constant + (start ? (int64_t)start[l] : 0) * L->step;
      hi[k] = L->upper.constant;
      if (extent && isfinite(extent[l]) && lo[k] + ((int64_t)extent[l] - 1) * L->step < hi[k])
        hi[k] = lo[k] + ((int64_t)extent[l] - 1) * L->step;
      empty |= lo[k] > hi[k];
      idx[k] = lo[k];
    }
    for (; !empty;) {
      int64_t at = ref->offset.constant;
      for (int k = 0; k < ref->nloops; k++) at += ref->offset.coef[ref->loops[k]] * idx[k];
      if (guards_hold(ref, idx))
        for (int64_t s = at / sector; s <= (at + ref->size - 1) / sector; s++)
          if (s >= 0 && s < nsec && !seen[s]) seen[s] = 1, count++;
      int k = ref->nloops - 1;
      for (; k >= 0; k--) {
        const sp_loop *L = &n->loops[ref->loops[k]];
        idx[k] += L->step;
        if (idx[k] <= hi[k]) break;
        idx[k] = lo[k];
      }
      if (k < 0) break;
    }
  }
  free(seen);
  return count;
}

static int64_t brute_sectors(const sp_nest *n, int array, int sector, unsigned accesses) {
  return brute_window(n, array, sector, accesses, NULL, NULL);
}

/* The 5-point stencil over the interior of an n x n array of elem-byte elements; returns it. */
static int tn_stencil5(tnest *t, int64_t n, int64_t elem) {
  tn_2d(t, n, n);
  for (int l = 0; l < 2; l++) t->n.loops[l].lower.constant = 1, t->n.loops[l].upper.constant = n - 2,
                               t->n.loops[l].trip_min = t->n.loops[l].trip_max = n - 2;
  int in = tn_array(t, elem, n * n * elem);
  int ch[2] = {0, 1};
  int64_t c[SP_MAX_LOOPS] = {n * elem, elem};
  const int64_t shift[5] = {0, -elem, elem, -n * elem, n * elem};
  for (int q = 0; q < 5; q++) tn_ref(t, in, false, elem, ch, 2, shift[q], c);
  return in;
}

/* It reads every element but the 4 corners. */
static void test_footprint_stencil_hand(void) {
  tnest t;
  const int64_t n = 10;
  int in = tn_stencil5(&t, n, 8);
  CHECK(sp_rank_footprint_sectors(&t.n, in, 8, SP_FOOT_READS, NULL) == (double)(n * n - 4));
  CHECK(brute_sectors(&t.n, in, 8, SP_FOOT_READS) == n * n - 4);
  /* in 16-byte sectors: rows of 80 bytes, 5 sectors; the first and last rows' 64 bytes from
   * byte 8 (elements 1..8) straddle 5 too */
  CHECK(sp_rank_footprint_sectors(&t.n, in, 16, SP_FOOT_READS, NULL) == 10 * 5);
  CHECK(brute_sectors(&t.n, in, 16, SP_FOOT_READS) == 10 * 5);
  /* writes only: no write reference */
  CHECK(sp_rank_footprint_sectors(&t.n, in, 8, SP_FOOT_WRITES, NULL) == 0);
}

/* Random nests of 1-3 loops over arrays of 1-3 dimensions, the loops in any order of the
 * array's dimensions, with references that are translates of one another (a stencil's
 * neighbours) and, in half the nests, others that are not (a transposed read, a slab far
 * away). In sectors of one element the estimate must be exact for translates alone and never
 * above the truth otherwise (it counts overlapping references that are not translates as
 * their largest). */
static void footprint_random(bool wide) {
  int exact_cases = 0, mixed_cases = 0, exact_ok = 0, below_ok = 0, windows = 0, windows_ok = 0;
  for (int iter = 0; iter < 3000; iter++) {
    tnest t;
    tn_init(&t);
    int dims = 1 + (int)rnd(3);
    int64_t ext[3], elem = rnd(2) ? 8 : 4;
    for (int d = 0; d < dims; d++) ext[d] = 6 + rnd(12);
    /* wide: sectors of 32 or 64 bytes, and rows of whole sectors (arrays too) */
    int sector = wide ? (rnd(2) ? 64 : 32) : (int)elem;
    if (wide) ext[dims - 1] = sector / elem * (2 + rnd(3));
    int64_t dstride[3];
    dstride[dims - 1] = elem;
    for (int d = dims - 2; d >= 0; d--) dstride[d] = dstride[d + 1] * ext[d + 1];
    bool slab = rnd(4) == 0; /* the array holds two slabs, one read per slab */
    int64_t total = dstride[0] * ext[0] * (slab ? 2 : 1);
    int perm[3] = {0, 1, 2}; /* loop l runs over array dimension perm[l] */
    for (int d = dims - 1; d > 0; d--) {
      int e = (int)rnd(d + 1), x = perm[d];
      perm[d] = perm[e], perm[e] = x;
    }
    int chain[3];
    for (int l = 0; l < dims; l++) {
      int64_t e = ext[perm[l]], lo = rnd(3), hi = e - 1 - rnd(3);
      chain[l] = tn_loop(&t, l - 1, true, true, lo, 0, hi, 0, 1);
    }
    int a = tn_array(&t, elem, total);
    int64_t coef[SP_MAX_LOOPS] = {0};
    for (int l = 0; l < dims; l++) coef[l] = dstride[perm[l]];
    int nrefs = 1 + (int)rnd(7);
    bool mixed = rnd(2) == 0;
    for (int r = 0; r < nrefs; r++) {
      int64_t off = 0;
      for (int d = 0; d < dims; d++) { /* shifts that keep every index inside the array */
        int l = 0;
        while (perm[l] != d) l++;
        const sp_loop *L = &t.n.loops[l];
        int64_t s = rnd(5) - 2;
        if (L->lower.constant + s < 0) s = -L->lower.constant;
        if (L->upper.constant + s > ext[d] - 1) s = ext[d] - 1 - L->upper.constant;
        off += s * dstride[d];
      }
      tn_ref(&t, a, false, elem, chain, dims, off, coef);
    }
    if (slab) tn_ref(&t, a, false, elem, chain, dims, dstride[0] * ext[0], coef);
    if (mixed && dims >= 2) { /* the same box read along another order of the dimensions */
      int64_t other[SP_MAX_LOOPS] = {0};
      for (int l = 0; l < dims; l++) other[l] = coef[dims - 1 - l];
      for (int l = 0; l < dims; l++) /* its loops must still stay inside the array */
        if (t.n.loops[l].upper.constant >= ext[perm[dims - 1 - l]]) other[0] = 0;
      if (other[0]) tn_ref(&t, a, false, elem, chain, dims, 0, other);
    }
    mixed &= t.n.nrefs > nrefs + (slab ? 1 : 0);
    double est = sp_rank_footprint_sectors(&t.n, a, sector, SP_FOOT_READS, NULL);
    int64_t truth = brute_sectors(&t.n, a, sector, SP_FOOT_READS);
    if (!mixed) {
      exact_cases++;
      exact_ok += est == (double)truth;
      if (est != (double)truth)
        fprintf(stderr, "  case %d: %d dims, %d refs, estimate %.0f, truth %lld\n", iter, dims,
                t.n.nrefs, est, (long long)truth);
      /* and over a window of the loops (a slab of blocks), as exact */
      double extent[SP_MAX_LOOPS], start[SP_MAX_LOOPS];
      for (int l = 0; l < dims; l++) {
        int64_t trip = t.n.loops[l].trip_max;
        start[l] = (double)rnd(trip);
        extent[l] = (double)(1 + rnd(trip));
      }
      double w = sp_rank_footprint_window(&t.n, a, sector, SP_FOOT_READS, extent, start);
      int64_t wtruth = brute_window(&t.n, a, sector, SP_FOOT_READS, extent, start);
      windows++;
      windows_ok += w == (double)wtruth;
      if (w != (double)wtruth)
        fprintf(stderr, "  case %d window: estimate %.0f, truth %lld\n", iter, w, (long long)wtruth);
    } else {
      mixed_cases++;
      below_ok += est <= (double)truth;
    }
  }
  fprintf(stderr, "  %s: %d nests of translates: %d exact, %d of %d windows; %d with other "
          "references: %d not above\n", wide ? "wide sectors" : "element sectors", exact_cases,
          exact_ok, windows_ok, windows, mixed_cases, below_ok);
  CHECK(exact_cases > 1000);
  CHECK(exact_ok == exact_cases);
  CHECK(windows_ok == windows);
  CHECK(mixed_cases > 100);
  CHECK(below_ok == mixed_cases);
}

static void test_footprint_random(void) { footprint_random(false); }

/* Sectors wider than an element: a row straddles the sectors of its start, not its length's
 * (32 floats from element 1 take two 128-byte lines). */
static void test_footprint_random_wide(void) { footprint_random(true); }

/* An extent limits each loop to that many iterations (a block's pass): the 5-point stencil over
 * 3 rows of j and 4 of i reads 5 x 6 elements minus the 4 corners. */
static void test_footprint_extent(void) {
  tnest t;
  int in = tn_stencil5(&t, 20, 4);
  double extent[SP_MAX_LOOPS] = {3, 4};
  CHECK(sp_rank_footprint_sectors(&t.n, in, 4, SP_FOOT_READS, extent) == 5 * 6 - 4);
}

/* A convolution's taps: in[i + di][j + dj][k + dk] over loops i, j, k and the taps' di, dj, dk
 * (loops of one stride, which together span trip + taps - 1 positions: boxes of them counted
 * each apart took 9x the slab of conv3d), over windows of i, j, k, in several sector sizes,
 * against brute force. */
static void test_footprint_taps(void) {
  int cases = 0, ok = 0;
  for (int iter = 0; iter < 200; iter++) {
    tnest t;
    tn_init(&t);
    const int64_t n = 16, elem = 4; /* rows of 64 bytes: whole sectors of up to 64 */
    int chain[6];
    for (int l = 0; l < 3; l++) chain[l] = tn_loop(&t, l - 1, true, true, 1, 0, n - 2, 0, 1);
    int64_t taps = 1 + rnd(3);
    for (int l = 3; l < 6; l++) chain[l] = tn_loop(&t, l - 1, false, false, 0, 0, taps - 1, 0, 1);
    int a = tn_array(&t, elem, n * n * n * elem);
    int64_t coef[SP_MAX_LOOPS] = {n * n * elem, n * elem, elem, n * n * elem, n * elem, elem};
    tn_ref(&t, a, false, elem, chain, 6, -(n * n + n + 1) * elem * (taps / 2), coef);
    int sector = (int)(elem << rnd(5));
    double extent[SP_MAX_LOOPS], start[SP_MAX_LOOPS] = {0};
    for (int l = 0; l < 6; l++) extent[l] = HUGE_VAL;
    for (int l = 0; l < 3; l++) {
      start[l] = (double)rnd(n - 2);
      extent[l] = (double)(1 + rnd(n - 2));
    }
    double w = sp_rank_footprint_window(&t.n, a, sector, SP_FOOT_READS, extent, start);
    int64_t truth = brute_window(&t.n, a, sector, SP_FOOT_READS, extent, start);
    cases++;
    ok += w == (double)truth;
    if (w != (double)truth)
      fprintf(stderr, "  case %d: %lld taps, sector %d: estimate %.0f, truth %lld\n", iter,
              (long long)taps, sector, w, (long long)truth);
  }
  fprintf(stderr, "  %d windows of convolutions: %d exact\n", cases, ok);
  CHECK(ok == cases);
}

/* Random windows of i and j (loops 0 and 1 of n iterations each) in sector sizes elem..8 elem:
 * how many of `cases` the footprint counts exactly; one_frame_short: those on the frame (a
 * window at either end of a loop) may be short of the truth by at most its edges' elements,
 * the others must be exact (checked here), else every window must be. */
static int exact_windows(const sp_nest *nest, int a, int64_t n, int64_t elem, int cases,
                         bool one_frame_short, int *framed) {
  int ok = 0;
  *framed = 0;
  for (int iter = 0; iter < cases; iter++) {
    int sector = (int)(elem << rnd(4));
    double extent[SP_MAX_LOOPS], start[SP_MAX_LOOPS] = {0};
    for (int l = 0; l < SP_MAX_LOOPS; l++) extent[l] = HUGE_VAL;
    for (int l = 0; l < 2; l++) {
      start[l] = (double)rnd(n);
      extent[l] = (double)(1 + rnd(n - (int64_t)start[l]));
    }
    double w = sp_rank_footprint_window(nest, a, sector, SP_FOOT_READS, extent, start);
    int64_t truth = brute_window(nest, a, sector, SP_FOOT_READS, extent, start);
    bool frame = start[0] == 0 || start[1] == 0 || start[0] + extent[0] == n || start[1] + extent[1] == n;
    ok += w == (double)truth;
    *framed += frame;
    if (one_frame_short && frame) CHECK(fabs(w - (double)truth) <= extent[0] + extent[1]);
    else CHECK(w == (double)truth);
    if (w != (double)truth)
      fprintf(stderr, "  window i %.0f+%.0f j %.0f+%.0f (%s), sector %d: estimate %.0f, truth %lld\n",
              start[0], extent[0], start[1], extent[1], frame ? "on the frame" : "inside", sector, w,
              (long long)truth);
  }
  return ok;
}

/* The 5-point stencil over the whole n x n array (a returned), its edges left out as
 * examples/guarded_stencil.c does, `if (i > 0 && i < n-1 && j > 0 && j < n-1) b = a[i][j] +
 * a[i-1][j] + ...; else b = a[i][j];` (edge guards, and the copy's a[i][j] under them negated),
 * or with `if (i == 0 || i == n-1 || j == 0 || j == n-1) continue;` (the analyzer's guards
 * i != 0, i - (n-1) != 0, ...). */
static int tn_stencil_on_edges(tnest *t, int64_t n, int64_t elem, bool with_continue) {
  tn_2d(t, n, n);
  int a = tn_array(t, elem, n * n * elem);
  int ch[2] = {0, 1};
  int64_t c[SP_MAX_LOOPS] = {n * elem, elem};
  const int64_t shift[6] = {0, -n * elem, n * elem, -elem, elem, 0};
  const int64_t gi[SP_MAX_LOOPS] = {1, 0}, gj[SP_MAX_LOOPS] = {0, 1};
  for (int q = 0; q < (with_continue ? 5 : 6); q++) {
    int r = tn_ref(t, a, false, elem, ch, 2, shift[q], c);
    if (!with_continue) {
      tn_edge_guards(t, r, n, n, q == 5); /* 5: the copy, in the else branch */
      continue;
    }
    tn_guard(t, r, SP_CMP_NE0, 0, gi);
    tn_guard(t, r, SP_CMP_NE0, -(n - 1), gi);
    tn_guard(t, r, SP_CMP_NE0, 0, gj);
    tn_guard(t, r, SP_CMP_NE0, -(n - 1), gj);
  }
  return a;
}

/* With the edge guards a reference's box holds only the iterations its guards on single loops
 * let through, so a[i][j-1] starts at column 0, not at the previous row's last element. Over
 * random windows of i and j in several sector sizes, against brute force that runs the guards. */
static void test_footprint_edge_guards(void) {
  const int64_t n = 24, elem = 8;
  tnest t;
  int a = tn_stencil_on_edges(&t, n, elem, false);
  CHECK(sp_rank_footprint_sectors(&t.n, a, 8, SP_FOOT_READS, NULL) == (double)(n * n));
  int framed, ok = exact_windows(&t.n, a, n, elem, 300, true, &framed);
  fprintf(stderr, "  300 windows of an edge-guarded stencil (%d on the frame): %d exact\n", framed, ok);
  CHECK(300 - framed >= 100);
}

/* With continue's guards: a != 0 guard at either end of a loop's range trims it. Every window
 * exact. */
static void test_footprint_continue_guards(void) {
  const int64_t n = 24, elem = 8;
  tnest t;
  int a = tn_stencil_on_edges(&t, n, elem, true);
  CHECK(sp_rank_footprint_sectors(&t.n, a, 8, SP_FOOT_READS, NULL) == (double)(n * n - 4));
  int framed, ok = exact_windows(&t.n, a, n, elem, 300, false, &framed);
  fprintf(stderr, "  300 windows of a stencil under continue's guards (%d on the frame): %d exact\n", framed, ok);
}

/* the distinct 32-byte sectors of one array an irregular reference's lanes touch in a trace */
typedef struct irr_seen {
  uint64_t base;
  uint8_t *seen;
  int64_t count, nsec;
} irr_seen;

static int irr_seen_sink(void *vctx, const sp_warp_instr *wi) {
  irr_seen *c = vctx;
  for (int l = 0; l < SP_WARP; l++) {
    if (!(wi->active >> l & 1)) continue;
    for (uint64_t at = wi->addr[l]; at < wi->addr[l] + wi->access_bytes; at = (at / 32 + 1) * 32) {
      const int64_t k = (int64_t)((at - c->base) / 32);
      if (k >= 0 && k < c->nsec && !c->seen[k]) c->seen[k] = 1, c->count++;
    }
  }
  return 0;
}

/* An irregular reference's whole-run footprint: one group of lanes per distinct value of the
 * loops its loaded terms read, over the row its affine rest spans, placed at random over the
 * array as the trace places it: by hand, and against the trace's own distinct sectors. */
static void test_footprint_irregular(void) {
  sp_arch h100;
  char err[256];
  if (sp_arch_load("h100", &h100, err, sizeof err) != 0) {
    CHECK(0);
    return;
  }
  const double T = 32768, lines = 8192; /* 2^20 bytes of 32-byte sectors, 128-byte lines */
  const struct { uint32_t loops; int64_t coef_j; double draws, places; } cases[] = {
      {SP_REF_LOOPS_KNOWN | 1u, 0, 400, lines},          /* x[col[i]]: 400 values, a line's first sector */
      {SP_REF_LOOPS_KNOWN | 1u, 8, 400 * (16 + 1), T},   /* x[col[i] + j]: 512 bytes from anywhere */
      {0, 0, 400 * 64, lines},                           /* every loop: each (i, j) its own */
  };
  for (int c = 0; c < 3; c++) {
    tnest t;
    tn_2d(&t, 400, 64);
    const int x = tn_array(&t, 8, 1 << 20);
    const int chain[2] = {0, 1};
    const int64_t coef[SP_MAX_LOOPS] = {0, cases[c].coef_j};
    const int r = tn_ref(&t, x, false, 8, chain, 2, 0, coef);
    t.refs[r].irregular = true;
    t.refs[r].irregular_loops = cases[c].loops;
    t.refs[r].irregular_scale = 8;
    const double fp = sp_rank_footprint_sectors(&t.n, x, 32, SP_FOOT_READS, NULL);
    CHECK_NEAR(fp, -cases[c].places * expm1(-cases[c].draws / cases[c].places), 1e-6 * T);
    sp_schedule s;
    memset(&s, 0, sizeof s);
    s.nband = 2;
    for (int k = 0; k < SP_MAX_LOOPS; k++) s.map[k].thread_dim = s.map[k].block_dim = -1;
    s.map[0].block_dim = 0;
    s.map[1].thread_dim = 0;
    s.block[0] = 64, s.block[1] = s.block[2] = 1;
    s.grid[0] = 400, s.grid[1] = s.grid[2] = 1;
    uint64_t base[8];
    sp_trace_array_bases(&t.n, base);
    irr_seen seen = {base[x], calloc((size_t)T, 1), 0, (int64_t)T};
    CHECK_EQ_INT(sp_trace_run(&t.n, &s, &h100, NULL, irr_seen_sink, &seen, NULL), 0);
    /* a draw of 400 or 6,400 places: within a few standard deviations of the expectation */
    CHECK(fabs((double)seen.count - fp) <= 0.04 * fp);
    free(seen.seen);
  }
}

int main(void) {
  SP_RUN(test_footprint_stencil_hand);
  SP_RUN(test_footprint_continue_guards);
  SP_RUN(test_footprint_edge_guards);
  SP_RUN(test_footprint_random);
  SP_RUN(test_footprint_random_wide);
  SP_RUN(test_footprint_extent);
  SP_RUN(test_footprint_taps);
  SP_RUN(test_footprint_irregular);
  return SP_TEST_END();
}
