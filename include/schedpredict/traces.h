/* Traces: the schedule space of a nest, and the stream of warp memory instructions a candidate
 * (schedule + launch configuration) issues on a GPU, in the order the model assumes the GPU
 * executes them (dissertation 7.3.2-7.3.3):
 *   - thread blocks are dealt to SMs round-robin (block b -> SM b mod #SMs); an SM holds at most
 *     `active blocks per SM` (Eq. 7.2) resident blocks, and when one finishes the SM's next block
 *     takes its slot (waves, Eq. 7.1);
 *   - the resident warps of an SM are interleaved instruction by instruction, round-robin;
 *   - the SMs advance in lockstep, one warp instruction per SM per step, SM 0 first, so the
 *     sink sees SM 0's instruction, SM 1's, ..., then SM 0's next (Fig. 7.7);
 *   - each warp issues its references in program order; sequential loops inside the body are
 *     unrolled in order; lanes with no iteration (edges, shorter inner loops) are masked.
 * The stream is generated on the fly and handed to a sink; it is never stored. */
#ifndef SCHEDPREDICT_TRACES_H
#define SCHEDPREDICT_TRACES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schedpredict/arch.h"
#include "schedpredict/ir.h"

#define SP_WARP 32

/* How one band loop is distributed. A loop on thread dim d and block dim e ("both") runs
 *   i = lower + step * (threadIdx.d + blockIdx.e * blockDim.d + t * blockDim.d * gridDim.e)
 * for t = 0, 1, ... while i stays within its bounds (a grid-stride loop when the grid does not
 * cover the iterations). Thread only: i = lower + step * (threadIdx.d + t * blockDim.d).
 * Block only: i = lower + step * (blockIdx.e + t * gridDim.e). Neither: every thread runs the
 * whole loop sequentially. */
typedef struct sp_loop_map {
  int thread_dim; /* 0..2 for x, y, z, or -1 */
  int block_dim;  /* 0..2, or -1 */
} sp_loop_map;

typedef struct sp_schedule {
  /* map[k] for each band loop k of the nest (loops 0..nband-1); loops after the band, and band
   * loops that are not parallel, run sequentially in every thread (thread_dim = block_dim = -1) */
  int nband;
  sp_loop_map map[SP_MAX_LOOPS];
  /* collapse: band loops collapse_first .. collapse_first+collapse_count-1 (count >= 2) are
   * fused into one index, outermost slowest, and distributed by map[collapse_first]; 0 = none */
  int collapse_first, collapse_count;
  int block[3];    /* blockDim.x, .y, .z (product <= the arch's max threads per block) */
  int64_t grid[3]; /* gridDim.x, .y, .z */
  /* 32-bit registers a thread of the compiled kernel holds; 0 = unknown, no register limit on
   * the blocks an SM runs at once (sp_schedule_blocks_per_sm) */
  int registers;
  char name[48];   /* pattern name: "2_1", "2_2", "2_3", "3_1", ... or "default" */
  char openacc[192]; /* the clauses as a user writes them, one loop after another, e.g.
                        "i: gang  j: vector(128)" */
  bool compiler_default; /* the baseline of the chosen compiler (see sp_space_options) */
  /* false when standard OpenACC (gang = blockIdx.x, worker = threadIdx.y, vector = threadIdx.x,
   * gang outside worker outside vector) cannot state the mapping; `openacc` then starts with
   * "not expressible:" followed by the nearest clause form (gang(dim:2), tz(n), ...) */
  bool openacc_expressible;
} sp_schedule;

/* An irregular reference (x[col[j]]) has its lanes on distinct lines of this many bytes of its
 * array, each at a line's start (trace.c, irregular_addrs). */
#define SP_TRACE_IRREGULAR_LINE_BYTES 128

