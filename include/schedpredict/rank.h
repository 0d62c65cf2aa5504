/* Ranking: every candidate of a nest's schedule space through the trace generator and the memory
 * model, then the dissertation's cost (Eq. 7.3-7.7) and a time model that also accounts for
 * parallelism; candidates sorted by predicted time. Prefix sp_rank_. */
#ifndef SCHEDPREDICT_RANK_H
#define SCHEDPREDICT_RANK_H

#include <stdbool.h>
#include <stdio.h>

#include "schedpredict/arch.h"
#include "schedpredict/ir.h"
#include "schedpredict/memsys.h"
#include "schedpredict/traces.h"

typedef enum sp_rank_bound {
  SP_BOUND_DRAM,
  SP_BOUND_L2,
  SP_BOUND_L1,
  SP_BOUND_LATENCY,
  SP_BOUND_COMBINE, /* the reductions' atomics on one address */
  SP_BOUND_PARTIAL, /* the L2's merging of store sectors written in part */
  SP_BOUND_EMPTY,   /* dealing blocks that have no iterations */
  SP_BOUND_ARITH,   /* issuing the floating-point instructions */
  SP_BOUND_ARITH_LATENCY, /* warps waiting on chains of dependent floating-point operations */
  SP_BOUND_DISPATCH, /* the distributor dealing the blocks, one every block_dispatch_ns */
} sp_rank_bound;

/* A candidate's floating-point work as the time model charges it (sp_rank_arith_of): its warp
 * instructions of each kind (sp_fp_kind) over the whole run, and the cycles its warps wait on
 * dependent operations, summed over the warps. */
typedef struct sp_rank_arith {
  double warp_ops[SP_ARCH_FP_KINDS];
  double chain_warp_cycles;
} sp_rank_arith;

/* A nest's reductions as the time model sees them: what each thread block does to combine its
 * partial results into the one result, as an OpenACC compiler's tree reduction (and the
 * validation harness) does: one atomic per block and reduction; a native atomic (an integer,
 * float or double sum) is one operation on the address, a compare-and-swap loop (max, min,
 * products) at least two: the read and the swap. */
typedef struct sp_rank_combine {
  int native, cas; /* reductions of each kind */
} sp_rank_combine;

/* Predicted time of one candidate, seconds, and its parts. */
typedef struct sp_rank_time {
  double dram_s, l2_s, l1_s; /* bytes over each level's bandwidth (for the SMs in use) */
  double latency_s;          /* memory instructions over the warps in flight x latency, with
                                the chains of dependent floating-point operations (arith) */
  double arith_chain_s;      /* the part of latency_s that is floating-point chains */
  double arith_s;            /* floating-point warp instructions at the SMs' issue rate; the
                                time is at least this */
  double launch_s;           /* fixed launch overhead */
  double combine_s;          /* the reductions' atomics, one after another (sp_rank_combine) */
  double partial_s;          /* store sectors written in part, merged by the L2 (added) */
  double empty_s;            /* blocks without iterations passing after the work (added) */
  double uneven_s;           /* blocks of unequal work that all run at once (added;
                                sp_rank_uneven) */
  double lowering_s;         /* what the refine_also subset's compiler adds to this schedule
                                (sp_rank_options.lowering_s); not in total_s */
  double total_s;            /* max of the above per wave group (at least combine_s), plus
                                launch */
  sp_rank_bound bound;
  int sms_used;              /* SMs that get at least one block */
  int active_warps_per_sm;   /* resident warps (occupancy, Eq. 7.2) */
  double avg_latency_cycles; /* of one iteration's loads (its slowest), from the hit rates */
  double dram_drift;         /* the factor dram_s took for warps drifting apart or blocks
                                walking down the rows (>= 1; sp_rank_dram_order) */
} sp_rank_time;

