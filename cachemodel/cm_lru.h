/* Internal to cachemodel/: the fully associative LRU (lru.c), its structure and lookup here so
 * that memsys.c's simulation inlines them. */
#ifndef SP_CM_LRU_H
#define SP_CM_LRU_H

#include <stdint.h>

#include "schedpredict/cachemodel.h"

/* ---- LRU: compact hash index + doubly linked list over a node pool, one list per set ----------
 * The index is open-addressed (linear probing, load <= 1/2, backward-shift erase) with 8-byte
 * slots: the top 32 bits of the unit's Fibonacci hash and the node index + 1 (0 = empty). The
 * hash bits give a slot's home without reading its node and reject nearly every non-matching
 * slot; a match is confirmed on the node's unit. A full H100 L2 (1.6 M sectors) then takes
 * 32 MB of index + 39 MB of nodes instead of 64 + 39 MB, which lets two refinement models fit
 * the memory budget, and eviction prefetches the next victim's predecessor and index slot, so a
 * stream of misses (the usual L2 traffic) waits on fewer host cache misses. (Prefetching a hit's
 * node half-way through memsys.c's pipeline was measured: 10 % more CPU time, not kept.)
 * Fully associative: one list over all nodes. Hashed set-associative (sp_cm_lru_create_sets):
 * one index over all units, one list per set, a miss evicting its set's LRU unit; the same O(1)
 * work per access whatever the ways. */
#define NIL UINT32_MAX
#define LRU_PHI UINT64_C(0x9E3779B97F4A7C15)

typedef struct lru_node {
  uint64_t unit;
  uint64_t payload;    /* the caller's (sp_cm_lru_lookup) */
  uint32_t prev, next; /* prev towards MRU, next towards LRU */
} lru_node;

typedef struct lru_slot {
  uint32_t hash; /* top 32 bits of unit * LRU_PHI */
  uint32_t node; /* node index + 1; 0: empty */
} lru_slot;

/* One set's list: its MRU and LRU nodes and how many of its nodes are in use. A set's nodes are
 * node[s << ways_shift ...], so a node's set is its index >> ways_shift. */
typedef struct lru_set {
  uint32_t mru, lru, used;
} lru_set;

struct sp_cm_lru {
  lru_slot *slot;
  uint64_t mask;  /* slots - 1 */
  unsigned shift; /* 32 - log2(slots) */
  lru_node *node;
  uint32_t capacity; /* sets x ways */
  uint32_t ways;     /* a set's nodes: capacity when fully associative, else a power of two */
  uint32_t nsets;
  unsigned ways_shift;  /* log2(ways); 31 when fully associative (every node in set 0) */
  unsigned group_shift; /* units u >> group_shift share a set (sp_cm_set_index_hash) */
  lru_set *set;         /* &one when fully associative */
  lru_set one;
  int owns_tables; /* 0: slot and node lie in the caller's memory (sp_cm_lru_create_at) */
};

/* The splitmix64 finalizer: a hash independent of the index's Fibonacci one, whose high bits
 * place the table slots. The hashed set-associative LRU takes a set from its high half, and
 * memsys.c's L2 sampling its sample from its low bits, so a sample keeps whole sets. */
