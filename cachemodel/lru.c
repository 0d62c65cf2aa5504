/* LRU models: the brute-force LRU stack (reference), a fully associative LRU cache and a
 * set-associative LRU cache. */
#include "schedpredict/cachemodel.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cachemodel/cm_hashmap.h"

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

/* ---- fully associative LRU: hash map + doubly linked list over a node pool -------------------- */

#define NIL UINT32_MAX

typedef struct lru_node {
  uint64_t unit;
  uint64_t payload;    /* the caller's (sp_cm_lru_lookup) */
  uint32_t prev, next; /* prev towards MRU, next towards LRU */
} lru_node;

struct sp_cm_lru {
  cm_map map; /* unit -> node index */
  lru_node *node;
  uint32_t capacity, used;
  uint32_t mru, lru;
};

sp_cm_lru *sp_cm_lru_create(uint64_t capacity)
{
  if (capacity == 0 || capacity >= NIL) return NULL;
  sp_cm_lru *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->node = sp_cm_table_alloc(capacity * sizeof *c->node);
  if (!c->node || cm_map_init(&c->map, 2 * capacity) != 0) {
    free(c->node);
    free(c);
    return NULL;
  }
  c->capacity = (uint32_t)capacity;
  c->mru = c->lru = NIL;
  return c;
}

static inline void list_unlink(sp_cm_lru *c, uint32_t i)
{
  lru_node *n = &c->node[i];
  if (n->prev != NIL) c->node[n->prev].next = n->next;
  else c->mru = n->next;
  if (n->next != NIL) c->node[n->next].prev = n->prev;
  else c->lru = n->prev;
}

static inline void list_push_mru(sp_cm_lru *c, uint32_t i)
{
  lru_node *n = &c->node[i];
  n->prev = NIL;
  n->next = c->mru;
  if (c->mru != NIL) c->node[c->mru].prev = i;
  else c->lru = i;
  c->mru = i;
}

int sp_cm_lru_access(sp_cm_lru *c, uint64_t unit)
{
  sp_cm_lookup r;
  sp_cm_lru_lookup(c, unit, SP_CM_LOOKUP_INSERT, &r);
  return r.hit;
}

uint64_t *sp_cm_lru_lookup(sp_cm_lru *c, uint64_t unit, sp_cm_lookup_mode mode,
                           sp_cm_lookup *res)
{
  if (res) res->hit = res->evicted = 0;
  cm_slot *s = cm_map_probe(&c->map, unit);
  if (s->val != CM_EMPTY) {
    uint32_t i = (uint32_t)s->val;
    if (mode != SP_CM_LOOKUP_PEEK && i != c->mru) {
      list_unlink(c, i);
      list_push_mru(c, i);
    }
    if (res) res->hit = 1;
    return &c->node[i].payload;
  }
  if (mode != SP_CM_LOOKUP_INSERT) return NULL;
  uint32_t i;
  if (c->used < c->capacity) {
    i = c->used++;
  } else {
    i = c->lru;
    list_unlink(c, i);
    if (res) {
      res->evicted = 1;
      res->victim = c->node[i].unit;
      res->victim_payload = c->node[i].payload;
    }
    cm_map_erase(&c->map, cm_map_probe(&c->map, c->node[i].unit));
    s = cm_map_probe(&c->map, unit);
  }
  c->node[i].unit = unit;
  c->node[i].payload = 0;
  s->key = unit;
  s->val = i;
  c->map.count++;
  list_push_mru(c, i);
  return &c->node[i].payload;
}

void sp_cm_lru_clear(sp_cm_lru *c)
{
  cm_map_clear(&c->map);
  c->used = 0;
  c->mru = c->lru = NIL;
}

void sp_cm_lru_prefetch(const sp_cm_lru *c, uint64_t unit)
{
#if defined(__GNUC__)
  __builtin_prefetch(&c->map.slots[cm_home(&c->map, unit)]);
#else
  (void)c;
  (void)unit;
#endif
}

size_t sp_cm_lru_bytes_for(uint64_t capacity)
{
  return sizeof(sp_cm_lru) + (size_t)capacity * sizeof(lru_node) +
         (size_t)cm_pow2_at_least(2 * capacity) * sizeof(cm_slot);
}

size_t sp_cm_lru_memory_bytes(const sp_cm_lru *c)
{
  return sizeof *c + (size_t)c->capacity * sizeof *c->node +
         (size_t)(c->map.mask + 1) * sizeof *c->map.slots;
}

void sp_cm_lru_free(sp_cm_lru *c)
{
  if (!c) return;
  free(c->map.slots);
  free(c->node);
  free(c);
}

/* ---- set index functions ------------------------------------------------------------------------ */

uint64_t sp_cm_set_index_mod(uint64_t unit, uint64_t sets, void *ctx)
{
  (void)ctx;
  return (sets & (sets - 1)) == 0 ? unit & (sets - 1) : unit % sets;
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
