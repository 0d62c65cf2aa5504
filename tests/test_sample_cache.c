/* The screening's sample cache (rank/sample_cache.c): what the trace hash sees and what it
 * ignores, where a recording stops (and a prefix: rank/prefix_stop.h), and the table's keys,
 * growth and memory bound. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rank/sample_cache.h"
#include "tests/sp_test.h"

/* A warp instruction: lane l of SM sm reads 8 bytes at base + 8 l, lanes of `active` only. */
static sp_warp_instr instr(int sm, int ref, uint32_t active, uint64_t base)
{
  sp_warp_instr wi;
  memset(&wi, 0, sizeof wi);
  wi.sm = sm;
  wi.ref = ref;
  wi.array = ref % 3;
  wi.access_bytes = 8;
  wi.active = active;
  for (int l = 0; l < SP_WARP; l++) wi.addr[l] = base + 8 * (uint64_t)l;
  return wi;
}

/* The hash of a trace of n instructions, instruction `at` replaced by *change (NULL: none). */
static void trace_hash(int n, int at, const sp_warp_instr *change, uint64_t out[2])
{
  sp_trace_record rec;
  memset(&rec, 0, sizeof rec);
  CHECK_EQ_INT(sp_trace_record_start(&rec, n, n, 0, NULL), 0);
  for (int k = 0; k < n; k++) {
    sp_warp_instr wi = k == at && change ? *change : instr(k % 2, k % 5, 0xFFFF00FFu, 4096 * (uint64_t)k);
    CHECK_EQ_INT(sp_trace_record_access(&rec, &wi), k == n - 1 ? 1 : 0); /* stops at the cap */
  }
  CHECK_EQ_INT(rec.n, n);
  out[0] = rec.hash[0];
  out[1] = rec.hash[1];
  sp_trace_record_free(&rec);
}

static void test_trace_hash(void)
{
  uint64_t base[2], h[2];
  trace_hash(40, -1, NULL, base);
  trace_hash(40, -1, NULL, h);
  CHECK(h[0] == base[0] && h[1] == base[1]);
  const int at = 17;
  sp_warp_instr same = instr(at % 2, at % 5, 0xFFFF00FFu, 4096 * (uint64_t)at);
  /* an inactive lane's address is not part of the trace */
  same.addr[9] = 12345;
  trace_hash(40, at, &same, h);
  CHECK(h[0] == base[0] && h[1] == base[1]);
  /* every field the memory model reads is */
  sp_warp_instr v[7];
  for (int i = 0; i < 7; i++) v[i] = instr(at % 2, at % 5, 0xFFFF00FFu, 4096 * (uint64_t)at);
  v[0].addr[3] += 8;
  v[1].active ^= 1u << 31;
  v[2].sm ^= 1;
  v[3].ref += 1;
  v[4].array += 1;
  v[5].write = true;
  v[6].access_bytes = 4;
  for (int i = 0; i < 7; i++) {
    trace_hash(40, at, &v[i], h);
    CHECK(h[0] != base[0] && h[1] != base[1]);
  }
  /* and the order of the instructions */
  sp_trace_record a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  CHECK_EQ_INT(sp_trace_record_start(&a, 8, 8, 0, NULL), 0);
  CHECK_EQ_INT(sp_trace_record_start(&b, 8, 8, 0, NULL), 0);
  sp_warp_instr x = instr(0, 0, UINT32_MAX, 0), y = instr(0, 1, UINT32_MAX, 256);
  sp_trace_record_access(&a, &x);
  sp_trace_record_access(&a, &y);
  sp_trace_record_access(&b, &y);
  sp_trace_record_access(&b, &x);
  CHECK(a.hash[0] != b.hash[0] && a.hash[1] != b.hash[1]);
  CHECK(memcmp(&a.instr[1], &y, sizeof y) == 0); /* recorded as given */
  /* a recording started again forgets the last one */
  CHECK_EQ_INT(sp_trace_record_start(&a, 4, 4, 0, NULL), 0);
  CHECK_EQ_INT(a.n, 0);
  sp_trace_record_access(&a, &y);
  sp_trace_record_access(&a, &x);
  CHECK(a.hash[0] == b.hash[0] && a.hash[1] == b.hash[1]);
  sp_trace_record_free(&a);
  sp_trace_record_free(&b);
}

/* Instruction n (from 1) of W warps taking turns, each running body[0..nbody) over and over:
 * warp (n - 1) % W of block 0 on SM 0, its ((n - 1) / W)-th instruction. */
static sp_warp_instr turn_instr(int w, const int *body, int nbody, int64_t n)
{
  sp_warp_instr wi = instr(0, body[((n - 1) / w) % nbody], UINT32_MAX, 0);
  wi.warp = (int)((n - 1) % w);
  return wi;
}

/* Where the rule stops such a trace (0: not within 10,000 instructions); the recording stops
 * at the same instruction. */
static int64_t prefix_end(int w, const int *body, int nbody, int nrefs, const double *ahead,
                          int64_t cap, int64_t limit)
{
  sp_prefix_stop p;
  CHECK_EQ_INT(sp_prefix_stop_init(&p, cap, limit, nrefs, ahead), 0);
  sp_trace_record rec;
  memset(&rec, 0, sizeof rec);
  CHECK_EQ_INT(sp_trace_record_start(&rec, cap, limit, nrefs, ahead), 0);
  int64_t end = 0;
  for (int64_t n = 1; n <= 10000 && !end; n++) {
    sp_warp_instr wi = turn_instr(w, body, nbody, n);
    int recorded = sp_trace_record_access(&rec, &wi);
    if (sp_prefix_stop_after(&p, &wi, n)) end = n;
    CHECK_EQ_INT(recorded, end ? 1 : 0);
  }
  CHECK_EQ_INT(rec.n, end);
  sp_prefix_stop_free(&p);
  sp_trace_record_free(&rec);
  return end;
}

