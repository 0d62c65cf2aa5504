/* The memory system (cachemodel/memsys.c, cost.c) on hand-built warp-instruction streams:
 * the measured H200 transpose of DESIGN.md on the H100 description, Kepler transactions, L1
 * capacity and per-SM independence, the shared L2, stores and write-backs, Base vs Modeled,
 * Eq. 7.3-7.7, set- vs fully associative. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cachemodel/cm_lru.h"
#include "schedpredict/cachemodel.h"
#include "schedpredict/memsys.h"
#include "schedpredict/rank.h"
#include "tests/sp_test.h"

static sp_arch load_arch(const char *name)
{
  sp_arch a;
  char err[512];
  memset(&a, 0, sizeof a);
  if (sp_arch_load(name, &a, err, sizeof err) != 0) {
    fprintf(stderr, "cannot load arch %s: %s\n", name, err);
    exit(2);
  }
  return a;
}

static sp_cm_counters total(const sp_cm_memsys *m)
{
  sp_cm_counters c;
  sp_cm_memsys_counters(m, -1, &c);
  return c;
}

/* One instruction of warp `warp` of block `block`: lanes 0..nlanes-1 at base + lane * stride. */
static int emit_warp(sp_cm_memsys *m, int sm, int64_t block, int warp, int array, int write,
                     uint64_t base, uint64_t stride, uint32_t bytes, int nlanes)
{
  sp_warp_instr wi;
  memset(&wi, 0, sizeof wi);
  wi.sm = sm;
  wi.block = block;
  wi.warp = warp;
  wi.array = array;
  wi.write = write;
  wi.access_bytes = bytes;
  wi.active = nlanes >= 32 ? UINT32_MAX : (UINT32_C(1) << nlanes) - 1;
  for (int l = 0; l < nlanes; l++) wi.addr[l] = base + (uint64_t)l * stride;
  return sp_cm_memsys_access(m, &wi);
}

/* ... of warp 0 of block 0 */
static int emit(sp_cm_memsys *m, int sm, int array, int write, uint64_t base, uint64_t stride,
                uint32_t bytes, int nlanes)
{
  return emit_warp(m, sm, 0, 0, array, write, base, stride, bytes, nlanes);
}

/* ---- the transpose of DESIGN.md -----------------------------------------------------------------
 * n x n doubles, block 32x8 (warp w of a block = threadIdx.y = w, lanes = threadIdx.x), grid
 * (n/32) x (n/8), linear block b = bx + gridDim.x * by on SM b mod nsms. x = tx + 32 bx,
 * y = ty + 8 by. reads_coalesced: B[x][y] = A[y][x]; else B[y][x] = A[x][y]. Order: blocks in
 * groups of nsms (one per SM), and within a group, for each warp, its load then its store, the
 * SMs in lockstep (SM 0's instruction, SM 1's, ...). Arrays as sp_trace_array_bases places them:
 * A at a 2 MiB boundary, B on the next 2 MiB boundary after A. */
static int run_transpose(sp_cm_memsys *m, int n, int nsms, int reads_coalesced)
{
  const uint64_t A = UINT64_C(1) << 30, B = A + (uint64_t)n * n * 8;
  const int64_t gx = n / 32, nblocks = (int64_t)gx * (n / 8);
  for (int64_t b0 = 0; b0 < nblocks; b0 += nsms) {
    for (int w = 0; w < 8; w++) {
      for (int op = 0; op < 2; op++) {
        for (int sm = 0; sm < nsms && b0 + sm < nblocks; sm++) {
          int64_t b = b0 + sm, bx = b % gx, by = b / gx;
          uint64_t x0 = (uint64_t)bx * 32, y = (uint64_t)by * 8 + (uint64_t)w;
          uint64_t base, stride;
          int rowmajor_x = reads_coalesced ? op == 0 : op == 1; /* lanes along a row? */
          uint64_t arr = op == 0 ? A : B;
          if (rowmajor_x) { /* arr[y][x]: lanes consecutive */
            base = arr + (y * (uint64_t)n + x0) * 8;
            stride = 8;
          } else { /* arr[x][y]: lanes one row apart */
            base = arr + (x0 * (uint64_t)n + y) * 8;
            stride = (uint64_t)n * 8;
          }
          if (emit_warp(m, sm, b, w, op, op, base, stride, 8, 32) != 0) return -1;
        }
      }
    }
  }
  return 0;
}

static void test_transpose_h100(void)
{
  sp_arch h100 = load_arch("h100");
  const int n = 4096, nsms = h100.sm_count;
  CHECK_EQ_INT(nsms, 132);
  sp_cm_options opt = {0};
  opt.l1_variant = SP_CM_L1_BASE;
  opt.assoc = SP_CM_FULLY_ASSOCIATIVE;
  for (int rc = 1; rc >= 0; rc--) {
    sp_cm_memsys *m = sp_cm_memsys_create(&h100, nsms, 2, &opt);
    CHECK(m != NULL);
    if (!m) return;
    CHECK_EQ_INT(run_transpose(m, n, nsms, rc), 0);
    sp_cm_counters c = total(m), a, b;
    sp_cm_memsys_counters(m, 0, &a);
    sp_cm_memsys_counters(m, 1, &b);
    fprintf(stderr,
            "  transpose %s: ld_req %lld ld_sect %lld L1 hit %.4f L2 read %lld L2 hit %lld "
            "DRAM read %.1f MB write %.1f MB (+%.1f MB dirty in L2) st_sect %lld mem %.1f MB\n",
            rc ? "reads coalesced " : "writes coalesced", (long long)c.ld_requests,
            (long long)c.ld_sectors, sp_cm_l1_hit_rate(&c), (long long)c.l2_read_sectors,
            (long long)c.l2_read_hit_sectors, c.dram_read_bytes / 1e6, c.dram_write_bytes / 1e6,
            c.l2_dirty_bytes / 1e6, (long long)c.st_sectors,
            sp_cm_memsys_memory_bytes(m) / 1e6);
    /* DESIGN.md, measured on an H200 (Nsight): */
    CHECK_EQ_INT(c.ld_requests, 524288);
    CHECK_EQ_INT(c.st_requests, 524288);
    CHECK_EQ_INT(c.ld_sectors, rc ? 4194304 : 16777216);
    CHECK_EQ_INT(c.st_sectors, rc ? 16777216 : 4194304);
    CHECK_EQ_INT(c.l2_write_sectors, c.st_sectors);
    CHECK_EQ_INT(c.ld_l1_hit_sectors, rc ? 0 : 12582912); /* measured 0% and 75% */
    CHECK_NEAR(sp_cm_l1_hit_rate(&c), rc ? 0.0 : 0.75, 1e-12);
    CHECK_EQ_INT(c.l2_read_sectors, 4194304); /* measured 4,194,304 in both */
    /* measured on the H100 (validation/results/h100/2026-11-22-transpose-probe.md): 0 and
     * 2,097,151 lookup hits: one-sector requests hit the partner their 64-byte fill brought */
    CHECK_EQ_INT(c.l2_read_hit_sectors, rc ? 0 : 2097152);
    CHECK_EQ_INT(c.l2_read_fill_sectors, rc ? 0 : 2097152);
    /* measured 149.5 MB (reads coalesced) and 134.2 MB: the model reads every sector once */
    CHECK_EQ_INT(c.dram_read_bytes, 134217728);
    CHECK(c.dram_read_bytes >= 134000000 && c.dram_read_bytes <= 150000000);
    /* every B sector is dirtied once: written back on eviction or still dirty in the L2 */
    CHECK_EQ_INT(c.dram_write_bytes + c.l2_dirty_bytes, 134217728);
    CHECK(c.l2_dirty_bytes > 0 && c.l2_dirty_bytes <= h100.l2_bytes);
    /* per array */
    CHECK_EQ_INT(a.ld_sectors, c.ld_sectors);
    CHECK_EQ_INT(a.st_sectors, 0);
    CHECK_EQ_INT(b.ld_sectors, 0);
    CHECK_EQ_INT(b.dram_write_bytes, c.dram_write_bytes);
    CHECK_EQ_INT(a.dram_read_bytes, c.dram_read_bytes);
    /* Hopper's raw L2 read hit rate: measured 0.04% and 33.34% (33% on the H200, DESIGN.md) */
    CHECK_NEAR(sp_cm_l2_raw_hit_rate_estimate(&c, &h100), rc ? 0.0 : 1.0 / 3.0, 1e-12);
    CHECK_NEAR(sp_cm_l2_read_hit_rate(&c), rc ? 0.0 : 0.5, 0);
    /* bounded memory: L2 of 1.6 M sectors + 132 L1s */
    CHECK(sp_cm_memsys_memory_bytes(m) < (size_t)200 << 20);
    sp_cm_memsys_free(m);
  }
}

/* Base vs Modeled on the strided-read transpose (smaller): the 4 warps that share each sector
 * load it 34 cycles apart, while its fill (from DRAM) takes 666: Modeled counts those as
 * lookup misses merged with the fill; L2 traffic is the same. */
static void test_transpose_modeled(void)
{
  sp_arch h100 = load_arch("h100");
  const int n = 1024, nsms = h100.sm_count;
  sp_cm_counters c[5];
  for (int v = 0; v < 5; v++) {
    sp_cm_options opt = {0};
    opt.l1_variant = v == 1 || v == 2 ? SP_CM_L1_MODELED : SP_CM_L1_BASE;
    opt.pending_refetch = v == 2;
    opt.time_fills = v == 4;
    opt.assoc = v == 3 ? SP_CM_SET_ASSOCIATIVE : SP_CM_FULLY_ASSOCIATIVE;
    sp_cm_memsys *m = sp_cm_memsys_create(&h100, nsms, 2, &opt);
    CHECK(m != NULL);
    if (!m) return;
    CHECK_EQ_INT(run_transpose(m, n, nsms, 0), 0);
    c[v] = total(m);
    sp_cm_memsys_free(m);
  }
  const int64_t sectors = (int64_t)n * n * 8 / 32;
  CHECK_EQ_INT(c[0].ld_sectors, 4 * sectors);
  CHECK_EQ_INT(c[0].ld_l1_hit_sectors, 3 * sectors);
  CHECK_EQ_INT(c[0].ld_l1_pending_sectors, 0);
  CHECK_EQ_INT(c[0].l2_read_sectors, sectors);
  CHECK_EQ_INT(c[1].ld_l1_hit_sectors, 0);
  CHECK_EQ_INT(c[1].ld_l1_pending_sectors, 3 * sectors);
  CHECK_EQ_INT(c[1].l2_read_sectors, sectors);
  CHECK_EQ_INT(c[1].dram_read_bytes, c[0].dram_read_bytes);
  CHECK_EQ_INT(c[2].ld_l1_hit_sectors, 0);
  CHECK_EQ_INT(c[2].l2_read_sectors, 4 * sectors);
  /* the 3 refetches of each sector, and the first load of every second sector: its partner's
   * 64-byte fill brought it */
  CHECK_EQ_INT(c[2].l2_read_hit_sectors, 3 * sectors + sectors / 2);
  CHECK_EQ_INT(c[2].dram_read_bytes, c[0].dram_read_bytes);
  /* set-associative (64-way L1, 16-way L2): the 32 lines a block shares fit any set */
  CHECK_EQ_INT(c[3].ld_l1_hit_sectors, 3 * sectors);
  CHECK_EQ_INT(c[3].l2_read_sectors, sectors);
  CHECK_EQ_INT(c[3].dram_read_bytes, c[0].dram_read_bytes);
  /* time_fills: Base's counts, and the hits Modeled calls pending set apart */
  CHECK_EQ_INT(c[4].ld_l1_hit_sectors, 3 * sectors);
  CHECK_EQ_INT(c[4].ld_l1_hit_pending_sectors, 3 * sectors);
  CHECK_EQ_INT(c[4].dram_read_bytes, c[0].dram_read_bytes);
}

