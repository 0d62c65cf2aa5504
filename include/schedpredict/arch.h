/* GPU architecture descriptions (arch/NAME.json) and the occupancy / wave arithmetic of the
 * dissertation's Eq. 7.1-7.2. A description is loaded once into a plain struct: no JSON types leak
 * out, the strings are fixed arrays, nothing needs freeing (except the array sp_arch_list returns).
 * arch/README.md describes every field, its unit and the {"value", "source"} file format. */
#ifndef SCHEDPREDICT_ARCH_H
#define SCHEDPREDICT_ARCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SP_ARCH_NAME_MAX 32       /* bytes including the NUL */
#define SP_ARCH_FULL_NAME_MAX 128 /* bytes including the NUL */
#define SP_ARCH_PATH_MAX 1024     /* bytes including the NUL */
#define SP_ARCH_MAX_CARVEOUTS 16
#define SP_ARCH_MAX_DEALING 1024
#define SP_ARCH_MAX_BW_POINTS 32

/* A measured curve: y at a few x, x ascending; n 0 = not measured. The bandwidth that k SMs
 * draw together (x SMs, y GB/s: validation/probes/sm_bandwidth_probe.cu), or the slowdown of a
 * DRAM stream whose threads each run x rounds (y >= 1: validation/probes/piece_drift_probe.cu). */
typedef struct sp_arch_curve {
  int n;
  double x[SP_ARCH_MAX_BW_POINTS], y[SP_ARCH_MAX_BW_POINTS];
} sp_arch_curve;

/* One kind of floating-point operation (sp_fp_kind, ir.h: the same order) as a warp runs it:
 * the cycles a dependent operation waits for its result, and the SM's cycles per warp
 * instruction when every scheduler issues it (1 / throughput); 0 = not measured. */
#define SP_ARCH_FP_KINDS 8
typedef struct sp_arch_fp_op {
  double latency_cycles;
  double issue_cycles;
} sp_arch_fp_op;

/* What a global store does in the L1. */
typedef enum sp_l1_store_policy {
  SP_L1_STORE_BYPASS = 0,             /* "bypass": stores go to L2; a cached copy is invalidated (Kepler) */
  SP_L1_STORE_WRITE_THROUGH_NO_ALLOC, /* "write-through-no-allocate" */
  SP_L1_STORE_WRITE_THROUGH_ALLOC     /* "write-through-allocate": written sectors kept in L1 */
} sp_l1_store_policy;

/* What a store does in the L2. */
typedef enum sp_l2_store_policy {
  SP_L2_STORE_WRITE_BACK_ALLOC = 0, /* "write-back-allocate" */
  SP_L2_STORE_WRITE_BACK_NO_ALLOC   /* "write-back-no-allocate" */
} sp_l2_store_policy;

