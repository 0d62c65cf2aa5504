/* Coalescer: hand-computed warps, a brute-force cross-check on random warps, and the measured
 * 4096x4096 transpose of DESIGN.md (request and sector counts, and the 75% L1 sector hit rate). */
#include <stdlib.h>

#include "schedpredict/cachemodel.h"
#include "tests/sp_test.h"

static void strided(uint64_t *addr, uint64_t base, uint64_t stride)
{
  for (int l = 0; l < 32; l++) addr[l] = base + (uint64_t)l * stride;
}

static sp_cm_coalescer modern(void)
{
  sp_cm_coalescer c;
  int rc = sp_cm_coalescer_init(&c, 32, 128);
  CHECK_EQ_INT(rc, 0);
  return c;
}

static void test_coalesced_doubles(void)
{
  sp_cm_coalescer c = modern();
  uint64_t addr[32];
  sp_cm_warp_access w;
  strided(addr, 0x10000, 8); /* 256-aligned */
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(w.requests, 1);
  CHECK_EQ_INT(w.n_sectors, 8);
  CHECK_EQ_INT(w.n_lines, 2);
  for (uint32_t k = 0; k < w.n_sectors; k++) CHECK_EQ_INT(w.sectors[k], 0x10000 / 32 + k);
  CHECK_EQ_INT(w.lines[0], 0x10000 / 128);
  CHECK_EQ_INT(w.lines[1], 0x10000 / 128 + 1);
}

static void test_column_access(void)
{
  sp_cm_coalescer c = modern();
  uint64_t addr[32];
  sp_cm_warp_access w;
  strided(addr, 0, 4096 * 8);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(w.requests, 1);
  CHECK_EQ_INT(w.n_sectors, 32);
  CHECK_EQ_INT(w.n_lines, 32);
  CHECK_EQ_INT(w.sectors[31], 31 * 4096 * 8 / 32);
  CHECK_EQ_INT(w.lines[31], 31 * 4096 * 8 / 128);
}

static void test_floats_and_wide(void)
{
  sp_cm_coalescer c = modern();
  uint64_t addr[32];
  sp_cm_warp_access w;
  strided(addr, 1024, 4);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 4, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 4);
  CHECK_EQ_INT(w.n_lines, 1);
  /* 16-byte (float4) accesses: 512 bytes = 16 sectors, 4 lines */
  strided(addr, 4096, 16);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 16, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 16);
  CHECK_EQ_INT(w.n_lines, 4);
  /* 12-byte float3 array of structs: bytes 0..383 -> 12 sectors, 3 lines */
  strided(addr, 0, 12);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 12, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 12);
  CHECK_EQ_INT(w.n_lines, 3);
  /* stride of two sectors: every other sector only (the affine shortcut must not apply) */
  strided(addr, 0, 64);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 4, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 32);
  CHECK_EQ_INT(w.sectors[1], 2);
  CHECK_EQ_INT(w.n_lines, 16);
  /* stride of exactly one sector with 8-byte accesses: 32 consecutive sectors */
  strided(addr, 0, 32);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 32);
  CHECK_EQ_INT(w.n_lines, 8);
  /* all lanes on one address (broadcast) */
  strided(addr, 200, 0);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 1);
  CHECK_EQ_INT(w.n_lines, 1);
  CHECK_EQ_INT(w.sectors[0], 200 / 32);
}

