/* Internal to cachemodel/: an open-addressing (linear probing) map uint64_t -> uint64_t.
 * A slot is empty when its value is CM_EMPTY, so every key is allowed and callers never store
 * CM_EMPTY as a value (timestamps and node indices never reach it). Capacity is a power of two;
 * callers keep the load at most 1/2, which keeps probe sequences short. Erase uses backward
 * shifting, so there are no tombstones and lookups never degrade. */
#ifndef SP_CM_HASHMAP_H
#define SP_CM_HASHMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* lru.c: aligned memory for large cache tables, on huge pages where available */
void *sp_cm_table_alloc(size_t bytes);

#define CM_EMPTY UINT64_MAX

typedef struct cm_slot {
  uint64_t key;
  uint64_t val;
} cm_slot;

typedef struct cm_map {
  cm_slot *slots;
  uint64_t mask;   /* capacity - 1 */
  unsigned shift;  /* 64 - log2(capacity) */
  uint64_t count;
} cm_map;

/* Fibonacci hashing: the top bits of key * 2^64/phi, good for strided unit sequences. */
static inline uint64_t cm_home(const cm_map *m, uint64_t key)
{
  return (key * UINT64_C(0x9E3779B97F4A7C15)) >> m->shift;
}

static inline uint64_t cm_pow2_at_least(uint64_t n)
{
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

/* capacity is rounded up to a power of two >= 2. Returns 0, or -1 on allocation failure. */
static inline int cm_map_init(cm_map *m, uint64_t capacity)
{
  capacity = cm_pow2_at_least(capacity < 2 ? 2 : capacity);
  m->slots = sp_cm_table_alloc(capacity * sizeof *m->slots);
  if (!m->slots) return -1;
  for (uint64_t i = 0; i < capacity; i++) m->slots[i].val = CM_EMPTY;
  m->mask = capacity - 1;
  unsigned bits = 0;
  while ((UINT64_C(1) << bits) < capacity) bits++;
  m->shift = 64 - bits;
  m->count = 0;
  return 0;
}

static inline void cm_map_clear(cm_map *m)
{
  for (uint64_t i = 0; i <= m->mask; i++) m->slots[i].val = CM_EMPTY;
  m->count = 0;
}

/* The slot holding key, or the empty slot where it would go (val == CM_EMPTY then; the caller
 * fills key and val and increments count). Requires at least one empty slot. */
static inline cm_slot *cm_map_probe(const cm_map *m, uint64_t key)
{
  uint64_t i = cm_home(m, key);
  for (;;) {
    cm_slot *s = &m->slots[i];
    if (s->val == CM_EMPTY || s->key == key) return s;
    i = (i + 1) & m->mask;
  }
}

/* Remove the (occupied) slot s by shifting later members of its probe run back. */
static inline void cm_map_erase(cm_map *m, cm_slot *s)
{
  uint64_t hole = (uint64_t)(s - m->slots);
  uint64_t j = hole;
  for (;;) {
    j = (j + 1) & m->mask;
    cm_slot *next = &m->slots[j];
    if (next->val == CM_EMPTY) break;
    uint64_t home = cm_home(m, next->key);
    /* next may move into the hole unless its home lies cyclically in (hole, j]. */
    int home_in_between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!home_in_between) {
      m->slots[hole] = *next;
      hole = j;
    }
  }
  m->slots[hole].val = CM_EMPTY;
  m->count--;
}

/* Rehash into a table of new_capacity (power of two, > 2 * count). 0, or -1 (map unchanged). */
static inline int cm_map_rehash(cm_map *m, uint64_t new_capacity)
{
  cm_map bigger;
  if (cm_map_init(&bigger, new_capacity) != 0) return -1;
  for (uint64_t i = 0; i <= m->mask; i++) {
    if (m->slots[i].val == CM_EMPTY) continue;
    cm_slot *s = cm_map_probe(&bigger, m->slots[i].key);
    *s = m->slots[i];
    bigger.count++;
  }
  free(m->slots);
  *m = bigger;
  return 0;
}

#endif
