/* The memory system of one candidate (include/schedpredict/memsys.h): coalescer -> one L1 per
 * SM -> the shared L2 -> DRAM, counting what Nsight Compute counts.
 *
 * Model choices (each one is a decision; the reasons are given where they are made):
 *
 * Transactions. Each warp instruction is coalesced once at the L1 transaction size: the arch's
 *   l1_sector_bytes (32 on Maxwell and later) or 128 with kepler_transactions / on Kepler, where
 *   l1_sector_bytes = l1_line_bytes = 128. A request = one instruction with an active lane. The
 *   L2 is kept in arch->l2_sector_bytes (32 B) sectors; when the L1 transaction is larger than
 *   an L2 sector (Kepler mode) an L1 miss fetches all the L2 sectors of the 128-byte transaction
 *   (the whole line: Eq. 7.6's factor 4), while a load that bypasses L1 and every store send
 *   only the 32-byte sectors their lanes touch (a second coalescing at 32 B), as the hardware
 *   does for L2-only accesses.
 *
 * L1 (per SM, only when arch->l1_caches_global_loads). Tags are l1_line_bytes (128 B) lines,
 *   each with one valid bit per L1 sector (payload of the LRU entry). A load looks its lines up
 *   (one LRU update per line and instruction); a sector whose line is present and whose valid
 *   bit is set is a hit; any other sector is a miss that allocates the line if needed (LRU
 *   victim: the whole line with all its sectors), sets the bit and reads the sector from L2.
 *   That is how a sectored L1 works and how Nsight counts lookup hits, per sector. Capacity:
 *   opt->l1_bytes or arch->l1_bytes, in lines. FULLY_ASSOCIATIVE: one LRU over all lines (exactly
 *   the reuse-distance model of the dissertation, distance < #lines <=> hit, kept in the O(1)
 *   hash + list LRU). SET_ASSOCIATIVE: ways = opt->l1_ways, else arch->l1_assoc, else
 *   SP_CM_DEFAULT_L1_WAYS = 64 (NVIDIA publishes no L1 associativity; 64 ways is what Accel-Sim's
 *   Volta and H100 configurations use: -gpgpu_cache:dl1 S:4:128:64), sets = floor(lines / ways),
 *   set index = XOR fold of the line index (hardware hashes its set index).
 *
 * Stores (write-through at L1 on every arch: every store sector goes to L2 and is counted in
 *   st_sectors and l2_write_sectors; stores never count L1 hits). In L1, per
 *   arch->l1_store_policy: BYPASS (Kepler) clears the written sectors' valid bits of a resident
 *   line (a cached copy is invalidated; no LRU update); WRITE_THROUGH_NO_ALLOCATE updates a
 *   resident copy in place (nothing to model: no LRU update, no allocation);
 *   WRITE_THROUGH_ALLOCATE (Volta+) allocates the line (LRU update) and marks the written sectors
 *   valid even when only part of a sector is written (the L1 keeps byte masks; a later load of
 *   the same sector is counted as a hit). When L1 does not cache global loads it holds no global
 *   data and stores do nothing there.
 *
 * L2 (one logical cache for all SMs). Fed in arrival order: the trace interleaves the SMs in
 *   lockstep (traces.h), so arrival order *is* the round-robin over the SMs' miss lists of
 *   Fig. 7.7. The L2 is sectored as the L1 is: it keeps arch->l2_line_bytes (128 B) lines,
 *   each with a valid and a dirty bit per 32-byte sector and the counter group its dirty
 *   sectors are charged to, and an instruction looks each of its lines up once. Load sectors
 *   from L1 misses (or from bypassing loads) are l2_read_sectors; a sector of a resident line
 *   whose valid bit is set is a hit (l2_read_hit_sectors); any other is a miss that allocates
 *   the line if needed (evicting a whole line) and reads the sector from DRAM (dram_read_bytes
 *   += 32), clean. A line with one sector in use takes a whole line of the capacity: the H100
 *   lost the partner sectors of 64-byte fills once the lines touched since, not the sectors,
 *   exceeded its reuse capacity (collapse4.c:16's 8x8x4 blocks, 97 MB of DRAM reads; counting
 *   sectors gave 67). Stores per arch->l2_store_policy: WRITE_BACK_ALLOCATE allocates the line
 *   without reading DRAM (byte-masked partial writes; see the transpose note in
 *   tests/test_memsys.c: real L2s sometimes fill partially written sectors, which this does not
 *   model) and marks the sectors valid and dirty; WRITE_BACK_NO_ALLOCATE marks the sectors of a
 *   resident line dirty and sends those of a missing one to DRAM at once (dram_write_bytes +=
 *   32 each). dram_write_bytes counts write-backs of the dirty sectors of lines evicted during
 *   the run, attributed to the array that last wrote the line (its dirty bytes move to a new
 *   writer); dirty data still in the L2 is reported in l2_dirty_bytes, not in dram_write_bytes
 *   (the kernel's counter does not see a later flush). Capacity: sp_arch_l2_model_bytes (the
 *   arch's l2_reuse_bytes, else l2_bytes) * l2_fraction, in lines. With the FULLY_ASSOCIATIVE
 *   L1, the L2 is a hashed set-associative LRU with sets of arch->l2_reuse_set_sectors (or
 *   opt->l2_set_sectors) sectors' worth of lines, a line's set chosen by cm_mix64 of the line,
 *   the capacity rounded to whole sets; without that field one fully associative LRU. The sets
 *   are a fit, not the hardware's ways: the H100 and H200 lose a region gradually as the
 *   footprint since grows past 24 MB, and 512-sector sets reproduce that curve
 *   (validation/results/h100/2026-11-27-fill-partner-probe/fit_sets.py) where one LRU loses
 *   everything at its capacity. SET_ASSOCIATIVE: ways = opt->l2_ways, else arch->l2_assoc,
 *   else SP_CM_DEFAULT_L2_WAYS = 16 (an assumption: unpublished; Accel-Sim uses 24 for V100
 *   and 40 for its unvalidated H100), indexed by the XOR fold of the line.
 *
 * L2 partitions (A100/H100/H200: 2). The model keeps the L2 as one logical cache: a sector's
 *   hit/miss and the DRAM bytes do not depend on which half homes it. Its capacity is what the
 *   GPU keeps for reuse, measured: the H100 loses half of a region once 33.9 MiB of its 50
 *   have been touched since, the H200 at 39.3 of 60 MiB, about 2/3 on both, as if a line homed
 *   in the far half were held twice (validation/results/h100/2026-11-27-fill-partner-probe/;
 *   arch l2_reuse_bytes). What the split also changes is
 *   the raw lts__t_sector_op_read_hit_rate, which also counts the lookups of far-partition
 *   traffic: see sp_cm_l2_raw_hit_rate_estimate (memsys.h). Far-partition latency is not used
 *   by the counters; cost.c uses the near latency.
 *
 * DRAM fill granularity (arch->l2_fill_bytes, 64 on A100/H100/H200; absent = one sector). A read
 *   miss reads its whole aligned fill block (a part of its line) from DRAM: the sectors of the
 *   block not valid are set valid with it (clean, l2_read_fill_sectors, DRAM bytes), after the
 *   line's own sectors, so two sectors of a block requested by one instruction both miss (one 64-byte
 *   fill) and a lone sector's partner hits when a later request asks for it. That is what the
 *   H100 probe measured (validation/results/h100/2026-11-22-transpose-probe.md): one-sector loads
 *   of the 4096^2 transpose had 2,097,151 L2 lookup hits of 4,194,304 with every byte read from
 *   DRAM once; whole-line loads had none. Stores fill nothing (byte-masked, as above).
 *
 * L1 only (opt.l1_only). Every L2 request is counted, none is looked up: a run whose L2
 *   outcome is thrown away (the ranking's SMs run alone for their L1 rates) skips the L2's cost.
 *   The L1 does not depend on the L2 in BASE, so its counts are the full model's.
 *
 * L2 sampling (opt.l2_sample_shift, used by the ranking for large L2s; --exact turns it off).
 *   A hash of the line (so its sectors are in or out together) picks 1 in 2^s lines; only those
 *   are looked up, in an L2 of 1/2^s the lines. For an LRU cache this is SHARDS's fixed-rate
 *   spatial sampling: the sampled lines' reuse distances shrink by the same factor as the
 *   capacity, so their hits and misses are estimates of the whole cache's; a reuse at about the
 *   capacity falls on one side or the other of the sample's own edge. With hashed sets the set
 *   index takes the high bits of the same hash and the sample is whole sets, 1/2^s of them: each
 *   behaves exactly as a set of the full L2, and the estimate's error is only which sets were
 *   drawn (tests/test_memsys.c test_l2_sets). Each
 *   group's requests stay exact; its sampled misses are scaled to its requests (group_counters
 *   says how). Arrays of at most 1/16 of the sampled L2 are simulated in full. The L1s are not
 *   sampled.
 *
 * Variants (sp_cm_l1_variant).
 *   BASE: every request is processed to completion in arrival order; a miss installs its sectors
 *     at once, so the next warp that reads the same sector hits.
 *   MODELED (parallel memory processing, Fig. 7.9, with timestamps): each SM has a clock in core
 *     cycles. A warp instruction through this SM's L1 is stamped with the clock, and then advances
 *     it by its number of distinct lines, at least 1 (the L1 tag stage looks up one 128-byte line
 *     per cycle, so an uncoalesced instruction pushes the following warps back, which is the
 *     "timestamp added to the following warps and to the threads of the same warp if not
 *     coalesced" of Sec. 7.3.4). All lookups of an instruction happen at its stamp. A load miss's
 *     fill completes at stamp + arch L2 hit latency if all its L2 sectors hit, else stamp + DRAM
 *     latency. A later load that finds the sector's valid bit set but its fill still in flight
 *     (stamp < completion) is counted as a lookup MISS (ld_l1_pending_sectors, not
 *     ld_l1_hit_sectors) that merges with the outstanding fill: no second L2 request, so
 *     l2_read_sectors and DRAM bytes equal BASE's; only the L1 hit rate drops. With
 *     opt->pending_refetch it instead sends its own L2 request (no MSHR merging), which then
 *     adds to l2_read_sectors (normally an L2 hit). Nothing else differs from BASE (same LRU
 *     order, same allocation at miss time).
 *   Which one matches Nsight: the H200 transpose of DESIGN.md (strided reads, 4 warps of a block
 *     read the same 32 sectors a few hundred cycles apart at most, while every fill comes from
 *     DRAM, 666 cycles) measured a 75% L1 hit rate with every sector read from L2 once. Hopper's
 *     lookup_hit therefore counts a hit on a sector whose fill is pending as a hit: BASE
 *     reproduces the measurement (75%), MODELED gives ~0% there. MODELED is the dissertation's
 *     claim for its Kepler-era counters (l1_cache_global_hit_rate), kept for comparison.
 *
 * Memory (bounded whatever the trace length; everything is allocated at create except the
 *   per-SM structures, allocated on the SM's first access, so a sampled trace pays only for the
 *   SMs it uses):
 *   - fully associative LRU of C units: 24 C bytes of nodes + a hash table of the power of two
 *     >= 2C slots of 16 bytes (~56-88 bytes per unit). H100 L1 (1866 lines): ~110 KB per SM,
 *     14.5 MB for 132 SMs; H100 L2 (50 MB = 409,600 lines): ~26 MB.
 *   - set-associative: 16 bytes per way + 4 per set: H100 L1 ~30 KB per SM, L2 ~6.5 MB.
 *   - hashed sets: the fully associative LRU's tables + 12 bytes per set.
 *   - MODELED: per SM a ring of in-flight fills and a hash map sector -> completion time, sized
 *     from the latency: (sectors per line) x (DRAM latency + 65) entries, ~190 KB per SM on H100.
 *   - counters: one sp_cm_counters per array (per reference with opt.nrefs); the instruction
 *     pipeline (SP_CM_PIPE entries of ~1 KB) and the L2's queue (SP_CM_L2Q entries of 24 bytes);
 *     footprint bitmaps, 1 bit per L2 sector of a
 *     tracked array. sp_cm_memsys_memory_bytes reports the total, sp_cm_memsys_full_bytes
 *     what it will be once every SM has its L1; sp_cm_memsys_reset empties everything and
 *     keeps the memory, for the next candidate. */
