/* Every candidate of a nest through the trace generator and the memory model, then the cost and
 * the time model; sorted by predicted time. */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedpredict/rank.h"

#include "rank/refine.h"
#include "rank/sample_cache.h"

/* Ranking runs in two passes: every candidate on a small sample of the trace (screening), then
 * the best of those and the compiler defaults again on a larger sample (refinement, in rounds
 * until no screened-only candidate is expected to beat the best refined one: rank/refine.c);
 * the final order is the refined one. Budgets are warp instructions simulated per candidate. A sample
 * takes, in this order: fewer SMs (screening only), fewer waves, a shortened sequential loop
 * (sp_shorten_choice), and as the last resort a cut trace; sp_run_candidate extrapolates. */
/* Screening: shared by all candidates of the space (1,000,000 while screening samples were
 * spread over 4 SMs; on one SM, with whole passes of the body, half of it chose as well on
 * the nests bench_rank --reference checks: bench/results/2026-11-23-screening.md) */
#define SP_SCREEN_TOTAL 500000
#define SP_SCREEN_MIN 1000
/* What a sample costs to simulate is its sector lookups. A budget of instructions holds for
 * instructions of up to SP_BUDGET_SECTORS_PER_INSTR sectors each (a warp's coalesced access to
 * doubles) and shrinks for those of more in proportion, down to SP_BUDGET_MIN_SHARE of it: a
 * refinement's from the candidate's screened counts (sp_refine_budget), a screening sample's
 * as it runs (sp_capped_sink). */
#define SP_BUDGET_SECTORS_PER_INSTR 8.0
#define SP_BUDGET_MIN_SHARE 0.25
#define SP_DEFAULT_SAMPLE_BUDGET 150000
#define SP_REFINE_COUNT 8
#define SP_REFINE_ROUNDS 4
/* A refined candidate whose whole-grid run is a cut trace also runs a few SMs on their own for
 * its L1 (sp_refine_l1), on this share of the refinement budget */
#define SP_L1_SAMPLE_SHARE 0.25
#define SP_L1_SM_PERIOD_MAX 16 /* SMs, see sp_refine_l1 */
/* L2 sampling (memsys.h): the sampled L2 keeps at least this many sectors (2 MB of H100 L2),
 * at a rate of no less than 1 in 2^SP_L2_SAMPLE_MAX_SHIFT fill blocks */
#define SP_L2_SAMPLE_MIN_SECTORS 65536
#define SP_L2_SAMPLE_MAX_SHIFT 6

/* Warp instructions the candidate will issue: each reference once per iteration of its loops,
 * divided over the lanes of a warp. */
static double sp_estimate_warp_instructions(const sp_nest *n) {
  double total = 0;
  for (int r = 0; r < n->nrefs; r++) total += sp_rank_ref_executions(n, r);
  return total / 32;
}

/* The blocks of s an SM holds at once (at least 1: a block too large for the arch still runs). */
static int sp_blocks_per_sm(const sp_arch *arch, const sp_schedule *s) {
  int active = sp_schedule_blocks_per_sm(arch, s);
  return active > 1 ? active : 1;
}

/* t consecutive indices of s's collapsed group as extent[] of its loops: at most min(trip, t)
 * values of the innermost loop, and outwards, as a box (box: ceil((t - 1) / trip) + 1 rows of
 * the loop outside, which holds such a run wherever it starts) or as the extents the run
 * covers on average (t / trip rows: a strip of a wave's 135,168 iterations of heat3d's 254^3
 * is 2.1 planes of i, the box 4). */
static void sp_collapsed_extent(const sp_nest *n, const sp_schedule *s, double t, bool box,
                                double *extent) {
  for (int k = s->collapse_first + s->collapse_count - 1; k >= s->collapse_first; k--) {
    double trip = n->loops[k].trip_max > 0 ? (double)n->loops[k].trip_max : 1;
    extent[k] = fmin(trip, t);
    t = box ? ceil((t - 1) / trip) + 1 : fmax(1, t / trip);
  }
}

/* The bytes one block touches in one pass of loop `loop` run for `trip` iterations: its threads'
 * share of the loops on thread dimensions, `trip` of the loop, one iteration of every other.
 * A lower bound of what an SM's L1 holds through the pass (its other blocks may share data);
 * upper: with a collapsed group's threads on every index they can reach, an upper bound of
 * one block's. */
static double sp_block_pass_bytes(const sp_nest *n, const sp_schedule *s, int loop, double trip,
                                  int sector_bytes, bool upper) {
  double extent[SP_MAX_LOOPS];
  for (int l = 0; l < SP_MAX_LOOPS; l++) extent[l] = 1;
  for (int k = 0; k < s->nband && k < n->nloops; k++) {
    int d = s->map[k].thread_dim;
    bool collapsed = s->collapse_count >= 2 && k >= s->collapse_first &&
                     k < s->collapse_first + s->collapse_count;
    if (d >= 0 && !collapsed) extent[k] = s->block[d];
  }
  /* a collapsed group: 1 (a lower bound), or the box of its threads' consecutive fused indices
   * (an upper bound, sp_collapsed_extent) */
  if (upper && s->collapse_count >= 2 && s->map[s->collapse_first].thread_dim >= 0)
    sp_collapsed_extent(n, s, s->block[s->map[s->collapse_first].thread_dim], true, extent);
  extent[loop] = trip;
  double bytes = 0;
  for (int a = 0; a < n->narrays; a++)
    bytes += sp_rank_footprint_sectors(n, a, sector_bytes, SP_FOOT_READS | SP_FOOT_WRITES, extent) *
             sector_bytes;
  return bytes;
}

/* Whether shortening `loop` to `trip` keeps what the L1 does: a pass that overflows the L1 in
 * the run must not fit it in the sample, or the data of one pass stays for the next (grid-stride
 * iterations, the SM's next blocks) and hits where the run misses. 2mm.c:17 on 132 blocks of
 * 1024 threads: k shortened from 1100 to 8 iterations made B's pass 58 KB, and the sample 99.8 %
 * L1 hits where --exact and the H100 have 11.3 % (validation/results/h100/2026-11-23-model-d7c4d47).
 * Where it does not, the L1 rates come from a few SMs that run the loop in full for as long as
 * the budget lasts (sp_refine_l1, a prefix in time): the shortened run still reaches every
 * reference (the store after the loop) and gives the L2 side. The run keeps for sure only where
 * the SM's resident blocks together fit the L1 with the whole loop (an upper bound of one
 * block's bytes, times the blocks). One block's bytes alone trusted a 512^3 gemm with i on 32
 * lanes (32 rows of A and a column of B over k: 144 KB), whose SM holds 32 such blocks: L2
 * reads 34 % too few (tests/test_speed.c); and matmul 1024^2 with i and j collapsed on 128
 * threads, counted as one column of B a block (40 KB of the 1 MB its 128 columns take): 3.8 %. */
static bool sp_shortening_keeps_l1(const sp_nest *n, const sp_arch *arch, const sp_schedule *s,
                                   int loop, int64_t trip) {
  if (!arch->l1_caches_global_loads) return true;
  double l1 = (double)arch->l1_bytes, sector = arch->l1_sector_bytes;
  double full = sp_blocks_per_sm(arch, s) *
                sp_block_pass_bytes(n, s, loop, (double)n->loops[loop].trip_max, (int)sector, true);
  return full <= l1 || sp_block_pass_bytes(n, s, loop, (double)trip, (int)sector, false) > l1;
}

/* Loads a thread issues together: the reads of one iteration of the innermost body, or of
 * several where that body is a sequential loop that stores nothing (a reduction into a
 * register, sum += A[i][k] * B[k][j]). nvcc unrolls such a loop (4-32 iterations in the
 * generated kernels) and the warp keeps up to the architecture's warp_loads_in_flight of them
 * outstanding. A store keeps the next iteration's loads behind it (mlp_probe: unrolling a loop
 * with a store changed nothing). A body of more reads than that has no more in flight either:
 * himeno's 31, taken as one wait, predicted its 32x4x2 pick at 254 us where the H200 ran it in
 * 377, its warps stalled on loads 60 of every 66 cycles at 52 % of the DRAM's bandwidth
 * (ncu: validation/results/h200/2026-11-30-himeno-stalls/); lone warps of conv2d's 9 loads and
 * heat3d's 7 ran 1.32x and 1.50x their predicted times, 0.92x and 1.31x with the cap. */
static double sp_loads_per_iteration(const sp_nest *n, const sp_arch *arch) {
  int deepest = 0, reads = 0, inner = -1;
  bool stores = false;
  for (int r = 0; r < n->nrefs; r++)
    if (n->refs[r].nloops > deepest) deepest = n->refs[r].nloops;
  for (int r = 0; r < n->nrefs; r++)
    if (n->refs[r].nloops == deepest) {
      if (n->refs[r].access == SP_READ) reads++;
      else stores = true;
      inner = n->refs[r].loops[deepest - 1];
    }
  if (reads == 0) return 1;
  if (!(arch->warp_loads_in_flight > 0)) return reads;
  const double cap = arch->warp_loads_in_flight;
  if (inner < 0 || n->loops[inner].band || stores) return fmin(cap, reads);
  double trip = n->loops[inner].trip_min > 0 ? (double)n->loops[inner].trip_min : 1;
  return fmin(cap, reads * trip);
}


/* Extrapolating a sample's counters to the whole run, reference by reference. The sample is
 * a prefix of the run (of its waves, or of its trace), and a prefix starts cold: the first
 * accesses miss in L1 and L2, and one-off references at the start of the threads (C[i][j]
 * before gemm's k loop) weigh more in it than in the run. So the sample is counted as it is
 * (head), and only the rest of a reference's executions is extrapolated, at its rate in the
 * sample's second part (delta), which continues the steady state: g = its remaining
 * executions over its executions in the second part. A reference absent from the second part
 * (a one-off at the start of a grid-stride iteration) is scaled in proportion to its
 * executions instead. A reference the sample never reached (a store after a long loop that
 * the prefix cut) cannot be extrapolated and stays 0. */
static void sp_extrapolate_ref(sp_cm_counters *out, const sp_cm_counters *head,
                               const sp_cm_counters *at_split, double lanes, double split_lanes,
                               double executions) {
  const int64_t *h = (const int64_t *)head, *sp = (const int64_t *)at_split;
  int64_t *v = (int64_t *)out;
  const size_t nf = sizeof *out / sizeof *v;
  if (lanes <= 0) {
    memset(out, 0, sizeof *out);
  } else if (at_split && lanes > split_lanes && executions > lanes) {
    double g = (executions - lanes) / (lanes - split_lanes);
    for (size_t i = 0; i < nf; i++) v[i] = (int64_t)llround((double)h[i] + (double)(h[i] - sp[i]) * g);
  } else {
    for (size_t i = 0; i < nf; i++) v[i] = (int64_t)llround((double)h[i] * executions / lanes);
  }
}

/* The bytes of array a that the nest writes, in whole L2 sectors: no more can be dirty. */
static double sp_written_bytes(const sp_nest *nest, int a, const sp_arch *arch) {
  return sp_rank_footprint_sectors(nest, a, arch->l2_sector_bytes, SP_FOOT_WRITES, NULL) *
         arch->l2_sector_bytes;
}

/* Compulsory (first-touch) L2 misses: the sample's (cold_seen) grow in proportion to the work
 * (f: the array's reference executions in the run over the sample's), since each part of the
 * work first touches its own data, but never past the array's footprint; the other misses
 * keep their extrapolation. Without the cap a short sample of a kernel whose data fits in the
 * L2 would count most of it as DRAM traffic. Proportion, not the second part's rate: warps or
 * SMs that run ahead make the first touches early in the run, so the rate falls off before
 * the footprint is covered. The first touches beyond the sample's come as sectors per DRAM
 * byte at sectors_per_byte, the references' mix (sp_cold_mix). */
/* Sectors per DRAM byte of an array's first touches beyond a sample, from its references'
 * (per reference: the sample's first touches and bytes, those of its second part, and the
 * reference's executions in the run over the sample's and over its second part's). A
 * prefix's cut falls anywhere in the body: guarded_stencil's rows, walked 32 doubles a step,
 * miss 6 paired sectors in a[i][j] and, a step earlier, one lone one in a[i][j+1], and a cut
 * between the two gave the sample more paired misses than the run (its mix made L2 hits 7 %
 * too few). So each reference's are weighed by its own executions: those of the second part
 * while first touches still flow there (it is half the sample or more, and holds a quarter of
 * its first touches or more; the cold start's first step, every sector paired, is left out),
 * else the whole sample's (a cut
 * run's second part may hold a few odd first touches at edges: conv2d's one wave had 44
 * bytes a sector there and 37 in the whole sample); where no reference ran, the sample's
 * unweighed mix. 0 where there are none. */
typedef struct sp_cold_mix {
  double seen, bytes, second, second_bytes;      /* raw sums */
  double w_seen, w_bytes, w_second, w_second_bytes; /* weighed by executions */
} sp_cold_mix;

static double sp_cold_sectors_per_byte(const sp_cold_mix *m) {
  if (m->second > 0 && 4 * m->second >= m->seen && m->w_second > 0 && m->w_second_bytes > 0)
    return m->w_second / m->w_second_bytes;
  if (m->w_seen > 0 && m->w_bytes > 0) return m->w_seen / m->w_bytes;
  return m->seen > 0 && m->bytes > 0 ? m->seen / m->bytes : 0;
}

/* DRAM bytes per L2 read miss in c, or `fill` where it has none. */
static double sp_dram_bytes_per_miss(const sp_cm_counters *c, int fill) {
  double misses = (double)(c->l2_read_sectors - c->l2_read_hit_sectors);
  return misses > 0 && c->dram_read_bytes > 0 ? (double)c->dram_read_bytes / misses : fill;
}

/* Bytes a read miss brings from DRAM into the L2: its fill block, at least a sector. */
static int sp_fill_bytes(const sp_arch *arch) {
  return arch->l2_fill_bytes > arch->l2_sector_bytes ? arch->l2_fill_bytes : arch->l2_sector_bytes;
}

/* reread_bytes: DRAM bytes of reads the sample counted as first touches that in the run read
 * again what an earlier round evicted (sp_simulate's reread), missing like them.
 * hold_to_reads: the misses stay within the run's L2 reads; where the L1 side of the run is
 * replaced afterwards (sp_refine_l1, the L1 distorted by a shortened loop) they may not say how
 * many first touches there are: the L2 reads are raised to the misses instead, which then
 * stand (2mm.c:17's A[i][k] on 800 blocks of 128 threads: k shortened to 8 iterations, A read
 * 1,600 sectors from L2 in the sample, and its 7.04 MB of first touches were held to them,
 * 0.1 MB). */
static void sp_cap_cold(sp_cm_counters *c, double cold_seen, double cold_bytes_seen, double f,
                        double sectors_per_byte, double footprint_bytes, int sector_bytes,
                        int fill_bytes, bool hold_to_reads, double reread_bytes) {
  if (cold_seen <= 0 || cold_bytes_seen <= 0 || footprint_bytes <= 0) return;
  /* capped in DRAM bytes: with 64-byte L2 fills a cold miss can bring more than its sector */
  double cold_bytes_full = fmin(cold_bytes_seen * f, fmax(footprint_bytes, cold_bytes_seen));
  double cold = (double)c->l2_read_cold_sectors;
  double cold_full = cold_seen + (cold_bytes_full - cold_bytes_seen) * sectors_per_byte;
  double misses = (double)(c->l2_read_sectors - c->l2_read_hit_sectors);
  double misses_full = cold_full + misses - cold + reread_bytes * sectors_per_byte;
  double bytes_full = cold_bytes_full + reread_bytes + (double)(c->dram_read_bytes - c->dram_read_cold_bytes);
  /* one sector per miss, or the sample's mix of lone and paired misses */
  double per_miss = fill_bytes <= sector_bytes ? sector_bytes
                    : misses_full > 0          ? bytes_full / misses_full
                                               : 0;
  if (misses_full > (double)c->l2_read_sectors && hold_to_reads) misses_full = (double)c->l2_read_sectors;
  if (misses_full < 0) misses_full = 0;
  int64_t m = (int64_t)llround(misses_full);
  if (m > c->l2_read_sectors) c->l2_read_sectors = m;
  c->l2_read_cold_sectors = (int64_t)llround(cold_full);
  c->l2_read_hit_sectors = c->l2_read_sectors - m;
  c->dram_read_bytes = (int64_t)llround((double)m * per_miss);
  /* first touches are DRAM reads: the misses were held to the L2 reads, so their bytes too */
  c->dram_read_cold_bytes = (int64_t)llround(fmin(cold_bytes_full, (double)c->dram_read_bytes));
}

/* Hits within [0, requests] and first touches within the misses: an extrapolation of the
 * sampled L2's estimates (memsys.h, l2_sample_shift) can step outside them by its noise. */
static void sp_counters_sane(sp_cm_counters *c) {
  if (c->l2_read_hit_sectors > c->l2_read_sectors) c->l2_read_hit_sectors = c->l2_read_sectors;
  if (c->l2_read_hit_sectors < 0) c->l2_read_hit_sectors = 0;
  if (c->l2_write_hit_sectors > c->l2_write_sectors) c->l2_write_hit_sectors = c->l2_write_sectors;
  if (c->l2_write_hit_sectors < 0) c->l2_write_hit_sectors = 0;
  int64_t misses = c->l2_read_sectors - c->l2_read_hit_sectors;
  if (c->l2_read_cold_sectors > misses) c->l2_read_cold_sectors = misses;
}

static void sp_counters_add(sp_cm_counters *t, const sp_cm_counters *c) {
  int64_t *tv = (int64_t *)t;
  const int64_t *cv = (const int64_t *)c;
  for (size_t i = 0; i < sizeof *t / sizeof *tv; i++) tv[i] += cv[i];
}

/* t += c * f, each count rounded */
static void sp_counters_add_scaled(sp_cm_counters *t, const sp_cm_counters *c, double f) {
  int64_t *tv = (int64_t *)t;
  const int64_t *cv = (const int64_t *)c;
  for (size_t i = 0; i < sizeof *t / sizeof *tv; i++) tv[i] += (int64_t)llround((double)cv[i] * f);
}

/* c *= f, each count rounded */
static void sp_counters_scale(sp_cm_counters *c, double f) {
  sp_cm_counters t = *c;
  memset(c, 0, sizeof *c);
  sp_counters_add_scaled(c, &t, f);
}

/* Forwards warp instructions to the memory model and stops the trace after `cap` of them: the
 * last resort of sampling, for grids too small to sample by SM or wave (one long block). It
 * counts each reference's executions, and snapshots them and the counters (per reference) at
 * 256, 512, 1024, ... instructions, keeping the last two, so that the extrapolation can tell
 * the sample's second half from its cold start.
 * A screening sample also stops once its sectors would fill the budget at
 * SP_BUDGET_SECTORS_PER_INSTR (divergence's 581 uncoalesced candidates, 32 sectors an
 * instruction, were three quarters of its screening's lookups), but not before every reference
 * has run, and then as many instructions again, whose rate the extrapolation takes
 * (bench/results/2026-11-24-screen-sectors.md): himeno's 32 references on one SM's 64 warps
 * take 2,048 instructions for one pass of the body, and a cut at 625 left its second half
 * uncounted (400 candidates screened at half their time); on 16 warps a cut at 497, just past
 * the first pass, took the rate of a cold L1 (screened 2.3 ms, refined 4.1 ms). */
typedef struct sp_capped_sink {
  sp_cm_memsys *memsys;
  int64_t seen, cap;
  double lanes; /* reference executions simulated (active lanes) */
  int nrefs;
  double *ref_lanes;         /* [nrefs] */
  int64_t snap_at;           /* instructions at the next snapshot */
  /* [nrefs]: [0] the latest snapshot, [1] the one before, [2] where every reference had run */
  sp_cm_counters *snap[3];
  double *snap_lanes[3];     /* [nrefs] */
  int64_t snap_seen[3];      /* instructions at the snapshot; 0: none */
  /* the memory model is fed no more once it has been fed sector_cap sectors, min_seen
   * instructions and twice snap_seen[2] (sector_cap 0: no such stop); the trace still runs to
   * cap (passed: its instructions, fed or not), so that its statistics are those of the
   * recording that sample_cache.c replays */
  int64_t sector_cap, min_seen, passed;
  int reached; /* references executed at least once */
  bool fed_enough;
  sp_prefix_stop stop; /* where the trace stops (cap > 0) */
} sp_capped_sink;

/* Snapshot slots i and j trade places. */
static void sp_sink_swap(sp_capped_sink *c, int i, int j) {
  sp_cm_counters *t = c->snap[i];
  double *tl = c->snap_lanes[i];
  int64_t ts = c->snap_seen[i];
  c->snap[i] = c->snap[j], c->snap[j] = t;
  c->snap_lanes[i] = c->snap_lanes[j], c->snap_lanes[j] = tl;
  c->snap_seen[i] = c->snap_seen[j], c->snap_seen[j] = ts;
}

