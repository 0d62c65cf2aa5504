/* Trace generation: the warp instructions of one candidate, streamed to a sink in the execution
 * order of traces.h.
 *
 * Each warp runs a small flat program: BEGIN/END pairs for the band loops (outermost first; a
 * mapped loop iterates its grid-stride counter t, a sequential one its plain counter), then the
 * body built from the references' loop lists (BEGIN/END for sequential inner loops, REF for each
 * reference in program order). A level's lanes hold their own index values (idx) and inclusive
 * last bound (ub, evaluated at the lane's outer indices when the level starts); the level's mask
 * is the parent's mask and the lanes still within bounds. A level repeats while any lane is active
 * (max-trip with masking). Indices advance by adding step * stride: no division on the hot path.
 *
 * Two representations of the lanes' indices: without a collapse group every index is affine in
 * the lane's threadIdx (idx = s + g . threadIdx, s per warp, g per loop), so a warp keeps only the
 * scalars s and the lane parts of bounds, offsets and guards are tabled once per warp of the block
 * (the fast path); a collapse group (mixed-radix digits, not affine) keeps per-lane rows, but
 * only for the loops and bounds that differ between the warp's lanes: one the same in every lane
 * is kept as its scalar (s, u), so a warp's turn touches a few host cache lines, not kilobytes.
 *
 * Memory: one cursor per resident warp of each simulated SM (scalars per level, and levels x 32
 * lanes with a collapse), nothing proportional to the iterations. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/traces.h"
#include "traces/traces_internal.h"

enum { OP_BEGIN, OP_END, OP_REF };

typedef struct op {
  int kind;
  int level; /* BEGIN/END: the level; REF: the innermost enclosing level (-1: none) */
  int ref;
  int jump;  /* BEGIN: op after the matching END; END: op after the matching BEGIN */
} op;

typedef struct term {
  int loop;
  int64_t coef;
} term;

typedef struct affc { /* compact affine: c + sum coef * idx[loop] */
  int64_t c;
  int n;
  term t[SP_MAX_LOOPS];
} affc;

typedef struct level {
  int loop;   /* loop id (the first of a collapse group) */
  int parent; /* enclosing level, -1 = none */
  bool collapsed;
  int mapped; /* p0 row (0..2) for a mapped level, -1 sequential */
  int dir;    /* sign of the step */
  int64_t step, stride, dstep; /* dstep = step * stride: the index increment */
  affc lower, upper;
  bool count_iters; /* the innermost band level: count band iterations */
} level;

typedef struct refc {
  affc off;
  int nguards;
  int guard0; /* index into tr.guards */
  uint64_t base;
  uint64_t nlines; /* irregular: lines of SP_TRACE_IRREGULAR_LINE_BYTES of the array */
  bool irregular, write;
  int array;
  uint32_t size;
  int nloops;
  int loops[SP_MAX_LOOPS];
  uint32_t uses; /* irregular: the loops its value depends on (sp_ref.irregular_loops) */
  uint32_t places; /* irregular: where in its line a loaded value can land: every 128 / places bytes */
  /* per-lane path: the offsets of lanes 0..31 from lane 0 where only the collapse group's
   * innermost index varies and steps lane by lane */
  int64_t lane_steps[SP_WARP];
} refc;

typedef struct guardc {
  affc e;
  sp_cmp cmp;
  int negated_group; /* sp_guard's */
  int64_t modulus, remainder; /* sp_guard's */
} guardc;

typedef struct collapse_info {
  int first, count;
  int64_t total;
  int mapped; /* p0 row of the collapsed level, -1: none */
  int64_t trip[SP_MAX_LOOPS], lo[SP_MAX_LOOPS], st[SP_MAX_LOOPS];
  int64_t radix[SP_MAX_LOOPS]; /* product of the trips of the inner group loops */
  int64_t sdig[SP_MAX_LOOPS];  /* the stride's digits */
} collapse_info;

typedef struct lanes_t {
  int64_t coord[3][SP_WARP]; /* threadIdx.x/y/z of each lane */
  uint32_t root;
} lanes_t;

typedef struct warp { /* the fields of every turn first: a warp's turn starts with a host cache miss */
  int pc;
  int widx;
  uint32_t even;  /* per-lane path: bit k, loop k's index is the same in every lane (and bit
                   * 16 + lv: so is level lv's last bound) */
  uint32_t root;
  bool live;
  /* the collapse group's innermost index steps by its loop's step from each lane to the next
   * (no digit wraps within the warp): a reference whose other loops are the same in every lane
   * then has the same lane offsets in every such warp (sp_warp_instr.shape) */
  bool lane_step;
  uint32_t *mask; /* [nlev] */
  /* affine path: every index is s[loop] + sum_d g[loop][d] * threadIdx.d of the lane; per-lane
   * path: s[k] and u[lv] are lane 0's index and last bound, and the rows idx[k] and ub[lv] hold
   * every lane's, kept only while they differ between lanes (even) */
  int64_t *s;     /* [nloops] */
  int64_t *u;     /* [nlev] the scalar part of the level's last bound */
  int64_t *idx;   /* [nloops][32] by loop id */
  int64_t block;
  int64_t *ub;    /* [nlev][32] */
  int64_t *dig;   /* [count][32] the collapse group's digits */
  int64_t fstep;  /* the group's fused index is p0 + fstep in each lane */
  int64_t boff[3]; /* per mapped level: the block's part of p0 (a lane's p0 adds its threadIdx) */
} warp;

typedef struct tr {
  const sp_nest *nest;
  int nloops, nlev, nops;
  level lev[SP_MAX_LOOPS];
  op ops[4 * SP_MAX_LOOPS + 2 * 64];
  op *opv; /* ops (heap when many references) */
  refc *refs;
  guardc *guards;
  bool has_collapse;
  collapse_info cg;
  int nmapped;
  int map_t[3], map_b[3]; /* per p0 row */
  int block[3];
  int64_t grid[3];
  int64_t skip_rounds; /* sp_trace_options.sample_skip_rounds, of the loop on block dim skip_dim */
  int skip_dim;
  int64_t iters;
  /* Affine path (no collapse group): per-lane parts precomputed per warp of the block, so the
   * per-warp state is a few scalars and an instruction costs 32 additions. */
  bool fast;
  /* the run's sp_warp_instr.shape ids, 0: none. Affine path: shape_base + ref * wpb + warp + 1;
   * a collapse group's: shape_base + ref + 1 (only where the lanes step, warp.lane_step) */
  uint64_t shape_base;
  int wpb;
  int64_t g[SP_MAX_LOOPS][3];
  int64_t *lv_lane;  /* [nlev][wpb][32]: lane part of idx - last bound */
  bool *lv_even;     /* [nlev][wpb]: the warp's lanes all have the same lane part there */
  int64_t *ref_lane; /* [nrefs][wpb][32]: lane part of the byte offset */
  int64_t *grd_lane; /* [nguards][wpb][32] */
  /* a collapse group's lanes as offsets from the warp's smallest fused index: that offset
   * [wpb] and each lane's offset in the group's digits [wpb][count][32] (NULL: digits by
   * division, where a trip is empty or the group's size overflows) */
  int64_t *grp_min, *grp_odig;
  const lanes_t *ln;  /* [wpb] */
} tr;

static void affc_from(affc *out, const sp_affine *a) {
  out->c = a->constant;
  out->n = 0;
  for (int k = 0; k < SP_MAX_LOOPS; k++)
    if (a->coef[k]) out->t[out->n++] = (term){k, a->coef[k]};
}

/* base + a evaluated at each lane's indices (wrapping arithmetic) on the per-lane path: the
 * loops in `even` have one index for all lanes, s[loop], and their terms are added once, the
 * others lane by lane from their rows of idx. Returns true, with the value in *one and v
 * untouched, where no term differs between lanes; else fills v. */
static inline bool affc_eval_lanes(const affc *a, const int64_t *idx, const int64_t *s,
                                   uint32_t even, uint64_t base, int64_t *one, int64_t *v) {
  uint64_t sc = base + (uint64_t)a->c;
  int lanes[SP_MAX_LOOPS], nl = 0;
  for (int i = 0; i < a->n; i++) {
    if (even >> a->t[i].loop & 1) sc += (uint64_t)a->t[i].coef * (uint64_t)s[a->t[i].loop];
    else lanes[nl++] = i;
  }
  if (nl == 0) {
    *one = (int64_t)sc;
    return true;
  }
  uint64_t *u = (uint64_t *)v;
  const uint64_t k0 = (uint64_t)a->t[lanes[0]].coef;
  const int64_t *x0 = idx + a->t[lanes[0]].loop * SP_WARP;
  for (int l = 0; l < SP_WARP; l++) u[l] = sc + k0 * (uint64_t)x0[l];
  for (int j = 1; j < nl; j++) {
    const uint64_t k = (uint64_t)a->t[lanes[j]].coef;
    const int64_t *x = idx + a->t[lanes[j]].loop * SP_WARP;
    for (int l = 0; l < SP_WARP; l++) u[l] += k * (uint64_t)x[l];
  }
  return false;
}

