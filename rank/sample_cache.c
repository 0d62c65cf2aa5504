/* Screening samples shared between candidates whose sampled traces are the same.
 *
 * The screening runs every candidate of the space on a short prefix of one SM's trace (about
 * 1,000 warp instructions). Many candidates differ only where that prefix does not reach: a
 * grid capped at 4 or 8 blocks per SM puts on SM 0 the same first blocks as the covering grid
 * when no more than that many are resident, and the first pass of their grid-stride loops is
 * the covering grid's; shapes whose lanes take the same iterations in the same order do too.
 * Their samples are the same instructions, and a memory model reset to empty answers the same
 * instructions with the same counts, so simulating the second one is wasted. On the default
 * spaces (one worker) 38 % of himeno's screening samples are such twins, 15 % of divergence's
 * and laplacian's, 14 % of heat3d's; recording and hashing cost about 4 % of a sample.
 *
 * So the screening records a sample's trace first and hashes every field the memory model and
 * the sampling sink read (SM, reference, array, direction, access size, lane mask, the active
 * lanes' addresses); a sample whose hash and model configuration are known takes the stored
 * result. The hash has 128 bits: per instruction, a sum over the lanes of their addresses
 * times random odd multipliers (a multilinear hash, in the low and high halves of 128-bit
 * products), chained by two multiplicative hashes. A collision of two different samples is the
 * only way a shared result could differ from simulating; for addresses below 2^48 its chance is
 * of the order of 2^-64 a pair of samples or less. The ranking does not depend on which
 * candidates share a worker or in which order they run: a stored result is the one simulating
 * would give. */
#include "rank/sample_cache.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SC_MUL0 UINT64_C(0x9E3779B97F4A7C15)
#define SC_MUL1 UINT64_C(0xC2B2AE3D27D4EB4F)

static inline void sc_mix(uint64_t h[2], uint64_t x) {
  h[0] = (h[0] ^ x) * SC_MUL0;
  h[1] = ((h[1] ^ x) * SC_MUL1) ^ (h[1] >> 29);
}

/* Odd per-lane multipliers (a splitmix64 sequence). A lane's address times its multiplier,
 * as a 128-bit product, adds its low half to one hash's lane sum and its high half to the
 * other's: one multiplication a lane, and the 32 of an instruction independent of each other
 * rather than a chain. */
static uint64_t sc_lane_mul[SP_WARP];

static void sc_lane_mul_init(void) {
  uint64_t x = UINT64_C(0x2545F4914F6CDD1D);
  for (int l = 0; l < SP_WARP; l++) {
    uint64_t z = (x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    sc_lane_mul[l] = (z ^ (z >> 31)) | 1;
  }
}

static inline void sc_lane_add(uint64_t sum[2], uint64_t addr, int lane) {
  unsigned __int128 p = (unsigned __int128)addr * sc_lane_mul[lane];
  sum[0] += (uint64_t)p;
  sum[1] += (uint64_t)(p >> 64);
}

int sp_trace_record_start(sp_trace_record *rec, int64_t cap, int64_t limit, int nrefs,
                          const double *ahead) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, sc_lane_mul_init);
  if (cap <= 0 || limit < cap) return -1;
  if (limit > rec->room) {
    sp_warp_instr *p = realloc(rec->instr, (size_t)limit * sizeof *p);
    if (!p) return -1;
    rec->instr = p;
    rec->room = limit;
  }
  rec->n = 0;
  sp_prefix_stop_free(&rec->stop);
  if (sp_prefix_stop_init(&rec->stop, cap, limit, nrefs, ahead) != 0) return -1;
  rec->hash[0] = UINT64_C(0xCBF29CE484222325);
  rec->hash[1] = UINT64_C(0x84222325CBF29CE4);
  return 0;
}

int sp_trace_record_access(void *ctx, const sp_warp_instr *wi) {
  sp_trace_record *rec = ctx;
  if (rec->n >= rec->room) return -1; /* the trace goes on past the cap: a bug, not a sample */
  rec->instr[rec->n++] = *wi;
  sc_mix(rec->hash, (uint64_t)(uint32_t)wi->sm | (uint64_t)(uint32_t)wi->ref << 32);
  sc_mix(rec->hash, (uint64_t)(uint32_t)wi->array | (uint64_t)wi->write << 32 |
                        (uint64_t)(wi->access_bytes & 0x7FFFFFFF) << 33);
  sc_mix(rec->hash, wi->active);
  uint64_t sum[2] = {0, 0};
  if (wi->active == UINT32_MAX)
    for (int l = 0; l < SP_WARP; l++) sc_lane_add(sum, wi->addr[l], l);
  else
    for (uint32_t m = wi->active; m; m &= m - 1) sc_lane_add(sum, wi->addr[__builtin_ctz(m)], __builtin_ctz(m));
  rec->hash[0] = (rec->hash[0] ^ sum[0]) * SC_MUL0;
  rec->hash[1] = ((rec->hash[1] ^ sum[1]) * SC_MUL1) ^ (rec->hash[1] >> 29);
  return sp_prefix_stop_after(&rec->stop, wi, rec->n) ? 1 : 0;
}

