/* Cache-model core: warp-access coalescing, reuse (LRU stack) distance, LRU caches.
 *
 * Units. Everything past the coalescer works on *unit indices*: a sector index is
 * byte_address / sector_bytes, a line index is byte_address / line_bytes. The caches and the
 * reuse-distance structures take any uint64_t key, so the same code models L1 at line or at sector
 * granularity and L2 at sector granularity.
 *
 * Reuse distance (dissertation §7.3.4, Table 7.2): the number of *distinct* units accessed
 * between this access and the previous access to the same unit; SP_CM_RD_INF for a first access.
 * A fully associative LRU cache of C units hits exactly when distance < C.
 *
 * Errors: constructors return NULL when an argument is invalid or an allocation fails. The only
 * access functions that allocate are the unbounded reuse-distance ones; they return
 * SP_CM_RD_NOMEM (leaving the structure as it was before the call) and set a sticky flag.
 * Nothing here has global state; one object must not be used by two threads at once. */
#ifndef SCHEDPREDICT_CACHEMODEL_H
#define SCHEDPREDICT_CACHEMODEL_H

#include <stddef.h>
#include <stdint.h>

/* ---- coalescer ------------------------------------------------------------------------------ */

#define SP_CM_WARP_LANES 32
/* Each lane's access (at most 16 bytes, sectors at least 16 bytes) touches at most two units. */
#define SP_CM_MAX_UNITS (2 * SP_CM_WARP_LANES)

typedef struct sp_cm_coalescer {
  uint32_t sector_bytes;          /* power of two, >= 16 (32 on Maxwell+, 128 in Kepler mode) */
  uint32_t line_bytes;            /* power of two, >= sector_bytes (128) */
  unsigned sector_shift;          /* log2(sector_bytes) */
  unsigned sectors_per_line_shift; /* log2(line_bytes / sector_bytes) */
} sp_cm_coalescer;

/* The L1's data array: banks of 4-byte words, word w in bank w mod SP_CM_L1_BANKS, each bank
 * serving one word a cycle to every lane that reads it. On the H100 (and the H200) this, and not
 * the 128-byte lines, sets how long a request that hits takes: 32 floats 4 bytes past a line
 * take 1 cycle over their 2 lines, 32 doubles 2, lanes 12 bytes apart 1 over 3 lines; lanes 16
 * bytes apart 4 (validation/results/h100/2026-11-27-l1-span-probe). */
#define SP_CM_L1_BANKS 32

/* What one warp instruction sends to the memory system. */
typedef struct sp_cm_warp_access {
  uint32_t requests;                  /* 1 if any lane is active, else 0 */
  uint32_t n_sectors;                 /* distinct sectors touched */
  uint32_t n_lines;                   /* distinct lines touched */
  uint32_t bank_cycles; /* cycles the L1's data array needs for it on hits: the most distinct
                           4-byte words any one of its SP_CM_L1_BANKS banks holds */
  uint64_t sectors[SP_CM_MAX_UNITS];  /* sector indices, strictly ascending */
  uint64_t lines[SP_CM_MAX_UNITS];    /* line indices, strictly ascending */
  /* 1 where line_mask holds, for each of lines[], the sectors of it listed (bit j: the line's
   * j-th sector); sp_cm_coalesce_shaped fills it from its memo for lines of at most 8 sectors,
   * and sets 0 where it does not */
  uint32_t line_masks;
  uint8_t line_mask[SP_CM_MAX_UNITS];
} sp_cm_warp_access;

/* 0 on success, -1 if the sizes are not powers of two with 16 <= sector_bytes <= line_bytes. */
int sp_cm_coalescer_init(sp_cm_coalescer *c, uint32_t sector_bytes, uint32_t line_bytes);

/* lane_addr[l] is lane l's byte address (read only when bit l of active_mask is set);
 * access_bytes in 1..16 (need not be a power of two, e.g. 12 for float3). An access that
 * straddles a sector or line boundary touches both. Returns 0, or -1 for a bad access_bytes.
 * No allocation; cost O(32) for ascending or descending lane addresses, O(32 log 64 + moves)
 * otherwise. */