static void test_straddling(void)
{
  sp_cm_coalescer c = modern();
  uint64_t addr[32];
  sp_cm_warp_access w;
  /* doubles from base 260: bytes 260..515 -> sectors 8..16 (9), lines 2..4 (3) */
  strided(addr, 260, 8);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 9);
  CHECK_EQ_INT(w.sectors[0], 8);
  CHECK_EQ_INT(w.sectors[8], 16);
  CHECK_EQ_INT(w.n_lines, 3);
  CHECK_EQ_INT(w.lines[0], 2);
  CHECK_EQ_INT(w.lines[2], 4);
  /* one lane, 4 bytes at 30: sectors 0 and 1, line 0 */
  addr[0] = 30;
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 1u, 4, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 2);
  CHECK_EQ_INT(w.n_lines, 1);
  /* 4 bytes at 126: sectors 3 and 4, lines 0 and 1 */
  addr[0] = 126;
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 1u, 4, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 2);
  CHECK_EQ_INT(w.sectors[0], 3);
  CHECK_EQ_INT(w.sectors[1], 4);
  CHECK_EQ_INT(w.n_lines, 2);
  /* column access with every lane straddling a sector: 64 sectors, and lines too */
  strided(addr, 124, 4096);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 64);
  CHECK_EQ_INT(w.n_lines, 64);
  /* the top of the address space does not wrap around to sector 0 */
  addr[0] = UINT64_MAX - 3;
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 1u, 8, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 1);
  CHECK(w.sectors[0] == UINT64_MAX / 32);
}

static void test_inactive_lanes(void)
{
  sp_cm_coalescer c = modern();
  uint64_t addr[32];
  sp_cm_warp_access w;
  strided(addr, 0, 8);
  /* poison the inactive lanes: they must not be read */
  for (int l = 16; l < 32; l++) addr[l] = UINT64_C(0xDEAD0000000) + (uint64_t)l * 4096;
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0x0000FFFFu, 8, &w), 0);
  CHECK_EQ_INT(w.requests, 1);
  CHECK_EQ_INT(w.n_sectors, 4);
  CHECK_EQ_INT(w.n_lines, 1);
  /* every other lane of a float warp still touches all 4 sectors */
  strided(addr, 0, 4);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0x55555555u, 4, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 4);
  /* only lanes 0 and 31 */
  strided(addr, 0, 64);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0x80000001u, 8, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 2);
  CHECK_EQ_INT(w.sectors[1], 31 * 64 / 32);
  CHECK_EQ_INT(w.n_lines, 2);
  /* no active lane: no request */
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0, 8, &w), 0);
  CHECK_EQ_INT(w.requests, 0);
  CHECK_EQ_INT(w.n_sectors, 0);
  CHECK_EQ_INT(w.n_lines, 0);
}

static void test_kepler_mode(void)
{
  sp_cm_coalescer c;
  CHECK_EQ_INT(sp_cm_coalescer_init(&c, 128, 128), 0);
  uint64_t addr[32];
  sp_cm_warp_access w;
  strided(addr, 0, 8);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 2); /* two 128-byte transactions */
  CHECK_EQ_INT(w.n_lines, 2);
  strided(addr, 0, 4);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 4, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 1);
  strided(addr, 64, 8); /* misaligned by half a line: 3 transactions */
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 3);
  strided(addr, 0, 4096 * 8);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 32);
  CHECK_EQ_INT(w.n_lines, 32);
}

/* The L1's bank cycles, by hand (the H100's measured cycles a request on hits,
 * validation/results/h100/2026-11-27-l1-span-probe): 32 floats take 1 cycle aligned or 4 bytes
 * into a line (2 lines), 32 doubles 2, floats 12 bytes apart 1 (3 lines), doubles 16 bytes
 * apart 4; xreuse.c's warp of 8 rows of 4 doubles, rows 32,832 bytes apart, 4 (rows alternate
 * between two halves of the banks), and 8 with rows 32,768 apart (all on the same 8 banks);
 * every lane on one word: 1 (a broadcast). */
static void test_bank_cycles(void)
{
  sp_cm_coalescer c = modern();
  struct { uint32_t bytes; uint64_t offset, stride, group, pitch; uint32_t cycles, lines; } cases[] = {
      {4, 0, 4, 32, 0, 1, 1},       {4, 4, 4, 32, 0, 1, 2},     {8, 0, 8, 32, 0, 2, 2},
      {4, 0, 12, 32, 0, 1, 3},      {8, 0, 16, 32, 0, 4, 4},    {8, 0, 8, 4, 32832, 4, 8},
      {8, 0, 8, 4, 32768, 8, 8},    {4, 0, 0, 32, 0, 1, 1},     {8, 0, 128, 32, 0, 32, 32},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    uint64_t addr[32];
    for (uint64_t l = 0; l < 32; l++)
      addr[l] = 4096 + cases[k].offset + l / cases[k].group * cases[k].pitch + l % cases[k].group * cases[k].stride;
    sp_cm_warp_access w;
    CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, cases[k].bytes, &w), 0);
    CHECK_EQ_INT(w.bank_cycles, cases[k].cycles);
    CHECK_EQ_INT(w.n_lines, cases[k].lines);
  }
}

