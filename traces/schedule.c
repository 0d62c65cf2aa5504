/* The schedule space of a nest (sp_space_build) and the legality check of one schedule.
 *
 * Mappable "units": the parallel band loops, a collapse group counting as one unit. At most 3
 * units are mapped: with more, the outer ones are collapsed into one group when their bounds are
 * constant and they are adjacent, otherwise only the innermost 3 are mapped and the others run
 * sequentially in every thread.
 *
 * Each unit gets a thread dim and/or a block dim (never neither), thread dims distinct, block
 * dims distinct, at least one thread dim. Used dims always form a prefix (x; x,y; x,y,z): a loop
 * alone on threadIdx.y with blockDim.x = 1 is the same as that loop on threadIdx.x, so only the
 * canonical form is listed.
 *
 * Pattern names (x = innermost unit, y = the next outer, z = the outermost of three; tx = threadIdx.x,
 * bx = blockIdx.x, "+" = both, a grid-stride loop when the grid does not cover the loop):
 *   2_1  x->tx     y->bx                 (dissertation Listing 7.3)
 *   2_2  x->tx+bx  y->by                 (Listing 7.4)
 *   2_3  x->tx+bx  y->ty+by              (Listing 7.5)
 *   3_1  x->tx     y->ty     z->bx       (Fig. 7.6)
 *   3_2  x->tx+bx  y->by     z->bz       (2_2 extended: only x on threads)
 *   3_3  x->tx+bx  y->ty+by  z->bz       (2_3 extended: z on the grid only)
 *   3_4  x->tx+bx  y->ty+by  z->tz+bz    (everything on both)
 *   3_5  x->tx     y->bx     z->by       (2_1 extended: x on threads, the others on the grid)
 * Every other map is named by its signature, units outermost first separated by '|', e.g.
 * "tx+bx|ty" (the outer loop on threadIdx.x and blockIdx.x, the inner on threadIdx.y: an
 * interchange), prefixed by "cN:" when the map contains a collapse group of N loops. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/traces.h"
#include "traces/traces_internal.h"

#define FAIL(...)                                                                               \
  do {                                                                                          \
    if (err && errlen) snprintf(err, errlen, __VA_ARGS__);                                      \
    return -1;                                                                                  \
  } while (0)

int sp_traces_band_count(const sp_nest *nest) {
  int nb = 0;
  if (!nest || nest->nloops < 0 || nest->nloops > SP_MAX_LOOPS) return -1;
  while (nb < nest->nloops && nest->loops[nb].band) nb++;
  for (int k = nb; k < nest->nloops; k++)
    if (nest->loops[k].band) return -1;
  for (int k = 1; k < nb; k++)
    if (nest->loops[k].parent != k - 1) return -1;
  return nb;
}

int64_t sp_traces_const_trip(const sp_loop *l) {
  int64_t lo = l->lower.constant, hi = l->upper.constant, st = l->step;
  if (st > 0) return hi < lo ? 0 : (hi - lo) / st + 1;
  return hi > lo ? 0 : (lo - hi) / -st + 1;
}

void sp_traces_thread_coords(const int block[3], int tid, int64_t x[3]) {
  x[0] = tid % block[0];
  x[1] = (tid / block[0]) % block[1];
  x[2] = tid / (block[0] * block[1]);
}

int sp_schedule_check(const sp_nest *nest, const sp_schedule *s, const sp_arch *arch, char *err,
                      size_t errlen) {
  if (!nest || !s || !arch) FAIL("null argument");
  int nb = sp_traces_band_count(nest);
  if (nb < 0) FAIL("the nest's band loops are not a perfectly nested chain from loop 0");
  if (s->nband != nb) FAIL("schedule has %d band loops, the nest %d", s->nband, nb);
  for (int k = 0; k < nest->nloops; k++) {
    const sp_loop *l = &nest->loops[k];
    if (l->step == 0) FAIL("loop %d has step 0", k);
    if (k > 0 && (l->parent < 0 || l->parent >= k)) FAIL("loop %d has a bad parent", k);
    unsigned anc = 0;
    for (int p = k > 0 ? l->parent : -1; p >= 0; p = nest->loops[p].parent) anc |= 1u << p;
    for (int j = 0; j < SP_MAX_LOOPS; j++)
      if ((l->lower.coef[j] || l->upper.coef[j]) && !(anc & (1u << j)))
        FAIL("bounds of loop %d depend on loop %d, which does not enclose it", k, j);
  }
  if (nest->nrefs < 0 || (nest->nrefs > 0 && !nest->refs)) FAIL("bad reference list");
  for (int r = 0; r < nest->nrefs; r++) {
    const sp_ref *ref = &nest->refs[r];
    if (ref->array < 0 || ref->array >= nest->narrays) FAIL("reference %d: bad array", r);
    if (ref->size <= 0 || ref->size > UINT32_MAX) FAIL("reference %d: bad size", r);
    if (ref->nloops < nb || ref->nloops > nest->nloops)
      FAIL("reference %d is not inside the band", r);
    for (int k = 0; k < ref->nloops; k++) {
      int id = ref->loops[k];
      if (id < 0 || id >= nest->nloops) FAIL("reference %d: bad loop id", r);
      if (k < nb && id != k) FAIL("reference %d is not inside the band", r);
      if (k >= nb && nest->loops[id].parent != ref->loops[k - 1])
        FAIL("reference %d: loop list is not a nesting chain", r);
    }
    if (ref->nguards < 0 || (ref->nguards > 0 && !ref->guards)) FAIL("reference %d: bad guards", r);
    for (int g = 0; g < ref->nguards; g++)
      if (ref->guards[g].modulus < 0 || (ref->guards[g].modulus && ref->guards[g].cmp == SP_CMP_GE0))
        FAIL("reference %d: guard %d has a bad modulus", r, g);
    unsigned encl = 0;
    for (int k = 0; k < ref->nloops; k++) encl |= 1u << ref->loops[k];
    for (int j = 0; j < SP_MAX_LOOPS; j++) {
      bool uses = ref->offset.coef[j] != 0;
      for (int g = 0; g < ref->nguards; g++) uses |= ref->guards[g].expr.coef[j] != 0;
      if (uses && !(encl & (1u << j)))
        FAIL("reference %d uses loop %d, which does not enclose it", r, j);
    }
  }
  /* collapse group */
  if (s->collapse_count != 0) {
    if (s->collapse_count < 2 || s->collapse_first < 0 || s->collapse_first + s->collapse_count > nb)
      FAIL("bad collapse group %d+%d", s->collapse_first, s->collapse_count);
    for (int k = s->collapse_first; k < s->collapse_first + s->collapse_count; k++) {
      if (!nest->loops[k].parallel) FAIL("collapse group contains sequential loop %d", k);
      if (!sp_loop_bounds_const(&nest->loops[k]))
        FAIL("collapse group loop %d has non-constant bounds (only rectangular loops collapse)", k);
      if (k > s->collapse_first && (s->map[k].thread_dim != -1 || s->map[k].block_dim != -1))
        FAIL("loop %d is collapsed into loop %d but has its own mapping", k, s->collapse_first);
      if (k > s->collapse_first && nest->loops[k].imperfect)
        FAIL("loop %d is collapsed into loop %d but is not perfectly nested in it", k,
             s->collapse_first);
    }
  }
  unsigned tused = 0, bused = 0;
  for (int k = 0; k < nb; k++) {
    int t = s->map[k].thread_dim, b = s->map[k].block_dim;
    if (t < -1 || t > 2 || b < -1 || b > 2) FAIL("loop %d: dimension out of range", k);
    if ((t >= 0 || b >= 0) && !nest->loops[k].parallel)
      FAIL("loop %d is sequential but mapped to the hardware", k);
    if (b >= 0 && nest->loops[k].imperfect)
      FAIL("loop %d is not perfectly nested but mapped to a block dimension", k);
    if (t >= 0) {
      if (tused & (1u << t)) FAIL("thread dim %d used twice", t);
      tused |= 1u << t;
    }
    if (b >= 0) {
      if (bused & (1u << b)) FAIL("block dim %d used twice", b);
      bused |= 1u << b;
    }
  }
  for (int k = nb; k < SP_MAX_LOOPS; k++)
    if (s->map[k].thread_dim != -1 || s->map[k].block_dim != -1)
      if (k < nest->nloops) FAIL("loop %d is not in the band but is mapped", k);
  int64_t threads = 1;
  for (int d = 0; d < 3; d++) {
    if (s->block[d] < 1) FAIL("blockDim[%d] = %d", d, s->block[d]);
    if (s->block[d] > 1 && !(tused & (1u << d)))
      FAIL("blockDim[%d] = %d but no loop is on that thread dim", d, s->block[d]);
    threads *= s->block[d];
    if (threads > arch->max_threads_per_block)
      FAIL("block of %" PRId64 "+ threads exceeds %d", threads, arch->max_threads_per_block);
  }
  if (s->registers < 0) FAIL("registers = %d", s->registers);
  if (s->registers > 0 && sp_schedule_blocks_per_sm(arch, s) == 0)
    FAIL("a block of %" PRId64 " threads with %d registers each does not fit an SM's %d registers",
         threads, s->registers, arch->registers_per_sm);
  int64_t blocks = 1;
  for (int e = 0; e < 3; e++) {
    int64_t lim = e == 0 ? SP_GRID_X_MAX : SP_GRID_YZ_MAX;
    if (s->grid[e] < 1 || s->grid[e] > lim) FAIL("gridDim[%d] = %" PRId64 " out of range", e, s->grid[e]);
    if (s->grid[e] > 1 && !(bused & (1u << e)))
      FAIL("gridDim[%d] = %" PRId64 " but no loop is on that block dim", e, s->grid[e]);
    if (blocks > INT64_MAX / 4096 / s->grid[e]) FAIL("grid too large");
    blocks *= s->grid[e];
  }
  return 0;
}