void sp_trace_record_free(sp_trace_record *rec) {
  free(rec->instr);
  sp_prefix_stop_free(&rec->stop);
  memset(rec, 0, sizeof *rec);
}

int sp_sample_cache_init(sp_sample_cache *c, size_t max_bytes) {
  memset(c, 0, sizeof *c);
  c->max_bytes = max_bytes;
  return pthread_mutex_init(&c->lock, NULL) == 0 ? 0 : -1;
}

void sp_sample_cache_free(sp_sample_cache *c) {
  for (size_t i = 0; i < c->nslots; i++) free(c->slot[i].data);
  free(c->slot);
  pthread_mutex_destroy(&c->lock);
  memset(c, 0, sizeof *c);
}

static bool sc_same_key(const sp_sample_entry *e, const uint64_t hash[2], int nsms,
                        const sp_cm_options *cmo) {
  return e->hash[0] == hash[0] && e->hash[1] == hash[1] && e->nsms == nsms &&
         memcmp(&e->cmo, cmo, sizeof *cmo) == 0;
}

/* The slot holding the key, or the empty slot where it would go (nslots > used). */
static sp_sample_entry *sc_probe(const sp_sample_cache *c, const uint64_t hash[2], int nsms,
                                 const sp_cm_options *cmo) {
  size_t mask = c->nslots - 1;
  for (size_t i = (size_t)hash[0] & mask;; i = (i + 1) & mask) {
    sp_sample_entry *e = &c->slot[i];
    if (!e->data || sc_same_key(e, hash, nsms, cmo)) return e;
  }
}

int sp_sample_cache_get(sp_sample_cache *c, const uint64_t hash[2], int nsms,
                        const sp_cm_options *cmo, void *out, size_t bytes) {
  pthread_mutex_lock(&c->lock);
  const sp_sample_entry *e = c->nslots ? sc_probe(c, hash, nsms, cmo) : NULL;
  int found = e && e->data && e->bytes == bytes;
  if (found) memcpy(out, e->data, bytes);
  if (found) c->hits++;
  else c->misses++;
  pthread_mutex_unlock(&c->lock);
  return found;
}

/* Doubles the table (load stays under 1/2). */
static int sc_grow(sp_sample_cache *c) {
  size_t n = c->nslots ? 2 * c->nslots : 64;
  sp_sample_entry *s = calloc(n, sizeof *s);
  if (!s) return -1;
  sp_sample_cache old = *c;
  c->slot = s;
  c->nslots = n;
  for (size_t i = 0; i < old.nslots; i++)
    if (old.slot[i].data) *sc_probe(c, old.slot[i].hash, old.slot[i].nsms, &old.slot[i].cmo) = old.slot[i];
  free(old.slot);
  return 0;
}

int sp_sample_cache_put(sp_sample_cache *c, const uint64_t hash[2], int nsms,
                        const sp_cm_options *cmo, const void *data, size_t bytes) {
  int rc = 0;
  pthread_mutex_lock(&c->lock);
  if (c->bytes + bytes > c->max_bytes || bytes == 0) goto done;
  if (2 * (c->used + 1) > c->nslots && sc_grow(c) != 0) {
    rc = -1;
    goto done;
  }
  sp_sample_entry *e = sc_probe(c, hash, nsms, cmo);
  if (e->data) goto done; /* another worker simulated the same sample first */
  void *copy = malloc(bytes);
  if (!copy) {
    rc = -1;
    goto done;
  }
  memcpy(copy, data, bytes);
  *e = (sp_sample_entry){.hash = {hash[0], hash[1]}, .nsms = nsms, .cmo = *cmo, .data = copy,
                         .bytes = bytes};
  c->used++;
  c->bytes += bytes;
done:
  pthread_mutex_unlock(&c->lock);
  return rc;
}
