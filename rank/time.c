/* The time model: the modeled traffic of a candidate over the bandwidth of each level, and its
 * memory instructions over the warps it keeps in flight (Little's law), wave group by wave group,
 * so that the grid's size and the occupancy count, not only the traffic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/rank.h"

/* Outer band iterations sp_rank_uneven_of enumerates to count a triangular nest's blocks, beyond
 * which it samples them (sp_trace_block_work) */
#define SP_UNEVEN_MAX_STEPS 20000
/* Grids beyond which sp_rank_uneven_of does not look for their working blocks in the first wave */
#define SP_UNEVEN_MAX_BLOCKS 65536

/* Kernel start-up the host cannot hide (estimate, typical of Volta-Hopper). */
#define SP_LAUNCH_SECONDS 2.0e-6
/* Without a measured curve: the fraction of the SMs that saturate DRAM bandwidth (an estimate:
 * a few dozen Hopper SMs draw the full HBM bandwidth on streaming kernels). */
#define SP_DRAM_SATURATING_SM_FRACTION 0.5

const char *sp_rank_bound_name(sp_rank_bound b) {
  switch (b) {
    case SP_BOUND_DRAM: return "DRAM bandwidth";
    case SP_BOUND_L2: return "L2 bandwidth";
    case SP_BOUND_L1: return "L1 throughput";
    case SP_BOUND_LATENCY: return "memory latency";
    case SP_BOUND_COMBINE: return "reduction atomics";
    case SP_BOUND_PARTIAL: return "partly written store sectors";
    case SP_BOUND_EMPTY: return "blocks without work";
    case SP_BOUND_ARITH: return "floating-point throughput";
    case SP_BOUND_ARITH_LATENCY: return "floating-point latency";
    case SP_BOUND_DISPATCH: return "block dispatch";
  }
  return "?";
}

/* Measured on the H100 (validation/results/h100/2026-11-23-model-2108e9c, dram__bytes_write.sum
 * of 787 candidates): streaming kernels write back all they write, laplacian 256^3 139 MB of
 * 131 MB written, jacobi 4096^2 137-142 of 134, triangular 64.5 of about 67, where a single
 * cold run's LRU (W (1 - C/F): 105 MB on laplacian) or "all but an L2's worth" (W - C: 79 MB,
 * this model's figure until then) fall short. Kernels that write a few KB measured 8-22 MB:
 * the dirty data the harness leaves in the L2 before each run (its L2 flush), which no model
 * of the kernel sees. */
double sp_rank_dram_write_bytes(const sp_cm_counters *c) {
  return (double)c->dram_write_bytes + (double)c->l2_dirty_bytes;
}

double sp_rank_partial_write_seconds(double sectors, const sp_arch *a) {
  return sectors * a->l2_partial_write_ns * 1e-9;
}

/* The partly written store sectors that cost: those whose rest another write supplies, or the
 * L2 does not hold. One store writing part of a sector it has just read, which nothing else
 * writes (a red-black sweep's u[i][j] beside u[i][j - 1]), merges into valid data: on the H200
 * that sweep ran 114 us where charging all of its partial sectors predicted 178
 * (validation/results/h200/2026-11-29-redblack/). */
double sp_rank_partial_charged_sectors(const sp_cm_counters *c) {
  return fmax(0.0, (double)(c->st_partial_sectors - c->st_partial_alone_sectors));
}

/* The L2 bandwidth `sms` SMs draw: what they drew alone on the probe (sm_bandwidth_probe.cu), up
 * to the chip's; without a curve, their share of the chip's. One H100 SM drew 156 GB/s from the
 * L2, 4.2x its 1/132 share of the chip's 4,860; candidates of 1-4 blocks of 1,024 threads ran
 * 3-4.5x faster than that share predicted (vla_param.c:10, mvt.c:22, bicg.c:13). */
double sp_rank_l2_bw_gbs(const sp_arch *a, int sms) {
  if (a->l2_bw_by_sms.n) return fmin(a->l2_bw_gbs, sp_arch_bw_at(&a->l2_bw_by_sms, sms));
  return a->l2_bw_gbs * sms / a->sm_count;
}

/* The share of the DRAM bandwidth `sms` SMs draw: the probe's curve over its value at every SM
 * (one H100 SM drew 125 GB/s, 4.4 % of all 132's 2,820, where the estimate without a curve
 * gives it 1.5 %; 33 SMs drew 91 %, not 50 %). The chip's figure stays dram_bw_gbs. */
double sp_rank_dram_share(const sp_arch *a, int sms) {
  if (a->dram_bw_by_sms.n)
    return fmin(1.0, sp_arch_bw_at(&a->dram_bw_by_sms, sms) / sp_arch_bw_at(&a->dram_bw_by_sms, a->sm_count));
  return fmin(1.0, (double)sms / a->sm_count / SP_DRAM_SATURATING_SM_FRACTION);
}