/* prefix_stop.h's rule, hand-counted */
static void test_prefix_stop(void)
{
  const int body5[] = {0, 1, 2, 3, 4}, body2[] = {0, 1};
  const double ahead5[] = {0, 1, 2, 3, 4};
  /* a plain cap */
  CHECK_EQ_INT(prefix_end(8, body5, 5, 5, ahead5, 10, 10), 10);
  /* every reference runs within the cap (4 warps: the fifth at 4 x 4 + 1 = 17): the cap */
  CHECK_EQ_INT(prefix_end(4, body5, 5, 5, ahead5, 20, 100), 20);
  /* 8 warps: reference 3 first runs at 25 and 4 at 33, past the cap of 20; then as many again */
  CHECK_EQ_INT(prefix_end(8, body5, 5, 5, ahead5, 20, 100), 66);
  /* ... but never past the limit */
  CHECK_EQ_INT(prefix_end(8, body5, 5, 5, ahead5, 20, 50), 50);
  /* a reference that never comes: expected at 4 warps x (3 + 1) = 16, given up at twice that */
  const double ahead_3[] = {0, 1, 3};
  CHECK_EQ_INT(prefix_end(4, body2, 2, 3, ahead_3, 20, 100), 32);
  /* one expected at 4 x (20 + 1) = 84: waited for within a limit of 100, not within 80 */
  const double ahead_20[] = {0, 1, 20};
  CHECK_EQ_INT(prefix_end(4, body2, 2, 3, ahead_20, 20, 100), 100);
  CHECK_EQ_INT(prefix_end(4, body2, 2, 3, ahead_20, 20, 80), 20);
  /* one the run never executes (ahead < 0) is not waited for */
  const double ahead_none[] = {0, 1, -1};
  CHECK_EQ_INT(prefix_end(4, body2, 2, 3, ahead_none, 20, 100), 20);
  /* 30 warps: the turn is unknown at the cap, and reference 1 runs first at 31; then as many
   * again */
  CHECK_EQ_INT(prefix_end(30, body2, 2, 2, ahead5, 20, 100), 62);
}

static void test_cache_table(void)
{
  sp_sample_cache c;
  CHECK_EQ_INT(sp_sample_cache_init(&c, 1000 * 64), 0);
  sp_cm_options o1, o2;
  memset(&o1, 0, sizeof o1);
  memset(&o2, 0, sizeof o2);
  o2.l2_fraction = 0.5;
  /* 1,000 entries of 64 bytes: the table grows from 64 slots and keeps each */
  int64_t buf[8], got[8];
  for (int k = 0; k < 1000; k++) {
    uint64_t h[2] = {(uint64_t)k * 64, (uint64_t)k}; /* all on one home slot modulo 64 */
    for (int i = 0; i < 8; i++) buf[i] = k * 10 + i;
    CHECK_EQ_INT(sp_sample_cache_put(&c, h, 1, &o1, buf, sizeof buf), 0);
  }
  CHECK_EQ_INT((int64_t)c.used, 1000);
  int right = 0;
  for (int k = 0; k < 1000; k++) {
    uint64_t h[2] = {(uint64_t)k * 64, (uint64_t)k};
    right += sp_sample_cache_get(&c, h, 1, &o1, got, sizeof got) == 1 && got[7] == k * 10 + 7;
  }
  CHECK_EQ_INT(right, 1000);
  /* another configuration, SM count, second hash or length is another key */
  uint64_t h5[2] = {5 * 64, 5}, h5b[2] = {5 * 64, 6};
  CHECK_EQ_INT(sp_sample_cache_get(&c, h5, 1, &o2, got, sizeof got), 0);
  CHECK_EQ_INT(sp_sample_cache_get(&c, h5, 2, &o1, got, sizeof got), 0);
  CHECK_EQ_INT(sp_sample_cache_get(&c, h5b, 1, &o1, got, sizeof got), 0);
  CHECK_EQ_INT(sp_sample_cache_get(&c, h5, 1, &o1, got, sizeof got - 8), 0);
  CHECK_EQ_INT(c.hits, 1000);
  CHECK_EQ_INT(c.misses, 4);
  /* the first result stored for a key stays; past max_bytes nothing more is stored */
  buf[0] = -1;
  CHECK_EQ_INT(sp_sample_cache_put(&c, h5, 1, &o1, buf, sizeof buf), 0);
  CHECK_EQ_INT(sp_sample_cache_get(&c, h5, 1, &o1, got, sizeof got), 1);
  CHECK_EQ_INT(got[0], 50);
  CHECK_EQ_INT(sp_sample_cache_put(&c, h5, 1, &o2, buf, sizeof buf), 0);
  CHECK_EQ_INT(sp_sample_cache_get(&c, h5, 1, &o2, got, sizeof got), 0);
  CHECK_EQ_INT((int64_t)c.bytes, 1000 * 64);
  sp_sample_cache_free(&c);
}

int main(void)
{
  SP_RUN(test_trace_hash);
  SP_RUN(test_prefix_stop);
  SP_RUN(test_cache_table);
  return SP_TEST_END();
}
