/* How many distinct sectors of an array a nest reads or writes, from its references' affine
 * forms alone (no trace): the sampled ranking caps a short sample's compulsory misses with it,
 * and sizes a block's pass against the L1. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/rank.h"

/* A reference's footprint as a box: `row` contiguous bytes from byte `lo`, repeated over the
 * outer dimensions (strides larger than the row, ascending) with their trips. */
typedef struct fp_box {
  double lo, hi; /* byte range */
  double row;
  int nouter;
  double stride[SP_MAX_LOOPS], trip[SP_MAX_LOOPS];
  double q[SP_MAX_LOOPS]; /* its start in whole steps of each outer stride */
  double shift;           /* and the rest of its start, in bytes within the row */
  bool empty;             /* its guards let no iteration of the window through */
} fp_box;

/* Whether the box's rows all start at one offset within a sector: every outer stride is whole
 * sectors (arrays start on a sector). */
static bool fp_rows_aligned(const fp_box *b, int sector_bytes) {
  for (int d = 0; d < b->nouter; d++)
    if (fmod(b->stride[d], sector_bytes) != 0) return false;
  return true;
}

/* The sectors a row of bytes [lo, hi) touches: those it straddles where its start within a
 * sector is known (a block's 32 floats from k = 1 take two 128-byte lines), else its length
 * rounded up. */
static double fp_row_sectors(double lo, double hi, int sector_bytes, bool aligned) {
  if (!aligned) return ceil((hi - lo) / sector_bytes);
  return floor((hi - 1) / sector_bytes) - floor(lo / sector_bytes) + 1;
}

/* Whether bytes from lo on join a run of bytes that ends at hi (exclusive): they meet it, or,
 * where sectors' places are known, start in its last sector (a[i] and a[i+2] share a sector
 * that neither byte range overlaps). */
static bool fp_joins(double lo, double hi, int sector_bytes, bool aligned) {
  return lo <= hi || (aligned && floor(lo / sector_bytes) <= floor((hi - 1) / sector_bytes));
}

static double fp_box_sectors(const fp_box *b, int sector_bytes) {
  double rows = 1;
  for (int d = 0; d < b->nouter; d++) rows *= b->trip[d];
  return rows * fp_row_sectors(b->lo, b->lo + b->row, sector_bytes, fp_rows_aligned(b, sector_bytes));
}

/* Boxes that differ only by where they start (a stencil's neighbours): same row, same outer
 * strides and trips. */
static bool fp_translates(const fp_box *a, const fp_box *b) {
  if (a->row != b->row || a->nouter != b->nouter) return false;
  for (int d = 0; d < a->nouter; d++)
    if (a->stride[d] != b->stride[d] || a->trip[d] != b->trip[d]) return false;
  return true;
}

static int fp_by_double(const void *pa, const void *pb) {
  double x = *(const double *)pa, y = *(const double *)pb;
  return x < y ? -1 : x > y;
}

static int fp_by_box_lo(const void *pa, const void *pb) {
  return fp_by_double(&(*(const fp_box *const *)pa)->lo, &(*(const fp_box *const *)pb)->lo);
}

typedef struct fp_seg {
  double lo, hi;
} fp_seg;

