/* The dependence test against brute-force enumeration on many random two-deep nests: it must
 * never miss a dependence (soundness), and a distance it calls proven must exist. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/internal.h"
#include "tests/sp_test.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int64_t rnd(int64_t lo, int64_t hi) { return lo + (int64_t)(rng() % (uint64_t)(hi - lo + 1)); }

static int64_t offset_at(const sp_ref *r, int64_t x0, int64_t x1) {
  return r->offset.constant + r->offset.coef[0] * x0 + r->offset.coef[1] * x1;
}

static bool overlap(const sp_ref *a, int64_t oa, const sp_ref *b, int64_t ob) {
  return oa < ob + b->size && ob < oa + a->size;
}

/* Brute force: does loop L carry a dependence; and is there one at distance d along L? */
static bool brute(const sp_nest *n, int L, bool want_distance, int64_t d) {
  const sp_loop *l0 = &n->loops[0], *l1 = &n->loops[1];
  for (int i = 0; i < n->nrefs; i++)
    for (int j = 0; j < n->nrefs; j++) {
      const sp_ref *A = &n->refs[i], *B = &n->refs[j];
      if (A->access != SP_WRITE && B->access != SP_WRITE) continue;
      for (int64_t a0 = l0->lower.constant; a0 <= l0->upper.constant; a0 += l0->step)
        for (int64_t a1 = l1->lower.constant; a1 <= l1->upper.constant; a1 += l1->step)
          for (int64_t b0 = l0->lower.constant; b0 <= l0->upper.constant; b0 += l0->step)
            for (int64_t b1 = l1->lower.constant; b1 <= l1->upper.constant; b1 += l1->step) {
              if (L == 1 && a0 != b0) continue; /* the outer index is the same iteration */
              int64_t xa = L == 0 ? a0 : a1, xb = L == 0 ? b0 : b1;
              if (xa == xb) continue;
              if (want_distance && xb - xa != d) continue;
              if (overlap(A, offset_at(A, a0, a1), B, offset_at(B, b0, b1))) return true;
            }
    }
  return false;
}

static void random_nest(sp_nest *n) {
  memset(n, 0, sizeof *n);
  n->nloops = 2;
  for (int k = 0; k < 2; k++) {
    sp_loop *l = &n->loops[k];
    l->parent = k - 1;
    l->step = rnd(1, 2);
    l->lower = sp_affine_const(rnd(-2, 2));
    l->upper = sp_affine_const(l->lower.constant + rnd(0, 6));
    l->trip_min = l->trip_max = (l->upper.constant - l->lower.constant) / l->step + 1;
  }
  n->nrefs = (int)rnd(1, 4);
  n->refs = calloc((size_t)n->nrefs, sizeof *n->refs);
  int64_t size = rnd(0, 1) ? 1 : 4;
  for (int r = 0; r < n->nrefs; r++) {
    sp_ref *ref = &n->refs[r];
    ref->access = r == 0 || rnd(0, 2) == 0 ? SP_WRITE : SP_READ;
    ref->size = size;
    ref->offset = sp_affine_const(rnd(-6, 6) * (rnd(0, 3) ? size : 1));
    ref->offset.coef[0] = rnd(-3, 3) * size;
    ref->offset.coef[1] = rnd(-3, 3) * size;
    ref->nloops = 2;
    ref->loops[0] = 0;
    ref->loops[1] = 1;
  }
}

static void test_random_nests(void) {
  int proven = 0, independent = 0, missed = 0, bad_distance = 0;
  for (int iter = 0; iter < 20000; iter++) {
    sp_nest n;
    random_nest(&n);
    for (int L = 0; L < 2; L++) {
      sp_dep_info info = sp_dep_test_loop(&n, L);
      bool dep = brute(&n, L, false, 0);
      if (dep && info.result == SP_DEP_NONE) missed++;
      if (info.result == SP_DEP_NONE) independent++;
      if (info.result == SP_DEP_PROVEN) {
        proven++;
        if (!brute(&n, L, true, info.distance) && !brute(&n, L, true, -info.distance))
          bad_distance++;
      }
    }
    free(n.refs);
  }
  CHECK_EQ_INT(missed, 0);
  CHECK_EQ_INT(bad_distance, 0);
  /* the test is not trivially conservative: it proves both ways on a good share of nests */
  CHECK(proven > 100);
  CHECK(independent > 1000);
  fprintf(stderr, "  random nests: %d proven, %d independent\n", proven, independent);
}