#include "schedpredict/memsys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cachemodel/cm_hashmap.h"
#include "cachemodel/cm_lru.h"
#include "schedpredict/cachemodel.h"

/* ---- in-flight fills of one SM (MODELED) ------------------------------------------------------ */

typedef struct pend_ent {
  uint64_t sector, ready;
} pend_ent;

typedef struct pend_table {
  pend_ent *ring; /* in issue order */
  uint32_t mask, head, count;
  cm_map map;     /* sector -> completion cycle of its latest fill */
} pend_table;

static int pend_init(pend_table *p, uint64_t entries)
{
  uint64_t cap = cm_pow2_at_least(entries < 64 ? 64 : entries);
  p->ring = malloc(cap * sizeof *p->ring);
  if (!p->ring) return -1;
  if (cm_map_init(&p->map, 2 * cap) != 0) {
    free(p->ring);
    p->ring = NULL;
    return -1;
  }
  p->mask = (uint32_t)(cap - 1);
  p->head = p->count = 0;
  return 0;
}

static void pend_pop(pend_table *p)
{
  pend_ent *e = &p->ring[p->head];
  cm_slot *s = cm_map_probe(&p->map, e->sector);
  if (s->val != CM_EMPTY && s->val <= e->ready) cm_map_erase(&p->map, s);
  p->head = (p->head + 1) & p->mask;
  p->count--;
}

/* Drops the fills completed by `now`. A pending head holds back later entries, but each entry
 * completes at most max-latency cycles after its issue, which bounds the ring (see create). */
static void pend_expire(pend_table *p, uint64_t now)
{
  while (p->count && p->ring[p->head].ready <= now) pend_pop(p);
}

static uint64_t pend_ready(const pend_table *p, uint64_t sector)
{
  const cm_slot *s = cm_map_probe(&p->map, sector);
  return s->val == CM_EMPTY ? 0 : s->val;
}

static void pend_add(pend_table *p, uint64_t sector, uint64_t ready)
{
  if (p->count == p->mask + 1) pend_pop(p); /* cannot happen with the computed size; safe */
  p->ring[(p->head + p->count) & p->mask] = (pend_ent){sector, ready};
  p->count++;
  cm_slot *s = cm_map_probe(&p->map, sector);
  if (s->val == CM_EMPTY) {
    s->key = sector;
    s->val = ready;
    p->map.count++;
  } else if (s->val < ready) {
    s->val = ready;
  }
}

static void pend_free(pend_table *p)
{
  free(p->ring);
  free(p->map.slots);
}

/* ---- the memory system ------------------------------------------------------------------------ */

/* time_fills: a warp's last store, by the SM's clock (l1_fill_waited) */
typedef struct warp_store {
  uint64_t warp; /* the warp's key (pipe_ent.warp) + 1; 0: empty */
  uint64_t tick;
} warp_store;
enum { SP_CM_WARP_SLOTS = 128 };

typedef struct sm_state {
  int ready;       /* structures allocated */
  sp_cm_lru *l1f;
  sp_cm_setassoc *l1s;
  uint64_t clock;  /* MODELED, time_fills: core cycles */
  pend_table pend; /* MODELED */
  warp_store *stores; /* time_fills: SP_CM_WARP_SLOTS, direct-mapped by the warp's hash */
} sm_state;

struct sp_cm_memsys {
  sp_cm_options opt;
  int nsms, narrays;
  int ngroups;         /* counter groups: arrays, or references (opt.nrefs) */
  int l1_on;
  sp_l1_store_policy l1_store;
  sp_l2_store_policy l2_store;
  sp_cm_coalescer co;    /* L1 transactions */
  sp_cm_coalescer co_l2; /* L2 sectors (used when the L1 transaction is larger) */
  sp_cm_coalesce_memo *memo, *memo_l2; /* their layouts of shaped instructions */
  unsigned spl_shift;    /* log2(L1 sectors per line) */
  unsigned sub_shift;    /* log2(L2 sectors per L1 transaction) */
  unsigned fill_shift;   /* log2(L2 sectors filled from DRAM per read miss) */
  unsigned l2_line_shift; /* log2(L2 sectors per L2 line, the unit the L2 keeps) */
  int l2_lines_are_l1s;   /* the L2's lines are the L1's size (the coalescers' lines) */
  int l2_runs_are_l1s;    /* and its sectors the L1's: an L1 line's sectors are an L2 line's */
  uint32_t l2_sector_bytes;
  uint64_t l1_lines, l1_sets;
  uint32_t l1_ways;
  uint64_t lat_l2, lat_dram; /* cycles, MODELED */
  uint64_t pend_entries;
  sp_cm_lru *l2f;
  sp_cm_setassoc *l2s;
  sm_state *sm;
  /* Every SM's fully associative L1 tables in one allocation (on huge pages once it is 2 MB):
   * 132 separate 77 KB tables on 4 KB pages made nearly every L1 lookup a host TLB miss. */
  char *l1_tables;
  size_t l1_table_bytes; /* one SM's share */
  sp_cm_counters *ctr; /* per counter group; with L2 sampling, its L2 outcomes are the sample's */
  uint64_t l2_sample_mask; /* 2^l2_sample_shift - 1; 0: the L2 is simulated for every sector */
  uint64_t l2_sectors;     /* capacity of the simulated L2 (sampled: 1/2^shift of the L2's) */
  uint8_t *l2_whole;       /* per array: 1 = every sector simulated even when sampling (small) */
  int *group_array;        /* per counter group: its array (for the group's sampling weight) */
  /* per group: sampled requests, and the first touches of the sectors outside the sample
   * (l2_cold_outside), counted exactly: requested sectors, and bytes with the fills' rest */
  struct l2_sampled { int64_t reads, writes, cold_out_sectors, cold_out_bytes; } *l2_sampled;
  int64_t lookups;
  int64_t sectors_accessed; /* L1-granularity sectors of the instructions accessed so far */
  /* per array: the sectors ever read from DRAM (or, outside the L2 sample, touched) of its
   * footprint, sectors first .. first + n - 1; bits NULL: not tracked. NULL: none is. */
  struct cold_footprint { uint64_t *bits, first, n; } *cold;
  /* The bitmap words set since the last clear, (array << 40) | word, so that clearing costs what
   * a short run touched rather than the arrays' whole footprint; past COLD_LOG_CAP: all. */
  uint64_t *cold_log;
  uint32_t cold_log_n;
  int cold_log_full;
  /* this load's first touches outside the L2 sample, whose fill blocks' rest is marked after
   * its reads (l2_cold_outside_fills) */
  uint64_t *cold_out;
  uint32_t ncold_out;
  /* bitmaps of an earlier model, clear, for track_footprint (sp_cm_memsys_adopt_footprints) */
  struct sp_cm_footprints *spare;
  /* Instructions accepted but not yet simulated (see sp_cm_memsys_access). */
  struct pipe_ent *pipe;
  unsigned pipe_head, pipe_count;
  /* L2 line accesses of simulated instructions, not yet simulated in the L2 (l2_queue_push) */
  struct l2_op *l2q;
  unsigned l2q_head, l2q_count;
  int l2q_on;
};

/* L2 sectors per L1 transaction at most: 2^3 (a 128-byte transaction of 16-byte sectors). */
enum { SP_CM_MAX_SUB_SHIFT = 3 };

/* An instruction waiting in the pipeline: coalesced, its table slots prefetched. */
typedef struct pipe_ent {
  int sm, array, group, write, l2_split;
  uint64_t warp;         /* the block and the warp in it, (block << 6) | warp */
  uint32_t partial;      /* a store's sectors written in part (sp_cm_partial_sectors) */
  uint64_t partial_which; /* which of its L2 sectors (bit i: the i-th) */
  sp_cm_warp_access wa;  /* at the L1 transaction size */
  sp_cm_warp_access wa2; /* at the L2 sector size, when l2_split */
} pipe_ent;

/* One instruction's access to one L2 line, waiting in the L2 queue. */
typedef struct l2_op {
  uint64_t line;
  uint32_t mask;  /* its sectors */
  uint8_t n;      /* how many */
  uint8_t write;
  uint8_t last;   /* a load's last line: its first touches outside the sample fill next */
  uint8_t in_sample; /* l2_in_sample of the line */
  uint32_t partial; /* a store's sectors it writes in part (of mask) */
  int32_t group, array;
} l2_op;

/* An instruction's sectors grouped by line, lines ascending: line[k] holds the sectors mask[k]
 * (bit q: sector q of the line), n[k] of them, of which a store writes partial[k] in part.
 * Grouped once an instruction and handed to the L1 and the L2, which used to group the same
 * sectors each (15 % of the model's host instructions on strided stores). */
enum { SP_CM_MAX_L2_UNITS = SP_CM_MAX_UNITS << SP_CM_MAX_SUB_SHIFT };
typedef struct line_runs {
  uint32_t count;
  uint64_t line[SP_CM_MAX_L2_UNITS];
  uint64_t mask[SP_CM_MAX_L2_UNITS];
  uint32_t partial[SP_CM_MAX_L2_UNITS];
  uint8_t n[SP_CM_MAX_L2_UNITS];
} line_runs;

/* counter groups at most: an L2 line keeps its last writer's in 24 bits (L2_OWNER) */
enum { L2_MAX_GROUPS = 0xFFFFFF };

/* Depth of the pipeline: an instruction's table slots are prefetched this many instructions
 * before it is simulated, long enough to hide the host's memory latency behind the work of the
 * instructions in between, short enough not to flood the host's outstanding-miss buffers.
 * Measured again with the inlined LRU (bench_memsys 2048, schedpredict on divergence and
 * laplacian 256^3, loaded hosts): 2, 4, 8 and 16 within each other's noise; no prefetching at
 * all 8-10 % slower on the ranking and up to 50 % on full-size tables (though ~10 % faster on
 * the bench's small ones). The set-associative tables are not prefetched: computing their set
 * index twice cost more than the misses it hid (15-20 % slower on strided streams, any size). */