/* One warp instruction: one reference executed by the active lanes of one warp. */
typedef struct sp_warp_instr {
  int sm;
  int64_t block;       /* linear block index (x fastest) */
  int warp;            /* warp index within the block */
  int ref;             /* index into nest->refs */
  int array;           /* nest->refs[ref].array */
  bool write;
  uint32_t access_bytes;
  uint32_t active;     /* lane mask */
  /* 0, or an id such that every instruction of the trace with the same shape and active mask
   * has the same lane offsets addr[l] - addr[first active lane] (sp_cm_coalesce_shaped) */
  uint64_t shape;
  uint64_t addr[SP_WARP]; /* byte addresses (base of the array + offset); valid where active */
} sp_warp_instr;

/* The lanes set in an active mask. (Not __builtin_popcount, a libgcc call without -mpopcnt,
 * made once a warp instruction by the trace and the ranking's sink.) */
static inline int sp_lanes_in(uint32_t mask)
{
  mask = mask - ((mask >> 1) & 0x55555555u);
  mask = (mask & 0x33333333u) + ((mask >> 2) & 0x33333333u);
  mask = (mask + (mask >> 4)) & 0x0F0F0F0Fu;
  return (int)((mask * 0x01010101u) >> 24);
}

/* Return non-zero to stop the trace (the value is returned by sp_trace_run). */
typedef int (*sp_trace_sink)(void *ctx, const sp_warp_instr *wi);

typedef struct sp_trace_options {
  int active_blocks_per_sm; /* 0: from the arch (Eq. 7.2) for the block size */
  /* Sampling (0 = everything): simulate only SMs 0..sample_sms-1 and the first sample_waves
   * waves of blocks; the caller extrapolates. */
  int sample_sms;
  int64_t sample_waves;
  /* with sample_sms: simulate SMs sample_sm_first .. sample_sm_first+sample_sms-1 instead
   * (their blocks; the sink still sees them as SMs 0..sample_sms-1) */
  int sample_sm_first;
  /* each simulated SM starts at its sample_skip_blocks-th block (blocks s, s + S, ... from
   * there on; sample_waves then counts from there): a later wave on its own, e.g. an SM's
   * last wave that holds fewer blocks */
  int64_t sample_skip_blocks;
  /* every block starts the grid-stride loop of the loop on the grid's one dimension at its
   * sample_skip_rounds-th round (its iterations from (b + m G) B on): the last round on its own,
   * which fewer blocks run than the others. On the dimension sp_trace_skip_dim names (a
   * collapse group's fused index too); where it names none, sp_trace_run fails. */
  int64_t sample_skip_rounds;
  /* which blocks each SM runs, in the order it starts them (NULL: block b on SM b mod S,
   * Eq. 7.1); sample_skip_blocks and sample_waves count in these lists */
  const struct sp_block_placement *placement;
} sp_trace_options;

/* SM i runs blocks block[first[i]] .. block[first[i + 1] - 1], starting each when a slot frees
 * (at most the arch's active blocks at once). nsm is the arch's SM count; every block of the
 * grid appears once. */
typedef struct sp_block_placement {
  int nsm;
  const int64_t *first; /* nsm + 1 offsets into block */
  const int64_t *block; /* linear block indices (x fastest) */
} sp_block_placement;

/* How the blocks after the first wave find their SM (sp_trace_deal_blocks). */
typedef enum sp_refill {
  /* block b takes the slot block b - W leaves (W: the first wave): an SM's blocks finish in
   * the order they started. With the cycle 0, 1, ..., S-1 this is block b on SM b mod S. */
  SP_REFILL_FIFO,
  /* each later round of S x per_sm blocks goes to the SMs' slots in a seeded random order:
   * every SM runs per_sm blocks of the round, which ones is left to chance. The H100 sends
   * 0.5-0.9 % of later blocks to the SM of block b - W, and random refills reproduce its L1
   * hits where FIFO does not (validation/results/h100/2026-11-23-placement-replay/) */
  SP_REFILL_RANDOM
} sp_refill;

#define SP_DEAL_MAX_BLOCKS ((int64_t)1 << 24)

