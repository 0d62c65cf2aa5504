/* Internal to rank/: screening samples shared between candidates whose sampled traces are the
 * same instruction for instruction (sample_cache.c says when that happens and why it is exact). */
#ifndef SP_RANK_SAMPLE_CACHE_H
#define SP_RANK_SAMPLE_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "schedpredict/memsys.h"
#include "schedpredict/traces.h"
#include "rank/prefix_stop.h"

/* A sample's trace, recorded (and hashed) before it goes to a memory model. The recording sink
 * stops the trace where the simulating sink would (prefix_stop.h). */
typedef struct sp_trace_record {
  sp_warp_instr *instr;
  int64_t n, room; /* recorded, allocated */
  sp_prefix_stop stop;
  uint64_t hash[2];
} sp_trace_record;

/* Readies rec for a trace that stops by the rule of sp_prefix_stop_init(cap, limit, nrefs,
 * ahead) (0 < cap <= limit); -1 on allocation failure. */
int sp_trace_record_start(sp_trace_record *rec, int64_t cap, int64_t limit, int nrefs,
                          const double *ahead);
/* The sp_trace_sink that records into an sp_trace_record. */
int sp_trace_record_access(void *ctx, const sp_warp_instr *wi);
void sp_trace_record_free(sp_trace_record *rec);

/* Results of simulated samples by the hash of their trace and the memory model's
 * configuration, as opaque bytes; shared by the workers of a pass (locked). */
typedef struct sp_sample_entry {
  uint64_t hash[2];
  int nsms;
  sp_cm_options cmo;
  void *data;
  size_t bytes;
} sp_sample_entry;

typedef struct sp_sample_cache {
  pthread_mutex_t lock;
  sp_sample_entry *slot; /* open addressing on hash[0]; data == NULL: empty */
  size_t nslots, used, bytes, max_bytes;
  int64_t hits, misses;
} sp_sample_cache;

/* max_bytes: what stored results may take in all; past it nothing more is stored. */
int sp_sample_cache_init(sp_sample_cache *c, size_t max_bytes);
void sp_sample_cache_free(sp_sample_cache *c);
/* Copies the stored result of this trace and configuration into out (bytes long) and returns
 * 1; 0 when there is none (or it has another length). */
int sp_sample_cache_get(sp_sample_cache *c, const uint64_t hash[2], int nsms,
                        const sp_cm_options *cmo, void *out, size_t bytes);
/* Stores a copy of data; a result already stored for the key stays. -1 on allocation failure
 * (the cache is then unchanged, which is not an error for the caller). */
int sp_sample_cache_put(sp_sample_cache *c, const uint64_t hash[2], int nsms,
                        const sp_cm_options *cmo, const void *data, size_t bytes);

#endif
