/* Reuse distance and LRU caches: Table 7.2 of the dissertation, the O(log n) structure against
 * the brute-force LRU stack, the capped variant, and the caches against independent simulations. */
#include <stdlib.h>

#include "schedpredict/cachemodel.h"
#include "tests/sp_test.h"

/* A trace over `alphabet` distinct units with tunable locality: with probability local_pct/100
 * re-use one of the last `recent` accesses, otherwise pick uniformly. Units are scrambled so
 * keys are arbitrary 64-bit values (including the extremes). */
typedef struct trace_gen {
  uint64_t rng, alphabet;
  unsigned local_pct;
  uint64_t recent[16];
  unsigned n;
} trace_gen;

static uint64_t unit_name(uint64_t k)
{
  if (k == 0) return UINT64_MAX; /* the map must take every key */
  if (k == 1) return 0;
  return k * UINT64_C(0xD6E8FEB86659FD93);
}

static uint64_t trace_next(trace_gen *g)
{
  uint64_t r = sp_test_rand(&g->rng);
  uint64_t k;
  if (g->n > 0 && r % 100 < g->local_pct) k = g->recent[(r >> 8) % g->n];
  else k = (r >> 16) % g->alphabet;
  g->recent[(r >> 40) % 16] = k;
  if (g->n < 16) g->recent[g->n++] = k;
  return unit_name(k);
}

static void test_table_7_2(void)
{
  /* Line 16 bytes, cache 32 bytes = 2 lines. */
  const uint64_t addr[8] = {0, 8, 16, 96, 8, 16, 17, 104};
  const uint64_t want_line[8] = {0, 0, 1, 6, 0, 1, 1, 6};
  const uint64_t I = SP_CM_RD_INF;
  const uint64_t want_rd[8] = {I, 0, I, I, 2, 2, 0, 2};
  const int want_hit[8] = {0, 1, 0, 0, 0, 0, 1, 0};
  sp_cm_rd *rd = sp_cm_rd_create(0);
  sp_cm_rd *capped = sp_cm_rd_create(2);
  sp_cm_lru_stack *stack = sp_cm_lru_stack_create();
  sp_cm_lru *lru = sp_cm_lru_create(2);
  CHECK(rd && capped && stack && lru);
  if (!rd || !capped || !stack || !lru) return;
  int hits = 0;
  for (int k = 0; k < 8; k++) {
    uint64_t line = addr[k] / 16;
    CHECK_EQ_INT(line, want_line[k]);
    uint64_t d = sp_cm_rd_access(rd, line);
    CHECK(d == want_rd[k]);
    CHECK(sp_cm_lru_stack_access(stack, line) == want_rd[k]);
    uint64_t dc = sp_cm_rd_access(capped, line);
    CHECK(dc == (want_rd[k] < 2 ? want_rd[k] : SP_CM_RD_INF));
    int hit = d < 2;
    CHECK_EQ_INT(hit, want_hit[k]);
    CHECK_EQ_INT(sp_cm_lru_access(lru, line), want_hit[k]);
    hits += hit;
  }
  CHECK_EQ_INT(hits, 2); /* hit rate 2/8 */
  sp_cm_rd_free(rd);
  sp_cm_rd_free(capped);
  sp_cm_lru_stack_free(stack);
  sp_cm_lru_free(lru);
}