/* ---- the space ---- */

typedef struct unit {
  int first, count; /* band loops first..first+count-1 (count > 1: a collapse group) */
  int64_t trip;     /* iterations (the maximum over outer indices) */
} unit;

static int64_t loop_trip(const sp_loop *l) { return l->trip_max > 0 ? l->trip_max : 0; }

static bool group_ok(const sp_nest *nest, int first, int count) {
  for (int k = first; k < first + count; k++)
    if (!nest->loops[k].parallel || !sp_loop_bounds_const(&nest->loops[k]) ||
        (k > first && nest->loops[k].imperfect))
      return false;
  return true;
}

/* Builds the units. user_collapse: honor the user's collapse(n) clause as one unit; returns false
 * when there is no such (legal) clause. sequential_imperfect: imperfect loops are no units (they
 * run sequentially in every thread, the statements around them in order). */
static bool build_units(const sp_nest *nest, int nb, bool user_collapse, bool sequential_imperfect,
                        unit *u, int *nu, int *cfirst, int *ccount) {
  int gf = -1, gc = 0;
  if (user_collapse) {
    for (int k = 0; k < nb; k++) {
      int c = nest->loops[k].clauses.collapse;
      if (c >= 2 && nest->loops[k].parallel) {
        if (k + c > nb) c = nb - k;
        if (c >= 2 && group_ok(nest, k, c)) gf = k, gc = c;
        break;
      }
    }
    if (gf < 0) return false;
  }
  int n = 0;
  for (int k = 0; k < nb; k++) {
    if (gf >= 0 && k == gf) {
      u[n++] = (unit){k, gc, 0};
      k += gc - 1;
    } else if (nest->loops[k].parallel && !(sequential_imperfect && nest->loops[k].imperfect)) {
      u[n++] = (unit){k, 1, 0};
    }
  }
  if (n > 3 && gf < 0) {
    /* collapse the outer n-2 units when they are adjacent rectangular loops */
    int m = n - 2;
    bool ok = u[0].first + m <= nb && group_ok(nest, u[0].first, m);
    for (int i = 1; ok && i < m; i++) ok = u[i].first == u[0].first + i;
    if (ok) {
      gf = u[0].first, gc = m;
      u[0] = (unit){gf, gc, 0};
      for (int i = 1; i < 3; i++) u[i] = u[i + m - 1];
      n = 3;
    }
  }
  if (n > 3) { /* keep the innermost 3 */
    for (int i = 0; i < 3; i++) u[i] = u[n - 3 + i];
    n = 3;
    if (gf >= 0 && u[0].first > gf) gf = -1, gc = 0;
  }
  for (int i = 0; i < n; i++) {
    int64_t t = 1;
    for (int k = u[i].first; k < u[i].first + u[i].count; k++) {
      int64_t lt = u[i].count > 1 ? sp_traces_const_trip(&nest->loops[k]) : loop_trip(&nest->loops[k]);
      t = (lt > 0 && t > INT64_MAX / lt) ? INT64_MAX : t * lt;
    }
    u[i].trip = t;
  }
  *nu = n;
  *cfirst = gf < 0 ? 0 : gf;
  *ccount = gf < 0 ? 0 : gc;
  return true;
}