static void test_hand_cases(void) {
  sp_nest n;
  memset(&n, 0, sizeof n);
  n.nloops = 1;
  n.loops[0].parent = -1;
  n.loops[0].step = 1;
  n.loops[0].lower = sp_affine_const(1);
  n.loops[0].upper = sp_affine_const(99);
  n.loops[0].trip_min = n.loops[0].trip_max = 99;
  sp_ref refs[2];
  memset(refs, 0, sizeof refs);
  for (int r = 0; r < 2; r++) {
    refs[r].size = 8;
    refs[r].nloops = 1;
    refs[r].offset.coef[0] = 8;
  }
  refs[0].access = SP_WRITE; /* a[i] = a[i-1] */
  refs[1].offset.constant = -8;
  n.refs = refs;
  n.nrefs = 2;
  sp_dep_info info = sp_dep_test_loop(&n, 0);
  CHECK_EQ_INT(info.result, SP_DEP_PROVEN);
  CHECK_EQ_INT(info.distance < 0 ? -info.distance : info.distance, 1);
  refs[1].offset.constant = 8 * 200; /* a[i] = a[i+200]: beyond the trip count */
  CHECK_EQ_INT(sp_dep_test_loop(&n, 0).result, SP_DEP_NONE);
  refs[0].offset.coef[0] = 16; /* a[2i] = a[2i+1] */
  refs[1].offset.coef[0] = 16;
  refs[1].offset.constant = 8;
  CHECK_EQ_INT(sp_dep_test_loop(&n, 0).result, SP_DEP_NONE);
  refs[1].irregular = true; /* unknown subscript: cannot be excluded */
  CHECK_EQ_INT(sp_dep_test_loop(&n, 0).result, SP_DEP_POSSIBLE);
}

/* ---- three-deep nests whose inner bounds move with the outer indices (triangular) ---- */

enum { TRI_MAX_POINTS = 512 };

/* Whether a loop at index x has not passed its inclusive bound (a negative step counts down). */
static bool tri_runs(const sp_loop *l, int64_t x, int64_t bound) {
  return l->step > 0 ? x <= bound : x >= bound;
}

/* The iteration points of the chain 0 > 1 > 2, in order; their count (-1: too many). */
static int tri_points(const sp_nest *n, int64_t (*pt)[3]) {
  int np = 0;
  int64_t x[3];
  const sp_loop *l = n->loops;
  for (x[0] = l[0].lower.constant; tri_runs(&l[0], x[0], l[0].upper.constant); x[0] += l[0].step) {
    int64_t lo1 = l[1].lower.constant + l[1].lower.coef[0] * x[0];
    int64_t hi1 = l[1].upper.constant + l[1].upper.coef[0] * x[0];
    for (x[1] = lo1; tri_runs(&l[1], x[1], hi1); x[1] += l[1].step) {
      int64_t lo2 = l[2].lower.constant + l[2].lower.coef[0] * x[0] + l[2].lower.coef[1] * x[1];
      int64_t hi2 = l[2].upper.constant + l[2].upper.coef[0] * x[0] + l[2].upper.coef[1] * x[1];
      for (x[2] = lo2; tri_runs(&l[2], x[2], hi2); x[2] += l[2].step) {
        if (np == TRI_MAX_POINTS) return -1;
        memcpy(pt[np++], x, sizeof x);
      }
    }
  }
  return np;
}

static int64_t tri_offset(const sp_ref *r, const int64_t *x) {
  return r->offset.constant + r->offset.coef[0] * x[0] + r->offset.coef[1] * x[1] +
         r->offset.coef[2] * x[2];
}

/* Whether some A at point p and B at point q with apart(p, q) touch a common byte. */
typedef struct tri_apart {
  int L;             /* tri_carried: L's ancestors' indices equal, L's different */
  const bool *inner; /* tri_crossing: loop 0's differ, and a counter of an inner loop */
  int64_t (*t)[3];   /* the points' trip counters */
} tri_apart;

static bool tri_carried(const tri_apart *c, const int64_t *x, const int64_t *y, int p, int q) {
  (void)p, (void)q;
  for (int k = 0; k < c->L; k++)
    if (x[k] != y[k]) return false;
  return x[c->L] != y[c->L];
}

static bool tri_crossing(const tri_apart *c, const int64_t *x, const int64_t *y, int p, int q) {
  if (x[0] == y[0]) return false;
  return (c->inner[1] && c->t[p][1] != c->t[q][1]) || (c->inner[2] && c->t[p][2] != c->t[q][2]);
}