/* The curve at `rounds`: 1 below its first point, linear in log2(rounds) between points, its
 * last value beyond the last (not measured there: the probe stopped at 64 rounds). */
static double sp_drift_at(const sp_arch_curve *c, double rounds) {
  if (c->n < 1 || rounds <= c->x[0]) return 1.0;
  for (int i = 1; i < c->n; i++)
    if (rounds <= c->x[i]) {
      double f = log2(rounds / c->x[i - 1]) / log2(c->x[i] / c->x[i - 1]);
      return c->y[i - 1] + (c->y[i] - c->y[i - 1]) * f;
    }
  return c->y[c->n - 1];
}

/* The slowdown of traffic whose requests read `piece` bytes of each line they touch: the 32 and
 * 64-byte curves, linear in between, falling to none at a whole line (128 and 256-byte pieces
 * measured within 3 % of none). A warp of 32 doubles 8 bytes past a sector reads 3 sectors a
 * line, 96 bytes: 1.03x at 16 rounds, where the probe measured 1.26x (the lines at its ends,
 * which it shares with the next warps); its 32-byte pieces 8 bytes in, 1.6 sectors a line: 1.17x
 * and 1.40x at 16 and 64 rounds, measured 1.17x and 1.34x. */
static double sp_piece_slowdown(const sp_arch *a, const sp_arch_curve *c32, const sp_arch_curve *c64,
                                double piece, double x) { /* (the walk's curves read the same way) */
  const double s32 = sp_drift_at(c32, x), s64 = sp_drift_at(c64, x);
  const double line = a->l1_line_bytes;
  if (piece <= 32) return s32;
  if (piece <= 64) return s32 + (s64 - s32) * (piece - 32) / 32;
  if (piece < line) return s64 + (1.0 - s64) * (piece - 64) / (line - 64);
  return 1.0;
}

/* bytes of DRAM traffic from requests of `sectors` over `lines`, slowed at their piece (the
 * curves c32 and c64 at x) */
static double sp_slowed_bytes(const sp_arch *a, const sp_arch_curve *c32, const sp_arch_curve *c64,
                              double bytes, int64_t sectors, int64_t lines, double x) {
  if (bytes <= 0 || lines <= 0) return bytes;
  return bytes * sp_piece_slowdown(a, c32, c64, a->l1_sector_bytes * (double)sectors / (double)lines, x);
}

double sp_rank_dram_drift(const sp_cm_counters *per_array, int narrays, int64_t rounds,
                          const sp_arch *a) {
  if (rounds <= 1 || (!a->dram_drift_32b.n && !a->dram_drift_64b.n)) return 1.0;
  double bytes = 0, slowed = 0;
  for (int i = 0; i < narrays; i++) {
    const sp_cm_counters *c = &per_array[i];
    double rd = (double)c->dram_read_bytes, wr = sp_rank_dram_write_bytes(c);
    slowed += sp_slowed_bytes(a, &a->dram_drift_32b, &a->dram_drift_64b, rd, c->ld_sectors, c->ld_lines,
                              (double)rounds) +
              sp_slowed_bytes(a, &a->dram_drift_32b, &a->dram_drift_64b, wr, c->st_sectors, c->st_lines,
                              (double)rounds);
    bytes += rd + wr;
  }
  return bytes > 0 ? slowed / bytes : 1.0;
}

/* Whether a reference of the nest writes array a where another reads it (b[j][i] += ...) */
static bool sp_read_back(const sp_nest *nest, int a) {
  for (int r = 0; r < nest->nrefs; r++)
    for (int w = 0; w < nest->nrefs; w++)
      if (nest->refs[r].array == a && nest->refs[w].array == a && nest->refs[r].access == SP_READ &&
          nest->refs[w].access != SP_READ && nest->refs[r].offset.constant == nest->refs[w].offset.constant &&
          !memcmp(nest->refs[r].offset.coef, nest->refs[w].offset.coef, sizeof nest->refs[r].offset.coef))
        return true;
  return false;
}

static bool sp_has_wide_walks(const sp_arch *a) {
  return a->dram_walk_wide[0].n || a->dram_walk_copy_wide[0].n;
}

/* The band loop along which reference ref's elements are contiguous (its coefficient is +-the
 * element size; a sequential loop, xreuse's window k, is no thread's), the one on threadIdx.x
 * where several are; -1 where none is, or it is collapsed with others. */