int sp_cm_coalesce(const sp_cm_coalescer *c, const uint64_t *lane_addr, uint32_t active_mask,
                   uint32_t access_bytes, sp_cm_warp_access *out);

/* sp_cm_coalesce for a caller that knows which instructions share their lanes' layout: shape
 * != 0 promises that every instruction given with this shape, active mask and access size has
 * the same offsets addr[l] - addr[first active lane] (a trace's affine reference in one warp of
 * the block, whatever the loop indices). The layout's analysis (a grid of lanes, or not) is then
 * kept in memo and done once per (shape, mask, size) instead of per instruction; the result is
 * always what sp_cm_coalesce gives. shape 0 or memo NULL: sp_cm_coalesce. */
typedef struct sp_cm_coalesce_memo sp_cm_coalesce_memo;
sp_cm_coalesce_memo *sp_cm_coalesce_memo_create(void);
void sp_cm_coalesce_memo_free(sp_cm_coalesce_memo *m);
size_t sp_cm_coalesce_memo_bytes(void);
int sp_cm_coalesce_shaped(const sp_cm_coalescer *c, sp_cm_coalesce_memo *memo, uint64_t shape,
                          const uint64_t *lane_addr, uint32_t active_mask, uint32_t access_bytes,
                          sp_cm_warp_access *out);

/* Of the sectors `wa` lists (sp_cm_coalesce of the same lanes), how many the active lanes'
 * bytes cover only in part: a store that leaves some of a sector's bytes unwritten. Lanes that
 * write the same bytes cover them once. 0 when sectors are wider than 128 bytes (Kepler's
 * transactions, where it is not modelled). O(32) for ascending lane addresses. */
uint32_t sp_cm_partial_sectors(const sp_cm_coalescer *c, const uint64_t *lane_addr,
                               uint32_t active_mask, uint32_t access_bytes,
                               const sp_cm_warp_access *wa);
/* The same, and which: bit i set where wa->sectors[i] is one of them. */
uint32_t sp_cm_partial_sectors_which(const sp_cm_coalescer *c, const uint64_t *lane_addr,
                                     uint32_t active_mask, uint32_t access_bytes,
                                     const sp_cm_warp_access *wa, uint64_t *which);
/* sp_cm_partial_sectors_which after sp_cm_coalesce_shaped of the same instruction with this memo:
 * the memo's layout spares re-checking the lanes' stride. */
uint32_t sp_cm_partial_sectors_shaped(const sp_cm_coalescer *c, const sp_cm_coalesce_memo *memo,
                                      uint64_t shape, const uint64_t *lane_addr,
                                      uint32_t active_mask, uint32_t access_bytes,
                                      const sp_cm_warp_access *wa, uint64_t *which);

/* ---- reuse distance --------------------------------------------------------------------------- */

#define SP_CM_RD_INF UINT64_MAX          /* first access (or, when capped, distance >= cap) */
#define SP_CM_RD_NOMEM (UINT64_MAX - 1)  /* allocation failed; the access was not recorded */

/* O(log n) reuse distance in the Bennett-Kruskal / Olken style: an open-addressing hash map from
 * unit to the timestamp of its last access, and a bitmap of vacated timestamps ("holes") with a
 * Fenwick tree over the per-64-bit-word hole counts. distance = (timestamps strictly between the
 * last access and now) - (holes among them). When the timestamp window is full the live
 * timestamps are renumbered 0..live-1 in order (compaction), so memory is proportional to the
 * live units, not to the trace length; compaction is amortised O(1) per access.
 *
 * max_tracked = 0: exact distances; memory grows with the number of distinct units seen.
 * max_tracked = C > 0: the structure only has to tell "distance < C" apart from "not". It
 *   returns the exact distance when it is < C and SP_CM_RD_INF otherwise (so a capacity miss and
 *   a cold miss look alike). At compaction it forgets every unit that C or more distinct units
 *   have been accessed after - its next distance can only be >= C. Memory is then O(C) whatever
 *   the trace, everything is allocated by create, and access never fails. */
typedef struct sp_cm_rd sp_cm_rd;