typedef struct sp_arch {
  char name[SP_ARCH_NAME_MAX];           /* short name, as --arch takes it: "h100" */
  char full_name[SP_ARCH_FULL_NAME_MAX]; /* "NVIDIA H100 SXM5 80GB" */
  char path[SP_ARCH_PATH_MAX];           /* the file it was loaded from */

  int cc_major, cc_minor; /* compute capability */

  /* --- execution resources (Eq. 7.1-7.2) --- */
  int sm_count;
  int warp_size;               /* threads; always 32 */
  int max_threads_per_sm;
  int max_blocks_per_sm;
  int max_warps_per_sm;
  int max_threads_per_block;
  int registers_per_sm;         /* 32-bit registers */
  int max_registers_per_thread;
  int register_alloc_unit;      /* registers; per-warp allocation rounds up to this */
  int warp_alloc_granularity;   /* warps; register-limited warps round down to this */
  int64_t shared_per_sm_bytes;             /* largest shared-memory carveout per SM */
  int64_t shared_per_block_bytes;          /* largest per block (opt-in) */
  int64_t shared_reserved_per_block_bytes; /* system use per resident block (cc >= 8.0: 1 KB) */
  int64_t shared_alloc_unit_bytes;
  int64_t shared_carveouts_bytes[SP_ARCH_MAX_CARVEOUTS]; /* selectable shared sizes, ascending */
  int n_shared_carveouts;

  /* --- L1 (per SM) --- */
  int64_t l1_shared_unified_bytes; /* L1 + shared memory storage per SM */
  int64_t l1_bytes;                /* L1 capacity for global loads with no shared memory in use */
  int l1_assoc;                    /* ways; 0 = not published / unknown */
  int l1_line_bytes;
  int l1_sector_bytes;
  int l1_caches_global_loads;      /* 1: global loads allocate in L1 by default */
  sp_l1_store_policy l1_store_policy;

  /* --- L2 (shared by all SMs) --- */
  int64_t l2_bytes;
  int64_t l2_reuse_bytes;          /* what the L2 keeps for reuse, which the memory model gives
                                      its L2 (sp_arch_l2_model_bytes); 0 = l2_bytes (optional) */
  int64_t l2_reuse_set_sectors;    /* the model's L2 as a hashed set-associative LRU with sets of
                                      this many sectors, fitted to how gradually the GPU loses
                                      data; 0 = one fully associative LRU (optional) */
  int l2_partitions;               /* 1, or 2 for A100/H100/H200 (near/far halves) */
  int l2_assoc;                    /* ways; 0 = not published / unknown */
  int l2_line_bytes;
  int l2_sector_bytes;
  int l2_fill_bytes;               /* bytes read from DRAM on a read miss (the sector and its
                                      neighbours in an aligned block); 0 = l2_sector_bytes
                                      (optional field) */
  sp_l2_store_policy l2_store_policy;

  /* --- latencies, core clock cycles (Eq. 7.5-7.7) --- */
  double l1_hit_latency_cycles;
  double l2_hit_latency_cycles;     /* near partition / only partition */
  double l2_far_hit_latency_cycles; /* 0 = not applicable / unknown */
  double dram_latency_cycles;

  /* --- bandwidths and clocks --- */
  double l1_bw_bytes_per_cycle; /* per SM */
  double l2_bw_gbs;             /* whole chip, GB/s (1e9 B/s) */
  double dram_bw_gbs;           /* GB/s (1e9 B/s) */
  /* what k SMs alone draw from the L2 and from DRAM (optional; rank/time.c says how each is
   * used and what stands in for it without one) */
  sp_arch_curve l2_bw_by_sms, dram_bw_by_sms;
  /* How much longer DRAM traffic takes when each thread runs x rounds (grid-stride or band loops
   * it walks) and its warp reads 32 (64) bytes of each line it touches: the block's warps, which
   * read a line's pieces together in the first round, drift apart, and the pieces reach DRAM
   * apart (optional; rank/time.c sp_rank_dram_drift) */
  sp_arch_curve dram_drift_32b, dram_drift_64b;
  /* How much longer DRAM traffic takes when consecutive blocks walk x blocks down the rows
   * before the next strip of a line's 32 (64) byte pieces, whose blocks read the lines' other
   * pieces x blocks later (optional; rank/time.c sp_rank_dram_walk) */
  sp_arch_curve dram_walk_32b, dram_walk_64b;
  /* the same for a kernel whose walked arrays are each only read or only written (a copy);
   * the curves above are for one that reads and writes a walked array back (optional: absent,
   * the curves above serve both) */
  sp_arch_curve dram_walk_copy_32b, dram_walk_copy_64b;
  /* the same for blocks 128, 256 and 512 bytes wide along the walked rows (a line or more: no
   * pieces shared between blocks; the rows' order alone), for a kernel that reads a walked
   * array back (dram_walk_wide) and one that does not (dram_walk_copy_wide) (optional) */
  sp_arch_curve dram_walk_wide[3], dram_walk_copy_wide[3];
  double clock_boost_mhz;
  double clock_base_mhz;
  int64_t memory_bytes;
  /* one atomic operation on an address every thread block updates (a reduction's combine):
   * such atomics are serialized where the address lives; ns each; 0 = absent (optional) */
  double same_address_atomic_ns;
  /* compare-and-swap loops on one word, as GCC 12 lowers OpenACC reductions (advice/lowering.c)
   * (optional, 0 = absent): one attempt on a shared-memory word, ns, attempts serialized per SM;
   * one success on a global word that every block updates, ns, when `contenders` blocks retry
   * it: cas_global_base_ns + cas_global_per_contender_ns * contenders */
  double cas_shared_ns;
  double cas_global_base_ns, cas_global_per_contender_ns;
  /* independent loads of one warp (each a full 256-byte request) in flight at once: a
   * sequential loop that stores nothing is unrolled and overlaps this many; 0 = absent
   * (optional: one iteration's loads at a time) */
  double warp_loads_in_flight;
  /* core cycles a loop iteration adds to the latency of its loads in a warp's chain of
   * iterations (address arithmetic, the dependent use, the branch); 0 = absent (optional) */
  double loop_iteration_cycles;
  /* floating-point operations by kind (fp64, fp64_div, ... as sp_fp_kind); all 0 = arithmetic
   * not modelled on this arch (optional) */
  sp_arch_fp_op fp_op[SP_ARCH_FP_KINDS];
  /* GPU time of one store sector that its instruction writes only in part (the L2 merges it
   * into the sector's other bytes), ns, all SMs storing; 0 = absent (optional: free) */
  double l2_partial_write_ns;
  /* Blocks without iterations (a fixed gang count larger than the loops need): the work
   * distributor deals one block every block_dispatch_ns, GPU-wide, and a block that only
   * starts and stops holds its slot empty_block_ns; 0 = absent (optional: such blocks are
   * free) */
  double block_dispatch_ns;
  double empty_block_ns;
  /* The order in which the chip's work distributor deals the blocks of a launch to SMs: SM
   * ids, repeated as a cycle, an SM that holds its share skipped (sp_trace_deal_blocks).
   * Measured per board (which TPCs are fused off differs); 0 entries = not measured
   * (optional). */
  int16_t block_dealing_cycle[SP_ARCH_MAX_DEALING];
  int n_block_dealing_cycle;
} sp_arch;