/* The counters and executions so far into snapshot slot i. */
static void sp_sink_snapshot(sp_capped_sink *c, int i) {
  sp_cm_memsys_counters_each(c->memsys, c->nrefs, c->snap[i]);
  memcpy(c->snap_lanes[i], c->ref_lanes, (size_t)c->nrefs * sizeof *c->snap_lanes[i]);
  c->snap_seen[i] = c->seen;
}

static int sp_capped_access(void *ctx, const sp_warp_instr *wi) {
  sp_capped_sink *c = ctx;
  const int stop = c->cap > 0 && sp_prefix_stop_after(&c->stop, wi, ++c->passed);
  if (c->fed_enough) return stop;
  int rc = sp_cm_memsys_access(c->memsys, wi);
  if (rc) return rc;
  int n = sp_lanes_in(wi->active);
  c->reached += n > 0 && c->ref_lanes[wi->ref] == 0;
  c->lanes += n;
  c->ref_lanes[wi->ref] += n;
  if (++c->seen == c->snap_at) {
    sp_sink_swap(c, 0, 1);
    sp_sink_snapshot(c, 0);
    c->snap_at *= 2;
  }
  if (c->sector_cap <= 0) return stop;
  if (!c->snap_seen[2] && c->reached == c->nrefs) sp_sink_snapshot(c, 2);
  /* enough: every reference has run, and as many instructions again since (the second part,
   * whose rate the extrapolation takes, is past the cold first pass of the body) */
  if (c->snap_seen[2] && c->seen >= 2 * c->snap_seen[2] && c->seen >= c->min_seen &&
      sp_cm_memsys_sectors_accessed(c->memsys) >= c->sector_cap) {
    c->fed_enough = true;
    sp_sink_swap(c, 0, 2); /* the extrapolation's second part starts there */
  }
  return stop;
}

static void sp_sink_free(sp_capped_sink *k) {
  free(k->ref_lanes);
  sp_prefix_stop_free(&k->stop);
  for (int i = 0; i < 3; i++) {
    free(k->snap[i]);
    free(k->snap_lanes[i]);
  }
}

/* A worker's memory model, kept from one candidate to the next: every candidate of a pass has
 * the same configuration, and resetting a model is much cheaper than allocating a new one
 * (the L2 model alone is ~100 MB for a 50 MB L2). */
typedef struct sp_model_cache {
  sp_cm_memsys *m;
  int nsms;
  sp_cm_options cmo;
  /* the pass's shared screening samples (NULL: none), and this worker's trace recording */
  sp_sample_cache *samples;
  sp_trace_record rec;
  int64_t lookups, sectors; /* this worker's model work so far (sp_rank_candidate) */
} sp_model_cache;

/* Samples of at most this many instructions go through the sample cache (sample_cache.c): a
 * recording takes 2.4 MB a worker at most, and the screening's are 1,250 instructions on the
 * default spaces of 3-D nests. */
#define SP_SAMPLE_RECORD_MAX 8192
#define SP_SAMPLE_CACHE_BYTES ((size_t)32 << 20)

/* How far a screening prefix may go past its cap while references still run for the first time
 * (prefix_stop.h): 2 caps (himeno's 64 warps an SM take 2,048 instructions for a pass of the
 * body on a cap of 1,250), but no further than the recording holds, so that prefixes up to its
 * room are still shared (sample_cache.c). 4 caps, which also waited for conv3d's store after its
 * 27-step window (3,456 instructions), took conv3d's screening from 23 to 41 M lookups, and its
 * H200 time error from 0.33 to 0.37 (bench_rank; scripts/h200_measured.py). */
#define SP_PREFIX_REACH_CAPS 2

/* Per reference, the instructions a warp issues before it first runs it (prefix_stop.h): the
 * executions of the references before it in program order per execution of it; -1 for one the
 * run never executes. */
static void sp_refs_ahead(const sp_nest *run, double *ahead) {
  double before = 0; /* executions of the references before r */
  for (int r = 0; r < run->nrefs; r++) {
    double ex = sp_rank_ref_executions(run, r);
    ahead[r] = ex > 0 ? before / ex : -1;
    before += ex;
  }
}

static int64_t sp_prefix_limit(int64_t cap) {
  int64_t limit = cap * SP_PREFIX_REACH_CAPS;
  if (limit > SP_SAMPLE_RECORD_MAX) limit = SP_SAMPLE_RECORD_MAX;
  return limit > cap ? limit : cap;
}

/* Threads too long for the budget even on one wave (a few blocks, or a long sequential loop
 * in every thread: gemm's k) are sampled by running the whole grid with the longest
 * sequential loop of the body shortened, rather than by cutting the trace: every thread then
 * still runs from its start to its end (the one-off references before and after the loop,
 * the grid-stride iterations and the reuse between them are all simulated), and only the
 * shortened loop's references are extrapolated. The loop must have constant bounds that no
 * other bound depends on. keep: the share of its trip to run. */
static void sp_shorten_choice(const sp_nest *n, double keep, int *loop, int64_t *trip) {
  int best = -1;
  for (int l = 0; l < n->nloops; l++) {
    const sp_loop *L = &n->loops[l];
    bool constant = sp_loop_bounds_const(L) && L->trip_min == L->trip_max;
    for (int o = 0; o < n->nloops; o++) constant &= !n->loops[o].lower.coef[l] && !n->loops[o].upper.coef[l];
    if (L->band || !constant || L->trip_max < 16) continue;
    if (best < 0 || L->trip_max > n->loops[best].trip_max) best = l;
  }
  if (best < 0) return;
  int64_t t = (int64_t)ceil((double)n->loops[best].trip_max * keep);
  if (t < 8) t = 8;
  if (t >= n->loops[best].trip_max) return;
  *loop = best;
  *trip = t;
}

/* `out`: the nest with `loop` shortened to `trip` iterations (a shallow copy, its loops
 * changed); returns out. */
static const sp_nest *sp_nest_shortened(const sp_nest *nest, int loop, int64_t trip, sp_nest *out) {
  *out = *nest;
  sp_loop *L = &out->loops[loop];
  L->upper.constant = L->lower.constant + (trip - 1) * L->step;
  L->trip_min = L->trip_max = trip;
  return out;
}

/* The blocks SM sm runs of a grid of `blocks` dealt round-robin to S SMs. */
static int64_t sp_blocks_on_sm(int64_t blocks, int S, int64_t sm) {
  return blocks > sm ? (blocks - 1 - sm) / S + 1 : 0;
}

/* Whether a run's counts hold executions of this reference (it was reached). */
static bool sp_reached(const sp_cm_counters *c) { return c->ld_requests || c->st_requests; }

/* Whether loop k's index differs between the blocks of the grid: it, or the collapsed group it
 * belongs to, is distributed over a block dimension of more than one block. */
static bool sp_loop_moves_with_block(const sp_nest *n, const sp_schedule *s, int k) {
  if (k >= s->nband || n->loops[k].trip_max <= 1) return false;
  int d = s->map[sp_schedule_collapsed_away(s, k) ? s->collapse_first : k].block_dim;
  return d >= 0 && s->grid[d] > 1;
}

/* Bytes of L2 the data that every block of the grid reads alike takes: that of the read-only
 * arrays' affine references none of whose indices moves with a block index (2mm.c:26's
 * tmp[i][k] with i on the lanes of one block column, which every block reads whole;
 * covariance.c:26's data[k][i] on i->tx j->bx, whose data[k][j] moves with the block), counted
 * in the L2's lines, the unit it keeps. The GPU's L2 holds them once for all SMs. */
static double sp_block_shared_read_bytes(const sp_nest *n, const sp_schedule *s, int line_bytes) {
  bool *take = calloc((size_t)(n->nrefs ? n->nrefs : 1), sizeof *take);
  if (!take) return 0;
  double bytes = 0;
  for (int a = 0; a < n->narrays; a++) {
    bool read_only = true, any = false;
    for (int r = 0; r < n->nrefs; r++) {
      const sp_ref *ref = &n->refs[r];
      take[r] = false;
      if (ref->array != a) continue;
      read_only &= ref->access == SP_READ;
      bool shared = ref->access == SP_READ && !ref->irregular;
      for (int i = 0; i < ref->nloops && shared; i++) {
        int k = ref->loops[i];
        shared = ref->offset.coef[k] == 0 || !sp_loop_moves_with_block(n, s, k);
      }
      any |= take[r] = shared;
    }
    if (read_only && any)
      bytes += sp_rank_refs_footprint_sectors(n, a, line_bytes, take, NULL) * line_bytes;
  }
  free(take);
  return bytes;
}

/* Bytes, in whole units of unit_bytes, of all the nest's arrays that it reads or writes within
 * extent (sp_rank_footprint_sectors; NULL: the whole run). */
static double sp_footprint_bytes(const sp_nest *n, int unit_bytes, const double *extent) {
  double bytes = 0;
  for (int a = 0; a < n->narrays; a++)
    bytes += sp_rank_footprint_sectors(n, a, unit_bytes, SP_FOOT_READS | SP_FOOT_WRITES, extent) * unit_bytes;
  return bytes;
}

/* The rounds band loop k runs on its threads and blocks (sp_trace_loop_rounds), 1 where it is
 * on neither: a sequential band loop is no round loop of a pass. */
static double sp_mapped_rounds(const sp_nest *n, const sp_schedule *s, int k) {
  const sp_loop_map *m = &s->map[k];
  return m->thread_dim < 0 && m->block_dim < 0 ? 1 : (double)sp_trace_loop_rounds(n, s, k);
}

/* The iterations of each loop that `blocks` blocks, the first of the grid, run in one pass of
 * their body, and (sp_pass_bytes) the bytes, in units of unit_bytes, that they touch: the next
 * round or wave finds what one pass read about that far back in the L2's LRU order. Each loop
 * on threads or blocks runs one round of them (the grid-stride rounds of loops on blocks, the
 * lane rounds of loops on threads only), but the loops inside band loop `inside` run all their
 * rounds (every loop where inside < 0: a wave's whole run; none where it is SP_PASS_ROUNDS).
 * Sequential loops run whole. A collapsed group holds the blocks' threads along it as a box
 * (sp_collapsed_extent), one round of it; where inside < 0 the whole group if it takes more
 * than one round. */
#define SP_PASS_ROUNDS SP_MAX_LOOPS
static void sp_pass_extent(const sp_nest *n, const sp_schedule *s, double blocks, int inside,
                           bool rows_whole, double extent[SP_MAX_LOOPS]) {
  double along[3]; /* the blocks along each grid dimension (x fastest): a row of the grid
                      begun counts whole where rows_whole */
  along[0] = fmin((double)s->grid[0], blocks);
  along[1] = blocks / (double)s->grid[0];
  along[2] = blocks / ((double)s->grid[0] * (double)s->grid[1]);
  if (rows_whole) along[1] = ceil(along[1]), along[2] = ceil(along[2]);
  along[1] = fmin((double)s->grid[1], fmax(1, along[1]));
  along[2] = fmin((double)s->grid[2], fmax(1, along[2]));
  /* a collapsed group's rounds are no one loop's */
  if (s->collapse_count >= 2 && inside >= 0) inside = SP_PASS_ROUNDS;
  for (int k = 0; k < SP_MAX_LOOPS; k++) extent[k] = HUGE_VAL; /* every loop whole, but: */
  for (int k = 0; k < s->nband && k < n->nloops; k++) {
    const sp_loop_map *m = &s->map[k];
    if (sp_schedule_collapsed_away(s, k) || (m->thread_dim < 0 && m->block_dim < 0)) continue;
    double threads = (m->thread_dim >= 0 ? s->block[m->thread_dim] : 1) *
                     (m->block_dim >= 0 ? along[m->block_dim] : 1);
    if (s->collapse_count >= 2 && k == s->collapse_first) {
      if (inside >= 0 || sp_mapped_rounds(n, s, k) <= 1) sp_collapsed_extent(n, s, threads, true, extent);
    } else if (k > inside)
      extent[k] = fmin((double)n->loops[k].trip_max, threads * sp_mapped_rounds(n, s, k));
    else extent[k] = threads;
  }
}

static double sp_pass_bytes(const sp_nest *n, const sp_schedule *s, double blocks, int inside,
                            bool rows_whole, int unit_bytes) {
  double extent[SP_MAX_LOOPS];
  sp_pass_extent(n, s, blocks, inside, rows_whole, extent);
  return sp_footprint_bytes(n, unit_bytes, extent);
}

/* The blocks of one wave: all the SMs' resident blocks, or the grid. */
static double sp_wave_blocks(const sp_arch *arch, const sp_schedule *s) {
  double blocks = (double)s->grid[0] * (double)s->grid[1] * (double)s->grid[2];
  return fmin(blocks, (double)sp_blocks_per_sm(arch, s) * arch->sm_count);
}

/* The innermost band loop whose second round a sample did not reach that ran the share `seen`
 * of each of the first wave's blocks (it reached those of the loops inside it, and simulated
 * their re-reads), -1 where it reached every loop's. */
int sp_reread_level(const sp_nest *n, const sp_schedule *s, double seen) {
  int level = -1;
  double rounds = 1;
  if (s->collapse_count >= 2) return -1;
  for (int k = 0; k < s->nband && k < n->nloops; k++) {
    double r = sp_mapped_rounds(n, s, k);
    if (r <= 1) continue;
    rounds *= r;
    if (seen * rounds >= 1) break;
    level = k;
  }
  return level;
}

/* The bytes (in L2 lines, the unit it keeps) that the blocks of one wave touch in one pass of
 * their body. */
static double sp_wave_pass_bytes(const sp_nest *n, const sp_arch *arch, const sp_schedule *s,
                                 int inside, bool rows_whole) {
  return sp_pass_bytes(n, s, sp_wave_blocks(arch, s), inside, rows_whole, arch->l2_line_bytes);
}

/* t iterations of band loop k into extent[], or of the collapsed group k heads (a run of them) */
static void sp_strip_extent(const sp_nest *n, const sp_schedule *s, int k, double t, double *extent) {
  if (s->collapse_count >= 2 && k == s->collapse_first) sp_collapsed_extent(n, s, t, false, extent);
  else extent[k] = t;
}

/* The bytes (in units of unit_bytes) of array a's accesses (SP_FOOT_READS, SP_FOOT_WRITES) that
 * the passes at `level` (sp_reread_level) share with the next, over the run.
 * A loop's round: one round's footprint and the next one's less that of both, at each boundary
 * between rounds (the first wave's round stands for every wave's and every round of the loops
 * outside; a last round cut short by the loop's end counts its share of a round's footprint).
 * Waves (level < 0): the dimension of the grid that the first wave covers in part is dealt in
 * strips of its blocks, one wave's after another's (and where its loop runs grid-stride rounds,
 * again in every round: jacobi on 256 x 4 blocks of 32 x 16, whose two waves read alternate
 * strips of 64 columns, each with its neighbours' edges); every loop else runs whole. The
 * footprints of the strips that the loop's trip holds, summed, less the whole run's, in each
 * layer of the grid above. A collapsed group's strip is a run of its iterations
 * (sp_collapsed_extent). */
double sp_pass_overlap(const sp_nest *n, const sp_arch *arch, const sp_schedule *s, int level,
                       double waves, int a, int unit_bytes, unsigned accesses) {
  const double wave = sp_wave_blocks(arch, s);
  double one[SP_MAX_LOOPS], two[SP_MAX_LOOPS];
  sp_pass_extent(n, s, wave, level, false, one);
  memcpy(two, one, sizeof two);
  if (level < 0) {
    if (!(waves > 1)) return 0;
    int dp = 0; /* the dimension the wave covers in part */
    double below = 1;
    while (dp < 2 && wave >= below * (double)s->grid[dp]) below *= (double)s->grid[dp++];
    int on = -1;
    for (int k = 0; k < s->nband && k < n->nloops; k++)
      if (s->map[k].block_dim == dp && !sp_schedule_collapsed_away(s, k)) on = k;
    if (on < 0) return 0;
    const sp_loop_map *m = &s->map[on];
    const double strip_blocks = fmax(1, floor(wave / below)); /* whole rows of the grid */
    const double strip = (m->thread_dim >= 0 ? s->block[m->thread_dim] : 1) * strip_blocks;
    const double trip = (double)sp_trace_band_trip(n, s, on); /* a collapsed group's product */
    const double strips = trip / strip; /* over the loop's rounds */
    double layers = 1;
    for (int d = dp + 1; d < 3; d++) layers *= (double)s->grid[d];
    /* a strip in the middle of the loop stands for the whole ones (the first one's edges may
     * be trimmed by guards), the last one cut short at its place */
    const bool collapsed = s->collapse_count >= 2 && on == s->collapse_first;
    double start[SP_MAX_LOOPS] = {0};
    sp_strip_extent(n, s, on, strip, one);
    if (!collapsed) start[on] = strip * floor(floor(strips) / 2);
    double f1 = sp_rank_footprint_window(n, a, unit_bytes, accesses, one, start), f_rest = 0;
    if (strips - floor(strips) > 1e-9) {
      sp_strip_extent(n, s, on, strip * (strips - floor(strips)), one);
      if (!collapsed) start[on] = strip * floor(strips);
      f_rest = sp_rank_footprint_window(n, a, unit_bytes, accesses, one, start);
    }
    sp_strip_extent(n, s, on, trip, two);
    double f_all = sp_rank_footprint_sectors(n, a, unit_bytes, accesses, two);
    return fmax(0, floor(strips) * f1 + f_rest - f_all) * layers * unit_bytes;
  }
  const sp_loop_map *m = &s->map[level];
  const double trip = (double)n->loops[level].trip_max;
  /* the wave's next round of a loop on blocks begins a grid's round later: next to this one
   * only where the wave spans the grid along it */
  if (m->block_dim >= 0 && one[level] < (double)sp_trace_loop_spread(s, level)) return 0;
  const double next = fmin(1, (trip - one[level]) / one[level]); /* the next round's share of one */
  double boundaries = (sp_mapped_rounds(n, s, level) - 1) * fmax(1, waves);
  for (int k = 0; k < level; k++) boundaries *= sp_mapped_rounds(n, s, k);
  if (!(next > 0) || !(boundaries > 0)) return 0;
  two[level] = one[level] * (1 + next);
  double f1 = sp_rank_footprint_sectors(n, a, unit_bytes, accesses, one);
  double f2 = sp_rank_footprint_sectors(n, a, unit_bytes, accesses, two);
  return fmax(0, f1 * (1 + next) - f2) * boundaries * unit_bytes;
}

/* The blocks dispatched between a block and its neighbour along grid dimension d. */
static double sp_grid_stride(const sp_schedule *s, int d) {
  double stride = 1;
  for (int e = 0; e < d; e++) stride *= (double)s->grid[e];
  return stride;
}

/* (include/schedpredict/rank.h) */
double sp_rank_l2_miss_share(const sp_arch *arch, double bytes) {
  const double model = (double)sp_arch_l2_model_bytes(arch);
  if (arch->l2_reuse_set_sectors <= 0) return bytes > model ? 1 : 0;
  const double set_bytes = (double)arch->l2_reuse_set_sectors * arch->l2_sector_bytes;
  const unsigned ways = (unsigned)(set_bytes / arch->l2_line_bytes);
  const double mean = bytes / arch->l2_line_bytes / (model / set_bytes);
  if (!(mean > 0)) return 0;
  return ways < 1 ? 1 : gsl_cdf_poisson_Q(ways - 1, mean);
}

/* Slabs of the grid beyond a sample. A sample of the first blocks (a prefix in time of every SM)
 * sees the data that a block shares with its neighbours along the grid's x, and along y where
 * a row of the grid fits in the sample, and extrapolates the rest of its first touches as hits
 * (sp_cap_cold). A neighbour along a dimension whose dispatch stride exceeds the sample (the
 * slab: the blocks before it along the lower dimensions) comes a slab later; where a slab
 * touches more lines than the L2 keeps, what the two share is read from DRAM again, and written
 * back again (himeno128's k->tx+bz on 32x4x2 blocks: the sector that blocks bz and bz+1 both
 * read or write, 2,016 blocks and 57 MB of lines later, where the sample is 1,056 blocks;
 * conv3d's k->tx+bz: the H100 read 97.6 MB of A's 67, the sample counted 67).
 * A screening sample runs a few SMs, which never see a neighbour on another SM: every dimension
 * lies beyond it (span 0).
 * The dimensions (bit d for y and z) whose stride is at least span blocks; none where a
 * collapse makes the slabs no boxes or a block runs grid-stride rounds (their re-reads are
 * sp_simulate's). */
static unsigned sp_slab_dims(const sp_nest *n, const sp_schedule *s, double span) {
  if (s->collapse_count >= 2) return 0;
  for (int k = 0; k < s->nband && k < n->nloops; k++) {
    if (s->map[k].block_dim >= 0 && sp_trace_loop_rounds(n, s, k) > 1) return 0;
  }
  unsigned dims = 0;
  for (int d = 1; d < 3; d++)
    if (s->grid[d] > 1 && sp_grid_stride(s, d) >= span) dims |= 1u << d;
  return dims;
}

