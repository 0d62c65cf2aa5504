/* Reuse distance in O(log n): see sp_cm_rd in cachemodel.h for the method and the cap.
 *
 * State. Every access takes the next timestamp `now` (0 .. window-1). The map holds, per tracked
 * unit, the timestamp of its last access. When a unit is accessed again its old timestamp becomes
 * a *hole*: bit t of `holes` is set and the Fenwick tree over per-word hole counts is bumped.
 * The tracked units are exactly the timestamps < now that are not holes, so
 *     distance(u) = (now - t_u - 1) - (holes in (t_u, now)).
 * Cold accesses touch no tree at all. When now reaches the window, compaction gives the tracked
 * units the timestamps 0..tracked-1 in the same order (their rank among non-holes, computed from
 * per-word prefix counts in one pass), clears the holes, and - uncapped - widens the window to
 * at least twice the tracked units, so at least half a window of accesses separates two
 * compactions of O(map + window/64) work: amortised O(1). */
#include "schedpredict/cachemodel.h"

#include <stdlib.h>
#include <string.h>

#include "cachemodel/cm_hashmap.h"

enum { MIN_WINDOW = 64 };

struct sp_cm_rd {
  uint64_t cap;          /* 0 = exact */
  cm_map map;            /* unit -> timestamp of its last access */
  uint64_t *holes;       /* window bits */
  uint32_t *fen;         /* Fenwick tree, 1-based, fen[1..nwords]: holes per bitmap word */
  uint64_t nwords;       /* window = 64 * nwords */
  uint64_t now;
  uint64_t total_holes;
  cm_slot *survivors;    /* capped mode: scratch of cap entries for compaction */
  uint64_t accesses, compactions, forgotten;
  int failed;
};

static uint64_t round_up64(uint64_t n) { return (n + 63) / 64 * 64; }

/* Holes in words [0, w). */
static inline uint64_t fen_prefix(const uint32_t *fen, uint64_t w)
{
  uint64_t s = 0;
  for (uint64_t i = w; i; i &= i - 1) s += fen[i];
  return s;
}

static inline void fen_add_one(uint32_t *fen, uint64_t nwords, uint64_t w)
{
  for (uint64_t i = w + 1; i <= nwords; i += i & (~i + 1)) fen[i]++;
}

static int alloc_window(uint64_t window, uint64_t **holes, uint32_t **fen)
{
  uint64_t nwords = window / 64;
  *holes = calloc(nwords, sizeof **holes);
  *fen = calloc(nwords + 1, sizeof **fen);
  if (!*holes || !*fen) {
    free(*holes);
    free(*fen);
    return -1;
  }
  return 0;
}

sp_cm_rd *sp_cm_rd_create(uint64_t max_tracked)
{
    if (max_tracked > (UINT64_C(1) << 30)) return NULL; /* fen[] counts are 32-bit */
  sp_cm_rd *rd = calloc(1, sizeof *rd);
  if (!rd) return NULL;
  rd->cap = max_tracked;
  uint64_t window = MIN_WINDOW;
  if (max_tracked) {
    /* Between compactions up to `window` units can be live; the map keeps load <= 1/2. */
    window = round_up64(2 * max_tracked);
    if (window < MIN_WINDOW) window = MIN_WINDOW;
    rd->survivors = malloc(max_tracked * sizeof *rd->survivors);
  }
  rd->nwords = window / 64;
  if ((max_tracked && !rd->survivors) ||
      cm_map_init(&rd->map, max_tracked ? 2 * window : MIN_WINDOW) != 0) {
    free(rd->survivors);
    free(rd);
    return NULL;
  }
  if (alloc_window(window, &rd->holes, &rd->fen) != 0) {
    free(rd->map.slots);
    free(rd->survivors);
    free(rd);
    return NULL;
  }
  return rd;
}

void sp_cm_rd_free(sp_cm_rd *rd)
{
  if (!rd) return;
  free(rd->map.slots);
  free(rd->holes);
  free(rd->fen);
  free(rd->survivors);
  free(rd);
}

int sp_cm_rd_failed(const sp_cm_rd *rd) { return rd->failed; }

void sp_cm_rd_get_stats(const sp_cm_rd *rd, sp_cm_rd_stats *out)
{
  out->accesses = rd->accesses;
  out->tracked = rd->map.count;
  out->window = rd->nwords * 64;
  out->compactions = rd->compactions;
  out->forgotten = rd->forgotten;
  out->memory_bytes = sizeof *rd + (rd->map.mask + 1) * sizeof(cm_slot) +
                      rd->nwords * sizeof(uint64_t) + (rd->nwords + 1) * sizeof(uint32_t) +
                      rd->cap * sizeof(cm_slot);
}

/* Renumber the tracked units 0..n-1 by age (see the file comment). 0, or -1 with nothing
 * changed when the wider window cannot be allocated. */