static void test_bad_arguments(void)
{
  sp_cm_coalescer c;
  CHECK_EQ_INT(sp_cm_coalescer_init(&c, 8, 128), -1);   /* sector < 16 */
  CHECK_EQ_INT(sp_cm_coalescer_init(&c, 48, 128), -1);  /* not a power of two */
  CHECK_EQ_INT(sp_cm_coalescer_init(&c, 64, 32), -1);   /* line < sector */
  CHECK_EQ_INT(sp_cm_coalescer_init(&c, 32, 96), -1);
  CHECK_EQ_INT(sp_cm_coalescer_init(&c, 32, 128), 0);
  uint64_t addr[32] = {0};
  sp_cm_warp_access w;
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 1u, 0, &w), -1);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 1u, 17, &w), -1);
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Reference: list every byte's unit, sort, unique. */
static uint32_t reference_units(const uint64_t *addr, uint32_t mask, uint32_t bytes,
                                unsigned shift, uint64_t *out)
{
  uint64_t all[32 * 16];
  uint32_t n = 0;
  for (int l = 0; l < 32; l++)
    if (mask >> l & 1)
      for (uint32_t b = 0; b < bytes; b++) {
        uint64_t x = addr[l] + b;
        all[n++] = (x < addr[l] ? UINT64_MAX : x) >> shift; /* saturates at the top */
      }
  qsort(all, n, sizeof all[0], cmp_u64);
  uint32_t m = 0;
  for (uint32_t k = 0; k < n; k++)
    if (m == 0 || out[m - 1] != all[k]) out[m++] = all[k];
  return m;
}

/* Reference of sp_cm_partial_sectors: every byte written, deduplicated, counted per sector; a
 * sector with fewer distinct bytes than its size is partly written. */
static uint32_t reference_partial(const uint64_t *addr, uint32_t mask, uint32_t bytes,
                                  const sp_cm_coalescer *c)
{
  uint64_t all[32 * 16];
  uint32_t n = 0, partial = 0;
  for (int l = 0; l < 32; l++)
    if (mask >> l & 1)
      for (uint32_t b = 0; b < bytes; b++) {
        uint64_t x = addr[l] + b;
        all[n++] = x < addr[l] ? UINT64_MAX : x;
      }
  qsort(all, n, sizeof all[0], cmp_u64);
  uint32_t k = 0;
  while (k < n) {
    uint64_t sector = all[k] >> c->sector_shift;
    uint32_t distinct = 0;
    for (uint64_t prev = 0; k < n && all[k] >> c->sector_shift == sector; k++) {
      distinct += distinct == 0 || all[k] != prev;
      prev = all[k];
    }
    partial += distinct < c->sector_bytes;
  }
  return partial;
}

/* Reference of the L1's bank cycles: every distinct 4-byte word the lanes touch, counted in its
 * bank (word mod 32); the most any bank holds. */
static uint32_t reference_bank_cycles(const uint64_t *addr, uint32_t mask, uint32_t bytes)
{
  uint64_t words[32 * 16];
  uint32_t n = mask ? reference_units(addr, mask, bytes, 2, words) : 0, count[32] = {0}, worst = 0;
  for (uint32_t k = 0; k < n; k++)
    if (++count[words[k] % 32] > worst) worst = count[words[k] % 32];
  return worst;
}

/* instructions whose per-line sector masks matches_reference_shaped compared */
static uint64_t line_masks_checked;

/* Whether the coalescer's answer for a warp is the reference's (through memo with shape, where
 * memo is not NULL). */