/* The constructed case: warp 0 of SM 0 misses a line, warp 1 loads it 1 cycle later, warp 2
 * after 700 cycles of other loads (> the 666-cycle DRAM latency). */
static void test_base_vs_modeled(void)
{
  sp_arch h100 = load_arch("h100");
  sp_cm_counters c[2];
  for (int v = 0; v < 2; v++) {
    sp_cm_options opt = {0};
    opt.l1_variant = v ? SP_CM_L1_MODELED : SP_CM_L1_BASE;
    sp_cm_memsys *m = sp_cm_memsys_create(&h100, 4, 2, &opt);
    if (!m) {
      CHECK(m != NULL);
      return;
    }
    const uint64_t L = 1 << 20;
    emit(m, 0, 0, 0, L, 4, 4, 32); /* clock 0: miss, 4 sectors */
    emit(m, 0, 0, 0, L, 4, 4, 32); /* clock 1: Base hit 4, Modeled pending 4 */
    for (int k = 0; k < 700; k++) emit(m, 0, 1, 0, (uint64_t)(1 << 24) + k * 128, 4, 4, 32);
    emit(m, 0, 0, 0, L, 4, 4, 32); /* clock 702: hit in both */
    sp_cm_memsys_counters(m, 0, &c[v]);
    sp_cm_memsys_free(m);
  }
  CHECK_EQ_INT(c[0].ld_sectors, 12);
  CHECK_EQ_INT(c[0].ld_l1_hit_sectors, 8);
  CHECK_EQ_INT(c[0].ld_l1_pending_sectors, 0);
  CHECK_EQ_INT(c[1].ld_l1_hit_sectors, 4);
  CHECK_EQ_INT(c[1].ld_l1_pending_sectors, 4);
  CHECK_EQ_INT(c[0].l2_read_sectors, 4);
  CHECK_EQ_INT(c[1].l2_read_sectors, 4);
  /* an L2 hit fill completes sooner (283 cycles): a reload 300 cycles later hits */
  sp_cm_options opt = {0};
  opt.l1_variant = SP_CM_L1_MODELED;
  sp_cm_memsys *m = sp_cm_memsys_create(&h100, 4, 1, &opt);
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  emit(m, 1, 0, 0, 4096, 4, 4, 32);                      /* SM 1 brings the line into L2 */
  emit(m, 0, 0, 0, 4096, 4, 4, 32);                      /* SM 0, clock 0: L1 miss, L2 hit */
  for (int k = 0; k < 299; k++) emit(m, 0, 0, 0, (uint64_t)(1 << 24) + k * 128, 4, 4, 32);
  emit(m, 0, 0, 0, 4096, 4, 4, 32); /* clock 299 >= 283: hit */
  sp_cm_counters t = total(m);
  CHECK_EQ_INT(t.ld_l1_hit_sectors, 4);
  CHECK_EQ_INT(t.ld_l1_pending_sectors, 0);
  sp_cm_memsys_free(m);
}

/* time_fills (BASE): the hits whose line's latest fill is still in flight, by the SM's clock (one
 * tick a line of each instruction) and the L2 hit latency, are counted apart; nothing else
 * changes. */
static void test_time_fills_constructed(void)
{
  sp_arch h100 = load_arch("h100");
  const uint64_t lat = (uint64_t)ceil(h100.l2_hit_latency_cycles), L = 1 << 20;
  sp_cm_counters c[2];
  for (int v = 0; v < 2; v++) {
    sp_cm_options opt = {0};
    opt.time_fills = v == 1;
    sp_cm_memsys *m = sp_cm_memsys_create(&h100, 4, 2, &opt);
    if (!m) {
      CHECK(m != NULL);
      return;
    }
    emit(m, 0, 0, 0, L, 4, 4, 32); /* clock 0: miss, 4 sectors, ready at lat */
    emit(m, 0, 0, 0, L, 4, 4, 32); /* clock 1: 4 hits, pending */
    emit(m, 0, 0, 0, L, 4, 4, 32); /* clock 2: 4 hits, pending */
    emit(m, 1, 0, 0, L, 4, 4, 32); /* SM 1 has its own L1 and clock: a miss */
    for (uint64_t k = 0; k + 4 < lat; k++) emit(m, 0, 1, 0, (uint64_t)(1 << 24) + k * 128, 4, 4, 32);
    emit(m, 0, 0, 0, L, 4, 4, 32); /* clock lat - 1: still pending */
    emit(m, 0, 0, 0, L, 4, 4, 32); /* clock lat: landed */
    sp_cm_memsys_counters(m, 0, &c[v]);
    sp_cm_memsys_free(m);
  }
  CHECK_EQ_INT(c[1].ld_sectors, 24);
  CHECK_EQ_INT(c[1].ld_l1_hit_sectors, 16);
  CHECK_EQ_INT(c[1].ld_l1_hit_pending_sectors, 12);
  CHECK_EQ_INT(c[0].ld_l1_hit_pending_sectors, 0);
  c[1].ld_l1_hit_pending_sectors = 0;
  CHECK(memcmp(&c[0], &c[1], sizeof c[0]) == 0);
  sp_cm_options bad = {0};
  bad.time_fills = true;
  bad.l1_variant = SP_CM_L1_MODELED; /* MODELED counts those as misses already */
  CHECK(sp_cm_memsys_create(&h100, 4, 2, &bad) == NULL);
}

/* time_fills: a warp's hit on its own fill after it stored is no wait (its store waited for the
 * loads it stores); before the store, and another warp's hit, still are. Block 0's warp 0 is A,
 * block 1's warp 0 is B, both on SM 0; array 0 is read, array 1 written. */
static void test_time_fills_own_store(void)
{
  sp_arch h100 = load_arch("h100");
  const uint64_t L = 1 << 20, L2 = L + 4096, S = UINT64_C(1) << 28;
  sp_cm_options opt = {0};
  opt.time_fills = true;
  sp_cm_memsys *m = sp_cm_memsys_create(&h100, 4, 2, &opt);
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  emit_warp(m, 0, 0, 0, 0, 0, L, 4, 4, 32);  /* A: miss */
  emit_warp(m, 0, 0, 0, 0, 0, L, 4, 4, 32);  /* A, same iteration: pending (4) */
  emit_warp(m, 0, 0, 0, 1, 1, S, 4, 4, 32);  /* A stores */
  emit_warp(m, 0, 0, 0, 0, 0, L, 4, 4, 32);  /* A, next iteration: a hit it does not wait for */
  emit_warp(m, 0, 1, 0, 0, 0, L, 4, 4, 32);  /* B: pending (4) */
  emit_warp(m, 0, 0, 0, 0, 0, L2, 4, 4, 32); /* A: miss */
  emit_warp(m, 0, 1, 0, 1, 1, S, 4, 4, 32);  /* B stores, not A */
  emit_warp(m, 0, 0, 0, 0, 0, L2, 4, 4, 32); /* A: pending (4) */
  sp_cm_counters c;
  sp_cm_memsys_counters(m, 0, &c);
  CHECK_EQ_INT(c.ld_sectors, 24);
  CHECK_EQ_INT(c.ld_l1_hit_sectors, 16);
  CHECK_EQ_INT(c.ld_l1_hit_pending_sectors, 12);
  /* a reset forgets the stores: A's hit after the reset's first fill is pending again */
  sp_cm_memsys_reset(m);
  emit_warp(m, 0, 0, 0, 0, 0, L, 4, 4, 32);
  emit_warp(m, 0, 0, 0, 0, 0, L, 4, 4, 32);
  sp_cm_memsys_counters(m, 0, &c);
  CHECK_EQ_INT(c.ld_l1_hit_pending_sectors, 4);
  sp_cm_memsys_free(m);
}

/* A random warp access of loads or stores over `lines` 128-byte lines from 1 GiB. */
static void random_access(uint64_t *st, int nlanes_max, uint64_t lines, sp_warp_instr *wi)
{
  static const uint64_t strides[] = {4, 8, 32, 128, 260};
  memset(wi, 0, sizeof *wi);
  int nl = 1 + (int)(sp_test_rand(st) % (uint64_t)nlanes_max);
  uint64_t stride = strides[sp_test_rand(st) % 5];
  uint64_t off = sp_test_rand(st) % (lines * 32) * 4;
  wi->access_bytes = 4;
  wi->active = nl >= 32 ? UINT32_MAX : (UINT32_C(1) << nl) - 1;
  for (int l = 0; l < nl; l++) wi->addr[l] = (UINT64_C(1) << 30) + (off + (uint64_t)l * stride) % (lines * 128);
}

/* Against a direct count of the rule on random load streams of 4 SMs that fit the L1, and on
 * mixed streams that overflow it, every count but the pending hits equals the run without. */
/* Whether both models of a comparison were created; frees them (and fails) if not. */
static int both_created(sp_cm_memsys *m, sp_cm_memsys *o)
{
  CHECK(m && o);
  if (m && o) return 1;
  sp_cm_memsys_free(m);
  sp_cm_memsys_free(o);
  return 0;
}