static bool tri_meet(const sp_nest *n, int64_t (*pt)[3], int np, const tri_apart *c,
                     bool (*apart)(const tri_apart *, const int64_t *, const int64_t *, int, int)) {
  for (int i = 0; i < n->nrefs; i++)
    for (int j = 0; j < n->nrefs; j++) {
      const sp_ref *A = &n->refs[i], *B = &n->refs[j];
      if (A->access != SP_WRITE && B->access != SP_WRITE) continue;
      for (int p = 0; p < np; p++)
        for (int q = 0; q < np; q++)
          if (apart(c, pt[p], pt[q], p, q) &&
              overlap(A, tri_offset(A, pt[p]), B, tri_offset(B, pt[q])))
            return true;
    }
  return false;
}

/* Whether loop L carries a dependence. */
static bool tri_brute(const sp_nest *n, int L, int64_t (*pt)[3], int np) {
  tri_apart c = {.L = L};
  return tri_meet(n, pt, np, &c, tri_carried);
}

/* Whether loop 0 carries a dependence between iterations whose trip counters differ in a loop M
 * with inner[M] (iterations on different threads). */
static bool tri_cross_brute(const sp_nest *n, const bool *inner, int64_t (*pt)[3], int np) {
  static int64_t t[TRI_MAX_POINTS][3];
  for (int p = 0; p < np; p++)
    for (int k = 1; k < 3; k++) {
      const sp_loop *l = &n->loops[k];
      int64_t lo = l->lower.constant + l->lower.coef[0] * pt[p][0] +
                   (k == 2 ? l->lower.coef[1] * pt[p][1] : 0);
      t[p][k] = (pt[p][k] - lo) / l->step;
    }
  tri_apart c = {.inner = inner, .t = t};
  return tri_meet(n, pt, np, &c, tri_crossing);
}

/* Trip counts as the analyzer states them: the least and the most over the outer indices,
 * including those where an inner loop runs no time. */
static int64_t tri_trip(const sp_loop *l, const int64_t *x) {
  int64_t lo = l->lower.constant + l->lower.coef[0] * x[0] + l->lower.coef[1] * x[1];
  int64_t hi = l->upper.constant + l->upper.coef[0] * x[0] + l->upper.coef[1] * x[1];
  if (l->step < 0) return hi > lo ? 0 : (lo - hi) / -l->step + 1;
  return hi < lo ? 0 : (hi - lo) / l->step + 1;
}

static void tri_trip_counts(sp_nest *n) {
  sp_loop *l = n->loops;
  int64_t x[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++) l[k].trip_min = INT64_MAX, l[k].trip_max = 0;
  int64_t t0 = tri_trip(&l[0], x);
  l[0].trip_min = l[0].trip_max = t0;
  for (x[0] = l[0].lower.constant; tri_runs(&l[0], x[0], l[0].upper.constant); x[0] += l[0].step) {
    x[1] = 0;
    int64_t t1 = tri_trip(&l[1], x);
    if (t1 < l[1].trip_min) l[1].trip_min = t1;
    if (t1 > l[1].trip_max) l[1].trip_max = t1;
    int64_t lo1 = l[1].lower.constant + l[1].lower.coef[0] * x[0];
    for (int64_t t = 0; t < t1; t++) {
      x[1] = lo1 + t * l[1].step;
      int64_t t2 = tri_trip(&l[2], x);
      if (t2 < l[2].trip_min) l[2].trip_min = t2;
      if (t2 > l[2].trip_max) l[2].trip_max = t2;
    }
  }
  for (int k = 0; k < 3; k++)
    if (l[k].trip_min == INT64_MAX) l[k].trip_min = 0;
}

static void tri_random_nest(sp_nest *n) {
  memset(n, 0, sizeof *n);
  n->nloops = 3;
  for (int k = 0; k < 3; k++) {
    sp_loop *l = &n->loops[k];
    l->parent = k - 1;
    l->step = (rnd(1, 3) == 3 ? 2 : 1) * (rnd(0, 3) == 0 ? -1 : 1); /* a quarter count down */
    l->lower = sp_affine_const(rnd(-2, 2));
    l->upper = sp_affine_const(l->lower.constant + (l->step > 0 ? 1 : -1) * rnd(0, 5));
    for (int m = 0; m < k; m++) { /* i from k + c, j up to i + c... */
      if (rnd(0, 1)) l->lower.coef[m] = rnd(-1, 1);
      if (rnd(0, 2) == 0) l->upper.coef[m] = rnd(-1, 1);
    }
  }
  n->nrefs = (int)rnd(1, 4);
  n->refs = calloc((size_t)n->nrefs, sizeof *n->refs);
  int64_t size = rnd(0, 1) ? 1 : 4;
  int64_t row = rnd(4, 9) * size;
  for (int r = 0; r < n->nrefs; r++) {
    sp_ref *ref = &n->refs[r];
    ref->access = r == 0 || rnd(0, 2) == 0 ? SP_WRITE : SP_READ;
    ref->size = size;
    ref->offset = sp_affine_const(rnd(-3, 3) * size);
    for (int k = 0; k < 3; k++) /* rows and columns, as A[i][j] - A[i][k] * A[k][j] */
      ref->offset.coef[k] = rnd(0, 2) == 0 ? 0 : rnd(0, 1) ? row * rnd(-1, 1) : size * rnd(-1, 1);
    ref->nloops = 3;
    for (int k = 0; k < 3; k++) ref->loops[k] = k;
  }
}

