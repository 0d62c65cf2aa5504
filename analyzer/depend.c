/* Dependence test on the nest's affine references: GCD test and Banerjee-style bounds per
 * direction, exact for uniform pairs (same coefficients), where the distance is proven. */
#include <stdlib.h>
#include <string.h>

#include "analyzer/internal.h"

typedef __int128 sp_i128;

void sp_affine_bounds(const sp_affine *a, int nloops, const int64_t *lo, const int64_t *hi,
                      sp_i128 *min, sp_i128 *max) {
  *min = *max = a->constant;
  for (int k = 0; k < nloops; k++) {
    sp_i128 c = a->coef[k];
    if (!c) continue;
    *min += c * (c > 0 ? lo[k] : hi[k]);
    *max += c * (c > 0 ? hi[k] : lo[k]);
  }
}

/* Range of every loop's index over the whole nest (interval hull of the bounds). */
bool sp_loop_ranges(const sp_nest *nest, int64_t *lo, int64_t *hi) {
  for (int k = 0; k < SP_MAX_LOOPS; k++) lo[k] = hi[k] = 0;
  for (int k = 0; k < nest->nloops; k++) {
    const sp_loop *L = &nest->loops[k];
    sp_i128 bmin[2], bmax[2];
    sp_affine_bounds(&L->lower, k, lo, hi, &bmin[0], &bmax[0]);
    sp_affine_bounds(&L->upper, k, lo, hi, &bmin[1], &bmax[1]);
    sp_i128 l, h;
    if (L->step > 0) {
      l = bmin[0];
      h = bmax[1] < l ? l : bmax[1]; /* an empty loop keeps a one-point range */
    } else {
      h = bmax[0];
      l = bmin[1] > h ? h : bmin[1];
    }
    /* a step of more than 1 stops short of the bound where the trip count is fixed: i < N step 2
     * takes i = N - 2 last when N is even (the bounds differ by a constant) */
    bool fixed = L->step > 1 || L->step < -1;
    for (int j = 0; fixed && j < SP_MAX_LOOPS; j++) fixed = L->lower.coef[j] == L->upper.coef[j];
    const sp_i128 diff = (sp_i128)L->upper.constant - L->lower.constant;
    if (fixed && L->step > 0 && diff >= 0) h = bmax[0] + diff / L->step * L->step;
    if (fixed && L->step < 0 && diff <= 0) l = bmin[0] - -diff / -L->step * -L->step;
    if (l < INT64_MIN || h > INT64_MAX) return false;
    lo[k] = (int64_t)l;
    hi[k] = (int64_t)h;
  }
  return true;
}

int sp_loop_index_overflows(const sp_nest *nest, const int64_t *lo, const int64_t *hi) {
  const sp_i128 limit = (sp_i128)1 << 62;
  for (int k = 0; k < nest->nloops; k++) {
    const sp_loop *L = &nest->loops[k];
    const sp_i128 step = L->step < 0 ? -(sp_i128)L->step : (sp_i128)L->step;
    const sp_i128 trip = L->trip_max > 0 ? L->trip_max : 0;
    const sp_i128 reach = step * (trip + SP_INDEX_HEADROOM_LANES);
    if ((sp_i128)hi[k] + reach > limit || (sp_i128)lo[k] - reach < -limit) return k;
  }
  return -1;
}