#ifndef SP_CM_PIPE_DEPTH
#define SP_CM_PIPE_DEPTH 8
#endif
enum { SP_CM_PIPE = SP_CM_PIPE_DEPTH };

/* Depth of the L2's own queue, in line accesses (an instruction makes 1-4 in the usual case).
 * The L1s run ahead of the L2 by this much; that changes no count as long as an L1's outcome
 * does not depend on the L2's (BASE). */
#ifndef SP_CM_L2Q_DEPTH
#define SP_CM_L2Q_DEPTH 32
#endif
enum { SP_CM_L2Q = SP_CM_L2Q_DEPTH };
#ifndef SP_CM_L2Q_MIN_BYTES
#define SP_CM_L2Q_MIN_BYTES ((size_t)4 << 20)
#endif

static unsigned log2u(uint64_t v)
{
  unsigned b = 0;
  while ((UINT64_C(1) << b) < v) b++;
  return b;
}

static int is_pow2(int64_t v)
{
  return v > 0 && (v & (v - 1)) == 0;
}

/* The L1's transaction (sector) and line sizes */
static void transaction_bytes(const sp_arch *arch, const sp_cm_options *o, int *sector, int *line)
{
  *line = arch->l1_line_bytes, *sector = arch->l1_sector_bytes;
  if (o->kepler_transactions) {
    *sector = 128;
    if (*line < 128) *line = 128;
  }
}

/* Lines the L1's tag stage looks up a cycle for one request: lanes 20 bytes apart (5 lines, one
 * word a bank) took 2 cycles on the H100 and the H200 where the banks alone take 1
 * (validation/results/h100/2026-11-27-l1-span-probe). */
#define L1_TAG_LINES 4

/* A load request's L1 cycles (sp_cm_counters.ld_l1_cycles). */
static inline uint32_t l1_cycles(const sp_cm_warp_access *wa)
{
  uint32_t tags = (wa->n_lines + L1_TAG_LINES - 1) / L1_TAG_LINES;
  return wa->bank_cycles > tags ? wa->bank_cycles : tags;
}

/* Whether a request's sectors (strictly ascending) form one run: not a warp over rows */
static inline int one_run(const sp_cm_warp_access *wa)
{
  return wa->sectors[wa->n_sectors - 1] - wa->sectors[0] + 1 == wa->n_sectors;
}

/* A store request's L1 cycles (sp_cm_counters.st_l1_cycles): as a load that misses, a warp over
 * rows takes twice its bank cycles, up to one a lane (32 rows on the same banks took 32) */
static inline uint32_t st_l1_cycles(const sp_cm_warp_access *wa)
{
  if (!wa->n_sectors || one_run(wa)) return wa->n_lines;
  return 2 * wa->bank_cycles < SP_WARP ? 2 * wa->bank_cycles : SP_WARP;
}

int sp_cm_l1_side_add(const sp_arch *arch, const sp_cm_options *opt, const sp_warp_instr *wi,
                      int64_t times, sp_cm_counters *c)
{
  int line, sector;
  transaction_bytes(arch, opt, &sector, &line);
  sp_cm_coalescer co;
  sp_cm_warp_access wa;
  if (sp_cm_coalescer_init(&co, (uint32_t)sector, (uint32_t)line) != 0 ||
      sp_cm_coalesce(&co, wi->addr, wi->active, wi->access_bytes, &wa) != 0)
    return -1;
  if (wi->write) { /* every store sector is written through to the L2 (simulate) */
    sp_cm_warp_access w2;
    if (sp_cm_coalescer_init(&co, (uint32_t)arch->l2_sector_bytes, (uint32_t)line) != 0 ||
        sp_cm_coalesce(&co, wi->addr, wi->active, wi->access_bytes, &w2) != 0)
      return -1;
    c->l2_write_sectors += times * (int64_t)w2.n_sectors;
    c->st_partial_sectors +=
        times * (int64_t)sp_cm_partial_sectors(&co, wi->addr, wi->active, wi->access_bytes, &w2);
  }
  int64_t *req = wi->write ? &c->st_requests : &c->ld_requests;
  int64_t *sec = wi->write ? &c->st_sectors : &c->ld_sectors;
  int64_t *lin = wi->write ? &c->st_lines : &c->ld_lines;
  *req += times * (int64_t)wa.requests;
  *sec += times * (int64_t)wa.n_sectors;
  *lin += times * (int64_t)wa.n_lines;
  if (!wi->write) c->ld_l1_cycles += times * (int64_t)l1_cycles(&wa);
  else c->st_l1_cycles += times * (int64_t)st_l1_cycles(&wa);
  return 0;
}

sp_cm_memsys *sp_cm_memsys_create(const sp_arch *arch, int nsms, int narrays,
                                  const sp_cm_options *opt)
{
  if (!arch || nsms <= 0 || narrays <= 0) return NULL;
  sp_cm_options o = {0};
  o.l1_variant = SP_CM_L1_BASE;
  o.assoc = SP_CM_FULLY_ASSOCIATIVE;
  if (opt) o = *opt;
  if (o.l2_fraction == 0) o.l2_fraction = 1.0;
  if (!(o.l2_fraction > 0 && o.l2_fraction <= 1.0) || o.l1_bytes < 0 || o.l1_ways < 0 ||
      o.l2_ways < 0 || o.l2_set_sectors < -1)
    return NULL;
  if ((o.l1_variant != SP_CM_L1_BASE && o.l1_variant != SP_CM_L1_MODELED) ||
      (o.assoc != SP_CM_FULLY_ASSOCIATIVE && o.assoc != SP_CM_SET_ASSOCIATIVE))
    return NULL;
  /* MODELED times fills by their L2 outcome, which an unsampled sector does not have */
  if (o.l2_sample_shift < 0 || o.l2_sample_shift > 16 ||
      (o.l2_sample_shift > 0 && (o.assoc != SP_CM_FULLY_ASSOCIATIVE || o.l1_variant != SP_CM_L1_BASE)))
    return NULL;
  if (o.l1_only && o.l1_variant != SP_CM_L1_BASE) return NULL;

  int line, sector;
  transaction_bytes(arch, &o, &sector, &line);
  int l2s = arch->l2_sector_bytes;
  if (!is_pow2(line) || !is_pow2(sector) || !is_pow2(l2s) || l2s < 16 || l2s > sector ||
      sector > line)
    return NULL;

  sp_cm_memsys *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->opt = o;
  m->nsms = nsms;
  m->narrays = narrays;
  m->ngroups = o.nrefs > 0 ? o.nrefs : narrays;
  if (m->ngroups > L2_MAX_GROUPS) goto fail;
  m->l1_on = arch->l1_caches_global_loads != 0;
  m->l1_store = arch->l1_store_policy;
  m->l2_store = arch->l2_store_policy;
  if (sp_cm_coalescer_init(&m->co, (uint32_t)sector, (uint32_t)line) != 0 ||
      sp_cm_coalescer_init(&m->co_l2, (uint32_t)l2s, (uint32_t)line) != 0)
    goto fail;
  m->spl_shift = log2u((uint64_t)(line / sector));
  if (o.time_fills && (o.l1_variant != SP_CM_L1_BASE || m->spl_shift > 4)) goto fail; /* L1_VALID_BITS */
  m->sub_shift = log2u((uint64_t)(sector / l2s));
  if (m->sub_shift > SP_CM_MAX_SUB_SHIFT) goto fail;
  m->l2_sector_bytes = (uint32_t)l2s;
  if (arch->l2_fill_bytes > l2s) {
    if (!is_pow2(arch->l2_fill_bytes)) goto fail;
    m->fill_shift = log2u((uint64_t)(arch->l2_fill_bytes / l2s));
  }

  int64_t l1_bytes = o.l1_bytes ? o.l1_bytes : arch->l1_bytes;
  m->l1_lines = l1_bytes >= line ? (uint64_t)(l1_bytes / line) : 1;
  if (o.assoc == SP_CM_SET_ASSOCIATIVE) {
    uint64_t ways = o.l1_ways ? (uint64_t)o.l1_ways
                    : arch->l1_assoc > 0 ? (uint64_t)arch->l1_assoc
                                         : SP_CM_DEFAULT_L1_WAYS;
    if (ways > m->l1_lines) ways = m->l1_lines;
    m->l1_ways = (uint32_t)ways;
    m->l1_sets = m->l1_lines / ways;
  }

  /* a line's sectors fit L2_VALID's 16 bits, and a fill block lies in one line */
  if (arch->l2_line_bytes < l2s || arch->l2_line_bytes / l2s > 16 ||
      arch->l2_fill_bytes > arch->l2_line_bytes)
    goto fail;
  m->l2_line_shift = log2u((uint64_t)(arch->l2_line_bytes / l2s));
  m->l2_lines_are_l1s = arch->l2_line_bytes == line;
  m->l2_runs_are_l1s = m->l2_lines_are_l1s && m->sub_shift == 0;
  const unsigned lsh = m->l2_line_shift;
  double l2_bytes = floor((double)sp_arch_l2_model_bytes(arch) * o.l2_fraction);
  uint64_t l2_sectors = l2_bytes >= l2s && !o.l1_only ? (uint64_t)(l2_bytes / l2s) : 1;
  if (o.assoc == SP_CM_SET_ASSOCIATIVE) {
    uint64_t lines = l2_sectors >> lsh ? l2_sectors >> lsh : 1;
    uint64_t ways = o.l2_ways ? (uint64_t)o.l2_ways
                    : arch->l2_assoc > 0 ? (uint64_t)arch->l2_assoc
                                         : SP_CM_DEFAULT_L2_WAYS;
    if (ways > lines) ways = lines;
    m->l2s = sp_cm_setassoc_create(lines / ways, (uint32_t)ways, sp_cm_set_index_xorfold, NULL);
    if (!m->l2s) goto fail;
  } else {
    m->l2_sample_mask = (UINT64_C(1) << o.l2_sample_shift) - 1;
    l2_sectors >>= o.l2_sample_shift;
    if (!l2_sectors) l2_sectors = 1;
    const int64_t set_sectors = o.l2_set_sectors ? o.l2_set_sectors : arch->l2_reuse_set_sectors;
    if (set_sectors > 0 && !o.l1_only) {
      /* l2_sectors rounded to whole sets, at least one */
      if (!is_pow2(set_sectors) || set_sectors < (INT64_C(1) << lsh)) goto fail;
      uint64_t sets = (l2_sectors + (uint64_t)set_sectors / 2) / (uint64_t)set_sectors;
      if (sets >= 2) {
        l2_sectors = sets * (uint64_t)set_sectors;
        m->l2f = sp_cm_lru_create_sets(sets, (uint32_t)(set_sectors >> lsh), 0);
      }
    }
    if (!m->l2f) m->l2f = sp_cm_lru_create(l2_sectors >> lsh ? l2_sectors >> lsh : 1);
    if (!m->l2f) goto fail;
  }

  m->l2_sectors = l2_sectors;
  double l2lat = arch->l2_hit_latency_cycles > 0 ? arch->l2_hit_latency_cycles : 0;
  double dlat = arch->dram_latency_cycles > l2lat ? arch->dram_latency_cycles : l2lat;
  m->lat_l2 = (uint64_t)ceil(l2lat);
  m->lat_dram = (uint64_t)ceil(dlat);
  /* In-flight fills of an SM were issued within the last lat_dram cycles; the clock advances by
   * at least an instruction's line count, and an instruction misses at most (sectors per line)
   * sectors per line, so at most spl * (lat_dram + 1 + 64) fills are in flight. */
  m->pend_entries = ((uint64_t)1 << m->spl_shift) * (m->lat_dram + 65);

  m->sm = calloc((size_t)nsms, sizeof *m->sm);
  m->ctr = calloc((size_t)m->ngroups, sizeof *m->ctr);
  m->l2_whole = calloc((size_t)narrays, 1);
  m->group_array = calloc((size_t)m->ngroups, sizeof *m->group_array);
  m->l2_sampled = calloc((size_t)m->ngroups, sizeof *m->l2_sampled);
  m->pipe = malloc(SP_CM_PIPE * sizeof *m->pipe);
  m->l2q = malloc(SP_CM_L2Q * sizeof *m->l2q);
  /* The queue pays where the L2's tables miss the host's caches (a core's L2 is 1-2 MB); on
   * small ones its prefetching costs more than it hides. MODELED times an L1 fill by its L2
   * outcome, which it needs at once. */
  m->l2q_on = o.l1_variant == SP_CM_L1_BASE && o.l2_queue >= 0 &&
              (o.l2_queue > 0 || (m->l2f && sp_cm_lru_memory_bytes(m->l2f) >= SP_CM_L2Q_MIN_BYTES));
  m->memo = sp_cm_coalesce_memo_create();
  m->memo_l2 = sp_cm_coalesce_memo_create();
  if (!m->sm || !m->ctr || !m->l2_whole || !m->group_array || !m->l2_sampled || !m->pipe ||
      !m->l2q || !m->memo || !m->memo_l2)
    goto fail;
  return m;
fail:
  sp_cm_memsys_free(m);
  return NULL;
}