static int push(sp_space *sp, const sp_schedule *s) {
  if (sp->n == sp->cap) {
    int nc = sp->cap ? sp->cap * 2 : 64;
    sp_schedule *ni = realloc(sp->items, (size_t)nc * sizeof *ni);
    if (!ni) return -1;
    sp->items = ni;
    sp->cap = nc;
  }
  sp->items[sp->n++] = *s;
  return 0;
}

bool sp_schedule_collapsed_away(const sp_schedule *s, int k) {
  return s->collapse_count >= 2 && k > s->collapse_first &&
         k < s->collapse_first + s->collapse_count;
}

bool sp_schedule_dims_shared(const sp_schedule *s) {
  unsigned tdims = 0, bdims = 0;
  for (int k = 0; k < s->nband; k++) {
    int t = s->map[k].thread_dim, d = s->map[k].block_dim;
    if ((t >= 0 && (tdims >> t & 1)) || (d >= 0 && (bdims >> d & 1))) return true;
    if (t >= 0) tdims |= 1u << t;
    if (d >= 0) bdims |= 1u << d;
  }
  return false;
}

bool sp_schedule_equal(const sp_schedule *a, const sp_schedule *b) {
  if (a->nband != b->nband || a->collapse_first != b->collapse_first ||
      a->collapse_count != b->collapse_count || a->registers != b->registers)
    return false;
  for (int k = 0; k < a->nband; k++)
    if (a->map[k].thread_dim != b->map[k].thread_dim || a->map[k].block_dim != b->map[k].block_dim)
      return false;
  for (int d = 0; d < 3; d++)
    if (a->block[d] != b->block[d] || a->grid[d] != b->grid[d]) return false;
  return true;
}

/* Loop k's mapping without the hardware dimensions of extent 1: blockIdx.e is 0 when gridDim.e
 * is 1, threadIdx.d is 0 when blockDim.d is 1, and either then adds 0 to the loop's start and a
 * factor 1 to its stride (traces.h), so each thread runs the same iterations in the same order. */
static sp_loop_map effective_map(const sp_schedule *s, int k) {
  sp_loop_map m = s->map[k];
  if (m.thread_dim >= 0 && s->block[m.thread_dim] == 1) m.thread_dim = -1;
  if (m.block_dim >= 0 && s->grid[m.block_dim] == 1) m.block_dim = -1;
  return m;
}

static int trivial_dims(const sp_schedule *s) {
  int n = 0;
  for (int k = 0; k < s->nband; k++) {
    sp_loop_map e = effective_map(s, k);
    n += (e.thread_dim != s->map[k].thread_dim) + (e.block_dim != s->map[k].block_dim);
  }
  return n;
}

bool sp_schedule_same_trace(const sp_schedule *a, const sp_schedule *b) {
  if (a->nband != b->nband || a->collapse_first != b->collapse_first ||
      a->collapse_count != b->collapse_count || a->registers != b->registers)
    return false;
  for (int d = 0; d < 3; d++)
    if (a->block[d] != b->block[d] || a->grid[d] != b->grid[d]) return false;
  for (int k = 0; k < a->nband; k++) {
    sp_loop_map x = effective_map(a, k), y = effective_map(b, k);
    if (x.thread_dim != y.thread_dim || x.block_dim != y.block_dim) return false;
  }
  return true;
}

int sp_schedule_blocks_per_sm(const sp_arch *arch, const sp_schedule *s) {
  return sp_arch_active_blocks_per_sm(arch, s->block[0] * s->block[1] * s->block[2], s->registers, 0);
}

static const char DIMC[3] = {'x', 'y', 'z'};

static void name_schedule(sp_schedule *s, const unit *u, int n, const int *t, const int *b) {
  /* t[], b[]: per unit, outermost first */
  static const struct {
    int n;
    int t[3], b[3]; /* outermost first */
    const char *name;
  } pat[] = {
      {2, {-1, 0}, {0, -1}, "2_1"},         {2, {-1, 0}, {1, 0}, "2_2"},
      {2, {1, 0}, {1, 0}, "2_3"},           {3, {-1, 1, 0}, {0, -1, -1}, "3_1"},
      {3, {-1, -1, 0}, {2, 1, 0}, "3_2"},   {3, {-1, 1, 0}, {2, 1, 0}, "3_3"},
      {3, {2, 1, 0}, {2, 1, 0}, "3_4"},     {3, {-1, -1, 0}, {1, 0, -1}, "3_5"},
  };
  bool collapsed = false;
  for (int i = 0; i < n; i++) collapsed |= u[i].count > 1;
  if (!collapsed) {
    for (size_t p = 0; p < sizeof pat / sizeof pat[0]; p++) {
      if (pat[p].n != n) continue;
      bool eq = true;
      for (int i = 0; i < n; i++) eq &= pat[p].t[i] == t[i] && pat[p].b[i] == b[i];
      if (eq) {
        snprintf(s->name, sizeof s->name, "%s", pat[p].name);
        return;
      }
    }
  }
  size_t len = 0;
  s->name[0] = 0;
  for (int i = 0; i < n; i++) {
    char part[16];
    int pl = 0;
    if (u[i].count > 1) pl += snprintf(part + pl, sizeof part - (size_t)pl, "c%d:", u[i].count);
    if (t[i] >= 0) pl += snprintf(part + pl, sizeof part - (size_t)pl, "t%c", DIMC[t[i]]);
    if (b[i] >= 0)
      pl += snprintf(part + pl, sizeof part - (size_t)pl, "%sb%c", t[i] >= 0 ? "+" : "", DIMC[b[i]]);
    if (t[i] < 0 && b[i] < 0) pl += snprintf(part + pl, sizeof part - (size_t)pl, "seq");
    len += (size_t)snprintf(s->name + len, len < sizeof s->name ? sizeof s->name - len : 0, "%s%s",
                            i ? "|" : "", part);
    if (len >= sizeof s->name) break;
  }
}