/* Loads and validates one description file. Returns 0 on success; on failure returns -1, leaves
 * *out unspecified and writes "PATH: field 'x': what is wrong" (or "PATH: line L, column C:
 * invalid JSON: ...") into err (always NUL-terminated when errlen > 0). */
int sp_arch_load_file(const char *path, sp_arch *out, char *err, size_t errlen);

/* name_or_path: a path (contains '/' or ends in ".json") is loaded as is; a name ("h100") is
 * looked up as NAME.json in, in order: each directory of $SCHEDPREDICT_ARCH_PATH (colon-separated),
 * the source tree's arch/ (SP_SOURCE_DIR), the install directory (SP_ARCH_INSTALL_DIR, default
 * /usr/local/share/schedpredict/arch). A file found by name must carry that name. */
int sp_arch_load(const char *name_or_path, sp_arch *out, char *err, size_t errlen);

/* One available description, for --list-archs. */
typedef struct sp_arch_entry {
  char name[SP_ARCH_NAME_MAX];
  char full_name[SP_ARCH_FULL_NAME_MAX];
  char path[SP_ARCH_PATH_MAX];
  int ok;          /* 0: the file does not validate; error says why */
  char error[512];
} sp_arch_entry;

/* Lists the *.json files of the search directories (same order as sp_arch_load; a name found
 * earlier hides later files of that name), sorted by name. *entries is malloc'ed (free() it;
 * NULL when *n == 0). Returns 0, or -1 on allocation failure (message in err). */
