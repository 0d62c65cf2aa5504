/* schedpredict compare: statistics against hand-computed values, the merge of shards, corrupt
 * and mutated inputs, and the shape of the CSV and JSON outputs.
 *
 * tests/inputs/compare/plan.json + measured.json, kernel matmul.c:10 (5 candidates, all ok):
 *   id:            0    1    2    3    4
 *   model_rank:    3    2    5    1    4     (0 is the compiler default)
 *   cost_xu x:     3    2    5    1    4
 *   pred time:    25   11   60    9   35
 *   meas time y:  30   10   50   12   40
 * mean x 3, mean y 28.4; Sxy = 106, Sxx = 10, Syy = 1211.2 -> R^2 = 106^2 / 12112.
 * Ranks of y: 3 1 5 2 4 against x's 3 2 5 1 4: sum d^2 = 2 -> rho = 1 - 6*2/(5*24) = 0.9.
 * Predicted time: mean 28, Sxy = 1392, Sxx = 1732 -> R^2 = 1392^2 / (1732 * 1211.2); its ranks
 * equal x's, so rho = 0.9 too.
 * The pick (rank 1, id 3) takes 12 us, the best (id 1) 10 us: regret 0.2; 3 of the 4 others are
 * slower: percentile 75; measured rank 2. The default (id 0) takes 30 us: speedup 2.5, predicted
 * 25 / 9.
 * L1 hit % modeled 50 75 0 80 50, measured (hit sectors / sectors) 40 75 10 70 50: MAE 6 points.
 * L2 hit % modeled 50 0 25 50 50, measured 40 10 25 33.3 50: MAE (10+10+0+16.67+0)/5 = 7.333;
 * against the raw rates 33 20 25 40 60: (17+20+0+10+10)/5 = 11.4.
 * DRAM modeled 8000 3200 96000 3200 16000 vs 10000 6400 80000 3200 16000: |rel| 0.2 0.5 0.2 0 0,
 * median 0.2, worst -0.5. Sectors: 4 of 5 exact, 1000 vs 1010 within 1 %. L2 sectors: 3 exact,
 * worst 200 vs 303. L1 miss sectors: modeled = the L2 reads, 500 250 4000 200 1000; measured
 * lookups - hits 600 250 3600 for ids 0-2 and 4, but id 3 has the lookup_miss counter, 400, which
 * wins over 1010 - 707: 2 exact, worst 200 vs 400. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/compare.h"

#define DIR "tests/inputs/compare/"

static int failures;
#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);         \
      failures++;                                                                      \
    }                                                                                  \
  } while (0)
#define NEAR(a, b) CHECK(fabs((double)(a) - (double)(b)) <= 1e-9 * (1 + fabs((double)(b))))

static const sp_cmp_kernel *find_kernel(const sp_cmp_data *c, const char *id) {
  for (int i = 0; i < c->nkernels; i++)
    if (strcmp(c->kernels[i].id, id) == 0) return &c->kernels[i];
  return NULL;
}

static int load(sp_cmp_data *c, const char *const *measured, int n, char *err, size_t errn) {
  if (sp_cmp_load_plan(c, DIR "plan.json", err, errn) != 0) return -1;
  for (int i = 0; i < n; i++)
    if (sp_cmp_add_measured(c, measured[i], err, errn) != 0) return -1;
  sp_cmp_analyze(c);
  return 0;
}

/* Pearson r^2 written out, a reference for the log-log R^2. */
static double pearson_r2(const double *x, const double *y, int n) {
  double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
  for (int i = 0; i < n; i++) mx += x[i] / n, my += y[i] / n;
  for (int i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy * sxy / (sxx * syy);
}

static void test_hand_computed(void) {
  sp_cmp_data c;
  char err[1024];
  const char *m[] = {DIR "measured.json"};
  int rc = load(&c, m, 1, err, sizeof err);
  if (rc) fprintf(stderr, "%s\n", err);
  CHECK(rc == 0);
  const sp_cmp_kernel *k = find_kernel(&c, "matmul.c:10");
  CHECK(k != NULL);
  if (!k) return;
  const sp_cmp_kernel_stats *st = &k->st;
  CHECK(st->n_ok == 5 && st->n_failed == 0 && st->n_unmeasured == 0);
  NEAR(st->r2_cost, 106.0 * 106.0 / 12112.0);
  NEAR(st->rho_cost, 0.9);
  NEAR(st->r2_time, 1392.0 * 1392.0 / (1732.0 * 1211.2));
  NEAR(st->rho_time, 0.9);
  double lx[5] = {log(3), log(2), log(5), log(1), log(4)};
  double ly[5] = {log(30), log(10), log(50), log(12), log(40)};
  NEAR(st->r2_log_cost, pearson_r2(lx, ly, 5));
  CHECK(k->cand[st->chosen].id == 3 && k->cand[st->best].id == 1 && k->cand[st->deflt].id == 0);
  CHECK(st->chosen_measured_rank == 2);
  NEAR(st->regret, 0.2);
  NEAR(st->percentile, 75.0);
  NEAR(st->speedup, 2.5);
  NEAR(st->speedup_model, 25.0 / 9.0);
  NEAR(st->l1_mae_pp, 6.0);
  NEAR(st->l2_mae_pp, (10 + 10 + 0 + (50 - 100.0 * 101 / 303) + 0) / 5);
  NEAR(st->l2_raw_mae_pp, 11.4);
  NEAR(st->dram_median_abs_rel, 0.2);
  NEAR(st->dram_worst_rel, -0.5);
  CHECK(st->requests.n == 5 && st->requests.exact == 5 && st->requests.worst_rel == 0);
  CHECK(st->sectors.exact == 4 && st->sectors.within_1pct == 5);
  NEAR(st->sectors.worst_rel, 1000.0 / 1010 - 1);
  CHECK(st->l2_sectors.exact == 3 && st->l2_sectors.within_1pct == 3);
  NEAR(st->l2_sectors.worst_rel, 200.0 / 303 - 1);
  CHECK(st->l1_miss_sectors.n == 5 && st->l1_miss_sectors.exact == 2 &&
        st->l1_miss_sectors.within_1pct == 2);
  NEAR(st->l1_miss_sectors.worst_rel, -0.5);
  NEAR(k->cand[0].meas[SP_CMP_L1_MISS_SECTORS], 600);
  CHECK(k->cand[0].l1_miss_derived && !k->cand[3].l1_miss_derived);
  NEAR(k->cand[3].meas[SP_CMP_L1_MISS_SECTORS], 400);
  NEAR(k->cand[3].model[SP_CMP_L1_MISS_SECTORS], 200);
  CHECK(k->paper_row == 2);
  /* measured fields read from Nsight names */
  const sp_cmp_candidate *c3 = &k->cand[3];
  NEAR(c3->meas[SP_CMP_DRAM_SECTORS], 3200.0 / 32);
  NEAR(c3->l2_hit_raw_pct, 40);
  NEAR(c3->occupancy_pct, 75.5);
  CHECK(c3->registers == 32);

  /* transpose: one compile error, one wrong result, two ok: excluded, no R^2 from two points */
  k = find_kernel(&c, "transpose.c:20");
  st = &k->st;
  CHECK(st->n_ok == 2 && st->n_failed == 2);
  CHECK(isnan(st->r2_cost) && isnan(st->rho_cost));
  CHECK(k->cand[st->chosen].id == 0 && k->cand[st->chosen].model_rank == 2);
  NEAR(st->speedup, 1.0);
  NEAR(st->percentile, 100.0);
  CHECK(k->cand[3].wrong_result && !k->cand[3].ok && !k->cand[1].ok && !k->cand[1].wrong_result);
  CHECK(c.n_wrong_result == 1);
  /* gemm: its one candidate is in no measurement */
  k = find_kernel(&c, "gemm.c:5");
  CHECK(k->st.n_unmeasured == 1 && k->st.chosen < 0 && k->paper_row < 0);
  sp_cmp_free(&c);
}

/* Registers (the plan's model_arch h100: 65,536 an SM, 256 a warp, warps in fours): matmul.c:10's
 * blocks of 256 threads fit 8 an SM at 32 registers a thread, 6 at 36 or 40 (1,152 or 1,280
 * allocated a warp: 48 warps). With ids 2 and 4 at 40 and 36 and the grid's 65,536 blocks, those
 * two are register-limited: measured / predicted 50/60 and 40/35, median their mean; the others
 * 30/25, 10/11, 12/9, median 1.2. A plan that assumed 40 registers limits none; nor does an
 * unknown model_arch. */
static void test_register_limits(void) {
  sp_cmp_data c;
  char err[1024];
  const char *m[] = {DIR "measured.json"};
  CHECK(load(&c, m, 1, err, sizeof err) == 0);
  CHECK(c.arch_known);
  sp_cmp_kernel *k = (sp_cmp_kernel *)find_kernel(&c, "matmul.c:10");
  CHECK(k && k->st.n_register_limited == 0 && isnan(k->st.limited_time_ratio));
  if (!k) return;
  NEAR(k->st.others_time_ratio, 40.0 / 35); /* all five: 50/60 10/11 40/35 30/25 12/9 */
  k->cand[2].registers = 40;
  k->cand[4].registers = 36;
  sp_cmp_analyze(&c);
  CHECK(k->st.n_register_limited == 2 && k->cand[2].register_limited && k->cand[4].register_limited &&
        !k->cand[0].register_limited);
  NEAR(k->st.limited_time_ratio, (50.0 / 60 + 40.0 / 35) / 2);
  NEAR(k->st.others_time_ratio, 30.0 / 25);
  char *text = sp_cmp_render(&c, SP_CMP_TEXT);
  CHECK(text && strstr(text, "register-limited: 2 of the 5 held registers"));
  free(text);
  char *json = sp_cmp_render(&c, SP_CMP_JSON);
  CHECK(json && strstr(json, "\"register_limited\": 2") && strstr(json, "\"register_limited\": true"));
  free(json);
  k->model_registers = 40;
  sp_cmp_analyze(&c);
  CHECK(k->st.n_register_limited == 0);
  k->model_registers = 0;
  c.arch_known = false;
  sp_cmp_analyze(&c);
  CHECK(k->st.n_register_limited == 0);
  sp_cmp_free(&c);
}

/* Shards merge into exactly what one file gives; an overlap names both files. */
static void test_shards(void) {
  sp_cmp_data one, two;
  char err[1024];
  const char *m1[] = {DIR "measured.json"};
  const char *m2[] = {DIR "shard2.json", DIR "shard1.json"};
  CHECK(load(&one, m1, 1, err, sizeof err) == 0);
  CHECK(load(&two, m2, 2, err, sizeof err) == 0);
  CHECK(one.nkernels == two.nkernels);
  for (int i = 0; i < one.nkernels; i++) {
    const sp_cmp_kernel *a = &one.kernels[i], *b = &two.kernels[i];
    CHECK(a->ncand == b->ncand);
    for (int j = 0; j < a->ncand; j++) {
      CHECK(memcmp(a->cand[j].meas, b->cand[j].meas, sizeof a->cand[j].meas) == 0);
      CHECK(a->cand[j].ok == b->cand[j].ok);
      CHECK(strcmp(a->cand[j].status ? a->cand[j].status : "-",
                   b->cand[j].status ? b->cand[j].status : "-") == 0);
    }
    CHECK(memcmp(&a->st, &b->st, sizeof a->st) == 0);
  }
  CHECK(strcmp(two.kernels[1].cand[3].measured_file, DIR "shard2.json") == 0);
  sp_cmp_free(&one);
  sp_cmp_free(&two);

  sp_cmp_data dup;
  const char *m3[] = {DIR "shard1.json", DIR "shard_dup.json"};
  CHECK(load(&dup, m3, 2, err, sizeof err) != 0);
  CHECK(strstr(err, DIR "shard_dup.json: kernels[0].candidates[0]: candidate 2") == err);
  CHECK(strstr(err, "measured twice") && strstr(err, DIR "shard1.json"));
  sp_cmp_free(&dup);
}

/* Edit a copy of a fixture through set (a JSON path of keys and indexes), load it, and expect
 * an error holding want (or success when want is NULL). */
static json_t *at(json_t *root, const char *path) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  json_t *v = root;
  for (char *tok = strtok(buf, "."); tok && v; tok = strtok(NULL, "."))
    v = (*tok >= '0' && *tok <= '9') ? json_array_get(v, (size_t)atoi(tok)) : json_object_get(v, tok);
  return v;
}