static void test_triangular_nests(void) {
  static int64_t pt[TRI_MAX_POINTS][3];
  int independent = 0, missed = 0, nests = 0, carried = 0, same_thread = 0, cross_missed = 0;
  for (int iter = 0; iter < 6000; iter++) {
    sp_nest n;
    tri_random_nest(&n);
    int np = tri_points(&n, pt);
    if (np > 0) {
      nests++;
      tri_trip_counts(&n);
      for (int L = 0; L < 3; L++) {
        sp_dep_info info = sp_dep_test_loop(&n, L);
        if (info.result == SP_DEP_NONE) {
          independent++;
          if (tri_brute(&n, L, pt, np))
            missed++;
        }
      }
      /* loop 0 sequential around parallel loops 1 and/or 2 */
      if (sp_dep_test_loop(&n, 0).result != SP_DEP_NONE) {
        bool inner[3] = {false, rnd(0, 2) != 0, false};
        inner[2] = !inner[1] || rnd(0, 1);
        int ra, rb, m = sp_dep_crossing(&n, 0, inner, &ra, &rb);
        carried++;
        if (m < 0) same_thread++;
        if (m < 0 && tri_cross_brute(&n, inner, pt, np)) cross_missed++;
        if (m >= 0) CHECK(inner[m] && ra >= 0 && rb >= 0);
      }
    }
    free(n.refs);
  }
  CHECK_EQ_INT(missed, 0);
  CHECK_EQ_INT(cross_missed, 0);
  CHECK(nests > 3000);
  CHECK(independent > 1000);
  CHECK(same_thread > 100);
  fprintf(stderr,
          "  triangular nests: %d, %d loops independent; loop 0 carries a dependence in %d, "
          "between iterations on one thread only in %d\n",
          nests, independent, carried, same_thread);
}

/* Triangular nests over a declared array of 2 or 3 dimensions whose references take small
 * affine subscripts per dimension, some out of their extent: the test on the subscripts
 * (sp_subscripts) must never miss what enumeration of the linear offsets finds, and it must
 * exclude pairs the linearized offsets could not. */
static void test_subscript_nests(void) {
  static int64_t pt[TRI_MAX_POINTS][3];
  int missed = 0, independent = 0, independent_linear = 0, nests = 0;
  for (int iter = 0; iter < 6000; iter++) {
    sp_nest n;
    tri_random_nest(&n);
    sp_array arr;
    memset(&arr, 0, sizeof arr);
    arr.ndims = (int)rnd(2, 3);
    arr.elem_size = 8;
    for (int d = 0; d < arr.ndims; d++) arr.dims[d] = rnd(3, 7);
    for (int r = 0; r < n.nrefs; r++) {
      sp_ref *ref = &n.refs[r];
      ref->size = 8;
      sp_affine_zero(&ref->offset);
      int64_t stride = 8;
      for (int d = arr.ndims - 1; d >= 0; d--) {
        ref->offset.constant += stride * rnd(-1, 3);
        for (int k = 0; k < 3; k++) ref->offset.coef[k] += stride * (rnd(0, 2) ? rnd(-1, 1) : 0);
        stride *= arr.dims[d];
      }
    }
    int np = tri_points(&n, pt);
    if (np > 0) {
      nests++;
      tri_trip_counts(&n);
      for (int L = 0; L < 3; L++) {
        n.arrays = NULL, n.narrays = 0;
        bool linear = sp_dep_test_loop(&n, L).result == SP_DEP_NONE;
        n.arrays = &arr, n.narrays = 1;
        bool none = sp_dep_test_loop(&n, L).result == SP_DEP_NONE;
        CHECK(none || !linear);
        independent += none;
        independent_linear += linear;
        if (none && tri_brute(&n, L, pt, np)) missed++;
      }
    }
    free(n.refs);
  }
  CHECK_EQ_INT(missed, 0);
  CHECK(nests > 3000);
  CHECK(independent > independent_linear);
  fprintf(stderr, "  subscript nests: %d, %d loops independent (%d from the linear offsets)\n",
          nests, independent, independent_linear);
}