/* The placement of nblocks blocks on the arch's SMs, each holding per_sm at once: the first
 * wave (the first W = min(nblocks, S x per_sm) blocks) follows the arch's block_dealing_cycle
 * from its start, skipping SMs that hold W / S blocks, then deals the rest of the wave one more
 * an SM from the cycle's start (no cycle: 0, 1, ..., S-1, Eq. 7.1's round-robin); the later
 * blocks go by `refill`, in block order. Every block appears once. 0, or -1 (bad
 * arguments, more than SP_DEAL_MAX_BLOCKS blocks, out of memory). Free with
 * sp_trace_placement_free. */
int sp_trace_deal_blocks(const sp_arch *arch, int64_t nblocks, int per_sm, sp_refill refill,
                         uint64_t seed, sp_block_placement *out);
void sp_trace_placement_free(sp_block_placement *p);
/* A placement from n (block, SM) pairs in the order the blocks start: each SM lists its blocks
 * in that order (block NULL: the blocks are 0 .. n-1). The caller checks that each block comes
 * once and each SM is below nsm. 0, or -1 (out of memory). */
int sp_trace_placement_build(int nsm, int64_t n, const int *sm, const int64_t *block,
                             sp_block_placement *out);

/* Band loop k's trip (trip_max; 0 where unknown), a collapse group's product where k is its
 * first loop. */
int64_t sp_trace_band_trip(const sp_nest *nest, const sp_schedule *s, int k);
/* Of a loop's normalized iterations n in [0, trip), those with n mod stride in [first, first +
 * per): a block's share of a grid-stride loop (stride = per x grid extent, first = per x its
 * coordinate). */
int64_t sp_trace_stride_share(int64_t trip, int64_t stride, int64_t first, int64_t per);

/* The grid dimension whose loop sample_skip_rounds skips: the one of extent > 1 (x where none
 * is); in a grid of more than one, the one whose loop takes more than one round of the grid
 * (its trip, trip_max, over the threads along it); -1 where no one dimension is that one or a
 * dimension runs two loops. */
int sp_trace_skip_dim(const sp_nest *nest, const sp_schedule *s);

typedef struct sp_trace_stats {
  int64_t blocks, blocks_simulated;
  /* blocks whose threads have band iterations at all (sp_trace_working_blocks): a grid larger
   * than its loops need (a fixed gang count) has blocks that only start and stop */
  int64_t blocks_working;
  /* warps of a block with band iterations (sp_trace_working_warps); 0 where not computed */
  int warps_working_per_block;
  int64_t waves;      /* Eq. 7.1, rounded up */
  int active_blocks_per_sm;
  int64_t warp_instructions;
  int64_t iterations; /* band iterations executed (each exactly once, property-tested) */
} sp_trace_stats;

/* Blocks of schedule s that get at least one band iteration, from the trip counts (trip_max,
 * so an upper bound where bounds vary): along each grid dimension, the blocks the loop mapped to
 * it needs (its trip over the threads it spreads over within a block), at most the grid. */
int64_t sp_trace_working_blocks(const sp_nest *nest, const sp_schedule *s);

/* Warps of a block with at least one lane that gets band iterations: along each thread
 * dimension the threads the loop mapped to it can use (its trip, trip_max; a collapse group's
 * product), at most the block's size there. A block wider than its loop (256 lanes over 64
 * iterations) has warps that only start and stop, and they hide no latency. From the first
 * block, which has the most work. At least 1. */
int sp_trace_working_warps(const sp_nest *nest, const sp_schedule *s);

/* The threads and blocks band loop k is spread over (its block's threads along it times the
 * grid's blocks; 1 on no hardware dimension), and the rounds it runs: its trip (trip_max; a
 * collapse group's product) over them, so a loop on no hardware dimension runs its whole trip;
 * 1 where the trip is unknown or k is collapsed away. */
int64_t sp_trace_loop_spread(const sp_schedule *s, int k);
int64_t sp_trace_loop_rounds(const sp_nest *nest, const sp_schedule *s, int k);