void sp_cm_memsys_free(sp_cm_memsys *m)
{
  if (!m) return;
  if (m->sm) {
    for (int i = 0; i < m->nsms; i++) {
      sp_cm_lru_free(m->sm[i].l1f);
      sp_cm_setassoc_free(m->sm[i].l1s);
      pend_free(&m->sm[i].pend);
      free(m->sm[i].stores);
    }
  }
  free(m->sm);
  free(m->l1_tables);
  sp_cm_lru_free(m->l2f);
  sp_cm_setassoc_free(m->l2s);
  free(m->ctr);
  free(m->l2_whole);
  free(m->group_array);
  free(m->l2_sampled);
  if (m->cold)
    for (int a = 0; a < m->narrays; a++) free(m->cold[a].bits);
  free(m->cold);
  free(m->cold_log);
  free(m->cold_out);
  sp_cm_footprints_free(m->spare);
  free(m->pipe);
  free(m->l2q);
  sp_cm_coalesce_memo_free(m->memo);
  sp_cm_coalesce_memo_free(m->memo_l2);
  free(m);
}

static int sm_prepare(sp_cm_memsys *m, sm_state *s)
{
  if (m->opt.assoc == SP_CM_SET_ASSOCIATIVE)
    s->l1s = sp_cm_setassoc_create(m->l1_sets, m->l1_ways, sp_cm_set_index_xorfold, NULL);
  else {
    if (!m->l1_tables) {
      m->l1_table_bytes = sp_cm_lru_table_bytes(m->l1_lines);
      m->l1_tables = sp_cm_table_alloc(m->l1_table_bytes * (size_t)m->nsms);
      if (!m->l1_tables) return -1;
    }
    s->l1f = sp_cm_lru_create_at(m->l1_lines, m->l1_tables + (size_t)(s - m->sm) * m->l1_table_bytes);
  }
  if (!s->l1f && !s->l1s) return -1;
  if ((m->opt.l1_variant == SP_CM_L1_MODELED && pend_init(&s->pend, m->pend_entries) != 0) ||
      (m->opt.time_fills && !(s->stores = calloc(SP_CM_WARP_SLOTS, sizeof *s->stores)))) {
    pend_free(&s->pend);
    memset(&s->pend, 0, sizeof s->pend);
    sp_cm_lru_free(s->l1f);
    sp_cm_setassoc_free(s->l1s);
    s->l1f = NULL;
    s->l1s = NULL;
    return -1;
  }
  s->ready = 1;
  return 0;
}

/* An L1 line's payload: the valid bits of its sectors (bits 0-15), and with opt.time_fills a
 * 12-bit tag of the warp whose miss filled it last (bits 16-27) and the clock at which that fill
 * completes (bits 28-63, 2^36 ticks). One stamp a line, not a sector: the sectors a warp misses
 * together complete together, and the lookup already holds the line, where a table of fills per
 * sector (as MODELED keeps) made the whole ranking 1.9x slower.
 * - The fill is taken to take the L2 hit latency, the shortest it can, so that a hit is called
 *   pending only while its fill certainly is: with the L2 sampled most fills have no simulated
 *   outcome.
 * - Any warp's hit counts, the filling warp's own too (a stencil's u[j+1] after its u[j-1]).
 *   Leaving those out, as the warp's one wait, ranked worse on the H100 runs (36 nests within
 *   10 % of the best against 39: validation/results/h100/2026-11-24-pending-hits).
 * - Except the filling warp's hits after it stored: its store waited for the loads it stores
 *   (the SM's clock, a tick an instruction, does not: a lone warp's next iteration came a few
 *   ticks after its miss, and every hit of GCC's one-lane gangs, whose warps each walk a row of
 *   their own, waited as a miss: 2.1x their time on the H200). */
#define L1_VALID_BITS UINT64_C(0xFFFF)
#define L1_TAG_SHIFT 16
#define L1_READY_SHIFT 28

/* The warp's Fibonacci hash (cm_lru.h's LRU_PHI): its high 12 bits tag a line, its high 7 pick
 * its store slot. */
static inline uint64_t l1_warp_tag(uint64_t warp)
{
  return (warp * LRU_PHI) >> 52;
}

static inline uint64_t l1_fill_stamp(uint64_t payload, uint64_t ready, uint64_t warp)
{
  return (payload & L1_VALID_BITS) | l1_warp_tag(warp) << L1_TAG_SHIFT | ready << L1_READY_SHIFT;
}

static inline int l1_fill_pending(uint64_t payload, uint64_t now)
{
  return payload >> L1_READY_SHIFT > now;
}

static inline warp_store *warp_slot(const sm_state *s, uint64_t warp)
{
  return &s->stores[l1_warp_tag(warp) >> 5];
}

/* A pending hit of warp `warp` that it does not wait for: on its own fill (the tag matches) with
 * a store of that warp since the fill was issued (lat_l2 before it completes). A warp whose slot
 * another took counts as not having stored. */
static inline int l1_fill_waited(const sp_cm_memsys *m, const sm_state *s, uint64_t payload,
                                 uint64_t warp)
{
  if ((payload >> L1_TAG_SHIFT & 0xFFF) != l1_warp_tag(warp)) return 0;
  const warp_store *w = warp_slot(s, warp);
  return w->warp == warp + 1 && w->tick + m->lat_l2 >= payload >> L1_READY_SHIFT;
}

/* The SM's clock before this instruction, moved on by its lines (MODELED, time_fills). */
static inline uint64_t sm_tick(const sp_cm_memsys *m, sm_state *s, const sp_cm_warp_access *wa)
{
  uint64_t now = s->clock;
  if (m->opt.l1_variant == SP_CM_L1_MODELED || m->opt.time_fills) s->clock += wa->n_lines ? wa->n_lines : 1;
  return now;
}

static inline uint64_t *l1_lookup(sm_state *s, uint64_t line, sp_cm_lookup_mode mode)
{
  return s->l1f ? cm_lru_lookup_as(s->l1f, line, mode, NULL, 0)
                : sp_cm_setassoc_lookup(s->l1s, line, mode, NULL);
}

/* Whether the L2 simulates this sector (L2 sampling): the low bits of cm_mix64 of its line, the
 * unit the L2 keeps. With sets, the set index takes the high bits of the same hash: the sample
 * is then whole sets, each of which behaves as in the full L2. */
static inline int l2_in_sample(const sp_cm_memsys *m, uint64_t sector, int array)
{
  if (m->opt.l1_only) return 0;
  if (!m->l2_sample_mask || m->l2_whole[array]) return 1;
  return (cm_mix64(sector >> m->l2_line_shift) & m->l2_sample_mask) == 0;
}

/* An L2 line's payload: its valid sectors (bits 0-15), its dirty ones (bits 16-31), the counter
 * group its dirty sectors are charged to, the line's last writer (bits 32-55), and, for lines of
 * up to 4 sectors, those that one store wrote in part into clean valid data and no other write
 * has touched since (bits 56-59: st_partial_alone_sectors). */
#define L2_VALID(p) ((uint32_t)(p) & 0xFFFFu)
#define L2_DIRTY(p) ((uint32_t)((p) >> 16) & 0xFFFFu)
#define L2_OWNER(p) ((int)((p) >> 32) & 0xFFFFFF)
#define L2_ALONE(p) ((uint32_t)((p) >> 56) & 0xFu)

/* The sectors in a mask (an L2 line's 16 bits, an L1 line's up to 64). Not __builtin_popcount:
 * without -mpopcnt that is a libgcc call, 6.7 % of bench_memsys's strided-store row when it was
 * made once a line. */
static inline uint32_t mask_count(uint64_t x)
{
  x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
  x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
  x = (x + (x >> 4)) & UINT64_C(0x0F0F0F0F0F0F0F0F);
  return (uint32_t)((x * UINT64_C(0x0101010101010101)) >> 56);
}

/* The bytes of the sectors set in a line's mask. */
static inline int64_t l2_mask_bytes(const sp_cm_memsys *m, uint32_t sectors)
{
  return (int64_t)mask_count(sectors) * m->l2_sector_bytes;
}

/* An evicted line's dirty sectors go to DRAM, charged to its owner. */
static inline void l2_write_back(sp_cm_memsys *m, const sp_cm_lookup *r)
{
  uint32_t dirty = r->evicted ? L2_DIRTY(r->victim_payload) : 0;
  if (!dirty) return;
  int64_t bytes = l2_mask_bytes(m, dirty);
  sp_cm_counters *v = &m->ctr[L2_OWNER(r->victim_payload)];
  v->dram_write_bytes += bytes;
  v->l2_dirty_bytes -= bytes;
}

/* k lone partial writes of the line whose payload is p shared after all: taken back from its
 * last writer's group (the writer of the line's other sectors since then, at times) */
static inline void ctr_alone_sub(sp_cm_memsys *m, int64_t k, uint64_t p)
{
  if (k) m->ctr[L2_OWNER(p)].st_partial_alone_sectors -= k;
}