static void test_time_fills_random(void)
{
  sp_arch h100 = load_arch("h100");
  const uint64_t lat = (uint64_t)ceil(h100.l2_hit_latency_cycles);
  uint64_t st = 0x7157f111;
  for (int trial = 0; trial < 60; trial++) {
    /* 0: loads of one warp over 64 lines; 1: loads and stores over 4096 lines (counts equal
     * only); 2: loads and stores of four warps over 64 lines (the L1 holds them all) */
    const int kind = trial % 3;
    const uint64_t lines = kind == 1 ? 4096 : 64;
    sp_cm_options on = {0}, off = {0};
    on.time_fills = true;
    sp_cm_memsys *m = sp_cm_memsys_create(&h100, 4, 1, &on), *o = sp_cm_memsys_create(&h100, 4, 1, &off);
    uint64_t clock[4] = {0}, ready[4][64], valid[4][64], filler[4][64], stored[4][4];
    memset(ready, 0, sizeof ready);
    memset(valid, 0, sizeof valid);
    memset(filler, 0, sizeof filler);
    memset(stored, 0, sizeof stored);
    int64_t want = 0, waited = 0;
    for (int i = 0; m && o && i < 3000; i++) {
      sp_warp_instr wi;
      random_access(&st, 32, lines, &wi);
      wi.sm = (int)(sp_test_rand(&st) % 4);
      wi.write = kind && sp_test_rand(&st) % 3 == 0;
      /* blocks 0-1, warps 0-1: keys 0, 1, 64, 65, whose store slots and line tags in memsys.c
       * differ (a shared slot would make the model count a hit pending that this rule does not) */
      const int w = kind == 2 ? (int)(sp_test_rand(&st) % 4) : 0;
      wi.block = w / 2;
      wi.warp = w % 2;
      CHECK_EQ_INT(sp_cm_memsys_access(m, &wi), 0);
      CHECK_EQ_INT(sp_cm_memsys_access(o, &wi), 0);
      if (kind == 1) continue;
      /* the rule: per line of the instruction (ascending), a hit is pending while the line's
       * latest miss is less than lat ticks old, unless that miss was this warp's and it has
       * stored since; the clock moves on by the instruction's lines; a store marks its sectors
       * valid (write-through, allocating) and is its warp's latest */
      uint64_t seen[32];
      int nseen = 0;
      uint64_t sec_mask[64] = {0};
      for (int l = 0; l < 32; l++)
        if (wi.active >> l & 1) {
          uint64_t a = wi.addr[l] - (UINT64_C(1) << 30);
          sec_mask[a / 128] |= UINT64_C(1) << (a % 128 / 32);
        }
      for (uint64_t ln = 0; ln < 64; ln++)
        if (sec_mask[ln]) seen[nseen++] = ln;
      uint64_t *rd = ready[wi.sm], *vd = valid[wi.sm], *fl = filler[wi.sm], now = clock[wi.sm];
      for (int k = 0; k < nseen; k++) {
        uint64_t ln = seen[k], hits = sec_mask[ln] & vd[ln];
        if (!wi.write && rd[ln] > now) {
          const uint64_t sw = stored[wi.sm][w]; /* its last store's tick + 1; 0: none */
          bool own = fl[ln] == (uint64_t)w + 1 && sw > 0 && sw - 1 + lat >= rd[ln];
          *(own ? &waited : &want) += __builtin_popcountll(hits);
        }
        if (!wi.write && sec_mask[ln] & ~vd[ln]) rd[ln] = now + lat, fl[ln] = (uint64_t)w + 1;
        vd[ln] |= sec_mask[ln];
      }
      if (wi.write) stored[wi.sm][w] = now + 1;
      clock[wi.sm] += (uint64_t)nseen;
    }
    if (!both_created(m, o)) return;
    sp_cm_counters a = total(m), b = total(o);
    CHECK(a.ld_l1_hit_pending_sectors <= a.ld_l1_hit_sectors);
    if (kind != 1) {
      CHECK_EQ_INT(a.ld_l1_hit_pending_sectors, want);
      CHECK(want > 0);
      CHECK(kind == 0 || waited > 0);
    }
    a.ld_l1_hit_pending_sectors = 0;
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    sp_cm_memsys_free(m);
    sp_cm_memsys_free(o);
  }
}

/* opt.l1_only: the same L1 counts and L2 requests as the full model, on random streams of
 * loads and stores over 4 SMs (an L2 small enough to miss, on two archs: the H100, whose L1
 * caches loads, and the K40, whose loads bypass it), with no L2 outcome at all. */
static void test_l1_only_random(void)
{
  const char *archs[] = {"h100", "k40"};
  uint64_t st = 0x11f0a7;
  for (int trial = 0; trial < 30; trial++) {
    sp_arch arch = load_arch(archs[trial % 2]);
    sp_cm_options full = {0}, only = {0};
    full.time_fills = only.time_fills = arch.l1_caches_global_loads != 0;
    full.l2_fraction = only.l2_fraction = 0.01;
    only.l1_only = true;
    sp_cm_memsys *m = sp_cm_memsys_create(&arch, 4, 1, &full), *o = sp_cm_memsys_create(&arch, 4, 1, &only);
    for (int i = 0; m && o && i < 3000; i++) {
      sp_warp_instr wi;
      random_access(&st, 32, trial % 3 ? 4096 : 64, &wi);
      wi.sm = (int)(sp_test_rand(&st) % 4);
      wi.write = sp_test_rand(&st) % 3 == 0;
      CHECK_EQ_INT(sp_cm_memsys_access(m, &wi), 0);
      CHECK_EQ_INT(sp_cm_memsys_access(o, &wi), 0);
    }
    if (!both_created(m, o)) return;
    sp_cm_counters a = total(m), b = total(o);
    CHECK(a.l2_read_sectors > 0 && a.l2_read_hit_sectors < a.l2_read_sectors && a.dram_read_bytes > 0);
    CHECK(b.l2_read_hit_sectors == 0 && b.l2_write_hit_sectors == 0 && b.dram_read_bytes == 0 &&
          b.dram_write_bytes == 0 && b.l2_dirty_bytes == 0 && b.l2_read_fill_sectors == 0 &&
          b.l2_read_cold_sectors == 0 && b.st_partial_alone_sectors == 0);
    /* everything else is the full model's */
    a.l2_read_hit_sectors = a.l2_write_hit_sectors = a.dram_read_bytes = a.dram_write_bytes = 0;
    a.l2_dirty_bytes = a.l2_read_fill_sectors = a.l2_read_cold_sectors = a.dram_read_cold_bytes = 0;
    a.st_partial_alone_sectors = 0;
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    sp_cm_memsys_free(m);
    sp_cm_memsys_free(o);
  }
  sp_arch h100 = load_arch("h100");
  sp_cm_options modeled = {.l1_variant = SP_CM_L1_MODELED, .l1_only = true};
  CHECK(sp_cm_memsys_create(&h100, 4, 1, &modeled) == NULL);
}

/* The L2 queue (opt.l2_queue) changes when the L2 looks a line up, never what it answers: on
 * random streams of 2 arrays over 4 SMs, with hashed sets (so that victims' slots are
 * prefetched), with and without L2 sampling and first-touch tracking, and on Kepler (loads
 * that bypass L1, 128-byte transactions), every counter of every array equals the run without
 * the queue, read in the middle of the stream (which drains the queue) and at its end. */
static void test_l2_queue_same_counts(void)
{
  const char *archs[] = {"h100", "k40", "a100"};
  uint64_t st = 0x9e0e;
  int64_t reads = 0, hits = 0, writebacks = 0, differ = 0;
  for (int trial = 0; trial < 36; trial++) {
    sp_arch arch = load_arch(archs[trial % 3]);
    sp_cm_options on = {0}, off = {0};
    on.l2_fraction = off.l2_fraction = 0.01;
    on.l2_set_sectors = off.l2_set_sectors = trial % 2 ? 64 : -1;
    on.l2_sample_shift = off.l2_sample_shift = trial % 4 >= 2 ? 2 : 0;
    on.l2_queue = 1;
    off.l2_queue = -1;
    sp_cm_memsys *m = sp_cm_memsys_create(&arch, 4, 2, &on), *o = sp_cm_memsys_create(&arch, 4, 2, &off);
    if (!both_created(m, o)) return;
    const uint64_t lines = trial % 3 ? 8192 : 256;
    if (trial % 6 >= 3)
      for (int a = 0; a < 2; a++) {
        CHECK_EQ_INT(sp_cm_memsys_track_footprint(m, a, UINT64_C(1) << 30, (int64_t)lines * 128, 1 << 20), 0);
        CHECK_EQ_INT(sp_cm_memsys_track_footprint(o, a, UINT64_C(1) << 30, (int64_t)lines * 128, 1 << 20), 0);
      }
    for (int i = 0; i < 4000; i++) {
      sp_warp_instr wi;
      random_access(&st, 32, lines, &wi);
      wi.sm = (int)(sp_test_rand(&st) % 4);
      wi.array = (int)(sp_test_rand(&st) % 2);
      wi.write = sp_test_rand(&st) % 3 == 0;
      CHECK_EQ_INT(sp_cm_memsys_access(m, &wi), 0);
      CHECK_EQ_INT(sp_cm_memsys_access(o, &wi), 0);
      if (i != 1999 && i != 3999) continue;
      for (int a = 0; a < 2; a++) {
        sp_cm_counters x, y;
        sp_cm_memsys_counters(m, a, &x);
        sp_cm_memsys_counters(o, a, &y);
        differ += memcmp(&x, &y, sizeof x) != 0;
        if (i == 3999) reads += x.l2_read_sectors, hits += x.l2_read_hit_sectors, writebacks += x.dram_write_bytes;
      }
    }
    CHECK_EQ_INT(sp_cm_memsys_lookups(m), sp_cm_memsys_lookups(o));
    sp_cm_memsys_free(m);
    sp_cm_memsys_free(o);
  }
  CHECK_EQ_INT(differ, 0);
  fprintf(stderr, "  L2 reads %lld, hits %lld, write-back bytes %lld; %lld counter sets differ\n",
          (long long)reads, (long long)hits, (long long)writebacks, (long long)differ);
  CHECK(hits > 0 && hits < reads && writebacks > 0);
}