static inline uint64_t cm_mix64(uint64_t x)
{
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

/* sp_cm_set_index_hash's formula: the hash's high 32 bits scaled to [0, sets). */
static inline uint32_t cm_set_of_hash(uint64_t mixed, uint64_t sets)
{
  return (uint32_t)(((mixed >> 32) * sets) >> 32);
}

/* `hashed` (c->nsets > 1), a constant where these are inlined, keeps the set arithmetic out of
 * the fully associative caches' code (the L1s: 8 % of the ranking's CPU time on divergence). */
/* The set of unit in a hashed set-associative LRU (sp_cm_set_index_hash with its group_shift). */
static inline uint32_t lru_set_index(const sp_cm_lru *c, uint64_t unit)
{
  return cm_set_of_hash(cm_mix64(unit >> c->group_shift), c->nsets);
}

static inline lru_set *lru_set_of_unit(sp_cm_lru *c, uint64_t unit, const int hashed)
{
  return hashed ? &c->set[lru_set_index(c, unit)] : &c->one;
}

static inline lru_set *lru_set_of_node(sp_cm_lru *c, uint32_t i, const int hashed)
{
  return hashed ? &c->set[i >> c->ways_shift] : &c->one;
}

static inline uint32_t lru_hash(uint64_t unit)
{
  return (uint32_t)((unit * LRU_PHI) >> 32);
}

/* (shift is 32 for a one-slot table: a 64-bit shift then gives 0 without a branch) */
static inline uint64_t lru_home(const sp_cm_lru *c, uint32_t hash)
{
  return (uint64_t)hash >> c->shift;
}

/* The slot holding unit, or the empty slot where it would go. */
static inline uint64_t lru_probe(const sp_cm_lru *c, uint64_t unit, uint32_t hash)
{
  uint64_t i = lru_home(c, hash);
  for (;;) {
    lru_slot s = c->slot[i];
    if (s.node == 0 || (s.hash == hash && c->node[s.node - 1].unit == unit)) return i;
    i = (i + 1) & c->mask;
  }
}

/* The slot of node i, whose unit hashes to hash (no node is read). */
static inline uint64_t lru_slot_of(const sp_cm_lru *c, uint32_t i, uint32_t hash)
{
  uint64_t j = lru_home(c, hash);
  while (c->slot[j].node != i + 1) j = (j + 1) & c->mask;
  return j;
}

/* Removes the occupied slot `hole` by shifting later members of its probe run back. Returns the
 * slot left empty: the only one that was occupied before. */
static inline uint64_t lru_erase(sp_cm_lru *c, uint64_t hole)
{
  uint64_t j = hole;
  for (;;) {
    j = (j + 1) & c->mask;
    lru_slot next = c->slot[j];
    if (next.node == 0) break;
    uint64_t home = lru_home(c, next.hash);
    /* next may move into the hole unless its home lies cyclically in (hole, j]. */
    int home_in_between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!home_in_between) {
      c->slot[hole] = next;
      hole = j;
    }
  }
  c->slot[hole].node = 0;
  return hole;
}

/* A list's ends are known from its set (mru, lru), not from their nodes: the MRU node's prev
 * and the LRU node's next are left stale, so that evicting the LRU unit reads its node but
 * writes no other (with sets, its predecessor is rarely in the host's cache). */
static inline void list_unlink(sp_cm_lru *c, uint32_t i, const int hashed)
{
  const lru_node *n = &c->node[i];
  lru_set *st = lru_set_of_node(c, i, hashed);
  const int is_mru = i == st->mru, is_lru = i == st->lru;
  if (is_mru && is_lru) {
    st->mru = st->lru = NIL;
    return;
  }
  if (is_mru) st->mru = n->next;
  else if (!is_lru) c->node[n->prev].next = n->next;
  if (is_lru) st->lru = n->prev;
  else if (!is_mru) c->node[n->next].prev = n->prev;
}

static inline void list_push_mru(sp_cm_lru *c, uint32_t i, const int hashed)
{
  lru_node *n = &c->node[i];
  lru_set *st = lru_set_of_node(c, i, hashed);
  n->prev = NIL;
  n->next = st->mru;
  if (st->mru != NIL) c->node[st->mru].prev = i;
  else st->lru = i;
  st->mru = i;
}

/* Inserts unit (hash: lru_hash(unit)) as MRU with payload 0 into si, the empty slot its probe
 * ended on, evicting the LRU unit of its set when that is full. */
