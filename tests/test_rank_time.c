/* The time model: parallelism counts, not only traffic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/rank.h"
#include "tests/sp_nestbuild.h"
#include "tests/sp_test.h"

static sp_arch h100;

/* n doubles read and written once, fully coalesced, no reuse */
static sp_cm_counters streaming_of(int64_t n) {
  sp_cm_counters c;
  memset(&c, 0, sizeof c);
  c.ld_requests = n / 32;
  c.ld_sectors = n * 8 / 32;
  c.l2_read_sectors = c.ld_sectors;
  c.dram_read_bytes = c.ld_sectors * 32;
  c.st_requests = c.ld_requests;
  c.st_sectors = c.ld_sectors;
  c.l2_write_sectors = c.st_sectors;
  c.dram_write_bytes = c.st_sectors * 32;
  return c;
}

static sp_cm_counters streaming(void) { return streaming_of(1 << 24); }

/* A 1-D launch of `blocks` blocks of `threads`, its statistics with `active` resident blocks an
 * SM and nothing else known. */
static void launch(int threads, int64_t blocks, int active, sp_schedule *s, sp_trace_stats *st) {
  memset(s, 0, sizeof *s);
  s->block[0] = threads;
  s->block[1] = s->block[2] = 1;
  s->grid[0] = blocks;
  s->grid[1] = s->grid[2] = 1;
  memset(st, 0, sizeof *st);
  st->blocks = blocks;
  st->active_blocks_per_sm = active;
}

static void run_comb(const sp_cm_counters *c, int threads, int64_t blocks,
                     const sp_rank_combine *comb, sp_rank_time *t) {
  sp_schedule s;
  sp_trace_stats st;
  launch(threads, blocks, sp_arch_active_blocks_per_sm(&h100, threads, 0, 0), &s, &st);
  sp_rank_predict_time(c, &st, &s, &h100, 1, comb, t);
}

static void run(const sp_cm_counters *c, int threads, int64_t blocks, sp_rank_time *t) {
  run_comb(c, threads, blocks, NULL, t);
}

static void test_blocks_matter(void) {
  sp_cm_counters c = streaming();
  sp_rank_time few, many, one_wave;
  run(&c, 256, 32, &few);
  run(&c, 256, 1024, &many);
  run(&c, 256, 132 * 8, &one_wave);
  CHECK(few.total_s > 2 * many.total_s); /* 32 blocks leave 100 SMs idle */
  CHECK_EQ_INT(few.sms_used, 32);
  CHECK_EQ_INT(many.sms_used, 132);
  /* a streaming kernel that fills the GPU is DRAM bound: bytes / bandwidth, plus the warps'
   * waiting for their loads: 2^24 / 32 / 132 requests per SM, one per iteration, each a DRAM
   * latency and the iteration's own cycles, over 8 blocks x 8 warps */
  double bytes = (double)(c.dram_read_bytes + c.dram_write_bytes);
  CHECK_NEAR(h100.loop_iteration_cycles, 36.8, 1e-12);
  double wait = (double)(1 << 19) / 132 * (h100.dram_latency_cycles + h100.loop_iteration_cycles) / 64 /
                (h100.clock_boost_mhz * 1e6);
  CHECK(one_wave.bound == SP_BOUND_DRAM);
  CHECK_NEAR(one_wave.latency_s, wait, 1e-3 * wait);
  /* the levels add as the 3-norm of their times: DRAM, the L2 (the same bytes, at the chip's
   * figure with every SM busy) and the L1's store bytes at l1_bw_bytes_per_cycle on each SM */
  double dram = bytes / (h100.dram_bw_gbs * 1e9), l2 = bytes / (h100.l2_bw_gbs * 1e9);
  double l1 = (double)c.st_sectors * 32 / h100.l1_bw_bytes_per_cycle /
              (h100.clock_boost_mhz * 1e6 * 132);
  CHECK_NEAR(one_wave.dram_s, dram, 1e-9 * dram);
  CHECK_NEAR(one_wave.l2_s, l2, 1e-9 * l2);
  CHECK_NEAR(one_wave.l1_s, l1, 1e-9 * l1);
  CHECK_NEAR(one_wave.total_s,
             cbrt(dram * dram * dram + l2 * l2 * l2 + l1 * l1 * l1) + wait + one_wave.launch_s,
             1e-3 * one_wave.total_s);
  CHECK(one_wave.total_s > dram + wait + one_wave.launch_s); /* more than the busiest level */
}

/* What k SMs draw: the probe's curves where the arch has them (h100), the shares otherwise. */
static void test_sm_bandwidth(void) {
  CHECK_NEAR(sp_rank_l2_bw_gbs(&h100, 1), 156.3, 1e-9);
  CHECK_NEAR(sp_rank_l2_bw_gbs(&h100, 132), h100.l2_bw_gbs, 1e-9); /* the chip's figure bounds it */
  CHECK_NEAR(sp_rank_dram_share(&h100, 33), 2556.8 / 2819.9, 1e-12);
  CHECK_NEAR(sp_rank_dram_share(&h100, 132), 1.0, 1e-12);
  sp_arch bare = h100;
  bare.l2_bw_by_sms.n = bare.dram_bw_by_sms.n = 0;
  CHECK_NEAR(sp_rank_l2_bw_gbs(&bare, 1), h100.l2_bw_gbs / 132, 1e-9);
  CHECK_NEAR(sp_rank_dram_share(&bare, 33), 0.5, 1e-12);
  /* one block of 1024 threads whose traffic is all L2 hits: its L2 time is what one SM draws */
  sp_cm_counters c = streaming();
  c.dram_read_bytes = c.dram_write_bytes = 0;
  sp_rank_time t;
  run(&c, 1024, 1, &t);
  double l2_bytes = (double)(c.l2_read_sectors + c.l2_write_sectors) * 32;
  CHECK_NEAR(t.l2_s, l2_bytes / 156.3e9, 1e-9 * t.l2_s);
}

static void test_traffic_and_hits(void) {
  sp_cm_counters c = streaming(), more = streaming();
  more.dram_read_bytes *= 4;
  sp_rank_time a, b;
  run(&c, 256, 4096, &a);
  run(&more, 256, 4096, &b);
  CHECK(b.total_s > a.total_s);
  sp_cm_counters hits = streaming();
  hits.ld_l1_hit_sectors = hits.ld_sectors * 3 / 4;
  run(&hits, 256, 4096, &b);
  CHECK(b.avg_latency_cycles < a.avg_latency_cycles);
  CHECK_NEAR(a.avg_latency_cycles, h100.dram_latency_cycles, 1e-9); /* no hit anywhere */
  /* hits on fills still in flight wait as misses do: 3/4 hits, 2/4 of all pending, leave
   * h1 = 1/4 (one load an iteration: latency 1/4 L1 + 3/4 DRAM, the L2 never hit) */
  sp_cm_counters pend = hits;
  pend.ld_l1_hit_pending_sectors = pend.ld_sectors / 2;
  run(&pend, 256, 4096, &b);
  CHECK_NEAR(b.avg_latency_cycles, 0.25 * h100.l1_hit_latency_cycles + 0.75 * h100.dram_latency_cycles,
             1e-9);
}

static void test_tail_wave(void) {
  sp_cm_counters c = streaming();
  sp_rank_time exact, tail;
  int active = sp_arch_active_blocks_per_sm(&h100, 1024, 0, 0);
  run(&c, 1024, (int64_t)active * 132, &exact);
  run(&c, 1024, (int64_t)active * 132 + 1, &tail); /* one block more: a second, tiny wave */
  CHECK(tail.total_s > exact.total_s);
}