static void test_kepler(void)
{
  sp_arch k40 = load_arch("k40");
  sp_cm_memsys *m = sp_cm_memsys_create(&k40, k40.sm_count, 1, NULL);
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  emit(m, 0, 0, 0, 4096, 8, 8, 32); /* coalesced doubles: 256 B */
  emit(m, 0, 0, 0, 4096, 8, 8, 32); /* again: bypasses L1, hits L2 */
  sp_cm_counters c = total(m);
  CHECK_EQ_INT(c.ld_requests, 2);
  CHECK_EQ_INT(c.ld_sectors, 4); /* 2 x 128-byte transactions per request */
  CHECK_EQ_INT(c.ld_l1_hit_sectors, 0);
  CHECK_EQ_INT(c.l2_read_sectors, 16); /* L2-only loads: the 32-byte sectors touched */
  CHECK_EQ_INT(c.l2_read_hit_sectors, 8);
  CHECK_EQ_INT(c.dram_read_bytes, 256);
  /* Eq. 7.3-7.7 on these counters: L1 miss rate 1, L2 miss rate 1/2, factor 128/32 = 4:
   * 4 * 1 * 4 * 200 + 4 * 1 * 0.5 * 4 * 300 = 3200 + 2400 */
  CHECK_NEAR(sp_cm_cost_xu(&c, &k40), 5600.0, 1e-9);
  /* a half-warp of floats at an odd 64-byte offset: 1 transaction, 2 L2 sectors */
  emit(m, 0, 0, 0, 8192 + 64, 4, 4, 16);
  emit(m, 0, 0, 1, 8192, 8, 8, 32); /* store: 2 transactions, 8 L2 sectors */
  sp_cm_counters d = total(m);
  CHECK_EQ_INT(d.ld_sectors - c.ld_sectors, 1);
  CHECK_EQ_INT(d.l2_read_sectors - c.l2_read_sectors, 2);
  CHECK_EQ_INT(d.st_sectors, 2);
  CHECK_EQ_INT(d.l2_write_sectors, 8);
  CHECK_EQ_INT(d.l2_write_hit_sectors, 2);
  sp_cm_memsys_free(m);

  /* kepler_transactions on a sectored arch that caches loads: an L1 miss fetches the line */
  sp_arch h100 = load_arch("h100");
  sp_cm_options opt = {0};
  opt.kepler_transactions = true;
  m = sp_cm_memsys_create(&h100, 2, 1, &opt);
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  emit(m, 0, 0, 0, 4096 + 8, 8, 8, 4); /* 32 bytes in one line */
  emit(m, 0, 0, 0, 4096 + 64, 8, 8, 4);
  c = total(m);
  CHECK_EQ_INT(c.ld_sectors, 2);
  CHECK_EQ_INT(c.ld_l1_hit_sectors, 1);
  CHECK_EQ_INT(c.l2_read_sectors, 4);
  CHECK_NEAR(sp_cm_cost_xu_ex(&c, &h100, 128, NULL),
             2 * 0.5 * 39.6 + 2 * 0.5 * 4 * 283 + 2 * 0.5 * 1.0 * 4 * 666, 1e-9);
  sp_cm_memsys_free(m);
}

/* Cyclic re-reads of nlines lines (one line per warp: 32 floats) on SM sm, `passes` times. */
static void cyclic(sp_cm_memsys *m, int sm, int nlines, int passes, uint64_t base)
{
  for (int p = 0; p < passes; p++)
    for (int k = 0; k < nlines; k++) emit(m, sm, 0, 0, base + (uint64_t)k * 128, 4, 4, 32);
}

static void test_l1_capacity_and_sharing(void)
{
  sp_arch h100 = load_arch("h100");
  for (int assoc = 0; assoc < 2; assoc++) {
    sp_cm_options opt = {0};
    opt.assoc = assoc ? SP_CM_SET_ASSOCIATIVE : SP_CM_FULLY_ASSOCIATIVE;
    opt.l1_bytes = 16 * 128; /* 16 lines */
    opt.l1_ways = 16;        /* set-associative: one set of 16 ways = fully associative */
    for (int nlines = 16; nlines <= 17; nlines++) {
      sp_cm_memsys *m = sp_cm_memsys_create(&h100, 2, 1, &opt);
      if (!m) {
        CHECK(m != NULL);
        return;
      }
      cyclic(m, 0, nlines, 1, 0);
      sp_cm_counters first = total(m);
      cyclic(m, 0, nlines, 4, 0);
      sp_cm_counters c = total(m);
      int64_t hits = c.ld_l1_hit_sectors - first.ld_l1_hit_sectors;
      int64_t sect = c.ld_sectors - first.ld_sectors;
      CHECK_EQ_INT(first.ld_l1_hit_sectors, 0);
      CHECK_EQ_INT(sect, 4 * nlines * 4);
      CHECK_EQ_INT(hits, nlines == 16 ? sect : 0); /* 100% when it fits, 0% one line over */
      /* the L2 (50 MB) holds everything: only the first pass reaches DRAM */
      CHECK_EQ_INT(c.dram_read_bytes, (int64_t)nlines * 128);
      CHECK_EQ_INT(c.l2_read_hit_sectors, c.l2_read_sectors - nlines * 4);
      /* SM 1 has its own L1: its first pass misses in L1 and hits in the shared L2 */
      sp_cm_counters before = total(m);
      cyclic(m, 1, nlines, 1, 0);
      c = total(m);
      CHECK_EQ_INT(c.ld_l1_hit_sectors - before.ld_l1_hit_sectors, 0);
      CHECK_EQ_INT(c.l2_read_sectors - before.l2_read_sectors, nlines * 4);
      CHECK_EQ_INT(c.l2_read_hit_sectors - before.l2_read_hit_sectors, nlines * 4);
      CHECK_EQ_INT(c.dram_read_bytes, before.dram_read_bytes);
      sp_cm_memsys_free(m);
    }
  }
  /* a sector miss in a resident line: the line is tagged, the other sector still misses */
  sp_cm_memsys *m = sp_cm_memsys_create(&h100, 1, 1, NULL);
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  emit(m, 0, 0, 0, 0, 4, 4, 8);  /* sector 0 */
  emit(m, 0, 0, 0, 32, 4, 4, 8); /* sector 1 of the same line: miss */
  emit(m, 0, 0, 0, 0, 4, 4, 16); /* sectors 0-1: hits */
  sp_cm_counters c = total(m);
  CHECK_EQ_INT(c.ld_sectors, 4);
  CHECK_EQ_INT(c.ld_l1_hit_sectors, 2);
  CHECK_EQ_INT(c.l2_read_sectors, 2);
  /* bad input */
  sp_warp_instr wi;
  memset(&wi, 0, sizeof wi);
  wi.access_bytes = 4;
  wi.active = 1;
  wi.sm = 1;
  CHECK_EQ_INT(sp_cm_memsys_access(m, &wi), -1); /* SM out of range */
  wi.sm = 0;
  wi.array = 1;
  CHECK_EQ_INT(sp_cm_memsys_access(m, &wi), -1); /* array out of range */
  wi.array = 0;
  wi.access_bytes = 17;
  CHECK_EQ_INT(sp_cm_memsys_access(m, &wi), -1);
  wi.access_bytes = 4;
  wi.active = 0;
  CHECK_EQ_INT(sp_cm_memsys_access(m, &wi), 0); /* no active lane: no request */
  CHECK_EQ_INT(total(m).ld_requests, 3);
  sp_cm_memsys_free(m);
  CHECK(sp_cm_memsys_create(&h100, 0, 1, NULL) == NULL);
  CHECK(sp_cm_memsys_create(&h100, 1, 0, NULL) == NULL);
  sp_cm_options bad = {0};
  bad.l2_fraction = 1.5;
  CHECK(sp_cm_memsys_create(&h100, 1, 1, &bad) == NULL);
}

/* Partly written store sectors written alone into valid clean data (st_partial_alone_sectors),
 * by hand: 32 lanes storing every other double (a red-black row) write 16 sectors in part. */
static void test_partial_alone(void)
{
  sp_arch h100 = load_arch("h100");
  sp_cm_memsys *m = sp_cm_memsys_create(&h100, 2, 2, NULL);
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  /* into sectors nothing holds: they cost (the L2 has no data to merge into) */
  emit(m, 0, 0, 1, 0, 16, 8, 32);
  sp_cm_counters c = total(m);
  CHECK_EQ_INT(c.st_partial_sectors, 16);
  CHECK_EQ_INT(c.st_partial_alone_sectors, 0);
  /* read first (another SM's load brings the 16 sectors), then stored every other double: alone */
  emit(m, 1, 1, 0, 1 << 20, 8, 8, 32);
  emit(m, 1, 1, 0, (1 << 20) + 256, 8, 8, 32);
  emit(m, 0, 1, 1, 1 << 20, 16, 8, 32);
  c = total(m);
  CHECK_EQ_INT(c.st_partial_sectors, 32);
  CHECK_EQ_INT(c.st_partial_alone_sectors, 16);
  /* the other doubles of the first 8 sectors written afterwards: those 8 lose it, and the second
   * store's own 8 are written into dirty sectors: charged */
  emit(m, 1, 1, 1, (1 << 20) + 8, 16, 8, 16);
  c = total(m);
  CHECK_EQ_INT(c.st_partial_sectors, 40);
  CHECK_EQ_INT(c.st_partial_alone_sectors, 8);
  /* whole doubles over 4 of the 8 sectors still alone take it from them */
  emit(m, 0, 1, 1, (1 << 20) + 256, 8, 8, 16);
  c = total(m);
  CHECK_EQ_INT(c.st_partial_sectors, 40);
  CHECK_EQ_INT(c.st_partial_alone_sectors, 4);
  sp_cm_memsys_free(m);
}