int sp_arch_list(sp_arch_entry **entries, int *n, char *err, size_t errlen);

/* Which resource bounds the resident blocks per SM. */
typedef enum sp_occ_limit {
  SP_OCC_LIMIT_NONE = 0, /* configuration cannot run (see sp_occupancy.blocks == 0) */
  SP_OCC_LIMIT_THREADS,  /* Eq. 7.2: max_threads_per_sm / block_size */
  SP_OCC_LIMIT_BLOCKS,   /* Eq. 7.2: max_thread_blocks_per_SM */
  SP_OCC_LIMIT_WARPS,
  SP_OCC_LIMIT_REGISTERS,
  SP_OCC_LIMIT_SHARED
} sp_occ_limit;

typedef struct sp_occupancy {
  int blocks;          /* active blocks per SM; 0 = cannot launch */
  int warps_per_block;
  int active_warps;    /* blocks * warps_per_block */
  double occupancy;    /* active_warps / max_warps_per_sm */
  int by_threads, by_blocks, by_warps, by_registers, by_shared; /* each limit; INT32_MAX = none */
  sp_occ_limit limit;  /* the binding one (first in the order above on ties) */
} sp_occupancy;

/* Eq. 7.2 extended: min(max_threads_per_sm / tpb, max_blocks_per_sm, warp, register and shared
 * memory limits). regs_per_thread == 0 or smem_per_block == 0 mean unknown: that limit is not
 * applied. Returns 0 when the block cannot run at all (tpb <= 0 or > max_threads_per_block, regs
 * over the per-thread maximum, shared memory over the per-block maximum, negative arguments). */
int sp_arch_active_blocks_per_sm(const sp_arch *arch, int threads_per_block, int regs_per_thread,
                                 int64_t smem_per_block);
/* Same, with each limit. Returns out->blocks. */
int sp_arch_occupancy(const sp_arch *arch, int threads_per_block, int regs_per_thread,
                      int64_t smem_per_block, sp_occupancy *out);

/* The curve at k SMs: linear between its points, through 0 below the first, its last value
 * beyond the last. */
double sp_arch_bw_at(const sp_arch_curve *c, double sms);

/* The bytes the memory model's L2 holds: l2_reuse_bytes where the description gives it, else
 * l2_bytes. */
int64_t sp_arch_l2_model_bytes(const sp_arch *arch);

/* Whether the description has floating-point figures (fp_op): without them the time model
 * charges no arithmetic. Returns 0 or 1. */
int sp_arch_models_fp(const sp_arch *arch);

typedef struct sp_waves {
  int64_t blocks_per_wave; /* active_blocks_per_sm * sm_count */
  int64_t full_waves;      /* floor(nblocks / blocks_per_wave) */
  int64_t waves;           /* Eq. 7.1 as a ceiling: full_waves + (tail_blocks > 0) */
  int64_t tail_blocks;     /* blocks in the last, partial wave; 0 if the last wave is full */
  double tail_fraction;    /* tail_blocks / blocks_per_wave */
} sp_waves;

/* Eq. 7.1. Returns 0, or -1 (out zeroed) if nblocks < 0 or active_blocks_per_sm <= 0. */
int sp_arch_waves(const sp_arch *arch, int64_t nblocks, int active_blocks_per_sm, sp_waves *out);

/* L1 capacity for global loads when each SM needs smem_per_sm bytes of shared memory: the
 * driver picks the smallest carveout >= smem_per_sm; L1 = min(l1_bytes, unified - carveout).
 * Returns 0 if no carveout is large enough. */
int64_t sp_arch_l1_bytes_for_shared(const sp_arch *arch, int64_t smem_per_sm);

const char *sp_l1_store_policy_name(sp_l1_store_policy p);
const char *sp_l2_store_policy_name(sp_l2_store_policy p);

#ifdef __cplusplus
}
#endif
#endif
