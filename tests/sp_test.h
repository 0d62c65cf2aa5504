/* Minimal test harness: each tests/test_*.c is one executable whose main() calls SP_RUN(fn) for
 * each test function; a failed CHECK prints file:line and the values, and the exit code counts
 * the failures so ctest reports them. */
#ifndef SP_TEST_H
#define SP_TEST_H
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sp_test_failures;
static int sp_test_checks;

/* splitmix64: the tests' reproducible random numbers */
static inline uint64_t sp_test_rand(uint64_t *state)
{
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

#define CHECK(cond)                                                                       \
  do {                                                                                    \
    sp_test_checks++;                                                                     \
    if (!(cond)) {                                                                        \
      sp_test_failures++;                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);            \
    }                                                                                     \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                                \
  do {                                                                                    \
    long long sp_a_ = (long long)(a), sp_b_ = (long long)(b);                             \
    sp_test_checks++;                                                                     \
    if (sp_a_ != sp_b_) {                                                                 \
      sp_test_failures++;                                                                 \
      fprintf(stderr, "%s:%d: CHECK_EQ_INT failed: %s = %lld, %s = %lld\n", __FILE__,     \
              __LINE__, #a, sp_a_, #b, sp_b_);                                            \
    }                                                                                     \
  } while (0)

#define CHECK_EQ_STR(a, b)                                                                \
  do {                                                                                    \
    const char *sp_a_ = (a), *sp_b_ = (b);                                                \
    sp_test_checks++;                                                                     \
    if (!sp_a_ || !sp_b_ || strcmp(sp_a_, sp_b_) != 0) {                                  \
      sp_test_failures++;                                                                 \
      fprintf(stderr, "%s:%d: CHECK_EQ_STR failed: %s = \"%s\", %s = \"%s\"\n", __FILE__, \
              __LINE__, #a, sp_a_ ? sp_a_ : "(null)", #b, sp_b_ ? sp_b_ : "(null)");      \
    }                                                                                     \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                             \
  do {                                                                                    \
    double sp_a_ = (double)(a), sp_b_ = (double)(b);                                      \
    sp_test_checks++;                                                                     \
    if (!(sp_a_ - sp_b_ <= (tol) && sp_b_ - sp_a_ <= (tol))) {                            \
      sp_test_failures++;                                                                 \
      fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.17g, %s = %.17g\n", __FILE__,     \
              __LINE__, #a, sp_a_, #b, sp_b_);                                            \
    }                                                                                     \
  } while (0)

/* SP_TEST_ONLY=NAME runs only the tests whose name contains NAME */
#define SP_RUN(fn)                                                                        \
  do {                                                                                    \
    const char *sp_only_ = getenv("SP_TEST_ONLY");                                        \
    if (sp_only_ && !strstr(#fn, sp_only_)) break;                                        \
    int sp_before_ = sp_test_failures;                                                    \
    fn();                                                                                 \
    fprintf(stderr, "%s %s\n", sp_test_failures == sp_before_ ? "ok  " : "FAIL", #fn);    \
  } while (0)

#define SP_TEST_END()                                                                     \
  (fprintf(stderr, "%d checks, %d failed\n", sp_test_checks, sp_test_failures),           \
   sp_test_checks == 0 ? 1 : (sp_test_failures ? 1 : 0))

#endif
