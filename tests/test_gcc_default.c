/* GCC's own default schedule (sp_space_options.gcc_default, --compiler gcc): the loop levels GCC
 * assigns and the launch dims libgomp picks, hand-computed for an H100 (132 SMs, 2048 threads
 * and 32 blocks per SM, 1024 threads per block):
 *   gangs left to the run time = 2 x (132 x blocks per SM) x block / 32, the block being
 *   num_workers x vector_length when both are known, else 1024;
 *   workers left to the run time = 1024 / vector_length (at most 15 when vector_length > 32).
 * The first two cases are what GOMP_DEBUG printed on the H100
 * (validation/results/h100/gcc-openacc/2026-11-22-probe.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/arch.h"
#include "schedpredict/traces.h"
#include "tests/sp_nestbuild.h"
#include "tests/sp_test.h"

static sp_arch H100;

/* The transpose nest with the directives given (NULL: the loop has none). */
static void directives(tnest *t, const char *d0, unsigned f0, const char *d1, unsigned f1) {
  tn_transpose(t, 4096);
  t->n.construct = SP_CONSTRUCT_ACC_PARALLEL;
  t->n.loops[0].clauses.directive = (char *)d0;
  t->n.loops[0].clauses.flags = f0;
  t->n.loops[1].clauses.directive = (char *)d1;
  t->n.loops[1].clauses.flags = f1;
}

static const sp_schedule *gcc_default_regs(const sp_nest *n, sp_space *sp, int registers) {
  sp_space_options o = {.allow_interchange = true, .gcc_default = true, .registers = registers};
  char err[256] = "";
  if (sp_space_build(n, &H100, &o, sp, err, sizeof err) != 0) {
    fprintf(stderr, "space: %s\n", err);
    return NULL;
  }
  CHECK(sp->default_index == sp->default_gcc);
  CHECK(sp->default_nvc >= 0);
  int marked = 0;
  for (int i = 0; i < sp->n; i++) marked += sp->items[i].compiler_default;
  CHECK_EQ_INT(marked, 1);
  return sp->default_gcc >= 0 ? &sp->items[sp->default_gcc] : NULL;
}

static const sp_schedule *gcc_default(const sp_nest *n, sp_space *sp) { return gcc_default_regs(n, sp, 0); }

static void check_launch(const sp_schedule *s, int bx, int by, int64_t gx) {
  CHECK_EQ_INT(s->block[0], bx);
  CHECK_EQ_INT(s->block[1], by);
  CHECK_EQ_INT(s->block[2], 1);
  CHECK_EQ_INT(s->grid[0], gx);
  CHECK_EQ_INT(s->grid[1], 1);
}

/* `parallel loop` + `loop`, no clauses: gang worker on i, vector on j; 16896 x 32 x 32 */
static void test_bare_nest(void) {
  tnest t;
  directives(&t, "#pragma acc parallel loop", 0, "#pragma acc loop", 0);
  sp_space sp;
  const sp_schedule *s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) {
    check_launch(s, 32, 32, 16896);
    CHECK_EQ_INT(s->map[0].block_dim, 0);
    CHECK_EQ_INT(s->map[0].thread_dim, 1);
    CHECK_EQ_INT(s->map[1].block_dim, -1);
    CHECK_EQ_INT(s->map[1].thread_dim, 0);
    CHECK(strncmp(s->openacc, "i: gang worker  j: vector  num_gangs(16896) num_workers(32) "
                              "vector_length(32)", 80) == 0);
  }
  /* the nvc-style baseline is still there and unchanged: covering grid, vector(128) */
  const sp_schedule *d = &sp.items[sp.default_nvc];
  CHECK_EQ_INT(d->block[0], 128);
  CHECK_EQ_INT(d->grid[0], 4096);
  CHECK(!d->compiler_default);
  sp_space_free(&sp);
}

/* the probe's second build: gang on i with num_workers(8) vector_length(32), worker vector on j:
 * block 8 x 32 = 256 threads, 8 per SM, 2 x 132 x 8 x 8 = 16896 gangs */
static void test_probe_explicit(void) {
  tnest t;
  directives(&t, "#pragma acc parallel loop gang num_workers(8) vector_length(32)", SP_CL_GANG,
             "#pragma acc loop worker vector", SP_CL_WORKER | SP_CL_VECTOR);
  t.n.construct_clauses.num_workers = 8;
  t.n.construct_clauses.vector_length = 32;
  sp_space sp;
  const sp_schedule *s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) {
    check_launch(s, 256, 1, 16896); /* worker and vector on one loop: one index of 256 lanes */
    CHECK_EQ_INT(s->map[0].block_dim, 0);
    CHECK_EQ_INT(s->map[0].thread_dim, -1);
    CHECK_EQ_INT(s->map[1].thread_dim, 0);
  }
  sp_space_free(&sp);
}