static void test_stores(void)
{
  sp_arch h100 = load_arch("h100");
  /* write-through-allocate (Hopper): counted as stores, no L1 hit; a later load hits L1 */
  sp_cm_memsys *m = sp_cm_memsys_create(&h100, 2, 2, NULL);
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  emit(m, 0, 1, 1, 4096, 4, 4, 32);
  emit(m, 0, 1, 1, 4096, 4, 4, 32);
  sp_cm_counters c = total(m);
  CHECK_EQ_INT(c.st_requests, 2);
  CHECK_EQ_INT(c.st_sectors, 8);
  CHECK_EQ_INT(c.l2_write_sectors, 8);
  CHECK_EQ_INT(c.l2_write_hit_sectors, 4);
  CHECK_EQ_INT(c.ld_l1_hit_sectors, 0);
  CHECK_EQ_INT(c.ld_sectors, 0);
  CHECK_EQ_INT(c.dram_read_bytes, 0); /* write-allocate of whole sectors: no fill */
  CHECK_EQ_INT(c.l2_dirty_bytes, 128);
  emit(m, 0, 0, 0, 4096, 4, 4, 32);
  c = total(m);
  CHECK_EQ_INT(c.ld_l1_hit_sectors, 4);
  CHECK_EQ_INT(c.l2_read_sectors, 0);
  emit(m, 1, 0, 0, 4096, 4, 4, 32); /* another SM: L1 miss, L2 hit on the written data */
  c = total(m);
  CHECK_EQ_INT(c.l2_read_hit_sectors, 4);
  CHECK_EQ_INT(c.dram_read_bytes, 0);
  sp_cm_memsys_free(m);

  /* bypass (Kepler's store policy) on an L1 that caches loads: the store invalidates */
  sp_arch a = h100;
  a.l1_store_policy = SP_L1_STORE_BYPASS;
  m = sp_cm_memsys_create(&a, 1, 1, NULL);
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  emit(m, 0, 0, 0, 4096, 4, 4, 32); /* miss */
  emit(m, 0, 0, 0, 4096, 4, 4, 32); /* hit 4 */
  emit(m, 0, 0, 1, 4096, 4, 4, 8);  /* store sector 0 */
  emit(m, 0, 0, 0, 4096, 4, 4, 32); /* sector 0 misses (L2 hit), 1-3 hit */
  c = total(m);
  CHECK_EQ_INT(c.ld_l1_hit_sectors, 7);
  CHECK_EQ_INT(c.l2_read_sectors, 5);
  CHECK_EQ_INT(c.l2_read_hit_sectors, 1);
  sp_cm_memsys_free(m);

  /* write-through-no-allocate: a store does not bring the line into L1 */
  a.l1_store_policy = SP_L1_STORE_WRITE_THROUGH_NO_ALLOC;
  m = sp_cm_memsys_create(&a, 1, 1, NULL);
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  emit(m, 0, 0, 1, 4096, 4, 4, 32);
  emit(m, 0, 0, 0, 4096, 4, 4, 32);
  c = total(m);
  CHECK_EQ_INT(c.ld_l1_hit_sectors, 0);
  CHECK_EQ_INT(c.l2_read_hit_sectors, 4);
  sp_cm_memsys_free(m);

  /* L2 write-back: a 4 KB L2 (128 sectors) filled with dirty data, then 128 other sectors read:
   * every dirty sector is written back once, attributed to the array that wrote it */
  a = h100;
  a.l2_bytes = 4096;
  a.l2_reuse_bytes = 0; /* all of it */
  m = sp_cm_memsys_create(&a, 1, 2, NULL);
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  for (int k = 0; k < 32; k++) emit(m, 0, 1, 1, (uint64_t)k * 128, 4, 4, 32);
  c = total(m);
  CHECK_EQ_INT(c.l2_dirty_bytes, 4096);
  CHECK_EQ_INT(c.dram_write_bytes, 0);
  for (int k = 0; k < 32; k++) emit(m, 0, 0, 0, (uint64_t)(1 << 20) + k * 128, 4, 4, 32);
  sp_cm_counters c0, c1;
  sp_cm_memsys_counters(m, 0, &c0);
  sp_cm_memsys_counters(m, 1, &c1);
  CHECK_EQ_INT(c1.dram_write_bytes, 4096);
  CHECK_EQ_INT(c0.dram_write_bytes, 0);
  CHECK_EQ_INT(c1.l2_dirty_bytes, 0);
  CHECK_EQ_INT(c0.dram_read_bytes, 4096);
  sp_cm_memsys_free(m);

  /* write-back-no-allocate: a store miss goes to DRAM, a store hit dirties the sector */
  a.l2_store_policy = SP_L2_STORE_WRITE_BACK_NO_ALLOC;
  m = sp_cm_memsys_create(&a, 1, 1, NULL);
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  emit(m, 0, 0, 1, 0, 4, 4, 32); /* miss: 128 B to DRAM */
  emit(m, 0, 0, 0, 128, 4, 4, 32);
  emit(m, 0, 0, 1, 128, 4, 4, 32); /* hit: dirty */
  c = total(m);
  CHECK_EQ_INT(c.dram_write_bytes, 128);
  CHECK_EQ_INT(c.l2_write_hit_sectors, 4);
  CHECK_EQ_INT(c.l2_dirty_bytes, 128);
  sp_cm_memsys_free(m);
}

static void test_cost(void)
{
  sp_arch h100 = load_arch("h100"), k40 = load_arch("k40");
  sp_cm_counters c = {0};
  c.ld_sectors = 1000;
  c.ld_l1_hit_sectors = 750;
  c.l2_read_sectors = 250;
  c.l2_read_hit_sectors = 50;
  /* h100: 1000*0.75*39.6 + 1000*0.25*1*283 + 1000*0.25*0.8*1*666 */
  double parts[3];
  CHECK_NEAR(sp_cm_cost_xu(&c, &h100), 29700.0 + 70750.0 + 133200.0, 1e-6);
  CHECK_NEAR(sp_cm_cost_xu_ex(&c, &h100, 32, parts), 233650.0, 1e-6);
  CHECK_NEAR(parts[0], 29700.0, 1e-6);
  CHECK_NEAR(parts[1], 70750.0, 1e-6);
  CHECK_NEAR(parts[2], 133200.0, 1e-6);
  /* k40: no L1 hits, 100 transactions of 128 B, L2 400 sectors of which 100 hit:
   * 0 + 100*1*4*200 + 100*1*0.75*4*300 */
  sp_cm_counters k = {0};
  k.ld_sectors = 100;
  k.l2_read_sectors = 400;
  k.l2_read_hit_sectors = 100;
  CHECK_NEAR(sp_cm_cost_xu(&k, &k40), 80000.0 + 90000.0, 1e-6);
  sp_cm_counters z = {0};
  CHECK_NEAR(sp_cm_cost_xu(&z, &h100), 0.0, 0);
  /* raw-rate estimate: P = 1 is the plain rate; all hits stay 100% */
  CHECK_NEAR(sp_cm_l2_raw_hit_rate_estimate(&k, &k40), 0.25, 1e-12);
  sp_arch h100_32 = h100; /* the partition hypothesis, without 64-byte fills */
  h100_32.l2_fill_bytes = 0;
  CHECK_NEAR(sp_cm_l2_raw_hit_rate_estimate(&c, &h100_32), (50 + 100.0) / (250 + 100.0), 1e-12);
  c.l2_read_fill_sectors = 150; /* with them: H / (N + F) */
  CHECK_NEAR(sp_cm_l2_raw_hit_rate_estimate(&c, &h100), 50.0 / (250 + 150.0), 1e-12);
}

/* Set-associative (arch-default ways: 64 in L1, 16 in L2) and fully associative agree on every
 * counter while the working set cannot overflow a set. */
static void test_setassoc_tiny(void)
{
  sp_arch h100 = load_arch("h100");
  sp_cm_counters c[2];
  for (int v = 0; v < 2; v++) {
    sp_cm_options opt = {0};
    opt.assoc = v ? SP_CM_SET_ASSOCIATIVE : SP_CM_FULLY_ASSOCIATIVE;
    sp_cm_memsys *m = sp_cm_memsys_create(&h100, 3, 2, &opt);
    if (!m) {
      CHECK(m != NULL);
      return;
    }
    uint64_t state = 12345;
    for (int k = 0; k < 20000; k++) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      uint64_t r = state >> 33;
      int sm = (int)(r % 3), write = (r >> 2) % 5 == 0, array = (int)((r >> 5) & 1);
      uint64_t line = (r >> 6) % 40;          /* 40 lines */
      uint64_t stride = ((r >> 12) & 1) ? 4 : 132; /* coalesced or scattered */
      int lanes = 1 + (int)((r >> 13) % 32);
      emit(m, sm, array, write, (uint64_t)array * (1 << 21) + line * 128, stride, 4, lanes);
    }
    c[v] = total(m);
    sp_cm_memsys_free(m);
  }
  CHECK(c[0].ld_l1_hit_sectors > 0 && c[0].l2_read_hit_sectors > 0);
  CHECK(memcmp(&c[0], &c[1], sizeof c[0]) == 0);
  CHECK_EQ_INT(c[1].ld_l1_hit_sectors, c[0].ld_l1_hit_sectors);
  CHECK_EQ_INT(c[1].l2_read_sectors, c[0].l2_read_sectors);
  CHECK_EQ_INT(c[1].l2_read_hit_sectors, c[0].l2_read_hit_sectors);
}

/* The extended LRU lookups: payloads follow their units, victims are reported. */
static void test_lookup_payload(void)
{
  sp_cm_lru *f = sp_cm_lru_create(2);
  sp_cm_setassoc *s = sp_cm_setassoc_create(1, 2, NULL, NULL);
  if (!f || !s) {
    CHECK(0);
    sp_cm_lru_free(f);
    sp_cm_setassoc_free(s);
    return;
  }
  for (int v = 0; v < 2; v++) {
    sp_cm_lookup r;
#define LK(u, mode) (v ? sp_cm_setassoc_lookup(s, u, mode, &r) : sp_cm_lru_lookup(f, u, mode, &r))
    *LK(10, SP_CM_LOOKUP_INSERT) = 100;
    CHECK(!r.hit && !r.evicted);
    *LK(11, SP_CM_LOOKUP_INSERT) = 110;
    CHECK(LK(12, SP_CM_LOOKUP_PEEK) == NULL && !r.hit);
    CHECK(LK(12, SP_CM_LOOKUP_TOUCH) == NULL);
    CHECK_EQ_INT(*LK(10, SP_CM_LOOKUP_PEEK), 100); /* PEEK: 10 stays LRU */
    uint64_t *p = LK(12, SP_CM_LOOKUP_INSERT);
    CHECK(r.evicted && r.victim == 10 && r.victim_payload == 100);
    CHECK_EQ_INT(*p, 0);
    *p = 120;
    CHECK_EQ_INT(*LK(11, SP_CM_LOOKUP_TOUCH), 110); /* 11 becomes MRU */
    LK(13, SP_CM_LOOKUP_INSERT);
    CHECK(r.evicted && r.victim == 12 && r.victim_payload == 120);
    CHECK(r.hit == 0);
#undef LK
  }
  CHECK(sp_cm_lru_memory_bytes(f) > 0 && sp_cm_setassoc_memory_bytes(s) > 0);
  sp_cm_lru_free(f);
  sp_cm_setassoc_free(s);
}

/* 64-byte L2 fills by hand: a column walk of 8-byte elements, one lane (one sector) per
 * request, 64 rows 4 KiB apart, SM 0. Columns 0..ncols-1 in order, each over all rows.
 * Column 0 misses in L1 and L2 in every row; with 64-byte fills each miss also brings the row's
 * second sector (columns 4..7). Columns 1-3 then hit in L1 (the sector is valid); column 4 misses
 * in L1 (its sector is not valid there) and hits in L2; columns 5-7 hit in L1. */