/* Exact distances of the fast structure == brute-force stack on many traces. */
static void test_rd_matches_brute_force(void)
{
  const uint64_t alphabets[] = {1, 2, 3, 7, 64, 65, 300, 2500};
  const unsigned localities[] = {0, 50, 95};
  uint64_t seed = 42, mismatches = 0, compactions = 0, total = 0, grown_windows = 0;
  for (size_t a = 0; a < sizeof alphabets / sizeof alphabets[0]; a++) {
    for (size_t l = 0; l < 3; l++) {
      trace_gen g = {.rng = seed++, .alphabet = alphabets[a], .local_pct = localities[l]};
      sp_cm_rd *rd = sp_cm_rd_create(0);
      sp_cm_lru_stack *stack = sp_cm_lru_stack_create();
      CHECK(rd && stack);
      if (!rd || !stack) return;
      uint64_t len = 2000 + sp_test_rand(&g.rng) % 20000;
      for (uint64_t k = 0; k < len; k++) {
        uint64_t u = trace_next(&g);
        uint64_t fast = sp_cm_rd_access(rd, u), slow = sp_cm_lru_stack_access(stack, u);
        if (fast != slow && mismatches++ < 5)
          fprintf(stderr, "  alphabet %llu step %llu: fast %llu slow %llu\n",
                  (unsigned long long)alphabets[a], (unsigned long long)k,
                  (unsigned long long)fast, (unsigned long long)slow);
      }
      total += len;
      sp_cm_rd_stats st;
      sp_cm_rd_get_stats(rd, &st);
      CHECK_EQ_INT(st.accesses, len);
      CHECK(st.tracked <= alphabets[a]);
      CHECK_EQ_INT(st.forgotten, 0);
      compactions += st.compactions;
      if (st.window > 64) grown_windows++;
      CHECK(!sp_cm_rd_failed(rd));
      sp_cm_rd_free(rd);
      sp_cm_lru_stack_free(stack);
    }
  }
  CHECK_EQ_INT(mismatches, 0);
  CHECK(compactions > 1000); /* renumbering ran, many times */
  CHECK(grown_windows > 0);  /* and the window grew with the live units */
  fprintf(stderr, "  %llu accesses compared, %llu compactions\n", (unsigned long long)total,
          (unsigned long long)compactions);
}

/* Memory of the uncapped structure follows the distinct units, not the trace length. */
static void test_rd_memory_follows_live_units(void)
{
  sp_cm_rd *rd = sp_cm_rd_create(0);
  CHECK(rd != NULL);
  if (!rd) return;
  uint64_t rng = 7;
  for (uint64_t k = 0; k < 2000000; k++) sp_cm_rd_access(rd, sp_test_rand(&rng) % 1000);
  sp_cm_rd_stats st;
  sp_cm_rd_get_stats(rd, &st);
  CHECK_EQ_INT(st.tracked, 1000);
  CHECK(st.window <= 4096);
  CHECK(st.memory_bytes < 100000);
  CHECK(st.compactions > 500);
  sp_cm_rd_free(rd);
}

/* The capped structure gives the same hit/miss as the exact one for a cache of `cap` units,
 * the exact distance below the cap, and O(cap) memory on a trace of many distinct units. */
static void test_rd_capped(void)
{
  const uint64_t caps[] = {1, 2, 3, 16, 100, 1000};
  uint64_t seed = 1000, wrong = 0;
  for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
    for (unsigned loc = 0; loc <= 90; loc += 45) {
      trace_gen g = {.rng = seed++, .alphabet = 4 * caps[c] + 50, .local_pct = loc};
      sp_cm_rd *exact = sp_cm_rd_create(0), *capped = sp_cm_rd_create(caps[c]);
      CHECK(exact && capped);
      if (!exact || !capped) return;
      for (uint64_t k = 0; k < 60000; k++) {
        uint64_t u = trace_next(&g);
        uint64_t d = sp_cm_rd_access(exact, u), dc = sp_cm_rd_access(capped, u);
        uint64_t want = d < caps[c] ? d : SP_CM_RD_INF;
        if (dc != want) wrong++;
      }
      sp_cm_rd_stats st;
      sp_cm_rd_get_stats(capped, &st);
      CHECK(st.forgotten > 0);
      CHECK(st.tracked <= st.window);
      sp_cm_rd_free(exact);
      sp_cm_rd_free(capped);
    }
  }
  CHECK_EQ_INT(wrong, 0);

  /* 3 million distinct units through a cap of 512: memory stays O(cap). */
  sp_cm_rd *capped = sp_cm_rd_create(512);
  CHECK(capped != NULL);
  if (!capped) return;
  sp_cm_rd_stats before, after;
  sp_cm_rd_get_stats(capped, &before);
  uint64_t near_hits = 0;
  for (uint64_t k = 0; k < 3000000; k++) {
    /* a sliding stream with re-use at distance 100: u, then u again 101 accesses later */
    uint64_t u = k % 2 ? k / 2 : (k / 2 > 100 ? k / 2 - 100 : k / 2 + 5000000);
    uint64_t d = sp_cm_rd_access(capped, u);
    if (d != SP_CM_RD_INF) near_hits++;
  }
  sp_cm_rd_get_stats(capped, &after);
  CHECK_EQ_INT(after.memory_bytes, before.memory_bytes);
  CHECK(after.memory_bytes < 64 * 1024);
  CHECK(after.forgotten > 1000000);
  CHECK(near_hits > 1400000);
  sp_cm_rd_free(capped);
}