/* A reduction's blocks each combine with one atomic on one address, serialized: 1.8 ns each on
 * the H100. The kernel lasts at least that long (the jacobi max and himeno sum probes). */
static void test_reduction_combine(void) {
  sp_cm_counters c = streaming();
  sp_rank_combine sum = {1, 0}, max = {0, 1}, both = {1, 1};
  sp_rank_time none, few, many, cas, two, ragged;
  run(&c, 256, 135168, &none);
  run_comb(&c, 256, 1056, &sum, &few);
  run_comb(&c, 256, 135168, &sum, &many);
  run_comb(&c, 256, 135168, &max, &cas);
  run_comb(&c, 256, 135168, &both, &two);
  run_comb(&c, 200, 4096, &sum, &ragged);
  CHECK_NEAR(h100.same_address_atomic_ns, 1.8, 1e-9);
  CHECK_NEAR(few.combine_s, 1056 * 1.8e-9, 1e-12);
  CHECK_NEAR(many.combine_s, 135168 * 1.8e-9, 1e-12); /* 243 us, the probe's 243.5 */
  CHECK_NEAR(cas.combine_s, 2 * many.combine_s, 1e-12); /* a read and a swap */
  CHECK_NEAR(two.combine_s, 3 * many.combine_s, 1e-12);
  CHECK_NEAR(ragged.combine_s, 4096.0 * 200 * 1.8e-9, 1e-12); /* no whole warps: per thread */
  CHECK_NEAR(none.combine_s, 0, 0);
  /* 1,056 atomics hide under the streaming traffic; 135,168 CAS pairs (487 us) do not */
  CHECK(few.bound == SP_BOUND_DRAM);
  CHECK_NEAR(few.total_s, none.total_s, 0.02 * none.total_s);
  CHECK(none.total_s < cas.combine_s);
  CHECK(cas.bound == SP_BOUND_COMBINE);
  CHECK_NEAR(cas.total_s, cas.combine_s + cas.launch_s, 1e-12);
  /* without a measured figure the arch adds nothing */
  sp_arch other = h100;
  other.same_address_atomic_ns = 0;
  sp_schedule s;
  memset(&s, 0, sizeof s);
  s.nband = 1;
  s.block[0] = 256;
  s.block[1] = s.block[2] = 1;
  s.grid[0] = 135168;
  s.grid[1] = s.grid[2] = 1;
  sp_trace_stats st;
  memset(&st, 0, sizeof st);
  st.blocks = 135168;
  st.active_blocks_per_sm = 8;
  sp_rank_time t;
  sp_rank_predict_time(&c, &st, &s, &other, 1, &max, &t);
  CHECK_NEAR(t.combine_s, 0, 0);
}

/* GCC's 16,896 gangs over 4,096 rows of 32: 128 blocks work, one per SM, and they alone set the
 * parallelism; empty blocks only add their combines. */
static void test_working_blocks(void) {
  sp_cm_counters c = streaming();
  sp_schedule s;
  sp_trace_stats st;
  launch(1024, 16896, 2, &s, &st);
  s.block[0] = 32, s.block[1] = 32;
  sp_rank_time all, some, only;
  sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &all);
  st.blocks_working = 128;
  sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &some);
  st.blocks = 128; /* the same 128 blocks launched alone */
  sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &only);
  CHECK_EQ_INT(all.sms_used, 132);
  CHECK_EQ_INT(some.sms_used, 128);
  CHECK_EQ_INT(some.active_warps_per_sm, 32);
  /* the same work: the 16,768 idle blocks pass through the 136 slots the 128 working ones
   * leave free while they stream for a millisecond (test_empty_blocks) */
  CHECK_NEAR(some.empty_s, 0, 0);
  CHECK_NEAR(some.total_s, only.total_s, 1e-12);
  CHECK(some.latency_s > 2 * all.latency_s); /* 32 warps on 128 SMs wait, not 64 on 132 */
  sp_rank_combine max = {0, 1};
  st.blocks = 16896;
  sp_rank_predict_time(&c, &st, &s, &h100, 1, &max, &some);
  CHECK_NEAR(some.combine_s, 16896 * 2 * 1.8e-9, 1e-12); /* every block combines */
}

/* Warps without iterations hide no latency: 256-lane blocks over a 64-iteration loop keep 2 of
 * their 8 warps busy, so the SM waits as with 2-warp blocks; residency stays the block's. */
static void test_working_warps(void) {
  sp_cm_counters c = streaming();
  sp_schedule s;
  sp_trace_stats st;
  launch(256, 1024, 8, &s, &st);
  sp_rank_time all, two, unknown;
  st.warps_working_per_block = 8;
  sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &all);
  st.warps_working_per_block = 2;
  sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &two);
  st.warps_working_per_block = 0; /* not computed: the block's warps */
  sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &unknown);
  CHECK_EQ_INT(all.active_warps_per_sm, 64);
  CHECK_EQ_INT(two.active_warps_per_sm, 16);
  CHECK_NEAR(two.latency_s, 4 * all.latency_s, 1e-12 * all.latency_s + 1e-18);
  CHECK_NEAR(two.dram_s, all.dram_s, 1e-15);
  CHECK_NEAR(unknown.total_s, all.total_s, 1e-15);
  CHECK(two.total_s > all.total_s);
}

/* Blocks without iterations pass through the slots the working blocks leave free, and after the
 * work at the dispatch rate or as the slots allow (h100: 0.57 ns, 220 ns). By hand:
 * - 1024 x 1024-thread blocks working, 2 slots an SM (264): none free, so all 15,872 idle
 *   blocks of a 16,896 grid pass after the work at min(1 / 0.57, 264 / 220) = 1.2 a ns:
 *   13,227 ns (the probe measured 12.4 us);
 * - 1024 x 128-thread blocks working, 16 slots an SM (2,112): 1,088 free pass
 *   min(1 / 0.57, 1088 / 220) = 1.754 a ns during the work; a work of t s passes
 *   1.754e9 t of them, and the rest go at 1.754 a ns. */
static void test_empty_blocks(void) {
  CHECK_NEAR(h100.block_dispatch_ns, 0.57, 1e-12);
  CHECK_NEAR(h100.empty_block_ns, 220, 1e-12);
  sp_cm_counters c = streaming();
  sp_schedule s;
  sp_trace_stats st;
  sp_rank_time alone, idle;
  launch(1024, 1024, 2, &s, &st);
  sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &alone);
  launch(1024, 16896, 2, &s, &st);
  st.blocks_working = 1024;
  sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &idle);
  CHECK_NEAR(alone.empty_s, 0, 0);
  CHECK_NEAR(idle.empty_s, 15872 / (264.0 / 220) * 1e-9, 1e-12);
  CHECK_NEAR(idle.total_s, alone.total_s + idle.empty_s, 1e-12);
  /* 128-thread blocks: the work hides what it passes during it */
  launch(128, 1024, 16, &s, &st);
  sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &alone);
  double work = alone.total_s - alone.launch_s, rate = fmin(1 / 0.57, 1088 / 220.0);
  double hidden = rate * work * 1e9;
  for (int64_t grid = 2048; grid <= 1 << 20; grid *= 4) {
    launch(128, grid, 16, &s, &st);
    st.blocks_working = 1024;
    sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &idle);
    double left = fmax(0.0, (double)(grid - 1024) - hidden);
    CHECK_NEAR(idle.empty_s, left / rate * 1e-9, 1e-12);
  }
  CHECK(idle.empty_s > 0 && idle.bound == SP_BOUND_EMPTY); /* a million blocks: 600 us */
  /* an arch without the figures: idle blocks are free */
  sp_arch other = h100;
  other.block_dispatch_ns = 0;
  sp_rank_predict_time(&c, &st, &s, &other, 1, NULL, &idle);
  CHECK_NEAR(idle.empty_s, 0, 0);
}

