/* LRU models: the brute-force LRU stack (reference), a fully associative LRU cache and a
 * set-associative LRU cache. */
#include "schedpredict/cachemodel.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cachemodel/cm_hashmap.h"
#include "cachemodel/cm_lru.h"

/* ---- brute-force LRU stack ---------------------------------------------------------------- */

struct sp_cm_lru_stack {
  uint64_t *unit; /* unit[0] is the most recently used */
  uint64_t depth, capacity;
};

sp_cm_lru_stack *sp_cm_lru_stack_create(void)
{
  sp_cm_lru_stack *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->capacity = 64;
  s->unit = malloc(s->capacity * sizeof *s->unit);
  if (!s->unit) {
    free(s);
    return NULL;
  }
  return s;
}

uint64_t sp_cm_lru_stack_access(sp_cm_lru_stack *s, uint64_t unit)
{
  uint64_t pos = 0;
  while (pos < s->depth && s->unit[pos] != unit) pos++;
  uint64_t distance = pos; /* units above it = distinct units used since its last access */
  if (pos == s->depth) {
    if (s->depth == s->capacity) {
      uint64_t *bigger = realloc(s->unit, 2 * s->capacity * sizeof *s->unit);
      if (!bigger) return SP_CM_RD_NOMEM;
      s->unit = bigger;
      s->capacity *= 2;
    }
    s->depth++;
    distance = SP_CM_RD_INF;
  }
  memmove(&s->unit[1], &s->unit[0], pos * sizeof *s->unit);
  s->unit[0] = unit;
  return distance;
}

void sp_cm_lru_stack_free(sp_cm_lru_stack *s)
{
  if (!s) return;
  free(s->unit);
  free(s);
}

/* Memory for a cache's tables. Lookups land anywhere in them, so a large table goes on
 * transparent huge pages where the kernel offers them (madvise mode): with 4 KB pages most
 * lookups in a 50 MB L2 model also miss the TLB. */
void *sp_cm_table_alloc(size_t bytes)
{
  const size_t huge = (size_t)2 << 20;
  size_t align = bytes >= huge ? huge : 64;
  size_t rounded = (bytes + align - 1) / align * align;
  void *p = aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
  if (p && align == huge) madvise(p, rounded, MADV_HUGEPAGE); /* a hint: failure changes nothing */
#endif
  return p;
}

/* ---- fully associative LRU (the structure and its lookup: cm_lru.h) ------------------ */

/* The node pool first, then the slots: both 64-byte aligned from a 64-byte aligned start. */
static size_t lru_node_bytes(uint64_t capacity)
{
  return ((size_t)capacity * sizeof(lru_node) + 63) / 64 * 64;
}

size_t sp_cm_lru_table_bytes(uint64_t capacity)
{
  if (capacity == 0 || capacity >= (UINT64_C(1) << 31)) return 0;
  return lru_node_bytes(capacity) + (size_t)cm_pow2_at_least(2 * capacity) * sizeof(lru_slot);
}

static sp_cm_lru *lru_init(uint64_t sets, uint64_t ways, unsigned group_shift, void *tables,
                          int owns)
{
  const uint64_t capacity = sets * ways;
  sp_cm_lru *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->set = sets == 1 ? &c->one : malloc(sets * sizeof *c->set);
  if (!c->set) {
    free(c);
    return NULL;
  }
  uint64_t slots = cm_pow2_at_least(2 * capacity);
  unsigned bits = 0;
  while ((UINT64_C(1) << bits) < slots) bits++;
  c->node = tables;
  c->slot = (lru_slot *)((char *)tables + lru_node_bytes(capacity));
  c->owns_tables = owns;
  c->mask = slots - 1;
  c->shift = 32 - bits;
  c->capacity = (uint32_t)capacity;
  c->ways = (uint32_t)ways;
  c->nsets = (uint32_t)sets;
  c->ways_shift = 31;
  if (sets > 1)
    for (c->ways_shift = 0; (UINT64_C(1) << c->ways_shift) < ways; c->ways_shift++) {}
  c->group_shift = group_shift;
  memset(c->slot, 0, slots * sizeof *c->slot);
  for (uint64_t s = 0; s < sets; s++) c->set[s] = (lru_set){NIL, NIL, 0};
  return c;
}