static int matches_reference_shaped(const sp_cm_coalescer *c, sp_cm_coalesce_memo *memo,
                                    uint64_t shape, const uint64_t *addr, uint32_t mask, uint32_t bytes)
{
  sp_cm_warp_access w;
  if (sp_cm_coalesce_shaped(c, memo, shape, addr, mask, bytes, &w) != 0) return 0;
  uint64_t want_s[32 * 16], want_l[32 * 16];
  uint32_t ns = reference_units(addr, mask, bytes, c->sector_shift, want_s);
  uint32_t nl = reference_units(addr, mask, bytes, c->sector_shift + c->sectors_per_line_shift,
                                want_l);
  int same = w.n_sectors == ns && w.n_lines == nl && w.requests == (mask != 0);
  for (uint32_t k = 0; same && k < ns; k++) same = w.sectors[k] == want_s[k];
  for (uint32_t k = 0; same && k < nl; k++) same = w.lines[k] == want_l[k];
  if (same && sp_cm_partial_sectors(c, addr, mask, bytes, &w) != reference_partial(addr, mask, bytes, c))
    same = 0;
  if (same && memo) { /* the memo's stride gives the same sectors as checking the lanes */
    uint64_t which, which_shaped;
    uint32_t p = sp_cm_partial_sectors_which(c, addr, mask, bytes, &w, &which);
    same = sp_cm_partial_sectors_shaped(c, memo, shape, addr, mask, bytes, &w, &which_shaped) == p &&
           which_shaped == which;
  }
  if (same && w.bank_cycles != reference_bank_cycles(addr, mask, bytes)) same = 0;
  if (same && w.line_masks) { /* each line's sectors, as the reference lists them */
    line_masks_checked++;
    const unsigned sh = c->sectors_per_line_shift;
    for (uint32_t k = 0; same && k < nl; k++) {
      uint32_t want = 0;
      for (uint32_t i = 0; i < ns; i++)
        if (want_s[i] >> sh == want_l[k]) want |= 1u << (want_s[i] & ((1u << sh) - 1));
      same = w.line_mask[k] == want;
    }
  }
  return same;
}

static int matches_reference(const sp_cm_coalescer *c, const uint64_t *addr, uint32_t mask,
                             uint32_t bytes)
{
  return matches_reference_shaped(c, NULL, 0, addr, mask, bytes);
}

/* A run of lanes lo .. lo + len - 1: a warp cut short at either end. */
static uint32_t random_run_mask(uint64_t *rng)
{
  uint32_t lo = (uint32_t)(sp_test_rand(rng) % 32), len = 1 + (uint32_t)(sp_test_rand(rng) % (32 - lo));
  return (uint32_t)((UINT64_C(1) << len) - 1) << lo;
}

/* The random tests' access sizes and coalescer geometries (sector, line). */
static const uint32_t sizes[] = {1, 2, 4, 8, 12, 16};
static const uint32_t sector_sizes[] = {16, 32, 32, 128};
static const uint32_t line_sizes[] = {64, 128, 256, 128};

/* Geometry cfg's coalescer, and a random access size. */
static uint32_t random_config(int cfg, uint64_t *rng, sp_cm_coalescer *c)
{
  CHECK_EQ_INT(sp_cm_coalescer_init(c, sector_sizes[cfg], line_sizes[cfg]), 0);
  return sizes[sp_test_rand(rng) % 6];
}

