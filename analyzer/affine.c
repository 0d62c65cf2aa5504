#include <stdio.h>
#include <string.h>

#include "schedpredict/ir.h"

void sp_affine_zero(sp_affine *a) { memset(a, 0, sizeof *a); }

sp_affine sp_affine_const(int64_t c) {
  sp_affine a;
  sp_affine_zero(&a);
  a.constant = c;
  return a;
}

bool sp_affine_is_const(const sp_affine *a) {
  for (int k = 0; k < SP_MAX_LOOPS; k++)
    if (a->coef[k]) return false;
  return true;
}

bool sp_loop_bounds_const(const sp_loop *l) {
  return sp_affine_is_const(&l->lower) && sp_affine_is_const(&l->upper);
}

int sp_nest_band_length(const sp_nest *n) {
  int k = 0;
  while (k < n->nloops && n->loops[k].band) k++;
  return k;
}

bool sp_nest_rectangular(const sp_nest *n) {
  for (int l = 0; l < n->nloops; l++)
    if (!sp_loop_bounds_const(&n->loops[l]) || n->loops[l].trip_min != n->loops[l].trip_max)
      return false;
  return true;
}

bool sp_affine_add(sp_affine *out, const sp_affine *a, const sp_affine *b) {
  sp_affine r;
  if (__builtin_add_overflow(a->constant, b->constant, &r.constant)) return false;
  for (int k = 0; k < SP_MAX_LOOPS; k++)
    if (__builtin_add_overflow(a->coef[k], b->coef[k], &r.coef[k])) return false;
  *out = r;
  return true;
}

bool sp_affine_sub(sp_affine *out, const sp_affine *a, const sp_affine *b) {
  sp_affine r;
  if (__builtin_sub_overflow(a->constant, b->constant, &r.constant)) return false;
  for (int k = 0; k < SP_MAX_LOOPS; k++)
    if (__builtin_sub_overflow(a->coef[k], b->coef[k], &r.coef[k])) return false;
  *out = r;
  return true;
}

bool sp_affine_scale(sp_affine *out, const sp_affine *a, int64_t f) {
  sp_affine r;
  if (__builtin_mul_overflow(a->constant, f, &r.constant)) return false;
  for (int k = 0; k < SP_MAX_LOOPS; k++)
    if (__builtin_mul_overflow(a->coef[k], f, &r.coef[k])) return false;
  *out = r;
  return true;
}

bool sp_affine_eval(const sp_affine *a, const int64_t *vals, int64_t *out) {
  int64_t v = a->constant, t;
  for (int k = 0; k < SP_MAX_LOOPS; k++) {
    if (!a->coef[k]) continue;
    if (__builtin_mul_overflow(a->coef[k], vals[k], &t) || __builtin_add_overflow(v, t, &v))
      return false;
  }
  *out = v;
  return true;
}

int sp_affine_format(char *buf, size_t n, const sp_affine *a, const sp_nest *nest) {
  size_t used = 0;
  int w;
  bool first = true;
#define SP_APPEND(...)                                                     \
  do {                                                                     \
    w = snprintf(buf ? buf + (used < n ? used : n) : NULL,                 \
                 buf && used < n ? n - used : 0, __VA_ARGS__);             \
    if (w < 0) return w;                                                   \
    used += (size_t)w;                                                     \
  } while (0)
  for (int k = 0; k < SP_MAX_LOOPS; k++) {
    int64_t c = a->coef[k];
    if (!c) continue;
    const char *name = nest && k < nest->nloops ? nest->loops[k].index : NULL;
    char fallback[16];
    if (!name) {
      snprintf(fallback, sizeof fallback, "L%d", k);
      name = fallback;
    }
    const char *sign = c < 0 ? (first ? "-" : " - ") : (first ? "" : " + ");
    uint64_t mag = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
    if (mag == 1)
      SP_APPEND("%s%s", sign, name);
    else
      SP_APPEND("%s%llu*%s", sign, (unsigned long long)mag, name);
    first = false;
  }
  if (first)
    SP_APPEND("%lld", (long long)a->constant);
  else if (a->constant) {
    uint64_t mag = a->constant < 0 ? (uint64_t)0 - (uint64_t)a->constant : (uint64_t)a->constant;
    SP_APPEND("%s%llu", a->constant < 0 ? " - " : " + ", (unsigned long long)mag);
  }
#undef SP_APPEND
  return (int)used;
}
