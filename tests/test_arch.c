/* Architecture descriptions: every shipped file loads with hand-checked values, every bad file is
 * rejected with a message naming the file and the field, and Eq. 7.1-7.2 on hand-computed cases.
 * Runs from the source directory (ctest's WORKING_DIRECTORY). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "schedpredict/arch.h"
#include "schedpredict/ir.h"
#include "tests/sp_test.h"

static int load_path(const char *path, sp_arch *a) {
  char err[1024];
  int rc = sp_arch_load_file(path, a, err, sizeof err);
  if (rc) fprintf(stderr, "  unexpected: %s\n", err);
  return rc;
}

static void test_k40(void) {
  sp_arch a;
  CHECK_EQ_INT(load_path("arch/k40.json", &a), 0);
  CHECK_EQ_STR(a.name, "k40");
  CHECK_EQ_INT(a.dram_drift_32b.n + a.dram_drift_64b.n, 0); /* not measured: no drift term */
  CHECK_EQ_INT(a.dram_walk_32b.n + a.dram_walk_64b.n, 0);
  CHECK_EQ_INT(a.cc_major, 3);
  CHECK_EQ_INT(a.cc_minor, 5);
  CHECK_EQ_INT(a.sm_count, 15);
  CHECK_EQ_INT(a.warp_size, 32);
  CHECK_EQ_INT(a.max_threads_per_sm, 2048);
  CHECK_EQ_INT(a.max_blocks_per_sm, 16);
  CHECK_EQ_INT(a.max_warps_per_sm, 64);
  CHECK_EQ_INT(a.l1_bytes, 16 * 1024);
  CHECK_EQ_INT(a.l1_line_bytes, 128);
  CHECK_EQ_INT(a.l1_sector_bytes, 128);
  CHECK_EQ_INT(a.l1_caches_global_loads, 0);
  CHECK_EQ_INT(a.l1_store_policy, SP_L1_STORE_BYPASS);
  CHECK_EQ_INT(a.l2_bytes, 1536 * 1024);
  CHECK_EQ_INT(a.l2_line_bytes, 128);
  CHECK_EQ_INT(a.l2_sector_bytes, 32);
  CHECK_EQ_INT(a.l2_partitions, 1);
  CHECK_EQ_INT(a.l1_assoc, 0);
  CHECK_NEAR(a.l2_far_hit_latency_cycles, 0.0, 0.0);
  CHECK_NEAR(a.dram_bw_gbs, 288.0, 1e-9);
  CHECK_NEAR(a.clock_base_mhz, 745.0, 1e-9);
  CHECK(a.l1_hit_latency_cycles < a.l2_hit_latency_cycles);
  CHECK_EQ_INT(sp_arch_l1_bytes_for_shared(&a, 0), 16 * 1024);
}

static void test_v100_a100(void) {
  sp_arch a;
  CHECK_EQ_INT(load_path("arch/v100.json", &a), 0);
  CHECK_EQ_INT(a.cc_major, 7);
  CHECK_EQ_INT(a.sm_count, 80);
  CHECK_EQ_INT(a.max_blocks_per_sm, 32);
  CHECK_EQ_INT(a.l2_bytes, 6 * 1024 * 1024);
  CHECK_EQ_INT(a.l2_fill_bytes, 0); /* optional field absent: one sector per miss */
  CHECK_EQ_INT(a.l1_sector_bytes, 32);
  CHECK_EQ_INT(a.l1_caches_global_loads, 1);
  CHECK_EQ_INT(a.n_shared_carveouts, 6);
  /* 40 KB of shared per SM -> 64 KB carveout -> 128 - 64 = 64 KB of L1 */
  CHECK_EQ_INT(sp_arch_l1_bytes_for_shared(&a, 40 * 1024), 64 * 1024);
  CHECK_EQ_INT(sp_arch_l1_bytes_for_shared(&a, 0), 117760);
  CHECK_EQ_INT(sp_arch_l1_bytes_for_shared(&a, 97 * 1024), 0);

  CHECK_EQ_INT(load_path("arch/a100.json", &a), 0);
  CHECK_EQ_INT(a.cc_major, 8);
  CHECK_EQ_INT(a.sm_count, 108);
  CHECK_EQ_INT(a.l2_bytes, 40 * 1024 * 1024);
  CHECK_EQ_INT(a.l2_reuse_bytes, 0); /* unmeasured there: the model's L2 is all of it */
  CHECK_EQ_INT(a.l2_reuse_set_sectors, 0); /* and one fully associative LRU */
  CHECK_EQ_INT(sp_arch_l2_model_bytes(&a), 40 * 1024 * 1024);
  CHECK_EQ_INT(a.l2_partitions, 2);
  CHECK(a.l2_far_hit_latency_cycles > a.l2_hit_latency_cycles);
  CHECK_EQ_INT(a.shared_reserved_per_block_bytes, 1024);
}