/* The band iterations a thread runs one after another, at most: over the band loops, the
 * rounds of each (its trip, trip_max, over the threads and blocks it is spread over; a loop on
 * no hardware dimension runs whole). 1 where every band loop covers its iterations in one
 * round. */
int64_t sp_trace_thread_rounds(const sp_nest *nest, const sp_schedule *s);

/* The block dimensions (bit d) whose loop also runs on threadIdx.x and does not share out
 * equally among the blocks along d: a partial share there also changes how a warp's accesses
 * fill sectors (a last block of 30 of 32 lanes: 4 sectors where the others take 5). */
unsigned sp_trace_lane_uneven_dims(const sp_nest *nest, const sp_schedule *s);

/* For each of blocks[0..n): its coordinates along the grid's dimensions (at[j][d]), its band
 * iterations along each (share[j][d]; 1 along one that no loop is mapped to), whose product is
 * the block's iterations as sp_trace_sm_work counts them, and the grid-stride rounds they take
 * (rounds[j][d]: of the loop's threads along d, 1 without a loop). -1 where a mapped loop's
 * count is unknown or varies. */
int sp_trace_block_shares(const sp_nest *nest, const sp_schedule *s, const int64_t *blocks, int n,
                          int64_t (*at)[3], int64_t (*share)[3], int64_t (*rounds)[3]);

/* Each SM's band iterations, up to a factor that all blocks share: SM i runs blocks i, i + nsm,
 * i + 2 nsm, ... of the grid, and a block's iterations are the product of its shares of the
 * loops mapped to the grid's dimensions (a partial last block, blocks with nothing to do, a
 * grid-stride loop whose last stride is partial). work: nsm entries. -1 where any loop's bounds
 * vary (a triangular nest's blocks differ in work the shares do not show) or the grid is too
 * large to count (over 2^26 blocks). */
int sp_trace_sm_work(const sp_nest *nest, const sp_schedule *s, int nsm, double *work);

/* The band iterations of every block of schedule s (work[b], b the linear block index, x
 * fastest; grid[0] x grid[1] x grid[2] entries), counted without the trace. A band loop's
 * normalized iterations n (index = lower + step n) that a block runs are those with
 * n mod (per x grid) in [per c, per c + per), per: the block's threads on the loop's thread
 * dimension (1: none), c: the block's coordinate on its grid dimension (0: none), so that a
 * triangular nest's blocks are counted exactly: the outer band loops' iterations enumerated, the
 * innermost in closed form (a rectangular nest's blocks: the shares' product). Where the
 * enumeration would take more than max_steps outer iterations in all, the outermost loop's are
 * sampled, every k-th of a block's, and scaled to all of them (an estimate). Returns 0; 1
 * where the band's iterations are not the work (a loop outside the band whose trip varies) or
 * cannot be counted so (a collapse group in a nest that is not rectangular, two band loops on
 * one hardware dimension); -1 on bad arguments. */
int sp_trace_block_work(const sp_nest *nest, const sp_schedule *s, int64_t max_steps,
                        double *work);

/* Base byte address of every array: 256-byte aligned as cudaMalloc gives, each array starting
 * on a fresh 2 MiB boundary after the previous one (cudaMalloc's large-allocation granularity).
 * base must have nest->narrays entries. */
void sp_trace_array_bases(const sp_nest *nest, uint64_t *base);

/* Checks the schedule against the nest and the arch; on error writes a message and returns -1. */
int sp_schedule_check(const sp_nest *nest, const sp_schedule *s, const sp_arch *arch, char *err,
                      size_t errlen);

/* Band loop k is fused into the collapse group that starts before it (it has no loop of its own
 * and no mapping: the group's first loop carries both). */
bool sp_schedule_collapsed_away(const sp_schedule *s, int k);

/* Two band loops on one thread dimension or one grid dimension. */
bool sp_schedule_dims_shared(const sp_schedule *s);