static void test_fully_associative_lru(void)
{
  const uint64_t capacities[] = {1, 2, 5, 64, 257};
  uint64_t seed = 77, wrong = 0, hits = 0;
  for (size_t c = 0; c < 5; c++) {
    for (unsigned loc = 0; loc <= 90; loc += 30) {
      trace_gen g = {.rng = seed++, .alphabet = 3 * capacities[c] + 3, .local_pct = loc};
      sp_cm_lru *lru = sp_cm_lru_create(capacities[c]);
      sp_cm_lru_stack *stack = sp_cm_lru_stack_create();
      CHECK(lru && stack);
      if (!lru || !stack) return;
      for (int k = 0; k < 20000; k++) {
        uint64_t u = trace_next(&g);
        int hit = sp_cm_lru_access(lru, u);
        int want = sp_cm_lru_stack_access(stack, u) < capacities[c];
        if (hit != want) wrong++;
        hits += (uint64_t)hit;
      }
      sp_cm_lru_free(lru);
      sp_cm_lru_stack_free(stack);
    }
  }
  CHECK_EQ_INT(wrong, 0);
  CHECK(hits > 10000); /* the traces do exercise hits */
  CHECK(sp_cm_lru_create(0) == NULL);
}

/* Independent set-associative reference: every way holds (unit, time of last use); the victim
 * is an empty way or the least recently used one. */
typedef struct ref_way {
  uint64_t unit, last_use;
  int valid;
} ref_way;

static void test_set_associative(void)
{
  const struct {
    uint64_t sets;
    uint32_t ways;
    int xorfold;
  } cfg[] = {{1, 4, 0}, {4, 1, 0}, {8, 2, 0}, {6, 3, 0}, {16, 4, 1}, {32, 8, 0}, {5, 16, 1}};
  uint64_t seed = 555, wrong_sim = 0, wrong_rd = 0, wrong_rd_capped = 0, hits = 0, misses = 0;
  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    sp_cm_set_index_fn fn = cfg[c].xorfold ? sp_cm_set_index_xorfold : NULL;
    sp_cm_setassoc *sa = sp_cm_setassoc_create(cfg[c].sets, cfg[c].ways, fn, NULL);
    sp_cm_rd_sets *rs = sp_cm_rd_sets_create(cfg[c].sets, 0, fn, NULL);
    sp_cm_rd_sets *rsc = sp_cm_rd_sets_create(cfg[c].sets, cfg[c].ways, fn, NULL);
    ref_way *ref = calloc(cfg[c].sets * cfg[c].ways, sizeof *ref);
    CHECK(sa && rs && rsc && ref);
    if (!sa || !rs || !rsc || !ref) return;
    trace_gen g = {.rng = seed++, .alphabet = cfg[c].sets * cfg[c].ways * 3, .local_pct = 60};
    for (uint64_t t = 0; t < 40000; t++) {
      /* small units so that the modulo index is exercised on structured values */
      uint64_t u = trace_next(&g) % (cfg[c].sets * cfg[c].ways * 3);
      uint64_t set = cfg[c].xorfold ? sp_cm_set_index_xorfold(u, cfg[c].sets, NULL)
                                    : u % cfg[c].sets;
      CHECK(set < cfg[c].sets);
      ref_way *w = &ref[set * cfg[c].ways];
      int want = 0;
      ref_way *victim = NULL;
      for (uint32_t k = 0; k < cfg[c].ways; k++) {
        if (w[k].valid && w[k].unit == u) {
          want = 1;
          victim = &w[k];
          break;
        }
        if (!victim || (victim->valid && (!w[k].valid || w[k].last_use < victim->last_use)))
          victim = &w[k];
      }
      victim->unit = u;
      victim->valid = 1;
      victim->last_use = t;
      int hit = sp_cm_setassoc_access(sa, u);
      if (hit != want) wrong_sim++;
      if ((sp_cm_rd_sets_access(rs, u) < cfg[c].ways) != want) wrong_rd++;
      if ((sp_cm_rd_sets_access(rsc, u) < cfg[c].ways) != want) wrong_rd_capped++;
      hits += (uint64_t)want;
      misses += (uint64_t)!want;
    }
    sp_cm_setassoc_free(sa);
    sp_cm_rd_sets_free(rs);
    sp_cm_rd_sets_free(rsc);
    free(ref);
  }
  CHECK_EQ_INT(wrong_sim, 0);
  CHECK_EQ_INT(wrong_rd, 0);
  CHECK_EQ_INT(wrong_rd_capped, 0);
  CHECK(hits > 50000 && misses > 50000);

  /* Conflict misses: 2 lines of one set in a 2-set direct-mapped cache thrash; fully
   * associative LRU of the same 2 lines holds them. */
  sp_cm_setassoc *dm = sp_cm_setassoc_create(2, 1, NULL, NULL);
  sp_cm_lru *fa = sp_cm_lru_create(2);
  CHECK(dm && fa);
  if (!dm || !fa) return;
  int dm_hits = 0, fa_hits = 0;
  for (int k = 0; k < 10; k++) {
    dm_hits += sp_cm_setassoc_access(dm, (uint64_t)(k % 2) * 2); /* units 0, 2: both set 0 */
    fa_hits += sp_cm_lru_access(fa, (uint64_t)(k % 2) * 2);
  }
  CHECK_EQ_INT(dm_hits, 0);
  CHECK_EQ_INT(fa_hits, 8);
  sp_cm_setassoc_free(dm);
  sp_cm_lru_free(fa);
  CHECK(sp_cm_setassoc_create(0, 4, NULL, NULL) == NULL);
  CHECK(sp_cm_setassoc_create(4, 0, NULL, NULL) == NULL);
  CHECK(sp_cm_rd_sets_create(0, 0, NULL, NULL) == NULL);
}