static void test_hopper(void) {
  sp_arch a;
  CHECK_EQ_INT(load_path("arch/h100.json", &a), 0);
  CHECK_EQ_STR(a.name, "h100");
  CHECK_EQ_INT(a.cc_major, 9);
  CHECK_EQ_INT(a.sm_count, 132);
  CHECK_EQ_INT(a.l2_bytes, 50 * 1024 * 1024);
  /* fill_partner_probe: half of a region lost at 33.9 MiB of footprint */
  CHECK_EQ_INT(a.l2_reuse_bytes, 35546624);
  CHECK_EQ_INT(a.l2_reuse_set_sectors, 512); /* fit_sets.py on the probe */
  CHECK_EQ_INT(sp_arch_l2_model_bytes(&a), 35546624);
  CHECK_EQ_INT(a.l2_partitions, 2);
  CHECK_EQ_INT(a.l2_fill_bytes, 64);
  CHECK_EQ_INT(a.l1_shared_unified_bytes, 256 * 1024);
  CHECK_EQ_INT(a.shared_per_sm_bytes, 228 * 1024);
  CHECK_EQ_INT(a.l1_line_bytes, 128);
  CHECK_EQ_INT(a.l2_sector_bytes, 32);
  CHECK_NEAR(a.clock_boost_mhz, 1980.0, 1e-9);
  /* one period of the measured dealing: SMs 124-131 four times, the others three */
  CHECK_EQ_INT(a.n_block_dealing_cycle, 404);
  int dealt[132] = {0};
  for (int i = 0; i < a.n_block_dealing_cycle; i++) dealt[a.block_dealing_cycle[i]]++;
  for (int s = 0; s < 132; s++) CHECK_EQ_INT(dealt[s], s >= 124 ? 4 : 3);
  /* sm_bandwidth_probe's curves, read at a point (1 SM), between two (3 SMs: halfway from 2 to
   * 4), below the first (0.5: through zero) and beyond the last (200: its value) */
  CHECK_EQ_INT(a.l2_bw_by_sms.n, 12);
  CHECK_EQ_INT(a.dram_bw_by_sms.n, 12);
  CHECK_NEAR(sp_arch_bw_at(&a.l2_bw_by_sms, 1), 156.3, 1e-9);
  CHECK_NEAR(sp_arch_bw_at(&a.l2_bw_by_sms, 3), (309.8 + 616.9) / 2, 1e-9);
  CHECK_NEAR(sp_arch_bw_at(&a.dram_bw_by_sms, 0.5), 125.1 / 2, 1e-9);
  CHECK_NEAR(sp_arch_bw_at(&a.dram_bw_by_sms, 200), 2819.9, 1e-9);
  /* piece_drift_probe's curves: 1 to 64 rounds */
  CHECK_EQ_INT(a.dram_drift_32b.n, 7);
  CHECK_EQ_INT(a.dram_drift_64b.n, 7);
  CHECK_NEAR(a.dram_drift_32b.x[6], 64, 0);
  CHECK_NEAR(a.dram_drift_32b.y[6], 1.747, 1e-12);
  CHECK_EQ_INT(a.dram_walk_64b.n, 5); /* the H200's walk, until an H100 is measured */
  CHECK_NEAR(a.dram_walk_64b.x[4], 128, 0);
  CHECK_NEAR(a.dram_walk_64b.y[4], 1.464, 1e-12);
  CHECK_EQ_INT(a.dram_walk_copy_32b.n, 5);
  CHECK_NEAR(a.dram_walk_copy_64b.y[4], 1.186, 1e-12);
  CHECK_NEAR(a.dram_drift_64b.y[6], 1.164, 1e-12);

  CHECK_EQ_INT(load_path("arch/h200.json", &a), 0);
  CHECK_EQ_INT(a.sm_count, 132);
  CHECK_EQ_INT(a.l2_bytes, 60 * 1024 * 1024); /* cudaGetDeviceProperties on the H200 */
  CHECK_EQ_INT(a.l2_reuse_bytes, 41208960); /* fill_partner_probe on the H200: 39.3 MiB */
  CHECK_EQ_INT(a.l2_reuse_set_sectors, 512);
  CHECK_EQ_INT(a.l2_partitions, 2);
  CHECK_NEAR(a.dram_bw_gbs, 4800.0, 1e-9);
  CHECK_EQ_INT(a.n_block_dealing_cycle, 0); /* not measured on the H200 */
  /* sm_bandwidth_probe on the H200 */
  CHECK_EQ_INT(a.l2_bw_by_sms.n, 12);
  CHECK_NEAR(a.l2_bw_by_sms.y[0], 153.3, 1e-12);
  CHECK_EQ_INT(a.dram_bw_by_sms.n, 12);
  CHECK_NEAR(a.dram_bw_by_sms.y[11], 4266.2, 1e-12);
  CHECK_NEAR(a.warp_loads_in_flight, 6, 1e-12);    /* mlp_probe on the H200 */
  CHECK_NEAR(a.loop_iteration_cycles, 36.8, 1e-12); /* the H100's iteration_probe, the same SM */
  /* fp_op_probe on the H200: latency and SM cycles a warp instruction, in sp_fp_kind order */
  CHECK_NEAR(a.fp_op[SP_FP64_SIMPLE].latency_cycles, 8.2, 1e-12);
  CHECK_NEAR(a.fp_op[SP_FP64_DIV].issue_cycles, 4.51, 1e-12);
  CHECK_NEAR(a.fp_op[SP_FP64_SQRT].latency_cycles, 93.3, 1e-12);
  CHECK_NEAR(a.fp_op[SP_FP32_SPECIAL].issue_cycles, 2.46, 1e-12);
  CHECK_NEAR(a.l2_partial_write_ns, 0.013, 1e-12); /* partial_probe on the H200 */
  CHECK_NEAR(a.block_dispatch_ns, 0.58, 1e-12);    /* empty_block_probe on the H200 */
  CHECK_NEAR(a.empty_block_ns, 220, 1e-12);
  CHECK_EQ_INT(load_path("arch/a100.json", &a), 0);
  for (int k = 0; k < SP_ARCH_FP_KINDS; k++) /* not measured: no arithmetic term */
    CHECK_NEAR(a.fp_op[k].latency_cycles + a.fp_op[k].issue_cycles, 0, 0);
  CHECK_NEAR(a.l2_partial_write_ns, 0, 0); /* not measured: free */
  CHECK_NEAR(a.block_dispatch_ns, 0, 0);
  CHECK_NEAR(a.empty_block_ns, 0, 0);
}