static int compact(sp_cm_rd *rd)
{
  uint64_t live = rd->map.count;
  uint64_t *new_holes = NULL;
  uint32_t *new_fen = NULL;
  uint64_t new_nwords = rd->nwords;
  if (!rd->cap && 2 * live > rd->nwords * 64) {
    new_nwords = round_up64(2 * live) / 64;
    if (new_nwords > (UINT64_C(1) << 26)) return -1; /* window < 2^32: fen[] counts are 32-bit */
    if (alloc_window(new_nwords * 64, &new_holes, &new_fen) != 0) return -1;
  }

  /* fen[] becomes plain per-word prefix counts: fen[w] = holes in words [0, w). */
  uint32_t *prefix = rd->fen;
  uint64_t acc = 0;
  for (uint64_t w = 0; w < rd->nwords; w++) {
    prefix[w] = (uint32_t)acc;
    acc += (uint64_t)__builtin_popcountll(rd->holes[w]);
  }
  cm_slot *slots = rd->map.slots;
  uint64_t kept = live;
  if (rd->cap && live > rd->cap) kept = rd->cap;
  uint64_t first_kept_rank = live - kept; /* capped: ranks below have >= cap units after them */
  int forgetting = kept < live;
  uint64_t n_survivors = 0;
  for (uint64_t i = 0; i <= rd->map.mask; i++) {
    if (slots[i].val == CM_EMPTY) continue;
    uint64_t t = slots[i].val, w = t >> 6, below = (UINT64_C(1) << (t & 63)) - 1;
    uint64_t rank = t - prefix[w] - (uint64_t)__builtin_popcountll(rd->holes[w] & below);
    if (!forgetting) {
      slots[i].val = rank;
    } else if (rank >= first_kept_rank) {
      rd->survivors[n_survivors].key = slots[i].key;
      rd->survivors[n_survivors].val = rank - first_kept_rank;
      n_survivors++;
    }
  }
  if (forgetting) {
    /* Rebuilding is simpler than erasing most of the table and costs the same O(table). */
    cm_map_clear(&rd->map);
    for (uint64_t i = 0; i < n_survivors; i++) {
      cm_slot *s = cm_map_probe(&rd->map, rd->survivors[i].key);
      *s = rd->survivors[i];
      rd->map.count++;
    }
    rd->forgotten += live - kept;
  }

  if (new_holes) {
    free(rd->holes);
    free(rd->fen);
    rd->holes = new_holes;
    rd->fen = new_fen;
    rd->nwords = new_nwords;
  } else {
    memset(rd->holes, 0, rd->nwords * sizeof *rd->holes);
    memset(rd->fen, 0, (rd->nwords + 1) * sizeof *rd->fen);
  }
  rd->now = kept;
  rd->total_holes = 0;
  rd->compactions++;
  return 0;
}

uint64_t sp_cm_rd_access(sp_cm_rd *rd, uint64_t unit)
{
  if (rd->now == rd->nwords * 64 && compact(rd) != 0) {
    rd->failed = 1;
    return SP_CM_RD_NOMEM;
  }
  /* Uncapped: keep the load <= 1/2 (capped maps were sized for the whole window). */
  if (!rd->cap && 2 * (rd->map.count + 1) > rd->map.mask + 1 &&
      cm_map_rehash(&rd->map, 2 * (rd->map.mask + 1)) != 0) {
    rd->failed = 1;
    return SP_CM_RD_NOMEM;
  }
  rd->accesses++;
  cm_slot *s = cm_map_probe(&rd->map, unit);
  if (s->val == CM_EMPTY) {
    s->key = unit;
    s->val = rd->now++;
    rd->map.count++;
    return SP_CM_RD_INF;
  }
  uint64_t t = s->val, w = t >> 6, bit = UINT64_C(1) << (t & 63);
  uint64_t holes_upto_t = fen_prefix(rd->fen, w) + (uint64_t)__builtin_popcountll(rd->holes[w] & (bit - 1));
  uint64_t holes_after_t = rd->total_holes - holes_upto_t;
  uint64_t distance = rd->now - t - 1 - holes_after_t;
  rd->holes[w] |= bit;
  fen_add_one(rd->fen, rd->nwords, w);
  rd->total_holes++;
  s->val = rd->now++;
  if (rd->cap && distance >= rd->cap) return SP_CM_RD_INF;
  return distance;
}

/* ---- reuse distance per set ------------------------------------------------------------------ */

struct sp_cm_rd_sets {
  uint64_t sets;
  uint64_t cap;
  sp_cm_set_index_fn index_fn;
  void *index_ctx;
  sp_cm_rd **per_set; /* NULL until the set's first access */
};

sp_cm_rd_sets *sp_cm_rd_sets_create(uint64_t sets, uint64_t max_tracked_per_set,
                                    sp_cm_set_index_fn index_fn, void *index_ctx)
{
  if (sets == 0 || sets > (UINT64_C(1) << 32)) return NULL;
  sp_cm_rd_sets *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->per_set = calloc(sets, sizeof *s->per_set);
  if (!s->per_set) {
    free(s);
    return NULL;
  }
  s->sets = sets;
  s->cap = max_tracked_per_set;
  s->index_fn = index_fn ? index_fn : sp_cm_set_index_mod;
  s->index_ctx = index_ctx;
  return s;
}

uint64_t sp_cm_rd_sets_access(sp_cm_rd_sets *s, uint64_t unit)
{
  uint64_t set = s->index_fn(unit, s->sets, s->index_ctx);
  sp_cm_rd *rd = s->per_set[set];
  if (!rd) {
    rd = sp_cm_rd_create(s->cap);
    if (!rd) return SP_CM_RD_NOMEM;
    s->per_set[set] = rd;
  }
  return sp_cm_rd_access(rd, unit);
}

void sp_cm_rd_sets_free(sp_cm_rd_sets *s)
{
  if (!s) return;
  for (uint64_t i = 0; i < s->sets; i++) sp_cm_rd_free(s->per_set[i]);
  free(s->per_set);
  free(s);
}
