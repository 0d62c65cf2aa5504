/* The memory system a candidate's warp instructions go through (cachemodel stage): coalescer,
 * one L1 per SM, the L2 shared by all SMs fed round-robin with the SMs' L1 miss streams and
 * stores (Fig. 7.7), DRAM = L2 misses. Counts what the GPU's counters count, per array and in
 * total. Prefix sp_cm_ (the cachemodel module). */
#ifndef SCHEDPREDICT_MEMSYS_H
#define SCHEDPREDICT_MEMSYS_H

#include <stdint.h>

#include "schedpredict/arch.h"
#include "schedpredict/traces.h"

typedef enum sp_cm_l1_variant {
  SP_CM_L1_BASE,    /* requests processed strictly in order (dissertation's "Base") */
  SP_CM_L1_MODELED, /* parallel memory processing with timestamps (Fig. 7.9, "Modeled") */
} sp_cm_l1_variant;
/* cachemodel/memsys.c defines both precisely. In short: MODELED stamps each SM's instructions
 * with a cycle clock (advanced by the instruction's line count) and counts a load of a sector
 * whose fill is still in flight as a lookup miss merged with that fill (ld_l1_pending_sectors);
 * BASE counts it as a hit, which is what Hopper's Nsight reports (DESIGN.md's transpose). */

typedef enum sp_cm_assoc {
  SP_CM_FULLY_ASSOCIATIVE, /* as in the dissertation (reuse distance) */
  SP_CM_SET_ASSOCIATIVE,   /* sets x ways from the arch description */
} sp_cm_assoc;

/* Each field names the Nsight Compute counter it corresponds to. */
typedef struct sp_cm_counters {
  int64_t ld_requests;     /* l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum (global_load_requests) */
  int64_t ld_sectors;      /* l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum (gld_transactions) */
  int64_t ld_l1_hit_sectors; /* l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum */
  int64_t st_requests;     /* l1tex__t_requests_pipe_lsu_mem_global_op_st.sum */
  int64_t st_sectors;      /* l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum */
  /* Every L1 miss is an L2 read here: the L1's misses (..._ld_lookup_miss.sum,
   * l1tex__m_xbar2l1tex_read_sectors.sum). The GPU's lts__t_sectors_srcunit_tex_op_read.sum
   * (l2_tex_read_transactions) counts them after the L2 request coalescer merged misses of
   * several SMs for one sector (H100: validation/results/h100/2026-11-24-l2-merge-probe/), and
   * its lookup hits are then fewer by the merged ones. */
  int64_t l2_read_sectors;
  int64_t l2_read_hit_sectors;
  int64_t l2_write_sectors;    /* lts__t_sectors_srcunit_tex_op_write.sum */
  int64_t dram_read_bytes;     /* dram__bytes_read.sum (dram_read_transactions x 32) */
  int64_t dram_write_bytes;    /* dram__bytes_write.sum: write-backs of the dirty sectors of L2
                                  lines evicted during the run (write-back-allocate), or store
                                  sectors that missed a write-back-no-allocate L2 */
  /* --- added (memsys.c) --- */
  int64_t l2_write_hit_sectors; /* lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum */
  int64_t l2_dirty_bytes;       /* not a counter: dirty data still in the L2 now (what a flush
                                   after the kernel would write; Nsight's dram__bytes_write of the
                                   kernel does not include it) */
  int64_t l2_read_cold_sectors; /* no Nsight counter: read misses that were the first touch of
                                   their sector in this run (compulsory), when tracked */
  int64_t ld_l1_pending_sectors; /* no Nsight counter: Modeled variant only, load sectors whose
                                   tag was present but whose fill was still in flight (counted
                                   as lookup misses, not in ld_l1_hit_sectors) */
  int64_t ld_l1_hit_pending_sectors; /* no Nsight counter: with opt.time_fills, the part of
                                   ld_l1_hit_sectors whose fill was still in flight (a hit to the
                                   counters, a miss's wait to the warp: rank/time.c) */
  int64_t ld_l1_miss_bank_cycles; /* no counter: the bank cycles of load requests that miss the
                                   L1 in a warp over several runs of sectors (rows); the L1's
                                   data stage takes such a request about twice its bank cycles
                                   (validation/results/h100/2026-11-27-l1-miss-wavefront-probe),
                                   a hit exactly its bank cycles: rank/time.c adds these */
  int64_t ld_lines, st_lines; /* no counter read: distinct 128-byte lines of each request, summed
                                 (the L1's tag stage looks up 4 lines a cycle: ld_l1_cycles;
                                 the sectors over the lines are how much of a line a request
                                 reads: rank/time.c sp_rank_dram_drift) */
  int64_t dram_read_cold_bytes; /* no counter: the part of dram_read_bytes that was the first
                                   read of its sector in this run (compulsory), when tracked; with
                                   arch->l2_fill_bytes > a sector it includes the fill partners */
  int64_t l2_read_fill_sectors; /* no counter: sectors a read miss brought from DRAM besides its
                                   own (the rest of its arch->l2_fill_bytes block, when absent) */
  int64_t st_partial_sectors; /* no counter: the store sectors (at the L2's sector size) that
                                 their instruction writes only in part, summed per instruction;
                                 the L2 takes them more slowly than whole ones (rank/time.c) */
  int64_t ld_l1_cycles; /* no counter read: the cycles an SM's L1 spends on the load requests as
                           if they all hit, summed: each the larger of its bank cycles
                           (sp_cm_warp_access) and its lines over the tag stage's lines a
                           cycle (cachemodel/memsys.c) */
  int64_t st_l1_cycles; /* no counter read: the cycles an SM's L1 data stage spends on the store
                           requests, summed: a request on one run of sectors its lines, one in a
                           warp over several runs (rows) twice its bank cycles, at most 32
                           (validation/results/h200/2026-11-30-l1-store-wavefront-probe) */
  int64_t st_partial_alone_sectors; /* no counter: the part of st_partial_sectors that wrote
                                      into a sector valid and clean in the L2 (read, not written)
                                      and that no other write touched while the L2 kept it (a
                                      red-black sweep's); a sample that leaves out other
                                      writers' blocks overcounts them, so the ranking takes
                                      them only where the nest shows the other writers are the
                                      same instruction (rank.c sp_parity_stores_alone), and
                                      rank/time.c does not charge those */
} sp_cm_counters;