static void test_load_by_name(void) {
  char err[1024];
  sp_arch a;
  unsetenv("SCHEDPREDICT_ARCH_PATH");
  const char *names[] = {"k40", "v100", "a100", "h100", "h200"};
  for (int i = 0; i < 5; i++) {
    int rc = sp_arch_load(names[i], &a, err, sizeof err);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "  %s\n", err);
    else CHECK_EQ_STR(a.name, names[i]);
  }
  CHECK_EQ_INT(sp_arch_load("nosuchgpu", &a, err, sizeof err), -1);
  CHECK(strstr(err, "nosuchgpu") != NULL);
  CHECK_EQ_INT(sp_arch_load("../etc/passwd", &a, err, sizeof err), -1); /* a path: no such file */
  CHECK_EQ_INT(sp_arch_load("Bad Name", &a, err, sizeof err), -1);
  CHECK_EQ_INT(sp_arch_load("", &a, err, sizeof err), -1);

  /* $SCHEDPREDICT_ARCH_PATH comes first; a file found by name must carry that name */
  setenv("SCHEDPREDICT_ARCH_PATH", "/nonexistent:tests/inputs/arch", 1);
  CHECK_EQ_INT(sp_arch_load("mismatch", &a, err, sizeof err), -1);
  CHECK(strstr(err, "tests/inputs/arch/mismatch.json: field 'name'") != NULL);
  CHECK_EQ_INT(sp_arch_load("k40", &a, err, sizeof err), 0); /* falls through to arch/ */

  sp_arch_entry *e = NULL;
  int n = 0;
  CHECK_EQ_INT(sp_arch_list(&e, &n, err, sizeof err), 0);
  int bad_seen = 0, good_seen = 0;
  for (int i = 0; i < n; i++) {
    if (!strcmp(e[i].name, "negative")) bad_seen = !e[i].ok && strstr(e[i].error, "l1_bytes");
    if (!strcmp(e[i].name, "k40")) good_seen = e[i].ok;
    if (i) CHECK(strcmp(e[i - 1].name, e[i].name) < 0);
  }
  CHECK(bad_seen);
  CHECK(good_seen);
  free(e);

  unsetenv("SCHEDPREDICT_ARCH_PATH");
  CHECK_EQ_INT(sp_arch_list(&e, &n, err, sizeof err), 0);
  CHECK(n >= 5);
  int ok = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 5; j++)
      if (!strcmp(e[i].name, names[j]) && e[i].ok && e[i].full_name[0]) ok++;
  CHECK_EQ_INT(ok, 5);
  free(e);
}