static void expect_error(bool plan, const char *parent, const char *key, json_t *value,
                         const char *want) {
  json_error_t je;
  json_t *p = json_load_file(DIR "plan.json", 0, &je);
  json_t *m = json_load_file(DIR "measured.json", 0, &je);
  assert(p && m);
  json_t *obj = at(plan ? p : m, parent);
  assert(obj);
  if (json_is_array(obj)) json_array_set_new(obj, (size_t)atoi(key), value);
  else if (value) json_object_set_new(obj, key, value);
  else json_object_del(obj, key);
  sp_cmp_data c;
  char err[1024] = "";
  int rc = sp_cmp_load_plan_json(&c, p, "P.json", err, sizeof err);
  if (rc == 0) rc = sp_cmp_add_measured_json(&c, m, "M.json", err, sizeof err);
  if (rc || !want) {
    CHECK(want ? rc != 0 && strstr(err, want) != NULL : rc == 0);
    if (want && !strstr(err, want)) fprintf(stderr, "  got '%s'\n  want '%s'\n", err, want);
  } else {
    fprintf(stderr, "  no error, wanted '%s'\n", want);
    failures++;
  }
  sp_cmp_free(&c);
  json_decref(p);
  json_decref(m);
}

static void test_corrupt(void) {
  expect_error(true, "", "schema", json_string("schedpredict-report"),
               "P.json: schema: is 'schedpredict-report', expected 'schedpredict-plan'");
  expect_error(true, "", "schema_version", json_integer(2), "P.json: schema_version: 2 is newer");
  expect_error(true, "", "kernels", NULL, "P.json: kernels: missing");
  expect_error(true, "kernels.1.candidates.2.predicted", "time_us", json_string("fast"),
               "P.json: kernels[1].candidates[2].predicted.time_us: expected a number, found a string");
  expect_error(true, "kernels.1.candidates.2", "model_rank", json_integer(0),
               "P.json: kernels[1].candidates[2].model_rank: 0 is out of range");
  expect_error(true, "kernels.1.candidates.2", "id", json_integer(1),
               "kernels[1].candidates[2]: candidate id 1 appears twice");
  expect_error(true, "kernels.2", "id", json_string("matmul.c:10"),
               "P.json: kernels[2]: kernel id 'matmul.c:10' appears twice");
  expect_error(true, "skipped", "0", json_integer(3),
               "P.json: skipped[0]: expected an object, found an integer");
  expect_error(true, "kernels.1.candidates.0", "block", json_pack("[ii]", 32, 8),
               "kernels[1].candidates[0].block: expected 3 sizes");
  expect_error(true, "kernels.1.candidates", "4", json_string("x"),
               "P.json: kernels[1].candidates[4]: expected a candidate object, found a string");
  expect_error(false, "", "schema", NULL, "M.json: schema: missing");
  expect_error(false, "kernels.0", "id", json_string("nosuch.c:1"),
               "M.json: kernels[0]: kernel 'nosuch.c:1' is not in the plan P.json");
  expect_error(false, "kernels.0.candidates.1", "id", json_integer(99),
               "M.json: kernels[0].candidates[1]: candidate 99 of kernel 'matmul.c:10' is not in");
  expect_error(false, "kernels.0.candidates.1", "status", json_string("great"),
               "M.json: kernels[0].candidates[1].status: unknown status 'great'");
  expect_error(false, "kernels.0.candidates.1", "time_us", json_pack("{s:f}", "median", 0.0),
               "M.json: kernels[0].candidates[1]: status is ok but there is no positive time");
  expect_error(false, "kernels.0.candidates.1.metrics", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
               json_integer(-5),
               "candidates[1].metrics.l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum: -5 is out of range");
  /* the H100 gives both: hit and lookup counters come from different replay passes, and the raw
   * L2 rate counts lookups in both partitions; accepted, the derived rate capped at 100 % */
  expect_error(false, "kernels.0.candidates.1.metrics",
               "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", json_integer(251), NULL);
  expect_error(false, "kernels.0.candidates.1.metrics", "lts__t_sector_op_read_hit_rate.pct",
               json_real(101), NULL);
  /* optional things may go: a candidate without metrics is compared on time alone */
  expect_error(false, "kernels.0.candidates.1", "metrics", NULL, NULL);
  expect_error(false, "kernels.0.candidates.1", "time_us", NULL, NULL); /* gpu__time_duration */
  expect_error(false, "kernels.0.candidates.1", "message", json_null(), NULL);
  /* schedvalidate writes an infinite difference as "inf" */
  expect_error(false, "kernels.1.candidates.3.result", "max_rel_diff", json_string("inf"), NULL);
  expect_error(false, "kernels.1.candidates.3.result", "max_rel_diff", json_string("huge"),
               "M.json: kernels[1].candidates[3].result.max_rel_diff: expected a number, found a string");

  sp_cmp_data c;
  char err[1024];
  CHECK(sp_cmp_load_plan(&c, DIR "nosuch.json", err, sizeof err) != 0);
  CHECK(strstr(err, DIR "nosuch.json: cannot read: No such file") == err);
  sp_cmp_free(&c);
  FILE *f = fopen("test_compare_truncated.json", "w");
  fputs("{\"schema\": \"schedpredict-plan\", \"kernels\": [\n", f);
  fclose(f);
  CHECK(sp_cmp_load_plan(&c, "test_compare_truncated.json", err, sizeof err) != 0);
  CHECK(strstr(err, "test_compare_truncated.json:2:") == err && strstr(err, "not valid JSON"));
  remove("test_compare_truncated.json");
  sp_cmp_free(&c);
}