typedef struct sp_rank_candidate {
  sp_schedule schedule;
  sp_cm_counters total;
  sp_cm_counters *per_array; /* nest->narrays entries */
  sp_trace_stats stats;
  bool sampled;
  bool refined; /* simulated again on the larger sample after screening */
  double screened_s; /* a refined candidate's predicted time from the screening; 0 otherwise */
  double screened_partial_s; /* and the partly written sectors' part of it */
  double scale; /* counters were multiplied by this (blocks / simulated blocks) */
  double cost_xu;
  sp_rank_time time;
  /* What the memory model did for this candidate, screening and refinement together (a sample
   * shared from another candidate's trace costs none; which of them pays for it, and whether
   * two workers both do, depends on the workers' timing: the figures repeat exactly on one
   * worker or with unshared_samples): its table lookups
   * (sp_cm_memsys_lookups) and the sectors they answered for (L1 sectors of loads and stores,
   * L2 read and write sectors, sampled or not), for bench_rank's lookups per second */
  int64_t model_lookups, model_sectors;
} sp_rank_candidate;

/* A candidate's time as its compiler builds it: the model's time plus the compiler's own code
 * (time.lowering_s; 0 where none is priced). */
double sp_rank_built_s(const sp_rank_candidate *c);

typedef struct sp_rank_options {
  sp_space_options space;
  const int *vector_lengths; /* keep only candidates whose block x is one of these; NULL = all */
  int nvector_lengths;
  bool exact;                     /* no sampling */
  int64_t sample_budget;          /* warp instructions simulated per candidate before sampling;
                                     0 = default */
  sp_cm_l1_variant l1_variant;
  sp_cm_assoc assoc;
  void (*progress)(void *ctx, int done, int total); /* called from worker threads, one at a
                                                       time */
  void *progress_ctx;
  int64_t screen_total; /* warp instructions of the screening pass, shared by all candidates;
                           0 = default */
  int64_t screen_min;   /* but at least this many per candidate; 0 = default */
  int refine_count;     /* candidates refined per round (and half as many refine_also); 0 = 8 */
  int refine_rounds;    /* rounds of refinement at most; 0 = 4 */
  /* The candidates a later stage can use (the schedules an OpenACC compiler can express): the
   * best of them by screening are refined too, in the same rounds as the best of all, so that
   * the best of that subset also comes from refined times. NULL: no such subset. */
  bool (*refine_also)(const sp_schedule *s, void *ctx);
  void *refine_also_ctx;
  /* What that compiler's own code adds to a schedule (GCC's reduction folds,
   * sp_adv_lowering_s), seconds, given the schedule's trace: kept in time.lowering_s, not in
   * total_s, and added to the subset's times where the refinement chooses among them. Called
   * from the workers: it must only read. NULL: nothing. */
  double (*lowering_s)(const sp_schedule *s, const sp_trace_stats *st, void *ctx);
  void *lowering_ctx;
  int threads; /* candidates simulated in parallel; 0 = one per online CPU (at most 8, and no
                  more than the memory models fit in 160 MB); results do not depend on it */
  /* simulate every screening sample, also one whose trace another candidate's sample already
   * had (rank/sample_cache.c); results do not depend on it: a check and a benchmark */
  bool unshared_samples;
  /* refined candidates keep their extrapolated requests, sectors and lines instead of the
   * counted ones (sp_trace_ref_classes): for comparisons (bench_rank --uncounted) */
  bool uncounted_l1;
} sp_rank_options;

typedef struct sp_rank_result {
  int n;
  sp_rank_candidate *candidates; /* in space order */
  int *order;                    /* indices into candidates, best predicted time first */
  int default_index;             /* the compiler-default candidate */
  int default_gcc, default_nvc;  /* both baselines (sp_space); default_index is one of them */
  int samples_shared; /* screening samples taken from another candidate's identical trace */
  bool screened;      /* a screening pass ran: a candidate not refined was only screened */
} sp_rank_result;

/* Whether c's figures come from the screening's short sample only (rough: they only chose
 * what was refined). */
bool sp_rank_screened_only(const sp_rank_result *r, const sp_rank_candidate *c);
/* The registers a thread the ranking assumed (--registers, the same for every candidate); 0: no
 * register limit. */
int sp_rank_registers(const sp_rank_result *r);