/* The hashed set-associative LRU (sp_cm_lru_create_sets: one index, a list per set) against
 * sp_cm_setassoc (MRU-first arrays) with the same set index, sp_cm_set_index_hash: every lookup
 * mode, the same outcome, victim and payloads on random traces, also after a clear. Units come
 * in groups of 2^group_shift (the sectors of a line) that must share a set. */
static void test_hashed_sets(void)
{
  const struct {
    uint64_t sets;
    uint32_t ways;
    unsigned group_shift;
  } cfg[] = {{2, 1, 0}, {3, 4, 2}, {7, 8, 2}, {64, 16, 2}, {5, 512, 2}, {100, 2, 3}};
  uint64_t rng = 77, wrong = 0, hits = 0, evictions = 0, split_groups = 0;
  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    unsigned gs = cfg[c].group_shift;
    sp_cm_lru *h = sp_cm_lru_create_sets(cfg[c].sets, cfg[c].ways, gs);
    sp_cm_setassoc *ref = sp_cm_setassoc_create(cfg[c].sets, cfg[c].ways, sp_cm_set_index_hash, &gs);
    CHECK(h && ref);
    if (!h || !ref) return;
    CHECK_EQ_INT(sp_cm_lru_ways(h), cfg[c].ways);
    const uint64_t alphabet = cfg[c].sets * cfg[c].ways * 3 + 5;
    for (int round = 0; round < 2; round++) {
      for (int t = 0; t < 60000; t++) {
        uint64_t r = sp_test_rand(&rng), u = (r >> 8) % alphabet;
        if (r & 0x10) u += UINT64_C(1) << 40; /* wide keys too */
        split_groups += sp_cm_set_index_hash(u, cfg[c].sets, &gs) !=
                        sp_cm_set_index_hash(u ^ ((UINT64_C(1) << gs) - 1), cfg[c].sets, &gs);
        sp_cm_lookup_mode mode = (r & 3) == 0 ? SP_CM_LOOKUP_PEEK
                                 : (r & 3) == 1 ? SP_CM_LOOKUP_TOUCH
                                                : SP_CM_LOOKUP_INSERT;
        sp_cm_lookup a, b;
        uint64_t *pa = sp_cm_lru_lookup(h, u, mode, &a), *pb = sp_cm_setassoc_lookup(ref, u, mode, &b);
        wrong += (pa == NULL) != (pb == NULL) || a.hit != b.hit || a.evicted != b.evicted ||
                 (a.evicted && (a.victim != b.victim || a.victim_payload != b.victim_payload)) ||
                 (pa && *pa != *pb);
        if (pa && pb && mode == SP_CM_LOOKUP_INSERT) *pa = *pb = r;
        hits += (uint64_t)a.hit;
        evictions += (uint64_t)a.evicted;
      }
      sp_cm_lru_clear(h);
      sp_cm_setassoc_clear(ref);
    }
    sp_cm_lru_free(h);
    sp_cm_setassoc_free(ref);
  }
  CHECK_EQ_INT(wrong, 0);
  CHECK_EQ_INT(split_groups, 0);
  CHECK(hits > 50000 && evictions > 50000);
  /* the hash spreads a power-of-two stride of lines over all sets */
  unsigned gs = 2, seen = 0;
  for (uint64_t k = 0; k < 4096; k++) seen |= 1u << sp_cm_set_index_hash(k << 12, 32, &gs);
  CHECK_EQ_INT(seen, UINT32_MAX);
  CHECK(sp_cm_lru_create_sets(0, 4, 0) == NULL);
  CHECK(sp_cm_lru_create_sets(4, 0, 0) == NULL);
  CHECK(sp_cm_lru_create_sets(4, 3, 0) == NULL); /* ways not a power of two */
  CHECK(sp_cm_lru_create_sets(UINT64_C(1) << 30, 4, 0) == NULL);
  CHECK(sp_cm_lru_create_sets(4, 4, 64) == NULL);
}