/* ---- mutation: random edits of valid files never crash the reader or the reports ----------- */

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(rng_state >> 33) % n;
}

static json_t *random_value(void) {
  switch (rnd(9)) {
  case 0: return json_null();
  case 1: return json_string("x");
  case 2: return json_integer(-1);
  case 3: return json_real(1e308);
  case 4: return json_integer(INT64_MAX);
  case 5: return json_array();
  case 6: return json_object();
  case 7: return json_true();
  default: return json_integer(0);
  }
}

/* Replace, delete or retype one random node of root. */
static void mutate(json_t *root) {
  json_t *v = root, *parent = NULL;
  const char *key = NULL;
  size_t index = 0;
  for (int depth = 0; depth < 8; depth++) {
    size_t n = json_is_object(v) ? json_object_size(v) : json_is_array(v) ? json_array_size(v) : 0;
    if (!n || (depth > 1 && rnd(4) == 0)) break;
    parent = v;
    size_t pick = rnd((unsigned)n);
    if (json_is_array(v)) {
      index = pick;
      key = NULL;
      v = json_array_get(v, pick);
    } else {
      void *it = json_object_iter(v);
      while (pick--) it = json_object_iter_next(v, it);
      key = json_object_iter_key(it);
      v = json_object_iter_value(it);
    }
  }
  if (!parent) return;
  bool del = rnd(3) == 0;
  if (key) {
    if (del) json_object_del(parent, key);
    else json_object_set_new(parent, key, random_value());
  } else {
    if (del) json_array_remove(parent, index);
    else json_array_set_new(parent, index, random_value());
  }
}

