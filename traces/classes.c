/* A reference's warp instructions over the whole run, counted in classes rather than generated
 * (traces.h, sp_trace_ref_classes).
 *
 * A mapped loop runs i = lower + step * (x + B q), with x the lane's thread coordinate along the
 * loop's thread dimension (0 without one), B that dimension's extent (1 without one) and
 * q = blockIdx + t * gridDim: every q in [0, ceil(N / B)) is run by exactly one (block, t), so
 * the grid's blocks and grid-stride iterations together are the q range, whatever the grid.
 * A lane is active at q when x < N - B q, which only the last q can fail (then the first
 * N - B coordinates are active): each mapped loop's q is in its full part or is its last,
 * and which of the (at most 8) combinations an instruction falls in fixes its warp's mask.
 * Its addresses are the lane's part (fixed per warp of the block) plus a part that is the same
 * for every lane, affine in q and in the sequential loops' counters; coalescing sees that part
 * only modulo SP_TRACE_CLASS_ALIGN, so each combination's instructions are counted by its
 * residue: a histogram per loop, convolved. */
#include <stdlib.h>
#include <string.h>

#include "schedpredict/traces.h"
#include "traces/traces_internal.h"

#define ALIGN SP_TRACE_CLASS_ALIGN
#define BASE (UINT64_C(1) << 40) /* a multiple of ALIGN far from 0: lane parts may be negative */

typedef struct hist {
  int64_t n[ALIGN];
} hist;

/* h = the residues of a * j for j in [0, count) */
static void hist_of(hist *h, uint64_t a, int64_t count) {
  memset(h, 0, sizeof *h);
  unsigned r = (unsigned)(a % ALIGN);
  int64_t period = r == 0 ? 1 : ALIGN / (r & -r); /* ALIGN / gcd(r, ALIGN), a power of two */
  int64_t whole = count / period, rest = count % period;
  for (int64_t j = 0; j < period && j < count; j++) h->n[(r * (uint64_t)j) % ALIGN] += whole + (j < rest);
}

/* out = a (*) b over the residues; false on overflow */
static bool hist_convolve(hist *out, const hist *a, const hist *b) {
  hist t;
  memset(&t, 0, sizeof t);
  for (int i = 0; i < ALIGN; i++) {
    if (!a->n[i]) continue;
    for (int j = 0; j < ALIGN; j++) {
      int64_t p;
      if (!b->n[j]) continue;
      if (__builtin_mul_overflow(a->n[i], b->n[j], &p) || __builtin_add_overflow(t.n[(i + j) % ALIGN], p, &t.n[(i + j) % ALIGN]))
        return false;
    }
  }
  *out = t;
  return true;
}

typedef struct mapped {
  int tdim;
  int64_t N, B, Q; /* trip, lanes along the thread dimension, q range */
  uint64_t a;      /* address step per q: coef * step * B */
} mapped;