static int sp_contiguous_band_loop(const sp_nest *nest, const sp_schedule *s, const sp_ref *ref) {
  int contiguous = -1;
  for (int k = 0; k < ref->nloops; k++) {
    const int l = ref->loops[k];
    if (l < s->nband && llabs(ref->offset.coef[l]) == ref->size && nest->loops[l].trip_max > 1 &&
        (contiguous < 0 || s->map[l].thread_dim == 0))
      contiguous = l;
  }
  if (contiguous >= 0 && s->collapse_count && contiguous >= s->collapse_first &&
      contiguous < s->collapse_first + s->collapse_count)
    return -1;
  return contiguous;
}

bool sp_rank_parity_stores_alone(const sp_nest *n, const sp_schedule *s, int a) {
  bool any = false;
  for (int r = 0; r < n->nrefs; r++) {
    const sp_ref *x = &n->refs[r];
    if (x->array != a || x->access != SP_WRITE) continue;
    if (x->irregular) return false;
    const int c = sp_contiguous_band_loop(n, s, x);
    if (c < 0 || s->map[c].thread_dim != 0 || s->block[0] < 32) return false;
    bool alternates = false;
    for (int g = 0; g < x->nguards; g++) {
      const sp_guard *G = &x->guards[g];
      alternates |= G->modulus >= 2 && !G->negated_group && G->expr.coef[c] % G->modulus != 0;
    }
    if (!alternates) return false;
    any = true;
  }
  return any;
}

/* sp_rank_walk_blocks for threads that run `rounds` rounds; width (NULL: blocks narrower than a
 * line only) takes, per entry of out, the bytes a block's row reads where that is a line or more
 * (then the walk is charged at sp_wide_walk_slowdown) and 0 elsewhere */
static int sp_walk_blocks_at(const sp_nest *nest, const sp_schedule *s, const sp_arch *a, int64_t rounds,
                             double *out, double *width) {
  for (int i = 0; i < 2 * nest->narrays; i++) {
    out[i] = 0;
    if (width) width[i] = 0;
  }
  if ((!a->dram_walk_32b.n && !a->dram_walk_64b.n) || rounds > 1) return 0;
  for (int r = 0; r < nest->nrefs; r++) {
    const sp_ref *ref = &nest->refs[r];
    const int contiguous = sp_contiguous_band_loop(nest, s, ref);
    double *walk = &out[2 * ref->array + (ref->access != SP_READ)];
    if (contiguous < 0 || *walk > 0) continue;
    const sp_loop_map m = s->map[contiguous];
    const double row = (double)s->block[0] * (double)ref->size;
    const bool wide = row >= a->l1_line_bytes;
    if (m.thread_dim != 0 || m.block_dim < 1 || (wide && !(width && sp_has_wide_walks(a))))
      continue;
    *walk = m.block_dim == 1 ? (double)s->grid[0] : (double)s->grid[0] * (double)s->grid[1];
    if (wide) width[walk - out] = row;
  }
  int read_back = 0;
  for (int i = 0; i < nest->narrays; i++)
    if (out[2 * i] > 1 || out[2 * i + 1] > 1) read_back |= sp_read_back(nest, i);
  return read_back;
}

int sp_rank_walk_blocks(const sp_nest *nest, const sp_schedule *s, const sp_arch *a, double *out) {
  return sp_walk_blocks_at(nest, s, a, sp_trace_thread_rounds(nest, s), out, NULL);
}

/* The slowdown of DRAM traffic walked x blocks down the rows by blocks `row` bytes wide (a line
 * or more): the curves of 128, 256 and 512-byte rows, between them in proportion to the width;
 * none beyond 512 bytes, which was not measured (validation/results/h200/
 * 2026-11-29-wide-walk-probe/: a 5-point stencil lost 1.14-1.19x walking the whole column, a
 * stream 1.05x). */
static double sp_wide_walk_slowdown(const sp_arch_curve *c, double row, double x) {
  static const double at[3] = {128, 256, 512};
  if (row > at[2]) return 1.0;
  if (row <= at[0]) return sp_drift_at(&c[0], x);
  int k = row <= at[1] ? 0 : 1;
  const double f = (row - at[k]) / (at[k + 1] - at[k]);
  return sp_drift_at(&c[k], x) + (sp_drift_at(&c[k + 1], x) - sp_drift_at(&c[k], x)) * f;
}