static inline void fill_lanes(int64_t *v, int64_t x) {
  for (int l = 0; l < SP_WARP; l++) v[l] = x;
}

/* affc_eval_lanes into every lane of v */
static inline void affc_eval_all(const affc *a, const int64_t *idx, const int64_t *s,
                                 uint32_t even, uint64_t base, int64_t *v) {
  int64_t one;
  if (affc_eval_lanes(a, idx, s, even, base, &one, v)) fill_lanes(v, one);
}

static inline bool lanes_equal(const int64_t *x) {
  bool eq = true;
  for (int l = 1; l < SP_WARP; l++) eq &= x[l] == x[0];
  return eq;
}

/* Sets or clears `bit` of a warp's even mask by whether x is the same in all lanes, and keeps
 * lane 0's value in *one. */
static inline void mark_even(uint32_t *even, uint32_t bit, const int64_t *x, int64_t *one) {
  *even = lanes_equal(x) ? *even | bit : *even & ~bit;
  *one = x[0];
}

static inline uint32_t in_bounds(const int64_t *ix, const int64_t *ub, int dir) {
  uint32_t m = 0;
  if (dir > 0)
    for (int l = 0; l < SP_WARP; l++) m |= (uint32_t)(ix[l] <= ub[l]) << l;
  else
    for (int l = 0; l < SP_WARP; l++) m |= (uint32_t)(ix[l] >= ub[l]) << l;
  return m;
}