int sp_trace_ref_classes(const sp_nest *nest, const sp_schedule *s, int ref, sp_trace_class_sink sink,
                         void *ctx) {
  if (!nest || !s || ref < 0 || ref >= nest->nrefs || !sink) return -1;
  const sp_ref *R = &nest->refs[ref];
  if (R->nguards > 0 || s->collapse_count >= 2 || sp_schedule_dims_shared(s)) return 1;
  /* an irregular reference is counted as a line per lane: not where lanes can share a loaded
   * value (a thread dimension of the block on no loop its value reads) or read along a gathered
   * row (trace.c irregular_addrs) */
  if (R->irregular) {
    if (!sp_affine_is_const(&R->offset)) return 1;
    uint32_t uses = 0;
    for (int k = 0; k < R->nloops; k++)
      if (sp_ref_irregular_uses(R, R->loops[k])) uses |= UINT32_C(1) << R->loops[k];
    for (int d = 0; d < 3; d++) {
      bool moves = s->block[d] <= 1;
      for (int k = 0; k < s->nband; k++) moves |= s->map[k].thread_dim == d && (uses >> k & 1);
      if (!moves) return 1;
    }
  }
  uint64_t *bases = malloc((size_t)nest->narrays * sizeof *bases);
  if (!bases) return -1;
  sp_trace_array_bases(nest, bases);
  uint64_t K = bases[R->array] + (uint64_t)R->offset.constant; /* the part common to all lanes */
  free(bases);

  mapped M[3];
  int nm = 0;
  unsigned bdims = 0;                                            /* grid dimensions in use */
  uint64_t lane_coef[3] = {0, 0, 0};                             /* bytes per thread coordinate */
  hist acc, h; /* acc: the residues of the common part over the sequential loops, less K */
  memset(&acc, 0, sizeof acc);
  acc.n[0] = 1;
  for (int k = 0; k < R->nloops; k++) {
    int l = R->loops[k];
    const sp_loop *L = &nest->loops[l];
    if (!sp_loop_bounds_const(L) || L->step == 0) return 1;
    int64_t trip = sp_traces_const_trip(L);
    if (trip <= 0) return 0; /* the reference never runs */
    uint64_t coef = (uint64_t)R->offset.coef[l];
    K += coef * (uint64_t)L->lower.constant;
    int td = l < s->nband ? s->map[l].thread_dim : -1, bd = l < s->nband ? s->map[l].block_dim : -1;
    if (td < 0 && bd < 0) { /* sequential: every thread runs it whole */
      hist_of(&h, coef * (uint64_t)L->step, trip);
      if (!hist_convolve(&acc, &acc, &h)) return 1;
      continue;
    }
    if (td >= 0) lane_coef[td] = coef * (uint64_t)L->step;
    if (bd >= 0) bdims |= 1u << bd;
    int64_t B = td >= 0 ? s->block[td] : 1;
    M[nm++] = (mapped){td, trip, B, (trip + B - 1) / B, coef * (uint64_t)L->step * (uint64_t)B};
  }
  int mapped_loops = 0;
  for (int k = 0; k < s->nband; k++) mapped_loops += s->map[k].thread_dim >= 0 || s->map[k].block_dim >= 0;
  if (mapped_loops != nm) return 1; /* a mapped loop outside the reference's loops */
  /* a grid dimension no loop uses repeats the work */
  int64_t repeat = 1;
  for (int d = 0; d < 3; d++)
    if (!(bdims >> d & 1) && __builtin_mul_overflow(repeat, s->grid[d], &repeat)) return 1;

  /* each lane of the block: its thread coordinates and its part of the address */
  int threads = s->block[0] * s->block[1] * s->block[2];
  int wpb = (threads + SP_WARP - 1) / SP_WARP;
  int64_t(*coord)[3] = malloc((size_t)wpb * SP_WARP * sizeof *coord);
  uint64_t *lane = malloc((size_t)wpb * SP_WARP * sizeof *lane);
  if (!coord || !lane) {
    free(coord), free(lane);
    return -1;
  }
  for (int tid = 0; tid < wpb * SP_WARP; tid++) {
    sp_traces_thread_coords(s->block, tid, coord[tid]);
    lane[tid] = 0;
    for (int d = 0; d < 3; d++) lane[tid] += lane_coef[d] * (uint64_t)coord[tid][d];
  }
  int rc = 0;
  sp_warp_instr wi;
  memset(&wi, 0, sizeof wi);
  wi.ref = ref;
  wi.array = R->array;
  wi.write = R->access == SP_WRITE;
  wi.access_bytes = (uint32_t)R->size;
  /* combination c: bit j set = mapped loop j at its last q, where that q is partial in lanes */
  for (unsigned c = 0; c < 1u << nm && rc == 0; c++) {
    hist H = acc;
    int64_t limit[3] = {INT64_MAX, INT64_MAX, INT64_MAX}; /* per thread dimension */
    bool empty = false;
    for (int j = 0; j < nm && !empty && rc == 0; j++) {
      const mapped *m = &M[j];
      int64_t last = m->N - m->B * (m->Q - 1); /* lanes active at the last q */
      bool split = m->tdim >= 0 && last < m->B;
      int64_t count = split ? m->Q - 1 : m->Q;
      if (c >> j & 1) {
        empty = !split;
        memset(&h, 0, sizeof h);
        h.n[(m->a * (uint64_t)(m->Q - 1)) % ALIGN] = 1;
        if (split) limit[m->tdim] = last;
      } else {
        empty = count <= 0;
        hist_of(&h, m->a, count);
      }
      if (!empty && !hist_convolve(&H, &H, &h)) rc = 1;
    }
    if (empty || rc) continue;
    int64_t all = 0; /* an irregular reference's addresses do not depend on the residue */
    for (int r = 0; r < ALIGN && R->irregular && rc == 0; r++)
      if (__builtin_add_overflow(all, H.n[r], &all)) rc = 1;
    if (R->irregular && rc == 0 && __builtin_mul_overflow(all, repeat, &all)) rc = 1;
    for (int w = 0; w < wpb && rc == 0; w++) {
      const int64_t(*x)[3] = coord + w * SP_WARP;
      const uint64_t *off = lane + w * SP_WARP;
      uint32_t mask = 0;
      for (int l = 0; l < SP_WARP; l++) {
        bool on = w * SP_WARP + l < threads;
        for (int d = 0; d < 3; d++) on &= x[l][d] < limit[d];
        mask |= (uint32_t)on << l;
      }
      if (!mask) continue;
      wi.warp = w;
      wi.active = mask;
      if (R->irregular) { /* a line of its own per lane (trace.c) */
        for (int l = 0; l < SP_WARP; l++) wi.addr[l] = BASE + (uint64_t)l * 128;
        rc = sink(ctx, &wi, all);
        continue;
      }
      for (int r = 0; r < ALIGN && rc == 0; r++) {
        int64_t count;
        if (!H.n[r]) continue;
        if (__builtin_mul_overflow(H.n[r], repeat, &count)) {
          rc = 1;
          break;
        }
        for (int l = 0; l < SP_WARP; l++) wi.addr[l] = BASE + (r + K) % ALIGN + off[l];
        rc = sink(ctx, &wi, count);
      }
    }
  }
  free(coord);
  free(lane);
  return rc;
}