/* sp_rank_dram_walk with the rows' widths of wide blocks (width NULL: none) */
static double sp_dram_walk_at(const sp_cm_counters *per_array, int narrays, const double *walk,
                              const double *width, int read_back, const sp_arch *a) {
  if (!walk || (!a->dram_walk_32b.n && !a->dram_walk_64b.n)) return 1.0;
  const bool copy = !read_back && (a->dram_walk_copy_32b.n || a->dram_walk_copy_64b.n);
  const sp_arch_curve *c32 = copy ? &a->dram_walk_copy_32b : &a->dram_walk_32b;
  const sp_arch_curve *c64 = copy ? &a->dram_walk_copy_64b : &a->dram_walk_64b;
  const bool copy_wide = !read_back && a->dram_walk_copy_wide[0].n;
  const sp_arch_curve *wide = copy_wide ? a->dram_walk_copy_wide : a->dram_walk_wide;
  double bytes = 0, walked = 0;
  for (int i = 0; i < narrays; i++) {
    const sp_cm_counters *c = &per_array[i];
    const double rd = (double)c->dram_read_bytes, wr = sp_rank_dram_write_bytes(c);
    bytes += rd + wr;
    for (int st = 0; st < 2; st++) {
      const double x = walk[2 * i + st], b = st ? wr : rd, row = width ? width[2 * i + st] : 0;
      if (x <= 1) continue;
      if (row > 0) walked += wide[0].n ? b * sp_wide_walk_slowdown(wide, row, x) : b;
      else if (st) walked += sp_slowed_bytes(a, c32, c64, b, c->st_sectors, c->st_lines, x);
      else walked += sp_slowed_bytes(a, c32, c64, b, c->ld_sectors, c->ld_lines, x);
    }
  }
  return bytes > 0 ? fmax(1.0, walked / bytes) : 1.0;
}

double sp_rank_dram_walk(const sp_cm_counters *per_array, int narrays, const double *walk,
                         int read_back, const sp_arch *a) {
  return sp_dram_walk_at(per_array, narrays, walk, NULL, read_back, a);
}

int sp_rank_dram_order(const sp_nest *nest, const sp_schedule *s, const sp_cm_counters *per_array,
                       const sp_arch *a, double *factor) {
  const int64_t rounds = sp_trace_thread_rounds(nest, s);
  if (rounds > 1) {
    *factor = sp_rank_dram_drift(per_array, nest->narrays, rounds, a);
    return 0;
  }
  const size_t n = 2 * (size_t)(nest->narrays ? nest->narrays : 1);
  double *walk = calloc(2 * n, sizeof *walk), *width = walk + n;
  if (!walk) return -1;
  const int read_back = sp_walk_blocks_at(nest, s, a, rounds, walk, width);
  *factor = sp_dram_walk_at(per_array, nest->narrays, walk, width, read_back, a);
  free(walk);
  return 0;
}

/* The time the three bandwidth levels take together: the 3-norm of their times, a smooth
 * maximum. With the L2's measured bandwidth, a plain maximum let most candidates tie at the DRAM
 * bound and picked by what little was left (H200 replay: 59 of 79 nests within 10 % of the
 * best against 64 with mt4g's lower figure); the GPU's levels are not independent queues, and
 * a second busy level still costs. The norm's order was chosen on the H200's 79 nests (2: 63,
 * 3: 65, 4: 64 within 10 %; median regret 1.3, 1.3, 1.9 %) and checked on the H100's 60, which
 * did not choose it (validation/results/h200/2026-11-30-l2-levels/). */
static double sp_levels_seconds(double dram, double l2, double l1) {
  return cbrt(dram * dram * dram + l2 * l2 * l2 + l1 * l1 * l1);
}

typedef struct sp_group {
  double fraction; /* of all blocks (and of all traffic) */
  int sms;         /* SMs busy */
  int warps;       /* resident warps per busy SM */
} sp_group;

/* parts of a group's time: [0] DRAM, [1] L2, [2] L1, [3] latency (memory and floating-point
 * chains), [4] partial writes, [5] floating-point issue, [6] the chains' share of [3] */
#define SP_TIME_PARTS 7