static void run_all(json_t *p, json_t *m, json_t *m2) {
  sp_cmp_data c;
  char err[1024];
  int rc = sp_cmp_load_plan_json(&c, p, "P.json", err, sizeof err);
  if (rc == 0) rc = sp_cmp_add_measured_json(&c, m, "M.json", err, sizeof err);
  if (rc == 0 && m2) rc = sp_cmp_add_measured_json(&c, m2, "M2.json", err, sizeof err);
  if (rc == 0) {
    sp_cmp_analyze(&c);
    for (int f = SP_CMP_TEXT; f <= SP_CMP_CSV; f++) {
      char *text = sp_cmp_render(&c, (sp_cmp_format)f);
      CHECK(text != NULL);
      free(text);
    }
  } else {
    CHECK(strncmp(err, "P.json: ", 8) == 0 || strncmp(err, "M.json: ", 8) == 0 ||
          strncmp(err, "M2.json: ", 9) == 0);
  }
  sp_cmp_free(&c);
}

static void test_mutations(void) {
  json_error_t je;
  json_t *p0 = json_load_file(DIR "plan.json", 0, &je);
  json_t *m0 = json_load_file(DIR "shard1.json", 0, &je);
  json_t *m1 = json_load_file(DIR "shard2.json", 0, &je);
  assert(p0 && m0 && m1);
  int loaded = 0;
  for (int iter = 0; iter < 1500; iter++) {
    json_t *p = json_deep_copy(p0), *m = json_deep_copy(m0), *m2 = json_deep_copy(m1);
    int which = rnd(3);
    for (int k = 1 + (int)rnd(3); k > 0; k--) mutate(which == 0 ? p : which == 1 ? m : m2);
    run_all(p, m, m2);
    json_decref(p);
    json_decref(m);
    json_decref(m2);
  }
  /* byte level: flip, drop or truncate the text; whatever still parses is read */
  char *pt = json_dumps(p0, 0), *mt = json_dumps(m0, 0);
  for (int iter = 0; iter < 1500; iter++) {
    bool on_plan = rnd(2);
    char *t = strdup(on_plan ? pt : mt);
    size_t len = strlen(t);
    for (int k = 1 + (int)rnd(4); k > 0; k--) {
      size_t at_ = rnd((unsigned)len);
      switch (rnd(3)) {
      case 0: t[at_] = "{}[]\",:0-e9 ax\\"[rnd(15)]; break;
      case 1: memmove(t + at_, t + at_ + 1, len - at_); len--; break;
      default: t[at_] = 0; len = at_; break;
      }
      if (!len) break;
    }
    json_t *v = json_loads(t, 0, &je);
    if (v) {
      loaded++;
      json_t *p = on_plan ? v : json_incref(p0), *m = on_plan ? json_incref(m0) : v;
      run_all(p, m, NULL);
      json_decref(p);
      json_decref(m);
    }
    free(t);
  }
  printf("mutations: 1500 JSON-level, 1500 byte-level (%d still parsed) without a crash\n", loaded);
  free(pt);
  free(mt);
  json_decref(p0);
  json_decref(m0);
  json_decref(m1);
}