/* The OpenACC clause form (GCC's mapping: gang = blockIdx.x, worker = threadIdx.y, vector =
 * threadIdx.x). */
static void openacc_text(sp_schedule *s, const sp_nest *nest, const unit *u, int n, const int *t,
                         const int *b) {
  bool ok = true;
  int gpos = -1, wpos = -1, vpos = -1;
  for (int i = 0; i < n; i++) {
    if (b[i] == 0) gpos = i;
    if (b[i] > 0 || t[i] == 2) ok = false;
    if (t[i] == 1) wpos = i;
    if (t[i] == 0) vpos = i;
  }
  /* gang outside (or on) worker outside (or on) vector */
  if (gpos >= 0 && wpos >= 0 && gpos > wpos) ok = false;
  if (gpos >= 0 && vpos >= 0 && gpos > vpos) ok = false;
  if (wpos >= 0 && vpos >= 0 && wpos > vpos) ok = false;
  s->openacc_expressible = ok;
  char buf[512];
  size_t len = 0;
#define APP(...)                                                                                \
  do {                                                                                          \
    if (len < sizeof buf) len += (size_t)snprintf(buf + len, sizeof buf - len, __VA_ARGS__);    \
  } while (0)
  if (!ok) APP("not expressible: ");
  int ui = 0;
  bool any_gang = false;
  for (int k = 0; k < s->nband; k++) {
    const sp_loop *l = &nest->loops[k];
    const char *nm = l->index ? l->index : "?";
    if (ui < n && u[ui].first == k) {
      APP("%s%s:", len && buf[len - 1] != ' ' ? "  " : "", nm);
      if (u[ui].count > 1) APP(" collapse(%d)", u[ui].count);
      if (b[ui] >= 0) any_gang = true;
      if (b[ui] == 0) APP(" gang");
      if (b[ui] > 0) APP(" gang(dim:%d)", b[ui] + 1);
      if (t[ui] == 2) APP(" tz(%d)", s->block[2]);
      if (t[ui] == 1) APP(" worker(%d)", s->block[1]);
      if (t[ui] == 0) APP(" vector(%d)", s->block[0]);
      if (t[ui] < 0 && b[ui] < 0) APP(" seq");
      k += u[ui].count - 1;
      ui++;
    } else if (l->parallel) {
      APP("%s%s: seq", len && buf[len - 1] != ' ' ? "  " : "", nm);
    }
  }
  if (any_gang) APP("  num_gangs(%" PRId64 ")", s->grid[0] * s->grid[1] * s->grid[2]);
#undef APP
  /* truncated to the field (the clause text of up to 3 loops fits) */
  size_t cp = strlen(buf) < sizeof s->openacc ? strlen(buf) : sizeof s->openacc - 1;
  memcpy(s->openacc, buf, cp);
  s->openacc[cp] = 0;
}

static void fill_schedule(sp_schedule *s, const sp_nest *nest, int nb, const unit *u, int n,
                          const int *t, const int *b, int cfirst, int ccount, const int *blk,
                          const int64_t *grid) {
  memset(s, 0, sizeof *s);
  s->nband = nb;
  for (int k = 0; k < SP_MAX_LOOPS; k++) s->map[k].thread_dim = s->map[k].block_dim = -1;
  for (int i = 0; i < n; i++) s->map[u[i].first] = (sp_loop_map){t[i], b[i]};
  s->collapse_first = cfirst;
  s->collapse_count = ccount;
  for (int d = 0; d < 3; d++) s->block[d] = blk[d], s->grid[d] = grid[d];
  name_schedule(s, u, n, t, b);
  openacc_text(s, nest, u, n, t, b);
}

static const int DEF_BLOCKS1[][3] = {{32, 1, 1},  {64, 1, 1},  {128, 1, 1},
                                     {256, 1, 1}, {512, 1, 1}, {1024, 1, 1}};
static const int DEF_BLOCKS2[][3] = {{32, 4, 1},  {32, 8, 1}, {32, 16, 1},
                                     {64, 4, 1},  {16, 16, 1}, {8, 32, 1}};
static const int64_t DEF_CAPS[] = {1, 2, 4, 8};
/* three units have 186 maps: fewer launch configurations each keeps the space near 1000 */
static const int DEF3_BLOCKS1[][3] = {{32, 1, 1}, {128, 1, 1}, {256, 1, 1}};
static const int DEF3_BLOCKS2[][3] = {{32, 4, 1}, {32, 8, 1}, {16, 16, 1}};
static const int DEF3_BLOCKS3[][3] = {{32, 4, 2}, {8, 8, 4}};
static const int64_t DEF3_CAPS[] = {2, 8};
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int64_t ceil_div(int64_t a, int64_t b) { return a <= 0 ? 1 : (a + b - 1) / b; }