static double sp_group_time(const sp_cm_counters *c, const sp_arch *a, const sp_group *g,
                            double loads_per_iter, double lat_cycles, double dram_drift,
                            const sp_rank_arith *ar, double *parts, sp_rank_bound *bound) {
  double clock = a->clock_boost_mhz * 1e6;
  double f = g->fraction;
  double dram_bytes = ((double)c->dram_read_bytes + sp_rank_dram_write_bytes(c)) * f;
  double l2_bytes = (double)(c->l2_read_sectors + c->l2_write_sectors) * 32.0 * f;
  double st_bytes = (double)c->st_sectors * 32.0 * f;
  double st_cycles = fmax(st_bytes / a->l1_bw_bytes_per_cycle, (double)c->st_l1_cycles * f);
  parts[0] = dram_bytes * dram_drift / (a->dram_bw_gbs * 1e9 * sp_rank_dram_share(a, g->sms));
  parts[1] = l2_bytes / (sp_rank_l2_bw_gbs(a, g->sms) * 1e9);
  /* loads that missed in warps over several rows take the data stage twice their bank cycles
   * (measured on the H100: validation/results/h100/2026-11-27-l1-miss-wavefront-probe; taken
   * for the other GPUs that cache loads in the L1 too, unmeasured there) */
  parts[2] = ((double)(c->ld_l1_cycles + c->ld_l1_miss_bank_cycles) * f + st_cycles) / (clock * g->sms);
  double loads_per_sm = (double)c->ld_requests * f / g->sms;
  parts[3] = loads_per_sm / loads_per_iter * lat_cycles / g->warps / clock; /* iterations x latency */
  /* a GPU-wide rate, not scaled to the SMs in use: single-block candidates on the H100 (one
   * SM storing) were slower by 0-0.4x what a per-SM cost would add */
  parts[4] = sp_rank_partial_write_seconds(sp_rank_partial_charged_sectors(c) * f, a);
  parts[5] = parts[6] = 0;
  if (ar) {
    double issue = 0;
    for (int k = 0; k < SP_ARCH_FP_KINDS; k++) issue += ar->warp_ops[k] * a->fp_op[k].issue_cycles;
    parts[5] = issue * f / g->sms / clock;
    /* a warp's iteration waits for its loads, then for its arithmetic: the two add */
    parts[6] = ar->chain_warp_cycles * f / g->sms / g->warps / clock;
    parts[3] += parts[6];
  }
  static const sp_rank_bound part_bound[5] = {SP_BOUND_DRAM, SP_BOUND_L2, SP_BOUND_L1,
                                               SP_BOUND_LATENCY, SP_BOUND_PARTIAL};
  int worst = 0;
  for (int i = 1; i < 5; i++)
    if (parts[i] > parts[worst]) worst = i;
  *bound = part_bound[worst];
  if (worst == 3 && parts[6] > parts[3] - parts[6]) *bound = SP_BOUND_ARITH_LATENCY;
  /* The memory system's levels (sp_levels_seconds) plus the warps' waiting, not the larger of
   * the two: an iteration's loads are issued only after the previous iteration's have returned,
   * so the latency chain is not hidden behind the transfers. Chosen on the H100 measurements of 60
   * nests among parameter-free forms (max, sum, 2-norm): the sum ordered them best (median
   * Spearman 0.74 -> 0.84, first choice within 10 % of the measured best in 30 nests instead of
   * 17) and its times are still below the measured ones (median measured/predicted 1.86 ->
   * 1.32), so it does not overstate the latency. The partly written sectors add too: on the
   * H100 they lengthened store-bound kernels by their count times a fixed cost (arch.h). */
  double memory = sp_levels_seconds(parts[0], parts[1], parts[2]) + parts[3] + parts[4];
  /* The SMs issue the floating-point instructions while the memory system works; a kernel
   * that issues more than it waits is bound by the issue (the H200's n-body loop ran at its
   * operations' throughput with 32 warps an SM: validation/results/h200/2026-11-29-fp-op-probe) */
  if (parts[5] > memory) {
    *bound = SP_BOUND_ARITH;
    return parts[5];
  }
  return memory;
}

/* A block's partial results go to one address, whose atomics the L2 performs one after another:
 * 1.80 ns each on the H100 whatever the block size (validation/probes/atomic_combine.cu). Blocks
 * whose threads do not fill whole warps combine per thread (the harness cannot shuffle). The
 * kernel lasts at least that long; the atomics of early blocks overlap the work of later ones, so
 * the two are not added. */
static double sp_combine_seconds(const sp_rank_combine *comb, const sp_schedule *s, int64_t blocks,
                                 const sp_arch *a) {
  if (!comb || a->same_address_atomic_ns <= 0) return 0;
  int threads = s->block[0] * s->block[1] * s->block[2];
  double per_block = threads % 32 == 0 ? 1 : threads;
  double ops = comb->native + 2.0 * comb->cas;
  return (double)blocks * per_block * ops * a->same_address_atomic_ns * 1e-9;
}

/* Blocks without iterations (a fixed gang count larger than the loops need; they come after the
 * working blocks) only start and stop, but each is dealt to a slot and holds it a while: the
 * distributor deals one every block_dispatch_ns GPU-wide, and an empty block holds its slot
 * empty_block_ns. While the work runs they pass through the slots the working blocks leave free,
 * at most one per dispatch; those left pass after it, as fast as the dispatch and all slots
 * allow. On the H100, 128-thread blocks (16 slots an SM, 1,024 working) hid 32,768 empty
 * blocks, and 1024-thread blocks (2 an SM, none free) took 12 us more for 15,872
 * (validation/probes/empty_block_probe.cu). work_s: the working blocks' time. */