/* ---- outputs ----------------------------------------------------------------------------------- */

/* Splits CSV text (RFC 4180 quoting) into rows; returns the number of fields of each row in
 * nfields and the field (row, col) into cell. */
static int csv_rows(const char *text, int *nfields, int maxrows, int row_want, int col_want,
                    char *cell, size_t celln) {
  int row = 0, col = 0;
  size_t cl = 0;
  bool quoted = false;
  for (const char *s = text; *s; s++) {
    char ch = *s;
    if (quoted) {
      if (ch == '"' && s[1] == '"') s++;
      else if (ch == '"') {
        quoted = false;
        continue;
      }
    } else if (ch == '"') {
      quoted = true;
      continue;
    } else if (ch == ',' || ch == '\n') {
      if (row == row_want && col == col_want) cell[cl < celln ? cl : celln - 1] = 0;
      if (ch == ',') {
        col++;
      } else {
        if (row < maxrows) nfields[row] = col + 1;
        row++;
        col = 0;
      }
      continue;
    }
    if (row == row_want && col == col_want && cl + 1 < celln) cell[cl++] = ch;
  }
  return row;
}

static int csv_column(const char *header, const char *name) {
  int col = 0;
  for (const char *s = header; *s && *s != '\n'; col++) {
    size_t l = strcspn(s, ",\n");
    if (l == strlen(name) && strncmp(s, name, l) == 0) return col;
    s += l;
    if (*s == ',') s++;
  }
  return -1;
}