/* The launch configurations of one map: block shapes x grids (covering, capped). */
static int add_launches(sp_space *sp, const sp_nest *nest, const sp_arch *arch,
                        const sp_space_options *opt, int nb, const unit *u, int n, const int *t,
                        const int *b, int cfirst, int ccount) {
  int kt = 0, kb = 0;
  for (int i = 0; i < n; i++) {
    if (t[i] >= 0) kt++;
    if (b[i] >= 0) kb++;
  }
  const int(*shapes)[3];
  int nshapes;
  if (opt && opt->blocks) {
    shapes = opt->blocks, nshapes = opt->nblocks;
  } else if (kt == 1) {
    shapes = n == 3 ? DEF3_BLOCKS1 : DEF_BLOCKS1, nshapes = n == 3 ? NELEM(DEF3_BLOCKS1) : NELEM(DEF_BLOCKS1);
  } else if (kt == 2) {
    shapes = n == 3 ? DEF3_BLOCKS2 : DEF_BLOCKS2, nshapes = n == 3 ? NELEM(DEF3_BLOCKS2) : NELEM(DEF_BLOCKS2);
  } else {
    shapes = DEF3_BLOCKS3, nshapes = NELEM(DEF3_BLOCKS3);
  }
  const int64_t *caps = opt && opt->gang_caps ? opt->gang_caps : n == 3 ? DEF3_CAPS : DEF_CAPS;
  int ncaps = opt && opt->gang_caps ? opt->ngang_caps : n == 3 ? NELEM(DEF3_CAPS) : NELEM(DEF_CAPS);
  for (int si = 0; si < nshapes; si++) {
    const int *blk = shapes[si];
    int rank = 0;
    int64_t prod = 1;
    bool bad = false;
    for (int d = 0; d < 3; d++) {
      if (blk[d] < 1) bad = true;
      if (blk[d] > 1) rank = d + 1;
      prod *= blk[d] > 0 ? blk[d] : 1;
    }
    if (bad || rank != kt || prod > arch->max_threads_per_block) continue;
    int64_t cover[3] = {1, 1, 1};
    for (int i = 0; i < n; i++) {
      if (b[i] < 0) continue;
      int64_t c = t[i] >= 0 ? ceil_div(u[i].trip, blk[t[i]]) : (u[i].trip > 0 ? u[i].trip : 1);
      int64_t lim = b[i] == 0 ? SP_GRID_X_MAX : SP_GRID_YZ_MAX;
      cover[b[i]] = c > lim ? lim : c;
    }
    int64_t grids[1 + 16][3];
    int ng = 0;
    memcpy(grids[ng++], cover, sizeof cover);
    double total = (double)cover[0] * (double)cover[1] * (double)cover[2];
    for (int ci = 0; kb > 0 && ci < ncaps && ng < 17; ci++) {
      if (caps[ci] < 1) continue;
      int64_t g = opt && opt->gang_caps && opt->gang_caps_absolute ? caps[ci]
                                                                   : caps[ci] * arch->sm_count;
      if ((double)g >= total) continue; /* the covering grid already fits */
      int64_t gr[3] = {1, 1, 1}, rem = g;
      for (int e = 0; e < kb; e++) {
        gr[e] = cover[e] < rem ? cover[e] : rem;
        rem = rem / gr[e];
        if (rem < 1) rem = 1;
      }
      bool dup = false;
      for (int j = 0; j < ng; j++)
        dup |= grids[j][0] == gr[0] && grids[j][1] == gr[1] && grids[j][2] == gr[2];
      if (!dup) memcpy(grids[ng++], gr, sizeof gr);
    }
    for (int gi = 0; gi < ng; gi++) {
      sp_schedule s;
      fill_schedule(&s, nest, nb, u, n, t, b, cfirst, ccount, blk, grids[gi]);
      if (push(sp, &s)) return -1;
    }
  }
  return 0;
}

/* Enumerates the maps of n units (see the comment at the top). */
static int add_maps(sp_space *sp, const sp_nest *nest, const sp_arch *arch,
                    const sp_space_options *opt, int nb, const unit *u, int n, int cfirst,
                    int ccount) {
  bool interchange = opt ? opt->allow_interchange : true;
  int ncodes = 1;
  for (int i = 0; i < n; i++) ncodes *= 4;
  /* thread assignments outer loop, so maps with the same threads are adjacent */
  for (int tc = 0; tc < ncodes; tc++) {
    for (int bc = 0; bc < ncodes; bc++) {
      int t[3], b[3];
      unsigned tu = 0, bu = 0;
      bool ok = true;
      for (int i = 0, x = tc, y = bc; i < n; i++, x /= 4, y /= 4) {
        /* digit order: innermost unit varies fastest, thread x listed first */
        t[n - 1 - i] = x % 4 - 1;
        b[n - 1 - i] = y % 4 - 1;
      }
      for (int i = 0; i < n; i++) {
        if (t[i] < 0 && b[i] < 0) ok = false;
        if (b[i] >= 0 && nest->loops[u[i].first].imperfect) ok = false;
        if (t[i] >= 0) ok &= !(tu & (1u << t[i])), tu |= 1u << t[i];
        if (b[i] >= 0) ok &= !(bu & (1u << b[i])), bu |= 1u << b[i];
      }
      if (!ok || tu == 0) continue;
      if ((tu & (tu + 1)) != 0 || (bu & (bu + 1)) != 0) continue; /* prefixes only */
      if (!interchange && t[n - 1] != 0) continue;
      if (add_launches(sp, nest, arch, opt, nb, u, n, t, b, cfirst, ccount)) return -1;
    }
  }
  return 0;
}

/* The compiler default: outermost unit gang (blockIdx.x, covering grid), innermost unit
 * vector(128) (threadIdx.x); a single unit gets both; middle units run sequentially. An
 * imperfect loop, which takes no gang, is vector alone in one gang. */
static void default_schedule(sp_schedule *s, const sp_nest *nest, int nb, const unit *u, int n,
                             int cfirst, int ccount) {
  int t[3] = {-1, -1, -1}, b[3] = {-1, -1, -1};
  int blk[3] = {128, 1, 1};
  int64_t grid[3] = {1, 1, 1};
  t[n - 1] = 0;
  if (!nest->loops[u[0].first].imperfect) {
    b[0] = 0;
    int64_t g = n == 1 ? ceil_div(u[0].trip, 128) : (u[0].trip > 0 ? u[0].trip : 1);
    grid[0] = g > SP_GRID_X_MAX ? SP_GRID_X_MAX : g;
  }
  fill_schedule(s, nest, nb, u, n, t, b, cfirst, ccount, blk, grid);
  s->compiler_default = true;
}