/* The distributor deals working blocks no faster than empty ones: a grid of many short blocks
 * takes at least its blocks x block_dispatch_ns (0.57 ns on the H100). 1 M doubles streamed as
 * 131,072 blocks of 128 threads: 74.7 us of dealing against a few of traffic. */
static void test_block_dispatch(void) {
  sp_cm_counters small = streaming_of(1 << 20);
  sp_schedule s;
  sp_trace_stats st;
  sp_rank_time many, few;
  launch(128, 131072, 16, &s, &st);
  sp_rank_predict_time(&small, &st, &s, &h100, 1, NULL, &many);
  CHECK(many.bound == SP_BOUND_DISPATCH);
  CHECK_NEAR(many.total_s, 131072 * 0.57e-9 + many.launch_s, 1e-12);
  CHECK(many.dram_s + many.latency_s < 0.2 * many.total_s);
  launch(128, 1024, 16, &s, &st);
  sp_rank_predict_time(&small, &st, &s, &h100, 1, NULL, &few);
  CHECK(few.bound != SP_BOUND_DISPATCH && few.total_s < 0.5 * many.total_s);
  /* an arch without the figure deals for free */
  sp_arch other = h100;
  other.block_dispatch_ns = 0;
  launch(128, 131072, 16, &s, &st);
  sp_rank_predict_time(&small, &st, &s, &other, 1, NULL, &many);
  CHECK(many.bound != SP_BOUND_DISPATCH && many.total_s < 0.5 * 131072 * 0.57e-9);
}

/* Every written byte reaches DRAM once a run, also what is still dirty in the L2 when a run
 * (or a sample too short to fill the L2) ends: it is written back during the next run (the
 * H100 measured all of laplacian's and jacobi's written data; the previous estimate kept an
 * L2's worth out and predicted this kernel 40 % less write traffic). */
static void test_dirty_writes(void) {
  sp_cm_counters evicted = streaming(), dirty = streaming();
  dirty.l2_dirty_bytes = dirty.dram_write_bytes;
  dirty.dram_write_bytes = 0;
  CHECK_NEAR(sp_rank_dram_write_bytes(&dirty), (double)evicted.dram_write_bytes, 0);
  sp_rank_time a, b;
  run(&evicted, 256, 132 * 8, &a);
  run(&dirty, 256, 132 * 8, &b);
  CHECK(a.bound == SP_BOUND_DRAM);
  CHECK_NEAR(b.dram_s, a.dram_s, 1e-12);
  CHECK_NEAR(b.total_s, a.total_s, 1e-12);
}

/* The whole ranking of n, every candidate simulated exactly (no sampling). */
static void rank_exact(const sp_nest *n, const sp_arch *a, sp_rank_result *r) {
  sp_rank_options o;
  memset(&o, 0, sizeof o);
  o.exact = true;
  o.threads = 1;
  char err[256];
  CHECK_EQ_INT(sp_rank_nest(n, a, &o, r, err, sizeof err), 0);
}

/* Ranks n exactly with the H100's warp_loads_in_flight and without it; over the candidates
 * whose loads all miss, the latency term without over the one with must be `ratio`. Returns
 * how many candidates were checked. */
static int latency_ratio_without_cap(const sp_nest *n, double ratio) {
  sp_arch without = h100;
  without.warp_loads_in_flight = 0;
  sp_rank_result r6, r0;
  rank_exact(n, &h100, &r6);
  rank_exact(n, &without, &r0);
  CHECK(r6.n == r0.n);
  int checked = 0;
  for (int x = 0; x < r6.n && r6.n == r0.n; x++) {
    const sp_rank_candidate *c6 = &r6.candidates[x], *c0 = &r0.candidates[x];
    if (c0->total.ld_l1_hit_sectors != 0 || c0->time.latency_s <= 0) continue;
    CHECK_NEAR(c0->time.latency_s / c6->time.latency_s, ratio, 1e-9);
    checked++;
  }
  sp_rank_result_free(&r6);
  sp_rank_result_free(&r0);
  return checked;
}

/* A sequential loop whose body stores nothing (sum += A[k][i]) is unrolled by nvcc and a warp
 * keeps warp_loads_in_flight of its loads outstanding (the H100: 6, validation/probes/
 * mlp_probe.cu); with a store in the body the next iteration's loads wait behind it. Every load
 * of A misses, so the latency term is the iterations' count x one miss: 6 times shorter
 * without the store, unchanged with it, and unchanged on an architecture without the figure. */
static void test_unrolled_loads(void) {
  CHECK_NEAR(h100.warp_loads_in_flight, 6, 1e-9);
  for (int store_inside = 0; store_inside < 2; store_inside++) {
    tnest t;
    tn_init(&t);
    int i = tn_loop(&t, -1, true, true, 0, 0, 4223, 0, 1);
    int k = tn_loop(&t, i, false, false, 0, 0, 63, 0, 1);
    int a = tn_array(&t, 8, 4224 * 64 * 8), c = tn_array(&t, 8, 4224 * 8);
    int chain[2] = {i, k};
    int64_t ca[SP_MAX_LOOPS] = {8, 4224 * 8}, cc[SP_MAX_LOOPS] = {8, 0};
    tn_ref(&t, a, false, 8, chain, 2, 0, ca);
    tn_ref(&t, c, true, 8, chain, store_inside ? 2 : 1, 0, cc);
    CHECK(latency_ratio_without_cap(&t.n, store_inside ? 1.0 : 6.0) > 10);
  }
}

/* A body of 12 independent loads and a store (himeno's has 31) keeps no more of them in flight
 * than the unrolled loop does, warp_loads_in_flight (mlp_probe: 61 ns a load 32 at a time, 68
 * at 8), so an iteration waits two misses: twice the latency term of an arch without the
 * figure, which waits all 12 as one. Every load misses (each component is read once). */
static void test_body_loads_capped(void) {
  tnest t;
  tn_init(&t);
  int i = tn_loop(&t, -1, true, true, 0, 0, 65535, 0, 1);
  int chain[1] = {i};
  int64_t c[SP_MAX_LOOPS] = {8};
  int a = tn_array(&t, 8, 12 * 65536 * 8); /* 12 components, a[q][i] */
  for (int q = 0; q < 12; q++) tn_ref(&t, a, false, 8, chain, 1, q * 65536 * 8, c);
  tn_ref(&t, tn_array(&t, 8, 65536 * 8), true, 8, chain, 1, 0, c);
  CHECK(latency_ratio_without_cap(&t.n, 0.5) > 5);
}

/* Store sectors written in part cost the H100 0.015 ns each, GPU-wide (partial_probe.cu): added
 * to the time, the same when fewer SMs store, absent on an arch without the figure. */