static void test_outputs(void) {
  sp_cmp_data c;
  char err[1024];
  const char *m[] = {DIR "measured.json"};
  CHECK(load(&c, m, 1, err, sizeof err) == 0);

  char *csv = sp_cmp_render(&c, SP_CMP_CSV);
  int nf[32] = {0};
  char cell[128] = "";
  /* rows are in report order: matmul (Table 7.3 row 3) before transpose, gemm last; matmul's
   * candidates in plan order, so row 4 is its candidate 3 */
  int col = csv_column(csv, "gld_transactions_measured");
  CHECK(col > 0);
  int rows = csv_rows(csv, nf, 32, 4, col, cell, sizeof cell);
  CHECK(rows == 1 + 5 + 4 + 1);
  for (int r = 1; r < rows; r++) CHECK(nf[r] == nf[0]);
  CHECK(nf[0] == 14 + 2 * SP_CMP_NFIELDS + 11);
  CHECK(strcmp(cell, "1010") == 0);
  csv_rows(csv, nf, 32, 1, csv_column(csv, "cuda_mapping"), cell, sizeof cell);
  CHECK(strcmp(cell, "i->bx j->tx, \"default\"") == 0);
  csv_rows(csv, nf, 32, 7, csv_column(csv, "status"), cell, sizeof cell);
  CHECK(strcmp(cell, "compile_error") == 0);
  free(csv);

  char *js = sp_cmp_render(&c, SP_CMP_JSON);
  json_error_t je;
  json_t *root = json_loads(js, 0, &je);
  CHECK(root != NULL);
  CHECK(strcmp(json_string_value(json_object_get(root, "schema")), SP_CMP_SCHEMA) == 0);
  json_t *ks = json_object_get(root, "kernels");
  CHECK(strcmp(json_string_value(json_object_get(json_array_get(ks, 0), "id")), "matmul.c:10") == 0);
  CHECK(strcmp(json_string_value(json_object_get(json_array_get(ks, 2), "id")), "gemm.c:5") == 0);
  json_t *st1 = json_object_get(json_array_get(ks, 1), "stats");
  CHECK(json_is_null(json_object_get(st1, "r2_cost_vs_time")));
  json_t *c3 = json_array_get(json_object_get(json_array_get(ks, 0), "candidates"), 3);
  CHECK(json_is_true(json_object_get(c3, "chosen")));
  json_t *l2 = json_object_get(json_object_get(c3, "counters"), "l2_tex_read_hit_rate");
  CHECK(json_number_value(json_object_get(l2, "measured_raw")) == 40);
  CHECK(strcmp(json_string_value(json_object_get(l2, "nvprof")), "l2_tex_read_hit_rate") == 0);
  json_t *sum = json_object_get(root, "summary");
  CHECK(json_integer_value(json_object_get(sum, "candidates_ok")) == 7);
  CHECK(json_integer_value(json_object_get(sum, "wrong_results")) == 1);
  CHECK(json_integer_value(json_object_get(sum, "candidates_not_measured")) == 1);
  CHECK(json_array_size(json_object_get(root, "skipped")) == 1);
  json_decref(root);
  free(js);

  char *text = sp_cmp_render(&c, SP_CMP_TEXT);
  CHECK(strstr(text, "BUG: candidate 3 computed a different result") != NULL);
  CHECK(strstr(text, "regret +20.0 %") != NULL);
  CHECK(strstr(text, "not ok (excluded): 2 (1 compile_error, 1 wrong_result), not measured: 0"));
  CHECK(strstr(text, "matmul.c:10 [matmul]") != NULL);
  CHECK(strstr(text, "matmul.c:10") < strstr(text, "transpose.c:20"));
  CHECK(strstr(text, "== spmv_short_rows.c:14: not in the plan: a call to a user function") != NULL);
  free(text);
  sp_cmp_free(&c);
}