static double sp_empty_seconds(int64_t launched, int64_t working, int active, double work_s,
                               const sp_arch *a) {
  if (launched <= working || a->block_dispatch_ns <= 0 || a->empty_block_ns <= 0) return 0;
  double empty = (double)(launched - working), slots = (double)active * a->sm_count;
  double dispatch_rate = 1.0 / a->block_dispatch_ns; /* blocks per ns */
  double free_slots = fmax(0.0, slots - (double)working);
  double during = fmin(dispatch_rate, free_slots / a->empty_block_ns) * work_s * 1e9;
  double left = empty - fmin(empty, during);
  return left / fmin(dispatch_rate, slots / a->empty_block_ns) * 1e-9;
}

int sp_rank_uneven_of(const sp_nest *nest, const sp_schedule *s, const sp_arch *arch,
                      int active_blocks_per_sm, sp_rank_uneven *u) {
  memset(u, 0, sizeof *u);
  const int S = arch->sm_count;
  const int64_t blocks = s->grid[0] * s->grid[1] * s->grid[2];
  const int64_t wave = (int64_t)active_blocks_per_sm * S;
  /* A rectangular nest's blocks differ only by a partial edge block (fewer lanes, each warp's
   * chain as long) or one grid-stride round, and charging those reordered near-ties against
   * the GPUs. Without the charge, replayed picks that were the measured best went 37 -> 43 of
   * 151 nests on the H200 and 167 -> 188 summed over the H100's runs. A triangular nest's
   * blocks differ by their bounds (16:1 in triangular.c:12's capped grid). */
  if (S < 1 || active_blocks_per_sm < 1 || blocks < 1 || blocks > SP_UNEVEN_MAX_BLOCKS ||
      sp_nest_rectangular(nest))
    return 0;
  /* more blocks with iterations than a wave holds (an upper bound from the trips): no need to
   * count them one by one */
  if (sp_trace_working_blocks(nest, s) > wave) return 0;
  double *work = malloc(sizeof *work * (size_t)blocks);
  if (!work) return -1;
  /* the enumeration of a triangular nest's outer band iterations, bounded: a few ms */
  int rc = sp_trace_block_work(nest, s, SP_UNEVEN_MAX_STEPS, work);
  /* blocks are dealt in order: every block with work must be in the first wave (a fixed gang
   * count larger than the loops need puts its working blocks first along x only) */
  for (int64_t b = wave; rc == 0 && b < blocks; b++) rc = work[b] > 0;
  sp_block_placement pl;
  if (rc != 0 || sp_trace_deal_blocks(arch, blocks < wave ? blocks : wave, active_blocks_per_sm,
                                      SP_REFILL_FIFO, 0, &pl) != 0) {
    free(work);
    return rc < 0 ? -1 : 0;
  }
  u->sm_blocks = calloc((size_t)S, sizeof *u->sm_blocks);
  u->sm_work = calloc((size_t)S, sizeof *u->sm_work);
  u->sm_max = calloc((size_t)S, sizeof *u->sm_max);
  rc = u->sm_blocks && u->sm_work && u->sm_max ? 0 : -1;
  for (int i = 0; rc == 0 && i < S; i++)
    for (int64_t k = pl.first[i]; k < pl.first[i + 1]; k++) {
      double w = work[pl.block[k]];
      if (w <= 0) continue; /* a block without work only starts and stops (sp_empty_seconds) */
      u->sm_blocks[i]++;
      u->sm_work[i] += w;
      u->sm_max[i] = fmax(u->sm_max[i], w);
    }
  sp_trace_placement_free(&pl);
  free(work);
  if (rc != 0) {
    sp_rank_uneven_free(u);
    return -1;
  }
  u->nsm = S;
  return 0;
}

void sp_rank_uneven_free(sp_rank_uneven *u) {
  if (!u) return;
  free(u->sm_blocks);
  free(u->sm_work);
  free(u->sm_max);
  memset(u, 0, sizeof *u);
}

/* The slowest SM's time of a one-wave launch, and that of the same launch with every block
 * doing the mean block's work: parts as sp_group_time's (the one group). */
static double sp_uneven_seconds(const sp_rank_uneven *u, const double *parts) {
  double total = 0;
  int busy = 0, nblocks = 0;
  for (int i = 0; i < u->nsm; i++) {
    total += u->sm_work[i];
    busy += u->sm_blocks[i] > 0;
    nblocks += u->sm_blocks[i];
  }
  if (total <= 0 || busy < 1) return 0;
  const double sm_mean = total / busy, block_mean = total / nblocks;
  double worst = 0, worst_equal = 0;
  for (int i = 0; i < u->nsm; i++) {
    if (!u->sm_blocks[i]) continue;
    double t = sp_levels_seconds(parts[0], parts[1], parts[2] * u->sm_work[i] / sm_mean) +
               parts[3] * u->sm_max[i] / block_mean;
    double te =
        sp_levels_seconds(parts[0], parts[1], parts[2] * u->sm_blocks[i] * block_mean / sm_mean) +
        parts[3];
    worst = fmax(worst, t);
    worst_equal = fmax(worst_equal, te);
  }
  return fmax(0.0, worst - worst_equal);
}