typedef struct sp_cm_rd_stats {
  uint64_t accesses;
  uint64_t tracked;      /* units currently remembered */
  uint64_t window;       /* timestamps between compactions */
  uint64_t compactions;
  uint64_t forgotten;    /* units dropped by the cap */
  size_t memory_bytes;   /* heap held */
} sp_cm_rd_stats;

sp_cm_rd *sp_cm_rd_create(uint64_t max_tracked);
uint64_t sp_cm_rd_access(sp_cm_rd *rd, uint64_t unit);
int sp_cm_rd_failed(const sp_cm_rd *rd); /* nonzero once an access returned SP_CM_RD_NOMEM */
void sp_cm_rd_get_stats(const sp_cm_rd *rd, sp_cm_rd_stats *out);
void sp_cm_rd_free(sp_cm_rd *rd);

/* Brute-force LRU stack (the reference): O(stack depth) per access, exact distances. */
typedef struct sp_cm_lru_stack sp_cm_lru_stack;
sp_cm_lru_stack *sp_cm_lru_stack_create(void);
uint64_t sp_cm_lru_stack_access(sp_cm_lru_stack *s, uint64_t unit); /* or SP_CM_RD_NOMEM */
void sp_cm_lru_stack_free(sp_cm_lru_stack *s);

/* ---- LRU caches --------------------------------------------------------------------------------- */

/* Fully associative LRU cache of `capacity` (< 2^31) units: hash index + doubly linked list,
 * O(1) per access, all memory allocated by create. access returns 1 on a hit, 0 on a miss (the unit is
 * then inserted, evicting the least recently used one when full). */
typedef struct sp_cm_lru sp_cm_lru;
sp_cm_lru *sp_cm_lru_create(uint64_t capacity);
int sp_cm_lru_access(sp_cm_lru *c, uint64_t unit);
void sp_cm_lru_free(sp_cm_lru *c);
/* Empties the cache, keeping its memory (cheaper than free + create for a large one). */
void sp_cm_lru_clear(sp_cm_lru *c);
/* The same cache with its tables in caller-owned memory of sp_cm_lru_table_bytes(capacity) bytes,
 * 64-byte aligned, which must outlive it (sp_cm_lru_free leaves that memory alone): lets many
 * small caches share one allocation on huge pages. NULL on a bad capacity or pointer. */
sp_cm_lru *sp_cm_lru_create_at(uint64_t capacity, void *tables);
size_t sp_cm_lru_table_bytes(uint64_t capacity); /* 0 for a capacity create refuses */
/* Hashed set-associative LRU in the same structure: `sets` sets of `ways` (a power of two) units,
 * sets x ways < 2^31; a unit's set is sp_cm_set_index_hash(unit, sets, &group_shift), so the
 * units of one group (unit >> group_shift: the sectors of a line) share a set; a miss evicts
 * its set's LRU unit. O(1) per access whatever the ways, unlike sp_cm_setassoc. The lookup
 * functions below and clear, free and memory_bytes take it as they take the fully associative
 * one (sets = 1 is that cache). */
sp_cm_lru *sp_cm_lru_create_sets(uint64_t sets, uint32_t ways, unsigned group_shift);
uint32_t sp_cm_lru_ways(const sp_cm_lru *c); /* units per set; the capacity when fully assoc. */

/* Set index of a unit: must return a value < sets. */
typedef uint64_t (*sp_cm_set_index_fn)(uint64_t unit, uint64_t sets, void *ctx);
uint64_t sp_cm_set_index_mod(uint64_t unit, uint64_t sets, void *ctx);     /* unit mod sets */
uint64_t sp_cm_set_index_xorfold(uint64_t unit, uint64_t sets, void *ctx); /* XOR of the unit's
  log2(sets)-bit chunks, then mod sets: spreads power-of-two strides over all sets */
/* The high 32 bits of the splitmix64 finalizer of unit >> *(unsigned *)ctx (0 when ctx is NULL),
 * scaled to [0, sets): sp_cm_lru_create_sets's set index */