/* c's predicted time from the screening, whether or not it was refined since (screened_s). */
double sp_rank_screened_s(const sp_rank_candidate *c);
/* ... and its partly written sectors' part (screened_partial_s). */
double sp_rank_screened_partial_s(const sp_rank_candidate *c);

/* Predicted times within this factor of the fastest are ones the model cannot tell apart: its
 * times are off by 1.3x (median) on the H100 and its near-ties are ordered by sampling noise.
 * Among them the ranking puts the widest block x (vector length) first (since 2026-11-30 among
 * blocks of at most SP_RANK_PLATEAU_THREADS threads, then among larger ones), then the faster: of
 * the pairs of such near-ties measured on the H100 (validation runs 1 and 2) whose block x
 * differed, the wider one was faster in 66 %; on the fresh run 3 this raised the pick within
 * 10 % of the measured best from 24 to 32 of 60 kernels (1.02: 28), and the fourth run, of
 * the model's own picks with it, measured 32 of 60. Then, of the same threads, a grid along
 * the thread-x loop before one across it (sp_rank_across_grain): of the measured pairs that
 * differ only in that (scripts/grid_grain_pairs.py), the model predicts 408 of 459 within 1 %,
 * and the GPU ran the across grid 5 % slower or more in 128 of 386 on the H100 and 27 of 73 on
 * the H200, 5 % faster in 51 and 1 (the runs before the rule). README, "Validation". */
#define SP_RANK_PLATEAU 1.05

/* Whether the loop on threadIdx.x is also dealt over blockIdx.y: the blocks the GPU starts one
 * after another then lie across the contiguous index's rows, not along them. */
bool sp_rank_across_grain(const sp_schedule *s);

/* Whether a and b have the same blocks and each loop on the same thread dimension: they differ
 * only in how the loops are dealt over the grid. */
bool sp_rank_same_threads(const sp_schedule *a, const sp_schedule *b);

/* Blocks of at most this many threads come first in the plateau. Of the measured pairs of
 * near-ties (predicted within 5 %) whose block x differed, the wider ran faster 2:1 where it had
 * at most 256 threads (H100 488:232, H200 157:94), but less often where it had more and the
 * narrower did not (H100 569:411, H200 186:227): the GPU frees a block's slot only when its
 * slowest warp is done, which the model's even warps do not see, and a 1,024-thread block holds
 * half an SM. Replayed on every measurement (2026-11-30, by gpu__time_duration), this order took
 * the H200's pick within 10 % of the measured best from 91 to 96 of 119 nests and the H100's
 * merged runs from 49 to 51 of 60; on the H200's fresh plans of the model with it (the threads
 * run) from 21 to 27 of 32. scripts/plateau_pairs.py counts the pairs. */
#define SP_RANK_PLATEAU_THREADS 256

/* Whether block shape a comes before b in the plateau's order, whatever their times: at most
 * SP_RANK_PLATEAU_THREADS threads before more, then the wider block x. */
bool sp_rank_plateau_shape_before(const sp_schedule *a, const sp_schedule *b);

/* Whether a should come before b among candidates predicted within SP_RANK_PLATEAU of the
 * fastest: by shape (sp_rank_plateau_shape_before), then the shorter predicted time. */
bool sp_rank_plateau_before(const sp_rank_candidate *a, const sp_rank_candidate *b);

/* Reorders the plateau at the head of order (an order by time of r's candidates): by
 * sp_rank_plateau_before, then each grid across the grain (sp_rank_across_grain) behind the
 * grids along it of the same threads (sp_rank_same_threads). */
void sp_rank_order_plateau(const sp_rank_result *r, int *order);

/* How many candidates at the head of r->order that plateau holds (1 when the first stands alone). */
int sp_rank_plateau_size(const sp_rank_result *r);

/* Ranks the nest's candidates; 0, or -1 with a message in err. */
int sp_rank_nest(const sp_nest *nest, const sp_arch *arch, const sp_rank_options *opt,
                 sp_rank_result *out, char *err, size_t errlen);
void sp_rank_result_free(sp_rank_result *r);