static void test_l2_fill_64(void)
{
  sp_arch h100 = load_arch("h100");
  CHECK_EQ_INT(h100.l2_fill_bytes, 64);
  sp_arch h100_32 = h100;
  h100_32.l2_fill_bytes = 0; /* the behaviour of an arch without the field */
  const int rows = 64;
  const uint64_t A = UINT64_C(1) << 30, pitch = 4096;
  for (int fill64 = 0; fill64 <= 1; fill64++) {
    for (int ncols = 1; ncols <= 8; ncols += 7) {
      sp_cm_memsys *m = sp_cm_memsys_create(fill64 ? &h100 : &h100_32, 1, 1, NULL);
      CHECK(m != NULL);
      if (!m) return;
      for (int j = 0; j < ncols; j++)
        for (int i = 0; i < rows; i++) CHECK_EQ_INT(emit(m, 0, 0, 0, A + i * pitch + j * 8, 8, 8, 1), 0);
      sp_cm_counters c = total(m);
      CHECK_EQ_INT(c.ld_requests, rows * ncols);
      CHECK_EQ_INT(c.ld_sectors, rows * ncols);
      if (ncols == 1) { /* column 0 only: every row one miss; a 64-byte fill doubles DRAM bytes */
        CHECK_EQ_INT(c.ld_l1_hit_sectors, 0);
        CHECK_EQ_INT(c.l2_read_sectors, rows);
        CHECK_EQ_INT(c.l2_read_hit_sectors, 0);
        CHECK_EQ_INT(c.l2_read_fill_sectors, fill64 ? rows : 0);
        CHECK_EQ_INT(c.dram_read_bytes, rows * (fill64 ? 64 : 32));
      } else { /* all 8 columns: the same DRAM bytes, half the L2 lookups hit with 64-byte fills */
        CHECK_EQ_INT(c.ld_l1_hit_sectors, rows * 6);
        CHECK_EQ_INT(c.l2_read_sectors, rows * 2);
        CHECK_EQ_INT(c.l2_read_hit_sectors, fill64 ? rows : 0);
        CHECK_EQ_INT(c.dram_read_bytes, rows * 64);
        CHECK_NEAR(sp_cm_l2_raw_hit_rate_estimate(&c, &h100), fill64 ? 1.0 / 3.0 : 0.0, 1e-12);
      }
      sp_cm_memsys_free(m);
    }
  }
  /* two sectors of one 64-byte block in one request both miss: one fill, no partner hit; the
   * block's other half (a different block) is untouched */
  sp_cm_memsys *m = sp_cm_memsys_create(&h100, 1, 1, NULL);
  CHECK(m != NULL);
  if (!m) return;
  CHECK_EQ_INT(emit(m, 0, 0, 0, A, 8, 8, 8), 0);      /* bytes 0..63: sectors 0 and 1 */
  CHECK_EQ_INT(emit(m, 0, 0, 0, A + 64, 8, 8, 1), 0); /* sector 2: a new block */
  sp_cm_counters c = total(m);
  CHECK_EQ_INT(c.l2_read_sectors, 3);
  CHECK_EQ_INT(c.l2_read_hit_sectors, 0);
  CHECK_EQ_INT(c.l2_read_fill_sectors, 1); /* sector 3 */
  CHECK_EQ_INT(c.dram_read_bytes, 128);
  CHECK_EQ_INT(emit(m, 0, 0, 0, A + 96, 8, 8, 1), 0); /* sector 3: an L1 miss, an L2 hit */
  c = total(m);
  CHECK_EQ_INT(c.l2_read_hit_sectors, 1);
  CHECK_EQ_INT(c.dram_read_bytes, 128);
  sp_cm_memsys_free(m);
}


/* The L2 keeps lines: a line one sector of which is in use takes a whole line of the capacity.
 * An L2 of 64 lines (256 sectors, fully associative, loads not cached in L1), SM 0: read sector
 * 0 of line 0 (a 64-byte fill brings sector 1 too), then sector 0 of `others` other lines (each
 * with its partner: 2 sectors a line), then sector 1 of line 0. Counting sectors, 96 other lines
 * hold 192 sectors and line 0's partner would still be resident; counting lines it is evicted
 * after 64 others: then sector 1 misses and is read again (another 64-byte fill). */
static void test_l2_keeps_lines(void)
{
  sp_arch a = load_arch("h100");
  a.l1_caches_global_loads = 0;
  a.l2_bytes = a.l2_reuse_bytes = 64 * 128;
  sp_cm_options opt = {0};
  opt.l2_set_sectors = -1;
  const uint64_t A = UINT64_C(1) << 30;
  const int others[] = {62, 63, 64, 96};
  for (int k = 0; k < 4; k++) {
    sp_cm_memsys *m = sp_cm_memsys_create(&a, 1, 1, &opt);
    CHECK(m != NULL);
    if (!m) return;
    CHECK_EQ_INT(emit(m, 0, 0, 0, A, 8, 8, 1), 0);
    for (int i = 1; i <= others[k]; i++) CHECK_EQ_INT(emit(m, 0, 0, 0, A + (uint64_t)i * 128, 8, 8, 1), 0);
    CHECK_EQ_INT(emit(m, 0, 0, 0, A + 32, 8, 8, 1), 0);
    sp_cm_counters c = total(m);
    const int kept = others[k] <= 63; /* line 0 and 63 others fill the 64 lines */
    CHECK_EQ_INT(c.l2_read_sectors, others[k] + 2);
    CHECK_EQ_INT(c.l2_read_hit_sectors, kept);
    CHECK_EQ_INT(c.dram_read_bytes, (others[k] + 1 + !kept) * 64);
    CHECK_EQ_INT(c.l2_read_fill_sectors, others[k] + 1 + !kept); /* the re-read brings sector 0 */
    sp_cm_memsys_free(m);
  }
}

/* A brute-force sectored L2 for test_l2_lines_brute_force: `cap` lines in an array, LRU by a use
 * stamp, each with its valid and dirty sectors and the array its dirty sectors are charged to;
 * 64-byte fills. Counts per array as memsys.c does. */
typedef struct bf_line { uint64_t line, stamp; unsigned valid, dirty; int owner, used; } bf_line;
typedef struct bf_l2 { bf_line l[16]; int cap; uint64_t now; sp_cm_counters c[2]; } bf_l2;

static bf_line *bf_find(bf_l2 *b, uint64_t line)
{
  bf_line *victim = NULL;
  for (int i = 0; i < b->cap; i++) {
    if (b->l[i].used && b->l[i].line == line) {
      b->l[i].stamp = ++b->now;
      return &b->l[i];
    }
    if (!victim || !b->l[i].used || (victim->used && b->l[i].stamp < victim->stamp)) victim = &b->l[i];
  }
  if (victim->used && victim->dirty) {
    int64_t bytes = 32 * __builtin_popcount(victim->dirty);
    b->c[victim->owner].dram_write_bytes += bytes;
    b->c[victim->owner].l2_dirty_bytes -= bytes;
  }
  *victim = (bf_line){line, ++b->now, 0, 0, 0, 1};
  return victim;
}