/* ---- GCC's own default (--compiler gcc) ------------------------------------------------------
 * GCC 12 partitions the OpenACC loops of a nest as gcc/omp-offload.cc does:
 * oacc_loop_fixed_partitions keeps the user's gang/worker/vector; oacc_loop_auto_partitions gives
 * every independent loop with no level (a bare `loop`, or `parallel loop`, in a parallel region)
 * one: the outermost such loop takes the outermost free level other than vector, the innermost
 * takes vector, and a loop above a partitioned inner one also takes the level just outside the
 * outermost level used inside it (so a bare 2-deep nest is "gang worker" + "vector", as
 * -fopt-info-omp reports). In a kernels region (GCC 12 without
 * --param=openacc-kernels=decompose) a loop's levels hold only with `independent`; without any,
 * GCC's parloops gives the outermost loop gang only, with one lane a gang, or the region runs on
 * one thread (gcc_partition).
 * libgomp's nvptx plugin (libgomp/plugin/plugin-nvptx.c, nvptx_exec) then sizes what the
 * compiler left open: vector 32 unless vector_length; with cuOccupancyMaxPotentialBlockSize
 * limited to num_workers x vector when both are known, workers = block / vector (at most 15 when
 * vector > 32) and gangs = 2 x minimum grid x block / 32. Without --registers we assume no
 * register or shared-memory limit, so the block is the largest allowed: on an H100 16,896 gangs
 * of 32 workers x 32 lanes, what GOMP_DEBUG printed for a bare 2-deep nest
 * (validation/results/h100/gcc-openacc/). Other kernels there launched 10,560 x 20 x 32, what the
 * occupancy API gives for 41-48 registers a thread (occupancy_block). */
enum { GWV_G = 1, GWV_W = 2, GWV_V = 4, GWV_MAX = 8 };

typedef struct gcc_part {
  const sp_nest *nest;
  bool oacc[SP_MAX_LOOPS]; /* has a loop directive (collapsed loops belong to their head) */
  int parent[SP_MAX_LOOPS]; /* nearest enclosing OpenACC loop, -1 */
  bool assign[SP_MAX_LOOPS], tiling[SP_MAX_LOOPS];
  /* levels of the loop; e_mask: of a tiled loop's element loop (GCC splits tile(...) into tile
   * loops and element loops); the model puts those on the innermost loop the tile covers */
  unsigned mask[SP_MAX_LOOPS], e_mask[SP_MAX_LOOPS], inner[SP_MAX_LOOPS];
} gcc_part;

static unsigned gcc_auto(gcc_part *g, int k, unsigned outer_mask, bool outer_assign) {
  bool assign = g->assign[k], tiling = g->tiling[k];
  if (assign && (!outer_assign || g->inner[k])) {
    unsigned m = GWV_G;
    while (m <= outer_mask) m <<= 1;
    if (tiling && !(g->mask[k] | g->e_mask[k])) m |= m << 1; /* two axes when tiling */
    m &= (GWV_G | GWV_W) & ~g->inner[k];
    if (tiling && !g->e_mask[k]) { /* the inner of two axes goes to the element loop */
      g->e_mask[k] = m & (m << 1);
      m ^= g->e_mask[k];
    }
    g->mask[k] |= m;
  }
  bool kids = false;
  unsigned inner = 0;
  for (int c = k + 1; c < g->nest->nloops; c++)
    if (g->oacc[c] && g->parent[c] == k) {
      kids = true;
      inner |= gcc_auto(g, c, outer_mask | g->mask[k] | g->e_mask[k], outer_assign || assign);
    }
  if (kids) g->inner[k] = inner;
  if (assign && (!g->mask[k] || (tiling && !g->e_mask[k]) || !outer_assign)) {
    unsigned used = g->inner[k] | GWV_MAX;
    unsigned m = ((used & (~used + 1u)) >> 1) & ~outer_mask;
    if (tiling) {
      m &= ~(g->e_mask[k] | g->mask[k]);
      unsigned tile_m = (m >> 1) & ~(outer_mask | g->e_mask[k] | g->mask[k]);
      if (tile_m || g->mask[k]) {
        g->e_mask[k] |= m;
        m = tile_m;
      }
    }
    g->mask[k] |= m;
  }
  return g->inner[k] | g->mask[k] | g->e_mask[k];
}

static void gcc_partition(const sp_nest *nest, gcc_part *g) {
  memset(g, 0, sizeof *g);
  g->nest = nest;
  bool parallel = nest->construct == SP_CONSTRUCT_ACC_PARALLEL;
  unsigned all = 0;
  for (int k = 0; k < nest->nloops; k++) {
    const sp_loop *l = &nest->loops[k];
    unsigned f = l->clauses.flags;
    int p = l->parent;
    while (p >= 0 && !g->oacc[p]) p = nest->loops[p].parent;
    g->parent[k] = p;
    g->oacc[k] = l->clauses.directive && l->collapsed_into < 0;
    if (!g->oacc[k] || (f & SP_CL_SEQ)) continue;
    g->tiling[k] = l->clauses.ntile > 0;
    unsigned m = (f & SP_CL_GANG ? GWV_G : 0u) | (f & SP_CL_WORKER ? GWV_W : 0u) |
                 (f & SP_CL_VECTOR ? GWV_V : 0u);
    if (!parallel && !(f & SP_CL_INDEPENDENT)) m = 0; /* kernels: an 'auto' loop's levels */
    g->assign[k] = (!m || (g->tiling[k] && m == (m & (~m + 1u)))) &&
                   ((f & SP_CL_INDEPENDENT) || (parallel && !(f & SP_CL_AUTO)));
    if (g->tiling[k] && m) { /* vector to the element loop, failing that worker */
      unsigned e = m & GWV_V;
      if (!e || (m & GWV_G)) e |= m & GWV_W;
      g->e_mask[k] = e;
      m ^= e;
    }
    g->mask[k] = m;
    for (int a = p; a >= 0; a = g->parent[a]) g->inner[a] |= g->mask[k] | g->e_mask[k];
    all |= g->mask[k] | g->e_mask[k];
  }
  for (int k = 0; k < nest->nloops; k++)
    if (g->oacc[k] && g->parent[k] < 0) all |= gcc_auto(g, k, 0, false);
  /* GCC's parloops: the outer loop of a region that holds the nest alone, where it proves the
   * loop independent. The model's dependence test stands in for GCC's on rectangular nests only:
   * on the H200 GCC put a transpose's outer loop on gangs but ran the triangular symmetric
   * update cov[i][j], cov[j][i] (j >= i), which the test proves, on one thread
   * (validation/results/h200/gcc-openacc/2026-12-02-kernels-baseline/). */
  if (!all && nest->construct == SP_CONSTRUCT_ACC_KERNELS && nest->nloops > 0 &&
      nest->loops[0].parallel && nest->construct_sole_loop && sp_nest_rectangular(nest))
    g->mask[0] = GWV_G;
  /* the element levels of a tile go to the innermost loop it covers */
  for (int k = 0; k < nest->nloops; k++) {
    if (!g->e_mask[k]) continue;
    int last = k;
    for (int j = k + 1; j < nest->nloops; j++)
      if (nest->loops[j].collapsed_into == k) last = j;
    if (last != k) {
      g->mask[last] |= g->e_mask[k];
      g->e_mask[k] = 0;
    } else {
      g->mask[k] |= g->e_mask[k];
    }
  }
}

