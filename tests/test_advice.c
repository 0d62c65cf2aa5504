/* advice/plan.c: which schedules GCC and nvc can state, with hand-worked cases. */
#include <stdio.h>
#include <string.h>

#include "schedpredict/advice.h"
#include "tests/sp_nestbuild.h"
#include "tests/sp_test.h"

/* A schedule of the 2-D nest: loop i (0) and j (1) each on a thread dim and/or block dim. */
static sp_schedule sched2(int ti, int bi, int tj, int bj, int bx, int by, int64_t gx, int64_t gy) {
  sp_schedule s;
  memset(&s, 0, sizeof s);
  s.nband = 2;
  for (int k = 0; k < SP_MAX_LOOPS; k++) s.map[k] = (sp_loop_map){-1, -1};
  s.map[0] = (sp_loop_map){ti, bi};
  s.map[1] = (sp_loop_map){tj, bj};
  s.block[0] = bx, s.block[1] = by, s.block[2] = 1;
  s.grid[0] = gx, s.grid[1] = gy, s.grid[2] = 1;
  return s;
}

static void test_gcc_limits(void) {
  tnest t;
  tn_transpose(&t, 4096);
  sp_adv_plan p;
  char why[256];
  /* i gang worker, j vector: 32x8 threads, 512 gangs -> expressible as written */
  sp_schedule s = sched2(1, 0, 0, -1, 32, 8, 512, 1);
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(!p.interchange);
  CHECK_EQ_STR(p.clauses[0], "gang worker");
  CHECK_EQ_STR(p.clauses[1], "vector");
  CHECK_EQ_INT(p.num_gangs, 512);
  CHECK_EQ_INT(p.num_workers, 8);
  CHECK_EQ_INT(p.vector_length, 32);
  /* vector_length(8): GCC would use 32 */
  s = sched2(0, 0, 1, -1, 8, 32, 512, 1);
  CHECK(!sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(strstr(why, "vector_length(8) is not a multiple of 32") != NULL);
  /* a 2-D grid */
  s = sched2(1, 1, 0, 0, 32, 8, 128, 512);
  CHECK(!sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(strstr(why, "2-D grid") != NULL);
  /* 16 workers of 64 lanes: GCC's barriers allow 15, nvc takes it */
  s = sched2(1, 0, 0, -1, 64, 16, 256, 1);
  CHECK(!sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(strstr(why, "at most 15 workers") != NULL);
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_NVC, &p, why, sizeof why));
  CHECK_EQ_INT(p.num_workers, 16);
  /* 32 workers of 32 lanes: both */
  s = sched2(1, 0, 0, -1, 32, 32, 256, 1);
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
}

static void test_interchange(void) {
  tnest t;
  tn_transpose(&t, 4096);
  sp_adv_plan p;
  char why[256];
  /* i on vector, j on gang worker: legal after swapping the loops */
  sp_schedule s = sched2(0, -1, 1, 0, 32, 4, 1024, 1);
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(p.interchange);
  CHECK_EQ_INT(p.perm[0], 1);
  CHECK_EQ_INT(p.perm[1], 0);
  CHECK_EQ_STR(p.clauses[0], "gang worker");
  CHECK_EQ_STR(p.clauses[1], "vector");
  /* i gang vector, j worker: worker would sit inside vector whatever the order */
  s = sched2(0, 0, 1, -1, 32, 4, 1024, 1);
  CHECK(!sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(strstr(why, "nests gang outside worker outside vector") != NULL);
  /* a triangular j (bounds depend on i) cannot be swapped */
  t.n.loops[1].upper.coef[0] = 1;
  s = sched2(0, -1, 1, 0, 32, 4, 1024, 1);
  CHECK(!sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(strstr(why, "depend on an outer index") != NULL);
  /* a reduction on the outer loop spans both: they swap, and both directives carry it */
  t.n.loops[1].upper.coef[0] = 0;
  t.n.loops[0].clauses.reduction = (char *)"+:s";
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(p.interchange);
  CHECK_EQ_STR(p.reduction[0], "+:s");
  CHECK_EQ_STR(p.reduction[1], "+:s");
  /* one on the inner loop only covers that loop: moving i inside it would change what it sums */
  t.n.loops[0].clauses.reduction = NULL;
  t.n.loops[1].clauses.reduction = (char *)"max:err";
  CHECK(!sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(strstr(why, "j has a reduction (max:err) that loop i outside it does not have") != NULL);
  /* the same reduction on both loops (jacobi.c): legal */
  t.n.loops[0].clauses.reduction = (char *)"max : err";
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK_EQ_STR(p.reduction[0], "max:err");
  CHECK_EQ_STR(p.reduction[1], "max:err");
  /* without an interchange the inner directive still gets the outer loop's reduction */
  t.n.loops[1].clauses.reduction = NULL;
  t.n.loops[0].clauses.reduction = (char *)"+:a,b; max:m";
  s = sched2(1, 0, 0, -1, 32, 8, 512, 1);
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(!p.interchange);
  CHECK_EQ_STR(p.reduction[0], "+:a; +:b; max:m");
  CHECK_EQ_STR(p.reduction[1], "+:a; +:b; max:m");
  char buf[128] = "vector";
  CHECK(sp_adv_reduction_clauses(&p, 1, NULL, buf, sizeof buf));
  CHECK_EQ_STR(buf, "vector reduction(+:a,b) reduction(max:m)");
  /* what the directive already names is not repeated */
  snprintf(buf, sizeof buf, "gang worker");
  CHECK(sp_adv_reduction_clauses(&p, 0, "+: b", buf, sizeof buf));
  CHECK_EQ_STR(buf, "gang worker reduction(+:a) reduction(max:m)");
  /* too small a buffer is refused, not cut */
  char tiny[24] = "vector";
  CHECK(!sp_adv_reduction_clauses(&p, 1, NULL, tiny, sizeof tiny));
  /* a subarray's colon and comma stay in its item */
  t.n.loops[0].clauses.reduction = (char *)"+:h[0:n], c";
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK_EQ_STR(p.reduction[1], "+:h[0:n]; +:c");
  t.n.loops[0].clauses.reduction = NULL;
}

/* GCC 12's reduction folds (advice/lowering.c), worked by hand on a 4096 x 4096 nest: i gang
 * (G blocks), j vector (V lanes), reduction on i, an arch of 132 SMs. */
static void test_gcc_reduction_code(void) {
  tnest t;
  tn_transpose(&t, 4096);
  sp_arch arch;
  memset(&arch, 0, sizeof arch);
  arch.sm_count = 132;
  arch.cas_shared_ns = 1.0;
  arch.cas_global_base_ns = 200;
  arch.cas_global_per_contender_ns = 0.5;
  sp_trace_stats st;
  memset(&st, 0, sizeof st);
  st.blocks_working = 528;
  st.active_blocks_per_sm = 8;
  sp_adv_lowering parts;
  t.n.loops[0].clauses.reduction = (char *)"+:s";
  /* i gang, j vector(256): each of the 4096 rows ends with 256 lanes folding a sum into one
   * shared word, 256 * 257 / 2 attempts, rows spread over 132 SMs; then 528 gangs retry the
   * global word, 528 at once (fewer than 8 x 132): 528 x (200 + 0.5 x 528) ns */
  sp_schedule s = sched2(-1, 0, 0, -1, 256, 1, 528, 1);
  double total = sp_adv_lowering_s(&t.n, &s, &st, &arch, SP_ADV_GCC, &parts);
  CHECK_NEAR(parts.vector_s, 4096.0 / 132 * 256 * 257 / 2 * 1e-9, 1e-12);
  CHECK_NEAR(parts.gang_s, 528 * (200 + 0.5 * 528) * 1e-9, 1e-12);
  CHECK_NEAR(total, parts.vector_s + parts.gang_s, 1e-15);
  /* 4096 gangs, 8 resident an SM: 1056 retry at once */
  st.blocks_working = 4096;
  s = sched2(-1, 0, 0, -1, 256, 1, 4096, 1);
  sp_adv_lowering_s(&t.n, &s, &st, &arch, SP_ADV_GCC, &parts);
  CHECK_NEAR(parts.gang_s, 4096 * (200 + 0.5 * 1056) * 1e-9, 1e-12);
  /* vector_length(32) folds with shuffles: only the gangs */
  s = sched2(-1, 0, 0, -1, 32, 1, 4096, 1);
  sp_adv_lowering_s(&t.n, &s, &st, &arch, SP_ADV_GCC, &parts);
  CHECK_NEAR(parts.vector_s, 0, 0);
  CHECK(parts.gang_s > 0);
  /* a max mostly keeps the word: V attempts a row, no gang retries */
  t.n.loops[0].clauses.reduction = (char *)"max:e";
  s = sched2(-1, 0, 0, -1, 256, 1, 4096, 1);
  sp_adv_lowering_s(&t.n, &s, &st, &arch, SP_ADV_GCC, &parts);
  CHECK_NEAR(parts.vector_s, 4096.0 / 132 * 256 * 1e-9, 1e-12);
  CHECK_NEAR(parts.gang_s, 0, 0);
  /* nvc, an arch without the fields, no reduction: nothing */
  t.n.loops[0].clauses.reduction = (char *)"+:s";
  CHECK_NEAR(sp_adv_lowering_s(&t.n, &s, &st, &arch, SP_ADV_NVC, NULL), 0, 0);
  arch.cas_shared_ns = 0;
  CHECK_NEAR(sp_adv_lowering_s(&t.n, &s, &st, &arch, SP_ADV_GCC, NULL), 0, 0);
  arch.cas_shared_ns = 1.0;
  t.n.loops[0].clauses.reduction = NULL;
  CHECK_NEAR(sp_adv_lowering_s(&t.n, &s, &st, &arch, SP_ADV_GCC, NULL), 0, 0);
  /* gang vector(128) on one loop (the other sequential inside): each gang enters it once */
  t.n.loops[0].clauses.reduction = (char *)"+:s";
  s = sched2(0, 0, -1, -1, 128, 1, 1024, 1);
  st.blocks_working = 1024;
  sp_adv_lowering_s(&t.n, &s, &st, &arch, SP_ADV_GCC, &parts);
  CHECK_NEAR(parts.vector_s, 1024.0 / 132 * 128 * 129 / 2 * 1e-9, 1e-12);
  t.n.loops[0].clauses.reduction = NULL;
}

static void test_inner_levels_and_collapse(void) {
  tnest t;
  tn_transpose(&t, 4096);
  sp_adv_plan p;
  char why[256];
  /* both loops collapsed onto gang vector(128) */
  sp_schedule s = sched2(0, 0, -1, -1, 128, 1, 131072, 1);
  s.collapse_first = 0, s.collapse_count = 2;
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK_EQ_STR(p.clauses[0], "collapse(2) gang vector");
  CHECK_EQ_STR(p.clauses[1], "-");
  CHECK_EQ_INT(p.num_workers, 0);
  /* the collapsed directive partitions j too, so it carries j's reduction */
  t.n.loops[1].clauses.reduction = (char *)"+:s";
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK_EQ_STR(p.reduction[0], "+:s");
  CHECK_EQ_STR(p.reduction[1], "");
  t.n.loops[1].clauses.reduction = NULL;
  /* a loop below the band that the user put on vector: the band may not use vector */
  tn_loop(&t, 1, false, true, 0, 0, 7, 0, 1);
  t.n.loops[2].clauses.flags = SP_CL_VECTOR;
  s = sched2(1, 0, 0, -1, 32, 8, 512, 1);
  CHECK(!sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(strstr(why, "loop k inside the nest already uses vector") != NULL);
  /* a bare parallel `acc loop` below the band (mvt's reduction loop): the compiler gives it the
   * vector lanes, so a band with vector is refused, one with gang and worker only is kept */
  static char bare_directive[] = "#pragma acc loop reduction(+:s)";
  t.n.loops[2].clauses.flags = 0;
  t.n.loops[2].clauses.directive = bare_directive;
  t.n.loops[2].parallel = true;
  s = sched2(1, 0, 0, -1, 32, 8, 512, 1);
  CHECK(!sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  CHECK(strstr(why, "loop k inside the nest is an 'acc loop'") != NULL);
  s = sched2(1, 0, -1, -1, 32, 8, 512, 1); /* i: gang worker(8), the lanes left to j */
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  t.n.loops[2].clauses.flags = SP_CL_SEQ; /* a seq loop needs no level */
  s = sched2(1, 0, 0, -1, 32, 8, 512, 1);
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, why, sizeof why));
  t.n.loops[2].clauses.directive = NULL;
}

static void test_plan_matches(void) {
  tnest t;
  tn_transpose(&t, 4096);
  sp_adv_plan p;
  sp_schedule s = sched2(1, 0, 0, -1, 32, 8, 512, 1);
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, NULL, 0));
  CHECK(!sp_adv_plan_matches(&t.n, &p)); /* no clauses yet */
  t.n.loops[0].clauses.flags = SP_CL_GANG | SP_CL_WORKER;
  t.n.loops[1].clauses.flags = SP_CL_VECTOR;
  t.n.loops[0].clauses.num_gangs = 512;
  t.n.loops[0].clauses.num_workers = 8;
  t.n.loops[0].clauses.vector_length = 32;
  CHECK(sp_adv_plan_matches(&t.n, &p));
  t.n.construct_clauses.num_gangs = 264; /* the construct's value counts first */
  CHECK(!sp_adv_plan_matches(&t.n, &p));
}

/* In a kernels region GCC 12 partitions only loops that say independent (and only under
 * --param=openacc-kernels=decompose): the plan adds it for GCC where the test proved the loop,
 * and a directive without it does not match the plan. */
static void test_gcc_kernels_independent(void) {
  tnest t;
  tn_transpose(&t, 4096);
  t.n.construct = SP_CONSTRUCT_ACC_KERNELS;
  for (int k = 0; k < 2; k++) t.n.loops[k].parallel_reason = SP_PAR_TEST_PROVED;
  sp_adv_plan p;
  sp_schedule s = sched2(1, 0, 0, -1, 32, 8, 512, 1);
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, NULL, 0));
  CHECK_EQ_STR(p.clauses[0], "gang worker independent");
  CHECK_EQ_STR(p.clauses[1], "vector independent");
  CHECK(sp_adv_gcc_kernels(&t.n, SP_ADV_GCC) && !sp_adv_gcc_kernels(&t.n, SP_ADV_NVC));
  t.n.loops[0].clauses.flags = SP_CL_GANG | SP_CL_WORKER;
  t.n.loops[1].clauses.flags = SP_CL_VECTOR;
  t.n.loops[0].clauses.num_gangs = 512;
  t.n.loops[0].clauses.num_workers = 8;
  t.n.loops[0].clauses.vector_length = 32;
  CHECK(!sp_adv_plan_matches(&t.n, &p));
  t.n.loops[0].clauses.flags |= SP_CL_INDEPENDENT; /* said already: not added again */
  t.n.loops[1].clauses.flags |= SP_CL_INDEPENDENT;
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, NULL, 0));
  CHECK_EQ_STR(p.clauses[0], "gang worker");
  CHECK(sp_adv_plan_matches(&t.n, &p));
  /* declared gang without independent and no proof: not asserted for the user */
  t.n.loops[0].clauses.flags = SP_CL_GANG | SP_CL_WORKER;
  t.n.loops[0].parallel_reason = SP_PAR_DECLARED;
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, NULL, 0));
  CHECK_EQ_STR(p.clauses[0], "gang worker");
  /* nvc, and a parallel construct: nothing added */
  t.n.loops[0].parallel_reason = SP_PAR_TEST_PROVED;
  t.n.loops[0].clauses.flags = 0;
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_NVC, &p, NULL, 0));
  CHECK_EQ_STR(p.clauses[0], "gang worker");
  t.n.construct = SP_CONSTRUCT_ACC_PARALLEL;
  CHECK(sp_adv_express(&t.n, &s, SP_ADV_GCC, &p, NULL, 0));
  CHECK_EQ_STR(p.clauses[0], "gang worker");
}