/* one loop: gang vector, 32 lanes, no worker: block 32, 32 blocks per SM, 2 x 132 x 32 = 8448 */
static void test_one_loop(void) {
  tnest t;
  tn_init(&t);
  tn_loop(&t, -1, true, true, 0, 0, (1 << 20) - 1, 0, 1);
  int a = tn_array(&t, 8, (1 << 20) * 8);
  int chain[1] = {0};
  int64_t c[SP_MAX_LOOPS] = {8};
  tn_ref(&t, a, true, 8, chain, 1, 0, c);
  t.n.construct = SP_CONSTRUCT_ACC_PARALLEL;
  t.n.loops[0].clauses.directive = (char *)"#pragma acc parallel loop";
  sp_space sp;
  const sp_schedule *s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) {
    check_launch(s, 32, 1, 8448);
    CHECK_EQ_INT(s->map[0].thread_dim, 0);
    CHECK_EQ_INT(s->map[0].block_dim, 0);
  }
  sp_space_free(&sp);
}

/* vector_length(128), workers left open: 1024 / 128 = 8 workers, gangs as for a 1024 block */
static void test_vector_length(void) {
  tnest t;
  directives(&t, "#pragma acc parallel loop vector_length(128)", 0, "#pragma acc loop", 0);
  t.n.construct_clauses.vector_length = 128;
  sp_space sp;
  const sp_schedule *s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) check_launch(s, 128, 8, 16896);
  sp_space_free(&sp);
  /* a length GCC cannot use (not a multiple of 32) becomes 32 */
  directives(&t, "#pragma acc parallel loop vector_length(48)", 0, "#pragma acc loop", 0);
  t.n.construct_clauses.vector_length = 48;
  s = gcc_default(&t.n, &sp);
  if (s) check_launch(s, 32, 32, 16896);
  sp_space_free(&sp);
}

/* everything given: num_gangs(1024) num_workers(4) vector_length(32) on gang / worker / vector */
static void test_all_given(void) {
  tnest t;
  directives(&t, "#pragma acc parallel loop gang worker num_gangs(1024) num_workers(4)",
             SP_CL_GANG | SP_CL_WORKER, "#pragma acc loop vector", SP_CL_VECTOR);
  t.n.construct_clauses.num_gangs = 1024;
  t.n.construct_clauses.num_workers = 4;
  sp_space sp;
  const sp_schedule *s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) {
    check_launch(s, 32, 4, 1024);
    CHECK_EQ_INT(s->map[0].thread_dim, 1);
    CHECK_EQ_INT(s->map[0].block_dim, 0);
  }
  sp_space_free(&sp);
}

/* `loop seq` inside, and a loop with no directive: GCC leaves them sequential; the outer
 * `parallel loop` alone is then the innermost partitioned loop and takes gang vector */
static void test_seq_inner(void) {
  tnest t;
  directives(&t, "#pragma acc parallel loop", 0, "#pragma acc loop seq", SP_CL_SEQ);
  sp_space sp;
  const sp_schedule *s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) {
    check_launch(s, 32, 1, 8448);
    CHECK_EQ_INT(s->map[1].thread_dim, -1);
    CHECK_EQ_INT(s->map[1].block_dim, -1);
  }
  sp_space_free(&sp);
  directives(&t, "#pragma acc parallel loop", 0, NULL, 0);
  s = gcc_default(&t.n, &sp);
  if (s) check_launch(s, 32, 1, 8448);
  sp_space_free(&sp);
  /* an explicit `auto` in a parallel region: GCC keeps the loop sequential (no independent) */
  directives(&t, "#pragma acc parallel loop gang", SP_CL_GANG, "#pragma acc loop auto", SP_CL_AUTO);
  s = gcc_default(&t.n, &sp);
  if (s) { /* gang only: one thread per gang (the gang count of such a launch is unverified) */
    CHECK_EQ_INT(s->block[0] * s->block[1], 1);
    CHECK(s->grid[0] > 1);
    CHECK_EQ_INT(s->map[0].block_dim, 0);
    CHECK_EQ_INT(s->map[1].thread_dim, -1);
  }
  sp_space_free(&sp);
}

/* without gcc_default the baseline stays the nvc-style one (the space's other tests) */
static void test_nvc_default_kept(void) {
  tnest t;
  directives(&t, "#pragma acc parallel loop", 0, "#pragma acc loop", 0);
  sp_space sp;
  char err[256];
  CHECK(sp_space_build(&t.n, &H100, NULL, &sp, err, sizeof err) == 0);
  CHECK(sp.default_index == sp.default_nvc);
  CHECK(sp.default_gcc >= 0 && sp.default_gcc != sp.default_nvc);
  CHECK(sp.items[sp.default_index].compiler_default);
  CHECK(!sp.items[sp.default_gcc].compiler_default);
  sp_space_free(&sp);
}

/* libgomp sizes the block by the occupancy API, with the kernel's registers (--registers). On the
 * H100, 48 a thread: 1,536 a warp, 42 warps, 40 in fours; from 1,024 threads down, a block of 640
 * (20 warps) is the first whose blocks (2) hold the most threads (1,280): 2 x 2 x 132 x 20 =
 * 10,560 gangs of 20 workers, what GCC launched for xreuse and six other functions
 * (validation/results/h100/gcc-openacc/2026-11-22/table.md). 40: 1,280 a warp, 48 warps: 768
 * (24 warps, 2 an SM), 12,672 gangs. num_workers(3) x 32: the API tries 96 (21 blocks, 2,016
 * threads), then 64 (32 blocks, 2,048): gangs 2 x 32 x 132 x 2 = 16,896 for a launch of 96. */