static int64_t first_given(int64_t construct, int64_t loop) {
  return construct > 0 ? construct : loop > 0 ? loop : 0;
}

/* cuOccupancyMaxPotentialBlockSize as libgomp calls it (no shared memory): of the block sizes
 * from limit (0: the arch's maximum) down in steps of a warp, the one whose blocks an SM holds
 * the most threads of, the larger on ties; regs as sp_arch_active_blocks_per_sm. */
static int occupancy_block(const sp_arch *arch, int limit, int regs) {
  int lim = limit > 0 && limit < arch->max_threads_per_block ? limit : arch->max_threads_per_block;
  int best = lim, best_threads = 0;
  for (int aligned = (lim + SP_WARP - 1) / SP_WARP * SP_WARP; aligned > 0; aligned -= SP_WARP) {
    int size = aligned < lim ? aligned : lim;
    int threads = sp_arch_active_blocks_per_sm(arch, size, regs, 0) * size;
    if (threads > best_threads) best = size, best_threads = threads;
    if (threads >= arch->max_threads_per_sm) break;
  }
  return best;
}

/* The launch dims GCC + libgomp use: gangs, workers, vector (1 for a level no loop uses). libgomp
 * (plugin-nvptx.c, nvptx_exec) asks the occupancy API for a block of at most num_workers x
 * vector (no limit when workers are left to it) with the kernel's registers (regs, 0: unknown),
 * and sizes workers and gangs from that block; the launch is workers x vector. */
static void gcc_dims(const sp_nest *nest, const gcc_part *g, const sp_arch *arch, int regs,
                     int64_t *gangs, int *workers, int *vector) {
  unsigned used = 0;
  for (int k = 0; k < nest->nloops; k++) used |= g->mask[k];
  const sp_clauses *c = &nest->construct_clauses, *l0 = &nest->loops[0].clauses;
  int64_t ng = first_given(c->num_gangs, l0->num_gangs);
  int64_t nw = first_given(c->num_workers, l0->num_workers);
  int64_t vl = first_given(c->vector_length, l0->vector_length);
  int v = 1, w = 1;
  if (used & GWV_V) /* GCC replaces a length it cannot use by 32 (with a warning) */
    v = vl > 0 && vl % SP_WARP == 0 && vl <= arch->max_threads_per_block ? (int)vl : SP_WARP;
  bool w_runtime = (used & GWV_W) && nw <= 0;
  if ((used & GWV_W) && nw > 0) w = nw > arch->max_threads_per_block ? arch->max_threads_per_block : (int)nw;
  int block = occupancy_block(arch, w_runtime ? 0 : w * v, regs);
  if (w_runtime) {
    w = block / v > 0 ? block / v : 1;
    if (v > SP_WARP && w > 15) w = 15; /* one barrier per worker, 15 available */
  }
  *gangs = 1;
  if ((used & GWV_G) && ng > 0) {
    *gangs = ng;
  } else if (used & GWV_G) {
    int per_sm = sp_arch_active_blocks_per_sm(arch, block, regs, 0);
    if (per_sm < 1) per_sm = 1;
    int64_t warps = block / SP_WARP > 0 ? block / SP_WARP : 1;
    *gangs = 2 * (int64_t)arch->sm_count * per_sm * warps;
  }
  *workers = w;
  *vector = v;
}

/* GCC's schedule of the nest as written, on the units u (see build_units); false when the
 * model cannot hold it: a level on a loop the model does not map (a vector loop below statements,
 * outside the band), or a block larger than the GPU allows (GCC stops at run time). */
static bool gcc_default_schedule(sp_schedule *s, const sp_nest *nest, const sp_arch *arch, int regs,
                                 int nb, const unit *u, int n, int cfirst, int ccount) {
  gcc_part g;
  gcc_partition(nest, &g);
  int64_t gangs;
  int w, v;
  gcc_dims(nest, &g, arch, regs, &gangs, &w, &v);
  int t[3] = {-1, -1, -1}, b[3] = {-1, -1, -1};
  int blk[3] = {1, 1, 1};
  int64_t grid[3] = {1, 1, 1};
  for (int k = 0; k < nest->nloops; k++) {
    bool head = false;
    for (int i = 0; i < n; i++) head |= u[i].first == k;
    if (g.mask[k] && !head) return false;
  }
  for (int i = 0; i < n; i++) {
    unsigned m = g.mask[u[i].first];
    if (m & GWV_G) b[i] = 0, grid[0] = gangs > SP_GRID_X_MAX ? SP_GRID_X_MAX : gangs;
    if (m & GWV_V) t[i] = 0, blk[0] = m & GWV_W ? w * v : v; /* worker and vector: one index */
    else if (m & GWV_W) t[i] = 1, blk[1] = w;
  }
  if ((int64_t)blk[0] * blk[1] > arch->max_threads_per_block) return false;
  fill_schedule(s, nest, nb, u, n, t, b, cfirst, ccount, blk, grid);
  snprintf(s->name, sizeof s->name, "gcc-default");
  /* what GCC assigns, every OpenACC loop of the nest, and the dims libgomp launches */
  size_t len = 0;
  s->openacc[0] = 0;
  for (int k = 0; k < nest->nloops && len < sizeof s->openacc; k++) {
    if (!g.oacc[k]) continue;
    unsigned m = g.mask[k];
    len += (size_t)snprintf(s->openacc + len, sizeof s->openacc - len, "%s%s:%s%s%s%s",
                            len ? "  " : "", nest->loops[k].index ? nest->loops[k].index : "?",
                            m & GWV_G ? " gang" : "", m & GWV_W ? " worker" : "",
                            m & GWV_V ? " vector" : "", m ? "" : " seq");
  }
  if (len < sizeof s->openacc)
    snprintf(s->openacc + len, sizeof s->openacc - len,
             "  num_gangs(%" PRId64 ") num_workers(%d) vector_length(%d)", gangs, w, v);
  s->openacc_expressible = true;
  return true;
}