/* A multi-line message (a compiler log) keeps the text table one line a candidate; the CSV
 * keeps it whole, quoted. */
static void test_multiline_message(void) {
  json_error_t je;
  json_t *p = json_load_file(DIR "plan.json", 0, &je), *m = json_load_file(DIR "measured.json", 0, &je);
  assert(p && m);
  json_object_set_new(at(m, "kernels.1.candidates.1"), "message",
                      json_string("line one, \"quoted\"\nline two"));
  sp_cmp_data c;
  char err[1024];
  CHECK(sp_cmp_load_plan_json(&c, p, "P.json", err, sizeof err) == 0);
  CHECK(sp_cmp_add_measured_json(&c, m, "M.json", err, sizeof err) == 0);
  sp_cmp_analyze(&c);
  char *text = sp_cmp_render(&c, SP_CMP_TEXT), *csv = sp_cmp_render(&c, SP_CMP_CSV);
  CHECK(strstr(text, "compile_error: line one, \"quoted\" ...\n") && !strstr(text, "line two"));
  CHECK(strstr(csv, ",\"line one, \"\"quoted\"\"\nline two\","));
  int nf[32] = {0};
  char cell[128];
  CHECK(csv_rows(csv, nf, 32, 0, 0, cell, sizeof cell) == 11);
  for (int r = 1; r < 11; r++) CHECK(nf[r] == nf[0]);
  free(text);
  free(csv);
  sp_cmp_free(&c);
  json_decref(p);
  json_decref(m);
}

int main(void) {
  test_hand_computed();
  test_register_limits();
  test_shards();
  test_corrupt();
  test_mutations();
  test_outputs();
  test_multiline_message();
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("test_compare: all checks passed\n");
  return failures ? 1 : 0;
}