static void test_random_warps_vs_reference(void)
{
  uint64_t rng = 99, wrong = 0;
  for (int trial = 0; trial < 50000; trial++) {
    sp_cm_coalescer c;
    int cfg = trial % 4;
    uint32_t bytes = random_config(cfg, &rng, &c);
    uint32_t mask = (uint32_t)sp_test_rand(&rng);
    if (trial % 3 == 0) mask = 0xFFFFFFFFu;
    uint64_t base = sp_test_rand(&rng) % (1u << 20);
    uint64_t addr[32];
    if (trial % 3 == 1) mask = random_run_mask(&rng);
    int pattern = (int)(sp_test_rand(&rng) % 9);
    uint64_t small_stride = sp_test_rand(&rng) % (sector_sizes[cfg] + 1);
    /* strides of either sign: around a sector, line-sized, large, or wrapping the space */
    uint64_t any_stride, r = sp_test_rand(&rng);
    switch (r % 5) {
    case 0: any_stride = r >> 3 & 127; break;
    case 1: any_stride = (uint64_t)line_sizes[cfg] * (r >> 3 & 7) + (r >> 8 & 1) * (r >> 9 & 15); break;
    case 2: any_stride = r >> 3 & 0xFFFFF; break;
    case 3: any_stride = r >> (3 + (r >> 8 & 31)); break;
    default: any_stride = r; break;
    }
    if (r >> 40 & 1) any_stride = (uint64_t)0 - any_stride;
    uint64_t top_base = UINT64_MAX - sp_test_rand(&rng) % 4096 - (r >> 41 & 1) * 31 * any_stride;
    uint32_t grid_w = 1 + (uint32_t)(sp_test_rand(&rng) % 32);
    uint64_t grid_s1, r1 = sp_test_rand(&rng);
    switch (r1 % 4) {
    case 0: grid_s1 = r1 >> 3 & 63; break;
    case 1: grid_s1 = (r1 >> 3 & 3) * 8; break;
    case 2: grid_s1 = r1 >> 3 & 0xFFFF; break;
    default: grid_s1 = r1 >> (3 + (r1 >> 8 & 31)); break;
    }
    if (r1 >> 40 & 1) grid_s1 = (uint64_t)0 - grid_s1;
    /* spreads around 4096 sectors cross the coalescer's bitmap / insertion-sort threshold */
    uint64_t spread = trial % 2 ? 600 : (uint64_t)sector_sizes[cfg] * (3000 + sp_test_rand(&rng) % 3000);
    for (int l = 0; l < 32; l++) {
      switch (pattern) {
      case 0: addr[l] = base + (uint64_t)l * bytes; break;               /* ascending */
      case 1: addr[l] = base + (uint64_t)(31 - l) * 24; break;           /* descending */
      case 2: addr[l] = base + sp_test_rand(&rng) % spread; break;         /* scattered */
      case 3: addr[l] = sp_test_rand(&rng) % (UINT64_C(1) << 40); break;  /* scattered, far */
      case 4: addr[l] = base + (uint64_t)l * small_stride; break;        /* affine, <= sector */
      case 5: addr[l] = base + (uint64_t)l * any_stride; break;          /* affine, any stride */
      case 6: addr[l] = top_base + (uint64_t)l * any_stride; break;      /* near the top */
      default: /* a grid: rows of w lanes, stride s1 within a row, s2 from row to row */
        addr[l] = (pattern == 7 ? base + (UINT64_C(1) << 44) : top_base) +
                  (uint64_t)(l % grid_w) * grid_s1 + (uint64_t)(l / grid_w) * any_stride;
        break;
      }
    }
    wrong += !matches_reference(&c, addr, mask, bytes);
  }
  CHECK_EQ_INT(wrong, 0);
}

/* Grid warps (lane l = g w + t reads base + t s1 + g s2; coalesce.c's grid path) against the
 * reference: each stride of either sign, one small and one large, in either role, around the
 * separation where the grid's rows stop being in address order, with lanes cut short. */