/* One lookup of a line for n of its sectors (the work counted in sectors, as the L1's). */
static inline uint64_t *l2_lookup(sp_cm_memsys *m, uint64_t line, uint32_t n,
                                  sp_cm_lookup_mode mode, sp_cm_lookup *r)
{
  m->lookups += n;
  uint64_t *p = m->l2f ? cm_lru_lookup(m->l2f, line, mode, r)
                       : sp_cm_setassoc_lookup(m->l2s, line, mode, r);
  l2_write_back(m, r);
  return p;
}

enum { COLD_LOG_CAP = 1 << 16 };

/* Clears the first-touch bits of one array (array >= 0) or of all. */
static void cold_clear(sp_cm_memsys *m, int array)
{
  if (!m->cold) return;
  if (m->cold_log_full) {
    for (int a = 0; a < m->narrays; a++)
      if (m->cold[a].bits && (array < 0 || a == array))
        memset(m->cold[a].bits, 0, (size_t)((m->cold[a].n + 63) / 64) * 8);
    if (array < 0) m->cold_log_full = 0, m->cold_log_n = 0;
    return;
  }
  uint32_t kept = 0;
  for (uint32_t k = 0; k < m->cold_log_n; k++) {
    uint64_t e = m->cold_log[k];
    int a = (int)(e >> 40);
    if (array >= 0 && a != array) m->cold_log[kept++] = e;
    else m->cold[a].bits[e & ((UINT64_C(1) << 40) - 1)] = 0;
  }
  m->cold_log_n = kept;
}

/* Marks sector as touched in array's footprint; 1 where it was not yet (0 untracked). */
static inline int cold_mark(sp_cm_memsys *m, uint64_t sector, int array)
{
  if (!m->cold) return 0;
  const struct cold_footprint *f = &m->cold[array];
  uint64_t i = sector - f->first;
  if (!f->bits || i >= f->n) return 0;
  uint64_t bit = 1ull << (i & 63), *w = &f->bits[i >> 6];
  if (*w & bit) return 0;
  if (!*w) {
    if (m->cold_log_n < COLD_LOG_CAP) m->cold_log[m->cold_log_n++] = ((uint64_t)array << 40) | (i >> 6);
    else m->cold_log_full = 1;
  }
  *w |= bit;
  return 1;
}

/* A sector read from DRAM into L2: counts its bytes, and marks its first touch (returns 1 then)
 * when the array's footprint is tracked. */
static inline int l2_dram_fill(sp_cm_memsys *m, uint64_t sector, sp_cm_counters *c, int array)
{
  c->dram_read_bytes += m->l2_sector_bytes;
  if (!cold_mark(m, sector, array)) return 0;
  c->dram_read_cold_bytes += m->l2_sector_bytes;
  return 1;
}

/* A sector outside the L2 sample: its outcome is not simulated, but where the array's footprint
 * is tracked its first touch is a compulsory miss whatever the L2 holds, and is counted
 * exactly rather than as the sample's share (a shortened run of 2mm.c:17 first-touches 1,125
 * fill blocks of B, of which 1/16 sampled gave 13.9 % too few DRAM reads once extrapolated).
 * A written sector is marked too: a later read finds it in L2, as a sampled one would. */
static inline void l2_cold_outside(sp_cm_memsys *m, uint64_t sector, int group, int array, int read)
{
  if (!cold_mark(m, sector, array) || !read) return;
  m->l2_sampled[group].cold_out_sectors++;
  m->l2_sampled[group].cold_out_bytes += m->l2_sector_bytes;
  if (m->fill_shift) m->cold_out[m->ncold_out++] = sector;
}

/* l2_cold_outside for the sectors `mask` of the line whose first sector is `first` */
static inline void l2_cold_outside_line(sp_cm_memsys *m, uint64_t first, uint32_t mask, int group,
                                        int array, int read)
{
  for (uint32_t b = mask; b; b &= b - 1) l2_cold_outside(m, first + (uint32_t)__builtin_ctz(b), group, array, read);
}

/* The rest of the fill blocks of this load's first touches outside the sample, after all its
 * own reads (as l2_read_line: a sector the load requests itself is its own miss). */
static void l2_cold_outside_fills(sp_cm_memsys *m, int group, int array)
{
  const uint64_t per = UINT64_C(1) << m->fill_shift;
  uint64_t done = UINT64_MAX; /* cold_out ascends: a block's sectors come together */
  int64_t filled = 0;
  for (uint32_t k = 0; k < m->ncold_out; k++) {
    uint64_t first = m->cold_out[k] & ~(per - 1);
    if (first == done) continue;
    done = first;
    for (uint64_t q = first; q < first + per; q++) filled += cold_mark(m, q, array);
  }
  m->l2_sampled[group].cold_out_bytes += filled * m->l2_sector_bytes;
  m->ncold_out = 0;
}

/* The load sectors `mask` (bit q: sector q of the line) of L2 line `line` that one instruction
 * requests: one lookup of the line, which allocates it when absent (evicting a whole line); a
 * sector is a hit when the line is resident with the sector valid, else a miss read from DRAM.
 * Then the rest of each missed sector's fill block (arch->l2_fill_bytes > one sector) that is
 * not valid is read with it: after the line's own sectors, so that two sectors of one block
 * requested together both miss and cost one 64-byte fill, and a lone one misses and its partner
 * hits later (the H100 probe, validation/results/h100/2026-11-22-transpose-probe.md). hit[k]
 * (if not NULL), for the k-th sector of the mask in ascending order: 1 for a hit, and for a
 * sector outside the L2 sample (whose outcome is not simulated). group: the counters to count
 * in; array: whose first touches (cold bits) to check. */
static inline CM_ALWAYS_INLINE void l2_read_line(sp_cm_memsys *m, uint64_t line, uint32_t mask,
                                                 uint32_t n, int in_sample, int group, int array,
                                                 uint8_t *hit)
{
  sp_cm_counters *c = &m->ctr[group];
  const uint64_t first = line << m->l2_line_shift;
  c->l2_read_sectors += n;
  if (!in_sample) {
    l2_cold_outside_line(m, first, mask, group, array, 1);
    if (hit) memset(hit, 1, n);
    return;
  }
  m->l2_sampled[group].reads += n;
  sp_cm_lookup r;
  uint64_t *p = l2_lookup(m, line, n, SP_CM_LOOKUP_INSERT, &r);
  if (!r.hit) *p = (uint64_t)group << 32;
  const uint32_t missed = mask & ~L2_VALID(*p);
  if (hit)
    for (uint32_t b = mask; b; b &= b - 1) *hit++ = !((missed >> __builtin_ctz(b)) & 1);
  const uint32_t per = UINT32_C(1) << m->fill_shift, block = (UINT32_C(1) << per) - 1;
  uint32_t nmissed = 0, blocks = 0; /* the fill blocks of the missed sectors */
  for (uint32_t b = missed; b; b &= b - 1, nmissed++) {
    const uint32_t q = (uint32_t)__builtin_ctz(b);
    c->l2_read_cold_sectors += l2_dram_fill(m, first + q, c, array);
    blocks |= block << (q & ~(per - 1));
  }
  c->l2_read_hit_sectors += n - nmissed;
  *p |= missed;
  const uint32_t rest = blocks & ~L2_VALID(*p);
  for (uint32_t b = rest; b; b &= b - 1) l2_dram_fill(m, first + (uint32_t)__builtin_ctz(b), c, array);
  c->l2_read_fill_sectors += mask_count(rest);
  *p |= rest;
}

/* The store sectors `mask` of L2 line `line`: written into the line (allocated when absent, or
 * for WRITE_BACK_NO_ALLOCATE only when resident, else straight to DRAM), valid and dirty; the
 * line's dirty sectors are then charged to this group. */
static inline CM_ALWAYS_INLINE void l2_write_line(sp_cm_memsys *m, uint64_t line, uint32_t mask,
                                                  uint32_t n, uint32_t partial, int in_sample,
                                                  int group, int array)
{
  sp_cm_counters *c = &m->ctr[group];
  const uint64_t first = line << m->l2_line_shift;
  c->l2_write_sectors += n;
  if (!in_sample) {
    l2_cold_outside_line(m, first, mask, group, array, 0);
    return;
  }
  m->l2_sampled[group].writes += n;
  sp_cm_lookup r;
  uint64_t *p = l2_lookup(m, line, n,
                          m->l2_store == SP_L2_STORE_WRITE_BACK_NO_ALLOC ? SP_CM_LOOKUP_TOUCH
                                                                          : SP_CM_LOOKUP_INSERT,
                          &r);
  if (!p) { /* no-allocate miss: straight to DRAM */
    c->dram_write_bytes += (int64_t)n * m->l2_sector_bytes;
    return;
  }
  if (!r.hit) *p = (uint64_t)group << 32;
  const uint32_t dirty = L2_DIRTY(*p);
  if (dirty && L2_OWNER(*p) != group) {
    int64_t moved = l2_mask_bytes(m, dirty);
    m->ctr[L2_OWNER(*p)].l2_dirty_bytes -= moved;
    c->l2_dirty_bytes += moved;
  }
  const uint32_t hits = L2_VALID(*p) & mask, fresh = mask & ~dirty;
  if (hits) c->l2_write_hit_sectors += (int64_t)mask_count(hits);
  if (fresh) c->l2_dirty_bytes += l2_mask_bytes(m, fresh);
  /* A store that writes part of a sector whose data is valid and clean (read, not written)
   * merges into it alone; another write to the sector while it stays makes both writers pay
   * (rank/time.c charges partial writes: validation/results/h100/2026-11-23-partial-probe/). */
  uint32_t alone = L2_ALONE(*p);
  if (m->l2_line_shift <= 2 && (alone & mask || partial)) {
    const uint32_t shared = alone & mask, lone = partial & hits & ~dirty;
    ctr_alone_sub(m, (int64_t)mask_count(shared), *p);
    c->st_partial_alone_sectors += (int64_t)mask_count(lone);
    alone = (alone & ~mask) | lone;
  }
  *p = (uint64_t)(L2_VALID(*p) | mask) | (uint64_t)(dirty | mask) << 16 | (uint64_t)group << 32 |
       (uint64_t)alone << 56;
}

/* (fully associative caches only: see SP_CM_PIPE; always inlined, see cm_lru_prefetch) */
static inline CM_ALWAYS_INLINE void l1_prefetch(const sm_state *s, uint64_t line)
{
  cm_lru_prefetch(s->l1f, line);
}

static inline CM_ALWAYS_INLINE void l2_prefetch(const sp_cm_memsys *m, uint64_t sector, int array)
{
  if (l2_in_sample(m, sector, array)) cm_lru_prefetch(m->l2f, sector >> m->l2_line_shift);
}

/* The L2 slots of the lines of an access at the L2's sector size: its own lines where the L2's
 * are the L1's size, else its sectors', once a line. */