/* An empty nest of nloops loops, each inside the one before, step 1. */
static void chain_nest(sp_nest *n, int nloops) {
  memset(n, 0, sizeof *n);
  n->nloops = nloops;
  for (int k = 0; k < nloops; k++) {
    n->loops[k].parent = k - 1;
    n->loops[k].step = 1;
  }
}

/* LU's update, A[i][j] -= A[i][k] * A[k][j] for i, j > k: i and j carry nothing, k does. */
static void test_lu_update(void) {
  const int64_t N = 64, E = 8;
  sp_nest n;
  chain_nest(&n, 3);
  for (int k = 0; k < 3; k++) {
    n.loops[k].upper = sp_affine_const(N - 1);
    if (k) n.loops[k].lower.constant = 1, n.loops[k].lower.coef[0] = 1;
    n.loops[k].trip_min = k ? 0 : N;
    n.loops[k].trip_max = k ? N - 1 : N;
  }
  sp_ref refs[4];
  memset(refs, 0, sizeof refs);
  const int rows[4] = {1, 1, 1, 0}, cols[4] = {2, 2, 0, 2}; /* A[i][j] w, r; A[i][k]; A[k][j] */
  for (int r = 0; r < 4; r++) {
    refs[r].size = E;
    refs[r].nloops = 3;
    for (int k = 0; k < 3; k++) refs[r].loops[k] = k;
    refs[r].offset.coef[rows[r]] += N * E;
    refs[r].offset.coef[cols[r]] += E;
    refs[r].access = r == 0 ? SP_WRITE : SP_READ;
  }
  n.refs = refs;
  n.nrefs = 4;
  CHECK_EQ_INT(sp_dep_test_loop(&n, 0).result, SP_DEP_POSSIBLE);
  CHECK_EQ_INT(sp_dep_test_loop(&n, 1).result, SP_DEP_NONE);
  CHECK_EQ_INT(sp_dep_test_loop(&n, 2).result, SP_DEP_NONE);
  /* k carries A[i][k] (read at k) from the threads of other i (written at k - 1 as A[i][j]) */
  bool inner[3] = {false, true, true};
  int ra = -1, rb = -1;
  CHECK_EQ_INT(sp_dep_crossing(&n, 0, inner, &ra, &rb), 1);
  CHECK(ra >= 0 && rb >= 0); /* the same A[i][j] is on thread i - k - 1 at each k */
  n.loops[1].lower = sp_affine_const(0); /* i from 0: row k is written while read */
  CHECK_EQ_INT(sp_dep_test_loop(&n, 1).result, SP_DEP_POSSIBLE);
}

/* A time loop t around a parallel i: a[i] = 2 * a[i] stays on i's thread; a[i] = a[i - 1] + 1
 * reads what i - 1's thread wrote at t - 1. */
static void test_time_loop_crossing(void) {
  sp_nest n;
  chain_nest(&n, 2);
  for (int k = 0; k < 2; k++) {
    n.loops[k].lower = sp_affine_const(1);
    n.loops[k].upper = sp_affine_const(99);
    n.loops[k].trip_min = n.loops[k].trip_max = 99;
  }
  sp_ref refs[2];
  memset(refs, 0, sizeof refs);
  for (int r = 0; r < 2; r++) {
    refs[r].size = 8;
    refs[r].nloops = 2;
    refs[r].loops[0] = 0;
    refs[r].loops[1] = 1;
    refs[r].offset.coef[1] = 8;
  }
  refs[0].access = SP_WRITE;
  n.refs = refs;
  n.nrefs = 2;
  bool inner[2] = {false, true};
  int ra, rb;
  CHECK_EQ_INT(sp_dep_test_loop(&n, 0).result, SP_DEP_POSSIBLE);
  CHECK_EQ_INT(sp_dep_crossing(&n, 0, inner, &ra, &rb), -1);
  refs[1].offset.constant = -8;
  CHECK_EQ_INT(sp_dep_crossing(&n, 0, inner, &ra, &rb), 1);
  inner[1] = false; /* i not on threads: nothing crosses */
  CHECK_EQ_INT(sp_dep_crossing(&n, 0, inner, &ra, &rb), -1);
}

int main(void) {
  SP_RUN(test_hand_cases);
  SP_RUN(test_random_nests);
  SP_RUN(test_triangular_nests);
  SP_RUN(test_subscript_nests);
  SP_RUN(test_lu_update);
  SP_RUN(test_time_loop_crossing);
  return SP_TEST_END();
}