static sp_cm_lru *lru_create(uint64_t sets, uint64_t ways, unsigned group_shift)
{
  size_t bytes = sp_cm_lru_table_bytes(sets * ways);
  if (!bytes) return NULL;
  void *tables = sp_cm_table_alloc(bytes);
  if (!tables) return NULL;
  sp_cm_lru *c = lru_init(sets, ways, group_shift, tables, 1);
  if (!c) free(tables);
  return c;
}

sp_cm_lru *sp_cm_lru_create(uint64_t capacity)
{
  return capacity ? lru_create(1, capacity, 0) : NULL;
}

sp_cm_lru *sp_cm_lru_create_sets(uint64_t sets, uint32_t ways, unsigned group_shift)
{
  if (sets == 0 || ways == 0 || (ways & (ways - 1)) || group_shift > 63 ||
      sets > (UINT64_C(1) << 31) / ways)
    return NULL;
  return lru_create(sets, ways, group_shift);
}

sp_cm_lru *sp_cm_lru_create_at(uint64_t capacity, void *tables)
{
  if (!sp_cm_lru_table_bytes(capacity) || !tables || ((uintptr_t)tables & 63)) return NULL;
  return lru_init(1, capacity, 0, tables, 0);
}

uint64_t *sp_cm_lru_lookup(sp_cm_lru *c, uint64_t unit, sp_cm_lookup_mode mode,
                           sp_cm_lookup *res)
{
  return cm_lru_lookup(c, unit, mode, res);
}

int sp_cm_lru_access(sp_cm_lru *c, uint64_t unit)
{
  sp_cm_lookup r;
  cm_lru_lookup(c, unit, SP_CM_LOOKUP_INSERT, &r);
  return r.hit;
}

/* Empties the cache. A cache reused for a short simulation (the ranking's screening fills a few
 * thousand of an L2's 128 k slots) empties only the probe runs of its members: every occupied
 * slot lies in the run that starts at some member's home, so clearing each member's run from its
 * home up to the first empty slot clears them all. */
void sp_cm_lru_clear(sp_cm_lru *c)
{
  uint64_t used = 0;
  for (uint32_t s = 0; s < c->nsets; s++) used += c->set[s].used;
  if (used * 8 < c->mask + 1) {
    for (uint32_t s = 0; s < c->nsets; s++) {
      const uint32_t first = (uint32_t)((uint64_t)s << c->ways_shift);
      for (uint32_t i = first; i < first + c->set[s].used; i++)
        for (uint64_t j = lru_home(c, lru_hash(c->node[i].unit)); c->slot[j].node; j = (j + 1) & c->mask)
          c->slot[j].node = 0;
    }
  } else {
    memset(c->slot, 0, (size_t)(c->mask + 1) * sizeof *c->slot);
  }
  for (uint32_t s = 0; s < c->nsets; s++) c->set[s] = (lru_set){NIL, NIL, 0};
}

uint32_t sp_cm_lru_ways(const sp_cm_lru *c)
{
  return c->ways;
}

void sp_cm_lru_prefetch(const sp_cm_lru *c, uint64_t unit)
{
  cm_lru_prefetch(c, unit);
}

size_t sp_cm_lru_bytes_for(uint64_t capacity)
{
  return sizeof(sp_cm_lru) + sp_cm_lru_table_bytes(capacity);
}

size_t sp_cm_lru_memory_bytes(const sp_cm_lru *c)
{
  return sizeof *c + (c->nsets > 1 ? c->nsets * sizeof *c->set : 0) +
         (c->owns_tables ? sp_cm_lru_table_bytes(c->capacity) : 0);
}

void sp_cm_lru_free(sp_cm_lru *c)
{
  if (!c) return;
  if (c->owns_tables) free(c->node); /* the start of the tables */
  if (c->set != &c->one) free(c->set);
  free(c);
}

/* ---- set index functions ------------------------------------------------------------------------ */

uint64_t sp_cm_set_index_mod(uint64_t unit, uint64_t sets, void *ctx)
{
  (void)ctx;
  return (sets & (sets - 1)) == 0 ? unit & (sets - 1) : unit % sets;
}

uint64_t sp_cm_set_index_hash(uint64_t unit, uint64_t sets, void *ctx)
{
  unsigned group_shift = ctx ? *(const unsigned *)ctx : 0;
  return cm_set_of_hash(cm_mix64(unit >> group_shift), sets);
}