static uint64_t mix64(uint64_t z) {
  z += UINT64_C(0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

void sp_trace_array_bases(const sp_nest *nest, uint64_t *base) {
  const uint64_t huge = UINT64_C(2) << 20; /* 2 MiB */
  uint64_t a = UINT64_C(1) << 40;           /* a plausible device virtual address */
  for (int i = 0; i < nest->narrays; i++) {
    base[i] = a;
    int64_t sz = nest->arrays[i].total_bytes;
    uint64_t bytes = sz > 0 ? (uint64_t)sz : 1;
    a = (a + bytes + huge - 1) / huge * huge;
  }
}

static _Atomic uint64_t sp_trace_serial;

/* ---- building the program ---- */

static int add_op(tr *T, int cap, int kind, int lv, int ref) {
  if (T->nops >= cap) return -1;
  T->opv[T->nops] = (op){kind, lv, ref, 0};
  return T->nops++;
}

static int build(tr *T, const sp_nest *nest, const sp_schedule *s, const uint64_t *base) {
  int nb = s->nband;
  T->nest = nest;
  T->nloops = nest->nloops;
  T->has_collapse = s->collapse_count >= 2;
  for (int d = 0; d < 3; d++) T->block[d] = s->block[d], T->grid[d] = s->grid[d];
  int cap = 2 * nest->nloops + nest->nrefs + 2 * SP_MAX_LOOPS;
  if (cap <= (int)(sizeof T->ops / sizeof T->ops[0])) {
    T->opv = T->ops;
  } else {
    T->opv = malloc((size_t)cap * sizeof *T->opv);
    if (!T->opv) return -1;
  }
  int nguards = 0;
  for (int r = 0; r < nest->nrefs; r++) nguards += nest->refs[r].nguards;
  T->refs = calloc((size_t)(nest->nrefs > 0 ? nest->nrefs : 1), sizeof *T->refs);
  T->guards = calloc((size_t)(nguards > 0 ? nguards : 1), sizeof *T->guards);
  if (!T->refs || !T->guards) return -1;
  int gi = 0;
  for (int r = 0; r < nest->nrefs; r++) {
    const sp_ref *ref = &nest->refs[r];
    refc *R = &T->refs[r];
    affc_from(&R->off, &ref->offset);
    R->base = base[ref->array];
    R->irregular = ref->irregular;
    R->write = ref->access == SP_WRITE;
    R->array = ref->array;
    R->size = (uint32_t)ref->size;
    int64_t tb = nest->arrays[ref->array].total_bytes;
    R->nlines = tb / SP_TRACE_IRREGULAR_LINE_BYTES > 32 ? (uint64_t)(tb / SP_TRACE_IRREGULAR_LINE_BYTES) : 32;
    R->nloops = ref->nloops;
    memcpy(R->loops, ref->loops, sizeof R->loops);
    R->uses = ref->irregular_loops ? ref->irregular_loops : UINT32_MAX;
    /* 128 / gcd(scale, 128), from the scale's lowest bit, for a gathered row (an affine rest);
     * a lone element (x[col[j]]) stays at its line's start: see irregular_addrs */
    R->places = 1;
    if (ref->irregular_scale > 0 && !sp_affine_is_const(&ref->offset) &&
        (ref->irregular_scale & -ref->irregular_scale) < SP_TRACE_IRREGULAR_LINE_BYTES)
      R->places = (uint32_t)(SP_TRACE_IRREGULAR_LINE_BYTES / (ref->irregular_scale & -ref->irregular_scale));
    R->nguards = ref->nguards;
    R->guard0 = gi;
    for (int g = 0; g < ref->nguards; g++, gi++) {
      affc_from(&T->guards[gi].e, &ref->guards[g].expr);
      T->guards[gi].cmp = ref->guards[g].cmp;
      T->guards[gi].negated_group = ref->guards[g].negated_group;
      T->guards[gi].modulus = ref->guards[g].modulus;
      T->guards[gi].remainder = ref->guards[g].remainder;
    }
  }
  /* levels of the band */
  int stack[2 * SP_MAX_LOOPS], sp = 0; /* open BEGIN ops */
  int cur = -1;                        /* innermost open level */
  T->nlev = 0;
  T->nmapped = 0;
  for (int k = 0; k < nb; k++) {
    const sp_loop *L = &nest->loops[k];
    level *v = &T->lev[T->nlev];
    memset(v, 0, sizeof *v);
    v->loop = k;
    v->parent = cur;
    v->mapped = -1;
    v->stride = 1;
    v->step = L->step;
    int tdim = s->map[k].thread_dim, bdim = s->map[k].block_dim;
    if (tdim >= 0 || bdim >= 0) {
      v->mapped = T->nmapped;
      T->map_t[T->nmapped] = tdim;
      T->map_b[T->nmapped] = bdim;
      T->nmapped++;
      v->stride = (int64_t)(tdim >= 0 ? s->block[tdim] : 1) * (bdim >= 0 ? s->grid[bdim] : 1);
    }
    if (T->has_collapse && k == s->collapse_first) {
      collapse_info *c = &T->cg;
      v->collapsed = true;
      v->step = 1;
      c->first = k;
      c->mapped = v->mapped;
      c->count = s->collapse_count;
      c->total = 1;
      for (int j = c->count - 1; j >= 0; j--) {
        const sp_loop *G = &nest->loops[k + j];
        int64_t trip = sp_traces_const_trip(G);
        c->trip[j] = trip;
        c->lo[j] = G->lower.constant;
        c->st[j] = G->step;
        c->radix[j] = c->total;
        c->total = (trip > 0 && c->total > INT64_MAX / trip) ? INT64_MAX : c->total * trip;
      }
      int64_t rem = v->stride;
      for (int j = 0; j < c->count; j++) {
        if (c->radix[j] > 0 && c->trip[j] > 0) {
          c->sdig[j] = rem / c->radix[j];
          rem -= c->sdig[j] * c->radix[j];
        }
      }
      k += c->count - 1;
    } else {
      affc_from(&v->lower, &L->lower);
      affc_from(&v->upper, &L->upper);
    }
    v->dir = v->step > 0 ? 1 : -1;
    v->dstep = v->step * v->stride;
    int o = add_op(T, cap, OP_BEGIN, T->nlev, -1);
    if (o < 0) return -1;
    stack[sp++] = o;
    cur = T->nlev++;
  }
  if (T->nlev > 0) T->lev[T->nlev - 1].count_iters = true;
  if (T->has_collapse) {
    const collapse_info *c = &T->cg;
    const int inner = c->first + c->count - 1;
    for (int r = 0; r < nest->nrefs; r++) {
      const uint64_t k = (uint64_t)nest->refs[r].offset.coef[inner] * (uint64_t)c->st[c->count - 1];
      for (int l = 0; l < SP_WARP; l++) T->refs[r].lane_steps[l] = (int64_t)(k * (uint64_t)l);
    }
  }
  /* body: sequential loops from the references' loop lists */
  int open[SP_MAX_LOOPS], nopen = 0; /* loop ids of the open body loops */
  bool seen[SP_MAX_LOOPS] = {false};
  for (int r = 0; r < nest->nrefs; r++) {
    const sp_ref *ref = &nest->refs[r];
    int chain = ref->nloops - nb; /* body loops of this reference */
    int common = 0;
    while (common < nopen && common < chain && open[common] == ref->loops[nb + common]) common++;
    while (nopen > common) { /* close */
      int b = stack[--sp];
      int e = add_op(T, cap, OP_END, T->opv[b].level, -1);
      if (e < 0) return -1;
      T->opv[e].jump = b + 1;
      T->opv[b].jump = e + 1;
      cur = T->lev[T->opv[b].level].parent;
      nopen--;
    }
    for (int j = common; j < chain; j++) { /* open */
      int id = ref->loops[nb + j];
      if (seen[id] || T->nlev >= SP_MAX_LOOPS) return -1; /* a loop reopened: not program order */
      seen[id] = true;
      level *v = &T->lev[T->nlev];
      memset(v, 0, sizeof *v);
      v->loop = id;
      v->parent = cur;
      v->mapped = -1;
      v->stride = 1;
      v->step = nest->loops[id].step;
      v->dir = v->step > 0 ? 1 : -1;
      v->dstep = v->step;
      affc_from(&v->lower, &nest->loops[id].lower);
      affc_from(&v->upper, &nest->loops[id].upper);
      int o = add_op(T, cap, OP_BEGIN, T->nlev, -1);
      if (o < 0) return -1;
      stack[sp++] = o;
      cur = T->nlev++;
      open[nopen++] = id;
    }
    if (add_op(T, cap, OP_REF, cur, r) < 0) return -1;
  }
  while (sp > 0) {
    int b = stack[--sp];
    int e = add_op(T, cap, OP_END, T->opv[b].level, -1);
    if (e < 0) return -1;
    T->opv[e].jump = b + 1;
    T->opv[b].jump = e + 1;
  }
  return 0;
}

/* ---- executing a warp ---- */

/* each lane's p0 of mapped row m: its threadIdx on the row's thread dimension plus the block's
 * part */
static inline void warp_p0(const tr *T, const warp *w, int m, int64_t *p0) {
  const int td = T->map_t[m];
  const int64_t b = w->boff[m];
  if (td < 0) {
    fill_lanes(p0, b);
    return;
  }
  const int64_t *c = T->ln[w->widx].coord[td];
  for (int l = 0; l < SP_WARP; l++) p0[l] = c[l] + b;
}

/* the lanes whose fused index p0 + fstep is still within the group */
static uint32_t collapse_mask(const tr *T, const warp *w) {
  int64_t p0[SP_WARP];
  if (T->cg.mapped >= 0) warp_p0(T, w, T->cg.mapped, p0);
  else fill_lanes(p0, 0);
  uint32_t m = 0;
  for (int l = 0; l < SP_WARP; l++) m |= (uint32_t)(p0[l] + w->fstep < T->cg.total) << l;
  return m;
}

static void collapse_indices(const tr *T, warp *w) {
  const collapse_info *c = &T->cg;
  for (int j = 0; j < c->count; j++) {
    const int k = c->first + j;
    int64_t *ix = w->idx + k * SP_WARP;
    const int64_t *d = w->dig + j * SP_WARP;
    for (int l = 0; l < SP_WARP; l++) ix[l] = c->lo[j] + c->st[j] * d[l];
    mark_even(&w->even, UINT32_C(1) << k, ix, &w->s[k]); /* a group on blocks only: invariant */
  }
  const int64_t *d = w->dig + (c->count - 1) * SP_WARP;
  bool step = true;
  for (int l = 1; l < SP_WARP; l++) step &= d[l] == d[0] + l;
  w->lane_step = step;
}

/* The lanes within level lv's bound (a non-collapsed level of the per-lane path): all or none
 * where its index and bound are the same in every lane. */
static inline uint32_t level_lanes(const warp *w, const level *v, int lv) {
  const bool ei = w->even >> v->loop & 1, eu = w->even >> (16 + lv) & 1;
  const int64_t x0 = w->s[v->loop], u0 = w->u[lv];
  if (ei && eu) return (v->dir > 0 ? x0 <= u0 : x0 >= u0) ? UINT32_MAX : 0;
  int64_t xa[SP_WARP], ua[SP_WARP];
  const int64_t *ix = w->idx + v->loop * SP_WARP, *ub = w->ub + lv * SP_WARP;
  if (ei) fill_lanes(xa, x0), ix = xa;
  if (eu) fill_lanes(ua, u0), ub = ua;
  return in_bounds(ix, ub, v->dir);
}

/* The digits of fused index f (the outermost unbounded; 0 for an empty loop's) into
 * d[0], d[stride], ... */
static inline void fused_digits(const collapse_info *c, int64_t f, int64_t *d, size_t stride) {
  for (int j = 0; j < c->count; j++)
    d[j * stride] = c->trip[j] <= 0 ? 0 : j == 0 ? f / c->radix[j] : (f / c->radix[j]) % c->trip[j];
}

/* out[j][l] = lanes[j][l] + scalar[j], digit by digit with carries (the outermost unbounded, an
 * empty loop's digit not carried); out may be lanes. Every digit of both is below its trip, so
 * one subtraction carries. */
static void digits_add(const collapse_info *c, const int64_t *scalar, const int64_t *lanes,
                       int64_t *out) {
  for (int l = 0; l < SP_WARP; l++) {
    int64_t carry = 0;
    for (int j = c->count - 1; j >= 0; j--) {
      const int64_t d = lanes[j * SP_WARP + l] + scalar[j] + carry;
      carry = j > 0 && c->trip[j] > 0 && d >= c->trip[j];
      out[j * SP_WARP + l] = carry ? d - c->trip[j] : d;
    }
  }
}

/* Each lane's digits at the group's first step: those of the warp's smallest fused index by
 * division, plus the lane's offset, where dividing for every lane cost 2 x 32 divisions a digit
 * at every warp's start. */
static void group_digits(const tr *T, warp *w) {
  const collapse_info *c = &T->cg;
  int64_t base[SP_MAX_LOOPS];
  fused_digits(c, T->grp_min[w->widx] + (c->mapped >= 0 ? w->boff[c->mapped] : 0), base, 1);
  digits_add(c, base, T->grp_odig + (size_t)w->widx * (size_t)c->count * SP_WARP, w->dig);
}

static uint32_t level_begin(tr *T, warp *w, int lv, uint32_t pm) {
  const level *v = &T->lev[lv];
  if (v->collapsed) {
    const collapse_info *c = &T->cg;
    w->fstep = 0;
    if (T->grp_odig) {
      group_digits(T, w);
    } else {
      int64_t p0[SP_WARP];
      if (v->mapped >= 0) warp_p0(T, w, v->mapped, p0);
      else fill_lanes(p0, 0);
      for (int l = 0; l < SP_WARP; l++) fused_digits(c, p0[l], w->dig + l, SP_WARP);
    }
    collapse_indices(T, w);
    return pm & collapse_mask(T, w);
  }
  const uint32_t ibit = UINT32_C(1) << v->loop, ubit = UINT32_C(1) << (16 + lv);
  int64_t *ix = w->idx + v->loop * SP_WARP;
  int64_t *ub = w->ub + lv * SP_WARP;
  int64_t lo, hi;
  /* both bounds from the outer loops' indices, before this loop's own mark changes */
  const bool lo_even = affc_eval_lanes(&v->lower, w->idx, w->s, w->even, 0, &lo, ix);
  const bool hi_even = affc_eval_lanes(&v->upper, w->idx, w->s, w->even, 0, &hi, ub);
  if (v->mapped >= 0) {
    int64_t p0[SP_WARP];
    warp_p0(T, w, v->mapped, p0);
    if (lo_even) fill_lanes(ix, lo);
    const uint64_t st = (uint64_t)v->step;
    for (int l = 0; l < SP_WARP; l++) ix[l] = (int64_t)((uint64_t)ix[l] + st * (uint64_t)p0[l]);
    mark_even(&w->even, ibit, ix, &w->s[v->loop]);
  } else if (lo_even) {
    w->even |= ibit;
    w->s[v->loop] = lo;
  } else {
    mark_even(&w->even, ibit, ix, &w->s[v->loop]);
  }
  /* an index and bound the same in every lane stay so as the loop steps (level_next) */
  if (hi_even) {
    w->even |= ubit;
    w->u[lv] = hi;
  } else {
    mark_even(&w->even, ubit, ub, &w->u[lv]);
  }
  return pm & level_lanes(w, v, lv);
}

static uint32_t level_next(tr *T, warp *w, int lv, uint32_t m) {
  const level *v = &T->lev[lv];
  if (v->collapsed) {
    const collapse_info *c = &T->cg;
    w->fstep += v->stride;
    digits_add(c, c->sdig, w->dig, w->dig); /* (the stride's digits are below the trips too) */
    collapse_indices(T, w);
    return m & collapse_mask(T, w);
  }
  const uint64_t ds = (uint64_t)v->dstep;
  w->s[v->loop] = (int64_t)((uint64_t)w->s[v->loop] + ds);
  if (!(w->even >> v->loop & 1)) {
    int64_t *ix = w->idx + v->loop * SP_WARP;
    for (int l = 0; l < SP_WARP; l++) ix[l] = (int64_t)((uint64_t)ix[l] + ds);
  }
  return m & level_lanes(w, v, lv);
}

/* The lanes of m that pass a reference's guards, one guard's lanes (ok) at a time: a plain
 * guard's must hold, a negated group's (contiguous) must not all hold. */
typedef struct guard_acc {
  uint32_t m, all;
  int group;
} guard_acc;

static inline void guard_acc_add(guard_acc *a, const guardc *G, uint32_t ok) {
  if (a->group && G->negated_group != a->group) {
    a->m &= ~a->all;
    a->group = 0;
  }
  if (!G->negated_group) {
    a->m &= ok;
    return;
  }
  if (!a->group) {
    a->group = G->negated_group;
    a->all = UINT32_MAX;
  }
  a->all &= ok;
}

static inline uint32_t guard_acc_end(const guard_acc *a) {
  return a->group ? a->m & ~a->all : a->m;
}

static uint32_t eval_guards(const tr *T, const refc *R, const warp *w, uint32_t m) {
  int64_t v[SP_WARP];
  guard_acc acc = {.m = m};
  for (int g = 0; g < R->nguards && acc.m; g++) {
    const guardc *G = &T->guards[R->guard0 + g];
    affc_eval_all(&G->e, w->idx, w->s, w->even, 0, v);
    if (G->modulus)
      for (int l = 0; l < SP_WARP; l++) v[l] = sp_guard_value(G->modulus, G->remainder, v[l]);
    uint32_t ok = 0;
    switch (G->cmp) {
    case SP_CMP_GE0:
      for (int l = 0; l < SP_WARP; l++) ok |= (uint32_t)(v[l] >= 0) << l;
      break;
    case SP_CMP_EQ0:
      for (int l = 0; l < SP_WARP; l++) ok |= (uint32_t)(v[l] == 0) << l;
      break;
    case SP_CMP_NE0:
      for (int l = 0; l < SP_WARP; l++) ok |= (uint32_t)(v[l] != 0) << l;
      break;
    }
    guard_acc_add(&acc, G, ok);
  }
  return guard_acc_end(&acc);
}

/* ---- the affine path ---- */

static inline int64_t affc_scalar(const affc *a, const int64_t *sv) {
  uint64_t v = (uint64_t)a->c;
  for (int i = 0; i < a->n; i++) v += (uint64_t)a->t[i].coef * (uint64_t)sv[a->t[i].loop];
  return (int64_t)v;
}

static inline uint32_t fast_bounds(const tr *T, const warp *w, int lv) {
  const size_t at = (size_t)lv * (size_t)T->wpb + (size_t)w->widx;
  const int64_t *dl = T->lv_lane + at * SP_WARP;
  int64_t d = (int64_t)((uint64_t)w->s[T->lev[lv].loop] - (uint64_t)w->u[lv]);
  if (T->lv_even[at]) /* a loop whose bounds do not move with the lane: all lanes or none */
    return (T->lev[lv].dir > 0 ? d + dl[0] <= 0 : d + dl[0] >= 0) ? UINT32_MAX : 0;
  uint32_t m = 0;
  if (T->lev[lv].dir > 0)
    for (int l = 0; l < SP_WARP; l++) m |= (uint32_t)(d + dl[l] <= 0) << l;
  else
    for (int l = 0; l < SP_WARP; l++) m |= (uint32_t)(d + dl[l] >= 0) << l;
  return m;
}

static uint32_t fast_begin(tr *T, warp *w, int lv, uint32_t pm) {
  const level *v = &T->lev[lv];
  int64_t lo = affc_scalar(&v->lower, w->s);
  if (v->mapped >= 0) lo = (int64_t)((uint64_t)lo + (uint64_t)v->step * (uint64_t)w->boff[v->mapped]);
  w->s[v->loop] = lo;
  w->u[lv] = affc_scalar(&v->upper, w->s);
  return pm & fast_bounds(T, w, lv);
}

static uint32_t fast_guards(const tr *T, const refc *R, const warp *w, uint32_t m) {
  guard_acc acc = {.m = m};
  for (int g = 0; g < R->nguards && acc.m; g++) {
    const guardc *G = &T->guards[R->guard0 + g];
    int64_t sc = affc_scalar(&G->e, w->s);
    const int64_t *gl =
        T->grd_lane + ((size_t)(R->guard0 + g) * (size_t)T->wpb + (size_t)w->widx) * SP_WARP;
    uint32_t ok = 0;
    for (int l = 0; l < SP_WARP; l++) {
      int64_t x = G->modulus ? sp_guard_value(G->modulus, G->remainder, sc + gl[l]) : sc + gl[l];
      ok |= (uint32_t)(G->cmp == SP_CMP_GE0 ? x >= 0 : G->cmp == SP_CMP_EQ0 ? x == 0 : x != 0) << l;
    }
    guard_acc_add(&acc, G, ok);
  }
  return guard_acc_end(&acc);
}

/* lane l's index of loop k */
static inline int64_t lane_index(const tr *T, const warp *w, int k, int l) {
  if (!T->fast) return w->even >> k & 1 ? w->s[k] : w->idx[k * SP_WARP + l];
  const lanes_t *ln = &T->ln[w->widx];
  return w->s[k] + T->g[k][0] * ln->coord[0][l] + T->g[k][1] * ln->coord[1][l] + T->g[k][2] * ln->coord[2][l];
}

/* The lanes' own affine offset (a gathered row's place along it) */
static inline int64_t irregular_offset(const tr *T, const warp *w, const refc *R, int l) {
  int64_t off = R->off.c;
  for (int t = 0; t < R->off.n; t++) off += R->off.t[t].coef * lane_index(T, w, R->off.t[t].loop, l);
  return off;
}

/* The address `off` bytes on from the start of line `line` of the array, wrapping within it */
static inline uint64_t irregular_at(const refc *R, uint64_t line, int64_t off) {
  const uint64_t span = R->nlines * SP_TRACE_IRREGULAR_LINE_BYTES;
  uint64_t at = line * SP_TRACE_IRREGULAR_LINE_BYTES;
  if (off) {
    int64_t within = off % (int64_t)span;
    if (within < 0) within += (int64_t)span;
    at = (at + (uint64_t)within) % span;
  }
  return R->base + at;
}

/* Irregular references: lanes that differ in the indices the irregular part of the subscript
 * reads (R->uses: col[i] of x[col[i] * M + j] reads i) get lines of their own, 128 bytes of the
 * array each; lanes that agree on them (i the same across a row of the block) share their first
 * lane's line. The lines of an instruction lie consecutive from line r ((r + leader) mod
 * #lines), with r a hash of the reference and of the first active lane's indices, so they move
 * with those loops, as x[col[j]] does, and the lanes' own affine offsets (8 * j) lay each group
 * out along its line(s) as a gathered row is, from a place in the line that a value of the
 * loaded terms can take (R->places: x[col[i] + j]'s rows start on any double, not at a sector:
 * 8.74 sectors a warp on the H200 where the model had 8). A lone element (x[col[j]], no affine
 * rest) stays at its line's start, the same sector count: at random places its 32 lanes fall
 * in 3-4 words a bank where they were 32 in one, and the L1's charge for misses, twice the bank
 * cycles (where the H100's data stage took 1.1-1.4 wavefronts a missed line whatever the
 * banks), fell with them: gather_lane's time went to 0.77x of the H200's (it is 1.19x).
 * r is uniform over the array's lines: where instructions started at multiples of 32 lines,
 * rows of 2 KB gathered at random could reach half of their array (3.7 MB of DRAM reads where
 * the H200 read 5.4: validation/results/h200/2026-12-01-gather-rows-probe). */
/* The hash of lane l's indices of the loops the loaded terms read, from the reference's seed */
static inline uint64_t irregular_key(const tr *T, const warp *w, const refc *R, uint64_t seed, int l) {
  uint64_t h = seed;
  for (int k = 0; k < R->nloops; k++)
    if (R->uses >> R->loops[k] & 1) h = mix64(h ^ (uint64_t)lane_index(T, w, R->loops[k], l));
  return h;
}

static void irregular_addrs(const tr *T, const warp *w, const refc *R, int ref, uint32_t m,
                            uint64_t *a) {
  const int l0 = __builtin_ctz(m);
  const uint64_t seed = (uint64_t)ref * UINT64_C(0x100000001b3);
  /* lanes that certainly differ (a loop of the loaded terms moves with threadIdx.x, and the
   * warp lies in one row of the block): each its own line, no key hashed or compared (spmv's
   * x[col[k]]); the same addresses as the general loop below, in 9 % fewer of the trace's host
   * instructions on spmv_short_rows than that loop with a test a lane */
  bool apart = T->fast && T->block[0] % SP_WARP == 0 && R->places == 1;
  if (apart) {
    bool moves = false;
    for (int k = 0; k < R->nloops; k++) moves |= (R->uses >> R->loops[k] & 1) && T->g[R->loops[k]][0] != 0;
    apart = moves;
  }
  if (apart) {
    const uint64_t r = irregular_key(T, w, R, seed, l0) % R->nlines;
    for (uint32_t rest = m; rest; rest &= rest - 1) {
      const int l = __builtin_ctz(rest);
      uint64_t line = r + (uint64_t)l;
      if (line >= R->nlines) line -= R->nlines;
      a[l] = irregular_at(R, line, irregular_offset(T, w, R, l));
    }
  } else {
    uint64_t h[SP_WARP], key[2 * SP_WARP];
    int8_t who[2 * SP_WARP]; /* open addressing: a key's first lane */
    memset(who, -1, sizeof who);
    uint64_t r = 0;
    for (uint32_t rest = m; rest; rest &= rest - 1) {
      const int l = __builtin_ctz(rest);
      h[l] = irregular_key(T, w, R, seed, l);
      if (l == l0) r = h[l] % R->nlines;
      unsigned s = (unsigned)(h[l] >> 58);
      while (who[s] >= 0 && key[s] != h[l]) s = (s + 1) % (2 * SP_WARP);
      if (who[s] < 0) {
        who[s] = (int8_t)l;
        key[s] = h[l];
      }
      uint64_t line = r + (uint64_t)who[s]; /* (r < #lines, and #lines >= 32) */
      if (line >= R->nlines) line -= R->nlines;
      const int64_t place = (int64_t)((h[who[s]] >> 40 & (R->places - 1)) * (SP_TRACE_IRREGULAR_LINE_BYTES / R->places));
      a[l] = irregular_at(R, line, irregular_offset(T, w, R, l) + place);
    }
  }
  for (uint32_t rest = ~m; rest; rest &= rest - 1) a[__builtin_ctz(rest)] = a[l0];
}

/* Whether every loop of offset a but the collapse group's innermost is the same in every lane
 * (with w->lane_step: the lanes are offsets 0, k, 2k, ... apart, k that loop's step times its
 * coefficient, whatever the warp). */
static inline bool only_inner_varies(const tr *T, const affc *a, uint32_t even) {
  const int inner = T->cg.first + T->cg.count - 1;
  for (int i = 0; i < a->n; i++)
    if (a->t[i].loop != inner && !(even >> a->t[i].loop & 1)) return false;
  return true;
}

/* Runs warp w to its next memory instruction: 1 and *wi filled, or 0 when the warp is done. */
/* A warp's addresses: its scalar part plus each lane's offset. A function with restrict
 * parameters so that GCC -O2 vectorizes the loop (in place, it did not). */
static inline void lane_addrs(uint64_t *restrict addr, const int64_t *restrict lane, uint64_t sc) {
  for (int l = 0; l < SP_WARP; l++) addr[l] = sc + (uint64_t)lane[l];
}

static int warp_next(tr *T, warp *w, sp_warp_instr *wi) {
  int pc = w->pc;
  const op *ops = T->opv;
  while (pc < T->nops) {
    const op *o = &ops[pc];
    switch (o->kind) {
    case OP_BEGIN: {
      int p = T->lev[o->level].parent;
      uint32_t pm = p >= 0 ? w->mask[p] : w->root;
      uint32_t m = pm ? (T->fast ? fast_begin(T, w, o->level, pm) : level_begin(T, w, o->level, pm)) : 0;
      w->mask[o->level] = m;
      if (m) {
        if (T->lev[o->level].count_iters) T->iters += sp_lanes_in(m);
        pc++;
      } else {
        pc = o->jump;
      }
      break;
    }
    case OP_END: {
      uint32_t m;
      if (T->fast) {
        const level *v = &T->lev[o->level];
        w->s[v->loop] = (int64_t)((uint64_t)w->s[v->loop] + (uint64_t)v->dstep);
        m = w->mask[o->level] & fast_bounds(T, w, o->level);
      } else {
        m = level_next(T, w, o->level, w->mask[o->level]);
      }
      w->mask[o->level] = m;
      if (m) {
        if (T->lev[o->level].count_iters) T->iters += sp_lanes_in(m);
        pc = o->jump;
      } else {
        pc++;
      }
      break;
    }
    default: {
      const refc *R = &T->refs[o->ref];
      uint32_t m = o->level >= 0 ? w->mask[o->level] : w->root;
      if (R->nguards) m = T->fast ? fast_guards(T, R, w, m) : eval_guards(T, R, w, m);
      pc++;
      if (!m) break;
      wi->block = w->block;
      wi->warp = w->widx;
      wi->ref = o->ref;
      wi->array = R->array;
      wi->write = R->write;
      wi->access_bytes = R->size;
      wi->active = m;
      wi->shape = 0;
      if (R->irregular) {
        irregular_addrs(T, w, R, o->ref, m, wi->addr);
      } else if (T->fast) {
        const uint64_t sc = R->base + (uint64_t)affc_scalar(&R->off, w->s);
        if (T->shape_base) wi->shape = T->shape_base + (uint64_t)o->ref * (uint64_t)T->wpb + (uint64_t)w->widx + 1;
        lane_addrs(wi->addr, T->ref_lane + ((size_t)o->ref * (size_t)T->wpb + (size_t)w->widx) * SP_WARP, sc);
      } else if (w->lane_step && only_inner_varies(T, &R->off, w->even)) {
        /* lane l's inner index is lane 0's plus l steps: no row to read */
        const uint64_t sc = R->base + (uint64_t)affc_scalar(&R->off, w->s);
        lane_addrs(wi->addr, R->lane_steps, sc);
        if (T->shape_base) wi->shape = T->shape_base + (uint64_t)o->ref + 1;
      } else {
        affc_eval_all(&R->off, w->idx, w->s, w->even, R->base, (int64_t *)wi->addr);
      }
      w->pc = pc;
      return 1;
    }
    }
  }
  w->pc = pc;
  return 0;
}

/* ---- SMs, blocks, warps ---- */

typedef struct smstate {
  int64_t nblocks; /* blocks this SM runs (sampling applied) */
  int64_t next;    /* the next of them to start */
  int rr;          /* round-robin position over the warp slots */
  int live;        /* live warps */
  int *left;       /* live warps per block slot */
  unsigned char *w; /* [nslots * wpb] warps of `wstride` bytes each: see warp_at */
} smstate;

/* A warp and its scalars (mask, s, u) lie in one block of whole host cache lines, so a turn
 * touches a few adjacent lines. */
static inline warp *warp_at(const smstate *S, int q, size_t wstride) {
  return (warp *)(S->w + (size_t)q * wstride);
}

static void start_warp(const tr *T, warp *w, const lanes_t *ln, const int64_t *bcoord) {
  w->pc = 0;
  w->live = true;
  w->root = ln->root;
  w->even = 0;
  w->lane_step = false;
  for (int m = 0; m < T->nmapped; m++) {
    int td = T->map_t[m], bd = T->map_b[m];
    int64_t per = td >= 0 ? T->block[td] : 1;
    w->boff[m] = bd >= 0 ? (bcoord[bd] + (bd == T->skip_dim ? T->skip_rounds * T->grid[bd] : 0)) * per : 0;
  }
}

/* g[loop][d]: how each index moves with threadIdx.d (through the mapping and through bounds
 * that depend on outer indices), and the per-lane tables of the affine path. */
static void lane_vec(const tr *T, const int64_t *gv, int64_t *out) {
  for (int w = 0; w < T->wpb; w++)
    for (int l = 0; l < SP_WARP; l++) {
      uint64_t v = 0;
      for (int d = 0; d < 3; d++) v += (uint64_t)gv[d] * (uint64_t)T->ln[w].coord[d][l];
      out[(size_t)w * SP_WARP + (size_t)l] = (int64_t)v;
    }
}

static void affc_g(const tr *T, const affc *a, int64_t *gv) {
  gv[0] = gv[1] = gv[2] = 0;
  for (int i = 0; i < a->n; i++)
    for (int d = 0; d < 3; d++) gv[d] += a->t[i].coef * T->g[a->t[i].loop][d];
}

static int fast_tables(tr *T, const sp_nest *nest) {
  size_t row = (size_t)T->wpb * SP_WARP;
  int ng = 0;
  for (int r = 0; r < nest->nrefs; r++) ng += nest->refs[r].nguards;
  T->lv_lane = calloc(row * (size_t)(T->nlev > 0 ? T->nlev : 1), sizeof(int64_t));
  T->lv_even = calloc((size_t)T->wpb * (size_t)(T->nlev > 0 ? T->nlev : 1), sizeof(bool));
  T->ref_lane = calloc(row * (size_t)(nest->nrefs > 0 ? nest->nrefs : 1), sizeof(int64_t));
  T->grd_lane = calloc(row * (size_t)(ng > 0 ? ng : 1), sizeof(int64_t));
  if (!T->lv_lane || !T->lv_even || !T->ref_lane || !T->grd_lane) return -1;
  memset(T->g, 0, sizeof T->g);
  for (int lv = 0; lv < T->nlev; lv++) { /* levels are in nesting order: outer g known */
    const level *v = &T->lev[lv];
    int64_t gl[3], gu[3], d[3];
    affc_g(T, &v->lower, gl);
    affc_g(T, &v->upper, gu);
    for (int k = 0; k < 3; k++) T->g[v->loop][k] = gl[k];
    if (v->mapped >= 0 && T->map_t[v->mapped] >= 0) T->g[v->loop][T->map_t[v->mapped]] += v->step;
    for (int k = 0; k < 3; k++) d[k] = T->g[v->loop][k] - gu[k];
    lane_vec(T, d, T->lv_lane + (size_t)lv * row);
    for (int w = 0; w < T->wpb; w++) {
      T->lv_even[(size_t)lv * (size_t)T->wpb + (size_t)w] =
          lanes_equal(T->lv_lane + (size_t)lv * row + (size_t)w * SP_WARP);
    }
  }
  for (int r = 0; r < nest->nrefs; r++) {
    int64_t gv[3];
    affc_g(T, &T->refs[r].off, gv);
    lane_vec(T, gv, T->ref_lane + (size_t)r * row);
  }
  for (int i = 0; i < ng; i++) {
    int64_t gv[3];
    affc_g(T, &T->guards[i].e, gv);
    lane_vec(T, gv, T->grd_lane + (size_t)i * row);
  }
  return 0;
}

/* Of the iterations 0 .. trip - 1 dealt out in rounds of `stride`, those at offsets first ..
 * first + per - 1 of each round: a block's share of a loop on its grid dimension (stride
 * per x grid, first per x its coordinate). */
static inline int64_t stride_share(int64_t trip, int64_t stride, int64_t first, int64_t per) {
  int64_t part = trip % stride - first;
  return trip / stride * per + (part <= 0 ? 0 : part < per ? part : per);
}

int64_t sp_trace_stride_share(int64_t trip, int64_t stride, int64_t first, int64_t per) {
  return trip <= 0 || stride <= 0 ? 0 : stride_share(trip, stride, first, per);
}

/* How the loop mapped to one block dimension shares out (stride_share). */
typedef struct dim_share {
  bool mapped, fixed, lanes;
  int64_t trip, per, stride; /* trip: 0 where a loop's count is unknown */
} dim_share;

/* The iterations of band loop k, the product over its collapse group where one starts at k
 * (trip_max; 0 where any count is unknown); *fixed (unless NULL): every count is known and
 * constant. */
static int64_t band_trip(const sp_nest *nest, const sp_schedule *s, int k, bool *fixed) {
  bool group = s->collapse_count >= 2 && k == s->collapse_first, all_fixed = true;
  int64_t trip = 1;
  for (int j = k; j < (group ? k + s->collapse_count : k + 1); j++) {
    all_fixed &= nest->loops[j].trip_min == nest->loops[j].trip_max && nest->loops[j].trip_max > 0;
    trip *= nest->loops[j].trip_max > 0 ? nest->loops[j].trip_max : 0;
  }
  if (fixed) *fixed = all_fixed;
  return trip;
}

int64_t sp_trace_band_trip(const sp_nest *nest, const sp_schedule *s, int k) {
  return band_trip(nest, s, k, NULL);
}

static void dim_shares(const sp_nest *nest, const sp_schedule *s, dim_share sh[3]) {
  memset(sh, 0, 3 * sizeof *sh);
  for (int k = 0; k < s->nband; k++) {
    int d = s->map[k].block_dim;
    if (d < 0 || d > 2 || sp_schedule_collapsed_away(s, k)) continue;
    bool fixed;
    int64_t trip = band_trip(nest, s, k, &fixed);
    int64_t per = s->map[k].thread_dim >= 0 ? s->block[s->map[k].thread_dim] : 1;
    int64_t stride = per * s->grid[d];
    sh[d] = (dim_share){true, fixed, s->map[k].thread_dim == 0, trip, per, stride};
  }
}

static int64_t share_of(const dim_share *h, int64_t b) {
  return h->mapped ? stride_share(h->trip, h->stride, h->per * b, h->per) : 1;
}

/* Block b's band iterations along its grid dimensions (the product of its shares). */
static int64_t shares_product(const dim_share sh[3], const sp_schedule *s, int64_t b) {
  const int64_t gx = s->grid[0], gy = s->grid[1];
  return share_of(&sh[0], b % gx) * share_of(&sh[1], (b / gx) % gy) * share_of(&sh[2], b / (gx * gy));
}

int sp_trace_block_shares(const sp_nest *nest, const sp_schedule *s, const int64_t *blocks, int n,
                          int64_t (*at)[3], int64_t (*share)[3], int64_t (*rounds)[3]) {
  dim_share sh[3];
  dim_shares(nest, s, sh);
  for (int d = 0; d < 3; d++)
    if (sh[d].mapped && !sh[d].fixed) return -1;
  const int64_t gx = s->grid[0], gy = s->grid[1];
  for (int j = 0; j < n; j++) {
    const int64_t b = blocks[j];
    at[j][0] = b % gx, at[j][1] = b / gx % gy, at[j][2] = b / (gx * gy);
    for (int d = 0; d < 3; d++) {
      share[j][d] = share_of(&sh[d], at[j][d]);
      rounds[j][d] = sh[d].mapped ? (share[j][d] + sh[d].per - 1) / sh[d].per : 1;
    }
  }
  return 0;
}

int64_t sp_trace_working_blocks(const sp_nest *nest, const sp_schedule *s) {
  dim_share sh[3];
  dim_shares(nest, s, sh);
  int64_t working = 1;
  for (int d = 0; d < 3; d++) {
    int64_t need = sh[d].mapped ? (sh[d].trip + sh[d].per - 1) / sh[d].per : s->grid[d];
    working *= need < s->grid[d] ? need : s->grid[d];
  }
  return working;
}

int sp_trace_working_warps(const sp_nest *nest, const sp_schedule *s) {
  int64_t used[3] = {s->block[0], s->block[1], s->block[2]};
  for (int k = 0; k < s->nband; k++) {
    int t = s->map[k].thread_dim;
    if (t < 0 || t > 2 || sp_schedule_collapsed_away(s, k)) continue;
    bool fixed;
    int64_t trip = band_trip(nest, s, k, &fixed);
    if (trip > 0 && trip < used[t]) used[t] = trip;
  }
  const int64_t threads = (int64_t)s->block[0] * s->block[1] * s->block[2];
  int working = 0;
  for (int64_t w = 0; w * SP_WARP < threads; w++) {
    bool any = false;
    for (int64_t l = w * SP_WARP; l < (w + 1) * SP_WARP && l < threads && !any; l++)
      any = l % s->block[0] < used[0] && l / s->block[0] % s->block[1] < used[1] &&
            l / ((int64_t)s->block[0] * s->block[1]) < used[2];
    working += any;
  }
  return working > 0 ? working : 1;
}

int64_t sp_trace_loop_spread(const sp_schedule *s, int k) {
  int64_t per = 1;
  if (s->map[k].thread_dim >= 0) per *= s->block[s->map[k].thread_dim];
  if (s->map[k].block_dim >= 0) per *= s->grid[s->map[k].block_dim];
  return per;
}

int64_t sp_trace_loop_rounds(const sp_nest *nest, const sp_schedule *s, int k) {
  if (sp_schedule_collapsed_away(s, k)) return 1;
  int64_t trip = band_trip(nest, s, k, NULL), per = sp_trace_loop_spread(s, k);
  return trip > 0 ? (trip + per - 1) / per : 1;
}

int64_t sp_trace_thread_rounds(const sp_nest *nest, const sp_schedule *s) {
  int64_t rounds = 1;
  for (int k = 0; k < s->nband; k++) {
    int64_t r = sp_trace_loop_rounds(nest, s, k);
    /* far beyond any measured count (the curves that read it stop at 64): no overflow */
    rounds = rounds > (INT64_C(1) << 40) / r ? INT64_C(1) << 40 : rounds * r;
  }
  return rounds;
}

unsigned sp_trace_lane_uneven_dims(const sp_nest *nest, const sp_schedule *s) {
  dim_share sh[3];
  dim_shares(nest, s, sh);
  unsigned out = 0;
  for (int d = 0; d < 3; d++)
    if (sh[d].mapped && sh[d].lanes && (!sh[d].fixed || share_of(&sh[d], 0) != share_of(&sh[d], s->grid[d] - 1)))
      out |= 1u << d;
  return out;
}

int sp_trace_sm_work(const sp_nest *nest, const sp_schedule *s, int nsm, double *work) {
  dim_share sh[3];
  dim_shares(nest, s, sh);
  int64_t blocks = s->grid[0] * s->grid[1] * s->grid[2];
  if (nsm < 1 || blocks > (INT64_C(1) << 26)) return -1;
  for (int d = 0; d < 3; d++)
    if (sh[d].mapped && !sh[d].fixed) return -1;
  if (!sp_nest_rectangular(nest)) return -1; /* a triangular inner loop: blocks' work differs */
  for (int i = 0; i < nsm; i++) work[i] = 0;
  int i = 0;
  for (int64_t b = 0; b < blocks; b++) {
    work[i] += (double)shares_product(sh, s, b);
    if (++i == nsm) i = 0;
  }
  return 0;
}

/* Block work by enumeration: a band loop's normalized iterations n in [0, trip) that a block runs
 * are those with n mod S in [a, a + p); the outer loops' are enumerated, the innermost counted. */
typedef struct bw_loop {
  int64_t S, a, p;
  int dim;           /* its grid dimension, -1: none (a = 0) */
  affc lower, upper; /* in the outer band indices */
  int64_t step;
} bw_loop;

static inline int64_t bw_eval(const affc *f, const int64_t *idx) {
  int64_t v = f->c;
  for (int i = 0; i < f->n; i++) v += f->t[i].coef * idx[f->t[i].loop];
  return v;
}

/* adds to *count weight times the band iterations of loops k.. at the outer indices idx; the
 * outermost loop (k == 0) takes only every thin-th of its iterations */
static void bw_count(int nb, const bw_loop *m, int k, int64_t *idx, int64_t thin, double weight,
                     double *count) {
  const bw_loop *q = &m[k];
  const int64_t lo = bw_eval(&q->lower, idx), hi = bw_eval(&q->upper, idx);
  const int64_t span = q->step > 0 ? hi - lo : lo - hi;
  const int64_t trip = span < 0 ? 0 : span / (q->step > 0 ? q->step : -q->step) + 1;
  if (k == nb - 1) {
    *count += weight * (double)stride_share(trip, q->S, q->a, q->p);
    return;
  }
  if (k > 0) thin = 1;
  /* the f-th of the block's iterations is n = (f / p) S + a + f mod p; a sample of every
   * thin-th weighs the block's iterations over the sample's */
  double sum = 0;
  int64_t taken = 0;
  for (int64_t f = 0;; f += thin) {
    int64_t start = f / q->p * q->S + q->a, n = start + f % q->p;
    if (start >= trip) break; /* a round that starts past the trip: so do the later ones */
    if (n >= trip) continue;
    idx[k] = lo + q->step * n;
    bw_count(nb, m, k + 1, idx, thin, 1.0, &sum);
    taken++;
  }
  if (taken) {
    *count += weight * sum * (double)stride_share(trip, q->S, q->a, q->p) / (double)taken;
  }
  idx[k] = 0;
}

int sp_trace_block_work(const sp_nest *nest, const sp_schedule *s, int64_t max_steps,
                        double *work) {
  if (!nest || !s || !work || s->nband < 1 || s->nband > nest->nloops || max_steps < 1) return -1;
  const int nb = s->nband;
  const int64_t blocks = s->grid[0] * s->grid[1] * s->grid[2];
  if (sp_schedule_dims_shared(s)) return 1;
  for (int l = nb; l < nest->nloops; l++)
    if (nest->loops[l].trip_min != nest->loops[l].trip_max) return 1; /* work per iteration varies */
  if (sp_nest_rectangular(nest)) { /* the shares' product, as sp_trace_sm_work, times the
                                      * trips of the loops (or group) on no block dimension */
    dim_share sh[3];
    dim_shares(nest, s, sh);
    double rest = 1;
    for (int k = 0; k < nb; k++)
      if (s->map[k].block_dim < 0 && !sp_schedule_collapsed_away(s, k))
        rest *= (double)band_trip(nest, s, k, NULL);
    for (int64_t b = 0; b < blocks; b++) work[b] = rest * (double)shares_product(sh, s, b);
    return 0;
  }
  if (s->collapse_count >= 2) return 1;
  bw_loop m[SP_MAX_LOOPS];
  /* the outer iterations all blocks enumerate (at most: trip_max of each outer loop, shared
   * out), and the outermost loop's sampling that keeps them within max_steps */
  double steps = (double)blocks;
  for (int k = 0; k < nb; k++) {
    int t = s->map[k].thread_dim, d = s->map[k].block_dim;
    int64_t per = t >= 0 ? s->block[t] : 1, G = d >= 0 ? s->grid[d] : 1;
    m[k] = (bw_loop){.S = per * G, .p = per, .dim = d, .step = nest->loops[k].step};
    affc_from(&m[k].lower, &nest->loops[k].lower);
    affc_from(&m[k].upper, &nest->loops[k].upper);
    if (k < nb - 1)
      steps *= fmax(1.0, ceil((double)nest->loops[k].trip_max / (double)m[k].S) * (double)per);
  }
  int64_t thin = steps > (double)max_steps ? (int64_t)ceil(steps / (double)max_steps) : 1;
  int64_t idx[SP_MAX_LOOPS];
  for (int64_t b = 0; b < blocks; b++) {
    const int64_t coord[3] = {b % s->grid[0], b / s->grid[0] % s->grid[1],
                              b / (s->grid[0] * s->grid[1])};
    for (int k = 0; k < nb; k++) m[k].a = m[k].dim >= 0 ? coord[m[k].dim] * m[k].p : 0;
    memset(idx, 0, sizeof idx);
    work[b] = 0;
    bw_count(nb, m, 0, idx, thin, 1.0, &work[b]);
  }
  return 0;
}

int sp_trace_skip_dim(const sp_nest *nest, const sp_schedule *s) {
  if ((s->grid[0] > 1) + (s->grid[1] > 1) + (s->grid[2] > 1) <= 1)
    return s->grid[1] > 1 ? 1 : s->grid[2] > 1 ? 2 : 0;
  if (sp_schedule_dims_shared(s)) return -1;
  int dim = -1;
  for (int k = 0; k < s->nband && k < nest->nloops; k++) {
    int t = s->map[k].thread_dim, d = s->map[k].block_dim;
    if (d < 0 || sp_schedule_collapsed_away(s, k)) continue;
    int64_t per = t >= 0 ? s->block[t] : 1;
    if (band_trip(nest, s, k, NULL) <= per * s->grid[d]) continue;
    if (dim >= 0) return -1;
    dim = d;
  }
  return dim;
}

/* tr.grp_min and tr.grp_odig, from the lanes' threadIdx on the group's thread dimension */
static int group_tables(tr *T) {
  const collapse_info *c = &T->cg;
  if (c->total == INT64_MAX) return 0;
  for (int j = 0; j < c->count; j++)
    if (c->trip[j] <= 0) return 0;
  T->grp_min = calloc((size_t)T->wpb, sizeof *T->grp_min);
  T->grp_odig = calloc((size_t)T->wpb * (size_t)c->count * SP_WARP, sizeof *T->grp_odig);
  if (!T->grp_min || !T->grp_odig) return -1;
  const int td = c->mapped >= 0 ? T->map_t[c->mapped] : -1;
  for (int w = 0; w < T->wpb; w++) {
    const int64_t *x = td >= 0 ? T->ln[w].coord[td] : NULL;
    int64_t lo = x ? x[0] : 0;
    for (int l = 1; x && l < SP_WARP; l++) lo = x[l] < lo ? x[l] : lo;
    T->grp_min[w] = lo;
    int64_t *od = T->grp_odig + (size_t)w * (size_t)c->count * SP_WARP;
    for (int l = 0; l < SP_WARP; l++) fused_digits(c, x ? x[l] - lo : 0, od + l, SP_WARP);
  }
  return 0;
}

int sp_trace_run(const sp_nest *nest, const sp_schedule *s, const sp_arch *arch,
                 const sp_trace_options *opt, sp_trace_sink sink, void *ctx,
                 sp_trace_stats *stats) {
  if (stats) memset(stats, 0, sizeof *stats);
  if (!nest || !s || !arch || !sink || arch->sm_count < 1) return -1;
  if (sp_schedule_check(nest, s, arch, NULL, 0) != 0) return -1;
  int threads = s->block[0] * s->block[1] * s->block[2];
  int active = opt && opt->active_blocks_per_sm > 0
                   ? opt->active_blocks_per_sm
                   : sp_schedule_blocks_per_sm(arch, s);
  if (active <= 0) return -1;
  int64_t nblocks = s->grid[0] * s->grid[1] * s->grid[2];
  int nsm = arch->sm_count;
  int nsim = opt && opt->sample_sms > 0 && opt->sample_sms < nsm ? opt->sample_sms : nsm;
  int first = opt && nsim < nsm && opt->sample_sm_first > 0 ? opt->sample_sm_first : 0;
  if (first > nsm - nsim) first = nsm - nsim;
  int64_t waves_cap = opt && opt->sample_waves > 0 ? opt->sample_waves : 0;
  int64_t skip = opt && opt->sample_skip_blocks > 0 ? opt->sample_skip_blocks : 0;
  const sp_block_placement *place = opt ? opt->placement : NULL;
  if (place && place->nsm != nsm) return -1;
  int wpb = (threads + SP_WARP - 1) / SP_WARP;
  int nslots = (int)(nblocks < active ? (nblocks > 0 ? nblocks : 1) : active);
  int nw = nslots * wpb;

  int rc = -1;
  tr *T = calloc(1, sizeof *T);
  uint64_t *base = malloc(sizeof *base * (size_t)(nest->narrays > 0 ? nest->narrays : 1));
  lanes_t *ln = calloc((size_t)wpb, sizeof *ln);
  smstate *sm = calloc((size_t)nsim, sizeof *sm);
  unsigned char *warps = NULL;
  int *left = calloc((size_t)nsim * (size_t)nslots, sizeof *left);
  sp_warp_instr *wi = calloc(1, sizeof *wi);
  int64_t *arena = NULL;
  if (!T || !base || !ln || !sm || !left || !wi) goto out;
  sp_trace_array_bases(nest, base);
  if (build(T, nest, s, base)) goto out;

  /* per warp: the warp, mask [nlev], s [nloops], u [nlev]; the per-lane path's rows idx
   * [nloops][32], ub [nlev][32], dig [count][32] apart (arena) */
  T->fast = !T->has_collapse;
  const size_t mask_bytes = ((size_t)T->nlev * sizeof(uint32_t) + 7) & ~(size_t)7;
  const size_t wstride = (sizeof(warp) + mask_bytes + sizeof(int64_t) * (size_t)(T->nloops + T->nlev) + 63) & ~(size_t)63;
  warps = aligned_alloc(64, (size_t)nsim * (size_t)nw * wstride);
  size_t per = T->fast ? 0 : (size_t)SP_WARP * (size_t)(T->nloops + T->nlev + T->cg.count);
  arena = calloc((size_t)nsim * (size_t)nw * (per > 0 ? per : 1), sizeof *arena);
  if (!warps || !arena) goto out;
  memset(warps, 0, (size_t)nsim * (size_t)nw * wstride);

  /* lanes: linear thread id 32w + lane, x fastest */
  for (int w = 0; w < wpb; w++) {
    ln[w].root = 0;
    for (int l = 0; l < SP_WARP; l++) {
      int tid = w * SP_WARP + l;
      int64_t x[3];
      if (tid < threads) ln[w].root |= 1u << l;
      sp_traces_thread_coords(s->block, tid, x);
      for (int d = 0; d < 3; d++) ln[w].coord[d][l] = x[d];
    }
  }
  T->ln = ln;
  T->wpb = wpb;
  if (T->has_collapse && group_tables(T)) goto out;
  if (T->fast && fast_tables(T, nest)) goto out;
  /* ids unique to this run: a sample cache or a model reused across candidates never mixes
   * two runs' layouts */
  if ((T->fast && (int64_t)nest->nrefs * wpb + wpb < (INT64_C(1) << 24)) ||
      (T->has_collapse && nest->nrefs < (1 << 24)))
    T->shape_base = (atomic_fetch_add(&sp_trace_serial, 1) + 1) << 24;
  T->skip_rounds = opt && opt->sample_skip_rounds > 0 ? opt->sample_skip_rounds : 0;
  T->skip_dim = sp_trace_skip_dim(nest, s);
  if (T->skip_rounds && T->skip_dim < 0) goto out;
  for (int i = 0; i < nsim; i++) {
    smstate *S = &sm[i];
    S->nblocks = place ? place->first[first + i + 1] - place->first[first + i]
               : nblocks > first + i ? (nblocks - 1 - first - i) / nsm + 1 : 0;
    S->next = skip < S->nblocks ? skip : S->nblocks;
    if (waves_cap > 0 && waves_cap <= (INT64_MAX - S->next) / active &&
        S->nblocks > S->next + waves_cap * active)
      S->nblocks = S->next + waves_cap * active;
    S->left = left + (size_t)i * (size_t)nslots;
    S->w = warps + (size_t)i * (size_t)nw * wstride;
    for (int q = 0; q < nw; q++) {
      warp *w = warp_at(S, q, wstride);
      unsigned char *hot = (unsigned char *)(w + 1);
      w->mask = (uint32_t *)hot;
      w->s = (int64_t *)(hot + mask_bytes);
      w->u = w->s + T->nloops;
      w->widx = q % wpb;
      if (T->fast) continue;
      int64_t *a = arena + ((size_t)i * (size_t)nw + (size_t)q) * per;
      w->idx = a;
      a += (size_t)SP_WARP * (size_t)T->nloops;
      w->ub = a;
      a += (size_t)SP_WARP * (size_t)T->nlev;
      w->dig = a;
    }
  }

  int64_t ninstr = 0, simulated = 0;
  const int64_t gx = s->grid[0], gxy = s->grid[0] * s->grid[1];
#define START_BLOCK(S, i, slot)                                                                 \
  do {                                                                                          \
    int64_t b_ = place ? place->block[place->first[i] + (S)->next]                              \
                       : (int64_t)(i) + (S)->next * nsm;                                        \
    int64_t bc_[3] = {b_ % gx, (b_ / gx) % s->grid[1], b_ / gxy};                               \
    (S)->next++;                                                                                \
    simulated++;                                                                                \
    for (int w_ = 0; w_ < wpb; w_++) {                                                          \
      warp *ww_ = warp_at((S), (slot) * wpb + w_, wstride);                                                 \
      ww_->block = b_;                                                                          \
      start_warp(T, ww_, &ln[w_], bc_);                                                         \
    }                                                                                           \
    (S)->left[slot] = wpb;                                                                      \
    (S)->live += wpb;                                                                           \
  } while (0)
  for (int i = 0; i < nsim; i++)
    for (int slot = 0; slot < nslots && sm[i].next < sm[i].nblocks; slot++)
      START_BLOCK(&sm[i], first + i, slot);

  bool any = true;
  while (any) {
    any = false;
    for (int i = 0; i < nsim; i++) {
      smstate *S = &sm[i];
#if defined(__GNUC__)
      /* The SMs take turns instruction by instruction, so with 132 SMs of resident warps a
       * warp's state has left the host's caches by its next turn: fetch the warp (and its
       * scalars) of the SM four turns ahead, and the lane rows of the warp two turns ahead.
       * (Written out here: GCC deletes a call to a function that only prefetches, as having no
       * effect.) */
      if (nsim > 4) {
        const smstate *P = &sm[i + 4 < nsim ? i + 4 : i + 4 - nsim];
        if (P->live > 0) {
          const char *p = (const char *)warp_at(P, P->rr, wstride);
          for (size_t b = 0; b < wstride; b += 64) __builtin_prefetch(p + b);
        }
        P = &sm[i + 2 < nsim ? i + 2 : i + 2 - nsim];
        if (P->live > 0) {
          const warp *pw = warp_at(P, P->rr, wstride);
          if (!T->fast && !pw->lane_step)
            for (uint32_t rows = ~pw->even & ((UINT32_C(1) << T->nloops) - 1); rows; rows &= rows - 1) {
              const char *p = (const char *)(pw->idx + __builtin_ctz(rows) * SP_WARP);
              for (size_t b = 0; b < SP_WARP * sizeof(int64_t); b += 64) __builtin_prefetch(p + b);
            }
        }
      }
#endif
      while (S->live > 0) {
        int q = S->rr;
        S->rr = q + 1 == nw ? 0 : q + 1;
        warp *w = warp_at(S, q, wstride);
        if (!w->live) continue;
        if (warp_next(T, w, wi)) {
          any = true;
          wi->sm = i;
          ninstr++;
          int r = sink(ctx, wi);
          if (r) {
            rc = r;
            goto done;
          }
          break;
        }
        w->live = false;
        S->live--;
        int slot = q / wpb;
        if (--S->left[slot] == 0 && S->next < S->nblocks) START_BLOCK(S, first + i, slot);
      }
    }
  }
  rc = 0;
done:
  if (stats) {
    stats->blocks = nblocks;
    stats->blocks_working = sp_trace_working_blocks(nest, s);
    stats->warps_working_per_block = sp_trace_working_warps(nest, s);
    stats->blocks_simulated = simulated;
    sp_waves wv;
    if (sp_arch_waves(arch, nblocks, active, &wv) == 0) stats->waves = wv.waves;
    stats->active_blocks_per_sm = active;
    stats->warp_instructions = ninstr;
    stats->iterations = T->iters;
  }
#undef START_BLOCK
out:
  if (T) {
    if (T->opv != T->ops) free(T->opv);
    free(T->refs);
    free(T->guards);
    free(T->lv_lane);
    free(T->lv_even);
    free(T->ref_lane);
    free(T->grd_lane);
    free(T->grp_min);
    free(T->grp_odig);
  }
  free(T);
  free(base);
  free(ln);
  free(sm);
  free(warps);
  free(left);
  free(wi);
  free(arena);
  return rc;
}