static void test_partial_writes(void) {
  CHECK_NEAR(h100.l2_partial_write_ns, 0.015, 1e-12);
  sp_cm_counters whole = streaming(), part = whole;
  part.st_partial_sectors = 1 << 20;
  sp_rank_time a, b, few_a, few_b;
  run(&whole, 256, 132 * 8, &a);
  run(&part, 256, 132 * 8, &b);
  CHECK_NEAR(a.partial_s, 0, 1e-15);
  CHECK_NEAR(b.partial_s, (1 << 20) * 0.015e-9, 1e-12);
  CHECK_NEAR(b.total_s - a.total_s, (1 << 20) * 0.015e-9, 1e-12);
  CHECK(b.bound == SP_BOUND_DRAM);
  run(&whole, 256, 33, &few_a); /* 33 SMs busy: the same cost, a rate of the whole L2 */
  run(&part, 256, 33, &few_b);
  CHECK_NEAR(few_b.total_s - few_a.total_s, (1 << 20) * 0.015e-9, 1e-12);
  part.st_partial_sectors = 1 << 28; /* more than the traffic's time: it bounds */
  run(&part, 256, 132 * 8, &b);
  CHECK(b.bound == SP_BOUND_PARTIAL);
  sp_arch keep = h100;
  h100.l2_partial_write_ns = 0;
  run(&part, 256, 132 * 8, &b);
  h100 = keep;
  CHECK_NEAR(b.total_s, a.total_s, 1e-12);
}

/* The count itself, through the ranking: B[i][j + off] for j in 0..255 in rows of 264 doubles.
 * With j on 32 lanes in a row each warp's store covers 9 sectors with the first and the last
 * partial when off = 1, 8 whole ones when off = 0; 64 x 256 / 32 = 512 warp stores. */
static void test_partial_count(void) {
  for (int off = 0; off < 2; off++) {
    tnest t;
    tn_init(&t);
    int i = tn_loop(&t, -1, true, true, 0, 0, 63, 0, 1);
    int j = tn_loop(&t, i, true, true, 0, 0, 255, 0, 1);
    int b = tn_array(&t, 8, 64 * 264 * 8);
    int chain[2] = {i, j};
    int64_t cb[SP_MAX_LOOPS] = {264 * 8, 8};
    tn_ref(&t, b, true, 8, chain, 2, 8 * off, cb);
    sp_rank_result r;
    rank_exact(&t.n, &h100, &r);
    int checked = 0;
    for (int x = 0; x < r.n; x++) {
      const sp_rank_candidate *c = &r.candidates[x];
      char map[160];
      sp_report_cuda_mapping(&t.n, &c->schedule, map, sizeof map);
      CHECK(c->total.st_partial_sectors <= c->total.st_sectors);
      if (strncmp(map, "i->ty", 5) != 0 || strstr(map, "j->tx") == NULL || c->schedule.block[0] % 32)
        continue;
      CHECK_EQ_INT(c->total.st_sectors, 512 * (8 + off));
      CHECK_EQ_INT(c->total.st_partial_sectors, 512 * 2 * off);
      checked++;
    }
    CHECK(checked > 3);
    sp_rank_result_free(&r);
  }
}

/* A red-black row, through the ranking: u[i][j] read, then stored under (i + j) % 2 == 0. With j
 * on whole warps of threadIdx.x each warp's store writes every other double of 8 sectors it has
 * just read, which nothing else writes: all its partly written sectors are alone, and cost no
 * time; on narrower blocks they are charged. Second, u[i][2j] read and stored under i % 2 == 0:
 * the simulation finds the same sectors alone, but the guard does not alternate along the
 * store's elements (no loop is contiguous for it), so the ranking charges them. */
static void test_partial_alone(void) {
  for (int redblack = 1; redblack >= 0; redblack--) {
    tnest t;
    tn_init(&t);
    int i = tn_loop(&t, -1, true, true, 0, 0, 63, 0, 1);
    int j = tn_loop(&t, i, true, true, 0, 0, redblack ? 255 : 127, 0, 1);
    int u = tn_array(&t, 8, 64 * 256 * 8);
    int chain[2] = {i, j};
    int64_t cu[SP_MAX_LOOPS] = {256 * 8, redblack ? 8 : 16}, g[SP_MAX_LOOPS] = {1, redblack};
    tn_ref(&t, u, false, 8, chain, 2, 0, cu);
    int w = tn_ref(&t, u, true, 8, chain, 2, 0, cu);
    tn_guard(&t, w, SP_CMP_EQ0, 0, g);
    t.guards[t.nguards - 1].modulus = 2;
    sp_rank_result r;
    rank_exact(&t.n, &h100, &r);
    int alone = 0, charged = 0;
    for (int x = 0; x < r.n; x++) {
      const sp_rank_candidate *c = &r.candidates[x];
      char map[160];
      sp_report_cuda_mapping(&t.n, &c->schedule, map, sizeof map);
      bool lanes_j = strstr(map, "j->tx") && c->schedule.block[0] >= 32 && !c->schedule.collapse_count;
      if (!c->total.st_partial_sectors) continue;
      if (lanes_j && redblack) {
        CHECK_EQ_INT(c->total.st_partial_alone_sectors, c->total.st_partial_sectors);
        CHECK_NEAR(c->time.partial_s, 0, 1e-15);
        alone++;
      } else {
        CHECK_EQ_INT(c->total.st_partial_alone_sectors, 0);
        CHECK(c->time.partial_s > 0);
        charged++;
      }
    }
    CHECK(charged > 3 && (alone > 3) == (redblack == 1));
    sp_rank_result_free(&r);
  }
}

/* Unequal blocks that all run at once: the slowest SM sets the time. By hand: 132 blocks, one an
 * SM, 131 of work 1 and one of work 3 (mean 134/132): that SM's L1 time grows by 3/mean, its
 * latency chain too, over the same launch's with every block equal. */
