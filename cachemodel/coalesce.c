/* Coalescer: one warp instruction -> one request and its distinct sectors and lines. */
#include "schedpredict/cachemodel.h"

#include <stdlib.h>
#include <string.h>

static int log2_exact(uint32_t v, unsigned *out)
{
  if (v == 0 || (v & (v - 1)) != 0) return -1;
  unsigned s = 0;
  while ((UINT32_C(1) << s) != v) s++;
  *out = s;
  return 0;
}

int sp_cm_coalescer_init(sp_cm_coalescer *c, uint32_t sector_bytes, uint32_t line_bytes)
{
  unsigned ss, ls;
  if (!c || log2_exact(sector_bytes, &ss) != 0 || log2_exact(line_bytes, &ls) != 0) return -1;
  /* >= 16 keeps every access of <= 16 bytes within at most two sectors (SP_CM_MAX_UNITS). */
  if (sector_bytes < 16 || line_bytes < sector_bytes) return -1;
  c->sector_bytes = sector_bytes;
  c->line_bytes = line_bytes;
  c->sector_shift = ss;
  c->sectors_per_line_shift = ls - ss;
  return 0;
}

/* Scattered lanes whose units span fewer than this many units are sorted and deduplicated
 * through a bitmap (one pass to set, one to read); wider spreads use insertion sort. */
enum { BITMAP_SPAN = 4096 };

static uint32_t sort_unique_bitmap(const uint64_t *u, uint32_t n, uint64_t lo, uint64_t *out)
{
  uint64_t bits[BITMAP_SPAN / 64] = {0};
  uint64_t words = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t off = u[i] - lo;
    bits[off >> 6] |= UINT64_C(1) << (off & 63);
    if ((off >> 6) + 1 > words) words = (off >> 6) + 1;
  }
  uint32_t m = 0;
  for (uint64_t w = 0; w < words; w++)
    for (uint64_t b = bits[w]; b; b &= b - 1)
      out[m++] = lo + w * 64 + (uint64_t)__builtin_ctzll(b);
  return m;
}

static uint32_t sort_unique_insertion(uint64_t *u, uint32_t n, uint64_t *out)
{
  for (uint32_t i = 1; i < n; i++) {
    uint64_t k = u[i];
    uint32_t j = i;
    while (j > 0 && u[j - 1] > k) {
      u[j] = u[j - 1];
      j--;
    }
    u[j] = k;
  }
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++)
    if (m == 0 || out[m - 1] != u[i]) out[m++] = u[i];
  return m;
}

/* Ascending input: drop repeats without branching on the data. n >= 1. */
static uint32_t unique_sorted(const uint64_t *u, uint32_t n, uint64_t *out)
{
  out[0] = u[0];
  uint32_t m = 1;
  for (uint32_t i = 1; i < n; i++) {
    out[m] = u[i];
    m += u[i] != u[i - 1]; /* compare inputs, not out[]: no store-to-load chain */
  }
  return m;
}

/* ---- grid warps --------------------------------------------------------------------------
 * The lanes of most warps form a grid: lane l = g W + t (0 <= t < W) reads a0 + t s1 + g s2, a
 * row of W lanes with stride s1 repeated every W lanes with stride s2 (W = 32: an affine warp;
 * a 2-D thread block whose x extent is W; a 1-D loop wrapping into its next row after W lanes,
 * the last row short). When one dimension's whole extent (plus an access) fits strictly inside
 * the other's stride, the accesses in address order are: the outer dimension's rows in order,
 * and within a row, the inner dimension in order. A row whose inner stride is at most a sector
 * leaves no gap (every sector from its lowest access's first to its highest's last is touched);
 * a larger inner stride gives each lane its own sectors. So the distinct sectors come out
 * ascending as address ranges in ascending order, where only a range's first sector can repeat
 * the previous range's last. */

typedef struct emitter {
  sp_cm_warp_access *out;
  unsigned sh, lsh;
  uint32_t ns, nl;
  uint64_t last_s, last_l; /* ~0: none yet (no sector or line index is ~0) */
} emitter;

/* The sectors of bytes [x, y], x above every byte emitted before, and their lines. */
static inline void emit_range(emitter *e, uint64_t x, uint64_t y)
{
  uint64_t s = x >> e->sh, end = y >> e->sh;
  s += s == e->last_s;
  if (s <= end) {
    for (uint64_t k = s; k <= end; k++) e->out->sectors[e->ns++] = k;
    uint64_t l = s >> e->lsh, l_end = end >> e->lsh;
    l += l == e->last_l;
    for (; l <= l_end; l++) e->out->lines[e->nl++] = l;
    e->last_l = l_end;
  }
  e->last_s = end;
}