/* GCC's libgomp launches its default gang count in place of a num_gangs above 65,535 while the
 * gang loop strides by the count asked for (wrong results on the H200): such plans are refused
 * for GCC's OpenACC, not for nvc nor for an omp target nest. */
static void test_gcc_gang_limit(void) {
  tnest t;
  tn_transpose(&t, 4096);
  t.n.construct = SP_CONSTRUCT_ACC_PARALLEL;
  sp_adv_plan p;
  memset(&p, 0, sizeof p);
  char why[256];
  p.num_gangs = 65535;
  CHECK(sp_adv_gangs_launch(&t.n, &p, SP_ADV_GCC, why, sizeof why) && why[0] == 0);
  p.num_gangs = 65536;
  CHECK(!sp_adv_gangs_launch(&t.n, &p, SP_ADV_GCC, why, sizeof why));
  CHECK(strstr(why, "num_gangs(65536)") != NULL);
  CHECK(sp_adv_gangs_launch(&t.n, &p, SP_ADV_NVC, why, sizeof why));
  t.n.construct = SP_CONSTRUCT_OMP_TARGET;
  CHECK(sp_adv_gangs_launch(&t.n, &p, SP_ADV_GCC, why, sizeof why));
}

int main(void) {
  SP_RUN(test_gcc_limits);
  SP_RUN(test_interchange);
  SP_RUN(test_gcc_reduction_code);
  SP_RUN(test_inner_levels_and_collapse);
  SP_RUN(test_plan_matches);
  SP_RUN(test_gcc_gang_limit);
  SP_RUN(test_gcc_kernels_independent);
  return SP_TEST_END();
}