static int fp_by_seg_lo(const void *pa, const void *pb) {
  const fp_seg *x = pa, *y = pb;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The arrays sorted here are a few elements long (a cell's rows, a group's boxes), where
 * qsort's call and comparator cost more than the sort: an insertion sort up to FP_SORT_SMALL
 * elements, qsort above. Both are stable (glibc's qsort merges), so the order of equal keys,
 * and with it every sum over the sorted elements, is the same either way. */
#define FP_SORT_SMALL 24

/* Sorts c[m] ascending and drops repeats, keeping of equal values the first (what a stable
 * sort and a pass over neighbours keep); returns how many are left. The cuts of a class of
 * translates repeat a few values (a stencil's taps step by one), so the repeats go first and
 * the insertion sort sees the few distinct values. */
static int fp_sorted_unique(double *c, int m) {
  int u = 0;
  for (int k = 0; k < m; k++) {
    const double x = c[k];
    int j = 0;
    while (j < u && c[j] != x) j++;
    if (j < u) continue;
    if (u >= FP_SORT_SMALL) { /* many distinct values: sort them all */
      for (int r = k; r < m; r++) c[u++] = c[r];
      qsort(c, (size_t)u, sizeof *c, fp_by_double);
      int w = 0;
      for (int r = 0; r < u; r++)
        if (w == 0 || c[r] != c[w - 1]) c[w++] = c[r];
      return w;
    }
    for (j = u++; j > 0 && x < c[j - 1]; j--) c[j] = c[j - 1];
    c[j] = x;
  }
  return u;
}

/* Boxes are large: they are sorted by where they start through pointers to them. */
static void fp_sort_boxes(const fp_box **box, int m) {
  if (m > FP_SORT_SMALL) {
    qsort(box, (size_t)m, sizeof *box, fp_by_box_lo);
    return;
  }
  for (int i = 1; i < m; i++) {
    const fp_box *x = box[i];
    int j = i;
    for (; j > 0 && x->lo < box[j - 1]->lo; j--) box[j] = box[j - 1];
    box[j] = x;
  }
}

static void fp_sort_segs(fp_seg *seg, int m) {
  if (m > FP_SORT_SMALL) {
    qsort(seg, (size_t)m, sizeof *seg, fp_by_seg_lo);
    return;
  }
  for (int i = 1; i < m; i++) {
    fp_seg x = seg[i];
    int j = i;
    for (; j > 0 && x.lo < seg[j - 1].lo; j--) seg[j] = seg[j - 1];
    seg[j] = x;
  }
}

/* Cells of the union's grid beyond which a class counts as its largest box. */
#define FP_MAX_CELLS 65536

/* The union of n translated boxes in sectors, or -1 where it cannot be counted this way: each
 * box's start, split into whole steps of the outer strides (largest first) and a rest within
 * the row, as an index into a multidimensional array is, must place every byte of the union at
 * one position of the grid (the rows' spread within one step of the smallest outer stride, and
 * so on up: what references within the array's bounds do), and the grid must stay under
 * FP_MAX_CELLS cells. The grid's cells are the intervals between the
 * boxes' starts and ends in each outer dimension; in each, the rows of the boxes that cover it
 * merge into segments, each counted in whole sectors. */
static double fp_union_sectors(fp_box *b, int n, int sector_bytes) {
  const int D = b[0].nouter;
  double rlo = INFINITY, rhi = -INFINITY;
  for (int i = 0; i < n; i++) {
    double delta = b[i].lo;
    for (int d = D - 1; d >= 0; d--) {
      b[i].q[d] = floor(delta / b[0].stride[d]);
      delta -= b[i].q[d] * b[0].stride[d];
    }
    b[i].shift = delta;
    rlo = fmin(rlo, delta);
    rhi = fmax(rhi, delta + b[0].row);
  }
  double span = rhi - rlo, cells = 1;
  double *cuts = malloc((size_t)D * 2 * (size_t)n * sizeof *cuts);
  int ncut[SP_MAX_LOOPS];
  if (!cuts) return -1;
  for (int d = 0; d < D; d++) {
    if (span > b[0].stride[d]) {
      free(cuts);
      return -1;
    }
    double *c = cuts + (size_t)d * 2 * (size_t)n, qlo = INFINITY, qhi = -INFINITY;
    int m = 0;
    for (int i = 0; i < n; i++) {
      c[m++] = b[i].q[d];
      c[m++] = b[i].q[d] + b[0].trip[d];
      qlo = fmin(qlo, b[i].q[d]);
      qhi = fmax(qhi, b[i].q[d]);
    }
    int u = fp_sorted_unique(c, m);
    ncut[d] = u;
    cells *= u - 1;
    span += (b[0].trip[d] - 1 + qhi - qlo) * b[0].stride[d];
  }
  fp_seg *seg = malloc((size_t)n * sizeof *seg);
  if (!seg || cells > FP_MAX_CELLS) {
    free(cuts);
    free(seg);
    return -1;
  }
  double total = 0;
  const bool aligned = fp_rows_aligned(&b[0], sector_bytes);
  int at[SP_MAX_LOOPS] = {0};
  for (long cell = 0; cell < (long)cells; cell++) {
    double volume = 1;
    int ns = 0;
    for (int d = 0; d < D; d++) {
      const double *c = cuts + (size_t)d * 2 * (size_t)n;
      volume *= c[at[d] + 1] - c[at[d]];
    }
    for (int i = 0; i < n; i++) {
      bool covers = true;
      for (int d = 0; d < D && covers; d++) {
        const double *c = cuts + (size_t)d * 2 * (size_t)n;
        covers = b[i].q[d] <= c[at[d]] && c[at[d] + 1] <= b[i].q[d] + b[0].trip[d];
      }
      if (covers) seg[ns++] = (fp_seg){b[i].shift, b[i].shift + b[0].row};
    }
    fp_sort_segs(seg, ns);
    for (int k = 0; k < ns;) {
      double hi = seg[k].hi, lo = seg[k].lo;
      int j = k + 1;
      while (j < ns && fp_joins(seg[j].lo, hi, sector_bytes, aligned)) hi = fmax(hi, seg[j++].hi);
      total += volume * fp_row_sectors(lo, hi, sector_bytes, aligned);
      k = j;
    }
    for (int d = 0; d < D && ++at[d] == ncut[d] - 1; d++) at[d] = 0;
  }
  free(cuts);
  free(seg);
  return total;
}

/* Narrows the iterations [*from, *from + *trip) of loop l (constant bounds) to those where the
 * reference's plain guards (not parity guards, which leave the ends) on l alone hold (a * x + c >= 0, or != 0 at either end: the edges an
 * `if (j > 0 && j < N-1)` or a `continue` at j == 0 trims), so that a stencil's neighbours' boxes
 * stay within the array. */
static void fp_guarded_range(const sp_ref *ref, int l, const sp_loop *L, double *from, double *trip) {
  double lo = *from, hi = *from + *trip - 1;
  for (int pass = 0; pass < 2; pass++) /* a != 0 trim can make another's end */
    for (int g = 0; g < ref->nguards; g++) {
      const sp_guard *G = &ref->guards[g];
      if (G->negated_group || G->modulus || G->cmp == SP_CMP_EQ0 || !G->expr.coef[l]) continue;
      bool alone = true;
      for (int k = 0; k < SP_MAX_LOOPS && alone; k++) alone = k == l || !G->expr.coef[k];
      if (!alone) continue;
      /* at iteration t: A t + B */
      double A = (double)G->expr.coef[l] * (double)L->step;
      double B = (double)G->expr.coef[l] * (double)L->lower.constant + (double)G->expr.constant;
      if (G->cmp == SP_CMP_GE0) {
        if (A > 0) lo = fmax(lo, ceil(-B / A));
        else hi = fmin(hi, floor(B / -A));
      } else if (A * lo + B == 0) {
        lo++;
      } else if (A * hi + B == 0) {
        hi--;
      }
    }
  *from = lo;
  *trip = fmax(0, hi - lo + 1);
}

/* The box of one reference over the loops' trips (or extent iterations from iteration start),
 * within its guards on single loops; clears *known where a bound of one of its loops depends
 * on another index. bounds_const[l]: sp_loop_bounds_const of loop l (a scan of its bounds'
 * coefficients, done once per footprint rather than per reference). */
static void fp_box_of(const sp_nest *n, const sp_ref *ref, const double *extent,
                      const double *start, const bool *bounds_const, fp_box *b, bool *known) {
  double stride[SP_MAX_LOOPS], trips[SP_MAX_LOOPS];
  memset(b, 0, sizeof *b);
  b->lo = (double)ref->offset.constant;
  b->hi = b->lo + (double)ref->size;
  int nt = 0;
  for (int k = 0; k < ref->nloops; k++) {
    int l = ref->loops[k];
    const sp_loop *L = &n->loops[l];
    int64_t a = ref->offset.coef[l];
    *known &= bounds_const[l];
    double from = start ? start[l] : 0, trip = (double)L->trip_max - from;
    if (extent) trip = fmin(trip, extent[l]);
    if (ref->nguards && bounds_const[l] && trip > 0) {
      fp_guarded_range(ref, l, L, &from, &trip);
      b->empty |= trip <= 0;
    }
    if (!a || trip <= 0) continue;
    double first = (double)a * ((double)L->lower.constant + from * (double)L->step);
    double last = (double)a * ((double)L->lower.constant + (from + trip - 1) * (double)L->step);
    b->lo += fmin(first, last);
    b->hi += fmax(first, last);
    if (trip <= 1) continue;
    stride[nt] = fabs((double)a);
    trips[nt++] = trip;
  }
  for (int i = 1; i < nt; i++) /* insertion sort by stride */
    for (int j = i; j > 0 && stride[j] < stride[j - 1]; j--) {
      double t = stride[j]; stride[j] = stride[j - 1]; stride[j - 1] = t;
      t = trips[j]; trips[j] = trips[j - 1]; trips[j - 1] = t;
    }
  int m = 0; /* loops of one stride (a[i + di] with the taps' loop di) make one of their trips' span */
  for (int i = 0; i < nt; i++) {
    if (m > 0 && stride[i] == stride[m - 1]) {
      trips[m - 1] += trips[i] - 1;
    } else {
      stride[m] = stride[i];
      trips[m++] = trips[i];
    }
  }
  nt = m;
  b->row = (double)ref->size;
  for (int i = 0; i < nt; i++) {
    if (stride[i] <= b->row) {
      b->row += stride[i] * (trips[i] - 1);
    } else {
      b->stride[b->nouter] = stride[i];
      b->trip[b->nouter++] = trips[i];
    }
  }
}

/* A group of n overlapping boxes: each class of translates counts its union (else its largest
 * box), the group its largest class. cls, taken: room for n. */
static double fp_group_sectors(const fp_box *const *box, int n, int sector_bytes, fp_box *cls,
                               bool *taken) {
  double group = 0;
  memset(taken, 0, (size_t)n * sizeof *taken);
  for (int k = 0; k < n; k++) {
    if (taken[k]) continue;
    int nc = 0;
    for (int m = k; m < n; m++)
      if (!taken[m] && fp_translates(box[k], box[m])) {
        taken[m] = true;
        cls[nc++] = *box[m];
      }
    double u = nc > 1 ? fp_union_sectors(cls, nc, sector_bytes) : -1;
    group = fmax(group, u >= 0 ? u : fp_box_sectors(box[k], sector_bytes));
  }
  return group;
}

/* The sectors an irregular reference reaches over the whole run: one group of lanes a distinct
 * value of the indices its loaded terms read (sp_ref.irregular_loops: x[col[i]] takes at most
 * trip(i) values), at a place drawn at random as the trace draws it (traces/trace.c
 * irregular_addrs), so that k draws over p places leave p * (1 - e^(-k / p)) of them: a lone
 * element at the start of one of the array's lines, a gathered row (an affine rest) anywhere
 * over its span, from any place in a sector. */
static double fp_irregular_reach(const sp_nest *n, const sp_ref *ref, int sector_bytes) {
  double keys = 1, span = (double)ref->size;
  for (int k = 0; k < ref->nloops; k++) {
    const int l = ref->loops[k];
    const sp_loop *L = &n->loops[l];
    if (sp_ref_irregular_uses(ref, l)) keys *= (double)L->trip_max;
    else if (L->trip_max > 1) span += fabs((double)ref->offset.coef[l] * (double)L->step) * (double)(L->trip_max - 1);
  }
  const double bytes = (double)n->arrays[ref->array].total_bytes;
  if (sp_affine_is_const(&ref->offset)) {
    const double lines = fmax(1, floor(bytes / SP_TRACE_IRREGULAR_LINE_BYTES));
    return -lines * expm1(-keys / lines) * ceil((double)ref->size / sector_bytes);
  }
  const double sectors = ceil(bytes / sector_bytes);
  return -sectors * expm1(-keys * (ceil(span / sector_bytes) + 1) / sectors);
}

static double fp_sectors(const sp_nest *n, int array, int sector_bytes, unsigned accesses,
                         const bool *take, const double *extent, const double *start) {
  double declared = (double)n->arrays[array].total_bytes / sector_bytes;
  size_t room = (size_t)(n->nrefs ? n->nrefs : 1);
  /* one allocation: the boxes, room for a class, the boxes in order, which of them are taken */
  fp_box *box = malloc(room * (2 * sizeof *box + sizeof(fp_box *) + sizeof(bool)));
  fp_box *cls = box ? box + room : NULL;
  const fp_box **ord = box ? (const fp_box **)(cls + room) : NULL;
  bool *taken = box ? (bool *)(ord + room) : NULL;
  int nb = 0;
  bool known = true;
  bool bounds_const[SP_MAX_LOOPS];
  for (int l = 0; l < n->nloops; l++) bounds_const[l] = sp_loop_bounds_const(&n->loops[l]);
  double irregular_sectors = 0; /* of a line, the most an irregular reference reads or writes */
  double irregular_keys = 0;    /* the most sectors their distinct loaded values reach */
  for (int r = 0; r < n->nrefs && box; r++) {
    const sp_ref *ref = &n->refs[r];
    unsigned kind = ref->access == SP_READ ? SP_FOOT_READS : SP_FOOT_WRITES;
    if (ref->array != array || !(accesses & kind) || (take && !take[r])) continue;
    if (ref->irregular) {
      /* (with an affine rest, a gathered row, the whole of its lines) */
      irregular_sectors = fmax(irregular_sectors, sp_affine_is_const(&ref->offset)
                                                      ? ceil((double)ref->size / sector_bytes)
                                                      : (double)SP_TRACE_IRREGULAR_LINE_BYTES / sector_bytes);
      irregular_keys += fp_irregular_reach(n, ref, sector_bytes);
    } else {
      fp_box_of(n, ref, extent, start, bounds_const, &box[nb], &known);
      nb += !box[nb].empty;
    }
  }
  double total = declared;
  if (box && cls && taken) {
    total = 0;
    if (!known) { /* one group: the largest */
      for (int i = 0; i < nb; i++) total = fmax(total, fp_box_sectors(&box[i], sector_bytes));
    } else { /* groups of overlapping ranges, apart from each other */
      for (int i = 0; i < nb; i++) ord[i] = &box[i];
      fp_sort_boxes(ord, nb);
      for (int i = 0; i < nb;) {
        double end = ord[i]->hi;
        int j = i + 1;
        while (j < nb && (ord[j]->lo < end ||
                          (fp_translates(ord[i], ord[j]) &&
                           fp_joins(ord[j]->lo, end, sector_bytes, fp_rows_aligned(ord[j], sector_bytes)))))
          end = fmax(end, ord[j++]->hi);
        total += fp_group_sectors(ord + i, j - i, sector_bytes, cls, taken);
        i = j;
      }
    }
  }
  /* over the whole run an irregular reference reaches as much of its array as the trace lets
   * it: its bytes at the start of every line (SP_TRACE_IRREGULAR_LINE_BYTES) */
  if (irregular_sectors > 0 && !extent && !start) {
    double lines = ceil((double)n->arrays[array].total_bytes / SP_TRACE_IRREGULAR_LINE_BYTES);
    total += fmin(irregular_keys,
                  lines * fmin(irregular_sectors, ceil((double)SP_TRACE_IRREGULAR_LINE_BYTES / sector_bytes)));
  }
  free(box);
  return total < declared ? total : declared;
}

double sp_rank_footprint_sectors(const sp_nest *n, int array, int sector_bytes, unsigned accesses,
                                 const double *extent) {
  return fp_sectors(n, array, sector_bytes, accesses, NULL, extent, NULL);
}

double sp_rank_footprint_window(const sp_nest *n, int array, int sector_bytes, unsigned accesses,
                                const double *extent, const double *start) {
  return fp_sectors(n, array, sector_bytes, accesses, NULL, extent, start);
}

double sp_rank_refs_footprint_sectors(const sp_nest *n, int array, int sector_bytes,
                                      const bool *take, const double *extent) {
  return fp_sectors(n, array, sector_bytes, SP_FOOT_READS | SP_FOOT_WRITES, take, extent, NULL);
}
