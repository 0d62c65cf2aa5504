/* Output comparison: bitwise equality, the first differing element, relative differences by
   hand, NaN and infinities, integers and opaque bytes, reduction tolerances. */
#include <math.h>

#include "sv_check.h"
#include "sv_compare.h"

static void test_doubles(void) {
  sv_ctype d = {SV_NUM_FLOAT, 8};
  double a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4};
  sv_diff r = sv_compare(&d, a, b, 4);
  CHECK(r.equal && r.first == -1 && r.max_rel_diff == 0);
  b[2] = 3.3; /* |3 - 3.3| / 3.3 */
  b[3] = 5;   /* |4 - 5| / 5 = 0.2 */
  r = sv_compare(&d, a, b, 4);
  CHECK(!r.equal);
  CHECK_EQ_INT(r.first, 2);
  CHECK_NEAR(r.max_rel_diff, 0.2, 1e-15);
  b[3] = 4;
  r = sv_compare(&d, a, b, 4);
  CHECK_NEAR(r.max_rel_diff, 0.3 / 3.3, 1e-15);
  b[1] = NAN;
  r = sv_compare(&d, a, b, 4);
  CHECK(isinf(r.max_rel_diff) && r.first == 1);
  double z[1] = {0.0}, nz[1] = {-0.0};
  r = sv_compare(&d, z, nz, 1); /* bitwise different, numerically equal: still not bitwise */
  CHECK(!r.equal && r.max_rel_diff == 0 && r.first == 0);
}

static void test_ints_and_bytes(void) {
  sv_ctype i = {SV_NUM_SIGNED, 4};
  int a[3] = {5, -3, 7}, b[3] = {5, 3, 7};
  sv_diff r = sv_compare(&i, a, b, 3);
  CHECK_EQ_INT(r.first, 1);
  CHECK_NEAR(r.max_rel_diff, 2.0, 0); /* |-3 - 3| / 3 */
  sv_ctype u = {SV_NUM_UNSIGNED, 2};
  unsigned short x[2] = {65535, 1}, y[2] = {65534, 1};
  r = sv_compare(&u, x, y, 2);
  CHECK_NEAR(r.max_rel_diff, 1.0 / 65535, 1e-15);
  unsigned char p[5] = {1, 2, 3, 4, 5}, q[5] = {1, 2, 3, 9, 5};
  r = sv_compare(NULL, p, q, 5);
  CHECK(!r.equal && r.first == 3 && r.max_rel_diff == 1.0);
  char buf[32];
  sv_format_elem(&i, &a[1], buf, sizeof buf);
  CHECK_EQ_STR(buf, "-3");
  sv_format_elem(NULL, &q[3], buf, sizeof buf);
  CHECK_EQ_STR(buf, "0x09");
}

static void test_tolerances(void) {
  CHECK_NEAR(sv_reduction_tolerance((sv_ctype){SV_NUM_FLOAT, 8}), 1e-12, 0);
  CHECK_NEAR(sv_reduction_tolerance((sv_ctype){SV_NUM_FLOAT, 4}), 1e-3, 0);
  CHECK_NEAR(sv_reduction_tolerance((sv_ctype){SV_NUM_SIGNED, 8}), 0, 0);
}

int main(void) {
  SP_RUN(test_doubles);
  SP_RUN(test_ints_and_bytes);
  SP_RUN(test_tolerances);
  return SP_TEST_END();
}