/* The time model alone (rank/time.c), for tests and the validation stage. loads_per_iteration:
 * the loads of one iteration of the innermost body, issued together; an iteration waits for the
 * slowest of them. comb: the nest's reductions, NULL for none. */
void sp_rank_predict_time(const sp_cm_counters *c, const sp_trace_stats *st,
                          const sp_schedule *s, const sp_arch *arch, double loads_per_iteration,
                          const sp_rank_combine *comb, sp_rank_time *out);
/* The blocks of a launch whose working blocks all run in its first wave, resident from the
 * start, so that nothing evens out blocks of unequal work (a triangular nest on a capped grid,
 * also one of exactly a wave; rectangular nests are left out, rank/time.c says why):
 * per SM, its blocks with work (dealt as the arch deals them), their band iterations together
 * and its heaviest block's (sp_trace_block_work). nsm 0: not such a launch, or its blocks cannot
 * be counted. */
typedef struct sp_rank_uneven {
  int nsm;
  int *sm_blocks;
  double *sm_work, *sm_max;
} sp_rank_uneven;

/* Fills u for candidate s (nsm 0 where it does not apply); 0, or -1 out of memory. Free with
 * sp_rank_uneven_free. */
int sp_rank_uneven_of(const sp_nest *nest, const sp_schedule *s, const sp_arch *arch,
                      int active_blocks_per_sm, sp_rank_uneven *u);
void sp_rank_uneven_free(sp_rank_uneven *u);

/* sp_rank_predict_time for a launch of unequal blocks in one wave (u: NULL or nsm 0, as
 * sp_rank_predict_time): each SM's L1 time grows with its blocks' work over the mean SM's, its
 * latency chain with its heaviest block's over the mean block's; the kernel lasts as long as
 * its slowest SM, and uneven_s is what that adds to the same launch of equal blocks. */
void sp_rank_predict_time_uneven(const sp_cm_counters *c, const sp_trace_stats *st,
                                 const sp_schedule *s, const sp_arch *arch,
                                 double loads_per_iteration, const sp_rank_combine *comb,
                                 const sp_rank_arith *arith, const sp_rank_uneven *u,
                                 double dram_drift, sp_rank_time *out);

/* Reference r's executions (lanes) in the whole run: the iterations of its loops, trip counts
 * averaged for triangular loops, less those its guards exclude (the analyzer's share):
 * counting them all extrapolated `if (j <= i)` on 2048^2 to twice its traffic. */
double sp_rank_ref_executions(const sp_nest *n, int r);

/* The floating-point work of candidate counters c of nest (sp_loop.fp): each loop's operations
 * times its executions, as warp instructions at the lanes per request the trace found (c's
 * requests over the references' executions); and its chains at the arch's latencies, each
 * iteration's after the other's: on the H200 the chains of an n-body loop that nvcc unrolled by
 * 4 did not overlap (validation/results/h200/2026-11-29-fp-op-probe). All 0 where the arch has
 * no fp_op figures. */
sp_rank_arith sp_rank_arith_of(const sp_nest *nest, const sp_cm_counters *c, const sp_arch *arch);

/* How much longer the DRAM traffic takes because a block's warps drift apart over the rounds
 * each thread runs (sp_trace_thread_rounds): in the first round they read the pieces of a line
 * together and those reach DRAM together; rounds later they arrive apart. On the H100 a stream
 * whose warps read 32 bytes of each line took 1.75x as long at 64 rounds, 64-byte pieces 1.16x,
 * whole lines no longer (validation/probes/piece_drift_probe.cu, arch dram_drift_slowdown_*).
 * Each array's DRAM reads take the curve at its loads' piece (sector bytes x sectors over lines
 * of its requests), its writes at its stores'; the factor is their mean over the DRAM bytes. 1
 * for one round or an arch without the curves. The model's trace runs an SM's warps in step and
 * cannot see it. */
double sp_rank_dram_drift(const sp_cm_counters *per_array, int narrays, int64_t rounds,
                          const sp_arch *arch);

