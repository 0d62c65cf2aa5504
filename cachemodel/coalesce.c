/* Coalescer: one warp instruction -> one request and its distinct sectors and lines. */
#include "schedpredict/cachemodel.h"

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

int sp_cm_coalesce(const sp_cm_coalescer *c, const uint64_t *lane_addr, uint32_t active_mask,
                   uint32_t access_bytes, sp_cm_warp_access *out)
{
  if (access_bytes < 1 || access_bytes > 16) return -1;
  out->requests = active_mask ? 1u : 0u;
  if (!active_mask) {
    out->n_sectors = out->n_lines = 0;
    return 0;
  }
  /* Every active lane contributes its first and last sector (equal unless it straddles), in
   * lane order: u = s0(l0), s1(l0), s0(l1), s1(l1), ... */
  uint64_t u[SP_CM_MAX_UNITS];
  uint32_t n = 0;
  const unsigned sh = c->sector_shift;
  const uint64_t span = access_bytes - 1;
  if (active_mask == UINT32_MAX) {
    /* Affine warp with 0 <= stride <= sector size (coalesced, broadcast, struct-of-small):
     * gaps between lanes are shorter than a sector, so every sector from the first lane's first
     * to the last lane's last is touched. */
    uint64_t stride = lane_addr[1] - lane_addr[0];
    int affine = 1;
    for (uint32_t l = 2; l < SP_CM_WARP_LANES; l++) affine &= lane_addr[l] - lane_addr[l - 1] == stride;
    uint64_t top = lane_addr[SP_CM_WARP_LANES - 1] + span;
    if (affine && stride <= c->sector_bytes && top >= lane_addr[0]) {
      uint64_t s_first = lane_addr[0] >> sh, s_last = top >> sh;
      uint32_t ns = (uint32_t)(s_last - s_first) + 1;
      for (uint32_t i = 0; i < ns; i++) out->sectors[i] = s_first + i;
      const unsigned lsh = c->sectors_per_line_shift;
      uint64_t l_first = s_first >> lsh;
      uint32_t nl = (uint32_t)((s_last >> lsh) - l_first) + 1;
      for (uint32_t i = 0; i < nl; i++) out->lines[i] = l_first + i;
      out->n_sectors = ns;
      out->n_lines = nl;
      return 0;
    }
    for (uint32_t l = 0; l < SP_CM_WARP_LANES; l++) {
      uint64_t first = lane_addr[l], last = first + span;
      last |= (uint64_t)0 - (uint64_t)(last < first); /* saturate at the top of the space */
      u[2 * l] = first >> sh;
      u[2 * l + 1] = last >> sh;
    }
    n = SP_CM_MAX_UNITS;
  } else {
    for (uint32_t m = active_mask; m; m &= m - 1) {
      uint64_t first = lane_addr[__builtin_ctz(m)], last = first + span;
      last |= (uint64_t)0 - (uint64_t)(last < first);
      u[n++] = first >> sh;
      u[n++] = last >> sh;
    }
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
  return 0;
}
