/* Hand-built loop nests for the traces tests (no analyzer involved). */
#ifndef SP_NESTBUILD_H
#define SP_NESTBUILD_H
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/ir.h"

typedef struct tnest {
  sp_nest n;
  sp_array arr[8];
  sp_ref refs[32];
  sp_guard guards[32];
  int nguards;
  char names[SP_MAX_LOOPS][8];
} tnest;

static inline void tn_init(tnest *t) {
  memset(t, 0, sizeof *t);
  t->n.arrays = t->arr;
  t->n.refs = t->refs;
  for (int k = 0; k < SP_MAX_LOOPS; k++) t->n.loops[k].collapsed_into = -1;
}

/* lower/upper: constant plus coefficient on the parent loop (a triangular bound) */
static inline int tn_loop(tnest *t, int parent, bool band, bool parallel, int64_t lo, int64_t lo_coef,
                   int64_t hi, int64_t hi_coef, int64_t step) {
  int k = t->n.nloops++;
  sp_loop *l = &t->n.loops[k];
  snprintf(t->names[k], sizeof t->names[k], "%c", "ijklmnop"[k % 8]);
  l->index = t->names[k];
  l->parent = parent;
  l->depth = parent < 0 ? 0 : t->n.loops[parent].depth + 1;
  l->band = band;
  l->parallel = parallel;
  l->lower.constant = lo;
  l->upper.constant = hi;
  if (parent >= 0) {
    l->lower.coef[parent] = lo_coef;
    l->upper.coef[parent] = hi_coef;
  }
  l->step = step;
  int64_t trip = step > 0 ? (hi - lo) / step + 1 : (lo - hi) / -step + 1;
  if (lo_coef || hi_coef) trip = 16; /* a bound: the tests keep triangular indices below 16 */
  l->trip_min = l->trip_max = trip > 0 ? trip : 0;
  l->collapsed_into = -1;
  return k;
}

static inline int tn_array(tnest *t, int64_t elem, int64_t total) {
  int a = t->n.narrays++;
  t->arr[a].name = (char *)"arr";
  t->arr[a].elem_size = elem;
  t->arr[a].total_bytes = total;
  return a;
}

/* A reference inside the loops chain[0..nchain-1]; offset = c + sum coef[k] * idx_k. */
static inline int tn_ref(tnest *t, int array, bool write, int64_t size, const int *chain, int nchain,
                  int64_t c, const int64_t *coef) {
  int r = t->n.nrefs++;
  sp_ref *ref = &t->refs[r];
  ref->array = array;
  ref->access = write ? SP_WRITE : SP_READ;
  ref->size = size;
  ref->offset.constant = c;
  for (int k = 0; k < SP_MAX_LOOPS && coef; k++) ref->offset.coef[k] = coef[k];
  ref->nloops = nchain;
  for (int k = 0; k < nchain; k++) ref->loops[k] = chain[k];
  return r;
}

static inline void tn_guard(tnest *t, int r, sp_cmp cmp, int64_t c, const int64_t *coef) {
  if (t->nguards >= (int)(sizeof t->guards / sizeof *t->guards)) abort();
  sp_guard *g = &t->guards[t->nguards++];
  memset(g, 0, sizeof *g);
  g->cmp = cmp;
  g->expr.constant = c;
  for (int k = 0; k < SP_MAX_LOOPS; k++) g->expr.coef[k] = coef[k];
  if (!t->refs[r].guards) t->refs[r].guards = g;
  t->refs[r].nguards++;
}

/* The guards of `if (i > 0 && i < n-1 && j > 0 && j < m-1)` on ref r of a nest whose loops 0
 * and 1 are i and j; negated_group > 0: of its else branch (a negated group). */
static inline void tn_edge_guards(tnest *t, int r, int64_t n, int64_t m, int negated_group) {
  const int64_t gi[SP_MAX_LOOPS] = {1, 0}, gim[SP_MAX_LOOPS] = {-1, 0};
  const int64_t gj[SP_MAX_LOOPS] = {0, 1}, gjm[SP_MAX_LOOPS] = {0, -1};
  int first = t->nguards;
  tn_guard(t, r, SP_CMP_GE0, -1, gi);
  tn_guard(t, r, SP_CMP_GE0, n - 2, gim);
  tn_guard(t, r, SP_CMP_GE0, -1, gj);
  tn_guard(t, r, SP_CMP_GE0, m - 2, gjm);
  for (int g = first; g < t->nguards; g++) t->guards[g].negated_group = negated_group;
}

/* 2-D nest i (outer) x j (inner), n x m doubles, refs given by the caller */
static inline void tn_2d(tnest *t, int64_t n, int64_t m) {
  tn_init(t);
  tn_loop(t, -1, true, true, 0, 0, n - 1, 0, 1);
  tn_loop(t, 0, true, true, 0, 0, m - 1, 0, 1);
}

/* 2-D nest reading A[i][j] (n x m elements of elem bytes), one load; returns A */
static inline int tn_2d_load(tnest *t, int64_t n, int64_t m, int64_t elem) {
  tn_2d(t, n, m);
  int a = tn_array(t, elem, n * m * elem);
  int chain[2] = {0, 1};
  int64_t c[SP_MAX_LOOPS] = {m * elem, elem};
  tn_ref(t, a, false, elem, chain, 2, 0, c);
  return a;
}

/* B[j][i] = A[i][j] on n x n doubles */
static inline void tn_transpose(tnest *t, int64_t n) {
  tn_2d(t, n, n);
  int a = tn_array(t, 8, n * n * 8), b = tn_array(t, 8, n * n * 8);
  int chain[2] = {0, 1};
  int64_t ca[SP_MAX_LOOPS] = {n * 8, 8}, cb[SP_MAX_LOOPS] = {8, n * 8};
  tn_ref(t, a, false, 8, chain, 2, 0, ca);
  tn_ref(t, b, true, 8, chain, 2, 0, cb);
}
/* C[i][j] (+)= A[i][k] * B[k][j] on doubles, ni x nj x nk, k sequential in every thread; load_c:
 * C is read before the k loop (gemm's beta * C), else only stored after it (matmul). References:
 * [C read,] A, B, C store. */
static inline void tn_gemm_rect(tnest *t, int64_t ni, int64_t nj, int64_t kk, bool load_c) {
  tn_init(t);
  tn_loop(t, -1, true, true, 0, 0, ni - 1, 0, 1);
  tn_loop(t, 0, true, true, 0, 0, nj - 1, 0, 1);
  tn_loop(t, 1, false, false, 0, 0, kk - 1, 0, 1);
  int a = tn_array(t, 8, ni * kk * 8), b = tn_array(t, 8, kk * nj * 8), c = tn_array(t, 8, ni * nj * 8);
  int ch3[3] = {0, 1, 2}, ch2[2] = {0, 1};
  int64_t ca[SP_MAX_LOOPS] = {kk * 8, 0, 8}, cb[SP_MAX_LOOPS] = {0, 8, nj * 8}, cc[SP_MAX_LOOPS] = {nj * 8, 8};
  if (load_c) tn_ref(t, c, false, 8, ch2, 2, 0, cc);
  tn_ref(t, a, false, 8, ch3, 3, 0, ca);
  tn_ref(t, b, false, 8, ch3, 3, 0, cb);
  tn_ref(t, c, true, 8, ch2, 2, 0, cc);
}

#endif