static void test_uneven_blocks(void) {
  sp_cm_counters c = streaming();
  c.ld_sectors *= 8; /* L1-heavy: its part matters */
  sp_schedule s;
  sp_trace_stats st;
  launch(256, 132, sp_arch_active_blocks_per_sm(&h100, 256, 0, 0), &s, &st);
  int blocks[132];
  double work[132], heaviest[132];
  for (int i = 0; i < 132; i++) blocks[i] = 1, work[i] = heaviest[i] = 1;
  sp_rank_uneven u = {132, blocks, work, heaviest};
  sp_rank_time equal, even, uneven;
  sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &equal);
  sp_rank_predict_time_uneven(&c, &st, &s, &h100, 1, NULL, NULL, &u, 1.0, &even);
  CHECK(even.uneven_s == 0 && even.total_s == equal.total_s);
  work[7] = heaviest[7] = 3;
  sp_rank_predict_time_uneven(&c, &st, &s, &h100, 1, NULL, NULL, &u, 1.0, &uneven);
  double f = 3 / (134.0 / 132), d3 = pow(equal.dram_s, 3) + pow(equal.l2_s, 3);
  double want = cbrt(d3 + pow(equal.l1_s * f, 3)) + equal.latency_s * f -
                (cbrt(d3 + pow(equal.l1_s, 3)) + equal.latency_s);
  CHECK(want > 0 && fabs(uneven.uneven_s - want) < 1e-12 * want + 1e-18);
  CHECK(fabs(uneven.total_s - (equal.total_s + want)) < 1e-12);
  /* exactly one wave (a capped grid of 8 blocks an SM): every block resident from the start,
   * applied; the same work spread over 8 times the blocks, one heavy one among them */
  sp_rank_time one_wave, one_wave_equal;
  launch(256, 132 * 8, 8, &s, &st);
  for (int i = 0; i < 132; i++) blocks[i] = 8, work[i] = 8, heaviest[i] = 1;
  sp_rank_predict_time(&c, &st, &s, &h100, 1, NULL, &one_wave_equal);
  work[7] = 10, heaviest[7] = 3;
  sp_rank_predict_time_uneven(&c, &st, &s, &h100, 1, NULL, NULL, &u, 1.0, &one_wave);
  CHECK(one_wave.uneven_s > 0);
  CHECK(fabs(one_wave.total_s - (one_wave_equal.total_s + one_wave.uneven_s)) < 1e-12);
  for (int i = 0; i < 132; i++) blocks[i] = 1, work[i] = heaviest[i] = 1;
  work[7] = heaviest[7] = 3;
  /* two waves: the later blocks take the slots the light ones leave; not applied */
  sp_rank_time two;
  launch(256, 132 * 9, sp_arch_active_blocks_per_sm(&h100, 256, 0, 0), &s, &st);
  sp_rank_predict_time_uneven(&c, &st, &s, &h100, 1, NULL, NULL, &u, 1.0, &two);
  CHECK(two.uneven_s == 0);

  /* sp_rank_uneven_of on a 64 x 64 triangle (j <= i): i -> by (2 blocks, 32 rounds each),
   * j -> tx + bx (2 x 32 lanes): 4 blocks, one wave, all of the triangle's 2,080 iterations */
  tnest tri;
  tn_init(&tri);
  tn_loop(&tri, -1, true, true, 0, 0, 63, 0, 1);
  tn_loop(&tri, 0, true, true, 0, 0, 0, 1, 1);
  int a = tn_array(&tri, 4, 64 * 64 * 4);
  int64_t cb[SP_MAX_LOOPS] = {256, 4};
  int ch[2] = {0, 1};
  tn_ref(&tri, a, false, 4, ch, 2, 0, cb);
  sp_schedule t = {.nband = 2, .block = {32, 1, 1}, .grid = {2, 2, 1}};
  t.map[0] = (sp_loop_map){-1, 1};
  t.map[1] = (sp_loop_map){0, 0};
  sp_rank_uneven v;
  CHECK_EQ_INT(sp_rank_uneven_of(&tri.n, &t, &h100, 8, &v), 0);
  CHECK_EQ_INT(v.nsm, 132);
  int nb = 0;
  double total = 0, top = 0;
  for (int i = 0; i < v.nsm; i++) nb += v.sm_blocks[i], total += v.sm_work[i], top = fmax(top, v.sm_max[i]);
  CHECK_EQ_INT(nb, 4);
  CHECK(total == 2080);
  /* the heaviest: odd rows under j < 32, 2 + 4 + .. + 32 + 16 x 32 = 784 (the even rows', 768;
   * past 31, 272 and 256) */
  CHECK(top == 784);
  sp_rank_uneven_free(&v);
  /* a grid of more blocks than one wave holds whose working blocks are in it (blocks 0 .. 127
   * of 2 x 1056: i -> by one row a block): counted, the blocks without work left out */
  t.grid[1] = 132 * 8;
  CHECK_EQ_INT(sp_rank_uneven_of(&tri.n, &t, &h100, 8, &v), 0);
  CHECK_EQ_INT(v.nsm, 132);
  nb = 0, total = 0;
  for (int i = 0; i < v.nsm; i++) nb += v.sm_blocks[i], total += v.sm_work[i];
  CHECK_EQ_INT(nb, 128 - 32); /* rows 32 .. 63 under x = 1: j >= 32 needs i >= 32 */
  CHECK(total == 2080);
  sp_rank_uneven_free(&v);
  /* working blocks past the first wave: nothing (a 1024-row triangle, one row a block: 2,048
   * working blocks of 32 threads, 1,056 at once with 8 an SM) */
  tri.n.loops[0].upper.constant = 1023;
  t.grid[1] = 1024;
  CHECK_EQ_INT(sp_rank_uneven_of(&tri.n, &t, &h100, 8, &v), 0);
  CHECK_EQ_INT(v.nsm, 0);
  /* a rectangular nest (the square, not the triangle) on the 4-block grid that counted the
   * triangle: its blocks differ by no bound; not counted */
  tri.n.loops[0].upper.constant = 63;
  tri.n.loops[1].upper = (sp_affine){.constant = 63};
  tri.n.loops[1].trip_min = tri.n.loops[1].trip_max = 64;
  CHECK(sp_nest_rectangular(&tri.n));
  t.grid[1] = 2;
  CHECK_EQ_INT(sp_rank_uneven_of(&tri.n, &t, &h100, 8, &v), 0);
  CHECK_EQ_INT(v.nsm, 0);
}

/* The DRAM time's factor for warps drifting apart (sp_rank_dram_drift), by hand from the H100's
 * curves: each array at the piece of a line its requests read, weighed by its DRAM bytes. */
static void test_dram_drift(void) {
  sp_cm_counters a[3];
  memset(a, 0, sizeof a);
  a[0].ld_sectors = 800, a[0].ld_lines = 800; /* 32 bytes of each line: a warp over 8 rows */
  a[0].dram_read_bytes = 3000;
  a[1].ld_sectors = 800, a[1].ld_lines = 200; /* whole lines */
  a[1].dram_read_bytes = 1000;
  a[1].st_sectors = 400, a[1].st_lines = 200; /* 64 bytes of each line */
  a[1].dram_write_bytes = 1000, a[1].l2_dirty_bytes = 1000;
  CHECK_NEAR(sp_rank_dram_drift(a, 1, 64, &h100), 1.747, 1e-12);
  CHECK_NEAR(sp_rank_dram_drift(a, 1, 1, &h100), 1.0, 0);
  CHECK_NEAR(sp_rank_dram_drift(a, 1, 1000, &h100), 1.747, 1e-12); /* the last point's beyond */
  /* between points, linear in log2(rounds): 3 rounds lie 0.585 of the way from 2 to 4 */
  CHECK_NEAR(sp_rank_dram_drift(a, 1, 3, &h100), 1.003 + (1.041 - 1.003) * log2(1.5), 1e-12);
  /* 3000 bytes at 1.747, 1000 read at 1 (whole lines), 2000 written at 1.164 (64 bytes) */
  CHECK_NEAR(sp_rank_dram_drift(a, 2, 64, &h100), (3000 * 1.747 + 1000 + 2000 * 1.164) / 6000, 1e-12);
  /* 48-byte pieces: half way from the 32-byte curve to the 64-byte one; 96 bytes: half way
   * from the 64-byte curve to none */
  a[2].ld_sectors = 300, a[2].ld_lines = 200, a[2].dram_read_bytes = 10;
  CHECK_NEAR(sp_rank_dram_drift(&a[2], 1, 64, &h100), (1.747 + 1.164) / 2, 1e-12);
  a[2].ld_sectors = 600;
  CHECK_NEAR(sp_rank_dram_drift(&a[2], 1, 64, &h100), (1.164 + 1.0) / 2, 1e-12);
  /* no curve (the K40's description, as every one but the Hoppers'): no factor */
  sp_arch bare = h100;
  bare.dram_drift_32b.n = bare.dram_drift_64b.n = 0;
  CHECK_NEAR(sp_rank_dram_drift(a, 2, 64, &bare), 1.0, 0);
  /* the factor lengthens the DRAM part only */
  sp_cm_counters c = streaming();
  sp_schedule sch;
  sp_trace_stats st;
  launch(256, 1024, sp_arch_active_blocks_per_sm(&h100, 256, 0, 0), &sch, &st);
  sp_rank_time one, drift;
  sp_rank_predict_time_uneven(&c, &st, &sch, &h100, 1, NULL, NULL, NULL, 1.0, &one);
  sp_rank_predict_time_uneven(&c, &st, &sch, &h100, 1, NULL, NULL, NULL, 1.5, &drift);
  CHECK_NEAR(drift.dram_s, 1.5 * one.dram_s, 1e-15);
  CHECK_NEAR(drift.l2_s, one.l2_s, 0);
  CHECK_NEAR(drift.latency_s, one.latency_s, 0);
  CHECK(one.bound == SP_BOUND_DRAM && drift.total_s > one.total_s + 0.4 * one.dram_s);
  CHECK_NEAR(drift.dram_drift, 1.5, 0);
}