static void test_random_grids_vs_reference(void)
{
  uint64_t rng = 7, wrong = 0;
  for (int trial = 0; trial < 60000; trial++) {
    sp_cm_coalescer c;
    int cfg = trial % 4;
    uint32_t bytes = random_config(cfg, &rng, &c);
    uint32_t w = 1 + (uint32_t)(sp_test_rand(&rng) % 32), rows = (32 + w - 1) / w;
    uint64_t r = sp_test_rand(&rng);
    int64_t small = (int64_t)(r % (2 * sector_sizes[cfg] + 1));
    int64_t big = (int64_t)(r >> 12 & 0xFFFFF);
    int64_t s1, s2;
    if (r >> 40 & 1) { /* rows apart: s2 around (w - 1) |s1| + bytes - 1 */
      s1 = small;
      s2 = (int64_t)(w - 1) * s1 + (int64_t)bytes - 1 + (int64_t)(r >> 44 & 3) - 1;
      if (r >> 46 & 1) s2 = big;
    } else { /* columns apart: s1 around (rows - 1) |s2| + bytes - 1 */
      s2 = small;
      s1 = (int64_t)(rows - 1) * s2 + (int64_t)bytes - 1 + (int64_t)(r >> 44 & 3) - 1;
      if (r >> 46 & 1) s1 = big;
    }
    if (r >> 47 & 1) s1 = -s1;
    if (r >> 48 & 1) s2 = -s2;
    uint64_t base = (UINT64_C(1) << 40) + sp_test_rand(&rng) % 4096;
    uint64_t addr[32];
    for (int l = 0; l < 32; l++)
      addr[l] = base + (uint64_t)((int64_t)(l % (int)w) * s1 + (int64_t)(l / (int)w) * s2);
    uint32_t mask = 0xFFFFFFFFu;
    if (trial % 2) mask = random_run_mask(&rng);
    wrong += !matches_reference(&c, addr, mask, bytes);
  }
  CHECK_EQ_INT(wrong, 0);
}

/* The memo of lane layouts (sp_cm_coalesce_shaped): 3,000 layouts (grids of either stride sign,
 * affine, scattered), each with its own shape id, issued in random order at random bases
 * (some near the top of the address space, where a grid's bounding box wraps and the general
 * path must answer) and masks, so that the 512-entry memo sees hits, misses and collisions;
 * every answer against the reference. A memo that kept a layout's emission without the first
 * lane's place in its line, or ignored the mask or the access size in its key, fails here. */
static void test_shaped_vs_reference(void)
{
  enum { LAYOUTS = 3000 };
  static int64_t off[LAYOUTS][32];
  static uint32_t bytes_of[LAYOUTS], masks[LAYOUTS][3];
  uint64_t rng = 2026;
  sp_cm_coalescer c;
  CHECK_EQ_INT(sp_cm_coalescer_init(&c, 32, 128), 0);
  for (int k = 0; k < LAYOUTS; k++) {
    uint32_t w = 1 + (uint32_t)(sp_test_rand(&rng) % 32);
    int64_t s1 = (int64_t)(sp_test_rand(&rng) % 72) - 36, s2 = (int64_t)(sp_test_rand(&rng) % 20000) - 10000;
    int kind = (int)(sp_test_rand(&rng) % 5);
    bytes_of[k] = sizes[sp_test_rand(&rng) % 6];
    if (kind == 4) /* rows just apart, or just not, for this access size: the size decides */
      s2 = (int64_t)(w - 1) * (s1 < 0 ? -s1 : s1) + (int64_t)bytes_of[k] - 1 + (int64_t)(sp_test_rand(&rng) % 3) - 1;
    for (int l = 0; l < 32; l++)
      off[k][l] = kind == 3 ? (int64_t)(sp_test_rand(&rng) % 5000)
                : kind == 2 ? (int64_t)l * s2
                            : (int64_t)(l % (int)w) * s1 + (int64_t)(l / (int)w) * s2;
    masks[k][0] = 0xFFFFFFFFu;
    masks[k][1] = random_run_mask(&rng);
    masks[k][2] = (uint32_t)sp_test_rand(&rng) | 1u;
  }
  sp_cm_coalesce_memo *memo = sp_cm_coalesce_memo_create();
  CHECK(memo != NULL);
  uint64_t wrong = 0, wrapped = 0;
  line_masks_checked = 0;
  for (int trial = 0; trial < 60000; trial++) {
    int k = (int)(sp_test_rand(&rng) % (trial < 20000 ? 200 : LAYOUTS)); /* first few: many hits */
    uint32_t mask = masks[k][sp_test_rand(&rng) % 3];
    /* every third base at one of 4 word offsets into a line, as a trace's are: the memo of
     * results, by the first lane's place in its line, then hits */
    const uint64_t low = UINT64_C(1) << 40;
    uint64_t base = trial % 10 == 9 ? UINT64_MAX - sp_test_rand(&rng) % 400000
                    : trial % 3 == 0
                        ? low + (sp_test_rand(&rng) % (UINT64_C(1) << 23)) * 128 + (sp_test_rand(&rng) % 4) * 8
                        : low + sp_test_rand(&rng) % (UINT64_C(1) << 30);
    uint64_t addr[32];
    for (int l = 0; l < 32; l++) addr[l] = base + (uint64_t)off[k][l];
    wrapped += trial % 10 == 9;
    /* the same layout under another access size is another key: its size is part of it */
    uint32_t bytes = trial % 7 == 6 ? sizes[sp_test_rand(&rng) % 6] : bytes_of[k];
    wrong += !matches_reference_shaped(&c, memo, (uint64_t)k + 1, addr, mask, bytes);
  }
  sp_cm_coalesce_memo_free(memo);
  CHECK_EQ_INT(wrong, 0);
  CHECK(wrapped > 1000);
  CHECK(line_masks_checked > 30000); /* most instructions: all but the wrapped ones */
}