void sp_rank_predict_time(const sp_cm_counters *c, const sp_trace_stats *st,
                          const sp_schedule *s, const sp_arch *a, double loads_per_iteration,
                          const sp_rank_combine *comb, sp_rank_time *out) {
  sp_rank_predict_time_uneven(c, st, s, a, loads_per_iteration, comb, NULL, NULL, 1.0, out);
}

void sp_rank_predict_time_uneven(const sp_cm_counters *c, const sp_trace_stats *st,
                                 const sp_schedule *s, const sp_arch *a,
                                 double loads_per_iteration, const sp_rank_combine *comb,
                                 const sp_rank_arith *arith, const sp_rank_uneven *u,
                                 double dram_drift, sp_rank_time *out) {
  memset(out, 0, sizeof *out);
  out->dram_drift = dram_drift;
  int threads = s->block[0] * s->block[1] * s->block[2];
  int warps_per_block = (threads + 31) / 32;
  /* Warps without iterations only start and stop, and hide no latency (a 256-lane block over a
   * 64-iteration loop keeps 2 of its 8 warps busy; the H100 ran avgpool's candidates of that
   * shape at 30 % achieved occupancy and 1.5x the time of its 32x4 blocks). Residency, set by
   * the whole block, stays as it is. */
  if (st->warps_working_per_block > 0 && st->warps_working_per_block < warps_per_block)
    warps_per_block = st->warps_working_per_block;
  int64_t launched = st->blocks > 0 ? st->blocks : 1;
  /* Blocks without iterations only start and stop: the work, its waves and its parallelism are
   * the working blocks' (GCC's 16,896 gangs over jacobi's 4,094 rows: 128 blocks work, one per
   * SM, where counting all of them put two on every SM). Every block still combines. */
  int64_t blocks = st->blocks_working > 0 && st->blocks_working < launched ? st->blocks_working
                                                                           : launched;
  int active = st->active_blocks_per_sm > 0 ? st->active_blocks_per_sm : 1;
  /* A thread's iteration waits for its slowest load: the loads of one iteration are issued
   * together (k in flight), the next iteration's only after them (its loads cannot move above
   * this iteration's stores without alias information). So the latency of an iteration is a
   * miss's unless all k of its loads hit the L1 (probability h1^k), not the average over
   * sectors. */
  double k = fmax(1.0, loads_per_iteration);
  double h1 = c->ld_sectors ? (double)(c->ld_l1_hit_sectors - c->ld_l1_hit_pending_sectors) /
                                 (double)c->ld_sectors
                            : 0;
  double h2 = c->l2_read_sectors ? (double)c->l2_read_hit_sectors / (double)c->l2_read_sectors : 0;
  double l2_lat = a->l2_far_hit_latency_cycles > 0
                      ? (a->l2_hit_latency_cycles + a->l2_far_hit_latency_cycles) / 2
                      : a->l2_hit_latency_cycles;
  double miss_lat = h2 * l2_lat + (1 - h2) * a->dram_latency_cycles;
  double all_hit = pow(h1, k);
  double lat = all_hit * a->l1_hit_latency_cycles + (1 - all_hit) * miss_lat;
  out->avg_latency_cycles = lat;
  /* An iteration waits for its loads and then for its own instructions: on the H100 a warp's
   * rolled loop of one L1-hit load took 75 cycles an iteration where the L1 latency is 38.5
   * (iteration_probe.cu, arch loop_iteration_cycles); the loads of k unrolled iterations issued
   * together count as one iteration. */
  const double iteration_cycles = lat + a->loop_iteration_cycles;

  /* full waves run on every SM with the resident blocks of Eq. 7.2; the tail wave on fewer */
  int64_t per_wave = (int64_t)active * a->sm_count;
  int64_t full_waves = blocks / per_wave, tail = blocks % per_wave;
  sp_group groups[2];
  int ng = 0;
  if (full_waves > 0)
    groups[ng++] = (sp_group){(double)(full_waves * per_wave) / (double)blocks, a->sm_count,
                              active * warps_per_block};
  if (tail > 0) {
    int sms = tail < a->sm_count ? (int)tail : a->sm_count;
    int per_sm = (int)((tail + sms - 1) / sms);
    groups[ng++] = (sp_group){(double)tail / (double)blocks, sms, per_sm * warps_per_block};
  }
  out->sms_used = blocks < a->sm_count ? (int)blocks : a->sm_count;
  out->active_warps_per_sm = (blocks >= per_wave ? active : (int)((blocks + out->sms_used - 1) /
                                                                  out->sms_used)) *
                             warps_per_block;
  double total = 0, worst_group = -1;
  for (int g = 0; g < ng; g++) {
    double parts[SP_TIME_PARTS];
    sp_rank_bound b;
    double t = sp_group_time(c, a, &groups[g], k, iteration_cycles, dram_drift, arith, parts, &b);
    out->dram_s += parts[0];
    out->l2_s += parts[1];
    out->l1_s += parts[2];
    out->latency_s += parts[3];
    out->partial_s += parts[4];
    out->arith_s += parts[5];
    out->arith_chain_s += parts[6];
    if (t > worst_group) {
      worst_group = t;
      out->bound = b;
    }
    total += t;
    if (u && u->nsm > 0 && blocks <= per_wave) out->uneven_s = sp_uneven_seconds(u, parts);
  }
  total += out->uneven_s;
  out->combine_s = sp_combine_seconds(comb, s, launched, a);
  if (out->combine_s > total) {
    total = out->combine_s;
    out->bound = SP_BOUND_COMBINE;
  }
  out->empty_s = sp_empty_seconds(launched, blocks, active, total, a);
  if (out->empty_s > total) out->bound = SP_BOUND_EMPTY;
  total += out->empty_s;
  /* Working blocks are dealt no faster than empty ones: one every block_dispatch_ns GPU-wide.
   * Grids of many short blocks run at that rate on the H200 whatever their bytes: vla_param.c:17
   * as 65,536 blocks of 128 threads (one element each) in 41.8 us, collapse4.c:16 as 131,072 in
   * 85.5, 0.59-0.63 ns a block past a launch's 3.3 us (validation/results/h200/
   * 2026-11-30-rest-run/, validation/results/h100/2026-11-27-drift-run13/h200/) */
  const double dispatch_s = (double)launched * a->block_dispatch_ns * 1e-9;
  if (dispatch_s > total) {
    total = dispatch_s;
    if (out->bound != SP_BOUND_EMPTY) out->bound = SP_BOUND_DISPATCH; /* else most are empty */
  }
  out->launch_s = SP_LAUNCH_SECONDS;
  out->total_s = total + SP_LAUNCH_SECONDS;
}