/* The DRAM time's factor for blocks walking down the rows (sp_rank_dram_walk), by hand from the
 * H100's description (the H200's curves): the walked bytes at the curve over all the DRAM bytes,
 * at least 1; loads and stores each at their own walk and piece. */
static void test_dram_walk(void) {
  sp_cm_counters a[2];
  memset(a, 0, sizeof a);
  a[0].ld_sectors = 400, a[0].ld_lines = 200; /* 64 bytes of each line: 8 doubles of 4 rows */
  a[0].dram_read_bytes = 3000;
  double w[4] = {128, 0, 0, 0};
  CHECK_NEAR(sp_rank_dram_walk(a, 1, w, 1, &h100), 1.464, 1e-12);
  w[0] = 1; /* walking one block down is walking along */
  CHECK_NEAR(sp_rank_dram_walk(a, 1, w, 1, &h100), 1.0, 0);
  w[0] = 64; /* between 32 (1.344) and 128 (1.464), linear in log2: half way */
  CHECK_NEAR(sp_rank_dram_walk(a, 1, w, 1, &h100), 1.404, 1e-12);
  w[0] = 4096; /* the last point's beyond */
  CHECK_NEAR(sp_rank_dram_walk(a, 1, w, 1, &h100), 1.464, 1e-12);
  a[0].ld_sectors = 200, w[0] = 8; /* 32-byte pieces */
  CHECK_NEAR(sp_rank_dram_walk(a, 1, w, 1, &h100), 1.132, 1e-12);
  a[0].ld_sectors = 400, w[0] = 128;
  /* an array read along its rows beside it: 3000 bytes at 1.464 over 4500 is under 1 */
  a[1].ld_sectors = 800, a[1].ld_lines = 200, a[1].dram_read_bytes = 1500;
  CHECK_NEAR(sp_rank_dram_walk(a, 2, w, 1, &h100), 1.0, 0);
  a[1].dram_read_bytes = 500;
  CHECK_NEAR(sp_rank_dram_walk(a, 2, w, 1, &h100), 3000 * 1.464 / 3500, 1e-12);
  /* stores walked on their own (symmetrize's a[j][i] = a[i][j]): 64-byte pieces written, 2000
   * bytes (write-backs + dirty), beside the 3000 walked read bytes and 500 read along */
  a[1].st_sectors = 400, a[1].st_lines = 200, a[1].dram_write_bytes = 1000, a[1].l2_dirty_bytes = 1000;
  w[3] = 128;
  CHECK_NEAR(sp_rank_dram_walk(a, 2, w, 1, &h100), (3000 + 2000) * 1.464 / 5500, 1e-12);
  /* a copy (no walked array read back): the copy's curves, 1.186 at 128 for 64-byte pieces */
  CHECK_NEAR(sp_rank_dram_walk(a, 2, w, 0, &h100), (3000 + 2000) * 1.186 / 5500, 1e-12);
  sp_arch bare = h100; /* without copy curves a copy takes the read-back ones */
  bare.dram_walk_copy_32b.n = bare.dram_walk_copy_64b.n = 0;
  CHECK_NEAR(sp_rank_dram_walk(a, 2, w, 0, &bare), (3000 + 2000) * 1.464 / 5500, 1e-12);
  bare.dram_walk_32b.n = bare.dram_walk_64b.n = 0;
  CHECK_NEAR(sp_rank_dram_walk(a, 2, w, 1, &bare), 1.0, 0);
  CHECK_NEAR(sp_rank_dram_walk(a, 2, NULL, 1, &h100), 1.0, 0);
}

/* Blocks a line or more wide walking down the rows (sp_rank_dram_order), by hand on
 * B[j][i] = A[i][j] over 4096^2 doubles with i on ty + bx and j on tx + by: A's loads walk
 * gridDim.x blocks at the width of a block's row, B's stores do not; B's bytes are left out so
 * that A's slowdown is the factor. A copy: the copy's wide curves (a 5-point stencil's, H200). */
static void test_wide_walk(void) {
  tnest t;
  tn_transpose(&t, 4096);
  sp_cm_counters pa[2];
  memset(pa, 0, sizeof pa);
  pa[0].ld_sectors = 4, pa[0].ld_lines = 1, pa[0].dram_read_bytes = 3000;
  static const struct { int bx, by; double want; } cases[] = {
      {64, 4, 1.141},  /* 512-byte rows walking 1,024 blocks: the curve's last point */
      {32, 8, 1.168},  /* 256 bytes, 512 blocks */
      {16, 16, 1.186}, /* 128 bytes, 256 blocks */
      {128, 2, 1.0},   /* 1 KiB rows: not measured, not charged */
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    sp_schedule sc = {.nband = 2, .block = {cases[k].bx, cases[k].by, 1},
                      .grid = {4096 / cases[k].by, 4096 / cases[k].bx, 1}};
    sc.map[0] = (sp_loop_map){1, 0};
    sc.map[1] = (sp_loop_map){0, 1};
    double f = 0;
    CHECK_EQ_INT(sp_rank_dram_order(&t.n, &sc, pa, &h100, &f), 0);
    CHECK_NEAR(f, cases[k].want, 1e-12);
    /* the public walk (narrow blocks only) leaves them out */
    double w[4];
    sp_rank_walk_blocks(&t.n, &sc, &h100, w);
    CHECK(w[0] == 0);
  }
  /* between widths in proportion: 384-byte rows walking 1,024 blocks, half way from the 256-byte
   * curve's last point (1.168 at 512) to the 512-byte one's (1.141 at 1,024) */
  sp_schedule sc = {.nband = 2, .block = {48, 4, 1}, .grid = {1024, 4096 / 48 + 1, 1}};
  sc.map[0] = (sp_loop_map){1, 0};
  sc.map[1] = (sp_loop_map){0, 1};
  double f = 0;
  CHECK_EQ_INT(sp_rank_dram_order(&t.n, &sc, pa, &h100, &f), 0);
  CHECK_NEAR(f, (1.168 + 1.141) / 2, 1e-12);
  /* without wide curves: no charge */
  sp_arch bare = h100;
  for (int k = 0; k < 3; k++) bare.dram_walk_wide[k].n = bare.dram_walk_copy_wide[k].n = 0;
  CHECK_EQ_INT(sp_rank_dram_order(&t.n, &sc, pa, &bare, &f), 0);
  CHECK_NEAR(f, 1.0, 0);
}

/* Which arrays' loads and stores walk (sp_rank_walk_blocks), on B[j][i] = A[i][j] over 4096^2
 * doubles (A: loads, its contiguous j is loop 1; B: stores, contiguous i is loop 0), and on a
 * window a[i][j + k] whose sequential k has the element stride too. */