static void test_set_index_functions(void)
{
  CHECK_EQ_INT(sp_cm_set_index_mod(1000, 64, NULL), 1000 % 64);
  CHECK_EQ_INT(sp_cm_set_index_mod(1000, 48, NULL), 1000 % 48);
  /* xorfold with 16 sets folds 4-bit chunks: 0x1234 -> 1^2^3^4 = 4 */
  CHECK_EQ_INT(sp_cm_set_index_xorfold(0x1234, 16, NULL), 4);
  /* a power-of-two stride of 16 units hits one set under mod, all 16 sets under xorfold */
  unsigned seen_mod = 0, seen_xor = 0;
  for (uint64_t k = 0; k < 16; k++) {
    seen_mod |= 1u << sp_cm_set_index_mod(k * 16, 16, NULL);
    seen_xor |= 1u << sp_cm_set_index_xorfold(k * 16, 16, NULL);
  }
  CHECK_EQ_INT(__builtin_popcount(seen_mod), 1);
  CHECK_EQ_INT(__builtin_popcount(seen_xor), 16);
}

static void test_rd_rejects_bad_cap(void)
{
  CHECK(sp_cm_rd_create(UINT64_MAX) == NULL);
  sp_cm_rd *rd = sp_cm_rd_create(1);
  CHECK(rd != NULL);
  if (!rd) return;
  CHECK(sp_cm_rd_access(rd, 5) == SP_CM_RD_INF);
  CHECK(sp_cm_rd_access(rd, 5) == 0);
  CHECK(sp_cm_rd_access(rd, 6) == SP_CM_RD_INF);
  CHECK(sp_cm_rd_access(rd, 5) == SP_CM_RD_INF); /* distance 1 >= cap 1 */
  sp_cm_rd_free(rd);
}

int main(void)
{
  SP_RUN(test_table_7_2);
  SP_RUN(test_hashed_sets);
  SP_RUN(test_rd_matches_brute_force);
  SP_RUN(test_rd_memory_follows_live_units);
  SP_RUN(test_rd_capped);
  SP_RUN(test_fully_associative_lru);
  SP_RUN(test_set_associative);
  SP_RUN(test_set_index_functions);
  SP_RUN(test_rd_rejects_bad_cap);
  return SP_TEST_END();
}