typedef struct sp_cm_options {
  sp_cm_l1_variant l1_variant;
  sp_cm_assoc assoc;
  /* Kepler-style: 128-byte transactions (sector = line = 128) whatever the arch says */
  bool kepler_transactions;
  /* when the trace is sampled (fewer SMs simulated), scale the shared L2 to this fraction of
   * its capacity so each simulated SM sees its share; 1.0 = whole L2 */
  double l2_fraction; /* 0 is read as 1.0 */
  /* --- added (memsys.c) --- */
  int64_t l1_bytes;  /* L1 capacity for global data; 0 = arch->l1_bytes (pass
                        sp_arch_l1_bytes_for_shared() when the kernel uses shared memory) */
  int l1_ways, l2_ways; /* SET_ASSOCIATIVE ways; 0 = the arch's l1_assoc / l2_assoc, or when
                           that is unknown (0): SP_CM_DEFAULT_L1_WAYS / SP_CM_DEFAULT_L2_WAYS */
  /* FULLY_ASSOCIATIVE: the L2's hashed sets hold this many sectors (a power of two, at least a
   * line's); 0 = the arch's l2_reuse_set_sectors, and where it has none (or with -1) the L2 is
   * one fully associative LRU */
  int64_t l2_set_sectors;
  /* Modeled variant: a load that finds its sector's fill still in flight is a lookup miss; false
   * (default): it merges with the outstanding fill (no L2 request, as an MSHR does); true: it
   * sends its own L2 request (no miss merging; l2_read_sectors grows) */
  bool pending_refetch;
  /* Base variant: also stamp each fill with the SM's clock (as MODELED does, with the L2 hit
   * latency for every fill) and count the hits that find their fill still in flight in
   * ld_l1_hit_pending_sectors. Every other count is unchanged. */
  bool time_fills;
  /* > 0: keep the counters per reference (wi->ref, 0..nrefs-1) instead of per array;
   * sp_cm_memsys_counters(m, r, ...) then returns reference r's. Footprints stay per array. */
  int nrefs;
  /* > 0: spatial sampling of the L2 (SHARDS, Waldspurger et al., FAST 2015): only the L2 lines
   * whose hash has its low l2_sample_shift bits zero (1 in 2^shift) are looked up, in an
   * L2 of 1/2^shift of the capacity; every L2 request is still counted, and the hits, DRAM bytes,
   * write-backs and dirty bytes are the sampled ones times (about) 2^shift; small arrays are
   * simulated in full (memsys.c). FULLY_ASSOCIATIVE and BASE only (create fails otherwise). 0: exact. */
  int l2_sample_shift;
  /* Count every L2 request (l2_read_sectors, l2_write_sectors) but simulate no L2: its hits,
   * DRAM bytes, first touches and write-backs stay 0. For runs of which only the L1 side is
   * used (the ranking's SMs run alone for their L1 rates). BASE only (create fails otherwise):
   * MODELED times its fills by their L2 outcome. Every L1 count is what the full model gives. */
  bool l1_only;
  /* The L2's queue (memsys.c, l2_queue_push): its lookups run behind the L1s' so that their
   * host cache misses overlap. No count depends on it. 0: on where the L2's tables are large
   * (BASE only); 1: on (BASE only); -1: off. */
  int l2_queue;
} sp_cm_options;