static void test_walk_blocks(void) {
  tnest t;
  tn_transpose(&t, 4096);
  double w[6];
  /* i on ty + bx, j on tx + by, blocks of 8x32: A's strips of 64 bytes come 128 blocks apart;
   * B's i runs on ty: its warps read whole lines over the block, nothing walks */
  sp_schedule s = {.nband = 2, .block = {8, 32, 1}, .grid = {128, 512, 1}};
  s.map[0] = (sp_loop_map){1, 0};
  s.map[1] = (sp_loop_map){0, 1};
  CHECK_EQ_INT(sp_rank_walk_blocks(&t.n, &s, &h100, w), 0); /* a copy: no array read back */
  CHECK(w[0] == 128 && w[1] == 0 && w[2] == 0 && w[3] == 0);
  /* j on tx + bz: the walk is gx * gy blocks, once i on ty + bx covers its rows in a round */
  s.map[1] = (sp_loop_map){0, 2};
  s.grid[0] = 64, s.grid[1] = 2, s.grid[2] = 512;
  sp_rank_walk_blocks(&t.n, &s, &h100, w);
  CHECK(w[0] == 0); /* i on bx alone covers half its rows: 2 rounds */
  s.block[1] = 64, s.block[0] = 4, s.grid[2] = 1024; /* 4 doubles along j: 32-byte pieces */
  s.grid[1] = 1;
  sp_rank_walk_blocks(&t.n, &s, &h100, w);
  CHECK(w[0] == 64 && w[1] == 0);
  s.block[0] = 8, s.block[1] = 32;
  /* j on tx + bx: along the rows */
  s.map[1] = (sp_loop_map){0, 0};
  s.map[0] = (sp_loop_map){1, 1};
  s.grid[0] = 512, s.grid[1] = 128, s.grid[2] = 1;
  sp_rank_walk_blocks(&t.n, &s, &h100, w);
  CHECK(w[0] == 0 && w[1] == 0 && w[2] == 0 && w[3] == 0);
  /* i on tx + by, j on ty + bx: B's stores walk, A's loads (j on ty) do not */
  s.map[0] = (sp_loop_map){0, 1};
  s.map[1] = (sp_loop_map){1, 0};
  s.grid[0] = 128, s.grid[1] = 512;
  sp_rank_walk_blocks(&t.n, &s, &h100, w);
  CHECK(w[0] == 0 && w[1] == 0 && w[2] == 0 && w[3] == 128);
  /* blocks a line wide along x (16 doubles): whole lines, no walk */
  s.block[0] = 16, s.block[1] = 16, s.grid[1] = 256;
  sp_rank_walk_blocks(&t.n, &s, &h100, w);
  CHECK(w[3] == 0);
  /* a capped grid (each thread runs 4 rounds of j): sp_rank_dram_drift's case, no walk */
  s.block[0] = 8, s.block[1] = 32, s.grid[0] = 32, s.grid[1] = 512;
  sp_rank_walk_blocks(&t.n, &s, &h100, w);
  CHECK(w[3] == 0);
  /* an arch without the curves */
  sp_arch bare = h100;
  bare.dram_walk_32b.n = bare.dram_walk_64b.n = 0;
  s.grid[0] = 128;
  sp_rank_walk_blocks(&t.n, &s, &bare, w);
  CHECK(w[3] == 0);
  sp_rank_walk_blocks(&t.n, &s, &h100, w);
  CHECK(w[3] == 128);

  /* xreuse's a[i][j + k] (k sequential, its stride the element's): the walk is j's */
  tnest x;
  tn_2d(&x, 4096, 4096);
  int k = tn_loop(&x, 1, false, false, 0, 0, 7, 0, 1);
  int a = tn_array(&x, 8, 4096 * 4104 * 8);
  int chain[3] = {0, 1, k};
  int64_t c[SP_MAX_LOOPS] = {4104 * 8, 8, 8};
  tn_ref(&x, a, false, 8, chain, 3, 0, c);
  sp_schedule xs = {.nband = 2, .block = {8, 32, 1}, .grid = {128, 512, 1}};
  xs.map[0] = (sp_loop_map){1, 0};
  xs.map[1] = (sp_loop_map){0, 1};
  CHECK_EQ_INT(sp_rank_walk_blocks(&x.n, &xs, &h100, w), 0);
  CHECK(w[0] == 128 && w[1] == 0);
  /* and b[i][j] += ...: b is read back where it is written */
  int b = tn_array(&x, 8, 4096 * 4096 * 8);
  int64_t cbj[SP_MAX_LOOPS] = {4096 * 8, 8};
  tn_ref(&x, b, false, 8, chain, 2, 0, cbj);
  tn_ref(&x, b, true, 8, chain, 2, 0, cbj);
  CHECK_EQ_INT(sp_rank_walk_blocks(&x.n, &xs, &h100, w), 1);
  CHECK(w[2] == 128 && w[3] == 128);
  /* read back elsewhere (b[i][j + 1]): not the same sectors' read and write */
  x.refs[x.n.nrefs - 2].offset.constant = 8;
  CHECK_EQ_INT(sp_rank_walk_blocks(&x.n, &xs, &h100, w), 0);
}

/* The bank cycles of loads that missed the L1 in a warp over several rows add to the L1's time
 * (the data stage takes such a request about twice its bank cycles). */
static void test_l1_miss_cycles(void) {
  sp_cm_counters c = streaming();
  c.ld_l1_cycles = (int64_t)1 << 30; /* L1 bound */
  sp_rank_time hits, misses;
  run(&c, 256, 1024, &hits);
  c.ld_l1_miss_bank_cycles = (int64_t)1 << 30;
  run(&c, 256, 1024, &misses);
  CHECK(hits.bound == SP_BOUND_L1);
  /* the stores' L1 cycles are in both */
  CHECK_NEAR(misses.l1_s - hits.l1_s, (double)(1 << 30) / (h100.clock_boost_mhz * 1e6 * 132), 1e-9 * misses.l1_s);
  CHECK(misses.total_s > hits.total_s + 0.9 * (misses.l1_s - hits.l1_s));
}

/* Floating-point work: its chains add to the warps' waiting, its issue bounds the time from
 * below; by hand on one full wave of 256-thread blocks (8 an SM: 64 warps). */