static inline CM_ALWAYS_INLINE void l2_prefetch_lines(const sp_cm_memsys *m, const sp_cm_warp_access *wa,
                                                      int array)
{
  const unsigned sh = m->l2_line_shift;
  if (m->l2_lines_are_l1s) {
    for (uint32_t k = 0; k < wa->n_lines; k++) l2_prefetch(m, wa->lines[k] << sh, array);
    return;
  }
  const uint64_t *secs = wa->sectors;
  for (uint32_t k = 0; k < wa->n_sectors; k++)
    if (k == 0 || secs[k] >> sh != secs[k - 1] >> sh) l2_prefetch(m, secs[k], array);
}

static void l2_queue_pop(sp_cm_memsys *m)
{
  const l2_op *op = &m->l2q[m->l2q_head];
  if (op->write) {
    l2_write_line(m, op->line, op->mask, op->n, op->partial, op->in_sample, op->group, op->array);
  } else {
    l2_read_line(m, op->line, op->mask, op->n, op->in_sample, op->group, op->array, NULL);
    if (op->last && m->ncold_out) l2_cold_outside_fills(m, op->group, op->array);
  }
  m->l2q_head = (m->l2q_head + 1) % SP_CM_L2Q;
  m->l2q_count--;
}

/* Queues an L2 line access. Its index slot and set ends are prefetched on arrival, its set's
 * victim's slot half-way through the queue, and it is simulated SP_CM_L2Q accesses later, in
 * arrival order. */
static void l2_queue_push(sp_cm_memsys *m, const l2_op *op)
{
  if (m->l2q_count == SP_CM_L2Q) l2_queue_pop(m);
  const unsigned tail = (m->l2q_head + m->l2q_count) % SP_CM_L2Q;
  m->l2q[tail] = *op;
  m->l2q_count++;
  if (!m->l2f) return; /* (the set-associative table is not prefetched: see SP_CM_PIPE) */
  if (op->in_sample) cm_lru_prefetch(m->l2f, op->line);
  if (m->l2q_count > SP_CM_L2Q / 2) {
    const l2_op *mid = &m->l2q[(tail + SP_CM_L2Q / 2) % SP_CM_L2Q];
    if (mid->in_sample) cm_lru_prefetch_victim(m->l2f, mid->line);
  }
}

/* The sectors secs[0..n) (strictly ascending) grouped by line (sh: log2 sectors per line);
 * partial_which: bit i set where secs[i] is written in part. */
static void runs_of(const uint64_t *secs, uint32_t n, unsigned sh, uint64_t partial_which,
                    line_runs *r)
{
  const uint64_t in_line = (UINT64_C(1) << sh) - 1;
  uint32_t c = 0;
  if (n > 0 && secs[n - 1] - secs[0] == n - 1) { /* one contiguous range, as coalesced warps read */
    const uint64_t first = secs[0], last = secs[n - 1], l0 = first >> sh, l1 = last >> sh;
    for (uint64_t line = l0; line <= l1; line++, c++) {
      const uint64_t lo = line == l0 ? first & in_line : 0, hi = line == l1 ? last & in_line : in_line;
      r->line[c] = line;
      r->mask[c] = ((UINT64_C(2) << hi) - 1) & ~((UINT64_C(1) << lo) - 1);
      r->n[c] = (uint8_t)(hi - lo + 1);
      r->partial[c] = 0;
    }
  } else {
    for (uint32_t i = 0; i < n; c++) {
      const uint32_t i0 = i;
      const uint64_t line = secs[i] >> sh;
      uint64_t mask = UINT64_C(1) << (secs[i++] & in_line);
      for (; i < n && secs[i] >> sh == line; i++) mask |= UINT64_C(1) << (secs[i] & in_line);
      r->line[c] = line;
      r->mask[c] = mask;
      r->n[c] = (uint8_t)(i - i0);
      r->partial[c] = 0;
    }
  }
  r->count = c;
  /* the partial sectors' lines: runs ascend as the sectors do */
  if (!n) return;
  for (uint32_t k = 0, end = r->n[0]; partial_which; partial_which &= partial_which - 1) {
    const uint32_t i = (uint32_t)__builtin_ctzll(partial_which);
    if (i >= n) break;
    while (i >= end) end += r->n[++k];
    r->partial[k] |= UINT32_C(1) << (secs[i] & in_line);
  }
}

/* runs_of's r->mask and r->n for an access's own lines, from the coalescer's line masks
 * (wa->line_masks), without regrouping its sectors. r->line and r->partial are left alone: the
 * caller reads the lines from wa and a load no partial bits, and filling them here became a
 * memcpy and a memset call per instruction at -O3. */
