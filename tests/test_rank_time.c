/* The time model: parallelism counts, not only traffic. */
#include "schedpredict/rank.h"
#include "tests/sp_test.h"

static sp_arch h100;

static sp_cm_counters streaming(void) {
  /* 16 M doubles read and written once, fully coalesced, no reuse */
  sp_cm_counters c;
  memset(&c, 0, sizeof c);
  c.ld_requests = (1 << 24) / 32;
  c.ld_sectors = (int64_t)(1 << 24) * 8 / 32;
  c.l2_read_sectors = c.ld_sectors;
  c.dram_read_bytes = c.ld_sectors * 32;
  c.st_requests = c.ld_requests;
  c.st_sectors = c.ld_sectors;
  c.l2_write_sectors = c.st_sectors;
  c.dram_write_bytes = c.st_sectors * 32;
  return c;
}

static void run(const sp_cm_counters *c, int threads, int64_t blocks, sp_rank_time *t) {
  sp_schedule s;
  memset(&s, 0, sizeof s);
  s.block[0] = threads;
  s.block[1] = s.block[2] = 1;
  s.grid[0] = blocks;
  s.grid[1] = s.grid[2] = 1;
  sp_trace_stats st;
  memset(&st, 0, sizeof st);
  st.blocks = blocks;
  st.active_blocks_per_sm = sp_arch_active_blocks_per_sm(&h100, threads, 0, 0);
  sp_rank_predict_time(c, &st, &s, &h100, 1, t);
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
   * latency, over 8 blocks x 8 warps */
  double bytes = (double)(c.dram_read_bytes + c.dram_write_bytes);
  double wait = (double)(1 << 19) / 132 * h100.dram_latency_cycles / 64 /
                (h100.clock_boost_mhz * 1e6);
  CHECK(one_wave.bound == SP_BOUND_DRAM);
  CHECK_NEAR(one_wave.latency_s, wait, 1e-3 * wait);
  CHECK_NEAR(one_wave.total_s, bytes / (h100.dram_bw_gbs * 1e9) + wait + one_wave.launch_s,
             1e-3 * one_wave.total_s);
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
}

static void test_tail_wave(void) {
  sp_cm_counters c = streaming();
  sp_rank_time exact, tail;
  int active = sp_arch_active_blocks_per_sm(&h100, 1024, 0, 0);
  run(&c, 1024, (int64_t)active * 132, &exact);
  run(&c, 1024, (int64_t)active * 132 + 1, &tail); /* one block more: a second, tiny wave */
  CHECK(tail.total_s > exact.total_s);
}

int main(void) {
  char err[512];
  if (sp_arch_load("h100", &h100, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  SP_RUN(test_blocks_matter);
  SP_RUN(test_traffic_and_hits);
  SP_RUN(test_tail_wave);
  return SP_TEST_END();
}