/* ---- the transpose of DESIGN.md ------------------------------------------------------------
 * 4096x4096 doubles, row-major (A[r][c] at (r*4096 + c)*8), block 32x8, one thread per element.
 * A warp is 32 consecutive threadIdx.x at one threadIdx.y of a block; blocks run in order
 * (blockIdx.x fastest), the warps of a block in threadIdx.y order. `x_index_is_row` says whether
 * threadIdx.x (with blockIdx.x) walks the row index of the array being read. */
enum { N = 4096, BX = 32, BY = 8 };

typedef struct transpose_counts {
  uint64_t requests, sectors, l1_hits;
} transpose_counts;

static transpose_counts run_transpose_loads(int x_index_is_row, sp_cm_lru *l1)
{
  sp_cm_coalescer c = modern();
  transpose_counts t = {0, 0, 0};
  uint64_t addr[32];
  sp_cm_warp_access w;
  for (uint32_t by = 0; by < N / BY; by++)
    for (uint32_t bx = 0; bx < N / BX; bx++)
      for (uint32_t ty = 0; ty < BY; ty++) {
        for (uint32_t tx = 0; tx < BX; tx++) {
          uint64_t x = bx * BX + tx, y = by * BY + ty;
          uint64_t row = x_index_is_row ? x : y, col = x_index_is_row ? y : x;
          addr[tx] = (row * N + col) * 8;
        }
        sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w);
        t.requests += w.requests;
        t.sectors += w.n_sectors;
        for (uint32_t k = 0; k < w.n_sectors; k++)
          t.l1_hits += (uint64_t)sp_cm_lru_access(l1, w.sectors[k]);
      }
  return t;
}

static void test_transpose_design_counts(void)
{
  /* 1024 sectors of 32 B = a 32 KB L1, fully associative LRU at sector granularity. */
  sp_cm_lru *l1 = sp_cm_lru_create(1024);
  CHECK(l1 != NULL);
  if (!l1) return;
  /* Body B[j][i] = A[i][j]: A's contiguous (column) index is j.
   * threadIdx.x on j: reads coalesced -> 8 sectors per request. */
  transpose_counts reads_coalesced = run_transpose_loads(0, l1);
  sp_cm_lru_free(l1);
  l1 = sp_cm_lru_create(1024);
  CHECK(l1 != NULL);
  if (!l1) return;
  /* threadIdx.x on i: A[i][j] walks rows, 32 sectors per request; writes B[j][i] coalesced. */
  transpose_counts writes_coalesced = run_transpose_loads(1, l1);
  sp_cm_lru_free(l1);

  CHECK_EQ_INT(reads_coalesced.requests, 524288);
  CHECK_EQ_INT(reads_coalesced.sectors, 4194304);
  CHECK_EQ_INT(writes_coalesced.requests, 524288);
  CHECK_EQ_INT(writes_coalesced.sectors, 16777216);
  /* Measured L1 hit rate on the H200: 0% and 75%. In the writes-coalesced variant the 4 warps
   * ty, ty+1, ty+2, ty+3 of a block read the same 32-byte sector of each row. */
  CHECK_EQ_INT(reads_coalesced.l1_hits, 0);
  CHECK_EQ_INT(writes_coalesced.l1_hits, 16777216 / 4 * 3);
  CHECK_NEAR((double)writes_coalesced.l1_hits / (double)writes_coalesced.sectors, 0.75, 1e-12);
}

