/* Throughput of the cache-model core on one core: unit (sector) lookups per second for the
 * reuse-distance structures and the LRU caches, and sectors per second through the coalescer
 * and coalescer + L1.
 *
 * Build (library built by CMake):
 *   cc -std=c11 -O2 -Iinclude bench/bench_reuse.c build-cm/libschedpredict_core.a -o bench_reuse
 * or straight from the sources:
 *   cc -std=c11 -O2 -Iinclude -I. bench/bench_reuse.c cachemodel/coalesce.c cachemodel/reuse.c \
 *      cachemodel/lru.c -o bench_reuse
 * Run: ./bench_reuse [accesses, default 100000000]
 *
 * The stream: 8 Mi pre-generated units replayed until `accesses` is reached (generation is not
 * timed): 50% a hot set of 512 units drifting by one unit every 64 accesses (reuse inside an L1),
 * 30% a streaming walk where each unit is touched 4 times in a row (sector reuse by neighbouring
 * warps), 20% uniform over 1 Mi units (capacity misses). The same stream goes through each
 * structure, and the hit counts of the equivalent models are cross-checked. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "schedpredict/cachemodel.h"

static uint64_t splitmix64(uint64_t *state)
{
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static double now_s(void)
{
  struct timespec ts;
  timespec_get(&ts, TIME_UTC); /* C11; wall clock is fine for runs of seconds */
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { STREAM_LEN = 1 << 23 };

static uint64_t *make_stream(void)
{
  uint64_t *s = malloc(STREAM_LEN * sizeof *s);
  if (!s) return NULL;
  uint64_t rng = 12345, walk = UINT64_C(1) << 40;
  for (uint64_t k = 0; k < STREAM_LEN; k++) {
    uint64_t r = splitmix64(&rng), pick = r % 100;
    if (pick < 50) s[k] = (UINT64_C(1) << 36) + k / 64 + (r >> 32) % 512;
    else if (pick < 80) s[k] = walk++ / 4;
    else s[k] = (r >> 20) % (UINT64_C(1) << 20);
  }
  return s;
}

typedef struct result {
  double seconds;
  uint64_t hits;
} result;

#define TIMED_LOOP(accesses, stream, body)                                \
  do {                                                                    \
    double t0_ = now_s();                                                 \
    for (uint64_t done_ = 0; done_ < (accesses);) {                       \
      uint64_t n_ = (accesses)-done_ < STREAM_LEN ? (accesses)-done_ : STREAM_LEN; \
      for (uint64_t k_ = 0; k_ < n_; k_++) {                              \
        uint64_t unit = (stream)[k_];                                     \
        body;                                                             \
      }                                                                   \
      done_ += n_;                                                        \
    }                                                                     \
    res.seconds = now_s() - t0_;                                          \
  } while (0)

static void report(const char *name, uint64_t accesses, result res)
{
  printf("%-44s %8.1f M lookups/s  %6.2f ns/lookup  hit rate %.4f\n", name,
         (double)accesses / res.seconds / 1e6, 1e9 * res.seconds / (double)accesses,
         (double)res.hits / (double)accesses);
}

/* Warps for the coalescer: coalesced doubles, coalesced floats, 4096-double column stride,
 * and random gathers within 64 KiB, in equal shares. */
enum { WARPS = 1 << 16 };

static int bench_coalescer(uint64_t sectors_wanted)
{
  uint64_t (*addr)[32] = malloc(WARPS * sizeof *addr);
  uint32_t *bytes = malloc(WARPS * sizeof *bytes);
  sp_cm_lru *l1 = sp_cm_lru_create(1024);
  sp_cm_warp_access *w = malloc(sizeof *w);
  if (!addr || !bytes || !l1 || !w) {
    fprintf(stderr, "bench_reuse: out of memory\n");
    free(addr), free(bytes), sp_cm_lru_free(l1), free(w);
    return 1;
  }
  uint64_t rng = 777;
  for (uint64_t k = 0; k < WARPS; k++) {
    uint64_t base = (k * 256) % (UINT64_C(1) << 26);
    for (int l = 0; l < 32; l++) {
      switch (k % 4) {
      case 0: addr[k][l] = base + 8 * (uint64_t)l, bytes[k] = 8; break;
      case 1: addr[k][l] = base + 4 * (uint64_t)l, bytes[k] = 4; break;
      case 2: addr[k][l] = (k % 4096) * 8 + (uint64_t)l * 4096 * 8, bytes[k] = 8; break;
      default: addr[k][l] = base + splitmix64(&rng) % 65536 / 8 * 8, bytes[k] = 8; break;
      }
    }
  }
  sp_cm_coalescer c;
  if (sp_cm_coalescer_init(&c, 32, 128) != 0) return 1;
  uint64_t sectors = 0, warps = 0, hits = 0;
  double t0 = now_s();
  while (sectors < sectors_wanted) {
    for (uint64_t k = 0; k < WARPS; k++) {
      sp_cm_coalesce(&c, addr[k], 0xFFFFFFFFu, bytes[k], w);
      sectors += w->n_sectors;
    }
    warps += WARPS;
  }
  double t_coalesce = now_s() - t0;
  uint64_t sectors2 = 0;
  t0 = now_s();
  while (sectors2 < sectors_wanted) {
    for (uint64_t k = 0; k < WARPS; k++) {
      sp_cm_coalesce(&c, addr[k], 0xFFFFFFFFu, bytes[k], w);
      for (uint32_t s = 0; s < w->n_sectors; s++) hits += (uint64_t)sp_cm_lru_access(l1, w->sectors[s]);
      sectors2 += w->n_sectors;
    }
  }
  double t_pipeline = now_s() - t0;
  printf("%-44s %8.1f M sectors/s  (%.1f M warps/s, %.2f sectors/warp)\n", "coalescer (32 B sectors)",
         (double)sectors / t_coalesce / 1e6, (double)warps / t_coalesce / 1e6,
         (double)sectors / (double)warps);
  printf("%-44s %8.1f M sectors/s  hit rate %.4f\n", "coalescer + L1 fully assoc LRU 1024 sectors",
         (double)sectors2 / t_pipeline / 1e6, (double)hits / (double)sectors2);
  free(addr);
  free(bytes);
  free(w);
  sp_cm_lru_free(l1);
  return 0;
}