/* One access [x, x + span], x above the previous access's last byte: its one or two
 * sectors, without branching on the data. */
static inline void emit_access(emitter *e, uint64_t x, uint64_t span)
{
  uint64_t s0 = x >> e->sh, s1 = (x + span) >> e->sh, l0 = s0 >> e->lsh, l1 = s1 >> e->lsh;
  e->out->sectors[e->ns] = s0;
  e->ns += s0 != e->last_s;
  e->out->sectors[e->ns] = s1;
  e->ns += s1 != s0;
  e->last_s = s1;
  e->out->lines[e->nl] = l0;
  e->nl += l0 != e->last_l;
  e->out->lines[e->nl] = l1;
  e->nl += l1 != l0;
  e->last_l = l1;
}

static inline uint64_t mag(int64_t v)
{
  return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/* Whether the active lanes are one run first .. first + n - 1 (all, or a warp cut short at
 * either end); mask != 0. (*n is meaningful only for a run. No popcount: without -mpopcnt that
 * is a libgcc call.) */
static int lane_run(uint32_t mask, uint32_t *first, uint32_t *n)
{
  *first = (uint32_t)__builtin_ctz(mask);
  const uint32_t m = mask >> *first;
  *n = 32 - (uint32_t)__builtin_clz(m);
  return (m & (m + 1)) == 0; /* m = 2^n - 1 (m + 1 wraps to 0 for all 32) */
}

/* Whether lanes a[0 .. n) lie at one constant stride (*s) without wrapping around the address
 * space. */
static int constant_stride(const uint64_t *a, uint32_t n, uint64_t *s)
{
  *s = n > 1 ? a[1] - a[0] : 0;
  const int64_t ss = (int64_t)*s;
  for (uint32_t l = 1; l < n; l++)
    if (a[l] - a[l - 1] != *s || (ss > 0 && a[l] < a[l - 1]) || (ss < 0 && a[l] > a[l - 1]))
      return 0;
  return 1;
}

/* A grid warp's layout: everything about it that depends only on the lanes' offsets from the
 * first active lane (so it holds for every instruction whose lanes keep those offsets). */
typedef struct grid_plan {
  int64_t s1, s2;         /* lane strides within a row and between rows */
  int64_t lo_off, hi_off; /* the full grid's bounding box, relative to the first lane */
  uint32_t n, w;          /* lanes; row width */
  int inner_t;            /* 1: rows of the grid are the outer dimension, 0: columns */
} grid_plan;

/* Lanes a[0..n-1] (1 <= n <= 32) as a grid; 0 when they are not one, or the grid's order is not
 * the address order described above. */
static int grid_shape(const uint64_t *a, uint32_t n, uint64_t span, grid_plan *p)
{
  const int64_t lim = INT64_C(1) << 40; /* strides below this: no offset overflows an int64 */
  int64_t s1 = n > 1 ? (int64_t)(a[1] - a[0]) : 0, s2 = 0;
  /* w: the first lane whose step from the one before is not s1 (or n). Most warps are one
   * row: a loop without an exit per lane tells so (0.9x the host instructions of the search
   * on matmul's unshaped warps), and only the others search for the break. */
  uint64_t steps_differ = 0;
  for (uint32_t l = 2; l < n; l++) steps_differ |= (a[l] - a[l - 1]) ^ (uint64_t)s1;
  uint32_t w = n < 2 ? 1 : n;
  if (steps_differ)
    for (w = 2; w < n && a[w] - a[w - 1] == (uint64_t)s1;) w++;
  if (w < n) s2 = (int64_t)(a[w] - a[0]);
  if (s1 <= -lim || s1 >= lim || s2 <= -lim || s2 >= lim) return 0;
  const uint32_t rows = (n + w - 1) / w; /* the last one may be short */
  int ok = 1;
  for (uint32_t g = 1, l = w; g < rows; g++) {
    uint64_t row = a[0] + (uint64_t)((int64_t)g * s2);
    for (uint32_t t = 0; t < w && l < n; t++, l++) ok &= a[l] == row + (uint64_t)((int64_t)t * s1);
  }
  if (!ok) return 0;
  int64_t ext1 = (int64_t)(w - 1) * s1, ext2 = (int64_t)(rows - 1) * s2;
  /* inner dimension: t (rows of the grid are outer) or g (columns are outer) */
  if (rows == 1 || mag(s2) > mag(ext1) + span) p->inner_t = 1;
  else if (mag(s1) > mag(ext2) + span) p->inner_t = 0;
  else return 0;
  p->s1 = s1;
  p->s2 = s2;
  p->lo_off = (ext1 < 0 ? ext1 : 0) + (ext2 < 0 ? ext2 : 0);
  p->hi_off = (ext1 > 0 ? ext1 : 0) + (ext2 > 0 ? ext2 : 0);
  p->n = n;
  p->w = w;
  return 1;
}

/* Whether lanes lo_off .. hi_off bytes from the first, at a0, could wrap the top (or bottom) of
 * the address space with accesses span + 1 bytes long. */
static inline int lanes_wrap(uint64_t a0, int64_t lo_off, int64_t hi_off, uint64_t span)
{
  return a0 < mag(lo_off) || UINT64_MAX - a0 < (uint64_t)hi_off + span;
}

/* The sectors and lines of grid p with its first lane at a0; 0 (nothing written) when an access
 * could wrap the top of the address space. */
static int grid_emit(const sp_cm_coalescer *c, const grid_plan *p, uint64_t a0, uint64_t span,
                     sp_cm_warp_access *out)
{
  if (lanes_wrap(a0, p->lo_off, p->hi_off, span)) return 0;
  const uint32_t n = p->n, w = p->w, rows = (n + w - 1) / w;
  const int inner_t = p->inner_t;
  const int64_t s_in = inner_t ? p->s1 : p->s2, s_out = inner_t ? p->s2 : p->s1;
  const uint32_t n_out = inner_t ? rows : w;
  const int contiguous = mag(s_in) <= c->sector_bytes;
  emitter e = {out, c->sector_shift, c->sectors_per_line_shift, 0, 0, ~(uint64_t)0, ~(uint64_t)0};
  for (uint32_t k = 0; k < n_out; k++) {
    uint32_t o = s_out < 0 ? n_out - 1 - k : k;
    /* lanes of outer index o: inner index i = 0 .. n_in - 1, starting at lane o w (rows outer)
     * or o (columns outer) */
    uint32_t n_in = inner_t ? (n - o * w < w ? n - o * w : w) : (n - 1 - o) / w + 1;
    uint64_t base = a0 + (uint64_t)((int64_t)o * s_out);
    uint64_t first = base + (uint64_t)((int64_t)(n_in - 1) * s_in); /* the inner end's lane */
    uint64_t lo = s_in < 0 ? first : base, hi = s_in < 0 ? base : first;
    if (contiguous) {
      emit_range(&e, lo, hi + span);
    } else {
      for (uint32_t i = 0; i < n_in; i++) emit_access(&e, lo + (uint64_t)i * mag(s_in), span);
    }
  }
  out->n_sectors = e.ns;
  out->n_lines = e.nl;
  return 1;
}

/* The general path: any active lanes, sorted and deduplicated. */
static void coalesce_lanes(const sp_cm_coalescer *c, const uint64_t *lane_addr, uint32_t active_mask,
                           uint64_t span, sp_cm_warp_access *out)
{
  if (!active_mask) {
    out->n_sectors = out->n_lines = 0;
    return;
  }
  /* Every active lane contributes its first and last sector (equal unless it straddles), in
   * lane order: u = s0(l0), s1(l0), s0(l1), s1(l1), ... */
  uint64_t u[SP_CM_MAX_UNITS];
  uint32_t n = 0;
  const unsigned sh = c->sector_shift;
  if (active_mask == UINT32_MAX) {
    for (uint32_t l = 0; l < SP_CM_WARP_LANES; l++) {
      uint64_t first = lane_addr[l], last = first + span;
      last |= (uint64_t)0 - (uint64_t)(last < first); /* saturate at the top of the space */
      u[2 * l] = first >> sh;
      u[2 * l + 1] = last >> sh;
    }
    n = SP_CM_MAX_UNITS;
  } else {
    uint32_t m = active_mask;
    do { /* at least one lane (a loop GCC cannot see run leaves u "maybe uninitialized") */
      uint64_t first = lane_addr[__builtin_ctz(m)], last = first + span;
      last |= (uint64_t)0 - (uint64_t)(last < first);
      u[n++] = first >> sh;
      u[n++] = last >> sh;
      m &= m - 1;
    } while (m);
  }
  /* Lanes ascending (the common, affine case) or descending (negative stride) cost O(n);
   * anything else is sorted. */
  int ascending = 1, descending = 1;
  uint64_t lo = u[0], hi = u[0];
  for (uint32_t i = 2; i < n; i += 2) {
    ascending &= u[i] >= u[i - 1];
    descending &= u[i + 1] <= u[i - 2];
    lo = u[i] < lo ? u[i] : lo;
    hi = u[i + 1] > hi ? u[i + 1] : hi;
  }
  hi = u[1] > hi ? u[1] : hi;
  uint32_t ns;
  if (ascending) {
    ns = unique_sorted(u, n, out->sectors);
  } else if (descending) {
    uint64_t r[SP_CM_MAX_UNITS];
    for (uint32_t i = 0; i < n; i += 2) {
      r[n - 2 - i] = u[i];
      r[n - 1 - i] = u[i + 1];
    }
    ns = unique_sorted(r, n, out->sectors);
  } else if (hi - lo < BITMAP_SPAN) {
    ns = sort_unique_bitmap(u, n, lo, out->sectors);
  } else {
    ns = sort_unique_insertion(u, n, out->sectors);
  }
  out->n_sectors = ns;
  /* Lines of an ascending sector list are ascending. */
  const unsigned lsh = c->sectors_per_line_shift;
  uint64_t prev_line = out->sectors[0] >> lsh;
  out->lines[0] = prev_line;
  uint32_t nl = 1;
  for (uint32_t i = 1; i < ns; i++) {
    uint64_t line = out->sectors[i] >> lsh;
    out->lines[nl] = line;
    nl += line != prev_line;
    prev_line = line;
  }
  out->n_lines = nl;
}

/* The most distinct 4-byte words the active lanes put in one L1 bank (SP_CM_L1_BANKS). Lanes
 * in address order (ascending or descending) meet each bank's words in order, so a repeat is
 * the bank's last word; otherwise the words are sorted first. mask != 0. */
static uint32_t l1_bank_cycles(const uint64_t *lane_addr, uint32_t mask, uint32_t access_bytes)
{
  enum { MAX_WORDS = SP_CM_WARP_LANES * 5 }; /* 16 bytes off a word boundary span 5 words */
  uint64_t w[MAX_WORDS];
  uint32_t n = 0;
  int ascending = 1, descending = 1;
  uint64_t prev = 0;
  for (uint32_t m = mask; m; m &= m - 1) {
    uint64_t a = lane_addr[__builtin_ctz(m)], end = a + access_bytes - 1;
    uint64_t first = a >> 2, last = (end < a ? UINT64_MAX : end) >> 2; /* saturates at the top */
    if (n) ascending &= a >= prev, descending &= a <= prev;
    prev = a;
    for (uint64_t x = first; x <= last && n < MAX_WORDS; x++) w[n++] = x;
  }
  if (!ascending && !descending) { /* insertion sort: at most 160 words, rare */
    for (uint32_t i = 1; i < n; i++) {
      uint64_t x = w[i];
      uint32_t j = i;
      for (; j > 0 && w[j - 1] > x; j--) w[j] = w[j - 1];
      w[j] = x;
    }
  }
  uint32_t count[SP_CM_L1_BANKS] = {0}, worst = 0;
  uint64_t last[SP_CM_L1_BANKS];
  for (uint32_t i = 0; i < n; i++) {
    uint32_t b = (uint32_t)(w[i] % SP_CM_L1_BANKS);
    if (count[b] && last[b] == w[i]) continue;
    last[b] = w[i];
    if (++count[b] > worst) worst = count[b];
  }
  return worst;
}

/* l1_bank_cycles of a grid of lanes, through a small per-thread cache: it depends only on the
 * plan, the mask, the access size and the first lane's place in its 4-byte word (moving every
 * lane by whole words turns the banks' pattern and keeps its worst bank), unless an access
 * wraps the top of the address space. Callers without shape ids (the trace's
 * per-lane path) repeat a few layouts over and over, and the banks' count was a quarter of a
 * ranking's time without it. */
enum { BANK_CACHE = 64 };

typedef struct bank_cache_entry {
  grid_plan plan;
  uint32_t mask, bytes, a0_mod, cycles; /* cycles 0: empty */
} bank_cache_entry;

static _Thread_local bank_cache_entry bank_cache[BANK_CACHE];

static uint32_t grid_bank_cycles(const grid_plan *p, const uint64_t *lane_addr, uint32_t mask,
                                 uint32_t access_bytes)
{
  const uint64_t a0 = lane_addr[__builtin_ctz(mask)];
  if (lanes_wrap(a0, p->lo_off, p->hi_off, access_bytes - 1))
    return l1_bank_cycles(lane_addr, mask, access_bytes);
  const uint32_t a0_mod = (uint32_t)(a0 & 3);
  uint64_t h = ((uint64_t)p->s1 * UINT64_C(0x9E3779B97F4A7C15)) ^ ((uint64_t)p->s2 * UINT64_C(0xC2B2AE3D27D4EB4F)) ^
               ((uint64_t)mask << 17) ^ ((uint64_t)access_bytes << 7) ^ a0_mod ^ ((uint64_t)p->w << 50);
  bank_cache_entry *e = &bank_cache[(h * UINT64_C(0x9E3779B97F4A7C15)) >> 58];
  if (e->cycles && e->mask == mask && e->bytes == access_bytes && e->a0_mod == a0_mod &&
      e->plan.s1 == p->s1 && e->plan.s2 == p->s2 && e->plan.w == p->w && e->plan.n == p->n)
    return e->cycles;
  e->plan = *p;
  e->mask = mask;
  e->bytes = access_bytes;
  e->a0_mod = a0_mod;
  e->cycles = l1_bank_cycles(lane_addr, mask, access_bytes);
  return e->cycles;
}

/* A grid's sectors from its plan (NULL: the lanes are no grid), else the general path's; mask
 * != 0. */
static void coalesce_planned(const sp_cm_coalescer *c, const grid_plan *plan, const uint64_t *lane_addr,
                             uint32_t active_mask, uint64_t span, sp_cm_warp_access *out)
{
  out->line_masks = 0;
  if (!plan || !grid_emit(c, plan, lane_addr[__builtin_ctz(active_mask)], span, out))
    coalesce_lanes(c, lane_addr, active_mask, span, out);
}

/* Whether this coalescer's results carry line masks: a line's sectors fit a uint8_t. */
static inline uint32_t has_line_masks(const sp_cm_coalescer *c)
{
  return c->sectors_per_line_shift <= 3;
}

/* out->line_mask from its sectors and lines (both ascending; every sector's line is listed) */
static void fill_line_masks(const sp_cm_coalescer *c, sp_cm_warp_access *out)
{
  const unsigned sh = c->sectors_per_line_shift;
  out->line_masks = has_line_masks(c);
  if (!out->line_masks) return;
  for (uint32_t k = 0; k < out->n_lines; k++) out->line_mask[k] = 0;
  for (uint32_t i = 0, k = 0; i < out->n_sectors; i++) {
    const uint64_t line = out->sectors[i] >> sh;
    while (out->lines[k] != line) k++;
    out->line_mask[k] |= (uint8_t)(1u << (out->sectors[i] & ((1u << sh) - 1)));
  }
}

int sp_cm_coalesce(const sp_cm_coalescer *c, const uint64_t *lane_addr, uint32_t active_mask,
                   uint32_t access_bytes, sp_cm_warp_access *out)
{
  if (access_bytes < 1 || access_bytes > 16) return -1;
  out->requests = active_mask ? 1u : 0u;
  if (!active_mask) {
    out->n_sectors = out->n_lines = out->bank_cycles = out->line_masks = 0;
    return 0;
  }
  const uint64_t span = access_bytes - 1;
  uint32_t first_lane, n_lanes;
  grid_plan p;
  int grid = lane_run(active_mask, &first_lane, &n_lanes) &&
             grid_shape(lane_addr + first_lane, n_lanes, span, &p);
  out->bank_cycles = grid ? grid_bank_cycles(&p, lane_addr, active_mask, access_bytes)
                          : l1_bank_cycles(lane_addr, active_mask, access_bytes);
  coalesce_planned(c, grid ? &p : NULL, lane_addr, active_mask, span, out);
  return 0;
}

/* ---- the memo of lane layouts --------------------------------------------------------------
 * Direct mapped: an entry holds the layout of one (shape, mask, access size); a colliding one
 * replaces it. */
enum { MEMO_BITS = 9, MEMO_ENTRIES = 1 << MEMO_BITS };

typedef struct memo_entry {
  uint64_t shape; /* 0: empty */
  uint32_t mask, bytes;
  int grid; /* the lanes form a grid: plan */
  grid_plan plan;
  /* l1_bank_cycles for a first lane bank_mod4 bytes past a word boundary: moving all lanes by
   * whole words turns the banks' pattern and keeps its worst bank, unless an access wraps the
   * top of the address space (lanes lo_off .. hi_off bytes from the first: checked per use) */
  uint32_t bank_cycles, bank_mod4;
  int64_t lo_off, hi_off;
  /* the active lanes are one run at a constant stride (for sp_cm_partial_sectors_shaped) */
  int constant;
  uint64_t stride;
} memo_entry;

/* ---- the memo of results ----------------------------------------------------------------
 * Two instructions of one (shape, mask, size) whose first lanes lie equally far into a line
 * touch the same sectors and lines, shifted by whole lines (when no access wraps the address
 * space). So the first one's result, relative to its first lane's sector and line, is the
 * next one's without coalescing again. Direct mapped as the layouts. */
enum { RESULT_BITS = 8, RESULT_ENTRIES = 1 << RESULT_BITS };

typedef struct result_entry {
  uint64_t shape; /* 0: empty */
  uint32_t mask, bytes;
  uint32_t in_line; /* the first lane's byte offset in its line */
  uint32_t n_sectors, n_lines;
  int32_t sector[SP_CM_MAX_UNITS], line[SP_CM_MAX_UNITS]; /* from the first lane's */
  uint8_t line_mask[SP_CM_MAX_UNITS]; /* where the coalescer has_line_masks */
} result_entry;

struct sp_cm_coalesce_memo {
  memo_entry e[MEMO_ENTRIES];
  result_entry r[RESULT_ENTRIES];
};

/* units u[0..n-1] as offsets from base: 0 when one does not fit an int32 */
static int to_relative(const uint64_t *u, uint32_t n, uint64_t base, int32_t *rel)
{
  int fits = 1;
  for (uint32_t i = 0; i < n; i++) {
    int64_t d = (int64_t)(u[i] - base);
    fits &= d >= INT32_MIN && d <= INT32_MAX;
    rel[i] = (int32_t)d;
  }
  return fits;
}

/* Only the keys are cleared: an entry is read only after its key matched. (calloc cleared all
 * 152 KB of it, 0.8 % of a ranking's host instructions, as rankings create two memos a model.) */
sp_cm_coalesce_memo *sp_cm_coalesce_memo_create(void)
{
  sp_cm_coalesce_memo *m = malloc(sizeof *m);
  if (!m) return NULL;
  for (int i = 0; i < MEMO_ENTRIES; i++) m->e[i].shape = 0;
  for (int i = 0; i < RESULT_ENTRIES; i++) m->r[i].shape = 0;
  return m;
}

size_t sp_cm_coalesce_memo_bytes(void)
{
  return sizeof(sp_cm_coalesce_memo);
}

void sp_cm_coalesce_memo_free(sp_cm_coalesce_memo *m)
{
  free(m);
}

static memo_entry *memo_slot(const sp_cm_coalesce_memo *memo, uint64_t shape, uint32_t active_mask,
                             uint32_t access_bytes)
{
  uint64_t h = (shape ^ ((uint64_t)active_mask << 7) ^ access_bytes) * UINT64_C(0x9E3779B97F4A7C15);
  return (memo_entry *)&memo->e[h >> (64 - MEMO_BITS)];
}

int sp_cm_coalesce_shaped(const sp_cm_coalescer *c, sp_cm_coalesce_memo *memo, uint64_t shape,
                          const uint64_t *lane_addr, uint32_t active_mask, uint32_t access_bytes,
                          sp_cm_warp_access *out)
{
  if (!memo || shape == 0 || active_mask == 0)
    return sp_cm_coalesce(c, lane_addr, active_mask, access_bytes, out);
  if (access_bytes < 1 || access_bytes > 16) return -1;
  out->requests = 1;
  const uint64_t span = access_bytes - 1;
  memo_entry *e = memo_slot(memo, shape, active_mask, access_bytes);
  if (e->shape != shape || e->mask != active_mask || e->bytes != access_bytes) {
    uint32_t first_lane, n_lanes;
    e->shape = shape;
    e->mask = active_mask;
    e->bytes = access_bytes;
    const int run = lane_run(active_mask, &first_lane, &n_lanes);
    e->grid = run && grid_shape(lane_addr + first_lane, n_lanes, span, &e->plan);
    e->constant = run && constant_stride(lane_addr + first_lane, n_lanes, &e->stride);
    e->bank_mod4 = 4; /* none yet */
    e->lo_off = e->hi_off = 0;
    const uint64_t a0 = lane_addr[__builtin_ctz(active_mask)];
    for (uint32_t m = active_mask; m; m &= m - 1) {
      int64_t d = (int64_t)(lane_addr[__builtin_ctz(m)] - a0);
      e->lo_off = d < e->lo_off ? d : e->lo_off;
      e->hi_off = d > e->hi_off ? d : e->hi_off;
    }
  }
  const uint64_t a0 = lane_addr[__builtin_ctz(active_mask)];
  if (lanes_wrap(a0, e->lo_off, e->hi_off, span)) {
    out->bank_cycles = l1_bank_cycles(lane_addr, active_mask, access_bytes);
    coalesce_planned(c, e->grid ? &e->plan : NULL, lane_addr, active_mask, span, out);
    return 0;
  }
  const uint32_t mod4 = (uint32_t)(a0 & 3);
  if (e->bank_mod4 != mod4) {
    e->bank_cycles = l1_bank_cycles(lane_addr, active_mask, access_bytes);
    e->bank_mod4 = mod4;
  }
  out->bank_cycles = e->bank_cycles;
  const uint32_t in_line = (uint32_t)(a0 & (c->line_bytes - 1));
  const uint64_t s0 = a0 >> c->sector_shift;
  const uint64_t l0 = a0 >> (c->sector_shift + c->sectors_per_line_shift);
  result_entry *r = &memo->r[((uint64_t)(e - memo->e) * 31 + in_line) & (RESULT_ENTRIES - 1)];
  if (r->shape == shape && r->mask == active_mask && r->bytes == access_bytes &&
      r->in_line == in_line) {
    for (uint32_t i = 0; i < r->n_sectors; i++)
      out->sectors[i] = s0 + (uint64_t)(int64_t)r->sector[i];
    for (uint32_t i = 0; i < r->n_lines; i++) {
      out->lines[i] = l0 + (uint64_t)(int64_t)r->line[i];
      out->line_mask[i] = r->line_mask[i];
    }
    out->n_sectors = r->n_sectors;
    out->n_lines = r->n_lines;
    out->line_masks = has_line_masks(c);
    return 0;
  }
  coalesce_planned(c, e->grid ? &e->plan : NULL, lane_addr, active_mask, span, out);
  fill_line_masks(c, out);
  if (out->line_masks)
    for (uint32_t i = 0; i < out->n_lines; i++) r->line_mask[i] = out->line_mask[i];
  /* kept when every unit is within an int32 of the first lane's (lanes up to 64 GB apart) */
  const int fits = to_relative(out->sectors, out->n_sectors, s0, r->sector) &
                   to_relative(out->lines, out->n_lines, l0, r->line);
  r->shape = fits ? shape : 0;
  r->mask = active_mask;
  r->bytes = access_bytes;
  r->in_line = in_line;
  r->n_sectors = out->n_sectors;
  r->n_lines = out->n_lines;
  return 0;
}
/* Index of sector s in the ascending list, starting the search at *hint (lanes mostly ascend). */
static uint32_t sector_index(const sp_cm_warp_access *wa, uint64_t s, uint32_t *hint)
{
  uint32_t i = *hint < wa->n_sectors ? *hint : 0;
  if (wa->sectors[i] != s) {
    uint32_t lo = 0, hi = wa->n_sectors; /* the sector is listed: wa came from these lanes */
    while (hi - lo > 1) {
      uint32_t mid = (lo + hi) / 2;
      if (wa->sectors[mid] <= s) lo = mid;
      else hi = mid;
    }
    i = lo;
  }
  *hint = i;
  return i;
}

/* Bits [from, to] of a sector's byte mask (two words: sectors of up to 128 bytes). */
static void cover(uint64_t *mask, uint32_t from, uint32_t to)
{
  for (uint32_t w = from / 64; w <= to / 64; w++) {
    uint32_t lo = w * 64 > from ? 0 : from - w * 64, hi = to - w * 64 > 63 ? 63 : to - w * 64;
    uint64_t bits = (hi == 63 ? ~UINT64_C(0) : (UINT64_C(1) << (hi + 1)) - 1) & ~((UINT64_C(1) << lo) - 1);
    mask[w] |= bits;
  }
}

/* Lanes first .. first + n - 1 at a constant stride (either sign): the answer without masks.
 * A stride wider than the access leaves a gap after every lane, and no sector fits in one
 * access (<= 16 bytes), so every sector touched is partial; otherwise the bytes are one run
 * and only its end sectors can be. -1 when the lanes are not such a run. */
static int affine_partial_at(const sp_cm_coalescer *c, const uint64_t *a, uint32_t n, uint64_t s,
                             uint64_t bytes, const sp_cm_warp_access *wa, uint64_t *which)
{
  if (bytes >= c->sector_bytes) return -1; /* an access may cover a sector by itself */
  const int64_t ss = (int64_t)s;
  const uint64_t mag_s = ss < 0 ? (uint64_t)0 - s : s;
  const uint64_t all = wa->n_sectors >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << wa->n_sectors) - 1;
  if (n > 1 && mag_s > bytes) {
    *which = all;
    return (int)wa->n_sectors;
  }
  uint64_t lo = ss < 0 ? a[n - 1] : a[0], hi = ss < 0 ? a[0] : a[n - 1];
  if (hi > UINT64_MAX - bytes) return -1; /* the top of the space: the general path */
  const uint64_t m = c->sector_bytes - 1, end = hi + bytes; /* one past the last byte */
  int first = (lo & m) != 0, last = (end & m) != 0;
  *which = (first ? UINT64_C(1) : 0) | (last ? UINT64_C(1) << (wa->n_sectors - 1) : 0);
  return wa->n_sectors == 1 ? (first || last) : first + last;
}