static int64_t sp_gcd(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

#define SP_SLABS_EXACT 64

/* Array a's footprint (accesses, in units of unit_bytes) summed over the slabs along grid
 * dimension d, less the footprint of them all: what later slabs touch again. A slab is the
 * first sp_grid_stride(d) blocks (sp_pass_extent: the loops on lower dimensions span the grid,
 * the loop on d one block, the loops on higher dimensions one block, which stands for all of
 * them: the result is multiplied by their blocks), moved along d. */
static double sp_slab_overlap(const sp_nest *n, const sp_schedule *s, int d, int a, int unit_bytes,
                              unsigned accesses) {
  double extent[SP_MAX_LOOPS], start[SP_MAX_LOOPS] = {0};
  int on_d = -1;
  sp_pass_extent(n, s, sp_grid_stride(s, d), SP_PASS_ROUNDS, true, extent);
  for (int k = 0; k < s->nband && k < n->nloops; k++)
    if (s->map[k].block_dim == d) on_d = k;
  if (on_d < 0) return 0;
  /* Slabs differ by their edges and by where they start within a unit, which repeats with a
   * period: the slabs after the first one of its shift in bytes, unit / gcd(unit, shift), for
   * every reference. Beyond two periods the first and last slab are counted and those between
   * at the mean of one period. */
  int64_t period = 1;
  bool any = false; /* a reference of these accesses: else no footprint to count */
  for (int r = 0; r < n->nrefs; r++) {
    const sp_ref *ref = &n->refs[r];
    if (ref->array != a || !(accesses & (ref->access == SP_READ ? SP_FOOT_READS : SP_FOOT_WRITES))) continue;
    any = true;
    int64_t shift = llabs(ref->offset.coef[on_d] * n->loops[on_d].step) * (int64_t)extent[on_d] % unit_bytes;
    int64_t p = shift ? unit_bytes / sp_gcd(unit_bytes, shift) : 1;
    period = period / sp_gcd(period, p) * p;
    if (period > SP_SLABS_EXACT) period = SP_SLABS_EXACT;
  }
  if (!any) return 0;
  const int64_t g = s->grid[d], counted = g <= 2 + 2 * period ? g : 1 + period;
  double sum = 0, head = 0;
  for (int64_t q = 0; q < counted; q++) {
    start[on_d] = (double)q * extent[on_d];
    double f = sp_rank_footprint_window(n, a, unit_bytes, accesses, extent, start);
    sum += f;
    if (q == 0) head = f;
  }
  if (counted < g) {
    start[on_d] = (double)(g - 1) * extent[on_d];
    sum += (sum - head) / (double)period * (double)(g - counted - 1) +
           sp_rank_footprint_window(n, a, unit_bytes, accesses, extent, start);
  }
  double step = extent[on_d];
  start[on_d] = 0;
  extent[on_d] = step * (double)s->grid[d];
  double all = sp_rank_footprint_window(n, a, unit_bytes, accesses, extent, start);
  double layers = 1;
  for (int e = d + 1; e < 3; e++) layers *= (double)s->grid[e];
  return fmax(0, sum - all) * layers * unit_bytes;
}

/* Charges the re-reads and re-writes of the slabs along dimension d (sp_slab_dims), the share
 * miss of them, to per_array: the overlap's reads (in L2 fills) move from the L2's hits to DRAM, at
 * most the hits, and its writes (in sectors) are written back again, at most the L2 writes
 * not yet written back or dirty (each sector written is written back at most once). */
static void sp_charge_slab_overlap(const sp_nest *n, const sp_arch *arch, const sp_schedule *s,
                                   int d, double miss, sp_cm_counters *per_array) {
  int fill = sp_fill_bytes(arch), sector = arch->l2_sector_bytes;
  for (int a = 0; a < n->narrays; a++) {
    sp_cm_counters *c = &per_array[a];
    double reread = miss * sp_slab_overlap(n, s, d, a, fill, SP_FOOT_READS);
    if (reread > 0 && c->l2_read_hit_sectors > 0) {
      double per_miss = sp_dram_bytes_per_miss(c, fill);
      double moved = fmin(reread / per_miss, (double)c->l2_read_hit_sectors);
      c->l2_read_hit_sectors -= llround(moved);
      c->dram_read_bytes += llround(moved * per_miss);
    }
    double rewrite = miss * sp_slab_overlap(n, s, d, a, sector, SP_FOOT_WRITES);
    double beyond = (double)c->l2_write_sectors * sector - (double)(c->dram_write_bytes + c->l2_dirty_bytes);
    if (rewrite > 0 && beyond > 0) c->dram_write_bytes += llround(fmin(rewrite, beyond));
  }
}

/* How many times the L2 lines that a wave's blocks touch in a pass are touched by different
 * blocks (at least 1): the sum of the blocks' own footprints over their union. The GPU's L2 holds
 * a line that blocks of several SMs share once; k of n SMs simulated alone see k/n of the wave's
 * blocks but of its union more than k/n. */
static double sp_wave_overlap(const sp_nest *n, const sp_arch *arch, const sp_schedule *s) {
  double wave = sp_wave_blocks(arch, s);
  double one = sp_pass_bytes(n, s, 1, SP_PASS_ROUNDS, true, arch->l2_line_bytes);
  double all = sp_pass_bytes(n, s, wave, SP_PASS_ROUNDS, true, arch->l2_line_bytes);
  return all > 0 ? fmax(1, wave * one / all) : 1;
}

/* How a candidate is simulated: the trace sampling and the memory model's configuration.
 * all_sms: sample by waves and trace prefix only, so the L2 keeps its full size and every SM's
 * share of it (the refinement pass: shrinking the L2 misjudges data shared by all SMs). */
static void sp_candidate_config(const sp_nest *nest, const sp_arch *arch,
                                const sp_rank_options *opt, double est_instr, int64_t budget,
                                bool all_sms, const sp_schedule *sched, sp_trace_options *topt_out,
                                int *nsms_out, sp_cm_options *cmo_out, int *short_loop,
                                int64_t *short_trip) {
  sp_trace_options topt;
  memset(&topt, 0, sizeof topt);
  int nsms = arch->sm_count;
  *short_loop = -1;
  *short_trip = 0;
  if (budget > 0 && est_instr > (double)budget) {
    /* fewer SMs (each has its own L1; the shared L2 shrinks to their share), then fewer waves.
     * As few as one: a screening sample of ~1,000 instructions spread over 4 SMs' 64 resident
     * warps each gave every warp its first 4 references and none of the rest of the body, and
     * misjudged the stencils' L1 reuse by class of block shape (heat3d's 8x8x4 blocks screened
     * 1.7x optimistic, its 32x4x2 ones 1.2x), which the refinement rounds could not undo. */
    const sp_schedule *s = sched;
    int64_t blocks = s->grid[0] * s->grid[1] * s->grid[2];
    int active = sp_blocks_per_sm(arch, s);
    int64_t waves = (blocks + (int64_t)active * nsms - 1) / ((int64_t)active * nsms);
    double keep = (double)budget / est_instr;
    int k = (int)ceil(nsms * keep);
    if (k < 1) k = 1;
    if (k < nsms && !all_sms) {
      topt.sample_sms = nsms = k;
      keep = keep * arch->sm_count / k;
    }
    if (keep < 1 && waves >= 2) {
      topt.sample_waves = (int64_t)ceil((double)waves * keep);
      if (topt.sample_waves < 1) topt.sample_waves = 1;
      if (topt.sample_waves >= waves) topt.sample_waves = 0;
    }
    double sim = est_instr * nsms / arch->sm_count *
                 (topt.sample_waves > 0 ? (double)topt.sample_waves / (double)waves : 1);
    if (sim > (double)budget) sp_shorten_choice(nest, (double)budget / sim, short_loop, short_trip);
  }
  sp_cm_options cmo;
  memset(&cmo, 0, sizeof cmo);
  cmo.nrefs = nest->nrefs;
  cmo.l1_variant = opt->l1_variant;
  cmo.time_fills = opt->l1_variant == SP_CM_L1_BASE; /* for the latency (rank/time.c) */
  cmo.assoc = opt->assoc;
  cmo.kepler_transactions = arch->l1_sector_bytes == arch->l1_line_bytes;
  const double l2 = (double)sp_arch_l2_model_bytes(arch);
  /* k of n SMs get k/n of the L2, except for data every block reads alike, which the GPU holds
   * once for all SMs: C k/n + S (1 - k/n), at most C. With k/n alone, 2mm.c:26's screening of
   * i->tx+bx j->by on 1x528 blocks re-read tmp (5.8 MB) from DRAM on every pass of a block,
   * 2.2 GB, where --exact reads 22 MB in all. */
  cmo.l2_fraction = (double)nsms / arch->sm_count;
  if (nsms < arch->sm_count) {
    /* all the data fits: the GPU's L2 evicts none of it, so neither may the sample's, whatever
     * the SMs left out would have shared (with k/n of an L2 that keeps lines, covariance.c:26's
     * i->by j->tx+bx screened on one SM re-read data from DRAM: 1.97 GB where the H100 read
     * 13.6 MB). Else lines that blocks of several SMs share are held once: heat3d.c:16's i->by
     * j->tx+bx k->bz on 32x1x1 blocks, whose lanes each take a line of a row of A that blocks of
     * i-1 and i+1 read too, screened on one SM with k/n of the L2 read 775 MB of DRAM (H100:
     * 210). */
    double k_n = cmo.l2_fraction;
    if (sp_footprint_bytes(nest, arch->l2_line_bytes, NULL) <= l2) {
      cmo.l2_fraction = 1;
    } else {
      double shared = sp_block_shared_read_bytes(nest, sched, arch->l2_line_bytes);
      cmo.l2_fraction = fmin(1, fmax(k_n * sp_wave_overlap(nest, arch, sched), k_n + shared / l2 * (1 - k_n)));
    }
  }
  if (opt->assoc == SP_CM_FULLY_ASSOCIATIVE) {
    /* a fully associative LRU larger than all the data never evicts: size it to the data, which
     * changes no count and saves allocating the whole L2 for small problems. Hashed sets get
     * twice the data: a set of 512 sectors then expects 64 lines of 4, 8 standard deviations
     * from overflowing. */
    double data = 1 << 20;
    for (int a = 0; a < nest->narrays; a++) data += (double)nest->arrays[a].total_bytes;
    if (arch->l2_reuse_set_sectors > 0) data *= 2;
    if (data / l2 < cmo.l2_fraction) cmo.l2_fraction = data / l2;
  }
  /* a large L2 is sampled by fill block (memsys.h), down to SP_L2_SAMPLE_MIN_SECTORS */
  if (budget > 0 && opt->assoc == SP_CM_FULLY_ASSOCIATIVE && opt->l1_variant == SP_CM_L1_BASE) {
    double sectors = floor(l2 * cmo.l2_fraction) / arch->l2_sector_bytes;
    while (cmo.l2_sample_shift < SP_L2_SAMPLE_MAX_SHIFT &&
           sectors / (double)(2 << cmo.l2_sample_shift) >= SP_L2_SAMPLE_MIN_SECTORS)
      cmo.l2_sample_shift++;
  }
  *topt_out = topt;
  *nsms_out = nsms;
  *cmo_out = cmo;
}

/* Frees a worker's model and trace recording; the cache is empty after. */
static void sp_model_cache_free(sp_model_cache *mc) {
  sp_cm_memsys_free(mc->m);
  sp_trace_record_free(&mc->rec);
  memset(mc, 0, sizeof *mc);
}

/* The cached model reset, or a new one for this configuration; NULL on allocation failure. */
static sp_cm_memsys *sp_model_get(sp_model_cache *mc, const sp_arch *arch, int narrays, int nsms,
                                  const sp_cm_options *cmo) {
  if (mc->m && mc->nsms == nsms && memcmp(&mc->cmo, cmo, sizeof *cmo) == 0) {
    sp_cm_memsys_reset(mc->m);
    return mc->m;
  }
  sp_cm_footprints *fp = sp_cm_memsys_take_footprints(mc->m);
  sp_cm_memsys_free(mc->m);
  mc->m = sp_cm_memsys_create(arch, nsms, narrays, cmo);
  sp_cm_memsys_adopt_footprints(mc->m, fp);
  mc->nsms = nsms;
  mc->cmo = *cmo;
  return mc->m;
}

/* The model for this configuration, reset, tracking the footprints of the nest's arrays. */
static sp_cm_memsys *sp_model_ready(sp_model_cache *mc, const sp_nest *nest, const sp_arch *arch,
                                    int nsms, const sp_cm_options *cmo) {
  sp_cm_memsys *m = sp_model_get(mc, arch, nest->narrays, nsms, cmo);
  if (!m) return NULL;
  uint64_t *bases = malloc((size_t)(nest->narrays ? nest->narrays : 1) * sizeof *bases);
  if (!bases) return NULL;
  sp_trace_array_bases(nest, bases);
  for (int a = 0; a < nest->narrays; a++) /* at most 32 MB of bitmaps per array */
    sp_cm_memsys_track_footprint(m, a, bases[a], nest->arrays[a].total_bytes, 32 << 20);
  free(bases);
  return m;
}

/* A simulated sample as the sample cache keeps it: the sink's state after the run and each
 * reference's counts (the trace's statistics and where it was cut come from the recording). */
typedef struct sp_sample_head {
  int64_t seen, snap_at, snap_seen[2];
  double lanes;
} sp_sample_head;

static size_t sp_sample_bytes(int nrefs) {
  size_t nr = (size_t)(nrefs ? nrefs : 1);
  return sizeof(sp_sample_head) + 3 * nr * (sizeof(sp_cm_counters) + sizeof(double));
}

/* pack: sink and raw into blob; else blob into sink and raw */
static void sp_sample_copy(sp_capped_sink *k, sp_cm_counters *raw, void *blob, bool pack) {
  size_t nr = (size_t)(k->nrefs ? k->nrefs : 1);
  sp_sample_head h = {k->seen, k->snap_at, {k->snap_seen[0], k->snap_seen[1]}, k->lanes};
  char *p = blob;
  void *part[6] = {raw, k->snap[0], k->snap[1], k->ref_lanes, k->snap_lanes[0], k->snap_lanes[1]};
  size_t size[6] = {sizeof *raw, sizeof *raw, sizeof *raw, sizeof(double), sizeof(double), sizeof(double)};
  if (pack) memcpy(p, &h, sizeof h);
  else memcpy(&h, p, sizeof h);
  p += sizeof h;
  for (int i = 0; i < 6; p += nr * size[i], i++)
    if (pack) memcpy(p, part[i], nr * size[i]);
    else memcpy(part[i], p, nr * size[i]);
  if (pack) return;
  k->seen = h.seen, k->snap_at = h.snap_at, k->lanes = h.lanes;
  k->snap_seen[0] = h.snap_seen[0], k->snap_seen[1] = h.snap_seen[1];
}

/* Runs the trace of `run` under topt through the sink's memory model (a model of nsms SMs
 * configured by cmo, taken from mc), leaving in raw[] each reference's counts; through the
 * worker's sample cache where it has one and the sample is short: the trace is recorded
 * first, and replayed into the model only when no identical sample is stored. 0, or -1;
 * *truncated: whether the sink cut the trace or stopped feeding the model before its end (then
 * stats->warp_instructions are the instructions the model was fed). */
static int sp_sample_run(const sp_nest *nest, const sp_nest *run, const sp_arch *arch,
                         const sp_schedule *sched, const sp_trace_options *topt, int nsms,
                         const sp_cm_options *cmo, sp_model_cache *mc, sp_capped_sink *sink,
                         const double *ahead, sp_cm_counters *raw, sp_trace_stats *stats,
                         bool *truncated) {
  sp_sample_cache *sc = mc->samples;
  const bool record = sc && sink->cap > 0 && sink->stop.limit <= SP_SAMPLE_RECORD_MAX;
  const size_t bytes = sp_sample_bytes(nest->nrefs);
  void *blob = NULL;
  int rc = 0;
  if (record) {
    blob = malloc(bytes);
    if (!blob || sp_trace_record_start(&mc->rec, sink->cap, sink->stop.limit, nest->nrefs, ahead) != 0)
      rc = -1;
  } else if (!(sink->memsys = sp_model_ready(mc, nest, arch, nsms, cmo))) {
    rc = -1;
  }
  if (rc == 0) {
    rc = record ? sp_trace_run(run, sched, arch, topt, sp_trace_record_access, &mc->rec, stats)
                : sp_trace_run(run, sched, arch, topt, sp_capped_access, sink, stats);
    *truncated = rc == 1;
    if (rc == 1) rc = 0;
  }
  bool hit = false;
  if (record && rc == 0) {
    if ((hit = sp_sample_cache_get(sc, mc->rec.hash, nsms, cmo, blob, bytes)))
      sp_sample_copy(sink, raw, blob, false);
    else if (!(sink->memsys = sp_model_ready(mc, nest, arch, nsms, cmo)))
      rc = -1;
    else
      for (int64_t i = 0; rc == 0 && i < mc->rec.n && !sink->fed_enough; i++)
        if (sp_capped_access(sink, &mc->rec.instr[i]) < 0) rc = -1;
  }
  if (rc == 0 && sink->seen < stats->warp_instructions) { /* fed_enough before the trace's end */
    *truncated = true;
    stats->warp_instructions = sink->seen;
  }
  if (rc == 0 && !hit) sp_cm_memsys_counters_each(sink->memsys, nest->nrefs, raw);
  for (int r = 0; r < nest->nrefs && rc == 0 && !hit; r++) {
    mc->sectors += raw[r].ld_sectors + raw[r].st_sectors + raw[r].l2_read_sectors + raw[r].l2_write_sectors;
  }
  if (rc == 0 && !hit) mc->lookups += sp_cm_memsys_lookups(sink->memsys);
  if (record && rc == 0 && !hit) {
    sp_sample_copy(sink, raw, blob, true);
    sp_sample_cache_put(sc, mc->rec.hash, nsms, cmo, blob, bytes);
  }
  free(blob);
  return rc;
}

/* A guard that trims at most this share of a reference's iterations (an edge: i > 0 && i < N-1
 * on 4,096 rows trims 0.05 %) leaves its blocks' work the same within the sampling's 1 % target. */
#define SP_EDGE_GUARD_SHARE 0.01

/* Whether reference r runs alike in every block up to the edges: unguarded, its guards trim at
 * most an edge, or another reference of the same bytes whose guards do runs them anyway (the else
 * branch of an edge guard, which runs on the edges only: guarded_stencil's copy). */
static bool sp_ref_even(const sp_nest *n, int r) {
  const sp_ref *x = &n->refs[r];
  if (x->nguards == 0 || x->guard_excluded <= SP_EDGE_GUARD_SHARE) return true;
  for (int q = 0; q < n->nrefs; q++) {
    const sp_ref *y = &n->refs[q];
    if (q != r && y->array == x->array && y->size == x->size && !y->irregular && !x->irregular &&
        y->guard_excluded <= SP_EDGE_GUARD_SHARE && y->offset.constant == x->offset.constant &&
        memcmp(y->offset.coef, x->offset.coef, sizeof x->offset.coef) == 0)
      return true;
  }
  return false;
}

/* A rectangular nest whose references run alike in every block up to the edges (sp_ref_even):
 * every block's work, and the data its passes touch, the same (the footprints' boxes, within
 * the guards on single loops, are what runs). */
static bool sp_nest_even_work(const sp_nest *n) {
  bool even = sp_nest_rectangular(n);
  for (int r = 0; r < n->nrefs && even; r++) even = sp_ref_even(n, r);
  return even;
}

/* One simulation of a candidate: the trace of `run` (the nest, or the nest with a loop
 * shortened) under topt through a model of nsms SMs configured by cmo, extrapolated to the
 * whole run of `nest` per reference (raw: as simulated) and summed per array into
 * per_array[narrays]. l1_replaced: sp_refine_l1 will replace the run's L1 side (sp_cap_cold);
 * l1_replaced_if_cut: it will if the trace is cut. */
static int sp_simulate(const sp_nest *nest, const sp_nest *run, const sp_arch *arch,
                       const sp_schedule *sched, const sp_trace_options *topt, int nsms,
                       const sp_cm_options *cmo, double est_instr, int64_t budget,
                       bool by_sectors, bool shortened, bool l1_replaced, bool l1_replaced_if_cut, bool raw,
                       sp_model_cache *mc, sp_cm_counters *per_array, sp_cm_counters *per_ref,
                       sp_trace_stats *stats, bool *sampled, double *scale, bool *cut,
                       int64_t *window) {
  size_t nr = (size_t)(nest->nrefs ? nest->nrefs : 1);
  sp_capped_sink sink = {.cap = budget > 0 ? budget + budget / 4 : 0,
                         .nrefs = nest->nrefs, .snap_at = 256,
                         .ref_lanes = calloc(nr, sizeof(double))};
  if (by_sectors && sink.cap > 0) {
    sink.sector_cap = (int64_t)((double)sink.cap * SP_BUDGET_SECTORS_PER_INSTR);
    sink.min_seen = (int64_t)ceil((double)sink.cap * SP_BUDGET_MIN_SHARE);
  }
  bool ok = sink.ref_lanes != NULL;
  for (int i = 0; i < 3; i++) {
    ok &= (sink.snap[i] = calloc(nr, sizeof(sp_cm_counters))) != NULL;
    ok &= (sink.snap_lanes[i] = calloc(nr, sizeof(double))) != NULL;
  }
  sp_cm_counters *ref_raw = calloc(nr, sizeof *ref_raw);
  /* only a screening prefix waits for references (prefix_stop.h); others stop at the cap */
  const bool wait = by_sectors && sink.cap > 0;
  double *ahead = wait ? calloc(nr, sizeof *ahead) : NULL;
  if (wait && ahead) sp_refs_ahead(run, ahead);
  if (sink.cap > 0)
    ok &= sp_prefix_stop_init(&sink.stop, sink.cap, wait ? sp_prefix_limit(sink.cap) : sink.cap,
                              nest->nrefs, ahead) == 0;
  if (!ref_raw || (wait && !ahead) || !ok) {
    free(ref_raw);
    free(ahead);
    sp_sink_free(&sink);
    return -1;
  }
  bool truncated = false;
  int rc = sp_sample_run(nest, run, arch, sched, topt, nsms, cmo, mc, &sink, ahead, ref_raw, stats,
                         &truncated);
  free(ahead);
  if (cut) *cut = truncated;
  if (rc == 0) {
    bool extrapolate = !raw && (topt->sample_sms > 0 || topt->sample_waves > 0 || truncated || shortened);
    *sampled = extrapolate || cmo->l2_sample_shift > 0; /* estimates either way */
    *scale = extrapolate && sink.lanes > 0 ? est_instr * 32 / sink.lanes : 1;
    /* A sample that is a prefix in time (of the trace, or of the waves) is split: the latest
     * snapshot at most halfway through starts its second part. One of whole SMs or of a
     * shortened loop runs every thread it simulates from start to end, and scales in
     * proportion (all the events of a shortened loop's iteration, also the first touches of a
     * first pass, repeat with its trip). */
    int k = sink.snap_seen[0] > 0 && 2 * sink.snap_seen[0] <= sink.seen ? 0 : 1;
    bool split = (truncated || topt->sample_waves > 0) && sink.snap_seen[k] > 0;
    if (window) window[0] = split ? sink.snap_seen[k] : 0, window[1] = sink.seen;
    size_t na = (size_t)(nest->narrays ? nest->narrays : 1);
    sp_cold_mix *cold_seen = calloc(na, sizeof *cold_seen); /* per array */
    double *ex = calloc(2 * na, sizeof *ex);
    double *written = calloc(3 * na, sizeof *written); /* per array: bytes, of them written
                                                          back, L2 write sectors */
    if (!cold_seen || !ex || !written) rc = -1;
    for (int r = 0; r < nest->nrefs && rc == 0; r++) {
      sp_cm_counters cur = ref_raw[r], out;
      int a = nest->refs[r].array;
      sp_cold_mix *cm = &cold_seen[a];
      double lanes = sink.ref_lanes[r], ex_r = sp_rank_ref_executions(nest, r);
      double sec = (double)cur.l2_read_cold_sectors, bytes = (double)cur.dram_read_cold_bytes;
      cm->seen += sec, cm->bytes += bytes;
      if (lanes > 0) cm->w_seen += sec * ex_r / lanes, cm->w_bytes += bytes * ex_r / lanes;
      if (split) {
        const sp_cm_counters *at = &sink.snap[k][r];
        double sec2 = sec - (double)at->l2_read_cold_sectors;
        double bytes2 = bytes - (double)at->dram_read_cold_bytes, lanes2 = lanes - sink.snap_lanes[k][r];
        cm->second += sec2, cm->second_bytes += bytes2;
        if (lanes2 > 0) cm->w_second += sec2 * ex_r / lanes2, cm->w_second_bytes += bytes2 * ex_r / lanes2;
      }
      written[3 * a] += (double)(cur.dram_write_bytes + cur.l2_dirty_bytes);
      written[3 * a + 1] += (double)cur.dram_write_bytes;
      written[3 * a + 2] += (double)cur.l2_write_sectors;
      if (nest->refs[r].access == SP_READ) {
        ex[2 * a] += ex_r;
        ex[2 * a + 1] += lanes;
      }
      if (extrapolate) {
        /* a cut run of a shortened loop: to the shortened run's end at the rate of its second
         * part, then in proportion to the loop's trip; the head's first touches of each pass
         * repeat with the trip too (mm446's A[i][k] under 128-lane passes of j: the first
         * pass read 2 sectors of each row where the run reads 48, and DRAM reads were 64 %
         * too few) */
        double ex_run = shortened ? sp_rank_ref_executions(run, r) : ex_r;
        sp_extrapolate_ref(&out, &cur, split ? &sink.snap[k][r] : NULL, lanes,
                           split ? sink.snap_lanes[k][r] : 0, ex_run);
        if (ex_run > 0 && ex_run < ex_r) sp_counters_scale(&out, ex_r / ex_run);
      } else {
        out = cur;
      }
      sp_counters_sane(&out);
      sp_counters_add(&per_array[a], &out);
      if (per_ref) per_ref[r] = out;
    }
    int fill = sp_fill_bytes(arch);
    const bool even_boxes = sp_nest_even_work(nest);
    /* a prefix in time of every SM: the passes beyond it (sp_reread_level), each with the share
     * of its lines the L2 loses before the next, unless a slab of the grid lies beyond it
     * (sp_charge_slab_overlap's). Their overlaps are boxes' (sp_pass_overlap): where blocks'
     * work differs, only the rule of one wave's pass below (triangular.c:21 on 256 x 4 blocks:
     * its writes' boxes made the DRAM writes 6.8 % too many, 1.2 % without) */
    const double waves = (double)stats->blocks_working / sp_wave_blocks(arch, sched);
    int levels[SP_MAX_LOOPS + 1], nlevels = 0;
    double level_share[SP_MAX_LOOPS + 1], wave_pass = 0;
    const bool beyond_prefix = extrapolate && split && topt->sample_sms == 0 &&
                               !sp_slab_dims(nest, sched, (double)stats->blocks_simulated);
    if (beyond_prefix) {
      wave_pass = sp_wave_pass_bytes(nest, arch, sched, SP_PASS_ROUNDS, true);
      const double seen = fmax(1, waves) * sink.lanes / (32 * sp_estimate_warp_instructions(run));
      const int inner = even_boxes ? sp_reread_level(nest, sched, seen) : -1;
      for (int l = 0; l <= inner; l++)
        if (sp_mapped_rounds(nest, sched, l) > 1) levels[nlevels++] = l;
      if (even_boxes && waves > 1 && seen < 1) levels[nlevels++] = -1;
      for (int q = 0; q < nlevels; q++)
        level_share[q] =
            sp_rank_l2_miss_share(arch, sp_wave_pass_bytes(nest, arch, sched, levels[q], false));
    }
    for (int a = 0; a < nest->narrays && rc == 0; a++) {
      const sp_cold_mix *cm = &cold_seen[a];
      if (!extrapolate || ex[2 * a + 1] <= 0) continue;
      double foot = sp_rank_footprint_sectors(nest, a, fill, SP_FOOT_READS, NULL) * fill;
      /* A prefix in time of every SM whose second part still first-touches the array at a rate
       * that would take the run past its footprint: the rest are reads of data first touched
       * more than the sample ago. Those of later rounds miss as lines do that come back after
       * one wave's pass (matmul 4096^2's B, 134 MB a pass: the H100 read 8.6-9.3 GB of DRAM on
       * 4xN grids of 1,024 threads, where the sample counted its 268 MB of first touches; near
       * the L2's capacity its sets keep a share). Where a slab of the grid lies beyond the
       * sample, sp_charge_slab_overlap charges them instead.
       * That pass is one round of every loop. The rounds and waves the sample did not reach
       * re-read what the passes between share (sp_pass_overlap), each after a pass of its own:
       * laplacian 256^3 on 1,016 blocks whose k takes 8 rounds re-reads 2 planes a round 34 MB
       * later, not after the 6.5 MB of one round of i (DRAM reads 2.5 % short of --exact);
       * jacobi's second wave reads its strips' edges (11 %). Those count, at most the excess,
       * where they miss more than the excess at one round's pass. */
      double reread = 0;
      if (beyond_prefix && cm->w_second_bytes > foot) {
        double excess = cm->w_second_bytes - foot, beyond = 0;
        for (int q = 0; q < nlevels; q++)
          beyond +=
              sp_pass_overlap(nest, arch, sched, levels[q], waves, a, fill, SP_FOOT_READS) * level_share[q];
        reread = fmax(excess * sp_rank_l2_miss_share(arch, wave_pass), fmin(excess, beyond));
      }
      sp_cap_cold(&per_array[a], cm->seen, cm->bytes, ex[2 * a] / ex[2 * a + 1],
                  sp_cold_sectors_per_byte(cm), foot, arch->l2_sector_bytes, fill,
                  !l1_replaced && !(l1_replaced_if_cut && truncated), reread);
    }
    /* A written sector is dirty under its last writer, and its write-back is charged to it,
     * so with two stores to one array (the branches of a guard) these bytes move between
     * references whose extrapolations differ: guarded_stencil's 2048^2 doubles wrote back
     * 43 MB a run, sampled, of 33.5. The array's written bytes (written back + still dirty)
     * scale as its L2 write sectors do, split as in the sample; and no more can be dirty than
     * the array's written footprint (a sample cut between the two stores still counted 38.6). */
    for (int a = 0; a < nest->narrays && rc == 0; a++) {
      sp_cm_counters *c = &per_array[a];
      const double *w = &written[3 * a];
      if (!extrapolate || w[2] <= 0 || w[0] <= 0) continue;
      double all = w[0] * (double)c->l2_write_sectors / w[2];
      double foot = sp_written_bytes(nest, a, arch);
      /* every written sector is written back, or left dirty, at least once: where the boxes are
       * what runs, no fewer than the written footprint (a prefix of guarded_stencil holds the
       * left edge's sectors, which both branches write, at 1 in 16 of its sectors where the run
       * has 2 in 1,024: 1.8 % too few bytes) */
      if (even_boxes && all < foot) all = foot;
      c->dram_write_bytes = llround(all * w[1] / w[0]);
      c->l2_dirty_bytes = llround(fmin(all - (double)c->dram_write_bytes, foot));
      if (c->l2_dirty_bytes < 0) c->l2_dirty_bytes = 0;
      /* the sectors that passes beyond the sample both write are written back again where the
       * L2 lost them between (jacobi's b on 256 x 4 blocks: a partly written sector at each
       * edge of a strip, 8.4 MB of write-backs, --exact 142.4 MB where the sample had 134.2) */
      double rewrite = 0;
      for (int q = 0; q < nlevels; q++)
        rewrite += sp_pass_overlap(nest, arch, sched, levels[q], waves, a, arch->l2_sector_bytes,
                                   SP_FOOT_WRITES) * level_share[q];
      double room = (double)c->l2_write_sectors * arch->l2_sector_bytes -
                    (double)(c->dram_write_bytes + c->l2_dirty_bytes);
      if (rewrite > 0 && room > 0) c->dram_write_bytes += llround(fmin(rewrite, room));
    }
    free(cold_seen);
    free(ex);
    free(written);
  }
  free(ref_raw);
  sp_sink_free(&sink);
  return rc;
}

/* x's L2 and DRAM counts from its L2 reads and writes at the rates of rd (reads) and wr
 * (writes); the L1 side is kept. */
static void sp_l2_side_from(sp_cm_counters *x, const sp_cm_counters *rd, const sp_cm_counters *wr,
                            int sector_bytes) {
  double reads = (double)x->l2_read_sectors, writes = (double)x->l2_write_sectors;
  double rr = rd->l2_read_sectors > 0 ? 1.0 / (double)rd->l2_read_sectors : 0;
  double wrr = wr->l2_write_sectors > 0 ? 1.0 / (double)wr->l2_write_sectors : 0;
  x->l2_read_hit_sectors = llround(reads * (double)rd->l2_read_hit_sectors * rr);
  x->dram_read_bytes = llround(reads * (double)rd->dram_read_bytes * rr);
  x->dram_read_cold_bytes = llround(reads * (double)rd->dram_read_cold_bytes * rr);
  x->l2_read_cold_sectors = llround(reads * (double)rd->l2_read_cold_sectors * rr);
  x->l2_read_fill_sectors = llround(reads * (double)rd->l2_read_fill_sectors * rr);
  x->l2_write_hit_sectors = llround(writes * (double)wr->l2_write_hit_sectors * wrr);
  x->dram_write_bytes = llround(writes * (double)wr->dram_write_bytes * wrr);
  x->l2_dirty_bytes = llround(writes * (double)wr->l2_dirty_bytes * wrr);
  if (wr->l2_write_sectors <= 0) /* no store ran in the whole grid: each sector written once */
    x->l2_dirty_bytes = llround(writes * sector_bytes);
  sp_counters_sane(x);
}

/* The L2 read side of an array that only a reference the whole-grid run never reached reads:
 * its first touches are its footprint (foot bytes, at most a fill per read), which the other
 * arrays' rates do not tell (himeno's wrk1 and bnd, read once each at the end of the body: 19 %
 * too few DRAM reads at the rates of arrays that reuse), and its other misses are at the rate
 * of all arrays (all) per L2 read. */
static void sp_l2_reads_first_touch(sp_cm_counters *x, const sp_cm_counters *all, double foot,
                                    int fill) {
  double reads = (double)x->l2_read_sectors;
  double all_reads = (double)all->l2_read_sectors;
  double cold = fmin(foot, reads * fill);
  double other = all_reads > 0 ? reads * (double)(all->dram_read_bytes - all->dram_read_cold_bytes) / all_reads : 0;
  double per_miss = sp_dram_bytes_per_miss(all, fill);
  double misses = fmin(reads, (cold + other) / per_miss);
  x->dram_read_cold_bytes = llround(cold);
  x->dram_read_bytes = llround(cold + fmax(other, 0));
  x->l2_read_cold_sectors = llround(cold / per_miss);
  x->l2_read_hit_sectors = llround(reads - misses);
  sp_counters_sane(x);
}

/* The refinement's whole-grid run sees the L1 through a window that can be too short: a
 * shortened loop shrinks the data a thread touches between its grid-stride iterations, so the
 * L1 keeps what the whole loop would have pushed out (gemm 256^3's B panel: L1 misses 2.6 %
 * off); a trace cut after a few instructions per warp (one wave of long threads) sees each
 * warp's first iteration only, with a cold L1 (conv3d's GCC default: L2 reads 53 % high), and
 * may not reach a store that follows the body's loops at all (then counted as no store). The
 * L1 is private to its SM, so a few SMs run on their own count what their L1s see: in full
 * (every thread from start to end, no loop shortened) where the budget affords it, else as a
 * prefix, 1/S-th as wide and so S times deeper into each warp's work, extrapolated at the rate
 * of its second part. SMs that hold as many blocks behave alike; with B blocks on S SMs the
 * first B mod S hold one more than the others, so each of the (at most two) classes is sampled
 * and scaled by its number of SMs. These SMs' L1 hit and miss rates per load sector replace
 * the whole-grid run's, and its L2 hit rate is applied to the L1 misses; a reference the
 * whole-grid run never reached takes these SMs' counts. The L2 and DRAM otherwise keep the
 * whole-grid run's figures. l1_budget: instructions for these SMs; prefix: whether a prefix
 * may do when whole SMs do not fit. main_ref: the whole-grid run's counts per reference. */

/* One sample of sp_refine_l1 added, weighed by f, to the per-array sums (NULL: not kept) and
 * the per-reference ones; nothing after a failed run (rc). reach (NULL for samples run in
 * full): a sample extrapolated to the whole grid adds f to reach[i] for each reference i it
 * reached, and to reach[nrefs] (sp_refine_l1_reach). */
static void sp_refine_l1_add(const sp_nest *nest, const sp_cm_counters *l1, const sp_cm_counters *ref,
                             double f, sp_cm_counters *sum, sp_cm_counters *rs, double *reach,
                             int rc) {
  if (rc) return;
  for (int a = 0; a < nest->narrays && sum; a++) sp_counters_add_scaled(&sum[a], &l1[a], f);
  for (int i = 0; i < nest->nrefs; i++) {
    sp_counters_add_scaled(&rs[i], &ref[i], f);
    if (reach && sp_reached(&ref[i])) reach[i] += f;
  }
  if (reach) reach[nest->nrefs] += f;
}

/* One sample of sp_refine_l1: SMs topt.sample_sm_first .. + sample_sms - 1 of `run` (the nest,
 * or the nest with a loop shortened), on their share of the L2. raw: whole SMs in full, whose
 * counts stay as simulated; else the sample is extrapolated to the whole grid's executions.
 * weight: what its counts weigh in the sums. */
typedef struct sp_l1_part {
  const sp_nest *run;
  sp_trace_options topt;
  bool raw;
  bool census;          /* its L1 misses weighed by its class's keys (sp_l1_census) */
  bool first_touches;   /* its SMs' L2 share is simulated, for their first touches' mix */
  bool touch_only;      /* for that mix alone: its counts are not its class's */
  bool drained;         /* its SMs' last waves stop before the drain's round (sp_drain_of) */
  int cls_first, cls_n; /* the SMs it stands for (with census) */
  double weight;
} sp_l1_part;

static int sp_l1_part_run(const sp_nest *nest, const sp_arch *arch, const sp_schedule *sched,
                          const sp_cm_options *cmo_all, double est_instr, int64_t budget,
                          sp_model_cache *mc, const sp_l1_part *p, sp_cm_counters *l1,
                          sp_cm_counters *ref, sp_trace_stats *st, int64_t *window) {
  int nsms = p->topt.sample_sms;
  sp_cm_options cmo = *cmo_all;
  if ((double)nsms / arch->sm_count < cmo.l2_fraction) cmo.l2_fraction = (double)nsms / arch->sm_count;
  /* only these SMs' L1 side is kept (sp_refine_l1): their L2 need not be simulated */
  cmo.l1_only = cmo.l1_variant == SP_CM_L1_BASE && !p->first_touches;
  bool sampled;
  double scale;
  if (p->raw)
    return sp_simulate(nest, p->run, arch, sched, &p->topt, nsms, &cmo, 0, 0, false, false, false,
                       false, true, mc, l1, ref, st, &sampled, &scale, NULL, window);
  return sp_simulate(nest, p->run, arch, sched, &p->topt, nsms, &cmo, est_instr, budget, false,
                     p->run != nest, false, false, false, mc, l1, ref, st, &sampled, &scale, NULL, window);
}

/* Whether band loop k is on threads alone and runs lane rounds (its trip over its threads). */
static bool sp_lane_loop(const sp_nest *n, const sp_schedule *s, int k) {
  return s->map[k].thread_dim >= 0 && s->map[k].block_dim < 0 && sp_trace_loop_rounds(n, s, k) > 1;
}

/* Declared in refine.h. A thread that runs band loops in rounds over its lanes (conv3d's GCC
 * default: j on 32 rows of threads, k on 32 columns, 8 rounds each over 254) starts and ends
 * each pass of the inner ones with edge rounds of their own: the first reads its halo sector
 * cold, the last has 30 of 32 lanes. A prefix of one SM that sees only the middle of the first
 * pass (rounds 2-7 of k) misses at their rate, 1.8 % under the pass's (conv3d's L2 reads). One
 * round of the outermost such loop holds whole passes of the inner ones; so does a round of a
 * loop on threads and blocks (laplacian's k on 4 x 8 of 32 x 4 x 2 threads over i on the lanes:
 * L2 hits 1.4 % over --exact, the middle rounds of i pairing their misses in 64-byte fills
 * otherwise than the first and last). What two rounds share (round_bytes > 0) the L1 may keep
 * from one to the next, which a run of one round never sees: on 254 blocks of 32 x 8 threads,
 * whose rounds of j share 2 of 10 rows, it had 24 % more L2 reads than --exact. */
int sp_lane_round_loop(const sp_nest *n, const sp_arch *arch, const sp_schedule *s, int64_t *trip,
                       double *round_bytes) {
  if (!sp_nest_rectangular(n) || s->collapse_count >= 2) return -1;
  for (int k = 0; k < s->nband && k < n->nloops; k++) {
    const int d = s->map[k].thread_dim, on = s->map[k].block_dim;
    if (d < 0 || sp_trace_loop_rounds(n, s, k) <= 1) continue;
    bool inner = false; /* a lane loop inside it, whose passes its round holds */
    for (int b = k + 1; b < s->nband && b < n->nloops; b++) inner |= sp_lane_loop(n, s, b);
    if (!inner) return -1;
    /* one block's bytes in one round of k and in two: the loops inside whole (on threads and
     * blocks: the block's share, its width times its grid-stride rounds), the loops outside
     * on threads at the block's width, on blocks at one block's */
    double ext[SP_MAX_LOOPS];
    for (int l = 0; l < SP_MAX_LOOPS; l++) ext[l] = l < n->nloops && n->loops[l].trip_max > 0 ? (double)n->loops[l].trip_max : 1;
    for (int b = 0; b < s->nband && b < n->nloops; b++) {
      int t = s->map[b].thread_dim, g = s->map[b].block_dim;
      if (t >= 0 && g >= 0 && b > k)
        ext[b] = fmin(ext[b], s->block[t] * ceil(ext[b] / ((double)s->block[t] * (double)s->grid[g])));
      else if (t >= 0 && b <= k)
        ext[b] = s->block[t];
      else if (t < 0 && g >= 0)
        ext[b] = 1;
    }
    const int sector = arch->l1_sector_bytes;
    double one = 0, two = 0;
    for (int a = 0; a < n->narrays; a++) {
      ext[k] = s->block[d];
      one += sp_rank_footprint_sectors(n, a, sector, SP_FOOT_READS | SP_FOOT_WRITES, ext);
      ext[k] = 2.0 * s->block[d];
      two += sp_rank_footprint_sectors(n, a, sector, SP_FOOT_READS | SP_FOOT_WRITES, ext);
    }
    /* a block's next round of a loop on blocks too comes a grid's round later */
    *round_bytes = two < 2 * one && (on < 0 || s->grid[on] == 1) ? one * sector : 0;
    *trip = sp_trace_loop_spread(s, k);
    return k;
  }
  return -1;
}

/* Whether a band loop runs lane rounds (sp_lane_loop), in a rectangular nest without a
 * collapse. */
static bool sp_lane_rounds_only(const sp_nest *n, const sp_schedule *s) {
  if (!sp_nest_rectangular(n) || s->collapse_count >= 2) return false;
  for (int k = 0; k < s->nband && k < n->nloops; k++)
    if (sp_lane_loop(n, s, k)) return true;
  return false;
}

/* The most blocks of a wave on an SM the census counts (the H100 and its kin hold 32), and of
 * a class of SMs (every k-th SM beyond: a census then costs about a millisecond at most). */
#define SP_CENSUS_MAX_ACTIVE 64
#define SP_CENSUS_MAX_BLOCKS 16384.0

/* The grid dimensions (bit d) along which reference r's address moves from block to block: a
 * loop of its subscripts is distributed over grid dimension d, of more than one block. */
static unsigned sp_ref_block_dims(const sp_nest *n, const sp_schedule *s, int r) {
  unsigned dims = 0;
  for (int k = 0; k < s->nband; k++)
    if (n->refs[r].offset.coef[k] != 0 && sp_loop_moves_with_block(n, s, k))
      dims |= 1u << s->map[sp_schedule_collapsed_away(s, k) ? s->collapse_first : k].block_dim;
  return dims;
}

/* One wave of an SM for sp_l1_census: its blocks' coordinates, iterations along each grid
 * dimension (sp_trace_block_shares) and grid-stride rounds. */
typedef struct sp_census_wave {
  int n;
  int64_t at[SP_CENSUS_MAX_ACTIVE][3], share[SP_CENSUS_MAX_ACTIVE][3], rounds[SP_CENSUS_MAX_ACTIVE][3];
} sp_census_wave;

/* What a reference's misses in wave v are in proportion to, its keys: the distinct values of
 * the blocks' coordinates along `dims` (the grid dimensions its address moves with), each
 * weighed by the key's iterations along them (a partial last block reads less) and by the most
 * grid-stride rounds any of its blocks takes along the others (a block's rounds read its data
 * again, and the blocks of one key take theirs together). */
static double sp_census_keys(const sp_census_wave *v, const sp_schedule *s, unsigned dims) {
  uint64_t key[SP_CENSUS_MAX_ACTIVE];
  double data[SP_CENSUS_MAX_ACTIVE], passes[SP_CENSUS_MAX_ACTIVE];
  int nk = 0;
  for (int j = 0; j < v->n; j++) {
    uint64_t k = 0; /* the coordinates along dims, mixed radix (grids fit 64 bits) */
    double along = 1, other = 1;
    for (int d = 0; d < 3; d++) {
      k = k * (uint64_t)s->grid[d] + (dims >> d & 1 ? (uint64_t)v->at[j][d] : 0);
      if (dims >> d & 1) along *= (double)v->share[j][d];
      else other *= (double)v->rounds[j][d];
    }
    int q = 0;
    while (q < nk && key[q] != k) q++;
    if (q == nk) data[nk] = along, passes[nk] = 0, key[nk++] = k;
    passes[q] = fmax(passes[q], other);
  }
  double keys = 0;
  for (int q = 0; q < nk; q++) keys += data[q] * passes[q];
  return keys;
}

/* Declared in refine.h. A prefix of its SMs' first waves (a part of sp_refine_l1 with census)
 * takes the L1 rates of those waves for all of its class's, and the blocks of later waves may
 * share their data in L1 differently: 2mm.c:17 on 900 x 25 blocks of 32 threads, 32 an SM,
 * holds 5 rows of blocks in each SM's first wave, so 5 distinct rows of A among its 32
 * blocks, and in later waves, which start mid-row, 5 or 6; its L2 reads, the L1's misses, were
 * 4.8 % too few. A reference whose address moves with only some of the grid's dimensions is
 * read once a wave for each key (sp_census_keys) by whichever of its blocks comes first, and
 * hits for the others. Where the rounds of a wave's blocks differ the waves do not stay in
 * step (a block that ends early lets the next start beside the others), and a collapse fuses
 * the loops the keys are made of, and in a nest whose blocks' work differs (a triangular
 * one): every factor is 1 there. A drain's round (sp_drain_of), which a part of its own
 * samples, is left out of the SMs' last waves: their blocks take the rounds before it
 * together. Running the waves for their misses with the
 * longest loop shortened instead made the few sectors of each row's short window count
 * (2mm's 1024-thread candidates 14 % off). */
int sp_l1_census(const sp_nest *nest, const sp_schedule *sched, const sp_l1_census_in *in,
                 double *factor) {
  for (int r = 0; r < nest->nrefs; r++) factor[r] = 1;
  const int S = in->sms, active = in->active;
  const int64_t gx = sched->grid[0], gy = sched->grid[1], blocks = gx * gy * sched->grid[2];
  if (!(in->window[1] > in->window[0]) || S < 1 || in->nsms < 1 || in->cls_n < 1 || active < 1 ||
      active > SP_CENSUS_MAX_ACTIVE || sched->collapse_count || !sp_nest_rectangular(nest))
    return 0;
  const size_t nr = (size_t)(nest->nrefs ? nest->nrefs : 1);
  unsigned all = 0, *dims = malloc(nr * sizeof *dims);
  double *keys = calloc(2 * nr, sizeof *keys); /* per reference: all the class's, the window's */
  sp_census_wave *v = malloc(sizeof *v);
  if (!dims || !keys || !v) {
    free(dims), free(keys), free(v);
    return -1;
  }
  for (int d = 0; d < 3; d++) all |= sched->grid[d] > 1 ? 1u << d : 0;
  /* an array the L1 holds whole stays there from one wave to the next: no key of it is read
   * again (conv3d's 27 weights); per array, 1 held, 0 not, -1 not yet known */
  signed char *held = malloc((size_t)(nest->narrays ? nest->narrays : 1));
  if (!held) {
    free(dims), free(keys), free(v);
    return -1;
  }
  memset(held, -1, (size_t)(nest->narrays ? nest->narrays : 1));
  bool ok = false;
  for (int r = 0; r < nest->nrefs; r++) {
    const int a = nest->refs[r].array;
    dims[r] = nest->refs[r].access == SP_READ ? sp_ref_block_dims(nest, sched, r) : all;
    if (dims[r] == all) continue;
    if (held[a] < 0)
      held[a] = in->l1_bytes > 0 && sp_rank_footprint_sectors(nest, a, in->l1_line_bytes, SP_FOOT_READS, NULL) *
                                            in->l1_line_bytes <= (double)in->l1_bytes;
    if (held[a]) dims[r] = all;
    ok |= dims[r] != all;
  }
  free(held);
  const int64_t per_sm = blocks / S + 1;
  const int step = (int)fmax(1, ceil((double)in->cls_n * (double)per_sm / SP_CENSUS_MAX_BLOCKS));
  double work[2] = {0, 0};
  for (int i = 0; ok && i < in->cls_n; i++) {
    const int sm = in->cls_first + i;
    const bool sampled = sm >= in->sm_first && sm < in->sm_first + in->nsms, counted = i % step == 0;
    if (!counted && !sampled) continue;
    int64_t nb = blocks > sm ? sp_blocks_on_sm(blocks, S, sm) - in->skip_blocks : 0;
    int64_t waves = (nb + active - 1) / active;
    if (in->waves > 0 && in->waves < waves) waves = in->waves;
    for (int64_t w = 0; ok && w < waves; w++) {
      /* the share of the wave in the window, in blocks' worth of one SM's instructions */
      double lo = (double)(w * active), hi = fmin((double)((w + 1) * active), (double)nb);
      double seen = sampled && hi > lo ? fmax(0, fmin(hi, in->window[1]) - fmax(lo, in->window[0])) / (hi - lo) : 0;
      int64_t wb[SP_CENSUS_MAX_ACTIVE];
      double wwork = 0;
      v->n = 0;
      for (int64_t j = w * active; j < (w + 1) * active && j < nb; j++) wb[v->n++] = sm + S * (in->skip_blocks + j);
      ok = sp_trace_block_shares(nest, sched, wb, v->n, v->at, v->share, v->rounds) == 0;
      const int dd = in->drain_dim;
      if (in->drain_round > 0 && dd >= 0 && dd < 3 && w == (nb - 1) / active)
        for (int j = 0; ok && j < v->n; j++)
          if (v->rounds[j][dd] > in->drain_round) {
            v->rounds[j][dd] = in->drain_round;
            v->share[j][dd] = in->drain_round * in->drain_per;
          }
      for (int j = 0; ok && j < v->n; j++) {
        ok = memcmp(v->rounds[0], v->rounds[j], sizeof v->rounds[0]) == 0;
        wwork += (double)v->share[j][0] * (double)v->share[j][1] * (double)v->share[j][2];
      }
      work[0] += counted ? wwork : 0;
      work[1] += seen * wwork;
      for (int r = 0; ok && r < nest->nrefs; r++) {
        if (dims[r] == all) continue;
        double k = sp_census_keys(v, sched, dims[r]);
        keys[2 * r] += counted ? k : 0;
        keys[2 * r + 1] += seen * k;
      }
    }
  }
  for (int r = 0; ok && r < nest->nrefs; r++)
    if (dims[r] != all && keys[2 * r + 1] > 0 && work[0] > 0 && work[1] > 0)
      factor[r] = (keys[2 * r] / work[0]) / (keys[2 * r + 1] / work[1]);
  free(dims), free(keys), free(v);
  return 0;
}

/* The part's counts (per reference, and per array in l1) with each reference's L1 misses scaled
 * by factor[r] (sp_l1_census): its hits change by as much, and its L2 reads with them, at
 * the reference's L2 sectors per L1 miss. */
static void sp_l1_scale_misses(const sp_nest *nest, const double *factor, sp_cm_counters *l1,
                               sp_cm_counters *ref) {
  for (int r = 0; r < nest->nrefs; r++) {
    sp_cm_counters *c = &ref[r];
    double misses = (double)(c->ld_sectors - c->ld_l1_hit_sectors);
    if (factor[r] == 1 || misses <= 0) continue;
    double scaled = fmin((double)c->ld_sectors, misses * factor[r]);
    int64_t hits = c->ld_sectors - llround(scaled);
    int64_t reads = llround((double)c->l2_read_sectors * scaled / misses);
    sp_cm_counters *a = &l1[nest->refs[r].array];
    a->ld_l1_hit_sectors += hits - c->ld_l1_hit_sectors;
    a->l2_read_sectors += reads - c->l2_read_sectors;
    c->ld_l1_hit_sectors = hits;
    c->l2_read_sectors = reads;
  }
}

/* The last round of the grid-stride loop on a grid's one dimension (of extent > 1), in a grid
 * of one wave, or of more whose blocks of that round lie in their SMs' first waves (on the
 * grid's outermost dimension), where it leaves blocks without work: blocks b < nbt run round
 * `round` too, so their SMs run it with fewer blocks than the earlier rounds (446 columns of a
 * 2mm-like nest on 264 blocks of 1024 threads, two an SM: 182 blocks run a second round, on 50
 * SMs two of them, on 82 one alone; A[i][k], which two blocks read together, had 15 % too few
 * L2 reads). The SMs that run that round fall into at most two classes by how many of its
 * blocks they hold; first[c]: an SM of class c, weight[c]: its SMs' share of the iterations of
 * the loop. share: the round's share. round 0: none. */
typedef struct sp_round_tail {
  int64_t round;
  int loop; /* the grid-stride loop; the rounds before the last run round * stride of it */
  int64_t stride;
  int cut; /* SMs below it hold one block of the round more than the others */
  int ncls, first[2];
  double weight[2], share;
} sp_round_tail;

/* The band loop on grid dimension d (not collapsed away), or -1. */
static int sp_loop_on_block_dim(const sp_schedule *s, int d) {
  for (int k = 0; k < s->nband; k++)
    if (s->map[k].block_dim == d && !sp_schedule_collapsed_away(s, k)) return k;
  return -1;
}

static void sp_round_tail_of(const sp_nest *nest, const sp_schedule *s, int S, int active,
                             bool rectangular, sp_round_tail *t) {
  memset(t, 0, sizeof *t);
  /* a triangular nest's rounds differ in work */
  if (s->collapse_count >= 2 || !rectangular) return;
  const int d = sp_trace_skip_dim(nest, s);
  if (d < 0) return;
  for (int o = d + 1; o < 3; o++) /* the grid's outermost dimension: its last round's blocks */
    if (s->grid[o] > 1) return;    /* are the grid's first */
  const int64_t blocks = s->grid[0] * s->grid[1] * s->grid[2], low = blocks / s->grid[d];
  if (blocks <= S) return; /* one block an SM runs alone in every round */
  /* in one wave, a 1-D grid, whose rounds stride over all its blocks (sp_drain_of takes the
   * others' last waves) */
  const bool one_wave = blocks <= (int64_t)active * S;
  if (one_wave && low > 1) return;
  int k = sp_loop_on_block_dim(s, d);
  if (k < 0) return;
  const sp_loop *L = &nest->loops[k];
  int64_t per = s->map[k].thread_dim >= 0 ? s->block[s->map[k].thread_dim] : 1;
  int64_t trip = L->trip_max, stride = per * s->grid[d];
  if (trip < 1) return;
  int64_t rounds = trip / stride, rest = trip - rounds * stride;
  if (rounds < 1 || rest == 0) return;
  /* SM i holds blocks i, i + S, ...: those below nbt run the last round, SMs 0 .. cut-1 one
   * more of them than the others. Where they all lie in their SMs' first waves and later
   * waves follow, the SMs that hold one start a block of their next wave a round late, and end
   * on a round of fewer blocks; the SM runs that many rounds with fewer blocks either way
   * (2mm.c:26's i->by j->tx+bx on 2 x 264 blocks of 1024 threads: 800 rows leave 8 rows of
   * blocks a fourth round, and SMs 0-15 hit 0.520 of their sectors in L1 where the others hit
   * 0.554; the prefix of SM 0 took the others' rate for all, L2 reads 1.1 % too few). */
  int64_t nbt = (rest + per - 1) / per * low;
  if (nbt > (int64_t)active * S) return;
  /* a block's share of the round: its iterations along d, times its share of the dimensions
   * below (the blocks of the grid's first row or plane; a partial block takes less) */
  int64_t(*at)[3] = malloc((size_t)low * sizeof *at), (*share)[3] = malloc((size_t)low * sizeof *share);
  int64_t(*rd)[3] = malloc((size_t)low * sizeof *rd), *ids = malloc((size_t)low * sizeof *ids);
  bool ok = at && share && rd && ids;
  for (int64_t b = 0; ok && b < low; b++) ids[b] = b;
  ok = ok && sp_trace_block_shares(nest, s, ids, (int)low, at, share, rd) == 0;
  double sum = 0, *frac = ok ? malloc((size_t)low * sizeof *frac) : NULL;
  ok = ok && frac;
  for (int64_t b = 0; ok && b < low; b++) {
    frac[b] = 1;
    for (int o = 0; o < d; o++) frac[b] *= (double)share[b][o];
    sum += frac[b];
  }
  double w[2] = {0, 0};
  const int64_t cut = nbt % S ? nbt % S : S;
  for (int64_t b = 0; ok && sum > 0 && b < nbt; b++) {
    int64_t c = b / low, it = rest - per * c < per ? rest - per * c : per;
    w[b % S < cut ? 0 : 1] += (double)it / (double)trip * frac[b % low] / sum;
  }
  free(at), free(share), free(rd), free(ids), free(frac);
  if (!ok || sum <= 0) return;
  t->round = rounds;
  t->loop = k;
  t->stride = stride;
  t->cut = (int)cut;
  t->ncls = nbt > S && cut < S ? 2 : 1;
  t->first[0] = 0;
  t->first[1] = (int)cut;
  t->weight[0] = w[0];
  t->weight[1] = w[1];
  t->share = (double)rest / (double)trip;
}

/* The drain of an SM's last wave, in a grid of several waves whose one grid-stride loop
 * (sp_trace_skip_dim) leaves a last round that only some blocks run: those blocks run it with
 * the others gone, and share less of what they read in L1 than a full wave does, where a
 * prefix sees full waves only. 2mm.c:17's i->by j->tx+bx on 29x291 blocks of 32 threads:
 * 800 rows over 291 leave the last 73 rows of blocks two rounds where the first 218 take three;
 * each SM's second wave holds 16 of each, and the 16 run their third round alone with an L1 hit
 * rate of 0.10 against 0.17, the last 10 % of the SM's work: the prefix's L1 hits were 5.9 %
 * too many. For each class q (cls_first, ncls as sp_refine_l1 has them): share[q], the class's
 * work in that round of its SMs' last waves (sp_trace_block_work), and skip[q], the last
 * wave's first block on the class's first SM, the sample; share 0 where that SM's last wave
 * runs the round with all of its blocks or none. */
typedef struct sp_drain {
  int64_t round;
  int dim;     /* the grid dimension of the loop, */
  int64_t per; /* its threads along it (a round's iterations of a block) */
  int64_t skip[2];
  double share[2];
} sp_drain;

#define SP_DRAIN_MAX_BLOCKS ((int64_t)1 << 20) /* the blocks' work array: 8 MB */

static void sp_drain_of(const sp_nest *nest, const sp_schedule *s, int S, int active,
                        const int *cls_first, int ncls, sp_drain *out) {
  memset(out, 0, sizeof *out);
  const int64_t blocks = s->grid[0] * s->grid[1] * s->grid[2];
  int d = sp_nest_rectangular(nest) ? sp_trace_skip_dim(nest, s) : -1;
  if (d < 0 || blocks <= (int64_t)active * S || blocks > SP_DRAIN_MAX_BLOCKS) return;
  int k = sp_loop_on_block_dim(s, d);
  if (k < 0) return;
  const int64_t per = s->map[k].thread_dim >= 0 ? s->block[s->map[k].thread_dim] : 1;
  const int64_t trip = sp_trace_band_trip(nest, s, k), round = per * s->grid[d];
  const int64_t last = (trip - 1) / round;
  if (last < 1) return;
  double *work = malloc((size_t)blocks * sizeof *work);
  /* a rectangular nest's block work is a product: no enumeration (max_steps unused) */
  if (!work || sp_trace_block_work(nest, s, 1, work) != 0) {
    free(work);
    return;
  }
  double cls_work[2] = {0, 0}, drain[2] = {0, 0};
  int64_t runs[2] = {0, 0}, held[2] = {0, 0}; /* the sample's last-wave blocks: in the round, all */
  const int64_t span[3] = {s->grid[0], s->grid[0] * s->grid[1], blocks};
  for (int64_t b = 0; b < blocks; b++) {
    const int sm = (int)(b % S), q = ncls == 2 && sm >= cls_first[1] ? 1 : 0;
    const int64_t nb = sp_blocks_on_sm(blocks, S, sm), tail = nb % active;
    const int64_t wave_start = nb - (tail ? tail : active);
    const int64_t c = d == 0 ? b % span[0] : b % span[d] / span[d - 1];
    const double it_all = (double)sp_trace_stride_share(trip, round, c * per, per);
    const double it_last = it_all - (double)sp_trace_stride_share(last * round, round, c * per, per);
    cls_work[q] += work[b];
    if (b / S < wave_start || it_all <= 0) continue;
    drain[q] += work[b] * it_last / it_all;
    if (sm == cls_first[q]) {
      held[q]++;
      runs[q] += it_last > 0;
      out->skip[q] = wave_start;
    }
  }
  free(work);
  out->round = last;
  out->dim = d;
  out->per = per;
  for (int q = 0; q < ncls; q++)
    if (runs[q] > 0 && runs[q] < held[q] && cls_work[q] > 0) out->share[q] = drain[q] / cls_work[q];
}

/* A prefix that stops before a reference says nothing of it, where another sample reached it:
 * each reference's extrapolated counts are the average over the samples that reached it
 * (2mm.c:17's store after the k loop on 800 blocks of 1024 threads: reached by one SM's last
 * block, run on its own, and not by the prefixes of the others, it counted 1 % of its
 * sectors). */
static void sp_refine_l1_reach(const sp_nest *nest, sp_cm_counters *rs, const double *reach) {
  for (int i = 0; i < nest->nrefs; i++)
    if (reach[i] > 0 && reach[i] < reach[nest->nrefs]) sp_counters_scale(&rs[i], reach[nest->nrefs] / reach[i]);
}

/* Declared in refine.h, which says what it places. An SM's L1 depends on where in the grid its
 * blocks lie, which changes along the SMs of a class: mm446's i->bx j->tx+by on 1024x4 blocks
 * of 128 threads holds blocks of two j panels at once for longer on SMs 80-131, whose L1s hit
 * 85.1 % of the sectors where SMs 0-47 hit 88.5 %, and its first three SMs made B's L2 reads
 * 13 % too few. Where the SMs see the grid's positions with a period (sp_refine_l1), each
 * group starts at the residue the previous one left off, so that the groups cover the
 * residues as k consecutive SMs do. */
int sp_l1_strata(int first, int n, int k, int period, int *out, int *len) {
  int g = k < SP_L1_STRATA ? k : SP_L1_STRATA;
  if (period < 1) period = 1;
  int end = first, taken = 0; /* the previous group's end, the SMs placed */
  for (int j = 0; k < n && j < g; j++) {
    len[j] = k * (j + 1) / g - k * j / g;
    int lo = first + (int)((int64_t)n * j / g), hi = first + (int)((int64_t)n * (j + 1) / g);
    int at = (lo + hi - len[j]) / 2, want = (first + taken) % period;
    at += ((want - at) % period + period) % period;
    if (at < end) at += (end - at + period - 1) / period * period;
    if (at + len[j] > first + n - (k - taken - len[j])) break; /* no room at the residue */
    out[j] = at;
    end = at + len[j];
    taken += len[j];
  }
  if (g >= 1 && k < n && taken == k) return g;
  out[0] = first; /* the first k SMs */
  len[0] = k;
  return 1;
}

/* The SMs of a class that run in full for the L1 where each SM holds one column of blocks and
 * the columns do one of a few amounts of work: mm446.c's i->by j->tx+bx on 4 x 1024 blocks of
 * 128 threads puts all of an SM's blocks on one j panel (132 mod 4 = 0), and the SMs of the
 * last panel, 62 lanes wide, keep their panel of B in the L1 from one wave to the next where
 * the others do not; two strata of the other panels made B's L2 reads 7.4 % too many. When the
 * class's SMs hold 2 to k distinct amounts of work (sp_trace_sm_work) and k (at most
 * SP_L1_STRATA) SMs are run, each amount gets its share of them, at least one, from the middle
 * of its SMs, and they are weighed by their amount's work over theirs (at[], weight[]).
 * Returns the SMs placed, 0 where the work does not fall into so few amounts (then
 * sp_l1_strata places them). */
static int sp_work_strata(const double *work, int first, int n, int k, int *at, double *weight) {
  if (k < 2 || k > SP_L1_STRATA || k >= n) return 0;
  double val[SP_L1_STRATA];
  int count[SP_L1_STRATA], g = 0;
  for (int i = first; i < first + n; i++) {
    int v = 0;
    while (v < g && val[v] != work[i]) v++;
    if (v == g) {
      if (g == k) return 0;
      val[g] = work[i], count[g++] = 0;
    }
    count[v]++;
  }
  if (g < 2) return 0;
  int take[SP_L1_STRATA], placed = 0, left = k - g;
  for (int v = 0; v < g; v++) take[v] = 1;
  while (left > 0) { /* the rest to the amounts with the most SMs per SM taken */
    int best = 0;
    for (int v = 1; v < g; v++)
      if (count[v] * take[best] > count[best] * take[v]) best = v;
    if (take[best] >= count[best]) break;
    take[best]++, left--;
  }
  for (int v = 0; v < g; v++) {
    double total = val[v] * count[v], run = 0;
    int from = placed;
    for (int j = 0; j < take[v]; j++) {
      int want = (int)(((double)j + 0.5) * count[v] / take[v]), seen = 0;
      for (int i = first; i < first + n; i++)
        if (work[i] == val[v] && seen++ == want) {
          at[placed++] = i;
          break;
        }
    }
    for (int j = from; j < placed; j++) run += work[at[j]];
    for (int j = from; j < placed; j++) weight[j] = run > 0 ? total / run : 0;
  }
  return placed;
}

static int sp_refine_l1(const sp_nest *nest, const sp_arch *arch, const sp_schedule *sched,
                        const sp_cm_options *cmo_all, double est_instr, int64_t l1_budget,
                        bool prefix_ok, bool main_l1_distorted, sp_model_cache *mc,
                        const sp_cm_counters *main_ref, sp_cm_counters *per_array) {
  const int S = arch->sm_count;
  int64_t blocks = sched->grid[0] * sched->grid[1] * sched->grid[2];
  if (sched->grid[1] == 1 && sched->grid[2] == 1) /* blocks past the loops' end hold no work */
    blocks = fmin((double)blocks, (double)sp_trace_working_blocks(nest, sched));
  /* SMs the budget affords in full, the work taken as spread over all SMs, at the lanes a warp
   * has (est_instr counts full warps). A grid of fewer blocks runs an SM's more, so a raw run
   * can take up to S x l1_budget instructions (4.95 M on an H100), all of a small grid's trace,
   * which samples it better than a prefix (test_sampling_long_threads's 4-block gemm: DRAM reads
   * 33 % off as a prefix). Counted in full warps, GCC's one-thread baseline of kernels_region.c
   * passed for 1/32 of its instructions and ran its one SM's 50 M raw, 5 s a nest. */
  const int threads = sched->block[0] * sched->block[1] * sched->block[2];
  const double warp_lanes = threads > 0 && threads < 32 ? threads : 32;
  int k = (int)floor((double)l1_budget * S * warp_lanes / (est_instr * 32));
  int64_t r = blocks % S;
  int cls_first[2] = {0, (int)r}, cls_n[2]; /* SMs of each class */
  cls_n[0] = blocks <= S ? (int)blocks : r ? (int)r : S;
  cls_n[1] = blocks > S && r ? S - (int)r : 0;
  int ncls = cls_n[1] ? 2 : 1;
  if (k >= S || blocks < 1) return 0;
  int active = sp_blocks_per_sm(arch, sched);
  /* A capped grid whose last grid-stride round leaves blocks without work: the SMs that hold
   * more of that round's blocks are a class of their own, where the grid's blocks make one
   * class (a grid of a multiple of S blocks; otherwise their L1 rates stay mixed) */
  const bool even = sp_nest_rectangular(nest); /* blocks of equal work */
  sp_round_tail rt;
  sp_round_tail_of(nest, sched, S, active, even, &rt);
  if (rt.round > 0 && ncls == 1 && rt.cut < S) {
    ncls = 2;
    cls_first[1] = cls_n[0] = rt.cut;
    cls_n[1] = S - rt.cut;
  }
  /* SM s runs blocks s, s + S, s + 2S, ...; where the grid's extent shares a factor with S it
   * sees only some block positions (himeno's 4 x 32 x 63 blocks on 132 SMs: always the same
   * blockIdx.x), and its counts are its positions', not the grid's. Two corrections:
   * - The SMs are weighed by their blocks' iterations (sp_trace_sm_work), not their number: a
   *   stencil's 62 rows over 16 blocks of 4 leave the last blocks half empty, and SMs without
   *   one had their work counted for all (3 % too many stores).
   * - Where a partial block is also partial in its lanes (sp_trace_lane_uneven_dims: 30 of 32
   *   lanes take 4 sectors where 32 take 5), consecutive SMs cover every position once they
   *   span gcd(S, extent): the SMs of a class are then taken in whole such periods, or as a
   *   prefix of one period when the budget affords none in full and such a prefix still takes
   *   each resident warp through two body iterations. Without it himeno's stores were 5 % too
   *   many. A period over SP_L1_SM_PERIOD_MAX SMs is not followed (the run would be too
   *   shallow for its L1 rates, and the uneven blocks are at most one in that many), nor one
   *   of a 1-D grid, whose one partial block is its last. */
  const bool rows = sched->grid[1] * sched->grid[2] > 1;
  const int64_t cols = sp_gcd(S, sched->grid[0]); /* SM s sees the grid's columns s mod cols */
  unsigned uneven = rows ? sp_trace_lane_uneven_dims(nest, sched) : 0;
  int64_t px = uneven & 1 ? cols : 1;
  int64_t pxy = uneven & 2 ? sp_gcd(S, sched->grid[0] * sched->grid[1]) : 1;
  if (px > SP_L1_SM_PERIOD_MAX) px = 1;
  int period = (int)(pxy <= SP_L1_SM_PERIOD_MAX && pxy > px ? pxy : px);
  /* without a period: as many SMs as the budget affords in full, split between the classes;
   * one per class as a prefix when it affords fewer */
  int kq[2] = {0, 0}, want[2] = {ncls == 2 ? k / 2 : k, k - k / 2}; /* k split between classes */
  bool prefix = k < ncls;
  if (prefix && !prefix_ok) return 0;
  for (int q = 0; q < ncls; q++) {
    int w = prefix ? 1 : want[q];
    kq[q] = w < cls_n[q] ? w : cls_n[q];
  }
  if (period > 1) { /* whole periods in full, else one period as a prefix */
    int pk[2] = {0, 0};
    bool pprefix = false;
    for (int q = 0; q < ncls; q++) {
      int need = period < cls_n[q] ? period : cls_n[q];
      pprefix |= want[q] < need;
      pk[q] = want[q] >= cls_n[q] ? cls_n[q] : want[q] / need * need;
    }
    for (int q = 0; q < ncls && pprefix; q++) pk[q] = period < cls_n[q] ? period : cls_n[q];
    /* a prefix must still take each resident warp through two iterations of the loop body, or
     * it would miss the references past its own cut (a stencil's store) */
    double band = 1;
    for (int l = 0; l < nest->nloops; l++)
      if (nest->loops[l].band && nest->loops[l].trip_max > 0) band *= (double)nest->loops[l].trip_max;
    double per_warp = (double)l1_budget / ncls / period / (active * ((threads + 31) / 32));
    if (!pprefix || (prefix_ok && per_warp >= 2 * est_instr * 32 / band)) {
      kq[0] = pk[0];
      kq[1] = pk[1];
      prefix = pprefix;
    }
  }
  /* In a grid of more than one row, SM s sees only the columns x = s mod p, p = gcd(S, grid
   * x): the SMs spread over a class (sp_l1_strata) keep the columns that consecutive SMs see
   * (himeno 128^3's 32x63 blocks: SMs 39, 43, ... hold the grid's last column and hit 1 % more
   * in L1 than the others, and the middle SM of a class of 96 was one of them) */
  int spread_period = rows && cols > period ? (int)cols : period;
  size_t na = (size_t)(nest->narrays ? nest->narrays : 1), nr = (size_t)(nest->nrefs ? nest->nrefs : 1);
  sp_cm_counters *l1 = calloc(na, sizeof *l1), *sum = calloc(na, sizeof *sum);
  sp_cm_counters *ref = calloc(nr, sizeof *ref), *ref_sum = calloc(nr, sizeof *ref_sum);
  double *work = malloc((size_t)S * sizeof *work), *reach = malloc((nr + 1) * sizeof *reach);
  double *census = malloc(nr * sizeof *census);
  const int64_t l1_bytes = cmo_all->l1_bytes ? cmo_all->l1_bytes : arch->l1_bytes;
  /* per array: first-touched L2 sectors and their DRAM bytes, over the lane parts' runs */
  double *touch = calloc(2 * na, sizeof *touch);
  int rc = l1 && sum && ref && ref_sum && work && reach && census && touch ? 0 : -1;
  bool by_work = rc == 0 && sp_trace_sm_work(nest, sched, S, work) == 0;
  double work_all = 0;
  for (int i = 0; by_work && i < S; i++) work_all += work[i];
  by_work &= work_all > 0;
  /* A prefix of one SM a class would end within its threads' first pass of lane rounds
   * (sp_lane_round_loop). The class's SM runs all its blocks on one round of that loop and on
   * two instead, and each later round adds what the second added to the first (lane_cls 2;
   * conv3d's GCC default on blocks of 32 x 8, whose rounds of j share 2 of 10 rows in L1: its
   * L2 reads were 3 % too few). Where those runs do not fit the prefixes' budget, an SM whose
   * blocks' rounds overflow its L1, or share nothing, runs one round (lane_cls 1), and the
   * others two where that fits, else their prefix. */
  sp_nest one_round, two_rounds;
  const sp_nest *lanes = NULL, *lanes2 = NULL;
  int lane_cls[2] = {0, 0};
  int64_t round_trip = 0;
  double round_bytes = 0, nrounds = 0;
  int round_loop = prefix && period == 1 && rt.round == 0 && by_work
                       ? sp_lane_round_loop(nest, arch, sched, &round_trip, &round_bytes)
                       : -1;
  if (round_loop >= 0) {
    lanes = sp_nest_shortened(nest, round_loop, round_trip, &one_round);
    nrounds = (double)nest->loops[round_loop].trip_max / (double)round_trip;
    if (nrounds > 2) lanes2 = sp_nest_shortened(nest, round_loop, 2 * round_trip, &two_rounds);
    const double per_work = sp_estimate_warp_instructions(lanes) / work_all;
    const double cap = (double)(l1_budget + l1_budget / 4); /* the prefixes' */
    /* two rounds everywhere where they fit; else one where it can and two elsewhere; else one
     * where it can */
    double need = 0;
    for (int pick = 2; pick >= 0; pick--) {
      need = 0;
      for (int q = 0; q < ncls; q++) {
        const int64_t held = fmin(active, sp_blocks_on_sm(blocks, S, cls_first[q]));
        bool one = (double)held * round_bytes > (double)l1_bytes || round_bytes <= 0;
        lane_cls[q] = pick == 2 && lanes2 ? 2 : one ? 1 : pick == 1 && lanes2 ? 2 : 0;
        need += per_work * work[cls_first[q]] * (lane_cls[q] == 2 ? 3 : lane_cls[q]);
      }
      if (need > 0 && need <= cap) break;
    }
    if (need <= 0 || need > cap) lanes = NULL;
  }
  /* Without such a loop, where a loop on threads alone still runs lane rounds (laplacian's
   * 64 x 127 blocks of 32 x 4 x 2: i in 8 rounds of 32 lanes is its only round loop), the
   * prefixes' second parts hold middle rounds only: 36.5 bytes a first-touch miss where whole
   * rows take 35.9, L2 hits 1.2 % over --exact. The first wave of one SM runs its blocks'
   * passes whole, and its first touches give the mix (touch), where that wave costs at most a
   * quarter of the budget and later waves follow (in a grid of one wave it is the SM's whole
   * work). */
  bool mix_wave = false;
  if (!lanes && prefix && period == 1 && rt.round == 0 && by_work && sp_lane_rounds_only(nest, sched)) {
    const double waves0 = ceil((double)sp_blocks_on_sm(blocks, S, cls_first[0]) / active);
    mix_wave = waves0 > 1 && est_instr / S / waves0 <= (double)l1_budget / 4;
  }
  /* Pass 1, only where a reference is still unreached (the whole-grid run was shortened and
   * cut, and these SMs' prefix stopped before it too: 2mm.c:17's store on 800 blocks of 1024
   * threads counted 0 sectors): the same SMs again on the nest with its longest loop at its
   * shortest, for those references' counts only (their L1 side is what coalescing gives; the
   * shortened loop's L1 hits are not taken from it). */
  sp_cm_counters *cov = NULL;
  sp_nest brief;
  for (int pass = 0; pass < 2 && rc == 0; pass++) {
    const sp_nest *run = nest;
    sp_cm_counters *rs = ref_sum;
    memset(reach, 0, (nr + 1) * sizeof *reach);
    if (pass == 1) {
      bool missing = false;
      for (int i = 0; i < nest->nrefs; i++)
        missing |= !sp_reached(&main_ref[i]) && !sp_reached(&ref_sum[i]) &&
                   sp_rank_ref_executions(nest, i) > 0;
      int sl = -1;
      int64_t strip = 0;
      if (missing) sp_shorten_choice(nest, 0, &sl, &strip);
      if (sl < 0) break;
      run = sp_nest_shortened(nest, sl, strip, &brief);
      rs = cov = calloc(nr, sizeof *cov);
      if (!cov) {
        rc = -1;
        break;
      }
    }
    /* the last round of a capped grid on its own (a prefix sees its first rounds only), the
     * others without it */
    sp_round_tail tail_round = {0};
    sp_nest rounds;
    if (pass == 0 && prefix && rt.round > 0) {
      tail_round = rt;
      run = sp_nest_shortened(nest, rt.loop, rt.round * rt.stride, &rounds);
    }
    sp_drain drain = {0};
    if (pass == 0 && prefix && rt.round == 0)
      sp_drain_of(nest, sched, S, active, cls_first, ncls, &drain);
    sp_l1_part part[2 * SP_L1_STRATA + 4];
    int nparts = 0;
    for (int q = 0; q < ncls; q++) {
      double work_cls = 0, work_run = 0;
      for (int i = cls_first[q]; by_work && i < cls_first[q] + cls_n[q]; i++) work_cls += work[i];
      if (pass == 0 && lanes && lane_cls[q]) {
        sp_l1_part p = {.run = lanes, .raw = true, .census = true, .first_touches = true,
                        .cls_first = cls_first[q], .cls_n = cls_n[q],
                        .topt = {.sample_sms = 1, .sample_sm_first = cls_first[q]}};
        /* the SM's R rounds count R c1 (one round), or c1 + (R - 1) (c2 - c1); weighed by its
         * class's work */
        const double w = work_cls / work[cls_first[q]];
        p.weight = w * (lane_cls[q] == 1 ? nrounds : 2 - nrounds);
        part[nparts++] = p;
        if (lane_cls[q] == 1) continue;
        p.run = lanes2;
        p.weight = w * (nrounds - 1);
        part[nparts++] = p;
        continue;
      }
      sp_l1_part p = {.run = run, .topt = {.sample_sms = kq[q], .sample_sm_first = cls_first[q]}};
      if (!prefix && run == nest) { /* raw counts (est_instr 0 and not shortened keep them) */
        int at[SP_L1_STRATA], len[SP_L1_STRATA];
        double wgt[SP_L1_STRATA];
        /* SM s holds blocks of column s mod gx only where gx divides S: its work then tells
         * which column, and SMs of one column hold alike blocks */
        const bool one_column = rows && S % sched->grid[0] == 0;
        int gw = by_work && one_column ? sp_work_strata(work, cls_first[q], cls_n[q], kq[q], at, wgt) : 0;
        for (int j = 0; j < gw; j++)
          part[nparts++] = (sp_l1_part){.run = run, .raw = true, .weight = wgt[j],
                                        .topt = {.sample_sms = 1, .sample_sm_first = at[j]}};
        if (gw) continue;
        int g = sp_l1_strata(cls_first[q], cls_n[q], kq[q], spread_period, at, len);
        for (int j = 0; j < g; j++)
          for (int i = at[j]; by_work && i < at[j] + len[j]; i++) work_run += work[i];
        p.raw = true;
        p.census = true;
        p.cls_first = cls_first[q], p.cls_n = cls_n[q];
        p.weight = by_work && work_run > 0 ? work_cls / work_run : (double)cls_n[q] / kq[q];
        for (int j = 0; j < g; j++) {
          p.topt.sample_sm_first = at[j];
          p.topt.sample_sms = len[j];
          part[nparts++] = p;
        }
        continue;
      }
      /* a prefix (or a shortened run) is extrapolated to the whole grid's executions: weighed
       * by the class's share. An SM whose blocks do not fill its last wave runs that wave with
       * fewer blocks, which share less of what they read in L1 than a full wave's, and a
       * prefix sees only full waves (2mm.c:17 on 900 blocks of 1024 threads, two at a time:
       * 108 SMs run their seventh block alone, and the L2 reads of A were 10 % too few). That
       * wave is then sampled on its own, from its start, and each part is weighed by its
       * blocks (in a rectangular nest, whose blocks do equal work). */
      double f = by_work ? work_cls / work_all : (double)cls_n[q] / (double)(blocks < S ? blocks : S);
      int64_t nb = sp_blocks_on_sm(blocks, S, cls_first[q]);
      int64_t tail = pass == 0 && prefix && nb > active && even ? nb % active : 0;
      const double keep = f * (1 - tail_round.share); /* a round tail's parts take the rest */
      p.weight = keep;
      if (tail) {
        p.topt.sample_waves = (nb - tail) / active;
        p.weight = keep * (double)(nb - tail) / (double)nb;
      }
      /* its later waves' keys (sp_l1_census), where no part of its own takes a round tail (the
       * census would count it too); a drain's round, taken by a part of its own, the census
       * leaves out (2mm.c:17's i->by j->tx+bx on 29 x 291 blocks of 32: the blocks' rounds of
       * i differed, the census gave no factor, and SM 0, which repeats only full columns of
       * blocks in its waves, made the L1 hits 1.2 % too many) */
      p.census = run == nest && tail_round.round == 0;
      p.drained = drain.share[q] > 0;
      p.cls_first = cls_first[q], p.cls_n = cls_n[q];
      part[nparts++] = p;
      if (tail) {
        p.topt.sample_waves = 0;
        p.topt.sample_skip_blocks = nb - tail;
        p.weight = keep * (double)tail / (double)nb;
        part[nparts++] = p;
      }
      p.census = false;
      if (drain.share[q] > 0) { /* taken from the part that holds the last wave */
        double w = fmin(f * drain.share[q], part[nparts - 1].weight);
        part[nparts - 1].weight -= w;
        p.topt.sample_waves = 0;
        p.topt.sample_sms = 1;
        p.topt.sample_skip_blocks = drain.skip[q];
        p.topt.sample_skip_rounds = drain.round;
        p.weight = w;
        part[nparts++] = p;
      }
    }
    if (pass == 0 && mix_wave) /* its touches alone make the mix: any weight */
      part[nparts++] = (sp_l1_part){.run = nest, .raw = true, .first_touches = true, .touch_only = true,
                                    .topt = {.sample_sms = 1, .sample_sm_first = cls_first[0], .sample_waves = 1},
                                    .weight = 1};
    for (int c = 0; c < tail_round.ncls; c++) /* one SM of each class of it */
      part[nparts++] = (sp_l1_part){.run = nest,
                                    .topt = {.sample_sms = 1, .sample_sm_first = tail_round.first[c],
                                             .sample_skip_rounds = tail_round.round},
                                    .weight = tail_round.weight[c]};
    for (int i = 0; i < nparts && rc == 0; i++) {
      memset(l1, 0, na * sizeof *l1);
      sp_trace_stats st;
      int64_t window[2] = {0, 0};
      const sp_l1_part *pi = &part[i];
      rc = sp_l1_part_run(nest, arch, sched, cmo_all, est_instr, l1_budget / ncls, mc, pi, l1, ref, &st, window);
      for (int a = 0; rc == 0 && pi->first_touches && a < nest->narrays; a++) {
        touch[2 * a] += pi->weight * (double)l1[a].l2_read_cold_sectors;
        touch[2 * a + 1] += pi->weight * (double)l1[a].dram_read_cold_bytes;
      }
      if (pi->touch_only) continue;
      /* the part's window of instructions, in blocks' worth of one of its SMs' */
      const double per_block = est_instr / (double)(blocks > 0 ? blocks : 1) * pi->topt.sample_sms;
      if (rc == 0 && census && pi->census && per_block > 0 && !pi->topt.placement &&
          !pi->topt.sample_skip_rounds) {
        sp_l1_census_in in = {S, active, pi->cls_first, pi->cls_n, pi->topt.sample_sm_first,
                              pi->topt.sample_sms, pi->topt.sample_skip_blocks,
                              pi->topt.sample_waves,
                              {(double)window[0] / per_block, (double)window[1] / per_block},
                              l1_bytes, arch->l1_line_bytes,
                              pi->drained ? drain.round : 0, drain.per, drain.dim};
        if (pi->raw) in.window[0] = 0, in.window[1] = (double)blocks; /* whole SMs: all their blocks */
        rc = sp_l1_census(nest, sched, &in, census);
        if (rc == 0) sp_l1_scale_misses(nest, census, l1, ref);
      }
      sp_refine_l1_add(nest, l1, ref, part[i].weight, pass == 0 ? sum : NULL, rs,
                       part[i].raw ? NULL : reach, rc);
    }
    if (rc == 0) sp_refine_l1_reach(nest, rs, reach);
  }
  for (int i = 0; cov && i < nest->nrefs; i++)
    if (!sp_reached(&ref_sum[i])) ref_sum[i] = cov[i];
  free(cov);
  /* A reference the whole-grid run never reached takes these SMs' L1-side counts; its L2 and
   * DRAM side follows the whole-grid run's rates (its array's, else all arrays'; a store where
   * no store ran writes each sector back once a run: 0 bytes for conv3d's and himeno's stores
   * until this, 76 and 85 MB measured): these SMs' share of the L2 is too small to say what
   * the L2 does. */
  sp_cm_counters all;
  memset(&all, 0, sizeof all);
  for (int a = 0; a < nest->narrays; a++) sp_counters_add(&all, &per_array[a]);
  sp_cm_counters *add = calloc(na, sizeof *add);
  if (!add) rc = -1;
  for (int i = 0; i < nest->nrefs && rc == 0; i++) {
    const sp_cm_counters *m = &main_ref[i];
    if (sp_reached(m) || sp_rank_ref_executions(nest, i) <= 0) continue;
    int a = nest->refs[i].array;
    sp_cm_counters x = ref_sum[i];
    sp_l2_side_from(&x, per_array[a].l2_read_sectors > 0 ? &per_array[a] : &all,
                    per_array[a].l2_write_sectors > 0 ? &per_array[a] : &all,
                    arch->l2_sector_bytes);
    /* what the array's other stores wrote is not written again: a store that writes the
     * sectors another one already dirtied (both branches of a guard) adds no bytes to the
     * array's writes beyond its footprint (the sampled run had counted them twice) */
    double x_written = (double)(x.dram_write_bytes + x.l2_dirty_bytes);
    if (x_written > 0) {
      const sp_cm_counters *p = &per_array[a], *q = &add[a];
      double room = sp_written_bytes(nest, a, arch) -
                    (double)(p->dram_write_bytes + p->l2_dirty_bytes + q->dram_write_bytes +
                             q->l2_dirty_bytes);
      double keep = room <= 0 ? 0 : room < x_written ? room / x_written : 1;
      x.dram_write_bytes = llround((double)x.dram_write_bytes * keep);
      x.l2_dirty_bytes = llround((double)x.l2_dirty_bytes * keep);
    }
    sp_counters_add(&add[a], &x);
  }
  /* and the array's first touches stay within its footprint (sp_cap_cold): the rates of a
   * prefix are those of a cold start */
  int fill = sp_fill_bytes(arch);
  for (int a = 0; a < nest->narrays && rc == 0; a++) {
    if (!add[a].ld_requests && !add[a].st_requests) continue;
    double foot = sp_rank_footprint_sectors(nest, a, fill, SP_FOOT_READS, NULL) * fill;
    if (per_array[a].l2_read_sectors <= 0 && add[a].l2_read_sectors > 0)
      sp_l2_reads_first_touch(&add[a], &all, foot, fill);
    sp_counters_add(&per_array[a], &add[a]);
    sp_cm_counters *c = &per_array[a];
    double excess = (double)c->dram_read_cold_bytes - fmax(foot, 0);
    if (excess <= 0) continue;
    double per_miss = sp_dram_bytes_per_miss(c, fill);
    c->dram_read_cold_bytes -= llround(excess);
    c->dram_read_bytes -= llround(excess);
    c->l2_read_hit_sectors += llround(excess / per_miss);
    c->l2_read_cold_sectors = llround((double)c->l2_read_cold_sectors * (1 - excess / (excess + foot)));
    sp_counters_sane(c);
  }
  free(add);
  /* as rates of the load sectors, which the whole-grid run counts as well as the SMs do: the
   * two scale differently (SM count vs executions), and a count would then exceed its total */
  for (int a = 0; a < nest->narrays && rc == 0; a++) {
    sp_cm_counters *c = &per_array[a];
    if (!prefix && by_work && sum[a].ld_requests + sum[a].st_requests > 0) {
      c->ld_requests = sum[a].ld_requests;
      c->ld_sectors = sum[a].ld_sectors;
      c->ld_lines = sum[a].ld_lines;
      c->ld_l1_cycles = sum[a].ld_l1_cycles;
      c->st_requests = sum[a].st_requests;
      c->st_sectors = sum[a].st_sectors;
      c->st_lines = sum[a].st_lines;
      c->st_l1_cycles = sum[a].st_l1_cycles;
      c->st_partial_sectors = sum[a].st_partial_sectors;
    }
    if (sum[a].ld_sectors <= 0) continue;
    const double reads_main = (double)c->l2_read_sectors;
    int64_t misses = c->l2_read_sectors - c->l2_read_hit_sectors;
    int64_t cold = c->l2_read_cold_sectors < misses ? c->l2_read_cold_sectors : misses;
    /* The whole-grid run's first touches were those of its threads' first lane rounds: their
     * DRAM bytes stand (capped at the footprint), their sectors take the mix of lone and
     * paired sectors a 64-byte fill of the lane parts' SMs, which ran whole rounds (in their
     * share of the L2, where the data they share with other SMs' blocks is theirs alone: the
     * ratio holds, the counts do not). conv3d's GCC default: L2 hits 1.88 % too few against
     * --exact, now 0.36 %; himeno's 7.1 %, now 1.4 %. */
    int64_t cold_mixed = cold;
    if (touch[2 * a] > 0 && touch[2 * a + 1] > 0 && c->dram_read_cold_bytes > 0)
      cold_mixed = llround((double)c->dram_read_cold_bytes * touch[2 * a] / touch[2 * a + 1]);
    double ld = (double)c->ld_sectors, per = 1.0 / (double)sum[a].ld_sectors;
    c->ld_l1_hit_sectors = (int64_t)llround(ld * (double)sum[a].ld_l1_hit_sectors * per);
    c->ld_l1_pending_sectors = (int64_t)llround(ld * (double)sum[a].ld_l1_pending_sectors * per);
    c->ld_l1_hit_pending_sectors = (int64_t)llround(ld * (double)sum[a].ld_l1_hit_pending_sectors * per);
    c->ld_l1_miss_bank_cycles = (int64_t)llround(ld * (double)sum[a].ld_l1_miss_bank_cycles * per);
    c->l2_read_sectors = (int64_t)llround(ld * (double)sum[a].l2_read_sectors * per);
    /* A whole-grid run whose L1 hit where the run misses sent the L2 only a few of its reads,
     * so its hit ratio says nothing of the rest; its misses (the DRAM reads, from the array's
     * footprint against the L2) stand, and the reads it lacked hit. Otherwise its first
     * touches stand (the footprint's, sp_cap_cold: they do not grow with the reads the L1
     * sends) and its other misses keep their rate per read: a cut run whose warps start with
     * a cold L1 sends extra reads that hit, and its hit ratio applied to all misses made
     * conv3d's GCC default's L2 misses 31 % too few. */
    int64_t kept = main_l1_distorted ? misses
                                     : cold_mixed + (reads_main > 0 ? llround((double)(misses - cold) *
                                                                              (double)c->l2_read_sectors / reads_main)
                                                                    : 0);
    c->l2_read_hit_sectors = c->l2_read_sectors > kept ? c->l2_read_sectors - kept : 0;
    if (!main_l1_distorted) c->l2_read_cold_sectors = cold_mixed < kept ? cold_mixed : kept;
    if (main_l1_distorted && kept > c->l2_read_sectors) { /* but no more than read */
      double keep = (double)c->l2_read_sectors / (double)kept;
      c->dram_read_bytes = llround((double)c->dram_read_bytes * keep);
      c->dram_read_cold_bytes = llround((double)c->dram_read_cold_bytes * keep);
      c->l2_read_cold_sectors = llround((double)c->l2_read_cold_sectors * keep);
    }
  }
  free(l1);
  free(sum);
  free(ref);
  free(ref_sum);
  free(work);
  free(reach);
  free(census);
  free(touch);
  return rc;
}

/* The L1-side counts (requests, sectors, lines) of every reference over the whole run, counted
 * by class (sp_trace_ref_classes) where it can be: known[r]. */
typedef struct sp_l1_count {
  const sp_arch *arch;
  const sp_cm_options *cmo;
  sp_cm_counters *c;
} sp_l1_count;

static int sp_l1_count_add(void *ctx, const sp_warp_instr *wi, int64_t count) {
  sp_l1_count *k = ctx;
  return sp_cm_l1_side_add(k->arch, k->cmo, wi, count, k->c) ? -1 : 0;
}

static void sp_l1_side_counted(const sp_nest *nest, const sp_schedule *sched, const sp_arch *arch,
                               const sp_cm_options *cmo, sp_cm_counters *per_ref, bool *known) {
  for (int r = 0; r < nest->nrefs; r++) {
    memset(&per_ref[r], 0, sizeof per_ref[r]);
    sp_l1_count k = {arch, cmo, &per_ref[r]};
    known[r] = sp_trace_ref_classes(nest, sched, r, sp_l1_count_add, &k) == 0;
  }
}

/* An extrapolated candidate's L1-side counts replaced by the counted ones, array by array where
 * every reference of the array is counted. A sample sees some classes of instructions and not
 * others (a prefix in time: a thread-mapped loop's full passes, not its last partial one: 30
 * lanes of conv3d's k take 4 sectors where 32 take 5), so its sectors per lane are not the
 * run's. The L1 hits and L2 reads keep their rates per load sector; the DRAM traffic, which
 * follows the arrays' footprints more than the sectors, stays as extrapolated (the L2 hits
 * take the difference). Stores are written through, so their L2 write sectors are counted too,
 * and their L2 hits keep their rate. */
static int sp_apply_counted_l1(const sp_nest *nest, const sp_schedule *sched, const sp_arch *arch,
                               const sp_cm_options *cmo, sp_cm_counters *per_array) {
  size_t nr = (size_t)(nest->nrefs ? nest->nrefs : 1), na = (size_t)(nest->narrays ? nest->narrays : 1);
  sp_cm_counters *ref = calloc(nr, sizeof *ref), *sum = calloc(na, sizeof *sum);
  bool *known = calloc(nr, sizeof *known), *whole = malloc(na * sizeof *whole);
  if (!ref || !sum || !known || !whole) {
    free(ref), free(sum), free(known), free(whole);
    return -1;
  }
  sp_l1_side_counted(nest, sched, arch, cmo, ref, known);
  for (size_t a = 0; a < na; a++) whole[a] = true;
  for (int r = 0; r < nest->nrefs; r++) {
    whole[nest->refs[r].array] &= known[r];
    sp_counters_add(&sum[nest->refs[r].array], &ref[r]);
  }
  for (int a = 0; a < nest->narrays; a++) {
    sp_cm_counters *c = &per_array[a];
    const sp_cm_counters *e = &sum[a];
    /* loads the extrapolation never saw have no rates to keep: the array is left as it was */
    if (!whole[a] || (c->ld_sectors > 0) != (e->ld_sectors > 0)) continue;
    if (c->ld_sectors > 0) {
      double f = (double)e->ld_sectors / (double)c->ld_sectors;
      int64_t misses = c->l2_read_sectors - c->l2_read_hit_sectors;
      c->ld_l1_hit_sectors = llround((double)c->ld_l1_hit_sectors * f);
      c->ld_l1_pending_sectors = llround((double)c->ld_l1_pending_sectors * f);
      c->ld_l1_hit_pending_sectors = llround((double)c->ld_l1_hit_pending_sectors * f);
      c->ld_l1_miss_bank_cycles = llround((double)c->ld_l1_miss_bank_cycles * f);
      c->l2_read_sectors = llround((double)c->l2_read_sectors * f);
      c->l2_read_hit_sectors = c->l2_read_sectors > misses ? c->l2_read_sectors - misses : 0;
    }
    if (c->l2_write_sectors > 0) {
      double g = (double)e->l2_write_sectors / (double)c->l2_write_sectors;
      c->l2_write_hit_sectors = llround((double)c->l2_write_hit_sectors * g);
    } else if (e->l2_write_sectors > 0) {
      /* stores the sample never reached (spmv_ell27's y[i] after its row loop): each sector
       * written once, still dirty at the end, within the array's written footprint */
      double foot = sp_written_bytes(nest, a, arch);
      c->l2_write_hit_sectors = 0;
      c->dram_write_bytes = 0;
      c->l2_dirty_bytes = llround(fmin((double)e->l2_write_sectors * arch->l2_sector_bytes, foot));
    }
    c->l2_write_sectors = e->l2_write_sectors;
    c->ld_requests = e->ld_requests, c->ld_sectors = e->ld_sectors, c->ld_lines = e->ld_lines;
    c->ld_l1_cycles = e->ld_l1_cycles;
    c->st_requests = e->st_requests, c->st_sectors = e->st_sectors, c->st_lines = e->st_lines;
    c->st_l1_cycles = e->st_l1_cycles;
    c->st_partial_sectors = e->st_partial_sectors;
    sp_counters_sane(c);
  }
  free(ref), free(sum), free(known), free(whole);
  return 0;
}

static int sp_run_candidate(const sp_nest *nest, const sp_arch *arch, const sp_rank_options *opt,
                            double est_instr, int64_t budget, bool all_sms, sp_model_cache *mc,
                            sp_rank_candidate *c) {
  sp_trace_options topt;
  sp_cm_options cmo;
  int nsms, short_loop;
  int64_t short_trip;
  sp_candidate_config(nest, arch, opt, est_instr, budget, all_sms, &c->schedule, &topt, &nsms,
                      &cmo, &short_loop, &short_trip);
  sp_nest shortened;
  const sp_nest *run = short_loop >= 0 ? sp_nest_shortened(nest, short_loop, short_trip, &shortened)
                                       : nest;
  c->per_array = calloc((size_t)(nest->narrays ? nest->narrays : 1), sizeof *c->per_array);
  if (!c->per_array) return -1;
  bool cut = false;
  sp_cm_counters *main_ref = calloc((size_t)(nest->nrefs ? nest->nrefs : 1), sizeof *main_ref);
  if (!main_ref) return -1;
  bool refine_short = all_sms && short_loop >= 0 && budget > 0;
  bool distorted = refine_short && !sp_shortening_keeps_l1(nest, arch, &c->schedule, short_loop, short_trip);
  /* A cut run of all SMs is refined below, its L1 side replaced, and its own L2 reads do not
   * bound its first touches. Where the blocks' work differs (a triangle of loops or of
   * guards), the prefix's rate of first touches is not the run's either, and that bound held
   * them closer: on the guarded triangles of test_sampling_guard the median candidate's worst
   * error was 0.48 % with it and 1.20 % without. */
  const bool even_work = sp_nest_even_work(nest);
  const bool replaced_if_cut = all_sms && budget > 0 && even_work;
  int rc = sp_simulate(nest, run, arch, &c->schedule, &topt, nsms, &cmo, est_instr, budget,
                       !all_sms, short_loop >= 0, distorted, replaced_if_cut, false, &mc[0],
                       c->per_array, main_ref, &c->stats, &c->sampled, &c->scale, &cut, NULL);
  /* the share of an array's partly written sectors written alone into valid data is the
   * whole-grid run's, which simulates the L2 (the L1 refinement below replaces the counts) */
  double *alone_share = calloc((size_t)(nest->narrays ? nest->narrays : 1), sizeof *alone_share);
  if (!alone_share) rc = -1;
  for (int a = 0; a < nest->narrays && rc == 0; a++) {
    const sp_cm_counters *x = &c->per_array[a];
    alone_share[a] = x->st_partial_sectors > 0 && sp_rank_parity_stores_alone(nest, &c->schedule, a)
                         ? fmin(1.0, fmax(0.0, (double)x->st_partial_alone_sectors / (double)x->st_partial_sectors))
                         : 0;
  }
  if (rc == 0 && refine_short) { /* a cut run saw only the head of the threads' passes */
    bool rough = distorted || cut;
    rc = sp_refine_l1(nest, arch, &c->schedule, &cmo, est_instr, budget, rough, rough, &mc[1],
                      main_ref, c->per_array);
  } else if (rc == 0 && all_sms && cut && budget > 0) {
    rc = sp_refine_l1(nest, arch, &c->schedule, &cmo, est_instr,
                      (int64_t)((double)budget * SP_L1_SAMPLE_SHARE), true, false, &mc[1],
                      main_ref, c->per_array);
  }
  free(main_ref);
  /* refined candidates only: on the screening's short samples it cost himeno's ranking 0.46 s */
  bool extrapolated = topt.sample_sms > 0 || topt.sample_waves > 0 || cut || short_loop >= 0;
  /* a prefix in time of every SM, with the whole L2 (sp_simulate's rule for re-reads stands
   * back where a slab lies beyond it), or a screening sample of a few SMs */
  unsigned slabs = rc == 0 && (topt.sample_sms > 0 || topt.sample_waves > 0 || cut)
                       ? sp_slab_dims(nest, &c->schedule,
                                      topt.sample_sms > 0 ? 0 : (double)c->stats.blocks_simulated)
                       : 0;
  for (int d = 1; d < 3; d++) {
    if (!(slabs >> d & 1)) continue;
    /* the share of the lines of the slab between them that the L2 loses */
    double slab = sp_pass_bytes(nest, &c->schedule, sp_grid_stride(&c->schedule, d), SP_PASS_ROUNDS,
                                true, arch->l2_line_bytes);
    double miss = sp_rank_l2_miss_share(arch, slab);
    if (miss > 0) sp_charge_slab_overlap(nest, arch, &c->schedule, d, miss, c->per_array);
  }
  if (rc == 0 && all_sms && extrapolated && !opt->uncounted_l1)
    rc = sp_apply_counted_l1(nest, &c->schedule, arch, &cmo, c->per_array);
  if (rc == 0) {
    memset(&c->total, 0, sizeof c->total);
    for (int a = 0; a < nest->narrays; a++) {
      sp_cm_counters *x = &c->per_array[a];
      x->st_partial_alone_sectors = llround(alone_share[a] * (double)x->st_partial_sectors);
      sp_counters_add(&c->total, x);
    }
    c->cost_xu = sp_cm_cost_xu(&c->total, arch);
    sp_rank_combine comb = sp_rank_combine_of(nest);
    sp_rank_uneven u;
    rc = sp_rank_uneven_of(nest, &c->schedule, arch, c->stats.active_blocks_per_sm, &u);
    double dram_order = 1;
    if (rc == 0) rc = sp_rank_dram_order(nest, &c->schedule, c->per_array, arch, &dram_order);
    if (rc == 0) {
      sp_rank_arith ar = sp_rank_arith_of(nest, &c->total, arch);
      sp_rank_predict_time_uneven(&c->total, &c->stats, &c->schedule, arch,
                                  sp_loads_per_iteration(nest, arch), &comb, &ar, &u, dram_order,
                                  &c->time);
      if (opt->lowering_s)
        c->time.lowering_s = opt->lowering_s(&c->schedule, &c->stats, opt->lowering_ctx);
    }
    sp_rank_uneven_free(&u);
  }
  free(alone_share);
  return rc;
}

/* Declared in refine.h. */
int sp_rank_one(const sp_nest *nest, const sp_arch *arch, const sp_rank_options *opt,
                int64_t budget, sp_rank_candidate *c) {
  sp_model_cache mc[2];
  memset(mc, 0, sizeof mc);
  int rc = sp_run_candidate(nest, arch, opt, sp_estimate_warp_instructions(nest), budget, true, mc, c);
  c->model_lookups = mc[0].lookups + mc[1].lookups;
  c->model_sectors = mc[0].sectors + mc[1].sectors;
  for (int k = 0; k < 2; k++) sp_model_cache_free(&mc[k]);
  return rc;
}

/* One pass over a list of candidates, spread over worker threads. Candidates are independent
 * (each has its own trace and a model reset to empty), so the results do not depend on the
 * number of threads or on which thread ran which candidate. */
#define SP_MODEL_MEMORY_BUDGET ((size_t)160 << 20) /* all workers' memory models together */
#define SP_MAX_THREADS 8

typedef struct sp_pass {
  const sp_nest *nest;
  const sp_arch *arch;
  const sp_rank_options *opt;
  double est;
  int64_t budget;
  bool all_sms, progress, refine;
  sp_rank_result *out;
  sp_sample_cache *samples; /* the screening's shared samples; NULL: none */
  const int *idx; /* candidates to run */
  int n;
  pthread_mutex_t lock;
  int next, done, failed; /* failed: lowest failing position in idx, or n */
  int next_slot;
  /* Each worker's models, kept from pass to pass (a model of the same configuration is reset,
   * not allocated again: the rounds of refinement share one); [1]: the L1 runs of
   * sp_refine_l1. Slot 0's model also sizes the pass. Freed by sp_pass_free_models. */
  sp_model_cache models[SP_MAX_THREADS][2];
} sp_pass;

static void sp_pass_free_models(sp_pass *p, int from_slot) {
  for (int t = from_slot; t < SP_MAX_THREADS; t++)
    for (int k = 0; k < 2; k++) sp_model_cache_free(&p->models[t][k]);
}

/* A refined candidate's budget in warp instructions, from its screened counts (see
 * SP_BUDGET_SECTORS_PER_INSTR): transpose's uncoalesced compiler defaults (20 sectors an
 * instruction) took 3x a coalesced candidate's time each on the whole budget. */
static int64_t sp_refine_budget(int64_t budget, const sp_cm_counters *screened) {
  double req = (double)(screened->ld_requests + screened->st_requests);
  double sec = (double)(screened->ld_sectors + screened->st_sectors);
  if (budget <= 0 || req <= 0 || sec <= req * SP_BUDGET_SECTORS_PER_INSTR) return budget;
  double f = fmax(SP_BUDGET_MIN_SHARE, req * SP_BUDGET_SECTORS_PER_INSTR / sec);
  return (int64_t)((double)budget * f);
}

static void *sp_pass_worker(void *arg) {
  sp_pass *p = arg;
  pthread_mutex_lock(&p->lock);
  sp_model_cache *mc = p->models[p->next_slot++];
  mc[0].samples = p->samples;
  mc[1].samples = NULL;
  for (;;) {
    int k = p->next++;
    pthread_mutex_unlock(&p->lock);
    if (k >= p->n) break;
    sp_rank_candidate *c = &p->out->candidates[p->idx[k]];
    int64_t budget = p->budget;
    if (p->refine) {
      budget = sp_refine_budget(p->budget, &c->total);
      free(c->per_array);
      c->per_array = NULL;
      c->screened_s = c->time.total_s;
      c->screened_partial_s = c->time.partial_s;
    }
    int64_t lookups = mc[0].lookups + mc[1].lookups, sectors = mc[0].sectors + mc[1].sectors;
    int rc = sp_run_candidate(p->nest, p->arch, p->opt, p->est, budget, p->all_sms, mc, c);
    c->model_lookups += mc[0].lookups + mc[1].lookups - lookups;
    c->model_sectors += mc[0].sectors + mc[1].sectors - sectors;
    if (p->refine) c->refined = true;
    pthread_mutex_lock(&p->lock);
    if (rc && k < p->failed) p->failed = k;
    p->done++;
    if (p->progress && p->opt->progress) p->opt->progress(p->opt->progress_ctx, p->done, p->n);
  }
  return NULL;
}

static int sp_thread_count(const sp_rank_options *opt) {
  long t = opt->threads > 0 ? opt->threads : sysconf(_SC_NPROCESSORS_ONLN);
  return t < 1 ? 1 : t > SP_MAX_THREADS ? SP_MAX_THREADS : (int)t;
}

/* Runs the pass; returns the lowest failing position in idx, or n when all succeeded. */
static int sp_run_pass(sp_pass *p) {
  p->next = p->done = p->next_slot = 0;
  p->failed = p->n;
  if (p->n == 0) return p->n;
  int threads = sp_thread_count(p->opt);
  if (threads > p->n) threads = p->n;
  if (threads > 1) { /* as many workers as the memory budget holds models */
    sp_trace_options topt;
    sp_cm_options cmo;
    int nsms, short_loop;
    int64_t short_trip;
    sp_candidate_config(p->nest, p->arch, p->opt, p->est, p->budget, p->all_sms,
                        &p->out->candidates[p->idx[0]].schedule, &topt, &nsms, &cmo,
                        &short_loop, &short_trip);
    size_t each = sp_cm_memsys_full_bytes(sp_model_get(&p->models[0][0], p->arch,
                                                       p->nest->narrays, nsms, &cmo));
    for (int a = 0; a < p->nest->narrays; a++) /* and its footprint bitmaps (sp_simulate) */
      each += (size_t)fmin((double)(32 << 20),
                           ceil((double)p->nest->arrays[a].total_bytes / p->arch->l2_sector_bytes / 8));
    if (p->samples) /* and its trace recording (sp_sample_run) */
      each += SP_SAMPLE_RECORD_MAX * sizeof(sp_warp_instr);
    size_t fit = each ? SP_MODEL_MEMORY_BUDGET / each : 1;
    if (fit < (size_t)threads) threads = fit < 1 ? 1 : (int)fit;
  }
  sp_pass_free_models(p, threads); /* within the memory budget: only this pass's workers' */
  if (pthread_mutex_init(&p->lock, NULL) != 0) return 0;
  pthread_t tid[SP_MAX_THREADS];
  int started = 0;
  for (int t = 1; t < threads; t++) {
    if (pthread_create(&tid[started], NULL, sp_pass_worker, p) != 0) break;
    started++;
  }
  sp_pass_worker(p); /* the calling thread works too */
  for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
  pthread_mutex_destroy(&p->lock);
  return p->failed;
}

typedef struct sp_rank_key {
  int unrefined;
  double time, cost;
  int index;
} sp_rank_key;

static int sp_by_time(const void *pa, const void *pb) {
  const sp_rank_key *x = pa, *y = pb;
  if (x->unrefined != y->unrefined) return x->unrefined - y->unrefined;
  if (x->time != y->time) return x->time < y->time ? -1 : 1;
  if (x->cost != y->cost) return x->cost < y->cost ? -1 : 1;
  return x->index - y->index;
}

static int sp_order_by_time(const sp_rank_result *out, int *order);

/* The memory model's work to refine a screened candidate on `budget`, relative: per warp
 * instruction its L1 lookups (sectors) and, weighted double, its L2 lookups (an L1 miss's L2
 * read with its fill probes costs about as much again: transpose's uncoalesced baselines took
 * 3x its other candidates' time per instruction for 1.4x the sectors), times the instructions
 * it runs (sp_refine_budget). */
static double sp_refine_work(const sp_rank_candidate *c, int64_t budget) {
  const sp_cm_counters *t = &c->total;
  double req = (double)(t->ld_requests + t->st_requests);
  if (!(req > 0)) return 0;
  return ((double)(t->ld_sectors + t->st_sectors) / req +
          2.0 * (double)(t->l2_read_sectors + t->l2_write_sectors) / req) *
         (double)sp_refine_budget(budget, t);
}

typedef struct sp_work_key {
  double work;
  int index;
} sp_work_key;

static int sp_by_work_desc(const void *pa, const void *pb) {
  const sp_work_key *x = pa, *y = pb;
  if (x->work != y->work) return x->work > y->work ? -1 : 1;
  return x->index - y->index;
}

/* A round's candidates, the most work first, so that the round does not end on one long
 * candidate while the other workers wait (the results do not depend on the order). */
static void sp_order_longest_first(const sp_rank_result *out, int *idx, int n, int64_t budget) {
  sp_work_key *keys = malloc((size_t)(n > 0 ? n : 1) * sizeof *keys);
  if (!keys) return; /* the order is only a matter of speed */
  for (int i = 0; i < n; i++) keys[i] = (sp_work_key){sp_refine_work(&out->candidates[idx[i]], budget), idx[i]};
  qsort(keys, (size_t)n, sizeof *keys, sp_by_work_desc);
  for (int i = 0; i < n; i++) idx[i] = keys[i].index;
  free(keys);
}

/* Refinement in rounds, at most SP_REFINE_ROUNDS of SP_REFINE_COUNT candidates (and half as
 * many of the refine_also subset): round 0 the screening's best and both baselines, later rounds
 * the candidates expected to beat the best refined one (rank/refine.c). idx: room for out->n
 * candidate indices. 0, or -1 on allocation failure. */
static int sp_refine_rounds(sp_pass *pass, const sp_rank_options *opt, int64_t budget, int *idx) {
  sp_rank_result *out = pass->out;
  pass->budget = budget;
  pass->all_sms = true;
  pass->progress = false;
  pass->refine = true;
  bool *also = calloc((size_t)out->n, sizeof *also);
  if (!also) return -1;
  for (int i = 0; opt->refine_also && i < out->n; i++)
    also[i] = opt->refine_also(&out->candidates[i].schedule, opt->refine_also_ctx);
  int rc = 0;
  const int per_round = opt->refine_count > 0 ? opt->refine_count : SP_REFINE_COUNT;
  const int rounds = opt->refine_rounds > 0 ? opt->refine_rounds : SP_REFINE_ROUNDS;
  for (int round = 0; round < rounds && rc == 0; round++) {
    if (sp_order_by_time(out, out->order) != 0) {
      rc = -1;
      break;
    }
    int nref = sp_refine_select(out, also, round, per_round, idx);
    if (nref < 0) rc = -1;
    if (nref <= 0) break;
    sp_order_longest_first(out, idx, nref, budget);
    pass->idx = idx;
    pass->n = nref;
    if (sp_run_pass(pass) < nref) rc = -1;
  }
  free(also);
  return rc;
}

int sp_rank_nest(const sp_nest *nest, const sp_arch *arch, const sp_rank_options *opt,
                 sp_rank_result *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  sp_space space;
  if (sp_space_build(nest, arch, &opt->space, &space, err, errlen) != 0) return -1;
  if (space.n == 0) {
    snprintf(err, errlen, "no schedule: the nest has no parallel loop to map onto the GPU");
    sp_space_free(&space);
    return -1;
  }
  if (opt->nvector_lengths > 0) { /* --vector: keep the candidates with those block x sizes */
    int kept = 0, def = -1, dg = -1, dn = -1;
    for (int i = 0; i < space.n; i++) {
      bool ok = false;
      for (int v = 0; v < opt->nvector_lengths; v++) ok |= space.items[i].block[0] == opt->vector_lengths[v];
      if (!ok && i != space.default_gcc && i != space.default_nvc) continue; /* baselines stay */
      if (i == space.default_index) def = kept;
      if (i == space.default_gcc) dg = kept;
      if (i == space.default_nvc) dn = kept;
      space.items[kept++] = space.items[i];
    }
    space.n = kept;
    space.default_index = def;
    space.default_gcc = dg;
    space.default_nvc = dn;
  }
  out->candidates = calloc((size_t)space.n, sizeof *out->candidates);
  out->order = malloc((size_t)space.n * sizeof *out->order);
  if (!out->candidates || !out->order) {
    snprintf(err, errlen, "out of memory");
    sp_space_free(&space);
    sp_rank_result_free(out);
    return -1;
  }
  out->n = space.n;
  out->default_index = space.default_index;
  out->default_gcc = space.default_gcc;
  out->default_nvc = space.default_nvc;
  double est = sp_estimate_warp_instructions(nest);
  int64_t budget = opt->exact ? 0 : opt->sample_budget > 0 ? opt->sample_budget
                                                           : SP_DEFAULT_SAMPLE_BUDGET;
  int64_t screen_budget = (opt->screen_total > 0 ? opt->screen_total : SP_SCREEN_TOTAL) / space.n;
  int64_t screen_min = opt->screen_min > 0 ? opt->screen_min : SP_SCREEN_MIN;
  if (screen_budget < screen_min) screen_budget = screen_min;
  bool screen = !opt->exact && space.n > SP_REFINE_COUNT && est > (double)screen_budget;
  int *idx = malloc((size_t)space.n * sizeof *idx);
  if (!idx) {
    snprintf(err, errlen, "out of memory");
    sp_space_free(&space);
    sp_rank_result_free(out);
    return -1;
  }
  for (int i = 0; i < space.n; i++) {
    out->candidates[i].schedule = space.items[i];
    idx[i] = i;
  }
  sp_pass pass = {.nest = nest, .arch = arch, .opt = opt, .est = est,
                  .budget = screen ? screen_budget : budget, .all_sms = !screen,
                  .progress = true, .out = out, .idx = idx, .n = space.n};
  sp_sample_cache samples;
  bool share = screen && !opt->unshared_samples &&
               sp_sample_cache_init(&samples, SP_SAMPLE_CACHE_BYTES) == 0;
  pass.samples = share ? &samples : NULL;
  out->screened = screen;
  int failed = sp_run_pass(&pass), rc = 0;
  if (share) {
    out->samples_shared = (int)samples.hits;
    sp_sample_cache_free(&samples);
  }
  pass.samples = NULL;
  if (failed < space.n) {
    snprintf(err, errlen, "candidate %s could not be simulated", space.items[failed].name);
    rc = -1;
  } else if (screen && sp_refine_rounds(&pass, opt, budget, idx) != 0) {
    snprintf(err, errlen, "refinement failed (out of memory?)");
    rc = -1;
  }
  sp_pass_free_models(&pass, 0);
  sp_space_free(&space);
  free(idx);
  if (rc != 0) {
    sp_rank_result_free(out);
    return -1;
  }
  if (sp_order_by_time(out, out->order) != 0) {
    snprintf(err, errlen, "out of memory");
    sp_rank_result_free(out);
    return -1;
  }
  sp_rank_order_plateau(out, out->order);
  return 0;
}

int sp_rank_registers(const sp_rank_result *r) {
  return r && r->n > 0 ? r->candidates[0].schedule.registers : 0;
}

bool sp_rank_screened_only(const sp_rank_result *r, const sp_rank_candidate *c) {
  return r->screened && !c->refined;
}

double sp_rank_screened_s(const sp_rank_candidate *c) {
  return c->refined ? c->screened_s : c->time.total_s;
}

double sp_rank_screened_partial_s(const sp_rank_candidate *c) {
  return c->refined ? c->screened_partial_s : c->time.partial_s;
}

static bool sp_big_block(const sp_schedule *s) {
  return s->block[0] * s->block[1] * s->block[2] > SP_RANK_PLATEAU_THREADS;
}

bool sp_rank_plateau_shape_before(const sp_schedule *a, const sp_schedule *b) {
  if (sp_big_block(a) != sp_big_block(b)) return !sp_big_block(a);
  return a->block[0] > b->block[0];
}

bool sp_rank_plateau_before(const sp_rank_candidate *a, const sp_rank_candidate *b) {
  if (sp_rank_plateau_shape_before(&a->schedule, &b->schedule)) return true;
  if (sp_rank_plateau_shape_before(&b->schedule, &a->schedule)) return false;
  return a->time.total_s < b->time.total_s;
}

/* The head of an order by time that is within SP_RANK_PLATEAU of the fastest (and refined
 * alike with it). */
static int sp_plateau_length(const sp_rank_result *out, const int *order) {
  if (out->n == 0) return 0;
  const sp_rank_candidate *first = &out->candidates[order[0]];
  double fastest = first->time.total_s;
  for (int i = 0; i < out->n && out->candidates[order[i]].refined == first->refined; i++)
    fastest = fmin(fastest, out->candidates[order[i]].time.total_s);
  int n = 1;
  while (n < out->n) {
    const sp_rank_candidate *c = &out->candidates[order[n]];
    if (c->refined != first->refined || c->time.total_s > SP_RANK_PLATEAU * fastest) break;
    n++;
  }
  return n;
}

int sp_rank_plateau_size(const sp_rank_result *r) {
  return r && r->order ? sp_plateau_length(r, r->order) : 0;
}

bool sp_rank_across_grain(const sp_schedule *s) {
  for (int k = 0; k < s->nband; k++)
    if (s->map[k].thread_dim == 0 && s->map[k].block_dim == 1) return true;
  return false;
}

bool sp_rank_same_threads(const sp_schedule *a, const sp_schedule *b) {
  if (a->nband != b->nband || a->collapse_first != b->collapse_first || a->collapse_count != b->collapse_count)
    return false;
  for (int d = 0; d < 3; d++)
    if (a->block[d] != b->block[d]) return false;
  for (int k = 0; k < a->nband; k++)
    if (a->map[k].thread_dim != b->map[k].thread_dim) return false;
  return true;
}

/* Insertion sort: stable, and the plateau is short. */
void sp_rank_order_plateau(const sp_rank_result *out, int *order) {
  int n = sp_plateau_length(out, order);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && sp_rank_plateau_before(&out->candidates[order[j]],
                                                    &out->candidates[order[j - 1]]); j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int i = 0; i < n; i++) {
    const sp_schedule *across = &out->candidates[order[i]].schedule;
    if (!sp_rank_across_grain(across)) continue;
    for (int j = i + 1; j < n; j++) {
      const sp_schedule *other = &out->candidates[order[j]].schedule;
      if (!sp_rank_across_grain(other) && sp_rank_same_threads(across, other)) {
        int twin = order[j];
        memmove(&order[i + 1], &order[i], (size_t)(j - i) * sizeof *order);
        order[i] = twin;
        break;
      }
    }
  }
}

/* Candidates by predicted time; screened-only candidates after the refined ones, since their
 * figures come from a smaller sample. */
static int sp_order_by_time(const sp_rank_result *out, int *order) {
  sp_rank_key *keys = malloc((size_t)out->n * sizeof *keys);
  if (!keys) return -1;
  bool any_refined = false;
  for (int i = 0; i < out->n; i++) any_refined |= out->candidates[i].refined;
  for (int i = 0; i < out->n; i++) {
    const sp_rank_candidate *c = &out->candidates[i];
    keys[i] = (sp_rank_key){any_refined && !c->refined, c->time.total_s, c->cost_xu, i};
  }
  qsort(keys, (size_t)out->n, sizeof *keys, sp_by_time);
  for (int i = 0; i < out->n; i++) order[i] = keys[i].index;
  free(keys);
  return 0;
}

void sp_rank_result_free(sp_rank_result *r) {
  if (r->candidates)
    for (int i = 0; i < r->n; i++) free(r->candidates[i].per_array);
  free(r->candidates);
  free(r->order);
  memset(r, 0, sizeof *r);
}