static void test_bad_files(void) {
  static const struct {
    const char *file, *expect;
  } cases[] = {
      {"missing_field.json", "field 'l2_bytes': missing"},
      {"wrong_type.json", "field 'sm_count': 'value' must be an integer, got a string"},
      {"negative.json", "field 'l1_bytes': 'value' must be positive"},
      {"zero.json", "field 'max_blocks_per_sm': 'value' must be positive"},
      {"sector_not_dividing.json", "field 'l2_sector_bytes'"},
      {"fill_not_pow2.json", "field 'l2_fill_bytes': 48 must be a power of two"},
      {"line_too_many_sectors.json", "field 'l2_line_bytes': 1024 holds 32 sectors of 32 bytes; the model keeps at most 16"},
      {"reuse_over_l2.json", "field 'l2_reuse_bytes': 62914560 must be a multiple of l2_sector_bytes above l1_bytes and at most l2_bytes 52428800"},
      {"sets_not_pow2.json", "field 'l2_reuse_set_sectors': 500 must be a power of two, at least a line's sectors and at most the L2's"},
      {"warp_size_64.json", "field 'warp_size': must be 32"},
      {"no_source.json", "field 'dram_bw_gbs': missing 'source'"},
      {"bad_source_kind.json", "field 'clock_base_mhz': 'source' must begin with"},
      {"unknown_field.json", "field 'l2_byts': unknown field"},
      {"bad_policy.json", "field 'l1_store_policy'"},
      {"bare_number.json", "field 'sm_count': expected an object"},
      {"null_value.json", "field 'l2_bytes': 'value' must not be null"},
      {"carveouts_descending.json", "field 'shared_carveouts_bytes'"},
      {"latency_order.json", "field 'l2_hit_latency_cycles'"},
      {"bad_cc.json", "field 'compute_capability'"},
      {"warps_mismatch.json", "field 'max_warps_per_sm'"},
      {"real_for_int.json", "field 'sm_count': 'value' must be an integer, got a real"},
      {"bad_syntax.json", "line 4, column"},
      {"empty.json", "invalid JSON"},
      {"not_object.json", "top level must be a JSON object"},
      {"duplicate_key.json", "invalid JSON: duplicate object key"},
      {"dealing_out_of_range.json", "field 'block_dealing_cycle': element 15: SM 15, but sm_count is 15"},
      {"dealing_missing_sm.json", "field 'block_dealing_cycle': SM 14 is never dealt a block"},
      {"dealing_not_ids.json", "field 'block_dealing_cycle': element 1 must be an SM id"},
      {"dispatch_alone.json", "field 'empty_block_ns': missing: block_dispatch_ns and empty_block_ns"},
      {"curve_descending.json", "field 'l2_bw_by_sms_gbs': SM counts must be strictly ascending (element 2)"},
      {"curve_short.json", "field 'dram_bw_by_sms_gbs': the last point is at 8 SMs; it must reach sm_count 15"},
      {"curve_not_pairs.json", "field 'l2_bw_by_sms_gbs': element 1 must be [SMs, GB/s]"},
      {"drift_below_one.json", "field 'dram_drift_slowdown_32b': element 1 must be [rounds, slowdown]: a positive integer and a number of at least 1"},
      {"drift_descending.json", "field 'dram_drift_slowdown_64b': rounds must be strictly ascending (element 2)"},
      {"walk_not_ascending.json", "field 'dram_walk_slowdown_64b': blocks must be strictly ascending (element 1)"},
      {"fp_op_zero.json", "field 'fp64_div_op': 'value' must be {\"latency_cycles\": L, \"sm_cycles_per_warp_instruction\": C} with L and C positive numbers"},
      {"does_not_exist.json", "does_not_exist.json"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[256], err[1024];
    snprintf(path, sizeof path, "tests/inputs/arch/%s", cases[i].file);
    sp_arch a;
    memset(err, 'x', sizeof err);
    int rc = sp_arch_load_file(path, &a, err, sizeof err);
    CHECK_EQ_INT(rc, -1);
    CHECK(strncmp(err, path, strlen(path)) == 0); /* names the file first */
    if (!strstr(err, cases[i].expect)) {
      fprintf(stderr, "  %s: expected \"%s\" in \"%s\"\n", cases[i].file, cases[i].expect, err);
      CHECK(0);
    }
  }
  /* tiny error buffers are still terminated and never overrun */
  char small[8];
  sp_arch a;
  CHECK_EQ_INT(sp_arch_load_file("tests/inputs/arch/negative.json", &a, small, sizeof small), -1);
  CHECK_EQ_INT(strlen(small), 7);
  CHECK_EQ_INT(sp_arch_load_file("tests/inputs/arch/negative.json", &a, NULL, 0), -1);
}

static void test_active_blocks(void) {
  sp_arch k;
  CHECK_EQ_INT(load_path("arch/k40.json", &k), 0);
  /* Eq. 7.2 on Kepler: min(2048 / bs, 16) */
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&k, 1024, 0, 0), 2);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&k, 256, 0, 0), 8);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&k, 128, 0, 0), 16);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&k, 64, 0, 0), 16); /* 32 by threads, capped at 16 */
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&k, 32, 0, 0), 16);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&k, 2048, 0, 0), 0); /* > 1024 per block */
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&k, 0, 0, 0), 0);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(NULL, 128, 0, 0), 0);
  /* partial warps: 48 threads occupy 2 warps; 2048/48 = 42 but 16 blocks cap */
  sp_occupancy o;
  CHECK_EQ_INT(sp_arch_occupancy(&k, 48, 0, 0, &o), 16);
  CHECK_EQ_INT(o.warps_per_block, 2);
  CHECK_EQ_INT(o.limit, SP_OCC_LIMIT_BLOCKS);

  /* registers: 256 threads x 64 regs = 2048 regs/warp, 65536/2048 = 32 warps -> 4 blocks */
  CHECK_EQ_INT(sp_arch_occupancy(&k, 256, 64, 0, &o), 4);
  CHECK_EQ_INT(o.limit, SP_OCC_LIMIT_REGISTERS);
  CHECK_EQ_INT(o.active_warps, 32);
  CHECK_NEAR(o.occupancy, 0.5, 1e-12);
  /* 33 regs round to 33*32 = 1056 -> 1280 per warp; 65536/1280 = 51 warps -> 48 (granularity
   * 4) -> 48/8 = 6 blocks of 256 */
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&k, 256, 33, 0), 6);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&k, 256, 256, 0), 0); /* > 255 per thread */
  /* 1024 threads x 255 regs: 8192 regs/warp, 8 warps fit but a block needs 32 */
  CHECK_EQ_INT(sp_arch_occupancy(&k, 1024, 255, 0, &o), 0);
  CHECK_EQ_INT(o.limit, SP_OCC_LIMIT_REGISTERS);
  /* shared: 48 KB / 12 KB = 4 blocks; 48 KB / (10000 -> 10240) = 4 */
  CHECK_EQ_INT(sp_arch_occupancy(&k, 128, 0, 12 * 1024, &o), 4);
  CHECK_EQ_INT(o.limit, SP_OCC_LIMIT_SHARED);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&k, 128, 0, 10000), 4);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&k, 128, 0, 49 * 1024), 0);

  sp_arch h;
  CHECK_EQ_INT(load_path("arch/h100.json", &h), 0);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&h, 64, 0, 0), 32);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&h, 32, 0, 0), 32);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&h, 1024, 0, 0), 2);
  /* shared with 1 KB reserved per block: (32 KB + 1 KB) -> 228 / 33 = 6 blocks */
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&h, 128, 0, 32 * 1024), 6);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&h, 128, 0, 227 * 1024), 1);
  CHECK_EQ_INT(sp_arch_active_blocks_per_sm(&h, 128, 0, 228 * 1024), 0);
}