static void test_fp_terms(void) {
  sp_cm_counters c;
  memset(&c, 0, sizeof c);
  c.ld_requests = (int64_t)132 * 64 * 1000; /* 1,000 iterations a warp, every load an L1 hit */
  c.ld_sectors = c.ld_requests * 8;
  c.ld_l1_hit_sectors = c.ld_sectors;
  c.ld_l1_cycles = c.ld_requests;
  sp_schedule s;
  sp_trace_stats st;
  launch(256, 132 * 8, 8, &s, &st);
  const double clock = h100.clock_boost_mhz * 1e6;
  sp_rank_time none, zero, chain, issue;
  sp_rank_arith ar;
  memset(&ar, 0, sizeof ar);
  sp_rank_predict_time_uneven(&c, &st, &s, &h100, 1, NULL, NULL, NULL, 1.0, &none);
  sp_rank_predict_time_uneven(&c, &st, &s, &h100, 1, NULL, &ar, NULL, 1.0, &zero);
  CHECK_NEAR(zero.total_s, none.total_s, 0);
  CHECK(zero.bound == none.bound);
  CHECK_NEAR(zero.arith_s + zero.arith_chain_s, 0, 0);

  /* every warp iteration waits for a division: 1,000 x 125.2 cycles a warp, 64 warps an SM in
   * flight */
  ar.chain_warp_cycles = (double)c.ld_requests * h100.fp_op[SP_FP64_DIV].latency_cycles;
  ar.warp_ops[SP_FP64_DIV] = (double)c.ld_requests;
  sp_rank_predict_time_uneven(&c, &st, &s, &h100, 1, NULL, &ar, NULL, 1.0, &chain);
  double chain_s = 1000.0 * 125.2 / clock, issue_s = 64 * 1000.0 * 4.51 / clock;
  CHECK_NEAR(chain.arith_chain_s, chain_s, 1e-9 * chain_s);
  CHECK_NEAR(chain.latency_s, none.latency_s + chain_s, 1e-9 * chain_s);
  CHECK_NEAR(chain.arith_s, issue_s, 1e-9 * issue_s);
  /* each warp waits 1,000 x (125.2 + 39.6 + 36.8) cycles (201,600) while its SM issues 64,000
   * divisions at 4.51 cycles (288,640): the issue bounds it */
  CHECK(chain.bound == SP_BOUND_ARITH);
  CHECK_NEAR(chain.total_s, issue_s + chain.launch_s, 1e-9 * chain.total_s);

  /* one warp an SM (32-thread blocks): nothing hides the chain */
  launch(32, 132, 1, &s, &st);
  sp_cm_counters one = c;
  one.ld_requests = 132 * 1000;
  one.ld_sectors = one.ld_l1_hit_sectors = one.ld_requests * 8;
  one.ld_l1_cycles = one.ld_requests;
  ar.chain_warp_cycles = (double)one.ld_requests * 125.2;
  ar.warp_ops[SP_FP64_DIV] = (double)one.ld_requests;
  sp_rank_predict_time_uneven(&one, &st, &s, &h100, 1, NULL, NULL, NULL, 1.0, &none);
  sp_rank_predict_time_uneven(&one, &st, &s, &h100, 1, NULL, &ar, NULL, 1.0, &issue);
  CHECK_NEAR(issue.arith_chain_s, 1000 * 125.2 / clock, 1e-9);
  CHECK(issue.bound == SP_BOUND_ARITH_LATENCY); /* 125.2 cycles against the L1's 39.6 + 36.8 */
  CHECK_NEAR(issue.total_s, none.total_s + issue.arith_chain_s, 1e-9 * issue.total_s);
}

/* sp_rank_arith_of: each loop's operations times its executions, at the lanes per request the
 * counters show. */
static void test_fp_work_of_candidate(void) {
  tnest t;
  tn_init(&t);
  int i = tn_loop(&t, -1, true, true, 0, 0, 1023, 0, 1); /* i: 1,024 iterations, parallel */
  int j = tn_loop(&t, i, false, false, 0, 0, 99, 0, 1);  /* j: 100, sequential */
  int a = tn_array(&t, 8, 1024 * 100 * 8);
  int chain[2] = {i, j};
  int64_t coef[SP_MAX_LOOPS] = {800, 8};
  tn_ref(&t, a, false, 8, chain, 2, 0, coef);
  t.n.loops[j].fp.ops[SP_FP64_SIMPLE] = 3;
  t.n.loops[j].fp.ops[SP_FP64_SQRT] = 1;
  t.n.loops[j].fp.chain[SP_FP64_SIMPLE] = 2;
  t.n.loops[j].fp.chain[SP_FP64_SQRT] = 1;
  t.n.loops[i].fp.ops[SP_FP32_DIV] = 1;
  t.n.loops[i].fp.chain[SP_FP32_DIV] = 1;
  sp_cm_counters c;
  memset(&c, 0, sizeof c);
  c.ld_requests = 1024 * 100 / 16; /* half the lanes of each request work */
  sp_rank_arith ar = sp_rank_arith_of(&t.n, &c, &h100);
  double per_lane = 1.0 / 16;
  CHECK_NEAR(ar.warp_ops[SP_FP64_SIMPLE], 3 * 102400 * per_lane, 1e-9);
  CHECK_NEAR(ar.warp_ops[SP_FP64_SQRT], 102400 * per_lane, 1e-9);
  CHECK_NEAR(ar.warp_ops[SP_FP32_DIV], 1024 * per_lane, 1e-9);
  double cyc = 102400 * per_lane * (2 * 8.2 + 93.3) + 1024 * per_lane * 57.7;
  CHECK_NEAR(ar.chain_warp_cycles, cyc, 1e-9 * cyc);
  /* an arch without the figures: nothing */
  sp_arch bare = h100;
  memset(bare.fp_op, 0, sizeof bare.fp_op);
  ar = sp_rank_arith_of(&t.n, &c, &bare);
  CHECK_NEAR(ar.warp_ops[SP_FP64_SIMPLE] + ar.chain_warp_cycles, 0, 0);
}

/* The report's prose (sp_report_prose): lines of at most SP_REPORT_PROSE_COLUMNS broken at
 * spaces, the first indented by two, the rest by four, the words in order; a word longer than a
 * line on a line of its own, whole. */
static void test_report_prose(void) {
  char *one = sp_report_prose("%d candidates", 12);
  CHECK(one && strcmp(one, "  12 candidates\n") == 0);
  free(one);
  char words[600] = "", rejoined[600] = "", *lines;
  for (int k = 0; strlen(words) < 400; k++)
    snprintf(words + strlen(words), sizeof words - strlen(words), "%sw%d", k ? " " : "", k * 37);
  lines = sp_report_prose("%s", words);
  CHECK(lines != NULL);
  int n = 0, bad = 0;
  for (char *l = lines, *e; l && *l; l = e + 1, n++) {
    e = strchr(l, '\n');
    size_t len = (size_t)(e - l), ind = n ? 4 : 2;
    bad += len > SP_REPORT_PROSE_COLUMNS || strncmp(l, "    ", ind) != 0 || l[ind] == ' ';
    /* a line ends where the next word would not fit */
    if (e[1]) bad += len + 1 + strcspn(e + 1 + 4, " \n") <= SP_REPORT_PROSE_COLUMNS;
    snprintf(rejoined + strlen(rejoined), sizeof rejoined - strlen(rejoined), "%s%.*s",
             n ? " " : "", (int)(len - ind), l + ind);
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(n >= 5);
  CHECK(strcmp(rejoined, words) == 0);
  free(lines);
  char word[121];
  memset(word, 'x', 120);
  word[120] = 0;
  lines = sp_report_prose("a %s b", word);
  CHECK(lines && strncmp(lines, "  a\n    xxx", 11) == 0 && strstr(lines, "x\n    b\n") &&
        strlen(lines) == 4 + 4 + 120 + 1 + 6);
  free(lines);
}

int main(void) {
  char err[512];
  if (sp_arch_load("h100", &h100, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  SP_RUN(test_report_prose);
  SP_RUN(test_blocks_matter);
  SP_RUN(test_sm_bandwidth);
  SP_RUN(test_traffic_and_hits);
  SP_RUN(test_tail_wave);
  SP_RUN(test_reduction_combine);
  SP_RUN(test_working_blocks);
  SP_RUN(test_working_warps);
  SP_RUN(test_empty_blocks);
  SP_RUN(test_block_dispatch);
  SP_RUN(test_dirty_writes);
  SP_RUN(test_unrolled_loads);
  SP_RUN(test_body_loads_capped);
  SP_RUN(test_partial_writes);
  SP_RUN(test_partial_count);
  SP_RUN(test_partial_alone);
  SP_RUN(test_uneven_blocks);
  SP_RUN(test_dram_drift);
  SP_RUN(test_dram_walk);
  SP_RUN(test_walk_blocks);
  SP_RUN(test_wide_walk);
  SP_RUN(test_l1_miss_cycles);
  SP_RUN(test_fp_terms);
  SP_RUN(test_fp_work_of_candidate);
  return SP_TEST_END();
}