static int affine_partial(const sp_cm_coalescer *c, const uint64_t *a, uint32_t n, uint64_t bytes,
                          const sp_cm_warp_access *wa, uint64_t *which)
{
  uint64_t s;
  if (bytes >= c->sector_bytes || !constant_stride(a, n, &s)) return -1;
  return affine_partial_at(c, a, n, s, bytes, wa, which);
}

uint32_t sp_cm_partial_sectors(const sp_cm_coalescer *c, const uint64_t *lane_addr,
                               uint32_t active_mask, uint32_t access_bytes,
                               const sp_cm_warp_access *wa)
{
  uint64_t which;
  return sp_cm_partial_sectors_which(c, lane_addr, active_mask, access_bytes, wa, &which);
}

/* sp_cm_partial_sectors_which; known (not NULL): the memo's entry of these lanes, one run at its
 * constant stride without wrapping, which spares re-checking their steps. */
static uint32_t partial_sectors(const sp_cm_coalescer *c, const uint64_t *lane_addr,
                                uint32_t active_mask, uint32_t access_bytes,
                                const sp_cm_warp_access *wa, uint64_t *which, const memo_entry *known)
{
  const uint32_t sb = c->sector_bytes;
  *which = 0;
  if (sb > 128 || wa->n_sectors == 0 || access_bytes < 1 || access_bytes > 16) return 0;
  uint32_t first_lane, n_lanes;
  if (lane_run(active_mask, &first_lane, &n_lanes)) {
    const uint64_t *a = lane_addr + first_lane;
    int p = known ? affine_partial_at(c, a, n_lanes, known->stride, access_bytes, wa, which)
                  : affine_partial(c, a, n_lanes, access_bytes, wa, which);
    if (p >= 0) return (uint32_t)p;
    *which = 0;
  }
  uint64_t mask[SP_CM_MAX_UNITS][2];
  memset(mask, 0, sizeof mask[0] * wa->n_sectors);
  uint32_t hint = 0;
  for (uint32_t m = active_mask; m; m &= m - 1) {
    uint64_t first = lane_addr[__builtin_ctz(m)], last = first + access_bytes - 1;
    if (last < first) last = UINT64_MAX; /* the top of the space, as the coalescer saturates */
    for (uint64_t s = first >> c->sector_shift; s <= last >> c->sector_shift; s++) {
      uint64_t base = s << c->sector_shift;
      uint32_t from = first > base ? (uint32_t)(first - base) : 0;
      uint32_t to = last - base < sb ? (uint32_t)(last - base) : sb - 1;
      cover(mask[sector_index(wa, s, &hint)], from, to);
      if (s == UINT64_MAX >> c->sector_shift) break;
    }
  }
  uint64_t full0 = sb >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << sb) - 1;
  uint64_t full1 = sb > 64 ? (sb == 128 ? ~UINT64_C(0) : (UINT64_C(1) << (sb - 64)) - 1) : 0;
  uint32_t partial = 0;
  for (uint32_t i = 0; i < wa->n_sectors; i++)
    if (mask[i][0] != full0 || mask[i][1] != full1) {
      partial++;
      *which |= UINT64_C(1) << i;
    }
  return partial;
}

uint32_t sp_cm_partial_sectors_which(const sp_cm_coalescer *c, const uint64_t *lane_addr,
                                     uint32_t active_mask, uint32_t access_bytes,
                                     const sp_cm_warp_access *wa, uint64_t *which)
{
  return partial_sectors(c, lane_addr, active_mask, access_bytes, wa, which, NULL);
}

uint32_t sp_cm_partial_sectors_shaped(const sp_cm_coalescer *c, const sp_cm_coalesce_memo *memo,
                                      uint64_t shape, const uint64_t *lane_addr,
                                      uint32_t active_mask, uint32_t access_bytes,
                                      const sp_cm_warp_access *wa, uint64_t *which)
{
  const memo_entry *e = memo && shape && active_mask ? memo_slot(memo, shape, active_mask, access_bytes) : NULL;
  const int known = e && e->shape == shape && e->mask == active_mask && e->bytes == access_bytes &&
                    e->constant && access_bytes >= 1 &&
                    !lanes_wrap(lane_addr[__builtin_ctz(active_mask)], e->lo_off, e->hi_off, access_bytes - 1);
  return partial_sectors(c, lane_addr, active_mask, access_bytes, wa, which, known ? e : NULL);
}