/* How much longer the DRAM traffic takes because consecutive blocks walk down the rows of some
 * arrays: walk[2a] (its loads) and walk[2a+1] (its stores; sp_rank_walk_blocks; 0 or 1: none)
 * blocks before the next strip of array a's pieces, whose blocks read the other pieces of its
 * lines that many blocks later. The same DRAM bytes took up to 1.46x as long on an H200 where
 * a walked array is read and written back (64-byte pieces walked 128 blocks; arch
 * dram_walk_slowdown_*), 1.19x in a copy (read_back 0: dram_walk_copy_slowdown_*), and a kernel
 * that reads one array along its rows beside the walked ones lost 6 % (tile.c's mix; the H100
 * measured 7 %). So: the walked arrays' bytes at their slowdown (each at its loads' and stores'
 * piece) over all the DRAM bytes, at least 1, as the other arrays' traffic fills the time the
 * walk loses. 1 without the curves (validation/results/h100/2026-11-29-partner-distance-probe/). */
double sp_rank_dram_walk(const sp_cm_counters *per_array, int narrays, const double *walk,
                         int read_back, const sp_arch *arch);

/* Per array a, its loads (out[2a]) and its stores (out[2a+1]): where a reference's contiguous
 * index (the band loop whose coefficient is +-its element size) runs on threadIdx.x and on
 * blockIdx.y (z), with blocks narrower than a line along x, consecutive blocks walk gridDim.x
 * (gridDim.x gridDim.y) blocks down before its next strip; the first such reference decides
 * (symmetrize's a[j][i] = a[i][j] walks its stores only). 0 elsewhere, everywhere where the
 * threads run more than one round (sp_rank_dram_drift's case), and without walk curves.
 * Returns 1 where a walked array is read back where it is written (b[j][i] += ...), else 0. */
int sp_rank_walk_blocks(const sp_nest *nest, const sp_schedule *s, const sp_arch *arch, double *out);

/* The DRAM time's factor for the order the pieces of lines reach DRAM in: a block's warps
 * drifting apart where the threads run several rounds (sp_rank_dram_drift), else blocks walking
 * down the rows (sp_rank_walk_blocks, sp_rank_dram_walk). The two never both apply. */
int sp_rank_dram_order(const sp_nest *nest, const sp_schedule *s, const sp_cm_counters *per_array,
                       const sp_arch *arch, double *factor); /* 0, or -1 out of memory */

/* DRAM bytes a run of the kernel writes: every written sector once (write-backs during the run
 * + dirty at its end). The L2 is write-back, and a kernel leaves its dirty data behind but
 * starts with someone else's (the previous run's, or the L2 flush a harness writes before each
 * timed run), which it evicts while it runs: in a loop of kernels the two balance. The time
 * model's DRAM writes and the reported dram_write_bytes. */
double sp_rank_dram_write_bytes(const sp_cm_counters *c);

/* The time the L2 takes to merge `sectors` partly written store sectors, seconds, a rate of the
 * whole GPU (arch->l2_partial_write_ns; 0 where absent). */
double sp_rank_partial_write_seconds(double sectors, const sp_arch *a);
/* st_partial_sectors less those written alone into valid data (rank/time.c) */
double sp_rank_partial_charged_sectors(const sp_cm_counters *c);
/* Whether array a's partly written store sectors can be written alone (the rest of each left to
 * data the L2 holds, st_partial_alone_sectors): every store of a runs under a parity guard that
 * alternates along the loop its elements are contiguous in, and that loop runs on the lanes of
 * whole warps, so the sector's other elements of the store's residue are the same instruction's
 * (a red-black sweep's u[i][j] with j on threadIdx.x). Elsewhere the other writers may run in
 * blocks a sample leaves out (a column store's neighbours), and a sample's count is not
 * trusted. */
