/* schedvalidate: output comparison. */
#include "sv_compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double elem_value(const sv_ctype *t, const unsigned char *p) {
  if (t->kind == SV_NUM_FLOAT) {
    if (t->size == 8) {
      double d;
      memcpy(&d, p, 8);
      return d;
    }
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  uint64_t u = 0;
  for (int k = 0; k < t->size; k++) u |= (uint64_t)p[k] << (8 * k);
  if (t->kind == SV_NUM_UNSIGNED) return (double)u;
  int sh = 64 - 8 * t->size; /* sign-extend */
  return (double)((int64_t)(u << sh) >> sh);
}

static double rel_diff(double a, double b) {
  if (a == b) return 0; /* also equal infinities, and 0 vs -0 */
  if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) return INFINITY;
  double m = fmax(fabs(a), fabs(b));
  return fabs(a - b) / m;
}

sv_diff sv_compare(const sv_ctype *t, const void *got, const void *ref, size_t n) {
  sv_diff d = {1, 0.0, -1};
  size_t es = t ? (size_t)t->size : 1;
  if (!memcmp(got, ref, n * es)) return d;
  d.equal = 0;
  const unsigned char *g = got, *r = ref;
  for (size_t i = 0; i < n; i++) {
    if (!memcmp(g + i * es, r + i * es, es)) continue;
    if (d.first < 0) d.first = (int64_t)i;
    double x = t ? rel_diff(elem_value(t, g + i * es), elem_value(t, r + i * es)) : 1.0;
    if (x > d.max_rel_diff) d.max_rel_diff = x;
  }
  return d;
}

void sv_format_elem(const sv_ctype *t, const void *p, char *buf, size_t len) {
  if (!t) snprintf(buf, len, "0x%02x", *(const unsigned char *)p);
  else if (t->kind == SV_NUM_FLOAT) snprintf(buf, len, "%.17g", elem_value(t, p));
  else snprintf(buf, len, "%.0f", elem_value(t, p));
}

/* A float reduction is combined from one partial per thread by float atomics in an order that
 * depends on the schedule: on the H100, himeno's sum of 16 M float terms differed between
 * schedules by 4e-5 to 4e-4 relative (the partials themselves accumulate in double). A mapping
 * bug that drops or repeats a share of the iterations moves it by far more, and the arrays,
 * compared bitwise, catch single iterations. */
double sv_reduction_tolerance(sv_ctype t) {
  if (t.kind != SV_NUM_FLOAT) return 0;
  return t.size == 8 ? 1e-12 : 1e-3;
}