/* Ways assumed when the arch does not publish them (memsys.c says why). */
#define SP_CM_DEFAULT_L1_WAYS 64
#define SP_CM_DEFAULT_L2_WAYS 16

typedef struct sp_cm_memsys sp_cm_memsys;

/* NULL on a bad argument or allocation failure. narrays: counters are kept per array. */
sp_cm_memsys *sp_cm_memsys_create(const sp_arch *arch, int nsms, int narrays,
                                  const sp_cm_options *opt);
/* Feeds one warp instruction (usable directly as an sp_trace_sink with ctx = the memsys). */
int sp_cm_memsys_access(void *memsys, const sp_warp_instr *wi);
/* Counters so far: total, or of one array (array >= 0; of one reference with opt.nrefs). */
void sp_cm_memsys_counters(const sp_cm_memsys *m, int array, sp_cm_counters *out);
/* out[g] = sp_cm_memsys_counters(m, g, ...) for g in 0..n-1 (zero past the groups). */
void sp_cm_memsys_counters_each(const sp_cm_memsys *m, int n, sp_cm_counters *out);
void sp_cm_memsys_free(sp_cm_memsys *m);
/* Tracks which sectors of the array [base, base+bytes) were ever read from DRAM, to tell
 * compulsory misses from capacity misses (l2_read_cold_sectors): sampling extrapolates the two
 * differently. One bit per sector; returns -1 (and tracks nothing) past max_bitmap_bytes. */
int sp_cm_memsys_track_footprint(sp_cm_memsys *m, int array, uint64_t base, int64_t bytes,
                                 int64_t max_bitmap_bytes);
/* The footprints' bitmaps, emptied and taken out of m (NULL where it tracks none), for the
 * model that replaces it: a ranking recreates a worker's model for each configuration
 * (himeno.c: 677 models, 3.5 MB of bitmaps for its 14 arrays), and allocating and clearing
 * them again took a tenth of its time. sp_cm_memsys_adopt_footprints gives them to a model
 * (taking them over; freed where it has its own or other arrays); its
 * sp_cm_memsys_track_footprint then reuses those of the same array and extent. */
typedef struct sp_cm_footprints sp_cm_footprints;
sp_cm_footprints *sp_cm_memsys_take_footprints(sp_cm_memsys *m);
void sp_cm_memsys_adopt_footprints(sp_cm_memsys *m, sp_cm_footprints *f);
void sp_cm_footprints_free(sp_cm_footprints *f);
/* Heap the memory system holds now (per-SM L1s are allocated on an SM's first access), and
 * what it will hold once every SM has been used. */