/* One instruction's distinct sectors, ascending, for one array. */
static void bf_access(bf_l2 *b, const uint64_t *secs, int n, int array, int write)
{
  sp_cm_counters *c = &b->c[array];
  for (int i = 0; i < n;) {
    uint64_t line = secs[i] >> 2;
    unsigned bits = 0;
    for (; i < n && secs[i] >> 2 == line; i++) bits |= 1u << (secs[i] & 3);
    bf_line *L = bf_find(b, line);
    int k = __builtin_popcount(bits);
    if (write) {
      c->l2_write_sectors += k;
      c->l2_write_hit_sectors += __builtin_popcount(bits & L->valid);
      if (L->dirty && L->owner != array) {
        b->c[L->owner].l2_dirty_bytes -= 32 * __builtin_popcount(L->dirty);
        c->l2_dirty_bytes += 32 * __builtin_popcount(L->dirty);
      }
      c->l2_dirty_bytes += 32 * __builtin_popcount(bits & ~L->dirty);
      L->valid |= bits, L->dirty |= bits, L->owner = array;
      continue;
    }
    c->l2_read_sectors += k;
    c->l2_read_hit_sectors += __builtin_popcount(bits & L->valid);
    unsigned missed = bits & ~L->valid;
    c->dram_read_bytes += 32 * __builtin_popcount(missed);
    L->valid |= missed;
    for (unsigned blk = 0; blk < 4; blk += 2) {
      unsigned fill = (3u << blk) & ~L->valid;
      if (!(missed & (3u << blk)) || !fill) continue;
      c->l2_read_fill_sectors += __builtin_popcount(fill);
      c->dram_read_bytes += 32 * __builtin_popcount(fill);
      L->valid |= fill;
    }
  }
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The model's L2 (fully associative, loads not cached in L1, so every sector reaches it) against
 * bf_l2 on random loads and stores of two arrays over the same 48 lines, with L2s of 1, 3 and 16
 * lines: every L2 counter of each array equal. */
static void test_l2_lines_brute_force(void)
{
  sp_arch a = load_arch("h100");
  CHECK_EQ_INT(a.l2_fill_bytes, 64);
  CHECK_EQ_INT(a.l2_store_policy, SP_L2_STORE_WRITE_BACK_ALLOC);
  a.l1_caches_global_loads = 0;
  sp_cm_options opt = {0};
  opt.l2_set_sectors = -1;
  const uint64_t A = UINT64_C(1) << 30;
  static const uint64_t strides[] = {4, 8, 16, 32, 40, 128, 256};
  const int caps[] = {1, 3, 16};
  uint64_t rng = 11, wrong = 0, hits = 0, writebacks = 0;
  for (int k = 0; k < 3; k++) {
    a.l2_bytes = a.l2_reuse_bytes = caps[k] * 128;
    sp_cm_memsys *m = sp_cm_memsys_create(&a, 1, 2, &opt);
    CHECK(m != NULL);
    if (!m) return;
    bf_l2 b;
    memset(&b, 0, sizeof b);
    b.cap = caps[k];
    for (int n = 0; n < 20000; n++) {
      rng = rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
      uint64_t r = rng >> 11;
      int array = r & 1, write = (r >> 1) % 3 == 0, lanes = 1 + (int)((r >> 3) % 32);
      uint64_t stride = strides[(r >> 8) % 7], base = A + ((r >> 12) % (48 * 128)) / 4 * 4;
      uint32_t bytes = (r >> 30) & 1 ? 8 : 4;
      if (base % bytes) base -= base % bytes;
      uint64_t secs[64];
      int ns = 0;
      for (int l = 0; l < lanes; l++) {
        uint64_t lo = base + (uint64_t)l * stride;
        for (uint64_t s = lo / 32; s <= (lo + bytes - 1) / 32; s++) secs[ns++] = s;
      }
      qsort(secs, (size_t)ns, sizeof *secs, cmp_u64);
      int nd = 0;
      for (int i = 0; i < ns; i++)
        if (!nd || secs[i] != secs[nd - 1]) secs[nd++] = secs[i];
      CHECK_EQ_INT(emit(m, 0, array, write, base, stride, bytes, lanes), 0);
      bf_access(&b, secs, nd, array, write);
    }
    for (int g = 0; g < 2; g++) {
      sp_cm_counters c;
      sp_cm_memsys_counters(m, g, &c);
      const sp_cm_counters *e = &b.c[g];
      wrong += c.l2_read_sectors != e->l2_read_sectors || c.l2_read_hit_sectors != e->l2_read_hit_sectors ||
               c.l2_read_fill_sectors != e->l2_read_fill_sectors || c.dram_read_bytes != e->dram_read_bytes ||
               c.l2_write_sectors != e->l2_write_sectors || c.l2_write_hit_sectors != e->l2_write_hit_sectors ||
               c.dram_write_bytes != e->dram_write_bytes || c.l2_dirty_bytes != e->l2_dirty_bytes;
      hits += (uint64_t)c.l2_read_hit_sectors;
      writebacks += (uint64_t)c.dram_write_bytes;
    }
    sp_cm_memsys_free(m);
  }
  CHECK_EQ_INT(wrong, 0);
  fprintf(stderr, "  L2 read hits %llu, write-back bytes %llu, %llu counter sets differ\n", (unsigned long long)hits,
          (unsigned long long)writebacks, (unsigned long long)wrong);
  CHECK(hits > 1000 && writebacks > 1000); /* the traffic reaches hits and evictions of dirt */
}

/* L2 sampling (opt.l2_sample_shift) against the exact L2. Requests, sectors and L1 counts are
 * untouched by it; L2 hits, DRAM bytes and write-backs are estimates. */
static double rel_err(int64_t est, int64_t exact)
{
  return exact ? fabs((double)(est - exact)) / (double)exact : (double)(est != 0);
}

static void test_l2_sampling(void)
{
  sp_arch h100 = load_arch("h100");
  sp_cm_options opt = {0};
  opt.l2_sample_shift = 4;
  opt.assoc = SP_CM_SET_ASSOCIATIVE; /* only the fully associative BASE model is sampled */
  CHECK(sp_cm_memsys_create(&h100, 1, 1, &opt) == NULL);
  opt.assoc = SP_CM_FULLY_ASSOCIATIVE;
  opt.l1_variant = SP_CM_L1_MODELED;
  CHECK(sp_cm_memsys_create(&h100, 1, 1, &opt) == NULL);
  opt.l1_variant = SP_CM_L1_BASE;

  /* the DESIGN.md transpose (2048^2: 64 MB, beyond the 50 MB L2) on all 132 SMs */
  const int n = 2048, nsms = h100.sm_count;
  for (int rc = 1; rc >= 0; rc--) {
    sp_cm_counters c[2];
    for (int sampled = 0; sampled <= 1; sampled++) {
      opt.l2_sample_shift = sampled ? 4 : 0;
      sp_cm_memsys *m = sp_cm_memsys_create(&h100, nsms, 2, &opt);
      CHECK(m != NULL);
      if (!m) return;
      CHECK_EQ_INT(run_transpose(m, n, nsms, rc), 0);
      c[sampled] = total(m);
      sp_cm_memsys_free(m);
    }
    CHECK_EQ_INT(c[1].ld_sectors, c[0].ld_sectors);
    CHECK_EQ_INT(c[1].ld_l1_hit_sectors, c[0].ld_l1_hit_sectors);
    CHECK_EQ_INT(c[1].l2_read_sectors, c[0].l2_read_sectors);
    CHECK_EQ_INT(c[1].l2_write_sectors, c[0].l2_write_sectors);
    CHECK(rel_err(c[1].l2_read_hit_sectors, c[0].l2_read_hit_sectors) < 0.02);
    CHECK(rel_err(c[1].dram_read_bytes, c[0].dram_read_bytes) < 0.02);
    CHECK(rel_err(c[1].dram_write_bytes + c[1].l2_dirty_bytes,
                  c[0].dram_write_bytes + c[0].l2_dirty_bytes) < 0.02);
  }

  /* capacity: one SM without L1 caching sweeps a working set of f x the L2 twice with
   * whole-line requests; a fully associative LRU (l2_set_sectors -1) keeps all of it for
   * f = 0.8 (second sweep all hits) and none of it for f = 1.2 (a cyclic sweep larger than an
   * LRU cache misses every time). The L2's capacity is the arch's l2_reuse_bytes (33.9 MiB on
   * the H100), or l2_bytes without it. (The H100's hashed sets: test_l2_sets.) */
  sp_arch no_l1 = h100;
  no_l1.l1_caches_global_loads = 0;
  CHECK_EQ_INT(sp_arch_l2_model_bytes(&no_l1), 35546624);
  opt.l2_set_sectors = -1;
  for (int whole = 0; whole <= 1; whole++) {
    sp_arch a = no_l1;
    if (whole) a.l2_reuse_bytes = 0;
    const double capacity = whole ? (double)h100.l2_bytes : (double)h100.l2_reuse_bytes;
    for (int big = 0; big <= 1; big++) {
      uint64_t lines = (uint64_t)((big ? 1.2 : 0.8) * capacity / 128);
      opt.l2_sample_shift = 5;
      sp_cm_memsys *m = sp_cm_memsys_create(&a, 1, 1, &opt);
      CHECK(m != NULL);
      if (!m) return;
      for (int pass = 0; pass < 2; pass++)
        for (uint64_t l = 0; l < lines; l++)
          CHECK_EQ_INT(emit(m, 0, 0, 0, (UINT64_C(1) << 32) + l * 128, 4, 4, 32), 0);
      sp_cm_counters c = total(m);
      CHECK_EQ_INT(c.l2_read_sectors, (int64_t)(8 * lines));
      double second_hits = (double)c.l2_read_hit_sectors / (double)(4 * lines);
      CHECK_NEAR(second_hits, big ? 0.0 : 1.0, 0.01);
      sp_cm_memsys_free(m);
    }
  }

  opt.l2_set_sectors = 0;
  /* a small array (64 KiB, its footprint tracked) is simulated in full: the same counts as the
   * exact L2, whatever the hash would have sampled of it */
  sp_cm_counters small[2];
  for (int sampled = 0; sampled <= 1; sampled++) {
    opt.l2_sample_shift = sampled ? 5 : 0;
    sp_cm_memsys *m = sp_cm_memsys_create(&no_l1, 1, 1, &opt);
    CHECK(m != NULL);
    if (!m) return;
    const uint64_t base = UINT64_C(1) << 32;
    CHECK_EQ_INT(sp_cm_memsys_track_footprint(m, 0, base, 65536, 1 << 20), 0);
    for (int pass = 0; pass < 3; pass++)
      for (uint64_t l = 0; l < 512; l += 1 + (uint64_t)pass)
        CHECK_EQ_INT(emit(m, 0, 0, 0, base + l * 128, 4, 4, 32), 0);
    small[sampled] = total(m);
    sp_cm_memsys_free(m);
  }
  CHECK(memcmp(&small[0], &small[1], sizeof small[0]) == 0);
  CHECK(small[0].l2_read_hit_sectors > 0);

  /* first touches outside the sample are counted exactly: 16 MiB (too large to be simulated in
   * full, small enough to stay in the L2) read as lone sectors, one in each 64-byte fill block,
   * then the other sector of each, then some of the stores' sectors: the first pass misses
   * every sector and brings both halves of each block from DRAM, the second hits them all, and
   * the reads after the stores hit; sampled, the same counts, not the hash's share scaled */
  sp_cm_counters first[2];
  const uint64_t fp_base = UINT64_C(1) << 32, fp_bytes = UINT64_C(16) << 20, blocks64 = fp_bytes / 64;
  const uint64_t st_base = fp_base + fp_bytes, st_bytes = UINT64_C(1) << 20;
  for (int sampled = 0; sampled <= 1; sampled++) {
    opt.l2_sample_shift = sampled ? 5 : 0;
    sp_cm_memsys *m = sp_cm_memsys_create(&no_l1, 1, 2, &opt);
    CHECK(m != NULL);
    if (!m) return;
    CHECK_EQ_INT(sp_cm_memsys_track_footprint(m, 0, fp_base, (int64_t)fp_bytes, 1 << 20), 0);
    CHECK_EQ_INT(sp_cm_memsys_track_footprint(m, 1, st_base, (int64_t)st_bytes, 1 << 20), 0);
    for (int half = 0; half < 2; half++)
      for (uint64_t b = 0; b < blocks64; b += 32) /* 32 lanes, one sector of 32 blocks each */
        CHECK_EQ_INT(emit(m, 0, 0, 0, fp_base + b * 64 + (uint64_t)half * 32, 64, 8, 32), 0);
    for (uint64_t o = 0; o < st_bytes; o += 1024) CHECK_EQ_INT(emit(m, 0, 1, 1, st_base + o, 32, 8, 32), 0);
    for (uint64_t o = 0; o < st_bytes; o += 1024) CHECK_EQ_INT(emit(m, 0, 1, 0, st_base + o, 32, 8, 32), 0);
    first[sampled] = total(m);
    sp_cm_memsys_free(m);
  }
  for (int sampled = 0; sampled <= 1; sampled++) {
    CHECK_EQ_INT(first[sampled].l2_read_sectors, (int64_t)(2 * blocks64 + st_bytes / 32));
    CHECK_EQ_INT(first[sampled].l2_read_cold_sectors, (int64_t)blocks64);
    CHECK_EQ_INT(first[sampled].dram_read_cold_bytes, (int64_t)fp_bytes);
    CHECK_EQ_INT(first[sampled].dram_read_bytes, (int64_t)fp_bytes);
    CHECK_EQ_INT(first[sampled].l2_read_hit_sectors, (int64_t)(blocks64 + st_bytes / 32));
  }
}

/* The H100's L2 in hashed sets of 512 sectors (arch l2_reuse_set_sectors). One SM without L1
 * caching sweeps f x the L2's 33.9 MiB twice in whole-line requests (4 sectors, no partner
 * fills).
 * - Exact: the hits equal an independent set-associative simulation (sp_cm_setassoc, the same
 *   sets and sp_cm_set_index_hash of the line) fed the same sectors, and the second sweep keeps
 *   a share that falls gradually with f, where a fully associative LRU keeps all or none.
 * - Sampled 1 line in 16: its raw outcomes are those of an exact L2 of 1/16 the size fed only
 *   the sampled lines (cm_mix64's low bits; whole sets), scaled to all requests. A set keeps or
 *   loses a cyclic sweep whole, so the estimate's error is that of 136 sets drawn from 2,170:
 *   within 3 binomial standard deviations of the exact share. */
static void test_l2_sets(void)
{
  sp_arch a = load_arch("h100");
  a.l1_caches_global_loads = 0;
  CHECK_EQ_INT(a.l2_reuse_set_sectors, 512);
  const uint64_t l2_sectors = (uint64_t)(sp_arch_l2_model_bytes(&a) / a.l2_sector_bytes);
  const uint64_t sets = (l2_sectors + 256) / 512, sampled_sets = ((l2_sectors >> 4) + 256) / 512;
  const uint64_t base = UINT64_C(1) << 32;
  CHECK_EQ_INT(sets, 2170);
  CHECK_EQ_INT(sampled_sets, 136);
  const double fs[] = {0.6, 0.9, 1.0, 1.1, 1.5};
  double kept[5][3] = {{0}}; /* exact sets, fully associative, sampled sets */
  double est[5] = {0};
  for (int k = 0; k < 5; k++) {
    const uint64_t lines = (uint64_t)(fs[k] * (double)l2_sectors / 4);
    unsigned line_shift = 2;
    sp_cm_setassoc *ref = sp_cm_setassoc_create(sets, 512, sp_cm_set_index_hash, &line_shift);
    CHECK(ref != NULL);
    if (!ref) return;
    int64_t ref_hits = 0;
    for (int pass = 0; pass < 2; pass++)
      for (uint64_t l = 0; l < lines; l++)
        for (uint64_t q = 0; q < 4; q++) ref_hits += sp_cm_setassoc_access(ref, base / 32 + l * 4 + q);
    sp_cm_setassoc_free(ref);
    sp_cm_counters c[4];
    for (int v = 0; v < 4; v++) { /* exact, fully associative, sampled, 1/16 L2 fed the sample */
      sp_cm_options opt = {0};
      opt.l2_set_sectors = v == 1 ? -1 : 0;
      opt.l2_sample_shift = v == 2 ? 4 : 0;
      opt.l2_fraction = v == 3 ? 1.0 / 16 : 1.0;
      sp_cm_memsys *m = sp_cm_memsys_create(&a, 1, 1, &opt);
      CHECK(m != NULL);
      if (!m) return;
      for (int pass = 0; pass < 2; pass++)
        for (uint64_t l = 0; l < lines; l++)
          if (v != 3 || (cm_mix64(base / 128 + l) & 15) == 0)
            CHECK_EQ_INT(emit(m, 0, 0, 0, base + l * 128, 4, 4, 32), 0);
      c[v] = total(m);
      sp_cm_memsys_free(m);
      if (v < 3) kept[k][v] = (double)c[v].l2_read_hit_sectors / (double)(4 * lines);
    }
    CHECK_EQ_INT(c[0].l2_read_hit_sectors, ref_hits);
    CHECK_EQ_INT(c[2].l2_read_sectors, (int64_t)(8 * lines));
    const double fr = (double)(8 * lines) / (double)c[3].l2_read_sectors;
    CHECK_EQ_INT(c[2].l2_read_hit_sectors,
                 (int64_t)(8 * lines) - llround((double)(c[3].l2_read_sectors - c[3].l2_read_hit_sectors) * fr));
    const double p = kept[k][0], sd = sqrt(p * (1 - p) / (double)sampled_sets);
    CHECK_NEAR(kept[k][2], p, 3 * sd + 0.002);
    /* the ranking's estimate of the share kept (a line comes back after the sweep's other
     * lines), within 3 standard deviations of 2,170 sets' outcome */
    est[k] = 1 - sp_rank_l2_miss_share(&a, (double)lines * a.l2_line_bytes);
    CHECK_NEAR(est[k], p, 3 * sqrt(p * (1 - p) / (double)sets) + 0.002);
  }
  CHECK(kept[0][0] > 0.999 && kept[4][0] < 0.001);
  for (int k = 1; k <= 3; k++) CHECK(kept[k][0] > 0.05 && kept[k][0] < 0.95);
  CHECK(kept[1][0] > kept[2][0] && kept[2][0] > kept[3][0]);
  CHECK(kept[0][1] == 1.0 && kept[1][1] == 1.0 && kept[3][1] == 0.0);
  printf("  hashed sets, second sweep kept at f = 0.9 / 1.0 / 1.1: exact %.3f / %.3f / %.3f, "
         "sampled 1/16 %.3f / %.3f / %.3f, estimated %.3f / %.3f / %.3f\n",
         kept[1][0], kept[2][0], kept[3][0], kept[1][2], kept[2][2], kept[3][2], est[1], est[2],
         est[3]);
}

/* ld_l1_miss_bank_cycles, by hand on one H100 SM: a request's bank cycles count when it misses
 * the L1 in a warp over several runs of sectors (rows), not when it hits or reads one run. */
static void test_l1_miss_bank_cycles(void)
{
  sp_arch h100 = load_arch("h100");
  sp_cm_options opt = {0};
  opt.l1_variant = SP_CM_L1_BASE;
  opt.assoc = SP_CM_FULLY_ASSOCIATIVE;
  sp_cm_memsys *m = sp_cm_memsys_create(&h100, 1, 1, &opt);
  CHECK(m != NULL);
  if (!m) return;
  const uint64_t a = UINT64_C(1) << 30, rows = 32768;
  CHECK_EQ_INT(emit(m, 0, 0, 0, a, rows, 8, 32), 0); /* 32 rows, cold: 32 bank cycles */
  CHECK_EQ_INT(emit(m, 0, 0, 0, a, rows, 8, 32), 0); /* the same again: all hit */
  CHECK_EQ_INT(emit(m, 0, 0, 0, a + (UINT64_C(1) << 24), 8, 8, 32), 0);  /* one row, cold: 2 */
  CHECK_EQ_INT(emit(m, 0, 0, 0, a + (UINT64_C(1) << 25), 16, 8, 32), 0); /* one run, cold: 4 */
  CHECK_EQ_INT(emit(m, 0, 0, 0, a + 16 * rows, rows, 8, 32), 0); /* half its rows new: 32 */
  sp_cm_counters c = total(m);
  CHECK_EQ_INT(c.ld_requests, 5);
  CHECK_EQ_INT(c.ld_l1_cycles, 32 + 32 + 2 + 4 + 32);
  CHECK_EQ_INT(c.ld_l1_miss_bank_cycles, 32 + 32);
  sp_cm_memsys_free(m);
}

/* Store requests of warps over R rows x 32/R doubles (lane l: row l % R, column l / R), as
 * validation/probes/l1_store_wavefront_probe.cu writes them; Nsight Compute's write wavefronts
 * a request on the H200 (validation/results/h200/2026-11-30-l1-store-wavefront-probe):
 *   rows 32,768 bytes apart: 2, 4, 8, 16, 32, 32 for R = 1, 2, 4, ..., 32
 *   rows 32,832 bytes apart: 2, 2.0, 4.0, 8.2, 19.1, 21.2
 * The rule (one row: its lines; rows: twice the bank cycles, at most 32) gives the first row
 * exactly and 2, 4, 4, 8, 16, 32 for the second; the lines alone, the rule before, gave half
 * the first row's. */
static void test_st_l1_cycles(void)
{
  sp_arch h200 = load_arch("h200");
  sp_cm_options opt = {0};
  opt.l1_variant = SP_CM_L1_BASE;
  opt.assoc = SP_CM_FULLY_ASSOCIATIVE;
  const uint64_t pitch[2] = {32768, 32832};
  const int64_t want[2][6] = {{2, 4, 8, 16, 32, 32}, {2, 4, 4, 8, 16, 32}};
  for (int p = 0; p < 2; p++)
    for (int k = 0; k < 6; k++) {
      const int R = 1 << k;
      sp_cm_memsys *m = sp_cm_memsys_create(&h200, 1, 1, &opt);
      CHECK(m != NULL);
      if (!m) return;
      sp_warp_instr wi;
      memset(&wi, 0, sizeof wi);
      wi.write = true;
      wi.access_bytes = 8;
      wi.active = UINT32_MAX;
      for (int l = 0; l < 32; l++)
        wi.addr[l] = (UINT64_C(1) << 30) + (uint64_t)(l % R) * pitch[p] + (uint64_t)(l / R) * 8;
      CHECK_EQ_INT(sp_cm_memsys_access(m, &wi), 0);
      sp_cm_counters c = total(m), side = {0};
      CHECK_EQ_INT(c.st_l1_cycles, want[p][k]);
      CHECK_EQ_INT(c.st_lines, R == 1 ? 2 : p == 0 || R > 2 ? R : 3);
      /* the refined candidates' L1 side, counted from the trace alone, agrees */
      CHECK_EQ_INT(sp_cm_l1_side_add(&h200, &opt, &wi, 3, &side), 0);
      CHECK_EQ_INT(side.st_l1_cycles, 3 * want[p][k]);
      sp_cm_memsys_free(m);
    }
}

int main(void)
{
  SP_RUN(test_st_l1_cycles);
  SP_RUN(test_l2_sampling);
  SP_RUN(test_l2_sets);
  SP_RUN(test_l1_miss_bank_cycles);
  SP_RUN(test_l2_fill_64);
  SP_RUN(test_l2_keeps_lines);
  SP_RUN(test_l2_lines_brute_force);
  SP_RUN(test_lookup_payload);
  SP_RUN(test_cost);
  SP_RUN(test_kepler);
  SP_RUN(test_l1_capacity_and_sharing);
  SP_RUN(test_stores);
  SP_RUN(test_partial_alone);
  SP_RUN(test_base_vs_modeled);
  SP_RUN(test_time_fills_constructed);
  SP_RUN(test_time_fills_own_store);
  SP_RUN(test_time_fills_random);
  SP_RUN(test_l1_only_random);
  SP_RUN(test_l2_queue_same_counts);
  SP_RUN(test_setassoc_tiny);
  SP_RUN(test_transpose_modeled);
  SP_RUN(test_transpose_h100);
  return SP_TEST_END();
}