static inline uint64_t *lru_insert(sp_cm_lru *c, uint64_t unit, uint32_t hash, uint64_t si,
                                   sp_cm_lookup *res, const int hashed)
{
  uint32_t i;
  lru_set *st = lru_set_of_unit(c, unit, hashed);
  if (st->used < c->ways) {
    i = (uint32_t)((st - c->set) << c->ways_shift) + st->used++;
  } else {
    i = st->lru;
    lru_node *v = &c->node[i];
    list_unlink(c, i, hashed);
    if (res) {
      res->evicted = 1;
      res->victim = v->unit;
      res->victim_payload = v->payload;
    }
    /* The erase empties one slot that was occupied; every slot from unit's home up to si was,
     * so unit goes there if it lies in between, else still into si. */
    uint64_t hole = lru_erase(c, lru_slot_of(c, i, lru_hash(v->unit)));
    uint64_t home = lru_home(c, hash);
    if (((hole - home) & c->mask) < ((si - home) & c->mask)) si = hole;
#if defined(__GNUC__)
    if (!hashed && st->lru != NIL) { /* the next victim: its predecessor and its slot */
      const lru_node *t = &c->node[st->lru];
      if (t->prev != NIL) __builtin_prefetch(&c->node[t->prev]);
      __builtin_prefetch(&c->slot[lru_home(c, lru_hash(t->unit))]);
    }
#endif
  }
  c->node[i].unit = unit;
  c->node[i].payload = 0;
  c->slot[si].hash = hash;
  c->slot[si].node = i + 1;
  list_push_mru(c, i, hashed);
  return &c->node[i].payload;
}

/* sp_cm_lru_lookup (cachemodel.h), inlined into memsys.c's simulation. */
static inline uint64_t *cm_lru_lookup_as(sp_cm_lru *c, uint64_t unit, sp_cm_lookup_mode mode,
                                         sp_cm_lookup *res, const int hashed)
{
  if (res) res->hit = res->evicted = 0;
  uint32_t hash = lru_hash(unit);
  uint64_t si = lru_probe(c, unit, hash);
  if (c->slot[si].node) {
    uint32_t i = c->slot[si].node - 1;
    if (mode != SP_CM_LOOKUP_PEEK && i != lru_set_of_node(c, i, hashed)->mru) {
      list_unlink(c, i, hashed);
      list_push_mru(c, i, hashed);
    }
    if (res) res->hit = 1;
    return &c->node[i].payload;
  }
  if (mode != SP_CM_LOOKUP_INSERT) return NULL;
  return lru_insert(c, unit, hash, si, res, hashed);
}

static inline uint64_t *cm_lru_lookup(sp_cm_lru *c, uint64_t unit, sp_cm_lookup_mode mode,
                                      sp_cm_lookup *res)
{
  return c->nsets > 1 ? cm_lru_lookup_as(c, unit, mode, res, 1)
                      : cm_lru_lookup_as(c, unit, mode, res, 0);
}

/* Always inlined: GCC deems a function that only prefetches free of side effects (pure), and
 * drops calls to it that it has not inlined yet (memsys.c's prefetch loops vanished that way). */
#if defined(__GNUC__)
#define CM_ALWAYS_INLINE __attribute__((always_inline))
#else
#define CM_ALWAYS_INLINE
#endif

/* The unit's index slot; with sets also its set's MRU node (a hit or an insertion links in
 * front of it) and LRU node (the victim of a miss): with 2,000 sets they are rarely still in
 * the host's cache from the set's last access, as the single list's ends are. */
static inline CM_ALWAYS_INLINE void cm_lru_prefetch(const sp_cm_lru *c, uint64_t unit)
{
#if defined(__GNUC__)
  __builtin_prefetch(&c->slot[lru_home(c, lru_hash(unit))]);
  if (c->nsets > 1) {
    const lru_set *st = &c->set[lru_set_index(c, unit)];
    if (st->mru != NIL) __builtin_prefetch(&c->node[st->mru]);
    if (st->used == c->ways) __builtin_prefetch(&c->node[st->lru]);
  }
#else
  (void)c;
  (void)unit;
#endif
}

/* With sets, the index slot of the unit's set's LRU unit, the victim should the unit miss: its
 * node, which cm_lru_prefetch fetched, names it, so this is a second stage some time after
 * that one. (The single list prefetches its next victim when it evicts, lru_insert.) */
static inline CM_ALWAYS_INLINE void cm_lru_prefetch_victim(const sp_cm_lru *c, uint64_t unit)
{
#if defined(__GNUC__)
  if (c->nsets <= 1) return;
  const lru_set *st = &c->set[lru_set_index(c, unit)];
  if (st->used == c->ways) __builtin_prefetch(&c->slot[lru_home(c, lru_hash(c->node[st->lru].unit))]);
#else
  (void)c;
  (void)unit;
#endif
}

#endif
