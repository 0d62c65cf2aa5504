/* Affine arithmetic and the directive parser. */
#include <stdint.h>
#include <stdlib.h>

#include "analyzer/internal.h"
#include "tests/sp_test.h"

static void test_affine_arithmetic(void) {
  sp_affine a = sp_affine_const(5), b = sp_affine_const(-2), r;
  a.coef[0] = 3;
  b.coef[1] = 7;
  CHECK(sp_affine_add(&r, &a, &b));
  CHECK_EQ_INT(r.constant, 3);
  CHECK_EQ_INT(r.coef[0], 3);
  CHECK_EQ_INT(r.coef[1], 7);
  CHECK(sp_affine_sub(&r, &a, &b));
  CHECK_EQ_INT(r.constant, 7);
  CHECK_EQ_INT(r.coef[1], -7);
  CHECK(sp_affine_scale(&r, &a, 8));
  CHECK_EQ_INT(r.constant, 40);
  CHECK_EQ_INT(r.coef[0], 24);
  int64_t vals[SP_MAX_LOOPS] = {10, 100};
  int64_t v;
  CHECK(sp_affine_eval(&a, vals, &v));
  CHECK_EQ_INT(v, 35);
  CHECK(!sp_affine_is_const(&a));
  CHECK(sp_affine_is_const(&(sp_affine){.constant = 4}));
}

static void test_affine_overflow(void) {
  sp_affine a = sp_affine_const(INT64_MAX), one = sp_affine_const(1), r;
  CHECK(!sp_affine_add(&r, &a, &one));
  sp_affine big = sp_affine_const(0);
  big.coef[2] = INT64_MAX / 2 + 1;
  CHECK(!sp_affine_scale(&r, &big, 2));
  int64_t vals[SP_MAX_LOOPS] = {0, 0, 3}, v;
  CHECK(!sp_affine_eval(&big, vals, &v));
}

static void test_affine_format(void) {
  sp_nest n;
  memset(&n, 0, sizeof n);
  n.nloops = 2;
  n.loops[0].index = "i";
  n.loops[1].index = "j";
  sp_affine a = sp_affine_const(-8);
  a.coef[0] = 32768;
  a.coef[1] = 1;
  char buf[64];
  sp_affine_format(buf, sizeof buf, &a, &n);
  CHECK_EQ_STR(buf, "32768*i + j - 8");
  a.coef[0] = -1;
  a.constant = 0;
  sp_affine_format(buf, sizeof buf, &a, &n);
  CHECK_EQ_STR(buf, "-i + j");
  sp_affine z = sp_affine_const(0);
  sp_affine_format(buf, sizeof buf, &z, &n);
  CHECK_EQ_STR(buf, "0");
  /* truncation returns the full length, like snprintf */
  a.constant = 123456;
  int need = sp_affine_format(buf, 4, &a, &n);
  CHECK_EQ_INT(need, (int)strlen("-i + j + 123456"));
  CHECK_EQ_INT(strlen(buf), 3);
}

static void test_directive_parse(void) {
  sp_directive d;
  CHECK(sp_directive_parse(" acc parallel loop gang vector_length(128) num_gangs(264) "
                           "copyin(a[0:n]) reduction(+:s) private(t, u)",
                           &d));
  CHECK_EQ_INT(d.kind, SP_DIR_ACC_PARALLEL_LOOP);
  CHECK_EQ_INT(d.clauses.flags, SP_CL_GANG);
  CHECK_EQ_INT(d.clauses.vector_length, 128);
  CHECK_EQ_INT(d.clauses.num_gangs, 264);
  CHECK_EQ_STR(d.clauses.reduction, "+:s");
  CHECK_EQ_STR(d.clauses.private_vars, "t, u");
  CHECK(d.unknown == NULL);
  sp_clauses_free(&d.clauses);

  CHECK(sp_directive_parse("acc loop collapse(3) tile(32,*) vector(64) worker(num:4) seq", &d));
  CHECK_EQ_INT(d.kind, SP_DIR_ACC_LOOP);
  CHECK_EQ_INT(d.clauses.collapse, 3);
  CHECK_EQ_INT(d.clauses.ntile, 2);
  CHECK_EQ_INT(d.clauses.tile[0], 32);
  CHECK_EQ_INT(d.clauses.tile[1], 0);
  CHECK_EQ_INT(d.clauses.vector_arg, 64);
  CHECK_EQ_INT(d.clauses.worker_arg, 4);
  CHECK_EQ_INT(d.clauses.flags, SP_CL_VECTOR | SP_CL_WORKER | SP_CL_SEQ);
  sp_clauses_free(&d.clauses);

  /* repeated clauses accumulate */
  CHECK(sp_directive_parse("acc parallel loop reduction(+:s) private(t) reduction(max:m) "
                           "private(u)", &d));
  CHECK_EQ_STR(d.clauses.reduction, "+:s; max:m");
  CHECK_EQ_STR(d.clauses.private_vars, "t, u");
  sp_clauses_free(&d.clauses);

  CHECK(sp_directive_parse("acc kernels", &d));
  CHECK_EQ_INT(d.kind, SP_DIR_ACC_KERNELS);
  CHECK(sp_directive_parse("acc data copy(a)", &d));
  CHECK_EQ_INT(d.kind, SP_DIR_OTHER);

  CHECK(sp_directive_parse("omp target teams distribute parallel for collapse(2) "
                           "num_teams(132) thread_limit(256) map(to: a[0:n])",
                           &d));
  CHECK_EQ_INT(d.kind, SP_DIR_OMP_TARGET_LOOP);
  CHECK_EQ_INT(d.clauses.collapse, 2);
  CHECK_EQ_INT(d.clauses.num_gangs, 132);
  CHECK_EQ_INT(d.clauses.vector_length, 256);
  CHECK(d.clauses.flags & SP_CL_INDEPENDENT);
  sp_clauses_free(&d.clauses);

  CHECK(sp_directive_parse("omp parallel for", &d));
  CHECK_EQ_INT(d.kind, SP_DIR_OMP_LOOP); /* scheduled only inside a target region */
  sp_clauses_free(&d.clauses);

  CHECK(sp_directive_parse("acc parallel loop vector_length(VL) bogus_clause(3)", &d));
  CHECK_EQ_INT(d.clauses.vector_length, -1); /* a name: resolved later by the analyzer */
  CHECK_EQ_STR(d.unknown, "bogus_clause");
  free(d.unknown);
  sp_clauses_free(&d.clauses);

  CHECK(!sp_directive_parse("once", &d));
  CHECK(!sp_directive_parse("GCC diagnostic ignored \"-Wall\"", &d));
  CHECK(!sp_directive_parse("", &d));
  /* unbalanced parentheses must not read past the end */
  CHECK(sp_directive_parse("acc loop gang(", &d));
  sp_clauses_free(&d.clauses);
  CHECK(sp_directive_parse("acc loop tile(", &d));
  sp_clauses_free(&d.clauses);
}

int main(void) {
  SP_RUN(test_affine_arithmetic);
  SP_RUN(test_affine_overflow);
  SP_RUN(test_affine_format);
  SP_RUN(test_directive_parse);
  return SP_TEST_END();
}