sp_rank_combine sp_rank_combine_of(const sp_nest *nest) {
  sp_rank_combine r = {0, 0};
  for (int i = 0; nest->codegen && i < nest->codegen->nvars; i++) {
    const sp_cg_var *v = &nest->codegen->vars[i];
    if (v->kind != SP_CG_REDUCTION) continue;
    if (sp_cg_atomic_add_native(v)) r.native++;
    else r.cas++;
  }
  return r;
}

_Static_assert(SP_ARCH_FP_KINDS == SP_FP_KINDS, "arch fp_op figures follow sp_fp_kind");

/* Executions of loop l's body in the whole run: its and its enclosing loops' trip counts,
 * averaged for triangular loops, multiplied outermost first; 1 for l = -1 (no loop). */
static double sp_loop_executions(const sp_nest *nest, int l) {
  int chain[SP_MAX_LOOPS], n = 0;
  for (int k = l; k >= 0 && n < SP_MAX_LOOPS; k = nest->loops[k].parent) chain[n++] = k;
  double it = 1;
  while (n > 0) {
    const sp_loop *L = &nest->loops[chain[--n]];
    it *= ((double)L->trip_min + (double)L->trip_max) / 2;
  }
  return it;
}

/* A reference's loops are its innermost loop and that loop's enclosing ones. */
double sp_rank_ref_executions(const sp_nest *n, int r) {
  const sp_ref *ref = &n->refs[r];
  return sp_loop_executions(n, ref->nloops > 0 ? ref->loops[ref->nloops - 1] : -1) *
         (1 - ref->guard_excluded);
}

sp_rank_arith sp_rank_arith_of(const sp_nest *nest, const sp_cm_counters *c, const sp_arch *a) {
  sp_rank_arith r;
  memset(&r, 0, sizeof r);
  if (!sp_arch_models_fp(a)) return r;
  /* warp instructions per thread execution, as the references' requests show it */
  double lanes = 0;
  for (int i = 0; i < nest->nrefs; i++) lanes += sp_rank_ref_executions(nest, i);
  double requests = (double)(c->ld_requests + c->st_requests);
  double per_lane = lanes > 0 && requests > 0 ? requests / lanes : 1.0 / 32;
  for (int l = 0; l < nest->nloops; l++) {
    const sp_fp_work *w = &nest->loops[l].fp;
    double warp_execs = sp_loop_executions(nest, l) * per_lane, chain = 0;
    for (int k = 0; k < SP_ARCH_FP_KINDS; k++) {
      r.warp_ops[k] += w->ops[k] * warp_execs;
      chain += w->chain[k] * a->fp_op[k].latency_cycles;
    }
    r.chain_warp_cycles += chain * warp_execs;
  }
  return r;
}