/* Same mapping, launch configuration and registers (names and OpenACC text aside). */
bool sp_schedule_equal(const sp_schedule *a, const sp_schedule *b);

/* The same trace: the same launch configuration and registers, and mappings that differ at most
 * by hardware dimensions of extent 1 (a loop on threadIdx.x + blockIdx.y under gridDim.y = 1
 * runs as on threadIdx.x alone). The space holds one candidate of each. */
bool sp_schedule_same_trace(const sp_schedule *a, const sp_schedule *b);
/* The blocks of s an SM holds at once: Eq. 7.2 with s's registers where known (0: the block
 * cannot run on the arch). */
int sp_schedule_blocks_per_sm(const sp_arch *arch, const sp_schedule *s);

/* Generates the candidate's warp instructions into sink. Returns 0, the sink's non-zero value,
 * or -1 on an invalid schedule or allocation failure. */
int sp_trace_run(const sp_nest *nest, const sp_schedule *s, const sp_arch *arch,
                 const sp_trace_options *opt, sp_trace_sink sink, void *ctx,
                 sp_trace_stats *stats);

/* Every warp instruction of reference `ref` over the whole run of schedule s, without generating
 * the trace: the sink gets one representative instruction a class and how many instructions
 * the class holds. A representative has its class's warp index within the block, lane mask,
 * direction and size, and addresses that differ from each real one's by one multiple of
 * SP_TRACE_CLASS_ALIGN for all lanes, so it coalesces alike wherever sectors and lines divide
 * that (its sm and block are 0). Order and caching are not represented. Returns 0 when the sink
 * saw every instruction; 1 when the reference cannot be counted so (a guard, bounds that vary
 * with other indices, a collapse group, two loops on one hardware dimension, a count past
 * int64), and then what the sink saw is to be discarded; -1 on bad arguments or allocation
 * failure; or the sink's non-zero value. Cost: at most 2^(mapped loops) x warps per block x
 * SP_TRACE_CLASS_ALIGN classes, whatever the run's size (traces/classes.c says how). */
#define SP_TRACE_CLASS_ALIGN 128
typedef int (*sp_trace_class_sink)(void *ctx, const sp_warp_instr *rep, int64_t count);
int sp_trace_ref_classes(const sp_nest *nest, const sp_schedule *s, int ref, sp_trace_class_sink sink,
                         void *ctx);

/* The schedule space of a nest: every legal assignment of its parallel band loops (up to 3, after
 * collapse) to thread and block dimensions, times launch configurations. */
typedef struct sp_space_options {
  /* block shapes to try ({x,y,z}); NULL = the default list (32..1024 threads, 1-D and 2-D/3-D) */
  const int (*blocks)[3];
  int nblocks;
  /* capped grid sizes in multiples of the SM count to try besides covering grids; NULL =
   * default {1, 2, 4, 8} x #SMs; a covering grid (one iteration per thread) is always tried */
  const int64_t *gang_caps;
  int ngang_caps;
  bool allow_interchange; /* let vector sit on any parallel loop (default true) */
  bool gang_caps_absolute; /* gang_caps are numbers of blocks (--gangs), not SM multiples */
  /* the baseline ("compiler default") is GCC's own schedule of the nest as written (--compiler
   * gcc: the user's clauses honored, the rest partitioned and sized as GCC 12 and its libgomp
   * do), not the nvc-style one (outer loop gang with a covering grid, innermost vector(128)) */
  bool gcc_default;
  /* every candidate's sp_schedule.registers (--registers); 0 = unknown */
  int registers;
} sp_space_options;

typedef struct sp_space {
  int n, cap;
  sp_schedule *items;
  int default_index; /* the compiler-default candidate: default_gcc or default_nvc */
  int default_gcc, default_nvc; /* both baselines (they may be the same candidate) */
} sp_space;

int sp_space_build(const sp_nest *nest, const sp_arch *arch, const sp_space_options *opt,
                   sp_space *out, char *err, size_t errlen);
void sp_space_free(sp_space *s);

#endif