bool sp_rank_parity_stores_alone(const sp_nest *nest, const sp_schedule *s, int a);
/* The L2 bandwidth (GB/s) and the share of the DRAM bandwidth that `sms` SMs draw (rank/time.c). */
double sp_rank_l2_bw_gbs(const sp_arch *a, int sms);
double sp_rank_dram_share(const sp_arch *a, int sms);
/* Distinct sectors of sector_bytes of an array that the nest reads (accesses SP_FOOT_READS),
 * writes (SP_FOOT_WRITES) or both, estimated from its references' affine forms
 * (rank/footprint.c): each reference's footprint is a box, a contiguous row repeated over its
 * larger strides, each row counted in the sectors it straddles (where the rows' strides are whole
 * sectors, else its length in sectors rounded up). References whose byte ranges overlap form
 * a group; within it, translates of one box (a stencil's neighbours) count their union, other
 * references overlap. A group counts its largest union, groups apart (himeno's a[0..3], slabs of
 * one array) add up. A reference whose loop bounds depend on other indices overlaps all. At most
 * the declared size. An irregular reference (x[col[j]]) counts what the trace lets it reach
 * over the whole run, one sector of every SP_TRACE_IRREGULAR_LINE_BYTES line, added to the
 * others' (extent NULL), and nothing with an extent. extent: iterations of each loop to count
 * (its trip where smaller), NULL: every loop's trip. */
enum { SP_FOOT_READS = 1, SP_FOOT_WRITES = 2 };
double sp_rank_footprint_sectors(const sp_nest *n, int array, int sector_bytes, unsigned accesses,
                                 const double *extent);
/* The same over a window of the iterations: extent[l] of loop l's from its iteration start[l]
 * (the blocks of a slab of the grid). */
double sp_rank_footprint_window(const sp_nest *n, int array, int sector_bytes, unsigned accesses,
                                const double *extent, const double *start);
/* The same for the array's references r with take[r] (reads and writes). */
double sp_rank_refs_footprint_sectors(const sp_nest *n, int array, int sector_bytes,
                                      const bool *take, const double *extent);
/* The share of the lines the L2 misses when they come back after `bytes` of other lines (in
 * whole lines; rank/rank.c): its hashed sets (l2_reuse_set_sectors) hold a line while fewer
 * than their ways of those map to its set, a Poisson count of mean lines / sets; without
 * sets, all (beyond sp_arch_l2_model_bytes) or none. */
double sp_rank_l2_miss_share(const sp_arch *arch, double bytes);
/* The reductions of a nest, counted for the time model. */
sp_rank_combine sp_rank_combine_of(const sp_nest *nest);
const char *sp_rank_bound_name(sp_rank_bound b);

/* Reports (rank/report.c). */
typedef struct sp_report_nest {
  const sp_nest *nest;
  const sp_rank_result *rank; /* NULL if the nest could not be ranked */
  const char *error;          /* why not */
  /* rendered by a later stage (advice/), NULL for none: the text that replaces the report's own
   * "recommended" block, and a JSON object stored as the nest's "advice" member */
  const char *advice_text;
  const char *advice_json;
} sp_report_nest;

/* "j->tx+bx i->ty+by k->seq": each band loop's CUDA thread/block dimensions. */
void sp_report_cuda_mapping(const sp_nest *n, const sp_schedule *s, char *buf, size_t len);
/* The printf-formatted text as lines of at most SP_REPORT_PROSE_COLUMNS, broken at spaces: the
 * first after two spaces, the rest after four so that they read as one note (a word longer
 * than a line stays whole), each ending in a newline; malloc'd, NULL when out of memory. */
#define SP_REPORT_PROSE_COLUMNS 100
char *sp_report_prose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void sp_report_text(FILE *out, const sp_report_nest *nests, int n, const sp_arch *arch, int top);
/* JSON with the same content (schema "schedpredict-report"); malloc'd, NULL on failure. */
char *sp_report_json(const sp_report_nest *nests, int n, const sp_arch *arch, int top);
/* The counters as a JSON object under the report's names (a jansson json_t *), for other
 * outputs. */
struct json_t *sp_report_counters_json(const sp_cm_counters *c);
/* Sets "block" and "grid" ([x, y, z] each) of the schedule on a JSON object. */
void sp_report_launch_json(struct json_t *o, const sp_schedule *s);

#endif