/* Stores that leave part of a sector unwritten (jacobi2d's j from 1; a column of a transpose). */
static void test_partial_sectors(void)
{
  sp_cm_coalescer c = modern();
  uint64_t addr[32];
  sp_cm_warp_access w;
  strided(addr, 0x10000, 8); /* 32 doubles from a sector boundary: 8 whole sectors */
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(sp_cm_partial_sectors(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  strided(addr, 0x10008, 8); /* one double on: 9 sectors, the first and the last partial */
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 9);
  CHECK_EQ_INT(sp_cm_partial_sectors(&c, addr, 0xFFFFFFFFu, 8, &w), 2);
  /* lanes 0..3 off: the first sector untouched, the other 7 whole */
  strided(addr, 0x10000, 8);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFF0u, 8, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 7);
  CHECK_EQ_INT(sp_cm_partial_sectors(&c, addr, 0xFFFFFFF0u, 8, &w), 0);
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFEu, 8, &w), 0); /* lane 0 off: one partial */
  CHECK_EQ_INT(sp_cm_partial_sectors(&c, addr, 0xFFFFFFFEu, 8, &w), 1);
  strided(addr, 0, 4096 * 8); /* a column: 32 sectors, 8 of 32 bytes each */
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(sp_cm_partial_sectors(&c, addr, 0xFFFFFFFFu, 8, &w), 32);
  strided(addr, 0, 16); /* every other double: 16 sectors, each half written */
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(sp_cm_partial_sectors(&c, addr, 0xFFFFFFFFu, 8, &w), 16);
  strided(addr, 0x400, 0); /* every lane the same double: one sector, partial */
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 8, &w), 0);
  CHECK_EQ_INT(sp_cm_partial_sectors(&c, addr, 0xFFFFFFFFu, 8, &w), 1);
  strided(addr, 0x400, 0); /* ... but 16 bytes of 32 even with 16-byte accesses */
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 16, &w), 0);
  CHECK_EQ_INT(sp_cm_partial_sectors(&c, addr, 0xFFFFFFFFu, 16, &w), 1);
  for (int l = 0; l < 32; l++) addr[l] = 0x400 + (uint64_t)(l % 2) * 16; /* two lanes fill it */
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 16, &w), 0);
  CHECK_EQ_INT(sp_cm_partial_sectors(&c, addr, 0xFFFFFFFFu, 16, &w), 0);
  for (int l = 0; l < 32; l++) addr[l] = 0x800 + (uint64_t)(31 - l) * 4; /* floats, descending */
  CHECK_EQ_INT(sp_cm_coalesce(&c, addr, 0xFFFFFFFFu, 4, &w), 0);
  CHECK_EQ_INT(w.n_sectors, 4);
  CHECK_EQ_INT(sp_cm_partial_sectors(&c, addr, 0xFFFFFFFFu, 4, &w), 0);
}

int main(void)
{
  SP_RUN(test_coalesced_doubles);
  SP_RUN(test_column_access);
  SP_RUN(test_floats_and_wide);
  SP_RUN(test_straddling);
  SP_RUN(test_inactive_lanes);
  SP_RUN(test_kepler_mode);
  SP_RUN(test_bad_arguments);
  SP_RUN(test_bank_cycles);
  SP_RUN(test_random_warps_vs_reference);
  SP_RUN(test_random_grids_vs_reference);
  SP_RUN(test_shaped_vs_reference);
  SP_RUN(test_transpose_design_counts);
  SP_RUN(test_partial_sectors);
  return SP_TEST_END();
}