size_t sp_cm_memsys_memory_bytes(const sp_cm_memsys *m);
size_t sp_cm_memsys_full_bytes(const sp_cm_memsys *m);
/* Back to the state create left it in (empty caches, zero counters, footprints tracked as
 * before and cleared), keeping the memory: for the next candidate of the same configuration. */
void sp_cm_memsys_reset(sp_cm_memsys *m);
/* Sector lookups done so far (L1 sector lookups of loads and stores + L2 sector lookups): the
 * benchmark's unit of work. */
int64_t sp_cm_memsys_lookups(const sp_cm_memsys *m);
/* Sectors (at the L1's transaction size) of the instructions fed so far, counted as they
 * arrive: what simulating them costs, known before the pipeline has simulated them. */
int64_t sp_cm_memsys_sectors_accessed(const sp_cm_memsys *m);

/* Adds to c the L1-side counts of `times` instructions like wi (requests, sectors and lines,
 * coalesced at the transaction size a memory system of this arch and options uses), and for a
 * store its L2 write sectors (every store is written through), touching no cache: for
 * instructions counted rather than simulated (sp_trace_ref_classes). 0, or -1 on a bad access
 * size or arch. */
int sp_cm_l1_side_add(const sp_arch *arch, const sp_cm_options *opt, const sp_warp_instr *wi,
                      int64_t times, sp_cm_counters *c);

/* Derived rates (0 when the denominator is 0). */
double sp_cm_l1_hit_rate(const sp_cm_counters *c);     /* ld_l1_hit_sectors / ld_sectors */
double sp_cm_l2_read_hit_rate(const sp_cm_counters *c); /* l2_read_hit_sectors / l2_read_sectors */
/* What Hopper's raw lts__t_sector_op_read_hit_rate.pct would read (as a fraction) for these
 * counters. On an arch with 64-byte L2 fills (arch->l2_fill_bytes > a sector): every sector a
 * miss fills besides its own (F = l2_read_fill_sectors) counts as one more read lookup, a miss:
 *   raw = H / (N + F), N = l2 read sectors, H = hits.
 * That fits both variants of the H100 probe (validation/results/h100/2026-11-22-transpose-probe.md:
 * one-sector loads H = N/2, F = N/2 -> 33.3%, measured 33.34%; whole-line loads H = 0, F = 0 ->
 * 0%, measured 0.04%) and DESIGN.md's 33% on the H200. Otherwise (the earlier hypothesis, for
 * arch->l2_partitions P > 1): each read miss homed in a far partition (fraction (P-1)/P) costs one
 * more lookup, reported as a hit: raw = (H + M (P-1)/P) / (N + M (P-1)/P), M = N - H; P = 1
 * gives H / N. Use sectors and DRAM bytes to judge the model, this only to read a raw rate. */
double sp_cm_l2_raw_hit_rate_estimate(const sp_cm_counters *c, const sp_arch *arch);

/* The dissertation's memory access cost, Eq. 7.3-7.7, exactly:
 *   Mem_L1   = global_loads * (1 - L1_miss_rate) * L1_latency
 *   Mem_L2   = global_loads * L1_miss_rate * 4 * L2_latency
 *   Mem_DRAM = global_loads * L1_miss_rate * L2_miss_rate * 4 * DRAM_latency
 * where global_loads are L1 load transactions and the 4 is the number of 32-byte L2/DRAM
 * transactions per L1 transaction (128 bytes on Kepler). On sectored L1s (Volta and later) the
 * L1 transaction is a 32-byte sector and that factor is 1: the formula is the same, with
 * global_loads = ld_sectors and 4 -> l1_transaction_bytes / 32. Latencies from the arch. */
double sp_cm_cost_xu(const sp_cm_counters *c, const sp_arch *arch);
/* The same with the L1 transaction size given (counters from a kepler_transactions run on a
 * sectored arch: 128); sp_cm_cost_xu uses arch->l1_sector_bytes. The three terms go to parts[3]
 * (Mem_L1, Mem_L2, Mem_DRAM) when parts is not NULL. */
double sp_cm_cost_xu_ex(const sp_cm_counters *c, const sp_arch *arch, int l1_transaction_bytes,
                        double parts[3]);

#endif