static inline void masks_of_lines(const sp_cm_warp_access *wa, line_runs *r)
{
  /* a byte's count from a table: mask_count's 64-bit arithmetic here cost 1.3 % more host
   * instructions on matmul's ranking */
  static const uint8_t bits[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
  for (uint32_t k = 0; k < wa->n_lines; k++) {
    const uint8_t mask = wa->line_mask[k];
    r->mask[k] = mask;
    r->n[k] = (uint8_t)(bits[mask & 15] + bits[mask >> 4]);
  }
  r->count = wa->n_lines;
}

/* One instruction's L2 lines r: queued (l2_queue_push) where the queue is on, else at once (then
 * hit: as l2_read_line's, for all its sectors in order), a load's lines prefetched first (a
 * store's were on its arrival, sp_cm_memsys_access). */
static void l2_access(sp_cm_memsys *m, const line_runs *r, int write, int group, int array,
                      uint8_t *hit)
{
  const int queue = m->l2q_on && !hit;
  uint8_t in[SP_CM_MAX_L2_UNITS]; /* (the sample's hash once a line) */
  for (uint32_t k = 0; k < r->count; k++) in[k] = (uint8_t)l2_in_sample(m, r->line[k] << m->l2_line_shift, array);
  if (!queue && !write && m->l2f)
    for (uint32_t k = 0; k < r->count; k++)
      if (in[k]) cm_lru_prefetch(m->l2f, r->line[k]);
  for (uint32_t k = 0; k < r->count; k++) {
    const uint32_t mask = (uint32_t)r->mask[k];
    if (queue) {
      l2_op op = {r->line[k], mask, r->n[k], (uint8_t)write, k + 1 == r->count, in[k], r->partial[k], group, array};
      l2_queue_push(m, &op);
    } else if (write) {
      l2_write_line(m, r->line[k], mask, r->n[k], r->partial[k], in[k], group, array);
    } else {
      l2_read_line(m, r->line[k], mask, r->n[k], in[k], group, array, hit);
      if (hit) hit += r->n[k];
    }
  }
  if (!queue && !write && m->ncold_out) l2_cold_outside_fills(m, group, array);
}

/* A load through L1. The L1 is looked up first (all lines of the instruction), collecting the
 * sectors that go to L2, which are then read in the same order (ascending sectors) as a one-pass
 * loop would (l2_access). */
static void load_l1(sp_cm_memsys *m, sm_state *s, const sp_cm_warp_access *wa, int group,
                    int array, uint64_t warp)
{
  sp_cm_counters *c = &m->ctr[group];
  const int modeled = m->opt.l1_variant == SP_CM_L1_MODELED, timed = m->opt.time_fills;
  const uint64_t now = sm_tick(m, s, wa);
  if (modeled) pend_expire(&s->pend, now);
  const unsigned sh = m->spl_shift, sub = m->sub_shift;
  /* where the L2's lines are the L1's, a load's L2 lines are its L1 misses as they are (MODELED
   * also keeps each missed sector, to time its fill) */
  const int direct = m->l2_runs_are_l1s && !modeled;
  line_runs l1, l2;
  const uint64_t *lines = l1.line;
  if (wa->line_masks) { /* (the coalescer's lines are the L1's: sh) */
    masks_of_lines(wa, &l1);
    lines = wa->lines;
  } else {
    runs_of(wa->sectors, wa->n_sectors, sh, 0, &l1);
  }
  uint64_t todo[SP_CM_MAX_UNITS];
  uint8_t fill[SP_CM_MAX_UNITS]; /* 1: a miss whose fill is timed; 0: a refetch */
  uint32_t nt = 0;
  l2.count = 0;
  m->lookups += wa->n_sectors;
  for (uint32_t k = 0; k < l1.count; k++) {
    const uint64_t line = lines[k], mask = l1.mask[k];
    uint64_t *valid = l1_lookup(s, line, SP_CM_LOOKUP_INSERT);
    const uint64_t hits = mask & *valid, missed = mask & ~*valid;
    uint64_t to_l2 = missed;
    if (modeled) {
      for (uint64_t b = hits; b; b &= b - 1) {
        if (pend_ready(&s->pend, (line << sh) + (uint64_t)__builtin_ctzll(b)) > now) {
          c->ld_l1_pending_sectors++;
          if (m->opt.pending_refetch) to_l2 |= b & (0 - b);
        } else {
          c->ld_l1_hit_sectors++;
          c->ld_l1_hit_pending_sectors += timed && l1_fill_pending(*valid, now);
        }
      }
    } else if (hits) {
      const int64_t nh = hits == mask ? l1.n[k] : mask_count(hits);
      c->ld_l1_hit_sectors += nh;
      if (timed && l1_fill_pending(*valid, now) && !l1_fill_waited(m, s, *valid, warp))
        c->ld_l1_hit_pending_sectors += nh;
    }
    *valid |= missed;
    if (!to_l2) continue;
    if (timed) *valid = l1_fill_stamp(*valid, now + m->lat_l2, warp);
    if (direct) {
      l2.line[l2.count] = line;
      l2.mask[l2.count] = to_l2;
      l2.n[l2.count] = (uint8_t)mask_count(to_l2);
      l2.partial[l2.count++] = 0;
      nt += l2.n[l2.count - 1];
      continue;
    }
    for (uint64_t b = to_l2; b; b &= b - 1) {
      todo[nt] = (line << sh) + (uint64_t)__builtin_ctzll(b);
      fill[nt++] = (missed & b & (0 - b)) != 0;
    }
  }
  /* a miss in a warp over rows */
  if (nt > 0 && !one_run(wa))
    c->ld_l1_miss_bank_cycles += wa->bank_cycles;
  if (!nt) return;
  uint8_t hit[SP_CM_MAX_L2_UNITS];
  if (!direct) {
    uint64_t l2sec[SP_CM_MAX_L2_UNITS];
    const uint32_t n2 = nt << sub;
    for (uint32_t k = 0; k < n2; k++) l2sec[k] = (todo[k >> sub] << sub) + (k & ((1u << sub) - 1));
    runs_of(l2sec, n2, m->l2_line_shift, 0, &l2);
  }
  l2_access(m, &l2, 0, group, array, modeled ? hit : NULL);
  if (!modeled) return;
  for (uint32_t k = 0; k < nt; k++) {
    int all = 1;
    for (uint32_t q = 0; q < (1u << sub); q++) all &= hit[(k << sub) + q];
    if (fill[k]) pend_add(&s->pend, todo[k], now + (all ? m->lat_l2 : m->lat_dram));
  }
}

/* A store's L1 lines r: written into the L1 (allocated) or invalidated there (bypass). */
static void store_l1(sp_cm_memsys *m, sm_state *s, const sp_cm_warp_access *wa, const line_runs *r,
                     uint64_t warp)
{
  const uint64_t now = sm_tick(m, s, wa);
  if (m->opt.time_fills) *warp_slot(s, warp) = (warp_store){warp + 1, now};
  if (m->l1_store == SP_L1_STORE_WRITE_THROUGH_NO_ALLOC) return;
  const sp_cm_lookup_mode mode =
      m->l1_store == SP_L1_STORE_WRITE_THROUGH_ALLOC ? SP_CM_LOOKUP_INSERT : SP_CM_LOOKUP_PEEK;
  m->lookups += wa->n_sectors;
  for (uint32_t k = 0; k < r->count; k++) {
    uint64_t *valid = l1_lookup(s, r->line[k], mode);
    if (!valid) continue;
    if (mode == SP_CM_LOOKUP_INSERT) *valid |= r->mask[k];
    else *valid &= ~r->mask[k]; /* bypass: invalidate the cached copy */
  }
}

/* Simulates one instruction of the pipeline. */
static void simulate(sp_cm_memsys *m, const pipe_ent *e)
{
  sp_cm_counters *c = &m->ctr[e->group];
  sm_state *s = &m->sm[e->sm];
  const sp_cm_warp_access *wa = &e->wa, *l2wa = e->l2_split ? &e->wa2 : &e->wa;
  if (!e->write) {
    c->ld_requests += wa->requests;
    c->ld_sectors += wa->n_sectors;
    c->ld_lines += wa->n_lines;
    c->ld_l1_cycles += l1_cycles(wa);
    if (m->l1_on) {
      load_l1(m, s, wa, e->group, e->array, e->warp);
    } else if (l2wa->n_sectors) {
      line_runs r;
      runs_of(l2wa->sectors, l2wa->n_sectors, m->l2_line_shift, 0, &r);
      l2_access(m, &r, 0, e->group, e->array, NULL);
    }
  } else {
    c->st_requests += wa->requests;
    c->st_sectors += wa->n_sectors;
    c->st_lines += wa->n_lines;
    c->st_l1_cycles += st_l1_cycles(wa);
    c->st_partial_sectors += e->partial;
    line_runs r;
    runs_of(l2wa->sectors, l2wa->n_sectors, m->l2_line_shift, e->partial_which, &r);
    if (m->l1_on) {
      if (m->l2_runs_are_l1s) { /* (then no L2 split: l2wa is wa) */
        store_l1(m, s, wa, &r, e->warp);
      } else {
        line_runs r1;
        runs_of(wa->sectors, wa->n_sectors, m->spl_shift, 0, &r1);
        store_l1(m, s, wa, &r1, e->warp);
      }
    }
    l2_access(m, &r, 1, e->group, e->array, NULL);
  }
}

static void flush(sp_cm_memsys *m)
{
  while (m->pipe_count) {
    simulate(m, &m->pipe[m->pipe_head]);
    m->pipe_head = (m->pipe_head + 1) % SP_CM_PIPE;
    m->pipe_count--;
  }
  while (m->l2q_count) l2_queue_pop(m);
}

/* Instructions go through a short pipeline: coalesced and their L1 (and stores' L2) table slots
 * prefetched on arrival, simulated SP_CM_PIPE instructions later, strictly in arrival order
 * (so every count is what immediate simulation gives; the queries below flush first). With
 * 132 L1s and a 50 MB L2 model nearly every lookup misses the host's caches, and this lets the
 * host fetch the slots of several instructions at once. Where the L2's tables are large, its
 * lookups go through a second, later queue of their own (l2_queue_push), which also prefetches
 * the slot of a miss's victim: on an H100's full L2, the one miss the first could not hide. */
int sp_cm_memsys_access(void *memsys, const sp_warp_instr *wi)
{
  sp_cm_memsys *m = memsys;
  if (!m || !wi || wi->sm < 0 || wi->sm >= m->nsms || wi->array < 0 || wi->array >= m->narrays)
    return -1;
  int group = m->opt.nrefs > 0 ? wi->ref : wi->array;
  if (group < 0 || group >= m->ngroups) return -1;
  m->group_array[group] = wi->array;
  if (wi->active == 0) return 0;
  sm_state *s = &m->sm[wi->sm];
  if (m->l1_on && !s->ready && sm_prepare(m, s) != 0) return -1;
  if (m->pipe_count == SP_CM_PIPE) {
    simulate(m, &m->pipe[m->pipe_head]);
    m->pipe_head = (m->pipe_head + 1) % SP_CM_PIPE;
    m->pipe_count--;
  }
  pipe_ent *e = &m->pipe[(m->pipe_head + m->pipe_count) % SP_CM_PIPE];
  if (sp_cm_coalesce_shaped(&m->co, m->memo, wi->shape, wi->addr, wi->active, wi->access_bytes, &e->wa) != 0)
    return -1;
  e->sm = wi->sm;
  e->warp = (uint64_t)wi->block << 6 | (uint64_t)(wi->warp & 63);
  e->array = wi->array;
  e->group = group;
  e->write = wi->write;
  /* the L2-granularity sectors, when they differ from the L1 transactions */
  e->l2_split = m->sub_shift && (wi->write || !m->l1_on);
  if (e->l2_split &&
      sp_cm_coalesce_shaped(&m->co_l2, m->memo_l2, wi->shape, wi->addr, wi->active, wi->access_bytes, &e->wa2) != 0)
    return -1;
  const sp_cm_warp_access *l2wa = e->l2_split ? &e->wa2 : &e->wa;
  m->sectors_accessed += e->wa.n_sectors;
  e->partial_which = 0;
  e->partial = wi->write ? sp_cm_partial_sectors_shaped(e->l2_split ? &m->co_l2 : &m->co,
                                                        e->l2_split ? m->memo_l2 : m->memo,
                                                        wi->shape, wi->addr, wi->active,
                                                        wi->access_bytes, l2wa, &e->partial_which)
                         : 0;
  m->pipe_count++;
  if (m->opt.assoc != SP_CM_FULLY_ASSOCIATIVE) return 0;
  if (m->l1_on && (!wi->write || m->l1_store != SP_L1_STORE_WRITE_THROUGH_NO_ALLOC))
    for (uint32_t k = 0; k < e->wa.n_lines; k++) l1_prefetch(s, e->wa.lines[k]);
  /* a load's L2 slots only for its L1 misses, by l2_access: most sectors of a load hit the L1,
   * and prefetching all of them here cost 2-5 % of the ranking's time; with the L2 queue on,
   * the queue prefetches */
  if ((m->l1_on && !wi->write) || m->l2q_on) return 0;
  l2_prefetch_lines(m, l2wa, wi->array); /* (l2wa is at the L2's sector size here) */
  return 0;
}

/* Bitmaps kept for a later sp_cm_memsys_track_footprint (sp_cm_memsys_take_footprints), all
 * clear: per array (bits NULL: none), and the log and first-touch buffers. */
struct sp_cm_footprints {
  int narrays;
  uint32_t sector_bytes;
  struct cold_footprint *cold;
  uint64_t *log, *out;
};

void sp_cm_footprints_free(sp_cm_footprints *f)
{
  if (!f) return;
  for (int a = 0; a < f->narrays; a++) free(f->cold[a].bits);
  free(f->cold);
  free(f->log);
  free(f->out);
  free(f);
}

sp_cm_footprints *sp_cm_memsys_take_footprints(sp_cm_memsys *m)
{
  if (!m || (!m->cold && !m->spare)) return NULL;
  sp_cm_footprints *f = m->spare;
  if (!f) {
    f = calloc(1, sizeof *f);
    struct cold_footprint *cold = calloc((size_t)m->narrays, sizeof *cold);
    if (!f || !cold) {
      free(f);
      free(cold);
      return NULL; /* they stay with m, and go with it */
    }
    *f = (sp_cm_footprints){m->narrays, m->l2_sector_bytes, cold, NULL, NULL};
  }
  m->spare = NULL;
  if (m->cold) {
    cold_clear(m, -1);
    for (int a = 0; a < m->narrays; a++) {
      if (!m->cold[a].bits) continue;
      free(f->cold[a].bits);
      f->cold[a] = m->cold[a];
    }
    free(m->cold);
    free(f->log);
    free(f->out);
    f->log = m->cold_log;
    f->out = m->cold_out;
    m->cold = NULL;
    m->cold_log = m->cold_out = NULL;
    m->cold_log_n = m->ncold_out = 0;
  }
  return f;
}

void sp_cm_memsys_adopt_footprints(sp_cm_memsys *m, sp_cm_footprints *f)
{
  if (!f) return;
  if (!m || m->spare || m->narrays != f->narrays || m->l2_sector_bytes != f->sector_bytes) {
    sp_cm_footprints_free(f);
    return;
  }
  m->spare = f;
}

int sp_cm_memsys_track_footprint(sp_cm_memsys *m, int array, uint64_t base, int64_t bytes,
                                 int64_t max_bitmap_bytes)
{
  if (!m || array < 0 || array >= m->narrays || bytes <= 0) return -1;
  if (m->opt.l1_only) return 0; /* nothing is read from DRAM */
  flush(m);
  uint64_t first = base / m->l2_sector_bytes;
  uint64_t n = ((base + (uint64_t)bytes + m->l2_sector_bytes - 1) / m->l2_sector_bytes) - first;
  /* An array this small is simulated in full when the L2 is sampled: its few sectors would get
   * too few samples (hit rates over 100 % after extrapolation), and in full it takes at most
   * 1/16 of the sampled L2 more than its share (n x 2^s <= capacity / 16). */
  if (m->l2_sample_mask) m->l2_whole[array] = 16 * n <= m->l2_sectors;
  if ((int64_t)((n + 63) / 64 * 8) > max_bitmap_bytes) return -1;
  sp_cm_footprints *spare = m->spare;
  if (!m->cold) {
    m->cold = calloc((size_t)m->narrays, sizeof *m->cold);
    if (spare) {
      m->cold_log = spare->log, m->cold_out = spare->out;
      spare->log = spare->out = NULL;
    }
    if (!m->cold_log) m->cold_log = malloc(COLD_LOG_CAP * sizeof *m->cold_log);
    if (!m->cold_out) m->cold_out = malloc(((size_t)SP_CM_MAX_UNITS << SP_CM_MAX_SUB_SHIFT) * sizeof *m->cold_out);
    if (!m->cold || !m->cold_log || !m->cold_out) return -1;
  }
  struct cold_footprint *f = &m->cold[array];
  if (f->bits && f->first == first && f->n == n) {
    cold_clear(m, array); /* a reused memory system */
    return 0;
  }
  cold_clear(m, array); /* drops the array's log entries before its bitmap goes */
  free(f->bits);
  f->bits = NULL;
  struct cold_footprint *kept = spare ? &spare->cold[array] : NULL;
  if (kept && kept->bits) {
    if (kept->first == first && kept->n == n) { /* clear already */
      *f = *kept;
      kept->bits = NULL;
      return 0;
    }
    free(kept->bits);
    kept->bits = NULL;
  }
  f->bits = calloc((size_t)((n + 63) / 64), sizeof *f->bits);
  if (!f->bits) return -1;
  f->first = first;
  f->n = n;
  return 0;
}

/* A group's counters, its L2 outcomes scaled from the sample to all its requests: each sampled
 * miss (and what it brought: DRAM bytes, first touches, fill sectors, write-backs, dirty data)
 * counts f times, f = the sampled arrays' L2 read (write) requests over their sampled ones (2^s
 * up to the hash's luck; l2_sample_scale), and hits are the requests that are not misses. The ranking
 * extrapolates from differences of counters read at two times, which needs an estimator that
 * is nearly additive over time: f is one ratio for all groups, so it settles early. (A ratio
 * per group, hits x requests / sampled requests, was not: a hit rate rising between the two
 * times made the difference's hits exceed its requests.) Misses are capped at the requests,
 * first touches at the misses. */
typedef struct l2_scale {
  double read, write; /* requests over sampled requests of the sampled arrays */
} l2_scale;

static l2_scale l2_sample_scale(const sp_cm_memsys *m)
{
  double r = 0, rs = 0, w = 0, ws = 0;
  for (int k = 0; k < m->ngroups; k++)
    if (!m->l2_whole[m->group_array[k]]) {
      r += (double)m->ctr[k].l2_read_sectors;
      rs += (double)m->l2_sampled[k].reads;
      w += (double)m->ctr[k].l2_write_sectors;
      ws += (double)m->l2_sampled[k].writes;
    }
  double f = (double)(m->l2_sample_mask + 1);
  return (l2_scale){rs > 0 ? r / rs : f, ws > 0 ? w / ws : f};
}

static sp_cm_counters group_counters(const sp_cm_memsys *m, int g, l2_scale f)
{
  sp_cm_counters c = m->ctr[g];
  if (!m->l2_sample_mask || m->l2_whole[m->group_array[g]]) return c;
  const double fr = f.read, fw = f.write;
  const struct l2_sampled *n = &m->l2_sampled[g];
  const int a = m->group_array[g];
  if (m->cold && m->cold[a].bits) { /* first touches counted exactly, in and out of it */
    int64_t rmiss = llround((double)(n->reads - c.l2_read_hit_sectors - c.l2_read_cold_sectors) * fr) +
                    c.l2_read_cold_sectors + n->cold_out_sectors;
    if (rmiss > c.l2_read_sectors) rmiss = c.l2_read_sectors;
    int64_t cold = c.l2_read_cold_sectors + n->cold_out_sectors;
    int64_t cold_bytes = c.dram_read_cold_bytes + n->cold_out_bytes;
    c.dram_read_bytes = llround((double)(c.dram_read_bytes - c.dram_read_cold_bytes) * fr) + cold_bytes;
    c.dram_read_cold_bytes = cold_bytes;
    c.l2_read_hit_sectors = c.l2_read_sectors - rmiss;
    c.l2_read_cold_sectors = cold < rmiss ? cold : rmiss;
  } else {
    int64_t rmiss = llround((double)(n->reads - c.l2_read_hit_sectors) * fr);
    if (rmiss > c.l2_read_sectors) rmiss = c.l2_read_sectors;
    c.l2_read_hit_sectors = c.l2_read_sectors - rmiss;
    c.l2_read_cold_sectors = llround((double)c.l2_read_cold_sectors * fr);
    if (c.l2_read_cold_sectors > rmiss) c.l2_read_cold_sectors = rmiss;
    c.dram_read_bytes = llround((double)c.dram_read_bytes * fr);
    c.dram_read_cold_bytes = llround((double)c.dram_read_cold_bytes * fr);
  }
  int64_t wmiss = llround((double)(n->writes - c.l2_write_hit_sectors) * fw);
  if (wmiss > c.l2_write_sectors) wmiss = c.l2_write_sectors;
  c.l2_write_hit_sectors = c.l2_write_sectors - wmiss;
  c.l2_read_fill_sectors = llround((double)c.l2_read_fill_sectors * fr);
  c.l2_dirty_bytes = llround((double)c.l2_dirty_bytes * fw);
  c.st_partial_alone_sectors = llround((double)c.st_partial_alone_sectors * fw);
  c.dram_write_bytes = llround((double)c.dram_write_bytes * fw);
  return c;
}

void sp_cm_memsys_counters(const sp_cm_memsys *m, int array, sp_cm_counters *out)
{
  memset(out, 0, sizeof *out);
  if (!m) return;
  flush((sp_cm_memsys *)m); /* the object comes from create: never really const */
  if (array >= 0) {
    if (array < m->ngroups) *out = group_counters(m, array, l2_sample_scale(m));
    return;
  }
  const l2_scale f = l2_sample_scale(m);
  for (int a = 0; a < m->ngroups; a++) {
    const sp_cm_counters g = group_counters(m, a, f), *c = &g;
    out->ld_requests += c->ld_requests;
    out->ld_sectors += c->ld_sectors;
    out->ld_l1_hit_sectors += c->ld_l1_hit_sectors;
    out->st_requests += c->st_requests;
    out->st_sectors += c->st_sectors;
    out->ld_lines += c->ld_lines;
    out->st_lines += c->st_lines;
    out->ld_l1_cycles += c->ld_l1_cycles;
    out->st_l1_cycles += c->st_l1_cycles;
    out->l2_read_sectors += c->l2_read_sectors;
    out->l2_read_hit_sectors += c->l2_read_hit_sectors;
    out->l2_write_sectors += c->l2_write_sectors;
    out->dram_read_bytes += c->dram_read_bytes;
    out->dram_write_bytes += c->dram_write_bytes;
    out->l2_write_hit_sectors += c->l2_write_hit_sectors;
    out->l2_dirty_bytes += c->l2_dirty_bytes;
    out->ld_l1_pending_sectors += c->ld_l1_pending_sectors;
    out->ld_l1_hit_pending_sectors += c->ld_l1_hit_pending_sectors;
    out->ld_l1_miss_bank_cycles += c->ld_l1_miss_bank_cycles;
    out->l2_read_cold_sectors += c->l2_read_cold_sectors;
    out->dram_read_cold_bytes += c->dram_read_cold_bytes;
    out->l2_read_fill_sectors += c->l2_read_fill_sectors;
    out->st_partial_sectors += c->st_partial_sectors;
    out->st_partial_alone_sectors += c->st_partial_alone_sectors;
  }
}

/* The scale is a sum over every group: computed once here, where a call per group would
 * compute it for each (the ranking reads all its references' counters at every snapshot). */
void sp_cm_memsys_counters_each(const sp_cm_memsys *m, int n, sp_cm_counters *out)
{
  memset(out, 0, (size_t)(n > 0 ? n : 0) * sizeof *out);
  if (!m) return;
  flush((sp_cm_memsys *)m); /* the object comes from create: never really const */
  const l2_scale f = l2_sample_scale(m);
  for (int g = 0; g < n && g < m->ngroups; g++) out[g] = group_counters(m, g, f);
}

void sp_cm_memsys_reset(sp_cm_memsys *m)
{
  if (!m) return;
  m->pipe_count = m->l2q_count = 0; /* instructions not simulated yet are dropped */
  m->ncold_out = 0;
  if (m->l2f) sp_cm_lru_clear(m->l2f);
  if (m->l2s) sp_cm_setassoc_clear(m->l2s);
  for (int i = 0; i < m->nsms; i++) {
    sm_state *s = &m->sm[i];
    if (s->l1f) sp_cm_lru_clear(s->l1f);
    if (s->l1s) sp_cm_setassoc_clear(s->l1s);
    if (s->pend.ring) {
      cm_map_clear(&s->pend.map);
      s->pend.head = s->pend.count = 0;
    }
    if (s->stores && s->clock) memset(s->stores, 0, SP_CM_WARP_SLOTS * sizeof *s->stores);
    s->clock = 0;
  }
  memset(m->ctr, 0, (size_t)m->ngroups * sizeof *m->ctr);
  memset(m->l2_sampled, 0, (size_t)m->ngroups * sizeof *m->l2_sampled);
  m->lookups = 0;
  m->sectors_accessed = 0;
  cold_clear(m, -1);
}

/* Bytes of one SM's structures (allocated on its first access). */
static size_t sm_bytes(const sp_cm_memsys *m)
{
  size_t b = m->opt.assoc == SP_CM_SET_ASSOCIATIVE
                 ? sp_cm_setassoc_bytes_for(m->l1_sets, m->l1_ways)
                 : sp_cm_lru_bytes_for(m->l1_lines);
  if (m->opt.l1_variant == SP_CM_L1_MODELED) {
    uint64_t cap = cm_pow2_at_least(m->pend_entries < 64 ? 64 : m->pend_entries);
    b += (size_t)cap * sizeof(pend_ent) + (size_t)cm_pow2_at_least(2 * cap) * sizeof(cm_slot);
  }
  if (m->opt.time_fills) b += SP_CM_WARP_SLOTS * sizeof(warp_store);
  return b;
}

size_t sp_cm_memsys_full_bytes(const sp_cm_memsys *m)
{
  if (!m) return 0;
  size_t b = sp_cm_memsys_memory_bytes(m);
  if (m->l1_on)
    for (int i = 0; i < m->nsms; i++)
      if (!m->sm[i].ready) b += sm_bytes(m) - (m->l1_tables ? m->l1_table_bytes : 0);
  return b;
}

size_t sp_cm_memsys_memory_bytes(const sp_cm_memsys *m)
{
  if (!m) return 0;
  size_t b = sizeof *m + (size_t)m->nsms * sizeof *m->sm + (size_t)m->narrays +
             (size_t)m->ngroups * (sizeof *m->ctr + sizeof *m->group_array + sizeof *m->l2_sampled) +
             SP_CM_PIPE * sizeof *m->pipe + SP_CM_L2Q * sizeof *m->l2q +
             2 * sp_cm_coalesce_memo_bytes();
  b += m->l2f ? sp_cm_lru_memory_bytes(m->l2f) : sp_cm_setassoc_memory_bytes(m->l2s);
  if (m->l1_tables) b += (size_t)m->nsms * m->l1_table_bytes;
  for (int i = 0; i < m->nsms; i++) {
    const sm_state *s = &m->sm[i];
    if (s->l1f) b += sp_cm_lru_memory_bytes(s->l1f);
    if (s->l1s) b += sp_cm_setassoc_memory_bytes(s->l1s);
    if (s->pend.ring)
      b += (size_t)(s->pend.mask + 1) * sizeof *s->pend.ring +
           (size_t)(s->pend.map.mask + 1) * sizeof *s->pend.map.slots;
  }
  for (int a = 0; a < m->narrays; a++) {
    if (m->cold && m->cold[a].bits) b += (size_t)((m->cold[a].n + 63) / 64) * 8;
    if (m->spare && m->spare->cold[a].bits) b += (size_t)((m->spare->cold[a].n + 63) / 64) * 8;
  }
  return b;
}

int64_t sp_cm_memsys_sectors_accessed(const sp_cm_memsys *m)
{
  return m ? m->sectors_accessed : 0;
}

int64_t sp_cm_memsys_lookups(const sp_cm_memsys *m)
{
  if (m) flush((sp_cm_memsys *)m);
  return m ? m->lookups : 0;
}
