/* What the host's memory lets a cache model do: nanoseconds per access to random 64-byte lines of
 * a table, for table sizes from the host's L2 to the memory model's whole H100 tables (about 80
 * MB), two ways:
 *   dependent:   each address comes from the line read before (pointer chasing over a random
 *                cycle), as a lookup whose next line depends on this one (index slot -> node ->
 *                list neighbours);
 *   independent: the addresses come from a generator, so the host overlaps its misses, as the
 *                model's prefetch pipeline tries to (cachemodel/memsys.c, SP_CM_PIPE).
 * A lookup in a table this size touches at least two such lines (its index slot and its node), so
 * 1e9 / (2 x independent ns) bounds the lookups per second of a model whose tables are that size,
 * even with every miss overlapped. The tables are on transparent huge pages where the kernel
 * offers them, as the model's (sp_cm_table_alloc).
 *
 * Run: build/bench_host_memory [accesses per size, default 20000000] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

enum { LINE_WORDS = 8 }; /* uint64_t per 64-byte line */

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static uint64_t *table_alloc(size_t bytes)
{
  const size_t huge = (size_t)2 << 20;
  size_t rounded = (bytes + huge - 1) / huge * huge;
  uint64_t *p = aligned_alloc(huge, rounded);
#ifdef MADV_HUGEPAGE
  if (p) madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

int main(int argc, char **argv)
{
  long long accesses = argc > 1 ? atoll(argv[1]) : 20000000;
  if (accesses <= 0) {
    fprintf(stderr, "usage: bench_host_memory [accesses per size > 0]\n");
    return 2;
  }
  static const size_t kib[] = {256, 1024, 2048, 4096, 16384, 81920};
  printf("%10s %14s %16s %22s\n", "table_KB", "dependent_ns", "independent_ns", "2-line lookups/s max");
  for (size_t t = 0; t < sizeof kib / sizeof *kib; t++) {
    size_t lines = kib[t] * 1024 / 64;
    uint64_t *table = table_alloc(lines * 64);
    uint64_t *order = malloc(lines * sizeof *order);
    if (!table || !order) {
      fprintf(stderr, "bench_host_memory: out of memory at %zu KB\n", kib[t]);
      return 1;
    }
    /* a random cycle through every line: Fisher-Yates, then each line points to the next */
    uint64_t seed = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < lines; i++) order[i] = i;
    for (size_t i = lines - 1; i > 0; i--) {
      size_t j = (size_t)(xorshift(&seed) % (i + 1));
      uint64_t x = order[i];
      order[i] = order[j];
      order[j] = x;
    }
    for (size_t i = 0; i < lines; i++) table[order[i] * LINE_WORDS] = order[(i + 1) % lines] * LINE_WORDS;
    uint64_t at = 0;
    double t0 = now_s();
    for (long long k = 0; k < accesses; k++) at = table[at];
    double dependent = (now_s() - t0) / (double)accesses * 1e9;
    uint64_t sum = 0;
    t0 = now_s();
    for (long long k = 0; k < accesses; k++) /* the line: the generator's high half scaled to lines */
      sum += table[(((xorshift(&seed) >> 32) * lines) >> 32) * LINE_WORDS];
    double independent = (now_s() - t0) / (double)accesses * 1e9;
    printf("%10zu %14.1f %16.1f %20.0f M   (%llu)\n", kib[t], dependent, independent,
           1e3 / (2 * independent), (unsigned long long)((at ^ sum) & 1));
    free(table);
    free(order);
  }
  return 0;
}