static void test_waves(void) {
  sp_arch k;
  CHECK_EQ_INT(load_path("arch/k40.json", &k), 0);
  sp_waves w;
  /* the dissertation's example (sec. 7.3.3): 15 SMs, 2 blocks each, 60 blocks -> 2 waves */
  CHECK_EQ_INT(sp_arch_waves(&k, 60, 2, &w), 0);
  CHECK_EQ_INT(w.blocks_per_wave, 30);
  CHECK_EQ_INT(w.full_waves, 2);
  CHECK_EQ_INT(w.waves, 2);
  CHECK_EQ_INT(w.tail_blocks, 0);
  CHECK_NEAR(w.tail_fraction, 0.0, 0.0);
  CHECK_EQ_INT(sp_arch_waves(&k, 61, 2, &w), 0);
  CHECK_EQ_INT(w.full_waves, 2);
  CHECK_EQ_INT(w.waves, 3);
  CHECK_EQ_INT(w.tail_blocks, 1);
  CHECK_NEAR(w.tail_fraction, 1.0 / 30.0, 1e-12);
  CHECK_EQ_INT(sp_arch_waves(&k, 29, 2, &w), 0);
  CHECK_EQ_INT(w.full_waves, 0);
  CHECK_EQ_INT(w.waves, 1);
  CHECK_EQ_INT(w.tail_blocks, 29);
  CHECK_EQ_INT(sp_arch_waves(&k, 0, 2, &w), 0);
  CHECK_EQ_INT(w.waves, 0);
  CHECK_EQ_INT(sp_arch_waves(&k, 10, 0, &w), -1);
  CHECK_EQ_INT(sp_arch_waves(&k, -1, 2, &w), -1);
  /* H100: 132 SMs x 8 blocks = 1056 per wave; 4096 blocks -> 3 full + 928 */
  sp_arch h;
  CHECK_EQ_INT(load_path("arch/h100.json", &h), 0);
  CHECK_EQ_INT(sp_arch_waves(&h, 4096, 8, &w), 0);
  CHECK_EQ_INT(w.full_waves, 3);
  CHECK_EQ_INT(w.tail_blocks, 4096 - 3 * 1056);
  CHECK_EQ_INT(w.waves, 4);
  /* a billion blocks does not overflow */
  CHECK_EQ_INT(sp_arch_waves(&h, (int64_t)1 << 40, 32, &w), 0);
  CHECK_EQ_INT(w.waves, (((int64_t)1 << 40) + 4223) / 4224);
}

int main(void) {
  SP_RUN(test_k40);
  SP_RUN(test_v100_a100);
  SP_RUN(test_hopper);
  SP_RUN(test_load_by_name);
  SP_RUN(test_bad_files);
  SP_RUN(test_active_blocks);
  SP_RUN(test_waves);
  return SP_TEST_END();
}