int64_t sp_gcd(int64_t a, int64_t b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static bool sp_encloses(const sp_ref *r, int loop) {
  for (int i = 0; i < r->nloops; i++)
    if (r->loops[i] == loop) return true;
  return false;
}

static bool sp_is_ancestor(const sp_nest *n, int anc, int loop) {
  for (int l = loop; l >= 0; l = n->loops[l].parent)
    if (l == anc) return true;
  return false;
}

typedef enum { SP_DIR_EQ, SP_DIR_LT, SP_DIR_GT, SP_DIR_ANY, SP_ONLY_A, SP_ONLY_B } sp_dirn;

/* min/max of a*x - b*y over lo<=x,y<=hi under the direction (x<y, x>y, x=y or free). */
static void sp_term_bounds(sp_i128 a, sp_i128 b, int64_t lo, int64_t hi, sp_dirn d, sp_i128 *mn,
                           sp_i128 *mx) {
  sp_i128 v[4];
  int nv = 0;
  switch (d) {
    case SP_DIR_EQ:
      v[nv++] = (a - b) * lo;
      v[nv++] = (a - b) * hi;
      break;
    case SP_DIR_LT: /* triangle lo <= x < y <= hi: vertices (lo,lo+1) (lo,hi) (hi-1,hi) */
      v[nv++] = a * lo - b * (lo + 1);
      v[nv++] = a * lo - b * hi;
      v[nv++] = a * (hi - 1) - b * hi;
      break;
    case SP_DIR_GT:
      v[nv++] = a * (lo + 1) - b * lo;
      v[nv++] = a * hi - b * lo;
      v[nv++] = a * hi - b * (hi - 1);
      break;
    default:
      v[nv++] = a * lo - b * lo;
      v[nv++] = a * lo - b * hi;
      v[nv++] = a * hi - b * lo;
      v[nv++] = a * hi - b * hi;
  }
  *mn = *mx = v[0];
  for (int i = 1; i < nv; i++) {
    if (v[i] < *mn) *mn = v[i];
    if (v[i] > *mx) *mx = v[i];
  }
}

/* A pair's question: x_L <dir> y_L, equal indices in L's ancestors and, where M >= 0, x_M <mdir>
 * y_M for M, a loop inside L. */
typedef struct sp_dir_query {
  int L;
  sp_dirn dir;
  int M;
  sp_dirn mdir;
} sp_dir_query;

/* Can A(x) and B(y) overlap under q? The offsets oa and ob are A's and B's, in the variables that
 * lo and hi bound. */
static bool sp_pair_may_depend(const sp_nest *n, const sp_ref *A, const sp_affine *oa,
                               const sp_ref *B, const sp_affine *ob, sp_dir_query q,
                               const int64_t *lo, const int64_t *hi) {
  const int L = q.L;
  /* overlap of [oa, oa+sa) and [ob, ob+sb): oa - ob in [-(sa-1), sb-1]... written as
   * sum(a x) - sum(b y) in [cb - ca - (sa - 1), cb - ca + (sb - 1)] */
  sp_i128 tlo = (sp_i128)ob->constant - oa->constant - (A->size - 1);
  sp_i128 thi = (sp_i128)ob->constant - oa->constant + (B->size - 1);
  sp_i128 mn = 0, mx = 0;
  int64_t g = 0;
  for (int k = 0; k < n->nloops; k++) {
    sp_i128 a = oa->coef[k], b = ob->coef[k];
    bool inA = sp_encloses(A, k), inB = sp_encloses(B, k);
    if (!a && !b) continue;
    sp_dirn d;
    if (k == L) d = q.dir;
    else if (k == q.M) d = q.mdir;
    else if (inA && inB && sp_is_ancestor(n, k, L)) d = SP_DIR_EQ;
    else d = SP_DIR_ANY;
    if (!inB) { d = SP_ONLY_A; b = 0; }
    if (!inA) { d = SP_ONLY_B; a = 0; }
    sp_i128 tmn, tmx;
    if (d == SP_ONLY_A || d == SP_ONLY_B) {
      sp_term_bounds(a, b, lo[k], hi[k], SP_DIR_ANY, &tmn, &tmx);
      /* only one side varies: a*x over the range (b = 0), or -b*y (a = 0) */
    } else {
      sp_term_bounds(a, b, lo[k], hi[k], d, &tmn, &tmx);
    }
    mn += tmn;
    mx += tmx;
    if (d == SP_DIR_EQ) g = sp_gcd(g, (int64_t)(a - b));
    else {
      g = sp_gcd(g, (int64_t)a);
      g = sp_gcd(g, (int64_t)b);
    }
  }
  if (mx < tlo || mn > thi) return false; /* bounds test */
  if (g > 1) {                           /* GCD test: some t in [tlo, thi] divisible by g */
    sp_i128 r = tlo % g;
    sp_i128 first = r == 0 ? tlo : r > 0 ? tlo + (g - r) : tlo - r;
    if (first > thi) return false;
  }
  return true;
}

/* A parity guard of r as `expr % modulus == remainder` with expr >= 0 over the ranges (so C's %
 * is the residue); a `!=` one where the modulus is 2. NULL where r has none. */
static const sp_guard *sp_parity_guard(const sp_nest *n, const sp_ref *r, const int64_t *lo,
                                       const int64_t *hi, int64_t *remainder) {
  for (int g = 0; g < r->nguards; g++) {
    const sp_guard *G = &r->guards[g];
    if (!G->modulus || G->negated_group || G->remainder < 0 || G->remainder >= G->modulus) continue;
    sp_i128 mn, mx;
    sp_affine_bounds(&G->expr, n->nloops, lo, hi, &mn, &mx);
    if (mn < 0) continue;
    if (G->cmp == SP_CMP_EQ0) *remainder = G->remainder;
    else if (G->modulus == 2) *remainder = 1 - G->remainder;
    else continue;
    return G;
  }
  return NULL;
}

typedef struct sp_parity_search {
  int nk, order[SP_MAX_LOOPS];
  sp_i128 a[SP_MAX_LOOPS], range[SP_MAX_LOOPS], tail[SP_MAX_LOOPS + 1], g[SP_MAX_LOOPS];
  sp_i128 modulus, want; /* g . d must be want (mod modulus) for the pair to run together */
  int steps;
} sp_parity_search;

/* Whether some d with |d_k| <= range_k, sum a_k d_k = rem (the loops from position i on)
 * also has sum g_k d_k = want (mod modulus); true where the search gives up. */
static bool sp_parity_meets(sp_parity_search *p, int i, sp_i128 rem, sp_i128 gsum) {
  if (++p->steps > 4096) return true;
  if (i == p->nk) {
    if (rem != 0) return false;
    sp_i128 x = (gsum - p->want) % p->modulus;
    return x == 0;
  }
  sp_i128 a = p->a[i], t = p->tail[i + 1];
  /* d with |rem - a d| <= t, a > 0: ceil((rem - t) / a) .. floor((rem + t) / a) */
  sp_i128 num_lo = rem - t, num_hi = rem + t;
  sp_i128 dlo = num_lo >= 0 ? (num_lo + a - 1) / a : -((-num_lo) / a);
  sp_i128 dhi = num_hi >= 0 ? num_hi / a : -((-num_hi + a - 1) / a);
  if (dlo < -p->range[i]) dlo = -p->range[i];
  if (dhi > p->range[i]) dhi = p->range[i];
  if (dhi - dlo > 8) return true;
  for (sp_i128 d = dlo; d <= dhi; d++)
    if (sp_parity_meets(p, i + 1, rem - a * d, gsum + p->g[i] * d)) return true;
  return false;
}

/* Whether parity guards keep A and B off each other's elements: both run under
 * `e % M == r` with the same loop coefficients (a red-black sweep's (i + j) % 2 == color), and
 * every way the pair's iterations x, y can touch one element (a . (x - y) = the offsets'
 * difference, with a the common coefficients) gives (x - y) a parity that the guards exclude:
 * u[i][j] and u[i - 1][j] under (i + j) % 2 == c never meet. */
static bool sp_parity_excludes(const sp_nest *n, const sp_ref *A, const sp_ref *B,
                               const int64_t *lo, const int64_t *hi) {
  int64_t ra, rb;
  const sp_guard *GA = sp_parity_guard(n, A, lo, hi, &ra), *GB = sp_parity_guard(n, B, lo, hi, &rb);
  if (!GA || !GB || GA->modulus != GB->modulus || A->size != B->size || A->size <= 0 ||
      A->irregular || B->irregular)
    return false;
  sp_parity_search p = {.modulus = GA->modulus};
  sp_i128 diff = (sp_i128)B->offset.constant - A->offset.constant;
  if (diff % A->size) return false;
  for (int k = 0; k < n->nloops; k++) {
    int64_t ak = A->offset.coef[k], gk = GA->expr.coef[k];
    if (ak != B->offset.coef[k] || gk != GB->expr.coef[k]) return false;
    if (ak % A->size) return false;
    if (!ak) {
      if (gk % GA->modulus) return false; /* d_k is free and moves the parity */
      continue;
    }
    if (!sp_encloses(A, k) || !sp_encloses(B, k)) return false;
    p.order[p.nk++] = k;
  }
  for (int i = 1; i < p.nk; i++) /* by |a| descending */
    for (int j = i; j > 0; j--) {
      int64_t x = A->offset.coef[p.order[j]], y = A->offset.coef[p.order[j - 1]];
      if ((x < 0 ? -x : x) <= (y < 0 ? -y : y)) break;
      int t = p.order[j];
      p.order[j] = p.order[j - 1];
      p.order[j - 1] = t;
    }
  sp_i128 sign_rem = diff;
  for (int i = 0; i < p.nk; i++) {
    int k = p.order[i];
    sp_i128 a = A->offset.coef[k], g = GA->expr.coef[k];
    if (a < 0) a = -a, g = -g; /* d_k -> -d_k */
    p.a[i] = a / A->size;
    p.g[i] = g;
    p.range[i] = hi[k] - lo[k];
  }
  p.tail[p.nk] = 0;
  for (int i = p.nk - 1; i >= 0; i--) p.tail[i] = p.tail[i + 1] + p.a[i] * p.range[i];
  /* A at x, B at y on one element: a . (x - y) = diff; then g . (x - y) = (eB - eA) + (rA - rB)
   * (mod M) is what both guards holding needs */
  p.want = (sp_i128)GB->expr.constant - GA->expr.constant + ra - rb;
  p.want %= p.modulus;
  if (p.want < 0) p.want += p.modulus;
  return !sp_parity_meets(&p, 0, sign_rem / A->size, 0);
}

/* Uniform pair: same coefficients everywhere; then the distance along L is exact. */
static bool sp_pair_distance(const sp_nest *n, const sp_ref *A, const sp_ref *B, int L,
                             const int64_t *lo, const int64_t *hi, int64_t *dist) {
  if (A->nguards || B->nguards || A->size != B->size) return false;
  for (int k = 0; k < SP_MAX_LOOPS; k++)
    if (A->offset.coef[k] != B->offset.coef[k]) return false;
  int64_t a = A->offset.coef[L];
  if (!a) return false;
  for (int k = 0; k < n->nloops; k++)
    if (A->offset.coef[k] && (!sp_encloses(A, k) || !sp_encloses(B, k))) return false;
  int64_t diff = A->offset.constant - B->offset.constant; /* A at x, B at x + d: a*d = diff */
  if (diff % a) return false;
  int64_t d = diff / a;
  int64_t step = n->loops[L].step < 0 ? -n->loops[L].step : n->loops[L].step;
  if (d == 0 || d % step) return false;
  if ((d < 0 ? -d : d) > hi[L] - lo[L]) return false;
  /* every other index can be taken equal in both iterations only if the inner loops run at
   * least once; trip_min guards that */
  for (int k = 0; k < n->nloops; k++)
    if (n->loops[k].trip_min < 1) return false;
  *dist = d;
  return true;
}

/* An offset in the loops' trip counters: index k = lower_k(outer indices) + step_k * t_k, t_k in
 * [0, trip_max_k - 1], substituted from the innermost loop out. The hull of the indices loses
 * how a triangular loop's range moves with an outer index (LU's i > k); in the counters it
 * stays in the coefficients, where equal outer indices cancel it. Overflow: false. */
static bool sp_offset_in_counters(const sp_nest *n, const sp_affine *offset, sp_affine *out) {
  sp_i128 c[SP_MAX_LOOPS], c0 = offset->constant;
  for (int k = 0; k < SP_MAX_LOOPS; k++) c[k] = offset->coef[k];
  for (int k = n->nloops - 1; k >= 0; k--) {
    const sp_loop *L = &n->loops[k];
    sp_i128 a = c[k];
    if (!a) continue;
    c[k] = a * L->step;
    c0 += a * L->lower.constant;
    for (int m = 0; m < k; m++) c[m] += a * L->lower.coef[m];
  }
  const sp_i128 limit = (sp_i128)1 << 62;
  if (c0 > limit || c0 < -limit) return false;
  out->constant = (int64_t)c0;
  for (int k = 0; k < SP_MAX_LOOPS; k++) {
    if (c[k] > limit || c[k] < -limit) return false;
    out->coef[k] = (int64_t)c[k];
  }
  return true;
}

/* A pair's references as one question asks about them: the linear offsets, or one subscript of
 * each (elements of size 1), in the index space and, where they convert, in the trip counters. */
typedef struct sp_pair_view {
  sp_ref a, b;      /* A and B with the offsets (and sizes) asked about */
  sp_affine ta, tb; /* those offsets in the counters, where counted */
  bool counted;
} sp_pair_view;

static void sp_pair_view_init(sp_pair_view *v, const sp_nest *n, const sp_ref *A,
                              const sp_affine *oa, const sp_ref *B, const sp_affine *ob,
                              int64_t size, bool counters) {
  v->a = *A;
  v->b = *B;
  v->a.offset = *oa;
  v->b.offset = *ob;
  if (size > 0) v->a.size = v->b.size = size;
  v->counted = counters && sp_offset_in_counters(n, oa, &v->ta) &&
               sp_offset_in_counters(n, ob, &v->tb);
}

/* Whether the view's pair can meet with x_L <dir> y_L: in the index space, then, where that
 * cannot exclude it, in the counters' (tlo NULL: not there), where a negative step turns the
 * direction around (L's lower bound is the same for both, its ancestors being equal). */
static bool sp_pair_dir(const sp_nest *n, const sp_pair_view *v, int L, sp_dirn dir,
                        const int64_t *lo, const int64_t *hi, const int64_t *tlo,
                        const int64_t *thi) {
  if (!sp_pair_may_depend(n, &v->a, &v->a.offset, &v->b, &v->b.offset,
                          (sp_dir_query){L, dir, -1, SP_DIR_ANY}, lo, hi))
    return false;
  if (!tlo || !v->counted) return true;
  sp_dirn cdir = n->loops[L].step > 0 ? dir : dir == SP_DIR_LT ? SP_DIR_GT : SP_DIR_LT;
  return sp_pair_may_depend(n, &v->a, &v->ta, &v->b, &v->tb,
                            (sp_dir_query){L, cdir, -1, SP_DIR_ANY}, tlo, thi);
}

/* r's offset as subscripts of its array's dimensions, in elements (b[j][i]: j and i): where r
 * reads whole elements of a declared array whose inner extents are known and every subscript
 * but the first stays within its extent over the box lo..hi, equal addresses are equal
 * subscripts (digits of a mixed radix), which the linearized offset hides: 8N*j + 8*i against
 * itself for i < i' looked like it could meet at another j. The number of dimensions, 0 where
 * it cannot. */
static int sp_subscripts(const sp_nest *n, const sp_ref *r, const int64_t *lo, const int64_t *hi,
                         sp_affine *sub) {
  if (!n->arrays || r->array < 0 || r->array >= n->narrays) return 0;
  const sp_array *a = &n->arrays[r->array];
  const int nd = a->ndims;
  const int64_t E = a->elem_size;
  if (nd < 2 || nd > SP_MAX_LOOPS || E <= 0 || r->size != E || r->irregular) return 0;
  sp_i128 stride[SP_MAX_LOOPS];
  stride[nd - 1] = 1;
  for (int d = nd - 2; d >= 0; d--) {
    if (a->dims[d + 1] <= 0) return 0;
    stride[d] = stride[d + 1] * a->dims[d + 1];
    if (stride[d] > ((sp_i128)1 << 62)) return 0;
  }
  for (int d = 0; d < nd; d++) sp_affine_zero(&sub[d]);
  for (int k = -1; k < n->nloops; k++) {
    int64_t c = k < 0 ? r->offset.constant : r->offset.coef[k];
    if (c % E) return 0;
    sp_i128 v = c / E;
    for (int d = 0; d < nd; d++) {
      /* the constant toward zero (a[i][j - 1]: -1 in j's place), a coefficient to the nearest
       * stride (a[i][N - 1 - i]: +1 row, -1 column) */
      sp_i128 q = v / stride[d];
      if (k >= 0 && d < nd - 1) {
        sp_i128 rem = v - q * stride[d];
        if (2 * rem > stride[d]) q++;
        else if (2 * rem < -stride[d]) q--;
      }
      v -= q * stride[d];
      if (q > INT64_MAX || q < INT64_MIN) return 0;
      if (k < 0) sub[d].constant = (int64_t)q;
      else sub[d].coef[k] = (int64_t)q;
    }
  }
  for (int d = 1; d < nd; d++) {
    sp_i128 mn, mx;
    sp_affine_bounds(&sub[d], n->nloops, lo, hi, &mn, &mx);
    if (mn < 0 || mx > a->dims[d] - 1) return 0;
  }
  return nd;
}

/* Whether L carries a dependence between the pair, in either direction (sp_pair_dir), and where
 * the pair's subscripts are known (sp_subscripts), on each subscript under the same direction:
 * one subscript that cannot be equal excludes it (cov[i][j] against cov[j][i] with j >= i: the
 * first subscripts meet only for i > i', the second only for i < i'). */
static bool sp_pair_carried(const sp_nest *n, const sp_ref *A, const sp_ref *B, int L,
                            const int64_t *lo, const int64_t *hi, const int64_t *tlo,
                            const int64_t *thi) {
  sp_affine sa[SP_MAX_LOOPS], sb[SP_MAX_LOOPS];
  int nd = sp_subscripts(n, A, lo, hi, sa);
  if (nd && sp_subscripts(n, B, lo, hi, sb) != nd) nd = 0;
  sp_pair_view views[SP_MAX_LOOPS + 1]; /* the linear offsets, then each subscript */
  sp_pair_view_init(&views[0], n, A, &A->offset, B, &B->offset, 0, tlo != NULL);
  for (int d = 0; d < nd; d++)
    sp_pair_view_init(&views[d + 1], n, A, &sa[d], B, &sb[d], 1, tlo != NULL);
  const sp_dirn dirs[2] = {SP_DIR_LT, SP_DIR_GT};
  for (int k = 0; k < 2; k++) {
    bool meet = true;
    for (int v = 0; meet && v <= nd; v++)
      meet = sp_pair_dir(n, &views[v], L, dirs[k], lo, hi, tlo, thi);
    if (meet) return true;
  }
  return false;
}

/* The ranges of the loops' indices (lo, hi) and trip counters (tlo, thi); false where the
 * indices overflow. *counters: whether every loop's trip count has a finite bound. */
static bool sp_dep_ranges(const sp_nest *n, int64_t *lo, int64_t *hi, int64_t *tlo, int64_t *thi,
                          bool *counters) {
  *counters = true;
  for (int k = 0; k < SP_MAX_LOOPS; k++) tlo[k] = thi[k] = 0;
  for (int k = 0; k < n->nloops; k++) {
    *counters = *counters && n->loops[k].step != 0 && n->loops[k].trip_max < INT64_MAX;
    thi[k] = n->loops[k].trip_max > 0 ? n->loops[k].trip_max - 1 : 0;
  }
  return sp_loop_ranges(n, lo, hi);
}

/* A pair the test looks at: one array, both inside L, at least one a write. */
static bool sp_pair_in_loop(const sp_ref *A, const sp_ref *B, int L) {
  return A->array == B->array && sp_encloses(A, L) && sp_encloses(B, L) &&
         (A->access == SP_WRITE || B->access == SP_WRITE);
}

sp_dep_info sp_dep_test_loop(const sp_nest *n, int L) {
  sp_dep_info info = {SP_DEP_NONE, -1, -1, 0};
  int64_t lo[SP_MAX_LOOPS], hi[SP_MAX_LOOPS], tlo[SP_MAX_LOOPS], thi[SP_MAX_LOOPS];
  bool counters;
  if (!sp_dep_ranges(n, lo, hi, tlo, thi, &counters)) {
    info.result = SP_DEP_POSSIBLE;
    return info;
  }
  if (hi[L] - lo[L] < (n->loops[L].step < 0 ? -n->loops[L].step : n->loops[L].step))
    return info; /* at most one iteration */
  for (int i = 0; i < n->nrefs; i++) {
    const sp_ref *A = &n->refs[i];
    for (int j = i; j < n->nrefs; j++) {
      const sp_ref *B = &n->refs[j];
      if (!sp_pair_in_loop(A, B, L)) continue;
      bool dep;
      if (A->irregular || B->irregular) dep = true;
      else
        dep = sp_pair_carried(n, A, B, L, lo, hi, counters ? tlo : NULL, counters ? thi : NULL);
      if (!dep || sp_parity_excludes(n, A, B, lo, hi)) continue;
      int64_t d;
      if (!A->irregular && !B->irregular && sp_pair_distance(n, A, B, L, lo, hi, &d)) {
        info.result = SP_DEP_PROVEN;
        info.ref_a = i;
        info.ref_b = j;
        info.distance = d;
        return info;
      }
      if (info.result == SP_DEP_NONE) {
        info.result = SP_DEP_POSSIBLE;
        info.ref_a = i;
        info.ref_b = j;
      }
    }
  }
  return info;
}

int sp_dep_crossing(const sp_nest *n, int L, const bool *inner, int *ref_a, int *ref_b) {
  int64_t lo[SP_MAX_LOOPS], hi[SP_MAX_LOOPS], tlo[SP_MAX_LOOPS], thi[SP_MAX_LOOPS];
  bool counters;
  bool ranges = sp_dep_ranges(n, lo, hi, tlo, thi, &counters);
  const sp_dirn dirs[2] = {SP_DIR_LT, SP_DIR_GT};
  for (int i = 0; i < n->nrefs; i++) {
    const sp_ref *A = &n->refs[i];
    for (int j = i; j < n->nrefs; j++) {
      const sp_ref *B = &n->refs[j];
      if (!sp_pair_in_loop(A, B, L)) continue;
      bool regular = ranges && !A->irregular && !B->irregular;
      if (regular && (!sp_pair_carried(n, A, B, L, lo, hi, counters ? tlo : NULL,
                                       counters ? thi : NULL) ||
                      sp_parity_excludes(n, A, B, lo, hi)))
        continue;
      /* a thread runs one trip counter of each loop on the lanes (the index moves with L where
       * the loop's bounds do): the question is asked in the counters */
      sp_pair_view v;
      sp_pair_view_init(&v, n, A, &A->offset, B, &B->offset, 0, regular && counters);
      bool exact = v.counted;
      for (int M = L + 1; M < n->nloops; M++) {
        if (!inner[M] || !sp_is_ancestor(n, L, M)) continue;
        /* a reference outside M runs once for all of M's iterations: one of them meets it */
        bool meets = !exact || !sp_encloses(A, M) || !sp_encloses(B, M);
        for (int d = 0; !meets && d < 4; d++)
          meets = sp_pair_may_depend(n, A, &v.ta, B, &v.tb,
                                     (sp_dir_query){L, dirs[d / 2], M, dirs[d % 2]}, tlo, thi);
        if (meets) {
          *ref_a = i;
          *ref_b = j;
          return M;
        }
      }
    }
  }
  return -1;
}