static void test_occupancy_registers(void) {
  tnest t;
  directives(&t, "#pragma acc parallel loop", 0, "#pragma acc loop", 0);
  sp_space sp;
  const sp_schedule *s = gcc_default_regs(&t.n, &sp, 48);
  CHECK(s != NULL);
  if (s) check_launch(s, 32, 20, 10560);
  sp_space_free(&sp);
  s = gcc_default_regs(&t.n, &sp, 40);
  CHECK(s != NULL);
  if (s) check_launch(s, 32, 24, 12672);
  sp_space_free(&sp);
  directives(&t, "#pragma acc parallel loop gang num_workers(3) vector_length(32)", SP_CL_GANG,
             "#pragma acc loop worker vector", SP_CL_WORKER | SP_CL_VECTOR);
  t.n.construct_clauses.num_workers = 3;
  t.n.construct_clauses.vector_length = 32;
  s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) check_launch(s, 96, 1, 16896);
  sp_space_free(&sp);
}

/* A kernels region as GCC 12 builds it without --param=openacc-kernels=decompose (checked with
 * -fopt-info-omp and on the H200: validation/results/h200/gcc-openacc/2026-12-02-kernels-decompose/):
 * a region of the nest alone whose outer loop its parloops proves independent puts that loop
 * alone on gangs, one lane each (GOMP_DEBUG: 8448 x 1 x 32, the 2 x 132 x 32 gangs of one-thread
 * blocks); any other region runs on one thread (1 x 1 x 32). A loop's gang, worker or vector
 * without `independent` is `auto` there and changes nothing; with `independent` the clauses hold
 * (the decompose flag's partitioning, which the finding asks for). */
static void kernels_nest(tnest *t, bool sole, bool outer_parallel) {
  tn_transpose(t, 4096);
  t->n.construct = SP_CONSTRUCT_ACC_KERNELS;
  t->n.construct_clauses.directive = (char *)"#pragma acc kernels";
  t->n.construct_sole_loop = sole;
  t->n.loops[0].parallel = outer_parallel;
}

static void check_one_thread(const sp_schedule *s) {
  check_launch(s, 1, 1, 1);
  for (int k = 0; k < 2; k++) {
    CHECK_EQ_INT(s->map[k].thread_dim, -1);
    CHECK_EQ_INT(s->map[k].block_dim, -1);
  }
}

static void test_kernels_region(void) {
  tnest t;
  sp_space sp;
  kernels_nest(&t, true, true);
  const sp_schedule *s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) {
    check_launch(s, 1, 1, 8448);
    CHECK_EQ_INT(s->map[0].block_dim, 0);
    CHECK_EQ_INT(s->map[0].thread_dim, -1);
    CHECK_EQ_INT(s->map[1].thread_dim, -1);
    CHECK_EQ_INT(s->map[1].block_dim, -1);
  }
  sp_space_free(&sp);
  /* gang and vector clauses without independent: the same */
  kernels_nest(&t, true, true);
  t.n.loops[0].clauses.directive = (char *)"#pragma acc loop gang";
  t.n.loops[0].clauses.flags = SP_CL_GANG;
  t.n.loops[1].clauses.directive = (char *)"#pragma acc loop vector";
  t.n.loops[1].clauses.flags = SP_CL_VECTOR;
  s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) {
    check_launch(s, 1, 1, 8448);
    CHECK_EQ_INT(s->map[1].thread_dim, -1);
  }
  sp_space_free(&sp);
  /* with independent: as the clauses say */
  t.n.loops[0].clauses.flags = SP_CL_GANG | SP_CL_INDEPENDENT;
  t.n.loops[1].clauses.flags = SP_CL_VECTOR | SP_CL_INDEPENDENT;
  s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) {
    check_launch(s, 32, 1, 8448);
    CHECK_EQ_INT(s->map[0].block_dim, 0);
    CHECK_EQ_INT(s->map[1].thread_dim, 0);
  }
  sp_space_free(&sp);
  /* a region holding more than the nest, or an outer loop not proven independent: one thread */
  kernels_nest(&t, false, true);
  s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) check_one_thread(s);
  sp_space_free(&sp);
  kernels_nest(&t, true, false);
  s = gcc_default(&t.n, &sp);
  CHECK(s != NULL);
  if (s) check_one_thread(s);
  sp_space_free(&sp);
}

int main(void) {
  char err[256];
  if (sp_arch_load("h100", &H100, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  SP_RUN(test_bare_nest);
  SP_RUN(test_probe_explicit);
  SP_RUN(test_one_loop);
  SP_RUN(test_vector_length);
  SP_RUN(test_all_given);
  SP_RUN(test_seq_inner);
  SP_RUN(test_nvc_default_kept);
  SP_RUN(test_occupancy_registers);
  SP_RUN(test_kernels_region);
  return SP_TEST_END();
}