static int find_or_push(sp_space *sp, sp_schedule *s) {
  for (int i = 0; i < sp->n; i++)
    if (sp_schedule_same_trace(&sp->items[i], s)) return i;
  return push(sp, s) ? -2 : sp->n - 1;
}

int sp_space_build(const sp_nest *nest, const sp_arch *arch, const sp_space_options *opt,
                   sp_space *out, char *err, size_t errlen) {
  if (!nest || !arch || !out) FAIL("null argument");
  memset(out, 0, sizeof *out);
  out->default_index = out->default_gcc = out->default_nvc = -1;
  int nb = sp_traces_band_count(nest);
  if (nb < 0) FAIL("the nest's band loops are not a perfectly nested chain from loop 0");
  if (opt && opt->blocks && opt->nblocks < 0) FAIL("bad block list");
  if (opt && opt->gang_caps && opt->ngang_caps < 0) FAIL("bad gang caps");
  unit u[SP_MAX_LOOPS], uc[SP_MAX_LOOPS];
  int n = 0, nc = 0, cf = 0, cc = 0, cf2 = 0, cc2 = 0;
  const int regs = opt ? opt->registers : 0;
  build_units(nest, nb, false, false, u, &n, &cf, &cc);
  if (n == 0) FAIL("the nest has no parallel band loop to map");
  bool has_user_collapse = build_units(nest, nb, true, false, uc, &nc, &cf2, &cc2);
  if (add_maps(out, nest, arch, opt, nb, u, n, cf, cc)) goto oom;
  if (has_user_collapse && nc < n && add_maps(out, nest, arch, opt, nb, uc, nc, cf2, cc2)) goto oom;
  /* with the imperfect loops sequential: what the nest ran as when only perfectly nested loops
   * were mapped (a gang and vector loop around a sequential inner one) */
  bool imperfect = false;
  for (int k = 0; k < nb; k++) imperfect |= nest->loops[k].imperfect;
  unit us[SP_MAX_LOOPS];
  int ns = 0, cf3 = 0, cc3 = 0;
  if (imperfect) build_units(nest, nb, false, true, us, &ns, &cf3, &cc3);
  if (ns > 0 && add_maps(out, nest, arch, opt, nb, us, ns, cf3, cc3)) goto oom;
  /* One candidate per trace. Clamped grids coincide, and a capped grid of g blocks is (g, 1, 1),
   * so a loop on tx+by then runs as on tx alone: a quarter of a 2-D space and a third of a 3-D
   * one were simulated twice. Kept: the first that OpenACC can state, then the one with the
   * fewest dimensions of extent 1 (the plainer description), then the first; it takes the
   * place of the first of its class. */
  int w = 0;
  for (int i = 0; i < out->n; i++) {
    const sp_schedule *c = &out->items[i];
    int j = 0;
    while (j < w && !sp_schedule_same_trace(&out->items[j], c)) j++;
    if (j == w) {
      out->items[w++] = *c;
      continue;
    }
    const sp_schedule *k = &out->items[j];
    if (c->openacc_expressible != k->openacc_expressible ? c->openacc_expressible
                                                          : trivial_dims(c) < trivial_dims(k))
      out->items[j] = *c;
  }
  out->n = w;
  sp_schedule def;
  bool collapse_units = has_user_collapse && nc < n;
  if (collapse_units)
    default_schedule(&def, nest, nb, uc, nc, cf2, cc2);
  else
    default_schedule(&def, nest, nb, u, n, cf, cc);
  snprintf(def.name, sizeof def.name, "default");
  int dn = find_or_push(out, &def), dg = dn;
  /* GCC's own baseline for OpenACC nests with a loop directive (the nests the analyzer finds;
   * hand-built ones without directives keep the one baseline) */
  bool acc = nest->construct == SP_CONSTRUCT_ACC_PARALLEL ||
             nest->construct == SP_CONSTRUCT_ACC_KERNELS || nest->construct == SP_CONSTRUCT_ACC_SERIAL;
  bool directive = false;
  for (int k = 0; k < nest->nloops; k++) directive |= nest->loops[k].clauses.directive != NULL;
  directive |= nest->construct == SP_CONSTRUCT_ACC_KERNELS && nest->construct_clauses.directive;
  acc &= directive;
  if (dn >= 0 && acc &&
      (collapse_units ? gcc_default_schedule(&def, nest, arch, regs, nb, uc, nc, cf2, cc2)
                      : gcc_default_schedule(&def, nest, arch, regs, nb, u, n, cf, cc))) {
    dg = find_or_push(out, &def);
    if (dg >= 0) { /* already in the space (this trace): it is what GCC does, so named */
      out->items[dg] = def;
      out->items[dg].openacc_expressible = true;
    }
  }
  if (dn < -1 || dg < -1) goto oom;
  /* keep only what the checker accepts (a user block list may hold impossible shapes) */
  out->default_nvc = out->default_gcc = -1;
  w = 0;
  for (int i = 0; i < out->n; i++) {
    out->items[i].registers = regs;
    if (sp_schedule_check(nest, &out->items[i], arch, NULL, 0) == 0) {
      if (i == dn) out->default_nvc = w;
      if (i == dg) out->default_gcc = w;
      out->items[w] = out->items[i];
      out->items[w++].compiler_default = false;
    }
  }
  if (out->default_gcc < 0) out->default_gcc = out->default_nvc;
  out->default_index = opt && opt->gcc_default ? out->default_gcc : out->default_nvc;
  if (out->default_index >= 0) out->items[out->default_index].compiler_default = true;
  out->n = w;
  if (out->n == 0) {
    sp_space_free(out);
    FAIL("no legal schedule (check the block list and the nest)");
  }
  return 0;
oom:
  sp_space_free(out);
  FAIL("out of memory");
}

void sp_space_free(sp_space *s) {
  if (!s) return;
  free(s->items);
  s->items = NULL;
  s->n = s->cap = 0;
  s->default_index = s->default_gcc = s->default_nvc = -1;
}