uint64_t sp_cm_set_index_hash(uint64_t unit, uint64_t sets, void *ctx);

/* Set-associative LRU cache: sets x ways, each set an MRU-first array (ways is small: O(ways)
 * per access). index_fn NULL means sp_cm_set_index_mod. access returns 1 hit / 0 miss. */
typedef struct sp_cm_setassoc sp_cm_setassoc;
sp_cm_setassoc *sp_cm_setassoc_create(uint64_t sets, uint32_t ways, sp_cm_set_index_fn index_fn,
                                      void *index_ctx);
int sp_cm_setassoc_access(sp_cm_setassoc *c, uint64_t unit);
void sp_cm_setassoc_free(sp_cm_setassoc *c);
void sp_cm_setassoc_clear(sp_cm_setassoc *c); /* empties it, keeping its memory */

/* ---- lookups with a payload (memory-system model) ---------------------------------------------
 * Both caches keep one uint64_t payload per resident unit that the caller owns (the memory-system
 * model keeps a line's sector-valid bits there, or an L2 sector's dirty bit and owner). The plain
 * *_access functions above leave a new unit's payload at 0 and ignore it otherwise.
 * mode: PEEK finds the unit without changing anything (no LRU update, no insertion); TOUCH also
 * makes a hit the most recently used; INSERT also inserts a missing unit as MRU with payload 0,
 * evicting the least recently used unit of the cache (of the set) when full. Returns a pointer to
 * the unit's payload (valid until the next call that changes the cache), or NULL when the unit is
 * absent and was not inserted. *res (may be NULL) says whether it hit and what was evicted. */
typedef enum sp_cm_lookup_mode {
  SP_CM_LOOKUP_PEEK,
  SP_CM_LOOKUP_TOUCH,
  SP_CM_LOOKUP_INSERT
} sp_cm_lookup_mode;

typedef struct sp_cm_lookup {
  int hit;                 /* the unit was resident */
  int evicted;             /* INSERT pushed out a victim */
  uint64_t victim;         /* the victim unit, when evicted */
  uint64_t victim_payload; /* its payload */
} sp_cm_lookup;

uint64_t *sp_cm_lru_lookup(sp_cm_lru *c, uint64_t unit, sp_cm_lookup_mode mode,
                           sp_cm_lookup *res);
uint64_t *sp_cm_setassoc_lookup(sp_cm_setassoc *c, uint64_t unit, sp_cm_lookup_mode mode,
                                sp_cm_lookup *res);
/* Hint that `unit` will be looked up soon (prefetches its hash slot / its set): lets a caller
 * overlap the cache misses of a batch of lookups. No effect on the model. */
void sp_cm_lru_prefetch(const sp_cm_lru *c, uint64_t unit);
void sp_cm_setassoc_prefetch(const sp_cm_setassoc *c, uint64_t unit);
/* Heap held by a cache (for memory reports; not the tables of one made by create_at), and what
 * create would allocate. */
size_t sp_cm_lru_memory_bytes(const sp_cm_lru *c);
size_t sp_cm_setassoc_memory_bytes(const sp_cm_setassoc *c);
size_t sp_cm_lru_bytes_for(uint64_t capacity);
size_t sp_cm_setassoc_bytes_for(uint64_t sets, uint32_t ways);

/* Reuse distance per set: one sp_cm_rd per set (created on the set's first access), distances
 * counted among the units of the same set. With ways W, "distance < W" gives exactly the hits of
 * sp_cm_setassoc with the same sets and index function. max_tracked_per_set as in
 * sp_cm_rd_create (W is enough for hit/miss). access returns SP_CM_RD_NOMEM if a set's structure
 * cannot be allocated. */
typedef struct sp_cm_rd_sets sp_cm_rd_sets;
sp_cm_rd_sets *sp_cm_rd_sets_create(uint64_t sets, uint64_t max_tracked_per_set,
                                    sp_cm_set_index_fn index_fn, void *index_ctx);
uint64_t sp_cm_rd_sets_access(sp_cm_rd_sets *s, uint64_t unit);
void sp_cm_rd_sets_free(sp_cm_rd_sets *s);

#endif