int main(int argc, char **argv)
{
  uint64_t accesses = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000u;
  if (accesses == 0) accesses = 1;
  uint64_t *stream = make_stream();
  sp_cm_rd *exact = sp_cm_rd_create(0), *capped = sp_cm_rd_create(1024);
  sp_cm_lru *lru = sp_cm_lru_create(1024);
  sp_cm_setassoc *sa = sp_cm_setassoc_create(256, 4, NULL, NULL);
  sp_cm_rd_sets *rs = sp_cm_rd_sets_create(256, 4, NULL, NULL);
  if (!stream || !exact || !capped || !lru || !sa || !rs) {
    fprintf(stderr, "bench_reuse: out of memory\n");
    return 1;
  }
  printf("%llu accesses per structure, stream of %d units replayed\n",
         (unsigned long long)accesses, STREAM_LEN);
  result res = {0, 0};
  TIMED_LOOP(accesses, stream, res.hits += sp_cm_rd_access(exact, unit) < 1024);
  report("reuse distance, exact (hit = d < 1024)", accesses, res);
  sp_cm_rd_stats st;
  sp_cm_rd_get_stats(exact, &st);
  printf("    tracked %llu units, window %llu, %llu compactions, %.1f MB\n",
         (unsigned long long)st.tracked, (unsigned long long)st.window,
         (unsigned long long)st.compactions, (double)st.memory_bytes / 1e6);
  uint64_t exact_hits = res.hits;

  res.hits = 0;
  TIMED_LOOP(accesses, stream, res.hits += sp_cm_rd_access(capped, unit) < 1024);
  report("reuse distance, capped at 1024", accesses, res);
  sp_cm_rd_get_stats(capped, &st);
  printf("    tracked %llu units, window %llu, %llu compactions, %.3f MB\n",
         (unsigned long long)st.tracked, (unsigned long long)st.window,
         (unsigned long long)st.compactions, (double)st.memory_bytes / 1e6);
  uint64_t capped_hits = res.hits;

  res.hits = 0;
  TIMED_LOOP(accesses, stream, res.hits += (uint64_t)sp_cm_lru_access(lru, unit));
  report("fully associative LRU, 1024 units", accesses, res);
  uint64_t lru_hits = res.hits;

  res.hits = 0;
  TIMED_LOOP(accesses, stream, res.hits += (uint64_t)sp_cm_setassoc_access(sa, unit));
  report("set-associative LRU, 256 sets x 4 ways", accesses, res);
  uint64_t sa_hits = res.hits;

  res.hits = 0;
  TIMED_LOOP(accesses, stream, res.hits += sp_cm_rd_sets_access(rs, unit) < 4);
  report("reuse distance per set, 256 sets (d < 4)", accesses, res);
  uint64_t rs_hits = res.hits;

  uint64_t brute_n = accesses < 200000 ? accesses : 200000;
  sp_cm_lru_stack *stack = sp_cm_lru_stack_create();
  if (!stack) return 1;
  res.hits = 0;
  TIMED_LOOP(brute_n, stream, res.hits += sp_cm_lru_stack_access(stack, unit) < 1024);
  report("brute-force LRU stack (first 0.2 M only)", brute_n, res);
  sp_cm_lru_stack_free(stack);

  int consistent = exact_hits == capped_hits && capped_hits == lru_hits && sa_hits == rs_hits;
  printf("cross-check: exact %llu, capped %llu, LRU %llu hits; set-assoc %llu, per-set rd %llu: %s\n",
         (unsigned long long)exact_hits, (unsigned long long)capped_hits,
         (unsigned long long)lru_hits, (unsigned long long)sa_hits, (unsigned long long)rs_hits,
         consistent ? "consistent" : "INCONSISTENT");

  int rc = bench_coalescer(accesses);
  sp_cm_rd_free(exact);
  sp_cm_rd_free(capped);
  sp_cm_lru_free(lru);
  sp_cm_setassoc_free(sa);
  sp_cm_rd_sets_free(rs);
  free(stream);
  return rc || !consistent;
}