uint64_t sp_cm_set_index_xorfold(uint64_t unit, uint64_t sets, void *ctx)
{
  (void)ctx;
  unsigned bits = 0;
  while (bits < 63 && (UINT64_C(1) << bits) < sets) bits++;
  if (bits == 0) return 0;
  uint64_t folded = 0;
  for (uint64_t u = unit; u; u >>= bits) folded ^= u & ((UINT64_C(1) << bits) - 1);
  return folded % sets;
}

/* ---- set-associative LRU ------------------------------------------------------------------------ */

typedef struct sa_way {
  uint64_t tag;
  uint64_t payload; /* the caller's (sp_cm_setassoc_lookup) */
} sa_way;

struct sp_cm_setassoc {
  uint64_t sets;
  uint32_t ways;
  sp_cm_set_index_fn index_fn;
  void *index_ctx;
  sa_way *way;      /* sets x ways, each set MRU first */
  uint32_t *filled; /* valid ways per set */
};

sp_cm_setassoc *sp_cm_setassoc_create(uint64_t sets, uint32_t ways, sp_cm_set_index_fn index_fn,
                                      void *index_ctx)
{
  if (sets == 0 || ways == 0 || sets > SIZE_MAX / sizeof(sa_way) / ways) return NULL;
  sp_cm_setassoc *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->way = sp_cm_table_alloc(sets * ways * sizeof *c->way);
  c->filled = calloc(sets, sizeof *c->filled);
  if (!c->way || !c->filled) {
    free(c->way);
    free(c->filled);
    free(c);
    return NULL;
  }
  c->sets = sets;
  c->ways = ways;
  c->index_fn = index_fn ? index_fn : sp_cm_set_index_mod;
  c->index_ctx = index_ctx;
  return c;
}

int sp_cm_setassoc_access(sp_cm_setassoc *c, uint64_t unit)
{
  sp_cm_lookup r;
  sp_cm_setassoc_lookup(c, unit, SP_CM_LOOKUP_INSERT, &r);
  return r.hit;
}

uint64_t *sp_cm_setassoc_lookup(sp_cm_setassoc *c, uint64_t unit, sp_cm_lookup_mode mode,
                                sp_cm_lookup *res)
{
  uint64_t set = c->index_fn(unit, c->sets, c->index_ctx);
  sa_way *way = &c->way[set * c->ways];
  uint32_t n = c->filled[set];
  uint32_t pos = 0;
  while (pos < n && way[pos].tag != unit) pos++;
  int hit = pos < n;
  if (res) {
    res->hit = hit;
    res->evicted = 0;
  }
  if (hit && mode == SP_CM_LOOKUP_PEEK) return &way[pos].payload;
  if (!hit && mode != SP_CM_LOOKUP_INSERT) return NULL;
  sa_way w = {unit, 0};
  if (hit) {
    w = way[pos];
  } else if (n < c->ways) {
    c->filled[set] = n + 1;
    pos = n;
  } else {
    pos = n - 1; /* the LRU way is overwritten */
    if (res) {
      res->evicted = 1;
      res->victim = way[pos].tag;
      res->victim_payload = way[pos].payload;
    }
  }
  memmove(&way[1], &way[0], pos * sizeof *way);
  way[0] = w;
  return &way[0].payload;
}

void sp_cm_setassoc_clear(sp_cm_setassoc *c)
{
  memset(c->filled, 0, c->sets * sizeof *c->filled);
}

void sp_cm_setassoc_prefetch(const sp_cm_setassoc *c, uint64_t unit)
{
#if defined(__GNUC__)
  uint64_t set = c->index_fn(unit, c->sets, c->index_ctx);
  __builtin_prefetch(&c->way[set * c->ways]);
  __builtin_prefetch(&c->filled[set]);
#else
  (void)c;
  (void)unit;
#endif
}

size_t sp_cm_setassoc_bytes_for(uint64_t sets, uint32_t ways)
{
  return sizeof(sp_cm_setassoc) + (size_t)sets * ways * sizeof(sa_way) + (size_t)sets * sizeof(uint32_t);
}

size_t sp_cm_setassoc_memory_bytes(const sp_cm_setassoc *c)
{
  return sizeof *c + (size_t)c->sets * c->ways * sizeof *c->way +
         (size_t)c->sets * sizeof *c->filled;
}

void sp_cm_setassoc_free(sp_cm_setassoc *c)
{
  if (!c) return;
  free(c->way);
  free(c->filled);
  free(c);
}
